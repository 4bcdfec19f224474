//! A network: one topology with its link rates, node interfaces and faults.
//! This is what the metrics (and later the engines) are computed on.

use crate::dragonfly::Dragonfly;
use crate::fattree::FatTree;
use crate::graph::RouterGraph;
use crate::torus::Torus;
use serde::Serialize;
use std::collections::BTreeMap;

/// The topology families tofusim knows.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Topology {
    /// Torus or mesh (per-axis wrap) of any dimension.
    Torus(Torus),
    /// Tofu 6D: a torus with the fixed ABC = 2×3×2 group ([`crate::tofu`]).
    Tofu(Torus),
    Dragonfly(Dragonfly),
    FatTree(FatTree),
}

impl Topology {
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Torus(t) if t.axes().iter().all(|a| !a.wrap || a.length == 1) => "mesh",
            Self::Torus(_) => "torus",
            Self::Tofu(_) => "tofu",
            Self::Dragonfly(_) => "dragonfly",
            Self::FatTree(_) => "fattree",
        }
    }

    pub fn node_count(&self) -> u64 {
        match self {
            Self::Torus(t) | Self::Tofu(t) => t.node_count(),
            Self::Dragonfly(d) => d.node_count(),
            Self::FatTree(f) => f.node_count(),
        }
    }

    pub fn router_count(&self) -> u64 {
        match self {
            Self::Torus(t) | Self::Tofu(t) => t.node_count(),
            Self::Dragonfly(d) => d.router_count(),
            Self::FatTree(f) => f.switch_count(),
        }
    }

    /// Names of the link classes, in the order of per-class vectors.
    pub fn class_names(&self) -> Vec<String> {
        match self {
            Self::Torus(t) | Self::Tofu(t) => t.axes().iter().map(|a| a.name.clone()).collect(),
            Self::Dragonfly(d) => d.class_names().iter().map(|s| s.to_string()).collect(),
            Self::FatTree(f) => (1..f.levels())
                .map(|l| format!("level-{}-{}", l, l + 1))
                .collect(),
        }
    }

    /// The router graph (one rail of a fat-tree; each torus node is a router).
    pub fn router_graph(&self) -> RouterGraph {
        match self {
            Self::Torus(t) | Self::Tofu(t) => {
                let mut b = crate::graph::GraphBuilder::new(t.node_count() as usize, 1);
                for v in 0..t.node_count() as u32 {
                    for (p, port) in t.ports().iter().enumerate() {
                        if let Some(w) = t.neighbor(crate::NodeId(v), crate::PortId(p as u8)) {
                            // Each link once: from its `+`/single end. A mesh pair's
                            // `-` port and a 2-ring's second link come from the other ports.
                            let from_plus = matches!(port.direction, crate::Direction::Plus);
                            let single = matches!(port.direction, crate::Direction::Single);
                            if from_plus || (single && v < w.0) {
                                b.link(v, w.0, port.axis as u8);
                            }
                        }
                    }
                }
                b.build()
            }
            Self::Dragonfly(d) => d.router_graph(),
            Self::FatTree(f) => f.router_graph(),
        }
    }
}

/// What a node's network interfaces can inject.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeInterface {
    /// Injection engines (Tofu TNIs); each injects at `interface_Bps`.
    pub interfaces: u32,
    pub interface_Bps: f64,
    /// A host-side limit on the node's total injection (CPU–interface bus), if any.
    pub host_limit_Bps: Option<f64>,
}

impl NodeInterface {
    pub fn per_node_Bps(&self) -> f64 {
        let raw = self.interfaces as f64 * self.interface_Bps;
        self.host_limit_Bps.map_or(raw, |l| raw.min(l))
    }
}

/// Failed nodes and links. Nodes are node ids; links are router pairs
/// (each entry removes one link, so one of a 2-ring's parallel pair).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Faults {
    pub nodes: Vec<u32>,
    pub links: Vec<(u32, u32)>,
    /// The port of each link at its first router, where the input named
    /// one (tori and Tofu: a 2-ring's + and − ports are parallel links to
    /// the same neighbour); `None`: any remaining link between the pair.
    pub link_ports: Vec<Option<u8>>,
}

impl Faults {
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.links.is_empty()
    }
}

/// A topology with its rates, interfaces and faults.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Network {
    pub topology: Topology,
    /// Link rate per direction, per class (same order as `class_names`).
    pub link_Bps: Vec<f64>,
    pub nic: NodeInterface,
    pub faults: Faults,
}

impl Network {
    /// Router graph with the faults applied.
    pub fn faulty_router_graph(&self) -> RouterGraph {
        let mut g = self.topology.router_graph();
        for &n in &self.faults.nodes {
            match &self.topology {
                Topology::Torus(_) | Topology::Tofu(_) => g.remove_router(n),
                Topology::Dragonfly(d) => g.remove_node_at(n / d.nodes_per_router),
                Topology::FatTree(f) => g.remove_node_at(n / f.down[0]),
            }
        }
        for &(a, b) in &self.faults.links {
            g.remove_link(a, b);
        }
        g
    }

    /// Per-node injection rate.
    pub fn injection_per_node_Bps(&self) -> f64 {
        self.nic.per_node_Bps()
    }

    pub fn class_rates(&self) -> BTreeMap<String, f64> {
        self.topology
            .class_names()
            .into_iter()
            .zip(self.link_Bps.iter().copied())
            .collect()
    }
}
