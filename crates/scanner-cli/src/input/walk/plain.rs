//! The getdents walk (`PlainWalk`) and its directory listing.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
use super::rules::{DirRules, IgnoreRules, IGNORE_FILES};
#[cfg(target_os = "linux")]
use super::{display_path, io_reason, Scope, WalkOptions, WalkWarning};
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
}

#[cfg(target_os = "linux")]
impl<F: FnMut(PathBuf) -> bool, W: FnMut(WalkWarning)> PlainWalk<'_, F, W> {
    /// Walks the directory at `path` (restored before returning); false
    /// once `on_item` said stop.
    pub(super) fn dir(
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

#[cfg(not(target_os = "linux"))]
pub(super) fn count_entries(dir: &Path) -> u64 {
    fs::read_dir(dir).map_or(0, |d| d.count() as u64)
}
