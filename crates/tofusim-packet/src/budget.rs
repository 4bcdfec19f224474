//! The memory a packet-engine run will need, estimated from the numbers the
//! builder knows before anything is allocated (routers, ports, nodes, the
//! router model, the run's length and the traffic), so a command can refuse
//! a run that would not fit instead of aborting out of memory part-way.
//!
//! The estimate adds up the engine's arrays element by element (the same
//! sizes as [`crate::router`], [`crate::nic`] and the routing tables), the
//! time series and counter snapshots, and a bound on the packets alive at
//! once: every buffer and injection FIFO full of the smallest packets, plus
//! a finite workload's packets posted at once. An open-loop source's
//! backlog cannot be bounded beforehand (it grows without end past
//! saturation and not at all below it): the run guards it instead, stopping
//! when more packets are alive than the memory left allows
//! (`RunParams::max_live_packets`, from [`live_packet_limit`]). The
//! estimate is meant as an upper bound; `sim.peak_memory_bytes` of a run
//! compares with it (tests check a run stays below twice it).

use crate::config::{RouterParams, RunParams};
use crate::packet::Packet;
use crate::stats::PortCounters;

/// What the builder knows of a network before building it.
#[derive(Clone, Copy, Debug)]
pub struct NetworkSize {
    pub routers: u64,
    /// Network ports per router.
    pub ports: u64,
    /// Nodes (terminals) of the network.
    pub nodes: u64,
    /// Axes of a torus's node space (coordinates kept per router); 0 for
    /// the indirect networks, whose routing keeps per-router tables only.
    pub axes: u64,
}

/// The estimate, by part, bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Footprint {
    pub routing_tables: u64,
    pub router_state: u64,
    pub nodes: u64,
    pub statistics: u64,
    pub packets: u64,
}

