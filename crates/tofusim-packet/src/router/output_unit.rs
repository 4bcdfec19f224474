//! The output side: link serialisation (a packet holds its output for its
//! wire time at the port's rate), the downstream VC's tokens, the
//! reception path of each input, and where a granted packet's events go —
//! the next router's input (or another partition's mail), the node's
//! reception FIFO, the host interface — and, where links make errors, the
//! link-level protocol ([`super::link_protocol`]) between the crossbar and
//! the wire: a transmission the receiver does not accept schedules no
//! arrival, and a time-out sends the link's held packets again.

use super::link_protocol::{Fate, LinkProtocol};
use super::switch::Request;
use super::{Env, Router};
use crate::config::PlantedFault;
use crate::event::{Ev, EvKind};
use crate::net::Net;
use crate::partition::Ownership;
use crate::packet::flags;

/// Per router and output port (and VC), SoA.
pub(crate) struct OutputUnits {
    /// When each output's link is free again, cycles.
    pub out_free_at: Vec<u64>,
    /// Tokens of each output's downstream VC buffers, by (output, VC).
    pub out_tokens: Vec<u16>,
    /// When each network input's reception path is free again.
    pub recv_free_at: Vec<u64>,
    /// Since when a head was refused at each output for lack of tokens
    /// (`u64::MAX`: not depleted), and when tokens last came back.
    pub depleted_since: Vec<u64>,
    pub token_at: Vec<u64>,
    /// The link protocol, where links make errors.
    pub link: Option<Box<LinkProtocol>>,
}

impl OutputUnits {
    /// Every connected output starts with a full VC buffer's tokens.
    pub fn new(net: &Net, own: Ownership) -> Self {
        let lay = net.lay;
        let mut out_tokens = vec![0u16; lay.routers * lay.ports * lay.vcs];
        for r in (0..lay.routers).filter(|&r| own.owns(r)) {
            for o in 0..lay.ports {
                if net.routing.neighbor(r as u32, o as u8).is_some() {
                    for v in 0..lay.vcs {
                        out_tokens[(r * lay.ports + o) * lay.vcs + v] = net.cap;
                    }
                }
            }
        }
        OutputUnits {
            out_free_at: vec![0; lay.routers * lay.ports],
            out_tokens,
            recv_free_at: vec![0; lay.routers * lay.ports],
            depleted_since: own.filled(lay.routers, lay.ports, u64::MAX),
            token_at: own.filled(lay.routers, lay.ports, u64::MAX),
            link: net.link_errors.as_ref().map(|cfg| {
                let ack_delay = net.params.hop_latency_cycles as u64 + net.params.token_latency_cycles as u64;
                Box::new(LinkProtocol::new(cfg.clone(), lay.routers, lay.ports, net.run.seed, ack_delay))
            }),
        }
    }

    /// Chunks held downstream of output `port` of router `r`, over its VCs
    /// (the congestion an adaptive route choice sees).
    pub fn occupancy(&self, net: &Net, r: u32, port: u8) -> u32 {
        let lay = net.lay;
        let base = (r as usize * lay.ports + port as usize) * lay.vcs;
        (0..lay.vcs).map(|v| (net.cap - self.out_tokens[base + v].min(net.cap)) as u32).sum()
    }
}

