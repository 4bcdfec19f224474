//! `tofusim check` on every preset family and routing mode (resized where
//! the full system is too large to follow every route), the examples that
//! deadlock, and agreement with the engine's run-time detector.

use std::ops::ControlFlow;

use tofusim_experiment::check::{check, system_text, with_routing, CheckResult};
use tofusim_experiment::experiment;

fn checked(file: &str, text: &str) -> CheckResult {
    let r = check(file, text, &mut |_, _| ControlFlow::Continue(())).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{file}: {} {} {} states in {:.2} s", r.verdict, r.routing, r.states, r.wall_seconds);
    r
}

fn system(name: &str, routing: Option<&str>) -> CheckResult {
    checked(&format!("{name} {routing:?}"), &system_text(name, routing))
}

const TORI: &[&str] = &["bgl:4x4x4", "bgl-midplane", "bgq:2x2x2x2x2", "k:2x3x2", "fx10:2x3x2", "fx100:2x3x2", "fugaku:2x3x2"];
const DRAGONFLIES: &[&str] = &["aries-2g", "aries-1g", "piz-daint:2"];
const FAT_TREES: &[&str] = &["summit:2", "oakforest-pacs:4", "taihulight:2"];

#[test]
fn every_torus_preset_is_free_of_deadlock_in_both_modes() {
    for name in TORI {
        for mode in ["adaptive", "dor"] {
            let tofu = ["k:", "fx10:", "fx100:", "fugaku:"].iter().any(|p| name.starts_with(p));
            if tofu && mode == "adaptive" {
                // The Tofu routers have no dynamic VCs: adaptive routing is
                // refused there, not run as dimension order under its name.
                let e = check("t", &system_text(name, Some(mode)), &mut |_, _| ControlFlow::Continue(())).err().expect("refused");
                assert!(e.to_string().contains("routing.algorithm") && e.to_string().contains("no dynamic VCs"), "{e}");
                continue;
            }
            let r = system(name, Some(mode));
            assert!(r.proved(), "{name} {mode}: {r:?}");
            assert!(r.dependencies > 0 && r.cycle.is_empty());
        }
    }
}

#[test]
fn every_dragonfly_and_fat_tree_preset_is_free_of_deadlock_in_every_mode() {
    for name in DRAGONFLIES {
        // piz-daint:2 is aries-2g's shape: its minimal and UGAL routes suffice.
        let modes: &[&str] = if *name == "piz-daint:2" {
            &["minimal", "ugal"]
        } else {
            &["minimal", "valiant", "ugal", "ugal-g", "adaptive-prefer-minimal", "adaptive-0", "adaptive-3"]
        };
        for mode in modes {
            let r = system(name, Some(mode));
            assert!(r.proved(), "{name} {mode}: {r:?}");
        }
    }
    for name in FAT_TREES {
        for mode in ["d-mod-k", "random"] {
            let r = system(name, Some(mode));
            assert!(r.proved(), "{name} {mode}: {r:?}");
        }
        // Their leaves' up ports lie beyond the engine's 16-port adaptive
        // mask: the engine refuses adaptive routing there, and so does the check.
        let e = check(name, &system_text(name, Some("adaptive")), &mut |_, _| ControlFlow::Continue(())).unwrap_err();
        assert!(e.expected.contains("16-port"), "{name}: {e}");
    }
    let tree = include_str!("../../../examples/systems/fattree-tapered.toml");
    for mode in ["d-mod-k", "random", "adaptive"] {
        let text = format!("{tree}\n[routing]\nalgorithm = \"{mode}\"\n[workload]\npattern = \"uniform\"\nload = 0.1\n[run]\ncycles = 1\n");
        let r = checked(mode, &text);
        assert!(r.proved() && r.vc_scheme.virtual_output_queues, "{mode}: {r:?}");
    }
}

#[test]
fn dateline_escapes_pass_and_the_examples_that_deadlock_show_their_cycles() {
    let base = system_text("bgl:4x4x4", Some("adaptive"));
    for escape in ["dateline-dimension", "dateline-direction"] {
        let text = format!("{base}\n[router]\nescape = \"{escape}\"\n");
        assert!(checked(escape, &text).proved(), "{escape}");
    }
    let ring = include_str!("../../../examples/experiments/ring-no-escape-deadlock.toml");
    let r = checked("ring-no-escape", ring);
    assert_eq!(r.verdict, "cycle");
    assert!(r.cycle.len() >= 2 && r.cycle.iter().all(|c| c.vc_name.starts_with("dynamic")), "{:?}", r.cycle);
    let unfixed = include_str!("../../../examples/experiments/bubble-unfixed-deadlock.toml");
    let r = checked("bubble-unfixed", unfixed);
    assert_eq!(r.verdict, "not-proven");
    assert!(r.cycle.len() == 4 && r.cycle.iter().all(|c| c.vc_name == "escape" && c.port_name == "x+"), "{:?}", r.cycle);
    // The same ring with the BG/L fix is proved.
    assert!(checked("bubble", &unfixed.replace("bubble-unfixed", "bubble")).proved());
}

#[test]
fn the_verdict_agrees_with_the_run_time_detector_on_saturating_runs() {
    // Proved networks run a saturating load without a deadlock; the
    // refuted ring deadlocks.
    let saturate = |text: String| text.replace("load = 0.1", "load = 1.0").replace("cycles = 1", "cycles = 60000");
    for (name, mode) in [("bgl:4x4x4", "adaptive"), ("bgl:4x4x4", "dor"), ("k:2x3x2", "dor"), ("aries-2g", "ugal"), ("summit:2", "d-mod-k")] {
        let text = system_text(name, Some(mode));
        assert!(checked(name, &text).proved());
        let r = experiment::run(name, &saturate(text), &mut |_| ControlFlow::Continue(())).unwrap().1;
        assert!(r.deadlock.is_none() && r.invariant_error.is_none(), "{name} {mode}: {:?}", r.deadlock);
    }
    let ring = include_str!("../../../examples/experiments/ring-no-escape-deadlock.toml");
    let r = experiment::run("ring", ring, &mut |_| ControlFlow::Continue(())).unwrap().1;
    assert!(r.deadlock.is_some());
}

#[test]
fn refusals_name_the_key() {
    let fill = "[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"plane-fill\"\n";
    let e = check("fill", fill, &mut |_, _| ControlFlow::Continue(())).unwrap_err();
    assert_eq!(e.key, "workload.pattern");
    let e = check("x", &with_routing("x", &system_text("bgl:4x4x4", None), "zigzag").unwrap(), &mut |_, _| ControlFlow::Continue(())).unwrap_err();
    assert_eq!(e.key, "routing.algorithm");
    let e = check("k", &system_text("k", None), &mut |_, _| ControlFlow::Continue(())).unwrap_err();
    assert_eq!(e.key, "network");
    assert!(e.expected.contains("resized"), "{}", e.expected);
}
