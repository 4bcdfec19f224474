//! A collective written as data (`tofusim coll --schedule FILE`,
//! `tofusim.Schedule` in Python) run like a built-in one: on the packet
//! engine or the flow model, and on real buffers with `verify`. The
//! schedule is read and checked by `tofusim_comm::Schedule::from_json`.

use std::sync::Arc;

use tofusim_comm::exec::data;
use tofusim_comm::Schedule;

use crate::collective::{run_on, CollectiveResult, Model, RunSummary, ScheduleOptions, Settings, StepTimes, FlowSummary, MAX_STEP_TIMES};
use crate::comm_model::Modes;
use crate::error::{ConfigError, Result};
use crate::rank_placement::Ranks;


/// A schedule given as data, and how to run it.
#[derive(Clone, Debug)]
pub struct GivenRun {
    pub schedule: Arc<Schedule>,
    /// The name it gives itself (the result's `algo`).
    pub name: String,
    pub system: String,
    pub ranks: Ranks,
    pub modes: Modes,
    pub verify: bool,
    pub seed: u64,
    /// The packet engine, or the flow model event by event.
    pub model: Model,
    pub max_minutes: Option<f64>,
    /// Per-port counters sampled every this many cycles (packet engine; 0: none).
    pub counter_cycles: u64,
    /// Keep every step's finish cycle (packet engine).
    pub steps: bool,
}

impl GivenRun {
    /// The request as the Python API hands it over (JSON: `schedule`, the
    /// schedule's JSON text, then system, ppn, placement or rank_map,
    /// verify, seed, model, max_minutes, counter_cycles, steps).
    pub fn from_json(spec: &str) -> Result<GivenRun> {
        let v = crate::request_json::Fields::parse(spec)?;
        let source = v.get("schedule_source").and_then(|x| x.as_str()).unwrap_or("<schedule>").to_string();
        let text = v.text("schedule");
        let chakra: Vec<String> = match v.get("chakra_files") {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(serde_json::Value::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_string)).collect::<Option<_>>().ok_or_else(|| ConfigError::argument("chakra_files", "expected the ranks' file paths, rank 0 first"))?,
            Some(_) => return Err(ConfigError::argument("chakra_files", "expected a list of paths")),
        };
        let (schedule, name) = if !chakra.is_empty() {
            let files = chakra.iter().map(|p| std::fs::read(p).map_err(|e| ConfigError::new(p, "", format!("a Chakra execution trace file: {e}")))).collect::<Result<Vec<_>>>()?;
            // Collective nodes run the algorithm the system's MPI library
            // picks for them (over a communicator with no torus shape and
            // without the barrier interface: the files say neither).
            let library = crate::system::from_name(&v.text("system")).map(|sys| sys.generation.mpi_library()).unwrap_or(tofusim_comm::library::Library::Openmpi);
            let choose = |op: tofusim_comm::Operation, bytes: u64, ranks: u32| {
                let comm = tofusim_comm::library::Communicator::on_grid(ranks, None, false);
                library.choose(op.name(), bytes, comm).and_then(|c| tofusim_comm::Algorithm::named(c.algorithm)).unwrap_or(tofusim_comm::Algorithm::of(op)[0])
            };
            let s = tofusim_comm::chakra::from_chakra(&files, &choose).map_err(|e| ConfigError::new(&source, e.key, e.message))?;
            (s, "chakra".to_string())
        } else if is_goal(&text) {
            // A GOAL file's `nic` stays as written; a TNI beyond the node's
            // wraps around when it runs.
            let s = tofusim_comm::goal::from_goal(&text, u8::MAX).map_err(|e| ConfigError::new(&source, e.key, e.message))?;
            (s, "goal".to_string())
        } else {
            Schedule::from_json(&text).map_err(|e| ConfigError::new(&source, e.key, e.message))?
        };
        let model = match v.text("model").as_str() {
            "" | "packet" => Model::Packet,
            "flow" | "flow-events" => Model::FlowEvents,
            m => return Err(ConfigError::argument("--model", format!("`{m}`: a given schedule runs on packet or flow (its steps, event by event; it has no rounds form)"))),
        };
        Ok(GivenRun {
            schedule: Arc::new(schedule),
            name,
            system: v.text("system"),
            ranks: v.ranks()?,
            modes: Modes::default(),
            verify: v.flag("verify"),
            seed: v.whole("seed", 1)?,
            model,
            max_minutes: v.max_minutes()?,
            counter_cycles: v.whole("counter_cycles", 0)?,
            steps: v.flag("steps"),
        })
    }
}

/// Whether `text` is a GOAL schedule (its first word, comments aside, is
/// `num_ranks`) rather than a schedule's JSON.
fn is_goal(text: &str) -> bool {
    text.lines().map(|l| l.split("//").next().unwrap_or("").trim()).find(|l| !l.is_empty()).is_some_and(|l| l.starts_with("num_ranks"))
}

