"""`tofusim jobs`: many jobs on one machine (issue 39)."""

import pytest

import tofusim

MIX = """
system = "k:2x3x2"
placement = "{placement}"

[[job]]
name = "halo"
kind = "halo"
shape = "4x6x2"
bytes = "64KiB"
iterations = 2

[[job]]
name = "allreduce"
kind = "collective"
op = "allreduce"
size = "1MiB"
shape = "4x3x4"

[[job]]
name = "background"
kind = "background"
shape = "6x4x2"
bytes = "4KiB"
load = 0.2
duration_us = 200
"""


def test_rectangles_against_random_nodes_from_the_command_line(run, tmp_path):
    rect, rand = tmp_path / "rect.toml", tmp_path / "rand.toml"
    rect.write_text(MIX.format(placement="tofu-rect"))
    rand.write_text(MIX.format(placement="random"))
    r = run("jobs", str(rect), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert [x["kind"] for x in j["jobs"]] == ["halo", "collective", "background"]
    assert all(x["links_shared"] == 0 and x["slowdown"] == 1.0 for x in j["jobs"])
    # The library's torus-aware choice on the rectangle.
    assert "trinaryx3" in j["jobs"][1]["what"]
    r = run("jobs", str(rand))
    assert r.code == 0, r.err
    assert "shares with" in r.out and "links used by more than one job" in r.out
    shared = tofusim.jobs_file(rand)
    assert all(x["links_shared"] > 0 for x in shared["jobs"])
    assert max(x["slowdown"] for x in shared["jobs"]) > 1.02


@pytest.mark.parametrize("edit,needle", [
    (("load = 0.2", "load = 2"), "job[2].load"),
    (("iterations = 2", "iterations = 2\nmessages = 3"), "job[0].messages"),
    (('placement = "random"', 'placement = "group-spread"'), "dragonfly"),
    (('shape = "4x6x2"', 'shape = "4x6x9"'), "nodes"),
])
def test_bad_mixes_exit_2_naming_the_key(run, tmp_path, edit, needle):
    f = tmp_path / "mix.toml"
    f.write_text(MIX.format(placement="random").replace(*edit))
    r = run("jobs", str(f))
    assert r.code == 2 and needle in r.err and str(f) in r.err, r.err



def test_out_writes_the_result_and_the_placement_picture(run, tmp_path):
    f = tmp_path / "mix.toml"
    f.write_text(MIX.format(placement="random"))
    r = run("jobs", str(f), "--out", str(tmp_path / "out"))
    assert r.code == 0, r.err
    assert (tmp_path / "out" / "placement.png").stat().st_size > 10_000
    import json

    j = json.loads((tmp_path / "out" / "result.json").read_text())
    assert sorted(p for x in j["jobs"] for p in x["positions"]) == sorted(set(p for x in j["jobs"] for p in x["positions"]))
    assert j["layout_width"] > 0 and j["layout_rows"]
    # The HTML report of the directory: the jobs, the placement, the shared links.
    r = run("report", str(tmp_path / "out"))
    assert r.code == 0, r.err
    page = (tmp_path / "out" / "report.html").read_text()
    for title in ("Jobs: alone and in the mix", "Placement on the machine", "Shared links"):
        assert title in page


def test_lockstep_rounds_from_the_command_line(run, tmp_path):
    """`model = "flow-rounds"`: background traffic keeps its period, the
    rectangles share nothing, and the run says how it was solved."""
    f = tmp_path / "mix.toml"
    f.write_text('model = "flow-rounds"\n' + MIX.format(placement="tofu-rect"))
    r = run("jobs", str(f))
    assert r.code == 0, r.err
    assert "on the flow model in lockstep rounds" in r.out and "max-min solves" in r.out
    j = tofusim.jobs_file(str(f))
    assert j["model"] == "flow-rounds" and j["lockstep"]["rounds"] > 0
    by = {x["name"]: x for x in j["jobs"]}
    # Open loop: 200 µs of sends at one per period; it ends after them.
    assert 200 <= by["background"]["alone_us"] < 260, by["background"]
    assert all(abs(x["slowdown"] - 1) < 1e-9 and x["links_shared"] == 0 for x in j["jobs"])
