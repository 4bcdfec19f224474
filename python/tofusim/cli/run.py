"""``tofusim run``: one simulation on the packet engine."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .outcome import Interrupted, Failed
from .. import ConfigError, Experiment, _read_text
from .. import run as run_text
from ..samples import DEFAULT_COUNTER_PERIOD
from .budget import max_time_option
from .report import out_for, report_option, slug, write_into
from ..units import parse_bytes

if TYPE_CHECKING:
    from rich.progress import Progress
    from rich.table import Table


class _LazyProgress:
    """A progress bar on stderr that appears only for runs longer than a second."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.bar: Progress | None = None
        self.task = None

    def __call__(self, frac: float) -> None:
        if self.bar is None:
            if time.monotonic() - self.t0 < 1.0 or frac >= 1.0:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("run", total=1.0)
        self.bar.update(self.task, completed=frac)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _flow_loads(r: dict[str, Any]) -> str:
    """Offered / accepted load of a flow-model run, in GB/s per node where
    the run gives the injection rate, with the fractions of injection."""
    off, acc = r.get("offered_load"), r["accepted_load"]
    inj = r.get("injection_GBps_per_node")
    fractions = f"{'-' if off is None else f'{off:.4g}'} / {acc:.4f} of injection"
    if inj:
        return f"{'-' if off is None else f'{off * inj:.3g}'} / {acc * inj:.3g} GB/s per node ({fractions})"
    return fractions


def flow_table(r: dict[str, Any], title: str) -> Table:
    from rich.table import Table

    t = Table(title=f"{title} (flow model)", show_header=False)
    t.add_column("metric", style="bold")
    t.add_column("value")
    lat = r["latency"]
    rows = [
        ("packets injected / delivered", f"{r['packets_injected']:,} / {r['packets_delivered']:,}"),
        ("offered / accepted load", _flow_loads(r)),
        ("link utilisation", f"{r['link_utilization']:.4f}"),
        ("payload utilisation", f"{r['payload_utilization']:.4f}"),
        (f"latency mean / p50 / p99 / max ({r['latency_kind']})",
         " / ".join(f"{lat[k] * r['cycle_ns'] / 1000:.3g}" for k in ("mean", "p50", "p99", "max")) + " µs ("
         + f"{lat['mean']:.1f} / {lat['p50']:.0f} / {lat['p99']:.0f} / {lat['max']:.0f} cycles)"),
    ]
    if r.get("completion_cycles") is not None:
        rows.append(("completion", f"{r['completion_cycles']:,} cycles ({r['completion_cycles'] * r['cycle_ns'] / 1000:.1f} µs at {r['cycle_ns']:.3g} ns/cycle)"))
    sim = r["sim"]
    rows.append(("simulator", f"{sim['wall_seconds']:.2f} s wall, {sim['flows']:,} flows, {sim['solves']:,} max-min solves, {sim['peak_memory_bytes'] / 2**20:.0f} MiB peak"))
    for k, v in rows:
        t.add_row(k, v)
    return t


def _loads(r: dict[str, Any]) -> str:
    """Offered and accepted load as fractions of a node's injection
    bandwidth and in GB/s per node."""
    off, acc = r.get("offered_load"), r["accepted_load"]
    text = f"{off if off is not None else '-'} / {acc:.4f} of injection"
    if r.get("accepted_GBps_per_node") is not None:
        og = r.get("offered_GBps_per_node")
        text += f" ({'-' if og is None else format(og, '.4g')} / {r['accepted_GBps_per_node']:.4g} GB/s per node, of {r['injection_GBps_per_node']:.4g})"
    return text


def _us(ns: dict[str, Any]) -> str:
    return " / ".join(f"{ns[k] / 1000:.4g}" for k in ("mean", "p50", "p99", "max"))


