"""The records of a result, generated from the core's result schema
(the Rust types that write each result; ``tofusim._core.result_schema()``)
by tools/gen_records.py: do not edit, run the tool. A test regenerates
this file, so it cannot drift from the core.

Each record is a dict (the JSON object) whose keys are typed attributes:
:class:`~tofusim.record.Key` (always there) or
:class:`~tofusim.record.Maybe` (``None`` when null or absent). The
machinery is :mod:`tofusim.record`.
"""

# ruff: noqa: E501
from __future__ import annotations

from .record import Key, Maybe, Record, _dict, _list, _value, list_of

__all__ = ["BenchFields", "BenchRow", "Binding", "BlockedVc", "BusyResource", "CollectiveFields", "CollectiveSettings", "CriticalPath", "Deadlock", "FaultEvent", "Faults", "FlowRun", "GivenTrees", "InvariantError", "JsqStats", "Latency", "Limits", "LinkErrors", "LinkLoad", "MpiSoftware", "PacketRun", "PartitionLoad", "Partitions", "PortRecord", "RankTime", "RankTimes", "ReplayFields", "ResourceClass", "Rounds", "RouterSetup", "RunFields", "RunSetup", "Sample", "SamplingInfo", "Segment", "Setup", "SimInfo", "StepTimes", "SubCommunicators", "Key", "Maybe", "Record"]


class Latency(Record):
    """Latency: count, mean, median, 99th percentile and maximum (cycles, or ns in ``latency_ns``)."""

    count = Maybe(int, "(packet engine only)")
    max = Key(float)
    mean = Key(float)
    p50 = Key(float)
    p99 = Key(float)


class PartitionLoad(Record):
    """One partition's share of a split run."""

    busy_seconds = Key(float, "Wall time spent simulating its windows, and at window boundaries exchanging with and waiting for the others.")
    events = Key(int)
    routers = Key(int)
    wait_seconds = Key(float)


class Partitions(Record):
    """How a split run shared the work (absent when it was not split)."""

    event_imbalance = Key(float, "Most events of a partition over the mean (1 = perfectly balanced).")
    how = Key(str, "How the network was cut.")
    partitions = Key(list_of(PartitionLoad))
    processes = Key(int)
    threads_per_process = Key(int)
    window_cycles = Key(int, "The synchronisation window, cycles, and the windows simulated.")
    windows = Key(int)


class SimInfo(Record):
    """What the simulator spent: ``r.sim``."""

    cycles = Maybe(int, "(packet engine only)")
    estimated_memory_bytes = Maybe(int, "The memory the run was checked against before it started, bytes (set by the front door that checked it).")
    estimated_packet_hops = Maybe(int, "The work estimated before it started, packet-hops. (packet engine only)")
    events = Maybe(int, "(packet engine only)")
    packet_hops = Maybe(int, "(packet engine only)")
    partitions = Maybe(Partitions, "Window length and count, and per-partition load of a split run. (packet engine only)")
    peak_memory_bytes = Key(int)
    simulated_us_per_wall_second = Maybe(float, "Simulated network time per wall second, microseconds. (packet engine only)")
    wall_seconds = Key(float)
    flows = Maybe(int, "Flows (route parts) and max-min solves. (flow model only)")
    solves = Maybe(int, "(flow model only)")


class SamplingInfo(Record):
    """What a run sampled and how much (``counter_samples`` in the result's JSON): the rows themselves are in the columns, written to Parquet."""

    period_cycles = Key(int, "The period of the samples kept: doubled for each halving of a long run's samples, cycles.")
    port_rows = Key(int, "Rows of the port and the VC samples.")
    requested_period_cycles = Key(int, "The period asked for (``run.counter_period``), cycles.")
    samples = Key(int, "Distinct sample cycles.")
    vc_rows = Key(int)
    files = Maybe(_list, "the Parquet files written (with --out)")


