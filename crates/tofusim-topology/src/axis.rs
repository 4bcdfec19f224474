//! One axis of a torus or mesh: its length, whether it wraps, and how its
//! ports are laid out.
//!
//! What short axes mean (this is the contract the rest of tofusim relies on):
//! - **length 1**: a degenerate axis. No links, no ports; it only exists so a
//!   shape like `8x8x1` keeps three coordinates.
//! - **length 2, `wrap = true`** (e.g. Blue Gene/Q's E axis): the `+` and `−`
//!   ports of a node both reach the *same* neighbour, over two parallel links.
//!   The node has one neighbour on the axis but two links to it, and both
//!   count in link totals and bisection.
//! - **length 2, `wrap = false`**: one link between the two nodes. With
//!   [`PortStyle::Single`] (Tofu's A and C axes) each node has one port for
//!   the axis; with [`PortStyle::PlusMinus`] each node has the two ports of
//!   a mesh, one of which is unconnected.
//! - **length ≥ 3, `wrap = true`**: a ring, two neighbours over two links.
//! - **`wrap = false`**: a path (mesh); the end nodes have one neighbour.

use serde::Serialize;

/// How a node's ports on one axis are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PortStyle {
    /// Two ports, `+` and `−` (the usual torus/mesh layout).
    PlusMinus,
    /// One port to the only other node (Tofu A and C: mesh axes of length 2).
    Single,
}

/// A direction along an axis, as seen from the sending node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Plus,
    Minus,
    /// The single port of a [`PortStyle::Single`] axis.
    Single,
}

/// One axis of a torus or mesh.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Axis {
    pub name: String,
    pub length: u32,
    pub wrap: bool,
    pub ports: PortStyle,
}

impl Axis {
    pub fn ring(name: &str, length: u32) -> Self {
        Self {
            name: name.to_string(),
            length,
            wrap: true,
            ports: PortStyle::PlusMinus,
        }
    }

    pub fn path(name: &str, length: u32) -> Self {
        Self {
            name: name.to_string(),
            length,
            wrap: false,
            ports: PortStyle::PlusMinus,
        }
    }

    /// A length-2 mesh axis with one port per node (Tofu A, C).
    pub fn pair(name: &str) -> Self {
        Self {
            name: name.to_string(),
            length: 2,
            wrap: false,
            ports: PortStyle::Single,
        }
    }

    /// True when the axis is a torus ring of length ≥ 2 (wrap links exist).
    pub fn is_ring(&self) -> bool {
        self.wrap && self.length >= 2
    }

