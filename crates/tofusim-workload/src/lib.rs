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
//! One module per pattern (`pattern/`), behind two traits: an open-loop
//! pattern says where a node's next packet goes, a finite one which
//! packets each node sends and what it answers. A workload is bound to its
//! topology's [`NodeSpace`]: a torus's coordinates, a dragonfly's groups
//! or a fat-tree's numbering; each pattern says where it runs
//! ([`PatternName::runs_on`]).
//!
//! Sizes: `packet_bytes` is the packet as the router sees it (n × 32 B,
//! n = 1..8); `header_bytes` of it are software header, the rest payload.

pub mod pattern;
mod permutation;
mod space;
mod traffic;
mod workload;

pub use pattern::{node_at_hops, region_nodes, Fill, Message, PatternName};
pub use permutation::Permutation;
pub use space::{Alive, NodeSpace};
pub use workload::Workload;
pub use tofusim_packet::{NewMessage, NewPacket};
pub use traffic::{BroadcastResult, PingPongRound};

use serde::Serialize;

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

/// Why a workload cannot be built on a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    pub key: &'static str,
    pub message: String,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use tofusim_topology::{NodeId, Torus};

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
            &NodeSpace::Grid(t.clone()),
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
            &NodeSpace::Grid(t.clone()),
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
            &NodeSpace::Grid(t.clone()),
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
