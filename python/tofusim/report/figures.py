"""The report's pictures, as Plotly figures (drawn in the browser by the
plotly.js the page embeds).

:func:`cell_figure` is the one heat map on a topology layout: a panel per
grid (subplots sharing one colour scale), a trace per panel and plane, a
plane slider that shows one plane's traces (``restyle`` of ``visible``)
and a time slider with play and pause over frames that replace every
trace's values (``animate`` of ``z``). The two touch different trace
properties, so they can be moved independently.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .network import Panel

#: Colours of utilisation and progress, 0 (pale) to 1 (dark red).
SCALE = "YlOrRd"


def _frame_args(duration: int) -> dict[str, Any]:
    return {"mode": "immediate", "frame": {"duration": duration, "redraw": True}, "transition": {"duration": 0}, "fromcurrent": True}


def cell_figure(panels: Sequence[Panel], planes: Sequence[str], plane_title: str,
                frames: Sequence[tuple[str, Sequence[np.ndarray]]], hovers: Sequence[np.ndarray], *,
                value_name: str, time_title: str, zmax: float = 1.0, square: Sequence[bool] | None = None,
                height: int | None = None, initial: int = 0) -> go.Figure:
    """Heat maps of ``panels`` × ``planes``; ``frames[i] = (label, [z of
    each panel as (planes, rows, cols)])``; ``hovers[p]`` the static hover
    text of panel ``p``'s cells (same shape). The page opens on frame
    ``initial``; the colour scale runs from 0 to ``zmax``."""
    square = list(square) if square is not None else [True] * len(panels)
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p.title for p in panels], horizontal_spacing=0.08)
    owner: list[tuple[int, int]] = []  # (panel, plane) of each trace
    for k in range(len(planes)):
        for p, panel in enumerate(panels):
            fig.add_trace(go.Heatmap(z=_rounded(frames[initial][1][p][k]), text=hovers[p][k], coloraxis="coloraxis", visible=k == 0,
                                     xgap=1, ygap=1, hoverongaps=False, name=f"{panel.title} {planes[k]}".strip(),
                                     hovertemplate=f"%{{text}}<br>{value_name} %{{z:.3f}}<extra></extra>"),
                          row=1, col=p + 1)
            owner.append((p, k))
    for p, panel in enumerate(panels):
        fig.update_xaxes(title_text=panel.x_title, tickvals=panel.x_ticks[0] or None, ticktext=panel.x_ticks[1] or None,
                         showgrid=False, zeroline=False, constrain="domain", row=1, col=p + 1)
        fig.update_yaxes(title_text=panel.y_title, tickvals=panel.y_ticks[0] or None, ticktext=panel.y_ticks[1] or None,
                         showgrid=False, zeroline=False, row=1, col=p + 1,
                         **({"scaleanchor": f"x{p + 1 if p else ''}", "constrain": "domain"} if square[p] else {}))
    fig.frames = [go.Frame(name=str(i), data=[go.Heatmap(z=_rounded(z[p][k])) for p, k in owner], traces=list(range(len(owner))))
                  for i, (_, z) in enumerate(frames)]
    # Step labels are hidden (dozens would overlap); the slider's current
    # value names the step.
    hidden = {"color": "rgba(0,0,0,0)", "size": 1}
    sliders = []
    if len(frames) > 1:
        sliders.append({"active": initial, "currentvalue": {"prefix": f"{time_title}: ", "font": {"size": 13, "color": "#222"}}, "font": hidden,
                        "x": 0.12, "len": 0.88, "y": 0, "yanchor": "top", "pad": {"t": 75, "b": 10},
                        "steps": [{"method": "animate", "label": label, "args": [[str(i)], _frame_args(0)]}
                                  for i, (label, _) in enumerate(frames)]})
    if len(planes) > 1:
        sliders.append({"active": 0, "currentvalue": {"prefix": f"plane {plane_title}: ", "font": {"size": 13, "color": "#222"}},
                        "x": 0.12, "len": 0.88, "y": 0, "yanchor": "top", "pad": {"t": 165 if sliders else 75, "b": 10},
                        "steps": [{"method": "restyle", "label": planes[k],
                                   "args": [{"visible": [tk == k for _, tk in owner]}]} for k in range(len(planes))]})
    menus = []
    if len(frames) > 1:
        menus.append({"type": "buttons", "direction": "left", "x": 0.11, "y": 0, "xanchor": "right", "yanchor": "top",
                      "pad": {"t": 105, "r": 10}, "showactive": False,
                      "buttons": [{"label": "▶ play", "method": "animate", "args": [None, _frame_args(400)]},
                                  {"label": "❚❚ pause", "method": "animate", "args": [[None], {"mode": "immediate", "frame": {"duration": 0, "redraw": False}}]}]})
    fig.update_layout(coloraxis={"colorscale": SCALE, "cmin": 0, "cmax": zmax, "colorbar": {"title": {"text": value_name}}},
                      sliders=sliders, updatemenus=menus, height=height or (560 + 90 * len(sliders)),
                      margin={"t": 60, "b": 60 + 90 * len(sliders)}, plot_bgcolor="white")
    return fig


def _rounded(z: np.ndarray) -> np.ndarray:
    """Three decimals are all a colour shows; the page is smaller for it."""
    return np.round(z.astype(float), 3)


def latency_figure(distribution: list[list[float]], summary: dict[str, Any], cycle_ns: float | None = None) -> go.Figure:
    """Packets by network latency, with the mean and the 99th percentile
    marked: in µs when the cycle's length is known (cycles in the hover)."""
    lo = np.array([d[0] for d in distribution], dtype=float)
    n = np.array([d[1] for d in distribution], dtype=float)
    width = np.diff(lo, append=lo[-1] + (lo[-1] - lo[-2] if len(lo) > 1 else 1.0))
    us = (cycle_ns or 0.0) / 1000.0
    scale = us if us > 0 else 1.0
    hover = ("%{customdata[2]:.3g}–%{customdata[3]:.3g} µs (%{customdata[0]:.0f}–%{customdata[1]:.0f} cycles): %{y:,} packets<extra></extra>"
             if us > 0 else "%{customdata[0]:.0f}–%{customdata[1]:.0f} cycles: %{y:,} packets<extra></extra>")
    fig = go.Figure(go.Bar(x=(lo + width / 2) * scale, y=n, width=width * scale, name="packets", hovertemplate=hover,
                           customdata=np.stack([lo, lo + width, lo * scale, (lo + width) * scale], axis=1)))
    for key, dash in (("mean", "dash"), ("p99", "dot")):
        if summary.get(key) is not None:
            label = f"{key} {summary[key] * us:,.3g} µs" if us > 0 else f"{key} {summary[key]:,.0f}"
            fig.add_vline(x=summary[key] * scale, line_dash=dash, annotation_text=label, annotation_position="top")
    title = f"latency (µs; a cycle is {cycle_ns:.3g} ns)" if us > 0 else "latency (cycles)"
    fig.update_layout(xaxis_title=title, yaxis_title="packets", height=380, bargap=0, margin={"t": 40})
    return fig


