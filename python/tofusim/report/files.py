"""Writes a run's results into a directory: results.json, CSV files and plots."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any


def write_run(result: dict[str, Any], out: Path, samples: Any = None) -> list[Path]:
    """results.json, timeseries.csv, ports.csv, port_samples.parquet and vc_samples.parquet (the counter
    samples, ``samples``: a :class:`tofusim.samples.CounterSamples`; the JSON names the files), latency.csv
    and PNG plots. Returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    sampled = samples.write(out) if samples else []
    if sampled:
        result["counter_samples"] = {**result.get("counter_samples", {}), "files": [p.name for p in sampled]}
    written = list(sampled)
    ports = result.pop("ports", [])
    p = out / "results.json"
    p.write_text(json.dumps(result, indent=2) + "\n")
    written.append(p)

    ts = result.get("timeseries", [])
    if ts:
        p = out / "timeseries.csv"
        vc_names = sorted(result.get("vc_occupancy", {}))
        with p.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["cycle", "accepted_load", "link_utilization", "packets_delivered", "token_returns", "unblocking_probability", "blocked_token_returns", "blocked_unblocking_probability", *[f"fill_{n}" for n in vc_names]])
            for s in ts:
                fills = s.get("vc_fill", [])
                w.writerow([s["cycle"], s["accepted_load"], s["link_utilization"], s["packets_delivered"], s["token_returns"], s["unblocking_probability"], s.get("blocked_token_returns", 0), s.get("blocked_unblocking_probability", 0.0), *fills])
        written.append(p)
    if ports:
        p = out / "ports.csv"
        with p.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["router", "port", "bytes", "packets", "busy_cycles", "idle_cycles", "depleted_cycles"])
            for r in ports:
                w.writerow([r["router"], r["port"], r["bytes"], r["packets"], r["busy_cycles"], r["idle_cycles"], r["depleted_cycles"]])
        written.append(p)
    dist = result.get("latency_distribution", [])
    if dist:
        p = out / "latency.csv"
        with p.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["latency_cycles", "packets"])
            w.writerows(dist)
        written.append(p)
    written += plot_run(result, out)
    return written


def write_steps(steps: dict[str, Any], path: Path) -> None:
    """A collective's steps and their finish cycles (``tofusim.coll(...,
    steps=True)``'s columns) as Parquet: the kinds by name, the peer and
    finish cycle empty where there is none."""
    import pandas as pd

    kinds = steps["kinds"]
    frame = pd.DataFrame({
        "rank": pd.array(steps["rank"], dtype="uint32"),
        "node": pd.array(steps["node"], dtype="uint32"),
        "step": pd.array(steps["step"], dtype="uint32"),
        "kind": pd.Categorical.from_codes(steps["kind"], categories=kinds),
        "peer": pd.array(steps["peer"], dtype="UInt32"),
        "bytes": pd.array(steps["bytes"], dtype="uint64"),
        "finish_cycle": pd.array(steps["finish_cycle"], dtype="UInt64"),
    })
    frame.to_parquet(path, index=False)


def plot_run(result: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    ts = result.get("timeseries", [])
    if ts:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        x = [s["cycle"] for s in ts]
        ax.plot(x, [s["link_utilization"] for s in ts], label="link utilisation")
        ax.plot(x, [s["accepted_load"] for s in ts], label="accepted load")
        if any(s["token_returns"] for s in ts):
            ax.plot(x, [s["unblocking_probability"] for s in ts], label="unblocking probability", alpha=0.7)
        ax.set_xlabel("cycle")
        ax.set_ylim(bottom=0)
        ax.legend(loc="best", fontsize=8)
        ax.set_title("throughput over time")
        fig.tight_layout()
        p = out / "timeseries.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        files.append(p)
    dist = result.get("latency_distribution", [])
    if dist:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.bar([d[0] for d in dist], [d[1] for d in dist], width=(dist[1][0] - dist[0][0]) if len(dist) > 1 else 1.0, align="edge")
        ax.set_xlabel("latency (cycles)")
        ax.set_ylabel("packets")
        ax.set_title("latency distribution")
        fig.tight_layout()
        p = out / "latency.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        files.append(p)
    return files
