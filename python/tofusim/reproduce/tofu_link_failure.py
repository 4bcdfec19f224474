"""A link and a node failing in the middle of a Tofu job, and recovering
(issue 22; docs/sources.md, virtual torus mapping: routes are chosen by
the source, the ABC group
gives Tofu a way round a failure).

No source publishes the throughput of a Tofu job through a failure: every
value here is the model's own. The job is uniform random traffic on a K
computer block (``k:2x3x2``, 288 nodes; ``k:4x6x4``, 1,152 nodes at
``--scale full``) below saturation. At ``FAIL`` the busiest link of the
healthy run fails (or, in the second scenario, a node with its router) and
at ``RECOVER`` it comes back. Packets on the link when it fails and those
already routed into it are lost and sent again by their sources' MPI
layer after ``resend_timeout_cycles``; packets made meanwhile take routes
round the failure (Tofu: the other ring direction, or a first hop inside
the ABC group); with the node down, the messages to and from it wait at
their sources. The time series shows the dip and the recovery; the
engine's invariants check that every packet is delivered once, or
counted lost and sent again.
"""

from __future__ import annotations

from typing import Any

from ..api import Experiment
from .unbudgeted import run_experiment
from .case import case_maker

_C = case_maker("issue 22 (no published figure): a failure during a run on the K computer's Tofu ([S:003]; fault avoidance [MEM/RECON], docs/sources.md)")

#: Cycles are byte times of a 5 GB/s link (0.2 ns): a full Tofu packet
#: takes about 2,000 of them on a link.
SAMPLE = 20_000
RESEND = 100_000


def _experiment(shape: str, load: float, cycles: int, faults: dict[str, Any] | None) -> Experiment:
    return Experiment(f"k:{shape}", workload={"pattern": "uniform", "load": load},
                      run={"cycles": cycles, "warmup": 0, "sample_cycles": SAMPLE, "audit_cycles": 200000, "seed": 7}, faults=faults,
                      file="<reproduce>")


def _run(exp: Experiment, what: str, strict: bool = True) -> dict[str, Any]:
    r = run_experiment(exp, ports=True)
    if strict and (r.get("invariant_error") or r.get("deadlock")):
        raise RuntimeError(f"{what}: the run broke an invariant or deadlocked: {r.get('invariant_error') or r.get('deadlock')}")
    return r


def _mean(series: list[dict[str, Any]], lo: int, hi: int) -> float:
    xs = [s["accepted_load"] for s in series if lo < s["cycle"] <= hi]
    return sum(xs) / len(xs) if xs else 0.0


def _recovery_cycles(series: list[dict[str, Any]], since: int, healthy: list[dict[str, Any]]) -> int | None:
    """Cycles after ``since`` until the accepted load, averaged over three
    windows, is back within 3% of the healthy run's over the same windows
    (one window is a few thousand packets: a few per cent of noise)."""
    ref = {s["cycle"]: s["accepted_load"] for s in healthy}
    pts = [(s["cycle"], s["accepted_load"], ref.get(s["cycle"])) for s in series if s["cycle"] > since]
    for i in range(len(pts) - 2):
        trio = pts[i:i + 3]
        if any(h is None for _, _, h in trio):
            continue
        got, want = sum(a for _, a, _ in trio), sum(h for _, _, h in trio)
        if abs(got - want) <= 0.03 * want:
            return trio[0][0] - SAMPLE - since
    return None


