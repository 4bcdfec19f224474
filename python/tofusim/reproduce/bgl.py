"""Blue Gene/L torus results (source [S:004]; docs/sources.md, BG/L router)."""

from __future__ import annotations

from typing import Any

from ..api import Experiment
from .case import case_maker
from .unbudgeted import run_experiment

SOURCE = "[S:004] Adiga et al., Blue Gene/L torus interconnection network, IBM J. Res. & Dev. 49(2/3), 2005"


def _wire_bytes(r: dict[str, Any], packet_bytes: int = 256) -> int:
    """Link time of one packet in the run's router: bytes plus the per-packet overhead."""
    return packet_bytes + r["setup"]["router"]["overhead_bytes"]


def _bgl(shape: str, network: dict[str, Any] | None = None, **tables: Any) -> Experiment:
    """An experiment on the BG/L preset of ``shape``."""
    return Experiment(f"bgl:{shape}", network=network, file="<reproduce>", **tables)


def _run(exp: Experiment, ports: bool = False) -> dict[str, Any]:
    r = run_experiment(exp, ports=ports)
    if r.get("deadlock") or r.get("invariant_error"):
        raise RuntimeError(f"run failed: {r.get('deadlock') or r.get('invariant_error')}")
    return r


def _alltoall(shape: str, packets: int, algorithm: str = "adaptive", ports: bool = False) -> dict[str, Any]:
    return _run(_bgl(shape, routing={"algorithm": algorithm},
                     workload={"pattern": "alltoall", "packets_per_pair": packets, "packet_bytes": 256, "header_bytes": 16}), ports=ports)


def _longest_axis_spread(r: dict[str, Any]) -> float:
    """The busiest link of the x axis (the longest) over the mean of its
    links, in packets: 1 when the all-to-all loads them evenly."""
    xs = [p["packets"] for p in r["ports"] if p["port"].startswith("x")]
    return max(xs) / (sum(xs) / len(xs))


def packet_format(scale: str) -> dict[str, Any]:
    from . import metric

    r = _alltoall("4x4x4", 1)
    # Measured wire time per packet-hop from the run's own link counters.
    hops = r["sim"]["packet_hops"]
    busy = r["link_utilization"] * r["measured_cycles"] * 64 * 6
    return {
        "metrics": [
            metric("wire time of a 256-byte packet", "byte-times", busy / hops, 270.0, 0.001),
            metric("payload efficiency (payload / link utilisation)", "fraction", r["payload_utilization"] / r["link_utilization"], 240 / 270, 0.001),
        ],
        "setup": {"network": "bgl:4x4x4", "workload": "alltoall, 1 packet per pair, 256 B packets with 16 B header", "overhead_bytes": r["setup"]["router"]["overhead_bytes"]},
    }


def alltoall(scale: str) -> dict[str, Any]:
    from . import metric

    shape, k = ("16x16x16", 1) if scale == "full" else ("8x8x8", 2)
    dyn = _alltoall(shape, k)
    det = _alltoall(shape, k, "dor")
    return {
        "metrics": [
            metric("link utilisation, dynamic routing", "fraction", dyn["link_utilization"], 0.98, 0.03),
            metric("payload utilisation, dynamic routing", "fraction", dyn["payload_utilization"], 0.87, 0.03),
            metric("link utilisation, deterministic routing", "fraction", det["link_utilization"], None, None),
        ],
        "setup": {"network": f"bgl:{shape}", "packets_per_pair": k, "completion_cycles": {"dynamic": dyn["completion_cycles"], "deterministic": det["completion_cycles"]}},
    }


