//! Git history input (`scanner scan --history`): every blob ever committed, each once.
//!
//! # Protocol
//!
//! [`enumerate`] runs three short pipelines over the repository named by
//! [`HistoryOptions::repo`] (`git -C PATH`, so a subdirectory, a bare repository or a
//! worktree whose `.git` is a file all work: git finds the repository):
//!
//! 1. Unless [`HistoryOptions::revs`] is given, `git log -g --ignore-missing refs/stash` lists
//!    the stash and its reflog entries: `--all` covers `refs/stash` (every ref under `refs/`,
//!    plus `HEAD`) but not `stash@{1}` and older, which live only in the stash's reflog. This
//!    step is also where "not a git repository" surfaces.
//! 2. `git rev-list --reverse --topo-order --parents --format=...` streams every selected
//!    commit with its parents, its tree and its author's `%an`, `%ae`, raw `%ad` (shown as
//!    `%aI` shows it, `format::date`) and `%s`; or,
//!    by default (every ref, no `--since`; [`HistoryOptions::list_threads`]), the same list is
//!    made in-process, in the same order (`order.rs`: the commits at the front of the packs
//!    read by many threads, ordered as git orders them, the fields as git prints them,
//!    `format.rs`). A parser thread diffs each commit's tree against its first parent's, in-process
//!    ([`super::commits`]: git's tree order and modes, the changes `git log --raw -r --root
//!    --no-renames --diff-merges=first-parent` prints; the whole tree for a root commit or
//!    a shallow boundary commit, which has no parent). Parents come before children, so the
//!    first commit that shows a blob is the earliest that introduced it. Every blob of
//!    every listed commit's tree is either in its first parent's tree or in this diff, so
//!    by induction from the roots no blob is missed; a merge contributes only what it did
//!    not take from its first parent (what its other parents brought is already seen, what
//!    the merge itself resolved is new). A `seen` map of object ids to a 64-bit hash of the
//!    path each was first yielded at (20 + 8 bytes + 1 control byte per distinct blob, in a
//!    table at most 7/8 full: about 33-66 bytes per distinct blob, 33-66 MB for a million
//!    blobs) makes each blob yielded once, and tells whether a modification's old blob was
//!    yielded at the same path (see "Versions of a file"). Deletions carry no content and
//!    are skipped; submodule entries (mode `160000`, a commit id of another repository) are
//!    counted and skipped; symlinks (mode `120000`) are yielded: their blob is the target
//!    path, and a target can be a token.
//! 3. The parser sends each new blob to the calling thread, which sizes it from its pack
//!    entry's header (see "Sizes" below) and calls `on_blob`. A blob that cannot be sized
//!    (missing in a partial clone, corrupt) is yielded all the same, at size 0: the worker
//!    that reads it reports it, naming it, and the scan goes on (exit 2 at the end). The
//!    parser holds the trees of the last 65,536 commits it listed (a parent listed before
//!    them is read again: about 56 bytes each, 3.7 MB at most) and its reader's caches of
//!    trees (1.5 MiB); memory is otherwise the `seen` set plus the 4,096 blobs the channel
//!    to the caller holds at most. That bound is the back-pressure: a slow `on_blob` fills
//!    the channel, which blocks the parser, which blocks `git rev-list`. With
//!    [`HistoryOptions::chains`], the sizer also remembers up to 2^18 chain starts (a table
//!    of 2^19 slots of 17 bytes: 9 MB at most). `git rev-list`
//!    itself holds what it parsed of every listed commit (its object table, and the list
//!    `--reverse` outputs from): 20 MB at its peak on the 20,000-commit synthetic history,
//!    growing with the number of commits, about 0.5 KB each (`git log --raw`, which diffed
//!    the trees before, peaked at 52 MB there). Listed in-process, the commits cost about
//!    200 bytes each in this process (`order.rs`, "Memory"), let go as the walk takes them.
//! 4. On many cores ([`HistoryOptions::diff_threads`]) the parser and the sizer are the
//!    serial part of the scan, and split: the parser only reads `git rev-list` and hands
//!    the commits out, 16 in a row to each diff thread, which diffs them and sizes their
//!    blobs; the caller puts the commits back in git's order and keeps the `seen` map. The
//!    same blobs come out in the same order. Each diff thread holds at most 16 commits
//!    queued and the caller's channel 32 per thread, so memory stays bounded as above.
//!
//! Reading blob contents is the expensive part (inflating zlib, applying deltas) and is done
//! in parallel by the caller, in-process: one [`ObjectStore`] per repository (gitoxide's
//! `ThreadSafeRepository`, opened once at the git directory git resolved, and the
//! repository's packs), one [`BlobReader`] per worker thread on it, each with its own caches
//! of rebuilt and whole objects ([`super::pack`]), or, with more workers than cores, one pair
//! of caches shared by all ([`BlobReader::with_store`]).
//!
//! # Versions of a file
//!
//! Each edit of a file is a new blob, so a secret that survives fifty edits is in fifty
//! blobs. A blob B gets a [`HistoryBlob::base`] A when its commit's raw entry is a
//! modification (`M`) of a regular file at path P from A, the commit is not a merge, and A
//! was itself first yielded at P. The caller then reports only the findings of B whose
//! match intersects what changed in B since A: the lines of B that are not lines of A kept
//! in order (`input/history/versions.rs`), each run widened by one byte on each side (a match
//! whose boundary assertion looks at the first changed byte). A finding wholly in lines B
//! kept from A is in A, on the same line, at the same path, and was reported with A (by
//! induction, back to the version that introduced it). Everything else is new and reported
//! whole: an added file, a copy to a new path (with `--no-renames` a rename is a delete and
//! an add), what a merge resolved, a blob whose old version was first seen elsewhere or
//! lies outside the selected range (`--since`, `A..B`).
//!
//! # Why git for the refs and the revisions, and in-process reading for the rest
//!
//! git's own revision parsing, rev-list options and reflog handling are the interface users
//! know, so git still says where the walk starts (the refs, the reflogs, the stash), and
//! named revisions and `--since` are still listed by git. Ordering every commit before the
//! first one is known is the serial start of a history scan on many cores, so by default
//! the commits are read and ordered in-process (`order.rs`, which says why and how it keeps
//! git's order). Diffing their trees moved in-process: `git log
//! --raw` spent 670 M instructions on ripgrep's 4,528 commits and our parser 58 M more on
//! its output; `git rev-list` with the fields above spends 326 M and the in-process diff
//! 139 M (callgrind). On the 20,000-commit synthetic history of `scripts/bench-history.sh`,
//! where the walk is a larger share, the scan's CPU time fell by a quarter
//! (docs/performance.md, "History"). Reading commits in-process too would read every commit
//! twice (`rev-list` parses each to order them). Measured again with our pack reader (2026-11-24): without
//! `--format`, `rev-list` executes 87 M instructions fewer on ripgrep and 265 M fewer on
//! the synthetic history, and holds 4 MB less there, but reading each commit a second time
//! costs 255 M and 681 M (each is a zlib stream of its own, and building its Huffman
//! tables costs about as much as inflating it): the scan with its git children went from
//! 2.76 to 2.93 G and from 5.18 to 5.59 G. Kept with git then; since 2026-11-27 the commits
//! are read once, in-process, and `git rev-list` is not run at all (`order.rs`).
//!
//! Reading contents is where the CPU goes: through `git cat-file --batch` every byte also
//! crossed a pipe twice, and the git children ran on the other core even with
//! `--threads 1`. Read in-process, every blob of the ripgrep history costs 0.13-0.18 s of
//! CPU against 0.35-0.39 s through cat-file, and 0.18-0.22 s against 0.73 s on the
//! synthetic history (the module's `bench` test prints every reader: cat-file, gitoxide,
//! and our pack reader, which the workers use: 0.134 s against gitoxide's 0.177 s on
//! ripgrep, where each version is the deep end of a delta chain, see [`super::pack`]).
//!
//! # Sizes
//!
//! The budget charges each blob its size before a worker reads it, so the walk sizes every
//! blob it yields. [`BlobReader::header`] reads the size from the pack entry's header, or,
//! for a delta, from the first bytes of its instructions (the size it rebuilds to): one
//! short inflate, no chain followed, no object rebuilt. A delta's kind is checked when the
//! worker reads it. `git cat-file --batch-check`, which did this before, follows each
//! delta chain to its end to learn the object's type: on the synthetic history's 60,200
//! blobs it executed 735 M instructions where the probe executes 79 M (callgrind, `--threads
//! 1`, the scan with its git children: 5.83 → 5.18 G, and 5-8% less time at 2 threads); on
//! ripgrep's 7,066, 104 M against 95 M (2.768 → 2.759 G, time unchanged within noise). And a
//! blob git cannot find no longer ends the walk.
//!
//! With [`HistoryOptions::chains`], the walk also finds where each blob's delta chain
//! starts ([`BlobReader::chain_start`]: entry headers down to the object stored whole, each
//! offset passed remembered), and the history source ([`emit_repos`]) holds the blobs of
//! one chain back until it has many of them, then sends them together through one group of
//! batches, one batch at a time (`BlobGroups`, "Chains held back"): a worker then rebuilds
//! each chain from its own caches, while it is still there, rather than after another
//! worker did or after the chain left its caches.
//!
//! # Isolation
//!
//! The repository's own configuration is honoured (alternates, `safe.directory`), but every
//! output knob that user configuration could flip is pinned on the command line
//! (`--no-color`, `--no-show-signature`, `--no-notes`, `--encoding=UTF-8`; `%an` and `%ae`
//! never go through the mailmap, and the diff is ours). Inherited `GIT_DIR`-style variables
//! (set when we run inside a hook) are removed so that the path argument decides the
//! repository, and `GIT_NO_LAZY_FETCH=1` keeps a partial clone off the network: a missing
//! object is an error, never a fetch, and the scan goes on. A missing blob is reported by
//! the worker that reads it. A commit whose tree is missing (`--filter=tree:0`) is counted
//! ([`HistoryStats::unlisted`]) and the first one named; a child of it is listed whole, as
//! a root is, so every blob of a tree that is there is scanned. A parent commit that cannot
//! be read is cut where the commits are listed in-process, as a shallow boundary is, and
//! named ([`HistoryStats::cut_parents`]); where git lists them, its walk ends there
//! ([`HistoryError::MissingObject`]). Replace refs
//! (`git replace`) are ignored, by git and by the reader: they change what git shows for an
//! object, not what a clone or a push carries, so a secret hidden behind one is still in
//! the history. A commit that a replace ref grafts in is scanned too (`--all` starts from
//! `refs/replace/` as from every ref). A blob or tree that a ref names without a commit
//! (a tag of a blob) is not in the walk: [`ref_blobs`] lists those blobs, and the history
//! source scans the ones the walk did not yield. The in-process reader opens the git directory git
//! resolved, ignores the environment and the user's and system's configuration, and is
//! built without gitoxide's network features: it cannot fetch either, and a blob it cannot
//! find is `NotFound`.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::thread;

