//! RMATT, the rank-mapping automatic tuning tool ([S:003]): simulated
//! annealing over rank orders on a virtual torus, from a communication
//! list. Moves swap two ranks; each move's change of cost is computed from
//! the flows of the two ranks only; Metropolis acceptance with geometric
//! cooling; it starts from the default x-y order (or a given one) and
//! returns the best order seen, so it never returns a worse cost than its
//! start. Every random choice comes from the seed.
//!
//! Objectives ([RECON]: the source does not state RMATT's):
//! - `HopBytes`: Σ bytes × hops (Bhanot et al.'s F);
//! - `MaxLinkLoad`: the most bytes on one link under dimension-order
//!   routing; annealed through the L8 norm of the link loads, a smooth
//!   stand-in for the maximum (which most swaps leave unchanged), and
//!   reported as the true maximum.
//!
//! Several ranks per node (one per core): the search moves ranks between
//! *slots*, `per_node` of them on each node ([`Slots`]); a swap of two
//! ranks on one node changes nothing, and flows between ranks of one node
//! cost no hops and load no link.
//!
//! Also here: the baselines of the evaluation — a random order and a
//! greedy placement.

use std::collections::BTreeMap;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use crate::comm_list::CommList;
use crate::placement::TorusShape;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    HopBytes,
    MaxLinkLoad,
}

impl Objective {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "hop-bytes" => Some(Self::HopBytes),
            "max-link-load" => Some(Self::MaxLinkLoad),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::HopBytes => "hop-bytes",
            Self::MaxLinkLoad => "max-link-load",
        }
    }
}

/// Where ranks go: the nodes of a torus, each holding up to `per_node`
/// ranks. Slot `s` is on node `s / per_node`.
#[derive(Clone, Copy, Debug)]
pub struct Slots<'a> {
    pub shape: &'a TorusShape,
    pub per_node: u32,
}

impl<'a> Slots<'a> {
    /// One rank per node.
    pub fn one_per_node(shape: &'a TorusShape) -> Self {
        Self { shape, per_node: 1 }
    }

    fn count(&self) -> u32 {
        self.shape.nodes() * self.per_node
    }

    fn node(&self, slot: u32) -> u32 {
        slot / self.per_node
    }

    fn hops(&self, a: u32, b: u32) -> u32 {
        self.shape.hops(self.node(a), self.node(b))
    }

    /// Slots of ranks placed by `order` (rank → node): each node's slots
    /// filled in rank order.
    fn of_nodes(&self, order: &[u32]) -> Vec<u32> {
        let mut held = vec![0u32; self.shape.nodes() as usize];
        order
            .iter()
            .map(|&n| {
                let k = held[n as usize];
                held[n as usize] += 1;
                n * self.per_node + k
            })
            .collect()
    }

    fn nodes_of(&self, slots: &[u32]) -> Vec<u32> {
        slots.iter().map(|&s| self.node(s)).collect()
    }
}

/// Annealing schedule.
#[derive(Clone, Copy, Debug)]
pub struct AnnealParams {
    /// Proposed swaps.
    pub iterations: u64,
    pub seed: u64,
    /// Final temperature as a fraction of the initial one.
    pub final_fraction: f64,
}

impl AnnealParams {
    /// A default budget: 2,000 proposals per rank for hop-bytes (cheap
    /// moves), 500 for the max link load (each move re-routes flows).
    pub fn default_for(objective: Objective, ranks: u32, seed: u64) -> Self {
        let per_rank = match objective {
            Objective::HopBytes => 2000,
            Objective::MaxLinkLoad => 500,
        };
        Self {
            iterations: (per_rank * ranks as u64).clamp(10_000, 40_000_000),
            seed,
            final_fraction: 1e-4,
        }
    }
}

/// The outcome of one annealing run.
#[derive(Clone, Debug)]
pub struct Anneal {
    /// rank → node of the best order found.
    pub order: Vec<u32>,
    pub start_cost: f64,
    pub cost: f64,
    /// Proposed swaps made (fewer than asked when stopped).
    pub iterations: u64,
    pub accepted: u64,
    /// False when `stop` ended the search early: `order` is then the best
    /// found so far.
    pub complete: bool,
}

