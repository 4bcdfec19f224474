//! GOAL schedules, the text form LogGOPSim, Schedgen and the ATLAHS
//! toolchain exchange (Hoefler, Schneider, Lumsdaine, "LogGOPSim —
//! Simulating Large-Scale Applications in the LogGOPS Model", LSAP 2010):
//! per rank, labelled sends, receives and computation with the
//! dependencies between them — the same thing as a [`Schedule`].
//!
//! ```text
//! num_ranks 2
//! rank 0 {
//!   l1: calc 500            // ns
//!   l2: send 1024b to 1 tag 7 nic 0
//!   l2 requires l1
//! }
//! rank 1 {
//!   r1: recv 1024b from 0 tag 7
//! }
//! ```
//!
//! Read: `send`/`recv` become sends and receives of whole 8-byte elements
//! (a size rounds up; `nic` picks the network interface, modulo the
//! node's), `calc` becomes work of that many nanoseconds, `a requires b`
//! makes `a` wait for `b`'s end. `a irequires b` (a may start once `b`
//! has started) becomes: `a` waits for what `b` waits for — `b` starts as
//! soon as that is done. The executors run a schedule as a dataflow: a
//! step starts when what it waits for is done, so operations of one rank
//! that wait for nothing between them overlap (LogGOPSim serialises them
//! on the rank's CPU). Refused, with the line:
//! a receive from any source or with any tag (`-1`: matching here names
//! the peer and tag), a dependency on a label of another rank or one not
//! defined, a dependency cycle, a rank outside `num_ranks`.
//!
//! Written: a schedule's sends and receives as `send`/`recv` (tag, nic),
//! its work as `calc`, and its local copies and reductions as `calc` of
//! their time at the rates given ([`to_goal`]), each step's dependencies
//! as `requires`.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::schedule::{Action, Combine, Rank, Schedule, Span, StepId};
use crate::{BuildError, Collective, ELEMENT_BYTES};

/// Most ranks and operations a GOAL file may hold (as a given schedule).
pub const MAX_RANKS: u32 = crate::schedule::MAX_GIVEN_RANKS;
pub const MAX_OPS: u64 = crate::schedule::MAX_GIVEN_STEPS;
/// Longest computation one operation may take, ns (2^48 ns: 3.3 days).
pub const MAX_CALC_NS: u64 = 1 << 48;
/// Largest message, bytes (a given schedule's largest vector).
pub const MAX_MESSAGE_BYTES: u64 = crate::schedule::MAX_GIVEN_ELEMENTS * ELEMENT_BYTES;

/// Steps a computation of `ns` takes (work steps hold at most 4.3 s).
pub(crate) fn work_steps(ns: u64) -> u64 {
    ns.div_ceil(u32::MAX as u64).max(1)
}

fn bad(line: usize, message: impl Into<String>) -> BuildError {
    BuildError { key: "goal", message: if line > 0 { format!("line {line}: {}", message.into()) } else { message.into() } }
}

#[derive(Clone, Debug)]
enum Op {
    Send { peer: u32, bytes: u64, tag: u32, nic: u32 },
    Recv { peer: u32, bytes: u64, tag: u32 },
    Calc { ns: u64 },
}

#[derive(Default)]
struct RankOps {
    ops: Vec<(Op, usize)>,
    labels: HashMap<String, usize>,
    /// (dependent, prerequisite, start-only, line).
    deps: Vec<(usize, usize, bool, usize)>,
}

/// Strips `//` and `/* */` comments (a block comment may span lines: its
/// lines stay, empty, so line numbers hold).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    for line in text.lines() {
        let mut rest = line;
        loop {
            if in_block {
                match rest.find("*/") {
                    Some(i) => {
                        rest = &rest[i + 2..];
                        in_block = false;
                    }
                    None => break,
                }
            } else {
                let line_c = rest.find("//");
                let block = rest.find("/*");
                match (line_c, block) {
                    (Some(l), Some(b)) if b < l => {
                        out.push_str(&rest[..b]);
                        rest = &rest[b + 2..];
                        in_block = true;
                    }
                    (Some(l), _) => {
                        out.push_str(&rest[..l]);
                        break;
                    }
                    (None, Some(b)) => {
                        out.push_str(&rest[..b]);
                        rest = &rest[b + 2..];
                        in_block = true;
                    }
                    (None, None) => {
                        out.push_str(rest);
                        break;
                    }
                }
            }
        }
        out.push('\n');
    }
    out
}

