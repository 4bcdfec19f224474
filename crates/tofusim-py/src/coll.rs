//! Bindings of `tofusim coll` (`tofusim_experiment::collective`).

use pyo3::prelude::*;

use crate::{after_run, config_err, reporter};
use crate::samples::put_counter_samples;

/// The collective algorithms per operation, as JSON
/// `{op: [{"name", "summary", "needs_torus"}]}`.
#[pyfunction]
pub fn collective_algorithms() -> String {
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
pub fn run_collective(py: Python<'_>, spec: String, progress: Option<Py<PyAny>>, keep_partial: bool, samples: Option<Bound<'_, pyo3::types::PyDict>>) -> PyResult<String> {
    let spec = collective_spec(&spec)?;
    collective_run(py, progress, keep_partial, samples, |report| tofusim_experiment::collective::run(&spec, report))
}

/// Runs a collective front door `run` without the GIL (Ctrl-C and
/// progress through `progress`), then hands its counter samples to
/// `samples` and returns its JSON.
fn collective_run(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    keep_partial: bool,
    samples: Option<Bound<'_, pyo3::types::PyDict>>,
    run: impl FnOnce(&mut dyn FnMut(f64) -> std::ops::ControlFlow<()>) -> tofusim_experiment::error::Result<tofusim_experiment::collective::CollectiveResult> + Send,
) -> PyResult<String> {
    let raised = std::sync::Mutex::new(None);
    let r = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        run(&mut report)
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


/// Runs an IMB-style benchmark (spec as JSON: benchmark, system, ppn,
/// placement or rank_map, sizes, algo, model, seed, max_minutes) and
/// returns its table as JSON (`tofusim_experiment::mpi_bench`).
#[pyfunction]
#[pyo3(signature = (spec, progress=None, keep_partial=false))]
pub fn mpi_bench(py: Python<'_>, spec: String, progress: Option<Py<PyAny>>, keep_partial: bool) -> PyResult<String> {
    let req = tofusim_experiment::mpi_bench::BenchRequest::from_json(&spec).map_err(config_err)?;
    let raised = std::sync::Mutex::new(None);
    let r = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        tofusim_experiment::mpi_bench::run(&req, &mut report)
    });
    let stopped = r.as_ref().is_ok_and(|r| r.interrupted);
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
    let r = r.map_err(config_err)?;
    Ok(serde_json::to_string(&r).expect("results serialise"))
}

/// Runs a collective given as data (spec as JSON: schedule — the
/// schedule's JSON text —, schedule_source, system, ppn, placement or
/// rank_map, verify, seed, model, max_minutes, counter_cycles, steps);
/// returns the result as JSON (`tofusim_experiment::given_schedule`).
#[pyfunction]
#[pyo3(signature = (spec, progress=None, keep_partial=false, samples=None))]
pub fn run_given_schedule(py: Python<'_>, spec: String, progress: Option<Py<PyAny>>, keep_partial: bool, samples: Option<Bound<'_, pyo3::types::PyDict>>) -> PyResult<String> {
    let g = tofusim_experiment::given_schedule::GivenRun::from_json(&spec).map_err(config_err)?;
    collective_run(py, progress, keep_partial, samples, |report| tofusim_experiment::given_schedule::run(&g, report))
}

/// Runs a job mix (`tofusim jobs`: the file's `text`, named `source` in
/// errors): the jobs together on one network, then each alone; the
/// result as JSON. Ctrl-C stops the run in progress and raises.
#[pyfunction]
#[pyo3(signature = (text, source, progress=None))]
pub fn run_jobs(py: Python<'_>, text: String, source: String, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let raised = std::sync::Mutex::new(None);
    let r = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        tofusim_experiment::jobs::run(&source, &text, &mut report)
    });
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), false, false)?;
    Ok(serde_json::to_string(&r.map_err(config_err)?).expect("results serialise"))
}
