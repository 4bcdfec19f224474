//! Collectives over several ranks per node, run the way the Tofu
//! libraries run them ([S:003]: one process per node takes part in the
//! inter-node traffic; the processes of a node fan in and out through
//! shared memory): the ranks of a node send to its first rank (its
//! leader), the leaders run the algorithm among themselves (one rank per
//! node: the torus-aware algorithms apply again), and each leader sends
//! the result back to its node's ranks. Messages within a node go through
//! its memory (the executors see that both ranks are on one node).

use crate::schedule::{Action, Combine, Rank, Schedule, Span, StepId};
use crate::{BuildError, Collective};

/// The operations that run this way (allgather and alltoall move every
/// rank's own blocks: a node-leader form would gather and scatter them,
/// which is not modelled).
pub fn applies_to(c: Collective) -> bool {
    match c {
        Collective::Barrier | Collective::Bcast { .. } | Collective::Reduce { .. } | Collective::Allreduce => true,
        Collective::Allgather | Collective::Alltoall | Collective::Gather { .. } | Collective::Scatter { .. } | Collective::ReduceScatter | Collective::Transfers => false,
    }
}

/// The leader of each node in order of first appearance, and each rank's
/// leader (a rank that is its own leader leads its node).
pub fn leaders(node_of_rank: &[u32]) -> (Vec<Rank>, Vec<Rank>) {
    let mut first: std::collections::HashMap<u32, Rank> = Default::default();
    let mut order = Vec::new();
    let leader_of = node_of_rank
        .iter()
        .enumerate()
        .map(|(r, &n)| {
            *first.entry(n).or_insert_with(|| {
                order.push(r as Rank);
                r as Rank
            })
        })
        .collect();
    (order, leader_of)
}

/// `collective` over the ranks placed on `node_of_rank`, with `inner` the
/// algorithm's schedule over the leaders (one per node, in order of first
/// appearance: [`leaders`]). A root must lead its node.
pub fn node_leaders(collective: Collective, node_of_rank: &[u32], inner: &Schedule) -> Result<Schedule, BuildError> {
    let bad = |key: &'static str, message: String| BuildError { key, message };
    if !applies_to(collective) {
        return Err(bad("op", format!("{} has no node-leader form: it runs flat over every rank", collective.name())));
    }
    let (order, leader_of) = leaders(node_of_rank);
    let ranks = node_of_rank.len() as u32;
    if inner.ranks as usize != order.len() {
        return Err(bad("algo", format!("the leaders' schedule has {} ranks for {} nodes", inner.ranks, order.len())));
    }
    let root = collective.root();
    if matches!(collective, Collective::Bcast { .. } | Collective::Reduce { .. }) && leader_of.get(root as usize) != Some(&root) {
        return Err(bad("root", format!("rank {root} shares a node with rank {}: a root must be its node's first rank", leader_of[root as usize])));
    }
    let count = inner.count;
    let mut s = Schedule::new(collective, inner.algorithm, ranks, count);
    s.buffer_elements = s.buffer_elements.max(inner.buffer_elements);
    s.fallback.clone_from(&inner.fallback);
    let data: Vec<Span> = if collective == Collective::Barrier { vec![] } else { vec![Span::new(0, count)] };
    let fans_in = matches!(collective, Collective::Barrier | Collective::Reduce { .. } | Collective::Allreduce);
    let fans_out = matches!(collective, Collective::Barrier | Collective::Bcast { .. } | Collective::Allreduce);
    let combine = if collective == Collective::Barrier { Combine::Replace } else { Combine::Sum };
    // Fan in: every rank but a leader sends its vector to its leader.
    let mut arrived: Vec<Vec<StepId>> = vec![Vec::new(); ranks as usize];
    if fans_in {
        for r in 0..ranks {
            let l = leader_of[r as usize];
            if l != r {
                s.send(r, l, data.clone(), 0, &[]);
                let got = s.recv(l, r, data.clone(), combine, &[]);
                arrived[l as usize].push(got);
            }
        }
    }
    // The leaders' algorithm, after their node's contributions.
    let mut done: Vec<Vec<StepId>> = vec![Vec::new(); ranks as usize];
    for (&leader, program) in order.iter().zip(&inner.programs) {
        let base = s.programs[leader as usize].steps.len() as StepId;
        let before = arrived[leader as usize].clone();
        let mut waited_for = vec![false; program.steps.len()];
        for st in &program.steps {
            let mut action = st.action.clone();
            if let Action::Send { peer, .. } | Action::Recv { peer, .. } = &mut action {
                *peer = order[*peer as usize];
            }
            let mut deps: Vec<StepId> = st.deps.iter().map(|&d| d + base).collect();
            for &d in st.deps.iter() {
                waited_for[d as usize] = true;
            }
            if st.deps.is_empty() {
                deps.extend_from_slice(&before);
            }
            s.programs[leader as usize].steps.push(crate::schedule::Step { action, deps: crate::schedule::Deps::from_slice(&deps) });
        }
        // The leader is done when every step nothing else waits for is.
        let sinks: Vec<StepId> = (0..program.steps.len()).filter(|&i| !waited_for[i]).map(|i| base + i as StepId).collect();
        done[leader as usize] = if sinks.is_empty() { before } else { sinks };
    }
    // Fan out: each leader sends the result to its node's other ranks.
    if fans_out {
        for r in 0..ranks {
            let l = leader_of[r as usize];
            if l != r {
                let after = done[l as usize].clone();
                s.send(l, r, data.clone(), 0, &after);
                s.recv(r, l, data.clone(), Combine::Replace, &[]);
            }
        }
    }
    s.shrink_to_fit();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::build_named;
    use crate::exec::data::{execute, Order};
    use crate::Params;

    #[test]
    fn node_leader_collectives_compute_the_collective() {
        // 3 nodes, 4 ranks each (block), and an uneven cyclic-like map.
        for node_of_rank in [vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2], vec![5, 7, 5, 9, 9, 7, 5]] {
            let (order, _) = leaders(&node_of_rank);
            for (op, algo) in [("allreduce", "recursive-doubling"), ("allreduce", "ring"), ("bcast", "binomial"), ("reduce", "binomial"), ("barrier", "dissemination")] {
                let inner = build_named(op, algo, 0, 64, Params::new(order.len() as u32, 0)).unwrap();
                let s = node_leaders(inner.collective, &node_of_rank, &inner).unwrap();
                assert_eq!(s.ranks as usize, node_of_rank.len());
                s.validate().unwrap();
                execute(&s, Order::Fifo).unwrap_or_else(|e| panic!("{op}/{algo} on {node_of_rank:?}: {e}"));
            }
        }
    }

    #[test]
    fn a_root_must_lead_its_node_and_gathers_stay_flat() {
        let inner = build_named("bcast", "binomial", 0, 64, Params::new(2, 0)).unwrap();
        let mut c = inner.collective;
        if let Collective::Bcast { root } = &mut c {
            *root = 1;
        }
        assert_eq!(node_leaders(c, &[0, 0, 1, 1], &inner).unwrap_err().key, "root");
        let ag = build_named("allgather", "ring", 0, 64, Params::new(2, 0)).unwrap();
        assert_eq!(node_leaders(ag.collective, &[0, 0, 1, 1], &ag).unwrap_err().key, "op");
    }
}
