//! What limits a run: the time packets spend blocked, by cause, and the
//! resource that binds.
//!
//! Every queue head (a VC buffer of a network input, an injection FIFO)
//! keeps a clock: when its packet became the head, and since when it has
//! been blocked for its current cause. Whenever arbitration finds the head
//! cannot go, it names the cause ([`Cause`]); a change of cause charges the
//! time since the last change to the old one, and the grant charges the
//! rest. So the blocked time is split exactly at the moments the engine
//! looked, and between them a head waits for the cause it was last refused
//! for (a router is looked at again whenever something it waits for
//! changes: a link frees, tokens return, a packet arrives). A head never
//! looked at because all its outputs were busy waits for the link.
//!
//! Per output port the PA counters give its busy and token-depleted
//! cycles; per node, the host interface's busy time and the
//! time a packet waited in the send queue for injection FIFO space. From
//! these [`Limits::new`] names the binding resource.

use serde::Serialize;

/// Why a queue head could not go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cause {
    /// Every output it may take was busy sending another packet.
    Link = 0,
    /// A free output, but too few downstream tokens (credits) for it.
    Tokens = 1,
    /// It asked for an output and another packet won the arbitration.
    Arbitration = 2,
    /// Its input's receiver→sender paths were all in use.
    Paths = 3,
    /// At its destination, the input's reception path was busy.
    Reception = 4,
    /// An injection FIFO's head while the node's host interface was busy.
    Host = 5,
    /// A packet in the node's send queue while no injection FIFO had room.
    FifoSpace = 6,
}

pub const CAUSES: usize = 7;

impl Cause {
    pub const ALL: [Cause; CAUSES] = [Cause::Link, Cause::Tokens, Cause::Arbitration, Cause::Paths, Cause::Reception, Cause::Host, Cause::FifoSpace];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Link => "link",
            Cause::Tokens => "downstream-tokens",
            Cause::Arbitration => "arbitration-lost",
            Cause::Paths => "input-paths",
            Cause::Reception => "reception",
            Cause::Host => "host-interface",
            Cause::FifoSpace => "injection-fifo-space",
        }
    }

    /// What the cause means, for a sentence.
    pub fn meaning(self) -> &'static str {
        match self {
            Cause::Link => "waiting for a busy link",
            Cause::Tokens => "waiting for downstream buffer space (tokens)",
            Cause::Arbitration => "losing the switch arbitration",
            Cause::Paths => "waiting for a receiver-to-sender path of their input",
            Cause::Reception => "waiting for the reception path at the destination",
            Cause::Host => "waiting for the host interface",
            Cause::FifoSpace => "waiting in the send queue for injection FIFO space",
        }
    }
}

/// One queue head's clock: since when it has been blocked for which cause
/// (the cause in the low 3 bits), one word kept beside the queue's head
/// candidates (`InputUnits::heads`), which change at the same moments, so
/// a hop touches one cache line for both. (Per-port head waits, a fifth
/// word in the PA counters or an array of their own, cost 5–10% more time
/// per hop at 16³: not kept; BENCHMARKS.md.)
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct HeadClock {
    since_cause: u64,
}

impl HeadClock {
    /// A new head at `t`, blocked (until looked at) by `cause`.
    #[inline]
    pub fn new(t: u64, cause: Cause) -> Self {
        HeadClock { since_cause: stamp(t, cause) }
    }

    #[inline]
    fn since(self) -> u64 {
        self.since_cause >> 3
    }

    /// The cause the head is blocked by now.
    #[inline]
    pub fn cause(self) -> u8 {
        (self.since_cause & 7) as u8
    }

    /// The head is blocked at `t` by `cause`: the time since the last
    /// change goes to the old cause in `blocked`.
    #[inline]
    pub fn block(&mut self, t: u64, cause: Cause, blocked: &mut [u64; CAUSES], warmup: u64) {
        if self.cause() != cause as u8 {
            charge(blocked, self.cause(), self.since(), t, warmup);
            self.since_cause = stamp(t, cause);
        }
    }

