"""The flow model from the command line (issue 7): `tofusim coll --model
flow` (event by event, and in lockstep rounds on the full K computer and
Fugaku), `tofusim run --model flow`, and their errors."""

import json

import pytest

from conftest import ROOT

GIB = 2**30


def coll(run, *args):
    r = run("coll", *args, "--json")
    assert r.code == 0, r.err
    return r.json()


def test_flow_collective_matches_the_packet_engine_on_a_small_tofu(run):
    args = ["allreduce", "--algo", "ring", "--size", "1MiB", "--system", "k:2x1x2"]
    packet = coll(run, *args)
    flow = coll(run, *args, "--model", "flow")
    assert packet["model"] == "packet" and flow["model"] == "flow-events"
    assert flow["run"] is None and flow["flow"]["rounds"] is None
    assert abs(flow["time_seconds"] / packet["time_seconds"] - 1) < 0.05
    rounds = coll(run, *args, "--model", "flow-rounds")
    assert rounds["model"] == "flow-rounds" and rounds["flow"]["rounds"]["stretches"] == 2
    assert abs(rounds["time_seconds"] / flow["time_seconds"] - 1) < 0.15


FULL_MACHINE_CASES = [
    ("allreduce", "ring", "16MiB"), ("allreduce", "recursive-doubling", "16MiB"),
    ("allreduce", "trinaryx3", "16MiB"), ("alltoall", "bruck", "1KiB"),
]


# All four on K; on Fugaku the two cheap ones (its recursive doubling and
# Bruck take 11 and 17 s: `make bench` runs them, BENCHMARKS.md).
@pytest.mark.parametrize("system,op,algo,size",
                         [("k", *c) for c in FULL_MACHINE_CASES]
                         + [("fugaku", *c) for c in FULL_MACHINE_CASES if c[1] in ("ring", "trinaryx3")])
def test_full_machines_on_the_flow_model(run, system, op, algo, size):
    r = coll(run, op, "--algo", algo, "--size", size, "--segment", "16KiB", "--system", system, "--model", "flow")
    assert r["processes"] == {"k": 82_944, "fugaku": 158_976}[system]
    assert r["model"] == "flow-rounds" and r["time_seconds"] > 0
    f = r["flow"]
    assert f["peak_memory_bytes"] < 8 * GIB
    k = f["rounds"]
    assert k["messages"] == r["messages"] and k["rounds"] >= 17
    # Every transfer is slower than the links alone would allow.
    assert k["transfer_seconds"] > 0 and k["latency_seconds"] > 0
    if algo == "ring":
        assert k["stretches"] == 2 and k["rounds"] == 2 * (r["processes"] - 1)
    if algo == "trinaryx3":
        assert k["one_hop"] and r["bandwidth_Bps"] > 3e9


def test_schedules_too_large_to_hold_are_refused_with_the_way_out(run):
    r = run("coll", "allreduce", "--algo", "ring", "--size", "16MiB", "--system", "k")
    assert r.code == 2 and "--model flow" in r.err and "Traceback" not in r.err
    r = run("coll", "allreduce", "--algo", "binomial", "--size", "1MiB", "--system", "k:2x1x2", "--model", "flow-rounds")
    assert r.code == 2 and "rounds form" in r.err
    r = run("coll", "allreduce", "--algo", "ring", "--size", "1MiB", "--system", "k:2x1x2", "--model", "flow-rounds", "--verify")
    assert r.code == 2 and "verify" in r.err


EXPERIMENTS = {
    "uniform": '[network]\nsystem = "bgl:8x8x8"\n[workload]\npattern = "uniform"\nload = 0.12\n[run]\ncycles = 20000\nwarmup = 4000\n',
    "alltoall": '[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "alltoall"\nmessage_bytes = 4096\n',
    "hot-region": '[network]\nsystem = "bgl:8x8x8"\n[workload]\npattern = "hot-region"\nload = 0.1\nhot_fraction = 0.25\nregion_origin = [0, 0, 0]\nregion_shape = [4, 4, 4]\n[run]\ncycles = 20000\nwarmup = 4000\n',
    "pingpong": '[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "pingpong"\nhops = 3\nmessage_bytes = 8192\nrepetitions = 3\n',
}


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_run_on_the_flow_model_is_close_to_the_packet_engine(run, tmp_path, name):
    f = tmp_path / f"{name}.toml"
    f.write_text(EXPERIMENTS[name])
    p = run("run", str(f), "--json")
    q = run("run", str(f), "--json", "--model", "flow")
    assert p.code == 0 and q.code == 0, p.err + q.err
    packet, flow = p.json(), q.json()
    assert flow["model"] == "flow" and flow["complete"]
    # Measured (docs/validation.md): all-to-all −6%, ping-pong +16% (the
    # engine also routes X-Y-X, which no dimension order does), uniform and
    # hot region within 0.2-5% of the accepted load and link utilisation.
    if packet["completion_cycles"] is not None:
        err = flow["completion_cycles"] / packet["completion_cycles"] - 1
        assert abs(err) < 0.2, err
    else:
        assert abs(flow["accepted_load"] / packet["accepted_load"] - 1) < 0.05
        assert abs(flow["link_utilization"] / packet["link_utilization"] - 1) < 0.08


def test_run_flow_errors(run, tmp_path):
    f = tmp_path / "fill.toml"
    f.write_text('[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "line-fill"\naxis = 0\nmessage_bytes = 1024\n')
    r = run("run", str(f), "--model", "flow")
    assert r.code == 2 and "workload.pattern" in r.err and "Traceback" not in r.err
    g = tmp_path / "u.toml"
    g.write_text(EXPERIMENTS["uniform"])
    r = run("run", str(g), "--model", "flow", "--threads", "2")
    assert r.code == 2 and "--threads" in r.err
    d = tmp_path / "df.toml"
    d.write_text((ROOT / "examples/experiments/dragonfly-adversarial.toml").read_text().replace('"valiant"', '"ugal"'))
    r = run("run", str(d), "--model", "flow")
    assert r.code == 2 and "routing.algorithm" in r.err
