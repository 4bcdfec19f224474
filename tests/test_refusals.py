"""Inputs that used to end in an internal error (exit 1), a traceback, a
hang or a silent default (issue 37): each is now refused with exit 2 and
one line naming the option and what was expected."""

import pytest


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
])
def test_refused_in_one_line(run, args, needle):
    r = run(*args)
    assert r.code == 2, (args, r.code, r.err)
    assert needle in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
