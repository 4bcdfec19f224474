//! A recorded MPI program as one schedule (issue 20): every rank's calls
//! in order, with MPI semantics, so every executor of a schedule (packet
//! engine, flow model) replays it.
//!
//! The program comes matched (`tofusim.trace.replay` reads the trace):
//! each message is one entry of [`ReplayProgram::messages`] and appears
//! once in its sender's calls and once in its receiver's; each collective
//! instance is one entry of [`ReplayProgram::collectives`] and appears in
//! each member's calls. Writing it out:
//!
//! - **compute** between calls is a `Work` step of its (scaled) duration;
//! - a **message** goes through the MPI layer ([`crate::mpi::Message`]):
//!   eager (the sender's software, the put, the receiver's copy out of its
//!   eager buffer) or rendezvous (request, clear-to-send, the data), with
//!   the buffer mode of the sender's exchange count with that peer; a
//!   buffered send is always eager, a synchronous one always rendezvous
//!   ([`SendMode`]). The
//!   sender's steps are written when its program reaches the send, the
//!   receiver's when its program reaches the receive; their messages match
//!   by a tag of their own, so the order in which the two sides post them
//!   (MPI's matching by communicator, source and tag) needs no reordering;
//! - a **blocking** call waits for its completion; a **non-blocking** one
//!   returns after its software, and a later **wait** joins the requests it
//!   completes (a test that completed requests is a wait for them);
//! - a **collective** is the schedule of its algorithm over the members,
//!   written into each member's program where the member calls it, its
//!   messages tagged per instance.
//!
//! What is not modelled: the time of a failed test or of a wait beyond the
//! requests it completes (the replay derives waiting), MPI's internal
//! progress of non-blocking transfers while the host computes (the
//! network moves them; the protocol's software steps wait for the host's
//! program order only at the call), unexpected-message copies beyond the
//! eager copy.

use serde::Deserialize;

use crate::algorithms::{build_named, Params};
use crate::mpi::{BufferMode, Layout, Message, MpiConfig};
use crate::schedule::{Action, Rank, Schedule, StepId};
use crate::{Collective, ELEMENT_BYTES};

/// One call's effect in a rank's program.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Compute between calls, ns (before any scaling).
    Compute(u64),
    /// Send message `msg`; `request` set for a non-blocking send.
    Send { msg: u32, request: Option<u64> },
    /// Receive message `msg`; `request` set for a non-blocking receive.
    Recv { msg: u32, request: Option<u64> },
    /// Wait until these requests are complete.
    Wait(Vec<u64>),
    /// Take part in collective instance `k`.
    Collective(u32),
}

/// MPI's send modes, as far as the protocol goes.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SendMode {
    /// `MPI_Send`, `Isend`, `Rsend`, `Sendrecv`: eager up to the eager
    /// limit, rendezvous above.
    #[default]
    Standard,
    /// `MPI_Bsend`, `Ibsend`: copied to the attached buffer, complete at
    /// once whatever the size (eager).
    Buffered,
    /// `MPI_Ssend`, `Issend`: complete only once the receiver has matched
    /// it (rendezvous whatever the size).
    Synchronous,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ReplayMessage {
    pub src: Rank,
    pub dst: Rank,
    pub bytes: u64,
    #[serde(default)]
    pub mode: SendMode,
}

