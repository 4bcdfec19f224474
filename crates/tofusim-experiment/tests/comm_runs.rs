//! The communication layer on the packet engine: puts, collectives.

use tofusim_comm::algorithms::{atomic_add, get, pingpong, transfers, Transfer};
use tofusim_comm::Schedule;
use tofusim_experiment::collective::{run_on, run_schedule, setup, ScheduleOptions, Timed};
use tofusim_experiment::comm_model::Modes;

/// Times the schedule `make(ranks)` over every node of `system`.
fn time(system: &str, make: impl FnOnce(u32) -> Schedule) -> Timed {
    run_schedule(
        system,
        &ScheduleOptions::default(),
        |ranks, _, _| Ok(make(ranks)),
        &mut |_| std::ops::ControlFlow::Continue(()),
    )
    .unwrap()
}

/// `bytes` from rank `src` to rank `dst` through TNI 0.
fn put_of(src: u32, dst: u32, bytes: u64) -> Transfer {
    Transfer {
        src,
        dst,
        bytes,
        tni: 0,
    }
}

fn put(system: &str, bytes: u64) -> Timed {
    time(system, |ranks| transfers(ranks, &[put_of(0, 1, bytes)]))
}

#[test]
fn a_large_put_runs_near_the_link_rate() {
    let t = put("k:3x3x3", 4 << 20);
    let bw = (4u64 << 20) as f64 / t.time_seconds;
    assert!(!t.run.deadlock && t.run.invariant_error.is_none());
    assert!(bw < 5.0e9 && bw > 4.0e9, "{bw}");
}

#[test]
fn pingpong_latency_is_a_few_hundred_ns() {
    let t = time("k:3x3x3", |ranks| pingpong(ranks, 0, 1, 8, 10));
    let one_way = t.time_seconds / 20.0;
    assert!(one_way > 0.2e-6 && one_way < 3e-6);
}

#[test]
fn messages_from_one_tni_arrive_in_program_order() {
    let setup = setup("k:1x1x1").unwrap();
    let s = transfers(setup.node_of_rank.len() as u32, &[put_of(0, 1, 65536); 4]);
    let (_, steps) = run_on(setup, s, &ScheduleOptions::default(), &mut |_| std::ops::ControlFlow::Continue(()), |run| run.step_finish_cycles()).unwrap();
    let f = &steps[1];
    assert!(f.windows(2).all(|w| w[0] < w[1]), "{f:?}");
}

#[test]
fn a_node_forwards_while_it_receives() {
    // Rank 0 -> 1 and 1 -> 2 at once take about as long as one of them.
    let one = put("k:1x1x1", 262144).cycles;
    let t = time("k:1x1x1", |ranks| {
        transfers(ranks, &[put_of(0, 1, 262144), put_of(1, 2, 262144)])
    });
    assert!(
        (t.cycles as f64) < 1.1 * one as f64,
        "{} vs {one}",
        t.cycles
    );
}

#[test]
fn get_and_atomic_skip_the_target_host() {
    let per_round = |s: Schedule| time("k:1x1x1", |_| s).time_seconds / 10.0;
    let put_round_trip = per_round(pingpong(12, 0, 1, 8, 10));
    let g = per_round(get(12, 0, 1, 8, 10));
    let a = per_round(atomic_add(12, 0, 1, 10));
    // A round trip of two host-driven puts costs the target's host twice;
    // a Get or Atomic costs only the initiator's.
    assert!(
        g < put_round_trip && a < put_round_trip,
        "{g} {a} {put_round_trip}"
    );
    assert!(g > 0.5 * put_round_trip);
}

#[test]
fn a_schedule_posted_at_once_makes_its_packets_as_they_leave() {
    // Every rank of BG/L 4x4x4 sends 16 KiB to every other at once: about
    // 280,000 packets posted at cycle 0. Packets are made as the send
    // queues' heads reach the FIFOs, so a run allowed 5,000 live packets
    // completes, and exactly as an unbounded one.
    use std::sync::Arc;
    use tofusim_experiment::collective::schedule_engine;
    use tofusim_packet::RunParams;
    let run = |max_live: Option<u64>| {
        let setup = setup("bgl:4x4x4").unwrap();
        let ranks = setup.node_of_rank.len() as u32;
        let list: Vec<Transfer> = (0..ranks)
            .flat_map(|a| (0..ranks).filter(move |&b| b != a).map(move |b| put_of(a, b, 16 << 10)))
            .collect();
        let s = Arc::new(transfers(ranks, &list));
        let params = RunParams { max_live_packets: max_live, ..RunParams::default() };
        let engine = schedule_engine(setup, s, &Modes::default(), params).unwrap();
        engine.run(&mut |_| std::ops::ControlFlow::Continue(()))
    };
    let bounded = run(Some(5_000));
    assert!(bounded.complete && bounded.budget_exceeded.is_none(), "{:?}", bounded.budget_exceeded);
    assert!(bounded.packets_delivered > 250_000, "{}", bounded.packets_delivered);
    let free = run(None);
    assert_eq!((bounded.completion_cycles, bounded.packets_delivered), (free.completion_cycles, free.packets_delivered));
}

