"""Collectives written in Python: :class:`Schedule` — per rank, sends,
receives (replacing or summing into the buffer), local copies and
software work, each with the steps of its own rank it waits for — run by
every executor the built-in algorithms run on: the packet engine, the
flow model and real buffers (``verify=True``, which checks the
collective's result). The file form is the JSON a schedule serialises to:
:func:`tofusim.collective_schedule` gives a built-in's, which loads,
edits and runs the same way (``tofusim coll --schedule FILE``).

Buffers are counted in elements of 8 bytes. A rank's buffer holds the
collective's regions (``buffer_elements``; more for scratch space):
allreduce, reduce and bcast the vector of ``count`` elements at offset 0;
allgather ``ranks`` blocks of ``count`` (block r is rank r's); alltoall
``ranks`` send blocks then ``ranks`` receive blocks. Messages between a
pair of ranks match in order (per tag).

>>> s = Schedule("allreduce", ranks=2, count=4, name="swap-and-add")
>>> a = s.send(0, 1, (0, 4)); b = s.send(1, 0, (0, 4))
>>> _ = s.recv(0, 1, (0, 4), combine="sum"); _ = s.recv(1, 0, (0, 4), combine="sum")
>>> r = s.run("bgl:2x1x1", verify=True)
>>> r.verified, r.algo, r.processes
(True, 'swap-and-add', 2)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from . import ConfigError, _core, arguments

_OPERATIONS = ("barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter", "reduce_scatter", "transfers")

SpanLike = "tuple[int, int] | Sequence[tuple[int, int]]"


def _spans(name: str, spans: Any) -> list[dict[str, int]]:
    """``(offset, length)`` or a list of them, in elements."""
    if isinstance(spans, tuple) and len(spans) == 2 and all(isinstance(x, int) for x in spans):
        spans = [spans]
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Iterable):
        raise arguments.refuse(name, "(offset, length) in elements, or a list of them", spans)
    out = []
    for i, sp in enumerate(spans):
        if not (isinstance(sp, (tuple, list)) and len(sp) == 2):
            raise arguments.refuse(f"{name}[{i}]", "(offset, length) in elements", sp)
        out.append({"offset": arguments.whole(f"{name}[{i}]", sp[0]), "len": arguments.whole(f"{name}[{i}]", sp[1])})
    return out


class Schedule:
    """A collective's schedule, step by step; see the module's docs."""

    def __init__(self, collective: str, ranks: int, count: int, *, root: int = 0, name: str = "python",
                 buffer_elements: int | None = None) -> None:
        a = arguments
        op = a.text("collective", collective)
        if op not in _OPERATIONS:
            raise ConfigError(f"<arguments>: collective: unknown operation {op!r}; expected one of {', '.join(_OPERATIONS)}")
        self.ranks = a.whole("ranks", ranks, 1, 2**20)
        self.count = a.whole("count", count)
        self.collective: dict[str, Any] = {"op": op}
        if op in ("bcast", "reduce", "gather", "scatter"):
            self.collective["root"] = a.whole("root", root, 0, self.ranks - 1)
        self.name = a.text("name", name)
        self.buffer_elements = None if buffer_elements is None else a.whole("buffer_elements", buffer_elements)
        self.programs: list[list[dict[str, Any]]] = [[] for _ in range(self.ranks)]

    # ------------------------------------------------------------ steps

    def _push(self, rank: int, action: dict[str, Any], deps: Iterable[int]) -> int:
        rank = arguments.whole("rank", rank, 0, self.ranks - 1)
        if isinstance(deps, int):
            deps = [deps]
        steps = self.programs[rank]
        ids = [arguments.whole("deps", d, 0, max(len(steps) - 1, 0)) for d in deps]
        if any(d >= len(steps) for d in ids):
            raise ConfigError(f"<arguments>: deps: rank {rank} has {len(steps)} steps so far; a step waits for earlier ones")
        steps.append({"action": action, "deps": ids})
        return len(steps) - 1

    def send(self, rank: int, peer: int, spans: Any, *, tni: int = 0, deps: Iterable[int] = (), pace: int = 1) -> int:
        """Rank ``rank`` sends the elements of ``spans`` (one message) to
        ``peer`` through its node's TNI ``tni``; returns the step's index
        in ``rank``'s program."""
        return self._push(rank, {"kind": "send", "peer": arguments.whole("peer", peer, 0, self.ranks - 1), "spans": _spans("spans", spans),
                                 "tni": arguments.whole("tni", tni, 0, 255), "pace": arguments.whole("pace", pace, 1, 255)}, deps)

    def recv(self, rank: int, peer: int, spans: Any, *, combine: str = "replace", deps: Iterable[int] = ()) -> int:
        """Rank ``rank`` receives the next message from ``peer`` into
        ``spans``, replacing the elements or adding into them (``combine="sum"``)."""
        if combine not in ("replace", "sum"):
            raise arguments.refuse("combine", "replace or sum", combine)
        return self._push(rank, {"kind": "recv", "peer": arguments.whole("peer", peer, 0, self.ranks - 1), "spans": _spans("spans", spans),
                                 "combine": combine}, deps)

    def copy(self, rank: int, source: Any, target: Any, *, deps: Iterable[int] = ()) -> int:
        """A local copy of the elements of ``source`` to ``target`` (same total)."""
        return self._push(rank, {"kind": "copy", "from": _spans("source", source), "to": _spans("target", target)}, deps)

    def work(self, rank: int, ns: int, *, deps: Iterable[int] = ()) -> int:
        """Software or compute of ``ns`` nanoseconds that moves no data."""
        return self._push(rank, {"kind": "work", "ns": arguments.whole("ns", ns, 0, 2**32 - 1)}, deps)

    # ------------------------------------------------------------ data

    def to_dict(self) -> dict[str, Any]:
        """The file form (the JSON a built-in schedule serialises to)."""
        d: dict[str, Any] = {"collective": dict(self.collective), "algorithm": self.name, "ranks": self.ranks, "count": self.count,
                             "programs": [{"steps": steps} for steps in self.programs]}
        if self.buffer_elements is not None:
            d["buffer_elements"] = self.buffer_elements
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(self.to_json() + "\n", encoding="utf-8")
        return p

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Schedule:
        """A schedule from its file form (a built-in's too: :func:`tofusim.collective_schedule`)."""
        if not isinstance(d, dict):
            raise arguments.refuse("schedule", "a schedule's JSON object", d)
        try:
            c = d["collective"]
            s = cls(c["op"], d["ranks"], d["count"], root=c.get("root", 0), name=d.get("algorithm") or "given",
                    buffer_elements=d.get("buffer_elements"))
            s.programs = [list(p["steps"]) for p in d["programs"]]
        except (KeyError, TypeError) as e:
            raise ConfigError(f"<schedule>: not a schedule: missing or malformed {e}") from None
        return s

    @classmethod
    def load(cls, path: str | Path) -> Schedule:
        from . import _read_text

        try:
            return cls.from_dict(json.loads(_read_text(path)))
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}: not JSON: {e}") from None

    def __repr__(self) -> str:
        steps = sum(len(p) for p in self.programs)
        return f"Schedule({self.collective['op']} {self.name!r}: {self.ranks} ranks, {self.count} elements, {steps} steps)"

    def to_goal(self, system: str) -> str:
        """The schedule as GOAL text (LogGOPSim's format; :func:`goal_text`)."""
        return goal_text(self, system)

    # ------------------------------------------------------------ running

    def run(self, system: str, **kw: Any) -> Any:
        """Runs it on ``system`` (see :func:`run_schedule`), as a :class:`tofusim.CollectiveResult`."""
        return run_schedule(self, system, **kw)


