//! A hot-spot burst: every node outside a region sends `packets` packets
//! into it, to the region's nodes in a random order of its own; a 1-node
//! region is a hot spot.

use std::collections::BTreeMap;

use super::hot_region::region_nodes;
use super::{grid, FiniteSource, Message};
use crate::space::{Alive, NodeSpace};
use crate::{NewPacket, PacketFormat, Permutation, WorkloadError};

#[derive(Clone, Debug)]
pub struct HotBurst {
    format: PacketFormat,
    packets: u32,
    seed: u64,
    /// The region's nodes (alive), sorted, and whether each node was in it.
    region: Vec<u32>,
    in_region: Vec<bool>,
    /// Set when nodes failed (they send nothing).
    alive: Option<Alive>,
}

impl HotBurst {
    pub fn new(space: &NodeSpace, format: PacketFormat, packets: u32, origin: &[u32], shape: &[u32], seed: u64) -> Result<Self, WorkloadError> {
        let region = region_nodes(grid(space, "hot-burst")?, origin, shape)?;
        if region.len() as u32 >= space.nodes() {
            return Err(WorkloadError { key: "region_shape", message: "the region must leave some nodes outside it to send".into() });
        }
        let mut in_region = vec![false; space.nodes() as usize];
        for &r in &region {
            in_region[r as usize] = true;
        }
        Ok(HotBurst { format, packets, seed, region, in_region, alive: None })
    }
}

impl FiniteSource for HotBurst {
    fn initial_packets(&self, node: u32, _lane: usize) -> u64 {
        if self.in_region[node as usize] {
            0
        } else {
            self.packets as u64
        }
    }

    fn packet(&self, node: u32, _lane: usize, i: u64) -> NewPacket {
        let k = self.region.len() as u64;
        let pick = Permutation::new(k.max(1), self.seed ^ node as u64).apply(i % k);
        let payload = (self.format.packet_bytes - self.format.header_bytes) as u16;
        super::plain_packet(self.region[pick as usize], self.format.packet_bytes as u16, payload, i as u32)
    }

    fn on_failed(&mut self, alive: &Alive) -> Result<(), WorkloadError> {
        self.region.retain(|&r| !alive.is_failed(r));
        if self.region.is_empty() {
            return Err(WorkloadError { key: "region_shape", message: "every node of the region has failed".into() });
        }
        self.alive = Some(alive.clone());
        Ok(())
    }

    /// Each source's packets summed per destination.
    fn messages(&self) -> Result<Vec<Message>, WorkloadError> {
        let payload = (self.format.packet_bytes - self.format.header_bytes) as u64;
        let mut out = Vec::new();
        for src in 0..self.in_region.len() as u32 {
            let mut per_dst: BTreeMap<u32, u64> = BTreeMap::new();
            for i in 0..self.initial_packets(src, 0) {
                *per_dst.entry(self.packet(src, 0, i).dst).or_default() += 1;
            }
            for (dst, k) in per_dst {
                out.push(Message { src, dst, packets: k, bytes: k * self.format.packet_bytes as u64, payload_bytes: k * payload, release_cycle: 0, answers: None });
            }
        }
        Ok(out)
    }

    /// A source's packets go to at most as many nodes as take part.
    fn message_count(&self) -> u64 {
        let sending = |n: u32| !self.alive.as_ref().is_some_and(|a| a.is_failed(n));
        let nodes = self.alive.as_ref().map_or(self.in_region.len() as u32, Alive::count) as u64;
        (0..self.in_region.len() as u32).filter(|&n| sending(n)).map(|n| self.initial_packets(n, 0).min(nodes)).sum()
    }

    fn region(&self) -> &[u32] {
        &self.region
    }

    fn clone_box(&self) -> Box<dyn FiniteSource> {
        Box::new(self.clone())
    }
}
