//! Failures during a run, the edge cases (issue 22, part 3; found in review): short time-outs on split runs, resends during generation, failures at cycle 0, whole results identical across threads, permanent cut-offs refused, parallel dragonfly links, overlapping failures, the watchdog.

mod common;

use common::{clean, differences, run, run_threads};
use tofusim_experiment::experiment;

fn tofu(workload: &str, run: &str, faults: &str) -> String {
    format!("[network]\nsystem = \"k:2x3x2\"\n[workload]\n{workload}\n[run]\n{run}\n[faults]\n{faults}\n")
}

const UNIFORM: &str = "pattern = \"uniform\"\nload = 0.3";

const FAULTS: &str = "events = [{ cycle = 2000, action = \"fail\", node = [0, 1, 0, 0, 0, 1], port = \"y+\" }, { cycle = 2500, action = \"fail\", node = [1, 2, 1, 1, 1, 0] }, { cycle = 6000, action = \"recover\", node = [1, 2, 1, 1, 1, 0] }]";

/// The whole result JSON (as parallel_runs.rs compares it), not a few
/// totals, is identical on 1, 2 and 3 threads: the schedule's bookkeeping
/// event, one per partition, is not counted.
#[test]
fn whole_result_identical_across_threads() {
    let text = tofu(UNIFORM, "cycles = 9000\nwarmup = 0", &format!("{FAULTS}\nresend_timeout_cycles = 800"));
    let one = run(&text);
    clean(&one);
    for threads in [2, 3] {
        let r = run_threads(&text, threads);
        let d = differences(&r, &one);
        assert!(d.is_empty(), "{threads} threads:\n{}", d.join("\n"));
    }
}

/// An event at cycle 0 is applied before anything of cycle 0: a link
/// failing then loses nothing (no packet was on it yet).
#[test]
fn link_failing_at_cycle_zero_loses_nothing() {
    let text = format!(
        "[network]\nsystem = \"bgl:4x4x4\"\n[routing]\nalgorithm = \"deterministic\"\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 1024\n[run]\n[faults]\nevents = [{{ cycle = 0, action = \"fail\", node = [1, 0, 0], port = \"x+\" }}]\nresend_timeout_cycles = 2000\n"
    );
    let r = run(&text);
    clean(&r);
    assert_eq!(r.packets_lost, 0, "lost {} packets on a link that failed before anything was sent", r.packets_lost);
}

/// A finite generated workload (all-to-all) with a Tofu node down and
/// back: complete, each lost packet sent again, identical on 1-3 threads.
#[test]
fn alltoall_with_a_tofu_node_down_and_back() {
    let node = "node = [1, 1, 1, 0, 1, 0]";
    let faults = format!("events = [{{ cycle = 500, action = \"fail\", {node} }}, {{ cycle = 20000, action = \"recover\", {node} }}]\nresend_timeout_cycles = 1000");
    let text = tofu("pattern = \"alltoall\"\nmessage_bytes = 512", "", &faults);
    let r = run(&text);
    clean(&r);
    assert!(r.complete);
    eprintln!("injected {} delivered {} lost {} resent {} completion {:?}", r.packets_injected, r.packets_delivered, r.packets_lost, r.packets_resent, r.completion_cycles);
    assert_eq!(r.packets_lost, r.packets_resent);
    for threads in [2, 3] {
        let x = run_threads(&text, threads);
        clean(&x);
        let d = differences(&x, &r);
        assert!(d.is_empty(), "{threads} threads:\n{}", d.join("\n"));
    }
}

