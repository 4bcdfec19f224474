//! Where each router's state lives in the engine's flat arrays: queues
//! (VC buffers of the network inputs, then every node's injection FIFOs),
//! input units (ports, then FIFOs), and the per-output masks.

/// `heads` bit of a head packet that has arrived.
pub(crate) const HEAD_EJECTS: u64 = 1 << 63;
/// Largest number of network ports per router (`heads` holds one bit
/// per port and [`HEAD_EJECTS`]).
pub const MAX_PORTS: usize = 63;
/// Largest number of queues per router (VC buffers and injection FIFOs):
/// the widest queue set (TaihuLight's 256-node leaf switches need 582).
pub const MAX_QUEUES: usize = 64 * WIDE_WORDS;

/// A set of queues of one router, one bit per queue, as arbitration holds
/// it on the stack. Three widths: [`u64`] for routers of up to 64 queues
/// (BG/L has 32, Tofu 24: every set operation one instruction), [`u128`]
/// up to 128 (Aries), [`WideQueues`] beyond; the router picks one per
/// arbitration, so narrow routers pay nothing for wide ones.
pub(crate) trait QueueSet: Copy {
    /// An empty set of `words` words.
    fn empty(words: usize) -> Self;
    /// The set stored at `src` (`words` words of the per-output index).
    fn load(src: &[u64]) -> Self;
    fn or_load(&mut self, src: &[u64]);
    fn remove_all(&mut self, other: &Self);
    fn contains(&self, q: usize) -> bool;
    fn insert(&mut self, q: usize);
    /// The lowest queue in the set.
    fn first(&self) -> Option<usize>;
    /// Takes out the `n` ≤ 64 queues from `lo`, as bits relative to `lo`.
    fn take_range(&mut self, lo: usize, n: usize) -> u64;
}

#[inline]
fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The queue set of one integer type (`u64`: routers of up to 64 queues;
/// `u128`: up to 128, stored as two words), read from `words` words of
/// the per-output index by `$load`.
macro_rules! integer_queue_set {
    ($t:ty, $load:expr) => {
        impl QueueSet for $t {
            #[inline]
            fn empty(_: usize) -> Self {
                0
            }

            #[inline]
            fn load(src: &[u64]) -> Self {
                $load(src)
            }

            #[inline]
            fn or_load(&mut self, src: &[u64]) {
                *self |= Self::load(src);
            }

            #[inline]
            fn remove_all(&mut self, other: &Self) {
                *self &= !other;
            }

            #[inline]
            fn contains(&self, q: usize) -> bool {
                self & (1 << q) != 0
            }

            #[inline]
            fn insert(&mut self, q: usize) {
                *self |= 1 << q;
            }

            #[inline]
            fn first(&self) -> Option<usize> {
                (*self != 0).then(|| self.trailing_zeros() as usize)
            }

            #[inline]
            fn take_range(&mut self, lo: usize, n: usize) -> u64 {
                let mask = (low_mask(n) as $t) << lo;
                let out = ((*self & mask) >> lo) as u64;
                *self &= !mask;
                out
            }
        }
    };
}

integer_queue_set!(u64, |src: &[u64]| src[0]);
integer_queue_set!(u128, |src: &[u64]| src[0] as u128 | (src[1] as u128) << 64);

/// Words of the widest queue set (queues per router: 64 × this).
pub(crate) const WIDE_WORDS: usize = 16;

/// A queue set of up to `64 × WIDE_WORDS` queues, `words` of them used.
#[derive(Clone, Copy)]
pub(crate) struct WideQueues {
    w: [u64; WIDE_WORDS],
    words: usize,
}

impl QueueSet for WideQueues {
    #[inline]
    fn empty(words: usize) -> Self {
        WideQueues { w: [0; WIDE_WORDS], words }
    }

    #[inline]
    fn load(src: &[u64]) -> Self {
        let mut s = Self::empty(src.len());
        s.w[..src.len()].copy_from_slice(src);
        s
    }

    #[inline]
    fn or_load(&mut self, src: &[u64]) {
        for (a, b) in self.w[..self.words].iter_mut().zip(src) {
            *a |= b;
        }
    }

    #[inline]
    fn remove_all(&mut self, other: &Self) {
        for (a, b) in self.w[..self.words].iter_mut().zip(&other.w) {
            *a &= !b;
        }
    }

    #[inline]
    fn contains(&self, q: usize) -> bool {
        self.w[q / 64] & 1 << (q % 64) != 0
    }

    #[inline]
    fn insert(&mut self, q: usize) {
        self.w[q / 64] |= 1 << (q % 64);
    }

    #[inline]
    fn first(&self) -> Option<usize> {
        self.w[..self.words].iter().position(|&x| x != 0).map(|i| i * 64 + self.w[i].trailing_zeros() as usize)
    }

    #[inline]
    fn take_range(&mut self, lo: usize, n: usize) -> u64 {
        let mask = low_mask(n);
        let (i, b) = (lo / 64, lo % 64);
        let mut out = self.w[i] >> b;
        self.w[i] &= !(mask << b);
        if b + n > 64 {
            // The range spills into the next word.
            let hmask = low_mask(b + n - 64);
            out |= (self.w[i + 1] & hmask) << (64 - b);
            self.w[i + 1] &= !hmask;
        }
        out & mask
    }
}

/// Layout of the per-router arrays.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub routers: usize,
    /// Network ports.
    pub ports: usize,
    /// VCs per network input.
    pub vcs: usize,
    /// Queues per router: `ports × vcs` VC buffers, then the FIFOs.
    pub queues: usize,
    /// Input units per router: ports, then FIFOs.
    pub units: usize,
    pub dynamic: usize,
    /// First escape VC (`dynamic`), and the priority VC if any.
    pub esc: usize,
    pub esc_count: usize,
    /// Hop-class escape (dragonflies): VCs per class; 0 for other rules.
    pub class_vcs: usize,
    pub hp: Option<usize>,
    /// Nodes per router, and injection FIFOs per node (normal + priority).
    pub npr: usize,
    pub fifos_per_node: usize,
    /// Words of a queue set (`queues / 64`, rounded up): 1 selects the
    /// `u64` sets, 2 the `u128` ones, more [`WideQueues`].
    pub qwords: usize,
    /// ⌊2^32 / vcs⌋ + 1: a VC buffer's input unit by a multiplication
    /// ([`Self::unit_of_vc_queue`]) instead of a division per head.
    pub vcs_reciprocal: u64,
}

