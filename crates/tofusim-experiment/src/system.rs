//! The `[network]` table: a preset (`system = "k"`, resized as `"k:8x8x8"`)
//! or a topology written out, resolved in phases: raw TOML → merged with the
//! preset → validated → a built [`Network`].

use crate::error::{ConfigError, Result};
use crate::generation::Generation;
use crate::presets;
use crate::section::Section;
use tofusim_topology::dragonfly::DragonflyError;
use tofusim_topology::*;

pub const TOPOLOGIES: [&str; 5] = ["torus", "mesh", "tofu", "dragonfly", "fattree"];
const COMMON_KEYS: [&str; 13] = [
    "system",
    "topology",
    "generation",
    "host_bandwidth",
    "link_bandwidth",
    "lane_rate",
    "lanes",
    "line_code",
    "nic_interfaces",
    "nic_bandwidth",
    "nic_limit",
    "faults",
    "sources",
];
const TORUS_KEYS: [&str; 3] = ["shape", "wrap", "axis_names"];
const TOFU_KEYS: [&str; 3] = ["shape", "wrap", "abc"];
const DRAGONFLY_KEYS: [&str; 18] = [
    "form",
    "groups",
    "nodes_per_router",
    "routers_per_group",
    "chassis_per_group",
    "routers_per_chassis",
    "rank2_links",
    "global_links_per_router",
    "links_per_group_pair",
    "links_per_cable",
    "cables_per_group_pair",
    "arrangement",
    "local_bandwidth",
    "global_bandwidth",
    "rank1_bandwidth",
    "rank2_bandwidth",
    "rank3_bandwidth",
    "link_bandwidth",
];
const FATTREE_KEYS: [&str; 6] = ["k", "levels", "taper", "down", "up", "rails"];

/// Largest axis length and node count accepted (the engines index nodes by `u32`).
const MAX_AXIS: i64 = 1 << 20;

/// A resolved system: its name (preset or file), the network, and the
/// hardware that the builder (module `build`) turns it into.
#[allow(non_snake_case)]
#[derive(Clone)]
pub struct System {
    pub name: String,
    pub network: Network,
    /// The hardware generation (`generation` key; default from the topology).
    pub generation: Generation,
    /// Rate at which a node's host feeds all its network interfaces
    /// together (`host_bandwidth`; K: the CPU–ICC bus), bytes/s. It paces
    /// injection in the communication model; the topology's injection
    /// bandwidth (links and NIC) does not include it.
    pub host_Bps: Option<f64>,
}

/// What the `[network]` table resolves to, before it is named.
#[allow(non_snake_case)]
pub struct Resolved {
    pub network: Network,
    pub generation: Generation,
    pub host_Bps: Option<f64>,
}

/// Resolves `"k"` or `"k:8x8x8"` (a preset name with an optional resize).
pub fn from_name(spec: &str) -> Result<System> {
    let file = "<command line>";
    let mut table = toml::Table::new();
    table.insert("system".into(), toml::Value::String(spec.to_string()));
    let r = resolve_table(file, "", &table)?;
    Ok(System {
        name: spec.to_string(),
        network: r.network,
        generation: r.generation,
        host_Bps: r.host_Bps,
    })
}

/// Resolves the `[network]` table of a TOML file's text.
pub fn from_toml(file: &str, text: &str) -> Result<System> {
    from_doc(file, &parse_toml(file, text)?)
}

/// Parses TOML text, reporting syntax errors with their line.
pub fn parse_toml(file: &str, text: &str) -> Result<toml::Table> {
    text.parse().map_err(|e: toml::de::Error| {
        let at = e
            .span()
            .map(|s| line_of(text, s.start))
            .map(|l| format!(" (line {l})"))
            .unwrap_or_default();
        ConfigError::new(file, "", format!("invalid TOML{at}: {}", e.message()))
    })
}

