//! The Tofu barrier offload ([S:003], [S:001]): barrier gates (BGs) and
//! barrier channels (BCHs) inside the TNIs.
//!
//! A **BG** waits for two incoming signals, then sends two. A **BCH** is
//! the software interface: writing it starts a signal into its TNI's BG
//! graph, and the graph's last BG signals it back. Inside a node, the BCHs
//! of one TNI are combined by a reduce-broadcast tree of BGs, and the TNIs
//! by recursive doubling (dissemination rounds, which need no power of
//! two); across nodes, recursive doubling again.
//!
//! Timing: a BCH costs `bch_ns` (0.48 µs) and a BG `bg_ns` (0.13 µs) of its
//! TNI's barrier logic, and one TNI processes one BCH or BG at a time —
//! the serialisation that makes the simple estimate (BCH + stages × BG)
//! too low once several BCHs share a TNI. The BG graph is a
//! **reconstruction** ([RECON]): the sources give its rules and the stage
//! counts, not the wiring.

use serde::Serialize;

/// Barrier resources and logic delays of a generation.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BarrierHardware {
    pub tnis_with_barrier: u32,
    pub bch_per_tni: u32,
    pub bg_per_tni: u32,
    pub bch_ns: f64,
    pub bg_ns: f64,
}

impl BarrierHardware {
    /// TofuD: 16 BCHs and 48 BGs on each of 6 TNIs [S:000].
    pub fn tofud() -> Self {
        Self {
            tnis_with_barrier: 6,
            bch_per_tni: 16,
            bg_per_tni: 48,
            bch_ns: 480.0,
            bg_ns: 130.0,
        }
    }

    /// Tofu1 / Tofu2: 8 BCHs and 64 BGs, on TNI 0 only [S:000].
    pub fn tofu1() -> Self {
        Self {
            tnis_with_barrier: 1,
            bch_per_tni: 8,
            bg_per_tni: 64,
            bch_ns: 480.0,
            bg_ns: 130.0,
        }
    }
}

/// Where a BG's input comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// Software writing BCH `b`.
    Bch(usize),
    /// Another BG's output.
    Bg(usize),
}

#[derive(Clone, Debug)]
struct Gate {
    tni: usize,
    inputs: Vec<Source>,
}

/// The BG graph synchronising `k` BCHs of one node, and its timing.
#[derive(Clone, Debug, Serialize)]
pub struct IntraNodeBarrier {
    pub bchs: u32,
    pub tnis_used: u32,
    pub max_bch_per_tni: u32,
    pub max_bg_per_tni: u32,
    /// BGs on the longest signal path.
    pub stages: u32,
    /// BCH + stages × BG, µs.
    pub simple_estimate_us: f64,
    /// Our reconstruction ([RECON]) of the source's corrected estimate:
    /// simple + (max BCH/TNI − 1)·BCH + (max BG/TNI − stages)·BG, µs.
    pub modified_estimate_us: f64,
    /// Event-by-event: each TNI's logic handles one BCH or BG at a time, µs.
    pub serialised_us: f64,
}

/// A refusal of the number of BCHs asked for.
fn bchs(message: String) -> crate::BuildError {
    crate::BuildError { key: "bchs", message }
}

