//! Link errors and BG/L's link-level recovery (`[link_errors]`): every
//! packet delivered once and intact however many retransmissions, tokens
//! conserved (the audit runs every few thousand cycles), split runs
//! bit-identical, CRC escapes reported, and the refusals.

use std::ops::ControlFlow;

use tofusim_experiment::experiment;
use tofusim_packet::{RunResult, Split};

fn run(text: &str) -> RunResult {
    experiment::run("<test>", text, &mut |_| ControlFlow::Continue(())).unwrap_or_else(|e| panic!("{e}")).1
}

fn exp(workload: &str, run: &str, errors: &str) -> String {
    format!("[network]\nsystem = \"bgl:4x4x4\"\n[routing]\nalgorithm = \"adaptive\"\n[workload]\n{workload}\n[run]\n{run}\naudit_cycles = 2000\n{errors}")
}

const ALLTOALL: &str = "pattern = \"alltoall\"\nmessage_bytes = 2048";

#[test]
fn every_packet_is_delivered_once_whatever_the_error_rate() {
    let clean = run(&exp(ALLTOALL, "", ""));
    assert!(clean.complete);
    let mut times = vec![clean.completion_cycles.unwrap()];
    for errors in [
        "[link_errors]\npacket_error_rate = 1e-3\n",
        "[link_errors]\npacket_error_rate = 0.02\n",
        "[link_errors]\nbit_error_rate = 1e-5\nburst_error_rate = 0.5\nmean_burst_packets = 20\nmean_gap_packets = 500\n",
    ] {
        let r = run(&exp(ALLTOALL, "", errors));
        assert!(r.complete && r.invariant_error.is_none() && r.deadlock.is_none(), "{errors}: {:?}", r.invariant_error);
        assert_eq!(r.packets_delivered, clean.packets_delivered, "{errors}");
        let le = r.link_errors.as_ref().expect("reported");
        assert!(le.tally.corrupted > 0 && le.tally.retransmissions >= le.tally.corrupted, "{errors}: {le:?}");
        assert_eq!(le.tally.retransmissions, le.tally.corrupted + le.tally.discarded, "{errors}: every caught or discarded transmission is sent again");
        assert!(le.trustworthy && le.crc_mismatch_links.is_empty());
        times.push(r.completion_cycles.unwrap());
    }
    // More errors, longer: 0 < 1e-3 < 2e-2 per packet.
    assert!(times[0] < times[1] && times[1] < times[2], "{times:?}");
}

#[test]
fn no_errors_changes_nothing_but_the_report() {
    let plain = run(&exp(ALLTOALL, "", ""));
    let zero = run(&exp(ALLTOALL, "", "[link_errors]\npacket_error_rate = 0\n"));
    assert_eq!(plain.completion_cycles, zero.completion_cycles);
    assert_eq!(plain.latency.mean, zero.latency.mean);
    let le = zero.link_errors.expect("reported");
    assert_eq!((le.tally.corrupted, le.tally.retransmissions), (0, 0));
    assert!(plain.link_errors.is_none());
}

#[test]
fn open_loop_saturation_with_errors_keeps_the_invariants_and_splits_identically() {
    let text = exp(
        "pattern = \"uniform\"\nload = 1.0",
        "cycles = 120000\nwarmup = 10000",
        "[link_errors]\npacket_error_rate = 0.05\nlinks = [{ node = [0, 0, 0], port = \"x+\", packet_error_rate = 0.4 }]\n",
    );
    let one = run(&text);
    assert!(one.invariant_error.is_none() && one.deadlock.is_none(), "{:?}", one.invariant_error);
    let e = || experiment::engine(experiment::parse("<test>", &text).unwrap());
    let two = e().run_split(Split::threads(2), &mut |_| ControlFlow::Continue(()), |_| ()).expect("result").0;
    let strip = |r: &RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v["sim"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&one), strip(&two));
    // Errors cost throughput: the same load without them carries more.
    let clean = run(&text.replace("[link_errors]\npacket_error_rate = 0.05\nlinks = [{ node = [0, 0, 0], port = \"x+\", packet_error_rate = 0.4 }]\n", ""));
    assert!(clean.accepted_load > one.accepted_load * 1.02, "{} vs {}", clean.accepted_load, one.accepted_load);
}

