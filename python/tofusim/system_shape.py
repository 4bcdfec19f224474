"""Shapes written as ``54x48x32`` on the command line."""

from __future__ import annotations

from . import ConfigError


def parse_shape(text: str, where: str) -> list[int]:
    """Parses ``AxBxC`` into positive lengths, or raises ConfigError naming ``where``."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        lengths = [int(p) for p in parts]
    except ValueError:
        lengths = []
    if not lengths or any(n < 1 for n in lengths):
        raise ConfigError(f"<command line>: {where}: expected a shape such as 54x48x32 (positive lengths), found {text!r}")
    return lengths
