//! Transfers on the flow model (crate `tofusim-flow`), on the same systems,
//! communicators, routes and packet formats as the packet engine, for the
//! flow/packet cross-check (issue 7).
//!
//! A message is one flow along its dimension-order route (the engine's
//! escape route with the same order and hint bits). Resources, in wire
//! bytes per second: each directed link (the link rate); each node's
//! injection (its injection capacity, or the host-interface limit where
//! the preset has one); each node's TNIs (one DMA engine each, at the link
//! rate, shared by the messages given to it). Reception is limited by the
//! links into the node only, as in the engine (its reception FIFOs drain at
//! once). Wire bytes: the message's packets, each with its header, rounded
//! to 32-byte chunks, plus the per-packet link overhead. Latency: send
//! overhead + hops × hop latency + receive overhead, added to the
//! bandwidth-shared transfer time. A TNI sends its messages in order: each
//! starts when the one before it on that TNI has finished. Not modelled:
//! buffers, flow control and arbitration (hence no head-of-line blocking in
//! the network and no deadlock).

use rand::SeedableRng;
use tofusim_comm::algorithms::Transfer;
use tofusim_flow::transfers::{completion_times, Message};
use tofusim_flow::Flow;
use tofusim_routing::{DragonflyMode, EscapeOrder, Routing, TorusRouting};


use crate::build::{setup, Setup};
use crate::comm_model::Modes;
use crate::error::{ConfigError, Result};

/// Completion of a set of transfers that start together.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowTimed {
    /// Per transfer, seconds from the start to its completion at the receiver.
    pub message_seconds: Vec<f64>,
    /// The last completion.
    pub time_seconds: f64,
}

/// The network as the flow model sees it: routes over directed links,
/// and the resources with their capacities (wire bytes per second): every
/// directed link (its class rate), then every node's injection (its host
/// interface), then every node's send lanes (one per TNI; each at the rate
/// of the injection FIFOs it feeds).
pub(crate) struct FlowNet {
    pub(crate) routing: Routing,
    /// Adaptive tori: the routes of every dimension order, over which a
    /// message is spread (the engine's adaptive minimal routing spreads
    /// its packets over the minimal paths; dimension orders stand for them).
    pub(crate) orders: Vec<Routing>,
    pub(crate) routers: usize,
    pub(crate) ports: usize,
    pub(crate) nodes: usize,
    pub(crate) npr: u32,
    pub(crate) tnis: usize,
    pub(crate) capacity: Vec<f64>,
}

impl FlowNet {
    pub(crate) fn new(s: &Setup) -> Result<Self> {
        if s.fattree.is_some() {
            return Err(ConfigError::new("<command line>", "model", "the flow model does not route fat-trees yet; use --model packet"));
        }
        let link_bps = s.model.link_Bps;
        let r = &s.model.router;
        let node_bps = if s.dragonfly.is_some() {
            // The engine's host interface counts packet bytes, as wire bytes do.
            r.host_bytes_per_cycle * link_bps
        } else {
            s.model.host_limit_Bps.map_or(s.injection_links * link_bps, |h| h.min(s.injection_links * link_bps))
        };
        let adaptive = s.model.routing == tofusim_packet::RoutingMode::Adaptive;
        Self::build("<flow>", &s.torus, s.dragonfly.as_ref().map(|(d, m)| (d, *m)), r, adaptive, link_bps, node_bps, s.model.tnis)
    }

