//! Collectives in lockstep rounds on the flow model: the full-machine path.
//!
//! A [`Rounds`] is a collective as streams of
//! messages in consecutive rounds. Between two rounds at which a stream
//! starts or stops, every round carries the same set of messages, so the
//! max-min allocation of that set is solved once and reused for the whole
//! stretch: a ring allreduce over 82,944 nodes is two solves, not 1.4 × 10¹⁰
//! message events. Each message is a flow on the routes and resources of
//! [`tofusim_flow::FlowNet`] (links at their rates, each node's injection, each TNI lane);
//! its time is its transfer at the allocated rate plus the latency terms of
//! the packet-engine executor (send overhead, hops × hop latency, receive
//! overhead, reduction of a summing receive).
//!
//! Ranks progress on their own, as in the schedule: a rank sends its
//! message of round *j* + 1 once its receives of round *j* are done, so its
//! ready time is the latest of its own and, over its incoming messages,
//! the sender's ready time plus the message's cost (transfer at the
//! allocated rate, plus latencies). A stretch of identical rounds is
//! applied in one go: for a permutation (a ring) by the longest path
//! around each cycle — the ready time after *k* rounds is the best sum of
//! *k* consecutive costs ending at the rank, found with a sliding-window
//! maximum — and otherwise round by round (or, beyond 3 × 10⁸ message
//! steps, as a bulk-synchronous stretch whose rounds each last their
//! slowest message: [`RoundsTimed::bulk_synchronous_fallback`]). The
//! bulk-synchronous time of every round is also reported as an upper bound
//! ([`RoundsTimed::lockstep_seconds`]).
//!
//! In a pipeline ([`Rounds::pipelined`], Trinaryx3's segments) a stream's
//! messages follow each other as fast as their transfers allow; the time
//! is the sum over rounds of each round's slowest transfer, plus the
//! latencies along the chain of stages, once per stage (the worst of that
//! stage).
//!
//! Speed: when every message of the collective is one hop (Trinaryx3 over
//! neighbouring ranks), the flows of different source routers share no
//! resource, so each router's flows are solved apart, once per distinct
//! local situation (a cache keyed by the router's flows and capacities),
//! and only the routers a change touches are solved again.

use std::collections::{BTreeMap, HashMap};

use rand::SeedableRng;
use serde::Serialize;
use tofusim_flow::{Flow, MaxMin};

use crate::exec::flow::FlowMachine;
use crate::{Rounds, Stream};

/// A collective's rounds timed on the flow model.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RoundsTimed {
    pub time_seconds: f64,
    /// Every round lasting its slowest message (an upper bound), split into
    /// transfers at their shared rates and latency terms; and the local copies.
    pub lockstep_seconds: f64,
    pub transfer_seconds: f64,
    pub latency_seconds: f64,
    pub copy_seconds: f64,
    /// With several ranks per node, the rounds run among one leader per
    /// node: this is each node's fan-in to its leader and fan-out from it
    /// through the node's memory, before and after the rounds (included
    /// in `time_seconds`; 0 with a rank per node).
    pub node_seconds: f64,
    /// The first rank's and the mean rank's finish, seconds (the last
    /// rank's is `time_seconds`); a pipelined form ends every rank with
    /// its drain, so these equal it there. Among node leaders: over the
    /// nodes, each node's last rank (its leader's finish and the node's
    /// fan-in and fan-out).
    pub rank_min_seconds: f64,
    pub rank_mean_seconds: f64,
    /// Whether some stretch was too long to follow rank by rank (beyond
    /// 3 × 10⁸ message steps) and was taken in one go: a permutation at its
    /// cycle mean, anything else bulk-synchronous.
    pub stretches_estimated: bool,
    pub rounds: u64,
    pub messages: u64,
    /// Stretches of identical rounds, and max-min solves run (whole rounds,
    /// or one router's flows on the one-hop path; cached ones not counted).
    pub stretches: u64,
    pub solves: u64,
    /// Stretches whose set of routes was solved before (their rates taken
    /// from the memo, bit for bit what a new solve gives; the one-hop
    /// path's cache of routers of one shape is not counted here).
    pub reused: u64,
    /// Most messages in one round.
    pub largest_round: usize,
    /// Whether every message was one hop (the per-router path).
    pub one_hop: bool,
}

