"""`tofusim check`: proofs, cycles, exit codes and refusals from the command line
(every preset family and routing mode is checked in crates/tofusim-experiment/tests/deadlock_check.rs)."""

import json

from conftest import ROOT


def test_a_bubble_torus_is_proved_and_says_how(run):
    r = run("check", "bgl:4x4x4", "--routing", "adaptive", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["verdict"] == "deadlock-free" and "bubble" in out["method"]
    assert out["vc_scheme"] == {"dynamic_vcs": 2, "escape": "bubble", "adaptive": True, "virtual_output_queues": False}
    assert out["cycle"] == [] and out["dependencies"] > out["escape_dependencies"] > 0
    assert out["states"] <= out["estimated_states"]


def test_the_ring_without_escape_prints_its_cycle_and_exits_1(run):
    r = run("check", "examples/experiments/ring-no-escape-deadlock.toml", "--json")
    assert r.code == 1, r.err
    out = json.loads(r.out)
    assert out["verdict"] == "cycle"
    cycle = out["cycle"]
    # Eight routers of the ring, each channel leading to the next router.
    assert [c["router"] for c in cycle] == list(range(8))
    assert {c["port_name"] for c in cycle} == {"x+"} and {c["vc_name"] for c in cycle} == {"dynamic-0"}
    text = run("check", "examples/experiments/ring-no-escape-deadlock.toml")
    assert text.code == 1 and "a dependency cycle" in text.out and "dynamic-0" in text.out


def test_the_unfixed_bubble_is_not_proven(run):
    r = run("check", "examples/experiments/bubble-unfixed-deadlock.toml", "--json")
    assert r.code == 1
    out = json.loads(r.out)
    assert out["verdict"] == "not-proven" and all(c["vc_name"] == "escape" for c in out["cycle"])


def test_routing_option_over_a_file_and_the_fat_tree_switch(run, tmp_path):
    tree = (ROOT / "examples/systems/fattree-tapered.toml").read_text()
    p = tmp_path / "tree.toml"
    p.write_text(tree + '\n[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 1\n')
    for mode in ("d-mod-k", "adaptive"):
        r = run("check", str(p), "--routing", mode, "--json")
        assert r.code == 0, r.err
        out = json.loads(r.out)
        assert out["routing"] == mode and out["vc_scheme"]["virtual_output_queues"]
        assert out["method"].startswith("Dally-Seitz")


def test_bad_input_exits_2_in_one_line(run, tmp_path):
    for args, needle in [
        (("k",), "resized"),  # too large to follow every route
        (("nosuch",), "unknown system"),
        (("bgl:4x4x4", "--routing", "zigzag"), "routing.algorithm"),
        ((str(tmp_path / "missing.toml"),), "cannot read"),
    ]:
        r = run("check", *args)
        assert r.code == 2, (args, r.err)
        assert needle in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
