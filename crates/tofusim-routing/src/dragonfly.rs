//! Routing on dragonflies ([S:002]): minimal, Valiant, and the
//! candidates of UGAL and of Aries-style adaptive routing; the engine makes
//! the congestion-based choice at injection (it owns the queues).
//!
//! **Ports** of a router: its local links (Kim–Dally: to every other router
//! of the group, in router order; Aries: rank-1 in its chassis, then rank-2
//! to the same slot of the other chassis, each of the parallel links), then
//! its global links in the order of the group's global port numbers. The
//! two ends of a link use their own port indices; the table stores both.
//!
//! **Minimal route**: inside the group, straight to the destination router
//! (Kim–Dally) or rank-1 then rank-2 (Aries); across groups, to the
//! group's gateway router for the destination group (one of the routers
//! holding a global link to it, chosen by the destination so that the
//! gateway does not change along the way), its global link, then local
//! hops in the destination group.
//!
//! **Valiant**: minimal to a random intermediate group, then minimal to the
//! destination. The route state (hint byte): bit 7 = Valiant, bit 6 = the
//! intermediate group has been reached, bits 0–5 = the intermediate group
//! (≤ 64 groups for Valiant).
//!
//! **Spread** (the non-minimal alternative when there is no third group,
//! as in a 2-group Aries): the route keeps the shape local–global–local
//! but takes a random one of 63 other global links to the destination
//! group instead of the destination's own gateway — Valiant through the
//! router at the far end of a random global link. Hint byte: bit 7 clear,
//! bit 6 set, bits 0–5 the salt (1–63) that picks the link.
//!
//! **Virtual channels** ([`DragonflyRouting::vc_class`]): a packet's VC on
//! a link is the number of global links it will have crossed after that
//! link (0, 1, 2). Within one class the local hops go rank-1 before rank-2,
//! and each global hop raises the class, so the channel dependency graph is
//! acyclic: minimal routing needs 2 VCs, Valiant 3.

use crate::Rng;
use rand::RngExt;
use tofusim_topology::dragonfly::{Dragonfly, GroupWiring};

const NONE: u32 = u32::MAX;
const VALIANT: u8 = 0x80;
const REACHED: u8 = 0x40;
const GROUP_BITS: u8 = 0x3f;
/// With `VALIANT` clear: a spread route (bits 0–5: the salt).
const SPREAD: u8 = 0x40;

/// Link class of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    /// Kim–Dally local, or Aries rank-1.
    Local,
    /// Aries rank-2.
    Rank2,
    Global,
}

/// How a packet's route is chosen at injection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DragonflyMode {
    /// Minimal routes; on Aries hashed per packet (Cray's `MIN_HASH`).
    Minimal,
    /// One minimal route per source and destination router pair (Cray's
    /// `IN_ORDER`: "minimal, non-hashed, non-adaptive", every packet of a
    /// pair in order).
    InOrder,
    Valiant,
    /// UGAL with the source router's queues.
    UgalLocal,
    /// UGAL with the queue of the global link each route would take.
    UgalGlobal,
    /// Minimal unless its first port is congested (Aries "adaptive,
    /// prefer minimal"): UGAL-L with the non-minimal side counted double.
    AdaptivePreferMinimal,
    /// Cray's `ADAPTIVE_0` .. `ADAPTIVE_3` (`MPICH_GNI_ROUTING_MODE`):
    /// UGAL-L with a bias towards minimal that grows with the number,
    /// `ADAPTIVE_0` none ("least bias towards minimal", NERSC). The
    /// weights are not public: the non-minimal side counts (3 + b) / 3
    /// times ([MEM] assumption), so `ADAPTIVE_3` is
    /// `AdaptivePreferMinimal`, the mapping [S:002] makes likely (docs/model.md, dragonflies).
    Adaptive(u8),
}

impl DragonflyMode {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "minimal" => Self::Minimal,
            "in-order" => Self::InOrder,
            "valiant" => Self::Valiant,
            "ugal" | "ugal-l" => Self::UgalLocal,
            "ugal-g" => Self::UgalGlobal,
            "adaptive-prefer-minimal" => Self::AdaptivePreferMinimal,
            "adaptive-0" => Self::Adaptive(0),
            "adaptive-1" => Self::Adaptive(1),
            "adaptive-2" => Self::Adaptive(2),
            "adaptive-3" => Self::Adaptive(3),
            _ => return None,
        })
    }

    /// The mode's name ([`Self::parse`] takes it back).
    pub fn name(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::InOrder => "in-order",
            Self::Valiant => "valiant",
            Self::UgalLocal => "ugal-l",
            Self::UgalGlobal => "ugal-g",
            Self::AdaptivePreferMinimal => "adaptive-prefer-minimal",
            Self::Adaptive(0) => "adaptive-0",
            Self::Adaptive(1) => "adaptive-1",
            Self::Adaptive(2) => "adaptive-2",
            Self::Adaptive(_) => "adaptive-3",
        }
    }

    /// The names [`Self::parse`] takes.
    pub const NAMES: [&'static str; 11] = [
        "minimal",
        "in-order",
        "valiant",
        "ugal",
        "ugal-l",
        "ugal-g",
        "adaptive-prefer-minimal",
        "adaptive-0",
        "adaptive-1",
        "adaptive-2",
        "adaptive-3",
    ];

    /// How much more the non-minimal route's congestion counts in the
    /// adaptive choice at injection, as (numerator, denominator).
    pub fn nonminimal_weight(self) -> (u64, u64) {
        match self {
            Self::AdaptivePreferMinimal => (2, 1),
            Self::Adaptive(b) => (3 + b.min(3) as u64, 3),
            _ => (1, 1),
        }
    }

    /// Virtual channels the mode needs (one per class of global hops).
    pub fn vcs(self) -> u8 {
        match self {
            Self::Minimal | Self::InOrder => 2,
            _ => 3,
        }
    }
}

pub struct DragonflyRouting {
    pub mode: DragonflyMode,
    groups: u32,
    /// Routers per group.
    a: u32,
    ports: usize,
    /// `neighbor[r * ports + p]`: (router, its port), `NONE` if unused.
    neighbor: Vec<(u32, u8)>,
    kind: Vec<LinkKind>,
    /// `local[r * a + j]`: port of router r towards router j of its group
    /// (Kim–Dally: direct; Aries: the first hop, rank-1 or rank-2).
    local: Vec<u8>,
    /// `gateways[g * groups + h]`: (router, port) of group g's global links
    /// to group h.
    gateways: Vec<Vec<(u32, u8)>>,
    aries: Option<(u32, u32)>,
    /// Parallel links per rank-2 connection (consecutive ports; 1 off Aries).
    rank2_links: u32,
}

impl DragonflyRouting {
    pub fn new(d: &Dragonfly, mode: DragonflyMode) -> Self {
        let groups = d.groups;
        let a = d.routers_per_group();
        let routers = (groups * a) as usize;
        // Per router, its links in port order: (far router, kind, tag).
        let mut links: Vec<Vec<(u32, LinkKind, u32)>> = vec![Vec::new(); routers];
        let aries = match d.wiring {
            GroupWiring::AllToAll { .. } => None,
            GroupWiring::Aries { chassis, routers_per_chassis, .. } => Some((chassis, routers_per_chassis)),
        };
        for g in 0..groups {
            let base = g * a;
            for i in 0..a {
                let r = (base + i) as usize;
                match d.wiring {
                    GroupWiring::AllToAll { .. } => {
                        for j in (0..a).filter(|&j| j != i) {
                            links[r].push((base + j, LinkKind::Local, 0));
                        }
                    }
                    GroupWiring::Aries { chassis, routers_per_chassis: rpc, rank2_links } => {
                        let (c, s) = (i / rpc, i % rpc);
                        for j in (0..rpc).filter(|&j| j != s) {
                            links[r].push((base + c * rpc + j, LinkKind::Local, 0));
                        }
                        for c2 in (0..chassis).filter(|&c2| c2 != c) {
                            for l in 0..rank2_links {
                                links[r].push((base + c2 * rpc + s, LinkKind::Rank2, l));
                            }
                        }
                    }
                }
            }
            for k in 0..d.used_global_ports_per_group() {
                let (peer, kp) = d.global_peer(g, k);
                let r = (base + d.port_router(k)) as usize;
                // Tag: the global port numbers of both ends, lower group first.
                let tag = if g < peer { k << 16 | kp } else { kp << 16 | k };
                links[r].push((peer * a + d.port_router(kp), LinkKind::Global, tag));
            }
        }
        let ports = links.iter().map(Vec::len).max().unwrap_or(0);
        let mut neighbor = vec![(NONE, 0u8); routers * ports];
        let mut kind = vec![LinkKind::Local; routers * ports];
        for r in 0..routers {
            // The k-th parallel link to the same router with the same tag
            // pairs with the k-th at the far end.
            for (p, &(w, kd, tag)) in links[r].iter().enumerate() {
                let nth = links[r][..p].iter().filter(|&&(w2, k2, t2)| w2 == w && k2 == kd && t2 == tag).count();
                let q = links[w as usize]
                    .iter()
                    .enumerate()
                    .filter(|(_, &(w2, k2, t2))| w2 == r as u32 && k2 == kd && t2 == tag)
                    .nth(nth)
                    .map(|(q, _)| q)
                    .expect("links are symmetric");
                neighbor[r * ports + p] = (w, q as u8);
                kind[r * ports + p] = kd;
            }
        }
        let mut local = vec![u8::MAX; routers * a as usize];
        for r in 0..routers as u32 {
            let (g, i) = (r / a, r % a);
            for j in (0..a).filter(|&j| j != i) {
                let target = g * a + j;
                let p = match aries {
                    None => links[r as usize].iter().position(|&(w, _, _)| w == target),
                    Some((_, rpc)) => {
                        // Rank-1 to the router of the target's slot in this
                        // chassis, then rank-2; or rank-2 directly.
                        let (c, s) = (i / rpc, i % rpc);
                        let (tc, ts) = (j / rpc, j % rpc);
                        let first = if s != ts { g * a + c * rpc + ts } else { g * a + tc * rpc + s };
                        let _ = tc;
                        links[r as usize].iter().position(|&(w, _, _)| w == first)
                    }
                };
                local[r as usize * a as usize + j as usize] = p.expect("a local route exists") as u8;
            }
        }
        let mut gateways = vec![Vec::new(); (groups * groups) as usize];
        for r in 0..routers as u32 {
            for (p, &(w, kd, _)) in links[r as usize].iter().enumerate() {
                if kd == LinkKind::Global {
                    gateways[((r / a) * groups + w / a) as usize].push((r, p as u8));
                }
            }
        }
        // Deal each group pair's gateways out router by router (the first
        // link of every router, then the second…), so that consecutive
        // destinations use gateways on different routers and chassis.
        for list in &mut gateways {
            let mut nth = std::collections::HashMap::new();
            let mut keyed: Vec<(u32, u32, (u32, u8))> = list
                .iter()
                .map(|&(r, p)| {
                    let k = nth.entry(r).or_insert(0u32);
                    *k += 1;
                    (*k, r, (r, p))
                })
                .collect();
            keyed.sort_unstable();
            *list = keyed.into_iter().map(|(_, _, e)| e).collect();
        }
        let rank2_links = match d.wiring {
            GroupWiring::Aries { rank2_links, .. } => rank2_links.max(1),
            GroupWiring::AllToAll { .. } => 1,
        };
        Self { mode, groups, a, ports, neighbor, kind, local, gateways, aries, rank2_links }
    }

    pub fn ports(&self) -> usize {
        self.ports
    }

    pub fn routers(&self) -> usize {
        (self.groups * self.a) as usize
    }

    pub fn group(&self, r: u32) -> u32 {
        r / self.a
    }

    /// Groups in the network.
    pub fn groups(&self) -> u32 {
        self.groups
    }

    #[inline]
    pub fn neighbor(&self, r: u32, p: u8) -> Option<(u32, u8)> {
        let (w, q) = self.neighbor[r as usize * self.ports + p as usize];
        (w != NONE).then_some((w, q))
    }

    /// Whether this is the Aries form (rank-1/2/3 links).
    pub fn aries_form(&self) -> bool {
        self.aries.is_some()
    }

    pub fn kind(&self, r: u32, p: u8) -> LinkKind {
        self.kind[r as usize * self.ports + p as usize]
    }

    /// The link class of port `p` (the index into the dragonfly's class
    /// rates: generic local 0, global 1; Aries rank-1 0, rank-2 1, rank-3
    /// 2), the same on every router that uses it; `None` if no router does.
    pub fn port_class(&self, p: u8) -> Option<u8> {
        let used = (0..self.routers() as u32).find(|&r| self.neighbor(r, p).is_some())?;
        Some(match (self.kind(used, p), self.aries.is_some()) {
            (LinkKind::Local, _) => 0,
            (LinkKind::Rank2, _) => 1,
            (LinkKind::Global, true) => 2,
            (LinkKind::Global, false) => 1,
        })
    }

    /// The (router, port) of group `g`'s global link used towards group `h`
    /// for destination `dst`.
    /// Group `g`'s global link towards group `h` for destination `dst`
    /// and gateway salt `salt` (0 for plain minimal and Valiant legs): a
    /// hash of both, so that the links' far ends — where the packets enter
    /// the destination group — are spread evenly over its routers (a
    /// regular choice lands every packet for one destination slot on the
    /// same neighbouring slot and overloads one rank-1 link per router).
    fn gateway(&self, g: u32, h: u32, dst: u32, salt: u8) -> (u32, u8) {
        let list = &self.gateways[(g * self.groups + h) as usize];
        let mut x = ((dst as u64) << 6 | salt as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        list[(x % list.len() as u64) as usize]
    }

    /// The gateway salt of a route state (0 unless it is a spread route).
    #[inline]
    fn salt(hints: u8) -> u8 {
        if hints & (VALIANT | SPREAD) == SPREAD {
            hints & GROUP_BITS
        } else {
            0
        }
    }

    /// The port of `r`'s first hop towards router `target` of its group;
    /// a rank-2 hop takes one of the connection's parallel links, chosen by
    /// the destination and the route's salt. (By the destination alone,
    /// every packet into one router would cross each chassis pair on the
    /// same one of its three parallel links: the hottest rank-2 links of a
    /// random all-to-all ran at 3.5× the mean.)
    #[inline]
    fn local_port(&self, r: u32, target: u32, dst: u32, salt: u8) -> u8 {
        let p = self.local[r as usize * self.a as usize + (target % self.a) as usize];
        if self.rank2_links > 1 && self.kind(r, p) == LinkKind::Rank2 {
            p + ((dst + salt as u32) % self.rank2_links) as u8
        } else {
            p
        }
    }

    /// Next port of a minimal route from `r` to router `target`.
    fn minimal_port(&self, r: u32, target: u32, dst: u32, salt: u8) -> Option<u8> {
        if r == target {
            return None;
        }
        let (g, h) = (self.group(r), self.group(target));
        if g == h {
            return Some(self.local_port(r, target, dst, salt));
        }
        let (gw, port) = self.gateway(g, h, dst, salt);
        if gw == r {
            Some(port)
        } else {
            Some(self.local_port(r, gw, dst, salt))
        }
    }

    /// Route state at injection: minimal, or Valiant through a random group
    /// other than the source's and the destination's. (UGAL and adaptive
    /// modes start minimal; the engine chooses between the candidates.)
    /// Aries' minimal routing is hashed per packet ([`Self::hashed_minimal`]).
    pub fn init(&self, src: u32, dst: u32, rng: &mut Rng) -> u8 {
        match self.mode {
            DragonflyMode::Valiant => self.valiant_hints(src, dst, rng),
            DragonflyMode::InOrder => self.minimal_hints(src, dst),
            _ if self.aries.is_some() => self.hashed_minimal(rng),
            _ => self.minimal_hints(src, dst),
        }
    }

    /// Aries' minimal routing (Cray's `MIN_HASH`, the default minimal
    /// mode): "minimal, hashed, non-adaptive; the route is chosen from the
    /// set of most direct routes; for a source and destination pair strict
    /// ordering is kept only among packets to the same destination
    /// cacheline" (Cray's `gni_pub.h` delivery modes). The hash takes the
    /// packet's target address, so a message's packets spread over the
    /// minimal routes — gateway, global link and parallel rank-2 link —
    /// as a per-packet salt drawn from the router's seeded stream.
    pub fn hashed_minimal(&self, rng: &mut Rng) -> u8 {
        let salt = rng.random_range(0..64u8);
        if salt == 0 {
            0
        } else {
            SPREAD | salt
        }
    }

    /// Every salt [`Self::hashed_minimal`] can draw, as route states.
    pub const HASHED_MINIMAL_STATES: [u8; 64] = {
        let mut states = [0u8; 64];
        let mut s = 1;
        while s < 64 {
            states[s] = SPREAD | s as u8;
            s += 1;
        }
        states
    };

    /// The minimal route state from router `src` to `dst`, one per router
    /// pair: across groups the gateway is fixed per (source, destination)
    /// by a hash, so the pairs spread over up to 64 of the group pair's
    /// global links instead of all sharing the destination's one; inside
    /// an Aries group the same salt picks the parallel rank-2 link. (The
    /// generic dragonfly's minimal routing; Aries hashes per packet.)
    pub fn minimal_hints(&self, src: u32, dst: u32) -> u8 {
        if self.group(src) == self.group(dst) && self.aries.is_none() {
            return 0;
        }
        let x = (src as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (dst as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        let salt = ((x >> 40) % 64) as u8;
        if salt == 0 {
            0
        } else {
            SPREAD | salt
        }
    }

    /// Valiant route state through a random intermediate group; with no
    /// third group, a spread route through a random global link to the
    /// destination group (minimal inside one group of a 1-group system).
    pub fn valiant_hints(&self, src: u32, dst: u32, rng: &mut Rng) -> u8 {
        let (gs, gd) = (self.group(src), self.group(dst));
        let others = self.groups - 1 - u32::from(gs != gd);
        if others == 0 {
            return if gs != gd { SPREAD | rng.random_range(1..64u8) } else { 0 };
        }
        if self.groups > 64 {
            return 0;
        }
        let mut k = rng.random_range(0..others);
        let mut gi = 0;
        for g in 0..self.groups {
            if g == gs || g == gd {
                continue;
            }
            if k == 0 {
                gi = g;
                break;
            }
            k -= 1;
        }
        VALIANT | gi as u8
    }

    /// Every route state `valiant_hints` can draw for `src` → `dst` (each
    /// intermediate group, or with two groups each spread salt); empty
    /// where Valiant falls back to minimal. A flow model spreads a
    /// message over them as the packets of a Valiant route would spread.
    pub fn valiant_choices(&self, src: u32, dst: u32) -> Vec<u8> {
        let (gs, gd) = (self.group(src), self.group(dst));
        let others = self.groups - 1 - u32::from(gs != gd);
        if others == 0 {
            return if gs != gd { (1..64u8).map(|s| SPREAD | s).collect() } else { Vec::new() };
        }
        if self.groups > 64 {
            return Vec::new();
        }
        (0..self.groups).filter(|&g| g != gs && g != gd).map(|g| VALIANT | g as u8).collect()
    }

    /// Every route state a packet from `src` to `dst` can start with in
    /// this mode: the minimal one, and where the mode may route
    /// non-minimally (Valiant, UGAL, adaptive) each of
    /// [`Self::valiant_choices`].
    pub fn initial_states(&self, src: u32, dst: u32) -> Vec<u8> {
        // Where `valiant_hints` has no choice it gives state 0 (the
        // unsalted minimal route), not `minimal_hints`.
        let mut valiant = self.valiant_choices(src, dst);
        if valiant.is_empty() {
            valiant.push(0);
        }
        match self.mode {
            DragonflyMode::Valiant => valiant,
            DragonflyMode::InOrder => vec![self.minimal_hints(src, dst)],
            _ if self.aries.is_some() => {
                let mut all: Vec<u8> = Self::HASHED_MINIMAL_STATES.to_vec();
                if self.mode != DragonflyMode::Minimal {
                    let extra: Vec<u8> = valiant.into_iter().filter(|v| !all.contains(v)).collect();
                    all.extend(extra);
                }
                all
            }
            DragonflyMode::Minimal => vec![self.minimal_hints(src, dst)],
            _ => {
                let min = self.minimal_hints(src, dst);
                std::iter::once(min).chain(valiant.into_iter().filter(|&v| v != min)).collect()
            }
        }
    }

    /// Updates the route state at router `r` (Valiant: the intermediate
    /// group reached).
    #[inline]
    pub fn advance(&self, r: u32, hints: u8) -> u8 {
        if hints & VALIANT != 0 && hints & REACHED == 0 && self.group(r) == (hints & GROUP_BITS) as u32 {
            hints | REACHED
        } else {
            hints
        }
    }

    /// The next port, `None` at the destination.
    #[inline]
    pub fn next_port(&self, r: u32, dst: u32, hints: u8) -> Option<u8> {
        // A packet leaves at its destination router whatever phase its
        // route is in (the engine ejects it there).
        if r == dst {
            return None;
        }
        if hints & VALIANT != 0 && hints & REACHED == 0 {
            let gi = (hints & GROUP_BITS) as u32;
            if self.group(r) != gi {
                // Towards the intermediate group: its gateway's far end.
                let (gw, port) = self.gateway(self.group(r), gi, dst, 0);
                return Some(if gw == r {
                    port
                } else {
                    self.local_port(r, gw, dst, 0)
                });
            }
        }
        self.minimal_port(r, dst, dst, Self::salt(hints))
    }

    /// Global links crossed before reaching router `r` on this route.
    #[inline]
    fn globals_so_far(&self, r: u32, src: u32, hints: u8) -> u8 {
        let (g, gs) = (self.group(r), self.group(src));
        if hints & VALIANT == 0 {
            u8::from(g != gs)
        } else if hints & REACHED == 0 {
            // The first global link leads straight to the intermediate group.
            u8::from(g != gs)
        } else if g == (hints & GROUP_BITS) as u32 {
            1
        } else {
            // Past the intermediate group (possibly back in the source group).
            2
        }
    }

    /// VC class of the link out of `port` at `r`: global links crossed
    /// after it.
    #[inline]
    pub fn vc_class(&self, r: u32, src: u32, hints: u8, port: u8) -> u8 {
        self.globals_so_far(r, src, hints) + u8::from(self.kind(r, port) == LinkKind::Global)
    }

    /// The first global link of the route from `src` (its router and port),
    /// `None` for a route inside one group.
    pub fn global_hop(&self, src: u32, dst: u32, hints: u8) -> Option<(u32, u8)> {
        let (mut r, mut h) = (src, self.advance(src, hints));
        while let Some(p) = self.next_port(r, dst, h) {
            if self.kind(r, p) == LinkKind::Global {
                return Some((r, p));
            }
            r = self.neighbor(r, p).expect("routes follow links").0;
            h = self.advance(r, h);
        }
        None
    }

    /// Router hops of the route from `src` with route state `hints`.
    pub fn route_hops(&self, src: u32, dst: u32, hints: u8) -> u32 {
        let (mut r, mut h, mut n) = (src, self.advance(src, hints), 0);
        while let Some(p) = self.next_port(r, dst, h) {
            r = self.neighbor(r, p).expect("routes follow links").0;
            h = self.advance(r, h);
            n += 1;
        }
        n
    }

    /// Hop count of the minimal route between routers.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        self.route_hops(a, b, self.minimal_hints(a, b))
    }

    pub fn port_name(&self, p: u8) -> String {
        format!("p{p}")
    }

    pub fn router_label(&self, r: u32) -> String {
        match self.aries {
            Some((_, rpc)) => format!("g{}c{}s{}", self.group(r), (r % self.a) / rpc, (r % self.a) % rpc),
            None => format!("g{}r{}", self.group(r), r % self.a),
        }
    }

    /// Global links between two groups (the adversarial-traffic bound).
    pub fn links_between(&self, g: u32, h: u32) -> usize {
        self.gateways[(g * self.groups + h) as usize].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use tofusim_topology::dragonfly::Arrangement;

    fn kim_dally(groups: u32, a: u32, h: u32, per_pair: u32) -> Dragonfly {
        Dragonfly {
            groups,
            nodes_per_router: 1,
            wiring: GroupWiring::AllToAll { routers: a },
            global_ports_per_router: h,
            links_per_group_pair: per_pair,
            arrangement: Arrangement::Consecutive,
        }
    }

    fn aries_small() -> Dragonfly {
        Dragonfly {
            groups: 3,
            nodes_per_router: 1,
            wiring: GroupWiring::Aries { chassis: 2, routers_per_chassis: 4, rank2_links: 2 },
            global_ports_per_router: 2,
            links_per_group_pair: 8,
            arrangement: Arrangement::RoundRobin,
        }
    }

    /// The topology's closed-form port count (checked before the tables are
    /// built, so a huge dragonfly is refused without building them) is the
    /// tables' own.
    #[test]
    fn closed_form_ports_match_the_tables() {
        let mut cases = vec![aries_small(), kim_dally(5, 4, 1, 1), kim_dally(9, 4, 2, 1), kim_dally(3, 4, 3, 6), kim_dally(2, 8, 1, 3)];
        for arrangement in [Arrangement::Consecutive, Arrangement::RoundRobin] {
            let mut d = kim_dally(4, 6, 3, 2);
            d.arrangement = arrangement;
            cases.push(d);
            let mut d = aries_small();
            d.arrangement = arrangement;
            d.links_per_group_pair = 3;
            cases.push(d);
        }
        for d in cases {
            assert!(d.validate().is_ok(), "{d:?}");
            assert_eq!(DragonflyRouting::new(&d, DragonflyMode::Minimal).ports() as u64, d.max_ports_per_router(), "{d:?}");
        }
    }

    /// Every route reaches its destination within the hop bound, links are
    /// symmetric, and the VC class never falls along a route.
    fn check(d: &Dragonfly, mode: DragonflyMode, max_hops: u32) {
        let rt = DragonflyRouting::new(d, mode);
        for r in 0..rt.routers() as u32 {
            for p in 0..rt.ports() as u8 {
                if let Some((w, q)) = rt.neighbor(r, p) {
                    assert_eq!(rt.neighbor(w, q), Some((r, p)));
                }
            }
        }
        let mut rng = Rng::seed_from_u64(1);
        for s in 0..rt.routers() as u32 {
            for t in 0..rt.routers() as u32 {
                let mut h = rt.advance(s, rt.init(s, t, &mut rng));
                let (mut r, mut n, mut class) = (s, 0, 0);
                while let Some(p) = rt.next_port(r, t, h) {
                    let c = rt.vc_class(r, s, h, p);
                    assert!(c >= class && c < mode.vcs(), "{mode:?}: class {c} after {class}");
                    class = c;
                    r = rt.neighbor(r, p).unwrap().0;
                    h = rt.advance(r, h);
                    n += 1;
                    assert!(n <= max_hops, "{mode:?}: {s} -> {t} loops");
                }
                assert_eq!(r, t);
            }
        }
    }

    #[test]
    fn routes_reach_their_destination_with_rising_vc_classes() {
        let d = kim_dally(9, 4, 2, 1);
        check(&d, DragonflyMode::Minimal, 3);
        check(&d, DragonflyMode::Valiant, 6);
        let two = kim_dally(2, 4, 2, 8);
        check(&two, DragonflyMode::Minimal, 3);
        // Two groups: across them Valiant spreads over the global links
        // (local–global–local); inside one it detours through the other.
        check(&two, DragonflyMode::Valiant, 6);
        // Aries: ≤ 2 local hops per group.
        check(&aries_small(), DragonflyMode::Minimal, 5);
        check(&aries_small(), DragonflyMode::Valiant, 8);
    }

    #[test]
    fn two_full_aries_groups_route_minimally_within_five_hops() {
        // The aries-720 layout: every rank-3 port cabled to the other group.
        let d = Dragonfly {
            groups: 2,
            nodes_per_router: 4,
            wiring: GroupWiring::Aries { chassis: 6, routers_per_chassis: 15, rank2_links: 3 },
            global_ports_per_router: 10,
            links_per_group_pair: 900,
            arrangement: Arrangement::RoundRobin,
        };
        check(&d, DragonflyMode::Minimal, 5);
        // Valiant inside a group detours through the other: up to 8 hops.
        check(&d, DragonflyMode::Valiant, 8);
    }

    #[test]
    fn spread_routes_use_many_global_links_where_minimal_uses_one_per_destination() {
        let two = kim_dally(2, 4, 2, 8);
        let rt = DragonflyRouting::new(&two, DragonflyMode::Valiant);
        let mut rng = Rng::seed_from_u64(2);
        let dst = 5;
        let minimal = rt.global_hop(0, dst, 0);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let h = rt.valiant_hints(0, dst, &mut rng);
            assert_eq!(h & VALIANT, 0);
            seen.insert(rt.global_hop(0, dst, h));
        }
        assert!(seen.len() >= 7, "{seen:?}");
        assert!(minimal.is_some());
    }

    #[test]
    fn aries_minimal_hashes_each_packet_and_in_order_keeps_one_route_per_pair() {
        let d = aries_small();
        let mut rng = Rng::seed_from_u64(3);
        // Across groups: the first global link; inside a group across
        // chassis: the first hop's port (a rank-2 link, one of 2 parallel).
        let (src, far, near) = (0, 9, 4);
        let first_port = |rt: &DragonflyRouting, h: u8| rt.next_port(src, near, rt.advance(src, h));
        for (mode, many) in [
            (DragonflyMode::Minimal, true),
            (DragonflyMode::InOrder, false),
        ] {
            let rt = DragonflyRouting::new(&d, mode);
            let states: Vec<u8> = (0..200).map(|_| rt.init(src, far, &mut rng)).collect();
            let globals: std::collections::BTreeSet<_> =
                states.iter().map(|&h| rt.global_hop(src, far, h)).collect();
            let states: Vec<u8> = (0..200).map(|_| rt.init(src, near, &mut rng)).collect();
            let ports: std::collections::BTreeSet<_> =
                states.iter().map(|&h| first_port(&rt, h)).collect();
            assert_eq!(
                (globals.len() > 1, ports.len() > 1),
                (many, many),
                "{mode:?}: {globals:?} {ports:?}"
            );
            // Every state a packet can start with is one the deadlock check follows.
            let all = rt.initial_states(src, near);
            assert!(states.iter().all(|h| all.contains(h)) || !many);
        }
    }

    #[test]
    fn the_gateways_count_the_global_links_between_groups() {
        let two = kim_dally(2, 4, 2, 8);
        let rt = DragonflyRouting::new(&two, DragonflyMode::Minimal);
        assert_eq!(rt.links_between(0, 1), 8);
        assert_eq!(rt.ports(), 3 + 2);
    }
}
