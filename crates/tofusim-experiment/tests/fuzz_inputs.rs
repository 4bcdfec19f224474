//! Fuzzing every input parser (issue 18): experiment and system files built
//! from the real keys with values of every kind (in and out of range, wrong
//! types, huge, negative, empty), system names with resizes, units, and
//! communication lists. Each input must give a result or a `ConfigError` —
//! never a panic — and an accepted experiment must build and run a short
//! stretch with its invariants holding, or be refused by the memory budget.
//!
//! Cases per property: `TOFUSIM_FUZZ_CASES` (default 200, the short run in
//! `make test`; `make fuzz` runs 250,000 per property, over 10⁶ in all).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tofusim_experiment::{experiment, system, units};

fn cases() -> u32 {
    std::env::var("TOFUSIM_FUZZ_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(200)
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() })
}

/// A TOML value of any kind, often near the edges of what keys accept.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (-3i64..3000).prop_map(|i| i.to_string()),
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(-1), Just(0), Just(1 << 40)].prop_map(|i| i.to_string()),
        (-1e3f64..1e3).prop_map(|f| format!("{f:.3}")),
        Just("1e300".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("true".to_string()),
        "[a-z0-9:x./ -]{0,12}".prop_map(|s| format!("{s:?}")),
        prop_oneof![Just("\"5GB/s\""), Just("\"1e300GB/s\""), Just("\"1KiB\""), Just("\"0B\""), Just("\"-3MB/s\""), Just("\"12 parsecs\"")].prop_map(String::from),
        prop::collection::vec(-2i64..70, 0..5).prop_map(|v| format!("{v:?}")),
        prop::collection::vec("[a-z]{0,3}", 0..4).prop_map(|v| format!("{v:?}")),
        Just("[[0, 1, 64, 32], [5, 2, 3]]".to_string()),
        Just("{ node = [0, 0, 0], port = \"x+\" }".to_string()),
        Just("[]".to_string()),
    ]
}

const NETWORK_KEYS: &[&str] = &[
    "system", "topology", "shape", "wrap", "axis_names", "link_bandwidth", "nic_interfaces", "nic_bandwidth", "generation",
    "groups", "routers_per_group", "nodes_per_router", "global_links_per_router", "form", "k", "levels", "taper", "down", "up",
    "host_bandwidth", "abc", "colour",
];
/// Systems that build (most of the time) and some that must be refused.
const SYSTEMS: &[&str] = &[
    "\"bgl:4x4x4\"", "\"bgl:2x2x2\"", "\"k:2x3x2\"", "\"k:1x1x1\"", "\"fugaku:2x3x2\"", "\"aries-2g\"", "\"piz-daint:2\"", "\"summit:2\"",
    "\"bgl-midplane\"", "\"oakforest-pacs:4\"",
];
const BAD_SYSTEMS: &[&str] = &["\"k:100000x100000x100000\"", "\"nosuch\"", "\"k:0x1x1\"", "\"summit:4x4\"", "\"k:2x3\"", "\"\""];
const ROUTER_KEYS: &[&str] = &[
    "escape", "dynamic_vcs", "priority_vc", "vc_buffer", "overhead_bytes", "hop_latency_cycles", "token_latency_cycles", "paths",
    "class_vcs", "arbitration", "slq_fraction", "network_priority", "output_selection", "injection_fifos", "priority_fifos",
    "injection_fifo", "fifo_select", "virtual_output_queues",
];
const WORKLOAD_KEYS: &[&str] = &[
    "pattern", "load", "packet_bytes", "header_bytes", "min_packet_bytes", "message_bytes", "packets_per_pair", "hops", "axis",
    "repetitions", "region_shape", "region_origin", "trace", "turn_cycles", "hot_node",
];
const PATTERNS: &[&str] = &[
    "\"uniform\"", "\"alltoall\"", "\"hot-spot\"", "\"shift\"", "\"trace\"", "\"pingpong\"", "\"transpose\"", "\"group-shift\"", "\"line-fill\"",
];
const RUN_KEYS: &[&str] = &["warmup", "seed", "sample_cycles", "deadlock_cycles", "audit_cycles", "counter_cycles"];

/// `key = value` lines for a table: empty most of the time (so that many
/// files are accepted and reach the engine), else one to three fuzzed keys.
fn table(keys: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just(String::new()),
        1 => prop::collection::btree_map(prop::sample::select(keys), value(), 1..4)
            .prop_map(|kv| kv.into_iter().map(|(k, v)| format!("{k} = {v}\n")).collect()),
    ]
}