impl Router {
    pub(super) fn grant_hop(&mut self, r: usize, t: u64, req: Request, env: &mut Env) {
        let lay = &env.net.lay;
        let qi = r * lay.queues + req.queue as usize;
        self.inputs.granted(qi, t, env.net.run.warmup);
        let pkt = self.inputs.pop(r, qi, env.net, env.pool, t);
        let o = req.out as usize;
        let oi = r * lay.ports + o;
        let p = *env.pool.get(pkt);
        let (wire, sent_bytes, copies) = self.on_wire(oi, o, p.bytes, env);
        self.outputs.out_free_at[oi] = t + wire;
        // A link down (a failure during the run): no buffer downstream
        // takes the packet, so it needs no tokens — unless a link protocol
        // holds it to send again, keeping the space it was granted.
        let down = env.net.faults.as_ref().is_some_and(|f| f.down_ports(r as u32) & 1 << o != 0);
        if !down || self.outputs.link.is_some() {
            self.outputs.out_tokens[oi * lay.vcs + req.vc as usize] -= req.cost as u16;
        }
        if req.unit as usize >= lay.ports {
            Self::charge_host(lay.fifo_node(r, req.unit as usize), t, p.bytes, env);
        }
        self.inputs.paths_used[r * lay.units + req.unit as usize] += 1;
        let local_vc = if (req.unit as usize) < lay.ports {
            p.vc
        } else {
            0
        };
        env.wheel.schedule(
            t + wire,
            Ev {
                kind: EvKind::Done,
                a: req.unit,
                b: local_vc,
                router: r as u32,
                x: p.charged as u32,
            },
        );
        if down && self.outputs.link.is_none() {
            // Routed into a failed link: the sender discards it at the
            // link's rate; its source will send it again.
            Self::lose(pkt, t, env);
            env.stats.last_progress = env.stats.last_progress.max(t);
            return;
        }
        let (w, i) = env.net.routing
            .neighbor(r as u32, req.out)
            .expect("routes use connected ports");
        {
            let pm = env.pool.get_mut(pkt);
            pm.vc = req.vc;
            pm.input = i as u16;
            pm.charged = req.cost;
            pm.hops += 1;
            if req.crossed {
                pm.flags |= flags::CROSSED;
            } else {
                pm.flags &= !flags::CROSSED;
            }
        }
        // Statistics: PA counters, per-VC traffic, utilisation windows.
        Self::count_on_wire(oi, req.vc, p.bytes, wire, t, env);
        if t >= env.net.run.warmup {
            env.stats.payload_measured += p.payload as u64;
            env.stats.vc_hops[req.vc as usize] += 1;
        }
        if self.outputs.depleted_since[oi] != u64::MAX {
            if self.outputs.token_at[oi] == t {
                env.stats.unblocks += 1;
                env.stats.win_unblocks += 1;
                env.stats.win_waited_unblocks += (self.outputs.depleted_since[oi] < t) as u64;
            }
            let since = self.outputs.depleted_since[oi].max(env.net.run.warmup);
            if t > since {
                env.stats.counters[oi].depleted_cycles += t - since;
            }
            self.outputs.depleted_since[oi] = u64::MAX;
        }
        env.stats.last_progress = env.stats.last_progress.max(t);
        // A planted fault strikes at router 0, whatever the partitions.
        if let (Some(fault), 0) = (env.net.run.plant, r) {
            if !self.planted_done && t >= env.net.run.plant_after {
                match fault {
                    PlantedFault::DropPacket => {
                        // The packet vanishes on the wire (its tokens stay charged downstream).
                        self.planted_done = true;
                        env.pool.release(pkt);
                        return;
                    }
                    PlantedFault::CorruptPayload => {
                        self.planted_done = true;
                        env.pool.get_mut(pkt).payload ^= 1;
                    }
                    PlantedFault::LeakToken => {}
                }
            }
        }
        if self.outputs.link.is_some() && !self.transmit(r, o, t, wire, sent_bytes, copies, pkt, false, false, down, env) {
            return;
        }
        Self::send_on(t, w, i, req.vc, pkt, env);
    }

    /// A packet of `bytes` on output `o` (link `l`): its wire cycles at the
    /// port's rate, the bytes of one copy and the copies — sliced over
    /// lanes (header copies) or duplicated where the link slices.
    fn on_wire(&self, l: usize, o: usize, bytes: u16, env: &Env) -> (u64, u16, u64) {
        let (extra, copies) = self.outputs.link.as_ref().map_or((0, 1), |lp| lp.expansion(l));
        (env.net.port_wire_cycles(bytes + extra, o) * copies, bytes + extra, copies)
    }

