//! Shift: every node streams to the node `hops` further along an axis
//! (wrapping in the coordinate), one stream per link of that direction at
//! `hops = 1`; on a dragonfly or fat-tree, along the nodes' numbering
//! (router by router, group or leaf switch at a time).

use super::Destinations;
use crate::space::NodeSpace;
use crate::{Rng, WorkloadError};
use tofusim_topology::{NodeId, Torus};

#[derive(Clone, Debug)]
pub struct Shift {
    /// The torus, or `None`: along the numbering of `nodes`.
    torus: Option<Torus>,
    nodes: u32,
    axis: usize,
    hops: u32,
}

impl Shift {
    pub fn new(space: &NodeSpace, axis: usize, hops: u32) -> Result<Self, WorkloadError> {
        let lens = space.axis_lengths();
        let Some(&len) = lens.get(axis) else {
            return Err(WorkloadError { key: "axis", message: format!("expected an axis below {}, found {axis}", lens.len()) });
        };
        if len < 2 {
            return Err(WorkloadError { key: "axis", message: format!("axis {axis} has length {len}: a shift needs at least 2 nodes along it") });
        }
        Ok(Shift { torus: space.grid().cloned(), nodes: space.nodes(), axis, hops })
    }
}

impl Destinations for Shift {
    fn destination(&self, src: u32, _rng: &mut Rng) -> Option<u32> {
        let dst = match &self.torus {
            Some(t) => {
                let mut c = t.coords(NodeId(src));
                c[self.axis] = (c[self.axis] + self.hops) % t.lengths()[self.axis];
                t.node_id(&c).0
            }
            None => ((src as u64 + self.hops as u64) % self.nodes as u64) as u32,
        };
        (dst != src).then_some(dst)
    }

    fn clone_box(&self) -> Box<dyn Destinations> {
        Box::new(self.clone())
    }
}
