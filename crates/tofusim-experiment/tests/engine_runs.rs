//! End-to-end packet-engine runs from experiment text.

use tofusim_experiment::experiment;

fn run(text: &str) -> tofusim_packet::RunResult {
    let (_, r) = experiment::run("test.toml", text, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    r
}

#[test]
fn uniform_open_loop_runs_clean() {
    let r = run("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.05\n[run]\ncycles = 20000\nwarmup = 2000\n");
    assert!(r.deadlock.is_none(), "{:?}", r.deadlock);
    assert!(r.invariant_error.is_none(), "{:?}", r.invariant_error);
    assert!(r.packets_delivered > 100);
    assert!((r.accepted_load - 0.05).abs() < 0.01, "accepted {}", r.accepted_load);
    eprintln!("lat {:?} util {} events {}", r.latency, r.link_utilization, r.sim.events);
}

#[test]
fn alltoall_completes() {
    let r = run("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"alltoall\"\npackets_per_pair = 2\n");
    assert!(r.complete, "{:?} {:?}", r.deadlock, r.invariant_error);
    assert_eq!(r.packets_delivered, 64 * 63 * 2);
    eprintln!("alltoall link {} payload {} cycles {:?}", r.link_utilization, r.payload_utilization, r.completion_cycles);
}
