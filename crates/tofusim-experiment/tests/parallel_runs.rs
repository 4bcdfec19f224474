//! Split runs are bit-identical to unsplit ones: the same experiment on 1,
//! 2 and 3 threads, and on 2 emulated processes (the MPI code path with
//! channels instead of MPI) of 1 and 2 threads each, gives the same result
//! JSON — every statistic, the time series, the per-port counters (and
//! the port and VC counter samples, compared column by column), the
//! deadlock report — but for the simulator's own wall time and partition
//! loads.

mod common;

use common::{canonical, diff};
use tofusim_experiment::experiment;
use tofusim_packet::{LocalTransport, Split, Transport};


fn assert_same(got: &serde_json::Value, want: &serde_json::Value, what: &str) {
    let mut d = Vec::new();
    diff(got, want, "", &mut d);
    assert!(d.is_empty(), "{what}:\n{}", d.join("\n"));
}

fn run_split(text: &str, split: Split) -> Option<tofusim_packet::RunResult> {
    let exp = experiment::parse("test.toml", text).unwrap_or_else(|e| panic!("{e}"));
    experiment::engine(exp).run_split(split, &mut |_| std::ops::ControlFlow::Continue(()), |_| ()).map(|(r, _)| r)
}

/// Runs `text` as `procs` emulated processes of `threads` threads each;
/// returns process 0's result (the others return none).
fn run_processes(text: &str, procs: usize, threads: usize) -> tofusim_packet::RunResult {
    let transports = LocalTransport::group(procs);
    let results: Vec<Option<tofusim_packet::RunResult>> = std::thread::scope(|s| {
        let handles: Vec<_> = transports
            .into_iter()
            .map(|t| {
                s.spawn(move || {
                    let t: Box<dyn Transport> = Box::new(t);
                    run_split(text, Split { threads, transport: Some(t) })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a process")).collect()
    });
    assert!(results[1..].iter().all(Option::is_none), "only process 0 has the result");
    results.into_iter().next().flatten().expect("process 0 has the result")
}

fn check_identical(name: &str, text: &str) -> tofusim_packet::RunResult {
    let one = run_split(text, Split::serial()).expect("result");
    let want = canonical(&one);
    for threads in [2, 3] {
        let r = run_split(text, Split::threads(threads)).expect("result");
        assert_same(&canonical(&r), &want, &format!("{name}: {threads} threads differ from one"));
        assert!(r.counter_samples == one.counter_samples, "{name}: {threads} threads' counter samples differ from one");
        let p = r.sim.partitions.as_ref().expect("a split run reports its partitions");
        assert_eq!(p.partitions.len(), threads);
        assert_eq!(p.partitions.iter().map(|l| l.events).sum::<u64>(), one.sim.events);
    }
    for (procs, threads) in [(2, 1), (2, 2)] {
        let r = run_processes(text, procs, threads);
        assert_same(&canonical(&r), &want, &format!("{name}: {procs} processes × {threads} threads differ from one"));
        assert!(r.counter_samples == one.counter_samples, "{name}: {procs} processes × {threads} threads' counter samples differ from one");
        assert_eq!(r.sim.partitions.as_ref().map(|p| p.processes), Some(procs));
    }
    one
}

#[test]
fn bgl_uniform_open_loop_with_audits_and_counters() {
    let r = check_identical(
        "uniform",
        "[network]\nsystem = \"bgl:8x8x8\"\n[workload]\npattern = \"uniform\"\nload = 0.8\n[run]\ncycles = 6000\nwarmup = 1000\naudit_cycles = 1500\ncounter_cycles = 2000\nsample_cycles = 500\nseed = 7\n",
    );
    assert!(r.complete && r.packets_delivered > 1000 && r.timeseries.len() == 11, "{} {}", r.packets_delivered, r.timeseries.len());
}

#[test]
fn bgl_alltoall_and_hot_region_deterministic_and_adaptive() {
    for alg in ["adaptive", "dor"] {
        let r = check_identical(alg, &format!("[network]\nsystem = \"bgl:4x4x4\"\n[routing]\nalgorithm = \"{alg}\"\n[workload]\npattern = \"alltoall\"\npackets_per_pair = 2\n"));
        assert!(r.complete);
    }
    check_identical(
        "hot region",
        "[network]\nsystem = \"bgl:8x4x4\"\n[workload]\npattern = \"hot-region\"\nload = 0.6\nhot_fraction = 0.25\nregion_origin = [0, 0, 0]\nregion_shape = [2, 2, 2]\nmin_packet_bytes = 64\n[run]\ncycles = 8000\n",
    );
}

#[test]
fn fills_pingpong_and_trace_answer_deliveries_the_same_way() {
    for (name, w) in [
        ("line fill", "pattern = \"line-fill\"\naxis = 0\nmessage_bytes = 4096"),
        ("plane fill", "pattern = \"plane-fill\"\naxes = [0, 1]\nmessage_bytes = 2048\nturn_cycles = 40"),
        ("ping-pong", "pattern = \"pingpong\"\nhops = 5\nmessage_bytes = 2000\nrepetitions = 3"),
    ] {
        let r = check_identical(name, &format!("[network]\nsystem = \"bgl:8x4x4\"\n[workload]\n{w}\n"));
        assert!(r.complete, "{name}");
    }
    let rows: Vec<String> = (0..60).map(|i| format!("[{}, {}, {}, 256]", i * 7, (i * 13) % 64, (i * 29 + 5) % 64)).filter(|r| {
        let v: Vec<u64> = r.trim_matches(|c| c == '[' || c == ']').split(", ").map(|x| x.parse().unwrap()).collect();
        v[1] != v[2]
    }).collect();
    check_identical("trace", &format!("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"trace\"\ntrace = [{}]\n", rows.join(", ")));
    // Sparse rows with idle gaps of many windows (skipped alike by every
    // partition: their samples and counter snapshots are merged by index),
    // one of them local to a partition late in a window.
    let sparse = "[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"trace\"\ntrace = [[0, 0, 1, 256], [495, 63, 62, 256], [1300, 5, 6, 256], [250000, 2, 40, 256], [250010, 33, 9, 256], [9000000, 7, 8, 256]]\n[run]\nsample_cycles = 100\ncounter_cycles = 300\n";
    let r = check_identical("sparse trace", sparse);
    assert!(r.complete && r.timeseries.len() < 100, "{} samples", r.timeseries.len());
}

#[test]
fn tofu_and_dragonflies_in_every_routing_mode() {
    check_identical("tofu", "[network]\nsystem = \"k:2x3x2\"\n[workload]\npattern = \"uniform\"\nload = 0.5\n[run]\ncycles = 4000\n");
    let text = include_str!("../../../examples/experiments/dragonfly-adversarial.toml").replace("cycles = 200000", "cycles = 6000").replace("warmup = 40000", "warmup = 1000");
    for mode in ["minimal", "valiant", "ugal", "ugal-g", "adaptive-prefer-minimal"] {
        check_identical(mode, &text.replace("\"valiant\"", &format!("\"{mode}\"")));
    }
    // Aries routers: 4 nodes per router, turnaround inside the router.
    check_identical(
        "aries",
        "[network]\nsystem = \"aries-1g\"\n[routing]\nalgorithm = \"ugal-g\"\n[workload]\npattern = \"uniform\"\nload = 0.5\npacket_bytes = 96\nheader_bytes = 32\n[run]\ncycles = 4000\n",
    );
}

#[test]
fn deadlocks_and_planted_faults_are_reported_identically() {
    let r = check_identical("no escape", include_str!("../../../examples/experiments/ring-no-escape-deadlock.toml"));
    assert!(r.deadlock.as_ref().is_some_and(|d| d.wait_cycle_found));
    for fault in ["drop-packet", "leak-token", "corrupt-payload"] {
        let r = check_identical(fault, &format!("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"alltoall\"\n[run]\nplant_fault = \"{fault}\"\nplant_after = 500\naudit_cycles = 2000\n"));
        assert!(r.invariant_error.is_some(), "{fault} not caught");
    }
}

#[test]
fn link_errors_and_packet_slicing_split_identically_on_threads_and_processes() {
    let r = check_identical(
        "link errors",
        "[network]\nsystem = \"bgl:4x4x4\"\n[routing]\nalgorithm = \"adaptive\"\n[workload]\npattern = \"uniform\"\nload = 1.0\n[run]\ncycles = 20000\nwarmup = 2000\naudit_cycles = 2500\nseed = 3\n[link_errors]\npacket_error_rate = 0.05\ncrc_escape_probability = 0.01\nburst_error_rate = 0.5\nmean_burst_packets = 5\nmean_gap_packets = 300\n",
    );
    let le = r.link_errors.expect("reported");
    assert!(le.tally.retransmissions > 0 && le.tally.timeouts > 0);
    let r = check_identical(
        "slicing",
        "[network]\nsystem = \"fugaku:2x3x2\"\n[workload]\npattern = \"uniform\"\nload = 1.0\n[run]\ncycles = 60000\naudit_cycles = 5000\n[link_errors]\npacket_slicing = \"dynamic\"\nmonitor_packets = 10\nlane_bit_error_rates = [1e-10, 3e-5]\n",
    );
    assert!(r.link_errors.expect("reported").tally.mode_switches > 0);
}
