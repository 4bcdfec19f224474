//! The front door of `tofusim run` (and of `tofusim.run` in Python, and of
//! a sweep's points): a typed request, checked once — the experiment
//! parsed and built once, the model and threads checked, the memory and
//! the time estimated and held against their limits — then run, and one
//! result JSON whatever door the request came through.
//!
//! Two steps, so a caller can announce a long run between them:
//! [`prepare`] (every refusal but one) and [`PreparedRun::run`], which
//! refuses only a split into more partitions than the network has routers
//! (the partitions are the threads times the processes of an MPI run,
//! whose transport the caller makes after preparing).

use serde::Serialize;
use serde_json::Value;
use tofusim_packet::config::{RouterParams, RunParams};
use tofusim_packet::result::{CounterSamples, RunResult};
use tofusim_packet::engine::FaultEvent;
use tofusim_packet::{Split, Transport};

use crate::error::{ConfigError, Result};
use crate::experiment::{self, Experiment, WorkEstimate, NS_PER_PACKET_HOP};
use crate::flow_run::FlowRunResult;

/// Threads a run may split over (`--threads`).
pub const MAX_THREADS: i64 = 4096;

/// Runs estimated to take longer than this, seconds, are announced
/// ([`PreparedRun::notice`]) before they start.
pub const LONG_RUN_SECONDS: f64 = 60.0;

/// The model a run's workload runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunModel {
    /// The packet engine.
    Packet,
    /// Max-min fair bandwidth sharing, one thread (`crate::flow_run`).
    Flow,
}

impl RunModel {
    pub fn parse(model: &str) -> Result<Self> {
        match model {
            "packet" => Ok(RunModel::Packet),
            "flow" => Ok(RunModel::Flow),
            m => Err(ConfigError::argument("--model", format!("unknown model `{m}`; expected packet or flow"))),
        }
    }
}

/// A `tofusim run` request.
pub struct RunRequest<'a> {
    /// The experiment's TOML, named `file` in errors.
    pub text: &'a str,
    pub file: &'a str,
    pub model: RunModel,
    /// Partitions on threads (packet engine), 1 to [`MAX_THREADS`].
    pub threads: i64,
    /// This process is one of an MPI run (every process calls alike): the
    /// machine's memory, which differs between hosts, is then no limit;
    /// only `max_memory_bytes` is.
    pub across_processes: bool,
    /// The memory the run may take; `None`: the memory available.
    pub max_memory_bytes: Option<u64>,
    /// The time budget by the run's own estimate, minutes; `None`: none.
    pub max_minutes: Option<f64>,
}

/// A checked request, ready to run.
pub struct PreparedRun {
    file: String,
    exp: Experiment,
    model: RunModel,
    threads: usize,
    /// What the result's `setup` says was run.
    setup: Setup,
    estimated_memory_bytes: u64,
    /// The packet engine's estimate of its work (`None` on the flow model).
    work: Option<WorkEstimate>,
}

/// What a run gives: its JSON (with `setup` and the estimates), and the
/// counter samples, whose rows the JSON counts but does not carry.
pub struct RunOutput {
    pub json: Value,
    pub counter_samples: Option<CounterSamples>,
    /// Ctrl-C stopped it (the result holds what was measured).
    pub interrupted: bool,
}

/// The experiment as run: `setup` in a run's result.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Setup {
    pub system: String,
    /// The router as run (docs/experiment.md, `[router]`).
    pub router: RouterParams,
    /// The routing as run: a dragonfly's or fat-tree's algorithm by name
    /// (their engine mode is "deterministic" whatever the algorithm).
    pub routing: String,
    /// The `[run]` table as run.
    pub run: RunParams,
    /// The workload as the engine took it (its kind, then its keys).
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub workload: tofusim_workload::Kind,
    pub packet_bytes: u32,
    pub header_bytes: u32,
    /// Links a node injects on at once (its injection bandwidth in link rates).
    pub injection_links: f64,
    /// Length of one network cycle (a byte time of the reference link), ns.
    pub cycle_ns: f64,
    /// Router and link latency of a hop (the router's `hop_latency_cycles`), ns.
    pub hop_latency_ns: f64,
    /// A token's return to the sender, ns.
    pub token_latency_ns: f64,
    pub nodes: u32,
    /// Failed nodes (ids) and links (router pairs) the run routed around.
    pub faults: tofusim_topology::Faults,
    /// Failures and recoveries during the run (router ids and ports).
    pub fault_events: Option<Vec<FaultEvent>>,
}

