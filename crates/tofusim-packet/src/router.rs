//! The router's arbitration, in the order the BG/L torus unit pipelines it
//! (DOMAIN.md §5.6), run once per cycle at every router something happened to:
//!
//! 1. **Per packet at a VC head** — route choice. At the destination: the
//!    reception path of its input. Otherwise, in adaptive mode, the dynamic
//!    (port, VC) with the most downstream tokens among those whose link is
//!    free and which can take a full-sized packet (JSQ on 2-bit token
//!    ranges, random ties); failing that, the escape VC on the dimension-order
//!    port if its flow-control rule allows (bubble: 1 full packet to continue
//!    in the same direction, 2 to enter; dateline pair: the low/high VC by
//!    dateline crossing). Deterministic mode uses only the escape route.
//! 2. **Per receiver** — which VC heads of an input may request: the
//!    priority VC first, then the fullest VC (modified SLQ) on a fraction of
//!    arbitrations and a random order otherwise, up to the free
//!    receiver→sender paths.
//! 3. **Per sender** — one winner per output: priority packets first, then
//!    in-network packets over injection on `network_priority` of the
//!    arbitrations, then SLQ or random.
//!
//! Losers try again in a second and third round against the outputs still
//! free (the hardware retries on the next cycle).

use crate::traffic::Traffic;
use crate::config::{Arbitration, Escape, PlantedFault, RoutingMode};
use crate::engine::{Engine, Ev, QueueSet, ARRIVE, DELIVER, DONE, WAKE};
use crate::packet::flags;

use rand::RngExt;

/// Output index meaning "the reception FIFO of this input".
const EJECT: u8 = u8::MAX;
/// A request that lost receiver arbitration.
const WITHDRAWN: u8 = u8::MAX - 1;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    unit: u8,
    queue: u8,
    out: u8,
    vc: u8,
    cost: u8,
    crossed: bool,
    priority: bool,
    network: bool,
    fullness: u8,
}

impl<W: Traffic> Engine<W> {
    pub(crate) fn arbitrate(&mut self, r: usize, t: u64) {
        self.fill_fifos(r, t);
        let mut out_taken: u64 = 0;
        let mut q_taken: QueueSet = 0;
        // Network inputs whose reception path took a packet this cycle.
        let mut ejected: u64 = 0;
        for _round in 0..3 {
            self.requests.clear();
            self.collect_requests(r, t, out_taken, q_taken);
            if self.requests.is_empty() {
                break;
            }
            let mut granted = false;
            let mut i = 0;
            while i < self.requests.len() {
                let req = self.requests[i];
                i += 1;
                if req.out == WITHDRAWN {
                    continue;
                }
                if req.out == EJECT {
                    // One packet at a time on a network input's reception
                    // path: the VCs of one input that have all arrived
                    // request it together, one wins.
                    let path: u64 = if (req.unit as usize) < self.lay.ports { 1 << req.unit } else { 0 };
                    if q_taken & (1 << req.queue) == 0 && ejected & path == 0 {
                        self.grant_eject(r, t, req);
                        q_taken |= 1 << req.queue;
                        ejected |= path;
                        granted = true;
                    }
                    continue;
                }
                if out_taken & (1 << req.out) != 0 {
                    continue;
                }
                let winner = self.sender_arbitration(r, req.out, q_taken);
                if let Some(w) = winner {
                    self.grant_hop(r, t, w);
                    out_taken |= 1 << w.out;
                    q_taken |= 1 << w.queue;
                    granted = true;
                } else {
                    out_taken |= 1 << req.out;
                }
            }
            if !granted {
                break;
            }
        }
    }

