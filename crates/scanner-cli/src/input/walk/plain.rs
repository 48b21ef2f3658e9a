//! The getdents walk: one directory's listing, what is done with each
//! entry, the serial walk (`PlainWalk`) and a directory as a task of a walk
//! split among workers (`DirTask`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
use std::sync::Arc;

#[cfg(target_os = "linux")]
use super::rules::{IgnoreRules, Ignored};
#[cfg(target_os = "linux")]
use super::{
    display_path, io_reason, skip_entry, walked_file, Item, Scope, WalkOptions, WalkWarning,
};
#[cfg(target_os = "linux")]
use crate::input::skip::{Skip, SkipCounts};

/// The number of entries of directory `dir` (`.` and `..` left out), 0
/// when it cannot be read: the `ignored` count's second listing (see the
/// module docs).
#[cfg(target_os = "linux")]
pub(super) fn count_entries(dir: &Path) -> u64 {
    let mut n = 0;
    let _ = open_dir(None, dir).and_then(|fd| for_each_dirent(&fd, |_, _| n += 1));
    n
}

/// Opens directory `path`; relative to its parent's descriptor when there is
/// one (no lookup of the whole path again, 17% of the walking thread's time).
#[cfg(target_os = "linux")]
pub(super) fn open_dir(
    parent: Option<std::os::fd::BorrowedFd<'_>>,
    path: &Path,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsRawFd;
    match (parent, path.file_name()) {
        (Some(fd), Some(name)) => open_at(fd.as_raw_fd(), name.as_ref()),
        _ => open_at(libc::AT_FDCWD, path),
    }
}

/// Opens directory `path` by its whole path, as a directory task does; a
/// path longer than the kernel takes at once (`PATH_MAX`, which the serial
/// walk never meets above its descriptor depth: it opens each directory
/// by its name in its parent) in [`long_path_pieces`].
#[cfg(target_os = "linux")]
fn open_dir_path(path: &Path) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsRawFd;
    match open_at(libc::AT_FDCWD, path) {
        Err(e) if e.raw_os_error() == Some(libc::ENAMETOOLONG) => {
            let mut fd: Option<std::os::fd::OwnedFd> = None;
            for piece in long_path_pieces(path) {
                let at = fd.as_ref().map_or(libc::AT_FDCWD, |fd| fd.as_raw_fd());
                fd = Some(open_at(at, &piece)?);
            }
            fd.ok_or(e)
        }
        opened => opened,
    }
}

/// `path` cut at component boundaries into pieces the kernel takes at once
/// (each shorter than `PATH_MAX`), to be opened each relative to the one
/// before: a path past `PATH_MAX` in a few `openat`s, where one per
/// component made a tree thousands of directories deep cost millions of
/// system calls (24 s for 4,000 levels).
#[cfg(target_os = "linux")]
pub fn long_path_pieces(path: &Path) -> Vec<PathBuf> {
    // Under PATH_MAX (4096, the terminating NUL included) with room to spare.
    const MAX: usize = 3072;
    let mut pieces = vec![PathBuf::new()];
    for part in path.components() {
        let last = pieces.last_mut().expect("one piece at least");
        let len = last.as_os_str().len();
        if len > 0 && len + 1 + part.as_os_str().len() > MAX {
            pieces.push(PathBuf::new());
        }
        pieces.last_mut().expect("just pushed").push(part);
    }
    pieces
}

/// `openat(at, name)` of a directory.
#[cfg(target_os = "linux")]
fn open_at(at: std::os::fd::RawFd, name: &Path) -> io::Result<std::os::fd::OwnedFd> {
    openat(at, name, libc::O_DIRECTORY)
}

