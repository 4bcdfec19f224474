"""``tofusim explain``: what limits a run — the binding resource in one
sentence with its numbers, then the resource classes, the blocked time by
cause and, for a collective or replay, the critical path."""

from __future__ import annotations

import json
import sys

import click

from ..limits import SEGMENT_MEANING, explain as explain_run, rows


@click.command()
@click.argument("path", metavar="RUN_DIR_OR_FILE")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout: summary, limits, critical_path, cycle_ns.")
def explain(path: str, as_json: bool) -> None:
    """Say what limits a run: a directory written by tofusim run, coll or
    replay with --out, or its results.json / result.json.

    Every packet-engine run accounts, per resource (links by class, host
    interfaces, injection FIFOs), its busy time and the time packets were
    blocked there, by cause (a busy link, downstream tokens, a lost
    arbitration, input paths, reception, the host interface, FIFO space);
    a collective or replay also its critical path and each rank's waits.
    """
    x = explain_run(path)
    if as_json:
        click.echo(json.dumps(x))
        return
    from rich.console import Console
    from rich.table import Table

    con = Console(width=None if sys.stdout.isatty() else 140)
    con.print(x["summary"], highlight=False)
    lim = x["limits"]
    t = Table(title="Resources (measured window)")
    for c in ("resource", "count", "busy mean", "busy max", "waits per cycle", "token-depleted"):
        t.add_column(c, justify="left" if c == "resource" else "right")
    for r in rows(lim):
        t.add_row(r["resource"], f"{r['count']:,}", f"{r['busy_mean_pct']:.1f}%", f"{r['busy_max_pct']:.1f}%",
                  ("-" if r["waited_per_cycle"] is None else f"{r['waited_per_cycle']:.3f}"), f"{r['depleted_pct']:.1f}%")
    con.print(t)
    b = Table(title="Blocked queue-head time by cause")
    b.add_column("cause")
    b.add_column("µs (packet-head time, summed)", justify="right")
    b.add_column("cycles", justify="right")
    b.add_column("share", justify="right")
    for cause, cycles in sorted(lim["blocked_cycles"].items(), key=lambda kv: -kv[1]):
        b.add_row(cause, f"{cycles * x['cycle_ns'] / 1000:,.1f}", f"{cycles:,}", f"{lim['blocked_share'][cause]:.1%}")
    con.print(b)
    top = Table(title="Busiest resources")
    for c in ("resource", "class", "busy", "token-depleted"):
        top.add_column(c, justify="left" if c in ("resource", "class") else "right")
    for r in lim["busiest"]:
        top.add_row(r["name"], r["resource_class"], f"{100 * r['busy']:.1f}%", "-" if r["depleted"] is None else f"{100 * r['depleted']:.1f}%")
    con.print(top)
    cp = x["critical_path"]
    if cp:
        ns = x["cycle_ns"]
        p = Table(title=f"Critical path: {cp['end_cycle'] * ns / 1000:,.2f} µs")
        p.add_column("part")
        p.add_column("µs", justify="right")
        p.add_column("share", justify="right")
        for k, v in sorted(cp["by_kind"].items(), key=lambda kv: -kv[1]):
            p.add_row(SEGMENT_MEANING.get(k, k), f"{v * ns / 1000:,.2f}", f"{v / max(cp['end_cycle'], 1):.1%}")
        con.print(p)
        s = Table(title="Slowest ranks")
        for c in ("rank", "end µs", "compute µs", "overhead µs", "waiting µs", "waited most for"):
            s.add_column(c, justify="right")
        for r in cp["slowest_ranks"]:
            who = "-" if r["waited_most_for"] is None else f"rank {r['waited_most_for']} ({r['waited_most_cycles'] * ns / 1000:,.1f} µs)"
            s.add_row(str(r["rank"]), f"{r['end_cycle'] * ns / 1000:,.2f}", f"{r['compute_cycles'] * ns / 1000:,.2f}",
                      f"{r['overhead_cycles'] * ns / 1000:,.2f}", f"{r['waiting_cycles'] * ns / 1000:,.2f}", who)
        con.print(s)
