//! Communicators shaped as a 3D torus, and the triple trinary trees of the
//! Tofu Bcast/Reduce/Trinaryx3 algorithms.
//!
//! The trees are a **reconstruction** ([S:003], [S:001], [RECON]): the
//! sources state their properties — three spanning trees of out-degree at
//! most 3 over nearest-neighbour arcs, pairwise arc-disjoint, one TNI each
//! — but not Fujitsu's exact shapes. The construction below meets every
//! stated property on any torus whose axes are all at least 3 long, and a
//! stronger one the bandwidth needs: the trees are edge-disjoint, so a node
//! has at most three children over all three trees together. The tests
//! check them.

use crate::schedule::Rank;
use crate::BuildError;

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

/// Axis preference of each tree: tree t takes its parent along the first
/// axis of `PREFERENCE[t]` on which the rank is off the root, except that
/// a rank on the root's plane of the tree's last axis takes that axis.
const PREFERENCE: [[usize; 3]; 3] = [[2, 1, 0], [0, 2, 1], [1, 0, 2]];

/// The three edge-disjoint trinary spanning trees rooted at `root`
/// ([S:003], [S:001]). Requires every axis ≥ 3 ([`trinary_unsupported`]).
///
/// Every rank v ≠ root has exactly one parent per tree, and the three
/// parents are its three "minus" neighbours v − e_x, v − e_y, v − e_z, one
/// per tree. So each torus link carries at most one tree (the trees are
/// edge-disjoint, not only arc-disjoint), every rank has at most three
/// children **in total over the three trees** — the broadcast phase sends
/// each byte at most three times from any node, the same as the reduce
/// phase — and per tree at most three. Which tree takes which axis at v
/// follows `PREFERENCE`; the rule never closes a cycle (parents walk the
/// offsets from the root down in a fixed axis order, wrapping an axis only
/// once, where the offset is 0 on the tree's last axis), which the tests
/// check on many shapes. Depth: at most Lx + Ly + Lz − 2 arcs.
pub fn trinary_trees(grid: &Grid, root: Rank) -> [Tree; 3] {
    let n = grid.ranks() as usize;
    let origin = grid.coords(root);
    let mut parents = [vec![None; n], vec![None; n], vec![None; n]];
    for r in 0..n as Rank {
        if r == root {
            continue;
        }
        let c = grid.coords(r);
        let offset: [u32; 3] =
            std::array::from_fn(|k| (c[k] + grid.lengths[k] - origin[k]) % grid.lengths[k]);
        for (t, order) in PREFERENCE.iter().enumerate() {
            let last = order[2];
            let axis = if offset[last] == 0 {
                last
            } else {
                *order
                    .iter()
                    .find(|&&k| offset[k] != 0)
                    .expect("a rank other than the root is off it on some axis")
            };
            parents[t][r as usize] = Some(grid.shift(r, axis, -1));
        }
    }
    parents.map(|p| Tree::from_parents(root, p))
}

/// Three trees for the trinary-tree algorithms, given from outside (a file
/// of parents, `tofusim coll --trees`) and checked to have the properties
/// the construction above guarantees: each spans the communicator from the
/// same root over nearest-neighbour arcs, no torus link carries two trees
/// (nor one twice), and no rank has more than three children over the
/// three. Depth and child counts are free: that is what a caller varies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrinaryTrees {
    pub grid: Grid,
    pub root: Rank,
    pub trees: [Tree; 3],
    /// Where they came from (a file name), for messages.
    pub source: String,
}

