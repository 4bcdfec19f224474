//! End-to-end packet-engine runs from experiment text: invariants, planted
//! faults, and the BG/L all-to-all at reduced scale.

use tofusim_experiment::experiment;

fn run(text: &str) -> tofusim_packet::RunResult {
    let (_, r) = experiment::run("test.toml", text, &mut |_| std::ops::ControlFlow::Continue(())).unwrap_or_else(|e| panic!("{e}"));
    r
}

#[test]
fn uniform_open_loop_runs_clean() {
    let r = run("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.05\n[run]\ncycles = 20000\nwarmup = 2000\naudit_cycles = 5000\n");
    assert!(r.deadlock.is_none(), "{:?}", r.deadlock);
    assert!(r.invariant_error.is_none(), "{:?}", r.invariant_error);
    assert!(r.packets_delivered > 100);
    assert!(
        (r.accepted_load - 0.05).abs() < 0.01,
        "accepted {}",
        r.accepted_load
    );
}

#[test]
fn same_seed_same_result_other_seed_differs() {
    let text = |seed: u64| {
        format!("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.1\n[run]\ncycles = 20000\nseed = {seed}\n")
    };
    let a = run(&text(3));
    let b = run(&text(3));
    let c = run(&text(4));
    assert_eq!(a.packets_delivered, b.packets_delivered);
    assert_eq!(a.latency.mean, b.latency.mean);
    assert_eq!(a.link_utilization, b.link_utilization);
    assert_ne!(a.latency.mean, c.latency.mean);
}

#[test]
fn tofu_and_mesh_run_clean() {
    for net in [
        "system = \"k:2x2x2\"",
        "topology = \"mesh\"\nshape = [4, 3]\nlink_bandwidth = \"1GB/s\"",
    ] {
        let r = run(&format!(
            "[network]\n{net}\n[workload]\npattern = \"alltoall\"\n"
        ));
        assert!(
            r.complete,
            "{net}: {:?} {:?}",
            r.deadlock, r.invariant_error
        );
    }
}

#[test]
fn every_escape_scheme_completes_an_alltoall() {
    for esc in [
        "bubble",
        "bubble-unfixed",
        "bubble-full-counts",
        "dateline-dimension",
        "dateline-direction",
    ] {
        for alg in ["adaptive", "dor"] {
            let r = run(&format!("[network]\nsystem = \"bgl:4x4x4\"\n[router]\nescape = \"{esc}\"\n[routing]\nalgorithm = \"{alg}\"\n[workload]\npattern = \"alltoall\"\npackets_per_pair = 2\n"));
            assert!(
                r.complete,
                "{esc} {alg}: {:?} {:?}",
                r.deadlock, r.invariant_error
            );
            assert_eq!(r.packets_delivered, 64 * 63 * 2);
        }
    }
}

#[test]
fn planted_faults_are_caught() {
    for (fault, kind) in [
        ("drop-packet", "packet-conservation"),
        ("leak-token", "token-conservation"),
        ("corrupt-payload", "payload-checksum"),
    ] {
        let r = run(&format!("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"alltoall\"\n[run]\nplant_fault = \"{fault}\"\nplant_after = 500\naudit_cycles = 2000\n"));
        let e = r
            .invariant_error
            .unwrap_or_else(|| panic!("{fault} not caught"));
        assert_eq!(e.kind, kind, "{fault}: {}", e.detail);
        assert!(!r.complete);
    }
}

#[test]
fn no_escape_on_a_torus_is_reported_not_hung() {
    // Deterministic routing on one VC without an escape channel: the ring's
    // buffers fill into a cycle of waits, which is detected and reported.
    let r = run("[network]\ntopology = \"torus\"\nshape = [8]\nlink_bandwidth = \"175MB/s\"\n[router]\nescape = \"none\"\ndynamic_vcs = 1\nnetwork_priority = 0.5\n[routing]\nalgorithm = \"dor\"\n[workload]\npattern = \"tornado\"\nload = 1.0\n[run]\ncycles = 200000\ndeadlock_cycles = 5000\n");
    let d = r
        .deadlock
        .expect("a ring without an escape channel deadlocks under this load");
    assert!(d.wait_cycle_found, "{d:?}");
    assert!(d.blocked_vcs.len() >= 2);
    assert!(!r.complete);
}

