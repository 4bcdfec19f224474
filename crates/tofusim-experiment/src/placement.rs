//! The front door of rank placement and job allocation: NAS CG's
//! communication list and computation, rank orders and their costs, RMATT,
//! virtual tori on Tofu regions and the job allocator (`tofusim pattern`,
//! `rmatt`, `map virtual`, `alloc`). Each request is checked here once, for
//! every caller; a refusal names the option (`--torus`, `--procs`…) as the
//! command line spells it, and the Python API relabels its origin.
//!
//! Long searches take a `stop` function, asked now and then (Ctrl-C): the
//! annealer then ends with its best order so far, the allocator with
//! nothing.

use serde_json::{json, Value};
use tofusim_mapping::cg::CgLayout;
use tofusim_mapping::{CommList, TorusShape};
use tofusim_topology::{NodeId, Topology};

use crate::collective::{self, Timed};
use crate::error::{ConfigError, Result};

/// Most proposed swaps an annealing run may be asked for.
pub const MAX_ITERATIONS: i64 = 1_000_000_000_000;

fn torus_shape(torus: &str) -> Result<TorusShape> {
    TorusShape::parse(torus).map_err(|m| ConfigError::argument("--torus", m))
}

/// A communication list's text (`SRC DST BYTES` lines), its errors naming
/// `source` and the line.
fn comm_list(pattern: &str, source: &str) -> Result<CommList> {
    CommList::parse(pattern).map_err(|e| {
        if e.line == 0 {
            ConfigError::argument(source, e.message)
        } else {
            ConfigError::argument(&format!("{source}, line {}", e.line), e.message)
        }
    })
}

/// The NAS CG layout, its inputs checked here for every caller: `procs` a
/// power of two below 2^31, `class` one letter of S W A B C D E (any case).
fn cg_layout(procs: i64, class: &str) -> Result<CgLayout> {
    if !(1..=1 << 30).contains(&procs) {
        return Err(ConfigError::argument("--procs", format!("expected a power of two from 1 to 2^30, found {procs}")));
    }
    let mut letters = class.chars();
    let (Some(c), None) = (letters.next().map(|c| c.to_ascii_uppercase()), letters.next()) else {
        return Err(ConfigError::argument("--class", format!("expected one of S, W, A, B, C, D, E, found {class:?}")));
    };
    CgLayout::new(procs as u32, c).map_err(|m| ConfigError::argument("--procs/--class", m))
}

/// The NAS CG communication list of `procs` processes, class `class`, as
/// text (`SRC DST BYTES` lines).
pub fn cg_comm_list(procs: i64, class: &str) -> Result<String> {
    Ok(cg_layout(procs, class)?.comm_list().to_text())
}

/// One NAS CG iteration's computation per process on a K computer node
/// (`CgLayout::iteration_compute`): flops, memory bytes, seconds, the timed
/// run's CG iterations and the node's rates.
pub fn cg_compute(procs: i64, class: &str) -> Result<Value> {
    let l = cg_layout(procs, class)?;
    let node = tofusim_mapping::cg::K_NODE;
    let c = l.iteration_compute(node);
    Ok(json!({
        "flops": c.flops,
        "memory_bytes": c.memory_bytes,
        "seconds": c.seconds,
        "timed_iterations": l.timed_iterations(),
        "node": {"name": "K computer (SPARC64 VIIIfx)", "flops_per_second": node.flops_per_second, "memory_bytes_per_second": node.memory_bytes_per_second},
    }))
}

/// Hop-bytes and maximum link load (bytes) of `order` (rank → node).
pub fn order_costs(torus: &str, pattern: &str, order: &[u32], source: &str) -> Result<(u64, u64)> {
    let t = torus_shape(torus)?;
    let c = comm_list(pattern, source)?;
    tofusim_mapping::placement::check_order(&t, c.ranks, order).map_err(|m| ConfigError::argument("order", m))?;
    Ok((tofusim_mapping::placement::hop_bytes(&t, &c, order), tofusim_mapping::placement::max_link_load(&t, &c, order)))
}

/// A baseline order of `pattern` on `torus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// The x-y order: rank i on node i.
    Default,
    /// A seeded random permutation.
    Random,
    /// Greedy placement of the heaviest pairs first.
    Greedy,
}

impl Baseline {
    pub fn parse(kind: &str) -> Result<Self> {
        match kind {
            "default" => Ok(Baseline::Default),
            "random" => Ok(Baseline::Random),
            "greedy" => Ok(Baseline::Greedy),
            _ => Err(ConfigError::argument("kind", format!("expected default, random or greedy, got {kind:?}"))),
        }
    }
}