    /// Step 2: each input unit proposes requests from its VC heads.
    fn collect_requests(&mut self, r: usize, t: u64, out_taken: u64, q_taken: QueueSet) {
        let lay = self.lay;
        // Outputs whose link is free: a head that cannot use one of them is
        // skipped without drawing random numbers.
        let mut free_out = 0u64;
        for o in 0..lay.ports {
            if self.out_free_at[r * lay.ports + o] <= t {
                free_out |= 1 << o;
            }
        }
        free_out &= !out_taken;
        // Queues whose head could use a free output, or has arrived (its
        // input's reception path is checked in `route_head`), in queue order:
        // the units in order, their VCs in order.
        let wbase = r * (lay.ports + 1);
        let mut cands = self.want[wbase + lay.ports];
        let mut m = free_out;
        while m != 0 {
            cands |= self.want[wbase + m.trailing_zeros() as usize];
            m &= m - 1;
        }
        cands &= !q_taken;
        while cands != 0 {
            let first = cands.trailing_zeros() as usize;
            let unit = lay.unit_of(first);
            let limit = if unit < lay.ports {
                self.params.paths
            } else {
                1
            };
            let used = self.paths_used[r * lay.units + unit];
            let slots = limit.saturating_sub(used) as usize;
            if unit >= lay.ports {
                cands &= cands - 1;
                // The host interface feeds every injection FIFO of the node;
                // while it is busy no FIFO starts a packet (a WAKE is due).
                if slots == 0 || self.host_free_at[lay.fifo_node(r, unit)] > t as f64 {
                    continue;
                }
                if let Some(req) = self.route_head(r, t, unit, first, out_taken, free_out) {
                    self.requests.push(req);
                }
                continue;
            }
            let mut feasible = [(0u32, 0usize); 8];
            let mut k = 0;
            let unit_mask: QueueSet = ((1 << lay.vcs) - 1) << (unit * lay.vcs);
            let mut pending = cands & unit_mask;
            cands &= !unit_mask;
            while pending != 0 {
                let q = pending.trailing_zeros() as usize;
                pending &= pending - 1;
                let Some(req) = self.route_head(r, t, unit, q, out_taken, free_out) else {
                    continue;
                };
                if req.out == EJECT {
                    self.requests.push(req);
                } else if slots > 0 {
                    feasible[k] = (0, self.requests.len());
                    self.requests.push(req);
                    k += 1;
                }
            }
            if k > slots {
                // Receiver arbitration: the priority VC first, then modified
                // SLQ (fullest first) or a random order. Losers withdraw.
                let slq = self.params.arbitration == Arbitration::Slq
                    && self.rngs[r].random_bool(self.params.slq_fraction);
                for item in feasible.iter_mut().take(k) {
                    let req = self.requests[item.1];
                    let noise = self.rngs[r].random::<u32>() >> 8;
                    item.0 = ((req.priority as u32) << 31)
                        | if slq { (req.fullness as u32) << 24 } else { 0 }
                        | noise;
                }
                feasible[..k].sort_unstable_by(|a, b| b.0.cmp(&a.0));
                for item in feasible.iter().take(k).skip(slots) {
                    self.requests[item.1].out = WITHDRAWN;
                }
            }
        }
    }

    #[inline]
    fn fullness(&self, qi: usize) -> u8 {
        ((self.q_used[qi] as u32 * 4 / self.cap.max(1) as u32).min(3)) as u8
    }

    #[inline]
    fn link_free(&self, r: usize, o: usize, t: u64, out_taken: u64) -> bool {
        out_taken & (1 << o) == 0 && self.out_free_at[r * self.lay.ports + o] <= t
    }

    #[inline]
    fn mark_depleted(&mut self, r: usize, o: usize, t: u64) {
        let i = r * self.lay.ports + o;
        if self.depleted_since[i] == u64::MAX {
            self.depleted_since[i] = t;
        }
    }

