//! PyO3 bindings of the tofusim core. Thin on purpose: each function takes
//! plain values, calls the Rust layers and returns JSON text; each Rust
//! error type maps once to a Python exception class.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tofusim_experiment::{presets, system, ConfigError};

mod comm;
mod placement;
mod samples;
use comm::{
    barrier_plans, collective_buffers, collective_schedule, comm_model, dragonfly_hop_pairs, hardware_barrier_us, mpi_memory, run_collective_placed,
    run_mpi_pingpong, run_pingpong, run_rdma, run_transfers, trinaryx3_segment,
};
use placement::{alloc_stream, baseline_order, cg_comm_list, cg_compute, cg_iteration_time, map_virtual, order_costs, rmatt};
use samples::put_counter_samples;

create_exception!(
    _core,
    TofusimConfigError,
    PyException,
    "Bad input: the message names the file, the key path and what was expected."
);

fn config_err(e: ConfigError) -> PyErr {
    TofusimConfigError::new_err(e.to_string())
}

fn metrics_json(sys: system::System) -> String {
    let m = sys.network.metrics();
    let mut v = serde_json::to_value(&m).expect("metrics serialise");
    v["system"] = serde_json::Value::String(sys.name);
    v.to_string()
}

/// Version of the compiled core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Names of the system presets.
#[pyfunction]
fn preset_names() -> Vec<&'static str> {
    presets::names()
}

/// Every preset with its parameters and their sources, as JSON.
#[pyfunction]
fn presets_json() -> String {
    presets::described().to_string()
}

/// Metrics of a preset (`"k"`, `"k:8x8x8"`), as JSON.
#[pyfunction]
fn topo_name(py: Python<'_>, spec: String) -> PyResult<String> {
    let sys = system::from_name(&spec).map_err(config_err)?;
    Ok(py.detach(|| metrics_json(sys)))
}

/// Metrics of the `[network]` table in TOML text; `file` names it in errors.
#[pyfunction]
fn topo_toml(py: Python<'_>, text: String, file: String) -> PyResult<String> {
    let sys = system::from_toml(&file, &text).map_err(config_err)?;
    tofusim_experiment::build::check_metrics_cost(&file, &sys).map_err(config_err)?;
    Ok(py.detach(|| metrics_json(sys)))
}

/// Where every router sits and what every port's link is, as JSON
/// (`tofusim_experiment::layout`): of the system named `system` (as
/// `tofusim coll --system` takes it) or of the `[network]` table of the
/// TOML `text` (`file` names it in errors).
#[pyfunction]
#[pyo3(signature = (system=None, text=None, file=String::from("<string>")))]
fn network_layout(py: Python<'_>, system: Option<String>, text: Option<String>, file: String) -> PyResult<String> {
    let layout = match (system, text) {
        (Some(s), None) => py.detach(|| tofusim_experiment::layout::of_name(&s)),
        (None, Some(t)) => py.detach(|| tofusim_experiment::layout::of_toml(&file, &t)),
        _ => return Err(TofusimConfigError::new_err("network_layout: give a system name or TOML text, not both")),
    }
    .map_err(config_err)?;
    Ok(serde_json::to_string(&layout).expect("layouts serialise"))
}

/// The processes of an MPI run as seen by the engine: a Python object with
/// `rank`, `size` and `alltoall(list[bytes]) -> list[bytes]` (the front end
/// wraps an mpi4py communicator in one). The first thread of the process
/// calls it once per window, taking the GIL for the call only.
struct PyTransport {
    comm: Py<PyAny>,
    rank: usize,
    size: usize,
}

impl PyTransport {
    fn new(py: Python<'_>, comm: Py<PyAny>) -> PyResult<Self> {
        let rank = comm.getattr(py, "rank")?.extract::<usize>(py)?;
        let size = comm.getattr(py, "size")?.extract::<usize>(py)?;
        Ok(Self { comm, rank, size })
    }
}

impl tofusim_experiment::engine::Transport for PyTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn alltoall(&mut self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        Python::attach(|py| {
            let bufs: Vec<Bound<'_, pyo3::types::PyBytes>> = send.iter().map(|b| pyo3::types::PyBytes::new(py, b)).collect();
            let got = self.comm.call_method1(py, "alltoall", (bufs,)).and_then(|r| r.extract::<Vec<Vec<u8>>>(py));
            // A failed collective leaves the other processes waiting: there
            // is no recovering from it, only reporting it.
            got.unwrap_or_else(|e| panic!("MPI all-to-all failed: {e}"))
        })
    }
}

