//! PyO3 bindings of the tofusim core. Thin on purpose: each function takes
//! plain values, calls the Rust layers and returns JSON text; each Rust
//! error type maps once to a Python exception class.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tofusim_experiment::{presets, system, ConfigError};

mod samples;
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
    let list: Vec<serde_json::Value> = presets::PRESETS
        .iter()
        .map(|p| {
            let t: toml::Table = p.toml.parse().expect("presets are valid TOML");
            let mut params = serde_json::Map::new();
            let mut sources = serde_json::Map::new();
            for (k, v) in &t {
                if k == "sources" {
                    if let toml::Value::Table(s) = v {
                        for (sk, sv) in s {
                            sources.insert(sk.clone(), serde_json::Value::String(sv.as_str().unwrap_or_default().to_string()));
                        }
                    }
                } else {
                    params.insert(k.clone(), serde_json::Value::String(v.to_string()));
                }
            }
            serde_json::json!({"name": p.name, "description": p.description, "params": params, "sources": sources})
        })
        .collect();
    serde_json::Value::Array(list).to_string()
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

impl tofusim_packet::Transport for PyTransport {
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

/// Runs estimated to take longer than this are announced before they start.
const LONG_RUN_SECONDS: f64 = 60.0;
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
/// Threads a run may split over (`--threads`).
const MAX_THREADS: i64 = 4096;
/// Proposed swaps an RMATT run may make (`--iterations`).
const MAX_ITERATIONS: i64 = 1_000_000_000_000;

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
    let mut exp = tofusim_experiment::experiment::parse(&file, &text).map_err(config_err)?;
    if !matches!(model, "packet" | "flow") {
        return Err(TofusimConfigError::new_err(format!("<command line>: --model: unknown model `{model}`; expected packet or flow")));
    }
    if !(1..=MAX_THREADS).contains(&threads) {
        return Err(TofusimConfigError::new_err(format!("<command line>: --threads: expected 1 to {MAX_THREADS}, found {threads}")));
    }
    let threads = threads as usize;
    let setup = serde_json::json!({
        "system": exp.built.system.name,
        "router": exp.router,
        // The routing as run: a dragonfly's or fat-tree's algorithm by name
        // (their engine mode is "deterministic" whatever the algorithm).
        "routing": match (&exp.built.dragonfly, &exp.built.fattree) {
            (Some((_, m)), _) => serde_json::Value::from(m.name()),
            (_, Some((_, m))) => serde_json::Value::from(m.name()),
            _ => serde_json::to_value(exp.mode).expect("a mode serialises"),
        },
        "run": exp.run,
        "workload": exp.workload.kind,
        "packet_bytes": exp.workload.packet_bytes,
        "header_bytes": exp.workload.header_bytes,
        "injection_links": exp.built.injection_links,
        // Latencies in physical time beside the router's cycle counts.
        "cycle_ns": exp.built.cycle_ns(),
        "hop_latency_ns": exp.router.hop_latency_cycles as f64 * exp.built.cycle_ns(),
        "token_latency_ns": exp.router.token_latency_cycles as f64 * exp.built.cycle_ns(),
        "nodes": exp.workload.nodes(),
        // Failed nodes (ids) and links (router pairs) the run routed around.
        "faults": exp.built.system.network.faults,
        // Failures and recoveries during the run (router ids and ports).
        "fault_events": exp.fault_schedule.as_ref().map(|s| &s.events),
    });
    if model == "flow" {
        if threads > 1 || comm.is_some() {
            return Err(TofusimConfigError::new_err("<command line>: --threads and --mpi split the packet engine; the flow model runs on one thread"));
        }
        let estimate = tofusim_experiment::flow_run::check_memory(&file, &exp, max_memory).map_err(config_err)?;
        let raised = std::sync::Mutex::new(None);
        let r = py.detach(|| {
            let mut report = reporter(&progress, &raised);
            tofusim_experiment::flow_run::run(&file, &exp, &mut report)
        });
        let stopped = r.as_ref().is_ok_and(|r| r.interrupted);
        after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
        let r = r.map_err(config_err)?;
        let mut v = serde_json::to_value(&r).expect("results serialise");
        v["setup"] = setup;
        v["sim"]["estimated_memory_bytes"] = estimate.into();
        return Ok(Some(v.to_string()));
    }
    // An MPI run's processes must all decide alike: the machine's memory
    // (which differs between hosts and moments) is not a limit there, only
    // an explicit max_memory is.
    let footprint = if comm.is_some() && max_memory.is_none() {
        tofusim_experiment::experiment::memory_estimate(&exp)
    } else {
        tofusim_experiment::experiment::check_memory(&file, &mut exp, max_memory).map_err(config_err)?
    };
    // The run's length, before it starts: a long one is announced
    // (`notice`, the command line's stderr) with the way to stop it.
    let work = tofusim_experiment::experiment::work_estimate(&exp);
    // A run whose own estimate exceeds the time budget is refused before
    // it starts (it would otherwise be announced and then run for years).
    let budget = budget_minutes(max_minutes).unwrap_or(f64::INFINITY);
    if work.wall_seconds() / 60.0 > budget {
        return Err(TofusimConfigError::new_err(format!(
            "{file}: run: about {:.2e} packet-hops, roughly {:.3e} minutes at the engine's usual {:.1} us per hop: over the {budget:.0}-minute budget; \
             shorten the run (run.cycles, the load, the system) or raise the budget (--max-time 1d, or none)",
            work.packet_hops as f64,
            work.wall_seconds() / 60.0,
            tofusim_experiment::experiment::NS_PER_PACKET_HOP / 1000.0
        )));
    }
    if let Some(n) = &notice {
        if work.wall_seconds() > LONG_RUN_SECONDS {
            let m = format!(
                "about {:.2e} packet-hops to simulate: roughly {:.0} minutes at the engine's usual {:.1} us per hop (Ctrl-C stops it and prints what was measured)",
                work.packet_hops as f64,
                work.wall_seconds() / 60.0,
                tofusim_experiment::experiment::NS_PER_PACKET_HOP / 1000.0
            );
            n.call1(py, (m,))?;
        }
    }
    let engine = tofusim_experiment::experiment::engine(exp);
    let transport: Option<Box<dyn tofusim_packet::Transport>> = match comm {
        Some(c) => Some(Box::new(PyTransport::new(py, c)?)),
        None => None,
    };
    let split = tofusim_packet::Split { threads, transport };
    tofusim_experiment::experiment::check_split(&file, &engine, &split).map_err(config_err)?;
    let raised = std::sync::Mutex::new(None);
    let result = py.detach(|| {
        let mut report = reporter(&progress, &raised);
        engine.run_split(split, &mut report, |_| ())
    });
    let stopped = result.as_ref().is_some_and(|(r, ())| r.interrupted);
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
    let Some((mut result, ())) = result else { return Ok(None) };
    if !ports {
        result.ports.clear();
    }
    // The JSON first: it counts the sample rows, which then move to Python.
    let mut v = serde_json::to_value(&result).expect("results serialise");
    if let Some(d) = &samples {
        put_counter_samples(py, d, &mut result.counter_samples)?;
    }
    v["setup"] = setup;
    v["sim"]["estimated_memory_bytes"] = footprint.total().into();
    v["sim"]["estimated_packet_hops"] = work.packet_hops.into();
    Ok(Some(v.to_string()))
}

