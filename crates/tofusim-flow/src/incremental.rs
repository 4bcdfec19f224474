//! Max-min rates of a changing set of flows, re-solved only where a change
//! reaches.
//!
//! Max-min fairness decomposes over the connected components of the
//! flow–link graph: flows that share no link, directly or through other
//! flows, do not affect each other's rates. When flows start or finish,
//! only the components holding them (after the change) can move; the
//! others keep their rates. A collective whose messages run on disjoint
//! nearest-neighbour links (a tree or ring pipeline) then re-solves a few
//! flows per event instead of all of them.
//!
//! The rates are bit-identical to a full solve of the active flows in the
//! same order: a component is solved with its flows in their order among
//! the active ones, and the solver's arithmetic for a link involves only
//! the flows of its component.

use crate::solver::Subset;
use crate::{Flow, MaxMin, Stop};

/// Incremental max-min solver over flows `all[q]` (fixed routes), of
/// which a changing subset is active.
pub struct IncrementalMaxMin {
    solver: MaxMin,
    /// Active flows crossing each link.
    on_link: Vec<Vec<u32>>,
    /// Links whose flows changed since the last solve.
    seeds: Vec<u32>,
    /// Per link, the solve that last visited it; per flow, whether it is
    /// in the part being re-solved.
    link_seen: Vec<u32>,
    epoch: u32,
    affected: Vec<bool>,
    stack: Vec<u32>,
    part: Vec<usize>,
    part_rates: Vec<f64>,
    /// Flows re-solved, summed over the solves.
    pub solved_flows: u64,
}

impl IncrementalMaxMin {
    /// For flows over `links` links, `flows` of them in all.
    pub fn new(links: usize, flows: usize) -> Self {
        IncrementalMaxMin {
            solver: MaxMin::new(),
            on_link: vec![Vec::new(); links],
            seeds: Vec::new(),
            link_seen: vec![0; links],
            epoch: 0,
            affected: vec![false; flows],
            stack: Vec::new(),
            part: Vec::new(),
            part_rates: Vec::new(),
            solved_flows: 0,
        }
    }

    /// Flow `q` has become active.
    pub fn add(&mut self, q: usize, all: &[Flow]) {
        for &l in &all[q].links {
            self.on_link[l as usize].push(q as u32);
            self.seeds.push(l);
        }
    }

    /// Flow `q` is no longer active.
    pub fn remove(&mut self, q: usize, all: &[Flow]) {
        for &l in &all[q].links {
            let list = &mut self.on_link[l as usize];
            if let Some(k) = list.iter().position(|&x| x == q as u32) {
                list.swap_remove(k);
            }
            self.seeds.push(l);
        }
    }

    /// The flows the last [`Self::solve`] re-solved (their rates may have
    /// changed), in solve order.
    pub fn last_solved(&self) -> &[usize] {
        &self.part
    }

    /// Whether flows changed since the last solve.
    pub fn changed(&self) -> bool {
        !self.seeds.is_empty()
    }

    /// Re-solves the components the changes reach: writes `rate_of[q]` for
    /// their flows (`active` lists the active flows in solve order).
    /// False when `stop` said stop (the rates then unfinished).
    pub fn solve(&mut self, capacity: &[f64], all: &[Flow], active: &[usize], rate_of: &mut [f64], stop: &dyn Stop) -> bool {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_seen.fill(0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.stack.clear();
        self.stack.append(&mut self.seeds);
        let mut any = false;
        while let Some(l) = self.stack.pop() {
            let l = l as usize;
            if self.link_seen[l] == epoch {
                continue;
            }
            self.link_seen[l] = epoch;
            for &q in &self.on_link[l] {
                let q = q as usize;
                if !self.affected[q] {
                    self.affected[q] = true;
                    any = true;
                    self.stack.extend(all[q].links.iter().filter(|&&l2| self.link_seen[l2 as usize] != epoch));
                }
            }
        }
        self.part.clear();
        if !any {
            return true;
        }
        self.part.extend(active.iter().copied().filter(|&q| self.affected[q]));
        for &q in &self.part {
            self.affected[q] = false;
        }
        self.solved_flows += self.part.len() as u64;
        if !self.solver.solve_until(capacity, &Subset { all, live: &self.part }, &mut self.part_rates, stop) {
            return false;
        }
        for (&q, &r) in self.part.iter().zip(&self.part_rates) {
            rate_of[q] = r;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Flows start and finish at random; after every change the rates
        /// equal a full solve of the active flows, bit for bit.
        #[test]
        fn incremental_rates_equal_a_full_solve(
            routes in prop::collection::vec(prop::collection::btree_set(0u32..12, 1..4), 1..30),
            caps in prop::collection::vec(0.5f64..4.0, 12),
            steps in prop::collection::vec(any::<u32>(), 1..60),
        ) {
            let all: Vec<Flow> = routes.iter().map(|r| Flow { links: r.iter().copied().collect(), cap: f64::INFINITY }).collect();
            let mut inc = IncrementalMaxMin::new(12, all.len());
            let mut active: Vec<usize> = Vec::new();
            let mut rate_of = vec![0.0; all.len()];
            for s in steps {
                let q = s as usize % all.len();
                match active.iter().position(|&a| a == q) {
                    Some(k) => {
                        active.swap_remove(k);
                        inc.remove(q, &all);
                    }
                    None => {
                        active.push(q);
                        inc.add(q, &all);
                    }
                }
                prop_assert!(inc.solve(&caps, &all, &active, &mut rate_of, &crate::Interrupt::never()));
                let mut full = Vec::new();
                MaxMin::new().solve_until(&caps, &Subset { all: &all, live: &active }, &mut full, &crate::Interrupt::never());
                for (&q, &r) in active.iter().zip(&full) {
                    prop_assert_eq!(rate_of[q].to_bits(), r.to_bits(), "flow {}", q);
                }
            }
        }
    }
}
