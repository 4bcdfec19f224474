"""The sections of a report on one run — ``tofusim run``, one ``tofusim
coll``, ``tofusim replay`` — each built from what the run directory holds
or, when it lacks that, replaced by one line naming the option that writes
it.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pandas as pd

from .. import ConfigError
from . import activity as act
from . import buffers as buf
from .figures import cell_figure, latency_figure, lines_figure, per_rank_figure
from .network import CellMap, Network, link_cells, network_of, node_cells
from .rundir import RunDir

#: Most heat-map values (cells × frames) a page carries: about 8 MB in the
#: page, which Chromium draws at once.
MAX_FRAME_VALUES = 1_000_000
#: Most frames a time slider offers.
MAX_FRAMES = 60
#: Rows of the hottest-links and stalled-ports tables.
TABLE_ROWS = 15


@dataclass
class Section:
    """One part of the page: a title and its HTML, or a note saying what
    is missing and which option writes it."""

    id: str
    title: str
    body: str = ""
    note: str | None = None


#: Draws a Plotly figure into the page (``page.figure_html``), given the
#: figure and the id of its element.
Draw = Callable[[Any, str], str]


def esc(text: Any) -> str:
    return html.escape(str(text))


def facts_table(rows: list[tuple[str, Any]]) -> str:
    """A two-column table of labelled figures."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows if v is not None)
    return f'<table class="facts">{body}</table>'


def details(summary: str, text: str) -> str:
    return f"<details><summary>{esc(summary)}</summary><pre>{esc(text)}</pre></details>"


def frame_table(frame: pd.DataFrame, formats: dict[str, str]) -> str:
    """A data frame as an HTML table (scrolling sideways when wide), numbers
    formatted per column, nothing where a value is missing."""
    def cell(v: Any, fmt: str | None) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return ""
        return format(v, fmt) if fmt else str(v)

    shown = frame.copy()
    for col in shown.columns:
        shown[col] = [cell(v, formats.get(col)) for v in shown[col]]
    return f'<div class="scroll">{shown.to_html(index=False, classes="data", border=0, escape=True)}</div>'



# ---------------------------------------------------------------- summary

def _tables(experiment: str | None) -> dict[str, Any]:
    """The experiment file's tables ({} when there is none or it does not parse)."""
    import tomllib

    try:
        return tomllib.loads(experiment) if experiment else {}
    except tomllib.TOMLDecodeError:
        return {}


def _keys(table: Any) -> str | None:
    """``pattern = uniform, load = 0.2``: a table as the file wrote it."""
    return ", ".join(f"{k} = {v}" for k, v in table.items()) if isinstance(table, dict) and table else None


def _run_facts(r: dict[str, Any], experiment: str | None) -> list[tuple[str, Any]]:
    from ..checks import run_warnings

    lat, setup, sim = r.get("latency") or {}, r.get("setup") or {}, r.get("sim") or {}
    cycle_ns = r.get("cycle_ns") or 0
    tables = _tables(experiment)
    workload = setup.get("workload")
    rows = [
        ("system", setup.get("system")),
        ("nodes", f"{setup['nodes']:,}" if "nodes" in setup else None),
        ("routing", _keys(tables.get("routing")) or setup.get("routing")),
        ("workload", _keys(tables.get("workload")) or (json.dumps(workload) if workload is not None else None)),
        ("model", r.get("model", "packet")),
        ("complete", r.get("complete")),
        ("simulated cycles", f"{sim.get('cycles', 0):,} ({sim.get('cycles', 0) * cycle_ns / 1000:,.1f} µs at {cycle_ns:.3g} ns/cycle)"),
        ("warm-up / measured cycles", f"{r.get('warmup_cycles', 0):,} / {r.get('measured_cycles', 0):,}" if "measured_cycles" in r else None),
        ("packets injected / delivered", f"{r.get('packets_injected', 0):,} / {r.get('packets_delivered', 0):,}"),
        ("offered / accepted load", f"{r.get('offered_load') if r.get('offered_load') is not None else '-'} / {r.get('accepted_load', 0):.4f}"),
        ("link / payload utilisation", f"{r.get('link_utilization', 0):.4f} / {r.get('payload_utilization', 0):.4f}"),
        ("latency mean / p50 / p99 / max (cycles)", f"{lat.get('mean', 0):,.1f} / {lat.get('p50', 0):,.0f} / {lat.get('p99', 0):,.0f} / {lat.get('max', 0):,.0f}"),
        ("completion", f"{r['completion_cycles']:,} cycles" if r.get("completion_cycles") is not None else None),
        ("simulator", f"{sim.get('wall_seconds', 0):.2f} s wall, {sim.get('events', 0):,} events" if sim else None),
    ]
    warnings = run_warnings(r)
    if warnings:
        rows.append(("warning", "; ".join(warnings)))
    if r.get("deadlock"):
        d = r["deadlock"]
        rows.append(("deadlock", f"at cycle {d.get('cycle', '?'):,}: {d.get('packets_in_flight', '?')} packets in flight"))
    if r.get("invariant_error"):
        rows.append(("invariant violated", f"{r['invariant_error'].get('kind')}: {r['invariant_error'].get('detail')}"))
    return rows


