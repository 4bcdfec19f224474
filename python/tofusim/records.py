"""Typed views of the JSON objects a result holds (issue 21, part 1).

A result's nested objects — ``r.sim``, ``r.setup``, ``r.latency``,
``r.counter_samples``, a collective's ``c.run`` and ``c.flow`` — are
:class:`Record` subclasses: each key the core writes is a typed attribute
(``r.sim.wall_seconds`` is a ``float``, ``r.setup.router`` a
:class:`RouterSetup`), and the record is still the JSON object, a dict, so
``r.sim["wall_seconds"]``, ``json.dumps(r)`` and ``r.setup == {...}`` keep
working. The attributes are declared once, as :class:`Key` (always there)
or :class:`Maybe` (``None`` when the JSON has null or lacks the key: a
flow-model run has no event count), and nested objects are wrapped when
the record is made.

>>> s = SimInfo({"cycles": 6000, "wall_seconds": 0.5, "peak_memory_bytes": 2**20, "partitions": None})
>>> s.cycles, s.wall_seconds, s.partitions, s["cycles"]
(6000, 0.5, None, 6000)
>>> Latency({"count": 3, "mean": 10.0, "p50": 9.0, "p99": 20.0, "max": 21.0}).p99
20.0
"""

from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar, overload

T = TypeVar("T")
R = TypeVar("R", bound="Record")


class _Field:
    """What :class:`Key` and :class:`Maybe` share: the key (the attribute's
    name) and the conversion of its JSON value."""

    def __init__(self, conv: Callable[[Any], Any], doc: str = "") -> None:
        self.conv = conv
        self.name = ""
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def nested(self) -> tuple[type[Record] | None, bool]:
        """The record class this key holds, and whether as a list of them."""
        item = getattr(self.conv, "record_item", None)
        if item is not None:
            return item, True
        if isinstance(self.conv, type) and issubclass(self.conv, Record):
            return self.conv, False
        return None, False

    def _value(self, obj: Record) -> Any:
        v = dict.get(obj, self.name)
        # Records (and lists of them) were made with the record that holds them.
        if v is None or self.nested()[0] is not None and isinstance(v, (Record, list)):
            return v
        return self.conv(v)


