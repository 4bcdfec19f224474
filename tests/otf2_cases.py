"""Small hand-made OTF2 traces for the replay's refusals (issue 37): two
ranks, one message, with a timestamp, a size or an event pairing chosen by
the test. Written with OTF2's own Python bindings."""

from __future__ import annotations

from pathlib import Path


def two_rank_trace(out: Path, *, end_ns: int = 100_000, message_bytes: int = 1024, leave_without_enter: bool = False,
                   enter_without_leave: bool = False, stray_leave: bool = False) -> Path:
    """Rank 0 sends ``message_bytes`` to rank 1 with MPI_Send; both
    finalize at ``end_ns``. ``leave_without_enter`` drops rank 0's Enter of
    MPI_Send, ``enter_without_leave`` its Leave of main; ``stray_leave``
    adds a Leave of MPI_Finalize on rank 0 that no Enter opened."""
    import otf2
    from otf2.enums import GroupType, LocationGroupType, Paradigm, RegionRole

    with otf2.writer.open(str(out), timer_resolution=1_000_000_000) as trace:
        d = trace.definitions
        root = d.system_tree_node("machine")
        node = d.system_tree_node("node", parent=root)
        mpi = {name: d.region(name, paradigm=Paradigm.MPI, region_role=RegionRole.FUNCTION)
               for name in ("MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Recv")}
        main = d.region("main", paradigm=Paradigm.USER, region_role=RegionRole.FUNCTION)
        groups = [d.location_group(f"rank {r}", location_group_type=LocationGroupType.PROCESS, system_tree_parent=node)
                  for r in range(2)]
        locs = [d.location(f"rank {r} master thread", group=groups[r]) for r in range(2)]
        d.group("world locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        world_group = d.group("MPI_COMM_WORLD", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=locs)
        world = d.comm("MPI_COMM_WORLD", group=world_group)
        for r in range(2):
            w = trace.event_writer_from_location(locs[r])
            w.enter(1_000, main)
            w.enter(1_000, mpi["MPI_Init"])
            w.leave(2_000, mpi["MPI_Init"])
            if r == 0:
                if stray_leave:
                    w.leave(2_500, mpi["MPI_Finalize"])
                if not leave_without_enter:
                    w.enter(3_000, mpi["MPI_Send"])
                w.mpi_send(3_000, 1, world, 7, message_bytes)
                w.leave(4_000, mpi["MPI_Send"])
            else:
                w.enter(3_000, mpi["MPI_Recv"])
                w.mpi_recv(5_000, 0, world, 7, message_bytes)
                w.leave(5_000, mpi["MPI_Recv"])
            w.enter(end_ns - 10, mpi["MPI_Finalize"])
            w.leave(end_ns - 5, mpi["MPI_Finalize"])
            if not (enter_without_leave and r == 0):
                w.leave(end_ns, main)
    return out