impl Setup {
    /// What the result's `setup` records of `exp`.
    pub fn of(exp: &Experiment) -> Setup {
        let routing = match (&exp.built.dragonfly, &exp.built.fattree) {
            (Some((_, m)), _) => m.name().to_string(),
            (_, Some((_, m))) => m.name().to_string(),
            _ => serde_json::to_value(exp.mode).ok().and_then(|v| v.as_str().map(str::to_string)).expect("a mode serialises as its name"),
        };
        let cycle_ns = exp.built.cycle_ns();
        Setup {
            system: exp.built.system.name.clone(),
            router: exp.router.clone(),
            routing,
            run: exp.run.clone(),
            workload: exp.workload.kind.clone(),
            packet_bytes: exp.workload.packet_bytes,
            header_bytes: exp.workload.header_bytes,
            injection_links: exp.built.injection_links,
            cycle_ns,
            hop_latency_ns: exp.router.hop_latency_cycles as f64 * cycle_ns,
            token_latency_ns: exp.router.token_latency_cycles as f64 * cycle_ns,
            nodes: exp.workload.nodes(),
            faults: exp.built.system.network.faults.clone(),
            fault_events: exp.fault_schedule.as_ref().map(|s| s.events.clone()),
        }
    }
}

/// A packet-engine run's result: the engine's, with the setup.
#[derive(Serialize, schemars::JsonSchema)]
pub struct PacketRunReport<'a> {
    #[serde(flatten)]
    pub result: &'a RunResult,
    pub setup: &'a Setup,
}

/// A flow-model run's result, with the setup.
#[derive(Serialize, schemars::JsonSchema)]
pub struct FlowRunReport<'a> {
    #[serde(flatten)]
    pub result: &'a FlowRunResult,
    pub setup: &'a Setup,
}

/// Checks `req` and builds what it runs; every refusal but the split's
/// happens here.
pub fn prepare(req: &RunRequest<'_>) -> Result<PreparedRun> {
    let mut exp = experiment::parse(req.file, req.text)?;
    if !(1..=MAX_THREADS).contains(&req.threads) {
        return Err(ConfigError::argument("--threads", format!("expected 1 to {MAX_THREADS}, found {}", req.threads)));
    }
    let threads = req.threads as usize;
    let setup = Setup::of(&exp);
    if req.model == RunModel::Flow {
        if threads > 1 || req.across_processes {
            return Err(ConfigError::named("<command line>: --threads and --mpi split the packet engine; the flow model runs on one thread"));
        }
        let estimated_memory_bytes = crate::flow_run::check_memory(req.file, &exp, req.max_memory_bytes)?;
        return Ok(PreparedRun { file: req.file.to_string(), exp, model: req.model, threads, setup, estimated_memory_bytes, work: None });
    }
    let footprint = if req.across_processes && req.max_memory_bytes.is_none() {
        experiment::memory_estimate(&exp)
    } else {
        experiment::check_memory(req.file, &mut exp, req.max_memory_bytes)?
    };
    // A run whose own estimate exceeds the time budget is refused before
    // it starts (it would otherwise be announced and then run for years).
    let work = experiment::work_estimate(&exp);
    let budget = req.max_minutes.unwrap_or(f64::INFINITY);
    if work.wall_seconds() / 60.0 > budget {
        return Err(ConfigError::new(
            req.file,
            "run",
            format!(
                "about {:.2e} packet-hops, roughly {:.3e} minutes at the engine's usual {:.1} us per hop: over the {budget:.0}-minute budget; \
                 shorten the run (run.cycles, the load, the system) or raise the budget (--max-time 1d, or none)",
                work.packet_hops as f64,
                work.wall_seconds() / 60.0,
                NS_PER_PACKET_HOP / 1000.0
            ),
        ));
    }
    Ok(PreparedRun { file: req.file.to_string(), exp, model: req.model, threads, setup, estimated_memory_bytes: footprint.total(), work: Some(work) })
}

impl PreparedRun {
    /// The announcement of a long run (over [`LONG_RUN_SECONDS`] by its
    /// estimate), with the way to stop it; `None` for a short one.
    pub fn notice(&self) -> Option<String> {
        let w = self.work.as_ref()?;
        (w.wall_seconds() > LONG_RUN_SECONDS).then(|| {
            format!(
                "about {:.2e} packet-hops to simulate: roughly {:.0} minutes at the engine's usual {:.1} us per hop (Ctrl-C stops it and prints what was measured)",
                w.packet_hops as f64,
                w.wall_seconds() / 60.0,
                NS_PER_PACKET_HOP / 1000.0
            )
        })
    }

