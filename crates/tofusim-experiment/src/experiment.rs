//! An experiment file: `[network]` plus `[router]`, `[routing]`,
//! `[workload]` and `[run]`, validated key by key and turned into a packet
//! engine run.

use crate::build::{self, Built, Routes};
use crate::error::{ConfigError, Result};
use crate::section::Section;
use crate::system::{self, System};
use tofusim_packet::{
    Arbitration, Engine, Escape, FifoSelect, PlantedFault, RouterParams, RoutingMode, RunParams,
    RunResult,
};
use tofusim_routing::{DragonflyMode, FatTreeMode, FaultMap};
use tofusim_topology::Topology;
use tofusim_workload::{FinitePattern, Kind, NodeSpace, OpenPattern, PacketFormat, PatternName, TracePacket, Workload};

/// The pattern names an experiment file takes (the registry is
/// [`PatternName`]).
pub const PATTERNS: [&str; 15] = PatternName::ALL_NAMES;
pub const ALGORITHMS: [&str; 3] = ["adaptive", "dor", "deterministic"];

/// Everything a packet-engine run needs, validated.
pub struct Experiment {
    /// The system built by the one builder ([`crate::build`]).
    pub built: Built,
    /// The built router with the `[router]` table's overrides.
    pub router: RouterParams,
    pub mode: RoutingMode,
    pub run: RunParams,
    pub workload: Workload,
    /// The network's failed routers and links in the routing's terms
    /// (`None`: nothing failed).
    pub faults: Option<FaultMap>,
    /// Errors on the links and their recovery (`[link_errors]`; `None`:
    /// error-free links).
    pub link_errors: Option<tofusim_packet::LinkErrors>,
    /// Links and nodes failing and recovering during the run (`[faults]`;
    /// `None`: none).
    pub fault_schedule: Option<crate::fault_events::FaultSchedule>,
}

impl Experiment {
    /// Refuses what only the packet engine models — failures during the
    /// run (`[faults]`) and link errors (`[link_errors]`) — for `what`
    /// (e.g. "the flow model"), naming the table.
    pub fn refuse_packet_only(&self, file: &str, what: &str) -> Result<()> {
        if self.fault_schedule.is_some() {
            return Err(ConfigError::new(file, "faults", format!("failures during a run are modelled by the packet engine only, not by {what} (use --model packet)")));
        }
        if self.link_errors.is_some() {
            return Err(ConfigError::new(file, "link_errors", format!("link errors are modelled by the packet engine only, not by {what} (use --model packet)")));
        }
        Ok(())
    }
}

/// Parses and validates an experiment file.
pub fn parse(file: &str, text: &str) -> Result<Experiment> {
    let doc = system::parse_toml(file, text)?;
    let top = Section::new(file, "", &doc);
    let system = system::from_doc(file, &doc)?;
    let empty = toml::Table::new();
    let sec = |name: &str| -> Result<Section> {
        Ok(top
            .table(name)?
            .unwrap_or_else(|| Section::new(file, name, &empty)))
    };
    let routes = match &system.network.topology {
        Topology::Dragonfly(_) => Routes::Dragonfly(parse_dragonfly_routing(&sec("routing")?)?),
        Topology::FatTree(_) => Routes::FatTree(parse_fattree_routing(&sec("routing")?)?),
        _ => Routes::Default,
    };
    let built = build::build(file, "network", system, routes)?;
    let mut router = parse_router(&sec("router")?, built.ports, routes, built.router().clone(), built.cycle_ns())?;
    if let (Some((tree, _)), true) = (&built.fattree, router.virtual_output_queues) {
        // One queue per output: more VCs than outputs would never be used.
        let outputs = tofusim_routing::FatTreeRouting::outputs_of(tree);
        if router.dynamic_vcs as usize > outputs {
            return Err(sec("router")?.error("dynamic_vcs", format!("at most {outputs} with virtual output queues: one per output of the widest switch (more would never be used)")));
        }
    }
    let mut mode = match routes {
        Routes::Dragonfly(_) => RoutingMode::Deterministic,
        // Adaptive up-port choice: JSQ among the up ports at every switch.
        Routes::FatTree(FatTreeMode::Adaptive) => RoutingMode::Adaptive,
        Routes::FatTree(_) => RoutingMode::Deterministic,
        Routes::Default => parse_routing(
            &sec("routing")?,
            built.model.routing,
            &router,
            built.system.generation,
        )?,
    };
    let run = parse_run(&sec("run")?)?;
    let workload = parse_workload(&sec("workload")?, &built.node_space(), &router, built.model.header_bytes, run.seed)?;
    if let (Kind::Finite(tofusim_workload::FinitePattern::Trace { packets }), Some(cycles)) =
        (&workload.kind, run.cycles)
    {
        // A packet made after the run's end would never be sent: the run
        // would report a workload it did not carry.
        if let Some((i, p)) = packets.iter().enumerate().find(|(_, p)| p.cycle >= cycles) {
            return Err(sec("workload")?.error(
                &format!("trace[{i}]"),
                format!("cycle {} lies beyond the run (run.cycles = {cycles}); expected cycles below it, or a longer run", p.cycle),
            ));
        }
    }
    if matches!(workload.kind, Kind::Open { .. }) && run.cycles.is_none() {
        // An open-loop pattern never runs out of packets: without a length
        // the run would never end.
        return Err(sec("run")?.error(
            "cycles",
            "missing; an open-loop pattern needs the run's length in cycles (e.g. cycles = 100000)",
        ));
    }
    let link_errors = match top.table("link_errors")? {
        Some(le) => {
            if le.has("packet_slicing") && !sec("router")?.has("overhead_bytes") {
                // The lanes modelled one by one: the link protocol sends
                // split mode's header copies (and none when duplicating),
                // so the format's own copies come out of the overhead.
                router.overhead_bytes -= crate::comm_model::split_copy_bytes(built.system.generation);
            }
            Some(crate::link_errors::parse(&le, &built, &built.routing(router.escape), &router)?)
        }
        None => None,
    };
    let fault_sec = top.table("faults")?;
    top.finish(&["network", "router", "routing", "workload", "run", "link_errors", "faults"])?;
    if (!built.system.network.faults.is_empty() || fault_sec.is_some()) && router.dynamic_vcs == 0 && matches!(built.system.network.topology, Topology::Torus(_) | Topology::Tofu(_)) {
        // A route around a failure may begin with a hop that leaves
        // dimension order; it must not enter the escape network (its
        // deadlock freedom rests on that order). A router without dynamic
        // VCs (the Tofu model) gets one for such hops, used by nothing
        // else in deterministic routing ([RECON]: the sources do not say
        // how Tofu carries its ABC detour; docs/model.md).
        router.dynamic_vcs = 1;
        // Without dynamic VCs "adaptive" routed deterministically; it
        // still does (the new VC carries detour hops only).
        mode = RoutingMode::Deterministic;
    }
    let (workload, faults) = with_faults(file, &built, &router, workload)?;
    let fault_schedule = match &fault_sec {
        Some(sec) => Some(crate::fault_events::parse(sec, &built, &built.routing(router.escape), faults.as_ref(), &workload, &run, &router, link_errors.is_some())?),
        None => None,
    };
    Ok(Experiment { built, router, mode, run, workload, faults, link_errors, fault_schedule })
}

