//! The one builder: a resolved [`System`] → a [`Built`] network — its node
//! space, routing, router model, NIC and communication model — used by
//! every command (`run`, `coll`, `reproduce`, the flow model, `pattern
//! time`, RMATT), so that they all simulate the same hardware.
//!
//! The hardware comes from the system's explicit `generation`
//! ([`crate::generation`]); the `[router]` table of an experiment file may
//! then override the router's parameters.

use tofusim_packet::{Escape, RouterParams};
use tofusim_routing::{DragonflyMode, DragonflyRouting, EscapeOrder, FatTreeMode, FatTreeRouting, Routing, TorusRouting};
use tofusim_topology::dragonfly::Dragonfly;
use tofusim_topology::FatTree;
use tofusim_comm::tree::Grid;
use tofusim_mapping::VirtualTorus;
use tofusim_topology::{tofu, Topology, Torus};

use crate::comm_model::CommModel;
use crate::node_space::dragonfly_space;
use crate::error::{ConfigError, Result};
use crate::system::{self, System};

/// A system built for the engines.
#[derive(Clone)]
pub struct Built {
    pub system: System,
    /// Router, packet format, NIC and host costs of the system's generation.
    pub model: CommModel,
    /// The space workloads and communicators number nodes in: the torus,
    /// or for a dragonfly a ring of its nodes (router-major) that only
    /// numbers them.
    pub nodes: Torus,
    /// A dragonfly and the routing mode its packets take (`None`: a torus,
    /// routed in dimension order).
    pub dragonfly: Option<(Dragonfly, DragonflyMode)>,
    /// A fat-tree and its up-port choice (nodes on the leaf switches).
    pub fattree: Option<(FatTree, FatTreeMode)>,
    /// Network ports per router.
    pub ports: usize,
    /// Injection capacity of a node, in links.
    pub injection_links: f64,
}

/// Most routers whose exact hop metrics with faults are computed (a BFS
/// from every router: about routers² steps, a minute near this size).
pub const MAX_FAULTY_METRICS_ROUTERS: u64 = 100_000;

/// Refuses topology metrics that would take hours: with faults the hop
/// metrics walk the surviving graph from every router.
pub fn check_metrics_cost(file: &str, sys: &crate::system::System) -> Result<()> {
    if sys.network.faults.is_empty() {
        return Ok(());
    }
    let routers = network_size(&sys.network.topology, None).routers;
    if routers > MAX_FAULTY_METRICS_ROUTERS {
        return Err(ConfigError::new(
            file,
            "network.faults",
            format!(
                "exact hop metrics with faults search the surviving graph from every router: {routers} routers (about {:.1e} steps) is more than the {MAX_FAULTY_METRICS_ROUTERS} this takes; drop the faults for the closed-form metrics, or a smaller network",
                (routers as f64).powi(2)
            ),
        ));
    }
    Ok(())
}

/// The size the memory budget needs (`tofusim_packet::budget`), from the
/// topology alone: `ports` per router when the network is built, else a
/// torus's own and, for the indirect networks, the engine's most (63).
pub fn network_size(topology: &Topology, ports: Option<usize>) -> tofusim_packet::budget::NetworkSize {
    let (axes, own_ports) = match topology {
        Topology::Torus(t) | Topology::Tofu(t) => (t.axes().len() as u64, t.ports().len() as u64),
        _ => (0, 63),
    };
    tofusim_packet::budget::NetworkSize {
        routers: topology.router_count(),
        ports: ports.map_or(own_ports, |p| p as u64),
        nodes: topology.node_count(),
        axes,
    }
}

/// How packets choose among a topology's routes (tori: the router's
/// escape scheme and routing mode decide).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Routes {
    /// The topology's default: dragonflies adaptive prefer-minimal,
    /// fat-trees d-mod-k.
    #[default]
    Default,
    Dragonfly(DragonflyMode),
    FatTree(FatTreeMode),
}

