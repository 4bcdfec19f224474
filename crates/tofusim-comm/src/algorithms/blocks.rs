//! Gather, scatter and reduce-scatter: operations on one block per rank.
//!
//! - **Gather / scatter, binomial**: a binomial tree on ranks relative to
//!   the root; each message carries the blocks of the subtree below (in
//!   their own places, so a subtree that wraps past the last rank is a
//!   gather list of two spans). ⌈log₂ p⌉ rounds, p − 1 blocks into or out
//!   of the root.
//! - **Reduce-scatter, pairwise**: p − 1 steps; at step k rank r sends its
//!   block r + k to rank r + k and adds the block r that rank r − k sends
//!   into its own (the MPI libraries' algorithm for long vectors or
//!   non-power-of-two counts).
//! - **Reduce-scatter, ring**: p − 1 steps around the ring; at step k rank
//!   r passes the partial sum of block r − k − 1 to r + 1 and adds the
//!   one of block r − k − 2 arriving from r − 1, so block r is complete at
//!   rank r after the last step (the first half of the ring allreduce).

use super::{Algorithm, Params};
use crate::schedule::{Combine, Rank, Schedule, Span, StepId};

/// The blocks of relative ranks `from..to` (of `p`, root `root`), each
/// `n` elements, in their own places.
fn blocks(from: u32, to: u32, p: u32, root: Rank, n: u64) -> Vec<Span> {
    // Consecutive blocks merge: one span, or two where the range wraps.
    let mut out: Vec<Span> = Vec::with_capacity(2);
    for v in from..to {
        let at = ((v + root) % p) as u64 * n;
        match out.last_mut() {
            Some(last) if last.end() == at => last.len += n,
            _ => out.push(Span::new(at, n)),
        }
    }
    out
}

pub(crate) fn gather(s: &mut Schedule, root: Rank, params: &Params) {
    let (p, n) = (s.ranks, params.count);
    for r in 0..p {
        let vr = (r + p - root) % p;
        let real = |v: u32| (v + root) % p;
        let mut received: Vec<StepId> = Vec::new();
        let mut mask = 1u32;
        while mask < p {
            if vr & mask != 0 {
                s.send(r, real(vr - mask), blocks(vr, (vr + mask).min(p), p, root, n), 0, &received);
                break;
            }
            if vr + mask < p {
                let from = vr + mask;
                received.push(s.recv(r, real(from), blocks(from, (from + mask).min(p), p, root, n), Combine::Replace, &[]));
            }
            mask <<= 1;
        }
    }
}

pub(crate) fn scatter(s: &mut Schedule, root: Rank, params: &Params) {
    let (p, n) = (s.ranks, params.count);
    for r in 0..p {
        let vr = (r + p - root) % p;
        let real = |v: u32| (v + root) % p;
        // The subtree of vr spans `mask` ranks: the lowest set bit of vr,
        // or (the root) the power of two covering p.
        let mut mask = if vr == 0 { p.next_power_of_two() } else { vr & vr.wrapping_neg() };
        let mut got: Vec<StepId> = Vec::new();
        if vr != 0 {
            got.push(s.recv(r, real(vr - mask), blocks(vr, (vr + mask).min(p), p, root, n), Combine::Replace, &[]));
        }
        mask >>= 1;
        while mask > 0 {
            if vr + mask < p {
                let to = vr + mask;
                s.send(r, real(to), blocks(to, (to + mask).min(p), p, root, n), 0, &got);
            }
            mask >>= 1;
        }
    }
}

pub(crate) fn reduce_scatter(s: &mut Schedule, algorithm: Algorithm, params: &Params) {
    let (p, n) = (s.ranks, params.count);
    let block = |b: u32| vec![Span::new(b as u64 * n, n)];
    match algorithm {
        Algorithm::Pairwise => {
            for r in 0..p {
                // Step by step, as the all-to-all's pairwise exchange.
                let mut last: Vec<StepId> = Vec::new();
                for k in 1..p {
                    let to = (r + k) % p;
                    let from = (r + p - k) % p;
                    let snd = s.send(r, to, block(to), 0, &last);
                    last = vec![snd, s.recv(r, from, block(r), Combine::Sum, &last)];
                }
            }
        }
        Algorithm::Ring => {
            for r in 0..p {
                let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
                let mut summed: Vec<StepId> = Vec::new();
                for k in 0..p.saturating_sub(1) {
                    let out = (r + 2 * p - k - 1) % p;
                    s.send(r, next, block(out), 0, &summed);
                    let into = (r + 2 * p - k - 2) % p;
                    summed = vec![s.recv(r, prev, block(into), Combine::Sum, &[])];
                }
            }
        }
        _ => unreachable!("not a reduce-scatter algorithm"),
    }
}
