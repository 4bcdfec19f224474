"""The Python API's objects (issue 21, part 1): systems, experiments and
results with attributes and data frames. The command line is built on the
same calls; docs/python.md has examples (run by ``make test``).

Results are typed classes (:class:`RunResult`, :class:`CollectiveResult`,
:class:`ReplayResult`): their figures as typed attributes, their nested
objects as typed records (``r.sim``, ``r.setup``, ``r.latency``, a
collective's ``c.run``: :mod:`tofusim.records`), their tables as
:class:`Table` objects with ``to_arrow()`` and ``to_pandas()``, their
counter samples as :class:`tofusim.samples.CounterSamples`. They are
still the JSON objects the command line prints underneath (dicts, the
records too), so code that reads the keys keeps working.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from . import ConfigError
from .record import Record
from .records import BenchFields, CollectiveFields, Latency, ReplayFields, RunFields
from .samples import CounterSamples

__all__ = ["BenchResult", "CollectiveResult", "Experiment", "Latency", "ReplayResult", "Result", "RunResult", "System", "Table", "write_report"]


class System:
    """A system preset, optionally resized: ``System("k:8x8x8")``.

    >>> s = System("bgl:4x4x4")
    >>> s.nodes, s.diameter
    (64, 6)
    """

    def __init__(self, name: str) -> None:
        from . import arguments, topo

        self.name = arguments.text("name", name)
        #: Every topology metric (`tofusim topo NAME --json`).
        self.metrics: dict[str, Any] = topo(name)

    @property
    def nodes(self) -> int:
        return int(self.metrics["nodes"])

    @property
    def routers(self) -> int:
        return int(self.metrics["routers"])

    @property
    def links(self) -> int:
        return int(self.metrics["links"])

    @property
    def diameter(self) -> int:
        return int(self.metrics["diameter"])

    @property
    def average_hops(self) -> float:
        return float(self.metrics["average_hops"])

    @property
    def bisection_bandwidth_Bps(self) -> float:  # noqa: N802 - the unit is in the name
        return float(self.metrics["bisection_bandwidth_Bps"])

    @property
    def injection_per_node_Bps(self) -> float:  # noqa: N802
        return float(self.metrics["injection_per_node_Bps"])

    def __repr__(self) -> str:
        return f"System({self.name!r}: {self.nodes:,} nodes, diameter {self.diameter})"


class Experiment:
    """An experiment file's tables (docs/experiment.md), from a file, TOML
    text or keywords; validated by the same layer as ``tofusim run`` when it
    runs.

    >>> e = Experiment("bgl:4x4x4", workload={"pattern": "uniform", "load": 0.1}, run={"cycles": 4000, "warmup": 1000})
    >>> e.set("workload.load", 0.2)["workload"]["load"]
    0.2
    """

    def __init__(self, system: str | None = None, *, network: dict | None = None, router: dict | None = None,
                 routing: dict | None = None, workload: dict | None = None, run: dict | None = None,
                 link_errors: dict | None = None, faults: dict | None = None, file: str = "<experiment>") -> None:
        self.tables: dict[str, dict[str, Any]] = {}
        for name, t in (("network", network), ("router", router), ("routing", routing), ("workload", workload), ("run", run),
                        ("link_errors", link_errors), ("faults", faults)):
            if t is not None:
                if not isinstance(t, dict):
                    raise ConfigError(f"{file}: {name}: expected a table (a dict), got {type(t).__name__}")
                self.tables[name] = dict(t)
        if system is not None:
            self.tables.setdefault("network", {})["system"] = system
        self.file = file

    @classmethod
    def from_toml(cls, text: str, file: str = "<string>") -> Experiment:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{file}: invalid TOML: {e}") from None
        exp = cls(file=file)
        exp.tables = doc
        return exp

    @classmethod
    def from_file(cls, path: str | Path) -> Experiment:
        from . import _read_text

        return cls.from_toml(_read_text(path), str(path))

    def __getitem__(self, table: str) -> dict[str, Any]:
        return self.tables[table]

    def set(self, key: str, value: Any) -> Experiment:
        """A copy with ``key`` (``table.name``) set to ``value``."""
        *tables, name = key.split(".")
        if not tables or not name or not all(tables):
            raise ConfigError(f"{self.file}: {key}: expected TABLE.KEY, e.g. workload.load")
        e = Experiment(file=self.file)
        e.tables = copy.deepcopy(self.tables)
        t = e.tables
        for part in tables:
            t = t.setdefault(part, {})
            if not isinstance(t, dict):
                raise ConfigError(f"{self.file}: {key}: {part} is a value, not a table")
        t[name] = value
        return e

    def toml(self) -> str:
        import tomli_w

        try:
            return tomli_w.dumps(self.tables)
        except TypeError as e:
            raise ConfigError(f"{self.file}: a value TOML cannot hold (numbers, strings, booleans, lists and tables only): {e}") from None

    def __repr__(self) -> str:
        return f"Experiment({self.file}: {', '.join(self.tables)})"


class Table:
    """One table of a result: an Arrow table with ``to_arrow()`` and
    ``to_pandas()``, made when asked for (the result keeps the rows it was
    given, or the core's columns for counter samples).

    >>> t = Table.from_rows([{"cycle": 1000, "link_utilization": 0.5}])
    >>> t.columns, len(t)
    (['cycle', 'link_utilization'], 1)
    >>> float(t.to_pandas()["link_utilization"].iloc[0])
    0.5
    """

    def __init__(self, table: Any) -> None:
        self._table = table

    @classmethod
    def from_rows(cls, rows: list[dict[str, Any]], columns: list[str] | None = None) -> Table:
        import pyarrow as pa

        if not rows:
            return cls(pa.table({c: pa.array([], pa.null()) for c in (columns or [])}))
        return cls(pa.Table.from_pylist(rows))

    @property
    def columns(self) -> list[str]:
        return list(self._table.column_names)

    def __len__(self) -> int:
        return int(self._table.num_rows)

    def to_arrow(self) -> Any:
        """The ``pyarrow.Table``."""
        return self._table

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` (dictionary columns become categories)."""
        return self._table.to_pandas()

    def __repr__(self) -> str:
        return f"Table({len(self):,} rows: {', '.join(self.columns)})"


def _frame(rows: list[dict[str, Any]] | dict[str, list[Any]]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows)


def _histogram(dist: list[Any]) -> Table:
    return Table.from_rows([{"latency_cycles": float(b), "packets": int(n)} for b, n in dist], ["latency_cycles", "packets"])


class Result(Record):
    """A result: the JSON object the command line prints (kept as a dict,
    so code that reads its keys keeps working), with typed attributes for
    its figures and nested objects (:mod:`tofusim.records`), its tables as
    :class:`Table` (``to_arrow()``, ``to_pandas()``) and its counter
    samples as :attr:`samples`. A key no class declares (one a newer core
    adds) is readable as an attribute too; a key that is also a dict
    method's name (``items``, ``keys``, ...) is read with ``r["items"]``."""

    def __init__(self, data: dict[str, Any], samples: CounterSamples | None = None) -> None:
        super().__init__(data)
        #: Port and VC counter samples (empty unless the run sampled: ``run.counter_period``, ``counter_cycles=``).
        self.samples: CounterSamples = samples if samples is not None else CounterSamples(None)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no {name!r}; keys: {', '.join(sorted(self))}") from None

    def port_samples(self) -> Table:
        """Per port and sample: cycle, router, port, bytes, packets, busy, idle and depleted cycles (cumulative)."""
        return Table(self.samples.ports)

    def vc_samples(self) -> Table:
        """Per port, downstream VC and sample: cycle, router, port, vc, bytes, packets (cumulative), held_chunks."""
        return Table(self.samples.vcs)


class RunResult(RunFields, Result):
    """``tofusim.run``'s result (packet engine, or the flow model with ``model="flow"``)."""

    @property
    def latency_cycles(self) -> Latency:
        """:attr:`latency` (its earlier name)."""
        return self.latency

    def timeseries(self) -> Table:
        """One row per time-series window: cycle, accepted_load, link_utilization, packets_delivered, token_returns,
        unblocking_probability, blocked_token_returns, blocked_unblocking_probability, and each VC class's mean
        buffer fill (``fill_NAME``)."""
        names = sorted(self.get("vc_occupancy") or {})
        rows = []
        first = ("cycle", "accepted_load", "link_utilization", "packets_delivered", "token_returns", "unblocking_probability")
        for s in self.get("timeseries", []):
            # The documented order, then any other key the core gives.
            row = {k: s[k] for k in first if k in s}
            row.update({k: v for k, v in s.items() if k not in row and k != "vc_fill"})
            row.update({f"fill_{n}": f for n, f in zip(names, s.get("vc_fill", []))})
            rows.append(row)
        return Table.from_rows(rows, ["cycle", "accepted_load", "link_utilization"])

    def timeseries_frame(self) -> Any:
        """:meth:`timeseries` as a pandas DataFrame, without the VC fills."""
        rows = [{k: v for k, v in s.items() if k != "vc_fill"} for s in self.get("timeseries", [])]
        return _frame(rows)

    def latency_histogram(self) -> Table:
        """Packets by latency bin: the bin's lower bound in cycles, and its packets."""
        return _histogram(self.get("latency_distribution", []))

    def port_counters(self) -> Table:
        """Final per-port counters (the run must keep them: ``ports=True``)."""
        if not self.get("ports"):
            raise ConfigError("the run kept no per-port counters: run it with ports=True")
        return Table.from_rows(self["ports"])

    def ports_frame(self) -> Any:
        """:meth:`port_counters` as a pandas DataFrame."""
        return self.port_counters().to_pandas()

    def to_pandas(self) -> Any:
        """The run's scalar figures as a one-row DataFrame."""
        lat = self.get("latency") or {}
        row = {k: v for k, v in self.items() if isinstance(v, (int, float, str, bool)) or v is None}
        row.update({(f"latency_{k}_cycles" if k != "count" else "latency_packets"): v for k, v in lat.items()})
        return _frame([row])


class CollectiveResult(CollectiveFields, Result):
    """``tofusim.collective``'s result."""

    def latency_histogram(self) -> Table:
        """The collective's packets by latency (packet engine; empty on the flow model)."""
        return _histogram((self.get("run") or {}).get("latency_distribution", []))

    def steps(self) -> Table:
        """Every step of the schedule and when it finished: rank, node, step, kind, peer, bytes, finish_cycle
        (packet engine, run with ``steps=True``)."""
        st = self.get("steps")
        if not st:
            raise ConfigError("the collective kept no step times: run it with steps=True (packet engine)")
        import pyarrow as pa

        kind = pa.DictionaryArray.from_arrays(pa.array(st["kind"], pa.int16()), pa.array(st["kinds"], pa.string()))
        cols = {k: pa.array(st[k]) for k in ("rank", "node", "step")}
        return Table(pa.table({**cols, "kind": kind, "peer": pa.array(st["peer"]), "bytes": pa.array(st["bytes"]),
                               "finish_cycle": pa.array(st["finish_cycle"])}))

    def per_rank(self) -> Table:
        """Per rank: its node, steps, bytes sent and the cycle its last step finished (from :meth:`steps`)."""
        import pyarrow.compute as pc

        t = self.steps().to_arrow()
        sent = t.filter(pc.equal(t["kind"].cast("string"), "send"))
        ends = t.group_by("rank").aggregate([("node", "min"), ("step", "count"), ("finish_cycle", "max")])
        bytes_sent = {r: b for r, b in zip(*sent.group_by("rank").aggregate([("bytes", "sum")]).select(["rank", "bytes_sum"]).to_pydict().values())}
        ends = ends.rename_columns(["rank", "node", "steps", "end_cycle"]).sort_by("rank")
        import pyarrow as pa

        return Table(ends.append_column("bytes_sent", pa.array([int(bytes_sent.get(r, 0)) for r in ends["rank"].to_pylist()], pa.uint64())))

    def to_pandas(self) -> Any:
        return _frame([{k: v for k, v in self.items() if isinstance(v, (int, float, str, bool)) or v is None}])


class ReplayResult(ReplayFields, Result):
    """``tofusim.replay``'s result."""

    @property
    def measured_seconds(self) -> float:
        """The trace's own time (0 when it has none)."""
        return float(self.get("measured_seconds") or 0.0)

    def per_rank(self) -> Table:
        """Per rank: node, end, compute, point-to-point, collective and waiting seconds."""
        return Table.from_rows(self["per_rank"])

    def per_rank_frame(self) -> Any:
        return self.per_rank().to_pandas()

    def busiest_links(self) -> Table:
        return Table.from_rows(self.get("busiest_links") or [])

    def busiest_links_frame(self) -> Any:
        return self.busiest_links().to_pandas()

    def to_pandas(self) -> Any:
        return self.per_rank_frame()


class BenchResult(BenchFields, Result):
    """``tofusim.mpi_bench``'s result: an IMB table (``rows``)."""

    def table(self) -> Table:
        """The rows: bytes, repetitions, t_min_us, t_max_us, t_avg_us, mbytes_per_sec, algorithm, ..."""
        return Table.from_rows([dict(r) for r in self.rows], ["bytes", "repetitions", "t_min_us", "t_max_us", "t_avg_us"])

    def to_pandas(self) -> Any:
        return self.table().to_pandas()

    def imb_text(self) -> str:
        """The table as IMB-MPI1 prints it (its header lines, then one row per size)."""
        from .imb import format_benchmark

        return format_benchmark(self)


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Writes the interactive HTML report of ``run_dir`` — a directory
    written by ``tofusim run``, ``coll``, ``replay``, ``sweep`` or
    ``reproduce`` with ``--out`` — to ``out`` (default
    ``run_dir/report.html``) and returns its path: ``tofusim report``
    (docs/report.md). One self-contained file that opens offline: the
    summary and setup, latency distribution, throughput over time,
    link-utilisation heat maps laid out on the topology with a time slider
    over the counter samples, the hottest links and stalled ports, the VC
    buffers and, for a collective, its schedule's progress animated over
    the network.

    A section whose input the directory lacks is replaced by one line
    naming the option that writes it; a directory that is not a tofusim
    output directory raises :class:`ConfigError`.

    >>> import tempfile
    >>> try:
    ...     write_report(tempfile.mkdtemp())
    ... except ConfigError as e:
    ...     print(str(e).split(": ", 1)[1][:30])
    not a tofusim output directory
    """
    from .report import write_report as _write

    for name, value in (("run_dir", run_dir), ("out", out)):
        if not (isinstance(value, (str, Path)) or (name == "out" and value is None)) or "\0" in str(value):
            raise ConfigError(f"<arguments>: {name}: expected a directory path, got {value!r:.60}")
        try:
            str(value).encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(f"<arguments>: {name}: expected a directory path, got {value!r:.60}") from None
    return _write(run_dir, out)
