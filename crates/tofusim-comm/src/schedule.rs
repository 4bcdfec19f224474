//! The schedule: what each rank does, in which order, over which interface.
//!
//! A rank's [`Program`] is a list of [`Step`]s. A step may start once every
//! step it depends on (`deps`, indices into the same program, always
//! earlier ones) has finished; steps without an order between them may run
//! at the same time, which is how an algorithm uses several TNIs at once.
//! Messages are matched in order per (sender, receiver) pair: the k-th send
//! from `a` to `b` is the k-th receive at `b` from `a`. A send reads its
//! data when it starts (it owns a snapshot); a receive writes when the
//! message has arrived.

use serde::Serialize;

use crate::collective::Collective;
use crate::ELEMENT_BYTES;

pub use crate::collective::Rank;

/// A schedule that breaks its own rules: what [`Schedule::validate`]
/// found, described.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSchedule(pub String);

/// Index of a step within its rank's program.
pub type StepId = u32;

/// A contiguous range of a rank's buffer, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Span {
    pub offset: u64,
    pub len: u64,
}

impl Span {
    pub fn new(offset: u64, len: u64) -> Self {
        Self { offset, len }
    }

    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// A gather or scatter list: one span inline (nearly every message has
/// one), more on the heap. A schedule holds millions of them.
pub type Spans = smallvec::SmallVec<[Span; 1]>;

/// A step's dependencies: up to two inline (nearly every step has at most
/// two), more on the heap. 16 bytes (a small vector of two would take 24):
/// the heap pointer's null value marks the inline form, so a schedule of
/// millions of steps (a ring on 1,152 ranks: 5.3M) keeps 56 bytes a step.
#[derive(Clone)]
pub struct Deps(DepsRepr);

#[derive(Clone)]
enum DepsRepr {
    /// Up to two, [`NO_STEP`] marking an empty slot (always the last).
    Few([StepId; 2]),
    Many(Box<[StepId]>),
}

/// Equal when they list the same steps in the same order, whatever the form.
impl PartialEq for Deps {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl Eq for Deps {}

/// An empty slot of `DepsRepr::Few`; never a step's index (a program would
/// need 4G steps).
const NO_STEP: StepId = StepId::MAX;

impl Deps {
    pub fn from_slice(ids: &[StepId]) -> Self {
        Deps(match *ids {
            [] => DepsRepr::Few([NO_STEP; 2]),
            [a] if a != NO_STEP => DepsRepr::Few([a, NO_STEP]),
            [a, b] if a != NO_STEP && b != NO_STEP => DepsRepr::Few([a, b]),
            _ => DepsRepr::Many(ids.into()),
        })
    }

    /// Held inline (no heap block).
    pub fn is_inline(&self) -> bool {
        matches!(self.0, DepsRepr::Few(_))
    }

    /// Keeps the dependencies for which `keep` holds, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&StepId) -> bool) {
        let kept: Vec<StepId> = self.iter().copied().filter(|d| keep(d)).collect();
        *self = Deps::from_slice(&kept);
    }
}

impl Default for Deps {
    fn default() -> Self {
        Deps::from_slice(&[])
    }
}

impl std::ops::Deref for Deps {
    type Target = [StepId];

