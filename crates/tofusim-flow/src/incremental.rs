//! Max-min rates of a changing set of flows, re-solved only where a
//! change can reach.
//!
//! Two facts of progressive filling bound what a start or a finish moves:
//!
//! 1. **Level.** Let λ₀ be the lowest of: the rate each finished flow
//!    had, and for each started flow its cap and `capacity / flows` of
//!    each of its links (no link saturates below that share, so no new
//!    flow is held below it). Up to level λ₀ the filling with and without
//!    the change freezes the same flows at the same levels: a link of a
//!    finished flow did not saturate below that flow's rate (it would have
//!    held it there) and carries less now; a link of a started flow
//!    cannot saturate below its share. So **every flow whose rate was
//!    below λ₀ keeps it**, and the others are the max-min allocation of
//!    the remaining capacity (each link's capacity less the rates of the
//!    flows kept).
//! 2. **Reach.** Among the flows at λ₀ or above, those that share no link
//!    with a changed one, directly or through other such flows, keep
//!    their rates too (max-min decomposes over connected parts).
//!
//! A solve therefore walks from the changed flows' links through flows at
//! or above λ₀ only, and refills just those (the *part*) against the
//! capacity the others leave. When the fastest flows finish first — an
//! all-to-all, where the short pairs drain first — the part is the few
//! flows above them; on a nearest-neighbour collective it is the links a
//! message crossed. The rates are those of a full solve up to rounding
//! (the kept flows' loads are summed in another order): the property test
//! below checks them against [`crate::MaxMin`] and the reference after
//! every change. Rates within a relative 10⁻⁹ of λ₀ are refilled too, so
//! that a rate rounded just below the level is never kept by mistake.
//!
//! Data: routes in one [`FlowTable`]; each link's active flows in one
//! slot array sized from the routes (no allocation per flow or per
//! change). A finished flow is only marked: the solve walks every link a
//! finished flow left anyway, and drops it from the link's slots there
//! (removing it at once cost two cache misses per link, a third of an
//! all-to-all's time).

use std::collections::BinaryHeap;

use crate::solver::Entry;
use crate::{FlowTable, Stop};

/// Rates within this relative distance below the restart level are
/// refilled too (rounding, see the module docs).
const SLACK: f64 = 1e-9;

/// Work done since `stop` was last asked: a solve asks every 2¹⁶ slots
/// it reads (a link's pop reads thousands of them on an all-to-all, so a
/// count of pops asked too seldom).
#[derive(Default)]
struct Work(usize);

impl Work {
    /// Counts `n` more; whether it is time to ask.
    #[inline]
    fn add(&mut self, n: usize) -> bool {
        self.0 += n + 1;
        if self.0 >= 1 << 16 {
            self.0 = 0;
            true
        } else {
            false
        }
    }
}

/// A flow's rate and the last solve that put it in its part and froze it.
#[derive(Clone, Copy, Debug)]
struct FlowState {
    rate: f64,
    in_part: u32,
    frozen: u32,
}

/// Incremental max-min solver over a fixed table of flows, of which a
/// changing subset is active.
pub struct IncrementalMaxMin {
    flows: FlowTable,
    capacity: Vec<f64>,
    /// Per flow: its rate and solve stamps, read together for every slot
    /// a solve walks (one cache line instead of three).
    state: Vec<FlowState>,
    /// Per flow: active.
    active: Vec<bool>,
    /// The flows on link `l`: `slots[start[l]..start[l] + count[l]]` (a
    /// flow once per time it crosses the link): the active ones and those
    /// finished since the last solve. Sized for every flow of the table.
    slots: Vec<u32>,
    start: Vec<usize>,
    count: Vec<u32>,
    /// Per flow: finished, and still in that many of its links' slots;
    /// per link: finished flows still in its slots.
    stale: Vec<u32>,
    stale_on: Vec<u32>,
    /// Changes since the last solve: the links finished flows left, the
    /// flows started, and the lowest rate a finished flow had.
    seeds: Vec<u32>,
    fresh: Vec<u32>,
    floor: f64,
    // A solve's working state, stamped with its number.
    epoch: u32,
    link_seen: Vec<u32>,
    /// Per link of the part: its flows of the part not yet frozen, the
    /// capacity the others leave, and the load of its frozen ones.
    unfrozen: Vec<u32>,
    free: Vec<f64>,
    frozen_load: Vec<f64>,
    heap: BinaryHeap<Entry>,
    stack: Vec<u32>,
    visited: Vec<u32>,
    part: Vec<u32>,
    /// Flows refilled, summed over the solves.
    pub solved_flows: u64,
    /// Solves that refilled anything.
    pub solves: u64,
}

