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
use tofusim_comm::algorithms::barrier_interface::GateTiming;
use tofusim_comm::algorithms::{build_sized, Params};
use tofusim_comm::{Algorithm, Operation};
use tofusim_comm::tree::{Grid, TrinaryTrees};
use tofusim_comm::exec::data;
use tofusim_comm::{Collective, ScheduleRun, ELEMENT_BYTES};

use tofusim_packet::{Engine, RunParams, RunResult};



use crate::comm_model::Modes;
use crate::communicators::{as_group, Communicators};
use crate::rank_placement::{RankPlacement, Ranks};
pub use crate::build::{setup, torus_setup, Setup};
use crate::error::{ConfigError, Result};


const WHERE: &str = "<command line>";

/// What `tofusim coll` was asked.
#[derive(Clone, Debug)]
pub struct CollectiveSpec {
    pub op: Operation,
    pub algorithm: Algorithm,
    /// The vector (bcast, reduce, allreduce), each rank's block
    /// (allgather) or each rank's block per destination (alltoall), bytes.
    pub size_bytes: u64,
    pub system: String,
    pub root: u32,
    /// Pipelining segment of the chain and tree algorithms, bytes
    /// (`None`: the algorithm's own, [`settings`]).
    pub segment_bytes: Option<u64>,
    /// TNIs the algorithm may use (`None`: as many as the algorithm is
    /// defined on, at most the node's, [`settings`]).
    pub tnis: Option<u8>,
    pub modes: Modes,
    pub verify: bool,
    pub seed: u64,
    pub model: Model,
    /// Wall-time budget of a packet-engine run, minutes (`None`: none).
    pub max_minutes: Option<f64>,
    /// Per-port counters sampled every this many cycles (packet engine; 0: none).
    pub counter_cycles: u64,
    /// Keep every step's finish cycle in the result (packet engine; what
    /// the report animates; a number per step, so only when asked).
    pub steps: bool,
    /// Trees for the trinary-tree algorithms instead of their own
    /// construction ([`trees_from_json`]).
    pub trees: Option<std::sync::Arc<TrinaryTrees>>,
    /// Ranks per node and their placement (`--ppn`, `--placement`).
    pub ranks: Ranks,
    /// With ranks sharing nodes: run flat over every rank instead of in
    /// the node-leader form ([`schedule_on`]).
    pub flat: bool,
    /// `Some`: no algorithm was named, the MPI library's rules choose it
    /// once the system is known ([`settle`]; `Some(None)`: the system's
    /// library). `algorithm` holds the operation's first until then.
    pub library: Option<Option<tofusim_comm::library::Library>>,
    /// The communicators that run it (`--comm`): the world, or
    /// sub-communicators side by side.
    pub comm: Communicators,
}

impl CollectiveSpec {
    /// The request the Python API hands over as JSON (`tofusim.coll`'s
    /// arguments, each checked for its type there): every key checked here
    /// once, absent keys taking the command's defaults.
    pub fn from_json(spec: &str) -> Result<CollectiveSpec> {
        let v = crate::request_json::Fields::parse(spec)?;
        let get_u = |k: &str, d: u64| v.whole(k, d);
        let get_s = |k: &str| v.text(k);
        let modes = Modes::parse(&get_s("descriptor"), v.get("cache_injection").and_then(|x| x.as_bool()).unwrap_or(true), &get_s("cmg"))?;
        let named_library = v.library()?;
        let (op, algorithm, library) = match get_s("algo").as_str() {
            "" => {
                let op = Operation::parse(&get_s("op")).map_err(|e| err(e.key, e.message))?;
                (op, Algorithm::of(op)[0], Some(named_library))
            }
            algo => {
                if named_library.is_some() {
                    return Err(err("library", "a library's rules choose the algorithm; --algo names one: give one of them"));
                }
                let (op, a) = Algorithm::parse_named(&get_s("op"), algo).map_err(|e| err(e.key, e.message))?;
                (op, a, None)
            }
        };
        if library.is_some() && v.get("trees").is_some_and(|t| !t.is_null()) {
            return Err(err("trees", "trees fit a trinary-tree algorithm: name it (--algo trinaryx3 or trinary-tree)"));
        }
        Ok(CollectiveSpec {
            library,
            op,
            algorithm,
            size_bytes: get_u("size_bytes", 8)?,
            system: get_s("system"),
            root: u32::try_from(get_u("root", 0)?).map_err(|_| ConfigError::argument("root", "expected a rank of the communicator"))?,
            segment_bytes: match v.get("segment_bytes") {
                None | Some(serde_json::Value::Null) => None,
                Some(_) => Some(get_u("segment_bytes", 0)?),
            },
            tnis: match get_u("tnis", 0)? {
                0 if v.get("tnis").is_none_or(|x| x.is_null()) => None,
                t => Some(u8::try_from(t).map_err(|_| ConfigError::argument("tnis", format!("expected 1 to the node's TNIs, found {t}")))?),
            },
            modes,
            verify: v.flag("verify"),
            max_minutes: v.max_minutes()?,
            seed: get_u("seed", 1)?,
            counter_cycles: get_u("counter_cycles", 0)?,
            steps: v.flag("steps"),
            trees: match v.get("trees") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(text)) => {
                    let source = v.get("trees_source").and_then(|x| x.as_str()).unwrap_or("<trees>");
                    Some(std::sync::Arc::new(trees_from_json(text, source)?))
                }
                Some(other) => {
                    let kind = if other.is_object() { "an object" } else { "not text" };
                    return Err(ConfigError::argument("trees", format!("expected the trees file's JSON text, found {kind}")));
                }
            },
            ranks: v.ranks()?,
            flat: v.flag("flat"),
            comm: Communicators::parse(&get_s("comm"))?,
            model: {
                let m = v.get("model").and_then(|x| x.as_str()).unwrap_or("packet");
                Model::parse(m).ok_or_else(|| ConfigError::argument("--model", format!("unknown model `{m}`; expected one of: {}", Model::NAMES.join(", "))))?
            },
        })
    }
}

/// A file of trees as `tofusim coll --trees` reads it: the communicator's
/// axis lengths and, per tree, every rank's parent (`null` at the root;
/// rank = x + Lx·(y + Ly·z)).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TreesFile {
    lengths: [u32; 3],
    parents: [Vec<Option<u32>>; 3],
    /// What made them (free text, not read).
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
}

/// The trees of a trees file (`source` names it in errors), checked
/// ([`TrinaryTrees::from_parents`]).
pub fn trees_from_json(text: &str, source: &str) -> Result<TrinaryTrees> {
    let f: TreesFile = serde_json::from_str(text).map_err(|e| {
        ConfigError::new(source, "trees", format!("expected {{\"lengths\": [Lx, Ly, Lz], \"parents\": [three lists of each rank's parent, null at the root]}}: {e}"))
    })?;
    let mut t = TrinaryTrees::from_parents(Grid::new(f.lengths), f.parents).map_err(|e| ConfigError::of(source, e.key, e))?;
    t.source = source.to_string();
    Ok(t)
}

/// An algorithm's refusal as a configuration error: one about the given
/// trees names their file.
fn build_err(spec: &CollectiveSpec, e: tofusim_comm::algorithms::BuildError) -> ConfigError {
    match (&spec.trees, e.key) {
        (Some(t), "trees") => ConfigError::new(&t.source, "trees", e.message),
        _ => err(e.key, e.message),
    }
}

/// Which model times a collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// The packet engine, every packet simulated.
    Packet,
    /// The flow model on the schedule's messages, event by event.
    FlowEvents,
    /// The flow model on the algorithm's lockstep rounds (full machines).
    FlowRounds,
    /// The flow model: by events when the schedule is small enough, by
    /// rounds when it is not and the algorithm has a rounds form.
    Flow,
}

impl Model {
    pub const NAMES: [&'static str; 4] = ["packet", "flow", "flow-events", "flow-rounds"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "packet" => Self::Packet,
            "flow" => Self::Flow,
            "flow-events" => Self::FlowEvents,
            "flow-rounds" => Self::FlowRounds,
            _ => return None,
        })
    }
}

/// Most messages an explicit schedule may have (its steps are held in
/// memory, two per message).
pub const MAX_SCHEDULE_MESSAGES: u64 = 40_000_000;

/// About how many messages `spec`'s schedule has over `p` ranks (an upper
/// estimate, to refuse schedules that cannot be held in memory before
/// building them).
pub fn estimated_messages(spec: &CollectiveSpec, p: u64) -> u64 {
    messages_estimate(
        Some(spec.op),
        spec.algorithm,
        spec.size_bytes,
        spec.segment_bytes,
        p,
    )
}

