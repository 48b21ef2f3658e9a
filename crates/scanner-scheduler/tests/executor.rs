//! Executor behaviour under load. Every test counts: each task id must run
//! exactly once, counts and messages are asserted exactly, and anything that
//! could hang runs under a watchdog so a bug fails the test instead of CI.

use scanner_scheduler::{Budget, Executor, ExecutorConfig, Permit, WorkerCtx};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Runs `f` on its own thread; fails the test if it takes longer than
/// `secs` (a hang becomes a failure, the stuck thread is left behind).
fn within<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("watchdog: did not finish within {secs} s (hang?)"),
    }
}

fn counters(n: usize) -> Arc<Vec<AtomicU32>> {
    Arc::new((0..n).map(|_| AtomicU32::new(0)).collect())
}

fn assert_each_once(c: &[AtomicU32]) {
    for (i, x) in c.iter().enumerate() {
        assert_eq!(
            x.load(Ordering::Relaxed),
            1,
            "task {i} ran a wrong number of times"
        );
    }
}

fn tiny_tasks(workers: usize, n: usize) {
    within(60, move || {
        let seen = counters(n);
        let s = seen.clone();
        let ex = Executor::new(
            ExecutorConfig::with_workers(workers),
            |_| (),
            move |id: usize, _ctx: &mut WorkerCtx<usize, ()>| {
                s[id].fetch_add(1, Ordering::Relaxed);
            },
        );
        let h = ex.handle();
        // Half one by one, half in batches: both external paths.
        for id in 0..n / 2 {
            h.spawn(id).unwrap();
        }
        let rest: Vec<usize> = (n / 2..n).collect();
        for chunk in rest.chunks(1000) {
            h.spawn_batch(chunk.to_vec()).unwrap();
        }
        let m = ex.join().unwrap();
        assert_each_once(&seen);
        assert_eq!(m.workers.len(), workers);
        assert_eq!(m.total().tasks(), n as u64);
        assert_eq!(m.total().tasks_dropped, 0);
        assert!(!h.is_accepting());
        assert_eq!(h.spawn(0), Err(0), "spawn after join must be refused");
    })
}

#[test]
fn stress_100k_tiny_tasks_1_worker() {
    tiny_tasks(1, 100_000);
}
/// The full million at the machine's core count; ~0.4 s in debug. All
/// four worker counts at a million: `stress_million_tiny_tasks` (ignored).
#[test]
fn stress_million_tiny_tasks_2_workers() {
    tiny_tasks(2, 1_000_000);
}
#[test]
fn stress_100k_tiny_tasks_4_workers() {
    tiny_tasks(4, 100_000);
}
#[test]
fn stress_100k_tiny_tasks_16_workers() {
    tiny_tasks(16, 100_000);
}
#[test]
#[ignore = "a million tasks per worker count; run with --ignored (release)"]
fn stress_million_tiny_tasks() {
    for w in [1, 2, 4, 16] {
        tiny_tasks(w, 1_000_000);
    }
}

/// A node of a spawn tree: binary down to `fan_depth`, a chain below, so
/// depth 20 stays small (2^12 leaves x 9 chain links) yet deep.
#[derive(Clone, Copy, Debug)]
struct Node {
    depth: u32,
}

fn spawn_tree(workers: usize, max_depth: u32, fan_depth: u32) {
    within(60, move || {
        let per_depth: Arc<Vec<AtomicU64>> =
            Arc::new((0..=max_depth).map(|_| AtomicU64::new(0)).collect());
        let pd = per_depth.clone();
        let ex = Executor::new(
            ExecutorConfig::with_workers(workers),
            |_| (),
            move |n: Node, ctx: &mut WorkerCtx<Node, ()>| {
                pd[n.depth as usize].fetch_add(1, Ordering::Relaxed);
                if n.depth == max_depth {
                    return;
                }
                let child = Node { depth: n.depth + 1 };
                ctx.spawn_local(child);
                if n.depth < fan_depth {
                    // The second child goes global on odd depths: both
                    // internal spawn paths keep the run alive.
                    if n.depth % 2 == 1 {
                        ctx.spawn_global(child);
                    } else {
                        ctx.spawn_local(child);
                    }
                }
            },
        );
        ex.handle().spawn(Node { depth: 0 }).unwrap();
        let m = ex.join().unwrap();
        let mut total = 0;
        for d in 0..=max_depth {
            let want = 1u64 << d.min(fan_depth);
            assert_eq!(
                per_depth[d as usize].load(Ordering::Relaxed),
                want,
                "depth {d}"
            );
            total += want;
        }
        assert_eq!(m.total().tasks(), total);
    })
}