mod error;
mod format;
mod groups;
mod oid;
mod order;
mod provenance;
mod running;
mod source;
mod store;
pub mod versions;
mod walk;

pub use error::*;
pub(crate) use groups::BlobGroups;
pub use oid::*;
pub use provenance::*;
pub(crate) use running::*;
pub use source::emit_repos;
pub use store::*;
pub use walk::*;

/// The commit a blob is attributed to. Shared by every blob that commit introduced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommitInfo {
    /// 40 hex digits.
    pub id: String,
    pub author_name: String,
    pub author_email: String,
    /// Strict ISO 8601 (as git 2.47's `%aI`), which is RFC 3339: `2005-04-07T22:13:13+02:00`,
    /// `Z` for UTC. A date git cannot show in its own zone (before the epoch there) is shown
    /// in UTC; one it cannot show at all (past 9999) is empty.
    pub author_date: String,
    /// The subject paragraph, on one line.
    pub summary: String,
}

/// One distinct blob, as first introduced.
#[derive(Debug, Clone)]
pub struct HistoryBlob {
    pub oid: Oid,
    pub size: u64,
    /// The path in [`HistoryBlob::commit`], raw bytes as git stores them (not UTF-8 checked).
    pub path: Vec<u8>,
    /// True for a symlink: the content is its target.
    pub symlink: bool,
    pub commit: Arc<CommitInfo>,
    /// The blob this one modifies, when its findings were already reported there: `commit`
    /// changed [`HistoryBlob::path`] from `base` to this blob (status `M`, a regular file on
    /// both sides, not a merge), and `base` was itself yielded at that same path. Findings
    /// that lie wholly in lines this blob kept from `base` exist in `base` at the same path
    /// and were reported with it; only the rest are new here. `None`:
    /// everything in the blob is new (see the module docs, "Versions of a file").
    pub base: Option<Oid>,
    /// Where its delta chain starts ([`BlobReader::chain_start`]), set by the walk with
    /// [`HistoryOptions::chains`]: blobs with the same start are cheapest read one after
    /// the other by one reader. `None` when it is not packed, or not asked for.
    pub chain: Option<u64>,
}