/// [`estimated_messages`] from the operation (`None`: one outside the
/// library, scan, gather, …, with one of its algorithms), algorithm, size
/// and segment.
pub fn messages_estimate(
    op: Option<Operation>,
    algorithm: Algorithm,
    size_bytes: u64,
    segment_bytes: Option<u64>,
    p: u64,
) -> u64 {
    let log = 64 - p.max(1).leading_zeros() as u64;
    let segs = match segment_bytes {
        Some(b) => size_bytes.div_ceil(b.max(1)),
        // A segment derived from the pipeline depth cuts a part of S bytes
        // into sqrt(S (H - 1) beta / alpha) segments ([`pipeline_segment`]);
        // (H - 1) beta / alpha stays under 1/16 per byte on every modelled
        // system (H below 300 stages, alpha above 300 ns, beta below 1 ns/B).
        None if algorithm.is_trinary_tree() => {
            (size_bytes as f64 / 16.0).sqrt().ceil() as u64
        }
        None => size_bytes.div_ceil(DEFAULT_SEGMENT_BYTES),
    }
    .max(1);
    let all_pairs = p.saturating_mul(p.saturating_sub(1));
    let plog = p.saturating_mul(log);
    use Algorithm::*;
    match algorithm {
        Pairwise | OverlaidSymmetric => all_pairs,
        Ring if op == Some(Operation::Allreduce) => all_pairs.saturating_mul(2),
        Ring | ScatterAllgather | QuadRings => all_pairs.saturating_add(plog),
        Chain | TrinaryTree | Trinaryx3 => p.saturating_mul(6).saturating_mul(segs),
        Dissemination | RecursiveDoubling | Tree | Binomial | Rabenseifner | Bruck | BarrierInterface => plog.saturating_mul(2).saturating_add(p.saturating_mul(2)),
    }
}
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct CollectiveResult {
    /// Every step of the collective ran (false after a deadlock, an
    /// invariant violation or Ctrl-C: the time is then not the
    /// collective's).
    pub complete: bool,
    /// The model that timed it: `packet`, `flow-events` or `flow-rounds`.
    pub model: Model,
    pub op: String,
    pub algo: String,
    pub size_bytes: u64,
    pub processes: u32,
    /// Ranks per node (`--ppn`: with a map, the most a node may hold),
    /// and how they were placed: `block`, `cyclic` or `map`.
    pub ranks_per_node: u32,
    pub placement: &'static str,
    /// Whether ranks sharing a node ran the collective in its node-leader
    /// form (fan in through memory, the algorithm among one rank per node,
    /// fan out) rather than flat over every rank.
    pub node_leaders: bool,
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
    /// The segment and TNIs the algorithm ran with, and where each came
    /// from (given, or the algorithm's definition).
    pub settings: Settings,
    /// Packet-engine statistics of the run (packet model only).
    pub run: Option<RunSummary>,
    /// Flow-model statistics of the run (flow models only).
    pub flow: Option<FlowSummary>,
    /// Every step and when it finished (packet engine, when asked:
    /// [`CollectiveSpec::steps`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<StepTimes>,
    /// The schedule's steps when they were asked for but were more than
    /// [`MAX_STEP_TIMES`] (none kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps_omitted: Option<u64>,
    /// The trees given instead of the built ones ([`CollectiveSpec::trees`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trees: Option<GivenTrees>,
    /// Sub-communicators that ran side by side (`--comm`); absent for the
    /// world. `processes` then counts every rank of the system, and the
    /// size, bandwidth, shape and settings are one communicator's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub communicators: Option<SubCommunicators>,
}

/// The sub-communicators of a run (`tofusim coll --comm`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SubCommunicators {
    /// As `--comm` spells it (`x`, `blocks:16`, `ranks:0-7`).
    pub comm: String,
    /// How many ran at once.
    pub count: u32,
    /// Ranks in each (the largest).
    pub ranks_each: u32,
}

/// Which given trees a run used: their file and each tree's depth in arcs.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct GivenTrees {
    pub source: String,
    pub depths: [u32; 3],
}

/// Most steps whose finish cycles a result keeps ([`CollectiveSpec::steps`]):
/// a step takes about 40 bytes here and more on its way to Python as JSON;
/// the 2.1 million of an all-to-all of 1,024 ranks took `tofusim coll
/// --out` from 4.5 s and 0.5 GB to 6.7 s and 0.8 GB.
pub const MAX_STEP_TIMES: u64 = 4_000_000;

/// What a step does, as [`StepTimes::kind`] numbers it.
pub const STEP_KINDS: [&str; 4] = ["send", "recv", "copy", "work"];

/// Every step of a schedule run on the packet engine and the cycle it
/// finished, as columns (one entry per step, ranks in order, each rank's
/// steps in program order): the progress of the schedule over the network
/// that `tofusim report` animates.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct StepTimes {
    /// Names of the `kind` numbers ([`STEP_KINDS`]).
    pub kinds: [&'static str; 4],
    pub rank: Vec<u32>,
    /// The node the rank runs on.
    pub node: Vec<u32>,
    /// The step's index in its rank's program.
    pub step: Vec<u32>,
    pub kind: Vec<u8>,
    /// The other rank of a send or receive (`None` for local steps).
    pub peer: Vec<Option<u32>>,
    /// Bytes sent, received or copied (0 for work).
    pub bytes: Vec<u64>,
    /// Cycle the step finished (`None`: it never ran).
    pub finish_cycle: Vec<Option<u64>>,
}

impl StepTimes {
    /// The steps of `s` with their finish cycles (`finish[rank][step]`,
    /// `u64::MAX` for a step that never ran) on the nodes `node_of_rank`.
    pub fn new(s: &tofusim_comm::Schedule, node_of_rank: &[u32], finish: &[Vec<u64>]) -> Self {
        use tofusim_comm::schedule::{total, Action};
        let mut t = StepTimes { kinds: STEP_KINDS, ..Default::default() };
        for (rank, (program, times)) in s.programs.iter().zip(finish).enumerate() {
            for (i, (step, &f)) in program.steps.iter().zip(times).enumerate() {
                let (kind, peer, elements) = match &step.action {
                    Action::Send { peer, spans, .. } => (0, Some(*peer), total(spans)),
                    Action::Recv { peer, spans, .. } => (1, Some(*peer), total(spans)),
                    Action::Copy(c) => (2, None, total(&c.from)),
                    Action::Work { .. } => (3, None, 0),
                };
                t.rank.push(rank as u32);
                t.node.push(node_of_rank[rank]);
                t.step.push(i as u32);
                t.kind.push(kind);
                t.peer.push(peer);
                t.bytes.push(elements * ELEMENT_BYTES);
                t.finish_cycle.push((f != u64::MAX).then_some(f));
            }
        }
        t
    }
}

/// How the flow model timed a collective.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FlowSummary {
    pub wall_seconds: f64,
    pub peak_memory_bytes: u64,
    /// The rounds form's figures (the `flow-rounds` model).
    pub rounds: Option<crate::flow_model::RoundsTimed>,
    /// Stopped by Ctrl-C before the schedule ended: no time is known
    /// (`time_seconds` 0, `complete` false).
    pub interrupted: bool,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RunSummary {
    /// Every step ran (no deadlock, no invariant violation, no interrupt).
    pub complete: bool,
    /// Stopped early by Ctrl-C: `cycles` and the time are up to then.
    pub interrupted: bool,
    pub cycles: u64,
    pub cycle_ns: f64,
    pub packets_delivered: u64,
    pub link_utilization: f64,
    pub deadlock: bool,
    pub invariant_error: Option<String>,
    pub wall_seconds: f64,
    /// Network latency of the collective's packets (injection to
    /// delivery), cycles.
    pub latency: tofusim_packet::stats::LatencySummary,
    /// Packets by latency: (bin's lower bound in cycles, packets).
    pub latency_distribution: Vec<(f64, u64)>,
    /// Per-port and per-VC counter samples every `counter_cycles` of the
    /// run (none unless asked: `--counter-period`); in JSON their count.
    #[serde(skip_serializing_if = "tofusim_packet::result::CounterSamples::is_empty")]
    pub counter_samples: tofusim_packet::result::CounterSamples,
    /// What limited the network's part ([`tofusim_packet::limits`]).
    pub limits: tofusim_packet::limits::Limits,
    /// The schedule's critical path and each rank's time split
    /// ([`tofusim_comm::exec::critical_path`]).
    pub critical_path: Option<tofusim_comm::exec::critical_path::CriticalPath>,
}

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::new(WHERE, key, message)
}

