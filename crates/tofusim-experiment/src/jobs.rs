//! Many jobs on one machine (`tofusim jobs MIX.toml`): a mix of jobs, each
//! a workload over its own ranks, placed on the machine's nodes by an
//! allocation policy and run together on one network; then each job alone
//! on the same nodes, so that its slowdown in the mix, and the links it
//! shared with which other jobs, can be read off.
//!
//! Policies: `contiguous` (the system's node order, first fit; on a
//! dragonfly `group-compact`, on a fat-tree `leaf-compact`: the same order
//! is group- or leaf-major), `random` (a seeded permutation),
//! `group-spread` (dragonfly: round robin over the groups) and `tofu-rect`
//! (a Tofu machine: each job a rectangular XYZ block whole in ABC carrying
//! its virtual torus, rotated and padded as asked: [S:003], the allocator
//! of `tofusim alloc`).
//!
//! Workloads: a `collective` repeated (the library's algorithm unless one
//! is named), a `halo` exchange on a periodic grid of ranks, and a
//! `pattern` of messages to uniformly random ranks of the job. A job may
//! arrive later than the others (`arrival_us`): its ranks wait that long.

use std::collections::{BTreeMap, HashMap};

use rand::{RngExt, SeedableRng};
use tofusim_routing::Rng as Pcg64;
use serde::Serialize;
use tofusim_comm::exec::lockstep;
use tofusim_comm::schedule::{Combine, Span};
use tofusim_comm::tree::Grid;
use tofusim_comm::{Collective, Schedule};
use tofusim_packet::RunParams;
use tofusim_topology::Topology;

use crate::build::Setup;
use crate::collective::{schedule_engine, schedule_on, settle, CollectiveSpec};
use crate::communicators::{as_group, Group};
use crate::comm_model::Modes;
use crate::error::{ConfigError, Result};
use crate::section::Section;

/// Most jobs a mix may hold.
pub const MAX_JOBS: usize = 256;

/// How the jobs' nodes are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The system's node order, each job the next free nodes.
    Contiguous,
    /// A seeded permutation of the nodes, each job the next ones.
    Random,
    /// Dragonfly: the nodes dealt round robin over the groups.
    GroupSpread,
    /// Tofu: each job a rectangular block, whole in ABC.
    TofuRect { rotation: bool, padding: bool },
}

impl Placement {
    pub const NAMES: [&'static str; 6] = ["contiguous", "group-compact", "leaf-compact", "random", "group-spread", "tofu-rect"];
}

/// What a job runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// One collective over the job's ranks, `repeat` times in a row.
    Collective { op: String, algo: Option<String>, size_bytes: u64, repeat: u32 },
    /// Every rank sends `bytes` to each neighbour of a periodic grid and
    /// receives from each, `iterations` times (each after the last's
    /// receives).
    Halo { grid: Vec<u32>, bytes: u64, iterations: u32 },
    /// Every rank sends `messages` messages of `bytes` to ranks of the job
    /// drawn uniformly (seeded), all posted at once.
    Pattern { bytes: u64, messages: u32 },
    /// Open-loop background traffic: every rank sends `bytes` to a rank
    /// drawn uniformly at `load` of its node's injection bandwidth (a
    /// message every bytes / (load × rate), whatever the network does),
    /// for `duration_ns`.
    Background { bytes: u64, load: f64, duration_ns: u64 },
    /// A recorded MPI program (an OTF2 trace directory), replayed under
    /// the system's MPI software: its calls, messages, collectives and
    /// computation.
    Trace { path: String },
}

impl Workload {
    fn kind(&self) -> &'static str {
        match self {
            Workload::Collective { .. } => "collective",
            Workload::Halo { .. } => "halo",
            Workload::Pattern { .. } => "pattern",
            Workload::Background { .. } => "background",
            Workload::Trace { .. } => "trace",
        }
    }
}

/// One job of a mix.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    pub workload: Workload,
    pub nodes: u32,
    /// The job's virtual torus of nodes (`tofu-rect` needs it).
    pub shape: Option<Vec<u32>>,
    pub ranks_per_node: u32,
    pub arrival_ns: u64,
}

impl Job {
    fn ranks(&self) -> u32 {
        self.nodes * self.ranks_per_node
    }
}

/// A mix as a file describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Mix {
    pub system: String,
    /// The packet engine, or the flow model event by event or in lockstep
    /// rounds (`Flow`: events for a mix of at most
    /// [`MAX_EVENT_MESSAGES`] messages, rounds above).
    pub model: crate::collective::Model,
    /// As the file names it (`group-compact`, `leaf-compact` and
    /// `contiguous` are one order, checked against the topology).
    pub policy: String,
    pub placement: Placement,
    pub seed: u64,
    pub jobs: Vec<Job>,
}

fn parse_shape(sec: &Section<'_>, key: &str, text: &str) -> Result<Vec<u32>> {
    let v: Option<Vec<u32>> = text.split('x').map(|p| p.trim().parse().ok().filter(|&x: &u32| x > 0)).collect();
    match v {
        Some(v) if (1..=3).contains(&v.len()) && v.iter().map(|&x| x as u64).product::<u64>() <= 1 << 24 => Ok(v),
        _ => Err(sec.error(key, format!("expected 1 to 3 positive lengths like \"4x6x2\", found {text:?}"))),
    }
}

fn whole_bytes(sec: &Section<'_>, key: &str) -> Result<Option<u64>> {
    match sec.size(key)? {
        None => Ok(None),
        Some(b) if b >= 1.0 && b <= (1u64 << 40) as f64 => Ok(Some(b.ceil() as u64)),
        Some(b) => Err(sec.error(key, format!("expected 1 B to 1 TiB, found {b} B"))),
    }
}

