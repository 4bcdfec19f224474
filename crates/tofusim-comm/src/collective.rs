//! The collective operations and the buffer layout each one fixes: which
//! elements a rank starts with and which it must hold at the end. Every
//! algorithm of an operation uses the same layout, so one checker serves
//! them all (and the real-MPI executor in the front end uses it too).

use serde::Serialize;

/// A rank of a communicator (0-based).
pub type Rank = u32;

/// A collective operation. `count` (elements per rank) means: the vector
/// length for barrier-free reductions and broadcasts, the block each rank
/// contributes for allgather and gather, the block per destination for
/// alltoall and scatter, and each rank's block of the result for
/// reduce-scatter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Collective {
    Barrier,
    Bcast {
        root: Rank,
    },
    Reduce {
        root: Rank,
    },
    Allreduce,
    /// Buffer: `p` blocks of `count`; block `r` is rank `r`'s contribution.
    Allgather,
    /// Buffer: send blocks `0..p` (block `j` goes to rank `j`), then
    /// receive blocks `p..2p` (block `p + j` comes from rank `j`).
    Alltoall,
    /// Buffer: `p` blocks of `count`; block `r` is rank `r`'s
    /// contribution, and the root ends with every block.
    Gather {
        root: Rank,
    },
    /// Buffer: `p` blocks of `count`; the root holds block `j` for rank
    /// `j`, and rank `r` ends with block `r` in its place.
    Scatter {
        root: Rank,
    },
    /// Buffer: `p` blocks of `count`, every rank's vector; rank `r` ends
    /// with the sum of every rank's block `r`, in block `r`'s place
    /// (MPI_Reduce_scatter_block).
    #[serde(rename = "reduce_scatter")]
    ReduceScatter,
    /// Point-to-point transfers with no collective result (put and
    /// bandwidth benchmarks): the buffer is whatever the transfers need.
    Transfers,
}

/// The operations `tofusim coll` builds, as a request names them (the
/// enum is the registry: [`crate::Algorithm::of`] lists each one's
/// algorithms, and a new operation is a compile error there until it has
/// them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Allgather,
    Alltoall,
    Gather,
    Scatter,
    ReduceScatter,
}

impl Operation {
    pub const ALL: [Operation; 9] = [Self::Barrier, Self::Bcast, Self::Reduce, Self::Allreduce, Self::Allgather, Self::Alltoall, Self::Gather, Self::Scatter, Self::ReduceScatter];

