//! Where a walk is ([`Scope`]), and the display paths of members: `a.zip!lib/b.jar!c.properties`.

use std::path::{Path, PathBuf};

use super::{ArchiveSkip, Budget};

/// Where we are: one open archive, its display path and its depth.
pub struct Scope<'b> {
    pub(super) budget: &'b Budget,
    pub(super) path: PathBuf,
    depth: u32,
}

impl<'b> Scope<'b> {
    /// The scope of a top-level archive, shown as `display` (its path).
    pub fn top(budget: &'b Budget, display: &Path) -> Scope<'b> {
        Scope {
            budget,
            path: display.to_path_buf(),
            depth: 1,
        }
    }

    /// The display path of this archive: `a.zip`, `a.zip!lib/b.jar`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Archives open at this level: 1 for the top-level archive.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn budget(&self) -> &'b Budget {
        self.budget
    }

    /// The display path of a member of this archive.
    pub fn member_path(&self, name: &[u8]) -> PathBuf {
        member_path(&self.path, name)
    }

    /// The scope of the archive held in member `name`, or
    /// [`ArchiveSkip::TooDeep`] (already recorded) past the depth limit.
    pub fn nested(&self, name: &[u8]) -> Result<Scope<'b>, ArchiveSkip> {
        let path = self.member_path(name);
        if self.depth >= self.budget.limits.max_depth {
            self.budget.record(path, ArchiveSkip::TooDeep);
            return Err(ArchiveSkip::TooDeep);
        }
        Ok(Scope {
            budget: self.budget,
            path,
            depth: self.depth + 1,
        })
    }

    /// Records a skip for member `name` of this archive.
    pub fn record(&self, name: &[u8], reason: ArchiveSkip) {
        self.budget.record(self.member_path(name), reason);
    }

    pub(super) fn record_here(&self, reason: ArchiveSkip) {
        self.budget.record(self.path.clone(), reason);
    }
}

/// `ARCHIVE!MEMBER`, the member name as stored (raw bytes), so that the path is exact as a
/// file's is: escaped where it is shown (`messages::escape_path`), its bytes in the JSON
/// report's `path_bytes` when they are not UTF-8. Nested paths chain:
/// `a.zip!lib/b.jar!c.properties`.
pub fn member_path(archive: &Path, name: &[u8]) -> PathBuf {
    let mut path = crate::paths::path_bytes(archive).into_owned();
    path.push(b'!');
    path.extend_from_slice(name);
    crate::paths::path_from_bytes(path)
}

/// Appends a raw member name to a message: UTF-8 as is, control characters
/// and bytes that are not UTF-8 as `\xNN`, so that a hostile name cannot
/// move the terminal cursor or forge a line of output.
pub fn escape_name(name: &[u8], out: &mut String) {
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
}

/// A member name that would escape an extraction directory: absolute
/// (`/x`, `\x`, `C:x`) or with a `..` component.
pub fn is_unsafe_name(name: &[u8]) -> bool {
    if name.starts_with(b"/") || name.starts_with(b"\\") {
        return true;
    }
    if name.len() >= 2 && name[0].is_ascii_alphabetic() && name[1] == b':' {
        return true;
    }
    name.split(|&b| b == b'/' || b == b'\\').any(|c| c == b"..")
}
