//! # tofusim-experiment
//!
//! Experiment and system files: units in values, the system presets with
//! the source of every parameter, and validation that names the file, the
//! key path and what was expected. Raw TOML → merged with a preset →
//! validated → a built network for the layers below.

pub mod build;
pub mod check;
pub mod collective;
pub mod communicators;
pub mod comm_bench;
pub mod comm_model;
pub mod error;
pub mod experiment;
pub mod fault_events;
pub mod flow_model;
pub mod flow_run;
pub mod generation;
pub mod given_schedule;
pub mod jobs;
pub mod layout;
pub mod link_errors;
pub mod mpi_bench;
pub mod node_space;
pub mod placement;
pub mod presets;
pub mod rank_placement;
pub mod replay;
pub mod request_json;
pub mod result_schema;
pub mod route_check;
pub mod run_request;
pub mod section;
pub mod system;
pub mod traces;
pub mod units;

pub use error::ConfigError;

/// The packet engine's types a caller hands over or receives: the transport
/// of a run split over processes, the split itself, and the counter
/// samples (their columns move to the caller without a copy).
pub mod engine {
    pub use tofusim_packet::result::CounterSamples;
    pub use tofusim_packet::{Split, Transport};
}
pub use system::{from_name, from_toml, System};
