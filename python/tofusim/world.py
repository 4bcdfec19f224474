"""The world-systems network table of the TofuD paper ([S:000]; the [DER]
conventions of docs/sources.md, Tofu topology and rates).

Total injection bandwidth, bisection bandwidth (both directions) and their
ratio, computed from the presets beside the published values. The K
computer's virtual 3D torus row is a torus of the virtual shape at the K
link rate with the K node interfaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import topo, topo_toml

#: Published values: injection PB/s, bisection TB/s, ratio ("NX"). [S:000]
PUBLISHED: dict[str, tuple[float, float, float | None]] = {
    "k": (1.66, 46.0, 36.0),
    "k-virtual": (1.66, 34.0, None),  # the paper gives no ratio for this row
    "bgq": (1.97, 49.0, 40.0),
    "taihulight": (0.51, 70.0, 7.3),
    "piz-daint": (0.07, 36.0, 2.0),
    "summit": (0.12, 115.0, 1.0),
    "oakforest-pacs": (0.10, 102.0, 1.0),
}

DEFAULT_SYSTEMS = ["k", "bgq", "taihulight", "piz-daint", "summit", "oakforest-pacs"]
DEFAULT_VIRTUAL = "48x36x48"


@dataclass
class Row:
    system: str
    nodes: int
    injection_Bps: float
    bisection_Bps: float
    published: tuple[float, float, float | None] | None
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.injection_Bps / self.bisection_Bps if self.bisection_Bps else float("inf")

    def as_json(self) -> dict[str, Any]:
        pub = self.published
        return {
            "system": self.system,
            "nodes": self.nodes,
            "injection_bandwidth_Bps": self.injection_Bps,
            "bisection_bandwidth_Bps": self.bisection_Bps,
            "ratio": self.ratio,
            "published": None if pub is None else {"injection_Bps": pub[0] * 1e15, "bisection_Bps": pub[1] * 1e12, "ratio": pub[2]},
            "note": self.note,
        }


def virtual_row(base: str, shape: str) -> Row:
    """A virtual torus of ``shape`` embedded in ``base``'s nodes and links."""
    m = topo(base)
    lengths = [int(x) for x in shape.lower().split("x")]
    link = min(m["link_bandwidth_Bps"].values())
    per_node = m["injection_per_node_Bps"]
    text = (
        "[network]\ntopology = \"torus\"\n"
        f"shape = {lengths}\nlink_bandwidth = {link}\nnic_interfaces = 1\nnic_bandwidth = {per_node}\n"
    )
    v = topo_toml(text, f"<virtual {shape}>")
    note = "" if v["nodes"] == m["nodes"] else f"uses {v['nodes']} of {m['nodes']} nodes"
    # The published row is the paper's virtual torus (DEFAULT_VIRTUAL); another
    # shape has no published value.
    pub = PUBLISHED.get(f"{base}-virtual") if base == "k" and lengths == [int(x) for x in DEFAULT_VIRTUAL.split("x")] else None
    return Row(f"{base} virtual {shape}", v["nodes"], v["injection_bandwidth_Bps"], v["bisection_bandwidth_Bps"], pub, note)


def rows(systems: list[str] | None = None, virtual: str | None = DEFAULT_VIRTUAL) -> list[Row]:
    out = []
    for s in systems or DEFAULT_SYSTEMS:
        m = topo(s)
        out.append(Row(s, m["nodes"], m["injection_bandwidth_Bps"], m["bisection_bandwidth_Bps"], PUBLISHED.get(s)))
        if s.split(":")[0] == "k" and virtual:
            out.append(virtual_row(s, virtual))
    return out
