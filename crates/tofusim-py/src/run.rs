//! Bindings of `tofusim run` (`tofusim_experiment::run_request`) and of
//! an MPI run's transport.

use pyo3::prelude::*;

use crate::{after_run, budget_minutes, config_err, reporter, };
use crate::samples::put_counter_samples;

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
pub fn run_experiment(
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

