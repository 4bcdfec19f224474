//! The engine's boundary with what the nodes send.
//!
//! The engine knows traffic only through [`Traffic`], which it owns (as
//! ripgrep's searcher owns its matcher trait): synthetic patterns, packet
//! traces and collective schedules live in the layers above and implement
//! it. The engine asks for packets, hands deliveries back, and at the end
//! asks whether the traffic is complete and what it wants to add to the
//! result.
//!
//! Sizes: a packet's `bytes` are what the router carries (whole
//! flow-control chunks of the router model, [`crate::RouterParams::chunk_bytes`]),
//! `payload` the software bytes inside it.

/// The seeded generator a router hands to the traffic when it draws.
pub type Rng = rand_pcg::Pcg32;

/// One packet the traffic asks a node to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewPacket {
    pub dst: u32,
    /// Bytes on the router (whole chunks, at most the router's largest packet).
    pub bytes: u16,
    /// Software payload bytes carried.
    pub payload: u16,
    /// Traffic-defined tag returned on delivery (message id, sequence…).
    pub tag: u32,
    /// Hint bits set by software (bit `a`: travel axis `a` in the `−`
    /// direction) instead of the minimal ones the hardware computes.
    pub hints: Option<u8>,
    /// A deposit (broadcast) packet: every node on the way keeps a copy.
    pub deposit: bool,
    /// The node's send lane (see [`Traffic::lanes`]).
    pub lane: u8,
    /// Cycle before which the node's software does not hand the packet
    /// over (0: as soon as it is answered).
    pub release_cycle: u64,
}

/// A message the traffic asks a node to send: `packets` packets to one
/// destination, all like `first` except the last (`last_bytes`,
/// `last_payload`). The engine makes each packet only when it reaches the
/// head of the node's send queue, as the TNI's DMA engine reads the
/// message: a message of thousands of packets costs one entry until then
/// (an all-to-all posted at once would otherwise hold every packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewMessage {
    /// The first packet: destination, size, tag, route hints, deposit,
    /// lane, and the cycle the software hands it over.
    pub first: NewPacket,
    /// Packets in the message, at least 1.
    pub packets: u32,
    /// Size of the last packet (the first's when there is one packet).
    pub last_bytes: u16,
    pub last_payload: u16,
    /// Injection-rate control: packet `k` is handed over `k × gap_cycles`
    /// after the first (0: all at once).
    pub gap_cycles: u64,
}

impl NewMessage {
    /// The message of one packet.
    pub fn single(p: NewPacket) -> Self {
        NewMessage { first: p, packets: 1, last_bytes: p.bytes, last_payload: p.payload, gap_cycles: 0 }
    }

    /// Packet `k` (`k < packets`).
    pub fn packet(&self, k: u32) -> NewPacket {
        let mut p = self.first;
        if k + 1 == self.packets {
            p.bytes = self.last_bytes;
            p.payload = self.last_payload;
        }
        p.release_cycle = self.first.release_cycle + k as u64 * self.gap_cycles;
        p
    }
}

impl From<NewPacket> for NewMessage {
    fn from(p: NewPacket) -> Self {
        Self::single(p)
    }
}

/// Why finished traffic is not what it should be: an invariant of the
/// traffic (a broadcast that missed nodes, a schedule step never run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incomplete {
    /// Invariant kind as the run reports it, e.g. `schedule-incomplete`.
    pub kind: &'static str,
    pub detail: String,
}

/// What the engine knows at the end of a run, for [`Traffic::report`].
#[derive(Clone, Copy, Debug)]
pub struct RunEnd {
    /// Nodes in the network.
    pub nodes: u64,
    /// The completion cycle (or the last cycle simulated), at least 1.
    pub end_cycle: u64,
    /// Broadcast copies left at the nodes deposit packets passed.
    pub deposits: u64,
    /// Per-packet link overhead, bytes: a packet of `b` bytes occupies a
    /// link `b + wire_overhead_bytes` cycles.
    pub wire_overhead_bytes: u64,
}

