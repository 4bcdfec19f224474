//! The communication model of each system generation: the packet format
//! the router carries, the router timing, and the host/TNI latency
//! components of an RDMA transfer. Published end-to-end figures (put
//! latency, throughput) are *not* stored here: they come out of these
//! components and the packet engine: every figure comes out of the modelled mechanism (docs/model.md). Each value
//! carries its source tag (docs/sources.md: `[S:…]`, `[PUB]`, `[DER]`, `[MEM]`,
//! `[FIT]` = fitted to the named figure, which then is not a validation).
//! `docs/communication.md` lists them.

// Rates carry their unit in the name (`link_Bps`), as the JSON keys do.
#![allow(non_snake_case)]

use serde::Serialize;
use tofusim_packet::{Arbitration, Escape, FifoSelect, RouterParams, RoutingMode};
use tofusim_topology::{Network, Topology};
use tofusim_comm::HostTiming;

use crate::error::{ConfigError, Result};
use crate::generation::Generation;
use crate::system::System;

/// How a TNI gets its descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Descriptor {
    /// Written by the CPU straight into the TNI (Tofu1 "direct descriptor").
    Direct,
    /// Fetched by the TNI from memory.
    Memory,
}

/// TofuD: the CMG of the core relative to the TNI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cmg {
    Near,
    Far,
}

/// The low-latency feature switches of one transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Modes {
    pub descriptor: Descriptor,
    pub cache_injection: bool,
    pub cmg: Cmg,
}

impl Default for Modes {
    fn default() -> Self {
        Self {
            descriptor: Descriptor::Direct,
            cache_injection: true,
            cmg: Cmg::Near,
        }
    }
}

impl Modes {
    pub fn parse(descriptor: &str, cache_injection: bool, cmg: &str) -> Result<Self> {
        let bad = |key: &str, what: &str| ConfigError::argument(key, what.to_string());
        Ok(Self {
            descriptor: match descriptor {
                "" | "direct" => Descriptor::Direct,
                "memory" => Descriptor::Memory,
                _ => return Err(bad("descriptor", "expected direct or memory")),
            },
            cache_injection,
            cmg: match cmg {
                "" | "near" => Cmg::Near,
                "far" => Cmg::Far,
                _ => return Err(bad("cmg", "expected near or far")),
            },
        })
    }
}

/// When a latency component applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum When {
    Always,
    DescriptorInMemory,
    NoCacheInjection,
    FarCmg,
}

/// Which end of the transfer pays a component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    Send,
    Receive,
}

/// One host/TNI latency component, nanoseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Component {
    pub name: &'static str,
    pub ns: f64,
    pub side: Side,
    pub when: When,
    pub source: &'static str,
}

/// The communication model of a system.
#[derive(Clone, Debug, Serialize)]
pub struct CommModel {
    /// The hardware generation the model is of (in JSON, its name).
    #[serde(serialize_with = "generation_name")]
    pub generation: Generation,
    /// Link rate per direction, bytes per second (one network cycle = one byte time).
    pub link_Bps: f64,
    /// RDMA engines per node.
    pub tnis: u8,
    pub router: RouterParams,
    /// Router + link latency of one hop (the header's), and of a token's
    /// return, ns: a property of the router generation, from its source or
    /// labelled assumed in `sources`. The engine's `hop_latency_cycles`
    /// are derived from it on the system's own link rate, so a system with
    /// other links keeps the generation's hop time, not its cycle count.
    pub hop_latency_ns: f64,
    pub routing: RoutingMode,
    /// Largest packet the router carries, bytes (header included).
    pub packet_bytes: u32,
    /// Header bytes in every packet (routing + RDMA headers).
    pub header_bytes: u32,
    pub components: Vec<Component>,
    /// Host reduction rate (summing receives), bytes per second.
    pub reduce_Bps: f64,
    /// Host memory copy rate, bytes per second.
    pub copy_Bps: f64,
    /// Rate at which the host feeds all TNIs together (K: the CPU–ICC bus).
    pub host_limit_Bps: Option<f64>,
    /// Source of each router/format parameter.
    pub sources: Vec<(&'static str, &'static str)>,
}

fn generation_name<S: serde::Serializer>(g: &Generation, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(g.name())
}

