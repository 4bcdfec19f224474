//! # tofusim-workload
//!
//! What the nodes send. Two kinds:
//! - **open loop**: each node creates packets by a Bernoulli process at an
//!   offered load (drawn as geometric gaps), with a destination pattern;
//! - **finite**: a fixed list of packets per node, sent as fast as the
//!   injection FIFOs take them, until everything is delivered (all-to-all,
//!   hot spot bursts), and closed-loop exchanges (ping-pong) that answer
//!   deliveries with new packets.
//!
//! Sizes: `packet_bytes` is the packet as the router sees it (n × 32 B,
//! n = 1..8); `header_bytes` of it are software header, the rest payload.

mod fill;
mod permutation;
mod traffic;

pub use fill::Fill;
pub use permutation::Permutation;
pub use tofusim_packet::{NewMessage, NewPacket};
pub use traffic::{BroadcastResult, PingPongRound};

use rand::RngExt;
use serde::Serialize;
use tofusim_topology::{NodeId, Torus};

pub type Rng = rand_pcg::Pcg32;

/// The flow-control chunk of every router model so far (BG/L, Tofu, Aries,
/// the fat-tree switch): the default of [`PacketFormat::new`].
pub const CHUNK_BYTES: u32 = 32;

/// The packets a workload makes, as the router model takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketFormat {
    /// Bytes of a full packet on the router (whole chunks).
    pub packet_bytes: u32,
    /// Software header in each packet (payload = packet − header).
    pub header_bytes: u32,
    /// The router's flow-control chunk: packets are whole chunks.
    pub chunk_bytes: u32,
}

impl PacketFormat {
    /// A format with the usual 32-byte chunks.
    pub fn new(packet_bytes: u32, header_bytes: u32) -> Self {
        PacketFormat { packet_bytes, header_bytes, chunk_bytes: CHUNK_BYTES }
    }

    /// The same with the router's chunk.
    pub fn with_chunk(self, chunk_bytes: u32) -> Self {
        PacketFormat { chunk_bytes, ..self }
    }

    /// Bytes on the router of a packet carrying `payload` bytes: payload
    /// and header in whole chunks.
    pub fn wire_bytes(&self, payload: u64) -> u64 {
        (payload + self.header_bytes as u64).div_ceil(self.chunk_bytes as u64) * self.chunk_bytes as u64
    }
}
/// Largest packet any router model carries (packet sizes are `u16`).
pub const MAX_PACKET_BYTES: u32 = 65504;

/// Destination patterns of open-loop traffic.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "pattern", rename_all = "kebab-case")]
pub enum OpenPattern {
    Uniform,
    /// A fraction of the packets go to a contiguous sub-block, the rest uniform.
    HotRegion {
        hot_fraction: f64,
        origin: Vec<u32>,
        shape: Vec<u32>,
    },
    Transpose,
    Tornado,
    Neighbor,
    /// Every node streams to the node `hops` further along `axis` (with
    /// wrap-around in the coordinate): a nearest-neighbour put pattern at
    /// `hops = 1`, one stream per link of that direction.
    Shift { axis: usize, hops: u32 },
    /// Dragonfly adversarial traffic: a node of group i (nodes
    /// `i·group_nodes ..`) sends to a random node of group i + 1.
    GroupShift { group_nodes: u32 },
}

