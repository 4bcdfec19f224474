//! The packet-engine executor of a [`Schedule`]: the schedule as closed-loop
//! traffic behind the engine's [`Traffic`] boundary.
//!
//! Each step's finish time is computed as soon as it is known:
//! - a **send** starts when its dependencies have finished, plus the host's
//!   send overhead; its packets are handed to the TNI (the node's send lane
//!   of that index) no faster than the host interface carries them and, if
//!   the send is paced, one every `pace` packet wire times. A send finishes
//!   locally when it starts (its data are snapshotted), as an RDMA put with
//!   a local completion does;
//! - a **receive** finishes when its message has fully arrived and its
//!   dependencies have finished, plus the receive overhead, plus the
//!   reduction time for a summing receive;
//! - a **copy** takes its bytes over the memory copy rate.
//!
//! Messages are tagged with their index; the k-th message from rank a to
//! rank b is the k-th receive from a at b.
//!
//! Several ranks may share a node: they share its TNIs (send lanes) and
//! host interface, and a message between two of them never enters the
//! network: it goes through the node's memory, one copy at the host's
//! copy rate after the send overhead (a single-copy shared-memory
//! transfer), and the receive then pays its overhead as any other.

use tofusim_packet::{Incomplete, NewMessage, NewPacket, Traffic};

use std::sync::Arc;

use crate::schedule::{total, Action, Combine, InvalidSchedule, Schedule};
use crate::ELEMENT_BYTES;

/// Host-side costs of a schedule, in network cycles (byte times of a link).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTiming {
    /// From a send's start to its first packet at the TNI: software, and
    /// the TNI reading the descriptor.
    pub send_overhead_cycles: u64,
    /// From a message's last packet at the receiving node to the receive's
    /// completion: writing the data, the completion notice, polling.
    pub recv_overhead_cycles: u64,
    /// Reduction rate of a summing receive, bytes per cycle.
    pub reduce_bytes_per_cycle: f64,
    /// Local copy rate, bytes per cycle.
    pub copy_bytes_per_cycle: f64,
    /// Per-packet link overhead, bytes (for pacing).
    pub wire_overhead_bytes: u32,
    /// The router's flow-control chunk, bytes: packets are whole chunks.
    pub chunk_bytes: u32,
    /// Length of a cycle, ns (for the software work of `Work` steps).
    pub cycle_ns: f64,
    /// Network interfaces (TNIs) per node: the send lanes. Each is one DMA
    /// engine that injects its packets in order; a send's `tni` beyond
    /// them wraps around.
    pub tnis: u8,
}

const NOT_YET: u64 = u64::MAX;
/// `unmet` of a step that has run.
const DONE: u32 = u32::MAX;

#[derive(Clone)]
struct Message {
    packets: u32,
    received: u32,
    /// Flat index of the receive step.
    recv_step: u32,
}

/// Execution state of one schedule on the engine. The schedule is shared
/// (the partitions of a split run each hold a copy of the state, not of
/// the schedule; the caller keeps it for its report).
#[derive(Clone)]
pub struct ScheduleRun {
    schedule: Arc<Schedule>,
    node_of_rank: Vec<u32>,
    timing: HostTiming,
    packet_bytes: u32,
    header_bytes: u32,
    /// First flat step index of each rank.
    base: Vec<u32>,
    /// Dependencies not yet finished (`DONE` once the step has run).
    unmet: Vec<u32>,
    /// Before a step runs, the cycle it may start (its dependencies' and,
    /// for a receive, its message's arrival); after, its finish.
    time: Vec<u64>,
    /// The steps waiting for each step: `dependants[first_dependant[s]..
    /// first_dependant[s + 1]]` (one flat list: a schedule has millions
    /// of steps).
    first_dependant: Vec<u32>,
    dependants: Vec<u32>,
    /// Message index of each send and receive step.
    message_of: Vec<u32>,
    messages: Vec<Message>,
    lanes: usize,
    finished: u64,
    /// Steps made ready but not yet run, earliest (then first in program
    /// order) first, so a TNI sends in program order.
    work: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
    /// Reused buffer for the messages a delivery releases.
    released: Vec<(u32, NewMessage)>,
}

impl std::fmt::Debug for ScheduleRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ScheduleRun({} {} on {} ranks, {}/{} steps done)",
            self.schedule.collective.name(),
            self.schedule.algorithm,
            self.schedule.ranks,
            self.finished,
            self.time.len()
        )
    }
}

