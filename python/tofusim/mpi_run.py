"""Run a collective schedule on real MPI ranks and check the result.

    mpirun -np 4 --oversubscribe python -m tofusim.mpi_run allreduce --algo ring --size 1KiB

The third executor of the same schedule (after the packet engine and the
data executor): every rank builds the schedule from the compiled core,
starts each step when its dependencies are done — sends from a snapshot of
the buffer (``Isend``), receives into a temporary (``Irecv``) then copied or
added into the buffer, copies at once — and finally compares its buffer
with the collective's definition. Messages of one sender→receiver stream
carry their sequence number as the MPI tag, so matching is exact whatever
the order in which the steps become ready. Rank 0 prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from . import collective_schedule
from .comm import collective_buffers
from .units import parse_bytes


def _gather(buf: np.ndarray, spans: list[dict]) -> np.ndarray:
    if not spans:
        return np.zeros(0, dtype=np.uint64)
    return np.concatenate([buf[s["offset"]:s["offset"] + s["len"]] for s in spans])


def _scatter(buf: np.ndarray, spans: list[dict], data: np.ndarray, combine: str) -> None:
    k = 0
    for s in spans:
        dst = buf[s["offset"]:s["offset"] + s["len"]]
        part = data[k:k + s["len"]]
        if combine == "sum":
            np.add(dst, part, out=dst)  # uint64: wraps, as in the data executor
        else:
            dst[:] = part
        k += s["len"]


def execute(comm, schedule: dict, rank: int) -> np.ndarray:
    """Runs this rank's program; returns its final buffer."""
    from mpi4py import MPI

    op = schedule["collective"]["op"]
    root = schedule["collective"].get("root", 0)
    p, count, length = schedule["ranks"], schedule["count"], schedule["buffer_elements"]
    init, _, _ = collective_buffers(op, root, p, count, length, rank)
    buf = np.frombuffer(init, dtype=np.uint64).copy()
    steps = schedule["programs"][rank]["steps"]
    n = len(steps)
    dependants: list[list[int]] = [[] for _ in range(n)]
    unmet = [len(s["deps"]) for s in steps]
    for i, s in enumerate(steps):
        for d in s["deps"]:
            dependants[d].append(i)
    # Sequence number of each send / receive in its stream (the MPI tag).
    sent: dict[int, int] = {}
    got: dict[int, int] = {}
    seq = [0] * n
    for i, s in enumerate(steps):
        a = s["action"]
        if a["kind"] == "send":
            seq[i] = sent.get(a["peer"], 0)
            sent[a["peer"]] = seq[i] + 1
        elif a["kind"] == "recv":
            seq[i] = got.get(a["peer"], 0)
            got[a["peer"]] = seq[i] + 1
    ready = [i for i in range(n) if unmet[i] == 0]
    pending_recv: dict[int, tuple[object, np.ndarray]] = {}
    sends = []
    done = 0

    def finish(i: int) -> None:
        nonlocal done
        done += 1
        for j in dependants[i]:
            unmet[j] -= 1
            if unmet[j] == 0:
                ready.append(j)

    while done < n:
        while ready:
            i = ready.pop()
            a = steps[i]["action"]
            if a["kind"] == "send":
                data = _gather(buf, a["spans"])
                sends.append((comm.Isend([data, MPI.UINT64_T], dest=a["peer"], tag=seq[i] % 32768), data))
                finish(i)
            elif a["kind"] == "copy":
                _scatter(buf, a["to"], _gather(buf, a["from"]), "replace")
                finish(i)
            elif a["kind"] == "work":
                finish(i)
            else:
                tmp = np.empty(sum(s["len"] for s in a["spans"]), dtype=np.uint64)
                pending_recv[i] = (comm.Irecv([tmp, MPI.UINT64_T], source=a["peer"], tag=seq[i] % 32768), tmp)
        if done == n:
            break
        if not pending_recv:
            raise RuntimeError(f"rank {rank}: {n - done} steps can never run")
        keys = list(pending_recv)
        idx = MPI.Request.Waitany([pending_recv[k][0] for k in keys])
        i = keys[idx]
        _, tmp = pending_recv.pop(i)
        a = steps[i]["action"]
        _scatter(buf, a["spans"], tmp, a["combine"])
        finish(i)
    MPI.Request.Waitall([r for r, _ in sends])
    return buf


def main(argv: list[str] | None = None) -> int:
    from mpi4py import MPI

    ap = argparse.ArgumentParser(prog="python -m tofusim.mpi_run", description=__doc__.split("\n")[0])
    ap.add_argument("op")
    ap.add_argument("--algo", required=True)
    ap.add_argument("--size", default="8B")
    ap.add_argument("--root", type=int, default=0)
    ap.add_argument("--shape", default=None, help="communicator torus shape, e.g. 2x2 (for the Tofu algorithms)")
    ap.add_argument("--segment", default="64KiB")
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    rank, p = comm.Get_rank(), comm.Get_size()
    shape = [int(x) for x in args.shape.split("x")] if args.shape else None
    sched = collective_schedule(args.op, args.algo, p, parse_bytes(args.size, "--size"), root=args.root, shape=shape,
                                segment_bytes=max(1, parse_bytes(args.segment, "--segment")), tnis=4)
    comm.Barrier()
    t0 = time.perf_counter()
    buf = execute(comm, sched, rank)
    elapsed = time.perf_counter() - t0
    _, offset, expected = collective_buffers(args.op, args.root, p, sched["count"], sched["buffer_elements"], rank)
    want = np.frombuffer(expected, dtype=np.uint64)
    ok = bool(np.array_equal(buf[offset:offset + len(want)], want))
    all_ok = comm.allreduce(1 if ok else 0, op=MPI.MIN) == 1
    slowest = comm.allreduce(elapsed, op=MPI.MAX)
    if rank == 0:
        print(json.dumps({"op": args.op, "algo": args.algo, "processes": p, "size_bytes": parse_bytes(args.size, "--size"),
                          "verified": all_ok, "time_seconds": slowest, "fallback": sched["fallback"]}))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
