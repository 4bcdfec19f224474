//! Router, routing and run parameters. Defaults are Blue Gene/L's
//! ([S:004]); every field is documented with its unit.

use serde::Serialize;

/// The escape (deadlock-avoidance) scheme of the router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Escape {
    /// Bubble escape VC with dimension-order routing; every packet on it is
    /// charged as full-sized (the BG/L fix for variable-sized packets).
    Bubble,
    /// The original bubble rule (Puente et al.) applied to variable-sized
    /// packets without the BG/L fix: a packet continues with room for
    /// itself and enters with room for itself plus one full-sized packet,
    /// charged its real size. Free space fragments and rings deadlock
    /// (examples/experiments/bubble-unfixed-deadlock.toml).
    BubbleUnfixed,
    /// R1/R2 in full-packet token counts (1 full packet to continue, 2 to
    /// enter) but packets charged their real size: a half fix. An abstract
    /// model with arbitrary delays can deadlock it; the engine's
    /// work-conserving arbitration has not been seen to.
    BubbleFullCounts,
    /// Two escape VCs per direction (lower before the dateline, higher
    /// after), dimension-ordered.
    DatelineDimension,
    /// Dateline pair with direction order x+, y+, z+, x−, y−, z− (T3E).
    DatelineDirection,
    /// No escape channel (dynamic VCs only): tori can deadlock.
    None,
    /// Dragonflies: the route's own VC by class — the number of global
    /// links the packet will have crossed after the link (0, 1, 2); local
    /// hops in a fixed order within a class. Three classes of
    /// [`RouterParams::class_vcs`] VCs each; within its class a packet
    /// takes the VC with the most downstream tokens.
    HopClass,
}

impl Escape {
    pub const NAMES: [&'static str; 7] = [
        "bubble",
        "bubble-unfixed",
        "bubble-full-counts",
        "dateline-dimension",
        "dateline-direction",
        "none",
        "hop-class",
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bubble" => Self::Bubble,
            "bubble-unfixed" => Self::BubbleUnfixed,
            "bubble-full-counts" => Self::BubbleFullCounts,
            "dateline-dimension" => Self::DatelineDimension,
            "dateline-direction" => Self::DatelineDirection,
            "none" => Self::None,
            "hop-class" => Self::HopClass,
            _ => return None,
        })
    }

    /// Escape VCs per input port (hop classes: classes, each of
    /// [`RouterParams::class_vcs`] VCs).
    pub fn vcs(self) -> u8 {
        match self {
            Self::Bubble | Self::BubbleUnfixed | Self::BubbleFullCounts => 1,
            Self::DatelineDimension | Self::DatelineDirection => 2,
            Self::None => 0,
            Self::HopClass => 3,
        }
    }

    pub fn is_bubble(self) -> bool {
        matches!(
            self,
            Self::Bubble | Self::BubbleUnfixed | Self::BubbleFullCounts
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    Random,
    /// Modified SLQ: the fullest VC (2-bit fullness) wins on `slq_fraction`
    /// of the arbitrations, random otherwise.
    Slq,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoutingMode {
    /// Minimal adaptive on the dynamic VCs (JSQ), escape when none is free.
    Adaptive,
    /// Dimension order on the escape VC only.
    Deterministic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FifoSelect {
    /// New packets go to the normal injection FIFOs in turn.
    RoundRobin,
    /// A packet goes to the FIFO of its first dimension-order direction.
    Direction,
}

/// How often a link corrupts a packet.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorRate {
    /// Probability that one transmission of a packet is corrupted.
    PerPacket(f64),
    /// Probability that one bit on the wire is flipped: a transmission of
    /// `w` bytes is corrupted with probability 1 − (1 − p)^(8w).
    PerBit(f64),
}

impl ErrorRate {
    /// Probability that a transmission of `wire_bytes` is corrupted.
    pub fn packet_probability(self, wire_bytes: u64) -> f64 {
        match self {
            Self::PerPacket(p) => p,
            Self::PerBit(b) => -(8.0 * wire_bytes as f64 * (-b).ln_1p()).exp_m1(),
        }
    }
}

/// Error bursts on every link (a Gilbert–Elliott channel): a link leaves
/// its good state after a transmission with probability
/// 1 / `mean_gap_packets` and returns with probability
/// 1 / `mean_burst_packets`; in a burst every transmission is corrupted
/// with probability `error_rate`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bursts {
    pub error_rate: f64,
    pub mean_burst_packets: f64,
    pub mean_gap_packets: f64,
}

/// TofuD's dynamic packet slicing ([S:000]): a link's lanes are
/// separate physical layers. In *split* mode a packet is sliced over the
/// lanes, each slice carrying a copy of the routing header (so virtual
/// cut-through still works); in *duplicate* mode every lane carries the
/// whole packet and the receiver takes a good copy. The link monitors each
/// lane's error rate and goes to duplicate mode when one passes
/// `duplicate_above`, back to split when all fall below `split_below`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slicing {
    pub lanes: u8,
    /// Bytes of the routing header every slice carries a copy of.
    pub header_bytes: u32,
    /// Each lane's bit error rate.
    pub lane_bit_error_rates: Vec<f64>,
    /// Whether the link switches to duplicate mode (TofuD) or stays split
    /// (retransmission only).
    pub dynamic: bool,
    /// Transmissions per monitoring window of the lanes' error rates.
    pub monitor_packets: u32,
    /// Errors per slice above which a lane sends the link to duplicate mode.
    pub duplicate_above: f64,
    /// Errors per slice below which (every lane) the link returns to split mode.
    pub split_below: f64,
}

