//! Several jobs in lockstep rounds on the flow model: the full-machine
//! path of a job mix.
//!
//! The event-by-event executor ([`super::flow`]) re-solves the max-min
//! rates at every message's start and end. When the jobs' nodes are spread
//! over the machine (random placement) every message shares links with
//! thousands of others, each solve reaches nearly all of them, and a mix of
//! 40,000 nodes does not finish. Here the rates are found in two passes.
//!
//! **1. The lockstep.** Each job is a sequence of [`Round`]s — the messages
//! its ranks send at one depth of its schedule ([`levels`]) — and a round
//! goes through three phases:
//! - *head*: the ranks' local work of the round and the send overhead;
//! - *transfer*: every network message of the round is a flow (one per
//!   route part, as in the event executor) sharing the links max-min fairly
//!   with the flows of the other jobs' rounds in their transfer phase,
//!   until the round's last byte has arrived;
//! - *tail*: the longest latency after a message's last byte (router hops,
//!   receive overhead, reduction; between two ranks of one node, the copy),
//!   then the next round (not before the round's minimum length, the period
//!   of open-loop traffic).
//!
//! Rates are re-solved when some job enters or leaves a transfer phase and
//! when half of a transfer's messages still live have finished (their
//! bandwidth goes to the others; a round of n messages costs about log2 n
//! solves). A set of flows solved before is not solved again (its rates
//! depend only on its routes): a job whose rounds repeat, alone or beside
//! jobs that do not change, costs one solve per distinct set. Each message
//! comes out with its **transfer time**: from its round's transfer start
//! to its last byte.
//!
//! **2. Each job's schedule**, step by step as the event executor runs it
//! (dependencies, send and receive overheads, a TNI sending its messages in
//! order, reductions, copies, work), with every message's transfer taking
//! the time it took in the lockstep. So ranks run ahead of the round where
//! their own dependencies allow, and a pipeline's latencies overlap; what
//! stays from the lockstep is which messages share the network when.
//!
//! What this leaves out, against the event executor: the messages of a
//! round are taken to share the network together (a rank that runs ahead
//! in pass 2 does not meet different traffic), and one route is drawn per
//! node pair and TNI rather than per message (as the rounds form of a
//! collective draws one per stream). `tofusim jobs` compares the two on
//! mixes both can run (docs/jobs.md).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rand::SeedableRng;
use serde::Serialize;
use tofusim_flow::{FlowTable, MaxMin};

use crate::exec::flow::{FlowError, FlowMachine};
use crate::schedule::{total, Action, Combine};
use crate::{Schedule, ELEMENT_BYTES};

/// One message of a round, between ranks of its job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub tni: u8,
    /// The receiver adds it into its buffer (pays the reduction).
    pub reduce: bool,
    /// Sent by the TNI alone (an RDMA reply): no send overhead.
    pub offload: bool,
    /// Received by the TNI alone (an RDMA request at its target): no
    /// receive overhead, no reduction.
    pub recv_offload: bool,
}

/// The messages a job's ranks send at one depth of its schedule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round {
    pub messages: Vec<Message>,
    /// The longest local work (copies, software) a rank does in the round,
    /// seconds.
    pub local_s: f64,
    /// The round lasts at least this long, seconds (open-loop traffic's
    /// period; 0 otherwise).
    pub min_s: f64,
}

/// A schedule as rounds, and where each of its messages went.
#[derive(Clone, Debug, Default)]
pub struct Leveled {
    pub rounds: Vec<Round>,
    /// Per rank, per step: the (round, index in the round) of the message
    /// a send or receive step moves; [`NO_MESSAGE`] for other steps.
    pub message_of: Vec<Vec<(u32, u32)>>,
}

pub const NO_MESSAGE: (u32, u32) = (u32::MAX, u32::MAX);

impl Leveled {
    fn push(&mut self, round: usize, x: Message, min_s: f64) -> (u32, u32) {
        if self.rounds.len() <= round {
            self.rounds.resize_with(round + 1, || Round { min_s, ..Round::default() });
        }
        self.rounds[round].messages.push(x);
        (round as u32, self.rounds[round].messages.len() as u32 - 1)
    }

    /// Step `i` of rank `r` receives message `at`: it names it, and its
    /// combine and offload decide the message's reduction and receive
    /// overheads.
    fn receive(&mut self, r: usize, i: usize, at: (u32, u32), combine: Combine, offload: bool) {
        let x = &mut self.rounds[at.0 as usize].messages[at.1 as usize];
        x.reduce = combine == Combine::Sum && !offload;
        x.recv_offload = offload;
        self.message_of[r][i] = at;
    }

