"""What limits a run: the binding resource, blocked time by cause, the
utilisation of each resource class and, for schedules (collectives,
replays), the critical path and each rank's waits.

The packet engine accounts all of it in every run (the result's
``limits``, and ``run.limits`` / ``run.critical_path`` of a collective or
replay); this module reads it back from a result or an output directory
and words it, for ``tofusim explain`` and the report's first section.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import ConfigError

#: What each kind of critical-path segment is.
SEGMENT_MEANING = {
    "transfer": "transfers (a message's release, after the send overhead, to its arrival: queueing at the TNI and the network)",
    "send-overhead": "host send overhead",
    "receive-overhead": "host receive overhead",
    "reduction": "reductions on the host",
    "copy": "local copies",
    "work": "compute and software work",
}


def _load(path: str | Path) -> dict[str, Any]:
    """A result from an output directory (read as the report reads it) or
    from its result JSON file."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{path}: no such file or directory; expected a run directory or its result JSON")
    if p.is_dir():
        from .report.rundir import open_run_dir

        rd = open_run_dir(p)
        if rd.kind not in ("run", "collective", "replay"):
            raise ConfigError(f"{path}: a {rd.kind} directory, not one run; explain one of its runs (tofusim run/coll/replay --out DIR)")
        return rd.result
    try:
        r = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: cannot read: {e}") from None
    except ValueError as e:
        raise ConfigError(f"{p}: not a tofusim result (invalid JSON: {e})") from None
    if not isinstance(r, dict):
        raise ConfigError(f"{p}: not a tofusim result (expected a JSON object)")
    return r


def of_result(r: dict[str, Any]) -> dict[str, Any]:
    """The limits of result ``r`` (a run, a collective or a replay) as one
    record: ``summary`` (sentences), ``limits`` and ``critical_path`` (as
    the engine accounted them; ``None`` where absent) and ``cycle_ns``.
    ConfigError when the result has none (the flow model, or a result
    older than the accounting)."""
    run = r.get("run") if isinstance(r.get("run"), dict) else None
    limits = r.get("limits") or (run or {}).get("limits")
    path = (run or {}).get("critical_path")
    cycle_ns = r.get("cycle_ns") or (run or {}).get("cycle_ns") or 1.0
    if not limits:
        flow = r.get("model") in ("flow", "flow-events", "flow-rounds") or r.get("flow") or (r.get("model") == "flow")
        why = ("the flow model shares bandwidth without packets, queues or arbitration: rerun with --model packet"
               if flow else "the result has no limits (made before they were accounted, or not by the packet engine)")
        raise ConfigError(f"nothing to explain: {why}")
    sentences = [limits["summary"]]
    if path:
        sentences.append(path_sentence(path, cycle_ns))
    return {"summary": " ".join(sentences), "limits": limits, "critical_path": path, "cycle_ns": cycle_ns}


def path_sentence(path: dict[str, Any], cycle_ns: float) -> str:
    """The critical path in one sentence: where its time went."""
    end = path["end_cycle"]
    if end <= 0:
        return "The schedule took no time."
    parts = sorted(path["by_kind"].items(), key=lambda kv: -kv[1])
    shares = ", ".join(f"{v / end:.0%} {SEGMENT_MEANING.get(k, k)}" for k, v in parts if v > 0)
    text = (f"The critical path ({end * cycle_ns / 1000:,.2f} µs, {path['transfers']:,} transfers over "
            f"{path['ranks_on_path']:,} ranks) is {shares}.")
    if path.get("most_waited_for") is not None and path.get("waiting_cycles", 0) > 0:
        share = path["most_waited_for_cycles"] / path["waiting_cycles"]
        text += (f" Ranks waited {path['waiting_cycles'] * cycle_ns / 1000:,.1f} µs in all for messages, "
                 f"{share:.0%} of it for rank {path['most_waited_for']}.")
    return text


def explain(path: str | Path) -> dict[str, Any]:
    """The limits of the run whose output directory or result file is ``path``."""
    r = _load(path)
    if "case" in r and "metrics" in r:
        raise ConfigError(f"{path}: a reproduction case, not one run; explain one of its runs (tofusim run/coll/replay --out DIR)")
    return of_result(r)


def rows(limits: dict[str, Any]) -> list[dict[str, Any]]:
    """The resource classes as table rows (busy in %)."""
    out = []
    for c in limits["classes"]:
        out.append({"resource": c["kind"] if c["kind"] != "link" else f"{c['name']} links",
                    "count": c["count"], "busy_mean_pct": 100 * c["busy_mean"], "busy_max_pct": 100 * c["busy_max"],
                    "waited_per_cycle": c["waited_per_cycle"], "depleted_pct": 100 * c["depleted_mean"]})
    return out
