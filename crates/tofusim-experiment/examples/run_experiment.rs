//! Runs an experiment file without Python (for profiling):
//! `cargo run --release -p tofusim-experiment --example run_experiment -- FILE [THREADS]`
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run_experiment FILE.toml [THREADS]");
    let threads: usize = args.next().map_or(1, |t| t.parse().expect("THREADS: a whole number"));
    let text = std::fs::read_to_string(&path).expect("readable file");
    let split = tofusim_packet::Split::threads(threads);
    match tofusim_experiment::experiment::run_split(&path, &text, split, &mut |_| std::ops::ControlFlow::Continue(())) {
        Ok((_, r)) => {
            let r = r.expect("one process has the result");
            // The speed figures of BENCHMARKS.md, derived from the run's own counters.
            let wall = r.sim.wall_seconds.max(1e-9);
            println!(
                "{}",
                serde_json::json!({
                    "complete": r.complete,
                    "link_utilization": r.link_utilization,
                    "latency": r.latency,
                    "packets_delivered": r.packets_delivered,
                    "sim": r.sim,
                    "packets_delivered_per_second": r.packets_delivered as f64 / wall,
                    "packet_hops_per_second": r.sim.packet_hops as f64 / wall,
                    "ns_per_packet_hop": wall * 1e9 / (r.sim.packet_hops.max(1) as f64),
                })
            )
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
