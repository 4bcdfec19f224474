//! The fast max-min solver: progressive filling driven by a heap of the
//! levels at which each link would saturate (its free capacity over its
//! unfrozen flows — all unfrozen flows share the current level) and at
//! which each capped flow reaches its cap. Popping the lowest freezes the
//! flows it holds. A link's level only rises as flows freeze (each froze
//! at or below it), so its heap entry is re-keyed lazily: when it pops
//! below its current level it goes back with that level, once, instead of
//! a new entry at every flow that froze on it (700,000 capped flows made
//! millions of entries). O((flows × path) · log) per solve at worst;
//! buffers are kept between solves.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::{Flow, FlowTable};

/// A heap entry: the level at which a link saturates or a flow reaches
/// its cap (also used by [`crate::IncrementalMaxMin`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) level: f64,
    /// Link index, or `u32::MAX - flow` for a flow's cap.
    pub(crate) what: u32,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed: the lowest level first (a min-heap in a `BinaryHeap`).
    fn cmp(&self, o: &Self) -> Ordering {
        o.level
            .total_cmp(&self.level)
            .then_with(|| o.what.cmp(&self.what))
    }
}

/// The flows a solve takes: a slice of them, some of a slice by index
/// ([`Subset`]: the messages under way, without copying their routes), or
/// a [`FlowTable`].
pub trait FlowSet {
    fn count(&self) -> usize;
    /// The links flow `i` crosses.
    fn links(&self, i: usize) -> &[u32];
    /// Flow `i`'s rate cap (`f64::INFINITY` for none).
    fn cap(&self, i: usize) -> f64;
}

impl FlowSet for [Flow] {
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn links(&self, i: usize) -> &[u32] {
        &self[i].links
    }
    #[inline]
    fn cap(&self, i: usize) -> f64 {
        self[i].cap
    }
}

impl FlowSet for FlowTable {
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn links(&self, i: usize) -> &[u32] {
        FlowTable::links(self, i)
    }
    #[inline]
    fn cap(&self, i: usize) -> f64 {
        FlowTable::cap(self, i)
    }
}

/// The flows `all[live[0]]`, `all[live[1]]`, … in that order.
pub struct Subset<'a, S: FlowSet + ?Sized> {
    pub all: &'a S,
    pub live: &'a [usize],
}

impl<S: FlowSet + ?Sized> FlowSet for Subset<'_, S> {
    fn count(&self) -> usize {
        self.live.len()
    }
    #[inline]
    fn links(&self, i: usize) -> &[u32] {
        self.all.links(self.live[i])
    }
    #[inline]
    fn cap(&self, i: usize) -> f64 {
        self.all.cap(self.live[i])
    }
}

/// Reusable max-min solver.
#[derive(Default)]
pub struct MaxMin {
    start: Vec<u32>,
    on_link: Vec<u32>,
    active: Vec<u32>,
    frozen_load: Vec<f64>,
    frozen: Vec<bool>,
    heap: BinaryHeap<Entry>,
    /// The links the flows cross, in increasing order, numbered from 0 for
    /// the solve (`local_of`, valid where `link_epoch` is this solve's):
    /// a solve of a few flows in a large network then costs its links,
    /// not the network's. Increasing order keeps the heap's tie order.
    used: Vec<u32>,
    local_of: Vec<u32>,
    link_epoch: Vec<u32>,
    epoch: u32,
    cap_local: Vec<f64>,
}

impl MaxMin {
    pub fn new() -> Self {
        Self::default()
    }

    /// Max-min fair rates of `flows` over links of `capacity`, into `rates`.
    pub fn solve(&mut self, capacity: &[f64], flows: &[Flow], rates: &mut Vec<f64>) {
        self.solve_set(capacity, flows, rates);
    }

    /// [`Self::solve`] of any [`FlowSet`] (a [`FlowTable`]).
    pub fn solve_set<S: FlowSet + ?Sized>(&mut self, capacity: &[f64], flows: &S, rates: &mut Vec<f64>) {
        let done = self.solve_until(capacity, flows, rates, &crate::Interrupt::never());
        debug_assert!(done);
    }

