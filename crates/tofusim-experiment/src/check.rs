//! `tofusim check`: the static deadlock check of a system or experiment
//! as the engine would run it — the routing of the one builder, the
//! router model's VC scheme with the `[router]` overrides, the routing
//! mode — through [`tofusim_routing::deadlock`], with every channel of a
//! dependency cycle named as the engine names routers, ports and VCs.

use std::ops::ControlFlow;
use std::time::Instant;

use serde::Serialize;
use tofusim_packet::{Escape, RouterParams, RoutingMode};
use tofusim_routing::deadlock::{self, EscapeVcs, Method, VcScheme, Verdict};
use tofusim_routing::{DragonflyMode, Routing};

use crate::error::{ConfigError, Result};
use crate::experiment::{self, Experiment};

/// Packet states the check may follow before it stops (about a minute at
/// the rates measured: docs/model.md); an estimate above it is refused
/// before anything is built.
pub const MAX_STATES: u64 = 400_000_000;

/// One channel of a cycle: the VC `vc` of the link out of `port` of
/// `router`, with the engine's names.
#[derive(Clone, Debug, Serialize)]
pub struct NamedChannel {
    pub router: u32,
    pub router_label: String,
    pub port: u8,
    pub port_name: String,
    pub vc: u32,
    pub vc_name: String,
}

/// The VC scheme checked, as the run file names it.
#[derive(Clone, Debug, Serialize)]
pub struct SchemeSummary {
    pub dynamic_vcs: u8,
    pub escape: Escape,
    pub adaptive: bool,
    pub virtual_output_queues: bool,
}

/// The check's result (`tofusim check --json`).
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub system: String,
    pub topology: &'static str,
    pub routing: String,
    pub vc_scheme: SchemeSummary,
    /// `deadlock-free`, `cycle` or `not-proven`.
    pub verdict: &'static str,
    /// How it was proved (deadlock-free only).
    pub method: Option<&'static str>,
    /// A dependency cycle, each channel waiting for the next and the last
    /// for the first (`cycle`; `not-proven`: the bubble ring left unproved).
    pub cycle: Vec<NamedChannel>,
    pub channels_used: usize,
    pub dependencies: usize,
    pub escape_channels_used: usize,
    pub escape_dependencies: usize,
    pub states: u64,
    pub estimated_states: u64,
    pub wall_seconds: f64,
}

impl CheckResult {
    /// Whether the network was proved free of deadlock.
    pub fn proved(&self) -> bool {
        self.verdict == "deadlock-free"
    }
}

/// The VC scheme of a router model in the routing layer's terms.
pub fn scheme_of(p: &RouterParams, mode: RoutingMode) -> VcScheme {
    let escape = match p.escape {
        Escape::Bubble => EscapeVcs::Bubble { full_charge: true },
        Escape::BubbleUnfixed | Escape::BubbleFullCounts => EscapeVcs::Bubble { full_charge: false },
        Escape::DatelineDimension | Escape::DatelineDirection => EscapeVcs::DatelinePair,
        Escape::HopClass => EscapeVcs::HopClass { class_vcs: p.class_vcs },
        Escape::None => EscapeVcs::None,
    };
    // Adaptive routing needs dynamic VCs (the engine routes a router
    // without them, the Tofu model's, deterministically).
    let adaptive = mode == RoutingMode::Adaptive && p.dynamic_vcs > 0;
    VcScheme { dynamic: p.dynamic_vcs, escape, adaptive, output_queues: p.virtual_output_queues }
}

/// The experiment text for a system named on the command line: the
/// preset's router, a routing mode if given (the system's default
/// otherwise), and a workload only so that the file parses.
pub fn system_text(system: &str, routing: Option<&str>) -> String {
    let mut doc = toml::Table::new();
    let mut net = toml::Table::new();
    net.insert("system".into(), system.into());
    doc.insert("network".into(), net.into());
    if let Some(r) = routing {
        let mut t = toml::Table::new();
        t.insert("algorithm".into(), r.into());
        doc.insert("routing".into(), t.into());
    }
    let mut w = toml::Table::new();
    w.insert("pattern".into(), "uniform".into());
    w.insert("load".into(), 0.1.into());
    doc.insert("workload".into(), w.into());
    let mut run = toml::Table::new();
    run.insert("cycles".into(), 1.into());
    doc.insert("run".into(), run.into());
    toml::to_string(&doc).expect("a table serialises")
}

/// `text` with `[routing] algorithm` set to `routing` (the `--routing`
/// option over an experiment file).
pub fn with_routing(file: &str, text: &str, routing: &str) -> Result<String> {
    let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError::new(file, "", format!("valid TOML: {}", e.message())))?;
    let table = doc.entry("routing").or_insert_with(|| toml::Table::new().into());
    let Some(t) = table.as_table_mut() else {
        return Err(ConfigError::new(file, "routing", "a table"));
    };
    t.insert("algorithm".into(), routing.into());
    Ok(toml::to_string(&doc).expect("a table serialises"))
}

