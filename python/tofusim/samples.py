"""A packet run's counter samples (issue 21, part 3) as Arrow tables.

Every ``run.counter_period`` cycles the engine samples every connected
port's PA counters (bytes, packets, busy, idle and buffer-depleted cycles)
and, per port, each downstream VC's packets and bytes and the chunks its
buffer holds as the sender's tokens see it. They are cumulative since the
warm-up, so an interval's figures are the difference of two samples.

The compiled core hands its columns over without copying them
(``_core.SampleColumn``: the engine's vector, read through the buffer
protocol as little-endian bytes; no Python object per row: a run samples
millions of rows), Arrow arrays are made over those bytes, and they are
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

#: How the samples are written. Parquet's defaults (snappy, every column
#: dictionary-encoded, min/max of every column) took 0.145 s for the 3
#: million rows of bench/sampling_overhead.sh (4.4 MB); Zstandard at level 1,
#: dictionaries only for the names and statistics only on ``cycle`` (what a
#: reader filters a time slice by) take 0.10 s for 2.9 MB (BENCHMARKS.md).
_PARQUET = {"compression": "zstd", "compression_level": 1, "use_dictionary": ["port", "vc"], "write_statistics": ["cycle"]}


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
        self._vc_names: list[str] = distinct_names(list(c.get("vc_names", [])))
        # Per column (dtype, data): data a _core.SampleColumn or bytes, anything with the buffer protocol.
        self._ports_cols: dict[str, tuple[str, Any]] = dict(c.get("ports", {}))
        self._vcs_cols: dict[str, tuple[str, Any]] = dict(c.get("vcs", {}))
        self._ports: Any = None
        self._vcs: Any = None

    def __len__(self) -> int:
        """Port rows (one per connected port per sample)."""
        dtype, data = self._ports_cols.get("cycle", ("<u8", b""))
        return memoryview(data).nbytes // 8

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
        pq.write_table(self.ports, files[0], **_PARQUET)
        vcs = self.vcs
        # The buffer's capacity rides along as table metadata: the report's
        # full-buffer share needs it.
        pq.write_table(vcs.replace_schema_metadata({**(vcs.schema.metadata or {}), b"vc_buffer_chunks": str(self.vc_buffer_chunks).encode()}), files[1],
                       **_PARQUET)
        return files

    def __repr__(self) -> str:
        return f"CounterSamples({len(self):,} port rows, {self.vcs.num_rows if self else 0:,} VC rows, every {self.period_cycles:,} cycles)"


def distinct_names(names: list[str]) -> list[str]:
    """VC names made distinct, whatever the engine calls them (it names a
    dragonfly's hop-class VCs ``escape-class-c.j``; earlier versions named
    every escape VC past a pair ``escape``, which would merge their rows in
    a file that keeps VCs by name): repeated names get their order among
    themselves, ``escape-0``, ``escape-1``, ``escape-2``.

    >>> distinct_names(["escape", "escape", "escape"])
    ['escape-0', 'escape-1', 'escape-2']
    >>> distinct_names(["dynamic-0", "dynamic-1", "escape", "priority"])
    ['dynamic-0', 'dynamic-1', 'escape', 'priority']
    """
    from collections import Counter

    repeated = {n for n, k in Counter(names).items() if k > 1}
    seen: Counter[str] = Counter()
    out = []
    for n in names:
        if n in repeated:
            out.append(f"{n}-{seen[n]}")
            seen[n] += 1
        else:
            out.append(n)
    return out


#: Arrow types of the core's column dtypes.
_TYPES = {"<u8": "uint64", "<u4": "uint32", "u1": "uint8"}


def _table(cols: dict[str, tuple[str, Any]], names: dict[str, list[str]]) -> Any:
    """The columns as one Arrow table, each array over the core's bytes as they are
    (no copy, no NumPy: ``pa.array`` of a NumPy array would import pandas, a
    quarter of a second); name columns as dictionaries of ``names``."""
    import sys

    import pyarrow as pa

    assert sys.byteorder == "little", "the core's columns are little-endian"
    arrays = []
    for name, (dtype, data) in cols.items():
        kind = pa.type_for_alias(_TYPES[dtype])
        buffer = pa.py_buffer(data)
        values = pa.Array.from_buffers(kind, buffer.size // kind.byte_width, [None, buffer])
        if name in names:
            values = pa.DictionaryArray.from_arrays(values.view(pa.int8()), _strings(names[name]))
        arrays.append(values)
    return pa.table(arrays, names=list(cols)) if arrays else pa.table({})


def _strings(names: list[str]) -> Any:
    """``names`` as an Arrow string array, built from its buffers (``pa.array``
    of a list imports pandas too)."""
    from array import array

    import pyarrow as pa

    data = [n.encode() for n in names]
    offsets = array("i", [0])
    for d in data:
        offsets.append(offsets[-1] + len(d))
    return pa.Array.from_buffers(pa.string(), len(names), [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(data))])