def run_schedule(schedule: "Schedule | dict[str, Any] | str", system: str, *, ppn: int = 1, placement: "str | list[int]" = "block",
                 verify: bool = False, model: str = "packet", seed: int = 1, progress: Any = None, keep_partial: bool = False,
                 counter_cycles: int = 0, steps: bool = False, max_minutes: "float | str | None" = None,
                 source: str = "<schedule>", samples: dict[str, Any] | None = None, chakra_files: "list[str] | None" = None) -> Any:
    """Runs a schedule given as data — a :class:`Schedule`, its dict or its
    JSON text — over the first ranks of ``system`` (``ppn`` per node,
    placed as for :func:`tofusim.coll`), on the packet engine or the flow
    model, and with ``verify`` on real buffers; as a :class:`tofusim.CollectiveResult`
    (``algo`` is the schedule's name). The text may be GOAL (LogGOPSim's
    format); ``chakra_files`` (the ranks' Chakra execution traces, rank 0
    first: :func:`chakra_paths`) stand for the schedule instead."""
    from . import CollectiveResult
    from .samples import CounterSamples

    a = arguments
    if chakra_files is not None:
        if not chakra_files:
            raise a.refuse("chakra_files", "the ranks' Chakra files, rank 0 first (at least one)", chakra_files)
        text = ""
    else:
        text = _schedule_text(schedule)
    spec: dict[str, Any] = {"schedule": text, "schedule_source": a.text("source", source), "system": a.text("system", system),
                            "verify": a.flag("verify", verify), "model": a.text("model", model), "seed": a.whole("seed", seed),
                            "counter_cycles": a.whole("counter_cycles", counter_cycles), "steps": a.flag("steps", steps)}
    a.placement(spec, ppn, placement)
    if chakra_files is not None:
        spec["chakra_files"] = [a.text(f"chakra_files[{i}]", str(f)) for i, f in enumerate(chakra_files)]
    if max_minutes is not None:
        m = a.minutes("max_minutes", max_minutes)
        spec["max_minutes"] = "none" if m == float("inf") else m
    columns: dict[str, Any] = samples if samples is not None else {}
    try:
        r = json.loads(_core.run_given_schedule(json.dumps(spec), a.callback("progress", progress), a.flag("keep_partial", keep_partial), columns))
    except ConfigError as e:
        raise a.relabel(e) from None
    return CollectiveResult(r, samples=CounterSamples(columns))


