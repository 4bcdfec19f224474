//! MPI collectives that tofusim's algorithm library (`algorithms`, whose
//! schedules the data executor verifies against the operation's
//! definition) does not have, written as message schedules for timing a
//! replayed trace: who sends how much to whom, in which order, with the
//! reductions charged where they happen. Each follows the algorithm
//! MPICH and Open MPI use for it:
//!
//! - `scan` / `exscan`: recursive doubling (⌈log₂ p⌉ exchanges of the
//!   vector, a reduction after each);
//! - `gather` / `scatter`: a binomial tree on ranks relative to the root,
//!   each message carrying the blocks of the subtree below;
//! - `reduce_scatter`: pairwise exchange (p − 1 steps, each rank sends
//!   the block of `r + k` to it and reduces the block it receives).
//!
//! Their data are not checked (the schedule's collective is `Transfers`);
//! their messages are what a replay needs.

use crate::schedule::{Combine, Rank, Schedule, Span, StepId};
use crate::{BuildError, Collective, ELEMENT_BYTES};

/// The operations here and their algorithm's name.
pub const OPERATIONS: [(&str, &str); 5] = [
    ("scan", "recursive-doubling"),
    ("exscan", "recursive-doubling"),
    ("gather", "binomial"),
    ("scatter", "binomial"),
    ("reduce_scatter", "pairwise"),
];

/// The schedule of `op` on `ranks` ranks: `block_bytes` is the vector
/// (scan, exscan), each rank's block (gather, scatter) or each rank's
/// share of the reduced vector (reduce_scatter).
pub fn build(op: &str, algorithm: &str, ranks: u32, root: Rank, block_bytes: u64) -> Result<Schedule, BuildError> {
    let Some(&(_, algo)) = OPERATIONS.iter().find(|(o, _)| *o == op) else {
        return Err(BuildError { key: "op", message: format!("no timing schedule for {op}") });
    };
    if algorithm != algo {
        return Err(BuildError { key: "algo", message: format!("{op} has one algorithm here, {algo}; got {algorithm}") });
    }
    if ranks == 0 || root >= ranks {
        return Err(BuildError { key: "root", message: format!("root {root} of {ranks} ranks") });
    }
    let b = block_bytes.div_ceil(ELEMENT_BYTES).max(1);
    let p = ranks;
    let mut s = Schedule::new(Collective::Transfers, algo, p, b);
    match op {
        "scan" | "exscan" => {
            s.buffer_elements = 2 * b;
            for r in 0..p {
                let mut prev: Vec<StepId> = Vec::new();
                let mut mask = 1;
                while mask < p {
                    let partner = r ^ mask;
                    if partner < p {
                        let snd = s.send(r, partner, vec![Span::new(0, b)], 0, &prev);
                        let rcv = s.recv(r, partner, vec![Span::new(b, b)], Combine::Sum, &prev);
                        prev = vec![snd, rcv];
                    }
                    mask <<= 1;
                }
            }
        }
        "gather" | "scatter" => {
            s.buffer_elements = p as u64 * b;
            let gather = op == "gather";
            for r in 0..p {
                let vr = (r + p - root) % p;
                let real = |v: u32| (v + root) % p;
                let mut prev: Vec<StepId> = Vec::new();
                // The subtree below relative rank v at level mask: blocks.
                let blocks = |v: u32, mask: u32| (mask.min(p - v)) as u64 * b;
                if gather {
                    let mut mask = 1;
                    while mask < p {
                        if vr & mask != 0 {
                            let to = real(vr - mask);
                            s.send(r, to, vec![Span::new(0, blocks(vr, mask))], 0, &prev);
                            break;
                        }
                        if vr + mask < p {
                            let from = real(vr + mask);
                            let rcv = s.recv(r, from, vec![Span::new(0, blocks(vr + mask, mask))], Combine::Replace, &prev);
                            prev = vec![rcv];
                        }
                        mask <<= 1;
                    }
                } else {
                    // Receive from the parent, then send down, largest first.
                    let mut mask = 1;
                    while mask < p && vr & mask == 0 {
                        mask <<= 1;
                    }
                    if vr != 0 {
                        let from = real(vr - mask);
                        let rcv = s.recv(r, from, vec![Span::new(0, blocks(vr, mask))], Combine::Replace, &[]);
                        prev = vec![rcv];
                    }
                    let mut m = mask >> 1;
                    if vr == 0 {
                        m = p.next_power_of_two() >> 1;
                    }
                    while m > 0 {
                        if vr + m < p {
                            let snd = s.send(r, real(vr + m), vec![Span::new(0, blocks(vr + m, m))], 0, &prev);
                            prev = vec![snd];
                        }
                        m >>= 1;
                    }
                }
            }
        }
        "reduce_scatter" => {
            s.buffer_elements = 2 * b;
            for r in 0..p {
                let mut prev: Vec<StepId> = Vec::new();
                for k in 1..p {
                    let snd = s.send(r, (r + k) % p, vec![Span::new(0, b)], 0, &prev);
                    let rcv = s.recv(r, (r + p - k) % p, vec![Span::new(b, b)], Combine::Sum, &prev);
                    prev = vec![snd, rcv];
                }
            }
        }
        _ => unreachable!("listed in OPERATIONS"),
    }
    s.shrink_to_fit();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::data::{execute, Order};

    #[test]
    fn every_operation_is_a_consistent_schedule_at_every_size() {
        for &(op, algo) in &OPERATIONS {
            for p in 1..=13 {
                for root in [0, p / 2, p - 1] {
                    let s = build(op, algo, p, root, 24).unwrap_or_else(|e| panic!("{op} on {p}: {e}"));
                    s.validate().unwrap_or_else(|e| panic!("{op} on {p} ranks, root {root}: {e}"));
                    execute(&s, Order::Fifo).unwrap_or_else(|e| panic!("{op} on {p} ranks, root {root}: {e:?}"));
                }
            }
        }
    }

    #[test]
    fn a_gather_brings_every_block_to_the_root_once() {
        for p in 2..=13 {
            for root in 0..p {
                let s = build("gather", "binomial", p, root, 8).unwrap();
                // Every non-root rank sends exactly once; the root receives
                // p - 1 blocks in all.
                let sends: Vec<u64> = (0..p).map(|r| s.programs[r as usize].steps.iter().filter(|st| matches!(st.action, crate::Action::Send { .. })).count() as u64).collect();
                assert_eq!(sends[root as usize], 0);
                assert!(sends.iter().enumerate().all(|(r, &k)| r as u32 == root || k == 1));
                let at_root: u64 = s.programs[root as usize].steps.iter().map(|st| match &st.action { crate::Action::Recv { spans, .. } => crate::schedule::total(spans), _ => 0 }).sum();
                assert_eq!(at_root, p as u64 - 1);
            }
        }
        assert!(build("gather", "linear", 4, 0, 8).is_err());
    }
}
