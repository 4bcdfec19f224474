"""Fuzzing the command line (issue 18): generated arguments and files for
every command, run in-process through ``tofusim.cli.main`` so that a
Python traceback or a Rust panic (pyo3's PanicException is not an
Exception) fails the test. Every input must end as exit 0 or 2 — or 1 with
a deadlock report, the one legitimate failure of a run.

Examples per test: ``TOFUSIM_FUZZ_EXAMPLES`` (default 40, the short run in
``make test``; ``make fuzz`` runs thousands). Inputs that ever failed are
kept in ``tests/fuzz_corpus/`` and replayed by
``test_the_corpus_of_past_failures``.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tofusim import collective_algorithms
from tofusim.cli import main

from conftest import ROOT

EXAMPLES = int(os.environ.get("TOFUSIM_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CORPUS = ROOT / "tests" / "fuzz_corpus"


def call(argv: list[str]) -> tuple[int, str]:
    """Runs ``tofusim ARGV`` in this process: exit code and stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def check(argv: list[str], done: tuple[int, str] | None = None) -> None:
    code, err = done or call(argv)
    assert "Traceback" not in err and "internal error" not in err and "panicked" not in err, (argv, err)
    assert code in (0, 2) or (code == 1 and "deadlock" in err), (argv, code, err)
    if code == 2:
        assert err.count("\n") == 1 and len(err) < 1200, (argv, err)


# Mostly inputs that are accepted (so the engines run), often ones that
# must be refused.
GOOD_SYSTEMS = st.sampled_from(["k:1x1x1", "k:2x3x2", "bgl:2x2x2", "bgl:4x4x4", "fugaku:1x1x1", "aries-2g/minimal", "summit:2"])
BAD_SYSTEMS = st.one_of(
    st.sampled_from(["nosuch", "k:0x1x1", "k:100000x100000x100000", "", "k:", "bgl:1024x1024x1024", "aries-2g/zigzag"]),
    st.text(alphabet="kbglfugaxm0123456789:/-", max_size=16),
)
SYSTEM_NAMES = st.one_of(GOOD_SYSTEMS, GOOD_SYSTEMS, BAD_SYSTEMS)
GOOD_SIZES = st.sampled_from(["1", "8", "1KiB", "4KiB", "100"])
SIZES = st.one_of(GOOD_SIZES, GOOD_SIZES, st.sampled_from(["0", "-5", "1e3", "12 parsecs", "1e300", "", "999999999999999999999"]), st.text(max_size=8))
INTS = st.one_of(st.integers(-10, 300).map(str), st.sampled_from(["-1", "0", "99", "4294967296", "x", ""]))


VALID_PAIRS = [(op, a["name"]) for op, algos in collective_algorithms().items() for a in algos]
OP_ALGO = st.one_of(
    st.sampled_from(VALID_PAIRS), st.sampled_from(VALID_PAIRS), st.sampled_from(VALID_PAIRS),
    st.tuples(st.sampled_from(["allreduce", "bcast", "nosuch"]), st.sampled_from(["ring", "nosuch", ""])),
)


@FUZZ
@given(
    op_algo=OP_ALGO,
    system=SYSTEM_NAMES,
    size=SIZES,
    extra=st.lists(st.tuples(st.sampled_from(["--root", "--tnis", "--segment", "--seed", "--model", "--descriptor", "--cmg", "--ppn", "--placement"]),
                             st.one_of(INTS, SIZES, st.sampled_from(["flow", "flow-rounds", "packet", "memory", "far", "block", "cyclic"]))), max_size=1),
)
def test_coll_arguments(op_algo, system, size, extra):
    op, algo = op_algo
    argv = ["coll", op, "--algo", algo, "--system", system, "--size", size, "--json"]
    for k, v in extra:
        argv += [k, v]
    check(argv)


BENCHMARKS = st.one_of(st.sampled_from(["PingPong", "pingping", "Sendrecv", "Exchange", "Allreduce", "Reduce", "Bcast", "Allgather", "Alltoall",
                                         "Barrier"]), st.sampled_from(["", "nosuch", "Ping"]))


@FUZZ
@given(
    benchmark=BENCHMARKS,
    system=SYSTEM_NAMES,
    extra=st.lists(st.tuples(st.sampled_from(["--ppn", "--msglog", "--sizes", "--algo", "--model", "--placement", "--seed"]),
                             st.one_of(INTS, SIZES, st.sampled_from(["0:4", "3:2", "0:40", "x", "8,1KiB", "ring", "flow", "cyclic", "1:3"]))),
                   max_size=2),
)
def test_mpi_bench_arguments(tmp_path_factory, benchmark, system, extra):
    # A short time budget: a heavy point is refused by its estimate, not run for minutes.
    argv = ["mpi-bench", benchmark, "--system", system, "--msglog", "0:3", "--max-time", "0.05", "--json", "--out", str(tmp_path_factory.mktemp("mb"))]
    for k, v in extra:
        argv += [k, v]
    check(argv)


def _schedule_json(data) -> str:
    """A valid small schedule, perhaps with one value replaced."""
    import json

    d = {"collective": {"op": "allreduce"}, "algorithm": "x", "ranks": 2, "count": 4,
         "programs": [{"steps": [{"action": {"kind": "send", "peer": 1, "spans": [{"offset": 0, "len": 4}], "tni": 0, "pace": 1}, "deps": []},
                                 {"action": {"kind": "recv", "peer": 1, "spans": [{"offset": 0, "len": 4}], "combine": "sum"}, "deps": []}]},
                      {"steps": [{"action": {"kind": "send", "peer": 0, "spans": [{"offset": 0, "len": 4}], "tni": 0, "pace": 1}, "deps": []},
                                 {"action": {"kind": "recv", "peer": 0, "spans": [{"offset": 0, "len": 4}], "combine": "sum"}, "deps": []}]}]}
    where = data.draw(st.sampled_from(["none", "ranks", "count", "peer", "offset", "len", "deps", "pace", "kind", "op", "tni"]))
    value = data.draw(st.one_of(st.integers(-3, 2**40), st.sampled_from(["x", None, [], {}, 1.5])))
    step = d["programs"][0]["steps"][0]
    target = {"ranks": d, "count": d, "peer": step["action"], "pace": step["action"], "kind": step["action"], "tni": step["action"],
              "offset": step["action"]["spans"][0], "len": step["action"]["spans"][0], "deps": step, "op": d["collective"]}.get(where)
    if target is not None:
        target[where] = value
    return json.dumps(d)


