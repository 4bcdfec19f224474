//! Routing on tori, meshes and Tofu.
//!
//! **Hint bits** (BG/L, [S:004]): at injection each axis gets a
//! direction (`+`, `−`, or the single port), the shorter way round; at
//! exactly half a ring the direction is drawn at random. One bit per axis
//! stores it (set = `−`). The hops left on an axis follow from the current
//! and destination coordinates, so nothing else travels with the packet.
//!
//! **Escape orders**: dimension order (the configured axis order: X Y Z for
//! BG/L, X Y Z A C B for Tofu) or direction order (Cray T3E: every `+`
//! direction in axis order, then every `−`).

use crate::Rng;
use rand::RngExt;
use tofusim_topology::{Direction, NodeId, PortId, Torus};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EscapeOrder {
    Dimension,
    Direction,
}

#[derive(Clone, Debug)]
struct AxisInfo {
    length: u32,
    wrap: bool,
    single: bool,
    plus: u8,
    minus: u8,
}

pub struct TorusRouting {
    torus: Torus,
    axes: Vec<AxisInfo>,
    /// `coords[r * axes + a]`.
    coords: Vec<u16>,
    /// `neighbor[r * ports + p]`, `u32::MAX` where unconnected.
    neighbor: Vec<u32>,
    /// Port at the far end of a link leaving through port `p`.
    arrive_port: Vec<u8>,
    /// Axis of each port, and whether it points `−`.
    port_axis: Vec<u8>,
    port_minus: Vec<bool>,
    /// Axes in escape order.
    order: Vec<u8>,
    escape_order: EscapeOrder,
}

const NONE: u32 = u32::MAX;

impl TorusRouting {
    /// `order`: axis indices in dimension order (e.g. Tofu's X Y Z A C B).
    pub fn new(torus: &Torus, order: &[usize], escape_order: EscapeOrder) -> Self {
        assert!(torus.axes().len() <= 8, "hint bits hold at most 8 axes");
        let mut axes = Vec::new();
        let ports = torus.ports();
        for (i, a) in torus.axes().iter().enumerate() {
            let find = |d: Direction| {
                ports
                    .iter()
                    .position(|p| p.axis == i && p.direction == d)
                    .map(|p| p as u8)
            };
            let single = find(Direction::Single);
            axes.push(AxisInfo {
                length: a.length,
                wrap: a.wrap,
                single: single.is_some(),
                plus: single.or(find(Direction::Plus)).unwrap_or(u8::MAX),
                minus: single.or(find(Direction::Minus)).unwrap_or(u8::MAX),
            });
        }
        let n = torus.node_count() as usize;
        let na = axes.len();
        let mut coords = vec![0u16; n * na];
        let mut c = Vec::new();
        for r in 0..n {
            torus.coords_into(NodeId(r as u32), &mut c);
            for a in 0..na {
                coords[r * na + a] = c[a] as u16;
            }
        }
        let np = ports.len();
        let mut neighbor = vec![NONE; n * np];
        for r in 0..n {
            for p in 0..np {
                if let Some(w) = torus.neighbor(NodeId(r as u32), PortId(p as u8)) {
                    neighbor[r * np + p] = w.0;
                }
            }
        }
        let arrive_port = ports
            .iter()
            .map(|p| {
                let ax = &axes[p.axis];
                match p.direction {
                    Direction::Plus => ax.minus,
                    Direction::Minus => ax.plus,
                    Direction::Single => ax.plus,
                }
            })
            .collect();
        Self {
            torus: torus.clone(),
            axes,
            coords,
            neighbor,
            arrive_port,
            port_axis: ports.iter().map(|p| p.axis as u8).collect(),
            port_minus: ports
                .iter()
                .map(|p| p.direction == Direction::Minus)
                .collect(),
            order: order.iter().map(|&a| a as u8).collect(),
            escape_order,
        }
    }

    pub fn torus(&self) -> &Torus {
        &self.torus
    }

    pub fn ports(&self) -> usize {
        self.port_axis.len()
    }

    pub fn routers(&self) -> usize {
        self.coords.len() / self.axes.len()
    }

    #[inline]
    fn coord(&self, r: u32, a: usize) -> u32 {
        self.coords[r as usize * self.axes.len() + a] as u32
    }