    /// The head goes at `t`: the last stretch is charged.
    #[inline]
    pub fn granted(self, t: u64, blocked: &mut [u64; CAUSES], warmup: u64) {
        charge(blocked, self.cause(), self.since(), t, warmup);
    }
}

/// A cycle and a cause in one word: the cycle in the upper 61 bits (runs
/// are at most 2^61 cycles long: `run.cycles` stops below), the cause in
/// the low 3.
#[inline]
fn stamp(t: u64, cause: Cause) -> u64 {
    t.min(u64::MAX >> 3) << 3 | cause as u64
}

/// Adds the measured part (after `warmup`) of `[since, t)` to `cause`.
#[inline]
pub(crate) fn charge(blocked: &mut [u64; CAUSES], cause: u8, since: u64, t: u64, warmup: u64) {
    blocked[cause as usize] += t.saturating_sub(since.max(warmup));
}

/// One class of resources (the links of an axis or rank, the nodes' host
/// interfaces…) over the measured window.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ResourceClass {
    /// "link" | "host-interface" | "injection-fifo".
    pub kind: &'static str,
    /// The class: a link class ("X", "rank-3", "up from L0"), or the kind.
    pub name: String,
    pub count: u64,
    /// Busy time over the window: mean over the class, and its busiest one.
    pub busy_mean: f64,
    pub busy_max: f64,
    /// Host interfaces: packet-cycles FIFO heads waited for them; FIFOs:
    /// packet-cycles a send queue waited for space; per member and cycle
    /// (links: `None`, their waits are only split by cause, globally).
    pub waited_per_cycle: Option<f64>,
    /// Links: the share of the window in which a head waited with the
    /// link free but too few downstream tokens (mean over the class).
    pub depleted_mean: f64,
}

/// One resource of those most busy.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct BusyResource {
    pub kind: &'static str,
    pub resource_class: String,
    /// "router (coords) port", or the node.
    pub name: String,
    pub router: u32,
    pub port: Option<u8>,
    /// The router the link leads to.
    pub to_router: Option<u32>,
    pub busy: f64,
    /// Links: the share of the window a head waited for downstream tokens
    /// with the link free.
    pub depleted: Option<f64>,
}

/// What limits a run (in the result as `limits`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Limits {
    /// One sentence: the binding resource with its numbers.
    pub summary: String,
    /// The binding resource's kind and class, and the set it is part of
    /// ("the 6 links into router (3,3,3)", "every rank-3 link"…).
    pub binding: Binding,
    /// Queue-head cycles blocked over the window, by cause (a head is the
    /// packet at the front of a VC buffer, FIFO or send queue; packets
    /// behind it are not counted), and each cause's share.
    pub blocked_cycles: std::collections::BTreeMap<&'static str, u64>,
    pub blocked_share: std::collections::BTreeMap<&'static str, f64>,
    /// Queue-head cycles blocked per packet delivered in the window (the
    /// waits of packets at the head of a queue; those behind a head are not
    /// counted).
    pub blocked_per_packet_cycles: f64,
    pub classes: Vec<ResourceClass>,
    /// The busiest resources, most first (at most 8).
    pub busiest: Vec<BusyResource>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Binding {
    pub kind: &'static str,
    pub resource_class: String,
    /// The set of resources at the top ("links into router R", "links out
    /// of router R", "one link", "the class").
    pub set: String,
    pub busy: f64,
    /// The cause most of the blocked time went to.
    pub dominant_cause: &'static str,
}

/// A link as the limits see it (its class an index into the names).
#[derive(Clone, Copy)]
pub(crate) struct LinkUse {
    pub router: u32,
    pub port: u8,
    pub to_router: u32,
    pub class: u16,
    pub busy_cycles: u64,
    pub depleted_cycles: u64,
}

