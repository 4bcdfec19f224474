//! Transfers on the flow model (crate `tofusim-flow`), on the same systems,
//! communicators, routes and packet formats as the packet engine, for the
//! flow/packet cross-check (issue 7).
//!
//! A message is one flow along its dimension-order route (the engine's
//! escape route with the same order and hint bits). Resources, in wire
//! bytes per second: each directed link (the link rate); each node's
//! injection (its injection capacity, or the host-interface limit where
//! the preset has one); each node's TNIs (one DMA engine each, at the link
//! rate, shared by the messages given to it). Reception is limited by the
//! links into the node only, as in the engine (its reception FIFOs drain at
//! once). Wire bytes: the message's packets, each with its header, rounded
//! to 32-byte chunks, plus the per-packet link overhead. Latency: send
//! overhead + hops × hop latency + receive overhead, added to the
//! bandwidth-shared transfer time. A TNI sends its messages in order: each
//! starts when the one before it on that TNI has finished. Not modelled:
//! buffers, flow control and arbitration (hence no head-of-line blocking in
//! the network and no deadlock).

use rand::SeedableRng;
use tofusim_comm::algorithms::Transfer;
use tofusim_flow::transfers::{completion_times, Message};
use tofusim_flow::Flow;
use tofusim_routing::{EscapeOrder, Routing, TorusRouting};
use tofusim_topology::tofu;

use crate::collective::{setup, Setup};
use crate::comm_model::Modes;
use crate::error::{ConfigError, Result};

/// Completion of a set of transfers that start together.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowTimed {
    /// Per transfer, seconds from the start to its completion at the receiver.
    pub message_seconds: Vec<f64>,
    /// The last completion.
    pub time_seconds: f64,
}

/// `list` (ranks of `system_name`'s communicator) on the flow model.
pub fn transfers(system_name: &str, list: &[Transfer], seed: u64) -> Result<FlowTimed> {
    let s = setup(system_name)?;
    transfers_on(&s, list, seed)
}

/// The same on a prepared [`Setup`].
pub fn transfers_on(s: &Setup, list: &[Transfer], seed: u64) -> Result<FlowTimed> {
    let t = &s.torus;
    let order: Vec<usize> = if tofu::is_tofu(t) {
        tofu::ROUTING_ORDER.to_vec()
    } else {
        (0..t.axes().len()).collect()
    };
    let routing = Routing::Torus(TorusRouting::new(t, &order, EscapeOrder::Dimension));
    let (routers, ports) = (routing.routers(), routing.ports());
    let link_bps = s.model.link_Bps;
    let node_bps = s
        .model
        .host_limit_Bps
        .map_or(s.injection_links * link_bps, |h| h.min(s.injection_links * link_bps));
    // Links, then each node's injection, then each node's TNI lanes (one
    // DMA engine each, at the link rate).
    let tnis = s.model.tnis.max(1) as usize;
    let mut capacity = vec![link_bps; routers * ports];
    capacity.extend(std::iter::repeat_n(node_bps, routers));
    capacity.extend(std::iter::repeat_n(link_bps, routers * tnis));
    let inject = |n: u32| (routers * ports) as u32 + n;
    let lane = |n: u32, tni: u8| (routers * ports + routers + n as usize * tnis + tni as usize % tnis) as u32;
    let payload = (s.model.packet_bytes - s.model.header_bytes) as u64;
    let timing = s.model.host_timing(&Modes::default());
    let cycle_s = s.model.cycle_ns() * 1e-9;
    let mut rng = tofusim_routing::Rng::seed_from_u64(seed);
    let ranks = s.node_of_rank.len() as u32;
    let mut messages = Vec::with_capacity(list.len());
    // The last message given to each TNI lane: a lane sends in order.
    let mut last_on_lane: std::collections::HashMap<(u32, u8), usize> = std::collections::HashMap::new();
    let mut latency = Vec::with_capacity(list.len());
    for tr in list {
        if tr.src >= ranks || tr.dst >= ranks {
            return Err(ConfigError::new("<flow>", "transfers", format!("a rank beyond the {ranks} of the communicator")));
        }
        let (a, b) = (s.node_of_rank[tr.src as usize], s.node_of_rank[tr.dst as usize]);
        let hints = routing.init(a, b, &mut rng);
        let mut links = vec![lane(a, tr.tni), inject(a)];
        let mut r = a;
        while let Some(p) = routing.escape_port(r, b, hints) {
            links.push((r as usize * ports + p as usize) as u32);
            r = routing.neighbor(r, p).expect("routes follow links").0;
        }
        let packets = tr.bytes.div_ceil(payload).max(1);
        let mut wire = 0u64;
        let mut left = tr.bytes;
        for _ in 0..packets {
            let carried = left.min(payload);
            left -= carried;
            wire += (carried + s.model.header_bytes as u64).div_ceil(32) * 32 + s.model.router.overhead_bytes as u64;
        }
        let hops = (links.len() - 2) as u64;
        latency.push(
            (timing.send_overhead_cycles + hops * s.model.router.hop_latency_cycles as u64 + timing.recv_overhead_cycles)
                as f64
                * cycle_s,
        );
        let key = (a, tr.tni % tnis as u8);
        let after = last_on_lane.insert(key, messages.len());
        messages.push(Message {
            flow: Flow { links, cap: f64::INFINITY },
            bytes: wire as f64,
            after,
        });
    }
    let done = completion_times(&capacity, &messages);
    let message_seconds: Vec<f64> = done.iter().zip(&latency).map(|(d, l)| d + l).collect();
    let time_seconds = message_seconds.iter().copied().fold(0.0, f64::max);
    Ok(FlowTimed {
        message_seconds,
        time_seconds,
    })
}
