//! Archive members as a stream of readers, so that a key inside a `.jar`, a
//! `.whl` or a `.tar.gz` is scanned like a key in a plain file.
//!
//! # Where to start
//!
//! - [`detect`] (or [`sniff`] for magic bytes only) tells whether a file is
//!   an archive and of which [`ArchiveKind`]: by content first, because
//!   archives travel under any name (`.whl`, `.nupkg`, `.crate`, no suffix).
//! - [`walk`] is the whole job for one top-level archive: it opens nested
//!   archives up to [`Limits::max_depth`] and hands every leaf member to the
//!   caller as a [`Leaf`] (display path, declared size) and a reader.
//! - [`for_each_member`] is the one-level primitive under `walk`, for a
//!   caller that wants to decide per member (its callback may recurse with
//!   [`Scope::nested`]).
//!
//! A [`Budget`] is made per top-level archive and shared by every nested
//! level; [`Budget::into_stats`] returns what happened, including every
//! [`ArchiveSkip`] for the summary. A worker with an open file whose first
//! [`SNIFF_LEN`] bytes it has read:
//!
//! ```text
//! if let Some(kind) = archive::detect(name.as_bytes(), &head) {
//!     file.rewind()?;
//!     let budget = Budget::new(Limits::default());
//!     let scope = Scope::top(&budget, &display_path);
//!     walk(kind, Source::Seekable(&mut file), &scope, &mut |leaf, reader| {
//!         scan(leaf.path, reader)?; // `a.zip!lib/b.jar!c.properties`
//!         Ok(Flow::Continue)
//!     })?;
//!     summary.add(budget.into_stats());
//! }
//! ```
//!
//! The budget is not `Sync`: one archive is walked by one thread, and
//! different archives by different threads in parallel. The stats of many
//! archives add up with [`ArchiveStats::merge`].
//!
//! # We never extract
//!
//! Nothing here touches the filesystem except anonymous temp files
//! ([`spool`]) holding a nested zip: member names are data, never paths. A
//! `../` or absolute name is scanned like any other and only reported
//! ([`ArchiveSkip::UnsafeName`]) because it is a sign of a hostile archive.
//! Symlink members are never followed.
//!
//! # Hostile archives
//!
//! Every byte a member yields goes through a metering reader that enforces
//! the [`Limits`] while reading, not from the sizes the archive declares
//! (which a bomb lies about):
//!
//! - total expanded bytes per top-level archive, nested levels included
//!   (then the rest of the archive is skipped: [`ArchiveSkip::TooLarge`]),
//!   and per run, all archives together ([`RunBytes`],
//!   [`ArchiveSkip::RunTooLarge`]). There is no ratio check: a member that
//!   compresses 1000x (a file of spaces) is not a bomb by itself; a bomb is
//!   stopped when it has cost as much as these bounds allow, not before;
//! - member count per top-level archive ([`ArchiveSkip::TooManyMembers`]),
//!   checked before a zip's central directory is parsed: a directory that
//!   declares more entries is read one entry at a time up to the limit,
//!   never held whole;
//! - nesting depth ([`ArchiveSkip::TooDeep`]), at most [`MAX_DEPTH`]: every
//!   level is a frame of the call stack;
//! - the zstd window, at most [`MAX_ZSTD_WINDOW`] as the reference `zstd`
//!   decodes without `--long` ([`ArchiveSkip::WindowTooLarge`]);
//! - for tar, the bytes read between two entries (GNU long names and pax
//!   headers are buffered whole by the `tar` crate, so a header claiming
//!   gigabytes would otherwise be held in memory).
//!
//! Every skip but [`UnsafeName`](ArchiveSkip::UnsafeName) and
//! [`SymlinkMember`](ArchiveSkip::SymlinkMember) leaves part of the input
//! unread ([`ArchiveSkip::incomplete`]): the caller makes the run fail as
//! for an unreadable file, and [`ArchiveSkip::flag`] names the flag that
//! raises the limit that tripped.
//!
//! Once a limit trips, the metering reader keeps failing, so a callback that
//! ignores the error cannot loop. Corrupt or truncated data ends the member
//! (zip, which has random access) or the rest of the stream (gzip), with
//! [`ArchiveSkip::Corrupt`] or [`ArchiveSkip::Truncated`]. What can be read
//! is read:
//!
//! - a tar member is read for the size its header declares, as GNU tar
//!   reads it: a size too small leaves blocks that are not headers, which
//!   are skipped up to the next valid header (reported, as GNU tar's
//!   "Skipping to next header"); a size too large reads to the end of the
//!   archive (reported as truncated);
//! - a zip member whose central-directory entry points to no local header
//!   is looked for by its local header (`find_local_headers`).
//!
//! Memory stays bounded: members are read through, never buffered, except
//! the first [`Limits::spool_memory`] bytes of a nested zip (the rest goes
//! to an anonymous temp file, whose size the total limit bounds).
//!
//! # Formats
//!
//! zip (stored and deflate; other methods are [`ArchiveSkip::Unsupported`]),
//! tar (ustar, GNU, pax), gzip, bzip2, xz and zstd (a compressed tar is
//! iterated as a tar; anything else is one member named after the file
//! without its suffix, as `gunzip` names it). Of a zstd file with several
//! frames only the first is read.
//!
//! # Resource usage
//!
//! Measured with the `archive_throughput` test (debug build, decoders at
//! opt-level 2; every member read through, nothing scanned) on a 2-core
//! machine at load 6-9, so wall times are pessimistic:
//!
//! | corpus | archives | members | expanded | wall | CPU (user+sys) | peak RSS |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | 202 `.crate` (tar.gz), 35 MB | 212 | 11,866 | 299 MB | 1.5 s, 199 MB/s | 0.39 s, ~770 MB/s | 8.0 MB |
//! | 32 files of a pyenv tree (wheels, test tarballs), 27 MB | 32 | 6,720 | 89 MB | 0.85 s, 105 MB/s | (with the tree walk) | 8.7 MB |
//!
//! Memory per archive, beyond a few 32-64 KiB decoder buffers: the nested
//! zip spool ([`Limits::spool_memory`]); the decoder window of xz (the
//! dictionary its header declares, 8 MiB for `xz -6`, allocated zeroed, so
//! resident only as far as the output reaches) and zstd (grows with the
//! output up to the declared window, at most [`MAX_ZSTD_WINDOW`]); and a
//! zip's central directory, which the `zip` crate parses whole (about 600
//! bytes per entry: 61 MB peak RSS for 70,000 entries against 21 MB for
//! one), only when it declares at most [`Limits::max_members`] entries.
//! `docs/architecture.md` ("Memory bound") sums these per worker.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[cfg(test)]
mod tests;

/// Bytes [`sniff`] needs to see every magic it knows (tar's is at 257).
pub const SNIFF_LEN: usize = 262;

/// How many [`Skipped`] entries [`ArchiveStats::skipped`] keeps; the counts
/// in [`ArchiveStats::skip_counts`] go on past it. A hostile archive can
/// have a million `../` names; the summary needs the count, not the list.
pub const MAX_LISTED_SKIPS: usize = 64;

/// Bytes the `tar` crate may read between two entries (headers, GNU long
/// names, pax records). Real ones are a few hundred bytes.
const MAX_TAR_HEADER_BYTES: u64 = 1 << 20;

/// Archive formats this module can open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    /// zip and its family: jar, war, whl, apk, nupkg, docx...
    Zip,
    /// uncompressed tar (ustar, GNU or pax).
    Tar,
    /// gzip: a `.tar.gz`/`.tgz`/`.crate`, or one compressed file.
    Gzip,
    /// bzip2: a `.tar.bz2`, or one compressed file.
    Bzip2,
    /// xz: a `.tar.xz`/`.txz`, or one compressed file.
    Xz,
    /// zstd: a `.tar.zst`, or one compressed file.
    Zstd,
}

