//! Up/down routing on fat-trees: k-ary n-trees and XGFTs, tapered or not
//! (`tofusim_topology::fattree`, one rail: every rail is a copy of it).
//!
//! **Routers** are the switches, numbered as [`FatTree::router_graph`]
//! numbers them: level by level from the leaves. Levels here are 0-based
//! (level 0 = leaf switches, the topology's level 1), so a route between
//! leaves whose lowest common ancestors are at level `L` takes `2L` hops.
//! Nodes hang off the leaves only, and their links are not ports: the
//! engine injects and ejects them itself and addresses packets to the
//! destination's leaf switch.
//!
//! **Ports**: a switch at level `l` with `d` children and `u` parents
//! numbers its down ports `0..d` (by child) and its up ports `d..d+u` (by
//! parent). Every switch has [`FatTreeRouting::ports`] = max over levels of
//! `d + u` ports; the rest are unused. The same port number is a down port
//! at one level and an up port at another (a leaf has no network down
//! ports), so [`FatTreeRouting::port_label`] needs the router.
//!
//! **Taper** is the topology's own: a tapered level simply has fewer up
//! ports (`up[l+1]` of the XGFT). Switch addresses follow the XGFT digits —
//! the subtree the switch covers and its *copy* index, the up choices made
//! on the way from a leaf — so a level's up widths only change how many
//! copies there are; no link is assumed that `router_graph` lacks.
//!
//! **Routing**: up to a lowest common ancestor of the current switch and
//! the destination leaf, then down the unique path. Any up port reaches
//! such an ancestor, so every up choice is minimal; the modes differ only in
//! that choice. One VC suffices: up/down routes never turn from down to up,
//! so the channel dependency graph is acyclic.

use crate::Rng;
use rand::RngExt;
use tofusim_topology::fattree::FatTree;

const NONE: u32 = u32::MAX;
/// Routes an 8-bit route state can name.
const HINT_ROUTES: u32 = 256;
/// Bits of the engine's adaptive port mask ([`crate::Routing::adaptive_ports`]).
const MASK_PORTS: u32 = 16;

/// How the up port is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FatTreeMode {
    /// Destination-based and deterministic (Zahavi's D-mod-K): at level
    /// `l` the up port is ⌊d / (w₀·…·w_{l−1})⌋ mod w_l, `d` the destination
    /// leaf, `w_i` the up widths.
    DModK,
    /// A random up path per packet, drawn at injection.
    Random,
    /// Every up port is a candidate; the engine picks by queue occupancy,
    /// with the D-mod-K port as the escape.
    Adaptive,
}