/// A schedule given as JSON (`Schedule::from_json`'s form), written as
/// GOAL text for `system`: its copies and summing receives become `calc`
/// at the system's host rates (`tofusim_comm::goal::to_goal`).
pub fn goal_text(schedule_json: &str, system: &str, source: &str) -> Result<String> {
    let (s, rates) = schedule_for(schedule_json, system, source)?;
    tofusim_comm::goal::to_goal(&s, rates).map_err(|e| ConfigError::new(source, e.key, e.message))
}

/// The host rates a schedule's copies and reductions take on `system`,
/// for the formats that write them as computation (GOAL, Chakra).
pub fn local_rates(model: &crate::comm_model::CommModel) -> tofusim_comm::goal::LocalRates {
    let timing = model.host_timing(&Modes::default());
    let per_ns = |per_cycle: f64| per_cycle / timing.cycle_ns;
    tofusim_comm::goal::LocalRates { copy_bytes_per_ns: per_ns(timing.copy_bytes_per_cycle), reduce_bytes_per_ns: per_ns(timing.reduce_bytes_per_cycle) }
}

/// A schedule given as JSON (`source` in errors), and `system`'s host
/// rates for the formats that write copies and sums as computation.
fn schedule_for(schedule_json: &str, system: &str, source: &str) -> Result<(Schedule, tofusim_comm::goal::LocalRates)> {
    let (s, _) = Schedule::from_json(schedule_json).map_err(|e| ConfigError::new(source, e.key, e.message))?;
    let sys = crate::system::from_name(system)?;
    Ok((s, local_rates(&crate::comm_model::CommModel::for_system(&sys, None))))
}

/// A schedule given as JSON written as Chakra files for `system`, one per
/// rank (`tofusim_comm::chakra::to_chakra`).
pub fn chakra_files(schedule_json: &str, system: &str, source: &str) -> Result<Vec<Vec<u8>>> {
    let (s, rates) = schedule_for(schedule_json, system, source)?;
    tofusim_comm::chakra::to_chakra(&s, rates).map_err(|e| ConfigError::new(source, e.key, e.message))
}

/// Runs a given schedule on its system's first `ranks` placed ranks.
pub fn run(g: &GivenRun, progress: tofusim_packet::Progress) -> Result<CollectiveResult> {
    let wall = std::time::Instant::now();
    if g.counter_cycles > 0 && g.model != Model::Packet {
        return Err(ConfigError::argument("counter-period", "samples the packet engine's counters: use the packet model"));
    }
    let s = &g.schedule;
    let mut setup = g.ranks.place(crate::build::checked_setup(&g.system, g.ranks.per_node, "a given schedule")?)?;
    if (setup.node_of_rank.len() as u64) < s.ranks as u64 {
        return Err(ConfigError::argument(
            "system",
            format!("the schedule has {} ranks and {} places {} ({} per node); give a larger shape or more --ppn", s.ranks, g.system, setup.node_of_rank.len(), g.ranks.per_node),
        ));
    }
    setup.node_of_rank.truncate(s.ranks as usize);
    setup.max_minutes = g.max_minutes;
    // Checking the data holds every rank's buffer (and its expected result).
    let verify_bytes = (s.ranks as u64).saturating_mul(s.buffer_elements).saturating_mul(3 * tofusim_comm::ELEMENT_BYTES);
    if g.verify {
        if let Some((limit, what)) = tofusim_packet::budget::limit(None) {
            if verify_bytes > limit {
                return Err(ConfigError::argument(
                    "verify",
                    format!("checking the data holds every rank's buffer, about {}, more than {what} ({}); verify a smaller schedule", tofusim_packet::budget::gib(verify_bytes), tofusim_packet::budget::gib(limit)),
                ));
            }
        }
    }
    let tnis_used = s.tnis_used();
    let settings = Settings {
        algorithm: "given (--schedule)".into(),
        segment_bytes: 0,
        segment: "given by the schedule (its messages' sizes)".into(),
        tnis: tnis_used,
        tnis_reason: format!("given by the schedule; a TNI beyond the node's {} wraps around", setup.built.model.tnis.max(1)),
    };
    let node_of_rank = setup.node_of_rank.clone();
    let (time_seconds, run, flow, finish) = match g.model {
        Model::Packet => {
            let opts = ScheduleOptions { modes: g.modes, seed: g.seed, counter_cycles: g.counter_cycles };
            let keep = g.steps && s.programs.iter().map(|p| p.steps.len() as u64).sum::<u64>() <= MAX_STEP_TIMES;
            let (t, finish) = run_on(setup, Schedule::clone(s), &opts, progress, |run| keep.then(|| run.step_finish_cycles()))?;
            (t.time_seconds, Some(t.run), None, finish)
        }
        Model::Flow | Model::FlowEvents | Model::FlowRounds => {
            let mut ask = || progress(0.0).is_break();
            let interrupt = tofusim_flow::Interrupt::new(&mut ask);
            let time = crate::flow_model::schedule_time(&setup, s, &g.modes, g.seed, &interrupt);
            let interrupted = time.is_err() && interrupt.stopped();
            let time = if interrupted { 0.0 } else { time? };
            let flow = FlowSummary { wall_seconds: wall.elapsed().as_secs_f64(), peak_memory_bytes: tofusim_packet::result::peak_memory_bytes(), rounds: None, interrupted };
            (time, None, Some(flow), None)
        }
    };
    let stopped = run.as_ref().is_some_and(|r| r.interrupted) || flow.as_ref().is_some_and(|f| f.interrupted);
    let (verified, verify_error) = if !g.verify || stopped {
        (None, None)
    } else {
        match data::execute_until(s, data::Order::Fifo, &mut || progress(1.0).is_break()) {
            Ok(_) => (Some(true), None),
            Err(e @ data::DataError::Interrupted { .. }) => (None, Some(e.to_string())),
            Err(e) => (Some(false), Some(e.to_string())),
        }
    };
    Ok(result(g, s, settings, node_of_rank, time_seconds, verified, verify_error, run, flow, finish))
}