def _collective_facts(r: dict[str, Any], _: str | None) -> list[tuple[str, Any]]:
    run = r.get("run") or {}
    rows = [
        ("operation / algorithm", f"{r['op']} / {r['algo']}"),
        ("system", r.get("system")),
        ("processes", f"{r['processes']:,}" + (f" (communicator {'x'.join(map(str, r['communicator_shape']))})" if r.get("communicator_shape") else "")),
        ("size", f"{r['size_bytes']:,} bytes"),
        ("model", r.get("model")),
        ("complete", r.get("complete")),
        ("time", f"{r['time_seconds'] * 1e6:,.3f} µs"),
        ("bandwidth", f"{r['bandwidth_Bps'] / 1e9:.3f} GB/s"),
        ("messages / bytes sent", f"{r['messages']:,} / {r['bytes_sent']:,}"),
        ("verified", "-" if r.get("verified") is None else r["verified"]),
        ("fallback", r.get("fallback")),
    ]
    if run:
        lat = run.get("latency") or {}
        rows += [("simulated cycles", f"{run['cycles']:,} at {run['cycle_ns']:.3g} ns/cycle"),
                 ("packets delivered", f"{run['packets_delivered']:,}"),
                 ("link utilisation", f"{run['link_utilization']:.4f}"),
                 ("packet latency mean / p99 / max (cycles)", f"{lat['mean']:,.1f} / {lat['p99']:,.0f} / {lat['max']:,.0f}" if lat else None)]
        if run.get("deadlock") or run.get("invariant_error"):
            rows.append(("the run failed", run.get("invariant_error") or "deadlock"))
    return rows


def _replay_facts(r: dict[str, Any], _: str | None) -> list[tuple[str, Any]]:
    measured = r.get("measured_seconds") or 0
    return [
        ("trace", r.get("trace")),
        ("system", r.get("system")),
        ("model", r.get("model")),
        ("ranks / nodes", f"{r.get('ranks', 0):,} / {r.get('nodes', 0):,}"),
        ("predicted time", f"{r['time_seconds']:.6f} s"),
        ("measured on the recording machine", f"{measured:.6f} s ({r['time_seconds'] / measured:.2f}x)" if measured > 0 else None),
        ("collective algorithms", ", ".join(f"{k} {v}" for k, v in sorted((r.get("algorithms") or {}).items())) or None),
        ("messages / bytes sent", f"{r.get('messages', 0):,} / {r.get('bytes_sent', 0):,}"),
        ("simulator", f"{r.get('wall_seconds', 0):.2f} s wall"),
    ]


def summary(rd: RunDir) -> Section:
    """The run's main figures, its setup as run and the experiment file."""
    r = dict(rd.result)
    facts = {"run": _run_facts, "collective": _collective_facts, "replay": _replay_facts}[rd.kind](r, rd.experiment)
    body = facts_table(facts)
    setup = r.get("setup")
    if setup is not None:
        body += details("setup as run (JSON)", json.dumps(setup, indent=1))
    if rd.experiment is not None:
        body += details("experiment file" if rd.kind == "run" else "system file", rd.experiment)
    return Section("summary", "Summary and setup", body)


# ---------------------------------------------------------------- latency and throughput

