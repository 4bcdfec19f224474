"""Sweeps (issue 21): one experiment file run over a grid of values, in
parallel processes, gathered into one tidy table with saturation marked.

``--vary workload.load=0.1:0.9:0.1`` is an inclusive numeric range,
``--vary routing.algorithm=dor,adaptive`` a list (numbers, booleans or
strings). Each grid point is the file with those keys set, validated and
run by the same layer as ``tofusim run``.

Saturation, per point (a setting, documented in docs/experiment.md):
accepted load below the offered load by more than 2% (and more than three
times the counting noise of the packets delivered), or a mean latency
above 3 times the zero-load latency — the mean latency of the lowest
offered load among the points that differ only in the load.
"""

from __future__ import annotations

import copy
import itertools
import math
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import ConfigError
from .checks import shortfall_allowed

#: Mean latency above this multiple of the zero-load latency: saturated.
LATENCY_MULTIPLE = 3.0


@dataclass(frozen=True)
class Axis:
    key: str  # dotted path, e.g. "workload.load"
    values: tuple[Any, ...]


def _scalar(text: str) -> Any:
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def parse_axis(spec: str) -> Axis:
    """``KEY=START:STOP:STEP`` (inclusive) or ``KEY=A,B,C``."""
    key, sep, values = spec.partition("=")
    key = key.strip()
    if not sep or not key or not values.strip():
        raise ConfigError(f"--vary {spec!r}: expected KEY=START:STOP:STEP or KEY=A,B,C (e.g. workload.load=0.1:0.9:0.1)")
    if "." not in key or any(not part for part in key.split(".")):
        raise ConfigError(f"--vary {spec!r}: the key is a table and a name, e.g. workload.load or routing.algorithm")
    parts = values.split(":")
    numeric = len(parts) == 3 and "," not in values
    if numeric:
        try:
            start, stop, step = (float(p) for p in parts)
        except ValueError:
            numeric = False
    def is_number(p: str) -> bool:
        try:
            float(p)
            return True
        except ValueError:
            return False

    if not numeric and ":" in values and "," not in values:
        if len(parts) == 3 and sum(map(is_number, parts)) >= 2:
            raise ConfigError(f"--vary {spec!r}: a range's START, STOP and STEP are numbers")
        if len(parts) != 3 and all(map(is_number, parts)):
            raise ConfigError(f"--vary {spec!r}: a range is START:STOP:STEP")
    if numeric:
        if not (step > 0 and stop >= start and math.isfinite(start) and math.isfinite(stop) and math.isfinite(step)):
            raise ConfigError(f"--vary {spec!r}: expected STEP > 0 and STOP >= START, all finite")
        span = (stop - start) / step
        if not math.isfinite(span) or span > 10_000:
            raise ConfigError(f"--vary {spec!r}: more than 10,000 values")
        n = int(math.floor(span + 1e-9)) + 1
        integral = all("." not in p and "e" not in p.lower() for p in parts)
        vals = tuple(int(parts[0]) + i * int(parts[2]) for i in range(n)) if integral else \
            tuple(round(start + i * step, 12) for i in range(n))
    else:
        items = [v.strip() for v in values.split(",")]
        if any(not v for v in items):
            raise ConfigError(f"--vary {spec!r}: an empty value in the list")
        vals = tuple(_scalar(v) for v in items)
        if len(set(map(repr, vals))) != len(vals):
            raise ConfigError(f"--vary {spec!r}: a value is listed twice")
    return Axis(key, vals)


#: The most points a sweep's grid may have (each is a run; beyond this the
#: grid alone takes gigabytes before the first run).
MAX_POINTS = 100_000


def grid(axes: list[Axis]) -> list[dict[str, Any]]:
    """Every combination, the first axis varying slowest."""
    keys = [a.key for a in axes]
    if len(set(keys)) != len(keys):
        raise ConfigError(f"--vary: a key is given twice ({', '.join(keys)})")
    points = math.prod(len(a.values) for a in axes)
    if points > MAX_POINTS:
        raise ConfigError(f"--vary: {' x '.join(str(len(a.values)) for a in axes)} = {points:,} points, more than the {MAX_POINTS:,} "
                          "a sweep runs; vary fewer keys or fewer values")
    return [dict(zip(keys, combo)) for combo in itertools.product(*(a.values for a in axes))]


def point_text(doc: dict[str, Any], point: dict[str, Any]) -> str:
    """The experiment file with the point's keys set, as TOML."""
    import tomli_w

    d = copy.deepcopy(doc)
    for key, value in point.items():
        *tables, name = key.split(".")
        t = d
        for part in tables:
            nxt = t.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise ConfigError(f"--vary {key}: {part} is a value in the file, not a table")
            t = nxt
        t[name] = value
    return tomli_w.dumps(d)


