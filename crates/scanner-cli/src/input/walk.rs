//! The walker: which files are in scope, and a count of every one that is not.
//!
//! One thread: discovery is cheap next to reading and matching, and one
//! walker keeps the skip counts and the order of warnings simple. Without
//! `--follow` (on Linux) `PlainWalk` lists each directory with raw
//! `getdents64`, once, and applies the ignore files itself (`IgnoreRules`,
//! over the `ignore` crate's `Gitignore` matchers, with the crate's
//! precedence); with `--follow`, and elsewhere, the single-threaded
//! [`ignore::Walk`] walks. Both give the same results in the same order
//! (unit tests compare them event by event); the plain walk costs a
//! fraction of the producer's time (docs/performance.md, "The walking
//! thread"). The pipeline turns each yielded path into a `FileTask` (see
//! `pipeline.rs`).
//!
//! # What is walked
//!
//! - Ignore files are honoured by default: `.gitignore` (also outside a git
//!   repository: `require_git(false)`), `.ignore`, `.git/info/exclude`, the
//!   global git excludes (`core.excludesFile`) and `.scannerignore` (same
//!   syntax, highest precedence). `--no-ignore` turns all of them off.
//! - Hidden files are scanned: `.env` is where secrets live. `.git`
//!   (directory or worktree file) is never entered: objects are compressed
//!   and the index is binary; `--staged` reads the index properly.
//! - Symlinks are not followed unless `--follow`; loops are then reported as
//!   warnings, never fatal.
//! - A root named on the command line (or in `--files-from`) that is a file is
//!   scanned even if an ignore file excludes it: pre-commit passes explicit
//!   file lists. `--exclude` and the config's `allow_paths` still apply to it:
//!   they are the user's own words about what must not be scanned.
//! - A root that does not exist or cannot be read is an error (exit 2).
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
}

/// False when the file at `path` (by device and inode) was met before.
#[cfg(unix)]
fn first_visit(visited: &mut std::collections::HashSet<(u64, u64)>, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match fs::metadata(path) {
        Ok(md) => visited.insert((md.dev(), md.ino())),
        Err(_) => true,
    }
}

#[cfg(not(unix))]
fn first_visit(_visited: &mut std::collections::HashSet<(u64, u64)>, _path: &Path) -> bool {
    true
}

