//! The packet engine on dragonflies (issue 6): every routing mode at
//! saturation without deadlock, and adversarial traffic against the
//! global-link bound.

use tofusim_packet::{Engine, Escape, RouterParams, RoutingMode, RunParams, RunResult};
use tofusim_routing::{DragonflyMode, DragonflyRouting, Routing};
use tofusim_topology::dragonfly::{Arrangement, Dragonfly, GroupWiring};

use tofusim_workload::{Kind, NodeSpace, OpenPattern, PacketFormat, Workload};

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

const ALL_MODES: [DragonflyMode; 5] = [
    DragonflyMode::Minimal,
    DragonflyMode::Valiant,
    DragonflyMode::UgalLocal,
    DragonflyMode::UgalGlobal,
    DragonflyMode::AdaptivePreferMinimal,
];

fn run(d: &Dragonfly, mode: DragonflyMode, pattern: OpenPattern, load: f64, cycles: u64, seed: u64) -> RunResult {
    let routing = Routing::Dragonfly(DragonflyRouting::new(d, mode));
    let nodes = d.router_count() as u32;
    // The workload's node space: the routers, one node each, by group.
    let space = NodeSpace::Groups { nodes, group_nodes: d.routers_per_group() * d.nodes_per_router };
    let w = Workload::new(Kind::Open { pattern, load }, PacketFormat::new(PACKET, 16), &space, seed).unwrap();
    let run = RunParams {
        cycles: Some(cycles),
        warmup: cycles / 5,
        seed,
        ..RunParams::default()
    };
    Engine::new(routing, params(), RoutingMode::Deterministic, run, w, 1.0, 1.0).run(&mut |_| std::ops::ControlFlow::Continue(()))
}

