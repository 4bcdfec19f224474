"""`tofusim map virtual`, `tofusim alloc`, `tofusim pattern` and `tofusim rmatt` end to end."""

import json

import pytest

from conftest import ROOT  # noqa: F401


@pytest.mark.parametrize("shape", ["82944", "576x144", "54x48x32", "48x54x32", "32x54x48", "144x576"])
def test_full_k_shapes_map_with_one_hop_neighbours(run, shape):
    r = run("map", "virtual", "--system", "k", "--shape", shape, "--json")
    assert r.code == 0, r.err
    j = r.json()
    for key in ("virtual_shape", "nodes_used", "padding_nodes", "max_neighbor_hops", "mean_neighbor_hops"):
        assert key in j
    assert j["nodes_used"] == 82944 and j["padding_nodes"] == 0
    assert j["max_neighbor_hops"] == 1 and j["mean_neighbor_hops"] == 1.0


def test_sub_region_with_padding_and_rank_map_file(run, tmp_path):
    out = tmp_path / "map.txt"
    r = run("map", "virtual", "--system", "k", "--shape", "8x9x4", "--region", "2,3,4:6x5x4", "--out", str(out), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["nodes_used"] == 288 and j["padding_nodes"] == 6 * 5 * 4 * 12 - 288
    lines = [l.split() for l in out.read_text().splitlines() if not l.startswith("#")]
    assert len(lines) == 288
    # Every rank inside the region (X 2..7, Y 3..7, Z 4..7).
    for _, _, x, y, z, *_ in lines:
        assert 2 <= int(x) < 8 and 3 <= int(y) < 8 and 4 <= int(z) < 8


def test_faulty_nodes_are_avoided_and_reported(run, tmp_path):
    faults = tmp_path / "faults.txt"
    faults.write_text("# failed nodes\n0,0,0,0,0,0\n3,2,1,1,2,1\n")
    out = tmp_path / "map.txt"
    r = run("map", "virtual", "--system", "k:8x6x4", "--shape", "8x9x4", "--faults", str(faults), "--out", str(out), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["failed_nodes"] == 2 and j["mechanism"] == "fault-free block" and j["max_neighbor_hops"] == 1
    used = {tuple(map(int, l.split()[2:])) for l in out.read_text().splitlines() if not l.startswith("#")}
    assert (0, 0, 0, 0, 0, 0) not in used and (3, 2, 1, 1, 2, 1) not in used


def test_bad_mapping_input_exits_2_naming_the_key(run, tmp_path):
    r = run("map", "virtual", "--system", "k", "--shape", "7x12")
    assert r.code == 2 and "--shape" in r.err and "wrap link" in r.err
    r = run("map", "virtual", "--system", "bgl", "--shape", "8")
    assert r.code == 2 and "not a Tofu system" in r.err
    bad = tmp_path / "faults.txt"
    bad.write_text("1,2,3\n")
    r = run("map", "virtual", "--system", "k", "--shape", "54x48x32", "--faults", str(bad))
    assert r.code == 2 and "line 1" in r.err and str(bad) in r.err
    r = run("map", "virtual", "--system", "k", "--shape", "8x9x4", "--region", "0,0:4x4x4")
    assert r.code == 2 and "--region" in r.err


def test_alloc_reports_four_policies(run):
    r = run("alloc", "--system", "k:12x9x8", "--jobs", "120", "--seed", "2", "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert [(p["rotation"], p["padding"]) for p in j["policies"]] == [(False, False), (True, False), (False, True), (True, True)]
    base, both = j["policies"][0], j["policies"][3]
    for p in j["policies"]:
        assert 0 < p["utilization"] <= p["allocated_fraction"] <= 1
    # Padding places shapes that have no exact block.
    assert both["unplaceable"] < base["unplaceable"]
    assert run("alloc", "--system", "k:12x9x8", "--jobs", "120", "--seed", "2", "--json").json() == j


def test_cg_pattern_rmatt_and_simulated_time(run, tmp_path):
    pat, order = tmp_path / "cg.txt", tmp_path / "order.txt"
    r = run("pattern", "cg", "--procs", "64", "--class", "A", "--out", str(pat), "--json")
    assert r.code == 0, r.err
    assert r.json()["flows"] > 0
    r = run("rmatt", "--torus", "8x8", "--pattern", str(pat), "--seed", "3", "--out", str(order), "--json")
    assert r.code == 0, r.err
    j = r.json()
    for key in ("default_cost", "optimized_cost", "objective", "iterations", "seconds"):
        assert key in j
    assert j["optimized_cost"] < j["default_cost"]
    again = run("rmatt", "--torus", "8x8", "--pattern", str(pat), "--seed", "3", "--json").json()
    assert again["optimized_cost"] == j["optimized_cost"]
    t_default = run("pattern", "time", "--torus", "8x8", "--procs", "64", "--class", "A", "--json").json()["time_seconds"]
    t_rmatt = run("pattern", "time", "--torus", "8x8", "--procs", "64", "--class", "A", "--order", str(order), "--json").json()["time_seconds"]
    assert t_rmatt < t_default


def test_rmatt_and_pattern_time_with_several_ranks_per_node(run, tmp_path):
    """Issue 38: RMATT fills each node with up to --ppn ranks; pattern time
    places them so, and messages between ranks of one node stay off the
    network."""
    pat, order, zero = tmp_path / "cg.txt", tmp_path / "order.txt", tmp_path / "zero.txt"
    assert run("pattern", "cg", "--procs", "64", "--class", "A", "--out", str(pat)).code == 0
    # 64 ranks do not fit 16 nodes one per node, but do four per node.
    r = run("rmatt", "--torus", "4x4", "--pattern", str(pat), "--json")
    assert r.code == 2 and "16 nodes" in r.err
    r = run("rmatt", "--torus", "4x4", "--pattern", str(pat), "--ppn", "4", "--out", str(order), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["ranks_per_node"] == 4 and j["optimized_cost"] < j["default_cost"]
    nodes = [int(line) for line in order.read_text().splitlines() if not line.startswith("#")]
    assert len(nodes) == 64 and max(nodes.count(n) for n in set(nodes)) == 4
    time = ["pattern", "time", "--torus", "4x4", "--procs", "64", "--class", "A", "--ppn", "4", "--json"]
    block = run(*time).json()
    assert block["ranks_per_node"] == 4 and block["order"] == "block, 4 per node"
    annealed = run(*time, "--placement", str(order)).json()
    assert annealed["time_seconds"] < block["time_seconds"]
    # A fifth rank on a node is refused, naming the placement.
    r = run("pattern", "time", "--torus", "4x4", "--procs", "64", "--class", "A", "--ppn", "3")
    assert r.code == 2 and "3 ranks per node" in r.err
    # Every rank on one node: nothing crosses the network.
    zero.write_text("0\n" * 64)
    r = run("pattern", "time", "--torus", "2", "--procs", "64", "--class", "A", "--ppn", "64", "--placement", str(zero), "--json")
    assert r.code == 0, r.err
    assert r.json()["run"]["packets_delivered"] == 0 and r.json()["time_seconds"] > 0


def test_bad_rmatt_input_exits_2(run, tmp_path):
    pat = tmp_path / "p.txt"
    pat.write_text("0 1 100\n1 2\n")
    r = run("rmatt", "--torus", "4x4", "--pattern", str(pat))
    assert r.code == 2 and "line 2" in r.err
    pat.write_text("0 99 100\n")
    r = run("rmatt", "--torus", "4x4", "--pattern", str(pat))
    assert r.code == 2 and "--torus" in r.err
    r = run("pattern", "cg", "--procs", "24", "--class", "B")
    assert r.code == 2 and "power-of-two" in r.err


@pytest.mark.parametrize("case", ["binary list", "binary order", "empty list", "negative iterations", "out is a directory", "out parent missing", "map out is a directory"])
def test_files_and_numbers_that_crashed_exit_2(run, tmp_path, case):
    """Issue 18: inputs that ended as exit 1 "internal error" or ran as nonsense."""
    pat, binary, empty = tmp_path / "p.txt", tmp_path / "b.bin", tmp_path / "e.txt"
    pat.write_text("0 1 100\n")
    binary.write_bytes(b"\xff\xfe\x00\x01binary")
    empty.write_text("")
    rmatt = ["rmatt", "--torus", "4x4", "--pattern"]
    args, needle = {
        "binary list": (rmatt + [str(binary)], "not UTF-8 text"),
        "binary order": (rmatt + [str(pat), "--start", str(binary)], "order file is not UTF-8 text"),
        "empty list": (rmatt + [str(empty)], "the list is empty"),
        "negative iterations": (rmatt + [str(pat), "--iterations", "-5"], "--iterations"),
        "out is a directory": (rmatt + [str(pat), "--out", str(tmp_path)], "is a directory"),
        "out parent missing": (rmatt + [str(pat), "--out", str(tmp_path / "no" / "such" / "x")], "does not exist"),
        "map out is a directory": (["map", "virtual", "--system", "k:4x6x4", "--shape", "96x4", "--out", str(tmp_path)], "is a directory"),
    }[case]
    r = run(*args)
    assert r.code == 2, (case, r.err)
    assert needle in r.err and "Traceback" not in r.err and "internal error" not in r.err
