//! A recorded MPI program replayed on a system: `tofusim replay`.
//!
//! The program (matched messages, collective instances, per-rank calls;
//! [`tofusim_comm::replay`]) becomes one schedule, run by the packet
//! engine or the flow model over the system's nodes: rank `i` on the
//! `i`-th node of the system's communicator order (the one `tofusim coll`
//! uses: Tofu's virtual torus, a torus's node order), or where an order
//! file puts it. The MPI layer's parameters are the system generation's
//! MPI software ([`crate::generation::Generation::mpi_software`]).

// Rates carry their unit in the name (`shared_memory_Bps`), as the JSON keys do.
#![allow(non_snake_case)]

use serde::Serialize;
use tofusim_comm::mpi::MpiConfig;
use tofusim_comm::replay::{build, Phase, ReplayParams, ReplayProgram, Timeline};

use crate::build::Setup;
use crate::collective::{run_on, Model, RunSummary, ScheduleOptions};
use crate::comm_model::Modes;
use crate::error::{ConfigError, Result};

const WHERE: &str = "<command line>";

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::new(WHERE, key, message)
}

/// Values of the MPI layer to use instead of the K computer's (e.g. a
/// model of the machine a trace was recorded on, fitted to its ping-pong).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpiOverrides {
    pub eager_limit_bytes: Option<u64>,
    pub llp_limit_bytes: Option<u64>,
    pub llp_ns: Option<u32>,
    pub stack_ns: Option<u32>,
    pub rendezvous_ns: Option<u32>,
    pub saving_extra_ns: Option<u32>,
    /// Ranks sharing one machine's memory (a model of the machine a trace
    /// was recorded on): no NIC overheads beside the MPI layer's software,
    /// and copies and reductions at this rate, bytes per second. The
    /// host costs that hold the software of the BG/L, Aries and generic
    /// profiles are cleared with the NIC's, so the layer's software is then
    /// the K computer's unless overridden.
    pub shared_memory_Bps: Option<f64>,
}

impl MpiOverrides {
    /// Whether any value is overridden.
    pub fn is_set(&self) -> bool {
        let Self { eager_limit_bytes, llp_limit_bytes, llp_ns, stack_ns, rendezvous_ns, saving_extra_ns, shared_memory_Bps } = self;
        eager_limit_bytes.is_some() || llp_limit_bytes.is_some() || llp_ns.is_some() || stack_ns.is_some() || rendezvous_ns.is_some() || saving_extra_ns.is_some() || shared_memory_Bps.is_some()
    }

    pub fn apply(&self, mut c: MpiConfig) -> MpiConfig {
        c.eager_limit_bytes = self.eager_limit_bytes.unwrap_or(c.eager_limit_bytes);
        c.llp_limit_bytes = self.llp_limit_bytes.unwrap_or(c.llp_limit_bytes);
        c.llp_ns = self.llp_ns.unwrap_or(c.llp_ns);
        c.stack_ns = self.stack_ns.unwrap_or(c.stack_ns);
        c.rendezvous_ns = self.rendezvous_ns.unwrap_or(c.rendezvous_ns);
        c.saving_extra_ns = self.saving_extra_ns.unwrap_or(c.saving_extra_ns);
        c
    }
}

