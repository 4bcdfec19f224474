"""``tofusim mpi-bench``: an Intel MPI Benchmarks kernel on a simulated machine,
printed as IMB prints it."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from .. import ConfigError
from .. import mpi_bench as run_bench
from ..units import parse_bytes
from .budget import max_time_option
from .outcome import Failed, Interrupted
from .ranks import ppn_options, read_placement
from .report import slug
from .run import _LazyProgress

BENCHMARKS = ["PingPong", "PingPing", "Sendrecv", "Exchange", "Allreduce", "Reduce", "Reduce_scatter", "Bcast", "Allgather", "Allgatherv",
              "Gather", "Gatherv", "Scatter", "Scatterv", "Alltoall", "Alltoallv", "Scan", "Exscan", "Barrier",
              "osu_latency", "osu_bw", "osu_bibw"]


def _msglog(text: str) -> tuple[int, int]:
    try:
        lo, hi = (int(x) for x in text.split(":"))
    except ValueError:
        raise click.UsageError(f"--msglog {text!r}: expected MIN:MAX, powers of two, e.g. 0:22") from None
    if not 0 <= lo <= hi <= 30:
        raise click.UsageError(f"--msglog {text!r}: expected 0 <= MIN <= MAX <= 30")
    return lo, hi


def _write(r: dict, out: str, compared: list | None) -> None:
    from pathlib import Path

    import pandas as pd

    d = Path(out)
    try:
        d.mkdir(parents=True, exist_ok=True)
        (d / "result.json").write_text(json.dumps(r, indent=1) + "\n", encoding="utf-8")
        pd.DataFrame(r["rows"]).to_csv(d / "imb.csv", index=False)
        (d / "imb.txt").write_text(r.imb_text(), encoding="utf-8")
        _plot(r, compared, d / "imb.png")
    except OSError as e:
        raise ConfigError(f"{out}: cannot write the benchmark's results: {e.strerror}") from None


def _plot(r: dict, compared: list | None, path) -> None:
    """Time per call and bandwidth against message size (log-log), with the
    measured IMB figures beside the simulated ones when compared."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [x for x in r["rows"] if x["bytes"] > 0]
    fig, ax = plt.subplots(1, 2 if r["kind"] != "collective" else 1, figsize=(10 if r["kind"] != "collective" else 5.5, 4), squeeze=False)
    t_ax = ax[0][0]
    t_ax.loglog([x["bytes"] for x in rows], [x["t_max_us"] for x in rows], "o-", label="tofusim (t_max)" if r["kind"] != "single-transfer" else "tofusim")
    if compared:
        m = [c for c in compared if c["bytes"] > 0]
        t_ax.loglog([c["bytes"] for c in m], [c["t_measured_us"] for c in m], "s--", label="IMB measured")
    t_ax.set_xlabel("message size (bytes)")
    t_ax.set_ylabel("time per call (µs)")
    t_ax.grid(True, which="both", alpha=0.3)
    t_ax.legend()
    if r["kind"] != "collective":
        b_ax = ax[0][1]
        b_ax.semilogx([x["bytes"] for x in rows], [x["mbytes_per_sec"] for x in rows], "o-", label="tofusim")
        if compared:
            m = [c for c in compared if c["bytes"] > 0 and c["mbytes_per_sec_measured"] is not None]
            b_ax.semilogx([c["bytes"] for c in m], [c["mbytes_per_sec_measured"] for c in m], "s--", label="IMB measured")
        b_ax.set_xlabel("message size (bytes)")
        b_ax.set_ylabel("bandwidth (MB/s, 10^6 bytes)")
        b_ax.grid(True, which="both", alpha=0.3)
        b_ax.legend()
    fig.suptitle(f"{r['benchmark']} on {r['system']}: {r['processes']} processes, {r['ranks_per_node']} per node ({r['model']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@click.command("mpi-bench")
@click.argument("benchmark", metavar="BENCHMARK")
@click.option("--system", "system", required=True, help="System preset, optionally resized: k:4x6x4, fugaku:2x3x4, bgl:8x8x8, aries-720.")
@ppn_options
@click.option("--flat", is_flag=True, help="With several ranks per node: run barrier, bcast, reduce and allreduce over every rank "
                                         "instead of in their node-leader form (fan in through memory, one rank per node on the network, fan out).")
@click.option("--msglog", default="0:22", show_default=True, metavar="MIN:MAX",
              help="Message sizes as IMB steps them: 0, then 2^MIN ... 2^MAX bytes.")
@click.option("--sizes", default=None, metavar="LIST", help="Message sizes instead, comma-separated; units accepted (8,1KiB,4MiB).")
@click.option("--algo", default=None,
              help="Collectives: the algorithm for every size [default: the MPI library's choice for the size, named in each row].")
@click.option("--library", default=None, type=click.Choice(["fjmpi", "openmpi", "mpich"]),
              help="Whose collective rules choose the algorithm per size [default: the system's: fjmpi on Tofu, mpich on Aries and BG/L, openmpi on fat-trees].")
@click.option("--model", metavar="packet|flow", default="packet", show_default=True,
              help="packet: every packet on the packet engine; flow: the flow model on the schedule's messages, or for a collective too large to list "
                   "(a full machine) one call in its lockstep rounds where the algorithm has them.")
@click.option("--seed", default=1, show_default=True)
@max_time_option
@click.option("--compare", "compare_file", metavar="FILE", default=None,
              help="An IMB-MPI1 output file of a real run: its table of this benchmark printed beside ours with the ratio.")
@click.option("--out", "out", default=None, help="Directory for result.json, imb.txt (IMB's text), imb.csv and imb.png (default mpi-bench-BENCHMARK-SYSTEM).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def mpi_bench(benchmark, system, ppn, placement, flat, msglog, sizes, algo, library, model, seed, max_time, compare_file, out, as_json) -> None:
    """Run an IMB-MPI1 kernel (PingPong, PingPing, Sendrecv, Exchange,
    Allreduce, Reduce, Reduce_scatter, Bcast, Allgather(v), Gather(v),
    Scatter(v), Alltoall(v), Scan, Exscan, Barrier; and the OSU tests
    osu_latency, osu_bw, osu_bibw) on a simulated system and print it as IMB does: #bytes, #repetitions, t_min/t_max/t_avg
    in µs and Mbytes/sec (10^6 bytes per second).

    Every node runs --ppn ranks; PingPong and PingPing use ranks 0 and 1
    (with --ppn 2 or more, two ranks of one node: shared memory).
    """
    from .. import imb

    lo, hi = _msglog(msglog)
    size_list = None if sizes is None else [parse_bytes(s.strip(), "--sizes") for s in sizes.split(",") if s.strip()]
    blocks = imb.read(compare_file) if compare_file else None
    progress = _LazyProgress()
    try:
        r = run_bench(benchmark, system, ppn=ppn, placement=read_placement(placement), sizes=size_list, msglog=(lo, hi), algo=algo, library=library,
                      model=model, seed=seed, progress=progress, keep_partial=True, max_minutes=max_time, flat=flat)
    finally:
        progress.close()
    compared = None
    if blocks is not None:
        block = imb.matching(blocks, r.benchmark, r.processes, compare_file)
        compared = imb.compare_rows(r, block)
        r["compared_with"] = {"file": compare_file, "processes": block.processes, "rows": compared}
    out = out or f"mpi-bench-{r.benchmark.lower()}-{slug(system)}"
    _write(r, out, compared)
    if as_json:
        click.echo(json.dumps(r))
    else:
        click.echo(r.imb_text(), nl=False)
        chosen = [x for x in r.rows if x.algorithm]
        if chosen:
            click.echo(f"# algorithm per size ({r.library}'s rules unless given):")
            for x in chosen:
                instead = f", standing in for {x.stands_in_for}" if x.stands_in_for else ""
                rounds = "; one call in the flow model's lockstep rounds, no per-call MPI software" if x.get("rounds") else ""
                click.echo(f"#   {x.bytes:>10} B: {x.algorithm}{instead} ({x.rule}){rounds}")
        click.echo(f"# tofusim: {r.system}, {r.ranks} ranks ({r.ranks_per_node} per node, {r.placement}), {r.model} model, "
                   f"{r.wall_seconds:.1f} s wall")
        sw = r.get("mpi_software")
        if sw:
            click.echo(f"# MPI software modelled: {sw['profile']} ({sw['note']})")
        if compared is not None:
            t = Table("#bytes", "t simulated (µs)", "t measured (µs)", "simulated / measured", "MB/s simulated", "MB/s measured",
                      title=f"{r.benchmark}: tofusim against {compare_file} ({block.processes} processes)")
            for c in compared:
                f = lambda v: "-" if v is None else f"{v:,.2f}"  # noqa: E731
                t.add_row(f"{c['bytes']:,}", f(c["t_simulated_us"]), f(c["t_measured_us"]), f"{c['ratio']:.3f}",
                          f(c["mbytes_per_sec_simulated"]), f(c["mbytes_per_sec_measured"]))
            Console(width=None if sys.stdout.isatty() else 140).print(t)
        click.echo(f"wrote {out}/result.json, imb.txt, imb.csv, imb.png", err=True)
    if r.interrupted:
        raise Interrupted(f"interrupted after {len(r.rows)} sizes: the table holds those (interrupted: true)")
    failed = [x for x in r.rows if not x.complete]
    if failed:
        raise Failed(f"{len(failed)} sizes did not run to the end (a deadlock or a broken invariant)")
