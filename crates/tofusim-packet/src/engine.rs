//! The event loop and the router state.
//!
//! **Time** is the network cycle: one byte time of a link. **Events** are
//! whole-packet (not per chunk) and addressed to one router each:
//!
//! | event | at | effect |
//! | --- | --- | --- |
//! | `ARRIVE` | grant + hop latency | the header reaches the next router; the packet joins its VC |
//! | `DONE` | grant + wire time | the tail has left: the input path and the buffer space are free; tokens go upstream |
//! | `TOKEN` | `DONE` + token latency | the sender's token counter for that VC grows |
//! | `DELIVER` | ejection grant + packet bytes | the packet is in the reception FIFO: checked and counted |
//! | `INJECT` | geometric gaps | open-loop traffic creates a packet at a node |
//! | `TRACE` | the row's cycle | a trace workload's packet is created at its source |
//! | `RELEASE` | a delivery or deposit + the workload's `turn_cycles` | a packet the node's software sends in response (corner turn, reply) joins its send queue |
//! | `WAKE` | an injection + its bytes over the host interface rate | the node may start its next injection |
//!
//! Each cycle, the events due are applied, then every router they touched
//! runs its node actions and arbitrates once ([`crate::router`]).
//!
//! **Order independence.** Nothing in a cycle depends on the order in which
//! its events come out of the wheel or in which routers are visited, and
//! that is what lets the network be split into partitions run on threads
//! and processes with bit-identical results ([`crate::window`]):
//! - an event touches only its router, and the events of one cycle at one
//!   router commute (token and buffer counts add up; at most one packet
//!   arrives per input and one leaves per reception path);
//! - what does not commute — a node's software answering deliveries,
//!   packets entering send queues, open-loop and trace packets being
//!   created, all of which draw random numbers or queue packets — is
//!   deferred as a *node action* and run at the router's arbitration, in a
//!   canonical order (node, kind, input or lane, packet number);
//! - arbitration changes only its own router, draws from the router's own
//!   seeded generator and schedules events at least one cycle ahead;
//! - packets are numbered per source node, not globally.

use crate::traffic::Traffic;
use std::sync::Arc;

use crate::actions::Action;
use crate::config::{RouterParams, RoutingMode, RunParams};
use crate::packet::{checksum, flags, list_pop, list_push, Packet, Pool, AT_DESTINATION, NONE};
use crate::prefetch;
use crate::result::InvariantError;
use crate::stats::{Histogram, PortCounters, SampleSums};
use rand::SeedableRng;
use tofusim_des::TimeWheel;
use tofusim_routing::Routing;
use crate::traffic::NewPacket;

/// How far ahead in a cycle's events, and in its list of routers to
/// arbitrate, the engine prefetches state.
pub(crate) const PREFETCH_EVENTS: usize = 8;
const PREFETCH_ROUTERS: usize = 2;

pub(crate) const ARRIVE: u8 = 0;
pub(crate) const DONE: u8 = 1;
pub(crate) const TOKEN: u8 = 2;
pub(crate) const DELIVER: u8 = 3;
pub(crate) const INJECT: u8 = 4;
pub(crate) const RELEASE: u8 = 5;
/// A trace workload's row `x` enters its source's send queue.
pub(crate) const TRACE: u8 = 6;
/// The node's host interface is free again: its injection FIFOs may go.
pub(crate) const WAKE: u8 = 7;

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

#[derive(Clone, Copy, Debug)]
pub(crate) struct Ev {
    pub kind: u8,
    pub a: u8,
    pub b: u8,
    pub router: u32,
    pub x: u32,
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

pub struct Engine<W> {
    pub(crate) routing: Arc<Routing>,
    pub(crate) params: RouterParams,
    pub(crate) mode: RoutingMode,
    pub(crate) run: RunParams,
    pub(crate) workload: W,
    pub(crate) lay: Layout,
    /// Nodes (`routers × nodes_per_router`); packets carry node ids.
    pub(crate) nodes: usize,
    /// Cycles per byte of each output port index (all 1: no scaling).
    pub(crate) wire_scale: Vec<f64>,
    /// Chunks of a full-sized packet; tokens of a VC; chunks of a FIFO.
    pub(crate) full: u16,
    pub(crate) cap: u16,
    pub(crate) fifo_cap: u16,
    /// Node injection capacity in link units (bytes per cycle).
    pub(crate) injection_links: f64,
    pub(crate) cycle_ns: f64,