pub fn baseline_order(torus: &str, pattern: &str, kind: Baseline, seed: u64, source: &str) -> Result<Vec<u32>> {
    let t = torus_shape(torus)?;
    let c = comm_list(pattern, source)?;
    if c.ranks > t.nodes() {
        return Err(ConfigError::argument("--torus", format!("{} ranks do not fit {} nodes", c.ranks, t.nodes())));
    }
    Ok(match kind {
        Baseline::Default => (0..c.ranks).collect(),
        Baseline::Random => tofusim_mapping::rmatt::random_order(c.ranks, seed),
        Baseline::Greedy => tofusim_mapping::rmatt::greedy_order(&t, &c),
    })
}

/// An RMATT request: anneal the rank order of `pattern` on `torus`.
pub struct RmattRequest<'a> {
    pub torus: &'a str,
    pub pattern: &'a str,
    /// Named in errors about the pattern.
    pub source: &'a str,
    pub objective: &'a str,
    pub seed: u64,
    /// Proposed swaps; `None`: the objective's default per rank.
    pub iterations: Option<i64>,
    /// The order to start from (rank → node); `None`: x-y, in blocks of
    /// `per_node` consecutive ranks.
    pub start: Option<Vec<u32>>,
    /// Ranks a node holds (`--ppn`: one per core); flows between ranks of
    /// one node cost nothing.
    pub per_node: u32,
}

/// RMATT: objective, default_cost (of the start), optimized_cost,
/// iterations, accepted, complete (false when `stop` ended it: the best so
/// far), requested_iterations, seconds and order.
pub fn rmatt(req: RmattRequest<'_>, stop: &mut dyn FnMut() -> bool) -> Result<Value> {
    use tofusim_mapping::rmatt::{anneal_until, AnnealParams, Objective};
    let t = torus_shape(req.torus)?;
    let c = comm_list(req.pattern, req.source)?;
    let obj = Objective::parse(req.objective).ok_or_else(|| ConfigError::argument("--objective", format!("expected hop-bytes or max-link-load, got {:?}", req.objective)))?;
    let per_node = check_per_node(req.per_node)?;
    if c.ranks as u64 > t.nodes() as u64 * per_node as u64 {
        let room = if per_node == 1 { String::new() } else { format!(" × {per_node} ranks per node") };
        return Err(ConfigError::argument("--torus", format!("the pattern has {} ranks, more than the {} nodes{room} of {}", c.ranks, t.nodes(), req.torus)));
    }
    let start = req.start.unwrap_or_else(|| (0..c.ranks).map(|r| r / per_node).collect());
    let mut params = AnnealParams::default_for(obj, c.ranks, req.seed);
    if let Some(i) = req.iterations {
        if !(1..=MAX_ITERATIONS).contains(&i) {
            return Err(ConfigError::argument("--iterations", format!("expected 1 to {MAX_ITERATIONS} proposed swaps, found {i}")));
        }
        params.iterations = i as u64;
    }
    let t0 = std::time::Instant::now();
    let slots = tofusim_mapping::rmatt::Slots { shape: &t, per_node };
    let a = anneal_until(slots, &c, obj, &start, params, stop).map_err(|m| ConfigError::argument("start order", m))?;
    Ok(json!({
        "objective": obj.name(),
        "torus": t.lengths,
        "ranks": c.ranks,
        "ranks_per_node": per_node,
        "default_cost": a.start_cost,
        "optimized_cost": a.cost,
        "iterations": a.iterations,
        "accepted": a.accepted,
        "complete": a.complete,
        "requested_iterations": params.iterations,
        "seed": req.seed,
        "seconds": t0.elapsed().as_secs_f64(),
        "order": a.order,
    }))
}

use crate::rank_placement::MAX_RANKS_PER_NODE;

fn check_per_node(per_node: u32) -> Result<u32> {
    if !(1..=MAX_RANKS_PER_NODE).contains(&per_node) {
        return Err(ConfigError::argument("--ppn", format!("expected 1 to {MAX_RANKS_PER_NODE} ranks per node, found {per_node}")));
    }
    Ok(per_node)
}

