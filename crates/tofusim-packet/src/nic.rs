//! The node side of the network interface: each node's software send
//! queues (lanes), its finite generator's progress, the host interface
//! that feeds its injection FIFOs, and the answering thread. The FIFOs
//! themselves are input units of the router.

use crate::event::{Ev, EvKind};
use crate::partition::Ownership;
use crate::send_queue::SendQueues;
use tofusim_des::TimeWheel;

pub(crate) struct Nic {
    /// Send lanes per node (the traffic's software send queues).
    pub lanes: usize,
    /// Per node, when its host interface can start the next injection
    /// (fractional cycles: the interface may be faster than a link).
    pub host_free_at: Vec<f64>,
    /// Per (node, lane): the messages handed over, not yet made into
    /// packets (closed-loop traffic: schedules, replies).
    pub messages: SendQueues,
    /// Per (node, lane): the packets made and waiting for an injection
    /// FIFO (behind them, `messages`), and the finite generator's next and
    /// total packet counts.
    pub src_head: Vec<u32>,
    pub src_tail: Vec<u32>,
    /// Chunks of the send queue's head packet once it has waited for room
    /// in a FIFO (0: not known): a node whose FIFOs stay full is then
    /// passed over without reading the packet again.
    pub src_need: Vec<u16>,
    pub gen_next: Vec<u64>,
    pub gen_total: Vec<u64>,
    /// Per (node, lane): the FIFO to try first (round robin).
    pub fifo_rr: Vec<u8>,
    /// Per (node, lane): since when the head of that send queue has waited
    /// for injection FIFO space (`u64::MAX`: it does not wait).
    pub fifo_wait_since: Vec<u64>,
    /// Per node: when its answering thread is free again.
    pub turn_free_at: Vec<u64>,
    /// Per node: the number of the next packet it creates.
    pub node_serial: Vec<u32>,
    /// Per node, a bit per lane that may have a packet to send (made,
    /// handed over or still to generate): a router's arbitration visits
    /// only those lanes (a collective's node has several, mostly idle).
    /// Set whenever a lane gets work, cleared when it is found empty.
    /// Nodes with more than 32 lanes keep every bit set.
    pub lane_work: Vec<u32>,
}

/// Lanes the per-node work mask can follow.
pub(crate) const MASKED_LANES: usize = 32;

impl Nic {
    /// Nodes sit `npr` to a router; the engine simulates the routers `own`.
    pub fn new(nodes: usize, lanes: usize, npr: usize, gen_total: Vec<u64>, own: Ownership) -> Self {
        use crate::packet::NONE;
        let routers = nodes / npr;
        Nic {
            lanes,
            messages: SendQueues::new(nodes, lanes, npr, own),
            host_free_at: vec![0.0; nodes],
            src_head: own.filled(routers, npr * lanes, NONE),
            src_tail: own.filled(routers, npr * lanes, NONE),
            src_need: vec![0; nodes * lanes],
            gen_next: vec![0; nodes * lanes],
            lane_work: (0..nodes)
                .map(|n| {
                    if lanes > MASKED_LANES {
                        u32::MAX
                    } else {
                        (0..lanes).filter(|&l| gen_total[n * lanes + l] > 0).fold(0, |m, l| m | 1 << l)
                    }
                })
                .collect(),
            gen_total,
            fifo_rr: vec![0; nodes * lanes],
            turn_free_at: vec![0; nodes],
            fifo_wait_since: vec![u64::MAX; nodes * lanes],
            node_serial: vec![0; nodes],
        }
    }

    /// The head of send queue `li` (node · lanes + lane) found no
    /// injection FIFO with room at `t`.
    #[inline]
    pub fn fifo_wait_from(&mut self, li: usize, t: u64) {
        if self.fifo_wait_since[li] == u64::MAX {
            self.fifo_wait_since[li] = t;
        }
    }

    /// Lane `lane` of node `node` may have work.
    #[inline]
    pub fn lane_has_work(&mut self, node: usize, lane: usize) {
        if lane < MASKED_LANES {
            self.lane_work[node] |= 1 << lane;
        }
    }

    /// The packet's data cross node `node`'s host interface (K: the
    /// CPU-ICC bus; Aries: PCIe to the NIC) at `bytes_per_cycle`; the
    /// node's next injection waits for it (a `Wake` event).
    pub fn charge_host(&mut self, node: usize, t: u64, bytes: u16, bytes_per_cycle: f64, wheel: &mut TimeWheel<Ev>) {
        if !bytes_per_cycle.is_finite() {
            return;
        }
        let free = self.host_free_at[node].max(t as f64) + bytes as f64 / bytes_per_cycle;
        self.host_free_at[node] = free;
        wheel.schedule(free.ceil() as u64, Ev { kind: EvKind::Wake, a: 0, b: 0, router: node as u32, x: 0 });
    }
}