/// The collective algorithms per operation, as JSON
/// `{op: [{"name", "summary", "needs_torus"}]}`.
#[pyfunction]
fn collective_algorithms() -> String {
    let mut m = serde_json::Map::new();
    for op in tofusim_comm::collective::OPERATIONS {
        let list: Vec<serde_json::Value> = tofusim_comm::Algorithm::of(op)
            .iter()
            .map(|a| serde_json::json!({"name": a.name(), "summary": a.summary(), "needs_torus": a.needs_torus()}))
            .collect();
        m.insert(op.to_string(), serde_json::Value::Array(list));
    }
    serde_json::Value::Object(m).to_string()
}

fn collective_spec(spec: &str) -> PyResult<tofusim_experiment::collective::CollectiveSpec> {
    let v: serde_json::Value = serde_json::from_str(spec)
        .map_err(|e| TofusimConfigError::new_err(format!("bad spec: {e}")))?;
    // A key given as anything but a whole number ≥ 0 is refused (a `-1`
    // root must not become the default).
    let get_u = |k: &str, d: u64| -> PyResult<u64> {
        match v.get(k) {
            None | Some(serde_json::Value::Null) => Ok(d),
            Some(x) => x.as_u64().ok_or_else(|| {
                config_err(ConfigError::new("<command line>", k, format!("expected a whole number of at least 0, found {x}")))
            }),
        }
    };
    let get_s = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let modes = modes(
        &get_s("descriptor"),
        v.get("cache_injection")
            .and_then(|x| x.as_bool())
            .unwrap_or(true),
        &get_s("cmg"),
    )?;
    Ok(tofusim_experiment::collective::CollectiveSpec {
        op: get_s("op"),
        algorithm: get_s("algo"),
        size_bytes: get_u("size_bytes", 8)?,
        system: get_s("system"),
        root: u32::try_from(get_u("root", 0)?).map_err(|_| TofusimConfigError::new_err("<command line>: root: expected a rank of the communicator"))?,
        segment_bytes: match v.get("segment_bytes") {
            None | Some(serde_json::Value::Null) => None,
            Some(_) => Some(get_u("segment_bytes", 0)?),
        },
        tnis: match get_u("tnis", 0)? {
            0 if v.get("tnis").is_none_or(|x| x.is_null()) => None,
            t => Some(u8::try_from(t).map_err(|_| TofusimConfigError::new_err(format!("<command line>: tnis: expected 1 to the node's TNIs, found {t}")))?),
        },
        modes,
        verify: v.get("verify").and_then(|x| x.as_bool()).unwrap_or(false),
        // Minutes, or "none" for no limit; absent: the default hour.
        max_minutes: match v.get("max_minutes") {
            None | Some(serde_json::Value::Null) => budget_minutes(None),
            Some(serde_json::Value::String(x)) if x == "none" => None,
            Some(x) => match x.as_f64() {
                Some(m) if m >= 0.0 => Some(m),
                _ => return Err(config_err(ConfigError::new("<command line>", "max-time", format!("expected minutes of at least 0 or none, found {x}")))),
            },
        },
        seed: get_u("seed", 1)?,
        counter_cycles: get_u("counter_cycles", 0)?,
        steps: v.get("steps").and_then(|x| x.as_bool()).unwrap_or(false),
        trees: match v.get("trees") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(text)) => {
                let source = v.get("trees_source").and_then(|x| x.as_str()).unwrap_or("<trees>");
                Some(std::sync::Arc::new(tofusim_experiment::collective::trees_from_json(text, source).map_err(config_err)?))
            }
            Some(other) => {
                let kind = if other.is_object() { "an object" } else { "not text" };
                return Err(config_err(ConfigError::new("<command line>", "trees", format!("expected the trees file's JSON text, found {kind}"))));
            }
        },
        model: {
            let m = v.get("model").and_then(|x| x.as_str()).unwrap_or("packet");
            tofusim_experiment::collective::Model::parse(m).ok_or_else(|| {
                TofusimConfigError::new_err(format!("<command line>: --model: unknown model `{m}`; expected one of: {}", tofusim_experiment::collective::Model::NAMES.join(", ")))
            })?
        },
    })
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