impl Footprint {
    pub fn total(&self) -> u64 {
        [self.routing_tables, self.router_state, self.nodes, self.statistics, self.packets].iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// "3.2 GiB (routing tables 1.0 GiB, routers 1.5 GiB, …)".
    pub fn describe(&self) -> String {
        format!(
            "{} (routing tables {}, router state {}, nodes {}, statistics {}, packets {})",
            gib(self.total()),
            gib(self.routing_tables),
            gib(self.router_state),
            gib(self.nodes),
            gib(self.statistics),
            gib(self.packets)
        )
    }
}

/// Bytes in GiB with two decimals ("0.01 GiB" for anything small).
pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The memory of a run on `size` with router model `params`, run `run`,
/// the workload's smallest packet `packet_bytes` and `posted_packets`
/// made before the buffers take them (a finite workload's sends posted at
/// once; an open-loop backlog is guarded during the run instead)
/// (saturating arithmetic: an absurd network gives a huge estimate, never
/// an overflow).
pub fn estimate(size: NetworkSize, params: &RouterParams, run: &RunParams, packet_bytes: u32, posted_packets: u64) -> Footprint {
    let NetworkSize { routers, ports, nodes, axes } = size;
    let mul = |a: u64, b: u64| a.saturating_mul(b);
    let npr = params.nodes_per_router.max(1) as u64;
    let vcs = params.vcs() as u64;
    let queues = params.queues(ports as usize) as u64;
    let fifos = npr * (params.injection_fifos + params.priority_fifos) as u64;
    let units = ports + fifos;
    let qwords = queues.div_ceil(64).max(1);
    let lanes = ((params.injection_fifos as u64).max(1)).min(8);

    // Routing: a torus keeps each router's coordinates (u16 per axis), its
    // neighbour and arrival port per port (u32 + u8); the indirect networks
    // a neighbour per port and small per-router tables.
    let routing_tables = mul(routers, mul(axes, 2) + mul(ports, 5) + 8);
    // Input units: head, tail (u32), fill (u16), and candidates with the
    // head's clock (two u64) per queue; request words per output;
    // paths per unit. Output units: four
    // u64 clocks and a u16 token count per VC, per port. The engine: dirty
    // flags and lists, action heads, a random generator and the owner per
    // router.
    let per_router = mul(queues, 4 + 4 + 2 + 16) + mul(mul(ports + 1, qwords), 8) + units + mul(ports, 32 + 2 * vcs) + 1 + 4 + 4 + 16 + 2;
    let router_state = mul(routers, per_router);
    let nodes_bytes = mul(nodes, 8 + 8 + 4 + 8 + 8 + 8 + mul(lanes, 4 + 4 + 8 + 8 + 1));
    let samples = run.cycles.map_or(0, |c| c / run.sample_cycles.max(1) + 1);
    // Per-port and per-VC counter snapshots every `counter_cycles`: kept
    // during the run (at most `counter_sample_limit` samples, the period
    // doubling past it) and copied into the result's columns. A finite
    // workload's length is not known here: its samples are not counted.
    let limit = crate::stats::counter_sample_limit(mul(routers, ports), vcs);
    let snapshots = match (run.cycles, run.counter_cycles) {
        (Some(c), every) if every > 0 => (c / every + 1).min(limit),
        _ => 0,
    };
    let vc_row_bytes = std::mem::size_of::<crate::stats::VcSnapshot>() as u64 + 40;
    let snapshot_bytes = mul(mul(snapshots, mul(routers, ports)), 2 * (std::mem::size_of::<PortCounters>() as u64 + 16) + mul(vcs, vc_row_bytes));
    let statistics = mul(mul(routers, ports), std::mem::size_of::<PortCounters>() as u64)
        .saturating_add(snapshot_bytes)
        .saturating_add(mul(samples, (std::mem::size_of::<crate::stats::Sample>() as u64) + 8 * vcs));
    // Packets: every buffer and FIFO full of the workload's smallest
    // packets (a saturated network), and the traffic's backlog.
    let smallest = (packet_bytes.max(params.chunk_bytes).max(1)) as u64;
    let per_buffer = |bytes: u32| (bytes as u64).div_ceil(smallest).max(1);
    let buffered = mul(routers, mul(ports * vcs, per_buffer(params.vc_buffer_bytes)) + mul(fifos, per_buffer(params.injection_fifo_bytes)));
    let packets = mul(buffered.saturating_add(posted_packets), PACKET_BYTES);
    Footprint { routing_tables, router_state, nodes: nodes_bytes, statistics, packets }
}

/// The longest packet-engine run started without being asked, by its own
/// estimate (minutes): an hour. The estimate is rough (a few times either
/// way); `--max-time` raises or lifts it (`none`).
pub const DEFAULT_MAX_MINUTES: f64 = 60.0;

/// Memory of one live packet: the packet and its share of the events and
/// lists that refer to it.
pub const PACKET_BYTES: u64 = std::mem::size_of::<Packet>() as u64 + 8;

/// The packets that may be alive at once in `limit_bytes` beside the
/// estimate `f` (the guard of an open-loop backlog): at least what the
/// buffers hold.
pub fn live_packet_limit(f: &Footprint, limit_bytes: u64) -> u64 {
    (limit_bytes.saturating_sub(f.total()) / PACKET_BYTES).max(f.packets / PACKET_BYTES)
}

/// The limit a run is held to, and how to name it: the caller's
/// `--max-memory`, else the memory available now; `None` when neither is
/// known.
pub fn limit(max_memory: Option<u64>) -> Option<(u64, &'static str)> {
    match max_memory {
        Some(l) => Some((l, "the --max-memory limit")),
        None => available_bytes().map(|a| (a, "the memory available")),
    }
}

/// The memory this machine has available now (`MemAvailable` of
/// `/proc/meminfo`), if it can be read.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bgl() -> RouterParams {
        RouterParams::bgl()
    }

    #[test]
    fn grows_with_the_network_and_saturates_instead_of_overflowing() {
        let run = RunParams { cycles: Some(10_000), ..RunParams::default() };
        let small = estimate(NetworkSize { routers: 512, ports: 6, nodes: 512, axes: 3 }, &bgl(), &run, 256, 0).total();
        let big = estimate(NetworkSize { routers: 32768, ports: 6, nodes: 32768, axes: 3 }, &bgl(), &run, 256, 0).total();
        assert!(big > 55 * small && big < 70 * small, "{small} {big}");
        let absurd = estimate(NetworkSize { routers: u64::MAX / 3, ports: 6, nodes: u64::MAX / 3, axes: 3 }, &bgl(), &run, 256, 0);
        assert!(absurd.total() > 1 << 50);
    }

    #[test]
    fn describes_every_part() {
        let f = Footprint { routing_tables: 1 << 30, router_state: 2 << 30, nodes: 0, statistics: 0, packets: 1 << 29 };
        assert_eq!(f.describe(), "3.50 GiB (routing tables 1.00 GiB, router state 2.00 GiB, nodes 0.00 GiB, statistics 0.00 GiB, packets 0.50 GiB)");
    }
}