/// A file on disk, reported under the path it was reached by.
fn file_item(path: PathBuf) -> Item {
    Item {
        provenance: Provenance::path(path.clone()),
        content: Content::File(path),
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
}

/// Counters shared with the `filter_entry` closure (which must be `'static`).
#[derive(Default)]
struct FilterCounts {
    excluded: AtomicU64,
    allowlisted: AtomicU64,
    /// `.git` entries: neither scanned nor reported, but dropped by us.
    vcs: AtomicU64,
    own_output: AtomicU64,
}

/// Walks `roots` and calls `on_item` for every input to scan (it returns
/// false to stop the walk: the run was cancelled), `on_warning` for every
/// problem. Returns the skip counts. Errors (exit 2) only for a
/// root that cannot be read at all or a bad `--exclude` glob.
///
/// A root `-` is standard input, and a FIFO named as a root (`/dev/stdin`
/// on a pipe, a process substitution) is read as a stream: both are what
/// the user asked to scan. A FIFO met inside a directory, or listed in
/// `--files-from`, is skipped (reading it could block forever). A device or
/// socket named as a root cannot be scanned: an error, so the run does not
/// pass as complete.
pub fn walk(
    roots: &[PathBuf],
    opts: &WalkOptions,
    scope: &Scope,
    mut on_item: impl FnMut(Item) -> bool,
    mut on_warning: impl FnMut(WalkWarning),
) -> anyhow::Result<SkipCounts> {
    let mut skips = SkipCounts::default();
    for (i, root) in roots.iter().enumerate() {
        if root.as_os_str() == "-" {
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
        let md = fs::metadata(root).with_context(|| escape_path(root))?;
        let shown = display_path(root, opts.strip_dot);
        if !md.is_dir() {
            if !md.is_file() {
                let listed = opts.listed_from.is_some_and(|from| i >= from);
                if is_fifo(&md) && listed {
                    skips.add(Skip::Special, 1);
                    on_warning(WalkWarning {
                        path: shown,
                        reason:
                            "a FIFO listed in --files-from, not read (pipe it to `scanner scan -`)"
                                .into(),
                        is_error: false,
                    });
                    continue;
                }
                if is_fifo(&md) {
                    if let Some(skip) = scope.check_listed(root) {
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
                });
                continue;
            }
            if let Some(skip) = scope.check_listed(root) {
                skips.add(skip, 1);
            } else if !on_item(file_item(shown)) {
                break;
            }
            continue;
        }
        let go_on = walk_dir(root, opts, scope, &mut skips, &mut on_item, &mut on_warning)?;
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
    on_warning: &mut impl FnMut(WalkWarning),
) -> anyhow::Result<bool> {
    let counts = Arc::new(FilterCounts::default());
    let shared_root: Arc<Path> = Arc::from(display_path(root, opts.strip_dot).as_path());
    let walked_item = |path: PathBuf| {
        if opts.follow {
            file_item(path)
        } else {
            Item {
                provenance: Provenance::path(path.clone()),
                content: Content::WalkedFile {
                    root: Arc::clone(&shared_root),
                    path,
                },
            }
        }
    };
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
        let mut walk = PlainWalk {
            opts,
            scope,
            skips,
            rules,
            on_item: &mut |path| on_item(walked_item(path)),
            on_warning,
        };
        let mut dir = root.to_path_buf();
        return Ok(walk.dir(&mut dir, None, 0));
    }
    let mut b = WalkBuilder::new(root);
    b.standard_filters(!opts.no_ignore)
        .hidden(false)
        .parents(!opts.no_ignore)
        .require_git(false)
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
        b.filter_entry(move |e: &DirEntry| {
            if e.file_name() == ".git" {
                counts.vcs.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
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
                    // (`sub/up -> ..`): scan it once, at the first.
                    if opts.follow && !first_visit(&mut visited, ent.path()) {
                        skips.add(Skip::Duplicate, 1);
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
                        Ok(_) => skips.add(Skip::SymlinkNotFollowed, 1),
                        Err(e) => {
                            skips.add(Skip::SymlinkBroken, 1);
                            on_warning(WalkWarning {
                                path,
                                reason: format!("broken symbolic link: {}", io_reason(&e)),
                                is_error: false,
                            });
                        }
                    }
                } else {
                    skips.add(Skip::Special, 1);
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
    skips.add(Skip::Excluded, excluded);
    skips.add(Skip::AllowlistedPath, allowlisted);
    skips.add(Skip::OwnOutput, own_output);
    if count_ignored {
        let ignored = children.saturating_sub(seen + excluded + allowlisted + vcs + own_output);
        skips.add(Skip::Ignored, ignored);
    }
    Ok(true)
}

/// The number of entries of directory `dir` (`.` and `..` left out), 0
/// when it cannot be read: the `ignored` count's second listing (see the
/// module docs).
#[cfg(target_os = "linux")]
fn count_entries(dir: &Path) -> u64 {
    let mut n = 0;
    let _ = open_dir(None, dir).and_then(|fd| for_each_dirent(&fd, |_, _| n += 1));
    n
}

/// Opens directory `path`; relative to its parent's descriptor when there is
/// one (no lookup of the whole path again, 17% of the walking thread's time).
#[cfg(target_os = "linux")]
fn open_dir(
    parent: Option<std::os::fd::BorrowedFd<'_>>,
    path: &Path,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    let (at, name) = match (parent, path.file_name()) {
        (Some(fd), Some(name)) => (fd.as_raw_fd(), name),
        _ => (libc::AT_FDCWD, path.as_os_str()),
    };
    let c = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a directory descriptor (or AT_FDCWD) and a NUL-terminated name.
    let fd = unsafe {
        libc::openat(
            at,
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Calls `f(name, d_type)` for every entry of open directory `dir` but `.` and
/// `..`, in the order the kernel lists them (`readdir`'s, so `walkdir`'s).
/// Raw `getdents64` into one stack buffer: no allocation per entry, as
/// `fs::read_dir` makes, and no `fstat` of the directory, as `opendir` makes.
#[cfg(target_os = "linux")]
fn for_each_dirent(dir: &std::os::fd::OwnedFd, mut f: impl FnMut(&[u8], u8)) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = dir.as_raw_fd();
    const LEN: usize = 32 << 10;
    #[repr(C, align(8))]
    struct Buf([u8; LEN]);
    // Not zeroed (that was 4% of the producer's time): only the bytes the
    // kernel wrote are read.
    let mut buf = std::mem::MaybeUninit::<Buf>::uninit();
    let result = loop {
        // SAFETY: an open directory descriptor and a buffer of the length
        // passed; the kernel writes whole `linux_dirent64` records.
        let got = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), LEN) };
        if got < 0 {
            break Err(io::Error::last_os_error());
        }
        if got == 0 {
            break Ok(());
        }
        // SAFETY: the kernel initialized the first `got` (<= LEN) bytes.
        let listed = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), got as usize) };
        let mut at = 0;
        while at < listed.len() {
            // linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8,
            // d_name (NUL-terminated) at offset 19.
            let rec = &listed[at..];
            let reclen = u16::from_ne_bytes([rec[16], rec[17]]) as usize;
            let Some(name) = rec.get(19..reclen) else {
                break; // not a record the kernel writes
            };
            let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
            if name != b"." && name != b".." {
                f(name, rec[18]);
            }
            at += reclen;
        }
    };
    result
}

/// The walk of one root without `--follow`: the `ignore` crate's
/// per-entry work (a `DirEntry` and a joined path per entry, an `opendir`
/// buffer and `fstat` per directory, a `stat` per possible ignore file) is
/// spared, each directory is listed once, and its ignore files are read
/// only when the listing names them. What is yielded, skipped, counted and
/// warned about, and in which order, is what the `ignore` walk does with
/// the same settings: depth first, each directory in the kernel's listing
/// order, the root never filtered, ignore rules before our filter, `.git`
/// never entered, a symbolic link not followed, an unreadable directory a
/// warning right after its entry.
#[cfg(target_os = "linux")]
struct PlainWalk<'a, F: FnMut(PathBuf) -> bool, W: FnMut(WalkWarning)> {
    opts: &'a WalkOptions,
    scope: &'a Scope,
    skips: &'a mut SkipCounts,
    /// The ignore rules in force, `None` with `--no-ignore`.
    rules: Option<IgnoreRules>,
    on_item: &'a mut F,
    on_warning: &'a mut W,
}

