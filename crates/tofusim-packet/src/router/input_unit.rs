//! Input units: each network input's VC buffers and each node's injection
//! FIFOs, as linked queues of packets in the pool, with the chunks each
//! holds (packets waiting and tails still leaving) and the receiver→sender
//! paths in use. An index of the heads lets arbitration skip heads whose
//! outputs are all busy without touching the packets: per queue, the
//! outputs its head could use (`heads`), and per router and output, the
//! queues whose head could use it (`want`).

use super::route::head_candidates;
use crate::layout::{Layout, HEAD_EJECTS};
use crate::limits::{Cause, HeadClock, CAUSES};
use crate::net::Net;
use crate::packet::{list_pop, list_push, Pool, NONE};
use crate::partition::Ownership;

/// Per router and queue (and per router and input unit), SoA.
pub(crate) struct InputUnits {
    pub q_head: Vec<u32>,
    pub q_tail: Vec<u32>,
    /// Chunks held in each queue.
    pub q_used: Vec<u16>,
    /// Per queue, its head: the outputs the head packet could use (bit
    /// per port; [`HEAD_EJECTS`] at its destination) and its clock.
    pub heads: Vec<QueueHead>,
    /// Per router and output (then one entry for heads at their
    /// destination): the queues whose head could use it. Arbitration ORs
    /// the entries of the free outputs instead of visiting every queue.
    /// `lay.qwords` words per (router, output).
    pub want: Vec<u64>,
    /// Receiver→sender paths in use, per router and input unit.
    pub paths_used: Vec<u8>,
    /// Packet-cycles heads were blocked after the warm-up, by cause
    /// ([`crate::limits`]).
    pub blocked: [u64; CAUSES],
}

/// A queue's head: its candidate outputs and its clock, together (they
/// change at the same moments).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QueueHead {
    pub cand: u64,
    pub clock: HeadClock,
}

impl InputUnits {
    pub fn new(lay: &Layout, own: Ownership) -> Self {
        let q = lay.routers * lay.queues;
        InputUnits {
            q_head: own.filled(lay.routers, lay.queues, NONE),
            q_tail: own.filled(lay.routers, lay.queues, NONE),
            q_used: vec![0; q],
            heads: vec![QueueHead::default(); q],
            want: vec![0; lay.routers * (lay.ports + 1) * lay.qwords],
            paths_used: vec![0; lay.routers * lay.units],
            blocked: [0; CAUSES],
        }
    }

    /// Appends packet `pkt` (its route already computed) to queue `qi`
    /// (of router `r`) at `t`.
    #[inline]
    pub fn push(&mut self, r: usize, qi: usize, pkt: u32, net: &Net, pool: &mut Pool, t: u64) {
        if self.q_tail[qi] == NONE {
            let cand = head_candidates(net, pool, pkt);
            self.set_head_candidates(r, qi, cand, &net.lay);
            self.heads[qi].clock = HeadClock::new(t, Cause::Link);
        }
        list_push(pool, &mut self.q_head[qi], &mut self.q_tail[qi], pkt);
    }

    /// Takes the head packet of queue `qi` (of router `r`) at `t`.
    #[inline]
    pub fn pop(&mut self, r: usize, qi: usize, net: &Net, pool: &Pool, t: u64) -> u32 {
        let h = list_pop(pool, &mut self.q_head[qi], &mut self.q_tail[qi]);
        let next = self.q_head[qi];
        let cand = if next == NONE {
            0
        } else {
            self.heads[qi].clock = HeadClock::new(t, Cause::Link);
            head_candidates(net, pool, next)
        };
        self.set_head_candidates(r, qi, cand, &net.lay);
        h
    }

    /// The head of queue `qi` cannot go at `t`, for `cause`.
    #[inline]
    pub fn block(&mut self, qi: usize, t: u64, cause: Cause, warmup: u64) {
        self.heads[qi].clock.block(t, cause, &mut self.blocked, warmup);
    }

    /// The head of queue `qi` goes at `t`: its last wait is charged.
    #[inline]
    pub fn granted(&mut self, qi: usize, t: u64, warmup: u64) {
        self.heads[qi].clock.granted(t, &mut self.blocked, warmup);
    }

    /// Records the outputs the new head of queue `qi` could use, in
    /// `heads` and in the router's per-output `want` masks.
    #[inline]
    fn set_head_candidates(&mut self, r: usize, qi: usize, cand: u64, lay: &Layout) {
        // The router comes from the caller: dividing `qi` showed in profiles.
        let q = qi - r * lay.queues;
        let wbase = r * (lay.ports + 1);
        let (word, bit) = (q / 64, 1u64 << (q % 64));
        let old = std::mem::replace(&mut self.heads[qi].cand, cand);
        let mut m = old ^ cand;
        while m != 0 {
            let b = m.trailing_zeros();
            m &= m - 1;
            let w = if 1 << b == HEAD_EJECTS { lay.ports } else { b as usize };
            self.want[(wbase + w) * lay.qwords + word] ^= bit;
        }
    }
}
