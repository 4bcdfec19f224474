//! Every algorithm of every operation, through the data executor, for
//! every process count 1..=64 (with and without a torus shape), in both
//! execution orders.

use super::*;
use crate::exec::data::{execute, Order};
use crate::tree::Grid;

/// The most cubic 3-factor shape of `p` (x ≤ y ≤ z).
fn cubic(p: u32) -> Grid {
    let mut best = [1, 1, p];
    for x in 1..=p {
        for y in x..=p {
            if p.is_multiple_of(x * y) {
                let z = p / (x * y);
                if z >= y && z - x < best[2] - best[0] {
                    best = [x, y, z];
                }
            }
        }
    }
    Grid::new(best)
}

fn collective(op: Operation, p: u32) -> Collective {
    // A root away from 0 exercises the relative-rank arithmetic.
    op.collective((p / 3).min(p - 1))
}

fn run(op: Operation, algo: Algorithm, p: u32, count: u64, grid: Option<Grid>) {
    let mut params = Params::new(p, count);
    params.grid = grid;
    params.segment_elements = 3;
    params.gates = Some(barrier_interface::GateTiming { bch_ns: 480, bg_ns: 130 });
    if algo == Algorithm::BarrierInterface && count > 1 {
        // The gates reduce one element.
        assert_eq!(build(collective(op, p), algo, &params).unwrap_err().key, "algo");
        return;
    }
    let s = build(collective(op, p), algo, &params).unwrap();
    for order in [Order::Fifo, Order::Lifo] {
        if let Err(e) = execute(&s, order) {
            panic!(
                "{op}/{} p={p} count={count} grid={grid:?} {order:?}: {e}",
                algo.name()
            );
        }
    }
}

fn count_for(op: Operation) -> &'static [u64] {
    match op {
        Operation::Barrier => &[0],
        Operation::Allgather | Operation::Alltoall | Operation::Gather | Operation::Scatter | Operation::ReduceScatter => &[1, 5],
        Operation::Bcast | Operation::Reduce | Operation::Allreduce => &[1, 7, 64],
    }
}

#[test]
fn the_barrier_interface_needs_gates_and_offloads_every_message() {
    let mut params = Params::new(12, 1);
    assert_eq!(build(Collective::Barrier, Algorithm::BarrierInterface, &params).unwrap_err().key, "algo");
    params.gates = Some(barrier_interface::GateTiming { bch_ns: 480, bg_ns: 130 });
    let s = build(Collective::Allreduce, Algorithm::BarrierInterface, &params).unwrap();
    assert_eq!(s.algorithm, "barrier-interface");
    for p in &s.programs {
        // One BCH write first; a gate after every arriving signal.
        assert!(matches!(p.steps[0].action, crate::schedule::Action::Work { ns: 480 }));
        for (i, st) in p.steps.iter().enumerate() {
            match &st.action {
                crate::schedule::Action::Send { offload, tni, .. } => assert!(*offload && *tni == 0),
                crate::schedule::Action::Recv { offload, .. } => {
                    assert!(*offload);
                    assert!(matches!(p.steps[i + 1].action, crate::schedule::Action::Work { ns: 130 }));
                }
                _ => {}
            }
        }
    }
}

#[test]
fn every_algorithm_is_correct_for_1_to_64_processes() {
    for op in Operation::ALL {
        for &algo in Algorithm::of(op) {
            for p in 1..=64 {
                for &count in count_for(op) {
                    run(op, algo, p, count, None);
                    if algo.needs_torus() {
                        run(op, algo, p, count, Some(cubic(p)));
                    }
                }
            }
        }
    }
}

#[test]
fn torus_algorithms_on_tori_and_a_6d_tofu_job() {
    // 3x3x3 x 2x3x2 Tofu nodes seen as the virtual torus (X·A, Y·C, Z·B).
    let shapes = [[3, 3, 3], [4, 3, 5], [6, 6, 9], [2, 4, 3]];
    for l in shapes {
        let g = Grid::new(l);
        for op in Operation::ALL {
            for &algo in Algorithm::of(op) {
                for &count in count_for(op) {
                    run(op, algo, g.ranks(), count, Some(g));
                }
            }
        }
    }
}

