//! A hot region: a fraction of the packets go to a contiguous sub-block of
//! the torus, the rest uniformly (BG/L's hot-region experiment).

use rand::RngExt;

use super::uniform::other_node;
use super::{grid, Destinations};
use crate::space::{Alive, NodeSpace};
use crate::{Rng, WorkloadError};
use tofusim_topology::Torus;

#[derive(Clone, Debug)]
pub struct HotRegion {
    nodes: u32,
    hot_fraction: f64,
    /// Nodes of the region, sorted, and a mark per node.
    region: Vec<u32>,
    in_region: Vec<bool>,
}

impl HotRegion {
    pub fn new(space: &NodeSpace, hot_fraction: f64, origin: &[u32], shape: &[u32]) -> Result<Self, WorkloadError> {
        let torus = grid(space, "hot-region")?;
        let region = region_nodes(torus, origin, shape)?;
        if !(0.0..=1.0).contains(&hot_fraction) {
            return Err(WorkloadError { key: "hot_fraction", message: "expected a fraction from 0 to 1".into() });
        }
        let mut in_region = vec![false; space.nodes() as usize];
        for &r in &region {
            in_region[r as usize] = true;
        }
        Ok(HotRegion { nodes: space.nodes(), hot_fraction, region, in_region })
    }
}

impl Destinations for HotRegion {
    fn destination(&self, src: u32, rng: &mut Rng) -> Option<u32> {
        if !rng.random_bool(self.hot_fraction) {
            return Some(other_node(self.nodes, src, rng));
        }
        let k = self.region.len() as u32;
        if self.in_region[src as usize] && k == 1 {
            return Some(other_node(self.nodes, src, rng));
        }
        loop {
            let d = self.region[rng.random_range(0..k) as usize];
            if d != src {
                return Some(d);
            }
        }
    }

    fn is_random(&self) -> bool {
        true
    }

    fn region(&self) -> &[u32] {
        &self.region
    }

    fn on_failed(&mut self, alive: &Alive) -> Result<(), WorkloadError> {
        self.region.retain(|&r| !alive.is_failed(r));
        if self.region.is_empty() {
            return Err(WorkloadError { key: "region_shape", message: "every node of the region has failed".into() });
        }
        Ok(())
    }

    fn clone_box(&self) -> Box<dyn Destinations> {
        Box::new(self.clone())
    }
}

/// The nodes of the block at `origin` of `shape` (wrapping around the
/// torus), sorted.
pub fn region_nodes(torus: &Torus, origin: &[u32], shape: &[u32]) -> Result<Vec<u32>, WorkloadError> {
    let lens = torus.lengths();
    if origin.len() != lens.len() || shape.len() != lens.len() {
        return Err(WorkloadError {
            key: "region_shape",
            message: format!("expected {} coordinates for region_origin and region_shape", lens.len()),
        });
    }
    for a in 0..lens.len() {
        if shape[a] == 0 || origin[a] >= lens[a] || shape[a] > lens[a] {
            return Err(WorkloadError {
                key: "region_shape",
                message: format!(
                    "the region must fit in the {} network (axis {a}: origin {}, length {})",
                    torus.shape_label(),
                    origin[a],
                    shape[a]
                ),
            });
        }
    }
    let mut out = Vec::new();
    let total: u64 = shape.iter().map(|&s| s as u64).product();
    let mut c = vec![0u32; lens.len()];
    for i in 0..total {
        let mut rest = i;
        for a in 0..lens.len() {
            c[a] = (origin[a] + (rest % shape[a] as u64) as u32) % lens[a];
            rest /= shape[a] as u64;
        }
        out.push(torus.node_id(&c).0);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
