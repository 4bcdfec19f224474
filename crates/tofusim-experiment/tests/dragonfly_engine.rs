//! The packet engine on dragonflies (issue 6): every routing mode at
//! saturation without deadlock, and adversarial traffic against the
//! global-link bound.

use tofusim_packet::{Engine, Escape, RouterParams, RoutingMode, RunParams, RunResult};
use tofusim_routing::{DragonflyMode, DragonflyRouting, Routing};
use tofusim_topology::dragonfly::{Arrangement, Dragonfly, GroupWiring};
use tofusim_topology::{Axis, Torus};
use tofusim_workload::{Kind, OpenPattern, Workload};

fn kim_dally(groups: u32, a: u32, h: u32, per_pair: u32) -> Dragonfly {
    Dragonfly {
        groups,
        nodes_per_router: 1,
        wiring: GroupWiring::AllToAll { routers: a },
        global_ports_per_router: h,
        links_per_group_pair: per_pair,
        arrangement: Arrangement::RoundRobin,
    }
}

fn params() -> RouterParams {
    RouterParams {
        dynamic_vcs: 0,
        escape: Escape::HopClass,
        priority_vc: false,
        ..RouterParams::bgl()
    }
}

const PACKET: u32 = 256;

fn run(d: &Dragonfly, mode: DragonflyMode, pattern: OpenPattern, load: f64, cycles: u64, seed: u64) -> RunResult {
    let routing = Routing::Dragonfly(DragonflyRouting::new(d, mode));
    let nodes = d.router_count() as u32;
    // The workload's node space: the routers, one node each.
    let space = Torus::new(vec![Axis::ring("n", nodes)]);
    let w = Workload::new(Kind::Open { pattern, load }, PACKET, 16, &space, seed).unwrap();
    let run = RunParams {
        cycles: Some(cycles),
        warmup: cycles / 5,
        seed,
        ..RunParams::default()
    };
    Engine::new(routing, params(), RoutingMode::Deterministic, run, w, 1.0, 1.0).run(&mut |_| {})
}

#[test]
fn every_mode_runs_at_saturation_without_deadlock() {
    // 2 groups of 8 routers, 4 global links between them.
    let d = kim_dally(2, 8, 1, 4);
    for mode in [
        DragonflyMode::Minimal,
        DragonflyMode::Valiant,
        DragonflyMode::UgalLocal,
        DragonflyMode::UgalGlobal,
        DragonflyMode::AdaptivePreferMinimal,
    ] {
        for pattern in [OpenPattern::Uniform, OpenPattern::GroupShift { group_nodes: 8 }] {
            let r = run(&d, mode, pattern.clone(), 1.0, 1_000_000, 3);
            assert!(r.deadlock.is_none(), "{mode:?} {pattern:?}: {:?}", r.deadlock);
            assert!(r.invariant_error.is_none(), "{mode:?}: {:?}", r.invariant_error);
            assert!(r.accepted_load > 0.05, "{mode:?} {pattern:?}: {}", r.accepted_load);
        }
    }
}

#[test]
fn adversarial_traffic_minimal_meets_the_global_link_bound_and_valiant_exceeds_it() {
    // 5 groups of 4 routers, one global port each: one link between each
    // pair of groups, so group i → i + 1 has one global link.
    let d = kim_dally(5, 4, 1, 1);
    let links = DragonflyRouting::new(&d, DragonflyMode::Minimal).links_between(0, 1) as f64;
    let overhead = RouterParams::bgl().overhead_bytes as f64;
    // Per node, in packet bytes per cycle (the accepted-load unit here).
    let bound = links * PACKET as f64 / (PACKET as f64 + overhead) / 4.0;
    let shift = OpenPattern::GroupShift { group_nodes: 4 };
    let mut got = Vec::new();
    for mode in [DragonflyMode::Minimal, DragonflyMode::Valiant, DragonflyMode::UgalLocal, DragonflyMode::UgalGlobal] {
        let r = run(&d, mode, shift.clone(), 1.0, 200_000, 5);
        assert!(r.deadlock.is_none());
        got.push((mode, r.accepted_load));
    }
    println!("bound {bound:.4}: {got:?}");
    let minimal = got[0].1;
    assert!((minimal / bound - 1.0).abs() < 0.05, "minimal {minimal} vs bound {bound}");
    for &(mode, x) in &got[1..] {
        assert!(x > 1.3 * bound, "{mode:?}: {x} vs bound {bound}");
    }
}