/// What a message of a stream costs, given its route.
struct StreamCost {
    /// Route parts: resources (lane, injection, links) and share of the bytes.
    parts: Vec<(Vec<u32>, f64)>,
    wire: f64,
    /// Send overhead + hops × hop latency + receive overhead + reduction, s.
    latency_s: f64,
    /// Send overhead alone, s.
    send_s: f64,
}

struct Costing<'a, 'm> {
    m: &'a FlowMachine<'m>,
    rng: tofusim_routing::Rng,
    send_s: f64,
    recv_s: f64,
    hop_s: f64,
    reduce_bps: f64,
}

impl Costing<'_, '_> {
    fn cost(&mut self, st: &Stream) -> StreamCost {
        let (a, b) = (self.m.node_of_rank[st.src as usize], self.m.node_of_rank[st.dst as usize]);
        let routes = self.m.net.routes(a, b, st.tni, &mut self.rng);
        let hops = routes.iter().map(|r| r.1).max().unwrap_or(0) as f64;
        let reduce = if st.reduce { st.bytes as f64 / self.reduce_bps } else { 0.0 };
        StreamCost {
            parts: routes.into_iter().map(|(links, _, share)| (links, share)).collect(),
            wire: self.m.wire_bytes(st.bytes) as f64,
            latency_s: self.send_s + hops * self.hop_s + self.recv_s + reduce,
            send_s: self.send_s,
        }
    }
}

/// The transfer time of every stream of `set` sharing the network, in
/// `set`'s order: its bytes over the sum of its route parts' max-min rates
/// when they are `balanced` (adaptive tori), else its slowest part with
/// its fixed share.
fn solve(capacity: &[f64], set: &[&StreamCost], balanced: bool, solver: &mut MaxMin, flows: &mut Vec<Flow>, rates: &mut Vec<f64>) -> Vec<f64> {
    flows_of(set, flows);
    solver.solve(capacity, flows, rates);
    times(set, rates, balanced)
}

/// The flows of `set`'s route parts, in order, into `flows`.
fn flows_of(set: &[&StreamCost], flows: &mut Vec<Flow>) {
    flows.clear();
    for c in set {
        for (links, _) in &c.parts {
            flows.push(Flow { links: links.clone(), cap: f64::INFINITY });
        }
    }
}

/// The rates of `set`'s route parts, in order, from `memo` when a set of
/// the same routes in the same order was solved before (max-min rates
/// depend on the routes alone, not on the bytes: Rabenseifner's halving and
/// doubling rounds pair the same ranks; the solver is deterministic, so a
/// reused solution is the one a new solve would give, bit for bit).
fn memo_rates(capacity: &[f64], set: &[&StreamCost], solver: &mut MaxMin, flows: &mut Vec<Flow>, memo: &mut RatesMemo) -> Vec<f64> {
    // Resource ids stay below the two separators.
    debug_assert!(capacity.len() < (u32::MAX - 1) as usize);
    let mut key = Vec::with_capacity(set.len() * 8);
    for c in set {
        for (links, _) in &c.parts {
            key.extend_from_slice(links);
            key.push(u32::MAX);
        }
        key.push(u32::MAX - 1);
    }
    if let Some(r) = memo.solved.get(&key) {
        memo.reused += 1;
        return r.clone();
    }
    flows_of(set, flows);
    let mut rates = Vec::new();
    solver.solve(capacity, flows, &mut rates);
    // (Route entries and rates, 4 and 8 bytes, counted together.)
    if memo.kept + key.len() + 2 * rates.len() <= MEMO_LINKS {
        memo.kept += key.len() + 2 * rates.len();
        memo.solved.insert(key, rates.clone());
    }
    rates
}

/// Sets of flows solved before (see [`memo_rates`]), at most
/// [`MEMO_LINKS`] words together (a route entry one, a rate two).
#[derive(Default)]
struct RatesMemo {
    solved: HashMap<Vec<u32>, Vec<f64>>,
    kept: usize,
    reused: u64,
}

