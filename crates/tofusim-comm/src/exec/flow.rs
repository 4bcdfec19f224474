//! The flow-model executors of point-to-point transfers and of a
//! [`Schedule`](crate::Schedule): every message is one or several flows
//! (crate `tofusim-flow`) on its routes, sharing bandwidth max-min fairly
//! with the messages in flight, plus the latency terms of the packet
//! executor ([`super::packet`]): send overhead, hops × hop latency, receive
//! overhead, reduction of a summing receive, local copies. A TNI lane sends
//! its messages in order: each starts when the one before it on that lane
//! has finished. Not modelled: buffers, flow control and arbitration (hence
//! no head-of-line blocking in the network and no deadlock).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use rand::SeedableRng;
use tofusim_flow::transfers::{Messages, Start};
use tofusim_flow::{FlowNet, FlowTable, IncrementalMaxMin, RouteScratch, Stop};

use crate::exec::packet::HostTiming;
use crate::schedule::Transfer;

/// Completion of a set of transfers that start together.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowTimed {
    /// Per transfer, seconds from the start to its completion at the receiver.
    pub message_seconds: Vec<f64>,
    /// The last completion.
    pub time_seconds: f64,
}

/// A machine as the flow executors see it: its flow network, where each
/// rank runs, the host timing of the packet executor, and the packet
/// format (for the bytes on the wire) and hop latency of its router.
pub struct FlowMachine<'a> {
    pub net: &'a FlowNet,
    /// Rank → node of the network.
    pub node_of_rank: &'a [u32],
    /// Host overheads, reduction and copy rates, cycle length, TNIs,
    /// chunk and per-packet link overhead.
    pub timing: HostTiming,
    /// A full packet on the router, bytes, and its software header.
    pub packet_bytes: u32,
    pub header_bytes: u32,
    /// Router hop latency, cycles.
    pub hop_latency_cycles: u32,
    /// Asked between max-min solves: a run told to stop returns
    /// [`FlowError::Interrupted`] ([`tofusim_flow::Interrupt`]).
    pub interrupt: &'a dyn Stop,
}

/// Why a schedule or transfers did not run to the end on the flow model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlowError {
    /// Stopped by its [`FlowMachine::interrupt`] (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// A transfer names a rank the machine does not place.
    #[error("a rank beyond the {ranks} of the communicator")]
    RankBeyond { ranks: u32 },
    /// The schedule breaks its own rules ([`crate::Schedule::validate`]).
    #[error(transparent)]
    InvalidSchedule(#[from] crate::schedule::InvalidSchedule),
    /// Some steps never ran (a receive without its send, a cycle of waits).
    #[error("{never} of {steps} steps never ran on the flow model (rank {rank} stopped at step {step}: {what})")]
    StepsNeverRan { never: usize, steps: usize, rank: usize, step: usize, what: String },
}

impl FlowMachine<'_> {
    /// Bytes on the wire of a message of `bytes` payload: its packets, each
    /// with its header, rounded to the router's chunks, plus the per-packet
    /// link overhead (an empty message still sends one packet).
    pub fn wire_bytes(&self, bytes: u64) -> u64 {
        let (header, overhead) = (self.header_bytes as u64, self.timing.wire_overhead_bytes as u64);
        let chunk = self.timing.chunk_bytes.max(1) as u64;
        let payload = self.packet_bytes as u64 - header;
        let packets = bytes.div_ceil(payload).max(1);
        let last = bytes - (packets - 1) * payload;
        let on_wire = |carried: u64| (carried + header).div_ceil(chunk) * chunk + overhead;
        (packets - 1) * on_wire(payload) + on_wire(last)
    }

    /// Length of a cycle, seconds.
    fn cycle_s(&self) -> f64 {
        self.timing.cycle_ns * 1e-9
    }
}

