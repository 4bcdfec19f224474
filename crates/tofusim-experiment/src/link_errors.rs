//! The `[link_errors]` table: errors on the wire and the link-level
//! recovery protocol of BG/L ([S:004]; the engine's
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

use tofusim_packet::{Bursts, ErrorRate, LinkErrors, RouterParams, Slicing};
use tofusim_routing::Routing;
use tofusim_topology::Topology;

use crate::build::Built;
use crate::error::Result;
use crate::generation::Generation;
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

/// Lanes per link of a generation whose links slice packets over their
/// lanes: TofuD's split and duplicate modes [S:000]. Tofu1 (8 lanes) and
/// Tofu2 (4) carry a packet over all their lanes as one channel, with no
/// per-lane header copies: slicing them is a variant no source describes,
/// modelled only when `lanes` is given.
fn lanes_of(g: Generation) -> Option<u8> {
    match g {
        Generation::Tofud => Some(crate::comm_model::TOFUD_LANES as u8),
        Generation::Tofu1 | Generation::Tofu2 | Generation::Bgl | Generation::Aries | Generation::GenericDragonfly | Generation::FatTree => None,
    }
}

/// The packet-slicing keys (TofuD): `packet_slicing = "dynamic" | "split"`
/// with per-lane bit error rates; `None` without `packet_slicing`.
fn slicing(sec: &Section, built: &Built) -> Result<Option<Slicing>> {
    let keys = ["lanes", "lane_bit_error_rates", "monitor_packets", "duplicate_above", "split_below"];
    let Some(mode) = sec.choice("packet_slicing", &["dynamic", "split"])? else {
        if let Some(k) = keys.iter().find(|k| sec.has(k)) {
            return Err(sec.error(k, "applies with packet_slicing = \"dynamic\" or \"split\""));
        }
        return Ok(None);
    };
    let lanes = match (sec.int("lanes", 1, 16)?, lanes_of(built.system.generation)) {
        (Some(n), _) => n as u8,
        (None, Some(n)) => n,
        (None, None) => return Err(sec.error("lanes", format!("missing: packet slicing is TofuD's (split and duplicate modes over its 2 lanes); the {} links carry each packet as one channel, so give lanes to model a sliced variant (Tofu1 links have 8 lanes, Tofu2 4)", built.system.generation.name()))),
    };
    for k in ["packet_error_rate", "links", "burst_error_rate"] {
        if sec.has(k) {
            return Err(sec.error(k, "with packet_slicing the errors are per lane: give bit_error_rate (every lane) or lane_bit_error_rates"));
        }
    }
    let every = sec.float("bit_error_rate", 0.0, 1e-2)?;
    let rates = match sec.get("lane_bit_error_rates") {
        Some(toml::Value::Array(items)) => {
            if every.is_some() {
                return Err(sec.error("lane_bit_error_rates", "give bit_error_rate or lane_bit_error_rates, not both"));
            }
            let v: Option<Vec<f64>> = items.iter().map(|x| x.as_float().or_else(|| x.as_integer().map(|i| i as f64)).filter(|r| (0.0..=1e-2).contains(r))).collect();
            match v {
                Some(v) if v.len() == lanes as usize => v,
                _ => return Err(sec.error("lane_bit_error_rates", format!("expected {lanes} bit error rates (one per lane), each from 0 to 0.01"))),
            }
        }
        Some(_) => return Err(sec.error("lane_bit_error_rates", format!("expected a list of {lanes} bit error rates"))),
        None => match every {
            Some(b) => vec![b; lanes as usize],
            None => return Err(sec.error("bit_error_rate", "missing; with packet_slicing give bit_error_rate (every lane) or lane_bit_error_rates")),
        },
    };
    let dynamic = mode == "dynamic";
    if !dynamic {
        if let Some(k) = ["monitor_packets", "duplicate_above", "split_below"].into_iter().find(|k| sec.has(k)) {
            return Err(sec.error(k, "applies with packet_slicing = \"dynamic\" (a split link never changes mode)"));
        }
    }
    // [MEM] thresholds (the source gives none): duplicating leaves 1/lanes
    // of the link, retransmission about (1 - p) / (1 + 3p) of it at p
    // errors per slice (a time-out and the packets behind, a few packet
    // times); they are equal at p = (lanes - 1) / (lanes + 3): 0.2 on
    // TofuD's 2 lanes. Back to split an order of magnitude lower.
    let l = lanes as f64;
    let duplicate_above = sec.float("duplicate_above", 0.0, 1.0)?.unwrap_or((l - 1.0) / (l + 3.0));
    let split_below = sec.float("split_below", 0.0, 1.0)?.unwrap_or(duplicate_above / 10.0);
    if split_below > duplicate_above {
        return Err(sec.error("split_below", format!("expected at most duplicate_above ({duplicate_above}): a link returns to split mode below it")));
    }
    Ok(Some(Slicing {
        lanes,
        header_bytes: built.model.header_bytes,
        lane_bit_error_rates: rates,
        dynamic,
        monitor_packets: sec.int("monitor_packets", 1, 1 << 30)?.map_or(100, |n| n as u32),
        duplicate_above,
        split_below,
    }))
}

/// Parses `[link_errors]` for the network `built`, with `routing` and router `p`.
pub fn parse(sec: &Section, built: &Built, routing: &Routing, p: &RouterParams) -> Result<LinkErrors> {
    let topology = &built.system.network.topology;
    let slicing = slicing(sec, built)?;
    let rate = match &slicing {
        // Unused: every lane has its rate.
        Some(_) => ErrorRate::PerBit(0.0),
        None => error_rate(sec, true)?.expect("required"),
    };
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
    for ls in sec.tables("links", "{ node = [0, 0, 0], port = \"x+\", packet_error_rate = 0.01 } or { routers = [0, 1], ... }")? {
        let (a, port) = crate::system::link_out(&ls, topology, routing)?;
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
        "packet_slicing",
        "lanes",
        "lane_bit_error_rates",
        "monitor_packets",
        "duplicate_above",
        "split_below",
    ])?;
    Ok(LinkErrors { rate, links, bursts, timeout_cycles, retransmission_fifo_packets, crc_escape_probability, slicing })
}