/// One NAS CG iteration's communication on the packet engine: `torus` (the
/// job's virtual torus, with the links and host model of `system`), rank
/// i on node `order[i]`, at most `ranks_per_node` on a node (several
/// share a node: their messages to each other go through its memory).
pub fn cg_iteration_time(
    torus: &str,
    procs: i64,
    class: &str,
    order: Vec<u32>,
    system: &str,
    ranks_per_node: u32,
    report: &mut dyn FnMut(f64) -> std::ops::ControlFlow<()>,
) -> Result<Timed> {
    let t = torus_shape(torus)?;
    let layout = cg_layout(procs, class)?;
    let procs = procs as u32;
    let per_node = check_per_node(ranks_per_node)?;
    tofusim_mapping::placement::check_placement(&t, procs, &order, per_node).map_err(|m| ConfigError::argument("order", m))?;
    let setup = collective::torus_setup(&t.lengths, system, order)?;
    collective::run_on(setup, layout.iteration_schedule(), &collective::ScheduleOptions::default(), report, |_| ()).map(|(t, ())| t)
}

/// Parses a region `X0,Y0,Z0:SXxSYxSZ`.
fn parse_region(text: &str) -> Result<tofusim_mapping::embed::Region> {
    let bad_region = || ConfigError::argument("--region", format!("expected ORIGIN:SIZE like 0,0,0:4x6x2, got {text:?}"));
    let (o, sz) = text.split_once(':').ok_or_else(bad_region)?;
    let o: Vec<u32> = o.split(',').map(|p| p.trim().parse()).collect::<std::result::Result<_, _>>().map_err(|_| bad_region())?;
    let sz: Vec<u32> = sz.split('x').map(|p| p.trim().parse()).collect::<std::result::Result<_, _>>().map_err(|_| bad_region())?;
    if o.len() != 3 || sz.len() != 3 {
        return Err(bad_region());
    }
    Ok(tofusim_mapping::embed::Region { origin: [o[0], o[1], o[2]], size: [sz[0], sz[1], sz[2]] })
}

/// The Tofu topology of a system name, or a refusal naming the option.
fn tofu_of(system: &str) -> Result<tofusim_topology::Torus> {
    let sys = crate::from_name(system)?;
    match &sys.network.topology {
        Topology::Tofu(t) => Ok(t.clone()),
        _ => Err(ConfigError::argument("--system", format!("{system} is not a Tofu system (k, fx10, fx100, fugaku)"))),
    }
}

/// A `tofusim map virtual` request.
pub struct VirtualMap<'a> {
    pub system: &'a str,
    pub shape: &'a str,
    /// `X0,Y0,Z0:SXxSYxSZ`; `None`: the whole system.
    pub region: Option<&'a str>,
    /// A fault list's text, named `faults_source` in errors.
    pub faults: Option<&'a str>,
    pub faults_source: &'a str,
    /// Also give node_of_rank and node_coords.
    pub with_order: bool,
}

/// A virtual torus on a Tofu system: virtual_shape, nodes_used,
/// padding_nodes, lost_nodes, max/mean_neighbor_hops, mechanism, block,
/// axes, and (with `with_order`) node_of_rank and node coordinates.
pub fn map_virtual(req: VirtualMap<'_>) -> Result<Value> {
    use tofusim_mapping::{embed, faults as fl};
    let t = tofu_of(req.system)?;
    let shape_v = embed::parse_shape(req.shape).map_err(|m| ConfigError::argument("--shape", m))?;
    let region = match req.region {
        Some(r) => parse_region(r)?,
        None => embed::Region::whole(&t),
    };
    region.check(&t).map_err(|m| ConfigError::argument("--region", m))?;
    let f = match req.faults {
        Some(text) => fl::Faults::parse(text, &t).map_err(|(line, m)| ConfigError::argument(&format!("{}, line {line}", req.faults_source), m))?,
        None => fl::Faults::default(),
    };
    let m = fl::map_virtual(&t, region, &shape_v, &f).map_err(|m| ConfigError::argument("--shape", m))?;
    let e = &m.embedding;
    let mut out = json!({
        "system": req.system,
        "virtual_shape": e.virtual_shape,
        "ranks": e.node_of_rank.len(),
        "nodes_used": e.node_of_rank.len(),
        "region": {"origin": region.origin, "size": region.size, "nodes": region.nodes()},
        "padding_nodes": m.unused_nodes - m.lost_nodes,
        "lost_nodes": m.lost_nodes,
        "failed_nodes": f.nodes.len(),
        "failed_links": f.links.len(),
        "max_neighbor_hops": m.max_neighbor_hops,
        "mean_neighbor_hops": m.mean_neighbor_hops,
        "mechanism": m.mechanism.describe(),
        "block": {"origin": e.block.origin, "size": e.block.size},
        "axes": e.axes,
    });
    if req.with_order {
        out["node_of_rank"] = json!(e.node_of_rank);
        let coords: Vec<Vec<u32>> = e.node_of_rank.iter().map(|&n| t.coords(NodeId(n))).collect();
        out["node_coords"] = json!(coords);
    }
    Ok(out)
}