impl CommModel {
    /// The model of a system's hardware generation (an explicit key of the
    /// system, never guessed from its link rates or name), on its links and
    /// NIC. Dragonflies need their node space ([`crate::node_space`]).
    pub fn for_system(system: &System, dragonfly: Option<&crate::node_space::DragonflySpace>) -> Self {
        let net = &system.network;
        let link = net.link_Bps[0];
        // Every generation is paired with its topology when the system is
        // resolved (`Generation::check`), and a dragonfly is always built
        // with its node space; the match is exhaustive so that a new
        // generation is a compile error here until it has its model.
        let mut m = match (system.generation, &net.topology, dragonfly) {
            (Generation::Aries, Topology::Dragonfly(d), Some(space)) => return Self::for_dragonfly(d, net, space),
            (Generation::GenericDragonfly, Topology::Dragonfly(d), Some(space)) => return Self::generic_dragonfly(d, net, space),
            (Generation::FatTree, Topology::FatTree(f), _) => {
                let mut m = Self::fattree(f, link);
                // A node feeds its leaf switch through one link per rail (one
                // rail simulated), or slower where its NIC is.
                let per_rail = net.injection_per_node_Bps() / f.rails.max(1) as f64;
                m.router.host_bytes_per_cycle = (per_rail / link).min(1.0);
                return m;
            }
            (Generation::Tofu1, ..) => Self::tofu1(),
            (Generation::Tofu2, ..) => Self::tofu2(),
            (Generation::Tofud, ..) => Self::tofud(),
            (Generation::Bgl, ..) => Self::bgl(),
            // Not reached (above); the BG/L model, as for a generic torus.
            (Generation::Aries | Generation::GenericDragonfly | Generation::FatTree, ..) => Self::bgl(),
        };
        m.set_link_Bps(link);
        let bgl_router = match system.generation {
            Generation::Bgl => true,
            Generation::Tofu1 | Generation::Tofu2 | Generation::Tofud | Generation::Aries | Generation::GenericDragonfly | Generation::FatTree => false,
        };
        if bgl_router && link != BGL_LINK_BPS {
            // BG/L's router on faster links keeps its 91.4 ns hop: its 1 KiB
            // VCs would no longer cover the credit loop.
            cover_credit_loop(&mut m.router);
            m.sources.push(("vc_buffer_bytes", "[DER] BG/L's router on links other than its 175 MB/s: whole packets covering the credit loop (wire time + 2 hops of 91.4 ns), at least BG/L's 1 KiB"));
        }
        m.tnis = net.nic.interfaces.clamp(1, 16) as u8;
        m.router.injection_fifos = m.router.injection_fifos.max(m.tnis);
        if net.nic.host_limit_Bps.is_some() {
            m.host_limit_Bps = net.nic.host_limit_Bps;
        }
        // The host side may cap what all TNIs inject together (K: the CPU–ICC bus).
        if let Some(bps) = system.host_Bps {
            m.host_limit_Bps = Some(bps);
            m.sources.push(("host limit", "the system's host_bandwidth (its source is in the preset)"));
        }
        if let Some(bps) = m.host_limit_Bps {
            m.router.host_bytes_per_cycle = bps / m.link_Bps;
        }
        m
    }