impl IncrementalMaxMin {
    /// For the flows of `flows` over links of `capacity` (every link a
    /// flow crosses must have one), none active yet.
    pub fn new(capacity: Vec<f64>, flows: FlowTable) -> Self {
        let (nl, nf) = (capacity.len(), flows.len());
        assert!(flows.link_bound() <= nl, "a flow crosses a link without a capacity");
        assert!(nl + nf < u32::MAX as usize, "links and flows are numbered in 32 bits");
        let mut start = vec![0usize; nl + 1];
        for &l in flows.all_links() {
            start[l as usize + 1] += 1;
        }
        for l in 0..nl {
            start[l + 1] += start[l];
        }
        let incidences = flows.all_links().len();
        IncrementalMaxMin {
            capacity,
            state: vec![FlowState { rate: 0.0, in_part: 0, frozen: 0 }; nf],
            active: vec![false; nf],
            slots: vec![0; incidences],
            start,
            count: vec![0; nl],
            stale: vec![0; nf],
            stale_on: vec![0; nl],
            seeds: Vec::new(),
            fresh: Vec::new(),
            floor: f64::INFINITY,
            epoch: 0,
            link_seen: vec![0; nl],
            unfrozen: vec![0; nl],
            free: vec![0.0; nl],
            frozen_load: vec![0.0; nl],
            heap: BinaryHeap::new(),
            stack: Vec::new(),
            visited: Vec::new(),
            part: Vec::new(),
            solved_flows: 0,
            solves: 0,
            flows,
        }
    }

    /// The flows' routes and caps.
    pub fn flows(&self) -> &FlowTable {
        &self.flows
    }

    /// Whether flow `q` is active.
    pub fn is_active(&self, q: usize) -> bool {
        self.active[q]
    }

    /// Flow `q`'s rate as of the last solve (an active flow's).
    #[inline]
    pub fn rate(&self, q: usize) -> f64 {
        self.state[q].rate
    }

    /// Flow `q` has become active.
    pub fn add(&mut self, q: usize) {
        assert!(!self.active[q], "flow {q} is active already");
        if self.stale[q] > 0 {
            // Started again before a solve dropped it from its links.
            for i in 0..self.flows.links(q).len() {
                self.drop_finished(self.flows.links(q)[i] as usize);
            }
        }
        self.active[q] = true;
        // Unknown until solved: above any level, so always refilled.
        self.state[q].rate = f64::INFINITY;
        self.fresh.push(q as u32);
        for &l in self.flows.links(q) {
            let l = l as usize;
            self.slots[self.start[l] + self.count[l] as usize] = q as u32;
            self.count[l] += 1;
        }
    }

    /// Flow `q` is no longer active.
    pub fn remove(&mut self, q: usize) {
        assert!(self.active[q], "flow {q} is not active");
        self.active[q] = false;
        self.stale[q] = self.flows.links(q).len() as u32;
        // (A flow never solved has an infinite rate: no bound.)
        self.floor = self.floor.min(self.state[q].rate);
        for &l in self.flows.links(q) {
            self.stale_on[l as usize] += 1;
        }
        self.seeds.extend_from_slice(self.flows.links(q));
    }

    /// Drops the finished flows from link `l`'s slots.
    fn drop_finished(&mut self, l: usize) {
        if self.stale_on[l] == 0 {
            return;
        }
        self.stale_on[l] = 0;
        let slots = &mut self.slots[self.start[l]..self.start[l] + self.count[l] as usize];
        let mut kept = 0;
        for i in 0..slots.len() {
            let q = slots[i];
            if self.active[q as usize] {
                slots[kept] = q;
                kept += 1;
            } else {
                self.stale[q as usize] -= 1;
            }
        }
        self.count[l] = kept as u32;
    }