impl TrinaryTrees {
    /// The trees with `parents[t][r]` rank `r`'s parent in tree `t` (`None`
    /// at the root alone), or what is wrong with them.
    pub fn from_parents(grid: Grid, parents: [Vec<Option<Rank>>; 3]) -> Result<Self, BuildError> {
        if let Some(why) = trinary_unsupported(&grid) {
            return Err(trees_err(why));
        }
        if grid.lengths.iter().try_fold(1u32, |a, &l| a.checked_mul(l)).is_none() {
            return Err(trees_err(format!("a {}x{}x{} communicator has more ranks than a rank number holds", grid.lengths[0], grid.lengths[1], grid.lengths[2])));
        }
        let n = grid.ranks();
        let mut root = None;
        for (t, p) in parents.iter().enumerate() {
            if p.len() != n as usize {
                return Err(trees_err(format!("tree {t} has {} parents, the {}x{}x{} communicator {n} ranks", p.len(), grid.lengths[0], grid.lengths[1], grid.lengths[2])));
            }
            if let Some((r, q)) = p.iter().enumerate().find_map(|(r, q)| q.filter(|&q| q >= n).map(|q| (r, q))) {
                return Err(trees_err(format!("tree {t}: rank {r}'s parent {q} is not a rank of {n}")));
            }
            let roots: Vec<Rank> = (0..n).filter(|&r| p[r as usize].is_none()).collect();
            match (roots.as_slice(), root) {
                ([r], None) => root = Some(*r),
                ([r], Some(r0)) if *r == r0 => {}
                _ => return Err(trees_err(format!("tree {t} must have one root (a null parent) shared by all three trees, found {roots:?}"))),
            }
        }
        let root = root.expect("three trees checked");
        let trees = parents.map(|p| Tree::from_parents(root, p));
        check_trinary(&grid, &trees)?;
        Ok(Self { grid, root, trees, source: "<trees>".into() })
    }
}

/// What is wrong with given trees (the input's key `trees`).
fn trees_err(message: String) -> BuildError {
    BuildError { key: "trees", message }
}

/// The properties every triple of trinary trees has (see [`TrinaryTrees`]),
/// or the first one that fails.
pub fn check_trinary(grid: &Grid, trees: &[Tree; 3]) -> Result<(), BuildError> {
    let n = grid.ranks();
    let mut links = std::collections::HashSet::new();
    for (t, tree) in trees.iter().enumerate() {
        for r in 0..n {
            let Some(p) = tree.parent[r as usize] else { continue };
            if p >= n {
                return Err(trees_err(format!("tree {t}: rank {r}'s parent {p} is not a rank of {n}")));
            }
            if grid.hops(p, r) != 1 {
                return Err(trees_err(format!("tree {t}: arc {p} -> {r} is not between torus neighbours")));
            }
            if !links.insert((p.min(r), p.max(r))) {
                return Err(trees_err(format!("tree {t}: the link {p}-{r} already carries a tree")));
            }
        }
        if tree.top_down().len() != n as usize {
            return Err(trees_err(format!("tree {t} does not reach every rank from the root {} (it has a cycle)", tree.root)));
        }
    }
    for r in 0..n as usize {
        let total: usize = trees.iter().map(|t| t.children[r].len()).sum();
        if total > 3 {
            return Err(trees_err(format!("rank {r} has {total} children over the three trees, more than three")));
        }
    }
    Ok(())
}

/// Pipeline stages a segment crosses in a tree algorithm: the deepest of
/// the three trees, once per phase (Trinaryx3: up, then down: 2 phases).
pub fn trinary_stages(grid: &Grid, root: Rank, phases: u32) -> u32 {
    phases
        * trinary_trees(grid, root)
            .iter()
            .map(Tree::depth)
            .max()
            .unwrap_or(0)
}

/// The per-stage costs a pipelined tree's segment is derived from (see
/// [`pipeline_segment_bytes`]): α and β of one put, and a packet's payload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineCosts {
    pub alpha_ns: f64,
    pub ns_per_byte: f64,
    pub packet_payload_bytes: u64,
}

impl PipelineCosts {
    /// The segment of a trinary-tree algorithm of `phases` phases
    /// (Trinaryx3: 2) rooted at `root` on `grid`, moving `size_bytes` in
    /// three parts.
    pub fn trinary_segment_bytes(&self, grid: &Grid, root: Rank, phases: u32, size_bytes: u64) -> u64 {
        pipeline_segment_bytes(size_bytes.div_ceil(3), trinary_stages(grid, root, phases), self.alpha_ns, self.ns_per_byte, self.packet_payload_bytes)
    }
}

