"""`tofusim run`: the JSON shape, the output directory, deadlock and bad-input exit codes."""

import json
from pathlib import Path

import pytest

from conftest import ROOT

SMALL = """
[network]
system = "bgl:4x4x4"
[workload]
pattern = "uniform"
load = 0.05
[run]
cycles = 20000
warmup = 2000
"""


def write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "exp.toml"
    p.write_text(text)
    return str(p)


def test_run_json_has_the_design_keys(run, tmp_path):
    r = run("run", write(tmp_path, SMALL), "--json")
    assert r.code == 0, r.err
    j = r.json()
    for key in ("link_utilization", "payload_utilization", "accepted_load", "latency", "packets_injected", "packets_delivered", "completion_cycles", "cycle_ns", "sim"):
        assert key in j, key
    for key in ("mean", "p50", "p99", "max"):
        assert key in j["latency"]
    for key in ("cycles", "events", "wall_seconds", "peak_memory_bytes"):
        assert key in j["sim"]
    assert j["cycle_ns"] == pytest.approx(1e9 / 175e6)
    assert j["accepted_load"] == pytest.approx(0.05, abs=0.01)
    assert j["deadlock"] is None


def test_run_gives_physical_units_beside_cycles_and_fractions(run, tmp_path):
    """Loads in GB/s per node beside the fraction of injection, latency in
    ns beside cycles: comparable across systems whose cycles differ."""
    exp = write(tmp_path, SMALL)
    j = run("run", exp, "--json").json()
    # BG/L: 6 injection links of 175 MB/s per node.
    assert j["injection_GBps_per_node"] == pytest.approx(6 * 0.175)
    assert j["accepted_GBps_per_node"] == pytest.approx(j["accepted_load"] * j["injection_GBps_per_node"])
    assert j["offered_GBps_per_node"] == pytest.approx(0.05 * 6 * 0.175)
    assert j["latency_ns"]["mean"] == pytest.approx(j["latency"]["mean"] * j["cycle_ns"])
    table = run("run", exp).out
    assert "GB/s per node" in table and "GB/s per link" in table and "(µs)" in table


def test_run_out_dir(run, tmp_path):
    out = tmp_path / "out"
    r = run("run", write(tmp_path, SMALL), "--out", str(out))
    assert r.code == 0, r.err
    for f in ("results.json", "timeseries.csv", "ports.csv", "latency.csv", "timeseries.png", "latency.png"):
        assert (out / f).exists(), f
    res = json.loads((out / "results.json").read_text())
    assert res["packets_delivered"] > 0
    ts_header = (out / "timeseries.csv").read_text().splitlines()[0].split(",")
    assert ts_header[4:8] == ["token_returns", "unblocking_probability", "blocked_token_returns", "blocked_unblocking_probability"]
    header = (out / "ports.csv").read_text().splitlines()[0]
    assert header == "router,port,bytes,packets,busy_cycles,idle_cycles,depleted_cycles"
    assert len((out / "ports.csv").read_text().splitlines()) == 1 + 64 * 6


