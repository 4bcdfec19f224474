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
//! Each cycle, the events due are applied (each touches only its router),
//! then every router they touched arbitrates once ([`crate::router`]).
//! Arbitration changes only its own router and schedules events at least
//! one cycle ahead, so the outcome does not depend on the order in which
//! routers are visited: every router draws from its own seeded generator.
//! This is what lets the network be split into partitions later.

use crate::config::{Escape, PlantedFault, RouterParams, RoutingMode, RunParams};
use crate::packet::{checksum, flags, list_pop, list_push, Packet, Pool, AT_DESTINATION, NONE};
use crate::prefetch;
use crate::result::{BlockedVc, Deadlock, InvariantError, RunResult};
use crate::stats::{Histogram, PortCounters, Sample};
use rand::{RngExt, SeedableRng};
use tofusim_des::TimeWheel;
use tofusim_routing::Routing;
use tofusim_workload::{NewPacket, Workload, CHUNK_BYTES};

/// How far ahead in a cycle's events, and in its list of routers to
/// arbitrate, the engine prefetches state.
const PREFETCH_EVENTS: usize = 8;
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

pub struct Engine {
    pub(crate) routing: Routing,
    pub(crate) params: RouterParams,
    pub(crate) mode: RoutingMode,
    pub(crate) run: RunParams,
    pub(crate) workload: Workload,
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
    pub(crate) samples: Vec<Sample>,
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
    pub(crate) serial: u32,
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
    pending_releases: u64,
    pub(crate) events: u64,
    pub(crate) directed_links: u64,
    pub(crate) gen_remaining: u64,
    pub(crate) planted_done: bool,
    pub(crate) error: Option<InvariantError>,
}

/// What a caller sees of a run in progress (for progress bars).
pub type Progress<'a> = &'a mut dyn FnMut(f64);

