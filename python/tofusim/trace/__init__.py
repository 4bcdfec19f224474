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


__all__ = ["comm_list", "record", "replay", "summarise"]
