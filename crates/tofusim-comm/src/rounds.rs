//! Collectives as lockstep rounds: the compact form the flow model runs at
//! full-machine scale.
//!
//! A [`Schedule`](crate::Schedule) lists every step of every rank; a ring
//! allreduce on the 82,944 nodes of the K computer has 2.7 × 10¹⁰ of them.
//! Most algorithms are regular, though: in round *j* every rank sends one
//! message to a peer given by a rule, and many rounds repeat. A [`Rounds`]
//! writes such an algorithm as [`Stream`]s — an edge that carries one
//! message of the same size in each of a run of consecutive rounds — so a
//! ring is `p` streams and Trinaryx3's pipelined trees are one stream per
//! tree edge and direction. The messages, peers, sizes and TNIs are those
//! of the algorithm's schedule (the tests compare them at small scale);
//! what the form adds is the lockstep: a round ends when its slowest
//! message has been received (and reduced), as in a bulk-synchronous
//! reading of the schedule.

use crate::algorithms::{bcast::TniLoad, part, pow2_floor, Algorithm, BuildError, Params};
use crate::collective::{Collective, Operation};
use crate::schedule::Rank;
use crate::tree::{trinary_unsupported, Tree};
use crate::ELEMENT_BYTES;

/// One message of the same size in each of `count` consecutive rounds
/// from `first`, from `src` to `dst` through TNI `tni`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    pub src: Rank,
    pub dst: Rank,
    pub tni: u8,
    /// Payload bytes of each message (the largest of the algorithm's
    /// near-equal parts).
    pub bytes: u64,
    /// Whether the receiver adds the message into its buffer (and pays the
    /// reduction time).
    pub reduce: bool,
    pub first: u64,
    pub count: u64,
}

/// A collective as lockstep rounds.
#[derive(Clone, Debug)]
pub struct Rounds {
    pub collective: Collective,
    pub algorithm: &'static str,
    pub ranks: u32,
    pub streams: Vec<Stream>,
    /// Bytes each rank copies locally before the first round and after the
    /// last (Bruck's rotations).
    pub copy_bytes_before: u64,
    pub copy_bytes_after: u64,
    /// Whether the rounds are a pipeline: a stream's next message waits
    /// only for its own previous one and for the messages of the previous
    /// round that feed it (Trinaryx3's segments), not for every receive of
    /// the round before (ring, recursive doubling, Bruck). In a pipeline
    /// the per-message latencies (host overheads, hops, reductions) overlap
    /// with the next messages' transfers and add up only along the longest
    /// chain of stages.
    pub pipelined: bool,
}

impl Rounds {
    fn new(collective: Collective, algorithm: &'static str, ranks: u32) -> Self {
        Self { collective, algorithm, ranks, streams: Vec::new(), copy_bytes_before: 0, copy_bytes_after: 0, pipelined: false }
    }

    /// Rounds from the first to the last message.
    pub fn rounds(&self) -> u64 {
        self.streams.iter().map(|s| s.first + s.count).max().unwrap_or(0)
    }

    /// Messages over all rounds.
    pub fn messages(&self) -> u64 {
        self.streams.iter().map(|s| s.count).sum()
    }

    /// Payload bytes sent over all rounds.
    pub fn bytes_sent(&self) -> u64 {
        self.streams.iter().map(|s| s.count * s.bytes).sum()
    }

    fn stream(&mut self, src: Rank, dst: Rank, tni: u8, bytes: u64, reduce: bool, first: u64, count: u64) {
        if count > 0 && src != dst {
            self.streams.push(Stream { src, dst, tni, bytes, reduce, first, count });
        }
    }
}

/// The algorithms that have a rounds form: (operation, algorithm).
pub const WITH_ROUNDS: [(Operation, Algorithm); 6] = [
    (Operation::Allreduce, Algorithm::Ring),
    (Operation::Allreduce, Algorithm::RecursiveDoubling),
    (Operation::Allreduce, Algorithm::Rabenseifner),
    (Operation::Allreduce, Algorithm::Trinaryx3),
    (Operation::Alltoall, Algorithm::Bruck),
    (Operation::Alltoall, Algorithm::Pairwise),
];

