//! Failed routers and links, and the source's choice of a route that
//! avoids them.
//!
//! No router of the modelled machines routes around failures in hardware
//! (BG/L: [S:004]). What avoids them is the **software that sets a
//! packet's route at injection**: BG/L's hint bits keep a network with a
//! few failed nodes connected, Tofu may begin a route with a detour inside
//! the ABC group before the XYZ phase ([S:000]; [S:003]), a dragonfly's
//! source picks the global link or the intermediate group. So a route is
//! chosen once, at the source, among the route states the routing scheme
//! offers, in a fixed order of preference, as the first whose whole path
//! is intact:
//!
//! - **tori, meshes, Tofu**: the minimal hint bits; then the other
//!   directions on the rings (fewest reversed axes first); then a one-hop
//!   detour through each port the router can carry it on, in port order
//!   (a Tofu route's ABC detour; on BG/L a step sideways that moves the
//!   dimension-order turn off a failed node), with each choice of
//!   directions from there;
//! - **dragonflies**: the minimal route; else one of the intact other
//!   global links to the destination group (the spread salts), else one of
//!   the intact Valiant groups, picked by a hash of the pair so the pairs a
//!   failure cuts spread out.
//!
//! A packet whose route is not the minimal one, or whose minimal box holds
//! a failure, travels deterministically (BG/L's per-packet routing-mode
//! bit): adaptive hops could otherwise wander onto the failure.
//!
//! Fat-trees take failed nodes (leaves: they send and receive nothing) but
//! not failed links: their up ports are fixed by the destination (D-mod-K)
//! or chosen without knowing the failures.

use crate::{Routing, TorusRouting};

/// A route chosen at the source: its route state (hint bits) and an
/// optional first hop (`detour`, a port of the source router).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceRoute {
    pub hints: u8,
    pub detour: Option<u8>,
}

/// What stops a route: a failed link (router, port), a failed router, or a
/// walk that never arrives.
enum Blocked {
    Link(u32, u8),
    Router(u32),
    Loop,
}

/// The failed routers and links of a network, as the engine's routing
/// sees them (router ids and ports of [`Routing`]).
#[derive(Clone, Debug)]
pub struct FaultMap {
    ports: usize,
    failed_router: Vec<bool>,
    /// Bit per port of each router: the link out of it has failed (both
    /// ends are marked).
    failed_ports: Vec<u64>,
    routers: Vec<u32>,
    links: Vec<(u32, u8)>,
    /// Ports a route may begin with a detour through (bit per port): the
    /// router must carry that hop outside its escape network.
    detour_ports: u64,
    /// Bit per port of each router whose link carries nothing now: failed
    /// itself, or an end router failed (kept for failures during a run,
    /// [`Self::fail_link`]; empty before the first).
    down: Vec<u64>,
}

/// Why a set of failures cannot be modelled, or a failure or recovery
/// during a run cannot happen.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FaultError {
    #[error("{ports} ports per router; failed links are kept for routers of at most 64")]
    TooManyPorts { ports: usize },
    #[error("the failed link between switches {a} and {b}: fat-tree routing ({mode}) cannot avoid it — its up ports are fixed by the destination (d-mod-k) or chosen without knowing the failures; failed nodes are modelled, failed links are not")]
    FatTreeLink { a: String, b: String, mode: &'static str },
    #[error("router {router} is not in the network ({routers} routers)")]
    NoSuchRouter { router: u32, routers: usize },
    #[error("link {a}-{b}: router ids must be below {routers}")]
    LinkOutside { a: u32, b: u32, routers: usize },
    #[error("the link out of port {port} of router {router} is listed twice")]
    ListedTwice { port: String, router: String },
    #[error("port {port} of router {router} does not lead to router {to}")]
    PortElsewhere { port: String, router: String, to: u32 },
    #[error("routers {a} and {b} have no (further) link between them")]
    NoLink { a: u32, b: u32 },
    #[error("port {port} of router {router} is not connected")]
    NotConnected { port: String, router: String },
    /// A recovery of what is not failed (`failed` false), or a failure of
    /// what has already failed.
    #[error("{what} {}", if *.failed { "has already failed" } else { "is not failed" })]
    AlreadySo { what: String, failed: bool },
}

