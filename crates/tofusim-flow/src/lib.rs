//! # tofusim-flow
//!
//! The flow-level model (docs/architecture.md, layer "flow model"; issue 7): messages
//! are flows that share link bandwidth **max-min fairly**, found by
//! progressive filling — every unfrozen flow's rate rises together until a
//! link saturates or a flow reaches its own cap (its injection limit), then
//! the flows held there freeze and the rest keep rising.
//!
//! Three solvers of the same allocation, kept side by side on purpose:
//! - [`reference::max_min`]: the textbook loop, one level at a time over
//!   every link and flow — slow and obviously correct;
//! - [`MaxMin`]: the same levels from a heap of links keyed by the level at
//!   which each would saturate, updated as flows freeze — fast, and
//!   cross-checked against the reference on random networks;
//! - [`IncrementalMaxMin`]: the rates of a changing set of flows, refilling
//!   after each start or finish only the flows it can move (those at or
//!   above the level of the change, connected to it) — cross-checked
//!   against both after every change of random sequences.
//!
//! Flows are stored flat ([`FlowTable`]: one array of links for all).
//! [`transfers`] runs messages to completion, each starting at its release
//! or after the messages it waits for ([`transfers::Messages`]).
//! [`network`] gives a network's routes and resources ([`FlowNet`]);
//! [`loads`] sums the load of a pair's routes without building them (open
//! loop below saturation); the executors of schedules on it live in the
//! communication layer (`tofusim_comm::exec::{flow, rounds}`).

pub mod incremental;
pub mod interrupt;
pub mod loads;
pub mod network;
pub mod pools;
pub mod reference;
mod solver;
pub mod table;
pub mod transfers;

pub use incremental::IncrementalMaxMin;
pub use interrupt::{Interrupt, Stop};
pub use loads::{LoadSum, RouteLoads};
pub use network::{Capacities, FlowNet, RouteScratch};
pub use pools::DrainingPools;
pub use solver::{FlowSet, MaxMin, Subset};
pub use table::FlowTable;

/// One flow: the links it crosses (indices into the capacity table) and
/// its own rate cap (`f64::INFINITY` for none), in the capacities' unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub links: Vec<u32>,
    pub cap: f64,
}

/// Checks an allocation: every rate within its cap, every link within its
/// capacity, and max-min fairness — each flow is held either by its cap or
/// by a saturated link on which no flow is faster. Returns the first
/// violation. `tol` is relative.
pub fn check_max_min(capacity: &[f64], flows: &[Flow], rates: &[f64], tol: f64) -> Result<(), String> {
    let mut load = vec![0.0; capacity.len()];
    let mut fastest = vec![0.0f64; capacity.len()];
    for (f, &r) in flows.iter().zip(rates) {
        if r > f.cap * (1.0 + tol) {
            return Err(format!("a flow runs at {r} above its cap {}", f.cap));
        }
        for &l in &f.links {
            load[l as usize] += r;
            fastest[l as usize] = fastest[l as usize].max(r);
        }
    }
    for (l, (&c, &x)) in capacity.iter().zip(&load).enumerate() {
        if x > c * (1.0 + tol) + tol {
            return Err(format!("link {l} carries {x} over its capacity {c}"));
        }
    }
    for (i, (f, &r)) in flows.iter().zip(rates).enumerate() {
        let capped = r >= f.cap * (1.0 - tol);
        let bottleneck = f.links.iter().any(|&l| {
            let l = l as usize;
            load[l] >= capacity[l] * (1.0 - tol) - tol && r >= fastest[l] * (1.0 - tol)
        });
        if !capped && !bottleneck {
            return Err(format!("flow {i} at {r} has neither reached its cap nor a bottleneck link"));
        }
    }
    Ok(())
}