/// Most messages a rounds form may list (a pairwise all-to-all has
/// p(p − 1): 2.6 × 10⁵ on 512 ranks, 6.9 × 10⁹ on the K computer): its
/// streams and their starts and ends take about 70 bytes each, so this is
/// about 280 MB, within what the flow model's memory check leaves.
pub const MAX_ROUND_MESSAGES: u64 = 4_000_000;

/// Whether `algorithm` of `op` has a rounds form.
pub fn has_rounds(op: Operation, algorithm: Algorithm) -> bool {
    WITH_ROUNDS.contains(&(op, algorithm))
}

/// The forms there are, as "allreduce ring, …".
pub fn with_rounds_names() -> Vec<String> {
    WITH_ROUNDS.iter().map(|(o, a)| format!("{o} {}", a.name())).collect()
}

/// The rounds form of `algorithm` for operation `op` (see [`WITH_ROUNDS`]).
/// `params.count` is the elements per rank, as for [`crate::algorithms::build`].
pub fn build(op: Operation, algorithm: Algorithm, params: &Params) -> Result<Rounds, BuildError> {
    let p = params.ranks;
    if p == 0 {
        return Err(BuildError { key: "ranks", message: "expected at least one process".into() });
    }
    // Trees are checked for the forms there are (others say they have none).
    if has_rounds(op, algorithm) {
        crate::algorithms::check_given_trees(params, algorithm == Algorithm::Trinaryx3, algorithm.name(), 0)?;
    }
    match (op, algorithm) {
        (Operation::Allreduce, Algorithm::Ring) => Ok(ring_allreduce(p, params.count)),
        (Operation::Allreduce, Algorithm::RecursiveDoubling) => Ok(recursive_doubling_allreduce(p, params.count)),
        (Operation::Allreduce, Algorithm::Rabenseifner) => Ok(rabenseifner_allreduce(p, params.count)),
        (Operation::Allreduce, Algorithm::Trinaryx3) => trinaryx3_allreduce(params),
        (Operation::Alltoall, Algorithm::Bruck) => Ok(bruck_alltoall(p, params.count)),
        (Operation::Alltoall, Algorithm::Pairwise) => {
            let messages = p as u64 * (p as u64 - 1);
            if messages > MAX_ROUND_MESSAGES {
                return Err(BuildError {
                    key: "algo",
                    message: format!("a pairwise all-to-all over {p} ranks sends {messages:.3e} messages, more than the {MAX_ROUND_MESSAGES:.1e} a rounds form lists; bruck sends p log p"),
                });
            }
            Ok(pairwise_alltoall(p, params.count))
        }
        _ => Err(BuildError {
            key: "algo",
            message: format!("{op} {} has no rounds form; these have: {}", algorithm.name(), with_rounds_names().join(", ")),
        }),
    }
}

/// Largest part of `n` elements in `k` near-equal parts, in bytes.
fn part_bytes(n: u64, k: u64) -> u64 {
    n.div_ceil(k.max(1)) * ELEMENT_BYTES
}

/// Ring: p − 1 rounds of reduce-scatter to the next rank, then p − 1 of
/// allgather, each message one of p blocks, on TNI 0.
fn ring_allreduce(p: u32, count: u64) -> Rounds {
    let mut r = Rounds::new(Collective::Allreduce, "ring", p);
    let bytes = part_bytes(count, p as u64);
    let steps = p as u64 - 1;
    for src in 0..p {
        let next = (src + 1) % p;
        r.stream(src, next, 0, bytes, true, 0, steps);
        r.stream(src, next, 0, bytes, false, steps, steps);
    }
    r
}

