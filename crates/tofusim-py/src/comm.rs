//! Bindings of the communication layer's measurements
//! (`tofusim_experiment::comm_bench`): values in, JSON out, errors mapped
//! once.

use pyo3::prelude::*;
use tofusim_experiment::comm_bench::{self, Rdma, ScheduleRequest};
use tofusim_experiment::comm_model::Modes;

use crate::{config_err, timed_json};

/// The low-latency switches of a transfer, or the error naming the bad one.
fn modes(descriptor: &str, cache_injection: bool, cmg: &str) -> PyResult<Modes> {
    Modes::parse(descriptor, cache_injection, cmg).map_err(config_err)
}

/// Transfers that start together over `system`'s communicator: a list of
/// (src rank, dst rank, bytes, tni). Returns the timing as JSON.
#[pyfunction]
#[pyo3(signature = (system, transfers, descriptor="direct", cache_injection=true, cmg="near"))]
pub fn run_transfers(py: Python<'_>, system: String, transfers: Vec<(u32, u32, u64, u8)>, descriptor: &str, cache_injection: bool, cmg: &str) -> PyResult<String> {
    let m = modes(descriptor, cache_injection, cmg)?;
    Ok(timed_json(py.detach(|| comm_bench::transfers(&system, &transfers, &m)).map_err(config_err)?))
}

/// `rounds` round trips of `bytes` between ranks `a` and `b` of `system`.
#[pyfunction]
#[pyo3(signature = (system, a, b, bytes, rounds, descriptor="direct", cache_injection=true, cmg="near"))]
#[allow(clippy::too_many_arguments)]
pub fn run_pingpong(py: Python<'_>, system: String, a: u32, b: u32, bytes: u64, rounds: u32, descriptor: &str, cache_injection: bool, cmg: &str) -> PyResult<String> {
    let m = modes(descriptor, cache_injection, cmg)?;
    Ok(timed_json(py.detach(|| comm_bench::pingpong(&system, a, b, bytes, rounds, &m)).map_err(config_err)?))
}

/// `rounds` RDMA Gets (`kind = "get"`) of `bytes`, or 8-byte atomic adds
/// (`"atomic"`), by rank 0 on rank 1 of `system`, one after another.
#[pyfunction]
#[pyo3(signature = (system, kind, bytes, rounds, descriptor="direct", cache_injection=true, cmg="near"))]
#[allow(clippy::too_many_arguments)]
pub fn run_rdma(py: Python<'_>, system: String, kind: &str, bytes: u64, rounds: u32, descriptor: &str, cache_injection: bool, cmg: &str) -> PyResult<String> {
    let kind = Rdma::parse(kind).map_err(config_err)?;
    let m = modes(descriptor, cache_injection, cmg)?;
    Ok(timed_json(py.detach(|| comm_bench::rdma(&system, kind, bytes, rounds, &m)).map_err(config_err)?))
}

/// `rounds` MPI ping-pongs of `bytes` between ranks 0 and 1 of `system`
/// (K computer MPI settings); `mode` forces a buffer mode or follows the
/// switching policy (`auto`). Returns the timing as JSON.
#[pyfunction]
#[pyo3(signature = (system, bytes, rounds, mode="auto"))]
pub fn run_mpi_pingpong(py: Python<'_>, system: String, bytes: u64, rounds: u32, mode: &str) -> PyResult<String> {
    let forced = comm_bench::buffer_mode(mode).map_err(config_err)?;
    Ok(timed_json(py.detach(|| comm_bench::mpi_pingpong(&system, bytes, rounds, forced)).map_err(config_err)?))
}

/// The MPI settings and the communication-buffer memory per process for
/// each number of peers under each policy, as JSON.
#[pyfunction]
pub fn mpi_memory(peers: Vec<u32>) -> String {
    comm_bench::mpi_memory(&peers).to_string()
}

/// The TofuD (or Tofu1) barrier-gate plan for each BCH count, as JSON.
#[pyfunction]
#[pyo3(signature = (bchs, generation="tofud"))]
pub fn barrier_plans(bchs: Vec<u32>, generation: &str) -> PyResult<String> {
    Ok(comm_bench::barrier_plans(&bchs, generation).map_err(config_err)?.to_string())
}

/// The Tofu hardware barrier (or, with `payload_bytes`, the barrier
/// interface's small allreduce) across every node of `system`, µs; `graph`
/// wires the gates: `physical-axes` (default), `axes`, `axis-neighbours` or
/// `rank-order`.
#[pyfunction]
#[pyo3(signature = (system, payload_bytes=0, graph="physical-axes"))]
pub fn hardware_barrier_us(py: Python<'_>, system: String, payload_bytes: u32, graph: &str) -> PyResult<f64> {
    py.detach(|| comm_bench::hardware_barrier_us(&system, payload_bytes, graph)).map_err(config_err)
}

/// The communication model of a system (packet format, components, sources).
#[pyfunction]
pub fn comm_model(system: String) -> PyResult<String> {
    let m = comm_bench::comm_model(&system).map_err(config_err)?;
    Ok(serde_json::to_string(&m).expect("models serialise"))
}

