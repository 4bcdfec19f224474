"""Whole-run figures of issue 7 for BENCHMARKS.md (`make bench`): the packet
engine on 1 and 2 threads and on 2 MPI ranks, full machines on the packet
engine (bounded cycles) and on the flow model. Prints a Markdown table:
wall time and peak memory of each command as measured here."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOFUSIM = str(ROOT / ".venv/bin/tofusim")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def timed(cmd: list[str]) -> tuple[dict, float, int]:
    """Runs `cmd` (printing JSON); returns the JSON, wall seconds and the
    peak resident memory of its largest child process, bytes."""
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=ENV)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
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
    return f"{r['time_seconds'] * 1e3:,.3f} ms ({r['bandwidth_Bps'] / 1e9:.2f} GB/s); {k['rounds']:,} rounds, {k['solves']} solves"


def main() -> None:
    print("| run | command | result | wall | peak memory |")
    print("| --- | --- | --- | --- | --- |")
    for threads in (1, 2):
        row(f"BG/L 32×32×32 uniform, {threads} thread{'s' if threads > 1 else ''}", [TOFUSIM, "run", "bench/uniform-32.toml", "--json", "--threads", str(threads)], engine)
    if shutil.which("mpirun"):
        for f in ("bench/uniform-16.toml", "bench/uniform-32.toml"):
            row(f"{f}, 1 process", [TOFUSIM, "run", f, "--json"], engine)
            row(f"{f}, 2 MPI ranks", ["mpirun", "-np", "2", "--oversubscribe", TOFUSIM, "run", f, "--json", "--mpi"], engine)
    for threads in (1, 2):
        row(f"full K computer (82,944 nodes), 3,000 cycles, {threads} thread{'s' if threads > 1 else ''}", [TOFUSIM, "run", "bench/k-full.toml", "--json", "--threads", str(threads)], engine)
    for system in ("k", "fugaku"):
        for op, algo, size in (("allreduce", "ring", "16MiB"), ("allreduce", "recursive-doubling", "16MiB"), ("allreduce", "trinaryx3", "16MiB"), ("alltoall", "bruck", "1KiB")):
            row(f"{system} {op} {algo} {size}, flow model", [TOFUSIM, "coll", op, "--algo", algo, "--size", size, "--segment", "16KiB", "--system", system, "--model", "flow", "--json"], flow)


if __name__ == "__main__":
    main()
