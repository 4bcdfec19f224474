//! Links and routers failing and recovering during a run (the experiment's
//! `[faults] events`).
//!
//! A failure schedule is known to every partition, and each applies it to
//! its own copy of the network's [`FaultMap`] at the start of the event's
//! cycle, before any other event of that cycle: what the cycle's events
//! see does not depend on their order or on the partitions.
//!
//! What a failure does (docs/model.md, "Failures during a run"):
//! - **new routes** avoid it where the routing offers a way round
//!   ([`tofusim_routing::faults`]); a packet with none is set aside from
//!   its send queue until the next event of the schedule (the MPI layer
//!   holds that message and sends the others), and the run stops
//!   `unroutable` when no recovery is scheduled;
//! - **a packet whose header is on the link** when it fails is lost: its
//!   downstream buffer space is given back to the sender (the link's
//!   re-initialisation resets its credits);
//! - **a packet routed into a link that is down** (its route was chosen
//!   before the failure, and no adaptive port takes it) is discarded by
//!   the sender at the link's rate;
//! - a lost packet is **sent again end to end** by its source's MPI layer,
//!   `resend_timeout_cycles` after the loss, on a route chosen then. Its
//!   latency counts from its first creation;
//! - where links have a **link-level protocol** (`[link_errors]`), a
//!   transmission into a link that is down is not accepted: the sender
//!   keeps it and sends it again at each time-out until the link works
//!   again (every failure must then be followed by the link's recovery).
//!   The model decides a transmission's acceptance when it starts, so a
//!   packet whose header is on the wire at the failure's cycle is lost
//!   and sent again end to end as without the protocol; every later one
//!   is held.
//!
//! Every packet is delivered once, or counted lost and sent again
//! (`packets_lost`, `packets_resent`); the audit finds a packet awaiting
//! its resend in the event wheel.

use std::sync::Arc;

use tofusim_routing::FaultMap;

use super::Engine;
use crate::event::{Ev, EvKind};
use crate::packet::flags;
use crate::traffic::Traffic;

/// What fails or recovers: the link out of a port of a router (both
/// directions), or a router with its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultTarget {
    Link { router: u32, port: u8 },
    Router(u32),
}

/// One entry of a failure schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct FaultEvent {
    pub cycle: u64,
    pub target: FaultTarget,
    /// `false`: it fails; `true`: it recovers.
    pub recovers: bool,
}

/// A run's failure schedule and what it needs at run time.
#[derive(Clone, Debug)]
pub(crate) struct Outages {
    /// In cycle order (the order given within a cycle).
    events: Vec<FaultEvent>,
    next: usize,
    /// When the link out of each (router, port) last went down
    /// (`u64::MAX`: never).
    went_down_at: Vec<u64>,
}

impl Outages {
    pub fn new(mut events: Vec<FaultEvent>, links: usize) -> Self {
        events.sort_by_key(|e| e.cycle);
        Outages { events, next: 0, went_down_at: vec![u64::MAX; links] }
    }

    /// The cycles events are due at, each once.
    pub fn cycles(&self) -> impl Iterator<Item = u64> + '_ {
        let mut last = None;
        self.events.iter().map(|e| e.cycle).filter(move |&c| last.replace(c) != Some(c))
    }

    #[inline]
    pub fn due(&self, now: u64) -> bool {
        self.events.get(self.next).is_some_and(|e| e.cycle <= now)
    }

    /// The first recovery scheduled after `t`: what a packet with no
    /// route waits for.
    pub fn next_recovery(&self, t: u64) -> Option<u64> {
        self.events.iter().find(|e| e.recovers && e.cycle > t).map(|e| e.cycle)
    }

    /// Whether a packet whose header reaches input `port` of `r` at `t`,
    /// `hop` cycles after it left the upstream router, was on the link
    /// when it went down (or the link is down now).
    #[inline]
    pub fn cut(&self, faults: &FaultMap, r: u32, port: usize, ports: usize, t: u64, hop: u64) -> bool {
        if faults.down_ports(r) & 1 << port != 0 {
            return true;
        }
        let at = self.went_down_at[r as usize * ports + port];
        at != u64::MAX && at <= t && at > t.saturating_sub(hop)
    }
}

impl<W: Traffic> Engine<W> {
    /// Fails and recovers links and routers during the run, at the
    /// cycles of `events` (router ids and ports of the routing); a lost
    /// packet is sent again `resend_timeout_cycles` after its loss. The
    /// faults set before ([`Self::set_faults`]) stay failed. Before the run.
    pub fn set_fault_events(&mut self, events: Vec<FaultEvent>, resend_timeout_cycles: u64) {
        assert!(self.stats.events == 0, "failure schedules are set before the run");
        if events.is_empty() {
            return;
        }
        let routing = Arc::clone(&self.net.routing);
        let map = match self.net.faults.take() {
            Some(f) => FaultMap::clone(&f),
            None => FaultMap::new(&routing, &[], &[], &[]).expect("an empty map"),
        };
        self.net.faults = Some(Arc::new(map.for_changes(&routing)));
        self.net.resend_timeout_cycles = resend_timeout_cycles.max(1);
        self.outages = Some(Box::new(Outages::new(events, self.net.lay.routers * self.net.lay.ports)));
    }

