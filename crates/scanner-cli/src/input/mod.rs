//! Inputs: everything the scanner reads, in one model.
//!
//! Every source — walked files, explicit files and file lists, staged blobs,
//! the files `--diff` changed, standard input and named streams, the blobs
//! of a repository's history — yields
//! [`Item`]s: a [`Provenance`] (what the report calls it and where it came
//! from) and a [`Content`] (how a worker reads it), into one [`Emit`]
//! ([`Source::emit`]; see [`emit`] for what the emitter decides: shard,
//! scope, budget). The pipeline knows nothing else about sources: a new
//! input is a new [`Source`] variant that emits items, and a new way to read
//! bytes is a new [`Content`] variant that the worker (`pipeline::worker`)
//! reads through the same chunk reader. Nothing here imports the pipeline,
//! the output or the report.
//!
//! # Scope: one filter for every source
//!
//! [`Scope`] holds what the user said must not be scanned: `--exclude`
//! globs, the config's `allow_paths`, the run's own report and
//! `--max-filesize`. It is asked about every path, so that
//! `--staged --exclude vendor/` skips `vendor/a.env` exactly as a walk does:
//! by the walk as it walks (an excluded directory is never entered), by the
//! emitter for every path another source lists.
//! Ignore files (`.gitignore`, `.scannerignore`) belong to the walk only:
//! staged blobs are what git will commit, whatever an ignore file says.

pub mod archive;
pub mod commits;
pub mod emit;
pub mod git;
pub mod history;
pub mod inflate;
pub mod pack;
pub mod remote;
pub mod scope;
pub mod skip;
#[cfg(test)]
pub(crate) mod test_git;
pub mod utf16;
pub mod walk;

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::messages::escape_path;

pub use emit::{Emit, Key};
pub use history::{CommitInfo, HistoryOptions, Oid, VersionControl};
pub use scope::Scope;

/// Where an item came from, as the report names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The path as the report shows it: as reached from the PATH argument,
    /// repository-relative for git sources, `<stdin>` (or `--stdin-name`)
    /// for standard input. Raw bytes on Unix.
    pub path: PathBuf,
    /// The commit that introduced the content (history scans); `None` for
    /// the working tree, the index and streams.
    pub commit: Option<Arc<CommitInfo>>,
    /// Bytes of `path` before what path rules and allowlists see ([`Provenance::rule_path`]),
    /// and `--exclude`, `allow_paths` and `.gitleaksignore` ([`Provenance::scope_path`]):
    /// the name that leads a history repository's paths when several are scanned (a remote
    /// one's URL), which a gitleaks config's `^config/` does not expect. 0 elsewhere.
    pub lead: usize,
}

impl Provenance {
    pub fn path(path: impl Into<PathBuf>) -> Provenance {
        Provenance {
            path: path.into(),
            commit: None,
            lead: 0,
        }
    }

    /// `shown` (this provenance's path as a string) as path rules and allowlists see it: from
    /// the repository's root, without the [`lead`](Provenance::lead).
    pub fn rule_path<'a>(&self, shown: &'a str) -> &'a str {
        without_lead(shown, self.lead)
    }

    /// This provenance's path as `--exclude`, `allow_paths` and `.gitleaksignore` see it: from
    /// the repository's root, as the rules do ([`Provenance::rule_path`]).
    pub fn scope_path(&self) -> Cow<'_, Path> {
        scope_path(&self.path, self.lead)
    }
}

/// `path`, led by `lead` bytes of a repository's name ([`Provenance::lead`]), from the
/// repository's root.
pub fn scope_path(path: &Path, lead: usize) -> Cow<'_, Path> {
    match lead {
        0 => Cow::Borrowed(path),
        _ => Cow::Owned(PathBuf::from(without_lead(&path.to_string_lossy(), lead))),
    }
}

fn without_lead(shown: &str, lead: usize) -> &str {
    shown.get(lead..).unwrap_or(shown)
}

