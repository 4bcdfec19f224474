//! Virtual tori that avoid failed nodes and links ([S:003], [S:001]; the
//! mechanism is not in the sources, [RECON]).
//!
//! Two mechanisms, tried in this order:
//! 1. **Fault-free block.** Move the block inside the region (and try the
//!    other layouts of the shape) until it holds no failed node and no
//!    failed link between two of its nodes. Cost: none beyond padding.
//! 2. **Skipped layer.** Take a block one layer longer along X, Y or Z
//!    whose faults all lie in one inner layer, and leave that layer out:
//!    the virtual axis steps over it. Ranks on either side of the layer are
//!    two hops apart — through the layer's node, or, where that node has
//!    failed, around it through the ABC group (four hops). Cost: the
//!    layer's nodes are lost, and `max_neighbor_hops` rises to 2 or 4.
//!
//! When neither works the mapping is refused with the reason. Failed nodes
//! never receive a rank, by construction and by check.

use std::collections::{HashSet, VecDeque};

use tofusim_topology::{NodeId, PortId, Torus};

use crate::embed::{self, Embedding, Region};

/// Failed nodes and links of a Tofu system.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    pub nodes: HashSet<u32>,
    /// Links as (smaller node, larger node).
    pub links: HashSet<(u32, u32)>,
}

impl Faults {
    /// Text: one fault per line, `x,y,z,a,b,c` (a node) or
    /// `x,y,z,a,b,c - x,y,z,a,b,c` (the link between two neighbours);
    /// `#` starts a comment. Errors name the line.
    pub fn parse(text: &str, t: &Torus) -> Result<Self, (usize, String)> {
        let mut f = Self::default();
        let lens = t.lengths();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let node = |s: &str| -> Result<u32, (usize, String)> {
                let c: Result<Vec<u32>, _> = s.split(',').map(|p| p.trim().parse::<u32>()).collect();
                match c {
                    Ok(c) if c.len() == 6 && c.iter().zip(&lens).all(|(&v, &l)| v < l) => Ok(t.node_id(&c).0),
                    Ok(c) if c.len() == 6 => Err((line, format!("coordinates {c:?} outside the system {lens:?}"))),
                    _ => Err((line, format!("expected a node as x,y,z,a,b,c, got {:?}", s.trim()))),
                }
            };
            match body.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (node(a)?, node(b)?);
                    if t.distance(NodeId(a), NodeId(b)) != 1 {
                        return Err((line, "a failed link joins two neighbouring nodes".into()));
                    }
                    f.links.insert((a.min(b), a.max(b)));
                }
                None => {
                    f.nodes.insert(node(body)?);
                }
            }
        }
        Ok(f)
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.links.is_empty()
    }

    fn link_failed(&self, a: u32, b: u32) -> bool {
        self.links.contains(&(a.min(b), a.max(b)))
    }

    /// Hops from `a` to `b` avoiding failed nodes and links (None: more
    /// than `limit`).
    pub fn hops(&self, t: &Torus, a: u32, b: u32, limit: u32) -> Option<u32> {
        let d = t.distance(NodeId(a), NodeId(b));
        if d == 1 && !self.link_failed(a, b) {
            return Some(1);
        }
        if a == b {
            return Some(0);
        }
        let ports = t.ports().len();
        let mut seen = HashSet::from([a]);
        let mut q = VecDeque::from([(a, 0u32)]);
        while let Some((v, h)) = q.pop_front() {
            if h >= limit {
                continue;
            }
            for p in 0..ports {
                let Some(w) = t.neighbor(NodeId(v), PortId(p as u8)) else { continue };
                let w = w.0;
                if self.nodes.contains(&w) || self.link_failed(v, w) || !seen.insert(w) {
                    continue;
                }
                if w == b {
                    return Some(h + 1);
                }
                q.push_back((w, h + 1));
            }
        }
        None
    }
}

/// How a mapping avoided the faults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// No faults in the region, or a block placed clear of them.
    FaultFreeBlock,
    /// The block steps over one layer holding every fault.
    SkippedLayer { axis: &'static str, coordinate: u32 },
}

impl Mechanism {
    pub fn describe(&self) -> String {
        match self {
            Self::FaultFreeBlock => "fault-free block".into(),
            Self::SkippedLayer { axis, coordinate } => {
                format!("skipped layer {axis}={coordinate} (its nodes are lost; neighbours across it are 2 hops apart, 4 around a failed node)")
            }
        }
    }
}

/// A virtual torus on a region, with its cost.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub embedding: Embedding,
    pub mechanism: Mechanism,
    /// Region nodes that hold no rank (padding, skipped layer, failed).
    pub unused_nodes: u64,
    /// Of those, the nodes of a skipped layer (lost to the faults).
    pub lost_nodes: u64,
    pub max_neighbor_hops: u32,
    pub mean_neighbor_hops: f64,
}