def summary_table(r: dict[str, Any], title: str) -> Table:
    if r.get("model") == "flow":
        return flow_table(r, title)
    from rich.table import Table

    t = Table(title=title, show_header=False)
    t.add_column("metric", style="bold")
    t.add_column("value")
    lat = r["latency"]
    rows = [
        ("complete", str(r["complete"])),
        ("simulated cycles", f"{r['sim']['cycles']:,} ({r['sim']['cycles'] * r['cycle_ns'] / 1000:.1f} µs at {r['cycle_ns']:.3g} ns/cycle)"),
        ("packets injected / delivered", f"{r['packets_injected']:,} / {r['packets_delivered']:,}"),
        ("offered / accepted load", _loads(r)),
        ("link utilisation", f"{r['link_utilization']:.4f} ({r['link_utilization'] / r['cycle_ns']:.3g} GB/s per link)"),
        ("payload utilisation", f"{r['payload_utilization']:.4f}"),
        ("latency mean / p50 / p99 / max (cycles)", f"{lat['mean']:.1f} / {lat['p50']:.0f} / {lat['p99']:.0f} / {lat['max']:.0f}"),
        ("latency mean / p50 / p99 / max (µs)", _us(r.get("latency_ns") or {k: v * r["cycle_ns"] for k, v in lat.items() if k != "count"})),
        ("unblocking probability", f"{r['unblocking_probability']:.4f}"),
    ]
    # The escape share means something only beside dynamic VCs: on hop-class
    # (dragonfly) and escape-free (fat-tree) routers every VC is of one kind.
    router = r.get("setup", {}).get("router", {})
    if router.get("dynamic_vcs", 0) > 0 and router.get("escape") not in ("hop-class", "none"):
        rows.insert(8, ("escape-VC share of hops", f"{r['escape_fraction']:.4f}"))
    if r.get("completion_cycles") is not None:
        rows.append(("completion", f"{r['completion_cycles']:,} cycles"))
    faults = r.get("setup", {}).get("faults") or {}
    if faults.get("nodes") or faults.get("links"):
        rows.append(("failed nodes / links", f"{len(faults.get('nodes', []))} / {len(faults.get('links', []))}; "
                     f"{r.get('packets_rerouted', 0):,} packets routed around them"))
    if r.get("packets_lost") or (r.get("setup") or {}).get("fault_events"):
        rows.append(("failures during the run", f"{len((r.get('setup') or {}).get('fault_events') or [])} events; {r.get('packets_lost', 0):,} packets lost on failed links, "
                     f"{r.get('packets_resent', 0):,} sent again by their sources"))
    b = r.get("broadcast")
    if b:
        rows.append(("broadcast", f"{b['fraction_of_peak']:.4f} of the payload peak of {b['receiving_links']} incoming links per node; {b['deposits']:,} deposits"))
    sim = r["sim"]
    rows.append(("simulator", f"{sim['wall_seconds']:.2f} s wall, {sim['events']:,} events, {sim['simulated_us_per_wall_second']:.1f} µs simulated per s, {sim['peak_memory_bytes'] / 2**20:.0f} MiB peak"))
    p = sim.get("partitions")
    if p:
        loads = ", ".join(f"{q['routers']:,} routers {q['busy_seconds']:.2f} s busy {q['wait_seconds']:.2f} s waiting" for q in p["partitions"])
        rows.append(("partitions", f"{len(p['partitions'])} ({p['processes']} processes × {p['threads_per_process']} threads; {p['how']}); "
                                   f"{p['windows']:,} windows of {p['window_cycles']} cycles; event imbalance {p['event_imbalance']:.3f}; {loads}"))
    for k, v in rows:
        t.add_row(k, v)
    return t


def _mpi_world() -> Any:
    """MPI's world communicator (mpi4py), or a clear error without it."""
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - mpi4py is installed by `make install`
        raise click.UsageError(f"--mpi needs mpi4py and Open MPI (make install): {e}") from None
    return MPI.COMM_WORLD


def _with_counter_period(experiment: str, counter_period: int | None, out: str | None, model: str) -> str:
    """The experiment file's text, with run.counter_period set when
    --counter-period is given (replacing its earlier name, counter_cycles)
    or, for a packet run with --out whose file sets neither, to the default
    period: a directory always has the samples a report's heat maps move
    over. Without --out the samples would have nowhere to go (the JSON has
    only their count), so --counter-period is refused there."""
    text = _read_text(experiment)
    if counter_period is None:
        if out is None or model != "packet":
            return text
        e = Experiment.from_toml(text, experiment)
        run = e.tables.get("run")
        if isinstance(run, dict) and ("counter_period" in run or "counter_cycles" in run):
            return text
        return e.set("run.counter_period", DEFAULT_COUNTER_PERIOD).toml()
    if counter_period < 0:
        raise click.UsageError(f"--counter-period {counter_period}: expected cycles >= 0")
    if out is None:
        raise click.UsageError("--counter-period: the samples go to --out DIR (port_samples.parquet, vc_samples.parquet); "
                               "without it there is nowhere to write them")
    e = Experiment.from_toml(text, experiment)
    if isinstance(e.tables.get("run"), dict):
        e.tables["run"].pop("counter_cycles", None)
    return e.set("run.counter_period", counter_period).toml()