fn number(line: usize, word: Option<&str>, what: &str) -> Result<u64, BuildError> {
    match word {
        Some("-1") => Err(bad(line, format!("{what} -1 (any): matching here names the peer and the tag; give them"))),
        Some(w) => w.parse().map_err(|_| bad(line, format!("expected {what} as a whole number, found {w:?}"))),
        None => Err(bad(line, format!("expected {what}"))),
    }
}

fn size(line: usize, word: Option<&str>) -> Result<u64, BuildError> {
    let w = word.ok_or_else(|| bad(line, "expected a size such as 1024b"))?;
    let digits = w.strip_suffix('b').ok_or_else(|| bad(line, format!("expected a size such as 1024b, found {w:?}")))?;
    let b: u64 = digits.parse().map_err(|_| bad(line, format!("expected a size such as 1024b, found {w:?}")))?;
    if b > MAX_MESSAGE_BYTES {
        return Err(bad(line, format!("a message of {b} B; expected at most {MAX_MESSAGE_BYTES} B")));
    }
    Ok(b)
}

/// Reads the options after a send or receive: `tag T`, `cpu C`, `nic N`.
fn options(line: usize, words: &mut std::str::SplitWhitespace<'_>, allowed: &[&str]) -> Result<(u32, u32), BuildError> {
    let (mut tag, mut nic) = (0u32, 0u32);
    while let Some(w) = words.next() {
        if !allowed.contains(&w) {
            return Err(bad(line, format!("expected {} or the end of the line, found {w:?}", allowed.join(", "))));
        }
        let v = number(line, words.next(), w)?;
        let v = u32::try_from(v).map_err(|_| bad(line, format!("{w} {v} is out of range")))?;
        match w {
            "tag" => tag = v,
            "nic" => nic = v,
            _ => {} // cpu: one host per rank here
        }
    }
    Ok((tag, nic))
}

