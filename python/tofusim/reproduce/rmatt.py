"""RMATT evaluation ([S:003]): NAS CG on a 2D virtual torus,
default x-y order vs RMATT vs a random order and a greedy placement, in
hop-bytes, maximum link load, the simulated communication time of one CG
iteration and the whole benchmark's time with its computation. The
published times (which include computation) are withheld from the model's
development for a blind check; the rows carry
no published value.

The total is ``timed_iterations × (communication + computation)`` per CG
iteration: NPB CG's exchanges are blocking, so a process computes between
them, not during (docs/model.md, "NAS CG's computation"). The computation
is the same for every order; only the communication depends on it."""

from __future__ import annotations

import json
import time
from typing import Any

from .. import _core
from .case import case_maker

SOURCE = "[S:003] Ajima, Topology Awareness in the Tofu Interconnect Series (Fujitsu, slides)"

#: (torus, processes, NPB class) of the source's two runs.
RUNS = {"reduced": [("32x32", 1024, "B")], "full": [("32x32", 1024, "B"), ("128x64", 8192, "D")]}


def evaluate(torus: str, procs: int, cls: str, seed: int = 1) -> dict[str, Any]:
    """Every order of one run with its costs and simulated iteration time."""
    pattern = _core.cg_comm_list(procs, cls)
    orders: dict[str, list[int]] = {
        "x-y (default)": _core.baseline_order(torus, pattern, "default"),
        "random": _core.baseline_order(torus, pattern, "random", seed),
        "greedy": _core.baseline_order(torus, pattern, "greedy"),
    }
    anneals = {}
    for objective in ("hop-bytes", "max-link-load"):
        r = json.loads(_core.rmatt(torus, pattern, objective, seed))
        orders[f"RMATT {objective}"] = r.pop("order")
        anneals[objective] = r
    compute = json.loads(_core.cg_compute(procs, cls))
    rows = {}
    for name, order in orders.items():
        hop_bytes, max_load = _core.order_costs(torus, pattern, order)
        t0 = time.perf_counter()
        timed = json.loads(_core.cg_iteration_time(torus, procs, cls, order))
        total = compute["timed_iterations"] * (timed["time_seconds"] + compute["seconds"])
        rows[name] = {"hop_bytes": hop_bytes, "max_link_load_bytes": max_load, "iteration_seconds": timed["time_seconds"],
                      "total_seconds": total, "simulated_in_seconds": time.perf_counter() - t0}
    return {"torus": torus, "procs": procs, "class": cls, "orders": rows, "anneals": anneals, "compute": compute}


def rmatt_cg(scale: str) -> dict[str, Any]:
    from . import metric

    rows, setups, curves = [], [], {}
    for torus, procs, cls in RUNS[scale]:
        ev = evaluate(torus, procs, cls)
        setups.append(ev)
        label = f"CG class {cls}, {procs} procs on {torus}"
        base = ev["orders"]["x-y (default)"]
        for name, r in ev["orders"].items():
            rows.append(metric(f"{label}, {name}: hop-bytes", "bytes", r["hop_bytes"], None, None))
            rows.append(metric(f"{label}, {name}: max link load", "bytes", r["max_link_load_bytes"], None, None))
            rows.append(metric(f"{label}, {name}: one CG iteration's communication", "us", r["iteration_seconds"] * 1e6, None, None))
            rows.append(metric(f"{label}, {name}: benchmark time with computation ({ev['compute']['timed_iterations']} CG iterations)", "s", r["total_seconds"], None, None))
        best = ev["orders"]["RMATT hop-bytes"]
        rows.append(metric(f"{label}: one CG iteration's computation (K node, memory-bound)", "us", ev["compute"]["seconds"] * 1e6, None, None))
        rows.append(metric(f"{label}: RMATT (hop-bytes) time / x-y time", "ratio", best["iteration_seconds"] / base["iteration_seconds"], None, None))
        rows.append(metric(f"{label}: RMATT (hop-bytes) benchmark time with computation / x-y", "ratio", best["total_seconds"] / base["total_seconds"], None, None))
        curves[label] = [(i, r["iteration_seconds"] * 1e6) for i, r in enumerate(ev["orders"].values())]
    plot = {"title": "RMATT: one CG iteration's communication per rank order (0 x-y, 1 random, 2 greedy, 3 RMATT hop-bytes, 4 RMATT max-link-load)",
            "x": "order", "y": "us", "curves": curves}
    return {"metrics": rows, "setup": {"runs": setups, "system": "k links and host model on the job's virtual torus"}, "plots": [plot]}


_C = case_maker(SOURCE)

CASES = [_C("rmatt-cg", "RMATT: rank orders for NAS CG on a 2D virtual torus (published times withheld for a blind check)", rmatt_cg)]
