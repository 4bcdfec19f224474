//! Balanced minimum cuts of tori and meshes over axis-aligned cuts.
//!
//! A cut is a *staircase*: the first `r = ⌊N/2⌋` nodes in a lexicographic
//! order of the coordinates whose most significant axis is `order[0]`, then
//! `order[1]`, … When `N/L` divides `r` this is a straight cut perpendicular
//! to `order[0]`; otherwise the partial plane is cut the same way
//! recursively (this is how odd axes are bisected). The minimum is taken
//! over every axis order. Links are counted once per link (a 2-ring's two
//! parallel links count twice); bandwidth follows [S:000]'s table: links
//! cut × 2 directions × link rate.

use crate::axis::Axis;

/// The chosen cut: the lexicographic axis order and the side size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaircaseCut {
    /// Axes from most to least significant; axes not listed follow in index order.
    pub order: Vec<usize>,
    /// Nodes on the first side.
    pub side_nodes: u64,
    /// Links crossing the cut.
    pub links: u64,
}

impl StaircaseCut {
    /// True when the node at `coords` lies on the first side.
    pub fn contains(&self, axes: &[Axis], coords: &[u32]) -> bool {
        let mut full: Vec<usize> = self.order.clone();
        full.extend((0..axes.len()).filter(|i| !self.order.contains(i)));
        let mut rank = 0u64;
        for &i in &full {
            rank = rank * axes[i].length as u64 + coords[i] as u64;
        }
        rank < self.side_nodes
    }
}

/// Weight of the links an axis contributes to a cut between planes:
/// 2 for a ring (two boundaries, or a 2-ring's parallel pair), 1 for a path.
fn boundary_weight(a: &Axis) -> u64 {
    if a.length <= 1 {
        0
    } else if a.wrap {
        2
    } else {
        1
    }
}

/// Minimum staircase cut separating the first `r` nodes (lexicographic) of
/// the sub-torus spanned by `avail`.
fn best_prefix(axes: &[Axis], avail: &[usize], r: u64) -> (u64, Vec<usize>) {
    let n_sub: u64 = avail.iter().map(|&i| axes[i].length as u64).product();
    if r == 0 || r >= n_sub {
        return (0, Vec::new());
    }
    let mut best: Option<(u64, Vec<usize>)> = None;
    for (k, &j) in avail.iter().enumerate() {
        let a = &axes[j];
        let l = a.length as u64;
        if l <= 1 {
            continue;
        }
        let plane = n_sub / l;
        let (m, q) = (r / plane, r % plane);
        // Nested planes: |S ∩ plane k| is P for k < m, q at m, 0 after, so the
        // links along this axis that cross are (s_0 − s_{L−1}) per boundary.
        let s0 = if m >= 1 { plane } else { q };
        let s_last = if m == l - 1 { q } else { 0 };
        let mut cost = (s0 - s_last) * boundary_weight(a);
        let mut order = vec![j];
        if q > 0 {
            let rest: Vec<usize> = avail
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != k)
                .map(|(_, &x)| x)
                .collect();
            let (c, o) = best_prefix(axes, &rest, q);
            cost += c;
            order.extend(o);
        }
        if best.as_ref().is_none_or(|b| cost < b.0) {
            best = Some((cost, order));
        }
    }
    best.unwrap_or((0, Vec::new()))
}

/// Minimum balanced staircase cut (side of ⌊N/2⌋ nodes).
pub fn min_bisection(axes: &[Axis]) -> StaircaseCut {
    let n: u64 = axes.iter().map(|a| a.length as u64).product();
    let avail: Vec<usize> = (0..axes.len()).collect();
    let (links, order) = best_prefix(axes, &avail, n / 2);
    StaircaseCut {
        order,
        side_nodes: n / 2,
        links,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torus::Torus;

    #[test]
    fn k_computer_with_y_mesh_cuts_y() {
        let t = crate::tofu::tofu_torus([
            Axis::ring("x", 24),
            Axis::path("y", 18),
            Axis::ring("z", 16),
        ]);
        let c = min_bisection(t.axes());
        assert_eq!(c.links, 4608);
        assert_eq!(c.order, vec![1]);
    }

    #[test]
    fn k_computer_all_tori_cuts_x() {
        let t = crate::tofu::tofu_torus([
            Axis::ring("x", 24),
            Axis::ring("y", 18),
            Axis::ring("z", 16),
        ]);
        assert_eq!(min_bisection(t.axes()).links, 6912);
    }

    #[test]
    fn bgq_sequoia() {
        let t = Torus::with_lengths(&[16, 16, 12, 16, 2], &[true; 5]);
        assert_eq!(min_bisection(t.axes()).links, 12288);
    }

    #[test]
    fn odd_ring_uses_a_staircase() {
        // 9x9x2 torus: the 2-ring cut costs N = 162 links; the staircase across
        // a 9-ring costs 2·18 + the cut of half a 9x2 plane.
        let t = Torus::with_lengths(&[9, 9, 2], &[true; 3]);
        let c = min_bisection(t.axes());
        assert!(c.links < 162, "{c:?}");
        // 36 links across the 9-ring, plus 6 to split the 9x2 plane 8+1.
        assert_eq!(c.links, 2 * 18 + 6);
    }

    #[test]
    fn contains_gives_the_side_size() {
        let t = Torus::with_lengths(&[5, 3, 2], &[true, false, true]);
        let c = min_bisection(t.axes());
        let inside = (0..t.node_count() as u32)
            .filter(|&v| c.contains(t.axes(), &t.coords(crate::NodeId(v))))
            .count();
        assert_eq!(inside as u64, c.side_nodes);
    }
}
