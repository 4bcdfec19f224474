//! An MPI-like point-to-point layer on the RDMA puts, written as schedule
//! steps so every executor runs it ([S:001]).
//!
//! - **Eager** (up to `eager_limit_bytes`): the sender puts the message into
//!   a buffer the receiver set aside for it; the receiver copies it out.
//!   Messages up to `llp_limit_bytes` take the **low-latency path**, which
//!   bypasses the PML/BML/BTL layers (less software per message).
//! - **Rendezvous** (larger): request-to-send, clear-to-send, then the
//!   data by one RDMA put straight into the user buffer (no copy).
//! - **Buffer modes** per peer: communication starts in **memory-saving**
//!   mode (a small buffer per peer, a shared pool, extra software per
//!   message); after `switch_after_exchanges` messages with a peer it
//!   switches to **high-speed** mode (a large dedicated buffer), for at
//!   most `max_high_speed_peers` peers.
//!
//! Software costs are `Work` steps; the puts carry the TNI and network
//! costs. Parameter values and their sources: [`MpiConfig::k_computer`].

use serde::Serialize;

use crate::collective::Collective;
use crate::schedule::{Combine, Rank, Schedule, Span, StepId};
use crate::ELEMENT_BYTES;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferMode {
    MemorySaving,
    HighSpeed,
}

#[derive(Clone, Debug, Serialize)]
pub struct MpiConfig {
    /// The MPI software this models (`fujitsu-mpi-k`, `cray-mpich`, …).
    pub profile: &'static str,
    /// One line on what it is and where its values come from (outputs).
    pub summary: &'static str,
    pub eager_limit_bytes: u64,
    pub llp_limit_bytes: u64,
    /// Software per message on each side on the low-latency path, ns.
    pub llp_ns: u32,
    /// Software per message on each side through the full stack, ns.
    pub stack_ns: u32,
    /// Software per rendezvous control step, ns.
    pub rendezvous_ns: u32,
    /// Payload of a rendezvous control message, bytes.
    pub control_bytes: u64,
    /// Extra software per message in memory-saving mode (shared-pool
    /// bookkeeping on both sides), ns.
    pub saving_extra_ns: u32,
    /// Buffer per peer in memory-saving mode, and the shared pool, bytes.
    pub saving_buffer_bytes: u64,
    pub shared_pool_bytes: u64,
    /// Buffer per peer in high-speed mode, bytes.
    pub high_speed_buffer_bytes: u64,
    pub switch_after_exchanges: u32,
    pub max_high_speed_peers: u32,
    /// Where each value comes from.
    pub sources: Vec<(&'static str, &'static str)>,
}

impl MpiConfig {
    /// The K computer's MPI (Fujitsu MPI, Open MPI based). Only the
    /// low-latency software cost is tied to a figure (fitted to 1.27 µs);
    /// the protocol limits and buffer sizes are settings, not published.
    pub fn k_computer() -> Self {
        Self {
            profile: "fujitsu-mpi-k",
            summary: "the K computer's Fujitsu MPI (eager and low-latency limits, memory-saving and high-speed modes; its software cost fitted to the 1.27 us MPI latency [S:001])",
            eager_limit_bytes: 32 << 10,
            llp_limit_bytes: 1 << 10,
            llp_ns: 180,
            stack_ns: 500,
            rendezvous_ns: 300,
            control_bytes: 64,
            saving_extra_ns: 200,
            saving_buffer_bytes: 16 << 10,
            shared_pool_bytes: 4 << 20,
            high_speed_buffer_bytes: 512 << 10,
            switch_after_exchanges: 16,
            max_high_speed_peers: 64,
            sources: vec![
                ("llp_ns", "[FIT] 1.27 us MPI 8-byte latency [S:001] minus the 0.91 us put, split over the two sides"),
                ("eager_limit_bytes, llp_limit_bytes", "[MEM] settings; the source gives no thresholds (Fugaku's btl_tofu_eager_limit is set to 128,000 or 512,000 B in public job scripts, not a default)"),
                ("stack_ns, rendezvous_ns, saving_extra_ns", "[MEM] settings"),
                ("buffer sizes, switch_after_exchanges, max_high_speed_peers", "[MEM] settings; the source describes the policy (start memory-saving, switch after a threshold, cap the number), not the values. Fujitsu MPI exposes them as common_tofu_fastmode_threshold and common_tofu_max_fastmode_procs [PUB: public K job scripts]; their defaults are not public"),
            ],
        }
    }

