//! What a scan reports besides its findings: the counts of the summary and
//! of `--stats-json`, every skip by reason, every suppression by reason.
//! Filled by the pipeline's sink thread and walker, read by `summary`.

use std::collections::BTreeMap;
use std::time::Duration;

use scanner_scheduler::MetricsSnapshot;

pub use crate::input::skip::{Skip, SkipCounts};

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
    /// Every warning about the inputs (an unreadable file, a skipped archive member), printed or
    /// not (`--log-level error` prints only the errors): SARIF's `toolExecutionNotifications`.
    pub warnings: Vec<Warning>,
    /// Lines from [`FindingFilter::finish`](crate::filter::FindingFilter::finish), printed after
    /// the summary (with `-q` too), not under `--log-level error`.
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
    /// not scanned again (`input/history/versions.rs`).
    pub unchanged_bytes: u64,
    pub metrics: MetricsSnapshot,
    pub elapsed: Duration,
    /// The producer thread (the walk, or the listing of any other source):
    /// its own CPU time and the items it handed to the workers.
    pub producer: Producer,
}

impl ScanReport {
    /// Records a warning about `path` (see [`ScanReport::warnings`]).
    pub fn warn(&mut self, path: Option<&std::path::Path>, reason: &str, error: bool) {
        let text = crate::messages::warning_text(path, reason);
        self.warnings.push(Warning { text, error });
    }
}

/// A warning about an input, as [`messages::warning_text`](crate::messages::warning_text)
/// writes it (`PATH: REASON`).
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    pub text: String,
    /// It made the run incomplete (exit 2 unless `--ignore-errors`).
    pub error: bool,
}

/// What the producer thread cost (`--stats-json`'s `producer`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Producer {
    /// CPU time of the producer thread (its thread clock: load on the
    /// machine does not change it).
    pub cpu: Duration,
    /// Items queued for the workers: by the producer, and by the workers
    /// when they walk the tree (`pipeline/dirs.rs`).
    pub items: u64,
}
