//! The scan pipeline: walker → budget → work-stealing workers → one sink.
//!
//! ```text
//!  caller thread (walker)         executor workers (N)               sink thread
//!  ─────────────────────         ────────────────────               ───────────
//!  walk::walk ─ path ─┐           find_task: local deque,
//!  Source::Blobs ─────┤           injector, steal from siblings
//!                     ▼                   │
//!      Budget::acquire (task permit)      ▼
//!      batch of FileTask ──spawn_batch──► run_task ── Msg (one per file) ──► filters ─► Sink
//!                                         │  ▲                               summary counts
//!                          big file: Range│  │spawn_local(upper half)        progress line
//!                                         └──┘
//! ```
//!
//! # Tasks
//!
//! A [`FileTask`] is a whole file (opened and read by the worker), a byte
//! range of a large file, or an in-memory blob (`--staged`). Each holds a
//! budget [`Permit`]: the walker blocks when too many tasks (or blob bytes)
//! are in flight, so memory stays flat however large the tree. File tasks
//! charge no bytes: what a file task holds in memory is its worker's read
//! buffer, whose number is fixed (one per worker), not the file's size. Blob
//! tasks charge their length: that memory is really held.
//!
//! # Reading
//!
//! Each worker owns its scratch ([`ScanScratch`]) and one read buffer of
//! `chunk + overlap` bytes, reused from file to file (the "pool" is one
//! buffer per worker: a worker runs one task at a time, and a split-off piece
//! is a new task, never nested). A file is read in chunks with plain `read`
//! (no mmap: a file truncated under us then just ends early instead of
//! raising SIGBUS). The last `Engine::max_match_len()` bytes of a chunk are
//! its *overlap*: scanned as context, owned by the next chunk, and moved to
//! the front of the buffer instead of being read again. A finding that
//! starts in the overlap belongs to the next chunk, so a secret across a
//! chunk boundary is found exactly once.
//!
//! Binary sniff: a NUL byte in the first 8 KiB skips the file (counted)
//! unless `--binary`.
//!
//! # Large files
//!
//! A file above `split_threshold` is cut into byte ranges the way a
//! work-stealing range partitioner does: the task keeps the lower half and
//! pushes the upper half with `spawn_local`, again and again down to
//! `split_grain`. Thieves take the oldest entry of a deque, which is the
//! largest piece, so idle workers join in with big pieces and split them in
//! turn. Ranges read with positional reads (`read_at`) on one shared `File`,
//! overlap included.
//!
//! Line numbers of a range are unknown when it is scanned (the newlines
//! before it are in other pieces), so a range is scanned as if it started at
//! line 1, column 1, and records how many newlines it owns and how many bytes
//! follow its last one. The worker that completes the last piece (a
//! remaining-bytes counter reaching zero) sorts the pieces by offset, sums
//! those counts into each piece's starting position and rebases the
//! piece's findings: exact lines and columns, without reading the file a
//! second time. Only then does the file's one message go to the sink, so
//! filters and the report never see an unresolved position.
//!
//! # The sink thread
//!
//! Workers send one [`Msg`] per file that has something to say: the whole
//! file's findings (so text never interleaves), a skip, a failure, engine
//! suppressions. A clean file, the common case, is only counted in shared
//! atomics: no message, no wakeup of a sleeping sink thread. The sink
//! thread runs the [`FindingFilter`]s, writes to the [`Sink`], keeps the
//! other counts of the summary, prints warnings (between redraws of the
//! progress line), and stops the run quietly when stdout is a closed pipe.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use scanner_engine::{Engine, Finding, LinePos, ScanInput, ScanScratch, Suppressed};
use scanner_scheduler::{
    Budget, Executor, ExecutorConfig, MetricsSnapshot, Permit, Spawner, WorkerCtx,
};

use crate::filter::FindingFilter;
use crate::output::text::escape_path;
use crate::output::{is_broken_pipe, PathFinding, Sink};
use crate::summary::Progress;
use crate::walk::{self, Skip, SkipCounts, WalkOptions, WalkWarning};

/// What to scan.
pub enum Source {
    /// Walk these roots (files given explicitly are scanned even if ignored).
    Paths(Vec<PathBuf>),
    /// Content already in memory (git staged blobs): path is repo-relative.
    /// Built by `--staged` (`git.rs`); every blob becomes one task and goes
    /// through the same binary sniff, engine, filters and sink as a file.
    Blobs(Vec<Blob>),
}

/// One in-memory file (a staged git blob).
pub struct Blob {
    pub path: PathBuf,
    pub data: Vec<u8>,
}

