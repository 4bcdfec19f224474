"""TofuD's dynamic packet slicing against plain retransmission
([S:000]): one lane of every link goes bad; the link either keeps
slicing packets over both lanes and retransmits what fails (``split``),
sends every packet whole on both lanes (``duplicate``), or switches
between the two as it monitors each lane's errors (``dynamic``, TofuD).

The source describes the mechanism and publishes no figure of its
effect: every value here is measured on the engine (the monitor's
thresholds are [MEM] settings, docs/model.md).
"""

from __future__ import annotations

import math
from typing import Any

from ..api import Experiment
from .unbudgeted import run_experiment
from .case import case_maker

_C = case_maker("[S:000] Ajima et al., The Tofu Interconnect D (IEEE Cluster 2018): packet slicing, split and duplicate modes")

#: The bad lane's bit error rate; the good lane stays at 1e-10.
BAD_LANE = (1e-6, 1e-5, 1e-4)
MODES: dict[str, dict[str, Any]] = {
    "split (retransmission only)": {"packet_slicing": "split"},
    "duplicate (always)": {"packet_slicing": "dynamic", "duplicate_above": 0, "split_below": 0, "monitor_packets": 1},
    "dynamic (TofuD)": {"packet_slicing": "dynamic"},
}


def _run(shape: str, cycles: int, errors: dict[str, Any] | None) -> dict[str, Any]:
    r = run_experiment(Experiment(f"fugaku:{shape}", workload={"pattern": "uniform", "load": 1.0},
                                  run={"cycles": cycles, "warmup": cycles // 10, "audit_cycles": 20000, "seed": 5},
                                  link_errors=errors or None, file="<reproduce>"))
    if r.get("invariant_error") or r.get("deadlock"):
        raise RuntimeError(f"{errors!r}: {r.get('invariant_error') or r.get('deadlock')}")
    return r


def packet_slicing(scale: str) -> dict[str, Any]:
    from . import metric

    full = scale == "full"
    shape, cycles = ("4x6x4", 4_000_000) if full else ("2x3x2", 800_000)
    # TofuD's links run in split mode: the default model carries the
    # lanes' header copies in its packet format; the lanes modelled one by
    # one (the link protocol's slices) must give the same, and a one-lane
    # link (no copies) what the copies cost.
    clean = _run(shape, cycles, None)["accepted_load"]
    rows = [metric("error-free, split mode (the default TofuD link): saturation throughput", "fraction of injection", clean, None, None)]
    sliced = _run(shape, cycles, {"packet_slicing": "split", "bit_error_rate": 0})["accepted_load"]
    rows.append(metric("error-free, split over 2 lanes modelled one by one (a header copy per slice)", "fraction of injection", sliced, None, None, unpublished=True))
    one = _run(shape, cycles, {"packet_slicing": "split", "lanes": 1, "bit_error_rate": 0})["accepted_load"]
    rows.append(metric("error-free, one lane (no header copies)", "fraction of injection", one, None, None, unpublished=True))
    curves: dict[str, list[list[float]]] = {m: [] for m in MODES}
    setup: dict[str, Any] = {"system": f"fugaku:{shape}", "traffic": "uniform random at full load", "good_lane_ber": 1e-10,
                             "bad_lane_ber": list(BAD_LANE), "cycles": cycles}
    for ber in BAD_LANE:
        for mode, keys in MODES.items():
            r = _run(shape, cycles, {**keys, "lane_bit_error_rates": [1e-10, ber]})
            le = r["link_errors"]
            rows.append(metric(f"bad lane at {ber:g}: {mode}", "fraction of injection", r["accepted_load"], None, None, unpublished=True))
            curves[mode].append([math.log10(ber), r["accepted_load"]])
            setup[f"{ber:g} {mode}"] = {k: le[k] for k in ("corrupted", "retransmissions", "duplicate_transmissions", "mode_switches")}
    return {"metrics": rows, "setup": setup,
            "plots": [{"title": f"TofuD fugaku:{shape}: one bad lane per link, uniform traffic at full load",
                       "x": "log10 bit error rate of the bad lane", "y": "accepted load", "curves": curves}]}


CASES = [_C("tofud-packet-slicing", "TofuD packet slicing: split vs duplicate vs dynamic mode with one bad lane per link", packet_slicing)]
