//! The Tofu 6D mesh/torus (K computer, FX10, FX100, Fugaku).
//!
//! `(X, Y, Z) × (A, B, C)` with `A × B × C = 2 × 3 × 2` always: A and C are
//! length-2 meshes with a **single port** each, B is a ring of 3 with `b+`
//! and `b−`. Ten ports per node: `x+ x- y+ y- z+ z- a b+ b- c`. X, Y and Z
//! have configurable lengths and wrap. Default routing is dimension order
//! X → Y → Z → A → C → B ([S:000]).

use crate::axis::Axis;
use crate::torus::Torus;

/// Lengths of the A, B, C axes of every Tofu generation.
pub const ABC: [u32; 3] = [2, 3, 2];

/// Axis indices in Tofu routing order: X, Y, Z, A, C, B.
pub const ROUTING_ORDER: [usize; 6] = [0, 1, 2, 3, 5, 4];

/// Builds the 6D Tofu torus from its X, Y and Z axes (named x, y, z).
pub fn tofu_torus(xyz: [Axis; 3]) -> Torus {
    let [x, y, z] = xyz;
    Torus::new(vec![
        x,
        y,
        z,
        Axis::pair("a"),
        Axis::ring("b", 3),
        Axis::pair("c"),
    ])
}

/// True when `t` has the Tofu ABC axes (lengths 2 × 3 × 2, A and C single-port).
pub fn is_tofu(t: &Torus) -> bool {
    let a = t.axes();
    a.len() == 6 && a[3] == Axis::pair("a") && a[4] == Axis::ring("b", 3) && a[5] == Axis::pair("c")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_ports_in_paper_order() {
        let t = tofu_torus([Axis::ring("x", 4), Axis::path("y", 3), Axis::ring("z", 3)]);
        let names: Vec<&str> = t.ports().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["x+", "x-", "y+", "y-", "z+", "z-", "a", "b+", "b-", "c"]
        );
        assert_eq!(t.max_degree(), 10);
        assert!(is_tofu(&t));
    }

    #[test]
    fn k_computer_counts() {
        let t = tofu_torus([
            Axis::ring("x", 24),
            Axis::path("y", 18),
            Axis::ring("z", 16),
        ]);
        assert_eq!(t.node_count(), 82_944);
        assert_eq!(
            t.links_per_axis(),
            vec![82_944, 78_336, 82_944, 41_472, 82_944, 41_472]
        );
        assert_eq!(t.diameter(), 12 + 17 + 8 + 1 + 1 + 1);
    }

    #[test]
    fn abc_group_is_twelve_nodes_within_three_hops() {
        let t = tofu_torus([Axis::ring("x", 1), Axis::ring("y", 1), Axis::ring("z", 1)]);
        assert_eq!(t.node_count(), 12);
        assert_eq!(t.diameter(), 3);
    }
}