#[cfg(target_os = "linux")]
impl<F: FnMut(PathBuf) -> bool, W: FnMut(WalkWarning)> PlainWalk<'_, F, W> {
    /// Walks the directory at `path` (restored before returning); false
    /// once `on_item` said stop.
    fn dir(
        &mut self,
        path: &mut PathBuf,
        parent: Option<std::os::fd::BorrowedFd<'_>>,
        depth: usize,
    ) -> bool {
        use std::os::fd::AsFd;
        use std::os::unix::ffi::OsStrExt;
        // Names and types first, then the entries. The descriptor stays open
        // for the children's `openat`, down to a depth that leaves the
        // process's descriptor limit alone; deeper, paths are opened whole.
        let mut names: Vec<u8> = Vec::new();
        let mut ents: Vec<(u32, u32, u8)> = Vec::new();
        let listed = open_dir(parent, path).and_then(|fd| {
            for_each_dirent(&fd, |name, ty| {
                ents.push((names.len() as u32, name.len() as u32, ty));
                names.extend_from_slice(name);
            })
            .map(|()| fd)
        });
        let fd = match listed {
            Ok(fd) => (depth < 64).then_some(fd),
            Err(e) => return self.unreadable(path, &e),
        };
        // This directory's ignore files, read only when listed.
        let mut pushed = false;
        if let Some(rules) = &mut self.rules {
            let has = |file: &str| {
                ents.iter().any(|&(at, len, _)| {
                    &names[at as usize..(at + len) as usize] == file.as_bytes()
                })
            };
            if IGNORE_FILES.iter().any(|f| has(f)) {
                let (dir_rules, _) = DirRules::read(path, has);
                if !dir_rules.is_empty() {
                    rules.walked.push(dir_rules);
                    pushed = true;
                }
            }
        }
        let mut go_on = true;
        for &(at, len, ty) in &ents {
            let name = &names[at as usize..(at + len) as usize];
            if name == b".git" && self.rules.is_none() {
                continue;
            }
            path.push(std::ffi::OsStr::from_bytes(name));
            go_on = self.entry(path, ty, fd.as_ref().map(|fd| fd.as_fd()), depth);
            path.pop();
            if !go_on {
                break;
            }
        }
        if pushed {
            if let Some(rules) = &mut self.rules {
                rules.walked.pop();
            }
        }
        go_on
    }

    /// Counts and warns about an entry that could not be read; the walk
    /// goes on.
    fn unreadable(&mut self, path: &Path, e: &io::Error) -> bool {
        self.skips.add(Skip::Unreadable, 1);
        (self.on_warning)(WalkWarning {
            path: display_path(path, self.opts.strip_dot),
            reason: io_reason(e),
            is_error: true,
        });
        true
    }

    fn entry(
        &mut self,
        path: &mut PathBuf,
        ty: u8,
        parent: Option<std::os::fd::BorrowedFd<'_>>,
        depth: usize,
    ) -> bool {
        let ty = match ty {
            libc::DT_UNKNOWN => match fs::symlink_metadata(&*path) {
                Ok(md) if md.is_dir() => libc::DT_DIR,
                Ok(md) if md.is_file() => libc::DT_REG,
                Ok(md) if md.file_type().is_symlink() => libc::DT_LNK,
                Ok(_) => libc::DT_FIFO,
                // Gone since it was listed: as the `ignore` walk, which
                // reports what it cannot stat.
                Err(e) => return self.unreadable(path, &e),
            },
            ty => ty,
        };
        // As the `ignore` walk: its ignore rules first, then our filter
        // (`.git`, then the scope).
        if let Some(rules) = &self.rules {
            if rules.ignores(path, ty == libc::DT_DIR) {
                self.skips.add(Skip::Ignored, 1);
                return true;
            }
            if path.file_name().is_some_and(|n| n == ".git") {
                return true;
            }
        }
        if let Some(skip) = self.scope.check_walked(path, ty == libc::DT_DIR) {
            self.skips.add(skip, 1);
            return true;
        }
        match ty {
            libc::DT_DIR => self.dir(path, parent, depth + 1),
            libc::DT_REG => (self.on_item)(display_path(path, self.opts.strip_dot)),
            libc::DT_LNK => {
                match fs::metadata(&*path) {
                    Ok(_) => self.skips.add(Skip::SymlinkNotFollowed, 1),
                    Err(e) => {
                        self.skips.add(Skip::SymlinkBroken, 1);
                        (self.on_warning)(WalkWarning {
                            path: display_path(path, self.opts.strip_dot),
                            reason: format!("broken symbolic link: {}", io_reason(&e)),
                            is_error: false,
                        });
                    }
                }
                true
            }
            _ => {
                self.skips.add(Skip::Special, 1);
                true
            }
        }
    }
}

/// The names whose presence in a directory makes [`DirRules::read`] look
/// further: the ignore files, and `.git` for `.git/info/exclude`.
#[cfg(target_os = "linux")]
const IGNORE_FILES: [&str; 4] = [".scannerignore", ".ignore", ".gitignore", ".git"];

/// The ignore rules one directory holds, as the `ignore` crate's walk reads
/// them (its `dir.rs`, `add_child_path`, with our settings): each file's
/// globs relative to the directory.
#[cfg(target_os = "linux")]
struct DirRules {
    /// `.scannerignore` (the crate's "custom ignore file").
    custom: ignore::gitignore::Gitignore,
    /// `.ignore`.
    dot_ignore: ignore::gitignore::Gitignore,
    /// `.gitignore`.
    git: ignore::gitignore::Gitignore,
    /// `.git/info/exclude` (of the common directory, for a worktree).
    git_exclude: ignore::gitignore::Gitignore,
}

