"""Inputs that used to end in an internal error (exit 1), a traceback, a
hang or a silent default (issue 37): each is now refused with exit 2 and
one line naming the option and what was expected."""

import pytest

from conftest import ROOT


@pytest.mark.parametrize("args,needle", [
    (["alloc", "--jobs", "-1"], "--jobs"),
    (["alloc", "--seed", "-1"], "--seed"),
    (["trace", "synth", "--ranks", "8", "--compute-us", "inf", "--out", "/tmp/never-written"], "--compute-us"),
    (["trace", "synth", "--ranks", "100000000", "--out", "/tmp/never-written"], "--ranks"),
    (["trace", "synth", "--ranks", "1000000", "--iterations", "1000", "--out", "/tmp/never-written"], "events"),
    (["trace", "synth", "--ranks", "8", "--halo-bytes", str(2**64), "--out", "/tmp/never-written"], "--halo-bytes"),
    (["reproduce", "tofu-put-latency", "--out", "/proc/tofusim-x"], "/proc/tofusim-x"),
    (["coll", "allreduce", "--algo", "ring,ring", "--size", "8", "--system", "bgl:2x2x2"], "named twice"),
    (["coll", "allreduce", "--algo", "ring,", "--size", "8", "--system", "bgl:2x2x2"], "empty algorithm name"),
    (["coll", "allreduce", "--algo", "ring", "--size", "8", "--system", "bgl:2x2x2", "--out", ""], "--out"),
    (["replay", "no-such-trace", "--system", "k:1x1x1", "--coll", "allreduce=nope"], "allreduce='nope'"),
    (["replay", "no-such-trace", "--system", "k:1x1x1", "--seed", "-1"], "seed"),
    # An allocation abort before: checking 4 GiB vectors on 8 ranks.
    (["coll", "allreduce", "--algo", "ring", "--size", "1024GiB", "--verify", "--model", "flow", "--system", "bgl:2x2x2"], "verify"),
])
def test_refused_in_one_line(run, args, needle):
    r = run(*args)
    assert r.code == 2, (args, r.code, r.err)
    assert needle in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err


TRACE_RUN = '[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "trace"\ntrace_file = "p.csv"\n[run]\ncycles = 2000\n'


@pytest.mark.parametrize("csv,needle", [
    ("cycle,src,dst,bytes\n", "workload.trace_file: no packets"),
    ("cycle,src,dst,bytes\n999999,0,1,64\n", "cycle 999999 lies beyond the run"),
])
def test_a_trace_workload_that_would_carry_nothing_is_refused(run, tmp_path, csv, needle):
    (tmp_path / "p.csv").write_text(csv)
    (tmp_path / "t.toml").write_text(TRACE_RUN)
    r = run("run", str(tmp_path / "t.toml"))
    assert r.code == 2 and needle in r.err and r.err.count("\n") == 1, r.err


def test_group_shift_needs_two_groups_and_pattern_time_a_torus(run, tmp_path):
    from conftest import ROOT

    text = (ROOT / "examples" / "experiments" / "dragonfly-adversarial.toml").read_text()
    (tmp_path / "d.toml").write_text("\n".join("groups = 1" if line.startswith("groups =") else line for line in text.splitlines()))
    r = run("run", str(tmp_path / "d.toml"))
    assert r.code == 2 and "at least 2 groups" in r.err, r.err
    r = run("pattern", "time", "--torus", "4x4", "--procs", "16", "--class", "S", "--system", "summit")
    assert r.code == 2 and "summit is not a torus" in r.err, r.err


