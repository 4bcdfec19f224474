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
PINGPONG = LIBRARY.parent / "tofusim_pingpong"
#: Launcher options that take a value (two for --mca), so the program is
#: the first word after the options.
_WITH_VALUE = {"-np", "-n", "-c", "--np", "-N", "-H", "--host", "-host", "-hostfile", "--hostfile", "--machinefile",
               "-machinefile", "--map-by", "--bind-to", "--rank-by", "-x", "--prefix", "-wdir", "--wdir", "-wd"}
_WITH_TWO = {"--mca", "-mca", "--gmca", "-gmca"}
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


def launcher_options(command: list[str]) -> list[str] | None:
    """The launcher and its options of ``command`` (``mpirun -np 4 --bind-to
    core ./app``: ``mpirun --bind-to core``, without the rank count), or
    None when it is not an Open MPI launcher."""
    if not command or Path(command[0]).name not in OPEN_MPI_LAUNCHERS:
        return None
    out = [command[0]]
    i = 1
    while i < len(command):
        w = command[i]
        if not w.startswith("-"):
            break
        take = 2 if w in _WITH_TWO else 1 if w in _WITH_VALUE else 0
        if w not in ("-np", "-n", "--np", "-c"):
            out.extend(command[i:i + 1 + take])
        i += 1 + take
    return out


def calibrate(command: list[str]) -> dict[str, Any] | None:
    """Half round-trip times of 8 B to 4 MiB between two ranks, with the
    launcher and options of ``command`` (not traced), for the model of the
    recording machine; None without an Open MPI launcher."""
    opts = launcher_options(command)
    if opts is None or not PINGPONG.exists():
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TOFUSIM_TRACE_DIR")}
    try:
        done = subprocess.run([*opts, "-np", "2", str(PINGPONG)], env=env, capture_output=True, text=True, check=False, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ConfigError(f"trace record: the calibration ping-pong did not run: {e}") from None
    if done.returncode != 0:
        raise ConfigError(f"trace record: the calibration ping-pong ({' '.join(opts)} -np 2 {PINGPONG.name}) exited with code "
                          f"{done.returncode}: {done.stderr.strip()[:300]}")
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("{")), None)
    if line is None:
        raise ConfigError(f"trace record: the calibration ping-pong printed no result: {done.stdout.strip()[:300]}")
    times = json.loads(line)["half_round_trip_s"]
    return {"program": PINGPONG.name, "launcher": [*opts, "-np", "2"],
            "half_round_trip_s": {int(k): v for k, v in times.items()}}


def record(command: list[str], out: str, calibration: bool = True) -> dict[str, Any]:
    """Runs ``command`` (``mpirun -np N PROGRAM ARGS``, or a program started
    alone) with the tracer preloaded, writing the OTF2 archive to ``out``
    (which must not exist) and ``out/tofusim.json`` (the command, its wall
    time and the machine). Returns that record."""
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
    env = dict(os.environ, TOFUSIM_TRACE_DIR=str(target))
    launcher = Path(command[0]).name
    if launcher in OPEN_MPI_LAUNCHERS:
        argv = [command[0], "-x", f"LD_PRELOAD={preload}", "-x", f"TOFUSIM_TRACE_DIR={target}", *command[1:]]
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
    meta = {
        "calibration": calibrate(command) if calibration else None,
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
