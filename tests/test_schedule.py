"""Collectives written in Python (issue 38, item 5): ``tofusim.Schedule``
runs on the packet engine, the flow model and real buffers like a built-in
algorithm, and ``tofusim coll --schedule FILE`` runs its file form."""

import json

import pytest

import tofusim
from tofusim import ConfigError, Schedule


def part(n, k, i):
    """Block i of k near-equal blocks of n elements: (offset, length)."""
    q, rem = divmod(n, k)
    return (i * q + min(i, rem), q + (1 if i < rem else 0))


def ring_allreduce(p, count, name="python-ring"):
    """Ring allreduce: p-1 steps of reduce-scatter to the next rank, then
    p-1 steps of allgather."""
    s = Schedule("allreduce", ranks=p, count=count, name=name)
    for r in range(p):
        nxt, prv = (r + 1) % p, (r - 1) % p
        last = []
        for t in range(p - 1):
            s.send(r, nxt, part(count, p, (r - t) % p), deps=last)
            last = [s.recv(r, prv, part(count, p, (r - t - 1) % p), combine="sum", deps=last)]
        for t in range(p - 1):
            s.send(r, nxt, part(count, p, (r + 1 - t) % p), deps=last)
            last = [s.recv(r, prv, part(count, p, (r - t) % p), deps=last)]
    return s


def test_a_python_ring_allreduce_times_as_the_built_in_ring_and_is_correct():
    size = 64 << 10
    built_in = tofusim.collective("allreduce", "ring", size, "bgl:4x2x2")
    mine = ring_allreduce(16, size // 8).run("bgl:4x2x2", verify=True)
    assert mine.verified is True and mine.algo == "python-ring"
    assert mine.run.cycles == built_in.run.cycles and mine.time_seconds == built_in.time_seconds
    assert (mine.messages, mine.bytes_sent) == (built_in.messages, built_in.bytes_sent)
    flow = ring_allreduce(16, size // 8).run("bgl:4x2x2", model="flow")
    assert flow.flow is not None and flow.time_seconds == pytest.approx(built_in.time_seconds, rel=0.25)


def test_a_wrong_schedule_fails_verification_or_is_refused():
    s = ring_allreduce(4, 64)
    # The last allgather step of rank 0 replaced by a sum: the result is wrong.
    s.programs[0][-1]["action"]["combine"] = "sum"
    r = s.run("bgl:2x2x1", verify=True)
    assert r.verified is False and "rank" in r.verify_error
    lonely = Schedule("allreduce", ranks=2, count=4)
    lonely.send(0, 1, (0, 4))
    with pytest.raises(ConfigError, match="receives|sends"):
        lonely.run("bgl:2x1x1")
    with pytest.raises(ConfigError, match="deps"):
        lonely.send(1, 0, (0, 4), deps=[3])
    with pytest.raises(ConfigError, match="ranks"):
        ring_allreduce(32, 64).run("bgl:2x2x2")


def test_a_built_in_schedule_round_trips_through_its_file_form(tmp_path, run):
    d = tofusim.collective_schedule("allreduce", "recursive-doubling", 8, 4096)
    s = Schedule.from_dict(d)
    assert s.name == "recursive-doubling" and s.ranks == 8
    path = s.save(tmp_path / "rd.json")
    assert Schedule.load(path).to_dict()["programs"] == s.to_dict()["programs"]
    p = run("coll", "--schedule", str(path), "--system", "bgl:2x2x2", "--verify", "--json")
    assert p.code == 0, p.err
    r = p.json()
    built = tofusim.collective("allreduce", "recursive-doubling", 4096, "bgl:2x2x2")
    assert r["verified"] is True and r["algo"] == "recursive-doubling" and r["time_seconds"] == built.time_seconds
    bad = run("coll", "--schedule", str(path), "--system", "bgl:2x2x2", "--algo", "ring")
    assert bad.code == 2 and "--schedule gives the algorithm" in bad.err
    (tmp_path / "broken.json").write_text(json.dumps({"collective": {"op": "allreduce"}, "ranks": 2, "count": 4, "programs": []}))
    broken = run("coll", "--schedule", str(tmp_path / "broken.json"), "--system", "bgl:2x2x2")
    assert broken.code == 2 and "broken.json" in broken.err and "0 programs for 2 ranks" in broken.err


def test_a_span_beyond_the_buffer_or_a_huge_vector_is_refused():
    s = Schedule("allreduce", ranks=2, count=4)
    s.send(0, 1, (2**64 - 1, 1))
    s.recv(1, 0, (0, 1))
    with pytest.raises(ConfigError, match="outside the buffer"):
        s.run("bgl:2x1x1", verify=True)
    with pytest.raises(ConfigError, match="count"):
        Schedule("allreduce", ranks=2, count=2**41).run("bgl:2x1x1", verify=True)


@pytest.mark.parametrize("op,algo", [("allreduce", "ring"), ("alltoall", "bruck"), ("bcast", "binomial")])
def test_a_schedule_through_goal_runs_the_same(run, tmp_path, op, algo):
    """Issue 39: a schedule written as GOAL (LogGOPSim's format) and read
    back by tofusim coll --schedule gives the same time to the cycle."""
    from tofusim.schedule import goal_text, run_schedule

    sched = tofusim.collective_schedule(op, algo, 8, 64 << 10)
    text = goal_text(sched, "bgl:2x2x2")
    assert text.splitlines()[1] == "num_ranks 8" and " requires " in text
    f = tmp_path / "s.goal"
    f.write_text(text)
    r = run("coll", "--schedule", str(f), "--system", "bgl:2x2x2", "--json")
    assert r.code == 0, r.err
    assert r.json()["time_seconds"] == run_schedule(sched, "bgl:2x2x2").time_seconds
    f.write_text(text.replace("num_ranks 8", "num_ranks 8\nrank 0 {\n recv 8b from -1\n}", 1))
    bad = run("coll", "--schedule", str(f), "--system", "bgl:2x2x2")
    assert bad.code == 2 and "line 4" in bad.err and "any" in bad.err, bad.err