def lines_figure(x: Sequence[float], series: dict[str, Sequence[float]], x_title: str, y_title: str, *,
                 log_x: bool = False, log_y: bool = False, height: int = 380) -> go.Figure:
    """Curves sharing one x axis."""
    fig = go.Figure([go.Scatter(x=list(x), y=list(y), mode="lines+markers" if len(x) <= 40 else "lines", name=name)
                     for name, y in series.items()])
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title, height=height, margin={"t": 40}, legend={"orientation": "h", "y": 1.12})
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def curves_figure(x: dict[str, Sequence[float]], y: dict[str, Sequence[float]], x_title: str, y_title: str) -> go.Figure:
    """Named curves, each with its own x values."""
    fig = go.Figure([go.Scatter(x=list(x[name]), y=list(y[name]), mode="lines+markers" if len(x[name]) <= 40 else "lines", name=name)
                     for name in y])
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title, height=380, margin={"t": 40}, legend={"orientation": "h", "y": 1.12})
    return fig


def grouped_figure(rows: Any, x: str, ys: list[tuple[str, str]], groups: list[str], *, marked: str | None = None,
                   log_x: bool = False, log_y: Sequence[bool] = ()) -> go.Figure:
    """One panel per (column, title) of ``ys`` against ``x``, a line per
    combination of the ``groups`` columns; rows where ``marked`` is true
    get a red cross."""
    fig = make_subplots(rows=1, cols=len(ys), subplot_titles=[t for _, t in ys], horizontal_spacing=0.1)
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    keyed = rows.groupby(groups, sort=False, dropna=False) if groups else [((), rows)]
    for g, (key, part) in enumerate(keyed):
        key = key if isinstance(key, tuple) else (key,)
        name = ", ".join(f"{c.split('.')[-1]}={v}" for c, v in zip(groups, key)) or "all"
        for c, (col, _) in enumerate(ys):
            fig.add_trace(go.Scatter(x=part[x], y=part[col], mode="lines+markers", name=name, legendgroup=name, showlegend=c == 0,
                                     line={"color": palette[g % len(palette)]}), row=1, col=c + 1)
            if marked is not None and part[marked].any():
                hit = part[part[marked].astype(bool)]
                fig.add_trace(go.Scatter(x=hit[x], y=hit[col], mode="markers", name="saturated", legendgroup="saturated",
                                         showlegend=g == 0 and c == 0, marker={"symbol": "x", "size": 12, "color": "red"}),
                              row=1, col=c + 1)
    for c in range(len(ys)):
        fig.update_xaxes(title_text=x, type="log" if log_x else None, row=1, col=c + 1)
        if c < len(log_y) and log_y[c]:
            fig.update_yaxes(type="log", row=1, col=c + 1)
    fig.update_layout(height=420, margin={"t": 60}, legend={"orientation": "h", "y": -0.2})
    return fig


def per_rank_figure(per_rank: list[dict[str, Any]]) -> go.Figure:
    """Each rank's time split into compute, point-to-point, collective and waiting."""
    ranks = [p["rank"] for p in per_rank]
    parts = [("compute_seconds", "compute"), ("point_to_point_seconds", "point-to-point"), ("collective_seconds", "collective"),
             ("waiting_seconds", "waiting")]
    fig = go.Figure([go.Bar(x=ranks, y=[p[k] for p in per_rank], name=name) for k, name in parts])
    fig.update_layout(barmode="stack", xaxis_title="rank", yaxis_title="seconds (simulated)", height=380, margin={"t": 40},
                      legend={"orientation": "h", "y": 1.12})
    return fig
