//! A trace as a matched replay program (`tofusim_comm::replay`): every
//! rank's calls as operations, each message numbered once for its sender
//! and its receiver, each collective instance once for its members.
//!
//! Matching follows MPI: messages from one sender to one receiver on one
//! communicator with one tag are received in the order they were sent, by
//! the receives in the order they were posted (a blocking receive where it
//! is called, a non-blocking one where it is posted, its source and tag
//! those its completion recorded — so wildcards are already resolved).

use crate::TraceError;
use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;
use tofusim_comm::replay::{Op, ReplayCollective, ReplayMessage, ReplayProgram, SendMode};

use crate::calls::{kind, Kind, POLLS};
use crate::instances::{instances, MODELLED};
use tofusim_comm::library::{Communicator, Library};
use crate::trace::{Record, Trace};

/// Request numbers the conversion makes for itself (a sendrecv's two
/// halves), above any a writer gives (writers number requests from 1, or
/// use handle addresses, below 2^63).
const OWN_REQUESTS: u64 = 1 << 63;

/// The send mode of a call.
fn send_mode(call: &str) -> SendMode {
    match call {
        "MPI_Bsend" | "MPI_Ibsend" => SendMode::Buffered,
        "MPI_Ssend" | "MPI_Issend" => SendMode::Synchronous,
        _ => SendMode::Standard,
    }
}

/// What the conversion noticed beside the program.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Notes {
    /// Receives posted but never completed in the trace (not replayed).
    pub uncompleted_receives: u64,
    /// Receives cancelled before a message matched them.
    pub cancelled_receives: u64,
    /// Collective instances of one rank (nothing to send), not replayed.
    pub trivial_collectives: u64,
    /// Messages a rank sent itself: a copy in its own memory, not replayed.
    pub self_messages: u64,
    /// The algorithm used for each operation (its first call's).
    pub algorithms: BTreeMap<String, String>,
    /// Each operation, communicator size and call size: how many calls,
    /// and the algorithm they ran with and why.
    pub collective_calls: Vec<CollectiveCalls>,
}

/// Calls of one operation, communicator size and size, and their algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CollectiveCalls {
    pub op: String,
    pub ranks: u32,
    pub size_bytes: u64,
    pub calls: u64,
    pub algorithm: String,
    /// The library's own algorithm, where tofusim runs a stand-in for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stands_in_for: Option<String>,
    /// The library's rule that chose it, or `given (--coll)`.
    pub rule: String,
}

/// Where a program's collectives get their algorithms: the ones given per
/// operation (`--coll OP=ALGO`), else the MPI library's choice.
#[derive(Clone, Debug)]
pub struct Algorithms {
    pub library: Library,
    pub given: BTreeMap<String, String>,
    /// The system has a barrier interface (Fujitsu MPI offloads to it).
    pub barrier_interface: bool,
    /// Whether the world communicator (every rank, in rank order) is
    /// torus-shaped as placed.
    pub world: WorldShape,
}

/// The world communicator as placed: its torus shape flat (a rank per
/// node) or among its node leaders (`Some(carries the trinary trees)`),
/// and how its ranks share nodes.
#[derive(Clone, Copy, Debug)]
pub struct WorldShape {
    pub flat: Option<bool>,
    pub leaders: Option<bool>,
    /// Ranks per node (1: none share), placed cyclic rather than by block.
    pub per_node: u32,
    pub cyclic: bool,
    /// Collectives over shared nodes run in their node-leader form.
    pub leader_form: bool,
    /// Nodes the ranks occupy (the node leaders).
    pub nodes: u32,
}

impl Default for WorldShape {
    fn default() -> Self {
        Self { flat: None, leaders: None, per_node: 1, cyclic: false, leader_form: true, nodes: 0 }
    }
}

