//! What the run tells the user besides the report: the summary and the
//! progress line on stderr, and `--stats-json`.
//!
//! # The summary
//!
//! Printed on stderr after the scan unless `--quiet` (stdout carries the
//! report only):
//!
//! ```text
//! scanned 1,204 files (48.2 MB) in 0.21 s, 229.5 MB/s: 3 findings
//! not scanned: 12 ignored, 2 binary, 1 symlink (not followed)
//! suppressed: 4 placeholder, 1 baseline
//! ```
//!
//! The rate is left out below 1 MB scanned, where it would measure start-up. Every file not
//! scanned appears under its reason (see `walk::Skip`), and
//! every suppressed candidate under its reason, so nothing is hidden
//! silently. Lines that would be empty are left out. Archives add a line of
//! what was opened, and one of what was left unread inside them, by
//! `archive::ArchiveSkip::label`, with the flag that raises the limit that
//! stopped it (each such skip is also an error: exit 2):
//!
//! ```text
//! archives: 3 opened, 1,002 members (10.5 MB expanded); inside archives: 1 symlink
//! not read inside archives: 2 corrupt, 1 too_large (raise --archive-max-bytes)
//! ```
//!
//! # `--stats-json FILE`
//!
//! One JSON object, written after the scan (atomically: a temp file renamed):
//!
//! ```json
//! {
//!   "files": 1204, "bytes": 48213504, "findings": 3, "errors": 0,
//!   "elapsed_secs": 0.21, "mb_per_sec": 229.5,
//!   "skipped_total": 14, "skipped": { "ignored": 12, "binary": 2 },
//!   "suppressed": { "placeholder": 4, "baseline": 1 },
//!   "archives": { "opened": 0, "members": 0, "expanded_bytes": 0, "skipped": {} },
//!   "producer": { "cpu_secs": 0.03, "items": 1218 },
//!   "history": null,
//!   "scheduler": {
//!     "wall_secs": 0.2, "utilization": 0.93,
//!     "tasks": { "local": 10, "injector": 1190, "stolen": 4 },
//!     "steal_attempts": 40, "steal_successes": 4, "parks": 7,
//!     "workers": [ { "tasks_local": 5, "tasks_injector": 600, "tasks_stolen": 2,
//!                    "steal_attempts": 20, "steal_successes": 2, "parks": 3,
//!                    "busy_secs": 0.19, "idle_secs": 0.01, "utilization": 0.95 } ]
//!   }
//! }
//! ```
//!
//! `producer` is the thread that walks the tree (or lists the history, or
//! the named inputs) and queues the work: `cpu_secs` is its own CPU time
//! (its thread clock, `CLOCK_THREAD_CPUTIME_ID`, so the load on the machine
//! does not change it; 0 where there is no such clock) and `items` the
//! inputs queued. Files per CPU-second of the producer is what caps a
//! scan on many cores (`items / cpu_secs`). When the workers walk the
//! tree (`pipeline/dirs.rs`), `items` also counts the files they queued
//! (the same total as one walking thread) and `cpu_secs` is the
//! producer's share only.
//!
//! `skipped` and `suppressed` hold only the non-zero reasons; keys are the
//! labels printed in the summary. MB are 10^6 bytes. With `--history`,
//! `files` counts distinct blobs scanned and `history` is `{"commits",
//! "blobs", "blob_bytes", "duplicate_blobs", "submodules", "symlinks",
//! "deletions", "unlisted_commits", "unchanged_bytes"}`: commits walked,
//! distinct blobs listed (each scanned once), added or modified entries
//! whose blob was already listed, commits whose own tree could not be read
//! whole (a partial clone without trees; an error), and the bytes of later
//! versions of files that lie outside what each changed: counted in `bytes`
//! (they were read) but scanned only as far as the rules' windows around
//! the changes reach; their findings were reported with the version that
//! introduced them. There `suppressed` may hold `unchanged in a later
//! version`: findings of a version scanned whole (one scanned in pieces, or
//! one under 8 KiB) that lie outside what it changed. The summary says how
//! many MB were unchanged (`history: ... unchanged since the version
//! before`).
//!
//! Every run adds `shard` (`{"index": K, "count": N}` with `--shard`, else
//! `null`) and `run` (version, rule-set and options digests, the report's
//! format, size and digest); a sharded run adds `rules` and
//! `version_control` too. `scanner
//! merge` reads them: see [`crate::shard`].

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use crate::progress::{megabytes, plural, thousands};
use crate::report::ScanReport;

/// Decimal MB per second over the elapsed time (0 for an instant run).
pub fn mb_per_sec(bytes: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        0.0
    } else {
        bytes as f64 / 1e6 / secs
    }
}

