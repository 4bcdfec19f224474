//! The flow model on the systems of the one builder ([`crate::build`]): the
//! flow network of a system or an experiment file (`tofusim_flow::FlowNet`:
//! the same routes as the packet engine, resources at the rates of its
//! links, injection and TNIs) and the machine the flow executors of the
//! communication layer run on (`tofusim_comm::exec::{flow, rounds}`), for
//! the flow/packet cross-check (issue 7) and full-machine collectives.
//!
//! A message is one flow along its dimension-order route (the engine's
//! escape route with the same order and hint bits); on an adaptive torus
//! it is spread over every dimension order's route, on a Valiant dragonfly
//! over up to 16 Valiant routes. Resources, in wire bytes per second (per
//! cycle for an experiment file): each directed link (its class rate);
//! each node's injection (its injection capacity, or the host-interface
//! limit where the preset has one); each node's TNIs (one DMA engine each,
//! at the rate of the injection FIFOs it feeds).

use tofusim_comm::algorithms::Transfer;
pub use tofusim_comm::exec::flow::{FlowMachine, FlowTimed};
pub use tofusim_comm::exec::rounds::RoundsTimed;
use tofusim_flow::{Capacities, FlowNet, Interrupt, Stop};
use tofusim_routing::{DragonflyMode, EscapeOrder, Routing, TorusRouting};
use tofusim_topology::dragonfly::Dragonfly;

use crate::build::{setup, Setup};
use crate::comm_model::Modes;
use crate::error::{ConfigError, Result};

/// The flow network of a prepared communicator's system, in wire bytes per
/// second.
pub fn flow_net(s: &Setup) -> Result<FlowNet> {
    if s.built.fattree.is_some() {
        return Err(ConfigError::argument("model", "the flow model does not route fat-trees yet; use --model packet"));
    }
    let link_bps = s.built.model.link_Bps;
    let r = &s.built.model.router;
    let node_bps = if s.built.dragonfly.is_some() {
        // The engine's host interface counts packet bytes, as wire bytes do.
        r.host_bytes_per_cycle * link_bps
    } else {
        s.built.model.host_limit_Bps.map_or(s.built.injection_links * link_bps, |h| h.min(s.built.injection_links * link_bps))
    };
    let adaptive = s.built.model.routing == tofusim_packet::RoutingMode::Adaptive;
    build_net("<flow>", &s.built.nodes, s.built.dragonfly.as_ref(), r, adaptive, link_bps, node_bps, s.built.model.tnis)
}

/// The flow network of an experiment file's system, in bytes per cycle: a
/// link carries one byte per cycle (a slower link class less), a node
/// injects at most its injection capacity (and its host interface's rate),
/// through one send lane per workload lane.
pub(crate) fn flow_net_for_experiment(file: &str, exp: &crate::experiment::Experiment) -> Result<FlowNet> {
    if exp.built.fattree.is_some() {
        return Err(ConfigError::new(file, "network.topology", "the flow model does not route fat-trees yet; run the packet engine (no --model flow)"));
    }
    let node = exp.built.injection_links.min(exp.router.host_bytes_per_cycle);
    let lanes = exp.workload.lanes().clamp(1, 255) as u8;
    let adaptive = exp.mode == tofusim_packet::RoutingMode::Adaptive;
    build_net(file, &exp.built.nodes, exp.built.dragonfly.as_ref(), &exp.router, adaptive, 1.0, node, lanes)
}

