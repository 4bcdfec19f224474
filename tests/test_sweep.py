"""Sweeps (issue 21, part 2): one command for a latency-vs-load curve or an
algorithm-by-size comparison; a tidy table (CSV, Parquet), a plot, and
saturated points said to be so."""

import json

import pandas as pd
import pytest

EXP = """[network]
system = "bgl:4x4x4"
[workload]
pattern = "uniform"
load = 0.1
[run]
cycles = 12000
warmup = 3000
seed = 1
"""


@pytest.fixture
def exp(tmp_path):
    p = tmp_path / "uniform.toml"
    p.write_text(EXP)
    return p


def test_a_load_sweep_marks_saturation(run, exp, tmp_path):
    out = tmp_path / "sw"
    r = run("sweep", str(exp), "--vary", "workload.load=0.1:0.7:0.3", "--vary", "routing.algorithm=dor,adaptive",
            "--jobs", "2", "--out", str(out), "--json")
    assert r.code == 0, r.err
    j = r.json()
    rows = j["rows"]
    assert [(x["workload.load"], x["routing.algorithm"]) for x in rows] == [
        (0.1, "dor"), (0.1, "adaptive"), (0.4, "dor"), (0.4, "adaptive"), (0.7, "dor"), (0.7, "adaptive")]
    low = [x for x in rows if x["workload.load"] == 0.1]
    high = [x for x in rows if x["workload.load"] == 0.7]
    # 4x4x4 uniform traffic saturates near 0.3 of a node's links.
    assert not any(x["saturated"] for x in low)
    assert all(x["saturated"] and "below offered" in x["saturation"] for x in high)
    assert all(x["accepted_load"] < 0.7 for x in high)
    frame = pd.read_parquet(out / "sweep.parquet")
    assert list(frame["workload.load"]) == [x["workload.load"] for x in rows]
    csv = pd.read_csv(out / "sweep.csv")
    assert list(csv.columns) == list(frame.columns) and list(csv["saturated"]) == list(frame["saturated"])
    assert (out / "sweep.png").stat().st_size > 10_000
    # Physical units beside the fractions and cycles (issue 36, item 4).
    for x in rows:
        assert x["accepted_GBps_per_node"] == pytest.approx(x["accepted_load"] * x["offered_GBps_per_node"] / x["offered_load"], rel=1e-3)
        assert x["latency_mean_ns"] == pytest.approx(x["latency_mean_cycles"] * x["cycle_ns"])
    assert {"offered_GBps_per_node", "accepted_GBps_per_node", "latency_mean_ns", "latency_p99_ns"} <= set(csv.columns)


def test_the_table_warns_about_saturated_points(run, exp, tmp_path):
    r = run("sweep", str(exp), "--vary", "workload.load=0.2,0.8", "--out", str(tmp_path / "w"))
    assert r.code == 0, r.err
    assert "GB/s/node" in r.out and "latency µs" in r.out
    assert "tofusim: warning:" in r.err and "1 of 2 points are saturated" in r.err


@pytest.mark.parametrize("vary,needle", [
    ("workload.load", "expected KEY=START:STOP:STEP"),
    ("load=0.1:0.5:0.1", "a table and a name"),
    ("workload.load=0.5:0.1:0.1", "STOP >= START"),
    ("workload.load=0.1:0.5", "START:STOP:STEP"),
    ("workload.load=a:b:c", "sweep point workload.load=a:b:c"),
    ("workload.load=1:x:2", "are numbers"),
    ("routing.algorithm=dor,nope", "sweep point routing.algorithm=nope"),
])
def test_bad_sweeps_exit_2(run, exp, tmp_path, vary, needle):
    r = run("sweep", str(exp), "--vary", vary, "--out", str(tmp_path / "x"))
    assert r.code == 2, (r.code, r.err)
    assert needle in r.err and "Traceback" not in r.err


def test_sweeps_vary_text_values_with_colons_and_refuse_bad_lists(run, exp, tmp_path):
    r = run("sweep", str(exp), "--vary", "network.system=bgl:2x2x2,bgl:4x2x2", "--out", str(tmp_path / "s"), "--json")
    assert r.code == 0, r.err
    assert [x["network.system"] for x in r.json()["rows"]] == ["bgl:2x2x2", "bgl:4x2x2"]
    for bad, needle in (("workload.load=0.1,,0.2", "empty value"), ("workload.load=0.1,0.1", "listed twice"),
                        ("workload.load=0.1:1e300:1e-300", "more than 10,000")):
        r = run("sweep", str(exp), "--vary", bad, "--out", str(tmp_path / "x"))
        assert r.code == 2 and needle in r.err, (bad, r.err)