/// A source and sink of packets for the engine. Every call about a node is
/// made by the partition that owns the node's router, in a canonical order
/// (see the engine's order-independence notes), so an implementation may keep per-node state
/// and the run stays deterministic when split; what a partition's copy
/// learned is merged at the end by [`Traffic::export_nodes`] and
/// [`Traffic::absorb_nodes`].
pub trait Traffic: Clone + Send {
    /// Send lanes per node: separate software send queues, each with its
    /// own injection FIFOs (1 for most traffic).
    fn lanes(&self) -> usize {
        1
    }

    /// A finite workload ends when everything is delivered; an open-loop
    /// one runs for the run's cycles.
    fn is_finite(&self) -> bool;

    /// Open loop: the offered load (fraction of a node's injection bandwidth).
    fn offered_load(&self) -> Option<f64> {
        None
    }

    /// Open loop: the fraction of nodes that send at all (a fixed-partner
    /// pattern's fixed points and failed nodes do not), so that the
    /// accepted load, averaged over every node, can be compared with what
    /// is really offered.
    fn sending_fraction(&self) -> Option<f64> {
        None
    }

    /// Open loop: packets per cycle per node for an injection capacity of
    /// `injection_bytes_per_cycle` (`None`: not open loop).
    fn packets_per_cycle(&self, _injection_bytes_per_cycle: f64) -> Option<f64> {
        None
    }

    /// Open loop: a new packet at `node`, or `None` when `node` sends
    /// nothing under the pattern. Draws from the router's generator.
    fn open_packet(&self, _node: u32, _rng: &mut Rng) -> Option<NewPacket> {
        None
    }

    /// Finite: how many packets `node` sends in `lane` from the start.
    fn initial_packets(&self, _node: u32, _lane: usize) -> u64 {
        0
    }

    /// Finite: the `i`-th of them (`i < initial_packets(node, lane)`).
    fn finite_packet(&self, _node: u32, _lane: usize, _i: u64) -> NewPacket {
        unreachable!("this traffic has no packets at the start")
    }

    /// Messages handed over at the start with their release cycles, as
    /// (node, message) (collective schedules).
    fn start_messages(&mut self, _out: &mut Vec<(u32, NewMessage)>) {}

    /// Trace rows: how many, and each one's (cycle, source node).
    fn trace_rows(&self) -> usize {
        0
    }

    fn trace_row(&self, _i: usize) -> (u64, u32) {
        unreachable!("this traffic has no trace rows")
    }

    /// The packet of trace row `i`.
    fn trace_packet(&self, _i: usize) -> NewPacket {
        unreachable!("this traffic has no trace rows")
    }

    /// Cycles the node's software takes to send the packets it answers a
    /// delivery with (one answering thread per node).
    fn turn_cycles(&self) -> u64 {
        0
    }

    /// Closed loop: a packet with `tag` delivered (or, for a broadcast,
    /// deposited) at `node`, its data ready at cycle `t`; pushes the
    /// messages `node` must now send.
    fn on_delivery(&mut self, _node: u32, _t: u64, _tag: u32, _out: &mut Vec<NewMessage>) {}

    /// A packet with `tag` was just delivered; [`Self::on_delivery`] for it
    /// follows later in the same cycle. A traffic whose per-message state
    /// is large may ask the CPU for it now ([`crate::prefetch_line`]): a
    /// hint that never changes results.
    fn prefetch_delivery(&self, _tag: u32) {}

    /// What this copy learned about the nodes `owned` accepts, as words
    /// (to cross threads and processes).
    fn export_nodes(&self, _owned: &dyn Fn(u32) -> bool) -> Vec<u64> {
        Vec::new()
    }

    /// Merges what another partition's copy exported.
    fn absorb_nodes(&mut self, _words: &[u64]) {}

    /// After the last delivery: whether the traffic is complete, and the
    /// cycle its last local work ends (at or after the last delivery).
    fn check_complete(&self) -> Result<Option<u64>, Incomplete> {
        Ok(None)
    }

    /// Traffic-specific entries of the run's result (top-level JSON keys).
    fn report(&self, _end: &RunEnd) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
}
