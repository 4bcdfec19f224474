"""``tofusim report``: the interactive HTML report of a run directory, and
the ``--report`` option the commands that write one share."""

from __future__ import annotations

from typing import Any, Callable

import click

# The report's module (pandas, pyarrow, plotly) is imported when a report is
# written, not with the command line: it doubles every command's start-up
# time and memory (about 0.3 s and 100 MB).

#: The ``--report`` option of run, coll, sweep, reproduce and replay.
report_option: Callable[[Any], Any] = click.option(
    "--report", "report", is_flag=True,
    help="Also write report.html into the --out directory (without --out: a directory named after the command and its "
         "input, in the working directory): the interactive HTML report (tofusim report, docs/report.md).")


def out_for(report: bool, out: str | None, name: str) -> str | None:
    """Where a command writes: ``--out``, or with ``--report`` alone the
    directory ``name`` in the working directory (one rule for every
    command; a sweep always writes, into ``name`` by default)."""
    if out == "":
        raise click.UsageError("--out: expected a directory, got an empty name")
    if out or not report:
        return out
    click.echo(f"writing into {name}/ (give --out DIR for another place)", err=True)
    return name


def slug(text: str) -> str:
    """``text`` as one directory name (a system such as k:4x4x4/minimal)."""
    return "".join(c if c.isalnum() or c in "-_.x" else "-" for c in text).strip("-") or "out"


def write_into(out: str, interrupted: bool = False) -> None:
    """Writes the report of the directory ``out`` just written, and says
    where; after Ctrl-C (``interrupted``) only says how to write it: the
    report takes seconds for a large run, and Ctrl-C asks to stop now."""
    from ..report import write_report

    if interrupted:
        click.echo(f"tofusim: interrupted: no report written; `tofusim report {out}` writes it from the files there", err=True)
        return
    path = write_report(out)
    click.echo(f"wrote {path}", err=True)


@click.command()
@click.argument("run_dir", metavar="RUN_DIR")
@click.option("--out", "out", metavar="FILE", help="The HTML file to write (default: RUN_DIR/report.html).")
def report(run_dir: str, out: str | None) -> None:
    """Write the interactive HTML report of RUN_DIR (one file, opens offline).

    RUN_DIR is a directory written by tofusim run, coll, replay, sweep or
    reproduce with --out. The report has the summary and setup, the latency
    distribution and throughput over time, link-utilisation heat maps laid
    out on the topology with a time slider over the counter samples, the
    hottest links and stalled ports and, for a collective, its schedule's
    progress animated over the network (docs/report.md).
    """
    from ..report import write_report

    path = write_report(run_dir, out)
    click.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
