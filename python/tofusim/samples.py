"""A packet run's counter samples (issue 21, part 3) as Arrow tables.

Every ``run.counter_period`` cycles the engine samples every connected
port's PA counters (bytes, packets, busy, idle and buffer-depleted cycles)
and, per port, each downstream VC's packets and bytes and the chunks its
buffer holds as the sender's tokens see it. They are cumulative since the
warm-up, so an interval's figures are the difference of two samples.

The compiled core hands them over as columns of little-endian bytes (no
Python object per row: a run samples millions of rows), and they are
written to Parquet — ``port_samples.parquet`` and ``vc_samples.parquet`` —
never into the result's JSON, which has only their count and period
(``counter_samples``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The sampling period ``--out`` runs take when none is given (cycles):
#: 60 samples in a 60,000-cycle run, which the report's time slider shows
#: as 60 intervals; its overhead is measured in BENCHMARKS.md.
DEFAULT_COUNTER_PERIOD = 1000

PORT_FILE = "port_samples.parquet"
VC_FILE = "vc_samples.parquet"


class CounterSamples:
    """The port and VC samples of one run: :attr:`ports` and :attr:`vcs` as
    ``pyarrow.Table`` (port and VC names as dictionary columns)."""

    def __init__(self, columns: dict[str, Any] | None) -> None:
        c = columns or {}
        #: The period of the samples kept, cycles (a long run doubles it: see docs/experiment.md).
        self.period_cycles: int = int(c.get("period_cycles", 0))
        #: A VC buffer's capacity in chunks (what ``held_chunks`` is out of).
        self.vc_buffer_chunks: int = int(c.get("vc_buffer_chunks", 0))
        self._port_names: list[str] = list(c.get("port_names", []))
        self._vc_names: list[str] = list(c.get("vc_names", []))
        self._ports_cols: dict[str, tuple[str, bytes]] = dict(c.get("ports", {}))
        self._vcs_cols: dict[str, tuple[str, bytes]] = dict(c.get("vcs", {}))
        self._ports: Any = None
        self._vcs: Any = None

    def __len__(self) -> int:
        """Port rows (one per connected port per sample)."""
        dtype, data = self._ports_cols.get("cycle", ("<u8", b""))
        return len(data) // 8

    def __bool__(self) -> bool:
        return len(self) > 0

    @property
    def ports(self) -> Any:
        """Per port and sample: cycle, router, port, bytes, packets, busy_cycles, idle_cycles, depleted_cycles."""
        if self._ports is None:
            self._ports = _table(self._ports_cols, {"port": self._port_names})
        return self._ports

    @property
    def vcs(self) -> Any:
        """Per port, downstream VC and sample: cycle, router, port, vc, bytes, packets, held_chunks."""
        if self._vcs is None:
            self._vcs = _table(self._vcs_cols, {"port": self._port_names, "vc": self._vc_names})
        return self._vcs

    def write(self, out: Path) -> list[Path]:
        """``port_samples.parquet`` and ``vc_samples.parquet`` in ``out`` (none when nothing was sampled)."""
        import pyarrow.parquet as pq

        if not self:
            return []
        files = [out / PORT_FILE, out / VC_FILE]
        pq.write_table(self.ports, files[0])
        vcs = self.vcs
        # The buffer's capacity rides along as table metadata: the report's
        # full-buffer share needs it.
        pq.write_table(vcs.replace_schema_metadata({**(vcs.schema.metadata or {}), b"vc_buffer_chunks": str(self.vc_buffer_chunks).encode()}), files[1])
        return files

    def __repr__(self) -> str:
        return f"CounterSamples({len(self):,} port rows, {self.vcs.num_rows if self else 0:,} VC rows, every {self.period_cycles:,} cycles)"


def _table(cols: dict[str, tuple[str, bytes]], names: dict[str, list[str]]) -> Any:
    import numpy as np
    import pyarrow as pa

    arrays, fields = [], []
    for name, (dtype, data) in cols.items():
        # The core's bytes as they are (no copy on a little-endian machine).
        values = np.frombuffer(data, dtype=np.dtype(dtype)).astype(np.dtype(dtype).newbyteorder("="), copy=False)
        if name in names:
            a = pa.DictionaryArray.from_arrays(pa.array(values.view(np.int8)), pa.array(names[name], pa.string()))
        else:
            a = pa.array(values)
        arrays.append(a)
        fields.append(name)
    return pa.table(arrays, names=fields) if arrays else pa.table({})