    fn deref(&self) -> &[StepId] {
        match &self.0 {
            DepsRepr::Few(ids) => {
                let n = ids.iter().take_while(|&&d| d != NO_STEP).count();
                &ids[..n]
            }
            DepsRepr::Many(ids) => ids,
        }
    }
}

impl<'a> IntoIterator for &'a Deps {
    type Item = &'a StepId;
    type IntoIter = std::slice::Iter<'a, StepId>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::fmt::Debug for Deps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// As a list of step indices, the form the small vector had.
impl Serialize for Deps {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for Deps {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ids = Vec::<StepId>::deserialize(deserializer)?;
        Ok(Deps::from_slice(&ids))
    }
}

/// A span list as the schedule keeps it: inline when it fits.
fn compact(spans: impl Into<Spans>) -> Spans {
    let mut s = spans.into();
    s.shrink_to_fit();
    s
}

/// Total elements of a gather list.
pub fn total(spans: &[Span]) -> u64 {
    spans.iter().map(|s| s.len).sum()
}

/// What a receive does with the arriving elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combine {
    /// Overwrite the buffer.
    Replace,
    /// Add element-wise into the buffer (a receive fused with a local
    /// reduction; executors charge the reduction time).
    Sum,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Action {
    /// Send the elements of `spans` (a gather list, one message) to `peer`
    /// through network interface `tni`. `pace` > 1 asks the interface to
    /// inject at 1/`pace` of its rate (injection-rate control).
    Send {
        peer: Rank,
        spans: Spans,
        tni: u8,
        pace: u8,
        /// Done by the TNI alone, without the host (the reply of an RDMA
        /// Get or Atomic): no host overhead.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        offload: bool,
        /// Matching context (see [`Action::Recv`]'s `tag`).
        #[serde(default, skip_serializing_if = "is_zero")]
        tag: u32,
    },
    /// Receive one message from `peer` into `spans` (a scatter list).
    Recv {
        peer: Rank,
        spans: Spans,
        combine: Combine,
        /// Handled by the TNI alone (the request of an RDMA Get or Atomic
        /// arriving at its target): no host overhead.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        offload: bool,
        /// Matching context: a receive matches the sends from `peer` with
        /// the same tag, in order (MPI's communicator and tag; a replayed
        /// trace gives each message its own). Collectives use 0.
        #[serde(default, skip_serializing_if = "is_zero")]
        tag: u32,
    },
    /// Local copy (boxed: rare, and twice the size of the other actions,
    /// which a schedule holds millions of).
    Copy(Box<LocalCopy>),
    /// Local software work of a fixed duration (protocol processing of an
    /// MPI layer); moves no data.
    Work { ns: u32 },
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

impl Action {
    /// What the step does, for messages (`a receive from rank 3`).
    pub fn describe(&self) -> String {
        match self {
            Action::Send { peer, .. } => format!("a send to rank {peer}"),
            Action::Recv { peer, .. } => format!("a receive from rank {peer}"),
            Action::Copy(_) => "a copy".into(),
            Action::Work { .. } => "software or compute".into(),
        }
    }
}

/// The elements of `from`, in order, to `to` (same total).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalCopy {
    pub from: Spans,
    pub to: Spans,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub action: Action,
    #[serde(default)]
    pub deps: Deps,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    pub steps: Vec<Step>,
}

/// A collective algorithm written out for a given process count and size.
#[derive(Clone, Debug, Serialize)]
pub struct Schedule {
    pub collective: Collective,
    pub algorithm: &'static str,
    pub ranks: u32,
    /// Elements per rank of the collective (see [`Collective`]).
    pub count: u64,
    /// Elements of every rank's buffer: the collective's regions plus any
    /// scratch space the algorithm needs.
    pub buffer_elements: u64,
    /// Why the algorithm ran in a simpler form than its name says (e.g. a
    /// torus algorithm on a communicator that is not a torus), if it did.
    pub fallback: Option<String>,
    pub programs: Vec<Program>,
}

/// A schedule as data: what [`Schedule`] serialises to (the JSON
/// `tofusim.collective_schedule` returns), read back.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleData {
    collective: Collective,
    /// Its name (a built-in's, or the author's).
    #[serde(default)]
    algorithm: Option<String>,
    ranks: u32,
    count: u64,
    #[serde(default)]
    buffer_elements: Option<u64>,
    #[serde(default)]
    fallback: Option<String>,
    programs: Vec<Program>,
}

/// Most ranks and steps a schedule given as data may have (its steps are
/// held in memory as any built schedule's).
pub const MAX_GIVEN_RANKS: u32 = 1 << 20;
pub const MAX_GIVEN_STEPS: u64 = 40_000_000;
/// Most elements (of 8 bytes) in a given schedule's vector: 8 TiB.
pub const MAX_GIVEN_ELEMENTS: u64 = 1 << 40;

/// What [`Schedule::from_json`] calls a schedule given without a name.
pub const GIVEN: &str = "given";

impl Schedule {
    /// A schedule given as data (`tofusim coll --schedule FILE`, a
    /// `tofusim.Schedule` written in Python): the JSON a schedule
    /// serialises to, its steps checked as any built schedule's
    /// ([`Schedule::validate`]) and the collective's buffer. Returns it
    /// with the name it gives itself.
    pub fn from_json(text: &str) -> Result<(Schedule, String), crate::BuildError> {
        let bad = |message: String| crate::BuildError { key: "schedule", message };
        let d: ScheduleData = serde_json::from_str(text).map_err(|e| bad(format!("not a schedule: {e}")))?;
        if !(1..=MAX_GIVEN_RANKS).contains(&d.ranks) {
            return Err(bad(format!("ranks: expected 1 to {MAX_GIVEN_RANKS}, found {}", d.ranks)));
        }
        if d.programs.len() != d.ranks as usize {
            return Err(bad(format!("{} programs for {} ranks: expected one per rank", d.programs.len(), d.ranks)));
        }
        let steps: u64 = d.programs.iter().map(|p| p.steps.len() as u64).sum();
        if steps > MAX_GIVEN_STEPS {
            return Err(bad(format!("{steps} steps: more than the {MAX_GIVEN_STEPS} a schedule may hold")));
        }
        if let Collective::Bcast { root } | Collective::Reduce { root } | Collective::Gather { root } | Collective::Scatter { root } = d.collective {
            if root >= d.ranks {
                return Err(bad(format!("root {root}: expected a rank from 0 to {}", d.ranks - 1)));
            }
        }
        if d.count > MAX_GIVEN_ELEMENTS {
            return Err(bad(format!("count {}: more than the {MAX_GIVEN_ELEMENTS} elements a schedule's vector may have", d.count)));
        }
        if d.buffer_elements.is_some_and(|b| b > 4 * MAX_GIVEN_ELEMENTS) {
            return Err(bad(format!("buffer_elements: more than the {} a rank's buffer may have", 4 * MAX_GIVEN_ELEMENTS)));
        }
        // Ranks ≤ 2^20 and count ≤ 2^40: the regions' size fits.
        let needed = d.collective.buffer_elements(d.ranks, d.count);
        let buffer_elements = d.buffer_elements.unwrap_or(needed);
        if buffer_elements < needed {
            return Err(bad(format!("buffer_elements {buffer_elements}: the {} of {} ranks needs at least {needed}", d.collective.name(), d.ranks)));
        }
        if let Some((r, i)) = d.programs.iter().enumerate().find_map(|(r, p)| {
            p.steps.iter().position(|st| matches!(st.action, Action::Send { pace: 0, .. })).map(|i| (r, i))
        }) {
            return Err(bad(format!("rank {r} step {i}: pace 0; expected 1 (full rate) or more")));
        }
        // Every span inside the buffer, its end computed without wrapping.
        for (r, p) in d.programs.iter().enumerate() {
            for (i, st) in p.steps.iter().enumerate() {
                let spans: Vec<&Span> = match &st.action {
                    Action::Send { spans, .. } | Action::Recv { spans, .. } => spans.iter().collect(),
                    Action::Copy(c) => c.from.iter().chain(c.to.iter()).collect(),
                    Action::Work { .. } => Vec::new(),
                };
                if let Some(sp) = spans.iter().find(|sp| sp.offset.checked_add(sp.len).is_none_or(|end| end > buffer_elements)) {
                    return Err(bad(format!("rank {r} step {i}: span at {} of {} elements lies outside the buffer of {buffer_elements}", sp.offset, sp.len)));
                }
            }
        }
        let s = Schedule { collective: d.collective, algorithm: GIVEN, ranks: d.ranks, count: d.count, buffer_elements, fallback: d.fallback, programs: d.programs };
        s.validate().map_err(|e| bad(e.0))?;
        Ok((s, d.algorithm.unwrap_or_else(|| GIVEN.to_string())))
    }

