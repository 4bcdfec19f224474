"""Link errors on Blue Gene/L and its link-level recovery ([S:004];
docs/sources.md, BG/L router).

The source describes the protocol — CRC on every link, a retransmission
FIFO with acknowledgements on the token-acks, a time-out, the cumulative
link CRC — but publishes no figure of its cost, and the BG/L performance
simulator did not model errors. This case measures it on the engine: the
saturation throughput and the latency at a moderate load against the bit
error rate, and checks on the way that no packet is lost or duplicated
(the engine's invariants: every packet delivered once and intact, tokens
conserved; the audit runs throughout). At ``--scale full`` the check runs
over more than 10^8 packet-hops at up to 10^-4 errors per packet.
"""

from __future__ import annotations

import math
from typing import Any

from ..api import Experiment
from .unbudgeted import run_experiment
from .bgl import _C

#: Bit error rates swept; a full 270-byte transmission is 2,160 bits, so
#: 1e-8 is about 2e-5 per packet and 1e-5 about 2e-2.
BERS = (0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5)
WIRE_BITS = 270 * 8


def _run(shape: str, load: float, ber: float, cycles: int, warmup: int, audit: int) -> dict[str, Any]:
    r = run_experiment(Experiment(f"bgl:{shape}", routing={"algorithm": "adaptive"}, workload={"pattern": "uniform", "load": load},
                                  run={"cycles": cycles, "warmup": warmup, "audit_cycles": audit, "seed": 3},
                                  link_errors={"bit_error_rate": ber} if ber > 0 else None, file="<reproduce>"))
    if r.get("invariant_error") or r.get("deadlock"):
        raise RuntimeError(f"bit error rate {ber}: the run broke an invariant or deadlocked: {r.get('invariant_error') or r.get('deadlock')}")
    return r


def link_errors(scale: str) -> dict[str, Any]:
    from . import metric

    full = scale == "full"
    shape = "8x8x8" if full else "4x4x4"
    cycles = 2_000_000 if full else 150_000
    # A full audit every this many cycles (it visits every packet alive).
    audit = 100_000 if full else 5000
    rows: list[dict[str, Any]] = []
    throughput, latency = [], []
    setup: dict[str, Any] = {"system": f"bgl:{shape}", "routing": "adaptive", "traffic": "uniform random, 256-byte packets",
                             "protocol": "BG/L link-level recovery: packet CRC, go-back-N from a time-out, retransmission FIFO acknowledged on token-acks (defaults: docs/experiment.md [link_errors])",
                             "saturation_load": 0.6, "latency_load": 0.1, "cycles": cycles}
    for ber in BERS:
        # Offered 0.6, twice what the torus accepts: saturated, with a
        # smaller source backlog than at 1.0 (the audit visits every packet).
        sat = _run(shape, 0.6, ber, cycles, cycles // 10, audit)
        low = _run(shape, 0.1, ber, cycles, cycles // 10, audit)
        label = "no errors" if ber == 0 else f"BER {ber:g}"
        rows.append(metric(f"{label}: saturation throughput", "fraction of injection", sat["accepted_load"], None, None, unpublished=True))
        rows.append(metric(f"{label}: mean latency at load 0.1", "cycles", low["latency"]["mean"], None, None, unpublished=True))
        le = sat.get("link_errors") or {}
        if ber > 0:
            rows.append(metric(f"{label}: retransmitted share of transmissions at saturation", "fraction", le["retransmitted_fraction"], None, None, unpublished=True))
            throughput.append([math.log10(ber), sat["accepted_load"]])
            latency.append([math.log10(ber), low["latency"]["mean"]])
        else:
            clean = (sat["accepted_load"], low["latency"]["mean"])
        setup[label] = {"per_packet_error": 1 - (1 - ber) ** WIRE_BITS, "retransmissions": le.get("retransmissions", 0),
                        "corrupted": le.get("corrupted", 0), "crc_escapes": le.get("crc_escapes", 0), "packet_hops": sat["sim"]["packet_hops"]}
    # Nothing lost or duplicated: a finite all-to-all at the highest
    # per-packet rate the issue names (1e-4) delivers exactly the packets
    # the error-free run does, each once (the engine's delivery check).
    hops = 0
    message = 16384 if full else 4096

    def alltoall(seed: int, errors: dict[str, Any] | None) -> dict[str, Any]:
        return run_experiment(Experiment(f"bgl:{shape}", routing={"algorithm": "adaptive"}, workload={"pattern": "alltoall", "message_bytes": message},
                                         run={"audit_cycles": 20000, "seed": seed}, link_errors=errors, file="<reproduce>"))

    for rep in range(1):
        expected = alltoall(rep + 1, None)["packets_delivered"]
        r = alltoall(rep + 1, {"packet_error_rate": 1e-4})
        broken = not r["complete"] or bool(r.get("invariant_error"))
        hops += r["sim"]["packet_hops"]
        rows.append(metric(f"all-to-all of {message} B at 1e-4 per packet (seed {rep + 1}): packets lost or duplicated", "packets",
                           float(abs(expected - r["packets_delivered"]) + broken), 0.0, 0.0))
        setup[f"alltoall_seed_{rep + 1}"] = {"packets": expected, "retransmissions": r["link_errors"]["retransmissions"], "packet_hops": r["sim"]["packet_hops"]}
    # And the open-loop runs above, every one audited.
    total = sum(v["packet_hops"] for v in setup.values() if isinstance(v, dict) and "packet_hops" in v)
    rows.append(metric("packet-hops checked (audit clean, no invariant error)", "packet-hops", float(total), 1e8 if full else None, 0.0 if full else None, lower_bound=True, unpublished=not full))
    curves_t = {"with errors": throughput, "no errors": [[throughput[0][0], clean[0]], [throughput[-1][0], clean[0]]]}
    curves_l = {"with errors": latency, "no errors": [[latency[0][0], clean[1]], [latency[-1][0], clean[1]]]}
    return {"metrics": rows, "setup": setup,
            "plots": [{"title": f"BG/L {shape}: saturation throughput vs bit error rate", "x": "log10 bit error rate", "y": "accepted load", "curves": curves_t},
                      {"title": f"BG/L {shape}: latency at load 0.1 vs bit error rate", "x": "log10 bit error rate", "y": "mean latency (cycles)", "curves": curves_l}]}


CASES = [_C("bgl-link-errors", "Link-level retransmission: throughput and latency against the bit error rate, no packet lost or duplicated", link_errors)]