/// Recursive doubling over the largest power of two q ≤ p: the extra
/// ranks fold in (q + i → i), log2 q exchanges with r xor 2^k, then fold
/// out; every message is the whole vector, on TNI 0.
fn recursive_doubling_allreduce(p: u32, count: u64) -> Rounds {
    let mut r = Rounds::new(Collective::Allreduce, "recursive-doubling", p);
    let bytes = count * ELEMENT_BYTES;
    let q = pow2_floor(p);
    let mut round = 0;
    if p > q {
        for src in q..p {
            r.stream(src, src - q, 0, bytes, true, round, 1);
        }
        round += 1;
    }
    let mut mask = 1;
    while mask < q {
        for src in 0..q {
            r.stream(src, src ^ mask, 0, bytes, true, round, 1);
        }
        round += 1;
        mask <<= 1;
    }
    if p > q {
        for src in 0..p - q {
            r.stream(src, src + q, 0, bytes, false, round, 1);
        }
    }
    r
}

/// Rabenseifner's allreduce as the schedule writes it: the extra ranks
/// fold in (q + i → i, the whole vector, summed); log2 q rounds of
/// recursive halving among 0..q (r sends r xor mask the half of its range
/// it gives away, summed in; mask from q/2 down); log2 q rounds of
/// recursive doubling allgather (r sends its 2^k blocks to r xor 2^k);
/// the fold out. Every message on TNI 0; the q blocks are the vector's
/// near-equal parts.
fn rabenseifner_allreduce(p: u32, count: u64) -> Rounds {
    let mut r = Rounds::new(Collective::Allreduce, "rabenseifner", p);
    let all = count * ELEMENT_BYTES;
    let q = pow2_floor(p);
    let levels = q.trailing_zeros() as u64;
    // Bytes of blocks a..b of the q parts.
    let span = |a: u32, b: u32| {
        let (x, y) = (part(0, count, q as u64, a as u64), part(0, count, q as u64, b as u64 - 1));
        (y.end() - x.offset) * ELEMENT_BYTES
    };
    let mut round = 0;
    if p > q {
        for src in q..p {
            r.stream(src, src - q, 0, all, true, round, 1);
        }
        round += 1;
    }
    for src in 0..q {
        let (mut lo, mut hi) = (0, q);
        let (mut mask, mut k) = (q / 2, 0);
        while mask >= 1 {
            let mid = (lo + hi) / 2;
            let (keep, give) = if src & mask == 0 { ((lo, mid), (mid, hi)) } else { ((mid, hi), (lo, mid)) };
            r.stream(src, src ^ mask, 0, span(give.0, give.1), true, round + k, 1);
            (lo, hi) = keep;
            mask /= 2;
            k += 1;
        }
    }
    round += levels;
    for src in 0..q {
        let (mut mask, mut k) = (1, 0);
        while mask < q {
            let mine = src & !(mask - 1);
            r.stream(src, src ^ mask, 0, span(mine, mine + mask), false, round + k, 1);
            mask <<= 1;
            k += 1;
        }
    }
    round += levels;
    if p > q {
        for src in 0..p - q {
            r.stream(src, src + q, 0, all, false, round, 1);
        }
    }
    r
}

/// The pairwise all-to-all: each rank's own block copied, then p − 1
/// exchanges, round k − 1 sending block r + k to rank r + k (TNI 0).
fn pairwise_alltoall(p: u32, count: u64) -> Rounds {
    let mut r = Rounds::new(Collective::Alltoall, "pairwise", p);
    let block = count * ELEMENT_BYTES;
    r.copy_bytes_before = block;
    for k in 1..p {
        for src in 0..p {
            r.stream(src, (src + k) % p, 0, block, false, k as u64 - 1, 1);
        }
    }
    r
}

/// Bruck's index algorithm: ⌈log2 p⌉ rounds, round i sending to r + 2^i
/// the blocks whose position has bit i set; a rotation before and after.
fn bruck_alltoall(p: u32, count: u64) -> Rounds {
    let mut r = Rounds::new(Collective::Alltoall, "bruck", p);
    let block = count * ELEMENT_BYTES;
    r.copy_bytes_before = p as u64 * block;
    r.copy_bytes_after = p as u64 * block;
    let mut dist = 1u32;
    let mut round = 0;
    while dist < p {
        let moved = (0..p).filter(|k| k & dist != 0).count() as u64;
        for src in 0..p {
            r.stream(src, (src + dist) % p, 0, moved * block, false, round, 1);
        }
        dist *= 2;
        round += 1;
    }
    r
}