/// Builds the schedule of `spec` for the system's communicator.
pub fn schedule(
    spec: &CollectiveSpec,
    ranks: u32,
    grid: Option<Grid>,
    tnis: u8,
    gates: Option<GateTiming>,
) -> Result<tofusim_comm::Schedule> {
    build_sized(spec.op, spec.algorithm, spec.root, spec.size_bytes, algorithm_params(spec, ranks, grid, tnis, gates)).map_err(|e| build_err(spec, e))
}

/// The schedule of `spec` over `s`'s ranks. When ranks share nodes, the
/// barrier, bcast, reduce and allreduce run in their node-leader form
/// (`tofusim_comm::hierarchical`: fan in through memory, the algorithm
/// among one leader per node on the nodes' torus shape, fan out), as the
/// Tofu libraries run them, unless `spec.flat`. Returns whether it did.
pub fn schedule_on(spec: &CollectiveSpec, s: &Setup, tnis: u8) -> Result<(tofusim_comm::Schedule, bool)> {
    use tofusim_comm::hierarchical;
    let ranks = s.node_of_rank.len() as u32;
    if !runs_on_node_leaders(spec, s) {
        return Ok((schedule(spec, ranks, s.grid, tnis, gates_of(s))?, false));
    }
    let (order, _) = hierarchical::leaders(&s.node_of_rank);
    let inner_spec = CollectiveSpec { root: algorithm_root(spec, s)?, ..spec.clone() };
    let inner = schedule(&inner_spec, order.len() as u32, s.node_grid, tnis, gates_of(s))?;
    let sched = hierarchical::node_leaders(spec.op.collective(spec.root), &s.node_of_rank, &inner).map_err(|e| build_err(spec, e))?;
    Ok((sched, true))
}

/// The barrier interface of `s`'s generation, if it has one.
fn gates_of(s: &Setup) -> Option<GateTiming> {
    s.built.system.generation.gate_timing()
}

/// The root as the algorithm sees it: `spec.root`, or among node leaders
/// its index among them, refused when the root does not lead its node
/// (bcast and reduce; the other operations have no root).
fn algorithm_root(spec: &CollectiveSpec, s: &Setup) -> Result<u32> {
    if !runs_on_node_leaders(spec, s) || !matches!(spec.op, Operation::Bcast | Operation::Reduce) {
        return Ok(if runs_on_node_leaders(spec, s) { 0 } else { spec.root });
    }
    let (order, leader_of) = tofusim_comm::hierarchical::leaders(&s.node_of_rank);
    let Some(&leader) = leader_of.get(spec.root as usize) else {
        return Err(err("root", format!("expected a rank from 0 to {}, found {}", s.node_of_rank.len().saturating_sub(1), spec.root)));
    };
    if leader != spec.root {
        return Err(err(
            "root",
            format!("rank {} shares node {} with rank {leader}: a root must be its node's first rank (or run flat: --flat)", spec.root, s.node_of_rank[spec.root as usize]),
        ));
    }
    Ok(order.iter().position(|&l| l == spec.root).unwrap_or(0) as u32)
}

/// Whether `spec` runs in its node-leader form on `s` ([`schedule_on`]).
fn runs_on_node_leaders(spec: &CollectiveSpec, s: &Setup) -> bool {
    let leaders_apply = matches!(spec.op, Operation::Barrier | Operation::Bcast | Operation::Reduce | Operation::Allreduce);
    let shared = tofusim_comm::hierarchical::leaders(&s.node_of_rank).0.len() < s.node_of_rank.len();
    !spec.flat && shared && leaders_apply
}

/// The torus shape the algorithm of `spec` sees on `s`: the nodes' when
/// it runs among node leaders, else the communicator's.
pub fn algorithm_grid(spec: &CollectiveSpec, s: &Setup) -> Option<Grid> {
    if runs_on_node_leaders(spec, s) {
        s.node_grid
    } else {
        s.grid
    }
}

/// What the algorithms are given of `spec` (the element count is set by
/// the builder that needs it): the communicator, the TNIs (`spec`'s or the
/// node's `tnis`), the segment and any given trees.
fn algorithm_params(spec: &CollectiveSpec, ranks: u32, grid: Option<Grid>, tnis: u8, gates: Option<GateTiming>) -> Params {
    let mut params = Params::new(ranks, 0);
    params.gates = gates;
    params.grid = grid;
    params.tnis = spec.tnis.unwrap_or(tnis).max(1);
    params.segment_elements = spec.segment_bytes.unwrap_or(DEFAULT_SEGMENT_BYTES).div_ceil(ELEMENT_BYTES).max(1);
    params.trees = spec.trees.clone();
    params
}

/// The segment of pipelined algorithms without a derivation of their own
/// (chain): long enough to amortise per-message costs, short enough to
/// fill a pipeline of a few dozen hops.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 << 10;

/// The segment and TNIs a collective ran with, each with where it came
/// from: given on the command line, or the algorithm's own definition.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Settings {
    /// Why this algorithm: `given (--algo)`, or the MPI library's rule
    /// that chose it when none was named.
    pub algorithm: String,
    pub segment_bytes: u64,
    pub segment: String,
    pub tnis: u8,
    pub tnis_reason: String,
}

/// The TNIs algorithm `algo` is defined on, and the source ([`None`]:
/// every TNI of the node, the point-to-point rule of spreading messages
/// round-robin over them).
fn defined_tnis(algo: Algorithm) -> Option<(u8, &'static str)> {
    use Algorithm::*;
    let why = match algo {
        Trinaryx3 | TrinaryTree => "three trees, one TNI each (Trinaryx3 uses 3 TNIs: Shida et al., Fujitsu Sci. Tech. J. 48(3), 2012)",
        QuadRings => "four parts, each moved by its own TNI (reconstruction of the three-phase quad rings)",
        BarrierInterface => "the barrier gates of one TNI: one barrier channel per rank (Tofu barrier interface)",
        _ => return None,
    };
    algo.defined_tnis().map(|t| (t, why))
}

/// `spec` with its segment and TNIs settled on setup `s`, and what was
/// settled: a given value stays (checked later); otherwise the algorithm's
/// definition — the trinary-tree algorithms on 3 TNIs with the segment
/// derived from their pipeline depth ([`pipeline_segment`]), quad rings on
/// 4, the others on every TNI of a node and 64 KiB segments.
pub fn settle(spec: &CollectiveSpec, s: &Setup) -> Result<(CollectiveSpec, Settings)> {
    let (chosen, algorithm_reason) = choose_algorithm(spec, s);
    let spec = &CollectiveSpec { algorithm: chosen, library: None, ..spec.clone() };
    let node_tnis = s.built.model.tnis.max(1);
    let (tnis, tnis_reason) = match (spec.tnis, defined_tnis(spec.algorithm)) {
        (Some(t), _) => (t, "given (--tnis)".to_string()),
        (None, Some((t, why))) if t <= node_tnis => (t, why.to_string()),
        (None, Some((_, why))) => (node_tnis, format!("all {node_tnis} of the node, fewer than the definition's: {why}")),
        (None, None) => (node_tnis, format!("every TNI of the node ({node_tnis}), messages spread round-robin")),
    };
    let pipelined_tree = spec.algorithm.is_trinary_tree();
    let (segment_bytes, segment) = match spec.segment_bytes {
        Some(b) => (b, "given (--segment)".to_string()),
        None => match (pipelined_tree, algorithm_grid(spec, s)) {
            (true, Some(g)) if tofusim_comm::tree::trinary_unsupported(&g).is_none() => {
                let phases = if spec.algorithm == Algorithm::Trinaryx3 { 2 } else { 1 };
                let p = pipeline_segment(&s.built.model, &g, algorithm_root(spec, s)?, phases, spec.size_bytes);
                (p.segment_bytes, format!("derived from the pipeline depth: a third of the vector over {} stages of {:.0} ns + {:.3} ns/B (not fitted)", p.stages, p.alpha_ns, p.ns_per_byte))
            }
            (true, Some(g)) => (DEFAULT_SEGMENT_BYTES, format!("default {} KiB: no pipeline depth to derive it from ({})", DEFAULT_SEGMENT_BYTES >> 10, tofusim_comm::tree::trinary_unsupported(&g).unwrap_or_default())),
            (true, None) => (DEFAULT_SEGMENT_BYTES, format!("default {} KiB: the communicator is not a torus, so {} falls back and has no pipeline depth to derive it from", DEFAULT_SEGMENT_BYTES >> 10, spec.algorithm)),
            (false, _) => (DEFAULT_SEGMENT_BYTES, format!("default {} KiB ({} derives no segment)", DEFAULT_SEGMENT_BYTES >> 10, spec.algorithm)),
        },
    };
    // A fat-tree node's rails are identical trees; one is simulated, so a
    // schedule's messages all take one rail's rate.
    let tnis_reason = match &s.built.system.network.topology {
        tofusim_topology::Topology::FatTree(f) if f.rails > 1 => format!("{tnis_reason}; one of the node's {} rails is simulated, so bandwidth-bound collectives run at one rail's rate", f.rails),
        _ => tnis_reason,
    };
    let mut settled = spec.clone();
    settled.tnis = Some(tnis);
    settled.segment_bytes = Some(segment_bytes);
    Ok((settled, Settings { segment_bytes, segment, tnis, tnis_reason, algorithm: algorithm_reason }))
}

