//! `scanner validate REPORT`: re-checks the findings of an earlier `json` or
//! `jsonl` report without scanning again.
//!
//! Each finding's secret comes from the report when it holds it whole
//! (`--show-secrets`), else from the file at the recorded path and offset
//! (`offset..end_offset`, read from the directory the scan ran in). Either
//! way it is used only when `fingerprint(rule_id, bytes)` is the finding's
//! fingerprint; otherwise the finding is `unknown` with the reason (the file
//! changed or moved, the secret was found in decoded text or in git history,
//! an archive member). A finding whose rule the rule set lacks is
//! `not_checked`, with a warning: its answer in the report is an old one.
//! The report is written again with each finding's new `validation`,
//! secrets as the input report had them: a redacted report stays redacted.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use scanner_engine::{fingerprint, Validation, ValidationStatus, Vars};

use crate::args::ValidateArgs;
use crate::messages::escape_path;
use crate::output::{redact, PathFinding, Sink, SinkOptions};
use crate::validate::{without_validator, Checker};

/// The longest secret read back from a file.
const MAX_SECRET: u64 = 1 << 20;

pub fn run(a: ValidateArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&a.report)
        .with_context(|| format!("cannot read report {}", escape_path(&a.report)))?;
    let mut findings = crate::merge::parse_report(&a.report, &text)?;
    let engine = Arc::new(crate::scan::build_engine(
        a.rule_set.rules.as_deref(),
        &a.rule_set.extra_rules,
        None,
        None,
    )?);
    let mut checker = Checker::new(&a.validation.options())?;
    // The recovered secrets (with their captures), beside the findings: never
    // stored in them.
    let mut checks: Vec<Option<Vars>> = vec![None; findings.len()];
    // Rules of the report the rule set lacks, with their findings.
    let mut missing: BTreeMap<Arc<str>, usize> = BTreeMap::new();
    for (pf, kept) in findings.iter_mut().zip(&mut checks) {
        let f = &pf.finding;
        let Some(rule) = engine.rules().iter().find(|r| r.id == f.rule_id) else {
            // Its answer in the report is an old one: not written again as if checked now.
            *missing.entry(f.rule_id.clone()).or_default() += 1;
            pf.finding.validation = Validation::new(
                ValidationStatus::NotChecked,
                "the rule is not in the rule set (--rules, --extra-rules)",
            );
            continue;
        };
        let Some(validator) = rule.validator.clone() else {
            pf.finding.validation = without_validator(&f.validation);
            continue;
        };
        match recover(pf) {
            Ok(secret) => {
                let whole_match = if f.r#match.contains(secret.as_str()) {
                    f.r#match.clone()
                } else {
                    f.r#match.replace(&redact(&secret), &secret)
                };
                let vars = Vars {
                    captures: engine.named_captures(&f.rule_id, &whole_match),
                    secret,
                };
                *kept = Some(vars.clone());
                checker.submit(&f.rule_id, &validator, vars, f.validation.status);
            }
            Err(reason) => {
                pf.finding.validation = Validation::new(ValidationStatus::Unknown, reason);
            }
        }
    }
    for (rule, n) in &missing {
        crate::messages::warn(
            Some(&a.report),
            &format!(
                "rule {rule} is not in the rule set: its {n} {} not checked (pass the \
                 scan's rules with --rules or --extra-rules)",
                crate::progress::plural(*n as u64, "finding", "findings")
            ),
        );
    }
    let answers = checker.finish();
    for (pf, vars) in findings.iter_mut().zip(checks) {
        if let Some(vars) = vars {
            if let Some(v) = answers.get(&(pf.finding.rule_id.clone(), vars)) {
                pf.finding.validation = v.clone();
            }
        }
    }
    let total = findings.len();
    let mut sink = Sink::new(
        SinkOptions {
            format: a.format,
            // The secrets as the input report had them: redacted stays redacted.
            show_secrets: true,
            color: false,
        },
        Box::new(std::io::stdout()),
    );
    sink.set_min_validity(a.validation.min_validity());
    sink.write_file_findings(findings)?;
    match sink.finish(engine.rules()) {
        Err(e) if crate::output::is_broken_pipe(&e) => {}
        r => r.context("writing the report")?,
    }
    Ok(if total > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The finding's secret, proven by its fingerprint; else why not.
fn recover(pf: &PathFinding) -> Result<String, String> {
    let f = &pf.finding;
    if fingerprint(&f.rule_id, f.secret.as_bytes()) == f.fingerprint {
        return Ok(f.secret.clone());
    }
    if !f.decoded.is_empty() {
        return Err("found in decoded text: the secret cannot be read back from the file".into());
    }
    if pf.commit.is_some() {
        return Err("found in git history: the secret is not read back from the work tree".into());
    }
    let len = f.end_offset.saturating_sub(f.offset);
    if len == 0 || len > MAX_SECRET {
        return Err("no secret to read back".into());
    }
    let path = escape_path(&pf.path);
    let mut file =
        std::fs::File::open(&pf.path).map_err(|e| match crate::paths::archive_of(&pf.path) {
            Some(archive) => format!(
                "{path} is a member of the archive {}: the secret is not read back from an archive",
                escape_path(archive)
            ),
            None => format!("cannot read {path} back: {}", e.kind()),
        })?;
    let mut buf = vec![0; len as usize];
    file.seek(SeekFrom::Start(f.offset))
        .and_then(|_| file.read_exact(&mut buf))
        .map_err(|_| format!("{path} is shorter than the recorded offset: it changed"))?;
    if fingerprint(&f.rule_id, &buf) != f.fingerprint {
        return Err(format!(
            "{path} no longer holds the secret at offset {}: the fingerprint differs",
            f.offset
        ));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
