//! The run-time checks: a full audit (every packet in exactly one place,
//! buffer accounts, the arbitration index, tokens conserved on every link
//! and VC) and the deadlock report (the cycle of waits among blocked VCs).
//!
//! Both work on a split network: each partition checks what it holds and
//! reports the partial sums of the links that cross to other partitions;
//! every partition then reaches the same verdict from all the parts
//! ([`crate::window`] gathers them). Findings are ranked by kind and then
//! by queue or link number, so the verdict names the same violation
//! whatever the partitioning.

use crate::traffic::Traffic;
use std::collections::HashMap;

use super::Engine;
use crate::event::EvKind;
use crate::layout::HEAD_EJECTS;
use crate::packet::NONE;
use crate::result::{BlockedVc, Deadlock};
use crate::wire::{Put, Reader};

/// Kinds of audit finding, in the order a verdict considers them.
const KINDS: [&str; 4] = ["packet-conservation", "arbitration-index", "buffer-accounting", "token-conservation"];

/// One partition's share of an audit.
#[derive(Debug, Default)]
pub(crate) struct AuditPart {
    live: u64,
    found: u64,
    created: u64,
    delivered: u64,
    /// Local violations: (kind index, rank within the kind, detail).
    findings: Vec<(u8, u64, String)>,
    /// Links that cross partitions, by link·VC number: the sender's
    /// tokens, tokens returning, chunks on the wire, chunks in the buffer.
    boundary: Vec<(u64, [u32; 4])>,
}

impl AuditPart {
    pub(crate) fn put(&self, buf: &mut Vec<u8>) {
        for x in [self.live, self.found, self.created, self.delivered] {
            buf.put_u64(x);
        }
        buf.put_u64(self.findings.len() as u64);
        for (k, i, d) in &self.findings {
            buf.put_u8(*k);
            buf.put_u64(*i);
            buf.put_bytes(d.as_bytes());
        }
        buf.put_u64(self.boundary.len() as u64);
        for (i, s) in &self.boundary {
            buf.put_u64(*i);
            s.iter().for_each(|&x| buf.put_u32(x));
        }
    }

    pub(crate) fn get(r: &mut Reader) -> Self {
        let mut a = AuditPart { live: r.u64(), found: r.u64(), created: r.u64(), delivered: r.u64(), ..Default::default() };
        a.findings = (0..r.u64()).map(|_| (r.u8(), r.u64(), String::from_utf8_lossy(r.bytes()).into_owned())).collect();
        a.boundary = (0..r.u64()).map(|_| (r.u64(), [r.u32(), r.u32(), r.u32(), r.u32()])).collect();
        a
    }
}

