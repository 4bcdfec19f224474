//! Alltoall: send block j (at j·count) goes to rank j and lands in its
//! receive block for the sender (at (p + sender)·count).

use std::collections::BTreeMap;

use super::{start, torus_grid, Algorithm, Frontier, Params};
use crate::schedule::{Combine, Schedule, Span, StepId};
use crate::tree::Grid;

pub(crate) fn build(s: &mut Schedule, algorithm: Algorithm, params: &Params) {
    let mut f = start(s.ranks);
    match algorithm {
        Algorithm::Pairwise => pairwise(s, &mut f),
        Algorithm::Bruck => bruck(s, &mut f),
        Algorithm::OverlaidSymmetric => match torus_grid(params, false) {
            Ok(g) => overlaid_symmetric(s, &g, params.tnis.max(1), &mut f),
            Err(why) => {
                s.fallback = Some(format!("{why}; ran pairwise"));
                pairwise(s, &mut f);
            }
        },
        _ => unreachable!("not an alltoall algorithm"),
    }
}

fn send_block(s: &Schedule, j: u32) -> Span {
    Span::new(j as u64 * s.count, s.count)
}

fn recv_block(s: &Schedule, j: u32) -> Span {
    Span::new((s.ranks + j) as u64 * s.count, s.count)
}

fn own_copy(s: &mut Schedule, f: &mut Frontier) {
    for r in 0..s.ranks {
        let c = s.copy(
            r,
            vec![send_block(s, r)],
            vec![recv_block(s, r)],
            &f[r as usize],
        );
        f[r as usize].push(c);
    }
}

/// Step k: send to r+k, receive from r−k, one exchange at a time.
fn pairwise(s: &mut Schedule, f: &mut Frontier) {
    let p = s.ranks;
    own_copy(s, f);
    for r in 0..p {
        let mut last = f[r as usize].clone();
        for k in 1..p {
            let (to, from) = ((r + k) % p, (r + p - k) % p);
            let snd = s.send(r, to, vec![send_block(s, to)], 0, &last);
            let rcv = s.recv(r, from, vec![recv_block(s, from)], Combine::Replace, &last);
            last = vec![snd, rcv];
        }
        f[r as usize] = last;
    }
}

/// Bruck's index algorithm: rotate so position k holds the block for
/// r+k; round i moves every position with bit i set to rank r+2^i; the
/// block from rank j then sits at position r−j.
fn bruck(s: &mut Schedule, f: &mut Frontier) {
    let p = s.ranks;
    let m = s.count;
    let scratch = 2 * p as u64 * m;
    s.buffer_elements = 3 * p as u64 * m;
    let pos = |k: u32| Span::new(scratch + k as u64 * m, m);
    for r in 0..p {
        let mut from = vec![Span::new(r as u64 * m, (p - r) as u64 * m)];
        let mut to = vec![Span::new(scratch, (p - r) as u64 * m)];
        if r > 0 {
            from.push(Span::new(0, r as u64 * m));
            to.push(Span::new(scratch + (p - r) as u64 * m, r as u64 * m));
        }
        let mut last = vec![s.copy(r, from, to, &f[r as usize])];
        let mut dist = 1;
        while dist < p {
            let moved: Vec<Span> = (0..p).filter(|k| k & dist != 0).map(pos).collect();
            let snd = s.send(r, (r + dist) % p, moved.clone(), 0, &last);
            let mut deps = last.clone();
            deps.push(snd);
            last = vec![s.recv(r, (r + p - dist) % p, moved, Combine::Replace, &deps)];
            dist *= 2;
        }
        let from: Vec<Span> = (0..p).map(|j| pos((r + p - j) % p)).collect();
        f[r as usize] = vec![s.copy(r, from, vec![Span::new(p as u64 * m, p as u64 * m)], &last)];
    }
}

/// Uniformly overlaid symmetrical pattern ([S:003], [S:001], [RECON]).
/// Every rank uses the same torus offsets δ ≠ 0, grouped into phases of
/// symmetric offsets (equal |δ| per axis up to sign — and up to axis order
/// when the axes are equally long), nearest phases first. A phase's
/// transfers run at once, spread round-robin over the TNIs, each paced to
/// 1/hops of the link rate so the flows that overlap on a link fill it
/// without depleting the buffers; a phase starts when the previous one has
/// been received.
fn overlaid_symmetric(s: &mut Schedule, g: &Grid, tnis: u8, f: &mut Frontier) {
    let p = s.ranks;
    own_copy(s, f);
    let cubic = g.lengths.iter().all(|&l| l == g.lengths[0]);
    let signed = |d: u32, l: u32| {
        if d <= l / 2 {
            d as i64
        } else {
            d as i64 - l as i64
        }
    };
    let mut phases: BTreeMap<(u32, [u32; 3]), Vec<[i64; 3]>> = BTreeMap::new();
    for dz in 0..g.lengths[2] {
        for dy in 0..g.lengths[1] {
            for dx in 0..g.lengths[0] {
                if (dx, dy, dz) == (0, 0, 0) {
                    continue;
                }
                let d = [
                    signed(dx, g.lengths[0]),
                    signed(dy, g.lengths[1]),
                    signed(dz, g.lengths[2]),
                ];
                let mut key = d.map(|v| v.unsigned_abs() as u32);
                if cubic {
                    key.sort_unstable();
                }
                let hops = key.iter().sum();
                phases.entry((hops, key)).or_default().push(d);
            }
        }
    }
    for r in 0..p {
        let mut last: Vec<StepId> = f[r as usize].clone();
        let mut i = 0u32;
        for ((hops, _), offsets) in &phases {
            let mut received = Vec::new();
            for d in offsets {
                let to = (0..3).fold(r, |x, a| g.shift(x, a, d[a]));
                let from = (0..3).fold(r, |x, a| g.shift(x, a, -d[a]));
                let pace = (*hops).clamp(1, u8::MAX as u32) as u8;
                s.send_paced(
                    r,
                    to,
                    vec![send_block(s, to)],
                    (i % tnis as u32) as u8,
                    pace,
                    &last,
                );
                received.push(s.recv(r, from, vec![recv_block(s, from)], Combine::Replace, &last));
                i += 1;
            }
            last = received;
        }
        f[r as usize] = last;
    }
}