    /// Whether flows started or finished since the last solve.
    pub fn changed(&self) -> bool {
        !self.seeds.is_empty() || !self.fresh.is_empty()
    }

    /// The flows the last [`Self::solve`] refilled (the others kept their
    /// rates), in no particular order.
    pub fn last_solved(&self) -> &[u32] {
        &self.part
    }

    /// Brings the rates up to date with the changes since the last solve
    /// (see the module docs for which flows it refills). False when `stop`
    /// said stop: the rates are then unfinished and the solver must not be
    /// used again.
    pub fn solve(&mut self, stop: &dyn Stop) -> bool {
        self.part.clear();
        if !self.changed() {
            return true;
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_seen.fill(0);
            self.state.iter_mut().for_each(|s| (s.in_part, s.frozen) = (0, 0));
            self.epoch = 1;
        }
        let epoch = self.epoch;
        // The restart level: no started flow can be held below its cap or
        // its links' equal shares.
        let mut floor = self.floor;
        for &q in &self.fresh {
            let q = q as usize;
            if self.active[q] {
                let share = self.flows.links(q).iter().map(|&l| self.capacity[l as usize] / self.count[l as usize] as f64);
                floor = floor.min(share.fold(self.flows.cap(q), f64::min));
            }
        }
        let floor = (floor * (1.0 - SLACK)).max(0.0);
        // The part: from the changed links and the started flows, through
        // the flows at or above the level.
        self.stack.clear();
        self.visited.clear();
        let fresh = std::mem::take(&mut self.fresh);
        for &q in &fresh {
            if self.active[q as usize] && self.state[q as usize].in_part != epoch {
                self.join(q as usize);
            }
        }
        self.fresh = fresh;
        self.fresh.clear();
        for i in 0..self.seeds.len() {
            let l = self.seeds[i];
            if self.link_seen[l as usize] != epoch {
                self.link_seen[l as usize] = epoch;
                self.stack.push(l);
            }
        }
        self.seeds.clear();
        self.floor = f64::INFINITY;
        let mut work = Work::default();
        while let Some(l) = self.stack.pop() {
            let l = l as usize;
            if work.add(self.count[l] as usize) && stop.stopped() {
                return false;
            }
            self.visited.push(l as u32);
            self.drop_finished(l);
            let (mut free, mut n) = (self.capacity[l], 0u32);
            for i in self.start[l]..self.start[l] + self.count[l] as usize {
                let q = self.slots[i] as usize;
                let st = self.state[q];
                if st.in_part == epoch || st.rate >= floor {
                    n += 1;
                    if st.in_part != epoch {
                        self.join(q);
                    }
                } else {
                    free -= st.rate;
                }
            }
            self.unfrozen[l] = n;
            self.free[l] = free;
            self.frozen_load[l] = 0.0;
        }
        if !self.part.is_empty() {
            self.solves += 1;
            self.solved_flows += self.part.len() as u64;
        }
        self.fill(floor, stop)
    }

    /// Flow `q` joins the part; its links not seen yet are to be visited.
    fn join(&mut self, q: usize) {
        self.state[q].in_part = self.epoch;
        self.part.push(q as u32);
        for &l in self.flows.links(q) {
            if self.link_seen[l as usize] != self.epoch {
                self.link_seen[l as usize] = self.epoch;
                self.stack.push(l);
            }
        }
    }

