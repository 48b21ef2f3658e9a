//! Suppressions decided after scanning.
//!
//! The engine drops what it can judge from the bytes alone (inline
//! `scanner:allow`, allowlists, placeholders) and counts it in
//! `ScanScratch::take_suppressed`. Some decisions need more than the bytes:
//! a baseline of known fingerprints, the lines a `--diff` added, a config
//! `allow_paths` scoped to one rule. Those are [`FindingFilter`]s.
//!
//! # Where filters run
//!
//! In the sink thread, one finding at a time, after line numbers are final
//! (split files are resolved first) and before the report writer sees the
//! finding. A filter therefore sees every finding exactly once, in file
//! batches, and needs no locking: it is `Send` (moved into the sink thread)
//! but never shared.
//!
//! # Plugging one in
//!
//! `scan.rs` builds the list (`ScanPlan::filters`) and hands it to
//! [`crate::pipeline::scan`]; add yours there. Every dropped finding is
//! counted under the reason the filter returns, and the summary prints the
//! counts, so nothing is hidden silently. Lines returned by
//! [`FindingFilter::finish`] are printed on stderr after the scan.

use crate::input::git::DiffFilter;
use crate::output::PathFinding;

/// A post-scan suppression hook (baseline, diff context, ...).
pub trait FindingFilter: Send {
    /// None keeps the finding; Some(reason) drops it and counts it in the
    /// summary under `reason` (e.g. "baseline", "diff-context").
    fn check(&mut self, f: &PathFinding) -> Option<&'static str>;

    /// After the scan: lines to print on stderr (e.g. unused baseline
    /// entries).
    fn finish(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// `--min-confidence`: drops findings below the level (reason
/// `below --min-confidence`).
pub struct MinConfidence(pub scanner_engine::Confidence);

impl FindingFilter for MinConfidence {
    fn check(&mut self, f: &PathFinding) -> Option<&'static str> {
        (f.finding.confidence < self.0).then_some("below --min-confidence")
    }
}

/// `--diff BASE`: drops findings none of whose lines were added (reason `diff-context`).
impl FindingFilter for DiffFilter {
    fn check(&mut self, f: &PathFinding) -> Option<&'static str> {
        let x = &f.finding;
        (!self.keeps(&f.path, x.line, x.end_line)).then_some("diff-context")
    }
}
