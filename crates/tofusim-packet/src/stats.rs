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

#[derive(Clone, Debug, Serialize, Default)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
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
        for (a, b) in self.fill.iter_mut().zip(&o.fill) {
            *a += b;
        }
    }

    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        for x in [self.cycle, self.delivered_bytes, self.delivered, self.busy, self.tokens, self.unblocks] {
            buf.put_u64(x);
        }
        buf.put_u64(self.fill.len() as u64);
        self.fill.iter().for_each(|&f| buf.put_u64(f));
    }

    pub(crate) fn get(r: &mut Reader) -> Self {
        let mut s = SampleSums { cycle: r.u64(), delivered_bytes: r.u64(), delivered: r.u64(), busy: r.u64(), tokens: r.u64(), unblocks: r.u64(), fill: Vec::new() };
        s.fill = (0..r.u64()).map(|_| r.u64()).collect();
        s
    }
}

/// One time-series window.
#[derive(Clone, Debug, Serialize, Default)]
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
    pub unblocking_probability: f64,
    /// Mean fill of each VC class at the end of the window (fraction of its buffer).
    pub vc_fill: Vec<f64>,
}

/// Per output port: the counters of a Tofu PA unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, bytemuck::Zeroable)]
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
    /// Packet-hops per VC in the measured window.
    pub vc_hops: Vec<u64>,
    pub created: u64,
    /// Packets sent on a route other than their usual one, around a failure.
    pub rerouted: u64,
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
    /// Per VC: chunks held now in the network inputs' buffers (kept as
    /// packets arrive and leave: a time-series sample reads it instead of
    /// summing every buffer of the network).
    pub held_chunks: Vec<u64>,
    /// The last cycle anything moved (the stall clock).
    pub last_progress: u64,
    pub events: u64,
    /// The cycle of the last delivery (a finite workload completes then).
    pub last_delivery: Option<u64>,
}

impl Stats {
    pub fn new(ports: usize, vcs: usize, sample_cycles: u64, counter_cycles: u64) -> Self {
        Stats {
            // Zeroed pages: a partition's other routers' counters take no
            // memory (see `partition::Ownership`).
            counters: bytemuck::zeroed_vec(ports),
            hist: Histogram::default(),
            samples: Vec::new(),
            next_sample: sample_cycles.max(1),
            next_counter: if counter_cycles > 0 { counter_cycles } else { u64::MAX },
            counter_snapshots: Vec::new(),
            vc_hops: vec![0; vcs],
            created: 0,
            rerouted: 0,
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
            held_chunks: vec![0; vcs],
            last_progress: 0,
            events: 0,
            last_delivery: None,
        }
    }
}