def _run_point(args: tuple[str, str, str, Any]) -> dict[str, Any]:
    """A worker process: one grid point. Errors come back as data."""
    from . import run

    text, file, model, max_minutes = args
    try:
        return {"result": run(text, file, model=model, max_minutes=max_minutes)}
    except ConfigError as e:
        return {"error": str(e)}


def _row(point: dict[str, Any], r: dict[str, Any], model: str) -> dict[str, Any]:
    lat = r.get("latency") or {}
    sim = r.get("sim") or {}
    cycle_ns = r.get("cycle_ns")

    def ns(cycles: Any) -> float | None:
        return None if cycles is None or cycle_ns is None else cycles * cycle_ns

    return {
        **point,
        "model": model,
        "offered_load": r.get("offered_load"),
        "accepted_load": r.get("accepted_load"),
        # The same loads in physical units (GB/s per node) and the
        # latencies in ns beside cycles (cycle_ns differs per system).
        "offered_GBps_per_node": r.get("offered_GBps_per_node"),
        "accepted_GBps_per_node": r.get("accepted_GBps_per_node"),
        "latency_mean_cycles": lat.get("mean"),
        "latency_p50_cycles": lat.get("p50"),
        "latency_p99_cycles": lat.get("p99"),
        "latency_max_cycles": lat.get("max"),
        "latency_mean_ns": ns(lat.get("mean")),
        "latency_p99_ns": ns(lat.get("p99")),
        "link_utilization": r.get("link_utilization"),
        "packets_delivered": r.get("packets_delivered"),
        "measured_packets": lat.get("count"),
        "completion_cycles": r.get("completion_cycles"),
        "complete": r.get("complete"),
        "deadlock": r.get("deadlock") is not None,
        "invariant_error": (r.get("invariant_error") or {}).get("kind", ""),
        "interrupted": bool(r.get("interrupted")),
        "budget_exceeded": r.get("budget_exceeded") is not None,
        "sending_fraction": r.get("sending_fraction"),
        "cycle_ns": r.get("cycle_ns"),
        "wall_seconds": sim.get("wall_seconds"),
    }


