//! A trace's collectives as instances (one call of every member of a
//! communicator) and the schedules tofusim runs for them.
//!
//! MPI requires the members of a communicator to call its collectives in
//! the same order, so the k-th collective record of every member is one
//! instance. An instance's size comes from all its members' records, so a
//! writer's convention for the root's bytes (tofusim's tracer records the
//! buffers the call reads and writes; Score-P counts a root's bytes
//! differently) does not change it: a bcast's size is what a non-root
//! receives, a reduce's what a non-root sends, an allreduce's and an
//! allgather's what each rank sends, an alltoall's what each rank sends to
//! each other. The "v" variants are replayed as their regular form with
//! each rank's mean block (the per-rank counts are not in the standard
//! records).
//!
//! The algorithm each instance runs with is an MPI library's choice
//! ([`tofusim_comm::library`]).

use crate::TraceError;
use std::collections::BTreeMap;

use crate::trace::{collective_name, Record, Trace};

/// Operations tofusim has schedules for: its algorithm library's and the
/// timing-only schedules of `tofusim_comm::mpi_collectives`.
pub const MODELLED: &[&str] = &["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "scan", "exscan", "gather", "scatter", "reduce_scatter"];

/// A "v" variant's regular form.
fn regular(op: &str) -> &str {
    match op {
        "gatherv" => "gather",
        "scatterv" => "scatter",
        "allgatherv" => "allgather",
        "alltoallv" => "alltoall",
        "reduce_scatter_block" => "reduce_scatter",
        o => o,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// tofusim's operation (a "v" variant's regular form).
    pub op: String,
    /// The operation as the trace names it.
    pub mpi_op: &'static str,
    pub comm: u32,
    /// World ranks, in communicator order.
    pub members: Vec<u32>,
    /// Root within the communicator.
    pub root: Option<u32>,
    pub size_bytes: u64,
    /// Per member (same order): the index of its call in its call list.
    pub call_index: Vec<u32>,
}

/// (sent, received) of each member, root index.
fn size(op: &str, recs: &[(u64, u64)], root: Option<u32>) -> u64 {
    let n = recs.len().max(1) as u64;
    let others: Vec<(u64, u64)> = recs.iter().enumerate().filter(|(i, _)| Some(*i as u32) != root).map(|(_, r)| *r).collect();
    let others = if others.is_empty() { recs.to_vec() } else { others };
    let mean = |xs: &[u64]| xs.iter().sum::<u64>() / (xs.len().max(1) as u64);
    let sent = |v: &[(u64, u64)]| v.iter().map(|r| r.0).collect::<Vec<_>>();
    let received = |v: &[(u64, u64)]| v.iter().map(|r| r.1).collect::<Vec<_>>();
    let max = |xs: Vec<u64>| xs.into_iter().max().unwrap_or(0);
    match op {
        "bcast" | "scatter" => max(received(&others)),
        "reduce" | "gather" => max(sent(&others)),
        "allreduce" | "allgather" | "scan" | "exscan" => max(sent(recs)),
        "alltoall" => max(sent(recs)) / n,
        "gatherv" => mean(&sent(&others)),
        "scatterv" => mean(&received(&others)),
        "allgatherv" => mean(&sent(recs)),
        "alltoallv" => mean(&sent(recs)) / n,
        "reduce_scatter" => max(received(recs)),
        "reduce_scatter_block" => mean(&received(recs)),
        _ => 0,
    }
}

/// Every collective instance of `t`. A communicator whose members disagree
/// on the sequence (a different operation at the same position, or a
/// different number of calls) is an error.
pub fn instances(t: &Trace) -> Result<Vec<Instance>, TraceError> {
    // Per member: (call index, op, root, sent, received).
    type Entry = (u32, u8, Option<u32>, u64, u64);
    // (communicator, its members) -> per member its entries. A
    // MPI_COMM_SELF is each rank's own.
    let mut per_comm: BTreeMap<(u32, Vec<u32>), Vec<Vec<Entry>>> = BTreeMap::new();
    for (r, cs) in t.calls.iter().enumerate() {
        for (i, c) in cs.iter().enumerate() {
            for rec in t.records_of(r, c) {
                if let Record::Collective { op, comm, root, sent, received } = *rec {
                    let members = t.members(comm, r as u32);
                    let me = members.iter().position(|&m| m == r as u32).ok_or_else(|| {
                        TraceError::Content(format!("{}: rank {r} calls a collective on communicator {:?}, which it is not a member of", t.path, t.comm_name(comm)))
                    })?;
                    let n = members.len();
                    let lists = per_comm.entry((comm, members)).or_insert_with(|| vec![Vec::new(); n]);
                    lists[me].push((i as u32, op, root, sent, received));
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((comm, members), lists) in per_comm {
        let counts: std::collections::BTreeSet<usize> = lists.iter().map(Vec::len).collect();
        if counts.len() != 1 {
            return Err(TraceError::Content(format!(
                "{}: the members of communicator {:?} made different numbers of collective calls ({counts:?}); the trace is incomplete",
                t.path,
                t.comm_name(comm)
            )));
        }
        for k in 0..counts.into_iter().next().unwrap_or(0) {
            let entries: Vec<Entry> = lists.iter().map(|l| l[k]).collect();
            let op = entries[0].1;
            if entries.iter().any(|e| e.1 != op) {
                let ops: std::collections::BTreeSet<&str> = entries.iter().map(|e| collective_name(e.1)).collect();
                return Err(TraceError::Content(format!("{}: collective {k} of communicator {:?} is {ops:?} on different ranks", t.path, t.comm_name(comm))));
            }
            let root = entries[0].2;
            let mpi_op = collective_name(op);
            out.push(Instance {
                op: regular(mpi_op).to_string(),
                mpi_op,
                comm,
                members: members.clone(),
                root,
                size_bytes: size(mpi_op, &entries.iter().map(|e| (e.3, e.4)).collect::<Vec<_>>(), root),
                call_index: entries.iter().map(|e| e.0).collect(),
            });
        }
    }
    Ok(out)
}