def test_a_run_estimated_beyond_its_time_budget_is_refused_before_it_starts(run, tmp_path):
    """Announced and then started anyway, a run whose own estimate said
    millions of minutes hung; now the estimate is checked against a budget
    (an hour, or --max-time DURATION; none lifts it)."""
    (tmp_path / "huge.toml").write_text('[network]\nsystem = "bgl:32x32x32"\n[workload]\npattern = "uniform"\nload = 0.5\n'
                                        '[run]\ncycles = 1000000000\n')
    r = run("run", str(tmp_path / "huge.toml"), timeout=60)
    assert r.code == 2 and "60-minute budget" in r.err and "--max-time" in r.err, r.err
    r = run("run", str(tmp_path / "huge.toml"), "--max-time", "30d", timeout=60)
    assert r.code == 2 and "43200-minute budget" in r.err, r.err
    (tmp_path / "small.toml").write_text('[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 5000\n')
    assert run("run", str(tmp_path / "small.toml")).code == 0
    assert run("run", str(tmp_path / "small.toml"), "--max-time", "none").code == 0
    r = run("run", str(tmp_path / "small.toml"), "--max-time", "0s")
    assert r.code == 2 and "0-minute budget" in r.err, r.err
    r = run("run", str(tmp_path / "small.toml"), "--max-time", "soon")
    assert r.code == 2 and "--max-time" in r.err and "Traceback" not in r.err, r.err


def test_collectives_and_replays_have_the_time_budget_too(run, tmp_path):
    """A replayed terabyte message ran on the packet engine for hours; a
    collective likewise. Both are refused by their estimate, and the flow
    model or --max-time none is the way out."""
    from otf2_cases import two_rank_trace

    trace = two_rank_trace(tmp_path / "tib", message_bytes=2**40)
    r = run("replay", str(trace), "--system", "bgl:2x1x1", timeout=60)
    assert r.code == 2 and "60-minute budget" in r.err and "--model flow" in r.err, r.err
    r = run("replay", str(trace), "--system", "bgl:2x1x1", "--model", "flow", "--json", timeout=60)
    assert r.code == 0, r.err
    # (On this machine a collective meets the memory estimate before an
    # hour's packets; a smaller budget shows the same check.)
    r = run("coll", "allreduce", "--algo", "ring", "--size", "256MiB", "--system", "bgl:2x2x2", "--max-time", "6s", timeout=60)
    assert r.code == 2 and "0-minute budget" in r.err and "--max-time" in r.err, r.err
    assert run("coll", "allreduce", "--algo", "ring", "--size", "1MiB", "--system", "bgl:2x2x2", "--max-time", "6s").code == 0


@pytest.mark.parametrize("case,kw,needle", [
    ("clock", {"end_ns": 2**62}, "13 days"),
    ("size", {"message_bytes": 2**60}, "256 TiB"),
])
def test_a_replay_of_an_impossible_trace_is_refused_not_allocated(run, tmp_path, case, kw, needle):
    """A timestamp near 2^63 became a billion compute steps (an allocation
    abort at 15 GB); a 2^60-byte message billions of packets."""
    from otf2_cases import two_rank_trace

    trace = two_rank_trace(tmp_path / case, **kw)
    for model in ("packet", "flow"):
        r = run("replay", str(trace), "--system", "bgl:2x1x1", "--model", model, timeout=60)
        assert r.code == 2 and needle in r.err and "Traceback" not in r.err, r.err


def test_topology_metrics_with_faults_on_a_huge_network_are_refused(run, tmp_path):
    """A 2^31-node torus with one failed node: the exact metrics would walk
    the graph from every router (21 GB and hours); refused at once."""
    (tmp_path / "big.toml").write_text('[network]\ntopology = "torus"\nshape = [2048, 1024, 1024]\nlink_bandwidth = "1GB/s"\n'
                                       '[network.faults]\nnodes = [17]\n')
    r = run("topo", "--config", str(tmp_path / "big.toml"), timeout=30)
    assert r.code == 2 and "network.faults" in r.err and r.err.count("\n") == 1, r.err


