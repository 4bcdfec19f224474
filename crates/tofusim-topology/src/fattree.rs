//! Fat-trees as extended generalised fat-trees, XGFT(h; m₁…m_h; w₁…w_h)
//! (Öhring et al.): level-l switches have `m_l` children and each
//! level-(l−1) element has `w_l` parents. The k-ary n-tree is
//! XGFT(n; k…k; 1, k…k); tapering divides the up-links of a level.
//! `rails` copies the whole tree (multi-rail nodes, one NIC port per rail).
//!
//! Hops are switch-to-switch links: two nodes whose lowest common ancestor
//! is at level `L` are `2(L−1)` hops apart (0 on the same leaf switch).

use crate::graph::{GraphBuilder, RouterGraph};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FatTree {
    /// Children per switch, level 1 (leaf: nodes per leaf switch) upwards.
    pub down: Vec<u32>,
    /// Parents per element, level 1 upwards (`up[0]` = leaf switches per node).
    pub up: Vec<u32>,
    pub rails: u32,
}

impl FatTree {
    /// A k-ary n-tree; `taper[l]` divides the up-links from level l+1 (1 = full).
    pub fn k_ary_n_tree(k: u32, n: u32, taper: &[u32]) -> Self {
        let down = vec![k; n as usize];
        let mut up = vec![1];
        for l in 1..n as usize {
            let t = taper.get(l - 1).copied().unwrap_or(1).max(1);
            up.push((k / t).max(1));
        }
        Self { down, up, rails: 1 }
    }

    pub fn levels(&self) -> usize {
        self.down.len()
    }

    pub fn node_count(&self) -> u64 {
        self.down.iter().map(|&m| m as u64).product()
    }

    /// Switches at level `l` (1-based), per rail.
    pub fn switches_at(&self, l: usize) -> u64 {
        let above: u64 = self.down[l..].iter().map(|&m| m as u64).product();
        let below: u64 = self.up[..l].iter().map(|&w| w as u64).product();
        above * below
    }

    pub fn switch_count(&self) -> u64 {
        (1..=self.levels())
            .map(|l| self.switches_at(l))
            .sum::<u64>()
            * self.rails as u64
    }

    /// Switch-to-switch links between level l and l+1, per rail.
    pub fn links_above(&self, l: usize) -> u64 {
        self.switches_at(l) * self.up[l] as u64
    }

    /// Switch-to-switch links, all rails.
    pub fn link_count(&self) -> u64 {
        (1..self.levels()).map(|l| self.links_above(l)).sum::<u64>() * self.rails as u64
    }

    /// Node links (node to leaf switch), all rails.
    pub fn node_link_count(&self) -> u64 {
        self.node_count() * self.up[0] as u64 * self.rails as u64
    }

    /// Highest level at which two nodes can have their lowest common ancestor.
    fn top_level(&self) -> usize {
        (1..=self.levels())
            .rev()
            .find(|&l| self.down[l - 1] > 1)
            .unwrap_or(1)
    }

    pub fn diameter(&self) -> u32 {
        2 * (self.top_level() as u32 - 1)
    }

    /// Exact mean over distinct node pairs, from the subtree sizes.
    pub fn average_hops(&self) -> f64 {
        let n = self.node_count() as f64;
        if n < 2.0 {
            return 0.0;
        }
        let mut sum = 0.0;
        let mut below = 1.0;
        for l in 1..=self.levels() {
            let sub = below * self.down[l - 1] as f64;
            // Ordered pairs whose lowest common ancestor is at level l.
            let pairs = n * (sub - below);
            sum += pairs * 2.0 * (l as f64 - 1.0);
            below = sub;
        }
        sum / (n * (n - 1.0))
    }

    /// Capacity of the standard bisection (the top-level subtrees split in
    /// half), in links of one direction per rail: half the nodes times the
    /// thinnest per-node up-link share on the way to the top.
    pub fn bisection_links(&self) -> f64 {
        let n = self.node_count() as f64;
        let mut per_node_up = f64::INFINITY;
        let mut nodes_below = 1.0;
        let mut parents = 1.0;
        for l in 0..self.top_level() {
            parents *= self.up[l] as f64;
            per_node_up = per_node_up.min(parents / nodes_below);
            nodes_below *= self.down[l] as f64;
        }
        (n / 2.0).floor() * per_node_up * self.rails as f64
    }

    /// Router graph of one rail: leaf switches first, then each level up.
    pub fn router_graph(&self) -> RouterGraph {
        let h = self.levels();
        let mut base = vec![0u64; h + 1];
        for l in 1..=h {
            base[l] = base[l - 1] + if l == 1 { 0 } else { self.switches_at(l - 1) };
        }
        let total = base[h] + self.switches_at(h);
        let mut counts = vec![0u32; total as usize];
        // Leaf switch s (level 1) has `down[0]` nodes, once per parent-copy of the node.
        for c in counts.iter_mut().take(self.switches_at(1) as usize) {
            *c = self.down[0];
        }
        let mut b = GraphBuilder::with_node_counts(counts);
        // A level-l switch is addressed by digits (c_{l+1..h}, p_1..p_l): the
        // subtree above it and its copy index. Its parents at level l+1 share
        // c_{l+2..h} and extend the copy index by p_{l+1} ∈ [0, w_{l+1}).
        for l in 1..h {
            let n_l = self.switches_at(l);
            let copies_l: u64 = self.up[..l].iter().map(|&w| w as u64).product();
            let m_next = self.down[l] as u64;
            for s in 0..n_l {
                let copy = s % copies_l;
                let subtree = s / copies_l; // index over c_{l+1..h}
                let above = subtree / m_next;
                for p in 0..self.up[l] as u64 {
                    let parent_copy = copy * self.up[l] as u64 + p;
                    let copies_next = copies_l * self.up[l] as u64;
                    let parent = above * copies_next + parent_copy;
                    b.link(
                        (base[l] + s) as u32,
                        (base[l + 1] + parent) as u32,
                        (l - 1) as u8,
                    );
                }
            }
        }
        b.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_ary_n_tree_counts() {
        let t = FatTree::k_ary_n_tree(4, 3, &[]);
        assert_eq!(t.node_count(), 64);
        assert_eq!(t.switches_at(1), 16);
        assert_eq!(t.switches_at(2), 16);
        assert_eq!(t.switches_at(3), 16);
        assert_eq!(t.link_count(), 2 * 64);
        assert_eq!(t.diameter(), 4);
        assert_eq!(t.bisection_links(), 32.0);
    }

    #[test]
    fn tapered_tree_halves_bisection() {
        let t = FatTree::k_ary_n_tree(4, 3, &[2]);
        assert_eq!(t.up, vec![1, 2, 4]);
        assert_eq!(t.bisection_links(), 16.0);
    }

    #[test]
    fn closed_form_hops_match_bfs() {
        for t in [
            FatTree::k_ary_n_tree(4, 3, &[]),
            FatTree::k_ary_n_tree(3, 2, &[]),
            FatTree {
                down: vec![5, 3, 2],
                up: vec![1, 2, 3],
                rails: 1,
            },
            FatTree::k_ary_n_tree(4, 3, &[2, 1]),
        ] {
            let s = t.router_graph().hop_stats();
            assert!(s.connected);
            assert_eq!(s.diameter, t.diameter(), "{t:?}");
            assert!(
                (s.average_hops - t.average_hops()).abs() < 1e-9,
                "{t:?}: {} vs {}",
                s.average_hops,
                t.average_hops()
            );
        }
    }
}