impl ReplayMessage {
    fn eager(&self) -> Option<bool> {
        match self.mode {
            SendMode::Standard => None,
            SendMode::Buffered => Some(true),
            SendMode::Synchronous => Some(false),
        }
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ReplayCollective {
    /// tofusim's operation name (barrier, bcast, reduce, allreduce,
    /// allgather, alltoall; or one of [`crate::mpi_collectives::OPERATIONS`])
    /// and algorithm.
    pub op: String,
    pub algorithm: String,
    /// World ranks, in communicator order.
    pub members: Vec<Rank>,
    /// Root within the communicator.
    #[serde(default)]
    pub root: Rank,
    pub size_bytes: u64,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ReplayProgram {
    pub ranks: u32,
    pub messages: Vec<ReplayMessage>,
    pub collectives: Vec<ReplayCollective>,
    pub programs: Vec<Vec<Op>>,
}

/// What a replay's schedule needs beyond the program.
#[derive(Clone, Debug)]
pub struct ReplayParams {
    pub mpi: MpiConfig,
    /// Compute bursts are multiplied by this (a faster or slower core).
    pub compute_scale: f64,
    /// Network interfaces per node a collective algorithm may use.
    pub tnis: u8,
    pub segment_bytes: u64,
    /// Each rank's node, when a collective whose members share nodes runs
    /// in its node-leader form ([`crate::hierarchical`]); `None`: every
    /// collective runs flat over its members.
    pub node_of_rank: Option<Vec<u32>>,
    /// The system's barrier interface (the `barrier-interface` algorithm).
    pub gates: Option<crate::algorithms::barrier_interface::GateTiming>,
    /// The torus shapes of a collective over every rank in rank order.
    pub world: WorldGrids,
    /// What a trinary-tree algorithm's segment is derived from (its
    /// pipeline depth); `None`: `segment_bytes`.
    pub pipeline: Option<crate::tree::PipelineCosts>,
}

/// The torus shape a collective over all the program's ranks, in rank
/// order, sees: run flat over them, or among their node leaders. `None`
/// where the placement gives none (several ranks per node run flat, a rank
/// order or map); other communicators have none.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorldGrids {
    pub flat: Option<crate::tree::Grid>,
    pub leaders: Option<crate::tree::Grid>,
}

/// `prm` set for `algorithm` on communicator shape `grid` rooted at `root`:
/// the TNIs and segment its definition gives (the trinary trees 3 TNIs and
/// a segment from their pipeline depth, quad rings 4, the barrier
/// interface 1), the replay's otherwise.
fn settle(prm: &mut Params, algorithm: &str, grid: Option<crate::tree::Grid>, root: Rank, size_bytes: u64, params: &ReplayParams) {
    let node_tnis = params.tnis.max(1);
    let algo = crate::Algorithm::named(algorithm);
    // The system's shape is the communicator's only when it fills it.
    let grid = grid.filter(|g| g.ranks() == prm.ranks);
    prm.grid = grid;
    prm.gates = params.gates;
    prm.tnis = algo.and_then(crate::Algorithm::defined_tnis).map_or(node_tnis, |t| t.min(node_tnis));
    let segment_bytes = match (algo, grid, params.pipeline) {
        (Some(a), Some(g), Some(c)) if a.is_trinary_tree() && crate::tree::trinary_unsupported(&g).is_none() => {
            c.trinary_segment_bytes(&g, root, if a == crate::Algorithm::Trinaryx3 { 2 } else { 1 }, size_bytes)
        }
        _ => params.segment_bytes,
    };
    prm.segment_elements = segment_bytes.div_ceil(ELEMENT_BYTES).max(1);
}

/// Whether `c` is over every rank of `p`, in rank order.
fn is_world(c: &ReplayCollective, ranks: u32) -> bool {
    c.members.len() as u32 == ranks && c.members.iter().enumerate().all(|(i, &m)| m == i as u32)
}

/// What a rank's time goes to, call by call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Compute,
    /// Blocking sends and receives, and the host's part of non-blocking ones.
    PointToPoint,
    Collective,
    /// Waits (and tests that completed requests).
    Waiting,
}

/// Per rank, each call's phase and the step after which the rank's
/// program went on (`None`: it went on at once), for the per-rank
/// breakdown of a replay from the executors' step finish times.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub ops: Vec<Vec<(Phase, Option<StepId>)>>,
}

