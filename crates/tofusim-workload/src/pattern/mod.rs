//! The traffic patterns, one module each, behind two traits: an open-loop
//! pattern is a [`Destinations`] (where a node's next packet goes), a
//! finite one a [`FiniteSource`] (the packets each node sends, and what
//! it answers a delivery with). Both engines take a pattern's traffic from
//! its module: the packet engine packet by packet, the flow model as
//! [`Message`]s.
//!
//! Adding a pattern: its module, a variant of [`crate::OpenPattern`] or
//! [`crate::FinitePattern`] (its parameters, as results print them) and of
//! [`PatternName`] (its name in an experiment file); the compiler then
//! asks for its arm in [`bind_open`] / [`bind_finite`] and in
//! [`PatternName::runs_on`].

mod all_to_all;
mod fill;
mod group_shift;
mod hot_burst;
mod hot_region;
mod neighbor;
mod ping_pong;
mod shift;
mod tornado;
mod trace;
mod transpose;
mod uniform;

pub use fill::Fill;
pub use hot_region::region_nodes;
pub use ping_pong::node_at_hops;

use std::fmt::Debug;

use crate::space::{Alive, NodeSpace};
use crate::{FinitePattern, NewMessage, NewPacket, OpenPattern, PacketFormat, Rng, TracePacket, WorkloadError};

/// An open-loop pattern bound to a node space.
pub trait Destinations: Debug + Send + Sync {
    /// A destination for a new packet from `src`, or `None` when `src`
    /// sends nothing under this pattern (a transpose's fixed point).
    fn destination(&self, src: u32, rng: &mut Rng) -> Option<u32>;

    /// The same on a network with failed nodes (`src` alive): a random
    /// pattern draws again, a few times (a group or region may be mostly
    /// failed); a fixed one gives up at once when its partner failed.
    fn destination_alive(&self, src: u32, alive: &Alive, rng: &mut Rng) -> Option<u32> {
        for _ in 0..if self.is_random() { 64 } else { 1 } {
            match self.destination(src, rng) {
                Some(d) if alive.is_failed(d) => continue,
                d => return d,
            }
        }
        None
    }

    /// Whether the destination is drawn (rather than a function of `src`).
    fn is_random(&self) -> bool {
        false
    }

    /// The nodes that take the hot traffic, sorted (hot region).
    fn region(&self) -> &[u32] {
        &[]
    }

    /// Drops the failed nodes from what the pattern draws among, or
    /// refuses when the pattern cannot run without them.
    fn on_failed(&mut self, _alive: &Alive) -> Result<(), WorkloadError> {
        Ok(())
    }

    fn clone_box(&self) -> Box<dyn Destinations>;
}

/// A finite pattern bound to a node space.
pub trait FiniteSource: Debug + Send + Sync {
    /// Send lanes per node (separate software send queues).
    fn lanes(&self) -> usize {
        1
    }

    /// How many packets `node` (alive) sends at the start in `lane`.
    fn initial_packets(&self, node: u32, lane: usize) -> u64;

    /// The `i`-th of them.
    fn packet(&self, node: u32, lane: usize, i: u64) -> NewPacket;

    /// A packet with `tag` delivered (or deposited) at `node` at cycle `t`:
    /// the messages `node` answers with.
    fn on_delivery(&mut self, _node: u32, _t: u64, _tag: u32, _out: &mut Vec<NewMessage>) {}

    /// Drops the failed nodes, or refuses when the pattern needs them.
    fn on_failed(&mut self, _alive: &Alive) -> Result<(), WorkloadError> {
        Ok(())
    }

    /// The pattern's messages, as the flow model takes them.
    fn messages(&self) -> Result<Vec<Message>, WorkloadError>;

    /// Messages the flow model will hold at most (before building them):
    /// bounds its memory estimate.
    fn message_count(&self) -> u64;

