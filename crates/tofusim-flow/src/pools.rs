//! Pools of bytes drained lazily at piecewise-constant rates: a pool's
//! bytes left are known as of its `stamp`, it drains at `rate` since, and
//! each rate change bumps its `version`, so a finish time kept in a heap
//! with an older version is stale. An event then costs the pools whose
//! rates it changed, not every active one. Both flow executors keep their
//! messages' pools this way (`transfers` and the schedule executor of
//! `tofusim-comm`); each keeps its own heap of finish times.

/// Per pool: bytes left as of `stamp`, the rate since, the version of its
/// current finish-time entry.
#[derive(Clone, Debug, Default)]
pub struct DrainingPools {
    left: Vec<f64>,
    stamp: Vec<f64>,
    rate: Vec<f64>,
    version: Vec<u32>,
}

impl DrainingPools {
    /// Pools holding `left` bytes each, at rate 0 from time 0.
    pub fn new(left: Vec<f64>) -> Self {
        let n = left.len();
        Self { left, stamp: vec![0.0; n], rate: vec![0.0; n], version: vec![0; n] }
    }

    /// Bytes left in pool `p` as of its last drain.
    #[inline]
    pub fn left(&self, p: usize) -> f64 {
        self.left[p]
    }

    #[inline]
    pub fn rate(&self, p: usize) -> f64 {
        self.rate[p]
    }

    #[inline]
    pub fn version(&self, p: usize) -> u32 {
        self.version[p]
    }

    /// Drains pool `p` up to `now` at its rate.
    #[inline]
    pub fn drain_to(&mut self, p: usize, now: f64) {
        self.left[p] -= self.rate[p] * (now - self.stamp[p]);
        self.stamp[p] = now;
    }

    /// Drains pool `p` up to `now` at its old rate, then sets `rate`; its
    /// earlier finish-time entries become stale. Returns the new version.
    #[inline]
    pub fn set_rate(&mut self, p: usize, now: f64, rate: f64) -> u32 {
        self.drain_to(p, now);
        self.rate[p] = rate;
        self.version[p] = self.version[p].wrapping_add(1);
        self.version[p]
    }

    /// Pool `p` has finished: nothing left, no rate, its entries stale.
    #[inline]
    pub fn empty(&mut self, p: usize) {
        self.left[p] = 0.0;
        self.rate[p] = 0.0;
        self.version[p] = self.version[p].wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::DrainingPools;

    #[test]
    fn a_pool_drains_at_each_rate_in_turn() {
        let mut p = DrainingPools::new(vec![10.0, 4.0]);
        let v = p.set_rate(0, 1.0, 2.0);
        assert_eq!((p.left(0), p.rate(0), v), (10.0, 2.0, 1));
        let v = p.set_rate(0, 3.0, 1.0);
        assert_eq!((p.left(0), v), (6.0, 2));
        p.drain_to(0, 5.0);
        assert_eq!(p.left(0), 4.0);
        p.empty(0);
        assert_eq!((p.left(0), p.rate(0), p.version(0)), (0.0, 0.0, 3));
        assert_eq!((p.left(1), p.version(1)), (4.0, 0));
    }
}