impl Timeline {
    /// Seconds per phase for each rank, from `finish(rank, step)` (seconds):
    /// each call's time is how far it moved the rank's clock.
    pub fn breakdown(&self, finish: impl Fn(usize, StepId) -> f64) -> Vec<[f64; 4]> {
        self.ops
            .iter()
            .enumerate()
            .map(|(r, ops)| {
                let mut clock = 0.0f64;
                let mut out = [0.0; 4];
                for &(phase, step) in ops {
                    let Some(step) = step else { continue };
                    let t = finish(r, step);
                    if t > clock {
                        out[phase as usize] += t - clock;
                        clock = t;
                    }
                }
                out
            })
            .collect()
    }
}

/// Tags: a message `m` takes `2m + 1` and `2m + 2` (its rendezvous data);
/// collective instance `k` takes `COLLECTIVE_TAGS + k`.
const COLLECTIVE_TAGS: u32 = 1 << 31;

/// The longest `Work` step, ns (`Action::Work` holds a u32).
const MAX_WORK_NS: u64 = u32::MAX as u64;

/// What is wrong with a replay program (the trace it was read from).
fn err(msg: impl Into<String>) -> crate::BuildError {
    crate::BuildError { key: "trace", message: msg.into() }
}

/// Collective `c`'s node-leader form ([`crate::hierarchical`]) over its
/// members on `nodes`, when its operation has one and its root leads its
/// node; `None`: it runs flat.
fn node_leader_form(c: &ReplayCollective, nodes: &[u32], params: &ReplayParams, world: bool) -> Result<Option<Schedule>, crate::BuildError> {
    if crate::Operation::parse(&c.op).is_err() {
        return Ok(None);
    }
    let (order, leader_of) = crate::hierarchical::leaders(nodes);
    if leader_of.get(c.root as usize) != Some(&c.root) {
        return Ok(None);
    }
    let root = order.iter().position(|&l| l == c.root).unwrap_or(0) as Rank;
    let mut prm = Params::new(order.len() as u32, 0);
    settle(&mut prm, &c.algorithm, if world { params.world.leaders } else { None }, root, c.size_bytes, params);
    let inner = build_named(&c.op, &c.algorithm, root, c.size_bytes, prm).map_err(|e| err(format!("collective {} ({} on {} leaders): {}", c.op, c.algorithm, order.len(), e.message)))?;
    if !crate::hierarchical::applies_to(inner.collective) {
        return Ok(None);
    }
    let collective = match inner.collective {
        crate::Collective::Bcast { .. } => crate::Collective::Bcast { root: c.root },
        crate::Collective::Reduce { .. } => crate::Collective::Reduce { root: c.root },
        other => other,
    };
    crate::hierarchical::node_leaders(collective, nodes, &inner).map(Some).map_err(|e| err(format!("collective {}: {}", c.op, e.message)))
}

