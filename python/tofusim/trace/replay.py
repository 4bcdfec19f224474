"""Replaying a trace on a simulated system (the Python side of
``tofusim replay``; reading, matching, the schedule and its run are the
compiled core's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import ConfigError, _core, arguments, collective_algorithms


def trace_dir(trace: str) -> str:
    """The directory of a trace given as it or its anchor file."""
    p = Path(trace)
    return str(p if p.is_dir() else p.parent)


#: Memory a replay takes per byte of the trace's OTF2 event files
#: (measured: a 256-rank halo trace, 46 MB of events, peaked at 1.95 GB on
#: the flow model, 42 bytes per byte; rounded up). A guide, not a bound.
REPLAY_BYTES_PER_EVENT_BYTE = 48


def _available_memory_bytes() -> int | None:
    """MemAvailable of /proc/meminfo (Linux), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def refuse_beyond_memory(trace: str, limit_bytes: int | None = None) -> int:
    """The replay's memory estimated from the size of the trace's event
    files; above ``limit_bytes`` (default the memory available) a
    ConfigError with the estimate, before the trace is read. Returns the
    estimate."""
    events = sum(p.stat().st_size for p in Path(trace_dir(trace)).rglob("*.evt") if p.is_file())
    need = events * REPLAY_BYTES_PER_EVENT_BYTE
    limit = _available_memory_bytes() if limit_bytes is None else limit_bytes
    if limit is not None and need > limit:
        raise ConfigError(f"{trace}: memory: replaying {events / 2**20:,.0f} MiB of OTF2 events takes about {need / 2**30:,.1f} GiB "
                          f"(about {REPLAY_BYTES_PER_EVENT_BYTE} bytes per byte of events), more than the memory available "
                          f"({limit / 2**30:,.1f} GiB); replay a shorter trace (fewer iterations) or on a machine with more memory")
    return need


def _refuse_unrecorded_threads(trace: str) -> None:
    """A tofusim recording whose program called MPI from several threads
    misses those calls (the tracer records MPI_Init's thread only)."""
    meta = Path(trace_dir(trace)) / "tofusim.json"
    if not meta.exists():
        return
    try:
        counts = json.loads(meta.read_text(encoding="utf-8")).get("other_thread_calls") or []
    except (OSError, ValueError) as e:
        raise ConfigError(f"{meta}: unreadable: {e}") from None
    busy = [(r, n) for r, n in enumerate(counts) if n]
    if busy:
        r, n = busy[0]
        raise ConfigError(f"{trace}: rank {r} made {n:,} MPI calls from threads other than the one that called MPI_Init; "
                          "the tracer does not record them, so the trace cannot be replayed faithfully")


def replay(trace: str, system: str, *, model: str = "packet", order: list[int] | None = None,
           compute_scale: float = 1.0, algorithms: dict[str, str] | None = None, seed: int = 1,
           progress: Any = None, counter_cycles: int = 0, samples: dict[str, Any] | None = None,
           max_minutes: "float | str | None" = None, ppn: int = 1, placement: str = "block",
           library: str | None = None) -> dict[str, Any]:
    """Replays ``trace`` (an OTF2 archive's directory or anchor file) on ``system``.

    The ranks go ``ppn`` to a node, placed ``block`` or ``cyclic`` over the
    communicator's nodes, or by ``order`` (each rank's node id; a node
    holds at most ``ppn``). Ranks of one node share its TNIs and talk
    through its memory.

    ``system`` is a preset (``k:4x6x4``) or ``recorded``: the model of the
    machine the trace was recorded on (:mod:`tofusim.trace.machine`),
    described in the result's ``machine`` (its system file as
    ``system_toml``).

    Each collective call runs the algorithm ``library``'s rules choose for
    its operation, size and communicator (``fjmpi``, ``openmpi``, ``mpich``;
    default the system's), unless ``algorithms`` names one for the
    operation; ``collective_calls`` lists them with the rule.

    Returns the result: predicted ``time_seconds``, per-rank compute,
    point-to-point, collective and waiting seconds, and beside them the
    trace's own ``measured_seconds`` and the algorithms used; with
    ``counter_cycles`` (packet engine) the per-port counters sampled every
    that many cycles (``run.counter_samples`` counts them; their columns
    go into the dict ``samples`` if given, see
    :class:`tofusim.samples.CounterSamples`). ``max_minutes``: the packet
    engine's time budget, as for :func:`tofusim.run` (default an hour by
    the replay's own estimate; ``"none"`` lifts it).
    """
    from .. import arguments as a

    if not isinstance(trace, (str, Path)):
        raise a.refuse("trace", "the path of an OTF2 archive", trace)
    trace = a.text("trace", str(trace))
    system, model = a.text("system", system), a.text("model", model)
    order = None if order is None else a.ranks("order", order)
    compute_scale = a.number("compute_scale", compute_scale, 0.0, 1e9)
    seed, counter_cycles = a.whole("seed", seed), a.whole("counter_cycles", counter_cycles)
    if algorithms is not None and (not isinstance(algorithms, dict)
                                   or not all(isinstance(k, str) and isinstance(v, str) for k, v in algorithms.items())):
        raise a.refuse("algorithms", "a dict of operation name to algorithm name", algorithms)
    known = {op: [x["name"] for x in xs] for op, xs in collective_algorithms().items()}
    # (An operation the replay does not know is refused by the core, which
    # knows which operations it replays.)
    for op, name in (algorithms or {}).items():
        if op in known and name not in known[op]:
            raise ConfigError(f"{a.WHERE.get()}: algorithms: {op}={name!r}: expected one of {', '.join(known[op])}")
    progress = a.callback("progress", progress)
    max_minutes = None if max_minutes is None else a.minutes("max_minutes", max_minutes)
    _refuse_unrecorded_threads(trace)
    refuse_beyond_memory(trace)
    system_toml = mpi = machine = None
    if system == "recorded":
        from .machine import recorded_machine

        machine = recorded_machine(trace_dir(trace), _core.trace_ranks(trace))
        system_toml, mpi = machine["system_toml"], json.dumps(machine["mpi"])
        # The recordings run Open MPI (make install's): its rules choose.
        library = "openmpi" if library is None else library
    try:
        r = json.loads(_core.trace_replay(trace, system, model, order, compute_scale, seed, progress, True,
                                          system_toml, mpi, dict(algorithms or {}), counter_cycles, samples, max_minutes,
                                          a.whole("ppn", ppn, 1, 2**32 - 1), a.text("placement", placement),
                                          None if library is None else a.text("library", library)))
    except ConfigError as e:
        raise a.relabel(e) from None
    if machine is not None:
        # With its system file (system_toml): what the run was laid out on.
        r["machine"] = dict(machine)
    return r


def replay_program(program: dict[str, Any], system_toml: str, mpi: dict[str, Any]) -> dict[str, Any]:
    """Replays a replay program given as data (``ranks``, ``messages``,
    ``collectives``, ``programs``: what the OTF2 reader builds) on the
    system of ``system_toml`` with the MPI costs ``mpi``, on the packet
    engine. What :mod:`tofusim.trace.machine` times its ping-pongs with."""
    try:
        return json.loads(_core.replay(json.dumps(program), "recorded", "packet", None, 1.0, 1, None, False, system_toml, json.dumps(mpi)))
    except ConfigError as e:
        raise arguments.relabel(e) from None