#[test]
fn recursive_spawn_tree_depth_20() {
    for w in [1, 2, 4, 16] {
        spawn_tree(w, 20, 12);
    }
}

#[test]
#[ignore = "full binary tree of depth 20 (2M tasks); run with --ignored (release)"]
fn recursive_full_binary_tree_depth_20() {
    for w in [1, 2, 4, 16] {
        spawn_tree(w, 20, 20);
    }
}

/// Seed 002's model: a task owns a range of indices; while it is larger
/// than the grain it pushes its upper half onto its own deque (thieves take
/// the oldest, largest halves first) and keeps the lower half.
#[derive(Clone, Copy, Debug)]
struct Range {
    lo: usize,
    hi: usize,
}

const GRAIN: usize = 64;

fn pieces(lo: usize, hi: usize) -> u64 {
    // Mirror of the runner's splitting: deterministic whatever the schedule.
    if hi - lo <= GRAIN {
        1
    } else {
        let mid = lo + (hi - lo) / 2;
        pieces(mid, hi) + pieces(lo, mid)
    }
}

fn split_range(lo: usize, hi: usize, ctx: &WorkerCtx<Range, ()>) -> (usize, usize) {
    let mut hi = hi;
    while hi - lo > GRAIN {
        let mid = lo + (hi - lo) / 2;
        ctx.spawn_local(Range { lo: mid, hi });
        hi = mid;
    }
    (lo, hi)
}

#[test]
fn range_splitting_processes_every_index_once() {
    const N: usize = 200_000;
    for w in [1, 2, 4, 16] {
        within(60, move || {
            let seen = counters(N);
            let s = seen.clone();
            let ex = Executor::new(
                ExecutorConfig::with_workers(w),
                |_| (),
                move |r: Range, ctx: &mut WorkerCtx<Range, ()>| {
                    let (lo, hi) = split_range(r.lo, r.hi, ctx);
                    for c in &s[lo..hi] {
                        c.fetch_add(1, Ordering::Relaxed);
                    }
                },
            );
            // Two "files" of uneven size, as the walker would send them.
            ex.handle().spawn(Range { lo: 0, hi: 150_000 }).unwrap();
            ex.handle().spawn(Range { lo: 150_000, hi: N }).unwrap();
            let m = ex.join().unwrap();
            assert_each_once(&seen);
            assert_eq!(
                m.total().tasks(),
                pieces(0, 150_000) + pieces(150_000, N),
                "{w} workers"
            );
        });
    }
}

/// Parallel equals serial: per-index results of a deterministic but uneven
/// workload (Collatz step counts) are the same with 1 and with N workers,
/// and equal to a plain loop.
#[test]
fn parallel_equals_serial() {
    const N: usize = 30_000;
    fn collatz(mut x: u64) -> u32 {
        let mut steps = 0;
        while x > 1 {
            x = if x.is_multiple_of(2) {
                x / 2
            } else {
                3 * x + 1
            };
            steps += 1;
        }
        steps
    }
    let run = |w: usize| -> Vec<u32> {
        within(60, move || {
            let out = counters(N);
            let o = out.clone();
            let ex = Executor::new(
                ExecutorConfig::with_workers(w),
                |_| (),
                move |r: Range, ctx: &mut WorkerCtx<Range, ()>| {
                    let (lo, hi) = split_range(r.lo, r.hi, ctx);
                    for i in lo..hi {
                        o[i].fetch_add(collatz(i as u64 + 1) + 1, Ordering::Relaxed);
                    }
                },
            );
            ex.handle().spawn(Range { lo: 0, hi: N }).unwrap();
            ex.join().unwrap();
            out.iter().map(|c| c.load(Ordering::Relaxed)).collect()
        })
    };
    let serial: Vec<u32> = (0..N).map(|i| collatz(i as u64 + 1) + 1).collect();
    assert_eq!(run(1), serial);
    assert_eq!(run(4), serial);
    assert_eq!(run(16), serial);
}