def alltoall_message_size(scale: str) -> dict[str, Any]:
    """B9: 8x8x8 all-to-all, % of peak vs payload bytes per pair.

    The thin packet layer puts a 16-byte software header in every packet;
    one pair's message of m bytes travels as ceil(m / 240) packets, the last
    shortened to whole 32-byte chunks. Peak: every link busy with full
    packets, i.e. a payload utilisation of 240/270."""
    from . import metric

    sizes = [16, 48, 112, 240, 720] if scale != "full" else [16, 48, 112, 240, 480, 960, 1440, 1920, 2400]
    shape = "8x8x8"
    peak = 240 / 270
    rows, curve = [], []
    for m in sizes:
        r = _run(_bgl(shape, workload={"pattern": "alltoall", "message_bytes": m, "header_bytes": 16}))
        frac = r["payload_utilization"] / peak
        curve.append((m, frac))
        rows.append(metric(f"{m} B per pair: fraction of peak", "fraction", frac, None, None))
    # Issue 23, case 2: what "fraction of peak" counts, four ways, for the
    # source's two named points — one 32-byte packet per pair (16 B of
    # payload behind the 16-byte software header) and 10 full packets per
    # pair (2,400 B of payload). Every packet of a point has one size, so
    # the bytes of each kind are the link utilisation scaled by their share
    # of the wire bytes (packet + the link's per-packet overhead).
    definitions: dict[str, dict[str, float]] = {}
    for label, m in (("1 x 32-byte packet per pair", 16), ("10 full packets per pair", 2400)):
        r = _run(_bgl(shape, workload={"pattern": "alltoall", "message_bytes": m, "header_bytes": 16}))
        packet = 32 if m == 16 else 256
        wire = _wire_bytes(r, packet)
        packets_per_pair = -(-m // 240)
        # B17: an even k-ary torus all-to-all puts N*k/8 packets per packet
        # per pair on every link; with every link busy that takes this long.
        n, k = 512, 8
        ideal = n * k / 8 * packets_per_pair * wire
        d = {
            "payload over link bandwidth, against full packets' 240/270": r["payload_utilization"] / peak,
            "payload over link bandwidth": r["payload_utilization"],
            "packet bytes (payload + 16 B software header) over link bandwidth": r["link_utilization"] * packet / wire,
            "wire bytes (packet + link overhead): link utilisation": r["link_utilization"],
            "all links busy the whole run (B17 time) over the completion time": ideal / r["completion_cycles"],
        }
        definitions[label] = d
        for what, v in d.items():
            rows.append(metric(f"{label}: {what}", "fraction", v, None, None, unpublished=True))
    return {
        "metrics": rows,
        "setup": {"network": f"bgl:{shape}", "header_bytes": 16, "peak_payload_utilization": peak, "payload_bytes_per_pair": sizes,
                  "fraction_of_peak_definitions": definitions},
        "plots": [{"title": "B9: 512-node all-to-all, fraction of peak vs message size", "x": "payload bytes per pair", "y": "fraction of peak", "curves": {"dynamic routing": [list(p) for p in curve]}}],
    }


def alltoall_asymmetric(scale: str) -> dict[str, Any]:
    from . import metric

    # Bound: each dimension's links carry load in proportion to its length, so
    # with the longest dimension saturated the mean link utilisation is
    # sum(L) / (3 max(L)).
    def bound(lengths: list[int]) -> float:
        return sum(lengths) / (len(lengths) * max(lengths))

    full = [64, 32, 32]
    shape = [32, 16, 16] if scale == "full" else [8, 4, 4]
    name = "x".join(map(str, shape))
    r = _alltoall(name, 4 if scale != "full" else 1)
    b = bound(shape)
    rows = [
        metric("peak link utilisation bound, 64x32x32", "fraction", bound(full), 0.667, 0.005),
        metric("payload utilisation bound, 64x32x32", "fraction", bound(full) * 240 / 270, 0.59, 0.01),
        metric(f"link utilisation, {name}", "fraction", r["link_utilization"], None, None),
        metric(f"fraction of the bound, {name}", "fraction", r["link_utilization"] / b, None, None),
    ]
    setup: dict[str, Any] = {"network": f"bgl:{name}", "bound": b, "completion_cycles": r["completion_cycles"]}
    # Issue 23, case 2: what keeps the all-to-all from the bound. Adaptive
    # routing against dimension order on the same shape, and how evenly
    # each loads the longest axis's links (at full scale on 16x8x8: the
    # 32x16x16 run alone takes an hour).
    small, packets = ("16x8x8", 1) if scale == "full" else (name, 4)
    for algorithm in ("adaptive", "deterministic"):
        x = _alltoall(small, packets, algorithm, ports=True)
        bx = bound([int(n) for n in small.split("x")])
        rows.append(metric(f"{small}, {algorithm} routing: fraction of the bound", "fraction", x["link_utilization"] / bx, None, None, unpublished=True))
        rows.append(metric(f"{small}, {algorithm} routing: busiest x link over the x links' mean (packets)", "ratio", _longest_axis_spread(x), None, None, unpublished=True))
        setup[f"{small}_{algorithm}_completion_cycles"] = x["completion_cycles"]
    # Why adaptive routing falls behind here (issue 23, case 2): past
    # saturation its throughput declines on an asymmetric torus (packets
    # advance on the free short axes and wait in their buffers for the
    # saturated long one), and an all-to-all is an overload. Uniform random
    # traffic on 16x8x8 below saturation (both routings accept what is
    # offered; the peak is about 0.075) and at full load.
    for load in (0.07, 1.0):
        for algorithm in ("adaptive", "deterministic"):
            u = _run(_bgl("16x8x8", routing={"algorithm": algorithm}, workload={"pattern": "uniform", "load": load},
                          run={"cycles": 150000, "warmup": 50000}))
            rows.append(metric(f"16x8x8 uniform at offered load {load}, {algorithm} routing: accepted load", "fraction of injection",
                               u["accepted_load"], None, None, unpublished=True))
    return {"metrics": rows, "setup": setup}


def _incoming_busy(r: dict[str, Any], n: int, region: list[int]) -> list[float]:
    """Busy fraction of the burst of each link from outside the region (at
    the origin) into it, on an n x n x n torus (router x + n y + n^2 z)."""
    step = {"x+": (1, 0, 0), "x-": (-1, 0, 0), "y+": (0, 1, 0), "y-": (0, -1, 0), "z+": (0, 0, 1), "z-": (0, 0, -1)}

    def inside(c: tuple[int, ...]) -> bool:
        return all(v < s for v, s in zip(c, region))

    out = []
    for p in r["ports"]:
        a = (p["router"] % n, p["router"] // n % n, p["router"] // (n * n))
        b = tuple((a[k] + step[p["port"]][k]) % n for k in range(3))
        if not inside(a) and inside(b):
            out.append(p["busy_cycles"] / r["completion_cycles"])
    return out


def hot_spot(scale: str) -> dict[str, Any]:
    from . import metric

    base = "8x8x8" if scale == "full" else "4x4x4"
    rows = []
    setup = {"network": f"bgl:{base}"}
    for region, incoming in (([1, 1, 1], 6), ([2, 2, 2], 24)) if scale != "full" else (([1, 1, 1], 6), ([2, 2, 2], 24), ([4, 4, 4], 96)):
        name = "x".join(map(str, region))
        r = _run(_bgl(base, workload={"pattern": "hot-burst", "region_origin": [0, 0, 0], "region_shape": region, "packets": 16}), ports=True)
        wire = r["packets_delivered"] * _wire_bytes(r)
        frac = wire / (incoming * r["completion_cycles"])
        rows.append(metric(f"hot region {name}: fraction of the peak of its {incoming} incoming links", "fraction", frac, None, None))
        # Issue 23, case 2: how evenly the burst loads the incoming links —
        # it ends when the busiest has drained.
        busy = _incoming_busy(r, int(base.split("x")[0]), region)
        assert len(busy) == incoming, (name, len(busy))
        rows.append(metric(f"hot region {name}: busiest incoming link, busy fraction of the burst", "fraction", max(busy), None, None, unpublished=True))
        rows.append(metric(f"hot region {name}: least busy incoming link, busy fraction of the burst", "fraction", min(busy), None, None, unpublished=True))
        setup[f"completion_cycles_{name}"] = r["completion_cycles"]
    return {"metrics": rows, "setup": setup}


_C = case_maker(SOURCE)


CASES = [
    _C("bgl-packet-format", "B1: wire time and payload efficiency of a 256-byte packet", packet_format),
    _C("bgl-alltoall", "B2: symmetric all-to-all, dynamic vs deterministic routing", alltoall),
    _C("bgl-alltoall-message-size", "B9: 512-node all-to-all, fraction of peak vs payload bytes per pair", alltoall_message_size),
    _C("bgl-alltoall-asymmetric", "B3/B4: all-to-all on an asymmetric torus against its bound", alltoall_asymmetric),
    _C("bgl-hot-spot", "B12/B13: hot spot and hot regions, fraction of the incoming links' peak", hot_spot),
]


def _uniform(shape: str, load: float, algorithm: str = "adaptive", selection: str = "jsq", cycles: int = 40000, seed: int = 1,
             router: dict[str, Any] | None = None, warmup: int | None = None) -> dict[str, Any]:
    warm = cycles // 5 if warmup is None else warmup
    return _run(_bgl(shape, router={"output_selection": selection, **(router or {})}, routing={"algorithm": algorithm},
                     workload={"pattern": "uniform", "load": load},
                     run={"cycles": cycles, "warmup": warm, "seed": seed, "jsq_statistics": True}))


def routing_response(scale: str) -> dict[str, Any]:
    """B6/B7: response time of dynamic vs deterministic routing, and JSQ vs random output choice."""
    from . import metric

    # 32^3 near saturation fills for tens of thousands of cycles: a
    # 20,000-cycle warm-up (the 20,000-cycle runs of earlier versions
    # measured the filling network, accepting 0.89 of the load offered).
    shape, cycles, warmup = ("32x32x32", 60000, 20000) if scale == "full" else ("8x8x8", 40000, 8000)
    n = int(shape.split("x")[0])
    # Saturation of uniform traffic: a node feeds 6 links; a packet uses
    # 3n/4 links on average and 270/256 of its size in wire time.
    saturation = 1.0 / (3 * n / 4 * 270 / 256)
    rows = []
    setup: dict[str, Any] = {"network": f"bgl:{shape}", "saturation_load": saturation, "cycles": cycles, "warmup": warmup}
    for frac in (0.5, 0.8):
        load = round(frac * saturation, 5)
        dyn = _uniform(shape, load, cycles=cycles, warmup=warmup)
        det = _uniform(shape, load, "dor", cycles=cycles, warmup=warmup)
        rows.append(metric(f"deterministic / dynamic mean latency at {frac:.0%} of saturation", "ratio", det["latency"]["mean"] / dyn["latency"]["mean"], None, None))
        setup[f"latency_cycles_{frac:.0%}"] = {"dynamic": dyn["latency"]["mean"], "deterministic": det["latency"]["mean"]}
    load = round(0.95 * saturation, 5)
    jsq = _uniform(shape, load, cycles=cycles, warmup=warmup)
    rnd = _uniform(shape, load, selection="random", cycles=cycles, warmup=warmup)
    rows.append(metric("JSQ response-time reduction vs random output choice near 95% link utilisation", "fraction", 1 - jsq["latency"]["mean"] / rnd["latency"]["mean"], 0.20, 0.5 if scale == "full" else None,
                       known_difference="JSQ's 2-bit token ranges rarely separate the candidates (rows below; docs/validation.md)" if scale == "full" else None))
    # What JSQ saw (issue 23, case 1): how often its 2-bit ranges told the
    # candidates apart, where the candidates' buffers stood, and whether
    # the comparison's load is below saturation.
    seen = jsq["jsq"]
    rows.append(metric("JSQ choices the 2-bit token ranges separated (one candidate alone in the best range)", "fraction", seen["separated_fraction"], None, None, unpublished=True))
    rows.append(metric("JSQ candidates with at least 3/4 of their downstream buffer free", "fraction", seen["candidate_ranges"][3] / max(1, sum(seen["candidate_ranges"])), None, None, unpublished=True))
    rows.append(metric("accepted / offered load at the JSQ comparison (below 1: past saturation, or still filling)", "ratio", jsq["accepted_load"] / load, None, None, unpublished=True))
    rows.append(metric("link utilisation at the JSQ comparison", "fraction", jsq["link_utilization"], None, None, unpublished=True))
    # A diagnosis, not BG/L's mechanism: JSQ seeing the exact token count.
    exact = _uniform(shape, load, cycles=cycles, router={"jsq_ranges": 32}, warmup=warmup)
    rows.append(metric("JSQ with the exact token count instead of 2-bit ranges (diagnosis): response-time reduction vs random", "fraction", 1 - exact["latency"]["mean"] / rnd["latency"]["mean"], None, None, unpublished=True))
    setup["link_utilization_at_95pct"] = jsq["link_utilization"]
    setup["latency_cycles_95pct"] = {"jsq": jsq["latency"]["mean"], "random": rnd["latency"]["mean"], "jsq_exact_tokens": exact["latency"]["mean"]}
    setup["jsq_choices"] = seen
    return {"metrics": rows, "setup": setup}


CASES.append(_C("bgl-routing-response", "B6/B7: dynamic vs deterministic response time; JSQ vs random output choice", routing_response))


def vcs_and_paths(scale: str) -> dict[str, Any]:
    """B7 (second part): dynamic VCs against receiver -> sender paths, mean
    response time under uniform traffic at 350 MB/s links."""
    from . import metric

    shape, cycles = ("32x32x32", 20000) if scale == "full" else ("8x8x8", 40000)
    n = int(shape.split("x")[0])
    saturation = 1.0 / (3 * n / 4 * 270 / 256)
    rows = []
    setup: dict[str, Any] = {"network": f"bgl:{shape} at 350 MB/s", "saturation_load": saturation, "cycles": cycles, "latency_cycles": {}}
    for frac in (0.8, 0.95):
        load = round(frac * saturation, 5)
        lat = {}
        for vcs, paths in ((1, 2), (2, 2), (4, 2), (2, 4), (4, 4), (2, 1)):
            r = _run(_bgl(shape, network={"link_bandwidth": "350MB/s"}, router={"dynamic_vcs": vcs, "paths": paths},
                          workload={"pattern": "uniform", "load": load}, run={"cycles": cycles, "warmup": cycles // 5}))
            lat[(vcs, paths)] = r["latency"]["mean"]
        setup["latency_cycles"][f"{frac:.0%}"] = {f"{v} VCs / {p} paths": x for (v, p), x in lat.items()}
        rows += [
            metric(f"{frac:.0%} of saturation: 4 VCs / 2 paths over 2 VCs / 2 paths", "latency ratio", lat[(4, 2)] / lat[(2, 2)], None, None),
            metric(f"{frac:.0%} of saturation: 4 VCs / 4 paths over 2 VCs / 2 paths", "latency ratio", lat[(4, 4)] / lat[(2, 2)], None, None),
            metric(f"{frac:.0%} of saturation: 1 VC / 2 paths over 2 VCs / 2 paths", "latency ratio", lat[(1, 2)] / lat[(2, 2)], None, None),
            metric(f"{frac:.0%} of saturation: 2 VCs / 1 path over 2 VCs / 2 paths", "latency ratio", lat[(2, 1)] / lat[(2, 2)], None, None),
        ]
    return {"metrics": rows, "setup": setup}


CASES.append(_C("bgl-vcs-paths", "B7: dynamic VCs against receiver-to-sender paths (response time)", vcs_and_paths))