/// A GOAL schedule's text as a [`Schedule`] of `Transfers` (errors name
/// the line). `tnis`: the node's network interfaces (`nic` is taken
/// modulo it).
pub fn from_goal(text: &str, tnis: u8) -> Result<Schedule, BuildError> {
    let text = strip_comments(text);
    let mut ranks: Option<u32> = None;
    let mut programs: Vec<RankOps> = Vec::new();
    let mut current: Option<usize> = None;
    let mut total_ops = 0u64;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.trim();
        if body.is_empty() {
            continue;
        }
        if let Some(n) = body.strip_prefix("num_ranks") {
            let n = number(line, n.split_whitespace().next(), "the rank count")?;
            if !(1..=MAX_RANKS as u64).contains(&n) || ranks.is_some() {
                return Err(bad(line, format!("expected one num_ranks of 1 to {MAX_RANKS}, found {n}")));
            }
            ranks = Some(n as u32);
            programs = (0..n).map(|_| RankOps::default()).collect();
            continue;
        }
        if let Some(rest) = body.strip_prefix("rank ") {
            let n = ranks.ok_or_else(|| bad(line, "num_ranks must come before the first rank"))?;
            let rest = rest.trim();
            let r = rest.strip_suffix('{').ok_or_else(|| bad(line, "expected `rank R {`"))?;
            let r = number(line, Some(r.trim()), "a rank")?;
            if r >= n as u64 || current.is_some() {
                return Err(bad(line, format!("expected a rank from 0 to {} outside any other rank's braces, found {r}", n - 1)));
            }
            current = Some(r as usize);
            continue;
        }
        if body == "}" {
            if current.take().is_none() {
                return Err(bad(line, "a `}` without its `rank R {`"));
            }
            continue;
        }
        let r = current.ok_or_else(|| bad(line, "an operation outside `rank R { … }`"))?;
        let n = ranks.unwrap_or(0);
        let p = &mut programs[r];
        // `a requires b`, `a irequires b`
        let words: Vec<&str> = body.split_whitespace().collect();
        if words.len() == 3 && (words[1] == "requires" || words[1] == "irequires") {
            let find = |l: &str| p.labels.get(l).copied().ok_or_else(|| bad(line, format!("label {l:?} is not an operation of rank {r} defined above")));
            let (a, b) = (find(words[0])?, find(words[2])?);
            p.deps.push((a, b, words[1] == "irequires", line));
            continue;
        }
        let (label, op_text) = match body.split_once(':') {
            Some((l, o)) => (Some(l.trim()), o.trim()),
            None => (None, body),
        };
        let mut w = op_text.split_whitespace();
        let op = match w.next() {
            Some(verb @ ("send" | "recv")) => {
                let (to, whom) = if verb == "send" { ("to", "destination") } else { ("from", "source") };
                let bytes = size(line, w.next())?;
                if w.next() != Some(to) {
                    return Err(bad(line, format!("expected `{verb} SIZEb {to} RANK`")));
                }
                let peer = number(line, w.next(), &format!("the {whom} rank"))?;
                let (tag, nic) = options(line, &mut w, &["tag", "cpu", "nic"])?;
                if peer >= n as u64 || peer == r as u64 {
                    return Err(bad(line, format!("expected a {whom} rank from 0 to {} other than {r}, found {peer}", n - 1)));
                }
                let peer = peer as u32;
                if verb == "send" {
                    Op::Send { peer, bytes, tag, nic }
                } else {
                    Op::Recv { peer, bytes, tag }
                }
            }
            Some("calc") => {
                let ns = number(line, w.next(), "the computation's time (ns)")?;
                if ns > MAX_CALC_NS {
                    return Err(bad(line, format!("calc {ns}: expected at most {MAX_CALC_NS} ns")));
                }
                options(line, &mut w, &["cpu"])?;
                total_ops += work_steps(ns) - 1;
                Op::Calc { ns }
            }
            other => return Err(bad(line, format!("expected send, recv, calc, `LABEL: …`, `A requires B`, `rank R {{` or `}}`, found {:?}", other.unwrap_or(body)))),
        };
        total_ops += 1;
        if total_ops > MAX_OPS {
            return Err(bad(line, format!("more than {MAX_OPS} operations")));
        }
        let index = p.ops.len();
        p.ops.push((op, line));
        if let Some(l) = label {
            if l.is_empty() || !l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || p.labels.insert(l.to_string(), index).is_some() {
                return Err(bad(line, format!("label {l:?}: expected a new name of letters, digits and _")));
            }
        }
    }
    if current.is_some() {
        return Err(bad(0, "a `rank R {` is not closed"));
    }
    let ranks = ranks.ok_or_else(|| bad(0, "expected `num_ranks N` and a `rank R { … }` per rank"))?;
    build(ranks, programs, tnis.max(1))
}

