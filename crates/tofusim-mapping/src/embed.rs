//! Virtual 1D/2D/3D tori in a Tofu job region ([S:003], [S:001]): each
//! virtual axis is a Hamiltonian cycle of a product of physical axes, and
//! each physical axis serves one virtual axis, so every pair of
//! virtual-torus neighbours (wrap-around included) is one physical hop
//! apart.
//!
//! A region is an XYZ block (contiguous, whole in ABC). A virtual shape is
//! embedded in a sub-block of it: the search tries every assignment of the
//! six physical axes X, Y, Z, A, B, C to the virtual axes and every block
//! size whose products give the virtual lengths exactly, and keeps the
//! block with the fewest unused (padding) nodes that carries the cycles.
//! Rotated shapes (54x48x32 or 32x54x48) are just other assignments.
//!
//! The cycle of one virtual axis over its physical axes:
//! - one axis: a ring (≥ 3), or a pair (2: both neighbours are the other
//!   node); a mesh axis longer than 2 alone cannot close;
//! - several axes with an even one E: a boustrophedon path P over the
//!   others, then the comb of P × E (out along P on E = 0, back in rows);
//!   no wrap link of a mesh axis is needed, so it works in any sub-block;
//! - all odd: a ring R among them is needed (B, or a whole XYZ ring): the
//!   path P over the others, then P × R closed with one wrap link of R.
//!
//! Rank = virtual coordinates with the first virtual axis fastest.

use tofusim_topology::{tofu, NodeId, Torus};
use crate::MappingError;

/// An XYZ block of a Tofu system, whole in A, B, C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub origin: [u32; 3],
    pub size: [u32; 3],
}

impl Region {
    pub fn whole(t: &Torus) -> Self {
        let l = t.lengths();
        Self {
            origin: [0; 3],
            size: [l[0], l[1], l[2]],
        }
    }

    pub fn nodes(&self) -> u64 {
        self.size.iter().map(|&s| s as u64).product::<u64>() * 12
    }

    /// Checks the region fits `t` (it may wrap around a ring axis).
    pub fn check(&self, t: &Torus) -> Result<(), MappingError> {
        let l = t.lengths();
        for k in 0..3 {
            let name = ["X", "Y", "Z"][k];
            if self.size[k] == 0 || self.size[k] > l[k] {
                return Err(MappingError::RegionSize { axis: name, max: l[k], got: self.size[k] });
            }
            if self.origin[k] >= l[k] {
                return Err(MappingError::RegionOrigin { axis: name, limit: l[k], got: self.origin[k] });
            }
            if !t.axes()[k].is_ring() && self.origin[k] + self.size[k] > l[k] {
                return Err(MappingError::RegionPastEnd { axis: name, origin: self.origin[k], size: self.size[k], length: l[k] });
            }
        }
        Ok(())
    }
}

/// A block size (X, Y, Z) and the virtual axis each of X, Y, Z, A, B, C
/// serves.
pub type Layout = ([u32; 3], [usize; 6]);

/// One physical axis of a block as a factor of a virtual axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Factor {
    /// 0..6: X, Y, Z, A, B, C.
    axis: usize,
    len: u32,
    /// Wrap link usable (B, or an XYZ ring covered whole by the block).
    ring: bool,
}

const AXIS_NAMES: [&str; 6] = ["X", "Y", "Z", "A", "B", "C"];

/// A virtual torus laid on a block: which physical axes serve each virtual
/// axis and where each rank sits.
#[derive(Clone, Debug)]
pub struct Embedding {
    pub virtual_shape: Vec<u32>,
    /// The block used (a sub-block of the region).
    pub block: Region,
    /// Per virtual axis, the physical axes (names) whose product it cycles.
    pub axes: Vec<Vec<&'static str>>,
    /// rank → node id.
    pub node_of_rank: Vec<u32>,
    /// Per XYZ axis, the physical coordinate of each block offset (a block
    /// with a skipped layer maps offsets around it).
    pub layers: [Vec<u32>; 3],
}