/// Routes (the packet engine's, from [`crate::build::routing_of`]) and
/// capacities.
#[allow(clippy::too_many_arguments)]
fn build_net(
    file: &str,
    torus: &tofusim_topology::Torus,
    dragonfly: Option<&(Dragonfly, DragonflyMode)>,
    r: &tofusim_packet::RouterParams,
    adaptive: bool,
    link_bps: f64,
    node_bps: f64,
    tnis: u8,
) -> Result<FlowNet> {
    if let Some((_, mode)) = dragonfly {
        if !matches!(
            *mode,
            DragonflyMode::Minimal | DragonflyMode::InOrder | DragonflyMode::Valiant
        ) {
            return Err(if file == "<flow>" {
                ConfigError::new(file, "system", "the flow model has no congestion-based route choice: on a dragonfly give /minimal or /valiant")
            } else {
                ConfigError::new(file, "routing.algorithm", "the flow model has no congestion-based route choice: on a dragonfly use minimal or valiant routing")
            });
        }
    }
    let routing = crate::build::routing_of(torus, dragonfly, None, r.escape);
    let npr = dragonfly.map_or(1, |(d, _)| d.nodes_per_router);
    let lanes = tnis.max(1);
    let fifos_per_lane = (r.injection_fifos as usize / lanes as usize).max(1) as f64;
    let capacities = Capacities {
        port: (0..routing.ports()).map(|p| link_bps / r.port_cycles_per_byte.get(p).copied().unwrap_or(1.0)).collect(),
        node: node_bps,
        lane: link_bps * fifos_per_lane,
        lanes,
    };
    let mut orders = Vec::new();
    if dragonfly.is_none() && adaptive {
        let axes = torus.axes().len();
        if axes <= 4 {
            for perm in permutations(axes) {
                orders.push(Routing::Torus(TorusRouting::new(torus, &perm, EscapeOrder::Dimension)));
            }
        }
    }
    Ok(FlowNet::new(routing, orders, npr, &capacities))
}

/// Every ordering of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}


/// The machine of a prepared communicator for the flow executors, with the
/// host timing of `modes`.
pub fn machine<'a>(s: &'a Setup, net: &'a FlowNet, modes: &Modes, interrupt: &'a dyn Stop) -> FlowMachine<'a> {
    FlowMachine {
        net,
        node_of_rank: &s.node_of_rank,
        timing: s.built.model.host_timing(modes),
        packet_bytes: s.built.model.packet_bytes,
        header_bytes: s.built.model.header_bytes,
        hop_latency_cycles: s.built.model.router.hop_latency_cycles,
        interrupt,
    }
}

/// `list` (ranks of `system_name`'s communicator) on the flow model.
pub fn transfers(system_name: &str, list: &[Transfer], seed: u64) -> Result<FlowTimed> {
    let s = setup(system_name)?;
    transfers_on(&s, list, seed)
}

/// The same on a prepared [`Setup`].
pub fn transfers_on(s: &Setup, list: &[Transfer], seed: u64) -> Result<FlowTimed> {
    let net = flow_net(s)?;
    tofusim_comm::exec::flow::transfers(&machine(s, &net, &Modes::default(), &Interrupt::never()), list, seed).map_err(|m| ConfigError::new("<flow>", "transfers", m.to_string()))
}

/// A collective schedule on the flow model (`tofusim_comm::exec::flow`):
/// the time of its last step, seconds.
pub fn schedule_time(s: &Setup, schedule: &tofusim_comm::Schedule, modes: &Modes, seed: u64, interrupt: &dyn Stop) -> Result<f64> {
    let net = flow_net(s)?;
    tofusim_comm::exec::flow::schedule_time(&machine(s, &net, modes, interrupt), schedule, seed).map_err(|m| ConfigError::new("<flow>", "schedule", m.to_string()))
}

/// A collective's lockstep rounds on the flow model
/// (`tofusim_comm::exec::rounds`).
pub fn rounds_time(s: &Setup, rounds: &tofusim_comm::Rounds, modes: &Modes, seed: u64, interrupt: &dyn Stop) -> Result<RoundsTimed> {
    rounds_time_with(s, rounds, modes, seed, interrupt, tofusim_comm::exec::rounds::Reuse::Yes)
}

/// [`rounds_time`], reusing solutions or solving every round afresh (the
/// reference the reuse is tested against).
pub fn rounds_time_with(s: &Setup, rounds: &tofusim_comm::Rounds, modes: &Modes, seed: u64, interrupt: &dyn Stop, reuse: tofusim_comm::exec::rounds::Reuse) -> Result<RoundsTimed> {
    let net = flow_net(s)?;
    tofusim_comm::exec::rounds::rounds_time_with(&machine(s, &net, modes, interrupt), rounds, seed, reuse).map_err(|m| ConfigError::new("<flow>", "rounds", m.to_string()))
}
