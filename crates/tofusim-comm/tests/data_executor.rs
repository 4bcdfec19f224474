//! The data executor catches broken schedules: a wrong combine, a missing
//! round, a receive without its send, a cycle, a race.

use tofusim_comm::algorithms::{build, Algorithm, Params};
use tofusim_comm::exec::data::{execute, DataError, Order};
use tofusim_comm::{Action, Collective, Combine, Schedule, Span};


fn schedule(op: &str, algo: Algorithm, p: u32) -> Schedule {
    build(Collective::parse(op, 0).unwrap(), algo, &Params::new(p, 8)).unwrap()
}

#[test]
fn a_wrong_combine_is_caught() {
    let mut s = schedule("allreduce", Algorithm::Ring, 5);
    let step = s.programs[2]
        .steps
        .iter_mut()
        .find(|st| matches!(st.action, Action::Recv { .. }))
        .unwrap();
    if let Action::Recv { combine, .. } = &mut step.action {
        *combine = Combine::Replace;
    }
    assert!(matches!(
        execute(&s, Order::Fifo),
        Err(DataError::Mismatch { .. })
    ));
}

#[test]
fn a_missing_round_leaves_a_rank_unheard() {
    // Dissemination on 8 ranks needs distances 1, 2, 4; drop the last round.
    let mut s = schedule("barrier", Algorithm::Dissemination, 8);
    for prog in &mut s.programs {
        prog.steps.truncate(4);
    }
    assert!(matches!(
        execute(&s, Order::Fifo),
        Err(DataError::Unheard { .. })
    ));
}

#[test]
fn a_receive_without_its_send_is_refused_and_a_cycle_is_stuck() {
    let mut s = schedule("bcast", Algorithm::Binomial, 4);
    let i = s.programs[0]
        .steps
        .iter()
        .position(|st| matches!(st.action, Action::Send { .. }))
        .unwrap();
    s.programs[0].steps.remove(i);
    assert!(matches!(
        execute(&s, Order::Fifo),
        Err(DataError::Invalid(_))
    ));
    // Two ranks that each receive before they send.
    let mut s = Schedule::new(Collective::Allreduce, "test", 2, 1);
    for r in 0..2 {
        let rcv = s.recv(r, 1 - r, vec![Span::new(0, 1)], Combine::Sum, &[]);
        s.send(r, 1 - r, vec![Span::new(0, 1)], 0, &[rcv]);
    }
    assert!(matches!(
        execute(&s, Order::Fifo),
        Err(DataError::Stuck { left: 4, .. })
    ));
}

#[test]
fn a_race_shows_in_one_of_the_orders() {
    // Recursive doubling with the receive not waiting for its send: the
    // send may read the already-summed buffer.
    let mut s = schedule("allreduce", Algorithm::RecursiveDoubling, 4);
    for prog in &mut s.programs {
        for i in 0..prog.steps.len() {
            if matches!(prog.steps[i].action, Action::Recv { .. }) && i > 0 {
                let prev = (i - 1) as u32;
                prog.steps[i].deps.retain(|d| *d != prev);
            }
        }
    }
    let fifo = execute(&s, Order::Fifo).is_ok();
    let lifo = execute(&s, Order::Lifo).is_ok();
    assert!(!(fifo && lifo), "the race went unnoticed");
}
