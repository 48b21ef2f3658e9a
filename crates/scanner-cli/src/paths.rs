//! Path arithmetic shared by the config and the baseline: both resolve paths relative to the
//! directory of a file the user named.

use std::path::{Component, Path, PathBuf};

use anyhow::Context;

/// The current directory; the error says what failed.
pub fn current_dir() -> anyhow::Result<PathBuf> {
    std::env::current_dir().context("cannot read the current directory")
}

/// `base.join(path)` with `.` and `..` removed lexically (no syscalls: this runs per file).
pub fn absolute(base: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The directory holding `file` (relative to `cwd`), absolute, and canonical when it exists so
/// that symlinked spellings of it compare equal.
pub fn parent_dir(cwd: &Path, file: &Path) -> PathBuf {
    let abs = absolute(cwd, file);
    let dir = abs.parent().map(Path::to_path_buf).unwrap_or(abs);
    dir.canonicalize().unwrap_or(dir)
}
