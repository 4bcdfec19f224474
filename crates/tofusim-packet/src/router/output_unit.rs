//! The output side: link serialisation (a packet holds its output for its
//! wire time at the port's rate), the downstream VC's tokens, the
//! reception path of each input, and where a granted packet's events go —
//! the next router's input (or another partition's mail), the node's
//! reception FIFO, the host interface. The link-level protocol (error
//! recovery, retransmission) will hook in here.

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
        let pkt = self.inputs.pop(qi, env.net, env.pool);
        let o = req.out as usize;
        let oi = r * lay.ports + o;
        let p = *env.pool.get(pkt);
        let wire = env.net.port_wire_cycles(p.bytes, o);
        self.outputs.out_free_at[oi] = t + wire;
        self.outputs.out_tokens[oi * lay.vcs + req.vc as usize] -= req.cost as u16;
        if req.unit as usize >= lay.ports {
            env.nic.charge_host(lay.fifo_node(r, req.unit as usize), t, p.bytes, env.net.params.host_bytes_per_cycle, env.wheel);
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
        if t >= env.net.run.warmup {
            let c = &mut env.stats.counters[oi];
            c.bytes += p.bytes as u64;
            c.packets += 1;
            c.busy_cycles += wire;
            env.stats.busy_measured += wire;
            env.stats.payload_measured += p.payload as u64;
            env.stats.vc_hops[req.vc as usize] += 1;
        }
        env.stats.win_busy += wire;
        if self.outputs.depleted_since[oi] != u64::MAX {
            if self.outputs.token_at[oi] == t {
                env.stats.unblocks += 1;
                env.stats.win_unblocks += 1;
            }
            let since = self.outputs.depleted_since[oi].max(env.net.run.warmup);
            if t > since {
                env.stats.counters[oi].depleted_cycles += t - since;
            }
            self.outputs.depleted_since[oi] = u64::MAX;
        }
        env.stats.last_progress = t;
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
        let at = t + env.net.params.hop_latency_cycles as u64;
        let ev = Ev { kind: EvKind::Arrive, a: i as u16, b: req.vc, router: w, x: pkt };
        if env.mail.owns(w) {
            env.wheel.schedule(at, ev);
        } else {
            // The packet moves to the partition of the next router.
            env.mail.arrive(at, ev, pkt, env.pool);
        }
    }

    pub(super) fn grant_eject(&mut self, r: usize, t: u64, req: Request, env: &mut Env) {
        let lay = &env.net.lay;
        let qi = r * lay.queues + req.queue as usize;
        let pkt = self.inputs.pop(qi, env.net, env.pool);
        let p = *env.pool.get(pkt);
        if (req.unit as usize) < lay.ports {
            self.outputs.recv_free_at[r * lay.ports + req.unit as usize] = t + p.bytes as u64;
        } else {
            env.nic.charge_host(lay.fifo_node(r, req.unit as usize), t, p.bytes, env.net.params.host_bytes_per_cycle, env.wheel);
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
        env.stats.last_progress = t;
    }
}
