//! A dragonfly as the engines see it: its nodes numbered as a ring, its
//! ports, and each port's link rate relative to the fastest class.

use tofusim_routing::{DragonflyMode, DragonflyRouting};
use tofusim_topology::dragonfly::Dragonfly;
use tofusim_topology::Torus;

use crate::error::{ConfigError, Result};

/// A dragonfly the engine can run: at most [`tofusim_packet::MAX_PORTS`]
/// ports per router, every port index of one link class (the routing
/// numbers them so). Returns the node space, the ports per router, each
/// port's cycles per byte relative to the fastest class (which defines the
/// cycle), and that class's rate.
#[allow(non_snake_case)]
pub fn dragonfly_space(file: &str, key: &str, d: &Dragonfly, rates: &[f64]) -> Result<DragonflySpace> {
    // Checked before the routing tables are built: their size grows with
    // the ports and the groups squared.
    let bound = d.max_ports_per_router();
    if bound > tofusim_packet::MAX_PORTS as u64 {
        return Err(ConfigError::new(file, key, format!(
            "this dragonfly has {bound} ports per router; the packet engine handles at most {}",
            tofusim_packet::MAX_PORTS
        )));
    }
    let routing = DragonflyRouting::new(d, DragonflyMode::Minimal);
    let ports = routing.ports();
    debug_assert_eq!(ports as u64, bound, "the closed-form port count matches the built tables");
    if ports > tofusim_packet::MAX_PORTS {
        return Err(ConfigError::new(file, key, format!(
            "this dragonfly has {ports} ports per router; the packet engine handles at most {}",
            tofusim_packet::MAX_PORTS
        )));
    }
    let reference_Bps = rates.iter().cloned().fold(0.0, f64::max);
    let port_cycles_per_byte = (0..ports as u8)
        .map(|p| {
            let class = routing.port_class(p).unwrap_or(0) as usize;
            reference_Bps / rates.get(class).copied().unwrap_or(reference_Bps)
        })
        .collect();
    let nodes = d.node_count() as u32;
    Ok(DragonflySpace {
        nodes: Torus::new(vec![tofusim_topology::Axis::ring("node", nodes)]),
        ports,
        port_cycles_per_byte,
        reference_Bps,
    })
}

/// What the packet engine needs of a dragonfly (see [`dragonfly_space`]).
#[allow(non_snake_case)]
pub struct DragonflySpace {
    /// The workload's node space: a ring of every node (router-major).
    pub nodes: Torus,
    pub ports: usize,
    pub port_cycles_per_byte: Vec<f64>,
    pub reference_Bps: f64,
}
