//! What a worker does with a [`Task`]: read the input its [`Content`] names,
//! scan it through the [`ChunkReader`], split it when it is large, and send
//! the sink one message per input.
//!
//! Each worker owns its scratch ([`ScanScratch`]) and one read buffer of
//! `chunk + overlap` bytes, reused from input to input (the "pool" is one
//! buffer per worker: a worker runs one task at a time, and a split-off
//! piece is a new task, never nested). Files are read with plain `read`, no
//! mmap: a file truncated under us then just ends early instead of raising
//! SIGBUS.
//!
//! A regular file is read up to the size it had when it was opened: a log
//! that grows while we read it is scanned as it was, and the scan ends; one
//! that ends before it shrank (a warning), unless its size promises
//! nothing: a file on procfs, sysfs and the like (a sysfs file reports
//! 4096 whatever it holds) or of size 0, which is read up to
//! `zero_size_limit`. Binary sniff: a NUL byte in the first 8 KiB skips the
//! input (counted) unless `--binary`.
//!
//! An archive is walked by one worker (decompression is sequential), which
//! reads every member but scans only the large ones itself: small members
//! are read one after another into one buffer per batch, and go to its
//! deque as [`Content::Member`] items sharing it, for idle workers to
//! steal, under the [`Shared::members`] budget (`scan_archive`, through the
//! worker-side emitter a directory task uses too, `WorkerEmitter`). A
//! large archive then keeps every core busy, and the memory it holds is
//! that budget's 2 MiB per worker.

use std::io::{self, Read as _, Seek as _};
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crossbeam_channel::Sender;
use scanner_engine::{Engine, Finding, ScanInput, ScanScratch, Suppressed};
use scanner_scheduler::{Budget, Executor, ExecutorConfig, Permit, Spawner, WorkerCtx};

use super::emit::{Tally, WorkerEmitter};
use super::reader::{self, ChunkReader, Read, ReadScratch};
use super::sink::{Counts, Msg, Outcome};
use super::split::{self, Backing, Piece, SplitInput};
use super::{ScanOptions, StopHandle, Task};
use crate::input::archive::{self, ArchiveKind};
use crate::input::history::{versions, BlobReader, ObjectStore};
use crate::input::utf16::{text_stream, Utf16Reader};
use crate::input::{walk::io_reason, Content, Item, Provenance};
use crate::report::Skip;

/// Archive members up to this size are read into memory by the worker that
/// walks the archive and scanned as tasks that any worker can steal
/// ([`scan_archive`]); larger ones stream through the walker's own chunk
/// reader, never held whole. 1 MiB: most members of jars, wheels and
/// source tarballs are far smaller, and a member this size takes a few
/// milliseconds to scan, well above the cost of a task.
const SMALL_MEMBER: u64 = 1 << 20;
/// A batch of small members becomes one task once it holds this many bytes
/// or members: a 2 KB file alone would cost about as much to hand over as
/// to scan.
const MEMBER_BATCH_BYTES: u64 = 512 << 10;
const MEMBER_BATCH_LEN: usize = 256;
/// Charged per member beyond its bytes (its path, the item): a batch of
/// empty files is not free either.
const MEMBER_OVERHEAD: u64 = 256;

/// What every worker shares (read-only).
pub struct Shared {
    pub engine: Arc<Engine>,
    /// Bytes of small archive members read but not yet scanned, across all
    /// archives being walked. Only ever `try_acquire`d: a worker never
    /// blocks on it (the permits it would wait for may be in tasks queued
    /// behind it on its own deque); when it is full the walker scans the
    /// batch itself.
    pub members: Budget,
    pub opts: ScanOptions,
    pub overlap: usize,
    pub tx: Sender<Msg>,
    pub stop: StopHandle,
    pub counts: Arc<Counts>,
    /// History blobs known to hold no long-window keyword, or to have
    /// changed wide (`versions::Quiet`).
    pub quiet: versions::Quiet,
    /// Bytes expanded by the archives of this run, against
    /// `--archive-max-run-bytes`.
    pub archive_bytes: Arc<archive::RunBytes>,
    /// What the workers' own sources (the split walk's directory tasks,
    /// archive walks) dropped and queued.
    pub tally: Arc<Tally>,
}

/// A worker's reusable state.
pub struct WorkerScratch {
    scan: ScanScratch,
    read: ReadScratch,
    found: Vec<Finding>,
    /// This worker's blob reader, on the object store it serves.
    git: Option<BlobReader>,
    /// The buffer of [`MemberBatch`], reused from batch to batch and from
    /// archive to archive while batches are scanned here (a spawned batch
    /// takes it along).
    members: Vec<u8>,
    /// The last history blob of [`versions::FOCUS_MIN_BYTES`] or more
    /// scanned here, whole: mostly the base of the next one, which comes
    /// right after it in its batch (`input/history/groups.rs`,
    /// `by_lineage`), and which the reader's caches may have let go while
    /// the blob was rebuilt (a 4 MB version passes through others as large).
    /// Handed over, not kept, when it is the base asked for: not held
    /// through the next blob's scan (moto's peak RSS at `--threads 2`, 4
    /// rounds: 154-163 MB against 159-166 MB when it was kept until the
    /// next). One blob per worker, most often shared with the reader's
    /// cache; at `--threads 16` on two cores, moto's peak RSS went from
    /// 442-472 to 474-483 MB (`docs/performance.md`).
    recent: Option<(crate::input::Oid, Arc<Vec<u8>>)>,
}

