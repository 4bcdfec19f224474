//! An experiment file's workload on the flow model: `tofusim run --model flow`.
//!
//! Time is counted in the engine's cycles and rates in bytes per cycle on
//! the same routes and resources (`flow_net_for_experiment`): a link
//! carries a byte per cycle (slower link classes less), a node injects at
//! most its injection capacity and host-interface rate. A packet on the
//! wire is its router bytes plus the per-packet link overhead, as in the
//! engine.
//!
//! - **Finite workloads** become messages: an all-to-all is every pair's
//!   message at once (the engine interleaves every node's packets through
//!   its FIFOs); a hot burst is every sender's packets to each region node;
//!   a trace row is a one-packet message released at its cycle; a ping-pong
//!   is a chain of messages, each released when the previous one has
//!   arrived and the node has turned around. Messages share bandwidth max-min
//!   fairly ([`tofusim_flow::transfers::Messages`]); a message arrives at its
//!   last byte's injection plus the hops' header latency.
//! - **Open-loop patterns** are a steady state: each node offers its load,
//!   spread over destinations drawn from the pattern (256 draws per node,
//!   seeded), each share a flow capped at its demand; the max-min
//!   allocation is what the network accepts.
//!
//! Not modelled: buffers, flow control, arbitration, queueing delay (open
//! loop latencies are the zero-load ones), deposit broadcasts (line and
//! plane fill), collective schedules (`tofusim coll --model flow` runs those).

use std::time::Instant;

use rand::SeedableRng;
use serde::Serialize;
use tofusim_flow::transfers::{Messages, Start};
use tofusim_flow::{FlowTable, LoadSum, MaxMin, RouteLoads, RouteScratch};
use tofusim_workload::Kind;

use crate::error::{ConfigError, Result};
use crate::experiment::Experiment;
use crate::flow_model::flow_net_for_experiment;

/// Draws per node of an open-loop pattern's destinations.
const DRAWS: usize = 256;

#[derive(Clone, Debug, Serialize, Default, schemars::JsonSchema)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FlowSim {
    pub wall_seconds: f64,
    pub peak_memory_bytes: u64,
    /// Flows (route parts) and max-min solves.
    pub flows: usize,
    pub solves: u64,
    /// The memory the run was checked against before it started, bytes
    /// (set by the front door that checked it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_memory_bytes: Option<u64>,
}

/// The result of `tofusim run --model flow`: the run JSON's keys where the
/// flow model has them.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FlowRunResult {
    pub model: &'static str,
    pub complete: bool,
    /// Stopped by Ctrl-C before the messages completed: the figures are
    /// those known then (messages and flows made, solves done), the rest 0.
    pub interrupted: bool,
    pub link_utilization: f64,
    pub payload_utilization: f64,
    pub offered_load: Option<f64>,
    pub accepted_load: f64,
    /// Message latencies (finite workloads: release to arrival; open loop:
    /// zero-load packet latency, the flow model having no queues), cycles.
    pub latency: Latency,
    pub latency_kind: &'static str,
    pub packets_injected: u64,
    pub packets_delivered: u64,
    pub completion_cycles: Option<u64>,
    pub cycle_ns: f64,
    pub sim: FlowSim,
}

