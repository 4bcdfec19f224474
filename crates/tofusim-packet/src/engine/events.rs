//! What each event does at its router (see the table in [`crate::engine`]).
//!
//! Events that commute are applied at once; those that do not (a node's
//! software at work, packets being created) become node actions
//! ([`crate::actions`]) run at the router's arbitration.

use crate::traffic::Traffic;
use super::actions::Kind;
use crate::config::PlantedFault;
use super::Engine;
use crate::event::{Ev, EvKind};
use crate::router::route::cache_route;
use crate::packet::{checksum, flags};
use crate::result::InvariantError;
use rand::RngExt;

impl<W: Traffic> Engine<W> {
    pub(crate) fn apply(&mut self, ev: Ev, t: u64) {
        let r = ev.router as usize;
        let lay = self.net.lay;
        match ev.kind {
            EvKind::Arrive => {
                if let (Some(o), Some(f)) = (&self.outages, &self.net.faults) {
                    if o.cut(f, ev.router, ev.a as usize, lay.ports, t, self.net.params.hop_latency_cycles as u64) {
                        self.lose_on_arrival(ev, t);
                        return;
                    }
                }
                let qi = r * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
                let charged = self.pool.get(ev.x).charged as u16;
                self.router.inputs.q_used[qi] += charged;
                self.stats.held_chunks[ev.b as usize] += charged as u64;
                cache_route(&self.net, &mut self.pool, ev.router, ev.x);
                self.router.inputs.push(r, qi, ev.x, &self.net, &mut self.pool, t);
                let p = self.pool.get(ev.x);
                if p.flags & flags::DEPOSIT != 0 && self.net.router_of(p.dst) != ev.router {
                    // The copy is complete in the reception FIFO when the tail
                    // is in (deposits: one node per router).
                    let (tag, bytes) = (p.tag, p.bytes);
                    self.stats.deposits += 1;
                    let node = ev.router * lay.npr as u32;
                    let ready = t + self.net.wire_cycles(bytes);
                    self.defer(Kind::Deposit, node, ev.a as u32, tag, ready);
                }
                self.mark_dirty(ev.router);
            }
            // EvKind::Release, EvKind::Wake, EvKind::Trace and EvKind::Inject address a node.
            EvKind::Release => {
                let (_, lane, serial) = self.nic.messages.owner(ev.x);
                self.defer(Kind::Release { lane, serial }, ev.router, 0, ev.x, t);
            }
            EvKind::Wake => self.mark_dirty(self.net.router_of(ev.router)),
            EvKind::LinkTimeout => {
                let (router, mut env) = self.router_env();
                router.link_timeout(r, ev.a as usize, t, &mut env);
            }
            EvKind::Trace => self.defer(Kind::Trace, ev.router, ev.x, 0, t),
            EvKind::Done => {
                let unit = ev.a as usize;
                self.router.inputs.paths_used[r * lay.units + unit] -= 1;
                let qi = r * lay.queues + lay.queue_of(unit, ev.b as usize);
                self.router.inputs.q_used[qi] -= ev.x as u16;
                if unit < lay.ports {
                    self.stats.held_chunks[ev.b as usize] -= ev.x as u64;
                    self.return_tokens(ev.router, ev.a as u8, ev.b, ev.x, t);
                }
                self.mark_dirty(ev.router);
            }
            EvKind::Token => {
                let oi = r * lay.ports + ev.a as usize;
                let ti = oi * lay.vcs + ev.b as usize;
                // A planted leak strikes at router 0, whatever the
                // partitions: at the end of the first cycle it gets tokens,
                // on its lowest output and VC that got them.
                if self.net.run.plant == Some(PlantedFault::LeakToken) && r == 0 && !self.router.planted_done && t >= self.net.run.plant_after {
                    self.leak_at = Some(self.leak_at.map_or(ti, |i| i.min(ti)));
                }
                self.router.outputs.out_tokens[ti] += ev.x as u16;
                self.stats.token_returns += 1;
                self.stats.win_tokens += 1;
                self.router.outputs.token_at[oi] = t;
                // Tokens can only unblock a head that was refused for lack of
                // them at this output (heads waiting for a busy link or path
                // are woken by the EvKind::Done that frees it).
                if self.router.outputs.depleted_since[oi] != u64::MAX {
                    self.stats.win_blocked_tokens += 1;
                    self.mark_dirty(ev.router);
                }
            }
            EvKind::Deliver => self.deliver(ev, t),
            // Bookkeeping, one copy per partition: not counted as an event
            // (a split run counts what an unsplit one does).
            EvKind::Fault => self.stats.events -= 1,
            EvKind::Resend => {
                let p = self.pool.get(ev.x);
                let (node, serial) = (p.src, p.serial);
                self.defer(Kind::Resend, node, serial, ev.x, t);
            }
            EvKind::Inject => self.defer(Kind::Inject, ev.router, 0, 0, t),
        }
    }

