//! Collective algorithms, each a function that writes a [`Schedule`].
//!
//! Phases compose through a [`Frontier`]: per rank, the steps the next
//! phase must wait for. So Rabenseifner is fold-in → recursive halving →
//! recursive doubling → fold-out, each a few lines.
//!
//! Every algorithm works for any process count. Those that need a power of
//! two fold the extra ranks in and out (the α-β-γ costs of Thakur, Rabenseifner and Gropp 2005); those that
//! need a torus-shaped communicator (the Tofu ones) fall back to a named
//! general algorithm when the communicator is not one, and say so in
//! [`Schedule::fallback`].

mod allgather;
mod alltoall;
mod barrier;
pub mod barrier_interface;
mod blocks;
pub(crate) mod bcast;
mod doubling;
mod reduce;

use crate::collective::{Collective, Operation};
use crate::schedule::{Rank, Schedule, Span, StepId};
use crate::tree::Grid;

/// Per rank, the steps a following phase depends on.
pub type Frontier = Vec<Vec<StepId>>;

pub(crate) fn start(ranks: u32) -> Frontier {
    vec![Vec::new(); ranks as usize]
}

/// Part `i` of `k` near-equal parts of `n` elements starting at `base`.
pub(crate) fn part(base: u64, n: u64, k: u64, i: u64) -> Span {
    let (q, rem) = (n / k, n % k);
    Span::new(base + i * q + i.min(rem), q + u64::from(i < rem))
}

/// Largest power of two ≤ `p` (p ≥ 1).
pub(crate) fn pow2_floor(p: u32) -> u32 {
    1 << (31 - p.leading_zeros())
}

/// What an algorithm needs besides the operation.
#[derive(Clone, Debug)]
pub struct Params {
    pub ranks: u32,
    /// Elements per rank (see [`Collective`]).
    pub count: u64,
    /// The communicator as a torus (x fastest), for the Tofu algorithms.
    pub grid: Option<Grid>,
    /// Pipelining segment of the chain and tree algorithms, elements.
    pub segment_elements: u64,
    /// Network interfaces per node the algorithm may spread over.
    pub tnis: u8,
    /// Trees the trinary-tree algorithms use instead of their own
    /// construction (checked by [`crate::tree::TrinaryTrees::from_parents`];
    /// [`build`] refuses them for other algorithms, shapes or roots).
    pub trees: Option<std::sync::Arc<crate::tree::TrinaryTrees>>,
    /// The system's barrier interface, if it has one (`barrier-interface`
    /// needs it).
    pub gates: Option<barrier_interface::GateTiming>,
}

impl Params {
    pub fn new(ranks: u32, count: u64) -> Self {
        Self {
            ranks,
            count,
            grid: None,
            // 64 KiB segments: long enough to amortise per-message costs,
            // short enough to fill a pipeline of a few dozen hops.
            segment_elements: 8192,
            tnis: 4,
            trees: None,
            gates: None,
        }
    }
}

/// Why a schedule cannot be built: the input at fault and what it should
/// have been.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BuildError {
    /// The input at fault: `op`, `algo`, `ranks`, `shape`.
    pub key: &'static str,
    pub message: String,
}

/// One algorithm of one operation (the enum is the registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Dissemination,
    RecursiveDoubling,
    Tree,
    Binomial,
    Chain,
    ScatterAllgather,
    TrinaryTree,
    Ring,
    Rabenseifner,
    Trinaryx3,
    Bruck,
    QuadRings,
    Pairwise,
    OverlaidSymmetric,
    BarrierInterface,
}

impl Algorithm {
    pub const ALL: [Algorithm; 15] = [
        Self::Dissemination,
        Self::RecursiveDoubling,
        Self::Tree,
        Self::Binomial,
        Self::Chain,
        Self::ScatterAllgather,
        Self::TrinaryTree,
        Self::Ring,
        Self::Rabenseifner,
        Self::Trinaryx3,
        Self::Bruck,
        Self::QuadRings,
        Self::Pairwise,
        Self::OverlaidSymmetric,
        Self::BarrierInterface,
    ];

    /// The algorithm called `name`, of whichever operation.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The TNIs the algorithm is defined on (`None`: every TNI of the node,
    /// messages spread round-robin): the trinary trees one each (3), quad
    /// rings one per part (4), the barrier interface one channel (1).
    pub fn defined_tnis(self) -> Option<u8> {
        match self {
            Self::Trinaryx3 | Self::TrinaryTree => Some(3),
            Self::QuadRings => Some(4),
            Self::BarrierInterface => Some(1),
            _ => None,
        }
    }

