//! # tofusim-routing
//!
//! Routing functions, seen by the engine only through [`Routing`]:
//! candidates (minimal adaptive directions from BG/L hint bits, fat-tree up
//! ports), the escape (deterministic) route — dimension order, direction
//! order, or up/down — and the dateline links of each ring. The engine does
//! the selection (JSQ) and the virtual-channel policy (bubble, dateline
//! pairs).

pub mod deadlock;
pub mod dragonfly;
pub mod fattree;
pub mod faults;
pub mod torus;

pub use dragonfly::{DragonflyMode, DragonflyRouting, LinkKind};
pub use fattree::{FatTreeError, FatTreeMode, FatTreeRouting};
pub use faults::{FaultError, FaultMap, SourceRoute};
pub use torus::{EscapeOrder, TorusRouting};

/// Random numbers for routing decisions (ties at exactly half a ring).
pub type Rng = rand_pcg::Pcg32;

/// A routing function over some topology (static dispatch: the enum is the registry).
pub enum Routing {
    Torus(TorusRouting),
    Dragonfly(DragonflyRouting),
    /// Up/down routing; routers are switches, packets go to leaf switches.
    FatTree(FatTreeRouting),
}

impl Routing {
    /// Network ports per router.
    #[inline]
    pub fn ports(&self) -> usize {
        match self {
            Self::Torus(t) => t.ports(),
            Self::Dragonfly(d) => d.ports(),
            Self::FatTree(f) => f.ports(),
        }
    }

    pub fn routers(&self) -> usize {
        match self {
            Self::Torus(t) => t.routers(),
            Self::Dragonfly(d) => d.routers(),
            Self::FatTree(f) => f.routers(),
        }
    }

    /// Routers with nodes attached, numbered first: every router of a
    /// direct network (torus, Tofu, dragonfly), the leaf switches of a
    /// fat-tree (its upper switches carry no nodes).
    pub fn terminal_routers(&self) -> usize {
        match self {
            Self::Torus(t) => t.routers(),
            Self::Dragonfly(d) => d.routers(),
            Self::FatTree(f) => f.leaf_switches() as usize,
        }
    }

    /// Router reached through `port` of `router`, and the input port it arrives on.
    #[inline]
    pub fn neighbor(&self, router: u32, port: u8) -> Option<(u32, u8)> {
        match self {
            Self::Torus(t) => t.neighbor(router, port),
            Self::Dragonfly(d) => d.neighbor(router, port),
            Self::FatTree(f) => f.neighbor(router, port),
        }
    }

    /// The router and output port that feed input port `in_port` of `router`.
    #[inline]
    pub fn upstream(&self, router: u32, in_port: u8) -> Option<(u32, u8)> {
        // Links are symmetric: the neighbour through `in_port` sends to us
        // through the port on which our packets would arrive at it.
        self.neighbor(router, in_port)
    }

    /// Route state chosen at injection (the hint bits) for a packet from
    /// router `src` to node `dst_local` of router `dst` (its index there;
    /// fat-tree D-mod-K routes by the node).
    #[inline]
    pub fn init(&self, src: u32, dst: u32, dst_local: u32, rng: &mut Rng) -> u8 {
        match self {
            Self::Torus(t) => t.hints(src, dst, rng),
            Self::Dragonfly(d) => d.init(src, dst, rng),
            Self::FatTree(f) => f.init(src, dst, dst_local, rng),
        }
    }

    /// Every route state [`Self::init`] can give a packet from router
    /// `src` to node `dst_local` of router `dst` (the static deadlock
    /// check follows each).
    pub fn initial_states(&self, src: u32, dst: u32, dst_local: u32) -> Vec<u8> {
        match self {
            Self::Torus(t) => t.initial_states(src, dst),
            Self::Dragonfly(d) => d.initial_states(src, dst),
            Self::FatTree(f) => f.initial_states(src, dst, dst_local),
        }
    }

    /// Whether the link out of port `p1` of router `r1` and the link out of
    /// `p2` of `r2` are links of one ring in one direction (a torus axis's
    /// line of routers): the unit a bubble keeps moving.
    pub fn same_ring(&self, r1: u32, p1: u8, r2: u32, p2: u8) -> bool {
        match self {
            Self::Torus(t) => p1 == p2 && t.on_ring_of(r1, r2, p1),
            Self::Dragonfly(_) | Self::FatTree(_) => false,
        }
    }

    /// Minimal ports that bring the packet closer (bit per port).
    #[inline]
    pub fn adaptive_ports(&self, router: u32, dst: u32, hints: u8) -> u16 {
        match self {
            Self::Torus(t) => t.productive_ports(router, dst, hints),
            Self::Dragonfly(_) => 0,
            Self::FatTree(f) => f.adaptive_ports(router, dst, hints),
        }
    }