/// `openat(at, name)`, read-only and close-on-exec, with `flags` added.
#[cfg(target_os = "linux")]
pub(super) fn openat(
    at: std::os::fd::RawFd,
    name: &Path,
    flags: libc::c_int,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a directory descriptor (or AT_FDCWD) and a NUL-terminated name.
    let fd = unsafe { libc::openat(at, c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC | flags) };
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
pub(super) fn for_each_dirent(
    dir: &std::os::fd::OwnedFd,
    mut f: impl FnMut(&[u8], u8),
) -> io::Result<()> {
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

/// A directory's entries as the kernel listed them: the names packed in
/// one buffer, each with its `d_type`.
#[cfg(target_os = "linux")]
#[derive(Default)]
pub(super) struct Entries {
    names: Vec<u8>,
    /// (offset in `names`, length, `d_type`).
    ents: Vec<(u32, u32, u8)>,
}

#[cfg(target_os = "linux")]
impl Entries {
    /// Lists directory `path`, opened by its whole path; returns its open
    /// descriptor too.
    fn list(path: &Path) -> io::Result<(Entries, std::os::fd::OwnedFd)> {
        let mut e = Entries::default();
        let fd = open_dir_path(path)?;
        e.fill(&fd)?;
        Ok((e, fd))
    }

    /// Lists directory `name` of the directory open as `parent` into these
    /// buffers (their contents replaced, their capacity kept: the serial
    /// walk keeps one per depth), and returns its open descriptor.
    fn list_at(
        &mut self,
        parent: std::os::fd::BorrowedFd<'_>,
        name: &std::ffi::OsStr,
    ) -> io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::AsRawFd;
        let fd = open_at(parent.as_raw_fd(), name.as_ref())?;
        self.fill(&fd)?;
        Ok(fd)
    }

    fn fill(&mut self, fd: &std::os::fd::OwnedFd) -> io::Result<()> {
        self.names.clear();
        self.ents.clear();
        for_each_dirent(fd, |name, ty| {
            self.ents
                .push((self.names.len() as u32, name.len() as u32, ty));
            self.names.extend_from_slice(name);
        })
    }

    /// Entry `i`: its name and `d_type`.
    fn get(&self, i: usize) -> Option<(&std::ffi::OsStr, u8)> {
        use std::os::unix::ffi::OsStrExt;
        let &(at, len, ty) = self.ents.get(i)?;
        let name = &self.names[at as usize..(at + len) as usize];
        Some((std::ffi::OsStr::from_bytes(name), ty))
    }

    fn iter(&self) -> impl Iterator<Item = (&std::ffi::OsStr, u8)> + '_ {
        use std::os::unix::ffi::OsStrExt;
        self.ents.iter().map(|&(at, len, ty)| {
            let name = &self.names[at as usize..(at + len) as usize];
            (std::ffi::OsStr::from_bytes(name), ty)
        })
    }

    fn has(&self, file: &str) -> bool {
        self.iter().any(|(name, _)| name == file)
    }
}

/// What the walk does with one directory entry, once the ignore rules and
/// the scope have had their say.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// A directory to walk; below it only the paths the repository tracks
    /// when `only_tracked` (see [`Ignored::Tracked`]).
    Dir { only_tracked: bool },
    /// A regular file to scan.
    File,
    /// Not scanned: counted (and warned about) already.
    Dropped,
}

/// What the walk does with entry `path` (named `name`) of `d_type` `ty`
/// under `rules`, as
/// the `ignore` walk does with the same settings: its ignore rules first,
/// then our filter (`.git`, then the scope); a symbolic link not followed.
/// What is dropped is counted in `skips` and, when the user should hear of
/// it, passed to `on_warning`.
#[cfg(target_os = "linux")]
#[allow(clippy::too_many_arguments)]
fn classify(
    path: &Path,
    name: &std::ffi::OsStr,
    ty: u8,
    rules: Option<&IgnoreRules>,
    opts: &WalkOptions,
    scope: &Scope,
    skips: &mut SkipCounts,
    on_warning: &mut impl FnMut(WalkWarning),
) -> Entry {
    if opts.inner_roots.holds(path, name) {
        return Entry::Dropped;
    }
    let ty = match ty {
        libc::DT_UNKNOWN => match fs::symlink_metadata(path) {
            Ok(md) if md.is_dir() => libc::DT_DIR,
            Ok(md) if md.is_file() => libc::DT_REG,
            Ok(md) if md.file_type().is_symlink() => libc::DT_LNK,
            Ok(_) => libc::DT_FIFO,
            // Gone since it was listed: as the `ignore` walk, which
            // reports what it cannot stat.
            Err(e) => {
                unreadable(path, &e, opts, skips, on_warning);
                return Entry::Dropped;
            }
        },
        ty => ty,
    };
    let mut only_tracked = false;
    if let Some(rules) = rules {
        match rules.ignores(path, name, ty == libc::DT_DIR) {
            Ignored::Yes => {
                skips.add(Skip::Ignored, 1);
                return Entry::Dropped;
            }
            Ignored::Tracked => only_tracked = true,
            Ignored::No => {}
        }
        if name == ".git" {
            return Entry::Dropped;
        }
    }
    if let Some(skip) = scope.check_walked_entry(path, name, ty == libc::DT_DIR) {
        skips.add(skip, 1);
        return Entry::Dropped;
    }
    match ty {
        libc::DT_DIR => Entry::Dir { only_tracked },
        libc::DT_REG => Entry::File,
        libc::DT_LNK => {
            match fs::metadata(path) {
                Ok(_) => skip_entry(
                    path,
                    Skip::SymlinkNotFollowed,
                    opts.strip_dot,
                    skips,
                    on_warning,
                ),
                Err(e) => {
                    skips.add(Skip::SymlinkBroken, 1);
                    on_warning(WalkWarning {
                        path: display_path(path, opts.strip_dot),
                        reason: format!("broken symbolic link: {}", io_reason(&e)),
                        is_error: false,
                        skipped: None,
                    });
                }
            }
            Entry::Dropped
        }
        _ => {
            skip_entry(path, Skip::Special, opts.strip_dot, skips, on_warning);
            Entry::Dropped
        }
    }
}