impl FaultMap {
    /// `routers`: routers that failed with their node (direct networks);
    /// `links`: router pairs, each removing one link between them — the
    /// one out of `ports[i]` of the first router where given, else the
    /// first one not failed yet.
    pub fn new(routing: &Routing, routers: &[u32], links: &[(u32, u32)], ports_given: &[Option<u8>]) -> Result<Self, FaultError> {
        let n = routing.routers();
        let ports = routing.ports();
        if ports > 64 && !links.is_empty() {
            return Err(FaultError::TooManyPorts { ports });
        }
        if let (Routing::FatTree(f), Some(&(a, b))) = (routing, links.first()) {
            return Err(FaultError::FatTreeLink { a: routing.router_label(a), b: routing.router_label(b), mode: f.mode.name() });
        }
        let mut m = FaultMap { ports, failed_router: vec![false; n], failed_ports: vec![0; if links.is_empty() { 0 } else { n }], routers: Vec::new(), links: Vec::new(), detour_ports: u64::MAX, down: Vec::new() };
        for &r in routers {
            if r as usize >= n {
                return Err(FaultError::NoSuchRouter { router: r, routers: n });
            }
            m.failed_router[r as usize] = true;
            m.routers.push(r);
        }
        for (i, &(a, b)) in links.iter().enumerate() {
            if a as usize >= n || b as usize >= n {
                return Err(FaultError::LinkOutside { a, b, routers: n });
            }
            let joins = |p: u8| routing.neighbor(a, p).is_some_and(|(w, _)| w == b);
            let p = match ports_given.get(i).copied().flatten() {
                Some(p) if m.failed_ports[a as usize] & 1 << p != 0 => {
                    return Err(FaultError::ListedTwice { port: routing.port_name(p), router: routing.router_label(a) })
                }
                Some(p) if joins(p) => p,
                Some(p) => return Err(FaultError::PortElsewhere { port: routing.port_name(p), router: routing.router_label(a), to: b }),
                None => (0..ports as u8)
                    .find(|&p| m.failed_ports[a as usize] & 1 << p == 0 && joins(p))
                    .ok_or(FaultError::NoLink { a, b })?,
            };
            let (_, q) = routing.neighbor(a, p).expect("found above");
            m.failed_ports[a as usize] |= 1 << p;
            m.failed_ports[b as usize] |= 1 << q;
            m.links.push((a, p));
            m.links.push((b, q));
        }
        Ok(m)
    }

    /// Only the ports of `mask` may start a detour: the hop leaves
    /// dimension order, so the router must carry it outside its escape
    /// network (on a dynamic VC: all ports then, none without).
    pub fn with_detour_ports(mut self, mask: u64) -> Self {
        self.detour_ports = mask;
        self
    }

    /// Makes the map ready for failures and recoveries during a run: the
    /// per-port tables of every router, and which links carry nothing now.
    pub fn for_changes(mut self, routing: &Routing) -> Self {
        let n = self.failed_router.len();
        if self.failed_ports.is_empty() {
            self.failed_ports = vec![0; n];
        }
        self.down = vec![0; n];
        for r in 0..n as u32 {
            self.refresh_down(routing, r);
        }
        self
    }

    /// Ports of `r` whose link carries nothing now (a failure during the
    /// run): the link failed, or the router at either end did. Empty
    /// unless the map was made [`Self::for_changes`].
    #[inline]
    pub fn down_ports(&self, r: u32) -> u64 {
        self.down.get(r as usize).copied().unwrap_or(0)
    }

    fn refresh_down(&mut self, routing: &Routing, r: u32) {
        let mut m = self.failed_ports[r as usize];
        for p in 0..self.ports.min(64) as u8 {
            if let Some((w, _)) = routing.neighbor(r, p) {
                if self.failed_router[r as usize] || self.failed_router[w as usize] {
                    m |= 1 << p;
                }
            }
        }
        self.down[r as usize] = m;
    }

