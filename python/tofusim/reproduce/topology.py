"""Topologies side by side (issue 6, [S:002]): a 3D torus, Tofu 6D,
a dragonfly and a fat-tree of similar node count on the same links and the
same workloads, and the cable-count argument of [S:002] (a dragonfly needs
half the optical links of a fat-tree of equal global bandwidth).

Hop counts and bisections come from the topology calculator; zero-load
latency and uniform all-to-all throughput from the packet engine (open-loop
uniform random traffic at 2% and at 100% offered load), every row: the
tori on the BG/L router, the dragonfly on the generic dragonfly router, the
fat-tree on the generic fat-tree switch with d-mod-k routing, all with the
same hop latency and VC buffers.
"""

from __future__ import annotations

from typing import Any

from .case import case_maker

from .. import topo, topo_toml
from ..api import Experiment
from .unbudgeted import run_experiment

SOURCE = "[S:002] Alverson et al., Cray XC Series Network (SC12), cable-count argument; topologies from [S:000], [S:003], [S:004], [S:002]"
_C = case_maker(SOURCE)

LINK = "5.25GB/s"
LINK_GBPS = 5.25
#: Every node injects through two engines at the link rate.
NIC = {"nic_interfaces": 2, "nic_bandwidth": "5.25GB/s"}
#: 100 ns per router hop (the Aries figure, [S:002]) at 5.25 bytes per ns,
#: for every topology; VC buffers cover the token round trip.
HOP_CYCLES = 525
ROUTER = {"hop_latency_cycles": HOP_CYCLES, "token_latency_cycles": HOP_CYCLES, "vc_buffer": "4KiB"}


def _systems(scale: str) -> list[tuple[str, dict[str, Any], str]]:
    """(name, [network] table, routing algorithm) of similar node counts."""
    if scale == "full":
        torus, tofu, df, ft = ([16, 16, 16], [8, 6, 8], (33, 8, 4, 4, 1), (16, 3))
    else:
        torus, tofu, df, ft = ([8, 8, 8], [4, 3, 4], (17, 8, 4, 4, 2), (8, 3))
    g, a, p, h, lpp = df
    return [
        ("3D torus", {"topology": "torus", "shape": torus, "link_bandwidth": LINK, **NIC}, "adaptive"),
        # The same (BG/L) router on both tori: the rows compare topologies.
        ("Tofu 6D", {"topology": "tofu", "generation": "bgl", "shape": tofu, "link_bandwidth": LINK, **NIC}, "adaptive"),
        ("dragonfly", {"topology": "dragonfly", "groups": g, "routers_per_group": a, "nodes_per_router": p, "global_links_per_router": h,
                       "links_per_group_pair": lpp, "arrangement": "round-robin", "link_bandwidth": LINK, **NIC},
         "adaptive-prefer-minimal"),
        # The generic fat-tree switch (docs/model.md), d-mod-k up-port choice.
        ("fat-tree", {"topology": "fattree", "k": ft[0], "levels": ft[1], "link_bandwidth": LINK, **NIC}, "d-mod-k"),
    ]


def _engine(net: dict[str, Any], algo: str, load: float, cycles: int) -> dict[str, Any]:
    r = run_experiment(Experiment(network=net, router=ROUTER, routing={"algorithm": algo},
                                  workload={"pattern": "uniform", "load": load, "packet_bytes": 256},
                                  run={"cycles": cycles, "warmup": cycles // 4, "seed": 1}, file="<topology-comparison>"))
    if r.get("deadlock") or r.get("invariant_error"):
        raise RuntimeError(f"{algo}: {r.get('deadlock') or r.get('invariant_error')}")
    return r


def comparison(scale: str) -> dict[str, Any]:
    from . import metric

    cycles = 120_000 if scale == "full" else 60_000
    rows, table = [], []
    for name, net, algo in _systems(scale):
        m = topo_toml(Experiment(network=net).toml(), "<topology-comparison>")
        injection = m["injection_per_node_Bps"] / 1e9
        quiet = _engine(net, algo, 0.02, cycles)
        busy = _engine(net, algo, 1.0, cycles)
        latency_ns = quiet["latency"]["mean"] * quiet["cycle_ns"]
        throughput = busy["accepted_load"] * injection
        how = "packet engine"
        row = {"topology": name, "nodes": m["nodes"], "routers": m["routers"], "diameter": m["diameter"],
               "average_hops": m["average_hops"], "links": m["links"], "bisection_TBps": m["bisection_bandwidth_Bps"] / 1e12,
               "zero_load_latency_ns": latency_ns, "uniform_throughput_GBps_per_node": throughput, "throughput_from": how}
        table.append(row)
        rows.append(metric(f"{name}: average hops ({m['nodes']} nodes)", "hops", m["average_hops"], None, None))
        rows.append(metric(f"{name}: zero-load latency, 256-byte packets", "ns", latency_ns, None, None))
        rows.append(metric(f"{name}: uniform all-to-all throughput per node ({how})", "GB/s", throughput, None, None))
    rows += _cables()
    curves = {r["topology"]: [[r["average_hops"], r["uniform_throughput_GBps_per_node"]]] for r in table}
    return {"metrics": rows, "setup": {"link": LINK, "injection_per_node": "2 x 5.25 GB/s", "table": table},
            "plots": [{"title": "Topologies of similar size: throughput vs average hops", "x": "average router hops",
                       "y": "uniform throughput per node (GB/s)", "curves": curves}]}


def _cables() -> list[dict[str, Any]]:
    """Optical links of Piz Daint's dragonfly vs a 2-level fat-tree with the same global bandwidth.

    Global bandwidth is what uniform traffic can move through the optical
    links: a dragonfly packet crosses one global link, a fat-tree packet two
    (leaf to spine, spine to leaf). The fat-tree is sized by the calculator
    (48 nodes per leaf, up-links per leaf to match) and its links counted.
    """
    from . import metric

    df = topo("piz-daint")
    n3 = df["links_by_class"]["rank-3"]
    rate3 = df["link_bandwidth_Bps"]["rank-3"]
    global_df = n3 * rate3 * 2  # both directions, one optical hop per packet
    nodes, per_leaf = df["nodes"], 48
    leaves = nodes // per_leaf
    # Up-links per leaf so that (links x rate x 2 directions) / 2 hops = global_df.
    up = -(-int(round(2 * global_df / (rate3 * 2))) // leaves)
    ft = topo_toml(Experiment(network={"topology": "fattree", "down": [per_leaf, leaves], "up": [1, up], "link_bandwidth": f"{rate3 / 1e9}GB/s"}).toml(),
                   "<fat-tree>")
    ft_links = sum(ft["links_by_class"].values())
    global_ft = ft_links * rate3 * 2 / 2
    return [
        metric("Piz Daint dragonfly: global (optical) links", "links", n3, None, None),
        metric("fat-tree of equal global bandwidth: leaf-spine (optical) links", "links", ft_links, None, None),
        metric("global bandwidth, dragonfly / fat-tree", "ratio", global_df / global_ft, 1.0, 0.05),
        metric("optical links, dragonfly / fat-tree (source: half)", "ratio", n3 / ft_links, 0.5, 0.05),
    ]


CASES = [_C("topology-comparison", "Torus, Tofu, dragonfly and fat-tree of similar size; dragonfly vs fat-tree optical cables", comparison)]
