"""Before/after speed of the packet engine, measured in one invocation so
the machine's drift (+-25% between runs here) does not hide a change.

    python bench/compare.py [--base REF] [--pairs N] [FILE.toml ...]

Builds `run_experiment` at REF (default: the commit before HEAD) in a
temporary worktree, then runs the baseline and the working tree's binary
alternately, N pairs per file (default 7; files default to
bench/uniform-{8,16}.toml), and reports per file the median of the paired
ratios now / base of the run's own ns per packet-hop, with the smallest and
largest ratio. It also checks that both binaries simulated the same thing
(same packets, hops and mean latency): a change in results is reported, as
the figures of docs/validation.md then move too. Ratios below 1 are faster.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ["cargo", "build", "--release", "-q", "-p", "tofusim-experiment", "--example", "run_experiment"]


def build_base(ref: str, work: Path) -> Path:
    tree = work / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=ROOT, check=True, capture_output=True)
    # A target directory of its own, so the working tree's build stays.
    subprocess.run([*EXAMPLE, "--target-dir", str(work / "target")], cwd=tree, check=True)
    return work / "target/release/examples/run_experiment"


def run(binary: Path, file: str) -> dict:
    p = subprocess.run([str(binary), file], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"{binary} {file} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def same_run(a: dict, b: dict) -> bool:
    return (a["packets_delivered"], a["sim"]["packet_hops"], a["latency"]["mean"]) == (b["packets_delivered"], b["sim"]["packet_hops"], b["latency"]["mean"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="HEAD~1", help="git ref of the baseline (default HEAD~1)")
    ap.add_argument("--pairs", type=int, default=7, help="alternating runs per file (default 7)")
    ap.add_argument("files", nargs="*", default=["bench/uniform-8.toml", "bench/uniform-16.toml"])
    args = ap.parse_args()
    if args.pairs < 1:
        sys.exit("--pairs: expected at least 1")
    subprocess.run(EXAMPLE, cwd=ROOT, check=True)
    now = ROOT / "target/release/examples/run_experiment"
    with tempfile.TemporaryDirectory(prefix="tofusim-base-") as tmp:
        try:
            base = build_base(args.base, Path(tmp))
            print(f"| file | base ({args.base}) ns/hop | now ns/hop | now / base: median (min - max) of {args.pairs} pairs | same results |")
            print("| --- | --- | --- | --- | --- |")
            for f in args.files:
                b_ns, n_ns, ratios, same = [], [], [], True
                for _ in range(args.pairs):
                    rb = run(base, f)
                    rn = run(now, f)
                    same &= same_run(rb, rn)
                    b_ns.append(rb["ns_per_packet_hop"])
                    n_ns.append(rn["ns_per_packet_hop"])
                    ratios.append(rn["ns_per_packet_hop"] / rb["ns_per_packet_hop"])
                print(f"| {f} | {statistics.median(b_ns):.0f} | {statistics.median(n_ns):.0f} | "
                      f"{statistics.median(ratios):.3f} ({min(ratios):.3f} - {max(ratios):.3f}) | {'yes' if same else '**no**'} |", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(Path(tmp) / "tree")], cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    main()
