//! A workload: a pattern bound to a node space, with its packet format and
//! the nodes that failed. The engines ask it for packets (through
//! [`tofusim_packet::Traffic`], `traffic.rs`) or, the flow model, for its
//! messages.

use rand::RngExt;

use crate::pattern::{bind_finite, bind_open, Destinations, FiniteSource, Fill, Message};
use crate::space::{Alive, NodeSpace};
use crate::{Kind, NewMessage, NewPacket, NodeState, PacketFormat, Rng, TracePacket, WorkloadError, MAX_PACKET_BYTES};

/// A workload bound to a node space.
#[derive(Debug)]
pub struct Workload {
    /// The pattern and its parameters, as results print them.
    pub kind: Kind,
    pub packet_bytes: u32,
    pub header_bytes: u32,
    /// The router's flow-control chunk, bytes.
    pub chunk_bytes: u32,
    /// Open loop: when set, packet sizes are drawn uniformly from whole
    /// chunks between this and `packet_bytes` (variable-sized traffic).
    pub min_packet_bytes: Option<u32>,
    /// Cycles the node's software takes to send the packets it answers a
    /// delivery with (plane-fill corner turns, ping-pong replies).
    pub turn_cycles: u32,
    space: NodeSpace,
    source: Source,
    /// Failed nodes (none: every node takes part).
    alive: Alive,
}

/// The bound pattern.
#[derive(Debug)]
enum Source {
    Open(Box<dyn Destinations>),
    Finite(Box<dyn FiniteSource>),
}

impl Clone for Source {
    fn clone(&self) -> Self {
        match self {
            Source::Open(d) => Source::Open(d.clone_box()),
            Source::Finite(f) => Source::Finite(f.clone_box()),
        }
    }
}

impl Clone for Workload {
    fn clone(&self) -> Self {
        Workload {
            kind: self.kind.clone(),
            space: self.space.clone(),
            source: self.source.clone(),
            alive: self.alive.clone(),
            ..*self
        }
    }
}

impl Workload {
    /// Binds `kind` to `space`; `seed` keys the finite patterns' orders.
    pub fn new(kind: Kind, format: PacketFormat, space: &NodeSpace, seed: u64) -> Result<Self, WorkloadError> {
        let PacketFormat { packet_bytes, header_bytes, chunk_bytes } = format;
        let chunk = chunk_bytes.max(1);
        // The router's own limit (BG/L 256 bytes) is checked with the router.
        if !(chunk..=MAX_PACKET_BYTES).contains(&packet_bytes) || !packet_bytes.is_multiple_of(chunk) {
            return Err(WorkloadError {
                key: "packet_bytes",
                message: format!("expected a multiple of the router's {chunk}-byte chunk from {chunk} to {MAX_PACKET_BYTES}, found {packet_bytes}"),
            });
        }
        if header_bytes >= packet_bytes {
            return Err(WorkloadError { key: "header_bytes", message: format!("expected fewer header bytes than packet_bytes ({packet_bytes})") });
        }
        let format = PacketFormat { chunk_bytes: chunk, ..format };
        let source = match &kind {
            Kind::Open { pattern, .. } => Source::Open(bind_open(pattern, space)?),
            Kind::Finite(pattern) => Source::Finite(bind_finite(pattern, space, format, seed)?),
        };
        if space.nodes() < 2 {
            return Err(WorkloadError { key: "pattern", message: "a workload needs at least 2 nodes".into() });
        }
        Ok(Self {
            kind,
            packet_bytes,
            header_bytes,
            chunk_bytes: chunk,
            min_packet_bytes: None,
            turn_cycles: 0,
            space: space.clone(),
            source,
            alive: Alive::default(),
        })
    }

    /// The same workload on a network whose nodes `failed` send and
    /// receive nothing: open-loop sources there are silent and no packet
    /// goes to them (random patterns draw among the nodes alive, fixed
    /// ones skip a failed partner); an all-to-all and a hot-spot burst run
    /// among the nodes alive. A ping-pong or trace that needs a failed
    /// node, and the fills (deposit broadcasts cannot pass a failed
    /// node), are refused.
    pub fn with_failed_nodes(mut self, failed: &[u32]) -> Result<Self, WorkloadError> {
        if failed.is_empty() {
            return Ok(self);
        }
        let n = self.nodes();
        let mut mark = vec![false; n as usize];
        for &f in failed {
            mark[f as usize] = true;
        }
        let alive = Alive::new(mark);
        if alive.count() < 2 {
            return Err(WorkloadError { key: "pattern", message: format!("{} of {n} nodes failed: a workload needs at least 2 nodes alive", failed.len()) });
        }
        match &mut self.source {
            Source::Open(d) => d.on_failed(&alive)?,
            Source::Finite(f) => f.on_failed(&alive)?,
        }
        self.alive = alive;
        Ok(self)
    }

    pub fn nodes(&self) -> u32 {
        self.space.nodes()
    }

    /// The node space the workload was bound to.
    pub fn space(&self) -> &NodeSpace {
        &self.space
    }

    /// The packet format the workload was made with.
    pub fn format(&self) -> PacketFormat {
        PacketFormat { packet_bytes: self.packet_bytes, header_bytes: self.header_bytes, chunk_bytes: self.chunk_bytes }
    }