/// The name of the routing the experiment runs.
fn routing_name(exp: &Experiment) -> String {
    if let Some((_, m)) = &exp.built.dragonfly {
        return DragonflyMode::NAMES.iter().find(|n| DragonflyMode::parse(n) == Some(*m)).unwrap_or(&"minimal").to_string();
    }
    if let Some((_, m)) = &exp.built.fattree {
        return m.name().to_string();
    }
    match exp.mode {
        RoutingMode::Adaptive => "adaptive".into(),
        RoutingMode::Deterministic => "dor".into(),
    }
}

/// Checks the experiment in `text` (its file name `file` for messages).
/// Refuses networks with failures (the check covers fault-free networks)
/// and checks estimated above [`MAX_STATES`].
pub fn check(file: &str, text: &str, progress: &mut dyn FnMut(u64, u64) -> ControlFlow<()>) -> Result<CheckResult> {
    let exp = experiment::parse(file, text)?;
    if exp.fault_schedule.is_some() {
        return Err(ConfigError::new(file, "faults", "a network without failures: the static check covers fault-free networks (failures during a run change the routes as it goes)"));
    }
    if exp.faults.is_some() {
        return Err(ConfigError::new(file, "network.faults", "a network without failures: the static check covers fault-free networks (routes around failures are chosen per packet at its source)"));
    }
    let scheme = scheme_of(&exp.router, exp.mode);
    let routing = exp.built.routing(exp.router.escape);
    // The check follows the routing's own route states and a trace's
    // software hint bits (routes the workload sets itself); a fill's
    // non-minimal routes are made per packet by the workload and are not
    // followed, so fills are refused.
    use tofusim_workload::{FinitePattern, Kind};
    let extra: Vec<(u32, u32, u8)> = match &exp.workload.kind {
        Kind::Finite(FinitePattern::LineFill { .. } | FinitePattern::PlaneFill { .. }) => {
            return Err(ConfigError::new(file, "workload.pattern", "a workload whose routes the check can follow: line and plane fills choose non-minimal routes per packet (check the network with pattern = \"uniform\")"));
        }
        Kind::Finite(FinitePattern::Trace { packets }) => {
            let npr = exp.router.nodes_per_router.max(1);
            packets.iter().filter_map(|p| p.hints.map(|h| (p.src / npr, p.dst / npr, h))).collect()
        }
        _ => Vec::new(),
    };
    let npl = exp.router.nodes_per_router.max(1);
    let too_large = |what: String| {
        ConfigError::new(
            file,
            "network",
            format!("a network the check can follow: {} has {} routers and {what}, above the limit of {MAX_STATES:.1e}; check a resized system of the same family (e.g. k:4x6x4, bgl:8x8x8)", exp.built.system.name, routing.routers()),
        )
    };
    let estimated = deadlock::work_estimate(&routing, &scheme, npl);
    if estimated > MAX_STATES {
        return Err(too_large(format!("about {estimated:.3e} packet states (every destination from every router)")));
    }
    let start = Instant::now();
    let report = deadlock::check(&routing, scheme, npl, MAX_STATES, &extra, progress).map_err(|e| match e {
        deadlock::CheckError::TooManyStates { .. } => too_large(e.to_string()),
        deadlock::CheckError::NoVcs | deadlock::CheckError::Stopped => ConfigError::new(file, "", e.to_string()),
    })?;
    let (verdict, method, cycle) = match report.verdict {
        Verdict::DeadlockFree(m) => ("deadlock-free", Some(m), Vec::new()),
        Verdict::Cycle(c) => ("cycle", None, c),
        Verdict::NotProven(c) => ("not-proven", None, c),
    };
    Ok(CheckResult {
        system: exp.built.system.name.clone(),
        topology: topology_name(&routing),
        routing: routing_name(&exp),
        vc_scheme: SchemeSummary {
            dynamic_vcs: exp.router.dynamic_vcs,
            escape: exp.router.escape,
            adaptive: scheme.adaptive,
            virtual_output_queues: scheme.output_queues,
        },
        verdict,
        method: method.map(Method::describe),
        cycle: cycle
            .into_iter()
            .map(|c| NamedChannel {
                router: c.router,
                router_label: routing.router_label(c.router),
                port: c.port,
                port_name: port_label(&routing, c.router, c.port),
                vc: c.vc,
                vc_name: scheme.vc_name(c.vc),
            })
            .collect(),
        channels_used: report.channels_used,
        dependencies: report.dependencies,
        escape_channels_used: report.escape_channels_used,
        escape_dependencies: report.escape_dependencies,
        states: report.states,
        estimated_states: estimated,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

fn topology_name(routing: &Routing) -> &'static str {
    match routing {
        Routing::Torus(_) => "torus",
        Routing::Dragonfly(_) => "dragonfly",
        Routing::FatTree(_) => "fattree",
    }
}

/// A port's exact name at its router (a fat-tree's port numbers mean up
/// at one level and down at another).
fn port_label(routing: &Routing, r: u32, p: u8) -> String {
    match routing {
        Routing::FatTree(f) => f.port_label(r, p),
        _ => routing.port_name(p),
    }
}