    /// Directions of the ports this axis gives each node (connected or not).
    pub fn directions(&self) -> &'static [Direction] {
        if self.length <= 1 {
            &[]
        } else {
            match self.ports {
                PortStyle::PlusMinus => &[Direction::Plus, Direction::Minus],
                PortStyle::Single => &[Direction::Single],
            }
        }
    }

    /// Coordinate reached from `c` by one hop in direction `dir`, if a link exists.
    pub fn step(&self, c: u32, dir: Direction) -> Option<u32> {
        let l = self.length;
        if l <= 1 {
            return None;
        }
        match dir {
            Direction::Single => Some(1 - c.min(1)),
            Direction::Plus if c + 1 < l => Some(c + 1),
            Direction::Plus if self.wrap => Some(0),
            Direction::Minus if c > 0 => Some(c - 1),
            Direction::Minus if self.wrap => Some(l - 1),
            _ => None,
        }
    }

    /// Links per line of nodes along this axis (one line = `length` nodes).
    /// A 2-ring has two parallel links; a path of length L has L−1.
    pub fn links_per_line(&self) -> u64 {
        let l = self.length as u64;
        match (l, self.wrap) {
            (0 | 1, _) => 0,
            (2, true) => 2,
            (_, true) => l,
            (_, false) => l - 1,
        }
    }

    /// Parallel links between two adjacent coordinates (2 only on a 2-ring).
    pub fn multiplicity(&self) -> u64 {
        if self.wrap && self.length == 2 {
            2
        } else {
            1
        }
    }

    /// Minimal hop distance between coordinates `a` and `b` along this axis.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        let d = a.abs_diff(b);
        if self.wrap {
            d.min(self.length - d)
        } else {
            d
        }
    }

    /// Largest minimal distance on this axis.
    pub fn diameter(&self) -> u32 {
        if self.length <= 1 {
            0
        } else if self.wrap {
            self.length / 2
        } else {
            self.length - 1
        }
    }

    /// Sum of minimal distances over all ordered coordinate pairs (a, b),
    /// closed form: ring L even → L³/4, ring L odd → L(L²−1)/4, path → L(L²−1)/3.
    pub fn distance_sum_ordered_pairs(&self) -> u64 {
        let l = self.length as u64;
        if l <= 1 {
            0
        } else if self.wrap {
            if l.is_multiple_of(2) {
                l * l * l / 4
            } else {
                l * (l * l - 1) / 4
            }
        } else {
            l * (l * l - 1) / 3
        }
    }

    /// Connected ports of a node at coordinate `c` on this axis.
    pub fn degree_at(&self, c: u32) -> u32 {
        self.directions()
            .iter()
            .filter(|&&d| self.step(c, d).is_some())
            .count() as u32
    }

    /// Maximum number of connected ports a node has on this axis.
    pub fn max_degree(&self) -> u32 {
        (0..self.length)
            .map(|c| self.degree_at(c))
            .max()
            .unwrap_or(0)
    }

    /// Minimum number of connected ports a node has on this axis.
    pub fn min_degree(&self) -> u32 {
        (0..self.length)
            .map(|c| self.degree_at(c))
            .min()
            .unwrap_or(0)
    }

    /// Short text for tables: `24` for a ring, `18m` for a mesh.
    pub fn label(&self) -> String {
        if self.wrap || self.length <= 1 {
            self.length.to_string()
        } else {
            format!("{}m", self.length)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_sum(a: &Axis) -> u64 {
        let mut s = 0;
        for i in 0..a.length {
            for j in 0..a.length {
                s += a.distance(i, j) as u64;
            }
        }
        s
    }

    #[test]
    fn closed_form_distance_sums_match_brute_force() {
        for l in 1..40 {
            for wrap in [true, false] {
                let a = Axis {
                    name: "x".into(),
                    length: l,
                    wrap,
                    ports: PortStyle::PlusMinus,
                };
                assert_eq!(
                    a.distance_sum_ordered_pairs(),
                    brute_sum(&a),
                    "L={l} wrap={wrap}"
                );
            }
        }
    }

    #[test]
    fn length_one_axis_has_no_links_or_ports() {
        let a = Axis::ring("x", 1);
        assert!(a.directions().is_empty());
        assert_eq!(a.links_per_line(), 0);
        assert_eq!(a.diameter(), 0);
        assert_eq!(a.step(0, Direction::Plus), None);
    }

    #[test]
    fn length_two_ring_reaches_one_neighbour_over_two_links() {
        let a = Axis::ring("e", 2);
        assert_eq!(a.step(0, Direction::Plus), Some(1));
        assert_eq!(a.step(0, Direction::Minus), Some(1));
        assert_eq!(a.step(1, Direction::Plus), Some(0));
        assert_eq!(a.links_per_line(), 2);
        assert_eq!(a.multiplicity(), 2);
        assert_eq!(a.diameter(), 1);
    }

    #[test]
    fn pair_axis_has_one_port_and_one_link() {
        let a = Axis::pair("a");
        assert_eq!(a.directions(), &[Direction::Single]);
        assert_eq!(a.step(0, Direction::Single), Some(1));
        assert_eq!(a.step(1, Direction::Single), Some(0));
        assert_eq!(a.links_per_line(), 1);
        assert_eq!(a.max_degree(), 1);
    }

    #[test]
    fn mesh_ends_have_one_neighbour() {
        let a = Axis::path("y", 4);
        assert_eq!(a.step(3, Direction::Plus), None);
        assert_eq!(a.step(0, Direction::Minus), None);
        assert_eq!(a.links_per_line(), 3);
        assert_eq!(a.diameter(), 3);
    }
}