def latency(rd: RunDir, draw: Draw) -> Section:
    """Packets by network latency (injection to delivery)."""
    title = "Latency distribution"
    r = rd.result if rd.kind == "run" else (rd.result.get("run") or {})
    dist = r.get("latency_distribution") or []
    if not dist:
        return Section("latency", title, note="No packet was delivered in the measured window (or the result predates latency "
                                              "distributions in collective and replay results: run it again).")
    lat = r.get("latency") or {}
    ns = _cycle_ns(rd)
    us = (lambda c: f" ({c * ns / 1000:,.3g} µs)") if ns else (lambda c: "")
    text = (f"<p>{lat.get('count', 0):,} packets; mean {lat.get('mean', 0):,.1f}{us(lat.get('mean', 0))}, median {lat.get('p50', 0):,.0f}"
            f"{us(lat.get('p50', 0))}, 99th percentile {lat.get('p99', 0):,.0f}{us(lat.get('p99', 0))}, most {lat.get('max', 0):,.0f}"
            f"{us(lat.get('max', 0))} cycles.</p>")
    return Section("latency", title, text + draw(latency_figure(dist, lat, ns), "latency"))


def _cycle_ns(rd: RunDir) -> float | None:
    """The length of the run's cycle, ns (None where the result lacks it)."""
    r = rd.result if rd.kind == "run" else (rd.result.get("run") or {})
    ns = r.get("cycle_ns")
    return float(ns) if isinstance(ns, (int, float)) and ns > 0 else None


def _time_axis(rd: RunDir, cycles: Any) -> tuple[list[float], str]:
    """Cycles as the time axis: µs when the cycle's length is known."""
    ns = _cycle_ns(rd)
    if ns is None:
        return list(cycles), "cycle"
    return [c * ns / 1000 for c in cycles], f"time (µs; a cycle is {ns:.3g} ns)"


def throughput(rd: RunDir, draw: Draw) -> Section:
    """Accepted load and link utilisation over the run (``tofusim run``'s
    time series), link utilisation per counter sample, and a collective's
    bytes received and ranks finished."""
    title = "Throughput over time"
    parts = []
    ts = (rd.result.get("timeseries") or []) if rd.kind == "run" else []
    if ts:
        x, x_title = _time_axis(rd, [s["cycle"] for s in ts])
        parts.append("<p>Per sample of the run's time series (every 1,000 cycles): accepted load (a fraction of the "
                     "nodes' injection bandwidth) and the mean utilisation of all links.</p>")
        parts.append(draw(lines_figure(x, {"accepted load": [s["accepted_load"] for s in ts],
                                           "link utilisation": [s["link_utilization"] for s in ts]}, x_title, "fraction"), "throughput"))
    if rd.samples is not None and rd.samples["cycle"].nunique() > 2:
        x, mean, most = act.over_time(rd.samples, _start_cycle(rd))
        x, x_title = _time_axis(rd, x)
        parts.append("<p>Per interval between counter samples: the mean utilisation of all links and the busiest link's.</p>")
        parts.append(draw(lines_figure(x, {"mean link utilisation": mean, "busiest link's utilisation": most}, x_title, "utilisation"),
                          "utilisation-over-time"))
    if rd.kind == "collective" and rd.steps is not None and len(rd.steps):
        x, series = _collective_progress(rd.steps)
        x, x_title = _time_axis(rd, x)
        parts.append("<p>The schedule's progress: bytes received by all ranks and ranks finished, as shares of their totals.</p>")
        parts.append(draw(lines_figure(x, series, x_title, "share"), "progress-over-time"))
    if not parts:
        how = {"run": "give the run a length with warm-up and measured cycles (its time series), or set run.counter_period "
                      "(or --counter-period CYCLES) for counter samples",
               "collective": "run tofusim coll with --counter-period CYCLES --out DIR"
                             + ("" if rd.result.get("steps_omitted") else " (or on the packet engine with --out DIR alone, for its steps.parquet)"),
               "replay": "run tofusim replay with --counter-period CYCLES --out DIR"}[rd.kind]
        return Section("throughput", title, note=f"Nothing over time in this directory: {how}.")
    return Section("throughput", title, "".join(parts))