/// How files are read and scanned. Defaults are the production values;
/// tests shrink them with hidden flags (`--chunk-size`, `--split-threshold`,
/// `--split-grain`).
#[derive(Clone)]
pub struct ScanOptions {
    /// Worker threads.
    pub threads: usize,
    pub walk: WalkOptions,
    /// Scan files with a NUL in the first 8 KiB too.
    pub binary: bool,
    /// Skip files larger than this.
    pub max_filesize: Option<u64>,
    /// Bytes owned by one read chunk. Default 256 KiB.
    pub chunk_size: usize,
    /// Files larger than this are split into ranges. Default 8 MiB.
    pub split_threshold: u64,
    /// Ranges are not split below this. Default 2 MiB.
    pub split_grain: u64,
    /// Draw a progress line on stderr.
    pub progress: bool,
    /// Bytes of in-memory blobs in flight. Default 256 MiB.
    pub blob_budget: u64,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            threads: 1,
            walk: WalkOptions::default(),
            binary: false,
            max_filesize: None,
            chunk_size: 256 << 10,
            split_threshold: 8 << 20,
            split_grain: 2 << 20,
            progress: false,
            blob_budget: 256 << 20,
        }
    }
}

/// How much of the file is sniffed for a NUL byte.
const SNIFF_LEN: usize = 8 << 10;
/// Tasks handed to the injector at once: fewer wakeups and CASes than one by
/// one, small enough that workers start at once.
const BATCH: usize = 16;
/// Task permits: enough to keep every worker's deque fed, few enough that
/// the walker cannot run far ahead (paths held in memory stay bounded).
const TASKS_PER_WORKER: usize = 64;

/// Everything the summary reports.
#[derive(Debug, Default)]
pub struct ScanReport {
    pub files: u64,
    pub bytes: u64,
    /// Findings written to the report (after filters).
    pub findings: u64,
    pub skips: SkipCounts,
    /// Dropped findings by reason: the engine's (`inline allow`,
    /// `allowlist`, ...) and the filters' (`baseline`, ...).
    pub suppressed: BTreeMap<&'static str, u64>,
    /// Files or directories in scope that could not be read (exit 2 unless
    /// `--ignore-errors`).
    pub errors: u64,
    /// Lines from [`FindingFilter::finish`], printed after the summary.
    pub notes: Vec<String>,
    /// The report writer stopped because stdout was closed.
    pub broken_pipe: bool,
    pub metrics: MetricsSnapshot,
    pub elapsed: Duration,
}

/// One piece of work for a worker.
pub enum FileTask {
    /// A file to open and read; the worker splits it if it is large.
    File { path: PathBuf, permit: Permit },
    /// Bytes `start..end` of a split file.
    Range {
        file: Arc<SplitFile>,
        start: u64,
        end: u64,
        permit: Permit,
    },
    /// Content already in memory.
    Blob { blob: Blob, permit: Permit },
}

/// A large file being scanned in ranges by several workers.
pub struct SplitFile {
    path: PathBuf,
    file: File,
    /// End of the last range (the size when the file was split).
    size: u64,
    /// Bytes not yet scanned; the piece that takes it to zero finishes the
    /// file.
    remaining: AtomicU64,
    pieces: Mutex<Pieces>,
}

#[derive(Default)]
struct Pieces {
    done: Vec<Piece>,
    /// The failed piece with the lowest start, and why.
    error: Option<(u64, io::Error)>,
    suppressed: Suppressed,
}

/// A scanned range: its findings have positions relative to `start`.
struct Piece {
    start: u64,
    findings: Vec<Finding>,
    lines: LineDelta,
    bytes: u64,
}

/// The position change over a run of bytes: newlines in it, and bytes after
/// the last newline (or all its bytes when it has none). Composes like a
/// monoid, which is what lets ranges be rebased after the fact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LineDelta {
    newlines: u64,
    tail: u64,
}

impl LineDelta {
    fn of(bytes: &[u8]) -> LineDelta {
        match memchr::memrchr(b'\n', bytes) {
            None => LineDelta {
                newlines: 0,
                tail: bytes.len() as u64,
            },
            Some(last) => LineDelta {
                newlines: memchr::memchr_iter(b'\n', bytes).count() as u64,
                tail: (bytes.len() - last - 1) as u64,
            },
        }
    }

    fn then(self, next: LineDelta) -> LineDelta {
        if next.newlines == 0 {
            LineDelta {
                newlines: self.newlines,
                tail: self.tail + next.tail,
            }
        } else {
            LineDelta {
                newlines: self.newlines + next.newlines,
                tail: next.tail,
            }
        }
    }

    /// The position after this delta, counted from the start of a file.
    fn pos(self) -> LinePos {
        LinePos {
            line: (self.newlines + 1).min(u32::MAX as u64) as u32,
            column: (self.tail + 1).min(u32::MAX as u64) as u32,
        }
    }
}

/// Moves a position computed from line 1, column 1 to start at `base`.
fn rebase(line: u32, column: u32, base: LinePos) -> (u32, u32) {
    if line == 1 {
        (base.line, base.column + column - 1)
    } else {
        (base.line + line - 1, column)
    }
}

