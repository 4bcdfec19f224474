//! Running an engine: alone, on threads, and as one process of several.
//!
//! A split run builds one engine per partition (each holds the arrays of
//! the whole network but touches only its own routers'), runs them on
//! threads that meet after every window ([`crate::window`]), and merges
//! their summaries in partition 0, which alone returns the result.

use crate::traffic::Traffic;
use std::time::Instant;

use tofusim_des::sync::{gather_first, Serial, ThreadGroup, Transport, WindowSync};

use super::{Engine, Progress};
use crate::partition::PartitionPlan;
use crate::result::{PartitionInfo, RunResult};
use super::summary::Summary;
use super::window::{drive, Ending};

/// How a run is split: partitions on threads of this process, and the
/// link to the other processes of the run (MPI), if any.
pub struct Split {
    pub threads: usize,
    pub transport: Option<Box<dyn Transport>>,
}

impl Split {
    /// One thread, one process: the run is not split.
    pub fn serial() -> Self {
        Split { threads: 1, transport: None }
    }

    pub fn threads(threads: usize) -> Self {
        Split { threads: threads.max(1), transport: None }
    }

    /// Partitions in the whole run.
    pub fn partitions(&self) -> usize {
        self.threads.max(1) * self.transport.as_ref().map_or(1, |t| t.size())
    }
}

impl<W: Traffic> Engine<W> {
    /// Runs to the end (cycles reached, or the finite workload done) and
    /// returns the results; deadlocks and invariant violations are in them.
    pub fn run(self, progress: Progress) -> RunResult {
        self.run_with(progress, |_| ()).0
    }

    /// [`Self::run`], also handing back what `inspect` reads from the
    /// workload's final state (e.g. a schedule's per-rank finish times).
    pub fn run_with<T>(self, progress: Progress, inspect: impl FnOnce(&W) -> T) -> (RunResult, T) {
        self.run_split(Split::serial(), progress, inspect).expect("a run of one process has the result")
    }

    /// Runs split as `split` says; results are bit-identical to an unsplit
    /// run with the same seed. With a transport every process of the run
    /// calls this with the same inputs and thread count; the result comes
    /// back in process 0 only (`None` elsewhere).
    pub fn run_split<T>(mut self, split: Split, progress: Progress, inspect: impl FnOnce(&W) -> T) -> Option<(RunResult, T)> {
        let wall = Instant::now();
        let parts = split.partitions();
        if parts == 1 {
            let end = drive(&mut self, &mut Serial, Some(progress));
            let seen = inspect(&self.workload);
            return Some((super::finish::finish(self, end, wall.elapsed().as_secs_f64(), None), seen));
        }
        let threads = split.threads.max(1);
        let procs = parts / threads;
        let plan = PartitionPlan::new(&self.net.routing, parts);
        assert_eq!(plan.parts, parts, "at most one partition per router ({} routers)", self.net.lay.routers);
        let group = ThreadGroup::new(threads, split.transport);
        let first = group.first();
        let mut engines: Vec<Engine<W>> = (1..threads).map(|i| self.partition(plan.owner.clone(), (first + i) as u16)).collect();
        self.set_partition(plan.owner.clone(), first as u16);
        engines.insert(0, self);
        let mut outcome = None;
        // Partition 0 of the run reports progress; the others do not.
        let progress = (first == 0).then_some(progress);
        std::thread::scope(|s| {
            let mut it = engines.into_iter().enumerate();
            let (_, mut e0) = it.next().expect("one engine per thread");
            let handles: Vec<_> = it
                .map(|(i, mut e)| {
                    let mut sync = group.handle(i);
                    let group = &group;
                    s.spawn(move || {
                        let _failing = Poison(group);
                        finish_partition(&mut e, &mut sync, None)
                    })
                })
                .collect();
            let mut sync = group.handle(0);
            let merged = {
                let _failing = Poison(&group);
                finish_partition(&mut e0, &mut sync, progress)
            };
            for h in handles {
                if let Err(p) = h.join() {
                    std::panic::resume_unwind(p);
                }
            }
            outcome = merged.map(|(end, loads)| (e0, end, loads));
        });
        let (e, end, loads) = outcome?;
        let events: Vec<f64> = loads.iter().map(|l| l.events as f64).collect();
        let mean = events.iter().sum::<f64>() / events.len() as f64;
        let info = PartitionInfo {
            how: plan.how,
            threads_per_process: threads,
            processes: procs,
            window_cycles: e.window_cycles(),
            windows: end.windows,
            event_imbalance: if mean > 0.0 { events.iter().copied().fold(0.0, f64::max) / mean } else { 1.0 },
            partitions: loads,
        };
        let seen = inspect(&e.workload);
        Some((super::finish::finish(e, end, wall.elapsed().as_secs_f64(), Some(info)), seen))
    }
}

/// Poisons the group if its partition's thread unwinds (a panic), so the
/// other partitions stop waiting for it and the panic is reported.
struct Poison<'a>(&'a ThreadGroup);

impl Drop for Poison<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poison();
        }
    }
}

/// Runs one partition to the end and hands its summary to partition 0,
/// which merges every summary and returns how the run ended.
fn finish_partition<W: Traffic>(e: &mut Engine<W>, sync: &mut dyn WindowSync, progress: Option<Progress>) -> Option<(Ending, Vec<crate::result::PartitionLoad>)> {
    let end = drive(e, sync, progress);
    // Gathered at partition 0 only, each summary decoded and merged in
    // turn: this happens while every partition's state is still alive, at
    // the run's peak memory.
    let mut mine = Vec::new();
    e.summary(end.busy_seconds, sync.wait_seconds()).put(&mut mine);
    let all = gather_first(sync, mine);
    if sync.index() != 0 {
        return None;
    }
    let mut loads = Vec::with_capacity(all.len());
    for (p, bytes) in all.iter().enumerate() {
        let s = Summary::get(bytes);
        if p > 0 {
            e.absorb(&s);
        }
        loads.push(s.load);
    }
    Some((end, loads))
}