/// How a worker reads an item.
pub enum Content {
    /// A file on disk: opened, sniffed and read in chunks by the worker,
    /// split into ranges when large.
    File(PathBuf),
    /// A file the walker found under `root` without `--follow`, at the
    /// item's [`Provenance::path`] (not copied here: one path per walked
    /// file): opened relative to `root` refusing any symbolic link on the
    /// way, so a directory swapped for a link after the listing is not
    /// followed out of the tree (see `pipeline::reader::open_beneath`).
    WalkedFile { root: Arc<std::path::Path> },
    /// Bytes already in memory (a staged blob). Charged to the budget's
    /// byte limit while in flight.
    Bytes(Vec<u8>),
    /// A stream read once, front to back, in chunks (standard input, a
    /// FIFO): never held whole in memory.
    Stream(Box<dyn Read + Send>),
    /// A blob in a git repository, read in-process by the worker through
    /// its own reader on the repository's shared object store (so objects
    /// inflate on every worker in parallel). Charged to the byte budget by
    /// its size: the worker holds it in memory while scanning it, unless it
    /// is above the split threshold and stored whole, then inflated as it is
    /// scanned (`BlobReader::stream`; docs/architecture.md, "Memory bound").
    GitBlob {
        repo: Arc<crate::input::history::ObjectStore>,
        oid: Oid,
        /// 0 when not known (a staged blob): the worker reads it from the blob's header.
        size: u64,
        /// The version of the same file this blob modifies
        /// ([`crate::input::history::HistoryBlob::base`]): only findings in what changed
        /// since it are looked for (`input/history/versions.rs`).
        base: Option<Oid>,
    },
    /// A small archive member, read whole into memory by the worker that
    /// walks the archive so that any worker can scan it (decompression is
    /// sequential, scanning is not). Read like the member it was: through
    /// the chunk reader, binary-sniffed, no `--max-filesize` (that applies
    /// to the archive). `cut`: the archive's limits ended the read early;
    /// what was read is scanned and the member reported with 0 bytes, as
    /// a member read inline is. Charged to a budget by its length.
    ///
    /// The member is `data[range]`: the members of one batch are read one
    /// after another into one buffer, which they share (a fresh `Vec` per
    /// member cost 2.5% of the instructions of a scan of `.crate` files).
    Member {
        data: Arc<Vec<u8>>,
        range: std::ops::Range<usize>,
        cut: bool,
    },
}

/// One thing to scan.
pub struct Item {
    pub provenance: Provenance,
    pub content: Content,
}

impl Item {
    /// Bytes this item holds in memory while queued (the budget's byte
    /// charge): what a file or stream holds is its worker's buffer instead.
    pub fn held_bytes(&self) -> u64 {
        match &self.content {
            Content::Bytes(b) => b.len() as u64,
            Content::Member { range, .. } => range.len() as u64,
            Content::GitBlob { size, .. } => *size,
            Content::File(_) | Content::WalkedFile { .. } | Content::Stream(_) => 0,
        }
    }
}

/// What to scan: each variant emits [`Item`]s through one [`Emit`]
/// ([`Source::emit`]).
pub enum Source {
    /// Walk these roots (files named explicitly are scanned even if an
    /// ignore file excludes them).
    Paths(Vec<PathBuf>),
    /// Items already listed (staged blobs): paths are repository-relative.
    /// `skipped`: what the lister already left out (unmerged paths).
    Items {
        items: Vec<Item>,
        skipped: skip::SkipCounts,
    },
    /// Every blob of a repository's history, each once, attributed to the
    /// commit that introduced it (`--history`, see [`history`]). Several
    /// repositories (`--history DIR` on a directory of repositories): each
    /// one's paths are prefixed with its name (the directory's name).
    History(Vec<HistoryRepo>),
}