impl Engine {
    /// `injection_links`: the node's injection capacity in bytes per cycle
    /// (e.g. 6 on BG/L, where a node can feed all six links at once);
    /// `cycle_ns`: the length of one cycle.
    pub fn new(
        routing: Routing,
        params: RouterParams,
        mode: RoutingMode,
        run: RunParams,
        workload: Workload,
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
            vc_hops: vec![0; vcs],
            created: 0,
            delivered: 0,
            deposits: 0,
            trace_pending: 0,
            turn_free_at: vec![0; nodes],
            counter_snapshots: Vec::new(),
            serial: 0,
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
            error: None,
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

    #[inline]
    pub(crate) fn chunks(bytes: u16) -> u16 {
        bytes.div_ceil(CHUNK_BYTES as u16)
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
    fn head_candidates(&self, pkt: u32) -> u64 {
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

    fn push_source(&mut self, node: usize, lane: usize, pkt: u32) {
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
        let Routing::Dragonfly(d) = &self.routing else {
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
                let (gm, pm) = d.global_hop(r, dst, mh).unwrap_or((r, 0));
                let (gn, pn) = d.global_hop(r, dst, vh).unwrap_or((r, 0));
                (occupancy(self, gm, pm), occupancy(self, gn, pn))
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

    /// Creates a packet at node `r`.
    pub(crate) fn create(&mut self, r: u32, t: u64, np: NewPacket) -> u32 {
        let hints = match np.hints {
            Some(h) => h,
            None => self.initial_route(self.router_of(r), self.router_of(np.dst)),
        };
        let serial = self.serial;
        self.serial = self.serial.wrapping_add(1);
        self.created += 1;
        let mut f = flags::LIVE;
        if t >= self.run.warmup {
            f |= flags::MEASURED;
        }
        if np.deposit {
            f |= flags::DEPOSIT;
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
            let (bytes, dst, hints) = if from_source {
                let p = self.pool.get(self.src_head[li]);
                (p.bytes, p.dst, p.hints)
            } else {
                let np = self
                    .workload
                    .finite_packet(node as u32, lane, self.gen_next[li]);
                (np.bytes, np.dst, 0)
            };
            let need = Self::chunks(bytes);
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

    // ---- events -------------------------------------------------------

    fn apply(&mut self, ev: Ev, t: u64) {
        let r = ev.router as usize;
        let lay = self.lay;
        match ev.kind {
            ARRIVE => {
                let qi = r * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
                let charged = self.pool.get(ev.x).charged as u16;
                self.q_used[qi] += charged;
                self.cache_route(ev.router, ev.x);
                self.push_queue(qi, ev.x);
                let p = self.pool.get(ev.x);
                if p.flags & flags::DEPOSIT != 0 && self.router_of(p.dst) != ev.router {
                    // The copy is complete in the reception FIFO when the tail
                    // is in (deposits: one node per router).
                    let (tag, bytes) = (p.tag, p.bytes);
                    self.deposits += 1;
                    let node = ev.router * lay.npr as u32;
                    self.respond(node, t, t + self.wire_cycles(bytes), tag);
                }
                self.mark_dirty(ev.router);
            }
            // RELEASE, WAKE, TRACE and INJECT address a node.
            RELEASE => {
                self.push_source(r, ev.a as usize, ev.x);
                self.pending_releases -= 1;
                // The software handing over a packet is progress: the
                // stall clock restarts for it.
                self.last_progress = t;
                self.mark_dirty(self.router_of(ev.router));
            }
            WAKE => self.mark_dirty(self.router_of(ev.router)),
            TRACE => {
                let np = self.workload.trace_packet(ev.x as usize);
                let pkt = self.create(ev.router, t, np);
                self.push_source(r, 0, pkt);
                self.trace_pending -= 1;
                self.mark_dirty(self.router_of(ev.router));
            }
            DONE => {
                let unit = ev.a as usize;
                self.paths_used[r * lay.units + unit] -= 1;
                let qi = r * lay.queues + lay.queue_of(unit, ev.b as usize);
                self.q_used[qi] -= ev.x as u16;
                if unit < lay.ports {
                    self.return_tokens(ev.router, ev.a, ev.b, ev.x, t);
                }
                self.mark_dirty(ev.router);
            }
            TOKEN => {
                let oi = r * lay.ports + ev.a as usize;
                let mut chunks = ev.x as u16;
                if self.run.plant == Some(PlantedFault::LeakToken)
                    && !self.planted_done
                    && t >= self.run.plant_after
                {
                    self.planted_done = true;
                    chunks -= 1;
                }
                self.out_tokens[oi * lay.vcs + ev.b as usize] += chunks;
                self.token_returns += 1;
                self.win_tokens += 1;
                self.token_at[oi] = t;
                // Tokens can only unblock a head that was refused for lack of
                // them at this output (heads waiting for a busy link or path
                // are woken by the DONE that frees it).
                if self.depleted_since[oi] != u64::MAX {
                    self.mark_dirty(ev.router);
                }
            }
            DELIVER => self.deliver(ev, t),
            INJECT => {
                let home = self.router_of(ev.router) as usize;
                let rng = &mut self.rngs[home];
                if let Some(dst) = self.workload.open_destination(ev.router, rng) {
                    let bytes = self.workload.open_packet_bytes(rng) as u16;
                    let np = NewPacket {
                        dst,
                        bytes,
                        payload: bytes.saturating_sub(self.workload.header_bytes as u16),
                        tag: 0,
                        hints: None,
                        deposit: false,
                        lane: 0,
                        release_cycle: 0,
                    };
                    let pkt = self.create(ev.router, t, np);
                    self.push_source(r, 0, pkt);
                }
                self.schedule_injection(ev.router, t);
                self.mark_dirty(self.router_of(ev.router));
            }
            _ => unreachable!("unknown event kind"),
        }
    }

    /// Schedules the token return for a tail that left input `port` (VC `vc`) of `r`.
    pub(crate) fn return_tokens(&mut self, r: u32, port: u8, vc: u8, chunks: u32, t: u64) {
        if let Some((up, up_port)) = self.routing.upstream(r, port) {
            self.wheel.schedule(
                t + self.params.token_latency_cycles as u64,
                Ev {
                    kind: TOKEN,
                    a: up_port,
                    b: vc,
                    router: up,
                    x: chunks,
                },
            );
        }
    }

    fn deliver(&mut self, ev: Ev, t: u64) {
        let r = ev.router as usize;
        let lay = self.lay;
        let p = *self.pool.get(ev.x);
        let qi = r * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
        self.q_used[qi] -= p.charged as u16;
        if (ev.a as usize) < lay.ports {
            self.return_tokens(ev.router, ev.a, ev.b, p.charged as u32, t);
        }
        if p.flags & flags::LIVE == 0 {
            self.fail(
                t,
                "duplicate-delivery",
                format!(
                    "packet {} delivered twice at router {}",
                    p.serial,
                    self.routing.router_label(ev.router)
                ),
            );
            return;
        }
        if self.router_of(p.dst) != ev.router {
            self.fail(
                t,
                "wrong-destination",
                format!(
                    "packet {} for {} delivered at {}",
                    p.serial,
                    self.routing.router_label(self.router_of(p.dst)),
                    self.routing.router_label(ev.router)
                ),
            );
        }
        if checksum(p.serial, p.src, p.dst, p.tag, p.payload) != p.checksum {
            self.fail(
                t,
                "payload-checksum",
                format!(
                    "packet {} from {} to {}: payload checksum mismatch",
                    p.serial,
                    self.routing.router_label(self.router_of(p.src)),
                    self.routing.router_label(self.router_of(p.dst))
                ),
            );
        }
        self.delivered += 1;
        self.last_progress = t;
        if p.flags & flags::MEASURED != 0 {
            self.hist.add(t - p.created);
        }
        if t >= self.run.warmup {
            self.delivered_bytes_measured += p.bytes as u64;
        }
        self.win_delivered_bytes += p.bytes as u64;
        self.win_delivered += 1;
        self.pool.release(ev.x);
        if self.workload.is_finite() {
            self.respond(p.dst, t, t, p.tag);
        }
        self.mark_dirty(ev.router);
    }

    /// The node's software answers a packet fully received at cycle
    /// `ready` (a delivery, or a broadcast deposit): the packets the workload
    /// asks for join the send queue `turn_cycles` later. The answering
    /// thread handles one received packet at a time, so answers queue up
    /// when packets arrive faster than one per `turn_cycles`.
    fn respond(&mut self, r: u32, t: u64, ready: u64, tag: u32) {
        let mut out = std::mem::take(&mut self.new_packets);
        out.clear();
        self.workload.on_delivery(r, ready, tag, &mut out);
        if out.is_empty() {
            self.new_packets = out;
            return;
        }
        // One software thread answers, one received packet at a time.
        let turn = self.workload.turn_cycles as u64;
        let at = if turn == 0 {
            ready
        } else {
            ready.max(self.turn_free_at[r as usize]) + turn
        };
        if turn > 0 {
            self.turn_free_at[r as usize] = at;
        }
        for np in out.iter().copied() {
            self.hand_over(r, t, at.max(np.release_cycle), np);
        }
        self.new_packets = out;
    }

    /// Node `r`'s software hands packet `np` to its send lane at cycle
    /// `at`: now if `at` ≤ `t`, else by a `RELEASE` event.
    fn hand_over(&mut self, r: u32, t: u64, at: u64, np: NewPacket) {
        let pkt = self.create(r, at, np);
        let lane = np.lane as usize % self.lanes;
        if at <= t {
            self.push_source(r as usize, lane, pkt);
            self.mark_dirty(self.router_of(r));
        } else {
            self.pending_releases += 1;
            self.wheel.schedule(
                at,
                Ev {
                    kind: RELEASE,
                    a: lane as u8,
                    b: 0,
                    router: r,
                    x: pkt,
                },
            );
        }
    }

    /// A collective schedule's first packets, each released at its cycle.
    fn start_schedule(&mut self) {
        let mut first = Vec::new();
        self.workload.start_packets(&mut first);
        for (r, np) in first {
            self.hand_over(r, 0, np.release_cycle, np);
        }
    }

    pub(crate) fn fail(&mut self, t: u64, kind: &'static str, detail: String) {
        if self.error.is_none() {
            self.error = Some(InvariantError {
                kind,
                cycle: t,
                detail,
            });
        }
    }

    fn schedule_injection(&mut self, r: u32, t: u64) {
        let Some(rate) = self.workload.packets_per_cycle(self.injection_links) else {
            return;
        };
        if rate <= 0.0 {
            return;
        }
        let gap = if rate >= 1.0 {
            1
        } else {
            let home = self.router_of(r) as usize;
            let u: f64 = self.rngs[home].random::<f64>();
            1 + ((1.0 - u).ln() / (1.0 - rate).ln()).floor() as u64
        };
        let at = t.saturating_add(gap);
        if self.run.cycles.is_none_or(|c| at < c) {
            self.wheel.schedule(
                at,
                Ev {
                    kind: INJECT,
                    a: 0,
                    b: 0,
                    router: r,
                    x: 0,
                },
            );
        }
    }

    // ---- the loop -----------------------------------------------------

    /// Runs to the end (cycles reached, or the finite workload done) and
    /// returns the results; deadlocks and invariant violations are in them.
    pub fn run(self, progress: Progress) -> RunResult {
        self.run_with(progress, |_| ()).0
    }

    /// [`Self::run`], also handing back what `inspect` reads from the
    /// workload's final state (e.g. a schedule's per-rank finish times).
    pub fn run_with<T>(
        mut self,
        progress: Progress,
        inspect: impl FnOnce(&Workload) -> T,
    ) -> (RunResult, T) {
        let wall = std::time::Instant::now();
        for node in 0..self.nodes as u32 {
            if self.workload.is_finite() {
                if (0..self.lanes).any(|l| self.gen_total[node as usize * self.lanes + l] > 0) {
                    self.mark_dirty(self.router_of(node));
                }
            } else {
                self.schedule_injection(node, 0);
            }
        }
        for (i, p) in self.workload.trace().iter().enumerate() {
            if self.run.cycles.is_none_or(|c| p.cycle < c) {
                self.wheel.schedule(
                    p.cycle,
                    Ev {
                        kind: TRACE,
                        a: 0,
                        b: 0,
                        router: p.src,
                        x: i as u32,
                    },
                );
                self.trace_pending += 1;
            }
        }
        let end = self.run.cycles.unwrap_or(u64::MAX);
        let mut buf: Vec<Ev> = Vec::with_capacity(1024);
        let mut t = 0u64;
        let mut next_sample = self.run.sample_cycles.max(1);
        let mut next_counter = if self.run.counter_cycles > 0 {
            self.run.counter_cycles
        } else {
            u64::MAX
        };
        let mut next_audit = if self.run.audit_cycles > 0 {
            self.run.audit_cycles
        } else {
            u64::MAX
        };
        let mut deadlock = None;
        let mut completion = None;
        let mut iter = 0u64;
        let mut last_report = std::time::Instant::now();
        self.start_schedule();
        self.process_dirty(0);
        loop {
            if self.workload.is_finite()
                && self.gen_remaining == 0
                && self.trace_pending == 0
                && self.pool.live() == 0
            {
                completion = Some(t);
                break;
            }
            let Some(now) = self.wheel.drain_next(end.saturating_sub(1), &mut buf) else {
                if self.wheel.is_empty() && self.pool.live() > 0 {
                    // Nothing can ever happen again, yet packets wait: a deadlock.
                    deadlock = Some(self.deadlock_report(t));
                } else if let Some(c) = self.run.cycles {
                    t = c;
                }
                break;
            };
            while now >= next_sample {
                self.close_sample(next_sample);
                next_sample += self.run.sample_cycles.max(1);
            }
            while now >= next_counter {
                self.snapshot_counters(next_counter);
                next_counter += self.run.counter_cycles;
            }
            t = now;
            self.events += buf.len() as u64;
            for i in 0..buf.len() {
                if let Some(&ahead) = buf.get(i + PREFETCH_EVENTS) {
                    self.prefetch_event(ahead);
                }
                self.apply(buf[i], t);
            }
            self.process_dirty(t);
            if self.error.is_some() {
                break;
            }
            if self.pool.live() > self.pending_releases
                && t.saturating_sub(self.last_progress) > self.run.deadlock_cycles
            {
                deadlock = Some(self.deadlock_report(t));
                break;
            }
            if t >= next_audit {
                self.audit(t);
                next_audit = t + self.run.audit_cycles;
                if self.error.is_some() {
                    break;
                }
            }
            iter += 1;
            if iter & 0xfff == 0 && last_report.elapsed().as_millis() >= 200 {
                last_report = std::time::Instant::now();
                let frac = match (self.run.cycles, self.workload.is_finite()) {
                    (Some(c), _) => t as f64 / c as f64,
                    (None, true) => {
                        self.delivered as f64 / (self.created + self.gen_remaining).max(1) as f64
                    }
                    _ => 0.0,
                };
                progress(frac.min(1.0));
            }
        }
        if deadlock.is_none() && self.error.is_none() {
            self.audit(t);
        }
        if completion.is_some() && self.error.is_none() {
            if let Some(Err(e)) = self.workload.fill().map(|f| f.check_complete()) {
                self.fail(t, "broadcast-incomplete", e);
            }
            if let Some(run) = self.workload.schedule_run() {
                match run.check_complete() {
                    Err(e) => self.fail(t, "schedule-incomplete", e),
                    // The last step may be local work after the last delivery.
                    Ok(()) => completion = completion.map(|c| c.max(run.end_cycle())),
                }
            }
        }
        progress(1.0);
        let seen = inspect(&self.workload);
        (
            crate::result::finish(self, t, completion, deadlock, wall.elapsed().as_secs_f64()),
            seen,
        )
    }

    fn process_dirty(&mut self, t: u64) {
        let mut list = std::mem::take(&mut self.dirty_list);
        for &r in &list {
            self.dirty[r as usize] = false;
        }
        for i in 0..list.len() {
            if let Some(&ahead) = list.get(i + PREFETCH_ROUTERS) {
                self.prefetch_router(ahead as usize);
            }
            self.arbitrate(list[i] as usize, t);
        }
        // Arbitration schedules only future events, so it marks no router:
        // the list can be reused as it is.
        debug_assert!(self.dirty_list.is_empty());
        list.clear();
        self.dirty_list = list;
    }

    /// Asks for the cache lines an event will touch: its packet and its
    /// router's queue state.
    #[inline]
    fn prefetch_event(&self, ev: Ev) {
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

    /// Records every connected port's PA counters as they stand at `at`.
    fn snapshot_counters(&mut self, at: u64) {
        let ports = self.lay.ports;
        for i in 0..self.lay.routers * ports {
            if self
                .routing
                .neighbor((i / ports) as u32, (i % ports) as u8)
                .is_some()
            {
                self.counter_snapshots
                    .push((at, i as u32, self.counters[i]));
            }
        }
    }

    fn close_sample(&mut self, at: u64) {
        let period = self.run.sample_cycles.max(1) as f64;
        let lay = self.lay;
        let n = self.nodes as f64;
        let mut fill = vec![0f64; lay.vcs];
        for r in 0..lay.routers {
            for port in 0..lay.ports {
                for v in 0..lay.vcs {
                    fill[v] += self.q_used[r * lay.queues + port * lay.vcs + v] as f64;
                }
            }
        }
        let denom = (lay.routers * lay.ports) as f64 * self.cap as f64;
        fill.iter_mut().for_each(|f| *f /= denom);
        self.samples.push(Sample {
            cycle: at,
            accepted_load: self.win_delivered_bytes as f64 / (n * period * self.injection_links),
            link_utilization: self.win_busy as f64 / (self.directed_links.max(1) as f64 * period),
            packets_delivered: self.win_delivered,
            token_returns: self.win_tokens,
            unblocking_probability: if self.win_tokens > 0 {
                self.win_unblocks as f64 / self.win_tokens as f64
            } else {
                0.0
            },
            vc_fill: fill,
        });
        self.win_delivered_bytes = 0;
        self.win_delivered = 0;
        self.win_busy = 0;
        self.win_tokens = 0;
        self.win_unblocks = 0;
    }

    // ---- invariants ---------------------------------------------------

    /// Full audit: every live packet is in exactly one place, queue
    /// occupancies add up, and tokens are conserved on every link and VC.
    pub(crate) fn audit(&mut self, t: u64) {
        let lay = self.lay;
        let mut seen = vec![
            false;
            self.pool
                .iter_live()
                .map(|(i, _)| i as usize + 1)
                .max()
                .unwrap_or(0)
        ];
        let mut count = 0u64;
        let mut charged_in = vec![0u32; lay.routers * lay.queues];
        let mut err = None;
        let visit = |pkt: u32, seen: &mut Vec<bool>| -> bool {
            let i = pkt as usize;
            if i >= seen.len() || seen[i] {
                return false;
            }
            seen[i] = true;
            true
        };
        for qi in 0..lay.routers * lay.queues {
            let mut p = self.q_head[qi];
            while p != NONE {
                if !visit(p, &mut seen) {
                    err.get_or_insert(format!(
                        "packet slot {p} found twice or not live (queue {qi})"
                    ));
                    break;
                }
                count += 1;
                charged_in[qi] += self.pool.get(p).charged as u32;
                p = self.pool.get(p).next;
            }
        }
        // The arbitration index: every head's candidate outputs are in its
        // router's `want` masks, and nothing else is.
        let mut index_err = None;
        let mut want: Vec<QueueSet> = vec![0; self.want.len()];
        for qi in 0..lay.routers * lay.queues {
            let h = self.q_head[qi];
            let cand = if h == NONE {
                0
            } else {
                self.head_candidates(h)
            };
            if cand != self.q_cand[qi] {
                index_err.get_or_insert(format!(
                    "queue {qi}: head candidates {:#x} recorded as {:#x}",
                    cand, self.q_cand[qi]
                ));
            }
            let (r, bit) = (qi / lay.queues, (1 as QueueSet) << (qi % lay.queues));
            for b in 0..64 {
                if cand & (1 << b) != 0 {
                    let w = if 1 << b == HEAD_EJECTS { lay.ports } else { b };
                    want[r * (lay.ports + 1) + w] |= bit;
                }
            }
        }
        if want != self.want {
            index_err
                .get_or_insert("per-output want masks disagree with the queue heads".to_string());
        }
        for r in 0..self.nodes * self.lanes {
            let mut p = self.src_head[r];
            while p != NONE {
                if !visit(p, &mut seen) {
                    err.get_or_insert(format!("packet slot {p} found twice in a software queue"));
                    break;
                }
                count += 1;
                p = self.pool.get(p).next;
            }
        }
        // In flight on links and being ejected; tails leaving; tokens returning.
        let mut in_transit = vec![0u32; lay.routers * lay.queues];
        let mut leaving = vec![0u32; lay.routers * lay.queues];
        let mut returning = vec![0u32; lay.routers * lay.ports * lay.vcs];
        let mut ejecting = vec![0u32; lay.routers * lay.queues];
        let mut transit_pkts = Vec::new();
        self.wheel.for_each(|ev| {
            let qi = ev.router as usize * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
            match ev.kind {
                ARRIVE => {
                    transit_pkts.push(ev.x);
                    in_transit[qi] += self.pool.get(ev.x).charged as u32;
                }
                DELIVER => {
                    transit_pkts.push(ev.x);
                    ejecting[qi] += self.pool.get(ev.x).charged as u32;
                }
                RELEASE => transit_pkts.push(ev.x),
                DONE => leaving[qi] += ev.x,
                TOKEN => {
                    returning[(ev.router as usize * lay.ports + ev.a as usize) * lay.vcs
                        + ev.b as usize] += ev.x
                }
                _ => {}
            }
        });
        for &p in &transit_pkts {
            if !visit(p, &mut seen) {
                err.get_or_insert(format!(
                    "packet slot {p} in flight twice or already delivered"
                ));
            }
            count += 1;
        }
        if err.is_none() && count != self.pool.live() {
            err = Some(format!("{} packets are live but {} were found in queues and on links (packets lost or duplicated)", self.pool.live(), count));
        }
        if err.is_none() && self.created != self.delivered + self.pool.live() {
            err = Some(format!(
                "{} created, {} delivered, {} in flight: packets lost",
                self.created,
                self.delivered,
                self.pool.live()
            ));
        }
        if let Some(e) = err {
            self.fail(t, "packet-conservation", e);
            return;
        }
        if let Some(e) = index_err {
            self.fail(t, "arbitration-index", e);
            return;
        }
        for r in 0..lay.routers {
            for q in 0..lay.queues {
                let qi = r * lay.queues + q;
                let want = charged_in[qi] + leaving[qi] + ejecting[qi];
                if self.q_used[qi] as u32 != want {
                    self.fail(
                        t,
                        "buffer-accounting",
                        format!(
                            "router {} queue {q}: {} chunks recorded, {want} held",
                            self.routing.router_label(r as u32),
                            self.q_used[qi]
                        ),
                    );
                    return;
                }
            }
        }
        for r in 0..lay.routers {
            for o in 0..lay.ports {
                let Some((w, i)) = self.routing.neighbor(r as u32, o as u8) else {
                    continue;
                };
                for v in 0..lay.vcs {
                    let oi = (r * lay.ports + o) * lay.vcs + v;
                    let qi = w as usize * lay.queues + lay.queue_of(i as usize, v);
                    let total = self.out_tokens[oi] as u32
                        + returning[oi]
                        + in_transit[qi]
                        + self.q_used[qi] as u32;
                    if total != self.cap as u32 {
                        self.fail(
                            t,
                            "token-conservation",
                            format!(
                                "link {} {} VC {}: {} tokens at the sender + {} returning + {} on the wire + {} in the buffer = {total}, expected {}",
                                self.routing.router_label(r as u32),
                                self.routing.port_name(o as u8),
                                lay.vc_name(v),
                                self.out_tokens[oi],
                                returning[oi],
                                in_transit[qi],
                                self.q_used[qi],
                                self.cap
                            ),
                        );
                        return;
                    }
                }
            }
        }
    }

    /// The blocked VCs: follows each stuck head packet to the buffer it
    /// waits for, and reports a cycle of such waits if there is one.
    fn deadlock_report(&mut self, t: u64) -> Deadlock {
        let lay = self.lay;
        // successor[queue] = the downstream queue its head waits for (escape route).
        let idx = |r: usize, q: usize| r * lay.queues + q;
        let mut succ = vec![usize::MAX; lay.routers * lay.queues];
        for r in 0..lay.routers {
            for q in 0..lay.ports * lay.vcs {
                let h = self.q_head[idx(r, q)];
                if h == NONE {
                    continue;
                }
                let p = *self.pool.get(h);
                let (src, dst) = (self.router_of(p.src), self.router_of(p.dst));
                if dst == r as u32 {
                    continue;
                }
                let o = if p.vc as usize >= lay.esc
                    || self.mode == RoutingMode::Deterministic
                    || self.params.escape == Escape::None
                {
                    self.routing.escape_port(r as u32, dst, p.hints)
                } else {
                    let m = self.routing.adaptive_ports(r as u32, dst, p.hints);
                    (m != 0).then(|| m.trailing_zeros() as u8)
                };
                let Some(o) = o else { continue };
                let Some((w, i)) = self.routing.neighbor(r as u32, o) else {
                    continue;
                };
                let v = if self.params.escape == Escape::HopClass {
                    lay.esc + self.routing.vc_class(r as u32, src, p.hints, o) as usize
                } else if p.vc as usize >= lay.esc {
                    p.vc as usize
                } else if lay.esc_count > 0 && self.mode == RoutingMode::Deterministic {
                    lay.esc
                } else {
                    p.vc as usize
                };
                succ[idx(r, q)] = idx(w as usize, lay.queue_of(i as usize, v));
            }
        }
        let mut state = vec![0u8; succ.len()];
        let mut cycle = Vec::new();
        'outer: for s in 0..succ.len() {
            if succ[s] == usize::MAX || state[s] != 0 {
                continue;
            }
            let mut path = Vec::new();
            let mut x = s;
            while x != usize::MAX && state[x] == 0 {
                state[x] = 1;
                path.push(x);
                x = succ[x];
            }
            if x != usize::MAX && state[x] == 1 {
                let start = path.iter().position(|&y| y == x).unwrap_or(0);
                cycle = path[start..].to_vec();
                break 'outer;
            }
            for y in path {
                state[y] = 2;
            }
        }
        let describe = |qi: usize| {
            let r = qi / lay.queues;
            let q = qi % lay.queues;
            BlockedVc {
                router: self.routing.router_label(r as u32),
                port: self.routing.port_name((q / lay.vcs) as u8),
                vc: lay.vc_name(q % lay.vcs),
                used_chunks: self.q_used[qi] as u32,
            }
        };
        let blocked: Vec<BlockedVc> = cycle.iter().take(64).map(|&qi| describe(qi)).collect();
        Deadlock {
            cycle: t,
            stalled_cycles: t.saturating_sub(self.last_progress),
            packets_in_flight: self.pool.live(),
            wait_cycle_found: !cycle.is_empty(),
            wait_cycle_length: cycle.len(),
            blocked_vcs: blocked,
        }
    }
}
