"""`tofusim coll` and the real-MPI executor of the same schedules."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_list_names_every_operation(run):
    r = run("coll", "--list", "--json")
    assert r.code == 0
    algos = r.json()
    assert set(algos) == {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"}
    assert "trinaryx3" in [a["name"] for a in algos["allreduce"]]
    assert all(a["needs_torus"] for a in algos["allgather"] if a["name"] == "quad-rings")


@pytest.mark.parametrize("op,algo", [("allreduce", "trinaryx3"), ("allgather", "quad-rings"), ("alltoall", "overlaid-symmetric"),
                                     ("bcast", "scatter-allgather"), ("reduce", "rabenseifner"), ("barrier", "dissemination")])
def test_collective_runs_and_verifies_on_a_torus(run, op, algo):
    r = run("coll", op, "--algo", algo, "--size", "4KiB", "--system", "bgl:3x3x3", "--verify", "--json")
    assert r.code == 0, r.err
    j = r.json()
    for key in ("op", "algo", "size_bytes", "processes", "time_seconds", "bandwidth_Bps", "verified"):
        assert key in j
    assert j["processes"] == 27 and j["verified"] is True and j["fallback"] is None
    assert j["time_seconds"] > 0 and not j["run"]["deadlock"] and j["run"]["invariant_error"] is None


def test_tofu_communicator_is_the_virtual_torus(run):
    j = run("coll", "allreduce", "--algo", "trinaryx3", "--size", "64KiB", "--system", "k:3x1x1", "--verify", "--json").json()
    assert j["processes"] == 36 and j["communicator_shape"] == [6, 3, 2]
    # A 2-long axis cannot carry the three trees: the fallback is named.
    assert "ran ring" in j["fallback"] and j["verified"] is True


def test_trinaryx3_beats_ring_on_large_vectors(run):
    bw = {}
    for algo in ("trinaryx3", "ring"):
        bw[algo] = run("coll", "allreduce", "--algo", algo, "--size", "2MiB", "--system", "k:3x3x3", "--json").json()["bandwidth_Bps"]
    assert bw["trinaryx3"] > 2 * bw["ring"]


@pytest.mark.parametrize("args,needle", [
    (["allreduce", "--algo", "nope", "--system", "k:1x1x1"], "rabenseifner"),
    (["allreduce", "--algo", "ring", "--system", "k:1x1x1", "--size", "12 parsecs"], "--size"),
    (["allreduce", "--algo", "ring", "--system", "nosuch"], "system"),
    (["allreduce", "--algo", "ring", "--system", "k:1x1x1", "--root", "99"], "root"),
    (["allreduce", "--system", "k:1x1x1"], "--algo"),
    # Issue 18: values that were silently accepted.
    (["allreduce", "--algo", "ring", "--system", "k:1x1x1", "--tnis", "6"], "tnis: expected 1 to 4"),
    (["allreduce", "--algo", "ring", "--system", "k:1x1x1", "--tnis", "99"], "tnis: expected 1 to 4"),
    (["allreduce", "--algo", "ring", "--system", "k:1x1x1", "--root", "-1"], "root: expected a whole number"),
    (["allreduce", "--algo", "ring", "--system", "k:1x1x1", "--size", "0"], "size: expected at least 1 byte"),
    (["allreduce", "--algo", "trinaryx3", "--system", "k:1x1x1", "--segment", "0"], "segment: expected at least 1 byte"),
])
def test_bad_input_exits_2_with_the_key(run, args, needle):
    r = run("coll", *args)
    assert r.code == 2, r.err
    assert needle in r.err and "Traceback" not in r.err


MPI = shutil.which("mpirun")


@pytest.mark.skipif(MPI is None, reason="Open MPI is installed by `make install`")
@pytest.mark.parametrize("op,algo,extra", [
    ("allreduce", "ring", []), ("allreduce", "rabenseifner", []), ("allreduce", "trinaryx3", ["--shape", "3x3x3"]),
    ("bcast", "trinary-tree", ["--shape", "3x3x3"]), ("allgather", "bruck", []), ("allgather", "quad-rings", ["--shape", "2x2"]),
    ("alltoall", "bruck", []), ("alltoall", "overlaid-symmetric", ["--shape", "2x2"]), ("barrier", "dissemination", []),
    ("reduce", "binomial", ["--root", "2"]),
])
def test_real_mpi_ranks_run_the_same_schedule(op, algo, extra):
    np_ = 27 if "3x3x3" in extra else 4
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    p = subprocess.run([MPI, "-np", str(np_), "--oversubscribe", sys.executable, "-m", "tofusim.mpi_run", op, "--algo", algo, "--size", "1KiB", *extra],
                       capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    j = json.loads(p.stdout.strip().splitlines()[-1])
    assert j["verified"] is True and j["processes"] == np_ and j["fallback"] is None
