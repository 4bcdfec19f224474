//! Messages run to completion on the flow model: rates are the max-min
//! allocation of the messages under way, brought up to date whenever one
//! finishes or starts ([`IncrementalMaxMin`]: only the flows a change can
//! reach are refilled). A message starts at its release time, and not
//! before the messages it waits for (`after`: e.g. the one before it on the
//! same DMA engine, which sends in order — every part of it when a message
//! is split over several routes; or the request a reply answers) have
//! finished and `gap` more has passed (latency, turnaround).
//!
//! Messages are stored flat ([`Messages`]: routes in one [`FlowTable`],
//! waits in one array): no allocation per message. Each message drains
//! lazily — its bytes left as of the last change of its rate, its finish
//! time in a heap — so an event costs the messages whose rates it changed,
//! not every message under way.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{Flow, FlowTable, IncrementalMaxMin, Interrupt, Stop};

/// A message: its route (links) and cap as a [`Flow`], and its size in the
/// capacities' unit × time (bytes when capacities are bytes per second).
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub flow: Flow,
    pub bytes: f64,
    /// The messages this one starts after (earlier indices).
    pub after: Vec<usize>,
    /// Earliest start.
    pub release: f64,
    /// Wait after the last of `after` has finished.
    pub gap: f64,
    /// A part of a message split over several routes whose bytes go on
    /// whichever route is free (adaptive routing): the earlier message
    /// (part) whose byte count this one drains too. The parts of such a
    /// message share one count, the sum of their `bytes`, drained at the
    /// sum of their rates, and finish together. They must start together.
    pub pool: Option<usize>,
}

impl Message {
    /// A message that may start at once.
    pub fn new(flow: Flow, bytes: f64) -> Self {
        Self { flow, bytes, after: Vec::new(), release: 0.0, gap: 0.0, pool: None }
    }
}

/// When a message may start and whose bytes it drains (the fields of
/// [`Message`] of those names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Start {
    pub release: f64,
    pub gap: f64,
    pub pool: Option<usize>,
}

impl Default for Start {
    fn default() -> Self {
        Start { release: 0.0, gap: 0.0, pool: None }
    }
}

/// A set of messages stored flat: the same as a slice of [`Message`]
/// without an allocation per message.
#[derive(Clone, Debug, Default)]
pub struct Messages {
    flows: FlowTable,
    bytes: Vec<f64>,
    release: Vec<f64>,
    gap: Vec<f64>,
    /// The message whose count each drains (itself unless a part).
    pool: Vec<u32>,
    /// `after[after_first[i]..after_first[i + 1]]`: what message `i` waits for.
    after_first: Vec<usize>,
    after: Vec<u32>,
}

impl Messages {
    pub fn new() -> Self {
        Messages { after_first: vec![0], flows: FlowTable::new(), ..Default::default() }
    }

    /// Adds a message over `links` (resources), capped at `cap`, of
    /// `bytes`, that waits for the messages `after` (earlier ones) and
    /// starts as `start` says; returns its number.
    pub fn push(&mut self, links: &[u32], cap: f64, bytes: f64, after: &[usize], start: Start) -> usize {
        let i = self.bytes.len();
        assert!(i < u32::MAX as usize, "messages are numbered in 32 bits");
        let pool = start.pool.unwrap_or(i);
        assert!(pool <= i && self.pool.get(pool).is_none_or(|&p| p as usize == pool), "a part drains the count of an earlier message that drains its own");
        for &a in after {
            assert!(a < i, "a message waits for an earlier one");
            self.after.push(a as u32);
        }
        self.after_first.push(self.after.len());
        self.flows.push(links, cap);
        self.bytes.push(bytes);
        self.release.push(start.release);
        self.gap.push(start.gap);
        self.pool.push(pool as u32);
        i
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn after(&self, i: usize) -> &[u32] {
        &self.after[self.after_first[i]..self.after_first[i + 1]]
    }

    /// Runs the messages to completion over resources of `capacity` (see
    /// [`run`]), asking `stop` between and during solves: `None` when it
    /// said stop.
    pub fn run_until(self, capacity: &[f64], stop: &dyn Stop) -> Option<Completion> {
        Drain::new(capacity, self, stop)?.run(stop)
    }
}

impl From<&[Message]> for Messages {
    fn from(messages: &[Message]) -> Self {
        let mut out = Messages::new();
        for m in messages {
            out.push(&m.flow.links, m.flow.cap, m.bytes, &m.after, Start { release: m.release, gap: m.gap, pool: m.pool });
        }
        out
    }
}

/// How a set of messages ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// Per message: when it started and when its last byte went.
    pub start: Vec<f64>,
    pub done: Vec<f64>,
    /// Max-min solves (each over the flows a set of starts and finishes
    /// could reach), and the flows they refilled in all.
    pub solves: u64,
    pub refilled: u64,
}