/// The engine's progress callback for a Python caller: calls `progress(fraction)`
/// when given, and asks the run to stop when a signal handler raised (a
/// pending SIGINT, seen by `check_signals` on the main thread, or a
/// `KeyboardInterrupt` out of the callback). The run then ends after its
/// current window with `interrupted: true`; the exception is kept in
/// `raised` for [`after_run`].
fn reporter<'a>(progress: &'a Option<Py<PyAny>>, raised: &'a std::sync::Mutex<Option<PyErr>>) -> impl FnMut(f64) -> std::ops::ControlFlow<()> + 'a {
    use std::ops::ControlFlow;
    move |f: f64| {
        Python::attach(|py| {
            let called = progress.as_ref().map_or(Ok(()), |cb| cb.call1(py, (f,)).map(|_| ()));
            match called.and_then(|()| py.check_signals()) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    raised.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    ControlFlow::Break(())
                }
            }
        })
    }
}

/// What a caller gets after a run that a signal handler may have raised
/// in: nothing raised, the run's result; a `KeyboardInterrupt` with
/// `keep_partial` and a run that did stop early, the partial result (the
/// command line prints it and exits 130); anything else (another
/// exception, or an interrupt the caller did not ask to keep, or one that
/// came too late to stop the run) is raised again, so a Ctrl-C is never
/// swallowed.
fn after_run(py: Python<'_>, raised: Option<PyErr>, keep_partial: bool, stopped_early: bool) -> PyResult<()> {
    match raised {
        None => Ok(()),
        Some(e) if keep_partial && stopped_early && e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => Ok(()),
        Some(e) => Err(e),
    }
}

/// The static deadlock check (`tofusim check`) of the experiment in TOML
/// `text`, or of the system named `system` (a preset, resized or not);
/// `routing` sets `[routing] algorithm`. Returns the result as JSON.
/// `progress(fraction)` is called per destination router; Ctrl-C stops it.
#[pyfunction]
#[pyo3(signature = (text=None, system=None, file=String::from("<string>"), routing=None, progress=None))]
fn deadlock_check(
    py: Python<'_>,
    text: Option<String>,
    system: Option<String>,
    file: String,
    routing: Option<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    use tofusim_experiment::check;
    let text = match (text, system) {
        (Some(t), None) => match &routing {
            Some(r) => check::with_routing(&file, &t, r).map_err(config_err)?,
            None => t,
        },
        (None, Some(s)) => check::system_text(&s, routing.as_deref()),
        _ => return Err(TofusimConfigError::new_err("deadlock_check: give a system name or TOML text, not both")),
    };
    let raised = std::sync::Mutex::new(None);
    let result = {
        let mut report = reporter(&progress, &raised);
        py.detach(|| check::check(&file, &text, &mut |done, total| report(done as f64 / total.max(1) as f64)))
    };
    if let Some(e) = raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(serde_json::to_string(&result.map_err(config_err)?).expect("results serialise"))
}

use tofusim_experiment::experiment::DEFAULT_MAX_MINUTES;

/// A time budget from Python: `None` the default (an hour), infinity no
/// limit, else minutes.
fn budget_minutes(max_minutes: Option<f64>) -> Option<f64> {
    match max_minutes {
        None => Some(DEFAULT_MAX_MINUTES),
        Some(m) if m.is_infinite() => None,
        Some(m) => Some(m),
    }
}

