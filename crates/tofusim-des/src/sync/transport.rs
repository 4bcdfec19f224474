//! Processes: the partitions of one process talk to those of the others
//! through a [`Transport`], one collective call per window.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};

/// An all-to-all between the processes of a run (MPI's `MPI_Alltoall` of
/// byte buffers). Implemented over MPI by the Python front end (mpi4py),
/// and by [`LocalTransport`] within one process for tests.
pub trait Transport: Send {
    /// This process, `0..size()`.
    fn rank(&self) -> usize;
    /// Processes in the run.
    fn size(&self) -> usize;
    /// Sends `send[j]` to process `j` (the own slot is ignored) and returns
    /// what every process sent here (the own slot empty). Every process
    /// calls it the same number of times.
    fn alltoall(&mut self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
}

/// Processes emulated by threads of one process, linked by channels: the
/// same code path as MPI, testable without `mpirun`.
pub struct LocalTransport {
    rank: usize,
    to: Vec<Sender<(usize, Vec<u8>)>>,
    from: Receiver<(usize, Vec<u8>)>,
    /// Messages that arrived early (a fast process already in the next
    /// round), per sender, in order.
    early: Vec<VecDeque<Vec<u8>>>,
}

impl LocalTransport {
    /// `n` connected transports, one per emulated process.
    pub fn group(n: usize) -> Vec<LocalTransport> {
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..n).map(|_| channel()).unzip();
        receivers
            .into_iter()
            .enumerate()
            .map(|(rank, from)| LocalTransport { rank, to: senders.clone(), from, early: vec![VecDeque::new(); n] })
            .collect()
    }
}

impl Transport for LocalTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.to.len()
    }

    fn alltoall(&mut self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let n = self.size();
        for (j, buf) in send.into_iter().enumerate() {
            if j != self.rank {
                self.to[j].send((self.rank, buf)).expect("every emulated process stays until the end");
            }
        }
        // A channel keeps each sender's order, so the first message queued
        // from each sender is this round's.
        let mut got = vec![Vec::new(); n];
        for (j, slot) in got.iter_mut().enumerate() {
            if j == self.rank {
                continue;
            }
            while self.early[j].is_empty() {
                let (src, buf) = self.from.recv().expect("every emulated process stays until the end");
                self.early[src].push_back(buf);
            }
            *slot = self.early[j].pop_front().expect("checked");
        }
        got
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_stay_apart_when_one_process_runs_ahead() {
        let ts = LocalTransport::group(3);
        std::thread::scope(|s| {
            for mut t in ts {
                s.spawn(move || {
                    for round in 0..50u8 {
                        let me = t.rank() as u8;
                        let send = (0..3u8).map(|j| vec![round, me, j]).collect();
                        let got = t.alltoall(send);
                        for (j, buf) in got.iter().enumerate() {
                            if j == me as usize {
                                assert!(buf.is_empty());
                            } else {
                                assert_eq!(buf, &vec![round, j as u8, me]);
                            }
                        }
                    }
                });
            }
        });
    }
}