    pub(crate) pool: Pool,
    pub(crate) wheel: TimeWheel<Ev>,
    pub(crate) q_head: Vec<u32>,
    pub(crate) q_tail: Vec<u32>,
    /// Chunks held in each queue (packets waiting and tails still leaving).
    pub(crate) q_used: Vec<u16>,
    /// Outputs the head packet of each queue could use (bit per port;
    /// `HEAD_EJECTS` at its destination), so arbitration skips heads whose
    /// outputs are all busy without touching the packet.
    pub(crate) q_cand: Vec<u64>,
    /// Per router and output (then one entry for heads at their
    /// destination): the queues whose head could use it. Arbitration ORs
    /// the entries of the free outputs instead of visiting every queue.
    pub(crate) want: Vec<QueueSet>,
    pub(crate) out_free_at: Vec<u64>,
    pub(crate) out_tokens: Vec<u16>,
    pub(crate) paths_used: Vec<u8>,
    pub(crate) recv_free_at: Vec<u64>,
    /// Per node, when its host interface can start the next injection
    /// (fractional cycles: the interface may be faster than a link).
    pub(crate) host_free_at: Vec<f64>,
    pub(crate) rngs: Vec<rand_pcg::Pcg32>,
    pub(crate) dirty: Vec<bool>,
    pub(crate) dirty_list: Vec<u32>,
    /// Send lanes per node (the workload's software send queues).
    pub(crate) lanes: usize,
    /// Per (node, lane): the software send queue, and the finite generator's
    /// next and total packet counts.
    pub(crate) src_head: Vec<u32>,
    pub(crate) src_tail: Vec<u32>,
    pub(crate) gen_next: Vec<u64>,
    pub(crate) gen_total: Vec<u64>,
    pub(crate) fifo_rr: Vec<u8>,
    pub(crate) counters: Vec<PortCounters>,
    pub(crate) depleted_since: Vec<u64>,
    pub(crate) token_at: Vec<u64>,
    pub(crate) requests: Vec<crate::router::Request>,
    pub(crate) new_packets: Vec<NewPacket>,

    // statistics
    pub(crate) hist: Histogram,
    /// Closed time-series windows (this partition's share).
    pub(crate) samples: Vec<SampleSums>,
    pub(crate) next_sample: u64,
    pub(crate) next_counter: u64,
    pub(crate) vc_hops: Vec<u64>,
    pub(crate) created: u64,
    pub(crate) delivered: u64,
    /// Broadcast copies left at the nodes a deposit packet passed.
    pub(crate) deposits: u64,
    /// Trace rows not yet entered.
    pub(crate) trace_pending: u64,
    /// Per node: when its answering thread is free again.
    pub(crate) turn_free_at: Vec<u64>,
    /// Per-port counter snapshots `(cycle, router·ports + port, counters)`.
    pub(crate) counter_snapshots: Vec<(u64, u32, PortCounters)>,
    /// Per node: the number of the next packet it creates.
    pub(crate) node_serial: Vec<u32>,
    pub(crate) busy_measured: u64,
    pub(crate) payload_measured: u64,
    pub(crate) delivered_bytes_measured: u64,
    pub(crate) token_returns: u64,
    pub(crate) unblocks: u64,
    pub(crate) win_delivered_bytes: u64,
    pub(crate) win_delivered: u64,
    pub(crate) win_busy: u64,
    pub(crate) win_tokens: u64,
    pub(crate) win_unblocks: u64,
    pub(crate) last_progress: u64,
    /// Packets created but held by the node's software until a later
    /// cycle (RELEASE events pending): live, but not in the network.
    pub(crate) pending_releases: u64,
    pub(crate) events: u64,
    pub(crate) directed_links: u64,
    pub(crate) gen_remaining: u64,
    pub(crate) planted_done: bool,
    /// A planted token leak waiting for the end of its cycle: the lowest
    /// (output, VC) index that received tokens at router 0 in it.
    pub(crate) leak_at: Option<usize>,
    pub(crate) error: Option<InvariantError>,
    /// The cycle of the last delivery (a finite workload completes then).
    pub(crate) last_delivery: Option<u64>,