impl Mix {
    /// A mix file (`file` names it in errors): `system`, `placement`
    /// (`rotation`, `padding` with `tofu-rect`), `seed`, and `[[job]]`
    /// tables. Every key is read or refused.
    pub fn parse(file: &str, text: &str) -> Result<Mix> {
        let doc = crate::system::parse_toml(file, text)?;
        let top = Section::new(file, "", &doc);
        let system = top.string("system")?.ok_or_else(|| top.error("system", "expected the system the jobs share, e.g. \"k:8x9x8\""))?;
        let name = top.choice("placement", &Placement::NAMES)?.unwrap_or_else(|| "contiguous".into());
        let rotation = top.boolean("rotation")?;
        let padding = top.boolean("padding")?;
        if name != "tofu-rect" {
            for (key, v) in [("rotation", rotation), ("padding", padding)] {
                if v.is_some() {
                    return Err(top.error(key, format!("a tofu-rect setting; placement is {name}")));
                }
            }
        }
        let placement = match name.as_str() {
            "contiguous" | "group-compact" | "leaf-compact" => Placement::Contiguous,
            "random" => Placement::Random,
            "group-spread" => Placement::GroupSpread,
            _ => Placement::TofuRect { rotation: rotation.unwrap_or(true), padding: padding.unwrap_or(false) },
        };
        let seed = top.int("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
        let model = match top.choice("model", &["packet", "flow", "flow-events", "flow-rounds"])?.as_deref() {
            None | Some("packet") => crate::collective::Model::Packet,
            Some("flow") => crate::collective::Model::Flow,
            Some("flow-events") => crate::collective::Model::FlowEvents,
            _ => crate::collective::Model::FlowRounds,
        };
        let tables = top.tables("job", "[[job]] kind = \"halo\"")?;
        top.finish(&["system", "placement", "rotation", "padding", "seed", "model", "job"])?;
        if tables.is_empty() || tables.len() > MAX_JOBS {
            return Err(top.error("job", format!("expected 1 to {MAX_JOBS} [[job]] tables, found {}", tables.len())));
        }
        let jobs = tables.iter().enumerate().map(|(i, t)| parse_job(t, i)).collect::<Result<Vec<_>>>()?;
        let mut names = std::collections::HashSet::new();
        for (i, j) in jobs.iter().enumerate() {
            if !names.insert(j.name.clone()) {
                return Err(tables[i].error("name", format!("{:?} names two jobs", j.name)));
            }
        }
        Ok(Mix { system, model, policy: name, placement, seed, jobs })
    }
}

fn parse_job(t: &Section<'_>, i: usize) -> Result<Job> {
    let name = t.string("name")?.unwrap_or_else(|| format!("job{i}"));
    let kind = t.choice("kind", &["collective", "halo", "pattern", "background", "trace"])?.ok_or_else(|| t.error("kind", "expected collective, halo, pattern, background or trace"))?;
    let shape = t.string("shape")?.map(|s| parse_shape(t, "shape", &s)).transpose()?;
    let nodes = t.int("nodes", 1, 1 << 24)?.map(|n| n as u32);
    let nodes = match (nodes, &shape) {
        (Some(n), Some(s)) if s.iter().product::<u32>() != n => return Err(t.error("nodes", format!("{n} nodes, but shape {s:?} holds {}", s.iter().product::<u32>()))),
        (Some(n), _) => n,
        (None, Some(s)) => s.iter().product(),
        (None, None) => return Err(t.error("nodes", "expected the job's node count (nodes = 64) or its shape (shape = \"4x4x4\")")),
    };
    let ranks_per_node = t.int("ppn", 1, crate::rank_placement::MAX_RANKS_PER_NODE as i64)?.unwrap_or(1) as u32;
    let arrival_ns = (t.float("arrival_us", 0.0, 1e9)?.unwrap_or(0.0) * 1000.0).round() as u64;
    let mut keys = vec!["name", "kind", "shape", "nodes", "ppn", "arrival_us"];
    let workload = match kind.as_str() {
        "collective" => {
            keys.extend(["op", "algo", "size", "repeat"]);
            let op = t.string("op")?.ok_or_else(|| t.error("op", "expected the operation, e.g. \"allreduce\""))?;
            Workload::Collective {
                op,
                algo: t.string("algo")?,
                size_bytes: whole_bytes(t, "size")?.unwrap_or(8),
                repeat: t.int("repeat", 1, 1_000_000)?.unwrap_or(1) as u32,
            }
        }
        "halo" => {
            keys.extend(["grid", "bytes", "iterations"]);
            let grid = match t.string("grid")? {
                Some(g) => parse_shape(t, "grid", &g)?,
                None => match &shape {
                    Some(s) if ranks_per_node == 1 => s.clone(),
                    _ => return Err(t.error("grid", "expected the ranks' grid, e.g. \"8x8\" (the job's shape stands in only with one rank per node)")),
                },
            };
            let ranks = nodes as u64 * ranks_per_node as u64;
            if grid.iter().map(|&x| x as u64).product::<u64>() != ranks {
                return Err(t.error("grid", format!("{grid:?} holds {} ranks; the job has {ranks}", grid.iter().map(|&x| x as u64).product::<u64>())));
            }
            Workload::Halo { grid, bytes: whole_bytes(t, "bytes")?.unwrap_or(8), iterations: t.int("iterations", 1, 1_000_000)?.unwrap_or(1) as u32 }
        }
        "pattern" => {
            keys.extend(["bytes", "messages"]);
            Workload::Pattern { bytes: whole_bytes(t, "bytes")?.unwrap_or(8), messages: t.int("messages", 1, 1_000_000)?.unwrap_or(1) as u32 }
        }
        "trace" => {
            keys.push("path");
            let path = t.string("path")?.ok_or_else(|| t.error("path", "expected the OTF2 trace's directory (tofusim trace record --out)"))?;
            // Relative to the mix file, as a user writes it beside it.
            let path = match std::path::Path::new(t.file()).parent() {
                Some(dir) if std::path::Path::new(&path).is_relative() && !dir.as_os_str().is_empty() => dir.join(&path).display().to_string(),
                _ => path,
            };
            let ranks = crate::traces::trace_ranks(&path).map_err(|e| t.error("path", e.to_string()))?;
            if ranks as u64 != nodes as u64 * ranks_per_node as u64 {
                return Err(t.error("nodes", format!("the trace has {ranks} ranks; nodes × ppn is {}", nodes as u64 * ranks_per_node as u64)));
            }
            Workload::Trace { path }
        }
        _ => {
            keys.extend(["bytes", "load", "duration_us"]);
            let load = t.float("load", 1e-6, 1.0)?.ok_or_else(|| t.error("load", "expected the fraction of each node's injection bandwidth it sends at, e.g. 0.3"))?;
            let duration = t.float("duration_us", 1e-3, 1e7)?.ok_or_else(|| t.error("duration_us", "expected how long it sends, µs"))?;
            Workload::Background { bytes: whole_bytes(t, "bytes")?.unwrap_or(4096), load, duration_ns: (duration * 1000.0).round() as u64 }
        }
    };
    t.finish(&keys)?;
    let ranks = nodes as u64 * ranks_per_node as u64;
    if !(2..=1 << 24).contains(&ranks) {
        return Err(t.error("nodes", format!("expected a job of 2 to 2^24 ranks (nodes × ppn), found {ranks}")));
    }
    Ok(Job { name, workload, nodes, shape, ranks_per_node, arrival_ns })
}

/// Each job's nodes (one per node of the job, in its rank order), and how
/// it was placed (`block 4x3x2 at (0, 0, 0), rotated`).
fn place(mix: &Mix, s: &Setup, file: &str) -> Result<Vec<(Vec<u32>, Option<Grid>, String)>> {
    let refuse = |message: String| ConfigError::new(file, "placement", message);
    let topology = &s.built.system.network.topology;
    let wanted: u64 = mix.jobs.iter().map(|j| j.nodes as u64).sum();
    let order: Vec<u32> = s.node_of_rank.clone();
    if wanted > order.len() as u64 {
        return Err(refuse(format!("the jobs ask for {wanted} nodes; {} has {}", mix.system, order.len())));
    }
    let take = |order: &[u32], how: &dyn Fn(&[u32]) -> String| {
        let mut at = 0usize;
        mix.jobs
            .iter()
            .map(|j| {
                let nodes = order[at..at + j.nodes as usize].to_vec();
                at += j.nodes as usize;
                let said = how(&nodes);
                (nodes, None, said)
            })
            .collect::<Vec<_>>()
    };
    let named_for = match mix.policy.as_str() {
        "group-compact" | "group-spread" => Some(("a dragonfly's groups", matches!(topology, Topology::Dragonfly(_)))),
        "leaf-compact" => Some(("a fat-tree's leaf switches", matches!(topology, Topology::FatTree(_)))),
        _ => None,
    };
    if let Some((what, true_)) = named_for {
        if !true_ {
            return Err(refuse(format!("{} fills {what}; {} has none (contiguous or random place jobs on any system)", mix.policy, mix.system)));
        }
    }
    Ok(match mix.placement {
        Placement::Contiguous => {
            // The system's order: a node's position in it.
            let mut position = HashMap::new();
            for (i, &n) in order.iter().enumerate() {
                position.insert(n, i);
            }
            take(&order, &|nodes| format!("{} in the system's order from position {}", nodes.len(), position[&nodes[0]]))
        }
        Placement::Random => {
            let mut v = order;
            let mut rng = Pcg64::seed_from_u64(mix.seed);
            for i in (1..v.len()).rev() {
                let j = rng.random_range(0..=i);
                v.swap(i, j);
            }
            take(&v, &|nodes| format!("{} drawn at random (seed {})", nodes.len(), mix.seed))
        }
        Placement::GroupSpread => {
            let Topology::Dragonfly(d) = topology else {
                return Err(refuse(format!("group-spread deals nodes over a dragonfly's groups; {} is not a dragonfly", mix.system)));
            };
            let per_group = (d.routers_per_group() * d.nodes_per_router) as usize;
            let mut by_group: Vec<Vec<u32>> = vec![Vec::new(); d.groups as usize];
            for &n in &order {
                by_group[(n as usize / per_group).min(d.groups as usize - 1)].push(n);
            }
            let dealt: Vec<u32> = (0..per_group).flat_map(|k| by_group.iter().filter_map(move |g| g.get(k).copied())).collect();
            take(&dealt, &|nodes| {
                let mut groups: Vec<usize> = nodes.iter().map(|&n| n as usize / per_group).collect();
                groups.sort_unstable();
                groups.dedup();
                format!("{} over {} groups", nodes.len(), groups.len())
            })
        }
        Placement::TofuRect { rotation, padding } => {
            let Topology::Tofu(t) = topology else {
                return Err(refuse(format!("tofu-rect places jobs in blocks of a Tofu machine; {} is not one", mix.system)));
            };
            let mut shapes = Vec::new();
            for j in &mix.jobs {
                shapes.push(j.shape.clone().ok_or_else(|| refuse(format!("tofu-rect places each job's virtual torus: give job {:?} a shape", j.name)))?);
            }
            let placed = tofusim_mapping::alloc::place_all(t, &shapes, tofusim_mapping::alloc::Policy { rotation, padding });
            let mut out = Vec::new();
            for (j, p) in mix.jobs.iter().zip(placed) {
                let p = p.ok_or_else(|| refuse(format!("no free block is left for job {:?} ({:?}) after the jobs before it", j.name, j.shape.as_deref().unwrap_or_default())))?;
                let b = p.embedding.block;
                let how = format!(
                    "block {}x{}x{} (x12 ABC) at ({}, {}, {}){}{}",
                    b.size[0], b.size[1], b.size[2], b.origin[0], b.origin[1], b.origin[2],
                    if p.rotated { ", rotated" } else { "" },
                    if p.padded { ", padded" } else { "" }
                );
                let grid = (!p.padded).then(|| Grid::from_shape(&p.embedding.virtual_shape)).flatten();
                // A padded torus is larger in some axes: the job's rank at
                // coordinates c takes the padded torus's node at c, so its
                // neighbours stay the torus's.
                let shape = j.shape.as_deref().unwrap_or_default();
                let padded = &p.embedding.virtual_shape;
                let nodes: Vec<u32> = (0..j.nodes)
                    .map(|r| {
                        let (mut rest, mut index, mut stride) = (r, 0u32, 1u32);
                        for (k, &l) in shape.iter().enumerate() {
                            index += (rest % l) * stride;
                            rest /= l;
                            stride *= padded.get(k).copied().unwrap_or(1);
                        }
                        p.embedding.node_of_rank[index as usize]
                    })
                    .collect();
                out.push((nodes, grid, how));
            }
            out
        }
    })
}

/// A schedule's steps run `times` times, each run's first steps on a rank
/// after that rank's previous run, its messages tagged apart.
fn repeated(s: &Schedule, times: u32) -> Schedule {
    // Each run's tags above every tag of the one before.
    let stride = 1 + s
        .programs
        .iter()
        .flat_map(|p| &p.steps)
        .filter_map(|st| match &st.action {
            tofusim_comm::Action::Send { tag, .. } | tofusim_comm::Action::Recv { tag, .. } => Some(*tag),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut out = Schedule::new(s.collective, s.algorithm, s.ranks, s.count);
    out.buffer_elements = s.buffer_elements;
    for k in 0..times {
        for (r, program) in s.programs.iter().enumerate() {
            let len = out.programs[r].steps.len() as u32;
            // The previous run's end on this rank: the zero-length work
            // step after every one of its steps.
            let before: Vec<u32> = if k == 0 || len == 0 { Vec::new() } else { vec![len - 1] };
            let base = out.append(r as u32, &program.steps, &before, |action| {
                if let tofusim_comm::Action::Send { tag, .. } | tofusim_comm::Action::Recv { tag, .. } = action {
                    *tag += k * stride;
                }
            });
            let all: Vec<u32> = (base..out.programs[r].steps.len() as u32).collect();
            out.work(r as u32, 0, &all);
        }
    }
    out.shrink_to_fit();
    out
}

/// Every rank of `s` starts `ns` late (work steps of at most 4 s each).
fn delayed(s: &Schedule, ns: u64) -> Schedule {
    if ns == 0 {
        return s.clone();
    }
    let mut out = Schedule::new(s.collective, s.algorithm, s.ranks, s.count);
    out.buffer_elements = s.buffer_elements;
    for (r, program) in s.programs.iter().enumerate() {
        let arrived = out.work_ns(r as u32, ns, &[]);
        out.append(r as u32, &program.steps, &[arrived], |_| {});
    }
    out
}

/// A halo exchange on the periodic `grid` of ranks.
fn halo(grid: &[u32], bytes: u64, iterations: u32, tnis: u8) -> Schedule {
    let ranks: u32 = grid.iter().product();
    let count = bytes.div_ceil(tofusim_comm::ELEMENT_BYTES).max(1);
    let mut s = Schedule::new(Collective::Transfers, "halo", ranks, count);
    let g = Grid::from_shape(grid).expect("checked when parsed");
    let span = || vec![Span::new(0, count)];
    let mut received: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
    for it in 0..iterations {
        let mut now: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
        for r in 0..ranks {
            let c = g.coords(r);
            for (dir, (axis, plus)) in (0..grid.len()).flat_map(|a| [(a, true), (a, false)]).enumerate() {
                let l = g.lengths[axis];
                if l < 2 {
                    continue;
                }
                let mut to = c;
                to[axis] = if plus { (c[axis] + 1) % l } else { (c[axis] + l - 1) % l };
                let peer = g.rank(to);
                let tag = it * 8 + dir as u32;
                let sent = s.send(r, peer, span(), dir as u8 % tnis.max(1), &received[r as usize]);
                s.set_tag(r, sent, tag);
                // The neighbour on the other side sent this rank the
                // opposite direction's message.
                let mut from = c;
                from[axis] = if plus { (c[axis] + l - 1) % l } else { (c[axis] + 1) % l };
                let got = s.recv(r, g.rank(from), span(), Combine::Replace, &[]);
                s.set_tag(r, got, tag);
                now[r as usize].push(got);
            }
        }
        received = now;
    }
    s.shrink_to_fit();
    s
}

/// A rank drawn uniformly among the `ranks` other than `r`.
fn another_rank(rng: &mut Pcg64, ranks: u32, r: u32) -> u32 {
    let to = rng.random_range(0..ranks - 1);
    if to >= r { to + 1 } else { to }
}

/// Every rank sends `messages` messages of `bytes` to ranks drawn
/// uniformly among the others.
fn pattern(ranks: u32, bytes: u64, messages: u32, tnis: u8, seed: u64) -> Schedule {
    let count = bytes.div_ceil(tofusim_comm::ELEMENT_BYTES).max(1);
    let mut s = Schedule::new(Collective::Transfers, "pattern", ranks, count);
    let mut rng = Pcg64::seed_from_u64(seed);
    for m in 0..messages {
        for r in 0..ranks {
            let to = another_rank(&mut rng, ranks, r);
            s.send(r, to, vec![Span::new(0, count)], (m % tnis.max(1) as u32) as u8, &[]);
            s.recv(to, r, vec![Span::new(0, count)], Combine::Replace, &[]);
        }
    }
    s.shrink_to_fit();
    s
}

/// Open-loop traffic: each rank sends a message of `bytes` to a uniformly
/// drawn other rank every `interval_ns` (a timer of work steps the sends
/// hang off, so a slow send delays none after it), `messages` times.
fn background(ranks: u32, bytes: u64, interval_ns: f64, messages: u32, tnis: u8, seed: u64) -> Schedule {
    let count = bytes.div_ceil(tofusim_comm::ELEMENT_BYTES).max(1);
    let mut s = Schedule::new(Collective::Transfers, "background", ranks, count);
    let mut rng = Pcg64::seed_from_u64(seed);
    let span = || vec![Span::new(0, count)];
    let mut timer: Vec<Option<u32>> = vec![None; ranks as usize];
    let mut clock = vec![0.0f64; ranks as usize];
    for m in 0..messages {
        for r in 0..ranks {
            // The timer's next tick, rounded so the ticks do not drift.
            let due = (m as f64 + 1.0) * interval_ns;
            let step = (due - clock[r as usize]).round().clamp(0.0, u32::MAX as f64) as u32;
            clock[r as usize] += step as f64;
            let deps: Vec<u32> = timer[r as usize].into_iter().collect();
            let tick = s.work(r, step, &deps);
            timer[r as usize] = Some(tick);
            let to = another_rank(&mut rng, ranks, r);
            s.send(r, to, span(), (m % tnis.max(1) as u32) as u8, &[tick]);
            s.recv(to, r, span(), Combine::Replace, &[]);
        }
    }
    s.shrink_to_fit();
    s
}

/// Most steps a mix's schedules may hold together (each job's, and the
/// mix's side by side).
pub const MAX_MIX_STEPS: u64 = tofusim_comm::schedule::MAX_GIVEN_STEPS;

/// Refuses a mix whose schedules would not fit [`MAX_MIX_STEPS`], by an
/// estimate of each job's steps before any is built, naming the job.
fn check_steps(mix: &Mix, file: &str) -> Result<()> {
    let mut total = 0u64;
    for (k, j) in mix.jobs.iter().enumerate() {
        let ranks = j.ranks() as u64;
        let (steps, key) = match &j.workload {
            // A collective's steps are bounded by its messages (checked
            // when it is built); p log p per call is the usual size.
            Workload::Collective { repeat, .. } => (ranks.saturating_mul(2 * (64 - ranks.leading_zeros() as u64).max(1)).saturating_mul(*repeat as u64), "repeat"),
            Workload::Halo { grid, iterations, .. } => (ranks.saturating_mul(4 * grid.len() as u64).saturating_mul(*iterations as u64), "iterations"),
            Workload::Pattern { messages, .. } => (ranks.saturating_mul(2 * *messages as u64), "messages"),
            Workload::Background { .. } => (0, "duration_us"),
            Workload::Trace { .. } => (0, "path"),
        };
        if steps > MAX_MIX_STEPS {
            return Err(ConfigError::new(file, &format!("job[{k}].{key}"), format!("job {:?} would hold about {steps:.3e} steps, more than the {MAX_MIX_STEPS} a mix's schedules may; fewer ranks or a smaller {key}", j.name)));
        }
        total = total.saturating_add(steps);
    }
    if total > MAX_MIX_STEPS {
        return Err(ConfigError::new(file, "job", format!("the jobs would hold about {total:.3e} steps together, more than the {MAX_MIX_STEPS} a mix's schedules may")));
    }
    Ok(())
}

/// A job's schedule over its own ranks, what it is in words, and for
/// open-loop traffic the period of its sends.
struct JobSchedule {
    schedule: Schedule,
    what: String,
    period_s: Option<f64>,
}

impl JobSchedule {
    fn of(schedule: Schedule, what: String) -> Self {
        JobSchedule { schedule, what, period_s: None }
    }

    /// The schedule as lockstep rounds (open-loop traffic: one send per
    /// rank and period), its rank r on node `nodes[r / ppn]`, each node
    /// with `tnis` send lanes.
    fn rounds(&self, copy_bytes_per_s: f64, nodes: &[u32], ppn: u32, tnis: u8) -> std::result::Result<lockstep::Leveled, tofusim_comm::exec::flow::FlowError> {
        let node = |r: u32| nodes[(r / ppn.max(1)) as usize];
        let lane = |src: u32, dst: u32, tni: u8| (node(src) != node(dst)).then(|| node(src) as u64 * tnis.max(1) as u64 + (tni % tnis.max(1)) as u64);
        match self.period_s {
            Some(p) => lockstep::by_send_order(&self.schedule, p),
            None => lockstep::levels(&self.schedule, copy_bytes_per_s, &lane),
        }
    }
}

/// A job's schedule over its own ranks, on the placed system `s` seen as
/// the job (`group`).
fn job_schedule(mix: &Mix, k: usize, s: &mut Setup, group: &Group, file: &str) -> Result<JobSchedule> {
    let j = &mix.jobs[k];
    let tnis = s.built.model.tnis;
    let at = |key: &str| format!("job[{k}].{key}");
    match &j.workload {
        Workload::Collective { op, algo, size_bytes, repeat } => {
            let spec = serde_json::json!({"op": op, "algo": algo.clone().unwrap_or_default(), "size_bytes": size_bytes, "system": mix.system, "seed": mix.seed});
            let spec = CollectiveSpec::from_json(&spec.to_string()).map_err(|e| ConfigError::new(file, &at(&e.key), e.expected))?;
            let (one, settings) = as_group(s, group, |v| -> Result<_> {
                crate::collective::check_spec(&spec, group.members.len() as u32, tnis)?;
                let (settled, settings) = settle(&spec, v)?;
                Ok((schedule_on(&settled, v, tnis)?.0, settings))
            })
            .map_err(|e| ConfigError::new(file, &at(&e.key), e.expected))?;
            let why = if algo.is_some() { "named".to_string() } else { settings.algorithm };
            Ok(JobSchedule::of(repeated(&one, *repeat), format!("{op} / {} × {repeat} ({why})", one.algorithm)))
        }
        Workload::Halo { grid, bytes, iterations } => Ok(JobSchedule::of(halo(grid, *bytes, *iterations, tnis), format!("halo on {} ranks, {bytes} B × {iterations}", grid.iter().map(u32::to_string).collect::<Vec<_>>().join("x")))),
        Workload::Pattern { bytes, messages } => {
            Ok(JobSchedule::of(pattern(j.ranks(), *bytes, *messages, tnis, mix.seed.wrapping_add(k as u64)), format!("uniform random, {messages} × {bytes} B per rank")))
        }
        Workload::Trace { path } => {
            let spec = crate::replay::ReplaySpec {
                system: mix.system.clone(),
                system_toml: None,
                mpi: Default::default(),
                order: Some(group.members.iter().map(|&m| s.node_of_rank[m as usize]).collect()),
                ranks: crate::rank_placement::Ranks::new(j.ranks_per_node as u64, crate::rank_placement::RankPlacement::Block)?,
                node_leaders: true,
                model: crate::collective::Model::Packet,
                compute_scale: 1.0,
                seed: mix.seed,
                counter_cycles: 0,
                max_minutes: None,
            };
            let sc = crate::traces::replay_schedule(path, &spec).map_err(|e| ConfigError::new(file, &at("path"), e.to_string()))?;
            let what = format!("the recorded program {path} ({} messages, {} steps)", sc.messages(), sc.programs.iter().map(|p| p.steps.len()).sum::<usize>());
            Ok(JobSchedule::of(sc, what))
        }
        Workload::Background { bytes, load, duration_ns } => {
            // The node's injection bandwidth, shared by its ranks.
            let node_bps = s.built.system.network.injection_per_node_Bps();
            let rank_bps = node_bps * load / j.ranks_per_node as f64;
            let interval_ns = *bytes as f64 / rank_bps * 1e9;
            let wanted = (*duration_ns as f64 / interval_ns).floor();
            if wanted < 1.0 {
                return Err(ConfigError::new(file, &at("duration_us"), format!("{:.1} µs is shorter than one message's interval at this load ({:.1} µs): raise the load or the duration", *duration_ns as f64 / 1000.0, interval_ns / 1000.0)));
            }
            if wanted > 1_000_000.0 || wanted * j.ranks() as f64 * 3.0 > MAX_MIX_STEPS as f64 {
                return Err(ConfigError::new(file, &at("duration_us"), format!("{wanted:.3e} messages per rank over {} ranks: more than a mix's schedules may hold; a shorter duration, a lower load or larger messages", j.ranks())));
            }
            let messages = wanted as u32;
            let what = format!("open-loop background at {:.0}% of {:.2} GB/s per node, {bytes} B every {:.0} ns for {:.1} µs ({messages} per rank)", load * 100.0, node_bps / 1e9, interval_ns, *duration_ns as f64 / 1000.0);
            let schedule = background(j.ranks(), *bytes, interval_ns, messages, tnis, mix.seed.wrapping_add(k as u64));
            Ok(JobSchedule { schedule, what, period_s: Some(interval_ns * 1e-9) })
        }
    }
}

/// One job's line of the result.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct JobReport {
    pub name: String,
    pub kind: &'static str,
    pub what: String,
    pub ranks: u32,
    pub nodes: u32,
    pub ranks_per_node: u32,
    /// How the policy placed it.
    pub placed: String,
    pub arrival_us: f64,
    /// Alone on the same nodes of the empty machine, µs.
    pub alone_us: f64,
    /// In the mix, from its arrival to its last rank's end, µs.
    pub in_mix_us: f64,
    /// In the mix over alone.
    pub slowdown: f64,
    /// Links (router ports) that carried its packets alone.
    pub links_used: u32,
    /// Of those, links another job's packets also crossed (alone).
    pub links_shared: u32,
    /// Per other job: the links both used, and the bytes the other job
    /// moved over them (alone).
    pub shares_with: Vec<Sharing>,
    /// Its nodes' positions in the system's node order (the picture's
    /// cells: [`JobsResult::layout_width`] per row).
    pub positions: Vec<u32>,
    /// What set its time in the mix (packet engine): the chain of steps
    /// and messages to its last rank's end.
    pub critical_path: Option<JobPath>,
}

/// A job's critical path in the mix, µs (ranks are the job's own).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct JobPath {
    /// From the mix's start (its arrival wait counts as work).
    pub end_us: f64,
    /// The path's time by kind: transfer (queueing at the interface and
    /// in the network), send-overhead, receive-overhead, reduction, copy,
    /// work.
    pub by_kind_us: BTreeMap<String, f64>,
    pub transfers: u64,
    /// The job's rank its other ranks waited for longest, and how long.
    pub most_waited_for: Option<u32>,
    pub most_waited_for_us: f64,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Sharing {
    pub job: String,
    pub links: u32,
    pub their_bytes: u64,
}

/// A link two or more jobs used.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SharedLink {
    pub router: u32,
    pub port: String,
    /// Bytes of each job that crossed it (alone), most first.
    pub bytes_by_job: Vec<(String, u64)>,
}

/// `tofusim jobs`' result.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct JobsResult {
    pub system: String,
    pub placement: String,
    pub nodes: u64,
    pub jobs: Vec<JobReport>,
    /// The links most loaded by more than one job (up to 20).
    pub shared_links: Vec<SharedLink>,
    /// How to draw the machine: positions in the node order, this many per
    /// row (a torus: its x length; a dragonfly: a group; a fat-tree: a
    /// leaf switch), and what a row is.
    pub layout_width: u32,
    pub layout_rows: String,
    /// `packet`, `flow-events` or `flow-rounds` (what `flow` chose).
    pub model: crate::collective::Model,
    /// The mix's run in lockstep rounds (`flow-rounds`): its rounds,
    /// phase changes, max-min solves and sets found solved before.
    pub lockstep: Option<lockstep::JobsTimed>,
    /// The mix's run: every step ran, no deadlock, no invariant error.
    pub complete: bool,
    /// The mix's end, µs (every job's last rank).
    pub time_us: f64,
    pub wall_seconds: f64,
}