#[allow(clippy::too_many_arguments)]
fn result(
    g: &GivenRun,
    s: &Schedule,
    settings: Settings,
    node_of_rank: Vec<u32>,
    time_seconds: f64,
    verified: Option<bool>,
    verify_error: Option<String>,
    run: Option<RunSummary>,
    flow: Option<FlowSummary>,
    finish: Option<Vec<Vec<u64>>>,
) -> CollectiveResult {
    use tofusim_comm::Collective;
    let size_bytes = s.count * tofusim_comm::ELEMENT_BYTES;
    let moved = match s.collective {
        Collective::Allgather | Collective::Alltoall => size_bytes * s.ranks as u64,
        _ => size_bytes,
    };
    let steps = s.programs.iter().map(|p| p.steps.len() as u64).sum::<u64>();
    CollectiveResult {
        complete: run.as_ref().is_none_or(|r| r.complete && !r.interrupted) && flow.as_ref().is_none_or(|f| !f.interrupted),
        model: g.model,
        op: s.collective.name().to_string(),
        algo: g.name.clone(),
        size_bytes,
        processes: s.ranks,
        ranks_per_node: g.ranks.per_node,
        placement: g.ranks.placement.name(),
        node_leaders: false,
        system: g.system.clone(),
        communicator_shape: None,
        time_seconds,
        bandwidth_Bps: if time_seconds > 0.0 && !matches!(s.collective, Collective::Barrier) { moved as f64 / time_seconds } else { 0.0 },
        verified,
        verify_error,
        fallback: s.fallback.clone(),
        messages: s.messages(),
        bytes_sent: s.bytes_sent(),
        tnis_used: s.tnis_used(),
        settings,
        run,
        flow,
        steps: finish.map(|f| StepTimes::new(s, &node_of_rank, &f)),
        steps_omitted: (g.steps && g.model == Model::Packet && steps > MAX_STEP_TIMES).then_some(steps),
        trees: None,
        communicators: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: f64) -> std::ops::ControlFlow<()> {
        std::ops::ControlFlow::Continue(())
    }

    #[test]
    fn a_built_schedule_read_back_as_data_runs_the_same() {
        let built = crate::collective::run_schedule(
            "bgl:2x2x2",
            &ScheduleOptions::default(),
            |ranks, grid, tnis| {
                let mut p = tofusim_comm::Params::new(ranks, 0);
                p.grid = grid;
                p.tnis = tnis;
                Ok(tofusim_comm::algorithms::build_named("allreduce", "ring", 0, 8192, p).unwrap())
            },
            &mut never,
        )
        .unwrap();
        let text = serde_json::to_string(built.schedule.as_ref()).unwrap();
        let spec = serde_json::json!({"schedule": text, "system": "bgl:2x2x2", "verify": true}).to_string();
        let g = GivenRun::from_json(&spec).unwrap();
        assert_eq!(g.name, "ring");
        let r = run(&g, &mut never).unwrap();
        assert_eq!(r.run.as_ref().unwrap().cycles, built.cycles, "the same schedule, the same time");
        assert_eq!(r.verified, Some(true));
    }

    #[test]
    fn a_broken_schedule_is_refused_naming_what_is_wrong() {
        let bad = |schedule: &str| GivenRun::from_json(&serde_json::json!({"schedule": schedule, "system": "bgl:2x2x2"}).to_string()).err().unwrap().to_string();
        let e = bad(r#"{"collective": {"op": "allreduce"}, "ranks": 2, "count": 4, "programs": [{"steps": [{"action": {"kind": "send", "peer": 1, "spans": [{"offset": 0, "len": 4}], "tni": 0, "pace": 1}}]}, {"steps": []}]}"#);
        assert!(e.contains("schedule") && e.contains("sends nothing") || e.contains("receives"), "{e}");
        let e = bad(r#"{"collective": {"op": "allreduce"}, "ranks": 2, "count": 4, "programs": []}"#);
        assert!(e.contains("0 programs for 2 ranks"), "{e}");
        let e = bad(r#"{"collective": {"op": "nope"}, "ranks": 2, "count": 4, "programs": []}"#);
        assert!(e.contains("not a schedule"), "{e}");
    }
}