class RouterSetup(Record):
    """The router as run (``setup.router``: docs/experiment.md, ``[router]``)."""

    arbitration = Key(str)
    chunk_bytes = Key(int, "Flow-control unit, bytes (BG/L: 32-byte chunks, one token each).")
    class_vcs = Key(int, "VCs per hop class (escape ``hop-class``; 1 elsewhere): several VCs of one class let a packet pass another blocked on its output.")
    dynamic_vcs = Key(int, "Dynamic (adaptive) VCs per input port.")
    escape = Key(str)
    fifo_select = Key(str)
    hop_latency_cycles = Key(int, "Header latency of one hop: wire and router pipeline, cycles.")
    host_bytes_per_cycle = Maybe(float, "Rate of the host interface feeding all injection FIFOs of a node, bytes per cycle (infinite, null in a result: no limit beyond the FIFOs).")
    injection_fifo_bytes = Key(int, "Capacity of one injection FIFO, bytes.")
    injection_fifos = Key(int, "Normal injection FIFOs (BG/L 6) and high-priority ones (BG/L 2).")
    jsq = Key(bool, "Output choice among free dynamic VCs: JSQ (most downstream tokens) or random.")
    jsq_ranges = Key(int, "Ranges JSQ sees a VC's downstream tokens in (BG/L publishes a 2-bit token range per VC: 4, [S:004]); up to the buffer's tokens, where JSQ sees the exact count.")
    max_packet_bytes = Key(int, "Largest packet, bytes (BG/L: 256). A VC is advertised available only when a packet of this size fits.")
    network_priority = Key(float, "Fraction of sender arbitrations in which in-network packets beat injection.")
    nodes_per_router = Key(int, "Nodes attached to each router (BG/L, Tofu: 1; Aries: 4). Each node has its own injection FIFOs, host interface and send queues; traffic between two nodes of one router turns around inside it.")
    overhead_bytes = Key(int, "Per-packet link overhead, bytes: trailer + ack/token-ack share + idle gap (BG/L 4 + 8 + 2).")
    paths = Key(int, "Receiver → sender transfer paths per input port (BG/L: 2).")
    port_cycles_per_byte = Key(_list, "Per output port index: cycles per byte on that port's links, relative to the reference link that defines the cycle (empty: every link at the reference rate). Aries: rank-3 optical links are slower than the electrical ones.")
    priority_fifos = Key(int)
    priority_vc = Key(bool, "Whether each input has a high-priority VC (bubble rules, dimension order).")
    slq_fraction = Key(float, "Fraction of arbitrations that use SLQ (the rest are random).")
    token_latency_cycles = Key(int, "Delay before a freed buffer's tokens reach the sender, cycles.")
    vc_buffer_bytes = Key(int, "Buffer of one VC, bytes (BG/L: 1 KB).")
    virtual_output_queues = Key(bool, "Virtual output queues (fat-tree switches): the dynamic VC a packet takes at the next switch's input is the output it will leave that switch by (``Routing::output_at``, computed one hop ahead as in lookahead routing), modulo the dynamic VCs; so a packet waiting for a busy output never holds up one bound for another (no head-of-line blocking), as in the VOQ input buffers of InfiniBand-class switches. With ``FifoSelect::Direction`` a node's injection FIFOs are keyed the same way by the output at its leaf.")


class RunSetup(Record):
    """The ``[run]`` table as run (``setup.run``)."""

    audit_cycles = Key(int, "Full invariant audit every this many cycles (0: only at the end).")
    counter_cycles = Key(int, "Period of the per-port counter snapshots, cycles (0: final counters only).")
    cycles = Maybe(int, "Cycles to simulate (open loop), or a cap for finite workloads.")
    deadlock_cycles = Key(int, "A run in which no packet moves for this many cycles while packets are in flight is a deadlock.")
    jsq_statistics = Key(bool, "Count what JSQ's output choices see (the run's ``jsq`` report): a diagnosis, off by default — the count per candidate costs about 2% of the engine's instructions on BG/L.")
    max_live_packets = Maybe(int, "Packets alive at once beyond which the run stops (``budget_exceeded`` in the result): the memory budget's guard against an open-loop source backlog that grows without end past saturation. ``None``: no limit.")
    plant = Maybe(str)
    plant_after = Key(int, "Cycle after which the planted fault strikes.")
    sample_cycles = Key(int, "Length of one time-series window, cycles.")
    seed = Key(int)
    warmup = Key(int, "Cycles excluded from the statistics (open loop).")


class Faults(Record):
    """Failed nodes and links. Nodes are node ids; links are router pairs (each entry removes one link, so one of a 2-ring's parallel pair)."""

    link_ports = Key(_list, "The port of each link at its first router, where the input named one (tori and Tofu: a 2-ring's + and − ports are parallel links to the same neighbour); ``None``: any remaining link between the pair.")
    links = Key(_list)
    nodes = Key(_list)


