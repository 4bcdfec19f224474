"""``tofusim jobs MIX.toml``: many jobs on one machine, their interference."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from .files import read_text, write_text
from .report import out_for, report_option, slug, write_into


@click.command()
@click.argument("mix_file", metavar="MIX.toml")
@click.option("--out", "out", default=None, help="Directory for result.json and placement.png (the jobs' nodes on the machine, and the links each pair of jobs shares).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@report_option
def jobs(mix_file: str, out: str | None, as_json: bool, report: bool) -> None:
    """Run a mix of jobs together on one machine, then each alone on the same nodes.

    MIX.toml names the system, the placement policy (contiguous,
    group-compact, leaf-compact, random, group-spread, tofu-rect), the
    model (packet; flow-events, flow-rounds, or flow: events for small
    mixes, lockstep rounds for large ones) and the jobs ([[job]]: kind collective, halo,
    pattern, background or trace, nodes or shape, ppn, arrival_us). Prints each job's time alone and in the mix, its
    slowdown, and the links it shared with which jobs (docs/jobs.md).
    """
    from .. import jobs as run_jobs

    out = out_for(report, out, f"jobs-{slug(Path(mix_file).stem)}")
    r = run_jobs(read_text(mix_file, "mix file"), mix_file)
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        write_text(str(Path(out) / "result.json"), json.dumps(r, indent=1), "result")
        draw(r, str(Path(out) / "placement.png"))
    if as_json:
        click.echo(json.dumps(r))
        if out and report:
            write_into(out)
        return
    t = Table(title=f"{len(r['jobs'])} jobs on {r['system']} ({r['nodes']:,} nodes), placement {r['placement']}")
    for c in ("job", "what", "ranks", "placed", "alone µs", "in mix µs", "slowdown", "links shared / used", "shares with", "critical path in the mix"):
        t.add_column(c)
    for j in r["jobs"]:
        shares = ", ".join(f"{s['job']} ({s['links']} links, {s['their_bytes']:,} B of theirs)" for s in j["shares_with"]) or "-"
        path = j.get("critical_path")
        if path and path["end_us"] > 0:
            parts = sorted(path["by_kind_us"].items(), key=lambda kv: -kv[1])[:2]
            path_text = ", ".join(f"{k} {v / path['end_us']:.0%}" for k, v in parts) + f" ({path['transfers']} transfers)"
        else:
            path_text = "-"
        t.add_row(j["name"], j["what"], f"{j['ranks']:,} ({j['ranks_per_node']}/node)", j["placed"], f"{j['alone_us']:,.2f}",
                  f"{j['in_mix_us']:,.2f}", f"{j['slowdown']:.3f}", f"{j['links_shared']} / {j['links_used']}", shares, path_text)
    Console(width=None if sys.stdout.isatty() else 200).print(t)
    if r["shared_links"]:
        click.echo("links used by more than one job (bytes each moved over it alone):")
        for link in r["shared_links"][:10]:
            click.echo(f"  router {link['router']} {link['port']}: " + ", ".join(f"{n} {b:,} B" for n, b in link["bytes_by_job"]))
    how = {"packet": "the packet engine", "flow-events": "the flow model, event by event",
           "flow-rounds": "the flow model in lockstep rounds"}.get(r["model"], r["model"])
    click.echo(f"mix: {r['time_us']:,.2f} µs on {how}"
               f"{'' if r['complete'] else ', INCOMPLETE'}; {r['wall_seconds']:.1f} s wall")
    lock = r.get("lockstep")
    if lock:
        click.echo(f"  {lock['rounds']:,} rounds, {lock['solves']:,} max-min solves ({lock['reused']:,} sets solved before), "
                   f"at most {lock['largest_set']:,} flows; the lockstep's own ends (every round waiting for its slowest "
                   f"message): " + ", ".join(f"{j['name']} {e * 1e6:,.1f} µs" for j, e in zip(r['jobs'], lock['lockstep_end_seconds'])))
    if out:
        click.echo(f"wrote {out}/result.json, placement.png", err=True)
        if report:
            write_into(out)


def draw(r: dict, png: str) -> None:
    """The placement: every node of the machine a cell (the system's node
    order, ``layout_width`` per row), coloured by its job; beside it, the
    links each pair of jobs shares."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    jobs = r["jobs"]
    width = max(1, r["layout_width"])
    rows = -(-r["nodes"] // width)
    grid = np.full(rows * width, np.nan)
    for k, j in enumerate(jobs):
        grid[np.asarray(j["positions"], dtype=int)] = k
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [2, 1]})
    cmap = plt.get_cmap("tab20", max(len(jobs), 1))
    left.imshow(grid.reshape(rows, width), cmap=cmap, vmin=-0.5, vmax=len(jobs) - 0.5, aspect="auto", interpolation="nearest")
    left.set_title(f"{r['system']}, placement {r['placement']}: {r['layout_rows']}; white: free")
    left.set_xticks([])
    left.set_yticks([])
    handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(k)) for k in range(len(jobs))]
    left.legend(handles, [f"{j['name']} ×{j['slowdown']:.2f}" for j in jobs], loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
                title="job × slowdown", title_fontsize=8)
    shared = np.zeros((len(jobs), len(jobs)))
    index = {j["name"]: k for k, j in enumerate(jobs)}
    for k, j in enumerate(jobs):
        for s in j["shares_with"]:
            shared[k, index[s["job"]]] = s["links"]
    im = right.imshow(shared, cmap="Reds", vmin=0, vmax=max(1.0, float(shared.max())))
    right.set_xticks(range(len(jobs)), [j["name"] for j in jobs], rotation=45, ha="right", fontsize=8)
    right.set_yticks(range(len(jobs)), [j["name"] for j in jobs], fontsize=8)
    for a in range(len(jobs)):
        for b in range(len(jobs)):
            if a != b:
                right.text(b, a, f"{int(shared[a, b]):,}", ha="center", va="center", fontsize=7)
    right.set_title("links shared by each pair of jobs")
    fig.colorbar(im, ax=right, fraction=0.046)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