/// What `tofusim replay` was asked (the trace comes as a program).
#[derive(Clone, Debug)]
pub struct ReplaySpec {
    /// A preset name, or the file name of `system_toml`.
    pub system: String,
    /// The system as a TOML `[network]` table instead of a preset.
    pub system_toml: Option<String>,
    pub mpi: MpiOverrides,
    /// Rank → node (node ids of the system, each holding at most
    /// `ranks.per_node` ranks); default: `ranks`' placement on the
    /// communicator order.
    pub order: Option<Vec<u32>>,
    /// Ranks per node and their placement (`--ppn`, `--placement`).
    pub ranks: crate::rank_placement::Ranks,
    /// Collectives whose members share nodes run in their node-leader form
    /// (`tofusim_comm::hierarchical`, as the Tofu libraries run them);
    /// false: flat over every member.
    pub node_leaders: bool,
    /// Packet engine or flow model (events).
    pub model: Model,
    pub compute_scale: f64,
    pub seed: u64,
    /// Per-port counters sampled every this many cycles (packet engine; 0: none).
    pub counter_cycles: u64,
    /// Wall-time budget of a packet-engine replay, minutes (`None`: none).
    pub max_minutes: Option<f64>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RankTimes {
    pub rank: u32,
    pub node: u32,
    pub end_seconds: f64,
    pub compute_seconds: f64,
    pub point_to_point_seconds: f64,
    pub collective_seconds: f64,
    pub waiting_seconds: f64,
}

/// A link and what it carried over the replay.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct LinkLoad {
    pub router: u32,
    pub port: String,
    /// Bytes on the wire (packet engine: its counters, headers included;
    /// flow model: each message's wire bytes over its routes).
    pub bytes: u64,
    /// Of the replay's time, the share the link was sending (packet engine).
    pub busy_fraction: Option<f64>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ReplayResult {
    /// False when Ctrl-C stopped the replay before the trace ended.
    pub complete: bool,
    pub system: String,
    pub model: &'static str,
    pub ranks: u32,
    pub nodes: u64,
    /// When the last rank finished, seconds of simulated time.
    pub time_seconds: f64,
    pub compute_scale: f64,
    pub messages: u64,
    pub bytes_sent: u64,
    pub steps: u64,
    pub per_rank: Vec<RankTimes>,
    /// The ten links that carried the most, most first.
    pub busiest_links: Vec<LinkLoad>,
    /// The packet engine's run (cycles, packets, invariants); none on the
    /// flow model.
    pub run: Option<RunSummary>,
    /// Whose MPI software the replay's point-to-point layer models (its
    /// protocol limits and costs) and whether that is the system's own.
    pub mpi_software: MpiSoftware,
    pub wall_seconds: f64,
    pub peak_memory_bytes: u64,
}

/// The MPI software a replay models: the system generation's
/// ([`crate::generation::Generation::mpi_software`]), with any overrides.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct MpiSoftware {
    /// `fujitsu-mpi-k`, `fujitsu-mpi-fx100`, `fujitsu-mpi-fugaku`,
    /// `cray-mpich`, `bgl-mpi`, `generic-mpi`, or `recording-machine`.
    pub profile: &'static str,
    /// False when the profile is not a particular machine's MPI (the
    /// generic MPI of a fat-tree or generic dragonfly), or when values were
    /// overridden.
    pub native: bool,
    /// Eager messages up to this size; rendezvous above, bytes.
    pub eager_limit_bytes: u64,
    pub note: String,
}

/// Ranks placed on nodes: the order's, or `placed`'s placement of the
/// communicator's nodes, its first `ranks`.
fn place(mut s: Setup, ranks: u32, order: Option<&[u32]>, placed: &crate::rank_placement::Ranks) -> Result<Setup> {
    use crate::rank_placement::RankPlacement;
    let order = match (order, &placed.placement) {
        (Some(_), RankPlacement::Map(_) | RankPlacement::Cyclic) => return Err(err("order", "a rank order and a placement both place the ranks: give one")),
        (Some(o), _) => Some(o),
        (None, RankPlacement::Map(m)) => Some(m.as_slice()),
        (None, RankPlacement::Block | RankPlacement::Cyclic) => None,
    };
    let ppn = placed.per_node;
    match order {
        Some(o) => {
            if o.len() < ranks as usize {
                return Err(err("order", format!("the order places {} ranks; the trace has {ranks}", o.len())));
            }
            let nodes = s.built.system.network.topology.node_count();
            let mut held = std::collections::HashMap::new();
            for (r, &n) in o.iter().take(ranks as usize).enumerate() {
                if n as u64 >= nodes {
                    return Err(err("order", format!("rank {r} is placed on node {n}, beyond the {nodes} nodes of the system")));
                }
                let k = held.entry(n).or_insert(0u32);
                *k += 1;
                if *k > ppn {
                    return Err(err("order", format!("rank {r} is placed on node {n}, which holds {ppn} ranks already (--ppn {ppn})")));
                }
            }
            s.node_of_rank = o[..ranks as usize].to_vec();
            if ppn > 1 {
                s.grid = None;
            }
        }
        None => {
            let nodes = s.node_of_rank.len();
            s = placed.place(s)?;
            if (s.node_of_rank.len() as u64) < ranks as u64 {
                return Err(err("system", format!("the trace has {ranks} ranks and the system {nodes} nodes x {ppn} ranks per node; give a larger shape or more --ppn")));
            }
            s.node_of_rank.truncate(ranks as usize);
        }
    }
    Ok(s)
}