/// The summary lines (see the module docs).
pub fn summary_lines(r: &ScanReport) -> Vec<String> {
    let what = match &r.history {
        // Each distinct blob once, whatever the number of commits holding it.
        Some(h) => format!(
            "{} {} of {} {}",
            thousands(r.files),
            plural(r.files, "blob", "blobs"),
            thousands(h.commits),
            plural(h.commits, "commit", "commits")
        ),
        None => format!(
            "{} {}",
            thousands(r.files),
            plural(r.files, "file", "files")
        ),
    };
    // A rate over less than a megabyte measures start-up, not throughput: not shown.
    let rate = if r.bytes >= 1_000_000 {
        format!(", {:.1} MB/s", mb_per_sec(r.bytes, r.elapsed))
    } else {
        String::new()
    };
    let mut lines = vec![format!(
        "scanned {what} ({}) in {:.2} s{rate}: {} {}",
        megabytes(r.bytes),
        r.elapsed.as_secs_f64(),
        thousands(r.findings),
        plural(r.findings, "finding", "findings"),
    )];
    let a = &r.archives;
    if a.archives > 0 {
        let mut line = format!(
            "archives: {} opened, {} {} ({} expanded)",
            thousands(a.archives),
            thousands(a.members),
            plural(a.members, "member", "members"),
            megabytes(a.expanded_bytes)
        );
        let (unread, noted): (Vec<_>, Vec<_>) = a
            .skip_counts
            .iter()
            .partition(|(label, _)| crate::input::archive::label_incomplete(label));
        if !noted.is_empty() {
            let s: Vec<String> = noted
                .iter()
                .map(|(label, n)| format!("{} {label}", thousands(**n)))
                .collect();
            line.push_str(&format!("; inside archives: {}", s.join(", ")));
        }
        lines.push(line);
        // What was left unread, and the flag that would have read it.
        if !unread.is_empty() {
            let s: Vec<String> = unread
                .iter()
                .map(
                    |(label, n)| match crate::input::archive::flag_for_label(label) {
                        Some(flag) => format!("{} {label} (raise {flag})", thousands(**n)),
                        None => format!("{} {label}", thousands(**n)),
                    },
                )
                .collect();
            lines.push(format!("not read inside archives: {}", s.join(", ")));
        }
    }
    if r.unchanged_bytes > 0 {
        lines.push(format!(
            "history: {} of later versions unchanged since the version before, scanned only \
             around the changes",
            megabytes(r.unchanged_bytes)
        ));
    }
    let skipped: Vec<String> = r
        .skips
        .nonzero()
        .map(|(reason, n)| format!("{} {}", thousands(n), reason.label()))
        .collect();
    if !skipped.is_empty() {
        lines.push(format!("not scanned: {}", skipped.join(", ")));
    }
    if !r.suppressed.is_empty() {
        let s: Vec<String> = r
            .suppressed
            .iter()
            .map(|(reason, n)| format!("{} {reason}", thousands(*n)))
            .collect();
        lines.push(format!("suppressed: {}", s.join(", ")));
    }
    if r.errors > 0 {
        lines.push(format!(
            "{} {} could not be read (see the warnings above)",
            thousands(r.errors),
            plural(r.errors, "path", "paths")
        ));
    }
    lines
}

pub fn print_summary(r: &ScanReport) {
    crate::messages::print_lines(&summary_lines(r));
}

