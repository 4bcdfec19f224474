//! Bindings of systems and their networks: presets, topology metrics,
//! layouts and the static deadlock check.

use pyo3::prelude::*;
use tofusim_experiment::{presets, system};

use crate::{config_err, reporter, TofusimConfigError};

fn metrics_json(sys: system::System) -> String {
    let m = sys.network.metrics();
    let mut v = serde_json::to_value(&m).expect("metrics serialise");
    v["system"] = serde_json::Value::String(sys.name);
    v.to_string()
}

/// Names of the system presets.
#[pyfunction]
pub fn preset_names() -> Vec<&'static str> {
    presets::names()
}

/// Every preset with its parameters and their sources, as JSON.
#[pyfunction]
pub fn presets_json() -> String {
    presets::described().to_string()
}

/// Metrics of a preset (`"k"`, `"k:8x8x8"`), as JSON.
#[pyfunction]
pub fn topo_name(py: Python<'_>, spec: String) -> PyResult<String> {
    let sys = system::from_name(&spec).map_err(config_err)?;
    Ok(py.detach(|| metrics_json(sys)))
}

/// Metrics of the `[network]` table in TOML text; `file` names it in errors.
#[pyfunction]
pub fn topo_toml(py: Python<'_>, text: String, file: String) -> PyResult<String> {
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
pub fn network_layout(py: Python<'_>, system: Option<String>, text: Option<String>, file: String) -> PyResult<String> {
    let layout = match (system, text) {
        (Some(s), None) => py.detach(|| tofusim_experiment::layout::of_name(&s)),
        (None, Some(t)) => py.detach(|| tofusim_experiment::layout::of_toml(&file, &t)),
        _ => return Err(TofusimConfigError::new_err("network_layout: give a system name or TOML text, not both")),
    }
    .map_err(config_err)?;
    Ok(serde_json::to_string(&layout).expect("layouts serialise"))
}


/// The static deadlock check (`tofusim check`) of the experiment in TOML
/// `text`, or of the system named `system` (a preset, resized or not);
/// `routing` sets `[routing] algorithm`. Returns the result as JSON.
/// `progress(fraction)` is called per destination router; Ctrl-C stops it.
#[pyfunction]
#[pyo3(signature = (text=None, system=None, file=String::from("<string>"), routing=None, progress=None))]
pub fn deadlock_check(
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

