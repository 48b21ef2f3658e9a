//! `scanner merge FILE...`: one report from the reports of N shards.
//!
//! The inputs are every shard's report (`--format json` or `jsonl`) and
//! every shard's `--stats-json` file, in any order (`scanner merge -o
//! all.json out/*`): a file is a stats file when it is a JSON object with a
//! `shard` key, else a report. Each stats file records its shard, the
//! rule-set and options digests, and the size and FNV-1a digest of the
//! report its run wrote ([`crate::shard::stats_extra`]); that digest pairs
//! reports with stats files whatever their names.
//!
//! Refused, with the shard or file named: a stats file of an unsharded run,
//! shards of different counts, a shard missing or given twice, shards run
//! with another rule set, other options or another scanner version, a
//! report no stats file describes, a shard whose report is not among the
//! inputs, a report that is not json or jsonl.
//!
//! The findings are read back into [`PathFinding`]s and written by the
//! scan's own [`Sink`], so `--format json` is byte for byte what one
//! unsharded run writes, and `sarif`, `jsonl` and `text` are what it would
//! write (text and jsonl in report order rather than completion order).
//! Secrets are written as the shards wrote them: redacted unless the shards
//! ran with `--show-secrets`.
//!
//! Exit status as for a scan: 0 no finding, 1 findings (`--exit-code`), 2
//! an error, or a shard that could not read some input (unless
//! `--ignore-errors`).

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use scanner_engine::{Confidence, Encoding, Finding, RuleInfo, Validation};

use crate::args::{ColorChoice, MergeArgs};
use crate::input::{CommitInfo, VersionControl};
use crate::messages::{self, escape_path};
use crate::outfile::OutputFile;
use crate::output::{PathFinding, Sink, SinkOptions};
use crate::progress::{megabytes, plural, thousands};
use crate::shard::fnv1a64;

/// One shard's `--stats-json`, the parts merge uses.
struct Stats {
    file: PathBuf,
    index: u64,
    count: u64,
    version: String,
    rules_digest: String,
    options_digest: String,
    format: String,
    report_bytes: u64,
    report_digest: String,
    files: u64,
    bytes: u64,
    errors: u64,
    rules: BTreeMap<String, (String, String)>,
    /// The repositories a `--history` shard read, for SARIF.
    version_control: Vec<VersionControl>,
}

impl Stats {
    fn parse(file: &Path, v: &Value) -> anyhow::Result<Stats> {
        let name = escape_path(file);
        let shard = &v["shard"];
        if shard.is_null() {
            bail!("{name}: the stats of a scan run without --shard (nothing to merge it with)");
        }
        let s = |v: &Value| v.as_str().map(str::to_owned);
        let n = |v: &Value| v.as_u64();
        let run = &v["run"];
        let missing = || anyhow::anyhow!("{name}: not a shard's --stats-json (keys missing)");
        let mut rules = BTreeMap::new();
        if let Some(map) = v["rules"].as_object() {
            for (id, pair) in map {
                let name = s(&pair[0]).unwrap_or_else(|| id.clone());
                let desc = s(&pair[1]).unwrap_or_default();
                rules.insert(id.clone(), (name, desc));
            }
        }
        let index = n(&shard["index"]).ok_or_else(missing)?;
        let count = n(&shard["count"]).ok_or_else(missing)?;
        if crate::shard::Shard::new(index, count).is_none() {
            bail!(
                "{name}: shard {index}/{count} is no shard of a scan (1 <= K <= N <= {}): \
                 not a stats file scanner wrote",
                crate::shard::BUCKETS
            );
        }
        Ok(Stats {
            file: file.to_path_buf(),
            index,
            count,
            version: s(&run["version"]).ok_or_else(missing)?,
            rules_digest: s(&run["rules_digest"]).ok_or_else(missing)?,
            options_digest: s(&run["options_digest"]).ok_or_else(missing)?,
            format: s(&run["report"]["format"]).ok_or_else(missing)?,
            report_bytes: n(&run["report"]["bytes"]).ok_or_else(missing)?,
            report_digest: s(&run["report"]["fnv1a64"]).ok_or_else(missing)?,
            files: n(&v["files"]).unwrap_or(0),
            bytes: n(&v["bytes"]).unwrap_or(0),
            errors: n(&v["errors"]).unwrap_or(0),
            rules,
            version_control: serde_json::from_value(v["version_control"].clone())
                .unwrap_or_default(),
        })
    }

