//! A job allocator for a Tofu machine ([S:003], [S:001]): each job asks for
//! a virtual torus shape and gets a rectangular XYZ block, whole in ABC,
//! carrying that torus (see [`crate::embed`]). Two scheduler freedoms the
//! source names, each switchable:
//! - **rotation**: any assignment of the physical axes to the virtual
//!   axes, so one shape has several block sizes (8×3×2 or 2×3×8 …);
//! - **padding**: a shape that has no exact block (or none that fits now)
//!   may take the block of a slightly larger shape (each virtual length up
//!   to a quarter longer, and at least one longer); the extra nodes hold
//!   no rank.
//!
//! The simulation is first-come first-served without backfilling: the job
//! at the head of the queue waits until a block fits, and the jobs behind
//! it wait too. Every random choice comes from the seed.

use std::collections::{BTreeSet, VecDeque};

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use tofusim_topology::Torus;

use crate::embed::{self, Embedding, Region};

/// One job of the stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub arrival_s: f64,
    pub runtime_s: f64,
    pub shape: Vec<u32>,
}

/// Scheduler switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub rotation: bool,
    pub padding: bool,
}

/// What a run of the allocator measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllocStats {
    pub jobs: usize,
    /// Jobs no block of the empty machine can carry (dropped).
    pub unplaceable: usize,
    /// Busy node-seconds (ranks only) over machine node-seconds until the
    /// last job ends.
    pub utilization: f64,
    /// Allocated node-seconds (ranks and padding) over the same.
    pub allocated_fraction: f64,
    pub mean_wait_s: f64,
    pub max_wait_s: f64,
    /// Time-average, while the head job waits, of the fraction of the
    /// machine that is free but cannot take it.
    pub fragmentation: f64,
    pub makespan_s: f64,
    /// Jobs that used a rotated layout (not the first one of their shape).
    pub rotated: usize,
    pub padded: usize,
    /// Padding nodes over allocated nodes, node-seconds.
    pub padding_fraction: f64,
}

/// A synthetic stream: `jobs` jobs, Poisson arrivals at an offered load of
/// `load` (node-seconds asked per machine node-second), exponential
/// runtimes (mean 1 h), shapes from a log-uniform node count, built as
/// products of the machine's axis lengths half of the time (shapes that
/// factor exactly) and as near-cubic lengths otherwise (shapes that may
/// need padding), in a random axis order.
pub fn synthetic_jobs(t: &Torus, jobs: usize, load: f64, seed: u64) -> Vec<Job> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let l = t.lengths();
    let machine = t.node_count() as f64;
    let mut out = Vec::with_capacity(jobs);
    let mean_runtime = 3600.0;
    let mut shapes = Vec::with_capacity(jobs);
    for _ in 0..jobs {
        let mut shape = if rng.random::<bool>() {
            // Exact: a random block and a random grouping of the six axes.
            let b = [
                rng.random_range(1..=l[0].max(1) / 2 + 1).min(l[0]),
                rng.random_range(1..=l[1].max(1) / 2 + 1).min(l[1]),
                rng.random_range(1..=l[2].max(1) / 2 + 1).min(l[2]),
            ];
            let f = [b[0], b[1], b[2], 2, 3, 2];
            let dims = rng.random_range(1..=3usize);
            let mut s = vec![1u32; dims];
            for v in f {
                let k = rng.random_range(0..dims);
                s[k] *= v;
            }
            s
        } else {
            // Near-cubic: nodes log-uniform from 12 to 1/8 of the machine.
            let n = (12f64.ln() + rng.random::<f64>() * ((machine / 8.0).ln() - 12f64.ln())).exp();
            let side = n.cbrt().round().max(2.0) as u32;
            vec![side, side + rng.random_range(0..2u32), side]
        };
        for i in (1..shape.len()).rev() {
            let j = rng.random_range(0..=i);
            shape.swap(i, j);
        }
        shapes.push(shape);
    }
    let mean_nodes: f64 = shapes.iter().map(|s| s.iter().product::<u32>() as f64).sum::<f64>() / jobs as f64;
    // Arrival rate so that rate × mean nodes × mean runtime = load × machine.
    let rate = load * machine / (mean_nodes * mean_runtime);
    let mut t_s = 0.0;
    for shape in shapes {
        t_s += -(1.0 - rng.random::<f64>()).ln() / rate;
        let runtime_s = -(1.0 - rng.random::<f64>()).ln() * mean_runtime;
        out.push(Job { arrival_s: t_s, runtime_s, shape });
    }
    out
}

