"""Sizes with units on the command line (the same spellings as the experiment files)."""

from __future__ import annotations

import re

from ._core import ConfigError
from .origin import WHERE

_SCALE = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_bytes(text: str | int, key: str) -> int:
    """``"64KiB"`` → 65536; a plain number is bytes. Raises ConfigError naming ``key``."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _SCALE:
        raise ConfigError(f"{WHERE.get()}: {key}: expected a size such as 8, 256B, 64KiB or 16MiB, found {text!r}")
    value = float(m.group(1)) * _SCALE[m.group(2).lower()]
    if value != int(value):
        raise ConfigError(f"{WHERE.get()}: {key}: expected a whole number of bytes, found {text!r}")
    return int(value)
