#!/usr/bin/env python3
"""Writes python/tofusim/records.py (and docs/result-schema.json) from the core's result schema
(``tofusim._core.result_schema()``: JSON Schema generated from the Rust
types that write each result, their doc comments as descriptions).

    .venv/bin/python tools/gen_records.py          # rewrite records.py
    .venv/bin/python tools/gen_records.py --check  # exit 1 if it is stale

A test (tests/test_python_api.py) runs the check, so the Python records
cannot drift from the Rust types. What is decided here, not in Rust:
the Python name of each record, which Rust types one Python record
stands for (a run's result is the packet engine's or the flow model's),
the keys Python itself adds (the files a run directory holds) and the
keys a result class reads through a method instead (``timeseries()``).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "python" / "tofusim" / "records.py"
#: The schema itself, for readers of the JSON who do not use Python.
SCHEMA_OUT = ROOT / "docs" / "result-schema.json"


@dataclass
class Spec:
    """One Python record: the Rust types (schema definitions) it stands
    for, each with the model or engine whose results have it."""

    name: str
    defs: list[tuple[str, str]]
    doc: str = ""
    #: Keys Python adds: (name, conversion, doc).
    extra: list[tuple[str, str, str]] = field(default_factory=list)
    #: Keys the result class reads through a method or property instead.
    skip: tuple[str, ...] = ()


# Nested records first, each before the records that hold it.
SPECS = [
    Spec("Latency", [("LatencySummary", "packet engine"), ("Latency", "flow model")],
         "Latency: count, mean, median, 99th percentile and maximum (cycles, or ns in ``latency_ns``)."),
    Spec("PartitionLoad", [("PartitionLoad", "")]),
    Spec("Partitions", [("PartitionInfo", "")]),
    Spec("SimInfo", [("SimInfo", "packet engine"), ("FlowSim", "flow model")], "What the simulator spent: ``r.sim``."),
    Spec("SamplingInfo", [("SamplingInfo", "")],
         extra=[("files", "_list", "the Parquet files written (with --out)")]),
    Spec("RouterSetup", [("RouterParams", "")], "The router as run (``setup.router``: docs/experiment.md, ``[router]``)."),
    Spec("RunSetup", [("RunParams", "")], "The ``[run]`` table as run (``setup.run``)."),
    Spec("Faults", [("Faults", "")]),
    Spec("FaultEvent", [("FaultEvent", "")]),
    Spec("Setup", [("Setup", "")]),
    Spec("JsqStats", [("JsqReport", "")]),
    Spec("Sample", [("Sample", "")]),
    Spec("PortRecord", [("PortRecord", "")]),
    Spec("BlockedVc", [("BlockedVc", "")]),
    Spec("Deadlock", [("Deadlock", "")]),
    Spec("InvariantError", [("InvariantError", "")]),
    Spec("LinkErrors", [("LinkErrorReport", "")]),
    Spec("Binding", [("Binding", "")], "The binding resource (``limits.binding``)."),
    Spec("ResourceClass", [("ResourceClass", "")]),
    Spec("BusyResource", [("BusyResource", "")]),
    Spec("Limits", [("Limits", "")]),
    Spec("Segment", [("Segment", "")]),
    Spec("RankTime", [("RankTime", "")]),
    Spec("CriticalPath", [("CriticalPath", "")]),
    Spec("PacketRun", [("RunSummary", "")], "The packet engine's run of a collective or replay (``c.run``)."),
    Spec("Rounds", [("RoundsTimed", "")], "The flow model's rounds form (``flow.rounds``)."),
    Spec("FlowRun", [("FlowSummary", "")], "How the flow model timed a collective (``c.flow``)."),
    Spec("CollectiveSettings", [("Settings", "")]),
    Spec("GivenTrees", [("GivenTrees", "")]),
    Spec("SubCommunicators", [("SubCommunicators", "")]),
    Spec("StepTimes", [("StepTimes", "")]),
    Spec("RankTimes", [("RankTimes", "")]),
    Spec("LinkLoad", [("LinkLoad", "")]),
    Spec("MpiSoftware", [("MpiSoftware", "")]),
    Spec("BenchRow", [("BenchRow", "")], "One row of an IMB table (``r.rows``)."),
    # The results' own keys: the base classes of tofusim.api's results.
    Spec("RunFields", [("PacketRunReport", "packet engine"), ("FlowRunReport", "flow model")],
         "The keys of ``tofusim.run``'s result (packet engine, or the flow model with ``model=\"flow\"``).",
         extra=[("pingpong", "_dict", "a ping-pong workload's rounds"), ("broadcast", "_dict", "a broadcast workload's result")],
         skip=("timeseries",)),
    Spec("CollectiveFields", [("CollectiveResult", "")], "The keys of ``tofusim.collective``'s result.", skip=("steps",)),
    Spec("BenchFields", [("BenchResult", "")], "The keys of ``tofusim.mpi_bench``'s result."),
    Spec("ReplayFields", [("TraceReplayReport", "")], "The keys of ``tofusim.replay``'s result.",
         extra=[("machine", "_dict", "the recording machine's model (system='recorded')")],
         skip=("per_rank", "busiest_links", "measured_seconds")),
]

#: Keys that are also dict methods' names cannot be attributes (read them with r["key"]).
DICT_NAMES = set(dir(dict))


def _prose(text: str) -> str:
    """A Rust doc comment as one line of prose: its first paragraph,
    intra-doc links as plain code."""
    first = text.strip().split("\n\n")[0]
    first = re.sub(r"\[`([^`]*)`\](\([^)]*\))?", r"`\1`", first)
    first = re.sub(r"\s+", " ", first)
    return first.replace("`", "``").replace("````", "``")


class Generator:
    def __init__(self, schema: dict) -> None:
        self.defs: dict = schema["$defs"]
        self.python_of = {d: s.name for s in SPECS for d, _ in s.defs}
        missing = [d for s in SPECS for d, _ in s.defs if d not in self.defs]
        if missing:
            raise SystemExit(f"gen_records: the schema has no {', '.join(missing)}")

    def _resolve(self, prop: dict) -> tuple[dict, bool]:
        """The property's schema without null, and whether it may be null."""
        nullable = False
        if "anyOf" in prop:
            alts = [a for a in prop["anyOf"] if a.get("type") != "null"]
            nullable = len(alts) < len(prop["anyOf"])
            if len(alts) == 1:
                prop = {**alts[0], **{k: v for k, v in prop.items() if k not in ("anyOf",)}}
        t = prop.get("type")
        if isinstance(t, list):
            nullable = nullable or "null" in t
            rest = [x for x in t if x != "null"]
            prop = {**prop, "type": rest[0] if len(rest) == 1 else rest}
        return prop, nullable

    def _conv(self, prop: dict) -> str:
        if "$ref" in prop:
            name = prop["$ref"].rsplit("/", 1)[1]
            if name in self.python_of:
                return self.python_of[name]
            target = self.defs[name]
            kinds = {a.get("type") for a in target.get("oneOf", [])}
            if kinds == {"string"}:
                return "str"
            if kinds == {"object"}:
                return "_dict"
            return self._conv(target)
        t = prop.get("type")
        if t == "array":
            item = prop.get("items")
            if isinstance(item, dict) and "$ref" in item and item["$ref"].rsplit("/", 1)[1] in self.python_of:
                return f"list_of({self.python_of[item['$ref'].rsplit('/', 1)[1]]})"
            return "_list"
        return {"integer": "int", "number": "float", "boolean": "bool", "string": "str", "object": "_dict"}.get(t, "_value")

    def record(self, spec: Spec) -> str:
        props: dict[str, list] = {}
        order: list[str] = []
        for d, label in spec.defs:
            schema = self.defs[d]
            required = set(schema.get("required", []))
            for key, prop in schema.get("properties", {}).items():
                resolved, nullable = self._resolve(prop)
                if key not in props:
                    props[key] = []
                    order.append(key)
                props[key].append((label, self._conv(resolved), key in required and not nullable, prop.get("description", "")))
        doc = spec.doc or _prose(self.defs[spec.defs[0][0]].get("description", "")) or f"``{spec.name}``."
        out = [f"class {spec.name}(Record):", f'    """{doc}"""', ""]
        for key in order:
            if key in spec.skip:
                continue
            seen = props[key]
            convs = {c for _, c, _, _ in seen}
            conv = convs.pop() if len(convs) == 1 else "_value"
            always = len(seen) == len(spec.defs) and all(r for _, _, r, _ in seen)
            text = next((_prose(d) for _, _, _, d in seen if d), "")
            if len(seen) < len(spec.defs):
                only = ", ".join(label for label, _, _, _ in seen if label)
                text = f"{text} ({only} only)" if text else f"({only} only)"
            if key in DICT_NAMES:
                out.append(f"    # {key!r} is a dict method's name: read it as r[{key!r}].")
                continue
            kind = "Key" if always else "Maybe"
            args = conv + (f", {json.dumps(text, ensure_ascii=False)}" if text else "")
            line = f"    {key} = {kind}({args})"
            if re.search("[A-Z]", key):
                line += "  # noqa: N815 - the unit is in the name"
            out.append(line)
        for key, conv, text in spec.extra:
            if key not in props:
                out.append(f"    {key} = Maybe({conv}, {json.dumps(text, ensure_ascii=False)})")
        return "\n".join(out)


