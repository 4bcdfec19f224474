//! The JSON Schema of every result a front door returns, generated from
//! the Rust types that write them (their doc comments are the schema's
//! descriptions). The Python records (`python/tofusim/records.py`) are
//! generated from it by `tools/gen_records.py`, and a test regenerates
//! them, so the two cannot drift; docs/results.md points to it.

use schemars::generate::SchemaSettings;
use serde_json::{json, Map, Value};

use crate::collective::CollectiveResult;
use crate::mpi_bench::BenchResult;
use crate::run_request::{FlowRunReport, PacketRunReport};
use crate::traces::TraceReplayReport;

/// The results, by the name the Python API gives them, and the schema of each.
fn roots(g: &mut schemars::SchemaGenerator) -> Vec<(&'static str, schemars::Schema)> {
    vec![
        ("PacketRunResult", g.subschema_for::<PacketRunReport<'static>>()),
        ("FlowRunResult", g.subschema_for::<FlowRunReport<'static>>()),
        ("CollectiveResult", g.subschema_for::<CollectiveResult>()),
        ("ReplayResult", g.subschema_for::<TraceReplayReport<'static>>()),
        ("BenchResult", g.subschema_for::<BenchResult>()),
    ]
}

/// The schema document (draft 2020-12): `roots` names each result's
/// schema, `$defs` holds every type they use.
pub fn results() -> Value {
    let mut g = SchemaSettings::draft2020_12().for_serialize().into_generator();
    let roots: Map<String, Value> = roots(&mut g).into_iter().map(|(n, s)| (n.to_string(), s.to_value())).collect();
    let defs = g.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tofusim results",
        "roots": roots,
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_root_is_an_object_with_its_keys() {
        let s = results();
        let defs = s["$defs"].as_object().unwrap();
        for name in ["PacketRunReport", "FlowRunReport", "CollectiveResult", "TraceReplayReport", "RouterParams", "Limits"] {
            assert!(defs.contains_key(name), "{name} missing from {:?}", defs.keys().collect::<Vec<_>>());
        }
        let run = &defs["PacketRunReport"]["properties"];
        for key in ["setup", "sim", "latency_ns", "limits", "accepted_GBps_per_node"] {
            assert!(run.get(key).is_some(), "{key}");
        }
        assert!(defs["FlowRunReport"]["properties"].get("latency_kind").is_some());
        assert!(defs["TraceReplayReport"]["properties"].get("uncompleted_receives").is_some());
    }
}