def _collective_progress(steps: pd.DataFrame, points: int = 200) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    done = steps.dropna(subset=["finish_cycle"])
    end = float(done["finish_cycle"].max()) if len(done) else 0.0
    t = np.linspace(0, end, points)
    recv = done[done["kind"].astype(str) == "recv"]
    total = float(steps.loc[steps["kind"].astype(str) == "recv", "bytes"].sum()) or 1.0
    order = np.argsort(recv["finish_cycle"].to_numpy(dtype=float))
    cum = np.cumsum(recv["bytes"].to_numpy(dtype=float)[order])
    bytes_share = np.concatenate([[0.0], cum])[np.searchsorted(recv["finish_cycle"].to_numpy(dtype=float)[order], t, side="right")] / total
    rank_end = steps.groupby("rank")["finish_cycle"].max().to_numpy(dtype=float)
    finished = np.searchsorted(np.sort(rank_end), t, side="right") / max(len(rank_end), 1)
    return t, {"bytes received": bytes_share, "ranks finished": finished}


# ---------------------------------------------------------------- the network

def network(rd: RunDir) -> Network:
    """The layout of the directory's system, from the simulator (ConfigError when it cannot be had)."""
    if rd.kind == "run":
        if rd.experiment is not None:
            return network_of(toml=rd.experiment, file=str(rd.path / "experiment.toml"))
        name = (rd.result.get("setup") or {}).get("system")
        try:
            return network_of(system=name)
        except ConfigError:
            raise ConfigError(f"{rd.path}: no experiment.toml beside results.json and the system {name!r} is not a preset: "
                              "run it again with tofusim run --out (which writes experiment.toml)") from None
    if rd.kind == "replay" and rd.experiment is not None:
        return network_of(toml=rd.experiment, file=str(rd.path / "system.toml"))
    return network_of(system=rd.result.get("system"))


def _start_cycle(rd: RunDir) -> int:
    """Where the counters start: a run's warm-up end; a collective's or replay's start."""
    return int(rd.result.get("warmup_cycles") or 0) if rd.kind == "run" else 0


def counters(rd: RunDir, net: Network, most: int) -> act.Activity | None:
    """The link activity the directory's counters give: at most ``most``
    samples, or a run's final per-port counters."""
    final = act.from_ports(rd.ports, net, int(rd.result.get("measured_cycles") or 0)) if rd.ports is not None and len(rd.ports) else None
    if rd.samples is not None and len(rd.samples):
        sampled = act.from_samples(rd.samples, net, _start_cycle(rd), most)
        # The final counters cover the whole measured window; the last
        # sample may come before its end.
        return replace(sampled, total=final.total, window_cycles=final.window_cycles) if final is not None else sampled
    return final


def _sample_option(kind: str) -> str:
    return {"run": "set run.counter_period = CYCLES in the experiment (or pass --counter-period CYCLES) and run with --out DIR",
            "collective": "run tofusim coll with --counter-period CYCLES --out DIR",
            "replay": "run tofusim replay with --counter-period CYCLES --out DIR"}[kind]


def _cycle_label(start: int, end: int, cycle_ns: float) -> str:
    us = f" ({start * cycle_ns / 1000:,.2f}–{end * cycle_ns / 1000:,.2f} µs)" if cycle_ns else ""
    return f"cycles {start:,}–{end:,}{us}"


def heatmap(rd: RunDir, draw: Draw, net: Network, cm: CellMap, a: act.Activity | None) -> Section:
    """Link utilisation on the topology's layout, the whole window first,
    then one frame per (merged) counter interval."""
    title = "Link utilisation on the topology"
    if a is None:
        return Section("heatmap", title, note=f"No per-port counters in this directory: {_sample_option(rd.kind)}.")
    cycle_ns = float(rd.result.get("cycle_ns") or (rd.result.get("run") or {}).get("cycle_ns") or 0.0)
    start = _start_cycle(rd)
    frames = [(f"whole window, {_cycle_label(start, start + a.window_cycles, cycle_ns)}", cm.split(cm.reduce(a.total_utilisation())))]
    u = a.utilisation() if len(a.ends) else np.zeros((0, len(net.links)))
    frames += [(_cycle_label(int(s), int(e), cycle_ns), cm.split(cm.reduce(row))) for s, e, row in zip(a.starts, a.ends, u)]
    square = [p.title != "local links by router" for p in cm.panels]
    # The colour scale ends at the busiest link's utilisation, so that a
    # lightly loaded network still shows where its load is.
    top = max([float(a.total_utilisation().max(initial=0.0))] + [float(np.nanmax(row, initial=0.0)) for row in u])
    zmax = top if top > 0 else 1.0
    fig = cell_figure(cm.panels, cm.planes, cm.plane_title, frames, cm.hover(net.link_names()), value_name="utilisation",
                      time_title="time", square=square, zmax=zmax)
    text = (f"<p>{esc(cm.legend)} Utilisation is the share of cycles a link was sending, packet overheads included (the wire "
            "time of a packet sending across an interval's end counts in the interval it falls in). The colour scale runs from 0 "
            f"to the busiest link's utilisation, {zmax:.3f}. "
            f"The time slider's first step is the whole measured window, then each interval between counter samples"
            + (f" ({a.samples:,} samples shown as {len(a.ends):,} intervals)" if a.samples != len(a.ends) else "")
            + (", the plane slider chooses the plane." if len(cm.planes) > 1 else ".") + "</p>")
    notes = []
    if not len(a.ends):
        notes.append(f"Only the whole window: for a time slider over the run, {_sample_option(rd.kind)}.")
    if a.unmatched:
        notes.append(f"{a.unmatched:,} counter records name ports this tofusim's layout of {net.system} lacks; they are left out.")
    return Section("heatmap", title, text + draw(fig, "heatmap") + "".join(f'<p class="note">{esc(n)}</p>' for n in notes))