/// A fat-tree's `[routing] algorithm`: the up-port choice (default d-mod-k).
fn parse_fattree_routing(sec: &Section) -> Result<FatTreeMode> {
    let m = sec.choice("algorithm", &FatTreeMode::NAMES)?.map_or(FatTreeMode::DModK, |m| FatTreeMode::parse(&m).expect("checked"));
    sec.finish(&[])?;
    Ok(m)
}

fn parse_dragonfly_routing(sec: &Section) -> Result<DragonflyMode> {
    let m = sec
        .choice("algorithm", &DragonflyMode::NAMES)?
        .map(|a| DragonflyMode::parse(&a).expect("checked"))
        .unwrap_or(DragonflyMode::Minimal);
    sec.finish(&[])?;
    Ok(m)
}

fn int_or(sec: &Section, key: &str, min: i64, max: i64, default: i64) -> Result<i64> {
    Ok(sec.int(key, min, max)?.unwrap_or(default))
}

/// The `[router]` table over the defaults `p` (BG/L's; dragonflies: the
/// VC of a hop is its class of global hops).
fn parse_router(sec: &Section, ports: usize, routes: Routes, mut p: RouterParams, cycle_ns: f64) -> Result<RouterParams> {
    let dragonfly = matches!(routes, Routes::Dragonfly(_));
    let fattree = matches!(routes, Routes::FatTree(_));
    if let Some(e) = sec.choice("escape", &Escape::NAMES)? {
        p.escape = Escape::parse(&e).expect("checked");
    }
    // A fat-tree switch's virtual output queues are its dynamic VCs: one
    // per output of the widest switch, up to the engine's VCs per input.
    let most_dynamic = if fattree { tofusim_packet::MAX_VCS as i64 } else { 8 };
    p.dynamic_vcs = int_or(sec, "dynamic_vcs", 0, most_dynamic, p.dynamic_vcs as i64)? as u8;
    // Keys of another topology's router are refused where given and not
    // looked up otherwise, so an unknown key's message does not list them.
    if fattree {
        p.virtual_output_queues = sec.boolean("virtual_output_queues")?.unwrap_or(p.virtual_output_queues);
    } else if sec.has("virtual_output_queues") {
        return Err(sec.error("virtual_output_queues", "virtual output queues apply to fat-tree switches (topology = \"fattree\"), whose routing names each switch's outputs"));
    }
    p.priority_vc = sec.boolean("priority_vc")?.unwrap_or(p.priority_vc);
    if let Some(b) = sec.size("vc_buffer")? {
        p.vc_buffer_bytes = b as u32;
    }
    if let Some(b) = sec.size("injection_fifo")? {
        p.injection_fifo_bytes = b as u32;
    }
    p.overhead_bytes = int_or(sec, "overhead_bytes", 0, 1024, p.overhead_bytes as i64)? as u32;
    p.hop_latency_cycles = latency_cycles(sec, "hop_latency", cycle_ns, p.hop_latency_cycles)?;
    p.token_latency_cycles = latency_cycles(sec, "token_latency", cycle_ns, p.token_latency_cycles)?;
    p.paths = int_or(sec, "paths", 1, 8, p.paths as i64)? as u8;
    if dragonfly {
        p.class_vcs = sec.int("class_vcs", 1, 8)?.map_or(p.class_vcs, |k| k as u8);
    } else if sec.has("class_vcs") {
        return Err(sec.error("class_vcs", "VCs per hop class apply to dragonflies (escape = \"hop-class\")"));
    }
    if let Some(a) = sec.choice("arbitration", &["random", "slq"])? {
        p.arbitration = if a == "slq" {
            Arbitration::Slq
        } else {
            Arbitration::Random
        };
    }
    p.slq_fraction = sec
        .float("slq_fraction", 0.0, 1.0)?
        .unwrap_or(p.slq_fraction);
    p.network_priority = sec
        .float("network_priority", 0.0, 1.0)?
        .unwrap_or(p.network_priority);
    if let Some(s) = sec.choice("output_selection", &["jsq", "random"])? {
        p.jsq = s == "jsq";
    }
    if let Some(n) = sec.int("jsq_ranges", 2, p.vc_tokens() as i64)? {
        if !p.jsq {
            return Err(sec.error("jsq_ranges", "applies with output_selection = \"jsq\" (random output choice sees no token ranges)"));
        }
        p.jsq_ranges = n as u16;
    }
    p.injection_fifos = int_or(sec, "injection_fifos", 1, 16, p.injection_fifos as i64)? as u8;
    p.priority_fifos = int_or(sec, "priority_fifos", 0, 8, p.priority_fifos as i64)? as u8;
    if let Some(s) = sec.choice("fifo_select", &["round-robin", "direction"])? {
        p.fifo_select = if s == "direction" {
            FifoSelect::Direction
        } else {
            FifoSelect::RoundRobin
        };
    }
    let chunks = p.vc_buffer_bytes / p.chunk_bytes;
    if !p.vc_buffer_bytes.is_multiple_of(p.chunk_bytes) || chunks < p.full_chunks() {
        return Err(sec.error(
            "vc_buffer",
            format!(
                "expected a multiple of {} bytes holding at least one {}-byte packet",
                p.chunk_bytes, p.max_packet_bytes
            ),
        ));
    }
    if p.escape.is_bubble() && chunks < 2 * p.full_chunks() {
        return Err(sec.error(
            "vc_buffer",
            format!(
                "the bubble rule needs room for two full packets: at least {} bytes",
                2 * p.max_packet_bytes
            ),
        ));
    }
    if chunks > u16::MAX as u32 / 2 {
        return Err(sec.error("vc_buffer", format!("expected at most {} bytes ({} chunks)", (u16::MAX as u32 / 2) * p.chunk_bytes, u16::MAX / 2)));
    }
    if p.injection_fifo_bytes < p.max_packet_bytes || p.injection_fifo_bytes / p.chunk_bytes > 30000
    {
        return Err(sec.error(
            "injection_fifo",
            format!("expected from {} bytes to {} bytes (30,000 chunks)", p.max_packet_bytes, 30000 * p.chunk_bytes + p.chunk_bytes - 1),
        ));
    }
    if dragonfly && (p.escape != Escape::HopClass || p.dynamic_vcs != 0) {
        return Err(sec.error("escape", "dragonflies use escape = \"hop-class\" with dynamic_vcs = 0 (the VC of a hop is its class of global hops)"));
    }
    if fattree && (p.escape != Escape::None || p.dynamic_vcs == 0) {
        return Err(sec.error("escape", "fat-trees use escape = \"none\" with at least one dynamic VC (up/down routing cannot deadlock, so no escape VC is needed)"));
    }
    if !dragonfly && p.escape == Escape::HopClass {
        return Err(sec.error("escape", "\"hop-class\" is the dragonfly VC policy; tori use bubble, dateline-dimension, dateline-direction or none"));
    }
    if p.dynamic_vcs == 0 && p.escape == Escape::None {
        return Err(sec.error("dynamic_vcs", "expected at least 1 when escape = \"none\""));
    }
    if p.vcs() as usize > tofusim_packet::MAX_VCS {
        let key = if p.class_vcs > 1 { "class_vcs" } else { "dynamic_vcs" };
        return Err(sec.error(
            key,
            format!(
                "at most {} VCs per input in all; {} dynamic + {} escape + {} priority make {}",
                tofusim_packet::MAX_VCS,
                p.dynamic_vcs,
                p.escape_vcs(),
                p.priority_vc as u8,
                p.vcs()
            ),
        ));
    }
    let npr = p.nodes_per_router.max(1) as usize;
    let queues = p.queues(ports);
    if queues > tofusim_packet::MAX_QUEUES {
        return Err(sec.error("injection_fifos", format!("too many VCs and FIFOs: {} VCs on each of {ports} ports plus {npr} node(s) x {} FIFOs make {queues} queues; at most {} per router", p.vcs(), p.injection_fifos + p.priority_fifos, tofusim_packet::MAX_QUEUES)));
    }
    sec.finish(&[])?;
    Ok(p)
}

