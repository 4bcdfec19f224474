//! Transpose: the node at (c0, c1, …, cn) sends to (c1, …, cn, c0), on a
//! torus whose axes are all of one length.

use super::{grid, Destinations};
use crate::space::NodeSpace;
use crate::{Rng, WorkloadError};
use tofusim_topology::{NodeId, Torus};

#[derive(Clone, Debug)]
pub struct Transpose {
    torus: Torus,
}

impl Transpose {
    pub fn new(space: &NodeSpace) -> Result<Self, WorkloadError> {
        let torus = grid(space, "transpose")?;
        let l = torus.lengths();
        if l.len() < 2 || l.iter().any(|&x| x != l[0]) {
            return Err(WorkloadError { key: "pattern", message: "transpose needs at least 2 axes of equal length".into() });
        }
        Ok(Transpose { torus: torus.clone() })
    }
}

impl Destinations for Transpose {
    fn destination(&self, src: u32, _rng: &mut Rng) -> Option<u32> {
        let mut d = self.torus.coords(NodeId(src));
        d.rotate_left(1);
        let dst = self.torus.node_id(&d).0;
        (dst != src).then_some(dst)
    }

    fn clone_box(&self) -> Box<dyn Destinations> {
        Box::new(self.clone())
    }
}
