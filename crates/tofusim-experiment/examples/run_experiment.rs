//! Runs an experiment file without Python (for profiling):
//! `cargo run --release -p tofusim-experiment --example run_experiment -- FILE`
fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_experiment FILE.toml");
    let text = std::fs::read_to_string(&path).expect("readable file");
    match tofusim_experiment::experiment::run(&path, &text, &mut |_| {}) {
        Ok((_, r)) => println!(
            "{}",
            serde_json::json!({"sim": r.sim, "link_utilization": r.link_utilization, "latency": r.latency, "complete": r.complete})
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
