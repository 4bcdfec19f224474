//! The network as the flow model sees it: routes over directed links, and
//! the resources they use with their capacities.
//!
//! Resources, in one table ([`FlowNet::capacity`], in whatever unit the
//! caller gives — wire bytes per second or per cycle): every directed link
//! (router-major, its port's rate), then every node's injection (its host
//! interface), then every node's send lanes (one per TNI). A message is one
//! or several flows on these resources ([`FlowNet::routes`]): its lane, its
//! node's injection, then the links of its route. Reception is limited by
//! the links into the node only, as in the packet engine (its reception
//! FIFOs drain at once).

use tofusim_routing::{DragonflyMode, DragonflyRouting, Rng, Routing};

/// Capacities of the resources, in the caller's unit.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq)]
pub struct Capacities {
    /// Per port of a router: its link's rate (the same on every router;
    /// slower link classes less).
    pub port: Vec<f64>,
    /// A node's injection: its host interface, or its injection links.
    pub node: f64,
    /// One send lane (a TNI's DMA engine and the injection FIFOs it feeds).
    pub lane: f64,
    /// Send lanes per node (at least 1).
    pub lanes: u8,
}

/// Routes and resources of a network for the flow model.
pub struct FlowNet {
    /// The route of every message (dimension order on a torus, the
    /// dragonfly's minimal or Valiant routes).
    pub routing: Routing,
    /// Adaptive tori: the routes of every dimension order, over which a
    /// message is spread (the engine's adaptive minimal routing spreads
    /// its packets over the minimal paths; dimension orders stand for
    /// them). Empty otherwise.
    pub orders: Vec<Routing>,
    pub routers: usize,
    pub ports: usize,
    pub nodes: usize,
    /// Nodes per router (1 on a torus).
    pub npr: u32,
    /// Send lanes per node.
    pub tnis: usize,
    /// Every resource's capacity (see the module docs for the order).
    pub capacity: Vec<f64>,
}

/// One route of a message: the resources it uses (lane, injection, links),
/// its router hops and its share of the message's bytes.
pub type RoutePart = (Vec<u32>, u64, f64);

impl FlowNet {
    /// The flow network of `routing` with `nodes_per_router` nodes on each
    /// router; `orders` as [`FlowNet::orders`].
    pub fn new(
        routing: Routing,
        orders: Vec<Routing>,
        nodes_per_router: u32,
        c: &Capacities,
    ) -> Self {
        let (routers, ports) = (routing.routers(), routing.ports());
        let npr = nodes_per_router.max(1);
        let nodes = routers * npr as usize;
        let tnis = c.lanes.max(1) as usize;
        let mut capacity: Vec<f64> = (0..routers * ports)
            .map(|i| c.port.get(i % ports).copied().unwrap_or(0.0))
            .collect();
        capacity.extend(std::iter::repeat_n(c.node, nodes));
        capacity.extend(std::iter::repeat_n(c.lane, nodes * tnis));
        Self {
            routing,
            orders,
            routers,
            ports,
            nodes,
            npr,
            tnis,
            capacity,
        }
    }

    /// Whether the parts of a message share its bytes as they go
    /// (adaptive tori: the engine sends each packet on whichever minimal
    /// path is free, so the parts finish together) rather than in fixed
    /// shares (Valiant: each packet on a random one).
    pub fn balanced(&self) -> bool {
        !self.orders.is_empty()
    }

    /// Whether a message may leave its minimal route (Valiant dragonflies:
    /// through other routers' links even between neighbours).
    pub fn detours(&self) -> bool {
        matches!(&self.routing, Routing::Dragonfly(d) if d.mode == DragonflyMode::Valiant)
    }

    /// The resource index of node `node`'s send lane `tni` (wrapping).
    pub fn lane(&self, node: u32, tni: u8) -> usize {
        node as usize * self.tnis + tni as usize % self.tnis
    }