/// A task type whose drops are counted: every task must be dropped exactly
/// once, whether it ran or was discarded by a shutdown.
struct Counted {
    id: usize,
    drops: Arc<AtomicUsize>,
}
impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn panicking_task_is_returned_and_nothing_runs_twice() {
    within(30, || {
        const N: usize = 2_000;
        let seen = counters(N);
        let drops = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let ex = Executor::new(
            ExecutorConfig::with_workers(4),
            |_| (),
            move |t: Counted, _ctx: &mut WorkerCtx<Counted, ()>| {
                s[t.id].fetch_add(1, Ordering::Relaxed);
                if t.id == 700 {
                    panic!("boom at {}", t.id);
                }
            },
        );
        let h = ex.handle();
        let mut refused = 0;
        for id in 0..N {
            let t = Counted {
                id,
                drops: drops.clone(),
            };
            if h.spawn(t).is_err() {
                refused += 1; // the pool cancels after the panic
            }
        }
        let err = ex.join().unwrap_err();
        assert_eq!(err.message, "boom at 700");
        assert_eq!(err.to_string(), "a task panicked: boom at 700");
        assert_eq!(seen[700].load(Ordering::Relaxed), 1);
        assert!(
            seen.iter().all(|c| c.load(Ordering::Relaxed) <= 1),
            "a task ran twice"
        );
        assert_eq!(
            drops.load(Ordering::Relaxed),
            N,
            "every task dropped exactly once (refused ones by us)"
        );
        let ran: u32 = seen.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        assert!(ran as usize + refused <= N);
        assert!(!h.is_accepting(), "a panic cancels the pool");
        assert!(err.payload.downcast_ref::<String>().is_some());
    })
}

#[test]
fn scratch_init_panic_is_reported_not_hung() {
    within(30, || {
        let ex = Executor::new(
            ExecutorConfig::with_workers(2),
            |id| {
                if id == 1 {
                    panic!("no scratch for worker 1");
                }
            },
            |_t: u32, _ctx: &mut WorkerCtx<u32, ()>| {},
        );
        let _ = ex.handle().spawn(1);
        let err = ex.join().unwrap_err();
        assert_eq!(err.message, "no scratch for worker 1");
    })
}

#[test]
fn shutdown_with_queued_work_returns_promptly() {
    within(30, || {
        const N: usize = 20_000;
        let drops = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let ex = Executor::new(
            ExecutorConfig::with_workers(2),
            |_| (),
            move |t: Counted, ctx: &mut WorkerCtx<Counted, ()>| {
                r.fetch_add(1, Ordering::Relaxed);
                // Split work keeps arriving on the local deque too.
                if t.id.is_multiple_of(2) {
                    ctx.spawn_local(Counted {
                        id: 1,
                        drops: t.drops.clone(),
                    });
                }
                std::thread::sleep(Duration::from_millis(1));
            },
        );
        let h = ex.handle();
        let tasks: Vec<Counted> = (0..N)
            .map(|id| Counted {
                id,
                drops: drops.clone(),
            })
            .collect();
        h.spawn_batch(tasks).map_err(|_| "refused").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        ex.shutdown();
        assert!(h
            .spawn(Counted {
                id: 0,
                drops: drops.clone()
            })
            .is_err());
        let t = Instant::now();
        let m = ex.join().unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "join after shutdown took {:?}",
            t.elapsed()
        );
        let ran = ran.load(Ordering::Relaxed) as u64;
        let total = m.total();
        assert_eq!(total.tasks(), ran);
        assert!(
            ran < N as u64 / 2,
            "shutdown did not stop the pool ({ran} ran)"
        );
        // Every task created (N, the children, the refused one) was dropped
        // exactly once: ran ones after running, the rest unrun.
        let created = drops.load(Ordering::Relaxed) as u64;
        assert_eq!(total.tasks() + total.tasks_dropped + 1, created);
        assert_eq!(h.in_flight(), 0, "count consistent after the drains");
    })
}

