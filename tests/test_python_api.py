"""The Python API (issue 21, part 1): the examples of docs/python.md and
of the API module's docstrings run as doctests; its boundary refuses
wrong arguments by name (issue 37)."""

import doctest
import sys

import pytest
from conftest import ROOT

import tofusim


def test_the_documented_examples_run():
    r = doctest.testfile(str(ROOT / "docs" / "python.md"), module_relative=False,
                         optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert r.failed == 0 and r.attempted > 10, r


def test_the_api_docstrings_run():
    import tofusim.api

    r = doctest.testmod(tofusim.api, optionflags=doctest.ELLIPSIS)
    assert r.failed == 0 and r.attempted >= 4, r


def test_the_records_and_samples_docstrings_run():
    import tofusim.record
    import tofusim.samples

    for module in (tofusim.record, tofusim.samples):
        r = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert r.failed == 0 and r.attempted >= 2, (module.__name__, r)


def test_the_records_are_generated_from_the_cores_result_types():
    """python/tofusim/records.py is what tools/gen_records.py writes from
    the core's result schema (the Rust types): it cannot drift from them."""
    import importlib.util
    import json
    from pathlib import Path

    from tofusim import _core

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("gen_records", root / "tools" / "gen_records.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_records"] = gen  # its dataclasses look their module up
    spec.loader.exec_module(gen)
    schema = json.loads(_core.result_schema())
    assert (root / "python" / "tofusim" / "records.py").read_text(encoding="utf-8") == gen.generate(schema), \
        "records.py is stale: run .venv/bin/python tools/gen_records.py"
    assert (root / "docs" / "result-schema.json").read_text(encoding="utf-8") == gen.schema_text(schema), \
        "docs/result-schema.json is stale: run .venv/bin/python tools/gen_records.py"
    assert tofusim.result_schema() == schema
    # Every result's type is in the schema, with its documentation.
    for name in ("PacketRunReport", "FlowRunReport", "CollectiveResult", "TraceReplayReport"):
        assert schema["$defs"][name]["properties"], name
    assert "GB/s" in schema["$defs"]["PacketRunReport"]["properties"]["injection_GBps_per_node"]["description"]


def _results(tmp_path):
    """A result of every kind and model, as the core writes them."""
    import tofusim
    from tofusim.trace import synth

    e = tofusim.Experiment("bgl:4x4x4", workload={"pattern": "uniform", "load": 0.1},
                           run={"cycles": 6000, "warmup": 1500, "seed": 1, "counter_period": 1500})
    synth.write(str(tmp_path / "trace"), 8, iterations=2, halo_bytes=4096)
    trace = str(tmp_path / "trace")
    return {
        "run": tofusim.run(e),
        "split run": tofusim.run(e, threads=2),
        "flow run": tofusim.run(e, model="flow"),
        "collective": tofusim.collective("allreduce", "ring", 64 * 1024, "bgl:2x2x2", steps=True, counter_cycles=1000),
        "flow collective": tofusim.collective("allreduce", "ring", 64 * 1024, "bgl:2x2x2", model="flow"),
        "rounds collective": tofusim.collective("allreduce", "ring", 1 << 20, "k:2x2x2", model="flow-rounds"),
        "replay": tofusim.replay(trace, "bgl:2x2x2", counter_cycles=1000),
        "flow replay": tofusim.replay(trace, "bgl:2x2x2", model="flow"),
    }


def test_results_and_their_nested_objects_are_typed_records(tmp_path):
    """Every attribute a result class declares reads with its declared type
    on what the core returns, every key the core writes is declared (or
    read by a table method), and the records are still the JSON objects."""
    import json

    from tofusim.records import Record

    def declared(cls):
        return {name: f for klass in reversed(cls.__mro__) for name, f in vars(klass).items() if hasattr(f, "conv")}

    def check(obj, where):
        fields = declared(type(obj))
        methods = {n for n in dir(type(obj)) if not n.startswith("_")} - set(fields)
        undeclared = set(obj) - set(fields) - methods
        assert not undeclared, f"{where}: keys the core writes that {type(obj).__name__} does not declare: {sorted(undeclared)}"
        for name, f in fields.items():
            if name not in obj:
                assert type(f).__name__ == "Maybe", f"{where}.{name}: declared always there, missing"
                continue
            v = getattr(obj, name)
            if v is None:
                assert type(f).__name__ == "Maybe", f"{where}.{name}: declared always there, null"
                continue
            kind, many = f.nested()
            expected = list if many else kind or (f.conv if isinstance(f.conv, type) else (list, dict))
            assert isinstance(v, expected), f"{where}.{name}: {type(v).__name__}, declared {expected}"
            assert v == obj[name] if not isinstance(v, float) else v == float(obj[name])
            for item in (v if many else [v]):
                if isinstance(item, Record):
                    assert obj[name] is v or many, f"{where}.{name}: the record is not the one the result holds"
                    check(item, f"{where}.{name}")

    for name, r in _results(tmp_path).items():
        check(r, name)
        # Still the JSON object: it round-trips.
        assert json.loads(json.dumps(r)) == r
    r = _results(tmp_path / "again")["run"]
    assert r.sim.partitions is None and r.setup.router.vc_buffer_bytes == 1024 and r.setup.run.counter_cycles == 1500
    assert r.counter_samples.samples == 3 and r.counter_samples["samples"] == 3 and r.latency.p99 >= r.latency.p50
    assert _results(tmp_path / "split")["split run"].sim.partitions.partitions[1].routers == 32


# Issue 37: wrong types and ranges at the Python API's boundary come back as
# ConfigError naming the argument (never a bare TypeError, OverflowError,
# ValueError or UnicodeEncodeError from the core, nor a traceback from
# inside a run); errors from Python name <arguments>, not <command line>.
_SMALL = '[network]\nsystem = "bgl:2x2x2"\n'
_LONG = '[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 200000\n'


@pytest.mark.parametrize("call,needle", [
    (lambda: tofusim.run(42), "text"),
    (lambda: tofusim.run(None), "text"),
    (lambda: tofusim.System(b"k"), "name"),
    (lambda: tofusim.System("k\udc80"), "lone surrogates"),
    (lambda: tofusim.run(_SMALL, threads=2**70), "threads"),
    (lambda: tofusim.run(_SMALL, threads="2"), "threads"),
    (lambda: tofusim.run(_SMALL, max_memory=-1), "max_memory"),
    (lambda: tofusim.run(_SMALL, notice=lambda: None), "notice"),
    (lambda: tofusim.run(_LONG, progress=lambda f: 1 / 0), "progress: the function raised ZeroDivisionError"),
    (lambda: tofusim.coll("allreduce", "ring", "1 parsec", "bgl:2x2x2"), "size_bytes"),
    (lambda: tofusim.coll("allreduce", "ring", 8, "bgl:2x2x2", counter_cycles=-5), "counter_cycles"),
    (lambda: tofusim.coll("allreduce", "ring", 8, "nope"), "system"),
    (lambda: tofusim.replay("no-trace", "k:1x1x1", order=[-1]), "order[0]"),
    (lambda: tofusim.collective_schedule("allreduce", "ring", 10**8, 8), "messages"),
    (lambda: tofusim.collective_schedule("allreduce", "ring", 2**40, 8), "ranks"),
])
def test_the_api_refuses_wrong_arguments_naming_them(call, needle):
    with pytest.raises(tofusim.ConfigError) as e:
        call()
    assert needle in str(e.value) and str(e.value).startswith("<arguments>"), str(e.value)


def test_the_api_takes_sizes_with_units_as_the_command_line_does():
    assert tofusim.coll("allreduce", "ring", "1KiB", "bgl:2x2x2")["size_bytes"] == 1024


def test_the_mapping_and_comm_docstrings_run():
    """The API of the commands that had none (issue 36: the command line
    calls these functions; their examples run)."""
    import tofusim.comm
    import tofusim.mapping

    for module in (tofusim.mapping, tofusim.comm, tofusim):
        r = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert r.failed == 0 and r.attempted >= 1, (module.__name__, r)


@pytest.mark.parametrize("call, name", [
    (lambda: tofusim.check(), "system / text"),
    (lambda: tofusim.check("bgl:4x4x4", text="[network]"), "system / text"),
    (lambda: tofusim.check(42), "system"),
    (lambda: tofusim.check("bgl:4x4x4", routing=3), "routing"),
    (lambda: tofusim.network_layout(), "system / text"),
    (lambda: __import__("tofusim.mapping").mapping.alloc("k", jobs="many"), "jobs"),
    (lambda: __import__("tofusim.mapping").mapping.rmatt("4x4", "0 1 8\n", seed=-1), "seed"),
    (lambda: __import__("tofusim.mapping").mapping.order_costs("4x4", "0 1 8\n", [0, "x"]), "order[1]"),
    (lambda: __import__("tofusim.comm").comm.pingpong("k:2x3x2", 0, 1, "8 parsecs"), "size_bytes"),
    (lambda: __import__("tofusim.comm").comm.transfers("k:2x3x2", [(0, 1, 8)]), "sends"),
    (lambda: __import__("tofusim.comm").comm.transfers("k:2x3x2", [(0.0, 1, 8, 0)]), "sends[0] source"),
    (lambda: __import__("tofusim.comm").comm.transfers("k:2x3x2", [(0, 1, 8.9, 0)]), "sends[0] bytes"),
    (lambda: __import__("tofusim.mapping").mapping.alloc("k", load="0.9"), "load"),
    (lambda: __import__("tofusim.comm").comm.hardware_barrier_us("k:2x3x2", graph=None), "graph"),
])
def test_the_new_api_functions_refuse_by_name(call, name):
    with pytest.raises(tofusim.ConfigError, match=r"<arguments>: " + __import__("re").escape(name)):
        call()


def test_the_core_refuses_ranges_the_same_from_python_and_the_command_line():
    from tofusim import mapping

    with pytest.raises(tofusim.ConfigError, match="<arguments>.*iterations"):
        mapping.rmatt("4x4", "0 1 8\n", iterations=0)
    with pytest.raises(tofusim.ConfigError, match="<arguments>.*not a Tofu system"):
        mapping.alloc("bgl:4x4x4")
    with pytest.raises(tofusim.ConfigError, match=r"<arguments>: --load: expected an offered load in \(0, 10\]"):
        mapping.alloc("k:2x3x2", 10, float("nan"))
    flows = [line.split() for line in mapping.cg_comm_list(4, "S").splitlines() if not line.startswith("#")]
    assert len(flows) == 6 and all(int(b) > 0 for _, _, b in flows)
