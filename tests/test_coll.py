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
    assert set(algos) == {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter", "reduce_scatter"}
    assert "trinaryx3" in [a["name"] for a in algos["allreduce"]]
    assert all(a["needs_torus"] for a in algos["allgather"] if a["name"] == "quad-rings")


@pytest.mark.parametrize("op,algo", [("allreduce", "trinaryx3"), ("allgather", "quad-rings"), ("alltoall", "overlaid-symmetric"),
                                     ("bcast", "scatter-allgather"), ("reduce", "rabenseifner"), ("barrier", "dissemination"),
                                     ("gather", "binomial"), ("scatter", "binomial"), ("reduce_scatter", "pairwise"), ("reduce_scatter", "ring")])
def test_collective_runs_and_verifies_on_a_torus(run, op, algo):
    r = run("coll", op, "--algo", algo, "--size", "4KiB", "--system", "bgl:3x3x3", "--verify", "--json")
    assert r.code == 0, r.err
    j = r.json()
    for key in ("op", "algo", "size_bytes", "processes", "time_seconds", "bandwidth_Bps", "verified"):
        assert key in j
    assert j["processes"] == 27 and j["verified"] is True and j["fallback"] is None
    assert j["time_seconds"] > 0 and not j["run"]["deadlock"] and j["run"]["invariant_error"] is None


def test_without_algo_the_systems_mpi_library_chooses(run):
    """Issue 38, item 4: no --algo, the system's library decides by
    operation, size and communicator, and says by which rule."""
    big = run("coll", "allreduce", "--size", "16MiB", "--system", "k:2x1x2", "--json").json()
    assert big["algo"] == "trinaryx3" and big["settings"]["algorithm"].startswith("fjmpi's rule: long message on a torus")
    small = run("coll", "allreduce", "--size", "8B", "--system", "k:2x1x2", "--json").json()
    assert small["algo"] == "barrier-interface"
    mpich = run("coll", "allreduce", "--size", "16MiB", "--system", "k:2x1x2", "--library", "mpich", "--json").json()
    assert mpich["algo"] == "rabenseifner" and mpich["settings"]["algorithm"].startswith("mpich's rule")
    named = run("coll", "allreduce", "--algo", "ring", "--size", "8B", "--system", "bgl:2x2x2", "--json").json()
    assert named["settings"]["algorithm"] == "given (--algo)"
    both = run("coll", "allreduce", "--algo", "ring", "--library", "mpich", "--system", "bgl:2x2x2")
    assert both.code == 2 and "--library" in both.err
    gather = run("coll", "gather", "--size", "64KiB", "--system", "bgl:2x2x2", "--root", "5", "--library", "openmpi", "--verify", "--json").json()
    assert gather["algo"] == "binomial" and "linear-sync" in gather["settings"]["algorithm"] and gather["verified"] is True


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


SHALLOW = str(ROOT / "examples" / "trees" / "4x3x4-depth6.json")


def test_given_trees_replace_the_built_ones(run, tmp_path):
    """`--trees`: the trees of tools/trinary_trees_sat.py (depth 6 on the
    4x3x4 communicator of k:2x1x2, against the built trees' 9) run, and the
    allreduce they make is right; they change the run (its time), so the
    input is modelled, not ignored."""
    args = ["coll", "allreduce", "--algo", "trinaryx3", "--size", "256KiB", "--system", "k:2x1x2", "--segment", "19200", "--json"]
    built = run(*args).json()
    given = run(*args, "--trees", SHALLOW, "--verify").json()
    assert given["verified"] is True and given["processes"] == 48 and given["fallback"] is None
    assert given["run"]["cycles"] != built["run"]["cycles"]
    assert given["trees"] == {"source": SHALLOW, "depths": [6, 6, 6]} and "trees" not in built
    rounds = [*args, "--model", "flow-rounds"]
    assert run(*rounds, "--trees", SHALLOW).json()["time_seconds"] != run(*rounds).json()["time_seconds"]


def test_bad_trees_exit_2_naming_the_file(run, tmp_path):
    trees = json.loads(open(SHALLOW, encoding="utf-8").read())
    child = next(r for r, p in enumerate(trees["parents"][0]) if p is not None)
    trees["parents"][0][child] = (trees["parents"][0][child] + 2) % 48  # not a neighbour, or a cycle
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(trees))
    base = ["coll", "allreduce", "--size", "64KiB", "--system", "k:2x1x2"]
    for args, needle in [
        ([*base, "--algo", "trinaryx3", "--trees", str(bad)], f"{bad}: trees: tree 0"),
        ([*base, "--algo", "ring", "--trees", SHALLOW], f"{SHALLOW}: trees: only the trinary-tree algorithms take trees, not ring"),
        ([*base, "--algo", "ring", "--model", "flow-rounds", "--trees", SHALLOW], f"{SHALLOW}: trees: only the trinary-tree algorithms take trees"),
        (["coll", "allreduce", "--algo", "trinaryx3", "--size", "64KiB", "--system", "k:3x3x3", "--trees", SHALLOW], "the trees are for a 4x3x4 communicator"),
        ([*base, "--algo", "trinaryx3", "--trees", str(tmp_path / "none.json")], "cannot read the trees file"),
        (["coll", "bcast", "--algo", "trinary-tree", "--root", "5", "--size", "64KiB", "--system", "k:2x1x2", "--trees", SHALLOW],
         f"{SHALLOW}: trees: the trees are for a 4x3x4 communicator rooted at rank 0, the run has 4x3x4 rooted at rank 5"),
        ([*base, "--algo", "trinaryx3,ring", "--trees", SHALLOW], "--trees fits one communicator"),
    ]:
        r = run(*args)
        assert r.code == 2 and needle in r.err and "Traceback" not in r.err, (args, r.err)
        assert len(r.err.strip().splitlines()) == 1 or "Usage" in r.err


def test_the_sat_search_finds_shallow_trees_and_proves_none_shallower(run, tmp_path):
    tool = [sys.executable, str(ROOT / "tools" / "trinary_trees_sat.py")]
    out = tmp_path / "t.json"
    ok = subprocess.run([*tool, "3x3x3", "--depth", "5", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    t = json.loads(out.read_text())
    assert t["lengths"] == [3, 3, 3] and all(len(p) == 27 and p[0] is None for p in t["parents"])
    # The depth of each tree is at most 5 (the built trees: 7).
    for parents in t["parents"]:
        for r in range(27):
            hops, x = 0, r
            while parents[x] is not None:
                x, hops = parents[x], hops + 1
                assert hops <= 5
    # What it writes passes the run's own check and runs.
    j = run("coll", "allreduce", "--algo", "trinaryx3", "--size", "64KiB", "--system", "bgl:3x3x3", "--trees", str(out), "--verify", "--json").json()
    assert j["verified"] is True
    none = subprocess.run([*tool, "3x3x3", "--depth", "4"], capture_output=True, text=True, timeout=120)
    assert none.returncode == 1 and "no trees of depth <= 4" in none.stderr
    assert subprocess.run([*tool, "2x3x3"], capture_output=True, text=True).returncode == 2
    unwritable = subprocess.run([*tool, "3x3x3", "-o", str(tmp_path / "no" / "t.json")], capture_output=True, text=True, timeout=120)
    assert unwritable.returncode == 2 and "cannot write the trees" in unwritable.stderr


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
