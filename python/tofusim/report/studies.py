"""The sections of a report on several runs: a sweep (``tofusim sweep``),
a collective sweep (``tofusim coll --algo a,b --size LO:HI``) and
published figures (``tofusim reproduce --out``)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from .figures import curves_figure, grouped_figure
from .rundir import RunDir
from .sections import Draw, Section, details, esc, facts_table, frame_table


def _varied(rd: RunDir) -> list[str]:
    """The sweep's varied keys: sweep.json's, or (a directory written
    before it) the columns before ``model``, where the sweep puts them."""
    if rd.meta.get("vary"):
        return [v["key"] for v in rd.meta["vary"]]
    cols = list(rd.table.columns)
    return cols[: cols.index("model")] if "model" in cols else cols[:1]


def sweep_sections(rd: RunDir, draw: Draw) -> list[Section]:
    """Summary, the accepted-load and latency curves, and every point."""
    rows = rd.table
    varied = _varied(rd)
    load = next((k for k in varied if k.endswith(".load")), None)
    x = "offered_load" if load else varied[0]
    groups = [k for k in varied if k != (load or varied[0])]
    saturated = int(rows["saturated"].sum()) if "saturated" in rows else 0
    facts = [("experiment", rd.meta.get("experiment")), ("model", rd.meta.get("model") or (rows["model"].iat[0] if "model" in rows else None)),
             ("varied", "; ".join(f"{v['key']} = {', '.join(map(str, v['values']))}" for v in rd.meta.get("vary", [])) or ", ".join(varied)),
             ("points", f"{len(rows):,}"), ("saturated points", f"{saturated:,}")]
    body = facts_table(facts) + (details("experiment file", rd.experiment) if rd.experiment else "")
    out = [Section("summary", "Summary and setup", body)]
    if "accepted_load" in rows and "latency_mean_cycles" in rows:
        fig = grouped_figure(rows.sort_values(x) if rows[x].map(lambda v: isinstance(v, (int, float))).all() else rows, x,
                             [("accepted_load", "accepted load"), ("latency_mean_cycles", "mean latency (cycles)")], groups,
                             marked="saturated" if "saturated" in rows else None, log_y=(False, True))
        out.append(Section("curves", "Accepted load and latency",
                           "<p>A line per combination of the other varied keys; a red cross marks a saturated point (accepted "
                           "load below the offered by more than 2% beyond counting noise, or mean latency above 3× the zero-load "
                           "latency), whose latency is not a steady-state figure.</p>" + draw(fig, "sweep")))
    shown = rows.drop(columns=[c for c in ("invariant_error",) if c in rows and not rows[c].astype(bool).any()])
    out.append(Section("points", "Every point", frame_table(shown, {"accepted_load": ".4f", "offered_load": ".4g", "latency_mean_cycles": ",.1f",
                                                                     "link_utilization": ".4f", "wall_seconds": ".2f", "cycle_ns": ".4g"})))
    return out


def coll_sweep_sections(rd: RunDir, draw: Draw) -> list[Section]:
    """Summary, time and bandwidth against the size per algorithm, and every run."""
    rows = rd.table.copy()
    first = rows.iloc[0]
    facts = [("operation", first["operation"]), ("system", first["system"]), ("model", first["model"]),
             ("algorithms", ", ".join(dict.fromkeys(rows["algorithm"]))), ("sizes", ", ".join(f"{s:,} B" for s in dict.fromkeys(rows["size_bytes"]))),
             ("runs", f"{len(rows):,}"), ("failed runs", f"{int(rows['failed'].sum()):,}" if "failed" in rows else None)]
    rows["time (µs)"] = rows["time_seconds"] * 1e6
    rows["bandwidth (GB/s)"] = rows["bandwidth_Bps"] / 1e9
    fig = grouped_figure(rows, "size_bytes", [("time (µs)", "time (µs)"), ("bandwidth (GB/s)", "bandwidth (GB/s)")], ["algorithm"],
                         marked="failed" if "failed" in rows else None, log_x=True, log_y=(True, False))
    return [Section("summary", "Summary and setup", facts_table(facts)),
            Section("curves", "Time and bandwidth by size", "<p>A line per algorithm; a red cross marks a failed run "
                    "(deadlock, invariant violation or failed verification).</p>" + draw(fig, "coll-sweep")),
            Section("points", "Every run", frame_table(rows.drop(columns=["time (µs)", "bandwidth (GB/s)"]),
                                                       {"time_seconds": ".4g", "bandwidth_Bps": ".4g", "messages": ",", "bytes_sent": ","}))]


def _criterion(m: dict[str, Any]) -> str:
    p, tol = m.get("published"), m.get("tolerance")
    if p is None:
        return "none published" if m.get("unpublished") else "withheld (blind check)"
    if m.get("lower_bound"):
        return f"≥ {p * (1 - (tol or 0.0)):.4g}"
    return f"{p:.4g}" if tol is None else f"{p:.4g} ± {tol:.0%}"


def reproduce_sections(rd: RunDir, draw: Draw) -> list[Section]:
    """One section per case: its metrics beside the published values, its curves and setup."""
    out = [Section("summary", "Summary", facts_table([
        ("cases", f"{len(rd.cases)}"),
        ("metrics within the published tolerance", f"{sum(1 for c in rd.cases for m in c['metrics'] if m.get('within'))} of "
                                                    f"{sum(1 for c in rd.cases for m in c['metrics'] if m.get('within') is not None)}")]))]
    for n, case in enumerate(rd.cases):
        metrics = pd.DataFrame([{"metric": m["name"], "unit": m["unit"], "measured": m["measured"], "published": _criterion(m),
                                 "within": "-" if m.get("within") is None else ("yes" if m["within"] else ("no (known)" if m.get("known_difference") else "NO"))}
                                for m in case["metrics"]])
        body = (f"<p>Source: {esc(case.get('source', ''))}; {esc(case.get('scale', ''))} scale.</p>"
                + frame_table(metrics, {"measured": ".4g"}))
        for k, plot in enumerate(case.get("plots") or []):
            series = {name: [p[1] for p in pts] for name, pts in plot["curves"].items()}
            xs = {name: [p[0] for p in pts] for name, pts in plot["curves"].items()}
            fig = curves_figure(xs, series, plot["x"], plot["y"])
            # A published level without a curve: a dashed line.
            for label, level in (plot.get("published") or {}).items():
                fig.add_hline(y=level, line_dash="dash", line_color="grey", annotation_text=f"published {label}",
                              annotation_position="top left")
            body += f"<h3>{esc(plot['title'])}</h3>" + draw(fig, f"case-{n}-plot-{k}")
        body += details("setup (JSON)", json.dumps(case.get("setup", {}), indent=1))
        out.append(Section(f"case-{case['case']}", f"{case['case']}: {case['title']}", body))
    return out
