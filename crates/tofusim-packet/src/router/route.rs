//! Route computation: a packet's candidate outputs at a router, from the
//! routing function (seen only through [`tofusim_routing::Routing`]) —
//! the minimal adaptive ports and the escape port — computed once as the
//! packet joins a queue and kept in the packet.

use crate::config::RoutingMode;
use crate::layout::HEAD_EJECTS;
use crate::net::Net;
use crate::packet::{flags, Pool, AT_DESTINATION};

/// Computes and caches the route of packet `pkt` at router `r`.
#[inline]
pub(crate) fn cache_route(net: &Net, pool: &mut Pool, r: u32, pkt: u32) {
    let (dst, hints, detour, deterministic) = {
        let p = pool.get(pkt);
        (net.router_of(p.dst), net.routing.advance(r, p.hints), if p.hops == 0 { p.detour } else { 0 }, p.flags & flags::DETERMINISTIC != 0)
    };
    let (mask, esc) = if detour != 0 {
        // A route around a failure that begins with a step aside.
        (0, detour - 1)
    } else if dst == r {
        (0, AT_DESTINATION)
    } else {
        let (mask, esc) = net.routing.candidates(r, dst, hints);
        // A packet routed around a failure takes only its escape route.
        let mask = if deterministic { 0 } else { mask };
        (mask, esc.expect("a route exists away from the destination"))
    };
    if let Some(f) = net.faults.as_ref().filter(|f| !f.changes()) {
        // Routes were chosen around the failures at the source; a packet
        // facing a failed link here would be a routing error, not a loss
        // (failures during a run come after some routes were chosen: the
        // output unit discards what meets them).
        let esc_bit = if esc == AT_DESTINATION { 0 } else { 1u64 << esc };
        assert!(
            f.failed_ports(r) & (mask as u64 | esc_bit) == 0,
            "a route into a failed link at router {r} (the source's choice should have avoided it)"
        );
    }
    let p = pool.get_mut(pkt);
    p.hints = hints;
    p.route_mask = mask;
    p.route_escape = esc;
}

/// The outputs a head packet could use: bit per port, [`HEAD_EJECTS`] at
/// its destination; the dynamic ports only in adaptive mode and not for
/// priority packets.
#[inline]
pub(crate) fn head_candidates(net: &Net, pool: &Pool, pkt: u32) -> u64 {
    let p = pool.get(pkt);
    if p.route_escape == AT_DESTINATION {
        HEAD_EJECTS
    } else if net.mode == RoutingMode::Adaptive && p.flags & flags::PRIORITY == 0 && net.lay.dynamic > 0 {
        p.route_mask as u64 | 1 << p.route_escape
    } else {
        1 << p.route_escape
    }
}
