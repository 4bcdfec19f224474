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
//! - [`engine`]: the state, packet creation and send queues;
//! - `events`, `actions`: what each event does, and the node actions that
//!   run at a router's arbitration in a canonical order;
//! - [`router`]: the three arbitration steps;
//! - `window`, [`partition`], `parallel`, `wire`, `summary`: conservative
//!   time windows over spatial partitions on threads and processes, with
//!   results bit-identical to an unsplit run;
//! - `invariants`: the audit and the deadlock report;
//! - [`stats`], [`result`]: what a run measures and returns.

pub mod budget;
pub mod config;
pub mod engine;
pub mod limits;
mod event;
mod layout;
mod mail;
mod net;
mod nic;
pub mod packet;
pub mod partition;
mod prefetch;
pub mod result;
mod send_queue;
mod router;
pub mod stats;
pub mod traffic;
mod wire;

pub use config::{
    Arbitration, Bursts, ErrorRate, Escape, FifoSelect, LinkErrors, PlantedFault, Slicing, RouterParams, RoutingMode, RunParams,
};
pub use engine::{Engine, Progress, Split};
pub use layout::{MAX_PORTS, MAX_QUEUES};
/// Most VCs per input port a router model may have.
pub const MAX_VCS: usize = router::MAX_VCS;
pub use partition::{PartitionPlan, MAX_PARTITIONS};
pub use tofusim_des::sync::{LocalTransport, Transport};
pub use result::{LinkErrorReport, RunResult};
pub use router::link_protocol::LinkTally;
pub use prefetch::line as prefetch_line;
pub use traffic::{Incomplete, NewMessage, NewPacket, RunEnd, Traffic};