@FUZZ
@given(data=st.data(), system=SYSTEM_NAMES, verify=st.booleans())
def test_schedule_files(tmp_path_factory, data, system, verify):
    f = tmp_path_factory.mktemp("sched") / "s.json"
    f.write_text(_schedule_json(data))
    argv = ["coll", "--schedule", str(f), "--system", system, "--json"] + (["--verify"] if verify else [])
    code, err = call(argv)
    # A schedule that runs but computes the wrong result is the user's
    # failure the simulation found: exit 1 with what is wrong.
    if code == 1 and "verification failed" in err:
        return
    check(argv, (code, err))


@FUZZ
@given(system=SYSTEM_NAMES, compare=st.booleans(), virtual=st.one_of(st.none(), st.sampled_from(["48x36x48", "54x48x32", "0x1", "x", "1x1x1x1"])))
def test_topo_arguments(system, compare, virtual):
    argv = ["topo", system] + (["--compare"] if compare else []) + (["--virtual", virtual] if virtual and compare else []) + ["--json"]
    check(argv)


VALUES = st.one_of(
    st.integers(-5, 5000).map(str),
    st.sampled_from(["-1", "0", "1e300", "true", '"x"', '"5GB/s"', '"1e300GB/s"', '"1KiB"', "[]", "[4, 4]", "[0, 0, 64, 32]", "[[0, 0, 5, 32]]", '["x", "x"]', "nan", "inf"]),
    st.floats(-2, 2, allow_nan=False).map(lambda f: f"{f:.3f}"),
)
KEYS = {
    "network": ["shape", "wrap", "axis_names", "link_bandwidth", "generation", "groups", "taper", "colour"],
    "router": ["escape", "dynamic_vcs", "vc_buffer", "paths", "class_vcs", "injection_fifos", "arbitration", "hop_latency_cycles", "virtual_output_queues"],
    "workload": ["load", "packet_bytes", "header_bytes", "message_bytes", "hops", "axis", "trace", "region_shape", "pattern"],
    "run": ["warmup", "seed", "sample_cycles", "deadlock_cycles", "audit_cycles"],
}


@st.composite
def experiment_files(draw) -> str:
    system = draw(st.sampled_from(["bgl:2x2x2", "bgl:4x4x4", "k:1x1x1", "aries-2g", "summit:2"]))
    text = f'[network]\nsystem = "{system}"\n'
    for table in ("network", "router", "workload", "run"):
        if table != "network":
            text += f"[{table}]\n"
        if table == "workload":
            pattern = draw(st.sampled_from(["uniform", "uniform", "uniform", "alltoall", "shift", "hot-spot", "group-shift", "nosuch"]))
            text += f'pattern = "{pattern}"\n'
            if pattern in ("uniform", "shift", "group-shift") and draw(st.integers(0, 4)) > 0:
                text += f"load = {draw(st.sampled_from([0.05, 0.1, 0.3]))}\n"
            if pattern == "alltoall":
                text += "message_bytes = 64\n"
        if table == "run":
            text += f"cycles = {draw(st.sampled_from([2000, 5000]))}\n"
        keys = draw(st.lists(st.sampled_from(KEYS[table]), max_size=1, unique=True)) if draw(st.integers(0, 2)) == 0 else []
        for k in keys:
            if k not in ("pattern", "load", "message_bytes"):
                text += f"{k} = {draw(VALUES)}\n"
    return text


@FUZZ
@given(text=experiment_files(), flow=st.booleans())
def test_run_files(tmp_path_factory, text, flow):
    path = tmp_path_factory.mktemp("fuzz") / "exp.toml"
    path.write_text(text)
    check(["run", str(path), "--json", "--max-memory", "512MiB"] + (["--model", "flow"] if flow else []))


@FUZZ
@given(
    data=st.one_of(
        st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 10**6)), min_size=1, max_size=30).map(lambda fl: "".join(f"{a} {b} {c}\n" for a, b, c in fl).encode()),
        st.binary(max_size=200),
        st.text(max_size=200).map(str.encode),
    ),
    torus=st.sampled_from(["8x8", "5x5", "4x4", "0x4", "x", "4x4x4x4x4x4x4x4x4"]),
)
def test_rmatt_files(tmp_path_factory, data, torus):
    path = tmp_path_factory.mktemp("fuzz") / "pattern.txt"
    path.write_bytes(data)
    check(["rmatt", "--torus", torus, "--pattern", str(path), "--iterations", "100", "--json"])


def corpus() -> list[Path]:
    return sorted(CORPUS.glob("*.args"))


@pytest.mark.parametrize("case", corpus(), ids=lambda p: p.stem)
def test_the_corpus_of_past_failures(case: Path):
    """Each ``NAME.args`` holds one argument per line (``{dir}`` is the
    corpus directory, for the files it names); every input here once
    crashed, hung or was accepted as nonsense (issue 18)."""
    argv = [line.replace("{dir}", str(CORPUS)) for line in case.read_text().splitlines() if line and not line.startswith("#")]
    check(argv)