/// An experiment file: a small system most of the time (so accepted files
/// run), with router, routing, workload and run tables of fuzzed keys.
fn experiment_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![9 => prop::sample::select(SYSTEMS), 1 => prop::sample::select(BAD_SYSTEMS)],
        table(NETWORK_KEYS),
        table(ROUTER_KEYS),
        prop_oneof![
            3 => Just(None),
            1 => prop::sample::select(&["\"adaptive\"", "\"dor\"", "\"minimal\"", "\"ugal\"", "\"d-mod-k\"", "\"zigzag\""][..]).prop_map(Some),
        ],
        prop_oneof![3 => Just("\"uniform\""), 2 => prop::sample::select(PATTERNS)],
        table(WORKLOAD_KEYS),
        table(RUN_KEYS),
        prop_oneof![1 => Just(None), 4 => (0.0f64..1.0).prop_map(Some)],
    )
        .prop_map(|(sys, net, router, routing, pattern, workload, run, load)| {
            let mut t = format!("[network]\nsystem = {sys}\n{net}\n[router]\n{router}\n");
            if let Some(a) = routing {
                t += &format!("[routing]\nalgorithm = {a}\n");
            }
            t += &format!("[workload]\npattern = {pattern}\n");
            if let Some(l) = load {
                t += &format!("load = {l:.3}\n");
            }
            t += &format!("{workload}\n[run]\ncycles = 3000\n{run}\n");
            t
        })
}

/// An experiment that parsed: build it and run a short stretch, unless the
/// memory budget refuses it; the invariants must hold.
fn run_briefly(text: &str) -> Result<(), TestCaseError> {
    let Ok(mut exp) = experiment::parse("<fuzz>", text) else { return Ok(()) };
    if experiment::check_memory("<fuzz>", &mut exp, Some(256 << 20)).is_err() {
        return Ok(());
    }
    // Keys duplicated in the fuzzed table may set a long run: keep it short.
    exp.run.cycles = Some(exp.run.cycles.unwrap_or(3000).min(3000));
    exp.run.warmup = exp.run.warmup.min(1000);
    let r = experiment::engine(exp).run(&mut |_| std::ops::ControlFlow::Continue(()));
    prop_assert!(r.invariant_error.is_none(), "{text}\n{:?}", r.invariant_error);
    Ok(())
}

#[test]
fn experiment_files_parse_or_are_refused_and_accepted_ones_run() {
    let accepted = std::cell::Cell::new(0u32);
    runner()
        .run(&experiment_text(), |text| {
            match experiment::parse("<fuzz>", &text) {
                Ok(_) => accepted.set(accepted.get() + 1),
                Err(e) if std::env::var("TOFUSIM_FUZZ_VERBOSE").is_ok() => eprintln!("{e}"),
                Err(_) => {}
            }
            run_briefly(&text)
        })
        .unwrap();
    // The generator must reach the engine, not only the refusals.
    eprintln!("{} of {} fuzzed experiment files accepted", accepted.get(), cases());
    assert!(accepted.get() * 20 >= cases(), "only {} of {} accepted", accepted.get(), cases());
}

#[test]
fn arbitrary_text_never_panics_the_parser() {
    runner()
        .run(&"(\\PC|\n){0,200}", |text| {
            let _ = experiment::parse("<fuzz>", &text);
            let _ = system::from_toml("<fuzz>", &text);
            Ok(())
        })
        .unwrap();
}

#[test]
fn system_names_resolve_or_are_refused() {
    let name = (
        prop::sample::select(&["k", "bgl", "fugaku", "fx10", "aries-720", "piz-daint", "summit", "taihulight", "oakforest-pacs", "bgq", "x"][..]),
        prop::option::of("[0-9x:m/ -]{0,14}"),
    );
    runner()
        .run(&name, |(base, tail)| {
            let spec = format!("{base}{}", tail.map(|t| format!(":{t}")).unwrap_or_default());
            let _ = system::from_name(&spec);
            Ok(())
        })
        .unwrap();
}

#[test]
fn units_parse_or_are_refused() {
    runner()
        .run(&"[0-9eE.+-]{0,8}[ ]?[kKMGTi]{0,2}[Bb]?(/s)?", |text| {
            let _ = units::parse_rate(&text);
            let _ = units::parse_size(&text);
            Ok(())
        })
        .unwrap();
}
