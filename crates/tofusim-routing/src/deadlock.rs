//! The static deadlock check: the channel dependency graph of a routing
//! function under a router's virtual-channel scheme, proved acyclic or
//! refuted with a cycle of (router, port, VC).
//!
//! A **channel** is one VC of one link: the buffer at the far end of port
//! `port` of router `router`. A packet holding channel `a` (it sits in that
//! buffer, at the router the link leads to) and allowed to request channel
//! `b` there makes the dependency `a → b`. The graph is built by following
//! every route the engine can take: from every source router, for every
//! destination, from every route state the routing can start a packet with
//! ([`Routing::initial_states`]), taking at each router every output and
//! VC the scheme allows — the same choices the engine's selection unit
//! makes (`tofusim-packet`'s `router::select`), so what is proved here is
//! the engine's network.
//!
//! The verdict:
//! - **Dally–Seitz** (no escape VCs: fat-trees, dragonfly hop classes,
//!   tori without escape): deadlock-free iff the graph of every channel is
//!   acyclic.
//! - **Escape VCs with deterministic routing**: every packet travels on the
//!   escape VCs, whose graph must be acyclic.
//! - **Duato** (adaptive routing over dynamic VCs with an escape VC always
//!   requestable): the escape VCs' graph must be acyclic. The engine moves
//!   whole packets (virtual cut-through): a packet that leaves an escape VC
//!   for a dynamic one frees it, so the *indirect* dependencies of
//!   Duato's wormhole condition (TPDS 6(10), 1995) do not arise, and his
//!   condition for cut-through networks applies (TPDS 7(8), 1996): a
//!   connected escape sub-function whose direct dependencies are acyclic.
//!   Here every router offers the escape route, so it is connected.
//! - **Bubble** flow control is the documented special case: a bubble VC
//!   ring has a dependency cycle, but the bubble rule (enter a ring only
//!   with room for two packets, continue with room for one) keeps a free
//!   packet buffer in every ring, so packets in a ring always move (Puente
//!   et al., ICPP 1999). Dependencies that stay in one ring in one direction
//!   are therefore set aside and the rest must be acyclic. This holds only
//!   when every packet is charged as full-sized (BG/L's fix); with real
//!   sizes the free space can fragment, and the check says "not proven"
//!   and shows the ring's cycle.
//!
//! Cost: per destination, every packet state (router, held channel, route
//! state) reachable from any source is visited once; [`work_estimate`]
//! bounds it before anything is built.

use std::collections::HashSet;
use std::ops::ControlFlow;

use crate::Routing;

/// Why [`check`] gave no verdict.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// A router without VCs: nothing to check.
    #[error("a router with no VCs carries nothing")]
    NoVcs,
    /// More packet states than the caller allows (`max_states`).
    #[error("more than {limit} packet states to follow")]
    TooManyStates { limit: u64 },
    /// The caller's progress function asked it to stop.
    #[error("stopped")]
    Stopped,
}

/// The escape VCs of a router's scheme (the engine's `Escape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EscapeVcs {
    /// One bubble VC per input, routed in dimension order. `full_charge`:
    /// every packet on it charged as full-sized (BG/L's fix).
    Bubble { full_charge: bool },
    /// Two escape VCs per input, routed in dimension (or direction) order:
    /// the low one before the ring's dateline, the high one after.
    DatelinePair,
    /// Dragonflies: the VC of a hop is its class (global links crossed
    /// after it), `class_vcs` VCs per class.
    HopClass { class_vcs: u8 },
    /// No escape VC: the escape route runs on the dynamic VCs.
    None,
}

/// A router's virtual-channel scheme, as the check needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcScheme {
    /// Dynamic (adaptive) VCs per input, numbered first.
    pub dynamic: u8,
    pub escape: EscapeVcs,
    /// Whether packets take the routing's adaptive candidates on the
    /// dynamic VCs (adaptive mode) or the escape route only.
    pub adaptive: bool,
    /// Fat-tree virtual output queues: the dynamic VC is the output the
    /// packet takes at the next switch, modulo `dynamic`.
    pub output_queues: bool,
}

