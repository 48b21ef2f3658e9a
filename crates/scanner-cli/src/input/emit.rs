//! [`Emit`]: the one way a source hands its work to the scan.
//!
//! Every [`Source`](super::Source) produces [`Item`]s into an [`Emit`]
//! ([`Source::emit`](super::Source::emit)): the walked tree, files named on
//! the command line or in `--files-from`, standard input and FIFOs, the files
//! `--diff` changed (all through the walk), the staged index, and the blobs
//! of one or many histories (local or cloned from a URL). The source says
//! what each item is keyed by ([`Key`]); the emitter decides, in one place,
//! for every source:
//!
//! 1. **Sharding** (`--shard K/N`): whether this process owns the item. A
//!    walked file is placed by size once the walk is whole (the shard
//!    planner balances bytes), a listed path by the hash of its path, a
//!    history blob by the hash of its id (a blob is listed once, whatever
//!    its paths). Items of another shard are not skips: nothing counts them.
//! 2. **Scope** ([`Scope::check_listed`](super::Scope::check_listed)) for
//!    what the source listed itself; a walk asks the scope as it walks
//!    (so an excluded directory is never entered), and its items arrive in
//!    scope already. What is out of scope is counted as a skip. A history,
//!    which lists each blob once, asks [`Emit::scope`] before it takes a
//!    blob as seen: one met first at a path out of scope is still listed
//!    at a path in scope.
//! 3. **The memory budget**: [`Emit::item`] and [`Emit::send_batch`] block
//!    while too many tasks, or too many bytes of in-memory items, are in
//!    flight, and return false (`None`) once the scan is stopping: the
//!    source then returns at once.
//!
//! The emitter is implemented once, by the pipeline (`pipeline::emit`);
//! sources know nothing of tasks, workers or shards. A source that schedules
//! its own work (history groups the blobs of a delta chain,
//! `history::BlobGroups`) asks [`Emit::admits`] about each item and
//! sends its batches with [`Emit::send_batch`], which tells it when each is
//! done.
//!
//! # Who emits, and who does not
//!
//! Every source that runs on the producer thread emits here, and only
//! here: those listed above, and the roots of a walk split among the
//! workers ([`Emit::dir`]). Two kinds of work are found by the workers
//! themselves, while they run a task: the subdirectories and files of a
//! directory the split walk lists (`pipeline::dirs`), and the members of
//! an archive (`pipeline::worker`, `scan_archive`). They do not go through
//! `Emit`; they go through the pipeline's worker-side emitter
//! (`pipeline::emit::WorkerEmitter`), which shares with the producer's
//! what applies to them (the scope check of a listed path and its skip
//! count, the warnings, the stop) and writes once, for both, "queue it on
//! this worker's deque under a permit, or do it here". Not an `Emit`, nor
//! a second trait here, because:
//!
//! 1. **The contracts differ.** [`Emit::item`] and [`Emit::send_batch`]
//!    block while the budget is full: that is what keeps a source from
//!    running ahead. A worker must never block on permits: those it would
//!    wait for may sit in the tasks queued behind it on its own deque (with
//!    one worker, always). A worker that cannot queue a batch of members
//!    scans it at once, and scanning needs the worker's engine scratch and
//!    reader, which `input` does not have: the fallback is not an emit, it
//!    is the worker's own work.
//! 2. **A large member cannot be an [`Item`].** A member over 1 MiB (or
//!    one that lies about its size) is a reader borrowed from the
//!    decompressor for one call of the walk's callback, neither `'static`
//!    nor `Send`: it is scanned there, through the walking worker's chunk
//!    reader. Only small members, copied into a batch buffer they share,
//!    become items ([`Content::Member`](super::Content::Member)).
//! 3. **A directory task yields no items.** It yields its files as
//!    [`walk::Files`](super::walk::Files) (their names packed, each an item
//!    only when it is scanned) and its subdirectories as [`DirTask`]s, all
//!    under a clone of their root's permit. Through [`Emit::item`], every
//!    pending file would hold an item and a permit: the memory bound of the
//!    split walk (`pipeline::dirs`, "Memory") is that it does not.
//! 4. **The other decisions do not apply.** No shard: a split walk is never
//!    sharded, and a member belongs to its archive's shard. No planner, no
//!    byte charge for a directory. What is left is the scope of a member's
//!    path and the skips and warnings, which the worker-side emitter counts
//!    into the same report.

use std::path::{Path, PathBuf};

use scanner_scheduler::PermitWatch;

use super::skip::Skip;
use super::walk::DirTask;
use super::{Item, Scope};

