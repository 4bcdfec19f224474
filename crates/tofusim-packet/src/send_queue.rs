//! The nodes' software send queues, one per (node, lane): the messages
//! the software has handed over, made into packets one at a time as the
//! queue's head reaches the TNI (as its DMA engine reads a message).
//!
//! A message posted now but handed over later (a send overhead, pacing)
//! waits here too, as one entry: a collective posting hundreds of
//! thousands of messages at once holds one entry per message, not one
//! packet per packet, until the packets can move.

use crate::packet::{Slab, NONE};
use crate::partition::Ownership;
use crate::traffic::{NewMessage, NewPacket};

/// A message posted by a node's software, and how far its packets got.
#[derive(Clone, Copy, Debug)]
struct Posted {
    message: NewMessage,
    node: u32,
    /// When the software posted it: packet `k` is handed over at the later
    /// of this and the packet's own release cycle.
    posted_at: u64,
    /// Packets handed over to the queue so far, and made so far.
    handed: u32,
    made: u32,
    /// Its rank among the node's messages: the canonical order of
    /// hand-overs at one node in one cycle.
    serial: u32,
}

/// Consecutive packets of one message handed over together.
#[derive(Clone, Copy, Debug)]
struct Piece {
    next: u32,
    message: u32,
    packets: u32,
    /// The cycle they were handed over: their packets' creation time.
    handed_at: u64,
}

pub(crate) struct SendQueues {
    lanes: usize,
    /// Per (node, lane): first and last piece.
    head: Vec<u32>,
    tail: Vec<u32>,
    pieces: Slab<Piece>,
    posted: Slab<Posted>,
    /// Per node: the serial of its next message.
    next_serial: Vec<u32>,
    /// Packets posted and not yet made (handed over or not).
    pub unmade: u64,
    /// Packets handed over and not yet made, in all queues: none in most
    /// open-loop runs, where every look into a queue would be a cache miss.
    queued: u64,
}

impl SendQueues {
    /// Nodes sit `npr` to a router; the engine simulates the routers `own`.
    pub fn new(nodes: usize, lanes: usize, npr: usize, own: Ownership) -> Self {
        SendQueues {
            lanes,
            head: own.filled(nodes / npr, npr * lanes, NONE),
            tail: own.filled(nodes / npr, npr * lanes, NONE),
            pieces: Slab::default(),
            posted: Slab::default(),
            next_serial: vec![0; nodes],
            unmade: 0,
            queued: 0,
        }
    }

    /// Node `node` posts `message` at cycle `at`; returns its id.
    pub fn post(&mut self, node: u32, message: NewMessage, at: u64) -> u32 {
        debug_assert!(message.packets >= 1);
        let serial = self.next_serial[node as usize];
        self.next_serial[node as usize] = serial.wrapping_add(1);
        self.unmade += message.packets as u64;
        self.posted.insert(Posted { message, node, posted_at: at, handed: 0, made: 0, serial })
    }

    /// The next packets of message `id` to hand over: the cycle and how
    /// many (all that are left unless it is paced), or `None` when all are.
    pub fn next_hand_over(&self, id: u32) -> Option<(u64, u32)> {
        let p = &self.posted[id];
        let m = &p.message;
        if p.handed == m.packets {
            return None;
        }
        let release = m.first.release_cycle + p.handed as u64 * m.gap_cycles;
        let count = if m.gap_cycles == 0 { m.packets - p.handed } else { 1 };
        Some((p.posted_at.max(release), count))
    }

    /// The node, lane and serial of message `id`.
    pub fn owner(&self, id: u32) -> (u32, u8, u32) {
        let p = &self.posted[id];
        (p.node, p.message.first.lane % self.lanes as u8, p.serial)
    }

    /// Hands the next `count` packets of message `id` to its lane's queue
    /// at cycle `t`.
    pub fn hand_over(&mut self, id: u32, count: u32, t: u64) {
        let (node, lane, _) = self.owner(id);
        self.posted[id].handed += count;
        self.queued += count as u64;
        let i = self.pieces.insert(Piece { next: NONE, message: id, packets: count, handed_at: t });
        let q = node as usize * self.lanes + lane as usize;
        match self.tail[q] {
            NONE => self.head[q] = i,
            last => self.pieces[last].next = i,
        }
        self.tail[q] = i;
    }

