//! Path arithmetic shared by the config and the baseline (both resolve paths relative to the
//! directory of a file the user named), paths as URIs, for the SARIF report and the
//! provenance of a history scan, and paths as the raw bytes git stores.

use std::ffi::OsString;
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

/// The path as a URI reference: relative paths stay relative (`./` dropped), separators are
/// `/`, and every byte outside RFC 3986's unreserved set is percent-encoded, so the URI is
/// exact even for a non-UTF-8 name and a `:` in a first segment cannot read as a scheme. A
/// path led by a URL (`SCHEME://host/...`: a remote repository's file) is that URL, its
/// path's segments encoded as a path's are.
pub fn path_uri(path: &Path) -> String {
    if let Some(uri) = url_uri(path.as_os_str().as_encoded_bytes()) {
        return uri;
    }
    let mut segments: Vec<String> = Vec::new();
    let mut absolute = false;
    for c in path.components() {
        match c {
            Component::Prefix(p) => {
                // Windows `C:`: keep the drive as the first segment of a file URI.
                absolute = true;
                segments.push(encode(p.as_os_str().as_encoded_bytes()).replace("%3A", ":"));
            }
            Component::RootDir => absolute = true,
            Component::CurDir => {}
            Component::ParentDir => segments.push("..".into()),
            Component::Normal(s) => segments.push(encode(s.as_encoded_bytes())),
        }
    }
    let joined = segments.join("/");
    if absolute {
        format!("file:///{joined}")
    } else {
        joined
    }
}

/// `SCHEME://AUTHORITY/PATH` (a scheme of two characters or more: not a drive letter) with
/// each segment of PATH encoded; `None` for anything else.
fn url_uri(bytes: &[u8]) -> Option<String> {
    let colon = bytes.windows(3).position(|w| w == b"://")?;
    let scheme = &bytes[..colon];
    let valid = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.');
    if scheme.len() < 2 || !scheme[0].is_ascii_alphabetic() || !scheme.iter().all(valid) {
        return None;
    }
    let rest = &bytes[colon + 3..];
    let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let mut out = String::from_utf8_lossy(scheme).into_owned() + "://";
    for &b in &rest[..end] {
        match b.is_ascii_alphanumeric() || b"-._~:[]!$&'()*+,;=".contains(&b) {
            true => out.push(b as char),
            false => out.push_str(&format!("%{b:02X}")),
        }
    }
    for segment in rest[end..].split(|&b| b == b'/').skip(1) {
        out.push('/');
        out.push_str(&encode(segment));
    }
    Some(out)
}

fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The archive a member's path names (`x.zip!a.env`, `!` between the
/// levels): the longest prefix before a `!` that is a file. A member's name
/// is its raw bytes, as a file's (`archive::member_path`): they need not be UTF-8.
#[cfg(unix)]
pub fn archive_of(path: &Path) -> Option<&Path> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    (0..bytes.len())
        .rev()
        .filter(|&i| bytes[i] == b'!')
        .map(|i| Path::new(std::ffi::OsStr::from_bytes(&bytes[..i])))
        .find(|p| p.is_file())
}

#[cfg(not(unix))]
pub fn archive_of(path: &Path) -> Option<&Path> {
    let s = path.to_str()?;
    s.rmatch_indices('!')
        .map(|(i, _)| Path::new(&s[..i]))
        .find(|p| p.is_file())
}

/// Raw path bytes to a `PathBuf`, exactly on Unix.
pub fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(OsString::from_vec(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(OsString::from(String::from_utf8_lossy(&bytes).into_owned()))
    }
}

/// A path's raw bytes, exactly on Unix.
pub fn path_bytes(path: &Path) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::borrow::Cow::Borrowed(path.as_os_str().as_bytes())
    }
    #[cfg(not(unix))]
    {
        std::borrow::Cow::Owned(path.to_string_lossy().into_owned().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_slashed_and_percent_encoded() {
        assert_eq!(path_uri(Path::new("./a b/c#d%.env")), "a%20b/c%23d%25.env");
        assert_eq!(path_uri(Path::new("../x/é:y")), "../x/%C3%A9%3Ay");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            assert_eq!(path_uri(Path::new("/tmp/r/a.env")), "file:///tmp/r/a.env");
            let raw = std::ffi::OsStr::from_bytes(b"caf\xE9.env");
            assert_eq!(path_uri(Path::new(raw)), "caf%E9.env");
        }
    }

    #[test]
    fn a_path_led_by_a_url_is_that_url() {
        assert_eq!(
            path_uri(Path::new("https://[::1]:8/o/r.git/a b/c.env")),
            "https://[::1]:8/o/r.git/a%20b/c.env"
        );
        assert_eq!(
            path_uri(Path::new("file:///srv/r.git/x.env")),
            "file:///srv/r.git/x.env"
        );
        assert_eq!(path_uri(Path::new("h:o/r.git/x.env")), "h%3Ao/r.git/x.env");
        assert_eq!(path_uri(Path::new("a/b://c")), "a/b%3A/c");
    }
}