/// Runs the experiment in TOML `text` (`file` names it in errors) on the
/// packet engine and returns the result as JSON. `progress(fraction)` is
/// called now and then from the engine; `ports` keeps the per-port
/// counters. `threads` splits the network into that many partitions run on
/// threads; with `comm` (see [`PyTransport`]) this process is one of an MPI
/// run whose every process calls this with the same arguments, and only
/// process 0 returns the result (the others `None`). Results are
/// bit-identical to an unsplit run.
/// `model = "flow"` runs the workload on the flow model instead (one
/// thread; see `tofusim_experiment::flow_run`).
#[pyfunction]
#[pyo3(signature = (text, file, progress=None, ports=false, threads=1, comm=None, model="packet", max_memory=None, keep_partial=false, notice=None, samples=None, max_minutes=None))]
#[allow(clippy::too_many_arguments)]
fn run_experiment(
    py: Python<'_>,
    text: String,
    file: String,
    progress: Option<Py<PyAny>>,
    ports: bool,
    threads: i64,
    comm: Option<Py<PyAny>>,
    model: &str,
    max_memory: Option<u64>,
    keep_partial: bool,
    notice: Option<Py<PyAny>>,
    samples: Option<Bound<'_, pyo3::types::PyDict>>,
    max_minutes: Option<f64>,
) -> PyResult<Option<String>> {
    use tofusim_experiment::run_request::{prepare, RunModel, RunRequest};
    let model = RunModel::parse(model).map_err(config_err)?;
    let req = RunRequest {
        text: &text,
        file: &file,
        model,
        threads,
        across_processes: comm.is_some(),
        max_memory_bytes: max_memory,
        max_minutes: budget_minutes(max_minutes),
    };
    let prepared = prepare(&req).map_err(config_err)?;
    // A long run is announced (`notice`, the command line's stderr) with
    // the way to stop it, before it starts.
    if let (Some(n), Some(m)) = (&notice, prepared.notice()) {
        n.call1(py, (m,))?;
    }
    let transport: Option<Box<dyn tofusim_experiment::engine::Transport>> = match comm {
        Some(c) => Some(Box::new(PyTransport::new(py, c)?)),
        None => None,
    };
    let raised = std::sync::Mutex::new(None);
    let out = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        prepared.run(transport, ports, &mut report)
    });
    let stopped = out.as_ref().is_ok_and(|o| o.as_ref().is_some_and(|o| o.interrupted));
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
    let Some(mut out) = out.map_err(config_err)? else { return Ok(None) };
    if let (Some(d), Some(samples)) = (&samples, &mut out.counter_samples) {
        put_counter_samples(py, d, samples)?;
    }
    Ok(Some(out.json.to_string()))
}

/// The collective algorithms per operation, as JSON
/// `{op: [{"name", "summary", "needs_torus"}]}`.
#[pyfunction]
fn collective_algorithms() -> String {
    tofusim_experiment::collective::algorithms_json().to_string()
}

fn collective_spec(spec: &str) -> PyResult<tofusim_experiment::collective::CollectiveSpec> {
    tofusim_experiment::collective::CollectiveSpec::from_json(spec).map_err(config_err)
}

/// Runs one collective (spec as JSON: op, algo, size_bytes, system, root,
/// segment_bytes, tnis, descriptor, cache_injection, cmg, verify, seed) on
/// the packet engine; returns the result as JSON.
#[pyfunction]
#[pyo3(signature = (spec, progress=None, keep_partial=false, samples=None))]
fn run_collective(py: Python<'_>, spec: String, progress: Option<Py<PyAny>>, keep_partial: bool, samples: Option<Bound<'_, pyo3::types::PyDict>>) -> PyResult<String> {
    let spec = collective_spec(&spec)?;
    let raised = std::sync::Mutex::new(None);
    let r = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        tofusim_experiment::collective::run(&spec, &mut report)
    });
    let stopped = r.as_ref().is_ok_and(|r| r.run.as_ref().is_some_and(|x| x.interrupted) || r.flow.as_ref().is_some_and(|f| f.interrupted));
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
    let mut r = r.map_err(config_err)?;
    // The JSON first: it counts the sample rows, which then move to Python.
    let json = serde_json::to_string(&r).expect("results serialise");
    if let (Some(d), Some(run)) = (&samples, &mut r.run) {
        put_counter_samples(py, d, &mut run.counter_samples)?;
    }
    Ok(json)
}

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

