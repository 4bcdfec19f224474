//! The event loop and the router state.
//!
//! **Time** is the network cycle: one byte time of a link. **Events** are
//! whole-packet (not per chunk) and addressed to one router each:
//!
//! | event | at | effect |
//! | --- | --- | --- |
//! | `EvKind::Arrive` | grant + hop latency | the header reaches the next router; the packet joins its VC |
//! | `EvKind::Done` | grant + wire time | the tail has left: the input path and the buffer space are free; tokens go upstream |
//! | `EvKind::Token` | `EvKind::Done` + token latency | the sender's token counter for that VC grows |
//! | `EvKind::Deliver` | ejection grant + packet bytes | the packet is in the reception FIFO: checked and counted |
//! | `EvKind::Inject` | geometric gaps | open-loop traffic creates a packet at a node |
//! | `EvKind::Trace` | the row's cycle | a trace workload's packet is created at its source |
//! | `EvKind::Release` | a delivery or deposit + the workload's `turn_cycles` | a packet the node's software sends in response (corner turn, reply) joins its send queue |
//! | `EvKind::Wake` | an injection + its bytes over the host interface rate | the node may start its next injection |
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

mod actions;
mod events;
mod finish;
mod invariants;
mod outages;
mod parallel;
mod summary;
mod window;

pub use outages::{FaultEvent, FaultTarget};
pub use parallel::Split;

use std::sync::Arc;

use actions::Action;
use tofusim_des::TimeWheel;
use tofusim_routing::{FaultMap, Routing, SourceRoute};

use crate::config::{LinkErrors, RouterParams, RoutingMode, RunParams};
use crate::event::{Ev, EvKind};
use crate::layout::{Layout, MAX_PORTS, MAX_QUEUES};
use crate::mail::Mail;
use crate::net::Net;
use crate::nic::Nic;
use crate::packet::{checksum, flags, list_pop, list_push, Packet, Pool, NONE};
use crate::partition::Ownership;
use crate::prefetch;
use crate::result::InvariantError;
use crate::router::route::cache_route;
use crate::router::{Env, Router};
use crate::stats::Stats;
use crate::traffic::{NewMessage, NewPacket, Traffic};

/// How far ahead in a cycle's events, and in its list of routers to
/// arbitrate, the engine prefetches state.
pub(crate) const PREFETCH_EVENTS: usize = 8;
const PREFETCH_ROUTERS: usize = 2;


/// The network of one partition (the whole network when the run is not
/// split): the router units, the node side, the packets and the events,
/// the statistics and the mail to other partitions, driven by a traffic
/// source `W` ([`crate::Traffic`]).
pub struct Engine<W> {
    /// What does not change during the run.
    pub(crate) net: Net,
    pub(crate) router: Router,
    pub(crate) nic: Nic,
    pub(crate) stats: Stats,
    pub(crate) mail: Mail,
    pub(crate) workload: W,
    pub(crate) pool: Pool,
    pub(crate) wheel: TimeWheel<Ev>,
    /// Routers touched this cycle (they run their node actions and arbitrate).
    pub(crate) dirty: Vec<bool>,
    pub(crate) dirty_list: Vec<u32>,
    /// Reused buffer for the messages software answers a delivery with.
    pub(crate) new_messages: Vec<NewMessage>,
    /// Trace rows not yet entered.
    pub(crate) trace_pending: u64,
    /// Packets of posted messages held by the node's software until a
    /// later cycle (a RELEASE event pending, or pacing): not yet made.
    pub(crate) pending_releases: u64,
    /// Finite packets this partition's nodes have still to create.
    pub(crate) gen_remaining: u64,
    /// A planted token leak waiting for the end of its cycle: the lowest
    /// (output, VC) index that received tokens at router 0 in it.
    pub(crate) leak_at: Option<usize>,
    pub(crate) error: Option<InvariantError>,
    /// Node actions waiting for their router's arbitration: the first of
    /// each router's list, the actions, and a scratch list to order them.
    pub(crate) act_head: Vec<u32>,
    pub(crate) acts: Vec<Action>,
    pub(crate) act_order: Vec<(u64, u32)>,
    /// UGAL-G: the occupancy (chunks) of every router's output queues as
    /// they stood at the start of the window (global links only; empty in
    /// other modes).
    pub(crate) ugal_view: Vec<u32>,
    /// Routes chosen around failures, by (source router, destination
    /// router, usual route state); `None`: no intact route.
    pub(crate) fault_routes: std::collections::HashMap<(u32, u32, u8), Option<SourceRoute>>,
    /// Failures and recoveries during the run (`None`: none scheduled).
    pub(crate) outages: Option<Box<outages::Outages>>,
    /// Packets with no route round the failures, set aside from their
    /// send queues (node, lane, packet) until a recovery: the MPI layer
    /// holds a message to a node that is down without stopping the others.
    pub(crate) route_held: Vec<(u32, u8, u32)>,
}

