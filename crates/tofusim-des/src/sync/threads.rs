//! Partitions on the threads of a process, and through a [`Transport`] on
//! the threads of several processes.
//!
//! Mailboxes are double-buffered by window parity: a partition writes the
//! slots of this window's parity, meets the others at a barrier, then reads.
//! Nobody can write the same parity again before everybody has passed the
//! next window's barrier, that is before everybody has finished reading, so
//! one barrier per window suffices (two with several processes: the first
//! thread of each process runs the all-to-all between them).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{SpinBarrier, Transport, WindowSync};

type Slot = Mutex<Vec<u8>>;

fn slots(n: usize) -> Vec<Slot> {
    (0..n).map(|_| Mutex::new(Vec::new())).collect()
}

fn lock(slot: &Slot) -> std::sync::MutexGuard<'_, Vec<u8>> {
    // A poisoned slot means another partition panicked: that panic is the
    // error to report, and this thread's data are as good as any.
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

/// The state the partitions of one process share.
pub struct ThreadGroup {
    threads: usize,
    /// Global index of this process's first partition.
    first: usize,
    total: usize,
    barrier: SpinBarrier,
    /// `[parity][local src × total + dst]`: what a local partition sends.
    out: [Vec<Slot>; 2],
    /// `[parity][src × threads + local dst]`: what remote partitions sent.
    remote_in: [Vec<Slot>; 2],
    /// `[parity][partition]`: every partition's report.
    reports: [Vec<Slot>; 2],
    transport: Option<Mutex<Box<dyn Transport>>>,
}

impl ThreadGroup {
    /// `threads` partitions in this process; with a `transport`, every
    /// process of it runs `threads` partitions too (process `k` holds
    /// partitions `k·threads ..`).
    pub fn new(threads: usize, transport: Option<Box<dyn Transport>>) -> Arc<Self> {
        assert!(threads > 0, "at least one partition per process");
        let (rank, procs) = transport.as_ref().map_or((0, 1), |t| (t.rank(), t.size()));
        let total = threads * procs;
        Arc::new(Self {
            threads,
            first: rank * threads,
            total,
            barrier: SpinBarrier::new(threads),
            out: [slots(threads * total), slots(threads * total)],
            remote_in: [slots(total * threads), slots(total * threads)],
            reports: [slots(total), slots(total)],
            transport: transport.map(Mutex::new),
        })
    }

    /// The handle of local partition `local` (`0..threads`), for its thread.
    pub fn handle(self: &Arc<Self>, local: usize) -> ThreadSync {
        assert!(local < self.threads);
        ThreadSync { group: Arc::clone(self), local, parity: 0, wait_seconds: 0.0 }
    }

    /// Partitions in the whole run.
    pub fn partitions(&self) -> usize {
        self.total
    }

    /// Global index of this process's first partition.
    pub fn first(&self) -> usize {
        self.first
    }

    /// A partition failed: the others stop at their next meeting.
    pub fn poison(&self) {
        self.barrier.poison();
    }

    fn is_local(&self, p: usize) -> bool {
        (self.first..self.first + self.threads).contains(&p)
    }

    /// The first thread's share of a meeting between processes: every
    /// local partition's mail for each process, and every local report,
    /// go in one buffer per process.
    fn exchange_processes(&self, parity: usize) {
        let Some(t) = &self.transport else { return };
        let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
        let (procs, me) = (t.size(), t.rank());
        let put = |buf: &mut Vec<u8>, bytes: &[u8]| {
            buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            buf.extend_from_slice(bytes);
        };
        let mut send = vec![Vec::new(); procs];
        for (j, buf) in send.iter_mut().enumerate() {
            if j == me {
                continue;
            }
            for src in 0..self.threads {
                for dst in j * self.threads..(j + 1) * self.threads {
                    put(buf, &lock(&self.out[parity][src * self.total + dst]));
                }
            }
            for p in self.first..self.first + self.threads {
                put(buf, &lock(&self.reports[parity][p]));
            }
        }
        let got = t.alltoall(send);
        for (j, buf) in got.iter().enumerate() {
            if j == me {
                continue;
            }
            let mut at = 0usize;
            let mut take = || {
                let len = u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes")) as usize;
                at += 8;
                at += len;
                &buf[at - len..at]
            };
            for src in j * self.threads..(j + 1) * self.threads {
                for dst in 0..self.threads {
                    let bytes = take();
                    let mut slot = lock(&self.remote_in[parity][src * self.threads + dst]);
                    slot.clear();
                    slot.extend_from_slice(bytes);
                }
            }
            for p in j * self.threads..(j + 1) * self.threads {
                let bytes = take();
                let mut slot = lock(&self.reports[parity][p]);
                slot.clear();
                slot.extend_from_slice(bytes);
            }
        }
    }
}