/// Resolves the `[network]` table of a parsed file.
pub fn from_doc(file: &str, doc: &toml::Table) -> Result<System> {
    let Some(net) = doc.get("network") else {
        return Err(ConfigError::new(file, "network", "missing table [network]"));
    };
    let toml::Value::Table(net) = net else {
        return Err(ConfigError::new(file, "network", "expected a table"));
    };
    let name = net
        .get("system")
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| file.to_string());
    let r = resolve_table(file, "network", net)?;
    Ok(System {
        name,
        network: r.network,
        generation: r.generation,
        host_Bps: r.host_Bps,
    })
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses a shape such as `8x8x8` into lengths.
pub fn parse_shape(text: &str) -> Option<Vec<u32>> {
    text.split(['x', 'X', '×'])
        .map(|p| p.trim().parse::<u32>().ok().filter(|&n| n >= 1))
        .collect()
}

/// Merges a preset under the user's table, then resolves.
pub fn resolve_table(file: &str, path: &str, user: &toml::Table) -> Result<Resolved> {
    let mut merged = toml::Table::new();
    // A resize (`k:8x8x8`) writes keys the user did not: their errors belong
    // to the `system` value that set them.
    let mut resized: Option<(String, Vec<String>)> = None;
    if let Some(v) = user.get("system") {
        let sec = Section::new(file, path, user);
        let Some(spec) = v.as_str() else {
            return Err(sec.error("system", "expected a string naming a preset"));
        };
        let (name, resize) = match spec.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (spec, None),
        };
        let preset = presets::find(name).ok_or_else(|| {
            sec.error(
                "system",
                format!(
                    "unknown system {name:?}; valid systems are: {}",
                    presets::names().join(", ")
                ),
            )
        })?;
        merged = preset.toml.parse().expect("presets are valid TOML");
        merged.remove("sources");
        if let Some(r) = resize {
            let before = merged.clone();
            apply_resize(&sec, &mut merged, r)?;
            let written = merged.iter().filter(|(k, v)| before.get(*k) != Some(*v) && !user.contains_key(*k)).map(|(k, _)| k.clone()).collect();
            resized = Some((spec.to_string(), written));
        }
    }
    for (k, v) in user {
        if k != "system" {
            merged.insert(k.clone(), v.clone());
        }
    }
    let sec = Section::new(file, path, &merged);
    build(&sec).map_err(|e| match &resized {
        Some((spec, written)) if written.iter().any(|k| e.key == sec.key_path(k) || e.key.starts_with(&format!("{}[", sec.key_path(k)))) => {
            ConfigError::new(file, &sec.key_path("system"), format!("{spec}: {}", e.expected))
        }
        _ => e,
    })
}

fn apply_resize(sec: &Section, merged: &mut toml::Table, resize: &str) -> Result<()> {
    let topo = merged
        .get("topology")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let bad = |what: &str| {
        sec.error(
            "system",
            format!("expected {what} after ':', found {resize:?}"),
        )
    };
    match topo {
        "tofu" => {
            let s = parse_shape(resize)
                .filter(|s| s.len() == 3)
                .ok_or_else(|| bad("an XYZ shape such as 8x8x8 (ABC stays 2x3x2)"))?;
            merged.insert(
                "shape".into(),
                toml::Value::Array(s.iter().map(|&x| toml::Value::Integer(x as i64)).collect()),
            );
        }
        "torus" | "mesh" => {
            let s = parse_shape(resize).ok_or_else(|| bad("a shape such as 8x8x8"))?;
            let n_axes = merged
                .get("shape")
                .and_then(|v| v.as_array())
                .map_or(0, |a| a.len());
            if s.len() != n_axes {
                return Err(bad(&format!("a shape with {n_axes} axes")));
            }
            merged.insert(
                "shape".into(),
                toml::Value::Array(s.iter().map(|&x| toml::Value::Integer(x as i64)).collect()),
            );
        }
        "dragonfly" => {
            let g: i64 = resize
                .trim()
                .parse()
                .map_err(|_| bad("a number of groups"))?;
            merged.insert("groups".into(), toml::Value::Integer(g));
            // The preset's cabling was chosen for its own group count.
            merged.remove("cables_per_group_pair");
            merged.remove("links_per_group_pair");
        }
        "fattree" => {
            // A fat-tree preset resizes by its top level: `summit:4` keeps 4
            // of the top-level subtrees (pods, supernodes, edge switches);
            // `summit:18x16x4` gives every level's down-degree. Up-degrees,
            // and so the taper, stay the preset's.
            let down = merged.get("down").and_then(|v| v.as_array()).map_or(0, |a| a.len());
            let s = parse_shape(resize).ok_or_else(|| bad("a number of top-level subtrees (or a down-degree per level, as 18x16x4)"))?;
            let new_down: Vec<u32> = match (s.len(), merged.get("down").and_then(|v| v.as_array())) {
                (1, Some(old)) => {
                    let mut d: Vec<u32> = old.iter().filter_map(|x| x.as_integer()).map(|x| x as u32).collect();
                    *d.last_mut().expect("a fat-tree has levels") = s[0];
                    d
                }
                (n, Some(_)) if n == down => s,
                _ => return Err(bad(&format!("a number of top-level subtrees or {down} down-degrees"))),
            };
            merged.insert(
                "down".into(),
                toml::Value::Array(new_down.iter().map(|&x| toml::Value::Integer(x as i64)).collect()),
            );
        }
        _ => {
            return Err(sec.error(
                "system",
                "this preset cannot be resized (a k-ary n-tree preset: write k and levels instead)",
            ))
        }
    }
    Ok(())
}

