//! Broadcasts from `root` of the buffer's first `count` elements.

use super::{part, start, torus_grid, Algorithm, Frontier, Params};
use crate::schedule::{Combine, Rank, Schedule, Span, StepId};
use crate::tree::Tree;

pub(crate) fn build(s: &mut Schedule, algorithm: Algorithm, root: Rank, params: &Params) {
    let mut f = start(s.ranks);
    let all = Span::new(0, s.count);
    match algorithm {
        Algorithm::Binomial => binomial(s, root, &[all], &mut f),
        Algorithm::Chain => chain(s, root, all, params.segment_elements, &mut f),
        Algorithm::ScatterAllgather => scatter_allgather(s, root, all, &mut f),
        Algorithm::TrinaryTree => match torus_grid(params, true) {
            Ok(g) => {
                let trees = super::trinary_trees_for(params, &g, root);
                let mut load = TniLoad::new(s.ranks, params.tnis);
                for (i, t) in trees.iter().enumerate() {
                    let region = part(0, s.count, 3, i as u64);
                    tree_down(
                        s,
                        t,
                        region,
                        params.segment_elements,
                        i as u8,
                        &mut load,
                        &f,
                        None,
                    );
                }
            }
            Err(why) => {
                s.fallback = Some(format!("{why}; ran binomial"));
                binomial(s, root, &[all], &mut f);
            }
        },
        _ => unreachable!("not a bcast algorithm"),
    }
}

/// Binomial tree over relative ranks (r − root): rank v receives from
/// v − lowbit(v), then sends to v + 2^k for every 2^k < lowbit(v),
/// largest first.
pub(crate) fn binomial(s: &mut Schedule, root: Rank, spans: &[Span], f: &mut Frontier) {
    let p = s.ranks;
    let actual = |v: u32| (v + root) % p;
    let top = p.next_power_of_two();
    for v in 0..p {
        let r = actual(v);
        let mut cur = f[r as usize].clone();
        let low = if v == 0 { top } else { v & v.wrapping_neg() };
        if v != 0 {
            let rcv = s.recv(r, actual(v - low), spans.to_vec(), Combine::Replace, &cur);
            cur = vec![rcv];
        }
        let mut out = cur.clone();
        let mut mask = low >> 1;
        while mask > 0 {
            if v + mask < p {
                out.push(s.send(r, actual(v + mask), spans.to_vec(), 0, &cur));
            }
            mask >>= 1;
        }
        f[r as usize] = out;
    }
}

/// Segments of `region` passed down the chain root, root+1, …
fn chain(s: &mut Schedule, root: Rank, region: Span, segment: u64, f: &mut Frontier) {
    let p = s.ranks;
    let segs = region.len.div_ceil(segment.max(1)).max(1);
    for v in 0..p {
        let r = (v + root) % p;
        let (prev, next) = ((r + p - 1) % p, (r + 1) % p);
        let mut last_in: Vec<StepId> = f[r as usize].clone();
        let mut out = Vec::new();
        for k in 0..segs {
            let seg = part(region.offset, region.len, segs, k);
            if v != 0 {
                last_in = vec![s.recv(r, prev, vec![seg], Combine::Replace, &last_in)];
            }
            if v + 1 < p {
                out.push(s.send(r, next, vec![seg], 0, &last_in));
            }
        }
        out.extend(last_in);
        f[r as usize] = out;
    }
}