    /// Fujitsu MPI on FX100 (Tofu2) or Fugaku (TofuD): the same Open
    /// MPI-based library as K's, with K's values. No public source gives
    /// its per-message software cost or its limits on these machines, and
    /// Fugaku's published MPI figures are kept for a blind comparison, so
    /// nothing here is fitted to them: every value is K's, labelled
    /// `[MEM]`. The generation's own put costs (the host model) differ.
    fn fujitsu_mpi(profile: &'static str, summary: &'static str, software_source: &'static str) -> Self {
        let k = Self::k_computer();
        Self {
            profile,
            summary,
            sources: vec![
                ("llp_ns, stack_ns, rendezvous_ns, saving_extra_ns", software_source),
                ("eager_limit_bytes, llp_limit_bytes, buffer sizes and mode switching", "[MEM] K's settings (their defaults are not public on any generation)"),
            ],
            ..k
        }
    }

    /// Fujitsu MPI on FX100 (Tofu2).
    pub fn fx100() -> Self {
        Self::fujitsu_mpi(
            "fujitsu-mpi-fx100",
            "Fujitsu MPI on FX100, with K's software costs and limits ([MEM]: no public FX100 per-message figure)",
            "[MEM] K's Fujitsu MPI software costs (the same Open MPI based library; SPARC64 XIfx at 2.2 GHz against VIIIfx's 2.0 GHz); no public FX100 per-message figure",
        )
    }

    /// Fujitsu MPI on Fugaku (TofuD).
    pub fn fugaku() -> Self {
        Self::fujitsu_mpi(
            "fujitsu-mpi-fugaku",
            "Fujitsu MPI on Fugaku, with K's software costs and limits ([MEM]: no public per-message figure was used; Fugaku's MPI figures are a blind check)",
            "[MEM] K's Fujitsu MPI software costs (the library is Open MPI based on K and Fugaku alike; the A64FX core runs at 2.0-2.2 GHz against SPARC64 VIIIfx's 2.0 GHz). No public per-message cost was used: Fugaku's MPI figures are held back as a blind check",
        )
    }

    /// An MPI whose per-message software is already inside the system's
    /// host costs: those were set from the machine's MPI latency (BG/L
    /// about 3 µs, Aries 1.2 µs [S:002], InfiniBand about 1 µs), so the
    /// layer adds no software time of its own — only its protocols (eager
    /// up to `eager_limit_bytes`, rendezvous above with its control
    /// messages) and no memory-saving mode (buffers are high-speed from the
    /// first message).
    fn in_host_costs(profile: &'static str, summary: &'static str, eager_limit_bytes: u64, sources: Vec<(&'static str, &'static str)>) -> Self {
        Self {
            profile,
            summary,
            eager_limit_bytes,
            llp_limit_bytes: 0,
            llp_ns: 0,
            stack_ns: 0,
            rendezvous_ns: 0,
            control_bytes: 64,
            saving_extra_ns: 0,
            saving_buffer_bytes: 0,
            shared_pool_bytes: 0,
            high_speed_buffer_bytes: eager_limit_bytes.max(1),
            switch_after_exchanges: 0,
            max_high_speed_peers: u32::MAX,
            sources,
        }
    }

