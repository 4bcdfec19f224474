"""``tofusim explain`` and the accounting behind it (issue 35): on five
cases whose limit is known, the run itself names the resource that binds."""

import json

from conftest import ROOT


def explain(run, path):
    r = run("explain", str(path), "--json")
    assert r.code == 0, r.err
    return r.json()


def test_a_hot_spot_is_limited_by_the_links_into_its_node(run, tmp_path):
    exp = tmp_path / "hot.toml"
    exp.write_text('[network]\nsystem = "bgl:4x4x4"\n[workload]\npattern = "hot-spot"\nregion_origin = [1, 2, 3]\npackets = 32\n')
    out = tmp_path / "hot"
    assert run("run", str(exp), "--out", str(out)).code == 0
    x = explain(run, out)
    b = x["limits"]["binding"]
    assert b["kind"] == "link" and b["busy"] > 0.9
    assert b["set"].startswith("the links into router (1,2,3)"), b["set"]
    assert x["summary"].startswith("Limited by the links into router (1,2,3)")
    # The busiest links all lead into the hot node, and nothing else is
    # nearly as busy.
    assert "of its 6 incoming links" in b["set"]
    assert all(r["to_router"] == 1 + 4 * 2 + 16 * 3 for r in x["limits"]["busiest"])
    means = [c["busy_mean"] for c in x["limits"]["classes"] if c["kind"] == "link"]
    assert max(means) < 0.2


def test_minimal_routing_under_adversarial_traffic_is_limited_by_the_global_links(run, tmp_path):
    text = (ROOT / "examples/experiments/dragonfly-adversarial.toml").read_text()
    exp = tmp_path / "df.toml"
    exp.write_text(text.replace('algorithm = "valiant"', 'algorithm = "minimal"').replace("cycles = 200000", "cycles = 40000")
                   .replace("warmup = 40000", "warmup = 10000"))
    r = run("run", str(exp), "--json")
    assert r.code == 0, r.err
    lim = r.json()["limits"]
    assert lim["binding"]["resource_class"] == "global" and lim["binding"]["busy"] > 0.95
    # One global link per group pair i -> i+1 (5 groups): those five, and no local link near them.
    top = [b for b in lim["busiest"] if b["busy"] > 0.9]
    assert len(top) == 5 and all(b["resource_class"] == "global" for b in top)
    local = next(c for c in lim["classes"] if c["name"] == "local")
    assert local["busy_max"] < 0.8


def test_k_injection_on_four_tnis_is_limited_by_the_host_interface(tmp_path):
    from tofusim import _core
    from tofusim.reproduce.tofu import NEIGHBOURS_4x3x4
    from tofusim.limits import of_result

    transfers = [(0, NEIGHBOURS_4x3x4[i], 2 << 20, i) for i in range(4)]
    r = json.loads(_core.run_transfers("k:2x1x2", transfers))
    x = of_result(r)
    b = x["limits"]["binding"]
    assert b["kind"] == "host-interface" and b["busy"] > 0.97, b
    assert "host interface of node 0" in x["summary"]
    # With three TNIs the links are the limit again: the host interface has room.
    r3 = json.loads(_core.run_transfers("k:2x1x2", transfers[:3]))
    assert of_result(r3)["limits"]["binding"]["kind"] == "link"


def test_a_ring_allreduce_is_limited_by_the_rings_links(run, tmp_path):
    out = tmp_path / "ring"
    assert run("coll", "allreduce", "--algo", "ring", "--size", "256KiB", "--system", "bgl:8x2x1", "--out", str(out)).code == 0
    x = explain(run, out)
    b = x["limits"]["binding"]
    # Ranks in x-fastest order: every ring edge goes x+ (two of them then turn in y).
    assert b["kind"] == "link" and b["resource_class"] == "x" and b["busy"] > 0.85
    assert all(r["name"].endswith("x+") for r in x["limits"]["busiest"])
    cp = x["critical_path"]
    assert cp["by_kind"]["transfer"] > 0.8 * cp["end_cycle"]
    assert cp["ranks_on_path"] == 16 and cp["transfers"] == 2 * 15
    assert "critical path" in x["summary"]


def test_a_replay_whose_ranks_wait_for_one_slow_rank_names_it(run, tmp_path):
    trace = tmp_path / "trace"
    r = run("trace", "synth", "--out", str(trace), "--ranks", "8", "--iterations", "4", "--compute-us", "50",
            "--halo-bytes", "1024", "--slow-rank", "5", "--slow-factor", "10")
    assert r.code == 0, r.err
    out = tmp_path / "rep"
    r = run("replay", str(trace), "--system", "bgl:2x2x2", "--out", str(out))
    assert r.code == 0, r.err
    x = explain(run, out)
    cp = x["critical_path"]
    assert cp["most_waited_for"] == 5
    # Rank 5's three neighbours wait for it: it holds most of all waiting.
    assert cp["most_waited_for_cycles"] > 0.3 * cp["waiting_cycles"]
    assert cp["by_kind"]["work"] > 0.5 * cp["end_cycle"]
    assert "for rank 5" in x["summary"]


def test_explain_refuses_what_it_cannot_explain(run, tmp_path):
    r = run("explain", str(tmp_path / "nothing"))
    assert r.code == 2 and "no such file or directory" in r.err
    flow = tmp_path / "flow"
    assert run("coll", "allreduce", "--algo", "ring", "--size", "1KiB", "--system", "bgl:4x4x1", "--model", "flow", "--out", str(flow)).code == 0
    r = run("explain", str(flow))
    assert r.code == 2 and "flow model" in r.err and "--model packet" in r.err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    r = run("explain", str(bad))
    assert r.code == 2 and "not a tofusim result" in r.err


def test_explain_prints_the_tables(run, tmp_path):
    out = tmp_path / "bc"
    assert run("coll", "bcast", "--algo", "binomial", "--size", "64KiB", "--system", "bgl:4x4x1", "--out", str(out)).code == 0
    r = run("explain", str(out))
    assert r.code == 0, r.err
    for heading in ("Resources (measured window)", "Blocked queue-head time by cause", "Busiest resources", "Critical path", "Slowest ranks"):
        assert heading in r.out