    /// The neighbour table, `ports()` entries per router (`u32::MAX`: no
    /// link), for callers that prefetch it.
    pub fn neighbor_table(&self) -> &[u32] {
        &self.neighbor
    }

    #[inline]
    pub fn neighbor(&self, r: u32, p: u8) -> Option<(u32, u8)> {
        let w = self.neighbor[r as usize * self.ports() + p as usize];
        (w != NONE).then(|| (w, self.arrive_port[p as usize]))
    }

    /// Hint bits: bit `a` set means axis `a` is travelled in the `−` direction.
    pub fn hints(&self, src: u32, dst: u32, rng: &mut Rng) -> u8 {
        let mut h = 0u8;
        for (a, ax) in self.axes.iter().enumerate() {
            if ax.single || ax.length <= 1 {
                continue;
            }
            let (s, d) = (self.coord(src, a), self.coord(dst, a));
            let l = ax.length;
            let minus = if !ax.wrap {
                d < s
            } else {
                let fwd = ring_distance(s, d, l);
                let back = l - fwd;
                fwd != 0 && (back < fwd || (back == fwd && rng.random_bool(0.5)))
            };
            if minus {
                h |= 1 << a;
            }
        }
        h
    }

    /// Axes (bit per axis) whose direction a route may choose: rings with
    /// a port each way (meshes and single-port axes have one way only).
    pub fn direction_axes(&self) -> u8 {
        let mut m = 0u8;
        for (a, ax) in self.axes.iter().enumerate() {
            if ax.wrap && !ax.single && ax.length >= 2 {
                m |= 1 << a;
            }
        }
        m
    }

    /// [`Self::hints`] without the draw: a tie at half a ring goes `+`.
    pub fn shortest_hints(&self, src: u32, dst: u32) -> u8 {
        let mut h = 0u8;
        for (a, ax) in self.axes.iter().enumerate() {
            if !ax.wrap || ax.single || ax.length <= 1 {
                continue;
            }
            let (s, d) = (self.coord(src, a), self.coord(dst, a));
            let fwd = (d + ax.length - s) % ax.length;
            if fwd != 0 && ax.length - fwd < fwd {
                h |= 1 << a;
            }
        }
        h
    }

    /// Whether router `r` lies on some minimal route from `src` to `dst`
    /// under `hints` (the box the adaptive router may wander in): on every
    /// axis `r` is at most the hops left from `src` along the hinted way.
    pub fn on_minimal_paths(&self, src: u32, dst: u32, hints: u8, r: u32) -> bool {
        (0..self.axes.len()).all(|a| {
            let ax = &self.axes[a];
            let (s, c) = (self.coord(src, a), self.coord(r, a));
            let left = self.remaining(src, dst, hints, a);
            if ax.single || !ax.wrap {
                let d = self.coord(dst, a);
                c >= s.min(d) && c <= s.max(d) && (left > 0 || c == s)
            } else {
                let l = ax.length;
                let steps = if hints & (1 << a) != 0 { (s + l - c) % l } else { (c + l - s) % l };
                steps <= left
            }
        })
    }

    /// Axes (bit per axis) on which `dst` is exactly half a ring from
    /// `src`: both directions are minimal there, and [`Self::hints`] draws one.
    pub fn tied_axes(&self, src: u32, dst: u32) -> u8 {
        let mut t = 0u8;
        for (a, ax) in self.axes.iter().enumerate() {
            if ax.single || !ax.wrap || ax.length <= 1 {
                continue;
            }
            let (s, d) = (self.coord(src, a), self.coord(dst, a));
            let fwd = (d + ax.length - s) % ax.length;
            if fwd != 0 && 2 * fwd == ax.length {
                t |= 1 << a;
            }
        }
        t
    }