/// A node's interface as the limits see it.
#[derive(Clone, Copy)]
pub(crate) struct NodeUse {
    pub node: u32,
    pub router: u32,
    /// Busy cycles of its host interface (`None`: no host limit modelled).
    pub host_busy: Option<f64>,
    pub fifo_waited: u64,
}

/// Share of resources at which the busiest of a set counts as saturated.
const SATURATED: f64 = 0.9;

impl Limits {
    /// `class_names`: the links' classes; `label(router, port)` names a
    /// link (`None`: the router, for a node's interface).
    /// `measured_packets`: packets delivered in the window.
    pub(crate) fn new(links: &[LinkUse], class_names: &[String], nodes: &[NodeUse], blocked: &[u64; CAUSES], measured_packets: u64, window: f64, label: &dyn Fn(u32, Option<u8>) -> String) -> Limits {
        let window = window.max(1.0);
        // Busy time is counted when a packet is granted, its whole wire
        // time at once: a packet sent near the end of a short window would
        // make a link more than 100% busy. Each resource is capped at the
        // window.
        let links: Vec<LinkUse> = links.iter().map(|l| LinkUse { busy_cycles: l.busy_cycles.min(window as u64), ..*l }).collect();
        let links = &links[..];
        let nodes: Vec<NodeUse> = nodes.iter().map(|n| NodeUse { host_busy: n.host_busy.map(|b| b.min(window)), ..*n }).collect();
        let nodes = &nodes[..];
        let total_blocked: u64 = blocked.iter().sum();
        let blocked_cycles = Cause::ALL.iter().map(|c| (c.name(), blocked[*c as usize])).collect();
        let blocked_share = Cause::ALL
            .iter()
            .map(|c| (c.name(), if total_blocked > 0 { blocked[*c as usize] as f64 / total_blocked as f64 } else { 0.0 }))
            .collect();
        let dominant = Cause::ALL.iter().copied().max_by_key(|c| (blocked[*c as usize], std::cmp::Reverse(*c as u8))).unwrap_or(Cause::Link);
        let mut classes: Vec<ResourceClass> = Vec::new();
        for (k, name) in class_names.iter().enumerate() {
            let members: Vec<&LinkUse> = links.iter().filter(|l| l.class as usize == k).collect();
            if members.is_empty() {
                continue;
            }
            let n = members.len() as f64;
            classes.push(ResourceClass {
                kind: "link",
                count: members.len() as u64,
                busy_mean: members.iter().map(|l| l.busy_cycles as f64).sum::<f64>() / (n * window),
                busy_max: members.iter().map(|l| l.busy_cycles).max().unwrap_or(0) as f64 / window,
                waited_per_cycle: None,
                depleted_mean: members.iter().map(|l| l.depleted_cycles as f64).sum::<f64>() / (n * window),
                name: name.clone(),
            });
        }
        let hosts: Vec<(&NodeUse, f64)> = nodes.iter().filter_map(|n| n.host_busy.map(|b| (n, b))).collect();
        if !hosts.is_empty() {
            classes.push(node_class("host-interface", "host interface", hosts.iter().map(|h| h.1), blocked[Cause::Host as usize], window));
        }
        if !nodes.is_empty() {
            // A FIFO is "busy" while a packet waits for room in it.
            classes.push(node_class("injection-fifo", "injection FIFOs", nodes.iter().map(|n| n.fifo_waited as f64), blocked[Cause::FifoSpace as usize], window));
        }
        // Candidates for the busiest: the links and host interfaces within
        // 10 points of the busiest of their kind (under uniform load, every
        // link: they are sorted as plain numbers, and only those kept are
        // named).
        let top_link = links.iter().map(|l| l.busy_cycles).max().unwrap_or(0) as f64 / window;
        let top_host = hosts.iter().map(|h| h.1).fold(0.0, f64::max) / window;
        let mut cands: Vec<Candidate> = links
            .iter()
            .filter(|l| l.busy_cycles as f64 / window >= top_link - 0.1)
            .map(|l| Candidate { node: None, class: l.class, router: l.router, port: Some(l.port), to_router: Some(l.to_router), busy: l.busy_cycles as f64 / window, depleted: Some(l.depleted_cycles as f64 / window) })
            .chain(hosts.iter().filter(|h| h.1 / window >= top_host - 0.1).map(|(n, b)| Candidate { node: Some(n.node), class: 0, router: n.router, port: None, to_router: None, busy: b / window, depleted: None }))
            .collect();
        // Most busy first; among equals, those longer short of tokens, then
        // the lowest router and port (a stable order across runs).
        cands.sort_by(|a, b| {
            b.busy
                .total_cmp(&a.busy)
                .then(b.depleted.unwrap_or(0.0).total_cmp(&a.depleted.unwrap_or(0.0)))
                .then(a.router.cmp(&b.router))
                .then(a.port.cmp(&b.port))
        });
        let name_of = |c: &Candidate| match c.node {
            Some(n) => format!("node {n} at router {}", label(c.router, None)),
            None => label(c.router, c.port),
        };
        let class_of = |c: &Candidate| if c.node.is_some() { "host interface".to_string() } else { class_names[c.class as usize].clone() };
        let nothing = cands.first().is_none_or(|c| c.busy == 0.0) && total_blocked == 0;
        let dominant = if total_blocked == 0 { None } else { Some(dominant) };
        let binding = if nothing {
            Binding { kind: "none", resource_class: String::new(), set: "nothing".into(), busy: 0.0, dominant_cause: "none" }
        } else {
            binding(&cands, &classes, links, dominant, &|c| (name_of(c), class_of(c)), label)
        };
        let busiest = cands
            .iter()
            .take(8)
            .map(|c| BusyResource { kind: c.kind(), resource_class: class_of(c), name: name_of(c), router: c.router, port: c.port, to_router: c.to_router, busy: c.busy, depleted: c.depleted })
            .collect();
        let summary = sentence(&binding, &classes, dominant, blocked, total_blocked, measured_packets);
        Limits {
            summary,
            binding,
            blocked_cycles,
            blocked_share,
            blocked_per_packet_cycles: if measured_packets > 0 { total_blocked as f64 / measured_packets as f64 } else { 0.0 },
            classes,
            busiest,
        }
    }
}