/// A latency of the `[router]` table, `NAME_ns` (physical time, the
/// same on any link) or `NAME_cycles` (byte times of this system's
/// links), not both; `default` in cycles. Nanoseconds round to the
/// nearest cycle, at least 1.
fn latency_cycles(sec: &Section, name: &str, cycle_ns: f64, default: u32) -> Result<u32> {
    let (ns_key, cycles_key) = (format!("{name}_ns"), format!("{name}_cycles"));
    let ns = sec.float(&ns_key, 0.0, 1e7)?;
    let cycles = sec.int(&cycles_key, 1, 100_000)?;
    match (ns, cycles) {
        (Some(_), Some(_)) => Err(sec.error(&ns_key, format!("give {ns_key} or {cycles_key}, not both"))),
        (Some(ns), None) => {
            let c = (ns / cycle_ns).round().max(1.0);
            if c > 100_000.0 {
                return Err(sec.error(&ns_key, format!("expected at most {:.0} ns (100,000 cycles of {cycle_ns:.3} ns)", 100_000.0 * cycle_ns)));
            }
            Ok(c as u32)
        }
        (None, Some(c)) => Ok(c as u32),
        (None, None) => Ok(default),
    }
}

/// The `[routing]` table of a torus; `default`: the generation's mode.
/// Adaptive routing needs dynamic VCs to adapt on: asked for on a router
/// without them (the Tofu models route by extended dimension order and
/// have none) it is refused, naming the router and the fix, rather than
/// run as dimension order under the name "adaptive". Without the key, a
/// router without dynamic VCs routes by dimension order, and says so.
fn parse_routing(sec: &Section, default: RoutingMode, router: &RouterParams, generation: crate::generation::Generation) -> Result<RoutingMode> {
    let asked = sec.choice("algorithm", &ALGORITHMS)?;
    let m = match asked.as_deref() {
        None if router.dynamic_vcs == 0 => RoutingMode::Deterministic,
        None => default,
        Some("adaptive") => RoutingMode::Adaptive,
        _ => RoutingMode::Deterministic,
    };
    if m == RoutingMode::Adaptive && router.dynamic_vcs == 0 {
        return Err(sec.error("algorithm", adaptive_refusal(generation)));
    }
    sec.finish(&[])?;
    Ok(m)
}