impl FatTreeMode {
    pub const NAMES: [&'static str; 3] = ["d-mod-k", "random", "adaptive"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "d-mod-k" => Self::DModK,
            "random" => Self::Random,
            "adaptive" => Self::Adaptive,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// One level of switches. A switch is `base + subtree * copies + copy`:
/// `subtree` says which `span` consecutive leaves lie below it, `copy`
/// (mixed radix over the up widths below, lowest level most significant)
/// which of the `copies` switches covering that subtree it is.
#[derive(Clone, Copy, Debug)]
struct Level {
    base: u32,
    switches: u32,
    /// Children that are switches (0 at the leaves).
    down: u32,
    /// Parents (0 at the top).
    up: u32,
    copies: u32,
    span: u32,
    /// This level's random digit of a `Random` route state `x` is
    /// `x / rand_div % rand_mod` (`rand_mod` = 1 where it would not fit in 8 bits).
    rand_div: u32,
    rand_mod: u32,
}

/// What a switch does with a packet for a leaf.
enum Hop {
    Here,
    Down(u8),
    /// Up from a switch of this level.
    Up(usize),
}

/// A fat-tree the routing cannot number or route.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FatTreeError {
    #[error("fat-tree: expected one up width per level, got down {down:?} up {up:?}")]
    Widths { down: Vec<u32>, up: Vec<u32> },
    #[error("fat-tree: widths must be at least 1")]
    ZeroWidth,
    #[error("fat-tree routing: {nodes} nodes per leaf; the route state numbers them in 8 bits (at most 256)")]
    LeafNodes { nodes: u32 },
    #[error("fat-tree routing: a node attaches to one leaf switch (up[0] = 1; use rails)")]
    MultiHomed,
    #[error("fat-tree routing: {down:?} / {up:?} has 2^32 - 1 switches or more")]
    TooManySwitches { down: Vec<u32>, up: Vec<u32> },
    #[error("fat-tree routing: {ports} ports per level-{level} switch, at most 256")]
    SwitchPorts { level: usize, ports: u64 },
    #[error("adaptive fat-tree routing: level {level}'s up ports are ports {first}..{end}, above the engine's {MASK_PORTS}-port candidate mask")]
    UpPortsAboveMask { level: usize, first: u32, end: u32 },
}

pub struct FatTreeRouting {
    pub mode: FatTreeMode,
    nodes_per_leaf: u32,
    ports: usize,
    levels: Vec<Level>,
    /// Random route states are drawn from `0..rand_routes`.
    rand_routes: u32,
    /// `neighbor[r * ports + p]`: (router, its port back), `NONE` if unused.
    neighbor: Vec<(u32, u8)>,
}

impl FatTreeRouting {
    /// The routing of one rail of `f`. Errors (rather than panics) on trees
    /// it cannot route: multi-homed leaves (`up[0] > 1`: use rails), more
    /// than 256 ports, 2³² − 1 switches or more (ids are `u32` with a
    /// sentinel), and — in `Adaptive` mode — up ports numbered 16 or above,
    /// which the engine's 16-bit port mask cannot hold.
    pub fn new(f: &FatTree, mode: FatTreeMode) -> Result<Self, FatTreeError> {
        let h = f.levels();
        if h == 0 || f.up.len() != h {
            return Err(FatTreeError::Widths { down: f.down.clone(), up: f.up.clone() });
        }
        if f.down.iter().chain(&f.up).any(|&x| x == 0) {
            return Err(FatTreeError::ZeroWidth);
        }
        if f.down[0] > 256 {
            return Err(FatTreeError::LeafNodes { nodes: f.down[0] });
        }
        if f.up[0] != 1 {
            return Err(FatTreeError::MultiHomed);
        }
        let too_big = || FatTreeError::TooManySwitches { down: f.down.clone(), up: f.up.clone() };
        let leaves = f.down[1..].iter().try_fold(1u64, |n, &m| n.checked_mul(m as u64)).ok_or_else(too_big)?;
        let (mut base, mut copies, mut span, mut rand_div) = (0u64, 1u64, 1u64, 1u32);
        let mut levels = Vec::with_capacity(h);
        for l in 0..h {
            if l > 0 {
                copies = copies.checked_mul(f.up[l] as u64).ok_or_else(too_big)?;
                span *= f.down[l] as u64;
            }
            let switches = (leaves / span).checked_mul(copies).ok_or_else(too_big)?;
            if base + switches >= NONE as u64 {
                return Err(too_big());
            }
            let down = if l == 0 { 0 } else { f.down[l] };
            let up = f.up.get(l + 1).copied().unwrap_or(0);
            // A random digit for each level, lowest first, while 8 bits hold them.
            let rand_mod = if up > 0 && rand_div as u64 * up as u64 <= HINT_ROUTES as u64 { up } else { 1 };
            if down as u64 + up as u64 > 256 {
                return Err(FatTreeError::SwitchPorts { level: l, ports: down as u64 + up as u64 });
            }
            if mode == FatTreeMode::Adaptive && up > 0 && down + up > MASK_PORTS {
                return Err(FatTreeError::UpPortsAboveMask { level: l, first: down, end: down + up });
            }
            levels.push(Level {
                base: base as u32,
                switches: switches as u32,
                down,
                up,
                copies: copies as u32,
                span: span as u32,
                rand_div,
                rand_mod,
            });
            rand_div *= rand_mod;
            base += switches;
        }
        let ports = levels.iter().map(|lv| (lv.down + lv.up) as usize).max().unwrap_or(0);
        let rand_routes = levels.iter().map(|lv| lv.rand_mod).product();
        let mut neighbor = vec![(NONE, 0u8); base as usize * ports];
        for (l, lv) in levels.iter().enumerate() {
            for s in 0..lv.switches {
                let (t, c) = (s / lv.copies, s % lv.copies);
                let row = (lv.base + s) as usize * ports;
                if l > 0 {
                    // Child i covers sub-subtree i; it reached us through its
                    // up port named by our last copy digit.
                    let below = &levels[l - 1];
                    let w = below.up;
                    for i in 0..lv.down {
                        let child = below.base + (t * lv.down + i) * below.copies + c / w;
                        neighbor[row + i as usize] = (child, (below.down + c % w) as u8);
                    }
                }
                if l + 1 < h {
                    let above = &levels[l + 1];
                    for j in 0..lv.up {
                        let parent = above.base + t / above.down * above.copies + c * lv.up + j;
                        neighbor[row + (lv.down + j) as usize] = (parent, (t % above.down) as u8);
                    }
                }
            }
        }
        Ok(Self { mode, nodes_per_leaf: f.down[0], ports, levels, rand_routes, neighbor })
    }

