"""One validation layer (issue 18): the command line passes its values
through to the same checks the Python API calls, so a bad value gives the
same one-line message from both (exit 2 on the command line, a
ConfigError from the API)."""

import pytest

import tofusim
from tofusim import _core

SMALL = '[network]\nsystem = "bgl:2x2x2"\n[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 1000\n'

# (command-line arguments, the same input through the API)
CASES = {
    "unknown operation": (["coll", "allreducex", "--algo", "ring", "--system", "k:2x2x2"],
                          lambda exp, pat: tofusim.coll("allreducex", "ring", 8, "k:2x2x2")),
    "descriptor": (["coll", "allreduce", "--algo", "ring", "--system", "k:2x2x2", "--descriptor", "foo"],
                   lambda exp, pat: tofusim.coll("allreduce", "ring", 8, "k:2x2x2", descriptor="foo")),
    "cmg": (["coll", "allreduce", "--algo", "ring", "--system", "k:2x2x2", "--cmg", "middle"],
            lambda exp, pat: tofusim.coll("allreduce", "ring", 8, "k:2x2x2", cmg="middle")),
    "coll model": (["coll", "allreduce", "--algo", "ring", "--system", "k:2x2x2", "--model", "fluid"],
                   lambda exp, pat: tofusim.coll("allreduce", "ring", 8, "k:2x2x2", model="fluid")),
    "negative root": (["coll", "bcast", "--algo", "binomial", "--system", "k:2x2x2", "--root", "-1"],
                      lambda exp, pat: tofusim.coll("bcast", "binomial", 8, "k:2x2x2", root=-1)),
    "too many TNIs": (["coll", "allreduce", "--algo", "ring", "--system", "k:2x2x2", "--tnis", "99"],
                      lambda exp, pat: tofusim.coll("allreduce", "ring", 8, "k:2x2x2", tnis=99)),
    "run model": (["run", "{exp}", "--model", "fluid"], lambda exp, pat: tofusim.run(SMALL, str(exp), model="fluid")),
    "zero threads": (["run", "{exp}", "--threads", "0"], lambda exp, pat: tofusim.run(SMALL, str(exp), threads=0)),
    "negative threads": (["run", "{exp}", "--threads", "-3"], lambda exp, pat: tofusim.run(SMALL, str(exp), threads=-3)),
    "negative procs": (["pattern", "cg", "--procs", "-5", "--out", "x.txt"], lambda exp, pat: _core.cg_comm_list(-5, "B")),
    "two-letter class": (["pattern", "cg", "--procs", "16", "--class", "AB", "--out", "x.txt"], lambda exp, pat: _core.cg_comm_list(16, "AB")),
    "rmatt objective": (["rmatt", "--torus", "4x4", "--pattern", "{pat}", "--objective", "shortest"],
                        lambda exp, pat: _core.rmatt("4x4", "0 1 8\n", "shortest", 1, None, None, str(pat))),
    "rmatt iterations": (["rmatt", "--torus", "4x4", "--pattern", "{pat}", "--iterations", "-5"],
                         lambda exp, pat: _core.rmatt("4x4", "0 1 8\n", "hop-bytes", 1, -5, None, str(pat))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_command_line_and_the_api_give_the_same_message(run, tmp_path, case):
    exp = tmp_path / "exp.toml"
    exp.write_text(SMALL)
    pat = tmp_path / "pattern.txt"
    pat.write_text("0 1 8\n")
    args, api = CASES[case]
    args = [a.format(exp=exp, pat=pat) for a in args]
    r = run(*args)
    assert r.code == 2, (case, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    with pytest.raises(tofusim.ConfigError) as e:
        api(exp, pat)
    # The same message; its first word names where the value came from.
    api_message = str(e.value).replace("<arguments>", "<command line>", 1)
    assert lines[0] == f"tofusim: error: {api_message}", (lines[0], str(e.value))
