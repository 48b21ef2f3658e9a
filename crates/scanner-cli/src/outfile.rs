//! Every file the scanner writes (`-o`, `--stats-json`, `--write-baseline`)
//! goes through [`OutputFile`]: one piece of code, one set of guarantees.
//!
//! | the target is | what happens |
//! | --- | --- |
//! | absent, or a regular file | written to a temp file beside it, fsynced, renamed over it on [`commit`](OutputFile::commit): a reader sees the old file or the whole new one, never a prefix; a replaced file keeps its mode |
//! | a symbolic link | written through the link (the link stays a link: `-o /dev/stdout` works) |
//! | a device, a FIFO, a socket, a terminal | written to directly: `-o /dev/null` leaves `/dev/null` a device, a FIFO's reader gets the report |
//! | a directory | refused before the scan starts |
//!
//! `-` is standard output, for every one of them (`-o -`, `--stats-json -`,
//! `--write-baseline -`): written there whole by [`OutputFile::write_whole`]; the scan refuses
//! two of them on standard output ([`is_stdout`]).
//!
//! The temp file is `.NAME.scanner-PID-N.tmp`, created with mode 0600 (it
//! may hold `--show-secrets` output) and removed when the [`OutputFile`] is
//! dropped without a commit: a run that fails or is interrupted leaves
//! nothing behind. A new report gets the usual mode (0666 less the umask)
//! when it is committed.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::messages::escape_path;

/// A file being written (see the module docs).
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    mode: Mode,
}

#[derive(Debug)]
enum Mode {
    /// Temp file, renamed over `dest` on commit.
    Replace {
        temp: PathBuf,
        dest: PathBuf,
        committed: bool,
        /// The mode to give the report: the replaced file's, or the usual
        /// one for a new file.
        #[cfg_attr(not(unix), allow(dead_code))]
        perm: Option<u32>,
    },
    /// Written in place (a link, a device, a FIFO).
    Direct { dest: PathBuf },
}

/// A handle to write an [`OutputFile`] through ([`OutputFile::file`]): its errors name the
/// file the user gave (`/dev/full: cannot write: No space left on device`), not the temp file,
/// and keep their kind (a reader gone is still a broken pipe).
#[derive(Debug)]
pub struct Writer {
    file: File,
    dest: PathBuf,
}

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file
            .write(buf)
            .map_err(|e| named("cannot write", &self.dest, e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file
            .flush()
            .map_err(|e| named("cannot write", &self.dest, e))
    }
}

/// Whether `dest` is `-`, standard output.
pub fn is_stdout(dest: &Path) -> bool {
    dest.as_os_str() == "-"
}

/// `dest` as messages name it: `standard output` for `-`, else the path escaped.
pub fn shown(dest: &Path) -> String {
    match is_stdout(dest) {
        true => "standard output".to_string(),
        false => escape_path(dest),
    }
}

fn named(what: &str, p: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {what}: {e}", escape_path(p)))
}

fn is_a_directory(p: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::IsADirectory,
        format!("{}: is a directory", escape_path(p)),
    )
}

/// The directory a replaced `dest` is written in (its temp file goes there).
fn parent_of(dest: &Path) -> PathBuf {
    match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Checks, leaving nothing behind, that [`OutputFile::create`] can be called on `dest` once
/// the scan is over: it is not a directory (or a link to one), and when it is absent or a
/// regular file (replaced through a temp file beside it) its parent directory exists and a
/// file can be made there (tried: a temp file made and removed). For the files written after
/// the scan (`--stats-json`, `--write-baseline`), so that a typo or an unwritable directory
/// fails at once, as `-o` does, not after a long scan.
pub fn check_target(dest: &Path) -> io::Result<()> {
    if is_stdout(dest) {
        return Ok(());
    }
    match fs::metadata(dest) {
        Ok(md) if md.is_dir() => Err(is_a_directory(dest)),
        Ok(_) if fs::symlink_metadata(dest).is_ok_and(|md| md.is_file()) => {
            OutputFile::replacing(dest, None).map(drop)
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let dir = parent_of(dest);
            match fs::metadata(&dir) {
                Ok(md) if md.is_dir() => OutputFile::replacing(dest, None).map(drop),
                Ok(_) => Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!(
                        "{}: its parent {} is not a directory",
                        escape_path(dest),
                        escape_path(&dir)
                    ),
                )),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{}: its directory {} does not exist: create it first",
                        escape_path(dest),
                        escape_path(&dir)
                    ),
                )),
                Err(e) => Err(named("cannot inspect", &dir, e)),
            }
        }
        Err(e) => Err(named("cannot inspect", dest, e)),
    }
}