/// Link errors and the link-level recovery protocol of BG/L
/// ([S:004]): each packet checked by CRC on every link, a copy kept in the
/// sender's retransmission FIFO until acknowledged, go-back-N from the
/// corrupted packet after a time-out, a cumulative link CRC compared at
/// the end of the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkErrors {
    pub rate: ErrorRate,
    /// Per-link rates: (router, output port, rate).
    pub links: Vec<(u32, u8, ErrorRate)>,
    pub bursts: Option<Bursts>,
    /// Cycles from the end of a corrupted packet's transmission until the
    /// sender retransmits it (its acknowledgement did not come).
    pub timeout_cycles: u64,
    /// Packets a link's retransmission FIFO holds (sent, not yet
    /// acknowledged): the go-back-N window. A full FIFO stops the link.
    pub retransmission_fifo_packets: u32,
    /// Probability that a corrupted packet passes the 24-bit packet CRC
    /// (2⁻²⁴): it is accepted, and only the cumulative link CRC compared at
    /// the end of the run shows it.
    pub crc_escape_probability: f64,
    /// TofuD's per-lane packet slicing (`None`: a link is one channel).
    pub slicing: Option<Slicing>,
}

/// The router and link parameters.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RouterParams {
    /// Dynamic (adaptive) VCs per input port.
    pub dynamic_vcs: u8,
    pub escape: Escape,
    /// Whether each input has a high-priority VC (bubble rules, dimension order).
    pub priority_vc: bool,
    /// Buffer of one VC, bytes (BG/L: 1 KB).
    pub vc_buffer_bytes: u32,
    /// Flow-control unit, bytes (BG/L: 32-byte chunks, one token each).
    pub chunk_bytes: u32,
    /// Largest packet, bytes (BG/L: 256). A VC is advertised available only
    /// when a packet of this size fits.
    pub max_packet_bytes: u32,
    /// Per-packet link overhead, bytes: trailer + ack/token-ack share + idle gap (BG/L 4 + 8 + 2).
    pub overhead_bytes: u32,
    /// Header latency of one hop: wire and router pipeline, cycles.
    pub hop_latency_cycles: u32,
    /// Delay before a freed buffer's tokens reach the sender, cycles.
    pub token_latency_cycles: u32,
    /// Receiver → sender transfer paths per input port (BG/L: 2).
    pub paths: u8,
    pub arbitration: Arbitration,
    /// Fraction of arbitrations that use SLQ (the rest are random).
    pub slq_fraction: f64,
    /// Fraction of sender arbitrations in which in-network packets beat injection.
    pub network_priority: f64,
    /// Output choice among free dynamic VCs: JSQ (most downstream tokens) or random.
    pub jsq: bool,
    /// Ranges JSQ sees a VC's downstream tokens in (BG/L publishes a
    /// 2-bit token range per VC: 4, [S:004]); up to the buffer's
    /// tokens, where JSQ sees the exact count.
    pub jsq_ranges: u16,
    /// Normal injection FIFOs (BG/L 6) and high-priority ones (BG/L 2).
    pub injection_fifos: u8,
    pub priority_fifos: u8,
    /// Capacity of one injection FIFO, bytes.
    pub injection_fifo_bytes: u32,
    pub fifo_select: FifoSelect,
    /// Rate of the host interface feeding all injection FIFOs of a node,
    /// bytes per cycle (infinite, null in a result: no limit beyond the FIFOs).
    #[serde(serialize_with = "finite_or_null")]
    #[schemars(with = "Option<f64>")]
    pub host_bytes_per_cycle: f64,
    /// Nodes attached to each router (BG/L, Tofu: 1; Aries: 4). Each node
    /// has its own injection FIFOs, host interface and send queues; traffic
    /// between two nodes of one router turns around inside it.
    pub nodes_per_router: u32,
    /// Per output port index: cycles per byte on that port's links, relative
    /// to the reference link that defines the cycle (empty: every link at
    /// the reference rate). Aries: rank-3 optical links are slower than
    /// the electrical ones.
    pub port_cycles_per_byte: Vec<f64>,
    /// VCs per hop class (escape `hop-class`; 1 elsewhere): several VCs of
    /// one class let a packet pass another blocked on its output.
    pub class_vcs: u8,
    /// Virtual output queues (fat-tree switches): the dynamic VC a packet
    /// takes at the next switch's input is the output it will leave that
    /// switch by (`Routing::output_at`, computed one hop ahead as in
    /// lookahead routing), modulo the dynamic VCs; so a packet waiting for
    /// a busy output never holds up one bound for another (no head-of-line
    /// blocking), as in the VOQ input buffers of InfiniBand-class switches.
    /// With [`FifoSelect::Direction`] a node's injection FIFOs are keyed the
    /// same way by the output at its leaf.
    pub virtual_output_queues: bool,
}