    // partitions
    /// The partition of each router (all 0 when the run is not split).
    pub(crate) owner: Arc<[u16]>,
    /// This engine's partition.
    pub(crate) me: u16,
    /// Encoded events for each partition: packets arriving at, and tokens
    /// returning to, routers of other partitions ([`crate::wire`]).
    pub(crate) outbox: Vec<Vec<u8>>,
    /// Packets handed to other partitions in the current window, and the
    /// earliest cycle of anything mailed in it (`u64::MAX`: nothing).
    pub(crate) moved_out: u64,
    pub(crate) mailed_min: u64,
    /// Node actions waiting for their router's arbitration: the first of
    /// each router's list, the actions, and a scratch list to order them.
    pub(crate) act_head: Vec<u32>,
    pub(crate) acts: Vec<Action>,
    pub(crate) act_order: Vec<(u64, u32)>,
    /// UGAL-G: the occupancy (chunks) of every router's output queues as
    /// they stood at the start of the window (global links only; empty in
    /// other modes).
    pub(crate) ugal_view: Vec<u32>,
}

/// What a caller sees of a run in progress (for progress bars).
pub type Progress<'a> = &'a mut dyn FnMut(f64);

impl<W: Traffic> Engine<W> {
    /// `injection_links`: the node's injection capacity in bytes per cycle
    /// (e.g. 6 on BG/L, where a node can feed all six links at once);
    /// `cycle_ns`: the length of one cycle.
    pub fn new(
        routing: Routing,
        params: RouterParams,
        mode: RoutingMode,
        run: RunParams,
        workload: W,
        injection_links: f64,
        cycle_ns: f64,
    ) -> Self {
        Self::build(Arc::new(routing), params, mode, run, workload, injection_links, cycle_ns)
    }

    /// A fresh engine with the same network, parameters and workload, for
    /// partition `me` of `owner` (before either has run).
    pub(crate) fn partition(&self, owner: Arc<[u16]>, me: u16) -> Self {
        let mut e = Self::build(
            Arc::clone(&self.routing),
            self.params.clone(),
            self.mode,
            self.run.clone(),
            self.workload.clone(),
            self.injection_links,
            self.cycle_ns,
        );
        e.set_partition(owner, me);
        e
    }

    pub(crate) fn set_partition(&mut self, owner: Arc<[u16]>, me: u16) {
        let parts = owner.iter().copied().max().unwrap_or(0) as usize + 1;
        self.outbox = vec![Vec::new(); parts.max(me as usize + 1)];
        self.owner = owner;
        self.me = me;
        // Only this partition's nodes generate here.
        self.gen_remaining = (0..self.nodes * self.lanes)
            .filter(|&i| self.owns_node((i / self.lanes) as u32))
            .map(|i| self.gen_total[i])
            .sum();
    }

    /// Routers in the network.
    pub fn routers(&self) -> usize {
        self.lay.routers
    }

    #[inline]
    pub(crate) fn owns(&self, r: u32) -> bool {
        self.owner[r as usize] == self.me
    }

    /// Whether node `n`'s router belongs to this partition.
    #[inline]
    pub(crate) fn owns_node(&self, n: u32) -> bool {
        self.owns(self.router_of(n))
    }