    /// Takes the next packet of (node, lane)'s queue, with the cycle its
    /// software handed it over, if any is handed over.
    #[inline]
    pub fn make(&mut self, node: usize, lane: usize) -> Option<(NewPacket, u64)> {
        if self.queued == 0 {
            return None;
        }
        let q = node * self.lanes + lane;
        let i = self.head[q];
        if i == NONE {
            return None;
        }
        let piece = &mut self.pieces[i];
        let (id, handed_at) = (piece.message, piece.handed_at);
        piece.packets -= 1;
        if piece.packets == 0 {
            self.head[q] = piece.next;
            if piece.next == NONE {
                self.tail[q] = NONE;
            }
            self.pieces.free(i);
        }
        let p = &mut self.posted[id];
        let packet = p.message.packet(p.made);
        p.made += 1;
        if p.made == p.message.packets {
            self.posted.free(id);
        }
        self.unmade -= 1;
        self.queued -= 1;
        Some((packet, handed_at))
    }

    /// Packets handed over and waiting in (node, lane)'s queue.
    pub fn waiting(&self, node: usize, lane: usize) -> u64 {
        let mut n = 0;
        let mut i = self.head[node * self.lanes + lane];
        while i != NONE {
            n += self.pieces[i].packets as u64;
            i = self.pieces[i].next;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(dst: u32, packets: u32, gap_cycles: u64) -> NewMessage {
        let first = NewPacket { dst, bytes: 64, payload: 48, tag: dst, hints: None, deposit: false, lane: 0, release_cycle: 10 };
        NewMessage { first, packets, last_bytes: 32, last_payload: 16, gap_cycles }
    }

    #[test]
    fn a_message_is_made_in_order_with_its_last_packet_short() {
        let mut q = SendQueues::new(2, 1, 1, Ownership::whole());
        let id = q.post(1, message(0, 3, 0), 4);
        assert_eq!(q.unmade, 3);
        assert_eq!(q.next_hand_over(id), Some((10, 3)));
        q.hand_over(id, 3, 10);
        assert_eq!(q.next_hand_over(id), None);
        assert_eq!(q.waiting(1, 0), 3);
        let sizes: Vec<_> = std::iter::from_fn(|| q.make(1, 0)).map(|(p, at)| (p.bytes, at)).collect();
        assert_eq!(sizes, [(64, 10), (64, 10), (32, 10)]);
        assert_eq!(q.unmade, 0);
        // Both entries are reused.
        let again = q.post(1, message(0, 1, 0), 0);
        assert_eq!(again, id);
        assert_eq!(q.owner(again), (1, 0, 1));
    }

    #[test]
    fn a_paced_message_is_handed_over_one_packet_at_a_time_and_interleaves() {
        let mut q = SendQueues::new(1, 1, 1, Ownership::whole());
        let paced = q.post(0, message(5, 2, 100), 0);
        assert_eq!(q.next_hand_over(paced), Some((10, 1)));
        q.hand_over(paced, 1, 10);
        assert_eq!(q.next_hand_over(paced), Some((110, 1)));
        let other = q.post(0, message(7, 1, 0), 50);
        q.hand_over(other, 1, 50);
        q.hand_over(paced, 1, 110);
        let order: Vec<_> = std::iter::from_fn(|| q.make(0, 0)).map(|(p, at)| (p.dst, at)).collect();
        assert_eq!(order, [(5, 10), (7, 50), (5, 110)]);
    }

    #[test]
    fn a_late_post_hands_over_at_the_post() {
        let mut q = SendQueues::new(1, 1, 1, Ownership::whole());
        let id = q.post(0, message(0, 2, 5), 40);
        assert_eq!(q.next_hand_over(id), Some((40, 1)));
    }
}
