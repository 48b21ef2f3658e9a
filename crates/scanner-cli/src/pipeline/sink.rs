//! The sink thread: filters, writes, counts.
//!
//! Workers send one [`Msg`] per input that has something to say: the whole
//! input's findings (so text never interleaves), a skip, a failure, engine
//! suppressions. A clean input, the common case, is only counted in shared
//! atomics ([`Counts`]): no message, no wakeup of a sleeping sink thread.
//! The sink thread runs the [`FindingFilter`]s, writes to the [`Sink`],
//! keeps the other counts of the [`ScanReport`], prints warnings (between
//! redraws of the progress line), and stops the run quietly when stdout is
//! a closed pipe.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use scanner_engine::{Finding, Suppressed};

use crate::filter::FindingFilter;
use crate::input::Provenance;
use crate::messages;
use crate::output::{is_broken_pipe, PathFinding, Sink};
use crate::progress::Progress;
use crate::report::{ScanReport, Skip};

/// Inputs and bytes scanned, counted by the workers themselves: a clean
/// input then costs no message and no wakeup of the sink thread, which
/// reads these for the progress line and the summary.
#[derive(Default)]
pub struct Counts {
    pub files: AtomicU64,
    pub bytes: AtomicU64,
    /// Bytes of history blobs that lie outside what changed since the
    /// version they modify: counted in `bytes` (read), but scanned only
    /// as far as the rules' windows around the changes reach
    /// (`input/history/versions.rs`).
    pub unchanged: AtomicU64,
}

