"""The Python API's objects (issue 21, part 1): systems, experiments and
results with attributes and data frames. The command line is built on the
same calls; docs/python.md has examples (run by ``make test``).

Results are dicts (the JSON the command line prints, so existing code
keeps working) whose keys are also attributes, with ``to_pandas`` views
of their tables.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from . import ConfigError


class System:
    """A system preset, optionally resized: ``System("k:8x8x8")``.

    >>> s = System("bgl:4x4x4")
    >>> s.nodes, s.diameter
    (64, 6)
    """

    def __init__(self, name: str) -> None:
        from . import topo

        self.name = name
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
                 file: str = "<experiment>") -> None:
        self.tables: dict[str, dict[str, Any]] = {}
        for name, t in (("network", network), ("router", router), ("routing", routing), ("workload", workload), ("run", run)):
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
        e = cls(file=file)
        e.tables = doc
        return e

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


def _frame(rows: list[dict[str, Any]] | dict[str, list[Any]]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows)


class Result(dict):
    """A result: the JSON object the command line prints, with its keys also
    readable as attributes (``r.accepted_load``). A key that is also a dict
    method's name (``items``, ``keys``, ``values``, ``get``, ``copy``, ...)
    is read with ``r["items"]``; table views are ``*_frame()`` methods."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no {name!r}; keys: {', '.join(sorted(self))}") from None


class RunResult(Result):
    """``tofusim.run``'s result."""

    def timeseries_frame(self) -> Any:
        """Samples over the run (one row per sample): a pandas DataFrame."""
        rows = [{k: v for k, v in s.items() if k != "vc_fill"} for s in self.get("timeseries", [])]
        return _frame(rows)

    def latency_histogram(self) -> Any:
        """Packets by latency bin (lower bound in cycles, count)."""
        return _frame([{"latency_cycles": b, "packets": n} for b, n in self.get("latency_distribution", [])])

    def ports_frame(self) -> Any:
        """Per-port counters (the run must keep them: ``ports=True``)."""
        if not self.get("ports"):
            raise ConfigError("the run kept no per-port counters: run it with ports=True")
        return _frame(self["ports"])

    def to_pandas(self) -> Any:
        """The run's scalar figures as a one-row DataFrame."""
        lat = self.get("latency") or {}
        row = {k: v for k, v in self.items() if isinstance(v, (int, float, str, bool)) or v is None}
        row.update({(f"latency_{k}_cycles" if k != "count" else "latency_packets"): v for k, v in lat.items()})
        return _frame([row])


class CollectiveResult(Result):
    """``tofusim.collective``'s result."""

    def to_pandas(self) -> Any:
        return _frame([{k: v for k, v in self.items() if isinstance(v, (int, float, str, bool)) or v is None}])


class ReplayResult(Result):
    """``tofusim.replay``'s result."""

    def per_rank_frame(self) -> Any:
        """Per rank: node, end, compute, point-to-point, collective and waiting seconds."""
        return _frame(self["per_rank"])

    def busiest_links_frame(self) -> Any:
        return _frame(self["busiest_links"])

    def to_pandas(self) -> Any:
        return self.per_rank_frame()


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Writes the interactive HTML report of ``run_dir`` — a directory
    written by ``tofusim run``, ``coll``, ``replay``, ``sweep`` or
    ``reproduce`` with ``--out`` — to ``out`` (default
    ``run_dir/report.html``) and returns its path: ``tofusim report``
    (docs/report.md). One self-contained file that opens offline: the
    summary and setup, latency distribution, throughput over time,
    link-utilisation heat maps laid out on the topology with a time slider
    over the counter samples, the hottest links and stalled ports and, for
    a collective, its schedule's progress animated over the network.

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

    return _write(run_dir, out)