/// The watchdog waits for a resend time-out far longer than
/// deadlock_cycles.
#[test]
fn watchdog_waits_for_a_long_resend() {
    let text = format!(
        "[network]\nsystem = \"bgl:4x4x4\"\n[routing]\nalgorithm = \"deterministic\"\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 1024\n[run]\ndeadlock_cycles = 1000\n[faults]\nevents = [{{ cycle = 300, action = \"fail\", node = [1, 0, 0], port = \"x+\" }}]\nresend_timeout_cycles = 200000\n"
    );
    // Control: the same run with a failure that loses nothing is clean
    // under the same deadlock_cycles.
    let healthy = text.replace("cycle = 300, action = \"fail\", node = [1, 0, 0], port = \"x+\" }]", "cycle = 1, action = \"fail\", node = [3, 3, 3], port = \"z+\" }, { cycle = 2, action = \"recover\", node = [3, 3, 3], port = \"z+\" }]");
    assert_ne!(healthy, text);
    let h = run(&healthy);
    eprintln!("healthy: lost {} deadlock {:?} completion {:?}", h.packets_lost, h.deadlock, h.completion_cycles);
    clean(&h);
    assert_eq!(h.packets_lost, 0);
    let r = run(&text);
    eprintln!("failing link: lost {} resent {} deadlock {:?}", r.packets_lost, r.packets_resent, r.deadlock);
    clean(&r);
    assert!(r.complete && r.packets_lost > 0);
}

/// A resend time-out shorter than the window (BG/L: 16 cycles, the hop
/// latency) would mail a `Resend` into a window another partition already
/// ran: refused. From the window up, split runs equal the serial one.
#[test]
fn short_resend_timeout_bgl() {
    // Shorter than a hop (16 cycles on BG/L) is refused: the packet's way
    // back to its source could land in another partition's past.
    let short = "[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.5\n[run]\ncycles = 20000\n[faults]\nevents = [{ cycle = 3000, action = \"fail\", node = [1, 0, 0] }, { cycle = 9000, action = \"recover\", node = [1, 0, 0] }]\nresend_timeout_cycles = 15\n";
    let refused = experiment::parse("test.toml", short).err().expect("refused").to_string();
    assert!(refused.contains("faults.resend_timeout_cycles") && refused.contains("at least 16"), "{refused}");
    for timeout in [16u64, 2000] {
        let text = format!(
            "[network]\nsystem = \"bgl:4x4x4\"\n[routing]\nalgorithm = \"adaptive\"\n[workload]\npattern = \"uniform\"\nload = 0.5\n[run]\ncycles = 20000\nwarmup = 0\n[faults]\nevents = [{{ cycle = 3000, action = \"fail\", node = [1, 0, 0] }}, {{ cycle = 9000, action = \"recover\", node = [1, 0, 0] }}]\nresend_timeout_cycles = {timeout}\n"
        );
        let one = run(&text);
        clean(&one);
        eprintln!("timeout {timeout}: lost {} resent {}", one.packets_lost, one.packets_resent);
        for threads in [2, 3] {
            let r = run_threads(&text, threads);
            eprintln!("  {threads} threads: lost {} resent {} partitions {:?}", r.packets_lost, r.packets_resent, r.sim.partitions.as_ref().map(|p| p.partitions.len()));
            clean(&r);
            let d = differences(&r, &one);
            assert!(d.is_empty(), "timeout {timeout}, {threads} threads:\n{}", d.join("\n"));
        }
    }
}

/// A lost packet is sent again `resend_timeout_cycles` after its loss,
/// also while its node's generator still has packets (an all-to-all): it
/// goes before the generated ones instead of waiting for the last of them.
#[test]
fn resend_does_not_wait_for_the_generator() {
    let text = "[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"5GB/s\"\n[routing]\nalgorithm = \"deterministic\"\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 65536\n[run]\n[faults]\nevents = [{ cycle = 5000, action = \"fail\", node = [1], port = \"x+\" }, { cycle = 5500, action = \"recover\", node = [1], port = \"x+\" }]\nresend_timeout_cycles = 1000\n";
    let r = run(text);
    clean(&r);
    assert!(r.packets_lost > 0 && r.packets_lost == r.packets_resent);
    let end = r.completion_cycles.expect("complete") as f64;
    assert!(r.latency.max < 0.25 * end, "a packet lost at ~5,000 and sent again at ~6,000 was delivered {} cycles after its creation (the run ends at {end})", r.latency.max);
}