/// The algorithm `spec` runs on `s` and why: the one named, or the MPI
/// library's choice for the operation, size and communicator (the one the
/// algorithm runs on: the node leaders where it runs in their form).
fn choose_algorithm(spec: &CollectiveSpec, s: &Setup) -> (Algorithm, String) {
    let Some(library) = spec.library else {
        return (spec.algorithm, "given (--algo)".into());
    };
    let generation = s.built.system.generation;
    let library = library.unwrap_or_else(|| generation.mpi_library());
    let ranks = if runs_on_node_leaders(spec, s) { tofusim_comm::hierarchical::leaders(&s.node_of_rank).0.len() as u32 } else { s.node_of_rank.len() as u32 };
    let comm = tofusim_comm::library::Communicator::on_grid(ranks, algorithm_grid(spec, s).as_ref(), generation.barrier_hardware().is_some());
    match library.choose(spec.op.name(), spec.size_bytes, comm).and_then(|c| Algorithm::named(c.algorithm).map(|a| (a, c))) {
        Some((a, c)) => {
            let instead = c.stands_in_for.map_or(String::new(), |t| format!("; standing in for {t}"));
            (a, format!("{library}'s rule: {}{instead}", c.rule))
        }
        None => (spec.algorithm, format!("{library} has no rule for {}: its first algorithm", spec.op)),
    }
}

/// A schedule run on the packet engine.
pub struct Timed {
    /// The schedule run (shared with the run's state while it ran).
    pub schedule: std::sync::Arc<tofusim_comm::Schedule>,
    pub ranks: u32,
    pub grid: Option<Grid>,
    pub cycles: u64,
    pub time_seconds: f64,
    pub run: RunSummary,
    /// Per rank, the cycle its last step finished.
    pub rank_end_cycles: Vec<u64>,
    /// The ten links that carried the most bytes, most first (the engine's
    /// per-port counters).
    pub busiest_ports: Vec<tofusim_packet::result::PortRecord>,
}

/// How a schedule runs on the packet engine: the transfers' low-latency
/// modes, the engine's seed, and how often the per-port counters are
/// sampled (0: never).
#[derive(Clone, Copy, Debug)]
pub struct ScheduleOptions {
    pub modes: Modes,
    pub seed: u64,
    pub counter_cycles: u64,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        ScheduleOptions { modes: Modes::default(), seed: 1, counter_cycles: 0 }
    }
}

/// Runs the schedule `make(ranks, grid, tnis)` builds over every node of
/// `system_name` on the packet engine.
pub fn run_schedule(
    system_name: &str,
    opts: &ScheduleOptions,
    make: impl FnOnce(u32, Option<Grid>, u8) -> Result<tofusim_comm::Schedule>,
    progress: tofusim_packet::Progress,
) -> Result<Timed> {
    let setup = setup(system_name)?;
    let s = make(setup.node_of_rank.len() as u32, setup.grid, setup.built.model.tnis)?;
    run_on(setup, s, opts, progress, |_| ()).map(|(t, ())| t)
}

/// The packet engine that runs `s` over the ranks of `setup`, with the
/// run's parameters `run`.
pub fn schedule_engine(
    setup: Setup,
    s: std::sync::Arc<tofusim_comm::Schedule>,
    modes: &Modes,
    run: RunParams,
) -> Result<Engine<ScheduleRun>> {
    let t_topology = setup.built.system.network.topology.clone();
    let max_minutes = setup.max_minutes;
    let Setup {
        built: crate::build::Built { nodes: t, dragonfly, fattree, model, injection_links, .. },
        node_of_rank,
        ..
    } = setup;
    let ranks = node_of_rank.len() as u32;
    if s.ranks != ranks {
        return Err(err("schedule", format!("{} ranks for {ranks} placed ranks", s.ranks)));
    }
    check_schedule_time(&s, &model, &t_topology, max_minutes)?;
    let timing = model.host_timing(modes);
    let run_state = ScheduleRun::new(s, node_of_rank, timing, model.packet_bytes, model.header_bytes)
        .map_err(|e| err("algo", e.to_string()))?;
    if t.node_count() < 2 {
        return Err(err("pattern", "a workload needs at least 2 nodes"));
    }
    let routing = crate::build::routing_of(&t, dragonfly.as_ref(), fattree.as_ref(), model.router.escape);
    Ok(Engine::new(routing, model.router.clone(), model.routing, run, run_state, injection_links, model.cycle_ns()))
}

/// Refuses a schedule whose packets would take the packet engine longer
/// than `max_minutes` by its usual cost per packet-hop (a replayed
/// terabyte message ran on for hours): its sends' packets times the
/// topology's mean hops, before anything is built.
fn check_schedule_time(s: &tofusim_comm::Schedule, model: &crate::comm_model::CommModel, topology: &tofusim_topology::Topology, max_minutes: Option<f64>) -> Result<()> {
    use crate::experiment::{mean_packet_hops, NS_PER_PACKET_HOP};
    let Some(budget) = max_minutes else { return Ok(()) };
    let payload = model.packet_bytes.saturating_sub(model.header_bytes).max(1) as u64;
    let packets: u64 = s
        .sends()
        .map(|(_, _, spans)| (tofusim_comm::schedule::total(spans).saturating_mul(tofusim_comm::ELEMENT_BYTES)).div_ceil(payload).max(1))
        .fold(0u64, u64::saturating_add);
    let hops = packets as f64 * mean_packet_hops(topology);
    let minutes = hops * NS_PER_PACKET_HOP * 1e-9 / 60.0;
    if minutes > budget {
        return Err(err(
            "max-time",
            format!(
                "about {packets:.3e} packets ({:.2e} packet-hops): roughly {minutes:.3e} minutes on the packet engine at its usual {:.1} us per hop, over the {budget:.0}-minute budget; use the flow model (--model flow), smaller messages, or raise the budget (--max-time 1d, or none)",
                hops,
                NS_PER_PACKET_HOP / 1000.0
            ),
        ));
    }
    Ok(())
}

/// Runs `s` on the packet engine over the ranks of `setup` (the one way a
/// schedule runs: collectives, replays, CG iterations, ping-pongs), and
/// what `inspect` reads from the finished run's state (e.g. every step's
/// finish cycle: millions of numbers for a large collective, so only when
/// asked; `|_| ()` for nothing).
pub fn run_on<T>(
    setup: Setup,
    s: tofusim_comm::Schedule,
    opts: &ScheduleOptions,
    progress: tofusim_packet::Progress,
    inspect: impl FnOnce(&ScheduleRun) -> T,
) -> Result<(Timed, T)> {
    let ScheduleOptions { ref modes, seed, counter_cycles } = *opts;
    let (grid, ranks) = (setup.grid, setup.node_of_rank.len() as u32);
    let s = std::sync::Arc::new(s);
    let run = RunParams {
        seed,
        counter_cycles,
        // A collective's result has no time series: none is sampled (a
        // long run would keep a sample per 1,000 cycles, 112,000 for a
        // ring allreduce of 16 MiB on 1,152 nodes).
        sample_cycles: u64::MAX,
        ..RunParams::default()
    };
    let engine = schedule_engine(setup, std::sync::Arc::clone(&s), modes, run)?;
    let (r, (rank_end_cycles, critical_path, seen)): (RunResult, (Vec<u64>, _, T)) = engine
        .run_with(progress, |s| (s.rank_end_cycles(), s.critical_path(), inspect(s)));
    let cycles = r.completion_cycles.unwrap_or(r.sim.cycles);
    let mut busiest_ports = r.ports;
    busiest_ports.sort_by(|a, b| b.counters.bytes.cmp(&a.counters.bytes).then(a.router.cmp(&b.router)));
    busiest_ports.truncate(10);
    busiest_ports.retain(|p| p.counters.bytes > 0);
    Ok((Timed {
        schedule: s,
        ranks,
        grid,
        cycles,
        time_seconds: cycles as f64 * r.cycle_ns * 1e-9,
        rank_end_cycles,
        busiest_ports,
        run: RunSummary {
            complete: r.complete,
            interrupted: r.interrupted,
            cycles,
            cycle_ns: r.cycle_ns,
            packets_delivered: r.packets_delivered,
            link_utilization: r.link_utilization,
            deadlock: r.deadlock.is_some(),
            invariant_error: r
                .invariant_error
                .map(|e| format!("{}: {}", e.kind, e.detail)),
            wall_seconds: r.sim.wall_seconds,
            latency: r.latency,
            latency_distribution: r.latency_distribution,
            counter_samples: r.counter_samples,
            limits: r.limits,
            critical_path: Some(critical_path),
        },
    }, seen))
}

