//! The data executor: runs a schedule on real buffers (64-bit integers,
//! wrapping sums) and checks every rank's result against the collective's
//! definition.
//!
//! Steps run as soon as their dependencies (and, for a receive, its
//! message) allow, taken from the ready set in one of two orders. A
//! schedule whose result depends on the order has a race (two unordered
//! steps touching the same elements); running both orders catches that.
//!
//! Besides the values it checks *causality*: each step carries the set of
//! ranks whose start it follows (through dependencies and messages). A
//! barrier moves no data, so this is its whole check; for the others it
//! is a second one (e.g. an allreduce rank must have heard from all).

use std::collections::VecDeque;

use crate::schedule::{total, Action, Combine, Rank, Schedule, Span};

/// Above this many ranks the causal sets are not tracked (they cost
/// ranks² bits per step).
const CAUSAL_LIMIT_RANKS: u32 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Ready steps run oldest first.
    Fifo,
    /// Ready steps run newest first.
    Lifo,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataError {
    Invalid(String),
    /// Steps that can never run: a receive without its message, or a
    /// dependency on such a step.
    Stuck {
        rank: Rank,
        step: u32,
        left: u64,
    },
    Mismatch {
        rank: Rank,
        element: u64,
        expected: u64,
        found: u64,
    },
    /// A rank finished without having heard (causally) from another.
    Unheard {
        rank: Rank,
        from: Rank,
    },
    /// Stopped by the caller (Ctrl-C) before every step ran.
    Interrupted { left: u64 },
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(m) => write!(f, "invalid schedule: {m}"),
            Self::Stuck { rank, step, left } => {
                write!(
                    f,
                    "stuck: rank {rank} step {step} can never run ({left} steps left in all)"
                )
            }
            Self::Mismatch {
                rank,
                element,
                expected,
                found,
            } => write!(
                f,
                "wrong result: rank {rank} element {element} is {found:#x}, expected {expected:#x}"
            ),
            Self::Unheard { rank, from } => {
                write!(f, "rank {rank} finished without hearing from rank {from}")
            }
            Self::Interrupted { left: 0 } => write!(f, "interrupted while comparing the results: not checked"),
            Self::Interrupted { left } => write!(f, "interrupted with {left} steps left: not checked"),
        }
    }
}

/// What a successful run moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub messages: u64,
    pub elements_sent: u64,
    /// Final buffers, one per rank.
    pub buffers: Vec<Vec<u64>>,
}

struct Message {
    data: Vec<u64>,
    heard: Vec<u64>,
}

/// Per-step position of each send in its (sender, receiver) stream, and of
/// each receive the position of the send it matches (the k-th receive of a
/// tag matches the k-th send of that tag).
fn sequence_numbers(s: &Schedule) -> Vec<Vec<u32>> {
    let p = s.ranks as usize;
    let mut sends = vec![0u32; p * p];
    let mut of_tag: std::collections::HashMap<(usize, Rank, u32), Vec<u32>> = Default::default();
    let mut seq: Vec<Vec<u32>> = s
        .programs
        .iter()
        .enumerate()
        .map(|(r, prog)| {
            prog.steps
                .iter()
                .map(|st| match &st.action {
                    Action::Send { peer, tag, .. } => {
                        let c = &mut sends[r * p + *peer as usize];
                        *c += 1;
                        of_tag.entry((r, *peer, *tag)).or_default().push(*c - 1);
                        *c - 1
                    }
                    Action::Recv { .. } | Action::Copy(_) | Action::Work { .. } => 0,
                })
                .collect()
        })
        .collect();
    let mut taken: std::collections::HashMap<(usize, Rank, u32), usize> = Default::default();
    for (r, prog) in s.programs.iter().enumerate() {
        for (i, st) in prog.steps.iter().enumerate() {
            if let Action::Recv { peer, tag, .. } = &st.action {
                let key = (*peer as usize, r as Rank, *tag);
                let k = taken.entry(key).or_default();
                // validate() has checked that every receive has its send.
                seq[r][i] = of_tag.get(&key).and_then(|v| v.get(*k)).copied().unwrap_or(u32::MAX);
                *k += 1;
            }
        }
    }
    seq
}