/// A worker's reusable state.
struct WorkerScratch {
    scan: ScanScratch,
    buf: Vec<u8>,
    found: Vec<Finding>,
}

/// What every worker shares (read-only).
struct Shared {
    engine: Arc<Engine>,
    opts: ScanOptions,
    overlap: usize,
    tx: Sender<Msg>,
    cancel: Arc<AtomicBool>,
    counts: Arc<Counts>,
}

/// Files and bytes scanned, counted by the workers themselves: a clean file
/// (the common case) then costs no message and no wakeup of the sink
/// thread, which reads these for the progress line and the summary.
#[derive(Default)]
struct Counts {
    files: AtomicU64,
    bytes: AtomicU64,
}

/// Worker → sink: one message per file with findings, a skip, a failure or
/// suppressions (or a walker warning).
enum Msg {
    File {
        path: PathBuf,
        outcome: Outcome,
        suppressed: Suppressed,
    },
    Warning(WalkWarning),
}

enum Outcome {
    Scanned {
        bytes: u64,
        findings: Vec<Finding>,
    },
    Skipped(Skip),
    /// A read failed: the reason for the warning, and what was found in
    /// the part read before the failure (reported: a secret seen is never
    /// dropped; the exit status is 2 anyway).
    Failed {
        reason: String,
        findings: Vec<Finding>,
    },
}

/// Runs a whole scan. Returns the report and the sink, which the caller
/// finishes (`Sink::finish`) once it knows the rules.
///
/// Errors: an unreadable root, a bad `--exclude`, a task panic, a report
/// write error other than a closed pipe. Unreadable files are not errors
/// here: they are warned about and counted in `ScanReport::errors`.
pub fn scan(
    source: Source,
    engine: Arc<Engine>,
    sink: Sink,
    filters: Vec<Box<dyn FindingFilter>>,
    opts: &ScanOptions,
) -> anyhow::Result<(ScanReport, Sink)> {
    let started = Instant::now();
    // Every root must exist before anything is reported: a typo in the
    // last argument must not leave half a report behind an exit 2.
    if let Source::Paths(roots) = &source {
        for root in roots {
            std::fs::metadata(root).with_context(|| escape_path(root))?;
        }
    }
    let threads = opts.threads.max(1);
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = crossbeam_channel::bounded::<Msg>(1024);
    let progress = opts.progress.then(Progress::new);
    let counts = Arc::new(Counts::default());

    let sink_thread = {
        let cancel = Arc::clone(&cancel);
        let counts = Arc::clone(&counts);
        std::thread::Builder::new()
            .name("scanner-sink".into())
            .spawn(move || sink_loop(rx, sink, filters, progress, &cancel, &counts))?
    };

    let shared = Arc::new(Shared {
        overlap: engine.max_match_len(),
        engine: Arc::clone(&engine),
        opts: opts.clone(),
        tx: tx.clone(),
        cancel: Arc::clone(&cancel),
        counts: Arc::clone(&counts),
    });
    let executor = {
        let init = Arc::clone(&shared);
        let run = Arc::clone(&shared);
        Executor::new(
            ExecutorConfig {
                workers: threads,
                ..ExecutorConfig::default()
            },
            move |_worker| WorkerScratch {
                scan: init.engine.new_scratch(),
                buf: Vec::new(),
                found: Vec::new(),
            },
            move |task: FileTask, ctx: &mut WorkerCtx<FileTask, WorkerScratch>| {
                let (w, spawner) = ctx.split();
                run_task(task, w, spawner, &run);
            },
        )
    };
    drop(shared);
    let handle = executor.handle();
    let budget = Budget::new(threads * TASKS_PER_WORKER, opts.blob_budget.max(1));

    let mut batch: Vec<FileTask> = Vec::with_capacity(BATCH);
    let mut stopped = false;
    let flush = |batch: &mut Vec<FileTask>, stopped: &mut bool| {
        if batch.is_empty() || *stopped {
            batch.clear();
            return;
        }
        if handle.spawn_batch(std::mem::take(batch)).is_err() {
            *stopped = true;
        }
    };
    // The unsent batch holds permits: when the budget is full, spawn it
    // before blocking, or the walker could wait for permits only its own
    // batch holds (a few large blobs against the byte limit). It also gets
    // the batch to idle workers at once.
    let acquire = |budget: &Budget, bytes: u64, batch: &mut Vec<FileTask>, stopped: &mut bool| {
        budget.try_acquire(bytes).unwrap_or_else(|| {
            flush(batch, stopped);
            budget.acquire(bytes)
        })
    };

    let walked = match source {
        Source::Paths(roots) => walk::walk(
            &roots,
            &opts.walk,
            |path| {
                if stopped || cancel.load(Ordering::Relaxed) {
                    return false;
                }
                let permit = acquire(&budget, 0, &mut batch, &mut stopped);
                batch.push(FileTask::File { path, permit });
                if batch.len() >= BATCH {
                    flush(&mut batch, &mut stopped);
                }
                true
            },
            |w| {
                let _ = tx.send(Msg::Warning(w));
            },
        ),
        Source::Blobs(blobs) => {
            let mut skips = SkipCounts::default();
            for blob in blobs {
                if stopped || cancel.load(Ordering::Relaxed) {
                    break;
                }
                // Config `allow_paths` (the walker applies it to files).
                if opts
                    .walk
                    .allow
                    .as_ref()
                    .is_some_and(|allow| allow(&blob.path, false))
                {
                    skips.add(Skip::AllowlistedPath, 1);
                    continue;
                }
                let permit = acquire(&budget, blob.data.len() as u64, &mut batch, &mut stopped);
                batch.push(FileTask::Blob { blob, permit });
                if batch.len() >= BATCH {
                    flush(&mut batch, &mut stopped);
                }
            }
            Ok(skips)
        }
    };
    flush(&mut batch, &mut stopped);
    if walked.is_err() {
        executor.shutdown();
    }
    let joined = executor.join();
    drop(tx);
    let (report_sink, mut report) = sink_thread
        .join()
        .map_err(|_| anyhow::anyhow!("the report writer panicked"))??;
    let metrics = joined.map_err(|p| anyhow::anyhow!("{p}"))?;
    report.skips.merge(&walked?);
    report.files = load(&counts.files);
    report.bytes = load(&counts.bytes);
    report.metrics = metrics;
    report.elapsed = started.elapsed();
    Ok((report, report_sink.expect("sink returned")))
}

