//! What the engine's end-to-end tests share: runs from experiment text on
//! threads, and the comparison of whole results (a split run must equal
//! the unsplit one in everything but the simulator's own wall time,
//! memory and partition loads). Each test file takes what it needs.
#![allow(dead_code)]

use std::ops::ControlFlow;

use tofusim_experiment::experiment;
use tofusim_packet::RunResult;

/// The experiment `text` on `threads` threads of this process.
pub fn run_threads(text: &str, threads: usize) -> RunResult {
    let split = tofusim_packet::Split { threads, transport: None };
    let (_, r) = experiment::run_split("test.toml", text, split, &mut |_| ControlFlow::Continue(())).unwrap_or_else(|e| panic!("{e}"));
    r.expect("an in-process run has its result")
}

pub fn run(text: &str) -> RunResult {
    run_threads(text, 1)
}

/// No invariant broken, no deadlock.
pub fn clean(r: &RunResult) {
    assert!(r.invariant_error.is_none(), "{:?}", r.invariant_error);
    assert!(r.deadlock.is_none(), "{:?}", r.deadlock);
}

/// The result as JSON, without what depends on the machine or the split.
pub fn canonical(r: &RunResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).expect("results serialise");
    let sim = v["sim"].as_object_mut().expect("sim");
    for k in ["wall_seconds", "peak_memory_bytes", "simulated_us_per_wall_second", "partitions"] {
        sim.remove(k);
    }
    v
}

/// The first few paths at which two JSON values differ.
pub fn diff(a: &serde_json::Value, b: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    use serde_json::Value::{Array, Object};
    if out.len() >= 8 {
        return;
    }
    match (a, b) {
        (Object(x), Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => diff(v, w, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k} missing on the right")),
                }
            }
        }
        (Array(x), Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {} vs {}", short(a), short(b))),
        _ => {}
    }
}

fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.len() > 120 { format!("{}… ({} chars)", &s[..120], s.len()) } else { s }
}

/// Where two runs' canonical results differ (empty: identical).
pub fn differences(a: &RunResult, b: &RunResult) -> Vec<String> {
    let mut d = Vec::new();
    diff(&canonical(a), &canonical(b), "", &mut d);
    d
}
