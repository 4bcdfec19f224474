//! PyO3 bindings of the tofusim core. Thin on purpose: each function takes
//! plain values, calls a front door of `tofusim-experiment` (the only crate
//! this one depends on) and returns JSON text; `ConfigError` maps once to
//! `tofusim.ConfigError` ([`config_err`]). One module per area: `run`,
//! `coll`, `trace` (replays), `topo` (systems, layouts, the deadlock
//! check), `placement` (mapping, RMATT, allocation), `comm` (the
//! communication layer's measurements), `samples` (counter samples handed
//! over without a copy); here the helpers they share.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tofusim_experiment::ConfigError;

mod coll;
mod comm;
mod placement;
mod run;
mod samples;
mod topo;
mod trace;
use coll::{collective_algorithms, mpi_bench, run_collective, run_given_schedule};
use run::run_experiment;
use topo::{deadlock_check, network_layout, preset_names, presets_json, topo_name, topo_toml};
use trace::{replay, trace_comm_list, trace_replay, trace_ranks, trace_summary};
use comm::{
    barrier_plans, collective_buffers, collective_schedule, comm_model, dragonfly_hop_pairs, hardware_barrier_us, mpi_memory, run_collective_placed,
    run_mpi_pingpong, run_pingpong, run_rdma, run_transfers, trinaryx3_segment,
};
use placement::{alloc_stream, baseline_order, cg_comm_list, cg_compute, cg_iteration_time, map_virtual, order_costs, rmatt};

create_exception!(
    _core,
    TofusimConfigError,
    PyException,
    "Bad input: the message names the file, the key path and what was expected."
);

fn config_err(e: ConfigError) -> PyErr {
    TofusimConfigError::new_err(e.to_string())
}

/// Version of the compiled core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The JSON Schema of every result, from the Rust types that write them.
#[pyfunction]
fn result_schema() -> String {
    tofusim_experiment::result_schema::results().to_string()
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

/// A timing as JSON (`tofusim_experiment::comm_bench::timing_json`).
fn timed_json(t: tofusim_experiment::collective::Timed) -> String {
    tofusim_experiment::comm_bench::timing_json(&t).to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(result_schema, m)?)?;
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
    m.add_function(wrap_pyfunction!(coll::run_jobs, m)?)?;
    m.add_function(wrap_pyfunction!(mpi_bench, m)?)?;
    m.add_function(wrap_pyfunction!(run_given_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(trace_summary, m)?)?;
    m.add_function(wrap_pyfunction!(trace_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(trace_comm_list, m)?)?;
    m.add_function(wrap_pyfunction!(trace_replay, m)?)?;
    m.add_function(wrap_pyfunction!(trace::trace_goal, m)?)?;
    m.add_function(wrap_pyfunction!(trace::trace_chakra, m)?)?;
    m.add_function(wrap_pyfunction!(comm::schedule_chakra, m)?)?;
    m.add_function(wrap_pyfunction!(collective_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(comm::schedule_goal, m)?)?;
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
