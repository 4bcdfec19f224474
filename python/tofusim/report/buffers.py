"""Per-VC buffers from the counter samples (``vc_samples.parquet``).

At every counter sample the engine records, per connected port and
downstream VC, the packets and bytes sent into that VC (cumulative since
the warm-up) and the chunks its buffer holds as the sender's tokens see it
(``held_chunks``: the buffer's capacity, ``vc_buffer_chunks`` in the
file's metadata, less the tokens the sender holds). A buffer is *full* at
a sample when it holds its whole capacity: the sender can put nothing more
into that VC. The engine counts stalled (buffer-depleted) cycles per port,
not per VC — a head refused at a port is refused for all its candidate VCs
at once — so which VC's buffer was full at the samples is what tells a
stalled port's VCs apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .network import Network


@dataclass
class Buffers:
    """The samples as dense arrays over (sample, link, VC); links in the
    order of ``Network.links``, VCs in the engine's order."""

    vc_names: list[str]
    capacity_chunks: int
    #: The sample cycles.
    cycles: np.ndarray
    #: (samples, links, VCs): held chunks, NaN where the file has no row.
    held: np.ndarray
    #: (links, VCs): packets and bytes sent into the VC, at the last sample.
    packets: np.ndarray
    bytes: np.ndarray
    #: (links, VCs): the file has rows for it.
    present: np.ndarray
    #: VC records naming a port the layout lacks.
    unmatched: int = 0

    def full_samples(self) -> np.ndarray:
        """(links, VCs): the samples at which the buffer was full."""
        return (np.nan_to_num(self.held, nan=-1.0) >= self.capacity_chunks).sum(axis=0)

    def mean_held(self) -> np.ndarray:
        """(links, VCs): held chunks averaged over the samples (NaN where never sampled)."""
        with np.errstate(invalid="ignore"):
            return np.where(self.present, np.nansum(self.held, axis=0) / np.maximum((~np.isnan(self.held)).sum(axis=0), 1), np.nan)

    def most_held(self) -> np.ndarray:
        """(links, VCs): the most chunks held at a sample (NaN where never sampled)."""
        return np.where(self.present, np.nan_to_num(self.held, nan=0.0).max(axis=0, initial=0.0), np.nan)

    def fill_over_time(self) -> np.ndarray:
        """(samples, VCs): per VC, the held share of the capacity averaged over every link sampled."""
        n = (~np.isnan(self.held)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, np.nansum(self.held, axis=1) / np.maximum(n, 1) / max(self.capacity_chunks, 1), np.nan)


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A name column as integer codes and the names: a dictionary column's
    own order (the engine's port and VC order), else sorted."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(dtype=np.int64), [str(c) for c in column.cat.categories]
    codes, names = pd.factorize(column.astype(str), sort=True)
    return codes.astype(np.int64), [str(n) for n in names]


def from_vc_samples(vcs: pd.DataFrame, capacity_chunks: int, net: Network) -> Buffers:
    """The VC samples of a run joined to the layout's links by (router, port)."""
    router = vcs["router"].to_numpy(dtype=np.int64)
    port, port_names = _codes(vcs["port"])
    vc, vc_names = _codes(vcs["vc"])
    if (port < 0).any() or (vc < 0).any():
        raise ValueError("vc_samples.parquet: a row without its port or VC name")
    # One look-up per distinct (router, port), not per row.
    key = router * max(len(port_names), 1) + port
    keys, row_of = np.unique(key, return_inverse=True)
    names = np.array(port_names, dtype=object)
    link = net.link_index(keys // max(len(port_names), 1), names[keys % max(len(port_names), 1)])[row_of]
    cycles, sample = np.unique(vcs["cycle"].to_numpy(dtype=np.int64), return_inverse=True)
    ok = link >= 0
    shape = (len(net.links), len(vc_names))
    held = np.full((len(cycles), *shape), np.nan, dtype=np.float32)
    held[sample[ok], link[ok], vc[ok]] = vcs["held_chunks"].to_numpy(dtype=np.float32)[ok]
    # Cumulative counters: the last sample's are the largest.
    sent = {}
    for c in ("packets", "bytes"):
        a = np.zeros(shape)
        np.maximum.at(a, (link[ok], vc[ok]), vcs[c].to_numpy(dtype=float)[ok])
        sent[c] = a
    present = np.zeros(shape, dtype=bool)
    present[link[ok], vc[ok]] = True
    return Buffers(vc_names=vc_names, capacity_chunks=int(capacity_chunks), cycles=cycles, held=held, packets=sent["packets"],
                   bytes=sent["bytes"], present=present, unmatched=int((~ok).sum()))


def fullest(b: Buffers, net: Network, rows: int) -> pd.DataFrame:
    """The ``rows`` VC buffers full at the most samples (then holding the
    most on average): their link, VC, full samples and share, mean and
    most chunks held, and what was sent into them."""
    full, mean, most = b.full_samples(), b.mean_held(), b.most_held()
    link, vc = np.nonzero(b.present)
    frame = pd.DataFrame({
        "router": net.links["router_label"].to_numpy()[link], "port": net.links["label"].to_numpy()[link],
        "to": net.links["neighbor_label"].to_numpy()[link], "vc": np.array(b.vc_names, dtype=object)[vc],
        "full at samples": full[link, vc], "full share": full[link, vc] / max(len(b.cycles), 1),
        "mean held (chunks)": mean[link, vc], "most held (chunks)": most[link, vc].astype(np.int64),
        "packets": b.packets[link, vc].astype(np.int64), "bytes": b.bytes[link, vc].astype(np.int64),
    })
    return frame.sort_values(["full at samples", "mean held (chunks)"], ascending=False, kind="stable").head(rows)


def full_vcs(b: Buffers, link: int) -> str:
    """``dynamic-1 0.42, escape 0.10``: the VCs of ``link`` by the share of
    samples their buffer was full, fullest first (empty when none was)."""
    full = b.full_samples()[link]
    order = [v for v in np.argsort(-full, kind="stable") if full[v] > 0]
    return ", ".join(f"{b.vc_names[v]} {full[v] / max(len(b.cycles), 1):.2f}" for v in order)