    /// Progressive filling of the part from level `floor`, as
    /// [`crate::MaxMin`] does it (the same lazy re-keying of links).
    fn fill(&mut self, floor: f64, stop: &dyn Stop) -> bool {
        let epoch = self.epoch;
        self.heap.clear();
        for &l in &self.visited {
            let n = self.unfrozen[l as usize];
            if n > 0 {
                let level = (self.free[l as usize].max(0.0) / n as f64).max(floor);
                self.heap.push(Entry { level, what: l });
            }
        }
        for &q in &self.part {
            let cap = self.flows.cap(q as usize);
            if cap.is_finite() {
                self.heap.push(Entry { level: cap.max(0.0), what: u32::MAX - q });
            } else if self.flows.links(q as usize).is_empty() {
                self.state[q as usize].rate = f64::INFINITY;
                self.state[q as usize].frozen = epoch;
            }
        }
        let first_flow = u32::MAX - self.flows.len() as u32;
        let mut work = Work::default();
        while let Some(e) = self.heap.pop() {
            let slots = if e.what > first_flow { 1 } else { self.count[e.what as usize] as usize };
            if work.add(slots) && stop.stopped() {
                return false;
            }
            if e.what > first_flow {
                let q = (u32::MAX - e.what) as usize;
                if self.state[q].frozen != epoch {
                    self.freeze(q, e.level);
                }
                continue;
            }
            let l = e.what as usize;
            let n = self.unfrozen[l];
            if n == 0 {
                continue;
            }
            // A link's level only rises as flows freeze: re-key a stale
            // entry once, when it pops.
            let key = ((self.free[l] - self.frozen_load[l]) / n as f64).max(e.level);
            if key > e.level {
                self.heap.push(Entry { level: key, what: l as u32 });
                continue;
            }
            for i in self.start[l]..self.start[l] + self.count[l] as usize {
                let q = self.slots[i] as usize;
                let st = self.state[q];
                if st.in_part == epoch && st.frozen != epoch {
                    self.freeze(q, e.level);
                }
            }
        }
        true
    }

