//! One collective on the packet engine: `tofusim coll`.
//!
//! The communicator is the whole system, one rank per node. On a torus the
//! rank is the node id (axis 0 fastest) and the communicator's torus shape
//! is the network's; on Tofu it is the virtual 3D torus (2X, 3Y, 2Z) of
//! [`tofusim_mapping::VirtualTorus`], so the Tofu algorithms talk to
//! physical neighbours.

// Rates carry their unit in the name (`link_Bps`), as the JSON keys do.
#![allow(non_snake_case)]

use serde::Serialize;
use tofusim_comm::algorithms::{build_named, Params};
use tofusim_comm::tree::Grid;
use tofusim_comm::{data, Collective, ELEMENT_BYTES};
use tofusim_mapping::VirtualTorus;
use tofusim_packet::{Engine, RunParams, RunResult};
use tofusim_routing::{EscapeOrder, Routing, TorusRouting};
use tofusim_topology::{tofu, Topology, Torus};
use tofusim_workload::{ScheduleRun, Workload};

use crate::comm_model::{CommModel, Modes};
use crate::error::{ConfigError, Result};
use crate::system;

const WHERE: &str = "<command line>";

/// What `tofusim coll` was asked.
#[derive(Clone, Debug)]
pub struct CollectiveSpec {
    pub op: String,
    pub algorithm: String,
    /// The vector (bcast, reduce, allreduce), each rank's block
    /// (allgather) or each rank's block per destination (alltoall), bytes.
    pub size_bytes: u64,
    pub system: String,
    pub root: u32,
    /// Pipelining segment of the chain and tree algorithms, bytes.
    pub segment_bytes: u64,
    /// TNIs the algorithm may use (default: all of the node's).
    pub tnis: Option<u8>,
    pub modes: Modes,
    pub verify: bool,
    pub seed: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CollectiveResult {
    pub op: String,
    pub algo: String,
    pub size_bytes: u64,
    pub processes: u32,
    pub system: String,
    /// The communicator's torus shape the algorithms saw.
    pub communicator_shape: Option<[u32; 3]>,
    pub time_seconds: f64,
    /// Size over time (for allgather and alltoall: all the bytes a rank
    /// receives, p × size, over time).
    pub bandwidth_Bps: f64,
    /// `None` when not asked for (`--verify`).
    pub verified: Option<bool>,
    pub verify_error: Option<String>,
    pub fallback: Option<String>,
    pub messages: u64,
    pub bytes_sent: u64,
    pub tnis_used: u8,
    /// Packet-engine statistics of the run.
    pub run: RunSummary,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub cycles: u64,
    pub cycle_ns: f64,
    pub packets_delivered: u64,
    pub link_utilization: f64,
    pub deadlock: bool,
    pub invariant_error: Option<String>,
    pub wall_seconds: f64,
}

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::new(WHERE, key, message)
}

/// The communicator of a system: node of each rank, and its torus shape.
fn communicator(t: &Torus) -> (Vec<u32>, Option<Grid>) {
    if let Some(v) = VirtualTorus::of_tofu(t) {
        return (v.node_of_rank().to_vec(), Some(Grid::new(v.shape)));
    }
    let n = t.node_count() as u32;
    let l = t.lengths();
    (
        (0..n).collect(),
        if l.len() <= 3 {
            Grid::from_shape(&l)
        } else {
            None
        },
    )
}

/// Builds the schedule of `spec` for the system's communicator.
pub fn schedule(
    spec: &CollectiveSpec,
    ranks: u32,
    grid: Option<Grid>,
    tnis: u8,
) -> Result<tofusim_comm::Schedule> {
    let mut params = Params::new(ranks, 0);
    params.grid = grid;
    params.tnis = spec.tnis.unwrap_or(tnis).max(1);
    params.segment_elements = spec.segment_bytes.div_ceil(ELEMENT_BYTES).max(1);
    build_named(
        &spec.op,
        &spec.algorithm,
        spec.root,
        spec.size_bytes,
        params,
    )
    .map_err(|e| err(e.key, e.message))
}