def mark_saturation(rows: list[dict[str, Any]], varied: list[str]) -> None:
    """Adds ``saturated`` and ``saturation`` (the reason) to every row."""
    load_key = next((k for k in varied if k.endswith(".load")), None)
    others = [k for k in varied if k != load_key]
    zero: dict[tuple, float] = {}
    if load_key is not None:
        groups: dict[tuple, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(tuple(row[k] for k in others), []).append(row)
        for g, members in groups.items():
            ok = [m for m in members if m["latency_mean_cycles"] and m["offered_load"] is not None]
            if ok:
                zero[g] = min(ok, key=lambda m: m["offered_load"])["latency_mean_cycles"]
    for row in rows:
        reasons = []
        off, acc = row["offered_load"], row["accepted_load"]
        if off is not None:
            off *= row.get("sending_fraction") or 1.0
        if off and acc is not None and acc < off * (1 - shortfall_allowed(row.get("measured_packets") or row["packets_delivered"])):
            reasons.append(f"accepted {1 - acc / off:.1%} below offered")
        z = zero.get(tuple(row[k] for k in others)) if load_key else None
        mean = row["latency_mean_cycles"]
        if z and mean and mean > LATENCY_MULTIPLE * z:
            reasons.append(f"latency {mean / z:.1f}x zero-load")
        if row["deadlock"] or row["invariant_error"] or row["budget_exceeded"]:
            reasons.append("deadlock" if row["deadlock"] else row["invariant_error"] or "memory budget exceeded")
        row["saturated"] = bool(reasons)
        row["saturation"] = "; ".join(reasons)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep: ``rows`` of the points finished (in grid
    order, saturation marked among them) out of ``points``."""

    def __init__(self, rows: list[dict[str, Any]], points: int):
        super().__init__(f"sweep interrupted after {len(rows)} of {points} points")
        self.rows, self.points = rows, points


class _Partial(KeyboardInterrupt):
    """Ctrl-C inside ``_run_all``: the results so far (None where not run)."""

    def __init__(self, results: list[Any]):
        super().__init__("interrupted")
        self.results = results


def _run_all(fn: Callable[[Any], dict[str, Any]], args: list[Any], jobs: int, progress: Callable[[int, int], None] | None,
             where: Callable[[int, str], str]) -> list[dict[str, Any]]:
    """``fn`` over ``args`` in up to ``jobs`` processes, results in order. A
    point's error (``{"error": ...}``, named by ``where``) or Ctrl-C stops
    the points still queued."""
    if jobs < 1:
        raise ConfigError(f"--jobs {jobs}: expected at least 1")
    results: list[Any] = [None] * len(args)
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(args)))
    try:
        futures = {pool.submit(fn, a): i for i, a in enumerate(args)}
        for done, fut in enumerate(as_completed(futures), 1):
            i = futures[fut]
            out = fut.result()
            if "error" in out:
                raise ConfigError(where(i, out["error"]))
            results[i] = out["result"]
            if progress:
                progress(done, len(args))
    except BaseException:
        # Ctrl-C (or a point's error): the points still running stop now.
        # A SIGINT sent to this process alone never reaches the workers, and
        # shutdown() would leave them running their points to the end.
        # (ProcessPoolExecutor has no public way to stop its workers before
        # Python 3.14's terminate_workers.)
        for worker in list(getattr(pool, "_processes", {}).values()):
            worker.terminate()
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):
            raise _Partial(results) from None
        raise
    finally:
        # wait=True: the executor's manager thread ends before its pipes
        # close (with wait=False it raced them and printed an OSError
        # traceback after a point's error); the workers are already stopped.
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def run_sweep(path: "str | Path | Experiment", axes: list[Axis], jobs: int = 1, model: str = "packet",
              progress: Callable[[int, int], None] | None = None, max_minutes: "float | str | None" = None) -> list[dict[str, Any]]:
    """Runs every grid point of the experiment file at ``path`` (or of an
    :class:`~tofusim.Experiment`); returns the rows (one per point, in grid
    order) with saturation marked. The first point's configuration error
    stops the sweep (exit 2 naming the point)."""
    from . import Experiment, _read_text, arguments

    if isinstance(path, Experiment):
        doc, path = tomllib.loads(path.toml()), path.file
    else:
        if not isinstance(path, (str, Path)):
            raise arguments.refuse("path", "an experiment file's path or an Experiment", path)
        text = _read_text(path)
        path = str(path)
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: invalid TOML: {e}") from None
    jobs = arguments.whole("jobs", jobs, 1, 1024)
    model = arguments.text("model", model)
    progress = arguments.callback("progress", progress, 2)
    # Each point's time budget, as for tofusim.run (default an hour).
    max_minutes = None if max_minutes is None else arguments.minutes("max_minutes", max_minutes)
    points = grid(axes)
    texts = [point_text(doc, p) for p in points]
    try:
        results = _run_all(_run_point, [(t, path, model, max_minutes) for t in texts], jobs, progress,
                           lambda i, e: f"sweep point {', '.join(f'{k}={v}' for k, v in points[i].items())}: {e}")
    except _Partial as stop:
        rows = [_row(p, r, model) for p, r in zip(points, stop.results) if r is not None]
        mark_saturation(rows, [a.key for a in axes])
        raise Interrupted(rows, len(points)) from None
    rows = [_row(p, r, model) for p, r in zip(points, results)]
    mark_saturation(rows, [a.key for a in axes])
    return rows


def plot(rows: list[dict[str, Any]], varied: list[str], out_png: str, title: str) -> None:
    """Accepted load and mean latency against the offered load (one line per
    combination of the other varied keys), or against the first varied key
    when the load is not varied. Saturated points are marked with a cross."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    load_key = next((k for k in varied if k.endswith(".load")), None)
    # Physical units where every row has them (GB/s per node, µs).
    physical = all(r.get("accepted_GBps_per_node") is not None and r.get("latency_mean_ns") is not None for r in rows)
    acc_key, lat_key = ("accepted_GBps_per_node", "latency_mean_ns") if physical else ("accepted_load", "latency_mean_cycles")
    lat_scale = 1e-3 if physical else 1.0
    offered_key = "offered_GBps_per_node" if physical and all(r.get("offered_GBps_per_node") is not None for r in rows) else "offered_load"
    x_key = offered_key if load_key else varied[0]
    others = [k for k in varied if k != (load_key or varied[0])]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in others), []).append(row)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for g, members in groups.items():
        label = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(others, g)) or None
        xs = [m[x_key] for m in members]
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
        pos = xs if numeric else list(range(len(xs)))
        lat = [None if m[lat_key] is None else m[lat_key] * lat_scale for m in members]
        line, = ax1.plot(pos, [m[acc_key] for m in members], marker="o", label=label)
        ax2.plot(pos, lat, marker="o", color=line.get_color(), label=label)
        sat = [(p, m, y) for p, m, y in zip(pos, members, lat) if m["saturated"]]
        if sat:
            ax1.scatter([p for p, _, _ in sat], [m[acc_key] for _, m, _ in sat], marker="x", s=80, color="red", zorder=3)
            ax2.scatter([p for p, _, _ in sat], [y for _, _, y in sat], marker="x", s=80, color="red", zorder=3)
        if not numeric:
            for ax in (ax1, ax2):
                ax.set_xticks(pos, [str(x) for x in xs])
    if load_key and (offered_key == "offered_GBps_per_node") == (acc_key == "accepted_GBps_per_node"):
        lim = max((r[offered_key] or 0) for r in rows)
        ax1.plot([0, lim], [0, lim], color="grey", linestyle=":", linewidth=1, label="accepted = offered")
    x_label = ("offered load (GB/s per node)" if offered_key == "offered_GBps_per_node" else "offered load (fraction of injection)") if load_key else x_key
    for ax in (ax1, ax2):
        ax.set_xlabel(x_label)
    ax1.set_ylabel("accepted load (GB/s per node)" if physical else "accepted load (fraction of injection)")
    ax2.set_ylabel("mean latency (µs)" if physical else "mean latency (cycles)")
    ax2.set_yscale("log")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        if any(ax.get_legend_handles_labels()[1]):
            ax.legend(fontsize=8)
    fig.suptitle(f"{title} (x: saturated)")
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)


