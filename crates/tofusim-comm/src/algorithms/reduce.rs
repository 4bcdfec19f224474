//! Reduce (to `root`) and allreduce of the buffer's first `count`
//! elements, summed element-wise.

use super::{bcast, doubling, part, pow2_floor, start, torus_grid, Algorithm, Frontier, Params};
use crate::schedule::{Combine, Rank, Schedule, Span, StepId};
use crate::tree::Tree;

pub(crate) fn build_reduce(s: &mut Schedule, algorithm: Algorithm, root: Rank, params: &Params) {
    let p = s.ranks;
    let mut f = start(p);
    let all = Span::new(0, s.count);
    match algorithm {
        Algorithm::Binomial => binomial(s, root, &[all], &mut f),
        Algorithm::Ring => {
            ring_reduce_scatter(s, all, &mut f);
            // Rank r holds the reduced block r+1; gather the blocks at the root.
            for r in (0..p).filter(|&r| r != root) {
                let b = (r + 1) % p;
                s.send(
                    r,
                    root,
                    vec![part(0, s.count, p as u64, b as u64)],
                    0,
                    &f[r as usize],
                );
                let rcv = s.recv(
                    root,
                    r,
                    vec![part(0, s.count, p as u64, b as u64)],
                    Combine::Replace,
                    &f[root as usize],
                );
                f[root as usize].push(rcv);
            }
        }
        Algorithm::RecursiveDoubling => {
            doubling::fold_in(s, &mut f, &[all], Combine::Sum);
            doubling::exchange_rounds(s, &mut f, &[all], Combine::Sum);
            let q = pow2_floor(p);
            if root >= q {
                s.send(root - q, root, vec![all], 0, &f[(root - q) as usize]);
                s.recv(
                    root,
                    root - q,
                    vec![all],
                    Combine::Replace,
                    &f[root as usize],
                );
            }
        }
        Algorithm::Rabenseifner => {
            doubling::fold_in(s, &mut f, &[all], Combine::Sum);
            halving_reduce_scatter(s, all, &mut f);
            binomial_gather(s, all, &mut f);
            if root != 0 {
                s.send(0, root, vec![all], 0, &f[0]);
                s.recv(root, 0, vec![all], Combine::Replace, &f[root as usize]);
            }
        }
        Algorithm::TrinaryTree => match torus_grid(params, true) {
            Ok(g) => {
                for (i, t) in super::trinary_trees_for(params, &g, root).iter().enumerate() {
                    let region = part(0, s.count, 3, i as u64);
                    tree_up(
                        s,
                        t,
                        region,
                        params.segment_elements,
                        i as u8 % params.tnis.max(1),
                        &f,
                    );
                }
            }
            Err(why) => {
                s.fallback = Some(format!("{why}; ran binomial"));
                binomial(s, root, &[all], &mut f);
            }
        },
        _ => unreachable!("not a reduce algorithm"),
    }
}

pub(crate) fn build_allreduce(s: &mut Schedule, algorithm: Algorithm, params: &Params) {
    let p = s.ranks;
    let mut f = start(p);
    let all = Span::new(0, s.count);
    match algorithm {
        Algorithm::Binomial => {
            binomial(s, 0, &[all], &mut f);
            bcast::binomial(s, 0, &[all], &mut f);
        }
        Algorithm::Ring => ring(s, all, &mut f),
        Algorithm::RecursiveDoubling => {
            doubling::fold_in(s, &mut f, &[all], Combine::Sum);
            doubling::exchange_rounds(s, &mut f, &[all], Combine::Sum);
            doubling::fold_out(s, &mut f, &[all]);
        }
        Algorithm::Rabenseifner => {
            doubling::fold_in(s, &mut f, &[all], Combine::Sum);
            halving_reduce_scatter(s, all, &mut f);
            doubling_allgather(s, all, &mut f);
            doubling::fold_out(s, &mut f, &[all]);
        }
        Algorithm::Trinaryx3 => match torus_grid(params, true) {
            Ok(g) => {
                // Reduce up each tree on its own TNI, then spread the
                // broadcast copies over the TNIs left least loaded.
                let trees = super::trinary_trees_for(params, &g, 0);
                let mut load = bcast::TniLoad::new(s.ranks, params.tnis);
                let ups: Vec<_> = trees
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let region = part(0, s.count, 3, i as u64);
                        for r in (0..s.ranks).filter(|&r| t.parent[r as usize].is_some()) {
                            load.take(r, i as u8);
                        }
                        let tni = i as u8 % params.tnis.max(1);
                        tree_up(s, t, region, params.segment_elements, tni, &f)
                    })
                    .collect();
                for (i, (t, up)) in trees.iter().zip(&ups).enumerate() {
                    bcast::tree_down(
                        s,
                        t,
                        part(0, s.count, 3, i as u64),
                        params.segment_elements,
                        i as u8,
                        &mut load,
                        &f,
                        Some(up),
                    );
                }
            }
            Err(why) => {
                s.fallback = Some(format!("{why}; ran ring"));
                ring(s, all, &mut f);
            }
        },
        _ => unreachable!("not an allreduce algorithm"),
    }
}

/// Binomial reduction to `root` over relative ranks: at round k, rank v
/// with bit k set sends to v − 2^k and stops; the others add v + 2^k's.
pub(crate) fn binomial(s: &mut Schedule, root: Rank, spans: &[Span], f: &mut Frontier) {
    let p = s.ranks;
    let actual = |v: u32| (v + root) % p;
    for v in 0..p {
        let r = actual(v);
        let mut cur = f[r as usize].clone();
        let mut mask = 1;
        while mask < p {
            if v & mask != 0 {
                cur = vec![s.send(r, actual(v - mask), spans.to_vec(), 0, &cur)];
                break;
            } else if v + mask < p {
                cur = vec![s.recv(r, actual(v + mask), spans.to_vec(), Combine::Sum, &cur)];
            }
            mask <<= 1;
        }
        f[r as usize] = cur;
    }
}

