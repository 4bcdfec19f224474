//! Chakra execution traces (MLCommons; ASTRA-sim's input): one file per
//! rank, a `GlobalMetadata` message then `Node` messages, each prefixed
//! with its length as a varint. The messages are declared here from the
//! public schema (`schema/protobuf/et_def.proto`, package
//! `ChakraProtoMsg`): only the fields read or written; protobuf skips the
//! others.
//!
//! Read into a [`Schedule`]: a `COMP_NODE` is work of its duration (the
//! attribute `duration_ns` where present — tofusim writes it, as
//! `duration_micros` is whole microseconds — else `duration_micros`), a
//! `COMM_SEND_NODE` a send (`comm_dst`, `comm_size` bytes, `comm_tag`), a
//! `COMM_RECV_NODE` a receive (`comm_src`, `comm_size`, `comm_tag`), a
//! `METADATA_NODE` nothing; `ctrl_deps` and `data_deps` are waits for the
//! other node's end. A `COMM_COLL_NODE` (`comm_type`, `comm_size`,
//! `pg_name`) is a collective over every rank: each rank's k-th collective
//! node is the same call (checked), run under the algorithm `choose`
//! picks, its steps after the node's dependencies. Refused, naming the
//! rank's file and the node: collectives whose calls differ between ranks
//! (process groups other than the world are not read), memory, storage,
//! batch and checkpoint nodes, a dependency on a node the file does not
//! hold, a cycle.
//!
//! Written from a schedule as [`to_chakra`]: sends, receives and work as
//! the nodes above (peers and tags as `int32_val`, the size as
//! `int64_val`, dependencies as `data_deps`, as Chakra's converters write
//! them); local copies and summing receives' reductions as `COMP_NODE`s of
//! their time at the rates given (as in GOAL).

use prost::Message as _;

use crate::goal::LocalRates;
use crate::schedule::{Action, Combine, Rank, Schedule, Span, StepId};
use crate::{BuildError, Collective, ELEMENT_BYTES};

/// `GlobalMetadata` (et_def.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct GlobalMetadata {
    #[prost(string, tag = "1")]
    pub version: String,
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<AttributeProto>,
}

/// `AttributeProto` (et_def.proto): a name and one value; the value types
/// read here (integers, bool, double, string).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub doc_string: String,
    #[prost(oneof = "attribute::Value", tags = "3, 7, 9, 11, 13, 27, 29")]
    pub value: Option<attribute::Value>,
}

pub mod attribute {
    /// The values of `AttributeProto`'s `oneof value` read here.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        #[prost(double, tag = "3")]
        DoubleVal(f64),
        #[prost(int32, tag = "7")]
        Int32Val(i32),
        #[prost(int64, tag = "9")]
        Int64Val(i64),
        #[prost(uint32, tag = "11")]
        Uint32Val(u32),
        #[prost(uint64, tag = "13")]
        Uint64Val(u64),
        #[prost(bool, tag = "27")]
        BoolVal(bool),
        #[prost(string, tag = "29")]
        StringVal(String),
    }
}

/// `NodeType` (et_def.proto).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum NodeType {
    InvalidNode = 0,
    MetadataNode = 1,
    MemLoadNode = 2,
    MemStoreNode = 3,
    CompNode = 4,
    CommSendNode = 5,
    CommRecvNode = 6,
    CommCollNode = 7,
    StorageNode = 8,
    BatchNode = 9,
    CheckpointNode = 10,
}

/// `Node` (et_def.proto), the fields read or written.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(enumeration = "NodeType", tag = "3")]
    pub r#type: i32,
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    #[prost(uint64, tag = "6")]
    pub start_time_micros: u64,
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
}

/// The schema version written.
pub const VERSION: &str = "0.0.4";

fn bad(rank: usize, message: impl Into<String>) -> BuildError {
    BuildError { key: "chakra", message: format!("rank {rank}'s file: {}", message.into()) }
}