/// A schedule run over `node_of_rank` of a fresh build of `system`: each
/// rank's end and every link's bytes.
struct Ran {
    rank_end_ns: Vec<f64>,
    ports: HashMap<(u32, String), u64>,
    complete: bool,
    /// Per group of ranks asked for, its critical path (packet engine).
    paths: Vec<JobPath>,
}

fn run_once(
    system: &str,
    model: crate::collective::Model,
    node_of_rank: Vec<u32>,
    s: Schedule,
    seed: u64,
    groups: &[std::ops::Range<u32>],
    progress: tofusim_packet::Progress,
) -> Result<Ran> {
    // Checked against the memory when the mix was read ([`run`]).
    let mut setup = crate::build::setup(system)?;
    setup.node_of_rank = node_of_rank;
    setup.grid = None;
    setup.node_grid = None;
    if model != crate::collective::Model::Packet {
        // The flow model, event by event: each step's finish, and the
        // bytes its routes put on every link.
        let mut ask = || progress(0.0).is_break();
        let interrupt = tofusim_flow::Interrupt::new(&mut ask);
        let net = crate::flow_model::flow_net(&setup)?;
        let m = crate::flow_model::machine(&setup, &net, &Modes::default(), &interrupt);
        let finish = tofusim_comm::exec::flow::schedule_finish_times(&m, &s, seed).map_err(|e| ConfigError::new("<flow>", "job", e.to_string()))?;
        let mut at = 0usize;
        let rank_end_ns = s
            .programs
            .iter()
            .map(|p| {
                let end = finish[at..at + p.steps.len()].iter().copied().fold(0.0, f64::max);
                at += p.steps.len();
                end * 1e9
            })
            .collect();
        let bytes = crate::replay::flow_link_bytes(&net, &s, &setup.node_of_rank, &m, seed);
        let ports = (0..bytes.len()).filter(|&l| bytes[l] > 0.0).map(|l| (((l / net.ports) as u32, net.routing.port_name((l % net.ports) as u8)), bytes[l].round() as u64)).collect();
        return Ok(Ran { rank_end_ns, ports, complete: !interrupt.stopped(), paths: Vec::new() });
    }
    let run = RunParams { seed, sample_cycles: u64::MAX, ..RunParams::default() };
    let engine = schedule_engine(setup, std::sync::Arc::new(s), &Modes::default(), run)?;
    let (r, (ends, paths)) = engine.run_with(progress, |st| (st.rank_end_cycles(), groups.iter().map(|g| st.critical_path_of(g.clone())).collect::<Vec<_>>()));
    let ports = r.ports.iter().filter(|p| p.counters.bytes > 0).map(|p| ((p.router, p.port.clone()), p.counters.bytes)).collect();
    let complete = r.complete && r.deadlock.is_none() && r.invariant_error.is_none() && !r.interrupted;
    let us = |c: u64| c as f64 * r.cycle_ns / 1000.0;
    let paths = paths
        .into_iter()
        .map(|p| JobPath {
            end_us: us(p.end_cycle),
            by_kind_us: p.by_kind.iter().map(|(k, &c)| (k.to_string(), us(c))).collect(),
            transfers: p.transfers,
            most_waited_for: p.most_waited_for,
            most_waited_for_us: us(p.most_waited_for_cycles),
        })
        .collect();
    Ok(Ran { rank_end_ns: ends.iter().map(|&c| c as f64 * r.cycle_ns).collect(), ports, complete, paths })
}

