//! The `[link_errors]` table: errors on the wire and the link-level
//! recovery protocol of BG/L (DOMAIN.md §5.8; the engine's
//! `router::link_protocol`), on every router model.
//!
//! ```toml
//! [link_errors]
//! packet_error_rate = 1e-3        # or bit_error_rate = 1e-7 (not both)
//! timeout_cycles = 604            # default: twice a full packet's round trip
//! retransmission_fifo = 3         # packets; default: the round trip + 1
//! crc_escape_probability = 5.96e-8  # default 2^-24 (the 24-bit packet CRC)
//! burst_error_rate = 0.3          # Gilbert-Elliott bursts: the three keys together
//! mean_burst_packets = 20
//! mean_gap_packets = 100000
//! links = [{ node = [0, 0, 0], port = "x+", packet_error_rate = 0.01 }]
//! ```

use tofusim_packet::{Bursts, ErrorRate, LinkErrors, RouterParams};
use tofusim_routing::Routing;
use tofusim_topology::Topology;

use crate::error::Result;
use crate::section::Section;

/// The 24-bit packet CRC misses a corruption with probability 2⁻²⁴.
pub const CRC_ESCAPE: f64 = 1.0 / (1u64 << 24) as f64;

/// The rate of a table: `packet_error_rate` or `bit_error_rate`, one of
/// them (`required`: at least one).
fn error_rate(sec: &Section, required: bool) -> Result<Option<ErrorRate>> {
    let p = sec.float("packet_error_rate", 0.0, 0.999_999)?;
    let b = sec.float("bit_error_rate", 0.0, 1e-2)?;
    match (p, b) {
        (Some(_), Some(_)) => Err(sec.error("bit_error_rate", "give packet_error_rate or bit_error_rate, not both")),
        (Some(p), None) => Ok(Some(ErrorRate::PerPacket(p))),
        (None, Some(b)) => Ok(Some(ErrorRate::PerBit(b))),
        (None, None) if required => Err(sec.error("packet_error_rate", "missing; expected packet_error_rate (0 to 0.999999, per transmission) or bit_error_rate (0 to 0.01)")),
        (None, None) => Ok(None),
    }
}

/// Parses `[link_errors]` for a network with `routing` and router `p`.
pub fn parse(sec: &Section, topology: &Topology, routing: &Routing, p: &RouterParams) -> Result<LinkErrors> {
    let rate = error_rate(sec, true)?.expect("required");
    // A full packet's round trip: its wire time, the hop there and the
    // acknowledgement's way back with the token return.
    let wire = (p.max_packet_bytes + p.overhead_bytes) as u64;
    let round_trip = wire + p.hop_latency_cycles as u64 + p.token_latency_cycles as u64;
    let timeout_cycles = match sec.int("timeout_cycles", 1, 1 << 40)? {
        Some(t) if (t as u64) < round_trip - wire => {
            return Err(sec.error("timeout_cycles", format!("expected at least {} cycles: the acknowledgement of a packet takes a hop and a token return ({} + {}) after its tail, and a shorter time-out would resend packets that arrived", round_trip - wire, p.hop_latency_cycles, p.token_latency_cycles)))
        }
        Some(t) => t as u64,
        None => 2 * round_trip,
    };
    let retransmission_fifo_packets = sec.int("retransmission_fifo", 1, 1024)?.map_or(round_trip.div_ceil(wire) as u32 + 1, |n| n as u32);
    let crc_escape_probability = sec.float("crc_escape_probability", 0.0, 1.0)?.unwrap_or(CRC_ESCAPE);
    let burst = [sec.float("burst_error_rate", 0.0, 0.999_999)?, sec.float("mean_burst_packets", 1.0, 1e15)?, sec.float("mean_gap_packets", 1.0, 1e15)?];
    let bursts = match burst {
        [Some(error_rate), Some(mean_burst_packets), Some(mean_gap_packets)] => Some(Bursts { error_rate, mean_burst_packets, mean_gap_packets }),
        [None, None, None] => None,
        _ => return Err(sec.error("burst_error_rate", "bursts need burst_error_rate, mean_burst_packets and mean_gap_packets together")),
    };
    let mut links = Vec::new();
    if let Some(v) = sec.get("links") {
        let toml::Value::Array(items) = v else {
            return Err(sec.error("links", "expected an array of tables such as { node = [0, 0, 0], port = \"x+\", packet_error_rate = 0.01 }"));
        };
        for (i, item) in items.iter().enumerate() {
            let key = format!("links[{i}]");
            let toml::Value::Table(t) = item else {
                return Err(sec.error(&key, "expected a table such as { node = [0, 0, 0], port = \"x+\", packet_error_rate = 0.01 } or { routers = [0, 1], ... }"));
            };
            let ls = Section::new(sec.file(), &sec.key_path(&key), t);
            let (a, b, port) = crate::system::link_ref(&ls, topology)?;
            // The direction out of `a` towards `b`: the named port, or the
            // first of `a`'s ports that leads to `b`.
            let port = match port {
                Some(p) => p,
                None => (0..routing.ports() as u8)
                    .find(|&q| routing.neighbor(a, q).is_some_and(|(w, _)| w == b))
                    .ok_or_else(|| ls.error("routers", format!("no port of router {a} leads to router {b}")))?,
            };
            let r = error_rate(&ls, true)?.expect("required");
            if links.iter().any(|&(x, y, _)| (x, y) == (a, port)) {
                return Err(ls.error("port", "this link is listed twice"));
            }
            links.push((a, port, r));
            match topology {
                Topology::Torus(_) | Topology::Tofu(_) => ls.finish(&["node", "port", "packet_error_rate", "bit_error_rate"])?,
                _ => ls.finish(&["routers", "packet_error_rate", "bit_error_rate"])?,
            }
        }
    }
    sec.finish(&[
        "packet_error_rate",
        "bit_error_rate",
        "timeout_cycles",
        "retransmission_fifo",
        "crc_escape_probability",
        "burst_error_rate",
        "mean_burst_packets",
        "mean_gap_packets",
        "links",
    ])?;
    Ok(LinkErrors { rate, links, bursts, timeout_cycles, retransmission_fifo_packets, crc_escape_probability })
}