const MEMO_LINKS: usize = 1 << 25;

/// Each stream's transfer time from its parts' `rates` (see [`solve`]).
fn times(set: &[&StreamCost], rates: &[f64], balanced: bool) -> Vec<f64> {
    let mut k = 0;
    let mut out = Vec::with_capacity(set.len());
    for c in set {
        let mut slowest = 0.0f64;
        let mut sum = 0.0f64;
        for (_, share) in &c.parts {
            let r = rates[k];
            k += 1;
            sum += r;
            slowest = slowest.max(if r > 0.0 { c.wire * share / r } else { f64::INFINITY });
        }
        out.push(if balanced { if sum > 0.0 { c.wire / sum } else { f64::INFINITY } } else { slowest });
    }
    out
}

/// One message of a round: sender, receiver, its cost to the receiver
/// (latencies and transfer) and to the sender's send lane (send overhead
/// and transfer: the lane sends its messages one after another).
#[derive(Clone, Copy, Debug)]
struct RoundMsg {
    src: u32,
    dst: u32,
    cost: f64,
    lane: f64,
}

/// Ranks' ready times as stretches of rounds go by (see the module docs).
struct Ready {
    at: Vec<f64>,
    /// Most message steps a stretch is followed round by round.
    budget: u64,
    /// Stretches taken in one go: by their cycle means, or bulk-synchronous.
    estimated: bool,
}

impl Ready {
    /// `len` rounds of `msgs`.
    fn stretch(&mut self, msgs: &[RoundMsg], len: u64) {
        if msgs.len() as u64 * len <= self.budget {
            for _ in 0..len {
                self.step(msgs);
            }
            return;
        }
        self.estimated = true;
        match permutation_cycles(msgs) {
            Some(cycles) => cycles.iter().for_each(|c| self.paced(c, msgs, len)),
            None => {
                // Bulk-synchronous: every round waits for its slowest message.
                let start = msgs.iter().map(|m| self.at[m.src as usize]).fold(0.0, f64::max);
                let round = msgs.iter().map(|m| m.cost).fold(0.0, f64::max);
                for m in msgs {
                    for r in [m.src, m.dst] {
                        self.at[r as usize] = self.at[r as usize].max(start + round * len as f64);
                    }
                }
            }
        }
    }

    /// One round: a message leaves at its sender's ready time; the sender
    /// may send again once its lane is free, the receiver once it arrived.
    fn step(&mut self, msgs: &[RoundMsg]) {
        let updates: Vec<(u32, f64)> = msgs
            .iter()
            .flat_map(|m| {
                let t = self.at[m.src as usize];
                [(m.dst, t + m.cost), (m.src, t + m.lane)]
            })
            .collect();
        for (r, t) in updates {
            let x = &mut self.at[r as usize];
            *x = x.max(t);
        }
    }

    /// `k` rounds around cycle `c` of a permutation, in one go: the ring
    /// advances at its max-plus cycle mean λ — the slowest lane (a sender
    /// that cannot keep up paces everybody) or the mean cost around the
    /// cycle — and the last round adds its slowest message.
    fn paced(&mut self, c: &[usize], msgs: &[RoundMsg], k: u64) {
        let lane = c.iter().map(|&i| msgs[i].lane).fold(0.0, f64::max);
        let mean = c.iter().map(|&i| msgs[i].cost).sum::<f64>() / c.len() as f64;
        let slowest = c.iter().map(|&i| msgs[i].cost).fold(0.0, f64::max);
        let start = c.iter().map(|&i| self.at[msgs[i].src as usize]).fold(0.0, f64::max);
        let end = start + (k - 1) as f64 * lane.max(mean) + slowest;
        for &i in c {
            let r = &mut self.at[msgs[i].dst as usize];
            *r = r.max(end);
        }
    }
}