/// Sequence of mixed-radix coordinates over `lens` in which consecutive
/// entries differ by one in one coordinate (boustrophedon).
fn boustrophedon(lens: &[u32]) -> Vec<Vec<u32>> {
    match lens.split_first() {
        None => vec![vec![]],
        Some((&l0, rest)) => {
            let sub = boustrophedon(rest);
            let mut out = Vec::with_capacity(sub.len() * l0 as usize);
            for o in 0..l0 {
                let inner: Box<dyn Iterator<Item = &Vec<u32>>> = if o % 2 == 0 {
                    Box::new(sub.iter())
                } else {
                    Box::new(sub.iter().rev())
                };
                for v in inner {
                    let mut c = Vec::with_capacity(v.len() + 1);
                    c.push(o);
                    c.extend_from_slice(v);
                    out.push(c);
                }
            }
            out
        }
    }
}

/// A Hamiltonian cycle over the product of `factors`, as per-factor
/// coordinates in cycle order, or why there is none we can build.
fn cycle(factors: &[Factor]) -> Result<Vec<Vec<u32>>, MappingError> {
    let live: Vec<usize> = (0..factors.len()).filter(|&i| factors[i].len > 1).collect();
    let expand = |short: Vec<Vec<u32>>| -> Vec<Vec<u32>> {
        short
            .into_iter()
            .map(|c| {
                let mut full = vec![0; factors.len()];
                for (k, &i) in live.iter().enumerate() {
                    full[i] = c[k];
                }
                full
            })
            .collect()
    };
    match live.len() {
        0 => return Ok(vec![vec![0; factors.len()]]),
        1 => {
            let f = factors[live[0]];
            if f.len == 2 || f.ring {
                return Ok(expand((0..f.len).map(|v| vec![v]).collect()));
            }
            return Err(MappingError::NoCycle(format!(
                "the {} axis alone is a mesh of {} nodes: it has no wrap link to close a ring",
                AXIS_NAMES[f.axis], f.len
            )));
        }
        _ => {}
    }
    let lens: Vec<u32> = live.iter().map(|&i| factors[i].len).collect();
    // An even factor: the comb. Prefer A and C (the pairs).
    let even = (0..live.len())
        .filter(|&k| lens[k].is_multiple_of(2))
        .max_by_key(|&k| (factors[live[k]].axis >= 3, std::cmp::Reverse(k)));
    if let Some(e) = even {
        let others: Vec<usize> = (0..live.len()).filter(|&k| k != e).collect();
        let path = boustrophedon(&others.iter().map(|&k| lens[k]).collect::<Vec<_>>());
        let m = path.len();
        let at = |i: usize, j: u32| {
            let mut c = vec![0; live.len()];
            for (q, &k) in others.iter().enumerate() {
                c[k] = path[i][q];
            }
            c[e] = j;
            c
        };
        let mut out = Vec::with_capacity(m * lens[e] as usize);
        for j in 0..lens[e] {
            if j % 2 == 0 {
                out.extend((1..m).map(|i| at(i, j)));
            } else {
                out.extend((1..m).rev().map(|i| at(i, j)));
            }
        }
        out.extend((0..lens[e]).rev().map(|j| at(0, j)));
        return Ok(expand(out));
    }
    // All odd: close with the wrap link of a ring.
    let Some(r) = (0..live.len()).find(|&k| factors[live[k]].ring) else {
        let names: Vec<&str> = live.iter().map(|&i| AXIS_NAMES[factors[i].axis]).collect();
        return Err(MappingError::NoCycle(format!(
            "{} nodes over {} (all odd mesh lengths) have no Hamiltonian cycle",
            lens.iter().product::<u32>(),
            names.join("·")
        )));
    };
    let others: Vec<usize> = (0..live.len()).filter(|&k| k != r).collect();
    let path = boustrophedon(&others.iter().map(|&k| lens[k]).collect::<Vec<_>>());
    let (m, rl) = (path.len(), lens[r]);
    let at = |i: usize, j: u32| {
        let mut c = vec![0; live.len()];
        for (q, &k) in others.iter().enumerate() {
            c[k] = path[i][q];
        }
        c[r] = j;
        c
    };
    // Row 0 across the ring, column rl−1 down the path, the wrap link to
    // column 0, then the rows back up over columns 0..rl−1 in a serpentine
    // (m − 1 rows, an even number since m is odd), ending next to (0, 0).
    let mut out: Vec<Vec<u32>> = (0..rl).map(|j| at(0, j)).collect();
    out.extend((1..m).map(|i| at(i, rl - 1)));
    for (n, i) in (1..m).rev().enumerate() {
        if n % 2 == 0 {
            out.extend((0..rl - 1).map(|j| at(i, j)));
        } else {
            out.extend((0..rl - 1).rev().map(|j| at(i, j)));
        }
    }
    Ok(expand(out))
}

