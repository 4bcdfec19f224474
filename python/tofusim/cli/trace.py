"""``tofusim trace``: record an MPI program as an OTF2 trace, summarise one."""

from __future__ import annotations

import json
from typing import Any, Callable

import click
from rich.console import Console
from rich.table import Table

from ..trace import record, summarise


@click.group()
def trace() -> None:
    """Record MPI programs as OTF2 traces (docs/traces.md) and summarise them."""


@trace.command("record", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--out", required=True, help="Directory of the new trace (must not exist).")
@click.option("--json", "as_json", is_flag=True, help="Print the trace's summary as JSON.")
@click.option("--calibrate/--no-calibrate", default=True, show_default=True,
              help="After the program, time a ping-pong between ranks 0 and 1 on its processes (the model of this machine for tofusim replay --system recorded).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def record_cmd(out: str, as_json: bool, calibrate: bool, command: tuple[str, ...]) -> None:
    """Run COMMAND (e.g. -- mpirun -np 2 ./app ARGS) under the tracer."""
    meta = record(list(command), out, calibrate)
    s = summarise(out)
    s["recorded"] = meta
    if as_json:
        click.echo(json.dumps(s))
    else:
        click.echo(f"recorded {out}: {s['ranks']} ranks, {sum(s['calls'].values()):,} MPI calls, "
                   f"{s['measured_seconds']:.3f} s measured ({meta['wall_seconds']:.2f} s with start-up)", err=True)


def _written_for(out_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The arguments of a command that writes the schedule a replay runs:
    TRACE, the system it is written for, its ranks per node and library."""
    def options(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option("--out", required=True, help=out_help)(f)
        f = click.option("--library", default=None, type=click.Choice(["fjmpi", "openmpi", "mpich"]),
                         help="Whose rules choose the collectives' algorithms [default: the system's].")(f)
        f = click.option("--ppn", type=int, default=1, show_default=True, metavar="N", help="Ranks per node, as tofusim replay places them.")(f)
        f = click.option("--system", required=True, help="The system it is written for (its MPI software, algorithms and host rates).")(f)
        return click.argument("path", metavar="TRACE")(f)
    return options


@trace.command("goal")
@_written_for("The GOAL file to write.")
def goal_cmd(path: str, system: str, ppn: int, library: str | None, out: str) -> None:
    """Write the schedule a replay of TRACE runs on SYSTEM as GOAL (LogGOPSim's format).

    `tofusim coll --schedule OUT --system SYSTEM` runs it to the replay's time.
    """
    from ..trace import goal
    from .files import write_text

    text = goal(path, system, ppn=ppn, library=library)
    write_text(out, text, "GOAL schedule")
    ops = sum(1 for line in text.splitlines() if ": " in line and not line.startswith("//"))
    click.echo(f"wrote {out}: {ops:,} operations over {text.splitlines()[1].split()[1]} ranks", err=True)


@trace.command("chakra")
@_written_for("The directory of the Chakra files (tofusim.RANK.et), made if missing.")
def chakra_cmd(path: str, system: str, ppn: int, library: str | None, out: str) -> None:
    """Write the schedule a replay of TRACE runs on SYSTEM as Chakra execution traces (MLCommons, ASTRA-sim).

    `tofusim coll --schedule OUT --system SYSTEM` runs them to the replay's time.
    """
    from ..trace import chakra

    files = chakra(path, system, out, ppn=ppn, library=library)
    click.echo(f"wrote {len(files)} Chakra files in {out} (tofusim.0.et … tofusim.{len(files) - 1}.et)", err=True)


@trace.command("show")
@click.argument("path", metavar="TRACE")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--matrix/--no-matrix", default=None, help="Print the communication matrix (default: up to 16 ranks).")
def show(path: str, as_json: bool, matrix: bool | None) -> None:
    """Summarise TRACE: ranks, calls by kind, bytes, compute fraction, communication matrix."""
    s = summarise(path)
    if as_json:
        click.echo(json.dumps(s))
        return
    con = Console()
    con.print(f"[bold]{s['trace']}[/]")
    con.print(f"{s['ranks']} ranks, {s['communicators']} communicators, measured {s['measured_seconds']:.6f} s, "
              f"compute fraction {s['compute_fraction']:.1%}")
    con.print(f"point-to-point: {s['point_to_point']['messages']:,} messages, {s['point_to_point']['bytes']:,} bytes")
    t = Table("call", "count", "kind", title="MPI calls")
    for name, n in sorted(s["calls"].items(), key=lambda kv: (-kv[1], kv[0])):
        t.add_row(name, f"{n:,}", s["call_kinds"][name])
    con.print(t)
    if s["collectives"]:
        t = Table("collective", "rank-calls", "bytes sent", title="Collectives (summed over the ranks taking part)")
        for op, e in s["collectives"].items():
            t.add_row(op, f"{e['calls']:,}", f"{e['bytes_sent']:,}")
        con.print(t)
    t = Table("rank", "calls", "compute s", "MPI s", "compute", title="Per rank")
    for p in s["per_rank"]:
        t.add_row(str(p["rank"]), f"{p['calls']:,}", f"{p['compute_ns'] * 1e-9:.6f}", f"{p['mpi_ns'] * 1e-9:.6f}", f"{p['compute_fraction']:.1%}")
    con.print(t)
    if matrix or (matrix is None and s["ranks"] <= 16):
        t = Table("src \\ dst", *[str(d) for d in range(s["ranks"])], title="Point-to-point bytes")
        for r, row in enumerate(s["matrix_bytes"]):
            t.add_row(str(r), *[f"{b:,}" if b else "." for b in row])
        con.print(t)
    if s["refused_calls"]:
        con.print("[yellow]calls the replay refuses:[/] " + ", ".join(f"{n} (ranks {rs[:8]})" for n, rs in s["refused_calls"].items()))


@trace.command("synth")
@click.option("--out", required=True, help="Directory of the new trace (must not exist).")
@click.option("--ranks", type=click.IntRange(2, 1_048_576), required=True, help="MPI ranks (laid out as a 3D grid, x fastest).")
@click.option("--iterations", type=click.IntRange(1, 1_000_000), default=10, show_default=True)
@click.option("--halo-bytes", type=click.IntRange(0, 2**40), default=65536, show_default=True, help="Bytes to each of the six neighbours per iteration.")
@click.option("--compute-us", type=click.FloatRange(0.0, 1e9), default=200.0, show_default=True, help="Compute per iteration, microseconds.")
@click.option("--allreduce-every", type=click.IntRange(1, 1_000_000), default=5, show_default=True, help="An 8-byte allreduce every this many iterations.")
@click.option("--slow-rank", type=click.IntRange(0, 1_048_575), default=None, help="A rank that computes --slow-factor times as long as the others (load imbalance).")
@click.option("--slow-factor", type=click.FloatRange(1.0, 1e6), default=1.0, show_default=True, help="How much longer --slow-rank computes per iteration.")
@click.option("--json", "as_json", is_flag=True)
def synth_cmd(out: str, ranks: int, iterations: int, halo_bytes: int, compute_us: float, allreduce_every: int, slow_rank: int | None,
              slow_factor: float, as_json: bool) -> None:
    """Write a synthetic OTF2 trace: a 3D halo exchange with a periodic allreduce (docs/traces.md)."""
    from ..trace.synth import write

    if not compute_us >= 0.0:
        raise click.UsageError(f"--compute-us {compute_us}: expected >= 0")
    if slow_factor != 1.0 and slow_rank is None:
        raise click.UsageError("--slow-factor applies to --slow-rank: name the slow rank")
    r = write(out, ranks, iterations, halo_bytes, int(round(compute_us * 1000)), allreduce_every, slow_rank=slow_rank, slow_factor=slow_factor)
    click.echo(json.dumps(r) if as_json else f"wrote {out}: {ranks} ranks on a {'x'.join(map(str, r['grid']))} grid, {iterations} iterations")
