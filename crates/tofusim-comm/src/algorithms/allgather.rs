//! Allgather: rank r contributes block r (`count` elements at r·count);
//! every rank ends with all p blocks.

use super::{part, pow2_floor, start, torus_grid, Algorithm, Frontier, Params};
use crate::schedule::{Combine, Rank, Schedule, Span, StepId};
use crate::tree::Grid;

pub(crate) fn build(s: &mut Schedule, algorithm: Algorithm, params: &Params) {
    let mut f = start(s.ranks);
    match algorithm {
        Algorithm::Ring => ring(s, &mut f),
        Algorithm::RecursiveDoubling => recursive_doubling(s, &mut f),
        Algorithm::Bruck => bruck(s, &mut f),
        Algorithm::QuadRings => match torus_grid(params, false) {
            Ok(g) => quad_rings(s, &g, params.tnis.max(1), &mut f),
            Err(why) => {
                s.fallback = Some(format!("{why}; ran ring"));
                ring(s, &mut f);
            }
        },
        _ => unreachable!("not an allgather algorithm"),
    }
}

fn block(s: &Schedule, b: u32) -> Span {
    Span::new(b as u64 * s.count, s.count)
}

fn ring(s: &mut Schedule, f: &mut Frontier) {
    let p = s.ranks;
    for r in 0..p {
        let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
        let mut last = f[r as usize].clone();
        let mut out = Vec::new();
        for t in 0..p - 1 {
            out.push(s.send(r, next, vec![block(s, (r + p - t) % p)], 0, &last));
            last = vec![s.recv(
                r,
                prev,
                vec![block(s, (r + 2 * p - t - 1) % p)],
                Combine::Replace,
                &last,
            )];
        }
        out.extend(last);
        f[r as usize] = out;
    }
}

/// Among q = 2^k ≤ p ranks, rank g owns blocks g and g+q (folded in from
/// rank g+q); at round k it exchanges everything of its aligned group of
/// 2^k with g xor 2^k. Finally ranks g < p−q pass everything to g+q.
fn recursive_doubling(s: &mut Schedule, f: &mut Frontier) {
    let p = s.ranks;
    let q = pow2_floor(p);
    for r in q..p {
        f[r as usize] = vec![s.send(r, r - q, vec![block(s, r)], 0, &f[r as usize])];
    }
    for r in 0..p - q {
        f[r as usize] = vec![s.recv(
            r,
            r + q,
            vec![block(s, r + q)],
            Combine::Replace,
            &f[r as usize],
        )];
    }
    let group = |s: &Schedule, base: u32, size: u32| -> Vec<Span> {
        let mut v = vec![Span::new(base as u64 * s.count, size as u64 * s.count)];
        let extra_end = (base + size + q).min(p);
        if base + q < extra_end {
            v.push(Span::new(
                (base + q) as u64 * s.count,
                (extra_end - base - q) as u64 * s.count,
            ));
        }
        v
    };
    let mut mask = 1;
    while mask < q {
        for r in 0..q {
            let partner = r ^ mask;
            let deps = f[r as usize].clone();
            let snd = s.send(r, partner, group(s, r & !(mask - 1), mask), 0, &deps);
            let rcv = s.recv(
                r,
                partner,
                group(s, partner & !(mask - 1), mask),
                Combine::Replace,
                &deps,
            );
            f[r as usize] = vec![snd, rcv];
        }
        mask <<= 1;
    }
    let everything = Span::new(0, p as u64 * s.count);
    for r in 0..p - q {
        let snd = s.send(r, r + q, vec![everything], 0, &f[r as usize]);
        f[r as usize].push(snd);
    }
    for r in q..p {
        f[r as usize] = vec![s.recv(r, r - q, vec![everything], Combine::Replace, &f[r as usize])];
    }
}