fn run_task(task: FileTask, w: &mut WorkerScratch, spawner: &Spawner<FileTask>, sh: &Shared) {
    if sh.cancel.load(Ordering::Relaxed) {
        return;
    }
    match task {
        FileTask::File { path, permit } => scan_file(path, permit, w, spawner, sh),
        FileTask::Range {
            file,
            start,
            end,
            permit,
        } => scan_range(file, start, end, permit, w, spawner, sh),
        FileTask::Blob { blob, permit } => {
            let outcome = scan_blob(&blob, w, sh);
            drop(permit);
            send_file(sh, blob.path, outcome, w.scan.take_suppressed());
        }
    }
}

fn send_file(sh: &Shared, path: PathBuf, outcome: Outcome, suppressed: Suppressed) {
    if let Outcome::Scanned { bytes, findings } = &outcome {
        sh.counts.files.fetch_add(1, Ordering::Relaxed);
        sh.counts.bytes.fetch_add(*bytes, Ordering::Relaxed);
        if findings.is_empty() && suppressed == Suppressed::default() {
            return;
        }
    }
    // A send fails only when the sink thread is gone (it failed): nothing to
    // tell anyone then.
    let _ = sh.tx.send(Msg::File {
        path,
        outcome,
        suppressed,
    });
}

fn scan_blob(blob: &Blob, w: &mut WorkerScratch, sh: &Shared) -> Outcome {
    let data = &blob.data[..];
    if sh
        .opts
        .max_filesize
        .is_some_and(|max| data.len() as u64 > max)
    {
        return Outcome::Skipped(Skip::TooLarge);
    }
    if !sh.opts.binary && is_binary(&data[..data.len().min(SNIFF_LEN)]) {
        return Outcome::Skipped(Skip::Binary);
    }
    let path = blob.path.to_string_lossy();
    let mut found = Vec::new();
    let input = ScanInput {
        data,
        path: &path,
        base_offset: 0,
        owned_len: data.len(),
        start: LinePos::START,
    };
    sh.engine.scan(&input, &mut w.scan, &mut found);
    Outcome::Scanned {
        bytes: data.len() as u64,
        findings: found,
    }
}

fn is_binary(head: &[u8]) -> bool {
    memchr::memchr(0, head).is_some()
}