    fn build(
        routing: Arc<Routing>,
        params: RouterParams,
        mode: RoutingMode,
        run: RunParams,
        workload: W,
        injection_links: f64,
        cycle_ns: f64,
    ) -> Self {
        let routers = routing.routers();
        let ports = routing.ports();
        let vcs = params.vcs() as usize;
        let npr = params.nodes_per_router.max(1) as usize;
        let nodes = routers * npr;
        let fifos_per_node = (params.injection_fifos + params.priority_fifos) as usize;
        let fifos = npr * fifos_per_node;
        let lay = Layout {
            routers,
            ports,
            vcs,
            queues: params.queues(ports),
            units: ports + fifos,
            dynamic: params.dynamic_vcs as usize,
            esc: params.dynamic_vcs as usize,
            esc_count: params.escape.vcs() as usize,
            hp: params.priority_vc.then_some(vcs - 1),
            npr,
            fifos_per_node: fifos_per_node.max(1),
        };
        assert!(
            lay.queues <= MAX_QUEUES && ports <= MAX_PORTS && lay.units <= 255,
            "at most {MAX_QUEUES} queues and {MAX_PORTS} ports per router"
        );
        let mut wire_scale = params.port_cycles_per_byte.clone();
        if wire_scale.iter().all(|&x| x == 1.0) {
            wire_scale.clear();
        } else {
            assert!(
                wire_scale.len() == ports && wire_scale.iter().all(|&x| x >= 1.0),
                "one rate per port, none faster than the reference link"
            );
        }
        let full = params.full_chunks() as u16;
        let cap = params.vc_tokens() as u16;
        let fifo_cap = (params.injection_fifo_bytes / params.chunk_bytes) as u16;
        let mut out_tokens = vec![0u16; routers * ports * vcs];
        let mut directed_links = 0;
        for r in 0..routers {
            for o in 0..ports {
                if routing.neighbor(r as u32, o as u8).is_some() {
                    directed_links += 1;
                    for v in 0..vcs {
                        out_tokens[(r * ports + o) * vcs + v] = cap;
                    }
                }
            }
        }
        let seed = run.seed;
        let rngs = (0..routers)
            .map(|r| {
                rand_pcg::Pcg32::seed_from_u64(
                    seed.wrapping_mul(0x9e3779b97f4a7c15)
                        ^ (r as u64).wrapping_mul(0xd1b54a32d192ed03),
                )
            })
            .collect();
        let horizon = (params.max_packet_bytes
            + params.overhead_bytes
            + params.hop_latency_cycles
            + params.token_latency_cycles) as u64
            * 4;
        let lanes = workload.lanes();
        let gen_total: Vec<u64> = (0..nodes * lanes)
            .map(|i| {
                if workload.is_finite() {
                    workload.initial_packets((i / lanes) as u32, i % lanes)
                } else {
                    0
                }
            })
            .collect();
        let gen_remaining = gen_total.iter().sum();
        Self {
            routing,
            mode,
            lay,
            nodes,
            wire_scale,
            full,
            cap,
            fifo_cap,
            injection_links,
            cycle_ns,
            pool: Pool::default(),
            wheel: TimeWheel::new(horizon.max(1024)),
            q_head: vec![NONE; routers * lay.queues],
            q_tail: vec![NONE; routers * lay.queues],
            q_used: vec![0; routers * lay.queues],
            q_cand: vec![0; routers * lay.queues],
            want: vec![0; routers * (lay.ports + 1)],
            out_free_at: vec![0; routers * ports],
            out_tokens,
            paths_used: vec![0; routers * lay.units],
            recv_free_at: vec![0; routers * ports],
            host_free_at: vec![0.0; nodes],
            rngs,
            dirty: vec![false; routers],
            dirty_list: Vec::with_capacity(routers),
            lanes,
            src_head: vec![NONE; nodes * lanes],
            src_tail: vec![NONE; nodes * lanes],
            gen_next: vec![0; nodes * lanes],
            gen_total,
            fifo_rr: vec![0; nodes * lanes],
            counters: vec![PortCounters::default(); routers * ports],
            depleted_since: vec![u64::MAX; routers * ports],
            token_at: vec![u64::MAX; routers * ports],
            requests: Vec::with_capacity(64),
            new_packets: Vec::new(),
            hist: Histogram::default(),
            samples: Vec::new(),
            next_sample: run.sample_cycles.max(1),
            next_counter: if run.counter_cycles > 0 { run.counter_cycles } else { u64::MAX },
            vc_hops: vec![0; vcs],
            created: 0,
            delivered: 0,
            deposits: 0,
            trace_pending: 0,
            turn_free_at: vec![0; nodes],
            counter_snapshots: Vec::new(),
            node_serial: vec![0; nodes],
            busy_measured: 0,
            payload_measured: 0,
            delivered_bytes_measured: 0,
            token_returns: 0,
            unblocks: 0,
            win_delivered_bytes: 0,
            win_delivered: 0,
            win_busy: 0,
            win_tokens: 0,
            win_unblocks: 0,
            last_progress: 0,
            pending_releases: 0,
            events: 0,
            directed_links,
            gen_remaining,
            planted_done: false,
            leak_at: None,
            error: None,
            last_delivery: None,
            owner: vec![0u16; routers].into(),
            me: 0,
            outbox: vec![Vec::new()],
            moved_out: 0,
            mailed_min: u64::MAX,
            act_head: vec![NONE; routers],
            acts: Vec::new(),
            act_order: Vec::new(),
            ugal_view: Vec::new(),
            params,
            run,
            workload,
        }
    }

