"""The model of the machine a trace was recorded on (``tofusim replay
--system recorded``), from the ping-pong the tracer times after the
program on its own processes (``tofusim trace record``): the same cores,
so the same placement — on this 2-core virtual machine two runs of the
same command can land in two regimes (0.1 µs and 15 GB/s, or 0.35 µs and
8.7 GB/s between the two ranks), and a ping-pong run apart may measure the
other one.

Ranks on one machine talk through shared memory: a message costs a fixed
time and a time per byte, and two pairs share the memory system. The
model is a network of one node per rank — a path for two ranks (one link
each way), a ring for more — whose link rate is the ping-pong's bandwidth,
with the MPI layer's per-message software fitted so that tofusim's own
ping-pong on the model takes the measured 8-byte time, and the link rate
so that a one-way stream of 4 MiB messages takes the measured time. Two parameters are
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

from .. import ConfigError
from .replay import replay_program

#: Open MPI's btl_vader_eager_limit default, bytes.
VADER_EAGER_LIMIT = 4096


def calibration(trace_dir: str) -> dict[str, Any]:
    """The recorded calibration: ``half_round_trip_s`` by message bytes, and
    ``stream_4MiB_s`` (one message of a one-way stream of 4 MiB messages)."""
    meta_file = Path(trace_dir) / "tofusim.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ConfigError(f"{trace_dir}: no tofusim.json beside the trace: --system recorded needs a trace recorded by "
                          "tofusim trace record (with its calibration ping-pong)") from None
    cal = meta.get("calibration")
    if not cal or not cal.get("half_round_trip_s") or not cal.get("stream_4MiB_s"):
        raise ConfigError(f"{meta_file}: the trace was recorded without the calibration ping-pong (--no-calibrate, or "
                          "a single rank); --system recorded needs it")
    cal["half_round_trip_s"] = {int(k): float(v) for k, v in cal["half_round_trip_s"].items()}
    return cal


def _system_toml(ranks: int, bandwidth_Bps: float) -> str:
    wrap = "true" if ranks > 2 else "false"
    return (f"# The machine a trace was recorded on (tofusim.trace.machine): one node per rank.\n"
            f"[network]\ntopology = \"torus\"\nshape = [{ranks}]\nwrap = [{wrap}]\n"
            f"link_bandwidth = \"{bandwidth_Bps / 1e9:.6f}GB/s\"\n")


def _run(system_toml: str, ranks: int, messages: list, p0: list, p1: list, mpi: dict[str, Any]) -> float:
    program = {"ranks": ranks, "messages": messages, "collectives": [], "programs": [p0, p1] + [[] for _ in range(ranks - 2)]}
    r = replay_program(program, system_toml, mpi)
    return r["time_seconds"]


def _pingpong_seconds(system_toml: str, ranks: int, nbytes: int, mpi: dict[str, Any], reps: int = 4) -> float:
    """Half round-trip time of tofusim's own ping-pong between ranks 0 and 1."""
    messages, p0, p1 = [], [], []
    for k in range(reps):
        messages += [{"src": 0, "dst": 1, "bytes": nbytes}, {"src": 1, "dst": 0, "bytes": nbytes}]
        p0 += [{"send": {"msg": 2 * k, "request": None}}, {"recv": {"msg": 2 * k + 1, "request": None}}]
        p1 += [{"recv": {"msg": 2 * k, "request": None}}, {"send": {"msg": 2 * k + 1, "request": None}}]
    return _run(system_toml, ranks, messages, p0, p1, mpi) / (2 * reps)


def _stream_seconds(system_toml: str, ranks: int, nbytes: int, mpi: dict[str, Any], count: int = 4) -> float:
    """Per message, a one-way stream of ``count`` messages and an acknowledgement."""
    messages = [{"src": 0, "dst": 1, "bytes": nbytes} for _ in range(count)] + [{"src": 1, "dst": 0, "bytes": 1}]
    p0 = [{"send": {"msg": k, "request": None}} for k in range(count)] + [{"recv": {"msg": count, "request": None}}]
    p1 = [{"recv": {"msg": k, "request": None}} for k in range(count)] + [{"send": {"msg": count, "request": None}}]
    return _run(system_toml, ranks, messages, p0, p1, mpi) / count


def recorded_machine(trace_dir: str, ranks: int) -> dict[str, Any]:
    """The model: ``system_toml``, ``mpi`` (the MPI layer's values) and what
    was fitted to the calibration."""
    if ranks < 2:
        raise ConfigError(f"{trace_dir}: a trace of one rank has no messages to model")
    cal = calibration(trace_dir)
    half = cal["half_round_trip_s"]
    small = min(half)
    big = 4 << 20
    # The link rate from the one-way stream: a ping-pong's large messages
    # also pay for the buffer moving between the cores' caches at each
    # turn (on this machine 8.3 GB/s by ping-pong, 14.5 GB/s streaming,
    # 13.5 GB/s each way exchanging, in the same run).
    bandwidth = big / cal["stream_4MiB_s"]
    base = {"eager_limit_bytes": VADER_EAGER_LIMIT, "llp_limit_bytes": 1024, "llp_ns": 0, "stack_ns": 0,
            "rendezvous_ns": 0, "saving_extra_ns": 0, "shared_memory_Bps": bandwidth}
    toml = _system_toml(ranks, bandwidth)
    # Software per message and side: the measured small-message time less
    # the model's own without software.
    bare = _pingpong_seconds(toml, ranks, small, base)
    software_ns = max(0, round((half[small] - bare) * 1e9 / 2))
    mpi = dict(base, llp_ns=software_ns, stack_ns=software_ns, rendezvous_ns=software_ns)
    # The stream then: scale the link rate so its time per message matches
    # (packet headers and the rendezvous ride on the link).
    scale = _stream_seconds(toml, ranks, big, mpi) / cal["stream_4MiB_s"]
    bandwidth *= scale
    toml = _system_toml(ranks, bandwidth)
    mpi["shared_memory_Bps"] = bandwidth
    return {
        "system_toml": toml,
        "mpi": mpi,
        "fitted": {
            "link_bandwidth_Bps": bandwidth,
            "software_ns_per_message_side": software_ns,
            "source": "[FIT] to the calibration recorded with the trace (the 8-byte ping-pong and a stream of 4 MiB "
                      "messages), not to the traced program",
        },
        "settings": {
            "eager_limit_bytes": f"{VADER_EAGER_LIMIT} [MEM] Open MPI's btl_vader_eager_limit default",
            "llp_limit_bytes": "1024 [MEM] (the same software below and above it here)",
            "rendezvous_ns": f"{software_ns} [DER] the fitted per-message software, taken for each rendezvous control step too",
        },
        "calibration": cal,
    }