/// Counts and warns about an entry that could not be read; the walk goes
/// on.
#[cfg(target_os = "linux")]
fn unreadable(
    path: &Path,
    e: &io::Error,
    opts: &WalkOptions,
    skips: &mut SkipCounts,
    on_warning: &mut impl FnMut(WalkWarning),
) {
    skips.add(Skip::Unreadable, 1);
    on_warning(WalkWarning {
        path: display_path(path, opts.strip_dot),
        reason: io_reason(e),
        is_error: true,
        skipped: None,
    });
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
pub(super) struct PlainWalk<'a, F: FnMut(PathBuf) -> bool, W: FnMut(WalkWarning)> {
    pub(super) opts: &'a WalkOptions,
    pub(super) scope: &'a Scope,
    pub(super) skips: &'a mut SkipCounts,
    /// The ignore rules in force, `None` with `--no-ignore`.
    pub(super) rules: Option<IgnoreRules>,
    pub(super) on_item: &'a mut F,
    pub(super) on_warning: &'a mut W,
    /// Listing buffers of directories done, for the next ones (one per
    /// depth at most): no allocation per directory.
    pub(super) spare: Vec<Entries>,
}

#[cfg(target_os = "linux")]
impl<F: FnMut(PathBuf) -> bool, W: FnMut(WalkWarning)> PlainWalk<'_, F, W> {
    /// Walks the directory at `path` (restored before returning), the
    /// root; false once `on_item` said stop. Depth first with a stack of
    /// the directories being listed, not recursion: a tree of any depth
    /// costs heap, not the caller's stack.
    pub(super) fn walk(&mut self, path: &mut PathBuf) -> bool {
        use std::os::fd::AsFd;
        let mut stack: Vec<Level> = Vec::new();
        if let Some(root) = self.enter(path, None, 0) {
            stack.push(root);
        }
        let mut go_on = true;
        loop {
            let depth = stack.len();
            let Some(top) = stack.last_mut() else {
                break;
            };
            let Some((name, ty)) = top.entries.get(top.next) else {
                self.leave(stack.pop().expect("the top"));
                if let Some(parent) = stack.last() {
                    truncate(path, parent.len);
                }
                continue;
            };
            top.next += 1;
            if name == ".git" && self.rules.is_none() {
                continue;
            }
            path.push(name);
            let name = path.file_name().expect("just pushed");
            let what = classify(
                path,
                name,
                ty,
                self.rules.as_ref(),
                self.opts,
                self.scope,
                self.skips,
                self.on_warning,
            );
            let len = top.len;
            go_on = match what {
                Entry::Dir { only_tracked } => {
                    let narrowed = self.rules.as_ref().filter(|_| only_tracked);
                    let outer = narrowed
                        .map(IgnoreRules::only_tracked)
                        .map(|inner| self.rules.replace(inner));
                    let at = top.fd.as_ref().map(|fd| (fd.as_fd(), name));
                    match self.enter(path, at, depth) {
                        Some(mut level) => {
                            // The rules before the narrowing come back when
                            // it is done, whatever it read inside.
                            if outer.is_some() {
                                level.outer = outer;
                            }
                            stack.push(level);
                            continue;
                        }
                        None => {
                            if let Some(outer) = outer {
                                self.rules = outer;
                            }
                            true
                        }
                    }
                }
                Entry::File => (self.on_item)(display_path(path, self.opts.strip_dot)),
                Entry::Dropped => true,
            };
            truncate(path, len);
            if !go_on {
                break;
            }
        }
        while let Some(level) = stack.pop() {
            truncate(path, level.len);
            self.leave(level);
        }
        go_on
    }

    /// Lists the directory at `path`, entry `name` of the directory open as
    /// `parent` if given, at `depth`, and puts its ignore files in force;
    /// `None` when it cannot be listed (warned about and counted).
    fn enter(
        &mut self,
        path: &Path,
        parent: Option<(std::os::fd::BorrowedFd<'_>, &std::ffi::OsStr)>,
        depth: usize,
    ) -> Option<Level> {
        use std::os::fd::AsFd;
        // Names and types first, then the entries. The descriptor stays open
        // for the children's `openat`, down to a depth that leaves the
        // process's descriptor limit alone; deeper, paths are opened whole.
        let mut entries = self.spare.pop().unwrap_or_default();
        let listed = match parent {
            Some((fd, name)) => entries.list_at(fd, name),
            None => open_dir_path(path).and_then(|fd| entries.fill(&fd).map(|()| fd)),
        };
        let fd = match listed {
            Ok(fd) => (depth < 64).then_some(fd),
            Err(e) => {
                self.spare.push(entries);
                unreadable(path, &e, self.opts, self.skips, self.on_warning);
                return None;
            }
        };
        let inside = self
            .rules
            .as_ref()
            .and_then(|r| r.inside(path, fd.as_ref().map(|fd| fd.as_fd()), |f| entries.has(f)));
        let outer = inside.map(|inside| self.rules.replace(inside));
        Some(Level {
            entries,
            fd,
            outer,
            len: path.as_os_str().len(),
            next: 0,
        })
    }

    /// A directory is done: the rules in force before it come back, and
    /// its listing buffers serve the next one.
    fn leave(&mut self, level: Level) {
        if let Some(outer) = level.outer {
            self.rules = outer;
        }
        self.spare.push(level.entries);
    }
}

