//! Statistics gathered during a run: latency histogram, time series,
//! per-VC traffic, and per-port counters like Tofu's PA counters.

use serde::Serialize;

use crate::wire::{Put, Reader};

/// Latency histogram: exact up to 2^16 cycles, 256-cycle bins above.
#[derive(Clone)]
pub struct Histogram {
    fine: Vec<u64>,
    coarse: Vec<u64>,
    count: u64,
    sum: f64,
    max: u64,
}

const FINE: u64 = 1 << 16;
const COARSE_BIN: u64 = 256;

impl Default for Histogram {
    fn default() -> Self {
        Self {
            fine: vec![0; FINE as usize],
            coarse: Vec::new(),
            count: 0,
            sum: 0.0,
            max: 0,
        }
    }
}

#[derive(Clone, Debug, Serialize, Default, schemars::JsonSchema)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl LatencySummary {
    /// The summary in another unit: every value times `factor` (e.g.
    /// cycles to nanoseconds by the cycle's length).
    pub fn scaled(&self, factor: f64) -> Self {
        LatencySummary { count: self.count, mean: self.mean * factor, p50: self.p50 * factor, p99: self.p99 * factor, max: self.max * factor }
    }
}

impl Histogram {
    pub fn add(&mut self, v: u64) {
        if v < FINE {
            self.fine[v as usize] += 1;
        } else {
            let b = ((v - FINE) / COARSE_BIN) as usize;
            if b >= self.coarse.len() {
                self.coarse.resize(b + 1, 0);
            }
            self.coarse[b] += 1;
        }
        self.count += 1;
        self.sum += v as f64;
        self.max = self.max.max(v);
    }

    fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let target = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (v, &c) in self.fine.iter().enumerate() {
            seen += c;
            if seen >= target {
                return v as f64;
            }
        }
        for (b, &c) in self.coarse.iter().enumerate() {
            seen += c;
            if seen >= target {
                return (FINE + b as u64 * COARSE_BIN + COARSE_BIN / 2) as f64;
            }
        }
        self.max as f64
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            mean: if self.count > 0 {
                self.sum / self.count as f64
            } else {
                0.0
            },
            p50: self.quantile(0.5),
            p99: self.quantile(0.99),
            max: self.max as f64,
        }
    }

    /// Adds another partition's latencies.
    pub(crate) fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.fine.iter_mut().zip(&o.fine) {
            *a += b;
        }
        if o.coarse.len() > self.coarse.len() {
            self.coarse.resize(o.coarse.len(), 0);
        }
        for (a, b) in self.coarse.iter_mut().zip(&o.coarse) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.max = self.max.max(o.max);
    }

    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        let fine: Vec<(usize, u64)> = self.fine.iter().copied().enumerate().filter(|&(_, c)| c > 0).collect();
        buf.put_u64(fine.len() as u64);
        for (v, c) in fine {
            buf.put_u32(v as u32);
            buf.put_u64(c);
        }
        buf.put_u64(self.coarse.len() as u64);
        self.coarse.iter().for_each(|&c| buf.put_u64(c));
        buf.put_u64(self.count);
        buf.put_f64(self.sum);
        buf.put_u64(self.max);
    }

    pub(crate) fn get(r: &mut Reader) -> Self {
        let mut h = Histogram::default();
        for _ in 0..r.u64() {
            let v = r.u32() as usize;
            h.fine[v] = r.u64();
        }
        h.coarse = (0..r.u64()).map(|_| r.u64()).collect();
        h.count = r.u64();
        h.sum = r.f64();
        h.max = r.u64();
        h
    }

    /// (latency, count) pairs for a distribution plot, in `bins` bins.
    pub fn distribution(&self, bins: usize) -> Vec<(f64, u64)> {
        if self.count == 0 {
            return Vec::new();
        }
        let width = (self.max / bins as u64).max(1);
        let mut out = vec![0u64; bins + 1];
        for (v, &c) in self.fine.iter().enumerate() {
            if c > 0 {
                out[((v as u64 / width) as usize).min(bins)] += c;
            }
        }
        for (b, &c) in self.coarse.iter().enumerate() {
            if c > 0 {
                let v = FINE + b as u64 * COARSE_BIN;
                out[((v / width) as usize).min(bins)] += c;
            }
        }
        out.into_iter()
            .enumerate()
            .map(|(i, c)| ((i as u64 * width) as f64, c))
            .collect()
    }
}