/// The flows of each rank, both directions, for incremental costs.
struct Incidence {
    /// The job's ranks; those beyond stand for empty slots.
    real: u32,
    /// Per rank: (peer, bytes both ways) for hop-bytes.
    peers: Vec<Vec<(u32, u64)>>,
    /// Per rank: indices of the directed flows it sends or receives.
    flows: Vec<Vec<u32>>,
}

impl Incidence {
    /// `slots` ≥ ranks: positions beyond the job's ranks stand for empty
    /// slots (ranks without flows), so a swap can move a rank there.
    fn new(comm: &CommList, slots: u32) -> Self {
        let n = slots.max(comm.ranks) as usize;
        let mut both: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        let mut flows = vec![Vec::new(); n];
        for (i, f) in comm.flows.iter().enumerate() {
            *both.entry((f.src.min(f.dst), f.src.max(f.dst))).or_default() += f.bytes;
            flows[f.src as usize].push(i as u32);
            flows[f.dst as usize].push(i as u32);
        }
        let mut peers = vec![Vec::new(); n];
        for (&(a, b), &w) in &both {
            peers[a as usize].push((b, w));
            peers[b as usize].push((a, w));
        }
        Self {
            real: comm.ranks,
            peers,
            flows,
        }
    }
}

/// The cost being annealed, with incremental evaluation of a swap.
trait Cost {
    fn value(&self) -> f64;
    /// Swaps ranks `a` and `b` in `order` (and `rank_at`) and returns the
    /// new cost.
    fn swap(&mut self, order: &mut [u32], rank_at: &mut [u32], a: u32, b: u32) -> f64;
}

fn exchange(order: &mut [u32], rank_at: &mut [u32], a: u32, b: u32) {
    let (na, nb) = (order[a as usize], order[b as usize]);
    order.swap(a as usize, b as usize);
    rank_at[na as usize] = b;
    rank_at[nb as usize] = a;
}

struct HopBytesCost<'a> {
    slots: Slots<'a>,
    inc: &'a Incidence,
    total: i128,
}

impl HopBytesCost<'_> {
    /// Change of hop-bytes if rank `a` moved from its slot to `to`, with
    /// rank `skip` left out (the swap partner, whose distance to `a` does
    /// not change).
    fn moved(&self, order: &[u32], a: u32, to: u32, skip: u32) -> i128 {
        let from = order[a as usize];
        self.inc.peers[a as usize]
            .iter()
            .filter(|&&(p, _)| p != skip)
            .map(|&(p, w)| {
                let np = order[p as usize];
                w as i128 * (self.slots.hops(to, np) as i128 - self.slots.hops(from, np) as i128)
            })
            .sum()
    }
}

impl Cost for HopBytesCost<'_> {
    fn value(&self) -> f64 {
        self.total as f64
    }

    fn swap(&mut self, order: &mut [u32], rank_at: &mut [u32], a: u32, b: u32) -> f64 {
        let (na, nb) = (order[a as usize], order[b as usize]);
        let delta = self.moved(order, a, nb, b) + self.moved(order, b, na, a);
        exchange(order, rank_at, a, b);
        self.total += delta;
        self.total as f64
    }
}

/// The maximum link load, annealed through a smooth stand-in: the L8
/// norm of the link loads (scaled by the starting maximum), which follows
/// the maximum closely but also rewards cooling the other hot links — the
/// maximum itself is flat under most swaps.
struct LinkLoadCost<'a> {
    slots: Slots<'a>,
    comm: &'a CommList,
    inc: &'a Incidence,
    loads: Vec<u64>,
    /// Loads are divided by this before taking powers (keeps Σ l⁸ in range).
    scale: f64,
    /// Σ (load / scale)^8.
    sum_p: f64,
    path: Vec<u32>,
    touched: Vec<u32>,
}