/// Messages that would finish within this fraction of the time elapsed
/// finish together (at most that much early): one re-solve for the group.
const TIE: f64 = 1e-4;

/// Completion time of each message (see [`run`]).
pub fn completion_times(capacity: &[f64], messages: &[Message]) -> Vec<f64> {
    run(capacity, messages).done
}

/// Runs `messages` to completion. Messages that would finish within a
/// ten-thousandth of the time elapsed of each other finish together, so a
/// pattern whose messages end nearly together costs one re-solve, not one
/// per message; no message finishes more than that fraction early.
pub fn run(capacity: &[f64], messages: &[Message]) -> Completion {
    run_until(capacity, messages, &Interrupt::never()).expect("never interrupted")
}

/// [`run`], asking `interrupt` between solves: `None` when it said stop.
pub fn run_until(capacity: &[f64], messages: &[Message], interrupt: &dyn Stop) -> Option<Completion> {
    Messages::from(messages).run_until(capacity, interrupt)
}

/// The state of a run of [`Messages`].
struct Drain {
    m: Messages,
    solver: IncrementalMaxMin,
    start: Vec<f64>,
    done: Vec<f64>,
    /// Per pool (a message that drains its own count): its parts
    /// (`parts[parts_first[p]..parts_first[p + 1]]`) and how it drains.
    parts_first: Vec<usize>,
    parts: Vec<u32>,
    pools: crate::DrainingPools,
    /// Per message: the messages waiting for it (`waiting[waiting_first[i]..]`),
    /// how many each still waits for, and when the last of those finished.
    waiting_first: Vec<usize>,
    waiting: Vec<u32>,
    pending: Vec<u32>,
    deps_done: Vec<f64>,
    /// Messages by start time; pools by finish time (with their version).
    ready: BinaryHeap<Reverse<(u64, u32)>>,
    finishing: BinaryHeap<Reverse<(u64, u32, u32)>>,
    touched: Vec<u32>,
    touched_flag: Vec<bool>,
    /// Parts under way.
    live: usize,
}

/// The values `pairs` gives, grouped by key (`0..n`) in the order given:
/// `(first, values)` with key `k`'s values at `values[first[k]..first[k + 1]]`.
/// `pairs` is called twice (count, then fill) with the function to give
/// each `(key, value)` to.
fn group(n: usize, pairs: impl Fn(&mut dyn FnMut(usize, u32))) -> (Vec<usize>, Vec<u32>) {
    let mut first = vec![0usize; n + 1];
    pairs(&mut |k, _| first[k + 1] += 1);
    for k in 0..n {
        first[k + 1] += first[k];
    }
    let mut fill = first.clone();
    let mut values = vec![0u32; first[n]];
    pairs(&mut |k, v| {
        values[fill[k]] = v;
        fill[k] += 1;
    });
    (first, values)
}

/// A non-negative time as a heap key (the bits of a non-negative float
/// order as the float does).
fn key(t: f64) -> u64 {
    t.max(0.0).to_bits()
}

