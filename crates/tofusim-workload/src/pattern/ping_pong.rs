//! Ping-pong: `repetitions` round trips of a message between node 0 and
//! the node `hops` away (along the axes in order); each side answers once
//! the whole message is in.

use super::{grid, split_message, FiniteSource, Message};
use crate::space::{Alive, NodeSpace};
use crate::{NewMessage, NewPacket, NodeState, PacketFormat, WorkloadError};
use tofusim_topology::{NodeId, Torus};

#[derive(Clone, Debug)]
pub struct PingPong {
    format: PacketFormat,
    message_bytes: u64,
    a: u32,
    b: u32,
    packets_per_message: u32,
    last_bytes: u16,
    repetitions: u32,
    /// Packets of the current message received, round trips done.
    received: u32,
    round: u32,
    /// Cycles at which round trips after the first started, and all ended.
    started: Vec<u64>,
    finished: Vec<u64>,
}

impl PingPong {
    pub fn new(space: &NodeSpace, format: PacketFormat, hops: u32, message_bytes: u64, repetitions: u32) -> Result<Self, WorkloadError> {
        let torus = grid(space, "pingpong")?;
        let b = node_at_hops(torus, hops)
            .ok_or_else(|| WorkloadError { key: "hops", message: format!("no node is {hops} hops from node 0 in {}", torus.shape_label()) })?;
        let (packets, last_bytes, _) = split_message(format, message_bytes);
        Ok(PingPong {
            format,
            message_bytes,
            a: 0,
            b,
            packets_per_message: packets,
            last_bytes,
            repetitions: repetitions.max(1),
            received: 0,
            round: 0,
            started: Vec::new(),
            finished: Vec::new(),
        })
    }
}

impl FiniteSource for PingPong {
    fn initial_packets(&self, node: u32, _lane: usize) -> u64 {
        if node == self.a {
            self.packets_per_message as u64
        } else {
            0
        }
    }

    fn packet(&self, node: u32, _lane: usize, i: u64) -> NewPacket {
        let dst = if node == self.a { self.b } else { self.a };
        let bytes = if i as u32 + 1 == self.packets_per_message { self.last_bytes } else { self.format.packet_bytes as u16 };
        super::plain_packet(dst, bytes, bytes.saturating_sub(self.format.header_bytes as u16), i as u32)
    }

    fn on_delivery(&mut self, node: u32, t: u64, _tag: u32, out: &mut Vec<NewMessage>) {
        self.received += 1;
        if self.received < self.packets_per_message {
            return;
        }
        self.received = 0;
        if node != self.b {
            self.finished.push(t);
            self.round += 1;
            if self.round == self.repetitions {
                return;
            }
            self.started.push(t);
        }
        for i in 0..self.packets_per_message {
            out.push(self.packet(node, 0, i as u64).into());
        }
    }

    fn on_failed(&mut self, alive: &Alive) -> Result<(), WorkloadError> {
        match [self.a, self.b].into_iter().find(|&x| alive.is_failed(x)) {
            Some(f) => Err(WorkloadError { key: "hops", message: format!("the ping-pong's node {f} has failed") }),
            None => Ok(()),
        }
    }

    /// The requests and answers in turn, each answering the one before.
    fn messages(&self) -> Result<Vec<Message>, WorkloadError> {
        let (k, last, _) = split_message(self.format, self.message_bytes);
        let bytes = (k as u64 - 1) * self.format.packet_bytes as u64 + last as u64;
        Ok((0..2 * self.repetitions as usize)
            .map(|i| {
                let (src, dst) = if i % 2 == 0 { (self.a, self.b) } else { (self.b, self.a) };
                Message { src, dst, packets: k as u64, bytes, payload_bytes: self.message_bytes.max(1), release_cycle: 0, answers: i.checked_sub(1) }
            })
            .collect())
    }

    fn message_count(&self) -> u64 {
        2 * self.repetitions as u64
    }

    fn rounds(&self) -> Option<(u32, u32, Vec<(u64, u64)>)> {
        let starts = std::iter::once(0).chain(self.started.iter().copied());
        Some((self.a, self.b, starts.zip(self.finished.iter().copied()).collect()))
    }

    fn node_state(&self, owned: &dyn Fn(u32) -> bool) -> NodeState {
        NodeState { pingpong: owned(self.a).then(|| (self.started.clone(), self.finished.clone())), ..NodeState::default() }
    }

    fn absorb(&mut self, s: &NodeState) {
        if let Some((started, finished)) = &s.pingpong {
            self.started.clone_from(started);
            self.finished.clone_from(finished);
        }
    }

    fn clone_box(&self) -> Box<dyn FiniteSource> {
        Box::new(self.clone())
    }
}

/// The node `hops` hops from node 0, stepping along axis 0 first, then 1, …
pub fn node_at_hops(torus: &Torus, hops: u32) -> Option<u32> {
    let mut left = hops;
    let mut c = vec![0u32; torus.axes().len()];
    for (a, ax) in torus.axes().iter().enumerate() {
        let step = left.min(ax.diameter());
        c[a] = step;
        left -= step;
    }
    if left > 0 {
        return None;
    }
    let id = torus.node_id(&c).0;
    (torus.distance(NodeId(0), NodeId(id)) == hops).then_some(id)
}
