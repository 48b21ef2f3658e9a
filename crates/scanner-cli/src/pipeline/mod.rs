//! The scan pipeline: sources → budget → work-stealing workers → one sink.
//!
//! ```text
//!  caller thread (sources)          executor workers (N)               sink thread
//!  ───────────────────────          ────────────────────               ───────────
//!  Source::Paths (walk) ─ Item ─┐    find_task: local deque,
//!  Source::Items ───────────────┤    injector, steal from siblings
//!          Scope (one filter)   ▼            │
//!      Budget::acquire (permit)              ▼
//!      batch of Task ──spawn_batch──► worker::run ── Msg (one per input) ──► sink: filters ─► Sink
//!                                         │  ▲                                 report counts
//!                         large: Range    │  │ spawn_local(upper half)         progress line
//!                                         └──┘
//! ```
//!
//! | piece | module |
//! | --- | --- |
//! | what is read, and what is out of scope | [`crate::input`] ([`Item`], [`Source`], [`crate::input::Scope`]) |
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
//! worker: the [`crate::input::Scope`] drops them at the source.
//!
//! With `-v` ([`ScanOptions::list_suppressed`]) the engine keeps what an
//! allow decision (inline allow, allowlist, config) drops, marked
//! `allowed`, and the sink drops it instead: one place, `sink_loop`, then
//! counts and lists every suppressed finding with its path and final line.
//! A history blob that modifies an earlier version of its file is scanned
//! whole, then its worker marks `allowed` (whatever `-v`) the findings
//! outside what changed ([`versions`]), which the sink counts and lists
//! the same way.
//!
//! # Stopping
//!
//! [`StopHandle::stop`] (Ctrl-C, or the sink when stdout closes) sets a
//! flag that sources check between items, closes the [`Budget`] so a
//! source blocked on a permit returns, and shuts the executor down
//! (`Executor::shutdown`: queued tasks are dropped, each worker finishes the
//! task it is running). [`scan`] then returns a report marked `interrupted`.

pub mod dirs;
pub mod reader;
pub mod sink;
pub mod split;
pub mod versions;
pub mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use scanner_engine::Engine;
use scanner_scheduler::{Budget, ExecutorHandle, Permit, PermitWatch};

use crate::filter::FindingFilter;
use crate::input::{walk, Item, Scope, Source};
use crate::messages::escape_path;
use crate::output::Sink;
use crate::progress::Progress;
use crate::report::{ScanReport, SkipCounts};
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

/// Tasks handed to the injector at once: fewer wakeups and CASes than one by
/// one, small enough that workers start at once.
const BATCH: usize = 16;
/// History blobs per [`Task::Batch`], and the bytes after which a batch is
/// closed early: few enough tasks that queueing costs nothing per blob,
/// small enough that both workers get batches.
const BLOB_BATCH: usize = 64;
const BLOB_BATCH_BYTES: u64 = 4 << 20;
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

/// Turns items into batches of tasks under the budget.
struct Feeder<'a> {
    budget: &'a Budget,
    exec: &'a ExecutorHandle<Task>,
    stop: &'a StopHandle,
    batch: Vec<Task>,
    /// Items queued (`--stats-json`'s `producer.items`).
    items: u64,
}

impl Feeder<'_> {
    /// Queues `item`; false once the scan is stopping.
    fn push(&mut self, item: Item) -> bool {
        self.items += 1;
        let bytes = item.held_bytes();
        self.queue(bytes, |permit| Task::Item { item, permit })
    }

    /// Queues `items` as one task, charged their bytes together, and sends
    /// it to the workers at once. `None` once the scan is stopping, else a
    /// watch that tells when the task is done.
    fn send_batch(&mut self, items: Vec<Item>) -> Option<PermitWatch> {
        self.items += items.len() as u64;
        let bytes = items.iter().map(Item::held_bytes).sum();
        let mut watch = None;
        let going = self.queue(bytes, |permit| {
            watch = Some(permit.watch());
            Task::Batch { items, permit }
        });
        self.flush();
        watch.filter(|_| going)
    }

    /// Takes a permit for `bytes` and queues the task made with it.
    fn queue(&mut self, bytes: u64, task: impl FnOnce(Permit) -> Task) -> bool {
        if self.stop.is_stopped() {
            return false;
        }
        // The unsent batch holds permits: when the budget is full, spawn it
        // before blocking, or the source could wait for permits only its own
        // batch holds (a few large blobs against the byte limit). It also
        // gets the batch to idle workers at once.
        let permit = match self.budget.try_acquire(bytes) {
            Some(p) => p,
            None => {
                self.flush();
                match self.budget.acquire_open(bytes) {
                    Some(p) => p,
                    None => return false,
                }
            }
        };
        self.batch.push(task(permit));
        if self.batch.len() >= BATCH {
            self.flush();
        }
        !self.stop.is_stopped()
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if self
            .exec
            // A full-size batch at once: `take` left an empty Vec that grew
            // by doubling, three reallocations per batch on the producer.
            .spawn_batch(std::mem::replace(
                &mut self.batch,
                Vec::with_capacity(BATCH),
            ))
            .is_err()
        {
            self.stop.stop();
        }
    }
}

