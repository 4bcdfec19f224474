//! System presets. Each preset is a `[network]` table written in the same
//! keys a user writes, plus a `sources` table that gives the origin of every
//! parameter (tags as in docs/sources.md: `[S:000]`… primary sources, `[PUB]`
//! other public material, `[DER]` derived arithmetic, `[MEM]` domain
//! knowledge not re-checked, `[FIT]` fitted to a published figure, which
//! then does not count as a validation of that figure). `docs/presets.md`
//! is generated from this table (`tofusim topo --list --markdown`).

pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    /// TOML body of the `[network]` table, with a `[sources]` sub-table.
    pub toml: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "k",
        description: "K computer compute partition, Tofu1 (Fujitsu, RIKEN, 2011)",
        toml: r#"
topology = "tofu"
generation = "tofu1"
host_bandwidth = "15.5GB/s"
shape = [24, 18, 16]
wrap = [true, false, true]
lane_rate = "6.25Gb/s"
lanes = 8
line_code = "8b10b"
nic_interfaces = 4
[sources]
generation = "[S:003] Tofu1 router and TNIs (docs/communication.md)"
host_bandwidth = "[FIT] K: 15.03 GB/s with 4 TNIs [S:001], capped by the CPU-side interface (packet bytes, headers included)"
shape = "[S:003] 24x18x16x2x3x2 = 82,944 compute nodes"
wrap = "[DER] hypothesis (on the network table of [S:000]): Y as the mesh axis reproduces the published 46 TB/s bisection exactly; not confirmed by a primary source"
lane_rate = "[S:000] Tofu1 lane rate 6.25 Gb/s"
lanes = "[S:000] 8 lanes per link"
line_code = "[DER] 8b/10b gives 6.25 x 8 x 0.8 / 8 = 5.0 GB/s per direction [S:000]"
nic_interfaces = "[S:000] 4 TNIs per node, each injecting at one link's rate (20 GB/s)"
"#,
    },
    Preset {
        name: "fx10",
        description: "PRIMEHPC FX10 (Oakleaf-FX, University of Tokyo), Tofu1",
        toml: r#"
topology = "tofu"
generation = "tofu1"
host_bandwidth = "18.2GB/s"
shape = [10, 5, 8]
wrap = [true, true, true]
lane_rate = "6.25Gb/s"
lanes = 8
line_code = "8b10b"
nic_interfaces = 4
[sources]
generation = "[S:003] Tofu1 router and TNIs (docs/communication.md)"
host_bandwidth = "[FIT] FX10: 17.6 GB/s injection [S:000] (packet bytes, headers included)"
shape = "[MEM] 4,800 nodes = 10x5x8x2x3x2 (Oakleaf-FX); axis wrap not checked"
lane_rate = "[S:000] Tofu1 lane rate 6.25 Gb/s"
lanes = "[S:000] 8 lanes per link"
line_code = "[DER] 8b/10b: 5.0 GB/s per direction"
nic_interfaces = "[S:000] 4 TNIs"
"#,
    },
    Preset {
        name: "fx100",
        description: "PRIMEHPC FX100, Tofu2",
        toml: r#"
topology = "tofu"
generation = "tofu2"
shape = [10, 6, 4]
wrap = [true, true, true]
lane_rate = "25.78125Gb/s"
lanes = 4
line_code = "64b66b"
nic_interfaces = 4
[sources]
generation = "[PUB] Tofu2 (FX100)"
shape = "[MEM] 2,880 nodes = 10x6x4x2x3x2 (an FX100 installation); axis wrap not checked"
lane_rate = "[S:000] Tofu2 lane rate 25.78125 Gb/s"
lanes = "[S:000] 4 lanes per link"
line_code = "[DER] 64b/66b gives 12.5 GB/s per direction [S:000]"
nic_interfaces = "[S:000] 4 TNIs (50 GB/s injection)"
"#,
    },
    Preset {
        name: "fugaku",
        description: "Fugaku, TofuD (RIKEN, 2020)",
        toml: r#"
topology = "tofu"
generation = "tofud"
shape = [24, 23, 24]
wrap = [true, true, true]
lane_rate = "28.05Gb/s"
lanes = 2
line_code = "64b66b"
nic_interfaces = 6
[sources]
generation = "[S:000] Tofu Interconnect D"
shape = "[PUB]+[DER] 158,976 nodes (Fujitsu technical review 2020) = 24x23x24x2x3x2 [MEM]; axis wrap not checked"
lane_rate = "[S:000] TofuD lane rate 28.05 Gb/s"
lanes = "[S:000] 2 lanes per link"
line_code = "[DER] 64b/66b gives 6.8 GB/s per direction [S:000]"
nic_interfaces = "[S:000] 6 TNIs (40.8 GB/s injection)"
"#,
    },
    Preset {
        name: "bgl",
        description: "Blue Gene/L, full 64K-node system (IBM, 2005)",
        toml: r#"
topology = "torus"
generation = "bgl"
shape = [64, 32, 32]
link_bandwidth = "175MB/s"
[sources]
generation = "[S:004] the Blue Gene/L torus router"
shape = "[S:004] 64K nodes = 64x32x32 3D torus"
link_bandwidth = "[S:004] 1.4 Gb/s bit-serial = 175 MB/s per direction; injection = 6 links (1.05 GB/s per node)"
"#,
    },
    Preset {
        name: "bgl-midplane",
        description: "Blue Gene/L midplane (512 nodes)",
        toml: r#"
topology = "torus"
generation = "bgl"
shape = [8, 8, 8]
link_bandwidth = "175MB/s"
[sources]
generation = "[S:004] the Blue Gene/L torus router"
shape = "[S:004] midplane = 8x8x8"
link_bandwidth = "[S:004] 175 MB/s per direction"
"#,
    },
    Preset {
        name: "bgq",
        description: "Blue Gene/Q Sequoia (LLNL), 5D torus",
        toml: r#"
topology = "torus"
generation = "bgl"
shape = [16, 16, 12, 16, 2]
axis_names = ["a", "b", "c", "d", "e"]
link_bandwidth = "2GB/s"
[sources]
generation = "[MEM] the Blue Gene/L router stands in for BG/Q's (not modelled)"
shape = "[MEM] Sequoia 16x16x12x16x2 (98,304 nodes [PUB]); reproduces the published 1.97 PB/s and 49 TB/s"
link_bandwidth = "[PUB] 2 GB/s raw per direction on each of 10 torus links (IBM BG/Q redbook); the length-2 E axis has two links"
"#,
    },
    Preset {
        name: "piz-daint",
        description: "Piz Daint (CSCS), Cray XC Aries dragonfly",
        toml: r#"
topology = "dragonfly"
generation = "aries"
form = "aries"
groups = 20
nodes_per_router = 4
chassis_per_group = 6
routers_per_chassis = 16
rank2_links = 3
global_links_per_router = 10
links_per_cable = 4
cables_per_group_pair = 10
arrangement = "round-robin"
rank1_bandwidth = "5.25GB/s"
rank2_bandwidth = "5.25GB/s"
rank3_bandwidth = "4.6875GB/s"
nic_interfaces = 1
nic_bandwidth = "10GB/s"
[sources]
generation = "[S:002] Cray Aries"
groups = "[MEM] 20 groups of 384 nodes (7,680 node slots)"
nodes_per_router = "[S:002] 4 nodes per Aries"
chassis_per_group = "[S:002] 6 chassis (2 cabinets) per group"
routers_per_chassis = "[S:002] 16 Aries per chassis, all-to-all over rank-1"
rank2_links = "[S:002] 3 links per rank-2 connection"
global_links_per_router = "[S:002] 10 rank-3 ports per Aries"
links_per_cable = "[S:002] 4 rank-3 links per optical cable"
cables_per_group_pair = "[FIT] 10 cables per group pair, fitted to the published 36 TB/s bisection; the Piz Daint ratio is therefore not an independent check"
arrangement = "[MEM] global ports dealt round-robin over the routers of a group"
rank1_bandwidth = "[DER] 3 lanes x 14 Gb/s = 5.25 GB/s"
rank2_bandwidth = "[DER] 3 lanes x 14 Gb/s = 5.25 GB/s"
rank3_bandwidth = "[DER] 3 lanes x 12.5 Gb/s = 4.69 GB/s"
nic_bandwidth = "[MEM] about 10 GB/s of data per Aries NIC (PCIe Gen3 x16 after protocol overhead); reproduces the published 0.07 PB/s injection within 10%"
"#,
    },
    Preset {
        name: "aries-2g",
        description: "Cray XC Aries, 2 full groups (768 nodes), every rank-3 port cabled between them",
        toml: ARIES_SMALL_2G,
    },
    Preset {
        name: "aries-720",
        description: "Cray XC Aries, 720 nodes in 2 groups of 6 chassis x 15 Aries (the all-to-all system of the Cascade paper)",
        toml: ARIES_720,
    },
    Preset {
        name: "aries-1g",
        description: "Cray XC Aries, one group (384 nodes, no rank-3 links)",
        toml: ARIES_1G,
    },
    Preset {
        name: "summit",
        description: "Summit (ORNL), non-blocking EDR InfiniBand fat-tree, dual rail",
        toml: r#"
topology = "fattree"
generation = "fattree"
down = [18, 16, 16]
up = [1, 18, 16]
rails = 2
link_bandwidth = "12.5GB/s"
[sources]
generation = "[MEM] a generic fat-tree switch (the vendor switch is not modelled)"
down = "[MEM] 4,608 nodes = 18 x 16 x 16 in a three-level tree"
up = "[MEM] non-blocking (full bisection)"
rails = "[PUB] dual-port EDR adapter per node (2 x 100 Gb/s)"
link_bandwidth = "[PUB] EDR 100 Gb/s = 12.5 GB/s"
"#,
    },
    Preset {
        name: "oakforest-pacs",
        description: "Oakforest-PACS (JCAHPC), Omni-Path full-bisection fat-tree",
        toml: r#"
topology = "fattree"
generation = "fattree"
down = [24, 342]
up = [1, 24]
link_bandwidth = "12.5GB/s"
[sources]
generation = "[MEM] a generic fat-tree switch (the vendor switch is not modelled)"
down = "[MEM] 8,208 nodes: 24 per edge switch, 342 edge switches"
up = "[MEM] 24 up-links per edge switch to the directors (full bisection)"
link_bandwidth = "[PUB] Omni-Path 100 Gb/s"
"#,
    },
    Preset {
        name: "taihulight",
        description: "Sunway TaihuLight, supernodes under a tapered central network",
        toml: r#"
topology = "fattree"
generation = "fattree"
down = [256, 160]
up = [1, 35]
link_bandwidth = "12.5GB/s"
[sources]
generation = "[MEM] a generic fat-tree switch (the vendor switch is not modelled)"
down = "[PUB] 40,960 nodes = 160 supernodes x 256"
up = "[FIT] 35 up-links per supernode, fitted to the published 70 TB/s bisection; the TaihuLight ratio is therefore not an independent check"
link_bandwidth = "[DER] 0.51 PB/s / 40,960 nodes = 12.5 GB/s per node"
"#,
    },
];

