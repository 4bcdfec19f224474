"""``tofusim alloc``: the job allocator on a synthetic job stream, with and
without rotation and padding ([S:003], [S:001]; docs/mapping.md)."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from ..mapping import alloc as allocate


@click.command()
@click.option("--system", default="k", show_default=True, help="Tofu system, optionally resized: k, k:12x9x8.")
@click.option("--jobs", default=500, show_default=True, type=click.IntRange(1, 10_000_000), help="Jobs in the synthetic stream.")
@click.option("--load", default=0.9, show_default=True, help="Offered load: node-seconds asked per machine node-second.")
@click.option("--seed", default=1, show_default=True, type=click.IntRange(0, 2**64 - 1), help="Seed of the stream (same seed, same stream).")
@click.option("--json", "as_json", is_flag=True)
def alloc(system: str, jobs: int, load: float, seed: int, as_json: bool) -> None:
    """Allocate a synthetic stream of virtual-torus jobs to rectangular blocks, FCFS, four policies."""
    r = allocate(system, jobs, load, seed)
    if as_json:
        click.echo(json.dumps(r))
        return
    t = Table(title=f"job allocation on {system} ({r['nodes']:,} nodes): {jobs} jobs, load {load}, seed {seed}")
    for c in ("rotation", "padding", "utilisation", "allocated", "mean wait (h)", "fragmentation", "unplaceable", "rotated", "padded", "padding nodes"):
        t.add_column(c)
    for p in r["policies"]:
        t.add_row("yes" if p["rotation"] else "no", "yes" if p["padding"] else "no", f"{p['utilization']:.3f}",
                  f"{p['allocated_fraction']:.3f}", f"{p['mean_wait_seconds'] / 3600:.2f}", f"{p['fragmentation']:.3f}",
                  str(p["unplaceable"]), str(p["rotated_jobs"]), str(p["padded_jobs"]), f"{p['padding_fraction']:.3f}")
    Console(width=None if sys.stdout.isatty() else 160).print(t)
