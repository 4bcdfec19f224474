"""The options that place several ranks per node (``--ppn``, ``--placement``),
shared by the commands that run ranks."""

from __future__ import annotations

from typing import Any, Callable

import click

from .. import ConfigError
from .files import read_text


def ppn_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--placement", default="block", show_default=True, metavar="block|cyclic|FILE",
                     help="Where the ranks go: block (consecutive ranks share a node), cyclic (round robin over the nodes), "
                          "or a map FILE (a node id per line, rank 0 first).")(f)
    f = click.option("--ppn", type=int, default=1, show_default=True, metavar="N",
                     help="Ranks per node. They share the node's TNIs and host interface; messages between them go through "
                          "its memory (one copy at the host's copy rate), not the network.")(f)
    return f


def read_placement(placement: str) -> "str | list[int]":
    """``block``/``cyclic``, or the node ids of a map file (an order file's form)."""
    if placement in ("block", "cyclic"):
        return placement
    return read_order(placement)


def read_order(path: str) -> list[int]:
    """An order file: line i (comments and blank lines aside) is rank i's node."""
    order = []
    for n, line in enumerate(read_text(path, "order file").splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        try:
            order.append(int(body))
        except ValueError:
            raise ConfigError(f"{path}, line {n}: expected one node number per line, got {body!r}") from None
        if order[-1] < 0:
            raise ConfigError(f"{path}, line {n}: node numbers are non-negative, got {body!r}")
    return order
