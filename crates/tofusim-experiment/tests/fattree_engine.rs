//! Fat-trees in the packet engine: up/down routing with d-mod-k, random
//! and adaptive up-port choice on XGFTs with and without taper, the world
//! systems' presets resized, and split runs bit-identical.

use tofusim_experiment::experiment;
use tofusim_packet::{RunResult, Split};

fn run(text: &str) -> RunResult {
    experiment::run("<test>", text, &mut |_| std::ops::ControlFlow::Continue(())).unwrap_or_else(|e| panic!("{e}")).1
}

fn tree(extra: &str, algorithm: &str, workload: &str, run: &str) -> String {
    format!(
        "[network]\ntopology = \"fattree\"\nk = 8\nlevels = 3\n{extra}link_bandwidth = \"12.5GB/s\"\n[routing]\nalgorithm = \"{algorithm}\"\n[workload]\n{workload}\n[run]\n{run}\naudit_cycles = 20000\n"
    )
}

#[test]
fn an_alltoall_on_a_512_node_tree_delivers_every_packet_in_every_mode() {
    for algorithm in ["d-mod-k", "random", "adaptive"] {
        let r = run(&tree("", algorithm, "pattern = \"alltoall\"\nmessage_bytes = 64", "cycles = 5000000"));
        assert!(r.complete, "{algorithm}: {:?} {:?}", r.deadlock, r.invariant_error);
        assert_eq!(r.packets_delivered, 512 * 511, "{algorithm}");
        // Up/down routes: at most 2 x 3 switch hops, no escape VC.
        assert_eq!(r.escape_fraction, 0.0);
    }
}

#[test]
fn uniform_traffic_below_saturation_is_accepted_on_a_tapered_tree() {
    // 2:1 taper above the leaves: a leaf's 8 nodes share 4 up links, so
    // the bound is about half the injection rate.
    for algorithm in ["d-mod-k", "random", "adaptive"] {
        let r = run(&tree("taper = [2, 1]\n", algorithm, "pattern = \"uniform\"\nload = 0.2", "cycles = 150000\nwarmup = 30000"));
        assert!(r.complete && r.invariant_error.is_none(), "{algorithm}");
        assert!((r.accepted_load - 0.2).abs() < 0.03, "{algorithm}: accepted {}", r.accepted_load);
    }
}

#[test]
fn a_shift_to_the_next_leaf_reaches_the_tapered_bound() {
    // Every node streams to the node 8 further on, on the next leaf: each
    // leaf's 8 streams climb its 4 up links, 2 per link under d-mod-k, so
    // the bound is half the injection rate. Without contention between
    // random destinations the switch's link timing, credits and arbitration
    // carry it (the uniform gap to the bound is contention, docs/validation.md).
    let r = run(&tree("taper = [2, 1]\n", "d-mod-k", "pattern = \"shift\"\nhops = 8\nload = 1.0", "cycles = 150000\nwarmup = 40000"));
    assert!(r.complete && r.invariant_error.is_none());
    assert!((r.accepted_load - 0.5).abs() < 0.01, "accepted {}", r.accepted_load);
}

/// The tapered tree's bound for uniform traffic: a leaf's 8 nodes send
/// 504/511 of their traffic up its 4 links.
const TAPERED_BOUND: f64 = 4.0 / 8.0 * 511.0 / 504.0;

#[test]
fn uniform_traffic_at_full_load_reaches_the_tapered_bound_with_adaptive_up_ports() {
    // The switch's virtual output queues (and speedup 2) keep a packet
    // waiting for a busy output from holding up the others: adaptive
    // up-port choice carries 0.95-0.96 of the bound (docs/validation.md).
    let load = "pattern = \"uniform\"\nload = 1.0";
    let cycles = "cycles = 1000000\nwarmup = 250000";
    let r = run(&tree("taper = [2, 1]\n", "adaptive", load, cycles));
    assert!(r.invariant_error.is_none());
    let share = r.accepted_load / TAPERED_BOUND;
    assert!(share > 0.95 && share <= 1.0, "adaptive: {:.3} of the bound", share);
    // The mechanism: the same switch with its queues shared by every
    // output (2 VCs of the same total buffer) loses it to head-of-line
    // blocking.
    let shared = run(&tree("taper = [2, 1]\n", "adaptive", load, cycles)
        .replace("[routing]", "[router]\nvirtual_output_queues = false\ndynamic_vcs = 2\nvc_buffer = 49920\n[routing]"));
    assert!(shared.accepted_load / TAPERED_BOUND < 0.9, "two shared queues: {:.3} of the bound", shared.accepted_load / TAPERED_BOUND);
}

