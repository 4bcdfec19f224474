//! The front door of the communication layer's measurements: puts between
//! ranks, ping-pongs, RDMA gets and atomics, MPI ping-pongs and buffer
//! memory, the Tofu barrier interface, collectives placed by hand and the
//! schedules the real-MPI executor runs. Each request is checked here
//! once; the timings come from the packet engine with the system's
//! communication model ([`crate::comm_model`]).

use std::ops::ControlFlow;

use serde_json::{json, Value};
use tofusim_comm::algorithms::{self, Params, Transfer};
use tofusim_comm::barrier_hw::{self, GateGraph};
use tofusim_comm::mpi::{BufferMode, MemoryPolicy, MpiConfig};
use tofusim_comm::Schedule;
use tofusim_topology::Topology;

use crate::collective::{self, ScheduleOptions, Timed};
use crate::comm_model::{CommModel, Modes};
use crate::error::{ConfigError, Result};
use crate::generation::Generation;

/// A timing as the API hands it back: processes, communicator_shape,
/// cycles, time_seconds, rank_end_cycles and the packet engine's run.
pub fn timing_json(t: &Timed) -> Value {
    json!({
        "processes": t.ranks,
        "communicator_shape": t.grid.map(|g| g.lengths),
        "cycles": t.cycles,
        "time_seconds": t.time_seconds,
        "rank_end_cycles": t.rank_end_cycles,
        "run": t.run,
    })
}

/// Times the schedule `make(ranks)` builds over every node of `system`.
fn time_schedule(system: &str, modes: &Modes, make: impl FnOnce(u32) -> Result<Schedule>) -> Result<Timed> {
    let opts = ScheduleOptions { modes: *modes, ..Default::default() };
    collective::run_schedule(system, &opts, |ranks, _, _| make(ranks), &mut |_| ControlFlow::Continue(()))
}

/// Transfers that start together over `system`'s communicator: (source
/// rank, destination rank, bytes, TNI).
pub fn transfers(system: &str, list: &[(u32, u32, u64, u8)], modes: &Modes) -> Result<Timed> {
    let list: Vec<Transfer> = list.iter().map(|&(src, dst, bytes, tni)| Transfer { src, dst, bytes, tni }).collect();
    time_schedule(system, modes, |ranks| {
        if let Some(t) = list.iter().find(|t| t.src >= ranks || t.dst >= ranks || t.src == t.dst) {
            return Err(ConfigError::new("<transfers>", "transfers", format!("expected two different ranks below {ranks}, found {} and {}", t.src, t.dst)));
        }
        Ok(algorithms::transfers(ranks, &list))
    })
}

/// `rounds` round trips of `bytes` between ranks `a` and `b` of `system`.
pub fn pingpong(system: &str, a: u32, b: u32, bytes: u64, rounds: u32, modes: &Modes) -> Result<Timed> {
    time_schedule(system, modes, |ranks| {
        if a >= ranks || b >= ranks || a == b {
            return Err(ConfigError::new("<pingpong>", "ranks", format!("expected two different ranks below {ranks}")));
        }
        Ok(algorithms::pingpong(ranks, a, b, bytes, rounds.max(1)))
    })
}

/// An RDMA measurement: Gets of some bytes, or 8-byte atomic adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rdma {
    Get,
    Atomic,
}

impl Rdma {
    pub fn parse(kind: &str) -> Result<Self> {
        match kind {
            "get" => Ok(Rdma::Get),
            "atomic" => Ok(Rdma::Atomic),
            k => Err(ConfigError::argument("kind", format!("expected get or atomic, found {k}"))),
        }
    }
}

/// `rounds` RDMA Gets of `bytes`, or atomic adds, by rank 0 on rank 1 of
/// `system`, one after another.
pub fn rdma(system: &str, kind: Rdma, bytes: u64, rounds: u32, modes: &Modes) -> Result<Timed> {
    let rounds = rounds.max(1);
    time_schedule(system, modes, |ranks| {
        Ok(match kind {
            Rdma::Atomic => algorithms::atomic_add(ranks, 0, 1, rounds),
            Rdma::Get => algorithms::get(ranks, 0, 1, bytes, rounds),
        })
    })
}

/// A buffer mode of the MPI layer, or `None` for its switching policy.
pub fn buffer_mode(mode: &str) -> Result<Option<BufferMode>> {
    match mode {
        "auto" => Ok(None),
        "memory-saving" => Ok(Some(BufferMode::MemorySaving)),
        "high-speed" => Ok(Some(BufferMode::HighSpeed)),
        m => Err(ConfigError::argument("mode", format!("expected auto, memory-saving or high-speed, found {m}"))),
    }
}

/// `rounds` MPI ping-pongs of `bytes` between ranks 0 and 1 of `system`
/// with K computer MPI's settings; `forced` a buffer mode, or the policy.
pub fn mpi_pingpong(system: &str, bytes: u64, rounds: u32, forced: Option<BufferMode>) -> Result<Timed> {
    let cfg = MpiConfig::k_computer();
    time_schedule(system, &Modes::default(), |ranks| Ok(tofusim_comm::mpi::pingpong(ranks, 0, 1, bytes, rounds.max(1), &cfg, forced)))
}