/// A schedule run on the packet engine.
pub struct Timed {
    pub schedule: tofusim_comm::Schedule,
    pub ranks: u32,
    pub grid: Option<Grid>,
    pub cycles: u64,
    pub time_seconds: f64,
    pub run: RunSummary,
    /// Per rank, the cycle its last step finished.
    pub rank_end_cycles: Vec<u64>,
    /// Per rank, the finish cycle of every step.
    pub step_finish_cycles: Vec<Vec<u64>>,
}

/// A system ready for collectives: its network, communication model and
/// communicator (rank → node, torus shape).
pub struct Setup {
    /// The node space: the torus, or for a dragonfly a ring of its nodes
    /// (router-major) that only numbers them.
    pub torus: Torus,
    /// A dragonfly and the routing mode its packets take (`None`: a torus,
    /// routed in dimension order).
    pub dragonfly: Option<(tofusim_topology::dragonfly::Dragonfly, tofusim_routing::DragonflyMode)>,
    pub model: CommModel,
    pub node_of_rank: Vec<u32>,
    pub grid: Option<Grid>,
    /// Injection capacity of a node, in links.
    pub injection_links: f64,
}

/// The communicator of a system (rank → node, torus shape) and its model.
/// A dragonfly's name may end in `/mode`, its routing (`aries-720/minimal`;
/// default adaptive prefer-minimal).
pub fn setup(system_name: &str) -> Result<Setup> {
    let (name, mode) = match system_name.split_once('/') {
        Some((n, m)) => (n, Some(m)),
        None => (system_name, None),
    };
    let sys = system::from_name(name)?;
    let t = match &sys.network.topology {
        Topology::Torus(t) | Topology::Tofu(t) => {
            if mode.is_some() {
                return Err(err("system", format!("{system_name}: a routing suffix (/mode) applies to dragonflies only")));
            }
            t.clone()
        }
        Topology::Dragonfly(d) => return dragonfly_setup(name, &sys, d, mode),
        _ => return Err(err("system", "collectives run on tori, meshes, Tofu and dragonflies so far (the packet engine has no fat-tree routing yet)")),
    };
    let model = CommModel::for_system(system_name, &sys.network);
    let (node_of_rank, grid) = communicator(&t);
    let injection_links = sys.network.injection_per_node_Bps() / model.link_Bps;
    Ok(Setup {
        torus: t,
        dragonfly: None,
        model,
        node_of_rank,
        grid,
        injection_links,
    })
}

/// A dragonfly's setup: one rank per node in node order, the Aries
/// communication model with the links' class rates.
fn dragonfly_setup(
    name: &str,
    sys: &system::System,
    d: &tofusim_topology::dragonfly::Dragonfly,
    mode: Option<&str>,
) -> Result<Setup> {
    use tofusim_routing::DragonflyMode;
    let mode = match mode {
        None => DragonflyMode::AdaptivePreferMinimal,
        Some(m) => DragonflyMode::parse(m).ok_or_else(|| {
            err("system", format!("{name}/{m}: unknown dragonfly routing; expected minimal, valiant, ugal-l, ugal-g or adaptive-prefer-minimal"))
        })?,
    };
    if mode != DragonflyMode::Minimal && d.groups > 64 {
        return Err(err("system", format!("non-minimal dragonfly routing handles at most 64 groups, {name} has {}", d.groups)));
    }
    let space = crate::experiment::dragonfly_space(WHERE, d, &sys.network.link_Bps)?;
    let model = CommModel::for_dragonfly(d, &sys.network, &space);
    let queues = model.router.queues(space.ports);
    if queues > tofusim_packet::MAX_QUEUES {
        return Err(err("system", format!("{name}: {} ports x {} VCs and {} nodes x {} FIFOs make {queues} queues per router; the packet engine handles {}", space.ports, model.router.vcs(), d.nodes_per_router, model.router.injection_fifos, tofusim_packet::MAX_QUEUES)));
    }
    let nodes = d.node_count() as u32;
    Ok(Setup {
        torus: space.nodes,
        dragonfly: Some((d.clone(), mode)),
        injection_links: sys.network.injection_per_node_Bps() / model.link_Bps,
        model,
        node_of_rank: (0..nodes).collect(),
        grid: None,
    })
}