/// Runs one collective on the model `spec` names (and, with `verify`, on
/// real buffers).
pub fn run(spec: &CollectiveSpec, progress: tofusim_packet::Progress) -> Result<CollectiveResult> {
    if spec.counter_cycles > 0 && spec.model != Model::Packet {
        return Err(err("counter-period", "samples the packet engine's counters: use the packet model"));
    }
    if spec.steps && spec.model != Model::Packet {
        return Err(err("steps", "step finish cycles come from the packet engine: use the packet model"));
    }
    // The system resolved once and built once. Its memory is estimated
    // before anything large is built: a dragonfly's model needs its node
    // space, which is small, so a dragonfly is checked once its network is
    // built and before its communicator (a rank per node) is.
    let (sys, routes) = crate::build::resolve(&spec.system)?;
    let dragonfly = matches!(sys.network.topology, tofusim_topology::Topology::Dragonfly(_));
    // Without --algo the schedule's size is known once the library has
    // chosen, on the placed system: only the system is checked before.
    let chosen_later = spec.library.is_some();
    if chosen_later {
        crate::build::check_system_memory(&sys, spec.ranks.per_node, "a collective")?;
    } else if !dragonfly {
        check_memory(spec, &sys, &crate::comm_model::CommModel::for_system(&sys, None))?;
    }
    let built = crate::build::build(WHERE, "system", sys, routes)?;
    if dragonfly && !chosen_later {
        check_memory(spec, &built.system, &built.model)?;
    }
    let mut s = spec.ranks.place(crate::build::communicator_of(built)?)?;
    if chosen_later {
        let chosen = CollectiveSpec { algorithm: choose_algorithm(spec, &s).0, library: None, ..spec.clone() };
        check_memory(&chosen, &s.built.system, &s.built.model)?;
    }
    if spec.model == Model::Packet {
        return run_packet(spec, s, progress);
    }
    let wall = std::time::Instant::now();
    let ranks = s.node_of_rank.len() as u32;
    if !spec.comm.is_world() {
        if spec.model == Model::FlowRounds {
            return Err(err("comm", "the rounds form runs one communicator over every node: sub-communicators need the packet or flow-events model"));
        }
        return run_flow_events(spec, s, progress, wall);
    }
    check_spec(spec, ranks, s.built.model.tnis)?;
    let (settled, settings) = settle(spec, &s)?;
    let estimate = estimated_messages(&settled, ranks as u64);
    let has_rounds = tofusim_comm::rounds::has_rounds(settled.op, settled.algorithm);
    let model = match settled.model {
        Model::Flow if has_rounds && estimate > 2_000_000 && !settled.verify && rounds_refusal(&settled, &s).is_none() => Model::FlowRounds,
        Model::Flow => Model::FlowEvents,
        m => m,
    };
    if model == Model::FlowEvents {
        return run_flow_events(&CollectiveSpec { model, ..spec.clone() }, s, progress, wall);
    }
    let spec = &settled;
    // Ctrl-C between max-min solves: the progress callback says stop.
    let mut ask = || progress(0.0).is_break();
    let interrupt = tofusim_flow::Interrupt::new(&mut ask);
    let tnis = spec.tnis.unwrap_or(s.built.model.tnis).max(1);
    if model == Model::FlowRounds {
        if let Some(why) = rounds_refusal(spec, &s) {
            return Err(err("ppn", why));
        }
        if spec.verify {
            return Err(err("verify", "the rounds form moves no data: --verify needs the packet or flow-events model"));
        }
        // Several ranks per node: the rounds run among the node leaders,
        // on the nodes' torus shape, between each node's fan-in and
        // fan-out through its memory.
        let leaders = runs_on_node_leaders(spec, &s);
        let (order, _) = tofusim_comm::hierarchical::leaders(&s.node_of_rank);
        algorithm_root(spec, &s)?;
        let node_seconds = if leaders { node_fan_seconds(spec, &mut s, order.len() as u32)? } else { 0.0 };
        let shape = algorithm_grid(spec, &s);
        let group = crate::communicators::Group { members: order, grid: shape, node_grid: s.node_grid };
        let mut params = algorithm_params(spec, group.members.len() as u32, shape, tnis, gates_of(&s));
        params.count = spec.size_bytes.div_ceil(ELEMENT_BYTES).max(1);
        let rounds = tofusim_comm::rounds::build(spec.op, spec.algorithm, &params).map_err(|e| build_err(spec, e))?;
        let flow_summary = |rounds, interrupted| FlowSummary { wall_seconds: wall.elapsed().as_secs_f64(), peak_memory_bytes: tofusim_packet::result::peak_memory_bytes(), rounds, interrupted };
        let counts = (rounds.messages(), rounds.bytes_sent(), rounds.streams.iter().map(|x| x.tni + 1).max().unwrap_or(0));
        let timed = match as_group(&mut s, &group, |v| crate::flow_model::rounds_time(v, &rounds, &spec.modes, spec.seed, &interrupt)) {
            Err(_) if interrupt.stopped() => {
                let mut r = result(spec, &settings, rounds.collective, ranks, shape, 0.0, None, counts, None, None, Some(flow_summary(None, true)), model);
                r.node_leaders = leaders;
                return Ok(r);
            }
            t => t?,
        };
        let timed = tofusim_comm::exec::rounds::RoundsTimed {
            time_seconds: timed.time_seconds + node_seconds,
            rank_min_seconds: timed.rank_min_seconds + node_seconds,
            rank_mean_seconds: timed.rank_mean_seconds + node_seconds,
            node_seconds,
            ..timed
        };
        let _ = progress(1.0);
        let mut r = result(spec, &settings, rounds.collective, ranks, shape, timed.time_seconds, None, counts, None, None, Some(flow_summary(Some(timed), false)), model);
        r.node_leaders = leaders;
        return Ok(r);
    }
    unreachable!("the flow model runs in rounds or event by event")
}

/// Why the rounds form cannot run `spec` on `s`, if it cannot: it runs a
/// rank per node in the communicator's order, or with several per node
/// (block or cyclic) one leader per node of the operations that have a
/// node-leader form.
fn rounds_refusal(spec: &CollectiveSpec, s: &Setup) -> Option<&'static str> {
    if spec.ranks.is_one_per_node() {
        return None;
    }
    if matches!(spec.ranks.placement, RankPlacement::Map(_)) {
        return Some("the rounds form places ranks in the communicator's order: a placement map needs the packet or flow-events model");
    }
    if !runs_on_node_leaders(spec, s) {
        return Some("with several ranks per node the rounds form runs among node leaders (barrier, bcast, reduce, allreduce, not --flat): this one needs the packet or flow-events model");
    }
    None
}

/// Each node's fan-in to its leader and fan-out from it through memory,
/// seconds: the node-leader form of `spec` on one node of `s` (its first
/// rank's, holding `s`'s ranks per node; every node holds as many) with
/// nothing between, timed by the flow model's event-by-event executor —
/// the cost the full schedule gives those steps. The leaders' algorithm
/// waits for the fan-in and the fan-out for it, so the times add.
fn node_fan_seconds(spec: &CollectiveSpec, s: &mut Setup, leaders: u32) -> Result<f64> {
    let per_node = s.node_of_rank.len() as u32 / leaders.max(1);
    let node = s.node_of_rank[0];
    let count = spec.size_bytes.div_ceil(ELEMENT_BYTES).max(1);
    let collective = spec.op.collective(0);
    let alone = tofusim_comm::Schedule::new(collective, spec.algorithm.name(), 1, count);
    let nodes = vec![node; per_node as usize];
    let fan = tofusim_comm::hierarchical::node_leaders(collective, &nodes, &alone).map_err(|e| build_err(spec, e))?;
    // Any node's ranks cost the same: the first node's stand for all.
    let members: Vec<u32> = s.node_of_rank.iter().enumerate().filter(|&(_, &n)| n == node).map(|(r, _)| r as u32).collect();
    let group = crate::communicators::Group { members, grid: None, node_grid: None };
    let mut go_on = || false;
    let never = tofusim_flow::Interrupt::new(&mut go_on);
    as_group(s, &group, |v| crate::flow_model::schedule_time(v, &fan, &spec.modes, spec.seed, &never))
}

