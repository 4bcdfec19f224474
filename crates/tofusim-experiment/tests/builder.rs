//! The one builder: every command gets the same hardware for a system, the
//! generation is an explicit key, and every preset family resizes.

use tofusim_experiment::generation::Generation;
use tofusim_experiment::{build, collective, experiment, from_name, presets};
use tofusim_topology::Topology;

fn exp(network: &str, workload: &str) -> experiment::Experiment {
    let text = format!("[network]\n{network}\n[workload]\n{workload}\n[run]\ncycles = 2000\n");
    experiment::parse("<test>", &text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_preset_names_its_generation_and_keeps_it_when_resized() {
    let expected = [
        ("k", Generation::Tofu1, "k:4x4x4"),
        ("fx10", Generation::Tofu1, "fx10:2x2x2"),
        ("fx100", Generation::Tofu2, "fx100:2x2x2"),
        ("fugaku", Generation::Tofud, "fugaku:2x3x2"),
        ("bgl", Generation::Bgl, "bgl:4x4x4"),
        ("bgq", Generation::Bgl, "bgq:2x2x2x2x2"),
        ("piz-daint", Generation::Aries, "piz-daint:3"),
        ("summit", Generation::FatTree, "summit:2"),
        ("oakforest-pacs", Generation::FatTree, "oakforest-pacs:4"),
        ("taihulight", Generation::FatTree, "taihulight:2"),
    ];
    for (name, generation, resized) in expected {
        assert_eq!(from_name(name).unwrap().generation, generation, "{name}");
        assert_eq!(from_name(resized).unwrap_or_else(|e| panic!("{resized}: {e}")).generation, generation, "{resized}");
    }
    // Every preset has an explicit generation key (none is guessed).
    for p in presets::PRESETS {
        assert!(p.toml.contains("\ngeneration = "), "{} has no generation key", p.name);
    }
}

#[test]
fn a_fat_tree_preset_resizes_by_its_top_level() {
    let s = from_name("summit:2").unwrap();
    let Topology::FatTree(f) = &s.network.topology else { panic!("a fat-tree") };
    assert_eq!(f.down, vec![18, 16, 2]);
    assert_eq!((f.node_count(), f.rails), (18 * 16 * 2, 2), "576 nodes on two rails");
    let s = from_name("taihulight:18x16").unwrap();
    let Topology::FatTree(f) = &s.network.topology else { panic!("a fat-tree") };
    assert_eq!(f.down, vec![18, 16]);
    assert!(from_name("summit:2x2").is_err(), "three levels need three down-degrees");
}

#[test]
fn run_and_coll_build_the_same_tofu_hardware() {
    for system in ["k:4x4x4", "fx100:2x2x2", "fugaku:2x3x2"] {
        let e = exp(&format!("system = \"{system}\""), "pattern = \"uniform\"\nload = 0.1");
        let s = collective::setup(system).unwrap();
        assert_eq!(e.router, s.built.model.router, "{system}: run and coll disagree on the router");
        assert_eq!(e.built.cycle_ns(), s.built.model.cycle_ns(), "{system}");
        assert_eq!(e.built.injection_links, s.built.injection_links, "{system}");
        // The Tofu packet format, not BG/L's.
        assert_eq!(e.workload.packet_bytes, s.built.model.packet_bytes, "{system}");
        assert_eq!(e.workload.header_bytes, s.built.model.header_bytes, "{system}");
        assert_eq!(e.router.escape, tofusim_packet::Escape::DatelineDimension, "{system}");
    }
    // K's host bandwidth paces its injection (the CPU–ICC bus).
    let k = exp("system = \"k:4x4x4\"", "pattern = \"uniform\"\nload = 0.1");
    assert!((k.router.host_bytes_per_cycle - 15.5 / 5.0).abs() < 1e-9, "{}", k.router.host_bytes_per_cycle);
}

#[test]
fn a_torus_keeps_the_bgl_router_and_a_tofu_may_ask_for_it() {
    let e = exp("system = \"bgl:4x4x4\"", "pattern = \"uniform\"\nload = 0.1");
    assert_eq!(e.router, tofusim_packet::RouterParams::bgl());
    let t = exp("topology = \"tofu\"\ngeneration = \"bgl\"\nshape = [2, 2, 2]\nlink_bandwidth = \"5GB/s\"", "pattern = \"uniform\"\nload = 0.1");
    assert_eq!(t.router.escape, tofusim_packet::Escape::Bubble);
}

#[test]
fn a_generation_that_does_not_fit_the_topology_is_refused() {
    let text = "[network]\ntopology = \"torus\"\ngeneration = \"tofu1\"\nshape = [4, 4]\nlink_bandwidth = \"1GB/s\"\n";
    let e = experiment::parse("f.toml", text).err().expect("refused");
    assert_eq!(e.key, "network.generation");
    assert!(e.expected.contains("topology = \"tofu\""), "{}", e.expected);
    let e = experiment::parse("f.toml", &text.replace("tofu1", "tofu3")).err().expect("refused");
    assert!(e.expected.contains("tofud"), "lists the valid generations: {}", e.expected);
}

#[test]
fn routes_come_from_one_place() {
    // The engine's routing of a Tofu run is Tofu's X Y Z A C B order.
    let e = exp("system = \"k:2x2x2\"", "pattern = \"uniform\"\nload = 0.1");
    assert_eq!(build::torus_order(&e.built.nodes), tofusim_topology::tofu::ROUTING_ORDER.to_vec());
}

#[test]
fn an_unknown_router_key_lists_only_what_this_router_takes() {
    let text = "[network]\nsystem = \"bgl:4x4x4\"\n[router]\nvcs = 3\n[workload]\npattern = \"uniform\"\nload = 0.1\n[run]\ncycles = 2000\n";
    let e = experiment::parse("<test>", text).err().expect("refused");
    assert_eq!(e.key, "router.vcs");
    let listed = e.to_string();
    assert!(listed.contains("dynamic_vcs") && listed.contains("escape") && listed.contains("overhead_bytes"), "{listed}");
    // The dragonfly's and the fat-tree's keys are refused on a torus, with their reason.
    assert!(!listed.contains("class_vcs") && !listed.contains("virtual_output_queues"), "{listed}");
    for key in ["class_vcs = 2", "virtual_output_queues = true"] {
        let e = experiment::parse("<test>", &text.replace("vcs = 3", key)).err().expect("refused");
        assert!(e.to_string().contains("apply to"), "{e}");
    }
}