    /// Fails (`up` false) or recovers the link out of `port` of `r`
    /// during a run (both directions). Errors name what is already so.
    pub fn set_link(&mut self, routing: &Routing, r: u32, port: u8, up: bool) -> Result<(), FaultError> {
        let (w, q) = routing.neighbor(r, port).ok_or_else(|| FaultError::NotConnected { port: routing.port_name(port), router: routing.router_label(r) })?;
        let failed = self.port_failed(r, port);
        if failed != up {
            return Err(FaultError::AlreadySo { what: format!("the link {} of router {}", routing.port_name(port), routing.router_label(r)), failed });
        }
        if up {
            self.failed_ports[r as usize] &= !(1 << port);
            self.failed_ports[w as usize] &= !(1 << q);
            self.links.retain(|&l| l != (r, port) && l != (w, q));
        } else {
            self.failed_ports[r as usize] |= 1 << port;
            self.failed_ports[w as usize] |= 1 << q;
            self.links.push((r, port));
            self.links.push((w, q));
        }
        self.refresh_down(routing, r);
        self.refresh_down(routing, w);
        Ok(())
    }

    /// Fails (`up` false) or recovers router `r` (with its node) during a
    /// run: every link of it carries nothing while it is down.
    pub fn set_router(&mut self, routing: &Routing, r: u32, up: bool) -> Result<(), FaultError> {
        if self.failed_router[r as usize] != up {
            return Err(FaultError::AlreadySo { what: format!("router {}", routing.router_label(r)), failed: !up });
        }
        self.failed_router[r as usize] = !up;
        if up {
            self.routers.retain(|&x| x != r);
        } else {
            self.routers.push(r);
        }
        self.refresh_down(routing, r);
        for p in 0..self.ports.min(64) as u8 {
            if let Some((w, _)) = routing.neighbor(r, p) {
                self.refresh_down(routing, w);
            }
        }
        Ok(())
    }

    /// Failed links counted once per direction.
    pub fn failed_directed_links(&self) -> u64 {
        self.links.len() as u64
    }

    /// Whether the map takes failures during a run ([`Self::for_changes`]).
    pub fn changes(&self) -> bool {
        !self.down.is_empty()
    }

    pub fn is_empty(&self) -> bool {
        self.routers.is_empty() && self.links.is_empty()
    }

    #[inline]
    pub fn router_failed(&self, r: u32) -> bool {
        self.failed_router[r as usize]
    }

    /// Bit per port of `r` whose link has failed.
    #[inline]
    pub fn failed_ports(&self, r: u32) -> u64 {
        self.failed_ports.get(r as usize).copied().unwrap_or(0)
    }

    #[inline]
    fn port_failed(&self, r: u32, port: u8) -> bool {
        port < 64 && self.failed_ports(r) & 1 << port != 0
    }

    /// Whether the link out of `port` of `r` leads somewhere alive (its
    /// far router then).
    fn hop_ok(&self, routing: &Routing, r: u32, port: u8) -> Option<u32> {
        if self.port_failed(r, port) {
            return None;
        }
        let (w, _) = routing.neighbor(r, port)?;
        (!self.failed_router[w as usize]).then_some(w)
    }

    /// Walks the deterministic route from `src` to `dst`: its router hops,
    /// or the first failure it meets.
    fn walk(&self, routing: &Routing, src: u32, dst: u32, route: SourceRoute) -> Result<u32, Blocked> {
        // Routes are at most a few times the network's size; a longer walk
        // would be a routing loop, which counts as no route.
        let limit = 4 * self.failed_router.len() as u32 + 64;
        // A failed end (a node failing during the run): nothing reaches it.
        for end in [src, dst] {
            if self.failed_router[end as usize] {
                return Err(Blocked::Router(end));
            }
        }
        let (mut r, mut h, mut n) = (src, routing.advance(src, route.hints), 0u32);
        let mut port = route.detour.or_else(|| routing.escape_port(r, dst, h));
        while let Some(p) = port {
            if self.port_failed(r, p) {
                return Err(Blocked::Link(r, p));
            }
            let (w, _) = routing.neighbor(r, p).ok_or(Blocked::Loop)?;
            if self.failed_router[w as usize] {
                return Err(Blocked::Router(w));
            }
            (r, h, n) = (w, routing.advance(w, h), n + 1);
            if n > limit {
                return Err(Blocked::Loop);
            }
            port = routing.escape_port(r, dst, h);
        }
        Ok(n)
    }