    /// Step 1: the route choice of the head packet of queue `q`.
    fn route_head(
        &mut self,
        r: usize,
        t: u64,
        unit: usize,
        q: usize,
        out_taken: u64,
        free_out: u64,
    ) -> Option<Request> {
        let lay = self.lay;
        let qi = r * lay.queues + q;
        let p = *self.pool.get(self.q_head[qi]);
        let network = unit < lay.ports;
        let fullness = self.fullness(qi);
        let priority = p.flags & flags::PRIORITY != 0;
        let mk = |out: u8, vc: usize, cost: u16, crossed: bool| Request {
            unit: unit as u8,
            queue: q as u8,
            out,
            vc: vc as u8,
            cost: cost as u8,
            crossed,
            priority,
            network,
            fullness,
        };
        if p.route_escape == crate::packet::AT_DESTINATION {
            // From a network input: its reception path must be free. From an
            // injection FIFO (a node of the same router): the data turn
            // around in the router, paced by the host interface.
            return (!network || self.recv_free_at[r * lay.ports + unit] <= t)
                .then(|| mk(EJECT, p.vc as usize, 0, false));
        }
        let chunks = self.chunks(p.bytes);
        let full = self.full;
        let adaptive = !priority && self.mode == RoutingMode::Adaptive && lay.dynamic > 0;
        let dyn_mask = if adaptive { p.route_mask as u64 } else { 0 };
        let esc_port = p.route_escape;
        if (dyn_mask | 1 << esc_port) & free_out == 0 {
            return None;
        }
        if adaptive {
            let mut mask = dyn_mask & free_out;
            let mut best: Option<(u8, u8, u8)> = None;
            let mut ties = 0u32;
            while mask != 0 {
                let o = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                if !self.link_free(r, o, t, out_taken) {
                    continue;
                }
                let mut any = false;
                for d in 0..lay.dynamic {
                    let tok = self.out_tokens[(r * lay.ports + o) * lay.vcs + d];
                    if tok < full {
                        continue;
                    }
                    any = true;
                    let range = if self.params.jsq {
                        (tok as u32 * 4 / self.cap as u32).min(3) as u8
                    } else {
                        0
                    };
                    match best {
                        Some((br, _, _)) if br > range => {}
                        Some((br, _, _)) if br == range => {
                            ties += 1;
                            if self.rngs[r].random_range(0..ties + 1) == 0 {
                                best = Some((range, o as u8, d as u8));
                            }
                        }
                        _ => {
                            best = Some((range, o as u8, d as u8));
                            ties = 0;
                        }
                    }
                }
                if !any {
                    self.mark_depleted(r, o, t);
                }
            }
            if let Some((_, o, d)) = best {
                return Some(mk(o, d as usize, chunks, false));
            }
        }
        // The escape route (also deterministic traffic and priority packets).
        let o = esc_port as usize;
        if !self.link_free(r, o, t, out_taken) {
            return None;
        }
        let on_vc = |v: usize| network && p.vc as usize == v;
        let straight = network && self.routing.straight(unit as u8) as usize == o;
        let tokens = |s: &Self, v: usize| s.out_tokens[(r * lay.ports + o) * lay.vcs + v];
        let (vc, need, cost, crossed) = if priority && lay.hp.is_some() {
            let v = lay.hp.unwrap_or(0);
            let entering = !(on_vc(v) && straight);
            (v, full * (1 + entering as u16), full, false)
        } else {
            match self.params.escape {
                Escape::Bubble | Escape::BubbleFullCounts => {
                    let v = lay.esc;
                    let entering = !(on_vc(v) && straight);
                    let cost = if self.params.escape == Escape::Bubble {
                        full
                    } else {
                        chunks
                    };
                    (v, full * (1 + entering as u16), cost, false)
                }
                Escape::BubbleUnfixed => {
                    let v = lay.esc;
                    let entering = !(on_vc(v) && straight);
                    (v, chunks + full * entering as u16, chunks, false)
                }
                Escape::DatelineDimension | Escape::DatelineDirection => {
                    let on_escape =
                        network && (p.vc as usize) >= lay.esc && (p.vc as usize) < lay.esc + 2;
                    let same_ring = on_escape
                        && self.routing.ring(o as u8)
                            == self.routing.ring(self.routing.straight(unit as u8));
                    let crossed = (same_ring && p.flags & flags::CROSSED != 0)
                        || self.routing.is_dateline(r as u32, o as u8);
                    (lay.esc + crossed as usize, full, chunks, crossed)
                }
                Escape::HopClass => {
                    let src = self.router_of(p.src);
                    let class = self.routing.vc_class(r as u32, src, p.hints, o as u8);
                    (lay.esc + class as usize, full, chunks, false)
                }
                Escape::None => {
                    // Dimension order on the dynamic VCs, the most tokens first.
                    let d = (0..lay.dynamic)
                        .max_by_key(|&d| (tokens(self, d), std::cmp::Reverse(d)))?;
                    (d, full, chunks, false)
                }
            }
        };
        if tokens(self, vc) >= need {
            Some(mk(o as u8, vc, cost, crossed))
        } else {
            self.mark_depleted(r, o, t);
            None
        }
    }

    /// Step 3: the winner among the requests for output `out`: priority
    /// packets first, then in-network packets on `network_priority` of the
    /// arbitrations, then the fullest (SLQ cycles) or any, at random.
    fn sender_arbitration(&mut self, r: usize, out: u8, q_taken: QueueSet) -> Option<Request> {
        let open = |q: &Request| q.out == out && q_taken & (1 << q.queue) == 0;
        let (mut any, mut any_priority, mut any_network) = (false, false, false);
        for q in self.requests.iter().filter(|q| open(q)) {
            any = true;
            any_priority |= q.priority;
            any_network |= q.network;
        }
        if !any {
            return None;
        }
        let prefer_network = any_network
            && self.params.network_priority > 0.0
            && (self.params.network_priority >= 1.0
                || self.rngs[r].random_bool(self.params.network_priority));
        let keep = |q: &Request| {
            open(q)
                && (!any_priority || q.priority)
                && (any_priority || !prefer_network || q.network)
        };
        let slq = self.params.arbitration == Arbitration::Slq
            && self.rngs[r].random_bool(self.params.slq_fraction);
        let top = if slq {
            self.requests
                .iter()
                .filter(|q| keep(q))
                .map(|q| q.fullness)
                .max()
                .unwrap_or(0)
        } else {
            0
        };
        let eligible = |q: &Request| keep(q) && (!slq || q.fullness == top);
        let n = self.requests.iter().filter(|q| eligible(q)).count();
        let k = self.rngs[r].random_range(0..n);
        self.requests.iter().filter(|q| eligible(q)).nth(k).copied()
    }