fn finite_or_null<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else {
        s.serialize_none()
    }
}

impl RouterParams {
    /// Blue Gene/L ([S:004]; latencies are [MEM] settings, documented in docs/model.md).
    pub fn bgl() -> Self {
        Self {
            dynamic_vcs: 2,
            escape: Escape::Bubble,
            priority_vc: true,
            vc_buffer_bytes: 1024,
            chunk_bytes: 32,
            max_packet_bytes: 256,
            overhead_bytes: 14,
            hop_latency_cycles: 16,
            token_latency_cycles: 16,
            paths: 2,
            arbitration: Arbitration::Slq,
            slq_fraction: 0.75,
            network_priority: 1.0,
            jsq: true,
            jsq_ranges: 4,
            injection_fifos: 6,
            priority_fifos: 2,
            injection_fifo_bytes: 1024,
            fifo_select: FifoSelect::RoundRobin,
            host_bytes_per_cycle: f64::INFINITY,
            nodes_per_router: 1,
            port_cycles_per_byte: Vec::new(),
            class_vcs: 1,
            virtual_output_queues: false,
        }
    }

    /// Tokens (chunks) in one VC buffer.
    pub fn vc_tokens(&self) -> u32 {
        self.vc_buffer_bytes / self.chunk_bytes
    }

    /// Chunks of a full-sized packet.
    pub fn full_chunks(&self) -> u32 {
        self.max_packet_bytes.div_ceil(self.chunk_bytes)
    }

    /// Queues of a router with `ports` network ports: a buffer per port
    /// and VC, then every node's injection FIFOs.
    pub fn queues(&self, ports: usize) -> usize {
        ports * self.vcs() as usize
            + self.nodes_per_router.max(1) as usize * (self.injection_fifos + self.priority_fifos) as usize
    }

    /// VCs per input port: dynamic, escape, priority.
    pub fn vcs(&self) -> u8 {
        self.dynamic_vcs + self.escape_vcs() + self.priority_vc as u8
    }

    /// Escape VCs per input port.
    pub fn escape_vcs(&self) -> u8 {
        match self.escape {
            Escape::HopClass => self.escape.vcs() * self.class_vcs.max(1),
            e => e.vcs(),
        }
    }
}

/// Fault planted on purpose, to show the invariant checks catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlantedFault {
    /// One packet vanishes on a link.
    DropPacket,
    /// One token return is lost.
    LeakToken,
    /// One packet's payload is altered on a link.
    CorruptPayload,
}

impl PlantedFault {
    pub const NAMES: [&'static str; 3] = ["drop-packet", "leak-token", "corrupt-payload"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "drop-packet" => Self::DropPacket,
            "leak-token" => Self::LeakToken,
            "corrupt-payload" => Self::CorruptPayload,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunParams {
    /// Cycles to simulate (open loop), or a cap for finite workloads.
    pub cycles: Option<u64>,
    /// Cycles excluded from the statistics (open loop).
    pub warmup: u64,
    pub seed: u64,
    /// Length of one time-series window, cycles.
    pub sample_cycles: u64,
    /// A run in which no packet moves for this many cycles while packets are in flight is a deadlock.
    pub deadlock_cycles: u64,
    /// Full invariant audit every this many cycles (0: only at the end).
    pub audit_cycles: u64,
    pub plant: Option<PlantedFault>,
    /// Cycle after which the planted fault strikes.
    pub plant_after: u64,
    /// Period of the per-port counter snapshots, cycles (0: final counters only).
    pub counter_cycles: u64,
    /// Packets alive at once beyond which the run stops (`budget_exceeded`
    /// in the result): the memory budget's guard against an open-loop
    /// source backlog that grows without end past saturation. `None`: no
    /// limit.
    pub max_live_packets: Option<u64>,
    /// Count what JSQ's output choices see (the run's `jsq` report): a
    /// diagnosis, off by default — the count per candidate costs about 2%
    /// of the engine's instructions on BG/L.
    pub jsq_statistics: bool,
}

impl Default for RunParams {
    fn default() -> Self {
        Self {
            cycles: None,
            warmup: 0,
            seed: 1,
            sample_cycles: 1000,
            deadlock_cycles: 20_000,
            audit_cycles: 0,
            plant: None,
            plant_after: 0,
            counter_cycles: 0,
            max_live_packets: None,
            jsq_statistics: false,
        }
    }
}