    fn label(&self) -> String {
        format!(
            "shard {}/{} ({})",
            self.index,
            self.count,
            escape_path(&self.file)
        )
    }
}

/// A finding as the json and jsonl reports write it.
#[derive(Deserialize)]
struct Wire {
    rule_id: String,
    rule_name: String,
    path: String,
    path_bytes: Option<String>,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    offset: u64,
    end_offset: u64,
    #[serde(rename = "match")]
    matched: String,
    secret: String,
    entropy: f32,
    fingerprint: String,
    confidence: Confidence,
    tags: Vec<String>,
    decoded: Vec<String>,
    commit: Option<WireCommit>,
    /// Absent in reports of scanners before validation: `not_checked`.
    #[serde(default)]
    validation: Validation,
}

#[derive(Deserialize)]
struct WireCommit {
    id: String,
    author_name: String,
    author_email: String,
    author_date: String,
    summary: String,
}

/// The engine's tags are `&'static str`; the known ones are reused, an
/// unknown one (a newer scanner's) is kept as it came.
fn static_tag(tag: String) -> &'static str {
    const KNOWN: [&str; 8] = [
        "prefix",
        "generic",
        "checksum-valid",
        "checksum-invalid",
        "test-path",
        "doc-path",
        "test-code",
        "published-example",
    ];
    match KNOWN.iter().find(|k| **k == tag) {
        Some(k) => k,
        None => Box::leak(tag.into_boxed_str()),
    }
}

fn encoding(name: &str) -> Option<Encoding> {
    [
        Encoding::Base64,
        Encoding::Base64Url,
        Encoding::Hex,
        Encoding::Percent,
        Encoding::StringLiterals,
    ]
    .into_iter()
    .find(|e| e.as_str() == name)
}

impl Wire {
    fn into_path_finding(self, file: &Path) -> anyhow::Result<PathFinding> {
        let path = match &self.path_bytes {
            None => PathBuf::from(&self.path),
            Some(b64) => {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .with_context(|| format!("{}: bad path_bytes", escape_path(file)))?;
                raw_path(raw)
            }
        };
        let decoded = self
            .decoded
            .iter()
            .map(|d| {
                encoding(d)
                    .ok_or_else(|| anyhow::anyhow!("{}: unknown decoding `{d}`", escape_path(file)))
            })
            .collect::<anyhow::Result<_>>()?;
        // The text report prints its first 12 digits: a hex id, as every report writes it.
        if let Some(c) = &self.commit {
            if c.id.len() < 12 || !c.id.bytes().all(|b| b.is_ascii_hexdigit()) {
                anyhow::bail!(
                    "{}: commit `{}` is not a git object id (hex digits)",
                    escape_path(file),
                    messages::escape(&c.id)
                );
            }
        }
        Ok(PathFinding {
            path,
            // Not filtered again: as the shard reported it.
            lead: 0,
            commit: self.commit.map(|c| {
                Arc::new(CommitInfo {
                    id: c.id,
                    author_name: c.author_name,
                    author_email: c.author_email,
                    author_date: c.author_date,
                    summary: c.summary,
                })
            }),
            finding: Finding {
                rule_id: self.rule_id.into(),
                rule_name: self.rule_name.into(),
                line: self.line,
                column: self.column,
                end_line: self.end_line,
                end_column: self.end_column,
                offset: self.offset,
                end_offset: self.end_offset,
                r#match: self.matched,
                secret: self.secret,
                entropy: self.entropy,
                confidence: self.confidence,
                tags: self.tags.into_iter().map(static_tag).collect(),
                fingerprint: self.fingerprint,
                decoded,
                allowed: None,
                validation: self.validation,
                captures: Vec::new(),
            },
        })
    }
}

#[cfg(unix)]
fn raw_path(raw: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(raw))
}

#[cfg(not(unix))]
fn raw_path(raw: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&raw).into_owned())
}

