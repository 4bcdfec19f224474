//! Communicators shaped as a 3D torus, and the triple trinary trees of the
//! Tofu Bcast/Reduce/Trinaryx3 algorithms.
//!
//! The trees are a **reconstruction** (DOMAIN.md §3.1(a), [RECON]): the
//! sources state their properties — three spanning trees of out-degree at
//! most 3 over nearest-neighbour arcs, pairwise arc-disjoint, one TNI each
//! — but not Fujitsu's exact shapes. The construction below meets every
//! stated property on any torus whose axes are all at least 3 long; the
//! tests check them.

use crate::schedule::Rank;

/// A communicator laid out as an `lengths[0] × lengths[1] × lengths[2]`
/// torus; rank = x + Lx·(y + Ly·z).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub lengths: [u32; 3],
}

impl Grid {
    pub fn new(lengths: [u32; 3]) -> Self {
        Self { lengths }
    }

    /// A grid from a shape of one to three axes (missing axes are 1).
    pub fn from_shape(shape: &[u32]) -> Option<Self> {
        if shape.is_empty() || shape.len() > 3 || shape.contains(&0) {
            return None;
        }
        let mut l = [1u32; 3];
        l[..shape.len()].copy_from_slice(shape);
        Some(Self::new(l))
    }

    pub fn ranks(&self) -> u32 {
        self.lengths.iter().product()
    }

    pub fn coords(&self, r: Rank) -> [u32; 3] {
        let [lx, ly, _] = self.lengths;
        [r % lx, (r / lx) % ly, r / (lx * ly)]
    }

    pub fn rank(&self, c: [u32; 3]) -> Rank {
        let [lx, ly, _] = self.lengths;
        c[0] + lx * (c[1] + ly * c[2])
    }

    /// The rank `delta` steps along `axis` (wrapping).
    pub fn shift(&self, r: Rank, axis: usize, delta: i64) -> Rank {
        let mut c = self.coords(r);
        let l = self.lengths[axis] as i64;
        c[axis] = (c[axis] as i64 + delta).rem_euclid(l) as u32;
        self.rank(c)
    }

    /// Torus distance between two ranks, in hops.
    pub fn hops(&self, a: Rank, b: Rank) -> u32 {
        let (ca, cb) = (self.coords(a), self.coords(b));
        (0..3)
            .map(|k| {
                let d = ca[k].abs_diff(cb[k]);
                d.min(self.lengths[k] - d)
            })
            .sum()
    }
}

/// A spanning tree given by each rank's parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub root: Rank,
    pub parent: Vec<Option<Rank>>,
    pub children: Vec<Vec<Rank>>,
}

impl Tree {
    fn from_parents(root: Rank, parent: Vec<Option<Rank>>) -> Self {
        let mut children = vec![Vec::new(); parent.len()];
        for (r, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p as usize].push(r as Rank);
            }
        }
        Self {
            root,
            parent,
            children,
        }
    }

    /// Ranks in an order where every parent comes before its children.
    pub fn top_down(&self) -> Vec<Rank> {
        let mut out = vec![self.root];
        let mut k = 0;
        while k < out.len() {
            out.extend_from_slice(&self.children[out[k] as usize]);
            k += 1;
        }
        out
    }

    /// Longest root-to-leaf path, in arcs.
    pub fn depth(&self) -> u32 {
        let mut d = vec![0u32; self.parent.len()];
        let mut best = 0;
        for r in self.top_down() {
            if let Some(p) = self.parent[r as usize] {
                d[r as usize] = d[p as usize] + 1;
                best = best.max(d[r as usize]);
            }
        }
        best
    }
}

/// Why a grid cannot carry the three trees.
pub fn trinary_unsupported(grid: &Grid) -> Option<String> {
    if grid.lengths.iter().any(|&l| l < 3) {
        Some(format!(
            "the triple trinary trees need a 3D torus with every axis at least 3 long, got {}x{}x{}",
            grid.lengths[0], grid.lengths[1], grid.lengths[2]
        ))
    } else {
        None
    }
}