    /// A fat-tree switch of the InfiniBand class (EDR, Omni-Path), on links
    /// of `link_bps`: input-queued with virtual output queues (a packet
    /// waiting for a busy output never holds up one bound elsewhere) and a
    /// crossbar speedup of 2, no escape VC (up/down routes cannot
    /// deadlock), whole-packet cut-through with credits in 32-byte chunks. Every value is a `[MEM]` setting of
    /// a generic switch (the vendors' internals are not public), listed in
    /// `sources`; none is fitted.
    pub fn fattree(f: &tofusim_topology::FatTree, link_bps: f64) -> Self {
        let packet = FATTREE_MTU_BYTES + FATTREE_HEADER_BYTES;
        let hop = ns_per_hop_cycles(FATTREE_HOP_NS, link_bps);
        let npr = f.down.first().copied().unwrap_or(1);
        let voq_bytes = fattree_voq_packets(hop, packet + FATTREE_OVERHEAD_BYTES) * packet;
        let (voqs, fifos) = fattree_queues(
            tofusim_routing::FatTreeRouting::ports_of(f),
            npr as usize,
            tofusim_routing::FatTreeRouting::outputs_of(f),
        );
        Self {
            generation: Generation::FatTree,
            link_Bps: link_bps,
            tnis: 1,
            hop_latency_ns: FATTREE_HOP_NS,
            router: RouterParams {
                dynamic_vcs: voqs,
                escape: Escape::None,
                priority_vc: false,
                vc_buffer_bytes: voq_bytes,
                chunk_bytes: 32,
                max_packet_bytes: packet,
                overhead_bytes: FATTREE_OVERHEAD_BYTES,
                hop_latency_cycles: hop,
                token_latency_cycles: hop,
                paths: FATTREE_SPEEDUP,
                arbitration: Arbitration::Random,
                slq_fraction: 0.0,
                network_priority: 0.5,
                jsq: true,
                jsq_ranges: 4,
                injection_fifos: fifos,
                priority_fifos: 0,
                injection_fifo_bytes: voq_bytes,
                fifo_select: FifoSelect::Direction,
                host_bytes_per_cycle: f64::INFINITY,
                nodes_per_router: npr,
                port_cycles_per_byte: Vec::new(),
                class_vcs: 1,
                virtual_output_queues: true,
            },
            routing: RoutingMode::Deterministic,
            packet_bytes: packet,
            header_bytes: FATTREE_HEADER_BYTES,
            components: vec![
                Component {
                    name: "send: MPI software and the HCA reading the work request",
                    ns: 500.0,
                    side: Side::Send,
                    when: When::Always,
                    source: "[MEM] about 1 us MPI latency on EDR InfiniBand, split evenly",
                },
                Component {
                    name: "receive: completion and MPI matching",
                    ns: 500.0,
                    side: Side::Receive,
                    when: When::Always,
                    source: "[MEM] about 1 us MPI latency on EDR InfiniBand, split evenly",
                },
            ],
            reduce_Bps: 10e9,
            copy_Bps: 20e9,
            host_limit_Bps: None,
            sources: vec![
                ("packet format", "[MEM] 2,048-byte MTU behind a 32-byte header (LRH + BTH + ICRC + VCRC = 26 bytes, in whole 32-byte chunks), 8 bytes of link framing per packet"),
                ("virtual channels", "[MEM] virtual output queues: each input's VCs are one per output of the switch it feeds (lookahead routing; outputs share a queue where the engine's limits bind), each holding the credit loop (packet time + 2 hops) in whole packets; a node's injection FIFOs keyed the same way; no escape VC (up/down routing is deadlock-free)"),
                ("hop latency", "[MEM] about 100 ns per switch hop (EDR switches quote about 90 ns port to port)"),
                ("arbitration", "[MEM] random among requests, up to 2 crossbar transfers per input at once (speedup 2: Chuang et al., IEEE JSAC 1999)"),
                ("rails", "one rail simulated: rails are identical trees and a node spreads its traffic evenly over them"),
            ],
        }
    }

    /// Puts the model on dragonfly `d`: the cycle is a byte time of the
    /// fastest link class, each port takes its class's cycles per byte, and
    /// `nodes_per_router` nodes share a router.
    fn fit_dragonfly(&mut self, d: &tofusim_topology::dragonfly::Dragonfly, space: &crate::node_space::DragonflySpace) {
        self.set_link_Bps(space.reference_Bps);
        self.router.nodes_per_router = d.nodes_per_router;
        self.router.port_cycles_per_byte = space.port_cycles_per_byte.clone();
    }

    /// A dragonfly of no particular hardware: the BG/L model's host costs
    /// and buffers, an assumed 100 ns hop, with the hop-class VC policy and the link classes'
    /// rates; with several nodes per router, two FIFOs per node fed at the
    /// NIC rate.
    pub fn generic_dragonfly(
        d: &tofusim_topology::dragonfly::Dragonfly,
        net: &Network,
        space: &crate::node_space::DragonflySpace,
    ) -> Self {
        let mut m = Self::bgl();
        m.generation = Generation::GenericDragonfly;
        m.hop_latency_ns = GENERIC_DRAGONFLY_HOP_NS;
        m.sources.retain(|(k, _)| *k != "hop latency");
        m.sources.push(("hop latency", "[MEM] assumed: 100 ns per router + link hop, the class of the Aries (about 100 ns per hop [S:002]) and of EDR fat-tree switches; no particular dragonfly's figure"));
        m.sources.push(("vc_buffer_bytes", "[DER] whole packets covering the credit loop (wire time + 2 hops of 100 ns) on the fastest link class, at least BG/L's 1 KiB"));
        m.fit_dragonfly(d, space);
        cover_credit_loop(&mut m.router);
        let r = &mut m.router;
        r.escape = Escape::HopClass;
        r.dynamic_vcs = 0;
        r.priority_vc = false;
        if d.nodes_per_router > 1 {
            r.injection_fifos = 2;
            r.priority_fifos = 0;
            r.host_bytes_per_cycle = net.injection_per_node_Bps() / space.reference_Bps;
        }
        m.routing = RoutingMode::Deterministic;
        m.tnis = 1;
        m
    }

