//! Torus and mesh networks with any number of axes, each with its own length
//! and wrap. Every node is a router (a direct network). Tofu's 6D network is
//! a [`Torus`] whose A and C axes are single-port pairs and whose B axis is a
//! ring of 3 (see the `tofu` module).
//!
//! Node ids are row-major with the **first axis fastest**:
//! `id = c0 + L0·(c1 + L1·(c2 + …))`, so the default rank order of a job is
//! the "x-y order" of the RMATT paper.

use crate::axis::{Axis, Direction};
use crate::ids::{NodeId, PortId};
use serde::Serialize;

/// A network port of a torus node: which axis, which direction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    pub axis: usize,
    pub direction: Direction,
    /// Name as in the papers: `x+`, `y-`, `a`, `b+`…
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Torus {
    axes: Vec<Axis>,
    /// `strides[i]` = product of the lengths of axes before `i`.
    strides: Vec<u64>,
    ports: Vec<Port>,
}

/// Largest node count we accept (ids are `u32`).
pub const MAX_NODES: u64 = 1 << 31;

impl Torus {
    /// Builds a torus/mesh. Panics on an empty axis list or a zero length;
    /// configuration code validates first and reports the error properly.
    pub fn new(axes: Vec<Axis>) -> Self {
        assert!(!axes.is_empty(), "a torus needs at least one axis");
        assert!(
            axes.iter().all(|a| a.length >= 1),
            "axis lengths must be ≥ 1"
        );
        let mut strides = Vec::with_capacity(axes.len());
        let mut s = 1u64;
        for a in &axes {
            strides.push(s);
            s *= a.length as u64;
        }
        assert!(s <= MAX_NODES, "too many nodes");
        let mut ports = Vec::new();
        for (i, a) in axes.iter().enumerate() {
            for &d in a.directions() {
                let suffix = match d {
                    Direction::Plus => "+",
                    Direction::Minus => "-",
                    Direction::Single => "",
                };
                ports.push(Port {
                    axis: i,
                    direction: d,
                    name: format!("{}{}", a.name, suffix),
                });
            }
        }
        Self {
            axes,
            strides,
            ports,
        }
    }

    /// A torus with every axis wrapping, axes named x, y, z, then d3, d4…
    pub fn with_lengths(lengths: &[u32], wrap: &[bool]) -> Self {
        let axes = lengths
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let name = default_axis_name(i);
                let w = wrap.get(i).copied().unwrap_or(true);
                if w {
                    Axis::ring(&name, l)
                } else {
                    Axis::path(&name, l)
                }
            })
            .collect();
        Self::new(axes)
    }

    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    pub fn node_count(&self) -> u64 {
        self.axes.iter().map(|a| a.length as u64).product()
    }

    pub fn lengths(&self) -> Vec<u32> {
        self.axes.iter().map(|a| a.length).collect()
    }

    /// Coordinates of a node, axis 0 first.
    pub fn coords(&self, node: NodeId) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.axes.len());
        self.coords_into(node, &mut out);
        out
    }

    /// Coordinates of a node written into `out` (no allocation if it has room).
    pub fn coords_into(&self, node: NodeId, out: &mut Vec<u32>) {
        out.clear();
        let mut rest = node.0 as u64;
        for a in &self.axes {
            let l = a.length as u64;
            out.push((rest % l) as u32);
            rest /= l;
        }
    }

    /// Coordinate of `node` on one axis.
    pub fn coord(&self, node: NodeId, axis: usize) -> u32 {
        ((node.0 as u64 / self.strides[axis]) % self.axes[axis].length as u64) as u32
    }

    pub fn node_id(&self, coords: &[u32]) -> NodeId {
        debug_assert_eq!(coords.len(), self.axes.len());
        let id: u64 = coords
            .iter()
            .zip(&self.strides)
            .map(|(&c, &s)| c as u64 * s)
            .sum();
        NodeId(id as u32)
    }

    /// The node reached through `port`, or `None` where the port is unconnected
    /// (mesh boundary).
    pub fn neighbor(&self, node: NodeId, port: PortId) -> Option<NodeId> {
        let p = &self.ports[port.0 as usize];
        let axis = &self.axes[p.axis];
        let c = self.coord(node, p.axis);
        axis.step(c, p.direction).map(|nc| {
            let id = node.0 as i64 + (nc as i64 - c as i64) * self.strides[p.axis] as i64;
            NodeId(id as u32)
        })
    }

    /// Neighbour table: `table[node * ports + port]`, `u32::MAX` where unconnected.
    pub fn neighbor_table(&self) -> Vec<u32> {
        let n = self.node_count() as usize;
        let np = self.ports.len();
        let mut t = vec![u32::MAX; n * np];
        for v in 0..n {
            for p in 0..np {
                if let Some(w) = self.neighbor(NodeId(v as u32), PortId(p as u8)) {
                    t[v * np + p] = w.0;
                }
            }
        }
        t
    }

    /// Minimal hop count between two nodes (sum of per-axis distances).
    pub fn distance(&self, a: NodeId, b: NodeId) -> u32 {
        (0..self.axes.len())
            .map(|i| self.axes[i].distance(self.coord(a, i), self.coord(b, i)))
            .sum()
    }

    /// Links (bidirectional, counting parallel links) along each axis.
    pub fn links_per_axis(&self) -> Vec<u64> {
        let n = self.node_count();
        self.axes
            .iter()
            .map(|a| n / a.length as u64 * a.links_per_line())
            .collect()
    }

    pub fn link_count(&self) -> u64 {
        self.links_per_axis().iter().sum()
    }

    pub fn diameter(&self) -> u32 {
        self.axes.iter().map(Axis::diameter).sum()
    }

    /// Exact mean minimal hop count over distinct ordered node pairs,
    /// from the per-axis closed forms (no sampling).
    pub fn average_hops(&self) -> f64 {
        let n = self.node_count();
        if n < 2 {
            return 0.0;
        }
        // Σ over all ordered pairs = Σ_axis (N/L)² · S_axis, where S_axis sums
        // distances over ordered coordinate pairs on that axis.
        let total: f64 = self
            .axes
            .iter()
            .map(|a| {
                let other = (n / a.length as u64) as f64;
                other * other * a.distance_sum_ordered_pairs() as f64
            })
            .sum();
        total / (n as f64 * (n - 1) as f64)
    }

    /// Maximum number of connected network ports of a node.
    pub fn max_degree(&self) -> u32 {
        self.axes.iter().map(Axis::max_degree).sum()
    }

    /// Minimum number of connected ports over all nodes (mesh corners).
    pub fn min_degree(&self) -> u32 {
        self.axes.iter().map(Axis::min_degree).sum()
    }

    /// `x24 y18m z16`-style description.
    pub fn shape_label(&self) -> String {
        self.axes
            .iter()
            .map(Axis::label)
            .collect::<Vec<_>>()
            .join("x")
    }
}