    /// A transmission of `bytes` on link `l` (VC `vc`) for `wire` cycles
    /// from `t`, in the PA and per-VC counters and the utilisation windows
    /// (retransmissions too: the link is busy with them).
    fn count_on_wire(l: usize, vc: u8, bytes: u16, wire: u64, t: u64, env: &mut Env) {
        if t >= env.net.run.warmup {
            let c = &mut env.stats.counters[l];
            c.bytes += bytes as u64;
            c.packets += 1;
            c.busy_cycles += wire;
            env.stats.busy_measured += wire;
            if env.stats.samples_vcs() {
                let v = &mut env.stats.vc_counters[l * env.net.lay.vcs + vc as usize];
                v.bytes += bytes as u64;
                v.packets += 1;
            }
        }
        env.stats.win_busy += wire;
    }

    /// Router `r` arbitrates again at `at` (a stopped link takes packets
    /// again); the node wake-up of its first node marks it.
    fn wake_at(r: usize, at: u64, env: &mut Env) {
        env.wheel.schedule(at, Ev { kind: EvKind::Wake, a: 0, b: 0, router: (r * env.net.lay.npr) as u32, x: 0 });
    }

    /// Packet `pkt` is lost on a failed link at `t`: its source's MPI
    /// layer sends it again after its time-out (a `Resend` at the source
    /// router, mailed there if another partition owns it). The watchdog
    /// waits for that.
    pub(crate) fn lose(pkt: u32, t: u64, env: &mut Env) {
        env.stats.lost += 1;
        let at = t + env.net.resend_timeout_cycles;
        let src = env.net.router_of(env.pool.get(pkt).src);
        let ev = Ev { kind: EvKind::Resend, a: 0, b: 0, router: src, x: pkt };
        if env.mail.owns(src) {
            env.wheel.schedule(at, ev);
        } else {
            env.mail.packet(at, ev, pkt, env.pool);
        }
        env.stats.last_progress = env.stats.last_progress.max(at);
    }

    /// The header of `pkt` reaches input `i` (VC `vc`) of router `w` a
    /// hop after `t`.
    fn send_on(t: u64, w: u32, i: u8, vc: u8, pkt: u32, env: &mut Env) {
        let at = t + env.net.params.hop_latency_cycles as u64;
        let ev = Ev { kind: EvKind::Arrive, a: i as u16, b: vc, router: w, x: pkt };
        if env.mail.owns(w) {
            env.wheel.schedule(at, ev);
        } else {
            // The packet moves to the partition of the next router.
            env.mail.packet(at, ev, pkt, env.pool);
        }
    }

    /// The link protocol's part of a transmission of `pkt` on output `o`
    /// of router `r` from `start` for `wire` cycles: whether the receiver
    /// accepts it (its arrival is then the caller's to schedule). A caught
    /// corruption schedules the link's time-out; a full retransmission
    /// FIFO stops the link until an acknowledgement (a wake-up then) or
    /// the time-out. `down`: the link has failed (nothing is accepted).
    #[allow(clippy::too_many_arguments)]
    fn transmit(&mut self, r: usize, o: usize, start: u64, wire: u64, bytes: u16, copies: u64, pkt: u32, resent: bool, behind: bool, down: bool, env: &mut Env) -> bool {
        let lay = &env.net.lay;
        let l = r * lay.ports + o;
        // The bytes on the wire, link overhead included, over every copy.
        let wire_bytes = env.net.wire_cycles(bytes) * copies;
        let lp = self.outputs.link.as_mut().expect("called with a link protocol");
        let fate = lp.transmit(l, start, wire, wire_bytes, pkt, env.pool.get(pkt).checksum, resent, behind, down);
        if let Fate::Corrupted(due) = fate {
            env.wheel.schedule(due, Ev { kind: EvKind::LinkTimeout, a: o as u16, b: 0, router: r as u32, x: 0 });
        }
        if !resent {
            if let Some(until) = lp.window_full(l, start + wire) {
                self.outputs.out_free_at[l] = self.outputs.out_free_at[l].max(until);
                if until != u64::MAX {
                    // Arbitration resumes when the acknowledgement frees a slot.
                    Self::wake_at(r, until, env);
                }
            }
        }
        fate == Fate::Accepted
    }

