//! Why a file or directory was not scanned ([`Skip`]), and the counts by reason
//! ([`SkipCounts`]): the sources count their skips as they list, the report
//! ([`crate::report`]) carries the totals.

/// Why a file or directory was not scanned. The summary prints
/// [`Skip::label`]; `--stats-json` uses it as the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Skip {
    /// Excluded by an ignore file (see [`crate::input::walk`] for what is counted).
    Ignored,
    /// Matched an `--exclude` glob.
    Excluded,
    /// Matched the config's `allow_paths`.
    AllowlistedPath,
    /// A NUL byte in the first 8 KiB (scanned anyway with `--binary`).
    Binary,
    /// Larger than `--max-filesize`.
    TooLarge,
    /// Could not be opened or read (a warning names the path and reason).
    Unreadable,
    /// A symbolic link, not followed (no `--follow`).
    SymlinkNotFollowed,
    /// A symbolic link whose target does not exist.
    SymlinkBroken,
    /// A symbolic link leading back to an ancestor (`--follow`).
    SymlinkLoop,
    /// A FIFO, socket or device: reading it could block or never end.
    Special,
    /// The report this run is writing (`-o FILE` inside the scanned tree,
    /// or stdout redirected there): with `--show-secrets` it would hold
    /// every finding again.
    OwnOutput,
    /// A submodule entry in history (a commit id of another repository).
    Submodule,
    /// `--staged` during a merge: a conflicted path, which git will not
    /// commit until it is resolved.
    Unmerged,
    /// With `--follow`: a file or directory already reached by another
    /// path (a directory counts once; its contents are not walked again).
    Duplicate,
}

impl Skip {
    pub const ALL: [Skip; 14] = [
        Skip::Ignored,
        Skip::Excluded,
        Skip::AllowlistedPath,
        Skip::Binary,
        Skip::TooLarge,
        Skip::Unreadable,
        Skip::SymlinkNotFollowed,
        Skip::SymlinkBroken,
        Skip::SymlinkLoop,
        Skip::Special,
        Skip::OwnOutput,
        Skip::Submodule,
        Skip::Unmerged,
        Skip::Duplicate,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Skip::Ignored => "ignored",
            Skip::Excluded => "excluded",
            Skip::AllowlistedPath => "allowlisted path",
            Skip::Binary => "binary",
            Skip::TooLarge => "too large",
            Skip::Unreadable => "unreadable",
            Skip::SymlinkNotFollowed => "symlink (not followed)",
            Skip::SymlinkBroken => "symlink (broken)",
            Skip::SymlinkLoop => "symlink (loop)",
            Skip::Special => "special file",
            Skip::OwnOutput => "own report",
            Skip::Submodule => "submodule",
            Skip::Unmerged => "unmerged",
            Skip::Duplicate => "already scanned (link)",
        }
    }

    /// Whether `-v` names each file skipped for this reason (`scanner: not
    /// scanned: PATH: REASON`): what a file is or holds. Not what the
    /// user's rules leave out (an ignored directory counts once: `target/`'s
    /// contents would drown the output), nor the run's own files, nor what
    /// a warning names already (an unreadable file, a broken link, a loop),
    /// nor the counts a source keeps without paths (submodules, unmerged).
    pub fn listed(self) -> bool {
        matches!(
            self,
            Skip::Binary
                | Skip::TooLarge
                | Skip::SymlinkNotFollowed
                | Skip::Special
                | Skip::Duplicate
        )
    }

    fn index(self) -> usize {
        Skip::ALL.iter().position(|&s| s == self).unwrap()
    }
}

/// Counts by [`Skip`] reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipCounts([u64; Skip::ALL.len()]);

impl SkipCounts {
    pub fn add(&mut self, reason: Skip, n: u64) {
        self.0[reason.index()] += n;
    }
    pub fn get(&self, reason: Skip) -> u64 {
        self.0[reason.index()]
    }
    pub fn merge(&mut self, other: &SkipCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// Non-zero counts, in [`Skip::ALL`] order.
    pub fn nonzero(&self) -> impl Iterator<Item = (Skip, u64)> + '_ {
        Skip::ALL
            .iter()
            .map(|&s| (s, self.get(s)))
            .filter(|&(_, n)| n > 0)
    }
}