/// Block sizes a job can take, best first, with the ranks they carry:
/// (block size, used nodes, rotated, padded).
fn options(t: &Torus, shape: &[u32], policy: Policy) -> Vec<([u32; 3], u64, bool, bool)> {
    let whole = Region::whole(t);
    let ranks: u64 = shape.iter().map(|&s| s as u64).product();
    let mut out = Vec::new();
    for (s, padded) in candidates(shape, policy) {
        let max = if policy.rotation { 24 } else { 1 };
        if let Ok(ls) = embed::layouts(t, whole, &s, max) {
            let mut seen = BTreeSet::new();
            for (i, (size, _)) in ls.into_iter().enumerate() {
                if seen.insert(size) {
                    out.push((size, ranks, i > 0, padded));
                }
            }
        }
    }
    out
}

/// The shapes a job of `shape` may be given, best first, and whether each
/// is padded: its own, then with padding larger ones (each length up to a
/// quarter longer), fewest extra nodes first.
fn candidates(shape: &[u32], policy: Policy) -> Vec<(Vec<u32>, bool)> {
    let mut out = vec![(shape.to_vec(), false)];
    if policy.padding {
        // Larger shapes, fewest extra nodes first.
        let mut padded: Vec<Vec<u32>> = Vec::new();
        let steps: Vec<Vec<u32>> = shape.iter().map(|&s| (s..=s + (s / 4).max(1)).collect()).collect();
        let mut idx = vec![0usize; shape.len()];
        loop {
            let cand: Vec<u32> = idx.iter().enumerate().map(|(k, &i)| steps[k][i]).collect();
            if cand != shape {
                padded.push(cand);
            }
            let mut k = 0;
            while k < idx.len() {
                idx[k] += 1;
                if idx[k] < steps[k].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
            if k == idx.len() {
                break;
            }
        }
        padded.sort_by_key(|s| (s.iter().map(|&v| v as u64).product::<u64>(), s.clone()));
        out.extend(padded.into_iter().take(40).map(|s| (s, true)));
    }
    out
}

/// Where one job of a mix went ([`place_all`]).
#[derive(Clone, Debug)]
pub struct Placed {
    /// The shape embedded (a padded one holds more nodes than the job's
    /// ranks: its first ones carry them).
    pub embedding: Embedding,
    pub rotated: bool,
    pub padded: bool,
}

/// Places every job of `shapes` on the empty machine `t` at once, in
/// order, each in the first rectangular XYZ block (whole in ABC) that is
/// free for one of its layouts ([`options`]' order: its own shape, rotated
/// if `policy` allows, then padded ones). `None`: no free block is left
/// for it.
pub fn place_all(t: &Torus, shapes: &[Vec<u32>], policy: Policy) -> Vec<Option<Placed>> {
    let l = t.lengths();
    let mut occ = Occupancy {
        lens: [l[0], l[1], l[2]],
        ring: [t.axes()[0].is_ring(), t.axes()[1].is_ring(), t.axes()[2].is_ring()],
        busy: vec![false; (l[0] * l[1] * l[2]) as usize],
    };
    let whole = Region::whole(t);
    let max = if policy.rotation { 24 } else { 1 };
    shapes
        .iter()
        .map(|shape| {
            for (s, padded) in candidates(shape, policy) {
                let Ok(layouts) = embed::layouts(t, whole, &s, max) else { continue };
                for (i, (size, assign)) in layouts.into_iter().enumerate() {
                    let Some(origin) = occ.find(size) else { continue };
                    let Ok(embedding) = embed::build_at(t, &s, origin, size, &assign, [None; 3]) else { continue };
                    occ.set(origin, size, true);
                    return Some(Placed { embedding, rotated: i > 0, padded });
                }
            }
            None
        })
        .collect()
}

/// Occupancy of the machine's XYZ cells (12 nodes each).
struct Occupancy {
    lens: [u32; 3],
    ring: [bool; 3],
    busy: Vec<bool>,
}

impl Occupancy {
    fn cell(&self, c: [u32; 3]) -> usize {
        (c[0] + self.lens[0] * (c[1] + self.lens[1] * c[2])) as usize
    }

    fn origins(&self, axis: usize, size: u32) -> u32 {
        if size > self.lens[axis] {
            0
        } else if self.ring[axis] && size < self.lens[axis] {
            self.lens[axis]
        } else {
            self.lens[axis] - size + 1
        }
    }

    fn free_at(&self, o: [u32; 3], size: [u32; 3]) -> bool {
        for dz in 0..size[2] {
            for dy in 0..size[1] {
                for dx in 0..size[0] {
                    let c = [(o[0] + dx) % self.lens[0], (o[1] + dy) % self.lens[1], (o[2] + dz) % self.lens[2]];
                    if self.busy[self.cell(c)] {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// First free origin of a block, scanning z, y, x.
    fn find(&self, size: [u32; 3]) -> Option<[u32; 3]> {
        for z in 0..self.origins(2, size[2]) {
            for y in 0..self.origins(1, size[1]) {
                for x in 0..self.origins(0, size[0]) {
                    if self.free_at([x, y, z], size) {
                        return Some([x, y, z]);
                    }
                }
            }
        }
        None
    }

    fn set(&mut self, o: [u32; 3], size: [u32; 3], v: bool) {
        for dz in 0..size[2] {
            for dy in 0..size[1] {
                for dx in 0..size[0] {
                    let c = [(o[0] + dx) % self.lens[0], (o[1] + dy) % self.lens[1], (o[2] + dz) % self.lens[2]];
                    let i = self.cell(c);
                    self.busy[i] = v;
                }
            }
        }
    }
}

/// Runs the stream on machine `t` under `policy`.
pub fn simulate(t: &Torus, jobs: &[Job], policy: Policy) -> AllocStats {
    simulate_until(t, jobs, policy, &mut || false).expect("never stopped")
}

/// [`simulate`], asking `stop` now and then (every 256 events) whether to
/// give up (Ctrl-C): `None` when it said so.
pub fn simulate_until(
    t: &Torus,
    jobs: &[Job],
    policy: Policy,
    stop: &mut dyn FnMut() -> bool,
) -> Option<AllocStats> {
    let l = t.lengths();
    let mut occ = Occupancy {
        lens: [l[0], l[1], l[2]],
        ring: [
            t.axes()[0].is_ring(),
            t.axes()[1].is_ring(),
            t.axes()[2].is_ring(),
        ],
        busy: vec![false; (l[0] * l[1] * l[2]) as usize],
    };
    let machine = t.node_count() as f64;
    let mut opts = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        if i % 64 == 63 && stop() {
            return None;
        }
        opts.push(options(t, &j.shape, policy));
    }
    let mut stats = AllocStats {
        jobs: jobs.len(),
        ..Default::default()
    };
    // Running jobs: (end time, origin, size).
    let mut running: Vec<(f64, [u32; 3], [u32; 3])> = Vec::new();
    let mut queue: VecDeque<usize> = VecDeque::new();
    let (mut now, mut next) = (0.0f64, 0usize);
    let (mut busy_ns, mut alloc_ns, mut pad_ns) = (0.0, 0.0, 0.0);
    let (mut free_cells, mut frag_area, mut blocked_time) = (occ.busy.len() as f64, 0.0, 0.0);
    let mut waits = Vec::new();
    let mut events = 0u64;
    loop {
        events += 1;
        if events % 256 == 0 && stop() {
            return None;
        }
        // Start queued jobs in order while the head fits.
        while let Some(&j) = queue.front() {
            let placed = opts[j].iter().find_map(|&(size, ranks, rot, pad)| occ.find(size).map(|o| (o, size, ranks, rot, pad)));
            let Some((o, size, ranks, rot, pad)) = placed else { break };
            queue.pop_front();
            occ.set(o, size, true);
            free_cells -= (size[0] * size[1] * size[2]) as f64;
            let nodes = (size[0] * size[1] * size[2]) as f64 * 12.0;
            let job = &jobs[j];
            busy_ns += ranks as f64 * job.runtime_s;
            alloc_ns += nodes * job.runtime_s;
            pad_ns += (nodes - ranks as f64) * job.runtime_s;
            stats.rotated += usize::from(rot);
            stats.padded += usize::from(pad);
            waits.push(now - job.arrival_s);
            running.push((now + job.runtime_s, o, size));
        }
        // Next event: an arrival or a completion.
        let next_end = running.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        let next_arrival = jobs.get(next).map_or(f64::INFINITY, |j| j.arrival_s);
        let t_next = next_end.min(next_arrival);
        if !t_next.is_finite() {
            break;
        }
        if !queue.is_empty() {
            frag_area += (t_next - now) * free_cells * 12.0 / machine;
            blocked_time += t_next - now;
        }
        now = t_next;
        if next_end <= next_arrival {
            let k = running.iter().position(|r| r.0 == next_end).expect("a running job ends");
            let (_, o, size) = running.swap_remove(k);
            occ.set(o, size, false);
            free_cells += (size[0] * size[1] * size[2]) as f64;
        } else {
            if opts[next].is_empty() {
                stats.unplaceable += 1;
            } else {
                queue.push_back(next);
            }
            next += 1;
        }
    }
    stats.makespan_s = now;
    let capacity = machine * now.max(1e-9);
    stats.utilization = busy_ns / capacity;
    stats.allocated_fraction = alloc_ns / capacity;
    stats.padding_fraction = if alloc_ns > 0.0 { pad_ns / alloc_ns } else { 0.0 };
    stats.mean_wait_s = if waits.is_empty() { 0.0 } else { waits.iter().sum::<f64>() / waits.len() as f64 };
    stats.max_wait_s = waits.iter().copied().fold(0.0, f64::max);
    stats.fragmentation = if blocked_time > 0.0 { frag_area / blocked_time } else { 0.0 };
    Some(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tofusim_topology::{tofu, Axis};

    fn machine() -> Torus {
        tofu::tofu_torus([Axis::ring("x", 8), Axis::path("y", 6), Axis::ring("z", 8)])
    }

    #[test]
    fn a_mix_is_placed_at_once_in_disjoint_blocks() {
        let t = machine();
        let shapes = vec![vec![4, 6, 2], vec![8, 3, 4], vec![6, 4], vec![1_000_000]];
        let placed = place_all(&t, &shapes, Policy { rotation: true, padding: false });
        assert!(placed[3].is_none(), "larger than the machine");
        let mut seen = std::collections::HashSet::new();
        for (p, shape) in placed.iter().zip(&shapes).take(3) {
            let p = p.as_ref().expect("fits the empty machine");
            let ranks: u32 = shape.iter().product();
            assert_eq!(p.embedding.node_of_rank.len() as u32, ranks);
            for &n in &p.embedding.node_of_rank {
                assert!(seen.insert(n), "node {n} in two jobs");
            }
        }
    }

    #[test]
    fn streams_are_seeded_and_every_job_is_accounted_for() {
        let t = machine();
        let a = synthetic_jobs(&t, 200, 0.9, 3);
        assert_eq!(a, synthetic_jobs(&t, 200, 0.9, 3));
        assert_ne!(a, synthetic_jobs(&t, 200, 0.9, 4));
        for policy in [
            Policy { rotation: false, padding: false },
            Policy { rotation: true, padding: true },
        ] {
            let s = simulate(&t, &a, policy);
            assert!(s.utilization > 0.0 && s.utilization <= s.allocated_fraction + 1e-12);
            assert!(s.allocated_fraction <= 1.0 + 1e-9, "{s:?}");
            assert!(s.fragmentation >= 0.0 && s.fragmentation <= 1.0);
            assert!(s.unplaceable < a.len());
        }
    }

    #[test]
    fn padding_places_shapes_that_do_not_factor_and_rotation_helps_fit() {
        let t = machine();
        // 10x10x10 has no exact block (no length is a multiple of 3).
        let none = Policy { rotation: false, padding: false };
        let pad = Policy { rotation: false, padding: true };
        assert!(options(&t, &[10, 10, 10], none).is_empty());
        assert!(!options(&t, &[10, 10, 10], pad).is_empty());
        // With rotation a shape has several block sizes.
        let rot = Policy { rotation: true, padding: false };
        assert!(options(&t, &[16, 6, 4], rot).len() > options(&t, &[16, 6, 4], none).len());
        let jobs = synthetic_jobs(&t, 300, 1.0, 1);
        let a = simulate(&t, &jobs, none);
        let b = simulate(&t, &jobs, Policy { rotation: true, padding: true });
        assert!(b.unplaceable < a.unplaceable, "{} vs {}", b.unplaceable, a.unplaceable);
    }
}
