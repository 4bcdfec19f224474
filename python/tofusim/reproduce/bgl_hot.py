"""Blue Gene/L under hot-region load: buffer sizes (B5), SLQ receiver
arbitration (B6), dateline escape pairs against the bubble (B8).

All throughput figures are the accepted load per time window (delivered
bytes over the nodes' injection capacity), from the engine's time series.
"""

from __future__ import annotations

import statistics
from typing import Any

from . import series as S
from .bgl import _C, _bgl, _run

AXES = "xyz"


def _hot_region(shape: list[int], region: list[int], load: float, cycles: int, sample: int, *, router: dict[str, Any] | None = None,
                routing: str = "adaptive", link: str | None = None, ports: bool = False, seed: int = 1) -> dict[str, Any]:
    return _run(_bgl("x".join(map(str, shape)), network={"link_bandwidth": link} if link else None, router=router or {},
                     routing={"algorithm": routing},
                     workload={"pattern": "hot-region", "load": load, "region_origin": [0, 0, 0], "region_shape": region, "hot_fraction": 0.25},
                     run={"cycles": cycles, "sample_cycles": sample, "seed": seed}), ports=ports)


def incoming_link_utilization(r: dict[str, Any], shape: list[int], region: list[int]) -> float:
    """Mean busy fraction of the links from outside the region (at the
    origin) into it, from the run's per-port counters."""

    def coords(v: int) -> list[int]:
        out = []
        for length in shape:
            out.append(v % length)
            v //= length
        return out

    def inside(c: list[int]) -> bool:
        return all(x < s for x, s in zip(c, region))

    busy = []
    for p in r["ports"]:
        c = coords(p["router"])
        a = AXES.index(p["port"][0])
        w = list(c)
        w[a] = (c[a] + (1 if p["port"][1] == "+" else -1)) % shape[a]
        if not inside(c) and inside(w):
            busy.append(p["busy_cycles"] / r["measured_cycles"])
    return statistics.fmean(busy)


def hot_region_buffers(scale: str) -> dict[str, Any]:
    """B5: throughput over time for 2 KB, 1 KB and 512 B VC buffers."""
    from . import metric

    full = scale == "full"
    shape, region, cycles = ([16, 16, 16], [8, 8, 8], 100_000) if full else ([8, 8, 8], [4, 4, 4], 60_000)
    rows, curves, setup = [], {}, {"network": f"bgl:{'x'.join(map(str, shape))} at 350 MB/s", "region": f"{'x'.join(map(str, region))} at (0,0,0), 25% of packets", "offered_load": 0.3, "cycles": cycles}
    levels = []
    for buf in ("2KiB", "1KiB", "512B"):
        r = _hot_region(shape, region, 0.3, cycles, 2000, router={"vc_buffer": buf}, link="350MB/s", ports=True)
        ts = S.throughput(r)
        f = S.rise_fall_level(ts)
        levels.append(f["level"])
        curves[buf] = ts
        rows += [
            metric(f"{buf} buffers: peak throughput", "fraction of injection", f["peak"], None, None),
            metric(f"{buf} buffers: levelled throughput (last quarter)", "fraction of injection", f["level"], None, None),
            metric(f"{buf} buffers: cycle of the fall (halfway from peak to level)", "cycles", f["fall_cycle"], None, None),
            metric(f"{buf} buffers: utilisation of the links into the region", "fraction", incoming_link_utilization(r, shape, region), None, None),
        ]
    rows.append(metric("spread of the levelled throughput across buffer sizes", "fraction of the largest", (max(levels) - min(levels)) / max(levels), None, None))
    return {"metrics": rows, "setup": setup, "plots": [S.plot("B5: hot region, throughput over time", "cycle", "accepted load", curves)]}