#[cfg(target_os = "linux")]
impl DirRules {
    /// Reads the ignore files of directory `dir`; `has(name)` says whether
    /// `dir` may hold an entry `name` (one of [`IGNORE_FILES`]). Returns the
    /// errors grouped as the crate groups them (only a parent's are shown).
    fn read(dir: &Path, has: impl Fn(&str) -> bool) -> (DirRules, Option<ignore::Error>) {
        use ignore::gitignore::Gitignore;
        let mut errs = Vec::new();
        let mut file = |name: &str, file: Option<PathBuf>| match file {
            Some(file) if has(name) => {
                let (gi, err) = read_ignore_file(dir, &file);
                errs.extend(err);
                gi
            }
            _ => Gitignore::empty(),
        };
        let custom = file(".scannerignore", Some(dir.join(".scannerignore")));
        let dot_ignore = file(".ignore", Some(dir.join(".ignore")));
        let git = file(".gitignore", Some(dir.join(".gitignore")));
        let mut resolve_err = None;
        let exclude_file = has(".git")
            .then(|| {
                let git_type = dir.join(".git").metadata().ok().map(|md| md.file_type());
                match git_common_dir(dir, git_type) {
                    Ok(git_dir) => Some(git_dir.join("info/exclude")),
                    Err(e) => {
                        resolve_err = e;
                        None
                    }
                }
            })
            .flatten();
        let git_exclude = file(".git", exclude_file);
        errs.extend(resolve_err);
        let rules = DirRules {
            custom,
            dot_ignore,
            git,
            git_exclude,
        };
        (rules, grouped(errs))
    }

    fn is_empty(&self) -> bool {
        self.custom.is_empty()
            && self.dot_ignore.is_empty()
            && self.git.is_empty()
            && self.git_exclude.is_empty()
    }
}

/// One ignore file's matcher for directory `dir`, as the crate's
/// `create_gitignore` builds it: a file that does not exist or cannot be
/// read adds nothing and is no error.
#[cfg(target_os = "linux")]
fn read_ignore_file(
    dir: &Path,
    file: &Path,
) -> (ignore::gitignore::Gitignore, Option<ignore::Error>) {
    use ignore::gitignore::{Gitignore, GitignoreBuilder};
    let mut b = GitignoreBuilder::new(dir);
    let mut errs = Vec::new();
    if file.exists() {
        errs.extend(b.add(file).filter(|e| !e.is_io()));
    }
    let gi = b.build().unwrap_or_else(|e| {
        errs.push(e);
        Gitignore::empty()
    });
    (gi, grouped(errs))
}

/// Errors as the crate's `PartialErrorBuilder` returns them: none, the one,
/// or all of them as `Partial`.
#[cfg(target_os = "linux")]
fn grouped(mut errs: Vec<ignore::Error>) -> Option<ignore::Error> {
    match errs.len() {
        0 => None,
        1 => errs.pop(),
        _ => Some(ignore::Error::Partial(errs)),
    }
}

/// The directory whose `info/exclude` applies to `dir`, as the crate's
/// `resolve_git_commondir` finds it: `dir/.git`, or for a `.git` file
/// (`gitdir: X`) the `commondir` that `X` names; `Err(None)` when there is
/// none.
#[cfg(target_os = "linux")]
fn git_common_dir(
    dir: &Path,
    git_type: Option<fs::FileType>,
) -> Result<PathBuf, Option<ignore::Error>> {
    use std::io::BufRead;
    let git = dir.join(".git");
    if !git_type.is_some_and(|t| t.is_file()) {
        return Ok(git);
    }
    let io_err = |e: io::Error, path: &Path| {
        Some(ignore::Error::WithPath {
            path: path.to_path_buf(),
            err: Box::new(ignore::Error::Io(e)),
        })
    };
    let first_line = |path: &Path| -> Result<Option<String>, Option<ignore::Error>> {
        let file = fs::File::open(path).map_err(|e| io_err(e, path))?;
        io::BufReader::new(file)
            .lines()
            .next()
            .transpose()
            .map_err(|e| io_err(e, path))
    };
    let line = first_line(&git)?.ok_or(None)?;
    let real = PathBuf::from(line.strip_prefix("gitdir: ").ok_or(None)?);
    let common_file = real.join("commondir");
    if fs::File::open(&common_file).is_err() {
        return Err(None);
    }
    let common = first_line(&common_file)?.ok_or(None)?;
    Ok(if common.starts_with('.') {
        real.join(common)
    } else {
        PathBuf::from(common)
    })
}

/// The ignore rules of one walk from its root down, matched as the `ignore`
/// crate's walk matches them (its `Ignore::matched_ignore`, with
/// `require_git(false)`, no overrides, types or hidden filter): per kind of
/// file, the deepest directory with a match decides, and the kinds rank
/// `.scannerignore`, `.ignore`, `.gitignore`, `.git/info/exclude`, the global
/// git excludes. Directories above the root come last, matched by the
/// absolute path.
#[cfg(target_os = "linux")]
struct IgnoreRules {
    /// The walked directories on the way down that hold rules, deepest last.
    walked: Vec<DirRules>,
    /// The root's parents that hold rules, nearest first.
    parents: Vec<DirRules>,
    /// The root, canonical (paths are matched against `parents` under it).
    absolute_root: PathBuf,
    /// The root as given (walked paths start with it).
    root: PathBuf,
    /// `core.excludesFile`, relative to the current directory.
    global: ignore::gitignore::Gitignore,
}

