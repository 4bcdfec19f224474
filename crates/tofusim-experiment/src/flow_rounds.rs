//! Collectives in lockstep rounds on the flow model: the full-machine path.
//!
//! A [`Rounds`] (crate `tofusim-comm`) is a collective as streams of
//! messages in consecutive rounds. Between two rounds at which a stream
//! starts or stops, every round carries the same set of messages, so the
//! max-min allocation of that set is solved once and reused for the whole
//! stretch: a ring allreduce over 82,944 nodes is two solves, not 1.4 × 10¹⁰
//! message events. Each message is a flow on the routes and resources of
//! [`FlowNet`] (links at their rates, each node's injection, each TNI lane);
//! its time is its transfer at the allocated rate plus the latency terms of
//! the packet-engine executor (send overhead, hops × hop latency, receive
//! overhead, reduction of a summing receive).
//!
//! A round of a lockstep algorithm lasts until its slowest message has been
//! received: transfer and latency add up round after round. In a pipeline
//! ([`Rounds::pipelined`], Trinaryx3's segments) a stream's messages follow
//! each other as fast as their transfers allow; the latencies add up only
//! along the chain of stages, once per stage (the worst of that stage).
//!
//! Speed: when every message of the collective is one hop (Trinaryx3 over
//! neighbouring ranks), the flows of different source routers share no
//! resource, so each router's flows are solved apart, once per distinct
//! local situation (a cache keyed by the router's flows and capacities),
//! and only the routers a change touches are solved again.

use std::collections::{BTreeMap, HashMap};

use rand::SeedableRng;
use serde::Serialize;
use tofusim_comm::{Rounds, Stream};
use tofusim_flow::{Flow, MaxMin};

use crate::collective::Setup;
use crate::comm_model::Modes;
use crate::error::Result;
use crate::flow_model::{wire_bytes, FlowNet};

/// A collective's rounds timed on the flow model.
#[derive(Clone, Debug, Serialize)]
pub struct RoundsTimed {
    pub time_seconds: f64,
    /// Of which: transfers at their shared rates, latency terms, local copies.
    pub transfer_seconds: f64,
    pub latency_seconds: f64,
    pub copy_seconds: f64,
    pub rounds: u64,
    pub messages: u64,
    /// Stretches of identical rounds, and max-min solves run (whole rounds,
    /// or one router's flows on the one-hop path; cached ones not counted).
    pub stretches: u64,
    pub solves: u64,
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
}

struct Costing<'a> {
    s: &'a Setup,
    net: FlowNet,
    rng: tofusim_routing::Rng,
    send_s: f64,
    recv_s: f64,
    hop_s: f64,
    reduce_bps: f64,
}

impl Costing<'_> {
    fn cost(&mut self, st: &Stream) -> StreamCost {
        let (a, b) = (self.s.node_of_rank[st.src as usize], self.s.node_of_rank[st.dst as usize]);
        let routes = self.net.routes(a, b, st.tni, &mut self.rng);
        let hops = routes.iter().map(|r| r.1).max().unwrap_or(0) as f64;
        let reduce = if st.reduce { st.bytes as f64 / self.reduce_bps } else { 0.0 };
        StreamCost {
            parts: routes.into_iter().map(|(links, _, share)| (links, share)).collect(),
            wire: wire_bytes(self.s, st.bytes) as f64,
            latency_s: self.send_s + hops * self.hop_s + self.recv_s + reduce,
        }
    }
}

/// The transfer time of every stream of `set` sharing the network: the
/// max-min rates of all their route parts; returns the slowest transfer.
fn solve(capacity: &[f64], set: &[&StreamCost], solver: &mut MaxMin, flows: &mut Vec<Flow>, rates: &mut Vec<f64>) -> f64 {
    flows.clear();
    for c in set {
        for (links, _) in &c.parts {
            flows.push(Flow { links: links.clone(), cap: f64::INFINITY });
        }
    }
    solver.solve(capacity, flows, rates);
    let mut k = 0;
    let mut slowest = 0.0f64;
    for c in set {
        for (_, share) in &c.parts {
            let r = rates[k];
            k += 1;
            slowest = slowest.max(if r > 0.0 { c.wire * share / r } else { f64::INFINITY });
        }
    }
    slowest
}

