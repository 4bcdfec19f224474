//! Speed of summing route loads ([`RouteLoads`]) against visiting every
//! route: an open-loop uniform pattern on an adaptive 8×8×8 torus, each
//! node to 200 random others (about what 256 draws give).

use criterion::{criterion_group, criterion_main, Criterion};
use rand::{RngExt, SeedableRng};
use std::hint::black_box;
use tofusim_flow::{Capacities, FlowNet, LoadSum, RouteLoads, RouteScratch};
use tofusim_routing::{EscapeOrder, Rng, Routing, TorusRouting};
use tofusim_topology::Torus;

fn adaptive_torus(l: u32) -> FlowNet {
    let t = Torus::with_lengths(&[l, l, l], &[true, true, true]);
    let order = |o: &[usize]| Routing::Torus(TorusRouting::new(&t, o, EscapeOrder::Dimension));
    let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]].iter().map(|o| order(o)).collect();
    let routing = order(&[0, 1, 2]);
    let ports = routing.ports();
    FlowNet::new(routing, orders, 1, &Capacities { port: vec![1.0; ports], node: 6.0, lane: 6.0, lanes: 1 })
}

fn benches(c: &mut Criterion) {
    let net = adaptive_torus(8);
    let n = net.nodes as u32;
    let mut draw = Rng::seed_from_u64(1);
    let pairs: Vec<(u32, u32)> = (0..n).flat_map(|a| (0..200).map(|_| (a, (a + 1 + draw.random_range(0..n - 1)) % n)).collect::<Vec<_>>()).collect();
    let mut g = c.benchmark_group("route loads");
    g.sample_size(20);
    let loads = RouteLoads::new(&net);
    g.bench_function("by leg, uniform 8x8x8 adaptive (102,400 pairs)", |b| {
        b.iter(|| {
            let mut sum = LoadSum::new(&net);
            let mut rng = Rng::seed_from_u64(2);
            for &(a, d) in &pairs {
                loads.add(&mut sum, a, d, 0, 1.0, &mut rng);
            }
            black_box(sum.load[0])
        })
    });
    g.bench_function("route by route, same", |b| {
        b.iter(|| {
            let mut load = vec![0.0; net.capacity.len()];
            let mut rng = Rng::seed_from_u64(2);
            let mut scratch = RouteScratch::default();
            for &(a, d) in &pairs {
                net.visit_routes(a, d, 0, &mut rng, &mut scratch, |links, _, share| {
                    for &l in links {
                        load[l as usize] += share;
                    }
                });
            }
            black_box(load[0])
        })
    });
    g.finish();
}

criterion_group!(load_benches, benches);
criterion_main!(load_benches);
