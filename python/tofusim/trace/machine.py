"""The model of the machine a trace was recorded on (``tofusim replay
--system recorded``), from the ping-pong ``tofusim trace record`` timed
beside the program with the same launcher.

Ranks on one machine talk through shared memory: a message costs a fixed
time and a time per byte, and two pairs share the memory system. The
model is a network of one node per rank — a path for two ranks (one link
each way), a ring for more — whose link rate is the ping-pong's bandwidth,
with the MPI layer's per-message software fitted so that tofusim's own
ping-pong on the model takes the measured 8-byte time. Two parameters are
fitted, both to the calibration ping-pong only ([FIT] in the result),
never to the traced program's time. Open MPI's shared-memory transport
switches to its rendezvous protocol above 4 KiB (``btl_vader_eager_limit``,
its default), which the model's eager limit takes.

A ring is not a memory system: with more than two ranks the model's
contention differs from the machine's; only 2-rank replays are validated
against the measured time (docs/traces.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import ConfigError, _core

#: Open MPI's btl_vader_eager_limit default, bytes.
VADER_EAGER_LIMIT = 4096


def calibration(trace_dir: str) -> dict[int, float]:
    """The recorded ping-pong: half round-trip seconds by message bytes."""
    meta_file = Path(trace_dir) / "tofusim.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ConfigError(f"{trace_dir}: no tofusim.json beside the trace: --system recorded needs a trace recorded by "
                          "tofusim trace record (with its calibration ping-pong)") from None
    cal = meta.get("calibration")
    if not cal or not cal.get("half_round_trip_s"):
        raise ConfigError(f"{meta_file}: the trace was recorded without the calibration ping-pong (--no-calibrate or a "
                          "launcher other than Open MPI's); --system recorded needs it")
    return {int(k): float(v) for k, v in cal["half_round_trip_s"].items()}


def _system_toml(ranks: int, bandwidth_Bps: float) -> str:
    wrap = "true" if ranks > 2 else "false"
    return (f"# The machine a trace was recorded on (tofusim.trace.machine): one node per rank.\n"
            f"[network]\ntopology = \"torus\"\nshape = [{ranks}]\nwrap = [{wrap}]\n"
            f"link_bandwidth = \"{bandwidth_Bps / 1e9:.6f}GB/s\"\n")


def _pingpong_seconds(system_toml: str, ranks: int, nbytes: int, mpi: dict[str, Any], reps: int = 4) -> float:
    """Half round-trip time of tofusim's own ping-pong between ranks 0 and 1."""
    messages, p0, p1 = [], [], []
    for k in range(reps):
        messages += [{"src": 0, "dst": 1, "bytes": nbytes}, {"src": 1, "dst": 0, "bytes": nbytes}]
        p0 += [{"send": {"msg": 2 * k, "request": None}}, {"recv": {"msg": 2 * k + 1, "request": None}}]
        p1 += [{"recv": {"msg": 2 * k, "request": None}}, {"send": {"msg": 2 * k + 1, "request": None}}]
    program = {"ranks": ranks, "messages": messages, "collectives": [], "programs": [p0, p1] + [[] for _ in range(ranks - 2)]}
    r = json.loads(_core.replay(json.dumps(program), "recorded", "packet", None, 1.0, 1, None, False, system_toml, json.dumps(mpi)))
    return r["time_seconds"] / (2 * reps)


def recorded_machine(trace_dir: str, ranks: int) -> dict[str, Any]:
    """The model: ``system_toml``, ``mpi`` (the MPI layer's values) and what
    was fitted to the calibration."""
    if ranks < 2:
        raise ConfigError(f"{trace_dir}: a trace of one rank has no messages to model")
    cal = calibration(trace_dir)
    sizes = sorted(cal)
    if len(sizes) < 2 or sizes[0] > 64:
        raise ConfigError(f"{trace_dir}/tofusim.json: the calibration needs a small message and a large one")
    small, large = sizes[0], sizes[-1]
    mid = next((s for s in reversed(sizes[:-1]) if s >= 65536), sizes[-2])
    # Bandwidth from the slope between the two largest (fixed costs cancel).
    bandwidth = (large - mid) / max(cal[large] - cal[mid], 1e-12)
    base = {"eager_limit_bytes": VADER_EAGER_LIMIT, "llp_limit_bytes": 1024, "llp_ns": 0, "stack_ns": 0,
            "rendezvous_ns": 0, "saving_extra_ns": 0, "shared_memory_Bps": bandwidth}
    toml = _system_toml(ranks, bandwidth)
    # Software per message and side: the measured small-message time less
    # the model's own without software.
    bare = _pingpong_seconds(toml, ranks, small, base)
    software_ns = max(0, round((cal[small] - bare) * 1e9 / 2))
    mpi = dict(base, llp_ns=software_ns, stack_ns=software_ns, rendezvous_ns=software_ns)
    # The large message then: scale the link rate so its time per byte
    # matches (packet headers and the rendezvous ride on the link).
    model_large = _pingpong_seconds(toml, ranks, large, mpi, reps=2)
    model_small = _pingpong_seconds(toml, ranks, small, mpi)
    scale = (model_large - model_small) / max(cal[large] - cal[small], 1e-12)
    bandwidth *= scale
    toml = _system_toml(ranks, bandwidth)
    mpi["shared_memory_Bps"] = bandwidth
    return {
        "system_toml": toml,
        "mpi": mpi,
        "fitted": {
            "link_bandwidth_Bps": bandwidth,
            "software_ns_per_message_side": software_ns,
            "source": "[FIT] to the calibration ping-pong recorded with the trace (8 B and "
                      f"{large // 1024} KiB half round trips), not to the traced program",
        },
        "calibration_half_round_trip_s": cal,
    }