/// Why adaptive routing is refused on a router of `generation` without
/// dynamic VCs, and what to do instead.
pub fn adaptive_refusal(generation: crate::generation::Generation) -> String {
    use crate::generation::Generation as G;
    let why = match generation {
        G::Tofu1 | G::Tofu2 | G::Tofud => format!(
            "the {} router has no dynamic VCs: Tofu routes by extended dimension order (X, Y, Z, A, C, B), so adaptive routing would run as dimension order",
            generation.name()
        ),
        G::Bgl | G::Aries | G::GenericDragonfly | G::FatTree => format!(
            "the {} router here has [router] dynamic_vcs = 0, so adaptive routing would run as dimension order",
            generation.name()
        ),
    };
    format!("{why}; use algorithm = \"dor\", or give the router dynamic VCs ([router] dynamic_vcs = 1 or more) to model an adaptive variant (not a published Tofu router), or generation = \"bgl\" for the BG/L adaptive router on this topology")
}

/// Most samples a run's time series keeps (`run.sample_cycles`).
pub const MAX_SERIES_SAMPLES: u64 = 100_000;

fn parse_run(sec: &Section) -> Result<RunParams> {
    let mut r = RunParams::default();
    r.cycles = sec.int("cycles", 1, i64::MAX / 4)?.map(|c| c as u64);
    r.warmup = int_or(sec, "warmup", 0, i64::MAX / 4, 0)? as u64;
    r.seed = int_or(sec, "seed", 0, i64::MAX, 1)? as u64;
    // The time series keeps a sample per period (about 1.7 KB each): at
    // most MAX_SERIES_SAMPLES over the run's cycles. The default period
    // (1,000 cycles) lengthens on a long run, so its series stays that
    // size; a period given that would exceed it is refused.
    let most = |c: u64| c.div_ceil(MAX_SERIES_SAMPLES);
    r.sample_cycles = match (sec.int("sample_cycles", 1, i64::MAX / 4)?, r.cycles) {
        (Some(p), Some(c)) if (p as u64) < most(c) => {
            return Err(sec.error(
                "sample_cycles",
                format!("{p} cycles over a run of {c}: more than {MAX_SERIES_SAMPLES} samples; expected at least {}", most(c)),
            ))
        }
        (Some(p), _) => p as u64,
        (None, Some(c)) => most(c).max(1000),
        (None, None) => 1000,
    };
    r.deadlock_cycles = int_or(sec, "deadlock_cycles", 100, i64::MAX / 4, 20_000)? as u64;
    r.audit_cycles = int_or(sec, "audit_cycles", 0, i64::MAX / 4, 0)? as u64;
    r.plant = sec
        .choice("plant_fault", &PlantedFault::NAMES)?
        .map(|s| PlantedFault::parse(&s).expect("checked"));
    r.plant_after = int_or(sec, "plant_after", 0, i64::MAX / 4, 0)? as u64;
    // The PA counters' sampling period: `counter_period` (issue 21's name)
    // or `counter_cycles` (the earlier one), not both.
    let period = sec.int("counter_period", 0, i64::MAX / 4)?;
    let cycles = sec.int("counter_cycles", 0, i64::MAX / 4)?;
    if period.is_some() && cycles.is_some() {
        return Err(sec.error("counter_period", "give counter_period or counter_cycles (the same setting), not both"));
    }
    r.counter_cycles = period.or(cycles).unwrap_or(0) as u64;
    r.jsq_statistics = sec.boolean("jsq_statistics")?.unwrap_or(false);
    if let Some(c) = r.cycles {
        if r.warmup >= c {
            return Err(sec.error(
                "warmup",
                format!("expected fewer warm-up cycles than run.cycles ({c})"),
            ));
        }
    }
    sec.finish(&[])?;
    Ok(r)
}