    /// Runs it; `transport` makes this process one of an MPI run (only
    /// process 0 gets the result: the others `None`); `ports` keeps the
    /// per-port counters in the JSON.
    pub fn run(self, transport: Option<Box<dyn Transport>>, ports: bool, progress: tofusim_packet::Progress) -> Result<Option<RunOutput>> {
        let PreparedRun { file, exp, model, threads, setup, estimated_memory_bytes, work } = self;
        if model == RunModel::Flow {
            let mut r = crate::flow_run::run(&file, &exp, progress)?;
            let interrupted = r.interrupted;
            r.sim.estimated_memory_bytes = Some(estimated_memory_bytes);
            let v = serde_json::to_value(FlowRunReport { result: &r, setup: &setup }).expect("results serialise");
            return Ok(Some(RunOutput { json: v, counter_samples: None, interrupted }));
        }
        let engine = experiment::engine(exp);
        let split = Split { threads, transport };
        experiment::check_split(&file, &engine, &split)?;
        let Some((mut result, ())) = engine.run_split(split, progress, |_| ()) else { return Ok(None) };
        if !ports {
            result.ports.clear();
        }
        let interrupted = result.interrupted;
        // The JSON first: it counts the sample rows, which then go to the caller.
        result.sim.estimated_memory_bytes = Some(estimated_memory_bytes);
        result.sim.estimated_packet_hops = Some(work.map_or(0, |w| w.packet_hops));
        let v = serde_json::to_value(PacketRunReport { result: &result, setup: &setup }).expect("results serialise");
        Ok(Some(RunOutput { json: v, counter_samples: Some(std::mem::take(&mut result.counter_samples)), interrupted }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) const SMALL: &str = "[network]\nsystem = \"bgl:4x4x4\"\n[workload]\npattern = \"uniform\"\nload = 0.05\n[run]\ncycles = 3000\nwarmup = 500\n";

    fn request(model: RunModel, threads: i64) -> RunRequest<'static> {
        RunRequest { text: SMALL, file: "small.toml", model, threads, across_processes: false, max_memory_bytes: None, max_minutes: Some(60.0) }
    }

    #[test]
    fn the_refusals_happen_before_the_run() {
        assert_eq!(RunModel::parse("fluid").unwrap_err().key, "--model");
        let e = prepare(&request(RunModel::Packet, 0)).err().expect("refused");
        assert_eq!(e.key, "--threads");
        let e = prepare(&request(RunModel::Flow, 2)).err().expect("refused");
        assert!(e.to_string().contains("the flow model runs on one thread"), "{e}");
        let mut tiny = request(RunModel::Packet, 1);
        tiny.max_minutes = Some(1e-9);
        assert_eq!(prepare(&tiny).err().expect("over budget").key, "run");
    }

    #[test]
    fn both_models_give_one_result_shape() {
        for model in [RunModel::Packet, RunModel::Flow] {
            let p = prepare(&request(model, 1)).unwrap();
            assert!(p.notice().is_none(), "a short run is not announced");
            let out = p.run(None, false, &mut |_| std::ops::ControlFlow::Continue(())).unwrap().expect("one process");
            assert_eq!(out.json["setup"]["system"], "bgl:4x4x4", "{model:?}");
            assert!(out.json["sim"]["estimated_memory_bytes"].as_u64().unwrap() > 0, "{model:?}");
            assert!(!out.interrupted);
            assert_eq!(out.counter_samples.is_some(), model == RunModel::Packet);
        }
    }
}

#[cfg(test)]
mod series_tests {
    use super::*;

    #[test]
    fn a_long_runs_time_series_stays_bounded() {
        let long = super::tests::SMALL.replace("cycles = 3000", "cycles = 1000000000");
        let req = RunRequest { text: &long, file: "long.toml", model: RunModel::Packet, threads: 1, across_processes: false, max_memory_bytes: None, max_minutes: None };
        // The default window lengthens: 10^9 / 10^5 cycles.
        assert!(prepare(&req).is_ok());
        let fine = long.replace("[run]\n", "[run]\nsample_cycles = 10\n");
        let req = RunRequest { text: &fine, ..req };
        assert_eq!(prepare(&req).err().expect("refused").key, "run.sample_cycles");
    }
}
