//! The result of a run, in the JSON shape docs/experiment.md fixes (plus extras).

use crate::stats::{LatencySummary, PortCounters, Sample};
use crate::wire::{Put, Reader};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct BlockedVc {
    pub router: String,
    pub port: String,
    pub vc: String,
    pub used_chunks: u32,
}

/// A stalled network: no packet moved for `stalled_cycles` while packets were in flight.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Deadlock {
    pub cycle: u64,
    /// How it was found: `watchdog` (no packet moved for more than
    /// `run.deadlock_cycles`) or `no-event-left` (packets wait and nothing
    /// can ever happen again: certain at once, before the watchdog).
    pub detected_by: &'static str,
    pub stalled_cycles: u64,
    pub packets_in_flight: u64,
    /// True when the blocked heads form a cycle of waits (a true deadlock).
    pub wait_cycle_found: bool,
    pub wait_cycle_length: usize,
    /// The VCs of the wait cycle (at most 64).
    pub blocked_vcs: Vec<BlockedVc>,
}

/// An invariant check that failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct InvariantError {
    pub kind: &'static str,
    pub cycle: u64,
    pub detail: String,
}

/// Every kind of invariant violation the engine reports.
pub const INVARIANT_KINDS: [&str; 10] = [
    "packet-conservation",
    "arbitration-index",
    "buffer-accounting",
    "token-conservation",
    "duplicate-delivery",
    "wrong-destination",
    "payload-checksum",
    "broadcast-incomplete",
    "schedule-incomplete",
    // Not a broken invariant but a run that cannot go on: a packet with
    // no route around the network's failures.
    "unroutable",
];

impl InvariantError {
    /// Of two violations, the one a run reports: the earlier, then the
    /// first by kind and text (an order independent of partitions).
    pub fn precedes(&self, o: &InvariantError) -> bool {
        (self.cycle, self.kind, &self.detail) < (o.cycle, o.kind, &o.detail)
    }

    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        buf.put_u64(self.cycle);
        buf.put_u8(INVARIANT_KINDS.iter().position(|&k| k == self.kind).expect("a listed kind") as u8);
        buf.put_bytes(self.detail.as_bytes());
    }

    pub(crate) fn get(r: &mut Reader) -> Self {
        let cycle = r.u64();
        let kind = INVARIANT_KINDS[r.u8() as usize];
        InvariantError { kind, cycle, detail: String::from_utf8_lossy(r.bytes()).into_owned() }
    }
}

/// How a split run shared the work (absent when it was not split).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct PartitionInfo {
    /// How the network was cut.
    pub how: String,
    pub threads_per_process: usize,
    pub processes: usize,
    /// The synchronisation window, cycles, and the windows simulated.
    pub window_cycles: u64,
    pub windows: u64,
    pub partitions: Vec<PartitionLoad>,
    /// Most events of a partition over the mean (1 = perfectly balanced).
    pub event_imbalance: f64,
}

/// One partition's share of a split run.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct PartitionLoad {
    pub routers: u64,
    pub events: u64,
    /// Wall time spent simulating its windows, and at window boundaries
    /// exchanging with and waiting for the others.
    pub busy_seconds: f64,
    pub wait_seconds: f64,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SimInfo {
    pub cycles: u64,
    pub events: u64,
    pub wall_seconds: f64,
    pub peak_memory_bytes: u64,
    /// Simulated network time per wall second, microseconds.
    pub simulated_us_per_wall_second: f64,
    pub packet_hops: u64,
    /// Window length and count, and per-partition load of a split run.
    pub partitions: Option<PartitionInfo>,
    /// The memory the run was checked against before it started, bytes
    /// (set by the front door that checked it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_memory_bytes: Option<u64>,
    /// The work estimated before it started, packet-hops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_packet_hops: Option<u64>,
}

