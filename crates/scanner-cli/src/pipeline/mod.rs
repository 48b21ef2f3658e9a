//! The scan pipeline: sources → one emitter → work-stealing workers → one sink.
//!
//! ```text
//!  caller thread (sources)          executor workers (N)               sink thread
//!  ───────────────────────          ────────────────────               ───────────
//!  Source::emit: walk, listed,       find_task: local deque,
//!   history ── Item + Key ──┐        injector, steal from siblings
//!  Emitter (emit.rs):       ▼                 │
//!   shard, Scope, Budget::acquire             ▼
//!      batch of Task ──spawn_batch──► worker::run ── Msg (one per input) ──► sink: filters ─► Sink
//!                                         │  ▲                                 report counts
//!                         large: Range    │  │ spawn_local(upper half)         progress line
//!                                         └──┘
//!                 Dir, archive members:   │  ▲ WorkerEmitter (emit.rs): scope, skips,
//!                 found by a worker       └──┘ spawn_local or, never blocking, scan here
//! ```
//!
//! | piece | module |
//! | --- | --- |
//! | what is read, and what is out of scope | [`crate::input`] ([`Item`], [`Source`], [`crate::input::Scope`]) |
//! | how every source's items become tasks: shard, scope, budget | `emit` (the one [`crate::input::Emit`]) |
//! | how work a worker finds (directories, archive members) is queued, never blocking | `emit` (`WorkerEmitter`) |
//! | orchestration, the task type, stopping | here |
//! | reading a task (file, bytes, stream) | [`worker`] |
//! | chunked reads and the overlap rule | [`reader`] |
//! | large inputs as stolen ranges, line rebasing | [`split`] |
//! | a tree walked by the workers, a directory per task | [`dirs`] |
//! | filters, report writer, counts | [`sink`] |
//!
//! # Tasks and the budget
//!
//! A [`Task`] is an [`Item`] or a byte range of a split input, or, when the
//! workers walk the tree ([`dirs`]), a directory to list or a run of its
//! files. Each holds a budget [`Permit`]: the source blocks when too many
//! tasks (or bytes held in memory) are in flight, so memory stays flat
//! however large the input (the tasks of a walk share their root's permit:
//! [`dirs`] says what bounds them).
//! File and stream tasks charge no bytes: what they hold is their worker's
//! read buffer, whose number is fixed (one per worker). In-memory items
//! charge their length: that memory is really held.
//!
//! # Where a finding is filtered
//!
//! In order: the engine (allowlists, stopwords, placeholders, inline allow,
//! generic duplicates; counted in its `Suppressed`), then in the sink
//! thread the [`FindingFilter`]s (config per-rule scopes, `--diff` context,
//! baseline), once line numbers are final. Paths out of scope never reach a
//! worker: the walk drops them as it walks, the emitter drops what the other
//! sources list ([`crate::input::Scope`]).
//!
//! With `-v` ([`ScanOptions::list_suppressed`]) the engine keeps what an
//! allow decision (inline allow, allowlist, config) drops, marked
//! `allowed`, and the sink drops it instead: one place, `sink_loop`, then
//! counts and lists every suppressed finding with its path and final line.
//! A history blob that modifies an earlier version of its file is scanned
//! whole, then its worker marks `allowed` (whatever `-v`) the findings
//! outside what changed ([`versions`](crate::input::history::versions)), which the sink counts and lists
//! the same way.
//!
//! # Stopping
//!
//! [`StopHandle::stop`] (Ctrl-C, or the sink when stdout closes) sets a
//! flag that sources check between items ([`crate::input::Emit::stopped`]),
//! closes the [`Budget`] so a source blocked on a permit returns, and shuts
//! the executor down (`Executor::shutdown`: queued tasks are dropped, each
//! worker finishes the task it is running). [`scan`] then returns a report
//! marked `interrupted`.

pub mod dirs;
mod emit;
pub mod reader;
pub mod sink;
pub mod split;
pub mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use scanner_engine::Engine;
use scanner_scheduler::{Budget, ExecutorHandle, Permit};

use crate::filter::FindingFilter;
use crate::input::{walk, Item, Scope, Source};
use crate::output::Sink;
use crate::progress::Progress;
use crate::report::ScanReport;
use sink::{Counts, Msg};
use split::SplitInput;

