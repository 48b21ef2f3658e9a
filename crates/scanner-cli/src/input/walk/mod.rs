//! The walker: which files are in scope, and a count of every one that is not.
//!
//! Without `--follow` (on Linux) the getdents walk (`plain.rs`) lists each
//! directory with raw `getdents64`, once, and applies the ignore files
//! itself (`IgnoreRules` in `rules.rs`, over the `ignore` crate's
//! `Gitignore` matchers, or a byte comparison for a file of plain names,
//! with the crate's precedence); with `--follow`, and
//! elsewhere, the single-threaded [`ignore::Walk`] walks. Both give the
//! same results in the same order (unit tests compare them event by
//! event), but where a repository tracks a path git's rules match, has
//! global excludes or a `.gitignore` that is a link (see below). The pipeline turns each file found into a task (`pipeline/`).
//!
//! # Who lists
//!
//! [`walk`] walks every root on the calling thread (the producer), depth
//! first (`PlainWalk`). [`walk_split`] walks only the roots themselves
//! and hands each directory root out as a [`DirTask`]: whoever runs it
//! (a worker, `pipeline/dirs.rs`) lists that one directory
//! ([`DirTask::list`]) and gets its files, its subdirectories as more
//! `DirTask`s, its skip counts and its warnings ([`Listing`]), so a tree
//! is listed by every worker at once. One per-entry decision (`classify`
//! in `plain.rs`: ignore rules, then `.git`, then the [`Scope`], then the
//! entry's type) serves both, so the split walk finds, skips, counts and
//! warns about exactly what the serial one does, in another order.
//!
//! **Rules inherited.** The rules in force in a directory are its
//! parent's plus its own ignore files, read when its listing names them
//! (`IgnoreRules::inside`); they link to the parent's through an `Arc`,
//! and the rules above the root (its parents' ignore files, the global
//! excludes) are read once per root and shared, narrowed to the lines
//! that can match below the root. A `DirTask` holds the
//! rules of its parent, so a directory's ignore files are read once, by
//! the task that lists it, and each subdirectory's task matches against
//! the whole chain, deepest first, as the serial walk does.
//!
//! **Descriptors.** The serial walk opens a directory relative to its
//! parent's descriptor (kept open down to depth 64); a `DirTask` holds no
//! descriptor and opens its directory by its whole path, in pieces under
//! `PATH_MAX` past it ([`long_path_pieces`]): the tasks pending in the
//! queues cost no descriptor, however many there are.
//!
//! # What is walked
//!
//! - Ignore files are honoured by default: `.gitignore` (also outside a git
//!   repository: `require_git(false)`), `.ignore`, `.git/info/exclude`, the
//!   global git excludes (`core.excludesFile`) and `.scannerignore` (same
//!   syntax, highest precedence). `--no-ignore` turns all of them off.
//!   As in git, no `.gitignore` or `info/exclude` above a repository's top
//!   (a directory holding `.git`) applies inside it: `~/.gitignore` does
//!   not reach `~/project` when that is a repository. `.ignore` and
//!   `.scannerignore` apply from every parent. As in git, git's own rules
//!   (`.gitignore`, `info/exclude`, the global excludes, anchored at the
//!   repository's top) never drop a path the repository's index tracks
//!   (`rules::Tracked`): below an ignored directory that holds one, only
//!   the tracked paths are walked. A `.gitignore` that is a symbolic link
//!   is not read, as git reads none. (The `ignore` crate's walk, under
//!   `--follow`, draws the line at the top only when the root is inside a
//!   repository: from a root outside any, a parent's `.gitignore` reaches
//!   into the repositories below it; it reads no index, anchors the
//!   global excludes at the current directory and reads a `.gitignore`
//!   through a link.)
//! - Hidden files are scanned: `.env` is where secrets live. `.git`
//!   (directory or worktree file) is never entered: objects are compressed
//!   and the index is binary; `--staged` reads the index properly.
//! - Symlinks are not followed unless `--follow`; loops (a link to an
//!   ancestor) are then reported as warnings, never fatal, and a file or
//!   directory reached by a second path (by device and inode) is not
//!   scanned or walked again: counted `already scanned (link)`, once for a
//!   directory, whose contents are never visited a second time.
//! - A root named on the command line (or in `--files-from`) that is a file is
//!   scanned even if an ignore file excludes it: pre-commit passes explicit
//!   file lists. `--exclude` and the config's `allow_paths` still apply to it,
//!   and to a directory root (and its parents): they are the user's own
//!   words about what must not be scanned.
//! - A root named on the command line that does not exist is an error
//!   (exit 2) and nothing is scanned; one listed in `--files-from` is a
//!   warning, counted `unreadable` (exit 2 unless `--ignore-errors`), and
//!   the rest is scanned. A root that exists but cannot be read (a file or
//!   directory without permission) is such a warning too, wherever named.
//!
//! # Skip counts
//!
//! Every entry that is not scanned is counted under a [`Skip`] reason and
//! reported in the summary. The walker decides `ignored`, `excluded`,
//! `allowlisted path`, the symlink reasons, `special file` and `unreadable`
//! directories; workers decide `binary`, `too large` and `unreadable` files
//! (they stat the file they opened anyway, so the walker never stats).
//!
//! **What `ignored` counts.** Every directory entry the ignore rules drop,
//! files and directories alike, once: an ignored directory counts once (its
//! contents are never visited: `target/` is 1, not 40,000). The rules are
//! matched before our own filter (`.git`, excludes, allowlists), so an
//! entry both ignored and excluded counts as ignored. The plain walk counts
//! each entry as its rules drop it. The `ignore` crate drops ignored
//! entries silently (its `filter_entry` predicate runs after its matcher:
//! an ignored entry never reaches it), so under `--follow` the count is
//! derived: for every
//! directory walked, the number of its entries (a second listing, no
//! `stat`) minus the entries the walk yielded, minus those our filter
//! dropped. With `--no-ignore` nothing is ignored.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::Context;
use ignore::{DirEntry, WalkBuilder};

