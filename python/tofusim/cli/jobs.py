"""``tofusim jobs MIX.toml``: many jobs on one machine, their interference."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from .files import read_text, write_text


@click.command()
@click.argument("mix_file", metavar="MIX.toml")
@click.option("--out", "out", default=None, help="Write the result as JSON to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def jobs(mix_file: str, out: str | None, as_json: bool) -> None:
    """Run a mix of jobs together on one machine, then each alone on the same nodes.

    MIX.toml names the system, the placement policy (contiguous,
    group-compact, leaf-compact, random, group-spread, tofu-rect) and the
    jobs ([[job]]: kind collective, halo or pattern, nodes or shape, ppn,
    arrival_us). Prints each job's time alone and in the mix, its
    slowdown, and the links it shared with which jobs (docs/jobs.md).
    """
    from .. import jobs as run_jobs

    r = run_jobs(read_text(mix_file, "mix file"), mix_file)
    if out:
        write_text(out, json.dumps(r, indent=1), "result")
    if as_json:
        click.echo(json.dumps(r))
        return
    t = Table(title=f"{len(r['jobs'])} jobs on {r['system']} ({r['nodes']:,} nodes), placement {r['placement']}")
    for c in ("job", "what", "ranks", "placed", "alone µs", "in mix µs", "slowdown", "links shared / used", "shares with"):
        t.add_column(c)
    for j in r["jobs"]:
        shares = ", ".join(f"{s['job']} ({s['links']} links, {s['their_bytes']:,} B of theirs)" for s in j["shares_with"]) or "-"
        t.add_row(j["name"], j["what"], f"{j['ranks']:,} ({j['ranks_per_node']}/node)", j["placed"], f"{j['alone_us']:,.2f}",
                  f"{j['in_mix_us']:,.2f}", f"{j['slowdown']:.3f}", f"{j['links_shared']} / {j['links_used']}", shares)
    Console(width=None if sys.stdout.isatty() else 200).print(t)
    if r["shared_links"]:
        click.echo("links used by more than one job (bytes each moved over it alone):")
        for link in r["shared_links"][:10]:
            click.echo(f"  router {link['router']} {link['port']}: " + ", ".join(f"{n} {b:,} B" for n, b in link["bytes_by_job"]))
    click.echo(f"mix: {r['cycles']:,} cycles ({r['cycles'] * r['cycle_ns'] / 1000:,.2f} µs){'' if r['complete'] else ', INCOMPLETE'}; "
               f"{r['wall_seconds']:.1f} s wall")