/// Height (rounds from the deepest leaf below) and depth (hops from the
/// root) of every rank in `t`.
fn heights_and_depths(t: &Tree) -> (Vec<u64>, Vec<u64>) {
    let order = t.top_down();
    let mut depth = vec![0u64; t.parent.len()];
    for &r in &order {
        if let Some(p) = t.parent[r as usize] {
            depth[r as usize] = depth[p as usize] + 1;
        }
    }
    let mut height = vec![0u64; t.parent.len()];
    for &r in order.iter().rev() {
        if let Some(p) = t.parent[r as usize] {
            height[p as usize] = height[p as usize].max(height[r as usize] + 1);
        }
    }
    (height, depth)
}

/// Trinaryx3 ([S:003], [S:001], [RECON]): a third of the vector goes up
/// and comes down each of the three edge-disjoint trinary trees rooted at
/// rank 0, in segments. Segment k leaves a rank of height h (its deepest
/// descendant is h hops below) in round h + k, once its children's have
/// arrived; the root's copy goes down in round H + k (H: the root's height)
/// and a rank at depth d forwards it in round H + d + k. Up messages use
/// the tree's TNI; the copies down go to the TNIs the schedule gives them
/// (the least loaded, in the same order).
fn trinaryx3_allreduce(params: &Params) -> Result<Rounds, BuildError> {
    let p = params.ranks;
    let bad = |message: String| BuildError { key: "shape", message };
    let g = params.grid.ok_or_else(|| bad("trinaryx3 needs a torus-shaped communicator".into()))?;
    if g.ranks() != p {
        return Err(bad(format!("the communicator shape {:?} has {} ranks, not {p}", g.lengths, g.ranks())));
    }
    if let Some(why) = trinary_unsupported(&g) {
        return Err(bad(why));
    }
    let mut r = Rounds::new(Collective::Allreduce, "trinaryx3", p);
    r.pipelined = true;
    let trees = crate::algorithms::trinary_trees_for(params, &g, 0);
    let tnis = params.tnis.max(1);
    let seg_elems = params.segment_elements.max(1);
    let mut load = TniLoad::new(p, tnis);
    for (i, t) in trees.iter().enumerate() {
        for c in (0..p).filter(|&c| t.parent[c as usize].is_some()) {
            load.take(c, i as u8);
        }
    }
    for (i, t) in trees.iter().enumerate() {
        let region = part(0, params.count, 3, i as u64);
        if region.len == 0 {
            continue;
        }
        let segs = region.len.div_ceil(seg_elems);
        let bytes = part_bytes(region.len, segs);
        let (height, depth) = heights_and_depths(t);
        let root_height = height[t.root as usize];
        let tni = i as u8 % tnis;
        for c in 0..p {
            if let Some(parent) = t.parent[c as usize] {
                r.stream(c, parent, tni, bytes, true, height[c as usize], segs);
            }
        }
        for q in t.top_down() {
            let first = root_height + depth[q as usize];
            for &c in &t.children[q as usize] {
                let lane = load.least(q, i as u8);
                r.stream(q, c, lane, bytes, false, first, segs);
            }
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::build as build_schedule;
    use crate::schedule::{total, Action};
    use crate::tree::Grid;
    use std::collections::BTreeMap;

    /// (src, dst, tni) → (messages, payload bytes) over a whole schedule.
    fn schedule_messages(op: &str, algo: &str, params: &Params) -> BTreeMap<(u32, u32, u8), (u64, u64)> {
        let (op, algo) = Algorithm::parse_named(op, algo).unwrap();
        let s = build_schedule(op.collective(0), algo, params).unwrap();
        let mut m = BTreeMap::new();
        for (r, prog) in s.programs.iter().enumerate() {
            for st in &prog.steps {
                if let Action::Send { peer, spans, tni, .. } = &st.action {
                    let e = m.entry((r as u32, *peer, *tni)).or_insert((0, 0));
                    e.0 += 1;
                    e.1 += total(spans) * ELEMENT_BYTES;
                }
            }
        }
        m
    }

    fn rounds_messages(r: &Rounds) -> BTreeMap<(u32, u32, u8), (u64, u64)> {
        let mut m = BTreeMap::new();
        for s in &r.streams {
            let e = m.entry((s.src, s.dst, s.tni)).or_insert((0, 0));
            e.0 += s.count;
            e.1 += s.count * s.bytes;
        }
        m
    }

    /// The rounds send the schedule's messages: the same edges and TNIs,
    /// the same number of messages, and sizes at most one element per
    /// message larger (parts are rounded up).
    fn check_same_messages(op: &str, algo: &str, params: &Params) {
        let want = schedule_messages(op, algo, params);
        let (o, a) = Algorithm::parse_named(op, algo).unwrap();
        let got = rounds_messages(&build(o, a, params).unwrap());
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{op} {algo} p={}: edges", params.ranks);
        for (k, (n, b)) in &want {
            let (gn, gb) = got[k];
            assert_eq!(gn, *n, "{op} {algo} p={}: messages on {k:?}", params.ranks);
            assert!(gb >= *b && gb <= b + n * ELEMENT_BYTES, "{op} {algo} p={}: bytes on {k:?}: {gb} vs {b}", params.ranks);
        }
    }

    #[test]
    fn ring_recursive_doubling_and_bruck_send_the_schedules_messages() {
        for p in [2, 3, 5, 8, 12, 13] {
            let params = Params::new(p, 1000);
            check_same_messages("allreduce", "ring", &params);
            check_same_messages("allreduce", "recursive-doubling", &params);
            check_same_messages("alltoall", "bruck", &Params::new(p, 7));
            check_same_messages("allreduce", "rabenseifner", &Params::new(p, 1000));
            check_same_messages("allreduce", "rabenseifner", &Params::new(p, 7));
            check_same_messages("alltoall", "pairwise", &Params::new(p, 7));
        }
    }

    #[test]
    fn trinaryx3_sends_the_schedules_messages_on_its_tnis() {
        for (shape, count, seg) in [([3, 3, 3], 3000, 128), ([4, 3, 5], 10_000, 256), ([3, 4, 4], 700, 1000)] {
            let mut params = Params::new(shape.iter().product(), count);
            params.grid = Some(Grid::new(shape));
            params.segment_elements = seg;
            check_same_messages("allreduce", "trinaryx3", &params);
        }
    }

    #[test]
    fn rounds_follow_the_pipeline() {
        let mut params = Params::new(27, 27 * 64);
        params.grid = Some(Grid::new([3, 3, 3]));
        params.segment_elements = 64;
        let r = build(Operation::Allreduce, Algorithm::Trinaryx3, &params).unwrap();
        // Every child sends up after its own children (a tree's up
        // messages use the tree's TNI), and copies go down only after the
        // root's children have sent up.
        for s in r.streams.iter().filter(|s| s.reduce) {
            for c in r.streams.iter().filter(|c| c.reduce && c.dst == s.src && c.tni == s.tni) {
                assert!(c.first < s.first, "{c:?} before {s:?}");
            }
        }
        let root_in = r.streams.iter().filter(|s| s.reduce && s.dst == 0).map(|s| s.first).max().unwrap();
        assert!(r.streams.iter().filter(|s| !s.reduce).all(|s| s.first > root_in));
        assert_eq!(r.messages(), schedule_messages("allreduce", "trinaryx3", &params).values().map(|v| v.0).sum::<u64>());
    }

    #[test]
    fn ring_is_two_long_streams_per_rank_at_any_scale() {
        let r = build(Operation::Allreduce, Algorithm::Ring, &Params::new(82_944, 2 << 20)).unwrap();
        assert_eq!(r.streams.len(), 2 * 82_944);
        assert_eq!(r.rounds(), 2 * 82_943);
        assert_eq!(r.messages(), 2 * 82_943 * 82_944);
        assert!(build(Operation::Allreduce, Algorithm::Binomial, &Params::new(4, 4)).unwrap_err().message.contains("ring"));
        // A pairwise all-to-all of the whole machine is too long to list.
        assert!(build(Operation::Alltoall, Algorithm::Pairwise, &Params::new(82_944, 1)).unwrap_err().message.contains("bruck"));
    }
}