    /// The Cray Aries model on dragonfly `d` ([S:002]; every value's
    /// source in `sources` and docs/communication.md). The cycle is a byte
    /// time of the fastest link class; slower classes (rank-3 optical) take
    /// proportionally more cycles per byte.
    pub fn for_dragonfly(
        d: &tofusim_topology::dragonfly::Dragonfly,
        net: &Network,
        space: &crate::node_space::DragonflySpace,
    ) -> Self {
        let mut m = Self::aries();
        m.fit_dragonfly(d, space);
        let nic = net.nic.host_limit_Bps.unwrap_or(net.injection_per_node_Bps());
        m.host_limit_Bps = Some(nic);
        m.router.host_bytes_per_cycle = aries_host_packet_Bps(nic) / m.link_Bps;
        m
    }

    /// Puts the model on links of `link_Bps` (the cycle is their byte
    /// time): the hop and token latencies keep their nanoseconds.
    pub fn set_link_Bps(&mut self, link_Bps: f64) {
        self.link_Bps = link_Bps;
        let hop = ns_per_hop_cycles(self.hop_latency_ns, link_Bps).max(1);
        self.router.hop_latency_cycles = hop;
        self.router.token_latency_cycles = hop;
    }

    /// Length of one network cycle (a byte time of a link), ns.
    pub fn cycle_ns(&self) -> f64 {
        1e9 / self.link_Bps
    }

    fn ns_to_cycles(&self, ns: f64) -> u64 {
        (ns / self.cycle_ns()).round() as u64
    }

    fn applies(when: When, modes: &Modes) -> bool {
        match when {
            When::Always => true,
            When::DescriptorInMemory => modes.descriptor == Descriptor::Memory,
            When::NoCacheInjection => !modes.cache_injection,
            When::FarCmg => modes.cmg == Cmg::Far,
        }
    }

    /// Sum of the components of one side under `modes`, ns.
    pub fn side_ns(&self, side: Side, modes: &Modes) -> f64 {
        self.components
            .iter()
            .filter(|c| c.side == side && Self::applies(c.when, modes))
            .map(|c| c.ns)
            .sum()
    }

    /// The host timing the packet engine's schedule executor uses.
    pub fn host_timing(&self, modes: &Modes) -> HostTiming {
        let per_cycle = |bps: f64| bps * self.cycle_ns() * 1e-9;
        HostTiming {
            send_overhead_cycles: self.ns_to_cycles(self.side_ns(Side::Send, modes)),
            recv_overhead_cycles: self.ns_to_cycles(self.side_ns(Side::Receive, modes)),
            reduce_bytes_per_cycle: per_cycle(self.reduce_Bps),
            copy_bytes_per_cycle: per_cycle(self.copy_Bps),
            wire_overhead_bytes: self.router.overhead_bytes,
            chunk_bytes: self.router.chunk_bytes,
            cycle_ns: self.cycle_ns(),
            tnis: self.tnis,
        }
    }
}

/// Router parameters shared by the Tofu generations: dimension-order
/// routing with dateline VC pairs on the rings, whole-packet virtual
/// cut-through, one injection FIFO per TNI.
fn tofu_router(packet_bytes: u32, overhead_bytes: u32, hop_cycles: u32, tnis: u8) -> RouterParams {
    RouterParams {
        dynamic_vcs: 0,
        escape: Escape::DatelineDimension,
        priority_vc: false,
        vc_buffer_bytes: 4 * packet_bytes,
        chunk_bytes: 32,
        max_packet_bytes: packet_bytes,
        overhead_bytes,
        hop_latency_cycles: hop_cycles,
        token_latency_cycles: hop_cycles,
        paths: 2,
        arbitration: Arbitration::Random,
        slq_fraction: 0.0,
        // Through traffic and injection share an output fairly.
        network_priority: 0.5,
        jsq: false,
        jsq_ranges: 4,
        injection_fifos: tnis,
        priority_fifos: 0,
        injection_fifo_bytes: 4 * packet_bytes,
        fifo_select: FifoSelect::RoundRobin,
        host_bytes_per_cycle: f64::INFINITY,
        nodes_per_router: 1,
        port_cycles_per_byte: Vec::new(),
        class_vcs: 1,
        virtual_output_queues: false,
    }
}