    pub fn payload_bytes(&self) -> u32 {
        self.packet_bytes - self.header_bytes
    }

    pub fn is_finite(&self) -> bool {
        matches!(self.kind, Kind::Finite(_))
    }

    fn finite(&self) -> Option<&dyn FiniteSource> {
        match &self.source {
            Source::Finite(f) => Some(f.as_ref()),
            Source::Open(_) => None,
        }
    }

    /// Open loop: packets per cycle per node for an injection capacity of
    /// `injection_bytes_per_cycle` (the load is a fraction of it).
    pub fn packets_per_cycle(&self, injection_bytes_per_cycle: f64) -> Option<f64> {
        match &self.kind {
            Kind::Open { load, .. } => Some(load * injection_bytes_per_cycle / self.packet_bytes as f64),
            Kind::Finite(_) => None,
        }
    }

    /// Open loop: the size of a new packet, bytes.
    pub fn open_packet_bytes(&self, rng: &mut Rng) -> u32 {
        match self.min_packet_bytes {
            Some(min) if min < self.packet_bytes => {
                let c = self.chunk_bytes;
                let lo = min.div_ceil(c).max(1);
                let hi = self.packet_bytes / c;
                rng.random_range(lo..=hi) * c
            }
            _ => self.packet_bytes,
        }
    }

    /// Open loop: a destination for a new packet from `src`, or `None` when
    /// `src` sends nothing under this pattern (e.g. a transpose fixed point,
    /// a failed node, a failed fixed partner).
    pub fn open_destination(&self, src: u32, rng: &mut Rng) -> Option<u32> {
        let Source::Open(d) = &self.source else { return None };
        if !self.alive.any_failed() {
            d.destination(src, rng)
        } else if self.alive.is_failed(src) {
            None
        } else {
            d.destination_alive(src, &self.alive, rng)
        }
    }

    /// Send lanes per node: separate software send queues, each with its
    /// own injection FIFOs (the fills use one per direction; others one).
    pub fn lanes(&self) -> usize {
        self.finite().map_or(1, |f| f.lanes())
    }

    /// Finite: how many packets `node` sends at the start in `lane`.
    pub fn initial_packets(&self, node: u32, lane: usize) -> u64 {
        match self.finite() {
            Some(f) if !self.alive.is_failed(node) => f.initial_packets(node, lane),
            _ => 0,
        }
    }

    /// Packets of a `message_bytes` message, and the router bytes of the last.
    pub fn packets_per_pair(&self, message_bytes: u64) -> (u32, u16) {
        let (k, last, _) = crate::pattern::split_message(self.format(), message_bytes);
        (k, last)
    }

    /// Finite: the `i`-th packet `node` sends in `lane` (`i < initial_packets(node, lane)`).
    pub fn finite_packet(&self, node: u32, lane: usize, i: u64) -> NewPacket {
        self.finite().expect("open-loop workloads have no finite packets").packet(node, lane, i)
    }

    /// Closed loop: a packet with `tag` delivered (or, for a broadcast,
    /// deposited) at `node` at cycle `t`; returns the packets `node` must
    /// now send (ping-pong replies, plane-fill corner turns).
    pub fn on_delivery(&mut self, node: u32, t: u64, tag: u32, out: &mut Vec<NewMessage>) {
        if let Source::Finite(f) = &mut self.source {
            f.on_delivery(node, t, tag, out);
        }
    }

    /// Ping-pong: the two nodes, and the cycles at which each round trip
    /// started and ended (the first starts at 0).
    pub fn pingpong_rounds(&self) -> Option<(u32, u32, Vec<(u64, u64)>)> {
        self.finite()?.rounds()
    }

    /// Trace workloads: the packets with their cycles.
    pub fn trace(&self) -> &[TracePacket] {
        self.finite().map_or(&[], |f| f.trace())
    }

    /// The packet of trace row `i`.
    pub fn trace_packet(&self, i: usize) -> NewPacket {
        self.finite_packet(0, 0, i as u64)
    }

    /// Line / plane fill state (received bytes, completeness check).
    pub fn fill(&self) -> Option<&Fill> {
        self.finite()?.fill()
    }

    /// Nodes that receive the hot traffic (hot region / hot burst), sorted.
    pub fn region(&self) -> &[u32] {
        match &self.source {
            Source::Open(d) => d.region(),
            Source::Finite(f) => f.region(),
        }
    }

    /// Finite: the messages, as the flow model takes them.
    pub fn messages(&self) -> Result<Vec<Message>, WorkloadError> {
        self.finite().map_or(Ok(Vec::new()), |f| f.messages())
    }

    /// Finite: how many messages [`Self::messages`] makes, at most (before
    /// making them).
    pub fn message_count(&self) -> u64 {
        self.finite().map_or(0, |f| f.message_count())
    }

    /// What this copy learned about the nodes `owned` accepts.
    pub fn node_state(&self, owned: &dyn Fn(u32) -> bool) -> NodeState {
        self.finite().map_or_else(NodeState::default, |f| f.node_state(owned))
    }

    /// Merges what another partition's copy learned about its nodes.
    pub fn absorb(&mut self, s: &NodeState) {
        if let Source::Finite(f) = &mut self.source {
            f.absorb(s);
        }
    }
}