class FaultEvent(Record):
    """One entry of a failure schedule."""

    cycle = Key(int)
    recovers = Key(bool, "``false``: it fails; ``true``: it recovers.")
    target = Key(_dict)


class Setup(Record):
    """The experiment as run: ``setup`` in a run's result."""

    cycle_ns = Key(float, "Length of one network cycle (a byte time of the reference link), ns.")
    fault_events = Maybe(list_of(FaultEvent), "Failures and recoveries during the run (router ids and ports).")
    faults = Key(Faults, "Failed nodes (ids) and links (router pairs) the run routed around.")
    header_bytes = Key(int)
    hop_latency_ns = Key(float, "Router and link latency of a hop (the router's ``hop_latency_cycles``), ns.")
    injection_links = Key(float, "Links a node injects on at once (its injection bandwidth in link rates).")
    nodes = Key(int)
    packet_bytes = Key(int)
    router = Key(RouterSetup, "The router as run (docs/experiment.md, ``[router]``).")
    routing = Key(str, "The routing as run: a dragonfly's or fat-tree's algorithm by name (their engine mode is \"deterministic\" whatever the algorithm).")
    run = Key(RunSetup, "The ``[run]`` table as run.")
    system = Key(str)
    token_latency_ns = Key(float, "A token's return to the sender, ns.")
    workload = Key(_dict, "The workload as the engine took it (its kind, then its keys).")


class JsqStats(Record):
    """JSQ's measured output choices among two or more free dynamic VCs: how many, the fraction whose best 2-bit token range one candidate held alone (the rest went to the random tie-break), and the candidates compared by range (0: under a quarter of the downstream buffer free, 3: at least three quarters)."""

    candidate_ranges = Key(_list)
    choices = Key(int)
    separated_fraction = Key(float)


class Sample(Record):
    """One time-series window."""

    accepted_load = Key(float, "Delivered packet bytes in the window over the nodes' injection capacity.")
    blocked_token_returns = Key(int, "Token returns to an output at which a packet has waited for tokens since an earlier cycle (the returns that can unblock one).")
    blocked_unblocking_probability = Key(float, "The share of those after which a packet that waited went out on that output in the same cycle: the probability that a token-ack coming back over a link with blocked packets frees one (B8).")
    cycle = Key(int, "End of the window, cycles.")
    link_utilization = Key(float, "Link busy time in the window over link capacity.")
    packets_delivered = Key(int)
    token_returns = Key(int, "Token returns in the window, and those that let a blocked packet go.")
    unblocking_probability = Key(float, "Grants at an output refused for lack of tokens, in the cycle tokens came back to it, over every token return: mostly returns to outputs nothing waits at, whose number follows the throughput.")
    vc_fill = Key(_list, "Mean fill of each VC class at the end of the window (fraction of its buffer).")


class PortRecord(Record):
    """Per output port: the counters of a Tofu PA unit."""

    busy_cycles = Key(int)
    bytes = Key(int)
    depleted_cycles = Key(int, "Cycles in which a packet waited for this port with the link free but too few downstream tokens.")
    idle_cycles = Key(int, "Measured cycles in which the link was not sending.")
    packets = Key(int)
    port = Key(str)
    router = Key(int)


class BlockedVc(Record):
    """``BlockedVc``."""

    port = Key(str)
    router = Key(str)
    used_chunks = Key(int)
    vc = Key(str)


class Deadlock(Record):
    """A stalled network: no packet moved for ``stalled_cycles`` while packets were in flight."""

    blocked_vcs = Key(list_of(BlockedVc), "The VCs of the wait cycle (at most 64).")
    cycle = Key(int)
    detected_by = Key(str, "How it was found: ``watchdog`` (no packet moved for more than ``run.deadlock_cycles``) or ``no-event-left`` (packets wait and nothing can ever happen again: certain at once, before the watchdog).")
    packets_in_flight = Key(int)
    stalled_cycles = Key(int)
    wait_cycle_found = Key(bool, "True when the blocked heads form a cycle of waits (a true deadlock).")
    wait_cycle_length = Key(int)


class InvariantError(Record):
    """An invariant check that failed."""

    cycle = Key(int)
    detail = Key(str)
    kind = Key(str)