def hottest(rd: RunDir, net: Network | None, a: act.Activity | None, b: buf.Buffers | None = None) -> Section:
    """The links that were busiest, and the ports that waited longest for
    buffer space downstream (stalled, buffer-depleted) with, from the VC
    samples ``b``, which of their VCs' buffers were full."""
    title = "Hottest links and stalled ports"
    if a is None or net is None:
        busiest = rd.result.get("busiest_links") or []
        if busiest:
            frame = pd.DataFrame(busiest)
            if net is not None:
                labels = net.routers["label"].to_numpy()
                frame.insert(0, "router_label", [labels[r] if r < len(labels) else r for r in frame["router"]])
            return Section("hottest", title, "<p>The links that carried the most bytes (the replay's own list).</p>"
                           + frame_table(frame, {"bytes": ",", "busy_fraction": ".3f"})
                           + f'<p class="note">Stalled ports need the per-port counters: {esc(_sample_option(rd.kind))}.</p>')
        return Section("hottest", title, note=f"No per-port counters in this directory: {_sample_option(rd.kind)}.")
    window = max(a.window_cycles, 1)
    frame = pd.DataFrame({
        "router": net.links["router_label"], "port": net.links["label"], "to": net.links["neighbor_label"], "class": net.links["class"],
        "bytes": a.total["bytes"].astype(np.int64), "packets": a.total["packets"].astype(np.int64),
        "utilisation": act.busy_share(a.total["busy_cycles"], window), "stalled share": a.total["depleted_cycles"] / window,
        "stalled cycles": a.total["depleted_cycles"].astype(np.int64),
    })
    fmt = {"bytes": ",", "packets": ",", "utilisation": ".3f", "stalled share": ".3f", "stalled cycles": ","}
    hot = frame[frame["bytes"] > 0].sort_values(["utilisation", "bytes"], ascending=False).head(TABLE_ROWS)
    stalled = frame[frame["stalled cycles"] > 0].sort_values("stalled cycles", ascending=False).head(TABLE_ROWS)
    body = (f"<p>Over the measured window of {window:,} cycles, the {len(hot)} busiest of {len(frame):,} links "
            "(utilisation: share of cycles sending):</p>" + frame_table(hot, fmt))
    if len(stalled):
        vcs = ""
        if b is not None:
            stalled = stalled.assign(**{"full VC buffers (share of samples)": [buf.full_vcs(b, i) for i in stalled.index]})
            vcs = (f" The last column names the VCs whose buffer downstream was full at the {len(b.cycles):,} counter samples "
                   "(the share of samples; the engine counts stalls per port, not per VC).")
        body += ("<p>Ports that had a packet to send but no buffer space downstream (buffer-depleted cycles), "
                 f"longest first.{vcs}</p>" + frame_table(stalled, fmt))
    else:
        body += "<p>No port waited for buffer space downstream (no buffer-depleted cycles).</p>"
    return Section("hottest", title, body)


def vc_buffers(rd: RunDir, net: Network, a: act.Activity | None) -> tuple[buf.Buffers | None, str | None]:
    """The directory's VC samples on the layout, or the note that replaces them."""
    if rd.vc_samples is None or not len(rd.vc_samples):
        return None, f"No per-VC samples in this directory (vc_samples.parquet): {_sample_option(rd.kind)}."
    return buf.from_vc_samples(rd.vc_samples, rd.vc_buffer_chunks, net), None


