//! Bindings of rank placement and job allocation
//! (`tofusim_experiment::placement`): values in, JSON out, errors mapped
//! once; Ctrl-C reaches the long searches through their `stop` function.

use pyo3::prelude::*;
use tofusim_experiment::placement::{self, Baseline, RmattRequest, VirtualMap};

use crate::{after_run, config_err, reporter, timed_json};

/// Ctrl-C, asked for by a search now and then.
fn interrupted() -> bool {
    Python::attach(|py| py.check_signals().is_err())
}

/// The NAS CG communication list of `procs` processes, class `class`, as
/// text (`SRC DST BYTES` lines).
#[pyfunction]
pub fn cg_comm_list(procs: i64, class: &str) -> PyResult<String> {
    placement::cg_comm_list(procs, class).map_err(config_err)
}

/// One NAS CG iteration's computation per process on a K computer node, as
/// JSON: flops, memory bytes, seconds, the timed run's CG iterations and
/// the node's rates.
#[pyfunction]
pub fn cg_compute(procs: i64, class: &str) -> PyResult<String> {
    Ok(placement::cg_compute(procs, class).map_err(config_err)?.to_string())
}

/// Hop-bytes and maximum link load (bytes) of `order` (rank → node).
#[pyfunction]
#[pyo3(signature = (torus, pattern, order, source="pattern"))]
pub fn order_costs(torus: &str, pattern: &str, order: Vec<u32>, source: &str) -> PyResult<(u64, u64)> {
    placement::order_costs(torus, pattern, &order, source).map_err(config_err)
}

/// A baseline order: `default` (x-y), `random` (seeded) or `greedy`.
#[pyfunction]
#[pyo3(signature = (torus, pattern, kind, seed=1, source="pattern"))]
pub fn baseline_order(py: Python<'_>, torus: &str, pattern: &str, kind: &str, seed: u64, source: &str) -> PyResult<Vec<u32>> {
    let kind = Baseline::parse(kind).map_err(config_err)?;
    py.detach(|| placement::baseline_order(torus, pattern, kind, seed, source)).map_err(config_err)
}

/// RMATT: anneals the rank order of `pattern` on `torus`. JSON with
/// objective, default_cost (of `start`, the x-y order by default),
/// optimized_cost, iterations, accepted, complete, seconds and order.
#[pyfunction]
#[pyo3(signature = (torus, pattern, objective="hop-bytes", seed=1, iterations=None, start=None, source="pattern", ranks_per_node=1))]
#[allow(clippy::too_many_arguments)]
pub fn rmatt(
    py: Python<'_>,
    torus: &str,
    pattern: &str,
    objective: &str,
    seed: u64,
    iterations: Option<i64>,
    start: Option<Vec<u32>>,
    source: &str,
    ranks_per_node: u32,
) -> PyResult<String> {
    let req = RmattRequest { torus, pattern, source, objective, seed, iterations, start, per_node: ranks_per_node };
    // Ctrl-C: the search ends with its best order so far.
    let r = py.detach(|| placement::rmatt(req, &mut interrupted));
    Ok(r.map_err(config_err)?.to_string())
}

/// One NAS CG iteration's communication on the packet engine (see
/// `tofusim_experiment::placement::cg_iteration_time`); timing JSON.
#[pyfunction]
#[pyo3(signature = (torus, procs, class, order, system="k", ranks_per_node=1))]
#[allow(clippy::too_many_arguments)]
pub fn cg_iteration_time(py: Python<'_>, torus: &str, procs: i64, class: &str, order: Vec<u32>, system: &str, ranks_per_node: u32) -> PyResult<String> {
    // Ctrl-C stops the run; the interrupt is raised again after it.
    let raised = std::sync::Mutex::new(None);
    let timed = py.detach(|| {
        let mut report = reporter(&None, &raised);
        placement::cg_iteration_time(torus, procs, class, order, system, ranks_per_node, &mut report)
    });
    let stopped = timed.as_ref().is_ok_and(|t| t.run.interrupted);
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), false, stopped)?;
    Ok(timed_json(timed.map_err(config_err)?))
}

/// A virtual torus on a Tofu system: JSON with virtual_shape, nodes_used,
/// padding_nodes, lost_nodes, max/mean_neighbor_hops, mechanism, block,
/// axes, and (with `with_order`) node_of_rank and node coordinates.
#[pyfunction]
#[pyo3(signature = (system, shape, region=None, faults=None, faults_source="faults", with_order=false))]
pub fn map_virtual(py: Python<'_>, system: &str, shape: &str, region: Option<&str>, faults: Option<&str>, faults_source: &str, with_order: bool) -> PyResult<String> {
    let req = VirtualMap { system, shape, region, faults, faults_source, with_order };
    Ok(py.detach(|| placement::map_virtual(req)).map_err(config_err)?.to_string())
}

/// The job allocator on a synthetic stream, under the four policies (no
/// rotation or padding, rotation, padding, both). JSON.
#[pyfunction]
#[pyo3(signature = (system, jobs=500, load=0.9, seed=1))]
pub fn alloc_stream(py: Python<'_>, system: &str, jobs: usize, load: f64, seed: u64) -> PyResult<String> {
    let r = py.detach(|| placement::alloc_stream(system, jobs, load, seed, &mut interrupted)).map_err(config_err)?;
    match r {
        Some(v) => Ok(v.to_string()),
        None => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("alloc interrupted")),
    }
}