fn coords(sec: &Section, key: &str, dims: usize, default: Option<Vec<u32>>) -> Result<Vec<u32>> {
    match sec.int_list(key, 0, 1 << 20)? {
        Some(v) if v.len() == dims => Ok(v.into_iter().map(|x| x as u32).collect()),
        Some(v) => Err(sec.error(
            key,
            format!(
                "expected {dims} coordinates (one per axis), found {}",
                v.len()
            ),
        )),
        None => {
            default.ok_or_else(|| sec.error(key, format!("missing; expected {dims} coordinates")))
        }
    }
}

fn parse_workload(
    sec: &Section,
    space: &NodeSpace,
    router: &RouterParams,
    default_header_bytes: u32,
    seed: u64,
) -> Result<Workload> {
    let pattern = sec.choice("pattern", &PATTERNS)?.unwrap_or_else(|| "uniform".into());
    let name = PatternName::parse(&pattern).expect("a name from PATTERNS");
    // One message for every way a packet size can be wrong: the range and
    // the chunk rule together, as the router sets them.
    let (chunk, largest) = (router.chunk_bytes.max(1) as i64, router.max_packet_bytes as i64);
    let packet_bytes = match sec.int("packet_bytes", i64::MIN, i64::MAX)? {
        None => largest,
        Some(v) if v >= chunk && v <= largest && v % chunk == 0 => v,
        Some(v) => {
            return Err(sec.error(
                "packet_bytes",
                format!("expected a multiple of the router's {chunk}-byte chunk from {chunk} to {largest} bytes (its largest packet), found {v}"),
            ))
        }
    } as u32;
    let header_bytes = int_or(sec, "header_bytes", 0, 1 << 20, default_header_bytes as i64)? as u32;
    let lengths = space.axis_lengths();
    let dims = lengths.len();
    let open = |p: OpenPattern| -> Result<Kind> {
        let load = sec.float("load", 0.0, 1.0)?.ok_or_else(|| sec.error("load", "missing; expected the offered load, a fraction of a node's injection bandwidth (0 to 1)"))?;
        Ok(Kind::Open { pattern: p, load })
    };
    let payload = packet_bytes.saturating_sub(header_bytes) as u64;
    if !name.runs_on(space) {
        let here = PatternName::running_on(space).join(", ");
        let why = match name {
            PatternName::GroupShift => "group-shift (every node of group i sends to group i + 1) needs a dragonfly".to_string(),
            _ => format!("{pattern} needs a torus's node coordinates"),
        };
        return Err(sec.error("pattern", format!("{why}; on {} the engine runs {here}", space.label())));
    }
    if let (PatternName::GroupShift, Some(g)) = (name, space.group_nodes()) {
        if g >= space.nodes() {
            // Group i + 1 is group i itself: every node would send to itself.
            return Err(sec.error("pattern", "group-shift (every node of group i sends to group i + 1) needs at least 2 groups; this dragonfly has 1"));
        }
    }
    let kind = match name {
        PatternName::Uniform => open(OpenPattern::Uniform)?,
        PatternName::Transpose => open(OpenPattern::Transpose)?,
        PatternName::Tornado => open(OpenPattern::Tornado)?,
        PatternName::Neighbor | PatternName::NearestNeighbor => open(OpenPattern::Neighbor)?,
        PatternName::GroupShift => open(OpenPattern::GroupShift { group_nodes: space.group_nodes().unwrap_or(1) })?,
        PatternName::Shift => {
            let axis = int_or(sec, "axis", 0, dims as i64 - 1, 0)? as usize;
            let len = lengths[axis] as i64;
            let hops = int_or(sec, "hops", 1, (len - 1).max(1), 1)? as u32;
            if len < 2 {
                return Err(sec.error(
                    "axis",
                    format!(
                        "axis {axis} has length {len}: a shift needs at least 2 nodes along it"
                    ),
                ));
            }
            open(OpenPattern::Shift { axis, hops })?
        }
        PatternName::HotRegion => {
            let origin = coords(sec, "region_origin", dims, Some(vec![0; dims]))?;
            let shape = coords(sec, "region_shape", dims, None)?;
            let hot_fraction = sec.float("hot_fraction", 0.0, 1.0)?.unwrap_or(0.25);
            open(OpenPattern::HotRegion {
                hot_fraction,
                origin,
                shape,
            })?
        }
        PatternName::HotSpot | PatternName::HotBurst => {
            let origin = coords(sec, "region_origin", dims, Some(vec![0; dims]))?;
            let shape = if name == PatternName::HotSpot {
                vec![1; dims]
            } else {
                coords(sec, "region_shape", dims, None)?
            };
            let packets = int_or(sec, "packets", 1, 1 << 24, 16)? as u32;
            Kind::Finite(FinitePattern::HotBurst {
                packets,
                origin,
                shape,
            })
        }
        PatternName::AllToAll => {
            let message_bytes = match (
                sec.size("message_bytes")?,
                sec.int("packets_per_pair", 1, 1 << 20)?,
            ) {
                (Some(_), Some(_)) => {
                    return Err(sec.error(
                        "packets_per_pair",
                        "give message_bytes or packets_per_pair, not both",
                    ))
                }
                (Some(m), None) => m as u64,
                (None, Some(k)) => k as u64 * payload.max(1),
                (None, None) => payload.max(1),
            };
            Kind::Finite(FinitePattern::AllToAll {
                message_bytes: message_bytes.max(1),
            })
        }
        PatternName::Trace => Kind::Finite(FinitePattern::Trace { packets: trace_rows(sec, space)? }),
        PatternName::LineFill | PatternName::PlaneFill => {
            let message_bytes = sec
                .size("message_bytes")?
                .unwrap_or(payload as f64)
                .max(1.0) as u64;
            let axis = |v: i64| v as usize;
            if name == PatternName::LineFill {
                let a = int_or(sec, "axis", 0, dims as i64 - 1, 0)?;
                Kind::Finite(FinitePattern::LineFill {
                    axis: axis(a),
                    message_bytes,
                })
            } else {
                let axes = match sec.int_list("axes", 0, dims as i64 - 1)? {
                    Some(v) if v.len() == 2 => [axis(v[0]), axis(v[1])],
                    Some(v) => {
                        return Err(sec.error(
                            "axes",
                            format!("expected two axis indices, found {}", v.len()),
                        ))
                    }
                    None => [0, 1],
                };
                Kind::Finite(FinitePattern::PlaneFill {
                    axes,
                    message_bytes,
                })
            }
        }
        PatternName::PingPong => {
            let hops = int_or(sec, "hops", 1, 1 << 20, 1)? as u32;
            let message_bytes = sec
                .size("message_bytes")?
                .unwrap_or(payload as f64)
                .max(1.0) as u64;
            let repetitions = int_or(sec, "repetitions", 1, 1 << 20, 4)? as u32;
            Kind::Finite(FinitePattern::PingPong {
                hops,
                message_bytes,
                repetitions,
            })
        }
    };
    let mut w = Workload::new(kind, PacketFormat::new(packet_bytes, header_bytes).with_chunk(router.chunk_bytes), space, seed)
        .map_err(|e| sec.error(e.key, e.message.clone()))?;
    if let Some(min) = sec.int("min_packet_bytes", 1, tofusim_workload::MAX_PACKET_BYTES as i64)? {
        if !matches!(w.kind, Kind::Open { .. }) {
            return Err(sec.error("min_packet_bytes", "expected only with open-loop patterns (uniform, hot-region, transpose, tornado, neighbor, shift, group-shift)"));
        }
        if min as u32 > packet_bytes || (min as u32) <= header_bytes {
            return Err(sec.error("min_packet_bytes", format!("expected more than header_bytes ({header_bytes}) and at most packet_bytes ({packet_bytes})")));
        }
        w.min_packet_bytes = Some(min as u32);
    }
    w.turn_cycles = int_or(sec, "turn_cycles", 0, 1 << 30, 0)? as u32;
    if sec.has("load") && !matches!(w.kind, Kind::Open { .. }) {
        // A finite pattern sends what it says as fast as it can: a load
        // would change nothing, so it is refused rather than ignored.
        return Err(sec.error("load", format!("applies to open-loop patterns; {pattern} is finite (it sends its packets as fast as the network takes them)")));
    }
    sec.finish(&["load", "packet_bytes", "header_bytes", "min_packet_bytes"])?;
    Ok(w)
}