/// Link rate from `link_bandwidth`, or from lanes × lane rate × line code.
fn link_rate(sec: &Section) -> Result<Option<f64>> {
    let direct = sec.rate("link_bandwidth")?;
    let lane = sec.rate("lane_rate")?;
    let lanes = sec.int("lanes", 1, 64)?;
    let code = sec.choice("line_code", &["8b10b", "64b66b", "none"])?;
    if lane.is_none() {
        // Read only with a lane rate: alone they would change nothing.
        for key in ["lanes", "line_code"].into_iter().filter(|k| sec.has(k)) {
            return Err(sec.error(key, "applies with lane_rate (the link rate is lane_rate x lanes x the line code's efficiency); give lane_rate too, or link_bandwidth alone"));
        }
    }
    match (direct, lane) {
        (Some(_), Some(_)) => Err(sec.error(
            "lane_rate",
            "give either link_bandwidth or lane_rate/lanes/line_code, not both",
        )),
        (Some(r), None) => Ok(Some(r)),
        (None, Some(l)) => {
            let eff = match code.as_deref() {
                Some("8b10b") => 0.8,
                Some("64b66b") => 64.0 / 66.0,
                _ => 1.0,
            };
            Ok(Some(l * lanes.unwrap_or(1) as f64 * eff))
        }
        (None, None) => Ok(None),
    }
}