    pub fn new(collective: Collective, algorithm: &'static str, ranks: u32, count: u64) -> Self {
        Self {
            collective,
            algorithm,
            ranks,
            count,
            buffer_elements: collective.buffer_elements(ranks, count),
            fallback: None,
            programs: vec![Program::default(); ranks as usize],
        }
    }

    fn push(&mut self, rank: Rank, action: Action, deps: &[StepId]) -> StepId {
        let steps = &mut self.programs[rank as usize].steps;
        steps.push(Step {
            action,
            deps: Deps::from_slice(deps),
        });
        (steps.len() - 1) as StepId
    }

    pub fn send(
        &mut self,
        rank: Rank,
        peer: Rank,
        spans: impl Into<Spans>,
        tni: u8,
        deps: &[StepId],
    ) -> StepId {
        self.send_paced(rank, peer, spans, tni, 1, deps)
    }

    pub fn send_paced(
        &mut self,
        rank: Rank,
        peer: Rank,
        spans: impl Into<Spans>,
        tni: u8,
        pace: u8,
        deps: &[StepId],
    ) -> StepId {
        self.push(
            rank,
            Action::Send {
                peer,
                spans: compact(spans),
                tni,
                pace,
                offload: false,
                tag: 0,
            },
            deps,
        )
    }