/// One time-series window as counted by one partition: sums that add up
/// over partitions, turned into a [`Sample`] at the end.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SampleSums {
    /// End of the window, cycles.
    pub cycle: u64,
    pub delivered_bytes: u64,
    pub delivered: u64,
    /// Link busy cycles.
    pub busy: u64,
    pub tokens: u64,
    pub unblocks: u64,
    /// Token returns to an output a packet was waiting at for tokens, and
    /// the grants there in the cycle they came back (see [`Sample`]).
    pub blocked_tokens: u64,
    pub waited_unblocks: u64,
    /// Per VC class: chunks held in the network inputs' buffers at the end.
    pub fill: Vec<u64>,
}

impl SampleSums {
    pub(crate) fn add(&mut self, o: &SampleSums) {
        debug_assert_eq!(self.cycle, o.cycle);
        self.delivered_bytes += o.delivered_bytes;
        self.delivered += o.delivered;
        self.busy += o.busy;
        self.tokens += o.tokens;
        self.unblocks += o.unblocks;
        self.blocked_tokens += o.blocked_tokens;
        self.waited_unblocks += o.waited_unblocks;
        for (a, b) in self.fill.iter_mut().zip(&o.fill) {
            *a += b;
        }
    }

    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        for x in [self.cycle, self.delivered_bytes, self.delivered, self.busy, self.tokens, self.unblocks, self.blocked_tokens, self.waited_unblocks] {
            buf.put_u64(x);
        }
        buf.put_u64(self.fill.len() as u64);
        self.fill.iter().for_each(|&f| buf.put_u64(f));
    }

    pub(crate) fn get(r: &mut Reader) -> Self {
        let mut s = SampleSums { cycle: r.u64(), delivered_bytes: r.u64(), delivered: r.u64(), busy: r.u64(), tokens: r.u64(), unblocks: r.u64(), blocked_tokens: r.u64(), waited_unblocks: r.u64(), fill: Vec::new() };
        s.fill = (0..r.u64()).map(|_| r.u64()).collect();
        s
    }
}

/// One time-series window.
#[derive(Clone, Debug, Serialize, Default, schemars::JsonSchema)]
pub struct Sample {
    /// End of the window, cycles.
    pub cycle: u64,
    /// Delivered packet bytes in the window over the nodes' injection capacity.
    pub accepted_load: f64,
    /// Link busy time in the window over link capacity.
    pub link_utilization: f64,
    pub packets_delivered: u64,
    /// Token returns in the window, and those that let a blocked packet go.
    pub token_returns: u64,
    /// Grants at an output refused for lack of tokens, in the cycle tokens
    /// came back to it, over every token return: mostly returns to outputs
    /// nothing waits at, whose number follows the throughput.
    pub unblocking_probability: f64,
    /// Token returns to an output at which a packet has waited for tokens
    /// since an earlier cycle (the returns that can unblock one).
    pub blocked_token_returns: u64,
    /// The share of those after which a packet that waited went out on
    /// that output in the same cycle: the probability that a token-ack
    /// coming back over a link with blocked packets frees one (B8).
    pub blocked_unblocking_probability: f64,
    /// Mean fill of each VC class at the end of the window (fraction of its buffer).
    pub vc_fill: Vec<f64>,
}

/// Per output port: the counters of a Tofu PA unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, bytemuck::Zeroable, schemars::JsonSchema)]
pub struct PortCounters {
    pub bytes: u64,
    pub packets: u64,
    pub busy_cycles: u64,
    /// Cycles in which a packet waited for this port with the link free but
    /// too few downstream tokens.
    pub depleted_cycles: u64,
}

impl PortCounters {
    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        for x in [self.bytes, self.packets, self.busy_cycles, self.depleted_cycles] {
            buf.put_u64(x);
        }
    }

    pub(crate) fn get(r: &mut Reader) -> Self {
        PortCounters { bytes: r.u64(), packets: r.u64(), busy_cycles: r.u64(), depleted_cycles: r.u64() }
    }
}

/// Per output port and downstream VC: what went through that VC of the
/// next router's input (the port's counters split by VC), kept only when
/// the run samples its counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Zeroable)]
pub struct VcCounters {
    pub bytes: u64,
    pub packets: u64,
}