/// The Aries keys shared by the small presets (the Piz Daint values).
macro_rules! aries_common {
    () => {
        r#"
topology = "dragonfly"
generation = "aries"
form = "aries"
nodes_per_router = 4
chassis_per_group = 6
rank2_links = 3
global_links_per_router = 10
links_per_cable = 4
arrangement = "round-robin"
rank1_bandwidth = "5.25GB/s"
rank2_bandwidth = "5.25GB/s"
rank3_bandwidth = "4.6875GB/s"
nic_interfaces = 1
nic_bandwidth = "10GB/s"
"#
    };
}

const ARIES_SMALL_2G: &str = concat!(aries_common!(), r#"groups = 2
routers_per_chassis = 16
cables_per_group_pair = 240
[sources]
groups = "[S:002] smaller Aries systems: 2 groups"
cables_per_group_pair = "[DER] 960 rank-3 ports per group / 4 links per cable, all to the other group"
rank1_bandwidth = "[DER] 3 lanes x 14 Gb/s"
rank3_bandwidth = "[DER] 3 lanes x 12.5 Gb/s"
nic_bandwidth = "[MEM] about 10 GB/s of data per Aries NIC"
"#);

const ARIES_720: &str = concat!(aries_common!(), r#"groups = 2
routers_per_chassis = 15
cables_per_group_pair = 225
[sources]
groups = "[S:002] 720 nodes in 2 groups"
routers_per_chassis = "[DER] 720 = 2 groups x 6 chassis x 15 Aries x 4 nodes (the source does not give the layout)"
cables_per_group_pair = "[DER] 900 rank-3 ports per group / 4 links per cable, all to the other group"
nic_bandwidth = "[MEM] about 10 GB/s of data per Aries NIC"
"#);

const ARIES_1G: &str = concat!(aries_common!(), r#"groups = 1
routers_per_chassis = 16
[sources]
groups = "[S:002] one group: 6 chassis x 16 Aries x 4 nodes = 384 nodes"
"#);

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Every preset with its parameters and the source of each: `[{name,
/// description, params: {key: TOML value}, sources: {key: source}}]`.
pub fn described() -> serde_json::Value {
    let list: Vec<serde_json::Value> = PRESETS
        .iter()
        .map(|p| {
            let t: toml::Table = p.toml.parse().expect("presets are valid TOML");
            let mut params = serde_json::Map::new();
            let mut sources = serde_json::Map::new();
            for (k, v) in &t {
                if k == "sources" {
                    if let toml::Value::Table(s) = v {
                        for (sk, sv) in s {
                            sources.insert(sk.clone(), serde_json::Value::String(sv.as_str().unwrap_or_default().to_string()));
                        }
                    }
                } else {
                    params.insert(k.clone(), serde_json::Value::String(v.to_string()));
                }
            }
            serde_json::json!({"name": p.name, "description": p.description, "params": params, "sources": sources})
        })
        .collect();
    serde_json::Value::Array(list)
}
