//! Output and VC selection for the packet at a VC head: JSQ among the free
//! dynamic VCs of its minimal ports, else the escape VC of its escape port
//! under that VC's flow-control rule (bubble, dateline pair, hop class).

use rand::RngExt;

use super::switch::{Request, EJECT};
use super::{Env, Router};
use crate::config::{Escape, RoutingMode};
use crate::limits::Cause;
use crate::packet::flags;

impl Router {
    /// The first hop of a route around a failure, which leaves dimension
    /// order: it must not enter the escape network, whose deadlock freedom
    /// rests on that order. It takes a dynamic VC of the detour port (the
    /// packet then enters the escape network at the next router, which
    /// drains); the source offers detours only on routers with dynamic VCs
    /// ([`tofusim_routing::FaultMap::with_detour_ports`]).
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn detour_hop(&mut self, env: &Env, r: usize, t: u64, qi: usize, o: u8, out_taken: u64, chunks: u16, mk: impl Fn(u8, usize, u16, bool) -> Request) -> Option<Request> {
        let lay = &env.net.lay;
        let o = o as usize;
        if !self.link_free(r, o, t, out_taken, lay.ports) {
            self.inputs.block(qi, t, Cause::Link, env.net.run.warmup);
            return None;
        }
        let full = env.net.full;
        let tokens = |v: usize| self.outputs.out_tokens[(r * lay.ports + o) * lay.vcs + v];
        // The dynamic VC with the most tokens (the lowest on ties).
        let vc = (0..lay.dynamic).max_by_key(|&d| (tokens(d), std::cmp::Reverse(d)))?;
        if tokens(vc) >= full {
            Some(mk(o as u8, vc, chunks, false))
        } else {
            self.mark_depleted(r, o, t, lay.ports);
            self.inputs.block(qi, t, Cause::Tokens, env.net.run.warmup);
            None
        }
    }

    /// The virtual output queue packet `p` takes through output `o` of
    /// router `r`: the dynamic VC of the output it will take at the next
    /// router ([`crate::config::RouterParams::virtual_output_queues`]).
    #[inline]
    fn output_queue(env: &Env, r: usize, o: usize, p: &crate::packet::Packet) -> usize {
        let routing = &env.net.routing;
        let (next, _) = routing.neighbor(r as u32, o as u8).expect("a route follows links");
        let key = routing
            .output_at(next, p.dst, routing.advance(next, p.hints))
            .expect("virtual output queues are refused on routings that do not name outputs");
        key as usize % env.net.lay.dynamic
    }

    #[inline]
    fn link_free(&self, r: usize, o: usize, t: u64, out_taken: u64, ports: usize) -> bool {
        out_taken & (1 << o) == 0 && self.outputs.out_free_at[r * ports + o] <= t
    }

    #[inline]
    pub(super) fn mark_depleted(&mut self, r: usize, o: usize, t: u64, ports: usize) {
        let i = r * ports + o;
        if self.outputs.depleted_since[i] == u64::MAX {
            self.outputs.depleted_since[i] = t;
        }
    }

