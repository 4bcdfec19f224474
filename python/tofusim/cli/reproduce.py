"""``tofusim reproduce``: published results measured beside the published values."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..reproduce import CASES, run_case
from .outcome import Interrupted
from .report import out_for, report_option, slug, write_into


def _criterion(m: dict) -> str:
    """The published value as the test applies it: a lower bound (≥), or
    the value with its relative tolerance."""
    p, tol = m["published"], m.get("tolerance")
    if m.get("lower_bound"):
        return f"≥ {p * (1 - (tol or 0.0)):.4g}"
    if tol is None:
        return f"{p:.4g}"
    return f"{p:.4g} ± {tol:.0%}"


def _table(res: dict) -> Table:
    t = Table(title=f"{res['case']}: {res['title']} ({res['scale']} scale)")
    for c in ("metric", "unit", "measured", "published", "within"):
        t.add_column(c)
    for m in res["metrics"]:
        pub = ("none published" if m.get("unpublished") else "withheld (blind check)") if m["published"] is None else _criterion(m)
        within = "-" if m["within"] is None else ("yes" if m["within"] else ("no (known)" if m.get("known_difference") else "NO"))
        t.add_row(m["name"], m["unit"], f"{m['measured']:.4g}", pub, within)
    return t


def _draw(plots: list[dict], path: Path) -> None:
    """One panel per plot description of a case."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(plots), 1, figsize=(7, 3.2 * len(plots)), squeeze=False)
    for ax, p in zip(axes[:, 0], plots):
        for label, pts in p["curves"].items():
            ax.plot([q[0] for q in pts], [q[1] for q in pts], label=label, marker="." if len(pts) < 20 else None)
        # Published levels (a figure's value without a curve): dashed lines.
        for label, level in (p.get("published") or {}).items():
            ax.axhline(level, linestyle="--", linewidth=0.8, color="grey")
            ax.annotate(f"published {label}", (0.01, level), xycoords=("axes fraction", "data"), fontsize=6, color="grey", va="bottom")
        ax.set_title(p["title"], fontsize=9)
        ax.set_xlabel(p["x"])
        ax.set_ylabel(p["y"])
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@click.command()
@click.argument("case", required=False)
@click.option("--list", "list_", is_flag=True, help="List the cases.")
@click.option("--scale", type=click.Choice(["reduced", "full"]), default="reduced", show_default=True, help="Reduced scale (under a minute) or the published scale.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Write CASE.json (and CASE.png for cases with curves) into this directory.")
@report_option
def reproduce(case: str | None, list_: bool, scale: str, as_json: bool, out: str | None, report: bool) -> None:
    """Reproduce a published figure (CASE, or `all`)."""
    if list_ or case is None:
        if as_json:
            click.echo(json.dumps({"cases": [{"case": c.id, "title": c.title} for c in CASES.values()]}))
        else:
            for c in CASES.values():
                click.echo(f"{c.id:28s} {c.title}")
        return
    out = out_for(report, out, f"reproduce-{slug(case)}")
    ids = list(CASES) if case == "all" else [case]
    for i in ids:
        if i not in CASES:
            raise click.UsageError(f"unknown case {i!r}; valid cases are: {', '.join(CASES)}, all")
    results = []
    for i in ids:
        try:
            res = run_case(i, scale)
        except KeyboardInterrupt:
            # Ctrl-C: the cases finished so far, as one object under --json.
            if as_json:
                click.echo(json.dumps({"cases": results, "summary": summary(results), "interrupted": True, "interrupted_case": i}))
            raise Interrupted(f"interrupted in case {i}: {len(results)} of {len(ids)} cases finished") from None
        results.append(res)
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / f"{i}.json").write_text(json.dumps(res, indent=2) + "\n")
            if res.get("plots"):
                _draw(res["plots"], Path(out) / f"{i}.png")
        if not as_json:
            Console(width=None if sys.stdout.isatty() else 140).print(_table(res))
    if report:
        write_into(out)
    tally = summary(results)
    if as_json:
        click.echo(json.dumps(results[0] if len(results) == 1 else {"cases": results, "summary": tally}))
    elif len(results) > 1:
        click.echo(summary_line(tally))


def summary(results: list[dict]) -> dict[str, int]:
    """How the compared figures of ``results`` came out: within their
    tolerance, outside it with the difference explained
    (``known_difference``, docs/validation.md), or outside it unexplained."""
    rows = [m for r in results for m in r["metrics"] if m.get("within") is not None]
    return {"cases": len(results), "compared": len(rows),
            "within": sum(1 for m in rows if m["within"]),
            "known_misses": sum(1 for m in rows if not m["within"] and m.get("known_difference")),
            "unexpected": sum(1 for m in rows if not m["within"] and not m.get("known_difference"))}


def summary_line(t: dict[str, int]) -> str:
    return (f"{t['cases']} cases, {t['compared']} figures compared with a published value: {t['within']} within tolerance, "
            f"{t['known_misses']} known misses (docs/validation.md), {t['unexpected']} unexpected")