/// Writes `p` out as one schedule (see the module docs).
pub fn build(p: &ReplayProgram, params: &ReplayParams) -> Result<(Schedule, Timeline), crate::BuildError> {
    check(p)?;
    check_scale(p, params)?;
    let ranks = p.ranks;
    let ctrl = params.mpi.control_bytes.div_ceil(ELEMENT_BYTES);
    let elements = |bytes: u64| bytes.div_ceil(ELEMENT_BYTES).max(1);
    // Buffer modes: each message's from its sender's exchange count with
    // the peer and the peer's rank among the sender's peers.
    let mut modes = vec![BufferMode::MemorySaving; p.messages.len()];
    for prog in &p.programs {
        let mut exchanges: std::collections::HashMap<Rank, (u32, u32)> = Default::default();
        for op in prog {
            if let Op::Send { msg, .. } = op {
                let peers = exchanges.len() as u32;
                let e = exchanges.entry(p.messages[*msg as usize].dst).or_insert((0, peers));
                modes[*msg as usize] = params.mpi.mode_of_exchange(e.0, e.1);
                e.0 += 1;
            }
        }
    }
    // The collectives' schedules, built once per distinct shape.
    // The key: the shape, and the members' nodes when they share some.
    type Key = (String, String, u32, u64, Rank, Option<Vec<u32>>, bool);
    let mut built: std::collections::HashMap<Key, std::sync::Arc<Schedule>> = Default::default();
    let mut coll_schedules = Vec::with_capacity(p.collectives.len());
    for c in &p.collectives {
        let n = c.members.len() as u32;
        let shared = params.node_of_rank.as_ref().and_then(|nodes| {
            let v: Vec<u32> = c.members.iter().map(|&m| nodes.get(m as usize).copied().unwrap_or(m)).collect();
            let distinct: std::collections::HashSet<u32> = v.iter().copied().collect();
            (distinct.len() < v.len()).then_some(v)
        });
        let world = is_world(c, ranks);
        let key = (c.op.clone(), c.algorithm.clone(), n, c.size_bytes, c.root, shared.clone(), world);
        if let (Some(nodes), false) = (&shared, built.contains_key(&key)) {
            if let Some(s) = node_leader_form(c, nodes, params, world)? {
                built.insert(key.clone(), std::sync::Arc::new(s));
            }
        }
        if !built.contains_key(&key) {
            let mut prm = Params::new(n, 0);
            settle(&mut prm, &c.algorithm, if world && shared.is_none() { params.world.flat } else { None }, c.root, c.size_bytes, params);
            let what = || format!("collective {} ({} on {n} ranks)", c.op, c.algorithm);
            let s = if crate::mpi_collectives::OPERATIONS.iter().any(|(o, _)| *o == c.op) {
                crate::mpi_collectives::build(&c.op, &c.algorithm, n, c.root, c.size_bytes).map_err(|e| err(format!("{}: {e}", what())))?
            } else {
                build_named(&c.op, &c.algorithm, c.root, c.size_bytes, prm).map_err(|e| err(format!("{}: {}", what(), e.message)))?
            };
            built.insert(key.clone(), std::sync::Arc::new(s));
        }
        coll_schedules.push(std::sync::Arc::clone(&built[&key]));
    }
    let max_elements = p
        .messages
        .iter()
        .map(|m| Layout::new(elements(m.bytes), ctrl).elements())
        .chain(coll_schedules.iter().map(|s| s.buffer_elements))
        .max()
        .unwrap_or(1)
        .max(1);
    let mut s = Schedule::new(Collective::Transfers, "replay", ranks, max_elements);
    s.buffer_elements = max_elements;
    let mut timeline = Timeline { ops: vec![Vec::new(); ranks as usize] };
    for r in 0..ranks {
        let mut frontier: Vec<StepId> = Vec::new();
        let mut requests: std::collections::HashMap<u64, StepId> = Default::default();
        for op in &p.programs[r as usize] {
            let phase = match op {
                Op::Compute(_) => Phase::Compute,
                Op::Send { .. } | Op::Recv { .. } => Phase::PointToPoint,
                Op::Wait(_) => Phase::Waiting,
                Op::Collective(_) => Phase::Collective,
            };
            match op {
                Op::Compute(ns) => {
                    let mut left = (*ns as f64 * params.compute_scale).round() as u64;
                    while left > 0 {
                        let chunk = left.min(MAX_WORK_NS);
                        let w = s.work(r, chunk as u32, &frontier);
                        frontier = vec![w];
                        left -= chunk;
                    }
                }
                Op::Send { msg, request } => {
                    let m = &p.messages[*msg as usize];
                    let lay = Layout::new(elements(m.bytes), ctrl);
                    let mm = Message { cfg: &params.mpi, lay: &lay, a: m.src, b: m.dst, bytes: m.bytes, mode: modes[*msg as usize], tag: 2 * msg + 1, eager: m.eager() };
                    let (host, done) = mm.send_side(&mut s, &frontier);
                    match request {
                        Some(q) => {
                            requests.insert(*q, done);
                            frontier = vec![host];
                        }
                        None => frontier = vec![done],
                    }
                }
                Op::Recv { msg, request } => {
                    let m = &p.messages[*msg as usize];
                    let lay = Layout::new(elements(m.bytes), ctrl);
                    let mm = Message { cfg: &params.mpi, lay: &lay, a: m.src, b: m.dst, bytes: m.bytes, mode: modes[*msg as usize], tag: 2 * msg + 1, eager: m.eager() };
                    let done = mm.recv_side(&mut s, &frontier);
                    match request {
                        // Posting costs nothing on the host until the wait.
                        Some(q) => {
                            requests.insert(*q, done);
                        }
                        None => frontier = vec![done],
                    }
                }
                Op::Wait(qs) => {
                    let mut deps = frontier.clone();
                    for q in qs {
                        let d = requests.remove(q).ok_or_else(|| err(format!("rank {r}: a wait on request {q}, which is not pending")))?;
                        deps.push(d);
                    }
                    if deps.len() > 1 {
                        let j = s.work(r, 0, &deps);
                        frontier = vec![j];
                    } else {
                        frontier = deps;
                    }
                }
                Op::Collective(k) => {
                    let c = &p.collectives[*k as usize];
                    let me = c.members.iter().position(|&x| x == r).ok_or_else(|| err(format!("rank {r} calls collective {k} but is not a member")))?;
                    let end = embed(&mut s, r, &coll_schedules[*k as usize].programs[me].steps, &c.members, COLLECTIVE_TAGS + k, &frontier);
                    frontier = vec![end];
                }
            }
            timeline.ops[r as usize].push((phase, frontier.first().copied()));
        }
        if !requests.is_empty() {
            // Requests never waited for (MPI_Request_free'd or left at
            // MPI_Finalize): the rank ends when they complete.
            let mut deps = frontier.clone();
            deps.extend(requests.values());
            let j = s.work(r, 0, &deps);
            timeline.ops[r as usize].push((Phase::Waiting, Some(j)));
        }
    }
    s.shrink_to_fit();
    s.validate().map_err(|e| err(format!("the replay's schedule is inconsistent (a trace whose sends and receives do not pair up): {e}")))?;
    Ok((s, timeline))
}