    #[inline]
    pub(crate) fn mark_dirty(&mut self, r: u32) {
        if !self.dirty[r as usize] {
            self.dirty[r as usize] = true;
            self.dirty_list.push(r);
        }
    }

    /// Cycles a packet of `bytes` occupies a link (reference rate).
    #[inline]
    pub(crate) fn wire_cycles(&self, bytes: u16) -> u64 {
        bytes as u64 + self.params.overhead_bytes as u64
    }

    /// Cycles a packet of `bytes` occupies the link out of `port`.
    #[inline]
    pub(crate) fn port_wire_cycles(&self, bytes: u16, port: usize) -> u64 {
        let w = self.wire_cycles(bytes);
        match self.wire_scale.get(port) {
            Some(&s) => (w as f64 * s).ceil() as u64,
            None => w,
        }
    }

    /// The router node `node` is attached to.
    #[inline]
    pub(crate) fn router_of(&self, node: u32) -> u32 {
        if self.lay.npr == 1 {
            node
        } else {
            node / self.lay.npr as u32
        }
    }

    /// Flow-control chunks of a packet of `bytes` (the router model's chunk size).
    #[inline]
    pub(crate) fn chunks(&self, bytes: u16) -> u16 {
        bytes.div_ceil(self.params.chunk_bytes as u16)
    }

    // ---- queues -------------------------------------------------------

    /// Computes and caches the packet's route at router `r`.
    #[inline]
    pub(crate) fn cache_route(&mut self, r: u32, pkt: u32) {
        let (dst, hints) = {
            let p = self.pool.get(pkt);
            (self.router_of(p.dst), self.routing.advance(r, p.hints))
        };
        let (mask, esc) = if dst == r {
            (0, AT_DESTINATION)
        } else {
            (
                self.routing.adaptive_ports(r, dst, hints),
                self.routing
                    .escape_port(r, dst, hints)
                    .expect("a route exists away from the destination"),
            )
        };
        let p = self.pool.get_mut(pkt);
        p.hints = hints;
        p.route_mask = mask;
        p.route_escape = esc;
    }

    #[inline]
    pub(crate) fn head_candidates(&self, pkt: u32) -> u64 {
        let p = self.pool.get(pkt);
        if p.route_escape == AT_DESTINATION {
            HEAD_EJECTS
        } else if self.mode == RoutingMode::Adaptive
            && p.flags & flags::PRIORITY == 0
            && self.lay.dynamic > 0
        {
            p.route_mask as u64 | 1 << p.route_escape
        } else {
            1 << p.route_escape
        }
    }

    #[inline]
    pub(crate) fn push_queue(&mut self, qi: usize, pkt: u32) {
        if self.q_tail[qi] == NONE {
            let cand = self.head_candidates(pkt);
            self.set_head_candidates(qi, cand);
        }
        list_push(
            &mut self.pool,
            &mut self.q_head[qi],
            &mut self.q_tail[qi],
            pkt,
        );
    }

    #[inline]
    pub(crate) fn pop_queue(&mut self, qi: usize) -> u32 {
        let h = list_pop(&self.pool, &mut self.q_head[qi], &mut self.q_tail[qi]);
        let next = self.q_head[qi];
        let cand = if next == NONE {
            0
        } else {
            self.head_candidates(next)
        };
        self.set_head_candidates(qi, cand);
        h
    }