/// A class of per-node resources: each member's busy cycles `busy`, and
/// the cycles heads waited for the class in all.
fn node_class(kind: &'static str, name: &str, busy: impl ExactSizeIterator<Item = f64> + Clone, waited: u64, window: f64) -> ResourceClass {
    let k = busy.len() as f64;
    ResourceClass {
        kind,
        name: name.into(),
        count: busy.len() as u64,
        busy_mean: busy.clone().sum::<f64>() / (k * window),
        busy_max: busy.fold(0.0, f64::max) / window,
        waited_per_cycle: Some(waited as f64 / (k * window)),
        depleted_mean: 0.0,
    }
}

/// A busiest-resource candidate before it is named.
#[derive(Clone, Copy)]
struct Candidate {
    /// A host interface's node (`None`: a link).
    node: Option<u32>,
    class: u16,
    router: u32,
    port: Option<u8>,
    to_router: Option<u32>,
    busy: f64,
    depleted: Option<f64>,
}

impl Candidate {
    fn kind(&self) -> &'static str {
        if self.node.is_some() {
            "host-interface"
        } else {
            "link"
        }
    }
}

/// The binding resource: the busiest one, with the set of resources as
/// busy as it (within 10 points) when they share an end — links into one
/// router, links out of one — or its whole class when every member of the
/// class is that busy, or the network's links as a whole when most links,
/// of several classes, are that busy (uniform load past saturation). `names(c)`: a candidate's name and class.
fn binding(cands: &[Candidate], classes: &[ResourceClass], links: &[LinkUse], dominant: Option<Cause>, names: &dyn Fn(&Candidate) -> (String, String), label: &dyn Fn(u32, Option<u8>) -> String) -> Binding {
    let top = cands[0];
    let (top_name, top_class) = names(&top);
    let near: Vec<&Candidate> = cands.iter().filter(|b| b.kind() == top.kind() && b.busy >= top.busy - 0.1).collect();
    let same_class = near.iter().filter(|b| b.node.is_none() && b.class == top.class).count() as u64;
    let class = classes.iter().find(|c| c.kind == top.kind() && c.name == top_class);
    let all_links: u64 = classes.iter().filter(|c| c.kind == "link").map(|c| c.count).sum();
    let set = if top.node.is_some() {
        if near.len() > 1 {
            format!("the host interfaces of {} nodes", near.len())
        } else {
            format!("the host interface of {top_name}")
        }
    } else if let Some(c) = class.filter(|c| c.count > 1 && same_class == c.count) {
        format!("every {} link ({} links)", c.name, c.count)
    } else if near.len() > 1 && near.iter().all(|b| b.to_router == top.to_router) {
        let into = links.iter().filter(|l| Some(l.to_router) == top.to_router).count();
        format!("the links into router {} ({} of its {} incoming links)", label(top.to_router.unwrap_or(0), None), near.len(), into)
    } else if near.len() > 1 && near.iter().all(|b| b.router == top.router) {
        format!("the links out of router {} ({} links)", label(top.router, None), near.len())
    } else if near.len() as u64 > same_class && 2 * near.len() as u64 > all_links {
        // Uniform load past saturation: most links, of several classes,
        // are that busy, and no one set of them binds: the links do, as a
        // whole.
        format!("the network's links as a whole ({} of {} links within 10 points of the busiest, {top_name})", thousands(near.len() as u64), thousands(all_links))
    } else if near.len() > 1 {
        format!("{} links as busy as the busiest ({top_name}, {top_class})", thousands(near.len() as u64))
    } else {
        format!("one {top_class} link: {top_name}")
    };
    Binding { kind: top.kind(), resource_class: top_class, set, busy: top.busy, dominant_cause: dominant.map_or("none", Cause::name) }
}