/// Divisors of `n` no larger than `max`.
fn divisors(n: u32, max: u32) -> impl Iterator<Item = u32> {
    (1..=n.min(max)).filter(move |&d| n.is_multiple_of(d))
}

/// Every block size (sx, sy, sz) within `limit` and assignment of the six
/// axes to virtual axes whose products are `shape`; `visit` returns true to
/// stop.
fn for_each_layout(
    shape: &[u32],
    limit: [u32; 3],
    visit: &mut dyn FnMut([u32; 3], &[usize; 6]) -> bool,
) {
    let k = shape.len();
    let total = k.pow(6);
    for code in 0..total {
        let mut assign = [0usize; 6];
        let mut c = code;
        for a in &mut assign {
            *a = c % k;
            c /= k;
        }
        // Per virtual axis: the fixed ABC product and its XYZ axes.
        let mut fixed = vec![1u32; k];
        for (ax, &v) in assign.iter().enumerate().skip(3) {
            fixed[v] *= tofu::ABC[ax - 3];
        }
        let mut sizes = [1u32; 3];
        if !fill(shape, &assign, &fixed, limit, 0, &mut sizes, visit) {
            return;
        }
    }
}

/// Chooses the XYZ sizes one axis at a time; false = stop everything.
fn fill(
    shape: &[u32],
    assign: &[usize; 6],
    fixed: &[u32],
    limit: [u32; 3],
    axis: usize,
    sizes: &mut [u32; 3],
    visit: &mut dyn FnMut([u32; 3], &[usize; 6]) -> bool,
) -> bool {
    if axis == 3 {
        let ok = (0..shape.len()).all(|v| {
            let p: u64 = fixed[v] as u64
                * (0..3).filter(|&a| assign[a] == v).map(|a| sizes[a] as u64).product::<u64>();
            p == shape[v] as u64
        });
        return !(ok && visit(*sizes, assign));
    }
    let v = assign[axis];
    // What the other XYZ axes of this virtual axis still have to give.
    let target = shape[v];
    if !target.is_multiple_of(fixed[v]) {
        return true;
    }
    for d in divisors(target / fixed[v], limit[axis]).collect::<Vec<_>>() {
        sizes[axis] = d;
        if !fill(shape, assign, fixed, limit, axis + 1, sizes, visit) {
            return false;
        }
    }
    sizes[axis] = 1;
    true
}

/// Parses `54x48x32`, `576x144`, `82944`.
pub fn parse_shape(text: &str) -> Result<Vec<u32>, MappingError> {
    let v: Result<Vec<u32>, _> = text.split('x').map(|p| p.trim().parse::<u32>()).collect();
    match v {
        Ok(v) if !v.is_empty() && v.len() <= 3 && !v.contains(&0) => Ok(v),
        _ => Err(MappingError::ShapeText(text.to_string())),
    }
}

/// Builds the embedding of `shape` on `block` with `assign` (physical axis
/// → virtual axis), `layers` giving each XYZ offset's physical coordinate.
fn build(t: &Torus, shape: &[u32], block: Region, assign: &[usize; 6], layers: [Vec<u32>; 3]) -> Result<Embedding, MappingError> {
    let lens = t.lengths();
    let k = shape.len();
    let mut cycles = Vec::with_capacity(k);
    let mut axes = Vec::with_capacity(k);
    for (v, &length) in shape.iter().enumerate() {
        let factors: Vec<Factor> = (0..6)
            .filter(|&a| assign[a] == v)
            .map(|a| {
                let (len, ring) = if a < 3 {
                    let whole = block.size[a] == lens[a] && layers[a].len() as u32 == lens[a];
                    (block.size[a], whole && t.axes()[a].is_ring() && lens[a] >= 3)
                } else {
                    (tofu::ABC[a - 3], a == 4)
                };
                Factor { axis: a, len, ring }
            })
            .collect();
        axes.push(factors.iter().filter(|f| f.len > 1).map(|f| AXIS_NAMES[f.axis]).collect());
        let c = cycle(&factors)?;
        debug_assert_eq!(c.len() as u32, length);
        cycles.push((factors, c));
    }
    let ranks: u64 = shape.iter().map(|&s| s as u64).product();
    let mut node_of_rank = Vec::with_capacity(ranks as usize);
    let mut vc = vec![0u32; k];
    let mut coords = [0u32; 6];
    for _ in 0..ranks {
        for (v, (factors, c)) in cycles.iter().enumerate() {
            for (f, &x) in factors.iter().zip(&c[vc[v] as usize]) {
                coords[f.axis] = x;
            }
        }
        for a in 0..3 {
            coords[a] = layers[a][coords[a] as usize];
        }
        node_of_rank.push(t.node_id(&coords).0);
        // Next virtual coordinate, the first axis fastest.
        for v in 0..k {
            vc[v] += 1;
            if vc[v] < shape[v] {
                break;
            }
            vc[v] = 0;
        }
    }
    Ok(Embedding {
        virtual_shape: shape.to_vec(),
        block,
        axes,
        node_of_rank,
        layers,
    })
}