    /// Records the outputs the new head of queue `qi` could use, in
    /// `q_cand` and in the router's per-output `want` masks.
    #[inline]
    fn set_head_candidates(&mut self, qi: usize, cand: u64) {
        let (r, q) = (qi / self.lay.queues, qi % self.lay.queues);
        let wbase = r * (self.lay.ports + 1);
        let bit: QueueSet = 1 << q;
        let old = std::mem::replace(&mut self.q_cand[qi], cand);
        let mut m = old ^ cand;
        while m != 0 {
            let b = m.trailing_zeros();
            m &= m - 1;
            let w = if 1 << b == HEAD_EJECTS {
                self.lay.ports
            } else {
                b as usize
            };
            self.want[wbase + w] ^= bit;
        }
    }

    pub(crate) fn push_source(&mut self, node: usize, lane: usize, pkt: u32) {
        let i = node * self.lanes + lane;
        list_push(
            &mut self.pool,
            &mut self.src_head[i],
            &mut self.src_tail[i],
            pkt,
        );
    }

    /// Route state of a new packet. Dragonfly UGAL and adaptive modes
    /// choose here between the minimal route and a Valiant one, from the
    /// occupancy of the buffers the two would enter (DOMAIN.md §6.2):
    /// - UGAL-L: the source router's output queues, weighted by hops
    ///   (minimal if q_min·H_min ≤ q_nm·H_nm);
    /// - UGAL-G: the queues of the global links the two routes would take;
    /// - adaptive prefer-minimal: as UGAL-L with the non-minimal side
    ///   counted double (minimal unless clearly congested).
    fn initial_route(&mut self, r: u32, dst: u32) -> u8 {
        use tofusim_routing::{DragonflyMode, Routing};
        let hints = self.routing.init(r, dst, &mut self.rngs[r as usize]);
        let Routing::Dragonfly(d) = &*self.routing else {
            return hints;
        };
        let mode = d.mode;
        if matches!(mode, DragonflyMode::Minimal | DragonflyMode::Valiant) || r == dst {
            return hints;
        }
        let mh = d.minimal_hints(r, dst);
        let vh = d.valiant_hints(r, dst, &mut self.rngs[r as usize]);
        if vh == 0 || vh == mh {
            return mh;
        }
        let lay = self.lay;
        let occupancy = |s: &Self, router: u32, port: u8| -> u64 {
            let base = (router as usize * lay.ports + port as usize) * lay.vcs;
            (0..lay.vcs)
                .map(|v| (s.cap - s.out_tokens[base + v].min(s.cap)) as u64)
                .sum()
        };
        let (h_min, h_nm) = (d.route_hops(r, dst, mh) as u64, d.route_hops(r, dst, vh) as u64);
        let (q_min, q_nm) = match mode {
            DragonflyMode::UgalGlobal => {
                // The global links' queues as they stood at the start of
                // the window (`ugal_view`): remote state cannot be read now.
                let view = |hop: Option<(u32, u8)>| {
                    hop.map_or(0, |(g, p)| self.ugal_view[g as usize * lay.ports + p as usize] as u64)
                };
                (view(d.global_hop(r, dst, mh)), view(d.global_hop(r, dst, vh)))
            }
            _ => {
                let pm = d.next_port(r, dst, mh).expect("not at the destination");
                let pn = d.next_port(r, dst, vh).expect("not at the destination");
                (occupancy(self, r, pm), occupancy(self, r, pn))
            }
        };
        let bias = if mode == DragonflyMode::AdaptivePreferMinimal { 2 } else { 1 };
        if q_min * h_min <= bias * q_nm * h_nm {
            mh
        } else {
            vh
        }
    }

    /// Whether routes are chosen from the network's load (the adaptive
    /// dragonfly modes): such a choice belongs to the moment the packet
    /// reaches the source router, not to when its message was posted —
    /// a message posted behind thousands of others would otherwise choose
    /// from the queues of long ago (all empty for an all-to-all posted at
    /// once).
    fn routes_by_load(&self) -> bool {
        use tofusim_routing::{DragonflyMode, Routing};
        matches!(&*self.routing, Routing::Dragonfly(d)
            if matches!(d.mode, DragonflyMode::UgalLocal | DragonflyMode::UgalGlobal | DragonflyMode::AdaptivePreferMinimal))
    }

