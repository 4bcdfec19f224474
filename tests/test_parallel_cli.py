"""`tofusim run --threads N` and `mpirun -np N tofusim run --mpi`: the same
result JSON as one thread, bit for bit (issue 7); bad splits exit 2."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, TOFUSIM

MPI = shutil.which("mpirun")

EXPERIMENTS = {
    "bgl-uniform": '[network]\nsystem = "bgl:8x8x8"\n[workload]\npattern = "uniform"\nload = 0.7\n[run]\ncycles = 5000\naudit_cycles = 2000\n',
    "tofu-alltoall": '[network]\nsystem = "k:2x3x2"\n[workload]\npattern = "alltoall"\nmessage_bytes = 512\n',
    "dragonfly-ugal-g": (ROOT / "examples/experiments/dragonfly-adversarial.toml").read_text()
    .replace('"valiant"', '"ugal-g"').replace("cycles = 200000", "cycles = 5000").replace("warmup = 40000", "warmup = 500"),
}


def canonical(out: str) -> dict:
    r = json.loads(out)
    for k in ("wall_seconds", "peak_memory_bytes", "simulated_us_per_wall_second", "partitions"):
        r["sim"].pop(k, None)
    return r


def write(tmp_path: Path, name: str) -> str:
    p = tmp_path / f"{name}.toml"
    p.write_text(EXPERIMENTS[name])
    return str(p)


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_threads_give_the_one_thread_result(run, tmp_path, name):
    f = write(tmp_path, name)
    one = run("run", f, "--json")
    two = run("run", f, "--json", "--threads", "2")
    assert one.code == 0 and two.code == 0, one.err + two.err
    assert canonical(two.out) == canonical(one.out)
    p = json.loads(two.out)["sim"]["partitions"]
    assert len(p["partitions"]) == 2 and p["window_cycles"] > 0 and p["windows"] > 0


@pytest.mark.skipif(MPI is None, reason="Open MPI is installed by `make install`")
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
@pytest.mark.parametrize("threads", [1, 2])
def test_mpi_ranks_give_the_one_thread_result(run, tmp_path, name, threads):
    f = write(tmp_path, name)
    one = run("run", f, "--json")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    p = subprocess.run([MPI, "-np", "2", "--oversubscribe", TOFUSIM, "run", f, "--json", "--mpi", "--threads", str(threads)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    # Rank 0 alone prints: one JSON object.
    assert canonical(p.stdout) == canonical(one.out)
    parts = json.loads(p.stdout)["sim"]["partitions"]
    assert parts["processes"] == 2 and len(parts["partitions"]) == 2 * threads


def test_more_partitions_than_routers_is_bad_input(run, tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text('[network]\ntopology = "torus"\nshape = [4]\nlink_bandwidth = "1GB/s"\n[workload]\npattern = "alltoall"\n')
    r = run("run", str(p), "--threads", "8")
    assert r.code == 2 and "threads" in r.err and "Traceback" not in r.err
    r = run("run", str(p), "--threads", "0")
    assert r.code == 2 and "--threads" in r.err
