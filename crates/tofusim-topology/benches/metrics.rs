//! Speed of the analytic metrics on full-machine presets' shapes.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tofusim_topology::*;

fn tofu_k() -> Torus {
    tofu::tofu_torus([
        Axis::ring("x", 24),
        Axis::path("y", 18),
        Axis::ring("z", 16),
    ])
}

fn network(t: Topology) -> Network {
    let c = t.class_names().len();
    Network {
        topology: t,
        link_Bps: vec![5e9; c],
        nic: NodeInterface {
            interfaces: 4,
            interface_Bps: 5e9,
            host_limit_Bps: None,
        },
        faults: Faults::default(),
    }
}

fn benches(c: &mut Criterion) {
    let k = network(Topology::Tofu(tofu_k()));
    c.bench_function("metrics/k-computer-closed-form", |b| {
        b.iter(|| black_box(k.metrics()))
    });
    c.bench_function("bisection/k-computer-staircase", |b| {
        b.iter(|| black_box(bisection::min_bisection(tofu_k().axes())))
    });
    let aries = network(Topology::Dragonfly(Dragonfly {
        groups: 20,
        nodes_per_router: 4,
        wiring: GroupWiring::Aries {
            chassis: 6,
            routers_per_chassis: 16,
            rank2_links: 3,
        },
        global_ports_per_router: 10,
        links_per_group_pair: 40,
        arrangement: Arrangement::RoundRobin,
    }));
    c.bench_function("metrics/aries-20-groups-bfs", |b| {
        b.iter(|| black_box(aries.metrics()))
    });
    let mut faulty = network(Topology::Tofu(tofu::tofu_torus([
        Axis::ring("x", 8),
        Axis::ring("y", 8),
        Axis::ring("z", 8),
    ])));
    faulty.faults.nodes.push(17);
    c.bench_function("metrics/tofu-8x8x8-faulty-bfs", |b| {
        b.iter(|| black_box(faulty.metrics()))
    });
}

criterion_group! {
    name = metrics;
    config = Criterion::default().sample_size(10);
    targets = benches
}
criterion_main!(metrics);