/// Transfers `list` (ranks of the machine) that start together, on the
/// flow model. Errors name what was wrong (a rank beyond the machine).
pub fn transfers(m: &FlowMachine, list: &[Transfer], seed: u64) -> Result<FlowTimed, FlowError> {
    let net = m.net;
    let tnis = net.tnis;
    let timing = &m.timing;
    let cycle_s = m.cycle_s();
    let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
    let ranks = m.node_of_rank.len() as u32;
    let mut messages = Messages::new();
    let mut scratch = RouteScratch::default();
    // The parts of the last transfer given to each TNI lane: a lane sends
    // in order, the next transfer when every part of this one is done.
    let mut last_on_lane: std::collections::HashMap<(u32, u8), std::ops::Range<usize>> = std::collections::HashMap::new();
    let mut latency = Vec::with_capacity(list.len());
    // Per transfer, its messages (one per route part).
    let mut parts: Vec<std::ops::Range<usize>> = Vec::with_capacity(list.len());
    let mut after: Vec<usize> = Vec::new();
    for tr in list {
        if tr.src >= ranks || tr.dst >= ranks {
            return Err(FlowError::RankBeyond { ranks });
        }
        let (a, b) = (m.node_of_rank[tr.src as usize], m.node_of_rank[tr.dst as usize]);
        let wire = m.wire_bytes(tr.bytes);
        // One message per route part; the lane orders whole transfers: a
        // transfer's parts wait for the last part of the one before.
        let key = (a, tr.tni % tnis as u8);
        after.clear();
        after.extend(last_on_lane.get(&key).cloned().unwrap_or_default());
        let first = messages.len();
        let pool = net.balanced().then_some(first);
        net.visit_routes(a, b, tr.tni, &mut rng, &mut scratch, |links, hops, share| {
            latency.push((timing.send_overhead_cycles + hops * m.hop_latency_cycles as u64 + timing.recv_overhead_cycles) as f64 * cycle_s);
            let own = pool.filter(|&p| p != messages.len());
            messages.push(links, f64::INFINITY, wire as f64 * share, &after, Start { pool: own, ..Start::default() });
        });
        last_on_lane.insert(key, first..messages.len());
        parts.push(first..messages.len());
    }
    let done = messages.run_until(&net.capacity, m.interrupt).ok_or(FlowError::Interrupted)?.done;
    let message_seconds: Vec<f64> = parts
        .iter()
        .map(|r| r.clone().map(|m| done[m] + latency[m]).fold(0.0, f64::max))
        .collect();
    let time_seconds = message_seconds.iter().copied().fold(0.0, f64::max);
    Ok(FlowTimed {
        message_seconds,
        time_seconds,
    })
}

/// One message of a schedule on the flow model.
struct ScheduleMessage {
    /// Its parts (one flow each, see [`FlowNet::routes`]): part numbers.
    parts: std::ops::Range<usize>,
    wire: f64,
    /// Hop latency of its route, seconds.
    latency_s: f64,
    lane: usize,
    recv_step: usize,
    arrived: f64,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A step's dependencies are met.
    Ready(usize),
    /// A message is handed to its TNI.
    Submit(usize),
    /// A message's last byte reached the receiving node.
    Arrive(usize),
}

/// What a step does, read from the schedule once (the loop then touches
/// one small entry per step instead of the schedule's programs).
#[derive(Clone, Copy)]
enum Work {
    /// Hands message `msg` to its TNI `after_s` after the step is ready
    /// (the host's send overhead, or none for an offloaded send).
    Send { msg: usize, after_s: f64 },
    /// Done once message `msg` has arrived and the step is ready, plus the
    /// host's receive overhead and the reduction.
    Recv { msg: usize, host_s: f64, reduce_s: f64 },
    /// Done a fixed time after the step is ready (a local copy, work).
    Fixed { s: f64 },
}

/// A collective schedule on the flow model: the same steps, overheads,
/// reduction and copy rates as the packet-engine executor
/// ([`super::packet::ScheduleRun`]), with each message a flow (see the
/// module docs). Returns the time of the last step, seconds.
pub fn schedule_time(m: &FlowMachine, schedule: &crate::Schedule, seed: u64) -> Result<f64, FlowError> {
    Ok(schedule_finish_times(m, schedule, seed)?.iter().copied().fold(0.0, f64::max))
}

