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
/// Most VCs of one input (dynamic, escape and priority).
pub(crate) const MAX_VCS: usize = 24;


/// min(3, ⌊4·used / cap⌋), the quarter of its buffer a queue fills, as
/// three comparisons (⌊4u/c⌋ ≥ k ⇔ 4u ≥ k·c): a division per head routed
/// showed in profiles.
#[inline]
pub(crate) fn quarter_used(used: u16, cap: u16) -> u8 {
    let (u4, c) = (used as u32 * 4, cap.max(1) as u32);
    (u4 >= c) as u8 + (u4 >= 2 * c) as u8 + (u4 >= 3 * c) as u8
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub unit: u16,
    pub queue: u16,
    pub out: u8,
    pub vc: u8,
    pub cost: u8,
    pub crossed: bool,
    pub priority: bool,
    pub network: bool,
    pub fullness: u8,
}

impl Router {
    /// Step 2: each input unit proposes requests from its VC heads.
    /// `free_at_start`: the outputs whose link was free when the
    /// arbitration began ([`Self::free_outputs`]); those granted since are
    /// in `out_taken`.
    pub(super) fn collect_requests<Q: QueueSet>(&mut self, r: usize, t: u64, free_at_start: u64, out_taken: u64, q_taken: &Q, env: &mut Env) {
        // The layout's few numbers this needs (a copy of the whole layout
        // per call shows in profiles).
        let lay = &env.net.lay;
        let (ports, units, vcs, qw) = (lay.ports, lay.units, lay.vcs, lay.qwords);
        let (npr, fifos_per_node) = (lay.npr, lay.fifos_per_node);
        // A head that cannot use a free output is skipped without drawing
        // random numbers.
        let free_out = free_at_start & !out_taken;
        // Queues whose head could use a free output, or has arrived (its
        // input's reception path is checked in `route_head`), in queue order:
        // the units in order, their VCs in order.
        let base = r * (ports + 1) * qw;
        let want = |o: usize| &self.inputs.want[base + o * qw..base + (o + 1) * qw];
        let mut cands = Q::load(want(ports));
        let mut m = free_out;
        while m != 0 {
            cands.or_load(want(m.trailing_zeros() as usize));
            m &= m - 1;
        }
        cands.remove_all(q_taken);
        while let Some(first) = cands.first() {
            let unit = if first < ports * vcs { lay.unit_of_vc_queue(first) } else { ports + (first - ports * vcs) };
            let limit = if unit < ports { env.net.params.paths } else { 1 };
            let used = self.inputs.paths_used[r * units + unit];
            let slots = limit.saturating_sub(used) as usize;
            if unit >= ports {
                cands.take_range(first, 1);
                // The host interface feeds every injection FIFO of the node;
                // while it is busy no FIFO starts a packet (a `Wake` is due).
                if slots == 0 {
                    // Its one path still streams the packet before.
                    self.inputs.block(r * lay.queues + first, t, crate::limits::Cause::Paths, env.net.run.warmup);
                    continue;
                }
                let node = r * npr + (unit - ports) / fifos_per_node;
                if env.nic.host_free_at[node] > t as f64 {
                    self.inputs.block(r * lay.queues + first, t, crate::limits::Cause::Host, env.net.run.warmup);
                    continue;
                }
                if let Some(req) = self.route_head(env, r, t, unit, first, out_taken, free_out) {
                    self.requests.push(req);
                }
                continue;
            }
            // This unit's requests start here: its arrived heads (for the
            // reception path) and those for an output (for a path).
            let start = self.requests.len();
            let mut k = 0;
            let lo = unit * vcs;
            let mut pending = cands.take_range(lo, vcs);
            while pending != 0 {
                let q = lo + pending.trailing_zeros() as usize;
                pending &= pending - 1;
                let Some(req) = self.route_head(env, r, t, unit, q, out_taken, free_out) else {
                    continue;
                };
                if req.out == EJECT {
                    self.requests.push(req);
                } else if slots > 0 {
                    self.requests.push(req);
                    k += 1;
                } else {
                    self.inputs.block(r * lay.queues + q, t, crate::limits::Cause::Paths, env.net.run.warmup);
                }
            }
            if k > slots {
                self.receiver_arbitration(r, start, k, slots, &env.net.params);
            }
        }
    }

    /// The outputs of router `r` whose link is free at `t`.
    #[inline]
    pub(super) fn free_outputs(&self, r: usize, t: u64, ports: usize) -> u64 {
        let mut free = 0u64;
        for (o, &at) in self.outputs.out_free_at[r * ports..(r + 1) * ports].iter().enumerate() {
            free |= ((at <= t) as u64) << o;
        }
        free
    }

    /// Receiver arbitration among the `k` requests for an output from
    /// `requests[start..]` (one input unit's, in VC order), more than its
    /// `slots` free paths: the priority VC first, then modified SLQ
    /// (fullest first) or a random order. Losers withdraw.
    #[cold]
    fn receiver_arbitration(&mut self, r: usize, start: usize, k: usize, slots: usize, params: &RouterParams) {
        let mut feasible = [(0u32, 0u32); MAX_VCS];
        for (item, i) in feasible.iter_mut().zip((start..self.requests.len()).filter(|&i| self.requests[i].out != EJECT)) {
            item.1 = i as u32;
        }
        let slq = params.arbitration == Arbitration::Slq && self.rngs[r].random_bool(params.slq_fraction);
        for item in feasible.iter_mut().take(k) {
            let req = self.requests[item.1 as usize];
            let noise = self.rngs[r].random::<u32>() >> 8;
            item.0 = ((req.priority as u32) << 31)
                | if slq { (req.fullness as u32) << 24 } else { 0 }
                | noise;
        }
        feasible[..k].sort_unstable_by(|a, b| b.0.cmp(&a.0));
        for item in feasible.iter().take(k).skip(slots) {
            self.requests[item.1 as usize].out = WITHDRAWN;
        }
    }

    #[inline]
    pub(super) fn fullness(&self, qi: usize, cap: u16) -> u8 {
        quarter_used(self.inputs.q_used[qi], cap)
    }


    /// Step 3: the winner among the requests for output `out`: priority
    /// packets first, then in-network packets on `network_priority` of the
    /// arbitrations, then the fullest (SLQ cycles) or any, at random.
    pub(super) fn sender_arbitration<Q: QueueSet>(&mut self, r: usize, out: u8, q_taken: &Q, params: &RouterParams) -> Option<Request> {
        let open = |q: &Request| q.out == out && !q_taken.contains(q.queue as usize);
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

#[cfg(test)]
mod tests {
    use super::quarter_used;

    #[test]
    fn quarters_match_the_division() {
        for cap in 0..=300u16 {
            for used in 0..=700u16 {
                let want = (used as u32 * 4 / cap.max(1) as u32).min(3) as u8;
                assert_eq!(quarter_used(used, cap), want, "{used} of {cap}");
            }
        }
    }
}
