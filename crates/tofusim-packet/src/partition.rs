//! Spatial partitions: which router each partition simulates.
//!
//! Partitions are blocks of the network with few links between them: on a
//! torus, slabs of consecutive coordinates of its longest axis (BG/L: a
//! 32-long Z cut into halves crosses only 2 × 1,024 link pairs of 196,608);
//! on a dragonfly, runs of consecutive groups. With more partitions than
//! slabs or groups, consecutive router numbers. Results do not depend on
//! the partitioning (see the engine's window loop); only speed does.

use std::sync::Arc;

use tofusim_routing::Routing;
use tofusim_topology::NodeId;

/// The partition of every router.
#[derive(Clone, Debug)]
pub struct PartitionPlan {
    pub owner: Arc<[u16]>,
    pub parts: usize,
    /// How the network was cut, for reports.
    pub how: String,
}

/// Which routers an engine simulates: the whole network, or one
/// partition's routers. An engine's arrays are indexed by the network's
/// router numbers, but a partition writes only its own routers' entries:
/// [`Self::filled`] leaves the others zero, in pages the allocator hands
/// out zeroed and that, never written, take no memory. So a partition
/// holds about its share of the network, not the whole of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ownership<'a> {
    owner: Option<&'a [u16]>,
    me: u16,
}

impl<'a> Ownership<'a> {
    /// Every router.
    pub fn whole() -> Self {
        Ownership { owner: None, me: 0 }
    }

    /// The routers `owner` gives to partition `me`.
    pub fn of(owner: &'a [u16], me: u16) -> Self {
        Ownership { owner: Some(owner), me }
    }

    #[inline]
    pub fn owns(&self, router: usize) -> bool {
        self.owner.is_none_or(|o| o[router] == self.me)
    }

    /// `per` entries per router of `routers`: `value` for the routers
    /// owned, zero (never written) for the others.
    pub fn filled<T: Copy + Default + PartialEq>(&self, routers: usize, per: usize, value: T) -> Vec<T> {
        let mut v = vec![T::default(); routers * per];
        if value != T::default() {
            for r in (0..routers).filter(|&r| self.owns(r)) {
                v[r * per..(r + 1) * per].fill(value);
            }
        }
        v
    }
}

/// Most partitions a run may have (partition numbers are `u16`).
pub const MAX_PARTITIONS: usize = 4096;

impl PartitionPlan {
    /// `parts` partitions of `routing`'s routers (at least one router each).
    pub fn new(routing: &Routing, parts: usize) -> Self {
        let routers = routing.routers();
        let parts = parts.clamp(1, routers.clamp(1, MAX_PARTITIONS));
        let by_id = |how: String| {
            let owner: Vec<u16> = (0..routers).map(|r| (r * parts / routers) as u16).collect();
            (owner, how)
        };
        let (owner, how) = match routing {
            _ if parts == 1 => by_id("one partition".into()),
            Routing::Torus(t) => {
                let torus = t.torus();
                let lengths = torus.lengths();
                // The longest axis, the last of equals (its slabs are the
                // most contiguous in router numbering).
                let axis = (0..lengths.len()).max_by_key(|&a| lengths[a]).unwrap_or(0);
                let len = lengths[axis] as usize;
                if parts <= len {
                    let mut c = Vec::new();
                    let owner = (0..routers)
                        .map(|r| {
                            torus.coords_into(NodeId(r as u32), &mut c);
                            (c[axis] as usize * parts / len) as u16
                        })
                        .collect();
                    (owner, format!("{parts} slabs of axis {axis} (length {len})"))
                } else {
                    by_id(format!("{parts} runs of consecutive routers"))
                }
            }
            Routing::Dragonfly(d) => {
                let groups = d.groups() as usize;
                if parts <= groups {
                    let owner = (0..routers).map(|r| (d.group(r as u32) as usize * parts / groups) as u16).collect();
                    (owner, format!("{parts} runs of consecutive groups (of {groups})"))
                } else {
                    by_id(format!("{parts} runs of consecutive routers"))
                }
            }
            // Switches are numbered level by level, leaves first.
            Routing::FatTree(_) => by_id(format!("{parts} runs of consecutive switches")),
        };
        Self { owner: owner.into(), parts, how }
    }

    /// Routers of each partition.
    pub fn sizes(&self) -> Vec<u64> {
        let mut n = vec![0u64; self.parts];
        for &p in self.owner.iter() {
            n[p as usize] += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tofusim_routing::{EscapeOrder, TorusRouting};
    use tofusim_topology::Torus;

    #[test]
    fn a_torus_is_cut_across_its_longest_axis() {
        let t = Torus::with_lengths(&[4, 8, 2], &[true; 3]);
        let r = Routing::Torus(TorusRouting::new(&t, &[0, 1, 2], EscapeOrder::Dimension));
        let p = PartitionPlan::new(&r, 2);
        assert_eq!(p.sizes(), vec![32, 32]);
        // Neighbours along X and Z stay together; only Y links cross.
        let mut c = Vec::new();
        for n in 0..64u32 {
            t.coords_into(NodeId(n), &mut c);
            assert_eq!(p.owner[n as usize], (c[1] / 4) as u16);
        }
        assert_eq!(PartitionPlan::new(&r, 16).sizes(), vec![4; 16]);
        assert_eq!(PartitionPlan::new(&r, 1000).parts, 64);
    }
}

#[cfg(test)]
mod ownership_tests {
    use super::Ownership;

    #[test]
    fn a_partition_fills_only_its_routers() {
        let owner = [0u16, 1, 1, 0];
        let v = Ownership::of(&owner, 1).filled(4, 2, 7u32);
        assert_eq!(v, [0, 0, 7, 7, 7, 7, 0, 0]);
        assert_eq!(Ownership::whole().filled(2, 1, u64::MAX), [u64::MAX; 2]);
    }
}