/// The findings of a json or jsonl report.
pub(crate) fn parse_report(file: &Path, text: &str) -> anyhow::Result<Vec<PathFinding>> {
    let name = escape_path(file);
    let head = text.trim_start();
    // A report of another format: say which, not the JSON parser's first complaint.
    let other = if head.starts_with('<') {
        Some("an HTML report")
    } else if head.starts_with('{')
        && serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.get("runs").is_some())
    {
        Some("a SARIF report")
    } else if !head.is_empty() && !head.starts_with(['[', '{']) {
        Some("not JSON (a text report?)")
    } else {
        None
    };
    if let Some(what) = other {
        bail!(
            "{name} is {what}: only a json or jsonl report of scanner (`--format json` or \
             `jsonl`) can be read back"
        );
    }
    let wires: Vec<Wire> = if head.starts_with('[') {
        serde_json::from_str(text)
            .with_context(|| format!("{name}: not a json report of scanner"))?
    } else {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .with_context(|| format!("{name}:{}: not a jsonl finding of scanner", i + 1))
            })
            .collect::<anyhow::Result<_>>()?
    };
    wires
        .into_iter()
        .map(|w| w.into_path_finding(file))
        .collect()
}

/// Checks that the stats files are the N shards of one run, each once.
fn check_shards(stats: &mut [Stats]) -> anyhow::Result<()> {
    if stats.is_empty() {
        bail!("no --stats-json file among the inputs: merge needs every shard's stats and report");
    }
    stats.sort_by_key(|s| s.index);
    let first = &stats[0];
    for s in stats.iter() {
        if s.count != first.count {
            bail!(
                "{} and {} come from scans with different shard counts",
                s.label(),
                first.label()
            );
        }
        if s.version != first.version {
            bail!(
                "{} was run by scanner {}, {} by {}",
                s.label(),
                s.version,
                first.label(),
                first.version
            );
        }
        if s.rules_digest != first.rules_digest {
            bail!(
                "{} was run with a different rule set than {} (rule-set digest {} vs {})",
                s.label(),
                first.label(),
                s.rules_digest,
                first.rules_digest
            );
        }
        if s.options_digest != first.options_digest {
            bail!(
                "{} was run with different options than {} (compare `run.options` in their stats)",
                s.label(),
                first.label()
            );
        }
        if s.format != "json" && s.format != "jsonl" {
            bail!(
                "{}: its report is {}; merge reads shards' json or jsonl reports",
                s.label(),
                s.format
            );
        }
    }
    for pair in stats.windows(2) {
        if pair[0].index == pair[1].index {
            bail!(
                "shard {}/{} given twice: {} and {}",
                pair[0].index,
                pair[0].count,
                escape_path(&pair[0].file),
                escape_path(&pair[1].file)
            );
        }
    }
    // Each index once, each in 1..=count (sorted): the rest are missing.
    // The first few are named.
    let have: Vec<u64> = stats.iter().map(|s| s.index).collect();
    let absent = first.count - have.len() as u64;
    let named: Vec<String> = (1..=first.count)
        .filter(|k| absent > 0 && have.binary_search(k).is_err())
        .take(10)
        .map(|k| format!("{k}/{}", first.count))
        .collect();
    if absent > 0 {
        let more = absent - named.len() as u64;
        bail!(
            "shard{} {}{} missing (no stats file for {})",
            if absent == 1 { "" } else { "s" },
            named.join(", "),
            if more > 0 {
                format!(" and {} more", thousands(more))
            } else {
                String::new()
            },
            if absent == 1 { "it" } else { "them" }
        );
    }
    Ok(())
}