fn gather(buf: &[u64], spans: &[Span]) -> Vec<u64> {
    let mut out = Vec::with_capacity(total(spans) as usize);
    for s in spans {
        out.extend_from_slice(&buf[s.offset as usize..s.end() as usize]);
    }
    out
}

fn scatter(buf: &mut [u64], spans: &[Span], data: &[u64], combine: Combine) {
    let mut k = 0;
    for s in spans {
        for slot in &mut buf[s.offset as usize..s.end() as usize] {
            *slot = match combine {
                Combine::Replace => data[k],
                Combine::Sum => slot.wrapping_add(data[k]),
            };
            k += 1;
        }
    }
}

fn own_bit(r: usize, words: usize) -> Vec<u64> {
    let mut own = vec![0u64; words];
    if words > 0 {
        own[r / 64] |= 1 << (r % 64);
    }
    own
}

fn union(into: &mut [u64], from: &[u64]) {
    into.iter_mut().zip(from).for_each(|(a, b)| *a |= b);
}

/// Runs `schedule` on its collective's initial buffers and checks the result.
pub fn execute(schedule: &Schedule, order: Order) -> Result<Outcome, DataError> {
    execute_until(schedule, order, &mut || false)
}

/// Steps run between two calls of `stop`.
const STOP_EVERY_STEPS: u64 = 1 << 14;

