"""Synthetic OTF2 traces of an MPI program (``tofusim trace synth``): a 3D
halo exchange with a periodic allreduce, at any rank count, written with
OTF2's own Python bindings — a second writer beside tofusim's tracer, laid
out as Score-P lays out its traces (a process per rank with a master
thread and a worker thread, user regions around the MPI calls, locations
numbered per thread), so the reader is exercised on a trace it did not
write. Used for replays at scales the machine cannot run (issue 20: 1,024
ranks on the flow model).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from .. import ConfigError

#: The most events ``write`` produces (about 4 GiB of OTF2, minutes of writing).
MAX_EVENTS = 100_000_000


def grid(ranks: int) -> tuple[int, int, int]:
    """Three factors of ``ranks``, as equal as they come."""
    best = (ranks, 1, 1)
    for a in range(1, ranks + 1):
        if ranks % a:
            continue
        for b in range(1, ranks // a + 1):
            if (ranks // a) % b:
                continue
            c = ranks // a // b
            if max(a, b, c) - min(a, b, c) < max(best) - min(best):
                best = (a, b, c)
    return best


def neighbours(rank: int, dims: tuple[int, int, int]) -> list[int]:
    """The six periodic neighbours of ``rank`` (x fastest), in the order
    -x +x -y +y -z +z (a neighbour may repeat on a short axis)."""
    x, y, z = rank % dims[0], rank // dims[0] % dims[1], rank // (dims[0] * dims[1])
    out = []
    for axis in range(3):
        for step in (-1, 1):
            c = [x, y, z]
            c[axis] = (c[axis] + step) % dims[axis]
            out.append(c[0] + dims[0] * (c[1] + dims[1] * c[2]))
    return out


def write(out: str, ranks: int, iterations: int = 10, halo_bytes: int = 65536, compute_ns: int = 200_000,
          allreduce_every: int = 5, call_ns: int = 1_000, slow_rank: int | None = None, slow_factor: float = 1.0) -> dict[str, Any]:
    """Writes the trace to ``out`` (a new directory); returns its shape.
    ``slow_rank`` computes ``slow_factor`` times as long per iteration as
    the others (a load imbalance its neighbours wait for)."""
    import otf2
    from otf2.enums import CollectiveOp, GroupType, LocationGroupType, Paradigm, RegionRole

    if ranks < 2:
        raise ConfigError(f"trace synth: --ranks {ranks}: expected at least 2")
    if iterations < 1 or halo_bytes < 0 or compute_ns < 0 or allreduce_every < 1:
        raise ConfigError("trace synth: expected iterations >= 1, bytes >= 0, compute >= 0, allreduce-every >= 1")
    if slow_rank is not None and not 0 <= slow_rank < ranks:
        raise ConfigError(f"trace synth: --slow-rank {slow_rank}: expected a rank from 0 to {ranks - 1}")
    if not 1.0 <= slow_factor <= 1e6:
        raise ConfigError(f"trace synth: --slow-factor {slow_factor}: expected 1 to 1,000,000")
    # Each iteration writes about 14 events per rank (six sends, six
    # receives, the compute burst, the allreduce's share): refuse what
    # would take hours and gigabytes before writing a byte.
    events = ranks * iterations * 14
    if events > MAX_EVENTS:
        raise ConfigError(f"trace synth: --ranks {ranks:,} x --iterations {iterations:,}: about {events:,} events, "
                          f"more than the {MAX_EVENTS:,} this writer takes (about {events * 40 / 2**30:,.0f} GiB)")
    target = Path(out)
    if target.exists():
        raise ConfigError(f"{out}: already exists; give a new directory")
    dims = grid(ranks)
    # Small event chunks: every location holds one until the archive closes.
    with otf2.writer.open(str(target), timer_resolution=1_000_000_000, chunk_size_events=256 * 1024) as trace:
        d = trace.definitions
        root = d.system_tree_node("machine")
        node = d.system_tree_node("node", parent=root)
        mpi = {name: d.region(name, paradigm=Paradigm.MPI, region_role=RegionRole.FUNCTION)
               for name in ("MPI_Init", "MPI_Finalize", "MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce")}
        user_main = d.region("main", paradigm=Paradigm.USER, region_role=RegionRole.FUNCTION)
        user_compute = d.region("compute_step", paradigm=Paradigm.USER, region_role=RegionRole.FUNCTION)
        groups = [d.location_group(f"rank {r}", location_group_type=LocationGroupType.PROCESS, system_tree_parent=node)
                  for r in range(ranks)]
        masters, workers = [], []
        for r in range(ranks):
            masters.append(d.location(f"rank {r} master thread", group=groups[r]))
            workers.append(d.location(f"rank {r} worker thread", group=groups[r]))
        locations = d.group("world locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=masters)
        world_group = d.group("MPI_COMM_WORLD", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=masters)
        del locations
        world = d.comm("MPI_COMM_WORLD", group=world_group)
        for r in range(ranks):
            w = trace.event_writer_from_location(masters[r])
            worker = trace.event_writer_from_location(workers[r])
            t = 1_000 + r  # ranks start a little apart
            w.enter(t, user_main)
            w.enter(t, mpi["MPI_Init"])
            t += 10 * call_ns
            w.leave(t, mpi["MPI_Init"])
            request = itertools.count(1)
            # A neighbour on an axis of length 1 is the rank itself: no message.
            peers = [(k, p) for k, p in enumerate(neighbours(r, dims)) if p != r]
            for it in range(iterations):
                # Compute, on both threads.
                w.enter(t, user_compute)
                worker.enter(t, user_compute)
                t += round(compute_ns * slow_factor) if r == slow_rank else compute_ns
                worker.leave(t, user_compute)
                w.leave(t, user_compute)
                recv_requests = []
                for k, p in peers:
                    q = next(request)
                    w.enter(t, mpi["MPI_Irecv"])
                    w.mpi_irecv_request(t, q)
                    t += call_ns
                    w.leave(t, mpi["MPI_Irecv"])
                    # Received from the neighbour opposite to where it sends.
                    recv_requests.append((q, p, k ^ 1))
                send_requests = []
                for k, p in peers:
                    q = next(request)
                    w.enter(t, mpi["MPI_Isend"])
                    w.mpi_isend(t, p, world, k, halo_bytes, q)
                    t += call_ns
                    w.leave(t, mpi["MPI_Isend"])
                    send_requests.append(q)
                w.enter(t, mpi["MPI_Waitall"])
                t += 5 * call_ns
                for q, p, tag in recv_requests:
                    w.mpi_irecv(t, p, world, tag, halo_bytes, q)
                for q in send_requests:
                    w.mpi_isend_complete(t, q)
                w.leave(t, mpi["MPI_Waitall"])
                if (it + 1) % allreduce_every == 0:
                    w.enter(t, mpi["MPI_Allreduce"])
                    w.mpi_collective_begin(t)
                    t += 5 * call_ns
                    w.mpi_collective_end(t, CollectiveOp.ALLREDUCE, world, otf2.Undefined.UINT32, 8, 8)
                    w.leave(t, mpi["MPI_Allreduce"])
            w.enter(t, mpi["MPI_Finalize"])
            t += call_ns
            w.leave(t, mpi["MPI_Finalize"])
            w.leave(t, user_main)
    return {"out": out, "ranks": ranks, "grid": list(dims), "iterations": iterations, "halo_bytes": halo_bytes,
            "compute_ns": compute_ns, "allreduce_every": allreduce_every, "slow_rank": slow_rank, "slow_factor": slow_factor, "writer": f"OTF2 Python bindings {otf2.__version__}"}
