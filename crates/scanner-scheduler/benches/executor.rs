//! Executor benchmarks. Two workers throughout (the build machine has two
//! cores). Run:
//!
//! ```text
//! cargo bench -p scanner-scheduler -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! 1. `empty_tasks/*`: spawn + run cost of N empty tasks from one external
//!    producer: this executor vs one shared `crossbeam-channel` queue vs
//!    `rayon::scope` spawns, all with two workers.
//! 2. `split_tree/*`: a binary tree of internal spawns (the splitting path):
//!    `spawn_local` vs `rayon::scope` nested spawns.
//! 3. `seed000/*`: tasks with costs 1 : 1 : 2 : 3.5 dealt to 4 groups (busy
//!    spin, not sleep); stealing vs static partitioning of the same tasks.
//!    Utilization (busy / (workers x wall)) is printed before the timings.
//! 4. `instant_pair`: the per-task timing cost (`Instant::now` twice).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use scanner_scheduler::{Executor, ExecutorConfig, WorkerCtx};
use std::time::{Duration, Instant};

const WORKERS: usize = 2;
const EMPTY_TASKS: usize = 100_000;

fn empty_tasks(c: &mut Criterion) {
    let mut g = c.benchmark_group("empty_tasks");
    g.sample_size(10);
    g.throughput(criterion::Throughput::Elements(EMPTY_TASKS as u64));
    g.bench_function("scheduler", |b| {
        b.iter(|| {
            let ex = Executor::new(
                ExecutorConfig::with_workers(WORKERS),
                |_| (),
                |t: u64, _: &mut WorkerCtx<u64, ()>| {
                    black_box(t);
                },
            );
            let h = ex.handle();
            for i in 0..EMPTY_TASKS as u64 {
                h.spawn(i).unwrap();
            }
            ex.join().unwrap()
        })
    });
    g.bench_function("crossbeam_channel", |b| {
        b.iter(|| {
            let (tx, rx) = crossbeam_channel::unbounded::<u64>();
            let threads: Vec<_> = (0..WORKERS)
                .map(|_| {
                    let rx = rx.clone();
                    std::thread::spawn(move || {
                        for t in rx {
                            black_box(t);
                        }
                    })
                })
                .collect();
            for i in 0..EMPTY_TASKS as u64 {
                tx.send(i).unwrap();
            }
            drop(tx);
            for t in threads {
                t.join().unwrap();
            }
        })
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(WORKERS)
        .build()
        .unwrap();
    g.bench_function("rayon_scope", |b| {
        b.iter(|| {
            // The scope body runs on a pool thread: it is the producer.
            pool.scope(|s| {
                for i in 0..EMPTY_TASKS as u64 {
                    s.spawn(move |_| {
                        black_box(i);
                    });
                }
            })
        })
    });
    g.finish();
}

const TREE_DEPTH: u32 = 16; // 2^17 - 1 tasks

fn split_tree(c: &mut Criterion) {
    let mut g = c.benchmark_group("split_tree");
    g.sample_size(10);
    g.throughput(criterion::Throughput::Elements(
        (1u64 << (TREE_DEPTH + 1)) - 1,
    ));
    g.bench_function("scheduler", |b| {
        b.iter(|| {
            let ex = Executor::new(
                ExecutorConfig::with_workers(WORKERS),
                |_| (),
                |d: u32, ctx: &mut WorkerCtx<u32, ()>| {
                    if d < TREE_DEPTH {
                        ctx.spawn_local(d + 1);
                        ctx.spawn_local(d + 1);
                    }
                },
            );
            ex.handle().spawn(0).unwrap();
            ex.join().unwrap()
        })
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(WORKERS)
        .build()
        .unwrap();
    fn node<'s>(s: &rayon::Scope<'s>, d: u32) {
        if d < TREE_DEPTH {
            s.spawn(move |s| node(s, d + 1));
            s.spawn(move |s| node(s, d + 1));
        }
    }
    g.bench_function("rayon_scope", |b| b.iter(|| pool.scope(|s| node(s, 0))));
    g.finish();
}

/// Seed 000: four groups whose costs are in the ratio 1 : 1 : 2 : 3.5, each
/// made of equal tasks of `UNIT` busy time.
const UNIT: Duration = Duration::from_micros(250);
const GROUP_TASKS: [usize; 4] = [20, 20, 40, 70];

fn spin(d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// A group's tasks as a range; the runner splits it (seed 002) so idle
/// workers can steal halves.
#[derive(Clone, Copy, Debug)]
struct Group {
    lo: usize,
    hi: usize,
}

/// Stealing: the four groups are spawned as four range tasks; returns
/// (wall, utilization).
fn seed000_stealing() -> (Duration, f64) {
    let ex = Executor::new(
        ExecutorConfig::with_workers(WORKERS),
        |_| (),
        |g: Group, ctx: &mut WorkerCtx<Group, ()>| {
            let mut hi = g.hi;
            while hi - g.lo > 1 {
                let mid = g.lo + (hi - g.lo) / 2;
                ctx.spawn_local(Group { lo: mid, hi });
                hi = mid;
            }
            spin(UNIT);
        },
    );
    let h = ex.handle();
    for n in GROUP_TASKS {
        h.spawn(Group { lo: 0, hi: n }).unwrap();
    }
    let m = ex.join().unwrap();
    (m.wall, m.utilization())
}

/// Static partitioning: group g belongs to worker g % WORKERS, no stealing.
fn seed000_static() -> (Duration, f64) {
    let start = Instant::now();
    let threads: Vec<_> = (0..WORKERS)
        .map(|w| {
            std::thread::spawn(move || {
                let mut busy = Duration::ZERO;
                for (g, &n) in GROUP_TASKS.iter().enumerate() {
                    if g % WORKERS == w {
                        for _ in 0..n {
                            let t = Instant::now();
                            spin(UNIT);
                            busy += t.elapsed();
                        }
                    }
                }
                busy
            })
        })
        .collect();
    let busy: Duration = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let wall = start.elapsed();
    (
        wall,
        busy.as_secs_f64() / (wall.as_secs_f64() * WORKERS as f64),
    )
}

fn seed000(c: &mut Criterion) {
    // Utilization is not a time, so it is measured here and printed; the
    // criterion timings below give the wall-time ratio.
    let runs = 30;
    let report = |name: &str, f: fn() -> (Duration, f64)| {
        let mut utils: Vec<f64> = (0..runs).map(|_| f().1).collect();
        utils.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mean = utils.iter().sum::<f64>() / runs as f64;
        eprintln!(
            "seed000/{name}: utilization mean {mean:.3}, median {:.3}, min {:.3} ({runs} runs, {WORKERS} workers)",
            utils[runs / 2],
            utils[0]
        );
    };
    report("stealing", seed000_stealing);
    report("static", seed000_static);
    let mut g = c.benchmark_group("seed000");
    g.sample_size(10);
    g.bench_function("stealing", |b| b.iter(seed000_stealing));
    g.bench_function("static", |b| b.iter(seed000_static));
    g.finish();
}

fn instant_pair(c: &mut Criterion) {
    let mut g = c.benchmark_group("instant_pair");
    g.sample_size(10);
    g.bench_function("now_elapsed", |b| {
        b.iter(|| {
            let t = Instant::now();
            black_box(t.elapsed())
        })
    });
    g.finish();
}

criterion_group!(benches, empty_tasks, split_tree, seed000, instant_pair);
criterion_main!(benches);