/// Times `rounds` over the ranks of `s` on the flow model.
pub fn rounds_time(s: &Setup, rounds: &Rounds, modes: &Modes, seed: u64) -> Result<RoundsTimed> {
    let net = FlowNet::new(s)?;
    let timing = s.model.host_timing(modes);
    let cycle_s = s.model.cycle_ns() * 1e-9;
    let mut costing = Costing {
        s,
        rng: tofusim_routing::Rng::seed_from_u64(seed),
        send_s: timing.send_overhead_cycles as f64 * cycle_s,
        recv_s: timing.recv_overhead_cycles as f64 * cycle_s,
        hop_s: s.model.router.hop_latency_cycles as f64 * cycle_s,
        reduce_bps: timing.reduce_bytes_per_cycle / cycle_s,
        net,
    };
    let copy_seconds = (rounds.copy_bytes_before + rounds.copy_bytes_after) as f64 / (timing.copy_bytes_per_cycle / cycle_s);
    let npr = costing.net.npr;
    let router_of = |rank: u32| s.node_of_rank[rank as usize] / npr;
    let one_hop = rounds.streams.iter().all(|st| costing.net.routing.distance(router_of(st.src), router_of(st.dst)) <= 1);
    // Starts and ends of streams, by round.
    let mut changes: Vec<(u64, u32)> = Vec::with_capacity(2 * rounds.streams.len());
    for (i, st) in rounds.streams.iter().enumerate() {
        changes.push((st.first, i as u32));
        changes.push((st.first + st.count, i as u32));
    }
    changes.sort_unstable();
    let capacity = costing.net.capacity.clone();
    let mut out = RoundsTimed {
        time_seconds: 0.0,
        transfer_seconds: 0.0,
        latency_seconds: 0.0,
        copy_seconds,
        rounds: rounds.rounds(),
        messages: rounds.messages(),
        stretches: 0,
        solves: 0,
        largest_round: 0,
        one_hop,
    };
    let mut active: HashMap<u32, StreamCost> = HashMap::new();
    let mut solver = MaxMin::new();
    let (mut flows, mut rates) = (Vec::new(), Vec::new());
    let mut local = LocalRounds::new(capacity.len());
    // Pipelines: the worst latency of each stage (a stream's first round).
    let mut stage_latency: BTreeMap<u64, f64> = BTreeMap::new();
    let mut i = 0;
    while i < changes.len() {
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
        let (transfer, latency) = if one_hop {
            local.update(&capacity, &active, &mut solver, &mut out.solves)
        } else {
            let mut set: Vec<(&u32, &StreamCost)> = active.iter().collect();
            set.sort_unstable_by_key(|(k, _)| **k);
            let set: Vec<&StreamCost> = set.into_iter().map(|(_, c)| c).collect();
            out.solves += 1;
            let t = solve(&capacity, &set, &mut solver, &mut flows, &mut rates);
            (t, set.iter().map(|c| c.latency_s).fold(0.0, f64::max))
        };
        let len = (next - round) as f64;
        out.transfer_seconds += transfer * len;
        if !rounds.pipelined {
            out.latency_seconds += latency * len;
        }
    }
    if rounds.pipelined {
        out.latency_seconds = stage_latency.values().sum();
    }
    out.time_seconds = out.transfer_seconds + out.latency_seconds + out.copy_seconds;
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
    cache: HashMap<Vec<u64>, (f64, f64)>,
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
            label: vec![u32::MAX; resources],
        }
    }

    fn add(&mut self, router: u32, k: u32) {
        self.streams.entry(router).or_default().push(k);
        self.dirty.push(router);
    }

    fn remove(&mut self, router: u32, k: u32) {
        if let Some(v) = self.streams.get_mut(&router) {
            v.retain(|&x| x != k);
        }
        self.dirty.push(router);
    }

    /// Re-solves the routers changed since the last call; returns the
    /// slowest transfer and latency over every router.
    fn update(&mut self, capacity: &[f64], active: &HashMap<u32, StreamCost>, solver: &mut MaxMin, solves: &mut u64) -> (f64, f64) {
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
            let set: Vec<&StreamCost> = list.iter().map(|k| &active[k]).collect();
            let (key, local_cap) = self.signature(capacity, &set);
            let (t, l) = match self.cache.get(&key) {
                Some(&v) => v,
                None => {
                    *solves += 1;
                    let relabelled: Vec<StreamCost> = set.iter().map(|c| self.relabel(c)).collect();
                    let refs: Vec<&StreamCost> = relabelled.iter().collect();
                    let (mut flows, mut rates) = (Vec::new(), Vec::new());
                    let t = solve(&local_cap, &refs, solver, &mut flows, &mut rates);
                    let l = set.iter().map(|c| c.latency_s).fold(0.0, f64::max);
                    self.cache.insert(key, (t, l));
                    (t, l)
                }
            };
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