/// The MPI settings and the communication-buffer memory per process for
/// each number of peers under each policy.
pub fn mpi_memory(peers: &[u32]) -> Value {
    let cfg = MpiConfig::k_computer();
    let rows: Vec<Value> = peers
        .iter()
        .map(|&p| {
            json!({"peers": p, "memory-saving": cfg.buffer_memory_bytes(p, MemoryPolicy::AllMemorySaving),
                   "high-speed": cfg.buffer_memory_bytes(p, MemoryPolicy::AllHighSpeed), "adaptive": cfg.buffer_memory_bytes(p, MemoryPolicy::Adaptive)})
        })
        .collect();
    json!({"config": cfg, "memory_bytes": rows})
}

/// The barrier-gate plan of the Tofu barrier interface for each BCH count
/// (`generation`: tofu1, tofu2 or tofud).
pub fn barrier_plans(bchs: &[u32], generation: &str) -> Result<Value> {
    let hw = Generation::parse(generation)
        .and_then(Generation::barrier_hardware)
        .ok_or_else(|| ConfigError::argument("generation", format!("expected tofu1, tofu2 or tofud, found {generation}")))?;
    let plans = bchs.iter().map(|&k| barrier_hw::intra_node(k, &hw)).collect::<std::result::Result<Vec<_>, _>>().map_err(|e| ConfigError::argument(e.key, e.message))?;
    Ok(json!({"hardware": hw, "plans": plans}))
}

/// The Tofu hardware barrier (or, with `payload_bytes`, the barrier
/// interface's small allreduce) across every node of `system`, µs; `graph`
/// wires the gates: `axes`, `physical-axes`, `axis-neighbours` or
/// `rank-order` ([`GateGraph`]).
pub fn hardware_barrier_us(system: &str, payload_bytes: u32, graph: &str) -> Result<f64> {
    let graph = GateGraph::parse(graph).ok_or_else(|| {
        let names: Vec<&str> = GateGraph::ALL.iter().map(|g| g.name()).collect();
        ConfigError::argument("graph", format!("expected one of {}, found {graph}", names.join(", ")))
    })?;
    collective::hardware_barrier_us(system, payload_bytes, graph)
}

/// The communication model of a system (packet format, components, sources).
pub fn comm_model(system: &str) -> Result<CommModel> {
    let sys = crate::from_name(system)?;
    // Only a dragonfly's model needs its built node space (link classes).
    Ok(match sys.network.topology {
        Topology::Dragonfly(_) => crate::build::build("<command line>", "system", sys, crate::build::Routes::Default)?.model,
        _ => CommModel::for_system(&sys, None),
    })
}

