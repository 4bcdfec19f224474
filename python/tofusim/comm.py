"""The communication software on a simulated machine (docs/communication.md):
put and get latencies, ping-pongs, the MPI layer's modes and memory, the
Tofu barrier interface, and collectives placed by hand. Each call runs on
the packet engine with the system's communication model (its packet
format and the costs of its host, NIC and MPI layer, each with its
source); the reproduction cases are built from these calls.

Each argument is checked once (:mod:`tofusim.arguments`): a wrong type is
a :class:`tofusim.ConfigError` naming the argument; ranges are checked by
the core, with the same message from every door.

>>> from tofusim import comm
>>> r = comm.pingpong("k:2x3x2", 0, 1, 8, rounds=4)
>>> 0 < r["time_seconds"] / (2 * 4) * 1e6 < 5   # one way, µs
True

Timings are dicts: ``time_seconds`` (from the first start to the last
finish), ``cycles``, ``rank_end_cycles``, ``processes``,
``communicator_shape`` and the packet engine's ``run``.
"""

from __future__ import annotations

import json
from typing import Any

from . import _core, arguments

__all__ = ["barrier_plans", "collective_buffers", "collective_placed", "comm_model", "dragonfly_hop_pairs", "hardware_barrier_us",
           "mpi_memory", "mpi_pingpong", "pingpong", "rdma", "transfers", "trinaryx3_segment"]

_a = arguments
_U32 = 2**32 - 1



def _modes(descriptor: str, cache_injection: bool, cmg: str) -> tuple[str, bool, str]:
    return _a.text("descriptor", descriptor), _a.flag("cache_injection", cache_injection), _a.text("cmg", cmg)


def comm_model(system: str) -> dict[str, Any]:
    """The communication model of ``system``: its packet format and every
    cost component, each with its source."""
    return json.loads(_a.core_call(_core.comm_model, _a.text("system", system)))


def transfers(system: str, sends: list[tuple[int, int, int, int]], descriptor: str = "direct", cache_injection: bool = True,
              cmg: str = "near") -> dict[str, Any]:
    """Transfers that start together over ``system``'s nodes: ``sends`` is a
    list of (source rank, destination rank, bytes, TNI). ``descriptor``
    (``direct`` or ``memory``), ``cache_injection`` and ``cmg`` (TofuD:
    ``near`` or ``far``) are the low-latency switches of [S:000]. Returns
    the timing."""
    if isinstance(sends, (str, bytes)):
        raise _a.refuse("sends", "a list of (source, destination, bytes, TNI)", sends)
    rows = []
    try:
        for i, row in enumerate(sends):
            s, d, b, t = row
            rows.append((_a.whole(f"sends[{i}] source", s, 0, _U32), _a.whole(f"sends[{i}] destination", d, 0, _U32),
                         _a.whole(f"sends[{i}] bytes", b), _a.whole(f"sends[{i}] TNI", t, 0, 255)))
    except (TypeError, ValueError):
        raise _a.refuse("sends", "a list of (source, destination, bytes, TNI)", sends) from None
    return json.loads(_a.core_call(_core.run_transfers, _a.text("system", system), rows, *_modes(descriptor, cache_injection, cmg)))


def pingpong(system: str, a: int, b: int, size_bytes: int, rounds: int = 10, descriptor: str = "direct", cache_injection: bool = True,
             cmg: str = "near") -> dict[str, Any]:
    """``rounds`` round trips of ``size_bytes`` puts between ranks ``a`` and
    ``b`` of ``system``. Returns the timing (one way: ``time_seconds / (2 *
    rounds)``)."""
    return json.loads(_a.core_call(_core.run_pingpong, _a.text("system", system), _a.whole("a", a, 0, _U32), _a.whole("b", b, 0, _U32),
                            _a.size("size_bytes", size_bytes), _a.whole("rounds", rounds, 0, _U32), *_modes(descriptor, cache_injection, cmg)))


def rdma(system: str, kind: str, size_bytes: int, rounds: int = 10, descriptor: str = "direct", cache_injection: bool = True,
         cmg: str = "near") -> dict[str, Any]:
    """``rounds`` RDMA Gets (``kind="get"``) of ``size_bytes``, or 8-byte
    atomic adds (``"atomic"``), by rank 0 on rank 1 of ``system``, one after
    another. Returns the timing."""
    return json.loads(_a.core_call(_core.run_rdma, _a.text("system", system), _a.text("kind", kind), _a.size("size_bytes", size_bytes),
                            _a.whole("rounds", rounds, 0, _U32), *_modes(descriptor, cache_injection, cmg)))