impl WorkerScratch {
    fn blob_reader(&mut self, store: &Arc<ObjectStore>) -> io::Result<&mut BlobReader> {
        if self
            .git
            .as_ref()
            .is_none_or(|r| !Arc::ptr_eq(r.store(), store))
        {
            self.git = Some(BlobReader::with_store(store)?);
        }
        Ok(self.git.as_mut().expect("just set"))
    }
}

/// The pool: one [`WorkerScratch`] per worker, `run` for every task.
pub fn executor(threads: usize, shared: &Arc<Shared>) -> Executor<Task> {
    let init = Arc::clone(shared);
    let sh = Arc::clone(shared);
    Executor::new(
        ExecutorConfig {
            workers: threads,
            ..ExecutorConfig::default()
        },
        move |_worker| {
            let mut scan = init.engine.new_scratch();
            scan.keep_allowed(init.opts.list_suppressed);
            WorkerScratch {
                scan,
                read: ReadScratch::default(),
                found: Vec::new(),
                git: None,
                members: Vec::new(),
                recent: None,
            }
        },
        move |task: Task, ctx: &mut WorkerCtx<Task, WorkerScratch>| {
            let (w, spawner) = ctx.split();
            run(task, w, spawner, &sh);
        },
    )
}

fn run(task: Task, w: &mut WorkerScratch, spawner: &Spawner<Task>, sh: &Shared) {
    if sh.stop.is_stopped() {
        return;
    }
    match task {
        Task::Item { item, permit } => scan_item(item, permit, w, spawner, sh),
        Task::Batch { items, permit } => scan_batch(items, permit, w, spawner, sh),
        Task::Dir { dir, permit } => {
            super::dirs::run(dir, permit, &sh.opts, &mut sh.emitter(spawner))
        }
        Task::Files {
            files,
            start,
            end,
            permit,
        } => super::dirs::scan_files(
            files,
            start,
            end,
            permit,
            &sh.emitter(spawner),
            |item, permit| scan_item(item, permit, w, spawner, sh),
        ),
        Task::Range {
            input,
            start,
            end,
            permit,
        } => scan_range(input, start, end, permit, w, spawner, sh),
    }
}

impl Shared {
    /// The emitter of a task that produces work: a directory task, an
    /// archive walk.
    fn emitter<'a>(&'a self, spawner: &'a Spawner<Task>) -> WorkerEmitter<'a> {
        WorkerEmitter::new(
            spawner,
            &self.opts,
            &self.members,
            &self.tx,
            &self.stop,
            &self.tally,
        )
    }

    fn reader(&self, sniff: bool, count_last: bool) -> ChunkReader<'_> {
        ChunkReader {
            engine: &self.engine,
            chunk: self.opts.chunk_size,
            overlap: self.overlap,
            sniff: sniff && !self.opts.binary,
            count_last,
            prefilled: 0,
        }
    }

    fn send(&self, provenance: Provenance, outcome: Outcome, suppressed: Suppressed) {
        if let Outcome::Scanned { bytes, findings } = &outcome {
            self.counts.files.fetch_add(1, Ordering::Relaxed);
            self.counts.bytes.fetch_add(*bytes, Ordering::Relaxed);
            if findings.is_empty() && suppressed == Suppressed::default() {
                return;
            }
        }
        // A send fails only when the sink thread is gone (it failed): nothing
        // to tell anyone then.
        let _ = self.tx.send(Msg::Input {
            provenance,
            outcome,
            suppressed,
        });
    }

    fn warn(&self, provenance: &Provenance, reason: String) {
        super::emit::send_warning(&self.tx, provenance.path.clone(), reason, false);
    }

    /// Warns when a file ended before the size it had when opened (cut
    /// short while it was read, whole or in ranges): the rest was not
    /// scanned. A size promises nothing when it is 0 or the file lies on
    /// procfs, sysfs or the like ([`reader::size_is_contents`]: a sysfs
    /// file reports a page, 4096, whatever it holds).
    fn warn_if_shrank(&self, provenance: &Provenance, bytes: u64, size: u64, file: &std::fs::File) {
        if bytes < size && reader::size_is_contents(file) {
            self.warn(
                provenance,
                format!("shrank while being read: {bytes} of {size} bytes scanned"),
            );
        }
    }

    /// Fails a read once the scan is stopping, so a long input ends soon.
    fn check_stop(&self) -> io::Result<()> {
        if self.stop.is_stopped() {
            return Err(io::Error::other("scan interrupted"));
        }
        Ok(())
    }
}

/// What reading an item came to: `None` when it was split (its last piece
/// reports).
type Read1 = io::Result<Option<Outcome>>;