    pub fn recv(
        &mut self,
        rank: Rank,
        peer: Rank,
        spans: impl Into<Spans>,
        combine: Combine,
        deps: &[StepId],
    ) -> StepId {
        self.push(
            rank,
            Action::Recv {
                peer,
                spans: compact(spans),
                combine,
                offload: false,
                tag: 0,
            },
            deps,
        )
    }

    /// The target side of an RDMA Get or Atomic: the TNI receives the
    /// request (applying it with `combine`) and answers with `reply`,
    /// without the host. Returns the reply step.
    #[allow(clippy::too_many_arguments)]
    pub fn offloaded_reply(
        &mut self,
        rank: Rank,
        peer: Rank,
        request: impl Into<Spans>,
        combine: Combine,
        reply: impl Into<Spans>,
        tni: u8,
        deps: &[StepId],
    ) -> StepId {
        let r = self.push(
            rank,
            Action::Recv {
                peer,
                spans: compact(request),
                combine,
                offload: true,
                tag: 0,
            },
            deps,
        );
        self.push(
            rank,
            Action::Send {
                peer,
                spans: compact(reply),
                tni,
                pace: 1,
                offload: true,
                tag: 0,
            },
            &[r],
        )
    }

    /// Sets the matching tag of send or receive `step` of `rank` (see
    /// [`Action::Recv`]).
    pub fn set_tag(&mut self, rank: Rank, step: StepId, new: u32) {
        match &mut self.programs[rank as usize].steps[step as usize].action {
            Action::Send { tag, .. } | Action::Recv { tag, .. } => *tag = new,
            Action::Copy(_) | Action::Work { .. } => panic!("only sends and receives have tags"),
        }
    }

    pub fn copy(&mut self, rank: Rank, from: impl Into<Spans>, to: impl Into<Spans>, deps: &[StepId]) -> StepId {
        self.push(rank, Action::Copy(Box::new(LocalCopy { from: compact(from), to: compact(to) })), deps)
    }

    pub fn work(&mut self, rank: Rank, ns: u32, deps: &[StepId]) -> StepId {
        self.push(rank, Action::Work { ns }, deps)
    }

    /// Work of `ns` nanoseconds after `deps`, however long: steps of at
    /// most `u32::MAX` ns (4.3 s) one after another. Returns the last.
    pub fn work_ns(&mut self, rank: Rank, ns: u64, deps: &[StepId]) -> StepId {
        let first = ns.min(u32::MAX as u64);
        let mut last = self.work(rank, first as u32, deps);
        let mut left = ns - first;
        while left > 0 {
            let d = left.min(u32::MAX as u64);
            last = self.work(rank, d as u32, &[last]);
            left -= d;
        }
        last
    }

    /// Appends `steps` (a program numbered from 0: one rank's part of
    /// another schedule) to rank `rank`'s program: their dependencies
    /// shifted to where they land, the steps that wait for nothing waiting
    /// for `after`, each action passed through `edit` (a peer or tag
    /// renamed). Returns the index of the first appended step.
    pub fn append(&mut self, rank: Rank, steps: &[Step], after: &[StepId], mut edit: impl FnMut(&mut Action)) -> StepId {
        let program = &mut self.programs[rank as usize].steps;
        let base = program.len() as StepId;
        program.extend(steps.iter().map(|st| {
            let mut action = st.action.clone();
            edit(&mut action);
            let deps = if st.deps.is_empty() {
                Deps::from_slice(after)
            } else if base == 0 {
                st.deps.clone()
            } else {
                Deps::from_slice(&st.deps.iter().map(|&d| base + d).collect::<Vec<_>>())
            };
            Step { action, deps }
        }));
        base
    }

    /// Gives back the room the programs grew into while being written (up
    /// to half of a large schedule).
    pub fn shrink_to_fit(&mut self) {
        self.programs.iter_mut().for_each(|p| p.steps.shrink_to_fit());
    }

    /// Messages sent by all ranks.
    pub fn messages(&self) -> u64 {
        self.sends().count() as u64
    }

