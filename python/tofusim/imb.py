"""The Intel MPI Benchmarks' text (IMB-MPI1): tofusim's benchmark tables
printed as IMB prints them, and IMB output files read back, so a real
run can be laid beside a simulated one (``tofusim mpi-bench --compare``).

>>> text = '''
... #----------------------------------------------------------------
... # Benchmarking PingPong
... # #processes = 2
... #----------------------------------------------------------------
...        #bytes #repetitions      t[usec]   Mbytes/sec
...             0         1000         1.50         0.00
...          1024         1000         2.75       372.36
... '''
>>> [b] = read_text(text)
>>> b.benchmark, b.processes, b.rows[1]["bytes"], b.rows[1]["t_usec"]
('PingPong', 2, 1024, 2.75)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ConfigError

RULE = "#" + "-" * 64

# IMB's column names, and the keys tofusim's rows give them.
_COLUMNS = {"#bytes": "bytes", "#repetitions": "repetitions", "t[usec]": "t_usec", "t_min[usec]": "t_min_usec",
            "t_max[usec]": "t_max_usec", "t_avg[usec]": "t_avg_usec", "Mbytes/sec": "mbytes_per_sec"}


@dataclass
class Block:
    """One benchmark's table of an IMB output file."""

    benchmark: str
    processes: int
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, float]] = field(default_factory=list)

    def time_usec(self, row: dict[str, float]) -> float:
        """The row's time: t (single transfers) or t_max."""
        return row.get("t_usec", row.get("t_max_usec", float("nan")))


def format_benchmark(r: Any) -> str:
    """A tofusim benchmark result (:class:`tofusim.BenchResult`) as IMB's table."""
    lines = [RULE, f"# Benchmarking {r.benchmark}", f"# #processes = {r.processes}"]
    if r.kind == "single-transfer" and r.ranks > 2:
        lines.append(f"# ( {r.ranks - 2} additional processes waiting in MPI_Barrier)")
    lines.append(RULE)
    barrier = r.benchmark == "Barrier"
    if r.kind == "single-transfer":
        lines.append(f"{'#bytes':>13}{'#repetitions':>13}{'t[usec]':>13}{'Mbytes/sec':>13}")
    else:
        head = ("" if barrier else f"{'#bytes':>13}") + f"{'#repetitions':>13}{'t_min[usec]':>13}{'t_max[usec]':>13}{'t_avg[usec]':>13}"
        lines.append(head + (f"{'Mbytes/sec':>13}" if r.kind == "parallel-transfer" else ""))
    for row in r.rows:
        if r.kind == "single-transfer":
            text = f"{row.bytes:>13}{row.repetitions:>13}{row.t_max_us:>13.2f}{row.mbytes_per_sec or 0.0:>13.2f}"
        else:
            text = ("" if barrier else f"{row.bytes:>13}") + f"{row.repetitions:>13}{row.t_min_us:>13.2f}{row.t_max_us:>13.2f}{row.t_avg_us:>13.2f}"
            if r.kind == "parallel-transfer":
                text += f"{row.mbytes_per_sec or 0.0:>13.2f}"
        lines.append(text)
    return "\n".join(lines) + "\n"


def read_text(text: str, where: str = "<imb>") -> list[Block]:
    """Every benchmark table of IMB-MPI1's output ``text``."""
    blocks: list[Block] = []
    current: Block | None = None
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        m = re.match(r"#\s*Benchmarking\s+(\S+)", s)
        if m:
            current = Block(m.group(1), 0)
            blocks.append(current)
            continue
        if current is None:
            continue
        m = re.match(r"#\s*#processes\s*=\s*(\d+)", s)
        if m:
            current.processes = int(m.group(1))
            continue
        if s.startswith("#bytes") or s.startswith("#repetitions"):
            current.columns = [_COLUMNS.get(c, c) for c in s.split()]
            continue
        if not s or s.startswith("#") or not current.columns:
            continue
        values = s.split()
        if len(values) != len(current.columns):
            continue
        try:
            current.rows.append({c: (int(v) if c in ("bytes", "repetitions") else float(v)) for c, v in zip(current.columns, values)})
        except ValueError:
            raise ConfigError(f"{where}: line {n}: expected numbers under {' '.join(current.columns)}, found {s!r:.80}") from None
    return [b for b in blocks if b.rows]


def read(path: str | Path) -> list[Block]:
    """:func:`read_text` of a file."""
    from . import _read_text

    blocks = read_text(_read_text(path), str(path))
    if not blocks:
        raise ConfigError(f"{path}: no IMB-MPI1 benchmark table in the file (expected '# Benchmarking NAME' and its rows)")
    return blocks


def matching(blocks: list[Block], benchmark: str, processes: int, where: str = "<imb>") -> Block:
    """The table of ``benchmark`` run on ``processes`` ranks (or, if the
    file has none with that count, the one with the most)."""
    same = [b for b in blocks if b.benchmark.lower() == benchmark.lower()]
    if not same:
        names = ", ".join(sorted({b.benchmark for b in blocks}))
        raise ConfigError(f"{where}: no {benchmark} table in the file (it has: {names})")
    exact = [b for b in same if b.processes == processes]
    return exact[0] if exact else max(same, key=lambda b: b.processes)


def compare_rows(r: Any, block: Block) -> list[dict[str, Any]]:
    """Per message size both have: the simulated and the measured time
    (t, or t_max) and their ratio, and the bandwidths where IMB prints one."""
    measured = {int(row.get("bytes", 0)): row for row in block.rows}
    out = []
    for row in r.rows:
        theirs = measured.get(row.bytes)
        if theirs is None:
            continue
        t = block.time_usec(theirs)
        out.append({"bytes": row.bytes, "t_simulated_us": row.t_max_us, "t_measured_us": t,
                    "ratio": row.t_max_us / t if t > 0 else float("nan"),
                    "mbytes_per_sec_simulated": row.mbytes_per_sec, "mbytes_per_sec_measured": theirs.get("mbytes_per_sec")})
    return out
