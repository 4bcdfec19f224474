//! Window synchronisation of spatial partitions.
//!
//! A network split into partitions is simulated in windows of `w` cycles,
//! `w` being the shortest latency of anything that crosses from one
//! partition to another (a packet's hop, a token's return). Nothing a
//! partition does inside a window can reach another partition before the
//! window ends, so the partitions run a window independently and then
//! meet: each hands over the events it made for the others, and every
//! partition learns every partition's *report* (the few counts from which
//! all of them take the same global decisions: done, deadlocked, where the
//! next window starts). This is the YAWNS scheme of the Blue Gene/L
//! performance simulator ([S:004]).
//!
//! Messages are plain bytes: the kernel knows nothing of packets, and bytes
//! cross processes as easily as threads. Buffers are swapped, not copied,
//! so a steady run allocates nothing.

mod barrier;
mod serial;
mod threads;
mod transport;

pub use barrier::SpinBarrier;
pub use serial::Serial;
pub use threads::{ThreadGroup, ThreadSync};
pub use transport::{LocalTransport, Transport};

/// One partition's side of the window synchronisation.
pub trait WindowSync {
    /// Partitions in the whole run (every thread of every process).
    fn partitions(&self) -> usize;

    /// This partition's index, `0..partitions()`.
    fn index(&self) -> usize;

    /// The meeting at the end of a window. `out[p]` holds the bytes for
    /// partition `p` (the own slot is ignored) and is left empty, with
    /// spare capacity; `report` is shown to every partition. On return
    /// `inbox[p]` holds what partition `p` sent here and `reports[p]` every
    /// partition's report, in partition order whatever the transport.
    fn exchange(&mut self, out: &mut [Vec<u8>], report: &[u8], inbox: &mut [Vec<u8>], reports: &mut [Vec<u8>]);

    /// Seconds this partition spent waiting for the others so far.
    fn wait_seconds(&self) -> f64;
}

/// Every partition's `mine` at partition 0, in partition order (its own
/// first); the others get nothing back. Unlike [`all_gather`], no
/// partition holds a copy of every other's bytes: for large end-of-run
/// summaries, gathered while every partition's state is still alive.
pub fn gather_first(sync: &mut dyn WindowSync, mine: Vec<u8>) -> Vec<Vec<u8>> {
    let n = sync.partitions();
    let me = sync.index();
    let mut out = vec![Vec::new(); n];
    let mut inbox = vec![Vec::new(); n];
    let mut reports = vec![Vec::new(); n];
    if me != 0 {
        out[0] = mine;
        sync.exchange(&mut out, &[], &mut inbox, &mut reports);
        return Vec::new();
    }
    sync.exchange(&mut out, &[], &mut inbox, &mut reports);
    inbox[0] = mine;
    inbox
}

/// Every partition's `mine`, in partition order (an exchange with nothing
/// but reports): for end-of-run summaries and audits.
pub fn all_gather(sync: &mut dyn WindowSync, mine: &[u8]) -> Vec<Vec<u8>> {
    let n = sync.partitions();
    let mut out = vec![Vec::new(); n];
    let mut inbox = vec![Vec::new(); n];
    let mut reports = vec![Vec::new(); n];
    sync.exchange(&mut out, mine, &mut inbox, &mut reports);
    reports
}