impl WorldShape {
    /// What the library's rules see of `op` over the world rooted at
    /// `root` (of `ranks`): the ranks the algorithm runs on, whether they
    /// form a torus, and whether it carries the trinary trees. Among the
    /// node leaders where the call runs in their form (a root must lead
    /// its node), flat otherwise.
    fn view(&self, op: &str, root: u32, ranks: u32) -> (u32, bool, bool) {
        let shared = self.per_node > 1;
        if !shared {
            return (ranks, self.flat.is_some(), self.flat == Some(true));
        }
        let leader_op = self.leader_form && matches!(op, "barrier" | "bcast" | "reduce" | "allreduce");
        let root_leads = !matches!(op, "bcast" | "reduce") || if self.cyclic { root < self.nodes } else { root % self.per_node == 0 };
        if leader_op && root_leads {
            (self.nodes, self.leaders.is_some(), self.leaders == Some(true))
        } else {
            (ranks, false, false)
        }
    }
}

impl Algorithms {
    /// Open MPI's rules, nothing given, no torus.
    pub fn openmpi() -> Self {
        Self { library: Library::Openmpi, given: BTreeMap::new(), barrier_interface: false, world: WorldShape::default() }
    }
}

/// One receive in posting order: where its op is, and (source, comm,
/// tag) once known.
struct Posting {
    op: usize,
    key: Option<(u32, u32, u32)>,
}