use crate::input::skip::{Skip, SkipCounts};
use crate::messages::escape_path;

use super::{Content, Item, Provenance, Scope};

mod plain;
mod rules;
#[cfg(test)]
mod tests;

use plain::count_entries;
#[cfg(target_os = "linux")]
pub use plain::long_path_pieces;
#[cfg(target_os = "linux")]
use plain::PlainWalk;
pub use plain::{DirTask, Files, Listing};
#[cfg(target_os = "linux")]
use rules::IgnoreRules;

/// Walker settings (built from flags in `scan.rs`). What is out of scope
/// is the [`Scope`]'s to say, not the walker's.
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    pub no_ignore: bool,
    pub follow: bool,
    /// Strip a leading `./` from paths (the root was the implicit `.`),
    /// as ripgrep does.
    pub strip_dot: bool,
    /// What the report calls standard input (`-`): `<stdin>`, or
    /// `--stdin-name`, so that path rules and allowlists apply to it.
    pub stdin_name: PathBuf,
    /// Roots from this index on came from `--files-from`: a FIFO among them
    /// is skipped as a walked one is (a list names files; opening a FIFO
    /// waits for a writer, maybe forever).
    pub listed_from: Option<usize>,
    /// Walk on the producer thread only, never split among the workers
    /// (hidden `--serial-walk`: tests and benchmarks compare the two).
    pub serial: bool,
    /// The roots inside another directory root ([`InnerRoots::of`]).
    pub inner_roots: InnerRoots,
}

/// The roots that lie inside another directory root (`scan . src`, `scan
/// d d/a.env`): the walk of the outer root passes over them, neither
/// scanning nor counting them, as each is scanned as named. Cheap to
/// clone; empty (and free to ask) unless a root lies inside another.
#[derive(Clone, Debug, Default)]
pub struct InnerRoots(Option<Arc<InnerSet>>);

#[derive(Debug)]
struct InnerSet {
    /// Their file names: no other entry costs a syscall.
    names: std::collections::HashSet<OsString>,
    /// Their canonical paths.
    paths: std::collections::HashSet<PathBuf>,
}

impl InnerRoots {
    /// The inner roots among `roots`, by canonical path (one that cannot
    /// be resolved is none).
    pub fn of(roots: &[PathBuf]) -> InnerRoots {
        let named = || roots.iter().filter(|r| r.as_os_str() != "-");
        if !named().any(|r| r.is_dir()) {
            return InnerRoots(None);
        }
        let canonical: Vec<PathBuf> = named().filter_map(|r| fs::canonicalize(r).ok()).collect();
        let dirs: std::collections::HashSet<&Path> = canonical
            .iter()
            .filter(|c| c.is_dir())
            .map(PathBuf::as_path)
            .collect();
        let mut set = InnerSet {
            names: Default::default(),
            paths: Default::default(),
        };
        for c in &canonical {
            if let (Some(name), true) = (
                c.file_name(),
                c.ancestors().skip(1).any(|a| dirs.contains(a)),
            ) {
                set.names.insert(name.to_os_string());
                set.paths.insert(c.clone());
            }
        }
        InnerRoots((!set.paths.is_empty()).then(|| Arc::new(set)))
    }

