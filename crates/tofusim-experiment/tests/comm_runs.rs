//! The communication layer on the packet engine: puts, collectives.

use tofusim_comm::algorithms::{atomic_add, get, pingpong, transfers, Transfer};
use tofusim_experiment::collective::{run_schedule, Timed};
use tofusim_experiment::comm_model::Modes;

fn put(system: &str, bytes: u64) -> Timed {
    run_schedule(
        system,
        &Modes::default(),
        1,
        |ranks, _, _| {
            Ok(transfers(
                ranks,
                &[Transfer {
                    src: 0,
                    dst: 1,
                    bytes,
                    tni: 0,
                }],
            ))
        },
        &mut |_| {},
    )
    .unwrap()
}

#[test]
fn a_large_put_runs_near_the_link_rate() {
    let t = put("k:3x3x3", 4 << 20);
    let bw = (4u64 << 20) as f64 / t.time_seconds;
    eprintln!(
        "put 4 MiB: {:.3} GB/s in {} cycles, {:?}",
        bw / 1e9,
        t.cycles,
        t.run
    );
    assert!(!t.run.deadlock && t.run.invariant_error.is_none());
    assert!(bw < 5.0e9 && bw > 4.0e9, "{bw}");
}

#[test]
fn pingpong_latency_is_a_few_hundred_ns() {
    let t = run_schedule(
        "k:3x3x3",
        &Modes::default(),
        1,
        |ranks, _, _| Ok(pingpong(ranks, 0, 1, 8, 10)),
        &mut |_| {},
    )
    .unwrap();
    let one_way = t.time_seconds / 20.0;
    eprintln!("8 B one way: {:.3} us", one_way * 1e6);
    assert!(one_way > 0.2e-6 && one_way < 3e-6);
}

#[test]
fn messages_from_one_tni_arrive_in_program_order() {
    let t = run_schedule(
        "k:1x1x1",
        &Modes::default(),
        1,
        |ranks, _, _| {
            Ok(transfers(
                ranks,
                &[Transfer {
                    src: 0,
                    dst: 1,
                    bytes: 65536,
                    tni: 0,
                }; 4],
            ))
        },
        &mut |_| {},
    )
    .unwrap();
    let f = &t.step_finish_cycles[1];
    assert!(f.windows(2).all(|w| w[0] < w[1]), "{f:?}");
}

#[test]
fn a_node_forwards_while_it_receives() {
    // Rank 0 -> 1 and 1 -> 2 at once take about as long as one of them.
    let one = put("k:1x1x1", 262144).cycles;
    let t = run_schedule(
        "k:1x1x1",
        &Modes::default(),
        1,
        |ranks, _, _| {
            Ok(transfers(
                ranks,
                &[
                    Transfer {
                        src: 0,
                        dst: 1,
                        bytes: 262144,
                        tni: 0,
                    },
                    Transfer {
                        src: 1,
                        dst: 2,
                        bytes: 262144,
                        tni: 0,
                    },
                ],
            ))
        },
        &mut |_| {},
    )
    .unwrap();
    assert!(
        (t.cycles as f64) < 1.1 * one as f64,
        "{} vs {one}",
        t.cycles
    );
}

#[test]
fn get_and_atomic_skip_the_target_host() {
    let one = |s| {
        run_schedule(
            "k:1x1x1",
            &Modes::default(),
            1,
            |_, _, _| Ok(s),
            &mut |_| {},
        )
        .unwrap()
    };
    let put_round_trip = one(pingpong(12, 0, 1, 8, 10)).time_seconds / 10.0;
    let g = one(get(12, 0, 1, 8, 10)).time_seconds / 10.0;
    let a = one(atomic_add(12, 0, 1, 10)).time_seconds / 10.0;
    // A round trip of two host-driven puts costs the target's host twice;
    // a Get or Atomic costs only the initiator's.
    assert!(
        g < put_round_trip && a < put_round_trip,
        "{g} {a} {put_round_trip}"
    );
    assert!(g > 0.5 * put_round_trip);
}