/// The cycles of `msgs` when they form a permutation of the ranks they
/// touch (every rank sends one and receives one message): each cycle as
/// the message indices in order around it.
fn permutation_cycles(msgs: &[RoundMsg]) -> Option<Vec<Vec<usize>>> {
    let mut from: HashMap<u32, usize> = HashMap::with_capacity(msgs.len());
    let mut into: HashMap<u32, usize> = HashMap::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        if from.insert(m.src, i).is_some() || into.insert(m.dst, i).is_some() {
            return None;
        }
    }
    if from.keys().any(|s| !into.contains_key(s)) {
        return None;
    }
    let mut seen = vec![false; msgs.len()];
    let mut cycles = Vec::new();
    for start in 0..msgs.len() {
        if seen[start] {
            continue;
        }
        let mut c = Vec::new();
        let mut i = start;
        while !seen[i] {
            seen[i] = true;
            c.push(i);
            i = from[&msgs[i].dst];
        }
        cycles.push(c);
    }
    Some(cycles)
}

/// Whether [`rounds_time_with`] reuses solutions: a stretch of identical
/// rounds solved once, a set of routes solved before taken from the memo
/// (`Yes`, what [`rounds_time`] does); or every round solved afresh (`No`:
/// the reference the reuse is tested against, bit for bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reuse {
    Yes,
    No,
}

/// Times `rounds` over the ranks of machine `m` on the flow model.
/// Stopped by the machine's interrupt: `Err(FlowError::Interrupted)`.
pub fn rounds_time(m: &FlowMachine, rounds: &Rounds, seed: u64) -> Result<RoundsTimed, super::flow::FlowError> {
    rounds_time_with(m, rounds, seed, Reuse::Yes)
}