/// Bruck: in a scratch area, position k holds block r+k. Round i sends
/// positions 0..min(2^i, p−2^i) to r−2^i and receives them at 2^i.. from
/// r+2^i; a final rotation puts the blocks in place.
fn bruck(s: &mut Schedule, f: &mut Frontier) {
    let p = s.ranks;
    let m = s.count;
    let scratch = p as u64 * m;
    s.buffer_elements = 2 * p as u64 * m;
    let pos = |k: u32, n: u32| Span::new(scratch + k as u64 * m, n as u64 * m);
    for r in 0..p {
        let mut last = vec![s.copy(r, vec![block(s, r)], vec![pos(0, 1)], &f[r as usize])];
        let mut out = Vec::new();
        let mut dist = 1;
        while dist < p {
            let cnt = dist.min(p - dist);
            out.push(s.send(r, (r + p - dist) % p, vec![pos(0, cnt)], 0, &last));
            last = vec![s.recv(
                r,
                (r + dist) % p,
                vec![pos(dist, cnt)],
                Combine::Replace,
                &last,
            )];
            dist *= 2;
        }
        // Position k → block (r + k) mod p: two contiguous runs.
        let mut from = vec![pos(0, p - r)];
        let mut to = vec![Span::new(r as u64 * m, (p - r) as u64 * m)];
        if r > 0 {
            from.push(pos(p - r, r));
            to.push(Span::new(0, r as u64 * m));
        }
        out.push(s.copy(r, from, to, &last));
        f[r as usize] = out;
    }
}

/// Three-phase quad rings ([S:003], [S:001], [RECON]): each block in four
/// parts, each part gathered by rings along the three axes in its own
/// order and direction (a: X+ Y+ Z+, b: X− Y− Z−, c: Y+ Z+ X+, d: Y− Z− X−),
/// part i on TNI i.
fn quad_rings(s: &mut Schedule, g: &Grid, tnis: u8, f: &mut Frontier) {
    const ORDERS: [([usize; 3], i64); 4] = [
        ([0, 1, 2], 1),
        ([0, 1, 2], -1),
        ([1, 2, 0], 1),
        ([1, 2, 0], -1),
    ];
    let p = s.ranks;
    let m = s.count;
    let mut finals: Vec<Vec<StepId>> = vec![Vec::new(); p as usize];
    for (pi, (order, dir)) in ORDERS.iter().enumerate() {
        let piece = part(0, m, 4, pi as u64);
        if piece.len == 0 {
            continue;
        }
        let tni = pi as u8 % tnis;
        // Spans of `piece` in the blocks of the ranks that share rank c's
        // coordinates except on the done axes (free) and `axis` (= at).
        let collection = |c: [u32; 3], done: &[usize], axis: usize, at: u32| -> Vec<Span> {
            let mut ranks = vec![{
                let mut x = c;
                x[axis] = at;
                x
            }];
            for &a in done {
                ranks = ranks
                    .iter()
                    .flat_map(|x| {
                        (0..g.lengths[a]).map(move |v| {
                            let mut y = *x;
                            y[a] = v;
                            y
                        })
                    })
                    .collect();
            }
            let mut ids: Vec<Rank> = ranks.into_iter().map(|x| g.rank(x)).collect();
            ids.sort_unstable();
            ids.into_iter()
                .map(|j| Span::new(j as u64 * m + piece.offset, piece.len))
                .collect()
        };
        for r in 0..p {
            let c = g.coords(r);
            let mut last = f[r as usize].clone();
            for (k, &axis) in order.iter().enumerate() {
                let l = g.lengths[axis];
                let done = &order[..k];
                let (next, prev) = (g.shift(r, axis, *dir), g.shift(r, axis, -*dir));
                let ahead =
                    |t: u32| ((c[axis] as i64 - dir * t as i64).rem_euclid(l as i64)) as u32;
                for t in 0..l.saturating_sub(1) {
                    s.send(r, next, collection(c, done, axis, ahead(t)), tni, &last);
                    last = vec![s.recv(
                        r,
                        prev,
                        collection(c, done, axis, ahead(t + 1)),
                        Combine::Replace,
                        &last,
                    )];
                }
            }
            finals[r as usize].extend(last);
        }
    }
    for r in 0..p as usize {
        f[r].append(&mut finals[r]);
    }
}