/// Most messages a mix may have for `model = "flow"` to run it event by
/// event; above, it runs in lockstep rounds (the event-by-event solver
/// re-solves the flows a message shares links with at its every start and
/// end, which on spread placements is nearly all of them).
pub const MAX_EVENT_MESSAGES: u64 = 200_000;

/// The model a mix runs on: `flow` is the event-by-event form up to
/// [`MAX_EVENT_MESSAGES`] messages (or with a recorded program, which has
/// no rounds), lockstep rounds above. A recorded program is refused in
/// rounds: its computation and messages do not fall into rounds.
fn resolved_model(mix: &Mix, schedules: &[JobSchedule], file: &str) -> Result<crate::collective::Model> {
    use crate::collective::Model;
    let trace = mix.jobs.iter().position(|j| matches!(j.workload, Workload::Trace { .. }));
    Ok(match mix.model {
        Model::Flow => {
            let messages: u64 = schedules.iter().map(|js| js.schedule.messages()).sum();
            if messages > MAX_EVENT_MESSAGES && trace.is_none() { Model::FlowRounds } else { Model::FlowEvents }
        }
        Model::FlowRounds => {
            if let Some(k) = trace {
                return Err(ConfigError::new(file, &format!("job[{k}].kind"), format!("job {:?} is a recorded program, whose computation and messages do not fall into lockstep rounds: model = \"flow-events\" or \"packet\" runs it", mix.jobs[k].name)));
            }
            Model::FlowRounds
        }
        m => m,
    })
}