impl OutputFile {
    /// Opens `dest` for writing as the module docs say. Errors name the path.
    pub fn create(dest: &Path) -> io::Result<OutputFile> {
        match fs::symlink_metadata(dest) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A missing directory is named as such.
                check_target(dest)?;
                Self::replacing(dest, None)
            }
            Err(e) => Err(named("cannot inspect", dest, e)),
            Ok(md) if md.is_dir() => Err(is_a_directory(dest)),
            Ok(md) if md.is_file() => Self::replacing(dest, Some(md)),
            Ok(md) => {
                if md.file_type().is_symlink() && fs::metadata(dest).is_ok_and(|t| t.is_dir()) {
                    return Err(is_a_directory(dest));
                }
                // A regular file behind a link is truncated as `>` would;
                // a device or FIFO is not truncatable and is just written.
                let truncate = fs::metadata(dest).is_ok_and(|t| t.is_file());
                let file = File::options()
                    .write(true)
                    .create(true)
                    .truncate(truncate)
                    .open(dest)
                    .map_err(|e| named("cannot open", dest, e))?;
                Ok(OutputFile {
                    file,
                    mode: Mode::Direct {
                        dest: dest.to_path_buf(),
                    },
                })
            }
        }
    }

    fn replacing(dest: &Path, old: Option<fs::Metadata>) -> io::Result<OutputFile> {
        let name = dest.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a file name", escape_path(dest)),
            )
        })?;
        let dir = parent_of(dest);
        let perm = old
            .map(|md| permission_bits(&md))
            .unwrap_or_else(new_file_mode);
        let mut n = 0u32;
        loop {
            let mut temp_name = OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".scanner-{}-{}.tmp", std::process::id(), n));
            let temp = dir.join(temp_name);
            // create_new: never truncate a file someone else owns, and no symlink games.
            let mut opts = File::options();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            match opts.open(&temp) {
                Ok(file) => {
                    crate::signals::remove_on_exit(&temp);
                    return Ok(OutputFile {
                        file,
                        mode: Mode::Replace {
                            temp,
                            dest: dest.to_path_buf(),
                            committed: false,
                            perm,
                        },
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "{}: cannot create a file in its directory {}: {e}",
                            escape_path(dest),
                            escape_path(&dir)
                        ),
                    ))
                }
            }
        }
    }

    /// Writes `bytes` to `dest` and commits; `-` is standard output.
    pub fn write_whole(dest: &Path, bytes: &[u8]) -> io::Result<()> {
        if is_stdout(dest) {
            let mut out = io::stdout().lock();
            return out
                .write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| io::Error::new(e.kind(), format!("standard output: {e}")));
        }
        let out = OutputFile::create(dest)?;
        out.file()?.write_all(bytes)?;
        out.commit()
    }

    /// A handle to write through (a duplicate of the descriptor), its errors naming the file.
    pub fn file(&self) -> io::Result<Writer> {
        let dest = match &self.mode {
            Mode::Replace { dest, .. } | Mode::Direct { dest } => dest,
        };
        let file = self
            .file
            .try_clone()
            .map_err(|e| named("cannot write", dest, e))?;
        Ok(Writer {
            file,
            dest: dest.clone(),
        })
    }

    /// The temporary file, if there is one: the walker must not scan the
    /// report being written.
    pub fn temp_path(&self) -> Option<&Path> {
        match &self.mode {
            Mode::Replace { temp, .. } => Some(temp),
            Mode::Direct { .. } => None,
        }
    }

    /// Makes the report visible under its final name. Call after the writer
    /// is flushed.
    pub fn commit(mut self) -> io::Result<()> {
        let Mode::Replace {
            temp,
            dest,
            committed,
            perm,
        } = &mut self.mode
        else {
            return Ok(());
        };
        #[cfg(unix)]
        if let Some(bits) = perm {
            use std::os::unix::fs::PermissionsExt;
            let _ = self.file.set_permissions(fs::Permissions::from_mode(*bits));
        }
        let _ = perm;
        self.file
            .sync_all()
            .map_err(|e| named("cannot sync", temp, e))?;
        fs::rename(&*temp, &*dest).map_err(|e| named("cannot rename into place", dest, e))?;
        *committed = true;
        crate::signals::forget(temp);
        #[cfg(unix)]
        if let Some(dir) = dest.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            // Best effort: the rename is done; a file system that cannot sync a directory
            // (some network mounts) must not turn a finished report into an error.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Mode::Replace {
            temp,
            committed: false,
            ..
        } = &self.mode
        {
            let _ = fs::remove_file(temp);
            crate::signals::forget(temp);
        }
    }
}

