//! The collective algorithm an MPI library chooses for a call: by
//! operation, message size and communicator, as the library's own decision
//! rules do (the enum is the registry).
//!
//! - **`openmpi`**: Open MPI's `coll/tuned` fixed decision rules
//!   (`coll_tuned_decision_fixed.c`, the 1.6 series that Fujitsu MPI and
//!   SimGrid's `ompi` selector derive from), thresholds as published there.
//! - **`mpich`**: MPICH's defaults (its `MPIR_CVAR_*_MSG_SIZE` control
//!   variables; Thakur, Rabenseifner and Gropp, IJHPCA 19(1), 2005).
//! - **`fjmpi`**: Fujitsu MPI on Tofu ([S:001], [S:003]): barriers, and
//!   reductions of one element, on the barrier interface where the system
//!   has one; the Tofu algorithms (Trinaryx3, triple trinary trees, quad
//!   rings, the overlaid symmetric all-to-all) for long messages on a
//!   torus-shaped communicator; Open MPI's rules otherwise (Fujitsu MPI is
//!   Open MPI based). The sources give no switch sizes: the 64 KiB switch
//!   and the one-element offload limit are assumptions (`[MEM]`).
//!
//! Where a library would run an algorithm tofusim's library does not have
//! (Open MPI's linear all-to-all, its split binary tree), the choice names
//! it and the stand-in that runs instead.

use serde::Serialize;

/// An MPI library's collective decision rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Library {
    Fjmpi,
    Openmpi,
    Mpich,
}

/// What the rules look at besides the operation and the size.
#[derive(Clone, Copy, Debug)]
pub struct Communicator {
    pub ranks: u32,
    /// The communicator is shaped as a torus (the Tofu algorithms' need).
    pub torus: bool,
    /// The torus carries the three edge-disjoint trinary trees (every axis
    /// at least 3 long): Trinaryx3 and the trinary-tree bcast and reduce.
    pub trinary_trees: bool,
    /// The system has a barrier interface (Tofu's barrier gates).
    pub barrier_interface: bool,
}

impl Communicator {
    /// `ranks` on torus `grid` (`None`: not a torus); the trinary trees
    /// where the torus carries them.
    pub fn on_grid(ranks: u32, grid: Option<&crate::tree::Grid>, barrier_interface: bool) -> Self {
        let trinary_trees = grid.is_some_and(|g| crate::tree::trinary_unsupported(g).is_none());
        Self { ranks, torus: grid.is_some(), trinary_trees, barrier_interface }
    }
}

/// The algorithm chosen for one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Choice {
    /// What runs: an algorithm of tofusim's library (`tofusim coll
    /// --list`) or of the MPI layer.
    pub algorithm: &'static str,
    /// The library's own algorithm where tofusim runs a stand-in for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stands_in_for: Option<&'static str>,
    /// The rule that chose it.
    pub rule: &'static str,
}

/// The size at which Fujitsu MPI switches to the Tofu algorithms, bytes
/// ([MEM]: the sources say "long messages" and give no size).
pub const FJMPI_TOFU_FROM_BYTES: u64 = 64 << 10;

/// The largest reduction the barrier interface takes, bytes ([MEM]: one
/// 8-byte element).
pub const BARRIER_INTERFACE_MAX_BYTES: u64 = 8;

fn pick(algorithm: &'static str, rule: &'static str) -> Choice {
    Choice { algorithm, stands_in_for: None, rule }
}

fn stand_in(algorithm: &'static str, theirs: &'static str, rule: &'static str) -> Choice {
    Choice { algorithm, stands_in_for: Some(theirs), rule }
}

impl Library {
    pub const ALL: [Library; 3] = [Self::Fjmpi, Self::Openmpi, Self::Mpich];

