//! Collectives over sub-communicators that run at the same time: the
//! rows of a process grid each reducing their own vector (`MPI_Cart_sub`),
//! or blocks of consecutive ranks (`MPI_Comm_split`). Each communicator's
//! schedule is built over its own members (rank 0 … n − 1, as the MPI
//! library numbers them) and written into its members' world programs;
//! the communicators share the machine's links and nodes, not data.

use crate::schedule::{Action, Rank, Schedule};
use crate::{BuildError, Collective};

/// One world schedule of `groups` (each communicator's members as world
/// ranks, communicator rank i = `members[i]`, and its schedule) running at
/// once over `ranks` world ranks. Members must be distinct across
/// communicators; a world rank in none has nothing to do. The result moves
/// each communicator's data only among its members, so it is a
/// [`Collective::Transfers`]: each communicator's schedule is what a data
/// check verifies.
pub fn side_by_side(ranks: u32, groups: &[(&[Rank], &Schedule)]) -> Result<Schedule, BuildError> {
    let bad = |message: String| BuildError { key: "comm", message };
    let Some(&(_, first)) = groups.first() else {
        return Err(bad("no communicator to run".into()));
    };
    let mut taken = vec![false; ranks as usize];
    for (k, &(members, sched)) in groups.iter().enumerate() {
        if members.len() != sched.ranks as usize {
            return Err(bad(format!("communicator {k} has {} members for a schedule of {} ranks", members.len(), sched.ranks)));
        }
        for &m in members {
            match taken.get_mut(m as usize) {
                None => return Err(bad(format!("communicator {k} names rank {m}, beyond the {ranks} ranks"))),
                Some(t) if *t => return Err(bad(format!("rank {m} is in two communicators"))),
                Some(t) => *t = true,
            }
        }
    }
    let count = groups.iter().map(|(_, s)| s.count).max().unwrap_or(0);
    let mut s = Schedule::new(Collective::Transfers, first.algorithm, ranks, count);
    s.buffer_elements = groups.iter().map(|(_, g)| g.buffer_elements).max().unwrap_or(0);
    s.fallback.clone_from(&first.fallback);
    for &(members, sched) in groups {
        for (i, program) in sched.programs.iter().enumerate() {
            s.append(members[i], &program.steps, &[], |action| {
                if let Action::Send { peer, .. } | Action::Recv { peer, .. } = action {
                    *peer = members[*peer as usize];
                }
            });
        }
    }
    s.shrink_to_fit();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::build_named;
    use crate::Params;

    #[test]
    fn communicators_keep_their_steps_and_talk_only_among_their_members() {
        let ring = build_named("allreduce", "ring", 0, 64, Params::new(4, 0)).unwrap();
        let (a, b): (Vec<Rank>, Vec<Rank>) = (vec![0, 2, 4, 6], vec![1, 3, 5, 7]);
        let s = side_by_side(9, &[(&a, &ring), (&b, &ring)]).unwrap();
        s.validate().unwrap();
        assert_eq!(s.messages(), 2 * ring.messages());
        assert!(s.programs[8].steps.is_empty());
        for (from, to, _) in s.sends() {
            assert_eq!(from % 2, to % 2, "{from} -> {to} crosses communicators");
        }
        assert_eq!(side_by_side(9, &[(&a, &ring), (&a, &ring)]).unwrap_err().key, "comm");
        assert_eq!(side_by_side(6, &[(&a, &ring)]).unwrap_err().key, "comm");
    }
}