    pub fn ports(&self) -> usize {
        self.ports
    }

    pub fn routers(&self) -> usize {
        self.levels.last().map_or(0, |lv| (lv.base + lv.switches) as usize)
    }

    /// Switch levels (level 0 = leaves).
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Nodes on each leaf switch.
    pub fn nodes_per_leaf(&self) -> u32 {
        self.nodes_per_leaf
    }

    /// Leaf switches: routers `0..leaf_switches()`.
    pub fn leaf_switches(&self) -> u32 {
        self.levels[0].switches
    }

    /// The leaf switch (router) of a node.
    #[inline]
    pub fn leaf_of_node(&self, node: u32) -> u32 {
        node / self.nodes_per_leaf
    }

    /// A router's level and its index within the level.
    #[inline]
    pub fn locate(&self, r: u32) -> (usize, u32) {
        let l = self.levels.partition_point(|lv| lv.base <= r) - 1;
        (l, r - self.levels[l].base)
    }

    /// (down, up) network ports of the switches of level `l`.
    pub fn widths(&self, l: usize) -> (u32, u32) {
        (self.levels[l].down, self.levels[l].up)
    }

    /// Level of the lowest common ancestors of two leaves (0 if equal).
    pub fn lca_level(&self, a: u32, b: u32) -> usize {
        self.levels.iter().position(|lv| a / lv.span == b / lv.span).expect("the top covers every leaf")
    }

    #[inline]
    pub fn neighbor(&self, r: u32, p: u8) -> Option<(u32, u8)> {
        let (w, q) = *self.neighbor.get(r as usize * self.ports + p as usize)?;
        (w != NONE).then_some((w, q))
    }

    #[inline]
    fn hop(&self, r: u32, dst: u32) -> Hop {
        debug_assert!(dst < self.leaf_switches(), "fat-tree packets are addressed to leaf switches");
        let (l, s) = self.locate(r);
        let lv = &self.levels[l];
        if dst / lv.span != s / lv.copies {
            Hop::Up(l)
        } else if l == 0 {
            Hop::Here
        } else {
            Hop::Down((dst / self.levels[l - 1].span % lv.down) as u8)
        }
    }

    /// D-mod-K (Zahavi; Lin et al.'s destination-mod-k on k-ary n-trees):
    /// at level `l` the up port is ⌊d / (w₀·w₁·…·w_{l−1})⌋ mod w_l, with `d`
    /// the destination *node* and `w_i` the up widths of the levels below
    /// (`k^l` on an untapered k-ary n-tree). At the leaf the choice is the
    /// node's own digit, so the nodes of one leaf come down different
    /// links (with `d` the destination leaf they would all share one, and
    /// a leaf could receive at one link's rate). The choices are the mixed-radix
    /// digits of `d`, and depend on `d` alone: all sources reach `d` through
    /// the same copy at each level, so each destination has one down tree,
    /// and the copy a route reaches at level `l` is fixed by
    /// `d mod (w₀…w_{l−1})` — consecutive destinations take different
    /// roots, and every root serves as many destinations, within one.
    #[inline]
    fn dmodk(lv: &Level, dst_node: u32) -> u32 {
        dst_node / lv.copies % lv.up
    }

