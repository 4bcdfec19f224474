//! Barriers: no data, only the causal order (every rank leaves after every
//! rank has arrived). Messages are empty; executors charge one minimal
//! packet each.

use super::{bcast, doubling, reduce, start, Algorithm};
use crate::schedule::{Combine, Schedule};

pub(crate) fn build(s: &mut Schedule, algorithm: Algorithm) {
    let p = s.ranks;
    let mut f = start(p);
    match algorithm {
        Algorithm::Dissemination => {
            let mut dist = 1;
            while dist < p {
                for r in 0..p {
                    let deps = f[r as usize].clone();
                    let snd = s.send(r, (r + dist) % p, vec![], 0, &deps);
                    let rcv = s.recv(r, (r + p - dist) % p, vec![], Combine::Replace, &deps);
                    f[r as usize] = vec![snd, rcv];
                }
                dist *= 2;
            }
        }
        Algorithm::RecursiveDoubling => {
            doubling::fold_in(s, &mut f, &[], Combine::Replace);
            doubling::exchange_rounds(s, &mut f, &[], Combine::Replace);
            doubling::fold_out(s, &mut f, &[]);
        }
        Algorithm::Tree => {
            reduce::binomial(s, 0, &[], &mut f);
            bcast::binomial(s, 0, &[], &mut f);
        }
        _ => unreachable!("not a barrier algorithm"),
    }
}