/// The flow model in lockstep rounds ([`lockstep`]) over `node_of_rank`
/// of a fresh build of `system`: every rank's end (its job's), and with
/// `bytes_of` the bytes its routes put on every link.
fn run_lockstep(system: &str, node_of_rank: Vec<u32>, jobs: &[lockstep::Job], bytes_of: Option<&Schedule>, seed: u64, progress: tofusim_packet::Progress) -> Result<(Ran, lockstep::JobsTimed)> {
    let mut setup = crate::build::setup(system)?;
    setup.node_of_rank = node_of_rank;
    setup.grid = None;
    setup.node_grid = None;
    let mut ask = || progress(0.0).is_break();
    let interrupt = tofusim_flow::Interrupt::new(&mut ask);
    let net = crate::flow_model::flow_net(&setup)?;
    let m = crate::flow_model::machine(&setup, &net, &Modes::default(), &interrupt);
    // Stopped (Ctrl-C): an error, as the event-by-event form's.
    let timed = lockstep::jobs_time(&m, jobs, seed).map_err(|e| ConfigError::new("<flow>", "job", e.to_string()))?;
    let mut rank_end_ns = vec![0.0; setup.node_of_rank.len()];
    for (j, &end) in jobs.iter().zip(&timed.end_seconds) {
        for r in j.rank_offset..j.rank_offset + j.schedule.ranks {
            rank_end_ns[r as usize] = end * 1e9;
        }
    }
    let ports = match bytes_of {
        Some(s) => {
            let bytes = crate::replay::flow_link_bytes(&net, s, &setup.node_of_rank, &m, seed);
            (0..bytes.len()).filter(|&l| bytes[l] > 0.0).map(|l| (((l / net.ports) as u32, net.routing.port_name((l % net.ports) as u8)), bytes[l].round() as u64)).collect()
        }
        None => HashMap::new(),
    };
    Ok((Ran { rank_end_ns, ports, complete: true, paths: Vec::new() }, timed))
}