/// Physical coordinates of a block's offsets along one axis, starting at
/// `origin`, wrapping on a ring, skipping `skip` if given.
fn layer_map(t: &Torus, axis: usize, origin: u32, size: u32, skip: Option<u32>) -> Vec<u32> {
    let l = t.lengths()[axis];
    (0..l)
        .map(|d| (origin + d) % l)
        .filter(|&c| Some(c) != skip)
        .take(size as usize)
        .collect()
}

/// Up to `max` embeddings of `shape` in `region`, in a fixed order
/// (deterministic): block sizes and axis assignments that carry the cycles
/// (every block holds exactly the ranks; the rest of the region is
/// padding).
pub fn layouts(t: &Torus, region: Region, shape: &[u32], max: usize) -> Result<Vec<Layout>, MappingError> {
    if !tofu::is_tofu(t) {
        return Err(MappingError::NotTofu);
    }
    region.check(t)?;
    let ranks: u64 = shape.iter().map(|&s| s as u64).product();
    if ranks > region.nodes() {
        return Err(MappingError::RanksExceedRegion { ranks, nodes: region.nodes() });
    }
    let mut found: Vec<Layout> = Vec::new();
    let mut why: Option<MappingError> = None;
    for_each_layout(shape, region.size, &mut |size, assign| {
        let block = Region { origin: region.origin, size };
        let layers = std::array::from_fn(|a| layer_map(t, a, region.origin[a], size[a], None));
        match build(t, shape, block, assign, layers) {
            Ok(_) => found.push((size, *assign)),
            Err(e) => {
                why.get_or_insert(e);
            }
        }
        found.len() >= max
    });
    if found.is_empty() {
        return Err(why.unwrap_or_else(|| MappingError::NoBlock {
            shape: shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x"),
            region: region.size,
        }));
    }
    Ok(found)
}

/// The embedding of `shape` at the region's origin with the fewest padding
/// nodes.
pub fn embed(t: &Torus, region: Region, shape: &[u32]) -> Result<Embedding, MappingError> {
    let (size, assign) = layouts(t, region, shape, 1)?[0];
    let block = Region { origin: region.origin, size };
    let layers = std::array::from_fn(|a| layer_map(t, a, region.origin[a], size[a], None));
    build(t, shape, block, &assign, layers)
}

pub(crate) fn build_at(t: &Torus, shape: &[u32], origin: [u32; 3], size: [u32; 3], assign: &[usize; 6], skip: [Option<u32>; 3]) -> Result<Embedding, MappingError> {
    let layers = std::array::from_fn(|a| layer_map(t, a, origin[a], size[a], skip[a]));
    build(t, shape, Region { origin, size }, assign, layers)
}