/// [`execute`], asking `stop` every [`STOP_EVERY_STEPS`] steps (Ctrl-C):
/// when it says true, [`DataError::Interrupted`].
pub fn execute_until(schedule: &Schedule, order: Order, stop: &mut dyn FnMut() -> bool) -> Result<Outcome, DataError> {
    schedule.validate().map_err(|e| DataError::Invalid(e.0))?;
    let p = schedule.ranks as usize;
    let coll = schedule.collective;
    let words = if schedule.ranks <= CAUSAL_LIMIT_RANKS {
        p.div_ceil(64)
    } else {
        0
    };
    let seq = sequence_numbers(schedule);
    // Every rank's vectors (gigabytes for a large collective: seconds to
    // fill), with `stop` asked between ranks.
    let mut buffers: Vec<Vec<u64>> = Vec::with_capacity(p);
    for r in 0..p {
        if r % 8 == 7 && stop() {
            return Err(DataError::Interrupted { left: schedule.programs.iter().map(|p| p.steps.len() as u64).sum() });
        }
        buffers.push(coll.initial(r as Rank, schedule.ranks, schedule.count, schedule.buffer_elements));
    }
    // Dependants and unmet-dependency counts per step.
    let mut dependants: Vec<Vec<Vec<u32>>> = Vec::with_capacity(p);
    let mut unmet: Vec<Vec<u32>> = Vec::with_capacity(p);
    let mut heard: Vec<Vec<Vec<u64>>> = Vec::with_capacity(p);
    for (r, prog) in schedule.programs.iter().enumerate() {
        let n = prog.steps.len();
        let mut d = vec![Vec::new(); n];
        for (i, st) in prog.steps.iter().enumerate() {
            for &dep in &st.deps {
                d[dep as usize].push(i as u32);
            }
        }
        dependants.push(d);
        unmet.push(prog.steps.iter().map(|st| st.deps.len() as u32).collect());
        heard.push(vec![own_bit(r, words); n]);
    }
    let mut ready: VecDeque<(Rank, u32)> = VecDeque::new();
    for (r, u) in unmet.iter().enumerate() {
        for (i, &c) in u.iter().enumerate() {
            if c == 0 {
                ready.push_back((r as Rank, i as u32));
            }
        }
    }
    // In-flight messages and parked receives, keyed by (from, to, sequence).
    let mut mailbox: std::collections::HashMap<(Rank, Rank, u32), Message> = Default::default();
    let mut parked: std::collections::HashSet<(Rank, Rank, u32)> = Default::default();
    let mut left: u64 = schedule.programs.iter().map(|p| p.steps.len() as u64).sum();
    let (mut messages, mut elements_sent) = (0u64, 0u64);
    let mut exit_heard: Vec<Vec<u64>> = (0..p).map(|r| own_bit(r, words)).collect();

    while let Some((r, i)) = match order {
        Order::Fifo => ready.pop_front(),
        Order::Lifo => ready.pop_back(),
    } {
        if left % STOP_EVERY_STEPS == 0 && stop() {
            return Err(DataError::Interrupted { left });
        }
        let ru = r as usize;
        let step = &schedule.programs[ru].steps[i as usize];
        // Causal set: own rank plus everything the dependencies had heard.
        let mut h = heard[ru][i as usize].clone();
        for &d in &step.deps {
            union(&mut h, &heard[ru][d as usize]);
        }
        match &step.action {
            Action::Send { peer, spans, .. } => {
                let data = gather(&buffers[ru], spans);
                messages += 1;
                elements_sent += data.len() as u64;
                let key = (r, *peer, seq[ru][i as usize]);
                mailbox.insert(
                    key,
                    Message {
                        data,
                        heard: h.clone(),
                    },
                );
                if parked.remove(&key) {
                    ready.push_back((*peer, find_recv(schedule, &seq, key)));
                }
            }
            Action::Recv {
                peer,
                spans,
                combine,
                ..
            } => {
                let key = (*peer, r, seq[ru][i as usize]);
                let Some(msg) = mailbox.remove(&key) else {
                    parked.insert(key);
                    continue;
                };
                scatter(&mut buffers[ru], spans, &msg.data, *combine);
                union(&mut h, &msg.heard);
            }
            Action::Copy(c) => {
                let data = gather(&buffers[ru], &c.from);
                scatter(&mut buffers[ru], &c.to, &data, Combine::Replace);
            }
            Action::Work { .. } => {}
        }
        union(&mut exit_heard[ru], &h);
        heard[ru][i as usize] = h;
        left -= 1;
        for &j in &dependants[ru][i as usize] {
            unmet[ru][j as usize] -= 1;
            if unmet[ru][j as usize] == 0 {
                ready.push_back((r, j));
            }
        }
    }
    if left > 0 {
        let (rank, step) = first_unfinished(schedule, &unmet, &parked, &seq);
        return Err(DataError::Stuck { rank, step, left });
    }
    check(schedule, &buffers, &exit_heard, words, stop)?;
    Ok(Outcome {
        messages,
        elements_sent,
        buffers,
    })
}

fn find_recv(s: &Schedule, seq: &[Vec<u32>], (from, to, k): (Rank, Rank, u32)) -> u32 {
    s.programs[to as usize]
        .steps
        .iter()
        .enumerate()
        .position(|(j, st)| {
            matches!(st.action, Action::Recv { peer, .. } if peer == from)
                && seq[to as usize][j] == k
        })
        .expect("a parked receive exists") as u32
}

fn first_unfinished(
    s: &Schedule,
    unmet: &[Vec<u32>],
    parked: &std::collections::HashSet<(Rank, Rank, u32)>,
    seq: &[Vec<u32>],
) -> (Rank, u32) {
    for (r, prog) in s.programs.iter().enumerate() {
        for (i, st) in prog.steps.iter().enumerate() {
            if let Action::Recv { peer, .. } = st.action {
                if parked.contains(&(peer, r as Rank, seq[r][i])) {
                    return (r as Rank, i as u32);
                }
            }
            if unmet[r][i] > 0 {
                return (r as Rank, i as u32);
            }
        }
    }
    (0, 0)
}