fn block(region: Span, p: u32, b: u32) -> Span {
    part(region.offset, region.len, p as u64, b as u64)
}

/// Ring reduce-scatter: after p−1 steps rank r holds the sum of block r+1.
fn ring_reduce_scatter(s: &mut Schedule, region: Span, f: &mut Frontier) {
    let p = s.ranks;
    for r in 0..p {
        let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
        let mut last = f[r as usize].clone();
        for t in 0..p - 1 {
            s.send(r, next, vec![block(region, p, (r + p - t) % p)], 0, &last);
            last = vec![s.recv(
                r,
                prev,
                vec![block(region, p, (r + 2 * p - t - 1) % p)],
                Combine::Sum,
                &last,
            )];
        }
        f[r as usize] = last;
    }
}

/// Ring allreduce: reduce-scatter, then a ring allgather of the blocks.
fn ring(s: &mut Schedule, region: Span, f: &mut Frontier) {
    let p = s.ranks;
    ring_reduce_scatter(s, region, f);
    for r in 0..p {
        let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
        let mut last = f[r as usize].clone();
        let mut out = Vec::new();
        for t in 0..p - 1 {
            out.push(s.send(
                r,
                next,
                vec![block(region, p, (r + 1 + p - t) % p)],
                0,
                &last,
            ));
            last = vec![s.recv(
                r,
                prev,
                vec![block(region, p, (r + p - t) % p)],
                Combine::Replace,
                &last,
            )];
        }
        out.extend(last);
        f[r as usize] = out;
    }
}

/// Contiguous span of blocks `a..b` of `q` blocks of `region`.
fn blocks(region: Span, q: u32, a: u32, b: u32) -> Span {
    let (x, y) = (block(region, q, a), block(region, q, b - 1));
    Span::new(x.offset, y.end() - x.offset)
}

/// Recursive halving among ranks 0..q (q = 2^k ≤ p): rank r ends with the
/// sum of block r of q.
fn halving_reduce_scatter(s: &mut Schedule, region: Span, f: &mut Frontier) {
    let q = pow2_floor(s.ranks);
    for r in 0..q {
        let (mut lo, mut hi) = (0, q);
        let mut mask = q / 2;
        while mask >= 1 {
            let mid = (lo + hi) / 2;
            let (keep, give) = if r & mask == 0 {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            let deps = f[r as usize].clone();
            let snd = s.send(
                r,
                r ^ mask,
                vec![blocks(region, q, give.0, give.1)],
                0,
                &deps,
            );
            let rcv = s.recv(
                r,
                r ^ mask,
                vec![blocks(region, q, keep.0, keep.1)],
                Combine::Sum,
                &deps,
            );
            f[r as usize] = vec![snd, rcv];
            (lo, hi) = keep;
            mask /= 2;
        }
    }
}

/// Recursive doubling allgather of the q blocks among ranks 0..q.
fn doubling_allgather(s: &mut Schedule, region: Span, f: &mut Frontier) {
    let q = pow2_floor(s.ranks);
    for r in 0..q {
        let mut mask = 1;
        while mask < q {
            let partner = r ^ mask;
            let mine = r & !(mask - 1);
            let theirs = partner & !(mask - 1);
            let deps = f[r as usize].clone();
            let snd = s.send(
                r,
                partner,
                vec![blocks(region, q, mine, mine + mask)],
                0,
                &deps,
            );
            let rcv = s.recv(
                r,
                partner,
                vec![blocks(region, q, theirs, theirs + mask)],
                Combine::Replace,
                &deps,
            );
            f[r as usize] = vec![snd, rcv];
            mask <<= 1;
        }
    }
}

/// Binomial gather of the q blocks to rank 0 (block r from rank r).
fn binomial_gather(s: &mut Schedule, region: Span, f: &mut Frontier) {
    let q = pow2_floor(s.ranks);
    for r in 0..q {
        let mut cur = f[r as usize].clone();
        let mut mask = 1;
        while mask < q {
            if r & mask != 0 {
                cur = vec![s.send(r, r - mask, vec![blocks(region, q, r, r + mask)], 0, &cur)];
                break;
            }
            cur = vec![s.recv(
                r,
                r + mask,
                vec![blocks(region, q, r + mask, r + 2 * mask)],
                Combine::Replace,
                &cur,
            )];
            mask <<= 1;
        }
        f[r as usize] = cur;
    }
}

/// Pipelined reduction of `region` up `tree` in segments through `tni`.
/// Returns, per rank and segment, the steps after which that segment has
/// left the rank (the root: has been summed).
pub(crate) fn tree_up(
    s: &mut Schedule,
    tree: &Tree,
    region: Span,
    segment: u64,
    tni: u8,
    f: &Frontier,
) -> Vec<Vec<Vec<StepId>>> {
    let n = tree.parent.len();
    if region.len == 0 {
        return vec![Vec::new(); n];
    }
    let segs = region.len.div_ceil(segment.max(1));
    let mut out = vec![Vec::new(); n];
    for r in 0..n as Rank {
        for k in 0..segs {
            let seg = part(region.offset, region.len, segs, k);
            let mut done: Vec<StepId> = f[r as usize].clone();
            for &c in &tree.children[r as usize] {
                done.push(s.recv(r, c, vec![seg], Combine::Sum, &f[r as usize]));
            }
            if let Some(parent) = tree.parent[r as usize] {
                done = vec![s.send(r, parent, vec![seg], tni, &done)];
            }
            out[r as usize].push(done);
        }
    }
    out
}