    /// The destination node of a route to leaf `dst` with route state
    /// `hints` (`DModK`, `Adaptive`: the node's index on its leaf).
    #[inline]
    fn dest_node(&self, dst: u32, hints: u8) -> u32 {
        let local = if self.mode == FatTreeMode::Random { 0 } else { hints as u32 };
        dst * self.nodes_per_leaf + local
    }

    /// Route state at injection: `Random` draws the up path (its digits,
    /// offset by D-mod-K, pick each level's up port); otherwise the
    /// destination node's index on its leaf (`dst_local`), which D-mod-K
    /// routes by.
    pub fn init(&self, src: u32, dst: u32, dst_local: u32, rng: &mut Rng) -> u8 {
        match self.mode {
            FatTreeMode::Random if src != dst => rng.random_range(0..self.rand_routes) as u8,
            FatTreeMode::Random => 0,
            _ => dst_local as u8,
        }
    }

    /// Every route state [`Self::init`] can give a packet from leaf `src`
    /// to node `dst_local` of leaf `dst`.
    pub fn initial_states(&self, src: u32, dst: u32, dst_local: u32) -> Vec<u8> {
        match self.mode {
            FatTreeMode::Random if src != dst => (0..self.rand_routes).map(|x| x as u8).collect(),
            FatTreeMode::Random => vec![0],
            _ => vec![dst_local as u8],
        }
    }

    /// The route state never changes on a tree.
    #[inline]
    pub fn advance(&self, _r: u32, hints: u8) -> u8 {
        hints
    }

    /// The deterministic next port, `None` at the destination leaf: the
    /// D-mod-K up port (`Random`: offset by the packet's digit for the
    /// level, uniform over the level's up ports; levels whose digit would
    /// not fit in 8 bits stay D-mod-K), or the one down port. Not inlined:
    /// kept out of [`crate::Routing`]'s dispatch, which the torus hot path
    /// inlines.
    #[inline(never)]
    pub fn escape_port(&self, r: u32, dst: u32, hints: u8) -> Option<u8> {
        match self.hop(r, dst) {
            Hop::Here => None,
            Hop::Down(p) => Some(p),
            Hop::Up(l) => {
                let lv = &self.levels[l];
                let mut j = Self::dmodk(lv, self.dest_node(dst, hints));
                if self.mode == FatTreeMode::Random {
                    j = (j + hints as u32 / lv.rand_div % lv.rand_mod) % lv.up;
                }
                Some((lv.down + j) as u8)
            }
        }
    }

    /// `Adaptive`: every up port while climbing (bit per port; the
    /// constructor ensures they are below 16); 0 on the way down and in the
    /// other modes. Not inlined, as [`Self::escape_port`].
    #[inline(never)]
    pub fn adaptive_ports(&self, r: u32, dst: u32, _hints: u8) -> u16 {
        match (self.mode, self.hop(r, dst)) {
            (FatTreeMode::Adaptive, Hop::Up(l)) => {
                let lv = &self.levels[l];
                (((1u32 << lv.up) - 1) << lv.down) as u16
            }
            _ => 0,
        }
    }

    /// Outputs of the widest switch, as [`Self::output_at`] numbers them:
    /// every network port, and at a leaf its up ports then its nodes. The
    /// virtual output queues of a switch input (one per output of the
    /// switch it belongs to) are this many; computed from the tree alone,
    /// so the router model can be sized before the routing is built.
    pub fn outputs_of(f: &FatTree) -> usize {
        let leaf_up = f.up.get(1).copied().unwrap_or(0) as usize;
        Self::ports_of(f).max(leaf_up + f.down.first().copied().unwrap_or(0) as usize)
    }

