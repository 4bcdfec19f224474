//! What `tofusim trace show` prints: a trace's ranks, calls by kind, bytes,
//! compute fraction and communication matrix; and the communication list
//! `tofusim pattern from-trace` writes for `tofusim rmatt`.

use crate::TraceError;
use std::collections::BTreeMap;

use serde::Serialize;
use tofusim_comm::schedule::{total, Action};
use tofusim_comm::ELEMENT_BYTES;

use crate::calls::{kind, Kind};
use crate::instances::{instances, MODELLED};
use crate::trace::{collective_name, Record, Trace};

#[derive(Clone, Debug, Default, Serialize)]
pub struct CollectiveCount {
    pub calls: u64,
    pub bytes_sent: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RankSummary {
    pub rank: u32,
    pub calls: u64,
    pub compute_ns: u64,
    pub mpi_ns: u64,
    pub compute_fraction: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct PointToPoint {
    pub messages: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub trace: String,
    pub ranks: u32,
    pub measured_seconds: f64,
    pub communicators: usize,
    /// Calls by name (summed over the ranks).
    pub calls: BTreeMap<String, u64>,
    pub calls_by_kind: BTreeMap<Kind, u64>,
    /// Each call name's kind.
    pub call_kinds: BTreeMap<String, Kind>,
    pub point_to_point: PointToPoint,
    /// Collective calls by operation, summed over the ranks taking part.
    pub collectives: BTreeMap<&'static str, CollectiveCount>,
    pub compute_fraction: f64,
    pub per_rank: Vec<RankSummary>,
    /// Bytes rank i sent rank j.
    pub matrix_bytes: Vec<Vec<u64>>,
    /// Calls the replay refuses, with the ranks that made them.
    pub refused_calls: BTreeMap<String, Vec<u32>>,
    pub receives: u64,
}

pub fn summarise(t: &Trace) -> Summary {
    let n = t.ranks as usize;
    // Per call name (index into the trace's names): calls, kind, and
    // whether it is MPI_Init* (counted per index, named at the end: a
    // trace holds millions of calls and a few dozen names).
    let mut per_name = vec![0u64; t.names.len()];
    let classes: Vec<(Kind, bool)> = t.names.iter().map(|n| (kind(n), n.starts_with("MPI_Init"))).collect();
    let mut refused: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut matrix = vec![vec![0u64; n]; n];
    let (mut messages, mut bytes, mut receives) = (0u64, 0u64, 0u64);
    let mut coll: BTreeMap<&'static str, CollectiveCount> = BTreeMap::new();
    let mut per_rank = Vec::with_capacity(n);
    for (r, cs) in t.calls.iter().enumerate() {
        let (mut mpi_ns, mut compute_ns) = (0u64, 0u64);
        let start = t.start_ns(r);
        let mut last = start;
        for c in cs {
            per_name[c.name as usize] += 1;
            let (k, init) = classes[c.name as usize];
            if k == Kind::Refused {
                let v = refused.entry(t.name(c).to_string()).or_default();
                if v.last() != Some(&(r as u32)) {
                    v.push(r as u32);
                }
            }
            if c.enter_ns >= start && !init {
                compute_ns += c.enter_ns.saturating_sub(last);
                mpi_ns += c.leave_ns.saturating_sub(c.enter_ns);
                last = c.leave_ns;
            }
            for rec in t.records_of(r, c) {
                match *rec {
                    Record::Send { peer, bytes: b, .. } => {
                        matrix[r][peer as usize] += b;
                        messages += 1;
                        bytes += b;
                    }
                    Record::Recv { .. } => receives += 1,
                    Record::Collective { op, sent, .. } => {
                        let e = coll.entry(collective_name(op)).or_default();
                        e.calls += 1;
                        e.bytes_sent += sent;
                    }
                    Record::Posted(_) | Record::SendDone(_) | Record::Cancelled(_) => {}
                }
            }
        }
        let total = compute_ns + mpi_ns;
        per_rank.push(RankSummary {
            rank: r as u32,
            calls: cs.len() as u64,
            compute_ns,
            mpi_ns,
            compute_fraction: if total > 0 { compute_ns as f64 / total as f64 } else { 0.0 },
        });
    }
    let mut calls: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_kind: BTreeMap<Kind, u64> = BTreeMap::new();
    for (i, &n) in per_name.iter().enumerate().filter(|(_, &n)| n > 0) {
        *calls.entry(t.names[i].clone()).or_default() += n;
        *by_kind.entry(classes[i].0).or_default() += n;
    }
    let all_compute: u64 = per_rank.iter().map(|p| p.compute_ns).sum();
    let all: u64 = per_rank.iter().map(|p| p.compute_ns + p.mpi_ns).sum();
    Summary {
        trace: t.path.clone(),
        ranks: t.ranks,
        measured_seconds: t.measured_ns() as f64 * 1e-9,
        communicators: t.comms.len(),
        call_kinds: calls.keys().map(|n| (n.clone(), kind(n))).collect(),
        calls,
        calls_by_kind: by_kind,
        point_to_point: PointToPoint { messages, bytes },
        collectives: coll,
        compute_fraction: all_compute as f64 / all.max(1) as f64,
        per_rank,
        matrix_bytes: matrix,
        refused_calls: refused,
        receives,
    }
}

/// A communication list: bytes per (source, destination) rank pair.
#[derive(Clone, Debug, Default)]
pub struct CommList {
    pub flows: BTreeMap<(u32, u32), u64>,
    pub point_to_point_bytes: u64,
    pub collective_bytes: u64,
}

/// A collective's messages: (source, destination, bytes) in its ranks.
type Sends = Vec<(u32, u32, u64)>;

/// The communication list of `t`: the point-to-point messages, and with
/// `collectives` each collective instance's messages under the algorithm
/// Open MPI would pick ([`tofusim_comm::library`]; no system is known here).
pub fn comm_list(t: &Trace, collectives: bool) -> Result<CommList, TraceError> {
    let mut flows: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let mut p2p = 0u64;
    for (r, cs) in t.calls.iter().enumerate() {
        for c in cs {
            for rec in t.records_of(r, c) {
                if let Record::Send { peer, bytes, .. } = *rec {
                    if peer != r as u32 {
                        *flows.entry((r as u32, peer)).or_default() += bytes;
                        p2p += bytes;
                    }
                }
            }
        }
    }
    let mut expanded = 0u64;
    if collectives {
        let mut cache: BTreeMap<(String, u32, u64, u32), Sends> = BTreeMap::new();
        for inst in instances(t)? {
            let n = inst.members.len() as u32;
            if inst.op == "create_handle" || inst.op == "destroy_handle" || n < 2 || inst.size_bytes == 0 {
                continue;
            }
            if !MODELLED.contains(&inst.op.as_str()) {
                return Err(TraceError::Content(format!(
                    "{}: rank {}: MPI collective {} has no schedule in tofusim (modelled: {}); use --collectives none for point-to-point only",
                    t.path,
                    inst.members[0],
                    inst.mpi_op,
                    MODELLED.join(", ")
                )));
            }
            let root = inst.root.unwrap_or(0);
            let key = (inst.op.clone(), n, inst.size_bytes, root);
            if !cache.contains_key(&key) {
                // No system here: Open MPI's rules, off a torus.
                let comm = tofusim_comm::library::Communicator { ranks: n, torus: false, trinary_trees: false, barrier_interface: false };
                let algo = tofusim_comm::library::Library::Openmpi.choose(&inst.op, inst.size_bytes, comm).expect("modelled").algorithm;
                let s = if tofusim_comm::mpi_collectives::OPERATIONS.iter().any(|(o, _)| *o == inst.op) {
                    tofusim_comm::mpi_collectives::build(&inst.op, algo, n, root, inst.size_bytes).map_err(|e| TraceError::Algorithm(e.message))?
                } else {
                    tofusim_comm::algorithms::build_named(&inst.op, algo, root, inst.size_bytes, tofusim_comm::Params::new(n, 0)).map_err(|e| TraceError::Algorithm(e.message))?
                };
                let sends = s
                    .programs
                    .iter()
                    .enumerate()
                    .flat_map(|(a, p)| p.steps.iter().filter_map(move |st| match &st.action {
                        Action::Send { peer, spans, .. } => Some((a as u32, *peer, total(spans) * ELEMENT_BYTES)),
                        _ => None,
                    }))
                    .collect();
                cache.insert(key.clone(), sends);
            }
            for &(a, b, bytes) in &cache[&key] {
                *flows.entry((inst.members[a as usize], inst.members[b as usize])).or_default() += bytes;
                expanded += bytes;
            }
        }
    }
    Ok(CommList { flows, point_to_point_bytes: p2p, collective_bytes: expanded })
}