/// What to enumerate.
#[derive(Debug, Clone, Default)]
pub struct HistoryOptions {
    /// Any path inside a work tree, a bare repository or a `.git` directory.
    pub repo: PathBuf,
    /// `git rev-list` arguments (`main`, `origin/main..HEAD`, `^v1.0`). Empty: every ref
    /// (`--all`) and every stash entry.
    pub revs: Vec<String>,
    /// Only commits more recent than this (`git log --since`, e.g. `2024-01-01`, `2.weeks`).
    /// Their blobs are still found against their (excluded) parents: only what changed.
    pub since: Option<String>,
    /// Also every commit mentioned by any reflog (`git log --reflog`): amended, reset or
    /// rebased-away commits that are still in the local object store. Default off: a clone's
    /// reflogs say nothing the refs do not.
    pub reflogs: bool,
    /// Find where each blob's delta chain starts ([`HistoryBlob::chain`]), for sending the
    /// blobs of a chain together, to one worker (`BlobGroups`): a walk of entry headers,
    /// remembered; 30 M instructions on the synthetic history of `scripts/bench-history.sh`
    /// (0.7% of a one-worker scan), 3 M on ripgrep's. Worth it with one worker too: moto's
    /// history took 6.5 s at `--threads 1` with its chains held together, 9.0 s without.
    pub chains: bool,
    /// Threads that diff the commits' trees and size their blobs, beside the one that reads
    /// `git rev-list` (0: that one thread diffs, and the caller's sizes): the walk is the
    /// serial part of a history scan on many cores (docs/performance.md, "History on many
    /// cores"). The blobs, their order and the counts are the same.
    pub diff_threads: usize,
    /// Threads that read the commits in-process, which are then ordered as `git rev-list
    /// --topo-order` orders them (`order.rs`): the scan no longer waits for `git rev-list`
    /// to order every commit before it writes one. 0: `git rev-list` lists them. Either way
    /// the same commits, in the same order, with the same fields.
    pub list_threads: usize,
}

