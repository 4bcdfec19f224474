"""``--max-time``: the time budget shared by the commands that run the
packet engine (run, coll, replay). A run whose own estimate exceeds it is
refused before it starts, with the estimate (docs/experiment.md)."""

from __future__ import annotations

from typing import Any

import click

from .. import ConfigError, arguments


def _parse(ctx: click.Context, param: click.Parameter, value: str | None) -> float | str | None:
    if value is None:
        return None
    try:
        m = arguments.minutes("--max-time", value)
    except ConfigError:
        raise click.BadParameter(f"{value!r}: expected a duration such as 90s, 30min, 2h or 1d, or none") from None
    return "none" if m == float("inf") else m


def max_time_option(f: Any) -> Any:
    return click.option(
        "--max-time", "max_time", default=None, metavar="DURATION", callback=_parse,
        help="Refuse a packet-engine run whose own estimate (its packet-hops at about 1 us each: a rough guide) exceeds DURATION "
             "(e.g. 90s, 30min, 2h, 1d; none: no limit) [default: 1h].")(f)