    /// The routes of a message from node `a` to node `b` on TNI `tni`: one
    /// route; on an adaptive torus the distinct routes of every dimension
    /// order and, at exactly half a ring, of both directions; on a
    /// dragonfly under Valiant routing up to 16 of the Valiant routes (the
    /// engine's packets spread over the minimal or Valiant paths).
    pub fn routes(&self, a: u32, b: u32, tni: u8, rng: &mut Rng) -> Vec<RoutePart> {
        let mut out = Vec::new();
        self.visit_routes(a, b, tni, rng, &mut RouteScratch::default(), |links, hops, share| {
            out.push((links.to_vec(), hops, share))
        });
        out
    }

    /// The same routes given one at a time to `visit` (resources, router
    /// hops, share of the message), in the same order and drawing the same
    /// random numbers as [`FlowNet::routes`], built in `scratch`'s buffers:
    /// no allocation per route once they have grown (open-loop patterns
    /// walk about a million routes and keep none).
    pub fn visit_routes(
        &self,
        a: u32,
        b: u32,
        tni: u8,
        rng: &mut Rng,
        scratch: &mut RouteScratch,
        mut visit: impl FnMut(&[u32], u64, f64),
    ) {
        let (ra, rb) = (a / self.npr, b / self.npr);
        if let Routing::Dragonfly(d) = &self.routing {
            // Valiant's random groups, and Aries' minimal routing hashed
            // per packet: the message spreads over the routes its packets
            // would take.
            // (Valiant: 16 of its intermediate groups; the hash: all 64
            // salts, which pick among up to 64 global links.)
            let valiant;
            let (all, most): (&[u8], usize) = match d.mode {
                DragonflyMode::Valiant => {
                    valiant = d.valiant_choices(ra, rb);
                    (&valiant, 16)
                }
                DragonflyMode::Minimal if d.aries_form() => (&DragonflyRouting::HASHED_MINIMAL_STATES, 64),
                _ => (&[], 0),
            };
            if !all.is_empty() {
                let k = all.len().min(most);
                let step = all.len() as f64 / k as f64;
                let buf = scratch.buffer(0);
                for i in 0..k {
                    let hops = self.walk(&self.routing, a, b, tni, all[(i as f64 * step) as usize], buf);
                    visit(buf, hops, 1.0 / k as f64);
                }
                return;
            }
        }
        let hints = self.routing.init(ra, rb, b % self.npr, rng);
        if self.orders.len() > 1 {
            // Every dimension order, and at exactly half a ring both
            // directions (the engine draws one per packet): the distinct
            // minimal routes, in equal shares.
            let tied = match &self.routing {
                Routing::Torus(t) => t.tied_axes(ra, rb),
                // Only tori have several dimension orders.
                Routing::Dragonfly(_) | Routing::FatTree(_) => 0,
            };
            let variants = &mut scratch.variants;
            variants.clear();
            variants.push(hints);
            for axis in (0..8).filter(|a| tied & (1 << a) != 0) {
                for i in 0..variants.len() {
                    variants.push(variants[i] ^ (1 << axis));
                }
            }
            let mut found = 0;
            for o in &self.orders {
                for v in 0..scratch.variants.len() {
                    let h = scratch.variants[v];
                    let hops = self.walk(o, a, b, tni, h, scratch.buffer(found));
                    let (seen, new) = scratch.routes.split_at(found);
                    if !seen.iter().any(|x| x.0 == new[0].0) {
                        scratch.routes[found].1 = hops;
                        found += 1;
                    }
                }
            }
            for (links, hops) in &scratch.routes[..found] {
                visit(links, *hops, 1.0 / found as f64);
            }
            return;
        }
        let buf = scratch.buffer(0);
        let hops = self.walk(&self.routing, a, b, tni, hints, buf);
        visit(buf, hops, 1.0);
    }

