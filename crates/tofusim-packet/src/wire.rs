//! Bytes between partitions: the events one partition makes for another
//! (a packet arriving at a router there, tokens returning to one), and the
//! little-endian reader and writer the reports and summaries use too.

use crate::traffic::Traffic;
use crate::engine::{Engine, Ev, ARRIVE, TOKEN};
use crate::packet::Packet;

/// Appends little-endian fields to a buffer.
pub(crate) trait Put {
    fn put_u8(&mut self, x: u8);
    fn put_u16(&mut self, x: u16);
    fn put_u32(&mut self, x: u32);
    fn put_u64(&mut self, x: u64);
    fn put_f64(&mut self, x: f64) {
        self.put_u64(x.to_bits());
    }
    fn put_bytes(&mut self, b: &[u8]);
}

impl Put for Vec<u8> {
    fn put_u8(&mut self, x: u8) {
        self.push(x);
    }
    fn put_u16(&mut self, x: u16) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn put_u32(&mut self, x: u32) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn put_u64(&mut self, x: u64) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn put_bytes(&mut self, b: &[u8]) {
        self.put_u64(b.len() as u64);
        self.extend_from_slice(b);
    }
}

/// Reads what [`Put`] wrote, in the same order. Reading past the end is a
/// bug in the writer, not bad input: it panics.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, at: 0 }
    }
    pub fn done(&self) -> bool {
        self.at >= self.buf.len()
    }
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let b = self.buf[self.at..self.at + N].try_into().expect("N bytes");
        self.at += N;
        b
    }
    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub fn f64(&mut self) -> f64 {
        f64::from_bits(self.u64())
    }
    pub fn bytes(&mut self) -> &'a [u8] {
        let n = self.u64() as usize;
        self.at += n;
        &self.buf[self.at - n..self.at]
    }
}

fn put_event(buf: &mut Vec<u8>, at: u64, ev: Ev) {
    buf.put_u8(ev.kind);
    buf.put_u64(at);
    buf.put_u8(ev.a);
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
    buf.put_u8(p.vc);
    buf.put_u8(p.input);
    buf.put_u8(p.charged);
    buf.put_u8(p.flags);
    buf.put_u16(p.route_mask);
    buf.put_u8(p.route_escape);
}

impl<W: Traffic> Engine<W> {
    /// Mails packet `pkt`, whose header reaches router `ev.router` of
    /// another partition at `at`, and lets go of it here.
    pub(crate) fn mail_arrive(&mut self, at: u64, ev: Ev, pkt: u32) {
        let to = self.owner[ev.router as usize] as usize;
        put_arrive(&mut self.outbox[to], at, ev, self.pool.get(pkt));
        self.pool.release(pkt);
        self.moved_out += 1;
        self.mailed_min = self.mailed_min.min(at);
    }

    /// Mails tokens that reach router `ev.router` of another partition at `at`.
    pub(crate) fn mail_token(&mut self, at: u64, ev: Ev) {
        let to = self.owner[ev.router as usize] as usize;
        put_event(&mut self.outbox[to], at, ev);
        self.mailed_min = self.mailed_min.min(at);
    }

    /// Takes in the events another partition made for this one.
    pub(crate) fn receive(&mut self, bytes: &[u8]) {
        let mut r = Reader::new(bytes);
        while !r.done() {
            let kind = r.u8();
            let at = r.u64();
            let mut ev = Ev { kind, a: r.u8(), b: r.u8(), router: r.u32(), x: r.u32() };
            debug_assert!(self.owns(ev.router), "mail for another partition");
            match kind {
                ARRIVE => {
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
                        vc: r.u8(),
                        input: r.u8(),
                        charged: r.u8(),
                        flags: r.u8(),
                        route_mask: r.u16(),
                        route_escape: r.u8(),
                    };
                    ev.x = self.pool.alloc(p);
                }
                TOKEN => {}
                _ => unreachable!("only arrivals and tokens cross partitions"),
            }
            self.wheel.schedule(at, ev);
        }
    }
}