    /// The flow network of an experiment file's system, in bytes per
    /// cycle: a link carries one byte per cycle (a slower link class less),
    /// a node injects at most its injection capacity (and its host
    /// interface's rate), through one send lane per workload lane.
    pub(crate) fn for_experiment(file: &str, exp: &crate::experiment::Experiment) -> Result<Self> {
        if exp.built.fattree.is_some() {
            return Err(ConfigError::new(file, "network.topology", "the flow model does not route fat-trees yet; run the packet engine (no --model flow)"));
        }
        let node = exp.built.injection_links.min(exp.router.host_bytes_per_cycle);
        let lanes = exp.workload.lanes().clamp(1, 255) as u8;
        let dragonfly = exp.built.dragonfly.as_ref().map(|(d, m)| (d, *m));
        Self::build(file, &exp.built.nodes, dragonfly, &exp.router, exp.mode == tofusim_packet::RoutingMode::Adaptive, 1.0, node, lanes)
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        file: &str,
        torus: &tofusim_topology::Torus,
        dragonfly: Option<(&tofusim_topology::dragonfly::Dragonfly, DragonflyMode)>,
        r: &tofusim_packet::RouterParams,
        adaptive: bool,
        link_bps: f64,
        node_bps: f64,
        tnis: u8,
    ) -> Result<Self> {
        let (routing, npr) = match dragonfly {
            None => {
                let order = crate::build::torus_order(torus);
                (Routing::Torus(TorusRouting::new(torus, &order, EscapeOrder::Dimension)), 1)
            }
            Some((d, mode)) => {
                if !matches!(mode, DragonflyMode::Minimal | DragonflyMode::Valiant) {
                    return Err(if file == "<flow>" {
                        ConfigError::new(file, "system", "the flow model has no congestion-based route choice: on a dragonfly give /minimal or /valiant")
                    } else {
                        ConfigError::new(file, "routing.algorithm", "the flow model has no congestion-based route choice: on a dragonfly use minimal or valiant routing")
                    });
                }
                (Routing::Dragonfly(tofusim_routing::DragonflyRouting::new(d, mode)), d.nodes_per_router)
            }
        };
        let (routers, ports) = (routing.routers(), routing.ports());
        let nodes = routers * npr as usize;
        let tnis = tnis.max(1) as usize;
        let fifos_per_lane = (r.injection_fifos as usize / tnis).max(1) as f64;
        let mut capacity: Vec<f64> = (0..routers * ports)
            .map(|i| link_bps / r.port_cycles_per_byte.get(i % ports).copied().unwrap_or(1.0))
            .collect();
        capacity.extend(std::iter::repeat_n(node_bps, nodes));
        capacity.extend(std::iter::repeat_n(link_bps * fifos_per_lane, nodes * tnis));
        let mut orders = Vec::new();
        if dragonfly.is_none() && adaptive {
            let axes = torus.axes().len();
            if axes <= 4 {
                for perm in permutations(axes) {
                    orders.push(Routing::Torus(TorusRouting::new(torus, &perm, EscapeOrder::Dimension)));
                }
            }
        }
        Ok(Self { routing, orders, routers, ports, nodes, npr, tnis, capacity })
    }

    /// Whether the parts of a message share its bytes as they go
    /// (adaptive tori: the engine sends each packet on whichever minimal
    /// path is free, so the parts finish together) rather than in fixed
    /// shares (Valiant: each packet on a random one).
    pub(crate) fn balanced(&self) -> bool {
        !self.orders.is_empty()
    }

    /// Whether a message may leave its minimal route (Valiant dragonflies:
    /// through other routers' links even between neighbours).
    pub(crate) fn detours(&self) -> bool {
        matches!(&self.routing, Routing::Dragonfly(d) if d.mode == DragonflyMode::Valiant)
    }

    pub(crate) fn lane(&self, node: u32, tni: u8) -> usize {
        node as usize * self.tnis + tni as usize % self.tnis
    }