def _write(r: dict[str, Any], text: str, out: Path, model: str) -> None:
    """The run's files in ``out``, and the experiment as run (experiment.toml)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "experiment.toml").write_text(text, encoding="utf-8")
        if model == "flow":
            (out / "results.json").write_text(json.dumps(r, indent=1))
            click.echo(f"wrote results.json and experiment.toml to {out}", err=True)
            return
    except OSError as e:
        raise ConfigError(f"{out}: cannot write the run's results: {e.strerror}") from None
    from ..report.files import write_run

    files = write_run(r, out, r.samples)
    click.echo(f"wrote {len(files) + 1} files to {out}", err=True)


@click.command()
@click.argument("experiment", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", "out", type=click.Path(file_okay=False), default=None, help="Write results.json, CSV files and PNG plots into this directory.")
@click.option("--threads", type=int, default=1, show_default=True,
              help="Split the network into partitions simulated on this many threads (per process with --mpi). Results are bit-identical to one thread.")
@click.option("--mpi", is_flag=True, help="Run as one process of an MPI job (mpirun -np N tofusim run ... --mpi): every process simulates its partitions, rank 0 prints the result.")
@click.option("--model", default="packet", show_default=True, metavar="packet|flow",
              help="packet: the packet engine. flow: the flow model (messages as flows sharing link bandwidth max-min fairly; open-loop patterns as a steady state).")
@click.option("--max-memory", "max_memory", default=None, metavar="SIZE",
              help="Refuse the run if its estimated memory exceeds SIZE (e.g. 8GiB; default: the memory available now).")
@max_time_option
@click.option("--counter-period", "counter_period", type=int, default=None, metavar="CYCLES",
              help="Sample every port's and VC's counters every CYCLES (sets run.counter_period; 0: none) into --out DIR's "
                   f"port_samples.parquet and vc_samples.parquet [default with --out: the file's, else {DEFAULT_COUNTER_PERIOD}].")
@report_option
def run(experiment: str, as_json: bool, out: str | None, threads: int, mpi: bool, model: str, max_memory: str | None,
        max_time: float | str | None, counter_period: int | None, report: bool) -> None:
    """Run one simulation described by EXPERIMENT.toml (see docs/experiment.md).

    Exit code 1 when the run deadlocks or an invariant check fails (the
    result, with its "deadlock" or "invariant_error", is still printed).
    """
    out = out_for(report, out, f"run-{slug(Path(experiment).stem)}")
    text = _with_counter_period(experiment, counter_period, out, model)
    comm = _mpi_world() if mpi else None
    progress = _LazyProgress()
    try:
        limit = None if max_memory is None else int(parse_bytes(max_memory, "--max-memory"))
        r = run_text(text, experiment, progress=progress if comm is None or comm.Get_rank() == 0 else None,
                     ports=out is not None, threads=threads, comm=comm, model=model, max_memory=limit, keep_partial=True,
                     max_minutes=max_time,
                     notice=(lambda text: click.echo(f"tofusim: {experiment}: {text}", err=True)) if comm is None or comm.Get_rank() == 0 else None)
    finally:
        progress.close()
    if r is None:
        return  # an MPI process other than rank 0: rank 0 reports
    if out:
        _write(r, text, Path(out), model)
        if report:
            write_into(out, interrupted=bool(r.get("interrupted")))
    r.pop("ports", None)
    if as_json:
        click.echo(json.dumps(r))
    else:
        from rich.console import Console

        Console(width=None if sys.stdout.isatty() else 140).print(summary_table(r, f"{experiment}"))
    from ..checks import run_warnings

    warnings = run_warnings(r)
    if warnings:
        click.echo(f"tofusim: warning: {experiment}: " + "; ".join(warnings), err=True)
    if r.get("budget_exceeded"):
        raise ConfigError(f"{experiment}: memory: stopped at cycle {r['sim']['cycles']:,} with {r['budget_exceeded']:,} packets alive, "
                          "more than the memory left holds: the offered load is beyond what the network accepts and the sources' queues grow "
                          "without end; lower workload.load or run.cycles, or allow more with --max-memory")
    if r.get("interrupted") and r.get("model") == "flow":
        raise Interrupted(f"interrupted after {r['sim']['solves']:,} max-min solves: the flow model's figures come from completed messages, "
                          "so only the counts made so far are shown (complete: false)")
    if r.get("interrupted"):
        raise Interrupted(f"interrupted at cycle {r['sim']['cycles']:,}: the figures above cover the run up to then (complete: false)")
    if r.get("deadlock"):
        d = r["deadlock"]
        how = ("nothing can happen any more (found at once, before the run.deadlock_cycles watchdog)" if d.get("detected_by") == "no-event-left"
               else "the run.deadlock_cycles watchdog")
        raise Failed(f"deadlock at cycle {d['cycle']}: no packet moved for {d['stalled_cycles']} cycles with {d['packets_in_flight']} in flight; "
                     f"wait cycle of {d['wait_cycle_length']} VCs; detected by {how}")
    if r.get("invariant_error") and r["invariant_error"]["kind"] == "unroutable":
        # Not a broken invariant: the input asked for a route the failures cut.
        raise ConfigError(f"{experiment}: network.faults: {r['invariant_error']['detail']}")
    if r.get("invariant_error"):
        e = r["invariant_error"]
        raise Failed(f"invariant violated ({e['kind']}) at cycle {e['cycle']}: {e['detail']}")