#[allow(non_snake_case)]
fn build(sec: &Section) -> Result<Resolved> {
    let topo = sec.choice("topology", &TOPOLOGIES)?.ok_or_else(|| {
        sec.error(
            "topology",
            format!(
                "missing; expected one of {} (or system = a preset)",
                TOPOLOGIES.join(", ")
            ),
        )
    })?;
    let rate = link_rate(sec)?;
    let (topology, link_bps, extra): (Topology, Vec<f64>, &[&str]) = match topo.as_str() {
        "torus" | "mesh" => {
            let t = build_torus(sec, topo == "torus")?;
            let r = rate.ok_or_else(|| {
                sec.error(
                    "link_bandwidth",
                    "missing; expected a rate such as \"175MB/s\"",
                )
            })?;
            let n = t.axes().len();
            (Topology::Torus(t), vec![r; n], &TORUS_KEYS)
        }
        "tofu" => {
            let t = build_tofu(sec)?;
            let r = rate.ok_or_else(|| {
                sec.error(
                    "link_bandwidth",
                    "missing; expected a rate such as \"5GB/s\" (or lane_rate, lanes, line_code)",
                )
            })?;
            (Topology::Tofu(t), vec![r; 6], &TOFU_KEYS)
        }
        "dragonfly" => {
            let (d, rates) = build_dragonfly(sec, rate)?;
            (Topology::Dragonfly(d), rates, &DRAGONFLY_KEYS)
        }
        _ => {
            let f = build_fattree(sec)?;
            let r = rate.ok_or_else(|| {
                sec.error(
                    "link_bandwidth",
                    "missing; expected a rate such as \"12.5GB/s\"",
                )
            })?;
            let classes = f.levels().saturating_sub(1).max(1);
            (Topology::FatTree(f), vec![r; classes], &FATTREE_KEYS)
        }
    };
    let generation = match sec.choice("generation", &Generation::names())? {
        Some(g) => Generation::parse(&g).expect("checked"),
        None => Generation::default_for(&topology),
    };
    generation.check(&topology).map_err(|e| sec.error("generation", e.to_string()))?;
    let nic = build_nic(sec, &topology, &link_bps, generation)?;
    let faults = match sec.table("faults")? {
        Some(f) => build_faults(&f, &topology)?,
        None => Faults::default(),
    };
    let host_Bps = sec.rate("host_bandwidth")?;
    if host_Bps.is_some_and(|h| !(h > 0.0 && h.is_finite())) {
        return Err(sec.error("host_bandwidth", "expected a positive rate such as \"15.5GB/s\""));
    }
    let mut valid: Vec<&str> = COMMON_KEYS.to_vec();
    valid.extend_from_slice(extra);
    sec.finish(&valid)?;
    Ok(Resolved {
        network: Network {
            topology,
            link_Bps: link_bps,
            nic,
            faults,
        },
        generation,
        host_Bps,
    })
}

fn shape(sec: &Section, want_len: Option<usize>) -> Result<Vec<u32>> {
    let s = sec.int_list("shape", 1, MAX_AXIS)?.ok_or_else(|| {
        sec.error(
            "shape",
            "missing; expected a list of axis lengths such as [8, 8, 8]",
        )
    })?;
    if s.is_empty() || s.len() > 8 {
        return Err(sec.error("shape", "expected 1 to 8 axis lengths"));
    }
    if let Some(n) = want_len {
        if s.len() != n {
            return Err(sec.error(
                "shape",
                format!(
                    "expected {n} lengths [X, Y, Z] (ABC is always 2x3x2), found {}",
                    s.len()
                ),
            ));
        }
    }
    let nodes: u128 =
        s.iter().map(|&x| x as u128).product::<u128>() * if want_len.is_some() { 12 } else { 1 };
    if nodes > (1u128 << 31) {
        return Err(sec.error("shape", format!("too many nodes ({nodes}); at most 2^31")));
    }
    Ok(s.into_iter().map(|x| x as u32).collect())
}

fn wraps(sec: &Section, n: usize, default: bool) -> Result<Vec<bool>> {
    match sec.bool_list("wrap")? {
        None => Ok(vec![default; n]),
        Some(w) if w.len() == n => Ok(w),
        Some(w) => Err(sec.error(
            "wrap",
            format!("expected {n} booleans (one per axis), found {}", w.len()),
        )),
    }
}

fn build_torus(sec: &Section, torus: bool) -> Result<Torus> {
    let s = shape(sec, None)?;
    let w = wraps(sec, s.len(), torus)?;
    let names: Vec<String> = match sec.get("axis_names") {
        None => (0..s.len())
            .map(tofusim_topology::torus::default_axis_name)
            .collect(),
        Some(toml::Value::Array(a)) if a.len() == s.len() && a.iter().all(|v| v.is_str()) => a
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect(),
        Some(_) => return Err(sec.error("axis_names", format!("expected {} strings", s.len()))),
    };
    if let Some(dup) = names.iter().enumerate().find_map(|(i, n)| names[..i].contains(n).then_some(n)) {
        return Err(sec.error("axis_names", format!("expected {} different names; {dup:?} is repeated", s.len())));
    }
    let axes = s
        .iter()
        .zip(&w)
        .zip(&names)
        .map(|((&l, &wr), n)| {
            if wr {
                Axis::ring(n, l)
            } else {
                Axis::path(n, l)
            }
        })
        .collect();
    Ok(Torus::new(axes))
}

