//! All-to-all: every node sends `message_bytes` to every other node, as
//! full packets (the last shortened to whole chunks), in a random order of
//! its own; with failed nodes, among the nodes alive.

use super::{split_message, FiniteSource, Message};
use crate::space::{Alive, NodeSpace};
use crate::{NewPacket, PacketFormat, Permutation, WorkloadError};

#[derive(Clone, Debug)]
pub struct AllToAll {
    nodes: u32,
    format: PacketFormat,
    message_bytes: u64,
    seed: u64,
    /// Set when nodes failed: the exchange runs among those alive.
    alive: Option<Alive>,
}

impl AllToAll {
    pub fn new(space: &NodeSpace, format: PacketFormat, message_bytes: u64, seed: u64) -> Self {
        AllToAll { nodes: space.nodes(), format, message_bytes, seed, alive: None }
    }

    /// Nodes taking part.
    fn active(&self) -> u64 {
        self.alive.as_ref().map_or(self.nodes, Alive::count) as u64
    }
}

impl FiniteSource for AllToAll {
    fn initial_packets(&self, _node: u32, _lane: usize) -> u64 {
        (self.active() - 1) * split_message(self.format, self.message_bytes).0 as u64
    }

    fn packet(&self, node: u32, _lane: usize, i: u64) -> NewPacket {
        let n = self.active();
        let (k, last, last_payload) = split_message(self.format, self.message_bytes);
        let j = Permutation::new((n - 1) * k as u64, self.seed ^ (node as u64).wrapping_mul(0x9e3779b97f4a7c15)).apply(i);
        let offset = j % (n - 1);
        let seq = (j / (n - 1)) as u32;
        let dst = match &self.alive {
            None => ((node as u64 + 1 + offset) % n) as u32,
            Some(a) => a.node(((a.index_of(node) as u64 + 1 + offset) % n) as u32),
        };
        let payload = (self.format.packet_bytes - self.format.header_bytes) as u16;
        let (bytes, payload) = if seq + 1 == k { (last, last_payload) } else { (self.format.packet_bytes as u16, payload) };
        super::plain_packet(dst, bytes, payload, seq)
    }

    fn on_failed(&mut self, alive: &Alive) -> Result<(), WorkloadError> {
        self.alive = Some(alive.clone());
        Ok(())
    }

    fn messages(&self) -> Result<Vec<Message>, WorkloadError> {
        let (k, last, _) = split_message(self.format, self.message_bytes);
        let bytes = (k as u64 - 1) * self.format.packet_bytes as u64 + last as u64;
        let n = self.nodes;
        Ok((0..n)
            .flat_map(|src| (0..n).filter(move |&d| d != src).map(move |dst| (src, dst)))
            .map(|(src, dst)| Message { src, dst, packets: k as u64, bytes, payload_bytes: self.message_bytes.max(1), release_cycle: 0, answers: None })
            .collect())
    }

    fn message_count(&self) -> u64 {
        let n = self.active();
        n * n.saturating_sub(1)
    }

    fn clone_box(&self) -> Box<dyn FiniteSource> {
        Box::new(self.clone())
    }
}
