//! Messages run to completion on the flow model: rates are the max-min
//! allocation of the messages under way, recomputed whenever one finishes
//! or starts. A message starts at its release time, and not before the
//! messages it waits for (`after`: e.g. the one before it on the same DMA
//! engine, which sends in order — every part of it when a message is split
//! over several routes; or the request a reply answers) have finished and
//! `gap` more has passed (latency, turnaround).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{Flow, Interrupt, MaxMin, Stop};

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

/// How a set of messages ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// Per message: when it started and when its last byte went.
    pub start: Vec<f64>,
    pub done: Vec<f64>,
    /// Max-min solves (one per set of messages under way).
    pub solves: u64,
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
    let n = messages.len();
    let mut done = vec![f64::NAN; n];
    let mut start = vec![f64::NAN; n];
    // Bytes left per pool (a message is its own pool unless it drains another's).
    let pool: Vec<usize> = messages.iter().enumerate().map(|(i, m)| m.pool.unwrap_or(i)).collect();
    let mut left = vec![0.0f64; n];
    for (i, m) in messages.iter().enumerate() {
        assert!(pool[i] <= i && pool[pool[i]] == pool[i], "a part drains the count of an earlier message that drains its own");
        left[pool[i]] += m.bytes;
    }
    let mut pool_rate = vec![0.0f64; n];
    // Messages waiting for each message, how many each still waits for,
    // and the time the last of those finished.
    let mut waiting: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pending: Vec<usize> = vec![0; n];
    let mut deps_done = vec![0.0f64; n];
    let mut ready: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let at = |x: f64| x.max(0.0).to_bits();
    for (i, m) in messages.iter().enumerate() {
        for &p in &m.after {
            assert!(p < i, "a message waits for an earlier one");
            waiting[p].push(i);
        }
        pending[i] = m.after.len();
        if m.after.is_empty() {
            ready.push(Reverse((at(m.release), i)));
        }
    }
    let mut live: Vec<usize> = Vec::new();
    let mut solver = MaxMin::new();
    let mut rates = Vec::with_capacity(n);
    let mut finished: Vec<usize> = Vec::new();
    let mut solves = 0;
    let mut dirty = true;
    let mut now = 0.0f64;
    let (mut step, mut pool_step, mut drained) = (0u32, vec![u32::MAX; n], Vec::new());
    loop {
        if interrupt.stopped() {
            return None;
        }
        // Messages whose start has come.
        while let Some(&Reverse((t, i))) = ready.peek() {
            if f64::from_bits(t) > now {
                break;
            }
            ready.pop();
            start[i] = now;
            live.push(i);
            dirty = true;
        }
        // Empty messages finish at once, releasing their successors.
        let mut k = 0;
        while k < live.len() {
            let i = live[k];
            if left[pool[i]] <= 0.0 {
                done[i] = now;
                live.swap_remove(k);
                release(i, now, messages, &waiting, &mut pending, &mut deps_done, &mut ready);
                dirty = true;
            } else {
                k += 1;
            }
        }
        let next_start = ready.peek().map_or(f64::INFINITY, |&Reverse((t, _))| f64::from_bits(t));
        if live.is_empty() {
            if !next_start.is_finite() {
                break;
            }
            now = next_start;
            continue;
        }
        if dirty {
            if interrupt.stopped() {
                return None;
            }
            if !solver.solve_until(capacity, &MessageFlows { messages, live: &live }, &mut rates, interrupt) {
                return None;
            }
            solves += 1;
            dirty = false;
        }
        for &i in &live {
            pool_rate[pool[i]] = 0.0;
        }
        for (&i, &r) in live.iter().zip(&rates) {
            pool_rate[pool[i]] += r;
        }
        let dt_done = live
            .iter()
            .map(|&i| if pool_rate[pool[i]] > 0.0 { left[pool[i]] / pool_rate[pool[i]] } else { f64::INFINITY })
            .fold(f64::INFINITY, f64::min);
        assert!(dt_done.is_finite() || next_start.is_finite(), "a message can never finish (a link of zero capacity)");
        let dt = dt_done.min(next_start - now);
        now += dt;
        finished.clear();
        // Drain each pool once, then finish the parts of the emptied ones.
        // (Each pool once, found by a stamp: sorting millions of parts per
        // step cost more than the step.)
        step = step.wrapping_add(1);
        drained.clear();
        for &i in &live {
            if pool_step[pool[i]] != step {
                pool_step[pool[i]] = step;
                drained.push(pool[i]);
            }
        }
        for &q in &drained {
            let r = pool_rate[q];
            left[q] -= r * dt;
            if left[q] <= r * (1e-6 * dt + TIE * now) || left[q] <= 1e-9 * messages[q].bytes {
                left[q] = 0.0;
            }
        }
        live.retain(|&i| {
            if left[pool[i]] <= 0.0 {
                done[i] = now;
                finished.push(i);
                false
            } else {
                true
            }
        });
        // `rates` must follow `live`: solve again before the next step.
        dirty |= !finished.is_empty();
        for &i in &finished {
            release(i, now, messages, &waiting, &mut pending, &mut deps_done, &mut ready);
        }
    }
    Some(Completion { start, done, solves })
}

/// The flows of the messages under way, read in place (a solve over
/// millions of messages would otherwise copy every route each time).
struct MessageFlows<'a> {
    messages: &'a [Message],
    live: &'a [usize],
}

impl crate::FlowSet for MessageFlows<'_> {
    fn count(&self) -> usize {
        self.live.len()
    }
    #[inline]
    fn flow(&self, i: usize) -> &Flow {
        &self.messages[self.live[i]].flow
    }
}

/// Message `i` has finished at `now`: the messages that waited only for it
/// become ready at their start.
fn release(
    i: usize,
    now: f64,
    messages: &[Message],
    waiting: &[Vec<usize>],
    pending: &mut [usize],
    deps_done: &mut [f64],
    ready: &mut BinaryHeap<Reverse<(u64, usize)>>,
) {
    for &w in &waiting[i] {
        pending[w] -= 1;
        deps_done[w] = deps_done[w].max(now);
        if pending[w] == 0 {
            let t = messages[w].release.max(deps_done[w] + messages[w].gap);
            ready.push(Reverse((t.max(0.0).to_bits(), w)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