/// A directory of [`PlainWalk::walk`]'s stack, being listed.
#[cfg(target_os = "linux")]
struct Level {
    entries: Entries,
    /// Open for the children's `openat` (down to depth 64).
    fd: Option<std::os::fd::OwnedFd>,
    /// The rules in force before it (its own ignore files, or a narrowing
    /// to tracked paths, replaced them), put back when it is done.
    outer: Option<Option<IgnoreRules>>,
    /// The length of its path.
    len: usize,
    /// Its next entry.
    next: usize,
}

/// `path` cut back to its first `len` bytes: what it was before a
/// `push`, without `pop`'s parse of its components.
#[cfg(target_os = "linux")]
fn truncate(path: &mut PathBuf, len: usize) {
    use std::os::unix::ffi::OsStringExt;
    let mut bytes = std::mem::take(path).into_os_string().into_vec();
    bytes.truncate(len);
    *path = PathBuf::from(std::ffi::OsString::from_vec(bytes));
}

/// A directory of the walk to list, with the ignore rules inherited from
/// its parents: a task of a walk split among workers
/// ([`walk_split`](super::walk_split)). [`DirTask::list`] lists it once and
/// returns its files and its subdirectories, which are tasks in turn.
#[cfg(target_os = "linux")]
pub struct DirTask {
    /// As walked (the root as given, then the names listed).
    path: PathBuf,
    /// The rules in force in its parent, `None` with `--no-ignore`.
    rules: Option<IgnoreRules>,
    /// The walk's root as displayed, which its files are opened beneath.
    root: Arc<Path>,
}

/// What listing one directory came to ([`DirTask::list`]).
#[cfg(target_os = "linux")]
pub struct Listing {
    /// The files to scan.
    pub files: Files,
    /// The subdirectories to list.
    pub dirs: Vec<DirTask>,
    /// What was not scanned, by reason (as the serial walk counts it).
    pub skips: SkipCounts,
    /// What the user should hear about, in listing order.
    pub warnings: Vec<WalkWarning>,
}

/// The files to scan of one listed directory: their names packed in one
/// buffer, as listed, each made an [`Item`] only when it is taken
/// ([`Files::item`]). A pending file costs its name's bytes and four
/// more, what the serial walk's listing holds, not an item's two paths.
#[cfg(target_os = "linux")]
pub struct Files {
    /// The directory, as walked.
    dir: PathBuf,
    root: Arc<Path>,
    strip_dot: bool,
    names: Vec<u8>,
    /// Where each name ends in `names`.
    ends: Vec<u32>,
}

