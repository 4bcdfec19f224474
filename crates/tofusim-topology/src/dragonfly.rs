//! Dragonfly networks: the generic Kim–Dally form and the Cray Aries form.
//!
//! Routers are numbered group-major: `router = group · routers_per_group + r`.
//! Nodes are numbered router-major: `node = router · nodes_per_router + i`.
//!
//! **Global links.** Group `i`'s global ports are numbered `k = 0 …`; port
//! `k` has offset `o = k mod (g−1)` and bundle `b = k div (g−1)` and reaches
//! group `(i + 1 + o) mod g`, arriving on that group's port
//! `b·(g−1) + (g−2−o)`. Every group pair gets the same number of links
//! (`links_per_group_pair`), and the cabling is invariant under rotating the
//! groups, which the hop metrics use (BFS from one group stands for all).
//! Which router holds port `k` is the *arrangement*: `consecutive` puts a
//! router's ports on consecutive offsets (`k div h`), `round-robin` deals
//! them out (`k mod a`).

use crate::graph::{GraphBuilder, RouterGraph};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrangement {
    Consecutive,
    RoundRobin,
}

impl Arrangement {
    pub const NAMES: [&'static str; 2] = ["consecutive", "round-robin"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "consecutive" => Some(Self::Consecutive),
            "round-robin" => Some(Self::RoundRobin),
            _ => None,
        }
    }
}

/// How routers inside a group are wired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "form", rename_all = "kebab-case")]
pub enum GroupWiring {
    /// Kim–Dally: `a` routers, all-to-all with one local link per pair.
    AllToAll { routers: u32 },
    /// Cray Aries: `chassis × routers_per_chassis`; rank-1 all-to-all inside a
    /// chassis (one link per pair), rank-2 all-to-all between same-slot routers
    /// of different chassis with `rank2_links` links per connection.
    Aries {
        chassis: u32,
        routers_per_chassis: u32,
        rank2_links: u32,
    },
}

impl GroupWiring {
    pub fn routers(&self) -> u32 {
        match *self {
            Self::AllToAll { routers } => routers,
            Self::Aries {
                chassis,
                routers_per_chassis,
                ..
            } => chassis * routers_per_chassis,
        }
    }
}

/// Link classes of a dragonfly, in the order used for per-class counts.
pub const CLASS_NAMES_GENERIC: [&str; 2] = ["local", "global"];
pub const CLASS_NAMES_ARIES: [&str; 3] = ["rank-1", "rank-2", "rank-3"];

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dragonfly {
    pub groups: u32,
    pub nodes_per_router: u32,
    pub wiring: GroupWiring,
    /// Global ports per router (`h`).
    pub global_ports_per_router: u32,
    /// Global links between each pair of groups (≥ 1 when `groups` ≥ 2).
    pub links_per_group_pair: u32,
    pub arrangement: Arrangement,
}

/// Why a dragonfly cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DragonflyError {
    TooManyGroups { groups: u32, max_groups: u32 },
    TooManyLinksPerPair { links_per_pair: u32, max: u32 },
}

impl Dragonfly {
    /// Checks that the global links fit in the global ports.
    pub fn validate(&self) -> Result<(), DragonflyError> {
        let ports = self.global_ports_per_group();
        if self.groups > ports + 1 {
            return Err(DragonflyError::TooManyGroups {
                groups: self.groups,
                max_groups: ports + 1,
            });
        }
        if self.groups >= 2 {
            let max = ports / (self.groups - 1);
            if self.links_per_group_pair > max || self.links_per_group_pair == 0 {
                return Err(DragonflyError::TooManyLinksPerPair {
                    links_per_pair: self.links_per_group_pair,
                    max,
                });
            }
        }
        Ok(())
    }

    /// The most links per group pair the global ports allow.
    pub fn max_links_per_pair(groups: u32, global_ports_per_group: u32) -> u32 {
        if groups < 2 {
            0
        } else {
            global_ports_per_group / (groups - 1)
        }
    }

    pub fn routers_per_group(&self) -> u32 {
        self.wiring.routers()
    }

    pub fn global_ports_per_group(&self) -> u32 {
        self.routers_per_group() * self.global_ports_per_router
    }

    pub fn router_count(&self) -> u64 {
        self.groups as u64 * self.routers_per_group() as u64
    }

    pub fn node_count(&self) -> u64 {
        self.router_count() * self.nodes_per_router as u64
    }

    pub fn is_aries(&self) -> bool {
        matches!(self.wiring, GroupWiring::Aries { .. })
    }

