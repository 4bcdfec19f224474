"""Resource budgets (issue 18): a run's memory is estimated before anything
large is built, refused above the memory available or --max-memory, and no
run outgrows twice its estimate; idle stretches make no samples."""

import json

import pytest

from conftest import ROOT

# What the Python interpreter and the loaded libraries take before any run
# (measured: about 22 MiB); the estimate covers the engine only.
INTERPRETER_BYTES = 48 << 20

HUGE = """
[network]
topology = "torus"
shape = [1024, 1024, 1024]
link_bandwidth = "1GB/s"
[workload]
pattern = "uniform"
load = 0.01
[run]
cycles = 10
"""


def write(tmp_path, text):
    p = tmp_path / "exp.toml"
    p.write_text(text)
    return str(p)


def test_a_run_too_large_for_the_machine_is_refused_before_it_starts(run, tmp_path):
    r = run("run", write(tmp_path, HUGE), timeout=30)
    assert r.code == 2, r.err
    assert "memory: the run needs about" in r.err and "routing tables" in r.err and "--max-memory" in r.err
    assert "Traceback" not in r.err and "panicked" not in r.err


def test_max_memory_limits_a_run(run):
    r = run("run", "bench/uniform-8.toml", "--max-memory", "1MiB")
    assert r.code == 2 and "more than the --max-memory limit" in r.err
    r = run("run", "bench/uniform-8.toml", "--max-memory", "1GiB", "--json")
    assert r.code == 0, r.err


@pytest.mark.parametrize("path", [
    "bench/uniform-8.toml",
    "bench/uniform-16.toml",
    "examples/experiments/alltoall-8x8x8.toml",
    "examples/experiments/uniform-8x8x8.toml",
    "examples/experiments/dragonfly-adversarial.toml",
    "examples/experiments/fattree-uniform.toml",
    "examples/experiments/tofu-neighbor-put.toml",
])
def test_no_run_outgrows_twice_its_estimate(run, path):
    r = run("run", path, "--json")
    assert r.code in (0, 1), r.err
    sim = r.json()["sim"]
    engine_peak = sim["peak_memory_bytes"] - INTERPRETER_BYTES
    assert engine_peak <= 2 * sim["estimated_memory_bytes"], (path, sim["peak_memory_bytes"], sim["estimated_memory_bytes"])


def test_an_idle_stretch_makes_no_samples(run, tmp_path):
    # Two trace rows 2 x 10^12 cycles apart: one sample per window would be
    # 2 x 10^9 samples (gigabytes, hours).
    text = '[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "trace"\ntrace = [[0, 0, 5, 256], [2000000000000, 1, 6, 256]]\n'
    r = run("run", write(tmp_path, text), "--json", timeout=60)
    assert r.code == 0, r.err
    j = r.json()
    assert j["complete"] and j["packets_delivered"] == 2
    assert j["completion_cycles"] > 2_000_000_000_000
    assert len(j["timeseries"]) <= 4


@pytest.mark.parametrize("model", ["flow-rounds", "packet"])
def test_a_collective_too_large_for_the_machine_is_refused(run, model):
    """Issue 18: the flow-rounds model (the way out the packet model's
    refusal recommends) aborted out of memory on bgl:1024x1024x1024."""
    r = run("coll", "allreduce", "--algo", "ring", "--size", "8", "--system", "bgl:1024x1024x1024", "--model", model, timeout=30)
    assert r.code == 2, r.err
    # The packet model refuses the schedule's size first, with its way out.
    assert ("more than the memory available" in r.err or "--model flow" in r.err) and "Traceback" not in r.err


def test_a_backlog_growing_past_saturation_is_stopped_by_the_budget(run, tmp_path):
    """An open-loop run far past saturation queues packets at its sources
    without end: the run stops when more are alive than the memory left
    holds, exit 2, with what was measured (no memory blow-up)."""
    text = '[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "uniform"\nload = 1.0\n[run]\ncycles = 100000000\n'
    r = run("run", write(tmp_path, text), "--max-memory", "64MiB", "--json", timeout=120)
    assert r.code == 2, r.err
    j = r.json()
    assert j["complete"] is False and j["budget_exceeded"] > 0 and j["sim"]["cycles"] < 100_000_000
    assert j["sim"]["peak_memory_bytes"] < INTERPRETER_BYTES + 2 * (64 << 20)
    assert "sources' queues grow" in r.err


FLOW_ALLTOALL = '[network]\nsystem = "bgl:{shape}"\n[workload]\npattern = "alltoall"\nmessage_bytes = 4096\n'


@pytest.mark.parametrize("path", [
    "examples/experiments/alltoall-8x8x8.toml",
    "examples/experiments/uniform-8x8x8.toml",
    "examples/experiments/dragonfly-adversarial.toml",
])
def test_no_flow_model_run_outgrows_twice_its_estimate(run, path):
    r = run("run", path, "--model", "flow", "--json")
    assert r.code == 0, r.err
    sim = r.json()["sim"]
    assert sim["peak_memory_bytes"] - INTERPRETER_BYTES <= 2 * sim["estimated_memory_bytes"], (path, sim)


def test_a_flow_model_run_too_large_is_refused_before_it_starts(run, tmp_path):
    # 16^3 nodes all-to-all: 16.8 million pairs, each up to 6 routes.
    r = run("run", write(tmp_path, FLOW_ALLTOALL.format(shape="16x16x16")), "--model", "flow", timeout=30)
    assert r.code == 2, r.err
    assert "memory: the flow model needs about" in r.err and "GiB" in r.err and "--max-memory" in r.err
    r = run("run", write(tmp_path, FLOW_ALLTOALL.format(shape="4x4x4")), "--model", "flow", "--max-memory", "1KiB")
    assert r.code == 2 and "more than the --max-memory limit" in r.err