/// Builds the BG graph for `k` BCHs allocated round-robin over the TNIs
/// and times it. Returns an error if the TNIs lack BCHs or BGs.
pub fn intra_node(k: u32, hw: &BarrierHardware) -> Result<IntraNodeBarrier, crate::BuildError> {
    if k == 0 {
        return Err(bchs("expected at least one BCH".into()));
    }
    let u = k.min(hw.tnis_with_barrier) as usize;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); u];
    for b in 0..k as usize {
        members[b % u].push(b);
    }
    if members[0].len() as u32 > hw.bch_per_tni {
        return Err(bchs(format!(
            "{k} BCHs need {} per TNI; a TNI has {}",
            members[0].len(),
            hw.bch_per_tni
        )));
    }
    let mut gates: Vec<Gate> = Vec::new();
    let add = |gates: &mut Vec<Gate>, tni: usize, inputs: Vec<Source>| {
        gates.push(Gate { tni, inputs });
        Source::Bg(gates.len() - 1)
    };
    // 1. Reduce the BCH signals of each TNI pairwise (binary tree of BGs).
    let mut top: Vec<Source> = Vec::with_capacity(u);
    for (t, bchs) in members.iter().enumerate() {
        let mut level: Vec<Source> = bchs.iter().map(|&b| Source::Bch(b)).collect();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for pair in level.chunks(2) {
                next.push(if pair.len() == 2 {
                    add(&mut gates, t, pair.to_vec())
                } else {
                    pair[0]
                });
            }
            level = next;
        }
        top.push(level[0]);
    }
    // 2. Dissemination rounds between the TNIs: round i's BG at TNI t fires
    //    on its own previous signal and TNI t − 2^i's.
    let mut dist = 1;
    while dist < u {
        let prev = top.clone();
        for t in 0..u {
            top[t] = add(&mut gates, t, vec![prev[t], prev[(t + u - dist) % u]]);
        }
        dist *= 2;
    }
    // A lone BCH still passes a start and an end BG.
    while gates.iter().filter(|g| g.tni == 0).count() < 2 {
        top[0] = add(&mut gates, 0, vec![top[0]]);
    }
    // 3. Broadcast back: the last BG's first output ends the first BCH; its
    //    second feeds a fan-out reaching the other m − 1, built breadth
    //    first and minimal (each BG turns one output into two: r − 1 BGs
    //    for r ends).
    let mut ends: Vec<(usize, Source)> = Vec::new(); // (bch, signal that ends it)
    for (t, bchs) in members.iter().enumerate() {
        ends.push((bchs[0], top[t]));
        let rest = &bchs[1..];
        let mut outputs = std::collections::VecDeque::from([top[t]]);
        while outputs.len() < rest.len() {
            let from = outputs.pop_front().expect("at least one output");
            let g = add(&mut gates, t, vec![from]);
            outputs.extend([g, g]);
        }
        ends.extend(rest.iter().copied().zip(outputs));
    }
    // Each BCH is bound to a start/end BG of its TNI ([S:000]): its firings
    // are the BCH's own 0.48 µs, so it adds no stage and no timing here, but
    // it occupies a BG. (A lone BCH's two gates above are its start/end BG
    // and a relay.) With it, a TNI at TofuD's 16-BCH limit needs exactly
    // its 48 BGs.
    let bound = |t: usize| if k == 1 { 0 } else { members[t].len() as u32 };
    let per_tni = |t: usize| gates.iter().filter(|g| g.tni == t).count() as u32 + bound(t);
    let max_bg = (0..u).map(per_tni).max().unwrap_or(0);
    if max_bg > hw.bg_per_tni {
        return Err(bchs(format!(
            "{k} BCHs need {max_bg} BGs on a TNI; it has {}",
            hw.bg_per_tni
        )));
    }
    // Stages: BGs on the longest path (gates are in topological order).
    let mut depth = vec![0u32; gates.len()];
    for (i, g) in gates.iter().enumerate() {
        depth[i] = 1 + g
            .inputs
            .iter()
            .map(|s| match s {
                Source::Bg(j) => depth[*j],
                Source::Bch(_) => 0,
            })
            .max()
            .unwrap_or(0);
    }
    let stages = ends
        .iter()
        .map(|(_, s)| match s {
            Source::Bg(j) => depth[*j],
            Source::Bch(_) => 0,
        })
        .max()
        .unwrap_or(0);
    let max_bch = members.iter().map(|m| m.len() as u32).max().unwrap_or(0);
    let simple = (hw.bch_ns + stages as f64 * hw.bg_ns) / 1000.0;
    Ok(IntraNodeBarrier {
        bchs: k,
        tnis_used: u as u32,
        max_bch_per_tni: max_bch,
        max_bg_per_tni: max_bg,
        stages,
        simple_estimate_us: simple,
        modified_estimate_us: simple
            + ((max_bch - 1) as f64 * hw.bch_ns + (max_bg as f64 - stages as f64) * hw.bg_ns)
                / 1000.0,
        serialised_us: serialised(&members, &gates, &ends, hw) / 1000.0,
    })
}

