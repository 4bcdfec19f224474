//! The result of a run, in the JSON shape DESIGN.md fixes (plus extras).

use crate::traffic::{RunEnd, Traffic};
use crate::engine::Engine;
use crate::stats::{LatencySummary, PortCounters, Sample};
use crate::window::Ending;
use crate::wire::{Put, Reader};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct BlockedVc {
    pub router: String,
    pub port: String,
    pub vc: String,
    pub used_chunks: u32,
}

/// A stalled network: no packet moved for `stalled_cycles` while packets were in flight.
#[derive(Clone, Debug, Serialize)]
pub struct Deadlock {
    pub cycle: u64,
    pub stalled_cycles: u64,
    pub packets_in_flight: u64,
    /// True when the blocked heads form a cycle of waits (a true deadlock).
    pub wait_cycle_found: bool,
    pub wait_cycle_length: usize,
    /// The VCs of the wait cycle (at most 64).
    pub blocked_vcs: Vec<BlockedVc>,
}

/// An invariant check that failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InvariantError {
    pub kind: &'static str,
    pub cycle: u64,
    pub detail: String,
}

/// Every kind of invariant violation the engine reports.
pub const INVARIANT_KINDS: [&str; 9] = [
    "packet-conservation",
    "arbitration-index",
    "buffer-accounting",
    "token-conservation",
    "duplicate-delivery",
    "wrong-destination",
    "payload-checksum",
    "broadcast-incomplete",
    "schedule-incomplete",
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
pub struct PartitionLoad {
    pub routers: u64,
    pub events: u64,
    /// Wall time spent simulating its windows, and at window boundaries
    /// exchanging with and waiting for the others.
    pub busy_seconds: f64,
    pub wait_seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
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
}

#[derive(Clone, Debug, Serialize)]
pub struct PortRecord {
    pub router: u32,
    pub port: String,
    #[serde(flatten)]
    pub counters: PortCounters,
    /// Measured cycles in which the link was not sending.
    pub idle_cycles: u64,
}

/// PA counters of one port at one cycle (cumulative since the warm-up).
#[derive(Clone, Debug, Serialize)]
pub struct PortSample {
    pub cycle: u64,
    pub router: u32,
    pub port: String,
    pub bytes: u64,
    pub packets: u64,
    pub busy_cycles: u64,
    pub idle_cycles: u64,
    pub depleted_cycles: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub complete: bool,
    pub link_utilization: f64,
    pub payload_utilization: f64,
    pub offered_load: Option<f64>,
    pub accepted_load: f64,
    pub latency: LatencySummary,
    pub latency_distribution: Vec<(f64, u64)>,
    pub packets_injected: u64,
    pub packets_delivered: u64,
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
    pub timeseries: Vec<Sample>,
    pub ports: Vec<PortRecord>,
    /// Entries the traffic adds ([`crate::Traffic::report`]): ping-pong
    /// rounds, broadcast results…
    #[serde(flatten)]
    pub traffic: serde_json::Map<String, serde_json::Value>,
    /// PA counter snapshots every `run.counter_cycles` (empty when 0).
    pub port_samples: Vec<PortSample>,
    pub deadlock: Option<Deadlock>,
    pub invariant_error: Option<InvariantError>,
    pub sim: SimInfo,
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

/// The result of a run from the engine holding every partition's merged
/// state (see [`crate::summary`]).
pub(crate) fn finish<W: Traffic>(mut e: Engine<W>, end: Ending, wall: f64, partitions: Option<PartitionInfo>) -> RunResult {
    let Ending { t: t_end, mut completion, deadlock, .. } = end;
    if completion.is_some() && e.error.is_none() {
        match e.workload.check_complete() {
            Err(err) => e.fail(t_end, err.kind, err.detail),
            // The last step may be local work after the last delivery.
            Ok(Some(local_end)) => completion = completion.map(|c| c.max(local_end)),
            Ok(None) => {}
        }
    }
    let lay = e.lay;
    let end = completion.unwrap_or(t_end).max(1);
    let window = end.saturating_sub(e.run.warmup).max(1) as f64;
    let links = e.directed_links.max(1) as f64;
    let n = e.nodes as f64;
    let mut vc_traffic = BTreeMap::new();
    let mut hops_total = 0;
    let mut escape_hops = 0;
    for v in 0..lay.vcs {
        vc_traffic.insert(lay.vc_name(v), e.vc_hops[v]);
        hops_total += e.vc_hops[v];
        if v >= lay.esc && v < lay.esc + lay.esc_count {
            escape_hops += e.vc_hops[v];
        }
    }
    let period = e.run.sample_cycles.max(1) as f64;
    let fill_denom = (lay.routers * lay.ports) as f64 * e.cap as f64;
    let timeseries: Vec<Sample> = e
        .samples
        .iter()
        .map(|s| Sample {
            cycle: s.cycle,
            accepted_load: s.delivered_bytes as f64 / (n * period * e.injection_links),
            link_utilization: s.busy as f64 / (e.directed_links.max(1) as f64 * period),
            packets_delivered: s.delivered,
            token_returns: s.tokens,
            unblocking_probability: if s.tokens > 0 { s.unblocks as f64 / s.tokens as f64 } else { 0.0 },
            vc_fill: s.fill.iter().map(|&f| f as f64 / fill_denom).collect(),
        })
        .collect();
    let mut vc_occupancy = BTreeMap::new();
    if !timeseries.is_empty() {
        for v in 0..lay.vcs {
            let mean = timeseries.iter().map(|s| s.vc_fill[v]).sum::<f64>() / timeseries.len() as f64;
            vc_occupancy.insert(lay.vc_name(v), mean);
        }
    }
    let mut ports = Vec::new();
    for r in 0..lay.routers {
        for o in 0..lay.ports {
            if e.routing.neighbor(r as u32, o as u8).is_some() {
                ports.push(PortRecord {
                    router: r as u32,
                    port: e.routing.port_name(o as u8),
                    counters: e.counters[r * lay.ports + o],
                    idle_cycles: (window as u64)
                        .saturating_sub(e.counters[r * lay.ports + o].busy_cycles),
                });
            }
        }
    }
    let traffic = e.workload.report(&RunEnd {
        nodes: e.nodes as u64,
        end_cycle: end,
        deposits: e.deposits,
        wire_overhead_bytes: e.params.overhead_bytes as u64,
    });
    let warm = e.run.warmup;
    let port_samples = e
        .counter_snapshots
        .iter()
        .map(|&(cycle, i, c)| PortSample {
            cycle,
            router: i / lay.ports as u32,
            port: e.routing.port_name((i % lay.ports as u32) as u8),
            bytes: c.bytes,
            packets: c.packets,
            busy_cycles: c.busy_cycles,
            idle_cycles: cycle.saturating_sub(warm).saturating_sub(c.busy_cycles),
            depleted_cycles: c.depleted_cycles,
        })
        .collect();
    let offered = e.workload.offered_load();
    let sim_us = t_end as f64 * e.cycle_ns / 1000.0;
    RunResult {
        complete: deadlock.is_none()
            && e.error.is_none()
            && (completion.is_some() || !e.workload.is_finite()),
        link_utilization: e.busy_measured as f64 / (links * window),
        payload_utilization: e.payload_measured as f64 / (links * window),
        offered_load: offered,
        accepted_load: e.delivered_bytes_measured as f64 / (n * window * e.injection_links),
        latency: e.hist.summary(),
        latency_distribution: e.hist.distribution(60),
        packets_injected: e.created,
        packets_delivered: e.delivered,
        completion_cycles: completion,
        cycle_ns: e.cycle_ns,
        warmup_cycles: e.run.warmup,
        measured_cycles: window as u64,
        vc_traffic,
        escape_fraction: if hops_total > 0 {
            escape_hops as f64 / hops_total as f64
        } else {
            0.0
        },
        vc_occupancy,
        unblocking_probability: if e.token_returns > 0 {
            e.unblocks as f64 / e.token_returns as f64
        } else {
            0.0
        },
        timeseries,
        ports,
        traffic,
        port_samples,
        deadlock,
        invariant_error: e.error.clone(),
        sim: SimInfo {
            cycles: t_end,
            events: e.events,
            wall_seconds: wall,
            peak_memory_bytes: peak_memory_bytes(),
            simulated_us_per_wall_second: if wall > 0.0 { sim_us / wall } else { 0.0 },
            packet_hops: e.counters.iter().map(|c| c.packets).sum(),
            partitions,
        },
    }
}