fn build_tofu(sec: &Section) -> Result<Torus> {
    if let Some(abc) = sec.int_list("abc", 0, i64::MAX)? {
        if abc != [2, 3, 2] {
            return Err(sec.error("abc", format!("expected [2, 3, 2]: every Tofu node group is A x B x C = 2 x 3 x 2, found {abc:?}")));
        }
    }
    let s = shape(sec, Some(3))?;
    let w = wraps(sec, 3, true)?;
    let ax = |i: usize, n: &str| {
        if w[i] {
            Axis::ring(n, s[i])
        } else {
            Axis::path(n, s[i])
        }
    };
    Ok(tofu::tofu_torus([ax(0, "x"), ax(1, "y"), ax(2, "z")]))
}

fn req_int(sec: &Section, key: &str, min: i64, max: i64) -> Result<u32> {
    sec.int(key, min, max)?.map(|v| v as u32).ok_or_else(|| {
        sec.error(
            key,
            format!("missing; expected an integer from {min} to {max}"),
        )
    })
}

fn build_dragonfly(sec: &Section, link: Option<f64>) -> Result<(Dragonfly, Vec<f64>)> {
    let form = sec
        .choice("form", &["generic", "aries"])?
        .unwrap_or_else(|| "generic".into());
    // Keys of the other form would be read by nothing.
    let other: &[&str] = if form == "aries" {
        &["routers_per_group", "local_bandwidth", "global_bandwidth"]
    } else {
        &["chassis_per_group", "routers_per_chassis", "rank2_links", "rank1_bandwidth", "rank2_bandwidth", "rank3_bandwidth"]
    };
    if let Some(k) = other.iter().find(|k| sec.has(k)) {
        let other_form = if form == "aries" { "generic" } else { "aries" };
        return Err(sec.error(k, format!("applies to form = \"{other_form}\" dragonflies; this one is {form}")));
    }
    let groups = req_int(sec, "groups", 1, 100_000)?;
    let p = sec
        .int("nodes_per_router", 1, 1024)?
        .map_or(if form == "aries" { 4 } else { 0 }, |v| v as u32);
    if p == 0 {
        return Err(sec.error(
            "nodes_per_router",
            "missing; expected an integer from 1 to 1024",
        ));
    }
    let h = req_int(sec, "global_links_per_router", 0, 1024)?;
    let wiring = if form == "aries" {
        GroupWiring::Aries {
            chassis: sec.int("chassis_per_group", 1, 64)?.unwrap_or(6) as u32,
            routers_per_chassis: sec.int("routers_per_chassis", 1, 256)?.unwrap_or(16) as u32,
            rank2_links: sec.int("rank2_links", 1, 64)?.unwrap_or(3) as u32,
        }
    } else {
        GroupWiring::AllToAll {
            routers: req_int(sec, "routers_per_group", 1, 4096)?,
        }
    };
    let arrangement = sec
        .choice("arrangement", &Arrangement::NAMES)?
        .map_or(Arrangement::Consecutive, |s| {
            Arrangement::parse(&s).expect("checked by choice")
        });
    let ports = wiring.routers() * h;
    let per_cable = sec.int("links_per_cable", 1, 64)?.unwrap_or(1) as u32;
    let lpp = match (
        sec.int("links_per_group_pair", 1, 1 << 20)?,
        sec.int("cables_per_group_pair", 1, 1 << 20)?,
    ) {
        (Some(_), Some(_)) => {
            return Err(sec.error(
                "cables_per_group_pair",
                "give links_per_group_pair or cables_per_group_pair, not both",
            ))
        }
        (Some(_), None) if sec.has("links_per_cable") => {
            return Err(sec.error(
                "links_per_cable",
                "applies with cables_per_group_pair (or the default, whole cables); links_per_group_pair counts links already",
            ))
        }
        (Some(l), None) => l as u32,
        (None, Some(c)) => c as u32 * per_cable,
        // Default: as many whole cables per pair as the ports allow.
        (None, None) => Dragonfly::max_links_per_pair(groups, ports) / per_cable * per_cable,
    };
    let d = Dragonfly {
        groups,
        nodes_per_router: p,
        wiring,
        global_ports_per_router: h,
        links_per_group_pair: lpp,
        arrangement,
    };
    if groups > ports + 1 {
        return Err(sec.error("groups", format!("{groups} groups need more global links than the {ports} global ports per group can place; at most {} groups", ports + 1)));
    }
    if groups >= 2 && lpp == 0 {
        return Err(sec.error("groups", format!("{groups} groups cannot all be connected: {ports} global ports per group give fewer than one {per_cable}-link cable per group pair")));
    }
    d.validate().map_err(|e| match e {
        DragonflyError::TooManyGroups { groups, max_groups } => sec.error("groups", format!("{groups} groups need more global links than the {ports} global ports per group can place; at most {max_groups} groups")),
        DragonflyError::TooManyLinksPerPair { links_per_pair, max } => {
            sec.error("links_per_group_pair", format!("{links_per_pair} global links per group pair do not fit: {ports} ports over {} other groups allow at most {max}", groups - 1))
        }
    })?;
    let rates = if form == "aries" {
        let r1 = sec.rate("rank1_bandwidth")?.or(link);
        let r2 = sec.rate("rank2_bandwidth")?.or(link);
        let r3 = sec.rate("rank3_bandwidth")?.or(link);
        let need = |r: Option<f64>, k: &str| {
            r.ok_or_else(|| {
                sec.error(
                    k,
                    "missing; expected a rate (or link_bandwidth for every class)",
                )
            })
        };
        vec![
            need(r1, "rank1_bandwidth")?,
            need(r2, "rank2_bandwidth")?,
            need(r3, "rank3_bandwidth")?,
        ]
    } else {
        let l = sec.rate("local_bandwidth")?.or(link);
        let g = sec.rate("global_bandwidth")?.or(link);
        let need = |r: Option<f64>, k: &str| {
            r.ok_or_else(|| {
                sec.error(
                    k,
                    "missing; expected a rate (or link_bandwidth for every class)",
                )
            })
        };
        vec![need(l, "local_bandwidth")?, need(g, "global_bandwidth")?]
    };
    Ok((d, rates))
}