def mpi_pingpong(system: str, size_bytes: int, rounds: int = 10, mode: str = "auto") -> dict[str, Any]:
    """``rounds`` MPI ping-pongs of ``size_bytes`` between ranks 0 and 1 of
    ``system`` with K computer MPI's settings; ``mode`` forces a buffer
    mode or follows the switching policy (``auto``). Returns the timing."""
    return json.loads(_a.core_call(_core.run_mpi_pingpong, _a.text("system", system), _a.size("size_bytes", size_bytes),
                            _a.whole("rounds", rounds, 0, _U32), _a.text("mode", mode)))


def mpi_memory(peers: list[int]) -> dict[str, Any]:
    """The MPI settings and the communication-buffer memory per process for
    each number of ``peers``, under each buffer policy."""
    return json.loads(_core.mpi_memory(_a.ranks("peers", peers)))


def barrier_plans(bchs: list[int], generation: str = "tofud") -> dict[str, Any]:
    """The barrier-gate plan of the Tofu barrier interface for each number
    of barrier channels in ``bchs`` (``generation``: ``tofud`` or
    ``tofu1``): stages, gates per TNI, estimates."""
    return json.loads(_a.core_call(_core.barrier_plans, _a.ranks("bchs", bchs), _a.text("generation", generation)))


def hardware_barrier_us(system: str, payload_bytes: int = 0, graph: str = "physical-axes") -> float:
    """The Tofu hardware barrier across every node of ``system``, µs (with
    ``payload_bytes``, the barrier interface's small allreduce); ``graph``
    wires the gates: ``physical-axes`` (default: along the network's six
    axes, dissemination on rings and recursive doubling on power-of-two
    lines), ``axes`` (along the communicator's three virtual axes),
    ``axis-neighbours`` or ``rank-order``."""
    return float(_a.core_call(_core.hardware_barrier_us, _a.text("system", system), _a.whole("payload_bytes", payload_bytes, 0, _U32),
                       _a.text("graph", graph)))


def trinaryx3_segment(system: str, size_bytes: int) -> dict[str, Any]:
    """The Trinaryx3 segment derived from the pipeline depth on ``system``
    for a vector of ``size_bytes``: segment_bytes, stages, alpha_ns,
    ns_per_byte, part_bytes."""
    return json.loads(_a.core_call(_core.trinaryx3_segment, _a.text("system", system), _a.size("size_bytes", size_bytes)))


def dragonfly_hop_pairs(system: str) -> list[tuple[int, int, int]]:
    """For each route length of a dragonfly's routing (``system``, with an
    optional ``/mode``), one pair of nodes whose packets take that many
    router hops both ways: ``[(hops, source node, destination node)]``."""
    return [tuple(x) for x in _a.core_call(_core.dragonfly_hop_pairs, _a.text("system", system))]


def collective_placed(system: str, op: str, algo: str, size_bytes: int, node_of_rank: list[int], seed: int = 1) -> dict[str, Any]:
    """Collective ``op``/``algo`` of ``size_bytes`` with its ranks placed on
    the nodes of ``system`` by ``node_of_rank`` (several ranks may share a
    node: their messages then turn around in its NIC), on the packet
    engine. Returns the timing."""
    return json.loads(_a.core_call(_core.run_collective_placed, _a.text("system", system), _a.text("op", op), _a.text("algo", algo),
                            _a.size("size_bytes", size_bytes), _a.ranks("node_of_rank", node_of_rank), _a.whole("seed", seed)))


def collective_buffers(op: str, root: int, ranks: int, count: int, buffer_elements: int, rank: int) -> tuple[bytes, int, bytes]:
    """Rank ``rank``'s buffer before a collective and the elements it must
    hold after, as little-endian u64 bytes: (initial, result offset,
    expected). What ``tofusim coll --verify`` and the real-MPI executor
    check against."""
    init, offset, expected = _a.core_call(_core.collective_buffers, _a.text("op", op), _a.whole("root", root, 0, _U32), _a.whole("ranks", ranks, 1, _U32),
                                   _a.whole("count", count), _a.whole("buffer_elements", buffer_elements), _a.whole("rank", rank, 0, _U32))
    return bytes(init), int(offset), bytes(expected)