/// Hops between two nodes of `t` (no faults): the torus distance.
pub fn hops(t: &Torus, a: u32, b: u32) -> u32 {
    t.distance(NodeId(a), NodeId(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tofusim_topology::Axis;

    pub(crate) fn k_computer() -> Torus {
        tofu::tofu_torus([Axis::ring("x", 24), Axis::path("y", 18), Axis::ring("z", 16)])
    }

    /// Every virtual neighbour pair one hop apart, every node used once.
    pub(crate) fn check(t: &Torus, e: &Embedding) {
        let shape = &e.virtual_shape;
        let n: usize = shape.iter().map(|&s| s as usize).product();
        assert_eq!(e.node_of_rank.len(), n);
        let mut seen = std::collections::HashSet::new();
        assert!(e.node_of_rank.iter().all(|&v| seen.insert(v)), "a node used twice");
        let mut stride = 1usize;
        for (v, &l) in shape.iter().enumerate() {
            for r in 0..n {
                let c = (r / stride) % l as usize;
                let next = r - c * stride + ((c + 1) % l as usize) * stride;
                let (a, b) = (e.node_of_rank[r], e.node_of_rank[next]);
                if a != b {
                    assert_eq!(hops(t, a, b), 1, "axis {v}: rank {r} -> {next} on {shape:?}");
                }
            }
            stride *= l as usize;
        }
    }

    #[test]
    fn full_k_computer_shapes_embed_with_no_padding() {
        let t = k_computer();
        for shape in ["54x48x32", "576x144", "82944", "48x54x32", "32x48x54", "144x576", "48x32x54"] {
            let e = embed(&t, Region::whole(&t), &parse_shape(shape).unwrap()).unwrap();
            check(&t, &e);
            assert_eq!(e.block.size, [24, 18, 16], "{shape}");
        }
        // The source's factorisation of the 3D shape: 54 = Y·B, 48 = X·A, 32 = Z·C.
        let e = embed(&t, Region::whole(&t), &[54, 48, 32]).unwrap();
        assert_eq!(e.axes[0], vec!["Y", "B"]);
    }

    #[test]
    fn impossible_shapes_are_refused_with_a_reason() {
        let t = k_computer();
        let whole = Region::whole(&t);
        // 7 is prime and longer than nothing can give (no axis of 7).
        assert!(matches!(embed(&t, whole, &[29]).unwrap_err(), MappingError::NoBlock { .. }));
        // 7 can only be a stretch of X, a mesh here: no wrap link to close it.
        assert!(embed(&t, whole, &[7, 12]).unwrap_err().to_string().contains("wrap link"));
        // More ranks than nodes.
        assert!(matches!(embed(&t, whole, &[100000]).unwrap_err(), MappingError::RanksExceedRegion { .. }));
        assert!(parse_shape("0x4").is_err());
        assert!(parse_shape("2x2x2x2").is_err());
    }

    #[test]
    fn cycles_cover_odd_and_even_products() {
        for lens in [vec![3, 5], vec![3, 3, 3], vec![4, 3], vec![2, 5, 3], vec![5, 2], vec![6]] {
            let factors: Vec<Factor> = lens
                .iter()
                .enumerate()
                .map(|(i, &l)| Factor { axis: i, len: l, ring: i == 0 })
                .collect();
            let c = cycle(&factors).unwrap();
            let n: u32 = lens.iter().product();
            assert_eq!(c.len() as u32, n);
            for i in 0..c.len() {
                let (a, b) = (&c[i], &c[(i + 1) % c.len()]);
                let d: u32 = (0..lens.len())
                    .map(|k| {
                        let d = a[k].abs_diff(b[k]);
                        if factors[k].ring { d.min(lens[k] - d) } else { d }
                    })
                    .sum();
                assert!(d == 1 || n == 2, "{lens:?}: {a:?} -> {b:?}");
            }
        }
        // Odd mesh lengths only: refused.
        let f = [Factor { axis: 0, len: 3, ring: false }, Factor { axis: 1, len: 5, ring: false }];
        assert!(cycle(&f).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Random sub-regions of the K computer and random shapes built
        /// from them (any grouping of the six axes, in any order).
        #[test]
        fn random_sub_regions_and_rotations_keep_neighbours_adjacent(
            origin in proptest::array::uniform3(0u32..24),
            size in proptest::array::uniform3(1u32..7),
            groups in proptest::array::uniform6(0usize..3),
            dims in 1usize..4,
            rotate in 0usize..6,
        ) {
            let t = k_computer();
            let origin = [origin[0], origin[1] % 18, origin[2] % 16];
            let size = [size[0], size[1].min(18 - origin[1]), size[2]];
            let region = Region { origin, size };
            let lens = [size[0], size[1], size[2], 2, 3, 2];
            let mut shape = vec![1u32; dims];
            for (a, &g) in groups.iter().enumerate() {
                shape[g % dims] *= lens[a];
            }
            shape.rotate_left(rotate % dims);
            match embed(&t, region, &shape) {
                Ok(e) => check(&t, &e),
                // Refusals must say why (e.g. a lone mesh axis, all-odd meshes).
                Err(why) => proptest::prop_assert!(matches!(why, MappingError::NoCycle(_) | MappingError::NoBlock { .. }), "{}", why),
            }
        }
    }
}