/// Replays a matched MPI program (JSON, [`tofusim_comm::replay::ReplayProgram`])
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
    let program: tofusim_comm::replay::ReplayProgram = serde_json::from_str(&program)
        .map_err(|e| config_err(ConfigError::new("<trace>", "program", format!("not a replay program: {e}"))))?;
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
    let s = py.detach(|| tofusim_trace::read(&path).map(|t| tofusim_trace::summary::summarise(&t)));
    let s = s.map_err(TofusimConfigError::new_err)?;
    Ok(serde_json::to_string(&s).expect("summaries serialise"))
}

/// The number of ranks of a trace (its definitions only).
#[pyfunction]
fn trace_ranks(py: Python<'_>, path: String) -> PyResult<u32> {
    py.detach(|| tofusim_trace::archive::ranks(&path)).map_err(TofusimConfigError::new_err)
}

/// A trace's communication list (`tofusim pattern from-trace`): JSON with
/// `ranks`, `flows` ([src, dst, bytes]), `point_to_point_bytes`,
/// `collective_bytes`.
#[pyfunction]
#[pyo3(signature = (path, collectives=true))]
fn trace_comm_list(py: Python<'_>, path: String, collectives: bool) -> PyResult<String> {
    let r = py.detach(|| {
        let t = tofusim_trace::read(&path)?;
        let c = tofusim_trace::summary::comm_list(&t, collectives)?;
        Ok::<_, String>(serde_json::json!({
            "trace": t.path, "ranks": t.ranks, "point_to_point_bytes": c.point_to_point_bytes, "collective_bytes": c.collective_bytes,
            "flows": c.flows.iter().map(|(&(a, b), &n)| [a as u64, b as u64, n]).collect::<Vec<_>>(),
        }))
    });
    Ok(r.map_err(TofusimConfigError::new_err)?.to_string())
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
        let t = tofusim_trace::read(&path)?;
        let (program, notes) = tofusim_trace::program::build(&t, &algorithms)?;
        let mut report = reporter(&progress, &raised);
        let r = tofusim_experiment::replay::run(&program, &spec, &mut report).map_err(|e| e.to_string())?;
        Ok::<_, String>((t.path.clone(), t.measured_ns(), notes, r))
    });
    let stopped = r.as_ref().is_ok_and(|r| r.3.run.as_ref().is_some_and(|x| x.interrupted));
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), keep_partial, stopped)?;
    let (trace, measured_ns, notes, mut r) = r.map_err(TofusimConfigError::new_err)?;
    // The JSON first: it counts the sample rows, which then move to Python.
    let mut v = serde_json::to_value(&r).expect("results serialise");
    if let (Some(d), Some(run)) = (&samples, &mut r.run) {
        put_counter_samples(py, d, &mut run.counter_samples)?;
    }
    let o = v.as_object_mut().expect("an object");
    o.insert("trace".into(), trace.into());
    o.insert("measured_seconds".into(), (measured_ns as f64 * 1e-9).into());
    o.insert("algorithms".into(), serde_json::to_value(&notes.algorithms).expect("names"));
    o.insert("uncompleted_receives".into(), notes.uncompleted_receives.into());
    o.insert("cancelled_receives".into(), notes.cancelled_receives.into());
    o.insert("trivial_collectives".into(), notes.trivial_collectives.into());
    o.insert("self_messages".into(), notes.self_messages.into());
    Ok(v.to_string())
}

/// Collective `op`/`algo` of `size_bytes` with its ranks placed on the
/// nodes of `system` by `node_of_rank` (several ranks may share a node:
/// their messages then turn around in the node's NIC), on the packet
/// engine; the timing as JSON.
#[pyfunction]
#[pyo3(signature = (system, op, algo, size_bytes, node_of_rank, seed=1))]
fn run_collective_placed(
    py: Python<'_>,
    system: String,
    op: String,
    algo: String,
    size_bytes: u64,
    node_of_rank: Vec<u32>,
    seed: u64,
) -> PyResult<String> {
    let t = py.detach(|| {
        let mut setup = tofusim_experiment::collective::setup(&system)?;
        let nodes = setup.built.nodes.node_count();
        if node_of_rank.is_empty() || node_of_rank.iter().any(|&n| n as u64 >= nodes) {
            return Err(ConfigError::new("<placement>", "node_of_rank", format!("expected at least one rank, each on a node below {nodes}")));
        }
        setup.node_of_rank = node_of_rank;
        setup.grid = None;
        let ranks = setup.node_of_rank.len() as u32;
        let mut params = tofusim_comm::algorithms::Params::new(ranks, 0);
        params.tnis = setup.built.model.tnis.max(1);
        let s = tofusim_comm::algorithms::build_named(&op, &algo, 0, size_bytes, params)
            .map_err(|e| ConfigError::new("<collective>", e.key, e.message))?;
        tofusim_experiment::collective::run_on(setup, s, &Default::default(), seed, &mut |_| std::ops::ControlFlow::Continue(()))
    });
    Ok(timed_json(t.map_err(config_err)?))
}

