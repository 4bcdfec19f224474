//! # tofusim-trace
//!
//! MPI application traces (docs/architecture.md, layer "workloads"; issue 20): OTF2
//! archives read through OTF2's C library ([`archive`]: any writer's
//! standard MPI records — tofusim's PMPI tracer, Score-P), summarised
//! ([`summary`]), turned into the replay program the communication layer
//! writes out as one schedule ([`program`] → `tofusim_comm::replay`) and
//! into the communication list RMATT maps ([`summary::comm_list`]).

pub mod archive;
mod error;
pub mod calls;
mod ffi;
pub mod instances;
pub mod program;
pub mod summary;
pub mod trace;

pub use archive::read;
pub use error::TraceError;
pub use trace::{Call, Record, Trace};
