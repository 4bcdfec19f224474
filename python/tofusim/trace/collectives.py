"""A trace's collectives as instances (one call of every member of a
communicator) and the schedules tofusim runs for them.

MPI requires the members of a communicator to call its collectives in the
same order, so the k-th collective record of every member is one instance.
An instance's size comes from all its members' records, so a writer's
convention for the root's bytes (tofusim's tracer records the buffers the
call reads and writes; Score-P counts a root's bytes differently) does not
change it: a bcast's size is what a non-root receives, a reduce's what a
non-root sends, an allreduce's and an allgather's what each rank sends, an
alltoall's what each rank sends to each other.

Default algorithms follow the choices MPI libraries make by size (Open
MPI's tuned component and MPICH take the same shape of rule): latency-bound
algorithms for small messages, bandwidth-bound ones for large.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ConfigError
from .read import Collective, Trace

#: Operations tofusim has schedules for: its algorithm library's, and the
#: timing-only schedules of ``tofusim_comm::mpi_collectives``.
MODELLED = {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall",
            "scan", "exscan", "gather", "scatter", "reduce_scatter"}
#: Vector ("v") variants: replayed as their regular form with each rank's
#: mean block (the per-rank counts are not in the standard records).
MEAN_BLOCK = {"gatherv": "gather", "scatterv": "scatter", "allgatherv": "allgather",
              "alltoallv": "alltoall", "reduce_scatter_block": "reduce_scatter"}
#: Communicator construction: a synchronisation over the parent.
CONSTRUCTION = {"create_handle", "destroy_handle"}


@dataclass
class Instance:
    #: tofusim's operation (a "v" variant's regular form).
    op: str
    comm: int
    members: list[int]  # world ranks
    root: int | None  # rank within the communicator
    size_bytes: int
    #: Per member (same order): the index of its call in its call list.
    call_index: list[int]
    #: The operation as the trace names it.
    mpi_op: str = ""


def default_algorithm(op: str, ranks: int, size_bytes: int) -> str:
    """The algorithm an MPI library would pick for ``op`` on ``ranks`` ranks
    and a ``size_bytes`` message (see the module docs)."""
    small = size_bytes <= 8 << 10
    if op == "barrier":
        return "dissemination"
    if op == "bcast":
        return "binomial" if small or ranks < 8 else "scatter-allgather"
    if op == "reduce":
        return "binomial"
    if op == "allreduce":
        return "recursive-doubling" if small else "rabenseifner"
    if op == "allgather":
        return "recursive-doubling" if small else "ring"
    if op == "alltoall":
        return "bruck" if size_bytes <= 256 else "pairwise"
    if op in ("scan", "exscan"):
        return "recursive-doubling"
    if op in ("gather", "scatter"):
        return "binomial"
    if op == "reduce_scatter":
        return "pairwise"
    raise ConfigError(f"no default algorithm for {op}")


def _size(op: str, recs: list[Collective], n: int, root: int | None) -> int:
    """The instance's size in tofusim's terms (see the module docs); for a
    "v" variant each rank's mean block."""
    others = [rec for i, rec in enumerate(recs) if i != root] or recs
    mean = lambda xs: sum(xs) // max(1, len(xs))  # noqa: E731
    if op == "bcast":
        return max((rec.received for rec in others), default=0)
    if op == "reduce":
        return max((rec.sent for rec in others), default=0)
    if op in ("allreduce", "allgather", "scan", "exscan"):
        return max(rec.sent for rec in recs)
    if op == "alltoall":
        return max(rec.sent for rec in recs) // max(1, n)
    if op == "gather":
        return max((rec.sent for rec in others), default=0)
    if op == "scatter":
        return max((rec.received for rec in others), default=0)
    if op == "gatherv":
        return mean([rec.sent for rec in others])
    if op == "scatterv":
        return mean([rec.received for rec in others])
    if op == "allgatherv":
        return mean([rec.sent for rec in recs])
    if op == "alltoallv":
        return mean([rec.sent for rec in recs]) // max(1, n)
    if op == "reduce_scatter":
        return max(rec.received for rec in recs)
    if op == "reduce_scatter_block":
        return mean([rec.received for rec in recs])
    return 0


def instances(t: Trace) -> list[Instance]:
    """Every collective instance of ``t``, in the order of its members'
    calls. A communicator whose members disagree on the sequence (a
    different operation or root at the same position) is an error."""
    per_comm: dict[int, list[list[tuple[int, Collective]]]] = {}
    for r, cs in enumerate(t.calls):
        for i, c in enumerate(cs):
            for rec in c.records:
                if isinstance(rec, Collective):
                    members = t.comms[rec.comm]
                    lists = per_comm.setdefault(rec.comm, [[] for _ in members])
                    lists[members.index(r)].append((i, rec))
    out = []
    for comm, lists in per_comm.items():
        members = t.comms[comm]
        counts = {len(x) for x in lists}
        if len(counts) != 1:
            raise ConfigError(f"{t.path}: the members of communicator {t.comm_names.get(comm, comm)!r} made different numbers "
                              f"of collective calls ({sorted(counts)}); the trace is incomplete")
        for k in range(counts.pop()):
            recs = [lists[m][k][1] for m in range(len(members))]
            op = recs[0].op
            if any(rec.op != op for rec in recs):
                raise ConfigError(f"{t.path}: collective {k} of communicator {t.comm_names.get(comm, comm)!r} is "
                                  f"{sorted({rec.op for rec in recs})} on different ranks")
            root = recs[0].root
            out.append(Instance(MEAN_BLOCK.get(op, op), comm, members, root, _size(op, recs, len(members), root),
                                [lists[m][k][0] for m in range(len(members))], op))
    return out