    /// The nodes that take the traffic (hot spot, hot burst), sorted.
    fn region(&self) -> &[u32] {
        &[]
    }

    /// Trace rows.
    fn trace(&self) -> &[TracePacket] {
        &[]
    }

    /// Line and plane fill state.
    fn fill(&self) -> Option<&Fill> {
        None
    }

    /// Ping-pong: the two nodes and the round trips (start, end cycles).
    fn rounds(&self) -> Option<(u32, u32, Vec<(u64, u64)>)> {
        None
    }

    /// What a split run's partition learned about the nodes `owned`
    /// accepts, and its merge ([`crate::NodeState`]).
    fn node_state(&self, _owned: &dyn Fn(u32) -> bool) -> crate::NodeState {
        crate::NodeState::default()
    }
    fn absorb(&mut self, _s: &crate::NodeState) {}

    fn clone_box(&self) -> Box<dyn FiniteSource>;
}

/// One message of a finite pattern, for the flow model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Message {
    pub src: u32,
    pub dst: u32,
    pub packets: u64,
    /// Bytes on the router, all packets.
    pub bytes: u64,
    pub payload_bytes: u64,
    /// Cycle the software hands it over.
    pub release_cycle: u64,
    /// The message it answers (sent once that one has arrived and the
    /// node has turned around).
    pub answers: Option<usize>,
}

/// Binds an open-loop pattern to a node space.
pub fn bind_open(p: &OpenPattern, space: &NodeSpace) -> Result<Box<dyn Destinations>, WorkloadError> {
    Ok(match p {
        OpenPattern::Uniform => Box::new(uniform::Uniform::new(space)),
        OpenPattern::HotRegion { hot_fraction, origin, shape } => Box::new(hot_region::HotRegion::new(space, *hot_fraction, origin, shape)?),
        OpenPattern::Transpose => Box::new(transpose::Transpose::new(space)?),
        OpenPattern::Tornado => Box::new(tornado::Tornado::new(space)?),
        OpenPattern::Neighbor => Box::new(neighbor::Neighbor::new(space)?),
        OpenPattern::Shift { axis, hops } => Box::new(shift::Shift::new(space, *axis, *hops)?),
        OpenPattern::GroupShift { group_nodes } => Box::new(group_shift::GroupShift::new(space, *group_nodes)),
    })
}

/// Binds a finite pattern to a node space.
pub fn bind_finite(p: &FinitePattern, space: &NodeSpace, format: PacketFormat, seed: u64) -> Result<Box<dyn FiniteSource>, WorkloadError> {
    Ok(match p {
        FinitePattern::AllToAll { message_bytes } => Box::new(all_to_all::AllToAll::new(space, format, *message_bytes, seed)),
        FinitePattern::HotBurst { packets, origin, shape } => Box::new(hot_burst::HotBurst::new(space, format, *packets, origin, shape, seed)?),
        FinitePattern::PingPong { hops, message_bytes, repetitions } => Box::new(ping_pong::PingPong::new(space, format, *hops, *message_bytes, *repetitions)?),
        FinitePattern::LineFill { axis, message_bytes } => Box::new(Fill::new(grid(space, "line-fill")?, vec![*axis], *message_bytes, format)?),
        FinitePattern::PlaneFill { axes, message_bytes } => Box::new(Fill::new(grid(space, "plane-fill")?, axes.to_vec(), *message_bytes, format)?),
        FinitePattern::Trace { packets } => Box::new(trace::Trace::new(space, format, packets.clone())?),
    })
}

