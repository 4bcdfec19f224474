"""Aries dragonfly (issue 6): the communication model on the packet engine,
the reproductions' shapes, and clear errors for bad dragonfly systems."""

import json
import random

import pytest

from conftest import ROOT  # noqa: F401
from tofusim import _core
from tofusim.reproduce import run_case


def metric(j, prefix):
    rows = [m for m in j["metrics"] if m["name"].startswith(prefix)]
    assert rows, prefix
    return rows[0]["measured"]


def test_latency_rises_by_one_hop_latency_per_router_hop_from_0_to_5():
    j = run_case("aries-latency")
    hops = {int(m["name"].split(", ")[1].split()[0]): m["measured"] for m in j["metrics"] if m["name"].startswith("8-byte latency, ")}
    assert sorted(hops) == [0, 1, 2, 3, 4, 5]
    steps = [hops[h + 1] - hops[h] for h in range(5)]
    assert all(0.09 < s < 0.11 for s in steps), steps
    # Bandwidth-bound growth appears beyond 256 bytes, not before.
    assert metric(j, "latency growth from 8 to 256") < 0.05
    assert metric(j, "latency growth from 256 bytes to 4 KiB") > 0.15


def test_pair_bandwidth_rises_with_message_size_and_doubles_bidirectionally():
    j = run_case("aries-bandwidth")
    one = j["plots"][0]["curves"]["one-way"]
    ys = [y for _, y in one]
    assert ys == sorted(ys), ys
    two = dict((x, y) for x, y in j["plots"][0]["curves"]["bidirectional"])
    big = one[-1][0]
    assert 1.8 < two[big] / one[-1][1] <= 2.01


def test_adversarial_traffic_needs_non_minimal_routing():
    j = run_case("aries-adversarial")
    got = j["setup"]["per_node_GBps"]
    bound = j["setup"]["global_link_bound_GBps_per_node"]
    assert abs(got["minimal"] / bound - 1) < 0.05
    # Above the bound (issue 6); UGAL-L and adaptive about twice it.
    for algo in ("valiant", "ugal", "ugal-g", "adaptive-prefer-minimal"):
        assert got[algo] > 1.05 * bound, (algo, got)
    assert got["ugal"] > 1.8 * bound and got["adaptive-prefer-minimal"] > 1.8 * bound, got


def test_topology_comparison_orders_hops_and_halves_the_optical_links():
    j = run_case("topology-comparison")
    t = {r["topology"]: r for r in j["setup"]["table"]}
    assert t["dragonfly"]["average_hops"] < t["fat-tree"]["average_hops"] < t["Tofu 6D"]["average_hops"] < t["3D torus"]["average_hops"]
    assert t["dragonfly"]["zero_load_latency_ns"] < t["3D torus"]["zero_load_latency_ns"]
    for name in ("3D torus", "Tofu 6D", "dragonfly"):
        assert 0 < t[name]["uniform_throughput_GBps_per_node"] <= 10.5 + 1e-9
    assert metric(j, "optical links, dragonfly / fat-tree") == pytest.approx(0.5, rel=0.02)


def test_same_router_messages_take_no_network_link():
    r = json.loads(_core.run_pingpong("aries-1g", 0, 1, 4096, 4))
    assert r["run"]["link_utilization"] == 0.0 and not r["run"]["deadlock"]
    r = json.loads(_core.run_pingpong("aries-1g", 0, 4, 4096, 4))
    assert r["run"]["link_utilization"] > 0.0


def test_alltoall_with_random_placement_runs_under_every_routing_mode():
    order = list(range(64))
    random.Random(3).shuffle(order)
    for mode in ("minimal", "valiant", "ugal-l", "ugal-g", "adaptive-prefer-minimal"):
        r = json.loads(_core.run_collective_placed(f"aries-2g/{mode}", "alltoall", "pairwise", 512, order))
        assert not r["run"]["deadlock"] and r["run"]["invariant_error"] is None, mode
        assert r["time_seconds"] > 0


@pytest.mark.parametrize("system, text", [
    ("k:2x1x2/minimal", "routing suffix"),
    ("aries-2g/sideways", "unknown dragonfly routing"),
])
def test_bad_dragonfly_systems_are_clear_errors(system, text):
    with pytest.raises(Exception, match=text):
        _core.run_pingpong(system, 0, 1, 8, 1)


def test_aries_routers_take_more_fifos_and_vcs_than_128_queues(run, tmp_path):
    """40 ports x 6 VCs + 4 nodes x 4 FIFOs = 256 queues: beyond the old
    128-queue index, now within the wide queue sets."""
    f = tmp_path / "df.toml"
    f.write_text(
        '[network]\nsystem = "aries-2g"\n[router]\ninjection_fifos = 4\nclass_vcs = 2\n'
        '[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 3000\n'
    )
    r = run("run", str(f), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["complete"] and j["invariant_error"] is None and j["packets_delivered"] > 0


# The collective engine (issue 23, case 3): aries_ce.py's tree and refusals
# follow Cray's public uGNI interface (GNI_CE_MAX_CHILDREN = 32, the CE commands).

def test_ce_tree_counts_the_nodes_processes_among_a_vces_32_children():
    from tofusim.reproduce import aries_ce

    for nodes, ppn, fanout, depth in [(720, 3, 29, 2), (720, 17, 15, 3), (720, 31, 1, 719), (1, 32, 1, 0), (31, 2, 30, 1), (32, 2, 30, 2)]:
        t = aries_ce.tree(nodes, ppn)
        assert (t.fanout, t.depth) == (fanout, depth), (nodes, ppn)
        assert max(t.level(i) for i in range(nodes)) == depth
        for i in range(nodes):
            assert ppn + len(t.children(i)) <= aries_ce.CE_MAX_CHILDREN
            assert all(t.parent(c) == i for c in t.children(i))
        assert sorted(c for i in range(nodes) for c in t.children(i)) == list(range(1, nodes))


@pytest.mark.parametrize("call, key", [
    (lambda ce: ce.tree(2, 32), "ce.ppn"),
    (lambda ce: ce.tree(1, 33), "ce.ppn"),
    (lambda ce: ce.check("prod", "float", 8, 1), "ce.op"),
    (lambda ce: ce.check("bxor", "float", 8, 1), "ce.type"),
    (lambda ce: ce.check("sum", "float", 16, 1), "ce.width"),
    (lambda ce: ce.check("sum", "int", 8, 3), "ce.count"),
    (lambda ce: ce.check("maxloc", "float", 4, 2), "ce.count"),
])
def test_ce_refuses_what_the_public_engine_cannot_do(call, key):
    from tofusim import ConfigError
    from tofusim.reproduce import aries_ce

    with pytest.raises(ConfigError, match=f"^{key}: "):
        call(aries_ce)
    aries_ce.check("sum", "float", 8, 2)
    aries_ce.check("minloc", "int", 4, 1)


def test_ce_allreduce_depends_weakly_on_processes_and_beats_software():
    j = run_case("aries-allreduce")
    ce2, ce12 = metric(j, "collective engine model, 2,000"), metric(j, "collective engine model, 12,000")
    assert ce2 < ce12 < 1.5 * ce2
    assert ce12 < metric(j, "software allreduce (recursive doubling), 12,000") / 2
    trees = j["setup"]["ce"]["trees"]
    assert (trees["2000"]["fanout"], trees["2000"]["depth"]) == (29, 2)
    assert (trees["12000"]["fanout"], trees["12000"]["depth"]) == (15, 3)