/// The schedule of the parsed ranks: each rank's operations in an order
/// that puts every dependency first (their file order where it already
/// does).
fn build(ranks: u32, programs: Vec<RankOps>, tnis: u8) -> Result<Schedule, BuildError> {
    let elements = |b: u64| b.div_ceil(ELEMENT_BYTES);
    // A zero-byte message (a barrier's) carries no element.
    let spans = |b: u64| if b == 0 { Vec::new() } else { vec![Span::new(0, elements(b))] };
    let count = programs.iter().flat_map(|p| &p.ops).map(|(op, _)| match op {
        Op::Send { bytes, .. } | Op::Recv { bytes, .. } => elements(*bytes),
        Op::Calc { .. } => 0,
    });
    let count = count.max().unwrap_or(1).max(1);
    let mut s = Schedule::new(Collective::Transfers, crate::schedule::GIVEN, ranks, count);
    for (r, p) in programs.into_iter().enumerate() {
        let n = p.ops.len();
        // Completion dependencies, then start dependencies as "what the
        // other one waits for", resolved in dependency order.
        let mut needs: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut starts: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b, start, line) in &p.deps {
            if a == b {
                return Err(bad(line, "an operation cannot wait for itself"));
            }
            if start { starts[a].push(b) } else { needs[a].push(b) }
        }
        let order = topological(n, |a| needs[a].iter().chain(&starts[a]).copied().collect()).ok_or_else(|| bad(0, format!("rank {r}: the dependencies form a cycle")))?;
        let mut waits: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &a in &order {
            let mut w = needs[a].clone();
            for &b in &starts[a] {
                w.extend(waits[b].iter().copied());
            }
            w.sort_unstable();
            w.dedup();
            waits[a] = w;
        }
        // Each operation's last step (calc over 4.3 s is several).
        let mut step_of = vec![0 as StepId; n];
        for &a in &order {
            let deps: Vec<StepId> = waits[a].iter().map(|&b| step_of[b]).collect();
            let rank = r as Rank;
            step_of[a] = match &p.ops[a].0 {
                Op::Send { peer, bytes, tag, nic } => {
                    let st = s.send(rank, *peer, spans(*bytes), (*nic % tnis as u32) as u8, &deps);
                    s.set_tag(rank, st, *tag);
                    st
                }
                Op::Recv { peer, bytes, tag } => {
                    let st = s.recv(rank, *peer, spans(*bytes), Combine::Replace, &deps);
                    s.set_tag(rank, st, *tag);
                    st
                }
                Op::Calc { ns } => s.work_ns(rank, *ns, &deps),
            };
        }
    }
    s.shrink_to_fit();
    s.validate().map_err(|e| bad(0, e.0))?;
    Ok(s)
}