fn int_attr(n: &Node, name: &str) -> Option<i128> {
    use attribute::Value::*;
    n.attr.iter().find(|a| a.name == name).and_then(|a| match a.value.as_ref()? {
        Int32Val(v) => Some(*v as i128),
        Int64Val(v) => Some(*v as i128),
        Uint32Val(v) => Some(*v as i128),
        Uint64Val(v) => Some(*v as i128),
        _ => None,
    })
}

fn int64(name: &str, v: i128) -> AttributeProto {
    AttributeProto { name: name.into(), doc_string: String::new(), value: Some(attribute::Value::Int64Val(v as i64)) }
}

/// Peers and tags are `int32_val`, as Chakra's converters write them and
/// its feeder reads them.
fn int32(name: &str, v: u32) -> AttributeProto {
    AttributeProto { name: name.into(), doc_string: String::new(), value: Some(attribute::Value::Int32Val(v as i32)) }
}

fn not_cpu() -> AttributeProto {
    AttributeProto { name: "is_cpu_op".into(), doc_string: String::new(), value: Some(attribute::Value::BoolVal(false)) }
}

/// One rank's file: its metadata and nodes.
fn decode(rank: usize, mut bytes: &[u8]) -> Result<(GlobalMetadata, Vec<Node>), BuildError> {
    let meta = GlobalMetadata::decode_length_delimited(&mut bytes).map_err(|e| bad(rank, format!("expected a length-prefixed GlobalMetadata first: {e}")))?;
    let mut nodes = Vec::new();
    while !bytes.is_empty() {
        let n = Node::decode_length_delimited(&mut bytes).map_err(|e| bad(rank, format!("node {} is not a length-prefixed Node: {e}", nodes.len())))?;
        nodes.push(n);
        if nodes.len() as u64 > crate::schedule::MAX_GIVEN_STEPS {
            return Err(bad(rank, format!("more than {} nodes", crate::schedule::MAX_GIVEN_STEPS)));
        }
    }
    Ok((meta, nodes))
}

enum Op {
    Send { peer: u32, bytes: u64, tag: u32 },
    Recv { peer: u32, bytes: u64, tag: u32 },
    Work { ns: u64 },
    /// The rank's k-th collective node (every rank's k-th is the same
    /// call: [`from_chakra`] checks).
    Coll { k: usize },
    Nothing,
}

/// A collective node: its operation, size and process group.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CollCall {
    op: crate::Operation,
    bytes: u64,
    group: String,
}

/// `CollectiveCommType` (et_def.proto) as the operation it is.
fn operation(comm_type: i128) -> Option<crate::Operation> {
    use crate::Operation::*;
    Some(match comm_type {
        0 => Allreduce,
        1 => Reduce,
        2 => Allgather,
        3 => Gather,
        4 => Scatter,
        5 => Bcast,
        6 => Alltoall,
        7 | 8 => ReduceScatter,
        9 => Barrier,
        _ => return None,
    })
}

/// Tags of collective calls start here (a file's own tags stay below).
pub const COLLECTIVE_TAGS: u32 = 0xC000_0000;

/// Chooses a collective call's algorithm: (operation, bytes, ranks) to
/// the algorithm (the MPI library's rule on the system it runs on).
pub type Chooser<'a> = &'a dyn Fn(crate::Operation, u64, u32) -> crate::Algorithm;

