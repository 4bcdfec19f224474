"""What ``tofusim trace show`` prints: a trace's ranks, calls by kind,
bytes, compute fraction and communication matrix."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .calls import kind
from .read import Collective, Recv, Send, Trace


def summarise(t: Trace) -> dict[str, Any]:
    """A JSON-ready summary of ``t``."""
    calls: Counter[str] = Counter()
    refused: dict[str, list[int]] = {}
    matrix = [[0] * t.ranks for _ in range(t.ranks)]
    messages = p2p_bytes = 0
    coll: dict[str, dict[str, int]] = {}
    per_rank = []
    for r, cs in enumerate(t.calls):
        mpi_ns = compute_ns = 0
        start = next((c.leave_ns for c in cs if c.name.startswith("MPI_Init")), cs[0].enter_ns if cs else 0)
        last = start
        for c in cs:
            calls[c.name] += 1
            k = kind(c.name)
            if k == "refused":
                refused.setdefault(c.name, []).append(r)
            if c.enter_ns >= start and not c.name.startswith("MPI_Init"):
                compute_ns += max(0, c.enter_ns - last)
                mpi_ns += c.leave_ns - c.enter_ns
                last = c.leave_ns
            for rec in c.records:
                if isinstance(rec, Send):
                    matrix[r][rec.peer] += rec.bytes
                    messages += 1
                    p2p_bytes += rec.bytes
                elif isinstance(rec, Collective):
                    e = coll.setdefault(rec.op, {"calls": 0, "bytes_sent": 0})
                    e["calls"] += 1
                    e["bytes_sent"] += rec.sent
        total = compute_ns + mpi_ns
        per_rank.append({"rank": r, "calls": len(cs), "compute_ns": compute_ns, "mpi_ns": mpi_ns,
                         "compute_fraction": compute_ns / total if total else 0.0})
    # Collectives are counted once per rank taking part; a call is one per
    # communicator: the rank count of its communicator divides.
    return {
        "trace": t.path,
        "creator": t.creator,
        "ranks": t.ranks,
        "measured_seconds": t.measured_ns() * 1e-9,
        "communicators": len(t.comms),
        "calls": dict(sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))),
        "calls_by_kind": dict(Counter(kind(n) for n in calls.elements())),
        "point_to_point": {"messages": messages, "bytes": p2p_bytes},
        "collectives": coll,
        "compute_fraction": (sum(p["compute_ns"] for p in per_rank) / max(1, sum(p["compute_ns"] + p["mpi_ns"] for p in per_rank))),
        "per_rank": per_rank,
        "matrix_bytes": matrix,
        "refused_calls": {name: sorted(set(rs)) for name, rs in sorted(refused.items())},
        "receives": sum(1 for cs in t.calls for c in cs for rec in c.records if isinstance(rec, Recv)),
    }