impl Drain {
    /// The run's state, or `None` if `stop` said stop meanwhile (millions
    /// of messages take a second to set up).
    fn new(capacity: &[f64], mut m: Messages, stop: &dyn Stop) -> Option<Self> {
        let n = m.len();
        let flows = std::mem::take(&mut m.flows);
        let solver = IncrementalMaxMin::new(capacity.to_vec(), flows);
        if stop.stopped() {
            return None;
        }
        // Parts of each pool, and waiters of each message.
        let (parts_first, parts) = group(n, |emit| (0..n).for_each(|i| emit(m.pool[i] as usize, i as u32)));
        let (waiting_first, waiting) = group(n, |emit| (0..n).for_each(|i| m.after(i).iter().for_each(|&a| emit(a as usize, i as u32))));
        if stop.stopped() {
            return None;
        }
        let mut left = vec![0.0f64; n];
        for i in 0..n {
            left[m.pool[i] as usize] += m.bytes[i];
        }
        let pending: Vec<u32> = (0..n).map(|i| m.after(i).len() as u32).collect();
        let ready: Vec<_> = (0..n).filter(|&i| pending[i] == 0).map(|i| Reverse((key(m.release[i]), i as u32))).collect();
        Some(Drain {
            solver,
            start: vec![f64::NAN; n],
            done: vec![f64::NAN; n],
            parts_first,
            parts,
            pools: crate::DrainingPools::new(left),
            waiting_first,
            waiting,
            pending,
            deps_done: vec![0.0; n],
            finishing: BinaryHeap::new(),
            touched: Vec::new(),
            touched_flag: vec![false; n],
            live: 0,
            m,
            // Made in one pass, not a push per message.
            ready: BinaryHeap::from(ready),
        })
    }

    fn run(mut self, stop: &dyn Stop) -> Option<Completion> {
        let mut now = 0.0f64;
        loop {
            if stop.stopped() {
                return None;
            }
            // Messages whose start has come; empty ones finish at once.
            let mut started = 0u32;
            while let Some(&Reverse((t, i))) = self.ready.peek() {
                if f64::from_bits(t) > now {
                    break;
                }
                started = started.wrapping_add(1);
                if started.is_multiple_of(1 << 16) && stop.stopped() {
                    return None;
                }
                self.ready.pop();
                let i = i as usize;
                self.start[i] = now;
                if self.pools.left(self.m.pool[i] as usize) <= 0.0 {
                    self.finish(i, now);
                } else {
                    self.solver.add(i);
                    self.live += 1;
                }
            }
            if self.solver.changed() {
                if !self.solver.solve(stop) {
                    return None;
                }
                self.update_pools(now);
            }
            // The next finish (stale entries dropped) or start.
            while let Some(&Reverse((_, p, v))) = self.finishing.peek() {
                if v == self.pools.version(p as usize) {
                    break;
                }
                self.finishing.pop();
            }
            let next_finish = self.finishing.peek().map_or(f64::INFINITY, |&Reverse((t, _, _))| f64::from_bits(t));
            let next_start = self.ready.peek().map_or(f64::INFINITY, |&Reverse((t, _))| f64::from_bits(t));
            if self.live == 0 && !next_start.is_finite() {
                break;
            }
            assert!(next_finish.is_finite() || next_start.is_finite(), "a message can never finish (a link of zero capacity)");
            let dt = next_finish.min(next_start) - now;
            now += dt;
            // Pools that finish now or within the tie (stale entries skipped).
            let within = now + TIE * now + 1e-6 * dt;
            while let Some(&Reverse((t, p, v))) = self.finishing.peek() {
                if f64::from_bits(t) > within {
                    break;
                }
                self.finishing.pop();
                let p = p as usize;
                if v != self.pools.version(p) {
                    continue;
                }
                self.pools.empty(p);
                for k in self.parts_first[p]..self.parts_first[p + 1] {
                    let q = self.parts[k] as usize;
                    if self.solver.is_active(q) {
                        self.solver.remove(q);
                        self.live -= 1;
                        self.finish(q, now);
                    }
                }
            }
        }
        Some(Completion { start: self.start, done: self.done, solves: self.solver.solves, refilled: self.solver.solved_flows })
    }

    /// The pools of the flows the last solve refilled: drained up to `now`
    /// at their old rate, their new rate and finish time.
    fn update_pools(&mut self, now: f64) {
        for &q in self.solver.last_solved() {
            let p = self.m.pool[q as usize];
            if !self.touched_flag[p as usize] {
                self.touched_flag[p as usize] = true;
                self.touched.push(p);
            }
        }
        for p in std::mem::take(&mut self.touched) {
            let p = p as usize;
            self.touched_flag[p] = false;
            let parts = &self.parts[self.parts_first[p]..self.parts_first[p + 1]];
            let rate = parts.iter().filter(|&&q| self.solver.is_active(q as usize)).map(|&q| self.solver.rate(q as usize)).sum();
            let version = self.pools.set_rate(p, now, rate);
            if rate > 0.0 {
                let t = now + self.pools.left(p).max(0.0) / rate;
                self.finishing.push(Reverse((key(t), p as u32, version)));
            }
        }
    }