    pub fn name(self) -> &'static str {
        match self {
            Self::Fjmpi => "fjmpi",
            Self::Openmpi => "openmpi",
            Self::Mpich => "mpich",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == s)
    }

    /// The algorithm the library runs `op` with (`size_bytes` as
    /// [`crate::collective::Collective`] counts it: per rank, per pair for
    /// alltoall), or `None` for an operation it has no rule for.
    pub fn choose(self, op: &str, size_bytes: u64, comm: Communicator) -> Option<Choice> {
        match self {
            Self::Openmpi => openmpi(op, size_bytes, comm.ranks),
            Self::Mpich => mpich(op, size_bytes, comm.ranks),
            Self::Fjmpi => fjmpi(op, size_bytes, comm),
        }
    }
}

impl std::fmt::Display for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The MPI layer's one schedule of scan and exscan (outside the
/// algorithm library), with what the library would run instead.
fn mpi_layer(theirs: &'static str) -> Choice {
    let (algorithm, rule) = ("recursive-doubling", "the MPI layer's recursive doubling");
    if theirs == algorithm {
        pick(algorithm, rule)
    } else {
        stand_in(algorithm, theirs, rule)
    }
}

/// The largest power of two not above `p` (p >= 1).
fn prev_pow2(p: u32) -> u64 {
    1u64 << (31 - p.max(1).leading_zeros())
}

fn openmpi(op: &str, n: u64, p: u32) -> Option<Choice> {
    let pow2 = p.is_power_of_two();
    Some(match op {
        "barrier" if pow2 => pick("recursive-doubling", "p is a power of two"),
        "barrier" => stand_in("dissemination", "bruck", "p is not a power of two (Bruck's barrier is a dissemination)"),
        "bcast" if n < 2048 => pick("binomial", "size < 2,048 B"),
        "bcast" if n < 370_728 => stand_in("binomial", "split-binary-tree (1 KiB segments)", "size < 370,728 B"),
        "bcast" => stand_in("chain", "pipeline (8-128 KiB segments)", "size >= 370,728 B"),
        "reduce" if p < 8 && n < 512 => stand_in("binomial", "linear", "p < 8, size < 512 B"),
        "reduce" if (p < 8 && n < 20_480) || n < 2048 => pick("binomial", "size < 2,048 B (or p < 8 and < 20,480 B)"),
        "reduce" => stand_in("ring", "segmented pipeline or binary tree", "size >= 2,048 B (a pipelined, bandwidth-bound reduce)"),
        "allreduce" if n < 10_000 => pick("recursive-doubling", "size < 10,000 B"),
        "allreduce" if n / crate::ELEMENT_BYTES > p as u64 => pick("ring", "size >= 10,000 B and more elements than ranks (segmented ring above p x 1 MiB)"),
        "allreduce" => stand_in("binomial", "nonoverlapping (reduce, then bcast)", "size >= 10,000 B, fewer elements than ranks"),
        "allgather" if p == 2 => pick("recursive-doubling", "two processes (an exchange)"),
        "allgather" if (n * p as u64) < 50_000 && pow2 => pick("recursive-doubling", "total < 50,000 B, p a power of two"),
        "allgather" if n * (p as u64) < 50_000 => pick("bruck", "total < 50,000 B"),
        "allgather" if p % 2 == 1 => pick("ring", "total >= 50,000 B, p odd"),
        "allgather" => stand_in("ring", "neighbor-exchange", "total >= 50,000 B, p even"),
        "alltoall" if p == 2 => pick("pairwise", "two processes"),
        "alltoall" if n < 200 && p > 12 => pick("bruck", "size < 200 B, p > 12"),
        "alltoall" if n < 3000 => stand_in("pairwise", "basic-linear (every send posted at once)", "size < 3,000 B"),
        "alltoall" => pick("pairwise", "size >= 3,000 B"),
        "gather" if n > 6000 => stand_in("binomial", "linear-sync (segmented)", "block > 6,000 B"),
        "gather" if p > 60 || (p > 10 && n < 1024) => pick("binomial", "block <= 6,000 B, p > 60 (or p > 10 and block < 1,024 B)"),
        "gather" => stand_in("binomial", "basic-linear", "block <= 6,000 B on few processes"),
        "scatter" if p > 10 && n < 300 => pick("binomial", "p > 10, block < 300 B"),
        "scatter" => stand_in("binomial", "basic-linear", "p <= 10 or block >= 300 B"),
        "reduce_scatter" if n * (p as u64) <= 12 << 10 || (n * (p as u64) <= 256 << 10 && pow2) || p as f64 >= 0.0012 * (n * p as u64) as f64 + 8.0 => {
            stand_in("pairwise", "recursive-halving", "total <= 12 KiB (256 KiB for a power of two), or p >= 0.0012 x total + 8")
        }
        "reduce_scatter" => pick("ring", "larger totals"),
        "scan" | "exscan" => mpi_layer("linear"),
        _ => return None,
    })
}