def _schedule_text(schedule: "Schedule | dict[str, Any] | str") -> str:
    """A schedule's JSON text, from a :class:`Schedule`, its dict or the text."""
    if isinstance(schedule, Schedule):
        return schedule.to_json()
    if isinstance(schedule, dict):
        return json.dumps(schedule)
    return arguments.text("schedule", schedule)


def goal_text(schedule: "Schedule | dict[str, Any] | str", system: str) -> str:
    """A schedule — a :class:`Schedule`, its dict or its JSON text (e.g.
    :func:`tofusim.collective_schedule`'s) — as GOAL text, the schedule
    format of LogGOPSim, Schedgen and ATLAHS: sends, receives and ``calc``
    per rank with their ``requires``. Its local copies and summing
    receives become ``calc`` at ``system``'s host rates (GOAL has no
    copies). ``tofusim coll --schedule FILE.goal`` reads it back
    (docs/traces.md, "GOAL")."""
    a = arguments
    text = _schedule_text(schedule)
    try:
        return _core.schedule_goal(text, a.text("system", system))
    except ConfigError as e:
        raise a.relabel(e) from None


def chakra_files(schedule: "Schedule | dict[str, Any] | str", system: str, out: str) -> list[str]:
    """A schedule written as Chakra execution traces for ``system``
    (``out/tofusim.RANK.et``; copies and sums as compute nodes at its host
    rates, as :func:`goal_text`). Returns their paths, rank 0 first."""
    a = arguments
    text = _schedule_text(schedule)
    try:
        return _core.schedule_chakra(text, a.text("system", system), a.text("out", out))
    except ConfigError as e:
        raise a.relabel(e) from None


def chakra_paths(where: "str | Path") -> list[str]:
    """The Chakra files of a directory (``NAME.RANK.et``), rank 0 first;
    refused unless their ranks run 0, 1, … without a gap."""
    d = Path(where)
    by_rank: dict[int, str] = {}
    prefixes = set()
    for f in sorted(d.glob("*.et")):
        stem = f.name[:-3]
        prefix, _, rank = stem.rpartition(".")
        if not rank.isdigit() or int(rank) in by_rank:
            raise ConfigError(f"{f}: expected Chakra files named NAME.RANK.et, one per rank")
        prefixes.add(prefix)
        by_rank[int(rank)] = str(f)
    if len(prefixes) > 1:
        raise ConfigError(f"{d}: Chakra files of several traces ({', '.join(sorted(prefixes))}); expected one NAME")
    if not by_rank or sorted(by_rank) != list(range(len(by_rank))):
        raise ConfigError(f"{d}: expected Chakra files NAME.0.et … NAME.N-1.et, found ranks {sorted(by_rank)}")
    return [by_rank[r] for r in range(len(by_rank))]
