"""The options that place several ranks per node (``--ppn``, ``--placement``),
shared by the commands that run ranks."""

from __future__ import annotations

from typing import Any, Callable

import click

from .. import ConfigError


def ppn_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--placement", default="block", show_default=True, metavar="block|cyclic|FILE",
                     help="Where the ranks go: block (consecutive ranks share a node), cyclic (round robin over the nodes), "
                          "or a map FILE (a node id per line, rank 0 first).")(f)
    f = click.option("--ppn", type=int, default=1, show_default=True, metavar="N",
                     help="Ranks per node. They share the node's TNIs and host interface; messages between them go through "
                          "its memory (one copy at the host's copy rate), not the network.")(f)
    return f


def read_placement(placement: str) -> "str | list[int]":
    """``block``/``cyclic``, or the node ids of a map file."""
    if placement in ("block", "cyclic"):
        return placement
    from .files import read_text

    nodes = []
    for n, line in enumerate(read_text(placement, "placement map").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if not line.isdigit():
            raise ConfigError(f"{placement}: line {n}: expected a node id (a whole number), found {line!r:.40}")
        nodes.append(int(line))
    return nodes