/// The `--stats-json` object (see the module docs).
pub fn stats_json(r: &ScanReport) -> serde_json::Value {
    let m = &r.metrics;
    let total = if m.workers.is_empty() {
        Default::default()
    } else {
        m.total()
    };
    let wall = m.wall.as_secs_f64();
    let workers: Vec<_> = m
        .workers
        .iter()
        .map(|w| {
            json!({
                "tasks_local": w.tasks_local,
                "tasks_injector": w.tasks_injector,
                "tasks_stolen": w.tasks_stolen,
                "steal_attempts": w.steal_attempts,
                "steal_successes": w.steal_successes,
                "parks": w.parks,
                "busy_secs": w.busy.as_secs_f64(),
                "idle_secs": w.idle.as_secs_f64(),
                "utilization": if wall > 0.0 { w.busy.as_secs_f64() / wall } else { 0.0 },
            })
        })
        .collect();
    let skipped: serde_json::Map<String, serde_json::Value> = r
        .skips
        .nonzero()
        .map(|(reason, n)| (reason.label().to_string(), json!(n)))
        .collect();
    json!({
        "files": r.files,
        "bytes": r.bytes,
        "findings": r.findings,
        "errors": r.errors,
        "elapsed_secs": r.elapsed.as_secs_f64(),
        "mb_per_sec": mb_per_sec(r.bytes, r.elapsed),
        "skipped_total": r.skips.total(),
        "skipped": skipped,
        "suppressed": r.suppressed,
        "archives": {
            "opened": r.archives.archives,
            "members": r.archives.members,
            "expanded_bytes": r.archives.expanded_bytes,
            "skipped": r.archives.skip_counts,
        },
        "producer": {
            "cpu_secs": r.producer.cpu.as_secs_f64(),
            "items": r.producer.items,
        },
        "history": r.history.as_ref().map(|h| json!({
            "commits": h.commits,
            "blobs": h.blobs,
            "blob_bytes": h.blob_bytes,
            "duplicate_blobs": h.duplicate_blobs,
            "submodules": h.submodules,
            "symlinks": h.symlinks,
            "deletions": h.deletions,
            "unlisted_commits": h.unlisted,
            "unchanged_bytes": r.unchanged_bytes,
        })),
        "scheduler": {
            "wall_secs": wall,
            "utilization": if m.workers.is_empty() { 0.0 } else { m.utilization() },
            "tasks": {
                "local": total.tasks_local,
                "injector": total.tasks_injector,
                "stolen": total.tasks_stolen,
            },
            "steal_attempts": total.steal_attempts,
            "steal_successes": total.steal_successes,
            "parks": total.parks,
            "workers": workers,
        },
    })
}

/// Writes `--stats-json` (see [`crate::outfile`]).
pub fn write_stats_json(path: &Path, r: &ScanReport) -> anyhow::Result<()> {
    write_stats_json_with(path, r, serde_json::Map::new())
}

/// Writes `--stats-json` with `extra` keys (`shard`, `run`, `rules`: see
/// [`crate::shard`]) after the counts.
pub fn write_stats_json_with(
    path: &Path,
    r: &ScanReport,
    extra: serde_json::Map<String, serde_json::Value>,
) -> anyhow::Result<()> {
    let mut v = stats_json(r);
    if let Some(obj) = v.as_object_mut() {
        obj.extend(extra);
    }
    let mut json = serde_json::to_vec_pretty(&v)?;
    json.push(b'\n');
    crate::outfile::OutputFile::write_whole(path, &json).context("--stats-json")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Skip;

    #[test]
    fn numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(megabytes(44), "44 B");
        assert_eq!(megabytes(1500), "1.5 KB");
        assert_eq!(megabytes(48_213_504), "48.2 MB");
    }

    #[test]
    fn lines() {
        let mut r = ScanReport {
            files: 1,
            bytes: 2_000_000,
            findings: 3,
            elapsed: Duration::from_millis(500),
            ..Default::default()
        };
        r.skips.add(Skip::Binary, 2);
        r.skips.add(Skip::Ignored, 12);
        r.suppressed.insert("baseline", 1);
        assert_eq!(
            summary_lines(&r),
            [
                "scanned 1 file (2.0 MB) in 0.50 s, 4.0 MB/s: 3 findings",
                "not scanned: 12 ignored, 2 binary",
                "suppressed: 1 baseline",
            ]
        );
        let small = ScanReport {
            files: 2,
            bytes: 1500,
            findings: 1,
            elapsed: Duration::from_millis(20),
            ..Default::default()
        };
        assert_eq!(
            summary_lines(&small),
            ["scanned 2 files (1.5 KB) in 0.02 s: 1 finding"]
        );
        let v = stats_json(&r);
        assert_eq!(v["skipped"]["binary"], 2);
        assert_eq!(v["suppressed"]["baseline"], 1);
        assert_eq!(v["scheduler"]["workers"].as_array().unwrap().len(), 0);
        assert_eq!(v["producer"], json!({"cpu_secs": 0.0, "items": 0}));
        r.producer = crate::report::Producer {
            cpu: Duration::from_millis(250),
            items: 7,
        };
        let v = stats_json(&r);
        assert_eq!(v["producer"], json!({"cpu_secs": 0.25, "items": 7}));
    }

    /// Archive skips: those that left content unread on their own line,
    /// each with the flag that raises its limit.
    #[test]
    fn archive_lines() {
        let mut r = ScanReport::default();
        r.archives.archives = 3;
        r.archives.members = 1002;
        r.archives.expanded_bytes = 10_500_000;
        for (label, n) in [("symlink", 1), ("too_large", 1), ("corrupt", 2)] {
            r.archives.skip_counts.insert(label, n);
        }
        assert_eq!(
            summary_lines(&r)[1..],
            [
                "archives: 3 opened, 1,002 members (10.5 MB expanded); inside archives: 1 symlink",
                "not read inside archives: 2 corrupt, 1 too_large (raise --archive-max-bytes)",
            ]
        );
    }
}
