"""``tofusim replay``: a recorded MPI program on a simulated system."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from .outcome import Interrupted
from .. import ConfigError
from ..mapping import map_virtual
from ..trace import replay as run_replay
from .ranks import read_order
from ..samples import DEFAULT_COUNTER_PERIOD, CounterSamples
from .budget import max_time_option
from .report import out_for, report_option, slug, write_into
from .run import _LazyProgress


def _algorithms(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for p in pairs:
        op, sep, algo = p.partition("=")
        if not sep or not op or not algo:
            raise click.UsageError(f"--coll {p!r}: expected OP=ALGO, e.g. allreduce=ring")
        out[op.strip().lower()] = algo.strip()
    return out


@click.command()
@click.argument("trace", metavar="TRACE")
@click.option("--system", required=True, help="System preset, optionally resized (e.g. k:4x6x4, bgl:8x8x8, aries-720/minimal).")
@click.option("--order", "order_file", help="Rank order file (line i: node of rank i), e.g. from tofusim rmatt --out.")
@click.option("--map", "map_", metavar="virtual:SHAPE", help="Place the ranks as a virtual torus SHAPE on a Tofu system (tofusim map virtual), e.g. virtual:4x6x4.")
@click.option("--model", type=click.Choice(["packet", "flow"]), default="packet", show_default=True)
@click.option("--coll", "coll", multiple=True, metavar="OP=ALGO", help="Algorithm for a collective operation (repeatable), e.g. allreduce=ring.")
@click.option("--library", default=None, type=click.Choice(["fjmpi", "openmpi", "mpich"]),
              help="Whose collective rules choose each call's algorithm by size and communicator [default: the system's: "
                   "fjmpi on Tofu, mpich on Aries and BG/L, openmpi on fat-trees]; --coll overrides an operation.")
@click.option("--compute-scale", type=click.FloatRange(0.0, 1e9), default=1.0, show_default=True, help="Multiply every compute burst (0.5: a core twice as fast).")
@click.option("--seed", default=1, show_default=True)
@click.option("--ppn", type=int, default=1, show_default=True, metavar="N",
              help="Ranks per node (block placement; --order places them by node id, at most N to a node). They share the node's "
                   "TNIs and host interface; messages between them go through its memory, not the network.")
@click.option("--placement", type=click.Choice(["block", "cyclic"]), default="block", show_default=True,
              help="Where the ranks go without --order: consecutive ranks on a node, or round robin over the nodes.")
@max_time_option
@click.option("--counter-period", "counter_period", type=int, default=None, metavar="CYCLES",
              help="Packet engine: sample every port's and VC's counters every CYCLES (0: none) into --out DIR's port_samples.parquet "
                   f"and vc_samples.parquet [default with --out: {DEFAULT_COUNTER_PERIOD}].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--out", "out", help="Directory for result.json and per_rank.csv (created); with --counter-period port_samples.parquet, "
                                   "with --system recorded the fitted machine's system.toml.")
@report_option
def replay(trace: str, system: str, order_file: str | None, map_: str | None, model: str, coll: tuple[str, ...],
           library: str | None, compute_scale: float, seed: int, ppn: int, placement: str, max_time: float | str | None, counter_period: int, as_json: bool,
           out: str | None, report: bool) -> None:
    """Replay an OTF2 trace of an MPI program on a simulated system (docs/traces.md)."""
    out = out_for(report, out, f"replay-{slug(Path(trace).stem)}")
    if not (compute_scale >= 0.0) or compute_scale == float("inf"):
        raise click.UsageError(f"--compute-scale {compute_scale}: expected a finite factor >= 0")
    if order_file and map_:
        raise click.UsageError("give --order or --map, not both")
    order = read_order(order_file) if order_file else None
    if map_:
        kind, sep, shape = map_.partition(":")
        if kind != "virtual" or not sep or not shape:
            raise click.UsageError(f"--map {map_!r}: expected virtual:SHAPE, e.g. virtual:4x6x4")
        order = map_virtual(system, shape, None, None, "faults", True)["node_of_rank"]
    progress = _LazyProgress()
    columns: dict = {}
    try:
        if counter_period is None:
            # A packet replay with --out samples by default (the report's heat maps move over the samples).
            counter_period = DEFAULT_COUNTER_PERIOD if out and model == "packet" else 0
        elif counter_period and not out and model == "packet":
            raise click.UsageError("--counter-period: the samples go to --out DIR (port_samples.parquet, vc_samples.parquet); "
                                   "without it there is nowhere to write them")
        if counter_period < 0:
            raise click.UsageError(f"--counter-period {counter_period}: expected cycles >= 0")
        if counter_period and model != "packet":
            raise click.UsageError("--counter-period samples the packet engine's counters: use --model packet")
        r = run_replay(trace, system, model=model, order=order, compute_scale=compute_scale,
                       algorithms=_algorithms(coll), seed=seed, progress=progress, counter_cycles=counter_period,
                       samples=columns, max_minutes=max_time, ppn=ppn, placement=placement, library=library)
    finally:
        progress.close()
    if out:
        d = Path(out)
        try:
            d.mkdir(parents=True, exist_ok=True)
            files = CounterSamples(columns).write(d)
            if files:
                r["run"] = {**r["run"], "counter_samples": {**r["run"].get("counter_samples", {}), "files": [f.name for f in files]}}
            machine = dict(r.get("machine") or {})
            if "system_toml" in machine:
                (d / "system.toml").write_text(machine.pop("system_toml"), encoding="utf-8")
            (d / "result.json").write_text(json.dumps({**r, "machine": machine} if machine else r, indent=1) + "\n", encoding="utf-8")
            with open(d / "per_rank.csv", "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=list(r["per_rank"][0].keys()) if r["per_rank"] else ["rank"])
                w.writeheader()
                w.writerows(r["per_rank"])
        except OSError as e:
            raise ConfigError(f"{out}: cannot write the replay's results: {e.strerror}") from None
    interrupted = bool((r.get("run") or {}).get("interrupted") or (r.get("flow") or {}).get("interrupted"))
    if out and report:
        write_into(out, interrupted)
    if as_json:
        click.echo(json.dumps(r))
        if interrupted:
            raise Interrupted("interrupted: the replay stopped before the trace ended (complete: false)")
        return
    con = Console()
    ratio = r["time_seconds"] / r["measured_seconds"] if r["measured_seconds"] > 0 else float("nan")
    con.print(f"[bold]{r['trace']}[/] on {r['system']} ({r['model']} model, {r['ranks']} ranks): "
              f"predicted [bold]{r['time_seconds']:.6f} s[/]; the trace measured {r['measured_seconds']:.6f} s "
              f"on its own machine ({ratio:.2f}x)")
    calls = r.get("collective_calls") or []
    if calls:
        t = Table("operation", "ranks", "size", "calls", "algorithm", "why", title=f"Collectives ({r['library']}'s rules unless given)")
        shown = calls if len(calls) <= 24 else calls[:24]
        for c in shown:
            algo = c["algorithm"] + (f" (for {c['stands_in_for']})" if c.get("stands_in_for") else "")
            t.add_row(c["op"], str(c["ranks"]), f"{c['size_bytes']:,} B", f"{c['calls']:,}", algo, c["rule"])
        con.print(t)
        if len(calls) > len(shown):
            con.print(f"[dim]… and {len(calls) - len(shown)} more (result.json's collective_calls)[/]")
    mpi = r.get("mpi_software") or {}
    if mpi:
        colour = "dim" if mpi.get("native") else "yellow"
        con.print(f"[{colour}]MPI software: {mpi['profile']}: {mpi['note']}[/]")
    t = Table("rank", "node", "end s", "compute s", "point-to-point s", "collective s", "waiting s", title="Per rank (simulated)")
    rows = r["per_rank"]
    shown = rows if len(rows) <= 32 else rows[:16] + rows[-16:]
    for p in shown:
        t.add_row(str(p["rank"]), str(p["node"]), f"{p['end_seconds']:.6f}", f"{p['compute_seconds']:.6f}",
                  f"{p['point_to_point_seconds']:.6f}", f"{p['collective_seconds']:.6f}", f"{p['waiting_seconds']:.6f}")
    con.print(t)
    if r["busiest_links"]:
        t = Table("router", "port", "bytes", "busy", title="Busiest links")
        for link in r["busiest_links"][:5]:
            busy = f"{link['busy_fraction']:.1%}" if link["busy_fraction"] is not None else "-"
            t.add_row(str(link["router"]), link["port"], f"{link['bytes']:,}", busy)
        con.print(t)
    con.print(f"{r['messages']:,} network messages, {r['bytes_sent']:,} bytes; simulated in {r['wall_seconds']:.2f} s")
    if r["uncompleted_receives"]:
        con.print(f"[yellow]{r['uncompleted_receives']} receives posted but never completed in the trace: not replayed[/]")
    if interrupted:
        # As run and coll do: what was replayed up to Ctrl-C, and exit 130.
        raise Interrupted("interrupted: the replay stopped before the trace ended; the figures above are not the program's (complete: false)")