    /// Message `i` has finished at `now`: the messages that waited only for
    /// it become ready at their start.
    fn finish(&mut self, i: usize, now: f64) {
        self.done[i] = now;
        for k in self.waiting_first[i]..self.waiting_first[i + 1] {
            let w = self.waiting[k] as usize;
            self.pending[w] -= 1;
            self.deps_done[w] = self.deps_done[w].max(now);
            if self.pending[w] == 0 {
                let t = self.m.release[w].max(self.deps_done[w] + self.m.gap[w]);
                self.ready.push(Reverse((key(t), w as u32)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The slow, obvious form: at every event the reference solver's rates
    /// of every message under way, every pool drained step by step.
    fn slow(capacity: &[f64], messages: &[Message]) -> Vec<f64> {
        let n = messages.len();
        let pool: Vec<usize> = messages.iter().enumerate().map(|(i, m)| m.pool.unwrap_or(i)).collect();
        let mut left = vec![0.0; n];
        for (i, m) in messages.iter().enumerate() {
            left[pool[i]] += m.bytes;
        }
        let (mut done, mut start_at) = (vec![f64::NAN; n], vec![f64::NAN; n]);
        let mut started = vec![false; n];
        let mut now = 0.0f64;
        loop {
            // Start what may start; finish what is empty.
            loop {
                let mut moved = false;
                for (i, m) in messages.iter().enumerate() {
                    if !started[i] && m.after.iter().all(|&a| !done[a].is_nan()) {
                        let t = m.after.iter().map(|&a| done[a] + m.gap).fold(m.release, f64::max);
                        if t <= now {
                            started[i] = true;
                            start_at[i] = now;
                            moved = true;
                        }
                    }
                    if started[i] && done[i].is_nan() && left[pool[i]] <= 0.0 {
                        done[i] = now;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
            let live: Vec<usize> = (0..n).filter(|&i| started[i] && done[i].is_nan()).collect();
            let next_start = (0..n)
                .filter(|&i| !started[i] && messages[i].after.iter().all(|&a| !done[a].is_nan()))
                .map(|i| messages[i].after.iter().map(|&a| done[a] + messages[i].gap).fold(messages[i].release, f64::max))
                .fold(f64::INFINITY, f64::min);
            if live.is_empty() {
                if !next_start.is_finite() {
                    return done;
                }
                now = next_start;
                continue;
            }
            let flows: Vec<Flow> = live.iter().map(|&i| messages[i].flow.clone()).collect();
            let rates = crate::reference::max_min(capacity, &flows);
            let mut pool_rate = vec![0.0; n];
            for (&i, &r) in live.iter().zip(&rates) {
                pool_rate[pool[i]] += r;
            }
            let dt = live.iter().map(|&i| left[pool[i]] / pool_rate[pool[i]]).fold(next_start - now, f64::min);
            now += dt;
            let mut pools: Vec<usize> = live.iter().map(|&i| pool[i]).collect();
            pools.sort_unstable();
            pools.dedup();
            for p in pools {
                left[p] -= pool_rate[p] * dt;
                if left[p] <= pool_rate[p] * (1e-6 * dt + TIE * now) {
                    left[p] = 0.0;
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Random messages over a few links, with waits, releases, gaps and
        /// pooled parts: the incremental, lazily drained run finishes each
        /// as the slow form does (to the tie, a ten-thousandth of the time).
        #[test]
        fn finishes_as_the_slow_form_does(
            caps in prop::collection::vec(0.5f64..4.0, 1..6),
            raw in prop::collection::vec((prop::collection::btree_set(0u32..6, 1..4), 0.0f64..10.0, 0.0f64..3.0, 0u8..4, 0u8..3), 1..20),
        ) {
            let nl = caps.len() as u32;
            let mut msgs: Vec<Message> = Vec::new();
            for (links, bytes, t, wait, split) in raw {
                let i = msgs.len();
                let flow = Flow { links: links.iter().map(|l| l % nl).collect::<std::collections::BTreeSet<_>>().into_iter().collect(), cap: f64::INFINITY };
                let mut m = Message::new(flow, bytes);
                // Wait for an earlier message, or start at a release time.
                if wait > 0 && i > 0 {
                    m.after = vec![(i * 7 + wait as usize) % i];
                    m.gap = t / 4.0;
                } else {
                    m.release = t;
                }
                msgs.push(m.clone());
                // A second part on the next link, pooled or not.
                if split > 0 {
                    let mut part = m;
                    part.flow.links = vec![(part.flow.links[0] + 1) % nl];
                    part.pool = (split == 2).then_some(i);
                    msgs.push(part);
                }
            }
            let want = slow(&caps, &msgs);
            let got = completion_times(&caps, &msgs);
            let end = want.iter().copied().fold(1.0, f64::max);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                prop_assert!((g - w).abs() <= 5e-4 * end, "message {i}: {got:?} vs {want:?}");
            }
        }
    }

    #[test]
    fn two_messages_share_then_one_speeds_up() {
        let cap = [1.0];
        let m = |bytes| Message::new(Flow { links: vec![0], cap: f64::INFINITY }, bytes);
        let t = completion_times(&cap, &[m(1.0), m(2.0)]);
        // 0.5 each until t = 2 (the first has sent 1), then the second alone
        // sends its last 1 at rate 1.
        assert!((t[0] - 2.0).abs() < 1e-12 && (t[1] - 3.0).abs() < 1e-12, "{t:?}");
    }

    #[test]
    fn a_capped_message_leaves_bandwidth_to_the_other() {
        let cap = [10.0];
        let msgs = [
            Message::new(Flow { links: vec![0], cap: 2.0 }, 4.0),
            Message::new(Flow { links: vec![0], cap: f64::INFINITY }, 16.0),
        ];
        let t = completion_times(&cap, &msgs);
        assert!((t[0] - 2.0).abs() < 1e-12 && (t[1] - 2.0).abs() < 1e-12, "{t:?}");
    }

    #[test]
    fn a_message_waits_for_the_one_before_it() {
        let cap = [1.0, 1.0];
        let msgs = [
            Message::new(Flow { links: vec![0], cap: f64::INFINITY }, 1.0),
            Message { after: vec![0], ..Message::new(Flow { links: vec![0], cap: f64::INFINITY }, 1.0) },
            Message::new(Flow { links: vec![1], cap: f64::INFINITY }, 3.0),
        ];
        let t = completion_times(&cap, &msgs);
        assert_eq!(t, vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn releases_and_gaps_delay_starts() {
        let cap = [1.0];
        let link = || Flow { links: vec![0], cap: f64::INFINITY };
        let msgs = [
            Message { release: 2.0, ..Message::new(link(), 1.0) },
            Message { after: vec![0], gap: 0.5, ..Message::new(link(), 1.0) },
            Message { release: 3.0, ..Message::new(link(), 2.0) },
        ];
        // 0 runs 2..3; 1 starts at 3.5 and 2 at 3: they share until 2 is
        // half done... 2 alone 3..3.5 (0.5 sent), both 3.5..5.5 at 0.5
        // (1 done, 2 has sent 1.5), 2 alone 5.5..6.
        let c = run(&cap, &msgs);
        let want = [3.0, 5.5, 6.0];
        for (a, b) in c.done.iter().zip(want) {
            assert!((a - b).abs() < 1e-9, "{:?}", c.done);
        }
        assert_eq!(c.start, vec![2.0, 3.5, 3.0]);
    }

    #[test]
    fn parts_of_a_pool_share_their_bytes_and_finish_together() {
        // Two routes for one 3-byte message: one free (rate 2), one shared
        // with another message (rate 0.5 each on a link of 1). Fixed halves
        // would take 1.5 / 0.5 = 3; pooled, 3 / 2.5 = 1.2 for both parts.
        let cap = [2.0, 1.0];
        let msgs = [
            Message::new(Flow { links: vec![0], cap: f64::INFINITY }, 1.5),
            Message { pool: Some(0), ..Message::new(Flow { links: vec![1], cap: f64::INFINITY }, 1.5) },
            Message::new(Flow { links: vec![1], cap: f64::INFINITY }, 10.0),
        ];
        let c = run(&cap, &msgs);
        assert!((c.done[0] - 1.2).abs() < 1e-9 && (c.done[1] - 1.2).abs() < 1e-9, "{:?}", c.done);
        // The other message: 0.6 sent by 1.2, then alone at 1: 1.2 + 9.4.
        assert!((c.done[2] - 10.6).abs() < 1e-9, "{:?}", c.done);
    }
}