#[test]
fn unfixed_bubble_deadlocks_on_the_documented_trace_and_the_fix_completes_it() {
    let text = include_str!("../../../examples/experiments/bubble-unfixed-deadlock.toml");
    let r = run(text);
    let d = r
        .deadlock
        .expect("the unfixed bubble rule deadlocks on this trace");
    assert!(d.wait_cycle_found, "{d:?}");
    assert_eq!(d.blocked_vcs.len(), 4, "{d:?}");
    assert!(r.invariant_error.is_none());
    assert!(!r.complete);
    for fixed in ["\"bubble\"", "\"bubble-full-counts\""] {
        let r = run(&text.replace("\"bubble-unfixed\"", fixed));
        assert!(r.complete, "{fixed}: {:?}", r.deadlock);
        assert_eq!(r.packets_delivered, 29);
    }
}

#[test]
fn bgl_alltoall_8x8x8_dynamic_beats_deterministic() {
    // B2 at reduced scale (2 packets per pair instead of a long run).
    let text = |alg: &str| {
        format!("[network]\nsystem = \"bgl-midplane\"\n[routing]\nalgorithm = \"{alg}\"\n[workload]\npattern = \"alltoall\"\npackets_per_pair = 2\n")
    };
    let d = run(&text("adaptive"));
    let s = run(&text("dor"));
    assert!(d.complete && s.complete);
    assert!(
        d.link_utilization >= 0.95,
        "dynamic link utilisation {}",
        d.link_utilization
    );
    let ratio = d.payload_utilization / d.link_utilization;
    assert!((ratio - 240.0 / 270.0).abs() < 0.01, "payload/link {ratio}");
    assert!(
        s.link_utilization < d.link_utilization - 0.1,
        "deterministic {}",
        s.link_utilization
    );
}

#[test]
fn fixed_bubble_runs_a_million_cycles_at_saturation_on_8x8x8() {
    // Offered load above saturation (uniform traffic saturates near 0.158 of
    // the injection bandwidth here); deterministic routing puts every packet
    // on the bubble escape VC.
    for alg in ["dor", "adaptive"] {
        let r = run(&format!(
            "[network]\nsystem = \"bgl-midplane\"\n[routing]\nalgorithm = \"{alg}\"\n[workload]\npattern = \"uniform\"\nload = 0.2\nmin_packet_bytes = 32\n[run]\ncycles = 1000000\nsample_cycles = 100000\n"
        ));
        assert!(r.deadlock.is_none(), "{alg}: {:?}", r.deadlock);
        assert!(
            r.invariant_error.is_none(),
            "{alg}: {:?}",
            r.invariant_error
        );
        assert_eq!(r.sim.cycles, 1_000_000);
        // Still moving at the end: the last window delivered packets.
        assert!(
            r.timeseries
                .last()
                .is_some_and(|s| s.packets_delivered > 1000),
            "{alg}"
        );
    }
}

#[test]
fn line_and_plane_fill_deliver_every_broadcast_once() {
    for (pattern, links) in [("line-fill", 2), ("plane-fill", 4)] {
        let r = run(&format!("[network]\nsystem = \"bgl:4x4x2\"\n[workload]\npattern = \"{pattern}\"\nmessage_bytes = \"8KiB\"\nturn_cycles = 50\n[run]\naudit_cycles = 3000\n"));
        assert!(
            r.complete,
            "{pattern}: {:?} {:?}",
            r.deadlock, r.invariant_error
        );
        let b = &r.traffic["broadcast"];
        let num = |k: &str| b[k].as_f64().expect("a broadcast figure");
        assert_eq!(num("receiving_links"), links as f64);
        // Every node receives every other node's 8 KiB of its line or plane.
        assert_eq!(num("received_payload_bytes"), 32.0 * (num("group_nodes") - 1.0) * 8192.0);
        let frac = num("fraction_of_peak");
        assert!(frac > 0.9 && frac <= 1.0, "{pattern}: {frac}");
    }
}

#[test]
fn port_counters_are_sampled_at_the_period() {
    let r = run("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.2\n[run]\ncycles = 10000\ncounter_cycles = 2500\n");
    let s = &r.counter_samples;
    let cycles: std::collections::BTreeSet<u64> = s.ports.cycle.iter().copied().collect();
    assert_eq!(cycles.into_iter().collect::<Vec<_>>(), vec![2500, 5000, 7500]);
    assert_eq!((s.samples, s.period_cycles, s.requested_period_cycles), (3, 2500, 2500));
    assert_eq!(s.ports.cycle.len(), 3 * 64 * 6);
    for i in 0..s.ports.cycle.len() {
        let (busy, idle, cycle) = (s.ports.busy_cycles[i], s.ports.idle_cycles[i], s.ports.cycle[i]);
        assert!(busy + idle >= cycle - 300 && busy + idle <= cycle + 300, "row {i}: {busy} + {idle} at {cycle}");
    }
}