/// The archive kind announced by the first bytes of a file, if any. Give it
/// at least [`SNIFF_LEN`] bytes when the file has them, or tar is missed.
pub fn sniff(head: &[u8]) -> Option<ArchiveKind> {
    // An empty zip is only an end-of-central-directory record; `PK\x07\x08`
    // starts a spanned zip whose first local header follows.
    if head.starts_with(b"PK\x03\x04")
        || head.starts_with(b"PK\x05\x06")
        || head.starts_with(b"PK\x07\x08")
    {
        return Some(ArchiveKind::Zip);
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Some(ArchiveKind::Gzip);
    }
    if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
        return Some(ArchiveKind::Bzip2);
    }
    if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        return Some(ArchiveKind::Xz);
    }
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Some(ArchiveKind::Zstd);
    }
    // POSIX writes "ustar\0", GNU "ustar  \0": the first five bytes agree.
    if head.get(257..262) == Some(b"ustar") {
        return Some(ArchiveKind::Tar);
    }
    None
}

/// Suffixes of the zip family: formats that are zip files under another
/// name. Matched case-insensitively.
const ZIP_SUFFIXES: &[&str] = &[
    ".zip", ".jar", ".war", ".ear", ".apk", ".aar", ".whl", ".egg", ".nupkg", ".vsix", ".xpi",
    ".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".ipa",
];

/// The archive kind a name suggests. Only used when the content has no
/// magic ([`detect`]): a self-extracting zip starts with a program, and v7
/// tars (before ustar) have no magic at all.
pub fn kind_from_name(name: &[u8]) -> Option<ArchiveKind> {
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    if ZIP_SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        Some(ArchiveKind::Zip)
    } else if lower.ends_with(".tar") {
        Some(ArchiveKind::Tar)
    } else {
        None
    }
}

/// The archive kind of a file: by its first bytes ([`sniff`]), else by its
/// name ([`kind_from_name`]). Compressed formats are only trusted by magic:
/// a `.gz` without one is not gzip. A guess by name can be wrong: a walk
/// that then delivers nothing and records [`ArchiveSkip::Corrupt`] at the
/// file's own path should be followed by a plain scan of the file.
pub fn detect(name: &[u8], head: &[u8]) -> Option<ArchiveKind> {
    sniff(head).or_else(|| kind_from_name(name))
}

/// The deepest nesting [`Limits::max_depth`] may ask for. Every level of
/// nesting is a few frames of the call stack (decoders read through each
/// other): a debug build overflows a 2 MiB thread stack between 100 and 200
/// nested gzip streams, a release build between 200 and 500.
pub const MAX_DEPTH: u32 = 32;

/// The largest zstd window decoded: 128 MiB, the most the reference `zstd`
/// decodes without `--long` or `--memory`. A frame declaring more (made with
/// `--long=31`, or hostile) is skipped ([`ArchiveSkip::WindowTooLarge`]):
/// the decoder would hold that much per worker.
pub const MAX_ZSTD_WINDOW: u64 = 128 << 20;

/// Resource limits for one top-level archive and everything nested in it.
/// `Limits::default()` documents the defaults on each field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of member content delivered in total (nested levels count
    /// again: their bytes were expanded twice). Default 1 GiB
    /// (`--archive-max-bytes`). Past it the rest of the top-level archive
    /// is skipped ([`ArchiveSkip::TooLarge`]).
    pub max_total_bytes: u64,
    /// The same, for all the archives of a run together ([`RunBytes`]).
    /// Default 16 GiB (`--archive-max-run-bytes`): a minute or two of
    /// inflating on a few cores.
    pub max_run_bytes: u64,
    /// Members (entries of every kind, nested ones included). Default
    /// 100,000 (`--archive-max-members`): the largest real jars have ~50k
    /// entries.
    pub max_members: u64,
    /// Archives open at once: 1 is the top-level archive only, 3 (the
    /// default, `--archive-depth`) reaches `a.zip!lib/b.jar!c.zip!key.txt`.
    /// At most [`MAX_DEPTH`].
    pub max_depth: u32,
    /// A nested zip up to this size is held in memory, beyond it in an
    /// anonymous temp file ([`spool`]). Default 8 MiB.
    pub spool_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_total_bytes: 1 << 30,
            max_run_bytes: 16 << 30,
            max_members: 100_000,
            max_depth: 3,
            spool_memory: 8 << 20,
        }
    }
}

/// Bytes expanded by all the archives of a run, against
/// [`Limits::max_run_bytes`]: one per run, shared by every worker's
/// [`Budget`].
#[derive(Debug, Default)]
pub struct RunBytes(AtomicU64);

impl RunBytes {
    /// Adds `n` bytes; the total after.
    fn charge(&self, n: u64) -> u64 {
        self.0.fetch_add(n, Ordering::Relaxed) + n
    }
}

/// Why a member, or the rest of an archive, was not scanned (or, for
/// [`UnsafeName`](ArchiveSkip::UnsafeName), why a scanned member is
/// suspicious).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchiveSkip {
    /// [`Limits::max_total_bytes`] spent: the rest of the top-level archive.
    TooLarge,
    /// [`Limits::max_run_bytes`] spent by the archives of this run: the
    /// rest of this archive (and of every archive after it).
    RunTooLarge,
    /// [`Limits::max_members`] reached: the rest of the top-level archive.
    TooManyMembers,
    /// A nested archive past [`Limits::max_depth`]: not opened.
    TooDeep,
    /// A zstd frame whose window (the bytes given) is over
    /// [`MAX_ZSTD_WINDOW`]: not decoded.
    WindowTooLarge(u64),
    /// An encrypted zip member: we have no password.
    Encrypted,
    /// An absolute or `../` member name. The member is still scanned; this
    /// is only reported.
    UnsafeName,
    /// A symlink or hard-link member: not followed, no content scanned.
    SymlinkMember,
    /// The data ended early (the member, or the rest of a stream).
    Truncated,
    /// Unreadable data or structure, with the decoder's message.
    Corrupt(String),
    /// A compression method we do not decode (zip's bzip2, lzma, AES...).
    Unsupported(String),
}

impl ArchiveSkip {
    /// A stable one-word name, for counts in summaries and JSON.
    pub fn label(&self) -> &'static str {
        match self {
            ArchiveSkip::TooLarge => "too_large",
            ArchiveSkip::RunTooLarge => "run_too_large",
            ArchiveSkip::TooManyMembers => "too_many_members",
            ArchiveSkip::TooDeep => "too_deep",
            ArchiveSkip::WindowTooLarge(_) => "window_too_large",
            ArchiveSkip::Encrypted => "encrypted",
            ArchiveSkip::UnsafeName => "unsafe_name",
            ArchiveSkip::SymlinkMember => "symlink",
            ArchiveSkip::Truncated => "truncated",
            ArchiveSkip::Corrupt(_) => "corrupt",
            ArchiveSkip::Unsupported(_) => "unsupported",
        }
    }

    /// True if content was left unread: the run is incomplete, as for an
    /// unreadable file. Only a link member (not followed, as a symlink on
    /// disk is not) and an unsafe name (scanned) leave nothing unread.
    pub fn incomplete(&self) -> bool {
        label_incomplete(self.label())
    }

    /// The flag that raises the limit behind this skip, if a flag does.
    pub fn flag(&self) -> Option<&'static str> {
        flag_for_label(self.label())
    }
}

/// [`ArchiveSkip::incomplete`] of the skips labelled `label`.
pub fn label_incomplete(label: &str) -> bool {
    !matches!(label, "unsafe_name" | "symlink")
}

