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
    #: Sample cycles in the file (more than the intervals kept when merged).
    samples: int = 0

    def utilisation(self) -> np.ndarray:
        """(intervals, links): busy share of each interval."""
        return busy_share(self.intervals["busy_cycles"], np.maximum(self.ends - self.starts, 1)[:, None])

    def total_utilisation(self) -> np.ndarray:
        """Busy share of the whole window, at most 1 (the final counters
        include the wire time of a packet still sending at its end)."""
        return np.minimum(busy_share(self.total["busy_cycles"], max(self.window_cycles, 1)), 1.0)


def busy_share(busy: np.ndarray, cycles: np.ndarray | int) -> np.ndarray:
    """Busy cycles over a window's length (with busy time as
    :func:`on_the_wire` places it, at most the window)."""
    return busy / cycles


def on_the_wire(cumulative_busy: np.ndarray, elapsed: np.ndarray) -> np.ndarray:
    """Cumulative busy cycles as the wire spent them. The engine counts a
    packet's whole wire time when the link is granted, so a link sending
    across a sample showed more busy cycles than had passed (a busiest
    link at 108%). The time that has not passed yet belongs to the next
    interval: C_i = min(B_i, C_{i-1} + L_i), which is the elapsed time plus
    the running minimum of min(0, B_j - elapsed_j) — exact, and the totals
    agree with the engine's except for the packet still on the wire at the
    last sample. ``cumulative_busy``: (samples, links); ``elapsed``: cycles
    since the window's start at each sample."""
    lead = np.minimum.accumulate(cumulative_busy - elapsed[:, None], axis=0)
    return elapsed[:, None] + np.minimum(lead, 0.0)


def from_samples(samples: pd.DataFrame, net: Network, start_cycle: int, most: int) -> Activity:
    """Activity from cumulative counter samples counted from ``start_cycle``
    (the warm-up's end), at no more than ``most`` sample cycles evenly
    spread, the last among them: counters are cumulative, so leaving
    samples out merges intervals and loses nothing but resolution (and a
    long run's samples would not fit in memory as dense arrays)."""
    link = net.link_index(samples["router"].to_numpy(), samples["port"].astype(str).to_numpy())
    matched = link >= 0
    every = np.sort(samples["cycle"].unique())
    # A sample at the start itself holds nothing.
    every = every[every > start_cycle]
    cycles = every if len(every) <= most else every[sorted({int(round(x)) for x in np.linspace(0, len(every) - 1, max(most, 1))})]
    sample_cycle = samples["cycle"].to_numpy()
    row = np.searchsorted(cycles, sample_cycle)
    keep = matched & np.isin(sample_cycle, cycles)
    cum = {}
    for c in COUNTERS:
        a = np.zeros((len(cycles), len(net.links)))
        a[row[keep], link[keep]] = samples[c].to_numpy()[keep]
        cum[c] = a
    if len(cycles):
        cum["busy_cycles"] = on_the_wire(cum["busy_cycles"], (cycles - start_cycle).astype(float))
    starts = np.concatenate([[start_cycle], cycles[:-1]]) if len(cycles) else np.zeros(0)
    intervals = {c: np.diff(a, axis=0, prepend=np.zeros((1, a.shape[1]))) for c, a in cum.items()}
    total = {c: a[-1] if len(a) else np.zeros(len(net.links)) for c, a in cum.items()}
    return Activity(starts=starts.astype(np.int64), ends=cycles.astype(np.int64), intervals=intervals, total=total,
                    window_cycles=int(cycles[-1] - start_cycle) if len(cycles) else 0, unmatched=int((~matched).sum()),
                    samples=len(every))


def over_time(samples: pd.DataFrame, start_cycle: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per interval between two samples: its end cycle, the mean utilisation
    of all sampled ports and the busiest one's (every sample, no dense array)."""
    s = samples[samples["cycle"] > start_cycle][["cycle", "router", "port", "busy_cycles"]]
    s = s.sort_values(["router", "port", "cycle"], kind="stable")
    cycle = s["cycle"].to_numpy(dtype=np.int64)
    first = np.ones(len(s), dtype=bool)
    same = (s["router"].to_numpy()[1:] == s["router"].to_numpy()[:-1]) & (s["port"].astype(str).to_numpy()[1:] == s["port"].astype(str).to_numpy()[:-1])
    first[1:] = ~same
    # Busy time as the wire spent it (on_the_wire), per port.
    elapsed = (cycle - start_cycle).astype(float)
    lead = pd.Series(s["busy_cycles"].to_numpy(dtype=float) - elapsed).groupby(np.cumsum(first)).cummin().to_numpy()
    busy = elapsed + np.minimum(lead, 0.0)
    length = np.where(first, cycle - start_cycle, cycle - np.roll(cycle, 1))
    added = np.where(first, busy, busy - np.roll(busy, 1))
    share = busy_share(added, np.maximum(length, 1))
    frame = pd.DataFrame({"cycle": cycle, "share": share}).groupby("cycle")["share"]
    return frame.mean().index.to_numpy(), frame.mean().to_numpy(), frame.max().to_numpy()


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