/// [`schedule_time`]'s every step: the finish time of each step, seconds,
/// flat (rank 0's steps, then rank 1's, ...).
pub fn schedule_finish_times(m: &FlowMachine, schedule: &crate::Schedule, seed: u64) -> Result<Vec<f64>, FlowError> {
    schedule.validate()?;
    let mut run = FlowSchedule::new(m, schedule, seed);
    run.run()?;
    if run.done_steps != run.finish.len() {
        let n = run.finish.len();
        let first = run.finish.iter().position(|f| f.is_nan()).unwrap_or(0);
        let (mut r, mut base) = (0, 0);
        while base + schedule.programs[r].steps.len() <= first {
            base += schedule.programs[r].steps.len();
            r += 1;
        }
        let what = schedule.programs[r].steps[first - base].action.describe();
        return Err(FlowError::StepsNeverRan { never: n - run.done_steps, steps: n, rank: r, step: first - base, what });
    }
    Ok(run.finish)
}

/// A non-negative time as a heap key (its bits order as the float does).
fn at(t: f64) -> u64 {
    t.max(0.0).to_bits()
}

/// The state of a schedule's run on the flow model. Steps are numbered
/// flat (rank 0's, then rank 1's, ...); every message is one or several
/// parts, each a flow of the solver. Parts drain a count of their own, or
/// on an adaptive torus their message's (the first part's slot: a *pool*)
/// at the sum of their rates. Each pool drains lazily
/// ([`tofusim_flow::DrainingPools`]); its finish time sits in a heap
/// (stale entries carry an old version), so an event costs the pools whose
/// rates it changed, not every active one.
struct FlowSchedule<'a> {
    interrupt: &'a dyn Stop,
    steps: Vec<Work>,
    /// Per step: dependencies not yet met, when the last of them was,
    /// when it finished (NaN until then); the steps waiting for it
    /// (`dependants[dep_first[i]..dep_first[i + 1]]`).
    unmet: Vec<u32>,
    ready: Vec<f64>,
    finish: Vec<f64>,
    dep_first: Vec<usize>,
    dependants: Vec<u32>,
    done_steps: usize,
    messages: Vec<ScheduleMessage>,
    /// Per part: its message, its pool; per message: parts not finished.
    part_of: Vec<usize>,
    pool_of: Vec<usize>,
    parts_left: Vec<usize>,
    balanced: bool,
    /// Per pool (indexed by part): how it drains.
    pools: tofusim_flow::DrainingPools,
    touched: Vec<usize>,
    pool_touched: Vec<bool>,
    solver: IncrementalMaxMin,
    events: BinaryHeap<Reverse<(u64, Event)>>,
    finishing: BinaryHeap<Reverse<(u64, usize, u32)>>,
    /// Per TNI lane: sending, and the messages waiting for it in order.
    lane_busy: Vec<bool>,
    lane_queue: Vec<VecDeque<usize>>,
    now: f64,
}

