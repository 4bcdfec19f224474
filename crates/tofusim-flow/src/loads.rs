//! The load a pair's traffic puts on each resource, summed without
//! building its routes one by one: what an open-loop pattern below
//! saturation needs (every flow runs at its demand, so only the loads
//! matter — about 100,000 pairs on an 8×8×8 torus).
//!
//! On an adaptive torus [`FlowNet::visit_routes`] spreads a pair over its
//! distinct minimal routes in equal shares: one per order of the `j` axes
//! it moves on and per direction of each of its `t` axes at exactly half a
//! ring — `j!·2ᵗ` routes of about `j` legs each, walked link by link and
//! compared to drop duplicates. [`RouteLoads`] sums the same loads by leg:
//! the leg on axis `a` starts after the legs of some set `S` of the other
//! axes, and `|S|!·(j−1−|S|)!` of the `j!` orders put exactly `S` first,
//! so it walks each leg once per set `S` (`j·2ʲ⁻¹` legs: 12 instead of 18
//! for three axes) with that share, half each way on a tied axis, from the
//! router that has the destination's coordinates on `S` and the source's
//! elsewhere. Same loads up to the order of the float sums (tested against
//! the route-by-route sum); same random draws. Other networks (one route
//! per pair, or a dragonfly's Valiant routes) go route by route.

use rand::RngExt;
use tofusim_routing::{Rng, Routing};
use tofusim_topology::NodeId;

use crate::{FlowNet, RouteScratch};

/// Sums of route loads, in [`FlowNet::capacity`]'s order.
#[derive(Debug, Default)]
pub struct LoadSum {
    /// Per resource, the weight of the routes that use it.
    pub load: Vec<f64>,
    /// Per router hop count, the weight of the routes that long.
    pub by_hops: Vec<f64>,
    /// Distinct routes summed (flows, had each been kept).
    pub routes: u64,
    scratch: RouteScratch,
    starts: Vec<i64>,
}

impl LoadSum {
    /// Empty sums over `net`'s resources.
    pub fn new(net: &FlowNet) -> Self {
        LoadSum { load: vec![0.0; net.capacity.len()], ..Default::default() }
    }

    fn hops(&mut self, hops: u64, weight: f64) {
        let h = hops as usize;
        if self.by_hops.len() <= h {
            self.by_hops.resize(h + 1, 0.0);
        }
        self.by_hops[h] += weight;
    }
}

/// Adds pairs' loads to a [`LoadSum`] (see the module docs).
pub struct RouteLoads<'a> {
    net: &'a FlowNet,
    every_order: Option<EveryOrder>,
}

/// An adaptive torus whose orders are every order of its axes.
struct EveryOrder {
    ports: usize,
    /// Per router, its coordinate on each axis (`coords[r * axes + a]`).
    coords: Vec<u16>,
    axes: usize,
    /// Per axis `a` and coordinates `(c, d)` on it: the leg from `c` to `d`
    /// (0 hops when `c == d`), `leg[a].1[c * leg[a].0 + d]` (`leg[a].0` the
    /// axis's length) — every order's, read from one of them.
    leg: Vec<(usize, Vec<Leg>)>,
    /// The legs' links, as offsets from their start router's first link
    /// (`router * ports`): the hops of a leg are independent sums, not a
    /// chain of neighbour look-ups.
    steps: Vec<i64>,
    /// `share[j][k]`: the share of the orders of `j` axes that put a given
    /// `k` of the others before a given one (`k!·(j−1−k)!/j!`).
    share: Vec<Vec<f64>>,
}

/// A leg along one axis between two coordinates.
#[derive(Clone, Copy, Debug, Default)]
struct Leg {
    hops: u32,
    /// At exactly half a ring: both ways, half each.
    tied: bool,
    /// How far it moves the router number.
    delta: i64,
    /// Its links in `steps` (`hops` of them from here), and the other
    /// way's when tied.
    steps: [u32; 2],
}

