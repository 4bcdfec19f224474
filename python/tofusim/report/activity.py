"""Per-link activity from the engine's port counters: the whole run, and
each interval between two counter samples.

The PA counters (bytes, packets, busy and buffer-depleted cycles) count
from the end of the warm-up and are sampled cumulatively every
``run.counter_period`` cycles (``port_samples.parquet``); an interval's
figures are the differences of two samples, its utilisation the busy
cycles over the interval's length. The final counters of ``tofusim run``
(``ports.csv``) give the whole measured window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .network import Network

COUNTERS = ["bytes", "packets", "busy_cycles", "depleted_cycles"]


@dataclass
class Activity:
    """Counters per link (columns in the order of ``Network.links``)."""

    #: Cycle each interval starts and ends at (``starts[k]`` to ``ends[k]``).
    starts: np.ndarray
    ends: np.ndarray
    #: Per counter, an (intervals, links) array of what the interval added.
    intervals: dict[str, np.ndarray]
    #: Per counter, the whole window's total per link.
    total: dict[str, np.ndarray]
    #: Length of the whole window, cycles.
    window_cycles: int
    #: Counter records naming a port the layout lacks (0 unless the run
    #: directory and this tofusim disagree).
    unmatched: int = 0

    def utilisation(self) -> np.ndarray:
        """(intervals, links): busy share of each interval."""
        return busy_share(self.intervals["busy_cycles"], np.maximum(self.ends - self.starts, 1)[:, None])

    def total_utilisation(self) -> np.ndarray:
        return busy_share(self.total["busy_cycles"], max(self.window_cycles, 1))


def busy_share(busy: np.ndarray, cycles: np.ndarray | int) -> np.ndarray:
    """Busy cycles over a window's length, at most 1: the engine counts a
    packet's whole wire time when it is granted the link, so a link still
    sending at the window's end counts cycles past it."""
    return np.minimum(busy / cycles, 1.0)


def from_samples(samples: pd.DataFrame, net: Network, start_cycle: int) -> Activity:
    """Activity from cumulative counter samples counted from ``start_cycle``
    (the warm-up's end)."""
    link = net.link_index(samples["router"].to_numpy(), samples["port"].astype(str).to_numpy())
    matched = link >= 0
    cycles = np.sort(samples["cycle"].unique())
    # A sample at the start itself holds nothing.
    cycles = cycles[cycles > start_cycle]
    row = np.searchsorted(cycles, samples["cycle"].to_numpy())
    keep = matched & (samples["cycle"].to_numpy() > start_cycle)
    cum = {}
    for c in COUNTERS:
        a = np.zeros((len(cycles), len(net.links)))
        a[row[keep], link[keep]] = samples[c].to_numpy()[keep]
        cum[c] = a
    starts = np.concatenate([[start_cycle], cycles[:-1]]) if len(cycles) else np.zeros(0)
    intervals = {c: np.diff(a, axis=0, prepend=np.zeros((1, a.shape[1]))) for c, a in cum.items()}
    total = {c: a[-1] if len(a) else np.zeros(len(net.links)) for c, a in cum.items()}
    return Activity(starts=starts.astype(np.int64), ends=cycles.astype(np.int64), intervals=intervals, total=total,
                    window_cycles=int(cycles[-1] - start_cycle) if len(cycles) else 0, unmatched=int((~matched).sum()))


def from_ports(ports: pd.DataFrame, net: Network, window_cycles: int) -> Activity:
    """Activity of the whole window alone, from final counters (``ports.csv``)."""
    link = net.link_index(ports["router"].to_numpy(), ports["port"].astype(str).to_numpy())
    matched = link >= 0
    total = {}
    for c in COUNTERS:
        a = np.zeros(len(net.links))
        a[link[matched]] = ports[c].to_numpy()[matched]
        total[c] = a
    return Activity(starts=np.zeros(0, dtype=np.int64), ends=np.zeros(0, dtype=np.int64),
                    intervals={c: np.zeros((0, len(net.links))) for c in COUNTERS}, total=total,
                    window_cycles=int(window_cycles), unmatched=int((~matched).sum()))


def frames(activity: Activity, most: int) -> list[int]:
    """At most ``most`` sample indices to show, evenly spread, the last
    always among them (counters are cumulative, so merging intervals loses
    nothing but resolution)."""
    n = len(activity.ends)
    if n <= most:
        return list(range(n))
    return sorted({int(round(x)) for x in np.linspace(0, n - 1, most)})


def merged(activity: Activity, keep: list[int]) -> Activity:
    """The activity with only the sample boundaries ``keep`` (intervals merged)."""
    if len(keep) == len(activity.ends):
        return activity
    idx = np.asarray(keep)
    cum = {c: np.cumsum(a, axis=0)[idx] for c, a in activity.intervals.items()}
    starts = np.concatenate([[activity.starts[0]], activity.ends[idx][:-1]])
    return Activity(starts=starts, ends=activity.ends[idx], intervals={c: np.diff(a, axis=0, prepend=np.zeros((1, a.shape[1])))
                                                                       for c, a in cum.items()},
                    total=activity.total, window_cycles=activity.window_cycles, unmatched=activity.unmatched)