    /// Cray MPICH on Aries (XC).
    pub fn cray_mpich() -> Self {
        Self::in_host_costs(
            "cray-mpich",
            "Cray MPICH: software inside the Aries host costs fitted to the 1.2 us MPI latency [S:002]; eager up to 8 KiB",
            8192,
            vec![
                ("software per message", "[FIT] inside the Aries host costs, which are fitted to the 1.2 us same-Aries MPI latency [S:002] (that figure is therefore not an independent check)"),
                ("eager_limit_bytes", "[PUB] 8,192 B: MPICH_GNI_MAX_EAGER_MSG_SIZE's default on XC systems (Cray's intro_mpi manual page); larger messages use the rendezvous (BTE) path"),
                ("memory modes", "[PUB] none: Cray MPICH has no memory-saving/high-speed switch of Fujitsu's kind"),
            ],
        )
    }

    /// Blue Gene/L's MPI (MPICH2 based; Almási et al., IBM J. Res. Dev.
    /// 49(2/3), 2005).
    pub fn blue_gene_l() -> Self {
        Self::in_host_costs(
            "bgl-mpi",
            "BG/L's MPI: software inside the host costs set from its ~3 us MPI latency [MEM]; eager up to 1,000 B [MEM]",
            1000,
            vec![
                ("software per message", "[MEM] inside the BG/L host costs, which are set from an MPI latency of about 3 us (docs/model.md)"),
                ("eager_limit_bytes", "[MEM] 1,000 B: eager for short messages, rendezvous above (the protocol pair of Almasi et al. 2005); the default threshold is assumed, not taken from a source"),
                ("memory modes", "[MEM] none modelled"),
            ],
        )
    }

    /// An MPI of no particular machine on a fat-tree or a generic
    /// dragonfly (Open MPI or MPICH over InfiniBand-class hardware).
    pub fn generic() -> Self {
        Self::in_host_costs(
            "generic-mpi",
            "a generic MPI: software inside the host costs (~1 us MPI latency, [MEM]); eager up to 12 KiB [MEM]",
            12 << 10,
            vec![
                ("software per message", "[MEM] inside the host costs, which are set from an MPI latency of about 1 us (EDR InfiniBand class; docs/model.md)"),
                ("eager_limit_bytes", "[MEM] 12 KiB, the size of Open MPI's openib eager limit; an assumption for a machine of no particular library"),
                ("memory modes", "[MEM] none modelled"),
            ],
        )
    }

    /// Host software per message on each side, ns.
    pub fn software_ns(&self, bytes: u64, mode: BufferMode) -> u32 {
        let base = if bytes <= self.llp_limit_bytes {
            self.llp_ns
        } else {
            self.stack_ns
        };
        base + if mode == BufferMode::MemorySaving {
            self.saving_extra_ns
        } else {
            0
        }
    }

    /// Communication-buffer memory of one process talking to `peers` peers,
    /// bytes, when all of them end in `mode` — or, with `adaptive`, under the
    /// switching policy after every peer passed the threshold.
    pub fn buffer_memory_bytes(&self, peers: u32, policy: MemoryPolicy) -> u64 {
        let p = peers as u64;
        // Each peer needs a receive and a send-side buffer.
        match policy {
            MemoryPolicy::AllMemorySaving => {
                self.shared_pool_bytes + 2 * p * self.saving_buffer_bytes
            }
            MemoryPolicy::AllHighSpeed => 2 * p * self.high_speed_buffer_bytes,
            MemoryPolicy::Adaptive => {
                let hs = p.min(self.max_high_speed_peers as u64);
                self.shared_pool_bytes
                    + 2 * (p - hs) * self.saving_buffer_bytes
                    + 2 * hs * self.high_speed_buffer_bytes
            }
        }
    }

