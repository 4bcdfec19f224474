//! Where each router's state lives in the engine's flat arrays: queues
//! (VC buffers of the network inputs, then every node's injection FIFOs),
//! input units (ports, then FIFOs), and the per-output masks.

/// `q_cand` bit of a head packet that has arrived.
pub(crate) const HEAD_EJECTS: u64 = 1 << 63;
/// Largest number of network ports per router (`q_cand` holds one bit
/// per port and [`HEAD_EJECTS`]).
pub const MAX_PORTS: usize = 63;
/// Largest number of queues per router (VC buffers and injection FIFOs:
/// the per-output `want` masks are `u128`).
pub const MAX_QUEUES: usize = 128;

/// A set of queues of one router, one bit per queue.
pub(crate) type QueueSet = u128;

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
    pub hp: Option<usize>,
    /// Nodes per router, and injection FIFOs per node (normal + priority).
    pub npr: usize,
    pub fifos_per_node: usize,
}

impl Layout {
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

    /// The input unit of queue `q` (the inverse of [`Self::queue_of`]).
    #[inline]
    pub fn unit_of(&self, q: usize) -> usize {
        if q < self.ports * self.vcs {
            q / self.vcs
        } else {
            self.ports + (q - self.ports * self.vcs)
        }
    }

    pub fn vc_name(&self, vc: usize) -> String {
        if vc < self.dynamic {
            format!("dynamic-{vc}")
        } else if Some(vc) == self.hp {
            "priority".into()
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
