//! The network as a picture of it needs it (`tofusim report`): where every
//! router sits — torus coordinates, dragonfly group, fat-tree level — and
//! what every port's link is — its name as the engine's counters write
//! it, its exact label, the router at the far end and its link class.
//!
//! Everything comes from the built system and the routing the engine runs
//! ([`crate::build`]), so a report joins the counters to the topology by
//! the engine's own numbering instead of guessing it from names. Tables are
//! columnar (one vector per field): a full K computer has 829,440 ports.

use serde::Serialize;
use tofusim_packet::Escape;
use tofusim_routing::{LinkKind, Routing};
use tofusim_topology::{NodeId, Topology};

use crate::build::{self, Built, Routes};
use crate::error::Result;
use crate::system;

/// Where every router sits and what every port's link is.
#[derive(Clone, Debug, Serialize)]
pub struct Layout {
    /// The system's name (a preset, resized or not, or the file's).
    pub system: String,
    /// `torus`, `mesh`, `tofu`, `dragonfly` or `fattree`.
    pub kind: &'static str,
    /// Torus and Tofu axis names in coordinate order (Tofu: x y z a b c).
    pub axes: Vec<String>,
    /// Torus and Tofu axis lengths.
    pub shape: Vec<u32>,
    /// Nodes on each router (a fat-tree's: on each leaf switch); node `n`
    /// is on router `n / nodes_per_router`, as in the engine.
    pub nodes_per_router: u32,
    pub nodes: u64,
    /// Dragonfly groups (0 elsewhere).
    pub groups: u32,
    /// Fat-tree switch levels (0 elsewhere).
    pub levels: u32,
    /// Routers whose node failed (a torus's node is its router).
    pub failed_routers: Vec<u32>,
    pub routers: RouterTable,
    pub links: LinkTable,
}

/// Per router, indexed by router id.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RouterTable {
    /// The engine's label: `(1,2,0)`, `g3r1`, `g0c1s4`, `L1:5`.
    pub label: Vec<String>,
    /// Torus and Tofu coordinates, one per axis (empty elsewhere).
    pub coords: Vec<Vec<u32>>,
    /// Dragonfly group; fat-tree level (0 = leaf switches); 0 on tori.
    pub group: Vec<u32>,
    /// Position within the group or level.
    pub index: Vec<u32>,
}

/// Per connected port (router-major, ports in the engine's order).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkTable {
    pub router: Vec<u32>,
    /// The port's number in the engine.
    pub port_number: Vec<u8>,
    /// The name the engine's per-port counters carry (`x+`, `p7`,
    /// `down0/up0`: on fat-trees a name may stand for several roles).
    pub port: Vec<String>,
    /// The port's exact label at its router (fat-tree: `up3`; else the name).
    pub label: Vec<String>,
    /// The router at the far end.
    pub neighbor: Vec<u32>,
    /// Link class: the torus axis (`x`, `a`), the dragonfly class
    /// (`local`/`global`, Aries `rank-1`/`rank-2`/`rank-3`), the fat-tree
    /// direction (`up`/`down`).
    pub class: Vec<String>,
}

/// The layout of the system named `spec` (a preset, optionally resized,
/// optionally with a `/routing` suffix, as `tofusim coll` takes it).
pub fn of_name(spec: &str) -> Result<Layout> {
    Ok(of_built(&build::setup(spec)?.built))
}

/// The layout of the `[network]` table of a system or experiment file.
pub fn of_toml(file: &str, text: &str) -> Result<Layout> {
    let sys = system::from_toml(file, text)?;
    Ok(of_built(&build::build(file, "network", sys, Routes::Default)?))
}

/// The layout of a built system, from the routing the engine would run.
pub fn of_built(built: &Built) -> Layout {
    let routing = built.routing(Escape::Bubble);
    let topology = &built.system.network.topology;
    let routers = routing.routers();
    let mut table = RouterTable::default();
    for r in 0..routers as u32 {
        table.label.push(routing.router_label(r));
        let (coords, group, index) = place(topology, &routing, built, r);
        table.coords.push(coords);
        table.group.push(group);
        table.index.push(index);
    }
    let (axes, shape) = match topology {
        Topology::Torus(t) | Topology::Tofu(t) => (t.axes().iter().map(|a| a.name.clone()).collect(), t.lengths()),
        _ => (Vec::new(), Vec::new()),
    };
    Layout {
        system: built.system.name.clone(),
        kind: topology.kind(),
        axes,
        shape,
        nodes_per_router: built.model.router.nodes_per_router.max(1),
        nodes: topology.node_count(),
        groups: match &routing {
            Routing::Dragonfly(d) => d.groups(),
            _ => 0,
        },
        levels: match &routing {
            Routing::FatTree(f) => f.levels() as u32,
            _ => 0,
        },
        failed_routers: built.failed_routers(),
        routers: table,
        links: links(topology, &routing),
    }
}