def test_a_trace_whose_enter_and_leave_do_not_pair_is_refused(run, tmp_path):
    """A Leave without its Enter was read as if nothing were wrong."""
    from otf2_cases import two_rank_trace

    good = two_rank_trace(tmp_path / "good")
    assert run("replay", str(good), "--system", "bgl:2x1x1", "--model", "flow").code == 0
    stray = two_rank_trace(tmp_path / "stray", stray_leave=True)
    for cmd in (("replay", str(stray), "--system", "bgl:2x1x1"), ("trace", "show", str(stray))):
        r = run(*cmd)
        assert r.code == 2 and "a Leave of MPI_Finalize" in r.err and "without its Enter" in r.err, (cmd, r.err)


def test_a_dragonfly_too_wide_for_the_engine_is_refused_before_its_tables_are_built(run, tmp_path):
    """5,000 groups of 1,000 routers: the routing tables were built (8 GB,
    an allocation abort) before the ports were counted."""
    text = (ROOT / "examples" / "experiments" / "dragonfly-adversarial.toml").read_text()
    for key, value in (("groups", 5000), ("routers_per_group", 1000), ("global_links_per_router", 5), ("algorithm", '"minimal"')):
        text = "\n".join(f"{key} = {value}" if line.startswith(f"{key} =") else line for line in text.splitlines())
    (tmp_path / "wide.toml").write_text(text + "\n")
    r = run("run", str(tmp_path / "wide.toml"), timeout=20)
    assert r.code == 2 and "1004 ports per router" in r.err and "at most 63" in r.err, r.err


def test_a_sweep_grid_too_large_is_refused_before_it_is_built(run, tmp_path):
    """Two axes of 10,001 and 901 values: 9 million points grew to 4 GB of
    grid before the first run."""
    r = run("sweep", "bench/uniform-8.toml", "--vary", "run.seed=1:10001:1", "--vary", "workload.load=0.01:0.1:0.0001",
            "--out", str(tmp_path / "s"), timeout=30)
    assert r.code == 2 and "9,010,901 points" in r.err and "100,000" in r.err, r.err


def test_a_fat_tree_too_wide_for_the_engine_is_refused_before_its_tables_are_built(run, tmp_path):
    """k = 128, 4 levels: a 16 GiB neighbour table was allocated (an abort)
    before the switch ports were checked."""
    (tmp_path / "ft.toml").write_text('[network]\ntopology = "fattree"\nk = 128\nlevels = 4\nlink_bandwidth = "12.5GB/s"\n'
                                      '[workload]\npattern = "uniform"\nload = 0.01\n[run]\ncycles = 100\n')
    r = run("run", str(tmp_path / "ft.toml"), timeout=20)
    assert r.code == 2 and "switches of 256 ports" in r.err and "at most 63" in r.err, r.err


def test_a_replay_too_large_for_the_memory_is_refused_before_the_trace_is_read(tmp_path):
    """Replay timelines and per-rank state grow with the trace: the
    estimate from its event files is checked before reading."""
    from otf2_cases import two_rank_trace

    from tofusim import ConfigError
    from tofusim.trace.replay import REPLAY_BYTES_PER_EVENT_BYTE, refuse_beyond_memory

    trace = two_rank_trace(tmp_path / "t")
    need = refuse_beyond_memory(str(trace))
    assert need > 0 and need % REPLAY_BYTES_PER_EVENT_BYTE == 0
    with pytest.raises(ConfigError, match="memory: replaying"):
        refuse_beyond_memory(str(trace), limit_bytes=need - 1)


def test_a_sweep_takes_the_time_budget_too(run, tmp_path):
    r = run("sweep", "bench/uniform-8.toml", "--vary", "workload.load=0.01,0.02", "--max-time", "0s", "--out", str(tmp_path / "s"))
    assert r.code == 2 and "0-minute budget" in r.err and "sweep point" in r.err, r.err
    r = run("sweep", "bench/uniform-8.toml", "--vary", "workload.load=0.01", "--max-time", "none", "--out", str(tmp_path / "t"), "--json")
    assert r.code == 0, r.err
