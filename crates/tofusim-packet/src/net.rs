//! What does not change during a run: the routing, the router model's
//! parameters, the run's parameters and the layout of the state arrays —
//! shared read-only by the router units, the NIC and the engine loop.

use std::sync::Arc;

use tofusim_routing::{FaultMap, Routing};

use crate::config::{LinkErrors, RouterParams, RoutingMode, RunParams};
use crate::layout::Layout;

pub(crate) struct Net {
    pub routing: Arc<Routing>,
    pub params: RouterParams,
    pub mode: RoutingMode,
    pub run: RunParams,
    pub lay: Layout,
    /// Nodes (`routers × nodes_per_router`); packets carry node ids.
    pub nodes: usize,
    /// Cycles per byte of each output port index (empty: all 1, no scaling).
    pub wire_scale: Vec<f64>,
    /// Chunks of a full-sized packet; tokens of a VC; chunks of a FIFO.
    pub full: u16,
    pub cap: u16,
    pub fifo_cap: u16,
    /// Node injection capacity in link units (bytes per cycle).
    pub injection_links: f64,
    pub cycle_ns: f64,
    /// Connected output ports over all routers (failed links excluded).
    pub directed_links: u64,
    /// Failed routers and links (`None`: a healthy network).
    pub faults: Option<Arc<FaultMap>>,
    /// With failures during the run: cycles from a packet's loss on a
    /// failed link to its source sending it again (the MPI layer's
    /// time-out); 0 without.
    pub resend_timeout_cycles: u64,
    /// Link errors and their recovery (`None`: error-free links).
    pub link_errors: Option<Arc<LinkErrors>>,
    /// Nodes that failed (they send and receive nothing: per-node figures
    /// count the others).
    pub failed_nodes: usize,
    /// Whether the engine prefetches router and packet state: only when
    /// the routers' state outgrows the caches (see [`PREFETCH_FROM_ROUTERS`]).
    pub prefetch: bool,
    /// Whether it also asks for the head packets of the next router to
    /// arbitrate: only when the packets and router state outgrow the
    /// last-level cache ([`PREFETCH_HEADS_FROM_ROUTERS`]).
    pub prefetch_heads: bool,
    /// By a VC's downstream tokens (0 to `cap`): the range JSQ sees them
    /// in (`RouterParams::jsq_ranges`) and their quarter of the buffer (the
    /// JSQ statistics'), looked up instead of two divisions per candidate.
    pub jsq_range: Vec<u16>,
    pub token_quarter: Vec<u8>,
}

/// Networks of at least this many routers are prefetched for: about 1 KiB
/// of state per router outgrows a core's 512 KiB L2 cache from here. On
/// smaller ones the prefetch instructions cost more than the misses they
/// save (BG/L 8^3: 4% slower with them, 32^3: 30% faster).
pub(crate) const PREFETCH_FROM_ROUTERS: usize = 2048;

/// Networks of at least this many routers also prefetch the head packets
/// an arbitration will route: their state and packets (about 3.6 KiB per
/// router at 90% load) outgrow a 32 MiB last-level cache from here. BG/L
/// 32^3 (32,768 routers): 0.90 and 0.935 of the time without (two paired
/// invocations); 16^3 (4,096): 1.01, so not there.
pub(crate) const PREFETCH_HEADS_FROM_ROUTERS: usize = 16384;

impl Net {
    /// Cycles a packet of `bytes` occupies a link (reference rate).
    #[inline]
    pub fn wire_cycles(&self, bytes: u16) -> u64 {
        bytes as u64 + self.params.overhead_bytes as u64
    }

    /// Cycles a packet of `bytes` occupies the link out of `port`.
    #[inline]
    pub fn port_wire_cycles(&self, bytes: u16, port: usize) -> u64 {
        let w = self.wire_cycles(bytes);
        match self.wire_scale.get(port) {
            Some(&s) => (w as f64 * s).ceil() as u64,
            None => w,
        }
    }

    /// The router node `node` is attached to.
    #[inline]
    pub fn router_of(&self, node: u32) -> u32 {
        if self.lay.npr == 1 {
            node
        } else {
            node / self.lay.npr as u32
        }
    }

    /// Flow-control chunks of a packet of `bytes` (the router model's chunk size).
    #[inline]
    pub fn chunks(&self, bytes: u16) -> u16 {
        chunks_of(bytes, self.params.chunk_bytes)
    }
}

/// ⌈bytes / chunk_bytes⌉: a shift where the chunk is a power of two (every
/// preset's), since a division per head routed showed in profiles.
#[inline]
pub(crate) fn chunks_of(bytes: u16, chunk_bytes: u32) -> u16 {
    let cb = chunk_bytes.max(1);
    if cb.is_power_of_two() {
        ((bytes as u32 + cb - 1) >> cb.trailing_zeros()) as u16
    } else {
        (bytes as u32).div_ceil(cb) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::chunks_of;

    #[test]
    fn chunks_are_the_rounded_up_quotient() {
        for cb in [1u32, 3, 16, 32, 48, 64, 100, 128] {
            for bytes in (0..=u16::MAX).step_by(7).chain([u16::MAX]) {
                assert_eq!(chunks_of(bytes, cb) as u32, (bytes as u32).div_ceil(cb), "{bytes} B in chunks of {cb}");
            }
        }
    }
}