    /// [`Self::ports`] of the routing of `f`, from the tree alone: the
    /// widest switch's down (network) plus up ports.
    pub fn ports_of(f: &FatTree) -> usize {
        let up = |l: usize| f.up.get(l + 1).copied().unwrap_or(0) as usize;
        let down = |l: usize| if l == 0 { 0 } else { f.down[l] as usize };
        (0..f.levels()).map(|l| down(l) + up(l)).max().unwrap_or(0)
    }

    /// The output a packet for node `dst_node` with route state `hints`
    /// leaves switch `r` by, numbered as in [`Self::outputs_of`]: its
    /// deterministic port, or at the destination leaf the leaf's up ports
    /// plus the node's index there. This is lookahead routing: the switch
    /// before `r` reads it to put the packet into the virtual output queue
    /// of `r`'s input that holds only packets bound for the same output.
    /// Climbing in `Adaptive` mode the packet may still leave by any up
    /// port; queueing it by its D-mod-K port spreads the climbing traffic
    /// over as many queues as there are up ports (one queue for them all
    /// would hold a whole link's traffic in one VC's buffer).
    #[inline(never)]
    pub fn output_at(&self, r: u32, dst_node: u32, hints: u8) -> u32 {
        let dst = self.leaf_of_node(dst_node);
        match self.hop(r, dst) {
            Hop::Here => self.levels[0].up + dst_node % self.nodes_per_leaf,
            Hop::Down(p) => p as u32,
            Hop::Up(_) => self.escape_port(r, dst, hints).expect("climbing") as u32,
        }
    }

    /// Hops of the shortest path between any two switches (leaves: twice
    /// their LCA level). The shortest path descends to reset copy digits,
    /// climbs to where the subtrees meet and descends again, or the mirror
    /// image; the shorter of the two.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        self.valley_first(a, b).min(self.valley_first(b, a))
    }

    /// Down from `a` to a valley, up to a peak, down to `b`.
    fn valley_first(&self, a: u32, b: u32) -> u32 {
        let ((la, sa), (lb, sb)) = (self.locate(a), self.locate(b));
        let (va, vb) = (&self.levels[la], &self.levels[lb]);
        let (ta, ca, tb, cb) = (sa / va.copies, sa % va.copies, sb / vb.copies, sb % vb.copies);
        // Valley: the deepest level where both copies agree on their prefix
        // (the up choices below it), found by truncating the copy indices.
        let m = (0..=la.min(lb))
            .rev()
            .find(|&m| ca / (va.copies / self.levels[m].copies) == cb / (vb.copies / self.levels[m].copies))
            .unwrap_or(0);
        let lift = |t: u32, from: usize, to: usize| t / (self.levels[to].span / self.levels[from].span);
        // Peak: `b` itself if it is above a switch reachable below `a`,
        // else the lowest level where both subtrees meet.
        let peak = if lb <= la && lift(tb, lb, la) == ta {
            lb
        } else {
            (la.max(lb)..self.levels.len())
                .find(|&p| lift(ta, la, p) == lift(tb, lb, p))
                .expect("the top covers every leaf")
        };
        (la - m + peak - m + peak - lb) as u32
    }

    /// Role of port `p` at level `l`: ("down" | "up", index).
    fn role(lv: &Level, p: u32) -> Option<(&'static str, u32)> {
        if p < lv.down {
            Some(("down", p))
        } else if p < lv.down + lv.up {
            Some(("up", p - lv.down))
        } else {
            None
        }
    }

    /// "down1", "up3" for port `p` of router `r` ("p7" if unused).
    pub fn port_label(&self, r: u32, p: u8) -> String {
        match Self::role(&self.levels[self.locate(r).0], p as u32) {
            Some((dir, i)) => format!("{dir}{i}"),
            None => format!("p{p}"),
        }
    }

