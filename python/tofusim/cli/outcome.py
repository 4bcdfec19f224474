"""How a command ends, when not with success: raised by the commands and
turned into an exit code in one place (``tofusim.cli.main``).

- ``tofusim.ConfigError``: bad input, exit 2;
- :class:`Interrupted`: Ctrl-C stopped the work, whatever was measured
  already printed (``complete: false``), exit 130;
- :class:`Failed`: the simulation ran and found a failure (a deadlock, a
  broken invariant, a wrong collective result, a deadlock the static check
  found), exit 1.

Anything else is an internal error (exit 1, "internal error")."""

from __future__ import annotations


class Interrupted(Exception):
    """Ctrl-C: exit 130; the message says what was finished."""

    exit_code = 130


class Failed(Exception):
    """The simulated system failed (not the tool): exit 1."""

    exit_code = 1