class LinkErrors(Record):
    """What the link protocol did over the run (every cycle, warm-up included)."""

    corrupted = Key(int, "Transmissions corrupted and caught by the packet CRC.")
    crc_escapes = Key(int, "Corrupted transmissions the CRC missed (accepted corrupt).")
    crc_mismatch_links = Key(_list, "Links whose two ends' cumulative CRCs disagree at the end of the run (\"router port\"): a corrupted packet passed the packet CRC there.")
    discarded = Key(int, "Transmissions discarded because an earlier packet was corrupted (go-back-N: the receiver accepts packets in sequence only).")
    down_link = Key(int, "Transmissions into a link that was down (a failure during the run): not accepted, sent again at the time-outs until it recovers.")
    duplicate_transmissions = Key(int, "Packet slicing: transmissions in duplicate mode, and the switches between the modes (either way).")
    mode_switches = Key(int)
    retransmissions = Key(int)
    retransmitted_fraction = Key(float, "Retransmissions over all transmissions.")
    timeouts = Key(int)
    transmissions = Key(int, "Packets put on a wire, retransmissions included.")
    trustworthy = Key(bool, "False when some link's CRCs disagree: data the run delivered may be corrupt (the machine restarts from a checkpoint).")
    window_stalls = Key(int, "Times a full retransmission FIFO stopped a link.")


class Binding(Record):
    """The binding resource (``limits.binding``)."""

    busy = Key(float)
    dominant_cause = Key(str, "The cause most of the blocked time went to.")
    kind = Key(str)
    resource_class = Key(str)
    set = Key(str, "The set of resources at the top (\"links into router R\", \"links out of router R\", \"one link\", \"the class\").")


class ResourceClass(Record):
    """One class of resources (the links of an axis or rank, the nodes' host interfaces…) over the measured window."""

    busy_max = Key(float)
    busy_mean = Key(float, "Busy time over the window: mean over the class, and its busiest one.")
    count = Key(int)
    depleted_mean = Key(float, "Links: the share of the window in which a head waited with the link free but too few downstream tokens (mean over the class).")
    kind = Key(str, "\"link\" | \"host-interface\" | \"injection-fifo\".")
    name = Key(str, "The class: a link class (\"X\", \"rank-3\", \"up from L0\"), or the kind.")
    waited_per_cycle = Maybe(float, "Host interfaces: packet-cycles FIFO heads waited for them; FIFOs: packet-cycles a send queue waited for space; per member and cycle (links: ``None``, their waits are only split by cause, globally).")


class BusyResource(Record):
    """One resource of those most busy."""

    busy = Key(float)
    depleted = Maybe(float, "Links: the share of the window a head waited for downstream tokens with the link free.")
    kind = Key(str)
    name = Key(str, "\"router (coords) port\", or the node.")
    port = Maybe(int)
    resource_class = Key(str)
    router = Key(int)
    to_router = Maybe(int, "The router the link leads to.")


class Limits(Record):
    """What limits a run (in the result as ``limits``)."""

    binding = Key(Binding, "The binding resource's kind and class, and the set it is part of (\"the 6 links into router (3,3,3)\", \"every rank-3 link\"…).")
    blocked_cycles = Key(_dict, "Queue-head cycles blocked over the window, by cause (a head is the packet at the front of a VC buffer, FIFO or send queue; packets behind it are not counted), and each cause's share.")
    blocked_per_packet_cycles = Key(float, "Queue-head cycles blocked per packet delivered in the window (the waits of packets at the head of a queue; those behind a head are not counted).")
    blocked_share = Key(_dict)
    busiest = Key(list_of(BusyResource), "The busiest resources, most first (at most 8).")
    classes = Key(list_of(ResourceClass))
    summary = Key(str, "One sentence: the binding resource with its numbers.")


class Segment(Record):
    """One segment of the critical path, cycles."""

    bytes = Key(int)
    end_cycle = Key(int)
    kind = Key(str, "\"transfer\" (from the message's release, after the send overhead, to its arrival: queueing at the TNI and the network) | \"send-overhead\" | \"receive-overhead\" | \"reduction\" | \"copy\" | \"work\".")
    peer = Maybe(int, "The other rank of a transfer (its sender).")
    rank = Key(int, "The rank the segment runs on (the receiver for a transfer).")
    start_cycle = Key(int)
    step = Key(int)