/// One partition's handle on its [`ThreadGroup`].
pub struct ThreadSync {
    group: Arc<ThreadGroup>,
    local: usize,
    parity: usize,
    wait_seconds: f64,
}

impl WindowSync for ThreadSync {
    fn partitions(&self) -> usize {
        self.group.total
    }

    fn index(&self) -> usize {
        self.group.first + self.local
    }

    fn exchange(&mut self, out: &mut [Vec<u8>], report: &[u8], inbox: &mut [Vec<u8>], reports: &mut [Vec<u8>]) {
        let started = Instant::now();
        let g = &*self.group;
        let (me, par) = (self.index(), self.parity);
        for (dst, buf) in out.iter_mut().enumerate() {
            if dst != me {
                std::mem::swap(&mut *lock(&g.out[par][self.local * g.total + dst]), buf);
            }
            buf.clear();
        }
        {
            let mut slot = lock(&g.reports[par][me]);
            slot.clear();
            slot.extend_from_slice(report);
        }
        g.barrier.wait();
        if g.transport.is_some() {
            if self.local == 0 {
                g.exchange_processes(par);
            }
            g.barrier.wait();
        }
        for (src, buf) in inbox.iter_mut().enumerate() {
            buf.clear();
            if src == me {
                continue;
            }
            let slot = if g.is_local(src) {
                &g.out[par][(src - g.first) * g.total + me]
            } else {
                &g.remote_in[par][src * g.threads + self.local]
            };
            std::mem::swap(&mut *lock(slot), buf);
        }
        for (p, buf) in reports.iter_mut().enumerate() {
            buf.clear();
            buf.extend_from_slice(&lock(&g.reports[par][p]));
        }
        self.parity ^= 1;
        self.wait_seconds += started.elapsed().as_secs_f64();
    }

    fn wait_seconds(&self) -> f64 {
        self.wait_seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{LocalTransport, Serial};

    /// Every partition sends `[window, src, dst]` to every other and
    /// reports `[window, src]`; checks what comes back.
    fn run_partition(sync: &mut dyn WindowSync, windows: u8) {
        let n = sync.partitions();
        let me = sync.index();
        let mut out = vec![Vec::new(); n];
        let mut inbox = vec![Vec::new(); n];
        let mut reports = vec![Vec::new(); n];
        for w in 0..windows {
            for (d, o) in out.iter_mut().enumerate() {
                o.extend_from_slice(&[w, me as u8, d as u8]);
            }
            sync.exchange(&mut out, &[w, me as u8], &mut inbox, &mut reports);
            assert!(out.iter().all(Vec::is_empty));
            for s in 0..n {
                if s == me {
                    assert!(inbox[s].is_empty());
                } else {
                    assert_eq!(inbox[s], vec![w, s as u8, me as u8], "window {w} from {s} at {me}");
                }
                assert_eq!(reports[s], vec![w, s as u8]);
            }
        }
    }

    #[test]
    fn threads_meet_and_swap_mail() {
        let g = ThreadGroup::new(3, None);
        std::thread::scope(|s| {
            for i in 0..3 {
                let mut h = g.handle(i);
                s.spawn(move || run_partition(&mut h, 100));
            }
        });
    }

    #[test]
    fn threads_of_several_processes_meet_as_one_group() {
        let transports = LocalTransport::group(2);
        std::thread::scope(|s| {
            for t in transports {
                let g = ThreadGroup::new(2, Some(Box::new(t)));
                assert_eq!(g.partitions(), 4);
                for i in 0..2 {
                    let mut h = g.handle(i);
                    s.spawn(move || run_partition(&mut h, 60));
                }
            }
        });
    }

    #[test]
    fn serial_returns_its_own_report() {
        run_partition(&mut Serial, 3);
    }
}
