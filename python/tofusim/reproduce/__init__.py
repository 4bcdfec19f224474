"""The published results, measured beside the published values.

Each case builds experiment files, runs them on the engine and reports
metrics in the reproduction shape:
``{"case", "title", "source", "metrics": [{"name", "unit", "measured",
"published", "tolerance", "within"}], "setup"}``, and optionally
``"plots"`` (curves the CLI draws into CASE.png with ``--out``). ``published`` is ``None``
where the figure was withheld from the model's development for a blind
check (docs/sources.md). Cases run at a
reduced scale by default and at the published scale with ``scale="full"``.
"""

from __future__ import annotations

from typing import Any

from .aries import CASES as ARIES_CASES
from .bgl import CASES as BGL_CASES
from .bgl_bubble import CASES as BUBBLE_CASES
from .bgl_fill import CASES as FILL_CASES
from .bgl_hot import CASES as HOT_CASES
from .bgl_link_errors import CASES as LINK_ERROR_CASES
from .case import Case
from .jobs import CASES as JOB_CASES
from .rmatt import CASES as RMATT_CASES
from .tofu import CASES as TOFU_CASES
from .tofu_link_failure import CASES as FAILURE_CASES
from .tofud_slicing import CASES as SLICING_CASES
from .topology import CASES as TOPOLOGY_CASES


CASES: dict[str, Case] = {c.id: c for c in [*BGL_CASES, *BUBBLE_CASES, *HOT_CASES, *FILL_CASES, *LINK_ERROR_CASES, *FAILURE_CASES, *TOFU_CASES, *SLICING_CASES, *RMATT_CASES, *ARIES_CASES, *TOPOLOGY_CASES, *JOB_CASES]}


def metric(name: str, unit: str, measured: float, published: float | None, tolerance: float | None, *, lower_bound: bool = False,
           known_difference: str | None = None, unpublished: bool = False) -> dict[str, Any]:
    """A metric row; ``within`` compares with the tolerance (relative), or as a lower bound.

    ``unpublished`` marks a figure no source publishes (the model's own
    result, e.g. the cost of link errors), as opposed to one withheld from the
    model's development for a blind check. ``known_difference`` explains a figure the model does not reproduce (see
    docs/validation.md); the row still reports ``within`` honestly.
    """
    if published is None or tolerance is None:
        within = None
    elif lower_bound:
        within = measured >= published * (1 - tolerance)
    else:
        within = abs(measured - published) <= tolerance * abs(published)
    row = {"name": name, "unit": unit, "measured": measured, "published": published, "tolerance": tolerance, "within": within,
           "lower_bound": lower_bound}
    if unpublished:
        row["unpublished"] = True
    if known_difference:
        row["known_difference"] = known_difference
    return row


def run_case(case_id: str, scale: str = "reduced") -> dict[str, Any]:
    case = CASES[case_id]
    out = case.run(scale)
    return {"case": case.id, "title": case.title, "source": case.source, "scale": scale, **out}