/// How inputs are read and scanned. Defaults are the production values;
/// tests shrink them with hidden flags (`--chunk-size`, `--split-threshold`,
/// `--split-grain`).
#[derive(Clone)]
pub struct ScanOptions {
    /// Worker threads.
    pub threads: usize,
    pub walk: walk::WalkOptions,
    /// What is out of scope, for every source.
    pub scope: Scope,
    /// Scan inputs with a NUL in the first 8 KiB too.
    pub binary: bool,
    /// Bytes owned by one read chunk. Default 256 KiB.
    pub chunk_size: usize,
    /// Inputs larger than this are split into ranges. Default 8 MiB.
    pub split_threshold: u64,
    /// Ranges are not split below this. Default 2 MiB.
    pub split_grain: u64,
    /// A regular file is read up to the size it had when opened; one that
    /// reports size 0 (procfs and the like) up to this many bytes.
    pub zero_size_limit: u64,
    /// Draw a progress line on stderr.
    pub progress: bool,
    /// Bytes of in-memory items in flight. Default 256 MiB.
    pub memory_budget: u64,
    /// The identity (device, inode) of our stdout when it is a regular
    /// file: `scanner scan . > report.txt` must not scan its own report.
    pub stdout_id: Option<(u64, u64)>,
    /// Open archives (recognised by their first bytes) and scan their
    /// members, within these limits; `None` (`--no-archives`): an archive
    /// is a binary file like any other.
    pub archives: Option<crate::input::archive::Limits>,
    /// `--shard K/N`: only the inputs this shard owns are scanned; the
    /// others are not counted anywhere (`crate::shard`).
    pub shard: Option<crate::shard::Shard>,
    /// `-v`: every suppressed finding is listed on stderr with its reason.
    /// The workers' engine scratch keeps the findings an allow decision
    /// drops (`ScanScratch::keep_allowed`), so that the sink lists them
    /// with their path and final line, as it lists what its filters drop.
    pub list_suppressed: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            threads: 1,
            walk: walk::WalkOptions::default(),
            scope: Scope::default(),
            binary: false,
            chunk_size: 256 << 10,
            split_threshold: 8 << 20,
            split_grain: 2 << 20,
            zero_size_limit: 64 << 20,
            progress: false,
            memory_budget: 256 << 20,
            stdout_id: None,
            archives: Some(crate::input::archive::Limits::default()),
            shard: None,
            list_suppressed: false,
        }
    }
}

/// Task permits: enough to keep every worker's deque fed, few enough that
/// sources cannot run far ahead (items held in memory stay bounded).
const TASKS_PER_WORKER: usize = 256;
/// Bytes of archive members read ahead by the workers walking archives, per
/// worker (`worker::scan_archive`): enough for a batch or two per worker
/// between the walker and the scanners, small enough that a large archive
/// leaves the resident memory flat.
const MEMBER_BYTES_PER_WORKER: u64 = 2 << 20;

/// One piece of work for a worker.
pub enum Task {
    /// An input to read; the worker splits it if it is large.
    Item { item: Item, permit: Permit },
    /// Several small items read together: history blobs, read one after
    /// the other through the worker's blob reader.
    Batch { items: Vec<Item>, permit: Permit },
    /// A directory to list, under a walk split among the workers
    /// ([`dirs`]); its permit is its root's.
    Dir { dir: walk::DirTask, permit: Permit },
    /// Files `start..end` of a directory a `Dir` task listed, scanned
    /// one after the other once halved down to a few.
    Files {
        files: Arc<walk::Files>,
        start: usize,
        end: usize,
        permit: Permit,
    },
    /// Bytes `start..end` of a split input.
    Range {
        input: Arc<SplitInput>,
        start: u64,
        end: u64,
        permit: Permit,
    },
}

/// Stops a running scan from outside (see the module docs). Cheap to clone.
#[derive(Clone, Default)]
pub struct StopHandle {
    inner: Arc<StopInner>,
}

#[derive(Default)]
struct StopInner {
    stopped: AtomicBool,
    parts: Mutex<Option<(Budget, ExecutorHandle<Task>)>>,
}