impl<'a> FlowSchedule<'a> {
    /// Routes every message (the same random draws as the packet
    /// executor's order of sends) and matches receives to sends.
    fn new(m: &FlowMachine<'a>, schedule: &crate::Schedule, seed: u64) -> Self {
        use crate::{Action, Combine, ELEMENT_BYTES};
        let net = m.net;
        let timing = &m.timing;
        let cycle_s = m.cycle_s();
        let recv_s = timing.recv_overhead_cycles as f64 * cycle_s;
        let send_s = timing.send_overhead_cycles as f64 * cycle_s;
        let reduce_bps = timing.reduce_bytes_per_cycle / cycle_s;
        let copy_bps = timing.copy_bytes_per_cycle / cycle_s;
        let bytes_of = |spans: &crate::schedule::Spans| crate::schedule::total(spans) * ELEMENT_BYTES;
        let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
        // Flat step numbering and message matching, as ScheduleRun does.
        let mut base = vec![0usize];
        for p in &schedule.programs {
            base.push(base.last().copied().unwrap_or(0) + p.steps.len());
        }
        let n = *base.last().unwrap_or(&0);
        let mut unmet = vec![0u32; n];
        let mut steps = Vec::with_capacity(n);
        let mut messages: Vec<ScheduleMessage> = Vec::new();
        let mut part_links = FlowTable::new();
        let mut part_wire: Vec<f64> = Vec::new();
        let mut part_of: Vec<usize> = Vec::new();
        let mut scratch = RouteScratch::default();
        let mut stream: HashMap<(u32, u32, u32), Vec<usize>> = HashMap::new();
        let mut dep_count = vec![0usize; n + 1];
        for (r, prog) in schedule.programs.iter().enumerate() {
            for (i, st) in prog.steps.iter().enumerate() {
                let flat = base[r] + i;
                unmet[flat] = st.deps.len() as u32;
                for &d in &st.deps {
                    dep_count[base[r] + d as usize + 1] += 1;
                }
                steps.push(match &st.action {
                    Action::Send { peer, spans, tni, tag, offload, .. } => {
                        let (a, b) = (m.node_of_rank[r], m.node_of_rank[*peer as usize]);
                        let wire = m.wire_bytes(bytes_of(spans)) as f64;
                        let first = part_links.len();
                        let mut hops = 0u64;
                        // Two ranks of one node: no route, one copy in memory
                        // (no parts: the message arrives its copy time after
                        // it is submitted, see `Event::Submit`).
                        if a != b {
                            net.visit_routes(a, b, *tni, &mut rng, &mut scratch, |links, h, share| {
                                part_links.push(links, f64::INFINITY);
                                part_wire.push(wire * share);
                                part_of.push(messages.len());
                                hops = hops.max(h);
                            });
                        }
                        stream.entry((r as u32, *peer, *tag)).or_default().push(messages.len());
                        messages.push(ScheduleMessage {
                            parts: first..part_links.len(),
                            wire,
                            latency_s: if a == b { bytes_of(spans) as f64 / copy_bps } else { hops as f64 * m.hop_latency_cycles as f64 * cycle_s },
                            lane: net.lane(a, *tni),
                            recv_step: usize::MAX,
                            arrived: f64::NAN,
                        });
                        Work::Send { msg: messages.len() - 1, after_s: if *offload { 0.0 } else { send_s } }
                    }
                    Action::Recv { spans, combine, offload, .. } => {
                        let reduce_s = if *combine == Combine::Sum && !*offload { bytes_of(spans) as f64 / reduce_bps } else { 0.0 };
                        // The message: matched below.
                        Work::Recv { msg: usize::MAX, host_s: if *offload { 0.0 } else { recv_s }, reduce_s }
                    }
                    Action::Copy(c) => Work::Fixed { s: bytes_of(&c.from) as f64 / copy_bps },
                    Action::Work { ns } => Work::Fixed { s: *ns as f64 * 1e-9 },
                });
            }
        }
        let mut seen: HashMap<(u32, u32, u32), usize> = HashMap::new();
        for (r, prog) in schedule.programs.iter().enumerate() {
            for (i, st) in prog.steps.iter().enumerate() {
                if let Action::Recv { peer, tag, .. } = &st.action {
                    let k = seen.entry((*peer, r as u32, *tag)).or_default();
                    let msg = stream[&(*peer, r as u32, *tag)][*k];
                    *k += 1;
                    if let Work::Recv { msg: slot, .. } = &mut steps[base[r] + i] {
                        *slot = msg;
                    }
                    messages[msg].recv_step = base[r] + i;
                }
            }
        }
        // The steps waiting for each step, in the schedule's order.
        for i in 0..n {
            dep_count[i + 1] += dep_count[i];
        }
        let mut fill = dep_count.clone();
        let mut dependants = vec![0u32; dep_count[n]];
        for (r, prog) in schedule.programs.iter().enumerate() {
            for (i, st) in prog.steps.iter().enumerate() {
                for &d in &st.deps {
                    let k = base[r] + d as usize;
                    dependants[fill[k]] = (base[r] + i) as u32;
                    fill[k] += 1;
                }
            }
        }
        let mut events = BinaryHeap::new();
        for (i, &u) in unmet.iter().enumerate() {
            if u == 0 {
                events.push(Reverse((at(0.0), Event::Ready(i))));
            }
        }
        let balanced = net.balanced();
        let parts = part_wire.len();
        let pool_of: Vec<usize> = (0..parts).map(|q| if balanced { messages[part_of[q]].parts.start } else { q }).collect();
        let mut left = vec![0.0; parts];
        for (q, &w) in part_wire.iter().enumerate() {
            left[pool_of[q]] += w;
        }
        part_links.shrink_to_fit();
        let lanes = net.nodes * net.tnis;
        FlowSchedule {
            interrupt: m.interrupt,
            steps,
            unmet,
            ready: vec![0.0; n],
            finish: vec![f64::NAN; n],
            dep_first: dep_count,
            dependants,
            done_steps: 0,
            parts_left: messages.iter().map(|m| m.parts.len()).collect(),
            messages,
            part_of,
            pool_of,
            balanced,
            pools: tofusim_flow::DrainingPools::new(left),
            touched: Vec::new(),
            pool_touched: vec![false; parts],
            // Rates re-solved only where a start or finish reaches (the
            // max-min rates of every active part, see `IncrementalMaxMin`).
            solver: IncrementalMaxMin::new(net.capacity.clone(), part_links),
            events,
            finishing: BinaryHeap::new(),
            lane_busy: vec![false; lanes],
            lane_queue: vec![VecDeque::new(); lanes],
            now: 0.0,
        }
    }

