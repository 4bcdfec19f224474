//! The virtual 3D torus (2X, 3Y, 2Z) of a Tofu system X×Y×Z×2×3×2: the
//! virtual x axis is the cycle of (X, A), y of (Y, B), z of (Z, C). Rank =
//! vx + 2X·(vy + 3Y·vz). This is the full K computer's 48×54×32 shape.

use crate::cycle::{helix, snake};
use tofusim_topology::{tofu, Torus};

pub struct VirtualTorus {
    pub shape: [u32; 3],
    node_of_rank: Vec<u32>,
}

impl VirtualTorus {
    /// The virtual torus of a whole Tofu network, or `None` if `t` is not Tofu.
    pub fn of_tofu(t: &Torus) -> Option<Self> {
        if !tofu::is_tofu(t) {
            return None;
        }
        let l = t.lengths();
        let (xa, yb, zc) = (snake(l[0]), helix(l[1]), snake(l[2]));
        let shape = [xa.len() as u32, yb.len() as u32, zc.len() as u32];
        let mut node_of_rank = Vec::with_capacity(t.node_count() as usize);
        for &(z, c) in &zc {
            for &(y, b) in &yb {
                for &(x, a) in &xa {
                    node_of_rank.push(t.node_id(&[x, y, z, a, b, c]).0);
                }
            }
        }
        Some(Self {
            shape,
            node_of_rank,
        })
    }

    pub fn node_of_rank(&self) -> &[u32] {
        &self.node_of_rank
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tofusim_topology::Axis;

    #[test]
    fn virtual_neighbours_are_physical_neighbours() {
        for (x, y, z) in [(2, 2, 2), (3, 3, 2), (4, 5, 3), (2, 1, 2), (1, 2, 1)] {
            let t = tofu::tofu_torus([Axis::ring("x", x), Axis::path("y", y), Axis::ring("z", z)]);
            let v = VirtualTorus::of_tofu(&t).unwrap();
            let [lx, ly, lz] = v.shape;
            let rank = |c: [u32; 3]| (c[0] + lx * (c[1] + ly * c[2])) as usize;
            let mut seen = std::collections::HashSet::new();
            assert!(v.node_of_rank().iter().all(|n| seen.insert(*n)));
            assert_eq!(seen.len() as u64, t.node_count());
            for vz in 0..lz {
                for vy in 0..ly {
                    for vx in 0..lx {
                        let a = v.node_of_rank()[rank([vx, vy, vz])];
                        for n in [
                            [(vx + 1) % lx, vy, vz],
                            [vx, (vy + 1) % ly, vz],
                            [vx, vy, (vz + 1) % lz],
                        ] {
                            let b = v.node_of_rank()[rank(n)];
                            if a != b {
                                assert_eq!(
                                    t.distance(
                                        tofusim_topology::NodeId(a),
                                        tofusim_topology::NodeId(b)
                                    ),
                                    1
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