/// Blue Gene/L link rate, bytes per second ([S:004]: 1.4 Gb/s bit-serial).
const BGL_LINK_BPS: f64 = 175e6;
/// BG/L router + link latency per hop, ns: 16 cycles of the 175 MB/s link
/// ([MEM]; the source describes an 8-stage input pipeline, not its time).
const BGL_HOP_NS: f64 = 16.0 * 1e9 / BGL_LINK_BPS;
/// A generic dragonfly router's hop, ns ([MEM], assumed: the Aries and
/// fat-tree class, not a published figure of any one machine).
const GENERIC_DRAGONFLY_HOP_NS: f64 = 100.0;
/// Aries router + link latency per hop, ns ([S:002]: about 100 ns per
/// additional router hop).
const ARIES_HOP_NS: f64 = 100.0;
/// The Aries router's buffering equivalent ([MEM], see `aries()` sources):
/// receiver-to-sender paths per input, VCs per hop class, injection FIFOs
/// per node.
const ARIES_PATHS: u8 = 4;
const ARIES_CLASS_VCS: u8 = 2;
const ARIES_FIFOS_PER_NODE: u8 = 4;
/// Rate at which an Aries NIC takes data from its node (PCIe), bytes/s.
const ARIES_NIC_BPS: f64 = 10e9;

/// The NIC's packet rate for a host data rate: the NIC adds the headers
/// (32 of every 96 bytes of a full packet), so the engine's host interface,
/// which counts packet bytes, runs 96/64 faster than the data.
#[allow(non_snake_case)]
fn aries_host_packet_Bps(data_Bps: f64) -> f64 {
    data_Bps * 96.0 / 64.0
}

/// The Tofu packet format used for every generation: up to 1,920 payload
/// bytes behind a 64-byte header (1,984 bytes, 62 chunks of 32 bytes), and
/// 32 bytes of link overhead per packet (CRC, framing, gap).
const TOFU_PAYLOAD_BYTES: u32 = 1920;
const TOFU_HEADER_BYTES: u32 = 64;
const TOFU_OVERHEAD_BYTES: u32 = 32;
/// Lanes of a TofuD link ([S:000]: 2 × 28.05 Gbps).
pub(crate) const TOFUD_LANES: u32 = 2;
/// TofuD's split mode, its links' normal operation ([S:000],
/// [S:000]): every packet is sliced over the lanes and each slice carries
/// a copy of the routing header, so that virtual cut-through still works.
/// The copies are wire bytes the other generations do not send:
/// (lanes − 1) headers per packet, here the whole 64-byte header ([MEM]:
/// the routing header's own size is not public).
const TOFUD_SPLIT_COPY_BYTES: u32 = (TOFUD_LANES - 1) * TOFU_HEADER_BYTES;
const TOFUD_SPLIT_SOURCE: &str = "[S:000] TofuD slices every packet over its 2 lanes, each slice with a copy of the routing header: (2 - 1) x 64 B more per packet on the wire ([MEM] the copy is the whole 64-B header); `[link_errors] packet_slicing` models the lanes one by one, and then this copy is the protocol's, not the format's";
const TOFU_FORMAT_SOURCE: &str = "[PUB] 1,920 B maximum data per packet: uTofu max_mtu on Fugaku, as reported in RIKEN's libfabric Tofu provider (github.com/yutaka-ishikawa/libfabric, utf_conf.h); [MEM] 64 B header and 32 B per-packet link overhead, and the same format for Tofu1 and Tofu2 (not public: docs/sources.md, open item 5). With them the Tofu1 put efficiency 1920/2016 = 0.952 follows, so P3 for Tofu1 counts as fitted";

/// Wire bytes per packet that generation `g`'s packet format adds for
/// split mode (TofuD's lanes' routing-header copies; 0 elsewhere).
pub fn split_copy_bytes(g: Generation) -> u32 {
    match g {
        Generation::Tofud => TOFUD_SPLIT_COPY_BYTES,
        Generation::Tofu1 | Generation::Tofu2 | Generation::Bgl | Generation::Aries | Generation::GenericDragonfly | Generation::FatTree => 0,
    }
}

/// The generic fat-tree switch's packet: MTU and header, bytes ([MEM]).
const FATTREE_MTU_BYTES: u32 = 2048;
const FATTREE_HEADER_BYTES: u32 = 32;
/// Switch + link latency per hop, ns ([MEM]).
const FATTREE_HOP_NS: f64 = 100.0;
/// Per-packet link framing of the generic fat-tree switch, bytes ([MEM]).
const FATTREE_OVERHEAD_BYTES: u32 = 8;
/// Crossbar transfers an input may have under way at once: an internal
/// speedup of 2, with which a switch of virtual output queues can behave
/// as an output-queued one (Chuang, Goel, McKeown and Prabhakar, "Matching
/// output queueing with a combined input/output-queued switch", IEEE JSAC
/// 17(6), 1999) ([MEM]: the vendors' speedups are not public).
const FATTREE_SPEEDUP: u8 = 2;

