"""Cray Aries dragonfly results (DOMAIN.md §6; [S:002] Alverson et al., Cray
XC Series Network / Cascade, SC12): MPI latency by router hops, pair
bandwidth, and the adversarial-traffic bound of minimal routing.

Every figure comes out of the Aries communication model
(``tofusim._core.comm_model("aries-2g")``: 96-byte packets with 64 bytes of
payload, 100 ns per router hop, a 10 GB/s NIC host interface, 1.2 µs of
host/NIC components split between the two ends) run on the packet engine
with four nodes per Aries. The 1.2 µs and the 100 ns per hop are model
inputs (marked "fitted"/"input"): what the rows check is how latency and
bandwidth follow from them with size, hops and windowing.
"""

from __future__ import annotations

import json
from typing import Any

from .case import case_maker

from .. import _core

SOURCE = "[S:002] Alverson, Froese, Kaplan, Roweth: Cray XC Series Network (Cascade/Aries, SC12)"
_C = case_maker(SOURCE)
CASES = []

#: The window of a streaming bandwidth test (osu_bw's default).
WINDOW = 64


def _one_way_us(system: str, src: int, dst: int, size: int, rounds: int = 10) -> float:
    r = json.loads(_core.run_pingpong(system, src, dst, size, rounds))
    return r["time_seconds"] / (2 * rounds) * 1e6


def latency(scale: str) -> dict[str, Any]:
    from . import metric

    # Piz Daint's 20 groups have pairs at every minimal route length, 0-5.
    system = "piz-daint/minimal"
    pairs = _core.dragonfly_hop_pairs(system)
    rows, setup = [], {"system": system, "round_trips": 10, "pairs (hops, src node, dst node)": pairs}
    by_hops = {h: _one_way_us(system, s, d, 8) for h, s, d in pairs}
    rows.append(metric("8-byte MPI latency, two nodes on one Aries (fitted)", "us", by_hops[0], 1.2, 0.05))
    # Least-squares slope of latency over hops.
    hs = sorted(by_hops)
    mh = sum(hs) / len(hs)
    ml = sum(by_hops[h] for h in hs) / len(hs)
    per_hop_ns = 1000 * sum((h - mh) * (by_hops[h] - ml) for h in hs) / sum((h - mh) ** 2 for h in hs)
    rows.append(metric("added latency per router hop (input: 100 ns per hop)", "ns", per_hop_ns, 100.0, 0.1))
    for h in sorted(by_hops):
        rows.append(metric(f"8-byte latency, {h} router hops", "us", by_hops[h], None, None))
    sizes = [8, 64, 256, 1024, 4096, 16384] + ([65536, 262144] if scale == "full" else [])
    curves: dict[str, list[list[float]]] = {}
    for h in (0, max(by_hops)):
        _, s, d = next(p for p in pairs if p[0] == h)
        curves[f"{h} router hops"] = [[size, _one_way_us(system, s, d, size, 4)] for size in sizes]
    at0 = dict((int(x), y) for x, y in curves["0 router hops"])
    rows.append(metric("latency growth from 8 to 256 bytes, same Aries", "fraction", at0[256] / at0[8] - 1, None, None))
    rows.append(metric("latency growth from 256 bytes to 4 KiB, same Aries", "fraction", at0[4096] / at0[256] - 1, None, None))
    setup["message_bytes"] = sizes
    return {"metrics": rows, "setup": setup,
            "plots": [{"title": "A1: Aries MPI latency vs message size", "x": "message bytes", "y": "one-way latency (us)", "curves": curves}]}


def _stream_GBps(system: str, size: int, both: bool) -> float:
    """Bandwidth of WINDOW back-to-back messages 0 → 1 (and 1 → 0 with ``both``)."""
    transfers = [(0, 1, size, 0)] * WINDOW + ([(1, 0, size, 0)] * WINDOW if both else [])
    r = json.loads(_core.run_transfers(system, transfers))
    return len(transfers) * size / r["time_seconds"] / 1e9