impl<'a> RouteLoads<'a> {
    pub fn new(net: &'a FlowNet) -> Self {
        RouteLoads { net, every_order: EveryOrder::of(net) }
    }

    /// Whether pairs are summed by leg (an adaptive torus) rather than
    /// route by route.
    pub fn by_leg(&self) -> bool {
        self.every_order.is_some()
    }

    /// Adds `weight` sent from node `a` to node `b` on TNI `tni`, spread
    /// over its routes as [`FlowNet::visit_routes`] spreads it (drawing
    /// the same random numbers from `rng`), to `sum`.
    pub fn add(&self, sum: &mut LoadSum, a: u32, b: u32, tni: u8, weight: f64, rng: &mut Rng) {
        if let Some(e) = &self.every_order {
            e.add(self.net, sum, a, b, tni, weight, rng);
            return;
        }
        let mut scratch = std::mem::take(&mut sum.scratch);
        self.net.visit_routes(a, b, tni, rng, &mut scratch, |links, hops, share| {
            for &l in links {
                sum.load[l as usize] += weight * share;
            }
            sum.hops(hops, weight * share);
            sum.routes += 1;
        });
        sum.scratch = scratch;
    }
}

impl EveryOrder {
    /// The by-leg form of `net`, if it is an adaptive torus (one node per
    /// router) whose orders are, on the axes longer than 1, every order of
    /// them equally often.
    fn of(net: &FlowNet) -> Option<Self> {
        let Routing::Torus(escape) = &net.routing else { return None };
        let Some(Routing::Torus(legs)) = net.orders.first() else { return None };
        if net.orders.len() < 2 || net.npr != 1 {
            return None;
        }
        let torus = escape.torus();
        let lengths = torus.lengths();
        let moving: Vec<u8> = (0..lengths.len() as u8).filter(|&a| lengths[a as usize] > 1).collect();
        let axis: Vec<u8> = torus.ports().iter().map(|p| p.axis as u8).collect();
        // Each order's sequence of axes, read from a route that moves once
        // on every axis.
        let coords: Vec<u32> = lengths.iter().map(|&l| u32::from(l > 1)).collect();
        let far = torus.node_id(&coords).0;
        let mut seen: Vec<Vec<u8>> = Vec::new();
        for o in &net.orders {
            let Routing::Torus(t) = o else { return None };
            seen.push(t.dimension_legs(0, far, t.shortest_hints(0, far))?.map(|(p, _)| axis[p as usize]).collect());
        }
        seen.sort();
        let per = net.orders.len() / (1..=moving.len()).product::<usize>().max(1);
        let mut every: Vec<Vec<u8>> = permutations(&moving).into_iter().flat_map(|p| std::iter::repeat_n(p, per)).collect();
        every.sort();
        if seen != every {
            return None;
        }
        let (axes, routers, ports) = (lengths.len(), legs.routers(), legs.ports());
        let mut coords = vec![0u16; routers * axes];
        let mut c = Vec::new();
        for r in 0..routers {
            torus.coords_into(NodeId(r as u32), &mut c);
            for (a, &x) in c.iter().enumerate() {
                coords[r * axes + a] = x as u16;
            }
        }
        // Each axis's legs, from routes between routers that differ on
        // that axis only (a route's leg on an axis depends on the two
        // coordinates on it alone, and a hop along it moves the router
        // number by the same amount from any router: node numbers are
        // mixed-radix coordinates).
        let neighbor = legs.neighbor_table();
        let mut steps: Vec<i64> = Vec::new();
        let mut walk = |rc: u32, rd: u32, hints: u8| -> Option<(u32, u32)> {
            let (port, hops) = legs.dimension_legs(rc, rd, hints)?.next()?;
            let first = steps.len() as u32;
            let mut r = rc as i64;
            for _ in 0..hops {
                steps.push((r - rc as i64) * ports as i64 + port as i64);
                r = neighbor[r as usize * ports + port as usize] as i64;
            }
            Some((first, hops))
        };
        let mut stride = 1i64;
        let mut leg = Vec::new();
        for (a, &l) in lengths.iter().enumerate() {
            let mut table = vec![Leg::default(); (l * l) as usize];
            for (c, d) in (0..l).flat_map(|c| (0..l).map(move |d| (c, d))) {
                // Routers with coordinate c and d on this axis, 0 elsewhere.
                let (rc, rd) = ((c as i64 * stride) as u32, (d as i64 * stride) as u32);
                let hints = legs.shortest_hints(rc, rd);
                if let Some((first, hops)) = walk(rc, rd, hints) {
                    let tied = escape.tied_axes(rc, rd) & (1 << a) != 0;
                    let other = if tied { walk(rc, rd, hints ^ (1 << a))?.0 } else { first };
                    table[(c * l + d) as usize] = Leg { hops, tied, delta: (d as i64 - c as i64) * stride, steps: [first, other] };
                }
            }
            leg.push((l as usize, table));
            stride *= l as i64;
        }
        let fact = |k: usize| (1..=k).product::<usize>() as f64;
        let share = (0..=axes).map(|j| (0..j.max(1)).map(|k| fact(k) * fact(j.saturating_sub(1 + k)) / fact(j)).collect()).collect();
        Some(EveryOrder { ports, coords, axes, leg, steps, share })
    }