/// JSQ's measured output choices among two or more free dynamic VCs: how
/// many, the fraction whose best 2-bit token range one candidate held
/// alone (the rest went to the random tie-break), and the candidates
/// compared by range (0: under a quarter of the downstream buffer free,
/// 3: at least three quarters).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct JsqReport {
    pub choices: u64,
    pub separated_fraction: f64,
    pub candidate_ranges: [u64; 4],
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct PortRecord {
    pub router: u32,
    pub port: String,
    #[serde(flatten)]
    pub counters: PortCounters,
    /// Measured cycles in which the link was not sending.
    pub idle_cycles: u64,
}

/// The counter samples of a run, as columns (one row per port, or per
/// port and VC, per sample; cumulative since the warm-up). They are not in
/// the result's JSON, which has only their count and period: a run on a
/// few thousand ports samples millions of rows, so the front end writes
/// them to Parquet (`port_samples.parquet`, `vc_samples.parquet`) from
/// these columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterSamples {
    /// The period asked for (`run.counter_period`), and the one the
    /// samples kept have: twice it for every halving of a long run's
    /// samples ([`crate::stats::MAX_COUNTER_ROWS`]).
    pub requested_period_cycles: u64,
    pub period_cycles: u64,
    /// Distinct sample cycles.
    pub samples: u64,
    /// Port names by port index, VC names by VC index, and a VC buffer's
    /// capacity in chunks (what `held_chunks` is out of).
    pub port_names: Vec<String>,
    pub vc_names: Vec<String>,
    pub vc_buffer_chunks: u32,
    pub ports: PortSampleColumns,
    pub vcs: VcSampleColumns,
}

/// Per port and sample: the PA counters (see [`PortCounters`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortSampleColumns {
    pub cycle: Vec<u64>,
    pub router: Vec<u32>,
    /// Index into [`CounterSamples::port_names`].
    pub port: Vec<u8>,
    pub bytes: Vec<u64>,
    pub packets: Vec<u64>,
    pub busy_cycles: Vec<u64>,
    pub idle_cycles: Vec<u64>,
    pub depleted_cycles: Vec<u64>,
}

/// Per port, downstream VC and sample: the packets and bytes sent into
/// that VC, and the chunks its buffer holds as the sender's tokens see it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VcSampleColumns {
    pub cycle: Vec<u64>,
    pub router: Vec<u32>,
    pub port: Vec<u8>,
    /// Index into [`CounterSamples::vc_names`].
    pub vc: Vec<u8>,
    pub bytes: Vec<u64>,
    pub packets: Vec<u64>,
    pub held_chunks: Vec<u32>,
}

impl CounterSamples {
    pub fn is_empty(&self) -> bool {
        self.ports.cycle.is_empty()
    }
}

/// What a run sampled and how much (`counter_samples` in the result's
/// JSON): the rows themselves are in the columns, written to Parquet.
#[derive(Serialize, schemars::JsonSchema)]
pub struct SamplingInfo {
    /// The period asked for (`run.counter_period`), cycles.
    pub requested_period_cycles: u64,
    /// The period of the samples kept: doubled for each halving of a long
    /// run's samples, cycles.
    pub period_cycles: u64,
    /// Distinct sample cycles.
    pub samples: u64,
    /// Rows of the port and the VC samples.
    pub port_rows: u64,
    pub vc_rows: u64,
}

impl CounterSamples {
    /// What the JSON says of the samples.
    pub fn info(&self) -> SamplingInfo {
        SamplingInfo {
            requested_period_cycles: self.requested_period_cycles,
            period_cycles: self.period_cycles,
            samples: self.samples,
            port_rows: self.ports.cycle.len() as u64,
            vc_rows: self.vcs.cycle.len() as u64,
        }
    }
}

/// In JSON, what was sampled and how much ([`SamplingInfo`]).
impl Serialize for CounterSamples {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.info().serialize(s)
    }
}