class RankTime(Record):
    """A rank's time split."""

    compute_cycles = Key(int)
    end_cycle = Key(int, "When its last step finished.")
    overhead_cycles = Key(int)
    rank = Key(int)
    waited_most_cycles = Key(int)
    waited_most_for = Maybe(int, "The sender it waited for longest, and how long in all.")
    waiting_cycles = Key(int, "Time its receives waited for messages after they could have run.")


class CriticalPath(Record):
    """What sets a schedule's completion time."""

    by_kind = Key(_dict, "Cycles of the path by segment kind (they add up to ``end_cycle``).")
    end_cycle = Key(int)
    most_waited_for = Maybe(int, "The rank the others waited for longest in all (their receives from it), and the total.")
    most_waited_for_cycles = Key(int)
    ranks_on_path = Key(int)
    segments = Key(list_of(Segment), "The path's segments, first first (at most ``MAX_SEGMENTS``: the last ones, nearest the end, when it is longer).")
    segments_omitted = Key(int)
    slowest_ranks = Key(list_of(RankTime), "The ranks that finished last (at most 8), slowest first.")
    transfers = Key(int, "Transfers on the path, and the distinct ranks it visits.")
    waiting_cycles = Key(int, "Waiting summed over every rank.")


class PacketRun(Record):
    """The packet engine's run of a collective or replay (``c.run``)."""

    complete = Key(bool, "Every step ran (no deadlock, no invariant violation, no interrupt).")
    counter_samples = Maybe(SamplingInfo, "Per-port and per-VC counter samples every ``counter_cycles`` of the run (none unless asked: ``--counter-period``); in JSON their count.")
    critical_path = Maybe(CriticalPath, "The schedule's critical path and each rank's time split (``tofusim_comm::exec::critical_path``).")
    cycle_ns = Key(float)
    cycles = Key(int)
    deadlock = Key(bool)
    interrupted = Key(bool, "Stopped early by Ctrl-C: ``cycles`` and the time are up to then.")
    invariant_error = Maybe(str)
    latency = Key(Latency, "Network latency of the collective's packets (injection to delivery), cycles.")
    latency_distribution = Key(_list, "Packets by latency: (bin's lower bound in cycles, packets).")
    limits = Key(Limits, "What limited the network's part (``tofusim_packet::limits``).")
    link_utilization = Key(float)
    packets_delivered = Key(int)
    wall_seconds = Key(float)


class Rounds(Record):
    """The flow model's rounds form (``flow.rounds``)."""

    copy_seconds = Key(float)
    largest_round = Key(int, "Most messages in one round.")
    latency_seconds = Key(float)
    lockstep_seconds = Key(float, "Every round lasting its slowest message (an upper bound), split into transfers at their shared rates and latency terms; and the local copies.")
    messages = Key(int)
    node_seconds = Key(float, "With several ranks per node, the rounds run among one leader per node: this is each node's fan-in to its leader and fan-out from it through the node's memory, before and after the rounds (included in ``time_seconds``; 0 with a rank per node).")
    one_hop = Key(bool, "Whether every message was one hop (the per-router path).")
    rank_mean_seconds = Key(float)
    rank_min_seconds = Key(float, "The first rank's and the mean rank's finish, seconds (the last rank's is ``time_seconds``); a pipelined form ends every rank with its drain, so these equal it there. Among node leaders: over the nodes, each node's last rank (its leader's finish and the node's fan-in and fan-out).")
    reused = Key(int, "Stretches whose set of routes was solved before (their rates taken from the memo, bit for bit what a new solve gives; the one-hop path's cache of routers of one shape is not counted here).")
    rounds = Key(int)
    solves = Key(int)
    stretches = Key(int, "Stretches of identical rounds, and max-min solves run (whole rounds, or one router's flows on the one-hop path; cached ones not counted).")
    stretches_estimated = Key(bool, "Whether some stretch was too long to follow rank by rank (beyond 3 × 10⁸ message steps) and was taken in one go: a permutation at its cycle mean, anything else bulk-synchronous.")
    time_seconds = Key(float)
    transfer_seconds = Key(float)


class FlowRun(Record):
    """How the flow model timed a collective (``c.flow``)."""

    interrupted = Key(bool, "Stopped by Ctrl-C before the schedule ended: no time is known (``time_seconds`` 0, ``complete`` false).")
    peak_memory_bytes = Key(int)
    rounds = Maybe(Rounds, "The rounds form's figures (the ``flow-rounds`` model).")
    wall_seconds = Key(float)


