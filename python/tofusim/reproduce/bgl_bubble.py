"""The bubble rule for variable-sized packets ([S:004]): the original
rule deadlocks, the BG/L fix (every packet on the bubble VC charged as
full-sized) does not.

The deadlock needs an unlucky interleaving: the case replays the documented
trace `examples/experiments/bubble-unfixed-deadlock.toml` under each rule,
then runs saturated mixed-size traffic under each rule to show how rare the
interleaving is and that the fixed rule stays live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..api import Experiment
from .unbudgeted import run_experiment
from .bgl import _C

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "experiments" / "bubble-unfixed-deadlock.toml"
RULES = ("bubble-unfixed", "bubble-full-counts", "bubble")


def _trace_text() -> str:
    if not EXAMPLE.is_file():
        raise RuntimeError(f"{EXAMPLE}: the documented deadlock trace is missing (run from a source checkout)")
    return EXAMPLE.read_text()


def _stress(rule: str, shape: str, cycles: int) -> dict[str, Any]:
    """Uniform traffic of 32..256-byte packets at full offered load on a
    torus, dimension-order routing (everything on the bubble VC)."""
    return run_experiment(Experiment(
        network={"topology": "torus", "shape": [int(n) for n in shape.split(",")], "link_bandwidth": "175MB/s"},
        router={"escape": rule, "vc_buffer": "512B", "network_priority": 0.5}, routing={"algorithm": "dor"},
        workload={"pattern": "uniform", "load": 1.0, "min_packet_bytes": 32}, run={"cycles": cycles, "deadlock_cycles": 5000, "seed": 7},
        file="<reproduce>"))


def bubble_deadlock(scale: str) -> dict[str, Any]:
    from . import metric

    text = _trace_text()
    rows, setup = [], {"trace": str(EXAMPLE.name), "trace_network": "4-node ring, 512-byte escape VCs, 1-cycle hops and token returns"}
    for rule in RULES:
        r = run_experiment(Experiment.from_toml(text, str(EXAMPLE)).set("router.escape", rule))
        d = r.get("deadlock")
        # The BG/L designers found the original rule deadlocks (1) and the fix does not (0).
        rows.append(metric(f"{rule}: documented trace deadlocks (1 = yes)", "flag", 1.0 if d else 0.0, 1.0 if rule == "bubble-unfixed" else 0.0, 0.0))
        setup[f"{rule}_trace"] = {"complete": r["complete"], "packets_delivered": r["packets_delivered"], "wait_cycle_length": d["wait_cycle_length"] if d else 0}
    cycles = 10_000_000 if scale == "full" else 1_000_000
    for shape in ("8", "4, 4"):
        for rule in RULES:
            r = _stress(rule, shape, cycles)
            fixed = rule == "bubble"
            rows.append(metric(f"{rule}: saturated mixed sizes on [{shape}] deadlocks (1 = yes)", "flag", 1.0 if r.get("deadlock") else 0.0, 0.0 if fixed else None, 0.0 if fixed else None))
            setup[f"{rule}_[{shape}]"] = {"cycles": r["sim"]["cycles"], "packets_delivered": r["packets_delivered"], "accepted_load": r["accepted_load"]}
    return {"metrics": rows, "setup": setup}


CASES = [_C("bgl-bubble-deadlock", "Bubble rule for variable-sized packets: the unfixed rule deadlocks, the BG/L fix does not", bubble_deadlock)]