pub fn default_axis_name(i: usize) -> String {
    match i {
        0 => "x".into(),
        1 => "y".into(),
        2 => "z".into(),
        _ => format!("d{i}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axis::PortStyle;

    fn all_tori() -> Vec<Torus> {
        vec![
            Torus::with_lengths(&[4, 4, 4], &[true, true, true]),
            Torus::with_lengths(&[3, 5], &[true, false]),
            Torus::with_lengths(&[2, 3, 1], &[true, true, true]),
            Torus::with_lengths(&[2, 2], &[false, true]),
            Torus::new(vec![
                Axis::ring("x", 3),
                Axis::pair("a"),
                Axis::ring("b", 3),
                Axis::pair("c"),
            ]),
        ]
    }

    #[test]
    fn id_coordinate_round_trip() {
        for t in all_tori() {
            for v in 0..t.node_count() as u32 {
                let c = t.coords(NodeId(v));
                assert_eq!(t.node_id(&c), NodeId(v));
                for (i, &ci) in c.iter().enumerate() {
                    assert_eq!(t.coord(NodeId(v), i), ci);
                }
            }
        }
    }

    #[test]
    fn every_link_is_symmetric() {
        // For every port p of v reaching w there is a port of w reaching v on
        // the same axis, and parallel links pair up one to one.
        for t in all_tori() {
            let np = t.ports().len();
            let table = t.neighbor_table();
            for v in 0..t.node_count() as usize {
                for p in 0..np {
                    let w = table[v * np + p];
                    if w == u32::MAX {
                        continue;
                    }
                    let axis = t.ports()[p].axis;
                    let back_same_axis = (0..np)
                        .filter(|&q| {
                            t.ports()[q].axis == axis && table[w as usize * np + q] == v as u32
                        })
                        .count();
                    let fwd_same_axis = (0..np)
                        .filter(|&q| t.ports()[q].axis == axis && table[v * np + q] == w)
                        .count();
                    assert_eq!(
                        back_same_axis,
                        fwd_same_axis,
                        "{} v={v} p={p}",
                        t.shape_label()
                    );
                }
            }
        }
    }

    #[test]
    fn link_count_matches_port_count() {
        for t in all_tori() {
            let table = t.neighbor_table();
            let ends = table.iter().filter(|&&w| w != u32::MAX).count() as u64;
            assert_eq!(ends, 2 * t.link_count(), "{}", t.shape_label());
        }
    }

    #[test]
    fn degrees() {
        let t = Torus::with_lengths(&[4, 4, 4], &[true, true, true]);
        assert_eq!(t.max_degree(), 6);
        assert_eq!(t.min_degree(), 6);
        let m = Torus::with_lengths(&[4, 4], &[false, false]);
        assert_eq!(m.max_degree(), 4);
        assert_eq!(m.min_degree(), 2);
        let p = Torus::new(vec![Axis::pair("a"), Axis::ring("b", 3)]);
        assert_eq!(p.max_degree(), 3);
        assert_eq!(p.min_degree(), 3);
        assert_eq!(p.ports()[0].name, "a");
        assert_eq!(Axis::pair("a").ports, PortStyle::Single);
    }
}