class CollectiveSettings(Record):
    """The segment and TNIs a collective ran with, each with where it came from: given on the command line, or the algorithm's own definition."""

    algorithm = Key(str, "Why this algorithm: ``given (--algo)``, or the MPI library's rule that chose it when none was named.")
    segment = Key(str)
    segment_bytes = Key(int)
    tnis = Key(int)
    tnis_reason = Key(str)


class GivenTrees(Record):
    """Which given trees a run used: their file and each tree's depth in arcs."""

    depths = Key(_list)
    source = Key(str)


class SubCommunicators(Record):
    """The sub-communicators of a run (``tofusim coll --comm``)."""

    comm = Key(str, "As ``--comm`` spells it (``x``, ``blocks:16``, ``ranks:0-7``).")
    count = Key(int, "How many ran at once.")
    ranks_each = Key(int, "Ranks in each (the largest).")


class StepTimes(Record):
    """Every step of a schedule run on the packet engine and the cycle it finished, as columns (one entry per step, ranks in order, each rank's steps in program order): the progress of the schedule over the network that ``tofusim report`` animates."""

    bytes = Key(_list, "Bytes sent, received or copied (0 for work).")
    finish_cycle = Key(_list, "Cycle the step finished (``None``: it never ran).")
    kind = Key(_list)
    kinds = Key(_list, "Names of the ``kind`` numbers (``STEP_KINDS``).")
    node = Key(_list, "The node the rank runs on.")
    peer = Key(_list, "The other rank of a send or receive (``None`` for local steps).")
    rank = Key(_list)
    step = Key(_list, "The step's index in its rank's program.")


class RankTimes(Record):
    """``RankTimes``."""

    collective_seconds = Key(float)
    compute_seconds = Key(float)
    end_seconds = Key(float)
    node = Key(int)
    point_to_point_seconds = Key(float)
    rank = Key(int)
    waiting_seconds = Key(float)


class LinkLoad(Record):
    """A link and what it carried over the replay."""

    busy_fraction = Maybe(float, "Of the replay's time, the share the link was sending (packet engine).")
    bytes = Key(int, "Bytes on the wire (packet engine: its counters, headers included; flow model: each message's wire bytes over its routes).")
    port = Key(str)
    router = Key(int)


class MpiSoftware(Record):
    """The MPI software a replay models: the system generation's (``crate::generation::Generation::mpi_software``), with any overrides."""

    eager_limit_bytes = Key(int, "Eager messages up to this size; rendezvous above, bytes.")
    native = Key(bool, "False when the profile is not a particular machine's MPI (the generic MPI of a fat-tree or generic dragonfly), or when values were overridden.")
    note = Key(str)
    profile = Key(str, "``fujitsu-mpi-k``, ``fujitsu-mpi-fx100``, ``fujitsu-mpi-fugaku``, ``cray-mpich``, ``bgl-mpi``, ``generic-mpi``, or ``recording-machine``.")


class BenchRow(Record):
    """One row of an IMB table (``r.rows``)."""

    algorithm = Maybe(str, "The algorithm the collective ran with (``None``: point-to-point).")
    bytes = Key(int)
    complete = Key(bool, "Every step ran (false after a deadlock or Ctrl-C).")
    mbytes_per_sec = Maybe(float, "IMB's bandwidth (10⁶ bytes per second) for the point-to-point kernels: the bytes of the messages a rank sends per call over t_max (PingPong: over t). ``None`` for the collectives.")
    packets_delivered = Maybe(int, "Packets that crossed the network (packet engine; messages between ranks of one node move none).")
    repetitions = Key(int, "Calls simulated back to back for the row: IMB's count for the point-to-point kernels (1,000, fewer above 40 KB), one for a collective (``repetitions``).")
    rounds = Key(bool, "Timed as one call in the flow model's lockstep rounds (a full machine: the schedule was too large to list). The collective's network and host costs, without the MPI layer's per-call software; t_min and t_avg are the first and the mean rank's finish (with several ranks per node: over the nodes, each node's last rank).")
    rule = Maybe(str, "Why it ran: the library's rule, or ``given (--algo)``.")
    stands_in_for = Maybe(str, "The library's own algorithm, where tofusim runs a stand-in for it.")
    t_avg_us = Key(float)
    t_max_us = Key(float)
    t_min_us = Key(float, "Over the participating ranks: each rank's time for one call, µs.")