def bandwidth(scale: str) -> dict[str, Any]:
    from . import metric

    system = "aries-1g"
    sizes = [8, 64, 256, 1024, 4096, 16384, 65536] + ([262144, 1 << 20] if scale == "full" else [])
    one = [[s, _stream_GBps(system, s, False)] for s in sizes]
    two = [[s, _stream_GBps(system, s, True)] for s in sizes]
    peak = max(y for _, y in one)
    at256 = dict((int(x), y) for x, y in one)[256]
    rows = [
        metric("one-way bandwidth, large messages, same Aries", "GB/s", peak, 9.0, 0.0, lower_bound=True),
        metric("bidirectional bandwidth, large messages, same Aries", "GB/s", max(y for _, y in two), 15.0, 0.0, lower_bound=True,
               known_difference="the model's NIC does not share its host interface between sending and receiving, so bidirectional is twice one-way; the published figure (above 15 GB/s) suggests some sharing"),
        metric("fraction of peak at 256-byte messages", "fraction", at256 / peak, 0.5, 0.25),
    ]
    return {"metrics": rows, "setup": {"system": system, "nodes": "0 and 1 (one Aries)", "window": WINDOW, "message_bytes": sizes},
            "plots": [{"title": "A2: Aries pair bandwidth vs message size", "x": "message bytes", "y": "GB/s", "curves": {"one-way": one, "bidirectional": two}}]}


CASES.append(_C("aries-latency", "A1: Aries MPI latency by router hops and message size", latency))
CASES.append(_C("aries-bandwidth", "A2: Aries pair bandwidth, one-way and bidirectional, vs message size", bandwidth))


def _adversarial_network(scale: str) -> tuple[str, int, int]:
    """An Aries-wired dragonfly for the adversarial case: TOML, nodes per group, links per group pair."""
    groups, chassis, rpc, h, lpp = (9, 2, 8, 2, 4) if scale == "full" else (5, 2, 4, 1, 2)
    text = (
        '[network]\ntopology = "dragonfly"\nform = "aries"\n'
        f"groups = {groups}\nnodes_per_router = 4\nchassis_per_group = {chassis}\nrouters_per_chassis = {rpc}\n"
        f"rank2_links = 3\nglobal_links_per_router = {h}\nlinks_per_group_pair = {lpp}\n"
        'rank1_bandwidth = "5.25GB/s"\nrank2_bandwidth = "5.25GB/s"\nrank3_bandwidth = "4.6875GB/s"\n'
        'nic_bandwidth = "10GB/s"\n'
    )
    return text, chassis * rpc * 4, lpp


def adversarial(scale: str) -> dict[str, Any]:
    from . import metric
    from .. import run as run_experiment

    net, group_nodes, lpp = _adversarial_network(scale)
    packet, overhead_default = 256, 14
    cycles = 200_000 if scale == "full" else 100_000
    rank3 = 4.6875
    # Minimal routing: every packet from group i to i+1 crosses one of the
    # lpp global links between them.
    bound = lpp * rank3 * packet / (packet + overhead_default) / group_nodes
    rows, got = [], {}
    for algo in ("minimal", "valiant", "ugal", "ugal-g", "adaptive-prefer-minimal"):
        text = (net + f'[routing]\nalgorithm = "{algo}"\n[workload]\npattern = "group-shift"\nload = 1.0\npacket_bytes = {packet}\n'
                f"[run]\ncycles = {cycles}\nwarmup = {cycles // 5}\nseed = 1\n")
        r = run_experiment(text, "<aries-adversarial>")
        if r.get("deadlock") or r.get("invariant_error"):
            raise RuntimeError(f"{algo}: {r.get('deadlock') or r.get('invariant_error')}")
        assert r["setup"]["router"]["overhead_bytes"] == overhead_default
        # accepted_load is in units of the node's injection rate (the NIC's 10 GB/s).
        got[algo] = r["accepted_load"] * 10.0
    rows.append(metric("minimal routing, per node, vs the global-link bound", "GB/s", got["minimal"], bound, 0.05))
    for algo in ("valiant", "ugal", "ugal-g", "adaptive-prefer-minimal"):
        rows.append(metric(f"{algo} over minimal", "ratio", got[algo] / got["minimal"], 1.0, 0.0, lower_bound=True))
    return {"metrics": rows, "setup": {"network": net, "pattern": "group i -> group i+1", "global_link_bound_GBps_per_node": bound,
                                       "per_node_GBps": got, "cycles": cycles}}


CASES.append(_C("aries-adversarial", "Dragonfly adversarial traffic: minimal routing at the global-link bound, Valiant/UGAL above it", adversarial))