    pub fn class_names(&self) -> &'static [&'static str] {
        if self.is_aries() {
            &CLASS_NAMES_ARIES
        } else {
            &CLASS_NAMES_GENERIC
        }
    }

    /// Index of the global class in [`Self::class_names`].
    pub fn global_class(&self) -> u8 {
        if self.is_aries() {
            2
        } else {
            1
        }
    }

    /// Group, router-in-group and global-port-in-group of global port `k`'s far end.
    pub fn global_peer(&self, group: u32, k: u32) -> (u32, u32) {
        let g = self.groups;
        let o = k % (g - 1);
        let b = k / (g - 1);
        ((group + 1 + o) % g, b * (g - 1) + (g - 2 - o))
    }

    /// Router (within its group) holding global port `k`.
    pub fn port_router(&self, k: u32) -> u32 {
        match self.arrangement {
            Arrangement::Consecutive => k / self.global_ports_per_router,
            Arrangement::RoundRobin => k % self.routers_per_group(),
        }
    }

    /// Network ports of the router with the most (local links plus the
    /// global ports in use on it): what the routing tables will hold,
    /// known before they are built (a bound a builder can refuse on).
    pub fn max_ports_per_router(&self) -> u64 {
        let local = match self.wiring {
            GroupWiring::AllToAll { routers } => routers.saturating_sub(1) as u64,
            GroupWiring::Aries { chassis, routers_per_chassis, rank2_links } => {
                routers_per_chassis.saturating_sub(1) as u64 + chassis.saturating_sub(1) as u64 * rank2_links.max(1) as u64
            }
        };
        let used = self.used_global_ports_per_group() as u64;
        let a = self.routers_per_group().max(1) as u64;
        let global = match self.arrangement {
            Arrangement::Consecutive => used.min(self.global_ports_per_router as u64),
            Arrangement::RoundRobin => used.div_ceil(a),
        };
        local + global
    }

    /// Global links in use per group.
    pub fn used_global_ports_per_group(&self) -> u32 {
        if self.groups < 2 {
            0
        } else {
            (self.groups - 1) * self.links_per_group_pair
        }
    }

    pub fn router_graph(&self) -> RouterGraph {
        let a = self.routers_per_group();
        let mut b = GraphBuilder::new(self.router_count() as usize, self.nodes_per_router);
        for grp in 0..self.groups {
            let base = grp * a;
            match self.wiring {
                GroupWiring::AllToAll { routers } => {
                    for i in 0..routers {
                        for j in i + 1..routers {
                            b.link(base + i, base + j, 0);
                        }
                    }
                }
                GroupWiring::Aries {
                    chassis,
                    routers_per_chassis: rpc,
                    rank2_links,
                } => {
                    for c in 0..chassis {
                        for i in 0..rpc {
                            for j in i + 1..rpc {
                                b.link(base + c * rpc + i, base + c * rpc + j, 0);
                            }
                        }
                    }
                    for s in 0..rpc {
                        for c1 in 0..chassis {
                            for c2 in c1 + 1..chassis {
                                for _ in 0..rank2_links {
                                    b.link(base + c1 * rpc + s, base + c2 * rpc + s, 1);
                                }
                            }
                        }
                    }
                }
            }
            // Each global link once: from the lower-numbered group of the pair's side
            // (port k of group grp reaches (peer, k'); add it when (grp, k) < (peer, k')).
            for k in 0..self.used_global_ports_per_group() {
                let (peer, kp) = self.global_peer(grp, k);
                if (grp, k) < (peer, kp) {
                    b.link(
                        base + self.port_router(k),
                        peer * a + self.port_router(kp),
                        self.global_class(),
                    );
                }
            }
        }
        b.build()
    }

    /// Side of the standard bisection: the first half of the routers by id
    /// (whole groups, and half of a group when the group count is odd).
    pub fn bisection_side(&self, router: u32) -> bool {
        (router as u64) < self.router_count() / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aries(groups: u32, cables_per_pair: u32) -> Dragonfly {
        Dragonfly {
            groups,
            nodes_per_router: 4,
            wiring: GroupWiring::Aries {
                chassis: 6,
                routers_per_chassis: 16,
                rank2_links: 3,
            },
            global_ports_per_router: 10,
            links_per_group_pair: cables_per_pair * 4,
            arrangement: Arrangement::RoundRobin,
        }
    }

    #[test]
    fn global_peering_is_an_involution() {
        for g in 2..12 {
            let d = Dragonfly {
                groups: g,
                nodes_per_router: 2,
                wiring: GroupWiring::AllToAll { routers: 4 },
                global_ports_per_router: 3,
                links_per_group_pair: 12 / (g - 1).max(1),
                arrangement: Arrangement::Consecutive,
            };
            if d.validate().is_err() {
                continue;
            }
            for grp in 0..g {
                for k in 0..d.used_global_ports_per_group() {
                    let (p, kp) = d.global_peer(grp, k);
                    assert_ne!(p, grp);
                    assert_eq!(d.global_peer(p, kp), (grp, k));
                }
            }
        }
    }

    #[test]
    fn aries_group_degrees() {
        let d = aries(2, 60);
        let g = d.router_graph();
        let counts = g.links_by_class(3);
        // 96 routers × 15 rank-1 ports / 2 per group; rank-2: 16 slots × 15 chassis pairs × 3.
        assert_eq!(counts[0], 2 * 96 * 15 / 2);
        assert_eq!(counts[1], 2 * 16 * 15 * 3);
        assert_eq!(counts[2], 240);
        for r in 0..192 {
            let deg = g.neighbors(r).count();
            assert!(deg <= 15 + 15 + 10);
        }
    }

    #[test]
    fn aries_limits() {
        assert_eq!(Dragonfly::max_links_per_pair(241, 960), 4);
        assert!(aries(241, 1).validate().is_ok());
        // 242 groups: 960 ports / 241 peers leave 3 links per pair, less than one 4-link cable.
        assert!(matches!(
            aries(242, 1).validate(),
            Err(DragonflyError::TooManyLinksPerPair { max: 3, .. })
        ));
        assert!(aries(20, 13).validate().is_err());
    }

    #[test]
    fn minimal_route_is_at_most_five_hops() {
        // The largest Aries system: one 4-link cable per group pair.
        let d = aries(241, 1);
        let a = d.routers_per_group();
        let sources: Vec<(u32, f64)> = (0..a).map(|r| (r, 1.0)).collect();
        let s = d.router_graph().hop_stats_from(&sources);
        assert_eq!(s.diameter, 5);
        assert!(s.connected);
        // Richly cabled small systems can be shorter, never longer.
        assert!(aries(3, 80).router_graph().hop_stats().diameter <= 5);
    }
}
