"""The options that place several ranks per node (``--ppn``, ``--placement``),
shared by the commands that run ranks."""

from __future__ import annotations

from typing import Any, Callable

import click


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
    from .rmatt import read_order

    return read_order(placement)