/// Start coordinates of a block of `size` inside `region` along `axis`.
fn origins(t: &Torus, region: Region, axis: usize, size: u32) -> Vec<u32> {
    let l = t.lengths()[axis];
    if size > region.size[axis] {
        return vec![];
    }
    let whole_ring = region.size[axis] == l && t.axes()[axis].is_ring();
    let count = if whole_ring { if size == l { 1 } else { l } } else { region.size[axis] - size + 1 };
    (0..count).map(|d| (region.origin[axis] + d) % l).collect()
}

/// Offset of physical coordinate `c` from `origin` along an axis of length `l`.
fn offset(c: u32, origin: u32, l: u32) -> u32 {
    (c + l - origin) % l
}

/// Maps `shape` onto `region` avoiding `faults` (see the module docs).
pub fn map_virtual(t: &Torus, region: Region, shape: &[u32], faults: &Faults) -> Result<Mapping, crate::MappingError> {
    let candidates = embed::layouts(t, region, shape, 24)?;
    let lens = t.lengths();
    let node_coords: Vec<Vec<u32>> = faults.nodes.iter().map(|&n| t.coords(NodeId(n))).collect();
    let link_coords: Vec<[Vec<u32>; 2]> = faults
        .links
        .iter()
        .map(|&(a, b)| [t.coords(NodeId(a)), t.coords(NodeId(b))])
        .collect();
    let inside = |origin: [u32; 3], size: [u32; 3], c: &[u32]| (0..3).all(|a| offset(c[a], origin[a], lens[a]) < size[a]);
    // A failed node inside a block, or a failed link with both ends inside
    // (a link leading out of the block is never used by its torus).
    let clear = |o: [u32; 3], size: [u32; 3]| {
        !node_coords.iter().any(|c| inside(o, size, c))
            && !link_coords.iter().any(|[a, b]| inside(o, size, a) && inside(o, size, b))
    };
    // 1. A block clear of every fault.
    for &(size, assign) in &candidates {
        for &ox in &origins(t, region, 0, size[0]) {
            for &oy in &origins(t, region, 1, size[1]) {
                for &oz in &origins(t, region, 2, size[2]) {
                    let o = [ox, oy, oz];
                    if !clear(o, size) {
                        continue;
                    }
                    if let Ok(e) = embed::build_at(t, shape, o, size, &assign, [None; 3]) {
                        return Ok(finish(t, region, e, Mechanism::FaultFreeBlock, 0, faults));
                    }
                }
            }
        }
    }
    // 2. One layer longer along an axis, the faults all in one inner layer:
    // every failed node inside is on it, and every failed link with both
    // ends inside has an end on it.
    let layer_holding = |o: [u32; 3], big: [u32; 3], axis: usize| -> Option<u32> {
        let nodes: Vec<u32> = node_coords.iter().filter(|c| inside(o, big, c)).map(|c| c[axis]).collect();
        let links: Vec<[u32; 2]> = link_coords
            .iter()
            .filter(|[a, b]| inside(o, big, a) && inside(o, big, b))
            .map(|[a, b]| [a[axis], b[axis]])
            .collect();
        let candidates: Vec<u32> = match (nodes.first(), links.first()) {
            (Some(&n), _) => vec![n],
            (None, Some(&[a, b])) => vec![a, b],
            (None, None) => return None,
        };
        candidates.into_iter().find(|&layer| {
            let off = offset(layer, o[axis], lens[axis]);
            off != 0
                && off + 1 != big[axis]
                && nodes.iter().all(|&c| c == layer)
                && links.iter().all(|l| l.contains(&layer))
        })
    };
    for &(size, assign) in &candidates {
        for axis in 0..3 {
            let mut big = size;
            big[axis] += 1;
            for &ox in &origins(t, region, 0, big[0]) {
                for &oy in &origins(t, region, 1, big[1]) {
                    for &oz in &origins(t, region, 2, big[2]) {
                        let o = [ox, oy, oz];
                        let Some(layer) = layer_holding(o, big, axis) else { continue };
                        let mut skip = [None; 3];
                        skip[axis] = Some(layer);
                        if let Ok(e) = embed::build_at(t, shape, o, size, &assign, skip) {
                            let lost = (0..3).filter(|&a| a != axis).map(|a| big[a] as u64).product::<u64>() * 12;
                            let m = Mechanism::SkippedLayer { axis: ["X", "Y", "Z"][axis], coordinate: layer };
                            return Ok(finish(t, region, e, m, lost, faults));
                        }
                    }
                }
            }
        }
    }
    Err(crate::MappingError::FaultsUnavoidable { nodes: faults.nodes.len(), links: faults.links.len() })
}

fn finish(t: &Torus, region: Region, embedding: Embedding, mechanism: Mechanism, lost_nodes: u64, faults: &Faults) -> Mapping {
    assert!(
        embedding.node_of_rank.iter().all(|n| !faults.nodes.contains(n)),
        "a failed node received a rank"
    );
    let (max, mean) = neighbor_hops(t, &embedding, faults);
    Mapping {
        unused_nodes: region.nodes() - embedding.node_of_rank.len() as u64,
        lost_nodes,
        embedding,
        mechanism,
        max_neighbor_hops: max,
        mean_neighbor_hops: mean,
    }
}