impl Counts {
    pub fn get(&self) -> (u64, u64) {
        (
            self.files.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// Worker or source → sink.
pub enum Msg {
    /// One per input with findings, a skip, a failure or suppressions.
    Input {
        provenance: Provenance,
        outcome: Outcome,
        suppressed: Suppressed,
    },
    /// Something the user should hear about that is not an input's outcome
    /// (a broken link, a bad ignore file line). `is_error`: content in scope
    /// was not scanned (exit 2 unless `--ignore-errors`).
    Warning {
        path: PathBuf,
        reason: String,
        is_error: bool,
    },
    /// A file a source left out and counted itself (a link not followed,
    /// a special file): listed under `-v` only.
    NotScanned { path: PathBuf, reason: Skip },
    /// What happened inside one archive (members, expanded bytes, skips).
    Archive(crate::input::archive::ArchiveStats),
}

pub enum Outcome {
    Scanned {
        bytes: u64,
        findings: Vec<Finding>,
    },
    Skipped(Skip),
    /// A read failed: the reason for the warning, and what was found in
    /// the part read before the failure (reported: a secret seen is never
    /// dropped; the exit status is 2 anyway).
    Failed {
        reason: String,
        findings: Vec<Finding>,
    },
}

/// Runs until every sender is gone. Returns the report (without source
/// counts and metrics) and the sink.
///
/// This is the one place where a finding is kept or suppressed after the
/// engine: findings the engine kept but marked `allowed` (with
/// `ScanOptions::list_suppressed`), then the filters. Each suppressed
/// finding is counted under its reason and, with `list_suppressed` (`-v`),
/// listed on stderr.
pub fn sink_loop(
    rx: Receiver<Msg>,
    sink: Sink,
    mut filters: Vec<Box<dyn FindingFilter>>,
    progress: Option<Progress>,
    list_suppressed: bool,
    stop: &super::StopHandle,
    counts: &Counts,
) -> anyhow::Result<(Sink, ScanReport)> {
    let mut sink = sink;
    let mut report = ScanReport::default();
    let mut engine_suppressed = Suppressed::default();
    let mut write_error: Option<io::Error> = None;
    let say = |progress: &Option<Progress>, line: String| match progress {
        Some(p) => p.println(&line),
        None => crate::messages::print(&line),
    };
    let update = |p: &Progress, findings: u64| {
        let (files, bytes) = counts.get();
        p.update(files, bytes, findings);
    };
    loop {
        // With a progress line, wake up now and then to show the inputs
        // counted by the workers even when no message comes.
        let msg = match &progress {
            None => match rx.recv() {
                Ok(msg) => msg,
                Err(_) => break,
            },
            Some(p) => match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(msg) => msg,
                Err(RecvTimeoutError::Timeout) => {
                    update(p, report.findings);
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            },
        };
        match msg {
            Msg::Warning {
                path,
                reason,
                is_error,
            } => {
                if is_error {
                    report.errors += 1;
                }
                let path = (!path.as_os_str().is_empty()).then_some(path.as_path());
                report.warn(path, &reason, is_error);
                // One that makes the exit status 2 says why, whatever the level.
                if is_error || messages::warnings_shown() {
                    say(&progress, messages::warning_line(path, &reason));
                }
            }
            Msg::NotScanned { path, reason } => {
                if messages::suppressed_shown() {
                    say(
                        &progress,
                        messages::not_scanned_line(&path, None, reason.label()),
                    );
                }
            }
            Msg::Archive(stats) => {
                // Content left unread makes the run incomplete, as an
                // unreadable file does: exit 2, and said whatever the level.
                report.errors += stats.incomplete;
                for skipped in stats.skipped.iter() {
                    let path = skipped.path.as_path();
                    let reason = skipped.reason.to_string();
                    let error = skipped.reason.incomplete();
                    report.warn(Some(path), &reason, error);
                    if error || messages::warnings_shown() {
                        say(&progress, messages::warning_line(Some(path), &reason));
                    }
                }
                report.archives.merge(stats);
            }
            Msg::Input {
                provenance,
                outcome,
                suppressed,
            } => {
                engine_suppressed.merge(&suppressed);
                let mut findings = match outcome {
                    Outcome::Skipped(reason) => {
                        report.skips.add(reason, 1);
                        if reason.listed() && messages::suppressed_shown() {
                            let commit = provenance.commit.as_ref().map(|c| c.id.as_str());
                            let line = messages::not_scanned_line(
                                &provenance.path,
                                commit,
                                reason.label(),
                            );
                            say(&progress, line);
                        }
                        Vec::new()
                    }
                    Outcome::Failed { reason, findings } => {
                        report.skips.add(Skip::Unreadable, 1);
                        report.errors += 1;
                        let reason = match &provenance.commit {
                            Some(commit) => format!("at commit {}: {reason}", commit.id),
                            None => reason,
                        };
                        report.warn(Some(&provenance.path), &reason, true);
                        say(
                            &progress,
                            messages::warning_line(Some(&provenance.path), &reason),
                        );
                        findings
                    }
                    // Counted by the worker (see `Counts`).
                    Outcome::Scanned { findings, .. } => findings,
                };
                findings.sort_by_key(|f| (f.offset, f.end_offset));
                let mut kept = Vec::with_capacity(findings.len());
                for finding in findings {
                    let pf = PathFinding {
                        path: provenance.path.clone(),
                        commit: provenance.commit.clone(),
                        finding,
                        lead: provenance.lead,
                    };
                    let suppressed = match pf.finding.allowed {
                        Some(reason) => Some(reason),
                        None => filters.iter_mut().find_map(|f| f.check(&pf)),
                    };
                    let Some(reason) = suppressed else {
                        kept.push(pf);
                        continue;
                    };
                    *report.suppressed.entry(reason).or_default() += 1;
                    if list_suppressed {
                        let f = &pf.finding;
                        let line = messages::suppressed_line(
                            &pf.path,
                            pf.commit.as_ref().map(|c| c.id.as_str()),
                            f.line,
                            f.column,
                            &f.rule_id,
                            reason,
                        );
                        say(&progress, line);
                    }
                }
                report.findings += kept.len() as u64;
                if write_error.is_none() && !kept.is_empty() {
                    // The report may share the terminal with the progress
                    // line: clear it around the write.
                    let written = match &progress {
                        Some(p) => p.suspend(|| sink.write_file_findings(kept)),
                        None => sink.write_file_findings(kept),
                    };
                    if let Err(e) = written {
                        // Stop the sources and workers: nobody is listening,
                        // or the disk is full.
                        stop.stop();
                        write_error = Some(e);
                    }
                }
                if let Some(p) = &progress {
                    update(p, report.findings);
                }
            }
        }
    }
    if let Some(p) = &progress {
        p.finish();
    }
    for (label, n) in engine_suppressed.by_reason() {
        if n > 0 {
            *report.suppressed.entry(label).or_default() += n;
        }
    }
    for f in &mut filters {
        report.notes.extend(f.finish());
    }
    if let Some(e) = write_error {
        if is_broken_pipe(&e) {
            report.broken_pipe = true;
        } else {
            return Err(anyhow::Error::new(e).context("writing the report"));
        }
    }
    Ok((sink, report))
}
