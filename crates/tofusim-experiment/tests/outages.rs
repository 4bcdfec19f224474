//! Links and nodes failing and recovering during a run (issue 22, part 3):
//! packets on a failed link are lost and sent again end to end (or held
//! by the link protocol), new routes avoid the failure, and the run's
//! invariants hold — every packet delivered exactly once, intact.

mod common;

use common::{clean, run, run_threads};
use tofusim_experiment::experiment;

fn refusal(text: &str) -> String {
    match experiment::parse("test.toml", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// BG/L 4x4x4 with `routing` and a workload, and `[faults]`.
fn bgl(routing: &str, workload: &str, run: &str, faults: &str) -> String {
    format!("[network]\nsystem = \"bgl:4x4x4\"\n[routing]\nalgorithm = \"{routing}\"\n[workload]\n{workload}\n[run]\n{run}\n[faults]\n{faults}\n")
}

const ALLTOALL: &str = "pattern = \"alltoall\"\nmessage_bytes = 1024";

/// The x+ link of node (1,0,0) fails at 300 cycles (mid all-to-all) and,
/// when `recover` is given, comes back then.
fn link_events(recover: Option<u64>) -> String {
    let link = "node = [1, 0, 0], port = \"x+\"";
    let mut s = format!("events = [{{ cycle = 300, action = \"fail\", {link} }}");
    if let Some(c) = recover {
        s += &format!(", {{ cycle = {c}, action = \"recover\", {link} }}");
    }
    s + "]\nresend_timeout_cycles = 2000\n"
}

#[test]
fn an_all_to_all_completes_through_a_link_failing_mid_run_every_packet_once() {
    for routing in ["deterministic", "adaptive"] {
        let healthy = run(&bgl(routing, ALLTOALL, "", "events = [{ cycle = 1, action = \"fail\", node = [3, 3, 3], port = \"z+\" }, { cycle = 2, action = \"recover\", node = [3, 3, 3], port = \"z+\" }]"));
        clean(&healthy);
        for recover in [None, Some(5000)] {
            let r = run(&bgl(routing, ALLTOALL, "", &link_events(recover)));
            clean(&r);
            assert!(r.complete, "{routing} {recover:?}");
            assert_eq!(r.packets_delivered, healthy.packets_delivered, "{routing}: every packet delivered once");
            assert!(r.packets_lost > 0, "{routing} {recover:?}: a loaded link failing loses the packets on it");
            assert_eq!(r.packets_lost, r.packets_resent, "{routing}: each lost packet is sent again");
            if recover.is_none() {
                // The packets routed around the failure go the long way.
                assert!(r.completion_cycles > healthy.completion_cycles, "{routing}: a link down for good costs time");
                assert!(r.packets_rerouted > 0);
            }
        }
    }
}

/// A Tofu job (`k:2x3x2`: 288 nodes) with uniform traffic at `load`.
fn tofu(workload_extra: &str, faults: &str, cycles: u64) -> String {
    format!("[network]\nsystem = \"k:2x3x2\"\n[workload]\npattern = \"uniform\"\nload = 0.3\n{workload_extra}\n[run]\ncycles = {cycles}\nwarmup = 0\n[faults]\n{faults}\n")
}

#[test]
fn a_tofu_node_failing_and_recovering_loses_nothing_silently() {
    let faults = "events = [{ cycle = 4000, action = \"fail\", node = [1, 1, 1, 0, 1, 0] }, { cycle = 9000, action = \"recover\", node = [1, 1, 1, 0, 1, 0] }]\nresend_timeout_cycles = 1500";
    let r = run(&tofu("", faults, 16000));
    clean(&r);
    assert!(r.packets_lost > 0, "packets through the node's router are lost");
    // Lost packets still waiting for their time-out at the end are live.
    assert!(r.packets_resent <= r.packets_lost && r.packets_lost - r.packets_resent < 50, "lost {} resent {}", r.packets_lost, r.packets_resent);
    // Nothing reaches the failed node while it is down: its throughput
    // returns once it recovers (the run's time series).
    let during: f64 = r.timeseries.iter().filter(|s| s.cycle > 5000 && s.cycle <= 9000).map(|s| s.accepted_load).sum();
    let after: f64 = r.timeseries.iter().filter(|s| s.cycle > 11000 && s.cycle <= 15000).map(|s| s.accepted_load).sum();
    assert!(after > during, "delivered {during} bytes while the node was down, {after} after");
}

#[test]
fn with_the_link_protocol_a_failed_link_holds_its_packets_until_it_recovers() {
    let faults = "events = [{ cycle = 300, action = \"fail\", node = [1, 0, 0], port = \"x+\" }, { cycle = 3000, action = \"recover\", node = [1, 0, 0], port = \"x+\" }]";
    let text = bgl("deterministic", ALLTOALL, "", faults) + "[link_errors]\npacket_error_rate = 0.0\n";
    let r = run(&text);
    clean(&r);
    assert!(r.complete);
    // Only a packet whose header was on the wire at the failure's cycle
    // can be lost (the protocol decides acceptance at transmission).
    assert_eq!(r.packets_lost, r.packets_resent);
    assert!(r.packets_lost <= 1, "{} lost", r.packets_lost);
    let le = r.link_errors.as_ref().expect("a link protocol");
    assert!(le.tally.down_link > 0, "transmissions into the failed link are held: {:?}", le.tally);
    assert!(le.tally.timeouts > 0);
}

#[test]
fn failures_during_a_run_give_identical_results_on_any_thread_count() {
    let faults = "events = [{ cycle = 2000, action = \"fail\", node = [0, 1, 0, 0, 0, 1], port = \"y+\" }, { cycle = 2500, action = \"fail\", node = [1, 2, 1, 1, 1, 0] }, { cycle = 6000, action = \"recover\", node = [1, 2, 1, 1, 1, 0] }]\nresend_timeout_cycles = 800";
    let text = tofu("", faults, 9000);
    let one = run(&text);
    clean(&one);
    assert!(one.packets_lost > 0);
    for threads in [2, 3] {
        let r = run_threads(&text, threads);
        assert_eq!(
            (r.packets_injected, r.packets_delivered, r.packets_lost, r.packets_resent, r.packets_rerouted, r.latency.mean),
            (one.packets_injected, one.packets_delivered, one.packets_lost, one.packets_resent, one.packets_rerouted, one.latency.mean),
            "{threads} threads"
        );
    }
}

#[test]
fn a_dragonfly_link_failing_mid_run_is_avoided_by_new_routes() {
    let text = "[network]\nsystem = \"aries-2g\"\n[workload]\npattern = \"uniform\"\nload = 0.3\n[run]\ncycles = 6000\nwarmup = 0\n[faults]\nevents = [{ cycle = 1000, action = \"fail\", routers = [0, 1] }]\nresend_timeout_cycles = 1000\n";
    let r = run(text);
    clean(&r);
    assert!(r.packets_rerouted > 0, "routes go round the failed link");
}

#[test]
fn schedules_that_cannot_happen_are_refused_naming_the_event() {
    let link = "node = [1, 0, 0], port = \"x+\"";
    let cases = [
        (format!("events = [{{ cycle = 10, action = \"fail\", node = [1, 0, 0] }}]"), "faults.events[0].node", "must recover"),
        (format!("events = [{{ cycle = 10, action = \"recover\", {link} }}]"), "faults.events[0].port", "is not failed"),
        (format!("events = [{{ cycle = 10, action = \"fail\", {link} }}, {{ cycle = 20, action = \"fail\", node = [2, 0, 0], port = \"x-\" }}]"), "faults.events[1].port", "already failed"),
        (format!("events = [{{ cycle = 10, action = \"break\", {link} }}]"), "faults.events[0].action", "fail"),
        (format!("events = [{{ action = \"fail\", {link} }}]"), "faults.events[0].cycle", "missing"),
        (format!("events = [{{ cycle = 10, action = \"fail\", {link}, when = 3 }}]"), "when", ""),
        ("events = []".to_string(), "faults.events", "missing"),
        (format!("events = [{{ cycle = 10, action = \"fail\", {link} }}]\nresend_timeout_cycles = 0"), "faults.resend_timeout_cycles", ""),
    ];
    for (faults, key, says) in cases {
        let m = refusal(&bgl("deterministic", ALLTOALL, "", &faults));
        assert!(m.contains(key) && m.contains(says), "{faults}: {m}");
    }
    let beyond = bgl("deterministic", "pattern = \"uniform\"\nload = 0.2", "cycles = 1000", &format!("events = [{{ cycle = 1000, action = \"fail\", {link} }}]"));
    assert!(refusal(&beyond).contains("before the run's end"));
    let protocol = bgl("deterministic", ALLTOALL, "", &format!("events = [{{ cycle = 10, action = \"fail\", {link} }}]")) + "[link_errors]\npacket_error_rate = 0.001\n";
    assert!(refusal(&protocol).contains("must recover"));
    let tree = "[network]\ntopology = \"fattree\"\nk = 4\nlevels = 2\nlink_bandwidth = \"12.5GB/s\"\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 512\n[faults]\nevents = [{ cycle = 10, action = \"fail\", routers = [0, 8] }]\n";
    assert!(refusal(tree).contains("fat-tree"), "{}", refusal(tree));
}