    /// The time-out of output `o` of router `r`: go-back-N — the packets
    /// held since the corrupted one are sent again, in order, back to back
    /// before any new packet; those behind a packet corrupted again stay
    /// held (its own time-out is then due). The link takes new packets
    /// when the pass ends.
    pub(crate) fn link_timeout(&mut self, r: usize, o: usize, t: u64, env: &mut Env) {
        let lay = &env.net.lay;
        let l = r * lay.ports + o;
        let (w, i) = env.net.routing.neighbor(r as u32, o as u8).expect("a link with held packets is connected");
        let lp = self.outputs.link.as_mut().expect("time-outs come from the link protocol");
        let held = lp.take_resend(l);
        let mut start = t.max(lp.tx_end[l]);
        let down = env.net.faults.as_ref().is_some_and(|f| f.down_ports(r as u32) & 1 << o != 0);
        let mut failed: std::collections::VecDeque<u32> = Default::default();
        for pkt in held {
            let (bytes, vc) = {
                let p = env.pool.get(pkt);
                (p.bytes, p.vc)
            };
            let (wire, sent_bytes, copies) = self.on_wire(l, o, bytes, env);
            let accepted = self.transmit(r, o, start, wire, sent_bytes, copies, pkt, true, !failed.is_empty(), down, env);
            if accepted {
                Self::send_on(start, w, i, vc, pkt, env);
            } else {
                failed.push_back(pkt);
            }
            Self::count_on_wire(l, vc, bytes, wire, start, env);
            start += wire;
        }
        let lp = self.outputs.link.as_mut().expect("checked");
        lp.put_back(l, failed);
        // New packets wait for the pass (and, if it left the FIFO full, for
        // an acknowledgement or the next time-out).
        let until = lp.window_full(l, start).unwrap_or(start).max(start);
        self.outputs.out_free_at[l] = until;
        if until != u64::MAX && until > t {
            Self::wake_at(r, until, env);
        }
        env.stats.last_progress = env.stats.last_progress.max(t);
    }

    /// A packet of `bytes` crosses node `node`'s host interface at `t`
    /// (a limit only where the model has one), its busy time counted
    /// after the warm-up.
    #[inline]
    fn charge_host(node: usize, t: u64, bytes: u16, env: &mut Env) {
        let rate = env.net.params.host_bytes_per_cycle;
        if !rate.is_finite() {
            return;
        }
        env.nic.charge_host(node, t, bytes, rate, env.wheel);
        if t >= env.net.run.warmup {
            env.stats.host_busy_cycles[node] += bytes as f64 / rate;
        }
    }

    pub(super) fn grant_eject(&mut self, r: usize, t: u64, req: Request, env: &mut Env) {
        let lay = &env.net.lay;
        let qi = r * lay.queues + req.queue as usize;
        self.inputs.granted(qi, t, env.net.run.warmup);
        let pkt = self.inputs.pop(r, qi, env.net, env.pool, t);
        let p = *env.pool.get(pkt);
        if (req.unit as usize) < lay.ports {
            self.outputs.recv_free_at[r * lay.ports + req.unit as usize] = t + p.bytes as u64;
        } else {
            Self::charge_host(lay.fifo_node(r, req.unit as usize), t, p.bytes, env);
        }
        env.wheel.schedule(
            t + p.bytes as u64,
            Ev {
                kind: EvKind::Deliver,
                a: req.unit,
                b: p.vc,
                router: r as u32,
                x: pkt,
            },
        );
        env.stats.last_progress = env.stats.last_progress.max(t);
    }
}