    /// The escape route from `src` to `dst` under `hints` as legs (port,
    /// hops), in the escape order, when that order is by dimension: the
    /// ports [`Self::escape_port`] gives hop by hop, found once per axis (a
    /// hop along one axis leaves the hops left on the others unchanged).
    /// `None` under [`EscapeOrder::Direction`], whose order changes as
    /// directions finish. For the flow model, which walks about a million
    /// routes per open-loop run.
    pub fn dimension_legs(&self, src: u32, dst: u32, hints: u8) -> Option<impl Iterator<Item = (u8, u32)> + '_> {
        (self.escape_order == EscapeOrder::Dimension).then(|| {
            self.order.iter().map(|&a| a as usize).filter_map(move |a| {
                let hops = self.remaining(src, dst, hints, a);
                (hops > 0).then(|| (self.port_for(src, dst, hints, a), hops))
            })
        })
    }

    /// Hops left on axis `a` in the hinted direction.
    #[inline]
    fn remaining(&self, r: u32, dst: u32, hints: u8, a: usize) -> u32 {
        let ax = &self.axes[a];
        let (c, d) = (self.coord(r, a), self.coord(dst, a));
        if c == d {
            return 0;
        }
        if ax.single || !ax.wrap {
            return c.abs_diff(d);
        }
        let l = ax.length;
        if hints & (1 << a) != 0 {
            ring_distance(d, c, l)
        } else {
            ring_distance(c, d, l)
        }
    }

    #[inline]
    fn port_for(&self, r: u32, dst: u32, hints: u8, a: usize) -> u8 {
        let ax = &self.axes[a];
        if ax.single {
            return ax.plus;
        }
        let minus = if ax.wrap {
            hints & (1 << a) != 0
        } else {
            self.coord(dst, a) < self.coord(r, a)
        };
        if minus {
            ax.minus
        } else {
            ax.plus
        }
    }

    pub fn productive_ports(&self, r: u32, dst: u32, hints: u8) -> u16 {
        let mut m = 0u16;
        for a in 0..self.axes.len() {
            if self.remaining(r, dst, hints, a) > 0 {
                m |= 1 << self.port_for(r, dst, hints, a);
            }
        }
        m
    }

    /// [`Self::productive_ports`] and [`Self::escape_port`] in one pass over
    /// the axes (the route unit needs both for every packet at every hop).
    #[inline]
    pub fn candidates(&self, r: u32, dst: u32, hints: u8) -> (u16, Option<u8>) {
        const NO_PORT: u8 = u8::MAX;
        let mut port_of_axis = [NO_PORT; 8];
        let mut mask = 0u16;
        for (a, slot) in port_of_axis.iter_mut().enumerate().take(self.axes.len()) {
            if self.remaining(r, dst, hints, a) > 0 {
                let p = self.port_for(r, dst, hints, a);
                mask |= 1 << p;
                *slot = p;
            }
        }
        let mut ports = self.order.iter().map(|&a| port_of_axis[a as usize]).filter(|&p| p != NO_PORT);
        let escape = match self.escape_order {
            EscapeOrder::Dimension => ports.next(),
            // Every `+` (and single-port) direction in axis order, then every `−`.
            EscapeOrder::Direction => {
                let mut first_minus = None;
                let mut plus = None;
                for p in ports {
                    if !self.port_minus[p as usize] {
                        plus = Some(p);
                        break;
                    }
                    first_minus.get_or_insert(p);
                }
                plus.or(first_minus)
            }
        };
        (mask, escape)
    }

    pub fn escape_port(&self, r: u32, dst: u32, hints: u8) -> Option<u8> {
        match self.escape_order {
            EscapeOrder::Dimension => self
                .order
                .iter()
                .map(|&a| a as usize)
                .find(|&a| self.remaining(r, dst, hints, a) > 0)
                .map(|a| self.port_for(r, dst, hints, a)),
            EscapeOrder::Direction => {
                // Every `+` (and single-port) direction in axis order, then every `−`.
                let mut first_minus = None;
                for &a in &self.order {
                    let a = a as usize;
                    if self.remaining(r, dst, hints, a) == 0 {
                        continue;
                    }
                    let p = self.port_for(r, dst, hints, a);
                    if self.port_minus[p as usize] {
                        first_minus.get_or_insert(p);
                    } else {
                        return Some(p);
                    }
                }
                first_minus
            }
        }
    }

    #[inline]
    pub fn is_dateline(&self, r: u32, p: u8) -> bool {
        let a = self.port_axis[p as usize] as usize;
        let ax = &self.axes[a];
        if !ax.wrap || ax.single || ax.length < 2 {
            return false;
        }
        let c = self.coord(r, a);
        if self.port_minus[p as usize] {
            c == 0
        } else {
            c == ax.length - 1
        }
    }

    /// Ring id of a port: its axis in dimension order, its direction in direction order.
    #[inline]
    pub fn ring(&self, p: u8) -> u8 {
        match self.escape_order {
            EscapeOrder::Dimension => self.port_axis[p as usize],
            EscapeOrder::Direction => p,
        }
    }

    /// Whether routers `a` and `b` lie on one ring of the axis of port
    /// `p`: their coordinates differ on that axis at most.
    pub fn on_ring_of(&self, a: u32, b: u32, p: u8) -> bool {
        let axis = self.port_axis[p as usize] as usize;
        (0..self.axes.len()).all(|x| x == axis || self.coord(a, x) == self.coord(b, x))
    }

    /// Every route state [`Self::hints`] can draw from `src` to `dst`:
    /// the shortest way, with each tied axis (exactly half a ring) either way.
    pub fn initial_states(&self, src: u32, dst: u32) -> Vec<u8> {
        let (base, tied) = (self.shortest_hints(src, dst), self.tied_axes(src, dst));
        // Every subset of the tied axes' bits.
        let mut out = vec![base];
        let mut sub = tied;
        while sub != 0 {
            out.push(base ^ sub);
            sub = (sub - 1) & tied;
        }
        out
    }

    #[inline]
    pub fn straight(&self, in_port: u8) -> u8 {
        // A packet arriving on port q travels away from q's direction: it
        // continues through the opposite port of the same axis.
        self.arrive_port[in_port as usize]
    }

    pub fn distance(&self, a: u32, b: u32) -> u32 {
        self.torus.distance(NodeId(a), NodeId(b))
    }

    pub fn port_name(&self, p: u8) -> String {
        self.torus.ports()[p as usize].name.clone()
    }

    pub fn router_label(&self, r: u32) -> String {
        let c: Vec<String> = (0..self.axes.len())
            .map(|a| self.coord(r, a).to_string())
            .collect();
        format!("({})", c.join(","))
    }
}

