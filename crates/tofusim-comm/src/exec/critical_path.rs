//! The critical path of a schedule run on the packet engine, and each
//! rank's time split: what sets the completion time.
//!
//! From the last step to finish, walk back along the predecessor that
//! finished last: a step waits for its dependencies, and a receive also
//! for its message, whose transfer began when the matching send started.
//! Each link of the chain is one segment — a transfer through the network
//! (send start to arrival), the host's send or receive overhead, a
//! reduction, a copy, software or compute work — so the chain tells how
//! much of the completion time was network and how much was hosts, and
//! which ranks and messages carry it.
//!
//! Per rank, its steps' time in compute (work, copies, reductions), host
//! overhead, and waiting for messages (a receive whose message arrived
//! after the receive could have started), with the partner it waited for
//! most.

use serde::Serialize;
use std::collections::BTreeMap;

/// One segment of the critical path, cycles.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Segment {
    /// "transfer" (from the message's release, after the send overhead, to
    /// its arrival: queueing at the TNI and the network) | "send-overhead" |
    /// "receive-overhead" | "reduction" | "copy" | "work".
    pub kind: &'static str,
    /// The rank the segment runs on (the receiver for a transfer).
    pub rank: u32,
    pub step: u32,
    /// The other rank of a transfer (its sender).
    pub peer: Option<u32>,
    pub bytes: u64,
    pub start_cycle: u64,
    pub end_cycle: u64,
}

/// A rank's time split.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RankTime {
    pub rank: u32,
    /// When its last step finished.
    pub end_cycle: u64,
    pub compute_cycles: u64,
    pub overhead_cycles: u64,
    /// Time its receives waited for messages after they could have run.
    pub waiting_cycles: u64,
    /// The sender it waited for longest, and how long in all.
    pub waited_most_for: Option<u32>,
    pub waited_most_cycles: u64,
}

/// What sets a schedule's completion time.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct CriticalPath {
    pub end_cycle: u64,
    /// Cycles of the path by segment kind (they add up to `end_cycle`).
    pub by_kind: BTreeMap<&'static str, u64>,
    /// Transfers on the path, and the distinct ranks it visits.
    pub transfers: u64,
    pub ranks_on_path: u64,
    /// The path's segments, first first (at most [`MAX_SEGMENTS`]: the
    /// last ones, nearest the end, when it is longer).
    pub segments: Vec<Segment>,
    pub segments_omitted: u64,
    /// The ranks that finished last (at most 8), slowest first.
    pub slowest_ranks: Vec<RankTime>,
    /// The rank the others waited for longest in all (their receives from
    /// it), and the total.
    pub most_waited_for: Option<u32>,
    pub most_waited_for_cycles: u64,
    /// Waiting summed over every rank.
    pub waiting_cycles: u64,
}

/// Segments a result keeps.
pub const MAX_SEGMENTS: usize = 200;

/// What the critical path needs of a step, resolved by the executor.
#[derive(Clone)]
pub(crate) struct StepView {
    pub rank: u32,
    pub step: u32,
    /// Flat indices of its dependencies.
    pub deps: smallvec::SmallVec<[u32; 2]>,
    pub finish: u64,
    pub kind: StepKind,
}

#[derive(Clone, Copy)]
pub(crate) enum StepKind {
    /// A send: its host overhead (0 when offloaded).
    Send { overhead: u64 },
    /// A receive: flat index of the matching send, the sender, bytes, and
    /// the host's share after arrival (overhead + reduction).
    Recv { send: u32, peer: u32, bytes: u64, overhead: u64, reduction: u64 },
    Copy,
    Work,
}