fn scan_item(
    item: Item,
    permit: Permit,
    w: &mut WorkerScratch,
    spawner: &Spawner<Task>,
    sh: &Shared,
) {
    w.found.clear();
    let Item {
        provenance,
        content,
    } = item;
    let outcome: Read1 = match content {
        content @ (Content::File(_) | Content::WalkedFile { .. }) => (|| -> Read1 {
            let (mut file, path) = match content {
                Content::WalkedFile { root } => match reader::open_beneath(&root, &provenance.path)
                {
                    Ok(f) => (f, std::borrow::Cow::Borrowed(provenance.path.as_path())),
                    Err(e) if reader::is_symlink_swapped(&e) => {
                        sh.warn(&provenance, e.to_string());
                        return Ok(Some(Outcome::Skipped(Skip::SymlinkNotFollowed)));
                    }
                    Err(e) => return Err(e),
                },
                Content::File(path) => (reader::open_nonblocking(&path)?, path.into()),
                _ => unreachable!(),
            };
            let md = file.metadata()?;
            if !md.is_file() {
                // Replaced by a FIFO or a device since the walker saw it.
                return Ok(Some(Outcome::Skipped(Skip::Special)));
            }
            if is_stdout(&md, sh) {
                return Ok(Some(Outcome::Skipped(Skip::OwnOutput)));
            }
            let size = md.len();
            if let Some(skip) = sh.opts.scope.check_size(size) {
                return Ok(Some(Outcome::Skipped(skip)));
            }
            // The head is read once, sequentially: it serves both sniffs, and
            // a plain file's scan goes on after it (no second read of it).
            let head = read_head(&mut file, &mut w.read.buf)?;
            if let Some(limits) = &sh.opts.archives {
                let name = path.as_os_str().as_encoded_bytes();
                let kind = match archive::sniff(&w.read.buf[..head]) {
                    None if archive::zip_behind_prefix(name, &mut file)? => Some(ArchiveKind::Zip),
                    kind => kind,
                };
                if let Some(kind) = kind {
                    file.rewind()?;
                    let source = archive::Source::Seekable(&mut file);
                    return scan_archive(kind, source, &provenance, limits, w, spawner, sh)
                        .map(Some);
                }
            }
            if let Some((order, bom)) = scanner_engine::text::detect_utf16(&w.read.buf[..head]) {
                // Read from just after the byte-order mark, transcoded.
                file.rewind()?;
                let mut raw = (&file).take(size);
                io::copy(&mut (&mut raw).take(bom as u64), &mut io::sink())?;
                return scan_utf16(&path.to_string_lossy(), raw, order, w, sh);
            }
            if sh.opts.split_threshold > 0 && size > sh.opts.split_threshold {
                if !sh.opts.binary && reader::sniff_at(&file, &mut w.read.buf)? {
                    return Ok(Some(Outcome::Skipped(Skip::Binary)));
                }
                let input = SplitInput::new(provenance.clone(), Backing::File(file), size);
                scan_range(Arc::new(input), 0, size, permit.clone(), w, spawner, sh);
                return Ok(None);
            }
            let limit = if size == 0 {
                sh.opts.zero_size_limit
            } else {
                size
            };
            let path_str = path.to_string_lossy();
            let reader = ChunkReader {
                // A file that grew since fstat: no more than its size then.
                prefilled: head.min(limit as usize),
                ..sh.reader(true, false)
            };
            let read = reader.scan(
                &path_str,
                |buf, _| {
                    sh.check_stop()?;
                    file.read(buf)
                },
                (0, limit, limit),
                &mut w.read,
                &mut w.scan,
                &mut w.found,
            )?;
            if let Read::Scanned { bytes, .. } = read {
                sh.warn_if_shrank(&provenance, bytes, size, &file);
            }
            Ok(Some(outcome_of(read, w)))
        })(),
        Content::Bytes(data) => scan_bytes(
            &provenance,
            Arc::new(data),
            None,
            None,
            &permit,
            w,
            spawner,
            sh,
        ),
        Content::Member { data, range, cut } => scan_member(&provenance, &data[range], cut, w, sh),
        Content::GitBlob {
            repo,
            oid,
            size,
            base,
        } => (|| -> Read1 {
            // A staged blob comes without its size (`git diff --cached --raw` lists none):
            // its header gives it, so that `--max-filesize` and streaming apply before the
            // blob is read, as for a history blob.
            let size = match size {
                0 => w.blob_reader(&repo)?.header(&oid)?.1,
                size => size,
            };
            if let Some(skip) = sh.opts.scope.check_size(size) {
                return Ok(Some(Outcome::Skipped(skip)));
            }
            // A large blob stored whole is inflated as it is scanned, never
            // held: scanned whole, as a file is (not split, not around its
            // changes). A large delta is rebuilt whole below.
            if size > stream_threshold(sh) {
                if let Some(mut blob) = w.blob_reader(&repo)?.stream(&oid)? {
                    let limit = blob.size();
                    return scan_stream_or_archive(&provenance, &mut blob, limit, w, spawner, sh);
                }
            }
            // Shared with the reader's cache, not copied out of it. A
            // missing or corrupt blob is reported against itself; the next
            // ones follow.
            let data = w
                .blob_reader(&repo)
                .and_then(|reader| reader.read_shared(&oid))?;
            let base = base.map(|b| (b, Arc::clone(&repo)));
            scan_bytes(&provenance, data, Some(oid), base, &permit, w, spawner, sh)
        })(),
        Content::Stream(stream) => {
            let mut stream = reader::Fused::new(stream);
            scan_stream_or_archive(&provenance, &mut stream, u64::MAX, w, spawner, sh)
        }
    };
    drop(permit);
    report(provenance, outcome, w, sh);
}

/// Scans UTF-16 text (`raw`, from just after its byte-order mark) transcoded to UTF-8 as it
/// is read: a file's, or a staged or history blob's, whose NULs would make it look binary.
fn scan_utf16(
    path: &str,
    raw: impl io::Read,
    order: scanner_engine::text::Utf16,
    w: &mut WorkerScratch,
    sh: &Shared,
) -> Read1 {
    let mut text = Utf16Reader::new(raw, order);
    let read = scan_reader(path, &mut text, false, u64::MAX, w, sh)?;
    Ok(Some(outcome_of(read, w)))
}