/// The flow model, event by event, on the schedule of `spec` (the world's,
/// or its sub-communicators' side by side), and with `verify` its data
/// check.
fn run_flow_events(spec: &CollectiveSpec, mut s: Setup, progress: tofusim_packet::Progress, wall: std::time::Instant) -> Result<CollectiveResult> {
    let world = s.node_of_rank.len() as u32;
    let Plan { spec: settled, settings, schedule: sched, node_leaders, shape, collective, ranks, fallback, split } = plan(spec, &mut s, progress)?;
    // Ctrl-C between max-min solves: the progress callback says stop.
    let mut ask = || progress(0.0).is_break();
    let interrupt = &tofusim_flow::Interrupt::new(&mut ask);
    let spec = &settled;
    let model = Model::FlowEvents;
    let counts = (sched.messages(), sched.bytes_sent(), sched.tnis_used());
    let flow_summary = |interrupted| FlowSummary { wall_seconds: wall.elapsed().as_secs_f64(), peak_memory_bytes: tofusim_packet::result::peak_memory_bytes(), rounds: None, interrupted };
    let communicators = split.as_ref().map(|(c, _)| c.clone());
    let time = match crate::flow_model::schedule_time(&s, &sched, &spec.modes, spec.seed, interrupt) {
        // Ctrl-C: what is known without the time — the schedule's size.
        Err(_) if interrupt.stopped() => {
            let mut r = result(spec, &settings, collective, ranks, shape, 0.0, fallback, counts, None, None, Some(flow_summary(true)), model);
            (r.processes, r.communicators) = (world, communicators);
            return Ok(r);
        }
        t => t?,
    };
    let _ = progress(1.0);
    let (verified, verify_error) = match split {
        Some((_, checked)) => checked,
        None => verification(spec, &sched, progress),
    };
    let interrupted = verified.is_none() && verify_error.is_some();
    let mut r = result(spec, &settings, collective, ranks, shape, time, fallback, counts, verified.map(|v| (v, verify_error)), None, Some(flow_summary(interrupted)), model);
    r.node_leaders = node_leaders;
    (r.processes, r.communicators) = (world, communicators);
    Ok(r)
}

/// Refuses a schedule too large to hold, naming the way out.
/// The spec's own values against the system: a root among the ranks, at
/// most the node's TNIs, a payload and a segment of at least one byte
/// (a 0-byte collective would still send its empty messages: refused
/// rather than timed as something it is not).
pub(crate) fn check_spec(spec: &CollectiveSpec, ranks: u32, system_tnis: u8) -> Result<()> {
    if spec.root >= ranks {
        return Err(err("root", format!("expected a rank from 0 to {}, found {}", ranks - 1, spec.root)));
    }
    if let Some(t) = spec.tnis {
        if t == 0 || t > system_tnis.max(1) {
            return Err(err("tnis", format!("expected 1 to {} (the TNIs of a node of {}), found {t}", system_tnis.max(1), spec.system)));
        }
    }
    if spec.size_bytes == 0 && spec.op.moves_data() {
        return Err(err("size", "expected at least 1 byte (a 0-byte collective has nothing to time)"));
    }
    if spec.segment_bytes == Some(0) {
        return Err(err("segment", "expected at least 1 byte"));
    }
    Ok(())
}

/// The memory a collective on `spec.system` needs, estimated from the
/// system's size before its communicator, routes or schedule are built (a
/// dragonfly's once its small node space is, for its model):
/// the communicator (rank → node), the routing tables, and on the packet
/// engine its arrays with the schedule's packets (a send's packets are made
/// when it starts: at most every message's at once), on the flow models the
/// flow network's resources and each rank's state. Refused above the memory
/// available (exit 2, the estimate by part).
fn check_memory(spec: &CollectiveSpec, sys: &crate::system::System, model: &crate::comm_model::CommModel) -> Result<()> {
    use tofusim_packet::budget::{available_bytes, estimate, gib, NetworkSize};
    let Some(limit) = available_bytes() else { return Ok(()) };
    let topology = &sys.network.topology;
    let size = crate::build::network_size(topology, None);
    let NetworkSize { routers, ports, nodes, axes } = size;
    // The ranks: a map's, or every node's `ppn`.
    let ranks = match &spec.ranks.placement {
        RankPlacement::Map(m) => m.len() as u64,
        RankPlacement::Block | RankPlacement::Cyclic => nodes.saturating_mul(spec.ranks.per_node as u64),
    };
    let communicator = ranks.saturating_mul(8);
    let messages = estimated_messages(spec, ranks);
    // Sub-communicators' schedules are counted when built (`plan`): each
    // is far smaller than one over every rank.
    let world = spec.comm.is_world();
    if spec.model == Model::Packet && world {
        // A schedule too large to list is refused first, with its way out
        // (the flow model's rounds form).
        check_estimate(spec, messages)?;
    }
    let (what, bytes) = if spec.model == Model::Packet {
        // A send's packets are made when it starts; a rank has at most a
        // few sends going at once (one per TNI and the chains' pipelining:
        // 8 assumed), not every message of the schedule.
        let payload = (model.packet_bytes.saturating_sub(model.header_bytes)).max(1) as u64;
        let per_message = spec.size_bytes.div_ceil(payload).max(1);
        let concurrent = messages.min(ranks.saturating_mul(8));
        let packets = concurrent.saturating_mul(per_message);
        let f = estimate(size, &model.router, &RunParams::default(), model.packet_bytes, packets);
        ("the packet engine", f.total())
    } else {
        // Resources: every directed link, every node's injection and TNIs;
        // per rank its ready times and a stream or two.
        let resources = routers.saturating_mul(ports).saturating_add(nodes.saturating_mul(1 + model.tnis.max(1) as u64));
        let routing = routers.saturating_mul(2 * axes + 5 * ports + 8);
        ("the flow model", resources.saturating_mul(8).saturating_add(routing).saturating_add(ranks.saturating_mul(96)))
    };
    // `verify` moves real data: every rank's vector in and out, and the
    // blocks of every rank for the gathering operations.
    let verify_bytes = if spec.verify && world {
        let per_rank = if spec.op.size_is_per_block() { spec.size_bytes.saturating_mul(ranks) } else { spec.size_bytes };
        per_rank.saturating_mul(ranks).saturating_mul(3)
    } else {
        0
    };
    if verify_bytes > limit {
        return Err(err(
            "verify",
            format!(
                "{} {} of {} B on {}: checking the data holds every rank's vectors, about {}, more than the memory available ({}); verify a smaller size or system",
                spec.op, spec.algorithm, spec.size_bytes, spec.system, gib(verify_bytes), gib(limit)
            ),
        ));
    }
    let total = communicator
        .saturating_add(bytes)
        .saturating_add(verify_bytes);
    if total > limit {
        return Err(err(
            "system",
            format!(
                "{} on {}: {what} needs about {} (the communicator {}), more than the memory available ({}); use a smaller system{}",
                spec.algorithm,
                spec.system,
                gib(total),
                gib(communicator),
                gib(limit),
                if spec.model == Model::Packet { ", or the flow model (--model flow), which needs far less" } else { "" }
            ),
        ));
    }
    Ok(())
}

fn check_estimate(spec: &CollectiveSpec, estimate: u64) -> Result<()> {
    if estimate > MAX_SCHEDULE_MESSAGES {
        // (The pairwise all-to-all's rounds are p(p − 1) messages too: not
        // at any scale.)
        let rounds: Vec<String> = tofusim_comm::rounds::with_rounds_names().into_iter().filter(|n| !n.contains("pairwise")).collect();
        return Err(err("system", format!(
            "{} {} on {} has about {estimate} messages, more than the {} an explicit schedule may hold; the flow model's rounds form (--model flow) runs {} at any scale",
            spec.op, spec.algorithm, spec.system, MAX_SCHEDULE_MESSAGES, rounds.join(", ")
        )));
    }
    Ok(())
}

/// Whether the schedule computes the collective on real buffers (with
/// `verify`): `(Some(passed), error)`; `(None, Some(why))` when Ctrl-C
/// (`progress` says stop) ended the check first.
fn verification(spec: &CollectiveSpec, s: &tofusim_comm::Schedule, progress: tofusim_packet::Progress) -> (Option<bool>, Option<String>) {
    if !spec.verify {
        return (None, None);
    }
    match data::execute_until(s, data::Order::Fifo, &mut || progress(1.0).is_break()) {
        Ok(_) => (Some(true), None),
        Err(e @ data::DataError::Interrupted { .. }) => (None, Some(e.to_string())),
        Err(e) => (Some(false), Some(e.to_string())),
    }
}