/// Kahn's order of `n` items, `before(a)` the items `a` needs first;
/// items with nothing between them keep their order. `None` on a cycle.
pub(crate) fn topological(n: usize, before: impl Fn(usize) -> Vec<usize>) -> Option<Vec<usize>> {
    let mut indegree = vec![0usize; n];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for a in 0..n {
        for b in before(a) {
            indegree[a] += 1;
            after[b].push(a);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&a| indegree[a] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(a) = ready.pop_first() {
        order.push(a);
        for &c in &after[a] {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.insert(c);
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// The costs a GOAL file cannot say but a schedule's local steps take:
/// a copy's and a reduction's rate, bytes per ns.
#[derive(Clone, Copy, Debug)]
pub struct LocalRates {
    pub copy_bytes_per_ns: f64,
    pub reduce_bytes_per_ns: f64,
}

/// `s` as GOAL text. Its local copies, and the reduction of a receive that
/// sums, become `calc` of their time at `rates` (the system's: GOAL has no
/// copies); offloaded steps and pacing are not in GOAL and are refused.
pub fn to_goal(s: &Schedule, rates: LocalRates) -> Result<String, BuildError> {
    let mut out = String::new();
    let _ = writeln!(out, "// {} / {} over {} ranks, written by tofusim (GOAL: LogGOPSim's schedule format)", s.collective.name(), s.algorithm, s.ranks);
    let _ = writeln!(out, "num_ranks {}", s.ranks);
    let ns = |bytes: u64, rate: f64| if rate > 0.0 { (bytes as f64 / rate).round() as u64 } else { 0 };
    for (r, p) in s.programs.iter().enumerate() {
        let _ = writeln!(out, "rank {r} {{");
        // A step's label: its index; a summing receive adds a calc after it.
        let mut label_of: Vec<String> = Vec::with_capacity(p.steps.len());
        for (i, st) in p.steps.iter().enumerate() {
            let label = format!("l{i}");
            let deps: Vec<&str> = st.deps.iter().map(|&d| label_of[d as usize].as_str()).collect();
            let mut last = label.clone();
            match &st.action {
                Action::Send { peer, spans, tni, pace, offload, tag } => {
                    if *offload || *pace > 1 {
                        return Err(bad(0, format!("rank {r} step {i}: an offloaded or paced send has no GOAL form")));
                    }
                    let _ = writeln!(out, "{label}: send {}b to {peer} tag {tag} nic {tni}", crate::schedule::total(spans) * ELEMENT_BYTES);
                }
                Action::Recv { peer, spans, combine, offload, tag } => {
                    if *offload {
                        return Err(bad(0, format!("rank {r} step {i}: an offloaded receive has no GOAL form")));
                    }
                    let bytes = crate::schedule::total(spans) * ELEMENT_BYTES;
                    let _ = writeln!(out, "{label}: recv {bytes}b from {peer} tag {tag}");
                    if *combine == Combine::Sum {
                        last = format!("{label}r");
                        let _ = writeln!(out, "{last}: calc {}", ns(bytes, rates.reduce_bytes_per_ns));
                        let _ = writeln!(out, "{last} requires {label}");
                    }
                }
                Action::Copy(c) => {
                    let _ = writeln!(out, "{label}: calc {}", ns(crate::schedule::total(&c.from) * ELEMENT_BYTES, rates.copy_bytes_per_ns));
                }
                Action::Work { ns } => {
                    let _ = writeln!(out, "{label}: calc {ns}");
                }
            }
            for d in deps {
                let _ = writeln!(out, "{label} requires {d}");
            }
            label_of.push(last);
        }
        let _ = writeln!(out, "}}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::build_named;
    use crate::Params;

    #[test]
    fn a_small_file_reads_with_its_dependencies() {
        let text = "// two ranks\nnum_ranks 2\nrank 0 {\n a: calc 500\n b: send 1000b to 1 tag 7 nic 5 /* any nic */\n b requires a\n recv 8b from 1\n}\nrank 1 {\n c: recv 1000b from 0 tag 7 cpu 0\n d: calc 10\n e: send 8b to 0\n d irequires c\n}\n";
        let s = from_goal(text, 4).unwrap();
        assert_eq!((s.ranks, s.count, s.messages()), (2, 125, 2));
        assert_eq!(s.programs[0].steps.len(), 3);
        let p0 = &s.programs[0].steps;
        assert!(matches!(p0[0].action, Action::Work { ns: 500 }));
        assert!(matches!(p0[1].action, Action::Send { peer: 1, tni: 1, tag: 7, .. }));
        assert_eq!(&*p0[1].deps, &[0]);
        // `d irequires c`: d waits for what c waits for (nothing).
        assert!(s.programs[1].steps.iter().all(|st| st.deps.is_empty()));
    }

    #[test]
    fn refusals_name_the_line() {
        for (text, needle) in [
            ("num_ranks 2\nrank 0 {\n recv 8b from -1\n}\n", "line 3"),
            ("num_ranks 2\nrank 0 {\n a: calc 5\n a requires zz\n}\n", "line 4"),
            ("num_ranks 2\nrank 3 {\n}\n", "line 2"),
            ("num_ranks 2\nrank 0 {\n a: calc 5\n b: calc 5\n a requires b\n b requires a\n}\n", "cycle"),
            ("num_ranks 2\nrank 0 {\n calc 5\n", "not closed"),
            ("num_ranks 2\nrank 0 {\n send 8b to 1\n}\n", "but it receives"),
        ] {
            let e = from_goal(text, 1).unwrap_err();
            assert!(e.message.contains(needle), "{text:?}: {}", e.message);
        }
    }

    #[test]
    fn a_schedule_written_as_goal_reads_back_as_the_same_schedule() {
        for (op, algo) in [("allreduce", "ring"), ("alltoall", "bruck"), ("bcast", "binomial"), ("barrier", "dissemination")] {
            let s = build_named(op, algo, 0, 1000, Params::new(6, 0)).unwrap();
            let rates = LocalRates { copy_bytes_per_ns: 4.0, reduce_bytes_per_ns: 2.0 };
            let text = to_goal(&s, rates).unwrap();
            let back = from_goal(&text, 4).unwrap();
            assert_eq!(back.messages(), s.messages(), "{op} {algo}");
            assert_eq!(back.bytes_sent(), s.bytes_sent(), "{op} {algo}");
            // Written again, it is the same text but for copies and sums
            // (now calc steps): a fixed point after one round.
            let again = to_goal(&back, rates).unwrap();
            assert_eq!(to_goal(&from_goal(&again, 4).unwrap(), rates).unwrap(), again);
        }
    }
}