/// Each port's VC rows add up to its own counters, and a buffer holds no
/// more than its capacity.
#[test]
fn vc_samples_split_the_port_counters() {
    let r = run("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.5\n[run]\ncycles = 8000\nwarmup = 1000\ncounter_cycles = 2000\n");
    let s = &r.counter_samples;
    let vcs = s.vc_names.len();
    assert!(vcs >= 2 && s.vc_buffer_chunks > 0);
    assert_eq!(s.vcs.cycle.len(), s.ports.cycle.len() * vcs);
    let mut held = 0;
    for (i, _) in s.ports.cycle.iter().enumerate() {
        let rows = i * vcs..(i + 1) * vcs;
        for j in rows.clone() {
            assert_eq!((s.vcs.cycle[j], s.vcs.router[j], s.vcs.port[j]), (s.ports.cycle[i], s.ports.router[i], s.ports.port[i]));
            assert!(s.vcs.held_chunks[j] <= s.vc_buffer_chunks);
            held += s.vcs.held_chunks[j];
        }
        assert_eq!(s.vcs.bytes[rows.clone()].iter().sum::<u64>(), s.ports.bytes[i], "port row {i}");
        assert_eq!(s.vcs.packets[rows].iter().sum::<u64>(), s.ports.packets[i], "port row {i}");
    }
    assert!(held > 0, "at half load some buffer holds a packet at a sample");
    assert!(s.ports.bytes.iter().sum::<u64>() > 0);
}

/// A run longer than its sample budget doubles its period and keeps every
/// other sample, evenly spaced.
#[test]
fn a_long_run_coarsens_its_samples() {
    // BG/L: two dynamic VCs, the escape (bubble) VC and the priority VC.
    let limit = tofusim_packet::stats::counter_sample_limit(64 * 6, 4);
    let period = 10;
    let cycles = period * (2 * limit + 40);
    let r = run(&format!("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.05\n[run]\ncycles = {cycles}\ncounter_cycles = {period}\n"));
    let s = &r.counter_samples;
    assert_eq!(s.vc_names.len(), 4);
    assert!(s.period_cycles >= 2 * period && s.samples <= limit + 1, "{} samples every {}", s.samples, s.period_cycles);
    let cycles: std::collections::BTreeSet<u64> = s.ports.cycle.iter().copied().collect();
    assert_eq!(cycles.len() as u64, s.samples);
    assert!(cycles.iter().all(|c| c % s.period_cycles == 0));
    let v: Vec<u64> = cycles.into_iter().collect();
    assert!(v.windows(2).all(|w| w[1] - w[0] == s.period_cycles), "evenly spaced");
}

/// JSQ's statistics: its 2-bit ranges leave most choices to the random
/// tie-break under uniform load (issue 23, case 1); the exact count
/// (`jsq_ranges` = the buffer's tokens) separates most of them.
#[test]
fn jsq_reports_what_its_token_ranges_separate() {
    let text = |router: &str| format!("[network]\nsystem = \"bgl:8x8x8\"\n[router]\n{router}\n[workload]\npattern = \"uniform\"\nload = 0.14\n[run]\ncycles = 12000\nwarmup = 3000\njsq_statistics = true\n");
    let quarters = run(&text(""));
    let j = quarters.jsq.as_ref().expect("adaptive routing with JSQ chooses");
    assert!(j.choices > 10_000);
    assert!(j.separated_fraction > 0.0 && j.separated_fraction < 0.3, "{j:?}");
    // A candidate needs a full packet's tokens: under a quarter free never shows.
    assert_eq!(j.candidate_ranges[0], 0);
    assert!(j.candidate_ranges[3] > j.candidate_ranges[2], "{j:?}");
    let exact = run(&text("jsq_ranges = 32"));
    assert!(exact.jsq.as_ref().unwrap().separated_fraction > 2.0 * j.separated_fraction);
    assert!(run(&text("output_selection = \"random\"")).jsq.is_none());
    // Off unless asked for (it costs about 2% of the engine's instructions).
    assert!(run(&text("").replace("jsq_statistics = true\n", "")).jsq.is_none());
    let refused = experiment::parse("t.toml", &text("output_selection = \"random\"\njsq_ranges = 8")).err().expect("refused").to_string();
    assert!(refused.contains("router.jsq_ranges") && refused.contains("applies with"), "{refused}");
    assert!(experiment::parse("t.toml", &text("jsq_ranges = 33")).is_err(), "more ranges than tokens");
}

