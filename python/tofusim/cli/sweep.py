"""``tofusim sweep``: one experiment over a grid of values."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .budget import max_time_option
from .outcome import Interrupted
from .. import ConfigError
from ..sweep import Interrupted as SweepInterrupted, parse_axis, plot, run_sweep
from .report import out_for, report_option, slug, write_into


def interrupted(stop: SweepInterrupted, as_json: bool) -> None:
    """Ctrl-C: the points finished so far (under --json one object marked
    incomplete), no files written, exit 130."""
    if as_json:
        click.echo(json.dumps({"complete": False, "interrupted": True, "points": stop.points, "points_done": len(stop.rows), "rows": stop.rows}))
    raise Interrupted(f"interrupted after {len(stop.rows)} of {stop.points} points; nothing written")


@click.command()
@click.argument("experiment", metavar="EXP.toml")
@click.option("--vary", "varies", multiple=True, required=True, metavar="KEY=SPEC",
              help="A key and its values: START:STOP:STEP (inclusive) or A,B,C; repeat for a grid, e.g. "
                   "--vary workload.load=0.1:0.9:0.1 --vary routing.algorithm=dor,adaptive.")
@click.option("--jobs", type=click.IntRange(1, 1024), default=1, show_default=True, help="Runs at a time (processes).")
@max_time_option
@click.option("--model", type=click.Choice(["packet", "flow"]), default="packet", show_default=True)
@click.option("--out", "out", help="Directory for sweep.csv, sweep.parquet and sweep.png (default: sweep-EXP in the working directory).")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as one JSON object.")
@report_option
def sweep(experiment: str, varies: tuple[str, ...], jobs: int, max_time: float | str | None, model: str, out: str | None, as_json: bool, report: bool) -> None:
    """Run EXP.toml over a grid of values: a tidy table (CSV, Parquet), a plot, saturation marked.

    Beside them: sweep.json (the file, the varied keys and their values)
    and experiment.toml (the file swept); with --report, report.html.
    """
    import pandas as pd

    axes = [parse_axis(v) for v in varies]
    n = 1
    for a in axes:
        n *= len(a.values)
    bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    try:
        with bar:
            task = bar.add_task("points", total=n)
            rows = run_sweep(experiment, axes, jobs, model, progress=lambda done, total: bar.update(task, completed=done), max_minutes=max_time)
    except SweepInterrupted as stop:
        interrupted(stop, as_json)
    d = Path(out_for(False, out, "") or f"sweep-{slug(Path(experiment).stem)}")
    try:
        d.mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame(rows)
        for a in axes:
            # A key listed with values of several types (1024 and "2KiB"):
            # one column of text.
            if len({type(v) for v in a.values}) > 1:
                frame[a.key] = frame[a.key].astype(str)
        frame.to_csv(d / "sweep.csv", index=False)
        frame.to_parquet(d / "sweep.parquet", index=False)
        plot(rows, [a.key for a in axes], str(d / "sweep.png"), Path(experiment).name)
        (d / "sweep.json").write_text(json.dumps({"experiment": experiment, "model": model, "jobs": jobs,
                                                  "vary": [{"key": a.key, "values": list(a.values)} for a in axes]}, indent=1) + "\n",
                                      encoding="utf-8")
        (d / "experiment.toml").write_text(Path(experiment).read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{d}: cannot write the sweep's results: {e.strerror}") from None
    if report:
        write_into(str(d))
    saturated = [r for r in rows if r["saturated"]]
    if as_json:
        click.echo(json.dumps({"complete": True, "rows": rows, "out": str(d), "saturated": len(saturated)}))
        return
    keys = [a.key for a in axes]
    t = Table(*keys, "offered GB/s/node (of injection)", "accepted GB/s/node (of injection)", "mean latency µs (cycles)", "p99 µs (cycles)", "saturated",
              title=f"{experiment}: {len(rows)} runs ({model})")

    def load(fraction: Any, gbps: Any) -> str:
        if fraction is None:
            return "-"
        return f"{gbps:.3g} ({fraction:.3g})" if gbps is not None else f"{fraction:.4g} of injection"

    def latency(cycles: Any, ns: Any) -> str:
        if cycles is None:
            return "-"
        return f"{ns / 1e3:.3g} ({cycles:,.0f})" if ns is not None else f"{cycles:,.0f} cycles"

    for r in rows:
        style = "red" if r["saturated"] else None
        t.add_row(*[str(r[k]) for k in keys],
                  load(r["offered_load"], r.get("offered_GBps_per_node")),
                  load(r["accepted_load"], r.get("accepted_GBps_per_node")),
                  latency(r["latency_mean_cycles"], r.get("latency_mean_ns")),
                  latency(r["latency_p99_cycles"], r.get("latency_p99_ns")),
                  r["saturation"] or "no", style=style)
    con = Console(width=None if sys.stdout.isatty() else 160)
    con.print(t)
    if saturated:
        click.echo(f"tofusim: warning: {experiment}: {len(saturated)} of {len(rows)} points are saturated (accepted below offered by "
                   "more than 2%, or mean latency above 3x the zero-load latency); their latencies are not steady-state figures", err=True)
    con.print(f"wrote {d}/sweep.csv, sweep.parquet, sweep.png")