fn check(
    s: &Schedule,
    buffers: &[Vec<u64>],
    heard: &[Vec<u64>],
    words: usize,
    stop: &mut dyn FnMut() -> bool,
) -> Result<(), DataError> {
    let coll = s.collective;
    // The result every rank must hold, where it is the same for all (an
    // allreduce's sum costs ranks x elements: once, not once per rank),
    // computed in stretches with `stop` asked between them.
    let expected_of = |r: Rank, stop: &mut dyn FnMut() -> bool| -> Result<Vec<u64>, DataError> {
        let len = coll.expected_len(r, s.ranks, s.count);
        let stretch = (1u64 << 24) / (s.ranks as u64).max(1) + 1;
        let mut e = Vec::with_capacity(len as usize);
        for k in 0..len {
            if k % stretch == 0 && k > 0 && stop() {
                return Err(DataError::Interrupted { left: 0 });
            }
            e.push(coll.expected_element(r, s.ranks, s.count, k));
        }
        Ok(e)
    };
    let shared = match coll {
        crate::Collective::Allreduce | crate::Collective::Bcast { .. } | crate::Collective::Allgather => Some(expected_of(0, stop)?),
        _ => None,
    };
    for (r, buf) in buffers.iter().enumerate() {
        if stop() {
            return Err(DataError::Interrupted { left: 0 });
        }
        let r = r as Rank;
        let own;
        let expected = match &shared {
            Some(e) => e,
            None => {
                own = expected_of(r, stop)?;
                &own
            }
        };
        let base = coll.result_offset(r, s.ranks, s.count);
        for (k, &want) in expected.iter().enumerate() {
            let element = base + k as u64;
            let found = buf[element as usize];
            if found != want {
                return Err(DataError::Mismatch {
                    rank: r,
                    element,
                    expected: want,
                    found,
                });
            }
        }
        if words == 0 {
            continue;
        }
        let must_all = coll.must_hear_from_all(r);
        let root = coll.root() as usize;
        for from in 0..s.ranks as usize {
            let needed =
                must_all || (matches!(coll, crate::Collective::Bcast { .. } | crate::Collective::Scatter { .. }) && from == root);
            if needed && heard[r as usize][from / 64] & (1 << (from % 64)) == 0 {
                return Err(DataError::Unheard {
                    rank: r,
                    from: from as Rank,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Span;
    use crate::Collective;

    /// Rank 0 sends tag 5 (1 element) then tag 6 (3 elements); rank 1
    /// receives tag 6 first: each receive gets the message of its tag.
    #[test]
    fn receives_match_sends_of_their_tag_in_any_order() {
        let mut s = Schedule::new(Collective::Transfers, "tags", 2, 4);
        s.buffer_elements = 8;
        let a = s.send(0, 1, vec![Span::new(0, 1)], 0, &[]);
        s.set_tag(0, a, 5);
        let b = s.send(0, 1, vec![Span::new(1, 3)], 0, &[a]);
        s.set_tag(0, b, 6);
        let x = s.recv(1, 0, vec![Span::new(4, 3)], Combine::Replace, &[]);
        s.set_tag(1, x, 6);
        let y = s.recv(1, 0, vec![Span::new(7, 1)], Combine::Replace, &[x]);
        s.set_tag(1, y, 5);
        s.validate().expect("sizes agree per tag");
        for order in [Order::Fifo, Order::Lifo] {
            let out = execute(&s, order).expect("runs");
            assert_eq!(out.buffers[1][4..7], out.buffers[0][1..4], "tag 6's three elements");
            assert_eq!(out.buffers[1][7], out.buffers[0][0], "tag 5's one element");
        }
        // Without the tags the first receive would take the 1-element send.
        let mut untagged = s.clone();
        untagged.set_tag(0, a, 0);
        untagged.set_tag(0, b, 0);
        untagged.set_tag(1, x, 0);
        untagged.set_tag(1, y, 0);
        assert!(untagged.validate().is_err());
    }
}
