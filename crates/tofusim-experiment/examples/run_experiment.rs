//! Runs an experiment file without Python (for profiling), through the same
//! front door as `tofusim run` (`tofusim_experiment::run_request`):
//! `cargo run --release -p tofusim-experiment --example run_experiment -- FILE [THREADS]`
use tofusim_experiment::run_request::{prepare, RunModel, RunRequest};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run_experiment FILE.toml [THREADS]");
    let threads: i64 = args.next().map_or(1, |t| t.parse().expect("THREADS: a whole number"));
    let text = std::fs::read_to_string(&path).expect("readable file");
    // No time budget: a profiling run is asked for by name.
    let req = RunRequest { text: &text, file: &path, model: RunModel::Packet, threads, across_processes: false, max_memory_bytes: None, max_minutes: None };
    let out = prepare(&req).and_then(|p| p.run(None, false, &mut |_| std::ops::ControlFlow::Continue(())));
    match out {
        Ok(out) => {
            let r = out.expect("one process has the result").json;
            // The speed figures of BENCHMARKS.md, derived from the run's own counters.
            let wall = r["sim"]["wall_seconds"].as_f64().unwrap_or(0.0).max(1e-9);
            let hops = r["sim"]["packet_hops"].as_f64().unwrap_or(0.0);
            let delivered = r["packets_delivered"].as_f64().unwrap_or(0.0);
            println!(
                "{}",
                serde_json::json!({
                    "complete": r["complete"],
                    "link_utilization": r["link_utilization"],
                    "latency": r["latency"],
                    "packets_delivered": r["packets_delivered"],
                    "sim": r["sim"],
                    "packets_delivered_per_second": delivered / wall,
                    "packet_hops_per_second": hops / wall,
                    "ns_per_packet_hop": wall * 1e9 / hops.max(1.0),
                })
            )
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