    #[allow(clippy::too_many_arguments)]
    fn add(&self, net: &FlowNet, sum: &mut LoadSum, a: u32, b: u32, tni: u8, weight: f64, rng: &mut Rng) {
        let links_end = net.routers * net.ports;
        sum.load[links_end + net.nodes + net.lane(a, tni)] += weight;
        sum.load[links_end + a as usize] += weight;
        // The pair's legs, in axis order.
        let mut legs = [Leg::default(); 8];
        let (mut j, mut hops, mut tied) = (0, 0u64, 0u32);
        let (ca, cb) = (&self.coords[a as usize * self.axes..][..self.axes], &self.coords[b as usize * self.axes..][..self.axes]);
        for (ax, (l, table)) in self.leg.iter().enumerate() {
            let leg = table[ca[ax] as usize * l + cb[ax] as usize];
            if leg.hops > 0 {
                if leg.tied {
                    // The draw `TorusRouting::hints` makes for a walked
                    // route (a direction at each tie; both are taken here):
                    // the same random numbers, tested.
                    rng.random_bool(0.5);
                    tied += 1;
                }
                legs[j] = leg;
                hops += leg.hops as u64;
                j += 1;
            }
        }
        let legs = &legs[..j];
        sum.hops(hops, weight);
        sum.routes += (1..=j as u64).product::<u64>() << tied;
        // The router each set of legs leads to (`start[set]`, a set a bit
        // mask over `legs`), as its first link.
        let start = &mut sum.starts;
        start.resize(1 << j, 0);
        start[0] = a as i64 * self.ports as i64;
        for set in 1..1usize << j {
            let low = set.trailing_zeros() as usize;
            start[set] = start[set & (set - 1)] + legs[low].delta * self.ports as i64;
        }
        let share = &self.share[j];
        for (i, leg) in legs.iter().enumerate() {
            let ways = if leg.tied { &leg.steps[..] } else { &leg.steps[..1] };
            let half = if leg.tied { 0.5 } else { 1.0 };
            // Every set of the other legs.
            for set in (0..1usize << j).filter(|s| s & (1 << i) == 0) {
                let w = weight * share[set.count_ones() as usize] * half;
                let base = start[set];
                for &first in ways {
                    for &step in &self.steps[first as usize..][..leg.hops as usize] {
                        sum.load[(base + step) as usize] += w;
                    }
                }
            }
        }
    }
}