/// What an item is sharded by, and whether the scope has been asked about it.
#[derive(Clone, Copy, Debug)]
pub enum Key<'a> {
    /// A file a walk of `roots` yielded (or a root itself: a named file,
    /// standard input, a FIFO). The walk applied the scope. Keyed by its
    /// path relative to the root it is under; with `--shard`, files larger
    /// than `shard::LARGE` are dealt by size once the walk is done, so
    /// walked items are placed only when the source returns.
    Walked { roots: &'a [PathBuf] },
    /// A path the source listed itself (a staged blob): asked the scope,
    /// keyed by the path as listed.
    Listed,
    /// A blob of a history, by its id: asked the scope by its path, keyed by
    /// the id.
    Blob(&'a [u8]),
}

/// Where a source emits its items (see the module docs). Implemented by the
/// pipeline for the producer thread, which it may block (the budget);
/// tests implement it to record what a source emits. Work found by a
/// worker does not come here ("Who emits, and who does not").
pub trait Emit {
    /// Queues `item` if this scan is to scan it (this shard's, in scope),
    /// else counts its skip, if any. False once the scan is stopping.
    fn item(&mut self, item: Item, key: Key<'_>) -> bool;

    /// For a source that batches its items itself: whether the item at
    /// `path` is this scan's (this shard's, in scope); when it is out of
    /// scope its skip is counted. Not for [`Key::Walked`], which is placed
    /// only once the walk is whole: walked items go through [`Emit::item`].
    fn admits(&mut self, path: &Path, key: Key<'_>) -> bool;

    /// The scope [`Emit::admits`] checks a listed path against, for a source
    /// that must know it before it decides what is new: a history lists each
    /// blob once, and a blob first met at a path out of scope is still new
    /// at a path in scope. `None`: every path is in scope.
    fn scope(&self) -> Option<&Scope>;

    /// Sends items that [`Emit::admits`] admitted as one task, charged their
    /// bytes together. A watch that tells when the task is done, or `None`
    /// once the scan is stopping.
    fn send_batch(&mut self, items: Vec<Item>) -> Option<PermitWatch>;

    /// Counts `n` entries the source itself left out, for `reason`.
    fn skip(&mut self, reason: Skip, n: u64);

    /// Something the user should hear about, as
    /// `scanner: warning: <path>: <reason>` (an empty path: the reason says
    /// it all). `is_error`: content in scope was not read (exit 2 unless
    /// `--ignore-errors`).
    fn warn(&mut self, path: PathBuf, reason: String, is_error: bool);

    /// A file the source left out (and counts with [`Emit::skip`]), named
    /// for `-v`'s `scanner: not scanned: PATH: REASON`.
    fn not_scanned(&mut self, path: PathBuf, reason: Skip);

    /// True once the scan is stopping (Ctrl-C, stdout closed, a failed
    /// worker): a source checks it where it could go on long without
    /// emitting.
    fn stopped(&self) -> bool;

    /// Workers taking the items: a source spreads its batches over them.
    fn workers(&self) -> usize;

    /// Whether a walk hands its directories to the workers
    /// ([`Emit::dir`]) rather than listing them itself: with more than one
    /// worker and no `--shard` (whose planner needs the whole walk before
    /// it places a file).
    fn splits_walk(&self) -> bool;

    /// Queues a directory for a worker to list (the split walk,
    /// `pipeline::dirs`): the files it finds are queued by that worker, with
    /// the same scope and budget. False once the scan is stopping.
    fn dir(&mut self, dir: DirTask) -> bool;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::skip::SkipCounts;
    use crate::input::{walk, Content, Provenance, Scope, Source};

    /// Records what a source emits, and stops after `limit` items.
    #[derive(Default)]
    struct Recorder {
        items: Vec<(PathBuf, String)>,
        skips: SkipCounts,
        limit: usize,
    }

    impl Emit for Recorder {
        fn item(&mut self, item: Item, key: Key<'_>) -> bool {
            let key = match key {
                Key::Walked { roots } => format!("walked {roots:?}"),
                Key::Listed => "listed".into(),
                Key::Blob(id) => format!("blob {}", id.len()),
            };
            self.items.push((item.provenance.path, key));
            !self.stopped()
        }
        fn admits(&mut self, _: &Path, _: Key<'_>) -> bool {
            true
        }
        fn scope(&self) -> Option<&Scope> {
            None
        }
        fn send_batch(&mut self, _: Vec<Item>) -> Option<PermitWatch> {
            None
        }
        fn skip(&mut self, reason: Skip, n: u64) {
            self.skips.add(reason, n);
        }
        fn warn(&mut self, _: PathBuf, _: String, _: bool) {}
        fn not_scanned(&mut self, _: PathBuf, _: Skip) {}
        fn stopped(&self) -> bool {
            self.items.len() >= self.limit
        }
        fn workers(&self) -> usize {
            1
        }
        fn splits_walk(&self) -> bool {
            false
        }
        fn dir(&mut self, _: DirTask) -> bool {
            unreachable!("the recorder walks on its own thread")
        }
    }

    /// Each source says what its items are keyed by, hands over the skips
    /// it counted itself, and returns once the emitter says stop.
    #[test]
    fn sources_key_their_items_and_stop_when_told() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.txt", "b.txt", "c.txt"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let root = dir.path().to_path_buf();
        let mut out = Recorder {
            limit: 2,
            ..Recorder::default()
        };
        let source = Source::Paths(vec![root.clone()]);
        let walked = source.emit(&walk::WalkOptions::default(), &Scope::default(), &mut out);
        assert!(walked.unwrap().is_none());
        assert_eq!(out.items.len(), 2, "stopped after two: {:?}", out.items);
        assert_eq!(out.items[0].1, format!("walked {:?}", [&root]));

        let item = |p: &str| Item {
            provenance: Provenance::path(p),
            content: Content::Bytes(Vec::new()),
        };
        let mut skipped = SkipCounts::default();
        skipped.add(Skip::Unmerged, 2);
        let mut out = Recorder {
            limit: 10,
            ..Recorder::default()
        };
        let source = Source::Items {
            items: vec![item("x/a.env"), item("b.env")],
            skipped,
        };
        source
            .emit(&walk::WalkOptions::default(), &Scope::default(), &mut out)
            .unwrap();
        let got: Vec<(&str, &str)> = out
            .items
            .iter()
            .map(|(p, k)| (p.to_str().unwrap(), k.as_str()))
            .collect();
        assert_eq!(got, [("x/a.env", "listed"), ("b.env", "listed")]);
        assert_eq!(out.skips.get(Skip::Unmerged), 2);
    }
}
