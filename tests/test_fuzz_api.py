"""Fuzzing the Python API (issue 37): every public function called with one
argument replaced by an arbitrary value (wrong types, huge and negative
numbers, NaN, lone surrogates, bytes, callables of the wrong arity, ...)
while the others stay small and valid. Each call must return or raise
``tofusim.ConfigError`` — never a bare TypeError, OverflowError,
ValueError, UnicodeEncodeError, a Rust panic (pyo3's PanicException is
not an Exception) or an allocator abort.

Examples per test: ``TOFUSIM_FUZZ_EXAMPLES`` (default 40; ``make fuzz``
runs thousands)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tofusim
from tofusim import ConfigError
from tofusim.sweep import parse_axis, run_sweep

EXAMPLES = int(os.environ.get("TOFUSIM_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SMALL_RUN = '[network]\nsystem = "bgl:2x2x2"\n[workload]\npattern = "uniform"\nload = 0.05\n[run]\ncycles = 1500\nwarmup = 500\n'
SMALL_FILE = Path(tempfile.mkdtemp(prefix="tofusim-fuzz-")) / "small.toml"
SMALL_FILE.write_text(SMALL_RUN)

#: Values of every kind a careless or hostile caller hands in.
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**32, 2**63, 2**64, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "\ud800", "1KiB", "64KiB", "-1", "nan", "inf", "none", "2h", "k", "bgl:2x2x2", "ring", "packet", "flow"]),
    st.binary(max_size=8),
    st.lists(st.integers(min_value=-5, max_value=2**33), max_size=4),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.sampled_from([lambda: None, lambda a, b, c: None, print, object()]),
)


def survives(call: Callable[[], Any]) -> None:
    """The call returns or raises ConfigError; anything else fails."""
    try:
        call()
    except ConfigError:
        pass


# One entry per public function: its valid small arguments, then fuzz one.
CASES: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "run": (tofusim.run, {"text": SMALL_RUN, "file": "<fuzz>", "progress": None, "ports": False, "threads": 1,
                          "model": "packet", "max_memory": None, "keep_partial": False, "notice": None, "max_minutes": None}),
    "coll": (tofusim.coll, {"op": "allreduce", "algo": "ring", "size_bytes": 64, "system": "bgl:2x2x2", "root": 0, "segment_bytes": None,
                            "tnis": None, "descriptor": "direct", "cache_injection": True, "cmg": "near", "verify": False, "seed": 1,
                            "progress": None, "model": "packet", "keep_partial": False, "counter_cycles": 0, "steps": False,
                            "max_minutes": None}),
    "collective_schedule": (tofusim.collective_schedule, {"op": "allreduce", "algo": "ring", "ranks": 4, "size_bytes": 64, "root": 0,
                                                          "shape": None, "segment_bytes": 65536, "tnis": 4}),
    "topo": (tofusim.topo, {"system": "bgl:2x2x2"}),
    "topo_toml": (tofusim.topo_toml, {"text": '[network]\nsystem = "bgl:2x2x2"\n', "file": "<fuzz>"}),
    "System": (tofusim.System, {"name": "bgl:2x2x2"}),
    "topo_file": (tofusim.topo_file, {"path": "examples/experiments/uniform-8x8x8.toml"}),
    "run_file": (tofusim.run_file, {"path": str(SMALL_FILE), "max_minutes": None}),
    "write_report": (tofusim.write_report, {"run_dir": "no-such-run-dir", "out": None}),
}


@pytest.mark.parametrize("name", sorted(CASES))
@FUZZ
@given(data=st.data())
def test_every_argument_of_every_function(name, data):
    fn, valid = CASES[name]
    key = data.draw(st.sampled_from(sorted(valid)), label="argument")
    value = data.draw(HOSTILE, label=key)
    args = {**valid, key: value}
    survives(lambda: fn(**args))


@FUZZ
@given(data=st.data())
def test_replay_arguments(tmp_path_factory, data):
    from otf2_cases import two_rank_trace

    trace = tmp_path_factory.getbasetemp() / "fuzz-trace"
    if not trace.exists():
        two_rank_trace(trace)
    valid = {"trace": str(trace), "system": "bgl:2x1x1", "model": "flow", "order": None, "compute_scale": 1.0, "seed": 1,
             "algorithms": None, "counter_cycles": 0, "max_minutes": None}
    key = data.draw(st.sampled_from(sorted(valid)), label="argument")
    args = {**valid, key: data.draw(HOSTILE, label=key)}
    survives(lambda: tofusim.replay(**args))


@FUZZ
@given(data=st.data())
def test_experiment_and_sweep_arguments(data):
    """Experiment keywords and set(), and a sweep of an Experiment."""
    value = data.draw(HOSTILE, label="value")
    key = data.draw(st.sampled_from(["workload.load", "run.cycles", "run.seed", "network.system", "workload.pattern", "router.vcs", "nope.x"]),
                    label="key")
    e = tofusim.Experiment("bgl:2x2x2", workload={"pattern": "uniform", "load": 0.05}, run={"cycles": 1500, "warmup": 500})
    survives(lambda: tofusim.run(e.set(key, value)))
    survives(lambda: tofusim.Experiment(value, workload={"pattern": "uniform", "load": 0.05}))
    jobs = data.draw(HOSTILE, label="jobs")
    survives(lambda: run_sweep(e, [parse_axis("workload.load=0.02,0.04")], jobs=jobs))
    survives(lambda: run_sweep(value, [parse_axis("workload.load=0.02")]))