/// The ranks' files (rank i's bytes at index i) as a schedule of
/// `Transfers`; `tnis` as for GOAL (a send's TNI is 0 here: Chakra does
/// not name one).
pub fn from_chakra(files: &[Vec<u8>], choose: Chooser<'_>) -> Result<Schedule, BuildError> {
    let ranks = files.len();
    if ranks == 0 || ranks as u64 > crate::schedule::MAX_GIVEN_RANKS as u64 {
        return Err(BuildError { key: "chakra", message: format!("expected 1 to {} rank files, found {ranks}", crate::schedule::MAX_GIVEN_RANKS) });
    }
    let mut per_rank = Vec::with_capacity(ranks);
    let mut count = 1u64;
    let mut steps = 0u64;
    let mut calls: Vec<Vec<CollCall>> = vec![Vec::new(); ranks];
    for (r, bytes) in files.iter().enumerate() {
        let (_, nodes) = decode(r, bytes)?;
        let mut ops = Vec::with_capacity(nodes.len());
        let mut index = std::collections::HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if index.insert(n.id, i).is_some() {
                return Err(bad(r, format!("node id {} appears twice", n.id)));
            }
            let what = |key: &str| -> Result<i128, BuildError> { int_attr(n, key).ok_or_else(|| bad(r, format!("node {} ({:?}) has no integer attribute {key}", n.id, n.name))) };
            let peer = |key: &str| -> Result<u32, BuildError> {
                let p = what(key)?;
                if p < 0 || p >= ranks as i128 || p == r as i128 {
                    return Err(bad(r, format!("node {}: {key} {p} is not another of the {ranks} ranks", n.id)));
                }
                Ok(p as u32)
            };
            let size = || -> Result<u64, BuildError> {
                let s = what("comm_size")?;
                u64::try_from(s).ok().filter(|&b| b <= crate::goal::MAX_MESSAGE_BYTES).ok_or_else(|| bad(r, format!("node {}: comm_size {s} is not a size in bytes up to {}", n.id, crate::goal::MAX_MESSAGE_BYTES)))
            };
            // Tags are int32 in Chakra: tofusim's 32-bit tags are written
            // bit for bit (above 2^31 they read as negative int32).
            let tag = || -> Result<u32, BuildError> {
                match n.attr.iter().find(|a| a.name == "comm_tag").and_then(|a| a.value.as_ref()) {
                    None => Ok(0),
                    Some(attribute::Value::Int32Val(v)) => Ok(*v as u32),
                    Some(_) => u32::try_from(int_attr(n, "comm_tag").unwrap_or(-1)).map_err(|_| bad(r, format!("node {}: comm_tag is not a 32-bit tag", n.id))),
                }
            };
            let op = match NodeType::try_from(n.r#type) {
                Ok(NodeType::CompNode) => {
                    let ns = int_attr(n, "duration_ns").map_or(n.duration_micros as i128 * 1000, |v| v);
                    if !(0..=crate::goal::MAX_CALC_NS as i128).contains(&ns) {
                        return Err(bad(r, format!("node {}: a computation of {ns} ns; expected 0 to {} ns", n.id, crate::goal::MAX_CALC_NS)));
                    }
                    steps += crate::goal::work_steps(ns as u64) - 1;
                    Op::Work { ns: ns as u64 }
                }
                Ok(NodeType::CommSendNode) => Op::Send { peer: peer("comm_dst")?, bytes: size()?, tag: tag()? },
                Ok(NodeType::CommRecvNode) => Op::Recv { peer: peer("comm_src")?, bytes: size()?, tag: tag()? },
                Ok(NodeType::MetadataNode) => Op::Nothing,
                Ok(NodeType::CommCollNode) => {
                    let t = what("comm_type")?;
                    let op = operation(t).ok_or_else(|| bad(r, format!("node {}: comm_type {t} is not a collective of et_def.proto", n.id)))?;
                    let bytes = if op == crate::Operation::Barrier { 0 } else { size()? };
                    let group = n.attr.iter().find(|a| a.name == "pg_name").and_then(|a| match &a.value {
                        Some(attribute::Value::StringVal(g)) => Some(g.clone()),
                        _ => None,
                    });
                    calls[r].push(CollCall { op, bytes, group: group.unwrap_or_default() });
                    Op::Coll { k: calls[r].len() - 1 }
                }
                Ok(other) => return Err(bad(r, format!("node {} is a {other:?}, which is not modelled (compute, send, receive and metadata nodes are)", n.id))),
                Err(_) => return Err(bad(r, format!("node {} has an unknown type {}", n.id, n.r#type))),
            };
            if let Op::Send { bytes, .. } | Op::Recv { bytes, .. } = op {
                count = count.max(bytes.div_ceil(ELEMENT_BYTES));
            }
            steps += 1;
            if steps > crate::schedule::MAX_GIVEN_STEPS {
                return Err(bad(r, format!("the files hold more than {} steps", crate::schedule::MAX_GIVEN_STEPS)));
            }
            ops.push(op);
        }
        let mut needs: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
        for n in &nodes {
            let mut v = Vec::new();
            for d in n.ctrl_deps.iter().chain(&n.data_deps) {
                v.push(*index.get(d).ok_or_else(|| bad(r, format!("node {} depends on node {d}, which the file does not hold", n.id)))?);
            }
            v.sort_unstable();
            v.dedup();
            needs.push(v);
        }
        per_rank.push((ops, needs));
    }
    // Every rank makes the same collective calls in the same order.
    for (r, c) in calls.iter().enumerate().skip(1) {
        if let Some(k) = (0..c.len().max(calls[0].len())).find(|&k| c.get(k) != calls[0].get(k)) {
            return Err(bad(r, format!("its collective call {k} ({:?}) is not rank 0's ({:?}): only collectives over every rank are read", c.get(k), calls[0].get(k))));
        }
    }
    // Each distinct call's schedule over every rank, built once.
    let mut built: std::collections::HashMap<(crate::Operation, u64), Schedule> = Default::default();
    let mut buffer = count;
    for c in &calls[0] {
        if let std::collections::hash_map::Entry::Vacant(e) = built.entry((c.op, c.bytes)) {
            let a = choose(c.op, c.bytes, ranks as u32);
            let sched = crate::algorithms::build_sized(c.op, a, 0, c.bytes.max(1), crate::Params::new(ranks as u32, 0)).map_err(|err| bad(0, format!("{} of {} B under {a}: {}", c.op, c.bytes, err.message)))?;
            steps = steps.saturating_add(sched.programs.iter().map(|p| p.steps.len() as u64).sum::<u64>());
            buffer = buffer.max(sched.buffer_elements);
            e.insert(sched);
        }
    }
    if steps.saturating_mul(1) > crate::schedule::MAX_GIVEN_STEPS.saturating_mul(4) {
        return Err(BuildError { key: "chakra", message: format!("the files' collectives hold more than {} steps", crate::schedule::MAX_GIVEN_STEPS) });
    }
    let mut s = Schedule::new(Collective::Transfers, crate::schedule::GIVEN, ranks as u32, count);
    s.buffer_elements = buffer;
    // A collective's ranks are the world's.
    let world: Vec<Rank> = (0..ranks as Rank).collect();
    for (r, (ops, needs)) in per_rank.into_iter().enumerate() {
        let order = crate::goal::topological(ops.len(), |a| needs[a].clone()).ok_or_else(|| bad(r, "the dependencies form a cycle"))?;
        let mut step_of: Vec<Option<StepId>> = vec![None; ops.len()];
        // A node that is nothing (metadata) passes on what it waits for.
        let mut waits_of: Vec<Vec<StepId>> = vec![Vec::new(); ops.len()];
        for &a in &order {
            let mut deps: Vec<StepId> = Vec::new();
            for &b in &needs[a] {
                match step_of[b] {
                    Some(st) => deps.push(st),
                    None => deps.extend(waits_of[b].iter().copied()),
                }
            }
            deps.sort_unstable();
            deps.dedup();
            let rank = r as Rank;
            let spans = |b: u64| if b == 0 { Vec::new() } else { vec![Span::new(0, b.div_ceil(ELEMENT_BYTES))] };
            step_of[a] = match &ops[a] {
                Op::Send { peer, bytes, tag } => {
                    let st = s.send(rank, *peer, spans(*bytes), 0, &deps);
                    s.set_tag(rank, st, *tag);
                    Some(st)
                }
                Op::Recv { peer, bytes, tag } => {
                    let st = s.recv(rank, *peer, spans(*bytes), Combine::Replace, &deps);
                    s.set_tag(rank, st, *tag);
                    Some(st)
                }
                Op::Work { ns } => Some(s.work_ns(rank, *ns, &deps)),
                Op::Coll { k } => {
                    let c = &calls[r][*k];
                    let sched = &built[&(c.op, c.bytes)];
                    Some(crate::replay::embed(&mut s, rank, &sched.programs[r].steps, &world, COLLECTIVE_TAGS.wrapping_add(*k as u32), &deps))
                }
                Op::Nothing => {
                    waits_of[a] = deps;
                    None
                }
            };
        }
    }
    s.shrink_to_fit();
    s.validate().map_err(|e| BuildError { key: "chakra", message: e.0 })?;
    Ok(s)
}

/// `s` as Chakra files, one per rank (rank i's at index i).
pub fn to_chakra(s: &Schedule, rates: LocalRates) -> Result<Vec<Vec<u8>>, BuildError> {
    let ns = |bytes: u64, rate: f64| if rate > 0.0 { (bytes as f64 / rate).round() as u64 } else { 0 };
    let comp = |id: u64, name: String, ns: u64, deps: Vec<u64>| Node {
        id,
        name,
        r#type: NodeType::CompNode as i32,
        data_deps: deps,
        duration_micros: ns / 1000,
        attr: vec![AttributeProto { name: "duration_ns".into(), doc_string: "tofusim: the duration in ns (duration_micros rounds it down)".into(), value: Some(attribute::Value::Uint64Val(ns)) }],
        ..Default::default()
    };
    let mut files = Vec::with_capacity(s.programs.len());
    for (r, p) in s.programs.iter().enumerate() {
        let mut out = Vec::new();
        let meta = GlobalMetadata { version: VERSION.into(), attr: vec![AttributeProto { name: "schedule".into(), doc_string: String::new(), value: Some(attribute::Value::StringVal(format!("{} / {}, rank {r} of {}, written by tofusim", s.collective.name(), s.algorithm, s.ranks))) }] };
        meta.encode_length_delimited(&mut out).expect("a Vec grows");
        // A step's node id: its index; a summing receive's reduction is a
        // compute node with the id after the last step's.
        let mut last_of: Vec<u64> = Vec::with_capacity(p.steps.len());
        let mut extra = p.steps.len() as u64;
        for (i, st) in p.steps.iter().enumerate() {
            let id = i as u64;
            let deps: Vec<u64> = st.deps.iter().map(|&d| last_of[d as usize]).collect();
            let mut last = id;
            let node = match &st.action {
                Action::Send { peer, spans, pace, offload, tag, .. } => {
                    if *offload || *pace > 1 {
                        return Err(bad(r, format!("step {i}: an offloaded or paced send has no Chakra form")));
                    }
                    let bytes = crate::schedule::total(spans) * ELEMENT_BYTES;
                    Node { id, name: format!("send to {peer}"), r#type: NodeType::CommSendNode as i32, data_deps: deps, attr: vec![int32("comm_dst", *peer), int64("comm_size", bytes as i128), int32("comm_tag", *tag), not_cpu()], ..Default::default() }
                }
                Action::Recv { peer, spans, combine, offload, tag } => {
                    if *offload {
                        return Err(bad(r, format!("step {i}: an offloaded receive has no Chakra form")));
                    }
                    let bytes = crate::schedule::total(spans) * ELEMENT_BYTES;
                    let recv = Node { id, name: format!("recv from {peer}"), r#type: NodeType::CommRecvNode as i32, data_deps: deps, attr: vec![int32("comm_src", *peer), int64("comm_size", bytes as i128), int32("comm_tag", *tag), not_cpu()], ..Default::default() };
                    if *combine == Combine::Sum {
                        recv.encode_length_delimited(&mut out).expect("a Vec grows");
                        last = extra;
                        extra += 1;
                        comp(last, format!("reduce {bytes} B"), ns(bytes, rates.reduce_bytes_per_ns), vec![id])
                    } else {
                        recv
                    }
                }
                Action::Copy(c) => {
                    let bytes = crate::schedule::total(&c.from) * ELEMENT_BYTES;
                    comp(id, format!("copy {bytes} B"), ns(bytes, rates.copy_bytes_per_ns), deps)
                }
                Action::Work { ns } => comp(id, "work".into(), *ns as u64, deps),
            };
            node.encode_length_delimited(&mut out).expect("a Vec grows");
            last_of.push(last);
        }
        files.push(out);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::build_named;
    use crate::Params;

    fn ring(_: crate::Operation, _: u64, _: u32) -> crate::Algorithm {
        crate::Algorithm::Ring
    }

    #[test]
    fn collective_nodes_run_the_chosen_algorithm_over_every_rank() {
        let file = |r: u32| {
            let mut out = Vec::new();
            GlobalMetadata::default().encode_length_delimited(&mut out).unwrap();
            let comp = Node { id: 1, r#type: NodeType::CompNode as i32, duration_micros: 5, ..Default::default() };
            let coll = Node { id: 2, r#type: NodeType::CommCollNode as i32, data_deps: vec![1], attr: vec![int64("comm_type", 0), int64("comm_size", 65536)], ..Default::default() };
            let after = Node { id: 3, r#type: NodeType::CompNode as i32, data_deps: vec![2], duration_micros: r as u64, ..Default::default() };
            for n in [comp, coll, after] {
                n.encode_length_delimited(&mut out).unwrap();
            }
            out
        };
        let s = from_chakra(&(0..4).map(file).collect::<Vec<_>>(), &ring).unwrap();
        let alone = crate::algorithms::build_named("allreduce", "ring", 0, 65536, crate::Params::new(4, 0)).unwrap();
        assert_eq!((s.messages(), s.bytes_sent()), (alone.messages(), alone.bytes_sent()));
        s.validate().unwrap();
        // A rank whose call differs is refused.
        let mut files: Vec<Vec<u8>> = (0..4).map(file).collect();
        let mut odd = Vec::new();
        GlobalMetadata::default().encode_length_delimited(&mut odd).unwrap();
        Node { id: 2, r#type: NodeType::CommCollNode as i32, attr: vec![int64("comm_type", 5), int64("comm_size", 8)], ..Default::default() }.encode_length_delimited(&mut odd).unwrap();
        files[3] = odd;
        let e = from_chakra(&files, &ring).unwrap_err();
        assert!(e.message.contains("rank 3") && e.message.contains("collective call 0"), "{}", e.message);
    }

    #[test]
    fn a_schedule_through_chakra_is_the_schedule_through_goal() {
        let rates = LocalRates { copy_bytes_per_ns: 4.0, reduce_bytes_per_ns: 2.0 };
        for (op, algo) in [("allreduce", "ring"), ("alltoall", "bruck"), ("bcast", "binomial"), ("barrier", "dissemination")] {
            let s = build_named(op, algo, 0, 1000, Params::new(6, 0)).unwrap();
            let chakra = from_chakra(&to_chakra(&s, rates).unwrap(), &ring).unwrap();
            let goal = crate::goal::from_goal(&crate::goal::to_goal(&s, rates).unwrap(), 1).unwrap();
            assert_eq!(chakra.messages(), s.messages(), "{op} {algo}");
            // Both forms of one schedule read back alike, step for step.
            assert_eq!(format!("{:?}", chakra.programs), format!("{:?}", goal.programs), "{op} {algo}");
        }
    }

    #[test]
    fn memory_and_unknown_nodes_are_refused_naming_the_rank() {
        let node = |t: NodeType| Node { id: 1, r#type: t as i32, ..Default::default() };
        let file = |n: Node| {
            let mut out = Vec::new();
            GlobalMetadata::default().encode_length_delimited(&mut out).unwrap();
            n.encode_length_delimited(&mut out).unwrap();
            out
        };
        let e = from_chakra(&[file(node(NodeType::MemLoadNode)), file(node(NodeType::MetadataNode))], &ring).unwrap_err();
        assert!(e.message.contains("rank 0") && e.message.contains("MemLoadNode"), "{}", e.message);
        let mut dep = node(NodeType::CompNode);
        dep.ctrl_deps = vec![9];
        let e = from_chakra(&[file(dep), file(node(NodeType::MetadataNode))], &ring).unwrap_err();
        assert!(e.message.contains("node 9"), "{}", e.message);
        assert!(from_chakra(&[vec![0xff, 0xff]], &ring).is_err());
    }
}
