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
//! without its suffix, as `gunzip` names it). Every stream or frame of a
//! file is read, as the tools read them (`cat a.gz b.gz`, pbzip2, `xz -T`,
//! pzstd and its leading skippable frame).
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
//!
//! # Files
//!
//! This file holds the walk's entry points and the types a caller meets;
//! one file per concern beside it: `kind` (which format), `limits`,
//! `budget` (what was spent and skipped), `skip` (why something was not
//! scanned), `scope` (display paths), `meter` (every member byte is charged
//! there), `spooled`, and one reader per format family (`zip_members`,
//! `tar_members`, `compressed`).

mod budget;
mod compressed;
mod kind;
mod limits;
mod meter;
mod scope;
mod skip;
mod spooled;
mod tar_members;
mod zip_members;

#[cfg(test)]
mod tests;

use std::io::{self, Cursor, Read, Seek};

pub use budget::{ArchiveStats, Budget, RunBytes, Skipped, MAX_LISTED_SKIPS};
pub use kind::{detect, kind_from_name, sniff, zip_behind_prefix, ArchiveKind, SNIFF_LEN};
pub use limits::{Limits, MAX_DEPTH, MAX_ZSTD_WINDOW};
pub use scope::{escape_name, is_unsafe_name, member_path, Scope};
pub use skip::{flag_for_label, label_incomplete, ArchiveSkip};
pub use spooled::{spool, Spooled};

use compressed::compressed_members;
use tar_members::tar_members;
use zip_members::{zip_members, zip_stream_members};

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
    pub path: &'a std::path::Path,
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
        // A member that breaks within its first bytes is still handed on
        // with what it yielded: its metered reader keeps failing after the
        // head (the fault is sticky), and the failure is recorded as the
        // member's when the callback's read meets it.
        let _ = reader.take(SNIFF_LEN as u64).read_to_end(&mut head);
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
