//! Uniform random traffic: every packet to a node drawn uniformly among
//! the others.

use rand::RngExt;

use super::Destinations;
use crate::space::{Alive, NodeSpace};
use crate::Rng;

#[derive(Clone, Debug)]
pub struct Uniform {
    nodes: u32,
}

impl Uniform {
    pub fn new(space: &NodeSpace) -> Self {
        Uniform { nodes: space.nodes() }
    }
}

/// A node drawn uniformly among `0..n` other than `src`.
pub(crate) fn other_node(n: u32, src: u32, rng: &mut Rng) -> u32 {
    let d = rng.random_range(0..n - 1);
    if d >= src {
        d + 1
    } else {
        d
    }
}

impl Destinations for Uniform {
    fn destination(&self, src: u32, rng: &mut Rng) -> Option<u32> {
        Some(other_node(self.nodes, src, rng))
    }

    /// Uniform over the other nodes alive, in one draw.
    fn destination_alive(&self, src: u32, alive: &Alive, rng: &mut Rng) -> Option<u32> {
        Some(alive.node(other_node(alive.count(), alive.index_of(src), rng)))
    }

    fn is_random(&self) -> bool {
        true
    }

    fn clone_box(&self) -> Box<dyn Destinations> {
        Box::new(self.clone())
    }
}