    /// The roles port `p` has at the levels using it, e.g. "down0/up0" (a
    /// router-free name is ambiguous: [`Self::port_label`] is exact).
    pub fn port_name(&self, p: u8) -> String {
        let mut names: Vec<String> = Vec::new();
        for (dir, i) in self.levels.iter().filter_map(|lv| Self::role(lv, p as u32)) {
            let n = format!("{dir}{i}");
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names.sort_unstable();
        if names.is_empty() {
            format!("p{p}")
        } else {
            names.join("/")
        }
    }

    /// "L1:5": level 1, switch 5 of that level.
    pub fn router_label(&self, r: u32) -> String {
        let (l, s) = self.locate(r);
        format!("L{l}:{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Routing;
    use rand::SeedableRng;

    fn xgft(down: &[u32], up: &[u32]) -> FatTree {
        FatTree { down: down.to_vec(), up: up.to_vec(), rails: 1 }
    }

    /// A 4-ary 3-tree, a 2-level XGFT tapered 8:3, tapered 3-level trees
    /// (k-ary with taper at either level, irregular XGFT), a binary 4-tree,
    /// and degenerate widths (a single up link, a one-child top level).
    fn trees() -> Vec<FatTree> {
        vec![
            FatTree::k_ary_n_tree(4, 3, &[]),
            xgft(&[8, 6], &[1, 3]),
            FatTree::k_ary_n_tree(4, 3, &[2]),
            FatTree::k_ary_n_tree(4, 3, &[1, 2]),
            xgft(&[5, 3, 2], &[1, 2, 3]),
            FatTree::k_ary_n_tree(2, 4, &[]),
            xgft(&[3, 2, 2, 2], &[1, 1, 2, 3]),
            xgft(&[2, 3, 1], &[1, 2, 2]),
        ]
    }

    fn routing(f: &FatTree, mode: FatTreeMode) -> Routing {
        Routing::FatTree(FatTreeRouting::new(f, mode).unwrap())
    }

    fn level(rt: &Routing, r: u32) -> usize {
        let Routing::FatTree(t) = rt else { unreachable!() };
        t.locate(r).0
    }

    /// Follows a route from leaf `s` to leaf `t`, at each hop taking the
    /// escape port or a random candidate; checks it is up*-down* and
    /// returns its hop count.
    fn walk(rt: &Routing, s: u32, t: u32, rng: &mut Rng) -> u32 {
        let mut h = rt.advance(s, rt.init(s, t, 0, rng));
        let (mut r, mut n, mut descending) = (s, 0, false);
        while let Some(esc) = rt.escape_port(r, t, h) {
            let mask = rt.adaptive_ports(r, t, h) | 1 << esc;
            let ports: Vec<u8> = (0..16).filter(|&p| mask & 1 << p != 0).collect();
            let p = if ports.len() > 1 { ports[rng.random_range(0..ports.len())] } else { esc };
            assert_eq!(rt.vc_class(r, s, h, p), 0);
            assert!(!rt.is_dateline(r, p));
            let (w, q) = rt.neighbor(r, p).expect("routes follow links");
            assert_eq!(rt.upstream(w, q), Some((r, p)));
            let up = level(rt, w) > level(rt, r);
            assert!(!(up && descending), "{s} -> {t}: down then up at {}", rt.router_label(r));
            descending |= !up;
            (r, h, n) = (w, rt.advance(w, h), n + 1);
            assert!(n <= 2 * 8, "{s} -> {t} loops");
        }
        assert_eq!(r, t);
        n
    }

    #[test]
    fn every_route_and_every_candidate_is_minimal_up_then_down() {
        let mut rng = Rng::seed_from_u64(7);
        for f in trees() {
            for mode in [FatTreeMode::DModK, FatTreeMode::Random, FatTreeMode::Adaptive] {
                let rt = routing(&f, mode);
                let Routing::FatTree(ft) = &rt else { unreachable!() };
                let reps = if mode == FatTreeMode::DModK { 1 } else { 8 };
                for s in 0..ft.leaf_switches() {
                    for t in 0..ft.leaf_switches() {
                        let lca = ft.lca_level(s, t) as u32;
                        for _ in 0..reps {
                            assert_eq!(walk(&rt, s, t, &mut rng), 2 * lca, "{mode:?} {f:?}: {s} -> {t}");
                        }
                        assert_eq!(rt.distance(s, t), 2 * lca);
                    }
                }
            }
        }
    }

    #[test]
    fn the_output_at_each_switch_is_the_port_the_route_takes_there() {
        let mut rng = Rng::seed_from_u64(11);
        for f in trees() {
            let keys = FatTreeRouting::outputs_of(&f) as u32;
            for mode in [FatTreeMode::DModK, FatTreeMode::Random, FatTreeMode::Adaptive] {
                let rt = FatTreeRouting::new(&f, mode).unwrap();
                let m = rt.nodes_per_leaf();
                let widest = rt.levels.iter().map(|lv| lv.down + lv.up).max().unwrap();
                assert_eq!(keys, widest.max(rt.levels[0].up + m), "{f:?}");
                assert_eq!(FatTreeRouting::ports_of(&f), rt.ports());
                for s in 0..rt.leaf_switches() {
                    for d in 0..rt.leaf_switches() * m {
                        let t = rt.leaf_of_node(d);
                        let h = rt.init(s, t, d % m, &mut rng);
                        let mut r = s;
                        while let Some(esc) = rt.escape_port(r, t, h) {
                            let key = rt.output_at(r, d, h);
                            assert!(key < keys);
                            assert_eq!(key, esc as u32, "{mode:?} {f:?}: {s} -> node {d} at {}", rt.router_label(r));
                            r = rt.neighbor(r, esc).unwrap().0;
                        }
                        // At the destination leaf: its up ports, then the node.
                        assert_eq!(rt.output_at(r, d, h), rt.levels[0].up + d % m);
                    }
                }
            }
        }
    }

    #[test]
    fn random_routes_cover_every_up_path_when_they_fit_in_eight_bits() {
        let f = FatTree::k_ary_n_tree(4, 3, &[2]);
        let Routing::FatTree(rt) = routing(&f, FatTreeMode::Random) else { unreachable!() };
        assert_eq!(rt.rand_routes, 2 * 4);
        // From leaf 0 to the far half: each state reaches a different root.
        let roots: std::collections::BTreeSet<u32> = (0..8u8)
            .map(|x| {
                let (mut r, t) = (0, rt.leaf_switches() - 1);
                while rt.locate(r).0 < 2 {
                    r = rt.neighbor(r, rt.escape_port(r, t, x).unwrap()).unwrap().0;
                }
                r
            })
            .collect();
        assert_eq!(roots.len(), 8);
        // Radix-32 switches: 32 × 32 paths, 8 bits name 32 × 8 of them.
        let big = FatTreeRouting::new(&FatTree::k_ary_n_tree(32, 3, &[]), FatTreeMode::Random).unwrap();
        assert_eq!(big.rand_routes, 32);
        assert_eq!((big.levels[0].rand_mod, big.levels[1].rand_mod), (32, 1));
    }

    #[test]
    fn d_mod_k_spreads_destinations_evenly_over_each_levels_up_ports() {
        let spread = |c: &[u32]| c.iter().max().unwrap() - c.iter().min().unwrap();
        for f in trees() {
            let Routing::FatTree(rt) = routing(&f, FatTreeMode::DModK) else { unreachable!() };
            let m = rt.nodes_per_leaf();
            let n = rt.leaf_switches() * m;
            for (l, lv) in rt.levels.iter().enumerate().filter(|(_, lv)| lv.up > 0) {
                // Per level-l copy: the destination nodes whose routes reach
                // it (the same copy from every source) and their up ports there.
                let mut by_copy = vec![vec![0u32; lv.up as usize]; lv.copies as usize];
                for d in 0..n {
                    let copy = (0..l).fold(0, |c, i| c * rt.levels[i].up + FatTreeRouting::dmodk(&rt.levels[i], d));
                    by_copy[copy as usize][FatTreeRouting::dmodk(lv, d) as usize] += 1;
                    // The route takes it: from the leftmost switch of that
                    // copy (subtree 0) to a leaf outside subtree 0.
                    let (leaf, local) = (d / m, d % m);
                    if leaf >= lv.span {
                        let port = rt.escape_port(lv.base + copy, leaf, local as u8).unwrap() as u32;
                        assert_eq!(port, lv.down + FatTreeRouting::dmodk(lv, d));
                    }
                }
                for counts in &by_copy {
                    let total: u32 = counts.iter().sum();
                    assert!(spread(counts) <= u32::from(!total.is_multiple_of(lv.up)), "{f:?} level {l}: {counts:?}");
                }
                // Over all destinations: equal when the copies above divide them.
                let all: Vec<u32> = (0..lv.up as usize).map(|j| by_copy.iter().map(|c| c[j]).sum()).collect();
                if n.is_multiple_of(lv.copies * lv.up) {
                    assert_eq!(spread(&all), 0, "{f:?} level {l}: {all:?}");
                }
            }
        }
    }

    #[test]
    fn links_are_the_topologys_own() {
        for f in trees() {
            let g = f.router_graph();
            let Routing::FatTree(rt) = routing(&f, FatTreeMode::DModK) else { unreachable!() };
            assert_eq!(rt.routers(), g.router_count());
            let mut links = 0;
            for r in 0..rt.routers() as u32 {
                let mut ours: Vec<u32> = (0..rt.ports() as u8).filter_map(|p| rt.neighbor(r, p)).map(|(w, _)| w).collect();
                let mut theirs: Vec<u32> = g.neighbors(r).map(|(w, _)| w).collect();
                ours.sort_unstable();
                theirs.sort_unstable();
                assert_eq!(ours, theirs, "{f:?}: router {}", rt.router_label(r));
                links += ours.len() as u64;
                for p in 0..rt.ports() as u8 {
                    if let Some((w, q)) = rt.neighbor(r, p) {
                        assert_eq!(rt.neighbor(w, q), Some((r, p)));
                        assert_eq!(rt.locate(w).0.abs_diff(rt.locate(r).0), 1);
                    }
                }
            }
            assert_eq!(links, 2 * f.link_count());
        }
    }

    #[test]
    fn distance_is_the_bfs_distance_between_any_switches() {
        for f in trees() {
            let g = f.router_graph();
            let rt = routing(&f, FatTreeMode::DModK);
            let (mut dist, mut queue) = (Vec::new(), Vec::new());
            for a in 0..rt.routers() as u32 {
                g.bfs(a, &mut dist, &mut queue);
                for b in 0..rt.routers() as u32 {
                    assert_eq!(rt.distance(a, b), dist[b as usize], "{f:?}: {} to {}", rt.router_label(a), rt.router_label(b));
                }
            }
        }
    }

    #[test]
    fn names_labels_and_limits() {
        let f = FatTree::k_ary_n_tree(4, 3, &[]);
        let Routing::FatTree(rt) = routing(&f, FatTreeMode::Adaptive) else { unreachable!() };
        assert_eq!((rt.ports(), rt.nodes_per_leaf(), rt.leaf_switches()), (8, 4, 16));
        assert_eq!(rt.leaf_of_node(63), 15);
        assert_eq!(rt.router_label(21), "L1:5");
        assert_eq!(rt.port_label(0, 1), "up1");
        assert_eq!(rt.port_label(16, 1), "down1");
        assert_eq!(rt.port_label(16, 7), "up3");
        assert_eq!(rt.port_label(32, 7), "p7");
        assert_eq!(rt.port_name(1), "down1/up1");
        assert_eq!(rt.port_name(6), "up2");
        for name in FatTreeMode::NAMES {
            assert_eq!(FatTreeMode::parse(name).unwrap().name(), name);
        }
        assert!(FatTreeRouting::new(&xgft(&[4, 4], &[2, 2]), FatTreeMode::DModK).is_err());
        // Radix 16 fits the 16-port mask; radix 32 only without adaptivity.
        assert!(FatTreeRouting::new(&FatTree::k_ary_n_tree(8, 3, &[]), FatTreeMode::Adaptive).is_ok());
        assert!(FatTreeRouting::new(&FatTree::k_ary_n_tree(16, 3, &[]), FatTreeMode::Adaptive).is_err());
        assert!(FatTreeRouting::new(&FatTree::k_ary_n_tree(16, 3, &[]), FatTreeMode::DModK).is_ok());
    }
}
