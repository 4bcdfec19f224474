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

    ``system`` is a preset (``k:4x6x4``) or ``recorded``: the model of the
    machine the trace was recorded on (:mod:`tofusim.trace.machine`).

    Returns the result: predicted ``time_seconds``, per-rank compute,
    point-to-point, collective and waiting seconds, and beside them the
    trace's own ``measured_seconds`` and the algorithms used.
    """
    t = trace if isinstance(trace, Trace) else read(trace)
    p = build_program(t, algorithms)
    system_toml = mpi = machine = None
    if system == "recorded":
        from .machine import recorded_machine

        machine = recorded_machine(t.path, t.ranks)
        system_toml, mpi = machine["system_toml"], json.dumps(machine["mpi"])
    r = json.loads(_core.replay(json.dumps(p.program), system, model, order, float(compute_scale), int(seed), progress, True,
                                system_toml, mpi))
    if machine is not None:
        r["machine"] = {k: v for k, v in machine.items() if k != "system_toml"}
    r["trace"] = t.path
    r["measured_seconds"] = t.measured_ns() * 1e-9
    r["algorithms"] = p.algorithms
    r["uncompleted_receives"] = p.uncompleted_receives
    r["cancelled_receives"] = p.cancelled_receives
    r["trivial_collectives"] = p.trivial_collectives
    return r
