//! MPI collectives that tofusim's algorithm library (`algorithms`, whose
//! schedules the data executor verifies against the operation's
//! definition) does not have, written as message schedules for timing a
//! replayed trace: who sends how much to whom, in which order, with the
//! reductions charged where they happen. Each follows the algorithm
//! MPICH and Open MPI use for it:
//!
//! - `scan` / `exscan`: recursive doubling (⌈log₂ p⌉ exchanges of the
//!   vector, a reduction after each).
//!
//! Their data are not checked (the schedule's collective is `Transfers`);
//! their messages are what a replay needs. (Gather, scatter and
//! reduce-scatter are in the algorithm library, verified.)

use crate::schedule::{Combine, Rank, Schedule, Span, StepId};
use crate::{BuildError, Collective, ELEMENT_BYTES};

/// The operations here and their algorithm's name.
pub const OPERATIONS: [(&str, &str); 2] = [("scan", "recursive-doubling"), ("exscan", "recursive-doubling")];

/// The schedule of `op` on `ranks` ranks: `block_bytes` is the vector.
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
}