/// The torus shapes a collective over every rank in rank order sees, from
/// the unplaced system (a rank per node in the communicator's order):
/// flat only with one rank per node placed by block or cyclic, among node
/// leaders unless a map or an order places the ranks.
pub fn world_grids(unplaced: &Setup, ranks: &crate::rank_placement::Ranks, order_given: bool) -> tofusim_comm::replay::WorldGrids {
    use crate::rank_placement::RankPlacement;
    let mapped = order_given || matches!(ranks.placement, RankPlacement::Map(_));
    tofusim_comm::replay::WorldGrids {
        flat: if ranks.per_node == 1 && !mapped { unplaced.grid } else { None },
        leaders: if mapped { None } else { unplaced.node_grid },
    }
}

/// What the result says about the MPI software `mpi` (the generation's,
/// after `spec`'s overrides).
fn mpi_software_of(mpi: &MpiConfig, generation: crate::generation::Generation, spec: &ReplaySpec) -> MpiSoftware {
    use crate::generation::Generation as G;
    let overridden = spec.mpi.is_set();
    let generic = matches!(generation, G::GenericDragonfly | G::FatTree);
    let mut note = format!("{}; sources per value in docs/model.md", mpi.summary);
    if spec.mpi.shared_memory_Bps.is_some() {
        note = "the recording machine's MPI: K's layer with the software cost fitted to the calibration's ping-pong, over shared memory (host costs cleared)".into();
    }
    if overridden {
        note.push_str("; values overridden by --mpi");
    }
    MpiSoftware { profile: mpi.profile, native: !generic && !overridden, eager_limit_bytes: mpi.eager_limit_bytes, note }
}

fn ranks_of(timeline: &Timeline, finish: impl Fn(usize, u32) -> f64, node_of_rank: &[u32]) -> Vec<RankTimes> {
    let parts = timeline.breakdown(&finish);
    parts
        .iter()
        .enumerate()
        .map(|(r, p)| RankTimes {
            rank: r as u32,
            node: node_of_rank[r],
            end_seconds: p.iter().sum(),
            compute_seconds: p[Phase::Compute as usize],
            point_to_point_seconds: p[Phase::PointToPoint as usize],
            collective_seconds: p[Phase::Collective as usize],
            waiting_seconds: p[Phase::Waiting as usize],
        })
        .collect()
}

/// The ten links the flow model's routes load most: each message's wire
/// bytes spread over its routes as the flow executor spreads them.
fn flow_link_loads(
    net: &tofusim_flow::FlowNet,
    schedule: &tofusim_comm::Schedule,
    node_of_rank: &[u32],
    m: &tofusim_comm::exec::flow::FlowMachine,
    seed: u64,
) -> Vec<LinkLoad> {
    let bytes = flow_link_bytes(net, schedule, node_of_rank, m, seed);
    let mut top: Vec<usize> = (0..bytes.len()).filter(|&l| bytes[l] > 0.0).collect();
    top.sort_by(|&a, &b| bytes[b].total_cmp(&bytes[a]).then(a.cmp(&b)));
    top.truncate(10);
    top.into_iter()
        .map(|l| LinkLoad { router: (l / net.ports) as u32, port: net.routing.port_name((l % net.ports) as u8), bytes: bytes[l].round() as u64, busy_fraction: None })
        .collect()
}

/// The wire bytes every link (router × port) carries under `schedule` on
/// the flow model's routes.
pub(crate) fn flow_link_bytes(
    net: &tofusim_flow::FlowNet,
    schedule: &tofusim_comm::Schedule,
    node_of_rank: &[u32],
    m: &tofusim_comm::exec::flow::FlowMachine,
    seed: u64,
) -> Vec<f64> {
    use rand::SeedableRng;
    let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
    let links = net.routers * net.ports;
    let mut bytes = vec![0.0f64; links];
    let mut scratch = tofusim_flow::RouteScratch::default();
    for (r, p) in schedule.programs.iter().enumerate() {
        for st in &p.steps {
            if let tofusim_comm::Action::Send { peer, spans, tni, .. } = &st.action {
                let wire = m.wire_bytes(tofusim_comm::schedule::total(spans) * tofusim_comm::ELEMENT_BYTES) as f64;
                if node_of_rank[r] == node_of_rank[*peer as usize] {
                    continue; // through the node's memory
                }
                net.visit_routes(node_of_rank[r], node_of_rank[*peer as usize], *tni, &mut rng, &mut scratch, |route, _, share| {
                    for &l in route.iter().filter(|&&l| (l as usize) < links) {
                        bytes[l as usize] += wire * share;
                    }
                });
            }
        }
    }
    bytes
}