/// Replays a matched MPI program (JSON, as `tofusim_experiment::traces::program_from_json` reads it)
/// on `system` with `model` (packet or flow), ranks placed by `order`
/// (rank → node; default the system's communicator order); the result as
/// JSON.
#[pyfunction]
#[pyo3(signature = (program, system, model="packet", order=None, compute_scale=1.0, seed=1, progress=None, keep_partial=false, system_toml=None, mpi=None, counter_cycles=0, max_minutes=None))]
#[allow(clippy::too_many_arguments)]
fn replay(
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
) -> PyResult<String> {
    let model = replay_model(model)?;
    let program = tofusim_experiment::traces::program_from_json(&program).map_err(config_err)?;
    let mpi = mpi_overrides(mpi)?;
    let spec = tofusim_experiment::replay::ReplaySpec { system, system_toml, mpi, order, model, compute_scale, seed, counter_cycles, max_minutes: budget_minutes(max_minutes) };
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
fn trace_summary(py: Python<'_>, path: String) -> PyResult<String> {
    let s = py.detach(|| tofusim_experiment::traces::summary(&path)).map_err(config_err)?;
    Ok(serde_json::to_string(&s).expect("summaries serialise"))
}

/// The number of ranks of a trace (its definitions only).
#[pyfunction]
fn trace_ranks(py: Python<'_>, path: String) -> PyResult<u32> {
    py.detach(|| tofusim_experiment::traces::ranks(&path)).map_err(config_err)
}

/// A trace's communication list (`tofusim pattern from-trace`): JSON with
/// `ranks`, `flows` ([src, dst, bytes]), `point_to_point_bytes`,
/// `collective_bytes`.
#[pyfunction]
#[pyo3(signature = (path, collectives=true))]
fn trace_comm_list(py: Python<'_>, path: String, collectives: bool) -> PyResult<String> {
    Ok(py.detach(|| tofusim_experiment::traces::comm_list(&path, collectives)).map_err(config_err)?.to_string())
}

/// Replays the trace at `path` on `system` (see [`replay`]); `algorithms`
/// maps an operation to the algorithm to use instead of the default. The
/// result adds the trace's measured time and what the conversion noticed.
#[pyfunction]
#[pyo3(signature = (path, system, model="packet", order=None, compute_scale=1.0, seed=1, progress=None, keep_partial=false, system_toml=None, mpi=None, algorithms=None, counter_cycles=0, samples=None, max_minutes=None))]
#[allow(clippy::too_many_arguments)]
fn trace_replay(
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
) -> PyResult<String> {
    let model = replay_model(model)?;
    let mpi = mpi_overrides(mpi)?;
    let algorithms = algorithms.unwrap_or_default();
    let spec = tofusim_experiment::replay::ReplaySpec { system, system_toml, mpi, order, model, compute_scale, seed, counter_cycles, max_minutes: budget_minutes(max_minutes) };
    let raised = std::sync::Mutex::new(None);
    let r = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        tofusim_experiment::traces::replay(&path, &spec, &algorithms, &mut report)
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

/// A timing as JSON (`tofusim_experiment::comm_bench::timing_json`).
fn timed_json(t: tofusim_experiment::collective::Timed) -> String {
    tofusim_experiment::comm_bench::timing_json(&t).to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_class::<samples::SampleColumn>()?;
    m.add_function(wrap_pyfunction!(dragonfly_hop_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(run_collective_placed, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(presets_json, m)?)?;
    m.add_function(wrap_pyfunction!(topo_name, m)?)?;
    m.add_function(wrap_pyfunction!(topo_toml, m)?)?;
    m.add_function(wrap_pyfunction!(network_layout, m)?)?;
    m.add_function(wrap_pyfunction!(deadlock_check, m)?)?;
    m.add_function(wrap_pyfunction!(run_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(collective_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(run_collective, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(trace_summary, m)?)?;
    m.add_function(wrap_pyfunction!(trace_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(trace_comm_list, m)?)?;
    m.add_function(wrap_pyfunction!(trace_replay, m)?)?;
    m.add_function(wrap_pyfunction!(collective_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(collective_buffers, m)?)?;
    m.add_function(wrap_pyfunction!(run_transfers, m)?)?;
    m.add_function(wrap_pyfunction!(run_pingpong, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_plans, m)?)?;
    m.add_function(wrap_pyfunction!(comm_model, m)?)?;
    m.add_function(wrap_pyfunction!(hardware_barrier_us, m)?)?;
    m.add_function(wrap_pyfunction!(trinaryx3_segment, m)?)?;
    m.add_function(wrap_pyfunction!(run_mpi_pingpong, m)?)?;
    m.add_function(wrap_pyfunction!(mpi_memory, m)?)?;
    m.add_function(wrap_pyfunction!(run_rdma, m)?)?;
    m.add_function(wrap_pyfunction!(cg_comm_list, m)?)?;
    m.add_function(wrap_pyfunction!(map_virtual, m)?)?;
    m.add_function(wrap_pyfunction!(alloc_stream, m)?)?;
    m.add_function(wrap_pyfunction!(order_costs, m)?)?;
    m.add_function(wrap_pyfunction!(baseline_order, m)?)?;
    m.add_function(wrap_pyfunction!(rmatt, m)?)?;
    m.add_function(wrap_pyfunction!(cg_iteration_time, m)?)?;
    m.add_function(wrap_pyfunction!(cg_compute, m)?)?;
    m.add("ConfigError", m.py().get_type::<TofusimConfigError>())?;
    Ok(())
}
