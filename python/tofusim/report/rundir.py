"""A tofusim output directory, recognised by the files the commands write
there, and read.

| kind | written by | recognised by |
| --- | --- | --- |
| run | ``tofusim run --out`` | ``results.json`` |
| collective | ``tofusim coll --out`` (one algorithm and size) | ``result.json`` with ``op`` |
| replay | ``tofusim replay --out`` | ``result.json`` with ``per_rank`` |
| sweep | ``tofusim sweep`` | ``sweep.parquet`` |
| collective sweep | ``tofusim coll --algo a,b`` or ``--size LO:HI`` | ``coll.parquet`` |
| reproduce | ``tofusim reproduce --out`` | ``CASE.json`` with ``case`` and ``metrics`` |
| jobs | ``tofusim jobs --out`` | ``result.json`` with ``jobs`` |

Anything else is refused with one line naming the directory (exit 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import ConfigError

WHAT = ("a tofusim output directory: results.json (tofusim run --out), result.json (tofusim coll, replay or jobs --out), "
        "sweep.parquet (tofusim sweep), coll.parquet (a tofusim coll sweep) or CASE.json (tofusim reproduce --out)")


@dataclass
class RunDir:
    """What a report draws from, as read from the directory."""

    path: Path
    #: ``run``, ``collective``, ``replay``, ``sweep``, ``coll-sweep``, ``reproduce`` or ``jobs``.
    kind: str
    #: results.json / result.json (run, collective, replay).
    result: dict[str, Any] = field(default_factory=dict)
    #: The experiment file the run ran (``experiment.toml``), or the system file of a replay (``system.toml``).
    experiment: str | None = None
    samples: pd.DataFrame | None = None
    #: Per-VC samples (``vc_samples.parquet``) and a VC buffer's capacity in chunks (the file's ``vc_buffer_chunks``).
    vc_samples: pd.DataFrame | None = None
    vc_buffer_chunks: int = 0
    ports: pd.DataFrame | None = None
    steps: pd.DataFrame | None = None
    #: A sweep's rows (sweep.parquet, coll.parquet).
    table: pd.DataFrame | None = None
    #: A sweep's description (sweep.json).
    meta: dict[str, Any] = field(default_factory=dict)
    #: Reproduction results (CASE.json files).
    cases: list[dict[str, Any]] = field(default_factory=list)


def _json(p: Path) -> Any:
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{p}: cannot read: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: not a tofusim result (invalid JSON: {e})") from None


def _table(p: Path) -> pd.DataFrame | None:
    if not p.exists():
        return None
    try:
        return pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
    except Exception as e:  # noqa: BLE001 - pyarrow and pandas raise many kinds for a damaged file
        raise ConfigError(f"{p}: unreadable ({type(e).__name__}: {e}); expected the file tofusim wrote") from None


def _vc_samples(d: Path) -> dict[str, Any]:
    """``vc_samples`` and ``vc_buffer_chunks`` of the directory's VC samples (none when it has none)."""
    p = d / "vc_samples.parquet"
    frame = _table(p)
    if frame is None:
        return {}
    import pyarrow.parquet as pq

    try:
        chunks = int((pq.read_schema(p).metadata or {}).get(b"vc_buffer_chunks", b""))
    except ValueError:
        raise ConfigError(f"{p}: no VC buffer capacity (vc_buffer_chunks) in its metadata; expected the file tofusim wrote") from None
    if chunks <= 0:
        raise ConfigError(f"{p}: a VC buffer capacity of {chunks} chunks; expected the file tofusim wrote")
    return {"vc_samples": frame, "vc_buffer_chunks": chunks}


def _text(p: Path) -> str | None:
    try:
        return p.read_text(encoding="utf-8") if p.exists() else None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: cannot read: {e}") from None


def _cases(d: Path) -> list[dict[str, Any]]:
    cases = []
    for p in sorted(d.glob("*.json")):
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict) and "case" in doc and "metrics" in doc:
            cases.append(doc)
    return cases


def open_run_dir(path: str | Path) -> RunDir:
    """Recognises and reads a tofusim output directory (ConfigError, one
    line, if ``path`` is not one)."""
    d = Path(path)
    if not d.exists():
        raise ConfigError(f"{d}: no such directory; expected {WHAT}")
    if not d.is_dir():
        raise ConfigError(f"{d}: not a directory; expected {WHAT}")
    if (d / "results.json").exists():
        r = _json(d / "results.json")
        if not isinstance(r, dict) or "latency" not in r:
            raise ConfigError(f"{d / 'results.json'}: not a tofusim run result (no latency); expected {WHAT}")
        return RunDir(d, "run", result=r, experiment=_text(d / "experiment.toml"), samples=_table(d / "port_samples.parquet"),
                      ports=_table(d / "ports.csv"), cases=_cases(d), **_vc_samples(d))
    if (d / "result.json").exists():
        r = _json(d / "result.json")
        if isinstance(r, dict) and "op" in r and "algo" in r:
            return RunDir(d, "collective", result=r, samples=_table(d / "port_samples.parquet"), steps=_table(d / "steps.parquet"),
                          cases=_cases(d), **_vc_samples(d))
        if isinstance(r, dict) and "jobs" in r and "layout_width" in r:
            return RunDir(d, "jobs", result=r)
        if isinstance(r, dict) and "per_rank" in r:
            return RunDir(d, "replay", result=r, experiment=_text(d / "system.toml"), samples=_table(d / "port_samples.parquet"),
                          cases=_cases(d), **_vc_samples(d))
        raise ConfigError(f"{d / 'result.json'}: neither a collective's nor a replay's result; expected {WHAT}")
    if (d / "sweep.parquet").exists():
        meta = _json(d / "sweep.json") if (d / "sweep.json").exists() else {}
        return RunDir(d, "sweep", table=_table(d / "sweep.parquet"), meta=meta if isinstance(meta, dict) else {},
                      experiment=_text(d / "experiment.toml"), cases=_cases(d))
    if (d / "coll.parquet").exists():
        return RunDir(d, "coll-sweep", table=_table(d / "coll.parquet"), cases=_cases(d))
    cases = _cases(d)
    if cases:
        return RunDir(d, "reproduce", cases=cases)
    raise ConfigError(f"{d}: not {WHAT}")
