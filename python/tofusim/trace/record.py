"""``tofusim trace record``: runs an MPI program under the tracer."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import ConfigError

LIBRARY = Path(__file__).resolve().parent.parent / "lib" / "libtofusim_tracer.so"
#: Launchers that take Open MPI's ``-x NAME=VALUE`` to set the ranks' environment.
OPEN_MPI_LAUNCHERS = {"mpirun", "mpiexec", "orterun"}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def record(command: list[str], out: str, calibration: bool = True) -> dict[str, Any]:
    """Runs ``command`` (``mpirun -np N PROGRAM ARGS``, or a program started
    alone) with the tracer preloaded, writing the OTF2 archive to ``out``
    (which must not exist) and ``out/tofusim.json`` (the command, its wall
    time, the machine and, with ``calibration``, the ping-pong the tracer
    times on the program's own processes after it ends: the model of this
    machine for ``tofusim replay --system recorded``). Returns that record."""
    if not command:
        raise ConfigError("trace record: give the command to run after --, e.g. tofusim trace record --out T -- mpirun -np 2 ./app")
    if not LIBRARY.exists():
        raise ConfigError(f"{LIBRARY}: the tracer library is not built; run make install")
    target = Path(out).resolve()
    if target.exists():
        raise ConfigError(f"{out}: already exists; the tracer writes a new directory (remove it or give another --out)")
    if not target.parent.is_dir():
        raise ConfigError(f"{out}: the directory {target.parent} does not exist")
    preload = " ".join(p for p in (os.environ.get("LD_PRELOAD", ""), str(LIBRARY)) if p)
    env = dict(os.environ, TOFUSIM_TRACE_DIR=str(target), TOFUSIM_TRACE_CALIBRATE="1" if calibration else "")
    launcher = Path(command[0]).name
    if launcher in OPEN_MPI_LAUNCHERS:
        argv = [command[0], "-x", f"LD_PRELOAD={preload}", "-x", f"TOFUSIM_TRACE_DIR={target}",
                "-x", f"TOFUSIM_TRACE_CALIBRATE={env['TOFUSIM_TRACE_CALIBRATE']}", *command[1:]]
    else:
        env["LD_PRELOAD"] = preload
        argv = list(command)
    t0 = time.perf_counter()
    try:
        done = subprocess.run(argv, env=env, check=False)
    except OSError as e:
        raise ConfigError(f"trace record: cannot run {command[0]!r}: {e.strerror}") from None
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise ConfigError(f"trace record: {' '.join(command)} exited with code {done.returncode}; no trace kept" +
                          (f" (partial files in {out})" if target.exists() else ""))
    if not list(target.glob("*.otf2")):
        raise ConfigError(f"trace record: {' '.join(command)} wrote no trace to {out}: did the program call MPI_Init "
                          "(and was it linked against the same MPI library)?")
    def tracer_file(name: str) -> dict[str, Any] | None:
        f = target / name
        if not f.exists():
            return None
        try:
            return json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{f}: the tracer's {name} is unreadable: {e}") from None

    cal = tracer_file("calibration.json")
    if cal is not None:
        cal["half_round_trip_s"] = {int(k): v for k, v in cal["half_round_trip_s"].items()}
    threads = tracer_file("threads.json") or {}
    meta = {
        "calibration": cal,
        # MPI calls per rank made by threads other than MPI_Init's (not
        # recorded; the replay refuses a trace that has any).
        "other_thread_calls": threads.get("other_thread_calls"),
        "command": list(command),
        "wall_seconds": wall,
        "host": platform.node(),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tracer": str(LIBRARY.name),
    }
    (target / "tofusim.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta
