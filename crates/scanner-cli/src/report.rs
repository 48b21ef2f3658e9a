//! What a scan reports besides its findings: the counts of the summary and
//! of `--stats-json`, every skip by reason, every suppression by reason.
//! Filled by the pipeline's sink thread and walker, read by `summary`.

use std::collections::BTreeMap;
use std::time::Duration;

use scanner_scheduler::MetricsSnapshot;

/// Everything the summary reports.
#[derive(Debug, Default)]
pub struct ScanReport {
    pub files: u64,
    pub bytes: u64,
    /// Findings written to the report (after filters).
    pub findings: u64,
    pub skips: SkipCounts,
    /// Dropped findings by reason: the engine's (`inline allow`,
    /// `allowlist`, ...) and the filters' (`baseline`, ...).
    pub suppressed: BTreeMap<&'static str, u64>,
    /// Files or directories in scope that could not be read (exit 2 unless
    /// `--ignore-errors`).
    pub errors: u64,
    /// Lines from [`FindingFilter::finish`](crate::filter::FindingFilter::finish), printed after the summary.
    pub notes: Vec<String>,
    /// The report writer stopped because stdout was closed.
    pub broken_pipe: bool,
    /// The scan was stopped before the end (Ctrl-C, SIGTERM).
    pub interrupted: bool,
    /// Archives opened, members scanned, skips inside archives.
    pub archives: crate::input::archive::ArchiveStats,
    /// `--history`: commits walked, distinct blobs, duplicates.
    pub history: Option<crate::input::history::HistoryStats>,
    /// `--history`: bytes of later versions outside what they changed,
    /// not scanned again (`pipeline/versions.rs`).
    pub unchanged_bytes: u64,
    pub metrics: MetricsSnapshot,
    pub elapsed: Duration,
    /// The producer thread (the walk, or the listing of any other source):
    /// its own CPU time and the items it handed to the workers.
    pub producer: Producer,
}

/// What the producer thread cost (`--stats-json`'s `producer`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Producer {
    /// CPU time of the producer thread (its thread clock: load on the
    /// machine does not change it).
    pub cpu: Duration,
    /// Items queued for the workers.
    pub items: u64,
}

/// Why a file or directory was not scanned. The summary prints
/// [`Skip::label`]; `--stats-json` uses it as the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Skip {
    /// Excluded by an ignore file (see the module docs for what is counted).
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
    /// With `--follow`: a file already reached by another path.
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
