//! Speed of the max-min solvers: all-to-all on a 8×8×8 torus with
//! dimension-order routes (512 × 511 flows), and a 16×16 2D torus; the
//! incremental solver from nothing and after the fastest flows finish.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tofusim_flow::{reference, Flow, FlowTable, IncrementalMaxMin, Interrupt, MaxMin};

/// All-to-all flows on an `l`^`dims` torus, dimension-order routes,
/// shortest direction (+ on ties); links: node × 2·dims.
fn all_to_all(l: u32, dims: u32) -> (Vec<f64>, Vec<Flow>) {
    let n = l.pow(dims);
    let coord = |v: u32, k: u32| (v / l.pow(k)) % l;
    let mut flows = Vec::new();
    for s in 0..n {
        for d in (0..n).filter(|&d| d != s) {
            let mut links = Vec::new();
            let mut cur = s;
            for k in 0..dims {
                let (a, b) = (coord(cur, k), coord(d, k));
                let fwd = (b + l - a) % l;
                let (plus, steps) = if fwd <= l - fwd { (true, fwd) } else { (false, l - fwd) };
                for _ in 0..steps {
                    links.push(cur * 2 * dims + 2 * k + u32::from(!plus));
                    let c = coord(cur, k);
                    let nc = if plus { (c + 1) % l } else { (c + l - 1) % l };
                    cur = cur - c * l.pow(k) + nc * l.pow(k);
                }
            }
            flows.push(Flow { links, cap: f64::INFINITY });
        }
    }
    (vec![1.0; (n * 2 * dims) as usize], flows)
}

fn benches(c: &mut Criterion) {
    let (cap, flows) = all_to_all(8, 3);
    let mut g = c.benchmark_group("max-min");
    g.sample_size(10);
    let mut solver = MaxMin::new();
    let mut rates = Vec::new();
    g.bench_function("fast, all-to-all 8x8x8 (261,632 flows)", |b| {
        b.iter(|| {
            solver.solve(black_box(&cap), black_box(&flows), &mut rates);
            black_box(rates[0])
        })
    });
    // The incremental solver from nothing (every flow new), and after the
    // fastest flows finish (the ones an all-to-all loses first): it
    // refills only the flows at or above their rate.
    let table = FlowTable::from(&flows[..]);
    let never = Interrupt::never();
    let fresh = || {
        let mut inc = IncrementalMaxMin::new(cap.clone(), table.clone());
        (0..flows.len()).for_each(|q| inc.add(q));
        inc
    };
    g.bench_function("incremental, all-to-all 8x8x8, every flow new", |b| {
        b.iter_batched(fresh, |mut inc| black_box(inc.solve(&never)), criterion::BatchSize::LargeInput)
    });
    let mut solved = fresh();
    solved.solve(&never);
    let top = (0..flows.len()).map(|q| solved.rate(q)).fold(0.0, f64::max);
    let fastest: Vec<usize> = (0..flows.len()).filter(|&q| solved.rate(q) >= top * (1.0 - 1e-9)).collect();
    fastest.iter().for_each(|&q| solved.remove(q));
    solved.solve(&never);
    let name = format!("incremental, all-to-all 8x8x8, the {} fastest finish ({} refilled)", fastest.len(), solved.last_solved().len());
    g.bench_function(name, |b| {
        b.iter_batched(
            || {
                let mut inc = fresh();
                inc.solve(&never);
                fastest.iter().for_each(|&q| inc.remove(q));
                inc
            },
            |mut inc| {
                inc.solve(&never);
                black_box(inc.last_solved().len())
            },
            criterion::BatchSize::LargeInput,
        )
    });
    let (cap2, flows2) = all_to_all(16, 2);
    g.bench_function("fast, all-to-all 16x16 (65,280 flows)", |b| {
        b.iter(|| {
            solver.solve(black_box(&cap2), black_box(&flows2), &mut rates);
            black_box(rates[0])
        })
    });
    let (cap3, flows3) = all_to_all(4, 3);
    g.bench_function("reference, all-to-all 4x4x4 (4,032 flows)", |b| b.iter(|| black_box(reference::max_min(black_box(&cap3), black_box(&flows3)))));
    g.bench_function("fast, all-to-all 4x4x4 (4,032 flows)", |b| {
        b.iter(|| {
            solver.solve(black_box(&cap3), black_box(&flows3), &mut rates);
            black_box(rates[0])
        })
    });
    // Every flow with its own cap: one freezing level per flow, the
    // reference's worst case (a round per level).
    let capped: Vec<Flow> = flows3
        .iter()
        .enumerate()
        .map(|(i, f)| Flow { links: f.links.clone(), cap: 0.001 + (i * 7919 % 1000) as f64 * 5e-5 })
        .collect();
    g.bench_function("reference, 4x4x4 all-to-all, every flow capped differently", |b| {
        b.iter(|| black_box(reference::max_min(black_box(&cap3), black_box(&capped))))
    });
    g.bench_function("fast, 4x4x4 all-to-all, every flow capped differently", |b| {
        b.iter(|| {
            solver.solve(black_box(&cap3), black_box(&capped), &mut rates);
            black_box(rates[0])
        })
    });
    g.finish();
}

criterion_group!(solver_benches, benches);
criterion_main!(solver_benches);
