"""Time-series measures shared by the reproduction cases."""

from __future__ import annotations

import statistics
from typing import Any, Sequence


def throughput(r: dict[str, Any]) -> list[tuple[int, float]]:
    """(window end cycle, accepted load) of a run's time series."""
    return [(s["cycle"], s["accepted_load"]) for s in r["timeseries"]]


def smooth(ys: Sequence[float], width: int = 3) -> list[float]:
    """Centred moving average (shorter at the ends)."""
    h = width // 2
    return [statistics.fmean(ys[max(0, i - h) : i + h + 1]) for i in range(len(ys))]


def rise_fall_level(series: list[tuple[int, float]]) -> dict[str, float]:
    """Peak of the smoothed throughput, the level it settles at (mean of the
    last quarter), and the cycle at which it first falls halfway from the
    peak to the level after the peak."""
    xs = [c for c, _ in series]
    ys = smooth([y for _, y in series])
    k = max(range(len(ys)), key=lambda i: ys[i])
    level = statistics.fmean([y for _, y in series][len(series) * 3 // 4 :])
    half = (ys[k] + level) / 2
    fall = next((xs[i] for i in range(k, len(ys)) if ys[i] <= half), xs[-1])
    return {"peak": ys[k], "peak_cycle": xs[k], "level": level, "fall_cycle": fall}


def variation(ys: Sequence[float]) -> float:
    """Coefficient of variation (population standard deviation / mean)."""
    m = statistics.fmean(ys)
    return statistics.pstdev(ys) / m if m > 0 else 0.0


def correlation(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) < 3 or statistics.pstdev(a) == 0 or statistics.pstdev(b) == 0:
        return 0.0
    return statistics.correlation(a, b)


def lagged_correlation(a: Sequence[float], b: Sequence[float], max_lag: int) -> dict[int, float]:
    """Pearson r of ``a[t]`` with ``b[t + k]`` for each lag ``k`` from
    ``-max_lag`` to ``max_lag`` (``k > 0``: ``a`` leads ``b`` by ``k`` windows)."""
    out = {}
    for k in range(-max_lag, max_lag + 1):
        x, y = (a[: len(a) - k], b[k:]) if k >= 0 else (a[-k:], b[: len(b) + k])
        out[k] = correlation(x, y)
    return out


def plot(title: str, x: str, y: str, curves: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    """A plot description the CLI draws with ``--out`` (CASE.png)."""
    return {"title": title, "x": x, "y": y, "curves": {k: [list(p) for p in v] for k, v in curves.items()}}
