"""A trace as a matched replay program (``tofusim_comm::replay``): every
rank's calls as operations, each message numbered once for its sender and
its receiver, each collective instance once for its members.

Matching follows MPI: messages from one sender to one receiver on one
communicator with one tag are received in the order they were sent, by
the receives in the order they were posted (a blocking receive where it is
called, a non-blocking one where it is posted, its source and tag those
its completion recorded — so wildcards are already resolved).
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from .. import ConfigError
from .calls import kind
from .collectives import CONSTRUCTION, MODELLED, default_algorithm, instances
from .read import Cancelled, Collective, Posted, Recv, Send, SendDone, Trace

#: Calls that poll: when they complete nothing their time is the host's.
POLLS = {"MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe"}

#: Request numbers the conversion makes for itself (a sendrecv's two
#: halves), above any a writer gives.
_OWN_REQUESTS = 1 << 40


@dataclass
class Program:
    """The replay program (JSON-ready) and what the conversion noticed."""
    program: dict[str, Any]
    #: Receives posted but never completed in the trace (not replayed).
    uncompleted_receives: int = 0
    #: Receives cancelled (MPI_Cancel) before a message matched them.
    cancelled_receives: int = 0
    #: Collective instances of one rank (nothing to send), not replayed.
    trivial_collectives: int = 0
    algorithms: dict[str, str] = field(default_factory=dict)


def build_program(t: Trace, algorithms: dict[str, str] | None = None) -> Program:
    """The replay program of ``t``; ``algorithms`` maps an operation to the
    algorithm to use instead of the default (``{"allreduce": "ring"}``)."""
    algorithms = dict(algorithms or {})
    insts = instances(t)
    coll_of: dict[tuple[int, int], int] = {}
    collectives: list[dict[str, Any]] = []
    index_of_instance: dict[int, int] = {}
    trivial = 0
    chosen: dict[str, str] = {}
    for i, inst in enumerate(insts):
        n = len(inst.members)
        op = inst.op
        size = inst.size_bytes
        if op == "create_handle":
            # Communicator construction: every member learns every other's
            # (colour, key) — an allgather of 8 bytes each.
            op, size = "allgather", 8
        elif op in CONSTRUCTION:
            continue  # freeing a communicator is local
        if op not in MODELLED:
            rank = inst.members[0]
            raise ConfigError(f"{t.path}: rank {rank}: MPI collective {inst.mpi_op} (on communicator "
                              f"{t.comm_names.get(inst.comm, inst.comm)!r}) has no schedule in tofusim; "
                              f"modelled: {', '.join(sorted(MODELLED))}")
        if n < 2:
            trivial += 1
            continue
        algo = algorithms.get(op) or default_algorithm(op, n, size)
        chosen.setdefault(op, algo)
        index_of_instance[i] = len(collectives)
        collectives.append({"op": op, "algorithm": algo, "members": inst.members, "root": inst.root or 0, "size_bytes": size})
        for m, call in zip(inst.members, inst.call_index):
            coll_of[(m, call)] = index_of_instance[i]

    messages: list[dict[str, int]] = []
    sends: dict[tuple[int, int, int, int], deque[int]] = defaultdict(deque)
    programs: list[list[Any]] = []
    # Per rank, its receives in posting order: [op, (src, comm, tag, bytes) or None].
    posted: list[list[list[Any]]] = []
    uncompleted = cancelled = 0
    for r, calls in enumerate(t.calls):
        ops: list[Any] = []
        recvs: list[list[Any]] = []
        pending: dict[int, list[Any]] = {}  # request -> its receive entry
        own = _OWN_REQUESTS
        start = next((c.leave_ns for c in calls if c.name.startswith("MPI_Init")), calls[0].enter_ns if calls else 0)
        last = start
        for ci, c in enumerate(calls):
            k = kind(c.name)
            if k == "refused":
                raise ConfigError(f"{t.path}: rank {r}: {c.name} is not replayed (see docs/traces.md for the calls tofusim "
                                  "models); the trace cannot be replayed faithfully without it")
            if c.name.startswith("MPI_Init"):
                continue
            if c.name in POLLS and not c.records:
                # A test or probe that found nothing: the MPI library's
                # progress work on the host, replayed as the rank's own time
                # (it joins the compute around it).
                continue
            gap = c.enter_ns - last
            if gap > 0:
                ops.append({"compute": gap})
            last = max(last, c.leave_ns)
            if (r, ci) in coll_of:
                ops.append({"collective": coll_of[(r, ci)]})
                continue
            waits: list[int] = []
            two_sided = c.name in ("MPI_Sendrecv", "MPI_Sendrecv_replace")
            for rec in c.records:
                if isinstance(rec, Send):
                    msg = len(messages)
                    messages.append({"src": r, "dst": rec.peer, "bytes": rec.bytes})
                    sends[(r, rec.peer, rec.comm, rec.tag)].append(msg)
                    request = rec.request
                    if two_sided:
                        request = own
                        own += 1
                        waits.append(request)
                    ops.append({"send": {"msg": msg, "request": request}})
                elif isinstance(rec, Recv) and rec.request is None:
                    request = None
                    if two_sided:
                        request = own
                        own += 1
                        waits.append(request)
                    op = {"recv": {"msg": -1, "request": request}}
                    ops.append(op)
                    recvs.append([op, (rec.peer, rec.comm, rec.tag, rec.bytes)])
                elif isinstance(rec, Posted):
                    op = {"recv": {"msg": -1, "request": rec.request}}
                    ops.append(op)
                    entry = [op, None]
                    recvs.append(entry)
                    pending[rec.request] = entry
                elif isinstance(rec, Recv):
                    entry = pending.pop(rec.request, None)
                    if entry is None:
                        raise ConfigError(f"{t.path}: rank {r}: {c.name} completes receive request {rec.request}, which was not posted")
                    entry[1] = (rec.peer, rec.comm, rec.tag, rec.bytes)
                    waits.append(rec.request)
                elif isinstance(rec, SendDone):
                    waits.append(rec.request)
                elif isinstance(rec, Cancelled):
                    entry = pending.pop(rec.request, None)
                    if entry is None:
                        raise ConfigError(f"{t.path}: rank {r}: {c.name} completes request {rec.request} as cancelled; "
                                          "only cancelled receives are replayed (a cancelled send's message is not)")
                    entry[0]["recv"]["msg"] = None
                    cancelled += 1
                elif isinstance(rec, Collective):
                    pass  # handled through the instance (no schedule: trivial)
            if waits:
                ops.append({"wait": waits})
        # Receives never completed: no message to replay.
        for entry in pending.values():
            entry[0]["recv"]["msg"] = None
            uncompleted += 1
        programs.append(ops)
        posted.append(recvs)
    # Match receives, in posting order, to sends.
    for r, recvs in enumerate(posted):
        for op, key in recvs:
            if key is None:
                continue
            src, comm, tag, nbytes = key
            q = sends.get((src, r, comm, tag))
            if not q:
                raise ConfigError(f"{t.path}: rank {r} receives from rank {src} (communicator {t.comm_names.get(comm, comm)!r}, "
                                  f"tag {tag}) a message the sender never sent; the trace is incomplete")
            op["recv"]["msg"] = q.popleft()
    unreceived = sum(len(q) for q in sends.values())
    if unreceived:
        (src, dst, comm, tag), _ = next((k, q) for k, q in sends.items() if q)
        raise ConfigError(f"{t.path}: {unreceived} messages were sent and never received (e.g. rank {src} to rank {dst}, tag {tag}); "
                          "the trace is incomplete or uses calls tofusim does not read")
    # Drop the receives that never completed (and their requests from waits).
    for r, ops in enumerate(programs):
        dropped = {op["recv"]["request"] for op in ops if "recv" in op and op["recv"]["msg"] is None}
        ops[:] = [op for op in ops if not ("recv" in op and op["recv"]["msg"] is None)]
        if dropped:
            for op in ops:
                if "wait" in op:
                    op["wait"] = [q for q in op["wait"] if q not in dropped]
            ops[:] = [op for op in ops if not ("wait" in op and not op["wait"])]
    program = {"ranks": t.ranks, "messages": messages, "collectives": collectives, "programs": programs}
    return Program(program, uncompleted, cancelled, trivial, chosen)
