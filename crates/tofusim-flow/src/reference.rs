//! The reference max-min solver: progressive filling, literally. Each
//! round raises every unfrozen flow by the same amount — the least that
//! saturates a link or brings a flow to its cap — then freezes the flows
//! that hit either. O(rounds × (flows × path + links)); for tests.

use crate::Flow;

/// Max-min fair rates of `flows` over links of `capacity`.
pub fn max_min(capacity: &[f64], flows: &[Flow]) -> Vec<f64> {
    let mut rate = vec![0.0; flows.len()];
    let mut frozen: Vec<bool> = flows.iter().map(|f| f.links.is_empty() && f.cap.is_infinite()).collect();
    // A flow crossing no link and with no cap is unbounded: report it as
    // infinitely fast.
    for (r, &f) in rate.iter_mut().zip(&frozen) {
        if f {
            *r = f64::INFINITY;
        }
    }
    let mut remaining = capacity.to_vec();
    loop {
        let mut active_on = vec![0usize; capacity.len()];
        let mut any = false;
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                any = true;
                for &l in &f.links {
                    active_on[l as usize] += 1;
                }
            }
        }
        if !any {
            return rate;
        }
        // The raise that first saturates a link or caps a flow.
        let mut step = f64::INFINITY;
        for (l, &n) in active_on.iter().enumerate() {
            if n > 0 {
                step = step.min(remaining[l].max(0.0) / n as f64);
            }
        }
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                step = step.min(f.cap - rate[i]);
            }
        }
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                rate[i] += step;
                for &l in &f.links {
                    remaining[l as usize] -= step;
                }
            }
        }
        // Freeze what is now held.
        let eps = 1e-12;
        for (i, f) in flows.iter().enumerate() {
            if frozen[i] {
                continue;
            }
            let capped = rate[i] >= f.cap - eps * f.cap.abs().max(1.0);
            let saturated = f
                .links
                .iter()
                .any(|&l| remaining[l as usize] <= eps * capacity[l as usize].abs().max(1.0));
            if capped || saturated {
                frozen[i] = true;
            }
        }
    }
}