/// Writes `steps` (one member's program of a collective) into rank `r`'s
/// program after `frontier`, peers translated to world ranks and messages
/// tagged `tag`. Returns a step after which all of them are done.
pub(crate) fn embed(s: &mut Schedule, r: Rank, steps: &[crate::Step], members: &[Rank], tag: u32, frontier: &[StepId]) -> StepId {
    let base = s.append(r, steps, frontier, |action| match action {
        Action::Send { peer, tag: t, .. } | Action::Recv { peer, tag: t, .. } => {
            *peer = members[*peer as usize];
            *t = tag;
        }
        Action::Copy(_) | Action::Work { .. } => {}
    });
    let mut has_dependant = vec![false; steps.len()];
    for st in steps {
        for &d in &st.deps {
            has_dependant[d as usize] = true;
        }
    }
    let sinks: Vec<StepId> = (0..steps.len()).filter(|&i| !has_dependant[i]).map(|i| base + i as StepId).collect();
    if sinks.is_empty() {
        // A member with nothing to do (a barrier of one): just the frontier.
        return s.work(r, 0, frontier);
    }
    s.work(r, 0, &sinks)
}

/// Structural checks with messages naming what is wrong.
/// The largest message or collective a replay takes, bytes (256 TiB:
/// more than any node's memory; a corrupt size would otherwise become
/// billions of packets).
pub const MAX_MESSAGE_BYTES: u64 = 1 << 48;

/// The most compute one rank's program may hold after `compute_scale`, ns
/// (2^50 ns, 13 days): the simulated clocks count cycles of down to 0.08
/// ns in 64 bits, and a burst is written as steps of at most 4.3 s.
pub const MAX_RANK_COMPUTE_NS: u64 = 1 << 50;