#[test]
fn a_crc_escape_makes_the_run_untrustworthy() {
    let r = run(&exp(ALLTOALL, "", "[link_errors]\npacket_error_rate = 0.01\ncrc_escape_probability = 0.5\n"));
    assert!(r.complete && r.invariant_error.is_none());
    let le = r.link_errors.expect("reported");
    assert!(le.tally.crc_escapes > 0 && !le.trustworthy);
    assert!(!le.crc_mismatch_links.is_empty() && le.crc_mismatch_links.len() as u64 <= le.tally.crc_escapes);
}

#[test]
fn wrong_link_error_tables_are_refused_naming_the_key() {
    let cases = [
        ("packet_error_rate = 0.1\nbit_error_rate = 1e-9\n", "link_errors.bit_error_rate"),
        ("timeout_cycles = 10\npacket_error_rate = 0.1\n", "link_errors.timeout_cycles"),
        ("packet_error_rate = 1.0\n", "link_errors.packet_error_rate"),
        ("packet_error_rate = 0.1\nburst_error_rate = 0.5\n", "link_errors.burst_error_rate"),
        ("packet_error_rate = 0.1\nretransmission_fifo = 0\n", "link_errors.retransmission_fifo"),
        ("packet_error_rate = 0.1\nlinks = [{ node = [0, 0, 0], port = \"x+\" }]\n", "link_errors.links[0].packet_error_rate"),
        ("packet_error_rate = 0.1\nlinks = [{ node = [0, 0, 0], port = \"w+\", packet_error_rate = 0.2 }]\n", "link_errors.links[0].port"),
        ("packet_error_rate = 0.1\nnoise = 3\n", "link_errors.noise"),
        ("timeout_cycles = 1000\n", "link_errors.packet_error_rate"),
    ];
    for (table, key) in cases {
        let text = exp(ALLTOALL, "", &format!("[link_errors]\n{table}"));
        let e = experiment::parse("<test>", &text).err().unwrap_or_else(|| panic!("{table}: accepted"));
        assert_eq!(e.key, key, "{table}: {e}");
    }
}

fn tofud(slicing: &str) -> String {
    format!(
        "[network]\nsystem = \"fugaku:2x3x2\"\n[workload]\npattern = \"uniform\"\nload = 1.0\n[run]\ncycles = 800000\nwarmup = 80000\naudit_cycles = 20000\n{slicing}"
    )
}

#[test]
fn tofud_slices_packets_over_its_lanes_and_duplicates_them_when_a_lane_goes_bad() {
    // TofuD's links are in split mode: the default format carries the
    // second slice's 64-byte header copy, as the lanes modelled one by one
    // do; a one-lane link has no copy and carries a few per cent more.
    let plain = run(&tofud(""));
    let split0 = run(&tofud("[link_errors]\npacket_slicing = \"split\"\nbit_error_rate = 0\n"));
    let one_lane = run(&tofud("[link_errors]\npacket_slicing = \"split\"\nlanes = 1\nbit_error_rate = 0\n"));
    assert!((split0.accepted_load - plain.accepted_load).abs() < 0.01 * plain.accepted_load, "{} vs {}", split0.accepted_load, plain.accepted_load);
    assert!(plain.accepted_load < one_lane.accepted_load && plain.accepted_load > 0.95 * one_lane.accepted_load);
    // One lane bad: at 1e-4 per bit a 1 KiB slice fails more often than not.
    let bad = "lane_bit_error_rates = [1e-10, 1e-4]\n";
    let split = run(&tofud(&format!("[link_errors]\npacket_slicing = \"split\"\n{bad}")));
    // A short monitoring window, so the links switch early in a short run.
    let dynamic = run(&tofud(&format!("[link_errors]\npacket_slicing = \"dynamic\"\nmonitor_packets = 30\n{bad}")));
    for r in [&split0, &split, &dynamic] {
        assert!(r.invariant_error.is_none() && r.deadlock.is_none(), "{:?}", r.invariant_error);
    }
    let (s, d) = (split.link_errors.as_ref().unwrap(), dynamic.link_errors.as_ref().unwrap());
    assert_eq!((s.tally.duplicate_transmissions, s.tally.mode_switches), (0, 0));
    assert!(d.tally.mode_switches > 0 && d.tally.duplicate_transmissions > d.tally.transmissions / 2, "{d:?}");
    // Duplicate mode carries about half the link; retransmission alone far less.
    assert!(dynamic.accepted_load > 2.0 * split.accepted_load, "{} vs {}", dynamic.accepted_load, split.accepted_load);
    // A mildly bad lane stays split: the same run as plain retransmission.
    let mild = "lane_bit_error_rates = [1e-10, 1e-6]\n";
    let a = run(&tofud(&format!("[link_errors]\npacket_slicing = \"split\"\n{mild}")));
    let b = run(&tofud(&format!("[link_errors]\npacket_slicing = \"dynamic\"\n{mild}")));
    assert_eq!(a.accepted_load, b.accepted_load);
}