impl VcScheme {
    /// Escape VCs per input, numbered after the dynamic ones.
    pub fn escape_vcs(&self) -> u32 {
        match self.escape {
            EscapeVcs::Bubble { .. } => 1,
            EscapeVcs::DatelinePair => 2,
            EscapeVcs::HopClass { class_vcs } => 3 * class_vcs.max(1) as u32,
            EscapeVcs::None => 0,
        }
    }

    pub fn vcs(&self) -> u32 {
        self.dynamic as u32 + self.escape_vcs()
    }

    /// Whether adaptive hops on dynamic VCs sit beside escape VCs (Duato's case).
    fn duato(&self) -> bool {
        self.adaptive && self.dynamic > 0 && matches!(self.escape, EscapeVcs::Bubble { .. } | EscapeVcs::DatelinePair)
    }

    /// The name of VC `v`, as the engine's run-time reports name it
    /// (`dynamic-k`, `escape`, `escape-low`/`escape-high`), hop classes
    /// with their class (`escape-class-c`, VC `j` of the class `.j`).
    pub fn vc_name(&self, v: u32) -> String {
        let d = self.dynamic as u32;
        if v < d {
            return format!("dynamic-{v}");
        }
        match self.escape {
            EscapeVcs::Bubble { .. } | EscapeVcs::None => "escape".into(),
            EscapeVcs::DatelinePair => if v == d { "escape-low".into() } else { "escape-high".into() },
            EscapeVcs::HopClass { class_vcs } => {
                let k = class_vcs.max(1) as u32;
                format!("escape-class-{}.{}", (v - d) / k, (v - d) % k)
            }
        }
    }
}

/// One VC of one link: the buffer at the far end of `port` of `router`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channel {
    pub router: u32,
    pub port: u8,
    pub vc: u32,
}

/// How a network was found free of deadlock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The dependency graph of every channel is acyclic.
    DallySeitz,
    /// Deterministic routing on the escape VCs, whose graph is acyclic.
    EscapeOnly,
    /// Adaptive routing beside escape VCs whose graph is acyclic (Duato,
    /// cut-through).
    Duato,
    /// Bubble rings, and the dependencies between rings acyclic.
    Bubble,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Self::DallySeitz => "Dally-Seitz: the channel dependency graph is acyclic",
            Self::EscapeOnly => "deterministic routing on the escape VCs, whose dependency graph is acyclic (Dally-Seitz)",
            Self::Duato => "Duato (cut-through): every packet can always request an escape VC, and the escape VCs' dependency graph is acyclic",
            Self::Bubble => "bubble flow control keeps each ring's escape VCs moving (Puente et al.; every packet charged as full-sized), and the dependencies between rings are acyclic (with adaptive routing beside them: Duato, cut-through)",
        }
    }
}

/// The check's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    DeadlockFree(Method),
    /// No proof: a dependency cycle. Under deterministic routing a set of
    /// packets, each holding one channel of it and waiting for the next, can
    /// wait forever; where packets have other choices a cycle makes a
    /// deadlock possible, not certain (Dally–Seitz is sufficient, and
    /// necessary only for deterministic routing).
    Cycle(Vec<Channel>),
    /// Cycles only within bubble rings, under a bubble rule that does not
    /// charge packets as full-sized: the bubble argument does not hold
    /// (the free space can fragment), so no proof; one ring's cycle.
    NotProven(Vec<Channel>),
}

/// What the check looked at, and its verdict.
#[derive(Clone, Debug)]
pub struct Report {
    pub verdict: Verdict,
    /// Channels some route uses, and their dependencies.
    pub channels_used: usize,
    pub dependencies: usize,
    /// Escape channels and their dependencies on each other; 0 without
    /// escape VCs.
    pub escape_channels_used: usize,
    pub escape_dependencies: usize,
    /// Packet states (router, held channel, route state) followed.
    pub states: u64,
}

