//! The front door of recorded MPI traces (OTF2, crate `tofusim-trace`):
//! their summary, rank count and communication list, and a trace replayed
//! on a simulated system ([`crate::replay`]). The trace reader's refusals
//! name the file, the rank and the call themselves, and are passed on as
//! they are.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::{json, Value};
use tofusim_comm::replay::ReplayProgram;
use tofusim_trace::program::Notes;
use tofusim_trace::summary::Summary;

use crate::error::{ConfigError, Result};
use crate::replay::{ReplayResult, ReplaySpec};

/// What `tofusim trace show` prints.
pub fn summary(path: &str) -> Result<Summary> {
    let t = tofusim_trace::read(path)?;
    Ok(tofusim_trace::summary::summarise(&t))
}

/// The number of ranks of a trace (its definitions only).
pub fn ranks(path: &str) -> Result<u32> {
    Ok(tofusim_trace::archive::ranks(path)?)
}

/// A trace's communication list (`tofusim pattern from-trace`): trace,
/// ranks, flows ([src, dst, bytes]), point_to_point_bytes and
/// collective_bytes (each collective's messages under the default
/// algorithm, with `collectives`).
pub fn comm_list(path: &str, collectives: bool) -> Result<Value> {
    let t = tofusim_trace::read(path)?;
    let c = tofusim_trace::summary::comm_list(&t, collectives)?;
    Ok(json!({
        "trace": t.path, "ranks": t.ranks, "point_to_point_bytes": c.point_to_point_bytes, "collective_bytes": c.collective_bytes,
        "flows": c.flows.iter().map(|(&(a, b), &n)| [a as u64, b as u64, n]).collect::<Vec<_>>(),
    }))
}

/// A replayed trace: the replay, and what the trace and its conversion add.
pub struct TraceReplay {
    pub trace: String,
    /// The time the program took when it was recorded.
    pub measured_ns: u64,
    /// What the conversion to a replay program noticed, and the algorithm
    /// each collective operation ran with.
    pub notes: Notes,
    pub library: tofusim_comm::library::Library,
    pub result: ReplayResult,
}

/// A replayed trace's result: the replay's, with what the trace and its
/// conversion add.
#[derive(Serialize, schemars::JsonSchema)]
pub struct TraceReplayReport<'a> {
    #[serde(flatten)]
    pub result: &'a ReplayResult,
    /// The trace's archive.
    pub trace: &'a str,
    /// The time the program took when it was recorded (0 when the trace
    /// has none), seconds.
    pub measured_seconds: f64,
    /// The collective algorithm used per operation (its first call's).
    pub algorithms: &'a BTreeMap<String, String>,
    /// The MPI library whose rules chose the collectives' algorithms
    /// (`--library`, or the system's: `fjmpi` on Tofu, `mpich` on Aries and
    /// BG/L, `openmpi` on fat-trees).
    pub library: tofusim_comm::library::Library,
    /// Per operation, communicator size and call size: the calls and the
    /// algorithm they ran with, and the rule that chose it.
    pub collective_calls: &'a [tofusim_trace::program::CollectiveCalls],
    /// Receives posted but never completed in the trace (not replayed).
    pub uncompleted_receives: u64,
    /// Receives cancelled before a message matched them.
    pub cancelled_receives: u64,
    /// Collectives of one rank (nothing to send), not replayed.
    pub trivial_collectives: u64,
    /// Messages a rank sent itself (a copy in its own memory), not replayed.
    pub self_messages: u64,
}

impl TraceReplay {
    /// The result with the trace's own keys (the counter samples are
    /// counted in it, not carried).
    pub fn report(&self) -> TraceReplayReport<'_> {
        let n = &self.notes;
        TraceReplayReport {
            result: &self.result,
            trace: &self.trace,
            measured_seconds: self.measured_ns as f64 * 1e-9,
            algorithms: &n.algorithms,
            library: self.library,
            collective_calls: &n.collective_calls,
            uncompleted_receives: n.uncompleted_receives,
            cancelled_receives: n.cancelled_receives,
            trivial_collectives: n.trivial_collectives,
            self_messages: n.self_messages,
        }
    }

    /// [`TraceReplay::report`] as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.report()).expect("results serialise")
    }
}

/// Replays the trace at `path` under `spec`; `algorithms` maps an
/// operation to the algorithm to use instead of the MPI library's choice;
/// `library` names the library (default: the system generation's).
pub fn replay(path: &str, spec: &ReplaySpec, algorithms: &BTreeMap<String, String>, library: Option<&str>, report: &mut dyn FnMut(f64) -> ControlFlow<()>) -> Result<TraceReplay> {
    let wall = std::time::Instant::now();
    let (t, program, notes, library, system) = program_of(path, spec, algorithms, library)?;
    let result = crate::replay::run_on_system(&program, spec, system, report, wall)?;
    Ok(TraceReplay { trace: t.path.clone(), measured_ns: t.measured_ns(), notes, library, result })
}