    /// Each receive's message: the k-th receive from a sender with a tag
    /// takes the k-th send to it with that tag.
    fn match_receives(&mut self, schedule: &Schedule) -> Result<(), FlowError> {
        // Per (sender, receiver, tag): its sends' messages in order, and
        // the receives matched so far.
        type Sent = HashMap<(u32, u32, u32), (Vec<(u32, u32)>, usize)>;
        let mut sent: Sent = HashMap::new();
        for (r, pr) in schedule.programs.iter().enumerate() {
            for (i, st) in pr.steps.iter().enumerate() {
                if let Action::Send { peer, tag, .. } = &st.action {
                    sent.entry((r as u32, *peer, *tag)).or_default().0.push(self.message_of[r][i]);
                }
            }
        }
        for (r, pr) in schedule.programs.iter().enumerate() {
            for (i, st) in pr.steps.iter().enumerate() {
                if let Action::Recv { peer, combine, offload, tag, .. } = &st.action {
                    let Some((list, k)) = sent.get_mut(&(*peer, r as u32, *tag)).filter(|e| e.1 < e.0.len()) else {
                        return Err(FlowError::StepsNeverRan { never: 1, steps: 1, rank: r, step: i, what: st.action.describe() });
                    };
                    let at = list[*k];
                    *k += 1;
                    self.receive(r, i, at, *combine, *offload);
                }
            }
        }
        Ok(())
    }
}

fn message(r: u32, action: &Action) -> Option<(Message, u8)> {
    match action {
        Action::Send { peer, spans, tni, offload, .. } => {
            Some((Message { src: r, dst: *peer, bytes: total(spans) * ELEMENT_BYTES, tni: *tni, reduce: false, offload: *offload, recv_offload: false }, *tni))
        }
        _ => None,
    }
}

/// The rounds of `schedule`. A step's depth is the deepest of its
/// dependencies; a receive is one deeper than the send it matches; a send
/// is also one deeper than the send before it on the same send lane (a
/// TNI's DMA engine sends in order, so a pipeline's segments stay one round
/// apart, as they follow each other on the link). `lane(src, dst, tni)`
/// names the lane a message takes — the sender's node's TNI, shared by the
/// node's ranks — or `None` for a message between two ranks of one node,
/// which goes through memory. A message belongs to the round of its send's
/// depth; a copy's or work's time counts in the round of its depth (the
/// longest rank's sum). Refuses a schedule that breaks its own rules or
/// whose receives cannot all be matched; a rank's steps are taken in order,
/// so a receive listed before a send it does not depend on, whose own
/// send waits for that send, is refused too (the built-in workloads list
/// sends first).
pub fn levels(schedule: &Schedule, copy_bytes_per_s: f64, lane: &dyn Fn(u32, u32, u8) -> Option<u64>) -> Result<Leveled, FlowError> {
    schedule.validate()?;
    let p = schedule.programs.len();
    let mut out = Leveled { rounds: Vec::new(), message_of: schedule.programs.iter().map(|pr| vec![NO_MESSAGE; pr.steps.len()]).collect() };
    let mut depth: Vec<Vec<u32>> = schedule.programs.iter().map(|pr| vec![0; pr.steps.len()]).collect();
    let mut cursor = vec![0usize; p];
    // Per (sender, receiver, tag): its sends' rounds in order, and the
    // receives matched so far; a rank stopped at a receive whose send has
    // no round yet waits for it.
    let mut sent: HashMap<(u32, u32, u32), (Vec<(u32, u32)>, usize)> = HashMap::new();
    let mut waiting: HashMap<(u32, u32, u32), u32> = HashMap::new();
    let mut local: HashMap<(u32, u32), f64> = HashMap::new();
    let mut lane_round: HashMap<u64, u32> = HashMap::new();
    let mut todo: Vec<u32> = (0..p as u32).rev().collect();
    while let Some(r) = todo.pop() {
        let ru = r as usize;
        let steps = &schedule.programs[ru].steps;
        while cursor[ru] < steps.len() {
            let i = cursor[ru];
            let st = &steps[i];
            let d = st.deps.iter().map(|&k| depth[ru][k as usize]).max().unwrap_or(0);
            let at = match &st.action {
                Action::Send { peer, tag, .. } => {
                    let (x, tni) = message(r, &st.action).expect("a send");
                    let d = match lane(r, *peer, tni) {
                        Some(l) => {
                            let d = lane_round.get(&l).map_or(d, |&last| d.max(last + 1));
                            lane_round.insert(l, d);
                            d
                        }
                        None => d,
                    };
                    out.message_of[ru][i] = out.push(d as usize, x, 0.0);
                    let key = (r, *peer, *tag);
                    sent.entry(key).or_default().0.push(out.message_of[ru][i]);
                    if let Some(w) = waiting.remove(&key) {
                        todo.push(w);
                    }
                    d
                }
                Action::Recv { peer, tag, combine, offload, .. } => {
                    let key = (*peer, r, *tag);
                    let Some((list, matched)) = sent.get_mut(&key).filter(|e| e.1 < e.0.len()) else {
                        waiting.insert(key, r);
                        break;
                    };
                    let at = list[*matched];
                    *matched += 1;
                    out.receive(ru, i, at, *combine, *offload);
                    d.max(at.0 + 1)
                }
                Action::Copy(c) => {
                    *local.entry((d, r)).or_default() += (total(&c.from) * ELEMENT_BYTES) as f64 / copy_bytes_per_s;
                    d
                }
                Action::Work { ns } => {
                    *local.entry((d, r)).or_default() += *ns as f64 * 1e-9;
                    d
                }
            };
            depth[ru][i] = at;
            cursor[ru] += 1;
        }
    }
    if let Some(r) = (0..p).find(|&r| cursor[r] < schedule.programs[r].steps.len()) {
        let never = (0..p).map(|q| schedule.programs[q].steps.len() - cursor[q]).sum();
        let steps = schedule.programs.iter().map(|pr| pr.steps.len()).sum();
        let step = cursor[r];
        let what = schedule.programs[r].steps[step].action.describe();
        return Err(FlowError::StepsNeverRan { never, steps, rank: r, step, what });
    }
    for ((d, _), s) in local {
        let d = d as usize;
        if out.rounds.len() <= d {
            out.rounds.resize_with(d + 1, Round::default);
        }
        out.rounds[d].local_s = out.rounds[d].local_s.max(s);
    }
    Ok(out)
}