    /// An open-loop packet at node `node` (a node action), and the time of
    /// the next.
    pub(crate) fn inject(&mut self, node: u32, t: u64) {
        let home = self.net.router_of(node) as usize;
        let rng = &mut self.router.rngs[home];
        if let Some(np) = self.workload.open_packet(node, rng) {
            let pkt = self.create(node, t, t, np);
            self.push_source(node as usize, 0, pkt);
        }
        self.schedule_injection(node, t);
    }

    /// Schedules the token return for a tail that left input `port` (VC
    /// `vc`) of `r`, or mails it to the upstream router's partition.
    pub(crate) fn return_tokens(&mut self, r: u32, port: u8, vc: u8, chunks: u32, t: u64) {
        if let Some((up, up_port)) = self.net.routing.upstream(r, port) {
            let at = t + self.net.params.token_latency_cycles as u64;
            let ev = Ev { kind: EvKind::Token, a: up_port as u16, b: vc, router: up, x: chunks };
            if self.owns(up) {
                self.wheel.schedule(at, ev);
            } else {
                self.mail.token(at, ev);
            }
        }
    }

    fn deliver(&mut self, ev: Ev, t: u64) {
        let r = ev.router as usize;
        let lay = self.net.lay;
        let p = *self.pool.get(ev.x);
        let qi = r * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
        self.router.inputs.q_used[qi] -= p.charged as u16;
        if (ev.a as usize) < lay.ports {
            self.stats.held_chunks[ev.b as usize] -= p.charged as u64;
            self.return_tokens(ev.router, ev.a as u8, ev.b, p.charged as u32, t);
        }
        if p.flags & flags::LIVE == 0 {
            let detail = format!("packet {} of node {} delivered twice at router {}", p.serial, p.src, self.net.routing.router_label(ev.router));
            self.fail(t, "duplicate-delivery", detail);
            return;
        }
        let misdelivered = self.net.router_of(p.dst) != ev.router;
        if misdelivered {
            let detail = format!(
                "packet {} of node {} for {} delivered at {}",
                p.serial,
                p.src,
                self.net.routing.router_label(self.net.router_of(p.dst)),
                self.net.routing.router_label(ev.router)
            );
            self.fail(t, "wrong-destination", detail);
        }
        if checksum(p.serial, p.src, p.dst, p.tag, p.payload) != p.checksum {
            let detail = format!(
                "packet {} from {} to {}: payload checksum mismatch",
                p.serial,
                self.net.routing.router_label(self.net.router_of(p.src)),
                self.net.routing.router_label(self.net.router_of(p.dst))
            );
            self.fail(t, "payload-checksum", detail);
        }
        self.stats.delivered += 1;
        self.stats.last_progress = self.stats.last_progress.max(t);
        self.stats.last_delivery = Some(t);
        if p.flags & flags::MEASURED != 0 {
            self.stats.hist.add(t - p.created);
        }
        if t >= self.net.run.warmup {
            self.stats.delivered_bytes_measured += p.bytes as u64;
        }
        self.stats.win_delivered_bytes += p.bytes as u64;
        self.stats.win_delivered += 1;
        self.pool.release(ev.x);
        // The destination's software answers (not after a misdelivery: that
        // node is elsewhere, maybe in another partition).
        if self.workload.is_finite() && !misdelivered {
            // The answer runs later in this cycle: its state is asked for now.
            self.workload.prefetch_delivery(p.tag);
            self.defer(Kind::Respond, p.dst, ev.a as u32, p.tag, t);
        }
        self.mark_dirty(ev.router);
    }

    /// The node's software answers a packet fully received at cycle
    /// `ready` (a delivery, or a broadcast deposit): the messages the
    /// workload asks for join the send queue `turn_cycles` later. The
    /// answering thread handles one received packet at a time, so answers
    /// queue up when packets arrive faster than one per `turn_cycles`.
    pub(crate) fn respond(&mut self, r: u32, t: u64, ready: u64, tag: u32) {
        let mut out = std::mem::take(&mut self.new_messages);
        out.clear();
        self.workload.on_delivery(r, ready, tag, &mut out);
        if out.is_empty() {
            self.new_messages = out;
            return;
        }
        // One software thread answers, one received packet at a time.
        let turn = self.workload.turn_cycles();
        let at = if turn == 0 { ready } else { ready.max(self.nic.turn_free_at[r as usize]) + turn };
        if turn > 0 {
            self.nic.turn_free_at[r as usize] = at;
        }
        for m in out.iter().copied() {
            self.post(r, t, at, m);
        }
        self.new_messages = out;
    }