class RunFields(Record):
    """The keys of ``tofusim.run``'s result (packet engine, or the flow model with ``model="flow"``)."""

    accepted_GBps_per_node = Maybe(float, "(packet engine only)")  # noqa: N815 - the unit is in the name
    accepted_load = Key(float)
    budget_exceeded = Maybe(int, "Stopped because more packets were alive than the memory budget allows (an open-loop source backlog past saturation): the packets alive then. (packet engine only)")
    complete = Key(bool)
    completion_cycles = Maybe(int)
    counter_samples = Maybe(SamplingInfo, "PA counter and per-VC samples every ``run.counter_period`` (none when 0). (packet engine only)")
    cycle_ns = Key(float)
    deadlock = Maybe(Deadlock, "(packet engine only)")
    escape_fraction = Maybe(float, "(packet engine only)")
    injection_GBps_per_node = Maybe(float, "A node's injection bandwidth, GB/s (the unit of the loads above: a cycle is one byte-time of a link, ``injection_links`` links per node). (packet engine only)")  # noqa: N815 - the unit is in the name
    interrupted = Key(bool, "Stopped early at the caller's request (Ctrl-C): what is reported was measured up to the last window simulated.")
    invariant_error = Maybe(InvariantError, "(packet engine only)")
    jsq = Maybe(JsqStats, "What JSQ's output choices saw (adaptive routing with JSQ; ``None`` otherwise or without a choice between two candidates). (packet engine only)")
    latency = Key(Latency, "Packet latency (creation to delivery), cycles of ``cycle_ns``.")
    latency_distribution = Maybe(_list, "(packet engine only)")
    latency_ns = Maybe(Latency, "The same in nanoseconds (comparable across systems, whose cycles differ). (packet engine only)")
    limits = Maybe(Limits, "What limited the run: the binding resource in one sentence, blocked time by cause, utilisation by resource class (``crate::limits``). (packet engine only)")
    link_errors = Maybe(LinkErrors, "Link errors and their recovery (``None``: error-free links). (packet engine only)")
    link_utilization = Key(float)
    measured_cycles = Maybe(int, "(packet engine only)")
    offered_GBps_per_node = Maybe(float, "The offered and accepted loads per node in GB/s (mean over all nodes; comparable across systems, whose links differ). (packet engine only)")  # noqa: N815 - the unit is in the name
    offered_load = Maybe(float)
    packets_delivered = Key(int)
    packets_injected = Key(int)
    packets_lost = Maybe(int, "Packets lost on links that failed during the run, and sent again end to end by their sources (0 without a failure schedule). (packet engine only)")
    packets_rerouted = Maybe(int, "Packets sent on a route around a failed node or link (0 on a healthy network). (packet engine only)")
    packets_resent = Maybe(int, "(packet engine only)")
    payload_utilization = Key(float)
    ports = Maybe(list_of(PortRecord), "(packet engine only)")
    sending_fraction = Maybe(float, "Open loop: the fraction of nodes that send (see ``Traffic::sending_fraction``); the load really offered is ``offered_load × sending_fraction``. (packet engine only)")
    setup = Key(Setup)
    sim = Key(SimInfo)
    unblocking_probability = Maybe(float, "Fraction of token returns after which a packet blocked for tokens went. (packet engine only)")
    vc_occupancy = Maybe(_dict, "Mean fill of each VC class over the time series (fraction of the buffer). (packet engine only)")
    vc_traffic = Maybe(_dict, "Packet-hops per VC class in the measured window, and the share on escape VCs. (packet engine only)")
    warmup_cycles = Maybe(int, "(packet engine only)")
    latency_kind = Maybe(str, "(flow model only)")
    model = Maybe(str, "(flow model only)")
    pingpong = Maybe(_dict, "a ping-pong workload's rounds")
    broadcast = Maybe(_dict, "a broadcast workload's result")


