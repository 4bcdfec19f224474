//! The router graph in compressed adjacency form, shared by every topology.
//! It is the brute-force reference for the closed-form metrics and the
//! exact path when faults break the symmetry the closed forms rely on.

use rayon::prelude::*;

/// Undirected multigraph of routers. Each link appears once in each
/// endpoint's list; parallel links appear several times.
#[derive(Clone, Debug)]
pub struct RouterGraph {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    classes: Vec<u8>,
    /// Nodes attached to each router (1 for direct networks).
    nodes_per_router: Vec<u32>,
    alive: Vec<bool>,
}

/// Collects links before the graph is frozen.
#[derive(Default)]
pub struct GraphBuilder {
    routers: usize,
    links: Vec<(u32, u32, u8)>,
    nodes_per_router: Vec<u32>,
}

impl GraphBuilder {
    pub fn new(routers: usize, nodes_per_router: u32) -> Self {
        Self {
            routers,
            links: Vec::new(),
            nodes_per_router: vec![nodes_per_router; routers],
        }
    }

    pub fn with_node_counts(nodes_per_router: Vec<u32>) -> Self {
        Self {
            routers: nodes_per_router.len(),
            links: Vec::new(),
            nodes_per_router,
        }
    }

    /// One bidirectional link of `class` between routers `a` and `b`.
    pub fn link(&mut self, a: u32, b: u32, class: u8) {
        debug_assert!((a as usize) < self.routers && (b as usize) < self.routers);
        self.links.push((a, b, class));
    }

    pub fn build(self) -> RouterGraph {
        let n = self.routers;
        let mut deg = vec![0u32; n + 1];
        for &(a, b, _) in &self.links {
            deg[a as usize] += 1;
            deg[b as usize] += 1;
        }
        let mut offsets = vec![0u32; n + 1];
        for i in 0..n {
            offsets[i + 1] = offsets[i] + deg[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; offsets[n] as usize];
        let mut classes = vec![0u8; offsets[n] as usize];
        for &(a, b, c) in &self.links {
            for (x, y) in [(a, b), (b, a)] {
                let slot = fill[x as usize] as usize;
                targets[slot] = y;
                classes[slot] = c;
                fill[x as usize] += 1;
            }
        }
        RouterGraph {
            offsets,
            targets,
            classes,
            nodes_per_router: self.nodes_per_router,
            alive: vec![true; n],
        }
    }
}

/// Hop statistics over node pairs, in router-to-router link hops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HopStats {
    pub diameter: u32,
    pub average_hops: f64,
    /// False when some surviving node cannot reach another.
    pub connected: bool,
}

impl RouterGraph {
    pub fn router_count(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn neighbors(&self, r: u32) -> impl Iterator<Item = (u32, u8)> + '_ {
        let s = self.offsets[r as usize] as usize;
        let e = self.offsets[r as usize + 1] as usize;
        self.targets[s..e]
            .iter()
            .copied()
            .zip(self.classes[s..e].iter().copied())
    }

    pub fn is_alive(&self, r: u32) -> bool {
        self.alive[r as usize]
    }

    pub fn nodes_at(&self, r: u32) -> u32 {
        if self.alive[r as usize] {
            self.nodes_per_router[r as usize]
        } else {
            0
        }
    }

    /// Removes a router and every link it has (a failed node of a direct network).
    pub fn remove_router(&mut self, r: u32) {
        self.alive[r as usize] = false;
    }

    /// Removes one node attached to router `r` (indirect networks).
    pub fn remove_node_at(&mut self, r: u32) {
        let c = &mut self.nodes_per_router[r as usize];
        *c = c.saturating_sub(1);
    }

    /// Removes one link between `a` and `b` (one of several parallel links).
    /// Returns false when no such link exists.
    pub fn remove_link(&mut self, a: u32, b: u32) -> bool {
        let found_a = self.retarget(a, b);
        let found_b = self.retarget(b, a);
        debug_assert_eq!(found_a, found_b);
        found_a && found_b
    }

    fn retarget(&mut self, from: u32, to: u32) -> bool {
        let s = self.offsets[from as usize] as usize;
        let e = self.offsets[from as usize + 1] as usize;
        for i in s..e {
            if self.targets[i] == to {
                // A link to itself marks "removed": BFS never follows it.
                self.targets[i] = from;
                self.classes[i] = u8::MAX;
                return true;
            }
        }
        false
    }

