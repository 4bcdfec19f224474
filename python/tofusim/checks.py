"""What a run's figures can be trusted for (issue 21, part 6): an open-loop
run whose network does not accept what is offered (saturated), or whose
measurement started before the network settled (not in steady state),
prints latencies that describe neither — say so in one line."""

from __future__ import annotations

from typing import Any

#: Accepted below offered by more than this fraction: saturated.
ACCEPTED_SHORTFALL = 0.02
#: The accepted load of the measured window's two halves differing by more
#: than this fraction (and more than three times the counting noise):
#: still drifting.
DRIFT = 0.05


def shortfall_allowed(delivered: int | None) -> float:
    """How far below the offered load the accepted load may fall before a
    run counts as saturated: 2%, or three times the counting noise of the
    packets delivered in the measured window (a short run delivers few)."""
    return max(ACCEPTED_SHORTFALL, 3 / max(delivered or 0, 1) ** 0.5)


def run_warnings(r: dict[str, Any]) -> list[str]:
    """Reasons not to read ``r`` (a packet-engine ``tofusim run`` result of
    an open-loop workload) as a steady state; empty when there are none."""
    off, acc = r.get("offered_load"), r.get("accepted_load")
    if off is None or r.get("model") == "flow" or not r.get("complete", True):
        return []
    # What the sending nodes offer, averaged over every node as the accepted
    # load is (a fixed-partner pattern's fixed points send nothing).
    off *= r.get("sending_fraction") or 1.0
    out = []
    lat_summary = r.get("latency") or {}
    saturated = off > 0 and acc is not None and acc < off * (1 - shortfall_allowed(lat_summary.get("count")))
    if saturated:
        out.append(f"saturated: the network accepts {acc:.4g} of the {off:.4g} offered ({1 - acc / off:.0%} short), "
                   "so sources queue without bound and the latencies grow with the run's length")
    lat = lat_summary.get("mean") or 0.0
    warm = r.get("warmup_cycles") or 0
    if lat > warm and not saturated:
        out.append(f"warm-up of {warm:,} cycles is shorter than the mean latency ({lat:,.0f} cycles): the measurement "
                   "starts before the network has settled (raise run.warmup)")
    samples = [s for s in r.get("timeseries") or [] if s.get("cycle", 0) > warm]
    if len(samples) >= 6:
        half = len(samples) // 2
        a = sum(s["accepted_load"] for s in samples[:half]) / half
        b = sum(s["accepted_load"] for s in samples[half:]) / (len(samples) - half)
        # Counting noise: deliveries are roughly Poisson, so two halves of
        # n1 and n2 packets differ by about sqrt(1/n1 + 1/n2) by chance.
        n1 = sum(s.get("packets_delivered", 0) for s in samples[:half])
        n2 = sum(s.get("packets_delivered", 0) for s in samples[half:])
        noise = 3 * (1 / max(n1, 1) + 1 / max(n2, 1)) ** 0.5
        if max(a, b) > 0 and abs(a - b) / max(a, b) > max(DRIFT, noise):
            out.append(f"not in steady state: accepted load {a:.4g} in the first half of the measurement, {b:.4g} in the second "
                       "(raise run.warmup or run.cycles)")
    return out