/// Scans `text` front to back through the chunk reader, binary-sniffed when `sniff`, at
/// most `limit` bytes of it, ending soon once the scan is stopping: a stream's, a UTF-16
/// file's or a large archive member's findings go to `w.found`.
fn scan_reader(
    path: &str,
    text: &mut dyn io::Read,
    sniff: bool,
    limit: u64,
    w: &mut WorkerScratch,
    sh: &Shared,
) -> io::Result<Read> {
    sh.reader(sniff, false).scan(
        path,
        |buf, _| {
            sh.check_stop()?;
            text.read(buf)
        },
        (0, limit, limit),
        &mut w.read,
        &mut w.scan,
        &mut w.found,
    )
}

/// Scans `stream` front to back through the chunk reader, binary-sniffed,
/// at most `limit` bytes of it: only one chunk of it is held at a time.
/// UTF-16 text ([`text_stream`]) is transcoded and read to its end.
fn scan_stream(
    provenance: &Provenance,
    stream: &mut dyn io::Read,
    limit: u64,
    w: &mut WorkerScratch,
    sh: &Shared,
) -> Read1 {
    let path = provenance.path.to_string_lossy();
    // UTF-16 text is transcoded, as a file is; its UTF-8 may be longer.
    let (mut text, utf16) = text_stream(stream);
    let limit = if utf16 { u64::MAX } else { limit };
    let read = scan_reader(provenance.rule_path(&path), &mut text, !utf16, limit, w, sh)?;
    Ok(Some(outcome_of(read, w)))
}

/// Scans a stream that may be an archive (standard input, a FIFO, a large
/// git blob), as a file is: its first bytes are read ahead for
/// [`archive::sniff`]; a zip is spooled (it needs random access: memory up
/// to [`archive::Limits::spool_memory`], then a temp file), the other
/// formats are walked as they stream. Anything else goes to [`scan_stream`].
fn scan_stream_or_archive(
    provenance: &Provenance,
    stream: &mut dyn io::Read,
    limit: u64,
    w: &mut WorkerScratch,
    spawner: &Spawner<Task>,
    sh: &Shared,
) -> Read1 {
    let mut head = Vec::with_capacity(archive::SNIFF_LEN);
    stream
        .take(archive::SNIFF_LEN as u64)
        .read_to_end(&mut head)?;
    let kind = archive::sniff(&head);
    let mut rest = io::Cursor::new(head).chain(stream);
    let (Some(limits), Some(kind)) = (&sh.opts.archives, kind) else {
        return scan_stream(provenance, &mut rest, limit, w, sh);
    };
    let outcome = match kind {
        ArchiveKind::Zip => {
            let mut spooled = archive::spool(&mut rest, limits.spool_memory)?;
            let source = archive::Source::Seekable(&mut spooled);
            scan_archive(kind, source, provenance, limits, w, spawner, sh)
        }
        _ => {
            let source = archive::Source::Stream(&mut rest);
            scan_archive(kind, source, provenance, limits, w, spawner, sh)
        }
    };
    outcome.map(Some)
}

/// The size above which a history or staged blob stored whole is streamed
/// ([`BlobReader::stream`](crate::input::history::BlobReader::stream))
/// rather than held: the split threshold, above which a file is split and a
/// blob in memory would be (`--split-threshold 0`, no splitting, holds
/// every blob whole).
fn stream_threshold(sh: &Shared) -> u64 {
    match sh.opts.split_threshold {
        0 => u64::MAX,
        n => n,
    }
}

/// Sends what reading an input came to. `Ok(None)`: a split input, whose
/// last piece reports. A read that failed because the scan is stopping
/// (Ctrl-C, or nobody reads the report) is not a failure of this input:
/// nothing more is reported.
fn report(provenance: Provenance, outcome: Read1, w: &mut WorkerScratch, sh: &Shared) {
    let outcome = match outcome {
        Ok(None) => return,
        Ok(Some(o)) => o,
        Err(_) if sh.stop.is_stopped() => return,
        Err(e) => Outcome::Failed {
            reason: io_reason(&e),
            findings: std::mem::take(&mut w.found),
        },
    };
    sh.send(provenance, outcome, w.scan.take_suppressed());
}

/// Scans a batch of items (history blobs, read in order through the
/// worker's blob reader) one after another.
///
/// The batch is first halved down to its first item, each upper half
/// pushed on this worker's deque: popped back (LIFO) they come in the
/// batch's order, and a worker with nothing else to do steals the oldest,
/// the largest half left, rather than wait for the whole batch to end. On
/// moto's history, where a batch of large versions takes tens of
/// milliseconds, the last batches left a worker waiting 40-50 ms at the
/// end of the scan (`--stats-json`'s `idle_secs`).
fn scan_batch(
    mut items: Vec<Item>,
    permit: Permit,
    w: &mut WorkerScratch,
    spawner: &Spawner<Task>,
    sh: &Shared,
) {
    while items.len() > 1 {
        let upper = items.split_off(items.len() / 2);
        spawner.spawn_local(Task::Batch {
            items: upper,
            permit: permit.clone(),
        });
    }
    for item in items {
        if sh.stop.is_stopped() {
            return;
        }
        scan_item(item, permit.clone(), w, spawner, sh);
    }
}