    /// Node `r`'s software posts message `m` at cycle `at`: its packets
    /// are handed to their send lane at the later of `at` and their own
    /// release cycles, and made when they reach the lane's head.
    fn post(&mut self, r: u32, t: u64, at: u64, m: crate::traffic::NewMessage) {
        if m.packets == 0 {
            // Nothing to send (a traffic always sends at least one packet
            // per message; an empty one would hold its entry for ever).
            return;
        }
        let id = self.nic.messages.post(r, m, at);
        self.pending_releases += m.packets as u64;
        self.hand_over(id, t);
    }

    /// Hands the next packets of message `id` to their lane: now if their
    /// time has come, else by a `EvKind::Release` event (paced messages:
    /// one packet at a time, each by its own event). `pending_releases`
    /// counts the packets posted and not yet handed over.
    fn hand_over(&mut self, id: u32, t: u64) {
        while let Some((at, count)) = self.nic.messages.next_hand_over(id) {
            let (node, lane, _) = self.nic.messages.owner(id);
            if at > t {
                self.wheel.schedule(at, Ev { kind: EvKind::Release, a: lane as u16, b: 0, router: node, x: id });
                return;
            }
            self.nic.messages.hand_over(id, count, at);
            self.nic.lane_has_work(node as usize, lane as usize);
            self.pending_releases -= count as u64;
            self.mark_dirty(self.net.router_of(node));
        }
    }

    /// Message `id`'s next packets, released, join their lane (a node
    /// action); a paced message's next packet is scheduled.
    pub(crate) fn release(&mut self, id: u32, t: u64) {
        let (_, count) = self.nic.messages.next_hand_over(id).expect("a release of packets not yet handed over");
        let (node, lane, _) = self.nic.messages.owner(id);
        self.nic.messages.hand_over(id, count, t);
        self.nic.lane_has_work(node as usize, lane as usize);
        self.pending_releases -= count as u64;
        // The software handing over a packet is progress: the stall clock
        // restarts for it.
        self.stats.last_progress = self.stats.last_progress.max(t);
        self.hand_over(id, t);
    }

    /// A trace row's packet enters its source's send queue (a node action).
    pub(crate) fn trace(&mut self, node: u32, row: u32, t: u64) {
        let np = self.workload.trace_packet(row as usize);
        let pkt = self.create(node, t, t, np);
        self.push_source(node as usize, 0, pkt);
        self.trace_pending -= 1;
    }

    /// A collective schedule's first messages at this partition's nodes,
    /// each handed over at its release cycle.
    pub(crate) fn start_schedule(&mut self) {
        let mut first = Vec::new();
        self.workload.start_messages(&mut first);
        for (r, m) in first {
            if self.owns_node(r) {
                self.post(r, 0, m.first.release_cycle, m);
            }
        }
    }

    /// Records an invariant violation. Of several, the run reports the
    /// earliest, then the first by kind and text, so that the choice does
    /// not depend on the order events were applied in or on the partitions.
    pub(crate) fn fail(&mut self, t: u64, kind: &'static str, detail: String) {
        let e = InvariantError { kind, cycle: t, detail };
        if self.error.as_ref().is_none_or(|old| e.precedes(old)) {
            self.error = Some(e);
        }
    }

    pub(crate) fn schedule_injection(&mut self, r: u32, t: u64) {
        let Some(rate) = self.workload.packets_per_cycle(self.net.injection_links) else {
            return;
        };
        if rate <= 0.0 {
            return;
        }
        let gap = if rate >= 1.0 {
            1
        } else {
            let home = self.net.router_of(r) as usize;
            let u: f64 = self.router.rngs[home].random::<f64>();
            1 + ((1.0 - u).ln() / (1.0 - rate).ln()).floor() as u64
        };
        let at = t.saturating_add(gap);
        if self.net.run.cycles.is_none_or(|c| at < c) {
            self.wheel.schedule(at, Ev { kind: EvKind::Inject, a: 0, b: 0, router: r, x: 0 });
        }
    }
}
