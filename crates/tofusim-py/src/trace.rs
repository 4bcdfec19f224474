//! Bindings of recorded traces and their replays
//! (`tofusim_experiment::traces`, `tofusim_experiment::replay`).

use pyo3::prelude::*;

use tofusim_experiment::ConfigError;

use crate::{after_run, budget_minutes, config_err, reporter};
use crate::samples::put_counter_samples;

/// The model of a replay: packet or flow.
fn replay_model(model: &str) -> PyResult<tofusim_experiment::collective::Model> {
    use tofusim_experiment::collective::Model;
    match Model::parse(model) {
        Some(m @ (Model::Packet | Model::Flow | Model::FlowEvents)) => Ok(m),
        _ => Err(config_err(ConfigError::new("<command line>", "model", format!("expected packet or flow, got {model:?}")))),
    }
}

/// The MPI layer's values a replay is given (JSON), if any.
fn mpi_overrides(mpi: Option<String>) -> PyResult<tofusim_experiment::replay::MpiOverrides> {
    match mpi {
        Some(text) => serde_json::from_str(&text).map_err(|e| config_err(ConfigError::new("<mpi>", "mpi", format!("expected MPI layer values: {e}")))),
        None => Ok(Default::default()),
    }
}

/// The replay both doors ask for (a program, a trace), checked once.
#[allow(clippy::too_many_arguments)]
fn replay_spec(
    system: String,
    model: &str,
    order: Option<Vec<u32>>,
    compute_scale: f64,
    seed: u64,
    system_toml: Option<String>,
    mpi: Option<String>,
    counter_cycles: u64,
    max_minutes: Option<f64>,
    ppn: u64,
    placement: &str,
) -> PyResult<tofusim_experiment::replay::ReplaySpec> {
    use tofusim_experiment::rank_placement::{RankPlacement, Ranks};
    let model = replay_model(model)?;
    let mpi = mpi_overrides(mpi)?;
    let ranks = Ranks::new(ppn, RankPlacement::parse(placement).map_err(config_err)?).map_err(config_err)?;
    Ok(tofusim_experiment::replay::ReplaySpec { system, system_toml, mpi, order, ranks, node_leaders: true, model, compute_scale, seed, counter_cycles, max_minutes: budget_minutes(max_minutes) })
}

/// Replays a matched MPI program (JSON, as `tofusim_experiment::traces::program_from_json` reads it)
/// on `system` with `model` (packet or flow), ranks placed by `order`
/// (rank → node; default the system's communicator order); the result as
/// JSON.
#[pyfunction]
#[pyo3(signature = (program, system, model="packet", order=None, compute_scale=1.0, seed=1, progress=None, keep_partial=false, system_toml=None, mpi=None, counter_cycles=0, max_minutes=None, ppn=1, placement="block"))]
#[allow(clippy::too_many_arguments)]
pub fn replay(
    py: Python<'_>,
    program: String,
    system: String,
    model: &str,
    order: Option<Vec<u32>>,
    compute_scale: f64,
    seed: u64,
    progress: Option<Py<PyAny>>,
    keep_partial: bool,
    system_toml: Option<String>,
    mpi: Option<String>,
    counter_cycles: u64,
    max_minutes: Option<f64>,
    ppn: u64,
    placement: &str,
) -> PyResult<String> {
    let spec = replay_spec(system, model, order, compute_scale, seed, system_toml, mpi, counter_cycles, max_minutes, ppn, placement)?;
    let program = tofusim_experiment::traces::program_from_json(&program).map_err(config_err)?;
    let raised = std::sync::Mutex::new(None);
    let r = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        tofusim_experiment::replay::run(&program, &spec, &mut report)
    });
    let stopped = r.as_ref().is_ok_and(|r| r.run.as_ref().is_some_and(|x| x.interrupted));
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
    let r = r.map_err(config_err)?;
    Ok(serde_json::to_string(&r).expect("results serialise"))
}

/// A trace's summary (`tofusim trace show`) as JSON.
#[pyfunction]
pub fn trace_summary(py: Python<'_>, path: String) -> PyResult<String> {
    let s = py.detach(|| tofusim_experiment::traces::summary(&path)).map_err(config_err)?;
    Ok(serde_json::to_string(&s).expect("summaries serialise"))
}