#[test]
fn slicing_keys_are_refused_where_they_cannot_apply() {
    let cases = [
        ("packet_slicing = \"split\"\npacket_error_rate = 0.1\n", "link_errors.packet_error_rate"),
        ("packet_slicing = \"split\"\nlane_bit_error_rates = [1e-9]\n", "link_errors.lane_bit_error_rates"),
        ("packet_slicing = \"dynamic\"\n", "link_errors.bit_error_rate"),
        ("bit_error_rate = 1e-9\nlanes = 2\n", "link_errors.lanes"),
        ("packet_slicing = \"dynamic\"\nbit_error_rate = 1e-9\nsplit_below = 0.5\nduplicate_above = 0.1\n", "link_errors.split_below"),
        // A split link never changes mode: the monitor's keys would do nothing.
        ("packet_slicing = \"split\"\nbit_error_rate = 1e-9\nduplicate_above = 0.1\n", "link_errors.duplicate_above"),
        ("packet_slicing = \"split\"\nbit_error_rate = 1e-9\nmonitor_packets = 5\n", "link_errors.monitor_packets"),
    ];
    for (table, key) in cases {
        let e = experiment::parse("<test>", &tofud(&format!("[link_errors]\n{table}"))).err().unwrap_or_else(|| panic!("{table}: accepted"));
        assert_eq!(e.key, key, "{table}: {e}");
    }
    // The duplicate threshold follows the lanes: where retransmission's
    // goodput falls to 1/lanes, (lanes - 1) / (lanes + 3).
    // Tofu1 and Tofu2 links do not slice (TofuD's mechanism): modelled
    // as a variant only with `lanes` given, and refused without.
    for (system, lanes, want) in [("fugaku:2x3x2", "", 0.2), ("fx100:2x3x2", "lanes = 4\n", 3.0 / 7.0), ("k:2x3x2", "lanes = 8\n", 7.0 / 11.0)] {
        let text = tofud(&format!("[link_errors]\npacket_slicing = \"dynamic\"\nbit_error_rate = 1e-9\n{lanes}")).replace("fugaku:2x3x2", system);
        let s = experiment::parse("<test>", &text).ok().and_then(|e| e.link_errors).and_then(|l| l.slicing).expect("parsed");
        assert!((s.duplicate_above - want).abs() < 1e-12, "{system}: {}", s.duplicate_above);
    }
    for system in ["k:2x3x2", "fx100:2x3x2"] {
        let text = tofud("[link_errors]\npacket_slicing = \"split\"\nbit_error_rate = 1e-9\n").replace("fugaku:2x3x2", system);
        let e = experiment::parse("<test>", &text).err().expect("refused");
        assert!(e.key == "link_errors.lanes" && e.to_string().contains("TofuD"), "{system}: {e}");
    }
    // BG/L has no lanes to name: slicing needs `lanes` there.
    let e = experiment::parse("<test>", &exp(ALLTOALL, "", "[link_errors]\npacket_slicing = \"split\"\nbit_error_rate = 1e-9\n")).err().expect("refused");
    assert_eq!(e.key, "link_errors.lanes");
}
