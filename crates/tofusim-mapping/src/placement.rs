//! A job's virtual torus as RMATT sees it: node positions, hop distances
//! and dimension-order routes, and the two costs of a rank order on it
//! ([S:003]): hop-bytes and the maximum link load.
//!
//! A rank order maps rank → node, nodes numbered with x fastest; the
//! default "x-y order" is the identity.

use crate::comm_list::CommList;
use crate::MappingError;

/// A 1D, 2D or 3D torus (every axis wraps).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TorusShape {
    pub lengths: Vec<u32>,
    coords: Vec<[u32; 3]>,
}

impl TorusShape {
    /// `lengths`: 1 to 3 axes, each ≥ 1.
    pub fn new(lengths: &[u32]) -> Result<Self, MappingError> {
        if lengths.is_empty() || lengths.len() > 3 || lengths.contains(&0) {
            return Err(MappingError::TorusLengths(lengths.to_vec()));
        }
        let n: u64 = lengths.iter().map(|&l| l as u64).product();
        if n > 1 << 24 {
            return Err(MappingError::TooManyNodes(n));
        }
        let mut l3 = [1u32; 3];
        l3[..lengths.len()].copy_from_slice(lengths);
        let coords = (0..n as u32)
            .map(|v| [v % l3[0], (v / l3[0]) % l3[1], v / (l3[0] * l3[1])])
            .collect();
        Ok(Self {
            lengths: lengths.to_vec(),
            coords,
        })
    }

    /// Parses `32x32`, `128x64`, `8x8x8`.
    pub fn parse(text: &str) -> Result<Self, MappingError> {
        let lengths: Result<Vec<u32>, _> = text.split('x').map(|p| p.trim().parse()).collect();
        match lengths {
            Ok(l) => Self::new(&l),
            Err(_) => Err(MappingError::TorusText(text.to_string())),
        }
    }

    pub fn nodes(&self) -> u32 {
        self.coords.len() as u32
    }

    pub fn coords(&self, node: u32) -> [u32; 3] {
        self.coords[node as usize]
    }

    fn axis(&self, k: usize) -> u32 {
        self.lengths.get(k).copied().unwrap_or(1)
    }

    pub fn node(&self, c: [u32; 3]) -> u32 {
        c[0] + self.axis(0) * (c[1] + self.axis(1) * c[2])
    }

    /// Minimum hops between two nodes.
    pub fn hops(&self, a: u32, b: u32) -> u32 {
        let (ca, cb) = (self.coords[a as usize], self.coords[b as usize]);
        (0..self.lengths.len())
            .map(|k| {
                let d = ca[k].abs_diff(cb[k]);
                d.min(self.lengths[k] - d)
            })
            .sum()
    }

    /// Directed links: node × 2 per axis (+, −).
    pub fn links(&self) -> usize {
        self.coords.len() * 2 * self.lengths.len()
    }

    /// The neighbour of `node` one step along `axis` (`plus` or minus).
    pub fn step(&self, node: u32, axis: usize, plus: bool) -> u32 {
        let mut c = self.coords[node as usize];
        let l = self.lengths[axis];
        c[axis] = if plus { (c[axis] + 1) % l } else { (c[axis] + l - 1) % l };
        self.node(c)
    }

    /// The links of the dimension-order route from `a` to `b` (shortest
    /// direction per axis, + on ties), appended to `out`.
    pub fn route(&self, a: u32, b: u32, out: &mut Vec<u32>) {
        let dims = self.lengths.len();
        let mut cur = self.coords[a as usize];
        let target = self.coords[b as usize];
        for k in 0..dims {
            let l = self.lengths[k];
            let fwd = (target[k] + l - cur[k]) % l;
            let (plus, steps) = if fwd <= l - fwd { (true, fwd) } else { (false, l - fwd) };
            for _ in 0..steps {
                let node = self.node(cur);
                out.push((node as usize * 2 * dims + 2 * k + usize::from(!plus)) as u32);
                cur[k] = if plus { (cur[k] + 1) % l } else { (cur[k] + l - 1) % l };
            }
        }
    }
}