/// The number of ranks of a trace (its definitions only).
#[pyfunction]
pub fn trace_ranks(py: Python<'_>, path: String) -> PyResult<u32> {
    py.detach(|| tofusim_experiment::traces::ranks(&path)).map_err(config_err)
}

/// A trace's communication list (`tofusim pattern from-trace`): JSON with
/// `ranks`, `flows` ([src, dst, bytes]), `point_to_point_bytes`,
/// `collective_bytes`.
#[pyfunction]
#[pyo3(signature = (path, collectives=true))]
pub fn trace_comm_list(py: Python<'_>, path: String, collectives: bool) -> PyResult<String> {
    Ok(py.detach(|| tofusim_experiment::traces::comm_list(&path, collectives)).map_err(config_err)?.to_string())
}

/// Replays the trace at `path` on `system` (see [`replay`]); `algorithms`
/// maps an operation to the algorithm to use instead of the default. The
/// result adds the trace's measured time and what the conversion noticed.
#[pyfunction]
#[pyo3(signature = (path, system, model="packet", order=None, compute_scale=1.0, seed=1, progress=None, keep_partial=false, system_toml=None, mpi=None, algorithms=None, counter_cycles=0, samples=None, max_minutes=None, ppn=1, placement="block", library=None))]
#[allow(clippy::too_many_arguments)]
pub fn trace_replay(
    py: Python<'_>,
    path: String,
    system: String,
    model: &str,
    order: Option<Vec<u32>>,
    compute_scale: f64,
    seed: u64,
    progress: Option<Py<PyAny>>,
    keep_partial: bool,
    system_toml: Option<String>,
    mpi: Option<String>,
    algorithms: Option<std::collections::BTreeMap<String, String>>,
    counter_cycles: u64,
    samples: Option<Bound<'_, pyo3::types::PyDict>>,
    max_minutes: Option<f64>,
    ppn: u64,
    placement: &str,
    library: Option<String>,
) -> PyResult<String> {
    let spec = replay_spec(system, model, order, compute_scale, seed, system_toml, mpi, counter_cycles, max_minutes, ppn, placement)?;
    let algorithms = algorithms.unwrap_or_default();
    let raised = std::sync::Mutex::new(None);
    let r = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        tofusim_experiment::traces::replay(&path, &spec, &algorithms, library.as_deref(), &mut report)
    });
    let stopped = r.as_ref().is_ok_and(|r| r.result.run.as_ref().is_some_and(|x| x.interrupted));
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
    let mut r = r.map_err(config_err)?;
    // The JSON first: it counts the sample rows, which then move to Python.
    let v = r.to_json();
    if let (Some(d), Some(run)) = (&samples, &mut r.result.run) {
        put_counter_samples(py, d, &mut run.counter_samples)?;
    }
    Ok(v.to_string())
}


/// The schedule a replay of the trace at `path` runs on `system`, as GOAL
/// text (`tofusim_experiment::traces::replay_goal`).
#[pyfunction]
#[pyo3(signature = (path, system, ppn=1, placement="block", library=None, mpi=None, compute_scale=1.0))]
#[allow(clippy::too_many_arguments)]
pub fn trace_goal(py: Python<'_>, path: String, system: String, ppn: u64, placement: &str, library: Option<String>, mpi: Option<String>, compute_scale: f64) -> PyResult<String> {
    let spec = replay_spec(system, "packet", None, compute_scale, 1, None, mpi, 0, None, ppn, placement)?;
    py.detach(|| tofusim_experiment::traces::replay_goal(&path, &spec, &Default::default(), library.as_deref())).map_err(config_err)
}

/// The schedule a replay of the trace at `path` runs on `system`, written
/// as Chakra execution traces `out/tofusim.RANK.et` (the directory is made
/// if missing); returns their paths, rank 0 first.
#[pyfunction]
#[pyo3(signature = (path, system, out, ppn=1, placement="block", library=None, compute_scale=1.0))]
#[allow(clippy::too_many_arguments)]
pub fn trace_chakra(py: Python<'_>, path: String, system: String, out: String, ppn: u64, placement: &str, library: Option<String>, compute_scale: f64) -> PyResult<Vec<String>> {
    let spec = replay_spec(system, "packet", None, compute_scale, 1, None, None, 0, None, ppn, placement)?;
    let files = py.detach(|| tofusim_experiment::traces::replay_chakra(&path, &spec, &Default::default(), library.as_deref())).map_err(config_err)?;
    crate::comm::write_chakra(&out, files)
}