    /// Creates a packet at node `r`. A packet routed by load gets its route
    /// when it enters an injection FIFO ([`Self::route_at_entry`]).
    pub(crate) fn create(&mut self, r: u32, t: u64, np: NewPacket) -> u32 {
        let at_entry = np.hints.is_none() && self.routes_by_load();
        let hints = match np.hints {
            Some(h) => h,
            None if at_entry => 0,
            None => self.initial_route(self.router_of(r), self.router_of(np.dst)),
        };
        let serial = self.node_serial[r as usize];
        self.node_serial[r as usize] = serial.wrapping_add(1);
        self.created += 1;
        let mut f = flags::LIVE;
        if t >= self.run.warmup {
            f |= flags::MEASURED;
        }
        if np.deposit {
            f |= flags::DEPOSIT;
        }
        if at_entry {
            f |= flags::ROUTE_AT_ENTRY;
        }
        self.pool.alloc(Packet {
            next: NONE,
            src: r,
            dst: np.dst,
            serial,
            created: t,
            tag: np.tag,
            checksum: checksum(serial, r, np.dst, np.tag, np.payload),
            bytes: np.bytes,
            payload: np.payload,
            hops: 0,
            hints,
            vc: 0,
            input: 0,
            charged: 0,
            flags: f,
            route_mask: 0,
            route_escape: 0,
        })
    }

    /// Moves new packets from the node's software queues (and its finite
    /// generator) into injection FIFOs with room, lane by lane.
    pub(crate) fn fill_fifos(&mut self, r: usize, t: u64) {
        if self.params.injection_fifos == 0 {
            return;
        }
        let npr = self.lay.npr;
        for node in r * npr..(r + 1) * npr {
            for lane in 0..self.lanes {
                self.fill_lane(node, lane, t);
            }
        }
    }

    /// The injection FIFOs of `lane`: every `lanes`-th one from `lane` (all
    /// of them with one lane; lanes share FIFOs when there are fewer FIFOs).
    fn lane_fifos(&self, lane: usize) -> (usize, usize) {
        let normal = self.params.injection_fifos as usize;
        if self.lanes > normal {
            (lane % normal, 1)
        } else {
            (lane, (normal - lane).div_ceil(self.lanes))
        }
    }

    fn fill_lane(&mut self, node: usize, lane: usize, t: u64) {
        let lay = self.lay;
        let r = self.router_of(node as u32) as usize;
        // The node's FIFOs follow those of the nodes before it on the router.
        let unit0 = lay.ports + (node % lay.npr) * lay.fifos_per_node;
        let normal = self.params.injection_fifos as usize;
        let li = node * self.lanes + lane;
        let (first, count) = self.lane_fifos(lane);
        let step = self.lanes.min(normal);
        loop {
            // The node's own packets go first: on a plane fill each first leg
            // feeds corner turns elsewhere, so sending them early keeps every
            // link supplied (turns first starves one axis, then the other).
            let from_source = self.gen_next[li] >= self.gen_total[li];
            if from_source && self.src_head[li] == NONE {
                return;
            }
            if from_source && self.params.fifo_select == crate::config::FifoSelect::Direction {
                // The FIFO follows the route's first direction: choose it now.
                self.route_at_entry(r as u32, self.src_head[li]);
            }
            let (bytes, dst, hints) = if from_source {
                let p = self.pool.get(self.src_head[li]);
                (p.bytes, p.dst, p.hints)
            } else {
                let np = self
                    .workload
                    .finite_packet(node as u32, lane, self.gen_next[li]);
                (np.bytes, np.dst, 0)
            };
            let need = self.chunks(bytes);
            let room = |s: &Self, f: usize| {
                s.fifo_cap - s.q_used[r * lay.queues + lay.queue_of(unit0 + f, 0)] >= need
            };
            let fifo = match self.params.fifo_select {
                crate::config::FifoSelect::RoundRobin => {
                    let start = self.fifo_rr[li] as usize;
                    (0..count)
                        .map(|k| first + ((start + k) % count) * step)
                        .find(|&f| room(self, f))
                }
                crate::config::FifoSelect::Direction => {
                    let port = if from_source {
                        let dst_router = self.router_of(dst);
                        self.routing.escape_port(r as u32, dst_router, hints).unwrap_or(0) as usize
                    } else {
                        dst as usize
                    };
                    let f = first + (port % count) * step;
                    room(self, f).then_some(f)
                }
            };
            let Some(f) = fifo else { return };
            self.fifo_rr[li] = (((f - first) / step + 1) % count) as u8;
            let pkt = if from_source {
                list_pop(&self.pool, &mut self.src_head[li], &mut self.src_tail[li])
            } else {
                let np = self
                    .workload
                    .finite_packet(node as u32, lane, self.gen_next[li]);
                self.gen_next[li] += 1;
                self.gen_remaining -= 1;
                self.create(node as u32, t, np)
            };
            self.route_at_entry(r as u32, pkt);
            let unit = unit0 + f;
            let qi = r * lay.queues + lay.queue_of(unit, 0);
            {
                let p = self.pool.get_mut(pkt);
                p.input = unit as u8;
                p.vc = f as u8;
                p.charged = need as u8;
            }
            self.q_used[qi] += need;
            self.cache_route(r as u32, pkt);
            self.push_queue(qi, pkt);
        }
    }