/// Builds `system` with its packets routed as `routes` says. Errors name
/// `file` and `key` (where the system came from).
pub fn build(file: &str, key: &str, system: System, routes: Routes) -> Result<Built> {
    let err = |m: String| ConfigError::new(file, key, m);
    let mode = match routes {
        Routes::Dragonfly(m) => Some(m),
        _ => None,
    };
    if matches!(routes, Routes::FatTree(_)) && !matches!(system.network.topology, Topology::FatTree(_)) {
        return Err(err(format!("{}: a fat-tree routing mode applies to fat-trees only", system.name)));
    }
    match &system.network.topology {
        Topology::Torus(t) | Topology::Tofu(t) => {
            if mode.is_some() {
                return Err(err(format!("{}: a routing mode applies to dragonflies only", system.name)));
            }
            let model = CommModel::for_system(&system, None);
            let injection_links = system.network.injection_per_node_Bps() / model.link_Bps;
            Ok(Built { nodes: t.clone(), ports: t.ports().len(), dragonfly: None, fattree: None, model, injection_links, system })
        }
        Topology::Dragonfly(d) => {
            if matches!(routes, Routes::FatTree(_)) {
                return Err(err(format!("{}: a fat-tree routing mode applies to fat-trees only", system.name)));
            }
            let mode = mode.unwrap_or(DragonflyMode::AdaptivePreferMinimal);
            if !matches!(mode, DragonflyMode::Minimal | DragonflyMode::InOrder) && d.groups > 64 {
                return Err(err(format!(
                    "non-minimal dragonfly routing carries the intermediate group in 6 bits: at most 64 groups, {} has {}",
                    system.name, d.groups
                )));
            }
            let space = dragonfly_space(file, key, d, &system.network.link_Bps)?;
            let model = CommModel::for_system(&system, Some(&space));
            let queues = model.router.queues(space.ports);
            if queues > tofusim_packet::MAX_QUEUES {
                return Err(err(format!(
                    "{}: {} ports x {} VCs and {} nodes x {} FIFOs make {queues} queues per router; the packet engine handles {}",
                    system.name,
                    space.ports,
                    model.router.vcs(),
                    d.nodes_per_router,
                    model.router.injection_fifos,
                    tofusim_packet::MAX_QUEUES
                )));
            }
            let injection_links = system.network.injection_per_node_Bps() / model.link_Bps;
            Ok(Built { nodes: space.nodes, ports: space.ports, dragonfly: Some((d.clone(), mode)), fattree: None, model, injection_links, system })
        }
        Topology::FatTree(f) => {
            if mode.is_some() {
                return Err(err(format!("{}: a dragonfly routing mode applies to dragonflies only", system.name)));
            }
            let mode = match routes {
                Routes::FatTree(m) => m,
                _ => FatTreeMode::DModK,
            };
            // Checked before the tables are built: a switch's neighbours
            // take ports x 8 bytes, for every switch.
            let own_ports = FatTreeRouting::ports_of(f);
            if own_ports > tofusim_packet::MAX_PORTS {
                return Err(err(format!(
                    "{}: switches of {own_ports} ports; the packet engine handles at most {} (a smaller k, or the flow model)",
                    system.name,
                    tofusim_packet::MAX_PORTS
                )));
            }
            let table_bytes = f.switch_count().saturating_mul(own_ports as u64 * 8);
            if let Some((limit, what)) = tofusim_packet::budget::limit(None) {
                if table_bytes > limit {
                    return Err(err(format!(
                        "{}: {} switches: their routing tables alone take {}, more than {what} ({})",
                        system.name,
                        f.switch_count(),
                        tofusim_packet::budget::gib(table_bytes),
                        tofusim_packet::budget::gib(limit)
                    )));
                }
            }
            let routing = FatTreeRouting::new(f, mode).map_err(|e| err(format!("{}: {e}", system.name)))?;
            let ports = routing.ports();
            let model = CommModel::for_system(&system, None);
            let queues = model.router.queues(ports);
            if ports > tofusim_packet::MAX_PORTS || queues > tofusim_packet::MAX_QUEUES {
                return Err(err(format!(
                    "{}: switches of {ports} ports x {} VCs with {} nodes x {} FIFOs on a leaf make {queues} queues; the packet engine handles at most {} ports and {} queues per router (write the tree out with fewer nodes per leaf switch, down[0])",
                    system.name,
                    model.router.vcs(),
                    model.router.nodes_per_router,
                    model.router.injection_fifos + model.router.priority_fifos,
                    tofusim_packet::MAX_PORTS,
                    tofusim_packet::MAX_QUEUES,
                )));
            }
            let nodes = f.node_count();
            if nodes > u32::MAX as u64 / 2 {
                return Err(err(format!("{}: {nodes} nodes; the engine numbers nodes in 31 bits", system.name)));
            }
            // One rail is simulated: the rails are identical trees and a
            // node spreads its traffic evenly over them, so each carries
            // 1/rails of it; figures per node are those of one rail.
            let injection_links = system.network.injection_per_node_Bps() / f.rails.max(1) as f64 / model.link_Bps;
            let ring = Torus::new(vec![tofusim_topology::Axis::ring("node", nodes as u32)]);
            Ok(Built { nodes: ring, ports, dragonfly: None, fattree: Some((f.clone(), mode)), model, injection_links, system })
        }
    }
}

