"""`tofusim reproduce`: every case at reduced scale, in the DESIGN.md JSON shape."""

import pytest

from tofusim.reproduce import CASES


def test_list(run):
    r = run("reproduce", "--list", "--json")
    assert r.code == 0
    ids = [c["case"] for c in r.json()["cases"]]
    assert ids == list(CASES)


@pytest.mark.parametrize("case", list(CASES))
def test_case_reduced_scale(run, case):
    r = run("reproduce", case, "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["case"] == case and j["source"] and j["title"] and "setup" in j
    for m in j["metrics"]:
        assert set(m) >= {"name", "unit", "measured", "published", "tolerance", "within"}
        if m["published"] is not None:
            assert m["within"], m
        assert m["measured"] > 0


def test_unknown_case(run):
    r = run("reproduce", "bgl-nothing")
    assert r.code == 2 and "valid cases are" in r.err