impl ScheduleRun {
    pub fn new(
        schedule: impl Into<Arc<Schedule>>,
        node_of_rank: Vec<u32>,
        timing: HostTiming,
        packet_bytes: u32,
        header_bytes: u32,
    ) -> Result<Self, InvalidSchedule> {
        let schedule: Arc<Schedule> = schedule.into();
        schedule.validate()?;
        if node_of_rank.len() != schedule.ranks as usize {
            return Err(InvalidSchedule(format!(
                "{} ranks but {} nodes given",
                schedule.ranks,
                node_of_rank.len()
            )));
        }
        let p = schedule.ranks as usize;
        let mut base = Vec::with_capacity(p + 1);
        let mut n = 0u32;
        for prog in &schedule.programs {
            base.push(n);
            n += prog.steps.len() as u32;
        }
        base.push(n);
        let mut unmet = Vec::with_capacity(n as usize);
        // Dependants counted, then placed.
        let mut first_dependant = vec![0u32; n as usize + 1];
        for (r, prog) in schedule.programs.iter().enumerate() {
            for st in &prog.steps {
                for &d in &st.deps {
                    first_dependant[(base[r] + d) as usize + 1] += 1;
                }
            }
        }
        for i in 0..n as usize {
            first_dependant[i + 1] += first_dependant[i];
        }
        let mut dependants = vec![0u32; first_dependant[n as usize] as usize];
        let mut placed = first_dependant.clone();
        let mut message_of = vec![u32::MAX; n as usize];
        // Sized exactly: doubling would leave up to half again of millions.
        let sends = schedule
            .programs
            .iter()
            .flat_map(|prog| &prog.steps)
            .filter(|st| matches!(st.action, Action::Send { .. }))
            .count();
        let mut messages: Vec<Message> = Vec::with_capacity(sends);
        // Sends numbered per (from, to) stream; receives matched to them.
        let mut stream: std::collections::HashMap<(u32, u32, u32), Vec<u32>> = Default::default();
        let mut recv_seen: std::collections::HashMap<(u32, u32, u32), usize> = Default::default();
        for (r, prog) in schedule.programs.iter().enumerate() {
            for (i, st) in prog.steps.iter().enumerate() {
                let flat = base[r] + i as u32;
                unmet.push(st.deps.len() as u32);
                for &d in &st.deps {
                    let slot = &mut placed[(base[r] + d) as usize];
                    dependants[*slot as usize] = flat;
                    *slot += 1;
                }
                if let Action::Send { peer, spans, tag, .. } = &st.action {
                    let bytes = total(spans) * ELEMENT_BYTES;
                    message_of[flat as usize] = messages.len() as u32;
                    stream
                        .entry((r as u32, *peer, *tag))
                        .or_default()
                        .push(messages.len() as u32);
                    messages.push(Message {
                        packets: packet_count(bytes, packet_bytes, header_bytes),
                        received: 0,
                        recv_step: u32::MAX,
                    });
                }
            }
        }
        for (r, prog) in schedule.programs.iter().enumerate() {
            for (i, st) in prog.steps.iter().enumerate() {
                if let Action::Recv { peer, tag, .. } = &st.action {
                    let k = recv_seen.entry((*peer, r as u32, *tag)).or_default();
                    let m = stream[&(*peer, r as u32, *tag)][*k];
                    *k += 1;
                    let flat = base[r] + i as u32;
                    message_of[flat as usize] = m;
                    messages[m as usize].recv_step = flat;
                }
            }
        }
        let lanes = timing.tnis.max(1) as usize;
        Ok(Self {
            schedule,
            node_of_rank,
            timing,
            packet_bytes,
            header_bytes,
            base,
            time: vec![0; unmet.len()],
            unmet,
            first_dependant,
            dependants,
            message_of,
            messages,
            lanes,
            finished: 0,
            work: Default::default(),
            released: Vec::new(),
        })
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Steps without dependencies start at cycle 0; returns their messages
    /// as (node, message).
    pub fn start(&mut self, out: &mut Vec<(u32, NewMessage)>) {
        for s in 0..self.unmet.len() as u32 {
            if self.unmet[s as usize] == 0 {
                self.work.push(std::cmp::Reverse((0, s)));
            }
        }
        self.drain(out);
    }

    /// A packet of message `tag` arrived at its node at cycle `t`.
    pub fn on_delivery(&mut self, t: u64, tag: u32, out: &mut Vec<(u32, NewMessage)>) {
        let m = &mut self.messages[tag as usize];
        m.received += 1;
        if m.received < m.packets {
            return;
        }
        let s = m.recv_step as usize;
        self.time[s] = self.time[s].max(t);
        if self.unmet[s] == 0 {
            self.work.push(std::cmp::Reverse((self.time[s], s as u32)));
            self.drain(out);
        }
    }

    fn rank_of(&self, flat: u32) -> usize {
        self.base.partition_point(|&b| b <= flat) - 1
    }

    fn drain(&mut self, out: &mut Vec<(u32, NewMessage)>) {
        while let Some(std::cmp::Reverse((at, s))) = self.work.pop() {
            // A receive may be queued twice (its dependencies met, and its
            // message in from a rank of its own node in the same drain).
            if self.unmet[s as usize] == DONE {
                continue;
            }
            let r = self.rank_of(s);
            let step = &self.schedule.programs[r].steps[(s - self.base[r]) as usize];
            let done = match &step.action {
                Action::Send {
                    spans,
                    tni,
                    pace,
                    offload,
                    ..
                } => {
                    let start = at
                        + if *offload {
                            0
                        } else {
                            self.timing.send_overhead_cycles
                        };
                    let bytes = total(spans) * ELEMENT_BYTES;
                    let m = self.message_of[s as usize];
                    let dst = self.node_of_rank[self.rank_of(self.messages[m as usize].recv_step)];
                    if dst == self.node_of_rank[r] {
                        let copy = (bytes as f64 / self.timing.copy_bytes_per_cycle).ceil() as u64;
                        self.arrive_in_memory(m, start + copy);
                    } else {
                        self.emit(r, dst, m, bytes, *tni, *pace, start, out);
                    }
                    Some(start)
                }
                Action::Copy(c) => {
                    let bytes = total(&c.from) * ELEMENT_BYTES;
                    Some(at + (bytes as f64 / self.timing.copy_bytes_per_cycle).ceil() as u64)
                }
                Action::Work { ns } => {
                    Some(at + (*ns as f64 / self.timing.cycle_ns).round() as u64)
                }
                Action::Recv {
                    spans,
                    combine,
                    offload,
                    ..
                } => {
                    let m = &self.messages[self.message_of[s as usize] as usize];
                    if m.received < m.packets {
                        None
                    } else {
                        // After its dependencies and its message's arrival.
                        let at = at.max(self.time[s as usize]);
                        let bytes = total(spans) * ELEMENT_BYTES;
                        // The TNI applies an offloaded request itself.
                        let reduce = match combine {
                            Combine::Sum if !*offload => {
                                (bytes as f64 / self.timing.reduce_bytes_per_cycle).ceil() as u64
                            }
                            _ => 0,
                        };
                        let host = if *offload {
                            0
                        } else {
                            self.timing.recv_overhead_cycles
                        };
                        // `at` is after the arrival (see `on_delivery`).
                        Some(at + host + reduce)
                    }
                }
            };
            let Some(f) = done else { continue };
            self.time[s as usize] = f;
            self.unmet[s as usize] = DONE;
            self.finished += 1;
            for k in self.first_dependant[s as usize]..self.first_dependant[s as usize + 1] {
                let d = self.dependants[k as usize] as usize;
                self.time[d] = self.time[d].max(f);
                self.unmet[d] -= 1;
                if self.unmet[d] == 0 {
                    self.work
                        .push(std::cmp::Reverse((self.time[d], d as u32)));
                }
            }
        }
    }

    /// Message `m` between two ranks of one node has been copied into its
    /// receiver's memory at cycle `t`: no packet crosses the network.
    fn arrive_in_memory(&mut self, m: u32, t: u64) {
        let msg = &mut self.messages[m as usize];
        msg.received = msg.packets;
        let s = msg.recv_step as usize;
        self.time[s] = self.time[s].max(t);
        if self.unmet[s] == 0 {
            self.work.push(std::cmp::Reverse((self.time[s], s as u32)));
        }
    }

    /// Message `m` from rank `r`, released from cycle `start` (a packet
    /// every `pace` packet wire times when paced).
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        r: usize,
        dst: u32,
        m: u32,
        bytes: u64,
        tni: u8,
        pace: u8,
        start: u64,
        out: &mut Vec<(u32, NewMessage)>,
    ) {
        let node = self.node_of_rank[r];
        let payload = (self.packet_bytes - self.header_bytes) as u64;
        let packets = self.messages[m as usize].packets;
        let chunk = self.timing.chunk_bytes as u64;
        let wire = |carried: u64| (carried + self.header_bytes as u64).div_ceil(chunk) * chunk;
        let full = bytes.min(payload);
        let last = bytes - (packets as u64 - 1) * payload;
        let gap_cycles = if pace > 1 { pace as u64 * (wire(full) + self.timing.wire_overhead_bytes as u64) } else { 0 };
        let first = NewPacket {
            dst,
            bytes: wire(full) as u16,
            payload: full as u16,
            tag: m,
            hints: None,
            deposit: false,
            lane: tni % self.lanes as u8,
            release_cycle: start,
        };
        out.push((
            node,
            NewMessage { first, packets, last_bytes: wire(last) as u16, last_payload: last as u16, gap_cycles },
        ));
    }