/// Finite workloads.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "pattern", rename_all = "kebab-case")]
pub enum FinitePattern {
    /// Every node sends `message_bytes` of payload to every other node, as
    /// packets of `packet_bytes` (the last one shortened to whole chunks), in
    /// a random order of its own.
    AllToAll { message_bytes: u64 },
    /// Every node outside a region sends `packets` packets into it (to
    /// uniformly chosen nodes of the region); a 1-node region is a hot spot.
    HotBurst {
        packets: u32,
        origin: Vec<u32>,
        shape: Vec<u32>,
    },
    /// `repetitions` round trips of a `message_bytes` message between node 0
    /// and the node `hops` away (along the axes in order).
    PingPong {
        hops: u32,
        message_bytes: u64,
        repetitions: u32,
    },
    /// Every node broadcasts `message_bytes` to its line along `axis` with
    /// deposit packets, half in each direction (BG/L line fill).
    LineFill { axis: usize, message_bytes: u64 },
    /// Every node broadcasts `message_bytes` to its plane of `axes`:
    /// deposit packets along one ring, re-injected along the other at each
    /// node (corner turns), four colours (BG/L plane fill).
    PlaneFill {
        axes: [usize; 2],
        message_bytes: u64,
    },
    /// Packets given one by one: each enters its source's send queue at its cycle.
    Trace { packets: Vec<TracePacket> },
}

/// One packet of a trace workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TracePacket {
    pub cycle: u64,
    pub src: u32,
    pub dst: u32,
    /// Bytes on the router (multiple of 32).
    pub bytes: u16,
    /// Software hint bits (bit `a`: axis `a` travelled in the `−`
    /// direction); `None`: minimal, as the hardware sets them.
    pub hints: Option<u8>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Kind {
    Open { pattern: OpenPattern, load: f64 },
    Finite(FinitePattern),
}

/// A workload bound to a topology.
#[derive(Clone, Debug)]
pub struct Workload {
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
    torus: Torus,
    /// Nodes of the region (hot-region / hot-burst), sorted.
    region: Vec<u32>,
    in_region: Vec<bool>,
    seed: u64,
    pingpong: Option<PingPongState>,
    fill: Option<Fill>,
    /// Failed nodes (empty: none failed): they send and receive nothing.
    failed: Vec<bool>,
    /// The nodes that did not fail, in order, and each node's index among
    /// them (all-to-all destinations; uniform draws).
    alive: Vec<u32>,
    alive_index: Vec<u32>,
}

#[derive(Clone, Debug)]
struct PingPongState {
    a: u32,
    b: u32,
    packets_per_message: u32,
    received: u32,
    round: u32,
    repetitions: u32,
    last_bytes: u16,
    started: Vec<u64>,
    finished: Vec<u64>,
}

/// Why a workload cannot be built on a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    pub key: &'static str,
    pub message: String,
}