#[test]
fn d_mod_k_routes_by_destination_node_so_a_leaf_receives_on_all_its_links() {
    // With the destination leaf alone choosing the up ports, every packet
    // for a leaf would come down one link and a leaf could take one link's
    // worth for its 8 nodes (1/8 of the offered load).
    let r = run(&tree("taper = [2, 1]\n", "d-mod-k", "pattern = \"uniform\"\nload = 0.3", "cycles = 150000\nwarmup = 30000"));
    assert!(r.accepted_load > 0.25, "accepted {}", r.accepted_load);
}

#[test]
fn resized_world_fat_trees_run() {
    // TaihuLight's 256-node supernodes make 582 queues per leaf switch.
    for system in ["summit:2", "oakforest-pacs:4", "taihulight:2"] {
        let text = format!("[network]\nsystem = \"{system}\"\n[workload]\npattern = \"uniform\"\nload = 0.2\n[run]\ncycles = 60000\nwarmup = 10000\n");
        let r = run(&text);
        assert!(r.complete && r.invariant_error.is_none(), "{system}");
        assert!(r.packets_delivered > 0, "{system}");
    }
}

#[test]
fn torus_patterns_and_torus_router_keys_are_refused_on_a_fat_tree() {
    let e = experiment::parse("<test>", &tree("", "d-mod-k", "pattern = \"transpose\"\nload = 0.1", "cycles = 100")).err().expect("refused");
    assert_eq!(e.key, "workload.pattern");
    let text = tree("", "d-mod-k", "pattern = \"uniform\"\nload = 0.1", "cycles = 100").replace("[routing]", "[router]\nescape = \"bubble\"\n[routing]");
    let e = experiment::parse("<test>", &text).err().expect("refused");
    assert_eq!(e.key, "router.escape");
    let e = experiment::parse("<test>", &tree("", "ugal", "pattern = \"uniform\"\nload = 0.1", "cycles = 100")).err().expect("refused");
    assert_eq!(e.key, "routing.algorithm");
    assert!(e.expected.contains("d-mod-k"), "{}", e.expected);
}

#[test]
fn a_split_fat_tree_run_is_bit_identical() {
    let text = tree("taper = [2, 1]\n", "adaptive", "pattern = \"uniform\"\nload = 0.3", "cycles = 60000\nwarmup = 10000");
    let exp = || experiment::engine(experiment::parse("<test>", &text).unwrap());
    let one = exp().run(&mut |_| std::ops::ControlFlow::Continue(()));
    let two = exp().run_split(Split::threads(2), &mut |_| std::ops::ControlFlow::Continue(()), |_| ()).expect("result").0;
    let strip = |r: &RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v["sim"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&one), strip(&two));
}

#[test]
fn more_vcs_than_the_engine_holds_are_refused_not_a_panic() {
    let text = tree("taper = [2, 1]\n", "adaptive", "pattern = \"uniform\"\nload = 0.1", "cycles = 100")
        .replace("[routing]", "[router]\ndynamic_vcs = 24\npriority_vc = true\n[routing]");
    let e = experiment::parse("<test>", &text).err().expect("refused");
    assert_eq!(e.key, "router.dynamic_vcs");
    assert!(e.expected.contains("at most 24"), "{}", e.expected);
    // Virtual output queues beyond the tree's 16 outputs would sit unused.
    let text = tree("taper = [2, 1]\n", "adaptive", "pattern = \"uniform\"\nload = 0.1", "cycles = 100").replace("[routing]", "[router]\ndynamic_vcs = 20\n[routing]");
    let e = experiment::parse("<test>", &text).err().expect("refused");
    assert_eq!(e.key, "router.dynamic_vcs");
    assert!(e.expected.contains("at most 16"), "{}", e.expected);
}

#[test]
fn virtual_output_queues_are_refused_off_a_fat_tree() {
    let text = "[network]\nsystem = \"bgl:4x4x4\"\n[router]\nvirtual_output_queues = true\n[workload]\npattern = \"uniform\"\nload = 0.1\n[run]\ncycles = 100\n";
    let e = experiment::parse("<test>", text).err().expect("refused");
    assert_eq!(e.key, "router.virtual_output_queues");
    assert!(e.expected.contains("fat-tree"), "{}", e.expected);
}
