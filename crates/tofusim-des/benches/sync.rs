//! The cost of meeting at a window boundary: partitions on 2 threads
//! exchanging nothing but their reports, and with a few kilobytes of mail
//! each way — the fixed overhead a window adds to a split run.

use criterion::{criterion_group, criterion_main, Criterion};
use tofusim_des::sync::{Serial, ThreadGroup, WindowSync};

/// `windows` exchanges on every partition of a 2-thread group; the time of
/// the whole batch is measured on partition 0's thread.
fn meet(windows: u64, mail_bytes: usize) {
    let g = ThreadGroup::new(2, None);
    std::thread::scope(|s| {
        let mut h1 = g.handle(1);
        s.spawn(move || run(&mut h1, windows, mail_bytes));
        run(&mut g.handle(0), windows, mail_bytes);
    });
}

fn run(sync: &mut dyn WindowSync, windows: u64, mail_bytes: usize) {
    let n = sync.partitions();
    let mut out = vec![Vec::new(); n];
    let mut inbox = vec![Vec::new(); n];
    let mut reports = vec![Vec::new(); n];
    let report = [0u8; 120];
    for _ in 0..windows {
        for (p, o) in out.iter_mut().enumerate() {
            if p != sync.index() {
                o.resize(mail_bytes, 7);
            }
        }
        sync.exchange(&mut out, &report, &mut inbox, &mut reports);
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("window");
    const WINDOWS: u64 = 1000;
    g.bench_function("serial-1000-windows", |b| b.iter(|| run(&mut Serial, WINDOWS, 0)));
    g.bench_function("2-threads-1000-windows-reports-only", |b| b.iter(|| meet(WINDOWS, 0)));
    g.bench_function("2-threads-1000-windows-4KiB-mail", |b| b.iter(|| meet(WINDOWS, 4096)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
