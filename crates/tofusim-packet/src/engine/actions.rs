//! Node actions: the part of a cycle that does not commute.
//!
//! A node's software answering a delivery, a packet joining a send queue,
//! an open-loop or trace packet being created — each draws random numbers,
//! numbers packets or queues them, so their order matters. Events that
//! cause them only queue an action on the node's router; the router runs
//! its actions just before it arbitrates, sorted by (node, kind, input or
//! lane, packet), an order that does not depend on which events came out of
//! the wheel first, nor on the partitions the network is split into.

use crate::traffic::Traffic;
use super::Engine;
use crate::packet::NONE;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Trace row `a` enters its source's send queue.
    Trace,
    /// An open-loop packet is created.
    Inject,
    /// Message `x` (the node's message number `serial`) hands packets to
    /// lane `lane`.
    Release { lane: u8, serial: u32 },
    /// The software answers a delivery from input `a` of message tag `x`.
    Respond,
    /// The software answers a broadcast copy deposited from input `a`.
    Deposit,
    /// The MPI layer sends again packet `x` (the node's packet number
    /// `a`), lost on a failed link.
    Resend,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Action {
    next: u32,
    kind: Kind,
    node: u32,
    a: u32,
    x: u32,
    /// When the data are ready (answers), cycles.
    at: u64,
}

impl<W: Traffic> Engine<W> {
    /// Queues an action at `node`'s router and marks the router.
    pub(crate) fn defer(&mut self, kind: Kind, node: u32, a: u32, x: u32, at: u64) {
        let r = self.net.router_of(node);
        let i = self.acts.len() as u32;
        self.acts.push(Action { next: self.act_head[r as usize], kind, node, a, x, at });
        self.act_head[r as usize] = i;
        self.mark_dirty(r);
    }

    /// The canonical rank of an action among its router's.
    fn action_key(&self, a: &Action) -> u64 {
        let node = (a.node as usize % self.net.lay.npr) as u64;
        let (rank, sub) = match a.kind {
            Kind::Trace => (0, a.a as u64),
            Kind::Inject => (1, 0),
            Kind::Release { lane, serial } => (2, (lane as u64) << 32 | serial as u64),
            Kind::Respond => (3, (a.a as u64) << 32 | a.x as u64),
            Kind::Deposit => (4, (a.a as u64) << 32 | a.x as u64),
            // Packet ids differ between partitions; its number does not.
            Kind::Resend => (5, a.a as u64),
        };
        node << 56 | rank << 48 | sub
    }

    /// Runs router `r`'s actions of cycle `t` in canonical order.
    pub(crate) fn run_actions(&mut self, r: usize, t: u64) {
        let mut i = self.act_head[r];
        if i == NONE {
            return;
        }
        self.act_head[r] = NONE;
        let mut order = std::mem::take(&mut self.act_order);
        order.clear();
        while i != NONE {
            let a = self.acts[i as usize];
            order.push((self.action_key(&a), i));
            i = a.next;
        }
        if order.len() > 1 {
            order.sort_unstable_by_key(|&(k, _)| k);
        }
        for &(_, i) in &order {
            let a = self.acts[i as usize];
            match a.kind {
                Kind::Trace => self.trace(a.node, a.a, t),
                Kind::Inject => self.inject(a.node, t),
                Kind::Release { .. } => self.release(a.x, t),
                Kind::Respond | Kind::Deposit => self.respond(a.node, t, a.at, a.x),
                Kind::Resend => self.resend(a.x, t),
            }
        }
        self.act_order = order;
    }
}
