"""The network as the report draws it: the simulator's layout (every
router's place, every port's link, from :func:`tofusim.network_layout`) and the
cells of a heat map laid out on the topology.

A :class:`CellMap` places items — links, or nodes — into the cells of one
or more panels, each a grid of rows × columns, repeated over *planes* that a
slider chooses between:

- torus and mesh: the plane of the first two axes, one plane per value of
  the others (a slider over z); nodes sit on even rows and columns, the
  link between two neighbours on the cell between them, and a node's own
  cell shows its links out of the plane;
- Tofu: XYZ × ABC — the X × Y plane of 12-node ABC blocks (columns A, C;
  rows B), one plane per Z, a panel for the XYZ links and one for ABC;
- dragonfly: the routers of each group (a row per group) with their local
  links, and the group × group matrix of global links;
- fat-tree: a row per switch level and direction (up, down), a column per
  switch.

Several items in one cell show their maximum; the hover text names them
all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import ConfigError, network_layout


@dataclass
class Network:
    """The simulator's layout of a system: ``routers`` (label, coordinates,
    group or level, index) and ``links`` (one row per connected port)."""

    kind: str
    system: str
    axes: list[str]
    shape: list[int]
    nodes: int
    nodes_per_router: int
    groups: int
    levels: int
    routers: pd.DataFrame
    links: pd.DataFrame
    #: Routers that failed with their node (``network.faults``).
    failed_routers: list[int] = field(default_factory=list)

    @classmethod
    def of_system(cls, name: str) -> Network:
        """The layout of a system name as ``tofusim coll --system`` takes it."""
        return cls.from_dict(network_layout(name))

    @classmethod
    def of_toml(cls, text: str, file: str) -> Network:
        """The layout of the ``[network]`` table of a system or experiment file."""
        return cls.from_dict(network_layout(text=text, file=file))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Network:
        r = d["routers"]
        routers = pd.DataFrame({"label": r["label"], "group": r["group"], "index": r["index"]})
        for k, name in enumerate(d["axes"]):
            routers[name] = [c[k] for c in r["coords"]]
        links = pd.DataFrame(d["links"])
        links["router_label"] = routers["label"].to_numpy()[links["router"].to_numpy()] if len(links) else []
        links["neighbor_label"] = routers["label"].to_numpy()[links["neighbor"].to_numpy()] if len(links) else []
        return cls(kind=d["kind"], system=d["system"], axes=d["axes"], shape=d["shape"], nodes=int(d["nodes"]),
                   nodes_per_router=int(d["nodes_per_router"]), groups=int(d["groups"]), levels=int(d["levels"]),
                   routers=routers, links=links, failed_routers=list(d["failed_routers"]))

    def link_index(self, router: np.ndarray, port: np.ndarray) -> np.ndarray:
        """The row in :attr:`links` of each (router, port name) counter
        record (-1 for a port the layout does not have)."""
        key = pd.MultiIndex.from_arrays([self.links["router"].to_numpy(), self.links["port"].to_numpy()])
        return key.get_indexer(pd.MultiIndex.from_arrays([np.asarray(router), np.asarray(port, dtype=object)]))

    def link_names(self) -> list[str]:
        """``(1,2,0) x+ → (2,2,0)`` for every link, ``(failed)`` after a
        link that starts or ends at a failed router."""
        failed = set(self.failed_routers)
        return [f"{a} {p} → {b}" + (" (failed)" if r in failed or w in failed else "")
                for a, p, b, r, w in zip(self.links["router_label"], self.links["label"], self.links["neighbor_label"],
                                         self.links["router"], self.links["neighbor"])]


@dataclass
class Panel:
    """One grid of a heat map."""

    title: str
    rows: int
    cols: int
    x_title: str = ""
    y_title: str = ""
    #: Tick positions and their texts, per axis.
    x_ticks: tuple[list[float], list[str]] = ([], [])
    y_ticks: tuple[list[float], list[str]] = ([], [])


@dataclass
class CellMap:
    """Items (links or nodes) placed in the cells of panels × planes."""

    panels: list[Panel]
    #: Labels of the planes the plane slider chooses (one: no slider).
    planes: list[str]
    plane_title: str
    #: Per item, its cell (``cell_id``), or -1 if it is not drawn.
    cell: np.ndarray
    #: How to read the picture, one sentence.
    legend: str
    #: Offsets of each panel's cells in the flat numbering.
    base: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.base:
            b, total = [], 0
            for p in self.panels:
                b.append(total)
                total += len(self.planes) * p.rows * p.cols
            self.base = b

    @property
    def cells(self) -> int:
        return sum(len(self.planes) * p.rows * p.cols for p in self.panels)

    def cell_id(self, panel: int, plane: int | np.ndarray, row: int | np.ndarray, col: int | np.ndarray) -> Any:
        p = self.panels[panel]
        return self.base[panel] + (np.asarray(plane) * p.rows + np.asarray(row)) * p.cols + np.asarray(col)

    def reduce(self, values: np.ndarray) -> np.ndarray:
        """The cells' values: the maximum of their items' (NaN where none)."""
        out = np.full(self.cells, np.nan)
        drawn = self.cell >= 0
        np.fmax.at(out, self.cell[drawn], np.asarray(values, dtype=float)[drawn])
        return out

    def split(self, flat: np.ndarray) -> list[np.ndarray]:
        """A flat cell array as one (planes, rows, cols) array per panel."""
        return [flat[b:b + len(self.planes) * p.rows * p.cols].reshape(len(self.planes), p.rows, p.cols)
                for b, p in zip(self.base, self.panels)]

    def hover(self, names: list[str]) -> list[np.ndarray]:
        """Per panel, the names of the items in each cell (joined by line breaks)."""
        texts: list[list[str]] = [[] for _ in range(self.cells)]
        for name, c in zip(names, self.cell):
            if c >= 0:
                texts[c].append(name)
        flat = np.array(["<br>".join(t) for t in texts], dtype=object)
        return self.split(flat)


def _plane_labels(net: Network, plane_axes: list[int]) -> tuple[list[str], np.ndarray]:
    """The labels of the planes over ``plane_axes`` and each router's plane."""
    if not plane_axes:
        return [""], np.zeros(len(net.routers), dtype=int)
    lengths = [net.shape[a] for a in plane_axes]
    index = np.zeros(len(net.routers), dtype=int)
    for a, length in zip(reversed(plane_axes), reversed(lengths)):
        index = index * length + net.routers[net.axes[a]].to_numpy()
    names = ",".join(net.axes[a] for a in plane_axes)
    labels = []
    for k in range(int(np.prod(lengths))):
        coords, rest = [], k
        for length in lengths:
            coords.append(rest % length)
            rest //= length
        labels.append(f"{names}={','.join(map(str, coords))}")
    return labels, index


