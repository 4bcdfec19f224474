#!/usr/bin/env python3
"""Shallow trees for the trinary-tree algorithms, found by a SAT solver.

The built trees of ``tofusim_comm::tree::trinary_trees`` take each rank's
three parents on the minus side of the torus: simple, and Lx + Ly + Lz - 2
arcs deep, about twice the torus diameter D. This tool asks whether trees
of depth B (at least D + 1: the root has one child per tree) exist with the
same properties, and writes them for ``tofusim coll --trees``:

- three spanning trees rooted at rank 0 over nearest-neighbour arcs;
- no torus link carries two trees (nor one tree twice);
- no rank has more than three children over the three trees, the root
  exactly one per tree;
- every rank at most B arcs from the root in each tree.

Encoding: a variable per directed arc and tree; one parent per rank and
tree; at most one tree and direction per link; at most three children per
rank; depth in order encoding (``depth >= j`` per rank, tree and level),
an arc fixing the child's depth to the parent's plus one, which also
rules out cycles. Solved by CaDiCaL through PySAT (``python-sat``).

It is a search, not a construction: 4x3x4 at D + 1 and 3x3x3 at D + 2
take well under a second, 6x9x6 at D + 2 one to two minutes; larger shapes
may take far longer. Ranks are numbered as tofusim numbers them,
rank = x + Lx (y + Ly z).

    python tools/trinary_trees_sat.py 4x3x4 --depth 6 -o trees-4x3x4.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def torus(lengths: tuple[int, int, int]):
    lx, ly, lz = lengths
    n = lx * ly * lz

    def coords(r: int) -> tuple[int, int, int]:
        return r % lx, (r // lx) % ly, r // (lx * ly)

    def rank(c) -> int:
        return c[0] + lx * (c[1] + ly * c[2])

    neighbours = []
    for r in range(n):
        c = coords(r)
        s = set()
        for a in range(3):
            for step in (1, -1):
                d = list(c)
                d[a] = (d[a] + step) % lengths[a]
                s.add(rank(d))
        neighbours.append(sorted(s))
    distance = [sum(min(x, lengths[a] - x) for a, x in enumerate(coords(r))) for r in range(n)]
    return n, neighbours, distance


def solve(lengths: tuple[int, int, int], depth: int) -> list[list[int | None]] | None:
    """Parents of three trees of depth <= ``depth`` rooted at rank 0, or None if there are none."""
    from pysat.card import CardEnc, EncType
    from pysat.formula import IDPool
    from pysat.solvers import Cadical153

    n, nb, dist = torus(lengths)
    root = 0
    pool = IDPool()

    def arc(u: int, v: int, t: int) -> int:
        return pool.id(("arc", u, v, t))

    def deep(v: int, t: int, j: int) -> int:  # depth_t(v) >= j, 1 <= j <= depth
        return pool.id(("deep", v, t, j))

    clauses: list[list[int]] = []
    for u, v in {(min(a, b), max(a, b)) for a in range(n) for b in nb[a]}:
        lits = [arc(u, v, t) for t in range(3)] + [arc(v, u, t) for t in range(3)]
        clauses += CardEnc.atmost(lits, 1, vpool=pool, encoding=EncType.pairwise).clauses
    for v in range(n):
        for t in range(3):
            parents = [arc(u, v, t) for u in nb[v]]
            if v == root:
                clauses += [[-x] for x in parents]
            else:
                clauses += CardEnc.equals(parents, 1, vpool=pool, encoding=EncType.pairwise).clauses
        children = [arc(v, w, t) for w in nb[v] for t in range(3)]
        clauses += CardEnc.atmost(children, 3, vpool=pool, encoding=EncType.seqcounter).clauses
    for t in range(3):
        clauses += CardEnc.equals([arc(root, w, t) for w in nb[root]], 1, vpool=pool, encoding=EncType.pairwise).clauses
    for v in range(n):
        for t in range(3):
            if v == root:
                clauses += [[-deep(v, t, j)] for j in range(1, depth + 1)]
                continue
            if dist[v] > depth:
                return None
            clauses += [[deep(v, t, j)] for j in range(1, dist[v] + 1)]
            clauses += [[-deep(v, t, j), deep(v, t, j - 1)] for j in range(2, depth + 1)]
    for v in range(n):
        if v == root:
            continue
        for u in nb[v]:
            for t in range(3):
                x = arc(u, v, t)
                if u == root:  # the child is at depth 1
                    clauses += [[-x, -deep(v, t, 2)]] if depth >= 2 else []
                    continue
                clauses.append([-x, -deep(u, t, depth)])  # no child below the bound
                for j in range(1, depth):
                    clauses.append([-x, -deep(u, t, j), deep(v, t, j + 1)])  # depth(v) >= depth(u) + 1
                    if j + 1 <= depth:
                        clauses.append([-x, deep(u, t, j), -deep(v, t, j + 1)])  # depth(v) <= depth(u) + 1
    with Cadical153(bootstrap_with=clauses) as s:
        if not s.solve():
            return None
        model = {x for x in s.get_model() if x > 0}
    parents: list[list[int | None]] = [[None] * n for _ in range(3)]
    for v in range(n):
        for u in nb[v]:
            for t in range(3):
                if arc(u, v, t) in model:
                    parents[t][v] = u
    return parents


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", help="communicator shape LxxLyxLz, each axis at least 3, e.g. 6x9x6")
    ap.add_argument("--depth", type=int, help="the depth bound B (default: the torus diameter + 2)")
    ap.add_argument("-o", "--out", help="the trees file (default: stdout)")
    a = ap.parse_args(argv)
    try:
        lengths = tuple(int(x) for x in a.shape.split("x"))
    except ValueError:
        lengths = ()
    if len(lengths) != 3 or min(lengths) < 3:
        print(f"trinary_trees_sat: shape {a.shape!r}: expected three axis lengths of at least 3, e.g. 6x9x6", file=sys.stderr)
        return 2
    diameter = sum(x // 2 for x in lengths)
    depth = a.depth if a.depth is not None else diameter + 2
    if depth <= diameter:
        print(f"trinary_trees_sat: --depth {depth}: expected more than the diameter {diameter} (the root has one child per tree)", file=sys.stderr)
        return 2
    try:
        import pysat  # noqa: F401
    except ImportError:
        print("trinary_trees_sat: needs PySAT (pip install python-sat; `make install` installs it into .venv)", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    parents = solve(lengths, depth)
    took = time.monotonic() - t0
    if parents is None:
        print(f"trinary_trees_sat: no trees of depth <= {depth} on {a.shape} (diameter {diameter}); {took:.1f} s", file=sys.stderr)
        return 1
    text = json.dumps({"lengths": list(lengths), "parents": parents,
                       "source": f"tools/trinary_trees_sat.py {a.shape} --depth {depth} (diameter {diameter})"})
    if a.out:
        try:
            with open(a.out, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as e:
            print(f"trinary_trees_sat: {a.out}: cannot write the trees: {e.strerror}", file=sys.stderr)
            return 2
    else:
        print(text)
    print(f"trinary_trees_sat: trees of depth <= {depth} on {a.shape} (diameter {diameter}) in {took:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