    /// The parts of pool `p`.
    fn parts_of_pool(&self, p: usize) -> std::ops::Range<usize> {
        if self.balanced {
            self.messages[self.part_of[p]].parts.clone()
        } else {
            p..p + 1
        }
    }

    /// Runs to the last event: rates brought up to date, then the pools
    /// that finish, then the events due.
    fn run(&mut self) -> Result<(), FlowError> {
        let mut freed = Vec::new();
        loop {
            if self.solver.changed() {
                if self.interrupt.stopped() || !self.solver.solve(self.interrupt) {
                    return Err(FlowError::Interrupted);
                }
                self.update_pools();
            }
            // The next pool to finish (stale entries dropped).
            while let Some(&Reverse((_, p, v))) = self.finishing.peek() {
                if v == self.pools.version(p) && self.pools.rate(p) > 0.0 {
                    break;
                }
                self.finishing.pop();
            }
            let t_flow = self.finishing.peek().map_or(f64::INFINITY, |Reverse((b, _, _))| f64::from_bits(*b));
            let t_event = self.events.peek().map_or(f64::INFINITY, |Reverse((b, _))| f64::from_bits(*b));
            let next = t_flow.min(t_event);
            if !next.is_finite() {
                return Ok(());
            }
            self.now = next;
            self.finish_pools(&mut freed);
            // Finished messages free their lanes and arrive after the hops.
            for msg in freed.drain(..) {
                self.events.push(Reverse((at(self.now + self.messages[msg].latency_s), Event::Arrive(msg))));
                let lane = self.messages[msg].lane;
                match self.lane_queue[lane].pop_front() {
                    Some(next) => self.start(next),
                    None => self.lane_busy[lane] = false,
                }
            }
            while let Some(&Reverse((b, ev))) = self.events.peek() {
                if f64::from_bits(b) > self.now {
                    break;
                }
                self.events.pop();
                self.event(ev);
            }
        }
    }