    pub fn name(self) -> &'static str {
        OPERATIONS[self as usize]
    }

    /// The operation named `name`, or the refusal listing them (key `op`).
    pub fn parse(name: &str) -> Result<Self, crate::BuildError> {
        Self::ALL.into_iter().find(|o| o.name() == name).ok_or_else(|| crate::BuildError {
            key: "op",
            message: format!("unknown operation `{name}`; expected one of: {}", OPERATIONS.join(", ")),
        })
    }

    /// The collective, rooted at `root` where the operation has a root.
    pub fn collective(self, root: Rank) -> Collective {
        match self {
            Self::Barrier => Collective::Barrier,
            Self::Bcast => Collective::Bcast { root },
            Self::Reduce => Collective::Reduce { root },
            Self::Allreduce => Collective::Allreduce,
            Self::Allgather => Collective::Allgather,
            Self::Alltoall => Collective::Alltoall,
            Self::Gather => Collective::Gather { root },
            Self::Scatter => Collective::Scatter { root },
            Self::ReduceScatter => Collective::ReduceScatter,
        }
    }

    /// Whether the operation has a root.
    pub fn has_root(self) -> bool {
        matches!(self, Self::Bcast | Self::Reduce | Self::Gather | Self::Scatter)
    }

    /// Whether the operation moves data (a barrier moves none).
    pub fn moves_data(self) -> bool {
        self != Self::Barrier
    }

    /// Whether the size is each rank's block of a gathered or exchanged
    /// whole (allgather, alltoall) rather than the vector.
    pub fn size_is_per_block(self) -> bool {
        matches!(self, Self::Allgather | Self::Alltoall | Self::Gather | Self::Scatter | Self::ReduceScatter)
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The operations' names, in the order of [`Operation::ALL`].
pub const OPERATIONS: [&str; 9] = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter", "reduce_scatter"];

/// Marks elements that carry no data yet, so a missing write shows.
pub const POISON: u64 = 0xDEAD_BEEF_DEAD_BEEF;

/// The value rank `src` contributes at element `i` (for alltoall: of its
/// block for rank `dst`). A hash, so a misplaced element cannot pass.
pub fn value(src: Rank, dst: Rank, i: u64) -> u64 {
    let mut x = (src as u64) << 40 ^ (dst as u64) << 20 ^ i ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl Collective {
    pub fn parse(op: &str, root: Rank) -> Option<Self> {
        Operation::parse(op).ok().map(|o| o.collective(root))
    }

    /// The operation (`None` for point-to-point transfers).
    pub fn operation(&self) -> Option<Operation> {
        Some(match self {
            Self::Barrier => Operation::Barrier,
            Self::Bcast { .. } => Operation::Bcast,
            Self::Reduce { .. } => Operation::Reduce,
            Self::Allreduce => Operation::Allreduce,
            Self::Allgather => Operation::Allgather,
            Self::Alltoall => Operation::Alltoall,
            Self::Gather { .. } => Operation::Gather,
            Self::Scatter { .. } => Operation::Scatter,
            Self::ReduceScatter => Operation::ReduceScatter,
            Self::Transfers => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Barrier => "barrier",
            Self::Bcast { .. } => "bcast",
            Self::Reduce { .. } => "reduce",
            Self::Allreduce => "allreduce",
            Self::Allgather => "allgather",
            Self::Alltoall => "alltoall",
            Self::Gather { .. } => "gather",
            Self::Scatter { .. } => "scatter",
            Self::ReduceScatter => "reduce_scatter",
            Self::Transfers => "transfers",
        }
    }

    pub fn root(&self) -> Rank {
        match self {
            Self::Bcast { root } | Self::Reduce { root } | Self::Gather { root } | Self::Scatter { root } => *root,
            _ => 0,
        }
    }

    /// Elements of the collective's regions in one rank's buffer.
    pub fn buffer_elements(&self, ranks: u32, count: u64) -> u64 {
        match self {
            Self::Barrier => 0,
            Self::Bcast { .. } | Self::Reduce { .. } | Self::Allreduce | Self::Transfers => count,
            Self::Allgather | Self::Gather { .. } | Self::Scatter { .. } | Self::ReduceScatter => ranks as u64 * count,
            Self::Alltoall => 2 * ranks as u64 * count,
        }
    }

    /// Payload bytes the operation delivers per rank, the numerator of its
    /// bandwidth figure (the message size for bcast/reduce/allreduce, the
    /// gathered or exchanged total otherwise).
    pub fn size_elements(&self, ranks: u32, count: u64) -> u64 {
        match self {
            Self::Barrier | Self::Transfers => 0,
            Self::Bcast { .. } | Self::Reduce { .. } | Self::Allreduce => count,
            Self::Allgather | Self::Alltoall | Self::Gather { .. } | Self::Scatter { .. } | Self::ReduceScatter => ranks as u64 * count,
        }
    }

    /// Rank `r`'s buffer before the operation (`len` ≥ the regions; the
    /// scratch beyond them is poisoned).
    pub fn initial(&self, r: Rank, ranks: u32, count: u64, len: u64) -> Vec<u64> {
        let mut buf = vec![POISON; len as usize];
        let n = count as usize;
        match self {
            Self::Barrier => {}
            Self::Transfers => buf
                .iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = value(r, 0, i as u64)),
            Self::Bcast { root } => {
                if r == *root {
                    (0..n).for_each(|i| buf[i] = value(r, 0, i as u64));
                }
            }
            Self::Reduce { .. } | Self::Allreduce => {
                (0..n).for_each(|i| buf[i] = value(r, 0, i as u64))
            }
            Self::Allgather | Self::Gather { .. } => (0..n).for_each(|i| buf[r as usize * n + i] = value(r, 0, i as u64)),
            Self::Scatter { root } => {
                if r == *root {
                    for j in 0..ranks as usize {
                        (0..n).for_each(|i| buf[j * n + i] = value(r, j as Rank, i as u64));
                    }
                }
            }
            Self::Alltoall | Self::ReduceScatter => {
                for j in 0..ranks as usize {
                    (0..n).for_each(|i| buf[j * n + i] = value(r, j as Rank, i as u64));
                }
            }
        }
        buf
    }

    /// The elements rank `r` must hold at the end, as (offset, expected values).
    pub fn expected(&self, r: Rank, ranks: u32, count: u64) -> Vec<u64> {
        (0..self.expected_len(r, ranks, count)).map(|k| self.expected_element(r, ranks, count, k)).collect()
    }

    /// How many elements [`Self::expected`] has for rank `r`.
    pub fn expected_len(&self, r: Rank, ranks: u32, count: u64) -> u64 {
        match self {
            Self::Barrier | Self::Transfers => 0,
            Self::Reduce { root } | Self::Gather { root } if r != *root => 0,
            Self::Bcast { .. } | Self::Reduce { .. } | Self::Allreduce | Self::Scatter { .. } | Self::ReduceScatter => count,
            Self::Allgather | Self::Alltoall | Self::Gather { .. } => ranks as u64 * count,
        }
    }

    /// Element `k` of [`Self::expected`] (an element at a time, so that a
    /// caller can stop between them: a sum over the ranks per element).
    pub fn expected_element(&self, r: Rank, ranks: u32, count: u64, k: u64) -> u64 {
        let n = count.max(1);
        match self {
            Self::Barrier | Self::Transfers => 0,
            Self::Bcast { root } => value(*root, 0, k),
            Self::Reduce { .. } | Self::Allreduce => (0..ranks).fold(0u64, |a, s| a.wrapping_add(value(s, 0, k))),
            Self::Allgather | Self::Gather { .. } => value((k / n) as Rank, 0, k % n),
            Self::Alltoall => value((k / n) as Rank, r, k % n),
            Self::Scatter { root } => value(*root, r, k),
            Self::ReduceScatter => (0..ranks).fold(0u64, |a, s| a.wrapping_add(value(s, r, k))),
        }
    }

    /// Where rank `r`'s [`Self::expected`] lies in the buffer.
    pub fn result_offset(&self, r: Rank, ranks: u32, count: u64) -> u64 {
        match self {
            Self::Alltoall => ranks as u64 * count,
            Self::Scatter { .. } | Self::ReduceScatter => r as u64 * count,
            _ => 0,
        }
    }

    /// Ranks whose start every rank `r` must causally follow at the end:
    /// all of them, except for a broadcast (the root) and a reduce (only
    /// the root must have heard from all).
    pub fn must_hear_from_all(&self, r: Rank) -> bool {
        match self {
            Self::Bcast { .. } | Self::Scatter { .. } | Self::Transfers => false,
            Self::Reduce { root } | Self::Gather { root } => r == *root,
            _ => true,
        }
    }
}

#[cfg(test)]
mod operation_tests {
    use super::*;

    #[test]
    fn names_follow_the_variants() {
        for (i, o) in Operation::ALL.into_iter().enumerate() {
            assert_eq!(o as usize, i);
            assert_eq!(Operation::parse(o.name()), Ok(o));
            assert_eq!(o.collective(0).operation(), Some(o));
        }
        assert_eq!(Operation::parse("gatherv").unwrap_err().key, "op");
    }
}