def _coord_ticks(length: int, name: str, step: int) -> tuple[list[float], list[str]]:
    every = max(1, length // 16)
    return [float(step * c) for c in range(0, length, every)], [f"{name}={c}" for c in range(0, length, every)]


def torus_links(net: Network) -> CellMap:
    """Links of a torus or mesh on the plane of its first two axes."""
    ax0, ax1 = 0, (1 if len(net.axes) > 1 else None)
    l0, l1 = net.shape[0], (net.shape[1] if ax1 is not None else 1)
    planes, plane_of = _plane_labels(net, list(range(2, len(net.axes))))
    panel = Panel("links", rows=2 * l1 if ax1 is not None else 1, cols=2 * l0, x_title=net.axes[0], y_title=net.axes[1] if ax1 is not None else "",
                  x_ticks=_coord_ticks(l0, net.axes[0], 2), y_ticks=_coord_ticks(l1, net.axes[1], 2) if ax1 is not None else ([0.0], [""]))
    cm = CellMap([panel], planes, ",".join(net.axes[2:]), np.full(len(net.links), -1), "")
    r = net.links["router"].to_numpy()
    w = net.links["neighbor"].to_numpy()
    c0 = net.routers[net.axes[0]].to_numpy()
    c1 = net.routers[net.axes[1]].to_numpy() if ax1 is not None else np.zeros(len(net.routers), dtype=int)
    axis_of = {name: k for k, name in enumerate(net.axes)}
    for i, (cls, label) in enumerate(zip(net.links["class"], net.links["label"])):
        a = axis_of[cls]
        here, there = r[i], w[i]
        if a in (ax0, ax1):
            own = (c0 if a == ax0 else c1)
            # The link between coordinates c and c+1 sits on cell 2c+1: a
            # '+' port's from its own coordinate, a '-' port's from its
            # neighbour's (so both directions share the cell).
            lo = own[here] if label.endswith("+") else own[there] if label.endswith("-") else min(own[here], own[there])
            row, col = (2 * c1[here], 2 * lo + 1) if a == ax0 else (2 * lo + 1, 2 * c0[here])
        else:
            row, col = 2 * c1[here], 2 * c0[here]
        cm.cell[i] = cm.cell_id(0, plane_of[here], row, col)
    out = ", ".join(net.axes[2:])
    cm.legend = ("Each node is a cell on even rows and columns; the cell between two neighbours is the link between them "
                 "(the busier of its two directions)" + (f"; a node's own cell is its busiest link out of the plane ({out})." if out else "."))
    return cm


#: A Tofu node's place in its 12-node ABC block: column a + 2c, row b.
TOFU_BLOCK = (4, 3)


def _tofu_place(net: Network) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Row, column and plane of every Tofu router: X × Y blocks of ABC
    (4 columns × 3 rows, a gap between blocks), a plane per Z."""
    rt = net.routers
    bw, bh = TOFU_BLOCK
    col = rt["x"].to_numpy() * (bw + 1) + rt["a"].to_numpy() + 2 * rt["c"].to_numpy()
    row = rt["y"].to_numpy() * (bh + 1) + rt["b"].to_numpy()
    planes, plane_of = _plane_labels(net, [2])
    return row, col, planes, plane_of


def _tofu_panel(net: Network, title: str) -> Panel:
    bw, bh = TOFU_BLOCK
    lx, ly = net.shape[0], net.shape[1]
    return Panel(title, rows=ly * (bh + 1) - 1, cols=lx * (bw + 1) - 1, x_title="X (each block: columns a, c)", y_title="Y (each block: rows b)",
                 x_ticks=_coord_ticks(lx, "x", bw + 1), y_ticks=_coord_ticks(ly, "y", bh + 1))


def tofu_links(net: Network) -> CellMap:
    """Tofu links: each node's busiest XYZ link and busiest ABC link."""
    row, col, planes, plane_of = _tofu_place(net)
    cm = CellMap([_tofu_panel(net, "XYZ links"), _tofu_panel(net, "ABC links")], planes, "z", np.full(len(net.links), -1),
                 "Each cell is a node, in X × Y blocks of its 12-node ABC group; its colour is its busiest link "
                 "of the panel's axes (XYZ between groups, ABC within one).")
    r = net.links["router"].to_numpy()
    panel = np.where(net.links["class"].isin(["x", "y", "z"]).to_numpy(), 0, 1)
    for p in (0, 1):
        m = panel == p
        cm.cell[m] = cm.cell_id(p, plane_of[r[m]], row[r[m]], col[r[m]])
    return cm


def dragonfly_links(net: Network) -> CellMap:
    """Dragonfly links: local links by router (a row per group) and the
    group × group matrix of global links."""
    per_group = int(net.routers["index"].max()) + 1
    global_class = "rank-3" if "rank-3" in set(net.links["class"]) else "global"
    g = net.groups
    ticks = _coord_ticks(g, "group", 1)
    panels = [Panel("local links by router", rows=g, cols=per_group, x_title="router in group", y_title="group", y_ticks=ticks),
              Panel("global links: group → group", rows=g, cols=g, x_title="to group", y_title="from group", x_ticks=ticks, y_ticks=ticks)]
    cm = CellMap(panels, [""], "", np.full(len(net.links), -1),
                 "Left: each router (a row per group), coloured by its busiest link within the group; "
                 "right: the busiest global link from each group to each other.")
    r = net.links["router"].to_numpy()
    w = net.links["neighbor"].to_numpy()
    group = net.routers["group"].to_numpy()
    index = net.routers["index"].to_numpy()
    is_global = (net.links["class"] == global_class).to_numpy()
    cm.cell[~is_global] = cm.cell_id(0, 0, group[r[~is_global]], index[r[~is_global]])
    cm.cell[is_global] = cm.cell_id(1, 0, group[r[is_global]], group[w[is_global]])
    return cm


def fattree_links(net: Network) -> CellMap:
    """Fat-tree links: a row per level and direction, a column per switch."""
    rt = net.routers
    width = int(rt["index"].max()) + 1
    # Row 0 is drawn at the bottom: the leaves' up links there, the top level's down links at the top.
    rows = [(lv, d) for lv in range(net.levels) for d in ("down", "up")]
    present = {(int(lv), c) for lv, c in zip(rt["group"].to_numpy()[net.links["router"].to_numpy()], net.links["class"])}
    rows = [x for x in rows if x in present]
    panel = Panel("switch links by level", rows=len(rows), cols=width, x_title="switch in level", y_title="level",
                  y_ticks=([float(i) for i in range(len(rows))], [f"level {lv} {d}" for lv, d in rows]))
    cm = CellMap([panel], [""], "", np.full(len(net.links), -1),
                 "Each switch is a column of its level (level 0: the leaves); its up and down rows show its busiest up and down link.")
    row_of = {x: i for i, x in enumerate(rows)}
    r = net.links["router"].to_numpy()
    for i, c in enumerate(net.links["class"]):
        cm.cell[i] = cm.cell_id(0, 0, row_of[(int(rt["group"].iat[r[i]]), c)], int(rt["index"].iat[r[i]]))
    return cm


def link_cells(net: Network) -> CellMap:
    """The heat-map cells of the links of ``net``'s topology."""
    return {"torus": torus_links, "mesh": torus_links, "tofu": tofu_links, "dragonfly": dragonfly_links,
            "fattree": fattree_links}[net.kind](net)


def node_cells(net: Network) -> CellMap:
    """The cells of every node, on the same layout as the links: torus
    nodes on the plane of the first two axes, Tofu nodes in their ABC
    blocks, a dragonfly's by group (a row each), a fat-tree's by leaf
    switch (a column each)."""
    nodes = np.arange(net.nodes)
    router = nodes // max(net.nodes_per_router, 1)
    if net.kind in ("torus", "mesh"):
        planes, plane_of = _plane_labels(net, list(range(2, len(net.axes))))
        l0, l1 = net.shape[0], (net.shape[1] if len(net.shape) > 1 else 1)
        c0 = net.routers[net.axes[0]].to_numpy()
        c1 = net.routers[net.axes[1]].to_numpy() if len(net.axes) > 1 else np.zeros(len(net.routers), dtype=int)
        panel = Panel("nodes", rows=l1, cols=l0, x_title=net.axes[0], y_title=net.axes[1] if len(net.axes) > 1 else "",
                      x_ticks=_coord_ticks(l0, net.axes[0], 1), y_ticks=_coord_ticks(l1, net.axes[1], 1) if len(net.axes) > 1 else ([0.0], [""]))
        cm = CellMap([panel], planes, ",".join(net.axes[2:]), np.zeros(0, dtype=int), "Each cell is a node.")
        cm.cell = cm.cell_id(0, plane_of[router], c1[router], c0[router])
        return cm
    if net.kind == "tofu":
        row, col, planes, plane_of = _tofu_place(net)
        cm = CellMap([_tofu_panel(net, "nodes")], planes, "z", np.zeros(0, dtype=int), "Each cell is a node, in X × Y blocks of its ABC group.")
        cm.cell = cm.cell_id(0, plane_of[router], row[router], col[router])
        return cm
    if net.kind == "dragonfly":
        per_group = (int(net.routers["index"].max()) + 1) * net.nodes_per_router
        panel = Panel("nodes by group", rows=net.groups, cols=per_group, x_title="node in group", y_title="group",
                      y_ticks=_coord_ticks(net.groups, "group", 1))
        cm = CellMap([panel], [""], "", np.zeros(0, dtype=int), "Each cell is a node; a row per group.")
        group = net.routers["group"].to_numpy()
        cm.cell = cm.cell_id(0, 0, group[router], net.routers["index"].to_numpy()[router] * net.nodes_per_router + nodes % net.nodes_per_router)
        return cm
    leaves = int(router.max()) + 1 if len(router) else 0
    panel = Panel("nodes by leaf switch", rows=net.nodes_per_router, cols=leaves, x_title="leaf switch", y_title="node on the switch")
    cm = CellMap([panel], [""], "", np.zeros(0, dtype=int), "Each cell is a node; a column per leaf switch.")
    cm.cell = cm.cell_id(0, 0, nodes % net.nodes_per_router, router)
    return cm


def network_of(system: str | None = None, toml: str | None = None, file: str = "<string>") -> Network:
    """The layout of a system name or of TOML text, or a ConfigError."""
    if toml is not None:
        return Network.of_toml(toml, file)
    if system is None:
        raise ConfigError("no system to lay out")
    return Network.of_system(system)