/// One VC's counters at a sample: `index` is (router·ports + port)·vcs +
/// VC; `held_chunks` the chunks its downstream buffer holds as the sender
/// sees it then (its buffer's capacity less the tokens it has: packets in
/// the buffer, on the wire, and tokens on their way back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct VcSnapshot {
    pub cycle: u64,
    pub index: u32,
    pub held_chunks: u32,
    pub counters: VcCounters,
}

impl VcSnapshot {
    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        buf.put_u64(self.cycle);
        buf.put_u32(self.index);
        buf.put_u32(self.held_chunks);
        buf.put_u64(self.counters.bytes);
        buf.put_u64(self.counters.packets);
    }

    pub(crate) fn get(r: &mut Reader) -> Self {
        VcSnapshot { cycle: r.u64(), index: r.u32(), held_chunks: r.u32(), counters: VcCounters { bytes: r.u64(), packets: r.u64() } }
    }
}

/// Counter rows (port rows plus VC rows) a run keeps at most: past it
/// the sampling period doubles and every other sample is dropped, so a
/// long run on a large machine keeps about this many rows (~150 MB at
/// most) with fewer, evenly spaced samples. The counters are cumulative,
/// so a dropped sample loses only time resolution.
pub const MAX_COUNTER_ROWS: u64 = 1 << 22;
/// ... but never fewer samples than this before coarsening (a report's
/// time slider needs some; the largest machines go past the row budget).
pub const MIN_COUNTER_SAMPLES: u64 = 16;

/// The samples a run keeps before its period doubles, for `ports`
/// connected ports with `vcs` VCs each: the same in every partition (it
/// depends on the whole network), so all of them coarsen at the same
/// sample.
pub fn counter_sample_limit(ports: u64, vcs: u64) -> u64 {
    (MAX_COUNTER_ROWS / ports.saturating_mul(1 + vcs).max(1)).max(MIN_COUNTER_SAMPLES)
}

/// What a run measures, owned apart from the hardware state: PA counters,
/// latencies, time series, and the tallies every partition sums at the end.
pub(crate) struct Stats {
    /// Per router and output port.
    pub counters: Vec<PortCounters>,
    pub hist: Histogram,
    /// Closed time-series windows (this partition's share).
    pub samples: Vec<SampleSums>,
    pub next_sample: u64,
    pub next_counter: u64,
    /// Per-port counter snapshots `(cycle, router·ports + port, counters)`.
    pub counter_snapshots: Vec<(u64, u32, PortCounters)>,
    /// Per (router·ports + port)·vcs + VC, counted only when the run
    /// samples (`counter_period` > 0): one more store per hop otherwise
    /// spent for nothing.
    pub vc_counters: Vec<VcCounters>,
    pub vc_snapshots: Vec<VcSnapshot>,
    /// The sampling period now (it doubles when a run has taken
    /// `counter_limit` samples), and the cycles of the samples kept.
    pub counter_period: u64,
    pub counter_limit: u64,
    pub counter_cycles_taken: Vec<u64>,
    /// Packet-hops per VC in the measured window.
    pub vc_hops: Vec<u64>,
    pub created: u64,
    /// Packets sent on a route other than their usual one, around a failure.
    pub rerouted: u64,
    /// Packets lost on links that failed during the run, and the
    /// end-to-end retransmissions their sources made.
    pub lost: u64,
    pub resent: u64,
    pub delivered: u64,
    /// Broadcast copies left at the nodes a deposit packet passed.
    pub deposits: u64,
    pub busy_measured: u64,
    pub payload_measured: u64,
    pub delivered_bytes_measured: u64,
    pub token_returns: u64,
    pub unblocks: u64,
    /// The open time-series window's sums.
    pub win_delivered_bytes: u64,
    pub win_delivered: u64,
    pub win_busy: u64,
    pub win_tokens: u64,
    pub win_unblocks: u64,
    pub win_blocked_tokens: u64,
    pub win_waited_unblocks: u64,
    /// Per VC: chunks held now in the network inputs' buffers (kept as
    /// packets arrive and leave: a time-series sample reads it instead of
    /// summing every buffer of the network).
    pub held_chunks: Vec<u64>,
    /// The last cycle anything moved (the stall clock).
    pub last_progress: u64,
    pub events: u64,
    /// The cycle of the last delivery (a finite workload completes then).
    pub last_delivery: Option<u64>,
    /// Per node: its host interface's busy cycles after the warm-up (0
    /// without a host limit), and the cycles the heads of its send queues
    /// waited for injection FIFO space (summed over its lanes).
    pub host_busy_cycles: Vec<f64>,
    pub fifo_waited_cycles: Vec<u64>,
}