def sizes(spec: str) -> list[int]:
    """``LO:HI`` (bytes, units allowed): LO, 2 LO, 4 LO, ... up to HI (HI
    itself last if the doubling misses it); a single size otherwise."""
    from .units import parse_bytes

    if ":" not in spec:
        return [parse_bytes(spec, "--size")]
    lo_s, _, hi_s = spec.partition(":")
    lo, hi = parse_bytes(lo_s, "--size"), parse_bytes(hi_s, "--size")
    if lo < 1 or hi < lo:
        raise ConfigError(f"--size {spec!r}: expected LO:HI with 1 B <= LO <= HI")
    out = []
    s = lo
    while s <= hi:
        out.append(s)
        s *= 2
    if out[-1] != hi:
        out.append(hi)
    return out


def _coll_point(args: tuple) -> dict[str, Any]:
    from . import coll

    op, algo, size_bytes, system, kw = args
    try:
        r = coll(op, algo, size_bytes, system, **kw)
    except ConfigError as e:
        return {"error": f"{algo}, {size_bytes} B: {e}"}
    return {"result": r}


def coll_sweep(op: str, algos: list[str], size_list: list[int], system: str, jobs: int = 1,
               progress: Callable[[int, int], None] | None = None, **kw: Any) -> list[dict[str, Any]]:
    """One collective over every (algorithm, size): rows in that order."""
    points = [(a, s) for a in algos for s in size_list]
    try:
        results = _run_all(_coll_point, [(op, a, s, system, kw) for a, s in points], jobs, progress, lambda i, e: e)
    except _Partial as stop:
        raise Interrupted(_coll_rows(op, system, kw, points, stop.results), len(points)) from None
    return _coll_rows(op, system, kw, points, results)


def _coll_rows(op: str, system: str, kw: dict[str, Any], points: list[tuple[str, int]], results: list[Any]) -> list[dict[str, Any]]:
    """The rows of the points that ran (a None result did not)."""
    rows = []
    for (a, s), r in zip(points, results):
        if r is None:
            continue
        run = r.get("run") or {}
        failed = run.get("deadlock") or run.get("invariant_error") or r.get("verified") is False or not run.get("complete", True)
        settings = r.get("settings") or {}
        rows.append({"operation": op, "algorithm": a, "size_bytes": s, "system": system, "model": r.get("model") or kw.get("model", "packet"),
                     "segment_bytes": settings.get("segment_bytes"), "tnis": settings.get("tnis"),
                     "binding": ((run.get("limits") or {}).get("binding") or {}).get("set", ""),
                     "processes": r["processes"], "time_seconds": r["time_seconds"], "bandwidth_Bps": r["bandwidth_Bps"],
                     "messages": r["messages"], "bytes_sent": r["bytes_sent"], "fallback": r["fallback"] or "",
                     "complete": run.get("complete", True), "verified": r.get("verified"), "verify_error": r.get("verify_error") or "",
                     "deadlock": bool(run.get("deadlock")), "invariant_error": run.get("invariant_error") or "", "failed": bool(failed)})
    return rows


def plot_coll(rows: list[dict[str, Any]], out_png: str, title: str) -> None:
    """Time and bandwidth against the size, one line per algorithm."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for algo in dict.fromkeys(r["algorithm"] for r in rows):
        m = [r for r in rows if r["algorithm"] == algo]
        ax1.plot([r["size_bytes"] for r in m], [r["time_seconds"] * 1e6 for r in m], marker="o", label=algo)
        ax2.plot([r["size_bytes"] for r in m], [r["bandwidth_Bps"] / 1e9 for r in m], marker="o", label=algo)
    for ax, label in ((ax1, "time (µs)"), (ax2, "bandwidth (GB/s)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    ax1.set_yscale("log")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