#[test]
fn torus_algorithms_say_when_they_fall_back() {
    let p = Params::new(8, 16);
    let s = build(Collective::Allreduce, Algorithm::Trinaryx3, &p).unwrap();
    assert!(s.fallback.as_deref().unwrap().contains("ran ring"));
    let mut p = Params::new(27, 16);
    p.grid = Some(Grid::new([3, 3, 3]));
    let s = build(Collective::Allreduce, Algorithm::Trinaryx3, &p).unwrap();
    assert_eq!(s.fallback, None);
    // Three trees, the copies to children spread over the node's 4 TNIs.
    assert_eq!(s.tnis_used(), 4);
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let e = Algorithm::parse_named("allreduce", "nope").unwrap_err();
    assert_eq!(e.key, "algo");
    assert!(e.message.contains("rabenseifner"));
    let e = Algorithm::parse_named("scan", "ring").unwrap_err();
    assert_eq!(e.key, "op");
    let mut p = Params::new(8, 1);
    p.grid = Some(Grid::new([3, 3, 3]));
    assert_eq!(
        build(Collective::Allreduce, Algorithm::Ring, &p)
            .unwrap_err()
            .key,
        "shape"
    );
}

#[test]
fn message_counts_follow_the_textbook() {
    let count = |op: &str, algo, p| {
        build(Collective::parse(op, 0).unwrap(), algo, &Params::new(p, 64))
            .unwrap()
            .messages()
    };
    // Dissemination: p·ceil(log2 p); ring allreduce: 2p(p−1); pairwise: p(p−1).
    assert_eq!(count("barrier", Algorithm::Dissemination, 12), 12 * 4);
    assert_eq!(count("allreduce", Algorithm::Ring, 12), 2 * 12 * 11);
    assert_eq!(count("alltoall", Algorithm::Pairwise, 12), 12 * 11);
    // Binomial bcast: p − 1 messages.
    assert_eq!(count("bcast", Algorithm::Binomial, 13), 12);
    // Ring allreduce moves 2(p−1)/p of the vector per rank.
    let s = build(
        Collective::Allreduce,
        Algorithm::Ring,
        &Params::new(16, 1600),
    )
    .unwrap();
    assert_eq!(s.bytes_sent(), 16 * 2 * 15 * 100 * crate::ELEMENT_BYTES);
}

/// The bandwidth argument of Trinaryx3: every node sends the vector once up
/// (a third per tree) and at most once down (three children over the three
/// trees), and no TNI carries more than two thirds of it — so with one
/// link-rate TNI each the steady state is 1.5 × the single-TNI rate.
#[test]
fn trinaryx3_sends_each_byte_twice_and_spreads_over_four_tnis() {
    for lengths in [[4, 3, 4], [6, 9, 6], [3, 7, 5]] {
        let g = Grid::new(lengths);
        let count = 3 * 64 * 40;
        let mut p = Params::new(g.ranks(), count);
        p.grid = Some(g);
        p.segment_elements = 64;
        p.tnis = 4;
        let s = build(Collective::Allreduce, Algorithm::Trinaryx3, &p).unwrap();
        for (r, prog) in s.programs.iter().enumerate() {
            let mut per_tni = [0u64; 4];
            for step in &prog.steps {
                if let crate::schedule::Action::Send { spans, tni, .. } = &step.action {
                    per_tni[*tni as usize] += crate::schedule::total(spans);
                }
            }
            let sent: u64 = per_tni.iter().sum();
            assert!(sent <= 2 * count, "rank {r} on {lengths:?} sends {sent}");
            assert!(
                per_tni.iter().all(|&b| b <= 2 * count / 3),
                "rank {r} on {lengths:?}: TNI loads {per_tni:?}"
            );
        }
    }
}