#[test]
fn a_collective_keeps_every_steps_finish_cycle_when_asked() {
    use tofusim_experiment::collective::{run, CollectiveSpec, Model, STEP_KINDS};
    let spec = |steps| CollectiveSpec {
        op: tofusim_comm::Operation::Allreduce,
        algorithm: tofusim_comm::Algorithm::Ring,
        size_bytes: 4096,
        system: "bgl:2x2x2".into(),
        root: 0,
        segment_bytes: Some(65536),
        tnis: None,
        modes: Modes::default(),
        verify: false,
        seed: 1,
        model: Model::Packet,
        max_minutes: None,
        counter_cycles: 0,
        steps,
        trees: None,
        ranks: Default::default(),
        flat: false,
        library: None,
        comm: Default::default(),
    };
    let go = |steps| run(&spec(steps), &mut |_| std::ops::ControlFlow::Continue(())).unwrap();
    assert!(go(false).steps.is_none());
    let r = go(true);
    let s = r.steps.as_ref().unwrap();
    let run = r.run.as_ref().unwrap();
    // The last step finishes when the collective does; every step ran.
    assert_eq!(s.finish_cycle.iter().map(|f| f.unwrap()).max(), Some(run.cycles));
    // What the receives took in is what the sends gave.
    let bytes_of = |kind: &str| -> u64 {
        let k = STEP_KINDS.iter().position(|x| *x == kind).unwrap() as u8;
        s.kind.iter().zip(&s.bytes).filter(|(x, _)| **x == k).map(|(_, b)| b).sum()
    };
    assert_eq!(bytes_of("send"), r.bytes_sent);
    assert_eq!(bytes_of("recv"), r.bytes_sent);
    assert_eq!(s.rank.iter().filter(|&&x| x == 0).count(), s.rank.len() / 8);
    // Each rank's steps finish in dependency order on a ring: its receives in program order.
    for rank in 0..8 {
        let recv: Vec<u64> = (0..s.rank.len()).filter(|&i| s.rank[i] == rank && s.kind[i] == 1).map(|i| s.finish_cycle[i].unwrap()).collect();
        assert!(recv.windows(2).all(|w| w[0] <= w[1]), "{recv:?}");
    }
}

#[test]
fn sub_communicators_run_side_by_side_and_share_the_network() {
    use tofusim_experiment::collective::{run, CollectiveSpec};
    let spec = |comm: &str, model: &str| {
        CollectiveSpec::from_json(&format!(r#"{{"op": "allreduce", "algo": "ring", "size_bytes": 65536, "system": "bgl:4x4x2", "comm": "{comm}", "model": "{model}", "verify": true}}"#)).unwrap()
    };
    let go = |s: &CollectiveSpec| run(s, &mut |_| std::ops::ControlFlow::Continue(())).unwrap();
    for model in ["packet", "flow-events"] {
        let rows = go(&spec("x", model));
        let c = rows.communicators.as_ref().unwrap();
        assert_eq!((c.comm.as_str(), c.count, c.ranks_each), ("x", 8, 4));
        assert_eq!((rows.processes, rows.verified), (32, Some(true)));
        assert_eq!(rows.communicator_shape, Some([4, 1, 1]));
        // One row alone against all eight at once: x rows use disjoint
        // links, so they do not slow each other.
        let one = go(&spec("ranks:0-3", model));
        assert_eq!(one.communicators.as_ref().unwrap().count, 1);
        let ratio = rows.time_seconds / one.time_seconds;
        assert!((0.999..1.02).contains(&ratio), "{model}: eight x rows {} s vs one {} s", rows.time_seconds, one.time_seconds);
        // Blocks of 16 ranks span x and y: each its own ring.
        let blocks = go(&spec("blocks:16", model));
        assert_eq!((blocks.communicators.as_ref().unwrap().count, blocks.verified), (2, Some(true)));
    }
}
