"""``tofusim pattern`` and ``tofusim rmatt``: communication lists and the
RMATT rank-order optimiser ([S:003]; docs/mapping.md)."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from .outcome import Interrupted
from .. import ConfigError, mapping
from .files import read_text, write_text
from .ranks import ppn_options, read_order, read_placement


def write_order(path: str, torus: str, order: list[int], note: str) -> None:
    head = f"# rank order on a {torus} torus ({note}): line i = node of rank i, nodes numbered x fastest\n"
    write_text(path, head + "".join(f"{n}\n" for n in order), "rank order")


@click.group()
def pattern() -> None:
    """Communication lists (SRC DST BYTES per line) and their simulated time."""


@pattern.command("cg")
@click.option("--procs", type=int, required=True, help="Processes (a power of two, as NAS CG requires).")
@click.option("--class", "class_", default="B", show_default=True, metavar="S|W|A|B|C|D|E", help="NPB problem class.")
@click.option("--out", "out", help="Write the list to this file (default: stdout).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary (needs --out).")
def cg(procs: int, class_: str, out: str | None, as_json: bool) -> None:
    """The NAS CG communication list: bytes each rank sends each other rank over the timed run."""
    text = mapping.cg_comm_list(procs, class_)
    if as_json and not out:
        raise click.UsageError("--json prints a summary; give --out FILE for the list")
    if not out:
        click.echo(text, nl=False)
        return
    write_text(out, text, "communication list")
    flows = [line.split() for line in text.splitlines() if line and not line.startswith("#")]
    summary = {"pattern": "cg", "procs": procs, "class": class_.upper(), "flows": len(flows),
               "total_bytes": sum(int(f[2]) for f in flows), "out": out}
    click.echo(json.dumps(summary) if as_json else f"wrote {out}: {summary['flows']} flows, {summary['total_bytes']:.3e} bytes")


def torus_nodes(torus: str) -> int:
    """The nodes of a torus written ``32x32`` (checked again by the core)."""
    try:
        lengths = [int(v) for v in torus.split("x")]
    except ValueError:
        raise click.BadParameter(f"expected axis lengths like 32x32, got {torus!r}", param_hint="--torus") from None
    n = 1
    for v in lengths:
        n *= max(v, 0)
    return n


def placed_order(placement: str, procs: int, nodes: int, ppn: int) -> list[int]:
    """Each rank's node: ``block`` (``ppn`` consecutive ranks per node, the
    x-y order with one), ``cyclic`` (round robin over the torus' nodes) or
    an order file's (``tofusim rmatt --out``)."""
    given = read_placement(placement)
    if given == "block":
        return [r // max(ppn, 1) for r in range(procs)]
    if given == "cyclic":
        return [r % max(nodes, 1) for r in range(procs)]
    return list(given)


@pattern.command("time")
@click.option("--torus", required=True, help="The job's virtual torus of nodes, e.g. 32x32.")
@click.option("--procs", type=int, required=True, help="NAS CG processes.")
@click.option("--class", "class_", default="B", show_default=True, metavar="S|W|A|B|C|D|E")
@ppn_options
@click.option("--order", "order_file", help="An order FILE: the same as --placement FILE.")
@click.option("--system", default="k", show_default=True, help="Preset whose links and host model the torus gets.")
@click.option("--json", "as_json", is_flag=True)
def time_(torus: str, procs: int, class_: str, ppn: int, placement: str, order_file: str | None, system: str, as_json: bool) -> None:
    """Communication time of one NAS CG iteration on the packet engine, ranks placed on the torus' nodes."""
    if order_file:
        if placement != "block":
            raise click.UsageError("--order FILE and --placement name the same thing: give one")
        placement = order_file
    if procs < 1:
        raise click.BadParameter(f"expected at least 1 process, found {procs}", param_hint="--procs")
    order = placed_order(placement, procs, torus_nodes(torus), ppn)
    r = mapping.cg_iteration_time(torus, procs, class_, order, system, ppn)
    label = {"block": "x-y" if ppn == 1 else f"block, {ppn} per node", "cyclic": "cyclic"}.get(placement, placement)
    out = {"torus": torus, "procs": procs, "class": class_.upper(), "ranks_per_node": ppn, "order": label,
           "time_seconds": r["time_seconds"], "run": r["run"]}
    if as_json:
        click.echo(json.dumps(out))
    else:
        click.echo(f"one CG iteration's communication on {torus} ({label}): {r['time_seconds'] * 1e6:.1f} µs "
                   f"(simulated in {r['run']['wall_seconds']:.1f} s)")


@click.command()
@click.option("--torus", required=True, help="The job's virtual torus, e.g. 32x32 or 128x64.")
@click.option("--pattern", "pattern_file", required=True, help="Communication list: SRC DST BYTES per line.")
@click.option("--objective", default="hop-bytes", show_default=True, metavar="hop-bytes|max-link-load")
@click.option("--seed", default=1, show_default=True, type=click.IntRange(0, 2**64 - 1), help="Seed of the annealer (same seed, same order).")
@click.option("--iterations", type=int, help="Proposed swaps (default: 2,000 per rank for hop-bytes, 500 for max-link-load).")
@click.option("--start", "start_file", help="Start from this order file instead of the x-y order.")
@click.option("--ppn", type=int, default=1, show_default=True, metavar="N",
              help="Ranks a node of the torus holds (one per core): flows between ranks of one node cost nothing; "
                   "the x-y start puts N consecutive ranks on each node.")
@click.option("--out", "out", help="Write the optimised rank order here.")
@click.option("--json", "as_json", is_flag=True)
def rmatt(torus: str, pattern_file: str, objective: str, seed: int, iterations: int | None, start_file: str | None,
          ppn: int, out: str | None, as_json: bool) -> None:
    """RMATT: simulated annealing of the rank order of a communication list on a torus."""
    text = read_text(pattern_file, "communication list")
    start = read_order(start_file) if start_file else None
    r = mapping.rmatt(torus, text, objective, seed, iterations, start, pattern_file, ranks_per_node=ppn)
    order = r.pop("order")
    stopped = "" if r["complete"] else f", interrupted after {r['iterations']:,} of {r['requested_iterations']:,} iterations (the best so far)"
    if out:
        per = "" if ppn == 1 else f", {ppn} ranks per node"
        write_order(out, torus, order, f"RMATT {objective}, seed {seed}{per}{stopped}")
        r["out"] = out
    if as_json:
        click.echo(json.dumps(r))
        if stopped:
            raise Interrupted(f"rmatt{stopped}")
        return
    per = "" if ppn == 1 else f", {ppn} per node"
    t = Table(title=f"RMATT on {torus}: {r['ranks']} ranks{per}, {objective}")
    for c in ("start (x-y order)" if not start_file else "start", "optimised", "change", "iterations", "seconds"):
        t.add_column(c)
    change = (r["optimized_cost"] / r["default_cost"] - 1) if r["default_cost"] else 0.0
    t.add_row(f"{r['default_cost']:.4g}", f"{r['optimized_cost']:.4g}", f"{change:+.1%}", f"{r['iterations']:,}", f"{r['seconds']:.2f}")
    Console(width=None if sys.stdout.isatty() else 120).print(t)
    if out:
        click.echo(f"order written to {out}")
    if stopped:
        # As run and coll do: what was found up to Ctrl-C, and exit 130.
        raise Interrupted(f"rmatt{stopped}")


@pattern.command("from-trace")
@click.argument("path", metavar="TRACE")
@click.option("--out", "out", help="Write the list to this file (default: stdout).")
@click.option("--collectives", type=click.Choice(["default", "none"]), default="default", show_default=True,
              help="default: add each collective's messages under the algorithm Open MPI's rules pick (tofusim_comm::library); none: point-to-point only.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary (needs --out).")
def from_trace(path: str, out: str | None, collectives: str, as_json: bool) -> None:
    """The communication list of an OTF2 trace (SRC DST BYTES per rank pair), for tofusim rmatt."""
    from ..trace import comm_list

    if as_json and not out:
        raise click.UsageError("--json prints a summary; give --out FILE for the list")
    c = comm_list(path, collectives == "default")
    flows = {(a, b): n for a, b, n in c["flows"]}
    p2p, expanded = c["point_to_point_bytes"], c["collective_bytes"]
    text = (f"# ranks {c['ranks']}\n# from the trace {c['trace']}: point-to-point bytes"
            + (" and each collective's messages under Open MPI's algorithm" if collectives == "default" else "") + "\n"
            + "".join(f"{a} {b} {n}\n" for (a, b), n in sorted(flows.items())))
    if not out:
        click.echo(text, nl=False)
        return
    write_text(out, text, "communication list")
    summary = {"trace": c["trace"], "ranks": c["ranks"], "flows": len(flows), "point_to_point_bytes": p2p,
               "collective_bytes": expanded, "total_bytes": p2p + expanded, "out": out}
    click.echo(json.dumps(summary) if as_json else f"wrote {out}: {len(flows)} flows, {p2p + expanded:.3e} bytes "
               f"({p2p:.3e} point-to-point, {expanded:.3e} in collectives)")