def link_failure(scale: str) -> dict[str, Any]:
    from . import metric

    full = scale == "full"
    shape = "4x6x4" if full else "2x3x2"
    # Below saturation: uniform traffic saturates k:4x6x4 near 0.14.
    load = 0.1 if full else 0.3
    fail, recover, cycles = (400_000, 800_000, 1_400_000) if full else (400_000, 800_000, 1_400_000)
    healthy = _run(_experiment(shape, load, cycles, None), "healthy run")
    # The busiest link of the healthy run: its failure hurts the most.
    busiest = max(healthy["ports"], key=lambda p: p["bytes"])
    node, port = busiest["router"], busiest["port"]
    scenarios = {
        f"link {port} of node {node}": {"node": node, "port": str(port)},
        f"node {node} with its router": {"node": node},
    }
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[list[float]]] = {"healthy": [[s["cycle"] / 1000, s["accepted_load"]] for s in healthy["timeseries"]]}
    setup: dict[str, Any] = {"system": f"k:{shape}", "traffic": f"uniform random at load {load}", "fail_cycle": fail, "recover_cycle": recover,
                             "cycles": cycles, "resend_timeout_cycles": RESEND, "sample_cycles": SAMPLE,
                             "healthy_accepted_load": healthy["accepted_load"], "healthy_packets": healthy["packets_delivered"]}
    before_h = _mean(healthy["timeseries"], SAMPLE * 3, fail)
    for label, target in scenarios.items():
        faults = {"resend_timeout_cycles": RESEND,
                  "events": [{"cycle": fail, "action": "fail", **target}, {"cycle": recover, "action": "recover", **target}]}
        # Not strict: a broken invariant (a packet lost silently, delivered
        # twice or corrupted; tokens not conserved) shows in the row below.
        r = _run(_experiment(shape, load, cycles, faults), label, strict=False)
        ts = r["timeseries"]
        before = _mean(ts, SAMPLE * 3, fail)
        dip = min(s["accepted_load"] for s in ts if fail < s["cycle"] <= recover + RESEND + 2 * SAMPLE)
        during = _mean(ts, fail, recover)
        after = _mean(ts, recover + RESEND + 5 * SAMPLE, cycles)
        back = _recovery_cycles(ts, recover, healthy["timeseries"])
        rows += [
            metric(f"{label}: accepted load before the failure (healthy run {before_h:.4f})", "fraction of injection", before, None, None, unpublished=True),
            metric(f"{label}: lowest {SAMPLE}-cycle window from the failure to a time-out after the recovery", "fraction of injection", dip, None, None, unpublished=True),
            metric(f"{label}: mean accepted load while failed", "fraction of injection", during, None, None, unpublished=True),
            metric(f"{label}: mean accepted load after the recovery", "fraction of injection", after, None, None, unpublished=True),
            metric(f"{label}: cycles from the recovery until the throughput is back within 3% of the healthy run", "cycles",
                   float(back) if back is not None else float("nan"), None, None, unpublished=True),
            metric(f"{label}: packets lost and sent again", "packets", float(r["packets_lost"]), None, None, unpublished=True),
            # Every packet made is delivered once or still on its way (lost
            # packets awaiting their time-out count as on their way): the
            # engine's delivery check and audit enforce it throughout.
            metric(f"{label}: runs with a broken invariant or a deadlock (a packet lost silently, delivered twice or corrupted)", "runs",
                   float(bool(r.get("invariant_error") or r.get("deadlock"))), 0.0, 0.0),
        ]
        curves[label] = [[s["cycle"] / 1000, s["accepted_load"]] for s in ts]
        setup[label] = {"packets_delivered": r["packets_delivered"], "packets_injected": r["packets_injected"], "packets_lost": r["packets_lost"],
                        "packets_resent": r["packets_resent"], "packets_rerouted": r["packets_rerouted"], "packet_hops": r["sim"]["packet_hops"]}
    return {"metrics": rows, "setup": setup,
            "plots": [{"title": f"Tofu k:{shape}, uniform load {load}: a failure at {fail // 1000}k cycles, recovered at {recover // 1000}k",
                       "x": "kcycles", "y": f"accepted load ({SAMPLE}-cycle windows)", "curves": curves}]}


CASES = [_C("tofu-link-failure", "A link and a node failing mid-run on a Tofu job: the throughput dip and the recovery over time", link_failure)]