class CollectiveFields(Record):
    """The keys of ``tofusim.collective``'s result."""

    algo = Key(str)
    bandwidth_Bps = Key(float, "Size over time (for allgather and alltoall: all the bytes a rank receives, p × size, over time).")  # noqa: N815 - the unit is in the name
    bytes_sent = Key(int)
    communicator_shape = Maybe(_list, "The communicator's torus shape the algorithms saw.")
    communicators = Maybe(SubCommunicators, "Sub-communicators that ran side by side (``--comm``); absent for the world. ``processes`` then counts every rank of the system, and the size, bandwidth, shape and settings are one communicator's.")
    complete = Key(bool, "Every step of the collective ran (false after a deadlock, an invariant violation or Ctrl-C: the time is then not the collective's).")
    fallback = Maybe(str)
    flow = Maybe(FlowRun, "Flow-model statistics of the run (flow models only).")
    messages = Key(int)
    model = Key(str, "The model that timed it: ``packet``, ``flow-events`` or ``flow-rounds``.")
    node_leaders = Key(bool, "Whether ranks sharing a node ran the collective in its node-leader form (fan in through memory, the algorithm among one rank per node, fan out) rather than flat over every rank.")
    op = Key(str)
    placement = Key(str)
    processes = Key(int)
    ranks_per_node = Key(int, "Ranks per node (``--ppn``: with a map, the most a node may hold), and how they were placed: ``block``, ``cyclic`` or ``map``.")
    run = Maybe(PacketRun, "Packet-engine statistics of the run (packet model only).")
    settings = Key(CollectiveSettings, "The segment and TNIs the algorithm ran with, and where each came from (given, or the algorithm's definition).")
    size_bytes = Key(int)
    steps_omitted = Maybe(int, "The schedule's steps when they were asked for but were more than ``MAX_STEP_TIMES`` (none kept).")
    system = Key(str)
    time_seconds = Key(float)
    tnis_used = Key(int)
    trees = Maybe(GivenTrees, "The trees given instead of the built ones (``CollectiveSpec::trees``).")
    verified = Maybe(bool, "``None`` when not asked for (``--verify``).")
    verify_error = Maybe(str)


class BenchFields(Record):
    """The keys of ``tofusim.mpi_bench``'s result."""

    benchmark = Key(str, "The benchmark as IMB names it (``PingPong``, ``Allreduce``, …).")
    interrupted = Key(bool, "Stopped by Ctrl-C before every size ran (the rows are those done).")
    kind = Key(str, "``single-transfer``, ``parallel-transfer`` or ``collective``: which columns IMB prints.")
    library = Key(str, "The MPI library whose rules chose the collective algorithms.")
    model = Key(str)
    mpi_software = Maybe(MpiSoftware, "Whose MPI software the point-to-point calls model (their protocol limits and costs), and whether it is the system's own.")
    placement = Key(str)
    processes = Key(int, "Ranks taking part (``#processes`` in IMB's header), of ``ranks`` placed.")
    ranks = Key(int)
    ranks_per_node = Key(int)
    rows = Key(list_of(BenchRow))
    system = Key(str)
    wall_seconds = Key(float)


class ReplayFields(Record):
    """The keys of ``tofusim.replay``'s result."""

    algorithms = Key(_dict, "The collective algorithm used per operation (its first call's).")
    bytes_sent = Key(int)
    cancelled_receives = Key(int, "Receives cancelled before a message matched them.")
    collective_calls = Key(_list, "Per operation, communicator size and call size: the calls and the algorithm they ran with, and the rule that chose it.")
    complete = Key(bool, "False when Ctrl-C stopped the replay before the trace ended.")
    compute_scale = Key(float)
    library = Key(str, "The MPI library whose rules chose the collectives' algorithms (``--library``, or the system's: ``fjmpi`` on Tofu, ``mpich`` on Aries and BG/L, ``openmpi`` on fat-trees).")
    messages = Key(int)
    model = Key(str)
    mpi_software = Key(MpiSoftware, "Whose MPI software the replay's point-to-point layer models (its protocol limits and costs) and whether that is the system's own.")
    nodes = Key(int)
    peak_memory_bytes = Key(int)
    ranks = Key(int)
    run = Maybe(PacketRun, "The packet engine's run (cycles, packets, invariants); none on the flow model.")
    self_messages = Key(int, "Messages a rank sent itself (a copy in its own memory), not replayed.")
    steps = Key(int)
    system = Key(str)
    time_seconds = Key(float, "When the last rank finished, seconds of simulated time.")
    trace = Key(str, "The trace's archive.")
    trivial_collectives = Key(int, "Collectives of one rank (nothing to send), not replayed.")
    uncompleted_receives = Key(int, "Receives posted but never completed in the trace (not replayed).")
    wall_seconds = Key(float)
    machine = Maybe(_dict, "the recording machine's model (system='recorded')")