impl Layout {
    /// [`Self::vcs_reciprocal`] for `vcs` VCs per input.
    pub fn reciprocal(vcs: usize) -> u64 {
        (1u64 << 32) / vcs.max(1) as u64 + 1
    }

    /// The input unit of VC buffer `q` (< `ports × vcs`): ⌊q / vcs⌋, exact
    /// for q < 2^32 / vcs (queues are far fewer).
    #[inline]
    pub fn unit_of_vc_queue(&self, q: usize) -> usize {
        ((q as u64 * self.vcs_reciprocal) >> 32) as usize
    }

    #[inline]
    pub fn queue_of(&self, unit: usize, vc: usize) -> usize {
        if unit < self.ports {
            unit * self.vcs + vc
        } else {
            self.ports * self.vcs + (unit - self.ports)
        }
    }

    /// The node (global index) that owns injection FIFO unit `unit` of router `r`.
    #[inline]
    pub fn fifo_node(&self, r: usize, unit: usize) -> usize {
        r * self.npr + (unit - self.ports) / self.fifos_per_node
    }

    pub fn vc_name(&self, vc: usize) -> String {
        if vc < self.dynamic {
            format!("dynamic-{vc}")
        } else if Some(vc) == self.hp {
            "priority".into()
        } else if self.class_vcs > 0 {
            // As the static deadlock check names them: class, VC of the class.
            let k = vc - self.esc;
            format!("escape-class-{}.{}", k / self.class_vcs, k % self.class_vcs)
        } else if self.esc_count == 2 {
            if vc == self.esc {
                "escape-low".into()
            } else {
                "escape-high".into()
            }
        } else {
            "escape".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `first`, `contains` and `take_range` agree with a plain list of
    /// members, across word boundaries.
    fn check<Q: QueueSet>(words: usize, members: &std::collections::BTreeSet<usize>, lo: usize, n: usize) -> Result<(), TestCaseError> {
        let mut s = Q::empty(words);
        for &q in members {
            s.insert(q);
        }
        prop_assert_eq!(s.first(), members.iter().next().copied());
        let taken = s.take_range(lo, n);
        for q in 0..words * 64 {
            let inside = q >= lo && q < lo + n;
            prop_assert_eq!(s.contains(q), members.contains(&q) && !inside, "queue {}", q);
            if inside {
                prop_assert_eq!(taken >> (q - lo) & 1 == 1, members.contains(&q));
            }
        }
        Ok(())
    }

    #[test]
    fn a_vc_buffers_unit_by_its_reciprocal() {
        for vcs in 1..=MAX_VCS_TESTED {
            let lay = Layout { vcs, vcs_reciprocal: Layout::reciprocal(vcs), ..EXAMPLE };
            for q in 0..MAX_QUEUES * 4 {
                assert_eq!(lay.unit_of_vc_queue(q), q / vcs, "queue {q} of {vcs} VCs per input");
            }
        }
    }

    const MAX_VCS_TESTED: usize = 64;
    const EXAMPLE: Layout = Layout {
        routers: 1, ports: 1, vcs: 1, queues: 1, units: 1, dynamic: 1, esc: 1, esc_count: 1, class_vcs: 0,
        hp: None, npr: 1, fifos_per_node: 1, qwords: 1, vcs_reciprocal: 0,
    };

    proptest! {
        #[test]
        fn wide_sets_behave_as_sets(members in proptest::collection::btree_set(0usize..300, 0..60), lo in 0usize..250, n in 1usize..=64) {
            check::<WideQueues>(5, &members, lo, n)?;
        }

        #[test]
        fn narrow_sets_behave_as_sets(members in proptest::collection::btree_set(0usize..128, 0..40), lo in 0usize..64, n in 1usize..=64) {
            check::<u128>(2, &members, lo, n)?;
        }

        #[test]
        fn one_word_sets_behave_as_sets(members in proptest::collection::btree_set(0usize..64, 0..30), lo in 0usize..64, n in 1usize..=64) {
            // A range stays inside the router's queues (a unit's VCs).
            let n = n.min(64 - lo);
            check::<u64>(1, &members, lo, n)?;
        }
    }
}