def buffers(rd: RunDir, draw: Draw, net: Network, b: buf.Buffers, a: act.Activity | None) -> Section:
    """Per VC: the buffers' fill over the run, the buffers full at the most
    samples, and each VC of the port that stalled most over time."""
    title = "Buffers per virtual channel"
    cap, n = b.capacity_chunks, len(b.cycles)
    fill = b.fill_over_time()
    parts = [f"<p>At each of the {n:,} counter samples, the chunks each VC's buffer downstream of each port holds, as its "
             f"sender's tokens see it (a buffer holds {cap:,} chunks; full: the sender can put nothing more into that VC). "
             "Per VC, the held share of the capacity averaged over every link:</p>",
             draw(buf_fill_figure(b.cycles, {name: fill[:, v] for v, name in enumerate(b.vc_names)}), "vc-fill")]
    top = buf.fullest(b, net, TABLE_ROWS)
    full_any = int((b.full_samples() > 0).sum())
    fmt = {"full at samples": ",", "full share": ".3f", "mean held (chunks)": ".2f", "most held (chunks)": ",", "packets": ",", "bytes": ","}
    parts.append((f"<p>{full_any:,} of {int(b.present.sum()):,} VC buffers were full at some sample; the {len(top)} full at the most "
                  "samples (then holding most on average):</p>" if full_any else
                  f"<p>No VC buffer was full at any sample; the {len(top)} that held most on average:</p>") + frame_table(top, fmt))
    # The port that stalled most (or, with no stall, whose VC buffers held most), VC by VC.
    stalls = a.total["depleted_cycles"] if a is not None else np.zeros(len(net.links))
    if stalls.max(initial=0) > 0:
        link, why = int(np.argmax(stalls)), f"The port that stalled most ({int(stalls.max()):,} buffer-depleted cycles)"
    else:
        mean = np.nan_to_num(b.mean_held(), nan=-1.0).sum(axis=1)
        link, why = int(np.argmax(mean)), "No port stalled; the port whose VC buffers held most on average"
    name = net.link_names()[link]
    used = [v for v in range(len(b.vc_names)) if b.present[link, v]]
    parts.append(f"<p>{esc(why)}, <b>{esc(name)}</b>: the chunks each of its VCs' buffers downstream held at each sample, "
                 "against the capacity.</p>")
    parts.append(draw(buf_port_figure(b.cycles, {b.vc_names[v]: b.held[:, link, v] for v in used}, cap, name), "vc-port"))
    if b.unmatched:
        parts.append(f'<p class="note">{b.unmatched:,} VC records name ports this tofusim\'s layout of {esc(net.system)} lacks; they are left out.</p>')
    return Section("buffers", title, "".join(parts))


def buf_fill_figure(cycles: np.ndarray, fill: dict[str, np.ndarray]) -> Any:
    fig = lines_figure(cycles, fill, "cycle", "held share of the buffer (mean over links)")
    fig.update_yaxes(rangemode="tozero")
    return fig


def buf_port_figure(cycles: np.ndarray, held: dict[str, np.ndarray], capacity: int, name: str) -> Any:
    fig = lines_figure(cycles, held, "cycle", "chunks held")
    fig.add_hline(y=capacity, line_dash="dash", annotation_text=f"capacity {capacity:,} chunks", annotation_position="top left")
    fig.update_yaxes(range=[0, capacity * 1.08])
    fig.update_layout(meta={"port": name})
    return fig


# ---------------------------------------------------------------- collectives

#: Most frames of the collective's animation.
ANIMATION_FRAMES = 40