/// The flag that raises the limit behind the skips labelled `label`
/// ([`ArchiveSkip::label`]), if a flag does.
pub fn flag_for_label(label: &str) -> Option<&'static str> {
    match label {
        "too_large" => Some("--archive-max-bytes"),
        "run_too_large" => Some("--archive-max-run-bytes"),
        "too_many_members" => Some("--archive-max-members"),
        "too_deep" => Some("--archive-depth"),
        _ => None,
    }
}

impl fmt::Display for ArchiveSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveSkip::TooLarge => f.write_str("archive expands past the total size limit"),
            ArchiveSkip::RunTooLarge => {
                f.write_str("the archives of this run expanded past their total size limit")
            }
            ArchiveSkip::TooManyMembers => f.write_str("too many archive members"),
            ArchiveSkip::TooDeep => f.write_str("archive nested too deep"),
            ArchiveSkip::WindowTooLarge(window) => write!(
                f,
                "zstd window of {} MiB, over the {} MiB the reference zstd decodes without --long",
                window >> 20,
                MAX_ZSTD_WINDOW >> 20
            ),
            ArchiveSkip::Encrypted => f.write_str("encrypted member"),
            ArchiveSkip::UnsafeName => f.write_str("absolute or ../ member name"),
            ArchiveSkip::SymlinkMember => f.write_str("link member, not followed"),
            ArchiveSkip::Truncated => f.write_str("truncated"),
            ArchiveSkip::Corrupt(why) => write!(f, "corrupt: {why}"),
            ArchiveSkip::Unsupported(what) => write!(f, "unsupported: {what}"),
        }?;
        match self.flag() {
            Some(flag) => write!(f, " (raise {flag})"),
            None => Ok(()),
        }
    }
}

/// One skip, at the display path of the member or archive concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: ArchiveSkip,
}

/// What happened inside one top-level archive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchiveStats {
    /// Archives opened, the top-level one and nested ones.
    pub archives: u64,
    /// Members handed to a callback.
    pub members: u64,
    /// Bytes of member content read through the metering readers.
    pub expanded_bytes: u64,
    /// Skips that left content unread ([`ArchiveSkip::incomplete`]).
    pub incomplete: u64,
    /// Skips by [`ArchiveSkip::label`].
    pub skip_counts: BTreeMap<&'static str, u64>,
    /// The first [`MAX_LISTED_SKIPS`] skips, in order.
    pub skipped: Vec<Skipped>,
}

impl ArchiveStats {
    /// Adds the stats of another archive (for a scan's summary); the list
    /// of skips stays capped at [`MAX_LISTED_SKIPS`].
    pub fn merge(&mut self, other: ArchiveStats) {
        self.archives += other.archives;
        self.members += other.members;
        self.expanded_bytes += other.expanded_bytes;
        self.incomplete += other.incomplete;
        for (label, n) in other.skip_counts {
            *self.skip_counts.entry(label).or_default() += n;
        }
        let room = MAX_LISTED_SKIPS.saturating_sub(self.skipped.len());
        self.skipped.extend(other.skipped.into_iter().take(room));
    }
}

/// Shared state of one top-level archive: the limits, what was spent, what
/// was skipped. Interior mutability because every nested level and every
/// metering reader charges it while a callback up the stack is running;
/// one archive is walked by one thread, so `Cell` suffices.
pub struct Budget {
    limits: Limits,
    run: Arc<RunBytes>,
    expanded: Cell<u64>,
    members: Cell<u64>,
    halted: Cell<bool>,
    stats: RefCell<ArchiveStats>,
}

impl Budget {
    /// A budget of its own: [`Limits::max_run_bytes`] counts this archive
    /// only.
    pub fn new(limits: Limits) -> Budget {
        Budget::in_run(limits, Arc::default())
    }

    /// A budget that charges the bytes it expands to `run` as well.
    pub fn in_run(limits: Limits, run: Arc<RunBytes>) -> Budget {
        Budget {
            limits,
            run,
            expanded: Cell::new(0),
            members: Cell::new(0),
            halted: Cell::new(false),
            stats: RefCell::new(ArchiveStats::default()),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// True once a limit that ends the whole top-level archive tripped.
    pub fn halted(&self) -> bool {
        self.halted.get()
    }

    pub fn into_stats(self) -> ArchiveStats {
        let mut stats = self.stats.into_inner();
        stats.expanded_bytes = self.expanded.get();
        stats
    }

    fn record(&self, path: String, reason: ArchiveSkip) {
        let mut stats = self.stats.borrow_mut();
        *stats.skip_counts.entry(reason.label()).or_default() += 1;
        stats.incomplete += u64::from(reason.incomplete());
        if stats.skipped.len() < MAX_LISTED_SKIPS {
            stats.skipped.push(Skipped { path, reason });
        }
    }

    /// Takes a member slot, or records [`ArchiveSkip::TooManyMembers`] at
    /// `path` and halts.
    fn take_member(&self, path: &str) -> bool {
        let n = self.members.get() + 1;
        if n > self.limits.max_members {
            self.halt(path.to_string(), ArchiveSkip::TooManyMembers);
            return false;
        }
        self.members.set(n);
        true
    }

    /// Charges `n` expanded bytes to the archive and the run; the limit
    /// they spent, if any.
    fn charge(&self, n: u64) -> Option<ArchiveSkip> {
        let total = self.expanded.get() + n;
        self.expanded.set(total);
        if total > self.limits.max_total_bytes {
            return Some(ArchiveSkip::TooLarge);
        }
        if self.run.charge(n) > self.limits.max_run_bytes {
            return Some(ArchiveSkip::RunTooLarge);
        }
        None
    }

    fn halt(&self, path: String, reason: ArchiveSkip) {
        if !self.halted.replace(true) {
            self.record(path, reason);
        }
    }
}

/// Where we are: one open archive, its display path and its depth.
pub struct Scope<'b> {
    budget: &'b Budget,
    path: String,
    depth: u32,
}

impl<'b> Scope<'b> {
    /// The scope of a top-level archive, shown as `display` (its path).
    pub fn top(budget: &'b Budget, display: &str) -> Scope<'b> {
        Scope {
            budget,
            path: display.to_string(),
            depth: 1,
        }
    }

    /// The display path of this archive: `a.zip`, `a.zip!lib/b.jar`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Archives open at this level: 1 for the top-level archive.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn budget(&self) -> &'b Budget {
        self.budget
    }

    /// The display path of a member of this archive.
    pub fn member_path(&self, name: &[u8]) -> String {
        member_path(&self.path, name)
    }

    /// The scope of the archive held in member `name`, or
    /// [`ArchiveSkip::TooDeep`] (already recorded) past the depth limit.
    pub fn nested(&self, name: &[u8]) -> Result<Scope<'b>, ArchiveSkip> {
        let path = self.member_path(name);
        if self.depth >= self.budget.limits.max_depth {
            self.budget.record(path, ArchiveSkip::TooDeep);
            return Err(ArchiveSkip::TooDeep);
        }
        Ok(Scope {
            budget: self.budget,
            path,
            depth: self.depth + 1,
        })
    }

    /// Records a skip for member `name` of this archive.
    pub fn record(&self, name: &[u8], reason: ArchiveSkip) {
        self.budget.record(self.member_path(name), reason);
    }

    fn record_here(&self, reason: ArchiveSkip) {
        self.budget.record(self.path.clone(), reason);
    }
}

/// `ARCHIVE!MEMBER`, the member name escaped by [`escape_name`]. Nested
/// paths chain: `a.zip!lib/b.jar!c.properties`.
pub fn member_path(archive: &str, name: &[u8]) -> String {
    let mut path = String::with_capacity(archive.len() + 1 + name.len());
    path.push_str(archive);
    path.push('!');
    escape_name(name, &mut path);
    path
}

/// Appends a raw member name for display: UTF-8 as is, control characters
/// and bytes that are not UTF-8 as `\xNN`, so that a hostile name cannot
/// move the terminal cursor or forge a line of output.
pub fn escape_name(name: &[u8], out: &mut String) {
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
}