    /// Step 1: the route choice of the head packet of queue `q`.
    pub(super) fn route_head(
        &mut self,
        env: &Env,
        r: usize,
        t: u64,
        unit: usize,
        q: usize,
        out_taken: u64,
        free_out: u64,
    ) -> Option<Request> {
        let lay = &env.net.lay;
        let qi = r * lay.queues + q;
        let p = env.pool.get(self.inputs.q_head[qi]);
        let network = unit < lay.ports;
        let fullness = self.fullness(qi, env.net.cap);
        let priority = p.flags & flags::PRIORITY != 0;
        let mk = move |out: u8, vc: usize, cost: u16, crossed: bool| Request {
            unit: unit as u16,
            queue: q as u16,
            out,
            vc: vc as u8,
            cost: cost as u8,
            crossed,
            priority,
            network,
            fullness,
        };
        if p.route_escape == crate::packet::AT_DESTINATION {
            // From a network input: its reception path must be free. From an
            // injection FIFO (a node of the same router): the data turn
            // around in the router, paced by the host interface.
            if network && self.outputs.recv_free_at[r * lay.ports + unit] > t {
                self.inputs.block(qi, t, Cause::Reception, env.net.run.warmup);
                return None;
            }
            return Some(mk(EJECT, p.vc as usize, 0, false));
        }
        let chunks = env.net.chunks(p.bytes);
        let full = env.net.full;
        if p.detour != 0 && p.hops == 0 {
            return self.detour_hop(env, r, t, qi, p.detour - 1, out_taken, chunks, mk);
        }
        let adaptive = !priority && env.net.mode == RoutingMode::Adaptive && lay.dynamic > 0;
        // Adaptive hops take no link that is down (a failure during the run).
        let down = env.net.faults.as_ref().map_or(0, |f| f.down_ports(r as u32));
        let dyn_mask = if adaptive { p.route_mask as u64 & !down } else { 0 };
        let esc_port = p.route_escape;
        if (dyn_mask | 1 << esc_port) & free_out == 0 {
            self.inputs.block(qi, t, Cause::Link, env.net.run.warmup);
            return None;
        }
        if adaptive {
            let mut mask = dyn_mask & free_out;
            let mut best: Option<(u16, u8, u8)> = None;
            let mut ties = 0u32;
            // What JSQ compares (its statistics, after the warm-up): the
            // candidates by quarter of free buffer, four 16-bit counts in
            // one word (a candidate costs one shift and one add).
            let mut seen = 0u64;
            let counting = env.net.run.jsq_statistics && env.net.params.jsq && t >= env.net.run.warmup;
            while mask != 0 {
                let o = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                if !self.link_free(r, o, t, out_taken, lay.ports) {
                    continue;
                }
                let mut any = false;
                let vcs = if env.net.params.virtual_output_queues {
                    let v = Self::output_queue(env, r, o, &p);
                    v..v + 1
                } else {
                    0..lay.dynamic
                };
                for d in vcs {
                    let tok = self.outputs.out_tokens[(r * lay.ports + o) * lay.vcs + d];
                    if tok < full {
                        continue;
                    }
                    any = true;
                    let t_ = tok.min(env.net.cap) as usize;
                    let range = if env.net.params.jsq { env.net.jsq_range[t_] } else { 0 };
                    if counting {
                        // BG/L's 2-bit ranges are the quarters themselves.
                        let quarter = if env.net.params.jsq_ranges == 4 { range } else { env.net.token_quarter[t_] as u16 };
                        seen += 1 << (16 * quarter as u32);
                    }
                    match best {
                        Some((br, _, _)) if br > range => {}
                        Some((br, _, _)) if br == range => {
                            ties += 1;
                            if self.rngs[r].random_range(0..ties + 1) == 0 {
                                best = Some((range, o as u8, d as u8));
                            }
                        }
                        _ => {
                            best = Some((range, o as u8, d as u8));
                            ties = 0;
                        }
                    }
                }
                if !any {
                    self.mark_depleted(r, o, t, lay.ports);
                    self.inputs.block(qi, t, Cause::Tokens, env.net.run.warmup);
                }
            }
            if counting && seen > 1 {
                self.jsq.note(seen, ties == 0);
            }
            if let Some((_, o, d)) = best {
                return Some(mk(o, d as usize, chunks, false));
            }
        }
        // The escape route (also deterministic traffic and priority packets).
        let o = esc_port as usize;
        if !self.link_free(r, o, t, out_taken, lay.ports) {
            // Adaptive heads refused for tokens on their minimal ports keep
            // that cause: the escape link being busy is not what held them.
            if !adaptive || self.inputs.heads[qi].clock.cause() != Cause::Tokens as u8 {
                self.inputs.block(qi, t, Cause::Link, env.net.run.warmup);
            }
            return None;
        }
        let on_vc = |v: usize| network && p.vc as usize == v;
        let straight = network && env.net.routing.straight(unit as u8) as usize == o;
        let tokens = |s: &Self, v: usize| s.outputs.out_tokens[(r * lay.ports + o) * lay.vcs + v];
        let (vc, need, cost, crossed) = if priority && lay.hp.is_some() {
            let v = lay.hp.unwrap_or(0);
            let entering = !(on_vc(v) && straight);
            (v, full * (1 + entering as u16), full, false)
        } else {
            match env.net.params.escape {
                Escape::Bubble | Escape::BubbleFullCounts => {
                    let v = lay.esc;
                    let entering = !(on_vc(v) && straight);
                    let cost = if env.net.params.escape == Escape::Bubble {
                        full
                    } else {
                        chunks
                    };
                    (v, full * (1 + entering as u16), cost, false)
                }
                Escape::BubbleUnfixed => {
                    let v = lay.esc;
                    let entering = !(on_vc(v) && straight);
                    (v, chunks + full * entering as u16, chunks, false)
                }
                Escape::DatelineDimension | Escape::DatelineDirection => {
                    let on_escape =
                        network && (p.vc as usize) >= lay.esc && (p.vc as usize) < lay.esc + 2;
                    let same_ring = on_escape
                        && env.net.routing.ring(o as u8)
                            == env.net.routing.ring(env.net.routing.straight(unit as u8));
                    let crossed = (same_ring && p.flags & flags::CROSSED != 0)
                        || env.net.routing.is_dateline(r as u32, o as u8);
                    (lay.esc + crossed as usize, full, chunks, crossed)
                }
                Escape::HopClass => {
                    let src = env.net.router_of(p.src);
                    let class = env.net.routing.vc_class(r as u32, src, p.hints, o as u8);
                    // The class's VC with the most tokens (the lowest on ties).
                    let k = env.net.params.class_vcs.max(1) as usize;
                    let first = lay.esc + class as usize * k;
                    let v = (first..first + k).max_by_key(|&v| (tokens(self, v), std::cmp::Reverse(v))).unwrap_or(first);
                    (v, full, chunks, false)
                }
                Escape::None if env.net.params.virtual_output_queues => (Self::output_queue(env, r, o, &p), full, chunks, false),
                Escape::None => {
                    // Dimension order on the dynamic VCs, the most tokens first.
                    let d = (0..lay.dynamic)
                        .max_by_key(|&d| (tokens(self, d), std::cmp::Reverse(d)))?;
                    (d, full, chunks, false)
                }
            }
        };
        if tokens(self, vc) >= need {
            Some(mk(o as u8, vc, cost, crossed))
        } else {
            self.mark_depleted(r, o, t, lay.ports);
            self.inputs.block(qi, t, Cause::Tokens, env.net.run.warmup);
            None
        }
    }
}