    fn grant_hop(&mut self, r: usize, t: u64, req: Request) {
        let lay = self.lay;
        let qi = r * lay.queues + req.queue as usize;
        let pkt = self.pop_queue(qi);
        let o = req.out as usize;
        let oi = r * lay.ports + o;
        let p = *self.pool.get(pkt);
        let wire = self.port_wire_cycles(p.bytes, o);
        self.out_free_at[oi] = t + wire;
        self.out_tokens[oi * lay.vcs + req.vc as usize] -= req.cost as u16;
        if req.unit as usize >= lay.ports {
            self.charge_host(lay.fifo_node(r, req.unit as usize), t, p.bytes);
        }
        self.paths_used[r * lay.units + req.unit as usize] += 1;
        let local_vc = if (req.unit as usize) < lay.ports {
            p.vc
        } else {
            0
        };
        self.wheel.schedule(
            t + wire,
            Ev {
                kind: DONE,
                a: req.unit,
                b: local_vc,
                router: r as u32,
                x: p.charged as u32,
            },
        );
        let (w, i) = self
            .routing
            .neighbor(r as u32, req.out)
            .expect("routes use connected ports");
        {
            let pm = self.pool.get_mut(pkt);
            pm.vc = req.vc;
            pm.input = i;
            pm.charged = req.cost;
            pm.hops += 1;
            if req.crossed {
                pm.flags |= flags::CROSSED;
            } else {
                pm.flags &= !flags::CROSSED;
            }
        }
        // Statistics: PA counters, per-VC traffic, utilisation windows.
        if t >= self.run.warmup {
            let c = &mut self.counters[oi];
            c.bytes += p.bytes as u64;
            c.packets += 1;
            c.busy_cycles += wire;
            self.busy_measured += wire;
            self.payload_measured += p.payload as u64;
            self.vc_hops[req.vc as usize] += 1;
        }
        self.win_busy += wire;
        if self.depleted_since[oi] != u64::MAX {
            if self.token_at[oi] == t {
                self.unblocks += 1;
                self.win_unblocks += 1;
            }
            let since = self.depleted_since[oi].max(self.run.warmup);
            if t > since {
                self.counters[oi].depleted_cycles += t - since;
            }
            self.depleted_since[oi] = u64::MAX;
        }
        self.last_progress = t;
        // A planted fault strikes at router 0, whatever the partitions.
        if let (Some(fault), 0) = (self.run.plant, r) {
            if !self.planted_done && t >= self.run.plant_after {
                match fault {
                    PlantedFault::DropPacket => {
                        // The packet vanishes on the wire (its tokens stay charged downstream).
                        self.planted_done = true;
                        self.pool.release(pkt);
                        return;
                    }
                    PlantedFault::CorruptPayload => {
                        self.planted_done = true;
                        self.pool.get_mut(pkt).payload ^= 1;
                    }
                    PlantedFault::LeakToken => {}
                }
            }
        }
        let at = t + self.params.hop_latency_cycles as u64;
        let ev = Ev { kind: ARRIVE, a: i, b: req.vc, router: w, x: pkt };
        if self.owns(w) {
            self.wheel.schedule(at, ev);
        } else {
            // The packet moves to the partition of the next router.
            self.mail_arrive(at, ev, pkt);
        }
    }

    /// The packet's data cross node `node`'s host interface (K: the
    /// CPU-ICC bus; Aries: PCIe to the NIC) at its rate; the node's next
    /// injection waits for it.
    fn charge_host(&mut self, node: usize, t: u64, bytes: u16) {
        if !self.params.host_bytes_per_cycle.is_finite() {
            return;
        }
        let free =
            self.host_free_at[node].max(t as f64) + bytes as f64 / self.params.host_bytes_per_cycle;
        self.host_free_at[node] = free;
        self.wheel.schedule(
            free.ceil() as u64,
            Ev {
                kind: WAKE,
                a: 0,
                b: 0,
                router: node as u32,
                x: 0,
            },
        );
    }

    fn grant_eject(&mut self, r: usize, t: u64, req: Request) {
        let lay = self.lay;
        let qi = r * lay.queues + req.queue as usize;
        let pkt = self.pop_queue(qi);
        let p = *self.pool.get(pkt);
        if (req.unit as usize) < lay.ports {
            self.recv_free_at[r * lay.ports + req.unit as usize] = t + p.bytes as u64;
        } else {
            self.charge_host(lay.fifo_node(r, req.unit as usize), t, p.bytes);
        }
        self.wheel.schedule(
            t + p.bytes as u64,
            Ev {
                kind: DELIVER,
                a: req.unit,
                b: p.vc,
                router: r as u32,
                x: pkt,
            },
        );
        self.last_progress = t;
    }
}