/// Replays `program` on `spec.system`.
pub fn run(program: &ReplayProgram, spec: &ReplaySpec, progress: tofusim_packet::Progress) -> Result<ReplayResult> {
    let wall = std::time::Instant::now();
    let s = system_for(spec)?;
    run_on_system(program, spec, s, progress, wall)
}

/// The system of `spec` built (a rank per node in the communicator's
/// order, not yet placed), after `spec`'s checks.
pub fn system_for(spec: &ReplaySpec) -> Result<Setup> {
    if spec.counter_cycles > 0 && spec.model != Model::Packet {
        return Err(err("counter-period", "samples the packet engine's counters: use the packet model"));
    }
    if !(spec.compute_scale.is_finite() && spec.compute_scale >= 0.0) {
        return Err(err("compute-scale", format!("expected a finite factor >= 0, got {}", spec.compute_scale)));
    }
    match &spec.system_toml {
        Some(text) => crate::build::setup_toml(&spec.system, text),
        None => crate::build::checked_setup(&spec.system, spec.ranks.per_node, "a replay"),
    }
}

/// [`run`] on the system `s` already built for `spec` (a rank per node in
/// the communicator's order, not yet placed): callers that replay many
/// programs on one system build it once.
pub fn run_on_system(program: &ReplayProgram, spec: &ReplaySpec, s: Setup, progress: tofusim_packet::Progress, wall: std::time::Instant) -> Result<ReplayResult> {
    let Prepared { s, schedule, timeline, mpi_software } = prepare(program, spec, s)?;
    run_prepared(program, spec, s, schedule, timeline, mpi_software, progress, wall)
}

/// A replay ready to run: the placed system, the program's schedule under
/// the system's MPI software, its timeline and which software it is.
pub struct Prepared {
    pub s: Setup,
    pub schedule: tofusim_comm::Schedule,
    pub timeline: Timeline,
    pub mpi_software: MpiSoftware,
}

/// Places `program`'s ranks on `s` and builds its schedule.
pub fn prepare(program: &ReplayProgram, spec: &ReplaySpec, s: Setup) -> Result<Prepared> {
    let world = world_grids(&s, &spec.ranks, spec.order.is_some());
    let mut s = place(s, program.ranks, spec.order.as_deref(), &spec.ranks)?;
    s.max_minutes = spec.max_minutes;
    if let Some(bps) = spec.mpi.shared_memory_Bps {
        if !(bps.is_finite() && bps > 0.0) {
            return Err(err("mpi", format!("shared_memory_Bps: expected a positive rate, got {bps}")));
        }
        s.built.model.components.clear();
        s.built.model.copy_Bps = bps;
        s.built.model.reduce_Bps = bps;
    }
    let generation = s.built.system.generation;
    // The recording machine's model (shared memory): K's layer as the base
    // of the values fitted to its calibration.
    let base = if spec.mpi.shared_memory_Bps.is_some() { MpiConfig { profile: "recording-machine", ..MpiConfig::k_computer() } } else { generation.mpi_software() };
    // An override of a part the profile does not have would change nothing.
    if spec.mpi.saving_extra_ns.is_some() && base.switch_after_exchanges == 0 {
        return Err(err("mpi", format!("saving_extra_ns: the {} profile has no memory-saving mode (its buffers are high-speed from the first message)", base.profile)));
    }
    if spec.mpi.llp_ns.is_some() && base.llp_limit_bytes == 0 && spec.mpi.llp_limit_bytes.is_none_or(|b| b == 0) {
        return Err(err("mpi", format!("llp_ns: the {} profile has no low-latency path; give llp_limit_bytes too", base.profile)));
    }
    let mpi = spec.mpi.apply(base);
    let mpi_software = mpi_software_of(&mpi, generation, spec);
    let params = ReplayParams {
        mpi,
        compute_scale: spec.compute_scale,
        tnis: s.built.model.tnis.max(1),
        segment_bytes: 64 << 10,
        node_of_rank: spec.node_leaders.then(|| s.node_of_rank.clone()),
        gates: generation.gate_timing(),
        world,
        pipeline: Some(crate::collective::pipeline_costs(&s.built.model)),
    };
    let (schedule, timeline) = build(program, &params).map_err(|e| ConfigError::of(WHERE, e.key, e))?;
    Ok(Prepared { s, schedule, timeline, mpi_software })
}