/// Every order of `items`.
fn permutations(items: &[u8]) -> Vec<Vec<u8>> {
    if items.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &x) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Capacities;
    use rand::SeedableRng;
    use tofusim_routing::{EscapeOrder, TorusRouting};
    use tofusim_topology::Torus;

    /// A torus of `lengths` (wrapping where `wrap`), adaptive: every order.
    fn net(lengths: &[u32], wrap: &[bool], adaptive: bool) -> FlowNet {
        let t = Torus::with_lengths(lengths, wrap);
        let axes: Vec<usize> = (0..lengths.len()).collect();
        let routing = Routing::Torus(TorusRouting::new(&t, &axes, EscapeOrder::Dimension));
        let orders = if adaptive {
            permutations(&axes.iter().map(|&a| a as u8).collect::<Vec<_>>())
                .iter()
                .map(|o| Routing::Torus(TorusRouting::new(&t, &o.iter().map(|&a| a as usize).collect::<Vec<_>>(), EscapeOrder::Dimension)))
                .collect()
        } else {
            Vec::new()
        };
        let ports = routing.ports();
        FlowNet::new(routing, orders, 1, &Capacities { port: vec![1.0; ports], node: 2.0, lane: 3.0, lanes: 2 })
    }

    /// The sums route by route, as `visit_routes` gives them.
    fn walked(net: &FlowNet, pairs: &[(u32, u32, f64)], seed: u64) -> LoadSum {
        let mut sum = LoadSum::new(net);
        let mut rng = Rng::seed_from_u64(seed);
        let mut scratch = RouteScratch::default();
        for &(a, b, w) in pairs {
            net.visit_routes(a, b, 1, &mut rng, &mut scratch, |links, hops, share| {
                for &l in links {
                    sum.load[l as usize] += w * share;
                }
                sum.hops(hops, w * share);
                sum.routes += 1;
            });
        }
        sum
    }

    #[test]
    fn leg_sums_equal_route_sums_on_tori_and_meshes() {
        for (lengths, wrap) in [
            (&[8u32, 8, 8][..], &[true, true, true][..]),
            (&[4, 2, 3][..], &[true, true, true][..]),
            (&[5, 4, 1, 2][..], &[true, false, true, true][..]),
            (&[6, 3][..], &[false, true][..]),
        ] {
            let net = net(lengths, wrap, true);
            let loads = RouteLoads::new(&net);
            assert!(loads.by_leg(), "{lengths:?}");
            let n = net.nodes as u32;
            let pairs: Vec<(u32, u32, f64)> = (0..n).flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b, 1.0 + (a * 7 + b) as f64 % 5.0))).collect();
            let want = walked(&net, &pairs, 3);
            let mut got = LoadSum::new(&net);
            let mut rng = Rng::seed_from_u64(3);
            for &(a, b, w) in &pairs {
                loads.add(&mut got, a, b, 1, w, &mut rng);
            }
            assert_eq!(got.routes, want.routes, "{lengths:?}");
            assert_eq!(got.by_hops.len(), want.by_hops.len());
            for (x, y) in got.load.iter().chain(&got.by_hops).zip(want.load.iter().chain(&want.by_hops)) {
                assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{lengths:?}: {x} vs {y}");
            }
            // The same draws: the generator ends where walking leaves it.
            let mut walk_rng = Rng::seed_from_u64(3);
            let mut scratch = RouteScratch::default();
            for &(a, b, _) in &pairs {
                net.visit_routes(a, b, 1, &mut walk_rng, &mut scratch, |_, _, _| {});
            }
            assert_eq!(rng, walk_rng);
        }
    }

    #[test]
    fn one_route_per_pair_goes_route_by_route() {
        let net = net(&[4, 4], &[true, true], false);
        let loads = RouteLoads::new(&net);
        assert!(!loads.by_leg());
        let pairs = [(0, 5, 1.0), (3, 12, 2.0), (0, 2, 0.5)];
        let want = walked(&net, &pairs, 9);
        let mut got = LoadSum::new(&net);
        let mut rng = Rng::seed_from_u64(9);
        for &(a, b, w) in &pairs {
            loads.add(&mut got, a, b, 1, w, &mut rng);
        }
        assert_eq!((got.load, got.by_hops, got.routes), (want.load, want.by_hops, want.routes));
    }
}