/// A router's coordinates (tori), group or level, and index within it.
fn place(topology: &Topology, routing: &Routing, built: &Built, r: u32) -> (Vec<u32>, u32, u32) {
    match (topology, routing) {
        (Topology::Torus(_) | Topology::Tofu(_), _) => (built.nodes.coords(NodeId(r)), 0, r),
        (_, Routing::Dragonfly(d)) => {
            let per_group = d.routers() as u32 / d.groups().max(1);
            (Vec::new(), d.group(r), r % per_group.max(1))
        }
        (_, Routing::FatTree(f)) => {
            let (level, index) = f.locate(r);
            (Vec::new(), level as u32, index)
        }
        _ => (Vec::new(), 0, r),
    }
}

/// Every connected port with its link's far end and class.
fn links(topology: &Topology, routing: &Routing) -> LinkTable {
    let mut t = LinkTable::default();
    for r in 0..routing.routers() as u32 {
        for p in 0..routing.ports() as u8 {
            let Some((w, _)) = routing.neighbor(r, p) else { continue };
            t.router.push(r);
            t.port_number.push(p);
            t.port.push(routing.port_name(p));
            t.neighbor.push(w);
            let (label, class) = match (topology, routing) {
                (Topology::Torus(tor) | Topology::Tofu(tor), _) => {
                    let port = &tor.ports()[p as usize];
                    (port.name.clone(), tor.axes()[port.axis].name.clone())
                }
                (Topology::Dragonfly(d), Routing::Dragonfly(dr)) => {
                    let class = match dr.kind(r, p) {
                        LinkKind::Local => 0,
                        LinkKind::Rank2 => 1,
                        LinkKind::Global => d.global_class() as usize,
                    };
                    (routing.port_name(p), d.class_names()[class].to_string())
                }
                (_, Routing::FatTree(f)) => {
                    let up = f.locate(w).0 > f.locate(r).0;
                    (f.port_label(r, p), if up { "up" } else { "down" }.to_string())
                }
                _ => (routing.port_name(p), String::new()),
            };
            t.label.push(label);
            t.class.push(class);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torus_ports_join_their_neighbours_by_coordinates() {
        let l = of_name("bgl:4x4x4").unwrap();
        assert_eq!((l.kind, l.axes.clone(), l.shape.clone()), ("torus", vec!["x".to_string(), "y".into(), "z".into()], vec![4, 4, 4]));
        assert_eq!(l.links.router.len(), 64 * 6);
        for i in 0..l.links.router.len() {
            let (a, b) = (&l.routers.coords[l.links.router[i] as usize], &l.routers.coords[l.links.neighbor[i] as usize]);
            let axis = l.axes.iter().position(|x| *x == l.links.class[i]).unwrap();
            let step = if l.links.port[i].ends_with('+') { 1 } else { 3 };
            assert_eq!(b[axis], (a[axis] + step) % 4, "{} of {:?}", l.links.port[i], a);
        }
    }

    #[test]
    fn tofu_has_ten_ports_per_node_on_six_axes() {
        let l = of_name("k:2x2x2").unwrap();
        assert_eq!(l.kind, "tofu");
        assert_eq!(l.axes, ["x", "y", "z", "a", "b", "c"]);
        assert!(l.routers.coords.iter().all(|c| c.len() == 6));
    }

    #[test]
    fn dragonfly_global_links_join_groups() {
        let l = of_name("piz-daint:4").unwrap();
        assert_eq!(l.groups, 4);
        let mut global = 0;
        for i in 0..l.links.router.len() {
            let (g, h) = (l.routers.group[l.links.router[i] as usize], l.routers.group[l.links.neighbor[i] as usize]);
            if l.links.class[i] == "rank-3" {
                assert_ne!(g, h);
                global += 1;
            } else {
                assert_eq!(g, h, "{} links within a group", l.links.class[i]);
            }
        }
        assert!(global > 0);
    }

    #[test]
    fn fattree_up_links_climb_one_level() {
        let l = of_toml("t.toml", "[network]\ntopology = \"fattree\"\nk = 4\nlevels = 3\nlink_bandwidth = \"12.5GB/s\"\n").unwrap();
        assert_eq!(l.levels, 3);
        for i in 0..l.links.router.len() {
            let (a, b) = (l.routers.group[l.links.router[i] as usize], l.routers.group[l.links.neighbor[i] as usize]);
            assert_eq!(b as i64 - a as i64, if l.links.class[i] == "up" { 1 } else { -1 });
            assert!(l.links.label[i].starts_with(&l.links.class[i]));
        }
    }
}