    /// Chooses the route of a packet routed by load as it enters an
    /// injection FIFO of its source router `r`.
    fn route_at_entry(&mut self, r: u32, pkt: u32) {
        let (flags_now, dst) = {
            let p = self.pool.get(pkt);
            (p.flags, p.dst)
        };
        if flags_now & flags::ROUTE_AT_ENTRY == 0 {
            return;
        }
        let hints = self.initial_route(r, self.router_of(dst));
        let p = self.pool.get_mut(pkt);
        p.hints = hints;
        p.flags &= !flags::ROUTE_AT_ENTRY;
    }

    // ---- events -------------------------------------------------------

    /// Every router touched this cycle runs its node actions, then
    /// arbitrates.
    pub(crate) fn process_dirty(&mut self, t: u64) {
        if let Some(i) = self.leak_at.take() {
            self.out_tokens[i] -= 1;
            self.planted_done = true;
        }
        let mut list = std::mem::take(&mut self.dirty_list);
        for i in 0..list.len() {
            if let Some(&ahead) = list.get(i + PREFETCH_ROUTERS) {
                self.prefetch_router(ahead as usize);
            }
            let r = list[i] as usize;
            // Actions may mark their own router again: it is still marked,
            // so nothing is added to the list.
            self.run_actions(r, t);
            self.dirty[r] = false;
            self.arbitrate(r, t);
        }
        // Arbitration schedules only future events, so it marks no router:
        // the list can be reused as it is.
        debug_assert!(self.dirty_list.is_empty());
        list.clear();
        self.dirty_list = list;
        self.acts.clear();
    }

    /// Asks for the cache lines an event will touch: its packet and its
    /// router's queue state.
    #[inline]
    pub(crate) fn prefetch_event(&self, ev: Ev) {
        let lay = self.lay;
        let r = ev.router as usize;
        if matches!(ev.kind, ARRIVE | DELIVER) {
            self.pool.prefetch(ev.x);
        }
        let qi = r * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
        prefetch::line(&self.q_used, qi);
        prefetch::line(&self.q_tail, qi);
        prefetch::line(&self.dirty, r);
        if ev.kind == TOKEN {
            prefetch::line(&self.out_tokens, (r * lay.ports + ev.a as usize) * lay.vcs);
        }
    }

    /// Asks for the cache lines an arbitration at router `r` reads.
    #[inline]
    fn prefetch_router(&self, r: usize) {
        let lay = self.lay;
        let base = r * lay.queues;
        prefetch::line(&self.want, r * (lay.ports + 1));
        for k in (0..lay.queues).step_by(16) {
            prefetch::line(&self.q_head, base + k);
        }
        prefetch::line(&self.q_used, base);
        prefetch::line(&self.out_free_at, r * lay.ports);
        prefetch::line(&self.out_tokens, r * lay.ports * lay.vcs);
        prefetch::line(&self.paths_used, r * lay.units);
        prefetch::line(&self.rngs, r);
        let first = r * self.lay.npr * self.lanes;
        prefetch::line(&self.gen_next, first);
        prefetch::line(&self.gen_total, first);
        prefetch::line(&self.src_head, first);
    }
}
