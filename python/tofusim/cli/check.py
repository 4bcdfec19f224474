"""``tofusim check``: the static deadlock check of a system or experiment.

Builds the channel dependency graph of the routing and VC scheme the
engine would run (Dally-Seitz; Duato's condition for cut-through networks
with adaptive routing beside escape VCs; bubble rings as the documented
special case) and proves it free of deadlock or prints a dependency cycle
as (router, port, VC). Exit 0 when proved, 1 for a cycle or no proof, 2
for bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from .outcome import Interrupted, Failed
from .. import check as check_network
from .files import read_text


def deadlock_check(target: str, routing: str | None = None, progress: Any = None) -> dict[str, Any]:
    """The check of ``target``: an experiment file (``.toml``) or a system
    name (a preset, resized or not, e.g. ``bgl:8x8x8``); ``routing`` sets
    ``[routing] algorithm``. Returns the result as a dict (see
    docs/experiment.md, ``tofusim check``)."""
    if target.endswith(".toml") or Path(target).is_file():
        return check_network(text=read_text(target, "experiment file"), file=target, routing=routing, progress=progress)
    return check_network(target, routing=routing, progress=progress)


def _print(r: dict[str, Any]) -> None:
    console = Console(width=None if sys.stdout.isatty() else 140)
    s = r["vc_scheme"]
    t = Table(title=f"{r['system']}: {r['topology']}, routing {r['routing']}", show_header=False)
    t.add_column("", style="bold")
    t.add_column("")
    t.add_row("VC scheme", f"{s['dynamic_vcs']} dynamic VC(s), escape {s['escape']}, "
               f"{'adaptive' if s['adaptive'] else 'deterministic'}"
               f"{', virtual output queues' if s['virtual_output_queues'] else ''}")
    t.add_row("channels used", f"{r['channels_used']:,} ({r['dependencies']:,} dependencies)")
    if r["escape_channels_used"]:
        t.add_row("escape channels", f"{r['escape_channels_used']:,} ({r['escape_dependencies']:,} dependencies)")
    t.add_row("packet states followed", f"{r['states']:,} in {r['wall_seconds']:.2f} s")
    verdict = {"deadlock-free": "[green]deadlock-free[/]", "cycle": "[red]no proof: a dependency cycle[/]",
               "not-proven": "[yellow]not proven[/]"}[r["verdict"]]
    t.add_row("verdict", verdict + (f": {r['method']}" if r["method"] else ""))
    console.print(t)
    if r["cycle"]:
        adaptive = r["vc_scheme"]["adaptive"]
        what = ("a cycle of channel dependencies (each channel's packet may wait for the next, the last for the first): "
                + ("a deadlock is possible, not certain, where packets have other routes" if adaptive else
                   "packets holding these channels can wait for each other forever")
                if r["verdict"] == "cycle" else
                "a bubble ring's cycle: the bubble rule without the full-size charge does not keep it moving "
                "(variable-sized packets can fragment the free space; docs/model.md)")
        console.print(what)
        c = Table()
        for col in ("#", "router", "port", "VC"):
            c.add_column(col)
        for i, ch in enumerate(r["cycle"]):
            c.add_row(str(i), f"{ch['router']} {ch['router_label']}", f"{ch['port']} {ch['port_name']}", f"{ch['vc']} {ch['vc_name']}")
        console.print(c)


@click.command()
@click.argument("target", metavar="SYSTEM|EXP.toml")
@click.option("--routing", "routing", default=None, metavar="MODE",
              help="Routing mode ([routing] algorithm): adaptive | dor (tori), minimal | valiant | ugal | ... "
                   "(dragonflies), d-mod-k | random | adaptive (fat-trees). Default: the system's or the file's.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def check(target: str, routing: str | None, as_json: bool) -> None:
    """Prove a network free of deadlock, or print a dependency cycle.

    Follows every route the engine can take (every source, destination and
    initial route state, every output and VC the router may choose) and
    builds the channel dependency graph of SYSTEM (a preset such as
    bgl:8x8x8, k:4x6x4, aries-2g, summit:2) or of an experiment file with
    its [router] and [routing] tables. Exit 0: deadlock-free; 1: a cycle,
    or no proof; 2: bad input.
    """
    try:
        with Progress(transient=True, disable=as_json or not sys.stderr.isatty(), console=Console(stderr=True)) as bar:
            task = bar.add_task("checking", total=1.0)
            r = deadlock_check(target, routing, progress=lambda f: bar.update(task, completed=f))
    except KeyboardInterrupt:
        # Ctrl-C: no proof either way; under --json still one object.
        if as_json:
            click.echo(json.dumps({"target": target, "verdict": "interrupted", "interrupted": True}))
        raise Interrupted("interrupted: the check stopped before its proof (no verdict)") from None
    if as_json:
        click.echo(json.dumps(r))
    else:
        _print(r)
    if r["verdict"] != "deadlock-free":
        raise Failed(f"verdict: {r['verdict']}")