    /// The pools of the parts the last solve refilled: drained to now at
    /// their old rate, their new rate and finish time.
    fn update_pools(&mut self) {
        let now = self.now;
        for &q in self.solver.last_solved() {
            let p = self.pool_of[q as usize];
            if !self.pool_touched[p] {
                self.pool_touched[p] = true;
                self.touched.push(p);
            }
        }
        for k in 0..self.touched.len() {
            let p = self.touched[k];
            self.pool_touched[p] = false;
            let rate = self.parts_of_pool(p).filter(|&q| self.solver.is_active(q)).map(|q| self.solver.rate(q)).sum();
            let version = self.pools.set_rate(p, now, rate);
            if rate > 0.0 {
                self.finishing.push(Reverse((at(now + self.pools.left(p) / rate), p, version)));
            }
        }
        self.touched.clear();
    }

    /// Pools whose finish time has come: their parts leave the solver;
    /// messages whose every part is done go to `freed`.
    fn finish_pools(&mut self, freed: &mut Vec<usize>) {
        let now = self.now;
        while let Some(&Reverse((b, p, v))) = self.finishing.peek() {
            if f64::from_bits(b) > now {
                break;
            }
            self.finishing.pop();
            if v != self.pools.version(p) || self.pools.rate(p) <= 0.0 {
                continue;
            }
            self.pools.drain_to(p, now);
            let (left, rate) = (self.pools.left(p), self.pools.rate(p));
            let wire = self.messages[self.part_of[p]].wire.max(1.0);
            if left > 1e-9 * wire && now + left / rate > now {
                // Rounding left a sliver: finish when it drains.
                self.finishing.push(Reverse((at(now + left / rate), p, v)));
                continue;
            }
            self.pools.empty(p);
            for q in self.parts_of_pool(p) {
                if !self.solver.is_active(q) {
                    continue;
                }
                self.solver.remove(q);
                let msg = self.part_of[q];
                self.parts_left[msg] -= 1;
                if self.parts_left[msg] == 0 {
                    freed.push(msg);
                }
            }
        }
    }

    /// Message `msg`'s parts start sending.
    fn start(&mut self, msg: usize) {
        for q in self.messages[msg].parts.clone() {
            self.solver.add(q);
        }
    }

    fn event(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::Submit(msg) if self.messages[msg].parts.is_empty() => {
                // Between two ranks of one node: through memory, not a lane.
                self.events.push(Reverse((at(now + self.messages[msg].latency_s), Event::Arrive(msg))));
            }
            Event::Submit(msg) => {
                let lane = self.messages[msg].lane;
                if self.lane_busy[lane] {
                    self.lane_queue[lane].push_back(msg);
                } else {
                    self.lane_busy[lane] = true;
                    self.start(msg);
                }
            }
            Event::Arrive(msg) => {
                self.messages[msg].arrived = now;
                let r = self.messages[msg].recv_step;
                if self.unmet[r] == 0 && self.finish[r].is_nan() && self.ready[r] <= now {
                    self.events.push(Reverse((at(now), Event::Ready(r))));
                }
            }
            Event::Ready(flat) => {
                if !self.finish[flat].is_nan() {
                    return;
                }
                let ready = self.ready[flat];
                let f = match self.steps[flat] {
                    Work::Send { msg, after_s } => {
                        let start = ready + after_s;
                        self.events.push(Reverse((at(start), Event::Submit(msg))));
                        Some(start)
                    }
                    Work::Recv { msg, host_s, reduce_s } => {
                        let arrived = self.messages[msg].arrived;
                        (!arrived.is_nan()).then(|| ready.max(arrived) + host_s + reduce_s)
                    }
                    Work::Fixed { s } => Some(ready + s),
                };
                if let Some(f) = f {
                    self.complete(flat, f);
                }
            }
        }
    }

    /// Step `flat` finished at `f`: its dependants are released then.
    fn complete(&mut self, flat: usize, f: f64) {
        self.done_steps += 1;
        self.finish[flat] = f;
        for k in self.dep_first[flat]..self.dep_first[flat + 1] {
            let d = self.dependants[k] as usize;
            self.ready[d] = self.ready[d].max(f);
            self.unmet[d] -= 1;
            if self.unmet[d] == 0 {
                self.events.push(Reverse((at(self.ready[d]), Event::Ready(d))));
            }
        }
    }
}