    /// [`Self::solve`], asking `stop` every few thousand steps (a solve
    /// over millions of flows takes seconds): false when it said stop,
    /// the rates then unfinished.
    pub fn solve_until<S: FlowSet + ?Sized>(&mut self, capacity: &[f64], flows: &S, rates: &mut Vec<f64>, stop: &dyn crate::Stop) -> bool {
        let nf = flows.count();
        rates.clear();
        rates.resize(nf, 0.0);
        if self.link_epoch.len() < capacity.len() {
            self.link_epoch.resize(capacity.len(), 0);
            self.local_of.resize(capacity.len(), 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_epoch.fill(0);
            self.epoch = 1;
        }
        self.used.clear();
        for i in 0..nf {
            // Millions of flows take a while to set up: ask now and then.
            if i % 65536 == 65535 && stop.stopped() {
                return false;
            }
            for &l in flows.links(i) {
                if self.link_epoch[l as usize] != self.epoch {
                    self.link_epoch[l as usize] = self.epoch;
                    self.used.push(l);
                }
            }
        }
        self.used.sort_unstable();
        self.cap_local.clear();
        for (i, &l) in self.used.iter().enumerate() {
            self.local_of[l as usize] = i as u32;
            self.cap_local.push(capacity[l as usize]);
        }
        let local_of = std::mem::take(&mut self.local_of);
        let capacity = std::mem::take(&mut self.cap_local);
        let done = self.fill(&capacity, &local_of, flows, rates, stop);
        self.local_of = local_of;
        self.cap_local = capacity;
        done
    }

    /// Progressive filling over the solve's links (local numbers, their
    /// `capacity`).
    fn fill<S: FlowSet + ?Sized>(&mut self, capacity: &[f64], local_of: &[u32], flows: &S, rates: &mut [f64], stop: &dyn crate::Stop) -> bool {
        let (nl, nf) = (capacity.len(), flows.count());
        // Flows of each link (CSR).
        self.start.clear();
        self.start.resize(nl + 1, 0);
        for i in 0..nf {
            for &l in flows.links(i) {
                self.start[local_of[l as usize] as usize + 1] += 1;
            }
        }
        for l in 0..nl {
            self.start[l + 1] += self.start[l];
        }
        self.on_link.clear();
        self.on_link.resize(self.start[nl] as usize, 0);
        self.active.clear();
        self.active.resize(nl, 0);
        for i in 0..nf {
            if i % 65536 == 65535 && stop.stopped() {
                return false;
            }
            for &l in flows.links(i) {
                let l = local_of[l as usize] as usize;
                self.on_link[(self.start[l] + self.active[l]) as usize] = i as u32;
                self.active[l] += 1;
            }
        }
        self.frozen_load.clear();
        self.frozen_load.resize(nl, 0.0);
        self.frozen.clear();
        self.frozen.resize(nf, false);
        if self.caps_fit(capacity, local_of, flows, nf, rates) {
            return true;
        }
        self.heap.clear();
        for (l, (&n, &c)) in self.active.iter().zip(capacity).enumerate() {
            if n > 0 {
                self.heap.push(Entry {
                    level: c.max(0.0) / n as f64,
                    what: l as u32,
                });
            }
        }
        for (i, rate) in rates.iter_mut().enumerate().take(nf) {
            let cap = flows.cap(i);
            if cap.is_finite() {
                self.heap.push(Entry {
                    level: cap.max(0.0),
                    what: u32::MAX - i as u32,
                });
            } else if flows.links(i).is_empty() {
                *rate = f64::INFINITY;
                self.frozen[i] = true;
            }
        }
        let mut steps = 0u32;
        while let Some(e) = self.heap.pop() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(4096) && stop.stopped() {
                return false;
            }
            if e.what > u32::MAX - nf as u32 {
                let i = (u32::MAX - e.what) as usize;
                if !self.frozen[i] {
                    self.freeze(local_of, flows, i, e.level, rates);
                }
            } else {
                let l = e.what as usize;
                if self.active[l] == 0 {
                    continue;
                }
                // A link's level only rises as flows freeze (each froze at
                // or below it), so its entry may be stale-low: re-key it
                // now, once, rather than at every flow that froze on it.
                let key = ((capacity[l] - self.frozen_load[l]) / self.active[l] as f64).max(e.level);
                if key > e.level {
                    self.heap.push(Entry { level: key, what: l as u32 });
                    continue;
                }
                for k in self.start[l]..self.start[l + 1] {
                    let i = self.on_link[k as usize] as usize;
                    if !self.frozen[i] {
                        self.freeze(local_of, flows, i, e.level, rates);
                    }
                }
            }
        }
        true
    }

