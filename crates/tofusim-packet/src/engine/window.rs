//! The run: conservative time windows over one or more partitions.
//!
//! Every run — split or not — advances in windows of `w` cycles, `w` being
//! the shorter of a hop's and a token return's latency: nothing a router
//! does can reach another router sooner, so within a window the partitions
//! are independent (YAWNS, [S:004]). At the end of a window each
//! partition hands over the packets and tokens it made for the others and
//! every partition learns every partition's [`Report`]; from the same
//! reports all take the same decisions — finished, stalled, audit due,
//! where the next window starts (skipping idle stretches). An unsplit run
//! is the one-partition case of the same loop ([`tofusim_des::sync::Serial`]),
//! which is why results do not depend on the number of partitions.

use crate::traffic::Traffic;
use std::time::Instant;

use tofusim_des::sync::{all_gather, WindowSync};
use tofusim_routing::{DragonflyMode, LinkKind, Routing};

use super::{Engine, Progress, PREFETCH_EVENTS};
use crate::event::{Ev, EvKind};
use super::invariants::AuditPart;
use crate::result::{Deadlock, InvariantError};
use crate::stats::{SampleSums, VcSnapshot};
use crate::wire::{Put, Reader};

/// How a run ended: the same in every partition.
#[derive(Clone, Debug)]
pub(crate) struct Ending {
    /// The last cycle simulated (the completion, the stall, or the end).
    pub t: u64,
    pub completion: Option<u64>,
    pub deadlock: Option<Deadlock>,
    /// Stopped early at the caller's request (an interrupt).
    pub interrupted: bool,
    /// Stopped because more packets were alive than the memory budget
    /// allows (`run.max_live_packets`): the packets alive then.
    pub budget_exceeded: Option<u64>,
    /// Windows simulated.
    pub windows: u64,
    /// Wall time this partition spent inside its windows.
    pub busy_seconds: f64,
}

const NONE: u64 = u64::MAX;

/// What one partition tells every other at the end of a window.
#[derive(Debug, Default)]
struct Report {
    live: u64,
    /// Packets it handed to other partitions in the window (live, in the mail).
    moved: u64,
    pending_releases: u64,
    /// Packets of posted messages not yet made (`pending_releases` among them).
    unmade: u64,
    gen_remaining: u64,
    trace_pending: u64,
    created: u64,
    delivered: u64,
    last_progress: u64,
    /// Last cycle it processed, earliest event it holds or mailed, last
    /// delivery (`NONE`: none).
    last_event: u64,
    next_event: u64,
    last_delivery: u64,
    error: Option<InvariantError>,
    /// Whether the caller asked the run to stop (an interrupt, seen by
    /// partition 0's progress callback).
    stop: bool,
    /// UGAL-G: occupancy of its routers' global output ports.
    ugal: Vec<u32>,
}

impl Report {
    fn put(&self, buf: &mut Vec<u8>) {
        for x in [
            self.live,
            self.moved,
            self.pending_releases,
            self.unmade,
            self.gen_remaining,
            self.trace_pending,
            self.created,
            self.delivered,
            self.last_progress,
            self.last_event,
            self.next_event,
            self.last_delivery,
        ] {
            buf.put_u64(x);
        }
        match &self.error {
            None => buf.put_u8(0),
            Some(e) => {
                buf.put_u8(1);
                e.put(buf);
            }
        }
        buf.put_u8(self.stop as u8);
        buf.put_u64(self.ugal.len() as u64);
        self.ugal.iter().for_each(|&x| buf.put_u32(x));
    }

    /// Reads a report `put` wrote into `self`, reusing its UGAL buffer
    /// (one report per partition per window: no allocation in the loop).
    fn read(&mut self, bytes: &[u8]) {
        let mut r = Reader::new(bytes);
        for x in [
            &mut self.live,
            &mut self.moved,
            &mut self.pending_releases,
            &mut self.unmade,
            &mut self.gen_remaining,
            &mut self.trace_pending,
            &mut self.created,
            &mut self.delivered,
            &mut self.last_progress,
            &mut self.last_event,
            &mut self.next_event,
            &mut self.last_delivery,
        ] {
            *x = r.u64();
        }
        self.error = (r.u8() == 1).then(|| InvariantError::get(&mut r));
        self.stop = r.u8() == 1;
        self.ugal.clear();
        let n = r.u64();
        self.ugal.extend((0..n).map(|_| r.u32()));
    }
}