#[test]
fn every_mode_runs_at_saturation_without_deadlock() {
    // 2 groups of 8 routers, 4 global links between them.
    let d = kim_dally(2, 8, 1, 4);
    for mode in ALL_MODES {
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

/// A small Aries: 2 groups of 2 chassis × 4 routers, 4 nodes per router,
/// 3 rank-2 links per connection, 2 rank-3 ports per router.
fn small_aries() -> Dragonfly {
    Dragonfly {
        groups: 2,
        nodes_per_router: 4,
        wiring: GroupWiring::Aries { chassis: 2, routers_per_chassis: 4, rank2_links: 3 },
        global_ports_per_router: 2,
        links_per_group_pair: 16,
        arrangement: Arrangement::RoundRobin,
    }
}

fn aries_params(d: &Dragonfly, rates: &[f64]) -> RouterParams {
    let space = tofusim_experiment::node_space::dragonfly_space("<test>", "network", d, rates).unwrap();
    RouterParams {
        nodes_per_router: d.nodes_per_router,
        port_cycles_per_byte: space.port_cycles_per_byte,
        injection_fifos: 2,
        priority_fifos: 0,
        host_bytes_per_cycle: 2.0,
        ..params()
    }
}

#[test]
fn several_nodes_per_router_and_slower_global_links_run_every_mode_without_deadlock() {
    let d = small_aries();
    let rates = [5.25e9, 5.25e9, 4.6875e9];
    let p = aries_params(&d, &rates);
    // Global ports come last and are the slow class.
    assert!(p.port_cycles_per_byte.iter().any(|&s| s > 1.1));
    let nodes = d.node_count() as u32;
    let space = NodeSpace::Groups { nodes, group_nodes: d.routers_per_group() * d.nodes_per_router };
    // Every mode at saturation for 10^6 cycles, audited every 10^5.
    for mode in ALL_MODES {
        let w = Workload::new(Kind::Open { pattern: OpenPattern::Uniform, load: 1.0 }, PacketFormat::new(PACKET, 16), &space, 7).unwrap();
        let run = RunParams { cycles: Some(1_000_000), warmup: 100_000, seed: 7, audit_cycles: 100_000, ..RunParams::default() };
        let routing = Routing::Dragonfly(DragonflyRouting::new(&d, mode));
        let r = Engine::new(routing, p.clone(), RoutingMode::Deterministic, run, w, 1.0, 1.0).run(&mut |_| std::ops::ControlFlow::Continue(()));
        assert!(r.deadlock.is_none(), "{mode:?}: {:?}", r.deadlock);
        assert!(r.invariant_error.is_none(), "{mode:?}: {:?}", r.invariant_error);
        // Per node, in link units: 4 nodes share a router, and a quarter of
        // the traffic stays in the group of 8 routers.
        assert!(r.accepted_load > 0.1, "{mode:?}: {}", r.accepted_load);
    }
}

#[test]
fn traffic_between_nodes_of_one_router_turns_around_at_the_host_rate() {
    // Node 0 → node 1 on the same router: no network link carries it, and
    // the sender's host interface (2 bytes per cycle) paces it.
    let d = small_aries();
    let p = aries_params(&d, &[1.0, 1.0, 1.0]);
    let nodes = d.node_count() as u32;
    let space = NodeSpace::Groups { nodes, group_nodes: d.routers_per_group() * d.nodes_per_router };
    let trace: Vec<_> = (0..200)
        .map(|i| tofusim_workload::TracePacket { cycle: i, src: 0, dst: 1, bytes: PACKET as u16, hints: None })
        .collect();
    let kind = Kind::Finite(tofusim_workload::FinitePattern::Trace { packets: trace });
    let w = Workload::new(kind, PacketFormat::new(PACKET, 16), &space, 1).unwrap();
    let routing = Routing::Dragonfly(DragonflyRouting::new(&d, DragonflyMode::Minimal));
    let r = Engine::new(routing, p, RoutingMode::Deterministic, RunParams::default(), w, 1.0, 1.0).run(&mut |_| std::ops::ControlFlow::Continue(()));
    assert!(r.invariant_error.is_none(), "{:?}", r.invariant_error);
    assert_eq!(r.packets_delivered, 200);
    assert_eq!(r.link_utilization, 0.0);
    let cycles = r.completion_cycles.unwrap() as f64;
    let expected = 200.0 * PACKET as f64 / 2.0;
    assert!((cycles / expected - 1.0).abs() < 0.02, "{cycles} cycles, expected about {expected}");
}

/// Group 0's nodes each post `packets` packets to their partner in
/// group 1, all at cycle 0 (an adversarial shift, as an MPI all-to-all
/// posted at once hands its messages over); hops per packet and
/// completion cycles.
fn shift_posted_at_once(mode: DragonflyMode, packets: u64) -> (f64, u64) {
    // 5 groups of 4 routers, one link between each pair of groups.
    let d = kim_dally(5, 4, 1, 1);
    let nodes = d.router_count() as u32;
    let space = NodeSpace::Groups { nodes, group_nodes: d.routers_per_group() * d.nodes_per_router };
    let trace: Vec<_> = (0..packets)
        .flat_map(|_| (0..4).map(|src| tofusim_workload::TracePacket { cycle: 0, src, dst: src + 4, bytes: PACKET as u16, hints: None }))
        .collect();
    let kind = Kind::Finite(tofusim_workload::FinitePattern::Trace { packets: trace });
    let w = Workload::new(kind, PacketFormat::new(PACKET, 16), &space, 1).unwrap();
    let routing = Routing::Dragonfly(DragonflyRouting::new(&d, mode));
    let r = Engine::new(routing, params(), RoutingMode::Deterministic, RunParams::default(), w, 1.0, 1.0).run(&mut |_| std::ops::ControlFlow::Continue(()));
    assert!(r.invariant_error.is_none() && r.deadlock.is_none(), "{mode:?}: {:?}", r.invariant_error);
    assert_eq!(r.packets_delivered, 4 * packets);
    (r.sim.packet_hops as f64 / r.packets_delivered as f64, r.completion_cycles.unwrap())
}

#[test]
fn adaptive_routes_are_chosen_from_the_queues_a_packet_meets_at_its_source_router() {
    // Posted at cycle 0, the packets wait in their nodes' send queues. Were
    // their routes chosen then, from empty queues, every one would go
    // minimally over the one global link; chosen as each enters an
    // injection FIFO, later packets see the minimal queues full and go
    // around them.
    let (min_hops, min_cycles) = shift_posted_at_once(DragonflyMode::Minimal, 64);
    for mode in [DragonflyMode::UgalLocal, DragonflyMode::UgalGlobal, DragonflyMode::AdaptivePreferMinimal] {
        let (hops, cycles) = shift_posted_at_once(mode, 64);
        assert!(hops > min_hops + 0.2, "{mode:?}: {hops} hops per packet, minimal {min_hops}");
        assert!(cycles < min_cycles, "{mode:?}: {cycles} cycles, minimal {min_cycles}");
    }
}