/// Trace rows `[cycle, src, dst, bytes]` or `[cycle, src, dst, bytes,
/// hints]`, inline (`trace`) or from a CSV file (`trace_file`, relative to
/// the experiment file; a header line is skipped). Node ids are row-major,
/// axis 0 fastest; `hints` are software hint bits (bit `a`: axis `a`
/// travelled in the `−` direction).
fn trace_rows(sec: &Section, space: &NodeSpace) -> Result<Vec<TracePacket>> {
    let max_node = space.nodes() as i64 - 1;
    let rows: Vec<Vec<i64>> = match (
        sec.int_rows("trace", 4..=5, 0, i64::MAX / 4)?,
        sec.string("trace_file")?,
    ) {
        (Some(_), Some(_)) => {
            return Err(sec.error("trace_file", "give trace or trace_file, not both"))
        }
        (Some(r), None) => r,
        (None, Some(f)) => {
            let path = std::path::Path::new(sec.file())
                .parent()
                .unwrap_or(std::path::Path::new("."))
                .join(&f);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                sec.error(
                    "trace_file",
                    format!("cannot read {} ({e})", path.display()),
                )
            })?;
            let mut rows = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty()
                    || line.starts_with('#')
                    || (i == 0 && line.chars().next().is_some_and(|c| c.is_alphabetic()))
                {
                    continue;
                }
                let row: std::result::Result<Vec<i64>, _> =
                    line.split(',').map(|x| x.trim().parse::<i64>()).collect();
                match row {
                    Ok(r) if (4..=5).contains(&r.len()) && r.iter().all(|&x| x >= 0) => rows.push(r),
                    _ => return Err(sec.error("trace_file", format!("{}: line {}: expected cycle,src,dst,bytes[,hints] as non-negative integers", path.display(), i + 1))),
                }
            }
            rows
        }
        (None, None) => {
            return Err(sec.error(
                "trace",
                "missing; expected rows [cycle, src, dst, bytes] or trace_file",
            ))
        }
    };
    if rows.is_empty() {
        return Err(sec.error(
            if sec.has("trace") {
                "trace"
            } else {
                "trace_file"
            },
            "no packets; expected at least one row cycle,src,dst,bytes",
        ));
    }
    let hint_limit = (1i64 << space.axis_lengths().len().min(8)) - 1;
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            if r[1] > max_node || r[2] > max_node || r[3] > u16::MAX as i64 || r.get(4).is_some_and(|&h| h > hint_limit) {
                return Err(sec.error(&format!("trace[{i}]"), format!("expected node ids up to {max_node}, bytes up to {} and hint bits up to {hint_limit}", u16::MAX)));
            }
            Ok(TracePacket { cycle: r[0] as u64, src: r[1] as u32, dst: r[2] as u32, bytes: r[3] as u16, hints: r.get(4).map(|&h| h as u8) })
        })
        .collect()
}