/// Steps from coordinate `from` to `to` going up a ring of `length`
/// (both below it): `(to + length − from) mod length` without the
/// division, which ran for every axis of every packet at every hop.
#[inline]
fn ring_distance(from: u32, to: u32, length: u32) -> u32 {
    let x = to + length - from;
    if x >= length {
        x - length
    } else {
        x
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn ring_distance_is_the_modulo() {
        for l in 1..40u32 {
            for a in 0..l {
                for b in 0..l {
                    assert_eq!(super::ring_distance(a, b, l), (b + l - a) % l, "{a} -> {b} on a ring of {l}");
                }
            }
        }
    }

    use super::*;
    use rand::SeedableRng;
    use tofusim_topology::{tofu, Axis};

    fn walk(rt: &TorusRouting, src: u32, dst: u32, seed: u64, escape: bool) -> u32 {
        let mut rng = Rng::seed_from_u64(seed);
        let h = rt.hints(src, dst, &mut rng);
        let mut r = src;
        let mut hops = 0;
        while r != dst {
            let p = if escape {
                rt.escape_port(r, dst, h).expect("not at destination")
            } else {
                let m = rt.productive_ports(r, dst, h);
                assert_ne!(m, 0);
                m.trailing_zeros() as u8
            };
            r = rt.neighbor(r, p).expect("connected").0;
            hops += 1;
            assert!(hops < 1000);
        }
        assert_eq!(rt.escape_port(dst, dst, h), None);
        assert_eq!(rt.productive_ports(dst, dst, h), 0);
        hops
    }

    /// Tori, meshes, a mixed one and a Tofu shape.
    fn shapes() -> [Torus; 4] {
        [
            Torus::with_lengths(&[4, 5, 3], &[true, true, true]),
            Torus::with_lengths(&[4, 3], &[false, true]),
            Torus::with_lengths(&[2, 2, 6], &[true, false, true]),
            tofu::tofu_torus([Axis::ring("x", 3), Axis::path("y", 2), Axis::ring("z", 4)]),
        ]
    }

    #[test]
    fn candidates_are_the_productive_ports_and_the_escape_port() {
        let shapes = shapes();
        for t in &shapes {
            let n = t.node_count() as u32;
            let axes = t.axes().len();
            let mut order: Vec<usize> = (0..axes).collect();
            order.reverse();
            for eo in [EscapeOrder::Dimension, EscapeOrder::Direction] {
                let rt = TorusRouting::new(t, &order, eo);
                for (r, d) in (0..n).flat_map(|r| (0..n).map(move |d| (r, d))) {
                    for hints in 0..(1u16 << axes) {
                        let h = hints as u8;
                        assert_eq!(rt.candidates(r, d, h), (rt.productive_ports(r, d, h), rt.escape_port(r, d, h)), "{r} -> {d}, hints {h:b}, {eo:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn routes_are_minimal_on_tori_meshes_and_tofu() {
        let shapes = shapes();
        for t in &shapes {
            let order: Vec<usize> = if tofu::is_tofu(t) {
                tofu::ROUTING_ORDER.to_vec()
            } else {
                (0..t.axes().len()).collect()
            };
            for eo in [EscapeOrder::Dimension, EscapeOrder::Direction] {
                let rt = TorusRouting::new(t, &order, eo);
                let n = t.node_count() as u32;
                for s in 0..n {
                    for d in 0..n {
                        let want = t.distance(NodeId(s), NodeId(d));
                        assert_eq!(walk(&rt, s, d, (s * n + d) as u64, true), want);
                        assert_eq!(walk(&rt, s, d, 7, false), want);
                    }
                }
            }
        }
    }

    #[test]
    fn dimension_legs_are_the_escape_route() {
        let shapes = shapes();
        for t in &shapes {
            let axes = t.axes().len();
            let order: Vec<usize> = (0..axes).rev().collect();
            let rt = TorusRouting::new(t, &order, EscapeOrder::Dimension);
            let n = t.node_count() as u32;
            for (s, d) in (0..n).flat_map(|s| (0..n).map(move |d| (s, d))) {
                for hints in 0..(1u16 << axes) {
                    let h = hints as u8;
                    let mut hop_by_hop = Vec::new();
                    let mut r = s;
                    while let Some(p) = rt.escape_port(r, d, h) {
                        hop_by_hop.push(p);
                        r = rt.neighbor(r, p).unwrap().0;
                    }
                    let legs: Vec<u8> = rt.dimension_legs(s, d, h).unwrap().flat_map(|(p, k)| std::iter::repeat_n(p, k as usize)).collect();
                    assert_eq!(legs, hop_by_hop, "{s} -> {d}, hints {h:b}");
                }
            }
            assert!(TorusRouting::new(t, &order, EscapeOrder::Direction).dimension_legs(0, 1, 0).is_none());
        }
    }

    #[test]
    fn tofu_escape_follows_xyzacb() {
        let t = tofu::tofu_torus([Axis::ring("x", 3), Axis::ring("y", 3), Axis::ring("z", 3)]);
        let rt = TorusRouting::new(&t, &tofu::ROUTING_ORDER, EscapeOrder::Dimension);
        let src = t.node_id(&[0, 0, 0, 0, 0, 0]).0;
        let dst = t.node_id(&[1, 1, 1, 1, 1, 1]).0;
        let mut rng = Rng::seed_from_u64(1);
        let h = rt.hints(src, dst, &mut rng);
        let mut r = src;
        let mut names = Vec::new();
        while let Some(p) = rt.escape_port(r, dst, h) {
            names.push(rt.port_name(p));
            r = rt.neighbor(r, p).unwrap().0;
        }
        assert_eq!(names, ["x+", "y+", "z+", "a", "c", "b+"]);
    }

    #[test]
    fn datelines_are_the_wrap_links() {
        let t = Torus::with_lengths(&[4], &[true]);
        let rt = TorusRouting::new(&t, &[0], EscapeOrder::Dimension);
        assert!(rt.is_dateline(3, 0));
        assert!(!rt.is_dateline(2, 0));
        assert!(rt.is_dateline(0, 1));
        assert_eq!(rt.neighbor(3, 0), Some((0, 1)));
        assert_eq!(rt.straight(1), 0);
    }
}