def progress(rd: RunDir, draw: Draw, net: Network) -> Section:
    """The schedule's progress over the network: per node, the share of
    its bytes received and of its steps finished, frame by frame."""
    title = "The schedule's progress over the network"
    r = rd.result
    if r.get("steps_omitted"):
        return Section("progress", title, note=f"The schedule has {r['steps_omitted']:,} steps, more than tofusim coll keeps the "
                                               "finish cycles of: a smaller system or message count animates.")
    if rd.steps is None or not len(rd.steps):
        return Section("progress", title, note="No step times in this directory: run tofusim coll with --out DIR (packet engine), "
                                               "which writes every step's finish cycle to steps.parquet.")
    cm = node_cells(net)
    steps = rd.steps
    node = steps["node"].to_numpy(dtype=np.int64)
    finish = steps["finish_cycle"].to_numpy(dtype=float, na_value=np.nan)
    recv = (steps["kind"].astype(str) == "recv").to_numpy()
    nbytes = steps["bytes"].to_numpy(dtype=float)
    end = float(np.nanmax(finish)) if np.isfinite(finish).any() else 0.0
    frames_n = max(1, min(ANIMATION_FRAMES, MAX_FRAME_VALUES // max(2 * cm.cells, 1) - 1))
    times = np.unique(np.round(np.linspace(0, end, frames_n + 1)))
    slot = np.where(np.isfinite(finish), np.searchsorted(times, np.nan_to_num(finish, nan=0.0), side="left"), len(times))
    ok = slot < len(times)
    n_nodes = net.nodes
    got = np.zeros((len(times), n_nodes))
    np.add.at(got, (slot[ok & recv], node[ok & recv]), nbytes[ok & recv])
    did = np.zeros((len(times), n_nodes))
    np.add.at(did, (slot[ok], node[ok]), 1.0)
    got, did = np.cumsum(got, axis=0), np.cumsum(did, axis=0)
    total_bytes = np.bincount(node[recv], weights=nbytes[recv], minlength=n_nodes)
    total_steps = np.bincount(node, minlength=n_nodes).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        share_bytes = np.where(total_bytes > 0, got / total_bytes, np.nan)
        share_steps = np.where(total_steps > 0, did / total_steps, np.nan)
    cycle_ns = float(r["run"].get("cycle_ns") or 0.0)
    panels = [replace(cm.panels[0], title="bytes received (share of the node's)"), replace(cm.panels[0], title="steps finished (share)")]
    frames = [(f"cycle {int(t):,}" + (f" ({t * cycle_ns / 1000:,.2f} µs)" if cycle_ns else ""),
               [cm.split(cm.reduce(share_bytes[i]))[0], cm.split(cm.reduce(share_steps[i]))[0]]) for i, t in enumerate(times)]
    rank_of = steps.groupby("node")["rank"].first()
    labels = net.routers["label"].to_numpy()
    names = [f"node {n} ({labels[n // max(net.nodes_per_router, 1)]})"
             + (f", rank {rank_of[n]}: receives {int(total_bytes[n]):,} B in {int(total_steps[n]):,} steps" if n in rank_of.index else ", no rank")
             for n in range(n_nodes)]
    hover = cm.hover(names)
    # Open where half of all steps have finished (the first frame, at cycle
    # 0, is empty), not at the start.
    done = did.sum(axis=1) / max(total_steps.sum(), 1.0)
    initial = int(np.searchsorted(done, 0.5)) if len(done) else 0
    initial = min(initial, len(times) - 1)
    fig = cell_figure(panels, cm.planes, cm.plane_title, frames, [hover[0], hover[0]], value_name="share", time_title="time",
                      square=[net.kind != "dragonfly"] * 2, initial=initial)
    text = (f"<p>{esc(cm.legend)} Left: the share of the bytes a node receives in the collective that it has received; "
            "right: the share of its schedule's steps (sends, receives, copies) that have finished. The page opens at the "
            "moment half of all steps had finished; press play, or move "
            f"the time slider ({len(times)} frames from the start to the last step's finish at cycle {int(end):,}).</p>")
    return Section("progress", title, text + draw(fig, "animation"))


# ---------------------------------------------------------------- replays

def per_rank(rd: RunDir, draw: Draw) -> Section:
    """Each rank's simulated time by what it did."""
    rows = rd.result.get("per_rank") or []
    if not rows:
        return Section("per-rank", "Time per rank", note="The replay has no ranks.")
    return Section("per-rank", "Time per rank", "<p>Each rank's simulated time: computing, in point-to-point calls, "
                   "in collectives and waiting.</p>" + draw(per_rank_figure(rows), "per-rank"))


def _flow_note(rd: RunDir) -> str | None:
    """The one line that replaces the packet engine's sections of a flow-model run (None for a packet run)."""
    flow = rd.result.get("model") == "flow" if rd.kind == "run" else not rd.result.get("run")
    if not flow:
        return None
    again = {"run": "tofusim run with --model packet --out DIR (and --counter-period CYCLES for the time slider)",
             "collective": "tofusim coll with --model packet --out DIR (and --counter-period CYCLES for the time slider)",
             "replay": "tofusim replay with --model packet --counter-period CYCLES --out DIR"}[rd.kind]
    return f"The flow model has no packets, port counters or step times: run {again}."


def limits(rd: RunDir) -> Section:
    """What limits this run: the binding resource in one sentence with its
    numbers, then the resource classes, the blocked time by cause and, for
    a schedule, the critical path (tofusim explain's content)."""
    from ..limits import SEGMENT_MEANING, of_result, rows

    title = "What limits this run"
    try:
        x = of_result(rd.result)
    except ConfigError as e:
        return Section("limits", title, note=str(e).removeprefix("nothing to explain: ").capitalize() + ".")
    lim = x["limits"]
    parts = [f'<p class="lead">{esc(x["summary"])}</p>']
    table = pd.DataFrame([{"resource": r["resource"], "count": r["count"], "busy mean %": r["busy_mean_pct"], "busy max %": r["busy_max_pct"],
                           "waits per cycle": r["waited_per_cycle"], "token-depleted %": r["depleted_pct"]} for r in rows(lim)])
    parts.append(frame_table(table, {"count": ",", "busy mean %": ".1f", "busy max %": ".1f", "waits per cycle": ".3f",
                                     "token-depleted %": ".1f"}))
    causes = pd.DataFrame([{"cause": k, "head-cycles blocked": v, "share %": 100 * lim["blocked_share"][k]}
                           for k, v in sorted(lim["blocked_cycles"].items(), key=lambda kv: -kv[1])])
    parts.append("<h3>Blocked queue-head time by cause</h3>" + frame_table(causes, {"head-cycles blocked": ",", "share %": ".1f"}))
    cp = x["critical_path"]
    if cp:
        ns = x["cycle_ns"]
        path = pd.DataFrame([{"part": SEGMENT_MEANING.get(k, k), "µs": v * ns / 1000, "share %": 100 * v / max(cp["end_cycle"], 1)}
                             for k, v in sorted(cp["by_kind"].items(), key=lambda kv: -kv[1])])
        parts.append("<h3>Critical path</h3>" + frame_table(path, {"µs": ",.2f", "share %": ".1f"}))
    return Section("limits", title, "".join(parts))


def run_sections(rd: RunDir, draw: Draw) -> list[Section]:
    """Every section of a report on one run, collective or replay."""
    out = [limits(rd), summary(rd)]
    if rd.kind == "replay":
        out.append(per_rank(rd, draw))
    flow = _flow_note(rd)
    if flow is not None:
        titles = [("latency", "Latency distribution"), ("throughput", "Throughput over time"), ("heatmap", "Link utilisation on the topology")]
        out += [Section(i, t, note=flow) for i, t in titles]
        out.append(hottest(rd, None, None) if rd.result.get("busiest_links") else Section("hottest", "Hottest links and stalled ports", note=flow))
        out.append(Section("buffers", "Buffers per virtual channel", note=flow))
        if rd.kind == "collective":
            out.append(Section("progress", "The schedule's progress over the network", note=flow))
        return out
    out.append(latency(rd, draw))
    try:
        net: Network | None = network(rd)
        note = None
    except ConfigError as e:
        net, note = None, f"The network's layout is not available: {e}"
    cm = link_cells(net) if net is not None else None
    # As many intervals as the heat map can carry (cells x frames).
    a = counters(rd, net, max(1, min(MAX_FRAMES, MAX_FRAME_VALUES // max(cm.cells, 1) - 1))) if net is not None else None
    out.append(throughput(rd, draw))
    if net is None:
        out.append(Section("heatmap", "Link utilisation on the topology", note=note))
    else:
        out.append(heatmap(rd, draw, net, cm, a))
    b, b_note = vc_buffers(rd, net, a) if net is not None else (None, note)
    out.append(hottest(rd, net, a, b))
    out.append(buffers(rd, draw, net, b, a) if net is not None and b is not None else Section("buffers", "Buffers per virtual channel", note=b_note))
    if rd.kind == "collective":
        out.append(progress(rd, draw, net) if net is not None else Section("progress", "The schedule's progress over the network", note=note))
    return out
