//! Reading: the chunk reader and the platform file I/O under it.
//!
//! A [`ChunkReader`] scans bytes `start..end` of something read through a
//! `read(buf, offset)` callback — a file read front to back, a positional
//! read of one range of a split file, a stream — in chunks of
//! `chunk + overlap` bytes. The last `overlap` bytes of a chunk (the
//! engine's [`chunk_overlap`](scanner_engine::Engine::chunk_overlap)) are
//! scanned as context, owned by the next chunk, and moved to the front of
//! the buffer instead of being read again, so a secret across a chunk
//! boundary is found exactly once.

use std::fs::File;
use std::io;
use std::path::Path;

use scanner_engine::{Engine, Finding, LinePos, ScanInput, ScanScratch};

/// How much of a file is sniffed for a NUL byte.
pub const SNIFF_LEN: usize = 8 << 10;

/// A NUL byte in `head` means binary.
pub fn is_binary(head: &[u8]) -> bool {
    memchr::memchr(0, head).is_some()
}

/// Settings of one read (see [`ChunkReader::scan`]).
pub struct ChunkReader<'e> {
    pub engine: &'e Engine,
    /// Bytes owned by one chunk.
    pub chunk: usize,
    /// Bytes of context after the owned part: the engine's chunk overlap.
    pub overlap: usize,
    /// Stop with [`Read::Binary`] when the first 8 KiB hold a NUL.
    pub sniff: bool,
    /// Count the lines of the last chunk too (a range of a split file needs
    /// them: they are where the next range starts; a whole file does not).
    pub count_last: bool,
    /// The first bytes from `start` are already in the scratch buffer (a
    /// file's head, read once for the archive and UTF-16 sniffs): `read`
    /// goes on after them.
    pub prefilled: usize,
}

/// What a [`ChunkReader::scan`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The sniff found a NUL: nothing was scanned.
    Binary,
    /// `bytes` owned bytes were scanned; `end` is the position after them
    /// counted from `START` at the first byte (after all but the last chunk
    /// unless `count_last`). `test_from`: the file offset where the owned
    /// bytes showed a Rust unit-test module start, for a split input's later
    /// ranges, which never see it (with `count_last`, else only where an
    /// earlier chunk showed it).
    Scanned {
        bytes: u64,
        end: LinePos,
        test_from: Option<u64>,
    },
}

/// A worker's buffers, reused from read to read.
#[derive(Default)]
pub struct ReadScratch {
    pub buf: Vec<u8>,
}