/// Maximum packets one virtual output queue (and one injection FIFO)
/// holds: enough to cover the credit loop — the packet's own time on the
/// wire plus a hop there and a hop back for its credit — so one output's
/// queue alone can keep its link busy, as it can in the shared input
/// buffer of a real switch. Derived from the hop latency and the packet
/// (3 on 12.5 GB/s links and 100 ns hops), not fitted.
fn fattree_voq_packets(hop_cycles: u32, wire_bytes: u32) -> u32 {
    (2 * hop_cycles + wire_bytes).div_ceil(wire_bytes)
}

/// A fat-tree switch's virtual output queues per input and a node's
/// injection FIFOs (keyed by the output at its leaf): one per output of
/// the widest switch, `outputs`, within the engine's limits — at most
/// 16 FIFOs per node and [`tofusim_packet::MAX_VCS`] VCs per input, and
/// [`tofusim_packet::MAX_QUEUES`] queues per switch (`ports` inputs and
/// `npr` nodes' FIFOs). Where the limits bind, outputs share a queue
/// (output number modulo the queues): TaihuLight's 256-node leaves keep
/// 2 FIFOs per node and 14 queues per input.
fn fattree_queues(ports: usize, npr: usize, outputs: usize) -> (u8, u8) {
    let mut fifos = outputs.clamp(1, 16);
    while fifos > 1 && npr * fifos > tofusim_packet::MAX_QUEUES / 2 {
        fifos /= 2;
    }
    let room = tofusim_packet::MAX_QUEUES.saturating_sub(npr * fifos) / ports.max(1);
    let voqs = outputs.min(tofusim_packet::MAX_VCS).min(room).max(1);
    (voqs as u8, fifos as u8)
}

/// Grows a VC's buffer to whole packets covering its credit loop (a
/// packet's wire time plus a hop there and a token's hop back), so one VC
/// can keep its link busy ([DER]); never below what it was.
fn cover_credit_loop(r: &mut RouterParams) {
    let loop_bytes = r.hop_latency_cycles + r.token_latency_cycles + r.max_packet_bytes + r.overhead_bytes;
    r.vc_buffer_bytes = r.vc_buffer_bytes.max(loop_bytes.div_ceil(r.max_packet_bytes) * r.max_packet_bytes);
}

fn ns_per_hop_cycles(ns: f64, link_bps: f64) -> u32 {
    (ns * link_bps * 1e-9).round() as u32
}

impl CommModel {
    fn tofu(
        generation: Generation,
        link_bps: f64,
        tnis: u8,
        hop_ns: f64,
        components: Vec<Component>,
    ) -> Self {
        let packet = TOFU_PAYLOAD_BYTES + TOFU_HEADER_BYTES;
        Self {
            generation,
            link_Bps: link_bps,
            tnis,
            hop_latency_ns: hop_ns,
            router: tofu_router(packet, TOFU_OVERHEAD_BYTES, ns_per_hop_cycles(hop_ns, link_bps), tnis),
            routing: RoutingMode::Deterministic,
            packet_bytes: packet,
            header_bytes: TOFU_HEADER_BYTES,
            components,
            // SPARC64 VIIIfx / A64FX-class hosts: a summing receive reads two
            // operands and writes one: a third of the memory bandwidth.
            reduce_Bps: 64e9 / 3.0,
            copy_Bps: 64e9 / 2.0,
            host_limit_Bps: None,
            sources: vec![
                ("packet format", TOFU_FORMAT_SOURCE),
                ("routing", "[PUB] dimension order X, Y, Z, A, C, B (Mynavi article on the K computer; docs/sources.md)"),
                ("virtual channels", "[MEM] a dateline pair per ring for deadlock freedom; buffer of 4 maximum packets per VC"),
                ("hop latency", "[MEM] about 100 ns per router hop (router pipeline + link)"),
                ("reduce rate", "[MEM] the K computer's node: 64 GB/s host memory bandwidth, a sum moves 3 operands: 21 GB/s (copies 32 GB/s); Tofu2 and TofuD keep K's rates (assumed: their hosts' own memory, HMC and HBM2, is faster and not modelled)"),
            ],
        }
    }