    /// Puts the schedule's cycles in the wheel (each partition its own):
    /// the loop then stops at them.
    pub(crate) fn schedule_outages(&mut self) {
        let Some(o) = &self.outages else { return };
        let cycles: Vec<u64> = o.cycles().collect();
        for c in cycles {
            if self.net.run.cycles.is_none_or(|end| c < end) {
                self.wheel.schedule(c, Ev { kind: EvKind::Fault, a: 0, b: 0, router: 0, x: 0 });
            }
        }
    }

    /// Applies the failures and recoveries due at `now`, before the
    /// cycle's events: the fault map changes, routes chosen around the
    /// old failures are forgotten, and every router arbitrates again (a
    /// packet waiting for a route may have one now).
    pub(crate) fn apply_outages(&mut self, now: u64) {
        let Some(mut o) = self.outages.take() else { return };
        let routing = Arc::clone(&self.net.routing);
        let ports = self.net.lay.ports;
        while o.due(now) {
            let ev = o.events[o.next];
            o.next += 1;
            let map = Arc::make_mut(self.net.faults.as_mut().expect("set with the schedule"));
            let changed: Vec<u32> = match ev.target {
                FaultTarget::Link { router, port } => {
                    map.set_link(&routing, router, port, ev.recovers).expect("the schedule is validated");
                    let (w, _) = routing.neighbor(router, port).expect("validated");
                    vec![router, w]
                }
                FaultTarget::Router(r) => {
                    map.set_router(&routing, r, ev.recovers).expect("the schedule is validated");
                    std::iter::once(r).chain((0..ports as u8).filter_map(|p| routing.neighbor(r, p).map(|(w, _)| w))).collect()
                }
            };
            if !ev.recovers {
                // Every directed link of the routers touched that is down
                // now and was not: it went down at `now`.
                for &r in &changed {
                    let down = map.down_ports(r);
                    for p in 0..ports {
                        let i = r as usize * ports + p;
                        if down & 1 << p != 0 && (o.went_down_at[i] == u64::MAX || o.went_down_at[i] < now) {
                            o.went_down_at[i] = now;
                        }
                    }
                }
            }
        }
        self.outages = Some(o);
        self.fault_routes.clear();
        // Packets set aside for want of a route try again, back in their
        // send queues in the order they were set aside.
        for (node, lane, pkt) in std::mem::take(&mut self.route_held) {
            self.push_source(node as usize, lane as usize, pkt);
        }
        self.stats.last_progress = self.stats.last_progress.max(now);
        for r in 0..self.net.lay.routers as u32 {
            if self.owns(r) {
                self.mark_dirty(r);
            }
        }
    }

    /// Packet `pkt`, lost on a failed link, is back at its source node
    /// after the MPI layer's time-out (a node action): it gets a route
    /// chosen now and joins its node's send queue.
    pub(crate) fn resend(&mut self, pkt: u32, t: u64) {
        let (node, dst, kept) = {
            let p = self.pool.get(pkt);
            (p.src, p.dst, p.flags & (flags::LIVE | flags::PRIORITY | flags::MEASURED | flags::DEPOSIT))
        };
        let r = self.net.router_of(node);
        let at_entry = self.routes_by_load();
        let hints = if at_entry { 0 } else { self.initial_route(r, dst) };
        let (route, route_flags) = if at_entry {
            (tofusim_routing::SourceRoute { hints, detour: None }, flags::ROUTE_AT_ENTRY)
        } else {
            self.around_faults(r, dst, hints, t)
        };
        let p = self.pool.get_mut(pkt);
        p.hops = 0;
        p.vc = 0;
        p.input = 0;
        p.charged = 0;
        p.set_route(route);
        p.flags = kept | route_flags;
        p.route_mask = 0;
        p.route_escape = 0;
        self.stats.resent += 1;
        self.push_source(node as usize, 0, pkt);
        self.mark_dirty(r);
    }

    /// The packet at the head of a send queue that had no route around
    /// the failures tries again (a failure may have recovered): whether
    /// it has one now.
    pub(crate) fn retry_route(&mut self, pkt: u32, t: u64) -> bool {
        if self.outages.is_none() {
            return false;
        }
        let (src, dst, hints) = {
            let p = self.pool.get(pkt);
            (self.net.router_of(p.src), p.dst, p.hints)
        };
        let (route, route_flags) = self.around_faults(src, dst, hints, t);
        if route_flags & flags::UNROUTABLE != 0 {
            return false;
        }
        let p = self.pool.get_mut(pkt);
        p.set_route(route);
        p.flags = (p.flags & !(flags::UNROUTABLE | flags::DETERMINISTIC)) | route_flags;
        true
    }

    /// Packet `x` arriving at input `a` (VC `b`) of router `r` at `t` was
    /// on a link that failed: lost. Its buffer space goes back to the
    /// sender, and its source sends it again after the time-out.
    pub(crate) fn lose_on_arrival(&mut self, ev: Ev, t: u64) {
        let charged = self.pool.get(ev.x).charged as u32;
        self.return_tokens(ev.router, ev.a as u8, ev.b, charged, t);
        let (_, mut env) = self.router_env();
        crate::router::Router::lose(ev.x, t, &mut env);
    }
}