/// Lost wake-up detector: workers park at once (no spin, no yield) and the
/// park timeout is 60 s, so only an explicit unpark can wake them. Each
/// round spawns one task and spin-waits for it; the next spawn follows after
/// a delay swept from 0 to a few microseconds, so it lands at every point of
/// the worker's way from "task done" to "parked". A lost wake-up leaves the
/// task queued for 60 s and the 10 s deadline below fails. With real timing
/// the window is a few nanoseconds wide: deleting the re-check after
/// `announce` made this fail only after ~286k rounds (release). The unit test
/// `executor::tests::no_lost_wakeup_with_widened_window` holds the window
/// open and fails within a few thousand rounds; this one checks the whole
/// path, including the internal `spawn_global` wake.
fn lost_wakeup_rounds(workers: usize, rounds: u32) {
    within(120, move || {
        let finished = Arc::new(AtomicU32::new(0));
        let f = finished.clone();
        let cfg = ExecutorConfig::with_workers(workers)
            .spin_iters(0)
            .yield_iters(0)
            .park_timeout(Duration::from_secs(60));
        let ex = Executor::new(
            cfg,
            |_| (),
            move |i: u32, ctx: &mut WorkerCtx<u32, ()>| {
                if i % 4 == 3 && i < 1 << 30 {
                    // Every fourth round hops through the injector from inside
                    // the pool: the internal wake path.
                    ctx.spawn_global(i | 1 << 30);
                } else {
                    f.store(i & !(1 << 30), Ordering::Release);
                }
            },
        );
        let h = ex.handle();
        for round in 1..=rounds {
            h.spawn(round).unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut spins = 0u32;
            while finished.load(Ordering::Acquire) != round {
                std::hint::spin_loop();
                spins += 1;
                if spins.is_multiple_of(1024) {
                    std::thread::yield_now();
                    assert!(
                        Instant::now() < deadline,
                        "lost wake-up: round {round} never ran ({workers} workers)"
                    );
                }
            }
            for _ in 0..(round * 7) % 500 {
                std::hint::spin_loop();
            }
        }
        let m = ex.join().unwrap();
        assert_eq!(m.total().tasks(), (rounds + rounds / 4) as u64);
    });
}

#[test]
fn no_lost_wakeup_1_worker() {
    lost_wakeup_rounds(1, 20_000);
}

#[test]
fn no_lost_wakeup_2_workers() {
    lost_wakeup_rounds(2, 20_000);
}

#[test]
fn budget_is_never_exceeded() {
    within(60, || {
        const MAX_TASKS: usize = 6;
        const MAX_BYTES: u64 = 1_000;
        #[derive(Clone)]
        struct Job {
            bytes: u64,
            split: bool,
            _permit: Permit,
        }
        let budget = Budget::new(MAX_TASKS, MAX_BYTES);
        let live = Arc::new(AtomicUsize::new(0));
        let live_bytes = Arc::new(AtomicU64::new(0));
        let worst = Arc::new(AtomicUsize::new(0));
        let (l, lb, wst) = (live.clone(), live_bytes.clone(), worst.clone());
        let ex = Executor::new(
            ExecutorConfig::with_workers(4),
            |_| (),
            move |j: Job, ctx: &mut WorkerCtx<Job, ()>| {
                // Live tasks hold live permits, so the budget bounds them.
                let now = l.fetch_add(1, Ordering::SeqCst) + 1;
                wst.fetch_max(now, Ordering::SeqCst);
                assert!(now <= MAX_TASKS, "{now} tasks running");
                if j.split {
                    // The piece shares the parent's permit: no new bytes.
                    ctx.spawn_local(Job {
                        split: false,
                        ..j.clone()
                    });
                } else {
                    let b = lb.fetch_add(j.bytes, Ordering::SeqCst) + j.bytes;
                    assert!(b <= MAX_BYTES, "{b} bytes running");
                    std::thread::sleep(Duration::from_micros(200));
                    lb.fetch_sub(j.bytes, Ordering::SeqCst);
                }
                l.fetch_sub(1, Ordering::SeqCst);
            },
        );
        let h = ex.handle();
        for i in 0..600u64 {
            let bytes = if i == 10 { 50_000 } else { (i * 37) % 400 };
            let permit = budget.acquire(bytes);
            let (t, b) = budget.in_flight();
            assert!(
                t <= MAX_TASKS && b <= MAX_BYTES,
                "budget out: {t} tasks {b} bytes"
            );
            h.spawn(Job {
                bytes: permit.bytes(),
                split: i % 3 == 0,
                _permit: permit,
            })
            .map_err(|_| "refused")
            .unwrap();
        }
        ex.join().unwrap();
        assert_eq!(budget.in_flight(), (0, 0), "all permits returned");
        let (pt, pb) = budget.peak();
        assert_eq!(pt, MAX_TASKS, "the producer should have filled the budget");
        assert!(pb <= MAX_BYTES);
        assert!(worst.load(Ordering::SeqCst) >= 2, "tasks never overlapped");
    })
}