    fn freeze(&mut self, q: usize, level: f64) {
        self.state[q].frozen = self.epoch;
        self.state[q].rate = level;
        for &l in self.flows.links(q) {
            self.unfrozen[l as usize] -= 1;
            self.frozen_load[l as usize] += level;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Subset;
    use crate::{check_max_min, reference, Flow, Interrupt, MaxMin};
    use proptest::prelude::*;

    #[test]
    fn a_finish_lets_the_others_rise_and_a_start_takes_its_share() {
        // Link 0 (capacity 1) shared by flows 0 and 1; flow 2 alone on
        // link 1 (capacity 3) with flow 1.
        let mut t = FlowTable::new();
        t.push(&[0], f64::INFINITY);
        t.push(&[0, 1], f64::INFINITY);
        t.push(&[1], f64::INFINITY);
        let mut s = IncrementalMaxMin::new(vec![1.0, 3.0], t);
        let never = Interrupt::never();
        for q in 0..3 {
            s.add(q);
        }
        assert!(s.solve(&never));
        assert_eq!((s.rate(0), s.rate(1), s.rate(2)), (0.5, 0.5, 2.5));
        s.remove(0);
        assert!(s.solve(&never));
        assert_eq!((s.rate(1), s.rate(2)), (1.0, 2.0));
        s.add(0);
        assert!(s.solve(&never));
        assert_eq!((s.rate(0), s.rate(1), s.rate(2)), (0.5, 0.5, 2.5));
        assert!(!s.changed() && s.solve(&never) && s.last_solved().is_empty());
    }

    #[test]
    fn flows_below_the_level_of_a_change_are_not_refilled() {
        // Flow 0 alone on a slow link 0 (0.1), also crossing the shared
        // link 1 (1.0) with flows 1 and 2. Flow 2 finishing at 0.45 leaves
        // flow 0 at 0.1, below the level: only flow 1 is refilled.
        let mut t = FlowTable::new();
        t.push(&[0, 1], f64::INFINITY);
        t.push(&[1], f64::INFINITY);
        t.push(&[1], f64::INFINITY);
        let mut s = IncrementalMaxMin::new(vec![0.1, 1.0], t);
        let never = Interrupt::never();
        for q in 0..3 {
            s.add(q);
        }
        assert!(s.solve(&never));
        assert!((s.rate(1) - 0.45).abs() < 1e-12);
        s.remove(2);
        assert!(s.solve(&never));
        assert_eq!(s.last_solved(), &[1]);
        assert!((s.rate(1) - 0.9).abs() < 1e-12 && s.rate(0) == 0.1);
    }

    #[test]
    fn flows_crossing_a_link_several_times_leave_it_cleanly() {
        // Found by the property test below: flow 0 crosses link 0 four
        // times, flow 1 three times; finishing and starting again before a
        // solve must leave each link with its active flows once per
        // crossing.
        let all = [Flow { links: vec![0, 0, 0, 0], cap: f64::INFINITY }, Flow { links: vec![0, 0, 0], cap: f64::INFINITY }, Flow { links: vec![0, 1], cap: f64::INFINITY }];
        let mut s = IncrementalMaxMin::new(vec![0.5, 1.0], FlowTable::from(&all[..]));
        let never = Interrupt::never();
        for q in 0..3 {
            s.add(q);
        }
        assert!(s.solve(&never));
        s.remove(0);
        s.remove(2);
        s.add(0);
        assert!(s.solve(&never));
        s.remove(1);
        assert!(s.solve(&never));
        // Flow 0 alone on link 0, four times: 0.5 / 4.
        assert_eq!(s.rate(0), 0.125);
        s.add(2);
        s.add(1);
        assert!(s.solve(&never));
        let mut full = Vec::new();
        MaxMin::new().solve(&[0.5, 1.0], &all, &mut full);
        assert_eq!((s.rate(0), s.rate(1), s.rate(2)), (full[0], full[1], full[2]));
    }

    /// Random routes (a link may appear twice in one), capacities, caps,
    /// and batches of starts and finishes.
    type Case = (Vec<f64>, Vec<(Vec<u32>, Option<f64>)>, Vec<Vec<u32>>);

    fn case() -> impl Strategy<Value = Case> {
        (
            prop::collection::vec(0.5f64..4.0, 1..12),
            prop::collection::vec((prop::collection::vec(0u32..12, 0..5), prop::option::of(0.1f64..3.0)), 1..30),
            prop::collection::vec(prop::collection::vec(any::<u32>(), 1..4), 1..40),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// Flows start and finish at random, a few at a time; after every
        /// solve the active flows' rates equal a full solve's (the heap
        /// solver's and the reference's) to rounding, and are max-min fair.
        #[test]
        fn incremental_rates_equal_a_full_solve((caps, raw, batches) in case()) {
            let nl = caps.len() as u32;
            let all: Vec<Flow> = raw
                .iter()
                .map(|(ls, c)| Flow { links: ls.iter().map(|l| l % nl).collect(), cap: c.unwrap_or(f64::INFINITY) })
                .collect();
            let mut inc = IncrementalMaxMin::new(caps.clone(), FlowTable::from(&all[..]));
            let never = Interrupt::never();
            let mut active: Vec<usize> = Vec::new();
            for batch in batches {
                for s in batch {
                    let q = s as usize % all.len();
                    match active.iter().position(|&a| a == q) {
                        Some(k) => {
                            active.swap_remove(k);
                            inc.remove(q);
                        }
                        None => {
                            active.push(q);
                            inc.add(q);
                        }
                    }
                }
                prop_assert!(inc.solve(&never));
                let mut full = Vec::new();
                MaxMin::new().solve_until(&caps, &Subset { all: &all[..], live: &active }, &mut full, &never);
                let flows: Vec<Flow> = active.iter().map(|&q| all[q].clone()).collect();
                let slow = reference::max_min(&caps, &flows);
                let got: Vec<f64> = active.iter().map(|&q| inc.rate(q)).collect();
                for ((&g, &f), &r) in got.iter().zip(&full).zip(&slow) {
                    prop_assert!(g == f || (g - f).abs() <= 1e-9 * f.abs().max(1.0), "incremental {got:?} vs full {full:?}");
                    prop_assert!(g == r || (g - r).abs() <= 1e-9 * r.abs().max(1.0), "incremental {got:?} vs reference {slow:?}");
                }
                prop_assert!(check_max_min(&caps, &flows, &got, 1e-9).is_ok(), "{:?}", check_max_min(&caps, &flows, &got, 1e-9));
            }
        }
    }
}
