//! Recursive doubling over the largest power of two q ≤ p, with the extra
//! ranks folded in before and out after (the α-β-γ costs of Thakur, Rabenseifner and Gropp 2005): rank q+i hands
//! its data to rank i and gets the result back.

use super::{pow2_floor, Frontier};
use crate::schedule::{Combine, Schedule, Span};

/// Ranks q..p send `spans` to rank r−q, which receives with `combine`.
pub(crate) fn fold_in(s: &mut Schedule, f: &mut Frontier, spans: &[Span], combine: Combine) {
    let p = s.ranks;
    let q = pow2_floor(p);
    for r in q..p {
        let snd = s.send(r, r - q, spans.to_vec(), 0, &f[r as usize]);
        f[r as usize] = vec![snd];
    }
    for r in 0..p - q {
        let rcv = s.recv(r, r + q, spans.to_vec(), combine, &f[r as usize]);
        f[r as usize] = vec![rcv];
    }
}

/// Ranks 0..p−q send `spans` back to rank r+q.
pub(crate) fn fold_out(s: &mut Schedule, f: &mut Frontier, spans: &[Span]) {
    let p = s.ranks;
    let q = pow2_floor(p);
    for r in 0..p - q {
        let snd = s.send(r, r + q, spans.to_vec(), 0, &f[r as usize]);
        f[r as usize].push(snd);
    }
    for r in q..p {
        let rcv = s.recv(r, r - q, spans.to_vec(), Combine::Replace, &f[r as usize]);
        f[r as usize] = vec![rcv];
    }
}

/// log2 q rounds among ranks 0..q: exchange `spans` with r xor 2^k. The
/// receive waits for the send of its round (a send reads its data first).
pub(crate) fn exchange_rounds(
    s: &mut Schedule,
    f: &mut Frontier,
    spans: &[Span],
    combine: Combine,
) {
    let q = pow2_floor(s.ranks);
    let mut mask = 1;
    while mask < q {
        for r in 0..q {
            let partner = r ^ mask;
            let deps = f[r as usize].clone();
            let snd = s.send(r, partner, spans.to_vec(), 0, &deps);
            let mut rdeps = deps;
            rdeps.push(snd);
            let rcv = s.recv(r, partner, spans.to_vec(), combine, &rdeps);
            f[r as usize] = vec![snd, rcv];
        }
        mask <<= 1;
    }
}