impl<W: Traffic> Engine<W> {
    /// Audits this partition's routers and nodes.
    pub(crate) fn audit_part(&self) -> AuditPart {
        let lay = self.net.lay;
        let mut part = AuditPart { live: self.pool.live(), created: self.stats.created, delivered: self.stats.delivered, ..Default::default() };
        let mut seen = vec![false; self.pool.iter_live().map(|(i, _)| i as usize + 1).max().unwrap_or(0)];
        let mut twice: Option<(u64, String)> = None;
        let visit = |pkt: u32, seen: &mut Vec<bool>, found: &mut u64, twice: &mut Option<(u64, String)>, place: &str| {
            let i = pkt as usize;
            if i >= seen.len() || seen[i] {
                let p = self.pool.get(pkt);
                let rank = (p.src as u64) << 32 | p.serial as u64;
                if twice.as_ref().is_none_or(|(r, _)| rank < *r) {
                    *twice = Some((rank, format!("packet {} of node {} found twice or not live ({place})", p.serial, p.src)));
                }
                return false;
            }
            seen[i] = true;
            *found += 1;
            true
        };
        let mut found = 0u64;
        let mut charged_in = vec![0u32; lay.routers * lay.queues];
        let owned = |r: usize| self.mail.owner[r] == self.mail.me;
        for qi in 0..lay.routers * lay.queues {
            if !owned(qi / lay.queues) {
                continue;
            }
            let mut p = self.router.inputs.q_head[qi];
            while p != NONE {
                if !visit(p, &mut seen, &mut found, &mut twice, "in a queue") {
                    break;
                }
                charged_in[qi] += self.pool.get(p).charged as u32;
                p = self.pool.get(p).next;
            }
        }
        // Packets of posted messages not yet made: waiting in a send queue,
        // or held by the software for later.
        let mut waiting = 0u64;
        for i in 0..self.net.nodes * self.nic.lanes {
            if !self.owns_node((i / self.nic.lanes) as u32) {
                continue;
            }
            waiting += self.nic.messages.waiting(i / self.nic.lanes, i % self.nic.lanes);
            let mut p = self.nic.src_head[i];
            while p != NONE {
                if !visit(p, &mut seen, &mut found, &mut twice, "in a send queue") {
                    break;
                }
                p = self.pool.get(p).next;
            }
        }
        for &(_, _, p) in &self.route_held {
            visit(p, &mut seen, &mut found, &mut twice, "set aside for want of a route");
        }
        if waiting + self.pending_releases != self.nic.messages.unmade {
            part.findings.push((
                0,
                0,
                format!(
                    "{} packets of posted messages not yet made, but {waiting} wait in send queues and {} are held for later (packets lost)",
                    self.nic.messages.unmade, self.pending_releases
                ),
            ));
        }
        // The arbitration index: every head's candidate outputs are in its
        // router's `want` masks, and nothing else is.
        let mut index_err: Option<(u64, String)> = None;
        let qw = lay.qwords;
        let mut want: Vec<u64> = vec![0; (lay.ports + 1) * qw];
        for r in (0..lay.routers).filter(|&r| owned(r)) {
            want.iter_mut().for_each(|w| *w = 0);
            for q in 0..lay.queues {
                let qi = r * lay.queues + q;
                let h = self.router.inputs.q_head[qi];
                let cand = if h == NONE { 0 } else { crate::router::route::head_candidates(&self.net, &self.pool, h) };
                if cand != self.router.inputs.heads[qi].cand && index_err.is_none() {
                    index_err = Some((qi as u64, format!("queue {qi}: head candidates {cand:#x} recorded as {:#x}", self.router.inputs.heads[qi].cand)));
                }
                for b in 0..64 {
                    if cand & (1 << b) != 0 {
                        let w = if 1 << b == HEAD_EJECTS { lay.ports } else { b };
                        want[w * qw + q / 64] |= 1 << (q % 64);
                    }
                }
            }
            if want[..] != self.router.inputs.want[r * (lay.ports + 1) * qw..(r + 1) * (lay.ports + 1) * qw] && index_err.is_none() {
                let label = self.net.routing.router_label(r as u32);
                index_err = Some(((r * lay.queues) as u64, format!("router {label}: per-output want masks disagree with the queue heads")));
            }
        }
        // In flight on links and being ejected; tails leaving; tokens returning.
        let mut in_transit = vec![0u32; lay.routers * lay.queues];
        let mut leaving = vec![0u32; lay.routers * lay.queues];
        let mut returning = vec![0u32; lay.routers * lay.ports * lay.vcs];
        let mut ejecting = vec![0u32; lay.routers * lay.queues];
        let mut transit_pkts = Vec::new();
        self.wheel.for_each(|ev| {
            let qi = ev.router as usize * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
            match ev.kind {
                EvKind::Arrive => {
                    transit_pkts.push(ev.x);
                    in_transit[qi] += self.pool.get(ev.x).charged as u32;
                }
                EvKind::Deliver => {
                    transit_pkts.push(ev.x);
                    ejecting[qi] += self.pool.get(ev.x).charged as u32;
                }
                // Lost on a failed link, on its way back to its source.
                EvKind::Resend => transit_pkts.push(ev.x),
                EvKind::Done => leaving[qi] += ev.x,
                EvKind::Token => returning[(ev.router as usize * lay.ports + ev.a as usize) * lay.vcs + ev.b as usize] += ev.x,
                _ => {}
            }
        });
        for &p in &transit_pkts {
            visit(p, &mut seen, &mut found, &mut twice, "in flight");
        }
        // Packets in a retransmission FIFO awaiting a time-out: they keep
        // the downstream buffer space they were granted.
        let mut resending = vec![0u32; lay.routers * lay.ports * lay.vcs];
        if let Some(lp) = &self.router.outputs.link {
            for l in (0..lay.routers * lay.ports).filter(|&l| owned(l / lay.ports)) {
                for pkt in lp.held(l) {
                    if visit(pkt, &mut seen, &mut found, &mut twice, "awaiting retransmission") {
                        let p = self.pool.get(pkt);
                        resending[l * lay.vcs + p.vc as usize] += p.charged as u32;
                    }
                }
            }
        }
        part.found = found;
        if let Some((rank, d)) = twice {
            part.findings.push((0, rank, d));
        }
        if let Some((rank, d)) = index_err {
            part.findings.push((1, rank, d));
        }
        'queues: for r in (0..lay.routers).filter(|&r| owned(r)) {
            for q in 0..lay.queues {
                let qi = r * lay.queues + q;
                let want = charged_in[qi] + leaving[qi] + ejecting[qi];
                if self.router.inputs.q_used[qi] as u32 != want {
                    let label = self.net.routing.router_label(r as u32);
                    part.findings.push((2, qi as u64, format!("router {label} queue {q}: {} chunks recorded, {want} held", self.router.inputs.q_used[qi])));
                    break 'queues;
                }
            }
        }
        // The per-VC running total the time series reads.
        let mut held = vec![0u64; lay.vcs];
        for r in (0..lay.routers).filter(|&r| owned(r)) {
            for (i, &used) in self.router.inputs.q_used[r * lay.queues..r * lay.queues + lay.ports * lay.vcs].iter().enumerate() {
                held[i % lay.vcs] += used as u64;
            }
        }
        if held != self.stats.held_chunks {
            part.findings.push((2, u64::MAX, format!("chunks held per VC in the network buffers: {held:?}, but the running total says {:?}", self.stats.held_chunks)));
        }
        let mut token_err = None;
        for r in 0..lay.routers {
            for o in 0..lay.ports {
                let Some((w, i)) = self.net.routing.neighbor(r as u32, o as u8) else { continue };
                let (mine_r, mine_w) = (owned(r), owned(w as usize));
                if !mine_r && !mine_w {
                    continue;
                }
                for v in 0..lay.vcs {
                    let oi = (r * lay.ports + o) * lay.vcs + v;
                    let qi = w as usize * lay.queues + lay.queue_of(i as usize, v);
                    let mut sums = [0u32; 4];
                    if mine_r {
                        sums[0] = self.router.outputs.out_tokens[oi] as u32;
                        sums[1] = returning[oi] + resending[oi];
                    }
                    if mine_w {
                        sums[2] = in_transit[qi];
                        sums[3] = self.router.inputs.q_used[qi] as u32;
                    }
                    if mine_r && mine_w {
                        if token_err.is_none() && sums.iter().sum::<u32>() != self.net.cap as u32 {
                            token_err = Some((oi as u64, self.token_message(oi, sums)));
                        }
                    } else {
                        part.boundary.push((oi as u64, sums));
                    }
                }
            }
        }
        if let Some((rank, d)) = token_err {
            part.findings.push((3, rank, d));
        }
        part
    }

    fn token_message(&self, oi: usize, s: [u32; 4]) -> String {
        let lay = self.net.lay;
        let (v, o, r) = (oi % lay.vcs, oi / lay.vcs % lay.ports, oi / lay.vcs / lay.ports);
        format!(
            "link {} {} VC {}: {} tokens at the sender + {} returning or held for retransmission + {} on the wire + {} in the buffer = {}, expected {}",
            self.net.routing.router_label(r as u32),
            self.net.routing.port_name(o as u8),
            lay.vc_name(v),
            s[0],
            s[1],
            s[2],
            s[3],
            s.iter().sum::<u32>(),
            self.net.cap
        )
    }

    /// The verdict of an audit from every partition's part: the first
    /// violation by kind, then by rank, or none.
    pub(crate) fn audit_verdict(&self, parts: &[AuditPart]) -> Option<(&'static str, String)> {
        let first = |kind: u8| {
            parts.iter().flat_map(|p| &p.findings).filter(|f| f.0 == kind).min_by_key(|f| f.1).map(|f| (KINDS[kind as usize], f.2.clone()))
        };
        if let Some(v) = first(0) {
            return Some(v);
        }
        let sum = |f: fn(&AuditPart) -> u64| parts.iter().map(f).sum::<u64>();
        let (live, found, created, delivered) = (sum(|p| p.live), sum(|p| p.found), sum(|p| p.created), sum(|p| p.delivered));
        if found != live {
            return Some((KINDS[0], format!("{live} packets are live but {found} were found in queues and on links (packets lost or duplicated)")));
        }
        if created != delivered + live {
            return Some((KINDS[0], format!("{created} created, {delivered} delivered, {live} in flight: packets lost")));
        }
        for kind in [1, 2] {
            if let Some(v) = first(kind) {
                return Some(v);
            }
        }
        let mut boundary: HashMap<u64, [u32; 4]> = HashMap::new();
        for (i, s) in parts.iter().flat_map(|p| &p.boundary) {
            let e = boundary.entry(*i).or_default();
            for k in 0..4 {
                e[k] += s[k];
            }
        }
        let crossing = boundary
            .iter()
            .filter(|(_, s)| s.iter().sum::<u32>() != self.net.cap as u32)
            .min_by_key(|(i, _)| **i)
            .map(|(&i, &s)| (i, self.token_message(i as usize, s)));
        let local = parts.iter().flat_map(|p| &p.findings).filter(|f| f.0 == 3).min_by_key(|f| f.1).map(|f| (f.1, f.2.clone()));
        [crossing, local].into_iter().flatten().min_by_key(|f| f.0).map(|f| (KINDS[3], f.1))
    }

    /// This partition's blocked network heads: (queue, the downstream queue
    /// its head waits for on its escape route, chunks held).
    pub(crate) fn blocked_heads(&self) -> Vec<(u64, u64, u32)> {
        use crate::config::{Escape, RoutingMode};
        let lay = self.net.lay;
        let idx = |r: usize, q: usize| (r * lay.queues + q) as u64;
        let mut out = Vec::new();
        for r in (0..lay.routers).filter(|&r| self.mail.owner[r] == self.mail.me) {
            for q in 0..lay.ports * lay.vcs {
                let h = self.router.inputs.q_head[r * lay.queues + q];
                if h == NONE {
                    continue;
                }
                let p = *self.pool.get(h);
                let (src, dst) = (self.net.router_of(p.src), self.net.router_of(p.dst));
                if dst == r as u32 {
                    continue;
                }
                let o = if p.vc as usize >= lay.esc || self.net.mode == RoutingMode::Deterministic || self.net.params.escape == Escape::None {
                    self.net.routing.escape_port(r as u32, dst, p.hints)
                } else {
                    let m = self.net.routing.adaptive_ports(r as u32, dst, p.hints);
                    (m != 0).then(|| m.trailing_zeros() as u8)
                };
                let Some(o) = o else { continue };
                let Some((w, i)) = self.net.routing.neighbor(r as u32, o) else { continue };
                let v = if self.net.params.virtual_output_queues {
                    // The queue of the output it will take there.
                    let key = self.net.routing.output_at(w, p.dst, self.net.routing.advance(w, p.hints));
                    key.map_or(p.vc as usize, |k| k as usize % lay.dynamic)
                } else if self.net.params.escape == Escape::HopClass {
                    lay.esc + self.net.routing.vc_class(r as u32, src, p.hints, o) as usize * self.net.params.class_vcs.max(1) as usize
                } else if p.vc as usize >= lay.esc {
                    p.vc as usize
                } else if lay.esc_count > 0 && self.net.mode == RoutingMode::Deterministic {
                    lay.esc
                } else {
                    p.vc as usize
                };
                out.push((idx(r, q), idx(w as usize, lay.queue_of(i as usize, v)), self.router.inputs.q_used[r * lay.queues + q] as u32));
            }
        }
        out
    }

    /// The deadlock report from every partition's blocked heads: follows
    /// each head to the buffer it waits for and reports a cycle of such
    /// waits if there is one (the first found from the lowest queue).
    pub(crate) fn deadlock_verdict(&self, t: u64, heads: &[(u64, u64, u32)], last_progress: u64, live: u64) -> Deadlock {
        let lay = self.net.lay;
        let mut sorted: Vec<(u64, u64, u32)> = heads.to_vec();
        sorted.sort_unstable();
        let succ: HashMap<u64, (u64, u32)> = sorted.iter().map(|&(q, s, u)| (q, (s, u))).collect();
        let mut state: HashMap<u64, u8> = HashMap::new();
        let mut cycle = Vec::new();
        'outer: for &(s, _, _) in &sorted {
            if state.contains_key(&s) {
                continue;
            }
            let mut path = Vec::new();
            let mut x = Some(s);
            while let Some(q) = x.filter(|q| !state.contains_key(q)) {
                state.insert(q, 1);
                path.push(q);
                x = succ.get(&q).map(|&(n, _)| n);
            }
            if let Some(q) = x.filter(|q| state.get(q) == Some(&1)) {
                let start = path.iter().position(|&y| y == q).unwrap_or(0);
                cycle = path[start..].to_vec();
                break 'outer;
            }
            for y in path {
                state.insert(y, 2);
            }
        }
        let describe = |qi: u64| {
            let (r, q) = ((qi as usize) / lay.queues, (qi as usize) % lay.queues);
            BlockedVc {
                router: self.net.routing.router_label(r as u32),
                port: self.net.routing.port_name((q / lay.vcs) as u8),
                vc: lay.vc_name(q % lay.vcs),
                used_chunks: succ.get(&qi).map_or(0, |&(_, u)| u),
            }
        };
        Deadlock {
            cycle: t,
            detected_by: "watchdog",
            stalled_cycles: t.saturating_sub(last_progress),
            packets_in_flight: live,
            wait_cycle_found: !cycle.is_empty(),
            wait_cycle_length: cycle.len(),
            blocked_vcs: cycle.iter().take(64).map(|&qi| describe(qi)).collect(),
        }
    }
}