/// The segment of a pipelined tree (the α-β model of Thakur, Rabenseifner and Gropp 2005): `part_bytes`
/// cut into n = S/s segments crosses `stages` stages of α + β·s each, so
/// T(s) = (S/s + H − 1)(α + β·s), least at s* = √(S·α / ((H − 1)·β)).
/// α (`alpha_ns`) is a message's fixed cost per stage, β (`ns_per_byte`)
/// the time per byte of one put; the result is rounded to whole packets of
/// `packet_payload_bytes` (at least one, at most the part).
pub fn pipeline_segment_bytes(
    part_bytes: u64,
    stages: u32,
    alpha_ns: f64,
    ns_per_byte: f64,
    packet_payload_bytes: u64,
) -> u64 {
    let granule = packet_payload_bytes.max(1);
    if stages <= 1 || part_bytes <= granule {
        return part_bytes.max(1);
    }
    let s = (part_bytes as f64 * alpha_ns / ((stages - 1) as f64 * ns_per_byte)).sqrt();
    let packets = (s / granule as f64).round().max(1.0) as u64;
    (packets * granule).min(part_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(lengths: [u32; 3], root: Rank) {
        let g = Grid::new(lengths);
        let trees = trinary_trees(&g, root);
        assert!(trees.iter().all(|t| t.root == root));
        if let Err(e) = check_trinary(&g, &trees) {
            panic!("{lengths:?}, root {root}: {e}");
        }
    }

    #[test]
    fn given_trees_are_checked() {
        let g = Grid::new([3, 3, 3]);
        let parents = trinary_trees(&g, 4).map(|t| t.parent);
        let ok = TrinaryTrees::from_parents(g, parents.clone()).expect("the construction's trees pass");
        assert_eq!(ok.root, 4);
        // A parent in tree 0 moved to the root, two hops away.
        let mut far = parents.clone();
        let r = (0..27).find(|&r| far[0][r as usize].is_some() && g.hops(r, 0) == 2).unwrap();
        far[0][r as usize] = Some(0);
        assert!(TrinaryTrees::from_parents(g, far).unwrap_err().message.contains("not between torus neighbours"));
        // Two trees on one link.
        let mut shared = parents.clone();
        let (c, p) = (0..27u32).find_map(|c| parents[0][c as usize].map(|p| (c, p))).unwrap();
        let other = (0..27u32).find(|&x| x != c && parents[1][x as usize].is_some() && g.hops(x, p) == 1).unwrap();
        shared[1][other as usize] = Some(p);
        shared[1][c as usize] = Some(p);
        assert!(TrinaryTrees::from_parents(g, shared).unwrap_err().message.contains("already carries a tree"));
        let mut outside = parents.clone();
        outside[2][5] = Some(99);
        let e = TrinaryTrees::from_parents(g, outside).unwrap_err();
        assert_eq!((e.key, e.message.as_str()), ("trees", "tree 2: rank 5's parent 99 is not a rank of 27"));
        // A cycle: two neighbours made each other's parent in tree 0.
        let mut cycle = parents.clone();
        let (a, b) = (1u32, 2u32);
        assert_eq!(g.hops(a, b), 1);
        let mut free = TrinaryTrees::from_parents(g, parents.clone()).unwrap();
        free.trees[0].parent[a as usize] = Some(b);
        free.trees[0].parent[b as usize] = Some(a);
        cycle[0] = free.trees[0].parent.clone();
        let e = TrinaryTrees::from_parents(g, cycle).unwrap_err().message;
        assert!(e.contains("does not reach every rank") || e.contains("already carries a tree"), "{e}");
        // Four children at one rank over the three trees.
        let built = trinary_trees(&g, 4);
        let r = (0..27u32).find(|&r| built.iter().map(|t| t.children[r as usize].len()).sum::<usize>() == 3).unwrap();
        let mut extra = built.map(|t| t.parent);
        let nb = (0..27u32).find(|&x| g.hops(x, r) == 1 && x != 4 && (0..3).all(|t| extra[t][x as usize] != Some(r))).unwrap();
        let t = (0..3).find(|&t| extra[t][r as usize] != Some(nb)).unwrap();
        extra[t][nb as usize] = Some(r);
        assert!(TrinaryTrees::from_parents(g, extra).is_err());
        let mut rootless = parents.clone();
        rootless[2][4] = Some(3);
        assert!(TrinaryTrees::from_parents(g, rootless).unwrap_err().message.contains("one root"));
        let mut short = parents;
        short[1].pop();
        assert!(TrinaryTrees::from_parents(g, short).unwrap_err().message.contains("26 parents"));
    }

    #[test]
    fn trees_span_are_trinary_and_edge_disjoint() {
        for l in [
            [3, 7, 5],
            [6, 9, 6],
            [4, 3, 4],
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
            assert!(t.depth() <= 8 * 3 - 2);
        }
    }

    /// The depth bound of the construction on every tested shape and root:
    /// at most Lx + Ly + Lz − 2 arcs (parents sit on the minus side), and
    /// never below the lower bound every edge-disjoint triple with ≤ 3
    /// children at the root obeys: the root has one child per tree, so a
    /// tree is at least 1 + the diameter deep.
    #[test]
    fn depth_bounds() {
        for l in [
            [3, 3, 3],
            [4, 3, 4],
            [6, 9, 6],
            [8, 18, 8],
            [3, 7, 5],
            [24, 18, 16],
        ] {
            let g = Grid::new(l);
            let diameter: u32 = l.iter().map(|&x| x / 2).sum();
            for root in [0, g.ranks() / 3, g.ranks() - 1] {
                let trees = trinary_trees(&g, root);
                for t in &trees {
                    assert_eq!(
                        t.children[root as usize].len(),
                        1,
                        "one child of the root per tree"
                    );
                    let d = t.depth();
                    assert!(d <= l.iter().sum::<u32>() - 2, "{l:?}: depth {d}");
                    assert!(d > diameter, "{l:?}: depth {d} vs diameter {diameter}");
                }
                assert_eq!(
                    trinary_stages(&g, root, 2),
                    2 * trees.iter().map(Tree::depth).max().unwrap()
                );
            }
        }
    }

    /// Every edge-disjoint triple with at most three children at the root
    /// orients the torus with in-degree 3 (one parent per tree) and
    /// out-degree 3 at almost every node, so the potential "distance from
    /// the root" rises along as many arcs as it falls: about half of all
    /// tree arcs lead a child away from the root. Checked on ours.
    #[test]
    fn half_the_arcs_point_inward() {
        let g = Grid::new([8, 18, 8]);
        let trees = trinary_trees(&g, 0);
        let (mut up, mut down) = (0i64, 0i64);
        for t in &trees {
            for r in 0..g.ranks() {
                if let Some(p) = t.parent[r as usize] {
                    match g.hops(0, r).cmp(&g.hops(0, p)) {
                        std::cmp::Ordering::Greater => up += 1,
                        std::cmp::Ordering::Less => down += 1,
                        std::cmp::Ordering::Equal => {}
                    }
                }
            }
        }
        // Σ over arcs of (d(child) − d(parent)) = Σ_v d(v)·(in − out) = 3
        // (the root's three neighbours that are not its children).
        assert_eq!(up - down, 3);
    }

    #[test]
    fn pipeline_segment_follows_the_depth() {
        // K: α = 395 + 395 + 100 ns, β = 1 / 4.76 GB/s, 1,920-byte packets.
        let (alpha, beta) = (890.0, 1.0 / 4.762);
        let part = (16u64 << 20) / 3;
        let shallow = pipeline_segment_bytes(part, 18, alpha, beta, 1920);
        let deep = pipeline_segment_bytes(part, 64, alpha, beta, 1920);
        assert!(shallow > deep && shallow % 1920 == 0 && deep % 1920 == 0);
        // s* = sqrt(S α / ((H − 1) β)): 37.3 KB for 18 stages, 19.4 KB for 64.
        assert_eq!(shallow, 19 * 1920);
        assert_eq!(deep, 10 * 1920);
        assert_eq!(pipeline_segment_bytes(1000, 64, alpha, beta, 1920), 1000);
        assert_eq!(pipeline_segment_bytes(part, 1, alpha, beta, 1920), part);
    }
}
