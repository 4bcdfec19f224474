//! A barrier for partitions that meet every few microseconds.
//!
//! `std::sync::Barrier` parks waiting threads on a futex; waking them costs
//! tens of microseconds, as long as a small window's work. Threads here
//! spin briefly (the others usually arrive within a microsecond or two),
//! then yield the core, so that more threads than cores still progress.
//! A thread that fails poisons the barrier: the others stop waiting and
//! fail too, instead of spinning for ever.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A reusable barrier for `n` threads.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    poisoned: AtomicBool,
}

/// Spins before yielding the core.
const SPINS: u32 = 2000;

impl SpinBarrier {
    pub fn new(n: usize) -> Self {
        assert!(n > 0, "a barrier needs at least one thread");
        Self { n, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0), poisoned: AtomicBool::new(false) }
    }

    /// Marks the barrier failed: every waiter, now and later, panics.
    pub fn poison(&self) {
        self.poisoned.store(true, Ordering::Release);
    }

    /// Blocks until all `n` threads have called `wait`. Returns true in
    /// exactly one of them (the last to arrive). Panics if the barrier is
    /// poisoned (another thread failed).
    pub fn wait(&self) -> bool {
        self.check();
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return true;
        }
        let mut spins = 0;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < SPINS {
                std::hint::spin_loop();
                spins += 1;
            } else {
                self.check();
                std::thread::yield_now();
            }
        }
        false
    }

    fn check(&self) {
        if self.poisoned.load(Ordering::Acquire) {
            panic!("another partition of the run failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn a_poisoned_barrier_releases_its_waiters() {
        let b = SpinBarrier::new(2);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.wait())).is_err());
            std::thread::sleep(std::time::Duration::from_millis(20));
            b.poison();
            assert!(waiter.join().unwrap(), "the waiter stopped waiting");
        });
    }

    #[test]
    fn nobody_passes_before_everyone_arrived() {
        let b = SpinBarrier::new(4);
        let counter = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for round in 1..=200u64 {
                        counter.fetch_add(1, Ordering::SeqCst);
                        b.wait();
                        assert!(counter.load(Ordering::SeqCst) >= 4 * round);
                        b.wait();
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::SeqCst), 800);
    }
}