#[cfg(target_os = "linux")]
impl IgnoreRules {
    /// The rules above walk root `root`, and the errors in its parents'
    /// ignore files (what the crate's walk reports before the walk).
    fn new(root: &Path) -> (IgnoreRules, Option<ignore::Error>) {
        use ignore::gitignore::{Gitignore, GitignoreBuilder};
        let global = match std::env::current_dir() {
            Ok(cwd) => GitignoreBuilder::new(cwd).build_global().0,
            Err(_) => Gitignore::empty(),
        };
        let mut rules = IgnoreRules {
            walked: Vec::new(),
            parents: Vec::new(),
            absolute_root: PathBuf::new(),
            root: root.to_path_buf(),
            global,
        };
        let Ok(absolute_root) = root.canonicalize() else {
            return (rules, None);
        };
        let mut errs = Vec::new();
        for parent in absolute_root.ancestors().skip(1) {
            let (dir_rules, err) = DirRules::read(parent, |_| true);
            errs.extend(err);
            if !dir_rules.is_empty() {
                rules.parents.push(dir_rules);
            }
        }
        // Reported root first, as the crate reads them.
        errs.reverse();
        rules.absolute_root = absolute_root;
        (rules, grouped(errs))
    }

    /// True when the rules drop walked entry `path`.
    fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        use ignore::Match;
        let path = strip_bytes(b"./", path).unwrap_or(path);
        let mut m: [Match<&ignore::gitignore::Glob>; 4] =
            [Match::None, Match::None, Match::None, Match::None];
        first_matches(&mut m, self.walked.iter().rev(), path, is_dir);
        if !self.parents.is_empty() {
            let relative = if self.root.as_os_str() == "." {
                path
            } else {
                let root = strip_bytes(b"./", &self.root).unwrap_or(&self.root);
                let rel = strip_bytes(root.as_os_str().as_encoded_bytes(), path).unwrap_or(path);
                strip_bytes(b"/", rel).unwrap_or(rel)
            };
            let absolute = self.absolute_root.join(relative);
            first_matches(&mut m, self.parents.iter(), &absolute, is_dir);
        }
        let [custom, dot_ignore, git, git_exclude] = m;
        custom
            .or(dot_ignore)
            .or(git)
            .or(git_exclude)
            .or(self.global.matched(path, is_dir))
            .is_ignore()
    }
}

/// Fills each kind's match (see [`DirRules`]'s fields) still empty with
/// the first match of that kind among `dirs`.
#[cfg(target_os = "linux")]
fn first_matches<'a>(
    m: &mut [ignore::Match<&'a ignore::gitignore::Glob>; 4],
    dirs: impl Iterator<Item = &'a DirRules>,
    path: &Path,
    is_dir: bool,
) {
    for d in dirs {
        for (m, gi) in m
            .iter_mut()
            .zip([&d.custom, &d.dot_ignore, &d.git, &d.git_exclude])
        {
            if m.is_none() {
                *m = gi.matched(path, is_dir);
            }
        }
    }
}

/// `path` without the leading bytes `prefix` (a byte prefix, not whole
/// components, as the crate strips), if it starts with them.
#[cfg(target_os = "linux")]
fn strip_bytes<'a>(prefix: &[u8], path: &'a Path) -> Option<&'a Path> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str()
        .as_bytes()
        .strip_prefix(prefix)
        .map(|rest| Path::new(std::ffi::OsStr::from_bytes(rest)))
}

