"""`tofusim topo`: the table, the JSON, the world-systems table and every bad-input class."""

import time
from pathlib import Path

import pytest

from conftest import ROOT


def test_k_json(run):
    r = run("topo", "k", "--json")
    assert r.code == 0, r.err
    m = r.json()
    assert m["nodes"] == 82_944
    assert m["injection_bandwidth_Bps"] == pytest.approx(1.66e15, rel=0.005)
    assert m["bisection_bandwidth_Bps"] == pytest.approx(46.08e12, rel=1e-9)
    for key in ("nodes", "routers", "links", "diameter", "average_hops", "bisection_bandwidth_Bps", "injection_bandwidth_Bps"):
        assert key in m


def test_bgq_json(run):
    m = run("topo", "bgq", "--json").json()
    assert m["injection_bandwidth_Bps"] == pytest.approx(1.97e15, rel=0.01)
    assert m["bisection_bandwidth_Bps"] == pytest.approx(49e12, rel=0.01)


def test_table_is_readable(run):
    r = run("topo", "bgl-midplane")
    assert r.code == 0
    assert "512" in r.out and "bisection" in r.out and "average hops" in r.out


def test_fugaku_answers_quickly(run):
    t0 = time.perf_counter()
    r = run("topo", "fugaku", "--json")
    assert r.code == 0
    assert time.perf_counter() - t0 < 2.0
    assert r.json()["nodes"] == 158_976


def test_world_systems_ratio_column(run):
    rows = {r["system"]: r for r in run("topo", "--compare", "--json").json()["rows"]}
    want = {"k": 36, "bgq": 40, "taihulight": 7.3, "piz-daint": 2.0, "summit": 1.0, "oakforest-pacs": 1.0}
    for name, ratio in want.items():
        assert round(rows[name]["ratio"], 1 if ratio < 10 else 0) == pytest.approx(ratio, abs=0.051), name
    v = rows["k virtual 48x36x48"]
    assert v["bisection_bandwidth_Bps"] == pytest.approx(34.56e12)


def test_world_table_text(run):
    r = run("topo", "--compare")
    assert r.code == 0
    assert "36.00X" in r.out and "40.00X" in r.out and "7.31X" in r.out


def test_virtual_54x48x32_is_the_open_question(run):
    rows = run("topo", "--compare", "k", "--virtual", "54x48x32", "--json").json()["rows"]
    assert rows[1]["bisection_bandwidth_Bps"] == pytest.approx(30.72e12)


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "systems").glob("*.toml")))
def test_example_systems(run, path):
    r = run("topo", "--config", str(path), "--json")
    assert r.code == 0, r.err
    assert r.json()["nodes"] > 0


def test_faulty_example(run):
    m = run("topo", "--config", "examples/systems/k-faulty.toml", "--json").json()
    assert m["faulty_nodes"] == 1 and m["faulty_links"] == 1
    assert m["nodes"] == 4 * 3 * 4 * 12 - 1
    # A failed node of a direct network takes its router.
    assert m["routers"] == m["nodes"]
    text = run("topo", "--config", "examples/systems/k-faulty.toml").out
    assert "1 node, 1 link" in text
    assert "BFS" in m["methods"]["hops"]


def test_version_and_help(run):
    r = run("--version")
    assert r.code == 0 and "tofusim" in r.out
    for args in (["--help"], ["topo", "--help"]):
        r = run(*args)
        assert r.code == 0 and "Usage" in r.out


def test_list_and_docs_in_step(run):
    r = run("topo", "--list")
    assert r.code == 0 and "fugaku" in r.out
    md = run("topo", "--list", "--markdown").out
    assert md == (ROOT / "docs" / "presets.md").read_text(), "docs/presets.md is stale: run `make docs`"


