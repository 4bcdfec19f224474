"""Blue Gene/L broadcasts with deposit packets: line fill (B14) and plane
fill (B15)."""

from __future__ import annotations

from typing import Any

from .bgl import _C, _bgl, _run

LINK_MBps = 175.0


def _fill(pattern: str, shape: str, message: str, turn_cycles: int) -> dict[str, Any]:
    return _run(_bgl(shape, workload={"pattern": pattern, "message_bytes": message, "turn_cycles": turn_cycles}))


# Corner-turn time of the node's software per packet: read 256 bytes from a
# reception FIFO and write them to an injection FIFO, about 200 CPU cycles at
# 700 MHz = 50 network cycles [MEM estimate, not from the source].
TURN_CYCLES = 50


def line_fill(scale: str) -> dict[str, Any]:
    from . import metric

    shape, message = ("8x8x8", "240KiB") if scale == "full" else ("8x8x2", "30KiB")
    r = _fill("line-fill", shape, message, TURN_CYCLES)
    b = r["broadcast"]
    return {
        "metrics": [metric("line fill: fraction of the peak of the 2 incoming links", "fraction", b["fraction_of_peak"], 0.99, 0.0, lower_bound=True)],
        "setup": {"network": f"bgl:{shape}", "lines": "every x ring at once", "message_bytes_per_node": message, "colours": "x+ and x-", "completion_cycles": r["completion_cycles"], "deposits": b["deposits"]},
    }


def plane_fill(scale: str) -> dict[str, Any]:
    from . import metric

    shape, message = ("8x8x8", "60KiB") if scale == "full" else ("8x8x2", "15KiB")
    r = _fill("plane-fill", shape, message, TURN_CYCLES)
    b = r["broadcast"]
    # Payload per node: the fraction of the 4 links' payload rate with full
    # packets (240 of 270 byte-times).
    mbps = b["fraction_of_peak"] * 4 * LINK_MBps * 240 / 270
    return {
        "metrics": [
            metric("plane fill: fraction of the peak of the 4 incoming links", "fraction", b["fraction_of_peak"], 0.96, 0.0, lower_bound=True),
            metric("plane fill: payload received per node", "MB/s", mbps, 585.0, 0.0, lower_bound=True),
        ],
        "setup": {
            "network": f"bgl:{shape}",
            "planes": "every xy plane at once",
            "message_bytes_per_node": message,
            "colours": "x+ then y+, x- then y-, y+ then x+, y- then x-",
            "turn_cycles": TURN_CYCLES,
            "completion_cycles": r["completion_cycles"],
            "published_formula": "175 MB/s x 4 links x 0.87 x 0.96 = 585 MB/s; ours uses 240/270 = 0.889 for the payload share",
        },
    }


CASES = [
    _C("bgl-line-fill", "B14: line fill (row broadcast with deposit packets, both directions)", line_fill),
    _C("bgl-plane-fill", "B15: plane fill (deposit packets, corner turns by software)", plane_fill),
]
