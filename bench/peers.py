"""Peers side by side (issue 40): SimGrid's SMPI and tofusim time the same
allreduce algorithms at the same sizes on a 512-node 8x8x8 torus, one
command per size, and the wall times are printed with their ratio.

SMPI runs bench/smpi_allreduce.c (compiled with smpicc) on a SimGrid
cluster of topology TORUS 8,8,8 (5 GB/s links, 100 ns) with
``--cfg=smpi/allreduce:ALGO``; tofusim runs ``tofusim coll allreduce
--algo ALGO --model flow-rounds`` on ``bgl:8x8x8`` (the flow model on the
algorithm's rounds: on this torus the event-by-event form's time to
within 0.1%; that form, ``--model flow``, is timed beside it). The
simulated times differ (other link rates and host models); what is
compared is the time to an answer. SimGrid comes from Debian (``libsimgrid-dev``, ``simgrid``): this
script installs it when ``smpicc`` is missing and it runs as root.

    python bench/peers.py [--sizes 8,65536,1048576,16777216]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOFUSIM = str(Path(sys.executable).parent / "tofusim")
#: (SMPI's algorithm name, tofusim's).
ALGORITHMS = [("rab_rdb", "rabenseifner"), ("lr", "ring")]
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="torus" prefix="node-" suffix="" radical="0-511" speed="1Gf" bw="5GBps" lat="100ns" topology="TORUS" topo_parameters="8,8,8"/>
</platform>
"""


def ensure_simgrid() -> None:
    if shutil.which("smpicc") and shutil.which("smpirun"):
        return
    if os.geteuid() != 0:
        sys.exit("bench/peers.py: SimGrid is missing (Debian packages libsimgrid-dev, simgrid); run as root to install it, or install them")
    subprocess.run(["apt-get", "install", "-y", "-q", "libsimgrid-dev", "simgrid"], check=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def timed(cmd: list[str], cwd: str | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench/peers.py: {' '.join(cmd[:4])} ... failed: {p.stderr[-500:]}")
    return wall, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8,65536,1048576,16777216")
    sizes = [int(s) for s in ap.parse_args().sizes.split(",")]
    ensure_simgrid()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "torus.xml").write_text(PLATFORM)
        subprocess.run(["smpicc", "-O2", "-o", "allreduce", str(HERE / "smpi_allreduce.c")], cwd=tmp, check=True, capture_output=True)
        print(f"{'algorithm':<24} {'bytes':>10} {'SMPI wall s':>12} {'tofusim rounds wall s':>22} {'SMPI / tofusim':>15} {'events wall s':>14} {'SMPI sim µs':>12} {'rounds sim µs':>14} {'events sim µs':>14}")
        totals, event_totals = {}, {}
        for smpi_algo, ours in ALGORITHMS:
            s_total = t_total = e_total = 0.0
            for size in sizes:
                s_wall, out = timed(["smpirun", "-np", "512", "-platform", "torus.xml", f"--cfg=smpi/allreduce:{smpi_algo}",
                                     "--cfg=smpi/display-timing:no", "-quiet", "./allreduce", str(size)], cwd=tmp)
                s_sim = float(out.split()[-1]) * 1e6
                import json

                cmd = [TOFUSIM, "coll", "allreduce", "--algo", ours, "--size", str(size), "--system", "bgl:8x8x8", "--json", "--model"]
                t_wall, out = timed(cmd + ["flow-rounds"])
                t_sim = json.loads(out)["time_seconds"] * 1e6
                e_wall, out = timed(cmd + ["flow"])
                e_sim = json.loads(out)["time_seconds"] * 1e6
                s_total += s_wall
                t_total += t_wall
                e_total += e_wall
                print(f"{smpi_algo + ' / ' + ours:<24} {size:>10} {s_wall:>12.2f} {t_wall:>22.2f} {s_wall / t_wall:>15.1f} {e_wall:>14.2f} {s_sim:>12.1f} {t_sim:>14.1f} {e_sim:>14.1f}")
            totals[ours] = (s_total, t_total)
            event_totals[ours] = e_total
        for ours, (s, t) in totals.items():
            e = event_totals[ours]
            print(f"== {ours}, the {len(sizes)} sizes: SMPI {s:.2f} s, tofusim rounds {t:.2f} s: {s / t:.1f}x faster "
                  f"(event by event {e:.2f} s: {s / e:.1f}x)")


if __name__ == "__main__":
    main()