/// A member name that would escape an extraction directory: absolute
/// (`/x`, `\x`, `C:x`) or with a `..` component.
pub fn is_unsafe_name(name: &[u8]) -> bool {
    if name.starts_with(b"/") || name.starts_with(b"\\") {
        return true;
    }
    if name.len() >= 2 && name[0].is_ascii_alphabetic() && name[1] == b':' {
        return true;
    }
    name.split(|&b| b == b'/' || b == b'\\').any(|c| c == b"..")
}

/// What a callback tells the iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// End the iteration here (and every level above, in [`walk`]).
    Stop,
}

/// One member, handed to the callback with a reader of its content.
#[derive(Debug)]
pub struct Member<'a> {
    /// The name as stored, raw bytes (zip names may be CP437 or UTF-8, tar
    /// names anything). Display it with [`Scope::member_path`].
    pub name: &'a [u8],
    /// The size the archive declares, if it declares one. Informational:
    /// the limits are enforced on the bytes read.
    pub size: Option<u64>,
}

/// `Read + Seek`, as a trait object.
pub trait ReadSeek: Read + Seek {}
impl<T: Read + Seek + ?Sized> ReadSeek for T {}

/// An archive's bytes. Zip reads its central directory at the end, so give
/// it `Seekable` ([`spool`] turns a stream into one); a zip given as
/// `Stream` is read by its local headers, as a truncated zip is.
pub enum Source<'a> {
    Seekable(&'a mut dyn ReadSeek),
    Stream(&'a mut dyn Read),
}

/// The callback of [`for_each_member`]: the archive's scope, the member, a
/// reader of its content. Errors it returns that do not come from the
/// member's reader end the iteration and are returned.
pub type OnMember<'f> = dyn FnMut(&Scope<'_>, &Member<'_>, &mut dyn Read) -> io::Result<Flow> + 'f;

/// The callback of [`walk`]: a leaf member and its content.
pub type OnLeaf<'f> = dyn FnMut(&Leaf<'_>, &mut dyn Read) -> io::Result<Flow> + 'f;

/// A member that is not itself an archive, as [`walk`] hands it over.
#[derive(Debug)]
pub struct Leaf<'a> {
    /// `a.zip!lib/b.jar!c.properties`: see [`member_path`].
    pub path: &'a str,
    /// The size the archive declares, if any (not a limit: see [`Member`]).
    pub size: Option<u64>,
    /// Archives open around it: 1 for a member of the top-level archive.
    pub depth: u32,
}

/// Calls `on_member` for every file member of one archive, in archive
/// order, one at a time. Directories are passed over; links, encrypted
/// members and limit violations are recorded in the scope's [`Budget`].
///
/// Damaged or hostile archives are not errors: they end in skips. The
/// `Err` cases are the callback's own errors and failures to spool.
/// Returns [`Flow::Stop`] if the callback stopped or the budget halted.
pub fn for_each_member(
    kind: ArchiveKind,
    source: Source<'_>,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    if scope.budget.halted() {
        return Ok(Flow::Stop);
    }
    scope.budget.stats.borrow_mut().archives += 1;
    match (kind, source) {
        (ArchiveKind::Zip, Source::Seekable(src)) => zip_members(src, scope, on_member),
        (ArchiveKind::Zip, Source::Stream(src)) => zip_stream_members(src, scope, on_member),
        (ArchiveKind::Tar, Source::Seekable(src)) => tar_members(src, None, scope, on_member),
        (ArchiveKind::Tar, Source::Stream(src)) => tar_members(src, None, scope, on_member),
        (kind, Source::Seekable(src)) => compressed_members(kind, src, scope, on_member),
        (kind, Source::Stream(src)) => compressed_members(kind, src, scope, on_member),
    }
}

/// Walks one archive and everything nested in it, calling `on_leaf` with
/// the display path and content of every member that is not itself an
/// archive. A nested archive is recognised by its first bytes only
/// ([`sniff`]): a member misnamed `.jar` or `.tar` is scanned as the text
/// it is. A nested zip is [`spool`]ed (it needs random access), nested
/// streams are read through.
pub fn walk(
    kind: ArchiveKind,
    source: Source<'_>,
    scope: &Scope<'_>,
    on_leaf: &mut OnLeaf<'_>,
) -> io::Result<Flow> {
    for_each_member(kind, source, scope, &mut |scope, member, reader| {
        let mut head = Vec::with_capacity(SNIFF_LEN);
        reader.take(SNIFF_LEN as u64).read_to_end(&mut head)?;
        let mut rest = Cursor::new(&head[..]).chain(reader);
        let Some(kind) = sniff(&head) else {
            let leaf = Leaf {
                path: &scope.member_path(member.name),
                size: member.size,
                depth: scope.depth(),
            };
            return on_leaf(&leaf, &mut rest);
        };
        let Ok(child) = scope.nested(member.name) else {
            return Ok(Flow::Continue);
        };
        match kind {
            ArchiveKind::Zip => {
                let mut spooled = spool(&mut rest, scope.budget.limits.spool_memory)?;
                walk(kind, Source::Seekable(&mut spooled), &child, on_leaf)
            }
            _ => walk(kind, Source::Stream(&mut rest), &child, on_leaf),
        }
    })
}

/// Bytes held in memory up to a size, in an anonymous temp file beyond: a
/// nested zip made seekable. The temp file has no name (deleted on
/// creation), so nothing is left behind even on a crash.
pub enum Spooled {
    Memory(Cursor<Vec<u8>>),
    File(File),
}

impl Read for Spooled {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Spooled::Memory(c) => c.read(buf),
            Spooled::File(f) => f.read(buf),
        }
    }
}

impl Seek for Spooled {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Spooled::Memory(c) => c.seek(pos),
            Spooled::File(f) => f.seek(pos),
        }
    }
}

/// Reads `reader` to its end into memory if it fits in `memory_limit`
/// bytes, else into `tempfile::tempfile()`; positioned at the start.
pub fn spool(reader: &mut dyn Read, memory_limit: usize) -> io::Result<Spooled> {
    let mut buf = Vec::new();
    reader.take(memory_limit as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() <= memory_limit {
        return Ok(Spooled::Memory(Cursor::new(buf)));
    }
    let mut file = tempfile::tempfile()?;
    file.write_all(&buf)?;
    drop(buf);
    io::copy(reader, &mut file)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(Spooled::File(file))
}

// ---------------------------------------------------------------------------
// Metering: every member byte passes here.

/// The state of one metering reader, apart from the reader so that it can
/// be inspected after the reader was moved into a decoder or a tar archive.
struct Meter<'m> {
    budget: &'m Budget,
    /// Charge the bytes to [`Limits::max_total_bytes`]: false for a stream
    /// whose members are charged one by one.
    charge: bool,
    read: Cell<u64>,
    /// The first failure: a tripped limit or the inner reader's error.
    /// Sticky, so that a callback ignoring errors cannot read on.
    fault: Cell<Option<ArchiveSkip>>,
    /// Tar only: `Some(start)` while the tar crate reads headers, which
    /// must end within [`MAX_TAR_HEADER_BYTES`] of `start`.
    header_start: Cell<Option<u64>>,
}