/// Dragonfly parallel links: as `[network.faults]`, an event naming the
/// routers fails the next link between them that is up (and recovers the
/// first that is down).
#[test]
fn dragonfly_parallel_links() {
    let base = "[network]\nsystem = \"aries-2g\"\n";
    let tail = "[workload]\npattern = \"uniform\"\nload = 0.1\n[run]\ncycles = 3000\n";
    let b = (1..96)
        .find(|b| experiment::parse("t.toml", &format!("{base}[network.faults]\nlinks = [{{ routers = [0, {b}] }}, {{ routers = [0, {b}] }}]\n{tail}")).is_ok())
        .expect("a router pair with parallel links");
    eprintln!("routers 0 and {b} have parallel links");
    let twice = format!("{base}{tail}[faults]\nevents = [{{ cycle = 10, action = \"fail\", routers = [0, {b}] }}, {{ cycle = 20, action = \"fail\", routers = [0, {b}] }}, {{ cycle = 100, action = \"recover\", routers = [0, {b}] }}, {{ cycle = 110, action = \"recover\", routers = [0, {b}] }}]\n");
    if let Err(e) = experiment::parse("t.toml", &twice) {
        panic!("the second parallel link cannot be failed: {e}");
    }
    clean(&run(&twice));
}

/// Overlapping failures: a link of a node, then the node, recovering in
/// either order; a link blip shorter than a hop; two events in one cycle;
/// static failures under the events. Clean and identical on 1-3 threads.
#[test]
fn overlapping_failures() {
    let n = "node = [1, 1, 1, 0, 1, 0]";
    let l = "node = [1, 1, 1, 0, 1, 0], port = \"y+\"";
    let l2 = "node = [0, 1, 0, 0, 0, 1], port = \"y+\"";
    let cases = [
        format!("events = [{{ cycle = 1000, action = \"fail\", {l} }}, {{ cycle = 1500, action = \"fail\", {n} }}, {{ cycle = 3000, action = \"recover\", {n} }}, {{ cycle = 5000, action = \"recover\", {l} }}]"),
        format!("events = [{{ cycle = 1000, action = \"fail\", {l} }}, {{ cycle = 1500, action = \"fail\", {n} }}, {{ cycle = 3000, action = \"recover\", {l} }}, {{ cycle = 5000, action = \"recover\", {n} }}]"),
        format!("events = [{{ cycle = 2000, action = \"fail\", {l2} }}, {{ cycle = 2100, action = \"recover\", {l2} }}, {{ cycle = 3000, action = \"fail\", {l2} }}, {{ cycle = 3000, action = \"recover\", {l2} }}]"),
    ];
    for (i, faults) in cases.iter().enumerate() {
        for stat in ["", "[network.faults]\nlinks = [{ node = [0, 0, 0, 0, 0, 0], port = \"x+\" }]\nnodes = [[1, 2, 1, 1, 1, 0]]\n"] {
            let text = format!("[network]\nsystem = \"k:2x3x2\"\n{stat}[workload]\n{UNIFORM}\n[run]\ncycles = 9000\nwarmup = 0\n[faults]\n{faults}\nresend_timeout_cycles = 700\n");
            let one = run(&text);
            clean(&one);
            eprintln!("case {i} static {}: lost {} resent {} rerouted {}", !stat.is_empty(), one.packets_lost, one.packets_resent, one.packets_rerouted);
            for threads in [2, 3] {
                let r = run_threads(&text, threads);
                clean(&r);
                let d = differences(&r, &one);
                assert!(d.is_empty(), "case {i}, {threads} threads:\n{}", d.join("\n"));
            }
        }
    }
}

/// Links that never recover cutting a node off are refused before the run,
/// as the same failures in [network.faults] are.
#[test]
fn permanent_cut_off() {
    let ports = ["x+", "x-", "y+", "y-", "z+", "z-"];
    let ev: Vec<String> = ports.iter().map(|p| format!("{{ cycle = 100, action = \"fail\", node = [0, 0, 0], port = \"{p}\" }}")).collect();
    let text = format!("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 256\n[run]\n[faults]\nevents = [{}]\n", ev.join(", "));
    let stat = format!("[network]\nsystem = \"bgl:4x4x4\"\n[network.faults]\nlinks = [{}]\n[workload]\npattern = \"alltoall\"\nmessage_bytes = 256\n", ports.iter().map(|p| format!("{{ node = [0, 0, 0], port = \"{p}\" }}")).collect::<Vec<_>>().join(", "));
    assert!(experiment::parse("t.toml", &stat).is_err());
    let refused = experiment::parse("t.toml", &text).err().expect("refused").to_string();
    assert!(refused.contains("faults.events") && refused.contains("never recover"), "{refused}");
}