fn region_nodes(torus: &Torus, origin: &[u32], shape: &[u32]) -> Result<Vec<u32>, WorkloadError> {
    let lens = torus.lengths();
    if origin.len() != lens.len() || shape.len() != lens.len() {
        return Err(WorkloadError {
            key: "region_shape",
            message: format!(
                "expected {} coordinates for region_origin and region_shape",
                lens.len()
            ),
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

impl Workload {
    pub fn new(kind: Kind, format: PacketFormat, torus: &Torus, seed: u64) -> Result<Self, WorkloadError> {
        let PacketFormat { packet_bytes, header_bytes, chunk_bytes } = format;
        let chunk = chunk_bytes.max(1);
        // The router's own limit (BG/L 256 bytes) is checked with the router.
        if !(chunk..=MAX_PACKET_BYTES).contains(&packet_bytes) || !packet_bytes.is_multiple_of(chunk) {
            return Err(WorkloadError {
                key: "packet_bytes",
                message: format!(
                    "expected a multiple of the router's {chunk}-byte chunk from {chunk} to {MAX_PACKET_BYTES}, found {packet_bytes}"
                ),
            });
        }
        if header_bytes >= packet_bytes {
            return Err(WorkloadError {
                key: "header_bytes",
                message: format!("expected fewer header bytes than packet_bytes ({packet_bytes})"),
            });
        }
        let n = torus.node_count() as u32;
        let mut region = Vec::new();
        let mut pingpong = None;
        let mut fill = None;
        match &kind {
            Kind::Finite(FinitePattern::Trace { packets }) => {
                for (i, p) in packets.iter().enumerate() {
                    if p.src >= n || p.dst >= n || p.src == p.dst {
                        return Err(WorkloadError { key: "trace", message: format!("row {i}: expected two different node ids below {n}, found {} and {}", p.src, p.dst) });
                    }
                    if !(p.bytes as u32).is_multiple_of(chunk)
                        || p.bytes == 0
                        || p.bytes as u32 > packet_bytes
                        || p.bytes as u32 <= header_bytes
                    {
                        return Err(WorkloadError { key: "trace", message: format!("row {i}: expected packet bytes in whole {chunk}-byte chunks, above header_bytes ({header_bytes}) and at most {packet_bytes}, found {}", p.bytes) });
                    }
                }
            }
            Kind::Finite(FinitePattern::LineFill {
                axis,
                message_bytes,
            }) => {
                fill = Some(Fill::new(torus, vec![*axis], *message_bytes, format)?);
            }
            Kind::Finite(FinitePattern::PlaneFill {
                axes,
                message_bytes,
            }) => {
                fill = Some(Fill::new(torus, axes.to_vec(), *message_bytes, format)?);
            }
            Kind::Open {
                pattern:
                    OpenPattern::HotRegion {
                        origin,
                        shape,
                        hot_fraction,
                    },
                ..
            } => {
                region = region_nodes(torus, origin, shape)?;
                if !(0.0..=1.0).contains(hot_fraction) {
                    return Err(WorkloadError {
                        key: "hot_fraction",
                        message: "expected a fraction from 0 to 1".into(),
                    });
                }
            }
            Kind::Open {
                pattern: OpenPattern::Transpose,
                ..
            } => {
                let l = torus.lengths();
                if l.len() < 2 || l.iter().any(|&x| x != l[0]) {
                    return Err(WorkloadError {
                        key: "pattern",
                        message: "transpose needs at least 2 axes of equal length".into(),
                    });
                }
            }
            Kind::Finite(FinitePattern::HotBurst { origin, shape, .. }) => {
                region = region_nodes(torus, origin, shape)?;
                if region.len() as u32 >= n {
                    return Err(WorkloadError {
                        key: "region_shape",
                        message: "the region must leave some nodes outside it to send".into(),
                    });
                }
            }
            Kind::Finite(FinitePattern::PingPong {
                hops,
                message_bytes,
                repetitions,
            }) => {
                let b = node_at_hops(torus, *hops).ok_or(WorkloadError {
                    key: "hops",
                    message: format!(
                        "no node is {hops} hops from node 0 in {}",
                        torus.shape_label()
                    ),
                })?;
                let payload = (packet_bytes - header_bytes) as u64;
                let m = (*message_bytes).max(1);
                let packets = m.div_ceil(payload) as u32;
                let last_payload = m - (packets as u64 - 1) * payload;
                let last_bytes = format.wire_bytes(last_payload) as u16;
                pingpong = Some(PingPongState {
                    a: 0,
                    b,
                    packets_per_message: packets,
                    received: 0,
                    round: 0,
                    repetitions: (*repetitions).max(1),
                    last_bytes,
                    started: Vec::new(),
                    finished: Vec::new(),
                });
            }
            _ => {}
        }
        if n < 2 {
            return Err(WorkloadError {
                key: "pattern",
                message: "a workload needs at least 2 nodes".into(),
            });
        }
        let mut in_region = vec![false; n as usize];
        for &r in &region {
            in_region[r as usize] = true;
        }
        Ok(Self {
            kind,
            packet_bytes,
            header_bytes,
            chunk_bytes: chunk,
            min_packet_bytes: None,
            turn_cycles: 0,
            torus: torus.clone(),
            region,
            in_region,
            seed,
            pingpong,
            fill,
            failed: Vec::new(),
            alive: Vec::new(),
            alive_index: Vec::new(),
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
        let alive: Vec<u32> = (0..n).filter(|&i| !mark[i as usize]).collect();
        if alive.len() < 2 {
            return Err(WorkloadError { key: "pattern", message: format!("{} of {n} nodes failed: a workload needs at least 2 nodes alive", failed.len()) });
        }
        let refuse = |key, message: String| Err(WorkloadError { key, message });
        match &self.kind {
            Kind::Finite(FinitePattern::LineFill { .. } | FinitePattern::PlaneFill { .. }) => {
                return refuse("pattern", "line and plane fills with failed nodes are not modelled: their deposit broadcasts would have to pass the failed node".into());
            }
            Kind::Finite(FinitePattern::PingPong { .. }) => {
                let pp = self.pingpong.as_ref().expect("ping-pong state");
                if let Some(f) = [pp.a, pp.b].into_iter().find(|&x| mark[x as usize]) {
                    return refuse("hops", format!("the ping-pong's node {f} has failed"));
                }
            }
            Kind::Finite(FinitePattern::Trace { packets }) => {
                if let Some((i, p)) = packets.iter().enumerate().find(|(_, p)| mark[p.src as usize] || mark[p.dst as usize]) {
                    let f = if mark[p.src as usize] { p.src } else { p.dst };
                    return refuse("trace", format!("row {i}: node {f} has failed"));
                }
            }
            Kind::Finite(FinitePattern::HotBurst { .. }) | Kind::Open { pattern: OpenPattern::HotRegion { .. }, .. } => {
                self.region.retain(|&r| !mark[r as usize]);
                if self.region.is_empty() {
                    return refuse("region_shape", "every node of the region has failed".into());
                }
            }
            _ => {}
        }
        let mut index = vec![u32::MAX; n as usize];
        for (i, &a) in alive.iter().enumerate() {
            index[a as usize] = i as u32;
        }
        self.failed = mark;
        self.alive = alive;
        self.alive_index = index;
        Ok(self)
    }

    #[inline]
    fn is_failed(&self, node: u32) -> bool {
        !self.failed.is_empty() && self.failed[node as usize]
    }

    /// Nodes that take part: all, or those alive.
    fn active_nodes(&self) -> u64 {
        if self.failed.is_empty() {
            self.nodes() as u64
        } else {
            self.alive.len() as u64
        }
    }

    pub fn nodes(&self) -> u32 {
        self.torus.node_count() as u32
    }

    /// The node space the workload was bound to.
    pub fn torus(&self) -> &Torus {
        &self.torus
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

    /// Open loop: packets per cycle per node for an injection capacity of
    /// `injection_bytes_per_cycle` (the load is a fraction of it).
    pub fn packets_per_cycle(&self, injection_bytes_per_cycle: f64) -> Option<f64> {
        match &self.kind {
            Kind::Open { load, .. } => {
                Some(load * injection_bytes_per_cycle / self.packet_bytes as f64)
            }
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
        if self.failed.is_empty() {
            return self.pattern_destination(src, rng);
        }
        if self.failed[src as usize] {
            return None;
        }
        if let Kind::Open { pattern: OpenPattern::Uniform, .. } = &self.kind {
            // Uniform over the other nodes alive.
            let i = rng.random_range(0..self.alive.len() as u32 - 1);
            let i = if i >= self.alive_index[src as usize] { i + 1 } else { i };
            return Some(self.alive[i as usize]);
        }
        // Random patterns draw again (a few times: a group or region may be
        // mostly failed); fixed ones give the same failed partner at once.
        let random = matches!(&self.kind, Kind::Open { pattern: OpenPattern::HotRegion { .. } | OpenPattern::GroupShift { .. } | OpenPattern::Neighbor, .. });
        for _ in 0..if random { 64 } else { 1 } {
            match self.pattern_destination(src, rng) {
                Some(d) if self.failed[d as usize] => continue,
                d => return d,
            }
        }
        None
    }

    fn pattern_destination(&self, src: u32, rng: &mut Rng) -> Option<u32> {
        let n = self.nodes();
        let Kind::Open { pattern, .. } = &self.kind else {
            return None;
        };
        let uniform = |rng: &mut Rng| {
            let d = rng.random_range(0..n - 1);
            if d >= src {
                d + 1
            } else {
                d
            }
        };
        match pattern {
            OpenPattern::Uniform => Some(uniform(rng)),
            OpenPattern::HotRegion { hot_fraction, .. } => {
                if rng.random_bool(*hot_fraction) {
                    let k = self.region.len() as u32;
                    let inside = self.in_region[src as usize];
                    if inside && k == 1 {
                        return Some(uniform(rng));
                    }
                    loop {
                        let d = self.region[rng.random_range(0..k) as usize];
                        if d != src {
                            return Some(d);
                        }
                    }
                } else {
                    Some(uniform(rng))
                }
            }
            OpenPattern::Transpose => {
                let c = self.torus.coords(NodeId(src));
                let mut d = c.clone();
                d.rotate_left(1);
                let dst = self.torus.node_id(&d).0;
                (dst != src).then_some(dst)
            }
            OpenPattern::Tornado => {
                let lens = self.torus.lengths();
                let c = self.torus.coords(NodeId(src));
                let d: Vec<u32> = c
                    .iter()
                    .zip(&lens)
                    .map(|(&x, &l)| {
                        (x + l
                            .div_ceil(2)
                            .saturating_sub(1)
                            .max(if l > 1 { 1 } else { 0 }))
                            % l
                    })
                    .collect();
                let dst = self.torus.node_id(&d).0;
                (dst != src).then_some(dst)
            }
            OpenPattern::GroupShift { group_nodes } => {
                let g = (*group_nodes).max(1);
                let groups = n / g;
                let next = (src / g + 1) % groups.max(1);
                let d = next * g + rng.random_range(0..g);
                (d != src).then_some(d)
            }
            OpenPattern::Shift { axis, hops } => {
                let mut c = self.torus.coords(NodeId(src));
                let len = self.torus.lengths()[*axis];
                c[*axis] = (c[*axis] + hops) % len;
                let dst = self.torus.node_id(&c).0;
                (dst != src).then_some(dst)
            }
            OpenPattern::Neighbor => {
                let ports = self.torus.ports().len() as u32;
                for _ in 0..4 * ports {
                    let p = rng.random_range(0..ports);
                    if let Some(w) = self
                        .torus
                        .neighbor(NodeId(src), tofusim_topology::PortId(p as u8))
                    {
                        if w.0 != src {
                            return Some(w.0);
                        }
                    }
                }
                None
            }
        }
    }

    /// Send lanes per node: separate software send queues, each with its
    /// own injection FIFOs (the fills use one per direction; others one).
    pub fn lanes(&self) -> usize {
        self.fill.as_ref().map_or(1, Fill::lanes)
    }

    /// Finite: how many packets `node` sends at the start in `lane`.
    pub fn initial_packets(&self, node: u32, lane: usize) -> u64 {
        if let Some(f) = &self.fill {
            return f.initial_packets(lane);
        }
        if self.is_failed(node) {
            return 0;
        }
        let n = self.active_nodes();
        match &self.kind {
            Kind::Finite(FinitePattern::AllToAll { message_bytes }) => {
                (n - 1) * self.packets_per_pair(*message_bytes).0 as u64
            }
            Kind::Finite(FinitePattern::HotBurst { packets, .. }) => {
                if self.in_region[node as usize] {
                    0
                } else {
                    *packets as u64
                }
            }
            Kind::Finite(FinitePattern::PingPong { .. }) => {
                let pp = self.pingpong.as_ref().expect("ping-pong state");
                if node == pp.a {
                    pp.packets_per_message as u64
                } else {
                    0
                }
            }
            Kind::Finite(FinitePattern::LineFill { .. } | FinitePattern::PlaneFill { .. }) => {
                unreachable!("handled above")
            }
            // Trace packets enter at their cycles (see `trace`).
            Kind::Finite(FinitePattern::Trace { .. }) => 0,
            Kind::Open { .. } => 0,
        }
    }

    /// Packets per pair for a message, and the size of the last one.
    /// Packets of a `message_bytes` message, and the router bytes of the last.
    pub fn packets_per_pair(&self, message_bytes: u64) -> (u32, u16) {
        let payload = self.payload_bytes() as u64;
        let m = message_bytes.max(1);
        let k = m.div_ceil(payload);
        let last_payload = m - (k - 1) * payload;
        let last = self.format().wire_bytes(last_payload);
        (k as u32, last as u16)
    }

    /// Finite: the `i`-th packet `node` sends in `lane` (`i < initial_packets(node, lane)`).
    pub fn finite_packet(&self, node: u32, lane: usize, i: u64) -> NewPacket {
        let n = self.active_nodes();
        let full = self.packet_bytes as u16;
        match &self.kind {
            Kind::Finite(FinitePattern::AllToAll { message_bytes }) => {
                let (k, last) = self.packets_per_pair(*message_bytes);
                let total = (n - 1) * k as u64;
                let j = Permutation::new(
                    total,
                    self.seed ^ (node as u64).wrapping_mul(0x9e3779b97f4a7c15),
                )
                .apply(i);
                let offset = j % (n - 1);
                let seq = (j / (n - 1)) as u32;
                let dst = if self.failed.is_empty() {
                    ((node as u64 + 1 + offset) % n) as u32
                } else {
                    self.alive[((self.alive_index[node as usize] as u64 + 1 + offset) % n) as usize]
                };
                let bytes = if seq + 1 == k { last } else { full };
                let payload = if seq + 1 == k {
                    (*message_bytes - (k as u64 - 1) * self.payload_bytes() as u64).max(1) as u16
                } else {
                    self.payload_bytes() as u16
                };
                NewPacket {
                    dst,
                    bytes,
                    payload,
                    tag: seq,
                    hints: None,
                    deposit: false,
                    lane: 0,
                    release_cycle: 0,
                }
            }
            Kind::Finite(FinitePattern::HotBurst { .. }) => {
                let k = self.region.len() as u64;
                let pick = Permutation::new(k.max(1), self.seed ^ node as u64).apply(i % k);
                NewPacket {
                    dst: self.region[pick as usize],
                    bytes: full,
                    payload: self.payload_bytes() as u16,
                    tag: i as u32,
                    hints: None,
                    deposit: false,
                    lane: 0,
                    release_cycle: 0,
                }
            }
            Kind::Finite(FinitePattern::PingPong { .. }) => {
                let pp = self.pingpong.as_ref().expect("ping-pong state");
                self.pingpong_packet(pp, node, i as u32)
            }
            Kind::Finite(FinitePattern::LineFill { .. } | FinitePattern::PlaneFill { .. }) => self
                .fill
                .as_ref()
                .expect("fill state")
                .packet(node, lane, i),
            Kind::Finite(FinitePattern::Trace { .. }) => {
                unreachable!("trace packets are not generated at the start")
            }
            Kind::Open { .. } => unreachable!("open-loop workloads have no finite packets"),
        }
    }

    fn pingpong_packet(&self, pp: &PingPongState, node: u32, i: u32) -> NewPacket {
        let dst = if node == pp.a { pp.b } else { pp.a };
        let last = i + 1 == pp.packets_per_message;
        let bytes = if last {
            pp.last_bytes
        } else {
            self.packet_bytes as u16
        };
        NewPacket {
            dst,
            bytes,
            payload: bytes.saturating_sub(self.header_bytes as u16),
            tag: i,
            hints: None,
            deposit: false,
            lane: 0,
            release_cycle: 0,
        }
    }

    /// Closed loop: a packet with `tag` delivered (or, for a broadcast,
    /// deposited) at `node` at cycle `t`; returns the packets `node` must
    /// now send (ping-pong replies, plane-fill corner turns).
    pub fn on_delivery(&mut self, node: u32, t: u64, tag: u32, out: &mut Vec<NewMessage>) {
        if let Some(f) = self.fill.as_mut() {
            f.on_receive(node, tag, out);
            return;
        }
        let Some(mut pp) = self.pingpong.take() else {
            return;
        };
        pp.received += 1;
        if pp.received == pp.packets_per_message {
            pp.received = 0;
            if node == pp.b {
                // B answers once the whole message is in.
                for i in 0..pp.packets_per_message {
                    out.push(self.pingpong_packet(&pp, node, i).into());
                }
            } else {
                pp.finished.push(t);
                pp.round += 1;
                if pp.round < pp.repetitions {
                    pp.started.push(t);
                    for i in 0..pp.packets_per_message {
                        out.push(self.pingpong_packet(&pp, node, i).into());
                    }
                }
            }
        }
        self.pingpong = Some(pp);
    }

    /// Ping-pong: the two nodes, and the cycles at which each round trip
    /// started and ended (the first starts at 0).
    pub fn pingpong_rounds(&self) -> Option<(u32, u32, Vec<(u64, u64)>)> {
        let pp = self.pingpong.as_ref()?;
        let mut starts = vec![0];
        starts.extend(&pp.started);
        Some((
            pp.a,
            pp.b,
            starts
                .iter()
                .copied()
                .zip(pp.finished.iter().copied())
                .collect(),
        ))
    }

    /// Trace workloads: the packets with their cycles.
    pub fn trace(&self) -> &[TracePacket] {
        match &self.kind {
            Kind::Finite(FinitePattern::Trace { packets }) => packets,
            _ => &[],
        }
    }

    /// The packet of trace row `i`.
    pub fn trace_packet(&self, i: usize) -> NewPacket {
        let p = self.trace()[i];
        NewPacket {
            dst: p.dst,
            bytes: p.bytes,
            payload: p.bytes - self.header_bytes as u16,
            tag: i as u32,
            hints: p.hints,
            deposit: false,
            lane: 0,
            release_cycle: 0,
        }
    }

    /// Line / plane fill state (received bytes, completeness check).
    pub fn fill(&self) -> Option<&Fill> {
        self.fill.as_ref()
    }

    /// Nodes that receive the hot traffic (hot region / hot burst), sorted.
    pub fn region(&self) -> &[u32] {
        &self.region
    }
}

/// The node `hops` hops from node 0, stepping along axis 0 first, then 1, …
/// What one partition's copy of a workload learned about its own nodes in
/// a split run; the copies are merged at the end ([`Workload::absorb`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeState {
    /// Line and plane fill: broadcast packets received per node, and the
    /// payload bytes the partition's nodes received.
    pub fill_received: Vec<(u32, u32)>,
    pub fill_payload_bytes: u64,
    /// Ping-pong, from the partition of its first node: round starts and ends.
    pub pingpong: Option<(Vec<u64>, Vec<u64>)>,
}

impl NodeState {
    /// As 64-bit words, to cross processes.
    pub fn to_words(&self) -> Vec<u64> {
        let mut w = vec![self.fill_received.len() as u64];
        for &(n, c) in &self.fill_received {
            w.extend([n as u64, c as u64]);
        }
        w.push(self.fill_payload_bytes);
        match &self.pingpong {
            None => w.push(0),
            Some((s, f)) => {
                w.extend([1, s.len() as u64]);
                w.extend(s);
                w.push(f.len() as u64);
                w.extend(f);
            }
        }
        w
    }

    /// The inverse of [`Self::to_words`].
    pub fn from_words(w: &[u64]) -> Self {
        let mut it = w.iter().copied();
        let mut next = || it.next().expect("a complete node state");
        let mut s = NodeState::default();
        for _ in 0..next() {
            s.fill_received.push((next() as u32, next() as u32));
        }
        s.fill_payload_bytes = next();
        if next() == 1 {
            let n = next();
            let starts = (0..n).map(|_| next()).collect();
            let n = next();
            s.pingpong = Some((starts, (0..n).map(|_| next()).collect()));
        }
        s
    }
}

impl Workload {
    /// What this copy learned about the nodes `owned` accepts.
    pub fn node_state(&self, owned: &dyn Fn(u32) -> bool) -> NodeState {
        NodeState {
            fill_received: self.fill.as_ref().map_or_else(Vec::new, |f| f.export_received(owned)),
            fill_payload_bytes: self.fill.as_ref().map_or(0, |f| f.received_payload_bytes()),
            pingpong: self.pingpong.as_ref().filter(|pp| owned(pp.a)).map(|pp| (pp.started.clone(), pp.finished.clone())),
        }
    }

    /// Merges what another partition's copy learned about its nodes.
    pub fn absorb(&mut self, s: &NodeState) {
        if let Some(f) = self.fill.as_mut() {
            f.import_received(&s.fill_received, s.fill_payload_bytes);
        }
        if let (Some(pp), Some((started, finished))) = (self.pingpong.as_mut(), &s.pingpong) {
            pp.started.clone_from(started);
            pp.finished.clone_from(finished);
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn torus() -> Torus {
        Torus::with_lengths(&[4, 4, 4], &[true; 3])
    }

    #[test]
    fn alltoall_sends_every_pair_exactly_k_times() {
        let t = torus();
        let w = Workload::new(
            Kind::Finite(FinitePattern::AllToAll {
                message_bytes: 3 * 240,
            }),
            PacketFormat::new(256, 16),
            &t,
            5,
        )
        .unwrap();
        for node in [0u32, 17, 63] {
            let count = w.initial_packets(node, 0);
            assert_eq!(count, 63 * 3);
            let mut per_dst = vec![0; 64];
            for i in 0..count {
                let p = w.finite_packet(node, 0, i);
                assert_ne!(p.dst, node);
                per_dst[p.dst as usize] += 1;
            }
            assert!(per_dst
                .iter()
                .enumerate()
                .all(|(d, &c)| c == if d as u32 == node { 0 } else { 3 }));
        }
    }

    #[test]
    fn short_messages_use_one_small_packet() {
        let t = torus();
        let w = Workload::new(
            Kind::Finite(FinitePattern::AllToAll { message_bytes: 16 }),
            PacketFormat::new(256, 16),
            &t,
            5,
        )
        .unwrap();
        assert_eq!(w.initial_packets(0, 0), 63);
        let p = w.finite_packet(0, 0, 0);
        assert_eq!((p.bytes, p.payload), (32, 16));
    }

    #[test]
    fn hot_region_share() {
        let t = torus();
        let w = Workload::new(
            Kind::Open {
                pattern: OpenPattern::HotRegion {
                    hot_fraction: 0.25,
                    origin: vec![0, 0, 0],
                    shape: vec![2, 2, 2],
                },
                load: 0.5,
            },
            PacketFormat::new(256, 16),
            &t,
            1,
        )
        .unwrap();
        let mut rng = Rng::seed_from_u64(3);
        let mut hot = 0;
        let trials = 20000;
        for _ in 0..trials {
            let d = w.open_destination(40, &mut rng).unwrap();
            assert_ne!(d, 40);
            if w.region().binary_search(&d).is_ok() {
                hot += 1;
            }
        }
        // 25% directed + uniform traffic that lands in the region (8/63 of 75%).
        let expect = 0.25 + 0.75 * 8.0 / 63.0;
        assert!((hot as f64 / trials as f64 - expect).abs() < 0.02);
    }

    #[test]
    fn nodes_at_hops() {
        let t = torus();
        for h in 0..=6 {
            let n = node_at_hops(&t, h).unwrap();
            assert_eq!(t.distance(NodeId(0), NodeId(n)), h);
        }
        assert_eq!(node_at_hops(&t, 7), None);
    }
}