impl ChunkReader<'_> {
    /// Reads `start..end` (owned) through `read(buf, offset)`, never past
    /// `read_limit` (`end` plus the overlap, clamped to the size), and scans
    /// each chunk, appending to `found`. Positions are counted from line 1,
    /// column 1 at `start`. A read that fails returns its error after the
    /// bytes read before it are scanned: their findings are in `found`.
    pub fn scan(
        &self,
        path: &str,
        mut read: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
        (start, end, read_limit): (u64, u64, u64),
        rs: &mut ReadScratch,
        scratch: &mut ScanScratch,
        found: &mut Vec<Finding>,
    ) -> io::Result<Read> {
        let overlap = self.overlap;
        let cap = self.chunk.max(1) + overlap;
        if rs.buf.len() < cap {
            rs.buf.resize(cap, 0);
        }
        let buf = &mut rs.buf[..cap];
        let mut chunk_off = start;
        let mut filled = self.prefilled.min(cap);
        let mut pos = LinePos::START;
        let mut first = true;
        // Where a Rust unit-test module starts (file offset), once an
        // earlier chunk showed it: the engine sees one chunk at a time.
        let mut test_from: Option<u64> = None;
        loop {
            let want = (cap as u64).min(read_limit.saturating_sub(chunk_off)) as usize;
            let mut eof = false;
            // A read that fails ends the input, but what it read before is
            // scanned first: a truncated or corrupt archive member (gzip's
            // `unexpected end of file`) is reported with what it holds.
            let mut failed = None;
            while filled < want {
                match read(&mut buf[filled..want], chunk_off + filled as u64) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if first && self.sniff {
                first = false;
                // The first fill holds the first 8 KiB unless the buffer is
                // smaller than that (the hidden --chunk-size test knob) or the
                // file is: look further only in the first case.
                if is_binary(&buf[..filled.min(SNIFF_LEN)]) {
                    return match failed {
                        Some(e) => Err(e),
                        None => Ok(Read::Binary),
                    };
                }
            }
            let at_limit = eof || failed.is_some() || chunk_off + filled as u64 >= read_limit;
            let owned_max = end.saturating_sub(chunk_off).min(filled as u64) as usize;
            let owned = if at_limit {
                owned_max
            } else {
                (filled - overlap).min(owned_max)
            };
            if filled > 0 {
                let input = ScanInput {
                    data: &buf[..filled],
                    path,
                    base_offset: chunk_off,
                    owned_len: owned,
                    start: pos,
                };
                let before = found.len();
                self.engine.scan(&input, scratch, found);
                if let Some(t) = test_from {
                    for f in found[before..].iter_mut().filter(|f| f.offset >= t) {
                        scanner_engine::mark_test_code(&mut f.confidence, &mut f.tags);
                    }
                }
            }
            let next = chunk_off + owned as u64;
            let last = at_limit || next >= end || owned == 0;
            // The last chunk's newlines, and its test module's start, matter
            // only to a range (the next range's start, and its findings); a
            // whole file, most often one chunk, skips the count and the
            // search (the engine marks test code within its buffer).
            let told_on = !last || self.count_last;
            if told_on {
                pos = pos.advance(&buf[..owned]);
            }
            if let Some(e) = failed {
                return Err(e);
            }
            if told_on && test_from.is_none() {
                test_from = scanner_engine::test_code_start(&buf[..owned], path)
                    .map(|t| chunk_off + t as u64);
            }
            if last {
                return Ok(Read::Scanned {
                    bytes: next - start,
                    end: pos,
                    test_from,
                });
            }
            buf.copy_within(owned..filled, 0);
            filled -= owned;
            chunk_off = next;
        }
    }
}

/// A stream that stays at its end once a read has returned 0. A terminal
/// ends input once per Ctrl-D, and reads on after it: the sniff's
/// `read_to_end` saw the end, and the scan after it waited for a second
/// Ctrl-D (a third without a line typed).
pub struct Fused<R> {
    inner: R,
    ended: bool,
}

impl<R> Fused<R> {
    pub fn new(inner: R) -> Fused<R> {
        Fused {
            inner,
            ended: false,
        }
    }
}

impl<R: io::Read> io::Read for Fused<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.ended = n == 0;
        Ok(n)
    }
}

/// Opens for reading without blocking on a FIFO that replaced a regular
/// file since the walker saw it (opening a FIFO waits for a writer).
/// `O_NONBLOCK` changes nothing for regular files.
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000;
        opts.custom_flags(O_NONBLOCK);
    }
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0x0004;
        opts.custom_flags(O_NONBLOCK);
    }
    opts.open(path)
}

/// Why [`open_beneath`] refused a path: the text of [`SymlinkSwapped`].
pub const SYMLINK_SWAPPED: &str =
    "a symbolic link appeared in the path after it was listed: not followed (--follow follows links)";

/// The payload of the `NotFound` error [`open_beneath`] returns when it refuses a symbolic
/// link; a caller tells it from other errors with [`is_symlink_swapped`], not by its text.
#[derive(Debug)]
pub struct SymlinkSwapped;

impl std::fmt::Display for SymlinkSwapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(SYMLINK_SWAPPED)
    }
}

impl std::error::Error for SymlinkSwapped {}

/// Whether `e` is [`open_beneath`]'s refusal of a symbolic link ([`SymlinkSwapped`]).
pub fn is_symlink_swapped(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.is::<SymlinkSwapped>())
}