    /// Whether walked entry `path`, named `name`, is an inner root (the
    /// entry itself: a link to one is not).
    fn holds(&self, path: &Path, name: &std::ffi::OsStr) -> bool {
        let Some(set) = &self.0 else {
            return false;
        };
        if !set.names.contains(name) {
            return false;
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        fs::canonicalize(dir).is_ok_and(|d| set.paths.contains(&d.join(name)))
    }
}

/// False when the file at `path` (by device and inode) was met before.
fn first_visit(visited: &mut std::collections::HashSet<(u64, u64)>, path: &Path) -> bool {
    match fs::metadata(path).ok().as_ref().and_then(file_id) {
        Some(id) => visited.insert(id),
        None => true,
    }
}

/// The file `md` describes, by device and inode; `None` where there is no
/// such identity to compare.
#[cfg(unix)]
pub fn file_id(md: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((md.dev(), md.ino()))
}

#[cfg(not(unix))]
pub fn file_id(_md: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// What standard input is (a pipe, a terminal, a file redirected in): its
/// other names (`/dev/stdin`, `/dev/fd/0`) have the same [`file_id`].
#[cfg(unix)]
pub fn stdin_metadata() -> Option<fs::Metadata> {
    use std::os::fd::AsFd;
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    fs::File::from(fd).metadata().ok()
}

#[cfg(not(unix))]
pub fn stdin_metadata() -> Option<fs::Metadata> {
    None
}

/// A file on disk, reported under the path it was reached by.
fn file_item(path: PathBuf) -> Item {
    Item {
        provenance: Provenance::path(path.clone()),
        content: Content::File(path),
    }
}

/// A file found by the walk of root `root` (as displayed), which the
/// worker opens beneath it (`Content::WalkedFile`).
fn walked_file(root: &Arc<Path>, path: PathBuf) -> Item {
    Item {
        provenance: Provenance::path(path),
        content: Content::WalkedFile {
            root: Arc::clone(root),
        },
    }
}

#[cfg(unix)]
fn is_fifo(md: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    md.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_md: &fs::Metadata) -> bool {
    false
}

/// Something the user should hear about (printed as
/// `scanner: warning: <path>: <reason>`).
#[derive(Debug)]
pub struct WalkWarning {
    pub path: PathBuf,
    pub reason: String,
    /// True when it means content in scope was not scanned (an unreadable
    /// directory): turns exit 0 into exit 2 unless `--ignore-errors`.
    pub is_error: bool,
    /// Not a warning but an entry left out for this reason (and counted):
    /// under `-v` only, `scanner: not scanned: <path>: <label>`.
    pub skipped: Option<Skip>,
}

/// Counts `skip` for the entry at `path` and, under `-v`, names it
/// ([`WalkWarning::skipped`], where [`Skip::listed`]).
fn skip_entry(
    path: &Path,
    skip: Skip,
    strip_dot: bool,
    skips: &mut SkipCounts,
    on_warning: &mut impl FnMut(WalkWarning),
) {
    skips.add(skip, 1);
    if skip.listed() && crate::messages::suppressed_shown() {
        on_warning(WalkWarning {
            path: display_path(path, strip_dot),
            reason: String::new(),
            is_error: false,
            skipped: Some(skip),
        });
    }
}

/// Counters shared with the `filter_entry` closure (which must be `'static`).
#[derive(Default)]
struct FilterCounts {
    excluded: AtomicU64,
    allowlisted: AtomicU64,
    /// `.git` entries and inner roots: neither scanned here nor
    /// reported, but dropped by us.
    vcs: AtomicU64,
    own_output: AtomicU64,
    /// With `--follow`: the directories walked, by device and inode, and
    /// those met again by another path (not walked again).
    walked: std::sync::Mutex<std::collections::HashSet<(u64, u64)>>,
    again: std::sync::Mutex<Vec<PathBuf>>,
}

/// Walks `roots` and calls `on_item` for every input to scan (it returns
/// false to stop the walk: the run was cancelled), `on_warning` for every
/// problem. Returns the skip counts. Errors (exit 2) only for a
/// root that cannot be read at all or a bad `--exclude` glob.
///
/// A root `-` is standard input (one listed in `--files-from` is a file
/// of that name), and a FIFO named as a root (`/dev/stdin`
/// on a pipe, a process substitution) is read as a stream: both are what
/// the user asked to scan. A FIFO met inside a directory, or listed in
/// `--files-from`, is skipped (reading it could block forever). A device or
/// socket named as a root cannot be scanned: an error, so the run does not
/// pass as complete.
pub fn walk(
    roots: &[PathBuf],
    opts: &WalkOptions,
    scope: &Scope,
    on_item: impl FnMut(Item) -> bool,
    on_warning: impl FnMut(WalkWarning),
) -> anyhow::Result<SkipCounts> {
    walk_roots(roots, opts, scope, on_item, None, on_warning)
}

/// Whether [`walk_split`] hands directories to `on_dir` with these
/// options: the getdents walk (Linux, no `--follow`) unless
/// [`WalkOptions::serial`]. The `ignore` crate's walk, which `--follow`
/// needs, runs on one thread.
pub fn can_split(opts: &WalkOptions) -> bool {
    cfg!(target_os = "linux") && !opts.follow && !opts.serial
}

/// [`walk`], but each directory root is handed to `on_dir` as a
/// [`DirTask`] instead of being walked here (when [`can_split`]; else as
/// `walk`): whoever runs the task lists the directory
/// ([`DirTask::list`]) and runs the tasks of its subdirectories in turn.
/// Roots that are files, FIFOs and `-` go to `on_item` as in `walk`, and
/// the skip counts returned are the roots' own (the ignore files above a
/// root that cannot be read, a root out of scope); each [`Listing`] holds
/// its directory's. `on_dir` returns false to stop the walk.
pub fn walk_split(
    roots: &[PathBuf],
    opts: &WalkOptions,
    scope: &Scope,
    on_item: impl FnMut(Item) -> bool,
    mut on_dir: impl FnMut(DirTask) -> bool,
    on_warning: impl FnMut(WalkWarning),
) -> anyhow::Result<SkipCounts> {
    let on_dir: &mut dyn FnMut(DirTask) -> bool = &mut on_dir;
    walk_roots(roots, opts, scope, on_item, Some(on_dir), on_warning)
}

fn walk_roots(
    roots: &[PathBuf],
    opts: &WalkOptions,
    scope: &Scope,
    mut on_item: impl FnMut(Item) -> bool,
    mut on_dir: Option<&mut dyn FnMut(DirTask) -> bool>,
    mut on_warning: impl FnMut(WalkWarning),
) -> anyhow::Result<SkipCounts> {
    let mut skips = SkipCounts::default();
    let mut named = std::collections::HashSet::new();
    for (i, root) in roots.iter().enumerate() {
        let listed = opts.listed_from.is_some_and(|from| i >= from);
        // `-` on the command line is standard input; in a list it is a file
        // of that name (`git diff --name-only` lists one as `-`).
        if root.as_os_str() == "-" && !listed {
            // Named twice (`- -`, `- /dev/stdin`, `- a.env < a.env`), it is
            // read once, as a file is: a second read found a pipe empty, or
            // reported a file redirected in a second time.
            // (Not a directory: reading it fails, and its walk must go on.)
            let id = stdin_metadata()
                .filter(|md| !md.is_dir())
                .and_then(|md| file_id(&md));
            if id.is_some_and(|id| !named.insert(id)) {
                continue;
            }
            let name = opts.stdin_name.clone();
            if let Some(skip) = scope.check_listed(&name) {
                skips.add(skip, 1);
                continue;
            }
            let stdin = Item {
                provenance: Provenance::path(name),
                content: Content::Stream(Box::new(io::stdin())),
            };
            if !on_item(stdin) {
                break;
            }
            continue;
        }
        let shown = display_path(root, opts.strip_dot);
        let md = match fs::metadata(root) {
            Ok(md) => md,
            // A list may name a file deleted since it was made (`git diff
            // --name-only`): the rest of the list is still scanned. So is
            // the rest when a named root exists but cannot be looked at.
            Err(e) if listed || !root_is_missing(&e) => {
                skips.add(Skip::Unreadable, 1);
                let mut reason = io_reason(&e);
                // Git quotes a name with odd bytes in a list of lines
                // (`"caf\303\251.txt"`); its NUL-separated lists are exact.
                let name = root.as_os_str().as_encoded_bytes();
                if name.len() > 1 && name.starts_with(b"\"") && name.ends_with(b"\"") {
                    reason.push_str(" (a name git quoted? list the paths with -z)");
                }
                on_warning(WalkWarning {
                    path: shown,
                    reason,
                    is_error: true,
                    skipped: None,
                });
                continue;
            }
            Err(e) => return Err(e).with_context(|| escape_path(root)),
        };
        // A file or directory named twice (`scan a ./a`, on the command
        // line and in `--files-from`) is scanned once, at its first name:
        // nothing is left out, so nothing is counted.
        if file_id(&md).is_some_and(|id| !named.insert(id)) {
            continue;
        }
        if !md.is_dir() {
            if !md.is_file() {
                if is_fifo(&md) && listed {
                    skips.add(Skip::Special, 1);
                    on_warning(WalkWarning {
                        path: shown,
                        reason:
                            "a FIFO listed in --files-from, not read (pipe it to `scanner scan -`)"
                                .into(),
                        is_error: false,
                        skipped: None,
                    });
                    continue;
                }
                if is_fifo(&md) {
                    if let Some(skip) = scope.check_listed_file(root) {
                        skips.add(skip, 1);
                        continue;
                    }
                    let file = fs::File::open(root).with_context(|| escape_path(root))?;
                    let item = Item {
                        provenance: Provenance::path(shown),
                        content: Content::Stream(Box::new(file)),
                    };
                    if !on_item(item) {
                        break;
                    }
                    continue;
                }
                skips.add(Skip::Special, 1);
                on_warning(WalkWarning {
                    path: shown,
                    reason: "a device or socket, not scanned (pipe it to `scanner scan -`)".into(),
                    is_error: true,
                    skipped: None,
                });
                continue;
            }
            if let Some(skip) = scope.check_listed_file(root) {
                skips.add(skip, 1);
            } else if !on_item(file_item(shown)) {
                break;
            }
            continue;
        }
        // A root below an excluded directory: the walk would match only
        // the entries below it, each alone.
        if let Some(skip) = scope.check_root_dir(root) {
            skips.add(skip, 1);
            continue;
        }
        let go_on = walk_dir(
            root,
            opts,
            scope,
            &mut skips,
            &mut on_item,
            on_dir.as_deref_mut(),
            &mut on_warning,
        )?;
        if !go_on {
            break;
        }
    }
    Ok(skips)
}

// Tests compare [`PlainWalk`] with the `ignore` walk it stands for.
#[cfg(all(test, target_os = "linux"))]
thread_local!(static FORCE_IGNORE_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

#[cfg(all(test, target_os = "linux"))]
fn tests_force_ignore_walk() -> bool {
    FORCE_IGNORE_WALK.with(|f| f.get())
}

#[cfg(all(not(test), target_os = "linux"))]
fn tests_force_ignore_walk() -> bool {
    false
}

fn walk_dir(
    root: &Path,
    opts: &WalkOptions,
    scope: &Scope,
    skips: &mut SkipCounts,
    on_item: &mut impl FnMut(Item) -> bool,
    on_dir: Option<&mut (dyn FnMut(DirTask) -> bool + '_)>,
    on_warning: &mut impl FnMut(WalkWarning),
) -> anyhow::Result<bool> {
    let counts = Arc::new(FilterCounts::default());
    // What the files' shown paths start with: the implicit root `.` is
    // stripped from them (`a/b`, not `./a/b`), so they lie beneath ``,
    // which the worker opens as `.` (a path it cannot strip the root from
    // it opens plainly, links followed).
    let shared_root: Arc<Path> = match display_path(root, opts.strip_dot) {
        shown if opts.strip_dot && shown == Path::new(".") => Arc::from(Path::new("")),
        shown => Arc::from(shown.as_path()),
    };
    let walked_item = |path: PathBuf| {
        if opts.follow {
            file_item(path)
        } else {
            walked_file(&shared_root, path)
        }
    };
    #[cfg(not(target_os = "linux"))]
    let _ = on_dir; // only the getdents walk is split
    #[cfg(target_os = "linux")]
    if !opts.follow && !tests_force_ignore_walk() {
        let rules = if opts.no_ignore {
            None
        } else {
            let (rules, err) = IgnoreRules::new(root);
            if let Some(w) = err.and_then(|e| classify_error(&e, skips, &mut 0, opts.strip_dot)) {
                on_warning(w);
            }
            Some(rules)
        };
        if let Some(on_dir) = on_dir.filter(|_| can_split(opts)) {
            return Ok(on_dir(DirTask::root(
                root.to_path_buf(),
                rules,
                shared_root,
            )));
        }
        let mut walk = PlainWalk {
            opts,
            scope,
            skips,
            rules,
            on_item: &mut |path| on_item(walked_item(path)),
            on_warning,
            spare: Vec::new(),
        };
        let mut dir = root.to_path_buf();
        return Ok(walk.walk(&mut dir));
    }
    let mut b = WalkBuilder::new(root);
    // Inside a repository the crate's walk reads no `.gitignore` above its
    // top, as git reads none (`require_git`); outside any, `.gitignore` is
    // honoured still (see the module docs).
    let in_repo =
        fs::canonicalize(root).is_ok_and(|r| r.ancestors().any(|d| d.join(".git").exists()));
    b.standard_filters(!opts.no_ignore)
        .hidden(false)
        .parents(!opts.no_ignore)
        .require_git(in_repo)
        .follow_links(opts.follow);
    if opts.follow {
        // Which of two paths to one file is scanned must not depend on the
        // file system's listing order: walk in name order.
        b.sort_by_file_name(|a, b| a.cmp(b));
    }
    if !opts.no_ignore {
        b.add_custom_ignore_filename(".scannerignore");
    }
    {
        let counts = Arc::clone(&counts);
        let scope = scope.clone();
        let inner_roots = opts.inner_roots.clone();
        let follow = opts.follow;
        b.filter_entry(move |e: &DirEntry| {
            if e.file_name() == ".git" || inner_roots.holds(e.path(), e.file_name()) {
                counts.vcs.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            // With --follow, links can reach one directory by many paths
            // (each directory of a chain holding two links to the next:
            // 2^depth paths): walk it once, at the first.
            if follow && is_dir {
                let mut walked = counts.walked.lock().unwrap_or_else(|e| e.into_inner());
                if !first_visit(&mut walked, e.path()) {
                    let mut again = counts.again.lock().unwrap_or_else(|e| e.into_inner());
                    again.push(e.path().to_path_buf());
                    return false;
                }
            }
            match scope.check_walked(e.path(), is_dir) {
                None => {}
                Some(Skip::OwnOutput) => {
                    counts.own_output.fetch_add(1, Ordering::Relaxed);
                    return false;
                }
                Some(Skip::Excluded) => {
                    counts.excluded.fetch_add(1, Ordering::Relaxed);
                    return false;
                }
                Some(_) => {
                    counts.allowlisted.fetch_add(1, Ordering::Relaxed);
                    return false;
                }
            }
            true
        });
    }

    let count_ignored = !opts.no_ignore;
    let mut visited = std::collections::HashSet::new();
    // Entries of walked directories vs entries seen: the difference is what
    // the ignore rules dropped (see the module docs).
    let mut children: u64 = 0;
    let mut seen: u64 = 0;
    for item in b.build() {
        match item {
            Ok(ent) => {
                if ent.depth() > 0 {
                    seen += 1;
                }
                let Some(ft) = ent.file_type() else { continue };
                if ft.is_dir() {
                    if count_ignored {
                        children += count_entries(ent.path());
                    }
                } else if ft.is_file() {
                    // With --follow, links can reach one file by two paths
                    // (`sub/a -> ../a`): scan it once, at the first.
                    if opts.follow && !first_visit(&mut visited, ent.path()) {
                        let strip = opts.strip_dot;
                        skip_entry(ent.path(), Skip::Duplicate, strip, skips, on_warning);
                        continue;
                    }
                    if !on_item(walked_item(into_display_path(
                        ent.into_path(),
                        opts.strip_dot,
                    ))) {
                        return Ok(false);
                    }
                } else if ft.is_symlink() {
                    // Only seen without --follow (with it, entries carry the
                    // target's type).
                    let path = display_path(ent.path(), opts.strip_dot);
                    match fs::metadata(ent.path()) {
                        Ok(_) => {
                            let strip = opts.strip_dot;
                            let skip = Skip::SymlinkNotFollowed;
                            skip_entry(ent.path(), skip, strip, skips, on_warning);
                        }
                        Err(e) => {
                            skips.add(Skip::SymlinkBroken, 1);
                            on_warning(WalkWarning {
                                path,
                                reason: format!("broken symbolic link: {}", io_reason(&e)),
                                is_error: false,
                                skipped: None,
                            });
                        }
                    }
                } else {
                    skip_entry(ent.path(), Skip::Special, opts.strip_dot, skips, on_warning);
                }
            }
            Err(err) => {
                if let Some(w) = classify_error(&err, skips, &mut seen, opts.strip_dot) {
                    on_warning(w);
                }
            }
        }
    }
    let excluded = counts.excluded.load(Ordering::Relaxed);
    let allowlisted = counts.allowlisted.load(Ordering::Relaxed);
    let vcs = counts.vcs.load(Ordering::Relaxed);
    let own_output = counts.own_output.load(Ordering::Relaxed);
    let again = std::mem::take(&mut *counts.again.lock().unwrap_or_else(|e| e.into_inner()));
    for dir in &again {
        skip_entry(dir, Skip::Duplicate, opts.strip_dot, skips, on_warning);
    }
    skips.add(Skip::Excluded, excluded);
    skips.add(Skip::AllowlistedPath, allowlisted);
    skips.add(Skip::OwnOutput, own_output);
    if count_ignored {
        let dropped = excluded + allowlisted + vcs + own_output + again.len() as u64;
        let ignored = children.saturating_sub(seen + dropped);
        skips.add(Skip::Ignored, ignored);
    }
    Ok(true)
}

/// Turns a walk error into a skip count and a warning. `seen` counts the
/// errors that stand for one directory entry (so `ignored` stays exact).
fn classify_error(
    err: &ignore::Error,
    skips: &mut SkipCounts,
    seen: &mut u64,
    strip_dot: bool,
) -> Option<WalkWarning> {
    let (path, depth, inner) = unwrap_error(err);
    match inner {
        ignore::Error::Loop { ancestor, child } => {
            if depth.unwrap_or(1) > 0 {
                *seen += 1;
            }
            skips.add(Skip::SymlinkLoop, 1);
            Some(WalkWarning {
                path: display_path(child, strip_dot),
                reason: format!(
                    "symbolic link loop (leads back to {}), not followed",
                    escape_path(display_path(ancestor, strip_dot))
                ),
                is_error: false,
                skipped: None,
            })
        }
        ignore::Error::Io(e) => {
            let path = path?;
            let lmd = fs::symlink_metadata(path);
            // A directory that cannot be listed was yielded (and counted)
            // before its listing failed; anything else stands for an entry
            // the walk never yielded.
            let listing_failed = lmd.as_ref().is_ok_and(|m| m.is_dir());
            if depth.unwrap_or(1) > 0 && !listing_failed {
                *seen += 1;
            }
            let is_link = lmd.is_ok_and(|m| m.file_type().is_symlink());
            let shown = display_path(path, strip_dot);
            if is_link && fs::metadata(path).is_err() {
                skips.add(Skip::SymlinkBroken, 1);
                Some(WalkWarning {
                    path: shown,
                    reason: format!("broken symbolic link: {}", io_reason(e)),
                    is_error: false,
                    skipped: None,
                })
            } else {
                skips.add(Skip::Unreadable, 1);
                Some(WalkWarning {
                    path: shown,
                    reason: io_reason(e),
                    is_error: true,
                    skipped: None,
                })
            }
        }
        // A bad line in an ignore file: not an entry, just tell the user.
        other => Some(WalkWarning {
            path: path.map(Path::to_path_buf).unwrap_or_default(),
            reason: other.to_string(),
            is_error: false,
            skipped: None,
        }),
    }
}

/// Peels `WithPath`, `WithDepth` and `WithLineNumber` off an error.
fn unwrap_error(err: &ignore::Error) -> (Option<&Path>, Option<usize>, &ignore::Error) {
    let mut path = None;
    let mut depth = None;
    let mut e = err;
    loop {
        match e {
            ignore::Error::WithPath { path: p, err } => {
                path.get_or_insert(p.as_path());
                e = err;
            }
            ignore::Error::WithDepth { depth: d, err } => {
                depth.get_or_insert(*d);
                e = err;
            }
            ignore::Error::WithLineNumber { err, .. } => e = err,
            ignore::Error::Partial(errs) if errs.len() == 1 => e = &errs[0],
            _ => return (path, depth, e),
        }
    }
}

/// Whether a root named on the command line whose `stat` failed with `e`
/// is missing (a typo: an error before anything is scanned), rather than
/// there but not to be looked at for want of permission (in a directory
/// without search permission: a warning, as for an unreadable file).
pub fn root_is_missing(e: &io::Error) -> bool {
    e.kind() != io::ErrorKind::PermissionDenied
}

/// The OS reason of an I/O error, without the "(os error N)" noise and
/// with a lowercase first letter: "permission denied". Errors wrapped by
/// the walker ("IO error for operation on ./x: ...") are unwrapped to the
/// OS error inside, since the warning names the path already.
pub fn io_reason(e: &io::Error) -> String {
    if let Some(code) = os_error(e) {
        return clean_reason(&io::Error::from_raw_os_error(code).to_string());
    }
    clean_reason(&e.to_string())
}

fn os_error(e: &io::Error) -> Option<i32> {
    if let Some(code) = e.raw_os_error() {
        return Some(code);
    }
    let mut cur: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|r| r as _);
    while let Some(err) = cur {
        if let Some(code) = err
            .downcast_ref::<io::Error>()
            .and_then(io::Error::raw_os_error)
        {
            return Some(code);
        }
        cur = err.source();
    }
    None
}

fn clean_reason(s: &str) -> String {
    let s = s.find(" (os error").map_or(s, |i| &s[..i]);
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn display_path(p: &Path, strip_dot: bool) -> PathBuf {
    into_display_path(p.to_path_buf(), strip_dot)
}

/// [`display_path`] of an owned path: moved through unchanged (no copy per walked file)
/// unless there is a leading `./` to strip.
fn into_display_path(p: PathBuf, strip_dot: bool) -> PathBuf {
    if strip_dot {
        if let Ok(rest) = p.strip_prefix(".") {
            if !rest.as_os_str().is_empty() {
                return rest.to_path_buf();
            }
        }
    }
    p
}

/// Reads `--files-from FILE` (`-` for stdin): NUL-separated when the input
/// holds a NUL byte (`git diff --name-only -z`, `find -print0`), else one
/// path per line (a trailing `\r` is dropped). Empty entries are skipped,
/// and a UTF-8 byte-order mark before the first (a list saved by a Windows
/// editor, which the warning about the path would not show).
pub fn read_file_list(file: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut data = Vec::new();
    if file == Path::new("-") {
        io::stdin()
            .lock()
            .read_to_end(&mut data)
            .context("--files-from -: reading stdin")?;
    } else {
        fs::File::open(file)
            .and_then(|mut f| f.read_to_end(&mut data))
            .with_context(|| format!("--files-from {}", escape_path(file)))?;
    }
    Ok(parse_file_list(&data))
}

fn parse_file_list(data: &[u8]) -> Vec<PathBuf> {
    // A list saved as UTF-16 (Windows PowerShell's `>` and `Out-File`
    // write UTF-16LE with a byte-order mark): split on its NULs, each
    // character would be a path, `/` the file system's root. Only a mark
    // says UTF-16 here: a NUL-separated list of one-letter names looks like
    // UTF-16 without one.
    let utf16 = match scanner_engine::text::detect_utf16(data) {
        Some((_, bom)) if bom > 0 => scanner_engine::text::transcode_utf16(data),
        _ => None,
    };
    let data = utf16.as_deref().unwrap_or(data);
    let data = data.strip_prefix("\u{feff}".as_bytes()).unwrap_or(data);
    let nul = memchr::memchr(0, data).is_some();
    let sep = if nul { b'\0' } else { b'\n' };
    data.split(|&b| b == sep)
        .map(|p| {
            if !nul {
                p.strip_suffix(b"\r").unwrap_or(p)
            } else {
                p
            }
        })
        .filter(|p| !p.is_empty())
        .map(|p| bytes_to_path(p.to_vec()))
        .collect()
}

#[cfg(unix)]
fn bytes_to_path(b: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(OsString::from_vec(b))
}

#[cfg(not(unix))]
fn bytes_to_path(b: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&b).into_owned())
}