/// An estimate of the packet states the check follows, before anything is
/// built: destinations × routers × (held channels + injection). Route
/// states multiply it (a dragonfly's Valiant groups, a fat-tree's random
/// paths, a hop class's source), so it is not a bound: [`check`] counts
/// the states it follows and stops at its limit.
pub fn work_estimate(routing: &Routing, scheme: &VcScheme, nodes_per_leaf: u32) -> u64 {
    let r = routing.routers() as u64;
    let per_router = routing.ports() as u64 * scheme.vcs() as u64 + 1;
    let dests = routing.terminal_routers() as u64 * destination_nodes(routing, nodes_per_leaf) as u64;
    dests.saturating_mul(r).saturating_mul(per_router)
}

/// Destinations per terminal router the routing tells apart: a fat-tree
/// routes by the node on the leaf (D-mod-K, virtual output queues).
fn destination_nodes(routing: &Routing, nodes_per_leaf: u32) -> u32 {
    match routing {
        Routing::FatTree(_) => nodes_per_leaf.max(1),
        _ => 1,
    }
}

const INJECTED: u32 = u32::MAX;

/// A packet at router `r`, holding channel `input` (or just injected),
/// with its route state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct State {
    r: u32,
    input: u32,
    hints: u8,
    crossed: bool,
    /// The source router (hop classes count global links from it; 0 elsewhere).
    src: u32,
}

struct Graph<'a> {
    routing: &'a Routing,
    scheme: VcScheme,
    ports: u32,
    vcs: u32,
    /// Every dependency found, as (from, to) channel ids.
    edges: Vec<(u32, u32)>,
    states: u64,
}

impl<'a> Graph<'a> {
    fn channel(&self, r: u32, o: u8, v: u32) -> u32 {
        (r * self.ports + o as u32) * self.vcs + v
    }

    fn decode(&self, c: u32) -> Channel {
        Channel { router: c / self.vcs / self.ports, port: (c / self.vcs % self.ports) as u8, vc: c % self.vcs }
    }

    fn is_escape(&self, c: u32) -> bool {
        c % self.vcs >= self.scheme.dynamic as u32
    }

    /// Index of an escape channel among the escape channels.
    fn escape_index(&self, c: u32) -> usize {
        let e = self.scheme.escape_vcs();
        ((c / self.vcs) * e + (c % self.vcs - self.scheme.dynamic as u32)) as usize
    }

    /// The channels a packet in state `s`, bound for router `dst` (node
    /// `dst_node`), may request, with the state each leads to: the rules of
    /// the engine's selection unit.
    fn moves(&self, s: State, dst: u32, dst_node: u32, out: &mut Vec<(u32, State)>) {
        out.clear();
        let rt = self.routing;
        let (mask, esc) = rt.candidates(s.r, dst, s.hints);
        let esc = esc.expect("a route exists away from the destination");
        let d = self.scheme.dynamic as u32;
        let mut push = |o: u8, v: u32, crossed: bool, g: &Self| {
            let (w, _) = rt.neighbor(s.r, o).expect("a route follows links");
            let next = State { r: w, input: g.channel(s.r, o, v), hints: rt.advance(w, s.hints), crossed, src: s.src };
            out.push((next.input, next));
        };
        let queue = |o: u8| {
            let (w, _) = rt.neighbor(s.r, o).expect("a route follows links");
            rt.output_at(w, dst_node, rt.advance(w, s.hints)).expect("output queues need a routing that names outputs") % d
        };
        if self.scheme.adaptive && d > 0 {
            let mut m = mask as u32;
            while m != 0 {
                let o = m.trailing_zeros() as u8;
                m &= m - 1;
                if self.scheme.output_queues {
                    push(o, queue(o), false, self);
                } else {
                    (0..d).for_each(|v| push(o, v, false, self));
                }
            }
        }
        match self.scheme.escape {
            EscapeVcs::Bubble { .. } => push(esc, d, false, self),
            EscapeVcs::DatelinePair => {
                let on_escape = s.input != INJECTED && self.is_escape(s.input);
                let same_ring = on_escape && {
                    let held = self.decode(s.input);
                    let (_, in_port) = rt.neighbor(held.router, held.port).expect("held channels are links");
                    rt.ring(esc) == rt.ring(rt.straight(in_port))
                };
                let crossed = (same_ring && s.crossed) || rt.is_dateline(s.r, esc);
                push(esc, d + crossed as u32, crossed, self);
            }
            EscapeVcs::HopClass { class_vcs } => {
                let k = class_vcs.max(1) as u32;
                let class = rt.vc_class(s.r, s.src, s.hints, esc) as u32;
                (0..k).for_each(|j| push(esc, d + class * k + j, false, self));
            }
            EscapeVcs::None if self.scheme.output_queues => push(esc, queue(esc), false, self),
            EscapeVcs::None => (0..d).for_each(|v| push(esc, v, false, self)),
        }
    }