    /// Finish cycle of step `s` (`NOT_YET`: it never ran).
    fn finish(&self, s: usize) -> u64 {
        if self.unmet[s] == DONE {
            self.time[s]
        } else {
            NOT_YET
        }
    }

    /// Finish cycles of rank `r`'s steps (`NOT_YET`: never ran).
    fn rank_finish(&self, r: usize) -> impl Iterator<Item = u64> + '_ {
        (self.base[r] as usize..self.base[r + 1] as usize).map(|s| self.finish(s))
    }

    /// Cycle at which the last step finished (the collective's time).
    pub fn end_cycle(&self) -> u64 {
        (0..self.time.len())
            .map(|s| self.finish(s))
            .filter(|&f| f != NOT_YET)
            .max()
            .unwrap_or(0)
    }

    /// Per rank, the cycle its last step finished.
    pub fn rank_end_cycles(&self) -> Vec<u64> {
        (0..self.schedule.ranks as usize).map(|r| self.rank_finish(r).max().unwrap_or(0)).collect()
    }

    /// The critical path of the run and each rank's time split
    /// ([`super::critical_path`]), from every step's finish cycle.
    pub fn critical_path(&self) -> super::critical_path::CriticalPath {
        self.critical_path_of(0..self.schedule.ranks)
    }

    /// [`Self::critical_path`] of the ranks `ranks` alone (a job of a mix:
    /// they exchange no message with the others); `RankTime::rank` counts
    /// from the first of them.
    pub fn critical_path_of(&self, ranks: std::ops::Range<u32>) -> super::critical_path::CriticalPath {
        use super::critical_path::{analyse, StepKind, StepView};
        // The send step of each message.
        let mut send_of = vec![u32::MAX; self.messages.len()];
        for (s, &m) in self.message_of.iter().enumerate() {
            if m != u32::MAX && self.messages[m as usize].recv_step != s as u32 {
                send_of[m as usize] = s as u32;
            }
        }
        let finish: Vec<u64> = (0..self.time.len()).map(|s| self.finish(s)).collect();
        let ranges: Vec<std::ops::Range<u32>> = ranks.map(|r| self.base[r as usize]..self.base[r as usize + 1]).collect();
        let view = |s: u32| {
            let r = self.rank_of(s);
            let i = s - self.base[r];
            let step = &self.schedule.programs[r].steps[i as usize];
            let kind = match &step.action {
                Action::Send { offload, .. } => StepKind::Send { overhead: if *offload { 0 } else { self.timing.send_overhead_cycles } },
                Action::Recv { peer, spans, combine, offload, .. } => {
                    let bytes = total(spans) * ELEMENT_BYTES;
                    let reduction = match combine {
                        Combine::Sum if !*offload => (bytes as f64 / self.timing.reduce_bytes_per_cycle).ceil() as u64,
                        _ => 0,
                    };
                    let host = if *offload { 0 } else { self.timing.recv_overhead_cycles };
                    StepKind::Recv { send: send_of[self.message_of[s as usize] as usize], peer: *peer, bytes, overhead: host + reduction, reduction }
                }
                Action::Copy(_) => StepKind::Copy,
                Action::Work { .. } => StepKind::Work,
            };
            StepView { rank: r as u32, step: i, deps: step.deps.iter().map(|&d| self.base[r] + d).collect(), finish: finish[s as usize], kind }
        };
        analyse(&finish, &ranges, &view)
    }

    /// Per rank, the finish cycle of each step (`u64::MAX`: never ran).
    pub fn step_finish_cycles(&self) -> Vec<Vec<u64>> {
        (0..self.schedule.ranks as usize).map(|r| self.rank_finish(r).collect()).collect()
    }

    /// Per rank whose node `owned` accepts: the finish cycle of each step
    /// (what a partition of a split run knows for sure).
    pub fn export_ranks(&self, owned: &dyn Fn(u32) -> bool) -> Vec<(u32, Vec<u64>)> {
        (0..self.schedule.ranks as usize)
            .filter(|&r| owned(self.node_of_rank[r]))
            .map(|r| (r as u32, self.rank_finish(r).collect()))
            .collect()
    }

    /// Takes the step finish cycles of ranks another partition ran.
    pub fn import_ranks(&mut self, ranks: &[(u32, Vec<u64>)]) {
        for (r, f) in ranks {
            for (s, &f) in (self.base[*r as usize] as usize..).zip(f) {
                if f != NOT_YET {
                    self.time[s] = f;
                    self.unmet[s] = DONE;
                }
            }
        }
        self.finished = self.unmet.iter().filter(|&&u| u == DONE).count() as u64;
    }

    /// Every step ran.
    pub fn check_complete(&self) -> Result<(), String> {
        let total = self.time.len() as u64;
        if self.finished == total {
            return Ok(());
        }
        let s = self.unmet.iter().position(|&u| u != DONE).unwrap_or(0) as u32;
        let r = self.rank_of(s);
        Err(format!(
            "{} of {total} schedule steps never ran; first: rank {r} step {}",
            total - self.finished,
            s - self.base[r]
        ))
    }
}