/// History blobs into [`Task::Batch`]es, grouped so that each worker reads
/// the objects of a delta chain, and the versions of a file, in order.
///
/// Reading a blob is cheap when its worker has just read one its delta
/// chain passes through: the chain ends in its reader's caches. And the
/// scan of a file's previous version tells whether the next may skip the
/// search for long-window keywords (`versions::Quiet`). In the walk's
/// order, consecutive versions of a file sit in consecutive batches, which
/// two workers take at once: on ripgrep's history a third of the later
/// versions found their base not scanned yet (5% with one worker), and two
/// workers executed 2.60 G instructions where one executed 2.43 G
/// (callgrind): each rebuilt chains the other had rebuilt already.
///
/// So with several workers each blob goes to one of [`GROUPS_PER_WORKER`]
/// groups per worker by where its delta chain starts
/// ([`HistoryBlob::chain`](crate::input::history::HistoryBlob::chain); by
/// its path when it is not packed), and a full group is sent only once its
/// previous batch is done; until then it goes on filling, up to
/// [`GROUP_AHEAD`] times a batch, when it is sent regardless. The blobs of
/// one chain, which are mostly the versions of one file, then go through
/// their group one batch after the other, while the other groups keep the
/// workers busy. By chain rather than by path: git also deltas files
/// against files of other paths (of the same name, or alike), and grouping
/// by path made the synthetic history of `scripts/bench-history.sh`, where
/// every file looks alike, execute 22% more instructions. By chain start,
/// ripgrep's two workers execute 2.52 G, and its scan at two threads takes
/// 3-7% less time (0.93× the `cat-file` floor where the walk's order took
/// 0.97-1.01×). The synthetic history loses 1-4% (0.74× → 0.77×): its
/// files are deltas of one another, and any grouping breaks up what the
/// walk's order kept together. Queuing each group's batches for one worker
/// (an inbox per worker in the executor) was measured and dropped: no
/// change in time on ripgrep (docs/performance.md, "History").
///
/// The groups hold at most `GROUPS_PER_WORKER × GROUP_AHEAD × BLOB_BATCH`
/// items per worker (paths and ids, no contents), and the order of the
/// batches changes nothing in what is reported: the sink orders the
/// findings.
struct BlobGroups {
    groups: Vec<BlobGroup>,
}

#[derive(Default)]
struct BlobGroup {
    items: Vec<Item>,
    bytes: u64,
    /// The batch sent last, until it is done.
    sent: Option<PermitWatch>,
}

/// Blob groups per worker: enough that the groups whose previous batch is
/// still running leave others to send.
const GROUPS_PER_WORKER: usize = 4;
/// How many batches' worth a group holds, waiting for its previous batch,
/// before it is sent anyway.
const GROUP_AHEAD: usize = 4;

impl BlobGroups {
    fn new(threads: usize) -> BlobGroups {
        // One worker reads everything in order anyway.
        let n = if threads > 1 {
            threads * GROUPS_PER_WORKER
        } else {
            1
        };
        BlobGroups {
            groups: (0..n).map(|_| BlobGroup::default()).collect(),
        }
    }

    /// Adds a history blob (`Content::GitBlob`) whose delta chain starts at
    /// `chain`, and sends its group through `send` when it is due (`send`
    /// returns a watch on the batch's task, `None` once the scan is
    /// stopping). False once the scan is stopping.
    fn push(
        &mut self,
        item: Item,
        chain: Option<u64>,
        send: impl FnOnce(Vec<Item>) -> Option<PermitWatch>,
    ) -> bool {
        let n = self.groups.len();
        let group = if n == 1 {
            &mut self.groups[0]
        } else {
            use std::hash::{Hash, Hasher};
            // Fixed keys: the same groups every run. A blob outside the packs
            // goes by its path, where the versions of a file are.
            let mut h = std::hash::DefaultHasher::new();
            match chain {
                Some(start) => start.hash(&mut h),
                None => item.provenance.path.hash(&mut h),
            }
            &mut self.groups[(h.finish() % n as u64) as usize]
        };
        group.bytes += item.held_bytes();
        group.items.push(item);
        let full = group.items.len() >= BLOB_BATCH || group.bytes >= BLOB_BATCH_BYTES;
        let waited_enough = group.items.len() >= BLOB_BATCH * GROUP_AHEAD
            || group.bytes >= BLOB_BATCH_BYTES * GROUP_AHEAD as u64;
        let idle = n == 1 || group.sent.as_ref().is_none_or(PermitWatch::released);
        if full && (idle || waited_enough) {
            return group.send(send);
        }
        true
    }