/// Reads a file's first KiB into `buf` (the cursor moves past it), for the
/// archive and UTF-16 sniffs and as the start of the first chunk; returns
/// how many bytes it got.
fn read_head(file: &mut std::fs::File, buf: &mut Vec<u8>) -> io::Result<usize> {
    let want = scanner_engine::text::SNIFF_LEN.max(archive::SNIFF_LEN);
    if buf.len() < want {
        buf.resize(want, 0);
    }
    // One read: a short one is the end of a small file, and the chunk
    // reader goes on reading after it anyway.
    loop {
        match file.read(&mut buf[..want]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Scans every member of an archive (and of archives inside it) as a file
/// of its own, named `ARCHIVE!MEMBER`, each with its own message to the
/// sink. The archive's own outcome: scanned, with the compressed bytes.
///
/// Decompression is sequential, scanning is not, and it costs several
/// times more: this worker only reads members, and hands small ones
/// ([`SMALL_MEMBER`], read whole into memory) in batches to its deque,
/// where idle workers steal them. Every byte is still read here, through
/// the archive's meters, so the limits, skips and stats are those of a
/// walk that scans inline. Large members stream through this worker's
/// chunk reader. Whether a batch is stolen, or scanned here because the
/// [`Shared::members`] budget is full (or there is one worker), changes
/// nothing in what is reported: both run [`scan_member`] on the same bytes.
/// Members out of scope are counted through the archive's
/// [`WorkerEmitter`], as a directory task counts what it drops.
#[allow(clippy::too_many_arguments)]
fn scan_archive(
    kind: ArchiveKind,
    source: archive::Source<'_>,
    provenance: &Provenance,
    limits: &archive::Limits,
    w: &mut WorkerScratch,
    spawner: &Spawner<Task>,
    sh: &Shared,
) -> io::Result<Outcome> {
    let budget = archive::Budget::in_run(limits.clone(), Arc::clone(&sh.archive_bytes));
    let scope = archive::Scope::top(&budget, &provenance.path);
    let mut out = sh.emitter(spawner);
    let mut batch = MemberBatch::new(std::mem::take(&mut w.members));
    let walked = archive::walk(kind, source, &scope, &mut |leaf, member| {
        if out.stopped() {
            return Ok(archive::Flow::Stop);
        }
        let member_prov = Provenance {
            path: leaf.path.to_path_buf(),
            commit: provenance.commit.clone(),
            // `ARCHIVE!MEMBER`: led by the archive's path, and so by its repository's name.
            lead: provenance.lead,
        };
        if !out.admits(&member_prov.scope_path()) {
            return Ok(archive::Flow::Continue);
        }
        // The declared size only chooses the way: a member that lies
        // about it is still read at most `SMALL_MEMBER + 1` bytes here,
        // at the end of the batch's buffer.
        let mut head = Vec::new();
        if leaf.size.is_none_or(|s| s <= SMALL_MEMBER) {
            let start = batch.used;
            let cut = match batch.read(member) {
                Err(_) if out.stopped() => return Ok(archive::Flow::Stop),
                Err(_) => true,
                Ok(()) => false,
            };
            if cut || (batch.used - start) as u64 <= SMALL_MEMBER {
                batch.push(member_prov, start, cut);
                if batch.is_full() {
                    batch.dispatch(&out, w, sh);
                }
                return Ok(archive::Flow::Continue);
            }
            // Large after all: its first bytes leave the buffer.
            head = batch.data[start..batch.used].to_vec();
            batch.used = start;
        }
        // Large: scanned here as it is inflated, after what was read;
        // UTF-16 text transcoded, as a file is.
        let (mut rest, utf16) = text_stream(io::Cursor::new(head).chain(member));
        w.found.clear();
        let read = scan_reader(
            &leaf.path.to_string_lossy(),
            &mut rest,
            !utf16,
            u64::MAX,
            w,
            sh,
        );
        let outcome = match read {
            Ok(r) => outcome_of(r, w),
            // A member the limits cut off: what was read is reported,
            // the skip is in the archive's stats.
            Err(_) if out.stopped() => return Ok(archive::Flow::Stop),
            Err(_) => Outcome::Scanned {
                bytes: 0,
                findings: std::mem::take(&mut w.found),
            },
        };
        sh.send(member_prov, outcome, w.scan.take_suppressed());
        Ok(archive::Flow::Continue)
    });
    if !out.stopped() {
        batch.dispatch(&out, w, sh);
    }
    drop(out);
    w.members = batch.data;
    let stats = budget.into_stats();
    let _ = sh.tx.send(Msg::Archive(stats));
    walked?;
    Ok(Outcome::Scanned {
        bytes: 0,
        findings: Vec::new(),
    })
}

/// Small members read by [`scan_archive`], waiting to become one task.
struct MemberBatch {
    /// The members' bytes, one after another, up to `used`. The rest are
    /// zeroes or bytes of an earlier batch: memory a `read` may be handed
    /// must be initialised, and a buffer initialised once and reused costs
    /// no clearing per member (`read_to_end` cleared up to 8 KiB a read,
    /// as much as the scan of a small member).
    data: Vec<u8>,
    used: usize,
    /// Each member: who it is, where it is in `data`, whether the limits
    /// cut its read short.
    members: Vec<(Provenance, Range<usize>, bool)>,
    /// What the batch is charged: its bytes and [`MEMBER_OVERHEAD`] each.
    charge: u64,
}

/// The most a read asks for: the most `data` grows beyond what it holds.
const MEMBER_READ: usize = 64 << 10;
/// What `data` can come to hold: a batch one byte short of full, then a
/// member read to `SMALL_MEMBER + 1` bytes in reads of `MEMBER_READ`.
/// Reserved at once, so that it never moves what it holds (the pages are
/// only touched as they fill).
const MEMBER_BATCH_CAPACITY: usize = (MEMBER_BATCH_BYTES + SMALL_MEMBER) as usize + MEMBER_READ;

impl MemberBatch {
    fn new(mut data: Vec<u8>) -> MemberBatch {
        data.reserve(MEMBER_BATCH_CAPACITY.saturating_sub(data.len()));
        MemberBatch {
            data,
            used: 0,
            members: Vec::new(),
            charge: 0,
        }
    }

    /// Reads `member` at `used`, up to `SMALL_MEMBER + 1` bytes; what was
    /// read before an error stays.
    fn read(&mut self, member: &mut dyn io::Read) -> io::Result<()> {
        let limit = self.used + SMALL_MEMBER as usize + 1;
        while self.used < limit {
            let want = (limit - self.used).min(MEMBER_READ);
            if self.data.len() < self.used + want {
                self.data.resize(self.used + want, 0);
            }
            match member.read(&mut self.data[self.used..self.used + want]) {
                Ok(0) => break,
                Ok(n) => self.used += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Adds the member read into `data[start..]`.
    fn push(&mut self, provenance: Provenance, start: usize, cut: bool) {
        let range = start..self.used;
        self.charge += range.len() as u64 + MEMBER_OVERHEAD;
        self.members.push((provenance, range, cut));
    }

    fn is_full(&self) -> bool {
        self.members.len() >= MEMBER_BATCH_LEN || self.charge >= MEMBER_BATCH_BYTES
    }

    /// Queues the batch through `out` if the members budget has room
    /// ([`WorkerEmitter::try_spawn`]), else scans it here: the walker then
    /// does its share of the scanning, and the read-ahead stays bounded.
    /// Either way the batch is empty after, with a buffer to fill (the same
    /// one if scanned here, a new one if queued).
    fn dispatch(&mut self, out: &WorkerEmitter, w: &mut WorkerScratch, sh: &Shared) {
        if self.members.is_empty() {
            return;
        }
        let charge = std::mem::take(&mut self.charge);
        let queued = out.try_spawn(charge, |permit| {
            let mut data =
                std::mem::replace(&mut self.data, Vec::with_capacity(MEMBER_BATCH_CAPACITY));
            data.truncate(self.used);
            let data = Arc::new(data);
            let items = self
                .members
                .drain(..)
                .map(|(provenance, range, cut)| Item {
                    provenance,
                    content: Content::Member {
                        data: Arc::clone(&data),
                        range,
                        cut,
                    },
                })
                .collect();
            Task::Batch { items, permit }
        });
        if !queued {
            for (provenance, range, cut) in self.members.drain(..) {
                w.found.clear();
                let read = scan_member(&provenance, &self.data[range], cut, w, sh);
                report(provenance, read, w, sh);
            }
        }
        self.used = 0;
    }
}

/// Scans an archive member held in memory ([`Content::Member`]) exactly as
/// [`scan_archive`] scans one it streams: through the chunk reader, and a
/// member the limits `cut` fails at its end like the read it replays, so
/// it is reported with 0 bytes and what was found in it.
fn scan_member(
    provenance: &Provenance,
    data: &[u8],
    cut: bool,
    w: &mut WorkerScratch,
    sh: &Shared,
) -> Read1 {
    /// The member's bytes; a `cut` one fails where they end.
    struct Replay<'a>(&'a [u8], bool);
    impl io::Read for Replay<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 if self.1 => Err(io::Error::other("cut off by the archive limits")),
                n => Ok(n),
            }
        }
    }
    match scan_stream(provenance, &mut Replay(data, cut), u64::MAX, w, sh) {
        Err(_) if !sh.stop.is_stopped() => Ok(Some(Outcome::Scanned {
            bytes: 0,
            findings: std::mem::take(&mut w.found),
        })),
        read => read,
    }
}

/// A history blob's base: the version of the same file it modifies, and
/// the store to read it from.
type Base = (crate::input::Oid, Arc<ObjectStore>);

/// Marks unchanged ([`versions`]) the `findings` of a history blob
/// (`data`) that lie outside what changed since its `base`, line by line
/// ([`changed_spans`](versions::changed_spans)). The base is read
/// only when some finding is to be judged: most blobs have none, and then
/// cost nothing more.
fn mark_unchanged(
    findings: &mut [Finding],
    data: &[u8],
    base: &Base,
    w: &mut WorkerScratch,
    sh: &Shared,
) {
    if findings.iter().all(|f| f.allowed.is_some()) {
        return;
    }
    if let Some(changed) = with_base(base, data.len(), w, sh, |old| {
        versions::changed_spans(old, data)
    }) {
        versions::mark_unchanged(findings, &changed);
    }
}

/// `f` of a history blob's `base` (the version of the same file it
/// modifies): the blob the worker scanned last ([`WorkerScratch`]'s
/// `recent`), or read through the worker's blob reader (its pack cache
/// often holds what the blob was rebuilt from). `None` (judge the blob whole)
/// when the base was not itself scanned: unreadable (its own error was
/// reported with it), over `--max-filesize`, or skipped as binary. Its
/// findings would otherwise be reported nowhere. `None` too when the base
/// is larger than both the stream threshold ([`stream_threshold`]) and
/// twice the version judged (`len` bytes, held): a base is read whole only
/// where that at most triples what the worker holds, so a file cut from
/// 1 GB to 1 KB does not read the 1 GB, and its new version is judged whole.
fn with_base<T>(
    (base, repo): &Base,
    len: usize,
    w: &mut WorkerScratch,
    sh: &Shared,
    f: impl FnOnce(&[u8]) -> T,
) -> Option<T> {
    let max_len = stream_threshold(sh).max(2 * len as u64);
    let recent = w.recent.take_if(|(oid, _)| oid == base);
    let old = match recent {
        Some((_, data)) => data,
        None => w
            .blob_reader(repo)
            .and_then(|reader| reader.read_base(base, max_len))
            .ok()
            .flatten()?,
    };
    (sh.opts.scope.check_size(old.len() as u64).is_none()
        && (sh.opts.binary || !reader::is_binary(&old[..old.len().min(reader::SNIFF_LEN)])))
    .then(|| f(&old))
}

/// The shortest span between a version's common prefix and suffix with its
/// base ([`versions::changed_span`]) that is focused as the runs of lines
/// changed in it ([`versions::changed_spans`], [`versions::focus_zones`]); a
/// shorter one is scanned as one span and its findings judged line by line
/// afterwards, as one scanned whole. The runs pay where a span is long and
/// its changes few (moto's generated JSON: 2-4 MB spans, a few hundred
/// lines changed); on the short spans of hand-edited sources the line diff
/// of every version and the zones' overheads cost more than the bytes they
/// leave out: ripgrep's history took 10% more user time with runs for
/// every span (docs/performance.md, moto).
const ZONES_MIN_SPAN: u64 = 64 << 10;

/// What a history blob with a base is scanned around (`scan_bytes`).
enum Focus {
    /// The one span between the common prefix and suffix.
    Span(Range<usize>),
    /// The runs of changed lines, judged by the same runs.
    Runs(Vec<Range<u64>>),
}

/// Scans bytes in memory (a history or staged blob, shared with the blob
/// reader's cache); splits them when large. With `base` (a history blob that
/// modifies an earlier version), the base is read first and only the
/// findings meeting what changed since it are looked for
/// ([`Engine::scan_focus`](scanner_engine::Engine::scan_focus)); a split
/// blob, or one under [`versions::FOCUS_MIN_BYTES`], is scanned whole and the
/// findings outside the change marked unchanged ([`mark_unchanged`]). A
/// history blob (`oid`) whose scan finds no long-window keyword is
/// recorded in [`Shared::quiet`], for the versions based on it.
#[allow(clippy::too_many_arguments)]
fn scan_bytes(
    provenance: &Provenance,
    data: Arc<Vec<u8>>,
    oid: Option<crate::input::Oid>,
    base: Option<Base>,
    permit: &Permit,
    w: &mut WorkerScratch,
    spawner: &Spawner<Task>,
    sh: &Shared,
) -> Read1 {
    let size = data.len() as u64;
    let head = &data[..data.len().min(reader::SNIFF_LEN)];
    let binary = reader::is_binary(head);
    let outcome = if let Some(skip) = sh.opts.scope.check_size(size) {
        Outcome::Skipped(skip)
    } else if let (Some(limits), Some(kind)) = (&sh.opts.archives, archive::sniff(head)) {
        // An archive committed or staged: its members scanned whole, as a
        // file's are (a version is not compared with the one before).
        let mut data = io::Cursor::new(&data[..]);
        let source = archive::Source::Seekable(&mut data);
        return scan_archive(kind, source, provenance, limits, w, spawner, sh).map(Some);
    } else if binary && scanner_engine::text::detect_utf16(head).is_some() {
        // UTF-16 text, transcoded as a file is: scanned whole, its
        // versions not compared (their offsets are not the text's).
        return scan_stream(provenance, &mut &data[..], u64::MAX, w, sh);
    } else if !sh.opts.binary && binary {
        Outcome::Skipped(Skip::Binary)
    } else if sh.opts.split_threshold > 0 && size > sh.opts.split_threshold {
        let mut input = SplitInput::new(provenance.clone(), Backing::Bytes(data), size);
        input.base = base;
        scan_range(Arc::new(input), 0, size, permit.clone(), w, spawner, sh);
        return Ok(None);
    } else {
        let path = provenance.path.to_string_lossy();
        let input = ScanInput::whole(&data, provenance.rule_path(&path));
        // What changed since the base ([`Focus`]); a base that was not
        // itself scanned gives nothing: scan whole. So does a base that changed wide, or follows one that did
        // (`versions::Quiet`), unread.
        let marks = base
            .as_ref()
            .map(|(b, _)| sh.quiet.marks(b))
            .unwrap_or_default();
        let wide = marks.wide;
        if let Some(oid) = oid.filter(|_| wide > 0) {
            sh.quiet.set_wide(oid, wide - 1);
        }
        let focus = base
            .as_ref()
            .filter(|_| data.len() >= versions::FOCUS_MIN_BYTES && wide == 0);
        let focus = focus.and_then(|b| {
            with_base(b, data.len(), w, sh, |old| {
                let span = versions::changed_span(old, &data);
                if span.end - span.start >= ZONES_MIN_SPAN {
                    Focus::Runs(versions::changed_spans(old, &data))
                } else {
                    Focus::Span(span.start as usize..span.end as usize)
                }
            })
        });
        match &focus {
            Some(focus) => {
                let runs;
                let zones = match focus {
                    Focus::Runs(changed) => {
                        runs = versions::focus_zones(changed);
                        runs.as_slice()
                    }
                    Focus::Span(span) => std::slice::from_ref(span),
                };
                let scanned: usize = zones.iter().map(|z| z.len()).sum();
                if let Some(oid) = oid.filter(|_| versions::is_wide(scanned, data.len())) {
                    sh.quiet.set_wide(oid, versions::WIDE_SKIPS);
                }
                sh.counts
                    .unchanged
                    .fetch_add((data.len() - scanned) as u64, Ordering::Relaxed);
                sh.engine
                    .scan_focus(&input, zones, marks.quiet, &mut w.scan, &mut w.found);
            }
            None => sh.engine.scan(&input, &mut w.scan, &mut w.found),
        }
        if let Some(oid) = oid.filter(|_| w.scan.no_long_keywords()) {
            sh.quiet.insert(oid);
        }
        if let Some(oid) = oid.filter(|_| data.len() >= versions::FOCUS_MIN_BYTES) {
            w.recent = Some((oid, Arc::clone(&data)));
        }
        // Then line by line, when there is a finding to judge: those the
        // focus found between two runs merged into one zone, with the runs
        // already known; those of one span or a whole scan after reading
        // the base.
        let mut findings = std::mem::take(&mut w.found);
        match (&focus, &base) {
            (Some(Focus::Runs(changed)), _) => {
                versions::mark_unchanged(&mut findings, changed);
            }
            (_, Some(base)) => mark_unchanged(&mut findings, &data, base, w, sh),
            (_, None) => {}
        }
        Outcome::Scanned {
            bytes: size,
            findings,
        }
    };
    Ok(Some(outcome))
}

fn outcome_of(read: Read, w: &mut WorkerScratch) -> Outcome {
    match read {
        Read::Binary => Outcome::Skipped(Skip::Binary),
        Read::Scanned { bytes, .. } => Outcome::Scanned {
            bytes,
            findings: std::mem::take(&mut w.found),
        },
    }
}

#[cfg(unix)]
fn is_stdout(md: &std::fs::Metadata, sh: &Shared) -> bool {
    use std::os::unix::fs::MetadataExt;
    sh.opts.stdout_id == Some((md.dev(), md.ino()))
}

#[cfg(not(unix))]
fn is_stdout(_md: &std::fs::Metadata, _sh: &Shared) -> bool {
    false
}

/// Scans `start..end` of a split input after pushing its upper halves to
/// the local deque (see [`split`]), then, if it was the last piece, resolves
/// the input's lines and sends its findings.
fn scan_range(
    input: Arc<SplitInput>,
    start: u64,
    end: u64,
    permit: Permit,
    w: &mut WorkerScratch,
    spawner: &Spawner<Task>,
    sh: &Shared,
) {
    let grain = sh.opts.split_grain.max(1);
    let end = split::keep_lower_half(
        start,
        end,
        |len| len >= 2 * grain,
        |mid, end| {
            spawner.spawn_local(Task::Range {
                input: Arc::clone(&input),
                start: mid,
                end,
                permit: permit.clone(),
            })
        },
    );
    let path_str = input.provenance.path.to_string_lossy();
    let read_limit = end.saturating_add(sh.overlap as u64).min(input.size);
    w.found.clear();
    let result = sh.reader(false, true).scan(
        input.provenance.rule_path(&path_str),
        |buf, off| {
            sh.check_stop()?;
            input.backing.read_at(buf, off)
        },
        (start, end, read_limit),
        &mut w.read,
        &mut w.scan,
        &mut w.found,
    );
    drop(permit);
    {
        let mut pieces = input.pieces.lock().unwrap_or_else(|e| e.into_inner());
        pieces.suppressed.merge(&w.scan.take_suppressed());
        match result {
            Ok(Read::Scanned {
                bytes,
                end: pos,
                test_from,
            }) => pieces.done.push(Piece {
                start,
                findings: std::mem::take(&mut w.found),
                end: pos,
                bytes,
                test_from,
            }),
            Ok(Read::Binary) => unreachable!("ranges are not sniffed"),
            Err(e) => {
                if pieces.error.as_ref().is_none_or(|(s, _)| start < *s) {
                    pieces.error = Some((start, e));
                }
            }
        }
    }
    if input.remaining.fetch_sub(end - start, Ordering::AcqRel) == end - start
        && !sh.stop.is_stopped()
    {
        let (mut outcome, suppressed) = split::finish(&input);
        if let (Outcome::Scanned { bytes, .. }, Backing::File(file)) = (&outcome, &input.backing) {
            sh.warn_if_shrank(&input.provenance, *bytes, input.size, file);
        }
        if let (Some(base), Backing::Bytes(data)) = (&input.base, &input.backing) {
            if let Outcome::Scanned { findings, .. } | Outcome::Failed { findings, .. } =
                &mut outcome
            {
                mark_unchanged(findings, data, base, w, sh);
            }
        }
        sh.send(input.provenance.clone(), outcome, suppressed);
    }
}