/// Open-loop traffic as rounds: each rank's k-th send in round k + 1,
/// every round `period_s` long at least (the sends' timer, whose first tick
/// comes one period after the start: round 0 is that wait; the timer's work
/// is the period, so not counted as local work).
pub fn by_send_order(schedule: &Schedule, period_s: f64) -> Result<Leveled, FlowError> {
    schedule.validate()?;
    let mut out = Leveled { rounds: vec![Round { min_s: period_s, ..Round::default() }], message_of: schedule.programs.iter().map(|pr| vec![NO_MESSAGE; pr.steps.len()]).collect() };
    for (r, pr) in schedule.programs.iter().enumerate() {
        let mut k = 1usize;
        for (i, st) in pr.steps.iter().enumerate() {
            if let Some((x, _)) = message(r as u32, &st.action) {
                out.message_of[r][i] = out.push(k, x, period_s);
                k += 1;
            }
        }
    }
    out.match_receives(schedule)?;
    Ok(out)
}

/// A job of the mix: its schedule and that schedule's rounds, from
/// `start_s` on, its ranks the machine's from `rank_offset` (its rank r is
/// the machine's r + offset).
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    pub schedule: &'a Schedule,
    pub leveled: &'a Leveled,
    pub start_s: f64,
    pub rank_offset: u32,
}

/// The jobs' times on the flow model in lockstep rounds.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct JobsTimed {
    /// Per job: its last step's end, seconds from the mix's start (its
    /// schedule run step by step, each message's transfer as long as in
    /// the lockstep).
    pub end_seconds: Vec<f64>,
    /// Per job: the end of its last round in the lockstep (every round
    /// waiting for its slowest message; usually later than `end_seconds`).
    pub lockstep_end_seconds: Vec<f64>,
    /// Rounds over every job.
    pub rounds: u64,
    /// Moments at which some job changed phase.
    pub events: u64,
    /// Max-min solves run, and sets found solved before.
    pub solves: u64,
    pub reused: u64,
    /// Most flows in one solve.
    pub largest_set: usize,
}

/// A route's parts: resources and share of the bytes; its router hops.
struct Route {
    parts: Vec<(Vec<u32>, f64)>,
    hops: u64,
}

/// Bytes of one message (a route part, or on an adaptive torus the whole
/// message over all its parts) draining at its rate.
#[derive(Clone, Copy)]
struct Pool {
    /// Its message in the round.
    msg: u32,
    route: u32,
    /// The part, or `ALL_PARTS`.
    part: u16,
    left: f64,
    wire: f64,
    rate: f64,
    /// When its last byte arrived.
    done_at: f64,
}

const ALL_PARTS: u16 = u16::MAX;