/// van de Geijn: binomial scatter of p blocks (block v to relative rank v),
/// then a ring allgather of the blocks.
fn scatter_allgather(s: &mut Schedule, root: Rank, region: Span, f: &mut Frontier) {
    let p = s.ranks;
    let (n, pp) = (region.len, p as u64);
    let blocks = |a: u32, b: u32| {
        let (x, y) = (
            part(region.offset, n, pp, a as u64),
            part(region.offset, n, pp, b as u64 - 1),
        );
        Span::new(x.offset, y.end() - x.offset)
    };
    let actual = |v: u32| (v + root) % p;
    let top = p.next_power_of_two();
    // Scatter.
    let mut held: Vec<Vec<StepId>> = vec![Vec::new(); p as usize];
    for v in 0..p {
        let r = actual(v);
        let mut cur = f[r as usize].clone();
        let low = if v == 0 { top } else { v & v.wrapping_neg() };
        if v != 0 {
            let rcv = s.recv(
                r,
                actual(v - low),
                vec![blocks(v, (v + low).min(p))],
                Combine::Replace,
                &cur,
            );
            cur = vec![rcv];
        }
        let mut mask = low >> 1;
        while mask > 0 {
            if v + mask < p {
                s.send(
                    r,
                    actual(v + mask),
                    vec![blocks(v + mask, (v + 2 * mask).min(p))],
                    0,
                    &cur,
                );
            }
            mask >>= 1;
        }
        held[r as usize] = cur;
    }
    // Ring allgather over relative ranks.
    for v in 0..p {
        let r = actual(v);
        let (next, prev) = (actual((v + 1) % p), actual((v + p - 1) % p));
        let mut last = held[r as usize].clone();
        let mut out = Vec::new();
        for t in 0..p - 1 {
            let send_block = (v + p - t) % p;
            let recv_block = (v + 2 * p - t - 1) % p;
            out.push(s.send(r, next, vec![blocks(send_block, send_block + 1)], 0, &last));
            last = vec![s.recv(
                r,
                prev,
                vec![blocks(recv_block, recv_block + 1)],
                Combine::Replace,
                &last,
            )];
        }
        out.extend(last);
        f[r as usize] = out;
    }
}

/// Transfers each rank has given to each of its TNIs, used to spread a
/// rank's broadcast copies over its TNIs: a TNI is one DMA engine, so
/// copies on the same TNI go one after another while copies on different
/// TNIs overlap.
pub(crate) struct TniLoad {
    tnis: u8,
    count: Vec<[u32; 8]>,
}

impl TniLoad {
    pub(crate) fn new(ranks: u32, tnis: u8) -> Self {
        Self {
            tnis: tnis.clamp(1, 8),
            count: vec![[0; 8]; ranks as usize],
        }
    }

    /// Records a transfer of `r` on `tni` (wrapped to the rank's TNIs).
    pub(crate) fn take(&mut self, r: Rank, tni: u8) -> u8 {
        let tni = tni % self.tnis;
        self.count[r as usize][tni as usize] += 1;
        tni
    }

    /// The least-loaded TNI of `r` — `preferred` among equals — recorded.
    pub(crate) fn least(&mut self, r: Rank, preferred: u8) -> u8 {
        let loads = &self.count[r as usize][..self.tnis as usize];
        let preferred = preferred % self.tnis;
        let best = (0..self.tnis)
            .min_by_key(|&k| (loads[k as usize], k != preferred, k))
            .expect("at least one TNI");
        self.take(r, best)
    }
}

/// Pipelined broadcast of `region` down `tree` in segments. A rank's
/// sends to each child go through the TNI `load` finds least
/// loaded (`tni` among equals), so a rank with three children does not
/// queue them all behind one TNI (the exact Fujitsu TNI assignment is not
/// public).
/// `after_up[r][k]` (Trinaryx3): the steps after which rank r's segment k
/// has gone up the tree (the root: has been fully reduced); the final
/// value may only arrive, or leave the root, after them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tree_down(
    s: &mut Schedule,
    tree: &Tree,
    region: Span,
    segment: u64,
    tni: u8,
    load: &mut TniLoad,
    f: &Frontier,
    after_up: Option<&[Vec<Vec<StepId>>]>,
) {
    if region.len == 0 {
        return;
    }
    let segs = region.len.div_ceil(segment.max(1));
    for r in tree.top_down() {
        // One TNI per child for every segment: a child's stream stays in order.
        let lanes: Vec<u8> = tree.children[r as usize]
            .iter()
            .map(|_| load.least(r, tni))
            .collect();
        let mut last: Vec<StepId> = f[r as usize].clone();
        for k in 0..segs {
            let seg = part(region.offset, region.len, segs, k);
            let mut deps = last.clone();
            if let Some(up) = after_up {
                deps.extend(up[r as usize][k as usize].iter().copied());
            }
            if let Some(parent) = tree.parent[r as usize] {
                last = vec![s.recv(r, parent, vec![seg], Combine::Replace, &deps)];
            } else {
                last = deps;
            }
            for (&c, &lane) in tree.children[r as usize].iter().zip(&lanes) {
                s.send(r, c, vec![seg], lane, &last);
            }
        }
    }
}
