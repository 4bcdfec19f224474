//! Speed of the mapping tools: the full-K virtual torus, and RMATT's
//! annealing moves on NAS CG class B (1,024 ranks on 32×32).

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tofusim_mapping::cg::CgLayout;
use tofusim_mapping::embed::{embed, Region};
use tofusim_mapping::rmatt::{anneal, AnnealParams, Objective};
use tofusim_mapping::TorusShape;
use tofusim_topology::{tofu, Axis};

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("mapping");
    g.sample_size(10);
    let k = tofu::tofu_torus([Axis::ring("x", 24), Axis::path("y", 18), Axis::ring("z", 16)]);
    g.bench_function("embed 54x48x32 on the full K computer", |b| {
        b.iter(|| black_box(embed(&k, Region::whole(&k), black_box(&[54, 48, 32])).unwrap().node_of_rank.len()))
    });
    let t = TorusShape::parse("32x32").unwrap();
    let comm = CgLayout::new(1024, 'B').unwrap().comm_list();
    let start: Vec<u32> = (0..1024).collect();
    for (objective, iterations) in [(Objective::HopBytes, 1_000_000u64), (Objective::MaxLinkLoad, 100_000)] {
        let p = AnnealParams { iterations, seed: 1, final_fraction: 1e-4 };
        g.bench_function(format!("RMATT {} on CG B 32x32, {iterations} proposals", objective.name()), |b| {
            b.iter(|| black_box(anneal(&t, &comm, objective, &start, p).unwrap().cost))
        });
    }
    g.finish();
}

criterion_group!(mapping_benches, benches);
criterion_main!(mapping_benches);