/// The sums and extremes of every partition's report.
struct Global {
    live: u64,
    pending_releases: u64,
    unmade: u64,
    gen_remaining: u64,
    trace_pending: u64,
    created: u64,
    delivered: u64,
    last_progress: u64,
    last_event: Option<u64>,
    next_event: Option<u64>,
    last_delivery: Option<u64>,
    error: Option<InvariantError>,
    stop: bool,
}

impl Global {
    fn of(reports: &[Report]) -> Self {
        let some = |x: u64| (x != NONE).then_some(x);
        Global {
            live: reports.iter().map(|r| r.live + r.moved).sum(),
            pending_releases: reports.iter().map(|r| r.pending_releases).sum(),
            unmade: reports.iter().map(|r| r.unmade).sum(),
            gen_remaining: reports.iter().map(|r| r.gen_remaining).sum(),
            trace_pending: reports.iter().map(|r| r.trace_pending).sum(),
            created: reports.iter().map(|r| r.created).sum(),
            delivered: reports.iter().map(|r| r.delivered).sum(),
            last_progress: reports.iter().map(|r| r.last_progress).max().unwrap_or(0),
            last_event: reports.iter().filter_map(|r| some(r.last_event)).max(),
            next_event: reports.iter().filter_map(|r| some(r.next_event)).min(),
            last_delivery: reports.iter().filter_map(|r| some(r.last_delivery)).max(),
            error: reports.iter().filter_map(|r| r.error.clone()).reduce(|a, b| if b.precedes(&a) { b } else { a }),
            stop: reports.iter().any(|r| r.stop),
        }
    }
}

impl<W: Traffic> Engine<W> {
    /// The window: the shortest latency between routers, cycles.
    pub fn window_cycles(&self) -> u64 {
        self.net.params.hop_latency_cycles.min(self.net.params.token_latency_cycles).max(1) as u64
    }