class Key(_Field, Generic[T]):
    """A key the JSON object always has, as an attribute of type ``T``
    (``conv`` of its value; a :class:`Record` class for a nested object)."""

    def __init__(self, conv: Callable[[Any], T], doc: str = "") -> None:
        super().__init__(conv, doc)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Key[T]: ...

    @overload
    def __get__(self, obj: Record, owner: type | None = None) -> T: ...

    def __get__(self, obj: Record | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if dict.get(obj, self.name) is None:
            raise AttributeError(f"{type(obj).__name__} has no {self.name!r} here (keys: {', '.join(sorted(obj))})")
        return self._value(obj)


class Maybe(_Field, Generic[T]):
    """A key that may be missing or null, as an attribute of type ``T | None``."""

    def __init__(self, conv: Callable[[Any], T], doc: str = "") -> None:
        super().__init__(conv, doc)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Maybe[T]: ...

    @overload
    def __get__(self, obj: Record, owner: type | None = None) -> T | None: ...

    def __get__(self, obj: Record | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return self._value(obj)


def list_of(kind: type[R]) -> Callable[[Any], list[R]]:
    """The conversion of a JSON list of objects into a list of ``kind``."""
    def conv(v: Any) -> list[R]:
        return [x if isinstance(x, kind) else kind(x) for x in v]

    conv.record_item = kind  # type: ignore[attr-defined]
    return conv


# A JSON object: str keys, any values.
class Record(dict):  # type: ignore[type-arg]
    """A JSON object of a result with its keys as typed attributes (the
    class's :class:`Key` and :class:`Maybe` declarations), still a dict."""

    #: The keys that hold records (or lists of them), found when a subclass is made.
    _nested: dict[str, tuple[type[Record], bool]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        nested = {}
        for klass in reversed(cls.__mro__):
            for name, f in vars(klass).items():
                if isinstance(f, _Field):
                    kind, many = f.nested()
                    if kind is not None:
                        nested[name] = (kind, many)
        cls._nested = nested

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        super().__init__(data or {})
        for name, (kind, many) in self._nested.items():
            v = dict.get(self, name)
            if many and isinstance(v, list):
                self[name] = [x if isinstance(x, kind) or not isinstance(x, dict) else kind(x) for x in v]
            elif not many and isinstance(v, dict) and not isinstance(v, kind):
                self[name] = kind(v)

    @classmethod
    def fields(cls) -> list[str]:
        """The keys declared as attributes."""
        return [name for klass in reversed(cls.__mro__) for name, f in vars(klass).items() if isinstance(f, _Field)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else list(v)


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else dict(v)


# ---------------------------------------------------------------- packet runs

class Latency(Record):
    """Packet latency, cycles: count, mean, median, 99th percentile and maximum."""

    count = Maybe(int, "packets measured (packet engine; the flow model's latency is zero-load and has no count)")
    mean = Key(float)
    p50 = Key(float)
    p99 = Key(float)
    max = Key(float)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Latency:
        return cls(d or {})


class PartitionLoad(Record):
    """One partition's share of a split run."""

    routers = Key(int)
    events = Key(int)
    busy_seconds = Key(float, "wall time simulating its windows")
    wait_seconds = Key(float, "wall time exchanging with and waiting for the others at window boundaries")


class Partitions(Record):
    """How a split run shared the work (``--threads``, ``--mpi``)."""

    how = Key(str, "how the network was cut")
    threads_per_process = Key(int)
    processes = Key(int)
    window_cycles = Key(int, "the synchronisation window")
    windows = Key(int)
    partitions = Key(list_of(PartitionLoad))
    event_imbalance = Key(float, "most events of a partition over the mean (1: balanced)")


class SimInfo(Record):
    """What the simulator spent: ``r.sim``."""

    cycles = Maybe(int, "cycles simulated (packet engine)")
    events = Maybe(int, "events processed (packet engine)")
    wall_seconds = Key(float)
    peak_memory_bytes = Key(int, "the process's peak resident memory")
    simulated_us_per_wall_second = Maybe(float, "simulated network time per wall second, microseconds (packet engine)")
    packet_hops = Maybe(int, "(packet engine)")
    partitions = Maybe(Partitions, "a split run's partitions (None when not split)")
    estimated_memory_bytes = Maybe(int, "the estimate the run was checked against before it started")
    estimated_packet_hops = Maybe(int, "the work estimated before it started (packet engine)")
    flows = Maybe(int, "flows solved (flow model)")
    solves = Maybe(int, "max-min solves (flow model)")


class SamplingInfo(Record):
    """What was sampled and how much (``counter_samples``): the rows are in
    the result's ``samples`` tables and the run directory's Parquet files."""

    requested_period_cycles = Key(int, "run.counter_period as asked")
    period_cycles = Key(int, "the period of the samples kept (doubled for each halving of a long run's samples)")
    samples = Key(int, "distinct sample cycles")
    port_rows = Key(int)
    vc_rows = Key(int)
    files = Maybe(_list, "the files written (with --out)")


class RouterSetup(Record):
    """The router as run (``setup.router``: docs/experiment.md, ``[router]``)."""

    arbitration = Key(str)
    chunk_bytes = Key(int)
    class_vcs = Key(int)
    dynamic_vcs = Key(int)
    escape = Key(str)
    fifo_select = Key(str)
    hop_latency_cycles = Key(int)
    host_bytes_per_cycle = Maybe(float)
    injection_fifo_bytes = Key(int)
    injection_fifos = Key(int)
    jsq = Key(bool)
    jsq_ranges = Maybe(int, "the token ranges JSQ compares (BG/L: 4, a 2-bit range)")
    max_packet_bytes = Key(int)
    network_priority = Key(float)
    nodes_per_router = Key(int)
    overhead_bytes = Key(int)
    paths = Key(int)
    port_cycles_per_byte = Key(_list)
    priority_fifos = Key(int)
    priority_vc = Key(bool)
    slq_fraction = Key(float)
    token_latency_cycles = Key(int)
    vc_buffer_bytes = Key(int)
    virtual_output_queues = Key(bool)


class RunSetup(Record):
    """The ``[run]`` table as run (``setup.run``)."""

    cycles = Maybe(int)
    warmup = Key(int)
    seed = Key(int)
    sample_cycles = Key(int, "the time series' period")
    counter_cycles = Key(int, "the counter samples' period (run.counter_period; 0: none)")
    audit_cycles = Key(int)
    deadlock_cycles = Key(int)
    max_live_packets = Maybe(int)
    plant = Maybe(_dict)
    plant_after = Key(int)
    jsq_statistics = Key(bool, "whether JSQ's choices were counted (the run's jsq report)")


class Faults(Record):
    """Failed nodes and links the run routed around (``setup.faults``)."""

    nodes = Key(_list)
    links = Key(_list)
    link_ports = Key(_list)


class Setup(Record):
    """The experiment as run: ``r.setup``."""

    system = Key(str)
    nodes = Key(int)
    routing = Key(str)
    packet_bytes = Key(int)
    header_bytes = Key(int)
    injection_links = Key(float)
    cycle_ns = Maybe(float, "length of one network cycle (a byte time of the reference link)")
    hop_latency_ns = Maybe(float, "router + link latency of a hop, the router's hop_latency_cycles in ns")
    token_latency_ns = Maybe(float, "a token's return to the sender, ns")
    router = Key(RouterSetup)
    run = Key(RunSetup)
    workload = Key(_dict, "the workload as the engine took it (its kind, then its keys)")
    faults = Key(Faults)
    fault_events = Maybe(_list, "failures and recoveries during the run")


class JsqStats(Record):
    """What adaptive JSQ's output choices among two or more free dynamic VCs saw (``r.jsq``)."""

    choices = Key(int)
    separated_fraction = Key(float, "choices whose best token range one candidate held alone (the rest: the random tie-break)")
    candidate_ranges = Key(_list, "candidates compared, by quarter of the downstream buffer free (0: under a quarter, 3: at least three)")


class BlockedVc(Record):
    router = Key(str)
    port = Key(str)
    vc = Key(str)
    used_chunks = Key(int)


class Deadlock(Record):
    """A stalled network: no packet moved for ``stalled_cycles`` while packets were in flight."""

    cycle = Key(int)
    detected_by = Key(str, "watchdog or no-event-left")
    stalled_cycles = Key(int)
    packets_in_flight = Key(int)
    wait_cycle_found = Key(bool, "the blocked heads form a cycle of waits (a true deadlock)")
    wait_cycle_length = Key(int)
    blocked_vcs = Key(list_of(BlockedVc))


class InvariantError(Record):
    kind = Key(str)
    cycle = Key(int)
    detail = Key(str)


class LinkErrors(Record):
    """What the link protocol did over the run (``link_errors``)."""

    transmissions = Key(int)
    corrupted = Key(int)
    crc_escapes = Key(int)
    discarded = Key(int)
    retransmissions = Key(int)
    timeouts = Key(int)
    window_stalls = Key(int)
    duplicate_transmissions = Key(int)
    mode_switches = Key(int)
    down_link = Maybe(int, "transmissions into a link that was down")
    retransmitted_fraction = Key(float)
    crc_mismatch_links = Key(_list)
    trustworthy = Key(bool)


# ---------------------------------------------------------------- what limits a run

class Binding(Record):
    """The binding resource (``limits.binding``)."""

    kind = Key(str, "link, host-interface, or none (nothing was busy and nothing waited)")
    resource_class = Key(str, "the class of the busiest: a link class ('x', 'rank-3', 'up from L0') or 'host interface'")
    set = Key(str, "the resources at the top, e.g. 'the links into router (3,3,3) (6 of its 6 incoming links)'")
    busy = Key(float, "busy share of the window of the busiest of them")
    dominant_cause = Key(str, "the cause most blocked time went to ('none' when nothing waited)")


class ResourceClass(Record):
    """One class of resources (``limits.classes``): the links of an axis or rank, host interfaces, FIFOs."""

    kind = Key(str)
    name = Key(str)
    count = Key(int)
    busy_mean = Key(float)
    busy_max = Key(float)
    waited_per_cycle = Maybe(float, "host interfaces and FIFOs: packet-cycles waited for them per member and cycle (None for links)")
    depleted_mean = Key(float, "share of the window a head waited for downstream tokens with the link free")


class Limits(Record):
    """What limits a run (``r.limits``; a collective's or replay's ``run.limits``): docs/model.md."""

    summary = Key(str, "the binding resource in one sentence, with its numbers")
    binding = Key(Binding)
    blocked_cycles = Key(_dict, "queue-head cycles blocked after the warm-up, by cause (packets behind a head not counted)")
    blocked_share = Key(_dict, "each cause's share of all blocked time")
    blocked_per_packet_cycles = Key(float, "queue-head cycles blocked per packet delivered in the window")
    classes = Key(list_of(ResourceClass))
    busiest = Key(_list, "the busiest resources, most first (at most 8)")


# ---------------------------------------------------------------- collectives and replays

class PacketRun(Record):
    """The packet engine's run of a collective or replay (``c.run``)."""

    complete = Key(bool)
    interrupted = Key(bool)
    cycles = Key(int)
    cycle_ns = Key(float)
    packets_delivered = Key(int)
    link_utilization = Key(float)
    deadlock = Key(bool)
    invariant_error = Maybe(str)
    wall_seconds = Key(float)
    latency = Key(Latency)
    latency_distribution = Key(_list, "(bin's lower bound in cycles, packets)")
    counter_samples = Maybe(SamplingInfo)
    limits = Maybe(Limits, "what limited the network's part")
    critical_path = Maybe(_dict, "the schedule's critical path and the slowest ranks' time split (cycles)")


class Rounds(Record):
    """The flow model's rounds form (``flow.rounds``)."""

    time_seconds = Key(float)
    lockstep_seconds = Key(float)
    transfer_seconds = Key(float)
    latency_seconds = Key(float)
    copy_seconds = Key(float)
    stretches_estimated = Key(bool)
    rounds = Key(int)
    messages = Key(int)
    stretches = Key(int)
    solves = Key(int)
    largest_round = Key(int)
    one_hop = Key(bool)


class FlowRun(Record):
    """How the flow model timed a collective (``c.flow``)."""

    wall_seconds = Key(float)
    peak_memory_bytes = Key(int)
    rounds = Maybe(Rounds)
    interrupted = Key(bool)