/// The schedule of a collective for `ranks` processes (optionally shaped
/// as a torus `shape`), as JSON, for the real-MPI executor.
#[pyfunction]
#[pyo3(signature = (op, algo, ranks, size_bytes, root=0, shape=None, segment_bytes=65536, tnis=4))]
#[allow(clippy::too_many_arguments)]
fn collective_schedule(
    op: String,
    algo: String,
    ranks: u32,
    size_bytes: u64,
    root: u32,
    shape: Option<Vec<u32>>,
    segment_bytes: u64,
    tnis: u8,
) -> PyResult<String> {
    // The schedule comes back as JSON, a few hundred bytes per message:
    // refuse what cannot be held before building it.
    let most = tofusim_experiment::collective::MAX_SCHEDULE_MESSAGES / 10;
    let messages = tofusim_experiment::collective::messages_estimate(
        &op,
        &algo,
        size_bytes,
        Some(segment_bytes),
        ranks as u64,
    );
    if messages > most {
        return Err(TofusimConfigError::new_err(format!(
            "<arguments>: ranks: {ranks} ranks of {op} {algo}: about {messages:.3e} messages, more than the {most:.1e} a schedule handed back as JSON may hold; \
             time it with tofusim.coll instead (which keeps it in the engine)"
        )));
    }
    let mut p = tofusim_comm::Params::new(ranks, 0);
    p.grid = match shape {
        Some(s) => Some(tofusim_comm::tree::Grid::from_shape(&s).ok_or_else(|| {
            TofusimConfigError::new_err("shape: expected 1 to 3 positive axis lengths")
        })?),
        None => None,
    };
    p.segment_elements = segment_bytes.div_ceil(tofusim_comm::ELEMENT_BYTES).max(1);
    p.tnis = tnis.max(1);
    // The MPI operations outside the algorithm library (scan, gather, ...)
    // have timing-only schedules.
    let s = if tofusim_comm::mpi_collectives::OPERATIONS.iter().any(|(o, _)| *o == op) {
        tofusim_comm::mpi_collectives::build(&op, &algo, ranks, root, size_bytes).map_err(|e| TofusimConfigError::new_err(format!("op: {e}")))?
    } else {
        tofusim_comm::algorithms::build_named(&op, &algo, root, size_bytes, p)
            .map_err(|e| TofusimConfigError::new_err(format!("{}: {}", e.key, e.message)))?
    };
    Ok(serde_json::to_string(&s).expect("schedules serialise"))
}