fn scan_file(
    path: PathBuf,
    permit: Permit,
    w: &mut WorkerScratch,
    spawner: &Spawner<FileTask>,
    sh: &Shared,
) {
    w.found.clear();
    let outcome = (|| -> io::Result<Option<Outcome>> {
        let mut file = open_nonblocking(&path)?;
        let md = file.metadata()?;
        if !md.is_file() {
            // Replaced by a FIFO or a device since the walker saw it.
            return Ok(Some(Outcome::Skipped(Skip::Special)));
        }
        let size = md.len();
        if sh.opts.max_filesize.is_some_and(|max| size > max) {
            return Ok(Some(Outcome::Skipped(Skip::TooLarge)));
        }
        if sh.opts.split_threshold > 0 && size > sh.opts.split_threshold {
            if !sh.opts.binary && sniff_at(&file, &mut w.buf)? {
                return Ok(Some(Outcome::Skipped(Skip::Binary)));
            }
            let split = Arc::new(SplitFile {
                path: path.clone(),
                file,
                size,
                remaining: AtomicU64::new(size),
                pieces: Mutex::new(Pieces::default()),
            });
            scan_range(split, 0, size, permit.clone(), w, spawner, sh);
            return Ok(None);
        }
        let path_str = path.to_string_lossy();
        let sniff = !sh.opts.binary;
        // Read up to the size seen at open (a file growing under us is
        // scanned as it was), except that procfs and friends report 0 for
        // files that have content: read those to EOF.
        let limit = if size == 0 { u64::MAX } else { size };
        let r = scan_stream(
            sh,
            w,
            &path_str,
            |buf, _off| file.read(buf),
            0,
            limit,
            limit,
            sniff,
            false,
        )?;
        Ok(Some(match r {
            None => Outcome::Skipped(Skip::Binary),
            Some((bytes, _)) => Outcome::Scanned {
                bytes,
                findings: std::mem::take(&mut w.found),
            },
        }))
    })();
    drop(permit);
    let outcome = match outcome {
        Ok(None) => return,
        Ok(Some(o)) => o,
        Err(e) => Outcome::Failed {
            reason: walk::io_reason(&e),
            findings: std::mem::take(&mut w.found),
        },
    };
    send_file(sh, path, outcome, w.scan.take_suppressed());
}

/// Opens for reading without blocking on a FIFO that replaced a regular
/// file since the walker saw it (opening a FIFO waits for a writer).
/// `O_NONBLOCK` changes nothing for regular files.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000;
        opts.custom_flags(O_NONBLOCK);
    }
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0x0004;
        opts.custom_flags(O_NONBLOCK);
    }
    opts.open(path)
}

