//! Switch arbitration: per receiver (which VC heads of an input request,
//! up to its free receiver→sender paths) and per sender (one winner per
//! output).

use rand::RngExt;

use super::{Env, Router};
use crate::config::{Arbitration, RouterParams};
use crate::layout::QueueSet;

/// Output index meaning "the reception FIFO of this input".
pub(crate) const EJECT: u8 = u8::MAX;
/// A request that lost receiver arbitration.
pub(crate) const WITHDRAWN: u8 = u8::MAX - 1;


#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub unit: u8,
    pub queue: u8,
    pub out: u8,
    pub vc: u8,
    pub cost: u8,
    pub crossed: bool,
    pub priority: bool,
    pub network: bool,
    pub fullness: u8,
}

impl Router {    /// Step 2: each input unit proposes requests from its VC heads.
    pub(super) fn collect_requests(&mut self, r: usize, t: u64, out_taken: u64, q_taken: QueueSet, env: &mut Env) {
        let lay = env.net.lay;
        // Outputs whose link is free: a head that cannot use one of them is
        // skipped without drawing random numbers.
        let mut free_out = 0u64;
        for o in 0..lay.ports {
            if self.outputs.out_free_at[r * lay.ports + o] <= t {
                free_out |= 1 << o;
            }
        }
        free_out &= !out_taken;
        // Queues whose head could use a free output, or has arrived (its
        // input's reception path is checked in `route_head`), in queue order:
        // the units in order, their VCs in order.
        let wbase = r * (lay.ports + 1);
        let mut cands = self.inputs.want[wbase + lay.ports];
        let mut m = free_out;
        while m != 0 {
            cands |= self.inputs.want[wbase + m.trailing_zeros() as usize];
            m &= m - 1;
        }
        cands &= !q_taken;
        while cands != 0 {
            let first = cands.trailing_zeros() as usize;
            let unit = lay.unit_of(first);
            let limit = if unit < lay.ports {
                env.net.params.paths
            } else {
                1
            };
            let used = self.inputs.paths_used[r * lay.units + unit];
            let slots = limit.saturating_sub(used) as usize;
            if unit >= lay.ports {
                cands &= cands - 1;
                // The host interface feeds every injection FIFO of the node;
                // while it is busy no FIFO starts a packet (a EvKind::Wake is due).
                if slots == 0 || env.nic.host_free_at[lay.fifo_node(r, unit)] > t as f64 {
                    continue;
                }
                if let Some(req) = self.route_head(env, r, t, unit, first, out_taken, free_out) {
                    self.requests.push(req);
                }
                continue;
            }
            let mut feasible = [(0u32, 0usize); 8];
            let mut k = 0;
            let unit_mask: QueueSet = ((1 << lay.vcs) - 1) << (unit * lay.vcs);
            let mut pending = cands & unit_mask;
            cands &= !unit_mask;
            while pending != 0 {
                let q = pending.trailing_zeros() as usize;
                pending &= pending - 1;
                let Some(req) = self.route_head(env, r, t, unit, q, out_taken, free_out) else {
                    continue;
                };
                if req.out == EJECT {
                    self.requests.push(req);
                } else if slots > 0 {
                    feasible[k] = (0, self.requests.len());
                    self.requests.push(req);
                    k += 1;
                }
            }
            if k > slots {
                // Receiver arbitration: the priority VC first, then modified
                // SLQ (fullest first) or a random order. Losers withdraw.
                let slq = env.net.params.arbitration == Arbitration::Slq
                    && self.rngs[r].random_bool(env.net.params.slq_fraction);
                for item in feasible.iter_mut().take(k) {
                    let req = self.requests[item.1];
                    let noise = self.rngs[r].random::<u32>() >> 8;
                    item.0 = ((req.priority as u32) << 31)
                        | if slq { (req.fullness as u32) << 24 } else { 0 }
                        | noise;
                }
                feasible[..k].sort_unstable_by(|a, b| b.0.cmp(&a.0));
                for item in feasible.iter().take(k).skip(slots) {
                    self.requests[item.1].out = WITHDRAWN;
                }
            }
        }
    }

    #[inline]
    pub(super) fn fullness(&self, qi: usize, cap: u16) -> u8 {
        ((self.inputs.q_used[qi] as u32 * 4 / cap.max(1) as u32).min(3)) as u8
    }


    /// Step 3: the winner among the requests for output `out`: priority
    /// packets first, then in-network packets on `network_priority` of the
    /// arbitrations, then the fullest (SLQ cycles) or any, at random.
    pub(super) fn sender_arbitration(&mut self, r: usize, out: u8, q_taken: QueueSet, params: &RouterParams) -> Option<Request> {
        let open = |q: &Request| q.out == out && q_taken & (1 << q.queue) == 0;
        let (mut any, mut any_priority, mut any_network) = (false, false, false);
        for q in self.requests.iter().filter(|q| open(q)) {
            any = true;
            any_priority |= q.priority;
            any_network |= q.network;
        }
        if !any {
            return None;
        }
        let prefer_network = any_network
            && params.network_priority > 0.0
            && (params.network_priority >= 1.0
                || self.rngs[r].random_bool(params.network_priority));
        let keep = |q: &Request| {
            open(q)
                && (!any_priority || q.priority)
                && (any_priority || !prefer_network || q.network)
        };
        let slq = params.arbitration == Arbitration::Slq
            && self.rngs[r].random_bool(params.slq_fraction);
        let top = if slq {
            self.requests
                .iter()
                .filter(|q| keep(q))
                .map(|q| q.fullness)
                .max()
                .unwrap_or(0)
        } else {
            0
        };
        let eligible = |q: &Request| keep(q) && (!slq || q.fullness == top);
        let n = self.requests.iter().filter(|q| eligible(q)).count();
        let k = self.rngs[r].random_range(0..n);
        self.requests.iter().filter(|q| eligible(q)).nth(k).copied()
    }
}