/// Event-by-event timing: each TNI's barrier logic handles one BCH or BG
/// at a time, in the order they become ready.
fn serialised(
    members: &[Vec<usize>],
    gates: &[Gate],
    ends: &[(usize, Source)],
    hw: &BarrierHardware,
) -> f64 {
    let tnis = members.len();
    let mut free = vec![0.0f64; tnis];
    let mut bch_out = vec![0.0f64; members.iter().map(Vec::len).sum()];
    // Software writes every BCH at 0; each TNI starts its BCHs one by one.
    for (t, bchs) in members.iter().enumerate() {
        for &b in bchs {
            free[t] += hw.bch_ns;
            bch_out[b] = free[t];
        }
    }
    // Gates in topological order; each TNI serves its ready gates earliest
    // first (a gate's index order is a valid tie-break).
    let mut out = vec![f64::NAN; gates.len()];
    let mut order: Vec<usize> = (0..gates.len()).collect();
    let ready = |out: &[f64], g: &Gate| -> Option<f64> {
        g.inputs.iter().try_fold(0.0f64, |m, s| {
            let v = match s {
                Source::Bch(b) => bch_out[*b],
                Source::Bg(j) => out[*j],
            };
            if v.is_nan() {
                None
            } else {
                Some(m.max(v))
            }
        })
    };
    while !order.is_empty() {
        // The gate that can start earliest on its TNI.
        let (pos, start) = order
            .iter()
            .enumerate()
            .filter_map(|(p, &i)| ready(&out, &gates[i]).map(|r| (p, r.max(free[gates[i].tni]))))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("the gate graph is acyclic");
        let i = order.remove(pos);
        out[i] = start + hw.bg_ns;
        free[gates[i].tni] = out[i];
    }
    ends.iter()
        .map(|(_, s)| match s {
            Source::Bg(j) => out[*j],
            Source::Bch(b) => bch_out[*b],
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tofud_stage_table() {
        // [S:000]: 1, 4, 8, 16, 48 BCHs → 2, 2, 4, 6, 9 stages, on
        // 1, 4, 6, 6, 6 TNIs with at most 1, 1, 2, 3, 8 BCHs per TNI.
        let hw = BarrierHardware::tofud();
        let want = [
            (1, 1, 1, 2),
            (4, 4, 1, 2),
            (8, 6, 2, 4),
            (16, 6, 3, 6),
            (48, 6, 8, 9),
        ];
        // Max BGs per TNI, published 2, 2, 5, 9, 24: ours 2, 3, 6, 9, 24
        // (one start/end BG per BCH; docs/validation.md, C2).
        let bgs = [2, 3, 6, 9, 24];
        for ((k, tnis, bch, stages), bg) in want.into_iter().zip(bgs) {
            let b = intra_node(k, &hw).unwrap();
            assert_eq!(
                (b.tnis_used, b.max_bch_per_tni, b.stages, b.max_bg_per_tni),
                (tnis, bch, stages, bg),
                "{k} BCHs"
            );
            assert!(b.serialised_us >= b.simple_estimate_us - 1e-9);
        }
        assert!((intra_node(1, &hw).unwrap().simple_estimate_us - 0.74).abs() < 1e-9);
        let many = intra_node(48, &hw).unwrap();
        assert!(many.serialised_us > 2.0 * many.simple_estimate_us);
    }

    #[test]
    fn resources_are_enforced() {
        assert!(intra_node(9, &BarrierHardware::tofu1()).is_err());
        assert!(intra_node(8, &BarrierHardware::tofu1()).is_ok());
        assert!(intra_node(97, &BarrierHardware::tofud()).is_err());
        // 16 BCHs on every TNI: 16 start/end + 15 reduce + 3 dissemination
        // + 14 fan-out = TofuD's 48 BGs per TNI.
        assert_eq!(
            intra_node(96, &BarrierHardware::tofud())
                .unwrap()
                .max_bg_per_tni,
            48
        );
    }
}

/// A barrier across `p` nodes through the barrier gates: one BCH per node
/// (on TNI 0), then ⌈log2 p⌉ dissemination rounds, each a BG that fires on
/// its own previous signal and the signal from node i − 2^r, which crosses
/// the network in `latency_ns(from, to)`. Returns the time until the last
/// node's BCH is signalled, µs.
pub fn across_nodes(p: u32, hw: &BarrierHardware, latency_ns: impl Fn(u32, u32) -> f64) -> f64 {
    let n = p as usize;
    let rounds: Vec<Vec<u32>> = (0..)
        .map(|r| 1usize << r)
        .take_while(|&d| d < n)
        .map(|d| (0..n).map(|i| ((i + n - d) % n) as u32).collect())
        .collect();
    run_rounds(n, &rounds, hw, latency_ns)
}

/// How the gates of a barrier across the nodes of a torus-shaped
/// communicator are wired: one BG per round per node, each firing on its
/// own previous signal and one partner's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateGraph {
    /// Dissemination over the rank order: partner i − 2^r, ⌈log2 p⌉ rounds
    /// (partners 2^r ranks apart can be many hops apart).
    RankOrder,
    /// Dissemination along the torus axes, one axis after the other:
    /// partner 2^r steps back along the axis, ⌈log2 L⌉ rounds per axis, so
    /// every signal stays on one axis line of the torus and crosses
    /// min(2^r, L − 2^r) hops.
    Axes,
    /// Gates chained along the torus axes, every round between neighbours:
    /// partner one step back along the axis, L − 1 rounds per axis.
    AxisNeighbours,
    /// Along the network's own axes (a Tofu node's six: X, Y, Z, A, B, C),
    /// not the communicator's: on a ring, dissemination (partner 2^r back);
    /// on a line of power-of-two length, recursive doubling (partner
    /// coordinate XOR 2^r, so no signal crosses the line back); on another
    /// line, dissemination over its positions. [`axis_rounds`] on the
    /// physical torus; on a communicator grid (every axis a ring) the same
    /// as `Axes`.
    PhysicalAxes,
}

impl GateGraph {
    pub const ALL: [GateGraph; 4] = [GateGraph::RankOrder, GateGraph::Axes, GateGraph::AxisNeighbours, GateGraph::PhysicalAxes];

    pub fn name(self) -> &'static str {
        match self {
            GateGraph::RankOrder => "rank-order",
            GateGraph::Axes => "axes",
            GateGraph::AxisNeighbours => "axis-neighbours",
            GateGraph::PhysicalAxes => "physical-axes",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.name() == s)
    }
}