/// [`rounds_time`], reusing solutions or not.
pub fn rounds_time_with(m: &FlowMachine, rounds: &Rounds, seed: u64, reuse: Reuse) -> Result<RoundsTimed, super::flow::FlowError> {
    let net = m.net;
    let timing = &m.timing;
    let cycle_s = timing.cycle_ns * 1e-9;
    let mut costing = Costing {
        m,
        rng: tofusim_routing::Rng::seed_from_u64(seed),
        send_s: timing.send_overhead_cycles as f64 * cycle_s,
        recv_s: timing.recv_overhead_cycles as f64 * cycle_s,
        hop_s: m.hop_latency_cycles as f64 * cycle_s,
        reduce_bps: timing.reduce_bytes_per_cycle / cycle_s,
    };
    let copy_seconds = (rounds.copy_bytes_before + rounds.copy_bytes_after) as f64 / (timing.copy_bytes_per_cycle / cycle_s);
    let npr = net.npr;
    let router_of = |rank: u32| m.node_of_rank[rank as usize] / npr;
    let one_hop = !net.detours() && rounds.streams.iter().all(|st| net.routing.distance(router_of(st.src), router_of(st.dst)) <= 1);
    // Starts and ends of streams, by round.
    let mut changes: Vec<(u64, u32)> = Vec::with_capacity(2 * rounds.streams.len());
    for (i, st) in rounds.streams.iter().enumerate() {
        changes.push((st.first, i as u32));
        changes.push((st.first + st.count, i as u32));
    }
    changes.sort_unstable();
    let capacity = net.capacity.clone();
    let balanced = net.balanced();
    let mut out = RoundsTimed {
        time_seconds: 0.0,
        lockstep_seconds: 0.0,
        stretches_estimated: false,
        transfer_seconds: 0.0,
        latency_seconds: 0.0,
        copy_seconds,
        node_seconds: 0.0,
        rank_min_seconds: 0.0,
        rank_mean_seconds: 0.0,
        rounds: rounds.rounds(),
        messages: rounds.messages(),
        stretches: 0,
        solves: 0,
        reused: 0,
        largest_round: 0,
        one_hop,
    };
    let mut memo = RatesMemo::default();
    let mut active: HashMap<u32, StreamCost> = HashMap::new();
    let mut solver = MaxMin::new();
    let (mut flows, mut rates) = (Vec::new(), Vec::new());
    let mut local = LocalRounds::new(capacity.len());
    // Each active stream's transfer time at the current allocation.
    let mut transfer_of: HashMap<u32, f64> = HashMap::new();
    let mut ready = Ready { at: vec![0.0; rounds.ranks as usize], budget: 300_000_000, estimated: false };
    let mut msgs: Vec<RoundMsg> = Vec::new();
    // Pipelines: the worst latency of each stage (a stream's first round).
    let mut stage_latency: BTreeMap<u64, f64> = BTreeMap::new();
    let mut i = 0;
    while i < changes.len() {
        if m.interrupt.stopped() {
            return Err(super::flow::FlowError::Interrupted);
        }
        let round = changes[i].0;
        while i < changes.len() && changes[i].0 == round {
            let k = changes[i].1;
            let st = &rounds.streams[k as usize];
            if st.first == round {
                let c = costing.cost(st);
                if rounds.pipelined {
                    let e = stage_latency.entry(st.first).or_insert(0.0);
                    *e = e.max(c.latency_s);
                }
                if one_hop {
                    local.add(router_of(st.src), k);
                }
                active.insert(k, c);
            } else {
                active.remove(&k);
                transfer_of.remove(&k);
                if one_hop {
                    local.remove(router_of(st.src), k);
                }
            }
            i += 1;
        }
        let Some(&(next, _)) = changes.get(i) else { break };
        if active.is_empty() || next == round {
            continue;
        }
        out.stretches += 1;
        out.largest_round = out.largest_round.max(active.len());
        // Without reuse, every round of the stretch is solved afresh (the
        // same steps, one round at a time).
        let len = next - round;
        let (len, repeats) = if reuse == Reuse::Yes { (len, 1) } else { (1, len) };
        // (`Reuse::No`: the stretch's first round, and whether a later
        // round came out different — the premise of solving it once.)
        let mut first: Option<(u64, u64)> = None;
        for _ in 0..repeats {
            if reuse == Reuse::No {
                local.forget();
            }
            let (transfer, latency) = if one_hop {
                local.update(&capacity, &active, balanced, &mut solver, &mut out.solves, &mut transfer_of)
            } else {
                let mut keys: Vec<u32> = active.keys().copied().collect();
                keys.sort_unstable();
                let set: Vec<&StreamCost> = keys.iter().map(|k| &active[k]).collect();
                let times = if reuse == Reuse::Yes {
                    let before = memo.reused;
                    let r = memo_rates(&capacity, &set, &mut solver, &mut flows, &mut memo);
                    if memo.reused == before {
                        out.solves += 1;
                    }
                    times(&set, &r, balanced)
                } else {
                    out.solves += 1;
                    solve(&capacity, &set, balanced, &mut solver, &mut flows, &mut rates)
                };
                for (k, t) in keys.iter().zip(&times) {
                    transfer_of.insert(*k, *t);
                }
                (times.iter().copied().fold(0.0, f64::max), set.iter().map(|c| c.latency_s).fold(0.0, f64::max))
            };
            match first {
                None => first = Some((transfer.to_bits(), latency.to_bits())),
                Some(f) if f != (transfer.to_bits(), latency.to_bits()) => {
                    // A stretch's rounds differ: solving it once would be
                    // wrong, and the totals say so.
                    out.transfer_seconds = f64::NAN;
                }
                _ => {}
            }
            if !rounds.pipelined {
                msgs.clear();
                let mut keys: Vec<u32> = active.keys().copied().collect();
                keys.sort_unstable();
                for k in keys {
                    let st = &rounds.streams[k as usize];
                    let (c, t) = (&active[&k], transfer_of[&k]);
                    msgs.push(RoundMsg { src: st.src, dst: st.dst, cost: c.latency_s + t, lane: c.send_s + t });
                }
                ready.stretch(&msgs, len);
            }
        }
        // The stretch's transfer and latency: its rounds are equal, so its
        // first times the rounds (as solving it once gives them).
        if let Some((t, l)) = first {
            out.transfer_seconds += f64::from_bits(t) * (len * repeats) as f64;
            if !rounds.pipelined {
                out.latency_seconds += f64::from_bits(l) * (len * repeats) as f64;
            }
        }
    }
    out.reused = memo.reused;
    if rounds.pipelined {
        out.latency_seconds = stage_latency.values().sum();
    }
    out.lockstep_seconds = out.transfer_seconds + out.latency_seconds + out.copy_seconds;
    out.time_seconds = if rounds.pipelined {
        out.lockstep_seconds
    } else {
        ready.at.iter().copied().fold(0.0, f64::max) + out.copy_seconds
    };
    (out.rank_min_seconds, out.rank_mean_seconds) = if rounds.pipelined || ready.at.is_empty() {
        (out.time_seconds, out.time_seconds)
    } else {
        let min = ready.at.iter().copied().fold(f64::INFINITY, f64::min);
        (min + out.copy_seconds, ready.at.iter().sum::<f64>() / ready.at.len() as f64 + out.copy_seconds)
    };
    out.stretches_estimated = ready.estimated;
    Ok(out)
}