    /// Whether it is a pipelined trinary-tree algorithm (a segment derived
    /// from its pipeline depth, three TNIs, trees it may be given).
    pub fn is_trinary_tree(self) -> bool {
        matches!(self, Self::TrinaryTree | Self::Trinaryx3)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Dissemination => "dissemination",
            Self::RecursiveDoubling => "recursive-doubling",
            Self::Tree => "tree",
            Self::Binomial => "binomial",
            Self::Chain => "chain",
            Self::ScatterAllgather => "scatter-allgather",
            Self::TrinaryTree => "trinary-tree",
            Self::Ring => "ring",
            Self::Rabenseifner => "rabenseifner",
            Self::Trinaryx3 => "trinaryx3",
            Self::Bruck => "bruck",
            Self::QuadRings => "quad-rings",
            Self::Pairwise => "pairwise",
            Self::OverlaidSymmetric => "overlaid-symmetric",
            Self::BarrierInterface => "barrier-interface",
        }
    }

    /// Whether the algorithm is a Tofu construction on a torus-shaped
    /// communicator (and a reconstruction, [RECON], docs/sources.md).
    pub fn needs_torus(self) -> bool {
        matches!(
            self,
            Self::TrinaryTree | Self::Trinaryx3 | Self::QuadRings | Self::OverlaidSymmetric
        )
    }

    /// The algorithms of an operation, in the order `coll --list` shows.
    pub fn of(op: Operation) -> &'static [Algorithm] {
        use Algorithm::*;
        match op {
            Operation::Barrier => &[Dissemination, RecursiveDoubling, Tree, BarrierInterface],
            Operation::Bcast => &[Binomial, Chain, ScatterAllgather, TrinaryTree],
            Operation::Reduce => &[Binomial, Ring, RecursiveDoubling, Rabenseifner, TrinaryTree],
            Operation::Allreduce => &[Binomial, Ring, RecursiveDoubling, Rabenseifner, Trinaryx3, BarrierInterface],
            Operation::Allgather => &[Ring, RecursiveDoubling, Bruck, QuadRings],
            Operation::Alltoall => &[Pairwise, Bruck, OverlaidSymmetric],
            Operation::Gather | Operation::Scatter => &[Binomial],
            Operation::ReduceScatter => &[Pairwise, Ring],
        }
    }

    /// An operation and one of its algorithms, by name (a request's
    /// strings, checked once at the front door).
    pub fn parse_named(op: &str, name: &str) -> Result<(Operation, Self), BuildError> {
        let op = Operation::parse(op)?;
        Ok((op, Self::parse(op, name)?))
    }

    /// The algorithm `name` of `op`, or the refusal listing them (key `algo`).
    pub fn parse(op: Operation, name: &str) -> Result<Self, BuildError> {
        Self::of(op)
            .iter()
            .copied()
            .find(|a| a.name() == name)
            .ok_or_else(|| BuildError {
                key: "algo",
                message: format!(
                    "unknown {op} algorithm `{name}`; expected one of: {}",
                    Self::of(op)
                        .iter()
                        .map(|a| a.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    }

    /// One line on what the algorithm does, for `coll --list`.
    pub fn summary(self) -> &'static str {
        match self {
            Self::Dissemination => "ceil(log2 p) rounds, rank r signals r+2^k",
            Self::RecursiveDoubling => "log2 p exchanges with r xor 2^k; extra ranks folded in and out",
            Self::Tree => "binomial gather to rank 0, then binomial broadcast",
            Self::Binomial => "binomial tree over ranks relative to the root (allreduce: reduce to 0, then bcast; gather, scatter: the subtree's blocks per message)",
            Self::Chain => "pipelined chain in segments",
            Self::ScatterAllgather => "binomial scatter, then ring allgather (van de Geijn)",
            Self::TrinaryTree => "three edge-disjoint trinary trees, pipelined, copies spread over the TNIs [torus; RECON]",
            Self::Ring => "p-1 steps to the next rank on a ring (reductions: ring reduce-scatter, then ring allgather or gather at the root)",
            Self::Rabenseifner => "recursive-halving reduce-scatter, then recursive-doubling allgather (or binomial gather)",
            Self::Trinaryx3 => "reduce up and broadcast down three edge-disjoint trinary trees, one TNI each up, copies spread over the TNIs [torus; RECON]",
            Self::Bruck => "ceil(log2 p) rounds on rotated blocks",
            Self::QuadRings => "4 parts in 4 directions, ring allgather along X, Y, Z in turn, 4 TNIs [torus; RECON]",
            Self::Pairwise => "p-1 exchanges with r+k / r-k (reduce_scatter: block r+k out, block r summed in)",
            Self::OverlaidSymmetric => "phases of symmetric torus shifts over several TNIs, paced at 1/hops [torus; RECON]",
            Self::BarrierInterface => "offloaded to the TNIs' barrier gates: dissemination (barrier) or recursive doubling (one element), no host [Tofu]",
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Writes the schedule of `algorithm` for `collective`.
pub fn build(
    collective: Collective,
    algorithm: Algorithm,
    params: &Params,
) -> Result<Schedule, BuildError> {
    let p = params.ranks;
    if p == 0 {
        return Err(BuildError {
            key: "ranks",
            message: "expected at least one process".into(),
        });
    }
    if collective.root() >= p {
        return Err(BuildError {
            key: "root",
            message: format!("root {} is not a rank of {p}", collective.root()),
        });
    }
    if let Some(g) = params.grid {
        if g.ranks() != p {
            return Err(BuildError {
                key: "shape",
                message: format!(
                    "the communicator shape {}x{}x{} has {} ranks, not {p}",
                    g.lengths[0],
                    g.lengths[1],
                    g.lengths[2],
                    g.ranks()
                ),
            });
        }
    }
    if let Some(op) = collective.operation() {
        if !Algorithm::of(op).contains(&algorithm) {
            return Err(Algorithm::parse(op, algorithm.name()).unwrap_err());
        }
    }
    if algorithm == Algorithm::BarrierInterface {
        let timing = barrier_interface::check(params, params.count)?;
        let inner = if collective == Collective::Barrier { Algorithm::Dissemination } else { Algorithm::RecursiveDoubling };
        let mut s = barrier_interface::offload(build(collective, inner, params)?, timing);
        s.algorithm = algorithm.name();
        return Ok(s);
    }
    let takes_trees = algorithm.is_trinary_tree();
    check_given_trees(params, takes_trees, algorithm.name(), collective.root())?;
    let mut s = Schedule::new(collective, algorithm.name(), p, params.count);
    match collective {
        Collective::Barrier => barrier::build(&mut s, algorithm),
        Collective::Bcast { root } => bcast::build(&mut s, algorithm, root, params),
        Collective::Reduce { root } => reduce::build_reduce(&mut s, algorithm, root, params),
        Collective::Allreduce => reduce::build_allreduce(&mut s, algorithm, params),
        Collective::Allgather => allgather::build(&mut s, algorithm, params),
        Collective::Alltoall => alltoall::build(&mut s, algorithm, params),
        Collective::Gather { root } => blocks::gather(&mut s, root, params),
        Collective::Scatter { root } => blocks::scatter(&mut s, root, params),
        Collective::ReduceScatter => blocks::reduce_scatter(&mut s, algorithm, params),
        Collective::Transfers => unreachable!("transfers have no algorithms (see `transfers`)"),
    }
    s.shrink_to_fit();
    Ok(s)
}

pub use crate::schedule::Transfer;

/// Transfers that all start at once (bandwidth and injection-rate
/// benchmarks), each a single message.
pub fn transfers(ranks: u32, list: &[Transfer]) -> Schedule {
    let elems = |b: u64| b.div_ceil(crate::ELEMENT_BYTES);
    let count = list.iter().map(|t| elems(t.bytes)).max().unwrap_or(0);
    let mut s = Schedule::new(Collective::Transfers, "transfers", ranks, count);
    for t in list {
        let span = vec![Span::new(0, elems(t.bytes))];
        s.send(t.src, t.dst, span.clone(), t.tni, &[]);
        s.recv(t.dst, t.src, span, crate::Combine::Replace, &[]);
    }
    s.shrink_to_fit();
    s
}

/// `rounds` round trips of a `bytes` message between ranks `a` and `b`
/// (latency benchmarks: one-way time = total / (2 · rounds)).
pub fn pingpong(ranks: u32, a: Rank, b: Rank, bytes: u64, rounds: u32) -> Schedule {
    let n = bytes.div_ceil(crate::ELEMENT_BYTES);
    let mut s = Schedule::new(Collective::Transfers, "pingpong", ranks, n);
    let span = vec![Span::new(0, n)];
    let (mut la, mut lb): (Vec<StepId>, Vec<StepId>) = (vec![], vec![]);
    for _ in 0..rounds {
        s.send(a, b, span.clone(), 0, &la);
        lb = vec![s.recv(b, a, span.clone(), crate::Combine::Replace, &lb)];
        lb = vec![s.send(b, a, span.clone(), 0, &lb)];
        la = vec![s.recv(a, b, span.clone(), crate::Combine::Replace, &la)];
    }
    s
}

/// `rounds` request-reply operations by rank `a` on rank `b`, one after
/// another: `a` sends `request`, `b`'s TNI applies it with `combine` and
/// answers with `reply` without `b`'s host, `a` receives the reply.
#[allow(clippy::too_many_arguments)]
fn request_reply(
    mut s: Schedule,
    a: Rank,
    b: Rank,
    request: Vec<Span>,
    combine: crate::Combine,
    target: Vec<Span>,
    reply: Vec<Span>,
    rounds: u32,
) -> Schedule {
    let (mut last, mut tgt): (Vec<StepId>, Vec<StepId>) = (vec![], vec![]);
    for _ in 0..rounds {
        let r = s.send(a, b, request.clone(), 0, &last);
        tgt = vec![s.offloaded_reply(b, a, target.clone(), combine, reply.clone(), 0, &tgt)];
        last = vec![s.recv(a, b, reply.clone(), crate::Combine::Replace, &[r])];
    }
    s
}

/// `rounds` RDMA Gets of `bytes` by rank `a` from rank `b`: a one-element
/// request to `b`'s TNI, which answers with the data without `b`'s host
/// (latency benchmarks: time per Get = total / rounds).
pub fn get(ranks: u32, a: Rank, b: Rank, bytes: u64, rounds: u32) -> Schedule {
    let n = bytes.div_ceil(crate::ELEMENT_BYTES);
    let s = Schedule::new(Collective::Transfers, "get", ranks, n + 1);
    let req = vec![Span::new(n, 1)];
    request_reply(
        s,
        a,
        b,
        req.clone(),
        crate::Combine::Replace,
        req,
        vec![Span::new(0, n)],
        rounds,
    )
}

/// `rounds` 8-byte atomic adds by rank `a` on a word of rank `b`, each
/// returning the new value: the request carries the operand, `b`'s TNI adds
/// it and replies, without `b`'s host.
pub fn atomic_add(ranks: u32, a: Rank, b: Rank, rounds: u32) -> Schedule {
    let s = Schedule::new(Collective::Transfers, "atomic-add", ranks, 2);
    let word = vec![Span::new(0, 1)];
    request_reply(
        s,
        a,
        b,
        vec![Span::new(1, 1)],
        crate::Combine::Sum,
        word.clone(),
        word,
        rounds,
    )
}

/// Builds operation `op` with `algorithm` for a vector of `size_bytes`
/// (rounded up to whole elements; a barrier moves none); `params.count`
/// is set from the size.
pub fn build_sized(op: Operation, algorithm: Algorithm, root: Rank, size_bytes: u64, mut params: Params) -> Result<Schedule, BuildError> {
    params.count = if op.moves_data() { size_bytes.div_ceil(crate::ELEMENT_BYTES).max(1) } else { 0 };
    build(op.collective(root), algorithm, &params)
}

/// [`build_sized`] from names, for callers whose operation and algorithm
/// arrive as text (a replayed trace's calls).
pub fn build_named(op: &str, algo: &str, root: Rank, size_bytes: u64, params: Params) -> Result<Schedule, BuildError> {
    let (op, algorithm) = Algorithm::parse_named(op, algo)?;
    build_sized(op, algorithm, root, size_bytes, params)
}

/// Given trees (`params.trees`) fit the run: a trinary-tree algorithm
/// (`takes_trees`), its communicator and its root.
pub(crate) fn check_given_trees(params: &Params, takes_trees: bool, algo: &str, root: Rank) -> Result<(), BuildError> {
    if let Some(t) = &params.trees {
        if !takes_trees {
            return Err(BuildError { key: "trees", message: format!("only the trinary-tree algorithms take trees, not {algo}") });
        }
        if params.grid != Some(t.grid) || t.root != root {
            let shape = params.grid.map_or("no torus".to_string(), |g| format!("{}x{}x{}", g.lengths[0], g.lengths[1], g.lengths[2]));
            let [a, b, c] = t.grid.lengths;
            return Err(BuildError {
                key: "trees",
                message: format!("the trees are for a {a}x{b}x{c} communicator rooted at rank {}, the run has {shape} rooted at rank {root}", t.root),
            });
        }
    }
    Ok(())
}

/// The three trees of a trinary-tree algorithm on `g` rooted at `root`: the
/// ones given in `params` (their fit checked by [`build`] through
/// [`check_given_trees`] before any algorithm runs), or built.
pub(crate) fn trinary_trees_for(params: &Params, g: &Grid, root: Rank) -> [crate::tree::Tree; 3] {
    match &params.trees {
        Some(t) => {
            debug_assert!(t.grid == *g && t.root == root, "given trees checked to fit");
            t.trees.clone()
        }
        None => crate::tree::trinary_trees(g, root),
    }
}

/// The grid a torus algorithm can use, or the reason to fall back.
pub(crate) fn torus_grid(params: &Params, need_three: bool) -> Result<Grid, String> {
    let Some(g) = params.grid else {
        return Err("no communicator shape given (it needs a torus-shaped communicator)".into());
    };
    if need_three {
        if let Some(why) = crate::tree::trinary_unsupported(&g) {
            return Err(why);
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests;