/// Builds the engine of a validated experiment.
/// The memory a run of `exp` will need (`tofusim_packet::budget`), from
/// the built system before anything large is allocated.
pub fn memory_estimate(exp: &Experiment) -> tofusim_packet::budget::Footprint {
    use tofusim_packet::budget::estimate;
    let size = build::network_size(&exp.built.system.network.topology, Some(exp.built.ports));
    let smallest = exp.workload.min_packet_bytes.unwrap_or(exp.workload.packet_bytes);
    // Finite workloads make their packets as the FIFOs take them; an
    // open-loop backlog is guarded during the run (`max_live_packets`).
    estimate(size, &exp.router, &exp.run, smallest, 0)
}

/// The engine's work before a run, roughly: the packets it will carry
/// and their packet-hops (the hot loop's unit of work), from the workload
/// and the topology's mean distance. Closed-loop replies and corner turns
/// are not counted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkEstimate {
    pub packets: u64,
    pub packet_hops: u64,
}

/// Wall time per packet-hop assumed for the run-length estimate: the
/// packet engine's measured cost on this project's machine (BENCHMARKS.md:
/// 0.4 us in cache to 1.3 us at 32^3), rounded. A rough guide, not a limit.
pub const NS_PER_PACKET_HOP: f64 = 1000.0;

impl WorkEstimate {
    pub fn wall_seconds(&self) -> f64 {
        self.packet_hops as f64 * NS_PER_PACKET_HOP * 1e-9
    }
}

pub use tofusim_packet::budget::DEFAULT_MAX_MINUTES;

/// Mean packet-hops of one packet on `topology`, the ejection included.
pub fn mean_packet_hops(topology: &Topology) -> f64 {
    (match topology {
        Topology::Torus(t) | Topology::Tofu(t) => t.average_hops(),
        Topology::FatTree(f) => f.average_hops(),
        // Minimal routes cross local, global, local links: about 3.
        Topology::Dragonfly(_) => 3.0,
    }) + 1.0
}

