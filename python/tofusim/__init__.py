"""tofusim: a fast, validated simulator and toolkit for supercomputer interconnects.

The compiled core (``tofusim._core``) does the work; this package loads
configuration, drives runs and turns results into tables, files and plots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import _core, arguments
from ._core import ConfigError

__version__ = _core.version()

__all__ = ["BenchResult", "CollectiveResult", "ConfigError", "CounterSamples", "Experiment", "MpiTransport", "ReplayResult", "RunResult", "System", "__version__", "check",
           "check_file", "coll", "collective", "collective_algorithms", "collective_schedule", "mpi_bench", "network_layout", "presets", "replay", "result_schema", "run", "run_schedule", "Schedule",
           "run_file", "topo", "topo_file", "topo_toml", "write_report"]


def _read_text(path: str | Path) -> str:
    """The text of a configuration file, or a ConfigError naming it."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the file ({e.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: expected a UTF-8 text file") from None
    except ValueError:  # a NUL byte or a lone surrogate in the path
        raise ConfigError(f"{path!r}: not a file path") from None


def result_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every result — ``run``, the flow
    model's run, ``collective``, ``replay``, ``mpi_bench`` — generated from the Rust types
    that write them: ``roots`` names each result's schema, ``$defs`` holds
    every type, each key's description is its documentation. The Python
    records (:mod:`tofusim.records`) are generated from it; the same
    document is docs/result-schema.json.

    >>> sorted(result_schema()["roots"])
    ['BenchResult', 'CollectiveResult', 'FlowRunResult', 'PacketRunResult', 'ReplayResult']
    """
    return dict(json.loads(_core.result_schema()))


def topo(system: str) -> dict[str, Any]:
    """Metrics of a preset, e.g. ``topo("k")`` or ``topo("k:8x8x8")``."""
    try:
        return json.loads(_core.topo_name(arguments.text("system", system)))
    except ConfigError as e:
        raise arguments.relabel(e) from None


def topo_toml(text: str, file: str = "<string>") -> dict[str, Any]:
    """Metrics of the ``[network]`` table in TOML ``text``."""
    text, file = arguments.text("text", text), arguments.text("file", file)
    try:
        return json.loads(_core.topo_toml(text, file))
    except ConfigError as e:
        raise arguments.relabel(e) from None


def topo_file(path: str | Path) -> dict[str, Any]:
    """Metrics of the ``[network]`` table of a TOML file."""
    if not isinstance(path, (str, Path)):
        raise arguments.refuse("path", "the path of a TOML file", path)
    return topo_toml(_read_text(path), str(path))


def check(system: str | None = None, *, text: str | None = None, file: str = "<string>", routing: str | None = None,
          progress: Any = None) -> dict[str, Any]:
    """The static deadlock check (``tofusim check``) of a system preset
    (``system``, resized or not, e.g. ``"bgl:8x8x8"``) or of an experiment's
    TOML ``text`` (its ``[network]``, ``[router]`` and ``[routing]``
    tables; named ``file`` in errors). ``routing`` sets ``[routing]
    algorithm``. Builds the channel dependency graph of every route the
    engine can take and proves it free of deadlock, or returns a
    dependency cycle: ``verdict`` is ``deadlock-free``, ``cycle`` or
    ``not-proven`` (docs/experiment.md, ``tofusim check``).

    >>> check("bgl:4x4x4")["verdict"]
    'deadlock-free'
    """
    a = arguments
    if (system is None) == (text is None):
        raise a.refuse("system / text", "a system name or an experiment's TOML text, not both", (system, text))
    routing = None if routing is None else a.text("routing", routing)
    progress = a.callback("progress", progress)
    try:
        if system is not None:
            out = _core.deadlock_check(system=a.text("system", system), file=a.WHERE.get(), routing=routing, progress=progress)
        else:
            out = _core.deadlock_check(text=a.text("text", text), file=a.text("file", file), routing=routing, progress=progress)
    except ConfigError as e:
        raise a.relabel(e) from None
    return json.loads(out)


def check_file(path: str | Path, routing: str | None = None, progress: Any = None) -> dict[str, Any]:
    """The deadlock check of the experiment file at ``path`` (see :func:`check`)."""
    if not isinstance(path, (str, Path)):
        raise arguments.refuse("path", "the path of a TOML file", path)
    return check(text=_read_text(path), file=str(path), routing=routing, progress=progress)


def network_layout(system: str | None = None, *, text: str | None = None, file: str = "<string>") -> dict[str, Any]:
    """Where every router of a network sits and where each port's link goes
    (what the report's pictures draw), for a system preset or the
    ``[network]`` table of TOML ``text``."""
    a = arguments
    if (system is None) == (text is None):
        raise a.refuse("system / text", "a system name or TOML text, not both", (system, text))
    try:
        if system is not None:
            return json.loads(_core.network_layout(system=a.text("system", system)))
        return json.loads(_core.network_layout(text=a.text("text", text), file=a.text("file", file)))
    except ConfigError as e:
        raise a.relabel(e) from None


def presets() -> list[dict[str, Any]]:
    """Every system preset with its parameters and the source of each."""
    return json.loads(_core.presets_json())


def run(text: "str | Experiment", file: str = "<string>", progress: Any = None, ports: bool = False, threads: int = 1,
        comm: Any = None, model: str = "packet", max_memory: int | None = None, keep_partial: bool = False,
        notice: Any = None, max_minutes: "float | str | None" = None) -> "RunResult | None":
    """Runs the experiment in TOML ``text`` (or an :class:`Experiment`) on the packet engine.

    Returns a :class:`RunResult`: the run's JSON object, its keys also
    attributes, with data frames of its time series, latency histogram and
    per-port counters.

    ``progress(fraction)`` is called now and then; ``ports`` keeps the
    per-port counters in the result (large for big networks). ``threads``
    splits the network into partitions simulated on that many threads;
    ``comm`` (an mpi4py communicator, see :class:`MpiTransport`) makes this
    process one of an MPI run, every process calling ``run`` alike, and
    only rank 0 gets the result (the others ``None``). Results are
    bit-identical to the unsplit run's. ``model="flow"`` runs the workload
    on the flow model instead (max-min fair bandwidth sharing, one thread).
    Before building the network the run's memory is estimated; above
    ``max_memory`` bytes (default: the memory available) it is refused
    with a ConfigError giving the estimate by part (in an MPI run only an
    explicit ``max_memory`` limits it). Ctrl-C stops the run after its
    current window and raises KeyboardInterrupt; with ``keep_partial`` it
    returns what was measured instead, with ``interrupted: True``. The
    run's work is estimated too (``sim.estimated_packet_hops``); one
    expected to take over a minute is announced through ``notice(text)``
    before it starts, and one expected to take more than ``max_minutes``
    (default an hour; minutes, or a duration such as ``"2h"``; ``"none"``
    or ``math.inf`` for no limit) is refused with a ConfigError giving the
    estimate.
    """
    if isinstance(text, Experiment):
        text, file = text.toml(), text.file
    text = arguments.text("text (the experiment's TOML, or an Experiment)", text)
    file, model = arguments.text("file", file), arguments.text("model", model)
    ports, keep_partial = arguments.flag("ports", ports), arguments.flag("keep_partial", keep_partial)
    threads = arguments.whole("threads", threads, 0, 65536)
    max_memory = None if max_memory is None else arguments.size("max_memory", max_memory, 1)
    progress, notice = arguments.callback("progress", progress), arguments.callback("notice", notice)
    max_minutes = None if max_minutes is None else arguments.minutes("max_minutes", max_minutes)
    columns: dict[str, Any] = {}
    try:
        out = _core.run_experiment(text, file, progress, ports, threads, MpiTransport(comm) if comm is not None else None, model, max_memory,
                                   keep_partial, notice, columns, max_minutes)
    except ConfigError as e:
        raise arguments.relabel(e) from None
    return None if out is None else RunResult(json.loads(out), samples=CounterSamples(columns))


def run_file(path: str | Path, progress: Any = None, ports: bool = False, threads: int = 1,
             comm: Any = None, model: str = "packet", max_memory: int | None = None, keep_partial: bool = False,
             notice: Any = None, max_minutes: "float | str | None" = None) -> "RunResult | None":
    """Runs the experiment file at ``path`` (see :func:`run`)."""
    if not isinstance(path, (str, Path)):
        raise arguments.refuse("path", "a file path", path)
    return run(_read_text(path), str(path), progress, ports, threads, comm, model, max_memory, keep_partial, notice, max_minutes)


class MpiTransport:
    """The engine's link between the processes of an MPI run: one
    all-to-all of byte buffers per window, over an mpi4py communicator."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def alltoall(self, bufs: list[bytes]) -> list[bytes]:
        return self.comm.alltoall(bufs)


def collective_algorithms() -> dict[str, list[dict[str, Any]]]:
    """The collective algorithms of each operation: name, summary, needs_torus."""
    return json.loads(_core.collective_algorithms())


def coll(op: str, algo: "str | None", size_bytes: int, system: str, *, root: int = 0, segment_bytes: int | None = None,
         tnis: int | None = None, descriptor: str = "direct", cache_injection: bool = True, cmg: str = "near",
         verify: bool = False, seed: int = 1, progress: Any = None, model: str = "packet", keep_partial: bool = False,
         counter_cycles: int = 0, steps: bool = False, samples: dict[str, Any] | None = None,
         trees: str | None = None, trees_source: str = "<trees>", max_minutes: "float | str | None" = None,
         ppn: int = 1, placement: "str | list[int]" = "block", flat: bool = False,
         library: str | None = None, comm: str = "world") -> dict[str, Any]:
    """Runs one collective over every node of ``system``, ``ppn`` ranks per
    node placed ``block`` (consecutive ranks share a node), ``cyclic`` or
    by a list of node ids, one per rank. Ranks of one node share its TNIs
    and talk through its memory. With several ranks per node, barrier,
    bcast, reduce and allreduce run in their node-leader form (the node's
    ranks fan in to its first rank through memory, the algorithm runs
    among one rank per node on the nodes' torus shape, the result fans
    out), as the Tofu libraries run them; ``flat=True`` runs the algorithm
    over every rank instead (no torus shape then).

    ``size_bytes``: the vector (bcast, reduce, allreduce), each rank's block
    (allgather) or each rank's block per destination (alltoall). ``model``:
    ``packet`` (the packet engine), ``flow`` (the flow model: event by
    event, or in lockstep rounds when the schedule is too large to list),
    ``flow-events`` or ``flow-rounds`` to choose. ``counter_cycles``
    samples every port's and VC's counters that often (packet engine;
    the result's ``run.counter_samples`` counts them, and their columns go
    into the dict ``samples`` if given: see
    :class:`tofusim.samples.CounterSamples`); ``steps`` keeps every step's finish cycle
    (packet engine, the ``steps`` columns: rank, node, step, kind, peer,
    bytes, finish_cycle) — what ``tofusim report`` animates; a schedule of
    more than 4 million steps keeps none and says how many it had
    (``steps_omitted``). ``trees``: the JSON text of three trees for the
    trinary-tree algorithms instead of their own construction
    (``{"lengths": [Lx, Ly, Lz], "parents": [three lists of each rank's
    parent, null at the root]}``; checked: spanning, nearest-neighbour
    arcs, one tree per link, at most three children per rank over the
    three), named ``trees_source`` in errors. ``segment_bytes`` and
    ``tnis`` default to the algorithm's definition (trinaryx3 and
    trinary-tree: 3 TNIs and a segment derived from the pipeline depth;
    quad-rings: 4 TNIs; others: every TNI and 64 KiB);
    the result's ``settings`` says what was used and why.
    ``max_minutes``: the packet engine's time budget, as for :func:`run`
    (default an hour by the run's own estimate; ``"none"`` lifts it).
    ``algo=None`` lets the MPI library's rules choose (``library``:
    ``fjmpi``, ``openmpi`` or ``mpich``; default the system's), as a real
    library would for this operation, size and communicator;
    ``settings.algorithm`` says which rule chose it.
    ``comm``: the communicators that run it at once — ``world`` (every
    rank), the axes each keeps of the ranks' grid (``x``: every line along
    x, ``yz``: every y-z plane; ``MPI_Cart_sub``), ``blocks:N``
    (consecutive blocks of N ranks; ``MPI_Comm_split``) or
    ``ranks:0-7,16`` (one communicator, the other ranks idle). Each runs
    the collective over its own members; they share the network. The
    result's ``communicators`` says how many ran; size, bandwidth and
    settings are one communicator's.
    """
    a = arguments
    if algo is None:
        algo = ""
    elif library is not None:
        raise a.refuse("library", "None when algo names the algorithm (a library's rules choose one only when none is named)", library)
    spec = {
        "op": a.text("op", op), "algo": a.text("algo", algo), "library": "" if library is None else a.text("library", library), "size_bytes": a.size("size_bytes", size_bytes), "system": a.text("system", system),
        "root": a.whole("root", root, 0, 2**32 - 1),
        "segment_bytes": None if segment_bytes is None else a.size("segment_bytes", segment_bytes),
        "tnis": None if tnis is None else a.whole("tnis", tnis, 0, 255), "descriptor": a.text("descriptor", descriptor),
        "cache_injection": a.flag("cache_injection", cache_injection), "cmg": a.text("cmg", cmg), "verify": a.flag("verify", verify),
        "seed": a.whole("seed", seed), "model": a.text("model", model), "counter_cycles": a.whole("counter_cycles", counter_cycles),
        "steps": a.flag("steps", steps), "flat": a.flag("flat", flat), "comm": a.text("comm", comm),
    }
    a.placement(spec, ppn, placement)
    if max_minutes is not None:
        m = a.minutes("max_minutes", max_minutes)
        spec["max_minutes"] = "none" if m == float("inf") else m
    if trees is not None:
        spec["trees"], spec["trees_source"] = a.text("trees", trees), a.text("trees_source", trees_source)
    try:
        return json.loads(_core.run_collective(json.dumps(spec), a.callback("progress", progress), a.flag("keep_partial", keep_partial), samples))
    except ConfigError as e:
        raise a.relabel(e) from None


def mpi_bench(benchmark: str, system: str, *, ppn: int = 1, placement: "str | list[int]" = "block",
              sizes: "list[int] | None" = None, msglog: tuple[int, int] = (0, 22), algo: str | None = None,
              model: str = "packet", seed: int = 1, progress: Any = None, keep_partial: bool = False,
              max_minutes: "float | str | None" = None, flat: bool = False,
              library: str | None = None) -> BenchResult:
    """An Intel MPI Benchmarks (IMB-MPI1) kernel on ``system``: PingPong,
    PingPing, Sendrecv, Exchange, Allreduce, Reduce, Bcast, Allgather,
    Alltoall or Barrier, over every node's ``ppn`` ranks (placed as for
    :func:`coll`), at IMB's message sizes (0 and 2^min … 2^max bytes,
    ``msglog``) or the ``sizes`` given. The collectives run the algorithm
    the MPI library picks for each size (``library``: ``fjmpi``,
    ``openmpi`` or ``mpich``; default the system's — Fujitsu MPI on Tofu,
    MPICH on Aries and BG/L, Open MPI on fat-trees), named in each row
    with the rule that chose it, unless ``algo`` names one. ``model``: ``packet`` or ``flow``. The result's
    ``rows`` are IMB's table: bytes, repetitions, t_min_us, t_max_us,
    t_avg_us, mbytes_per_sec (10^6 bytes per second) — :meth:`BenchResult.imb_text`
    prints it as IMB does.

    >>> r = mpi_bench("PingPong", "k:2x3x2", sizes=[0, 1 << 20])
    >>> r.processes, [round(row.t_max_us, 2) for row in r.rows][0] > 0
    (2, True)
    """
    a = arguments
    if not (isinstance(msglog, (tuple, list)) and len(msglog) == 2):
        raise a.refuse("msglog", "a pair (min, max) of powers of two, e.g. (0, 22)", msglog)
    lo, hi = a.whole("msglog[0]", msglog[0], 0, 30), a.whole("msglog[1]", msglog[1], 0, 30)
    if lo > hi:
        raise a.refuse("msglog", "min at most max", msglog)
    spec: dict[str, Any] = {"benchmark": a.text("benchmark", benchmark), "system": a.text("system", system),
                            "sizes": [a.size(f"sizes[{i}]", s) for i, s in enumerate(sizes)] if sizes is not None
                            else [0] + [1 << k for k in range(lo, hi + 1)],
                            "model": a.text("model", model), "seed": a.whole("seed", seed), "flat": a.flag("flat", flat)}
    if algo is not None:
        spec["algo"] = a.text("algo", algo)
    if library is not None:
        spec["library"] = a.text("library", library)
    a.placement(spec, ppn, placement)
    if max_minutes is not None:
        m = a.minutes("max_minutes", max_minutes)
        spec["max_minutes"] = "none" if m == float("inf") else m
    try:
        return BenchResult(json.loads(_core.mpi_bench(json.dumps(spec), a.callback("progress", progress), a.flag("keep_partial", keep_partial))))
    except ConfigError as e:
        raise a.relabel(e) from None


def jobs(text: str, file: str = "<string>", progress: Any = None) -> dict[str, Any]:
    """Runs a job mix (``tofusim jobs``; the TOML ``text``, named ``file``
    in errors): every job placed by the mix's policy and run together on
    one network (packet engine), then each alone on the same nodes.
    Returns, per job, its time alone and in the mix, the slowdown, the
    links it used and shared with which other jobs, and the links most
    loaded by more than one job (docs/jobs.md)."""
    a = arguments
    try:
        return json.loads(_core.run_jobs(a.text("text", text), a.text("file", file), a.callback("progress", progress)))
    except ConfigError as e:
        raise a.relabel(e) from None


def jobs_file(path: str | Path, progress: Any = None) -> dict[str, Any]:
    """:func:`jobs` on a mix file."""
    return jobs(_read_text(path), str(path), progress)


def collective_schedule(op: str, algo: str, ranks: int, size_bytes: int, *, root: int = 0,
                        shape: list[int] | None = None, segment_bytes: int = 65536, tnis: int = 4) -> dict[str, Any]:
    """The schedule of a collective (per rank: steps with dependencies), as a dict."""
    a = arguments
    shape = None if shape is None else a.ranks("shape", shape)
    try:
        return json.loads(_core.collective_schedule(a.text("op", op), a.text("algo", algo), a.whole("ranks", ranks, 1, 2**32 - 1),
                                                    a.size("size_bytes", size_bytes), a.whole("root", root, 0, 2**32 - 1), shape,
                                                    a.size("segment_bytes", segment_bytes, 1), a.whole("tnis", tnis, 0, 255)))
    except ConfigError as e:
        raise a.relabel(e) from None


def collective(op: str, algo: str, size_bytes: int, system: str, **kw: Any) -> CollectiveResult:
    """One collective over every node of ``system`` (see :func:`coll`), as a :class:`CollectiveResult`
    (its counter samples, with ``counter_cycles``, as ``.samples``)."""
    columns: dict[str, Any] = {}
    return CollectiveResult(coll(op, algo, size_bytes, system, samples=columns, **kw), samples=CounterSamples(columns))


def replay(trace: str, system: str, **kw: Any) -> ReplayResult:
    """Replays an OTF2 trace on ``system`` (see :func:`tofusim.trace.replay`), as a :class:`ReplayResult`."""
    from .trace import replay as _replay

    columns: dict[str, Any] = {}
    return ReplayResult(_replay(trace, system, samples=columns, **kw), samples=CounterSamples(columns))


from .api import BenchResult, CollectiveResult, Experiment, ReplayResult, Result, RunResult, System, write_report  # noqa: E402 - after the functions they wrap
from .samples import CounterSamples  # noqa: E402
from .schedule import Schedule, run_schedule  # noqa: E402