/// Σ bytes × hops of `comm` placed by `order` (rank → node).
pub fn hop_bytes(shape: &TorusShape, comm: &CommList, order: &[u32]) -> u64 {
    comm.flows
        .iter()
        .map(|f| f.bytes * shape.hops(order[f.src as usize], order[f.dst as usize]) as u64)
        .sum()
}

/// Bytes on each directed link under dimension-order routing.
pub fn link_loads(shape: &TorusShape, comm: &CommList, order: &[u32]) -> Vec<u64> {
    let mut loads = vec![0u64; shape.links()];
    let mut path = Vec::new();
    for f in &comm.flows {
        path.clear();
        shape.route(order[f.src as usize], order[f.dst as usize], &mut path);
        for &l in &path {
            loads[l as usize] += f.bytes;
        }
    }
    loads
}

/// The most bytes on any one link under dimension-order routing.
pub fn max_link_load(shape: &TorusShape, comm: &CommList, order: &[u32]) -> u64 {
    link_loads(shape, comm, order).into_iter().max().unwrap_or(0)
}

/// Checks that `order` places every rank of `comm` on a distinct node.
pub fn check_order(shape: &TorusShape, ranks: u32, order: &[u32]) -> Result<(), MappingError> {
    check_placement(shape, ranks, order, 1)
}

/// Checks that `order` places every rank on a node of `shape`, at most
/// `per_node` on each (several ranks per node: one per core).
pub fn check_placement(shape: &TorusShape, ranks: u32, order: &[u32], per_node: u32) -> Result<(), MappingError> {
    let per_node = per_node.max(1);
    if order.len() != ranks as usize {
        return Err(MappingError::OrderLength { entries: order.len(), ranks });
    }
    if ranks as u64 > shape.nodes() as u64 * per_node as u64 {
        return Err(if per_node == 1 {
            MappingError::RanksExceedTorus { ranks, nodes: shape.nodes() }
        } else {
            MappingError::RanksExceedSlots { ranks, nodes: shape.nodes(), per_node }
        });
    }
    let mut held = vec![0u32; shape.nodes() as usize];
    for (r, &n) in order.iter().enumerate() {
        if n >= shape.nodes() {
            return Err(MappingError::RankBeyond { rank: r, node: n });
        }
        let h = &mut held[n as usize];
        if *h == per_node {
            return Err(if per_node == 1 { MappingError::RankShares { rank: r, node: n } } else { MappingError::NodeFull { rank: r, node: n, per_node } });
        }
        *h += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm_list::Flow;

    #[test]
    fn routes_are_shortest_and_dimension_ordered() {
        let t = TorusShape::parse("8x5").unwrap();
        let mut p = Vec::new();
        for a in 0..t.nodes() {
            for b in 0..t.nodes() {
                p.clear();
                t.route(a, b, &mut p);
                assert_eq!(p.len() as u32, t.hops(a, b));
            }
        }
        // 0 → 7 on the 8-ring goes the short way, over the wrap link (x−).
        p.clear();
        t.route(0, 7, &mut p);
        assert_eq!(p, vec![1]);
    }

    #[test]
    fn costs_of_a_ring_pattern() {
        let t = TorusShape::parse("4x4").unwrap();
        let comm = CommList::new(
            16,
            (0..16).map(|r| Flow {
                src: r,
                dst: (r + 1) % 16,
                bytes: 10,
            }),
        );
        let id: Vec<u32> = (0..16).collect();
        // 12 one-hop flows along x; the 4 row changes (3,y) → (0,y+1) take
        // the x wrap link and one y link: 2 hops each. No link is shared.
        assert_eq!(hop_bytes(&t, &comm, &id), 10 * (12 + 4 * 2));
        assert_eq!(max_link_load(&t, &comm, &id), 10);
        assert!(check_order(&t, 16, &id).is_ok());
        assert!(check_order(&t, 16, &[0; 16]).is_err());
    }
}
