"""Reading an OTF2 trace of an MPI program into per-rank call lists.

Only the standard OTF2 records are read, so a trace from any writer that
uses them (tofusim's tracer, Score-P) reads the same way:

- ranks are the location groups of type *process*, in id order; a rank's
  MPI events are those of its first location (the master thread);
- an MPI call is an Enter/Leave pair of a region of the MPI paradigm (or
  named ``MPI_*``); everything between two calls is compute;
- the MPI records inside a call say what it did: ``MpiSend``/``MpiRecv``
  (blocking), ``MpiIsend``/``MpiIrecvRequest`` (posted) and
  ``MpiIsendComplete``/``MpiIrecv`` (completed, inside a wait or test),
  ``MpiCollectiveEnd`` (operation, communicator, root, bytes);
- communicators are the ``Comm`` definitions; their group's members, as
  world ranks, translate the peers of point-to-point records (which OTF2
  gives as ranks within the communicator) and say who takes part in a
  collective.

Calls are kept per rank in program order (:class:`Call`); the replay turns
them into a schedule, ``trace show`` into a summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import ConfigError

#: Collective operations by OTF2 enum value (OTF2_CollectiveOp).
COLLECTIVE_OPS = {
    0: "barrier", 1: "bcast", 2: "gather", 3: "gatherv", 4: "scatter", 5: "scatterv",
    6: "allgather", 7: "allgatherv", 8: "alltoall", 9: "alltoallv", 10: "alltoallw",
    11: "allreduce", 12: "reduce", 13: "reduce_scatter", 14: "scan", 15: "exscan",
    16: "reduce_scatter_block", 17: "create_handle", 18: "destroy_handle",
    19: "allocate", 20: "deallocate", 21: "create_handle_and_allocate",
    22: "destroy_handle_and_deallocate",
}


@dataclass(slots=True)
class Send:
    """A message this rank sent (``request`` set when non-blocking)."""
    peer: int  # world rank
    comm: int
    tag: int
    bytes: int
    request: int | None = None


@dataclass(slots=True)
class Recv:
    """A message this rank received, with the source and tag it matched
    (``request`` set when it completes a non-blocking receive)."""
    peer: int  # world rank
    comm: int
    tag: int
    bytes: int
    request: int | None = None


@dataclass(slots=True)
class Posted:
    """A non-blocking receive posted (its message is known at completion)."""
    request: int


@dataclass(slots=True)
class SendDone:
    """A non-blocking send completed."""
    request: int


@dataclass(slots=True)
class Cancelled:
    """A non-blocking request completed as cancelled."""
    request: int


@dataclass(slots=True)
class Collective:
    op: str
    comm: int
    root: int | None  # rank within the communicator
    sent: int
    received: int


@dataclass(slots=True)
class Call:
    """One MPI call of one rank: its name, when it was entered and left
    (ns from the trace's start) and what it did."""
    name: str
    enter_ns: int
    leave_ns: int
    records: list = field(default_factory=list)


@dataclass
class Trace:
    path: str
    ranks: int
    #: Communicator id -> its members as world ranks (index = rank in it).
    comms: dict[int, list[int]]
    comm_names: dict[int, str]
    #: Per rank, its MPI calls in program order.
    calls: list[list[Call]]
    #: The writer named in the archive (e.g. "tofusim tracer", "Score-P").
    creator: str

    def measured_ns(self) -> int:
        """The program's measured time: from the last rank leaving MPI_Init
        to the last rank leaving MPI_Finalize (or its last call)."""
        starts = [next((c.leave_ns for c in cs if c.name.startswith("MPI_Init")), cs[0].enter_ns if cs else 0) for cs in self.calls]
        ends = [cs[-1].leave_ns if cs else 0 for cs in self.calls]
        return max(ends, default=0) - max(starts, default=0)


def _archive(path: str) -> Path:
    """The ``.otf2`` anchor file of a trace given as it or its directory."""
    p = Path(path)
    if p.is_dir():
        anchors = sorted(p.glob("*.otf2"))
        if len(anchors) != 1:
            raise ConfigError(f"{path}: expected a trace directory with one .otf2 anchor file, found {len(anchors)}")
        return anchors[0]
    if not p.exists():
        raise ConfigError(f"{path}: no such trace (give an OTF2 archive's directory or its .otf2 file)")
    if p.suffix != ".otf2":
        raise ConfigError(f"{path}: expected an OTF2 archive (a directory or its .otf2 anchor file)")
    return p


def _is_mpi(region) -> bool:
    import otf2

    return region.paradigm == otf2.Paradigm.MPI or region.name.startswith("MPI_")


def read(path: str) -> Trace:
    """The trace at ``path`` (an OTF2 archive's directory or anchor file)."""
    import otf2  # Debian's bindings, linked into the venv by make install

    anchor = _archive(path)
    try:
        reader = otf2.reader.open(str(anchor))
    except Exception as e:  # noqa: BLE001 - the bindings raise their own error types
        raise ConfigError(f"{path}: cannot read the OTF2 archive: {e}") from None
    with reader as t:
        defs = t.definitions
        groups = sorted((g for g in defs.location_groups if g.location_group_type == otf2.LocationGroupType.PROCESS), key=lambda g: g._ref)
        if not groups:
            raise ConfigError(f"{path}: the trace defines no processes (location groups of type PROCESS)")
        rank_of_group = {g._ref: i for i, g in enumerate(groups)}
        # A rank's MPI events come from its first location.
        master: dict[int, int] = {}
        for loc in sorted(defs.locations, key=lambda l: l._ref):
            r = rank_of_group.get(loc.group._ref)
            if r is not None and r not in master:
                master[r] = loc._ref
        rank_of_location = {loc: r for r, loc in master.items()}
        comms: dict[int, list[int]] = {}
        names: dict[int, str] = {}
        for c in defs.comms:
            members = []
            for m in c.group.members:
                ref = getattr(m, "_ref", m)
                if ref not in rank_of_location:
                    raise ConfigError(f"{path}: communicator {c.name!r} has a member (location {ref}) that is not a rank's first location")
                members.append(rank_of_location[ref])
            comms[c._ref] = members
            names[c._ref] = c.name
        ranks = len(groups)
        offset = defs.clock_properties.global_offset
        ns_per_tick = 1e9 / defs.clock_properties.timer_resolution
        calls: list[list[Call]] = [[] for _ in range(ranks)]
        open_call: list[Call | None] = [None] * ranks
        depth = [0] * ranks

        def world(comm: int, r: int, rank_in_comm: int, what: str) -> int:
            members = comms.get(comm)
            if members is None:
                raise ConfigError(f"{path}: rank {r}: {what} on a communicator the trace does not define (id {comm}); "
                                  "inter-communicators and communicators made by unrecorded calls are not replayed")
            if not 0 <= rank_in_comm < len(members):
                raise ConfigError(f"{path}: rank {r}: {what} names rank {rank_in_comm} of a communicator of {len(members)}")
            return members[rank_in_comm]

        for loc, ev in t.events:
            r = rank_of_location.get(loc._ref)
            if r is None:
                continue  # other threads: compute, as far as MPI is concerned
            ns = int((ev.time - offset) * ns_per_tick)
            kind = type(ev).__name__
            if kind == "Enter":
                if _is_mpi(ev.region):
                    depth[r] += 1
                    if depth[r] == 1:
                        open_call[r] = Call(ev.region.name, ns, ns)
                continue
            if kind == "Leave":
                if _is_mpi(ev.region):
                    depth[r] -= 1
                    if depth[r] == 0 and open_call[r] is not None:
                        c = open_call[r]
                        c.leave_ns = ns
                        calls[r].append(c)
                        open_call[r] = None
                continue
            c = open_call[r]
            if c is None:
                if kind.startswith("Mpi"):
                    raise ConfigError(f"{path}: rank {r}: an {kind} record outside any MPI call region")
                continue
            comm = getattr(ev, "communicator", None)
            comm_ref = getattr(comm, "_ref", comm)
            if kind == "MpiSend":
                c.records.append(Send(world(comm_ref, r, ev.receiver, c.name), comm_ref, ev.msg_tag, ev.msg_length))
            elif kind == "MpiIsend":
                c.records.append(Send(world(comm_ref, r, ev.receiver, c.name), comm_ref, ev.msg_tag, ev.msg_length, ev.request_id))
            elif kind == "MpiRecv":
                c.records.append(Recv(world(comm_ref, r, ev.sender, c.name), comm_ref, ev.msg_tag, ev.msg_length))
            elif kind == "MpiIrecv":
                c.records.append(Recv(world(comm_ref, r, ev.sender, c.name), comm_ref, ev.msg_tag, ev.msg_length, ev.request_id))
            elif kind == "MpiIrecvRequest":
                c.records.append(Posted(ev.request_id))
            elif kind == "MpiIsendComplete":
                c.records.append(SendDone(ev.request_id))
            elif kind == "MpiRequestCancelled":
                c.records.append(Cancelled(ev.request_id))
            elif kind == "MpiCollectiveEnd":
                code = int(getattr(ev.collective_op, "value", ev.collective_op))
                op = COLLECTIVE_OPS.get(code, f"operation {code}")
                if comm_ref not in comms:
                    raise ConfigError(f"{path}: rank {r}: {c.name} on a communicator the trace does not define (id {comm_ref})")
                root = None if ev.root in (None, 0xFFFFFFFF) else int(ev.root)
                c.records.append(Collective(op, comm_ref, root, ev.size_sent, ev.size_received))
        creator = ""
    return Trace(str(anchor.parent), ranks, comms, names, calls, str(creator))
