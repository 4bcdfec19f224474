"""Reading and writing the files the commands are given: every failure is
a ConfigError naming the file (exit 2), never a traceback."""

from __future__ import annotations

from pathlib import Path

from .. import ConfigError


def read_text(path: str, what: str) -> str:
    """The text of ``path`` (a ``what``, e.g. "communication list")."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: the {what} is not UTF-8 text (byte {e.start}); expected a text file") from None


def write_text(path: str, text: str, what: str) -> None:
    """Writes ``text`` to ``path`` (a ``what``), whose directory must exist."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{path}: is a directory; expected a file name for the {what}")
    if not p.parent.is_dir():
        raise ConfigError(f"{path}: the directory {p.parent} does not exist (for the {what})")
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: cannot write the {what}: {e.strerror}") from None
