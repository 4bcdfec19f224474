//! Barriers and one-element allreduces on the Tofu barrier interface
//! ([S:000], [S:001]): the signals are sent and combined by the TNIs'
//! barrier gates, not by the hosts.
//!
//! The schedule is the software algorithm the gates are wired as —
//! dissemination for a barrier, recursive doubling for an allreduce —
//! with every message offloaded (no host overhead on either side, TNI 0),
//! one barrier channel (BCH) write at the start and one gate (BG) firing
//! after every arriving signal, at the generation's logic delays. So a
//! rank's time is BCH + rounds × BG + the signals' network time, the
//! structure of [`crate::barrier_hw`]'s estimate, but with the signals
//! crossing the simulated network (its contention and hops) and the gates
//! wired along the communicator's ranks rather than the physical axes.

use super::{BuildError, Params};
use crate::schedule::{Action, Deps, Program, Schedule, Step, StepId};

/// The barrier interface's logic delays, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateTiming {
    /// A barrier channel: software writes it, its start/end gate answers.
    pub bch_ns: u32,
    /// One barrier gate firing.
    pub bg_ns: u32,
}

/// Checks that `params` allow the barrier interface for `count` elements.
pub(crate) fn check(params: &Params, count: u64) -> Result<GateTiming, BuildError> {
    let t = params.gates.ok_or_else(|| BuildError {
        key: "algo",
        message: "barrier-interface runs on a system with a barrier interface (the Tofu generations); this one has none".into(),
    })?;
    if count > 1 {
        return Err(BuildError {
            key: "algo",
            message: format!("barrier-interface reduces one 8-byte element; got {count} elements"),
        });
    }
    Ok(t)
}

/// `s` with its messages offloaded to the barrier gates.
pub(crate) fn offload(s: Schedule, t: GateTiming) -> Schedule {
    let programs = s.programs.into_iter().map(|p| offload_program(p, t)).collect();
    Schedule { programs, ..s }
}

fn offload_program(p: Program, t: GateTiming) -> Program {
    let mut steps: Vec<Step> = Vec::with_capacity(2 * p.steps.len() + 1);
    steps.push(Step { action: Action::Work { ns: t.bch_ns }, deps: Deps::default() });
    let bch: StepId = 0;
    // Old step -> the new step after which it is done (a receive: its gate).
    let mut done: Vec<StepId> = Vec::with_capacity(p.steps.len());
    for step in p.steps {
        let deps: Vec<StepId> = if step.deps.is_empty() { vec![bch] } else { step.deps.iter().map(|&d| done[d as usize]).collect() };
        let action = match step.action {
            Action::Send { peer, spans, pace, tag, .. } => Action::Send { peer, spans, tni: 0, pace, offload: true, tag },
            Action::Recv { peer, spans, combine, tag, .. } => Action::Recv { peer, spans, combine, offload: true, tag },
            other => other,
        };
        let is_recv = matches!(action, Action::Recv { .. });
        steps.push(Step { action, deps: Deps::from_slice(&deps) });
        let id = (steps.len() - 1) as StepId;
        if is_recv {
            steps.push(Step { action: Action::Work { ns: t.bg_ns }, deps: Deps::from_slice(&[id]) });
        }
        done.push((steps.len() - 1) as StepId);
    }
    Program { steps }
}
