"""The Aries collective engine (CE): an allreduce reduced and broadcast by
the NICs, modelled from what Cray's public uGNI interface says about it.

What is public (facts only; no code is taken from these files):

[GNI] Cray's uGNI header ``gni_pub.h`` (GPL v2, "Contains the user
  interface to the GNI", uGNI API revision 0x5c; shipped with Cray's uGNI
  and included by the example below):
  - ``GNI_CE_MAX_CHILDREN`` = 32. A *VCE channel* (a virtual collective
    engine in one NIC, ``GNI_CeCreate``) is configured with one parent VCE
    and up to 32 children (``GNI_CeConfigure``; ``GNI_EpSetCeAttr``: each
    child has an index in [0, GNI_CE_MAX_CHILDREN)), each child either a
    process (``GNI_CE_CHILD_PE``, a leaf that posts an operand) or another
    NIC's VCE (``GNI_CE_CHILD_VCE``).
  - The reductions the NIC does (``gni_ce_cmd_type_t``): logical AND, OR,
    XOR; integer ADD; integer MIN / MAX and floating MIN / MAX, each
    returning the lowest or the greatest index; floating ADD. Every one in
    a 64-bit form and a "short" (32-bit) form. No multiply.
  - A CE post carries two 64-bit operands (``first_operand``,
    ``second_operand``); ``GNI_CEMODE_TWO_OP`` uses both for the "single
    operand collective operations ... AND, OR, XOR and ADD"; MIN / MAX
    carry a value and its index. The result (``gni_ce_result_t``) is two
    64-bit words; floating-point exceptions and rounding modes are the
    CE's own (``GNI_CE_FPE_*``, ``GNI_CE_MODE_ROUND_*``).
  - CE traffic has a routing mode (``GNI_CE_MODE_RC_ADAPT``, ``*_HASH``):
    it crosses the network as ordinary packets.
  - A job has at most 4 CE channels per NIC (``GNI_JOB_CTRL_CE0..3_MASK``).
[EX] Cray's uGNI CE example, repository hpc/trinity_net_tests,
  ``src/ce_pmi_example.c`` (Copyright 2013 Cray Inc.): one VCE per node,
  created by the node's lowest rank, with the node's ranks as its PE
  children; the node VCEs joined into a chain or a tree of up to 4
  branches; it refuses a VCE tree when a node has GNI_CE_MAX_CHILDREN or
  more ranks (one child index must stay free for a child VCE); every rank
  posts its operand, then polls ``GNI_CeCheckResult`` on its own result
  buffer — the reduced value comes back to every leaf: reduce up, and
  broadcast down the same tree. The example notes that double ADD may be
  refused (``GNI_RC_ILLEGAL_OP``) by early software releases.
[WP] Alverson, Froese, Kaplan, Roweth, "Cray XC Series Network" (2012):
  "collective combining trees" among Aries' communication mechanisms
  (quoted at http://insidehpc.com/2015/08/cray-xc-series-networking/).
[LF] ofiwg/libfabric issue #3234 (Cray, 2017): "The Aries hardware has a
  built-in collective offloading engine", operations "such as AND, OR, ADD".

Not public: how long a VCE takes to combine its inputs and forward the
result. ``CE_STEP_NS`` stays an assumption ([MEM], 300 ns per VCE each
way, as before issue 23), not fitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ConfigError

#: [GNI] children (PEs and child VCEs) of one VCE channel.
CE_MAX_CHILDREN = 32
#: [GNI] 64-bit operands in one CE post.
CE_OPERANDS_PER_POST = 2
#: [MEM] assumption, not public: a VCE combines its children's operands
#: (going up) or forwards the result to its children (going down).
CE_STEP_NS = 300.0

#: [GNI] the reductions the CE does: op -> the element types it takes.
CE_OPS: dict[str, tuple[str, ...]] = {
    "band": ("int",), "bor": ("int",), "bxor": ("int",),
    "sum": ("int", "float"),
    "min": ("int", "float"), "max": ("int", "float"),
    "minloc": ("int", "float"), "maxloc": ("int", "float"),
}
#: [GNI] operand widths: the "short" (32-bit) and the full (64-bit) commands.
CE_WIDTHS_BYTES = (4, 8)


def values_per_post(op: str) -> int:
    """Values one CE post reduces: two for AND/OR/XOR/ADD
    (``GNI_CEMODE_TWO_OP``), one (with its index) for MIN/MAX."""
    return CE_OPERANDS_PER_POST if op in ("band", "bor", "bxor", "sum") else 1


def check(op: str, dtype: str, width_bytes: int, count: int) -> None:
    """Refuse, naming the key, a reduction the public CE cannot do in one post."""
    if op not in CE_OPS:
        raise ConfigError(f"ce.op: {op!r} is not a reduction of the Aries collective engine; "
                          f"expected one of {', '.join(CE_OPS)} (gni_pub.h gni_ce_cmd_type_t)")
    if dtype not in CE_OPS[op]:
        raise ConfigError(f"ce.type: the Aries collective engine's {op} takes {' or '.join(CE_OPS[op])} operands, not {dtype!r}")
    if width_bytes not in CE_WIDTHS_BYTES:
        raise ConfigError(f"ce.width: {width_bytes}-byte operands; the Aries collective engine takes 4 (short) or 8 bytes")
    if not 1 <= count <= values_per_post(op):
        raise ConfigError(f"ce.count: {count} values; one Aries collective-engine post reduces at most "
                          f"{values_per_post(op)} for {op} (two 64-bit operands, GNI_CEMODE_TWO_OP)")


@dataclass(frozen=True)
class Tree:
    """A CE tree over ``nodes`` nodes: one VCE per node, the node's
    ``ppn`` processes its PE children, node VCEs in a complete
    ``fanout``-ary tree in node order (node i's parent is (i - 1) // fanout)."""

    nodes: int
    ppn: int
    fanout: int
    depth: int  # tree edges between VCEs on the longest root-to-leaf path

    def parent(self, node: int) -> int:
        """The parent node of ``node`` (not the root, node 0)."""
        assert 0 < node < self.nodes
        return (node - 1) // self.fanout

    def children(self, node: int) -> range:
        first = node * self.fanout + 1
        return range(min(first, self.nodes), min(first + self.fanout, self.nodes))

    def level(self, node: int) -> int:
        d = 0
        while node:
            node = self.parent(node)
            d += 1
        return d


def tree(nodes: int, ppn: int) -> Tree:
    """The shallowest tree the public limit allows: every VCE's PE children
    (the node's processes) and VCE children together at most 32, so a node
    VCE takes 32 - ppn child VCEs. Refuses (``ce.ppn``) a node whose
    processes leave no child index for another node's VCE."""
    if nodes < 1:
        raise ConfigError(f"ce.nodes: {nodes}; expected at least one node")
    if ppn < 1:
        raise ConfigError(f"ce.ppn: {ppn}; expected at least one process per node")
    room = CE_MAX_CHILDREN - ppn
    if room < (1 if nodes > 1 else 0):
        most = CE_MAX_CHILDREN - (1 if nodes > 1 else 0)
        raise ConfigError(f"ce.ppn: {ppn} processes per node; a VCE has at most {CE_MAX_CHILDREN} children "
                          f"(GNI_CE_MAX_CHILDREN), so a CE tree over {nodes} nodes takes at most {most} per node")
    fanout = max(room, 1)
    depth, reached, width = 0, 1, 1
    while reached < nodes:
        width *= fanout
        reached += width
        depth += 1
    return Tree(nodes, ppn, fanout, depth)


def allreduce_us(t: Tree, level_net_us: list[float], host_us: float, step_ns: float = CE_STEP_NS) -> float:
    """Time of one CE allreduce: each process hands its operand to its
    NIC and gets the result back (the host/NIC components, ``host_us``);
    going up, every VCE on the path combines once (depth + 1 steps) and
    every tree edge is one network traversal; the result comes down the
    same tree (the same again). ``level_net_us[l]`` is the network time,
    measured on the engine, of the edge from level l + 1 to level l on the
    slowest root-to-leaf path (every VCE waits for all its children, so
    that path sets the time)."""
    assert len(level_net_us) == t.depth
    return host_us + 2 * (t.depth + 1) * step_ns / 1000 + 2 * sum(level_net_us)
