//! The workloads behind the engine's [`Traffic`] boundary, and what they
//! add to a run's result (ping-pong rounds, broadcast figures).

use serde::Serialize;
use serde_json::{Map, Value};
use tofusim_packet::{Incomplete, NewMessage, NewPacket, RunEnd, Traffic};

use crate::{Kind, NodeState, Rng, Workload};

/// One ping-pong round trip.
#[derive(Clone, Debug, Serialize)]
pub struct PingPongRound {
    pub start_cycle: u64,
    pub end_cycle: u64,
    /// Half the round trip, cycles.
    pub one_way_cycles: f64,
}

/// Line / plane fill: what the broadcast delivered.
#[derive(Clone, Debug, Serialize)]
pub struct BroadcastResult {
    /// Copies left at the nodes deposit packets passed (deliveries excluded).
    pub deposits: u64,
    /// Payload received, summed over the nodes, bytes.
    pub received_payload_bytes: u64,
    /// Nodes in one line or plane.
    pub group_nodes: u64,
    /// Incoming links per node that carry the broadcast (2 or 4).
    pub receiving_links: u32,
    /// Payload received per node per cycle over the payload peak of those
    /// links (full packets back to back: payload / wire bytes per link cycle).
    pub fraction_of_peak: f64,
}

impl Traffic for Workload {
    fn lanes(&self) -> usize {
        Workload::lanes(self)
    }

    fn is_finite(&self) -> bool {
        Workload::is_finite(self)
    }

    fn offered_load(&self) -> Option<f64> {
        match &self.kind {
            Kind::Open { load, .. } => Some(*load),
            Kind::Finite(_) => None,
        }
    }

    fn sending_fraction(&self) -> Option<f64> {
        use rand::SeedableRng;
        let Kind::Open { .. } = &self.kind else { return None };
        // One draw per node from a generator of its own (the run's draws
        // are untouched): a node sends if it has a destination at all.
        let mut rng = crate::Rng::seed_from_u64(0);
        let n = self.nodes();
        let sending = (0..n).filter(|&s| self.open_destination(s, &mut rng).is_some()).count();
        Some(sending as f64 / n.max(1) as f64)
    }

    fn packets_per_cycle(&self, injection_bytes_per_cycle: f64) -> Option<f64> {
        Workload::packets_per_cycle(self, injection_bytes_per_cycle)
    }

    /// The destination is drawn first, then the size (variable-sized traffic).
    fn open_packet(&self, node: u32, rng: &mut Rng) -> Option<NewPacket> {
        let dst = self.open_destination(node, rng)?;
        let bytes = self.open_packet_bytes(rng) as u16;
        Some(NewPacket {
            dst,
            bytes,
            payload: bytes.saturating_sub(self.header_bytes as u16),
            tag: 0,
            hints: None,
            deposit: false,
            lane: 0,
            release_cycle: 0,
        })
    }

    fn initial_packets(&self, node: u32, lane: usize) -> u64 {
        Workload::initial_packets(self, node, lane)
    }

    fn finite_packet(&self, node: u32, lane: usize, i: u64) -> NewPacket {
        Workload::finite_packet(self, node, lane, i)
    }

    fn trace_rows(&self) -> usize {
        self.trace().len()
    }

    fn trace_row(&self, i: usize) -> (u64, u32) {
        let p = self.trace()[i];
        (p.cycle, p.src)
    }

    fn trace_packet(&self, i: usize) -> NewPacket {
        Workload::trace_packet(self, i)
    }

    fn turn_cycles(&self) -> u64 {
        self.turn_cycles as u64
    }

    fn on_delivery(&mut self, node: u32, t: u64, tag: u32, out: &mut Vec<NewMessage>) {
        Workload::on_delivery(self, node, t, tag, out);
    }

    fn export_nodes(&self, owned: &dyn Fn(u32) -> bool) -> Vec<u64> {
        self.node_state(owned).to_words()
    }

    fn absorb_nodes(&mut self, words: &[u64]) {
        self.absorb(&NodeState::from_words(words));
    }

    fn check_complete(&self) -> Result<Option<u64>, Incomplete> {
        match self.fill().map(|f| f.check_complete()) {
            Some(Err(detail)) => Err(Incomplete { kind: "broadcast-incomplete", detail }),
            _ => Ok(None),
        }
    }

    /// `pingpong` (the round trips) and `broadcast` (line and plane fill),
    /// `null` where the workload has none.
    fn report(&self, end: &RunEnd) -> Map<String, Value> {
        let pingpong = self.pingpong_rounds().map(|(_, _, rounds)| {
            rounds
                .iter()
                .map(|&(s, f)| PingPongRound { start_cycle: s, end_cycle: f, one_way_cycles: (f - s) as f64 / 2.0 })
                .collect::<Vec<_>>()
        });
        let broadcast = self.fill().map(|f| {
            let wire_cycles = self.packet_bytes as u64 + end.wire_overhead_bytes;
            let peak_per_link = self.payload_bytes() as f64 / wire_cycles as f64;
            let per_node_cycle = f.received_payload_bytes() as f64 / (end.nodes as f64 * end.end_cycle as f64);
            BroadcastResult {
                deposits: end.deposits,
                received_payload_bytes: f.received_payload_bytes(),
                group_nodes: f.group_nodes(),
                receiving_links: f.receiving_links(),
                fraction_of_peak: per_node_cycle / (f.receiving_links() as f64 * peak_per_link),
            }
        });
        let mut m = Map::new();
        m.insert("pingpong".into(), serde_json::to_value(pingpong).expect("plain numbers"));
        m.insert("broadcast".into(), serde_json::to_value(broadcast).expect("plain numbers"));
        m
    }
}