#[test]
fn token_returns_to_blocked_outputs_are_counted_apart() {
    // B8's two unblocking probabilities. A grant at an output refused for
    // tokens in an earlier cycle, in the cycle tokens came back to it, is an
    // unblock of both kinds, and that cycle's return to it was counted as a
    // return to a blocked output (returns come before arbitration): so the
    // series over returns to blocked outputs is a probability, and those
    // returns and unblocks are parts of all of them.
    for esc in ["bubble", "dateline-dimension"] {
        let r = run(&format!(
            "[network]\nsystem = \"bgl:8x8x8\"\n[router]\nescape = \"{esc}\"\n[routing]\nalgorithm = \"dor\"\n[workload]\npattern = \"hot-region\"\nload = 0.3\nregion_origin = [0, 0, 0]\nregion_shape = [4, 4, 4]\nhot_fraction = 0.25\n[run]\ncycles = 20000\nsample_cycles = 2000\n"
        ));
        assert!(r.deadlock.is_none() && r.invariant_error.is_none(), "{esc}");
        for s in &r.timeseries {
            assert!(s.blocked_token_returns <= s.token_returns, "{esc}: {s:?}");
            assert!((0.0..=1.0).contains(&s.blocked_unblocking_probability), "{esc}: {s:?}");
            let waited = s.blocked_unblocking_probability * s.blocked_token_returns as f64;
            let all = s.unblocking_probability * s.token_returns as f64;
            assert!(waited <= all + 1e-6, "{esc}: {waited} waited unblocks, {all} unblocks");
        }
        // The hot region blocks outputs, and most returns to them free a packet.
        let late = &r.timeseries[r.timeseries.len() / 2..];
        assert!(late.iter().all(|s| s.blocked_token_returns > 0), "{esc}");
        assert!(late.iter().all(|s| s.blocked_unblocking_probability > 0.3), "{esc}: {late:?}");
    }
}

/// Patterns that need only node ids run on every topology's node space: a
/// trace and a shift along the numbering on a dragonfly and a fat-tree,
/// each packet delivered once; a pattern that needs coordinates is
/// refused, naming those that run there.
#[test]
fn node_id_patterns_run_on_dragonflies_and_fat_trees() {
    let dragonfly = "[network]\ntopology = \"dragonfly\"\nform = \"generic\"\ngroups = 5\nnodes_per_router = 1\nrouters_per_group = 4\nglobal_links_per_router = 1\nlinks_per_group_pair = 1\nlink_bandwidth = \"5GB/s\"\nnic_bandwidth = \"5GB/s\"\n";
    let fattree = "[network]\ntopology = \"fattree\"\nk = 4\nlevels = 2\nlink_bandwidth = \"12.5GB/s\"\n";
    for net in [dragonfly, fattree] {
        let r = run(&format!("{net}[workload]\npattern = \"trace\"\ntrace = [[0, 0, 7, 256], [5, 3, 12, 128], [9, 12, 3, 64]]\n"));
        assert_eq!((r.packets_injected, r.packets_delivered), (3, 3));
        assert!(r.deadlock.is_none() && r.invariant_error.is_none());
        let r = run(&format!("{net}[workload]\npattern = \"shift\"\nhops = 4\nload = 0.2\npacket_bytes = 256\n[run]\ncycles = 40000\nwarmup = 10000\n"));
        assert!(r.packets_delivered > 100, "{net}: {}", r.packets_delivered);
        assert!((r.accepted_load - 0.2).abs() < 0.03, "{net}: accepted {}", r.accepted_load);
        let Err(e) = experiment::run("test.toml", &format!("{net}[workload]\npattern = \"tornado\"\nload = 0.2\n[run]\ncycles = 100\n"), &mut |_| std::ops::ControlFlow::Continue(())) else {
            panic!("tornado ran without coordinates")
        };
        assert_eq!(e.key, "workload.pattern");
        assert!(e.to_string().contains("tornado needs a torus's node coordinates") && e.to_string().contains("uniform, alltoall, trace"), "{e}");
    }
}