fn build_fattree(sec: &Section) -> Result<FatTree> {
    let rails = sec.int("rails", 1, 16)?.unwrap_or(1) as u32;
    let k = sec.int("k", 2, 4096)?;
    let down = sec.int_list("down", 1, 1 << 20)?;
    let f = match (k, down) {
        (Some(_), Some(_)) => {
            return Err(sec.error(
                "down",
                "give either k and levels (a k-ary n-tree) or down/up lists, not both",
            ))
        }
        (Some(k), None) => {
            let n = req_int(sec, "levels", 1, 8)?;
            if (k as u128).pow(n as u32) > 1 << 31 {
                return Err(sec.error("levels", format!("{k}^{n} nodes: too many; at most 2^31")));
            }
            if sec.has("up") {
                return Err(sec.error("up", "up-degrees go with down lists; a k-ary n-tree takes k, levels and taper"));
            }
            let taper = sec.int_list("taper", 1, 4096)?.unwrap_or_default();
            if taper.len() > (n as usize).saturating_sub(1) {
                return Err(sec.error(
                    "taper",
                    format!(
                        "expected at most {} values (one per level above the leaves)",
                        n - 1
                    ),
                ));
            }
            if let Some(&t) = taper.iter().find(|&&t| k % t != 0) {
                return Err(sec.error("taper", format!("expected divisors of k = {k}, found {t}")));
            }
            let taper: Vec<u32> = taper.into_iter().map(|t| t as u32).collect();
            FatTree::k_ary_n_tree(k as u32, n, &taper)
        }
        (None, Some(down)) => {
            if let Some(key) = ["levels", "taper"].into_iter().find(|k| sec.has(k)) {
                return Err(sec.error(key, "goes with k (a k-ary n-tree); with down/up lists give each level's degrees instead"));
            }
            let up = sec.int_list("up", 1, 1 << 20)?.ok_or_else(|| {
                sec.error(
                    "up",
                    "missing; expected one up-degree per level (up[0] = 1)",
                )
            })?;
            if up.len() != down.len() || down.is_empty() || down.len() > 8 {
                return Err(sec.error(
                    "up",
                    format!("expected {} values, one per level like down", down.len()),
                ));
            }
            if up[0] != 1 {
                return Err(sec.error(
                    "up[0]",
                    "expected 1: a node attaches to one leaf switch per rail (use rails for more)",
                ));
            }
            let nodes: u128 = down.iter().map(|&x| x as u128).product();
            if nodes > 1 << 31 {
                return Err(sec.error("down", "too many nodes; at most 2^31"));
            }
            FatTree {
                down: down.into_iter().map(|x| x as u32).collect(),
                up: up.into_iter().map(|x| x as u32).collect(),
                rails,
            }
        }
        (None, None) => {
            return Err(sec.error(
                "k",
                "missing; expected k and levels (k-ary n-tree) or down and up lists",
            ))
        }
    };
    Ok(FatTree { rails, ..f })
}

