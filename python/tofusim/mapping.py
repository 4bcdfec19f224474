"""Rank mapping and job allocation ([S:003], [S:001]; docs/mapping.md): the
Python API of ``tofusim map``, ``tofusim alloc``, ``tofusim pattern`` and
``tofusim rmatt``. The commands call these functions and only parse their
options and print.

Each argument is checked once (:mod:`tofusim.arguments`): a wrong type is
a :class:`tofusim.ConfigError` naming the argument; ranges are checked by
the core, with the same message from every door.

>>> from tofusim import mapping
>>> m = mapping.map_virtual("k:4x6x4", "24x48")   # 1,152 ranks on 1,152 nodes
>>> m["nodes_used"], m["max_neighbor_hops"]
(1152, 1)
"""

from __future__ import annotations

import json
from typing import Any

from . import _core, arguments

__all__ = ["alloc", "baseline_order", "cg_comm_list", "cg_compute", "cg_iteration_time", "map_virtual", "order_costs", "rmatt"]

_a = arguments
# Ranges are the core's: it refuses out-of-range values with the same
# message from every door; here only the types are checked.



def map_virtual(system: str, shape: str, region: str | None = None, faults: str | None = None, faults_source: str = "faults",
                with_order: bool = False) -> dict[str, Any]:
    """A virtual 1D/2D/3D torus (``shape``, e.g. ``"576x144"``) mapped onto a
    Tofu ``system`` so that virtual neighbours are physical neighbours
    (``tofusim map virtual``). ``region``: ``"X0,Y0,Z0:SXxSYxSZ"`` (default
    the whole system); ``faults``: the text of a fault list (failed nodes
    ``x,y,z,a,b,c`` and links ``NODE - NODE``, one per line), named
    ``faults_source`` in errors. Returns virtual_shape, nodes_used,
    padding_nodes, lost_nodes, max/mean_neighbor_hops, mechanism, block,
    axes and, with ``with_order``, node_of_rank and node_coords."""
    region = None if region is None else _a.text("region", region)
    faults = None if faults is None else _a.text("faults", faults)
    return json.loads(_a.core_call(_core.map_virtual, _a.text("system", system), _a.text("shape", shape), region, faults,
                            _a.text("faults_source", faults_source), _a.flag("with_order", with_order)))


def _load(load: object) -> float:
    """A number (its range is the core's: (0, 10])."""
    if isinstance(load, bool) or not isinstance(load, (int, float)):
        raise _a.refuse("load", "a number (offered node-seconds per machine node-second)", load)
    return float(load)


def alloc(system: str = "k", jobs: int = 500, load: float = 0.9, seed: int = 1) -> dict[str, Any]:
    """The job allocator on a synthetic stream of ``jobs`` virtual-torus jobs
    at offered ``load`` (node-seconds asked per machine node-second), FCFS
    into rectangular blocks, under four policies (no rotation or padding,
    rotation, padding, both): ``tofusim alloc``. Same ``seed``, same
    stream."""
    return json.loads(_a.core_call(_core.alloc_stream, _a.text("system", system), _a.whole("jobs", jobs),
                            _load(load), _a.whole("seed", seed)))


def cg_comm_list(procs: int, class_: str = "B") -> str:
    """The NAS CG communication list of ``procs`` processes (a power of
    two), problem class ``class_`` (S, W, A, B, C, D or E): ``SRC DST
    BYTES`` lines over the timed run (``tofusim pattern cg``)."""
    return str(_a.core_call(_core.cg_comm_list, _a.whole("procs", procs, -2**63, 2**63 - 1), _a.text("class_", class_)))


def cg_compute(procs: int, class_: str = "B") -> dict[str, Any]:
    """One NAS CG iteration's computation per process on a K computer node:
    flops, memory bytes, seconds, the timed run's CG iterations and the
    node's rates (docs/model.md, NAS CG's computation)."""
    return json.loads(_a.core_call(_core.cg_compute, _a.whole("procs", procs, -2**63, 2**63 - 1), _a.text("class_", class_)))


def order_costs(torus: str, pattern: str, order: list[int], source: str = "pattern") -> tuple[int, int]:
    """Hop-bytes and maximum link load (bytes) of the rank ``order`` (rank i
    on node ``order[i]`` of ``torus``, e.g. ``"32x32"``) for the
    communication list ``pattern`` (its text, named ``source`` in errors)."""
    hop_bytes, max_link = _a.core_call(_core.order_costs, _a.text("torus", torus), _a.text("pattern", pattern), _a.ranks("order", order),
                                _a.text("source", source))
    return int(hop_bytes), int(max_link)


def baseline_order(torus: str, pattern: str, kind: str, seed: int = 1, source: str = "pattern") -> list[int]:
    """A baseline rank order of ``pattern`` on ``torus``: ``kind`` is
    ``default`` (x-y), ``random`` (seeded) or ``greedy``."""
    return list(_a.core_call(_core.baseline_order, _a.text("torus", torus), _a.text("pattern", pattern), _a.text("kind", kind),
                      _a.whole("seed", seed), _a.text("source", source)))


def rmatt(torus: str, pattern: str, objective: str = "hop-bytes", seed: int = 1, iterations: int | None = None,
          start: list[int] | None = None, source: str = "pattern", ranks_per_node: int = 1) -> dict[str, Any]:
    """RMATT: simulated annealing of the rank order of the communication
    list ``pattern`` (its text) on ``torus`` (``tofusim rmatt``).
    ``objective``: ``hop-bytes`` or ``max-link-load``; ``iterations``:
    proposed swaps (default 2,000 per rank for hop-bytes, 500 for
    max-link-load); ``start``: the order to start from (rank → node;
    default x-y, ``ranks_per_node`` consecutive ranks per node);
    ``ranks_per_node``: ranks a node of ``torus`` holds (one per core:
    flows between ranks of one node cost nothing).
    Returns objective, default_cost (of the start), optimized_cost,
    iterations, requested_iterations, accepted, seconds, complete (False
    when Ctrl-C stopped it: the best order so far), ranks_per_node and
    order (rank → node)."""
    iterations = None if iterations is None else _a.whole("iterations", iterations, -2**63, 2**63 - 1)
    start = None if start is None else _a.ranks("start", start)
    return json.loads(_a.core_call(_core.rmatt, _a.text("torus", torus), _a.text("pattern", pattern), _a.text("objective", objective),
                            _a.whole("seed", seed), iterations, start, _a.text("source", source),
                            _a.whole("ranks_per_node", ranks_per_node, 0, 2**32 - 1)))


def cg_iteration_time(torus: str, procs: int, class_: str, order: list[int], system: str = "k", ranks_per_node: int = 1) -> dict[str, Any]:
    """One NAS CG iteration's communication on the packet engine
    (``tofusim pattern time``): ``procs`` processes on the job's virtual
    ``torus`` with the links and host model of ``system``, placed by
    ``order`` (rank i on node ``order[i]``); with ``ranks_per_node`` > 1
    up to that many ranks share a node (their messages to each other go
    through its memory, not the network). Returns time_seconds and the
    run."""
    return json.loads(_a.core_call(_core.cg_iteration_time, _a.text("torus", torus), _a.whole("procs", procs, -2**63, 2**63 - 1), _a.text("class_", class_),
                            _a.ranks("order", order), _a.text("system", system), _a.whole("ranks_per_node", ranks_per_node, 0, 2**32 - 1)))
