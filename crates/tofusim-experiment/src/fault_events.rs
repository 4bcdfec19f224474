//! The `[faults]` table: links and nodes failing and recovering during a
//! run (the packet engine's `engine::outages`).
//!
//! ```toml
//! [faults]
//! resend_timeout_cycles = 10000     # the MPI layer's end-to-end time-out
//! events = [
//!   { cycle = 20000, action = "fail", node = [0, 0, 0, 0, 0, 0], port = "x+" },   # a link (torus/Tofu)
//!   { cycle = 60000, action = "recover", node = [0, 0, 0, 0, 0, 0], port = "x+" },
//!   { cycle = 30000, action = "fail", node = 17 },                                 # a node and its router
//!   { cycle = 30000, action = "fail", routers = [0, 5] },                          # a link (dragonfly)
//! ]
//! ```

use tofusim_packet::engine::{FaultEvent, FaultTarget};
use tofusim_packet::{RouterParams, RunParams};
use tofusim_routing::{FaultMap, Routing};
use tofusim_topology::Topology;
use tofusim_workload::{FinitePattern, Kind, Workload};

use crate::build::Built;
use crate::error::Result;
use crate::section::Section;

/// [MEM] The MPI layer's time-out before it sends a lost packet again,
/// when the file does not say: the sources give none. 10,000 cycles is
/// several times a packet's round trip across the largest tori modelled
/// (BG/L 64x32x32: ~64 hops of ~10 cycles, plus queueing).
pub const RESEND_TIMEOUT_CYCLES: u64 = 10_000;

/// A parsed schedule: the events in the routing's terms and the time-out.
#[derive(Clone, Debug, Default)]
pub struct FaultSchedule {
    pub events: Vec<FaultEvent>,
    pub resend_timeout_cycles: u64,
}

