"""RMATT evaluation ([S:003]): NAS CG on a 2D virtual torus,
default x-y order vs RMATT vs a random order and a greedy placement, in
hop-bytes, maximum link load, the simulated communication time of one CG
iteration and the whole benchmark's time with its computation, with one
process per node and with K's eight (one per core, block placement). The
published times (which include computation) were withheld from the
model's development for two blind checks and are now compared with the
eight-per-node rows, the setup their absolute values imply.

The total is ``timed_iterations × (communication + computation)`` per CG
iteration: NPB CG's exchanges are blocking, so a process computes between
them, not during (docs/model.md, "NAS CG's computation"). The computation
is the same for every order; only the communication depends on it."""

from __future__ import annotations

import time
from typing import Any

from .. import mapping
from .case import case_maker

SOURCE = "[S:003] Ajima, Topology Awareness in the Tofu Interconnect Series (Fujitsu, slides)"

#: (torus, processes, NPB class) of the source's two runs.
RUNS = {"reduced": [("32x32", 1024, "B")], "full": [("32x32", 1024, "B"), ("128x64", 8192, "D")]}

#: The published benchmark times, default x-y order and RMATT's (s): [S:003].
PUBLISHED = {"B": (1.33, 1.24), "D": (10.94, 9.98)}

#: K's flat MPI: one process per core, 8 per node, placed in blocks of
#: consecutive ranks (the MPI default), so a node holds 8 consecutive
#: positions along x of the process torus.
RANKS_PER_NODE = 8