impl Stats {
    pub fn new(ports: usize, vcs: usize, sample_cycles: u64, counter_cycles: u64, counter_limit: u64) -> Self {
        Stats {
            // Zeroed pages: a partition's other routers' counters take no
            // memory (see `partition::Ownership`).
            counters: bytemuck::zeroed_vec(ports),
            hist: Histogram::default(),
            samples: Vec::new(),
            next_sample: sample_cycles.max(1),
            next_counter: if counter_cycles > 0 { counter_cycles } else { u64::MAX },
            counter_snapshots: Vec::new(),
            vc_counters: if counter_cycles > 0 { bytemuck::zeroed_vec(ports * vcs) } else { Vec::new() },
            vc_snapshots: Vec::new(),
            counter_period: counter_cycles,
            counter_limit: counter_limit.max(2),
            counter_cycles_taken: Vec::new(),
            vc_hops: vec![0; vcs],
            created: 0,
            rerouted: 0,
            lost: 0,
            resent: 0,
            delivered: 0,
            deposits: 0,
            busy_measured: 0,
            payload_measured: 0,
            delivered_bytes_measured: 0,
            token_returns: 0,
            unblocks: 0,
            win_delivered_bytes: 0,
            win_delivered: 0,
            win_busy: 0,
            win_tokens: 0,
            win_unblocks: 0,
            win_blocked_tokens: 0,
            win_waited_unblocks: 0,
            held_chunks: vec![0; vcs],
            last_progress: 0,
            events: 0,
            last_delivery: None,
            host_busy_cycles: Vec::new(),
            fifo_waited_cycles: Vec::new(),
        }
    }

    /// Whether per-VC counters are kept (the run samples its counters).
    #[inline]
    pub fn samples_vcs(&self) -> bool {
        !self.vc_counters.is_empty()
    }

    /// After a sample at `at`: past the limit, doubles the period and keeps
    /// the samples at its multiples (every other one; all samples fall on
    /// multiples of the period), and moves the next sample onto one.
    pub fn coarsen_counters(&mut self) {
        if (self.counter_cycles_taken.len() as u64) <= self.counter_limit {
            return;
        }
        let old = self.counter_period;
        let period = old * 2;
        self.counter_period = period;
        self.counter_cycles_taken.retain(|c| c % period == 0);
        self.counter_snapshots.retain(|s| s.0 % period == 0);
        self.vc_snapshots.retain(|s| s.cycle % period == 0);
        if self.next_counter != u64::MAX && self.next_counter % period != 0 {
            self.next_counter += old;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarsening_keeps_every_other_sample_and_the_next_on_the_new_period() {
        let mut s = Stats::new(2, 2, 1000, 100, 4);
        for k in 1..=5u64 {
            let at = k * 100;
            s.counter_snapshots.push((at, 0, PortCounters { bytes: at, ..Default::default() }));
            s.vc_snapshots.push(VcSnapshot { cycle: at, index: 1, held_chunks: 0, counters: VcCounters { bytes: at, packets: 1 } });
            s.counter_cycles_taken.push(at);
            s.next_counter = at + s.counter_period;
            s.coarsen_counters();
        }
        assert_eq!(s.counter_period, 200);
        assert_eq!(s.counter_cycles_taken, vec![200, 400]);
        assert_eq!(s.counter_snapshots.iter().map(|x| x.0).collect::<Vec<_>>(), vec![200, 400]);
        assert_eq!(s.vc_snapshots.iter().map(|x| x.cycle).collect::<Vec<_>>(), vec![200, 400]);
        assert_eq!(s.next_counter, 600);
    }

    #[test]
    fn the_sample_limit_follows_the_network_and_has_a_floor() {
        assert_eq!(counter_sample_limit(3072, 4), MAX_COUNTER_ROWS / (3072 * 5));
        assert_eq!(counter_sample_limit(1 << 22, 4), MIN_COUNTER_SAMPLES);
    }

    #[test]
    fn vc_snapshots_cross_the_wire_unchanged() {
        let v = VcSnapshot { cycle: 7, index: 3, held_chunks: 9, counters: VcCounters { bytes: 256, packets: 1 } };
        let mut buf = Vec::new();
        v.put(&mut buf);
        assert_eq!(VcSnapshot::get(&mut Reader::new(&buf)), v);
    }
}
