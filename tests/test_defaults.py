"""No silent wrong defaults (issue 35): an accepted option changes what is
simulated or is refused with the reason; latencies are physical time."""

from conftest import ROOT


def test_adaptive_routing_on_a_router_without_dynamic_vcs_is_refused(run, tmp_path):
    exp = tmp_path / "tofu.toml"
    exp.write_text('[network]\nsystem = "k:2x2x2"\n[routing]\nalgorithm = "adaptive"\n'
                   '[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 2000\n')
    r = run("run", str(exp))
    assert r.code == 2 and "routing.algorithm" in r.err and "tofu1 router has no dynamic VCs" in r.err and 'algorithm = "dor"' in r.err
    # Without the key the Tofu router routes by dimension order, and says so.
    exp.write_text(exp.read_text().replace('[routing]\nalgorithm = "adaptive"\n', ""))
    r = run("run", str(exp), "--json")
    assert r.code == 0, r.err
    assert r.json()["setup"]["routing"] == "deterministic"
    # A BG/L router made to have no dynamic VCs is refused too, naming the key.
    bgl = tmp_path / "bgl.toml"
    bgl.write_text('[network]\nsystem = "bgl:4x4x4"\n[router]\ndynamic_vcs = 0\n[routing]\nalgorithm = "adaptive"\n'
                   '[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 2000\n')
    r = run("run", str(bgl))
    assert r.code == 2 and "dynamic_vcs = 0" in r.err


def test_hop_latencies_are_nanoseconds_on_every_generation(run, tmp_path):
    # The generic dragonfly's hop was 16 cycles of its 10 GB/s clock (1.6 ns).
    text = (ROOT / "examples/experiments/dragonfly-adversarial.toml").read_text()
    exp = tmp_path / "df.toml"
    exp.write_text(text.replace("load = 1.0", "load = 0.01").replace('pattern = "group-shift"', 'pattern = "uniform"')
                   .replace("cycles = 200000", "cycles = 40000").replace("warmup = 40000", "warmup = 5000"))
    r = run("run", str(exp), "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert abs(d["setup"]["hop_latency_ns"] - 100.0) < 0.5
    # Zero-load latency of a few hops of 100 ns: hundreds of ns, as on the other generations.
    assert 200 < d["latency_ns"]["mean"] < 1500
    assert abs(d["latency_ns"]["mean"] - d["latency"]["mean"] * d["cycle_ns"]) < 1e-6
    # BG/L keeps its 91.4 ns hop (16 cycles of 175 MB/s) on faster links: more cycles there.
    fast = tmp_path / "fast.toml"
    fast.write_text('[network]\ntopology = "torus"\nshape = [4, 4]\nlink_bandwidth = "1.75GB/s"\n'
                    '[workload]\npattern = "uniform"\nload = 0.05\n[run]\ncycles = 3000\n')
    r = run("run", str(fast), "--json")
    assert r.code == 0, r.err
    s = r.json()["setup"]
    assert s["router"]["hop_latency_cycles"] == 160 and abs(s["hop_latency_ns"] - 91.43) < 0.1
    # ... and VC buffers that cover the credit loop there (2 hops + a packet's wire time).
    assert s["router"]["vc_buffer_bytes"] >= 2 * 160 + 256 + 14
    # A latency in ns in the [router] table, or in cycles; not both.
    fast.write_text(fast.read_text().replace("[workload]", "[router]\nhop_latency_ns = 50\n[workload]"))
    r = run("run", str(fast), "--json")
    assert r.code == 0 and r.json()["setup"]["router"]["hop_latency_cycles"] == 88
    fast.write_text(fast.read_text().replace("hop_latency_ns = 50\n", "hop_latency_ns = 50\nhop_latency_cycles = 9\n"))
    r = run("run", str(fast))
    assert r.code == 2 and "router.hop_latency_ns" in r.err and "not both" in r.err


def test_trinaryx3_runs_on_its_definition_and_says_so(run):
    r = run("coll", "allreduce", "--algo", "trinaryx3", "--size", "4MiB", "--system", "k:2x1x2", "--json")
    assert r.code == 0, r.err
    d = r.json()
    s = d["settings"]
    assert s["tnis"] == 3 and d["tnis_used"] == 3 and "3 TNIs" in s["tnis_reason"]
    assert s["segment"].startswith("derived from the pipeline depth") and s["segment_bytes"] % 1920 == 0
    # Given values stay, and say so.
    r = run("coll", "allreduce", "--algo", "trinaryx3", "--size", "4MiB", "--system", "k:2x1x2", "--tnis", "4", "--segment", "64KiB", "--json")
    s = r.json()["settings"]
    assert (s["tnis"], s["segment_bytes"], s["tnis_reason"], s["segment"]) == (4, 65536, "given (--tnis)", "given (--segment)")
    # Other algorithms: every TNI of the node, 64 KiB.
    r = run("coll", "allreduce", "--algo", "ring", "--size", "64KiB", "--system", "k:2x1x2", "--json")
    s = r.json()["settings"]
    assert s["tnis"] == 4 and s["segment_bytes"] == 65536


def test_a_tofud_written_out_gets_six_tnis_and_slicing_stays_tofud(run, tmp_path):
    exp = tmp_path / "d.toml"
    exp.write_text('[network]\ntopology = "tofu"\ngeneration = "tofud"\nshape = [2, 2, 2]\nlink_bandwidth = "6.8GB/s"\n'
                   '[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 2000\n')
    r = run("topo", "--config", str(exp), "--json")
    assert r.code == 0, r.err
    assert r.json()["injection_per_node_Bps"] == 6 * 6.8e9
    k = tmp_path / "k.toml"
    k.write_text('[network]\nsystem = "k:2x3x2"\n[link_errors]\npacket_slicing = "split"\nbit_error_rate = 1e-9\n'
                 '[workload]\npattern = "uniform"\nload = 0.1\n[run]\ncycles = 2000\n')
    r = run("run", str(k))
    assert r.code == 2 and "link_errors.lanes" in r.err and "TofuD" in r.err


def test_a_collective_on_one_rail_of_several_says_so(run):
    r = run("coll", "allreduce", "--algo", "ring", "--size", "64KiB", "--system", "summit:2", "--json")
    assert r.code == 0, r.err
    assert "one of the node's 2 rails is simulated" in r.json()["settings"]["tnis_reason"]
