//! The flow-model executors of point-to-point transfers and of a
//! [`Schedule`](crate::Schedule): every message is one or several flows
//! (crate `tofusim-flow`) on its routes, sharing bandwidth max-min fairly
//! with the messages in flight, plus the latency terms of the packet
//! executor ([`super::packet`]): send overhead, hops × hop latency, receive
//! overhead, reduction of a summing receive, local copies. A TNI lane sends
//! its messages in order: each starts when the one before it on that lane
//! has finished. Not modelled: buffers, flow control and arbitration (hence
//! no head-of-line blocking in the network and no deadlock).

use rand::SeedableRng;
use tofusim_flow::transfers::{run_until, Message};
use tofusim_flow::{Flow, FlowNet, Stop};

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
    /// [`INTERRUPTED`] ([`tofusim_flow::Interrupt`]).
    pub interrupt: &'a dyn Stop,
}

/// The error of a flow run stopped by its [`Interrupt`] (Ctrl-C).
pub const INTERRUPTED: &str = "interrupted";

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
pub fn transfers(m: &FlowMachine, list: &[Transfer], seed: u64) -> Result<FlowTimed, String> {
    let net = m.net;
    let tnis = net.tnis;
    let timing = &m.timing;
    let cycle_s = m.cycle_s();
    let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
    let ranks = m.node_of_rank.len() as u32;
    let mut messages = Vec::with_capacity(list.len());
    // The parts of the last transfer given to each TNI lane: a lane sends
    // in order, the next transfer when every part of this one is done.
    let mut last_on_lane: std::collections::HashMap<(u32, u8), std::ops::Range<usize>> = std::collections::HashMap::new();
    let mut latency = Vec::with_capacity(list.len());
    // Per transfer, its messages (one per route part).
    let mut parts: Vec<std::ops::Range<usize>> = Vec::with_capacity(list.len());
    for tr in list {
        if tr.src >= ranks || tr.dst >= ranks {
            return Err(format!("a rank beyond the {ranks} of the communicator"));
        }
        let (a, b) = (m.node_of_rank[tr.src as usize], m.node_of_rank[tr.dst as usize]);
        let routes = net.routes(a, b, tr.tni, &mut rng);
        let wire = m.wire_bytes(tr.bytes);
        // One message per route part; the lane orders whole transfers: a
        // transfer's parts wait for the last part of the one before.
        let key = (a, tr.tni % tnis as u8);
        let after: Vec<usize> = last_on_lane.get(&key).map_or_else(Vec::new, |r: &std::ops::Range<usize>| r.clone().collect());
        let first = messages.len();
        let pool = net.balanced().then_some(first);
        for (links, hops, share) in routes {
            latency.push(
                (timing.send_overhead_cycles + hops * m.hop_latency_cycles as u64 + timing.recv_overhead_cycles)
                    as f64
                    * cycle_s,
            );
            let own = pool.filter(|&p| p != messages.len());
            messages.push(Message { after: after.clone(), pool: own, ..Message::new(Flow { links, cap: f64::INFINITY }, wire as f64 * share) });
        }
        last_on_lane.insert(key, first..messages.len());
        parts.push(first..messages.len());
    }
    let done = run_until(&net.capacity, &messages, m.interrupt).ok_or(INTERRUPTED)?.done;
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
/// ([`super::packet::ScheduleRun`]), with each message a flow (see the
/// module docs). Returns the time of the last step, seconds.
pub fn schedule_time(m: &FlowMachine, schedule: &crate::Schedule, seed: u64) -> Result<f64, String> {
    Ok(schedule_finish_times(m, schedule, seed)?.iter().copied().fold(0.0, f64::max))
}

/// [`schedule_time`]'s every step: the finish time of each step, seconds,
/// flat (rank 0's steps, then rank 1's, ...).
pub fn schedule_finish_times(m: &FlowMachine, schedule: &crate::Schedule, seed: u64) -> Result<Vec<f64>, String> {
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, VecDeque};
    use crate::{Action, Combine, ELEMENT_BYTES};
    schedule.validate()?;
    let net = m.net;
    let tnis = net.tnis;
    let capacity = net.capacity.clone();
    let timing = &m.timing;
    let cycle_s = m.cycle_s();
    let wire_of = |bytes: u64| m.wire_bytes(bytes) as f64;
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
    // Each part's route as a flow (uncapped), read in place by the solver.
    let mut part_links: Vec<Flow> = Vec::new();
    let mut part_wire: Vec<f64> = Vec::new();
    let mut part_of: Vec<usize> = Vec::new();
    let mut stream: std::collections::HashMap<(u32, u32, u32), Vec<usize>> = Default::default();
    for (r, prog) in schedule.programs.iter().enumerate() {
        for (i, st) in prog.steps.iter().enumerate() {
            let flat = base[r] + i;
            unmet[flat] = st.deps.len() as u32;
            for &d in &st.deps {
                dependants[base[r] + d as usize].push(flat);
            }
            if let Action::Send { peer, spans, tni, tag, .. } = &st.action {
                let (a, b) = (m.node_of_rank[r], m.node_of_rank[*peer as usize]);
                let routes = net.routes(a, b, *tni, &mut rng);
                let wire = wire_of(crate::schedule::total(spans) * ELEMENT_BYTES);
                let hops = routes.iter().map(|r| r.1).max().unwrap_or(0) as f64;
                let first = part_links.len();
                for (links, _, share) in routes {
                    part_links.push(Flow { links, cap: f64::INFINITY });
                    part_wire.push(wire * share);
                    part_of.push(messages.len());
                }
                message_of[flat] = messages.len();
                stream.entry((r as u32, *peer, *tag)).or_default().push(messages.len());
                messages.push(ScheduleMessage {
                    parts: first..part_links.len(),
                    wire,
                    latency_s: hops * m.hop_latency_cycles as f64 * cycle_s,
                    lane: net.lane(a, *tni),
                    recv_step: usize::MAX,
                    arrived: f64::NAN,
                });
            }
        }
    }
    let mut seen: std::collections::HashMap<(u32, u32, u32), usize> = Default::default();
    for (r, prog) in schedule.programs.iter().enumerate() {
        for (i, st) in prog.steps.iter().enumerate() {
            if let Action::Recv { peer, tag, .. } = &st.action {
                let k = seen.entry((*peer, r as u32, *tag)).or_default();
                let m = stream[&(*peer, r as u32, *tag)][*k];
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
    // Rates re-solved only in the components a start or finish reaches
    // (identical to solving every active part).
    let mut solver = tofusim_flow::IncrementalMaxMin::new(capacity.len(), part_links.len());
    let mut rate_of: Vec<f64> = vec![0.0; part_links.len()];
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
    // Each pool drains lazily: `left` as of `stamp`, at `pool_rate` since;
    // its finish time sits in a heap (stale entries carry an old version),
    // so an event costs the pools whose rates it changed, not every
    // active one.
    let mut stamp: Vec<f64> = vec![0.0; part_wire.len()];
    let mut version: Vec<u32> = vec![0; part_wire.len()];
    let mut finishing: BinaryHeap<Reverse<(u64, usize, u32)>> = BinaryHeap::new();
    let mut is_active = vec![false; part_wire.len()];
    let mut slot: Vec<usize> = vec![usize::MAX; part_wire.len()];
    let mut touched: Vec<usize> = Vec::new();
    let mut pool_touched = vec![false; part_wire.len()];
    let messages_parts: Vec<std::ops::Range<usize>> = messages.iter().map(|m| m.parts.clone()).collect();
    let parts_of_pool = |p: usize| if balanced { messages_parts[part_of[p]].clone() } else { p..p + 1 };
    loop {
        if solver.changed() {
            if m.interrupt.stopped() {
                return Err(INTERRUPTED.into());
            }
            if !solver.solve(&capacity, &part_links, &active, &mut rate_of, m.interrupt) {
                return Err(INTERRUPTED.into());
            }
            for &q in solver.last_solved() {
                let p = pool_of(q);
                if !pool_touched[p] {
                    pool_touched[p] = true;
                    touched.push(p);
                }
            }
            for p in touched.drain(..) {
                pool_touched[p] = false;
                left[p] -= pool_rate[p] * (now - stamp[p]);
                stamp[p] = now;
                pool_rate[p] = parts_of_pool(p).filter(|&q| is_active[q]).map(|q| rate_of[q]).sum();
                version[p] = version[p].wrapping_add(1);
                if pool_rate[p] > 0.0 {
                    finishing.push(Reverse((at(now + left[p] / pool_rate[p]), p, version[p])));
                }
            }
        }
        // The next pool to finish (stale entries dropped).
        while let Some(&Reverse((_, p, v))) = finishing.peek() {
            if v == version[p] && pool_rate[p] > 0.0 {
                break;
            }
            finishing.pop();
        }
        let t_flow = finishing.peek().map_or(f64::INFINITY, |Reverse((b, _, _))| f64::from_bits(*b));
        let t_event = events.peek().map_or(f64::INFINITY, |Reverse((b, _))| f64::from_bits(*b));
        let next = t_flow.min(t_event);
        if !next.is_finite() {
            break;
        }
        now = next;
        // Pools that finished: free their lanes, arrive after the hops.
        let mut freed = Vec::new();
        while let Some(&Reverse((b, p, v))) = finishing.peek() {
            if f64::from_bits(b) > now {
                break;
            }
            finishing.pop();
            if v != version[p] || pool_rate[p] <= 0.0 {
                continue;
            }
            left[p] -= pool_rate[p] * (now - stamp[p]);
            stamp[p] = now;
            let wire = messages[part_of[p]].wire.max(1.0);
            if left[p] > 1e-9 * wire && now + left[p] / pool_rate[p] > now {
                // Rounding left a sliver: finish when it drains.
                finishing.push(Reverse((at(now + left[p] / pool_rate[p]), p, v)));
                continue;
            }
            left[p] = 0.0;
            pool_rate[p] = 0.0;
            for q in parts_of_pool(p) {
                if !is_active[q] {
                    continue;
                }
                is_active[q] = false;
                let k = slot[q];
                active.swap_remove(k);
                if k < active.len() {
                    slot[active[k]] = k;
                }
                solver.remove(q, &part_links);
                let msg = part_of[q];
                parts_left[msg] -= 1;
                if parts_left[msg] == 0 {
                    freed.push(msg);
                }
            }
        }
        for msg in freed {
            events.push(Reverse((at(now + messages[msg].latency_s), Event::Arrive(msg))));
            let lane = messages[msg].lane;
            match lane_queue[lane].pop_front() {
                Some(next_m) => {
                    for q in messages[next_m].parts.clone() {
                        slot[q] = active.len();
                        is_active[q] = true;
                        active.push(q);
                        solver.add(q, &part_links);
                    }
                }
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
                        for q in messages[m].parts.clone() {
                            slot[q] = active.len();
                            is_active[q] = true;
                            active.push(q);
                            solver.add(q, &part_links);
                        }
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
                                let bytes = (crate::schedule::total(spans) * ELEMENT_BYTES) as f64;
                                let reduce = if *combine == Combine::Sum && !*offload { bytes / reduce_bps } else { 0.0 };
                                let host = if *offload { 0.0 } else { recv_s };
                                Some(ready[flat].max(m.arrived) + host + reduce)
                            }
                        }
                        Action::Copy(c) => {
                            Some(ready[flat] + (crate::schedule::total(&c.from) * ELEMENT_BYTES) as f64 / copy_bps)
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
        let first = finish.iter().position(|f| f.is_nan()).unwrap_or(0);
        let r = rank_of(first);
        let what = schedule.programs[r].steps[first - base[r]].action.describe();
        return Err(format!("{} of {n} steps never ran on the flow model (rank {r} stopped at step {}: {what})", n - done_steps, first - base[r]));
    }
    Ok(finish)
}
