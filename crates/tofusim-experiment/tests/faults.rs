//! Failed nodes and links in the packet engine (issue 18): failed nodes
//! send and receive nothing, routes go around failures the routing scheme
//! can avoid, and what it cannot avoid is refused naming the failure.

use std::ops::ControlFlow;

mod common;

use common::{run, run_threads};
use tofusim_experiment::experiment;
use tofusim_packet::RunResult;
use tofusim_routing::Routing;

fn refusal(text: &str) -> String {
    match experiment::run("test.toml", text, &mut |_| ControlFlow::Continue(())) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Bytes sent out of each port of `router` whose name is in `ports`.
fn port_bytes(r: &RunResult, router: u32, port: &str) -> u64 {
    r.ports.iter().filter(|p| p.router == router && p.port == port).map(|p| p.counters.bytes).sum()
}

fn ring(faults: &str, workload: &str) -> String {
    format!(
        "[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"5GB/s\"\n[network.faults]\n{faults}\n[workload]\n{workload}\n[run]\ncycles = 200000\n"
    )
}

const ALLTOALL: &str = "pattern = \"alltoall\"\nmessage_bytes = 2000";

#[test]
fn a_failed_ring_node_sends_and_receives_nothing_and_is_not_crossed() {
    let r = run(&ring("nodes = [1]", ALLTOALL));
    assert!(r.complete, "{:?}", r.deadlock);
    assert!(r.invariant_error.is_none(), "{:?}", r.invariant_error);
    // Three nodes alive, each sends 2000 bytes to the two others.
    let healthy = run(&ring("", ALLTOALL));
    assert_eq!(r.packets_delivered * 4 * 3, healthy.packets_delivered * 3 * 2);
    // Nothing enters or leaves node 1, and nothing is sent towards it.
    for port in ["x+", "x-"] {
        assert_eq!(port_bytes(&r, 1, port), 0, "out of node 1 {port}");
    }
    assert_eq!(port_bytes(&r, 0, "x+"), 0);
    assert_eq!(port_bytes(&r, 2, "x-"), 0);
}

#[test]
fn a_failed_ring_link_is_avoided_the_long_way_round() {
    let faults = "links = [{ node = [0], port = \"x+\" }]";
    let r = run(&ring(faults, ALLTOALL));
    assert!(r.complete && r.invariant_error.is_none());
    let healthy = run(&ring("", ALLTOALL));
    assert_eq!(r.packets_delivered, healthy.packets_delivered);
    assert_eq!(port_bytes(&r, 0, "x+"), 0);
    assert_eq!(port_bytes(&r, 1, "x-"), 0);
    assert_eq!(healthy.packets_rerouted, 0);
    // The 0 <-> 1 messages, and the ties at half the ring (0 <-> 2, 1 <-> 3)
    // that drew the failed way.
    assert!(r.packets_rerouted >= 2 * 2000_u64.div_ceil(240));
    // 0 -> 1 and 1 -> 0 now take three hops: the survivors carry more.
    assert!(r.latency.mean > healthy.latency.mean);
    // Open loop, adaptive (the BG/L default) with the failure: invariants hold.
    let r = run(&ring(faults, "pattern = \"uniform\"\nload = 0.3"));
    assert!(r.invariant_error.is_none() && r.deadlock.is_none());
    assert!(r.packets_delivered > 100);
    assert_eq!(port_bytes(&r, 0, "x+") + port_bytes(&r, 1, "x-"), 0);
}

#[test]
fn a_cut_ring_is_refused_naming_the_failure_and_the_routing() {
    let msg = refusal(&ring("nodes = [1]\nlinks = [{ node = [2], port = \"x+\" }]", ALLTOALL));
    assert!(msg.contains("network.faults"), "{msg}");
    assert!(msg.contains("no route from router (0) to router (2)") && msg.contains("failed router (1)"), "{msg}");
    assert!(msg.contains("dimension-order"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn a_bgl_torus_with_failed_nodes_runs_adaptively_around_them() {
    // Three failed nodes, not on one line ([S:004]: hint bits keep
    // such a network connected).
    let text = "[network]\nsystem = \"bgl:4x4x4\"\n[network.faults]\nnodes = [[1, 0, 0], [2, 2, 1], [0, 3, 3]]\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 480\n[run]\ncycles = 2000000\n";
    let r = run(text);
    assert!(r.complete && r.invariant_error.is_none() && r.deadlock.is_none());
    let healthy = run(&text.replace("nodes = [[1, 0, 0], [2, 2, 1], [0, 3, 3]]", ""));
    // 61 nodes alive: 61·60 of the 64·63 messages.
    assert_eq!(r.packets_delivered * 64 * 63, healthy.packets_delivered * 61 * 60);
    let dead = [1u32, 2 + 2 * 4 + 16, 3 * 4 + 3 * 16];
    for p in r.ports.iter().filter(|p| dead.contains(&p.router)) {
        assert_eq!(p.counters.bytes, 0, "router {} port {}", p.router, p.port);
    }
    // Split over two threads: the same result.
    let two = run_threads(text, 2);
    assert_eq!(two.packets_delivered, r.packets_delivered);
    assert_eq!(two.completion_cycles, r.completion_cycles);
    assert_eq!(two.latency.mean, r.latency.mean);
}

#[test]
fn a_tofu_region_with_a_failed_node_routes_around_it_through_the_abc_group() {
    let text = "[network]\nsystem = \"k:2x3x2\"\n[network.faults]\nnodes = [[1, 0, 0, 0, 0, 0]]\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 1000\n[run]\ncycles = 5000000\n";
    let r = run(text);
    assert!(r.complete && r.invariant_error.is_none() && r.deadlock.is_none(), "{:?} {:?}", r.invariant_error, r.deadlock);
    let healthy = run(&text.replace("nodes = [[1, 0, 0, 0, 0, 0]]", ""));
    let n = 2 * 3 * 2 * 12u64;
    assert_eq!(r.packets_delivered * n * (n - 1), healthy.packets_delivered * (n - 1) * (n - 2));
    for p in r.ports.iter().filter(|p| p.router == 1) {
        assert_eq!(p.counters.bytes, 0, "out of the failed node through {}", p.port);
    }
    assert!(r.packets_rerouted > 0);
}

#[test]
fn a_dragonfly_with_a_failed_global_link_goes_through_another_group() {
    // 5 groups of 4 routers, one global link per group pair (the
    // adversarial example): group 0 -> group 1 must detour once its link fails.
    let net = "[network]\ntopology = \"dragonfly\"\nform = \"generic\"\ngroups = 5\nnodes_per_router = 1\nrouters_per_group = 4\nglobal_links_per_router = 1\nlinks_per_group_pair = 1\narrangement = \"consecutive\"\nlink_bandwidth = \"5GB/s\"\nnic_bandwidth = \"5GB/s\"\n";
    // The engine's own routing of that network: its global link 0 -> 4.
    let exp = experiment::parse("test.toml", &format!("{net}[routing]\nalgorithm = \"minimal\"\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 1000\n")).unwrap();
    let Routing::Dragonfly(rt) = exp.built.routing(exp.router.escape) else { panic!("a dragonfly") };
    let (g, p) = rt.global_hop(0, 4, rt.minimal_hints(0, 4)).expect("groups 0 and 1 are linked");
    let (w, _) = rt.neighbor(g, p).unwrap();
    for algorithm in ["minimal", "adaptive-prefer-minimal"] {
        let text = format!(
            "{net}[network.faults]\nlinks = [{{ routers = [{g}, {w}] }}]\n[routing]\nalgorithm = \"{algorithm}\"\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 1000\n[run]\ncycles = 5000000\n"
        );
        let r = run(&text);
        assert!(r.complete && r.invariant_error.is_none() && r.deadlock.is_none(), "{algorithm}");
        let name = rt.port_name(p);
        assert_eq!(port_bytes(&r, g, &name), 0, "{algorithm}: the failed global link carried traffic");
        let healthy = run(&text.replace(&format!("links = [{{ routers = [{g}, {w}] }}]"), ""));
        assert_eq!(r.packets_delivered, healthy.packets_delivered, "{algorithm}");
        assert!(port_bytes(&healthy, g, &name) > 0);
    }
}

#[test]
fn what_the_routing_cannot_avoid_is_refused() {
    // A fat-tree's up ports are fixed by the destination: failed links refused.
    let tree = "[network]\ntopology = \"fattree\"\nk = 4\nlevels = 2\nlink_bandwidth = \"5GB/s\"\n";
    let msg = refusal(&format!("{tree}[network.faults]\nlinks = [{{ routers = [0, 4] }}]\n[workload]\npattern = \"uniform\"\nload = 0.2\n[run]\ncycles = 10000\n"));
    assert!(msg.contains("network.faults") && msg.contains("fat-tree"), "{msg}");
    // Its failed nodes are modelled: silent leaves.
    let r = run(&format!("{tree}[network.faults]\nnodes = [3]\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 500\n[run]\ncycles = 1000000\n"));
    assert!(r.complete && r.invariant_error.is_none());
    // A ping-pong with a failed end, a fill through a failed node.
    let msg = refusal(&ring("nodes = [1]", "pattern = \"pingpong\"\nhops = 1\nmessage_bytes = 100"));
    assert!(msg.contains("workload.hops") && msg.contains("failed"), "{msg}");
    let msg = refusal(&ring("nodes = [2]", "pattern = \"line-fill\"\naxis = 0\nmessage_bytes = 1000"));
    assert!(msg.contains("workload.pattern") && msg.contains("failed"), "{msg}");
    // The flow model does not model failures: refused, not ignored.
    let exp = experiment::parse("test.toml", &ring("nodes = [1]", ALLTOALL)).unwrap();
    let msg = tofusim_experiment::flow_run::run("test.toml", &exp, &mut |_| ControlFlow::Continue(())).err().expect("refused").to_string();
    assert!(msg.contains("network.faults") && msg.contains("flow model"), "{msg}");
}

#[test]
fn a_pair_cut_off_in_a_network_too_large_to_check_beforehand_stops_the_run() {
    // 64 x 64 routers (4,096: above the pre-check's 2,048): every link of
    // node (5,5) failed, the node alive. Its first packet has no route:
    // the run stops with `unroutable`, naming the pair; nothing panics.
    let links: Vec<String> = ["x+", "x-", "y+", "y-"].iter().map(|p| format!("{{ node = [5, 5], port = \"{p}\" }}")).collect();
    let text = format!(
        "[network]\ntopology = \"torus\"\nshape = [64, 64]\nlink_bandwidth = \"5GB/s\"\n[network.faults]\nlinks = [{}]\n[routing]\nalgorithm = \"deterministic\"\n[workload]\npattern = \"uniform\"\nload = 0.05\n[run]\ncycles = 5000\n",
        links.join(", ")
    );
    let r = run(&text);
    let e = r.invariant_error.expect("the run stops");
    assert_eq!(e.kind, "unroutable", "{e:?}");
    assert!(e.detail.contains("(5,5)") && e.detail.contains("failed link"), "{}", e.detail);
}

#[test]
fn detours_under_load_past_saturation_do_not_deadlock() {
    // Detour routes leave dimension order for one hop (docs/model.md):
    // stress them. Failed nodes where dimension-order turns need detours,
    // uniform traffic past saturation, every routing the torus offers.
    for (system, nodes) in [("bgl:8x8x8", "[[2, 0, 0], [5, 3, 1], [1, 6, 6]]"), ("k:2x3x2", "[[1, 0, 0, 0, 0, 0], [0, 2, 1, 1, 2, 1]]")] {
        // The Tofu router has no dynamic VCs: adaptive routing is refused there.
        let algorithms: &[&str] = if system.starts_with("k:") { &["deterministic"] } else { &["deterministic", "adaptive"] };
        for algorithm in algorithms {
            let text = format!(
                "[network]\nsystem = \"{system}\"\n[network.faults]\nnodes = {nodes}\n[routing]\nalgorithm = \"{algorithm}\"\n[workload]\npattern = \"uniform\"\nload = 0.6\n[run]\ncycles = 60000\n"
            );
            let r = run(&text);
            assert!(r.deadlock.is_none() && r.invariant_error.is_none(), "{system} {algorithm}: {:?} {:?}", r.deadlock, r.invariant_error);
            assert!(r.packets_rerouted > 0, "{system} {algorithm}: no packet needed a detour");
        }
    }
}