    /// When every flow has a cap and no link is loaded past its capacity
    /// with every flow at its cap, the caps are the max-min rates: no
    /// filling needed (an open-loop pattern below saturation). Uses
    /// `frozen_load` for the loads; false (and the loads reset) otherwise.
    fn caps_fit<S: FlowSet + ?Sized>(&mut self, capacity: &[f64], local_of: &[u32], flows: &S, nf: usize, rates: &mut [f64]) -> bool {
        if (0..nf).any(|i| !flows.cap(i).is_finite()) {
            return false;
        }
        for i in 0..nf {
            let cap = flows.cap(i).max(0.0);
            for &l in flows.links(i) {
                self.frozen_load[local_of[l as usize] as usize] += cap;
            }
        }
        let fit = self.frozen_load.iter().zip(capacity).all(|(&load, &c)| load <= c.max(0.0));
        if fit {
            for (i, r) in rates.iter_mut().enumerate().take(nf) {
                *r = flows.cap(i).max(0.0);
            }
        } else {
            self.frozen_load.fill(0.0);
        }
        fit
    }

    fn freeze<S: FlowSet + ?Sized>(&mut self, local_of: &[u32], flows: &S, i: usize, level: f64, rates: &mut [f64]) {
        self.frozen[i] = true;
        rates[i] = level;
        for &l in flows.links(i) {
            let l = local_of[l as usize] as usize;
            self.active[l] -= 1;
            self.frozen_load[l] += level;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check_max_min, reference};
    use proptest::prelude::*;

    fn flow(links: &[u32], cap: f64) -> Flow {
        Flow { links: links.to_vec(), cap }
    }

    #[test]
    fn textbook_example() {
        // Links of capacity 1: flows A (0,1), B (0), C (1), D (1, cap 0.1).
        let cap = [1.0, 1.0];
        let flows = [flow(&[0, 1], f64::INFINITY), flow(&[0], f64::INFINITY), flow(&[1], f64::INFINITY), flow(&[1], 0.1)];
        let mut r = Vec::new();
        MaxMin::new().solve(&cap, &flows, &mut r);
        // D is capped at 0.1; link 1 then holds A and C at 0.45; B takes 0.55.
        let want = [0.45, 0.55, 0.45, 0.1];
        for (a, b) in r.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{r:?}");
        }
        for (a, b) in reference::max_min(&cap, &flows).iter().zip(&r) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The fast solver agrees with the reference and is max-min fair.
        #[test]
        fn fast_matches_reference(
            caps in proptest::collection::vec(0.5f64..10.0, 1..12),
            raw in proptest::collection::vec((proptest::collection::vec(0u32..12, 0..5), proptest::option::of(0.1f64..8.0)), 1..25),
        ) {
            let nl = caps.len() as u32;
            let flows: Vec<Flow> = raw
                .iter()
                .map(|(ls, c)| {
                    let mut ls: Vec<u32> = ls.iter().map(|l| l % nl).collect();
                    ls.sort_unstable();
                    ls.dedup();
                    Flow { links: ls, cap: c.unwrap_or(f64::INFINITY) }
                })
                .filter(|f| !(f.links.is_empty() && f.cap.is_infinite()))
                .collect();
            let slow = reference::max_min(&caps, &flows);
            let mut fast = Vec::new();
            MaxMin::new().solve(&caps, &flows, &mut fast);
            for (a, b) in slow.iter().zip(&fast) {
                prop_assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0), "{slow:?} vs {fast:?}");
            }
            prop_assert!(check_max_min(&caps, &flows, &fast, 1e-9).is_ok(), "{:?}", check_max_min(&caps, &flows, &fast, 1e-9));
        }
    }
}