const NORM_POWER: i32 = 8;

impl<'a> LinkLoadCost<'a> {
    fn new(slots: Slots<'a>, comm: &'a CommList, inc: &'a Incidence, order: &[u32]) -> Self {
        let loads = crate::placement::link_loads(slots.shape, comm, &slots.nodes_of(order));
        let scale = loads.iter().copied().max().unwrap_or(0).max(1) as f64;
        let sum_p = loads.iter().map(|&l| (l as f64 / scale).powi(NORM_POWER)).sum();
        Self {
            slots,
            comm,
            inc,
            loads,
            scale,
            sum_p,
            path: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// Adds or removes flow `i` placed by `order`.
    fn apply(&mut self, order: &[u32], i: u32, add: bool) {
        let f = self.comm.flows[i as usize];
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let (a, b) = (self.slots.node(order[f.src as usize]), self.slots.node(order[f.dst as usize]));
        self.slots.shape.route(a, b, &mut path);
        for &l in &path {
            let old = self.loads[l as usize];
            let new = if add { old + f.bytes } else { old - f.bytes };
            self.loads[l as usize] = new;
            self.sum_p += (new as f64 / self.scale).powi(NORM_POWER)
                - (old as f64 / self.scale).powi(NORM_POWER);
        }
        self.path = path;
    }

    fn current(&self) -> f64 {
        self.scale * self.sum_p.max(0.0).powf(1.0 / NORM_POWER as f64)
    }
}

impl Cost for LinkLoadCost<'_> {
    fn value(&self) -> f64 {
        self.current()
    }

    fn swap(&mut self, order: &mut [u32], rank_at: &mut [u32], a: u32, b: u32) -> f64 {
        let mut touched = std::mem::take(&mut self.touched);
        touched.clear();
        touched.extend_from_slice(&self.inc.flows[a as usize]);
        touched.extend_from_slice(&self.inc.flows[b as usize]);
        touched.sort_unstable();
        touched.dedup();
        for &i in &touched {
            self.apply(order, i, false);
        }
        exchange(order, rank_at, a, b);
        for &i in &touched {
            self.apply(order, i, true);
        }
        self.touched = touched;
        self.current()
    }
}

/// The cost reported for an order: hop-bytes, or the true maximum link
/// load in bytes.
fn report(objective: Objective, shape: &TorusShape, comm: &CommList, order: &[u32]) -> f64 {
    match objective {
        Objective::HopBytes => crate::placement::hop_bytes(shape, comm, order) as f64,
        Objective::MaxLinkLoad => crate::placement::max_link_load(shape, comm, order) as f64,
    }
}

/// Anneals from `start` (rank → node, one rank per node; the default x-y
/// order is the identity). The costs reported are hop-bytes or the
/// maximum link load in bytes.
pub fn anneal(
    shape: &TorusShape,
    comm: &CommList,
    objective: Objective,
    start: &[u32],
    params: AnnealParams,
) -> Result<Anneal, crate::MappingError> {
    anneal_until(Slots::one_per_node(shape), comm, objective, start, params, &mut || false)
}

/// Proposed swaps between two calls of `stop` (a few milliseconds).
const STOP_EVERY: u64 = 1 << 16;

/// [`anneal`] on `slots` (several ranks per node: `start` may put up to
/// `slots.per_node` ranks on a node, and so does the result), asking
/// `stop` every [`STOP_EVERY`] proposals (Ctrl-C): when it says true the
/// search ends with the best order so far, marked incomplete. Same seed,
/// same proposals: a stopped search's order is the one a search of that
/// many iterations' prefix had found.
pub fn anneal_until(
    slots: Slots<'_>,
    comm: &CommList,
    objective: Objective,
    start: &[u32],
    params: AnnealParams,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Anneal, crate::MappingError> {
    let shape = slots.shape;
    let slot_count = shape.nodes() as u64 * slots.per_node.max(1) as u64;
    if slot_count > 1 << 24 {
        return Err(crate::MappingError::TooManyNodes(slot_count));
    }
    crate::placement::check_placement(shape, comm.ranks, start, slots.per_node)?;
    let inc = Incidence::new(comm, slots.count());
    // Empty slots get placeholder ranks beyond the job's.
    let mut order = slots.of_nodes(start);
    let mut rank_at = vec![u32::MAX; slots.count() as usize];
    for (r, &n) in order.iter().enumerate() {
        rank_at[n as usize] = r as u32;
    }
    for n in 0..slots.count() {
        if rank_at[n as usize] == u32::MAX {
            rank_at[n as usize] = order.len() as u32;
            order.push(n);
        }
    }
    let start_cost = report(objective, shape, comm, start);
    let (best, iterations, accepted) = match objective {
        Objective::HopBytes => {
            let mut c = HopBytesCost {
                slots,
                inc: &inc,
                total: crate::placement::hop_bytes(shape, comm, &slots.nodes_of(&order)) as i128,
            };
            search(&mut c, slots, &inc, &mut order, &mut rank_at, params, stop)
        }
        Objective::MaxLinkLoad => {
            let mut c = LinkLoadCost::new(slots, comm, &inc, &order);
            search(&mut c, slots, &inc, &mut order, &mut rank_at, params, stop)
        }
    };
    let complete = iterations == params.iterations || comm.ranks < 2;
    let best = slots.nodes_of(&best[..comm.ranks as usize]);
    let cost = report(objective, shape, comm, &best);
    // The search keeps the best order by its own measure; for the maximum
    // link load that includes a tie-break, so check the reported cost too.
    let (order, cost) = if cost <= start_cost {
        (best, cost)
    } else {
        (start.to_vec(), start_cost)
    };
    Ok(Anneal {
        order,
        start_cost,
        cost,
        iterations,
        accepted,
        complete,
    })
}

/// One proposal: rank `a` at random; its partner is a random rank, or
/// (half the time) a rank on the node next to one of `a`'s communication
/// peers — the moves that can shorten a flow.
fn propose(
    rng: &mut Pcg64,
    slots: Slots<'_>,
    inc: &Incidence,
    order: &[u32],
    rank_at: &[u32],
    ranks: u32,
) -> Option<(u32, u32)> {
    // `a` is a real rank; its partner may be an empty slot's placeholder.
    let a = rng.random_range(0..ranks);
    let peers = &inc.peers[a as usize];
    let slot = if !peers.is_empty() && rng.random::<bool>() {
        let (p, _) = peers[rng.random_range(0..peers.len())];
        let axis = rng.random_range(0..slots.shape.lengths.len());
        let node = slots.shape.step(slots.node(order[p as usize]), axis, rng.random::<bool>());
        // One rank per node draws nothing more: the same stream as before
        // slots existed.
        let k = if slots.per_node > 1 { rng.random_range(0..slots.per_node) } else { 0 };
        node * slots.per_node + k
    } else {
        rng.random_range(0..slots.count())
    };
    let b = rank_at[slot as usize];
    (b != a).then_some((a, b))
}

fn search(
    cost: &mut impl Cost,
    slots: Slots<'_>,
    inc: &Incidence,
    order: &mut [u32],
    rank_at: &mut [u32],
    params: AnnealParams,
    stop: &mut dyn FnMut() -> bool,
) -> (Vec<u32>, u64, u64) {
    // Real ranks (placeholders for empty nodes come after them).
    let ranks = inc.real;
    let mut rng = Pcg64::seed_from_u64(params.seed);
    let mut best = order.to_vec();
    if ranks < 2 || params.iterations == 0 {
        return (best, 0, 0);
    }
    let mut current = cost.value();
    let mut best_cost = current;
    // Initial temperature: the mean uphill step of random swaps, so that
    // early on a typical worsening move is accepted with probability 1/e.
    let mut uphill = (0.0, 0u32);
    for _ in 0..200 {
        if let Some((a, b)) = propose(&mut rng, slots, inc, order, rank_at, ranks) {
            let after = cost.swap(order, rank_at, a, b);
            if after > current {
                uphill = (uphill.0 + after - current, uphill.1 + 1);
            }
            cost.swap(order, rank_at, a, b);
        }
    }
    let t0 = if uphill.1 > 0 { uphill.0 / uphill.1 as f64 } else { 1.0 };
    let cooling = params.final_fraction.ln() / params.iterations as f64;
    let mut accepted = 0u64;
    for k in 0..params.iterations {
        if k % STOP_EVERY == STOP_EVERY - 1 && stop() {
            return (best, k, accepted);
        }
        let Some((a, b)) = propose(&mut rng, slots, inc, order, rank_at, ranks) else {
            continue;
        };
        let t = t0 * (cooling * k as f64).exp();
        let after = cost.swap(order, rank_at, a, b);
        let delta = after - current;
        if delta <= 0.0 || rng.random::<f64>() < (-delta / t).exp() {
            current = after;
            accepted += 1;
            if current < best_cost {
                best_cost = current;
                best.copy_from_slice(order);
            }
        } else {
            cost.swap(order, rank_at, a, b);
        }
    }
    (best, params.iterations, accepted)
}

/// A uniformly random order (Fisher–Yates), seeded.
pub fn random_order(ranks: u32, seed: u64) -> Vec<u32> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut v: Vec<u32> = (0..ranks).collect();
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
    v
}

/// Greedy placement: rank 0 on node 0; then, repeatedly, the unplaced rank
/// with the most bytes to placed ranks goes on the free node that adds the
/// fewest hop-bytes to them (lowest rank / node among equals). O(ranks² ×
/// peers); a constructive baseline, not an optimiser.
pub fn greedy_order(shape: &TorusShape, comm: &CommList) -> Vec<u32> {
    let n = comm.ranks as usize;
    let inc = Incidence::new(comm, comm.ranks);
    let mut order = vec![u32::MAX; n];
    let mut free = vec![true; shape.nodes() as usize];
    let mut attached = vec![0u64; n];
    let mut heap = std::collections::BinaryHeap::new();
    for step in 0..n {
        // Next rank: most bytes to placed ranks; unconnected ones in order.
        let r = loop {
            match heap.pop() {
                Some((w, std::cmp::Reverse(r))) if order[r as usize] == u32::MAX && attached[r as usize] == w => {
                    break r;
                }
                Some(_) => continue,
                None => break (0..n as u32).find(|&r| order[r as usize] == u32::MAX).expect("a rank is left"),
            }
        };
        let node = if step == 0 {
            0
        } else {
            let placed: Vec<(u32, u64)> = inc.peers[r as usize]
                .iter()
                .filter(|&&(p, _)| order[p as usize] != u32::MAX)
                .map(|&(p, w)| (order[p as usize], w))
                .collect();
            (0..shape.nodes())
                .filter(|&v| free[v as usize])
                .min_by_key(|&v| {
                    let c: u64 = placed.iter().map(|&(q, w)| w * shape.hops(v, q) as u64).sum();
                    (c, v)
                })
                .expect("more nodes than ranks")
        };
        order[r as usize] = node;
        free[node as usize] = false;
        for &(p, w) in &inc.peers[r as usize] {
            if order[p as usize] == u32::MAX {
                attached[p as usize] += w;
                heap.push((attached[p as usize], std::cmp::Reverse(p)));
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm_list::Flow;
    use crate::placement::{hop_bytes, max_link_load};

    /// A ring of ranks scrambled over the torus: annealing should find a
    /// near-neighbour embedding.
    fn ring(ranks: u32) -> CommList {
        CommList::new(
            ranks,
            (0..ranks).map(|r| Flow {
                src: r,
                dst: (r + 1) % ranks,
                bytes: 1000,
            }),
        )
    }

    #[test]
    fn anneal_improves_never_worsens_and_is_deterministic() {
        let t = TorusShape::parse("8x8").unwrap();
        let comm = ring(64);
        let start = random_order(64, 7);
        for objective in [Objective::HopBytes, Objective::MaxLinkLoad] {
            let p = AnnealParams::default_for(objective, 64, 3);
            let a = anneal(&t, &comm, objective, &start, p).unwrap();
            let b = anneal(&t, &comm, objective, &start, p).unwrap();
            assert_eq!(a.order, b.order, "{objective:?} is seeded");
            assert!(a.cost <= a.start_cost);
            assert!(a.cost < 0.6 * a.start_cost, "{objective:?}: {} -> {}", a.start_cost, a.cost);
            assert!(crate::placement::check_order(&t, 64, &a.order).is_ok());
            let measured = match objective {
                Objective::HopBytes => hop_bytes(&t, &comm, &a.order),
                Objective::MaxLinkLoad => max_link_load(&t, &comm, &a.order),
            };
            assert_eq!(measured as f64, a.cost);
        }
    }

    #[test]
    fn several_ranks_per_node_fill_nodes_and_flows_inside_a_node_are_free() {
        // 64 ranks of a ring, 4 per node on a 4x4 torus, scrambled.
        let t = TorusShape::parse("4x4").unwrap();
        let comm = ring(64);
        let slots = Slots { shape: &t, per_node: 4 };
        let start: Vec<u32> = random_order(64, 9).into_iter().map(|r| r / 4).collect();
        crate::placement::check_placement(&t, 64, &start, 4).unwrap();
        for objective in [Objective::HopBytes, Objective::MaxLinkLoad] {
            let p = AnnealParams::default_for(objective, 64, 3);
            let a = anneal_until(slots, &comm, objective, &start, p, &mut || false).unwrap();
            crate::placement::check_placement(&t, 64, &a.order, 4).unwrap();
            assert!(a.cost < 0.6 * a.start_cost, "{objective:?}: {} -> {}", a.start_cost, a.cost);
            let measured = match objective {
                Objective::HopBytes => hop_bytes(&t, &comm, &a.order),
                Objective::MaxLinkLoad => max_link_load(&t, &comm, &a.order),
            };
            assert_eq!(measured as f64, a.cost);
        }
        // Blocks of 4 consecutive ranks along a ring of 16 nodes: only the
        // 16 flows between blocks cross a link, one hop each.
        let t16 = TorusShape::parse("16").unwrap();
        let block: Vec<u32> = (0..64).map(|r| r / 4).collect();
        let a = anneal_until(Slots { shape: &t16, per_node: 4 }, &comm, Objective::HopBytes, &block, AnnealParams::default_for(Objective::HopBytes, 64, 1), &mut || false).unwrap();
        assert_eq!(a.start_cost, 16.0 * 1000.0);
        assert_eq!(a.cost, a.start_cost);
        // A fifth rank on a node is refused.
        let mut over = block.clone();
        over[4] = 0;
        assert!(matches!(crate::placement::check_placement(&t16, 64, &over, 4), Err(crate::MappingError::NodeFull { node: 0, .. })));
    }

    #[test]
    fn an_optimal_start_stays_optimal() {
        // x-y order of a ring on a 1D torus: every flow one hop.
        let t = TorusShape::parse("16").unwrap();
        let comm = ring(16);
        let id: Vec<u32> = (0..16).collect();
        let a = anneal(&t, &comm, Objective::HopBytes, &id, AnnealParams::default_for(Objective::HopBytes, 16, 1)).unwrap();
        assert_eq!(a.cost, a.start_cost);
        assert_eq!(a.cost, 16.0 * 1000.0);
    }

    #[test]
    fn greedy_and_random_orders_are_permutations() {
        let t = TorusShape::parse("4x4x2").unwrap();
        let comm = ring(32);
        for o in [greedy_order(&t, &comm), random_order(32, 5)] {
            assert!(crate::placement::check_order(&t, 32, &o).is_ok());
        }
        // Greedy lays a ring along neighbours almost everywhere.
        assert!(hop_bytes(&t, &comm, &greedy_order(&t, &comm)) < 2 * 32 * 1000);
        assert_ne!(random_order(32, 5), random_order(32, 6));
    }
}