/// The schedule a replay of the trace at `path` runs on `spec`'s system
/// (its MPI software's messages, work and the collectives' algorithms),
/// written as GOAL text: its copies and summing receives as `calc` at the
/// system's host rates. `tofusim coll --schedule FILE.goal` on the same
/// system runs it to the replay's time.
pub fn replay_goal(path: &str, spec: &ReplaySpec, algorithms: &BTreeMap<String, String>, library: Option<&str>) -> Result<String> {
    let (_, program, _, _, system) = program_of(path, spec, algorithms, library)?;
    let p = crate::replay::prepare(&program, spec, system)?;
    let rates = crate::given_schedule::local_rates(&p.s.built.model);
    tofusim_comm::goal::to_goal(&p.schedule, rates).map_err(|e| ConfigError::new(path, e.key, e.message))
}

/// The schedule a replay of the trace at `path` runs on `spec`'s system,
/// its ranks placed by `spec` (a job of a mix: `spec.order` gives each
/// rank's node).
pub fn replay_schedule(path: &str, spec: &ReplaySpec) -> Result<tofusim_comm::Schedule> {
    let (_, program, _, _, system) = program_of(path, spec, &BTreeMap::new(), None)?;
    Ok(crate::replay::prepare(&program, spec, system)?.schedule)
}

/// The rank count of the trace at `path`.
pub fn trace_ranks(path: &str) -> Result<u32> {
    Ok(tofusim_trace::read(path)?.ranks)
}

/// [`replay_goal`] as Chakra execution-trace files, one per rank.
pub fn replay_chakra(path: &str, spec: &ReplaySpec, algorithms: &BTreeMap<String, String>, library: Option<&str>) -> Result<Vec<Vec<u8>>> {
    let (_, program, _, _, system) = program_of(path, spec, algorithms, library)?;
    let p = crate::replay::prepare(&program, spec, system)?;
    let rates = crate::given_schedule::local_rates(&p.s.built.model);
    tofusim_comm::chakra::to_chakra(&p.schedule, rates).map_err(|e| ConfigError::new(path, e.key, e.message))
}

/// The trace at `path` as a replay program for `spec`'s system (built
/// once here), with what the conversion noticed and the library whose
/// rules chose the collectives' algorithms.
#[allow(clippy::type_complexity)]
fn program_of(path: &str, spec: &ReplaySpec, algorithms: &BTreeMap<String, String>, library: Option<&str>) -> Result<(tofusim_trace::Trace, ReplayProgram, Notes, tofusim_comm::library::Library, crate::build::Setup)> {
    let t = tofusim_trace::read(path)?;
    let system = crate::replay::system_for(spec)?;
    let generation = system.built.system.generation;
    let library = match library {
        None => generation.mpi_library(),
        Some(name) => crate::generation::parse_library(name)?,
    };
    // The world communicator's torus shape, where the placement keeps the
    // system's and the job fills it (what the library's rules look at).
    let grids = crate::replay::world_grids(&system, &spec.ranks, spec.order.is_some());
    let ppn = spec.ranks.per_node.max(1);
    let cyclic = matches!(spec.ranks.placement, crate::rank_placement::RankPlacement::Cyclic);
    let system_nodes = system.node_of_rank.len() as u32;
    let nodes = if cyclic { t.ranks.min(system_nodes) } else { t.ranks.div_ceil(ppn) };
    let trees = |g: &tofusim_comm::tree::Grid| tofusim_comm::tree::trinary_unsupported(g).is_none();
    let world = tofusim_trace::program::WorldShape {
        flat: grids.flat.filter(|g| g.ranks() == t.ranks).map(|g| trees(&g)),
        leaders: grids.leaders.filter(|g| g.ranks() == nodes).map(|g| trees(&g)),
        per_node: ppn,
        cyclic,
        leader_form: spec.node_leaders,
        nodes,
    };
    let chosen = tofusim_trace::program::Algorithms { library, given: algorithms.clone(), barrier_interface: generation.barrier_hardware().is_some(), world };
    let (program, notes) = tofusim_trace::program::build(&t, &chosen)?;
    Ok((t, program, notes, library, system))
}


/// A replay program given as JSON (what the reader builds; the recorded
/// machine's ping-pongs are written this way).
pub fn program_from_json(text: &str) -> Result<ReplayProgram> {
    serde_json::from_str(text).map_err(|e| ConfigError::new("<trace>", "program", format!("not a replay program: {e}")))
}
