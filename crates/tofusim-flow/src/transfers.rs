//! Messages run to completion on the flow model: rates are the max-min
//! allocation of the messages under way, recomputed whenever one finishes.
//! A message starts at time 0, or when the messages it waits for (`after`:
//! the one before it on the same DMA engine, which sends in order — every
//! part of it when a message is split over several routes) have finished.

use crate::{Flow, MaxMin};

/// A message: its route (links) and cap as a [`Flow`], and its size in the
/// capacities' unit × seconds (bytes when capacities are bytes/s).
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub flow: Flow,
    pub bytes: f64,
    /// The messages this one starts after (earlier indices); empty: at once.
    pub after: Vec<usize>,
}

/// Completion time of each message, seconds from the common start.
pub fn completion_times(capacity: &[f64], messages: &[Message]) -> Vec<f64> {
    let n = messages.len();
    let mut done = vec![f64::NAN; n];
    let mut left: Vec<f64> = messages.iter().map(|m| m.bytes).collect();
    // Messages waiting for each message, and how many each still waits for.
    let mut waiting: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pending: Vec<usize> = vec![0; n];
    let mut live: Vec<usize> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for &p in &m.after {
            assert!(p < i, "a message waits for an earlier one");
            waiting[p].push(i);
        }
        pending[i] = m.after.len();
        if m.after.is_empty() {
            live.push(i);
        }
    }
    let mut solver = MaxMin::new();
    let mut flows: Vec<Flow> = Vec::with_capacity(n);
    let mut rates = Vec::with_capacity(n);
    let mut finished: Vec<usize> = Vec::new();
    let mut now = 0.0;
    loop {
        // Empty messages finish at once, releasing their successors.
        let mut k = 0;
        while k < live.len() {
            let i = live[k];
            if left[i] <= 0.0 {
                done[i] = now;
                live.swap_remove(k);
                release(i, &waiting, &mut pending, &mut live);
            } else {
                k += 1;
            }
        }
        if live.is_empty() {
            break;
        }
        flows.clear();
        flows.extend(live.iter().map(|&i| messages[i].flow.clone()));
        solver.solve(capacity, &flows, &mut rates);
        let dt = live
            .iter()
            .zip(&rates)
            .map(|(&i, &r)| if r > 0.0 { left[i] / r } else { f64::INFINITY })
            .fold(f64::INFINITY, f64::min);
        assert!(dt.is_finite(), "a message can never finish (a link of zero capacity)");
        now += dt;
        finished.clear();
        let mut k = 0;
        live.retain(|&i| {
            let r = rates[k];
            k += 1;
            left[i] -= r * dt;
            if left[i] <= 1e-9 * messages[i].bytes {
                left[i] = 0.0;
                done[i] = now;
                finished.push(i);
                false
            } else {
                true
            }
        });
        for &i in &finished {
            release(i, &waiting, &mut pending, &mut live);
        }
    }
    done
}

/// Message `i` has finished: the messages that waited only for it start.
fn release(i: usize, waiting: &[Vec<usize>], pending: &mut [usize], live: &mut Vec<usize>) {
    for &w in &waiting[i] {
        pending[w] -= 1;
        if pending[w] == 0 {
            live.push(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_messages_share_then_one_speeds_up() {
        let cap = [1.0];
        let m = |bytes| Message { flow: Flow { links: vec![0], cap: f64::INFINITY }, bytes, after: vec![] };
        let t = completion_times(&cap, &[m(1.0), m(2.0)]);
        // 0.5 each until t = 2 (the first has sent 1), then the second alone
        // sends its last 1 at rate 1.
        assert!((t[0] - 2.0).abs() < 1e-12 && (t[1] - 3.0).abs() < 1e-12, "{t:?}");
    }

    #[test]
    fn a_capped_message_leaves_bandwidth_to_the_other() {
        let cap = [10.0];
        let msgs = [
            Message { flow: Flow { links: vec![0], cap: 2.0 }, bytes: 4.0, after: vec![] },
            Message { flow: Flow { links: vec![0], cap: f64::INFINITY }, bytes: 16.0, after: vec![] },
        ];
        let t = completion_times(&cap, &msgs);
        assert!((t[0] - 2.0).abs() < 1e-12 && (t[1] - 2.0).abs() < 1e-12, "{t:?}");
    }

    #[test]
    fn a_message_waits_for_the_one_before_it() {
        let cap = [1.0, 1.0];
        let msgs = [
            Message { flow: Flow { links: vec![0], cap: f64::INFINITY }, bytes: 1.0, after: vec![] },
            Message { flow: Flow { links: vec![0], cap: f64::INFINITY }, bytes: 1.0, after: vec![0] },
            Message { flow: Flow { links: vec![1], cap: f64::INFINITY }, bytes: 3.0, after: vec![] },
        ];
        let t = completion_times(&cap, &msgs);
        assert_eq!(t, vec![1.0, 2.0, 3.0]);
    }
}