impl StopHandle {
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        if let Some((budget, exec)) = &*self.inner.parts.lock().unwrap_or_else(|e| e.into_inner()) {
            budget.close();
            exec.shutdown();
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::Relaxed)
    }

    /// Connects the running scan's budget and executor; a stop that came
    /// before them is applied at once.
    fn attach(&self, budget: &Budget, exec: ExecutorHandle<Task>) {
        *self.inner.parts.lock().unwrap_or_else(|e| e.into_inner()) = Some((budget.clone(), exec));
        if self.is_stopped() {
            self.stop();
        }
    }
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`): what the
/// producer costs, whatever else runs on the machine. Zero where the clock
/// is missing.
fn thread_cpu() -> std::time::Duration {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid clock id and a pointer to a live timespec.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    std::time::Duration::ZERO
}

/// Runs a whole scan. Returns the report and the sink, which the caller
/// finishes (`Sink::finish`) once it knows the rules.
///
/// Errors: an unreadable root, a task panic, a report write error other than
/// a closed pipe. Unreadable inputs are not errors here: they are warned
/// about and counted in `ScanReport::errors`.
pub fn scan(
    source: Source,
    engine: Arc<Engine>,
    sink: Sink,
    filters: Vec<Box<dyn FindingFilter>>,
    opts: &ScanOptions,
    stop: &StopHandle,
) -> anyhow::Result<(ScanReport, Sink)> {
    let started = Instant::now();
    source.check(opts.walk.listed_from)?;
    let threads = opts.threads.max(1);
    let (tx, rx) = crossbeam_channel::bounded::<Msg>(1024);
    let progress = opts.progress.then(Progress::new);
    let counts = Arc::new(Counts::default());

    let sink_thread = {
        let counts = Arc::clone(&counts);
        let stop = stop.clone();
        let list = opts.list_suppressed;
        std::thread::Builder::new()
            .name("scanner-sink".into())
            .spawn(move || sink::sink_loop(rx, sink, filters, progress, list, &stop, &counts))?
    };

    let tally = Arc::new(emit::Tally::default());
    let shared = Arc::new(worker::Shared {
        members: Budget::new(0, threads as u64 * MEMBER_BYTES_PER_WORKER),
        overlap: engine.chunk_overlap(),
        engine: Arc::clone(&engine),
        opts: opts.clone(),
        tx: tx.clone(),
        stop: stop.clone(),
        counts: Arc::clone(&counts),
        quiet: Default::default(),
        archive_bytes: Default::default(),
        tally: Arc::clone(&tally),
    });
    source.prepare(threads);
    let executor = worker::executor(threads, &shared);
    drop(shared);
    let handle = executor.handle();
    let budget = Budget::new(threads * TASKS_PER_WORKER, opts.memory_budget.max(1));
    stop.attach(&budget, handle.clone());

    let producer_cpu = thread_cpu();
    let mut emitter = emit::Emitter::new(&budget, &handle, stop, &tx, opts);
    let produced = source.emit(&opts.walk, &opts.scope, &mut emitter);
    let (skips, items) = emitter.finish();
    let mut producer = crate::report::Producer {
        cpu: thread_cpu().saturating_sub(producer_cpu),
        items,
    };
    if produced.is_err() {
        stop.stop();
    }
    let joined = executor.join();
    drop(tx);
    let (report_sink, mut report) = sink_thread
        .join()
        .map_err(|_| anyhow::anyhow!("the report writer panicked"))??;
    let metrics = joined.map_err(|p| anyhow::anyhow!("{p}"))?;
    report.history = produced?;
    report.skips.merge(&skips);
    report.skips.merge(&tally.skips());
    producer.items += tally.items();
    (report.files, report.bytes) = counts.get();
    report.unchanged_bytes = counts.unchanged.load(std::sync::atomic::Ordering::Relaxed);
    report.metrics = metrics;
    report.elapsed = started.elapsed();
    report.producer = producer;
    report.interrupted = stop.is_stopped() && !report.broken_pipe;
    Ok((report, report_sink))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::input::skip::SkipCounts;
    use crate::input::{Content, Provenance};

    fn json_sink() -> Sink {
        let opts = crate::output::SinkOptions {
            format: crate::output::Format::Json,
            show_secrets: false,
            color: false,
        };
        Sink::new(opts, Box::new(Vec::new()))
    }

    /// In-memory items larger in total than the byte budget, in one batch:
    /// the source must spawn its batch before blocking for more permits, or
    /// it waits forever for permits its own unsent batch holds.
    #[test]
    fn items_beyond_the_byte_budget_do_not_deadlock() {
        let engine = Arc::new(Engine::builtin().unwrap());
        let items: Vec<Item> = (0..40)
            .map(|i| Item {
                provenance: Provenance::path(format!("b{i}.txt")),
                content: Content::Bytes(vec![b'x'; 1000]),
            })
            .collect();
        let opts = ScanOptions {
            threads: 2,
            memory_budget: 3000,
            ..ScanOptions::default()
        };
        let (tx, rx) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            let stop = StopHandle::default();
            let r = scan(
                Source::Items {
                    items,
                    skipped: SkipCounts::default(),
                },
                engine,
                json_sink(),
                Vec::new(),
                &opts,
                &stop,
            );
            let _ = tx.send(r.map(|(report, _)| (report.files, report.bytes)));
        });
        let done = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the scan deadlocked");
        assert_eq!(done.unwrap(), (40, 40_000));
    }

    /// A stop before the scan starts: nothing is scanned, the report says
    /// interrupted, and the source does not block on the budget.
    #[test]
    fn a_stopped_scan_scans_nothing_and_says_so() {
        let engine = Arc::new(Engine::builtin().unwrap());
        let items: Vec<Item> = (0..10)
            .map(|i| Item {
                provenance: Provenance::path(format!("b{i}.txt")),
                content: Content::Bytes(vec![b'x'; 10]),
            })
            .collect();
        let stop = StopHandle::default();
        stop.stop();
        let opts = ScanOptions::default();
        let (report, _) = scan(
            Source::Items {
                items,
                skipped: SkipCounts::default(),
            },
            engine,
            json_sink(),
            Vec::new(),
            &opts,
            &stop,
        )
        .unwrap();
        assert!(report.interrupted);
        assert_eq!(report.files, 0);
    }

    /// Archive members held in memory are read like streamed ones: a member
    /// the limits cut off is reported with 0 bytes and what it held, its
    /// last partial chunk included (as when streamed), a NUL makes it
    /// binary; the same counts whatever the thread count.
    #[test]
    fn archive_members_in_memory_are_read_like_streamed_members() {
        let engine = Arc::new(Engine::builtin().unwrap());
        let token = ["gh", "p_", "3AHQXenv4BJRYfpw5CKSZgqx6DLTahry7EMU"].concat();
        let secret = format!("token = \"{token}\"\n");
        let secret2 = secret.replace("3AHQ", "JRYf");
        let filler = "an ordinary line, nothing in it\n".repeat(10_000);
        // Each with bytes of its neighbours around it, as in a batch.
        let member = |name: &str, data: String, cut: bool| {
            let buf = format!("NEIGHBOUR{data}NEIGHBOUR").into_bytes();
            Item {
                provenance: Provenance::path(format!("a.tar!{name}")),
                content: Content::Member {
                    range: 9..buf.len() - 9,
                    data: Arc::new(buf),
                    cut,
                },
            }
        };
        for threads in [1, 3] {
            let items = vec![
                member("ok.txt", secret.clone(), false),
                // Shorter than a chunk: scanned, then the read fails.
                member("cut.txt", secret.clone(), true),
                // The secret is in the first chunk, complete before the cut.
                member("long.txt", format!("{secret2}{filler}"), true),
                member("bin", format!("\0{secret}"), false),
            ];
            let opts = ScanOptions {
                threads,
                chunk_size: 512,
                ..ScanOptions::default()
            };
            let stop = StopHandle::default();
            let source = Source::Items {
                items,
                skipped: SkipCounts::default(),
            };
            let (report, _) = scan(
                source,
                Arc::clone(&engine),
                json_sink(),
                Vec::new(),
                &opts,
                &stop,
            )
            .unwrap();
            assert_eq!(
                (report.files, report.bytes, report.findings),
                (3, secret.len() as u64, 3),
                "{threads} threads"
            );
            assert_eq!(report.skips.get(crate::report::Skip::Binary), 1);
        }
    }

    /// Runs one in-memory input through the whole pipeline and returns the
    /// sorted JSON report.
    fn report(engine: &Arc<Engine>, data: &[u8], opts: &ScanOptions) -> String {
        let out = crate::output::tests::Shared::default();
        let sink = Sink::new(
            crate::output::SinkOptions {
                format: crate::output::Format::Json,
                show_secrets: true,
                color: false,
            },
            Box::new(out.clone()),
        );
        let items = vec![Item {
            provenance: Provenance::path("f.txt"),
            content: Content::Bytes(data.to_vec()),
        }];
        let source = Source::Items {
            items,
            skipped: SkipCounts::default(),
        };
        let stop = StopHandle::default();
        let (_, sink) = scan(source, Arc::clone(engine), sink, Vec::new(), opts, &stop).unwrap();
        sink.finish(engine.rules()).unwrap();
        out.text()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// Splitting an input at any grain, with any chunk size and any
        /// number of workers, reports exactly what one unsplit scan does.
        #[test]
        fn splitting_at_any_grain_changes_no_finding(
            lines in 200usize..3000,
            secrets in proptest::collection::vec((0usize..3000, 0u32..1000), 1..6),
            grain in 64u64..4096,
            chunk in 256usize..8192,
            threads in 1usize..4,
        ) {
            let engine = Arc::new(Engine::builtin().unwrap());
            let mut text = String::new();
            for i in 0..lines {
                if let Some((_, seed)) = secrets.iter().find(|(at, _)| at % lines == i) {
                    let body: String = (0..36)
                        .map(|k| b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz23456789"
                            [((seed * 31 + k * 7 + i as u32) % 55) as usize] as char)
                        .collect();
                    text.push_str(&format!("token = \"{}{}\"\r\n", ["gh", "p_"].concat(), body));
                } else {
                    text.push_str("some ordinary line of text, nothing here\n");
                }
            }
            let whole = ScanOptions { split_threshold: 0, ..ScanOptions::default() };
            let split = ScanOptions {
                threads,
                chunk_size: chunk,
                split_threshold: 2 * grain,
                split_grain: grain,
                ..ScanOptions::default()
            };
            let expected = report(&engine, text.as_bytes(), &whole);
            proptest::prop_assert!(expected.contains("\"line\""), "no finding: {expected}");
            proptest::prop_assert_eq!(report(&engine, text.as_bytes(), &split), expected);
        }
    }
}