/// The replay program of `t`, its collectives' algorithms from
/// `algorithms`. Only the world communicator (every rank in rank order)
/// can be torus-shaped for the library's rules (`algorithms.world`).
pub fn build(t: &Trace, algorithms: &Algorithms) -> Result<(ReplayProgram, Notes), TraceError> {
    let given = &algorithms.given;
    if let Some(op) = given.keys().find(|op| !MODELLED.contains(&op.as_str())) {
        return Err(TraceError::Algorithm(format!("--coll {op}=...: not an operation tofusim replays; expected one of {}", MODELLED.join(", "))));
    }
    let mut notes = Notes::default();
    let mut coll_of: HashMap<(u32, u32), u32> = HashMap::new();
    // (op, ranks, size) -> its entry in `notes.collective_calls`.
    let mut call_kinds: HashMap<(String, u32, u64), usize> = HashMap::new();
    let mut collectives: Vec<ReplayCollective> = Vec::new();
    for inst in instances(t)? {
        let (op, size) = match inst.op.as_str() {
            // Communicator construction: every member learns every other's
            // (colour, key) — an allgather of 8 bytes each.
            "create_handle" => ("allgather".to_string(), 8),
            "destroy_handle" => continue,
            o => (o.to_string(), inst.size_bytes),
        };
        if !MODELLED.contains(&op.as_str()) {
            return Err(TraceError::Content(format!(
                "{}: rank {}: MPI collective {} (on communicator {:?}) has no schedule in tofusim; modelled: {}",
                t.path,
                inst.members[0],
                inst.mpi_op,
                t.comm_name(inst.comm),
                MODELLED.join(", ")
            )));
        }
        if inst.members.len() < 2 {
            notes.trivial_collectives += 1;
            continue;
        }
        let ranks = inst.members.len() as u32;
        let (algorithm, stands_in_for, rule) = match given.get(&op) {
            Some(a) => (a.clone(), None, "given (--coll)".to_string()),
            None => {
                let world = ranks == t.ranks && inst.members.iter().enumerate().all(|(i, &m)| m == i as u32);
                let (on, torus, trinary_trees) = if world { algorithms.world.view(&op, inst.root.unwrap_or(0), ranks) } else { (ranks, false, false) };
                let comm = Communicator { ranks: on, torus, trinary_trees, barrier_interface: algorithms.barrier_interface };
                let c = algorithms.library.choose(&op, size, comm).expect("every modelled operation has a rule in every library");
                (c.algorithm.to_string(), c.stands_in_for.map(str::to_string), format!("{}: {}", algorithms.library, c.rule))
            }
        };
        notes.algorithms.entry(op.clone()).or_insert_with(|| algorithm.clone());
        match call_kinds.entry((op.clone(), ranks, size)) {
            std::collections::hash_map::Entry::Occupied(e) => notes.collective_calls[*e.get()].calls += 1,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(notes.collective_calls.len());
                notes.collective_calls.push(CollectiveCalls { op: op.clone(), ranks, size_bytes: size, calls: 1, algorithm: algorithm.clone(), stands_in_for, rule });
            }
        }
        let k = collectives.len() as u32;
        for (&m, &call) in inst.members.iter().zip(&inst.call_index) {
            coll_of.insert((m, call), k);
        }
        collectives.push(ReplayCollective { op, algorithm, members: inst.members, root: inst.root.unwrap_or(0), size_bytes: size });
    }

    let mut messages: Vec<ReplayMessage> = Vec::new();
    let mut sends: HashMap<(u32, u32, u32, u32), VecDeque<u32>> = HashMap::new();
    // Per rank: its ops (a receive's message filled in when matched) and its
    // receives in posting order.
    let mut programs: Vec<Vec<Op>> = Vec::with_capacity(t.ranks as usize);
    let mut postings: Vec<Vec<Posting>> = Vec::with_capacity(t.ranks as usize);
    // Per call name: refused, MPI_Init*, a poll (looked up once, not per
    // call: a trace holds millions of calls and a few dozen names).
    let classes: Vec<(bool, bool, bool)> = t.names.iter().map(|n| (kind(n) == Kind::Refused, n.starts_with("MPI_Init"), POLLS.contains(&n.as_str()))).collect();
    for (r, calls) in t.calls.iter().enumerate() {
        let mut ops: Vec<Op> = Vec::new();
        let mut posted: Vec<Posting> = Vec::new();
        // Request -> its posting's index.
        let mut pending: HashMap<u64, usize> = HashMap::new();
        let mut own = OWN_REQUESTS;
        // Requests of messages to self: dropped from the waits.
        let mut local: std::collections::HashSet<u64> = Default::default();
        let mut last = t.start_ns(r);
        for (ci, c) in calls.iter().enumerate() {
            let name = t.name(c);
            let (refused, init, poll) = classes[c.name as usize];
            if refused {
                return Err(TraceError::Content(format!(
                    "{}: rank {r}: {name} is not replayed (see docs/traces.md for the calls tofusim models); the trace cannot be replayed faithfully without it",
                    t.path
                )));
            }
            if init {
                continue;
            }
            let recs = t.records_of(r, c);
            if poll && recs.is_empty() {
                // A test or probe that found nothing: the MPI library's
                // progress work on the host, replayed as the rank's own time.
                continue;
            }
            if c.enter_ns > last {
                ops.push(Op::Compute(c.enter_ns - last));
            }
            last = last.max(c.leave_ns);
            if let Some(&k) = coll_of.get(&(r as u32, ci as u32)) {
                ops.push(Op::Collective(k));
                continue;
            }
            let two_sided = name == "MPI_Sendrecv" || name == "MPI_Sendrecv_replace";
            let mut waits: Vec<u64> = Vec::new();
            for rec in recs {
                match *rec {
                    Record::Send { peer, request, .. } if peer == r as u32 => {
                        notes.self_messages += 1;
                        local.extend(request);
                    }
                    Record::Recv { peer, request: None, .. } if peer == r as u32 => {}
                    Record::Send { peer, comm, tag, bytes, request } => {
                        let msg = messages.len() as u32;
                        messages.push(ReplayMessage { src: r as u32, dst: peer, bytes, mode: send_mode(name) });
                        sends.entry((r as u32, peer, comm, tag)).or_default().push_back(msg);
                        let request = if two_sided {
                            own += 1;
                            waits.push(own);
                            Some(own)
                        } else {
                            request
                        };
                        ops.push(Op::Send { msg, request });
                    }
                    Record::Recv { peer, comm, tag, request: None, .. } => {
                        let request = if two_sided {
                            own += 1;
                            waits.push(own);
                            Some(own)
                        } else {
                            None
                        };
                        posted.push(Posting { op: ops.len(), key: Some((peer, comm, tag)) });
                        ops.push(Op::Recv { msg: u32::MAX, request });
                    }
                    Record::Posted(q) => {
                        pending.insert(q, posted.len());
                        posted.push(Posting { op: ops.len(), key: None });
                        ops.push(Op::Recv { msg: u32::MAX, request: Some(q) });
                    }
                    Record::Recv { peer, comm, tag, request: Some(q), .. } => {
                        let Some(i) = pending.remove(&q) else {
                            return Err(TraceError::Content(format!("{}: rank {r}: {name} completes receive request {q}, which was not posted", t.path)));
                        };
                        if peer == r as u32 {
                            // From itself: the posting is dropped below.
                            posted[i].key = None;
                            local.insert(q);
                        } else {
                            posted[i].key = Some((peer, comm, tag));
                            waits.push(q);
                        }
                    }
                    Record::SendDone(q) if local.contains(&q) => {}
                    Record::SendDone(q) => waits.push(q),
                    Record::Cancelled(q) => {
                        let Some(i) = pending.remove(&q) else {
                            return Err(TraceError::Content(format!(
                                "{}: rank {r}: {name} completes request {q} as cancelled; only cancelled receives are replayed (a cancelled send's message is not)",
                                t.path
                            )));
                        };
                        posted[i].key = None;
                        notes.cancelled_receives += 1;
                    }
                    // A collective of one rank: nothing to replay.
                    Record::Collective { .. } => {}
                }
            }
            waits.retain(|q| !local.contains(q));
            if !waits.is_empty() {
                ops.push(Op::Wait(waits));
            }
        }
        notes.uncompleted_receives += pending.len() as u64;
        programs.push(ops);
        postings.push(posted);
    }
    // Match receives, in posting order, to sends.
    for (r, posted) in postings.iter().enumerate() {
        for p in posted {
            let Some((src, comm, tag)) = p.key else { continue };
            let Some(msg) = sends.get_mut(&(src, r as u32, comm, tag)).and_then(VecDeque::pop_front) else {
                return Err(TraceError::Content(format!(
                    "{}: rank {r} receives from rank {src} (communicator {:?}, tag {tag}) a message the sender never sent; the trace is incomplete",
                    t.path,
                    t.comm_name(comm)
                )));
            };
            if let Op::Recv { msg: m, .. } = &mut programs[r][p.op] {
                *m = msg;
            }
        }
    }
    let unreceived: usize = sends.values().map(VecDeque::len).sum();
    if unreceived > 0 {
        let ((src, dst, _, tag), _) = sends.iter().find(|(_, q)| !q.is_empty()).expect("counted");
        return Err(TraceError::Content(format!(
            "{}: {unreceived} messages were sent and never received (e.g. rank {src} to rank {dst}, tag {tag}); the trace is incomplete or uses calls tofusim does not read",
            t.path
        )));
    }
    // Drop the receives that never completed or were cancelled (and their
    // requests from the waits).
    for ops in &mut programs {
        let dropped: std::collections::HashSet<u64> =
            ops.iter().filter_map(|op| if let Op::Recv { msg: u32::MAX, request } = op { *request } else { None }).collect();
        ops.retain(|op| !matches!(op, Op::Recv { msg: u32::MAX, .. }));
        if !dropped.is_empty() {
            for op in ops.iter_mut() {
                if let Op::Wait(qs) = op {
                    qs.retain(|q| !dropped.contains(q));
                }
            }
            ops.retain(|op| !matches!(op, Op::Wait(qs) if qs.is_empty()));
        }
    }
    Ok((ReplayProgram { ranks: t.ranks, messages, collectives, programs }, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Call;

    /// A trace from per-rank lists of (call name, enter, leave, records).
    fn trace(ranks: Vec<Vec<(&str, u64, u64, Vec<Record>)>>) -> Trace {
        let mut names: Vec<String> = Vec::new();
        let mut calls = Vec::new();
        let mut records = Vec::new();
        for rank in ranks {
            let (mut cs, mut rs) = (Vec::new(), Vec::new());
            for (name, enter_ns, leave_ns, recs) in rank {
                let i = names.iter().position(|n| n == name).unwrap_or_else(|| {
                    names.push(name.to_string());
                    names.len() - 1
                });
                cs.push(Call { name: i as u32, enter_ns, leave_ns, first_record: rs.len() as u32, records: recs.len() as u32 });
                rs.extend(recs);
            }
            calls.push(cs);
            records.push(rs);
        }
        let n = calls.len() as u32;
        Trace {
            path: "t".into(),
            ranks: n,
            comms: [(0, Some((0..n).collect()))].into_iter().collect(),
            comm_names: [(0, "MPI_COMM_WORLD".to_string())].into_iter().collect(),
            names,
            calls,
            records,
        }
    }

    fn send(peer: u32, tag: u32, bytes: u64, request: Option<u64>) -> Record {
        Record::Send { peer, comm: 0, tag, bytes, request }
    }
    fn recv(peer: u32, tag: u32, bytes: u64, request: Option<u64>) -> Record {
        Record::Recv { peer, comm: 0, tag, bytes, request }
    }

    #[test]
    fn receives_match_sends_by_tag_in_posting_order() {
        // Rank 0 sends tag 1 then tag 2; rank 1 posts an Irecv that
        // completes with tag 2 before a blocking receive of tag 1.
        let t = trace(vec![
            vec![("MPI_Init", 0, 10, vec![]), ("MPI_Send", 100, 110, vec![send(1, 1, 8, None)]), ("MPI_Send", 120, 130, vec![send(1, 2, 4096, None)]), ("MPI_Finalize", 200, 210, vec![])],
            vec![
                ("MPI_Init", 0, 10, vec![]),
                ("MPI_Irecv", 50, 51, vec![Record::Posted(7)]),
                ("MPI_Recv", 60, 140, vec![recv(0, 1, 8, None)]),
                ("MPI_Wait", 150, 160, vec![recv(0, 2, 4096, Some(7))]),
                ("MPI_Finalize", 200, 210, vec![]),
            ],
        ]);
        let (p, notes) = build(&t, &Algorithms::openmpi()).unwrap();
        assert_eq!(p.messages.len(), 2);
        let recv_msgs: Vec<u32> = p.programs[1].iter().filter_map(|op| if let Op::Recv { msg, .. } = op { Some(*msg) } else { None }).collect();
        assert_eq!(recv_msgs, vec![1, 0], "the Irecv (tag 2) gets the second send");
        assert!(p.programs[1].contains(&Op::Wait(vec![7])));
        assert_eq!(p.programs[1][0], Op::Compute(40), "compute from leaving MPI_Init to the Irecv");
        assert_eq!(notes.uncompleted_receives, 0);
    }

    #[test]
    fn failed_tests_are_compute_and_cancelled_receives_are_dropped() {
        let t = trace(vec![
            vec![("MPI_Init", 0, 10, vec![]), ("MPI_Isend", 20, 21, vec![send(1, 0, 8, Some(3))]), ("MPI_Test", 30, 40, vec![]), ("MPI_Wait", 50, 60, vec![Record::SendDone(3)])],
            vec![
                ("MPI_Init", 0, 10, vec![]),
                ("MPI_Irecv", 11, 12, vec![Record::Posted(1)]),
                ("MPI_Irecv", 13, 14, vec![Record::Posted(2)]),
                ("MPI_Cancel", 15, 16, vec![]),
                ("MPI_Waitall", 20, 70, vec![recv(0, 0, 8, Some(1)), Record::Cancelled(2)]),
            ],
        ]);
        let (p, notes) = build(&t, &Algorithms::openmpi()).unwrap();
        // Rank 0: compute 10, isend, compute 29 (the failed test's 10 ns
        // included), wait.
        assert_eq!(p.programs[0], vec![Op::Compute(10), Op::Send { msg: 0, request: Some(3) }, Op::Compute(29), Op::Wait(vec![3])]);
        assert_eq!(notes.cancelled_receives, 1);
        assert!(p.programs[1].iter().filter(|op| matches!(op, Op::Recv { .. })).count() == 1);
        assert!(p.programs[1].contains(&Op::Wait(vec![1])));
    }

    #[test]
    fn refused_calls_and_unmatched_messages_name_the_rank() {
        let t = trace(vec![vec![("MPI_Init", 0, 1, vec![]), ("MPI_Ibarrier", 2, 3, vec![])], vec![("MPI_Init", 0, 1, vec![])]]);
        assert!(matches!(build(&t, &Algorithms::openmpi()).unwrap_err(), TraceError::Content(m) if m.contains("rank 0: MPI_Ibarrier is not replayed")));
        let t = trace(vec![vec![("MPI_Send", 2, 3, vec![send(1, 0, 8, None)])], vec![("MPI_Init", 0, 1, vec![])]]);
        assert!(matches!(build(&t, &Algorithms::openmpi()).unwrap_err(), TraceError::Content(m) if m.contains("never received")));
    }

    #[test]
    fn collectives_take_their_size_from_the_non_roots() {
        // A bcast whose root reports N times the bytes (a writer's
        // convention): the size is what the non-roots receive.
        let coll = |sent, received| Record::Collective { op: 1, comm: 0, root: Some(0), sent, received };
        let t = trace(vec![
            vec![("MPI_Bcast", 0, 1, vec![coll(3 * 1000, 0)])],
            vec![("MPI_Bcast", 0, 1, vec![coll(0, 1000)])],
            vec![("MPI_Bcast", 0, 1, vec![coll(0, 1000)])],
        ]);
        let (p, notes) = build(&t, &Algorithms::openmpi()).unwrap();
        assert_eq!(p.collectives.len(), 1);
        assert_eq!((p.collectives[0].op.as_str(), p.collectives[0].size_bytes, p.collectives[0].root), ("bcast", 1000, 0));
        assert_eq!(notes.algorithms["bcast"], "binomial");
        // Open MPI's rule for 1,000 B: a split binary tree, run as binomial.
        let c = &notes.collective_calls[0];
        assert_eq!((c.ranks, c.size_bytes, c.calls, c.stands_in_for.as_deref()), (3, 1000, 1, None));
        assert!(c.rule.starts_with("openmpi: size < 2,048 B"), "{}", c.rule);
        let mut chosen = BTreeMap::new();
        chosen.insert("bcast".to_string(), "chain".to_string());
        // Fujitsu MPI's rules on a world communicator placed as a torus:
        // a long bcast takes the triple trinary tree; off a torus, Open MPI's rule.
        let long = trace(vec![
            vec![("MPI_Bcast", 0, 1, vec![coll(0, 1 << 20)])],
            vec![("MPI_Bcast", 0, 1, vec![coll(0, 1 << 20)])],
            vec![("MPI_Bcast", 0, 1, vec![coll(0, 1 << 20)])],
        ]);
        let fj = |trees: bool| Algorithms { library: Library::Fjmpi, world: WorldShape { flat: trees.then_some(true), ..WorldShape::default() }, ..Algorithms::openmpi() };
        assert_eq!(build(&long, &fj(true)).unwrap().0.collectives[0].algorithm, "trinary-tree");
        assert_eq!(build(&long, &fj(false)).unwrap().0.collectives[0].algorithm, "chain");
        // Two ranks per node (block) on a torus of leaders: rank 0 leads its
        // node, rank 1 does not, so a bcast from it runs flat, off the torus.
        let shared = WorldShape { leaders: Some(true), per_node: 2, nodes: 2, ..WorldShape::default() };
        assert_eq!(shared.view("bcast", 0, 3), (2, true, true));
        assert_eq!(shared.view("bcast", 1, 3), (3, false, false));
        assert_eq!(shared.view("allgather", 0, 3), (3, false, false));
        let (p, notes) = build(&t, &Algorithms { given: chosen, ..Algorithms::openmpi() }).unwrap();
        assert_eq!(p.collectives[0].algorithm, "chain");
        assert_eq!(notes.collective_calls[0].rule, "given (--coll)");
    }
}
