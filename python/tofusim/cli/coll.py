"""``tofusim coll``: one collective operation on the packet engine or the flow model."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from .outcome import Interrupted, Failed
from .. import coll as run_coll
from .. import collective_algorithms
from ..samples import DEFAULT_COUNTER_PERIOD, CounterSamples
from ..units import parse_bytes
from .budget import max_time_option
from .ranks import ppn_options, read_placement
from .report import out_for, report_option, slug, write_into
from .run import _LazyProgress

OPERATIONS = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter", "reduce_scatter"]


def _list(as_json: bool) -> None:
    algos = collective_algorithms()
    if as_json:
        click.echo(json.dumps(algos))
        return
    t = Table(title="collective algorithms (tofusim coll OP --algo NAME)")
    for c in ("operation", "algorithm", "what it does"):
        t.add_column(c)
    for op, lst in algos.items():
        for a in lst:
            t.add_row(op, a["name"], a["summary"])
    Console(width=None if sys.stdout.isatty() else 140).print(t)


def _sweep(op: str, algo: str, size: str, system: str, jobs: int, out: str | None, as_json: bool, report: bool, kw: dict) -> None:
    from pathlib import Path

    import pandas as pd
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .. import ConfigError
    from ..sweep import Interrupted as SweepInterrupted, coll_sweep, plot_coll, sizes
    from .sweep import interrupted

    algos = [a.strip() for a in algo.split(",") if a.strip()]
    size_list = sizes(size)
    bar = Progress(TextColumn(f"{op}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    try:
        with bar:
            task = bar.add_task("runs", total=len(algos) * len(size_list))
            rows = coll_sweep(op, algos, size_list, system, jobs, progress=lambda d, n: bar.update(task, completed=d), **kw)
    except SweepInterrupted as stop:
        interrupted(stop, as_json)
    d = Path(out) if out else Path(f"coll-{op}-{slug(system or 'default')}")
    try:
        d.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(d / "coll.csv", index=False)
        pd.DataFrame(rows).to_parquet(d / "coll.parquet", index=False)
        plot_coll(rows, str(d / "coll.png"), f"{op} on {system} ({kw['model']})")
    except OSError as e:
        raise ConfigError(f"{d}: cannot write the sweep's results: {e.strerror}") from None
    if report:
        write_into(str(d))
    if as_json:
        click.echo(json.dumps({"complete": True, "rows": rows, "out": str(d)}))
        return
    t = Table("algorithm", "size", "time (µs)", "GB/s", "messages", "note", title=f"{op} on {system}: {len(rows)} runs ({kw['model']})")
    best: dict[int, str] = {}
    for s_ in size_list:
        m = [r for r in rows if r["size_bytes"] == s_ and not r["failed"]]
        if m:
            best[s_] = min(m, key=lambda r: r["time_seconds"])["algorithm"]
    for r in rows:
        note = "fastest" if best.get(r["size_bytes"]) == r["algorithm"] and len(algos) > 1 else ""
        if r["failed"]:
            note = "FAILED: " + (r["invariant_error"] or ("deadlock" if r["deadlock"] else r["verify_error"] or "incomplete"))
        if r["fallback"]:
            note = (note + "; " if note else "") + "fallback: " + r["fallback"]
        t.add_row(r["algorithm"], f"{r['size_bytes']:,}", f"{r['time_seconds'] * 1e6:,.2f}", f"{r['bandwidth_Bps'] / 1e9:.3f}",
                  f"{r['messages']:,}", note, style="bold" if note.startswith("fastest") else None)
    Console(width=None if sys.stdout.isatty() else 160).print(t)
    click.echo(f"wrote {d}/coll.csv, coll.parquet, coll.png")
    if any(r["failed"] for r in rows):
        raise Failed(f"{sum(r['failed'] for r in rows)} of {len(rows)} runs failed (see the table)")


def _write(r: dict, out: str, samples: CounterSamples) -> None:
    """result.json, and the counter samples and steps as Parquet (the steps
    taken out of the result: ``r`` keeps what --json prints, which names
    the sample files)."""
    from pathlib import Path

    from .. import ConfigError
    from ..report.files import write_steps

    d = Path(out)
    run = dict(r.get("run") or {})
    steps = r.pop("steps", None)
    if r.get("steps_omitted"):
        click.echo(f"tofusim: note: {r['steps_omitted']:,} steps are more than the collective keeps finish cycles of: "
                   "no steps.parquet (the report's animation of the schedule needs it)", err=True)
    try:
        d.mkdir(parents=True, exist_ok=True)
        files = samples.write(d)
        if files:
            run["counter_samples"] = {**run.get("counter_samples", {}), "files": [f.name for f in files]}
            r["run"] = run
        if steps is not None:
            write_steps(steps, d / "steps.parquet")
        (d / "result.json").write_text(json.dumps({**r, "run": run} if r.get("run") else r, indent=1) + "\n", encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{out}: cannot write the collective's results: {e.strerror}") from None


@click.command()
@click.argument("op", required=False, metavar="[" + "|".join(OPERATIONS) + "]")
@click.option("--algo", help="Algorithm (see --list) [default: the one the MPI library's rules choose for the operation, size and communicator].")
@click.option("--library", default=None, type=click.Choice(["fjmpi", "openmpi", "mpich"]),
              help="Without --algo: whose rules choose the algorithm [default: the system's: fjmpi on Tofu, mpich on Aries and BG/L, openmpi on fat-trees].")
@click.option("--size", "size", default="8B", show_default=True, help="Vector size (bcast, reduce, allreduce), per-rank block (allgather) or per-pair block (alltoall); units accepted, e.g. 64KiB.")
@click.option("--system", "system", help="System preset, optionally resized: k:4x4x4, fugaku:2x2x2, bgl-midplane; a dragonfly with its routing: aries-720/minimal (default adaptive-prefer-minimal).")
@click.option("--root", default=0, show_default=True, help="Root rank of bcast, reduce, gather and scatter.")
@click.option("--segment", "segment", default=None,
              help="Pipelining segment of the chain and tree algorithms [default: the algorithm's: trinary-tree and trinaryx3 derive it "
                   "from their pipeline depth, others 64 KiB].")
@click.option("--tnis", type=int, default=None,
              help="TNIs the algorithm may use [default: as many as it is defined on, at most the node's: trinaryx3 and trinary-tree 3, "
                   "quad-rings 4, others all].")
@click.option("--trees", "trees_file", metavar="FILE", default=None,
              help="trinary-tree and trinaryx3: three trees (JSON: lengths, and each tree's parent per rank, null at the root) instead of "
                   "the built ones; checked: spanning, nearest-neighbour arcs, one tree per link, at most three children per rank. "
                   "tools/trinary_trees_sat.py writes shallow ones.")
@click.option("--schedule", "schedule_file", metavar="FILE|DIR", default=None,
              help="Run a collective written as data instead of a built-in algorithm: the JSON a schedule serialises to "
                   "(tofusim.Schedule in Python writes it; tofusim.collective_schedule gives a built-in's), a GOAL file "
                   "(LogGOPSim's format), or a directory of Chakra execution traces (NAME.RANK.et). The operation, ranks "
                   "and size are the schedule's.")
@click.option("--descriptor", metavar="direct|memory", default="direct", show_default=True, help="Tofu descriptor mode.")
@click.option("--cache-injection/--no-cache-injection", default=True, show_default=True, help="Tofu2/TofuD cache injection of received data.")
@click.option("--cmg", metavar="near|far", default="near", show_default=True, help="TofuD: the TNI's distance from the core's CMG.")
@ppn_options
@click.option("--comm", default="world", show_default=True, metavar="world|AXES|blocks:N|ranks:LIST",
              help="Sub-communicators that run the collective at once, sharing the network: AXES keeps those axes of the ranks' grid "
                   "(x: every line along x; yz: every y-z plane; MPI_Cart_sub), blocks:N splits the ranks into consecutive blocks of N "
                   "(MPI_Comm_split), ranks:LIST is one communicator (e.g. ranks:0-7,16) with the others idle.")
@click.option("--flat", is_flag=True, help="With several ranks per node: run barrier, bcast, reduce and allreduce over every rank "
                                         "instead of in their node-leader form (fan in through memory, one rank per node on the network, fan out).")
@click.option("--verify", is_flag=True, help="Also run the schedule on real buffers and check the result.")
@click.option("--seed", default=1, show_default=True)
@max_time_option
@click.option("--model", metavar="packet|flow|flow-events|flow-rounds", default="packet", show_default=True,
              help="packet: every packet on the packet engine. flow: the flow model (max-min fair bandwidth sharing) on the schedule's messages, "
                   "or, when the schedule is too large to list (full machines), on the algorithm's lockstep rounds; flow-events / flow-rounds choose.")
@click.option("--list", "list_", is_flag=True, help="List the algorithms of every operation.")
@click.option("--counter-period", "counter_period", type=int, default=None, metavar="CYCLES",
              help="Packet engine: sample every port's and VC's counters every CYCLES (0: none) into --out DIR's port_samples.parquet "
                   f"and vc_samples.parquet [default with --out: {DEFAULT_COUNTER_PERIOD}].")
@click.option("--jobs", type=click.IntRange(1, 1024), default=1, show_default=True, help="Sweeps: runs at a time (processes).")
@click.option("--out", "out", help="Directory for the results: a sweep's coll.csv, coll.parquet and coll.png (default coll-OP-SYSTEM); "
                                   "one run's result.json, on the packet engine steps.parquet (every step's finish cycle) and, "
                                   "port_samples.parquet and vc_samples.parquet (counter samples).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@report_option
def coll(op, algo, library, size, system, root, segment, tnis, trees_file, schedule_file, descriptor, cache_injection, cmg, ppn, placement, comm, flat, verify, seed,
         max_time, model, list_, counter_period, jobs, out, as_json, report) -> None:
    """Run one collective OP over every node of a system, on the packet engine or the flow model.

    The algorithm is a schedule (per rank: sends, receives, reductions and
    their dependencies); --verify also runs it on real buffers. Several
    algorithms (--algo ring,rabenseifner) or a size range (--size 1KiB:16MiB,
    doubling) sweep: one table, CSV, Parquet and a plot.
    """
    if list_:
        _list(as_json)
        return
    if schedule_file is not None:
        given = {"--algo": algo, "--library": library, "--segment": segment, "--tnis": tnis, "--trees": trees_file, "--root": root or None, "--flat": flat or None,
                 "--comm": None if comm == "world" else comm}
        clash = [k for k, v in given.items() if v is not None]
        if clash:
            raise click.UsageError(f"--schedule gives the algorithm, its TNIs, segments and root, and runs as written: drop {', '.join(clash)}")
        if size != "8B":
            raise click.UsageError("--schedule gives the size (its count of 8-byte elements): drop --size")
    elif op is None:
        raise click.UsageError("missing OP (or --list)")
    if algo and library:
        raise click.UsageError("--library lets a library's rules choose the algorithm; --algo names one: give one of them")
    # Anything else (an unknown operation too) is checked where the API checks it.
    if not system:
        raise click.UsageError("missing --system (e.g. k:4x4x4)")
    segment_bytes = None if segment is None else parse_bytes(segment, "--segment")
    if algo and "," in algo:
        names = [a.strip() for a in algo.split(",")]
        if "" in names:
            raise click.UsageError(f"--algo {algo!r}: an empty algorithm name (expected names separated by commas, e.g. ring,recursive-doubling)")
        if len(set(names)) < len(names):
            raise click.UsageError(f"--algo {algo!r}: an algorithm named twice")
    if ":" in size and not algo and schedule_file is None:
        raise click.UsageError("--size A:B sweeps named algorithms: give --algo (the library's choice per size is what tofusim mpi-bench prints)")
    sweeping = schedule_file is None and bool(algo) and ("," in algo or ":" in size)
    if counter_period is None:
        # One packet run with --out samples by default (a report's heat maps move over the samples).
        counter_period = DEFAULT_COUNTER_PERIOD if out and model == "packet" and not sweeping else 0
    elif counter_period and not out and model == "packet":
        raise click.UsageError("--counter-period: the samples go to --out DIR (port_samples.parquet, vc_samples.parquet); "
                               "without it there is nowhere to write them")
    if counter_period < 0:
        raise click.UsageError(f"--counter-period {counter_period}: expected cycles >= 0")
    if counter_period and model != "packet":
        raise click.UsageError("--counter-period samples the packet engine's counters: use --model packet")
    if sweeping and counter_period:
        raise click.UsageError("--counter-period samples one run: give one algorithm and one size")
    if not sweeping and jobs != 1:
        raise click.UsageError("--jobs runs the points of a sweep (several --algo or a --size range) at once")
    trees = None
    if trees_file is not None:
        if sweeping:
            raise click.UsageError("--trees fits one communicator and algorithm: give one algorithm and one size")
        from .files import read_text

        trees = read_text(trees_file, "trees file")
    out = out_for(report, out, f"coll-{op or 'schedule'}-{slug(system or 'default')}")
    if sweeping:
        _sweep(op, algo, size, system, jobs, out, as_json, report, dict(root=root, segment_bytes=segment_bytes, tnis=tnis, descriptor=descriptor,
               cache_injection=cache_injection, cmg=cmg, verify=verify, seed=seed, model=model, max_minutes=max_time,
               ppn=ppn, placement=read_placement(placement), flat=flat, comm=comm))
        return
    size_bytes = parse_bytes(size, "--size")
    progress = _LazyProgress()
    columns: dict = {}
    try:
        if schedule_file is not None:
            from pathlib import Path

            from ..schedule import chakra_paths, run_schedule
            from .files import read_text as _read

            chakra = chakra_paths(schedule_file) if Path(schedule_file).is_dir() else None
            r = run_schedule("" if chakra else _read(schedule_file, "schedule"), system, chakra_files=chakra, ppn=ppn, placement=read_placement(placement), verify=verify, model=model,
                             seed=seed, progress=progress, keep_partial=True, counter_cycles=counter_period, steps=bool(out) and model == "packet",
                             max_minutes=max_time, source=schedule_file, samples=columns)
            if op is not None and op != r["op"]:
                raise click.UsageError(f"OP {op}: the schedule in {schedule_file} is a {r['op']}")
            op, algo = r["op"], r["algo"]
        else:
            r = run_coll(op, algo or None, size_bytes, system, library=library, root=root, segment_bytes=segment_bytes, tnis=tnis, descriptor=descriptor,
                         cache_injection=cache_injection, cmg=cmg, verify=verify, seed=seed, progress=progress, model=model, keep_partial=True,
                         counter_cycles=counter_period, steps=bool(out) and model == "packet", samples=columns,
                         trees=trees, trees_source=trees_file or "<trees>", max_minutes=max_time, ppn=ppn, placement=read_placement(placement),
                         flat=flat, comm=comm)
    finally:
        progress.close()
    if out:
        _write(r, out, CounterSamples(columns))
        if report:
            write_into(out, interrupted=bool((r.get("run") or {}).get("interrupted") or (r.get("flow") or {}).get("interrupted")))
    if as_json:
        click.echo(json.dumps(r))
    else:
        t = Table(title=f"{op} / {r['algo']} on {system}", show_header=False)
        t.add_column("metric", style="bold")
        t.add_column("value")
        rows = [
            ("processes", f"{r['processes']:,}" + (f" (communicator {'x'.join(map(str, r['communicator_shape']))})" if r["communicator_shape"] else "")
             + (f", {r['ranks_per_node']} per node ({r['placement']}" + ("; node leaders on the network" if r["node_leaders"] else "; flat") + ")"
                if r["ranks_per_node"] > 1 or r["placement"] != "block" else "")),
            *([("communicators", f"{r['communicators']['count']:,} side by side ({r['communicators']['comm']}), {r['communicators']['ranks_each']:,} ranks each; "
                                    "size, bandwidth and shape are one communicator's")] if r.get("communicators") else []),
            ("algorithm", f"{r['algo']} ({r['settings']['algorithm']})"),
            ("size", f"{r['size_bytes']:,} bytes"),
            ("time", f"{r['time_seconds'] * 1e6:.3f} µs"),
            ("bandwidth", f"{r['bandwidth_Bps'] / 1e9:.3f} GB/s"),
            ("messages / bytes sent", f"{r['messages']:,} / {r['bytes_sent']:,}"),
            ("TNIs", f"{r['settings']['tnis']} ({r['settings']['tnis_reason']}); {r['tnis_used']} used"),
            ("segment", f"{r['settings']['segment_bytes']:,} bytes ({r['settings']['segment']})"),
            ("verified", "-" if r["verified"] is None else str(r["verified"])),
        ]
        if r["fallback"]:
            rows.append(("fallback", r["fallback"]))
        if r.get("trees"):
            rows.append(("trees", f"{r['trees']['source']} (depths {' / '.join(map(str, r['trees']['depths']))} arcs)"))
        if r["run"]:
            rows.append(("simulator", f"packet engine: {r['run']['cycles']:,} cycles, {r['run']['wall_seconds']:.2f} s wall"))
        else:
            f = r["flow"]
            how = "flow model, schedule event by event"
            if f["rounds"]:
                k = f["rounds"]
                how = (f"flow model in lockstep rounds: {k['rounds']:,} rounds in {k['stretches']:,} stretches, {k['solves']:,} max-min solves; "
                       f"transfers {k['transfer_seconds'] * 1e6:,.1f} µs + latencies {k['latency_seconds'] * 1e6:,.1f} µs + copies {k['copy_seconds'] * 1e6:,.1f} µs"
                       + (f"; each node's fan-in and fan-out through memory {k['node_seconds'] * 1e6:,.1f} µs" if k.get("node_seconds") else ""))
            rows.append(("simulator", f"{how}; {f['wall_seconds']:.2f} s wall, {f['peak_memory_bytes'] / 2**20:,.0f} MiB peak"))
        for k, v in rows:
            t.add_row(k, v)
        Console(width=None if sys.stdout.isatty() else 140).print(t)
    if r["flow"] and r["flow"]["interrupted"]:
        raise Interrupted("interrupted: the flow model stopped before the schedule ended; no time is known (complete: false)")
    if r["run"] and r["run"]["interrupted"] and r["run"]["complete"]:
        raise Interrupted("interrupted while checking the data (--verify): the time is the run's, the check did not finish (verified: null)")
    if r["run"] and r["run"]["interrupted"]:
        raise Interrupted(f"interrupted at cycle {r['run']['cycles']:,}: the collective did not finish (complete: false)")
    if r["verified"] is False:
        raise Failed(f"verification failed: {r['verify_error']}")
    if r["run"] and (r["run"]["deadlock"] or r["run"]["invariant_error"]):
        raise Failed(f"the run failed: {r['run']['invariant_error'] or 'deadlock'}")