/// What a caller sees of a run in progress (for progress bars): called now
/// and then with the fraction done; `Break` asks the run to
/// stop early (Ctrl-C): it ends after the current window, `interrupted`.
pub type Progress<'a> = &'a mut dyn FnMut(f64) -> std::ops::ControlFlow<()>;

/// `x mod n` for `x < 2n` (a round-robin step past the last), without the
/// division a node's FIFO choice made several times per packet.
#[inline]
fn wrap(x: usize, n: usize) -> usize {
    if x >= n {
        x - n
    } else {
        x
    }
}

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
        Self::build(Arc::new(routing), params, mode, run, workload, injection_links, cycle_ns, Ownership::whole())
    }

    /// A fresh engine with the same network, parameters and workload, for
    /// partition `me` of `owner` (before either has run), holding the state
    /// of its own routers only.
    pub(crate) fn partition(&self, owner: Arc<[u16]>, me: u16) -> Self {
        let mut e = Self::build(
            Arc::clone(&self.net.routing),
            self.net.params.clone(),
            self.net.mode,
            self.net.run.clone(),
            self.workload.clone(),
            self.net.injection_links,
            self.net.cycle_ns,
            Ownership::of(&owner, me),
        );
        if let Some(f) = &self.net.faults {
            e.set_faults(FaultMap::clone(f), self.net.failed_nodes);
        }
        e.net.resend_timeout_cycles = self.net.resend_timeout_cycles;
        e.outages = self.outages.clone();
        if let Some(le) = &self.net.link_errors {
            e.net.link_errors = Some(Arc::clone(le));
            e.router = Router::new(&e.net, Ownership::of(&owner, me));
        }
        e.assign(owner, me);
        e
    }

    /// Fails the routers and links of `faults` before the run: packets
    /// take routes around them ([`tofusim_routing::faults`]) and failed
    /// links carry nothing (the utilisation counts the others). The
    /// workload must already leave its `failed_nodes` silent; per-node
    /// figures count the others.
    pub fn set_faults(&mut self, faults: FaultMap, failed_nodes: usize) {
        self.net.failed_nodes = failed_nodes;
        if faults.is_empty() && !faults.changes() {
            return;
        }
        self.net.directed_links -= faults.failed_directed_links();
        self.net.faults = Some(Arc::new(faults));
    }

    /// The router units and what they touch outside themselves, borrowed
    /// apart (arbitration, link time-outs).
    pub(crate) fn router_env(&mut self) -> (&mut Router, Env<'_>) {
        let env = Env { net: &self.net, pool: &mut self.pool, wheel: &mut self.wheel, nic: &mut self.nic, stats: &mut self.stats, mail: &mut self.mail };
        (&mut self.router, env)
    }

    /// Links corrupt packets and recover them (BG/L's link protocol,
    /// [`crate::router`]'s `link_protocol`). Before the run.
    pub fn set_link_errors(&mut self, errors: LinkErrors) {
        assert!(self.stats.events == 0, "link errors are set before the run");
        self.net.link_errors = Some(Arc::new(errors));
        self.router = Router::new(&self.net, Ownership::whole());
    }

    /// Makes this engine, before it has run, partition `me` of `owner`:
    /// its router and node state are made again for its own routers only
    /// (see [`Ownership`]: the rest of the network's entries take no memory).
    pub(crate) fn set_partition(&mut self, owner: Arc<[u16]>, me: u16) {
        assert!(self.stats.events == 0 && self.pool.live() == 0, "a partition is made before the run");
        let own = Ownership::of(&owner, me);
        let lay = self.net.lay;
        self.router = Router::new(&self.net, own);
        let gen_total = std::mem::take(&mut self.nic.gen_total);
        self.nic = Nic::new(self.net.nodes, self.nic.lanes, lay.npr, gen_total, own);
        self.act_head = own.filled(lay.routers, 1, NONE);
        self.assign(owner, me);
    }

    /// Partition `me` of `owner`: its mail and the packets its nodes generate.
    fn assign(&mut self, owner: Arc<[u16]>, me: u16) {
        let parts = owner.iter().copied().max().unwrap_or(0) as usize + 1;
        self.mail.outbox = vec![Vec::new(); parts.max(me as usize + 1)];
        self.mail.owner = owner;
        self.mail.me = me;
        // Only this partition's nodes generate here.
        self.gen_remaining = (0..self.net.nodes * self.nic.lanes)
            .filter(|&i| self.owns_node((i / self.nic.lanes) as u32))
            .map(|i| self.nic.gen_total[i])
            .sum();
    }

    /// Routers in the network.
    pub fn routers(&self) -> usize {
        self.net.lay.routers
    }

    #[inline]
    pub(crate) fn owns(&self, r: u32) -> bool {
        self.mail.owner[r as usize] == self.mail.me
    }

    /// Whether node `n`'s router belongs to this partition.
    #[inline]
    pub(crate) fn owns_node(&self, n: u32) -> bool {
        self.owns(self.net.router_of(n))
    }

    fn build(
        routing: Arc<Routing>,
        params: RouterParams,
        mode: RoutingMode,
        run: RunParams,
        workload: W,
        injection_links: f64,
        cycle_ns: f64,
        own: Ownership,
    ) -> Self {
        let routers = routing.routers();
        let ports = routing.ports();
        let vcs = params.vcs() as usize;
        let npr = params.nodes_per_router.max(1) as usize;
        // Nodes sit on the terminal routers (numbered first), `npr` each.
        let nodes = routing.terminal_routers() * npr;
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
            esc_count: params.escape_vcs() as usize,
            class_vcs: if params.escape == crate::config::Escape::HopClass { params.class_vcs.max(1) as usize } else { 0 },
            hp: params.priority_vc.then_some(vcs - 1),
            npr,
            fifos_per_node: fifos_per_node.max(1),
            qwords: params.queues(ports).div_ceil(64).max(1),
            vcs_reciprocal: Layout::reciprocal(vcs),
        };
        assert!(
            lay.queues <= MAX_QUEUES && ports <= MAX_PORTS && lay.units <= u16::MAX as usize && vcs <= crate::router::MAX_VCS,
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
        let directed_links = (0..routers)
            .flat_map(|r| (0..ports).map(move |o| (r, o)))
            .filter(|&(r, o)| routing.neighbor(r as u32, o as u8).is_some())
            .count() as u64;
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
        let connected_ports = (0..routers * ports).filter(|&i| routing.neighbor((i / ports) as u32, (i % ports) as u8).is_some()).count();
        let mut stats = Stats::new(routers * ports, vcs, run.sample_cycles, run.counter_cycles, crate::stats::counter_sample_limit(connected_ports as u64, vcs as u64));
        stats.host_busy_cycles = vec![0.0; nodes];
        stats.fifo_waited_cycles = vec![0; nodes];
        let ranges = params.jsq_ranges.max(1) as u32;
        let jsq_range = (0..=cap as u32).map(|t| (t * ranges / cap.max(1) as u32).min(ranges - 1) as u16).collect();
        let token_quarter = (0..=cap as u32).map(|t| (t * 4 / cap.max(1) as u32).min(3) as u8).collect();
        let net = Net {
            routing,
            params,
            mode,
            run,
            lay,
            nodes,
            wire_scale,
            full,
            cap,
            fifo_cap,
            injection_links,
            cycle_ns,
            directed_links,
            faults: None,
            resend_timeout_cycles: 0,
            link_errors: None,
            failed_nodes: 0,
            prefetch: routers >= crate::net::PREFETCH_FROM_ROUTERS,
            prefetch_heads: routers >= crate::net::PREFETCH_HEADS_FROM_ROUTERS,
            jsq_range,
            token_quarter,
        };
        Self {
            router: Router::new(&net, own),
            nic: Nic::new(nodes, lanes, npr, gen_total, own),
            stats,
            mail: Mail::whole(routers),
            workload,
            pool: Pool::default(),
            wheel: TimeWheel::new(horizon.max(1024)),
            dirty: vec![false; routers],
            dirty_list: Vec::with_capacity(routers),
            new_messages: Vec::new(),
            trace_pending: 0,
            pending_releases: 0,
            gen_remaining,
            leak_at: None,
            error: None,
            act_head: own.filled(routers, 1, NONE),
            acts: Vec::new(),
            act_order: Vec::new(),
            ugal_view: Vec::new(),
            fault_routes: std::collections::HashMap::new(),
            outages: None,
            route_held: Vec::new(),
            net,
        }
    }

    #[inline]
    pub(crate) fn mark_dirty(&mut self, r: u32) {
        if !self.dirty[r as usize] {
            self.dirty[r as usize] = true;
            self.dirty_list.push(r);
        }
    }

    pub(crate) fn push_source(&mut self, node: usize, lane: usize, pkt: u32) {
        let i = node * self.nic.lanes + lane;
        if self.nic.src_head[i] == NONE {
            self.nic.src_need[i] = 0;
        }
        self.nic.lane_has_work(node, lane);
        list_push(
            &mut self.pool,
            &mut self.nic.src_head[i],
            &mut self.nic.src_tail[i],
            pkt,
        );
    }

    /// Route state of a new packet. Dragonfly UGAL and adaptive modes
    /// choose here between the minimal route and a Valiant one, from the
    /// occupancy of the buffers the two would enter ([S:002]):
    /// - UGAL-L: the source router's output queues, weighted by hops
    ///   (minimal if q_min·H_min ≤ q_nm·H_nm);
    /// - UGAL-G: the queues of the global links the two routes would take;
    /// - adaptive prefer-minimal: as UGAL-L with the non-minimal side
    ///   counted double (minimal unless clearly congested).
    fn initial_route(&mut self, r: u32, dst_node: u32) -> u8 {
        let dst = self.net.router_of(dst_node);
        let dst_local = dst_node % self.net.lay.npr as u32;
        use tofusim_routing::{DragonflyMode, Routing};
        let hints = self.net.routing.init(r, dst, dst_local, &mut self.router.rngs[r as usize]);
        let Routing::Dragonfly(d) = &*self.net.routing else {
            return hints;
        };
        let mode = d.mode;
        if matches!(
            mode,
            DragonflyMode::Minimal | DragonflyMode::InOrder | DragonflyMode::Valiant
        ) || r == dst
        {
            return hints;
        }
        let lay = self.net.lay;
        let occupancy = |s: &Self, router: u32, port: u8| {
            s.router.outputs.occupancy(&s.net, router, port) as u64
        };
        let (mh, vh) = if d.aries_form() && mode != DragonflyMode::UgalGlobal {
            // Aries weighs two minimal and two non-minimal candidates
            // ([S:002]): the less loaded of each pair by the queue
            // of its first port, then the weighted comparison below.
            let rng = &mut self.router.rngs[r as usize];
            let m = [d.hashed_minimal(rng), d.hashed_minimal(rng)];
            let v = [d.valiant_hints(r, dst, rng), d.valiant_hints(r, dst, rng)];
            let load = |h: u8| d.next_port(r, dst, h).map_or(0, |p| occupancy(self, r, p));
            let better = |a: u8, b: u8| if load(b) < load(a) { b } else { a };
            (better(m[0], m[1]), better(v[0], v[1]))
        } else {
            (
                d.minimal_hints(r, dst),
                d.valiant_hints(r, dst, &mut self.router.rngs[r as usize]),
            )
        };
        if vh == 0 || vh == mh {
            return mh;
        }
        let (h_min, h_nm) = (
            d.route_hops(r, dst, mh) as u64,
            d.route_hops(r, dst, vh) as u64,
        );
        let (q_min, q_nm) = match mode {
            DragonflyMode::UgalGlobal => {
                // The global links' queues as they stood at the start of
                // the window (`ugal_view`): remote state cannot be read now.
                let view = |hop: Option<(u32, u8)>| {
                    hop.map_or(0, |(g, p)| {
                        self.ugal_view[g as usize * lay.ports + p as usize] as u64
                    })
                };
                (
                    view(d.global_hop(r, dst, mh)),
                    view(d.global_hop(r, dst, vh)),
                )
            }
            _ => {
                let pm = d.next_port(r, dst, mh).expect("not at the destination");
                let pn = d.next_port(r, dst, vh).expect("not at the destination");
                (occupancy(self, r, pm), occupancy(self, r, pn))
            }
        };
        let (num, den) = mode.nonminimal_weight();
        if den * q_min * h_min <= num * q_nm * h_nm {
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
        matches!(&*self.net.routing, Routing::Dragonfly(d)
            if matches!(d.mode, DragonflyMode::UgalLocal | DragonflyMode::UgalGlobal | DragonflyMode::AdaptivePreferMinimal | DragonflyMode::Adaptive(_)))
    }

    /// Creates a packet at node `r` at cycle `t`, handed over by the
    /// software at cycle `created` (its latency counts from then). A packet
    /// routed by load gets its route when it enters an injection FIFO
    /// ([`Self::route_at_entry`]).
    pub(crate) fn create(&mut self, r: u32, t: u64, created: u64, np: NewPacket) -> u32 {
        let at_entry = np.hints.is_none() && self.routes_by_load();
        let hints = match np.hints {
            Some(h) => h,
            None if at_entry => 0,
            None => self.initial_route(self.net.router_of(r), np.dst),
        };
        let (route, route_flags) = match at_entry {
            false => self.around_faults(self.net.router_of(r), np.dst, hints, t),
            true => (SourceRoute { hints, detour: None }, 0),
        };
        let serial = self.nic.node_serial[r as usize];
        self.nic.node_serial[r as usize] = serial.wrapping_add(1);
        self.stats.created += 1;
        let mut f = flags::LIVE;
        if created >= self.net.run.warmup {
            f |= flags::MEASURED;
        }
        if np.deposit {
            f |= flags::DEPOSIT;
        }
        if at_entry {
            f |= flags::ROUTE_AT_ENTRY;
        }
        f |= route_flags;
        self.pool.alloc(Packet {
            next: NONE,
            src: r,
            dst: np.dst,
            serial,
            created,
            tag: np.tag,
            checksum: checksum(serial, r, np.dst, np.tag, np.payload),
            bytes: np.bytes,
            payload: np.payload,
            hops: 0,
            hints: route.hints,
            detour: route.detour.map_or(0, |p| p + 1),
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
        if self.net.params.injection_fifos == 0 {
            return;
        }
        let npr = self.net.lay.npr;
        // A fat-tree's upper switches have no nodes.
        for node in r * npr..((r + 1) * npr).min(self.net.nodes) {
            if self.nic.lanes > crate::nic::MASKED_LANES {
                for lane in 0..self.nic.lanes {
                    self.fill_lane(node, lane, t);
                }
                continue;
            }
            // Only the lanes that may have work, in lane order.
            let mut work = self.nic.lane_work[node];
            while work != 0 {
                let lane = work.trailing_zeros() as usize;
                work &= work - 1;
                self.fill_lane(node, lane, t);
            }
        }
    }

    /// The injection FIFOs of `lane`: every `lanes`-th one from `lane` (all
    /// of them with one lane; lanes share FIFOs when there are fewer FIFOs).
    fn lane_fifos(&self, lane: usize) -> (usize, usize) {
        let normal = self.net.params.injection_fifos as usize;
        if self.nic.lanes == 1 {
            (0, normal)
        } else if self.nic.lanes > normal {
            (lane % normal, 1)
        } else {
            (lane, (normal - lane).div_ceil(self.nic.lanes))
        }
    }

    /// Whether injection FIFO `unit` of router `r` has room for `need` chunks.
    #[inline]
    fn fifo_room(&self, r: usize, unit: usize, need: u16) -> bool {
        let lay = self.net.lay;
        self.net.fifo_cap - self.router.inputs.q_used[r * lay.queues + lay.queue_of(unit, 0)] >= need
    }

    fn fill_lane(&mut self, node: usize, lane: usize, t: u64) {
        let lay = self.net.lay;
        let r = self.net.router_of(node as u32) as usize;
        // The node's FIFOs follow those of the nodes before it on the router.
        let unit0 = lay.ports + if lay.npr == 1 { 0 } else { node % lay.npr } * lay.fifos_per_node;
        let normal = self.net.params.injection_fifos as usize;
        let li = node * self.nic.lanes + lane;
        let (first, count) = self.lane_fifos(lane);
        let step = self.nic.lanes.min(normal);
        loop {
            // The node's own packets go first: on a plane fill each first leg
            // feeds corner turns elsewhere, so sending them early keeps every
            // link supplied (turns first starves one axis, then the other).
            // Packets already in the send queue go before new generated
            // ones (only a packet sent again after a loss, or one waiting
            // for a route, is there while the node still generates).
            let from_source = self.nic.gen_next[li] >= self.nic.gen_total[li] || self.nic.src_head[li] != NONE;
            if from_source && self.nic.src_head[li] == NONE {
                // The next packet of the messages waiting, made now.
                let Some((np, created)) = self.nic.messages.make(node, lane) else {
                    // Nothing made, handed over or left to generate: the
                    // lane is idle until something gives it work.
                    if lane < crate::nic::MASKED_LANES {
                        self.nic.lane_work[node] &= !(1 << lane);
                    }
                    return;
                };
                let pkt = self.create(node as u32, t, created, np);
                self.push_source(node, lane, pkt);
            }
            let round_robin = self.net.params.fifo_select == crate::config::FifoSelect::RoundRobin;
            if from_source && round_robin && self.nic.src_need[li] != 0 {
                // The head already waited: still no FIFO with room for it?
                let need = self.nic.src_need[li];
                if !(0..count).any(|k| self.fifo_room(r, unit0 + first + k * step, need)) {
                    self.nic.fifo_wait_from(li, t);
                    return;
                }
            }
            if from_source && self.pool.get(self.nic.src_head[li]).flags & flags::UNROUTABLE != 0 && !self.retry_route(self.nic.src_head[li], t) {
                if self.outages.is_none() {
                    // No route around the failures: it waits while the
                    // run stops with the `unroutable` error.
                    return;
                }
                // It waits for a recovery, set aside: the packets behind
                // it go on.
                let pkt = list_pop(&self.pool, &mut self.nic.src_head[li], &mut self.nic.src_tail[li]);
                self.nic.src_need[li] = 0;
                self.route_held.push((node as u32, lane as u8, pkt));
                continue;
            }
            if from_source && self.net.params.fifo_select == crate::config::FifoSelect::Direction {
                // The FIFO follows the route's first direction: choose it now.
                self.route_at_entry(r as u32, self.nic.src_head[li], t);
            }
            let (bytes, dst, hints, detour) = if from_source {
                let p = self.pool.get(self.nic.src_head[li]);
                (p.bytes, p.dst, p.hints, p.detour)
            } else {
                let np = self
                    .workload
                    .finite_packet(node as u32, lane, self.nic.gen_next[li]);
                (np.bytes, np.dst, 0, 0)
            };
            let need = self.net.chunks(bytes);
            if from_source {
                self.nic.src_need[li] = need;
            }
            let room = |s: &Self, f: usize| s.fifo_room(r, unit0 + f, need);
            let fifo = match self.net.params.fifo_select {
                crate::config::FifoSelect::RoundRobin => {
                    let start = self.nic.fifo_rr[li] as usize;
                    (0..count)
                        .map(|k| first + wrap(start + k, count) * step)
                        .find(|&f| room(self, f))
                }
                crate::config::FifoSelect::Direction => {
                    let port = if from_source && detour != 0 {
                        (detour - 1) as usize
                    } else if self.net.params.virtual_output_queues {
                        // The output it takes at its own router. A packet
                        // not made yet has no route state: its D-mod-K one
                        // (its node on the destination leaf) names the
                        // output, exactly so under D-mod-K and adaptive
                        // routing (a random route's up port may differ).
                        let hints = if from_source { hints } else { (dst as usize % self.net.lay.npr) as u8 };
                        self.net.routing.output_at(r as u32, dst, hints).unwrap_or(0) as usize
                    } else if from_source {
                        let dst_router = self.net.router_of(dst);
                        self.net.routing.escape_port(r as u32, dst_router, hints).unwrap_or(0) as usize
                    } else {
                        dst as usize
                    };
                    let f = first + (port % count) * step;
                    room(self, f).then_some(f)
                }
            };
            let Some(f) = fifo else {
                self.nic.fifo_wait_from(li, t);
                return;
            };
            if self.nic.fifo_wait_since[li] != u64::MAX {
                let waited = t.saturating_sub(self.nic.fifo_wait_since[li].max(self.net.run.warmup));
                self.stats.fifo_waited_cycles[node] += waited;
                self.router.inputs.blocked[crate::limits::Cause::FifoSpace as usize] += waited;
                self.nic.fifo_wait_since[li] = u64::MAX;
            }
            let taken = if step == 1 { f - first } else { (f - first) / step };
            self.nic.fifo_rr[li] = wrap(taken + 1, count) as u8;
            let pkt = if from_source {
                self.nic.src_need[li] = 0;
                list_pop(&self.pool, &mut self.nic.src_head[li], &mut self.nic.src_tail[li])
            } else {
                let np = self
                    .workload
                    .finite_packet(node as u32, lane, self.nic.gen_next[li]);
                self.nic.gen_next[li] += 1;
                self.gen_remaining -= 1;
                self.create(node as u32, t, t, np)
            };
            self.route_at_entry(r as u32, pkt, t);
            if self.pool.get(pkt).flags & flags::UNROUTABLE != 0 {
                // Back to the send queue, never into a FIFO (see above):
                // it is set aside there when failures come and go, and the
                // packets behind it go on.
                self.push_source(node, lane, pkt);
                if self.outages.is_none() {
                    return;
                }
                continue;
            }
            let unit = unit0 + f;
            let qi = r * lay.queues + lay.queue_of(unit, 0);
            {
                let p = self.pool.get_mut(pkt);
                p.input = unit as u16;
                p.vc = f as u8;
                p.charged = need as u8;
            }
            self.router.inputs.q_used[qi] += need;
            cache_route(&self.net, &mut self.pool, r as u32, pkt);
            self.router.inputs.push(r, qi, pkt, &self.net, &mut self.pool, t);
        }
    }

    /// Charges every wait still open at `t` (the end of the run): the
    /// blocked heads of this partition's queues and its send queues waiting
    /// for FIFO space ([`crate::limits`]); split runs then add the same
    /// totals as an unsplit one.
    pub(crate) fn close_waits(&mut self, t: u64) {
        let lay = self.net.lay;
        let warmup = self.net.run.warmup;
        for r in 0..lay.routers {
            if !self.owns(r as u32) {
                continue;
            }
            for q in 0..lay.queues {
                let qi = r * lay.queues + q;
                if self.router.inputs.q_head[qi] != NONE {
                    self.router.inputs.granted(qi, t, warmup);
                }
            }
        }
        let lanes = self.nic.lanes;
        for li in 0..self.nic.fifo_wait_since.len() {
            let since = self.nic.fifo_wait_since[li];
            if since != u64::MAX && self.owns_node((li / lanes) as u32) {
                let waited = t.saturating_sub(since.max(warmup));
                self.stats.fifo_waited_cycles[li / lanes] += waited;
                self.router.inputs.blocked[crate::limits::Cause::FifoSpace as usize] += waited;
                self.nic.fifo_wait_since[li] = u64::MAX;
            }
        }
    }

    /// Chooses the route of a packet routed by load as it enters an
    /// injection FIFO of its source router `r`.
    fn route_at_entry(&mut self, r: u32, pkt: u32, t: u64) {
        let (flags_now, dst) = {
            let p = self.pool.get(pkt);
            (p.flags, p.dst)
        };
        if flags_now & flags::ROUTE_AT_ENTRY == 0 {
            return;
        }
        let hints = self.initial_route(r, dst);
        let (route, route_flags) = self.around_faults(r, dst, hints, t);
        let p = self.pool.get_mut(pkt);
        p.set_route(route);
        p.flags &= !flags::ROUTE_AT_ENTRY;
        p.flags |= route_flags;
    }

    /// The route of a packet from router `src` to node `dst_node` whose
    /// usual route state is `hints`, around the network's failures
    /// ([`tofusim_routing::faults`]), and whether it must travel
    /// deterministically (it is not the usual route, or adaptive hops
    /// could reach a failure). With no intact route the run stops with an
    /// `unroutable` error naming the pair and the failure met.
    fn around_faults(&mut self, src: u32, dst_node: u32, hints: u8, t: u64) -> (SourceRoute, u8) {
        let plain = SourceRoute { hints, detour: None };
        let Some(faults) = self.net.faults.clone() else {
            return (plain, 0);
        };
        let dst = self.net.router_of(dst_node);
        if src == dst {
            return (plain, 0);
        }
        let routing = Arc::clone(&self.net.routing);
        // The usual route, if intact, needs no search and no cache entry
        // (a cache of every pair seen would grow with the run).
        let chosen = if faults.clear_hops(&routing, src, dst, plain).is_some() {
            Some(plain)
        } else {
            *self.fault_routes.entry((src, dst, hints)).or_insert_with(|| faults.choose(&routing, src, dst, hints))
        };
        let Some(route) = chosen else {
            if let Some(at) = self.outages.as_ref().and_then(|o| o.next_recovery(t)) {
                // It waits in its send queue for the recovery: that is
                // when the run can move again (the watchdog waits too).
                self.stats.last_progress = self.stats.last_progress.max(at);
                return (plain, flags::DETERMINISTIC | flags::UNROUTABLE);
            }
            let met = faults.blocked_at(&routing, src, dst, plain);
            let detail = format!(
                "no route from router {} to router {} avoids the failures (the usual route meets {met}); the routing offers {}",
                routing.router_label(src),
                routing.router_label(dst),
                faults.scheme(&routing)
            );
            self.fail(t, "unroutable", detail);
            return (plain, flags::DETERMINISTIC | flags::UNROUTABLE);
        };
        if route != plain {
            self.stats.rerouted += 1;
        }
        let adaptive_safe = route == plain
            && match &*routing {
                Routing::Torus(tr) => faults.box_is_clear(tr, src, dst, hints),
                _ => true,
            };
        (route, if adaptive_safe { 0 } else { flags::DETERMINISTIC })
    }

    // ---- events -------------------------------------------------------

    /// Every router touched this cycle runs its node actions, then
    /// arbitrates.
    pub(crate) fn process_dirty(&mut self, t: u64) {
        if let Some(i) = self.leak_at.take() {
            self.router.outputs.out_tokens[i] -= 1;
            self.router.planted_done = true;
        }
        let mut list = std::mem::take(&mut self.dirty_list);
        for i in 0..list.len() {
            if self.net.prefetch {
                if let Some(&ahead) = list.get(i + PREFETCH_ROUTERS) {
                    self.prefetch_router(ahead as usize);
                }
                if let Some(&next) = list.get(i + 1).filter(|_| self.net.prefetch_heads) {
                    self.prefetch_heads(next as usize);
                }
            }
            let r = list[i] as usize;
            // Actions may mark their own router again: it is still marked,
            // so nothing is added to the list.
            self.run_actions(r, t);
            self.dirty[r] = false;
            self.fill_fifos(r, t);
            let (router, mut env) = self.router_env();
            router.arbitrate(r, t, &mut env);
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
        let lay = self.net.lay;
        let r = ev.router as usize;
        if matches!(ev.kind, EvKind::Arrive | EvKind::Deliver) {
            self.pool.prefetch(ev.x);
        }
        let qi = r * lay.queues + lay.queue_of(ev.a as usize, ev.b as usize);
        prefetch::line(&self.router.inputs.q_used, qi);
        prefetch::line(&self.router.inputs.q_tail, qi);
        prefetch::line(&self.dirty, r);
        if ev.kind == EvKind::Arrive {
            // A packet joining an empty queue becomes its head: the head
            // index (`heads`, the router's `want` masks) changes.
            prefetch::line(&self.router.inputs.heads, qi);
            let w = r * (lay.ports + 1) * lay.qwords;
            prefetch::line(&self.router.inputs.want, w);
            prefetch::line(&self.router.inputs.want, w + (lay.ports + 1) * lay.qwords - 1);
        }
        if ev.kind == EvKind::Token {
            prefetch::line(&self.router.outputs.out_tokens, (r * lay.ports + ev.a as usize) * lay.vcs);
            prefetch::line(&self.router.outputs.depleted_since, r * lay.ports + ev.a as usize);
        }
    }

    /// Asks for the head packets router `r`'s next arbitration may route:
    /// those of the queues whose head could use an output, read from the
    /// router's `want` masks, which [`Self::prefetch_router`] asked for a
    /// router earlier (route choice otherwise stalls on each head packet).
    #[inline]
    fn prefetch_heads(&self, r: usize) {
        let lay = &self.net.lay;
        if lay.qwords != 1 {
            return;
        }
        let base = r * (lay.ports + 1);
        let mut cands = 0u64;
        for o in 0..=lay.ports {
            cands |= self.router.inputs.want[base + o];
        }
        while cands != 0 {
            let q = cands.trailing_zeros() as usize;
            cands &= cands - 1;
            let h = self.router.inputs.q_head[r * lay.queues + q];
            if h != crate::packet::NONE {
                self.pool.prefetch(h);
            }
        }
    }

    /// Asks for the cache lines an arbitration at router `r` reads.
    #[inline]
    fn prefetch_router(&self, r: usize) {
        let lay = self.net.lay;
        let base = r * lay.queues;
        let w = r * (lay.ports + 1) * lay.qwords;
        prefetch::line(&self.router.inputs.want, w);
        prefetch::line(&self.router.inputs.want, w + (lay.ports + 1) * lay.qwords - 1);
        if let Routing::Torus(t) = &*self.net.routing {
            prefetch::line(t.neighbor_table(), r * lay.ports);
        }
        for k in (0..lay.queues).step_by(16) {
            prefetch::line(&self.router.inputs.q_head, base + k);
        }
        prefetch::line(&self.router.inputs.q_used, base);
        // A hop pops a head (its queue's `heads`) and counts at its port.
        for k in (0..lay.queues).step_by(4) {
            prefetch::line(&self.router.inputs.heads, base + k);
        }
        for o in (0..lay.ports).step_by(2) {
            prefetch::line(&self.stats.counters, r * lay.ports + o);
        }
        prefetch::line(&self.router.outputs.depleted_since, r * lay.ports);
        prefetch::line(&self.router.outputs.out_free_at, r * lay.ports);
        prefetch::line(&self.router.outputs.out_tokens, r * lay.ports * lay.vcs);
        prefetch::line(&self.router.inputs.paths_used, r * lay.units);
        prefetch::line(&self.router.rngs, r);
        let first = r * self.net.lay.npr * self.nic.lanes;
        prefetch::line(&self.nic.gen_next, first);
        prefetch::line(&self.nic.gen_total, first);
        prefetch::line(&self.nic.src_head, first);
    }
}