/// Refuses sizes and times no program has (a timestamp near 2^63, a size
/// of 2^63 bytes) before anything is built for them.
fn check_scale(p: &ReplayProgram, params: &ReplayParams) -> Result<(), crate::BuildError> {
    if let Some((i, m)) = p.messages.iter().enumerate().find(|(_, m)| m.bytes > MAX_MESSAGE_BYTES) {
        return Err(err(format!(
            "message {i} (rank {} to rank {}) has {} bytes, more than the {MAX_MESSAGE_BYTES} (256 TiB) a replay takes: is the trace intact?",
            m.src, m.dst, m.bytes
        )));
    }
    if let Some((k, c)) = p.collectives.iter().enumerate().find(|(_, c)| c.size_bytes > MAX_MESSAGE_BYTES) {
        return Err(err(format!(
            "collective {k} ({}) has {} bytes, more than the {MAX_MESSAGE_BYTES} (256 TiB) a replay takes: is the trace intact?",
            c.op, c.size_bytes
        )));
    }
    for (r, prog) in p.programs.iter().enumerate() {
        let ns: f64 = prog.iter().map(|op| if let Op::Compute(ns) = op { *ns as f64 } else { 0.0 }).sum::<f64>() * params.compute_scale;
        if ns > MAX_RANK_COMPUTE_NS as f64 {
            return Err(err(format!(
                "rank {r} computes for {:.3e} s in all (after --compute-scale {}), more than the {:.2e} s (13 days) a replay simulates: is the trace's clock intact?",
                ns * 1e-9,
                params.compute_scale,
                MAX_RANK_COMPUTE_NS as f64 * 1e-9
            )));
        }
    }
    Ok(())
}