    /// Tofu1 (K computer, FX10). The host components are fitted to the
    /// 8-byte put latencies of [S:000] (0.91 µs with a direct descriptor,
    /// 1.15 µs with the descriptor in memory): those two figures are
    /// calibration, not validation.
    pub fn tofu1() -> Self {
        Self::tofu(
            Generation::Tofu1,
            5.0e9,
            4,
            100.0,
            vec![
                Component {
                    name: "send: CPU writes a direct descriptor, TNI reads the data",
                    ns: 395.0,
                    side: Side::Send,
                    when: When::Always,
                    source: "[FIT] 0.91 us 8-byte put [S:000], shared with the receive side",
                },
                Component {
                    name: "send: TNI fetches the descriptor from memory",
                    ns: 240.0,
                    side: Side::Send,
                    when: When::DescriptorInMemory,
                    source: "[FIT] 1.15 - 0.91 us [S:000]",
                },
                Component {
                    name: "receive: TNI writes the data to memory, completion queue",
                    ns: 395.0,
                    side: Side::Receive,
                    when: When::Always,
                    source: "[FIT] 0.91 us 8-byte put [S:000]",
                },
            ],
        )
    }

    /// Tofu2 (FX100): the router and TNIs on the CPU die, cache injection.
    pub fn tofu2() -> Self {
        Self::tofu(
            Generation::Tofu2,
            12.5e9,
            4,
            100.0,
            vec![
                Component {
                    name: "send: CPU writes the descriptor, on-die TNI reads the data",
                    ns: 300.0,
                    side: Side::Send,
                    when: When::Always,
                    source: "[FIT] 0.71 us 8-byte put with cache injection [S:000]",
                },
                Component {
                    name: "receive: TNI injects the data into the cache",
                    ns: 300.0,
                    side: Side::Receive,
                    when: When::Always,
                    source: "[FIT] 0.71 us [S:000]",
                },
                Component {
                    name: "receive: write to memory instead of the cache",
                    ns: 160.0,
                    side: Side::Receive,
                    when: When::NoCacheInjection,
                    source: "[FIT] 0.87 - 0.71 us [S:000]",
                },
            ],
        )
    }

    /// TofuD (Fugaku): 6 TNIs, 4 CMGs per chip, links in split mode.
    pub fn tofud() -> Self {
        let mut m = Self::tofu(
            Generation::Tofud,
            6.8e9,
            6,
            80.0,
            vec![
                Component {
                    name: "send: CPU writes the descriptor, TNI reads the data (near CMG)",
                    ns: 198.0,
                    side: Side::Send,
                    when: When::Always,
                    source: "[FIT] 0.49 us 8-byte put, near CMG [S:000]",
                },
                Component {
                    name: "receive: TNI injects the data into the cache",
                    ns: 198.0,
                    side: Side::Receive,
                    when: When::Always,
                    source: "[FIT] 0.49 us [S:000]",
                },
                Component {
                    name: "send: the core's CMG is far from the TNI",
                    ns: 50.0,
                    side: Side::Send,
                    when: When::FarCmg,
                    source: "[FIT] 0.54 - 0.49 us [S:000]",
                },
            ],
        );
        m.router.overhead_bytes += TOFUD_SPLIT_COPY_BYTES;
        m.sources.push(("split mode", TOFUD_SPLIT_SOURCE));
        m
    }

