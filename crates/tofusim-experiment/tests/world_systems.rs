//! The world-systems network table of [S:000] (docs/validation.md), computed from the presets.

use tofusim_experiment::{from_name, from_toml};

fn metrics(name: &str) -> tofusim_topology::Metrics {
    from_name(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .network
        .metrics()
}

fn close(x: f64, want: f64, rel: f64) -> bool {
    (x - want).abs() <= rel * want.abs()
}

#[test]
fn k_computer() {
    let m = metrics("k");
    assert_eq!(m.nodes, 82_944);
    assert!(
        close(m.injection_bandwidth_Bps, 1.66e15, 0.005),
        "{}",
        m.injection_bandwidth_Bps
    );
    assert!(
        close(m.bisection_bandwidth_Bps, 46.08e12, 1e-9),
        "{}",
        m.bisection_bandwidth_Bps
    );
    assert_eq!(m.link_bandwidth_Bps["x"], 5.0e9);
    assert_eq!(m.router_degree.max, 10);
}

#[test]
fn bgq_sequoia() {
    let m = metrics("bgq");
    assert_eq!(m.nodes, 98_304);
    assert!(close(m.injection_bandwidth_Bps, 1.97e15, 0.01));
    assert!(close(m.bisection_bandwidth_Bps, 49e12, 0.01));
}

#[test]
fn ratio_column() {
    for (name, want) in [
        ("k", 36.0),
        ("bgq", 40.0),
        ("taihulight", 7.3),
        ("piz-daint", 2.0),
        ("summit", 1.0),
        ("oakforest-pacs", 1.0),
    ] {
        let m = metrics(name);
        let ratio = m.injection_bandwidth_Bps / m.bisection_bandwidth_Bps;
        assert!((ratio - want).abs() < 0.05 * want, "{name}: {ratio}");
    }
}

#[test]
fn per_node_injection_and_link_rates() {
    for (name, link, inj) in [
        ("k", 5.0e9, 20e9),
        ("fx100", 12.5e9, 50e9),
        ("fugaku", 6.8e9, 40.8e9),
    ] {
        let m = metrics(name);
        assert!(close(m.link_bandwidth_Bps["x"], link, 0.001), "{name}");
        assert!(close(m.injection_per_node_Bps, inj, 0.001), "{name}");
    }
}

#[test]
fn aries_group() {
    let m = metrics("piz-daint:1");
    assert_eq!(m.nodes, 384);
    let d = metrics("piz-daint:241");
    assert_eq!(d.nodes, 92_544);
    assert_eq!(d.links_by_class["rank-3"], 241 * 240 / 2 * 4);
    assert_eq!(d.diameter, Some(5));
}

#[test]
fn resized_presets() {
    assert_eq!(metrics("k:8x8x8").nodes, 8 * 8 * 8 * 12);
    assert_eq!(metrics("bgl:4x4x4").nodes, 64);
    assert!(from_name("summit:4x4").is_err());
    assert!(from_name("k:8x8").is_err());
}

#[test]
fn virtual_torus_row() {
    let text =
        "[network]\ntopology = \"torus\"\nshape = [48, 36, 48]\nlink_bandwidth = \"5GB/s\"\n";
    let m = from_toml("v.toml", text).unwrap().network.metrics();
    assert!(close(m.bisection_bandwidth_Bps, 34.56e12, 1e-9));
}

fn err(text: &str) -> String {
    match from_toml("bad.toml", text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_input_names_file_key_and_expectation() {
    let e = err("[network]\nsystem = \"kk\"\n");
    assert!(
        e.starts_with("bad.toml: network.system: unknown system \"kk\"; valid systems are: k, "),
        "{e}"
    );
    let e = err("[network]\ntopology = \"torus\"\nshape = [8, 0, 8]\nlink_bandwidth = \"1GB/s\"\n");
    assert!(
        e.contains("network.shape[1]") && e.contains("from 1"),
        "{e}"
    );
    let e = err("[network]\ntopology = \"torus\"\nshape = [8, -2]\nlink_bandwidth = \"1GB/s\"\n");
    assert!(e.contains("network.shape[1]"), "{e}");
    let e = err("[network]\ntopology = \"tofu\"\nshape = [2, 2, 2]\nabc = [2, 2, 2]\nlink_bandwidth = \"5GB/s\"\n");
    assert!(e.contains("network.abc") && e.contains("2 x 3 x 2"), "{e}");
    let e = err(
        "[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"5GB/s\"\ncolour = 3\n",
    );
    assert!(e.contains("network.colour: unknown key"), "{e}");
    let e = err("[network]\ntopology = \"torus\"\nshape = \"4x4\"\nlink_bandwidth = \"5GB/s\"\n");
    assert!(
        e.contains("network.shape: expected an array of integers, found a string"),
        "{e}"
    );
    let e = err("[network]\ntopology = \"torus\"\nshape = [4]\nlink_bandwidth = \"5 parsecs\"\n");
    assert!(e.contains("network.link_bandwidth"), "{e}");
    let e = err("[network]\ntopology = \"dragonfly\"\ngroups = 20\nrouters_per_group = 2\nnodes_per_router = 1\nglobal_links_per_router = 2\nlink_bandwidth = \"1GB/s\"\n");
    assert!(
        e.contains("network.groups") && e.contains("at most 5 groups"),
        "{e}"
    );
    let e = err("[network\n");
    assert!(e.contains("invalid TOML (line 1)"), "{e}");
    let e = err("[network]\nsystem = \"k\"\n[network.faults]\nnodes = [[30, 0, 0, 0, 0, 0]]\n");
    assert!(e.contains("network.faults.nodes[0][0]"), "{e}");
}