/// The path and the ranks' split from the executed steps, `view(s)` the
/// step of flat index `s` (`n` steps; `rank_steps[r]` rank r's flat range).
pub(crate) fn analyse(finish: &[u64], rank_steps: &[std::ops::Range<u32>], view: &dyn Fn(u32) -> StepView) -> CriticalPath {
    let mut ranks: Vec<RankTime> = Vec::with_capacity(rank_steps.len());
    let mut waited_on: BTreeMap<u32, u64> = BTreeMap::new();
    let mut last: Option<(u64, u32)> = None;
    for (r, range) in rank_steps.iter().enumerate() {
        let mut rt = RankTime { rank: r as u32, end_cycle: 0, compute_cycles: 0, overhead_cycles: 0, waiting_cycles: 0, waited_most_for: None, waited_most_cycles: 0 };
        let mut per_peer: BTreeMap<u32, u64> = BTreeMap::new();
        for s in range.clone() {
            let v = view(s);
            if v.finish == u64::MAX {
                continue;
            }
            rt.end_cycle = rt.end_cycle.max(v.finish);
            if last.is_none_or(|(f, _)| v.finish > f) {
                last = Some((v.finish, s));
            }
            let ready = v.deps.iter().map(|&d| finish[d as usize]).max().unwrap_or(0);
            match v.kind {
                StepKind::Send { overhead } => rt.overhead_cycles += overhead,
                StepKind::Recv { peer, overhead, reduction, .. } => {
                    rt.overhead_cycles += overhead - reduction;
                    rt.compute_cycles += reduction;
                    let arrival = v.finish.saturating_sub(overhead);
                    let wait = arrival.saturating_sub(ready);
                    rt.waiting_cycles += wait;
                    *per_peer.entry(peer).or_default() += wait;
                    *waited_on.entry(peer).or_default() += wait;
                }
                StepKind::Copy | StepKind::Work => rt.compute_cycles += v.finish.saturating_sub(ready),
            }
        }
        if let Some((&p, &c)) = per_peer.iter().max_by_key(|(p, c)| (**c, std::cmp::Reverse(**p))) {
            if c > 0 {
                rt.waited_most_for = Some(p);
                rt.waited_most_cycles = c;
            }
        }
        ranks.push(rt);
    }
    let end_cycle = last.map_or(0, |(f, _)| f);
    // The walk back from the last step.
    let mut segments: Vec<Segment> = Vec::new();
    let mut on_path = std::collections::BTreeSet::new();
    let mut cur = last.map(|(_, s)| s);
    while let Some(s) = cur {
        let v = view(s);
        on_path.insert(v.rank);
        let (ready, dep) = v.deps.iter().map(|&d| (finish[d as usize], d)).max().map_or((0, None), |(f, d)| (f, Some(d)));
        let seg = |kind, start, end| Segment { kind, rank: v.rank, step: v.step, peer: None, bytes: 0, start_cycle: start, end_cycle: end };
        cur = match v.kind {
            StepKind::Send { overhead } => {
                segments.push(seg("send-overhead", v.finish.saturating_sub(overhead), v.finish));
                dep
            }
            StepKind::Recv { send, peer, bytes, overhead, reduction } => {
                let arrival = v.finish.saturating_sub(overhead);
                if reduction > 0 {
                    segments.push(seg("reduction", v.finish - reduction, v.finish));
                }
                if overhead > reduction {
                    segments.push(seg("receive-overhead", arrival, v.finish - reduction));
                }
                // The executor starts a receive at max(dependencies, the
                // message's arrival): past its dependencies, the message held
                // it; otherwise (a tie included) the dependency did.
                if arrival > ready {
                    let sent = finish[send as usize];
                    segments.push(Segment { kind: "transfer", rank: v.rank, step: v.step, peer: Some(peer), bytes, start_cycle: sent.min(arrival), end_cycle: arrival });
                    Some(send)
                } else {
                    dep
                }
            }
            StepKind::Copy => {
                segments.push(seg("copy", ready, v.finish));
                dep
            }
            StepKind::Work => {
                segments.push(seg("work", ready, v.finish));
                dep
            }
        };
    }
    segments.reverse();
    let mut by_kind: BTreeMap<&'static str, u64> = BTreeMap::new();
    for s in &segments {
        *by_kind.entry(s.kind).or_default() += s.end_cycle - s.start_cycle;
    }
    debug_assert_eq!(by_kind.values().sum::<u64>(), end_cycle, "the segments cover the path");
    let transfers = segments.iter().filter(|s| s.kind == "transfer").count() as u64;
    let omitted = segments.len().saturating_sub(MAX_SEGMENTS);
    segments.drain(..omitted);
    let (most_waited_for, most_waited_for_cycles) = waited_on
        .iter()
        .max_by_key(|(p, c)| (**c, std::cmp::Reverse(**p)))
        .filter(|(_, c)| **c > 0)
        .map_or((None, 0), |(p, c)| (Some(*p), *c));
    let waiting_cycles = ranks.iter().map(|r| r.waiting_cycles).sum();
    ranks.sort_by(|a, b| b.end_cycle.cmp(&a.end_cycle).then(a.rank.cmp(&b.rank)));
    ranks.truncate(8);
    CriticalPath {
        end_cycle,
        by_kind,
        transfers,
        ranks_on_path: on_path.len() as u64,
        segments,
        segments_omitted: omitted as u64,
        slowest_ranks: ranks,
        most_waited_for,
        most_waited_for_cycles,
        waiting_cycles,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rank 0: work (100 cycles), then a send to rank 1; rank 1: a
    /// receive from 0. The path: work, send overhead, transfer, receive
    /// overhead; rank 1 waited for rank 0.
    #[test]
    fn the_path_follows_the_message_back_to_its_sender() {
        let steps = [
            StepView { rank: 0, step: 0, deps: Default::default(), finish: 100, kind: StepKind::Work },
            StepView { rank: 0, step: 1, deps: [0].into_iter().collect(), finish: 110, kind: StepKind::Send { overhead: 10 } },
            StepView { rank: 1, step: 0, deps: Default::default(), finish: 200, kind: StepKind::Recv { send: 1, peer: 0, bytes: 64, overhead: 20, reduction: 0 } },
        ];
        let finish: Vec<u64> = steps.iter().map(|s| s.finish).collect();
        let view = |s: u32| steps[s as usize].clone();
        let p = analyse(&finish, &[0..2, 2..3], &view);
        assert_eq!(p.end_cycle, 200);
        // The same receive held back by its own dependency (work until 190)
        // although the message arrived at 120: the path is that work.
        let held = [
            StepView { rank: 0, step: 0, deps: Default::default(), finish: 10, kind: StepKind::Send { overhead: 10 } },
            StepView { rank: 1, step: 0, deps: Default::default(), finish: 190, kind: StepKind::Work },
            StepView { rank: 1, step: 1, deps: [1].into_iter().collect(), finish: 210, kind: StepKind::Recv { send: 0, peer: 0, bytes: 64, overhead: 20, reduction: 0 } },
        ];
        let finish2: Vec<u64> = held.iter().map(|s| s.finish).collect();
        let view2 = |s: u32| held[s as usize].clone();
        let q = analyse(&finish2, &[0..1, 1..3], &view2);
        let kinds: Vec<&str> = q.segments.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, ["work", "receive-overhead"]);
        assert_eq!(q.slowest_ranks[0].waiting_cycles, 0);
        let kinds: Vec<&str> = p.segments.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, ["work", "send-overhead", "transfer", "receive-overhead"]);
        assert_eq!(p.by_kind["transfer"], 70);
        assert_eq!(p.by_kind.values().sum::<u64>(), 200);
        assert_eq!(p.most_waited_for, Some(0));
        assert_eq!(p.slowest_ranks[0].rank, 1);
        assert_eq!(p.slowest_ranks[0].waiting_cycles, 180);
    }
}