/// The three arc-disjoint trinary spanning trees rooted at `root`
/// (DOMAIN.md §3.1(a)). Requires every axis ≥ 3 ([`trinary_unsupported`]).
pub fn trinary_trees(grid: &Grid, root: Rank) -> [Tree; 3] {
    let [lx, ly, lz] = grid.lengths;
    let [x0, y0, z0] = grid.coords(root);
    let n = grid.ranks() as usize;
    // Offsets from the root, in 0..L.
    let off = |c: [u32; 3]| {
        [
            (c[0] + lx - x0) % lx,
            (c[1] + ly - y0) % ly,
            (c[2] + lz - z0) % lz,
        ]
    };
    let at = |dx: i64, dy: i64, dz: i64| {
        let c = [
            (x0 as i64 + dx).rem_euclid(lx as i64) as u32,
            (y0 as i64 + dy).rem_euclid(ly as i64) as u32,
            (z0 as i64 + dz).rem_euclid(lz as i64) as u32,
        ];
        grid.rank(c)
    };
    let mut t0 = vec![None; n];
    let mut t1 = vec![None; n];
    let mut t2 = vec![None; n];
    for r in 0..n as Rank {
        if r == root {
            continue;
        }
        let [dx, dy, dz] = off(grid.coords(r)).map(|v| v as i64);
        // Offsets measured backwards (the "−" direction), 0..L.
        let (by, bz) = ((ly as i64 - dy) % ly as i64, (lz as i64 - dz) % lz as i64);
        // T0: X+ along the root's row, Y+ within the root's plane, Z+ everywhere.
        t0[r as usize] = Some(if dz > 0 {
            at(dx, dy, dz - 1)
        } else if dy > 0 {
            at(dx, dy - 1, 0)
        } else {
            at(dx - 1, 0, 0)
        });
        // T1: root →Z− (x0,y0,z0−1); Y+ chain there; Z− chains in plane x0; X− fill.
        t1[r as usize] = Some(if dx != 0 {
            at(dx + 1, dy, dz)
        } else if bz == 1 {
            if dy == 0 {
                root
            } else {
                at(0, dy - 1, -1)
            }
        } else {
            at(0, dy, dz + 1)
        });
        // T2: root →Y− s=(x0,y0−1,z0); X+ chain along (·,y0−1,z0); Z− chains
        // in plane y0−1 for x ≠ x0; column x0 of that plane fed by X+ from
        // x0−1; Y− chains from plane y0−1 (stopping before the root).
        t2[r as usize] = Some(if by != 1 {
            at(dx, dy + 1, dz)
        } else if dz == 0 {
            if dx == 0 {
                root
            } else {
                at(dx - 1, -1, 0)
            }
        } else if dx != 0 {
            at(dx, -1, dz + 1)
        } else {
            at(-1, -1, dz)
        });
    }
    [
        Tree::from_parents(root, t0),
        Tree::from_parents(root, t1),
        Tree::from_parents(root, t2),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn check(lengths: [u32; 3], root: Rank) {
        let g = Grid::new(lengths);
        let trees = trinary_trees(&g, root);
        let mut arcs: Vec<HashSet<(Rank, Rank)>> = Vec::new();
        for (i, t) in trees.iter().enumerate() {
            let order = t.top_down();
            assert_eq!(
                order.len(),
                g.ranks() as usize,
                "tree {i} on {lengths:?} spans"
            );
            let mut set = HashSet::new();
            for r in 0..g.ranks() {
                assert!(
                    t.children[r as usize].len() <= 3,
                    "tree {i} out-degree at {r}"
                );
                if let Some(p) = t.parent[r as usize] {
                    assert_eq!(
                        g.hops(p, r),
                        1,
                        "tree {i}: arc {p}->{r} is not nearest-neighbour"
                    );
                    set.insert((p, r));
                } else {
                    assert_eq!(r, root);
                }
            }
            arcs.push(set);
        }
        for a in 0..3 {
            for b in a + 1..3 {
                assert!(
                    arcs[a].is_disjoint(&arcs[b]),
                    "trees {a} and {b} share an arc on {lengths:?}"
                );
            }
        }
    }

    #[test]
    fn trees_span_are_trinary_and_arc_disjoint() {
        for l in [
            [3, 3, 3],
            [4, 5, 6],
            [6, 4, 3],
            [5, 3, 7],
            [8, 8, 8],
            [24, 18, 16],
        ] {
            let g = Grid::new(l);
            for root in [0, g.ranks() / 2, g.ranks() - 1] {
                check(l, root);
            }
        }
    }

    #[test]
    fn small_axes_are_refused() {
        assert!(trinary_unsupported(&Grid::new([2, 3, 3])).is_some());
        assert!(trinary_unsupported(&Grid::new([3, 3, 3])).is_none());
    }

    #[test]
    fn depth_is_about_the_sum_of_the_axes() {
        let g = Grid::new([8, 8, 8]);
        for t in trinary_trees(&g, 0) {
            assert!(t.depth() <= 8 * 3 + 2);
        }
    }
}