/// Parses `[faults]` for the network `built` routed by `routing`, over the
/// failures of `[network.faults]` (`static_map`), for `workload` and the
/// run `run` on routers `router`, with or without a link protocol.
#[allow(clippy::too_many_arguments)]
pub fn parse(sec: &Section, built: &Built, routing: &Routing, static_map: Option<&FaultMap>, workload: &Workload, run: &RunParams, router: &RouterParams, link_protocol: bool) -> Result<FaultSchedule> {
    let cycles = run.cycles;
    let topology = &built.system.network.topology;
    if let Topology::FatTree(_) = topology {
        return Err(sec.error("events", "fat-tree routing cannot avoid a failure (its up ports are fixed by the destination or chosen without knowing the failures): failures during a run are modelled on tori, Tofu and dragonflies"));
    }
    if let Kind::Finite(FinitePattern::LineFill { .. } | FinitePattern::PlaneFill { .. }) = &workload.kind {
        return Err(sec.error("events", "line and plane fills with failures are not modelled: a deposit broadcast sent again would leave its copies twice"));
    }
    // A lost packet goes back to its source, maybe in another partition of
    // a split run: not sooner than anything crosses between routers.
    let window = router.hop_latency_cycles.min(router.token_latency_cycles).max(1) as i64;
    let resend_timeout_cycles = match sec.int("resend_timeout_cycles", 1, 1 << 40)? {
        Some(t) if t < window => return Err(sec.error("resend_timeout_cycles", format!("expected at least {window} cycles (a hop's or a token's latency): a lost packet's way back to its source takes no less"))),
        Some(t) => t as u64,
        None => RESEND_TIMEOUT_CYCLES,
    };
    let tables = sec.tables("events", "{ cycle = 20000, action = \"fail\", node = [0, 0, 0], port = \"x+\" }")?;
    if tables.is_empty() {
        return Err(sec.error("events", "missing; expected a list of events such as { cycle = 20000, action = \"fail\", node = [0, 0, 0], port = \"x+\" }"));
    }
    let mut events = Vec::new();
    for t in &tables {
        let cycle = t.int("cycle", 0, i64::MAX)?.ok_or_else(|| t.error("cycle", "missing; expected the cycle the link or node fails or recovers at"))? as u64;
        if let Some(end) = cycles.filter(|&end| cycle >= end) {
            return Err(t.error("cycle", format!("expected a cycle before the run's end ({end}): this event would never happen")));
        }
        let recovers = match t.choice("action", &["fail", "recover"])?.as_deref() {
            Some("fail") => false,
            Some(_) => true,
            None => return Err(t.error("action", "missing; expected \"fail\" or \"recover\"")),
        };
        let target = target(t, topology, routing)?;
        events.push((t, FaultEvent { cycle, target, recovers }));
    }
    // Replayed in cycle order (the order given within a cycle), as the
    // engine applies them: each must change something.
    events.sort_by_key(|(_, e)| e.cycle);
    let base = match static_map {
        Some(m) => m.clone(),
        None => FaultMap::new(routing, &[], &[], &[]).expect("an empty map"),
    };
    let mut map = base.clone().for_changes(routing);
    for i in 0..events.len() {
        let (t, mut e) = events[i];
        let key = match e.target {
            FaultTarget::Link { .. } => if t.has("routers") { "routers" } else { "port" },
            FaultTarget::Router(_) => "node",
        };
        if let (true, FaultTarget::Link { router, port }) = (t.has("routers"), e.target) {
            // A dragonfly link named by its routers: the first of the
            // parallel links between them that is up (failing) or down
            // (recovering), as [network.faults] takes them.
            let (w, _) = routing.neighbor(router, port).expect("a link");
            let joins = |q: u8| routing.neighbor(router, q).is_some_and(|(x, _)| x == w);
            let wanted = (0..routing.ports() as u8).find(|&q| joins(q) && ((map.failed_ports(router) & 1 << q != 0) == e.recovers));
            if let Some(q) = wanted {
                e.target = FaultTarget::Link { router, port: q };
            }
        }
        let applied = match e.target {
            FaultTarget::Link { router, port } => map.set_link(routing, router, port, e.recovers),
            FaultTarget::Router(r) => {
                if e.recovers && base.router_failed(r) {
                    return Err(t.error("node", "failed in network.faults for the whole run (its traffic is left out): it cannot recover"));
                }
                map.set_router(routing, r, e.recovers)
            }
        };
        applied.map_err(|m| t.error(key, format!("at cycle {}: {m}", e.cycle)))?;
        events[i].1 = e;
        if e.recovers {
            continue;
        }
        let recovered = events[i + 1..].iter().any(|(_, later)| later.recovers && later.target == e.target);
        match e.target {
            FaultTarget::Router(_) if !recovered => {
                return Err(t.error("node", "a failed node must recover later in the run: the messages to and from it wait for it (add an event with action = \"recover\")"));
            }
            FaultTarget::Link { .. } if link_protocol && !recovered => {
                return Err(t.error(key, "with [link_errors] a failed link must recover later in the run: its link protocol holds the packets sent into it until it works again (add an event with action = \"recover\")"));
            }
            _ => {}
        }
    }
    // What fails for good: every pair alive must keep a route round it (a
    // failure that recovers holds its packets until then instead).
    crate::route_check::check_routes(sec.file(), &sec.key_path("events"), routing, &map, " that never recover")?;
    for t in &tables {
        match topology {
            Topology::Torus(_) | Topology::Tofu(_) => t.finish(&["cycle", "action", "node", "port"])?,
            _ => t.finish(&["cycle", "action", "routers"])?,
        }
    }
    sec.finish(&["events", "resend_timeout_cycles"])?;
    Ok(FaultSchedule { events: events.into_iter().map(|(_, e)| e).collect(), resend_timeout_cycles })
}

/// What an event names: a link (`node` and `port`, or `routers`) or a
/// node (`node` alone, on a torus or Tofu: its router fails with it).
fn target(t: &Section, topology: &Topology, routing: &Routing) -> Result<FaultTarget> {
    let node_only = matches!(topology, Topology::Torus(_) | Topology::Tofu(_)) && t.has("node") && !t.has("port");
    if node_only {
        let n = crate::system::node_ref(t, "node", t.get("node").expect("present"), topology)?;
        if n as usize >= routing.terminal_routers() {
            return Err(t.error("node", format!("expected a node id below {}", routing.terminal_routers())));
        }
        return Ok(FaultTarget::Router(n));
    }
    if !matches!(topology, Topology::Torus(_) | Topology::Tofu(_)) && t.has("node") {
        return Err(t.error("node", "on a dragonfly a node's router serves several nodes: fail its links (routers = [a, b])"));
    }
    let (router, port) = crate::system::link_out(t, topology, routing)?;
    Ok(FaultTarget::Link { router, port })
}