#[test]
fn budget_close_unblocks_producer_after_shutdown() {
    within(30, || {
        let budget = Budget::new(2, 0);
        let ex = Executor::new(
            ExecutorConfig::with_workers(1),
            |_| (),
            |_p: Permit, _ctx: &mut WorkerCtx<Permit, ()>| {
                std::thread::sleep(Duration::from_millis(500));
            },
        );
        let h = ex.handle();
        let b = budget.clone();
        let producer = std::thread::spawn(move || {
            let mut sent = 0;
            while let Some(p) = b.acquire_open(1) {
                if h.spawn(p).is_err() {
                    break;
                }
                sent += 1;
            }
            sent
        });
        std::thread::sleep(Duration::from_millis(50));
        ex.shutdown();
        budget.close();
        let t = Instant::now();
        let sent = producer.join().unwrap();
        assert!(sent >= 2);
        ex.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(2));
        assert_eq!(
            budget.in_flight(),
            (0, 0),
            "dropped tasks returned their permits"
        );
    })
}

#[test]
fn scratch_is_built_on_the_worker_thread_and_reused() {
    within(30, || {
        let ex = Executor::new(
            ExecutorConfig::with_workers(3).pin_threads(true),
            |id| {
                let name = std::thread::current().name().unwrap().to_string();
                assert_eq!(name, format!("scanner-worker-{id}"));
                (id, 0u64)
            },
            |_t: u8, ctx: &mut WorkerCtx<u8, (usize, u64)>| {
                let id = ctx.worker_id();
                let (s, _spawner) = ctx.split();
                assert_eq!(s.0, id);
                s.1 += 1;
            },
        );
        let h = ex.handle();
        for _ in 0..1000 {
            h.spawn(0).unwrap();
        }
        let m = ex.join().unwrap();
        assert_eq!(m.total().tasks(), 1000);
        assert!(m.utilization() >= 0.0 && m.utilization() <= 1.0);
    })
}

#[test]
fn join_without_work_and_zero_workers() {
    within(10, || {
        let ex = Executor::new(
            ExecutorConfig::with_workers(0),
            |_| (),
            |_t: (), _c: &mut WorkerCtx<(), ()>| {},
        );
        let m = ex.join().unwrap();
        assert_eq!(m.workers.len(), 1);
        assert_eq!(m.total().tasks(), 0);
        // Dropped without join: cancels and joins, no hang.
        let ex = Executor::new(
            ExecutorConfig::with_workers(2),
            |_| (),
            |_t: (), _c: &mut WorkerCtx<(), ()>| {},
        );
        ex.handle().spawn(()).unwrap();
        drop(ex);
    })
}

/// Wake-on-hoard: one task spawns many local tasks while the sibling is
/// parked with a 60 s timeout. With `wake_on_hoard` the sibling is woken (at
/// the first spawn into the empty deque) and steals; with it off, nothing
/// wakes the sibling until the run ends.
#[test]
fn wake_on_hoard_brings_a_sleeping_sibling() {
    fn run(hoard: u32) -> Vec<u64> {
        within(60, move || {
            let cfg = ExecutorConfig::with_workers(2)
                .spin_iters(0)
                .yield_iters(0)
                .park_timeout(Duration::from_secs(60))
                .wake_on_hoard(hoard);
            let ex = Executor::new(
                cfg,
                |_| (),
                |t: u32, ctx: &mut WorkerCtx<u32, ()>| {
                    if t == 0 {
                        // The worker that took this task was woken as the
                        // searcher, and found it as the last one: it woke
                        // the sibling to search on. Let that search end
                        // (nothing to find) and the sibling sleep again.
                        std::thread::sleep(Duration::from_millis(50));
                        for _ in 0..2_000 {
                            ctx.spawn_local(1);
                        }
                    } else {
                        let end = Instant::now() + Duration::from_micros(5);
                        while Instant::now() < end {
                            std::hint::spin_loop();
                        }
                    }
                },
            );
            std::thread::sleep(Duration::from_millis(100)); // both park
            ex.handle().spawn(0).unwrap();
            let m = ex.join().unwrap();
            assert_eq!(m.total().tasks(), 2_001);
            m.workers.iter().map(|w| w.tasks()).collect()
        })
    }
    let on = run(32);
    assert!(
        on.iter().all(|&n| n > 0),
        "hoard wake on: both workers ran tasks {on:?}"
    );
    let off = run(0);
    assert!(
        off.contains(&0),
        "hoard wake off: the sibling should sleep through {off:?}"
    );
}