    /// The global output ports whose queues UGAL-G reads, in router order
    /// (empty in other modes).
    fn ugal_ports(&self) -> Vec<(u32, u8)> {
        match &*self.net.routing {
            Routing::Dragonfly(d) if d.mode == DragonflyMode::UgalGlobal => (0..self.net.lay.routers as u32)
                .flat_map(|r| (0..self.net.lay.ports as u8).map(move |p| (r, p)))
                .filter(|&(r, p)| d.neighbor(r, p).is_some() && d.kind(r, p) == LinkKind::Global)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Work at cycle 0: open-loop injections, trace rows and the
    /// schedule's first packets at this partition's nodes.
    fn begin(&mut self) {
        for node in 0..self.net.nodes as u32 {
            if !self.owns_node(node) {
                continue;
            }
            if self.workload.is_finite() {
                if (0..self.nic.lanes).any(|l| self.nic.gen_total[node as usize * self.nic.lanes + l] > 0) {
                    self.mark_dirty(self.net.router_of(node));
                }
            } else {
                self.schedule_injection(node, 0);
            }
        }
        for i in 0..self.workload.trace_rows() {
            let (cycle, src) = self.workload.trace_row(i);
            if self.owns_node(src) && self.net.run.cycles.is_none_or(|c| cycle < c) {
                self.wheel.schedule(cycle, Ev { kind: EvKind::Trace, a: 0, b: 0, router: src, x: i as u32 });
                self.trace_pending += 1;
            }
        }
        self.start_schedule();
        self.schedule_outages();
        if self.outages.as_ref().is_some_and(|o| o.due(0)) {
            // Failures at cycle 0 come before its first arbitration.
            self.apply_outages(0);
        }
        self.process_dirty(0);
    }

    /// Processes every cycle before `until`; returns the last one that had
    /// events. An invariant violation stops the run at the end of the
    /// window (every partition finishes it, so all count the same events).
    fn run_window(&mut self, until: u64, buf: &mut Vec<Ev>) -> Option<u64> {
        let mut last = None;
        while let Some(now) = self.wheel.drain_next(until - 1, buf) {
            self.close_up_to(now);
            if self.outages.as_ref().is_some_and(|o| o.due(now)) {
                self.apply_outages(now);
            }
            self.stats.events += buf.len() as u64;
            for i in 0..buf.len() {
                if let Some(&ahead) = buf.get(i + PREFETCH_EVENTS).filter(|_| self.net.prefetch) {
                    self.prefetch_event(ahead);
                }
                self.apply(buf[i], now);
            }
            self.process_dirty(now);
            last = Some(now);
        }
        last
    }

    /// Closes the time-series windows and counter periods that end at or
    /// before `now` (the state is that after every earlier cycle).
    fn close_up_to(&mut self, now: u64) {
        while now >= self.stats.next_sample {
            self.close_sample(self.stats.next_sample);
            self.stats.next_sample += self.net.run.sample_cycles.max(1);
        }
        while now >= self.stats.next_counter {
            self.snapshot_counters(self.stats.next_counter);
            self.stats.next_counter += self.stats.counter_period;
            self.stats.coarsen_counters();
        }
    }

    fn report(&mut self, last_event: Option<u64>, ugal: &[(u32, u8)], stop: bool) -> Report {
        let mailed = (self.mail.mailed_min != NONE).then_some(self.mail.mailed_min);
        let next = [self.wheel.next_time(), mailed].into_iter().flatten().min();
        let rep = Report {
            live: self.pool.live(),
            moved: self.mail.moved_out,
            pending_releases: self.pending_releases,
            unmade: self.nic.messages.unmade,
            gen_remaining: self.gen_remaining,
            trace_pending: self.trace_pending,
            created: self.stats.created,
            delivered: self.stats.delivered,
            last_progress: self.stats.last_progress,
            last_event: last_event.unwrap_or(NONE),
            next_event: next.unwrap_or(NONE),
            last_delivery: self.stats.last_delivery.unwrap_or(NONE),
            error: self.error.clone(),
            stop,
            ugal: ugal.iter().filter(|&&(r, _)| self.owns(r)).map(|&(r, p)| self.router.outputs.occupancy(&self.net, r, p)).collect(),
        };
        self.mail.moved_out = 0;
        self.mail.mailed_min = NONE;
        rep
    }

    /// This partition's PA counters of connected ports as they stand at
    /// `at`, and each of their VCs' counters and downstream buffer fill.
    fn snapshot_counters(&mut self, at: u64) {
        let (ports, vcs) = (self.net.lay.ports, self.net.lay.vcs);
        let cap = self.net.cap as u32;
        for i in 0..self.net.lay.routers * ports {
            let (r, p) = ((i / ports) as u32, (i % ports) as u8);
            if self.owns(r) && self.net.routing.neighbor(r, p).is_some() {
                self.stats.counter_snapshots.push((at, i as u32, self.stats.counters[i]));
                for v in i * vcs..(i + 1) * vcs {
                    self.stats.vc_snapshots.push(VcSnapshot {
                        cycle: at,
                        index: v as u32,
                        held_chunks: cap.saturating_sub(self.router.outputs.out_tokens[v] as u32),
                        counters: self.stats.vc_counters[v],
                    });
                }
            }
        }
        self.stats.counter_cycles_taken.push(at);
    }

    /// Skips the idle stretch from `from` to `to` (no event anywhere in
    /// between): closes the windows that end by `from` and the one after
    /// it (which may hold the last activity), then moves the next window to
    /// the last one that ends at or before `to`, so one idle sample marks
    /// the gap instead of one per window. Counter periods likewise. Every
    /// partition decides from `from` and `to` alone, so all close the same
    /// windows (their samples are merged by index).
    fn skip_idle(&mut self, from: u64, to: u64) {
        self.close_up_to(from);
        let period = self.net.run.sample_cycles.max(1);
        if self.stats.next_sample < to {
            let b = self.stats.next_sample;
            self.close_sample(b);
            self.stats.next_sample = b + period;
            if self.stats.next_sample < to {
                self.stats.next_sample += (to - self.stats.next_sample) / period * period;
            }
        }
        if self.net.run.counter_cycles > 0 && self.stats.next_counter < to {
            let b = self.stats.next_counter;
            self.snapshot_counters(b);
            self.stats.next_counter = b + self.stats.counter_period;
            self.stats.coarsen_counters();
            let every = self.stats.counter_period;
            if self.stats.next_counter < to {
                self.stats.next_counter += (to - self.stats.next_counter) / every * every;
            }
        }
    }

    /// This partition's share of the time-series window ending at `at`.
    fn close_sample(&mut self, at: u64) {
        let fill = self.stats.held_chunks.clone();
        self.stats.samples.push(SampleSums {
            cycle: at,
            delivered_bytes: std::mem::take(&mut self.stats.win_delivered_bytes),
            delivered: std::mem::take(&mut self.stats.win_delivered),
            busy: std::mem::take(&mut self.stats.win_busy),
            tokens: std::mem::take(&mut self.stats.win_tokens),
            unblocks: std::mem::take(&mut self.stats.win_unblocks),
            blocked_tokens: std::mem::take(&mut self.stats.win_blocked_tokens),
            waited_unblocks: std::mem::take(&mut self.stats.win_waited_unblocks),
            fill,
        });
    }

    /// Closes the windows and periods up to `bound` that this partition has
    /// not reached, and drops those after it (a partition may process the
    /// rest of the last window after the run's end).
    fn close_at_end(&mut self, bound: u64) {
        self.close_up_to(bound);
        self.stats.samples.retain(|s| s.cycle <= bound);
        self.stats.counter_snapshots.retain(|s| s.0 <= bound);
        self.stats.vc_snapshots.retain(|s| s.cycle <= bound);
        self.stats.counter_cycles_taken.retain(|&c| c <= bound);
    }

    /// A collective audit at `t`: every partition's part, one verdict.
    fn audit_all(&mut self, sync: &mut dyn WindowSync, t: u64) {
        let mut mine = Vec::new();
        self.audit_part().put(&mut mine);
        let parts: Vec<AuditPart> = all_gather(sync, &mine).iter().map(|b| AuditPart::get(&mut Reader::new(b))).collect();
        if let Some((kind, detail)) = self.audit_verdict(&parts) {
            self.fail(t, kind, detail);
        }
    }

    /// The deadlock report at `t`, from every partition's blocked heads.
    fn deadlock_all(&self, sync: &mut dyn WindowSync, t: u64, g: &Global, detected_by: &'static str) -> Deadlock {
        let mut mine = Vec::new();
        for (q, s, u) in self.blocked_heads() {
            mine.put_u64(q);
            mine.put_u64(s);
            mine.put_u32(u);
        }
        let mut heads = Vec::new();
        for b in all_gather(sync, &mine) {
            let mut r = Reader::new(&b);
            while !r.done() {
                heads.push((r.u64(), r.u64(), r.u32()));
            }
        }
        Deadlock { detected_by, ..self.deadlock_verdict(t, &heads, g.last_progress, g.live) }
    }
}

/// Runs partition `e` to the end of the run, meeting the other partitions
/// through `sync` after every window. `progress` is called now and then
/// (by partition 0 only) with the fraction done.
/// A progress callback that answers `Break` asks the run to stop: every
/// partition stops at the end of the next window, and the result says
/// `interrupted`, with what was measured until then.
pub(crate) fn drive<W: Traffic>(e: &mut Engine<W>, sync: &mut dyn WindowSync, mut progress: Option<Progress>) -> Ending {
    let parts = sync.partitions();
    debug_assert_eq!(e.mail.outbox.len(), parts);
    let w = e.window_cycles();
    let end = e.net.run.cycles.unwrap_or(u64::MAX);
    let ugal = e.ugal_ports();
    if !ugal.is_empty() {
        e.ugal_view = vec![0; e.net.lay.routers * e.net.lay.ports];
    }
    let mut buf: Vec<Ev> = Vec::with_capacity(1024);
    let mut inbox = vec![Vec::new(); parts];
    let mut report_bytes = vec![Vec::new(); parts];
    let mut mine = Vec::new();
    let mut reports: Vec<Report> = (0..parts).map(|_| Report::default()).collect();
    let mut cursor = vec![0usize; parts];
    let mut next_audit = if e.net.run.audit_cycles > 0 { e.net.run.audit_cycles } else { u64::MAX };
    let mut last_report = Instant::now();
    let (mut t, mut start, mut windows) = (0u64, 0u64, 0u64);
    // The last cycle any partition processed (time-series windows close up to it).
    let mut drained;
    let mut busy = 0.0;
    let mut completion = None;
    let mut deadlock = None;
    // Asked to stop by the progress callback (partition 0), and stopped
    // once every partition has heard it.
    let (mut stop_asked, mut interrupted) = (false, false);
    let mut budget_exceeded = None;
    e.begin();
    loop {
        let until = start.saturating_add(w).min(end);
        let began = Instant::now();
        let last = e.run_window(until, &mut buf);
        busy += began.elapsed().as_secs_f64();
        windows += 1;
        mine.clear();
        e.report(last, &ugal, stop_asked).put(&mut mine);
        sync.exchange(&mut e.mail.outbox, &mine, &mut inbox, &mut report_bytes);
        for b in &inbox {
            e.mail.receive(b, &mut e.pool, &mut e.wheel);
        }
        for (rep, b) in reports.iter_mut().zip(&report_bytes) {
            rep.read(b);
        }
        let g = Global::of(&reports);
        if !ugal.is_empty() {
            cursor.fill(0);
            for &(r, p) in &ugal {
                let q = e.mail.owner[r as usize] as usize;
                e.ugal_view[r as usize * e.net.lay.ports + p as usize] = reports[q].ugal[cursor[q]];
                cursor[q] += 1;
            }
        }
        t = t.max(g.last_event.unwrap_or(0));
        drained = t;
        if let Some(err) = g.error.clone() {
            t = err.cycle;
            e.fail(err.cycle, err.kind, err.detail);
            break;
        }
        if e.workload.is_finite() && g.gen_remaining == 0 && g.trace_pending == 0 && g.unmade == 0 && g.live == 0 {
            t = g.last_delivery.unwrap_or(0);
            completion = Some(t);
            break;
        }
        // Packets made or waiting in a send queue, not held by the
        // software for later, and nothing moved for too long.
        if g.live + g.unmade > g.pending_releases && t.saturating_sub(g.last_progress) > e.net.run.deadlock_cycles {
            deadlock = Some(e.deadlock_all(sync, t, &g, "watchdog"));
            break;
        }
        // Asked to stop (Ctrl-C): after completion and deadlock, which a
        // window that also finished the run reports instead.
        if g.stop {
            interrupted = true;
            break;
        }
        // Every partition sees the same total: they stop together.
        if e.net.run.max_live_packets.is_some_and(|m| g.live > m) {
            budget_exceeded = Some(g.live);
            break;
        }
        let Some(next) = g.next_event else {
            // Nothing can ever happen again, yet packets wait: a deadlock.
            if g.live + g.unmade > 0 {
                deadlock = Some(e.deadlock_all(sync, t, &g, "no-event-left"));
            } else if let Some(c) = e.net.run.cycles {
                t = c;
            }
            break;
        };
        if t >= next_audit {
            e.audit_all(sync, t);
            next_audit = t + e.net.run.audit_cycles;
            if e.error.is_some() {
                break;
            }
        }
        if next > until {
            // Nothing happens anywhere until `next`: the time-series windows
            // and counter periods wholly inside the gap are skipped (a trace
            // row at cycle 2 x 10^12 would otherwise make 2 x 10^9 samples).
            e.skip_idle(until, next.min(end));
        }
        start = until.max(next);
        if start >= end {
            t = end;
            break;
        }
        if let Some(p) = progress.as_mut() {
            if windows & 0x3f == 0 && last_report.elapsed().as_millis() >= 200 {
                last_report = Instant::now();
                let frac = match (e.net.run.cycles, e.workload.is_finite()) {
                    (Some(c), _) => t as f64 / c as f64,
                    (None, true) => g.delivered as f64 / (g.created + g.gen_remaining + g.unmade).max(1) as f64,
                    _ => 0.0,
                };
                if p(frac.min(1.0)).is_break() {
                    stop_asked = true;
                }
            }
        }
    }
    e.close_at_end(completion.unwrap_or(drained.min(t)));
    if deadlock.is_none() && e.error.is_none() {
        e.audit_all(sync, t);
    }
    if let Some(p) = progress.as_mut() {
        if !interrupted && budget_exceeded.is_none() {
            let _ = p(1.0);
        }
    }
    // Waits still open at the end (heads blocked, send queues waiting for
    // FIFO space) count up to the end of the measured window.
    e.close_waits(completion.unwrap_or(t));
    Ending { t, completion, deadlock, interrupted, budget_exceeded, windows, busy_seconds: busy }
}
