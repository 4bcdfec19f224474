//! Stopping a long flow computation early (Ctrl-C, issue 18).
//!
//! A flow model run is a sequence of max-min solves; between two of them
//! the executors ask [`Interrupt::stopped`]. The caller's check (the
//! Python binding's: are there pending signals?) runs at most every
//! [`Interrupt::PERIOD`], so asking costs a clock read.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

/// Whether a flow computation should stop now. Executors hold it as
/// `&dyn Stop`, which (unlike [`Interrupt`] itself) shortens with the
/// borrows around it.
pub trait Stop {
    fn stopped(&self) -> bool;
}

impl Stop for Interrupt<'_> {
    fn stopped(&self) -> bool {
        Interrupt::stopped(self)
    }
}

/// The caller's "should we stop?" check, asked now and then.
pub struct Interrupt<'a> {
    check: RefCell<Option<&'a mut dyn FnMut() -> bool>>,
    last: Cell<Instant>,
    stopped: Cell<bool>,
}

impl<'a> Interrupt<'a> {
    /// How often the caller's check runs at most.
    pub const PERIOD: Duration = Duration::from_millis(100);

    /// Never stops.
    pub fn never() -> Self {
        Interrupt { check: RefCell::new(None), last: Cell::new(Instant::now()), stopped: Cell::new(false) }
    }

    /// Stops once `check` returns true.
    pub fn new(check: &'a mut dyn FnMut() -> bool) -> Self {
        Interrupt { check: RefCell::new(Some(check)), last: Cell::new(Instant::now()), stopped: Cell::new(false) }
    }

    /// Whether to stop now (and from then on).
    pub fn stopped(&self) -> bool {
        if self.stopped.get() {
            return true;
        }
        if self.last.get().elapsed() < Self::PERIOD {
            return false;
        }
        self.last.set(Instant::now());
        let stop = self.check.borrow_mut().as_mut().is_some_and(|c| c());
        self.stopped.set(stop);
        stop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_runs_at_most_once_a_period_and_a_stop_sticks() {
        let mut calls = 0;
        let mut check = || {
            calls += 1;
            calls >= 2
        };
        let i = Interrupt::new(&mut check);
        assert!(!i.stopped(), "the first period has not passed");
        std::thread::sleep(Interrupt::PERIOD);
        assert!(!i.stopped());
        assert!(!i.stopped(), "within the period: not asked again");
        std::thread::sleep(Interrupt::PERIOD);
        assert!(i.stopped());
        assert!(i.stopped());
        drop(i);
        assert_eq!(calls, 2);
        assert!(!Interrupt::never().stopped());
    }
}