/// The job allocator on a synthetic stream of `jobs` jobs at offered
/// `load`, under the four policies (no rotation or padding, rotation,
/// padding, both). `None` when `stop` ended it.
pub fn alloc_stream(system: &str, jobs: usize, load: f64, seed: u64, stop: &mut dyn FnMut() -> bool) -> Result<Option<Value>> {
    use tofusim_mapping::alloc::{simulate_until, synthetic_jobs, Policy};
    let t = tofu_of(system)?;
    if jobs == 0 || jobs > 1_000_000 {
        return Err(ConfigError::argument("--jobs", format!("expected 1 to 1,000,000 jobs, got {jobs}")));
    }
    if !(load > 0.0 && load <= 10.0) {
        return Err(ConfigError::argument("--load", format!("expected an offered load in (0, 10], got {load}")));
    }
    let stream = synthetic_jobs(&t, jobs, load, seed);
    let mut runs = Vec::with_capacity(4);
    for (rotation, padding) in [(false, false), (true, false), (false, true), (true, true)] {
        let Some(st) = simulate_until(&t, &stream, Policy { rotation, padding }, &mut *stop) else {
            return Ok(None);
        };
        runs.push(json!({
            "rotation": rotation, "padding": padding, "jobs": st.jobs, "unplaceable": st.unplaceable,
            "utilization": st.utilization, "allocated_fraction": st.allocated_fraction,
            "mean_wait_seconds": st.mean_wait_s, "max_wait_seconds": st.max_wait_s,
            "fragmentation": st.fragmentation, "makespan_seconds": st.makespan_s,
            "rotated_jobs": st.rotated, "padded_jobs": st.padded, "padding_fraction": st.padding_fraction,
        }));
    }
    Ok(Some(json!({"system": system, "nodes": t.node_count(), "jobs": jobs, "load": load, "seed": seed, "policies": runs})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_option_as_the_command_line_spells_it() {
        let e = cg_comm_list(3, "B").unwrap_err();
        assert_eq!((e.file.as_str(), e.key.as_str()), ("<command line>", "--procs/--class"));
        assert_eq!(cg_comm_list(0, "B").unwrap_err().key, "--procs");
        assert_eq!(cg_comm_list(4, "BB").unwrap_err().key, "--class");
        assert_eq!(Baseline::parse("best").unwrap_err().key, "kind");
        let req = RmattRequest { torus: "2x2", pattern: "0 1 8\n", source: "p", objective: "hop-bytes", seed: 1, iterations: Some(0), start: None, per_node: 1 };
        assert_eq!(rmatt(req, &mut || false).unwrap_err().key, "--iterations");
        assert_eq!(alloc_stream("bgl:4x4x4", 10, 0.5, 1, &mut || false).unwrap_err().key, "--system");
        let m = VirtualMap { system: "k:1x1x1", shape: "12", region: Some("0,0:1x1x1"), faults: None, faults_source: "f", with_order: false };
        assert_eq!(map_virtual(m).unwrap_err().key, "--region");
    }

    #[test]
    fn an_annealing_stopped_at_once_keeps_its_start() {
        let pattern = cg_comm_list(16, "S").unwrap();
        // Asked every few thousand swaps: a run longer than that stops at the first.
        let req = RmattRequest { torus: "4x4", pattern: &pattern, source: "cg", objective: "hop-bytes", seed: 1, iterations: Some(10_000_000), start: None, per_node: 1 };
        let r = rmatt(req, &mut || true).unwrap();
        assert_eq!(r["complete"], false);
        assert_eq!(r["order"].as_array().unwrap().len(), 16);
        assert!(r["optimized_cost"].as_u64() <= r["default_cost"].as_u64());
    }

    #[test]
    fn an_interrupted_allocation_gives_nothing() {
        // Asked every 64 jobs placed.
        assert!(alloc_stream("k:2x3x2", 200, 0.5, 1, &mut || true).unwrap().is_none());
        let done = alloc_stream("k:2x3x2", 20, 0.5, 1, &mut || false).unwrap().unwrap();
        assert_eq!(done["policies"].as_array().unwrap().len(), 4);
    }
}