/// Rank `rank`'s buffer before a collective and the elements it must hold
/// after, as little-endian u64 bytes: (initial, result offset, expected).
#[pyfunction]
fn collective_buffers(
    op: String,
    root: u32,
    ranks: u32,
    count: u64,
    buffer_elements: u64,
    rank: u32,
) -> PyResult<(Vec<u8>, u64, Vec<u8>)> {
    let coll = tofusim_comm::Collective::parse(&op, root)
        .ok_or_else(|| TofusimConfigError::new_err(format!("op: unknown operation {op}")))?;
    let bytes = |v: Vec<u64>| {
        v.into_iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    Ok((
        bytes(coll.initial(rank, ranks, count, buffer_elements)),
        coll.result_offset(ranks, count),
        bytes(coll.expected(rank, ranks, count)),
    ))
}

fn timed_json(t: tofusim_experiment::collective::Timed) -> String {
    serde_json::json!({
        "processes": t.ranks,
        "communicator_shape": t.grid.map(|g| g.lengths),
        "cycles": t.cycles,
        "time_seconds": t.time_seconds,
        "rank_end_cycles": t.rank_end_cycles,
        "run": t.run,
    })
    .to_string()
}

/// The low-latency switches of a transfer, or the error naming the bad one.
fn modes(
    descriptor: &str,
    cache_injection: bool,
    cmg: &str,
) -> PyResult<tofusim_experiment::comm_model::Modes> {
    tofusim_experiment::comm_model::Modes::parse(descriptor, cache_injection, cmg)
        .map_err(config_err)
}

/// Times the schedule `make(ranks)` builds over every node of `system` on
/// the packet engine; the timing as JSON.
fn time_schedule(
    py: Python<'_>,
    system: &str,
    modes: &tofusim_experiment::comm_model::Modes,
    make: impl FnOnce(u32) -> Result<tofusim_comm::Schedule, ConfigError> + Send,
) -> PyResult<String> {
    let t = py.detach(|| {
        tofusim_experiment::collective::run_schedule(
            system,
            modes,
            1,
            |ranks, _, _| make(ranks),
            &mut |_| std::ops::ControlFlow::Continue(()),
        )
    });
    Ok(timed_json(t.map_err(config_err)?))
}

/// Transfers that start together over `system`'s communicator: a list of
/// (src rank, dst rank, bytes, tni). Returns the timing as JSON.
#[pyfunction]
#[pyo3(signature = (system, transfers, descriptor="direct", cache_injection=true, cmg="near"))]
fn run_transfers(
    py: Python<'_>,
    system: String,
    transfers: Vec<(u32, u32, u64, u8)>,
    descriptor: &str,
    cache_injection: bool,
    cmg: &str,
) -> PyResult<String> {
    let list: Vec<tofusim_comm::algorithms::Transfer> = transfers
        .into_iter()
        .map(
            |(src, dst, bytes, tni)| tofusim_comm::algorithms::Transfer {
                src,
                dst,
                bytes,
                tni,
            },
        )
        .collect();
    time_schedule(
        py,
        &system,
        &modes(descriptor, cache_injection, cmg)?,
        |ranks| {
            if let Some(t) = list
                .iter()
                .find(|t| t.src >= ranks || t.dst >= ranks || t.src == t.dst)
            {
                return Err(ConfigError::new(
                    "<transfers>",
                    "transfers",
                    format!(
                        "expected two different ranks below {ranks}, found {} and {}",
                        t.src, t.dst
                    ),
                ));
            }
            Ok(tofusim_comm::algorithms::transfers(ranks, &list))
        },
    )
}

/// `rounds` round trips of `bytes` between ranks `a` and `b` of `system`.
#[pyfunction]
#[pyo3(signature = (system, a, b, bytes, rounds, descriptor="direct", cache_injection=true, cmg="near"))]
#[allow(clippy::too_many_arguments)]
fn run_pingpong(
    py: Python<'_>,
    system: String,
    a: u32,
    b: u32,
    bytes: u64,
    rounds: u32,
    descriptor: &str,
    cache_injection: bool,
    cmg: &str,
) -> PyResult<String> {
    time_schedule(
        py,
        &system,
        &modes(descriptor, cache_injection, cmg)?,
        |ranks| {
            if a >= ranks || b >= ranks || a == b {
                return Err(ConfigError::new(
                    "<pingpong>",
                    "ranks",
                    format!("expected two different ranks below {ranks}"),
                ));
            }
            Ok(tofusim_comm::algorithms::pingpong(
                ranks,
                a,
                b,
                bytes,
                rounds.max(1),
            ))
        },
    )
}

/// The TofuD (or Tofu1) barrier-gate plan for each BCH count, as JSON.
#[pyfunction]
#[pyo3(signature = (bchs, generation="tofud"))]
fn barrier_plans(bchs: Vec<u32>, generation: &str) -> PyResult<String> {
    let hw = match generation {
        "tofud" => tofusim_comm::barrier_hw::BarrierHardware::tofud(),
        "tofu1" | "tofu2" => tofusim_comm::barrier_hw::BarrierHardware::tofu1(),
        g => {
            return Err(TofusimConfigError::new_err(format!(
                "generation: expected tofu1, tofu2 or tofud, found {g}"
            )))
        }
    };
    let plans: Result<Vec<_>, String> = bchs
        .iter()
        .map(|&k| tofusim_comm::barrier_hw::intra_node(k, &hw))
        .collect();
    let plans = plans.map_err(|e| TofusimConfigError::new_err(format!("bchs: {e}")))?;
    Ok(serde_json::json!({"hardware": hw, "plans": plans}).to_string())
}

/// The communication model of a system (packet format, components, sources).
#[pyfunction]
fn comm_model(system: String) -> PyResult<String> {
    let sys = system::from_name(&system).map_err(config_err)?;
    // Only a dragonfly's model needs its built node space (link classes).
    let m = match sys.network.topology {
        tofusim_topology::Topology::Dragonfly(_) => {
            tofusim_experiment::build::build("<command line>", "system", sys, tofusim_experiment::build::Routes::Default).map_err(config_err)?.model
        }
        _ => tofusim_experiment::comm_model::CommModel::for_system(&sys, None),
    };
    Ok(serde_json::to_string(&m).expect("models serialise"))
}

/// For each route length of a dragonfly's routing (`system`, with an
/// optional `/mode`), one pair of nodes whose packets take that many router
/// hops both ways: `[(hops, src node, dst node)]`, from node 0; 0 hops is
/// the next node on the same router.
#[pyfunction]
fn dragonfly_hop_pairs(system: String) -> PyResult<Vec<(u32, u32, u32)>> {
    let setup = tofusim_experiment::collective::setup(&system).map_err(config_err)?;
    let Some((d, mode)) = setup.built.dragonfly else {
        return Err(TofusimConfigError::new_err(format!("{system}: not a dragonfly")));
    };
    let routing = tofusim_routing::DragonflyRouting::new(&d, mode);
    let npr = d.nodes_per_router;
    let mut out: Vec<(u32, u32, u32)> = Vec::new();
    if npr > 1 {
        out.push((0, 0, 1));
    }
    for r in 1..routing.routers() as u32 {
        let h = routing.distance(0, r);
        // The same length both ways (a ping-pong times both).
        if h == routing.distance(r, 0) && !out.iter().any(|&(k, _, _)| k == h) {
            out.push((h, 0, r * npr));
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// The Trinaryx3 segment derived from the pipeline depth on `system` for a
/// vector of `size_bytes` (JSON: segment_bytes, stages, alpha_ns,
/// ns_per_byte, part_bytes).
#[pyfunction]
fn trinaryx3_segment(py: Python<'_>, system: String, size_bytes: u64) -> PyResult<String> {
    let r = py.detach(|| tofusim_experiment::collective::trinaryx3_segment(&system, size_bytes)).map_err(config_err)?;
    Ok(serde_json::to_string(&r).expect("plain numbers serialise"))
}

/// The Tofu hardware barrier (or, with `payload_bytes`, the barrier
/// interface's small allreduce) across every node of `system`, µs; `graph`
/// wires the gates: `axes` (default), `axis-neighbours` or `rank-order`.
#[pyfunction]
#[pyo3(signature = (system, payload_bytes=0, graph="axes"))]
fn hardware_barrier_us(py: Python<'_>, system: String, payload_bytes: u32, graph: &str) -> PyResult<f64> {
    use tofusim_comm::barrier_hw::GateGraph;
    let graph = match graph {
        "axes" => GateGraph::Axes,
        "axis-neighbours" => GateGraph::AxisNeighbours,
        "rank-order" => GateGraph::RankOrder,
        other => {
            return Err(TofusimConfigError::new_err(format!(
                "<command line>: graph: expected axes, axis-neighbours or rank-order, found {other}"
            )))
        }
    };
    py.detach(|| tofusim_experiment::collective::hardware_barrier_us(&system, payload_bytes, graph))
        .map_err(config_err)
}

fn buffer_mode(mode: &str) -> PyResult<Option<tofusim_comm::mpi::BufferMode>> {
    Ok(match mode {
        "auto" => None,
        "memory-saving" => Some(tofusim_comm::mpi::BufferMode::MemorySaving),
        "high-speed" => Some(tofusim_comm::mpi::BufferMode::HighSpeed),
        m => {
            return Err(TofusimConfigError::new_err(format!(
                "mode: expected auto, memory-saving or high-speed, found {m}"
            )))
        }
    })
}

/// `rounds` MPI ping-pongs of `bytes` between ranks 0 and 1 of `system`
/// (K computer MPI settings); `mode` forces a buffer mode or follows the
/// switching policy (`auto`). Returns the timing as JSON.
#[pyfunction]
#[pyo3(signature = (system, bytes, rounds, mode="auto"))]
fn run_mpi_pingpong(
    py: Python<'_>,
    system: String,
    bytes: u64,
    rounds: u32,
    mode: &str,
) -> PyResult<String> {
    let forced = buffer_mode(mode)?;
    let cfg = tofusim_comm::mpi::MpiConfig::k_computer();
    time_schedule(py, &system, &Default::default(), |ranks| {
        Ok(tofusim_comm::mpi::pingpong(
            ranks,
            0,
            1,
            bytes,
            rounds.max(1),
            &cfg,
            forced,
        ))
    })
}

/// The MPI settings and the communication-buffer memory per process for
/// each number of peers under each policy, as JSON.
#[pyfunction]
fn mpi_memory(peers: Vec<u32>) -> String {
    use tofusim_comm::mpi::MemoryPolicy::*;
    let cfg = tofusim_comm::mpi::MpiConfig::k_computer();
    let rows: Vec<serde_json::Value> = peers
        .iter()
        .map(|&p| serde_json::json!({"peers": p, "memory-saving": cfg.buffer_memory_bytes(p, AllMemorySaving), "high-speed": cfg.buffer_memory_bytes(p, AllHighSpeed), "adaptive": cfg.buffer_memory_bytes(p, Adaptive)}))
        .collect();
    serde_json::json!({"config": cfg, "memory_bytes": rows}).to_string()
}

/// `rounds` RDMA Gets (`kind = "get"`) of `bytes`, or 8-byte atomic adds
/// (`"atomic"`), by rank 0 on rank 1 of `system`, one after another.
#[pyfunction]
#[pyo3(signature = (system, kind, bytes, rounds, descriptor="direct", cache_injection=true, cmg="near"))]
#[allow(clippy::too_many_arguments)]
fn run_rdma(
    py: Python<'_>,
    system: String,
    kind: &str,
    bytes: u64,
    rounds: u32,
    descriptor: &str,
    cache_injection: bool,
    cmg: &str,
) -> PyResult<String> {
    let atomic = match kind {
        "get" => false,
        "atomic" => true,
        k => {
            return Err(TofusimConfigError::new_err(format!(
                "kind: expected get or atomic, found {k}"
            )))
        }
    };
    let rounds = rounds.max(1);
    time_schedule(
        py,
        &system,
        &modes(descriptor, cache_injection, cmg)?,
        |ranks| {
            Ok(if atomic {
                tofusim_comm::algorithms::atomic_add(ranks, 0, 1, rounds)
            } else {
                tofusim_comm::algorithms::get(ranks, 0, 1, bytes, rounds)
            })
        },
    )
}

// ---- RMATT (DOMAIN.md §4) -------------------------------------------------

/// A refused command-line value: one line, long values clipped, as every
/// other refusal ([`ConfigError`]).
fn bad(key: &str, message: impl Into<String>) -> PyErr {
    config_err(ConfigError::new("<command line>", key, message.into()))
}

fn torus_shape(torus: &str) -> PyResult<tofusim_mapping::TorusShape> {
    tofusim_mapping::TorusShape::parse(torus).map_err(|m| bad("--torus", m))
}

fn comm_list(pattern: &str, source: &str) -> PyResult<tofusim_mapping::CommList> {
    tofusim_mapping::CommList::parse(pattern).map_err(|e| {
        if e.line == 0 {
            bad(source, e.message)
        } else {
            bad(&format!("{source}, line {}", e.line), e.message)
        }
    })
}

/// The NAS CG layout, its inputs checked here for every caller: `procs` a
/// power of two below 2^31, `class` one letter of S W A B C D E (any case).
fn cg_layout(procs: i64, class: &str) -> PyResult<tofusim_mapping::cg::CgLayout> {
    if !(1..=1 << 30).contains(&procs) {
        return Err(bad("--procs", format!("expected a power of two from 1 to 2^30, found {procs}")));
    }
    let mut letters = class.chars();
    let (Some(c), None) = (letters.next().map(|c| c.to_ascii_uppercase()), letters.next()) else {
        return Err(bad("--class", format!("expected one of S, W, A, B, C, D, E, found {class:?}")));
    };
    tofusim_mapping::cg::CgLayout::new(procs as u32, c).map_err(|m| bad("--procs/--class", m))
}

/// The NAS CG communication list of `procs` processes, class `class`, as
/// text (`SRC DST BYTES` lines).
#[pyfunction]
fn cg_comm_list(procs: i64, class: &str) -> PyResult<String> {
    let l = cg_layout(procs, class)?;
    Ok(l.comm_list().to_text())
}

/// One NAS CG iteration's computation per process on a K computer node
/// (`tofusim_mapping::cg::CgLayout::iteration_compute`), as JSON: flops,
/// memory bytes, seconds, the timed run's CG iterations and the node's rates.
#[pyfunction]
fn cg_compute(procs: i64, class: &str) -> PyResult<String> {
    let l = cg_layout(procs, class)?;
    let node = tofusim_mapping::cg::K_NODE;
    let c = l.iteration_compute(node);
    Ok(serde_json::json!({
        "flops": c.flops,
        "memory_bytes": c.memory_bytes,
        "seconds": c.seconds,
        "timed_iterations": l.timed_iterations(),
        "node": {"name": "K computer (SPARC64 VIIIfx)", "flops_per_second": node.flops_per_second, "memory_bytes_per_second": node.memory_bytes_per_second},
    })
    .to_string())
}

/// Hop-bytes and maximum link load (bytes) of `order` (rank → node).
#[pyfunction]
#[pyo3(signature = (torus, pattern, order, source="pattern"))]
fn order_costs(torus: &str, pattern: &str, order: Vec<u32>, source: &str) -> PyResult<(u64, u64)> {
    let t = torus_shape(torus)?;
    let c = comm_list(pattern, source)?;
    tofusim_mapping::placement::check_order(&t, c.ranks, &order).map_err(|m| bad("order", m))?;
    Ok((
        tofusim_mapping::placement::hop_bytes(&t, &c, &order),
        tofusim_mapping::placement::max_link_load(&t, &c, &order),
    ))
}

/// A baseline order: `default` (x-y), `random` (seeded) or `greedy`.
#[pyfunction]
#[pyo3(signature = (torus, pattern, kind, seed=1, source="pattern"))]
fn baseline_order(py: Python<'_>, torus: &str, pattern: &str, kind: &str, seed: u64, source: &str) -> PyResult<Vec<u32>> {
    let t = torus_shape(torus)?;
    let c = comm_list(pattern, source)?;
    if c.ranks > t.nodes() {
        return Err(bad("--torus", format!("{} ranks do not fit {} nodes", c.ranks, t.nodes())));
    }
    Ok(match kind {
        "default" => (0..c.ranks).collect(),
        "random" => tofusim_mapping::rmatt::random_order(c.ranks, seed),
        "greedy" => py.detach(|| tofusim_mapping::rmatt::greedy_order(&t, &c)),
        _ => return Err(bad("kind", format!("expected default, random or greedy, got {kind:?}"))),
    })
}

/// RMATT: anneals the rank order of `pattern` on `torus`. JSON with
/// objective, default_cost (of `start`, the x-y order by default),
/// optimized_cost, iterations, accepted, seconds and order.
#[pyfunction]
#[pyo3(signature = (torus, pattern, objective="hop-bytes", seed=1, iterations=None, start=None, source="pattern"))]
#[allow(clippy::too_many_arguments)]
fn rmatt(
    py: Python<'_>,
    torus: &str,
    pattern: &str,
    objective: &str,
    seed: u64,
    iterations: Option<i64>,
    start: Option<Vec<u32>>,
    source: &str,
) -> PyResult<String> {
    use tofusim_mapping::rmatt::{anneal_until, AnnealParams, Objective};
    let t = torus_shape(torus)?;
    let c = comm_list(pattern, source)?;
    let obj = Objective::parse(objective)
        .ok_or_else(|| bad("--objective", format!("expected hop-bytes or max-link-load, got {objective:?}")))?;
    if c.ranks > t.nodes() {
        return Err(bad("--torus", format!("the pattern has {} ranks, more than the {} nodes of {torus}", c.ranks, t.nodes())));
    }
    let start = start.unwrap_or_else(|| (0..c.ranks).collect());
    let mut params = AnnealParams::default_for(obj, c.ranks, seed);
    if let Some(i) = iterations {
        if !(1..=MAX_ITERATIONS).contains(&i) {
            return Err(bad("--iterations", format!("expected 1 to {MAX_ITERATIONS} proposed swaps, found {i}")));
        }
        params.iterations = i as u64;
    }
    let t0 = std::time::Instant::now();
    // Ctrl-C: the search asks now and then, and ends with its best so far.
    let mut stop = || Python::attach(|py| py.check_signals().is_err());
    let a = py
        .detach(|| anneal_until(&t, &c, obj, &start, params, &mut stop))
        .map_err(|m| bad("start order", m))?;
    Ok(serde_json::json!({
        "objective": obj.name(),
        "torus": t.lengths,
        "ranks": c.ranks,
        "default_cost": a.start_cost,
        "optimized_cost": a.cost,
        "iterations": a.iterations,
        "accepted": a.accepted,
        "complete": a.complete,
        "requested_iterations": params.iterations,
        "seed": seed,
        "seconds": t0.elapsed().as_secs_f64(),
        "order": a.order,
    })
    .to_string())
}

/// One NAS CG iteration's communication on the packet engine: `torus`
/// (the job's virtual torus, with the links and host model of `system`),
/// ranks placed by `order` (one per node), or with `ranks_per_node` > 1
/// `order` gives each rank its node of `torus` (several share a node:
/// their messages to each other turn around in its NIC). Timing JSON as
/// the other schedule runs.
#[pyfunction]
#[pyo3(signature = (torus, procs, class, order, system="k", ranks_per_node=1))]
#[allow(clippy::too_many_arguments)]
fn cg_iteration_time(
    py: Python<'_>,
    torus: &str,
    procs: i64,
    class: &str,
    order: Vec<u32>,
    system: &str,
    ranks_per_node: u32,
) -> PyResult<String> {
    let t = torus_shape(torus)?;
    let layout = cg_layout(procs, class)?;
    let procs = procs as u32;
    if ranks_per_node <= 1 {
        tofusim_mapping::placement::check_order(&t, procs, &order).map_err(|m| bad("order", m))?;
    } else {
        let nodes: u32 = t.lengths.iter().product();
        let mut held = vec![0u32; nodes as usize];
        for &n in &order {
            match held.get_mut(n as usize) {
                Some(h) if *h < ranks_per_node => *h += 1,
                _ => return Err(bad("order", format!("expected {procs} nodes of the {nodes} of {torus}, at most {ranks_per_node} ranks on each"))),
            }
        }
        if order.len() != procs as usize {
            return Err(bad(
                "order",
                format!(
                    "expected a node for each of the {procs} ranks, got {}",
                    order.len()
                ),
            ));
        }
    }
    let lengths = t.lengths.clone();
    let system = system.to_string();
    // Ctrl-C stops the run; the interrupt is raised again after it.
    let raised = std::sync::Mutex::new(None);
    let timed = py.detach(|| {
        let setup = tofusim_experiment::collective::torus_setup(&lengths, &system, order)?;
        let mut report = reporter(&None, &raised);
        tofusim_experiment::collective::run_on(setup, layout.iteration_schedule(), &tofusim_experiment::comm_model::Modes::default(), 1, &mut report)
    });
    let stopped = timed.as_ref().is_ok_and(|t| t.run.interrupted);
    after_run(py, raised.into_inner().unwrap_or_else(|p| p.into_inner()), false, stopped)?;
    Ok(timed_json(timed.map_err(config_err)?))
}

// ---- virtual torus mapping (DOMAIN.md §2) -----------------------------------

/// Parses a region `X0,Y0,Z0:SXxSYxSZ`.
fn parse_region(text: &str) -> PyResult<tofusim_mapping::embed::Region> {
    let bad_region = || bad("--region", format!("expected ORIGIN:SIZE like 0,0,0:4x6x2, got {text:?}"));
    let (o, sz) = text.split_once(':').ok_or_else(bad_region)?;
    let o: Vec<u32> = o.split(',').map(|p| p.trim().parse()).collect::<Result<_, _>>().map_err(|_| bad_region())?;
    let sz: Vec<u32> = sz.split('x').map(|p| p.trim().parse()).collect::<Result<_, _>>().map_err(|_| bad_region())?;
    if o.len() != 3 || sz.len() != 3 {
        return Err(bad_region());
    }
    Ok(tofusim_mapping::embed::Region { origin: [o[0], o[1], o[2]], size: [sz[0], sz[1], sz[2]] })
}

/// A virtual torus on a Tofu system: JSON with virtual_shape, nodes_used,
/// padding_nodes, lost_nodes, max/mean_neighbor_hops, mechanism, block,
/// axes, and (with `with_order`) node_of_rank and node coordinates.
#[pyfunction]
#[pyo3(signature = (system, shape, region=None, faults=None, faults_source="faults", with_order=false))]
fn map_virtual(
    py: Python<'_>,
    system: &str,
    shape: &str,
    region: Option<&str>,
    faults: Option<&str>,
    faults_source: &str,
    with_order: bool,
) -> PyResult<String> {
    use tofusim_mapping::{embed, faults as fl};
    let sys = tofusim_experiment::from_name(system).map_err(config_err)?;
    let t = match &sys.network.topology {
        tofusim_topology::Topology::Tofu(t) => t.clone(),
        _ => return Err(bad("--system", format!("{system} is not a Tofu system (k, fx10, fx100, fugaku)"))),
    };
    let shape_v = embed::parse_shape(shape).map_err(|m| bad("--shape", m))?;
    let region = match region {
        Some(r) => parse_region(r)?,
        None => embed::Region::whole(&t),
    };
    region.check(&t).map_err(|m| bad("--region", m))?;
    let f = match faults {
        Some(text) => fl::Faults::parse(text, &t).map_err(|(line, m)| bad(&format!("{faults_source}, line {line}"), m))?,
        None => fl::Faults::default(),
    };
    let m = py
        .detach(|| fl::map_virtual(&t, region, &shape_v, &f))
        .map_err(|m| bad("--shape", m))?;
    let e = &m.embedding;
    let mut out = serde_json::json!({
        "system": system,
        "virtual_shape": e.virtual_shape,
        "ranks": e.node_of_rank.len(),
        "nodes_used": e.node_of_rank.len(),
        "region": {"origin": region.origin, "size": region.size, "nodes": region.nodes()},
        "padding_nodes": m.unused_nodes - m.lost_nodes,
        "lost_nodes": m.lost_nodes,
        "failed_nodes": f.nodes.len(),
        "failed_links": f.links.len(),
        "max_neighbor_hops": m.max_neighbor_hops,
        "mean_neighbor_hops": m.mean_neighbor_hops,
        "mechanism": m.mechanism.describe(),
        "block": {"origin": e.block.origin, "size": e.block.size},
        "axes": e.axes,
    });
    if with_order {
        out["node_of_rank"] = serde_json::json!(e.node_of_rank);
        let coords: Vec<Vec<u32>> = e.node_of_rank.iter().map(|&n| t.coords(tofusim_topology::NodeId(n))).collect();
        out["node_coords"] = serde_json::json!(coords);
    }
    Ok(out.to_string())
}

/// The job allocator on a synthetic stream, under the four policies (no
/// rotation or padding, rotation, padding, both). JSON.
#[pyfunction]
#[pyo3(signature = (system, jobs=500, load=0.9, seed=1))]
fn alloc_stream(
    py: Python<'_>,
    system: &str,
    jobs: usize,
    load: f64,
    seed: u64,
) -> PyResult<String> {
    use tofusim_mapping::alloc::{simulate_until, synthetic_jobs, Policy};
    let sys = tofusim_experiment::from_name(system).map_err(config_err)?;
    let t = match &sys.network.topology {
        tofusim_topology::Topology::Tofu(t) => t.clone(),
        _ => {
            return Err(bad(
                "--system",
                format!("{system} is not a Tofu system (k, fx10, fx100, fugaku)"),
            ))
        }
    };
    if jobs == 0 || jobs > 1_000_000 {
        return Err(bad(
            "--jobs",
            format!("expected 1 to 1,000,000 jobs, got {jobs}"),
        ));
    }
    if !(load > 0.0 && load <= 10.0) {
        return Err(bad(
            "--load",
            format!("expected an offered load in (0, 10], got {load}"),
        ));
    }
    let stream = synthetic_jobs(&t, jobs, load, seed);
    // Ctrl-C: each policy's simulation asks now and then.
    let interrupted = std::sync::atomic::AtomicBool::new(false);
    let mut stop = || {
        let hit = Python::attach(|py| py.check_signals().is_err());
        if hit {
            interrupted.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        hit || interrupted.load(std::sync::atomic::Ordering::Relaxed)
    };
    let runs = py.detach(|| {
        [(false, false), (true, false), (false, true), (true, true)].map(|(rotation, padding)| {
            let st = simulate_until(&t, &stream, Policy { rotation, padding }, &mut stop)?;
            Some(serde_json::json!({
                "rotation": rotation, "padding": padding, "jobs": st.jobs, "unplaceable": st.unplaceable,
                "utilization": st.utilization, "allocated_fraction": st.allocated_fraction,
                "mean_wait_seconds": st.mean_wait_s, "max_wait_seconds": st.max_wait_s,
                "fragmentation": st.fragmentation, "makespan_seconds": st.makespan_s,
                "rotated_jobs": st.rotated, "padded_jobs": st.padded, "padding_fraction": st.padding_fraction,
            }))
        })
    });
    if runs.iter().any(Option::is_none) {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "alloc interrupted",
        ));
    }
    Ok(serde_json::json!({"system": system, "nodes": t.node_count(), "jobs": jobs, "load": load, "seed": seed, "policies": runs}).to_string())
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
