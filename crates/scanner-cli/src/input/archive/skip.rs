//! Why a member, or the rest of an archive, was not scanned: [`ArchiveSkip`], the archive
//! module's error, with its labels for summaries and the flag that raises each limit.

use std::fmt;

use super::MAX_ZSTD_WINDOW;

/// Why a member, or the rest of an archive, was not scanned (or, for
/// [`UnsafeName`](ArchiveSkip::UnsafeName), why a scanned member is
/// suspicious).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchiveSkip {
    /// [`Limits::max_total_bytes`](super::Limits::max_total_bytes) spent: the
    /// rest of the top-level archive.
    TooLarge,
    /// [`Limits::max_run_bytes`](super::Limits::max_run_bytes) spent by the
    /// archives of this run: the rest of this archive (and of every archive
    /// after it).
    RunTooLarge,
    /// [`Limits::max_members`](super::Limits::max_members) reached: the rest of
    /// the top-level archive.
    TooManyMembers,
    /// A nested archive past [`Limits::max_depth`](super::Limits::max_depth):
    /// not opened.
    TooDeep,
    /// A zstd frame whose window (the bytes given) is over
    /// [`MAX_ZSTD_WINDOW`]: not decoded.
    WindowTooLarge(u64),
    /// An encrypted zip member: we have no password.
    Encrypted,
    /// An absolute or `../` member name. The member is still scanned; this
    /// is only reported.
    UnsafeName,
    /// A symlink or hard-link member: not followed, no content scanned.
    SymlinkMember,
    /// The data ended early (the member, or the rest of a stream).
    Truncated,
    /// Unreadable data or structure, with the decoder's message.
    Corrupt(String),
    /// A compression method we do not decode (zip's bzip2, lzma, AES...).
    Unsupported(String),
}

impl ArchiveSkip {
    /// A stable one-word name, for counts in summaries and JSON.
    pub fn label(&self) -> &'static str {
        match self {
            ArchiveSkip::TooLarge => "too_large",
            ArchiveSkip::RunTooLarge => "run_too_large",
            ArchiveSkip::TooManyMembers => "too_many_members",
            ArchiveSkip::TooDeep => "too_deep",
            ArchiveSkip::WindowTooLarge(_) => "window_too_large",
            ArchiveSkip::Encrypted => "encrypted",
            ArchiveSkip::UnsafeName => "unsafe_name",
            ArchiveSkip::SymlinkMember => "symlink",
            ArchiveSkip::Truncated => "truncated",
            ArchiveSkip::Corrupt(_) => "corrupt",
            ArchiveSkip::Unsupported(_) => "unsupported",
        }
    }

    /// True if content was left unread: the run is incomplete, as for an
    /// unreadable file. Only a link member (not followed, as a symlink on
    /// disk is not) and an unsafe name (scanned) leave nothing unread.
    pub fn incomplete(&self) -> bool {
        label_incomplete(self.label())
    }

    /// The flag that raises the limit behind this skip, if a flag does.
    pub fn flag(&self) -> Option<&'static str> {
        flag_for_label(self.label())
    }
}

/// [`ArchiveSkip::incomplete`] of the skips labelled `label`.
pub fn label_incomplete(label: &str) -> bool {
    !matches!(label, "unsafe_name" | "symlink")
}

/// The hint for [`ArchiveSkip::TooDeep`], with the ceiling of the flag
/// ([`MAX_DEPTH`](super::MAX_DEPTH), spelled out: `concat!` takes literals).
const TOO_DEEP_FLAG: &str = concat!("--archive-depth, at most ", 32);
const _: () = assert!(
    super::MAX_DEPTH == 32,
    "TOO_DEEP_FLAG names the old ceiling"
);

/// The flag that raises the limit behind the skips labelled `label`
/// ([`ArchiveSkip::label`]), if a flag does.
pub fn flag_for_label(label: &str) -> Option<&'static str> {
    match label {
        "too_large" => Some("--archive-max-bytes"),
        "run_too_large" => Some("--archive-max-run-bytes"),
        "too_many_members" => Some("--archive-max-members"),
        // The flag has a ceiling (stack depth): a run at the ceiling must
        // not be told to raise it without being told how far it goes.
        "too_deep" => Some(TOO_DEEP_FLAG),
        _ => None,
    }
}

impl std::error::Error for ArchiveSkip {}

impl fmt::Display for ArchiveSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveSkip::TooLarge => f.write_str("archive expands past the total size limit"),
            ArchiveSkip::RunTooLarge => {
                f.write_str("the archives of this run expanded past their total size limit")
            }
            ArchiveSkip::TooManyMembers => f.write_str("too many archive members"),
            ArchiveSkip::TooDeep => f.write_str("archive nested too deep"),
            ArchiveSkip::WindowTooLarge(window) => write!(
                f,
                "zstd window of {} MiB, over the {} MiB the reference zstd decodes without --long",
                window >> 20,
                MAX_ZSTD_WINDOW >> 20
            ),
            ArchiveSkip::Encrypted => f.write_str("encrypted member"),
            ArchiveSkip::UnsafeName => f.write_str("absolute or ../ member name"),
            ArchiveSkip::SymlinkMember => f.write_str("link member, not followed"),
            ArchiveSkip::Truncated => f.write_str("truncated"),
            ArchiveSkip::Corrupt(why) => write!(f, "corrupt: {why}"),
            ArchiveSkip::Unsupported(what) => write!(f, "unsupported: {what}"),
        }?;
        match self.flag() {
            Some(flag) => write!(f, " (raise {flag})"),
            None => Ok(()),
        }
    }
}