fn summary(mut v: Vec<f64>) -> Latency {
    if v.is_empty() {
        return Latency::default();
    }
    v.sort_unstable_by(f64::total_cmp);
    let q = |f: f64| v[((f * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Latency { mean: v.iter().sum::<f64>() / v.len() as f64, p50: q(0.5), p99: q(0.99), max: v[v.len() - 1] }
}

/// One message of a finite workload, before routing.
struct Msg {
    src: u32,
    dst: u32,
    packets: u64,
    /// Router bytes of all its packets (headers included, no link overhead).
    bytes: u64,
    payload: u64,
    release: f64,
    /// The message it answers (ping-pong), and the node's turnaround.
    after: Option<usize>,
    turn: f64,
}

/// Bytes of one route part of one flow over `path_links` links, all it
/// costs in the run: the message and its route, the solver's incidence
/// and per-flow arrays, the executor's per-message state. Measured: a
/// 512-node adaptive all-to-all (261,632 messages, up to 6 parts of about
/// 8 links) peaks at about 600 MB.
fn part_bytes(path_links: f64) -> f64 {
    64.0 + 40.0 * path_links
}

/// The memory a flow-model run of `exp` needs, estimated before anything
/// is built (bytes): its flows × their route parts × [`part_bytes`].
/// Upper-bound counts: every dimension order of an adaptive torus as a
/// part (the distinct ones are fewer), 256 draws per open-loop source.
pub fn memory_estimate(exp: &Experiment) -> u64 {
    let w = &exp.workload;
    let nodes =
        (w.nodes() as u64).saturating_sub(exp.built.system.network.faults.nodes.len() as u64);
    let flows = match &w.kind {
        Kind::Open { .. } => nodes * (DRAWS as u64).min(nodes.saturating_sub(1)),
        Kind::Finite(_) => w.message_count(),
    };
    let (parts, hops) = match &exp.built.system.network.topology {
        tofusim_topology::Topology::Torus(t) | tofusim_topology::Topology::Tofu(t) => {
            // Adaptive tori of up to 4 axes: every dimension order (flow_model).
            let axes = t.axes().len() as u64;
            let orders = if exp.mode == tofusim_packet::RoutingMode::Adaptive && axes <= 4 {
                (1..=axes).product::<u64>()
            } else {
                1
            };
            (orders, t.average_hops())
        }
        // Valiant spreads a message over 16 routes, Aries' per-packet
        // hashed minimal over 64 (tofusim_flow::FlowNet::visit_routes).
        tofusim_topology::Topology::Dragonfly(_) => {
            use tofusim_routing::DragonflyMode;
            let parts = match exp.built.dragonfly.as_ref() {
                Some((_, DragonflyMode::Valiant)) => 16,
                Some((d, DragonflyMode::Minimal))
                    if matches!(
                        d.wiring,
                        tofusim_topology::dragonfly::GroupWiring::Aries { .. }
                    ) =>
                {
                    64
                }
                _ => 1,
            };
            (parts, 5.0)
        }
        tofusim_topology::Topology::FatTree(f) => (1, f.average_hops()),
    };
    (flows as f64 * parts as f64 * part_bytes(hops + 2.0)).min(u64::MAX as f64) as u64
}

/// Refuses a flow-model run whose [`memory_estimate`] exceeds `limit_bytes`
/// (default: the memory available now); returns the estimate.
pub fn check_memory(file: &str, exp: &Experiment, limit_bytes: Option<u64>) -> Result<u64> {
    use tofusim_packet::budget::{gib, limit};
    let need = memory_estimate(exp);
    let Some((limit, what)) = limit(limit_bytes) else { return Ok(need) };
    if need > limit {
        return Err(ConfigError::new(
            file,
            "memory",
            format!(
                "the flow model needs about {} for this workload's flows (one per pair and route), more than {what} ({}); use a smaller network or pattern, the packet engine (no --model flow), or allow more with --max-memory SIZE",
                gib(need),
                gib(limit)
            ),
        ));
    }
    Ok(need)
}

/// The finite workload's messages, from its pattern's module.
fn messages(file: &str, exp: &Experiment) -> Result<Vec<Msg>> {
    let w = &exp.workload;
    let turn = w.turn_cycles as f64;
    let msgs = w.messages().map_err(|e| ConfigError::new(file, &format!("workload.{}", e.key), e.message))?;
    Ok(msgs
        .into_iter()
        .map(|m| Msg { src: m.src, dst: m.dst, packets: m.packets, bytes: m.bytes, payload: m.payload_bytes, release: m.release_cycle as f64, after: m.answers, turn })
        .collect())
}

/// Runs `exp`'s workload on the flow model.
/// `progress` is asked between max-min solves; a `Break` (Ctrl-C) stops the
/// run with `interrupted` (and `complete` false): the flow model's figures
/// come from completed messages, so only the counts made so far are kept.
pub fn run(file: &str, exp: &Experiment, progress: tofusim_packet::Progress) -> Result<FlowRunResult> {
    let wall = Instant::now();
    exp.built.refuse_faults(file, "network", "the flow model")?;
    exp.refuse_packet_only(file, "the flow model")?;
    let net = flow_net_for_experiment(file, exp)?;
    let mut rng = tofusim_routing::Rng::seed_from_u64(exp.run.seed);
    let overhead = exp.router.overhead_bytes as f64;
    let hop = exp.router.hop_latency_cycles as f64;
    let directed: Vec<usize> = (0..net.routers * net.ports).filter(|&i| net.routing.neighbor((i / net.ports) as u32, (i % net.ports) as u8).is_some()).collect();
    let nodes = net.nodes as f64;
    let mut result = FlowRunResult {
        model: "flow",
        complete: true,
        interrupted: false,
        link_utilization: 0.0,
        payload_utilization: 0.0,
        offered_load: None,
        accepted_load: 0.0,
        latency: Latency::default(),
        latency_kind: "release to arrival",
        packets_injected: 0,
        packets_delivered: 0,
        completion_cycles: None,
        cycle_ns: exp.built.cycle_ns(),
        sim: FlowSim { wall_seconds: 0.0, peak_memory_bytes: 0, flows: 0, solves: 0, estimated_memory_bytes: None },
    };
    // Wire bytes and payload carried over each resource.
    let mut carried = vec![0.0f64; net.capacity.len()];
    let mut carried_payload = vec![0.0f64; net.capacity.len()];
    match &exp.workload.kind {
        Kind::Finite(_) => {
            let msgs = messages(file, exp)?;
            // Route parts stored flat (no allocation per part).
            let mut flows = Messages::new();
            let mut scratch = RouteScratch::default();
            let mut after: Vec<usize> = Vec::new();
            // Per message: its parts, and its hops.
            let mut parts: Vec<std::ops::Range<usize>> = Vec::with_capacity(msgs.len());
            let mut hops = Vec::with_capacity(msgs.len());
            let mut ask = || progress(0.0).is_break();
            let interrupt = tofusim_flow::Interrupt::new(&mut ask);
            let stopped = |mut r: FlowRunResult| {
                r.complete = false;
                r.interrupted = true;
                r.sim.wall_seconds = wall.elapsed().as_secs_f64();
                r.sim.peak_memory_bytes = tofusim_packet::result::peak_memory_bytes();
                r
            };
            for m in &msgs {
                if interrupt.stopped() {
                    return Ok(stopped(result));
                }
                let wire = m.bytes as f64 + m.packets as f64 * overhead;
                let first = flows.len();
                let pool = net.balanced().then_some(first);
                // The answer leaves when every part of the request has
                // arrived and the node has turned around.
                after.clear();
                let mut start = Start { release: m.release, ..Start::default() };
                if let Some(a) = m.after {
                    after.extend(parts[a].clone());
                    start.gap = hops[a] * hop + m.turn;
                }
                let mut most = 0u64;
                net.visit_routes(m.src, m.dst, 0, &mut rng, &mut scratch, |links, h, share| {
                    for &l in links {
                        carried[l as usize] += wire * share;
                        carried_payload[l as usize] += m.payload as f64 * share;
                    }
                    let own = pool.filter(|&p| p != flows.len());
                    flows.push(links, f64::INFINITY, wire * share, &after, Start { pool: own, ..start });
                    most = most.max(h);
                });
                hops.push(most as f64);
                parts.push(first..flows.len());
                result.packets_injected += m.packets;
            }
            let flow_count = flows.len();
            let Some(c) = flows.run_until(&net.capacity, &interrupt) else {
                result.sim.flows = flow_count;
                return Ok(stopped(result));
            };
            let mut lat = Vec::with_capacity(msgs.len());
            let mut end = 0.0f64;
            for (i, r) in parts.iter().enumerate() {
                let start = r.clone().map(|k| c.start[k]).fold(f64::INFINITY, f64::min);
                let arrive = r.clone().map(|k| c.done[k]).fold(0.0, f64::max) + hops[i] * hop;
                lat.push(arrive - start);
                end = end.max(arrive);
            }
            let end = end.ceil().max(1.0);
            result.completion_cycles = Some(end as u64);
            result.packets_delivered = result.packets_injected;
            result.latency = summary(lat);
            result.sim.flows = flow_count;
            result.sim.solves = c.solves;
            let delivered: f64 = msgs.iter().map(|m| m.bytes as f64).sum();
            result.accepted_load = delivered / (nodes * end * exp.built.injection_links);
            let links = directed.len().max(1) as f64;
            result.link_utilization = directed.iter().map(|&l| carried[l] / net.capacity[l]).sum::<f64>() / (links * end);
            result.payload_utilization = directed.iter().map(|&l| carried_payload[l] / net.capacity[l]).sum::<f64>() / (links * end);
        }
        Kind::Open { load, .. } => {
            let w = &exp.workload;
            let pb = w.packet_bytes as f64;
            let wire_per_byte = (pb + overhead) / pb;
            let demand = load * exp.built.injection_links * wire_per_byte;
            // Each node's destinations (counted per node over its draws),
            // visited in ascending order.
            let mut draws = vec![0u32; w.nodes() as usize];
            let mut drawn: Vec<u32> = Vec::new();
            let mut each_pair = |rng: &mut tofusim_routing::Rng, visit: &mut dyn FnMut(&mut tofusim_routing::Rng, u32, u32, f64)| {
                for src in 0..w.nodes() {
                    for _ in 0..DRAWS {
                        if let Some(d) = w.open_destination(src, rng) {
                            if draws[d as usize] == 0 {
                                drawn.push(d);
                            }
                            draws[d as usize] += 1;
                        }
                    }
                    drawn.sort_unstable();
                    for &dst in &drawn {
                        let share = draws[dst as usize] as f64 / DRAWS as f64;
                        draws[dst as usize] = 0;
                        visit(rng, src, dst, demand * share);
                    }
                    drawn.clear();
                }
            };
            // First the load of every flow at its cap: below saturation
            // (no resource over its capacity) the caps are the max-min
            // rates, with no flow kept (the loads summed by leg on an
            // adaptive torus, `RouteLoads`). Weights of the zero-load
            // latency are per router hop count.
            let start = rng.clone();
            let route_loads = RouteLoads::new(&net);
            let mut sum = LoadSum::new(&net);
            each_pair(&mut rng, &mut |rng, src, dst, demand| route_loads.add(&mut sum, src, dst, 0, demand, rng));
            let LoadSum { load: mut carried, mut by_hops, routes: flow_count, .. } = sum;
            let flow_count = flow_count as usize;
            let fits = carried.iter().zip(&net.capacity).all(|(&x, &c)| x <= c.max(0.0));
            if !fits {
                // Saturated: the max-min solve over every flow, drawn again.
                let mut flows = FlowTable::with_capacity(flow_count, 0);
                let mut hops: Vec<u64> = Vec::with_capacity(flow_count);
                let mut rng = start;
                let mut scratch = RouteScratch::default();
                each_pair(&mut rng, &mut |rng, src, dst, demand| {
                    net.visit_routes(src, dst, 0, rng, &mut scratch, |links, h, part| {
                        flows.push(links, demand * part);
                        hops.push(h);
                    })
                });
                let mut rates = Vec::new();
                MaxMin::new().solve_set(&net.capacity, &flows, &mut rates);
                carried.fill(0.0);
                by_hops.fill(0.0);
                for (i, (&r, &h)) in rates.iter().zip(&hops).enumerate() {
                    for &l in flows.links(i) {
                        carried[l as usize] += r;
                    }
                    by_hops[h as usize] += r;
                }
            }
            // A flow's resources are its lane, its injection and its links:
            // the injection resources together carry every flow once.
            let injection = net.routers * net.ports..net.routers * net.ports + net.nodes;
            let accepted: f64 = carried[injection].iter().sum::<f64>() / wire_per_byte;
            result.offered_load = Some(*load);
            result.accepted_load = accepted / (nodes * exp.built.injection_links);
            result.complete = true;
            let links = directed.len().max(1) as f64;
            result.link_utilization = directed.iter().map(|&l| carried[l] / net.capacity[l]).sum::<f64>() / links;
            result.payload_utilization = result.link_utilization * (pb - w.header_bytes as f64) / (pb + overhead);
            // Zero-load latency, weighted by the traffic each flow carries.
            let latency_of = |h: usize| h as f64 * hop + pb + overhead;
            let total: f64 = by_hops.iter().sum::<f64>().max(f64::MIN_POSITIVE);
            let mean = by_hops.iter().enumerate().map(|(h, r)| latency_of(h) * r).sum::<f64>() / total;
            let quantile = |q: f64| {
                let mut acc = 0.0;
                for (h, &r) in by_hops.iter().enumerate().filter(|x| *x.1 > 0.0) {
                    acc += r;
                    if acc >= q * total {
                        return latency_of(h);
                    }
                }
                by_hops.iter().rposition(|&r| r > 0.0).map_or(0.0, latency_of)
            };
            let max = by_hops.iter().rposition(|&r| r > 0.0).map_or(0.0, latency_of);
            result.latency = Latency { mean, p50: quantile(0.5), p99: quantile(0.99), max };
            result.latency_kind = "zero-load (no queueing in the flow model)";
            result.sim.flows = flow_count;
            result.sim.solves = u64::from(!fits);
            let per_cycle = accepted / pb;
            let cycles = exp.run.cycles.unwrap_or(0).saturating_sub(exp.run.warmup) as f64;
            result.packets_delivered = (per_cycle * cycles).round() as u64;
            result.packets_injected = (load * exp.built.injection_links / pb * nodes * cycles).round() as u64;
        }
    }
    result.sim.wall_seconds = wall.elapsed().as_secs_f64();
    result.sim.peak_memory_bytes = tofusim_packet::result::peak_memory_bytes();
    Ok(result)
}