impl Built {
    /// Refuses a network with failures in a model that does not route
    /// around them (`what`: the model), rather than simulating the
    /// healthy network without saying so.
    pub fn refuse_faults(&self, file: &str, key: &str, what: &str) -> Result<()> {
        let f = &self.system.network.faults;
        if f.is_empty() {
            return Ok(());
        }
        Err(ConfigError::new(
            file,
            &format!("{key}.faults"),
            format!(
                "{} failed node(s) and {} failed link(s): {what} does not model failures; the packet engine (tofusim run) does, and `tofusim topo` reports their effect on the network's metrics",
                f.nodes.len(),
                f.links.len()
            ),
        ))
    }

    /// The routers that failed with their node (a torus's or Tofu's node
    /// is its router; a dragonfly's or fat-tree's node fails alone).
    pub fn failed_routers(&self) -> Vec<u32> {
        match &self.system.network.topology {
            Topology::Torus(_) | Topology::Tofu(_) => self.system.network.faults.nodes.clone(),
            _ => Vec::new(),
        }
    }

    /// Length of one network cycle (a byte time of the reference link), ns.
    pub fn cycle_ns(&self) -> f64 {
        self.model.cycle_ns()
    }

    /// Nodes of one dragonfly group (`None` on other topologies).
    pub fn group_nodes(&self) -> Option<u32> {
        self.dragonfly.as_ref().map(|(d, _)| d.routers_per_group() * d.nodes_per_router)
    }

    /// The nodes as workloads address them: a torus's coordinates, a
    /// dragonfly's groups, a fat-tree's numbering (the engine's ring of
    /// [`Self::nodes`] only numbers the latter two).
    pub fn node_space(&self) -> tofusim_workload::NodeSpace {
        use tofusim_workload::NodeSpace;
        let nodes = self.nodes.node_count() as u32;
        match (self.group_nodes(), &self.fattree) {
            (Some(group_nodes), _) => NodeSpace::Groups { nodes, group_nodes },
            (None, Some(_)) => NodeSpace::Numbered { nodes },
            (None, None) => NodeSpace::Grid(self.nodes.clone()),
        }
    }

    /// The routing function for a router whose escape scheme is `escape`:
    /// Tofu in its X, Y, Z, A, C, B order, other tori in axis order; the
    /// escape route in direction order for `dateline-direction`.
    pub fn routing(&self, escape: Escape) -> Routing {
        routing_of(&self.nodes, self.dragonfly.as_ref(), self.fattree.as_ref(), escape)
    }

    /// The router the engine runs: the model's.
    pub fn router(&self) -> &RouterParams {
        &self.model.router
    }
}

/// The routing function of a node space (a torus, or a dragonfly's ring
/// with the dragonfly) for a router whose escape scheme is `escape` — the
/// only place routes are chosen for the engines.
pub fn routing_of(
    nodes: &Torus,
    dragonfly: Option<&(Dragonfly, DragonflyMode)>,
    fattree: Option<&(FatTree, FatTreeMode)>,
    escape: Escape,
) -> Routing {
    if let Some((d, mode)) = dragonfly {
        return Routing::Dragonfly(DragonflyRouting::new(d, *mode));
    }
    if let Some((f, mode)) = fattree {
        return Routing::FatTree(FatTreeRouting::new(f, *mode).expect("checked when built"));
    }
    let eo = if escape == Escape::DatelineDirection { EscapeOrder::Direction } else { EscapeOrder::Dimension };
    Routing::Torus(TorusRouting::new(nodes, &torus_order(nodes), eo))
}

/// The dimension order of a torus: Tofu's X, Y, Z, A, C, B, else axis order.
pub fn torus_order(t: &Torus) -> Vec<usize> {
    if tofu::is_tofu(t) {
        tofu::ROUTING_ORDER.to_vec()
    } else {
        (0..t.axes().len()).collect()
    }
}

/// Errors of systems named on the command line.
const WHERE: &str = "<command line>";

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::new(WHERE, key, message)
}