impl Pool {
    fn key(&self) -> u64 {
        (self.route as u64) << 16 | self.part as u64
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Before its first round, or between rounds for the minimum length.
    Waiting,
    Head,
    Transfer,
    Tail,
    Done,
}

/// A job going through its rounds in the lockstep.
struct JobRun {
    round: usize,
    phase: Phase,
    /// When the phase ends (a transfer's: at the current rates).
    until: f64,
    round_start: f64,
    transfer_start: f64,
    tail_s: f64,
    pools: Vec<Pool>,
    /// Per message of every round (rounds one after another): its transfer
    /// time, and its time after the last byte before the receive's
    /// overheads (router hops; between ranks of one node, its copy).
    transfer_s: Vec<f64>,
    flight_s: Vec<f64>,
    /// Where each round's messages start in those.
    first: Vec<usize>,
    end: f64,
}

/// Most pool keys the solved sets may keep together (8 bytes each).
const MEMO_KEYS: usize = 1 << 22;

/// Host costs, seconds and bytes per second.
#[derive(Clone, Copy)]
struct Costs {
    send_s: f64,
    recv_s: f64,
    hop_s: f64,
    reduce_bps: f64,
    copy_bps: f64,
}

impl Costs {
    fn of(m: &FlowMachine) -> Self {
        let t = &m.timing;
        let cycle_s = t.cycle_ns * 1e-9;
        Costs {
            send_s: t.send_overhead_cycles as f64 * cycle_s,
            recv_s: t.recv_overhead_cycles as f64 * cycle_s,
            hop_s: m.hop_latency_cycles as f64 * cycle_s,
            reduce_bps: t.reduce_bytes_per_cycle / cycle_s,
            copy_bps: t.copy_bytes_per_cycle / cycle_s,
        }
    }