    /// Cray Aries (Cascade, XC): 64-byte payload packets, the hop-class VC
    /// policy of the dragonfly routing, one NIC per node fed over PCIe.
    pub fn aries() -> Self {
        let link_Bps = 5.25e9;
        let hop = ns_per_hop_cycles(ARIES_HOP_NS, link_Bps);
        Self {
            generation: Generation::Aries,
            link_Bps,
            tnis: 1,
            hop_latency_ns: ARIES_HOP_NS,
            router: RouterParams {
                dynamic_vcs: 0,
                escape: Escape::HopClass,
                priority_vc: false,
                vc_buffer_bytes: 2048,
                chunk_bytes: 32,
                max_packet_bytes: 96,
                overhead_bytes: 0,
                hop_latency_cycles: hop,
                token_latency_cycles: hop,
                paths: ARIES_PATHS,
                arbitration: Arbitration::Random,
                slq_fraction: 0.0,
                network_priority: 0.5,
                jsq: false,
                jsq_ranges: 4,
                injection_fifos: ARIES_FIFOS_PER_NODE,
                priority_fifos: 0,
                injection_fifo_bytes: 1024,
                fifo_select: FifoSelect::RoundRobin,
                host_bytes_per_cycle: aries_host_packet_Bps(ARIES_NIC_BPS) / link_Bps,
                nodes_per_router: 4,
                port_cycles_per_byte: Vec::new(),
                class_vcs: ARIES_CLASS_VCS,
                virtual_output_queues: false,
            },
            routing: RoutingMode::Deterministic,
            packet_bytes: 96,
            header_bytes: 32,
            components: vec![
                Component {
                    name: "send: MPI software, FMA descriptor write over PCIe, NIC request",
                    ns: 600.0,
                    side: Side::Send,
                    when: When::Always,
                    source: "[FIT] half of the 1.2 us same-Aries MPI latency [S:002]; that figure is then not an independent check",
                },
                Component {
                    name: "receive: NIC write over PCIe, completion, MPI matching",
                    ns: 600.0,
                    side: Side::Receive,
                    when: When::Always,
                    source: "[FIT] half of the 1.2 us same-Aries MPI latency [S:002]",
                },
            ],
            reduce_Bps: 5e9,
            copy_Bps: 10e9,
            host_limit_Bps: Some(ARIES_NIC_BPS),
            sources: vec![
                ("packet_bytes", "[MEM] Aries packets carry up to 64 bytes of payload; the header, framing and the share of the response packet are modelled as 32 bytes (the engine's chunk), so a link carries 2/3 of its rate as data"),
                ("overhead_bytes", "[DER] 0: framing is inside the 32-byte header"),
                ("vc_buffer_bytes", "[DER] 2 KiB per VC covers the round trip of a 100 ns hop at 5.25 GB/s"),
                ("hop latency", "[S:002] about 100 ns per additional router hop, used as the router + link latency (the +100 ns/hop figure is then a consistency check)"),
                ("NIC host interface", "[MEM] PCIe Gen3 x16: 15.75 GB/s raw, about 10 GB/s of data after protocol overhead (the Piz Daint preset's injection); the NIC adds the headers, so full packets leave it at 10 x 96/64 = 15 GB/s"),
                ("nodes_per_router", "[S:002] 4 nodes per Aries"),
                ("router buffering", "[MEM] a documented equivalent of the YARC/Aries tiles (docs/sources.md, Cray Aries): a packet leaves its input buffer for a row buffer before its output is free, so one input feeds several outputs at once (4 receiver-to-sender paths per input) and a blocked head does not hold the packets of the other VCs of its hop class (2 VCs per class, JSQ between them); the row and column buffers themselves are not modelled"),
                ("NIC", "[MEM] the NIC keeps many transfers outstanding (FMA and BTE engines; docs/sources.md, Cray Aries): 4 injection FIFOs per node, so one busy destination does not block the node"),
                ("reduce/copy rates", "[MEM] Xeon node: about 5 GB/s summing, 10 GB/s copying"),
            ],
        }
    }

    /// Blue Gene/L torus: the packet engine's BG/L router, 256-byte packets
    /// with a 16-byte software header.
    pub fn bgl() -> Self {
        Self {
            generation: Generation::Bgl,
            link_Bps: BGL_LINK_BPS,
            tnis: 1,
            hop_latency_ns: BGL_HOP_NS,
            router: RouterParams::bgl(),
            routing: RoutingMode::Adaptive,
            packet_bytes: 256,
            header_bytes: 16,
            components: vec![
                Component {
                    name: "send: MPI software and injection FIFO write",
                    ns: 1500.0,
                    side: Side::Send,
                    when: When::Always,
                    source: "[MEM] BG/L MPI latency about 3 us, split evenly",
                },
                Component {
                    name: "receive: reception FIFO read and MPI matching",
                    ns: 1500.0,
                    side: Side::Receive,
                    when: When::Always,
                    source: "[MEM] BG/L MPI latency about 3 us, split evenly",
                },
            ],
            reduce_Bps: 1.4e9,
            copy_Bps: 2.8e9,
            host_limit_Bps: None,
            sources: vec![
                ("hop latency", "[MEM] 16 cycles of the 175 MB/s link, 91.4 ns, for the header's hop and a token's return (the source gives the 8-stage input pipeline, not its time); on other links the same 91.4 ns"),
                ("packet_bytes", "[S:004] 256-byte packets, 32-byte chunks"),
                (
                    "header_bytes",
                    "[S:004] 16-byte software header in the B9 study",
                ),
            ],
        }
    }
}
