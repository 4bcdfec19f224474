//! The result of a run, read from the engine holding every partition's
//! merged state (see `summary`).

use std::collections::BTreeMap;

use super::window::Ending;
use super::Engine;
use crate::result::*;
use crate::stats::Sample;
use crate::traffic::{RunEnd, Traffic};

/// The result of a run from the engine holding every partition's merged
/// state (see [`crate::summary`]).
pub(crate) fn finish<W: Traffic>(mut e: Engine<W>, end: Ending, wall: f64, partitions: Option<PartitionInfo>) -> RunResult {
    let Ending { t: t_end, mut completion, deadlock, interrupted, budget_exceeded, .. } = end;
    if completion.is_some() && e.error.is_none() {
        match e.workload.check_complete() {
            Err(err) => e.fail(t_end, err.kind, err.detail),
            // The last step may be local work after the last delivery.
            Ok(Some(local_end)) => completion = completion.map(|c| c.max(local_end)),
            Ok(None) => {}
        }
    }
    let lay = e.net.lay;
    let end = completion.unwrap_or(t_end).max(1);
    let window = end.saturating_sub(e.net.run.warmup).max(1) as f64;
    let links = e.net.directed_links.max(1) as f64;
    let n = (e.net.nodes - e.net.failed_nodes).max(1) as f64;
    let mut vc_traffic = BTreeMap::new();
    let mut hops_total = 0;
    let mut escape_hops = 0;
    for v in 0..lay.vcs {
        vc_traffic.insert(lay.vc_name(v), e.stats.vc_hops[v]);
        hops_total += e.stats.vc_hops[v];
        if v >= lay.esc && v < lay.esc + lay.esc_count {
            escape_hops += e.stats.vc_hops[v];
        }
    }
    let period = e.net.run.sample_cycles.max(1) as f64;
    let fill_denom = (lay.routers * lay.ports) as f64 * e.net.cap as f64;
    let timeseries: Vec<Sample> = e.stats.samples
        .iter()
        .map(|s| Sample {
            cycle: s.cycle,
            accepted_load: s.delivered_bytes as f64 / (n * period * e.net.injection_links),
            link_utilization: s.busy as f64 / (e.net.directed_links.max(1) as f64 * period),
            packets_delivered: s.delivered,
            token_returns: s.tokens,
            unblocking_probability: if s.tokens > 0 { s.unblocks as f64 / s.tokens as f64 } else { 0.0 },
            blocked_token_returns: s.blocked_tokens,
            blocked_unblocking_probability: if s.blocked_tokens > 0 { s.waited_unblocks as f64 / s.blocked_tokens as f64 } else { 0.0 },
            vc_fill: s.fill.iter().map(|&f| f as f64 / fill_denom).collect(),
        })
        .collect();
    let mut vc_occupancy = BTreeMap::new();
    if !timeseries.is_empty() {
        for v in 0..lay.vcs {
            let mean = timeseries.iter().map(|s| s.vc_fill[v]).sum::<f64>() / timeseries.len() as f64;
            vc_occupancy.insert(lay.vc_name(v), mean);
        }
    }
    let mut ports = Vec::new();
    for r in 0..lay.routers {
        for o in 0..lay.ports {
            if e.net.routing.neighbor(r as u32, o as u8).is_some() {
                ports.push(PortRecord {
                    router: r as u32,
                    port: e.net.routing.port_name(o as u8),
                    counters: e.stats.counters[r * lay.ports + o],
                    idle_cycles: (window as u64)
                        .saturating_sub(e.stats.counters[r * lay.ports + o].busy_cycles),
                });
            }
        }
    }
    let traffic = e.workload.report(&RunEnd {
        nodes: e.net.nodes as u64,
        end_cycle: end,
        deposits: e.stats.deposits,
        wire_overhead_bytes: e.net.params.overhead_bytes as u64,
    });
    let counter_samples = counter_samples(&e);
    let link_errors = e.router.outputs.link.as_ref().map(|lp| {
        let me = e.mail.me;
        let mut bad = lp.crc_mismatches(|l| e.mail.owner[l / lay.ports] == me);
        bad.extend_from_slice(&lp.absorbed_mismatches);
        bad.sort_unstable();
        let t = lp.tally;
        LinkErrorReport {
            tally: t,
            retransmitted_fraction: if t.transmissions > 0 { t.retransmissions as f64 / t.transmissions as f64 } else { 0.0 },
            crc_mismatch_links: bad
                .iter()
                .map(|&l| format!("{} {}", e.net.routing.router_label(l / lay.ports as u32), e.net.routing.port_name((l % lay.ports as u32) as u8)))
                .collect(),
            trustworthy: bad.is_empty(),
        }
    });
    let limits = limits(&e, window);
    let offered = e.workload.offered_load();
    let sim_us = t_end as f64 * e.net.cycle_ns / 1000.0;
    // A cycle is one byte-time of a link: bytes per ns are GB/s.
    let injection_gbps = e.net.injection_links / e.net.cycle_ns;
    let accepted = e.stats.delivered_bytes_measured as f64 / (n * window * e.net.injection_links);
    RunResult {
        complete: deadlock.is_none()
            && e.error.is_none()
            && !interrupted
            && budget_exceeded.is_none()
            && (completion.is_some() || !e.workload.is_finite()),
        interrupted,
        budget_exceeded,
        link_utilization: e.stats.busy_measured as f64 / (links * window),
        payload_utilization: e.stats.payload_measured as f64 / (links * window),
        offered_load: offered,
        sending_fraction: e.workload.sending_fraction(),
        accepted_load: accepted,
        injection_GBps_per_node: injection_gbps,
        offered_GBps_per_node: offered
            .map(|o| o * e.workload.sending_fraction().unwrap_or(1.0) * injection_gbps),
        accepted_GBps_per_node: accepted * injection_gbps,
        latency: e.stats.hist.summary(),
        latency_ns: e.stats.hist.summary().scaled(e.net.cycle_ns),
        latency_distribution: e.stats.hist.distribution(60),
        packets_injected: e.stats.created,
        packets_rerouted: e.stats.rerouted,
        packets_lost: e.stats.lost,
        packets_resent: e.stats.resent,
        packets_delivered: e.stats.delivered,
        completion_cycles: completion,
        cycle_ns: e.net.cycle_ns,
        warmup_cycles: e.net.run.warmup,
        measured_cycles: window as u64,
        vc_traffic,
        escape_fraction: if hops_total > 0 {
            escape_hops as f64 / hops_total as f64
        } else {
            0.0
        },
        vc_occupancy,
        unblocking_probability: if e.stats.token_returns > 0 {
            e.stats.unblocks as f64 / e.stats.token_returns as f64
        } else {
            0.0
        },
        jsq: (e.router.jsq.choices > 0).then(|| crate::result::JsqReport {
            choices: e.router.jsq.choices,
            separated_fraction: e.router.jsq.separated as f64 / e.router.jsq.choices as f64,
            candidate_ranges: e.router.jsq.ranges,
        }),
        timeseries,
        ports,
        traffic,
        counter_samples,
        deadlock,
        invariant_error: e.error.clone(),
        link_errors,
        limits,
        sim: SimInfo {
            cycles: t_end,
            events: e.stats.events,
            wall_seconds: wall,
            peak_memory_bytes: peak_memory_bytes(),
            simulated_us_per_wall_second: if wall > 0.0 { sim_us / wall } else { 0.0 },
            packet_hops: e.stats.counters.iter().map(|c| c.packets).sum(),
            partitions,
            estimated_memory_bytes: None,
            estimated_packet_hops: None,
        },
    }
}