fn mpich(op: &str, n: u64, p: u32) -> Option<Choice> {
    let pow2 = p.is_power_of_two();
    Some(match op {
        "barrier" => pick("dissemination", "always"),
        "bcast" if n < 12_288 || p < 8 => pick("binomial", "size < 12,288 B or p < 8"),
        "bcast" if n < 524_288 && pow2 => stand_in("scatter-allgather", "scatter + recursive-doubling allgather", "size < 524,288 B, p a power of two"),
        "bcast" => pick("scatter-allgather", "size >= 524,288 B or p not a power of two (scatter + ring allgather)"),
        "reduce" if n <= 2048 || n / crate::ELEMENT_BYTES < prev_pow2(p) => pick("binomial", "size <= 2,048 B, or fewer elements than the power of two below p"),
        "reduce" => pick("rabenseifner", "size > 2,048 B (reduce-scatter + gather)"),
        "allreduce" if n <= 2048 || n / crate::ELEMENT_BYTES < prev_pow2(p) => pick("recursive-doubling", "size <= 2,048 B, or fewer elements than the power of two below p"),
        "allreduce" => pick("rabenseifner", "size > 2,048 B (reduce-scatter + allgather)"),
        "allgather" if pow2 && n * (p as u64) < 524_288 => pick("recursive-doubling", "total < 524,288 B, p a power of two"),
        "allgather" if n * (p as u64) < 81_920 => pick("bruck", "total < 81,920 B"),
        "allgather" => pick("ring", "total >= 81,920 B (524,288 B for a power of two)"),
        "alltoall" if n <= 256 && p >= 8 => pick("bruck", "size <= 256 B, p >= 8"),
        "alltoall" if n <= 32_768 => stand_in("pairwise", "scattered isend/irecv", "size <= 32,768 B"),
        "alltoall" => pick("pairwise", "size > 32,768 B"),
        "gather" | "scatter" => pick("binomial", "always (binomial)"),
        "reduce_scatter" if n * (p as u64) < 524_288 => stand_in("pairwise", "recursive-halving", "total < 524,288 B"),
        "reduce_scatter" => pick("pairwise", "total >= 524,288 B"),
        "scan" | "exscan" => mpi_layer("recursive-doubling"),
        _ => return None,
    })
}