/// The communicator of a system: node of each rank, and its torus shape.
fn communicator(t: &Torus) -> (Vec<u32>, Option<Grid>) {
    if let Some(v) = VirtualTorus::of_tofu(t) {
        return (v.node_of_rank().to_vec(), Some(Grid::new(v.shape)));
    }
    let n = t.node_count() as u32;
    let l = t.lengths();
    (
        (0..n).collect(),
        if l.len() <= 3 {
            Grid::from_shape(&l)
        } else {
            None
        },
    )
}

/// A system ready for collectives: the built network ([`Built`]) and its
/// communicator (rank → node, torus shape).
#[derive(Clone)]
pub struct Setup {
    pub built: Built,
    pub node_of_rank: Vec<u32>,
    pub grid: Option<Grid>,
    /// The torus shape of the communicator's nodes (a rank per node, in
    /// its order): what a collective's node leaders see when ranks share
    /// nodes (several ranks per node).
    pub node_grid: Option<Grid>,
    /// The wall-time budget of a packet-engine run on this setup, by the
    /// run's own estimate (minutes; `None`: no limit). Default
    /// [`tofusim_packet::budget::DEFAULT_MAX_MINUTES`].
    pub max_minutes: Option<f64>,
}

/// The communicator of a system (rank → node, torus shape) and its model,
/// from the one builder ([`crate::build`]). A dragonfly's name may end in
/// `/mode`, its routing (`aries-720/minimal`; default adaptive
/// prefer-minimal).
pub fn setup(system_name: &str) -> Result<Setup> {
    let (sys, routes) = resolve(system_name)?;
    setup_of(sys, routes)
}

/// A system name as `tofusim coll --system` takes it (a preset, resized or
/// not, with an optional `/mode` of a dragonfly's or fat-tree's routing):
/// the system and its routes, resolved and nothing built.
pub fn resolve(system_name: &str) -> Result<(System, Routes)> {
    let (name, mode) = match system_name.split_once('/') {
        Some((n, m)) => (n, Some(m)),
        None => (system_name, None),
    };
    let sys = system::from_name(name)?;
    let routes = match (mode, &sys.network.topology) {
        (None, _) => Routes::Default,
        (Some(m), Topology::Dragonfly(_)) => Routes::Dragonfly(DragonflyMode::parse(m).ok_or_else(|| {
            err("system", format!("{name}/{m}: unknown dragonfly routing; expected one of {}", DragonflyMode::NAMES.join(", ")))
        })?),
        (Some(m), Topology::FatTree(_)) => Routes::FatTree(FatTreeMode::parse(m).ok_or_else(|| {
            err("system", format!("{name}/{m}: unknown fat-tree routing; expected {}", FatTreeMode::NAMES.join(", ")))
        })?),
        (Some(_), _) => {
            return Err(err("system", format!("{system_name}: a routing suffix (/mode) applies to dragonflies and fat-trees only")));
        }
    };
    Ok((sys, routes))
}

/// Refuses `sys` before it is built when its network and `ranks_per_node`
/// ranks on every node (their placement, a schedule's steps per rank at
/// least) would take more than the memory available: a system named
/// `bgl:1024x1024x1024` is refused here, not by the allocator. `what`
/// names the request in the message.
pub fn check_system_memory(sys: &System, ranks_per_node: u32, what: &str) -> Result<()> {
    use tofusim_packet::budget::{available_bytes, estimate, gib};
    let Some(limit) = available_bytes() else { return Ok(()) };
    let size = network_size(&sys.network.topology, None);
    // A dragonfly's router model needs its node space, which this check
    // comes before: the torus model's router stands in (the same order of
    // bytes per port and VC).
    let model = CommModel::for_system(sys, None);
    let network = estimate(size, &model.router, &tofusim_packet::RunParams::default(), model.packet_bytes, 0).total();
    // Per rank: its node, its program and its state (a few hundred bytes).
    let ranks = size.nodes.saturating_mul(ranks_per_node.max(1) as u64);
    let need = network.saturating_add(ranks.saturating_mul(256));
    if need > limit {
        return Err(err(
            "system",
            format!("{what} on {}: {} nodes and {ranks} ranks need about {}, more than the memory available ({}); use a smaller system", sys.name, size.nodes, gib(need), gib(limit)),
        ));
    }
    Ok(())
}

/// [`setup`] of a system whose memory is checked first
/// ([`check_system_memory`]) for `ranks_per_node` ranks on every node.
pub fn checked_setup(system_name: &str, ranks_per_node: u32, what: &str) -> Result<Setup> {
    let (sys, routes) = resolve(system_name)?;
    check_system_memory(&sys, ranks_per_node, what)?;
    setup_of(sys, routes)
}