    /// Bytes sent by all ranks.
    pub fn bytes_sent(&self) -> u64 {
        self.sends().map(|(_, _, spans)| total(spans)).sum::<u64>() * ELEMENT_BYTES
    }

    /// Highest TNI index used, plus one.
    pub fn tnis_used(&self) -> u8 {
        self.programs
            .iter()
            .flat_map(|p| &p.steps)
            .filter_map(|s| match s.action {
                Action::Send { tni, .. } => Some(tni + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Every send as (rank, peer, spans).
    pub fn sends(&self) -> impl Iterator<Item = (Rank, Rank, &Spans)> {
        self.programs.iter().enumerate().flat_map(|(r, p)| {
            p.steps.iter().filter_map(move |s| match &s.action {
                Action::Send { peer, spans, .. } => Some((r as Rank, *peer, spans)),
                _ => None,
            })
        })
    }

    /// Structural checks: dependencies point backwards, spans lie in the
    /// buffer, peers exist and are not the rank itself, copies balance, and
    /// every (sender, receiver, tag) has as many sends as receives of equal
    /// sizes, in order.
    pub fn validate(&self) -> Result<(), InvalidSchedule> {
        self.broken_rule().map_err(InvalidSchedule)
    }

    /// [`Schedule::validate`]'s checks, the first rule broken described.
    fn broken_rule(&self) -> Result<(), String> {
        let p = self.ranks;
        // (sender, receiver, tag, order, elements), each side numbered in
        // program order: sorted by key and order, the two must be the same
        // sequence. (A map of vectors per key costs an allocation per
        // message when every message has its own tag, as in a replayed
        // trace.) The tables are sized exactly and sorted in place: a
        // schedule of millions of messages (a ring on 1,152 ranks: 2.65M)
        // would otherwise double them while growing and take half again to
        // sort, a peak beside the schedule itself.
        let (sends, recvs) = self.programs.iter().flat_map(|prog| &prog.steps).fold(
            (0usize, 0usize),
            |(s, r), step| match step.action {
                Action::Send { .. } => (s + 1, r),
                Action::Recv { .. } => (s, r + 1),
                _ => (s, r),
            },
        );
        let mut sent: Vec<MessageRecord> = Vec::with_capacity(sends);
        let mut recvd: Vec<MessageRecord> = Vec::with_capacity(recvs);
        for (r, prog) in self.programs.iter().enumerate() {
            let r = r as Rank;
            for (i, step) in prog.steps.iter().enumerate() {
                let at = || format!("rank {r} step {i}");
                if let Some(d) = step.deps.iter().find(|&&d| d as usize >= i) {
                    return Err(format!("{}: depends on step {d}, not an earlier one", at()));
                }
                let in_buffer =
                    |spans: &[Span]| spans.iter().all(|s| s.end() <= self.buffer_elements);
                match &step.action {
                    Action::Send { peer, spans, tag, .. } | Action::Recv { peer, spans, tag, .. } => {
                        if *peer >= p || *peer == r {
                            return Err(format!(
                                "{}: peer {peer} is not another rank of {p}",
                                at()
                            ));
                        }
                        if !in_buffer(spans) {
                            return Err(format!(
                                "{}: span beyond the buffer of {} elements",
                                at(),
                                self.buffer_elements
                            ));
                        }
                        if matches!(step.action, Action::Send { .. }) {
                            sent.push((r, *peer, *tag, sent.len() as u32, total(spans)));
                        } else {
                            recvd.push((*peer, r, *tag, recvd.len() as u32, total(spans)));
                        }
                    }
                    Action::Copy(c) => {
                        let (from, to) = (&c.from, &c.to);
                        if total(from) != total(to) || !in_buffer(from) || !in_buffer(to) {
                            return Err(format!(
                                "{}: copy of unequal lengths or beyond the buffer",
                                at()
                            ));
                        }
                    }
                    Action::Work { .. } => {}
                }
            }
        }
        sent.sort_unstable_by_key(|m| (m.0, m.1, m.2, m.3));
        recvd.sort_unstable_by_key(|m| (m.0, m.1, m.2, m.3));
        let key = |m: &MessageRecord| (m.0, m.1, m.2);
        let same = |a: &MessageRecord, b: &MessageRecord| key(a) == key(b) && a.4 == b.4;
        if sent.len() != recvd.len() || !sent.iter().zip(&recvd).all(|(a, b)| same(a, b)) {
            // The first key whose sends and receives differ.
            let at = sent
                .iter()
                .zip(&recvd)
                .position(|(a, b)| !same(a, b))
                .unwrap_or(sent.len().min(recvd.len()));
            let k = sent.get(at).or(recvd.get(at)).map(key).expect("a difference");
            let sizes = |v: &[MessageRecord]| v.iter().filter(|m| key(m) == k).map(|m| m.4).collect::<Vec<_>>();
            let (s_, r_) = (sizes(&sent), sizes(&recvd));
            if s_.is_empty() {
                return Err(format!("rank {} receives from rank {} which sends nothing", k.1, k.0));
            }
            return Err(format!("rank {} sends {:?} elements to rank {} (tag {}) but it receives {:?}", k.0, s_, k.1, k.2, r_));
        }
        Ok(())
    }
}

/// One message as [`Schedule::validate`] matches it: (sender, receiver,
/// tag, order on its side, elements); 24 bytes.
type MessageRecord = (Rank, Rank, u32, u32, u64);

/// One point-to-point transfer: `bytes` from rank `src` to rank `dst` on
/// the sender's TNI `tni` (the `transfers` schedule of
/// `algorithms::transfers`, and the flow executor's transfer list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub src: Rank,
    pub dst: Rank,
    pub bytes: u64,
    pub tni: u8,
}


#[cfg(test)]
mod tests {
    use super::*;

    /// Two sends 0 → 1 of `a` then `b` elements, and two receives at 1 of
    /// `x` then `y`.
    fn pair(a: u64, b: u64, x: u64, y: u64) -> Schedule {
        let mut s = Schedule::new(Collective::Allreduce, "test", 2, 8);
        let s0 = s.send(0, 1, vec![Span::new(0, a)], 0, &[]);
        s.send(0, 1, vec![Span::new(0, b)], 0, &[s0]);
        let r0 = s.recv(1, 0, vec![Span::new(0, x)], Combine::Replace, &[]);
        s.recv(1, 0, vec![Span::new(0, y)], Combine::Replace, &[r0]);
        s
    }

    #[test]
    fn messages_match_in_order_per_pair() {
        pair(1, 3, 1, 3).validate().expect("same sizes in the same order");
        let swapped = pair(1, 3, 3, 1).validate().unwrap_err();
        assert_eq!(swapped.0, "rank 0 sends [1, 3] elements to rank 1 (tag 0) but it receives [3, 1]");
    }

    #[test]
    fn a_receive_without_its_send_is_named() {
        let mut s = pair(2, 2, 2, 2);
        s.recv(0, 1, vec![Span::new(0, 2)], Combine::Replace, &[]);
        assert_eq!(s.validate().unwrap_err().0, "rank 0 receives from rank 1 which sends nothing");
        let mut t = pair(2, 2, 2, 2);
        t.send(1, 0, vec![Span::new(0, 2)], 0, &[]);
        assert_eq!(t.validate().unwrap_err().0, "rank 1 sends [2] elements to rank 0 (tag 0) but it receives []");
    }

    #[test]
    fn deps_keep_their_order_inline_and_on_the_heap() {
        assert_eq!(std::mem::size_of::<Deps>(), 16);
        assert_eq!(std::mem::size_of::<Step>(), 56);
        for ids in [&[][..], &[4], &[4, 2], &[4, 2, 9], &[7, StepId::MAX]] {
            let d = Deps::from_slice(ids);
            assert_eq!(&d[..], ids);
            assert_eq!(serde_json::to_string(&d).unwrap(), serde_json::to_string(ids).unwrap());
        }
        assert!(Deps::from_slice(&[1, 2]).is_inline() && !Deps::from_slice(&[1, 2, 3]).is_inline());
        assert_eq!(Deps::from_slice(&[7, StepId::MAX])[..], [7, StepId::MAX]);
        let mut d = Deps::from_slice(&[5, 6, 7]);
        d.retain(|&x| x != 6);
        assert_eq!((&d[..], d.is_inline()), (&[5, 7][..], true));
    }

    #[test]
    fn a_dependency_on_a_later_step_is_refused() {
        let mut s = pair(1, 1, 1, 1);
        s.programs[0].steps[0].deps = Deps::from_slice(&[1]);
        assert_eq!(s.validate().unwrap_err().0, "rank 0 step 0: depends on step 1, not an earlier one");
    }
}