impl<'m> Meter<'m> {
    fn new(budget: &'m Budget, charge: bool) -> Meter<'m> {
        Meter {
            budget,
            charge,
            read: Cell::new(0),
            fault: Cell::new(None),
            header_start: Cell::new(None),
        }
    }

    fn fault(&self) -> Option<ArchiveSkip> {
        let fault = self.fault.take();
        self.fault.set(fault.clone());
        fault
    }

    fn trip(&self, reason: ArchiveSkip) -> io::Error {
        let err = io::Error::other(reason.to_string());
        // The first fault is the cause; later ones are its echoes.
        let first = self.fault.take().unwrap_or(reason);
        self.fault.set(Some(first));
        err
    }

    fn check(&self, n: u64) -> io::Result<()> {
        let read = self.read.get() + n;
        self.read.set(read);
        if self.charge {
            if let Some(spent) = self.budget.charge(n) {
                return Err(self.trip(spent));
            }
        }
        if let Some(start) = self.header_start.get() {
            if read - start > MAX_TAR_HEADER_BYTES {
                return Err(self.trip(ArchiveSkip::Corrupt(format!(
                    "tar headers longer than {MAX_TAR_HEADER_BYTES} bytes"
                ))));
            }
        }
        Ok(())
    }
}

/// A reader whose bytes are checked by a [`Meter`].
struct Metered<'m, R> {
    inner: R,
    meter: &'m Meter<'m>,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(fault) = self.meter.fault() {
            return Err(io::Error::other(fault.to_string()));
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.meter.check(n as u64)?;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                let reason = if e.kind() == io::ErrorKind::UnexpectedEof {
                    ArchiveSkip::Truncated
                } else {
                    ArchiveSkip::Corrupt(e.to_string())
                };
                self.meter.trip(reason);
                Err(e)
            }
        }
    }
}

/// Notes that its reader reached the end.
struct EndWatch<'c, R> {
    inner: R,
    at_end: &'c Cell<bool>,
}

impl<R: Read> Read for EndWatch<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.at_end.set(true);
        }
        Ok(n)
    }
}

/// How handing one member to the callback ended.
enum Delivered {
    Flow(Flow),
    /// The member's reader failed: a tripped limit or bad data.
    Failed(ArchiveSkip),
}

/// Hands one member to the callback through a charging [`Meter`].
/// `outer` is the meter of the stream the member is read from, whose fault
/// (a spent limit, a truncated gzip) explains a failure better than the
/// member's own.
fn deliver(
    scope: &Scope<'_>,
    member: &Member<'_>,
    reader: &mut dyn Read,
    outer: Option<&Meter<'_>>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Delivered> {
    let meter = Meter::new(scope.budget, true);
    let mut metered = Metered {
        inner: reader,
        meter: &meter,
    };
    scope.budget.stats.borrow_mut().members += 1;
    let result = on_member(scope, member, &mut metered);
    let fault = outer.and_then(Meter::fault).or_else(|| meter.fault());
    match (result, fault) {
        (_, Some(fault)) => Ok(Delivered::Failed(fault)),
        (Ok(flow), None) => Ok(Delivered::Flow(flow)),
        (Err(e), None) => Err(e),
    }
}

/// How an archive whose data broke ends: the walk goes on with the next
/// member of the archive above, unless an archive-wide limit halted it.
fn ended(scope: &Scope<'_>) -> Flow {
    if scope.budget.halted() {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

/// True for the limits that end the whole top-level archive.
fn archive_wide(reason: &ArchiveSkip) -> bool {
    matches!(reason, ArchiveSkip::TooLarge | ArchiveSkip::RunTooLarge)
}

/// Records a member failure; true if the rest must be skipped because the
/// limit that tripped was archive-wide.
fn record_failure(scope: &Scope<'_>, name: &[u8], reason: ArchiveSkip) -> bool {
    if archive_wide(&reason) {
        scope.budget.halt(scope.member_path(name), reason);
        return true;
    }
    scope.record(name, reason);
    scope.budget.halted()
}

// ---------------------------------------------------------------------------
// zip

fn zip_error(e: zip::result::ZipError) -> ArchiveSkip {
    match e {
        zip::result::ZipError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            ArchiveSkip::Truncated
        }
        zip::result::ZipError::UnsupportedArchive(what) => ArchiveSkip::Unsupported(what.into()),
        e => ArchiveSkip::Corrupt(e.to_string()),
    }
}

/// Delivers one member of a zip read by random access, where a member that
/// fails ends itself only; [`Flow::Stop`] when the walk must stop.
fn deliver_zip(
    scope: &Scope<'_>,
    name: &[u8],
    size: u64,
    reader: &mut dyn Read,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    let member = Member {
        name,
        size: Some(size),
    };
    Ok(match deliver(scope, &member, reader, None, on_member)? {
        Delivered::Flow(flow) => flow,
        Delivered::Failed(reason) => match record_failure(scope, name, reason) {
            true => Flow::Stop,
            false => Flow::Continue,
        },
    })
}

fn zip_members(
    src: &mut dyn ReadSeek,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    // The `zip` crate parses the whole central directory before the first
    // member (about 600 bytes of memory an entry): one that declares more
    // entries than the member limit allows is read an entry at a time
    // instead, up to the limit.
    if let Some(dir) = zip_directory(src)? {
        if dir.entries > scope.budget.limits.max_members {
            return zip_directory_members(src, &dir, scope, on_member);
        }
    }
    let mut zip = match zip::ZipArchive::new(&mut *src) {
        Ok(zip) => zip,
        Err(e) => {
            // No central directory, typically a truncated download: the
            // local headers still lead to the members before the cut.
            scope.record_here(ArchiveSkip::Corrupt(format!("no central directory: {e}")));
            src.seek(SeekFrom::Start(0))?;
            return zip_stream_members(src, scope, on_member);
        }
    };
    // Members whose directory entry points to no local header: looked for
    // by their local header once the directory is done.
    let mut lost: Vec<(Vec<u8>, ArchiveSkip)> = Vec::new();
    for index in 0..zip.len() {
        if scope.budget.halted() || !scope.budget.take_member(scope.path()) {
            return Ok(Flow::Stop);
        }
        let meta = zip.by_index_raw(index).map(|raw| {
            let links = raw.is_symlink();
            let name = raw.name_raw().to_vec();
            (name, raw.size(), raw.is_dir(), links, raw.encrypted())
        });
        let (name, size) = match meta {
            Ok((_, _, true, _, _)) => continue,
            Ok((name, _, _, true, _)) => {
                scope.record(&name, ArchiveSkip::SymlinkMember);
                continue;
            }
            Ok((name, _, _, _, true)) => {
                scope.record(&name, ArchiveSkip::Encrypted);
                continue;
            }
            Ok((name, size, ..)) => (name, size),
            Err(e) => {
                let name = zip.name_for_index(index).unwrap_or_default();
                lost.push((name.as_bytes().to_vec(), zip_error(e)));
                continue;
            }
        };
        if is_unsafe_name(&name) {
            scope.record(&name, ArchiveSkip::UnsafeName);
        }
        let mut file = match zip.by_index(index) {
            Ok(file) => file,
            Err(e) => {
                scope.record(&name, zip_error(e));
                continue;
            }
        };
        if deliver_zip(scope, &name, size, &mut file, on_member)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    drop(zip);
    zip_lost_members(src, lost, scope, on_member)
}

/// Where a zip's central directory is and how many entries it declares,
/// from its end-of-central-directory record (and its zip64 record, when it
/// has one).
struct Directory {
    entries: u64,
    /// The offset of the first entry, in the file.
    start: u64,
    /// What to add to an offset the zip declares to get one in the file:
    /// the bytes before the zip (a self-extracting stub).
    shift: u64,
}

fn le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// The [`Directory`] of a zip, if its end record is found.
fn zip_directory(src: &mut dyn ReadSeek) -> io::Result<Option<Directory>> {
    const EOCD: &[u8] = b"PK\x05\x06";
    let len = src.seek(SeekFrom::End(0))?;
    // The record is 22 bytes and a comment of up to 64 KiB, which is
    // usually empty: the last 22 bytes are tried first.
    let mut tail_len = len.min(22);
    let mut tail = vec![0; tail_len as usize];
    src.seek(SeekFrom::Start(len - tail_len))?;
    src.read_exact(&mut tail)?;
    if !tail.starts_with(EOCD) {
        tail_len = len.min(22 + 0xffff);
        tail.resize(tail_len as usize, 0);
        src.seek(SeekFrom::Start(len - tail_len))?;
        src.read_exact(&mut tail)?;
    }
    let Some(at) = tail.windows(4).rposition(|w| w == EOCD) else {
        return Ok(None);
    };
    let Some(record) = tail.get(at..at + 22) else {
        return Ok(None);
    };
    let eocd = len - tail_len + at as u64;
    let directory = |entries: u64, size: u64, offset: u64, end: u64| Directory {
        entries,
        start: end.saturating_sub(size),
        shift: end.saturating_sub(size).saturating_sub(offset),
    };
    let small = directory(
        le(&record[10..12]),
        le(&record[12..16]),
        le(&record[16..20]),
        eocd,
    );
    // A zip64 locator just before the record gives where the zip64 record
    // is, which holds the 64-bit count, size and offset.
    let Some(locator) = eocd.checked_sub(20) else {
        return Ok(Some(small));
    };
    let mut loc = [0u8; 20];
    src.seek(SeekFrom::Start(locator))?;
    src.read_exact(&mut loc)?;
    let record64 = le(&loc[8..16]);
    if &loc[..4] != b"PK\x06\x07" || record64 > locator.saturating_sub(56) {
        return Ok(Some(small));
    }
    let mut rec = [0u8; 56];
    src.seek(SeekFrom::Start(record64))?;
    src.read_exact(&mut rec)?;
    if &rec[..4] != b"PK\x06\x06" {
        return Ok(Some(small));
    }
    let big = directory(
        le(&rec[32..40]),
        le(&rec[40..48]),
        le(&rec[48..56]),
        record64,
    );
    Ok(Some(Directory {
        entries: small.entries.max(big.entries),
        ..big
    }))
}

/// The content of the member whose local header is at `at`, `packed`
/// bytes compressed with `method` (as the central directory says: a local
/// header written before its data, with a data descriptor, has no sizes).
/// Stored and deflated members; no CRC check (only the scan reads them).
fn zip_local_data<'s>(
    src: &'s mut dyn ReadSeek,
    at: u64,
    packed: u64,
    method: u64,
) -> Result<Box<dyn Read + 's>, ArchiveSkip> {
    let corrupt = |e: io::Error| ArchiveSkip::Corrupt(e.to_string());
    let mut fixed = [0u8; 30];
    src.seek(SeekFrom::Start(at)).map_err(corrupt)?;
    src.read_exact(&mut fixed)
        .map_err(|_| ArchiveSkip::Truncated)?;
    if &fixed[..4] != b"PK\x03\x04" {
        return Err(ArchiveSkip::Corrupt(
            "no local header where the directory says".into(),
        ));
    }
    let skip = le(&fixed[26..28]) + le(&fixed[28..30]);
    src.seek(SeekFrom::Current(skip as i64)).map_err(corrupt)?;
    let data = src.take(packed);
    match method {
        0 => Ok(Box::new(data)),
        8 => Ok(Box::new(flate2::read::DeflateDecoder::new(data))),
        other => Err(ArchiveSkip::Unsupported(format!(
            "compression method {other}"
        ))),
    }
}