/// The result record of a timed collective.
#[allow(clippy::too_many_arguments)]
fn result(
    spec: &CollectiveSpec,
    settings: &Settings,
    coll: Collective,
    ranks: u32,
    grid: Option<Grid>,
    time_seconds: f64,
    fallback: Option<String>,
    (messages, bytes_sent, tnis_used): (u64, u64, u8),
    verified: Option<(bool, Option<String>)>,
    run: Option<RunSummary>,
    flow: Option<FlowSummary>,
    model: Model,
) -> CollectiveResult {
    let bytes = match coll {
        Collective::Allgather | Collective::Alltoall => spec.size_bytes * ranks as u64,
        _ => spec.size_bytes,
    };
    CollectiveResult {
        // A run or a check stopped by Ctrl-C is not complete.
        complete: run.as_ref().is_none_or(|r| r.complete && !r.interrupted) && flow.as_ref().is_none_or(|f| !f.interrupted),
        model,
        op: spec.op.name().to_string(),
        algo: spec.algorithm.name().to_string(),
        size_bytes: spec.size_bytes,
        processes: ranks,
        ranks_per_node: spec.ranks.per_node,
        placement: spec.ranks.placement.name(),
        node_leaders: false,
        system: spec.system.clone(),
        communicator_shape: grid.map(|g| g.lengths),
        time_seconds,
        bandwidth_Bps: if time_seconds > 0.0 && coll != Collective::Barrier { bytes as f64 / time_seconds } else { 0.0 },
        verified: verified.as_ref().map(|v| v.0),
        verify_error: verified.and_then(|v| v.1),
        fallback,
        messages,
        bytes_sent,
        tnis_used,
        settings: settings.clone(),
        run,
        flow,
        steps: None,
        steps_omitted: None,
        trees: spec.trees.as_ref().map(|t| GivenTrees { source: t.source.clone(), depths: t.trees.each_ref().map(|tree| tree.depth()) }),
        communicators: None,
    }
}

/// The schedule a collective runs, settled on its communicator: the
/// world's, or every sub-communicator's side by side.
struct Plan {
    spec: CollectiveSpec,
    settings: Settings,
    schedule: tofusim_comm::Schedule,
    node_leaders: bool,
    /// What one communicator is: its algorithm's torus shape, its
    /// collective, ranks and any fallback.
    shape: Option<Grid>,
    collective: Collective,
    ranks: u32,
    fallback: Option<String>,
    /// Sub-communicators: what ran, and every one's data check (done as
    /// each was built: the side-by-side schedule has no single result).
    split: Option<(SubCommunicators, (Option<bool>, Option<String>))>,
}

/// Settles `spec` on `s` and builds its schedule: over the world, or over
/// each of `spec.comm`'s communicators (settled on the first: they are
/// alike) written side by side.
fn plan(spec: &CollectiveSpec, s: &mut Setup, progress: tofusim_packet::Progress) -> Result<Plan> {
    let tnis = s.built.model.tnis;
    if spec.comm.is_world() {
        let ranks = s.node_of_rank.len() as u32;
        check_spec(spec, ranks, tnis)?;
        let (settled, settings) = settle(spec, s)?;
        check_estimate(&settled, estimated_messages(&settled, ranks as u64))?;
        let (schedule, node_leaders) = schedule_on(&settled, s, tnis)?;
        let shape = algorithm_grid(&settled, s);
        return Ok(Plan { collective: schedule.collective, fallback: schedule.fallback.clone(), ranks, shape, spec: settled, settings, schedule, node_leaders, split: None });
    }
    let groups = spec.comm.groups(s, &spec.ranks)?;
    let first = groups[0].members.len() as u32;
    // Each communicator settles its own algorithm, segment and TNIs (on
    // its size, shape and nodes); the result shows the first's and says
    // where others differ.
    let mut settled_each = Vec::with_capacity(groups.len());
    for g in &groups {
        settled_each.push(as_group(s, g, |v| -> Result<_> {
            check_spec(spec, g.members.len() as u32, tnis)?;
            let (settled, settings) = settle(spec, v)?;
            let shape = algorithm_grid(&settled, v);
            Ok((settled, settings, shape))
        })?);
    }
    let (settled, mut settings, shape) = settled_each[0].clone();
    let others: std::collections::BTreeSet<&str> = settled_each.iter().map(|(x, _, _)| x.algorithm.name()).filter(|&a| a != settled.algorithm.name()).collect();
    if !others.is_empty() {
        settings.algorithm = format!("{}; other communicators (their size, shape or nodes differ) run {}", settings.algorithm, others.into_iter().collect::<Vec<_>>().join(", "));
    }
    let messages = groups.iter().zip(&settled_each).map(|(g, (x, _, _))| estimated_messages(x, g.members.len() as u64)).fold(0u64, u64::saturating_add);
    check_estimate(&settled, messages)?;
    let mut built = Vec::with_capacity(groups.len());
    let mut node_leaders = false;
    let mut verified = if settled.verify { (Some(true), None) } else { (None, None) };
    for (g, (mine, _, _)) in groups.iter().zip(&settled_each) {
        let (one, leaders) = as_group(s, g, |v| schedule_on(mine, v, tnis))?;
        node_leaders |= leaders;
        if verified.0 == Some(true) {
            verified = verification(mine, &one, progress);
            if let (Some(false), Some(e)) = &mut verified {
                *e = format!("communicator of ranks {}…: {e}", g.members[0]);
            }
        }
        built.push(one);
    }
    let pairs: Vec<(&[u32], &tofusim_comm::Schedule)> = groups.iter().zip(&built).map(|(g, b)| (g.members.as_slice(), b)).collect();
    let schedule = tofusim_comm::subcommunicators::side_by_side(s.node_of_rank.len() as u32, &pairs).map_err(|e| err(e.key, e.message))?;
    let record = SubCommunicators { comm: spec.comm.name(), count: groups.len() as u32, ranks_each: groups.iter().map(|g| g.members.len() as u32).max().unwrap_or(0) };
    let (collective, fallback) = (built[0].collective, built[0].fallback.clone());
    Ok(Plan { spec: settled, settings, schedule, node_leaders, shape, collective, ranks: first, fallback, split: Some((record, verified)) })
}

/// Runs one collective on the packet engine (and, with `verify`, on real
/// buffers), keeping every step's finish cycle when `spec.steps` asks.
fn run_packet(spec: &CollectiveSpec, mut setup: Setup, progress: tofusim_packet::Progress) -> Result<CollectiveResult> {
    setup.max_minutes = spec.max_minutes;
    let world = setup.node_of_rank.len() as u32;
    let Plan { spec: settled, settings, schedule: sched, node_leaders, shape, collective, ranks, fallback, split } = plan(spec, &mut setup, progress)?;
    let spec = &settled;
    let step_count: u64 = sched.programs.iter().map(|p| p.steps.len() as u64).sum();
    let keep_steps = spec.steps && step_count <= MAX_STEP_TIMES;
    let node_of_rank = if keep_steps { setup.node_of_rank.clone() } else { Vec::new() };
    let opts = ScheduleOptions { modes: spec.modes, seed: spec.seed, counter_cycles: spec.counter_cycles };
    let (mut timed, finish) = run_on(setup, sched, &opts, progress, |run| {
        keep_steps.then(|| run.step_finish_cycles())
    })?;
    // An interrupted run is not checked either; an interrupted check marks
    // the run interrupted (the command prints what it has, exit 130).
    let (verified, verify_error) = match &split {
        _ if timed.run.interrupted => (None, None),
        Some((_, checked)) => checked.clone(),
        None => verification(spec, &timed.schedule, progress),
    };
    if verified.is_none() && verify_error.is_some() {
        timed.run.interrupted = true;
    }
    let s = &timed.schedule;
    let mut r = result(
        spec,
        &settings,
        collective,
        ranks,
        shape,
        timed.time_seconds,
        fallback,
        (s.messages(), s.bytes_sent(), s.tnis_used()),
        verified.map(|v| (v, verify_error)),
        Some(timed.run),
        None,
        Model::Packet,
    );
    r.steps = finish.map(|f| StepTimes::new(s, &node_of_rank, &f));
    r.node_leaders = node_leaders;
    r.processes = world;
    r.communicators = split.map(|(c, _)| c);
    r.steps_omitted = (spec.steps && !keep_steps).then_some(step_count);
    Ok(r)
}