fn build_nic(sec: &Section, topo: &Topology, link_bps: &[f64], generation: Generation) -> Result<NodeInterface> {
    let (default_n, default_rate) = match topo {
        // Direct networks: a node can inject into every link at once unless
        // the preset says how many interfaces it has.
        Topology::Torus(t) => (t.max_degree(), link_bps[0]),
        // A Tofu node's TNIs are its generation's: TofuD 6, Tofu1 and
        // Tofu2 4 [S:000]; the BG/L router on a Tofu topology injects into
        // every link, as on any torus.
        Topology::Tofu(t) => match generation {
            Generation::Tofud => (6, link_bps[0]),
            Generation::Tofu1 | Generation::Tofu2 => (4, link_bps[0]),
            Generation::Bgl | Generation::Aries | Generation::GenericDragonfly | Generation::FatTree => (t.max_degree(), link_bps[0]),
        },
        Topology::Dragonfly(_) => (1, 0.0),
        Topology::FatTree(f) => (f.rails, link_bps[0]),
    };
    let n = sec
        .int("nic_interfaces", 1, 16)?
        .map_or(default_n, |v| v as u32);
    let rate = sec.rate("nic_bandwidth")?.unwrap_or(default_rate);
    if rate <= 0.0 {
        return Err(sec.error(
            "nic_bandwidth",
            "missing; expected the injection rate of one network interface, such as \"10GB/s\"",
        ));
    }
    Ok(NodeInterface {
        interfaces: n,
        interface_Bps: rate,
        host_limit_Bps: sec.rate("nic_limit")?,
    })
}

fn build_faults(sec: &Section, topo: &Topology) -> Result<Faults> {
    let mut f = Faults::default();
    let nodes = topo.node_count();
    if let Some(v) = sec.get("nodes") {
        let toml::Value::Array(items) = v else {
            return Err(sec.error("nodes", "expected an array of node ids or coordinate lists"));
        };
        for (i, item) in items.iter().enumerate() {
            let key = format!("nodes[{i}]");
            let id = node_ref(sec, &key, item, topo)?;
            if id as u64 >= nodes {
                return Err(sec.error(
                    &key,
                    format!("expected a node id below {nodes}, found {id}"),
                ));
            }
            if f.nodes.contains(&id) {
                return Err(sec.error(&key, format!("node {id} is listed twice")));
            }
            f.nodes.push(id);
        }
    }
    for ls in sec.tables("links", "{ node = [0, 0, 0], port = \"x+\" } or { routers = [0, 1] }")? {
        let (a, b, port) = link_ref(&ls, topo)?;
        f.links.push((a, b));
        f.link_ports.push(port);
        // Only the keys the topology reads: node and port on a
        // torus or Tofu, routers elsewhere.
        match topo {
            Topology::Torus(_) | Topology::Tofu(_) => ls.finish(&["node", "port"])?,
            _ => ls.finish(&["routers"])?,
        }
    }
    sec.finish(&["nodes", "links"])?;
    Ok(f)
}

