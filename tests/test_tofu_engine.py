"""Tofu in the packet engine: `tofusim run` on a Tofu preset uses the Tofu
model (the same one `tofusim coll` and the reproduction cases use)."""

from conftest import ROOT


def test_neighbour_puts_reach_the_put_throughput_of_the_reproduction(run):
    r = run("run", str(ROOT / "examples" / "experiments" / "tofu-neighbor-put.toml"), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["complete"] and j["invariant_error"] is None
    # Payload per link: the accepted packet bytes of one node (one stream,
    # one link) times the payload share of a packet (Tofu: 1,920 of 1,984).
    injection_Bps = 4 * 5e9
    link_payload_GBps = j["accepted_load"] * injection_Bps * 1920 / 1984 / 1e9
    p = run("reproduce", "tofu-put-throughput", "--json")
    assert p.code == 0, p.err
    put = next(m["measured"] for m in p.json()["metrics"] if m["name"].startswith("one-way put throughput, tofu1"))
    assert abs(link_payload_GBps / put - 1) < 0.02, (link_payload_GBps, put)
    # 0.2 ns cycles: a byte time of a 5 GB/s Tofu1 link, not BG/L's.
    assert j["cycle_ns"] == 0.2