/// The pipelining segment of Trinaryx3 on a system, derived from its
/// pipeline depth and the system's model (not fitted to any figure): see
/// [`tofusim_comm::tree::pipeline_segment_bytes`].
#[derive(Clone, Debug, Serialize)]
pub struct PipelineSegment {
    pub segment_bytes: u64,
    /// Stages a segment crosses: the deepest tree up, then down.
    pub stages: u32,
    /// Fixed cost of one message on a stage: send and receive host costs
    /// plus one hop, ns.
    pub alpha_ns: f64,
    /// Time per byte of one put on one TNI (the packet format's payload
    /// share of the link), ns.
    pub ns_per_byte: f64,
    /// Bytes each tree carries (a third of the vector).
    pub part_bytes: u64,
}

/// [`PipelineSegment`] of a Trinaryx3 allreduce of `size_bytes` on
/// `system_name` (its communicator's torus, rooted at rank 0).
pub fn trinaryx3_segment(system_name: &str, size_bytes: u64) -> Result<PipelineSegment> {
    let Setup { built, grid, .. } = setup(system_name)?;
    let bad = |why: String| ConfigError::argument("system", why);
    let g = grid.ok_or_else(|| bad("trinaryx3 needs a torus-shaped communicator".into()))?;
    if let Some(why) = tofusim_comm::tree::trinary_unsupported(&g) {
        return Err(bad(why));
    }
    Ok(pipeline_segment(&built.model, &g, 0, 2, size_bytes))
}

/// The segment of a trinary-tree algorithm of `phases` phases (Trinaryx3:
/// 2, up then down) rooted at `root` on communicator `g`.
fn pipeline_segment(model: &crate::comm_model::CommModel, g: &Grid, root: u32, phases: u32, size_bytes: u64) -> PipelineSegment {
    let c = pipeline_costs(model);
    let stages = tofusim_comm::tree::trinary_stages(g, root, phases);
    let segment_bytes = c.trinary_segment_bytes(g, root, phases, size_bytes);
    PipelineSegment { segment_bytes, stages, alpha_ns: c.alpha_ns, ns_per_byte: c.ns_per_byte, part_bytes: size_bytes.div_ceil(3) }
}

/// One put's costs on `model`, what a pipelined tree's segment is derived
/// from: α the two sides' host costs and a hop, β the wire time per
/// payload byte.
pub fn pipeline_costs(model: &crate::comm_model::CommModel) -> tofusim_comm::tree::PipelineCosts {
    let modes = Modes::default();
    let alpha_ns = model.side_ns(crate::comm_model::Side::Send, &modes)
        + model.side_ns(crate::comm_model::Side::Receive, &modes)
        + model.router.hop_latency_cycles as f64 * model.cycle_ns();
    let payload = (model.packet_bytes - model.header_bytes) as f64;
    let wire = (model.packet_bytes + model.router.overhead_bytes) as f64;
    tofusim_comm::tree::PipelineCosts { alpha_ns, ns_per_byte: wire / payload * model.cycle_ns(), packet_payload_bytes: (model.packet_bytes - model.header_bytes) as u64 }
}

/// The hardware barrier across every node of `system_name` (one BCH per
/// node, dissemination through the barrier gates): µs. A barrier signal
/// crosses the network as one 32-byte packet: the hop latency per hop plus
/// its wire time. With `payload_bytes` > 0 it is the barrier interface's
/// small allreduce: each signal carries the operand and each gate combines
/// it (in its BG delay, [MEM]).
///
/// `graph` wires the gates ([`tofusim_comm::barrier_hw::GateGraph`]): over
/// the rank order, or along the communicator's torus axes (a system
/// without a torus-shaped communicator takes the rank order).
pub fn hardware_barrier_us(
    system_name: &str,
    payload_bytes: u32,
    graph: tofusim_comm::barrier_hw::GateGraph,
) -> Result<f64> {
    let Setup {
        built: crate::build::Built { nodes: t, model, .. },
        node_of_rank,
        grid,
        ..
    } = setup(system_name)?;
    // The barrier interface of the system's Tofu generation (Tofu2's
    // gates are Tofu1's, [S:000]); other networks have no such hardware.
    let Some(hw) = model.generation.barrier_hardware() else {
        return Err(ConfigError::new(
            WHERE,
            "system",
            format!("the Tofu barrier interface is Tofu hardware; {system_name} is {}, which has none", model.generation.name()),
        ));
    };
    let cycle = model.cycle_ns();
    let hop_ns = model.router.hop_latency_cycles as f64 * cycle;
    let wire_ns =
        ((32 + payload_bytes).div_ceil(32) * 32 + model.router.overhead_bytes) as f64 * cycle;
    let latency = |a: u32, b: u32| {
        let hops = t.distance(
            tofusim_topology::NodeId(node_of_rank[a as usize]),
            tofusim_topology::NodeId(node_of_rank[b as usize]),
        );
        hops as f64 * hop_ns + wire_ns
    };
    use tofusim_comm::barrier_hw::{across_nodes, across_rounds, across_torus, axis_rounds, GateGraph};
    if graph == GateGraph::PhysicalAxes {
        // Every node takes part; gates wired along the network's own axes,
        // the signal latency between nodes as for the other wirings.
        let rings: Vec<bool> = t.axes().iter().map(|a| a.is_ring()).collect();
        let rounds = axis_rounds(&t.lengths(), &rings);
        let hops_ns = |a: u32, b: u32| t.distance(tofusim_topology::NodeId(a), tofusim_topology::NodeId(b)) as f64 * hop_ns + wire_ns;
        return Ok(across_rounds(t.node_count() as usize, &rounds, &hw, hops_ns));
    }
    Ok(match (graph, grid) {
        (GateGraph::RankOrder, _) | (_, None) => across_nodes(node_of_rank.len() as u32, &hw, latency),
        (graph, Some(g)) => across_torus(&g, graph, &hw, latency),
    })
}

/// The collective algorithms per operation: `{op: [{"name", "summary",
/// "needs_torus"}]}`.
pub fn algorithms_json() -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for op in Operation::ALL {
        let list: Vec<serde_json::Value> = Algorithm::of(op)
            .iter()
            .map(|a| serde_json::json!({"name": a.name(), "summary": a.summary(), "needs_torus": a.needs_torus()}))
            .collect();
        m.insert(op.to_string(), serde_json::Value::Array(list));
    }
    serde_json::Value::Object(m)
}

#[cfg(test)]
mod request_tests {
    use super::*;

    #[test]
    fn a_request_takes_the_commands_defaults_and_refuses_by_key() {
        let s = CollectiveSpec::from_json(r#"{"op": "allreduce", "algo": "ring", "system": "k:1x1x1"}"#).unwrap();
        assert_eq!((s.size_bytes, s.root, s.seed, s.model), (8, 0, 1, Model::Packet));
        assert_eq!((s.segment_bytes, s.tnis, s.max_minutes), (None, None, Some(tofusim_packet::budget::DEFAULT_MAX_MINUTES)));
        let no_budget = CollectiveSpec::from_json(r#"{"op": "bcast", "algo": "binomial", "system": "k", "max_minutes": "none"}"#).unwrap();
        assert_eq!(no_budget.max_minutes, None);
        for (json, key) in [
            (r#"{"root": -1}"#, "root"),
            (r#"{"tnis": 300}"#, "tnis"),
            (r#"{"model": "fluid"}"#, "--model"),
            (r#"{"max_minutes": -5}"#, "max-time"),
            (r#"{"trees": {"lengths": [1, 1, 1]}}"#, "trees"),
            (r#"{"op": "gatherv"}"#, "op"),
            (r#"{"op": "bcast", "algo": "trinaryx3"}"#, "algo"),
            (r#"{"op": "bcast", "algo": "binomial", "library": "fjmpi"}"#, "library"),
            (r#"{"op": "bcast", "library": "intelmpi"}"#, "library"),
        ] {
            let json = json.replacen('{', r#"{"op": "allreduce", "algo": "ring", "#, usize::from(!json.contains("\"op\"")));
            let json = if json.ends_with(", }") { json.replace(", }", "}") } else { json };
            assert_eq!(CollectiveSpec::from_json(&json).err().map(|e| e.key), Some(key.to_string()), "{json}");
        }
        // No algorithm named: the library's rules choose it once the system is known.
        let s = CollectiveSpec::from_json(r#"{"op": "gather", "system": "k"}"#).unwrap();
        assert_eq!((s.op, s.library), (Operation::Gather, Some(None)));
        // The operation and algorithm are parsed once, into the registries.
        let s = CollectiveSpec::from_json(r#"{"op": "bcast", "algo": "trinary-tree", "system": "k"}"#).unwrap();
        assert_eq!((s.op, s.algorithm), (Operation::Bcast, Algorithm::TrinaryTree));
        assert!(CollectiveSpec::from_json("not json").unwrap_err().to_string().starts_with("bad spec"));
    }
}
