//! # tofusim-topology
//!
//! Nodes, routers, ports and links of the networks tofusim simulates, and
//! their analytic metrics. This crate knows nothing of time, packets or
//! routing: the engines above it ask it for neighbours and coordinates.
//!
//! - [`axis`], [`torus`]: tori and meshes of any dimension, per-axis wrap;
//! - [`tofu`]: the Tofu 6D mesh/torus (XYZ × ABC = 2×3×2, ten ports);
//! - [`dragonfly`]: Kim–Dally and Cray Aries dragonflies;
//! - [`fattree`]: extended generalised fat-trees (k-ary n-trees, tapering, rails);
//! - [`graph`]: the router graph, used for BFS checks and faulty networks;
//! - [`bisection`]: balanced staircase cuts of tori;
//! - [`network`], [`metrics`]: a topology with rates, interfaces and faults, and its metrics.

// Rates carry their unit in the name (`link_Bps`), as the JSON keys do.
#![allow(non_snake_case)]

pub mod axis;
pub mod bisection;
pub mod dragonfly;
pub mod fattree;
pub mod graph;
pub mod ids;
pub mod metrics;
pub mod network;
pub mod tofu;
pub mod torus;

pub use axis::{Axis, Direction, PortStyle};
pub use dragonfly::{Arrangement, Dragonfly, GroupWiring};
pub use fattree::FatTree;
pub use ids::{NodeId, PortId, RouterId};
pub use metrics::Metrics;
pub use network::{Faults, Network, NodeInterface, Topology};
pub use torus::Torus;
