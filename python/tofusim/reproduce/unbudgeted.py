"""The runs of the reproduction cases, without the time budget a user's
run gets by default (an hour by its own estimate): each case is a fixed
workload whose wall time is stated in docs/validation.md, and its
``--scale full`` runs are asked for by name."""

from __future__ import annotations

from typing import Any

from .. import coll, run


def run_experiment(*args: Any, **kw: Any) -> Any:
    kw.setdefault("max_minutes", "none")
    return run(*args, **kw)


def run_coll(*args: Any, **kw: Any) -> Any:
    kw.setdefault("max_minutes", "none")
    return coll(*args, **kw)