/// The one-hop path: every router's active streams, each router's slowest
/// transfer and latency, and the multisets of both over the routers.
struct LocalRounds {
    streams: HashMap<u32, Vec<u32>>,
    dirty: Vec<u32>,
    current: HashMap<u32, (u64, u64)>,
    transfers: BTreeMap<u64, u32>,
    latencies: BTreeMap<u64, u32>,
    /// Per signature: each stream's transfer time (in the router's order)
    /// and the router's slowest latency.
    cache: HashMap<Vec<u64>, (Vec<f64>, f64)>,
    /// Solve every router, whatever the cache holds (`Reuse::No`).
    fresh: bool,
    /// Scratch: global resource → local label.
    label: Vec<u32>,
}

fn take(set: &mut BTreeMap<u64, u32>, key: u64) {
    if let Some(n) = set.get_mut(&key) {
        *n -= 1;
        if *n == 0 {
            set.remove(&key);
        }
    }
}

impl LocalRounds {
    fn new(resources: usize) -> Self {
        Self {
            streams: HashMap::new(),
            dirty: Vec::new(),
            current: HashMap::new(),
            transfers: BTreeMap::new(),
            latencies: BTreeMap::new(),
            cache: HashMap::new(),
            fresh: false,
            label: vec![u32::MAX; resources],
        }
    }

    fn add(&mut self, router: u32, k: u32) {
        self.streams.entry(router).or_default().push(k);
        self.dirty.push(router);
    }

    /// Forgets every solution: every router with streams is solved again,
    /// each one afresh (not from the cache of routers of the same shape).
    fn forget(&mut self) {
        self.fresh = true;
        self.dirty.extend(self.streams.keys().copied());
    }

    fn remove(&mut self, router: u32, k: u32) {
        if let Some(v) = self.streams.get_mut(&router) {
            v.retain(|&x| x != k);
        }
        self.dirty.push(router);
    }

    /// Re-solves the routers changed since the last call; returns the
    /// slowest transfer and latency over every router.
    #[allow(clippy::too_many_arguments)]
    fn update(&mut self, capacity: &[f64], active: &HashMap<u32, StreamCost>, balanced: bool, solver: &mut MaxMin, solves: &mut u64, transfer_of: &mut HashMap<u32, f64>) -> (f64, f64) {
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for &r in &dirty {
            if let Some((t, l)) = self.current.remove(&r) {
                take(&mut self.transfers, t);
                take(&mut self.latencies, l);
            }
            let Some(list) = self.streams.get_mut(&r) else { continue };
            if list.is_empty() {
                self.streams.remove(&r);
                continue;
            }
            list.sort_unstable();
            let list = list.clone();
            let set: Vec<&StreamCost> = list.iter().map(|k| &active[k]).collect();
            let (key, local_cap) = self.signature(capacity, &set);
            if self.fresh || !self.cache.contains_key(&key) {
                *solves += 1;
                let relabelled: Vec<StreamCost> = set.iter().map(|c| self.relabel(c)).collect();
                let refs: Vec<&StreamCost> = relabelled.iter().collect();
                let (mut flows, mut rates) = (Vec::new(), Vec::new());
                let times = solve(&local_cap, &refs, balanced, solver, &mut flows, &mut rates);
                let l = set.iter().map(|c| c.latency_s).fold(0.0, f64::max);
                self.cache.insert(key.clone(), (times, l));
            }
            let (times, l) = &self.cache[&key];
            for (k, t) in list.iter().zip(times) {
                transfer_of.insert(*k, *t);
            }
            let (t, l) = (times.iter().copied().fold(0.0, f64::max), *l);
            self.clear_labels(&set);
            let bits = (t.to_bits(), l.to_bits());
            *self.transfers.entry(bits.0).or_default() += 1;
            *self.latencies.entry(bits.1).or_default() += 1;
            self.current.insert(r, bits);
        }
        dirty.clear();
        self.dirty = dirty;
        let max = |m: &BTreeMap<u64, u32>| m.keys().next_back().map_or(0.0, |&b| f64::from_bits(b));
        (max(&self.transfers), max(&self.latencies))
    }