/// For each route length of a dragonfly's routing (`system`, with an
/// optional `/mode`), one pair of nodes whose packets take that many router
/// hops both ways: `[(hops, src node, dst node)]`, from node 0.
#[pyfunction]
pub fn dragonfly_hop_pairs(system: String) -> PyResult<Vec<(u32, u32, u32)>> {
    comm_bench::dragonfly_hop_pairs(&system).map_err(config_err)
}

/// Collective `op`/`algo` of `size_bytes` with its ranks placed on the
/// nodes of `system` by `node_of_rank` (several ranks may share a node:
/// their messages then turn around in the node's NIC), on the packet
/// engine; the timing as JSON.
#[pyfunction]
#[pyo3(signature = (system, op, algo, size_bytes, node_of_rank, seed=1))]
pub fn run_collective_placed(py: Python<'_>, system: String, op: String, algo: String, size_bytes: u64, node_of_rank: Vec<u32>, seed: u64) -> PyResult<String> {
    Ok(timed_json(py.detach(|| comm_bench::collective_placed(&system, &op, &algo, size_bytes, node_of_rank, seed)).map_err(config_err)?))
}

/// The schedule of a collective for `ranks` processes (optionally shaped
/// as a torus `shape`), as JSON, for the real-MPI executor.
#[pyfunction]
#[pyo3(signature = (op, algo, ranks, size_bytes, root=0, shape=None, segment_bytes=65536, tnis=4))]
#[allow(clippy::too_many_arguments)]
pub fn collective_schedule(op: String, algo: String, ranks: u32, size_bytes: u64, root: u32, shape: Option<Vec<u32>>, segment_bytes: u64, tnis: u8) -> PyResult<String> {
    let req = ScheduleRequest { op: &op, algo: &algo, ranks, size_bytes, root, shape, segment_bytes, tnis };
    let s = comm_bench::collective_schedule(req).map_err(config_err)?;
    Ok(serde_json::to_string(&s).expect("schedules serialise"))
}

/// Rank `rank`'s buffer before a collective and the elements it must hold
/// after, as little-endian u64 bytes: (initial, result offset, expected).
#[pyfunction]
pub fn collective_buffers(op: String, root: u32, ranks: u32, count: u64, buffer_elements: u64, rank: u32) -> PyResult<(Vec<u8>, u64, Vec<u8>)> {
    let (init, offset, expected) = comm_bench::collective_buffers(&op, root, ranks, count, buffer_elements, rank).map_err(config_err)?;
    let bytes = |v: Vec<u64>| v.into_iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    Ok((bytes(init), offset, bytes(expected)))
}

/// The Trinaryx3 segment derived from the pipeline depth on `system` for a
/// vector of `size_bytes` (JSON: segment_bytes, stages, alpha_ns,
/// ns_per_byte, part_bytes).
#[pyfunction]
pub fn trinaryx3_segment(py: Python<'_>, system: String, size_bytes: u64) -> PyResult<String> {
    let r = py.detach(|| tofusim_experiment::collective::trinaryx3_segment(&system, size_bytes)).map_err(config_err)?;
    Ok(serde_json::to_string(&r).expect("plain numbers serialise"))
}

/// A schedule's JSON written as GOAL text for `system` (copies and
/// summing receives as `calc` at its host rates).
#[pyfunction]
#[pyo3(signature = (schedule, system, source="<schedule>"))]
pub fn schedule_goal(schedule: String, system: String, source: &str) -> PyResult<String> {
    tofusim_experiment::given_schedule::goal_text(&schedule, &system, source).map_err(config_err)
}

/// A schedule's JSON written for `system` as Chakra execution traces
/// `out/tofusim.RANK.et`; their paths, rank 0 first.
#[pyfunction]
#[pyo3(signature = (schedule, system, out, source="<schedule>"))]
pub fn schedule_chakra(schedule: String, system: String, out: String, source: &str) -> PyResult<Vec<String>> {
    let files = tofusim_experiment::given_schedule::chakra_files(&schedule, &system, source).map_err(config_err)?;
    write_chakra(&out, files)
}

/// Writes one Chakra file per rank under `out` (made if missing).
pub(crate) fn write_chakra(out: &str, files: Vec<Vec<u8>>) -> PyResult<Vec<String>> {
    let dir = std::path::Path::new(out);
    std::fs::create_dir_all(dir).map_err(|e| pyo3::exceptions::PyOSError::new_err((e.raw_os_error().unwrap_or(0), e.to_string(), out.to_string())))?;
    // An earlier, larger trace's files would read as more ranks of this one.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with("tofusim.") && name.ends_with(".et") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    files
        .into_iter()
        .enumerate()
        .map(|(r, bytes)| {
            let p = dir.join(format!("tofusim.{r}.et"));
            std::fs::write(&p, bytes).map_err(|e| pyo3::exceptions::PyOSError::new_err((e.raw_os_error().unwrap_or(0), e.to_string(), p.display().to_string())))?;
            Ok(p.display().to_string())
        })
        .collect()
}