    /// Follows every route to one destination from `starts`, recording
    /// the dependencies; `Err` once more than `limit` states are followed.
    fn follow(&mut self, starts: &[State], dst: u32, dst_node: u32, limit: u64) -> Result<(), CheckError> {
        let mut seen: HashSet<State> = starts.iter().copied().collect();
        let mut stack: Vec<State> = starts.to_vec();
        let mut moves = Vec::new();
        while let Some(s) = stack.pop() {
            self.states += 1;
            if self.states > limit {
                return Err(CheckError::TooManyStates { limit });
            }
            if s.r == dst {
                continue;
            }
            self.moves(s, dst, dst_node, &mut moves);
            for &(c, next) in &moves {
                if s.input != INJECTED {
                    self.edges.push((s.input, c));
                }
                if seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        Ok(())
    }
}

/// A cycle of the graph with adjacency `succ`, if any (iterative DFS).
fn find_cycle(n: usize, succ: &dyn Fn(usize, &mut Vec<usize>)) -> Option<Vec<usize>> {
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut buf = Vec::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, Vec<usize>, usize)> = Vec::new();
        succ(root, &mut buf);
        stack.push((root, buf.clone(), 0));
        state[root] = 1;
        while let Some(top) = stack.last_mut() {
            let (v, ref next, ref mut i) = *top;
            if *i < next.len() {
                let w = next[*i];
                *i += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        succ(w, &mut buf);
                        stack.push((w, buf.clone(), 0));
                    }
                    1 => {
                        let from = stack.iter().position(|f| f.0 == w).expect("on the stack");
                        return Some(stack[from..].iter().map(|f| f.0).collect());
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// Checks `routing` under `scheme`: follows every route, builds the
/// dependency graph and proves it free of deadlock or returns a cycle.
/// `nodes_per_leaf`: a fat-tree's nodes per leaf switch (1 elsewhere).
/// Stops with an error past `max_states` packet states followed.
/// `extra`: route states a workload sets itself (source router,
/// destination router, hint bits: a trace's software hints), followed
/// beside the routing's own. `progress(done, total)` is called per
/// destination router and may stop the check ([`CheckError::Stopped`]).
pub fn check(
    routing: &Routing,
    scheme: VcScheme,
    nodes_per_leaf: u32,
    max_states: u64,
    extra: &[(u32, u32, u8)],
    progress: &mut dyn FnMut(u64, u64) -> ControlFlow<()>,
) -> Result<Report, CheckError> {
    let ports = routing.ports() as u32;
    let vcs = scheme.vcs();
    if vcs == 0 {
        return Err(CheckError::NoVcs);
    }
    let routers = routing.routers() as u32;
    let escape_channels = (routers * ports * scheme.escape_vcs()) as usize;
    let duato = scheme.duato();
    let mut g = Graph {
        routing,
        scheme,
        ports,
        vcs,
        edges: Vec::new(),
        states: 0,
    };
    let terminals = routing.terminal_routers() as u32;
    let locals = destination_nodes(routing, nodes_per_leaf);
    let hop_class = matches!(scheme.escape, EscapeVcs::HopClass { .. });
    for dst in 0..terminals {
        if progress(dst as u64, terminals as u64).is_break() {
            return Err(CheckError::Stopped);
        }
        for local in 0..locals {
            let dst_node = dst * locals + local;
            let mut starts = Vec::new();
            let own = (0..terminals).filter(|&s| s != dst).flat_map(|src| routing.initial_states(src, dst, local).into_iter().map(move |h| (src, h)));
            let set = extra.iter().filter(|&&(s, d, _)| d == dst && s != dst && local == 0).map(|&(s, _, h)| (s, h));
            for (src, h) in own.chain(set) {
                let hints = routing.advance(src, h);
                starts.push(State { r: src, input: INJECTED, hints, crossed: false, src: if hop_class { src } else { 0 } });
            }
            g.follow(&starts, dst, dst_node, max_states)?;
            // Keep the edge list from growing with repeats.
            if g.edges.len() > 1 << 22 {
                g.edges.sort_unstable();
                g.edges.dedup();
            }
        }
    }
    g.edges.sort_unstable();
    g.edges.dedup();
    let n = (routers * ports * vcs) as usize;
    let mut used = vec![false; n];
    for &(a, b) in &g.edges {
        used[a as usize] = true;
        used[b as usize] = true;
    }
    let channels_used = used.iter().filter(|&&u| u).count();
    let mut report = Report {
        verdict: Verdict::DeadlockFree(Method::DallySeitz),
        channels_used,
        dependencies: g.edges.len(),
        escape_channels_used: 0,
        escape_dependencies: 0,
        states: g.states,
    };
    // Adjacency of every channel.
    let mut first = vec![0usize; n + 1];
    for &(a, _) in &g.edges {
        first[a as usize + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let targets: Vec<usize> = g.edges.iter().map(|&(_, b)| b as usize).collect();
    let all = |v: usize, out: &mut Vec<usize>| {
        out.clear();
        out.extend_from_slice(&targets[first[v]..first[v + 1]]);
    };
    let escape = scheme.escape_vcs() > 0 && !matches!(scheme.escape, EscapeVcs::HopClass { .. });
    if !escape {
        report.verdict = match find_cycle(n, &all) {
            Some(c) => Verdict::Cycle(c.into_iter().map(|x| g.decode(x as u32)).collect()),
            None => Verdict::DeadlockFree(Method::DallySeitz),
        };
        return Ok(report);
    }
    // The escape sub-network: channel ids of the escape channels by index.
    let e = scheme.escape_vcs();
    let esc_id = |i: usize| -> u32 { (i as u32 / e) * vcs + scheme.dynamic as u32 + i as u32 % e };
    let esc_succ: Vec<Vec<usize>> = (0..escape_channels)
        .map(|i| {
            let c = esc_id(i) as usize;
            targets[first[c]..first[c + 1]].iter().filter(|&&t| g.is_escape(t as u32)).map(|&t| g.escape_index(t as u32)).collect()
        })
        .collect();
    report.escape_channels_used = (0..escape_channels).filter(|&i| used[esc_id(i) as usize]).count();
    report.escape_dependencies = esc_succ.iter().map(Vec::len).sum();
    let as_channels = |c: Vec<usize>| c.into_iter().map(|i| g.decode(esc_id(i))).collect::<Vec<_>>();
    let bubble = match scheme.escape {
        EscapeVcs::Bubble { full_charge } => Some(full_charge),
        _ => None,
    };
    // Bubble rings: dependencies within one ring, one direction, set aside.
    let across = |i: usize, out: &mut Vec<usize>| {
        out.clear();
        let a = g.decode(esc_id(i));
        out.extend(esc_succ[i].iter().copied().filter(|&j| {
            let b = g.decode(esc_id(j));
            bubble.is_none() || !routing.same_ring(a.router, a.port, b.router, b.port)
        }));
    };
    if let Some(c) = find_cycle(escape_channels, &across) {
        report.verdict = Verdict::Cycle(as_channels(c));
        return Ok(report);
    }
    report.verdict = match bubble {
        Some(false) => {
            let every = |i: usize, out: &mut Vec<usize>| {
                out.clear();
                out.extend_from_slice(&esc_succ[i]);
            };
            match find_cycle(escape_channels, &every) {
                Some(c) => Verdict::NotProven(as_channels(c)),
                None => Verdict::DeadlockFree(if duato { Method::Duato } else { Method::EscapeOnly }),
            }
        }
        Some(true) => Verdict::DeadlockFree(Method::Bubble),
        None => Verdict::DeadlockFree(if duato { Method::Duato } else { Method::EscapeOnly }),
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DragonflyMode, DragonflyRouting, EscapeOrder, FatTreeMode, FatTreeRouting, TorusRouting};
    use tofusim_topology::dragonfly::{Arrangement, Dragonfly, GroupWiring};
    use tofusim_topology::{FatTree, Torus};

    fn torus(lengths: &[u32], wrap: bool, order: EscapeOrder) -> Routing {
        let t = Torus::with_lengths(lengths, &vec![wrap; lengths.len()]);
        Routing::Torus(TorusRouting::new(&t, &(0..lengths.len()).collect::<Vec<_>>(), order))
    }

    fn scheme(dynamic: u8, escape: EscapeVcs, adaptive: bool) -> VcScheme {
        VcScheme { dynamic, escape, adaptive, output_queues: false }
    }

    fn verdict(rt: &Routing, s: VcScheme) -> Verdict {
        check(rt, s, 1, u64::MAX, &[], &mut |_, _| ControlFlow::Continue(())).expect("checked").verdict
    }

    #[test]
    fn a_ring_without_escape_shows_its_cycle() {
        let rt = torus(&[4], true, EscapeOrder::Dimension);
        let Verdict::Cycle(c) = verdict(&rt, scheme(2, EscapeVcs::None, true)) else { panic!("no cycle") };
        // Each channel of the cycle leads to the router holding the next.
        for (a, b) in c.iter().zip(c.iter().cycle().skip(1)) {
            assert_eq!(rt.neighbor(a.router, a.port).unwrap().0, b.router, "{c:?}");
        }
        assert!(c.len() >= 4, "{c:?}");
    }

    #[test]
    fn dateline_pairs_and_meshes_are_free_of_deadlock() {
        for order in [EscapeOrder::Dimension, EscapeOrder::Direction] {
            let rt = torus(&[4, 3, 5], true, order);
            assert_eq!(verdict(&rt, scheme(0, EscapeVcs::DatelinePair, false)), Verdict::DeadlockFree(Method::EscapeOnly));
            assert_eq!(verdict(&rt, scheme(2, EscapeVcs::DatelinePair, true)), Verdict::DeadlockFree(Method::Duato));
        }
        let mesh = torus(&[4, 3], false, EscapeOrder::Dimension);
        assert_eq!(verdict(&mesh, scheme(1, EscapeVcs::None, false)), Verdict::DeadlockFree(Method::DallySeitz));
        // Adaptive on a mesh's only VC: turns in every order make a cycle.
        assert!(matches!(verdict(&mesh, scheme(1, EscapeVcs::None, true)), Verdict::Cycle(_)));
    }

    #[test]
    fn bubbles_are_proved_only_when_packets_are_charged_as_full_sized() {
        let rt = torus(&[4, 4, 4], true, EscapeOrder::Dimension);
        let fixed = EscapeVcs::Bubble { full_charge: true };
        assert_eq!(verdict(&rt, scheme(0, fixed, false)), Verdict::DeadlockFree(Method::Bubble));
        assert_eq!(verdict(&rt, scheme(2, fixed, true)), Verdict::DeadlockFree(Method::Bubble));
        let Verdict::NotProven(c) = verdict(&rt, scheme(0, EscapeVcs::Bubble { full_charge: false }, false)) else { panic!() };
        // The cycle left is one ring's, in one direction.
        assert!(c.iter().all(|x| rt.same_ring(c[0].router, c[0].port, x.router, x.port)), "{c:?}");
    }

    #[test]
    fn fat_trees_are_free_of_deadlock_in_every_mode() {
        let f = FatTree { down: vec![4, 4, 2], up: vec![1, 2, 2], rails: 1 };
        for mode in [FatTreeMode::DModK, FatTreeMode::Random, FatTreeMode::Adaptive] {
            let rt = Routing::FatTree(FatTreeRouting::new(&f, mode).unwrap());
            let outputs = FatTreeRouting::outputs_of(&f) as u8;
            for s in [
                scheme(2, EscapeVcs::None, mode == FatTreeMode::Adaptive),
                VcScheme { dynamic: outputs, escape: EscapeVcs::None, adaptive: mode == FatTreeMode::Adaptive, output_queues: true },
            ] {
                let r = check(&rt, s, 4, u64::MAX, &[], &mut |_, _| ControlFlow::Continue(())).unwrap();
                assert_eq!(r.verdict, Verdict::DeadlockFree(Method::DallySeitz), "{mode:?} {s:?}");
                assert!(r.dependencies > 0);
            }
        }
    }

    #[test]
    fn dragonfly_hop_classes_are_free_of_deadlock_and_one_class_is_not() {
        let d = Dragonfly {
            groups: 5,
            nodes_per_router: 1,
            wiring: GroupWiring::AllToAll { routers: 4 },
            global_ports_per_router: 1,
            links_per_group_pair: 1,
            arrangement: Arrangement::Consecutive,
        };
        for mode in [DragonflyMode::Minimal, DragonflyMode::Valiant, DragonflyMode::UgalLocal] {
            let rt = Routing::Dragonfly(DragonflyRouting::new(&d, mode));
            assert_eq!(verdict(&rt, scheme(0, EscapeVcs::HopClass { class_vcs: 1 }, false)), Verdict::DeadlockFree(Method::DallySeitz), "{mode:?}");
        }
        // Valiant routes on one VC for every hop: local-global-local-global
        // chains close cycles between groups.
        let rt = Routing::Dragonfly(DragonflyRouting::new(&d, DragonflyMode::Valiant));
        assert!(matches!(verdict(&rt, scheme(1, EscapeVcs::None, false)), Verdict::Cycle(_)));
    }

    #[test]
    fn the_estimate_bounds_the_states_followed() {
        let rt = torus(&[4, 4, 4], true, EscapeOrder::Dimension);
        let s = scheme(2, EscapeVcs::Bubble { full_charge: true }, true);
        let r = check(&rt, s, 1, u64::MAX, &[], &mut |_, _| ControlFlow::Continue(())).unwrap();
        // On a torus (no route states beyond the ties) the estimate holds.
        let states = work_estimate(&rt, &s, 1);
        assert!(r.states <= states, "{} > {states}", r.states);
        let over = check(&rt, s, 1, 1000, &[], &mut |_, _| ControlFlow::Continue(()));
        assert_eq!(over.err(), Some(CheckError::TooManyStates { limit: 1000 }));
        let stopped = check(&rt, s, 1, u64::MAX, &[], &mut |done, _| if done > 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) });
        assert_eq!(stopped.err(), Some(CheckError::Stopped));
    }
}