def test_a_fixed_partner_pattern_at_light_load_is_not_called_saturated(run, tmp_path):
    """Transpose's fixed points send nothing: what is offered is the load
    times the sending fraction the run reports."""
    f = tmp_path / "t.toml"
    f.write_text(EXP.replace('pattern = "uniform"', 'pattern = "transpose"').replace("load = 0.1", "load = 0.02")
                 .replace("cycles = 12000", "cycles = 40000"))
    r = run("run", str(f), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert 0 < j["sending_fraction"] < 1 and "warning" not in r.err


def test_a_collective_sweep_compares_algorithms_by_size(run, tmp_path):
    out = tmp_path / "c"
    r = run("coll", "allreduce", "--algo", "ring,recursive-doubling", "--size", "1KiB:4KiB", "--system", "bgl:2x2x2",
            "--out", str(out), "--json")
    assert r.code == 0, r.err
    rows = r.json()["rows"]
    assert [(x["algorithm"], x["size_bytes"]) for x in rows] == [
        ("ring", 1024), ("ring", 2048), ("ring", 4096), ("recursive-doubling", 1024), ("recursive-doubling", 2048), ("recursive-doubling", 4096)]
    assert all(x["time_seconds"] > 0 for x in rows)
    # Larger messages take longer under either algorithm.
    for a in ("ring", "recursive-doubling"):
        t = [x["time_seconds"] for x in rows if x["algorithm"] == a]
        assert t == sorted(t)
    assert len(pd.read_parquet(out / "coll.parquet")) == 6 and (out / "coll.png").exists()
    r = run("coll", "allreduce", "--algo", "ring,nope", "--size", "1KiB", "--system", "bgl:2x2x2", "--out", str(tmp_path / "d"))
    assert r.code == 2 and "nope" in r.err


def test_run_warns_when_saturated_or_not_in_steady_state(run, exp, tmp_path):
    """Issue 21, part 6: offered 0.8 on 4x4x4 is far past saturation
    (accepted about 0.3): one warning line says so; a light load says nothing."""
    hot = tmp_path / "hot.toml"
    hot.write_text(EXP.replace("load = 0.1", "load = 0.8"))
    r = run("run", str(hot))
    assert r.code == 0, r.err
    lines = [ln for ln in r.err.splitlines() if "warning" in ln]
    assert len(lines) == 1 and "saturated: the network accepts" in lines[0]
    r = run("run", str(exp))
    assert r.code == 0 and "warning" not in r.err


def test_counters_are_sampled_in_collectives_and_replays(run, tmp_path):
    """Issue 21, part 3: per-port counters every --counter-period cycles in
    a collective's packet run, written compactly as Parquet."""
    out = tmp_path / "c"
    r = run("coll", "allreduce", "--algo", "ring", "--size", "64KiB", "--system", "bgl:4x4x4", "--counter-period", "5000", "--out", str(out))
    assert r.code == 0, r.err
    f = pd.read_parquet(out / "port_samples.parquet")
    assert set(f.columns) == {"cycle", "router", "port", "bytes", "packets", "busy_cycles", "idle_cycles", "depleted_cycles"}
    assert f["cycle"].nunique() >= 2 and len(f) == f["cycle"].nunique() * 64 * 6
    # Counters are cumulative: each port's bytes never fall.
    assert (f.sort_values("cycle").groupby(["router", "port"], observed=True)["bytes"].diff().dropna() >= 0).all()
    v = pd.read_parquet(out / "vc_samples.parquet")
    assert list(v.columns) == ["cycle", "router", "port", "vc", "bytes", "packets", "held_chunks"]
    # Each port's VCs add up to the port, sample by sample.
    by_port = v.groupby(["cycle", "router", "port"], observed=True)[["bytes", "packets"]].sum().reset_index()
    joined = f.merge(by_port, on=["cycle", "router", "port"], suffixes=("", "_vcs"))
    assert len(joined) == len(f) and (joined["bytes"] == joined["bytes_vcs"]).all() and (joined["packets"] == joined["packets_vcs"]).all()
    res = json.loads((out / "result.json").read_text())
    assert res["run"]["counter_samples"]["files"] == ["port_samples.parquet", "vc_samples.parquet"]
    assert res["run"]["counter_samples"]["vc_rows"] == len(v) and "port_samples" not in res["run"]
    # Without --out: nowhere to write them, refused in one line; --json alone samples nothing.
    r = run("coll", "allreduce", "--algo", "ring", "--size", "64KiB", "--system", "bgl:4x4x4", "--counter-period", "100", "--json")
    assert r.code == 2 and "--counter-period" in r.err and "--out DIR" in r.err and len(r.err.strip().splitlines()) == 1
    r = run("coll", "allreduce", "--algo", "ring", "--size", "64KiB", "--system", "bgl:4x4x4", "--json")
    assert r.code == 0 and "counter_samples" not in json.loads(r.out)["run"]
    # With --out and no period: sampled at the default.
    dflt = tmp_path / "default"
    assert run("coll", "allreduce", "--algo", "ring", "--size", "64KiB", "--system", "bgl:4x4x4", "--out", str(dflt)).code == 0
    assert json.loads((dflt / "result.json").read_text())["run"]["counter_samples"]["requested_period_cycles"] == 1000
    r = run("coll", "allreduce", "--algo", "ring", "--size", "64KiB", "--system", "bgl:4x4x4", "--counter-period", "100", "--model", "flow")
    assert r.code == 2 and "--model packet" in r.err


def test_counter_period_is_the_run_key(run, exp, tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(EXP.replace("seed = 1", "seed = 1\ncounter_period = 3000"))
    out = tmp_path / "o"
    r = run("run", str(f), "--out", str(out))
    assert r.code == 0, r.err
    assert len(pd.read_parquet(out / "port_samples.parquet")) > 0
    both = tmp_path / "b.toml"
    both.write_text(EXP.replace("seed = 1", "seed = 1\ncounter_period = 3000\ncounter_cycles = 3000"))
    r = run("run", str(both))
    assert r.code == 2 and "counter_period" in r.err
