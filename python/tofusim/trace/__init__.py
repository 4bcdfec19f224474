"""MPI traces (issue 20): recording real programs as OTF2 with tofusim's
PMPI tracer, and — in the compiled core (crate tofusim-trace) — reading any
writer's OTF2 MPI records, summarising them, replaying them and turning
them into communication lists."""

from __future__ import annotations

import json
from typing import Any

from .. import _core
from .record import record
from .replay import replay


def summarise(path: str) -> dict[str, Any]:
    """The summary ``tofusim trace show`` prints, as a dict."""
    return json.loads(_core.trace_summary(str(path)))


def comm_list(path: str, collectives: bool = True) -> dict[str, Any]:
    """The communication list of a trace (``tofusim pattern from-trace``)."""
    return json.loads(_core.trace_comm_list(str(path), collectives))


__all__ = ["chakra", "comm_list", "goal", "record", "replay", "summarise"]


def goal(path: str, system: str, *, ppn: int = 1, placement: str = "block", library: str | None = None,
         compute_scale: float = 1.0) -> str:
    """The schedule a replay of the trace at ``path`` runs on ``system``
    (the MPI software's messages and work, the collectives' algorithms,
    the computation), written as GOAL text — LogGOPSim's schedule format
    (docs/traces.md, "GOAL"). Written for one system: copies and summing
    receives are ``calc`` at its host rates. ``tofusim coll --schedule
    FILE.goal --system SYSTEM`` runs it to the replay's time."""
    from .. import ConfigError, arguments as a

    try:
        return _core.trace_goal(a.text("path", path), a.text("system", system), a.whole("ppn", ppn, 1, 256), a.text("placement", placement),
                                None if library is None else a.text("library", library), None, float(compute_scale))
    except ConfigError as e:
        raise a.relabel(e) from None


def chakra(path: str, system: str, out: str, *, ppn: int = 1, placement: str = "block", library: str | None = None,
           compute_scale: float = 1.0) -> list[str]:
    """:func:`goal`, written as Chakra execution traces (MLCommons,
    ASTRA-sim's input): ``out/tofusim.RANK.et``, one per rank (docs/traces.md,
    "Chakra"). Returns their paths, rank 0 first."""
    from .. import ConfigError, arguments as a

    try:
        return _core.trace_chakra(a.text("path", path), a.text("system", system), a.text("out", out), a.whole("ppn", ppn, 1, 256),
                                  a.text("placement", placement), None if library is None else a.text("library", library), float(compute_scale))
    except ConfigError as e:
        raise a.relabel(e) from None
