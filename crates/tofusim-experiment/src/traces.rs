//! The front door of recorded MPI traces (OTF2, crate `tofusim-trace`):
//! their summary, rank count and communication list, and a trace replayed
//! on a simulated system ([`crate::replay`]). The trace reader's refusals
//! name the file, the rank and the call themselves, and are passed on as
//! they are.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

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
    pub result: ReplayResult,
}

impl TraceReplay {
    /// The result's JSON with the trace's own keys added (the counter
    /// samples are counted in it, not carried).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(&self.result).expect("results serialise");
        let o = v.as_object_mut().expect("an object");
        o.insert("trace".into(), self.trace.clone().into());
        o.insert("measured_seconds".into(), (self.measured_ns as f64 * 1e-9).into());
        o.insert("algorithms".into(), serde_json::to_value(&self.notes.algorithms).expect("names"));
        o.insert("uncompleted_receives".into(), self.notes.uncompleted_receives.into());
        o.insert("cancelled_receives".into(), self.notes.cancelled_receives.into());
        o.insert("trivial_collectives".into(), self.notes.trivial_collectives.into());
        o.insert("self_messages".into(), self.notes.self_messages.into());
        v
    }
}

/// Replays the trace at `path` under `spec`; `algorithms` maps an
/// operation to the algorithm to use instead of the default.
pub fn replay(path: &str, spec: &ReplaySpec, algorithms: &BTreeMap<String, String>, report: &mut dyn FnMut(f64) -> ControlFlow<()>) -> Result<TraceReplay> {
    let t = tofusim_trace::read(path)?;
    let (program, notes) = tofusim_trace::program::build(&t, algorithms)?;
    let result = crate::replay::run(&program, spec, report)?;
    Ok(TraceReplay { trace: t.path.clone(), measured_ns: t.measured_ns(), notes, result })
}

/// A replay program given as JSON (what the reader builds; the recorded
/// machine's ping-pongs are written this way).
pub fn program_from_json(text: &str) -> Result<ReplayProgram> {
    serde_json::from_str(text).map_err(|e| ConfigError::new("<trace>", "program", format!("not a replay program: {e}")))
}