    /// A receive's overheads: host and reduction (none offloaded).
    fn receive(&self, x: &Message) -> f64 {
        if x.recv_offload {
            0.0
        } else {
            self.recv_s + if x.reduce { x.bytes as f64 / self.reduce_bps } else { 0.0 }
        }
    }
}

/// The times of `jobs` sharing machine `m` (see the module docs).
pub fn jobs_time(m: &FlowMachine, jobs: &[Job], seed: u64) -> Result<JobsTimed, FlowError> {
    let ranks = m.node_of_rank.len() as u64;
    for j in jobs {
        if j.schedule.programs.len() as u64 + j.rank_offset as u64 > ranks {
            return Err(FlowError::RankBeyond { ranks: ranks as u32 });
        }
    }
    let costs = Costs::of(m);
    let mut runs = lockstep(m, jobs, seed, &costs)?;
    let mut out = std::mem::take(&mut runs.1);
    for (k, (j, run)) in jobs.iter().zip(&runs.0).enumerate() {
        out.lockstep_end_seconds[k] = run.end;
        out.end_seconds[k] = step_by_step(m, j, run, &costs)?;
    }
    Ok(out)
}

/// Pass 1: the jobs' rounds side by side (module docs).
fn lockstep(m: &FlowMachine, jobs: &[Job], seed: u64, c: &Costs) -> Result<(Vec<JobRun>, JobsTimed), FlowError> {
    let net = m.net;
    let balanced = net.balanced();
    let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
    let mut routes: Vec<Route> = Vec::new();
    let mut route_of: HashMap<(u32, u32, u8), u32> = HashMap::new();
    let mut out = JobsTimed {
        end_seconds: vec![0.0; jobs.len()],
        lockstep_end_seconds: vec![0.0; jobs.len()],
        rounds: jobs.iter().map(|j| j.leveled.rounds.len() as u64).sum(),
        ..JobsTimed::default()
    };
    let mut run: Vec<JobRun> = jobs
        .iter()
        .map(|j| {
            let mut first = Vec::with_capacity(j.leveled.rounds.len() + 1);
            let mut n = 0usize;
            for r in &j.leveled.rounds {
                first.push(n);
                n += r.messages.len();
            }
            first.push(n);
            JobRun {
                round: 0,
                phase: Phase::Waiting,
                until: j.start_s,
                round_start: j.start_s,
                transfer_start: j.start_s,
                tail_s: 0.0,
                pools: Vec::new(),
                transfer_s: vec![0.0; n],
                flight_s: vec![0.0; n],
                first,
                end: j.start_s,
            }
        })
        .collect();
    let mut solver = MaxMin::new();
    let mut rates = Vec::new();
    let mut memo: HashMap<Vec<u64>, Vec<f64>> = HashMap::new();
    let mut memo_keys = 0usize;
    let mut now = 0.0f64;
    let mut dirty = false;
    let mut left_s: Vec<f64> = Vec::new();
    loop {
        if m.interrupt.stopped() {
            return Err(FlowError::Interrupted);
        }
        // Phase changes due now (a change may make the next one due too).
        let mut changed = false;
        for (k, j) in run.iter_mut().enumerate() {
            while j.phase != Phase::Done && j.until <= now {
                changed = true;
                match j.phase {
                    Phase::Waiting => {
                        let Some(round) = jobs[k].leveled.rounds.get(j.round) else {
                            j.phase = Phase::Done;
                            j.end = now;
                            break;
                        };
                        // The round starts: its head, and its messages' pools.
                        let (mut head, mut tail) = (0.0f64, 0.0f64);
                        let off = jobs[k].rank_offset as usize;
                        let base = j.first[j.round];
                        j.pools.clear();
                        for (i, x) in round.messages.iter().enumerate() {
                            let (a, b) = (m.node_of_rank[x.src as usize + off], m.node_of_rank[x.dst as usize + off]);
                            head = head.max(if x.offload { 0.0 } else { c.send_s });
                            if a == b {
                                j.flight_s[base + i] = x.bytes as f64 / c.copy_bps;
                                tail = tail.max(j.flight_s[base + i] + c.receive(x));
                                continue;
                            }
                            let id = *route_of.entry((a, b, x.tni)).or_insert_with(|| {
                                let parts = net.routes(a, b, x.tni, &mut rng);
                                let hops = parts.iter().map(|r| r.1).max().unwrap_or(0);
                                routes.push(Route { parts: parts.into_iter().map(|(l, _, s)| (l, s)).collect(), hops });
                                routes.len() as u32 - 1
                            });
                            let route = &routes[id as usize];
                            j.flight_s[base + i] = route.hops as f64 * c.hop_s;
                            tail = tail.max(j.flight_s[base + i] + c.receive(x));
                            let wire = m.wire_bytes(x.bytes) as f64;
                            let msg = i as u32;
                            if balanced {
                                j.pools.push(Pool { msg, route: id, part: ALL_PARTS, left: wire, wire, rate: 0.0, done_at: 0.0 });
                            } else {
                                for (q, (_, share)) in route.parts.iter().enumerate() {
                                    j.pools.push(Pool { msg, route: id, part: q as u16, left: wire * share, wire: wire * share, rate: 0.0, done_at: 0.0 });
                                }
                            }
                        }
                        j.round_start = now;
                        j.tail_s = tail;
                        j.phase = Phase::Head;
                        j.until = now + round.local_s + head;
                    }
                    Phase::Head if !j.pools.is_empty() => {
                        j.phase = Phase::Transfer;
                        j.transfer_start = now;
                        j.until = f64::INFINITY;
                        dirty = true;
                    }
                    Phase::Head | Phase::Transfer => {
                        if j.phase == Phase::Transfer {
                            dirty = true;
                        }
                        let base = j.first[j.round];
                        for p in &j.pools {
                            let t = &mut j.transfer_s[base + p.msg as usize];
                            *t = t.max(p.done_at - j.transfer_start);
                        }
                        j.pools.clear();
                        j.phase = Phase::Tail;
                        j.until = now + j.tail_s;
                    }
                    Phase::Tail => {
                        let min_s = jobs[k].leveled.rounds[j.round].min_s;
                        j.round += 1;
                        j.phase = Phase::Waiting;
                        j.until = now.max(j.round_start + min_s);
                    }
                    Phase::Done => unreachable!(),
                }
            }
        }
        if changed {
            out.events += 1;
        }
        if dirty {
            dirty = false;
            solve_rates(&mut run, &routes, &net.capacity, &mut solver, &mut rates, &mut memo, &mut memo_keys, &mut out, m.interrupt)?;
        }
        // The next phase change: a transfer ends with its slowest pool;
        // before that, the rates are brought up to date when half of its
        // live pools (route parts, or messages on an adaptive torus) have
        // finished.
        let mut next = f64::INFINITY;
        for j in &mut run {
            if j.phase == Phase::Transfer {
                left_s.clear();
                left_s.extend(j.pools.iter().filter(|p| p.left > 0.0).map(|p| if p.rate > 0.0 { p.left / p.rate } else { f64::INFINITY }));
                let slowest = left_s.iter().copied().fold(0.0, f64::max);
                j.until = now + slowest;
                if left_s.len() > 1 {
                    let half = left_s.len() / 2;
                    let (_, median, _) = left_s.select_nth_unstable_by(half - 1, f64::total_cmp);
                    if *median < slowest && now + *median > now {
                        next = next.min(now + *median);
                    }
                }
            }
            if j.phase != Phase::Done {
                next = next.min(j.until);
            }
        }
        if !next.is_finite() {
            if let Some(k) = run.iter().position(|j| j.phase != Phase::Done) {
                // A flow without a rate: a route over a resource of no capacity.
                let stuck = run[k].pools.iter().find(|p| p.left > 0.0 && p.rate <= 0.0).map_or(0, |p| p.msg as usize);
                let x = jobs[k].leveled.rounds[run[k].round].messages.get(stuck).copied();
                let r = x.map_or(0, |x| x.src + jobs[k].rank_offset);
                let what = format!("a message to rank {} in round {} whose route has no capacity", x.map_or(0, |x| x.dst + jobs[k].rank_offset), run[k].round);
                return Err(FlowError::StepsNeverRan { never: 1, steps: 1, rank: r as usize, step: 0, what });
            }
            break;
        }
        // Drain to `next`; pools that emptied leave at the next solve.
        let dt = next - now;
        for j in &mut run {
            if j.phase != Phase::Transfer {
                continue;
            }
            let due = j.until <= next;
            for p in &mut j.pools {
                if p.left > 0.0 {
                    let at = if p.rate > 0.0 { now + p.left / p.rate } else { next };
                    p.left -= p.rate * dt;
                    // (`at <= next`: a time too close to `now` to step to
                    // would otherwise leave a sliver that never drains.)
                    if due || at <= next || p.left <= 1e-9 * p.wire {
                        p.left = 0.0;
                        p.done_at = at.min(next);
                        dirty = true;
                    }
                }
            }
        }
        now = next;
    }
    Ok((run, out))
}

/// Rates of every pool in a transfer phase with bytes left: the max-min
/// allocation of their flows, taken from `memo` when the same set (by
/// routes and parts) was solved before.
#[allow(clippy::too_many_arguments)]
fn solve_rates(
    run: &mut [JobRun],
    routes: &[Route],
    capacity: &[f64],
    solver: &mut MaxMin,
    rates: &mut Vec<f64>,
    memo: &mut HashMap<Vec<u64>, Vec<f64>>,
    memo_keys: &mut usize,
    out: &mut JobsTimed,
    interrupt: &dyn tofusim_flow::Stop,
) -> Result<(), FlowError> {
    // Live pools in key order (pools of one key get one rate: identical
    // routes share alike under max-min).
    let mut live: Vec<(u64, u32, u32)> = Vec::new();
    for (k, j) in run.iter().enumerate() {
        if j.phase == Phase::Transfer {
            for (i, p) in j.pools.iter().enumerate() {
                if p.left > 0.0 {
                    live.push((p.key(), k as u32, i as u32));
                }
            }
        }
    }
    if live.is_empty() {
        return Ok(());
    }
    live.sort_unstable();
    let keys: Vec<u64> = live.iter().map(|x| x.0).collect();
    let parts_of = |key: u64| {
        let route = &routes[(key >> 16) as usize];
        let part = (key & 0xffff) as u16;
        if part == ALL_PARTS { 0..route.parts.len() } else { part as usize..part as usize + 1 }
    };
    let pool_rates = match memo.get(&keys) {
        Some(r) => {
            out.reused += 1;
            r.clone()
        }
        None => {
            let mut table = FlowTable::new();
            for &key in &keys {
                let route = &routes[(key >> 16) as usize];
                for q in parts_of(key) {
                    table.push(&route.parts[q].0, f64::INFINITY);
                }
            }
            out.solves += 1;
            out.largest_set = out.largest_set.max(table.len());
            if !solver.solve_until(capacity, &table, rates, interrupt) {
                return Err(FlowError::Interrupted);
            }
            let mut at = 0usize;
            let pool_rates: Vec<f64> = keys
                .iter()
                .map(|&key| {
                    let n = parts_of(key).len();
                    let r = rates[at..at + n].iter().sum();
                    at += n;
                    r
                })
                .collect();
            if *memo_keys + keys.len() <= MEMO_KEYS {
                *memo_keys += keys.len();
                memo.insert(keys, pool_rates.clone());
            }
            pool_rates
        }
    };
    for ((_, k, i), r) in live.iter().zip(pool_rates) {
        run[*k as usize].pools[*i as usize].rate = r;
    }
    Ok(())
}

/// An event of pass 2, in time order (ties in the order pushed).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A step's dependencies are met (flat step number).
    Ready(u32),
    /// A send's message is handed to its TNI (flat step number).
    Submit(u32),
}