    /// The routes of a message from node `a` to node `b` on TNI `tni`,
    /// each as the resources it uses (its lane, its node's injection, the
    /// links), its router hops and its share of the message's bytes: one
    /// route; on an adaptive torus the distinct routes of every dimension
    /// order and, at exactly half a ring, of both directions; on a dragonfly
    /// under Valiant routing up to 16 of the Valiant routes (the engine's
    /// packets spread over the minimal or Valiant paths).
    pub(crate) fn routes(&self, a: u32, b: u32, tni: u8, rng: &mut tofusim_routing::Rng) -> Vec<(Vec<u32>, u64, f64)> {
        let (ra, rb) = (a / self.npr, b / self.npr);
        if let Routing::Dragonfly(d) = &self.routing {
            if d.mode == DragonflyMode::Valiant {
                let all = d.valiant_choices(ra, rb);
                if !all.is_empty() {
                    let k = all.len().min(16);
                    let step = all.len() as f64 / k as f64;
                    return (0..k)
                        .map(|i| {
                            let (links, hops) = self.walk(&self.routing, a, b, tni, all[(i as f64 * step) as usize]);
                            (links, hops, 1.0 / k as f64)
                        })
                        .collect();
                }
            }
        }
        let hints = self.routing.init(ra, rb, b % self.npr.max(1), rng);
        if self.orders.len() > 1 {
            // Every dimension order, and at exactly half a ring both
            // directions (the engine draws one per packet): the distinct
            // minimal routes, in equal shares.
            let tied = match &self.routing {
                Routing::Torus(t) => t.tied_axes(ra, rb),
                // Only tori have several dimension orders.
                Routing::Dragonfly(_) | Routing::FatTree(_) => 0,
            };
            let mut variants = vec![hints];
            for axis in (0..8).filter(|a| tied & (1 << a) != 0) {
                let flipped: Vec<u8> = variants.iter().map(|h| h ^ (1 << axis)).collect();
                variants.extend(flipped);
            }
            let mut routes: Vec<(Vec<u32>, u64)> = Vec::new();
            for o in &self.orders {
                for &h in &variants {
                    let r = self.walk(o, a, b, tni, h);
                    if !routes.iter().any(|x| x.0 == r.0) {
                        routes.push(r);
                    }
                }
            }
            let k = routes.len() as f64;
            return routes.into_iter().map(|(links, hops)| (links, hops, 1.0 / k)).collect();
        }
        let (links, hops) = self.walk(&self.routing, a, b, tni, hints);
        vec![(links, hops, 1.0)]
    }

    /// The route of `routing` with route state `hints` from node `a` to
    /// node `b`: the sender's lane and injection, then the links; and its
    /// router hops.
    fn walk(&self, routing: &Routing, a: u32, b: u32, tni: u8, hints: u8) -> (Vec<u32>, u64) {
        let links_end = self.routers * self.ports;
        let mut links = vec![(links_end + self.nodes + self.lane(a, tni)) as u32, (links_end as u32) + a];
        let (mut r, rb) = (a / self.npr, b / self.npr);
        let mut h = routing.advance(r, hints);
        while let Some(p) = routing.escape_port(r, rb, h) {
            links.push((r as usize * self.ports + p as usize) as u32);
            r = routing.neighbor(r, p).expect("routes follow links").0;
            h = routing.advance(r, h);
        }
        let hops = (links.len() - 2) as u64;
        (links, hops)
    }
}

/// Every ordering of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// Bytes on the wire of a message of `bytes` payload: its packets, each
/// with its header, rounded to the router's chunks, plus the per-packet
/// link overhead (an empty message still sends one packet).
pub(crate) fn wire_bytes(s: &Setup, bytes: u64) -> u64 {
    let (header, overhead) = (s.model.header_bytes as u64, s.model.router.overhead_bytes as u64);
    let chunk = s.model.router.chunk_bytes.max(1) as u64;
    let payload = s.model.packet_bytes as u64 - header;
    let packets = bytes.div_ceil(payload).max(1);
    let last = bytes - (packets - 1) * payload;
    let on_wire = |carried: u64| (carried + header).div_ceil(chunk) * chunk + overhead;
    (packets - 1) * on_wire(payload) + on_wire(last)
}

/// `list` (ranks of `system_name`'s communicator) on the flow model.
pub fn transfers(system_name: &str, list: &[Transfer], seed: u64) -> Result<FlowTimed> {
    let s = setup(system_name)?;
    transfers_on(&s, list, seed)
}

