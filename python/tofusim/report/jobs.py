"""The report of a job mix (``tofusim jobs --out DIR --report``): each
job's slowdown and critical path, the placement on the machine with the
jobs coloured, and the links they share."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .rundir import RunDir
from .sections import Draw, Section, facts_table, frame_table


def jobs_sections(rd: RunDir, draw: Draw) -> list[Section]:
    import plotly.graph_objects as go

    r = rd.result
    jobs = r["jobs"]
    facts = [("system", f"{r['system']} ({r['nodes']:,} nodes)"), ("placement", r["placement"]),
             ("model", {"packet": "packet engine", "flow-events": "flow model, event by event",
                        "flow-rounds": "flow model in lockstep rounds"}.get(r["model"], r["model"])),
             ("the mix's end", f"{r['time_us']:,.2f} µs" + ("" if r["complete"] else " (incomplete)")),
             ("worst slowdown", max((f"{j['slowdown']:.3f} ({j['name']})" for j in jobs), key=lambda t: float(t.split()[0]))),
             ("wall", f"{r['wall_seconds']:.1f} s")]
    rows = []
    for j in jobs:
        path = j.get("critical_path") or {}
        shares = sorted((path.get("by_kind_us") or {}).items(), key=lambda kv: -kv[1])[:2]
        end = path.get("end_us") or 0.0
        rows.append({"job": j["name"], "what": j["what"], "ranks": j["ranks"], "placed": j["placed"], "alone µs": j["alone_us"],
                     "in mix µs": j["in_mix_us"], "slowdown": j["slowdown"], "links shared": j["links_shared"], "links used": j["links_used"],
                     "critical path": ", ".join(f"{k} {v / end:.0%}" for k, v in shares) if end else ""})
    table = frame_table(pd.DataFrame(rows), {"alone µs": ",.2f", "in mix µs": ",.2f", "slowdown": ".3f"})
    summary = Section("summary", "Jobs: alone and in the mix", facts_table(facts) + table)

    width = max(1, int(r["layout_width"]))
    cells = -(-int(r["nodes"]) // width)
    z: list[list[Any]] = [[None] * width for _ in range(cells)]
    text: list[list[str]] = [["free"] * width for _ in range(cells)]
    for k, j in enumerate(jobs):
        for p in j["positions"]:
            z[p // width][p % width] = k
            text[p // width][p % width] = f"{j['name']}: slowdown {j['slowdown']:.3f}"
    fig = go.Figure(go.Heatmap(z=z, text=text, hoverinfo="text", colorscale="Turbo", zmin=0, zmax=max(len(jobs) - 1, 1), showscale=False))
    fig.update_layout(title=f"Each node, in the system's node order ({r['layout_rows']}), coloured by its job",
                      yaxis={"autorange": "reversed", "showticklabels": False}, xaxis={"showticklabels": False}, height=520)
    placement = Section("placement", "Placement on the machine", draw(fig, "placement"))

    names = [j["name"] for j in jobs]
    index = {n: k for k, n in enumerate(names)}
    matrix = [[0] * len(jobs) for _ in jobs]
    for k, j in enumerate(jobs):
        for s in j["shares_with"]:
            matrix[k][index[s["job"]]] = s["links"]
    heat = go.Figure(go.Heatmap(z=matrix, x=names, y=names, colorscale="Reds", zmin=0, text=[[str(v) for v in row] for row in matrix],
                                texttemplate="%{text}", hovertemplate="%{y} and %{x}: %{z} links<extra></extra>"))
    heat.update_layout(title="Links each pair of jobs shares (their packets cross them when each runs alone)", yaxis={"autorange": "reversed"}, height=420)
    links = pd.DataFrame([{"router": l["router"], "port": l["port"], "bytes by job (alone)": ", ".join(f"{n} {b:,}" for n, b in l["bytes_by_job"])}
                          for l in r["shared_links"]])
    shared_body = draw(heat, "shared") + (frame_table(links, {}) if len(links) else "<p>No link is used by more than one job.</p>")
    shared = Section("shared", "Shared links", shared_body)
    return [summary, placement, shared]