/// The partner of each node in each round of gates wired along the axes of
/// a torus or mesh of `lengths` (`rings[a]`: axis `a` wraps), nodes
/// numbered axis 0 fastest: see [`GateGraph::PhysicalAxes`].
pub fn axis_rounds(lengths: &[u32], rings: &[bool]) -> Vec<Vec<u32>> {
    let p: u32 = lengths.iter().product();
    let mut rounds = Vec::new();
    let mut stride = 1u32;
    for (a, &l) in lengths.iter().enumerate() {
        let doubling = !rings[a] && l.is_power_of_two();
        let mut d = 1u32;
        while d < l {
            rounds.push(
                (0..p)
                    .map(|i| {
                        let c = (i / stride) % l;
                        let to = if doubling { c ^ d } else { (c + l - d) % l };
                        i - c * stride + to * stride
                    })
                    .collect(),
            );
            d <<= 1;
        }
        stride *= l;
    }
    rounds
}

/// A barrier whose gates fire in `rounds` (each node's partner per round)
/// across `n` nodes, µs ([`run_rounds`]).
pub fn across_rounds(n: usize, rounds: &[Vec<u32>], hw: &BarrierHardware, latency_ns: impl Fn(u32, u32) -> f64) -> f64 {
    run_rounds(n, rounds, hw, latency_ns)
}

/// The partner of each rank in each round of `graph` on `grid`.
pub fn gate_rounds(grid: &crate::tree::Grid, graph: GateGraph) -> Vec<Vec<u32>> {
    let p = grid.ranks();
    match graph {
        GateGraph::RankOrder => (0..)
            .map(|r| 1u32 << r)
            .take_while(|&d| d < p)
            .map(|d| (0..p).map(|i| (i + p - d) % p).collect())
            .collect(),
        GateGraph::PhysicalAxes => axis_rounds(&grid.lengths, &[true; 3]),
        GateGraph::Axes | GateGraph::AxisNeighbours => {
            let mut rounds = Vec::new();
            for axis in 0..3 {
                let l = grid.lengths[axis];
                let steps: Vec<u32> = if graph == GateGraph::Axes {
                    (0..).map(|r| 1u32 << r).take_while(|&d| d < l).collect()
                } else {
                    vec![1; l as usize - 1]
                };
                for d in steps {
                    rounds.push((0..p).map(|i| grid.shift(i, axis, -(d as i64))).collect());
                }
            }
            rounds
        }
    }
}

/// A barrier across the ranks of `grid` through the gates wired as
/// `graph`; as [`across_nodes`], µs. Every rank hears from every rank: a
/// round along an axis widens what a rank has heard along that axis
/// (1, 2, 4, … consecutive positions, or one more per neighbour round),
/// and the axes compose.
pub fn across_torus(
    grid: &crate::tree::Grid,
    graph: GateGraph,
    hw: &BarrierHardware,
    latency_ns: impl Fn(u32, u32) -> f64,
) -> f64 {
    run_rounds(
        grid.ranks() as usize,
        &gate_rounds(grid, graph),
        hw,
        latency_ns,
    )
}

/// Each rank's BCH starts at `bch_ns`; in each round its BG fires `bg_ns`
/// after both its own previous signal and its partner's (plus the
/// partner's signal's network latency). A lone node passes a start and an
/// end BG.
fn run_rounds(
    n: usize,
    rounds: &[Vec<u32>],
    hw: &BarrierHardware,
    latency_ns: impl Fn(u32, u32) -> f64,
) -> f64 {
    let mut t = vec![hw.bch_ns; n];
    for partners in rounds {
        let prev = t.clone();
        for i in 0..n {
            let from = partners[i] as usize;
            t[i] = prev[i].max(prev[from] + latency_ns(from as u32, i as u32)) + hw.bg_ns;
        }
    }
    if rounds.is_empty() {
        t[0] += 2.0 * hw.bg_ns;
    }
    t.into_iter().fold(0.0, f64::max) / 1000.0
}

