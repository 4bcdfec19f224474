//! A packet trace: packets given one by one, each entering its source's
//! send queue at its cycle.

use super::{FiniteSource, Message};
use crate::space::{Alive, NodeSpace};
use crate::{NewPacket, PacketFormat, TracePacket, WorkloadError};

#[derive(Clone, Debug)]
pub struct Trace {
    header_bytes: u32,
    packets: Vec<TracePacket>,
}

impl Trace {
    pub fn new(space: &NodeSpace, format: PacketFormat, packets: Vec<TracePacket>) -> Result<Self, WorkloadError> {
        let PacketFormat { packet_bytes, header_bytes, chunk_bytes } = format;
        let n = space.nodes();
        let chunk = chunk_bytes.max(1);
        for (i, p) in packets.iter().enumerate() {
            if p.src >= n || p.dst >= n || p.src == p.dst {
                return Err(WorkloadError { key: "trace", message: format!("row {i}: expected two different node ids below {n}, found {} and {}", p.src, p.dst) });
            }
            if !(p.bytes as u32).is_multiple_of(chunk) || p.bytes == 0 || p.bytes as u32 > packet_bytes || p.bytes as u32 <= header_bytes {
                return Err(WorkloadError { key: "trace", message: format!("row {i}: expected packet bytes in whole {chunk}-byte chunks, above header_bytes ({header_bytes}) and at most {packet_bytes}, found {}", p.bytes) });
            }
            if p.hints.is_some() && space.grid().is_none() {
                return Err(WorkloadError { key: "trace", message: format!("row {i}: hint bits choose torus directions; {} has none (give 4 columns)", space.label()) });
            }
        }
        Ok(Trace { header_bytes, packets })
    }
}

impl FiniteSource for Trace {
    /// Trace packets enter at their cycles (the engine asks row by row).
    fn initial_packets(&self, _node: u32, _lane: usize) -> u64 {
        0
    }

    fn packet(&self, _node: u32, _lane: usize, i: u64) -> NewPacket {
        let p = self.packets[i as usize];
        NewPacket { dst: p.dst, bytes: p.bytes, payload: p.bytes - self.header_bytes as u16, tag: i as u32, hints: p.hints, deposit: false, lane: 0, release_cycle: 0 }
    }

    fn on_failed(&mut self, alive: &Alive) -> Result<(), WorkloadError> {
        match self.packets.iter().enumerate().find(|(_, p)| alive.is_failed(p.src) || alive.is_failed(p.dst)) {
            Some((i, p)) => {
                let f = if alive.is_failed(p.src) { p.src } else { p.dst };
                Err(WorkloadError { key: "trace", message: format!("row {i}: node {f} has failed") })
            }
            None => Ok(()),
        }
    }

    fn messages(&self) -> Result<Vec<Message>, WorkloadError> {
        Ok(self
            .packets
            .iter()
            .map(|p| Message { src: p.src, dst: p.dst, packets: 1, bytes: p.bytes as u64, payload_bytes: p.bytes as u64 - self.header_bytes as u64, release_cycle: p.cycle, answers: None })
            .collect())
    }

    fn message_count(&self) -> u64 {
        self.packets.len() as u64
    }

    fn trace(&self) -> &[TracePacket] {
        &self.packets
    }

    fn clone_box(&self) -> Box<dyn FiniteSource> {
        Box::new(self.clone())
    }
}