/// Counts from one [`enumerate`] run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryStats {
    /// Commits walked.
    pub commits: u64,
    /// Distinct blobs yielded (including symlink targets).
    pub blobs: u64,
    /// Total size of the yielded blobs.
    pub blob_bytes: u64,
    /// Added or modified entries whose blob had already been yielded.
    pub duplicate_blobs: u64,
    /// Distinct submodule commits (mode `160000` entries), skipped: not in this repository.
    pub submodules: u64,
    /// Distinct symlink blobs yielded.
    pub symlinks: u64,
    /// Deleted entries, skipped.
    pub deletions: u64,
    /// Commits whose own tree could not be read whole (not fetched in a partial clone, or
    /// corrupt): the blobs only they hold are not scanned. An error (exit 2).
    pub unlisted: u64,
    /// The first of them, described.
    pub first_unlisted: Option<String>,
    /// Refs left out: they name an object the repository does not have (git's `--all` dies
    /// on one). An error each (exit 2); every other ref's history is scanned.
    pub broken_refs: Vec<String>,
    /// Parents that could not be read (missing, corrupt), each with its child, as hex ids:
    /// cut, as a shallow clone's boundary is (git's walk dies on one). An error each (exit
    /// 2); the history that is there is scanned.
    pub cut_parents: Vec<(String, String)>,
    /// True when `on_blob` asked to stop before the end.
    pub stopped: bool,
}

impl HistoryStats {
    /// Adds another repository's counts (a directory of repositories).
    pub fn add(&mut self, other: &HistoryStats) {
        self.commits += other.commits;
        self.blobs += other.blobs;
        self.blob_bytes += other.blob_bytes;
        self.duplicate_blobs += other.duplicate_blobs;
        self.submodules += other.submodules;
        self.symlinks += other.symlinks;
        self.deletions += other.deletions;
        self.unlisted += other.unlisted;
        if self.first_unlisted.is_none() {
            self.first_unlisted.clone_from(&other.first_unlisted);
        }
        self.broken_refs.extend(other.broken_refs.iter().cloned());
        self.cut_parents.extend(other.cut_parents.iter().cloned());
        self.stopped |= other.stopped;
    }
}

#[cfg(test)]
mod tests;