#[cfg(not(target_os = "linux"))]
fn count_entries(dir: &Path) -> u64 {
    fs::read_dir(dir).map_or(0, |d| d.count() as u64)
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
                })
            } else {
                skips.add(Skip::Unreadable, 1);
                Some(WalkWarning {
                    path: shown,
                    reason: io_reason(e),
                    is_error: true,
                })
            }
        }
        // A bad line in an ignore file: not an entry, just tell the user.
        other => Some(WalkWarning {
            path: path.map(Path::to_path_buf).unwrap_or_default(),
            reason: other.to_string(),
            is_error: false,
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
/// path per line (a trailing `\r` is dropped). Empty entries are skipped.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(root: &Path, opts: &WalkOptions) -> (Vec<String>, SkipCounts, Vec<String>) {
        run_in(root, opts, &Scope::default())
    }

    fn excluding(globs: &[&str]) -> Scope {
        let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
        Scope::new(&std::env::current_dir().unwrap(), &globs, None, None).unwrap()
    }

    fn run_in(
        root: &Path,
        opts: &WalkOptions,
        scope: &Scope,
    ) -> (Vec<String>, SkipCounts, Vec<String>) {
        let mut files = Vec::new();
        let mut warnings = Vec::new();
        let skips = walk(
            &[root.to_path_buf()],
            opts,
            scope,
            |p| {
                files.push(
                    p.provenance
                        .path
                        .strip_prefix(root)
                        .unwrap()
                        .display()
                        .to_string(),
                );
                true
            },
            |w| warnings.push(format!("{}: {}", w.path.display(), w.reason)),
        )
        .unwrap();
        files.sort();
        (files, skips, warnings)
    }

    fn write(root: &Path, rel: &str, data: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, data).unwrap();
    }

    #[test]
    fn ignore_files_hidden_files_and_git_dir() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, ".gitignore", "*.log\nbuild/\n");
        write(r, ".scannerignore", "skip.txt\n");
        write(r, ".env", "x");
        write(r, "a.log", "x");
        write(r, "skip.txt", "x");
        write(r, "build/out/a.txt", "x");
        write(r, "build/out/b.txt", "x");
        write(r, "src/main.rs", "x");
        write(r, "src/deep.log", "x");
        write(r, ".git/config", "x");
        let (files, skips, warnings) = run(r, &WalkOptions::default());
        assert_eq!(
            files,
            [".env", ".gitignore", ".scannerignore", "src/main.rs"]
        );
        // a.log, skip.txt, build/ (once), src/deep.log
        assert_eq!(skips.get(Skip::Ignored), 4);
        assert_eq!(skips.total(), 4);
        assert!(warnings.is_empty(), "{warnings:?}");

        let opts = WalkOptions {
            no_ignore: true,
            ..Default::default()
        };
        let (files, skips, _) = run(r, &opts);
        assert_eq!(files.len(), 9, "{files:?}");
        assert_eq!(skips.total(), 0);
    }

    /// The raw listing counts what `fs::read_dir` lists: files, hidden
    /// files, directories, links; not `.` and `..`; more entries than one
    /// `getdents64` buffer holds.
    #[test]
    fn count_entries_counts_what_read_dir_lists() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        assert_eq!(count_entries(r), 0);
        for i in 0..700 {
            write(
                r,
                &format!("a-rather-long-file-name-to-fill-the-buffer-{i}.txt"),
                "x",
            );
        }
        write(r, ".hidden", "x");
        write(r, "sub/x", "x");
        #[cfg(unix)]
        std::os::unix::fs::symlink("missing", r.join("broken")).unwrap();
        let listed = fs::read_dir(r).unwrap().count() as u64;
        assert_eq!(listed, if cfg!(unix) { 703 } else { 702 });
        assert_eq!(count_entries(r), listed);
        assert_eq!(count_entries(&r.join("no-such-dir")), 0);
    }

    #[test]
    fn excludes_are_counted() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "a.txt", "x");
        write(r, "b.min.js", "x");
        write(r, "vendor/x/y.txt", "x");
        write(r, "vendor/z.txt", "x");
        let scope = excluding(&["*.min.js", "vendor/"]);
        let (files, skips, _) = run_in(r, &WalkOptions::default(), &scope);
        assert_eq!(files, ["a.txt"]);
        assert_eq!(skips.get(Skip::Excluded), 2);
        assert_eq!(skips.get(Skip::Ignored), 0);
    }

    #[test]
    fn explicit_files_under_an_excluded_directory_are_excluded() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "vendor/lib/a.js", "x");
        write(r, "src/b.js", "x");
        let mut files = Vec::new();
        let skips = walk(
            &[r.join("vendor/lib/a.js"), r.join("src/b.js")],
            &WalkOptions::default(),
            &excluding(&["vendor/"]),
            |p| {
                files.push(p.provenance.path);
                true
            },
            |w| panic!("{w:?}"),
        )
        .unwrap();
        assert_eq!(files, [r.join("src/b.js")]);
        assert_eq!(skips.get(Skip::Excluded), 1);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks() {
        use std::os::unix::fs::symlink;
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "d/a.txt", "x");
        symlink("../d", r.join("d/loop")).unwrap();
        symlink("a.txt", r.join("d/link.txt")).unwrap();
        symlink("missing", r.join("d/broken")).unwrap();
        let (files, skips, warnings) = run(r, &WalkOptions::default());
        assert_eq!(files, ["d/a.txt"]);
        assert_eq!(skips.get(Skip::SymlinkNotFollowed), 2);
        assert_eq!(skips.get(Skip::SymlinkBroken), 1);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("broken symbolic link"), "{warnings:?}");

        let opts = WalkOptions {
            follow: true,
            ..Default::default()
        };
        let (files, skips, warnings) = run(r, &opts);
        // `d/link.txt` is `d/a.txt`: scanned once, under the first path met.
        assert_eq!(files, ["d/a.txt"]);
        assert_eq!(skips.get(Skip::Duplicate), 1);
        assert_eq!(skips.get(Skip::SymlinkLoop), 1);
        assert_eq!(skips.get(Skip::SymlinkBroken), 1);
        assert_eq!(skips.get(Skip::Ignored), 0, "{skips:?}");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    /// A FIFO `fifo` and a directory `locked` (holding `secret.txt`) that only
    /// root can read.
    #[cfg(target_os = "linux")]
    fn fifo_and_locked_dir(r: &Path) {
        use std::os::unix::fs::PermissionsExt;
        write(r, "locked/secret.txt", "x");
        let fifo = std::ffi::CString::new(r.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        fs::set_permissions(r.join("locked"), fs::Permissions::from_mode(0o000)).unwrap();
    }

    /// What walking `roots` yields and warns about, in order, and its skip
    /// counts; by the `ignore` walk when `force_ignore_walk`.
    #[cfg(target_os = "linux")]
    fn trace(
        roots: &[PathBuf],
        opts: &WalkOptions,
        scope: &Scope,
        force_ignore_walk: bool,
    ) -> (Vec<String>, Vec<String>, String) {
        FORCE_IGNORE_WALK.with(|f| f.set(force_ignore_walk));
        let mut events = Vec::new();
        let mut warnings = Vec::new();
        let skips = walk(
            roots,
            opts,
            scope,
            |i| {
                events.push(i.provenance.path.display().to_string());
                true
            },
            |w| warnings.push(format!("{}: {} {}", w.path.display(), w.reason, w.is_error)),
        )
        .unwrap();
        FORCE_IGNORE_WALK.with(|f| f.set(false));
        (events, warnings, format!("{skips:?}"))
    }

    /// With `--no-ignore` the plain walk yields, skips, counts and warns
    /// exactly as the `ignore` walk does, in the same order: hidden files,
    /// `.git` (directory and file), excludes, links (good, broken, to a
    /// directory), a FIFO, an unreadable directory, roots with a trailing `/` and a file.
    #[cfg(target_os = "linux")]
    #[test]
    fn plain_walk_is_the_ignore_walk() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for i in 0..40 {
            write(r, &format!("d{}/e{}/f{i}.txt", i % 3, i % 5), "x");
        }
        write(r, ".env", "x");
        write(r, ".gitignore", "*\n");
        write(r, ".git/config", "x");
        write(r, "sub/.git", "gitdir: ../.git");
        write(r, "vendor/x.js", "x");
        write(r, "a.min.js", "x");
        symlink("d0", r.join("dirlink")).unwrap();
        symlink(".env", r.join("envlink")).unwrap();
        symlink("missing", r.join("broken")).unwrap();
        fifo_and_locked_dir(r);
        let locked_readable = fs::read_dir(r.join("locked")).is_ok(); // root reads anything
        let scope = Scope::new(r, &["vendor/".into(), "*.min.js".into()], None, None).unwrap();
        let roots = [r.to_path_buf(), r.join("d1/"), r.join("d2/e2/f2.txt")];
        let trace = |opts: &WalkOptions, force: bool| trace(&roots, opts, &scope, force);
        let opts = WalkOptions {
            no_ignore: true,
            ..Default::default()
        };
        let plain = trace(&opts, false);
        assert_eq!(plain, trace(&opts, true));
        assert_eq!(
            plain.0.len(),
            40 + 2 + 13 + 1 + usize::from(locked_readable),
            "{plain:?}"
        );
        assert_eq!(
            plain.1.len(),
            1 + usize::from(!locked_readable),
            "{plain:?}"
        );
        fs::set_permissions(r.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A tree of nested ignore files: `.gitignore`, `.ignore` and
    /// `.scannerignore` at several depths, negations (`!keep.log`,
    /// `!keep.txt`, a `.scannerignore` re-including what a `.gitignore`
    /// drops), `.git/info/exclude`, ignored directories and excludes.
    fn nested_ignore_tree(r: &Path) {
        let ignore_files = [
            (".gitignore", "*.log\nbuild/\n!keep.log\n"),
            (".scannerignore", "secret-skip.txt\n"),
            (".git/info/exclude", "by-info.txt\n"),
            ("src/.ignore", "*.tmp\n!keep.tmp\n"),
            ("src/sub/.gitignore", "!*.log\ngen/\n"),
            ("docs/.gitignore", "*.txt\n!keep.txt\n"),
            ("vendor/.scannerignore", "!forced.log\n"),
        ];
        for (f, rules) in ignore_files {
            write(r, f, rules);
        }
        let files = "a.log keep.log app.txt by-info.txt secret-skip.txt .git/config \
            build/a.txt build/b.txt build/deep/c.txt \
            q.min.log w.min.js third_party/t.txt third_party/u.txt \
            src/x.tmp src/keep.tmp src/main.rs src/y.log \
            src/sub/trace.log src/sub/gen/g1.txt src/sub/gen/g2.txt src/sub/z.tmp \
            docs/a.txt docs/keep.txt vendor/forced.log vendor/other.log";
        for f in files.split_whitespace() {
            write(r, f, "x");
        }
    }

    /// Exact counts on [`nested_ignore_tree`], for each root with and
    /// without excludes: the numbers the build before the one-read walk
    /// (d5b9897, which listed each directory twice) reported with `scanner
    /// scan --stats-json` run in the tree. An ignored directory counts once
    /// (`build/`, `src/sub/gen/`), a file both ignored and excluded counts
    /// as ignored (`q.min.log`), and the root's parents' ignore files apply
    /// (`src/y.log`).
    #[test]
    fn ignored_counts_on_nested_ignore_files() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        nested_ignore_tree(r);
        let globs = ["*.min.*", "third_party/", "src/sub/gen/", "docs/keep.txt"];
        let excludes = Scope::new(r, &globs.map(String::from), None, None).unwrap();
        // (root, with excludes, files, ignored, excluded)
        let expected = [
            ("", false, 16, 11, 0),
            ("", true, 12, 11, 3),
            ("src", false, 5, 4, 0),
            ("src", true, 5, 4, 0),
            ("src/sub", false, 2, 2, 0),
            ("docs/", false, 2, 1, 0),
            ("docs/", true, 1, 1, 1),
        ];
        for (root, exclude, files, ignored, excluded) in expected {
            let scope = if exclude {
                &excludes
            } else {
                &Scope::default()
            };
            let (found, skips, warnings) = run_in(&r.join(root), &WalkOptions::default(), scope);
            let case = format!("{root:?} excludes {exclude}: {found:?} {skips:?}");
            assert_eq!(found.len(), files, "{case}");
            assert_eq!(skips.get(Skip::Ignored), ignored, "{case}");
            assert_eq!(skips.get(Skip::Excluded), excluded, "{case}");
            assert_eq!(skips.total(), ignored + excluded, "{case}");
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        let (found, _, _) = run(r, &WalkOptions::default());
        assert_eq!(
            found,
            [
                ".gitignore",
                ".scannerignore",
                "app.txt",
                "docs/.gitignore",
                "docs/keep.txt",
                "keep.log",
                "src/.ignore",
                "src/keep.tmp",
                "src/main.rs",
                "src/sub/.gitignore",
                "src/sub/trace.log",
                "third_party/t.txt",
                "third_party/u.txt",
                "vendor/.scannerignore",
                "vendor/forced.log",
                "w.min.js",
            ]
        );
    }

    /// Honouring ignore files, the one-read walk yields, skips, counts and
    /// warns exactly as the `ignore` walk (with its second listing for
    /// `ignored`) does, in the same order: [`nested_ignore_tree`] plus a
    /// worktree's `.git` file whose common directory has an `info/exclude`,
    /// a `.gitignore` of `*` (which drops `.git` too), bad globs above the
    /// root (a warning) and below it (none), links, a FIFO and an unreadable
    /// directory.
    #[cfg(target_os = "linux")]
    #[test]
    fn one_read_walk_is_the_ignore_walk() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let t = tempfile::tempdir().unwrap();
        let top = t.path();
        write(top, ".gitignore", "bad[z-a]\n*.top\n");
        write(top, ".ignore", "also[z-a]\n");
        let r = &top.join("tree");
        nested_ignore_tree(r);
        for i in 0..30 {
            write(
                r,
                &format!(
                    "d{}/e{}/f{i}.{}",
                    i % 3,
                    i % 5,
                    ["txt", "log", "top"][i % 3]
                ),
                "x",
            );
        }
        write(r, "all/.gitignore", "*\n");
        write(r, "all/.git/config", "x");
        write(r, "all/x.txt", "x");
        write(
            r,
            "wt/.git",
            &format!("gitdir: {}\n", r.join("gitdir").display()),
        );
        write(
            r,
            "gitdir/commondir",
            &format!("{}\n", r.join("common").display()),
        );
        write(r, "common/info/exclude", "wt-excluded.txt\n");
        write(r, "wt/wt-excluded.txt", "x");
        write(r, "wt/kept.txt", "x");
        write(r, "src/.scannerignore", "in[z-a]\n");
        symlink("d0", r.join("dirlink")).unwrap();
        symlink("missing", r.join("broken")).unwrap();
        symlink("missing", r.join("broken.log")).unwrap();
        fifo_and_locked_dir(r);
        let scope = Scope::new(r, &["*.min.*".into(), "third_party/".into()], None, None).unwrap();
        let roots = [
            r.to_path_buf(),
            r.join("src/"),
            r.join("d1"),
            r.join("app.txt"),
        ];
        let trace = |force: bool| trace(&roots, &WalkOptions::default(), &scope, force);
        let one_read = trace(false);
        let ignore_walk = trace(true);
        fs::set_permissions(r.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(one_read, ignore_walk);
        assert!(
            one_read.0.iter().any(|p| p.ends_with("wt/kept.txt")),
            "{one_read:?}"
        );
        assert!(!one_read
            .0
            .iter()
            .any(|p| p.contains("excluded") || p.contains("all/")));
        // The bad globs above the root: one warning per root walked.
        let bad = one_read.1.iter().filter(|w| w.contains("bad[z-a]")).count();
        assert_eq!(bad, 3, "{one_read:?}");
    }

    /// Below the depth where the plain walk stops keeping descriptors open,
    /// directories are opened by their whole path: a file 70 levels down
    /// is found.
    #[cfg(target_os = "linux")]
    #[test]
    fn plain_walk_goes_deeper_than_its_open_descriptors() {
        let t = tempfile::tempdir().unwrap();
        let deep: String = (0..70).map(|i| format!("d{i}/")).collect();
        write(t.path(), &format!("{deep}f.txt"), "x");
        write(t.path(), "d0/d1/g.txt", "x");
        let opts = WalkOptions {
            no_ignore: true,
            ..Default::default()
        };
        let (files, skips, warnings) = run(t.path(), &opts);
        assert_eq!(files, [format!("{deep}f.txt"), "d0/d1/g.txt".into()]);
        assert_eq!(skips.total(), 0);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn file_lists() {
        assert_eq!(
            parse_file_list(b"a\r\nb c\n\nd\n"),
            [PathBuf::from("a"), "b c".into(), "d".into()]
        );
        assert_eq!(
            parse_file_list(b"a\nb\0c\0"),
            [PathBuf::from("a\nb"), "c".into()]
        );
    }

    #[test]
    fn io_reasons() {
        let e = io::Error::from_raw_os_error(13);
        assert_eq!(io_reason(&e), "permission denied");
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "IO error for operation on ./x: {}", self.0)
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let wrapped = io::Error::other(Wrapper(io::Error::from_raw_os_error(13)));
        assert_eq!(io_reason(&wrapped), "permission denied");
        assert_eq!(io_reason(&io::Error::other("Odd thing")), "odd thing");
    }
}