impl Source {
    /// Every root named on the command line must exist before anything is
    /// reported: a typo in the last argument must not leave half a report
    /// behind an exit 2. The roots from index `listed_from` on came from
    /// `--files-from`: one that is gone is a warning when it is walked, and
    /// so is a named one that is there but cannot be looked at
    /// ([`walk::root_is_missing`]).
    pub fn check(&self, listed_from: Option<usize>) -> anyhow::Result<()> {
        if let Source::Paths(roots) = self {
            let named = &roots[..listed_from.unwrap_or(roots.len()).min(roots.len())];
            for root in named.iter().filter(|r| r.as_os_str() != "-") {
                match std::fs::metadata(root) {
                    Err(e) if walk::root_is_missing(&e) => {
                        return Err(e).with_context(|| escape_path(root));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Prepares for `threads` workers, before they start: tunes the
    /// allocator for what they allocate (the `malloc` module; their arenas
    /// are made at their first allocation): a history rebuilds objects of
    /// megabytes, the other sources read into the workers' buffer pools. A
    /// history's stores learn how many workers will read them
    /// ([`history::ObjectStore::expect_workers`]).
    pub fn prepare(&self, threads: usize) {
        match self {
            Source::History(repos) => {
                crate::malloc::for_rebuilt_objects(threads);
                for repo in repos {
                    repo.store.expect_workers(threads);
                }
            }
            Source::Paths(_) | Source::Items { .. } => crate::malloc::cap_arenas(threads),
        }
    }

    /// Emits every item of this source into `out`, which applies scope,
    /// sharding and the budget ([`emit`]). A walk is given `scope` to walk
    /// with; the other sources list paths, which `out` checks. Returns the
    /// history's counts for a history.
    ///
    /// Errors: a root that cannot be read, a single repository whose
    /// history cannot be listed. What goes wrong with one input is a
    /// warning through `out`, and the scan goes on.
    pub fn emit(
        self,
        walk_opts: &walk::WalkOptions,
        scope: &Scope,
        out: &mut dyn Emit,
    ) -> anyhow::Result<Option<history::HistoryStats>> {
        match self {
            Source::Paths(roots) => {
                // The walk calls one closure or the other, never both at once.
                let split = out.splits_walk() && walk::can_split(walk_opts);
                let shared = std::cell::RefCell::new(&mut *out);
                let item = |item| {
                    shared
                        .borrow_mut()
                        .item(item, Key::Walked { roots: &roots })
                };
                let warn = |w: walk::WalkWarning| match w.skipped {
                    Some(skip) => shared.borrow_mut().not_scanned(w.path, skip),
                    None => shared.borrow_mut().warn(w.path, w.reason, w.is_error),
                };
                let skips = if split {
                    // The workers list the directories; the roots are queued here.
                    let dir = |dir| shared.borrow_mut().dir(dir);
                    walk::walk_split(&roots, walk_opts, scope, item, dir, warn)?
                } else {
                    walk::walk(&roots, walk_opts, scope, item, warn)?
                };
                for (reason, n) in skips.nonzero() {
                    out.skip(reason, n);
                }
                Ok(None)
            }
            Source::Items { items, skipped } => {
                for (reason, n) in skipped.nonzero() {
                    out.skip(reason, n);
                }
                for item in items {
                    if !out.item(item, Key::Listed) {
                        break;
                    }
                }
                Ok(None)
            }
            Source::History(repos) => Ok(Some(history::emit_repos(repos, out)?)),
        }
    }
}

/// One repository of [`Source::History`].
pub struct HistoryRepo {
    /// What its paths are led by: its directory's name, when a directory of repositories is
    /// scanned; `None` for a single repository.
    pub prefix: Option<PathBuf>,
    /// What messages name it by: its path ([`HistoryOptions::repo`]), or a remote one's URL
    /// without credentials ([`HistoryRepo::named`]), never the directory it was cloned into.
    pub name: PathBuf,
    pub options: HistoryOptions,
    /// Its object store, shared by every worker.
    pub store: std::sync::Arc<history::ObjectStore>,
    /// Its walk, being started before the scan on a thread of its own (see
    /// [`history::Started`]); otherwise the scan starts it.
    pub started: Option<std::thread::JoinHandle<Result<history::Started, history::HistoryError>>>,
    /// What must be done before its history can be read (a remote repository's clone),
    /// not yet done.
    fetch: Fetch,
}

/// What a [`HistoryRepo`]'s fetch leaves to keep for as long as its object store lives,
/// so until the last of its blobs is read: a remote repository's clone, removed when it
/// drops.
pub type Kept = Box<dyn Send + Sync>;

/// A [`HistoryRepo`]'s fetch: none, to be run, or running.
enum Fetch {
    Done,
    Pending(Box<dyn FnOnce() -> Result<Kept, history::HistoryError> + Send>),
    Running(Running),
}

impl Fetch {
    /// Runs the fetch, or waits for it, and leaves what it keeps with `store`.
    fn finish(self, store: &history::ObjectStore) -> Result<(), history::HistoryError> {
        let kept = match self {
            Fetch::Done => return Ok(()),
            Fetch::Pending(fetch) => fetch()?,
            Fetch::Running(running) => running.join()?,
        };
        store.keep(kept);
        Ok(())
    }
}

/// A fetch running on a thread of its own. One the scan no longer needs (stopped before
/// it reached the repository) is waited for when it drops: a clone polls the stop, so
/// that is soon, and it removes what it wrote before the directory of clones is removed.
struct Running(Option<std::thread::JoinHandle<Result<Kept, history::HistoryError>>>);

impl Running {
    fn join(mut self) -> Result<Kept, history::HistoryError> {
        let thread = self.0.take().expect("joined once");
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(thread) = self.0.take() {
            let _ = thread.join();
        }
    }
}

impl HistoryRepo {
    pub fn new(prefix: Option<PathBuf>, options: HistoryOptions) -> HistoryRepo {
        let store = std::sync::Arc::new(history::ObjectStore::new(&options.repo));
        HistoryRepo {
            prefix,
            name: options.repo.clone(),
            options,
            store,
            started: None,
            fetch: Fetch::Done,
        }
    }

    /// Names it by `name` in messages (a remote repository by its URL).
    pub fn named(mut self, name: PathBuf) -> HistoryRepo {
        self.name = name;
        self
    }

    /// Makes `fetch` run before its history is read, at the latest when the scan reaches
    /// it ([`HistoryRepo::fetch_early`]): a remote repository is cloned then, not before.
    /// What `fetch` returns lives as long as the object store.
    pub fn fetched_by(
        mut self,
        fetch: impl FnOnce() -> Result<Kept, history::HistoryError> + Send + 'static,
    ) -> HistoryRepo {
        self.fetch = Fetch::Pending(Box::new(fetch));
        self
    }

    /// Starts its fetch on a thread of its own, so that it overlaps the scan of the
    /// repository before it (a clone's network wait, a scan's CPU).
    pub fn fetch_early(&mut self) {
        self.fetch = match std::mem::replace(&mut self.fetch, Fetch::Done) {
            Fetch::Pending(fetch) => Fetch::Running(Running(Some(std::thread::spawn(fetch)))),
            other => other,
        };
    }

    /// Runs its fetch (or waits for it), then starts the walk: what the scan does when it
    /// reaches this repository, unless [`HistoryRepo::start_early`] did.
    pub fn start(self) -> Result<history::Started, history::HistoryError> {
        match self.started {
            Some(starting) => starting
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => {
                self.fetch.finish(&self.store)?;
                history::start(&self.options, &self.store)
            }
        }
    }

    /// Starts the walk and opens the object store now, on other threads and processes, so
    /// that both overlap what the caller does next (compiling the rules). Starting the walk
    /// lists the stash with git first: on a thread too, so that the rules' compiling does
    /// not wait for that process. Both wait for the fetch, if any.
    pub fn start_early(&mut self) {
        let (options, store) = (self.options.clone(), std::sync::Arc::clone(&self.store));
        let fetch = std::mem::replace(&mut self.fetch, Fetch::Done);
        self.started = Some(std::thread::spawn(move || {
            fetch.finish(&store)?;
            let opening = std::sync::Arc::clone(&store);
            std::thread::spawn(move || opening.preload());
            history::start(&options, &store)
        }));
    }
}
