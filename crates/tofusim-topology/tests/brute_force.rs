//! The closed-form and symmetric metrics checked against brute force:
//! BFS over the router graph for hops, exhaustive balanced cuts for bisection.

use proptest::prelude::*;
use tofusim_topology::bisection::min_bisection;
use tofusim_topology::*;

fn torus_strategy() -> impl Strategy<Value = Torus> {
    prop::collection::vec((1u32..7, any::<bool>()), 1..4).prop_map(|axes| {
        let lengths: Vec<u32> = axes.iter().map(|a| a.0).collect();
        let wrap: Vec<bool> = axes.iter().map(|a| a.1).collect();
        Torus::with_lengths(&lengths, &wrap)
    })
}

fn network(t: Topology) -> Network {
    let classes = t.class_names().len();
    Network {
        topology: t,
        link_Bps: vec![1.0; classes],
        nic: NodeInterface {
            interfaces: 1,
            interface_Bps: 1.0,
            host_limit_Bps: None,
        },
        faults: Faults::default(),
    }
}

/// Minimum over all subsets of ⌊N/2⌋ nodes of the links crossing, by enumeration.
fn exhaustive_bisection(t: &Torus) -> u64 {
    let n = t.node_count() as usize;
    let g = Topology::Torus(t.clone()).router_graph();
    let mut edges = Vec::new();
    for r in 0..n as u32 {
        for (s, _) in g.neighbors(r) {
            if r < s {
                edges.push((r, s));
            }
        }
    }
    let k = n / 2;
    let mut best = u64::MAX;
    // Fix node n-1 outside the side to halve the work (complements are symmetric when k = n - k).
    for mask in 0u32..(1u32 << n) {
        if mask.count_ones() as usize != k {
            continue;
        }
        let cut = edges
            .iter()
            .filter(|&&(a, b)| ((mask >> a) & 1) != ((mask >> b) & 1))
            .count() as u64;
        best = best.min(cut);
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn torus_hops_match_bfs(t in torus_strategy()) {
        let closed = (t.diameter(), t.average_hops());
        let bfs = Topology::Torus(t.clone()).router_graph().hop_stats();
        prop_assert!(bfs.connected);
        prop_assert_eq!(closed.0, bfs.diameter);
        prop_assert!((closed.1 - bfs.average_hops).abs() < 1e-9, "{}: {} vs {}", t.shape_label(), closed.1, bfs.average_hops);
    }

    #[test]
    fn staircase_bisection_matches_exhaustive_on_random_small_shapes(axes in prop::collection::vec((1u32..6, any::<bool>()), 1..4)) {
        let lengths: Vec<u32> = axes.iter().map(|a| a.0).collect();
        let wrap: Vec<bool> = axes.iter().map(|a| a.1).collect();
        let n: u32 = lengths.iter().product();
        prop_assume!(n <= 18);
        let t = Torus::with_lengths(&lengths, &wrap);
        prop_assert_eq!(min_bisection(t.axes()).links, exhaustive_bisection(&t), "shape {:?} wrap {:?}", lengths, wrap);
    }

    #[test]
    fn torus_link_count_matches_graph(t in torus_strategy()) {
        let g = Topology::Torus(t.clone()).router_graph();
        let per = g.links_by_class(t.axes().len());
        prop_assert_eq!(per, t.links_per_axis());
    }

    #[test]
    fn tofu_hops_match_bfs(x in 1u32..5, y in 1u32..4, z in 1u32..3, wx: bool, wy: bool) {
        let ax = |n: &str, l, w| if w { Axis::ring(n, l) } else { Axis::path(n, l) };
        let t = tofu::tofu_torus([ax("x", x, wx), ax("y", y, wy), Axis::ring("z", z)]);
        let bfs = Topology::Tofu(t.clone()).router_graph().hop_stats();
        prop_assert_eq!(t.diameter(), bfs.diameter);
        prop_assert!((t.average_hops() - bfs.average_hops).abs() < 1e-9);
    }

    #[test]
    fn fat_tree_hops_match_bfs(down in prop::collection::vec(1u32..5, 1..4), up in prop::collection::vec(1u32..4, 3)) {
        let h = down.len();
        let mut w = vec![1];
        w.extend(up.iter().take(h - 1));
        let f = FatTree { down, up: w, rails: 1 };
        let bfs = f.router_graph().hop_stats();
        prop_assert!(bfs.connected);
        prop_assert_eq!(f.diameter(), bfs.diameter);
        prop_assert!((f.average_hops() - bfs.average_hops).abs() < 1e-9);
    }

    #[test]
    fn dragonfly_symmetric_bfs_matches_full_bfs(p in 1u32..3, a in 2u32..5, h in 1u32..3, g in 2u32..7, rr: bool) {
        let ports = a * h;
        prop_assume!(g <= ports + 1);
        let d = Dragonfly { groups: g, nodes_per_router: p, wiring: GroupWiring::AllToAll { routers: a }, global_ports_per_router: h,
            links_per_group_pair: Dragonfly::max_links_per_pair(g, ports), arrangement: if rr { Arrangement::RoundRobin } else { Arrangement::Consecutive } };
        prop_assert!(d.validate().is_ok());
        let m = network(Topology::Dragonfly(d.clone())).metrics();
        let full = d.router_graph().hop_stats();
        prop_assert_eq!(m.diameter, Some(full.diameter));
        prop_assert!((m.average_hops.unwrap() - full.average_hops).abs() < 1e-9);
        prop_assert!(full.diameter <= 3, "Kim-Dally minimal routes are local-global-local");
    }
}

#[test]
fn staircase_bisection_matches_exhaustive_on_small_shapes() {
    let shapes: &[(&[u32], &[bool])] = &[
        (&[4], &[true]),
        (&[5], &[true]),
        (&[6], &[false]),
        (&[2, 2], &[true, true]),
        (&[2, 3], &[false, false]),
        (&[3, 3], &[true, true]),
        (&[3, 4], &[true, true]),
        (&[4, 4], &[true, false]),
        (&[4, 4], &[false, false]),
        (&[2, 2, 2], &[true, true, true]),
        (&[2, 2, 3], &[false, true, true]),
        (&[3, 5], &[true, false]),
        (&[2, 7], &[true, true]),
        (&[2, 8], &[false, true]),
        (&[3, 6], &[true, true]),
        (&[2, 2, 4], &[true, false, true]),
        (&[1, 4, 3], &[true, true, false]),
    ];
    for (l, w) in shapes {
        let t = Torus::with_lengths(l, w);
        let ours = min_bisection(t.axes()).links;
        let brute = exhaustive_bisection(&t);
        assert_eq!(ours, brute, "shape {:?} wrap {:?}", l, w);
    }
}

#[test]
fn tofu_group_bisection_is_exact() {
    // One ABC group (12 nodes): A, C single links, B ring of 3.
    let t = tofu::tofu_torus([Axis::ring("x", 1), Axis::ring("y", 1), Axis::ring("z", 1)]);
    assert_eq!(min_bisection(t.axes()).links, exhaustive_bisection(&t));
}

#[test]
fn faulty_torus_metrics_use_bfs() {
    let t = Torus::with_lengths(&[4, 4], &[true, true]);
    let mut n = network(Topology::Torus(t));
    let clean = n.metrics();
    n.faults.nodes.push(5);
    n.faults.links.push((0, 1));
    n.faults.link_ports.push(None);
    let m = n.metrics();
    assert_eq!(m.nodes, 15);
    assert!(m.connected);
    assert!(m.links < clean.links);
    assert!(m.average_hops.unwrap() > clean.average_hops.unwrap() - 1.0);
    assert!(m.bisection_links <= clean.bisection_links);
}
