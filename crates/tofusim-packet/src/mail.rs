//! Mail between partitions: the events one partition makes for routers
//! another owns — a packet arriving at a router there, tokens returning to
//! one — encoded at the end of a window and taken in by the owner.

use crate::event::{Ev, EvKind};
use crate::packet::{Packet, Pool};
use crate::wire::{Put, Reader};
use tofusim_des::TimeWheel;

/// This partition's share of the network and its outgoing mail.
pub(crate) struct Mail {
    /// The partition of each router (all 0 when the run is not split).
    pub owner: std::sync::Arc<[u16]>,
    /// This engine's partition.
    pub me: u16,
    /// Encoded events for each partition.
    pub outbox: Vec<Vec<u8>>,
    /// Packets handed to other partitions in the current window, and the
    /// earliest cycle of anything mailed in it (`u64::MAX`: nothing).
    pub moved_out: u64,
    pub mailed_min: u64,
}

fn put_event(buf: &mut Vec<u8>, at: u64, ev: Ev) {
    buf.put_u8(ev.kind as u8);
    buf.put_u64(at);
    buf.put_u16(ev.a);
    buf.put_u8(ev.b);
    buf.put_u32(ev.router);
    buf.put_u32(ev.x);
}

/// A packet whose header reaches router `ev.router` (of another partition) at `at`.
fn put_arrive(buf: &mut Vec<u8>, at: u64, ev: Ev, p: &Packet) {
    put_event(buf, at, ev);
    buf.put_u32(p.src);
    buf.put_u32(p.dst);
    buf.put_u32(p.serial);
    buf.put_u64(p.created);
    buf.put_u32(p.tag);
    buf.put_u32(p.checksum);
    buf.put_u16(p.bytes);
    buf.put_u16(p.payload);
    buf.put_u16(p.hops);
    buf.put_u8(p.hints);
    buf.put_u8(p.detour);
    buf.put_u8(p.vc);
    buf.put_u16(p.input);
    buf.put_u8(p.charged);
    buf.put_u8(p.flags);
    buf.put_u16(p.route_mask);
    buf.put_u8(p.route_escape);
}


impl Mail {
    /// One partition holding `routers` routers.
    pub fn whole(routers: usize) -> Self {
        Mail { owner: vec![0u16; routers].into(), me: 0, outbox: vec![Vec::new()], moved_out: 0, mailed_min: u64::MAX }
    }

    /// Whether router `r` belongs to this partition.
    #[inline]
    pub fn owns(&self, r: u32) -> bool {
        self.owner[r as usize] == self.me
    }

    /// Mails packet `pkt` with its event at router `ev.router` of another
    /// partition at `at` (its header arriving there, or its return to its
    /// source to be sent again), and lets go of it here.
    pub fn packet(&mut self, at: u64, ev: Ev, pkt: u32, pool: &mut Pool) {
        let to = self.owner[ev.router as usize] as usize;
        put_arrive(&mut self.outbox[to], at, ev, pool.get(pkt));
        pool.release(pkt);
        self.moved_out += 1;
        self.mailed_min = self.mailed_min.min(at);
    }

    /// Mails tokens that reach router `ev.router` of another partition at `at`.
    pub fn token(&mut self, at: u64, ev: Ev) {
        let to = self.owner[ev.router as usize] as usize;
        put_event(&mut self.outbox[to], at, ev);
        self.mailed_min = self.mailed_min.min(at);
    }

    /// Takes in the events another partition made for this one.
    pub fn receive(&self, bytes: &[u8], pool: &mut Pool, wheel: &mut TimeWheel<Ev>) {
        let mut r = Reader::new(bytes);
        while !r.done() {
            let kind = EvKind::from_u8(r.u8());
            let at = r.u64();
            let (a, b) = (r.u16(), r.u8());
            let mut ev = Ev { kind, a, b, router: r.u32(), x: r.u32() };
            debug_assert!(self.owns(ev.router), "mail for another partition");
            match kind {
                EvKind::Arrive | EvKind::Resend => {
                    let p = Packet {
                        next: crate::packet::NONE,
                        src: r.u32(),
                        dst: r.u32(),
                        serial: r.u32(),
                        created: r.u64(),
                        tag: r.u32(),
                        checksum: r.u32(),
                        bytes: r.u16(),
                        payload: r.u16(),
                        hops: r.u16(),
                        hints: r.u8(),
                        detour: r.u8(),
                        vc: r.u8(),
                        input: r.u16(),
                        charged: r.u8(),
                        flags: r.u8(),
                        route_mask: r.u16(),
                        route_escape: r.u8(),
                    };
                    ev.x = pool.alloc(p);
                }
                EvKind::Token => {}
                _ => unreachable!("only arrivals, resends and tokens cross partitions"),
            }
            wheel.schedule(at, ev);
        }
    }
}
