//! Dragonfly adversarial traffic: a node of group i (nodes
//! `i·group_nodes ..`) sends to a node of group i + 1 drawn uniformly.

use rand::RngExt;

use super::Destinations;
use crate::space::NodeSpace;
use crate::Rng;

#[derive(Clone, Debug)]
pub struct GroupShift {
    nodes: u32,
    group_nodes: u32,
}

impl GroupShift {
    pub fn new(space: &NodeSpace, group_nodes: u32) -> Self {
        GroupShift { nodes: space.nodes(), group_nodes: group_nodes.max(1) }
    }
}

impl Destinations for GroupShift {
    fn destination(&self, src: u32, rng: &mut Rng) -> Option<u32> {
        let g = self.group_nodes;
        let groups = self.nodes / g;
        let next = (src / g + 1) % groups.max(1);
        let d = next * g + rng.random_range(0..g);
        (d != src).then_some(d)
    }

    fn is_random(&self) -> bool {
        true
    }

    fn clone_box(&self) -> Box<dyn Destinations> {
        Box::new(self.clone())
    }
}