fn check(p: &ReplayProgram) -> Result<(), crate::BuildError> {
    if p.programs.len() != p.ranks as usize {
        return Err(err(format!("{} programs for {} ranks", p.programs.len(), p.ranks)));
    }
    if p.messages.len() as u64 >= (COLLECTIVE_TAGS as u64 - 2) / 2 {
        return Err(err(format!("{} messages: more than a replay numbers ({})", p.messages.len(), COLLECTIVE_TAGS / 2 - 1)));
    }
    for (i, m) in p.messages.iter().enumerate() {
        if m.src >= p.ranks || m.dst >= p.ranks || m.src == m.dst {
            return Err(err(format!("message {i}: from rank {} to rank {} (of {})", m.src, m.dst, p.ranks)));
        }
    }
    let mut sent = vec![0u8; p.messages.len()];
    let mut received = vec![0u8; p.messages.len()];
    for (r, prog) in p.programs.iter().enumerate() {
        for op in prog {
            match op {
                Op::Send { msg, .. } | Op::Recv { msg, .. } => {
                    let m = p.messages.get(*msg as usize).ok_or_else(|| err(format!("rank {r}: message {msg} does not exist")))?;
                    let (side, who, count) = if matches!(op, Op::Send { .. }) { ("sends", m.src, &mut sent) } else { ("receives", m.dst, &mut received) };
                    if who as usize != r {
                        return Err(err(format!("rank {r} {side} message {msg}, which is rank {who}'s")));
                    }
                    count[*msg as usize] += 1;
                }
                Op::Collective(k) => {
                    let c = p.collectives.get(*k as usize).ok_or_else(|| err(format!("rank {r}: collective {k} does not exist")))?;
                    if c.members.iter().any(|&x| x >= p.ranks) {
                        return Err(err(format!("collective {k}: a member beyond the {} ranks", p.ranks)));
                    }
                }
                Op::Compute(_) | Op::Wait(_) => {}
            }
        }
    }
    if let Some(i) = (0..p.messages.len()).find(|&i| sent[i] != 1 || received[i] != 1) {
        let m = &p.messages[i];
        return Err(err(format!("message {i} (rank {} to rank {}, {} bytes) is sent {} and received {} times; expected once each", m.src, m.dst, m.bytes, sent[i], received[i])));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::data::{execute, Order};

    fn params() -> ReplayParams {
        ReplayParams { mpi: MpiConfig::k_computer(), compute_scale: 1.0, tnis: 1, segment_bytes: 65536, node_of_rank: None, gates: None, world: WorldGrids::default(), pipeline: None }
    }

    /// Two ranks: an Irecv posted before the matching send, a blocking
    /// exchange in both directions with eager and rendezvous sizes, an
    /// allreduce, compute between.
    fn program() -> ReplayProgram {
        use Op::*;
        ReplayProgram {
            ranks: 2,
            messages: vec![
                ReplayMessage { src: 0, dst: 1, bytes: 100, mode: SendMode::Standard },
                ReplayMessage { src: 1, dst: 0, bytes: 1 << 20, mode: SendMode::Standard },
                ReplayMessage { src: 0, dst: 1, bytes: 8, mode: SendMode::Synchronous },
            ],
            collectives: vec![ReplayCollective { op: "allreduce".into(), algorithm: "recursive-doubling".into(), members: vec![0, 1], root: 0, size_bytes: 64 }],
            programs: vec![
                vec![Compute(1000), Send { msg: 0, request: None }, Recv { msg: 1, request: Some(7) }, Send { msg: 2, request: None }, Wait(vec![7]), Collective(0)],
                vec![Recv { msg: 2, request: Some(1) }, Compute(5_000_000_000), Recv { msg: 0, request: None }, Send { msg: 1, request: None }, Wait(vec![1]), Collective(0)],
            ],
        }
    }

    #[test]
    fn a_matched_program_is_one_consistent_schedule() {
        let (s, timeline) = build(&program(), &params()).expect("builds");
        s.validate().expect("valid");
        execute(&s, Order::Fifo).expect("runs to completion");
        execute(&s, Order::Lifo).expect("in any order");
        assert_eq!(timeline.ops[0].len(), program().programs[0].len());
        // Rank 1's 5 s of compute are two Work steps (a step holds < 4.3 s).
        let work: u64 = s.programs[1].steps.iter().filter_map(|st| match st.action { Action::Work { ns } => Some(ns as u64), _ => None }).sum();
        assert!(work >= 5_000_000_000);
        // Each step taking 1 s per position: the breakdown covers the
        // rank's whole clock.
        let b = timeline.breakdown(|_, step| step as f64);
        let last = |r: usize| timeline.ops[r].iter().filter_map(|x| x.1).max().unwrap() as f64;
        assert_eq!(b[1].iter().sum::<f64>(), last(1));
        assert!(b[1][Phase::Compute as usize] > 0.0 && b[1][Phase::Collective as usize] > 0.0);
    }

    /// Head-to-head buffered sends of 1 MiB (MPI_Bsend, then MPI_Recv on
    /// both ranks) complete: a buffered send does not wait for its
    /// receiver, whatever its size.
    #[test]
    fn buffered_sends_do_not_wait_for_the_receiver() {
        use Op::*;
        let msg = |src, dst| ReplayMessage { src, dst, bytes: 1 << 20, mode: SendMode::Buffered };
        let p = ReplayProgram {
            ranks: 2,
            messages: vec![msg(0, 1), msg(1, 0)],
            collectives: vec![],
            programs: vec![vec![Send { msg: 0, request: None }, Recv { msg: 1, request: None }], vec![Send { msg: 1, request: None }, Recv { msg: 0, request: None }]],
        };
        let (s, _) = build(&p, &params()).unwrap();
        execute(&s, Order::Fifo).expect("no deadlock");
        let mut standard = p.clone();
        for m in &mut standard.messages {
            m.mode = SendMode::Standard;
        }
        let (s, _) = build(&standard, &params()).unwrap();
        assert!(execute(&s, Order::Fifo).is_err(), "standard sends of 1 MiB (rendezvous) deadlock head to head");
    }

    #[test]
    fn unpaired_messages_and_unknown_requests_are_refused() {
        let mut p = program();
        p.programs[1].remove(2);
        assert!(build(&p, &params()).unwrap_err().message.contains("message 0"));
        let mut p = program();
        p.programs[0][4] = Op::Wait(vec![9]);
        assert!(build(&p, &params()).unwrap_err().message.contains("request 9"));
    }
}