fn fjmpi(op: &str, n: u64, c: Communicator) -> Option<Choice> {
    let long = n >= FJMPI_TOFU_FROM_BYTES;
    Some(match op {
        "barrier" if c.barrier_interface => pick("barrier-interface", "the barrier interface offloads barriers [S:001]"),
        "allreduce" if c.barrier_interface && n <= BARRIER_INTERFACE_MAX_BYTES => {
            pick("barrier-interface", "one element: the barrier interface reduces it [S:001]")
        }
        "allreduce" if c.trinary_trees && long => pick("trinaryx3", "long message on a torus-shaped communicator [S:001]"),
        "bcast" if c.trinary_trees && long => pick("trinary-tree", "long message on a torus-shaped communicator [S:003]"),
        "reduce" if c.trinary_trees && long => pick("trinary-tree", "long message on a torus-shaped communicator [S:003]"),
        "allgather" if c.torus && long => pick("quad-rings", "long message on a torus-shaped communicator [S:003]"),
        "alltoall" if c.torus && long => pick("overlaid-symmetric", "long message on a torus-shaped communicator [S:003]"),
        // Fujitsu MPI is Open MPI based: its tuned rules otherwise.
        _ => return openmpi(op, n, c.ranks),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::Algorithm;
    use crate::collective::Operation;

    const OPS: [&str; 11] = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter", "reduce_scatter", "scan", "exscan"];

    #[test]
    fn every_choice_is_an_algorithm_of_its_operation() {
        for lib in Library::ALL {
            for op in OPS {
                for p in [2u32, 3, 8, 12, 13, 64, 288] {
                    for n in [0u64, 8, 100, 2048, 4096, 10_000, 65_536, 1 << 20, 16 << 20] {
                        for (torus, bi) in [(false, false), (true, true)] {
                            let c = lib.choose(op, n, Communicator { ranks: p, torus, trinary_trees: torus, barrier_interface: bi }).unwrap_or_else(|| panic!("{lib} has no rule for {op}"));
                            if c.algorithm == "barrier-interface" {
                                assert!(bi && lib == Library::Fjmpi);
                                continue;
                            }
                            if let Ok(o) = Operation::parse(op) {
                                assert!(Algorithm::parse(o, c.algorithm).is_ok(), "{lib} {op} {n} B on {p}: {} is not an algorithm of {op}", c.algorithm);
                            }
                            assert!(torus || !Algorithm::named(c.algorithm).is_some_and(Algorithm::needs_torus), "{lib} chose a torus algorithm off a torus");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn published_switch_points() {
        let c = |ranks| Communicator { ranks, torus: false, trinary_trees: false, barrier_interface: false };
        // Open MPI: recursive doubling below 10,000 B, ring above.
        assert_eq!(Library::Openmpi.choose("allreduce", 9_999, c(64)).unwrap().algorithm, "recursive-doubling");
        assert_eq!(Library::Openmpi.choose("allreduce", 10_000, c(64)).unwrap().algorithm, "ring");
        // MPICH: recursive doubling up to 2,048 B, Rabenseifner above.
        assert_eq!(Library::Mpich.choose("allreduce", 2048, c(64)).unwrap().algorithm, "recursive-doubling");
        assert_eq!(Library::Mpich.choose("allreduce", 2049, c(64)).unwrap().algorithm, "rabenseifner");
        assert_eq!(Library::Mpich.choose("alltoall", 256, c(8)).unwrap().algorithm, "bruck");
        assert_eq!(Library::Openmpi.choose("alltoall", 1000, c(64)).unwrap().stands_in_for, Some("basic-linear (every send posted at once)"));
        // Fujitsu MPI: the Tofu algorithms for long messages on a torus,
        // Open MPI's rules off it; the barrier interface where there is one.
        let tofu = Communicator { ranks: 96, torus: true, trinary_trees: true, barrier_interface: true };
        // Open MPI's scatter: binomial on many ranks and small blocks, else linear.
        assert_eq!(Library::Openmpi.choose("scatter", 64, c(16)).unwrap().stands_in_for, None);
        assert_eq!(Library::Openmpi.choose("scatter", 64, c(4)).unwrap().stands_in_for, Some("basic-linear"));
        // Its reduce_scatter halves recursively while p >= 0.0012 x total + 8.
        assert_eq!(Library::Openmpi.choose("reduce_scatter", 200_000 / 288, c(288)).unwrap().stands_in_for, Some("recursive-halving"));
        assert_eq!(Library::Openmpi.choose("reduce_scatter", 1 << 20, c(288)).unwrap().algorithm, "ring");
        // MPICH falls back when the vector has fewer elements than the power of two.
        assert_eq!(Library::Mpich.choose("allreduce", 4096, c(1024)).unwrap().algorithm, "recursive-doubling");
        assert_eq!(Library::Fjmpi.choose("allreduce", 16 << 20, tofu).unwrap().algorithm, "trinaryx3");
        assert_eq!(Library::Fjmpi.choose("allreduce", 8, tofu).unwrap().algorithm, "barrier-interface");
        assert_eq!(Library::Fjmpi.choose("barrier", 0, tofu).unwrap().algorithm, "barrier-interface");
        assert_eq!(Library::Fjmpi.choose("allreduce", 16 << 20, c(96)).unwrap().algorithm, "ring");
    }
}
