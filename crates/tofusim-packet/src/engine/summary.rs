//! What a partition hands over at the end of a split run, and the merge
//! into one engine from which the result is read as from an unsplit run:
//! every statistic is a sum, a maximum or a per-router value that one
//! partition owns, and the workload's per-node state comes from the
//! partition of each node.

use crate::traffic::Traffic;
use super::Engine;
use crate::result::{InvariantError, PartitionLoad};
use crate::router::link_protocol::LinkTally;
use crate::stats::{Histogram, PortCounters, SampleSums, VcSnapshot};
use crate::wire::{Put, Reader};

/// One partition's share of a run's statistics.
pub(crate) struct Summary {
    /// PA counters of this partition's connected ports, by router·ports + port.
    counters: Vec<(u32, PortCounters)>,
    hist: Histogram,
    samples: Vec<SampleSums>,
    snapshots: Vec<(u64, u32, PortCounters)>,
    vc_snapshots: Vec<VcSnapshot>,
    vc_hops: Vec<u64>,
    tally: [u64; TALLY],
    error: Option<InvariantError>,
    /// The traffic's per-node state ([`Traffic::export_nodes`]).
    workload: Vec<u64>,
    /// Per node of this partition with any: (node, host busy cycles,
    /// cycles waited for injection FIFO space).
    node_limits: Vec<(u32, f64, u64)>,
    /// The link protocol's counts and the links whose CRCs disagree.
    link_tally: [u64; LinkTally::FIELDS],
    crc_mismatch: Vec<u32>,
    pub load: PartitionLoad,
}

const TALLY: usize = 18 + crate::limits::CAUSES;

impl<W: Traffic> Engine<W> {
    fn tally(&self) -> [u64; TALLY] {
        [
            self.stats.created,
            self.stats.delivered,
            self.stats.deposits,
            self.stats.busy_measured,
            self.stats.payload_measured,
            self.stats.delivered_bytes_measured,
            self.stats.token_returns,
            self.stats.unblocks,
            self.stats.events,
            self.stats.rerouted,
            self.stats.lost,
            self.stats.resent,
            self.router.jsq.choices,
            self.router.jsq.separated,
            self.router.jsq.ranges[0],
            self.router.jsq.ranges[1],
            self.router.jsq.ranges[2],
            self.router.jsq.ranges[3],
            self.router.inputs.blocked[0],
            self.router.inputs.blocked[1],
            self.router.inputs.blocked[2],
            self.router.inputs.blocked[3],
            self.router.inputs.blocked[4],
            self.router.inputs.blocked[5],
            self.router.inputs.blocked[6],
        ]
    }

    fn add_tally(&mut self, t: &[u64; TALLY]) {
        let fields = [
            &mut self.stats.created,
            &mut self.stats.delivered,
            &mut self.stats.deposits,
            &mut self.stats.busy_measured,
            &mut self.stats.payload_measured,
            &mut self.stats.delivered_bytes_measured,
            &mut self.stats.token_returns,
            &mut self.stats.unblocks,
            &mut self.stats.events,
            &mut self.stats.rerouted,
            &mut self.stats.lost,
            &mut self.stats.resent,
        ];
        let j = &mut self.router.jsq;
        j.choices += t[12];
        j.separated += t[13];
        for (x, y) in j.ranges.iter_mut().zip(&t[14..18]) {
            *x += y;
        }
        for (x, y) in self.router.inputs.blocked.iter_mut().zip(&t[18..]) {
            *x += y;
        }
        for (f, x) in fields.into_iter().zip(t) {
            *f += x;
        }
    }

    /// This partition's statistics.
    pub(crate) fn summary(&self, busy_seconds: f64, wait_seconds: f64) -> Summary {
        let ports = self.net.lay.ports;
        let counters = (0..self.net.lay.routers * ports)
            .filter(|&i| self.owns((i / ports) as u32) && self.net.routing.neighbor((i / ports) as u32, (i % ports) as u8).is_some())
            .map(|i| (i as u32, self.stats.counters[i]))
            .collect();
        let routers = self.mail.owner.iter().filter(|&&o| o == self.mail.me).count() as u64;
        let node_state = {
            let owned = |n: u32| self.owns_node(n);
            self.workload.export_nodes(&owned)
        };
        let (link_tally, crc_mismatch) = match &self.router.outputs.link {
            Some(lp) => (lp.tally.to_array(), lp.crc_mismatches(|l| self.owns((l / ports) as u32))),
            None => ([0; LinkTally::FIELDS], Vec::new()),
        };
        let node_limits = (0..self.net.nodes)
            .filter(|&n| self.owns_node(n as u32) && (self.stats.host_busy_cycles[n] > 0.0 || self.stats.fifo_waited_cycles[n] > 0))
            .map(|n| (n as u32, self.stats.host_busy_cycles[n], self.stats.fifo_waited_cycles[n]))
            .collect();
        Summary {
            node_limits,
            link_tally,
            crc_mismatch,
            counters,
            hist: self.stats.hist.clone(),
            samples: self.stats.samples.clone(),
            snapshots: self.stats.counter_snapshots.clone(),
            vc_snapshots: self.stats.vc_snapshots.clone(),
            vc_hops: self.stats.vc_hops.clone(),
            tally: self.tally(),
            error: self.error.clone(),
            workload: node_state,
            load: PartitionLoad { routers, events: self.stats.events, busy_seconds, wait_seconds },
        }
    }