#[cfg(test)]
mod across {
    use super::*;

    use crate::tree::Grid;

    /// Every rank has heard from every rank after the rounds (the causal
    /// closure of the gate graph is complete).
    fn complete(grid: &Grid, graph: GateGraph) -> bool {
        let p = grid.ranks() as usize;
        let mut heard: Vec<Vec<bool>> = (0..p).map(|i| (0..p).map(|j| i == j).collect()).collect();
        for partners in gate_rounds(grid, graph) {
            let prev = heard.clone();
            for i in 0..p {
                let from = partners[i] as usize;
                for j in 0..p {
                    heard[i][j] = prev[i][j] || prev[from][j];
                }
            }
        }
        heard.iter().all(|h| h.iter().all(|&b| b))
    }

    #[test]
    fn every_gate_graph_is_a_barrier() {
        for l in [
            [2, 3, 2],
            [4, 3, 4],
            [5, 1, 3],
            [3, 7, 5],
            [8, 6, 4],
            [1, 1, 1],
        ] {
            let g = Grid::new(l);
            for graph in [
                GateGraph::RankOrder,
                GateGraph::Axes,
                GateGraph::AxisNeighbours,
                GateGraph::PhysicalAxes,
            ] {
                assert!(complete(&g, graph), "{graph:?} on {l:?}");
            }
        }
    }

    #[test]
    fn axis_rounds_stay_on_axis_lines() {
        // Along the axes a signal crosses min(2^r, L - 2^r) hops; over the
        // rank order partners 2^r ranks apart leave the line (x fastest).
        let g = Grid::new([16, 24, 24]);
        let max_hops = |graph| -> Vec<u32> {
            gate_rounds(&g, graph)
                .iter()
                .map(|p| {
                    (0..g.ranks())
                        .map(|i| g.hops(p[i as usize], i))
                        .max()
                        .unwrap()
                })
                .collect()
        };
        assert_eq!(
            max_hops(GateGraph::Axes),
            vec![1, 2, 4, 8, 1, 2, 4, 8, 8, 1, 2, 4, 8, 8]
        );
        assert!(max_hops(GateGraph::AxisNeighbours).iter().all(|&h| h == 1));
        let rank_order: u32 = max_hops(GateGraph::RankOrder).iter().sum();
        let axes: u32 = max_hops(GateGraph::Axes).iter().sum();
        assert!(rank_order > axes, "{rank_order} vs {axes}");
    }

    #[test]
    fn physical_axis_rounds_are_a_barrier_and_keep_lines_short() {
        // A K-like node: X ring, Y line of 4, Z ring of 3, A line 2, B ring
        // 3, C line 2; and a line of 3 (not a power of two).
        for (lengths, rings) in [
            (vec![4u32, 4, 3, 2, 3, 2], vec![true, false, true, false, true, false]),
            (vec![3, 2], vec![false, false]),
            (vec![1, 5], vec![true, true]),
        ] {
            let rounds = axis_rounds(&lengths, &rings);
            let p: u32 = lengths.iter().product();
            let mut heard: Vec<Vec<bool>> = (0..p).map(|i| (0..p).map(|j| i == j).collect()).collect();
            for partners in &rounds {
                let prev = heard.clone();
                for i in 0..p as usize {
                    let from = partners[i] as usize;
                    for j in 0..p as usize {
                        heard[i][j] = prev[i][j] || prev[from][j];
                    }
                }
            }
            assert!(heard.iter().all(|h| h.iter().all(|&b| b)), "{lengths:?}");
        }
        // On the power-of-two Y line (stride 4) the partner of y = 1 in
        // round d = 2 is y = 3: 2 positions, never across the line back.
        let rounds = axis_rounds(&[4, 4], &[true, false]);
        assert_eq!(rounds.len(), 4);
        assert_eq!(rounds[3][4], 12);
    }

    #[test]
    fn grows_with_rounds_only() {
        let hw = BarrierHardware::tofu1();
        let a = across_nodes(16, &hw, |_, _| 100.0);
        let b = across_nodes(1024, &hw, |_, _| 100.0);
        // 4 vs 10 rounds of (link 0.1 + BG 0.13 us) on top of the BCH.
        assert!((a - (0.48 + 4.0 * 0.23)).abs() < 1e-9 && (b - (0.48 + 10.0 * 0.23)).abs() < 1e-9);
    }
}