#[cfg(unix)]
fn permission_bits(md: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(md.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn permission_bits(_md: &fs::Metadata) -> Option<u32> {
    None
}

/// 0666 less the process umask, read from `/proc/self/status` (setting the
/// umask to read it would race with other threads creating files); 0644
/// where it cannot be read.
fn new_file_mode() -> Option<u32> {
    let umask = fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    Some(0o666 & !umask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::finding;
    use crate::output::{Format, Sink, SinkOptions};

    #[test]
    fn commits_whole_or_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("report.json");
        fs::write(&dest, "old").unwrap();
        {
            let out = OutputFile::create(&dest).unwrap();
            let mut f = out.file().unwrap();
            f.write_all(b"half").unwrap();
            assert_eq!(
                out.temp_path().unwrap().parent(),
                Some(dir.path()),
                "same directory"
            );
            assert_eq!(fs::read(out.temp_path().unwrap()).unwrap(), b"half");
            // dropped without commit
        }
        assert_eq!(fs::read_to_string(&dest).unwrap(), "old");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temp file left behind"
        );

        let out = OutputFile::create(&dest).unwrap();
        let mut sink = Sink::new(
            SinkOptions {
                format: Format::Json,
                show_secrets: false,
                color: false,
            },
            Box::new(out.file().unwrap()),
        );
        sink.write_file_findings(vec![finding("a", 1, 1)]).unwrap();
        sink.finish(&[]).unwrap();
        assert_eq!(
            fs::read_to_string(&dest).unwrap(),
            "old",
            "visible before commit"
        );
        out.commit().unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&dest).unwrap()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 1);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("report.json")]);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_mode_of_the_report_it_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("private.json");
        fs::write(&dest, "old").unwrap();
        fs::set_permissions(&dest, fs::Permissions::from_mode(0o600)).unwrap();
        let out = OutputFile::create(&dest).unwrap();
        out.file().unwrap().write_all(b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read_to_string(&dest).unwrap(), "new");
        assert_eq!(
            fs::metadata(&dest).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn names_the_path_it_cannot_create() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("missing-dir").join("r.json");
        let e = OutputFile::create(&dest).unwrap_err();
        assert!(e.to_string().contains("missing-dir"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn temp_files_are_private_and_new_reports_get_the_usual_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("new.json");
        let out = OutputFile::create(&dest).unwrap();
        let temp = out.temp_path().unwrap().to_path_buf();
        assert_eq!(
            fs::metadata(&temp).unwrap().permissions().mode() & 0o777,
            0o600
        );
        out.commit().unwrap();
        let mode = fs::metadata(&dest).unwrap().permissions().mode() & 0o777;
        assert_eq!(Some(mode), new_file_mode());
    }

    #[cfg(unix)]
    #[test]
    fn links_devices_and_fifos_are_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        // A link to a regular file: the link stays, the target is rewritten.
        let target = dir.path().join("target.json");
        fs::write(&target, "old old old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        OutputFile::write_whole(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        // /dev/null stays a character device.
        OutputFile::write_whole(Path::new("/dev/null"), b"x").unwrap();
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        // A FIFO: its reader gets the bytes, and it is still a FIFO.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        OutputFile::write_whole(&fifo, b"report").unwrap();
        assert_eq!(reader.join().unwrap(), b"report");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        // No temp file anywhere.
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["fifo", "link.json", "target.json"]);
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = OutputFile::create(dir.path()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}