    /// Merges another partition's summary into this engine.
    pub(crate) fn absorb(&mut self, s: &Summary) {
        for &(i, c) in &s.counters {
            self.stats.counters[i as usize] = c;
        }
        self.stats.hist.merge(&s.hist);
        for (a, b) in self.stats.samples.iter_mut().zip(&s.samples) {
            a.add(b);
        }
        debug_assert_eq!(self.stats.samples.len(), s.samples.len(), "every partition closes the same windows");
        self.stats.counter_snapshots.extend_from_slice(&s.snapshots);
        self.stats.counter_snapshots.sort_unstable_by_key(|&(c, i, _)| (c, i));
        debug_assert!(s.vc_snapshots.iter().all(|v| self.stats.counter_cycles_taken.binary_search(&v.cycle).is_ok()), "every partition keeps the same samples");
        self.stats.vc_snapshots.extend_from_slice(&s.vc_snapshots);
        self.stats.vc_snapshots.sort_unstable_by_key(|v| (v.cycle, v.index));
        for (a, b) in self.stats.vc_hops.iter_mut().zip(&s.vc_hops) {
            *a += b;
        }
        self.add_tally(&s.tally);
        if let Some(e) = &s.error {
            self.fail(e.cycle, e.kind, e.detail.clone());
        }
        self.workload.absorb_nodes(&s.workload);
        for &(n, host, fifo) in &s.node_limits {
            self.stats.host_busy_cycles[n as usize] = host;
            self.stats.fifo_waited_cycles[n as usize] = fifo;
        }
        if let Some(lp) = &mut self.router.outputs.link {
            lp.tally.add(&s.link_tally);
            lp.absorbed_mismatches.extend_from_slice(&s.crc_mismatch);
        }
    }
}

impl Summary {
    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        buf.put_u64(self.counters.len() as u64);
        for (i, c) in &self.counters {
            buf.put_u32(*i);
            c.put(buf);
        }
        self.hist.put(buf);
        buf.put_u64(self.samples.len() as u64);
        self.samples.iter().for_each(|s| s.put(buf));
        buf.put_u64(self.snapshots.len() as u64);
        for (c, i, p) in &self.snapshots {
            buf.put_u64(*c);
            buf.put_u32(*i);
            p.put(buf);
        }
        buf.put_u64(self.vc_snapshots.len() as u64);
        self.vc_snapshots.iter().for_each(|v| v.put(buf));
        buf.put_u64(self.vc_hops.len() as u64);
        self.vc_hops.iter().for_each(|&x| buf.put_u64(x));
        self.tally.iter().for_each(|&x| buf.put_u64(x));
        match &self.error {
            None => buf.put_u8(0),
            Some(e) => {
                buf.put_u8(1);
                e.put(buf);
            }
        }
        buf.put_u64(self.workload.len() as u64);
        self.workload.iter().for_each(|&w| buf.put_u64(w));
        buf.put_u64(self.node_limits.len() as u64);
        for &(n, h, f) in &self.node_limits {
            buf.put_u32(n);
            buf.put_f64(h);
            buf.put_u64(f);
        }
        self.link_tally.iter().for_each(|&x| buf.put_u64(x));
        buf.put_u64(self.crc_mismatch.len() as u64);
        self.crc_mismatch.iter().for_each(|&l| buf.put_u32(l));
        buf.put_u64(self.load.routers);
        buf.put_u64(self.load.events);
        buf.put_f64(self.load.busy_seconds);
        buf.put_f64(self.load.wait_seconds);
    }

    pub(crate) fn get(bytes: &[u8]) -> Self {
        let mut r = Reader::new(bytes);
        let counters = (0..r.u64()).map(|_| (r.u32(), PortCounters::get(&mut r))).collect();
        let hist = Histogram::get(&mut r);
        let samples = (0..r.u64()).map(|_| SampleSums::get(&mut r)).collect();
        let snapshots = (0..r.u64()).map(|_| (r.u64(), r.u32(), PortCounters::get(&mut r))).collect();
        let vc_snapshots = (0..r.u64()).map(|_| VcSnapshot::get(&mut r)).collect();
        let vc_hops = (0..r.u64()).map(|_| r.u64()).collect();
        let mut tally = [0u64; TALLY];
        tally.iter_mut().for_each(|x| *x = r.u64());
        let error = (r.u8() == 1).then(|| InvariantError::get(&mut r));
        let words: Vec<u64> = (0..r.u64()).map(|_| r.u64()).collect();
        let node_limits = (0..r.u64()).map(|_| (r.u32(), r.f64(), r.u64())).collect();
        let mut link_tally = [0u64; LinkTally::FIELDS];
        link_tally.iter_mut().for_each(|x| *x = r.u64());
        let crc_mismatch = (0..r.u64()).map(|_| r.u32()).collect();
        let load = PartitionLoad { routers: r.u64(), events: r.u64(), busy_seconds: r.f64(), wait_seconds: r.f64() };
        Summary { counters, hist, samples, snapshots, vc_snapshots, vc_hops, tally, error, workload: words, node_limits, link_tally, crc_mismatch, load }
    }
}