pub fn work_estimate(exp: &Experiment) -> WorkEstimate {
    let w = &exp.workload;
    let hops = mean_packet_hops(&exp.built.system.network.topology);
    let nodes = (w.nodes() as usize).saturating_sub(exp.built.system.network.faults.nodes.len()) as f64;
    let packets = match (w.packets_per_cycle(exp.built.injection_links), exp.run.cycles) {
        (Some(rate), Some(cycles)) => rate * cycles as f64 * nodes,
        _ => {
            let lanes = w.lanes();
            let initial: u64 = (0..w.nodes()).flat_map(|n| (0..lanes).map(move |l| (n, l))).map(|(n, l)| w.initial_packets(n, l)).sum();
            (initial + w.trace().len() as u64) as f64
        }
    };
    WorkEstimate { packets: packets as u64, packet_hops: (packets * hops) as u64 }
}

/// Refuses a run whose estimated memory exceeds `limit_bytes` (default:
/// the memory this machine has available now), and sets the run's guard
/// on the packets alive at once (an open-loop backlog past saturation) to
/// what the rest of the limit holds.
pub fn check_memory(file: &str, exp: &mut Experiment, limit_bytes: Option<u64>) -> Result<tofusim_packet::budget::Footprint> {
    let f = memory_estimate(exp);
    let Some((limit, what)) = tofusim_packet::budget::limit(limit_bytes) else { return Ok(f) };
    if f.total() > limit {
        return Err(ConfigError::new(
            file,
            "memory",
            format!(
                "the run needs about {}, more than {what} ({}); use a smaller network, fewer cycles or a lower load, or allow more with --max-memory SIZE",
                f.describe(),
                tofusim_packet::budget::gib(limit)
            ),
        ));
    }
    exp.run.max_live_packets = Some(tofusim_packet::budget::live_packet_limit(&f, limit));
    Ok(f)
}

pub fn engine(exp: Experiment) -> Engine<Workload> {
    let routing = exp.built.routing(exp.router.escape);
    let (links, cycle_ns) = (exp.built.injection_links, exp.built.cycle_ns());
    let mut e = Engine::new(routing, exp.router, exp.mode, exp.run, exp.workload, links, cycle_ns);
    if let Some(f) = exp.faults {
        e.set_faults(f, exp.built.system.network.faults.nodes.len());
    }
    if let Some(le) = exp.link_errors {
        e.set_link_errors(le);
    }
    if let Some(s) = exp.fault_schedule {
        e.set_fault_events(s.events, s.resend_timeout_cycles);
    }
    e
}


/// The workload with the failed nodes silent, and the failures in the
/// routing's terms; refuses what the routing cannot avoid (fat-tree links,
/// a pair cut off) naming the failure and the routing.
fn with_faults(file: &str, built: &Built, router: &RouterParams, workload: Workload) -> Result<(Workload, Option<FaultMap>)> {
    let faults = &built.system.network.faults;
    if faults.is_empty() {
        return Ok((workload, None));
    }
    let key = "network.faults";
    let workload = workload
        .with_failed_nodes(&faults.nodes)
        .map_err(|e| ConfigError::new(file, &format!("workload.{}", e.key), e.message))?;
    let routing = built.routing(router.escape);
    // A detour hop leaves dimension order: the router must carry it
    // outside its escape network (router::select::detour_hop).
    let detour_ports = if router.dynamic_vcs > 0 { u64::MAX } else { 0 };
    let map = FaultMap::new(&routing, &built.failed_routers(), &faults.links, &faults.link_ports)
        .map_err(|m| ConfigError::of(file, key, m))?
        .with_detour_ports(detour_ports);
    crate::route_check::check_routes(file, key, &routing, &map, "")?;
    Ok((workload, Some(map)))
}

/// Parses, validates and runs an experiment.
pub fn run(file: &str, text: &str, progress: tofusim_packet::Progress) -> Result<(System, RunResult)> {
    let (system, r) = run_split(file, text, tofusim_packet::Split::serial(), progress)?;
    Ok((system, r.expect("an unsplit run has its result")))
}

/// [`run`] split over threads (and processes, with a transport); the
/// result is bit-identical to the unsplit run's, and comes back in
/// process 0 only.
pub fn run_split(file: &str, text: &str, split: tofusim_packet::Split, progress: tofusim_packet::Progress) -> Result<(System, Option<RunResult>)> {
    let mut exp = parse(file, text)?;
    check_memory(file, &mut exp, None)?;
    let system = exp.built.system.clone();
    let e = engine(exp);
    check_split(file, &e, &split)?;
    Ok((system, e.run_split(split, progress, |_| ()).map(|(r, _)| r)))
}

/// A split needs at least one router per partition.
pub fn check_split(file: &str, e: &Engine<Workload>, split: &tofusim_packet::Split) -> Result<()> {
    let (parts, routers) = (split.partitions(), e.routers());
    if parts > routers.min(tofusim_packet::MAX_PARTITIONS) {
        return Err(ConfigError::new(file, "threads", format!("{parts} partitions for {routers} routers: expected at most one partition per router (and at most {})", tofusim_packet::MAX_PARTITIONS)));
    }
    Ok(())
}