    /// Surviving links per class (each bidirectional link once).
    pub fn links_by_class(&self, classes: usize) -> Vec<u64> {
        let mut out = vec![0u64; classes];
        for r in 0..self.router_count() as u32 {
            if !self.is_alive(r) {
                continue;
            }
            for (t, c) in self.neighbors(r) {
                if c != u8::MAX && t != r && self.is_alive(t) {
                    out[c as usize] += 1;
                }
            }
        }
        out.iter().map(|x| x / 2).collect()
    }

    /// Links crossing a cut, per class, where `side(r)` names the side of router `r`.
    pub fn cut_links(&self, classes: usize, side: impl Fn(u32) -> bool) -> Vec<u64> {
        let mut out = vec![0u64; classes];
        for r in 0..self.router_count() as u32 {
            if !self.is_alive(r) || !side(r) {
                continue;
            }
            for (t, c) in self.neighbors(r) {
                if c != u8::MAX && self.is_alive(t) && !side(t) {
                    out[c as usize] += 1;
                }
            }
        }
        out
    }

    /// BFS distances (router hops) from `src`; `u32::MAX` where unreachable.
    pub fn bfs(&self, src: u32, dist: &mut Vec<u32>, queue: &mut Vec<u32>) {
        dist.clear();
        dist.resize(self.router_count(), u32::MAX);
        queue.clear();
        if !self.is_alive(src) {
            return;
        }
        dist[src as usize] = 0;
        queue.push(src);
        let mut head = 0;
        while head < queue.len() {
            let r = queue[head];
            head += 1;
            let d = dist[r as usize] + 1;
            for (t, c) in self.neighbors(r) {
                if c != u8::MAX && self.alive[t as usize] && dist[t as usize] == u32::MAX {
                    dist[t as usize] = d;
                    queue.push(t);
                }
            }
        }
    }

    /// Exact hop statistics over distinct node pairs by BFS from `sources`;
    /// each source's result is weighted by `weight` (for symmetric networks
    /// a set of representatives stands for the rest). Nodes on the same
    /// router are 0 hops apart.
    pub fn hop_stats_from(&self, sources: &[(u32, f64)]) -> HopStats {
        let parts: Vec<(u32, f64, f64, bool)> = sources
            .par_iter()
            .map_init(
                || (Vec::new(), Vec::new()),
                |(dist, queue), &(src, weight)| {
                    self.bfs(src, dist, queue);
                    let ns = self.nodes_at(src) as f64;
                    let mut max = 0;
                    let mut sum = 0.0;
                    let mut connected = true;
                    for t in 0..self.router_count() {
                        let nt = self.nodes_at(t as u32);
                        if nt == 0 || ns == 0.0 {
                            continue;
                        }
                        let d = dist[t];
                        if d == u32::MAX {
                            connected = false;
                            continue;
                        }
                        max = max.max(d);
                        sum += d as f64 * nt as f64;
                    }
                    (max, sum * ns * weight, 0.0, connected)
                },
            )
            .collect();
        let n: f64 = (0..self.router_count() as u32)
            .map(|r| self.nodes_at(r) as f64)
            .sum();
        let total: f64 = parts.iter().map(|p| p.1).sum();
        HopStats {
            diameter: parts.iter().map(|p| p.0).max().unwrap_or(0),
            average_hops: if n > 1.0 {
                total / (n * (n - 1.0))
            } else {
                0.0
            },
            connected: parts.iter().all(|p| p.3),
        }
    }

    /// Exact hop statistics by BFS from every surviving router.
    pub fn hop_stats(&self) -> HopStats {
        let sources: Vec<(u32, f64)> = (0..self.router_count() as u32)
            .filter(|&r| self.nodes_at(r) > 0)
            .map(|r| (r, 1.0))
            .collect();
        self.hop_stats_from(&sources)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_of_four() {
        let mut b = GraphBuilder::new(4, 1);
        for i in 0..4 {
            b.link(i, (i + 1) % 4, 0);
        }
        let g = b.build();
        let s = g.hop_stats();
        assert_eq!(s.diameter, 2);
        assert!((s.average_hops - 4.0 / 3.0).abs() < 1e-12);
        assert_eq!(g.links_by_class(1), vec![4]);
    }

    #[test]
    fn removing_a_link_and_a_router() {
        let mut b = GraphBuilder::new(4, 1);
        for i in 0..4 {
            b.link(i, (i + 1) % 4, 0);
        }
        let mut g = b.build();
        assert!(g.remove_link(0, 1));
        assert_eq!(g.hop_stats().diameter, 3);
        g.remove_router(2);
        let s = g.hop_stats();
        assert!(!s.connected);
    }
}
