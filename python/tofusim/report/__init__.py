"""Results turned into files: JSON, CSV, Parquet and PNG plots
(:mod:`.files`), and the interactive HTML report of a run directory
(:func:`write_report`, ``tofusim report``; docs/report.md).

The report is one self-contained HTML file (plotly.js embedded, nothing
fetched when it is viewed): a summary and the setup; the latency
distribution and throughput over time; link utilisation as heat maps laid
out on the topology with a time slider over the counter samples; the
hottest links and stalled ports; the VC buffers (``vc_samples.parquet``:
each VC's fill, the buffers full at the most samples, the VCs of the port
that stalled most); for a collective, the schedule's progress
animated over the network; for sweeps and reproductions their curves and
tables. A section whose input the directory lacks is replaced by one line
naming the option that writes it.
"""

from __future__ import annotations

from pathlib import Path

from .. import ConfigError
from .rundir import RunDir, open_run_dir

__all__ = ["write_report"]

#: The report's file name inside a run directory.
REPORT_NAME = "report.html"


def build_page(rd: RunDir) -> str:
    """The report of the run directory ``rd`` as HTML text."""
    from .page import figure_html, render
    from .sections import run_sections
    from .jobs import jobs_sections
    from .studies import coll_sweep_sections, reproduce_sections, sweep_sections

    build = {"run": run_sections, "collective": run_sections, "replay": run_sections, "sweep": sweep_sections,
             "coll-sweep": coll_sweep_sections, "reproduce": reproduce_sections, "jobs": jobs_sections}[rd.kind]
    try:
        sections = build(rd, figure_html)
        if rd.kind != "reproduce" and rd.cases:
            # Reproduction cases written into the same directory are
            # reported after the run's own sections, not dropped.
            from .sections import Section

            extra = reproduce_sections(rd, figure_html)
            sections += [Section(f"cases-{s.id}", f"Reproduction cases: {s.title}" if s.id == "summary" else s.title, s.body, s.note)
                         for s in extra]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        # A file edited or damaged after the command wrote it: one line, not a traceback.
        raise ConfigError(f"{rd.path}: its files are not as tofusim writes them ({type(e).__name__}: {e}); "
                          "write the directory again with the command") from None
    what = {"run": "tofusim run", "collective": "tofusim coll", "replay": "tofusim replay", "sweep": "tofusim sweep",
            "coll-sweep": "tofusim coll (sweep)", "reproduce": "tofusim reproduce", "jobs": "tofusim jobs"}[rd.kind]
    return render(f"tofusim report: {rd.path.name or rd.path.resolve().name}", f"{rd.path} ({what})", sections)


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Writes the HTML report of ``run_dir`` (a directory written by
    ``tofusim run``, ``coll``, ``replay``, ``sweep`` or ``reproduce``
    with ``--out``) to ``out`` (default ``run_dir/report.html``) and
    returns its path.

    Raises :class:`tofusim.ConfigError` (one line) when ``run_dir`` is not
    a tofusim output directory or ``out`` cannot be written.
    """
    rd = open_run_dir(run_dir)
    out_path = Path(out) if out is not None else rd.path / REPORT_NAME
    if out_path.is_dir():
        raise ConfigError(f"{out_path}: is a directory; expected a file name for the report (e.g. {out_path / REPORT_NAME})")
    if not out_path.parent.is_dir():
        raise ConfigError(f"{out_path}: the directory {out_path.parent} does not exist (for the report)")
    text = build_page(rd)
    try:
        out_path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{out_path}: cannot write the report: {e.strerror}") from None
    return out_path
