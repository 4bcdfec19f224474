//! Several ranks per node: they share the node's TNIs and injection, and
//! a message between two of them goes through memory, not the network.

use std::ops::ControlFlow;

use tofusim_comm::algorithms::{transfers, Transfer};
use tofusim_experiment::build::Setup;
use tofusim_experiment::collective::{run_on, setup, ScheduleOptions, Timed};
use tofusim_experiment::comm_model::Modes;
use tofusim_experiment::rank_placement::{RankPlacement, Ranks};

fn placed(system: &str, ppn: u64) -> Setup {
    Ranks::new(ppn, RankPlacement::Block).unwrap().place(setup(system).unwrap()).unwrap()
}

fn run(s: Setup, list: &[Transfer]) -> Timed {
    let ranks = s.node_of_rank.len() as u32;
    run_on(s, transfers(ranks, list), &ScheduleOptions::default(), &mut |_| ControlFlow::Continue(()), |_| ()).unwrap().0
}

/// Every rank sends `bytes` to the rank of the same slot on the next node
/// of the communicator (a shift by one node): each node injects `ppn`
/// messages through TNI 0.
fn shift(ppn: u32, nodes: u32, bytes: u64) -> Vec<Transfer> {
    let ranks = ppn * nodes;
    (0..ranks).map(|r| Transfer { src: r, dst: (r + ppn) % ranks, bytes, tni: 0 }).collect()
}

#[test]
fn two_ranks_per_node_share_its_injection_half_the_bandwidth_each() {
    let bytes = 512 << 10;
    let one = run(placed("k:2x3x2", 1), &shift(1, 12, bytes));
    let two = run(placed("k:2x3x2", 2), &shift(2, 12, bytes));
    assert!(one.run.complete && two.run.complete);
    let per_rank = |t: &Timed| bytes as f64 / t.time_seconds;
    let ratio = per_rank(&two) / per_rank(&one);
    assert!((0.45..0.56).contains(&ratio), "per-rank bandwidth with 2 ranks per node over 1: {ratio:.3}");
}

#[test]
fn a_message_between_two_ranks_of_a_node_stays_in_memory() {
    let s = placed("k:2x3x2", 2);
    assert_eq!(s.node_of_rank[0], s.node_of_rank[1]);
    let timing = s.built.model.host_timing(&Modes::default());
    let bytes = 64 << 10;
    let t = run(s, &[Transfer { src: 0, dst: 1, bytes, tni: 0 }]);
    assert!(t.run.complete);
    assert_eq!(t.run.packets_delivered, 0, "no packet crosses the network");
    let copy = (bytes as f64 / timing.copy_bytes_per_cycle).ceil() as u64;
    assert_eq!(t.cycles, timing.send_overhead_cycles + copy + timing.recv_overhead_cycles);
    // The flow model times it the same way.
    let s = placed("k:2x3x2", 2);
    let sched = transfers(s.node_of_rank.len() as u32, &[Transfer { src: 0, dst: 1, bytes, tni: 0 }]);
    let never = tofusim_flow::Interrupt::never();
    let flow_s = tofusim_experiment::flow_model::schedule_time(&s, &sched, &Modes::default(), 1, &never).unwrap();
    assert!((flow_s / t.time_seconds - 1.0).abs() < 0.01, "flow {flow_s} packet {}", t.time_seconds);
}