/// Runs the schedule `make(ranks, grid, tnis)` builds over every node of
/// `system_name` on the packet engine.
pub fn run_schedule(
    system_name: &str,
    modes: &Modes,
    seed: u64,
    make: impl FnOnce(u32, Option<Grid>, u8) -> Result<tofusim_comm::Schedule>,
    progress: &mut dyn FnMut(f64),
) -> Result<Timed> {
    let setup = setup(system_name)?;
    let s = make(setup.node_of_rank.len() as u32, setup.grid, setup.model.tnis)?;
    run_on(setup, s, modes, seed, progress)
}

/// A plain torus of `lengths` (every axis wraps) with the links and
/// communication model of the preset `model_system`, its ranks placed by
/// `node_of_rank` (rank → node, x fastest): a job's virtual torus, on
/// which a rank order from RMATT is evaluated.
pub fn torus_setup(lengths: &[u32], model_system: &str, node_of_rank: Vec<u32>) -> Result<Setup> {
    let sys = system::from_name(model_system)?;
    let axes = lengths
        .iter()
        .enumerate()
        .map(|(k, &l)| {
            let name = tofusim_topology::torus::default_axis_name(k);
            if l >= 3 {
                tofusim_topology::Axis::ring(&name, l)
            } else {
                tofusim_topology::Axis::path(&name, l)
            }
        })
        .collect();
    let t = Torus::new(axes);
    if node_of_rank.iter().any(|&n| n as u64 >= t.node_count()) {
        return Err(err("order", format!("a rank is placed beyond the {} nodes of the torus", t.node_count())));
    }
    let model = CommModel::for_system(model_system, &sys.network);
    let injection_links = sys.network.injection_per_node_Bps() / model.link_Bps;
    Ok(Setup {
        grid: Grid::from_shape(lengths),
        torus: t,
        dragonfly: None,
        model,
        node_of_rank,
        injection_links,
    })
}

/// Runs `s` on the packet engine over the ranks of `setup`.
pub fn run_on(
    setup: Setup,
    s: tofusim_comm::Schedule,
    modes: &Modes,
    seed: u64,
    progress: &mut dyn FnMut(f64),
) -> Result<Timed> {
    let Setup {
        torus: t,
        dragonfly,
        model,
        node_of_rank,
        grid,
        injection_links,
    } = setup;
    let ranks = node_of_rank.len() as u32;
    if s.ranks != ranks {
        return Err(err("schedule", format!("{} ranks for {ranks} placed ranks", s.ranks)));
    }
    let timing = model.host_timing(modes);
    let run_state = ScheduleRun::new(
        s.clone(),
        node_of_rank,
        timing,
        model.packet_bytes,
        model.header_bytes,
    )
    .map_err(|e| err("algo", e))?;
    let workload = Workload::collective(run_state, model.packet_bytes, model.header_bytes, &t)
        .map_err(|e| err(e.key, e.message))?;
    let order: Vec<usize> = if tofu::is_tofu(&t) {
        tofu::ROUTING_ORDER.to_vec()
    } else {
        (0..t.axes().len()).collect()
    };
    let routing = match &dragonfly {
        Some((d, mode)) => Routing::Dragonfly(tofusim_routing::DragonflyRouting::new(d, *mode)),
        None => Routing::Torus(TorusRouting::new(&t, &order, EscapeOrder::Dimension)),
    };
    let run = RunParams {
        seed,
        ..RunParams::default()
    };
    let engine = Engine::new(
        routing,
        model.router.clone(),
        model.routing,
        run,
        workload,
        injection_links,
        model.cycle_ns(),
    );
    let (r, (rank_end_cycles, step_finish_cycles)): (RunResult, (Vec<u64>, Vec<Vec<u64>>)) = engine
        .run_with(progress, |w| {
            w.schedule_run()
                .map(|s| (s.rank_end_cycles(), s.step_finish_cycles()))
                .unwrap_or_default()
        });
    let cycles = r.completion_cycles.unwrap_or(r.sim.cycles);
    Ok(Timed {
        schedule: s,
        ranks,
        grid,
        cycles,
        time_seconds: cycles as f64 * r.cycle_ns * 1e-9,
        rank_end_cycles,
        step_finish_cycles,
        run: RunSummary {
            cycles,
            cycle_ns: r.cycle_ns,
            packets_delivered: r.packets_delivered,
            link_utilization: r.link_utilization,
            deadlock: r.deadlock.is_some(),
            invariant_error: r
                .invariant_error
                .map(|e| format!("{}: {}", e.kind, e.detail)),
            wall_seconds: r.sim.wall_seconds,
        },
    })
}