BAD_FILES = {
    "unknown key": ("[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"5GB/s\"\ncolour = 3\n", "network.colour: unknown key"),
    "unknown table": ("[network]\nsystem = \"k\"\n[network.extra]\nx = 1\n", "network.extra: unknown key"),
    "wrong type": ("[network]\ntopology = \"torus\"\nshape = \"4x4\"\nlink_bandwidth = \"5GB/s\"\n", "network.shape: expected an array of integers, found a string"),
    "zero length": ("[network]\ntopology = \"torus\"\nshape = [4, 0]\nlink_bandwidth = \"5GB/s\"\n", "network.shape[1]"),
    "negative length": ("[network]\ntopology = \"mesh\"\nshape = [-4]\nlink_bandwidth = \"5GB/s\"\n", "network.shape[0]"),
    "bad unit": ("[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"5 furlongs\"\n", "network.link_bandwidth"),
    "tofu abc": ("[network]\ntopology = \"tofu\"\nshape = [2, 2, 2]\nabc = [2, 2, 3]\nlink_bandwidth = \"5GB/s\"\n", "network.abc"),
    "tofu shape": ("[network]\ntopology = \"tofu\"\nshape = [2, 2, 2, 2, 3, 2]\nlink_bandwidth = \"5GB/s\"\n", "network.shape: expected 3 lengths"),
    "overfull dragonfly": (
        "[network]\ntopology = \"dragonfly\"\ngroups = 20\nrouters_per_group = 2\nnodes_per_router = 1\nglobal_links_per_router = 2\nlink_bandwidth = \"1GB/s\"\n",
        "network.groups",
    ),
    "unknown preset": ("[network]\nsystem = \"k2\"\n", "valid systems are: k, fx10"),
    "unknown topology": ("[network]\ntopology = \"hypercube\"\n", "network.topology: expected one of torus, mesh, tofu, dragonfly, fattree"),
    "missing network": ("[run]\ncycles = 3\n", "missing table [network]"),
    "toml syntax": ("[network\n", "invalid TOML"),
    "fault out of range": ("[network]\nsystem = \"bgl-midplane\"\n[network.faults]\nnodes = [[9, 0, 0]]\n", "network.faults.nodes[0][0]"),
    "fault port": ("[network]\nsystem = \"bgl-midplane\"\n[network.faults]\nlinks = [{ node = [0, 0, 0], port = \"w+\" }]\n", "network.faults.links[0].port"),
    # Issue 18: accepted as nonsense before.
    "absurd rate": ("[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"1e300GB/s\"\n", "network.link_bandwidth: expected at most 100TB/s"),
    "repeated axis names": ("[network]\ntopology = \"torus\"\nshape = [4, 4]\naxis_names = [\"x\", \"x\"]\nlink_bandwidth = \"5GB/s\"\n", "network.axis_names: expected 2 different names"),
    "k-ary n-tree too large": ("[network]\ntopology = \"fattree\"\nk = 4096\nlevels = 8\nlink_bandwidth = \"5GB/s\"\n", "network.levels: 4096^8 nodes: too many"),
    "levels with down lists": ("[network]\ntopology = \"fattree\"\ndown = [4, 4]\nup = [1, 4]\nlevels = 3\nlink_bandwidth = \"5GB/s\"\n", "network.levels: goes with k"),
    "bad resize": ("[network]\nsystem = \"summit:4x4\"\n", "a number of top-level subtrees or 3 down-degrees"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_input_exits_2_with_one_line(run, tmp_path: Path, case):
    text, needle = BAD_FILES[case]
    f = tmp_path / "bad.toml"
    f.write_text(text)
    r = run("topo", "--config", str(f))
    assert r.code == 2, (case, r.out, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert str(f) in lines[0] and needle in lines[0], lines[0]
    assert "Traceback" not in r.err


@pytest.mark.parametrize(
    "args,needle",
    [
        (["topo", "kk"], "unknown system \"kk\""),
        (["topo", "k:8x8"], "XYZ shape"),
        (["topo", "--config", "does/not/exist.toml"], "cannot read"),
        (["topo"], "expected one SYSTEM"),
        (["topo", "--compare", "--virtual", "4xq"], "--virtual"),
        (["topo", "k", "--bogus"], "No such option"),
        (["nosuchcommand"], "No such command"),
    ],
)
def test_bad_command_line_exits_2(run, args, needle):
    r = run(*args)
    assert r.code == 2, (args, r.err)
    assert needle in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert "Traceback" not in r.err


def test_a_network_of_failed_nodes_is_not_connected(run, tmp_path: Path):
    p = tmp_path / "dead.toml"
    p.write_text("[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"5GB/s\"\n[network.faults]\nnodes = [0, 1, 2, 3]\n")
    r = run("topo", "--config", str(p), "--json")
    assert r.code in (0, 2), r.err
    if r.code == 0:
        m = r.json()
        assert m["nodes"] == 0 and m["connected"] is False


def test_virtual_rows_show_the_published_value_only_for_the_papers_shape(run):
    rows = {r["system"]: r for r in run("topo", "--compare", "k", "--json").json()["rows"]}
    assert rows["k virtual 48x36x48"]["published"] is not None
    rows = {r["system"]: r for r in run("topo", "--compare", "k", "--virtual", "54x48x32", "--json").json()["rows"]}
    assert rows["k virtual 54x48x32"]["published"] is None