/// Max and mean physical hops over every pair of virtual neighbours (each
/// rank and its + neighbour along each virtual axis longer than 1), routes
/// avoiding failed nodes and links.
pub fn neighbor_hops(t: &Torus, e: &Embedding, faults: &Faults) -> (u32, f64) {
    let n = e.node_of_rank.len();
    let (mut max, mut sum, mut pairs) = (0u32, 0u64, 0u64);
    let mut stride = 1usize;
    for &l in &e.virtual_shape {
        if l > 1 {
            for r in 0..n {
                let c = (r / stride) % l as usize;
                let next = r - c * stride + ((c + 1) % l as usize) * stride;
                let (a, b) = (e.node_of_rank[r], e.node_of_rank[next]);
                let h = if faults.is_empty() {
                    t.distance(NodeId(a), NodeId(b))
                } else {
                    faults.hops(t, a, b, 32).unwrap_or(u32::MAX)
                };
                max = max.max(h);
                sum += h as u64;
                pairs += 1;
            }
        }
        stride *= l as usize;
    }
    (max, if pairs == 0 { 0.0 } else { sum as f64 / pairs as f64 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tofusim_topology::{tofu, Axis};

    fn small() -> Torus {
        tofu::tofu_torus([Axis::ring("x", 6), Axis::path("y", 4), Axis::ring("z", 4)])
    }

    #[test]
    fn faults_parse_and_name_bad_lines() {
        let t = small();
        let f = Faults::parse("# failed\n1,0,0,0,1,0\n0,0,0,0,0,0 - 1,0,0,0,0,0\n", &t).unwrap();
        assert_eq!((f.nodes.len(), f.links.len()), (1, 1));
        assert_eq!(Faults::parse("1,2,3\n", &t).unwrap_err().0, 1);
        assert!(Faults::parse("9,0,0,0,0,0\n", &t).unwrap_err().1.contains("outside"));
        assert!(Faults::parse("0,0,0,0,0,0 - 3,0,0,0,0,0\n", &t).is_err());
    }

    #[test]
    fn a_block_moves_clear_of_a_failed_node() {
        let t = small();
        let region = Region::whole(&t);
        // 8x6x4 = X(4)·A, Y(2)·B, Z(2)·C: room to move along X, Y and Z.
        let faults = Faults::parse("0,0,0,1,2,1\n", &t).unwrap();
        let m = map_virtual(&t, region, &[8, 6, 4], &faults).unwrap();
        assert_eq!(m.mechanism, Mechanism::FaultFreeBlock);
        assert_eq!(m.max_neighbor_hops, 1);
        assert!(m.embedding.node_of_rank.iter().all(|n| !faults.nodes.contains(n)));
    }

    #[test]
    fn a_failed_link_leading_out_of_the_block_does_not_matter() {
        let t = small();
        // 10 x 12 x 8 needs a 5-long X block; every one holds x = 2 or 3,
        // but the block x = 4, 5, 0, 1, 2 holds only one end of the link.
        let f = Faults::parse("2,0,0,0,0,0 - 3,0,0,0,0,0\n", &t).unwrap();
        let m = map_virtual(&t, Region::whole(&t), &[10, 12, 8], &f).unwrap();
        assert_eq!(m.mechanism, Mechanism::FaultFreeBlock);
        assert_eq!(m.max_neighbor_hops, 1);
    }

    #[test]
    fn a_layer_is_skipped_when_no_block_is_clear() {
        // Y and Z meshes of 4: 12 x 9 x 8 takes 9 = (Y or Z)(3)·B, 3 of 4 layers.
        let t = tofu::tofu_torus([Axis::ring("x", 6), Axis::path("y", 4), Axis::path("z", 4)]);
        let region = Region::whole(&t);
        // A failed node at y = 1, z = 1: every 3-long Y or Z block (0..2,
        // 1..3) holds it, so a 4-long block skips layer 1.
        let mid = Faults::parse("2,1,1,0,1,0\n", &t).unwrap();
        let m = map_virtual(&t, region, &[12, 9, 8], &mid).unwrap();
        assert!(
            matches!(m.mechanism, Mechanism::SkippedLayer { coordinate: 1, .. }),
            "{:?}",
            m.mechanism
        );
        assert!(m.embedding.node_of_rank.iter().all(|n| !mid.nodes.contains(n)));
        // Across the layer: 2 hops (4 where the route would cross the
        // failed node itself, if such a pair is a virtual neighbour pair).
        assert!((2..=4).contains(&m.max_neighbor_hops), "{}", m.max_neighbor_hops);
        assert!(m.mean_neighbor_hops > 1.0 && m.mean_neighbor_hops < 1.2);
        assert_eq!(m.lost_nodes, 6 * 4 * 12);
        // Failed nodes in two Y layers: refused, with the reason.
        let two = Faults::parse("2,1,1,0,1,0\n0,2,2,0,0,0\n", &t).unwrap();
        assert!(matches!(map_virtual(&t, region, &[12, 9, 8], &two).unwrap_err(), crate::MappingError::FaultsUnavoidable { .. }));
    }
}