    /// A router's flows with their resources numbered by first appearance,
    /// and the capacities of those resources: equal signatures have equal
    /// allocations.
    fn signature(&mut self, capacity: &[f64], set: &[&StreamCost]) -> (Vec<u64>, Vec<f64>) {
        let mut key = Vec::with_capacity(set.len() * 8);
        key.push(set.len() as u64);
        let mut cap = Vec::new();
        for c in set {
            key.push(c.parts.len() as u64);
            for (links, share) in &c.parts {
                key.push(links.len() as u64);
                for &l in links {
                    if self.label[l as usize] == u32::MAX {
                        self.label[l as usize] = cap.len() as u32;
                        cap.push(capacity[l as usize]);
                    }
                    key.push(self.label[l as usize] as u64);
                }
                key.push(share.to_bits());
            }
            key.push(c.wire.to_bits());
            key.push(c.latency_s.to_bits());
        }
        key.extend(cap.iter().map(|c| c.to_bits()));
        (key, cap)
    }

    fn relabel(&self, c: &StreamCost) -> StreamCost {
        StreamCost {
            parts: c.parts.iter().map(|(links, share)| (links.iter().map(|&l| self.label[l as usize]).collect(), *share)).collect(),
            wire: c.wire,
            latency_s: c.latency_s,
            send_s: c.send_s,
        }
    }

    fn clear_labels(&mut self, set: &[&StreamCost]) {
        for c in set {
            for (links, _) in &c.parts {
                for &l in links {
                    self.label[l as usize] = u32::MAX;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(costs: &[f64], lane: f64) -> Vec<RoundMsg> {
        let n = costs.len() as u32;
        (0..n).map(|i| RoundMsg { src: i, dst: (i + 1) % n, cost: costs[i as usize], lane }).collect()
    }

    #[test]
    fn a_ring_is_paced_by_its_slowest_lane_or_its_mean_cost() {
        // Round by round, against the one-go estimate.
        for (costs, lane) in [(vec![2.0; 6], 1.5), (vec![2.0, 2.0, 9.0, 2.0, 2.0, 2.0], 1.5), (vec![2.0, 3.0, 2.0, 3.0], 2.9)] {
            let msgs = ring(&costs, lane);
            let k = 50;
            let mut exact = Ready { at: vec![0.0; costs.len()], budget: u64::MAX, estimated: false };
            exact.stretch(&msgs, k);
            let mut quick = Ready { at: vec![0.0; costs.len()], budget: 0, estimated: false };
            quick.stretch(&msgs, k);
            assert!(quick.estimated && !exact.estimated);
            let (a, b) = (exact.at.iter().copied().fold(0.0, f64::max), quick.at.iter().copied().fold(0.0, f64::max));
            assert!((a / b - 1.0).abs() < 0.1, "{costs:?}: exact {a}, estimate {b}");
        }
    }

    #[test]
    fn a_senders_lane_paces_its_next_messages() {
        // One sender, one message per round, a slow lane: k rounds take k lanes.
        let msgs = [RoundMsg { src: 0, dst: 1, cost: 1.0, lane: 3.0 }];
        let mut r = Ready { at: vec![0.0; 2], budget: u64::MAX, estimated: false };
        r.stretch(&msgs, 4);
        assert_eq!(r.at, vec![12.0, 10.0]);
    }
}