/// The torus of a pattern that needs coordinates.
fn grid<'a>(space: &'a NodeSpace, pattern: &str) -> Result<&'a tofusim_topology::Torus, WorkloadError> {
    space.grid().ok_or_else(|| WorkloadError { key: "pattern", message: format!("{pattern} needs node coordinates; {} has none", space.label()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{Kind, Workload};
    use tofusim_topology::Torus;

    /// An example of each pattern, with parameters valid on a 4×4 torus
    /// and on 16 numbered nodes.
    fn example(p: PatternName) -> Kind {
        let open = |pattern| Kind::Open { pattern, load: 0.5 };
        match p {
            PatternName::Uniform => open(OpenPattern::Uniform),
            PatternName::HotRegion => open(OpenPattern::HotRegion { hot_fraction: 0.3, origin: vec![0, 0], shape: vec![2, 2] }),
            PatternName::HotSpot | PatternName::HotBurst => Kind::Finite(FinitePattern::HotBurst { packets: 2, origin: vec![1, 1], shape: vec![1, 2] }),
            PatternName::AllToAll => Kind::Finite(FinitePattern::AllToAll { message_bytes: 500 }),
            PatternName::PingPong => Kind::Finite(FinitePattern::PingPong { hops: 2, message_bytes: 300, repetitions: 2 }),
            PatternName::LineFill => Kind::Finite(FinitePattern::LineFill { axis: 1, message_bytes: 600 }),
            PatternName::PlaneFill => Kind::Finite(FinitePattern::PlaneFill { axes: [0, 1], message_bytes: 600 }),
            PatternName::Trace => Kind::Finite(FinitePattern::Trace { packets: vec![TracePacket { cycle: 3, src: 1, dst: 9, bytes: 64, hints: None }] }),
            PatternName::Transpose => open(OpenPattern::Transpose),
            PatternName::Tornado => open(OpenPattern::Tornado),
            PatternName::Neighbor | PatternName::NearestNeighbor => open(OpenPattern::Neighbor),
            PatternName::GroupShift => open(OpenPattern::GroupShift { group_nodes: 4 }),
            PatternName::Shift => open(OpenPattern::Shift { axis: 0, hops: 3 }),
        }
    }

    /// The registry and the modules agree: a pattern binds on exactly the
    /// node spaces `runs_on` names (group-shift's groups come from the
    /// spec, so it binds anywhere; the experiment file refuses it off a
    /// dragonfly by `runs_on`).
    #[test]
    fn every_pattern_binds_where_the_registry_says_it_runs() {
        let spaces = [
            NodeSpace::Grid(Torus::with_lengths(&[4, 4], &[true, true])),
            NodeSpace::Groups { nodes: 16, group_nodes: 4 },
            NodeSpace::Numbered { nodes: 16 },
        ];
        for space in &spaces {
            for p in PatternName::ALL {
                let bound = Workload::new(example(p), PacketFormat::new(256, 16), space, 1);
                if p == PatternName::GroupShift {
                    assert!(bound.is_ok());
                    continue;
                }
                assert_eq!(bound.is_ok(), p.runs_on(space), "{} on {}: {:?}", p.name(), space.label(), bound.err());
            }
        }
    }

    /// A shift on a fat-tree runs along the numbering, wrapping at the end.
    #[test]
    fn a_shift_without_coordinates_follows_the_numbering() {
        let w = Workload::new(example(PatternName::Shift), PacketFormat::new(256, 16), &NodeSpace::Numbered { nodes: 16 }, 1).unwrap();
        let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(1);
        assert_eq!(w.open_destination(2, &mut rng), Some(5));
        assert_eq!(w.open_destination(14, &mut rng), Some(1));
    }

    /// The flow model's messages carry what the packet engine sends.
    #[test]
    fn messages_carry_the_packets_each_node_sends() {
        let space = NodeSpace::Grid(Torus::with_lengths(&[4, 4], &[true, true]));
        for p in [PatternName::AllToAll, PatternName::HotBurst] {
            let w = Workload::new(example(p), PacketFormat::new(256, 16), &space, 1).unwrap();
            let msgs = w.messages().unwrap();
            for node in 0..16 {
                let sent: u64 = (0..w.initial_packets(node, 0)).map(|i| w.finite_packet(node, 0, i).bytes as u64).sum();
                let listed: u64 = msgs.iter().filter(|m| m.src == node).map(|m| m.bytes).sum();
                assert_eq!(sent, listed, "{} node {node}", p.name());
            }
            assert!(msgs.len() as u64 <= w.message_count());
        }
    }

    #[test]
    fn names_follow_the_variants() {
        for (i, p) in PatternName::ALL.into_iter().enumerate() {
            assert_eq!(p as usize, i);
            assert_eq!(PatternName::parse(p.name()), Some(p));
        }
    }
}

/// Packets of a `message_bytes` message (payload `payload` per packet),
/// and the router bytes and payload of the last.
pub(crate) fn split_message(format: PacketFormat, message_bytes: u64) -> (u32, u16, u16) {
    let payload = (format.packet_bytes - format.header_bytes) as u64;
    let m = message_bytes.max(1);
    let k = m.div_ceil(payload);
    let last_payload = m - (k - 1) * payload;
    (k as u32, format.wire_bytes(last_payload) as u16, last_payload as u16)
}

/// A packet of `bytes` router bytes to `dst` (no hints, lane 0).
pub(crate) fn plain_packet(dst: u32, bytes: u16, payload: u16, tag: u32) -> NewPacket {
    NewPacket { dst, bytes, payload, tag, hints: None, deposit: false, lane: 0, release_cycle: 0 }
}

/// The patterns by the names an experiment file gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PatternName {
    Uniform,
    HotRegion,
    HotSpot,
    HotBurst,
    AllToAll,
    PingPong,
    LineFill,
    PlaneFill,
    Trace,
    Transpose,
    Tornado,
    Neighbor,
    /// `nearest-neighbor`: another name of `neighbor`.
    NearestNeighbor,
    GroupShift,
    Shift,
}

impl PatternName {
    /// Every pattern, in declaration order (tested against
    /// [`Self::ALL_NAMES`]).
    pub const ALL: [PatternName; 15] = [
        Self::Uniform,
        Self::HotRegion,
        Self::HotSpot,
        Self::HotBurst,
        Self::AllToAll,
        Self::PingPong,
        Self::LineFill,
        Self::PlaneFill,
        Self::Trace,
        Self::Transpose,
        Self::Tornado,
        Self::Neighbor,
        Self::NearestNeighbor,
        Self::GroupShift,
        Self::Shift,
    ];

    pub fn name(self) -> &'static str {
        Self::ALL_NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The names, in the order of [`Self::ALL`].
    pub const ALL_NAMES: [&'static str; 15] = [
        "uniform",
        "hot-region",
        "hot-spot",
        "hot-burst",
        "alltoall",
        "pingpong",
        "line-fill",
        "plane-fill",
        "trace",
        "transpose",
        "tornado",
        "neighbor",
        "nearest-neighbor",
        "group-shift",
        "shift",
    ];

    /// Whether the pattern runs on `space`: coordinates for the torus
    /// patterns, groups for group-shift; a shift runs along an axis or,
    /// without coordinates, along the numbering.
    pub fn runs_on(self, space: &NodeSpace) -> bool {
        let grid = space.grid().is_some();
        match self {
            Self::Uniform | Self::AllToAll | Self::Trace | Self::Shift => true,
            Self::GroupShift => space.group_nodes().is_some(),
            Self::HotRegion
            | Self::HotSpot
            | Self::HotBurst
            | Self::PingPong
            | Self::LineFill
            | Self::PlaneFill
            | Self::Transpose
            | Self::Tornado
            | Self::Neighbor
            | Self::NearestNeighbor => grid,
        }
    }

    /// The patterns that run on `space`, for a refusal ("uniform, alltoall, …").
    pub fn running_on(space: &NodeSpace) -> Vec<&'static str> {
        Self::ALL.into_iter().filter(|p| p.runs_on(space) && *p != Self::NearestNeighbor).map(Self::name).collect()
    }
}