/// Runs one collective on the packet engine (and, with `verify`, on real buffers).
pub fn run(spec: &CollectiveSpec, progress: &mut dyn FnMut(f64)) -> Result<CollectiveResult> {
    let timed = run_schedule(
        &spec.system,
        &spec.modes,
        spec.seed,
        |ranks, grid, tnis| {
            if spec.root >= ranks {
                return Err(err("root", format!("expected a rank below {ranks}")));
            }
            schedule(spec, ranks, grid, tnis)
        },
        progress,
    )?;
    let s = &timed.schedule;
    let (verified, verify_error) = if spec.verify {
        match data::execute(s, data::Order::Fifo) {
            Ok(_) => (Some(true), None),
            Err(e) => (Some(false), Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    let coll = s.collective;
    let ranks = timed.ranks;
    let bytes = match coll {
        Collective::Allgather | Collective::Alltoall => spec.size_bytes * ranks as u64,
        _ => spec.size_bytes,
    };
    Ok(CollectiveResult {
        op: spec.op.clone(),
        algo: spec.algorithm.clone(),
        size_bytes: spec.size_bytes,
        processes: ranks,
        system: spec.system.clone(),
        communicator_shape: timed.grid.map(|g| g.lengths),
        time_seconds: timed.time_seconds,
        bandwidth_Bps: if timed.time_seconds > 0.0 && coll != Collective::Barrier {
            bytes as f64 / timed.time_seconds
        } else {
            0.0
        },
        verified,
        verify_error,
        fallback: s.fallback.clone(),
        messages: s.messages(),
        bytes_sent: s.bytes_sent(),
        tnis_used: s.tnis_used(),
        run: timed.run,
    })
}

/// The hardware barrier across every node of `system_name` (one BCH per
/// node, dissemination through the barrier gates): µs. A barrier signal
/// crosses the network as one 32-byte packet: the hop latency per hop plus
/// its wire time. With `payload_bytes` > 0 it is the barrier interface's
/// small allreduce: each signal carries the operand and each gate combines
/// it (in its BG delay, [MEM]).
pub fn hardware_barrier_us(system_name: &str, payload_bytes: u32) -> Result<f64> {
    let Setup {
        torus: t,
        model,
        node_of_rank,
        ..
    } = setup(system_name)?;
    let hw = if model.generation == "tofud" {
        tofusim_comm::barrier_hw::BarrierHardware::tofud()
    } else {
        tofusim_comm::barrier_hw::BarrierHardware::tofu1()
    };
    let cycle = model.cycle_ns();
    let hop_ns = model.router.hop_latency_cycles as f64 * cycle;
    let wire_ns =
        ((32 + payload_bytes).div_ceil(32) * 32 + model.router.overhead_bytes) as f64 * cycle;
    Ok(tofusim_comm::barrier_hw::across_nodes(
        node_of_rank.len() as u32,
        &hw,
        |a, b| {
            let hops = t.distance(
                tofusim_topology::NodeId(node_of_rank[a as usize]),
                tofusim_topology::NodeId(node_of_rank[b as usize]),
            );
            hops as f64 * hop_ns + wire_ns
        },
    ))
}