/// Pass 2's events: (time bits, order pushed, event), earliest first.
type Events = BinaryHeap<Reverse<(u64, u64, Event)>>;

/// Pass 2: job `j`'s schedule step by step, every message's transfer as
/// long as `run` measured it. Returns its last step's end, seconds.
fn step_by_step(m: &FlowMachine, j: &Job, run: &JobRun, c: &Costs) -> Result<f64, FlowError> {
    let s = j.schedule;
    let off = j.rank_offset as usize;
    let mut base = vec![0usize];
    for p in &s.programs {
        base.push(base.last().copied().unwrap_or(0) + p.steps.len());
    }
    let n = *base.last().unwrap_or(&0);
    let flat_message = |r: usize, i: usize| {
        let (round, k) = j.leveled.message_of[r][i];
        run.first[round as usize] + k as usize
    };
    // Per step: unmet dependencies, ready time, finish; its dependants.
    let mut unmet = vec![0u32; n];
    let mut ready = vec![j.start_s; n];
    let mut finish = vec![f64::NAN; n];
    let mut first_dep = vec![0usize; n + 1];
    for (r, p) in s.programs.iter().enumerate() {
        for (i, st) in p.steps.iter().enumerate() {
            unmet[base[r] + i] = st.deps.len() as u32;
            for &d in &st.deps {
                first_dep[base[r] + d as usize + 1] += 1;
            }
        }
    }
    for i in 0..n {
        first_dep[i + 1] += first_dep[i];
    }
    let mut fill = first_dep.clone();
    let mut dependants = vec![0u32; first_dep[n]];
    // Per message: its receive step, and when it arrived (NaN: not yet).
    let messages = run.transfer_s.len();
    let mut recv_step = vec![u32::MAX; messages];
    let mut arrived = vec![f64::NAN; messages];
    for (r, p) in s.programs.iter().enumerate() {
        for (i, st) in p.steps.iter().enumerate() {
            for &d in &st.deps {
                let k = base[r] + d as usize;
                dependants[fill[k]] = (base[r] + i) as u32;
                fill[k] += 1;
            }
            if matches!(st.action, Action::Recv { .. }) {
                recv_step[flat_message(r, i)] = (base[r] + i) as u32;
            }
        }
    }
    let rank_of = |flat: usize| base.partition_point(|&b| b <= flat) - 1;
    let mut lane_free: HashMap<usize, f64> = HashMap::new();
    let mut events: Events = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |events: &mut Events, t: f64, e: Event| {
        seq += 1;
        events.push(Reverse((t.max(0.0).to_bits(), seq, e)));
    };
    for (i, &u) in unmet.iter().enumerate() {
        if u == 0 {
            push(&mut events, j.start_s, Event::Ready(i as u32));
        }
    }
    let mut done = 0usize;
    // A step finished at `f`: its dependants are released then.
    let complete = |flat: usize, f: f64, finish: &mut Vec<f64>, unmet: &mut Vec<u32>, ready: &mut Vec<f64>, events: &mut Events, push: &mut dyn FnMut(&mut Events, f64, Event)| {
        finish[flat] = f;
        for &d in &dependants[first_dep[flat]..first_dep[flat + 1]] {
            let d = d as usize;
            ready[d] = ready[d].max(f);
            unmet[d] -= 1;
            if unmet[d] == 0 {
                push(events, ready[d], Event::Ready(d as u32));
            }
        }
    };
    while let Some(Reverse((bits, _, ev))) = events.pop() {
        let now = f64::from_bits(bits);
        match ev {
            Event::Ready(flat) => {
                let flat = flat as usize;
                if !finish[flat].is_nan() {
                    continue;
                }
                let r = rank_of(flat);
                let i = flat - base[r];
                let t = ready[flat];
                match &s.programs[r].steps[i].action {
                    Action::Send { offload, .. } => {
                        let at = t + if *offload { 0.0 } else { c.send_s };
                        push(&mut events, at, Event::Submit(flat as u32));
                        done += 1;
                        complete(flat, at, &mut finish, &mut unmet, &mut ready, &mut events, &mut push);
                    }
                    Action::Recv { .. } => {
                        let msg = flat_message(r, i);
                        if !arrived[msg].is_nan() {
                            let x = message_at(j, run, msg);
                            done += 1;
                            complete(flat, t.max(arrived[msg]) + c.receive(&x), &mut finish, &mut unmet, &mut ready, &mut events, &mut push);
                        }
                    }
                    Action::Copy(cp) => {
                        done += 1;
                        complete(flat, t + (total(&cp.from) * ELEMENT_BYTES) as f64 / c.copy_bps, &mut finish, &mut unmet, &mut ready, &mut events, &mut push);
                    }
                    Action::Work { ns } => {
                        done += 1;
                        complete(flat, t + *ns as f64 * 1e-9, &mut finish, &mut unmet, &mut ready, &mut events, &mut push);
                    }
                }
            }
            Event::Submit(flat) => {
                let flat = flat as usize;
                let r = rank_of(flat);
                let msg = flat_message(r, flat - base[r]);
                let x = message_at(j, run, msg);
                let (a, b) = (m.node_of_rank[x.src as usize + off], m.node_of_rank[x.dst as usize + off]);
                // A TNI sends its messages in order; between ranks of one
                // node the message is a copy in memory.
                let arrive = if a == b {
                    now + run.flight_s[msg]
                } else {
                    let lane = m.net.lane(a, x.tni);
                    let free = lane_free.entry(lane).or_insert(0.0);
                    let start = free.max(now);
                    *free = start + run.transfer_s[msg];
                    *free + run.flight_s[msg]
                };
                arrived[msg] = arrive;
                let rs = recv_step[msg] as usize;
                if unmet[rs] == 0 && finish[rs].is_nan() {
                    let t = ready[rs].max(arrive) + c.receive(&x);
                    done += 1;
                    complete(rs, t, &mut finish, &mut unmet, &mut ready, &mut events, &mut push);
                }
            }
        }
    }
    if done != n {
        let first = finish.iter().position(|f| f.is_nan()).unwrap_or(0);
        let r = rank_of(first);
        return Err(FlowError::StepsNeverRan { never: n - done, steps: n, rank: r, step: first - base[r], what: s.programs[r].steps[first - base[r]].action.describe() });
    }
    Ok(finish.iter().copied().fold(j.start_s, f64::max))
}

