//! PyO3 bindings of the tofusim core. Thin on purpose: each function takes
//! plain values, calls the Rust layers and returns JSON text; each Rust
//! error type maps once to a Python exception class.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tofusim_experiment::{presets, system, ConfigError};

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
    Ok(py.detach(|| metrics_json(sys)))
}

/// Runs the experiment in TOML `text` (`file` names it in errors) on the
/// packet engine and returns the result as JSON. `progress(fraction)` is
/// called now and then from the engine; `ports` keeps the per-port counters.
#[pyfunction]
#[pyo3(signature = (text, file, progress=None, ports=false))]
fn run_experiment(
    py: Python<'_>,
    text: String,
    file: String,
    progress: Option<Py<PyAny>>,
    ports: bool,
) -> PyResult<String> {
    let exp = tofusim_experiment::experiment::parse(&file, &text).map_err(config_err)?;
    let setup = serde_json::json!({
        "system": exp.system.name,
        "router": exp.router,
        "routing": exp.mode,
        "run": exp.run,
        "workload": exp.workload.kind,
        "packet_bytes": exp.workload.packet_bytes,
        "header_bytes": exp.workload.header_bytes,
        "injection_links": exp.injection_links,
        "nodes": exp.workload.nodes(),
    });
    let engine = tofusim_experiment::experiment::engine(exp);
    let mut result = py.detach(|| {
        let mut report = |f: f64| {
            if let Some(cb) = &progress {
                Python::attach(|py| {
                    let _ = cb.call1(py, (f,));
                });
            }
        };
        engine.run(&mut report)
    });
    if !ports {
        result.ports.clear();
    }
    let mut v = serde_json::to_value(&result).expect("results serialise");
    v["setup"] = setup;
    Ok(v.to_string())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(presets_json, m)?)?;
    m.add_function(wrap_pyfunction!(topo_name, m)?)?;
    m.add_function(wrap_pyfunction!(topo_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_experiment, m)?)?;
    m.add("ConfigError", m.py().get_type::<TofusimConfigError>())?;
    Ok(())
}