    /// The route of `routing` with route state `hints` from node `a` to
    /// node `b`, written to `links`: the sender's lane and injection, then
    /// the links. Returns its router hops.
    fn walk(&self, routing: &Routing, a: u32, b: u32, tni: u8, hints: u8, links: &mut Vec<u32>) -> u64 {
        let links_end = self.routers * self.ports;
        links.clear();
        links.push((links_end + self.nodes + self.lane(a, tni)) as u32);
        links.push((links_end as u32) + a);
        let (mut r, rb) = (a / self.npr, b / self.npr);
        if let Some(legs) = match routing {
            Routing::Torus(t) => t.dimension_legs(r, rb, hints),
            Routing::Dragonfly(_) | Routing::FatTree(_) => None,
        } {
            for (p, hops) in legs {
                for _ in 0..hops {
                    links.push((r as usize * self.ports + p as usize) as u32);
                    r = routing.neighbor(r, p).expect("routes follow links").0;
                }
            }
            debug_assert_eq!(r, rb, "a dimension-order route ends at its destination");
            return (links.len() - 2) as u64;
        }
        let mut h = routing.advance(r, hints);
        while let Some(p) = routing.escape_port(r, rb, h) {
            links.push((r as usize * self.ports + p as usize) as u32);
            r = routing.neighbor(r, p).expect("routes follow links").0;
            h = routing.advance(r, h);
        }
        (links.len() - 2) as u64
    }
}

/// The buffers [`FlowNet::visit_routes`] builds routes in, kept by the
/// caller from one message to the next.
#[derive(Debug, Default)]
pub struct RouteScratch {
    /// Distinct routes found so far for the current message, and their hops.
    routes: Vec<(Vec<u32>, u64)>,
    /// Route states (hint bits) to walk under every dimension order.
    variants: Vec<u8>,
}

impl RouteScratch {
    /// Route buffer `i`, made when first needed.
    fn buffer(&mut self, i: usize) -> &mut Vec<u32> {
        if self.routes.len() <= i {
            self.routes.resize_with(i + 1, Default::default);
        }
        &mut self.routes[i].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use tofusim_routing::{EscapeOrder, TorusRouting};
    use tofusim_topology::Torus;

    /// An n×2 torus; adaptive: both dimension orders.
    fn ring(n: u32, adaptive: bool) -> FlowNet {
        let t = Torus::with_lengths(&[n, 2], &[true, true]);
        let routing = Routing::Torus(TorusRouting::new(&t, &[0, 1], EscapeOrder::Dimension));
        let order = |o: &[usize]| Routing::Torus(TorusRouting::new(&t, o, EscapeOrder::Dimension));
        let orders = if adaptive {
            vec![order(&[0, 1]), order(&[1, 0])]
        } else {
            Vec::new()
        };
        let ports = routing.ports();
        FlowNet::new(
            routing,
            orders,
            1,
            &Capacities {
                port: vec![1.0; ports],
                node: 2.0,
                lane: 3.0,
                lanes: 2,
            },
        )
    }

    #[test]
    fn resources_are_links_then_injection_then_lanes() {
        let net = ring(4, false);
        assert_eq!(net.capacity.len(), 8 * net.ports + 8 + 16);
        assert_eq!(net.capacity[8 * net.ports], 2.0);
        assert_eq!(*net.capacity.last().unwrap(), 3.0);
        assert_eq!(net.lane(3, 5), 3 * 2 + 1, "a TNI beyond the lanes wraps");
    }

    #[test]
    fn a_route_uses_its_lane_its_injection_and_one_link_per_hop() {
        let net = ring(8, false);
        let mut rng = Rng::seed_from_u64(1);
        let routes = net.routes(0, 3, 1, &mut rng);
        assert_eq!(routes.len(), 1);
        let (links, hops, share) = &routes[0];
        assert_eq!((*hops, *share), (3, 1.0));
        assert_eq!(links[0] as usize, 16 * net.ports + 16 + net.lane(0, 1));
        assert_eq!(links[1] as usize, 16 * net.ports);
        assert!(links[2..].iter().all(|&l| (l as usize) < 16 * net.ports));
        assert!(!net.balanced() && !net.detours());
    }

    #[test]
    fn half_a_ring_on_an_adaptive_torus_takes_both_directions() {
        let net = ring(8, true);
        let mut rng = Rng::seed_from_u64(1);
        let routes = net.routes(0, 4, 0, &mut rng);
        assert_eq!(routes.len(), 2, "both directions of the tied axis");
        assert!(routes.iter().all(|r| r.1 == 4 && r.2 == 0.5));
        assert_ne!(routes[0].0, routes[1].0);
        assert!(net.balanced());
    }
}