def test_example_alltoall(run):
    r = run("run", "examples/experiments/alltoall-8x8x8.toml", "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["complete"] and j["link_utilization"] > 0.95


def test_deadlock_exits_1_with_report(run):
    r = run("run", "examples/experiments/ring-no-escape-deadlock.toml", "--json")
    assert r.code == 1
    d = r.json()["deadlock"]
    assert d["wait_cycle_found"] and len(d["blocked_vcs"]) >= 2
    assert "deadlock" in r.err
    # Found by the watchdog: stalled longer than run.deadlock_cycles (5000).
    assert d["detected_by"] == "watchdog" and d["stalled_cycles"] > 5000


def test_unfixed_bubble_deadlock_example(run):
    r = run("run", "examples/experiments/bubble-unfixed-deadlock.toml", "--json")
    assert r.code == 1
    d = r.json()["deadlock"]
    assert d["wait_cycle_found"] and len(d["blocked_vcs"]) == 4
    # Certain before the 3,000-cycle watchdog: no event is left (issue 18:
    # the report said 47 stalled cycles without saying why that sufficed).
    assert d["detected_by"] == "no-event-left" and d["stalled_cycles"] < 3000
    assert "before the run.deadlock_cycles watchdog" in r.err


def test_trace_file_runs_every_packet(run, tmp_path):
    (tmp_path / "packets.csv").write_text("cycle,src,dst,bytes,hints\n0,0,1,64\n5,2,63,256,1\n9,5,3,32,0\n")
    text = SMALL.replace("uniform", "trace").replace("load = 0.05", "trace_file = \"packets.csv\"")
    r = run("run", write(tmp_path, text), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["complete"] and j["packets_delivered"] == 3


def test_planted_fault_exits_1(run, tmp_path):
    text = SMALL + "plant_fault = \"leak-token\"\nplant_after = 100\naudit_cycles = 1000\n"
    r = run("run", write(tmp_path, text), "--json")
    assert r.code == 1
    assert r.json()["invariant_error"]["kind"] == "token-conservation"


DRAGONFLY = """[network]
topology = "dragonfly"
groups = 5
nodes_per_router = 1
routers_per_group = 4
global_links_per_router = 1
links_per_group_pair = 1
link_bandwidth = "5GB/s"
"""
OPEN = '[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 1000\n'

BAD = {
    "unknown section": (SMALL + "[colour]\nx = 1\n", "colour: unknown key"),
    "unknown router key": (SMALL + "[router]\nvcs = 3\n", "router.vcs: unknown key"),
    "bad escape": (SMALL + "[router]\nescape = \"tunnel\"\n", "router.escape: expected one of bubble, bubble-unfixed"),
    "bad pattern": (SMALL.replace("uniform", "zigzag"), "workload.pattern: expected one of"),
    "bad packet size": (SMALL.replace("load = 0.05", "load = 0.05\npacket_bytes = 100"), "workload.packet_bytes: expected a multiple of the router's 32-byte chunk"),
    "load out of range": (SMALL.replace("load = 0.05", "load = 1.5"), "workload.load"),
    "warmup too long": (SMALL.replace("warmup = 2000", "warmup = 30000"), "run.warmup"),
    "aries router: too many VCs per hop class": ("[network]\nsystem = \"piz-daint:2\"\n[router]\nclass_vcs = 9\n[workload]\npattern = \"uniform\"\nload = 0.1\n", "router.class_vcs"),
    "hop-class VCs on a torus": (SMALL.replace("[workload]", "[router]\nclass_vcs = 2\n[workload]"), "router.class_vcs: VCs per hop class apply to dragonflies"),
    "trace node out of range": (SMALL.replace("uniform", "trace").replace("load = 0.05", "trace = [[0, 0, 64, 32]]"), "workload.trace[0]: expected node ids up to 63"),
    "trace row too short": (SMALL.replace("uniform", "trace").replace("load = 0.05", "trace = [[0, 0, 1]]"), "workload.trace[0]: expected 4 to 5 integers"),
    "trace file missing": (SMALL.replace("uniform", "trace").replace("load = 0.05", "trace_file = \"nope.csv\""), "workload.trace_file: cannot read"),
    "a pair no route joins": (SMALL.replace('system = "bgl:4x4x4"', 'system = "bgl:4x4x4"\n[network.faults]\nnodes = [[1, 0, 0], [3, 0, 0], [0, 1, 0], [0, 3, 0], [0, 0, 1], [0, 0, 3]]'), "network.faults: no route from router (0,0,0) to router"),
    "a fill through a failed node": (SMALL.replace('system = "bgl:4x4x4"', 'system = "bgl:4x4x4"\n[network.faults]\nnodes = [1]').replace('pattern = "uniform"', 'pattern = "line-fill"\naxis = 0\nmessage_bytes = 1000').replace("load = 0.05\n", ""), "workload.pattern: line and plane fills with failed nodes are not modelled"),
    "resized preset too large": (SMALL.replace("bgl:4x4x4", "k:100000x100000x100000"), "network.system: k:100000x100000x100000: too many nodes"),
    "packet size zero": (SMALL.replace("load = 0.05", "load = 0.05\npacket_bytes = 0"), "workload.packet_bytes: expected a multiple of the router's 32-byte chunk from 32 to 256 bytes (its largest packet), found 0"),
    "packet size too large": (SMALL.replace("load = 0.05", "load = 0.05\npacket_bytes = 99999999"), "workload.packet_bytes: expected a multiple of the router's 32-byte chunk from 32 to 256 bytes (its largest packet), found 99999999"),
    "load with a finite pattern": (SMALL.replace("uniform", "alltoall").replace("load = 0.05", "load = 0.05\nmessage_bytes = 64"), "workload.load: applies to open-loop patterns; alltoall is finite"),
    "open loop without cycles": (SMALL.replace("cycles = 20000\nwarmup = 2000\n", ""), "run.cycles: missing; an open-loop pattern needs the run's length"),
    # Keys nothing would read (issue 18: every input modelled or refused).
    "lanes without a lane rate": (SMALL.replace('system = "bgl:4x4x4"', 'system = "bgl:4x4x4"\nlanes = 4'), "network.lanes: applies with lane_rate"),
    "aries key on a generic dragonfly": (DRAGONFLY + "chassis_per_group = 2\n" + OPEN, "network.chassis_per_group: applies to form = \"aries\" dragonflies"),
    "generic key on an aries dragonfly": ('[network]\nsystem = "aries-720"\nrouters_per_group = 4\n' + OPEN, "network.routers_per_group: applies to form = \"generic\" dragonflies"),
    "links per cable beside links per pair": (DRAGONFLY + "links_per_cable = 2\n" + OPEN, "network.links_per_cable: applies with cables_per_group_pair"),
    "a router pair on a torus link": (SMALL.replace('system = "bgl:4x4x4"', 'system = "bgl:4x4x4"\n[network.faults]\nlinks = [{ node = 0, port = "x+", routers = [0, 1] }]'), "network.faults.links[0].routers: unknown key"),
    "too many NIC interfaces": (SMALL.replace('system = "bgl:4x4x4"', 'system = "bgl:4x4x4"\nnic_interfaces = 40'), "network.nic_interfaces"),
    "region outside": ("[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"hot-region\"\nload = 0.1\nregion_shape = [8, 1, 1]\n", "workload.region_shape"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_experiment_exits_2(run, tmp_path, case):
    text, needle = BAD[case]
    r = run("run", write(tmp_path, text))
    assert r.code == 2, (case, r.err)
    assert needle in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1


def _dragonfly(tmp_path, algorithm, extra=""):
    text = (ROOT / "examples/experiments/dragonfly-adversarial.toml").read_text()
    text = text.replace('algorithm = "valiant"', f'algorithm = "{algorithm}"') + extra
    f = tmp_path / f"df-{algorithm}.toml"
    f.write_text(text)
    return f


def test_dragonfly_adversarial_minimal_at_the_global_link_bound_valiant_above(run, tmp_path):
    # 4 nodes per group share the one global link to the next group:
    # 256/(256+14) of a link over 4 nodes.
    bound = 256 / (256 + 14) / 4
    got = {}
    for algo in ("minimal", "valiant", "ugal", "ugal-g", "adaptive-prefer-minimal"):
        r = run("run", str(_dragonfly(tmp_path, algo)), "--json")
        assert r.code == 0, r.err
        j = r.json()
        assert j.get("deadlock") is None
        got[algo] = j["accepted_load"]
    assert abs(got["minimal"] / bound - 1) < 0.05, got
    for algo in ("valiant", "ugal", "ugal-g", "adaptive-prefer-minimal"):
        assert got[algo] > 1.3 * bound, (algo, got)


def test_dragonfly_input_errors_name_the_key(run, tmp_path):
    bad = tmp_path / "bad.toml"
    text = (ROOT / "examples/experiments/dragonfly-adversarial.toml").read_text()
    # Four nodes per router are fine (each its own FIFOs and host interface).
    bad.write_text(text.replace("nodes_per_router = 1", "nodes_per_router = 4"))
    r = run("run", str(bad), "--json")
    assert r.code == 0 and r.json()["accepted_load"] > 0, r.err
    # 64 nodes x 16 FIFOs + 4 ports x 3 VCs = 1,036 queues: more than a router holds.
    bad.write_text(text.replace("nodes_per_router = 1", "nodes_per_router = 64") + "[router]\ninjection_fifos = 16\n")
    r = run("run", str(bad))
    assert r.code == 2 and "router.injection_fifos" in r.err, r.err
    bad.write_text(text.replace('pattern = "group-shift"', 'pattern = "tornado"'))
    r = run("run", str(bad))
    assert r.code == 2 and "workload.pattern" in r.err
    bad.write_text(text.replace('algorithm = "valiant"', 'algorithm = "adaptive"'))
    r = run("run", str(bad))
    assert r.code == 2 and "routing.algorithm" in r.err


def test_a_huge_value_gives_a_one_line_error(run, tmp_path):
    """Issue 18: 100-200 KB values were echoed whole in the error line."""
    r = run("run", write(tmp_path, SMALL.replace('"uniform"', '"' + "z" * 200_000 + '"')))
    assert r.code == 2
    assert "workload.pattern" in r.err and len(r.err) < 1000 and r.err.count("\n") == 1


def test_the_run_length_is_estimated_and_a_long_run_announced(tmp_path):
    import signal
    import subprocess
    import time

    from conftest import ROOT, TOFUSIM

    import tofusim

    # The estimate follows the packets the run makes (uniform on 4^3:
    # 3 mean hops plus the ejection per packet).
    r = tofusim.run(SMALL)
    hops = r["sim"]["estimated_packet_hops"]
    assert 0.8 < hops / (4 * r["packets_injected"]) < 1.25, (hops, r["packets_injected"])
    # A run of hours is announced on stderr before it starts; Ctrl-C stops it.
    exp = tmp_path / "long.toml"
    exp.write_text(SMALL.replace("cycles = 20000", "cycles = 2000000000"))
    p = subprocess.Popen([TOFUSIM, "run", str(exp)], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "packet-hops to simulate: roughly" in err and "minutes" in err, err
    # A short one is not.
    r = subprocess.run([TOFUSIM, "run", write(tmp_path, SMALL)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "packet-hops" not in r.stderr


def test_the_failure_example_runs_and_counts_what_it_lost(run):
    r = run("run", "examples/experiments/tofu-link-failure.toml", "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert j["complete"] and j["invariant_error"] is None
    assert j["packets_lost"] > 0 and j["packets_resent"] <= j["packets_lost"]
    events = j["setup"]["fault_events"]
    assert [e["recovers"] for e in events] == [False, True, False, True]
    assert events[2]["target"] == {"router": events[2]["target"]["router"]}
    text = run("run", "examples/experiments/tofu-link-failure.toml")
    assert "failures during the run" in text.out and "sent again by their sources" in text.out


@pytest.mark.parametrize("faults, key", [
    ('events = [{ cycle = 10, action = "fail", node = [1, 0, 0] }]', "faults.events[0].node"),
    ('events = [{ cycle = 10, action = "fail", node = [1, 0, 0], port = "q+" }]', "faults.events[0].port"),
    ('events = [{ cycle = 999999, action = "fail", node = [1, 0, 0], port = "x+" }]', "faults.events[0].cycle"),
    ('events = [{ cycle = 10, action = "fail", node = [1, 0, 0], port = "x+" }]\nresend = 5', "faults.resend"),
])
def test_failure_schedules_that_cannot_happen_exit_2_in_one_line(run, tmp_path, faults, key):
    r = run("run", write(tmp_path, SMALL + "[faults]\n" + faults + "\n"))
    assert r.code == 2, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and key.split(":")[0] in lines[0], r.err


def test_the_flow_model_refuses_failures_during_a_run_and_link_errors(run, tmp_path):
    for table in ('[faults]\nevents = [{ cycle = 10, action = "fail", node = [1, 0, 0], port = "x+" }, { cycle = 20, action = "recover", node = [1, 0, 0], port = "x+" }]\n',
                  "[link_errors]\npacket_error_rate = 0.001\n"):
        r = run("run", write(tmp_path, SMALL + table), "--model", "flow")
        assert r.code == 2, r.err
        assert ("faults" if "faults" in table else "link_errors") in r.err and "packet engine" in r.err


def test_failure_events_as_an_array_of_tables(run, tmp_path):
    events = "".join(f'[[faults.events]]\ncycle = {c}\naction = "{a}"\nnode = [1, 0, 0]\nport = "x+"\n' for c, a in ((5000, "fail"), (9000, "recover")))
    r = run("run", write(tmp_path, SMALL + events), "--json")
    assert r.code == 0, r.err
    j = r.json()
    assert [e["cycle"] for e in j["setup"]["fault_events"]] == [5000, 9000]
    assert j["invariant_error"] is None and j["packets_lost"] == j["packets_resent"]