pub fn run(a: MergeArgs) -> anyhow::Result<ExitCode> {
    let mut stats = Vec::new();
    let mut reports: Vec<(PathBuf, String)> = Vec::new();
    for file in &a.files {
        let name = escape_path(file);
        if file.is_dir() {
            bail!("{name}: is a directory: name the shards' files in it (`{name}/*`)");
        }
        let text = match std::fs::read_to_string(file) {
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => bail!(
                "{name}: not UTF-8 text, so neither a shard's json or jsonl report nor its \
                 --stats-json"
            ),
            r => r.with_context(|| name.clone())?,
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.get("shard").is_some() => stats.push(Stats::parse(file, &v)?),
            _ => reports.push((file.clone(), text)),
        }
    }
    check_shards(&mut stats)?;

    // Pair each shard with its report by size and digest; shards with the
    // same report (`[]` twice) take any copy, as long as the counts agree.
    let key = |bytes: u64, digest: String| (bytes, digest);
    let mut by_digest: HashMap<(u64, String), Vec<usize>> = HashMap::new();
    for (i, (_, text)) in reports.iter().enumerate() {
        let k = key(
            text.len() as u64,
            format!("{:016x}", fnv1a64(text.as_bytes())),
        );
        by_digest.entry(k).or_default().push(i);
    }
    let mut used = vec![false; reports.len()];
    for s in &stats {
        let k = key(s.report_bytes, s.report_digest.clone());
        let slot = by_digest.get_mut(&k).and_then(|v| v.pop());
        match slot {
            Some(i) => used[i] = true,
            None => bail!(
                "{}: its report ({}, {} bytes) is not among the inputs",
                s.label(),
                s.format,
                s.report_bytes
            ),
        }
    }
    if let Some(i) = used.iter().position(|u| !u) {
        bail!(
            "{}: no shard's stats describe this report (a report of another run, a copy, or changed since)",
            escape_path(&reports[i].0)
        );
    }

    let mut findings = Vec::new();
    for (file, text) in &reports {
        findings.extend(parse_report(file, text)?);
    }
    let total = findings.len() as u64;

    let color = match a.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            a.output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let atomic = match &a.output {
        Some(path) => {
            Some(OutputFile::create(path).with_context(|| format!("-o {}", escape_path(path)))?)
        }
        None => None,
    };
    let out: Box<dyn std::io::Write + Send> = match &atomic {
        Some(f) => Box::new(f.file()?),
        None => Box::new(std::io::stdout()),
    };
    // The findings hold the secrets as the shards wrote them (redacted or
    // not): written as they are, never redacted twice.
    let mut sink = Sink::new(
        SinkOptions {
            format: a.format,
            show_secrets: true,
            color,
        },
        out,
    );
    // One batch per path, in path order: the streaming formats then come
    // out in report order too.
    let mut by_path: BTreeMap<Vec<u8>, Vec<PathFinding>> = BTreeMap::new();
    for f in findings {
        by_path.entry(f.path_bytes().to_vec()).or_default().push(f);
    }
    let rules: BTreeMap<&str, &(String, String)> = stats
        .iter()
        .flat_map(|s| s.rules.iter().map(|(id, r)| (id.as_str(), r)))
        .collect();
    let infos: Vec<RuleInfo> = rules
        .iter()
        .map(|(id, (name, description))| RuleInfo {
            id: Arc::from(*id),
            aliases: Vec::new(),
            name: Arc::from(name.as_str()),
            description: description.clone(),
            keywords: Vec::new(),
            origin: String::new(),
            validator: None,
            provider: None,
        })
        .collect();
    // The first shard's: the shards read the same repositories, at one commit.
    sink.set_version_control(stats[0].version_control.clone());
    let errors: u64 = stats.iter().map(|s| s.errors).sum();
    let status = if errors > 0 && !a.ignore_errors {
        crate::EXIT_ERROR
    } else if total > 0 {
        a.exit_code
    } else {
        0
    };
    // Each shard's unreadable paths are in that shard's log: the merged run says how many.
    let unread: Vec<String> = stats
        .iter()
        .filter(|s| s.errors > 0)
        .map(|s| {
            format!(
                "{}: {} {} could not be read (see that shard's log)",
                s.label(),
                thousands(s.errors),
                plural(s.errors, "path", "paths")
            )
        })
        .collect();
    sink.set_invocation(crate::output::sarif::Invocation {
        exit_code: status,
        notifications: unread
            .iter()
            .map(|reason| crate::report::Warning {
                text: messages::warning_text(None, reason),
                error: true,
            })
            .collect(),
    });
    let written = (|| {
        for batch in by_path.into_values() {
            sink.write_file_findings(batch)?;
        }
        sink.finish(&infos)
    })();
    match written {
        Err(e) if crate::output::is_broken_pipe(&e) => {}
        r => r.context("writing the report")?,
    }
    if let (Some(f), Some(path)) = (atomic, &a.output) {
        f.commit()
            .with_context(|| format!("-o {}", escape_path(path)))?;
    }

    for reason in &unread {
        crate::messages::warn(None, reason);
    }
    if !a.quiet {
        let files: u64 = stats.iter().map(|s| s.files).sum();
        let bytes: u64 = stats.iter().map(|s| s.bytes).sum();
        let shards = stats.len() as u64;
        messages::print(&format!(
            "merged {shards} {}: {} {} ({}) scanned, {} {}",
            plural(shards, "shard", "shards"),
            thousands(files),
            plural(files, "file", "files"),
            megabytes(bytes),
            thousands(total),
            plural(total, "finding", "findings")
        ));
    }
    Ok(ExitCode::from(status))
}