pub(crate) fn node_ref(sec: &Section, key: &str, item: &toml::Value, topo: &Topology) -> Result<u32> {
    match (item, topo) {
        (toml::Value::Integer(i), _) if *i >= 0 && *i <= u32::MAX as i64 => Ok(*i as u32),
        (toml::Value::Array(c), Topology::Torus(t) | Topology::Tofu(t)) => {
            let lens = t.lengths();
            if c.len() != lens.len() {
                return Err(sec.error(
                    key,
                    format!("expected {} coordinates, found {}", lens.len(), c.len()),
                ));
            }
            let mut coords = Vec::new();
            for (j, (v, &l)) in c.iter().zip(&lens).enumerate() {
                match v {
                    toml::Value::Integer(x) if *x >= 0 && (*x as u64) < l as u64 => {
                        coords.push(*x as u32)
                    }
                    _ => {
                        return Err(sec.error(
                            &format!("{key}[{j}]"),
                            format!("expected a coordinate from 0 to {}", l - 1),
                        ))
                    }
                }
            }
            Ok(t.node_id(&coords).0)
        }
        _ => Err(sec.error(
            key,
            "expected a node id (or a coordinate list on a torus/Tofu)",
        )),
    }
}

/// A failed link: its two routers and, on a torus or Tofu, the port at the
/// first.
/// A link table's link as `routing` sees it: the router at its first end
/// and the port out of it towards the other — the named port, or the
/// first of the router's ports that leads there.
pub(crate) fn link_out(sec: &Section, topo: &Topology, routing: &tofusim_routing::Routing) -> Result<(u32, u8)> {
    let (a, b, port) = link_ref(sec, topo)?;
    match port {
        Some(p) => Ok((a, p)),
        None => (0..routing.ports() as u8)
            .find(|&q| routing.neighbor(a, q).is_some_and(|(w, _)| w == b))
            .map(|q| (a, q))
            .ok_or_else(|| sec.error("routers", format!("no port of router {a} leads to router {b}"))),
    }
}

pub(crate) fn link_ref(sec: &Section, topo: &Topology) -> Result<(u32, u32, Option<u8>)> {
    match topo {
        Topology::Torus(t) | Topology::Tofu(t) => {
            let node = sec.get("node").ok_or_else(|| {
                sec.error("node", "missing; expected the node at one end of the link")
            })?;
            let v = node_ref(sec, "node", node, topo)?;
            if v as u64 >= t.node_count() {
                return Err(sec.error(
                    "node",
                    format!("expected a node id below {}", t.node_count()),
                ));
            }
            let names: Vec<&str> = t.ports().iter().map(|p| p.name.as_str()).collect();
            let port = sec.string("port")?.ok_or_else(|| {
                sec.error(
                    "port",
                    format!("missing; expected one of {}", names.join(", ")),
                )
            })?;
            let p = names.iter().position(|&n| n == port).ok_or_else(|| {
                sec.error(
                    "port",
                    format!("expected one of {}, found {port:?}", names.join(", ")),
                )
            })?;
            let w = t.neighbor(NodeId(v), PortId(p as u8)).ok_or_else(|| {
                sec.error(
                    "port",
                    format!("port {port} of node {v} is not connected (mesh boundary)"),
                )
            })?;
            Ok((v, w.0, Some(p as u8)))
        }
        _ => {
            let r = sec
                .int_list("routers", 0, u32::MAX as i64)?
                .ok_or_else(|| sec.error("routers", "missing; expected [router, router]"))?;
            if r.len() != 2 {
                return Err(sec.error("routers", "expected two router ids"));
            }
            let g = topo.router_graph();
            let (a, b) = (r[0] as u32, r[1] as u32);
            if a as usize >= g.router_count()
                || b as usize >= g.router_count()
                || !g.neighbors(a).any(|(t, _)| t == b)
            {
                return Err(sec.error("routers", format!("no link between routers {a} and {b}")));
            }
            Ok((a, b, None))
        }
    }
}