/// Message `msg` (flat over the rounds) of job `j`.
fn message_at(j: &Job, run: &JobRun, msg: usize) -> Message {
    let round = run.first.partition_point(|&f| f <= msg) - 1;
    j.leveled.rounds[round].messages[msg - run.first[round]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Span;
    use crate::Collective;

    /// Rank 0 sends to 1, then 1 sends back after its receive; 2 works.
    fn ping() -> Schedule {
        let mut s = Schedule::new(Collective::Transfers, "ping", 3, 4);
        s.send(0, 1, vec![Span::new(0, 4)], 0, &[]);
        let r = s.recv(1, 0, vec![Span::new(0, 4)], Combine::Sum, &[]);
        s.send(1, 0, vec![Span::new(0, 2)], 1, &[r]);
        s.recv(0, 1, vec![Span::new(0, 2)], Combine::Replace, &[]);
        s.work(2, 500, &[]);
        s
    }

    #[test]
    fn a_receive_is_one_round_deeper_than_its_send() {
        let l = levels(&ping(), 1e9, &|r, _, t| Some(r as u64 * 8 + t as u64)).unwrap();
        assert_eq!(l.rounds.len(), 2);
        assert_eq!(l.rounds[0].messages, vec![Message { src: 0, dst: 1, bytes: 32, tni: 0, reduce: true, offload: false, recv_offload: false }]);
        assert_eq!(l.rounds[1].messages, vec![Message { src: 1, dst: 0, bytes: 16, tni: 1, reduce: false, offload: false, recv_offload: false }]);
        assert!((l.rounds[0].local_s - 500e-9).abs() < 1e-15);
        assert_eq!(l.rounds[1].local_s, 0.0);
        // Sends and receives name their message.
        assert_eq!(l.message_of[0], vec![(0, 0), (1, 0)]);
        assert_eq!(l.message_of[1], vec![(0, 0), (1, 0)]);
        assert_eq!(l.message_of[2], vec![NO_MESSAGE]);
    }

    #[test]
    fn a_tnis_sends_go_one_round_apart() {
        let mut s = Schedule::new(Collective::Transfers, "t", 2, 1);
        for tni in [0, 0, 1] {
            s.send(0, 1, vec![Span::new(0, 1)], tni, &[]);
            s.recv(1, 0, vec![Span::new(0, 1)], Combine::Replace, &[]);
        }
        let per_rank = levels(&s, 1e9, &|r, _, t| Some(r as u64 * 8 + t as u64)).unwrap();
        assert_eq!(per_rank.rounds.iter().map(|r| r.messages.len()).collect::<Vec<_>>(), vec![2, 1]);
        // Through memory (two ranks of one node): no lane, no order.
        let memory = levels(&s, 1e9, &|_, _, _| None).unwrap();
        assert_eq!(memory.rounds.iter().map(|r| r.messages.len()).collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn an_unmatched_receive_is_refused() {
        let mut s = Schedule::new(Collective::Transfers, "t", 2, 1);
        s.recv(0, 1, vec![Span::new(0, 1)], Combine::Replace, &[]);
        assert!(levels(&s, 1e9, &|_, _, _| None).is_err());
    }

    #[test]
    fn open_loop_sends_take_one_round_each() {
        let mut s = Schedule::new(Collective::Transfers, "bg", 2, 1);
        for _ in 0..3 {
            s.send(0, 1, vec![Span::new(0, 1)], 0, &[]);
            s.recv(1, 0, vec![Span::new(0, 1)], Combine::Replace, &[]);
        }
        let l = by_send_order(&s, 2e-6).unwrap();
        // Round 0 waits for the timer's first tick.
        assert_eq!(l.rounds.iter().map(|r| r.messages.len()).collect::<Vec<_>>(), vec![0, 1, 1, 1]);
        assert!(l.rounds.iter().all(|r| r.min_s == 2e-6));
        assert_eq!(l.message_of[1], vec![(1, 0), (2, 0), (3, 0)]);
    }
}