def slq_hot_region(scale: str) -> dict[str, Any]:
    """B6 (second part): modified SLQ receiver arbitration vs random under a hot region."""
    from . import metric

    full = scale == "full"
    shape, region, cycles = ([32, 32, 32], [16, 16, 16], 40_000) if full else ([8, 8, 8], [4, 4, 4], 80_000)
    rows, curves, res = [], {}, {}
    for arb in ("slq", "random"):
        vals = []
        for seed in (1, 2):
            r = _hot_region(shape, region, 0.3, cycles, 4000, router={"arbitration": arb}, link="350MB/s", seed=seed)
            vals.append(S.throughput(r))
        # Mean over seeds, window by window.
        ts = [(c, statistics.fmean(v[i][1] for v in vals)) for i, (c, _) in enumerate(vals[0])]
        curves[arb] = ts
        res[arb] = S.rise_fall_level(ts)
        res[arb]["after_peak"] = statistics.fmean([y for c, y in ts if c > res[arb]["peak_cycle"]] or [0.0])
    rows += [
        metric("SLQ: levelled throughput", "fraction of injection", res["slq"]["level"], None, None),
        metric("random: levelled throughput", "fraction of injection", res["random"]["level"], None, None),
        metric("SLQ / random throughput after the peak", "ratio", res["slq"]["after_peak"] / res["random"]["after_peak"], None, None),
    ]
    setup = {"network": f"bgl:{'x'.join(map(str, shape))} at 350 MB/s", "region": f"{'x'.join(map(str, region))}, 25% of packets", "offered_load": 0.3, "slq_fraction": 0.75, "seeds": [1, 2], "cycles": cycles}
    return {"metrics": rows, "setup": setup, "plots": [S.plot("B6: SLQ vs random arbitration under a hot region", "cycle", "accepted load", curves)]}


#: B8's two readings of the source's "unblocking probability" (a returned
#: token-ack frees at least one blocked packet), as time-series keys: over
#: every token return (mostly returns to links nothing waits at, whose
#: number follows the throughput), and over the returns to links at which
#: a packet has waited for tokens (docs/model.md, "Statistics").
UNBLOCKING = {
    "all token returns": "unblocking_probability",
    "token returns to blocked links": "blocked_unblocking_probability",
}

#: The lags (windows either way) over which B8 looks for the two series
#: tracking each other out of phase.
MAX_LAG_WINDOWS = 4


def dateline_waves(scale: str) -> dict[str, Any]:
    """B8: dateline escape pairs vs the bubble, hot region at (0,0,0)."""
    from . import metric

    full = scale == "full"
    shape, region, cycles = ([16, 16, 16], [8, 8, 8], 150_000) if full else ([8, 8, 8], [4, 4, 4], 120_000)
    setup = {"network": f"bgl:{'x'.join(map(str, shape))}", "region": f"{'x'.join(map(str, region))} at (0,0,0), 25% of packets", "offered_load": 0.3, "routing": "dor (all traffic on the escape VCs)", "cycles": cycles, "datelines": "the wrap link of every ring (maximum coordinate)", "window_cycles": 2000, "lags_windows": MAX_LAG_WINDOWS}
    rows, curves, unblock = [], {}, {}
    for esc in ("bubble", "dateline-dimension", "dateline-direction"):
        r = _hot_region(shape, region, 0.3, cycles, 2000, router={"escape": esc}, routing="dor")
        ts = S.throughput(r)
        half = len(ts) // 2
        ys = [y for _, y in ts[half:]]
        curves[esc] = ts
        rows += [
            metric(f"{esc}: mean throughput (second half)", "fraction of injection", statistics.fmean(ys), None, None),
            metric(f"{esc}: variation of the throughput (second half)", "std / mean", S.variation(ys), None, None),
        ]
        for label, key in UNBLOCKING.items():
            series = [s[key] for s in r["timeseries"]]
            ub = series[half:]
            unblock[f"{esc}, {label}"] = list(zip([c for c, _ in ts], series))
            lagged = S.lagged_correlation(ub, ys, MAX_LAG_WINDOWS)
            best = max(lagged, key=lambda k: (lagged[k], -abs(k)))
            rows += [
                metric(f"{esc}: mean unblocking probability over {label} (second half)", f"fraction of {label}", statistics.fmean(ub), None, None),
                metric(f"{esc}: correlation of unblocking probability over {label} with throughput", "Pearson r", S.correlation(ub, ys), None, None),
                metric(f"{esc}: strongest lagged correlation over {label} (within {MAX_LAG_WINDOWS} windows)", "Pearson r", lagged[best], None, None),
                metric(f"{esc}: its lag over {label} (windows the probability leads the throughput by)", "windows", best, None, None),
            ]
    plots = [
        S.plot("B8: throughput over time, escape schemes", "cycle", "accepted load", curves),
        S.plot("B8: unblocking probability over time", "cycle", "unblocking probability", unblock),
    ]
    return {"metrics": rows, "setup": setup, "plots": plots}


CASES = [
    _C("bgl-hot-region", "B5: hot region, throughput over time for 2 KB / 1 KB / 512 B VC buffers", hot_region_buffers),
    _C("bgl-slq-hot-region", "B6: modified SLQ vs random receiver arbitration under a hot region", slq_hot_region),
    _C("bgl-dateline-waves", "B8: dateline escape pairs vs the bubble under a hot region", dateline_waves),
]
