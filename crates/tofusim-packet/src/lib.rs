//! # tofusim-packet
//!
//! The packet-level network engine: virtual cut-through with whole-packet
//! events, token flow control in 32-byte chunks, and the Blue Gene/L torus
//! router (dynamic VCs with JSQ, bubble or dateline escape, a priority VC,
//! SLQ/random arbitration, finite injection FIFOs). It sees the network
//! only through [`tofusim_routing::Routing`], so the same engine runs
//! tori, meshes and Tofu.
//!
//! - [`config`]: router, routing-mode and run parameters (BG/L defaults);
//! - [`engine`]: the event loop, state, invariant audit, deadlock report;
//! - [`router`]: the three arbitration steps;
//! - [`stats`], [`result`]: what a run measures and returns.

pub mod config;
pub mod engine;
pub mod packet;
mod prefetch;
pub mod result;
pub mod router;
pub mod stats;

pub use config::{
    Arbitration, Escape, FifoSelect, PlantedFault, RouterParams, RoutingMode, RunParams,
};
pub use engine::{Engine, MAX_PORTS, MAX_QUEUES};
pub use result::RunResult;