/// `183047` as `183,047`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn sentence(b: &Binding, classes: &[ResourceClass], dominant: Option<Cause>, blocked: &[u64; CAUSES], total: u64, measured_packets: u64) -> String {
    if b.kind == "none" {
        return "Nothing was measured: no resource was busy and no packet waited after the warm-up.".into();
    }
    let all_links: Vec<&ResourceClass> = classes.iter().filter(|c| c.kind == "link").collect();
    let mean_links = {
        let n: u64 = all_links.iter().map(|c| c.count).sum();
        if n > 0 { all_links.iter().map(|c| c.busy_mean * c.count as f64).sum::<f64>() / n as f64 } else { 0.0 }
    };
    let verdict = if b.busy >= SATURATED { "Limited by" } else { "No resource is saturated; the busiest is" };
    let waits = match dominant {
        Some(d) if measured_packets > 0 && total > 0 => format!(
            "; queue heads spent {:.0}% of their blocked time {} ({:.0} head-cycles blocked per packet delivered)",
            blocked[d as usize] as f64 / total as f64 * 100.0,
            d.meaning(),
            total as f64 / measured_packets as f64
        ),
        _ => String::new(),
    };
    let mean = if all_links.is_empty() { String::new() } else { format!(", against {:.1}% for the mean link", mean_links * 100.0) };
    format!("{verdict} {}: {:.1}% busy{mean}{waits}.", b.set, b.busy * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(router: u32, port: u8, to: u32, class: u16, busy: u64) -> LinkUse {
        LinkUse { router, port, to_router: to, class, busy_cycles: busy, depleted_cycles: 0 }
    }

    fn label(r: u32, p: Option<u8>) -> String {
        match p {
            Some(p) => format!("r{r} p{p}"),
            None => format!("r{r}"),
        }
    }

    fn classes() -> Vec<String> {
        vec!["X".into(), "Y".into()]
    }

    #[test]
    fn a_clock_splits_a_wait_by_cause_and_skips_the_warmup() {
        let mut blocked = [0; CAUSES];
        let mut c = HeadClock::new(5, Cause::Link);
        c.block(20, Cause::Tokens, &mut blocked, 10);
        c.block(25, Cause::Tokens, &mut blocked, 10);
        c.block(30, Cause::Arbitration, &mut blocked, 10);
        c.granted(34, &mut blocked, 10);
        assert_eq!(blocked[Cause::Link as usize], 10);
        assert_eq!(blocked[Cause::Tokens as usize], 10);
        assert_eq!(blocked[Cause::Arbitration as usize], 4);
    }

    #[test]
    fn links_into_one_router_are_named_as_a_set() {
        let links = vec![link(0, 0, 9, 0, 990), link(1, 1, 9, 0, 985), link(2, 2, 9, 1, 980), link(3, 0, 4, 1, 100), link(4, 0, 5, 0, 50), link(5, 0, 6, 0, 60)];
        let l = Limits::new(&links, &classes(), &[], &[100, 0, 0, 0, 0, 0, 0], 10, 1000.0, &label);
        assert!(l.binding.set.starts_with("the links into router"), "{}", l.binding.set);
        assert!(l.summary.starts_with("Limited by the links into router"), "{}", l.summary);
        assert_eq!(l.binding.dominant_cause, "link");
        assert_eq!(l.busiest.len(), 3);
    }

    #[test]
    fn idle_and_empty_runs_say_nothing_was_measured() {
        let idle = vec![link(0, 0, 1, 0, 0), link(1, 0, 0, 0, 0)];
        let l = Limits::new(&idle, &classes(), &[], &[0; CAUSES], 0, 1000.0, &label);
        assert_eq!(l.binding.kind, "none");
        assert!(l.summary.starts_with("Nothing was measured"), "{}", l.summary);
        let l = Limits::new(&[], &classes(), &[], &[0; CAUSES], 0, 0.0, &label);
        assert_eq!((l.binding.kind, l.binding.dominant_cause), ("none", "none"));
        // A whole class only when every member is that busy.
        let even = vec![link(0, 0, 1, 0, 990), link(1, 0, 2, 0, 985), link(2, 0, 0, 0, 980), link(0, 1, 2, 1, 975)];
        let l = Limits::new(&even, &classes(), &[], &[5, 0, 0, 0, 0, 0, 0], 1, 1000.0, &label);
        assert_eq!(l.binding.set, "every X link (3 links)");
    }

    #[test]
    fn most_links_that_busy_bind_as_the_network() {
        // Uniform load past saturation: three of five links, over both
        // classes (neither whole), into three routers, within 10 points
        // of the busiest.
        let links = vec![link(0, 0, 1, 0, 999), link(1, 0, 2, 0, 950), link(2, 0, 0, 0, 500), link(2, 1, 3, 1, 930), link(3, 1, 0, 1, 600)];
        let l = Limits::new(&links, &classes(), &[], &[1, 0, 3, 0, 0, 0, 0], 1, 1000.0, &label);
        assert!(l.binding.set.starts_with("the network's links as a whole (3 of 5 links"), "{}", l.binding.set);
        assert_eq!(thousands(183047), "183,047");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
    }

    #[test]
    fn a_busy_host_interface_binds_over_links() {
        let links = vec![link(0, 0, 1, 0, 700), link(1, 0, 0, 0, 700)];
        let nodes = vec![NodeUse { node: 0, router: 0, host_busy: Some(995.0), fifo_waited: 900 }];
        let l = Limits::new(&links, &classes(), &nodes, &[0, 0, 0, 0, 0, 50, 10], 10, 1000.0, &label);
        assert_eq!(l.binding.kind, "host-interface");
        assert!(l.summary.contains("host interface of node 0"), "{}", l.summary);
    }
}
