"""Whole-run figures of issue 7 for BENCHMARKS.md (`make bench`): the packet
engine on 1 and 2 threads and on 2 MPI ranks, full machines on the packet
engine (bounded cycles) and on the flow model. Prints a Markdown table:
wall time and peak memory of each command as measured here (GNU time's
maximum resident set: for mpirun, its largest process)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOFUSIM = str(ROOT / ".venv/bin/tofusim")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def timed(cmd: list[str]) -> tuple[dict, float, int]:
    """Runs `cmd` (printing JSON); returns the JSON, wall seconds and the
    peak resident memory of its largest process (GNU time), bytes."""
    t0 = time.monotonic()
    with tempfile.NamedTemporaryFile("r") as mem:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", mem.name, *cmd], capture_output=True, text=True, cwd=ROOT, env=ENV)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
        peak = int(mem.read().split()[-1]) * 1024
    return json.loads(p.stdout.strip().splitlines()[-1]), wall, peak


def row(what: str, cmd: list[str], figure) -> None:
    r, wall, peak = timed(cmd)
    print(f"| {what} | `{' '.join(c if c != TOFUSIM else 'tofusim' for c in cmd)}` | {figure(r)} | {wall:.1f} s | {peak / 2**20:,.0f} MiB |", flush=True)


def engine(r: dict) -> str:
    s = r["sim"]
    p = s.get("partitions")
    extra = ""
    if p:
        loads = "; ".join(f"{q['busy_seconds']:.2f} s busy, {q['wait_seconds']:.2f} s waiting" for q in p["partitions"])
        extra = f"; {p['windows']:,} windows of {p['window_cycles']} cycles; {loads}"
    return f"{s['cycles']:,} cycles, {r['packets_delivered']:,} packets, engine {s['wall_seconds']:.2f} s{extra}"


def flow(r: dict) -> str:
    k = r["flow"]["rounds"]
    return f"{r['time_seconds'] * 1e3:,.3f} ms; {k['rounds']:,} rounds in {k['stretches']:,} stretches, {k['solves']} solves"


def main() -> None:
    print("| run | command | result | wall | peak memory |")
    print("| --- | --- | --- | --- | --- |")
    for f in ("bench/uniform-32.toml", "bench/uniform-32-saturated.toml"):
        for threads in (1, 2):
            row(f"{f}, {threads} thread{'s' if threads > 1 else ''}", [TOFUSIM, "run", f, "--json", "--threads", str(threads)], engine)
    if shutil.which("mpirun"):
        for f in ("bench/uniform-16.toml", "bench/uniform-32-saturated.toml"):
            row(f"{f}, 1 process", [TOFUSIM, "run", f, "--json"], engine)
            row(f"{f}, 2 MPI ranks", ["mpirun", "-np", "2", "--oversubscribe", TOFUSIM, "run", f, "--json", "--mpi"], engine)
    for threads in (1, 2):
        row(f"full K computer (82,944 nodes), 3,000 cycles, {threads} thread{'s' if threads > 1 else ''}", [TOFUSIM, "run", "bench/k-full.toml", "--json", "--threads", str(threads)], engine)
    for system in ("k", "fugaku"):
        for op, algo, size in (("allreduce", "ring", "16MiB"), ("allreduce", "recursive-doubling", "16MiB"), ("allreduce", "trinaryx3", "16MiB"), ("alltoall", "bruck", "1KiB")):
            row(f"{system} {op} {algo} {size}, flow model", [TOFUSIM, "coll", op, "--algo", algo, "--size", size, "--segment", "16KiB", "--system", system, "--model", "flow", "--json"], flow)


if __name__ == "__main__":
    main()