#[cfg(target_os = "linux")]
impl Files {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// File `i` (below [`Files::len`]) as an input to scan, under the path
    /// the serial walk gives it.
    pub fn item(&self, i: usize) -> Item {
        use std::os::unix::ffi::OsStrExt;
        let start = match i {
            0 => 0,
            i => self.ends[i - 1] as usize,
        };
        let name = &self.names[start..self.ends[i] as usize];
        let path = self.dir.join(std::ffi::OsStr::from_bytes(name));
        walked_file(&self.root, super::into_display_path(path, self.strip_dot))
    }

    fn push(&mut self, name: &std::ffi::OsStr) {
        self.names.extend_from_slice(name.as_encoded_bytes());
        self.ends.push(self.names.len() as u32);
    }
}

#[cfg(target_os = "linux")]
impl DirTask {
    /// The task of walk root `path` (a directory), under `rules`.
    pub(super) fn root(path: PathBuf, rules: Option<IgnoreRules>, root: Arc<Path>) -> DirTask {
        DirTask { path, rules, root }
    }

    /// Lists the directory and sorts its entries as the serial walk
    /// (`PlainWalk`) does: the same rules, counts and warnings, so the
    /// tasks of one walk, summed, report what the serial walk reports. Its
    /// own ignore files are read here and apply to its entries and, through
    /// the subdirectories' tasks, to everything below it. The directory is
    /// opened by its whole path: the tasks hold no descriptor, so a deep
    /// tree needs no more than one at a time per worker.
    pub fn list(self, opts: &WalkOptions, scope: &Scope) -> Listing {
        let mut skips = SkipCounts::default();
        let mut warnings = Vec::new();
        let mut warn = |w| warnings.push(w);
        use std::os::fd::AsFd;
        let (entries, fd) = match Entries::list(&self.path) {
            Ok((entries, fd)) => (entries, Some(fd)),
            Err(e) => {
                unreadable(&self.path, &e, opts, &mut skips, &mut warn);
                (Entries::default(), None)
            }
        };
        let at = fd.as_ref().map(|fd| fd.as_fd());
        let rules = match self.rules {
            Some(r) => Some(r.inside(&self.path, at, |f| entries.has(f)).unwrap_or(r)),
            None => None,
        };
        drop(fd);
        let mut path = self.path;
        let mut files = Files {
            dir: PathBuf::new(),
            root: Arc::clone(&self.root),
            strip_dot: opts.strip_dot,
            names: Vec::new(),
            ends: Vec::new(),
        };
        let mut dirs = Vec::new();
        let len = path.as_os_str().len();
        for (name, ty) in entries.iter() {
            if name == ".git" && rules.is_none() {
                continue;
            }
            path.push(name);
            match classify(
                &path,
                name,
                ty,
                rules.as_ref(),
                opts,
                scope,
                &mut skips,
                &mut warn,
            ) {
                Entry::Dir { only_tracked } => dirs.push(DirTask {
                    path: path.clone(),
                    rules: match only_tracked {
                        true => rules.as_ref().map(IgnoreRules::only_tracked),
                        false => rules.clone(),
                    },
                    root: Arc::clone(&self.root),
                }),
                Entry::File => files.push(name),
                Entry::Dropped => {}
            }
            truncate(&mut path, len);
        }
        files.dir = path;
        Listing {
            files,
            dirs,
            skips,
            warnings,
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn count_entries(dir: &Path) -> u64 {
    fs::read_dir(dir).map_or(0, |d| d.count() as u64)
}

/// Never made: only the getdents walk (Linux) is split among workers.
#[cfg(not(target_os = "linux"))]
pub struct DirTask(std::convert::Infallible);

/// What listing one directory came to.
#[cfg(not(target_os = "linux"))]
pub struct Listing {
    pub files: Files,
    pub dirs: Vec<DirTask>,
    pub skips: crate::input::skip::SkipCounts,
    pub warnings: Vec<super::WalkWarning>,
}

/// Never made, as [`DirTask`].
#[cfg(not(target_os = "linux"))]
pub struct Files(std::convert::Infallible);

#[cfg(not(target_os = "linux"))]
impl Files {
    pub fn len(&self) -> usize {
        match self.0 {}
    }

    pub fn is_empty(&self) -> bool {
        match self.0 {}
    }

    pub fn item(&self, _i: usize) -> super::Item {
        match self.0 {}
    }
}

#[cfg(not(target_os = "linux"))]
impl DirTask {
    pub fn list(self, _opts: &super::WalkOptions, _scope: &super::Scope) -> Listing {
        match self.0 {}
    }
}