def placed(torus: str, order: list[int], per_node: int) -> tuple[str, list[int]]:
    """The node torus and each rank's node when ``per_node`` consecutive
    positions along x of ``torus`` share a node."""
    lx, ly = (int(v) for v in torus.split("x"))
    nodes_x = lx // per_node
    return f"{nodes_x}x{ly}", [(p % lx) // per_node + nodes_x * (p // lx) for p in order]


def with_ranks_per_node(torus: str, procs: int, cls: str, orders: dict[str, list[int]], compute: dict[str, Any]) -> dict[str, Any]:
    """The benchmark with :data:`RANKS_PER_NODE` processes per node: the
    network carries only messages between nodes (those inside a node go
    through its memory: send overhead, one copy, receive overhead), the
    node's memory bandwidth is shared, so each process computes
    ``RANKS_PER_NODE`` times longer (CG is memory-bound)."""
    rows = {}
    for name, order in orders.items():
        nodes, node_of_rank = placed(torus, order, RANKS_PER_NODE)
        timed = mapping.cg_iteration_time(nodes, procs, cls, node_of_rank, "k", RANKS_PER_NODE)
        cpu = compute["seconds"] * RANKS_PER_NODE
        rows[name] = {"nodes": nodes, "iteration_seconds": timed["time_seconds"], "compute_seconds": cpu,
                      "total_seconds": compute["timed_iterations"] * (timed["time_seconds"] + cpu)}
    return rows


def evaluate(torus: str, procs: int, cls: str, seed: int = 1) -> dict[str, Any]:
    """Every order of one run with its costs and simulated iteration time."""
    pattern = mapping.cg_comm_list(procs, cls)
    orders: dict[str, list[int]] = {
        "x-y (default)": mapping.baseline_order(torus, pattern, "default"),
        "random": mapping.baseline_order(torus, pattern, "random", seed),
        "greedy": mapping.baseline_order(torus, pattern, "greedy"),
    }
    anneals = {}
    for objective in ("hop-bytes", "max-link-load"):
        r = mapping.rmatt(torus, pattern, objective, seed)
        orders[f"RMATT {objective}"] = r.pop("order")
        anneals[objective] = r
    compute = mapping.cg_compute(procs, cls)
    rows = {}
    for name, order in orders.items():
        hop_bytes, max_load = mapping.order_costs(torus, pattern, order)
        t0 = time.perf_counter()
        timed = mapping.cg_iteration_time(torus, procs, cls, order)
        total = compute["timed_iterations"] * (timed["time_seconds"] + compute["seconds"])
        rows[name] = {"hop_bytes": hop_bytes, "max_link_load_bytes": max_load, "iteration_seconds": timed["time_seconds"],
                      "total_seconds": total, "simulated_in_seconds": time.perf_counter() - t0}
    eight = {k: orders[k] for k in ("x-y (default)", "RMATT hop-bytes")}
    per_node = with_ranks_per_node(torus, procs, cls, eight, compute)
    # RMATT annealed on the nodes' torus, each node holding eight ranks:
    # the search knows which ranks share a node (their flows cost nothing).
    nodes, block = placed(torus, orders["x-y (default)"], RANKS_PER_NODE)
    r = mapping.rmatt(nodes, pattern, "hop-bytes", seed, start=block, ranks_per_node=RANKS_PER_NODE)
    timed = mapping.cg_iteration_time(nodes, procs, cls, r["order"], "k", RANKS_PER_NODE)
    cpu = compute["seconds"] * RANKS_PER_NODE
    per_node["RMATT hop-bytes on the nodes"] = {"nodes": nodes, "iteration_seconds": timed["time_seconds"], "compute_seconds": cpu,
                                                "total_seconds": compute["timed_iterations"] * (timed["time_seconds"] + cpu),
                                                "hop_bytes": r["optimized_cost"], "block_hop_bytes": r["default_cost"]}
    return {"torus": torus, "procs": procs, "class": cls, "orders": rows, "anneals": anneals, "compute": compute,
            "ranks_per_node": {"ranks_per_node": RANKS_PER_NODE, "placement": "block: consecutive ranks, 8 consecutive x positions per node",
                               "orders": per_node}}


def rmatt_cg(scale: str) -> dict[str, Any]:
    from . import metric

    rows, setups, curves = [], [], {}
    for torus, procs, cls in RUNS[scale]:
        ev = evaluate(torus, procs, cls)
        setups.append(ev)
        label = f"CG class {cls}, {procs} procs on {torus}"
        base = ev["orders"]["x-y (default)"]
        pub_xy, pub_rmatt = PUBLISHED[cls]
        one = "one process per node: the machine ran eight (the rows below)"
        published = {"x-y (default)": pub_xy, "RMATT hop-bytes": pub_rmatt}
        for name, r in ev["orders"].items():
            rows.append(metric(f"{label}, {name}: hop-bytes", "bytes", r["hop_bytes"], None, None, unpublished=True))
            rows.append(metric(f"{label}, {name}: max link load", "bytes", r["max_link_load_bytes"], None, None, unpublished=True))
            rows.append(metric(f"{label}, {name}: one CG iteration's communication", "us", r["iteration_seconds"] * 1e6, None, None, unpublished=True))
            pub = published.get(name)
            rows.append(metric(f"{label}, {name}: benchmark time with computation ({ev['compute']['timed_iterations']} CG iterations)", "s",
                               r["total_seconds"], pub, 0.10 if pub else None, unpublished=pub is None, known_difference=one if pub else None))
        best = ev["orders"]["RMATT hop-bytes"]
        rows.append(metric(f"{label}: one CG iteration's computation (K node, memory-bound)", "us", ev["compute"]["seconds"] * 1e6, None, None, unpublished=True))
        rows.append(metric(f"{label}: RMATT (hop-bytes) time / x-y time", "ratio", best["iteration_seconds"] / base["iteration_seconds"], None, None, unpublished=True))
        rows.append(metric(f"{label}: RMATT (hop-bytes) benchmark time with computation / x-y", "ratio", best["total_seconds"] / base["total_seconds"],
                           pub_rmatt / pub_xy, 0.10, known_difference=one))
        curves[label] = [(i, r["iteration_seconds"] * 1e6) for i, r in enumerate(ev["orders"].values())]
        # K's flat MPI, 8 processes per node: the setup the published absolute
        # times imply (docs/validation.md, C3/C4), against them.
        pn = ev["ranks_per_node"]["orders"]
        xy, best8 = pn["x-y (default)"], pn["RMATT hop-bytes"]
        gap = ("RMATT's gain is larger in the model than on the machine: the model's RMATT is a reconstruction (hop-bytes "
               "annealing on the process torus, which knows nothing of nodes); messages inside a node go through memory at "
               "the node's copy rate (docs/validation.md, C3/C4)")
        tag = f"{label}, {RANKS_PER_NODE} ranks per node ({xy['nodes']} nodes)"
        rows.append(metric(f"{tag}, x-y: benchmark time with computation", "s", xy["total_seconds"], pub_xy, 0.10,
                           known_difference=None if abs(xy["total_seconds"] / pub_xy - 1) <= 0.10 else gap))
        rows.append(metric(f"{tag}, RMATT hop-bytes: benchmark time with computation", "s", best8["total_seconds"], pub_rmatt, 0.10,
                           known_difference=None if abs(best8["total_seconds"] / pub_rmatt - 1) <= 0.10 else gap))
        ratio = best8["total_seconds"] / xy["total_seconds"]
        rows.append(metric(f"{tag}: RMATT / x-y benchmark time", "ratio", ratio, pub_rmatt / pub_xy, 0.10,
                           known_difference=None if abs(ratio / (pub_rmatt / pub_xy) - 1) <= 0.10 else gap))
        nodes_aware = pn["RMATT hop-bytes on the nodes"]
        rows.append(metric(f"{tag}: RMATT annealed on the nodes' torus ({RANKS_PER_NODE} ranks a node, tofusim rmatt --ppn) / x-y benchmark time",
                           "ratio", nodes_aware["total_seconds"] / xy["total_seconds"], None, None, unpublished=True))
        rows.append(metric(f"{tag}: one CG iteration's computation per process (memory shared by {RANKS_PER_NODE})", "us",
                           xy["compute_seconds"] * 1e6, None, None, unpublished=True))
    plot = {"title": "RMATT: one CG iteration's communication per rank order (0 x-y, 1 random, 2 greedy, 3 RMATT hop-bytes, 4 RMATT max-link-load)",
            "x": "order", "y": "us", "curves": curves}
    return {"metrics": rows, "setup": {"runs": setups, "system": "k links and host model on the job's virtual torus"}, "plots": [plot]}


_C = case_maker(SOURCE)

CASES = [_C("rmatt-cg", "C3/C4 RMATT: rank orders for NAS CG on a 2D virtual torus, one and eight processes per node", rmatt_cg)]