/// The communicator of every node of a resolved system ([`resolve`]), built.
pub fn setup_of(sys: System, routes: Routes) -> Result<Setup> {
    communicator_of(build(WHERE, "system", sys, routes)?)
}

/// The communicator of every node of a built system: the ranks in the
/// order [`setup`] uses (a rank per node, so its memory grows with the
/// nodes: a caller estimating memory does so before this).
pub fn communicator_of(built: Built) -> Result<Setup> {
    built.refuse_faults(WHERE, "system", "a collective on a communicator of every node")?;
    let (node_of_rank, grid) = if built.dragonfly.is_some() || built.fattree.is_some() {
        ((0..built.nodes.node_count() as u32).collect(), None)
    } else {
        communicator(&built.nodes)
    };
    Ok(Setup { built, node_of_rank, grid, node_grid: grid, max_minutes: Some(tofusim_packet::budget::DEFAULT_MAX_MINUTES) })
}

/// The communicator of a system written as a TOML `[network]` table
/// (`file` names it in errors): every node, in the order [`setup`] uses.
pub fn setup_toml(file: &str, text: &str) -> Result<Setup> {
    let sys = system::from_toml(file, text)?;
    let built = build(file, "network", sys, Routes::Default)?;
    built.refuse_faults(file, "network", "a replay or collective on a communicator of every node")?;
    let (node_of_rank, grid) = if built.dragonfly.is_some() || built.fattree.is_some() {
        ((0..built.nodes.node_count() as u32).collect(), None)
    } else {
        communicator(&built.nodes)
    };
    Ok(Setup { built, node_of_rank, grid, node_grid: grid, max_minutes: Some(tofusim_packet::budget::DEFAULT_MAX_MINUTES) })
}

/// A plain torus of `lengths` (every axis wraps) with the links and
/// communication model of the preset `model_system`, its ranks placed by
/// `node_of_rank` (rank → node, x fastest): a job's virtual torus, on
/// which a rank order from RMATT is evaluated.
pub fn torus_setup(lengths: &[u32], model_system: &str, node_of_rank: Vec<u32>) -> Result<Setup> {
    let sys = system::from_name(model_system)?;
    if !matches!(sys.network.topology, Topology::Torus(_) | Topology::Tofu(_)) {
        // Its links and host model describe another topology: a torus with
        // them would be a machine that does not exist.
        return Err(err(
            "system",
            format!("{model_system} is not a torus: the job's virtual torus takes a torus or Tofu system's links and host model (k, fugaku, bgl, bgq…)"),
        ));
    }
    let axes = lengths
        .iter()
        .enumerate()
        .map(|(k, &l)| {
            let name = tofusim_topology::torus::default_axis_name(k);
            if l >= 3 {
                tofusim_topology::Axis::ring(&name, l)
            } else {
                tofusim_topology::Axis::path(&name, l)
            }
        })
        .collect();
    let t = Torus::new(axes);
    if node_of_rank.iter().any(|&n| n as u64 >= t.node_count()) {
        return Err(err("order", format!("a rank is placed beyond the {} nodes of the torus", t.node_count())));
    }
    let model = CommModel::for_system(&sys, None);
    let injection_links = sys.network.injection_per_node_Bps() / model.link_Bps;
    let built = Built { ports: t.ports().len(), nodes: t, dragonfly: None, fattree: None, model, injection_links, system: sys };
    let grid = Grid::from_shape(lengths);
    Ok(Setup { built, node_of_rank, grid, node_grid: grid, max_minutes: Some(tofusim_packet::budget::DEFAULT_MAX_MINUTES) })
}


#[cfg(test)]
mod resolve_tests {
    use super::*;

    #[test]
    fn a_system_is_resolved_once_then_built_with_its_own_routes() {
        // 100 groups: non-minimal routing cannot name the intermediate
        // group (6 bits), minimal routing can. Building with the default
        // routes (as the collective's memory check once did) refused a
        // /minimal request.
        let (sys, routes) = resolve("piz-daint:100/minimal").unwrap();
        assert!(matches!(routes, Routes::Dragonfly(DragonflyMode::Minimal)));
        let s = setup_of(sys.clone(), routes).unwrap();
        assert_eq!(s.node_of_rank.len() as u64, s.built.nodes.node_count());
        assert!(setup_of(sys, Routes::Default).is_err());
        assert_eq!(resolve("bgl:4x4x4/minimal").err().map(|e| e.key), Some("system".to_string()));
    }
}