/// For each route length of a dragonfly's routing (`system`, with an
/// optional `/mode`), one pair of nodes whose packets take that many router
/// hops both ways: `(hops, src node, dst node)`, from node 0; 0 hops is
/// the next node on the same router.
pub fn dragonfly_hop_pairs(system: &str) -> Result<Vec<(u32, u32, u32)>> {
    let setup = collective::setup(system)?;
    let Some((d, mode)) = setup.built.dragonfly else {
        return Err(ConfigError::argument("system", format!("{system}: not a dragonfly")));
    };
    let routing = tofusim_routing::DragonflyRouting::new(&d, mode);
    let npr = d.nodes_per_router;
    let mut out: Vec<(u32, u32, u32)> = Vec::new();
    if npr > 1 {
        out.push((0, 0, 1));
    }
    for r in 1..routing.routers() as u32 {
        let h = routing.distance(0, r);
        // The same length both ways (a ping-pong times both).
        if h == routing.distance(r, 0) && !out.iter().any(|&(k, _, _)| k == h) {
            out.push((h, 0, r * npr));
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Collective `op`/`algo` of `size_bytes` with its ranks placed on the nodes
/// of `system` by `node_of_rank` (several ranks may share a node: their
/// messages then turn around in the node's NIC), on the packet engine.
pub fn collective_placed(system: &str, op: &str, algo: &str, size_bytes: u64, node_of_rank: Vec<u32>, seed: u64) -> Result<Timed> {
    let mut setup = collective::setup(system)?;
    let nodes = setup.built.nodes.node_count();
    if node_of_rank.is_empty() || node_of_rank.iter().any(|&n| n as u64 >= nodes) {
        return Err(ConfigError::new("<placement>", "node_of_rank", format!("expected at least one rank, each on a node below {nodes}")));
    }
    setup.node_of_rank = node_of_rank;
    setup.grid = None;
    let ranks = setup.node_of_rank.len() as u32;
    let mut params = Params::new(ranks, 0);
    params.tnis = setup.built.model.tnis.max(1);
    let s = algorithms::build_named(op, algo, 0, size_bytes, params).map_err(|e| ConfigError::new("<collective>", e.key, e.message))?;
    let opts = ScheduleOptions { seed, ..Default::default() };
    collective::run_on(setup, s, &opts, &mut |_| ControlFlow::Continue(()), |_| ()).map(|(t, ())| t)
}

/// A collective's schedule handed out as data (for the real-MPI executor).
pub struct ScheduleRequest<'a> {
    pub op: &'a str,
    pub algo: &'a str,
    pub ranks: u32,
    pub size_bytes: u64,
    pub root: u32,
    /// The communicator as a torus (for the Tofu algorithms).
    pub shape: Option<Vec<u32>>,
    pub segment_bytes: u64,
    pub tnis: u8,
}

/// The schedule of a collective, refused when it is too large to hand out
/// (a few hundred bytes of JSON per message).
pub fn collective_schedule(req: ScheduleRequest<'_>) -> Result<Schedule> {
    let most = collective::MAX_SCHEDULE_MESSAGES / 10;
    // An unknown algorithm is refused by its builder below.
    let messages = tofusim_comm::Algorithm::named(req.algo).map_or(0, |algo| {
        let op = tofusim_comm::Operation::parse(req.op).ok();
        collective::messages_estimate(op, algo, req.size_bytes, Some(req.segment_bytes), req.ranks as u64)
    });
    if messages > most {
        return Err(ConfigError::argument(
            "ranks",
            format!(
                "{} ranks of {} {}: about {messages:.3e} messages, more than the {most:.1e} a schedule handed back as JSON may hold; \
                 time it with tofusim.coll instead (which keeps it in the engine)",
                req.ranks, req.op, req.algo
            ),
        ));
    }
    let mut p = Params::new(req.ranks, 0);
    p.grid = match req.shape {
        Some(s) => Some(tofusim_comm::tree::Grid::from_shape(&s).ok_or_else(|| ConfigError::argument("shape", "expected 1 to 3 positive axis lengths"))?),
        None => None,
    };
    p.segment_elements = req.segment_bytes.div_ceil(tofusim_comm::ELEMENT_BYTES).max(1);
    p.tnis = req.tnis.max(1);
    // The MPI operations outside the algorithm library (scan, gather, ...)
    // have timing-only schedules.
    if tofusim_comm::mpi_collectives::OPERATIONS.iter().any(|(o, _)| *o == req.op) {
        tofusim_comm::mpi_collectives::build(req.op, req.algo, req.ranks, req.root, req.size_bytes).map_err(|e| ConfigError::argument(e.key, e.message))
    } else {
        algorithms::build_named(req.op, req.algo, req.root, req.size_bytes, p).map_err(|e| ConfigError::argument(e.key, e.message))
    }
}

/// Rank `rank`'s buffer before a collective and the elements it must hold
/// after: (initial, result offset, expected).
pub fn collective_buffers(op: &str, root: u32, ranks: u32, count: u64, buffer_elements: u64, rank: u32) -> Result<(Vec<u64>, u64, Vec<u64>)> {
    let coll = tofusim_comm::Collective::parse(op, root).ok_or_else(|| ConfigError::argument("op", format!("unknown operation {op}")))?;
    Ok((coll.initial(rank, ranks, count, buffer_elements), coll.result_offset(rank, ranks, count), coll.expected(rank, ranks, count)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_refused_by_name() {
        assert_eq!(Rdma::parse("put").unwrap_err().key, "kind");
        assert_eq!(buffer_mode("fast").unwrap_err().key, "mode");
        assert_eq!(barrier_plans(&[1], "tofu3").unwrap_err().key, "generation");
        assert_eq!(hardware_barrier_us("k:1x1x1", 0, "ring").unwrap_err().key, "graph");
        assert_eq!(collective_buffers("scatterv", 0, 4, 1, 4, 0).unwrap_err().key, "op");
        assert_eq!(dragonfly_hop_pairs("bgl:4x4x4").unwrap_err().key, "system");
    }

    #[test]
    fn a_pingpong_takes_longer_than_its_puts() {
        let one = pingpong("k:1x1x1", 0, 1, 8, 1, &Modes::default()).unwrap();
        let four = pingpong("k:1x1x1", 0, 1, 8, 4, &Modes::default()).unwrap();
        assert!(four.time_seconds > 3.0 * one.time_seconds, "{} vs {}", four.time_seconds, one.time_seconds);
        assert!(pingpong("k:1x1x1", 0, 0, 8, 1, &Modes::default()).is_err());
        let j = timing_json(&one);
        assert_eq!(j["processes"], 12);
    }

    #[test]
    fn an_allreduce_result_is_the_sum_on_every_rank() {
        let (init, offset, expected) = collective_buffers("allreduce", 0, 4, 3, 3, 2).unwrap();
        assert_eq!((init.len(), offset, expected.len()), (3, 0, 3));
        let totals: Vec<u64> = (0..3).map(|i| (0..4).fold(0u64, |s, r| s.wrapping_add(collective_buffers("allreduce", 0, 4, 3, 3, r).unwrap().0[i]))).collect();
        assert_eq!(expected, totals);
    }
}
