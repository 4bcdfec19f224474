//! The check, before a run, that failures leave every pair of nodes alive
//! a route the routing offers round them (`[network.faults]`, and the
//! failures of `[faults]` that never recover).

use tofusim_routing::{FaultMap, Routing};

use crate::error::{ConfigError, Result};

/// Networks up to this many router pairs have every pair's route around
/// the failures checked before the run (about a second at the limit);
/// larger ones find an unroutable pair when a packet needs it.
pub const ROUTE_CHECK_PAIRS: u64 = 1 << 22;

/// Every pair of routers alive has a route round the failures of `map`
/// (checked on networks up to [`ROUTE_CHECK_PAIRS`] pairs); refused
/// naming `key`, the pair, the failure met and the routes offered.
/// `when` qualifies the failures in the message.
pub fn check_routes(file: &str, key: &str, routing: &Routing, map: &FaultMap, when: &str) -> Result<()> {
    let terminals = routing.terminal_routers() as u32;
    if map.is_empty() || (terminals as u64).pow(2) > ROUTE_CHECK_PAIRS {
        return Ok(());
    }
    let alive: Vec<u32> = (0..terminals).filter(|&r| !map.router_failed(r)).collect();
    for &s in &alive {
        for &d in alive.iter().filter(|&&d| d != s) {
            let first = match routing {
                Routing::Torus(t) => t.shortest_hints(s, d),
                Routing::Dragonfly(dr) => dr.minimal_hints(s, d),
                Routing::FatTree(_) => 0,
            };
            if map.choose(routing, s, d, first).is_none() {
                return Err(ConfigError::new(
                    file,
                    key,
                    format!(
                        "no route from router {} to router {} avoids the failures{when} (the usual route meets {}); the routing offers {}",
                        routing.router_label(s),
                        routing.router_label(d),
                        map.blocked_at(routing, s, d, tofusim_routing::SourceRoute { hints: first, detour: None }),
                        map.scheme(routing)
                    ),
                ));
            }
        }
    }
    Ok(())
}