    /// Router hops of the deterministic route from `src` to `dst`, or
    /// `None` when it meets a failed link or router.
    pub fn clear_hops(&self, routing: &Routing, src: u32, dst: u32, route: SourceRoute) -> Option<u32> {
        self.walk(routing, src, dst, route).ok()
    }

    /// The first failure the route meets: `router R` or `the link out of
    /// port P of router R`; "nothing" when it is intact.
    pub fn blocked_at(&self, routing: &Routing, src: u32, dst: u32, route: SourceRoute) -> String {
        match self.walk(routing, src, dst, route) {
            Ok(_) | Err(Blocked::Loop) => "nothing".into(),
            Err(Blocked::Link(r, p)) => format!("the failed link {} of router {}", routing.port_name(p), routing.router_label(r)),
            Err(Blocked::Router(w)) => format!("the failed router {}", routing.router_label(w)),
        }
    }

    /// The routes [`Self::choose`] tries, for messages.
    pub fn scheme(&self, routing: &Routing) -> &'static str {
        match routing {
            Routing::Torus(_) => "dimension-order routes with any ring directions, after at most one detour hop",
            Routing::Dragonfly(_) => "the minimal route, every global link to the destination group and Valiant through every other group (Valiant up to 64 groups)",
            Routing::FatTree(_) => "one up/down route per destination",
        }
    }

    /// Whether every minimal route the adaptive torus router could take
    /// from `src` to `dst` under `hints` is intact: no failed router in the
    /// box, no failed link leaving a box router in a productive direction.
    pub fn box_is_clear(&self, t: &TorusRouting, src: u32, dst: u32, hints: u8) -> bool {
        self.routers.iter().all(|&f| !t.on_minimal_paths(src, dst, hints, f))
            && self.links.iter().all(|&(r, p)| !t.on_minimal_paths(src, dst, hints, r) || t.productive_ports(r, dst, hints) & 1 << p == 0)
    }

    /// The first intact route from `src` to `dst` in the order of
    /// preference the module describes, after `first` (the source's usual
    /// choice); `None` when every route the scheme offers meets a failure.
    pub fn choose(&self, routing: &Routing, src: u32, dst: u32, first: u8) -> Option<SourceRoute> {
        let plain = |hints| SourceRoute { hints, detour: None };
        if self.clear_hops(routing, src, dst, plain(first)).is_some() {
            return Some(plain(first));
        }
        match routing {
            Routing::Torus(t) => self.choose_torus(routing, t, src, dst, first),
            Routing::Dragonfly(d) => {
                let minimal = plain(d.minimal_hints(src, dst));
                if self.clear_hops(routing, src, dst, minimal).is_some() {
                    return Some(minimal);
                }
                // The other global links to the destination group, else
                // Valiant groups: one of the intact ones by a hash of the
                // pair, so the pairs a failure cuts spread over them
                // instead of all taking the first.
                let spreads: Vec<SourceRoute> = (1..64u8).filter(|_| d.group(src) != d.group(dst)).map(|s| plain(0x40 | s)).collect();
                let valiant: Vec<SourceRoute> = d.valiant_choices(src, dst).into_iter().map(plain).collect();
                let pick = |list: &[SourceRoute]| {
                    let intact: Vec<SourceRoute> = list.iter().copied().filter(|&r| self.clear_hops(routing, src, dst, r).is_some()).collect();
                    let x = (src as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (dst as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
                    (!intact.is_empty()).then(|| intact[((x >> 33) % intact.len() as u64) as usize])
                };
                pick(&spreads).or_else(|| pick(&valiant))
            }
            Routing::FatTree(_) => None,
        }
    }

    fn choose_torus(&self, routing: &Routing, t: &TorusRouting, src: u32, dst: u32, first: u8) -> Option<SourceRoute> {
        let free = t.direction_axes();
        let allowed = self.detour_ports;
        let detours = std::iter::once(None).chain((0..self.ports.min(64) as u8).filter(|&p| allowed & 1 << p != 0).map(Some));
        // Reversed axes, fewest first; subsets of the free axes.
        let mut flips: Vec<u8> = subsets(free).collect();
        flips.sort_by_key(|f| f.count_ones());
        for detour in detours {
            let base = match detour {
                None => first,
                Some(p) => match self.hop_ok(routing, src, p) {
                    Some(w) => t.shortest_hints(w, dst),
                    None => continue,
                },
            };
            for &f in &flips {
                let route = SourceRoute { hints: base ^ f, detour };
                if self.clear_hops(routing, src, dst, route).is_some() {
                    return Some(route);
                }
            }
        }
        None
    }
}

/// Every subset of the bits of `mask`, the empty one first.
fn subsets(mask: u8) -> impl Iterator<Item = u8> {
    let mut next = Some(0u8);
    std::iter::from_fn(move || {
        let s = next?;
        // The next subset of `mask` in increasing order.
        let n = (s | !mask).wrapping_add(1) & mask;
        next = (n != 0).then_some(n);
        Some(s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DragonflyMode, DragonflyRouting, EscapeOrder};
    use tofusim_topology::{tofu, Axis, Torus};

    fn torus(lens: &[u32], order: &[usize]) -> Routing {
        let t = Torus::with_lengths(lens, &vec![true; lens.len()]);
        Routing::Torus(TorusRouting::new(&t, order, EscapeOrder::Dimension))
    }

    #[test]
    fn subsets_of_a_mask() {
        let s: Vec<u8> = subsets(0b1010).collect();
        assert_eq!(s, [0, 0b10, 0b1000, 0b1010]);
        assert_eq!(subsets(0).count(), 1);
    }

    #[test]
    fn a_ring_goes_the_long_way_round_a_failed_node_or_link() {
        let rt = torus(&[4], &[0]);
        let m = FaultMap::new(&rt, &[1], &[], &[]).unwrap();
        // 0 -> 2 is a tie: `+` passes node 1, `-` goes 0 -> 3 -> 2.
        let r = m.choose(&rt, 0, 2, 0).unwrap();
        assert_eq!((r.hints, r.detour), (1, None));
        assert_eq!(m.clear_hops(&rt, 0, 2, r), Some(2));
        let m = FaultMap::new(&rt, &[], &[(0, 1)], &[]).unwrap();
        let r = m.choose(&rt, 0, 1, 0).unwrap();
        assert_eq!(m.clear_hops(&rt, 0, 1, r), Some(3));
        // Node 1 failed and link 2-3 failed: 0 and 2 are cut apart.
        let m = FaultMap::new(&rt, &[1], &[(2, 3)], &[]).unwrap();
        assert_eq!(m.choose(&rt, 0, 2, 0), None);
        assert!(FaultMap::new(&rt, &[], &[(0, 2)], &[]).is_err());
    }

    #[test]
    fn the_named_port_of_a_two_ring_fails_not_its_parallel_twin() {
        // A ring of 2: x+ and x- of node 0 are two links to node 1.
        let rt = torus(&[2], &[0]);
        let m = FaultMap::new(&rt, &[], &[(0, 1)], &[Some(1)]).unwrap();
        assert_eq!(m.failed_ports(0), 0b10);
        assert_eq!(m.failed_ports(1), 0b01, "node 1's x+ is the same link");
        // The other link still joins them.
        assert!(m.choose(&rt, 0, 1, 0).is_some());
        let twice = FaultMap::new(&rt, &[], &[(0, 1), (1, 0)], &[Some(1), Some(0)]);
        assert!(matches!(twice.unwrap_err(), FaultError::ListedTwice { .. }));
    }

    #[test]
    fn a_failed_turn_is_passed_by_a_sideways_first_hop() {
        // 4x4 torus, X then Y: 0,0 -> 2,2 turns at 2,0. With 2,0 failed no
        // choice of directions avoids the turn; one hop in Y first does.
        let rt = torus(&[4, 4], &[0, 1]);
        let Routing::Torus(t) = &rt else { unreachable!() };
        let id = |x: u32, y: u32| t.torus().node_id(&[x, y]).0;
        let m = FaultMap::new(&rt, &[id(2, 0)], &[], &[]).unwrap();
        let first = t.shortest_hints(id(0, 0), id(2, 2));
        let r = m.choose(&rt, id(0, 0), id(2, 2), first).unwrap();
        assert!(r.detour.is_some());
        assert!(m.clear_hops(&rt, id(0, 0), id(2, 2), r).is_some());
        assert!(!m.box_is_clear(t, id(0, 0), id(2, 2), first));
        assert!(m.box_is_clear(t, id(0, 1), id(1, 3), t.shortest_hints(id(0, 1), id(1, 3))));
    }

    #[test]
    fn every_pair_of_survivors_of_a_tofu_block_with_a_failed_node_has_a_route() {
        let t = tofu::tofu_torus([Axis::ring("x", 3), Axis::path("y", 2), Axis::ring("z", 2)]);
        let rt = Routing::Torus(TorusRouting::new(&t, &tofu::ROUTING_ORDER, EscapeOrder::Dimension));
        let Routing::Torus(tr) = &rt else { unreachable!() };
        let dead = t.node_id(&[1, 0, 1, 0, 1, 0]).0;
        let m = FaultMap::new(&rt, &[dead], &[], &[]).unwrap();
        let n = t.node_count() as u32;
        let mut detoured = 0;
        for s in (0..n).filter(|&s| s != dead) {
            for d in (0..n).filter(|&d| d != dead && d != s) {
                let r = m.choose(&rt, s, d, tr.shortest_hints(s, d)).unwrap_or_else(|| panic!("{s} -> {d}"));
                detoured += usize::from(r.detour.is_some());
            }
        }
        assert!(detoured > 0);
    }

    #[test]
    fn a_dragonfly_avoids_a_failed_global_link() {
        use tofusim_topology::dragonfly::{Arrangement, Dragonfly, GroupWiring};
        // 5 groups of 4 routers, one global link per group pair: the only
        // way round a failed one is through a third group.
        let d = Dragonfly {
            groups: 5,
            nodes_per_router: 1,
            wiring: GroupWiring::AllToAll { routers: 4 },
            global_ports_per_router: 1,
            links_per_group_pair: 1,
            arrangement: Arrangement::Consecutive,
        };
        let rt = Routing::Dragonfly(DragonflyRouting::new(&d, DragonflyMode::Minimal));
        let Routing::Dragonfly(dr) = &rt else { unreachable!() };
        // The first global link of the route 0 -> the last router.
        let (src, dst) = (0, dr.routers() as u32 - 1);
        let h = dr.minimal_hints(src, dst);
        let (g, p) = dr.global_hop(src, dst, h).unwrap();
        let (w, _) = dr.neighbor(g, p).unwrap();
        let m = FaultMap::new(&rt, &[], &[(g, w)], &[]).unwrap();
        assert_eq!(m.clear_hops(&rt, src, dst, SourceRoute { hints: h, detour: None }), None);
        let r = m.choose(&rt, src, dst, h).unwrap();
        assert_ne!(r.hints, h);
        assert!(m.clear_hops(&rt, src, dst, r).is_some());
    }

    #[test]
    fn links_and_routers_fail_and_recover_during_a_run() {
        let rt = torus(&[4], &[0]);
        let mut m = FaultMap::new(&rt, &[], &[], &[]).unwrap().for_changes(&rt);
        assert!(m.changes() && m.is_empty());
        // Node 0's x+ leads to node 1, whose x- is the same link.
        m.set_link(&rt, 0, 0, false).unwrap();
        assert_eq!((m.down_ports(0), m.down_ports(1)), (0b01, 0b10));
        assert!(m.set_link(&rt, 1, 1, false).unwrap_err().to_string().ends_with("has already failed"));
        assert_eq!(m.clear_hops(&rt, 0, 1, SourceRoute { hints: 0, detour: None }), None);
        m.set_link(&rt, 0, 0, true).unwrap();
        assert_eq!((m.down_ports(0), m.down_ports(1)), (0, 0));
        assert_eq!(m.set_link(&rt, 0, 0, true).unwrap_err(), FaultError::AlreadySo { what: format!("the link {} of router {}", rt.port_name(0), rt.router_label(0)), failed: false });
        // A failed router: every link of it is down at both ends, and no
        // route starts or ends there.
        m.set_router(&rt, 2, false).unwrap();
        assert_eq!((m.down_ports(1), m.down_ports(2), m.down_ports(3)), (0b01, 0b11, 0b10));
        assert_eq!(m.choose(&rt, 0, 2, 0), None);
        assert!(m.choose(&rt, 1, 3, 0).is_some(), "round the other way");
        m.set_router(&rt, 2, true).unwrap();
        assert!(m.is_empty() && (0..4).all(|r| m.down_ports(r) == 0));
    }
}
