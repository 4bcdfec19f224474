"""Replaying a trace on a simulated system (the Python side of
``tofusim replay``; the schedule and its run are the compiled core's)."""

from __future__ import annotations

import json
from typing import Any

from .. import _core
from .program import build_program
from .read import Trace, read


def replay(trace: str | Trace, system: str, *, model: str = "packet", order: list[int] | None = None,
           compute_scale: float = 1.0, algorithms: dict[str, str] | None = None, seed: int = 1,
           progress: Any = None) -> dict[str, Any]:
    """Replays ``trace`` (a path or a read :class:`Trace`) on ``system``.

    Returns the result: predicted ``time_seconds``, per-rank compute,
    point-to-point, collective and waiting seconds, and beside them the
    trace's own ``measured_seconds`` and the algorithms used.
    """
    t = trace if isinstance(trace, Trace) else read(trace)
    p = build_program(t, algorithms)
    r = json.loads(_core.replay(json.dumps(p.program), system, model, order, float(compute_scale), int(seed), progress, True))
    r["trace"] = t.path
    r["measured_seconds"] = t.measured_ns() * 1e-9
    r["algorithms"] = p.algorithms
    r["uncompleted_receives"] = p.uncompleted_receives
    r["trivial_collectives"] = p.trivial_collectives
    return r