/// Opens `path` (below the directory `root`) for reading, refusing a
/// symbolic link in any component below `root`: the walker did not follow
/// links, so one found now was put there after the listing, and following
/// it could read files outside the tree under in-tree names. Uses Linux's
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`; elsewhere, or on a
/// kernel without it, a plain open. A refusal is an error of kind
/// `NotFound` carrying [`SymlinkSwapped`]. A path longer than `PATH_MAX`
/// (the walk lists such paths) is opened one directory at a time.
pub fn open_beneath(root: &Path, path: &Path) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let Ok(rel) = path.strip_prefix(root) else {
            return open_nonblocking(path);
        };
        thread_local! {
            /// The last root opened on this thread: a walk has one root, so
            /// each worker opens it once, not once per file.
            static ROOT: std::cell::RefCell<Option<(std::path::PathBuf, File)>> =
                const { std::cell::RefCell::new(None) };
        }
        let dir = ROOT.with(|cell| -> io::Result<i32> {
            let mut cached = cell.borrow_mut();
            if cached.as_ref().is_none_or(|(r, _)| r != root) {
                let root_dir = if root.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    root
                };
                let dir = std::fs::OpenOptions::new().read(true).open(root_dir)?;
                *cached = Some((root.to_path_buf(), dir));
            }
            Ok(cached.as_ref().expect("just set").1.as_raw_fd())
        })?;
        let file_flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
        let opened = match openat2_beneath(dir, rel.as_os_str(), file_flags) {
            // Longer than the kernel takes at once (`PATH_MAX`), as the walk
            // lists it: a piece at a time, each beneath the last.
            Err(e) if e.raw_os_error() == Some(libc::ENAMETOOLONG) => {
                let pieces = crate::input::walk::long_path_pieces(rel);
                let mut parts = pieces.iter().peekable();
                let mut at: Option<std::os::fd::OwnedFd> = None;
                loop {
                    let Some(part) = parts.next() else {
                        break Err(e);
                    };
                    let from = at.as_ref().map_or(dir, |fd| fd.as_raw_fd());
                    if parts.peek().is_none() {
                        break openat2_beneath(from, part.as_os_str(), file_flags);
                    }
                    let dir_flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
                    match openat2_beneath(from, part.as_os_str(), dir_flags) {
                        Ok(fd) => at = Some(fd),
                        Err(e) => break Err(e),
                    }
                }
            }
            opened => opened,
        };
        return match opened {
            Ok(fd) => Ok(File::from(fd)),
            Err(err) => match err.raw_os_error() {
                Some(libc::ELOOP) | Some(libc::EXDEV) => {
                    Err(io::Error::new(io::ErrorKind::NotFound, SymlinkSwapped))
                }
                // No openat2 (old kernel, seccomp): the plain open.
                Some(libc::ENOSYS) | Some(libc::EPERM) => open_nonblocking(path),
                _ => Err(err),
            },
        };
    }
    #[allow(unreachable_code)]
    {
        let _ = root;
        open_nonblocking(path)
    }
}

/// `openat2(dir, rel, flags)` resolving beneath `dir` and through no
/// symbolic link (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`).
#[cfg(target_os = "linux")]
fn openat2_beneath(
    dir: std::os::fd::RawFd,
    rel: &std::ffi::OsStr,
    flags: libc::c_int,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let rel = std::ffi::CString::new(rel.as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    /// `struct open_how` of `openat2(2)` (libc's is non-exhaustive).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: flags as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: valid NUL-terminated path, a live directory descriptor and
    // an `open_how` of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            rel.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openat2 returned a new descriptor that we own.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether the size `file` reports is what it holds: not on a file system
/// that makes its files' contents up as they are read (procfs, sysfs,
/// debugfs, tracefs, securityfs, cgroup), whose sizes are 0 or a page
/// whatever a file holds. One `fstatfs`, asked only when a read ended
/// before the size.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn size_is_contents(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain C struct, filled by fstatfs on a live descriptor.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return true;
    }
    let made_up = [
        libc::PROC_SUPER_MAGIC as u64,
        libc::SYSFS_MAGIC as u64,
        libc::DEBUGFS_MAGIC as u64,
        libc::TRACEFS_MAGIC as u64,
        libc::SECURITYFS_MAGIC as u64,
        libc::CGROUP_SUPER_MAGIC as u64,
        libc::CGROUP2_SUPER_MAGIC as u64,
    ];
    !made_up.contains(&(st.f_type as u64))
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn size_is_contents(_file: &File) -> bool {
    true
}

/// True when the first 8 KiB of `file` hold a NUL byte (positional read:
/// the file cursor does not move).
pub fn sniff_at(file: &File, buf: &mut Vec<u8>) -> io::Result<bool> {
    if buf.len() < SNIFF_LEN {
        buf.resize(SNIFF_LEN, 0);
    }
    let mut filled = 0;
    while filled < SNIFF_LEN {
        let n = read_at(file, &mut buf[filled..SNIFF_LEN], filled as u64)?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(is_binary(&buf[..filled]))
}

#[cfg(unix)]
pub fn read_at(file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match file.read_at(buf, off) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

#[cfg(windows)]
pub fn read_at(file: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    use std::os::windows::fs::FileExt;
    file.seek_read(buf, off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    /// A directory swapped for a link to outside the tree after the
    /// listing: the open is refused; the same path without the link opens.
    #[cfg(target_os = "linux")]
    #[test]
    fn open_beneath_refuses_a_swapped_in_symlink() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("tree");
        std::fs::create_dir_all(root.join("dir")).unwrap();
        std::fs::write(root.join("dir/a.txt"), "inside").unwrap();
        std::fs::create_dir_all(t.path().join("outside")).unwrap();
        std::fs::write(t.path().join("outside/a.txt"), "outside").unwrap();
        let path = root.join("dir/a.txt");
        let mut s = String::new();
        open_beneath(&root, &path)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "inside");
        // The swap.
        std::fs::rename(root.join("dir"), t.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(t.path().join("outside"), root.join("dir")).unwrap();
        let e = open_beneath(&root, &path).unwrap_err();
        assert!(is_symlink_swapped(&e), "{e}");
        assert_eq!(e.to_string(), SYMLINK_SWAPPED);
        assert!(!is_symlink_swapped(&io::Error::new(
            io::ErrorKind::NotFound,
            SYMLINK_SWAPPED
        )));
        // A link as the last component is refused too.
        std::fs::remove_file(root.join("dir")).unwrap();
        std::fs::create_dir(root.join("dir")).unwrap();
        std::os::unix::fs::symlink(t.path().join("outside/a.txt"), &path).unwrap();
        assert!(is_symlink_swapped(&open_beneath(&root, &path).unwrap_err()));
    }

    /// A file that shrank after it was split: ranges past the new end scan
    /// nothing, a range across it scans what is left. No panic, no error.
    #[test]
    fn ranges_past_eof_are_empty() {
        let token = ["gh", "p_", "Zq3Xv8Kp2Lm7Nw4Rt6Yb1Hc9Jd5Fg0Ss2Aa7"].concat();
        let mut data = "line\n".repeat(20).into_bytes();
        data.extend(format!("x = {token}\n").as_bytes());
        data.extend("tail\n".repeat(100).as_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, &data).unwrap();
        let file = File::open(&path).unwrap();
        let engine = Engine::builtin().unwrap();
        let reader = ChunkReader {
            engine: &engine,
            chunk: 64,
            overlap: engine.chunk_overlap(),
            sniff: false,
            count_last: true,
            prefilled: 0,
        };
        let mut rs = ReadScratch::default();
        let mut scratch = engine.new_scratch();
        let len = data.len() as u64;
        let mut run = |start: u64, end: u64| {
            let mut found = Vec::new();
            let limit = end + reader.overlap as u64;
            let r = reader
                .scan(
                    "f.txt",
                    |b, off| read_at(&file, b, off),
                    (start, end, limit),
                    &mut rs,
                    &mut scratch,
                    &mut found,
                )
                .unwrap();
            let at: Vec<_> = found.iter().map(|f| (f.offset, f.line, f.column)).collect();
            (r, at)
        };
        // Past the end: nothing.
        assert_eq!(
            run(len + 100, len + 5000),
            (
                Read::Scanned {
                    bytes: 0,
                    end: LinePos::START,
                    test_from: None,
                },
                vec![]
            )
        );
        // Across the end: the bytes that exist, positions relative to start.
        let (read, found) = run(0, len * 4);
        assert_eq!(
            read,
            Read::Scanned {
                bytes: len,
                end: LinePos {
                    line: 122,
                    column: 1
                },
                test_from: None,
            }
        );
        assert_eq!(found, [(104, 21, 5)]);
    }
}
