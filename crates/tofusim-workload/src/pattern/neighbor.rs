//! Nearest neighbour: every packet to a neighbour through a port drawn
//! uniformly.

use rand::RngExt;

use super::{grid, Destinations};
use crate::space::NodeSpace;
use crate::{Rng, WorkloadError};
use tofusim_topology::{NodeId, PortId, Torus};

#[derive(Clone, Debug)]
pub struct Neighbor {
    torus: Torus,
}

impl Neighbor {
    pub fn new(space: &NodeSpace) -> Result<Self, WorkloadError> {
        Ok(Neighbor { torus: grid(space, "neighbor")?.clone() })
    }
}

impl Destinations for Neighbor {
    fn destination(&self, src: u32, rng: &mut Rng) -> Option<u32> {
        let ports = self.torus.ports().len() as u32;
        for _ in 0..4 * ports {
            let p = rng.random_range(0..ports);
            if let Some(w) = self.torus.neighbor(NodeId(src), PortId(p as u8)) {
                if w.0 != src {
                    return Some(w.0);
                }
            }
        }
        None
    }

    fn is_random(&self) -> bool {
        true
    }

    fn clone_box(&self) -> Box<dyn Destinations> {
        Box::new(self.clone())
    }
}