/// Packets of a message of `bytes` payload (an empty message still sends one).
pub fn packet_count(bytes: u64, packet_bytes: u32, header_bytes: u32) -> u32 {
    bytes.div_ceil((packet_bytes - header_bytes) as u64).max(1) as u32
}

impl Traffic for ScheduleRun {
    fn lanes(&self) -> usize {
        self.lanes
    }

    fn is_finite(&self) -> bool {
        true
    }

    fn start_messages(&mut self, out: &mut Vec<(u32, NewMessage)>) {
        self.start(out);
    }

    fn prefetch_delivery(&self, tag: u32) {
        tofusim_packet::prefetch_line(&self.messages, tag as usize);
    }

    fn on_delivery(&mut self, node: u32, t: u64, tag: u32, out: &mut Vec<NewMessage>) {
        let mut released = std::mem::take(&mut self.released);
        ScheduleRun::on_delivery(self, t, tag, &mut released);
        // A receive only releases its own rank's steps: packets from `node`.
        debug_assert!(released.iter().all(|&(n, _)| n == node));
        out.extend(released.drain(..).map(|(_, p)| p));
        self.released = released;
    }

    /// Per rank on the owned nodes: `[ranks, (rank, steps, finish…)…]`.
    fn export_nodes(&self, owned: &dyn Fn(u32) -> bool) -> Vec<u64> {
        let ranks = self.export_ranks(owned);
        let mut w = vec![ranks.len() as u64];
        for (r, f) in &ranks {
            w.extend([*r as u64, f.len() as u64]);
            w.extend(f);
        }
        w
    }

    fn absorb_nodes(&mut self, words: &[u64]) {
        let mut it = words.iter().copied();
        let mut next = || it.next().expect("a complete rank export");
        let ranks: Vec<(u32, Vec<u64>)> = (0..next())
            .map(|_| {
                let r = next() as u32;
                let n = next();
                (r, (0..n).map(|_| next()).collect())
            })
            .collect();
        self.import_ranks(&ranks);
    }

    fn check_complete(&self) -> Result<Option<u64>, Incomplete> {
        match ScheduleRun::check_complete(self) {
            Ok(()) => Ok(Some(self.end_cycle())),
            Err(detail) => Err(Incomplete { kind: "schedule-incomplete", detail }),
        }
    }
}