#[allow(clippy::too_many_arguments)]
fn run_prepared(program: &ReplayProgram, spec: &ReplaySpec, s: Setup, schedule: tofusim_comm::Schedule, timeline: Timeline, mpi_software: MpiSoftware, progress: tofusim_packet::Progress, wall: std::time::Instant) -> Result<ReplayResult> {
    let (messages, bytes_sent) = (schedule.messages(), schedule.bytes_sent());
    let steps: u64 = schedule.programs.iter().map(|p| p.steps.len() as u64).sum();
    let node_of_rank = s.node_of_rank.clone();
    let nodes = node_of_rank.len() as u64;
    let modes = Modes::default();
    let (time_seconds, per_rank, run, model, busiest_links) = match spec.model {
        Model::Packet => {
            let opts = ScheduleOptions { modes, seed: spec.seed, counter_cycles: spec.counter_cycles };
            let (timed, finish) = run_on(s, schedule, &opts, progress, |st| st.step_finish_cycles())?;
            if !timed.run.complete && !timed.run.interrupted {
                // A step that never ran: the first one, for the message.
                let stuck = finish.iter().enumerate().find_map(|(r, f)| f.iter().position(|&c| c == u64::MAX).map(|i| (r, i)));
                let at = stuck.map_or_else(String::new, |(r, i)| format!(" (rank {r} stopped at step {i}: {})", timed.schedule.programs[r].steps[i].action.describe()));
                let why = timed.run.invariant_error.clone().unwrap_or_else(|| if timed.run.deadlock { "deadlock".into() } else { "incomplete".into() });
                return Err(err(
                    "trace",
                    format!("the replay did not finish on the packet engine{at}: {why}; the trace's calls wait for each other under this MPI layer's protocols (e.g. an eager-sized message the target sends by rendezvous)"),
                ));
            }
            let cycle_s = timed.run.cycle_ns * 1e-9;
            let per_rank = ranks_of(&timeline, |r, i| finish[r][i as usize] as f64 * cycle_s, &node_of_rank);
            let cycles = timed.cycles.max(1) as f64;
            let links = timed
                .busiest_ports
                .iter()
                .map(|p| LinkLoad { router: p.router, port: p.port.clone(), bytes: p.counters.bytes, busy_fraction: Some(p.counters.busy_cycles as f64 / cycles) })
                .collect();
            (timed.time_seconds, per_rank, Some(timed.run), "packet", links)
        }
        Model::Flow | Model::FlowEvents => {
            let mut ask = || progress(0.0).is_break();
            let interrupt = tofusim_flow::Interrupt::new(&mut ask);
            let net = crate::flow_model::flow_net(&s)?;
            let m = crate::flow_model::machine(&s, &net, &modes, &interrupt);
            let finish = tofusim_comm::exec::flow::schedule_finish_times(&m, &schedule, spec.seed).map_err(|e| err("trace", e.to_string()))?;
            let mut base = vec![0usize];
            for p in &schedule.programs {
                base.push(base.last().copied().unwrap_or(0) + p.steps.len());
            }
            let per_rank = ranks_of(&timeline, |r, i| finish[base[r] + i as usize], &node_of_rank);
            let links = flow_link_loads(&net, &schedule, &node_of_rank, &m, spec.seed);
            (finish.iter().copied().fold(0.0, f64::max), per_rank, None, "flow", links)
        }
        Model::FlowRounds => return Err(err("model", "a replay has no lockstep rounds form; use flow or packet")),
    };
    Ok(ReplayResult {
        complete: run.as_ref().is_none_or(|r| !r.interrupted),
        mpi_software,
        system: spec.system.clone(),
        model,
        ranks: program.ranks,
        nodes,
        time_seconds,
        compute_scale: spec.compute_scale,
        messages,
        bytes_sent,
        steps,
        per_rank,
        busiest_links,
        run,
        wall_seconds: wall.elapsed().as_secs_f64(),
        peak_memory_bytes: tofusim_packet::result::peak_memory_bytes(),
    })
}
