"""Job mixes on one machine (issue 39; docs/jobs.md): how much the
allocation policy costs each job, on a Tofu machine (rectangles against
random nodes), an Aries dragonfly (group-compact, group-spread and random
placement, minimal and adaptive routing) and a tapered fat-tree
(leaf-compact against random). No source publishes these numbers: they
are the model's own results, stated as such."""

from __future__ import annotations

from typing import Any

from .. import jobs
from .case import case_maker

SOURCE = "the model's own results (no published counterpart): job mixes placed by allocation policies ([S:003] for Tofu's rectangles)"


def _mix(system: str, placement: str, jobs_toml: str) -> dict[str, Any]:
    return jobs(f'system = "{system}"\nplacement = "{placement}"\n{jobs_toml}', f"<{system} {placement}>")


def _three(nodes: int, shape: str | None, alltoall: str, pattern: str, allreduce: str) -> str:
    """An all-to-all, random messages and an allreduce of `nodes` each."""
    where = f'shape = "{shape}"' if shape else f"nodes = {nodes}"
    return (f'[[job]]\nname = "alltoall"\nkind = "collective"\nop = "alltoall"\nalgo = "pairwise"\nsize = "{alltoall}"\n{where}\n'
            f'[[job]]\nname = "random"\nkind = "pattern"\nbytes = "{pattern}"\nmessages = 8\n{where}\n'
            f'[[job]]\nname = "allreduce"\nkind = "collective"\nop = "allreduce"\nalgo = "ring"\nsize = "{allreduce}"\n{where}\n')


#: Per scale: (system, nodes per job, the Tofu shape, all-to-all block, pattern message, allreduce vector).
STUDIES = {
    "reduced": {"tofu": ("k:2x3x2", 48, "4x6x2", "4KiB", "16KiB", "1MiB"),
                "aries": ("aries-720", 96, None, "1KiB", "8KiB", "64KiB"),
                "fattree": ("taihulight:4", 256, None, "4KiB", "64KiB", "4MiB")},
    "full": {"tofu": ("k:4x6x4", 288, "8x6x6", "4KiB", "64KiB", "4MiB"),
             "aries": ("aries-720", 240, None, "2KiB", "16KiB", "256KiB"),
             "fattree": ("taihulight:8", 512, None, "4KiB", "64KiB", "4MiB")},
}


def job_mixes(scale: str) -> dict[str, Any]:
    from . import metric

    rows, setups, curves = [], [], {}
    s = STUDIES[scale]

    def study(label: str, system: str, policies: list[str], mix: str) -> dict[str, dict[str, Any]]:
        out = {}
        for p in policies:
            r = _mix(system, p, mix)
            out[p] = r
            setups.append({"study": label, "system": system, "placement": p, "wall_seconds": r["wall_seconds"],
                           "jobs": [{k: j[k] for k in ("name", "what", "placed", "alone_us", "in_mix_us", "slowdown", "links_shared", "links_used")} for j in r["jobs"]]})
            curves[f"{label}: {p}"] = [(i, j["slowdown"]) for i, j in enumerate(r["jobs"])]
            for j in r["jobs"]:
                rows.append(metric(f"{label}, {p}: {j['name']} slowdown in the mix", "ratio", j["slowdown"], None, None, unpublished=True))
                rows.append(metric(f"{label}, {p}: {j['name']} links shared with other jobs", "links", j["links_shared"], None, None, unpublished=True))
        return out

    system, nodes, shape, a2a, pat, ar = s["tofu"]
    tofu = study(f"K {system}", system, ["tofu-rect", "random"], _three(nodes, shape, a2a, pat, ar))
    # What the rectangles promise (tests/test_jobs.py holds it): no link
    # shared, every job exactly as fast as alone.
    rect = tofu["tofu-rect"]["jobs"]
    rows.append(metric(f"K {system}, tofu-rect: links shared between jobs (all jobs)", "links", sum(j["links_shared"] for j in rect), None, None, unpublished=True))
    rows.append(metric(f"K {system}, tofu-rect: worst slowdown", "ratio", max(j["slowdown"] for j in rect), None, None, unpublished=True))
    system, nodes, _, a2a, pat, ar = s["aries"]
    for routing in ("minimal", "adaptive-prefer-minimal"):
        study(f"Aries {system}/{routing}", f"{system}/{routing}", ["group-compact", "group-spread", "random"], _three(nodes, None, a2a, pat, ar))
    system, nodes, _, a2a, pat, ar = s["fattree"]
    study(f"tapered fat-tree {system}", system, ["leaf-compact", "random"], _three(nodes, None, a2a, pat, ar))
    plot = {"title": "Each job's slowdown in the mix (0 all-to-all, 1 random messages, 2 allreduce) per machine and placement",
            "x": "job", "y": "slowdown", "curves": curves}
    return {"metrics": rows, "setup": {"studies": setups}, "plots": [plot]}


_C = case_maker(SOURCE)

CASES = [_C("job-mixes", "Job mixes: allocation policies and the interference between jobs (model's own results)", job_mixes)]