    /// [`Self::adaptive_ports`] and [`Self::escape_port`] together (a torus
    /// finds both in one pass over its axes).
    #[inline]
    pub fn candidates(&self, router: u32, dst: u32, hints: u8) -> (u16, Option<u8>) {
        match self {
            Self::Torus(t) => t.candidates(router, dst, hints),
            Self::Dragonfly(d) => (0, d.next_port(router, dst, hints)),
            Self::FatTree(f) => (f.adaptive_ports(router, dst, hints), f.escape_port(router, dst, hints)),
        }
    }

    /// The deterministic escape port, `None` at the destination.
    #[inline]
    pub fn escape_port(&self, router: u32, dst: u32, hints: u8) -> Option<u8> {
        match self {
            Self::Torus(t) => t.escape_port(router, dst, hints),
            Self::Dragonfly(d) => d.next_port(router, dst, hints),
            Self::FatTree(f) => f.escape_port(router, dst, hints),
        }
    }

    /// The output a packet for node `dst_node` takes at router `router`,
    /// for routers with virtual output queues (fat-tree switches:
    /// [`FatTreeRouting::output_at`]); `None` on the other topologies,
    /// whose routers keep no per-output queues.
    #[inline]
    pub fn output_at(&self, router: u32, dst_node: u32, hints: u8) -> Option<u32> {
        match self {
            Self::FatTree(f) => Some(f.output_at(router, dst_node, hints)),
            Self::Torus(_) | Self::Dragonfly(_) => None,
        }
    }

    /// True when the link out of `port` is its ring's dateline (wrap) link.
    #[inline]
    pub fn is_dateline(&self, router: u32, port: u8) -> bool {
        match self {
            Self::Torus(t) => t.is_dateline(router, port),
            // Trees have no rings: up/down routes are deadlock-free.
            Self::Dragonfly(_) | Self::FatTree(_) => false,
        }
    }

    /// The ring (escape class) a port belongs to: turning to another ring
    /// re-enters the escape network (bubble rule R2, dateline reset).
    #[inline]
    pub fn ring(&self, port: u8) -> u8 {
        match self {
            Self::Torus(t) => t.ring(port),
            Self::Dragonfly(_) | Self::FatTree(_) => port,
        }
    }

    /// The output port that continues straight from input port `in_port`.
    #[inline]
    pub fn straight(&self, in_port: u8) -> u8 {
        match self {
            Self::Torus(t) => t.straight(in_port),
            Self::Dragonfly(_) | Self::FatTree(_) => in_port,
        }
    }

    /// The route state after reaching `router` (dragonfly Valiant: the
    /// intermediate group reached); tori and fat-trees keep theirs.
    #[inline]
    pub fn advance(&self, router: u32, hints: u8) -> u8 {
        match self {
            Self::Torus(_) => hints,
            Self::Dragonfly(d) => d.advance(router, hints),
            Self::FatTree(f) => f.advance(router, hints),
        }
    }

    /// Virtual-channel class of the link out of `port` (dragonfly: global
    /// links crossed after it); 0 on tori and on fat-trees (up/down
    /// routes need one class).
    #[inline]
    pub fn vc_class(&self, router: u32, src: u32, hints: u8, port: u8) -> u8 {
        match self {
            Self::Torus(_) | Self::FatTree(_) => 0,
            Self::Dragonfly(d) => d.vc_class(router, src, hints, port),
        }
    }

    /// Minimal hop count between two routers.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        match self {
            Self::Torus(t) => t.distance(a, b),
            Self::Dragonfly(d) => d.distance(a, b),
            Self::FatTree(f) => f.distance(a, b),
        }
    }

    pub fn port_name(&self, port: u8) -> String {
        match self {
            Self::Torus(t) => t.port_name(port),
            Self::Dragonfly(d) => d.port_name(port),
            Self::FatTree(f) => f.port_name(port),
        }
    }

    /// The class of the link out of port `port` of `router`, the unit a
    /// run's limits are told in: a torus axis ("X", and Tofu's "A", "B",
    /// "C"), a dragonfly's "local"/"global" (Aries "rank-1", "rank-2",
    /// "rank-3"), a fat-tree's "up"/"down" from a level ("up from L0").
    pub fn link_class(&self, router: u32, port: u8) -> String {
        match self {
            Self::Torus(t) => t.port_name(port).trim_end_matches(['+', '-']).to_string(),
            Self::Dragonfly(d) => match (d.kind(router, port), d.aries_form()) {
                (dragonfly::LinkKind::Local, true) => "rank-1".into(),
                (dragonfly::LinkKind::Rank2, _) => "rank-2".into(),
                (dragonfly::LinkKind::Global, true) => "rank-3".into(),
                (dragonfly::LinkKind::Local, false) => "local".into(),
                (dragonfly::LinkKind::Global, false) => "global".into(),
            },
            Self::FatTree(f) => {
                let label = f.port_label(router, port);
                let dir = label.trim_end_matches(|c: char| c.is_ascii_digit());
                format!("{dir} from L{}", f.locate(router).0)
            }
        }
    }

    pub fn router_label(&self, router: u32) -> String {
        match self {
            Self::Torus(t) => t.router_label(router),
            Self::Dragonfly(d) => d.router_label(router),
            Self::FatTree(f) => f.router_label(router),
        }
    }
}