    /// The mode of the `k`-th exchange with a peer (0-based) when the peer
    /// is among the first `max_high_speed_peers` to pass the threshold.
    pub fn mode_of_exchange(&self, k: u32, peer_index: u32) -> BufferMode {
        if k >= self.switch_after_exchanges && peer_index < self.max_high_speed_peers {
            BufferMode::HighSpeed
        } else {
            BufferMode::MemorySaving
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryPolicy {
    AllMemorySaving,
    AllHighSpeed,
    Adaptive,
}

/// Buffer layout of an MPI schedule: the user buffer at 0, the eager
/// receive buffer after it, the control messages after that.
pub struct Layout {
    n: u64,
    ctrl: u64,
}

impl Layout {
    /// A message of `n` elements and control messages of `ctrl`; the
    /// buffer needs [`Layout::elements`].
    pub fn new(n: u64, ctrl: u64) -> Self {
        Self { n, ctrl }
    }
    pub fn elements(&self) -> u64 {
        2 * self.n + self.ctrl
    }
    fn user(&self) -> Vec<Span> {
        vec![Span::new(0, self.n)]
    }
    fn eager(&self) -> Vec<Span> {
        vec![Span::new(self.n, self.n)]
    }
    fn control(&self) -> Vec<Span> {
        vec![Span::new(2 * self.n, self.ctrl)]
    }
}

/// One MPI message of `bytes` from `a` to `b`, after `deps_a` at `a` and
/// `deps_b` at `b` (the receive being posted). Returns the steps after
/// which the send is complete at `a` and the message delivered at `b`.
#[allow(clippy::too_many_arguments)]
fn message(
    s: &mut Schedule,
    cfg: &MpiConfig,
    lay: &Layout,
    a: Rank,
    b: Rank,
    bytes: u64,
    mode: BufferMode,
    deps_a: &[StepId],
    deps_b: &[StepId],
) -> (StepId, StepId) {
    let m = Message { cfg, lay, a, b, bytes, mode, tag: 0, eager: None };
    let (_, sent) = m.send_side(s, deps_a);
    (sent, m.recv_side(s, deps_b))
}

/// One MPI message written side by side: the sender's steps and the
/// receiver's steps can be written at different times (a replayed trace
/// reaches the send and the receive in different orders), their messages
/// matched by `tag` (the control messages and the data of a rendezvous
/// take `tag` and `tag + 1`).
pub struct Message<'a> {
    pub cfg: &'a MpiConfig,
    pub lay: &'a Layout,
    pub a: Rank,
    pub b: Rank,
    pub bytes: u64,
    pub mode: BufferMode,
    pub tag: u32,
    /// The protocol regardless of the size: `Some(true)` eager (a buffered
    /// send, complete once copied out), `Some(false)` rendezvous (a
    /// synchronous send, complete once the receiver has matched it);
    /// `None` by the eager limit.
    pub eager: Option<bool>,
}

impl Message<'_> {
    fn is_eager(&self) -> bool {
        self.eager.unwrap_or(self.bytes <= self.cfg.eager_limit_bytes)
    }

    /// The sender's steps after `deps`: returns the step that ends the
    /// host's part of the call (its software; what a non-blocking send
    /// waits for before returning) and the step after which the send is
    /// complete.
    pub fn send_side(&self, s: &mut Schedule, deps: &[StepId]) -> (StepId, StepId) {
        let (cfg, lay, a, b, tag) = (self.cfg, self.lay, self.a, self.b, self.tag);
        let sw = cfg.software_ns(self.bytes, self.mode);
        if self.is_eager() {
            let w = s.work(a, sw, deps);
            let snd = s.send(a, b, lay.user(), 0, &[w]);
            s.set_tag(a, snd, tag);
            (w, snd)
        } else {
            let w = s.work(a, cfg.rendezvous_ns + sw, deps);
            let rts = s.send(a, b, lay.control(), 0, &[w]);
            s.set_tag(a, rts, tag);
            let got_cts = s.recv(a, b, lay.control(), Combine::Replace, &[rts]);
            s.set_tag(a, got_cts, tag);
            let wa = s.work(a, cfg.rendezvous_ns, &[got_cts]);
            let data = s.send(a, b, lay.user(), 0, &[wa]);
            s.set_tag(a, data, tag + 1);
            (w, data)
        }
    }

    /// The receiver's steps after `deps` (the receive posted): returns the
    /// step after which the message is in the user's buffer.
    pub fn recv_side(&self, s: &mut Schedule, deps: &[StepId]) -> StepId {
        let (cfg, lay, a, b, tag) = (self.cfg, self.lay, self.a, self.b, self.tag);
        let sw = cfg.software_ns(self.bytes, self.mode);
        if self.is_eager() {
            let rcv = s.recv(b, a, lay.eager(), Combine::Replace, deps);
            s.set_tag(b, rcv, tag);
            let cp = s.copy(b, lay.eager(), lay.user(), &[rcv]);
            s.work(b, sw, &[cp])
        } else {
            let got_rts = s.recv(b, a, lay.control(), Combine::Replace, deps);
            s.set_tag(b, got_rts, tag);
            let wb = s.work(b, cfg.rendezvous_ns, &[got_rts]);
            let cts = s.send(b, a, lay.control(), 0, &[wb]);
            s.set_tag(b, cts, tag);
            let got = s.recv(b, a, lay.user(), Combine::Replace, &[cts]);
            s.set_tag(b, got, tag + 1);
            s.work(b, sw, &[got])
        }
    }
}

/// `rounds` MPI ping-pongs of `bytes` between ranks `a` and `b`; the mode
/// of each exchange follows the switching policy (or is forced).
pub fn pingpong(
    ranks: u32,
    a: Rank,
    b: Rank,
    bytes: u64,
    rounds: u32,
    cfg: &MpiConfig,
    forced: Option<BufferMode>,
) -> Schedule {
    let n = bytes.div_ceil(ELEMENT_BYTES);
    let lay = Layout {
        n,
        ctrl: cfg.control_bytes.div_ceil(ELEMENT_BYTES),
    };
    let mut s = Schedule::new(Collective::Transfers, "mpi-pingpong", ranks, n);
    s.buffer_elements = 2 * n + lay.ctrl;
    let (mut la, mut lb): (Vec<StepId>, Vec<StepId>) = (vec![], vec![]);
    for k in 0..rounds {
        let mode = forced.unwrap_or_else(|| cfg.mode_of_exchange(2 * k, 0));
        let (sa, db) = message(&mut s, cfg, &lay, a, b, bytes, mode, &la, &lb);
        let mode = forced.unwrap_or_else(|| cfg.mode_of_exchange(2 * k + 1, 0));
        let (sb, da) = message(&mut s, cfg, &lay, b, a, bytes, mode, &[db], &[sa]);
        la = vec![da];
        lb = vec![sb];
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::data::{execute, Order};

    #[test]
    fn eager_and_rendezvous_pingpongs_are_well_formed() {
        let cfg = MpiConfig::k_computer();
        for bytes in [8, 4096, 1 << 20] {
            let s = pingpong(4, 0, 3, bytes, 3, &cfg, None);
            execute(&s, Order::Fifo).unwrap();
            execute(&s, Order::Lifo).unwrap();
        }
        // Rendezvous: RTS, CTS and the data, each way, per round.
        assert_eq!(pingpong(2, 0, 1, 1 << 20, 1, &cfg, None).messages(), 6);
        assert_eq!(pingpong(2, 0, 1, 8, 1, &cfg, None).messages(), 2);
    }

    #[test]
    fn memory_grows_slower_with_the_adaptive_policy() {
        let cfg = MpiConfig::k_computer();
        let at = |p, pol| cfg.buffer_memory_bytes(p, pol);
        assert!(at(1000, MemoryPolicy::Adaptive) < at(1000, MemoryPolicy::AllHighSpeed) / 5);
        assert!(
            at(10, MemoryPolicy::Adaptive)
                == at(10, MemoryPolicy::AllHighSpeed) + cfg.shared_pool_bytes
        );
        assert!(at(1000, MemoryPolicy::AllMemorySaving) < at(1000, MemoryPolicy::Adaptive));
        assert_eq!(cfg.mode_of_exchange(0, 0), BufferMode::MemorySaving);
        assert_eq!(cfg.mode_of_exchange(16, 0), BufferMode::HighSpeed);
        assert_eq!(cfg.mode_of_exchange(16, 64), BufferMode::MemorySaving);
    }
}