/// Runs the mix in `text` (`file` names it in errors): the jobs together,
/// then each alone on the same nodes.
pub fn run(file: &str, text: &str, progress: tofusim_packet::Progress) -> Result<JobsResult> {
    let wall = std::time::Instant::now();
    let mix = Mix::parse(file, text)?;
    let most_per_node = mix.jobs.iter().map(|j| j.ranks_per_node).max().unwrap_or(1);
    let mut s = crate::build::checked_setup(&mix.system, most_per_node, "a job mix").map_err(|e| ConfigError::new(file, "system", e.expected))?;
    check_steps(&mix, file)?;
    let machine_nodes = s.node_of_rank.len() as u64;
    let system_order = s.node_of_rank.clone();
    let (layout_width, layout_rows) = match &s.built.system.network.topology {
        Topology::Dragonfly(d) => (d.routers_per_group() * d.nodes_per_router, "a group per row".to_string()),
        Topology::FatTree(f) => (f.down.first().copied().unwrap_or(1), "a leaf switch per row".to_string()),
        _ => match s.node_grid {
            Some(g) => (g.lengths[0], format!("x across, y and z down ({}x{}x{})", g.lengths[0], g.lengths[1], g.lengths[2])),
            None => (((machine_nodes as f64).sqrt().ceil() as u32).max(1), "the node order, row by row".to_string()),
        },
    };
    let placed = place(&mix, &s, file)?;
    // World ranks: each job's in turn, block placement on its nodes.
    let mut node_of_rank = Vec::new();
    let mut members = Vec::new();
    for (j, (nodes, _, _)) in mix.jobs.iter().zip(&placed) {
        let first = node_of_rank.len() as u32;
        node_of_rank.extend((0..j.ranks()).map(|r| nodes[(r / j.ranks_per_node) as usize]));
        members.push((first..first + j.ranks()).collect::<Vec<u32>>());
    }
    s.node_of_rank = node_of_rank.clone();
    let mut schedules = Vec::new();
    for (k, ((j, (_, grid, _)), m)) in mix.jobs.iter().zip(&placed).zip(&members).enumerate() {
        let (ranks_grid, node_grid) = if j.ranks_per_node == 1 { (*grid, *grid) } else { (None, *grid) };
        let group = Group { members: m.clone(), grid: ranks_grid, node_grid };
        schedules.push(job_schedule(&mix, k, &mut s, &group, file)?);
    }
    let model = resolved_model(&mix, &schedules, file)?;
    let total = mix.jobs.len() as f64 + 1.0;
    let share = |i: usize| move |f: f64| (i as f64 + f) / total;
    // Lockstep rounds: each job's schedule by depth (docs: lockstep).
    let rounds = if model == crate::collective::Model::FlowRounds {
        // The machine's local copy rate (a round counts its copies at it).
        let timing = s.built.model.host_timing(&Modes::default());
        let copy = timing.copy_bytes_per_cycle / (timing.cycle_ns * 1e-9);
        let mut v = Vec::new();
        for (k, (js, (nodes, _, _))) in schedules.iter().zip(&placed).enumerate() {
            v.push(js.rounds(copy, nodes, mix.jobs[k].ranks_per_node, timing.tnis).map_err(|e| ConfigError::new(file, &format!("job[{k}]"), e.to_string()))?);
        }
        v
    } else {
        Vec::new()
    };
    // Together, each arriving when it says.
    let (mix_run, lockstep_run) = if model == crate::collective::Model::FlowRounds {
        let to = share(0);
        let jobs: Vec<lockstep::Job> = mix.jobs.iter().zip(&rounds).zip(&members).zip(&schedules).map(|(((j, r), m), js)| lockstep::Job { schedule: &js.schedule, leveled: r, start_s: j.arrival_ns as f64 * 1e-9, rank_offset: m[0] }).collect();
        let (ran, timed) = run_lockstep(&mix.system, node_of_rank.clone(), &jobs, None, mix.seed, &mut |f| progress(to(f)))?;
        (ran, Some(timed))
    } else {
        let delayed_ones: Vec<Schedule> = mix.jobs.iter().zip(&schedules).map(|(j, js)| delayed(&js.schedule, j.arrival_ns)).collect();
        let pairs: Vec<(&[u32], &Schedule)> = members.iter().zip(&delayed_ones).map(|(m, sc)| (m.as_slice(), sc)).collect();
        let world = tofusim_comm::subcommunicators::side_by_side(node_of_rank.len() as u32, &pairs).map_err(|e| ConfigError::new(file, "job", e.message))?;
        drop(delayed_ones);
        let to = share(0);
        let groups: Vec<std::ops::Range<u32>> = members.iter().map(|m| m[0]..m[0] + m.len() as u32).collect();
        (run_once(&mix.system, model, node_of_rank.clone(), world, mix.seed, &groups, &mut |f| progress(to(f)))?, None)
    };
    // Alone, on the same nodes.
    let mut reports = Vec::new();
    let position: HashMap<u32, u32> = system_order.iter().enumerate().map(|(i, &n)| (n, i as u32)).collect();
    let mut used: Vec<HashMap<(u32, String), u64>> = Vec::new();
    let mut alone_complete = true;
    for (k, ((j, (_, _, how)), js)) in mix.jobs.iter().zip(&placed).zip(schedules).enumerate() {
        let to = share(k + 1);
        let nodes: Vec<u32> = members[k].iter().map(|&r| node_of_rank[r as usize]).collect();
        let what = js.what.clone();
        let alone = if model == crate::collective::Model::FlowRounds {
            let job = lockstep::Job { schedule: &js.schedule, leveled: &rounds[k], start_s: 0.0, rank_offset: 0 };
            run_lockstep(&mix.system, nodes, &[job], Some(&js.schedule), mix.seed, &mut |f| progress(to(f)))?.0
        } else {
            run_once(&mix.system, model, nodes, js.schedule, mix.seed, &[], &mut |f| progress(to(f)))?
        };
        let alone_ns = alone.rank_end_ns.iter().copied().fold(0.0, f64::max);
        let end = members[k].iter().map(|&r| mix_run.rank_end_ns[r as usize]).fold(0.0, f64::max);
        let in_mix_ns = end - j.arrival_ns as f64;
        reports.push(JobReport {
            name: j.name.clone(),
            kind: j.workload.kind(),
            what,
            ranks: j.ranks(),
            nodes: j.nodes,
            ranks_per_node: j.ranks_per_node,
            placed: how.clone(),
            arrival_us: j.arrival_ns as f64 / 1000.0,
            alone_us: alone_ns / 1000.0,
            in_mix_us: in_mix_ns / 1000.0,
            slowdown: if alone_ns > 0.0 { in_mix_ns / alone_ns } else { 1.0 },
            links_used: alone.ports.len() as u32,
            links_shared: 0,
            shares_with: Vec::new(),
            positions: placed[k].0.iter().map(|n| position[n]).collect(),
            critical_path: mix_run.paths.get(k).cloned().map(|mut p| {
                // The job's ranks count from its first.
                p.most_waited_for = p.most_waited_for.map(|w| w - members[k][0]);
                p
            }),
        });
        alone_complete &= alone.complete;
        used.push(alone.ports);
    }
    // Which links more than one job used, and how much.
    let mut by_link: BTreeMap<(u32, String), Vec<(usize, u64)>> = BTreeMap::new();
    for (k, ports) in used.iter().enumerate() {
        for (key, &b) in ports {
            by_link.entry(key.clone()).or_default().push((k, b));
        }
    }
    let mut shared: Vec<SharedLink> = Vec::new();
    for ((router, port), mut jobs) in by_link.into_iter().filter(|(_, v)| v.len() > 1) {
        for &(k, _) in &jobs {
            reports[k].links_shared += 1;
            for &(other, b) in jobs.iter().filter(|(o, _)| *o != k) {
                let name = &mix.jobs[other].name;
                match reports[k].shares_with.iter_mut().find(|s| &s.job == name) {
                    Some(s) => {
                        s.links += 1;
                        s.their_bytes += b;
                    }
                    None => reports[k].shares_with.push(Sharing { job: name.clone(), links: 1, their_bytes: b }),
                }
            }
        }
        jobs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        shared.push(SharedLink { router, port, bytes_by_job: jobs.iter().map(|&(k, b)| (mix.jobs[k].name.clone(), b)).collect() });
    }
    shared.sort_by(|a, b| {
        let t = |l: &SharedLink| l.bytes_by_job.iter().map(|x| x.1).sum::<u64>();
        t(b).cmp(&t(a)).then(a.router.cmp(&b.router)).then(a.port.cmp(&b.port))
    });
    shared.truncate(20);
    let _ = progress(1.0);
    Ok(JobsResult {
        system: mix.system.clone(),
        placement: mix.policy.clone(),
        nodes: machine_nodes,
        jobs: reports,
        shared_links: shared,
        layout_width,
        layout_rows,
        model,
        lockstep: lockstep_run,
        complete: mix_run.complete && alone_complete,
        time_us: mix_run.rank_end_ns.iter().copied().fold(0.0, f64::max) / 1000.0,
        wall_seconds: wall.elapsed().as_secs_f64(),
    })
}