impl schemars::JsonSchema for CounterSamples {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        SamplingInfo::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        SamplingInfo::json_schema(generator)
    }
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[allow(non_snake_case)] // the unit in the name: GBps (gigabytes per second)
pub struct RunResult {
    pub complete: bool,
    /// Stopped early at the caller's request (Ctrl-C): what is reported
    /// was measured up to the last window simulated.
    pub interrupted: bool,
    /// Stopped because more packets were alive than the memory budget
    /// allows (an open-loop source backlog past saturation): the packets
    /// alive then.
    pub budget_exceeded: Option<u64>,
    pub link_utilization: f64,
    pub payload_utilization: f64,
    pub offered_load: Option<f64>,
    /// Open loop: the fraction of nodes that send (see
    /// `Traffic::sending_fraction`); the load really offered is
    /// `offered_load × sending_fraction`.
    pub sending_fraction: Option<f64>,
    pub accepted_load: f64,
    /// A node's injection bandwidth, GB/s (the unit of the loads above: a
    /// cycle is one byte-time of a link, `injection_links` links per node).
    pub injection_GBps_per_node: f64,
    /// The offered and accepted loads per node in GB/s (mean over all
    /// nodes; comparable across systems, whose links differ).
    pub offered_GBps_per_node: Option<f64>,
    pub accepted_GBps_per_node: f64,
    /// Packet latency (creation to delivery), cycles of `cycle_ns`.
    pub latency: LatencySummary,
    /// The same in nanoseconds (comparable across systems, whose cycles differ).
    pub latency_ns: LatencySummary,
    pub latency_distribution: Vec<(f64, u64)>,
    pub packets_injected: u64,
    pub packets_delivered: u64,
    /// Packets sent on a route around a failed node or link (0 on a
    /// healthy network).
    pub packets_rerouted: u64,
    /// Packets lost on links that failed during the run, and sent again
    /// end to end by their sources (0 without a failure schedule).
    pub packets_lost: u64,
    pub packets_resent: u64,
    pub completion_cycles: Option<u64>,
    pub cycle_ns: f64,
    pub warmup_cycles: u64,
    pub measured_cycles: u64,
    /// Packet-hops per VC class in the measured window, and the share on escape VCs.
    pub vc_traffic: BTreeMap<String, u64>,
    pub escape_fraction: f64,
    /// Mean fill of each VC class over the time series (fraction of the buffer).
    pub vc_occupancy: BTreeMap<String, f64>,
    /// Fraction of token returns after which a packet blocked for tokens went.
    pub unblocking_probability: f64,
    /// What JSQ's output choices saw (adaptive routing with JSQ; `None`
    /// otherwise or without a choice between two candidates).
    pub jsq: Option<JsqReport>,
    pub timeseries: Vec<Sample>,
    pub ports: Vec<PortRecord>,
    /// Entries the traffic adds ([`crate::Traffic::report`]): ping-pong
    /// rounds, broadcast results…
    #[serde(flatten)]
    pub traffic: serde_json::Map<String, serde_json::Value>,
    /// PA counter and per-VC samples every `run.counter_period` (none when 0).
    pub counter_samples: CounterSamples,
    pub deadlock: Option<Deadlock>,
    pub invariant_error: Option<InvariantError>,
    /// Link errors and their recovery (`None`: error-free links).
    pub link_errors: Option<LinkErrorReport>,
    /// What limited the run: the binding resource in one sentence, blocked
    /// time by cause, utilisation by resource class ([`crate::limits`]).
    pub limits: crate::limits::Limits,
    pub sim: SimInfo,
}

/// What the link protocol did over the run (every cycle, warm-up included).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct LinkErrorReport {
    #[serde(flatten)]
    pub tally: crate::router::link_protocol::LinkTally,
    /// Retransmissions over all transmissions.
    pub retransmitted_fraction: f64,
    /// Links whose two ends' cumulative CRCs disagree at the end of the
    /// run ("router port"): a corrupted packet passed the packet CRC there.
    pub crc_mismatch_links: Vec<String>,
    /// False when some link's CRCs disagree: data the run delivered may be
    /// corrupt (the machine restarts from a checkpoint).
    pub trustworthy: bool,
}

/// The process's peak resident memory (VmHWM), bytes (0 where /proc is missing).
pub fn peak_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map_or(0, |k| k * 1024)
}