/// The same on a prepared [`Setup`].
pub fn transfers_on(s: &Setup, list: &[Transfer], seed: u64) -> Result<FlowTimed> {
    let net = FlowNet::new(s)?;
    let tnis = net.tnis;
    let timing = s.model.host_timing(&Modes::default());
    let cycle_s = s.model.cycle_ns() * 1e-9;
    let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
    let ranks = s.node_of_rank.len() as u32;
    let mut messages = Vec::with_capacity(list.len());
    // The last message given to each TNI lane: a lane sends in order.
    // The parts of the last transfer given to each TNI lane: a lane sends
    // in order, the next transfer when every part of this one is done.
    let mut last_on_lane: std::collections::HashMap<(u32, u8), std::ops::Range<usize>> = std::collections::HashMap::new();
    let mut latency = Vec::with_capacity(list.len());
    // Per transfer, its messages (one per route part).
    let mut parts: Vec<std::ops::Range<usize>> = Vec::with_capacity(list.len());
    for tr in list {
        if tr.src >= ranks || tr.dst >= ranks {
            return Err(ConfigError::new("<flow>", "transfers", format!("a rank beyond the {ranks} of the communicator")));
        }
        let (a, b) = (s.node_of_rank[tr.src as usize], s.node_of_rank[tr.dst as usize]);
        let routes = net.routes(a, b, tr.tni, &mut rng);
        let wire = wire_bytes(s, tr.bytes);
        // One message per route part; the lane orders whole transfers: a
        // transfer's parts wait for the last part of the one before.
        let key = (a, tr.tni % tnis as u8);
        let after: Vec<usize> = last_on_lane.get(&key).map_or_else(Vec::new, |r: &std::ops::Range<usize>| r.clone().collect());
        let first = messages.len();
        let pool = net.balanced().then_some(first);
        for (links, hops, share) in routes {
            latency.push(
                (timing.send_overhead_cycles + hops * s.model.router.hop_latency_cycles as u64 + timing.recv_overhead_cycles)
                    as f64
                    * cycle_s,
            );
            let own = pool.filter(|&p| p != messages.len());
            messages.push(Message { after: after.clone(), pool: own, ..Message::new(Flow { links, cap: f64::INFINITY }, wire as f64 * share) });
        }
        last_on_lane.insert(key, first..messages.len());
        parts.push(first..messages.len());
    }
    let done = completion_times(&net.capacity, &messages);
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
    /// Its parts (one flow each, see [`FlowNet::routes`]): `parts[i]` indexes
    /// the part arrays.
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

/// A collective schedule on the flow model: the same steps, overheads,
/// reduction and copy rates as the packet-engine executor
/// (`tofusim_workload::ScheduleRun`), with each message a flow (see the
/// module docs). Returns the time of the last step, seconds.
pub fn schedule_time(s: &Setup, schedule: &tofusim_comm::Schedule, modes: &Modes, seed: u64) -> Result<f64> {
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, VecDeque};
    use tofusim_comm::{Action, Combine, ELEMENT_BYTES};
    let err = |m: String| ConfigError::new("<flow>", "schedule", m);
    schedule.validate().map_err(err)?;
    let net = FlowNet::new(s)?;
    let tnis = net.tnis;
    let capacity = net.capacity.clone();
    let timing = s.model.host_timing(modes);
    let cycle_s = s.model.cycle_ns() * 1e-9;
    let wire_of = |bytes: u64| wire_bytes(s, bytes) as f64;
    let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
    // Flat step numbering and message matching, as ScheduleRun does.
    let mut base = vec![0usize];
    for p in &schedule.programs {
        base.push(base.last().copied().unwrap_or(0) + p.steps.len());
    }
    let n = *base.last().unwrap_or(&0);
    let mut unmet = vec![0u32; n];
    let mut dependants: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut message_of = vec![usize::MAX; n];
    let mut messages: Vec<ScheduleMessage> = Vec::new();
    // The parts of all messages: route, wire bytes, message.
    let mut part_links: Vec<Vec<u32>> = Vec::new();
    let mut part_wire: Vec<f64> = Vec::new();
    let mut part_of: Vec<usize> = Vec::new();
    let mut stream: std::collections::HashMap<(u32, u32), Vec<usize>> = Default::default();
    for (r, prog) in schedule.programs.iter().enumerate() {
        for (i, st) in prog.steps.iter().enumerate() {
            let flat = base[r] + i;
            unmet[flat] = st.deps.len() as u32;
            for &d in &st.deps {
                dependants[base[r] + d as usize].push(flat);
            }
            if let Action::Send { peer, spans, tni, .. } = &st.action {
                let (a, b) = (s.node_of_rank[r], s.node_of_rank[*peer as usize]);
                let routes = net.routes(a, b, *tni, &mut rng);
                let wire = wire_of(tofusim_comm::schedule::total(spans) * ELEMENT_BYTES);
                let hops = routes.iter().map(|r| r.1).max().unwrap_or(0) as f64;
                let first = part_links.len();
                for (links, _, share) in routes {
                    part_links.push(links);
                    part_wire.push(wire * share);
                    part_of.push(messages.len());
                }
                message_of[flat] = messages.len();
                stream.entry((r as u32, *peer)).or_default().push(messages.len());
                messages.push(ScheduleMessage {
                    parts: first..part_links.len(),
                    wire,
                    latency_s: hops * s.model.router.hop_latency_cycles as f64 * cycle_s,
                    lane: net.lane(a, *tni),
                    recv_step: usize::MAX,
                    arrived: f64::NAN,
                });
            }
        }
    }
    let mut seen: std::collections::HashMap<(u32, u32), usize> = Default::default();
    for (r, prog) in schedule.programs.iter().enumerate() {
        for (i, st) in prog.steps.iter().enumerate() {
            if let Action::Recv { peer, .. } = &st.action {
                let k = seen.entry((*peer, r as u32)).or_default();
                let m = stream[&(*peer, r as u32)][*k];
                *k += 1;
                message_of[base[r] + i] = m;
                messages[m].recv_step = base[r] + i;
            }
        }
    }
    let rank_of = |flat: usize| base.partition_point(|&b| b <= flat) - 1;
    let mut ready = vec![0.0f64; n];
    let mut finish = vec![f64::NAN; n];
    let mut events: BinaryHeap<Reverse<(u64, Event)>> = BinaryHeap::new();
    let at = |x: f64| x.max(0.0).to_bits();
    for (i, &u) in unmet.iter().enumerate() {
        if u == 0 {
            events.push(Reverse((at(0.0), Event::Ready(i))));
        }
    }
    let mut lane_busy = vec![false; net.nodes * tnis];
    let mut lane_queue: Vec<VecDeque<usize>> = vec![VecDeque::new(); net.nodes * tnis];
    let mut active: Vec<usize> = Vec::new();
    // `active` holds parts; a message is done when its parts are. Parts
    // drain a count of their own, or on an adaptive torus their message's
    // (the first part's slot), at the sum of their rates.
    let balanced = net.balanced();
    let pools: Vec<usize> = (0..part_wire.len()).map(|q| if balanced { messages[part_of[q]].parts.start } else { q }).collect();
    let pool_of = |q: usize| pools[q];
    let mut left: Vec<f64> = vec![0.0; part_wire.len()];
    for (q, &w) in part_wire.iter().enumerate() {
        left[pool_of(q)] += w;
    }
    let mut pool_rate: Vec<f64> = vec![0.0; part_wire.len()];
    let mut parts_left: Vec<usize> = messages.iter().map(|m| m.parts.len()).collect();
    let mut solver = tofusim_flow::MaxMin::new();
    let mut flows: Vec<Flow> = Vec::new();
    let mut rates: Vec<f64> = Vec::new();
    let mut dirty = false;
    let mut now = 0.0f64;
    let recv_s = timing.recv_overhead_cycles as f64 * cycle_s;
    let send_s = timing.send_overhead_cycles as f64 * cycle_s;
    let reduce_bps = timing.reduce_bytes_per_cycle / cycle_s;
    let copy_bps = timing.copy_bytes_per_cycle / cycle_s;
    let mut done_steps = 0usize;
    // Finishing a step releases its dependants at its finish time.
    let complete = |flat: usize, f: f64, finish: &mut Vec<f64>, ready: &mut Vec<f64>, unmet: &mut Vec<u32>, events: &mut BinaryHeap<Reverse<(u64, Event)>>| {
        finish[flat] = f;
        for &d in &dependants[flat] {
            ready[d] = ready[d].max(f);
            unmet[d] -= 1;
            if unmet[d] == 0 {
                events.push(Reverse((at(ready[d]), Event::Ready(d))));
            }
        }
    };
    loop {
        if dirty {
            flows.clear();
            flows.extend(active.iter().map(|&q| Flow { links: part_links[q].clone(), cap: f64::INFINITY }));
            solver.solve(&capacity, &flows, &mut rates);
            dirty = false;
        }
        for &q in &active {
            pool_rate[pool_of(q)] = 0.0;
        }
        for (&q, &r) in active.iter().zip(&rates) {
            pool_rate[pool_of(q)] += r;
        }
        let t_flow = active
            .iter()
            .map(|&q| {
                let (l, r) = (left[pool_of(q)], pool_rate[pool_of(q)]);
                if r > 0.0 { now + l / r } else { f64::INFINITY }
            })
            .fold(f64::INFINITY, f64::min);
        let t_event = events.peek().map_or(f64::INFINITY, |Reverse((b, _))| f64::from_bits(*b));
        let next = t_flow.min(t_event);
        if !next.is_finite() {
            break;
        }
        let dt = next - now;
        for (&q, &r) in active.iter().zip(&rates) {
            left[pool_of(q)] -= r * dt;
        }
        now = next;
        // Flows that finished: free their lanes, arrive after the hops.
        let mut k = 0;
        let mut freed = Vec::new();
        while k < active.len() {
            let q = active[k];
            if left[pool_of(q)] <= 1e-9 * messages[part_of[q]].wire.max(1.0) {
                active.swap_remove(k);
                rates.swap_remove(k);
                dirty = true;
                let m = part_of[q];
                parts_left[m] -= 1;
                if parts_left[m] == 0 {
                    freed.push(m);
                }
            } else {
                k += 1;
            }
        }
        for m in freed {
            events.push(Reverse((at(now + messages[m].latency_s), Event::Arrive(m))));
            let lane = messages[m].lane;
            match lane_queue[lane].pop_front() {
                Some(next_m) => active.extend(messages[next_m].parts.clone()),
                None => lane_busy[lane] = false,
            }
        }
        // Events due now.
        while let Some(&Reverse((b, ev))) = events.peek() {
            if f64::from_bits(b) > now {
                break;
            }
            events.pop();
            match ev {
                Event::Submit(m) => {
                    let lane = messages[m].lane;
                    if lane_busy[lane] {
                        lane_queue[lane].push_back(m);
                    } else {
                        lane_busy[lane] = true;
                        active.extend(messages[m].parts.clone());
                        dirty = true;
                    }
                }
                Event::Arrive(m) => {
                    messages[m].arrived = now;
                    let r = messages[m].recv_step;
                    if unmet[r] == 0 && finish[r].is_nan() && ready[r] <= now {
                        events.push(Reverse((at(now), Event::Ready(r))));
                    }
                }
                Event::Ready(flat) => {
                    if !finish[flat].is_nan() {
                        continue;
                    }
                    let r = rank_of(flat);
                    let st = &schedule.programs[r].steps[flat - base[r]];
                    let f = match &st.action {
                        Action::Send { offload, .. } => {
                            let start = ready[flat] + if *offload { 0.0 } else { send_s };
                            events.push(Reverse((at(start), Event::Submit(message_of[flat]))));
                            Some(start)
                        }
                        Action::Recv { spans, combine, offload, .. } => {
                            let m = &messages[message_of[flat]];
                            if m.arrived.is_nan() {
                                None
                            } else {
                                let bytes = (tofusim_comm::schedule::total(spans) * ELEMENT_BYTES) as f64;
                                let reduce = if *combine == Combine::Sum && !*offload { bytes / reduce_bps } else { 0.0 };
                                let host = if *offload { 0.0 } else { recv_s };
                                Some(ready[flat].max(m.arrived) + host + reduce)
                            }
                        }
                        Action::Copy { from, .. } => {
                            Some(ready[flat] + (tofusim_comm::schedule::total(from) * ELEMENT_BYTES) as f64 / copy_bps)
                        }
                        Action::Work { ns } => Some(ready[flat] + *ns as f64 * 1e-9),
                    };
                    if let Some(f) = f {
                        done_steps += 1;
                        complete(flat, f, &mut finish, &mut ready, &mut unmet, &mut events);
                    }
                }
            }
        }
    }
    if done_steps != n {
        return Err(err(format!("{} of {n} steps never ran on the flow model", n - done_steps)));
    }
    Ok(finish.iter().copied().fold(0.0, f64::max))
}