    /// Sends what every group holds.
    fn finish(self, mut send: impl FnMut(Vec<Item>) -> Option<PermitWatch>) {
        for mut group in self.groups {
            if !group.send(&mut send) {
                return;
            }
        }
    }
}

impl BlobGroup {
    fn send(&mut self, send: impl FnOnce(Vec<Item>) -> Option<PermitWatch>) -> bool {
        if self.items.is_empty() {
            return true;
        }
        self.bytes = 0;
        self.sent = send(std::mem::take(&mut self.items));
        self.sent.is_some()
    }
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
    // Every root must exist before anything is reported: a typo in the
    // last argument must not leave half a report behind an exit 2.
    if let Source::Paths(roots) = &source {
        for root in roots.iter().filter(|r| r.as_os_str() != "-") {
            std::fs::metadata(root).with_context(|| escape_path(root))?;
        }
    }
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

    let walked = Arc::new(dirs::Tally::default());
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
        walked: Arc::clone(&walked),
    });
    let executor = worker::executor(threads, &shared);
    drop(shared);
    let handle = executor.handle();
    let budget = Budget::new(threads * TASKS_PER_WORKER, opts.memory_budget.max(1));
    stop.attach(&budget, handle.clone());

    let mut feeder = Feeder {
        budget: &budget,
        exec: &handle,
        stop,
        batch: Vec::with_capacity(BATCH),
        items: 0,
    };
    let producer_cpu = thread_cpu();
    let mut history = None;
    let produced: anyhow::Result<SkipCounts> = match source {
        Source::Paths(roots) if dirs::splits(opts) => dirs::walk(&roots, opts, &mut feeder, &tx),
        Source::Paths(roots) => {
            // A shard places files by size, so it walks the whole tree
            // before it scans its share (`crate::shard::Planner`).
            let mut planner = opts
                .shard
                .map(|s| crate::shard::Planner::new(s, &roots, opts.binary));
            let skips = walk::walk(
                &roots,
                &opts.walk,
                &opts.scope,
                |item| match planner.as_mut() {
                    Some(p) => {
                        p.offer(item);
                        !stop.is_stopped()
                    }
                    None => feeder.push(item),
                },
                |w| {
                    let _ = tx.send(Msg::Warning {
                        path: w.path,
                        reason: w.reason,
                        is_error: w.is_error,
                    });
                },
            );
            if let Some(p) = planner {
                for item in p.finish() {
                    if !feeder.push(item) {
                        break;
                    }
                }
            }
            skips
        }
        Source::Items { items, skipped } => {
            let mut skips = skipped;
            for item in items {
                if let Some(s) = opts.shard {
                    if !s.owns_path(&item.provenance.path, &[]) {
                        continue;
                    }
                }
                if let Some(skip) = opts.scope.check_listed(&item.provenance.path) {
                    skips.add(skip, 1);
                    continue;
                }
                if !feeder.push(item) {
                    break;
                }
            }
            Ok(skips)
        }
        Source::History(repos) => {
            let mut skips = SkipCounts::default();
            let mut total = crate::input::history::HistoryStats::default();
            let mut failed = None;
            for r in repos {
                if stop.is_stopped() {
                    break;
                }
                let crate::input::HistoryRepo {
                    prefix,
                    options: hopts,
                    store: repo,
                    started,
                } = r;
                let mut groups = BlobGroups::new(threads);
                let started =
                    started.unwrap_or_else(|| crate::input::history::start(&hopts, &repo));
                let stats = started.and_then(|s| {
                    crate::input::history::walk(s, |blob| {
                        if let Some(s) = opts.shard {
                            // By blob id: a blob is listed once, whatever its paths.
                            if !s.owns_key(&blob.oid.0) {
                                return !stop.is_stopped();
                            }
                        }
                        let path = crate::input::git::path_from_bytes(blob.path);
                        let path = match &prefix {
                            Some(name) => name.join(path),
                            None => path,
                        };
                        if let Some(skip) = opts.scope.check_listed(&path) {
                            skips.add(skip, 1);
                            return !stop.is_stopped();
                        }
                        groups.push(
                            Item {
                                provenance: crate::input::Provenance {
                                    path,
                                    commit: Some(blob.commit),
                                },
                                content: crate::input::Content::GitBlob {
                                    repo: Arc::clone(&repo),
                                    oid: blob.oid,
                                    size: blob.size,
                                    base: blob.base,
                                },
                            },
                            blob.chain,
                            |batch| feeder.send_batch(batch),
                        )
                    })
                });
                groups.finish(|batch| feeder.send_batch(batch));
                match stats {
                    Ok(st) => {
                        skips.add(crate::report::Skip::Submodule, st.submodules);
                        if let Some(first) = &st.first_unlisted {
                            let _ = tx.send(Msg::Warning {
                                // The reason names the repository.
                                path: std::path::PathBuf::new(),
                                reason: format!(
                                    "{first}; {} commit(s) could not be listed whole: the blobs \
                                     only they hold are not scanned",
                                    st.unlisted
                                ),
                                is_error: true,
                            });
                        }
                        total.add(&st);
                    }
                    // One repository failing does not stop the others: it
                    // is an error (exit 2) named in a warning.
                    Err(e) if prefix.is_some() => {
                        let _ = tx.send(Msg::Warning {
                            path: hopts.repo.clone(),
                            reason: e.to_string(),
                            is_error: true,
                        });
                    }
                    Err(e) => failed = Some(anyhow::Error::new(e)),
                }
            }
            history = Some(total);
            match failed {
                Some(e) => Err(e),
                None => Ok(skips),
            }
        }
    };
    feeder.flush();
    let mut producer = crate::report::Producer {
        cpu: thread_cpu().saturating_sub(producer_cpu),
        items: feeder.items,
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
    report.skips.merge(&produced?);
    report.skips.merge(&walked.skips());
    producer.items += walked.items();
    report.history = history;
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
    use std::cell::RefCell;
    use std::time::Duration;

    use super::*;
    use crate::input::{Content, Provenance};

    fn json_sink() -> Sink {
        let opts = crate::output::SinkOptions {
            format: crate::output::Format::Json,
            show_secrets: false,
            color: false,
        };
        Sink::new(opts, Box::new(Vec::new()))
    }

    /// With two workers, the versions of one path go through one group, a
    /// batch at a time: a full group waits for its previous batch unless it
    /// holds GROUP_AHEAD batches' worth; one worker sends as soon as full.
    #[test]
    fn a_group_waits_for_its_previous_batch() {
        let item = |path: &str| Item {
            provenance: Provenance::path(path),
            content: Content::Bytes(vec![b'x'; 10]),
        };
        let budget = Budget::new(0, 0);
        let sent: RefCell<Vec<usize>> = RefCell::default();
        let running: RefCell<Vec<Permit>> = RefCell::default();
        let send = |batch: Vec<Item>| {
            sent.borrow_mut().push(batch.len());
            let permit = budget.acquire(1);
            let watch = permit.watch();
            running.borrow_mut().push(permit);
            Some(watch)
        };
        let main = || item("src/main.rs");

        let mut groups = BlobGroups::new(2);
        for _ in 0..BLOB_BATCH {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(
            *sent.borrow(),
            [BLOB_BATCH],
            "nothing running: sent when full"
        );
        for _ in 0..BLOB_BATCH * GROUP_AHEAD - 1 {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(sent.borrow().len(), 1, "held while the batch before runs");
        assert!(groups.push(main(), None, send));
        assert_eq!(
            sent.borrow()[1],
            BLOB_BATCH * GROUP_AHEAD,
            "sent once it holds so much"
        );
        running.borrow_mut().clear();
        for _ in 0..BLOB_BATCH {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(
            sent.borrow()[2..],
            [BLOB_BATCH],
            "the batch before done: sent when full"
        );
        assert!(groups.push(main(), None, send));
        groups.finish(send);
        assert_eq!(sent.borrow()[3..], [1]);

        let mut groups = BlobGroups::new(1);
        for _ in 0..2 * BLOB_BATCH {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(
            sent.borrow()[4..],
            [BLOB_BATCH; 2],
            "one worker: sent when full"
        );
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
    /// the limits cut off is reported with 0 bytes and what its complete
    /// chunks held (a partial chunk is not scanned, as when streamed), a
    /// NUL makes it binary; the same counts whatever the thread count.
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
                // Shorter than a chunk: the read fails before it is scanned.
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
                (3, secret.len() as u64, 2),
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
