//! Analytic metrics of a [`Network`]: computed, never stored.
//!
//! - Hops are router-to-router link hops between distinct nodes (nodes on the
//!   same router of an indirect network are 0 hops apart).
//! - Bisection is the minimum balanced cut over axis-aligned staircase cuts
//!   for tori and meshes, and the standard cut for dragonfly (half of the
//!   groups) and fat-tree (top-level subtrees in halves); bandwidth counts
//!   **both directions**: links cut × 2 × rate ([S:000]).
//! - Injection is nodes × per-node injection, where the node's interfaces
//!   (or a host-side limit) set the per-node rate.

use crate::bisection::min_bisection;
use crate::graph::HopStats;
use crate::network::{Network, Topology};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct Degree {
    pub min: u32,
    pub max: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct Methods {
    pub hops: &'static str,
    pub bisection: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct Metrics {
    pub kind: &'static str,
    pub shape: String,
    pub nodes: u64,
    pub routers: u64,
    /// Router-to-router links (bidirectional; parallel links counted).
    pub links: u64,
    pub links_by_class: BTreeMap<String, u64>,
    /// Node-to-router links of indirect networks (0 for direct networks).
    pub node_links: u64,
    /// Router-to-router ports in use per router.
    pub router_degree: Degree,
    pub diameter: Option<u32>,
    pub average_hops: Option<f64>,
    pub connected: bool,
    pub bisection_links: f64,
    pub bisection_bandwidth_Bps: f64,
    pub injection_per_node_Bps: f64,
    pub injection_bandwidth_Bps: f64,
    pub link_bandwidth_Bps: BTreeMap<String, f64>,
    pub faulty_nodes: usize,
    pub faulty_links: usize,
    pub methods: Methods,
}

impl Network {
    pub fn metrics(&self) -> Metrics {
        let topo = &self.topology;
        let names = topo.class_names();
        let faulty = !self.faults.is_empty();
        let graph = if faulty
            || !matches!(
                topo,
                Topology::Torus(_) | Topology::Tofu(_) | Topology::FatTree(_)
            ) {
            Some(self.faulty_router_graph())
        } else {
            None
        };

        let (links_per_class, node_links, degree) = self.link_counts(graph.as_ref());
        let (hops, hop_method) = self.hop_stats(graph.as_ref());
        let (cut_per_class, bis_method) = self.bisection(graph.as_ref());
        let bisection_links: f64 = cut_per_class.iter().sum();
        let bisection_bps: f64 = cut_per_class
            .iter()
            .zip(&self.link_Bps)
            .map(|(l, r)| 2.0 * l * r)
            .sum();

        let surviving_nodes = topo.node_count() - self.faults.nodes.len() as u64;
        // In a direct network a failed node takes its router with it.
        let direct = matches!(topo, Topology::Torus(_) | Topology::Tofu(_));
        let routers = topo.router_count() - if direct { self.faults.nodes.len() as u64 } else { 0 };
        // No surviving node: nothing is connected to anything.
        let connected = hops.connected && surviving_nodes > 0;
        let per_node = self.injection_per_node_Bps();
        Metrics {
            kind: topo.kind(),
            shape: shape_label(topo),
            nodes: surviving_nodes,
            routers,
            links: links_per_class.iter().sum(),
            links_by_class: names
                .iter()
                .cloned()
                .zip(links_per_class.iter().copied())
                .collect(),
            node_links,
            router_degree: degree,
            diameter: connected.then_some(hops.diameter),
            average_hops: connected.then_some(hops.average_hops),
            connected,
            bisection_links,
            bisection_bandwidth_Bps: bisection_bps,
            injection_per_node_Bps: per_node,
            injection_bandwidth_Bps: surviving_nodes as f64 * per_node,
            link_bandwidth_Bps: self.class_rates(),
            faulty_nodes: self.faults.nodes.len(),
            faulty_links: self.faults.links.len(),
            methods: Methods {
                hops: hop_method,
                bisection: bis_method,
            },
        }
    }

    fn link_counts(&self, graph: Option<&crate::graph::RouterGraph>) -> (Vec<u64>, u64, Degree) {
        let classes = self.topology.class_names().len();
        match (&self.topology, graph) {
            (Topology::Torus(t) | Topology::Tofu(t), None) => (
                t.links_per_axis(),
                0,
                Degree {
                    min: t.min_degree(),
                    max: t.max_degree(),
                },
            ),
            (Topology::FatTree(f), None) => {
                let per: Vec<u64> = (1..f.levels())
                    .map(|l| f.links_above(l) * f.rails as u64)
                    .collect();
                let degs: Vec<u32> = (1..=f.levels()).map(|l| if l < f.levels() { f.up[l] } else { 0 } + if l > 1 { f.down[l - 1] } else { 0 }).collect();
                (
                    per,
                    f.node_link_count(),
                    Degree {
                        min: *degs.iter().min().unwrap_or(&0),
                        max: *degs.iter().max().unwrap_or(&0),
                    },
                )
            }
            (topo, Some(g)) => {
                let mut per = g.links_by_class(classes);
                let rails = if let Topology::FatTree(f) = topo {
                    f.rails as u64
                } else {
                    1
                };
                per.iter_mut().for_each(|x| *x *= rails);
                let mut min = u32::MAX;
                let mut max = 0;
                for r in 0..g.router_count() as u32 {
                    if !g.is_alive(r) {
                        continue;
                    }
                    let d = g
                        .neighbors(r)
                        .filter(|&(t, c)| c != u8::MAX && g.is_alive(t))
                        .count() as u32;
                    min = min.min(d);
                    max = max.max(d);
                }
                let node_links = match topo {
                    Topology::Torus(_) | Topology::Tofu(_) => 0,
                    _ => {
                        (0..g.router_count() as u32)
                            .map(|r| g.nodes_at(r) as u64)
                            .sum::<u64>()
                            * rails
                    }
                };
                (
                    per,
                    node_links,
                    Degree {
                        min: if min == u32::MAX { 0 } else { min },
                        max,
                    },
                )
            }
            _ => unreachable!("graph is built for every topology without closed forms"),
        }
    }

    fn hop_stats(&self, graph: Option<&crate::graph::RouterGraph>) -> (HopStats, &'static str) {
        match (&self.topology, graph) {
            (Topology::Torus(t) | Topology::Tofu(t), None) => (
                HopStats {
                    diameter: t.diameter(),
                    average_hops: t.average_hops(),
                    connected: true,
                },
                "closed-form per-axis sums",
            ),
            (Topology::FatTree(f), None) => (
                HopStats {
                    diameter: f.diameter(),
                    average_hops: f.average_hops(),
                    connected: true,
                },
                "closed-form subtree sizes",
            ),
            (Topology::Dragonfly(d), Some(g)) if self.faults.is_empty() => {
                // The cabling is invariant under rotating the groups: BFS from
                // group 0 stands for every group.
                let a = d.routers_per_group();
                let sources: Vec<(u32, f64)> = (0..a).map(|r| (r, d.groups as f64)).collect();
                (
                    g.hop_stats_from(&sources),
                    "BFS from one group (rotation symmetry)",
                )
            }
            (_, Some(g)) => (g.hop_stats(), "BFS from every router"),
            _ => unreachable!(),
        }
    }

    fn bisection(&self, graph: Option<&crate::graph::RouterGraph>) -> (Vec<f64>, &'static str) {
        let classes = self.topology.class_names().len();
        match &self.topology {
            Topology::Torus(t) | Topology::Tofu(t) => {
                let cut = min_bisection(t.axes());
                match graph {
                    None => {
                        let mut per = vec![0.0; classes];
                        // Attribute the cut to its most significant axis (the
                        // staircase part is charged there too; rates are equal).
                        if let Some(&j) = cut.order.first() {
                            per[j] = cut.links as f64;
                        }
                        (per, "minimum axis-aligned staircase cut")
                    }
                    Some(g) => {
                        let axes = t.axes();
                        let side = |r: u32| {
                            let mut c = Vec::with_capacity(axes.len());
                            t.coords_into(crate::NodeId(r), &mut c);
                            cut.contains(axes, &c)
                        };
                        let per = g
                            .cut_links(classes, side)
                            .into_iter()
                            .map(|x| x as f64)
                            .collect();
                        (per, "minimum axis-aligned staircase cut of the fault-free network, faulty links removed")
                    }
                }
            }
            Topology::Dragonfly(d) => {
                let g = graph.expect("dragonfly metrics use the router graph");
                let per = g
                    .cut_links(classes, |r| d.bisection_side(r))
                    .into_iter()
                    .map(|x| x as f64)
                    .collect();
                (
                    per,
                    "standard cut: first half of the routers (whole groups)",
                )
            }
            Topology::FatTree(f) => {
                let mut per = vec![0.0; classes.max(1)];
                per[classes.saturating_sub(1)] = f.bisection_links();
                (per, "standard cut: top-level subtrees split in halves")
            }
        }
    }
}

fn shape_label(t: &Topology) -> String {
    match t {
        Topology::Torus(t) | Topology::Tofu(t) => t.shape_label(),
        Topology::Dragonfly(d) => format!(
            "{} groups × {} routers × {} nodes",
            d.groups,
            d.routers_per_group(),
            d.nodes_per_router
        ),
        Topology::FatTree(f) => {
            let m: Vec<String> = f.down.iter().map(|x| x.to_string()).collect();
            let w: Vec<String> = f.up.iter().map(|x| x.to_string()).collect();
            let rails = if f.rails > 1 {
                format!(" × {} rails", f.rails)
            } else {
                String::new()
            };
            format!(
                "XGFT({}; {}; {}){}",
                f.levels(),
                m.join(","),
                w.join(","),
                rails
            )
        }
    }
}
