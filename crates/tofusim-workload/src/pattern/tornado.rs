//! Tornado: every node sends almost half way round every ring
//! (⌈L/2⌉ − 1 hops, at least 1), the worst case of minimal routing.

use super::{grid, Destinations};
use crate::space::NodeSpace;
use crate::{Rng, WorkloadError};
use tofusim_topology::{NodeId, Torus};

#[derive(Clone, Debug)]
pub struct Tornado {
    torus: Torus,
}

impl Tornado {
    pub fn new(space: &NodeSpace) -> Result<Self, WorkloadError> {
        Ok(Tornado { torus: grid(space, "tornado")?.clone() })
    }
}

impl Destinations for Tornado {
    fn destination(&self, src: u32, _rng: &mut Rng) -> Option<u32> {
        let lens = self.torus.lengths();
        let c = self.torus.coords(NodeId(src));
        let d: Vec<u32> = c
            .iter()
            .zip(&lens)
            .map(|(&x, &l)| (x + l.div_ceil(2).saturating_sub(1).max(if l > 1 { 1 } else { 0 })) % l)
            .collect();
        let dst = self.torus.node_id(&d).0;
        (dst != src).then_some(dst)
    }

    fn clone_box(&self) -> Box<dyn Destinations> {
        Box::new(self.clone())
    }
}