/// What limited the run ([`crate::limits`]) from the merged counters.
fn limits<W: Traffic>(e: &Engine<W>, window: f64) -> crate::limits::Limits {
    use crate::limits::{LinkUse, Limits, NodeUse};
    let lay = e.net.lay;
    let routing = &e.net.routing;
    let mut class_names: Vec<String> = Vec::new();
    let mut links = Vec::new();
    for r in 0..lay.routers {
        for o in 0..lay.ports {
            let Some((to, _)) = routing.neighbor(r as u32, o as u8) else { continue };
            let name = routing.link_class(r as u32, o as u8);
            let class = match class_names.iter().position(|c| *c == name) {
                Some(k) => k,
                None => {
                    class_names.push(name);
                    class_names.len() - 1
                }
            };
            let c = e.stats.counters[r * lay.ports + o];
            links.push(LinkUse { router: r as u32, port: o as u8, to_router: to, class: class as u16, busy_cycles: c.busy_cycles, depleted_cycles: c.depleted_cycles });
        }
    }
    let host_limited = e.net.params.host_bytes_per_cycle.is_finite();
    let nodes: Vec<NodeUse> = (0..e.net.nodes)
        .map(|n| NodeUse {
            node: n as u32,
            router: e.net.router_of(n as u32),
            host_busy: host_limited.then(|| e.stats.host_busy_cycles[n]),
            fifo_waited: e.stats.fifo_waited_cycles[n],
        })
        .collect();
    let label = |r: u32, p: Option<u8>| match p {
        Some(p) => format!("{} {}", routing.router_label(r), routing.port_name(p)),
        None => routing.router_label(r),
    };
    Limits::new(&links, &class_names, &nodes, &e.router.inputs.blocked, e.stats.hist.summary().count, window, &label)
}

/// The merged counter samples as columns (see [`CounterSamples`]).
fn counter_samples<W: Traffic>(e: &Engine<W>) -> CounterSamples {
    let lay = e.net.lay;
    let (ports, vcs) = (lay.ports as u32, lay.vcs as u32);
    let warm = e.net.run.warmup;
    let mut c = CounterSamples {
        requested_period_cycles: e.net.run.counter_cycles,
        period_cycles: e.stats.counter_period,
        samples: e.stats.counter_cycles_taken.len() as u64,
        port_names: (0..lay.ports).map(|o| e.net.routing.port_name(o as u8)).collect(),
        vc_names: (0..lay.vcs).map(|v| lay.vc_name(v)).collect(),
        vc_buffer_chunks: e.net.cap as u32,
        ..Default::default()
    };
    let p = &mut c.ports;
    for &(cycle, i, k) in &e.stats.counter_snapshots {
        p.cycle.push(cycle);
        p.router.push(i / ports);
        p.port.push((i % ports) as u8);
        p.bytes.push(k.bytes);
        p.packets.push(k.packets);
        p.busy_cycles.push(k.busy_cycles);
        p.idle_cycles.push(cycle.saturating_sub(warm).saturating_sub(k.busy_cycles));
        p.depleted_cycles.push(k.depleted_cycles);
    }
    let v = &mut c.vcs;
    for s in &e.stats.vc_snapshots {
        let port = s.index / vcs;
        v.cycle.push(s.cycle);
        v.router.push(port / ports);
        v.port.push((port % ports) as u8);
        v.vc.push((s.index % vcs) as u8);
        v.bytes.push(s.counters.bytes);
        v.packets.push(s.counters.packets);
        v.held_chunks.push(s.held_chunks);
    }
    c
}