/// True when the first 8 KiB of `file` hold a NUL byte (positional read:
/// the file cursor does not move).
fn sniff_at(file: &File, buf: &mut Vec<u8>) -> io::Result<bool> {
    if buf.len() < SNIFF_LEN {
        buf.resize(SNIFF_LEN, 0);
    }
    let mut filled = 0;
    while filled < SNIFF_LEN {
        let n = read_at(file, &mut buf[filled..SNIFF_LEN], filled as u64)?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(is_binary(&buf[..filled]))
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match file.read_at(buf, off) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    use std::os::windows::fs::FileExt;
    file.seek_read(buf, off)
}

/// Scans `start..end` of a split file after pushing its upper halves to the
/// local deque (see the module docs), then, if it was the last piece,
/// resolves the file's lines and sends its findings.
fn scan_range(
    file: Arc<SplitFile>,
    start: u64,
    mut end: u64,
    permit: Permit,
    w: &mut WorkerScratch,
    spawner: &Spawner<FileTask>,
    sh: &Shared,
) {
    let grain = sh.opts.split_grain.max(1);
    while end - start >= 2 * grain {
        let mid = start + (end - start) / 2;
        spawner.spawn_local(FileTask::Range {
            file: Arc::clone(&file),
            start: mid,
            end,
            permit: permit.clone(),
        });
        end = mid;
    }
    let path_str = file.path.to_string_lossy();
    let read_limit = end.saturating_add(sh.overlap as u64).min(file.size);
    w.found.clear();
    let result = scan_stream(
        sh,
        w,
        &path_str,
        |buf, off| read_at(&file.file, buf, off),
        start,
        end,
        read_limit,
        false,
        true,
    );
    drop(permit);
    {
        let mut pieces = file.pieces.lock().unwrap_or_else(|e| e.into_inner());
        pieces.suppressed.merge(&w.scan.take_suppressed());
        match result {
            Ok(r) => {
                let (bytes, lines) = r.expect("no sniff in ranges");
                pieces.done.push(Piece {
                    start,
                    findings: std::mem::take(&mut w.found),
                    lines,
                    bytes,
                });
            }
            Err(e) => {
                if pieces.error.as_ref().is_none_or(|(s, _)| start < *s) {
                    pieces.error = Some((start, e));
                }
            }
        }
    }
    if file.remaining.fetch_sub(end - start, Ordering::AcqRel) == end - start {
        finish_split(&file, sh);
    }
}

/// The last piece of a split file is done: rebase every piece's findings
/// onto absolute lines and columns and send the file's one message. After
/// a failed piece positions are unknown, so only the findings before it are
/// kept (with the failure).
fn finish_split(file: &SplitFile, sh: &Shared) {
    let pieces = std::mem::take(&mut *file.pieces.lock().unwrap_or_else(|e| e.into_inner()));
    let suppressed = pieces.suppressed;
    let failed_at = pieces.error.as_ref().map_or(u64::MAX, |(s, _)| *s);
    let mut done = pieces.done;
    done.sort_by_key(|p| p.start);
    let mut before = LineDelta::default();
    let mut bytes = 0;
    let mut findings = Vec::new();
    for piece in done.into_iter().take_while(|p| p.start < failed_at) {
        let base = before.pos();
        for mut f in piece.findings {
            (f.line, f.column) = rebase(f.line, f.column, base);
            (f.end_line, f.end_column) = rebase(f.end_line, f.end_column, base);
            findings.push(f);
        }
        before = before.then(piece.lines);
        bytes += piece.bytes;
    }
    let outcome = match pieces.error {
        Some((_, e)) => Outcome::Failed {
            reason: walk::io_reason(&e),
            findings,
        },
        None => Outcome::Scanned { bytes, findings },
    };
    send_file(sh, file.path.clone(), outcome, suppressed);
}

/// Reads `start..end` (owned) in chunks through `read(buf, file_offset)`,
/// never reading past `read_limit` (`end` plus the overlap, clamped to the
/// file size), and scans each chunk, appending to `w.found`. Positions are
/// counted from line 1, column 1 at `start`.
///
/// Returns `None` when `sniff` is set and the file looks binary, else the
/// bytes owned and the [`LineDelta`] over them (over all but the last chunk
/// unless `count_last`: only ranges need the whole of it).
#[allow(clippy::too_many_arguments)]
fn scan_stream(
    sh: &Shared,
    w: &mut WorkerScratch,
    path: &str,
    mut read: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
    start: u64,
    end: u64,
    read_limit: u64,
    sniff: bool,
    count_last: bool,
) -> io::Result<Option<(u64, LineDelta)>> {
    let overlap = sh.overlap;
    let cap = sh.opts.chunk_size.max(1) + overlap;
    if w.buf.len() < cap {
        w.buf.resize(cap, 0);
    }
    let buf = &mut w.buf[..cap];
    let mut chunk_off = start;
    let mut filled = 0usize;
    let mut lines = LineDelta::default();
    let mut first = true;
    loop {
        let want = (cap as u64).min(read_limit.saturating_sub(chunk_off)) as usize;
        let mut eof = false;
        while filled < want {
            match read(&mut buf[filled..want], chunk_off + filled as u64) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if first && sniff {
            first = false;
            // The first fill holds the first 8 KiB unless the buffer is
            // smaller than that (the hidden --chunk-size test knob) or the
            // file is: look further only in the first case.
            let head = &buf[..filled.min(SNIFF_LEN)];
            if is_binary(head) {
                return Ok(None);
            }
        }
        let at_limit = eof || chunk_off + filled as u64 >= read_limit;
        let owned_max = end.saturating_sub(chunk_off).min(filled as u64) as usize;
        let owned = if at_limit {
            owned_max
        } else {
            (filled - overlap).min(owned_max)
        };
        if filled > 0 {
            let input = ScanInput {
                data: &buf[..filled],
                path,
                base_offset: chunk_off,
                owned_len: owned,
                start: lines.pos(),
            };
            sh.engine.scan(&input, &mut w.scan, &mut w.found);
        }
        let next = chunk_off + owned as u64;
        let last = at_limit || next >= end || owned == 0;
        // The last chunk's newlines matter only to a range (the next range's
        // start); a whole file, most often one chunk, skips the count.
        if !last || count_last {
            lines = lines.then(LineDelta::of(&buf[..owned]));
        }
        if last {
            return Ok(Some((next - start, lines)));
        }
        buf.copy_within(owned..filled, 0);
        filled -= owned;
        chunk_off = next;
    }
}

fn load(n: &AtomicU64) -> u64 {
    n.load(Ordering::Relaxed)
}

/// The sink thread: filters, writes, counts. Returns the report (without
/// walker counts and metrics) and the sink.
fn sink_loop(
    rx: Receiver<Msg>,
    sink: Sink,
    mut filters: Vec<Box<dyn FindingFilter>>,
    progress: Option<Progress>,
    cancel: &AtomicBool,
    counts: &Counts,
) -> anyhow::Result<(Option<Sink>, ScanReport)> {
    let mut sink = Some(sink);
    let mut report = ScanReport::default();
    let mut engine_suppressed = Suppressed::default();
    let mut write_error: Option<io::Error> = None;
    let warn = |progress: &Option<Progress>, path: &Path, reason: &str| {
        let line = format!("scanner: warning: {}: {reason}", escape_path(path));
        match progress {
            Some(p) => p.println(&line),
            None => eprintln!("{line}"),
        }
    };
    loop {
        // With a progress line, wake up now and then to show the files
        // counted by the workers even when no message comes.
        let msg = match &progress {
            None => match rx.recv() {
                Ok(msg) => msg,
                Err(_) => break,
            },
            Some(p) => match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(msg) => msg,
                Err(RecvTimeoutError::Timeout) => {
                    p.update(load(&counts.files), load(&counts.bytes), report.findings);
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            },
        };
        match msg {
            Msg::Warning(w) => {
                if w.is_error {
                    report.errors += 1;
                }
                warn(&progress, &w.path, &w.reason);
            }
            Msg::File {
                path,
                outcome,
                suppressed,
            } => {
                engine_suppressed.merge(&suppressed);
                let mut findings = match outcome {
                    Outcome::Skipped(reason) => {
                        report.skips.add(reason, 1);
                        Vec::new()
                    }
                    Outcome::Failed { reason, findings } => {
                        report.skips.add(Skip::Unreadable, 1);
                        report.errors += 1;
                        warn(&progress, &path, &reason);
                        findings
                    }
                    // Counted by the worker (see `Counts`).
                    Outcome::Scanned { findings, .. } => findings,
                };
                findings.sort_by_key(|f| (f.offset, f.end_offset));
                let mut kept = Vec::with_capacity(findings.len());
                for finding in findings {
                    let pf = PathFinding {
                        path: path.clone(),
                        finding,
                    };
                    match filters.iter_mut().find_map(|f| f.check(&pf)) {
                        Some(reason) => *report.suppressed.entry(reason).or_default() += 1,
                        None => kept.push(pf),
                    }
                }
                report.findings += kept.len() as u64;
                if let Some(s) = sink.as_mut() {
                    if write_error.is_none() && !kept.is_empty() {
                        // The report may share the terminal with the
                        // progress line: clear it around the write.
                        let written = match &progress {
                            Some(p) => p.suspend(|| s.write_file_findings(kept)),
                            None => s.write_file_findings(kept),
                        };
                        if let Err(e) = written {
                            // Stop the walker and workers: nobody is
                            // listening, or the disk is full.
                            cancel.store(true, Ordering::Relaxed);
                            write_error = Some(e);
                        }
                    }
                }
                if let Some(p) = &progress {
                    p.update(load(&counts.files), load(&counts.bytes), report.findings);
                }
            }
        }
    }
    if let Some(p) = &progress {
        p.finish();
    }
    for (label, n) in engine_suppressed.by_reason() {
        if n > 0 {
            *report.suppressed.entry(label).or_default() += n;
        }
    }
    for f in &mut filters {
        report.notes.extend(f.finish());
    }
    if let Some(e) = write_error {
        if is_broken_pipe(&e) {
            report.broken_pipe = true;
        } else {
            return Err(anyhow::Error::new(e).context("writing the report"));
        }
    }
    Ok((sink, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_deltas_compose() {
        let text = b"ab\ncd\r\nef\n\ngh";
        for cut in 0..=text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(
                LineDelta::of(a).then(LineDelta::of(b)),
                LineDelta::of(text),
                "cut {cut}"
            );
        }
        assert_eq!(LineDelta::of(text).pos(), LinePos { line: 5, column: 3 });
        assert_eq!(LineDelta::default().pos(), LinePos::START);
    }

    fn shared(chunk_size: usize) -> (Shared, Receiver<Msg>) {
        let engine = Arc::new(Engine::builtin().unwrap());
        let (tx, rx) = crossbeam_channel::unbounded();
        let sh = Shared {
            overlap: engine.max_match_len(),
            engine,
            opts: ScanOptions {
                chunk_size,
                ..ScanOptions::default()
            },
            tx,
            cancel: Arc::new(AtomicBool::new(false)),
            counts: Arc::default(),
        };
        (sh, rx)
    }

    /// A file that shrank after it was split: ranges past the new end scan
    /// nothing, a range across it scans what is left. No panic, no error.
    #[test]
    fn ranges_past_eof_are_empty() {
        let token = ["gh", "p_", "Zq3Xv8Kp2Lm7Nw4Rt6Yb1Hc9Jd5Fg0Ss2Aa7"].concat();
        let mut data = "line\n".repeat(20).into_bytes();
        data.extend(format!("x = {token}\n").as_bytes());
        data.extend("tail\n".repeat(100).as_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, &data).unwrap();
        let file = File::open(&path).unwrap();
        let (sh, _rx) = shared(64);
        let mut w = WorkerScratch {
            scan: sh.engine.new_scratch(),
            buf: Vec::new(),
            found: Vec::new(),
        };
        let len = data.len() as u64;
        let mut run = |start: u64, end: u64| {
            w.found.clear();
            let limit = end + sh.overlap as u64;
            let r = scan_stream(
                &sh,
                &mut w,
                "f.txt",
                |b, off| read_at(&file, b, off),
                start,
                end,
                limit,
                false,
                true,
            )
            .unwrap()
            .unwrap();
            (
                r,
                w.found
                    .iter()
                    .map(|f| (f.offset, f.line, f.column))
                    .collect::<Vec<_>>(),
            )
        };
        // Past the end: nothing.
        assert_eq!(
            run(len + 100, len + 5000),
            ((0, LineDelta::default()), vec![])
        );
        // Across the end: the bytes that exist, positions relative to start.
        let ((bytes, lines), found) = run(0, len * 4);
        assert_eq!(bytes, len);
        assert_eq!(
            lines,
            LineDelta {
                newlines: 121,
                tail: 0
            }
        );
        assert_eq!(found, [(104, 21, 5)]);
    }

    /// Blobs larger in total than the byte budget, in one batch: the
    /// walker must spawn its batch before blocking for more permits, or it
    /// waits forever for permits its own unsent batch holds.
    #[test]
    fn blobs_beyond_the_byte_budget_do_not_deadlock() {
        let engine = Arc::new(Engine::builtin().unwrap());
        let blobs: Vec<Blob> = (0..40)
            .map(|i| Blob {
                path: format!("b{i}.txt").into(),
                data: vec![b'x'; 1000],
            })
            .collect();
        let opts = ScanOptions {
            threads: 2,
            blob_budget: 3000,
            ..ScanOptions::default()
        };
        let sink = Sink::new(
            crate::output::SinkOptions {
                format: crate::output::Format::Json,
                show_secrets: false,
                color: false,
            },
            Box::new(Vec::new()),
        );
        let (tx, rx) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            let r = scan(Source::Blobs(blobs), engine, sink, Vec::new(), &opts);
            let _ = tx.send(r.map(|(report, _)| (report.files, report.bytes)));
        });
        let done = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the scan deadlocked");
        assert_eq!(done.unwrap(), (40, 40_000));
    }

    fn finding(offset: u64, line: u32, column: u32) -> Finding {
        Finding {
            rule_id: "r".into(),
            rule_name: "r".into(),
            line,
            column,
            end_line: line,
            end_column: column + 4,
            offset,
            end_offset: offset + 4,
            r#match: String::new(),
            secret: String::new(),
            confidence: scanner_engine::Confidence::High,
            tags: Vec::new(),
            entropy: 0.0,
            fingerprint: String::new(),
        }
    }

    /// Pieces are rebased in offset order whatever order they finished in;
    /// after a failed piece nothing is kept (its lines are unknown).
    #[test]
    fn finish_split_rebases_and_stops_at_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"").unwrap();
        let (sh, rx) = shared(64);
        let piece = |start, findings, newlines, tail| Piece {
            start,
            findings,
            lines: LineDelta { newlines, tail },
            bytes: 100,
        };
        let split = |error: Option<u64>| {
            let mut pieces = Pieces::default();
            pieces
                .done
                .push(piece(200, vec![finding(210, 1, 11)], 0, 100));
            pieces.done.push(piece(0, vec![finding(5, 1, 6)], 3, 20));
            pieces.done.push(piece(
                100,
                vec![finding(150, 2, 7), finding(120, 1, 21)],
                1,
                30,
            ));
            pieces.error = error.map(|at| (at, io::Error::from_raw_os_error(5)));
            SplitFile {
                path: "f".into(),
                file: File::open(dir.path().join("f")).unwrap(),
                size: 300,
                remaining: AtomicU64::new(0),
                pieces: Mutex::new(pieces),
            }
        };
        let positions = |msg: Msg| -> (bool, Vec<(u64, u32, u32, u32)>) {
            let Msg::File { outcome, .. } = msg else {
                panic!()
            };
            let (failed, fs) = match outcome {
                Outcome::Scanned { findings, .. } => (false, findings),
                Outcome::Failed { findings, .. } => (true, findings),
                Outcome::Skipped(_) => panic!(),
            };
            (
                failed,
                fs.iter()
                    .map(|f| (f.offset, f.line, f.column, f.end_column))
                    .collect(),
            )
        };
        finish_split(&split(None), &sh);
        // Piece 100 starts at line 4, column 21; piece 200 at line 5, column 31.
        assert_eq!(
            positions(rx.try_recv().unwrap()),
            (
                false,
                vec![
                    (5, 1, 6, 10),
                    (150, 5, 7, 11),
                    (120, 4, 41, 45),
                    (210, 5, 41, 45)
                ]
            )
        );
        finish_split(&split(Some(100)), &sh);
        assert_eq!(
            positions(rx.try_recv().unwrap()),
            (true, vec![(5, 1, 6, 10)])
        );
    }

    #[test]
    fn rebase_positions() {
        let base = LinePos {
            line: 10,
            column: 5,
        };
        assert_eq!(rebase(1, 3, base), (10, 7));
        assert_eq!(rebase(4, 3, base), (13, 3));
        assert_eq!(rebase(1, 1, LinePos::START), (1, 1));
    }
}