/// The members of a zip whose directory declares more entries than the
/// member limit: its entries read one at a time, each member read at its
/// local header with the sizes the directory gives ([`zip_local_data`]: so
/// members written with a data descriptor are read too), until the limit;
/// the `zip` crate would parse the whole directory first.
fn zip_directory_members(
    src: &mut dyn ReadSeek,
    dir: &Directory,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    let mut pos = dir.start;
    let mut read = 0u64;
    loop {
        if scope.budget.halted() {
            return Ok(Flow::Stop);
        }
        let mut fixed = [0u8; 46];
        src.seek(SeekFrom::Start(pos))?;
        if src.read_exact(&mut fixed).is_err() || &fixed[..4] != b"PK\x01\x02" {
            // The end of the directory (its end records follow it), unless it ends before the
            // entries it declared: a damaged entry, and the members after it go unread.
            if read < dir.entries {
                scope.record_here(ArchiveSkip::Corrupt(format!(
                    "the central directory ends after {read} of its {} entries",
                    dir.entries
                )));
            }
            return Ok(Flow::Continue);
        }
        read += 1;
        let (name_len, extra_len) = (le(&fixed[28..30]) as usize, le(&fixed[30..32]) as usize);
        let mut name = vec![0u8; name_len + extra_len];
        if src.read_exact(&mut name).is_err() {
            scope.record_here(ArchiveSkip::Truncated);
            return Ok(Flow::Continue);
        }
        let extra = name.split_off(name_len);
        pos += 46 + (name_len + extra_len) as u64 + le(&fixed[32..34]);
        if !scope.budget.take_member(scope.path()) {
            return Ok(Flow::Stop);
        }
        let (mut size, mut packed, mut local) =
            (le(&fixed[24..28]), le(&fixed[20..24]), le(&fixed[42..46]));
        // Zip64: the fields that are all ones are in extra field 1, in order.
        let mut rest = &extra[..];
        while rest.len() >= 4 {
            let (id, len) = (le(&rest[..2]), le(&rest[2..4]) as usize);
            let data = rest.get(4..4 + len).unwrap_or_default();
            if id == 1 {
                let mut values = data.chunks_exact(8).map(le);
                for field in [&mut size, &mut packed, &mut local] {
                    if *field == 0xffff_ffff {
                        *field = values.next().unwrap_or(*field);
                    }
                }
            }
            rest = rest.get(4 + len..).unwrap_or_default();
        }
        let unix_mode = le(&fixed[38..42]) >> 16;
        if name.ends_with(b"/") {
            continue;
        }
        if fixed[5] == 3 && unix_mode & 0o170000 == 0o120000 {
            scope.record(&name, ArchiveSkip::SymlinkMember);
            continue;
        }
        if le(&fixed[8..10]) & 1 != 0 {
            scope.record(&name, ArchiveSkip::Encrypted);
            continue;
        }
        if is_unsafe_name(&name) {
            scope.record(&name, ArchiveSkip::UnsafeName);
        }
        let method = le(&fixed[10..12]);
        let mut file = match zip_local_data(src, local.saturating_add(dir.shift), packed, method) {
            Ok(file) => file,
            Err(reason) => {
                scope.record(&name, reason);
                continue;
            }
        };
        if deliver_zip(scope, &name, size, &mut file, on_member)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
}

/// Delivers the members whose central-directory entry led to no local
/// header (a wrong offset: hostile, or a zip edited in place) by finding
/// their local headers ([`find_local_headers`]); those not found are
/// recorded with the error that lost them.
fn zip_lost_members(
    src: &mut dyn ReadSeek,
    lost: Vec<(Vec<u8>, ArchiveSkip)>,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    if lost.is_empty() {
        return Ok(Flow::Continue);
    }
    let names: Vec<&[u8]> = lost.iter().map(|(name, _)| &name[..]).collect();
    let found = find_local_headers(src, &names)?;
    for ((name, error), at) in lost.iter().zip(found) {
        if scope.budget.halted() {
            return Ok(Flow::Stop);
        }
        let Some(at) = at else {
            scope.record(name, error.clone());
            continue;
        };
        src.seek(SeekFrom::Start(at))?;
        let mut reader = &mut *src;
        let mut file = match zip::read::read_zipfile_from_stream(&mut reader) {
            Ok(Some(file)) => file,
            Ok(None) => {
                scope.record(name, error.clone());
                continue;
            }
            Err(e) => {
                scope.record(name, zip_error(e));
                continue;
            }
        };
        if file.is_dir() {
            continue;
        }
        if file.is_symlink() {
            scope.record(name, ArchiveSkip::SymlinkMember);
            continue;
        }
        if is_unsafe_name(name) {
            scope.record(name, ArchiveSkip::UnsafeName);
        }
        let size = file.size();
        if deliver_zip(scope, name, size, &mut file, on_member)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// The offset of the first local file header (`PK\3\4`) named `names[i]`,
/// for each `i`, found by reading the whole zip once for the signature.
/// Each header is used once, in file order, so that two members of the same
/// name find their own.
fn find_local_headers(src: &mut dyn ReadSeek, names: &[&[u8]]) -> io::Result<Vec<Option<u64>>> {
    const SIG: &[u8] = b"PK\x03\x04";
    const CHUNK: usize = 1 << 16;
    let mut found = vec![None; names.len()];
    let len = src.seek(SeekFrom::End(0))?;
    let mut buf = vec![0u8; CHUNK + SIG.len() - 1];
    let mut pos = 0u64;
    while pos < len {
        let want = ((len - pos) as usize).min(buf.len());
        src.seek(SeekFrom::Start(pos))?;
        src.read_exact(&mut buf[..want])?;
        let hits: Vec<u64> = buf[..want]
            .windows(SIG.len())
            .enumerate()
            .filter(|(_, w)| *w == SIG)
            .map(|(i, _)| pos + i as u64)
            .collect();
        for at in hits {
            // The fixed part is 30 bytes; the name's length is at 26.
            let mut fixed = [0u8; 30];
            src.seek(SeekFrom::Start(at))?;
            if src.read_exact(&mut fixed).is_err() {
                continue;
            }
            let name_len = usize::from(u16::from_le_bytes([fixed[26], fixed[27]]));
            let mut name = vec![0u8; name_len];
            if src.read_exact(&mut name).is_err() {
                continue;
            }
            let slot = names
                .iter()
                .zip(&found)
                .position(|(n, f)| f.is_none() && **n == name[..]);
            if let Some(i) = slot {
                found[i] = Some(at);
            }
        }
        if found.iter().all(Option::is_some) || pos + want as u64 >= len {
            break;
        }
        // The next chunk starts where a signature cut at this one's end
        // would start.
        pos += (want - (SIG.len() - 1)) as u64;
    }
    Ok(found)
}

/// A zip read front to back by its local headers: no seeking, but members
/// written with a data descriptor (sizes after the data) end the walk.
fn zip_stream_members(
    src: &mut dyn Read,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    // A member cut short fails its CRC check before anything says "end of
    // file": seeing the end of the input tells truncation from corruption.
    let at_end = Cell::new(false);
    let mut src = EndWatch {
        inner: src,
        at_end: &at_end,
    };
    let truncated = |reason: ArchiveSkip| {
        if at_end.get() {
            ArchiveSkip::Truncated
        } else {
            reason
        }
    };
    loop {
        if scope.budget.halted() || !scope.budget.take_member(scope.path()) {
            return Ok(Flow::Stop);
        }
        let mut file = match zip::read::read_zipfile_from_stream(&mut src) {
            Ok(Some(file)) => file,
            Ok(None) => return Ok(Flow::Continue),
            Err(e) => {
                scope.record_here(truncated(zip_error(e)));
                return Ok(Flow::Continue);
            }
        };
        let name = file.name_raw().to_vec();
        if file.is_dir() {
            continue;
        }
        if file.is_symlink() {
            scope.record(&name, ArchiveSkip::SymlinkMember);
            continue;
        }
        if is_unsafe_name(&name) {
            scope.record(&name, ArchiveSkip::UnsafeName);
        }
        let member = Member {
            name: &name,
            size: Some(file.size()),
        };
        match deliver(scope, &member, &mut file, None, on_member)? {
            Delivered::Flow(Flow::Continue) => {}
            Delivered::Flow(Flow::Stop) => return Ok(Flow::Stop),
            Delivered::Failed(reason) => {
                record_failure(scope, &name, truncated(reason));
                // The stream is not positioned at a header any more.
                return Ok(ended(scope));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// tar, gzip, bzip2

/// Iterates a tar stream. `stream` is the meter of the compressed stream
/// it is read from, if any; else a meter is made here for the headers.
///
/// Members are read as GNU tar reads them: each for the size its header
/// declares. A size that lies leaves the stream between two members; the
/// blocks there that are not headers are skipped to the next valid header
/// (GNU tar's "Skipping to next header"), and reported, since the content
/// they hold belongs to no member.
fn tar_members(
    src: &mut dyn Read,
    stream: Option<&Meter<'_>>,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    let own;
    let meter = match stream {
        Some(meter) => meter,
        None => {
            own = Meter::new(scope.budget, false);
            &own
        }
    };
    // The end of the input tells a header size past it (truncated) from a
    // block that is not a header (skipped).
    let at_end = Cell::new(false);
    let mut input = Metered {
        inner: EndWatch {
            inner: src,
            at_end: &at_end,
        },
        meter,
    };
    // Blocks skipped since the last member, and that member's name.
    let mut junk = 0u64;
    let mut last: Vec<u8> = Vec::new();
    loop {
        let start = meter.read.get();
        meter.header_start.set(Some(start));
        // A fresh `tar::Archive` per run of valid headers: the crate ends
        // its iteration at the first bad header, having read just that
        // block, so the next one starts at the block after it.
        let mut archive = tar::Archive::new(&mut input);
        // Read on past end-of-archive blocks, as `tar -i` does: members
        // after a zero block (concatenated tars, or one put there to hide
        // them from scanners) are found, and damage after them is reported.
        archive.set_ignore_zeros(true);
        let flow = tar_entries(
            &mut archive,
            meter,
            &at_end,
            scope,
            &mut last,
            &mut junk,
            on_member,
        )?;
        match flow {
            Some(flow) => {
                report_junk(scope, &last, junk);
                return Ok(flow);
            }
            // A bad header cost at least its block (no progress would mean
            // a reader that fails without reading). Skipped bytes are
            // expanded bytes too: charged, lest a stream of junk run on.
            None if meter.read.get() > start => {
                junk += 1;
                // What was read since the last member ended: padding and
                // the block that is not a header.
                let skipped = meter.read.get() - meter.header_start.get().unwrap_or(start);
                if let Some(spent) = scope.budget.charge(skipped) {
                    report_junk(scope, &last, junk);
                    scope.budget.halt(scope.path.clone(), spent);
                    return Ok(Flow::Stop);
                }
            }
            None => {
                report_junk(scope, &last, junk);
                scope.record_here(ArchiveSkip::Corrupt("unreadable tar header".into()));
                return Ok(ended(scope));
            }
        }
    }
}

/// Records the blocks skipped after member `last` (GNU tar: "Skipping to
/// next header"), if any.
fn report_junk(scope: &Scope<'_>, last: &[u8], junk: u64) {
    if junk == 0 {
        return;
    }
    let mut after = String::new();
    escape_name(last, &mut after);
    let what = if last.is_empty() {
        "at the start".to_string()
    } else {
        format!("after member {after}")
    };
    let (blocks, are) = if junk == 1 {
        ("block", "is not a tar header")
    } else {
        ("blocks", "are not tar headers")
    };
    scope.record_here(ArchiveSkip::Corrupt(format!(
        "{junk} {blocks} {what} {are} (a member's size lies?): skipped to the next header, as GNU \
         tar does"
    )));
}

/// The entries of one run of valid tar headers: `Some(flow)` when the
/// stream ended (or a limit, or the callback, ended it), `None` at a block
/// that is not a header.
#[allow(clippy::too_many_arguments)]
fn tar_entries<R: Read>(
    archive: &mut tar::Archive<R>,
    meter: &Meter<'_>,
    at_end: &Cell<bool>,
    scope: &Scope<'_>,
    last: &mut Vec<u8>,
    junk: &mut u64,
    on_member: &mut OnMember<'_>,
) -> io::Result<Option<Flow>> {
    let entries = match archive.entries() {
        Ok(entries) => entries,
        Err(e) => {
            scope.record_here(ArchiveSkip::Corrupt(e.to_string()));
            return Ok(Some(Flow::Continue));
        }
    };
    for entry in entries {
        if scope.budget.halted() {
            return Ok(Some(Flow::Stop));
        }
        let mut entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                if let Some(reason) = meter.fault() {
                    if archive_wide(&reason) {
                        scope.budget.halt(scope.path.clone(), reason);
                    } else {
                        scope.record_here(reason);
                    }
                    return Ok(Some(ended(scope)));
                }
                if at_end.get() {
                    // A size past the end (GNU tar: "Unexpected EOF").
                    scope.record_here(ArchiveSkip::Truncated);
                    return Ok(Some(ended(scope)));
                }
                return Ok(None);
            }
        };
        meter.header_start.set(None);
        report_junk(scope, last, std::mem::take(junk));
        if !scope.budget.take_member(scope.path()) {
            return Ok(Some(Flow::Stop));
        }
        let name = entry.path_bytes().into_owned();
        let kind = entry.header().entry_type();
        if kind.is_symlink() || kind.is_hard_link() {
            scope.record(&name, ArchiveSkip::SymlinkMember);
        } else if kind.is_file() || kind.is_contiguous() || kind.is_gnu_sparse() {
            if is_unsafe_name(&name) {
                scope.record(&name, ArchiveSkip::UnsafeName);
            }
            let member = Member {
                name: &name,
                size: Some(entry.size()),
            };
            match deliver(scope, &member, &mut entry, Some(meter), on_member)? {
                Delivered::Flow(Flow::Continue) => {}
                Delivered::Flow(Flow::Stop) => return Ok(Some(Flow::Stop)),
                Delivered::Failed(reason) => {
                    record_failure(scope, &name, reason);
                    // Whatever broke (the stream, a limit) breaks the rest.
                    return Ok(Some(ended(scope)));
                }
            }
        }
        // The tar crate would skip the rest of the entry itself; draining
        // it here means the bytes it reads until the next entry are headers
        // only, which the meter bounds. A sparse entry's holes are made up
        // by the tar crate, not read: charged, lest a terabyte of holes
        // spin here.
        let drain_meter = Meter::new(scope.budget, kind.is_gnu_sparse());
        let mut drain = Metered {
            inner: &mut entry,
            meter: &drain_meter,
        };
        if let Err(e) = drain_to_end(&mut drain) {
            let reason = meter
                .fault()
                .or_else(|| drain_meter.fault())
                .unwrap_or(ArchiveSkip::Corrupt(e.to_string()));
            record_failure(scope, &name, reason);
            return Ok(Some(ended(scope)));
        }
        *last = name;
        meter.header_start.set(Some(meter.read.get()));
    }
    Ok(Some(Flow::Continue))
}

/// Reads `reader` to its end and drops what it reads. Most members were
/// read whole already: a first read of a few bytes finds the end without
/// `io::copy`'s clearing of an 8 KiB buffer per call (as many instructions
/// as scanning a small member, under callgrind).
fn drain_to_end(reader: &mut dyn Read) -> io::Result<()> {
    let mut probe = [0u8; 16];
    loop {
        match reader.read(&mut probe) {
            Ok(0) => return Ok(()),
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    io::copy(reader, &mut io::sink()).map(drop)
}

/// The window a zstd frame header declares (`head` starts at the magic
/// number): the window descriptor's, or for a single-segment frame the
/// content size. `None` if `head` is too short to tell.
fn zstd_window(head: &[u8]) -> Option<u64> {
    let descriptor = *head.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let window = *head.get(5)?;
        let base = 1u64 << (10 + u64::from(window >> 3));
        return Some(base + base / 8 * u64::from(window & 7));
    }
    let dict_len = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let size_len = [1, 2, 4, 8][usize::from(descriptor >> 6)];
    let at = 5 + dict_len;
    let field = head.get(at..at + size_len)?;
    let mut bytes = [0u8; 8];
    bytes[..size_len].copy_from_slice(field);
    let size = u64::from_le_bytes(bytes);
    Some(if size_len == 2 { size + 256 } else { size })
}

/// A gzip, bzip2, xz or zstd stream: a compressed tar, or one compressed
/// file.
fn compressed_members(
    kind: ArchiveKind,
    src: &mut dyn Read,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    // A zstd frame header is at most 18 bytes: read before the decoder is
    // made, whose window would be allocated as declared.
    let mut frame = Vec::with_capacity(18);
    if kind == ArchiveKind::Zstd {
        src.take(18).read_to_end(&mut frame)?;
        if let Some(window) = zstd_window(&frame).filter(|&w| w > MAX_ZSTD_WINDOW) {
            scope.record_here(ArchiveSkip::WindowTooLarge(window));
            return Ok(Flow::Continue);
        }
    }
    let src = Cursor::new(frame).chain(src);
    // Multi-stream decoders: `cat a.gz b.gz`, pbzip2 and `xz -T` output
    // are valid. zstd: the first frame only (the zstd tool writes one).
    let mut decoder: Box<dyn Read> = match kind {
        ArchiveKind::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(src)),
        ArchiveKind::Xz => Box::new(lzma_rust2::XzReader::new(src, true)),
        ArchiveKind::Zstd => match ruzstd::decoding::StreamingDecoder::new(src) {
            Ok(decoder) => Box::new(decoder),
            Err(e) => {
                scope.record_here(ArchiveSkip::Corrupt(e.to_string()));
                return Ok(Flow::Continue);
            }
        },
        _ => Box::new(flate2::read::MultiGzDecoder::new(src)),
    };
    let meter = Meter::new(scope.budget, false);
    let mut head = Vec::with_capacity(SNIFF_LEN);
    let peeked = Metered {
        inner: &mut decoder,
        meter: &meter,
    }
    .take(SNIFF_LEN as u64)
    .read_to_end(&mut head);
    if peeked.is_err() {
        scope.record_here(meter.fault().unwrap_or(ArchiveSkip::Truncated));
        return Ok(Flow::Continue);
    }
    // The stream meter sees the head again through the chain.
    meter.read.set(0);
    if sniff(&head) == Some(ArchiveKind::Tar) {
        let mut rest = Cursor::new(&head[..]).chain(&mut decoder);
        return tar_members(&mut rest, Some(&meter), scope, on_member);
    }
    let name = single_member_name(scope.path());
    if !scope.budget.take_member(scope.path()) {
        return Ok(Flow::Stop);
    }
    let member = Member {
        name: name.as_bytes(),
        size: None,
    };
    let mut rest = Cursor::new(&head[..]).chain(Metered {
        inner: &mut decoder,
        meter: &meter,
    });
    match deliver(scope, &member, &mut rest, Some(&meter), on_member)? {
        Delivered::Flow(flow) => Ok(flow),
        Delivered::Failed(reason) => {
            record_failure(scope, name.as_bytes(), reason);
            Ok(ended(scope))
        }
    }
}

/// The member name of a compressed single file: the archive's own name
/// (after the last `!` and `/`) without its compression suffix, as
/// `gunzip` would name it.
fn single_member_name(archive_path: &str) -> String {
    let base = archive_path
        .rsplit(['!', '/'])
        .next()
        .unwrap_or(archive_path);
    let lower = base.to_ascii_lowercase();
    for (suffix, replacement) in [
        (".tgz", ".tar"),
        (".tbz2", ".tar"),
        (".tbz", ".tar"),
        (".txz", ".tar"),
        (".tzst", ".tar"),
        (".gz", ""),
        (".gzip", ""),
        (".bz2", ""),
        (".xz", ""),
        (".zst", ""),
        (".zstd", ""),
        (".z", ""),
    ] {
        if lower.ends_with(suffix) && lower.len() > suffix.len() {
            return format!("{}{replacement}", &base[..base.len() - suffix.len()]);
        }
    }
    base.to_string()
}