HEADER = '''"""The records of a result, generated from the core's result schema
(the Rust types that write each result; ``tofusim._core.result_schema()``)
by tools/gen_records.py: do not edit, run the tool. A test regenerates
this file, so it cannot drift from the core.

Each record is a dict (the JSON object) whose keys are typed attributes:
:class:`~tofusim.record.Key` (always there) or
:class:`~tofusim.record.Maybe` (``None`` when null or absent). The
machinery is :mod:`tofusim.record`.
"""

# ruff: noqa: E501
from __future__ import annotations

from .record import Key, Maybe, Record, _dict, _list, _value, list_of

__all__ = [{names}]
'''


def generate(schema: dict) -> str:
    g = Generator(schema)
    names = ", ".join(f'"{s.name}"' for s in sorted(SPECS, key=lambda s: s.name)) + ', "Key", "Maybe", "Record"'
    parts = [HEADER.format(names=names).rstrip("\n")]
    parts += [g.record(s) for s in SPECS]
    return "\n\n\n".join(parts) + "\n"


def schema_text(schema: dict) -> str:
    """The schema as docs/result-schema.json holds it."""
    return json.dumps(schema, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def load_core():
    """The compiled core alone (not the package, whose records this writes:
    a new record would not import until it exists)."""
    import importlib.machinery
    import importlib.util

    [path] = sorted(OUT.parent.glob("_core*.so"))[:1] or [None]
    if path is None:
        raise SystemExit(f"gen_records: no compiled core in {OUT.parent}: run make core")
    loader = importlib.machinery.ExtensionFileLoader("tofusim._core", str(path))
    spec = importlib.util.spec_from_loader("tofusim._core", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def main() -> int:
    _core = load_core()
    schema = json.loads(_core.result_schema())
    files = {OUT: generate(schema), SCHEMA_OUT: schema_text(schema)}
    if "--check" in sys.argv[1:]:
        stale = [str(p) for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"{p} is stale: run tools/gen_records.py", file=sys.stderr)
        return 1 if stale else 0
    for p, text in files.items():
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
