"""A reproduction case: its id, title, source and the function that runs it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Case:
    id: str
    title: str
    source: str
    run: Callable[[str], dict[str, Any]]


def case_maker(source: str) -> Callable[[str, str, Callable[[str], dict[str, Any]]], Case]:
    """Cases of one source: ``_C = case_maker(SOURCE)``, then ``_C(id, title, fn)``."""
    return lambda id, title, fn: Case(id, title, source, fn)
