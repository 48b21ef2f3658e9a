//! Report writers: how findings leave the process.
//!
//! Start with [`Sink`]: the pipeline creates one with [`SinkOptions`] and an output stream
//! (stdout, or an [`OutputFile`](crate::outfile::OutputFile) for `-o FILE`), hands it every file's
//! findings with [`Sink::write_file_findings`], and calls [`Sink::finish`] at the end.
//!
//! | `--format` | written by | when bytes reach the output |
//! | --- | --- | --- |
//! | `text` | [`text`] | all at once in [`Sink::finish`], sorted |
//! | `json` | [`json`] | all at once in [`Sink::finish`], sorted |
//! | `jsonl` | [`json`] | per file, as files complete |
//! | `sarif` | [`sarif`] | all at once in [`Sink::finish`], sorted |
//! | `html` | [`html`] | all at once in [`Sink::finish`], sorted; the lines of context are read per file as files complete |
//!
//! Each module documents its format field by field with a worked example; `docs/output.md`
//! is the user-facing version.
//!
//! # Ordering
//!
//! `text`, `json`, `sarif` and `html` sort every finding by path (raw bytes), line, column,
//! rule id, then end offset and fingerprint as tie-breakers, so the report is byte-for-byte
//! identical whatever the thread count or the order files complete in. `jsonl` streams: files
//! appear in completion order, each file's findings together (a batch is written whole, never
//! interleaved with another file's) and sorted by position within the file.
//!
//! # Redaction
//!
//! Unless `show_secrets` is set, every format redacts the secret: its first few characters
//! (at most 4, at most a third of it) followed by `…` ([`redact`]). The same applies to the
//! copy of the secret inside `match`, and to any other secret of the same file found there.
//! The fingerprint is always present, so findings can be tracked and deduplicated without
//! ever writing the secret down. Reports are often uploaded as CI artifacts or to code
//! scanning: a plain `scanner scan --format json > report.json` must not turn the report into
//! a second leak.
//!
//! # Errors
//!
//! Every write error is returned as is. A closed pipe (`scanner scan | head`) shows up as an
//! [`io::ErrorKind::BrokenPipe`] error: the caller checks [`is_broken_pipe`] and ends quietly.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use aho_corasick::{AhoCorasick, MatchKind};
use scanner_engine::{Finding, RuleInfo};

use crate::input::CommitInfo;

pub mod html;
pub mod json;
pub mod sarif;
pub mod text;

/// A finding with the path it was found in.
#[derive(Clone, Debug, PartialEq)]
pub struct PathFinding {
    /// The path as reached from the PATH argument (or repo-relative for `--staged`), raw bytes
    /// on Unix (OsStr bytes) so non-UTF-8 names survive; `display()` gives the lossy UTF-8 form.
    pub path: PathBuf,
    /// The commit that introduced the content (history scans), else `None`.
    pub commit: Option<std::sync::Arc<crate::input::CommitInfo>>,
    pub finding: Finding,
    /// Bytes of `path` that name its repository ([`crate::input::Provenance::lead`]).
    pub lead: usize,
}

impl PathFinding {
    /// The path as `.gitleaksignore` and a rule's `allow_paths` see it: from the repository's
    /// root ([`crate::input::Provenance::scope_path`]).
    pub fn scope_path(&self) -> std::borrow::Cow<'_, Path> {
        crate::input::scope_path(&self.path, self.lead)
    }

    /// The raw bytes of the path: the OS bytes on Unix, WTF-8 on Windows.
    pub fn path_bytes(&self) -> &[u8] {
        self.path.as_os_str().as_encoded_bytes()
    }
}

/// The report format (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `path:line:col  rule  snippet`, one finding per line, for people.
    Text,
    /// One JSON array of all findings, sorted: for tools.
    Json,
    /// JSON Lines: one finding object per line, streamed as files complete.
    Jsonl,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF consumers.
    Sarif,
    /// One self-contained HTML page to triage findings in a browser: summary, a sortable and
    /// filterable table, lines of context.
    Html,
}

/// How the [`Sink`] writes.
#[derive(Clone, Copy, Debug)]
pub struct SinkOptions {
    pub format: Format,
    /// Print secrets whole instead of redacted. Default false.
    pub show_secrets: bool,
    /// ANSI colors in `text` (ignored by the other formats). The caller decides (terminal,
    /// `NO_COLOR`).
    pub color: bool,
}

/// The one writer of the report: every finding goes through it, in one thread.
pub struct Sink {
    opts: SinkOptions,
    out: BufWriter<Box<dyn Write + Send>>,
    /// `text`, `json`, `sarif` and `html` hold every finding until [`Sink::finish`] sorts them.
    held: Vec<PathFinding>,
    /// Reused per batch so a batch reaches the output in one write.
    buf: Vec<u8>,
    /// The repositories a history scan read, for SARIF's `versionControlProvenance`.
    version_control: Vec<crate::input::VersionControl>,
    /// How the run ends, for SARIF's `invocations` ([`Sink::set_invocation`]).
    invocation: Option<sarif::Invocation>,
    /// Where `html` reads each finding's lines back from, and keeps them
    /// ([`Sink::read_context`]).
    context: Option<html::ContextSource>,
    /// `--validate`: the checks run beside the scan; every format holds its findings until
    /// [`Sink::finish`] has the answers.
    validation: Option<Validating>,
    /// `--min-validity`: findings below are not written.
    min_validity: Option<scanner_engine::ValidationStatus>,
    /// `--history`: the secrets found so far that a commit's author or subject holds, by
    /// commit id, and the commit as the report shows it ([`Sink::redact_commits`]).
    commit_secrets: HashMap<String, Vec<String>>,
    shown_commits: HashMap<String, std::sync::Arc<CommitInfo>>,
}

/// What `--validate` needs in the sink.
pub struct Validating {
    pub checker: crate::validate::Checker,
    /// For the rules' validators and named captures.
    pub engine: std::sync::Arc<scanner_engine::Engine>,
}

impl Sink {
    /// `out` is stdout or the `-o` temp file. The sink buffers; it flushes after each batch in
    /// the streaming formats and in [`Sink::finish`].
    pub fn new(opts: SinkOptions, out: Box<dyn Write + Send>) -> Sink {
        Sink {
            opts,
            out: BufWriter::with_capacity(64 * 1024, out),
            held: Vec::new(),
            buf: Vec::new(),
            version_control: Vec::new(),
            invocation: None,
            context: None,
            validation: None,
            min_validity: None,
            commit_secrets: HashMap::new(),
            shown_commits: HashMap::new(),
        }
    }

    /// `html` reads each finding's lines of context back from its file, or its blob in one of
    /// `repos` (`--history`), as the file's findings arrive: a scan, where the paths are those
    /// just read, except standard input's (`stdin`: the path it is reported as, a file of
    /// that name is not what was read). Off by default: `merge` writes findings whose files
    /// may be elsewhere, and whose secrets are already as shown.
    pub fn read_context(&mut self, repos: Vec<html::ContextRepo>, stdin: Option<PathBuf>) {
        self.context = Some(html::ContextSource::new(repos, stdin));
    }

    /// `--min-validity` (`--only-valid` is `valid`); `None` writes every finding.
    pub fn set_min_validity(&mut self, min: Option<scanner_engine::ValidationStatus>) {
        self.min_validity = min;
    }

    fn below_min(&self, f: &PathFinding) -> bool {
        self.min_validity
            .is_some_and(|m| f.finding.validation.status < m)
    }

    /// Turns on `--validate`: each finding with a validator is queued as it arrives.
    pub fn set_validation(&mut self, v: Validating) {
        self.validation = Some(v);
    }

    /// The repositories the run read (`--history`): SARIF names them in the run's
    /// `versionControlProvenance`; the other formats carry the commit on each finding.
    pub fn set_version_control(&mut self, repositories: Vec<crate::input::VersionControl>) {
        self.version_control = repositories;
    }

    /// How the run ends (its exit status, its warnings about the inputs): SARIF writes it as
    /// the run's `invocations`; the other formats leave it to stderr and the exit status.
    pub fn set_invocation(&mut self, invocation: sarif::Invocation) {
        self.invocation = Some(invocation);
    }

    /// All findings of one file (or one resolved piece), written whole so lines never
    /// interleave. In `jsonl` the batch is written and flushed at once (a consumer sees each
    /// file as soon as it is done); `text`, `json`, `sarif` and `html` keep it for
    /// [`Sink::finish`] (`html` reads its lines of context now).
    pub fn write_file_findings(&mut self, mut batch: Vec<PathFinding>) -> io::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        if !self.opts.show_secrets {
            for pf in &batch {
                let (Some(c), secret) = (&pf.commit, pf.finding.secret.as_str()) else {
                    continue;
                };
                let fields = [&c.author_name, &c.author_email, &c.summary];
                if secret.is_empty() || !fields.iter().any(|t| t.contains(secret)) {
                    continue;
                }
                let named = self.commit_secrets.entry(c.id.clone()).or_default();
                if !named.iter().any(|s| s == secret) {
                    named.push(secret.to_string());
                    self.shown_commits.remove(&c.id);
                }
            }
        }
        // While the file is fresh in the cache, and before anything may drop a finding.
        if let (Format::Html, Some(source)) = (self.opts.format, &mut self.context) {
            source.read(&batch, self.opts.show_secrets);
        }
        if let Some(v) = &mut self.validation {
            for pf in &batch {
                let f = &pf.finding;
                let Some(rule) = v.engine.rules().iter().find(|r| r.id == f.rule_id) else {
                    continue;
                };
                if let Some(validator) = &rule.validator {
                    v.checker.submit(
                        &f.rule_id,
                        validator,
                        vars(&v.engine, f),
                        f.validation.status,
                    );
                }
            }
            self.held.append(&mut batch);
            return Ok(());
        }
        batch.retain(|f| !self.below_min(f));
        match self.opts.format {
            Format::Text | Format::Json | Format::Sarif | Format::Html => {
                self.held.append(&mut batch);
                Ok(())
            }
            Format::Jsonl => self.write_streaming(batch),
        }
    }

    /// Unless `show_secrets`, the commit of each finding as the report shows it: every copy,
    /// in its author or subject (`git commit -m "add ghp_..."`), of a secret found in that
    /// commit redacted, as in `match`. The held formats know every finding's secret by then;
    /// `jsonl` those of the files written so far.
    fn redact_commits(&mut self, findings: &mut [PathFinding]) {
        for pf in findings {
            let Some(c) = pf.commit.as_ref() else {
                continue;
            };
            let Some(secrets) = self.commit_secrets.get_mut(&c.id) else {
                continue;
            };
            let shown = self.shown_commits.entry(c.id.clone()).or_insert_with(|| {
                // The longest first: a secret inside another must not cut that one's copy;
                // then by bytes, so that the order findings arrived in changes nothing.
                secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
                let hide = |text: &str| {
                    secrets
                        .iter()
                        .fold(text.to_string(), |t, s| t.replace(s.as_str(), &redact(s)))
                };
                std::sync::Arc::new(CommitInfo {
                    author_name: hide(&c.author_name),
                    author_email: hide(&c.author_email),
                    summary: hide(&c.summary),
                    ..(**c).clone()
                })
            });
            pf.commit = Some(shown.clone());
        }
    }

    /// Unless `show_secrets`, in each finding's `match` every copy of another secret found in
    /// the same file redacted (`postgres://ghp_…:pw@db`: a URL whose user name is a token the
    /// token rule reports on its own), as its own secret is by [`shown_match`]. Just before
    /// writing: a live check reads the match as found.
    fn redact_matches(&self, findings: &mut [PathFinding]) {
        if self.opts.show_secrets {
            return;
        }
        type File = (Vec<u8>, String);
        let file = |pf: &PathFinding| -> File { (pf.path_bytes().to_vec(), commit_id(pf).into()) };
        let mut secrets: HashMap<File, BTreeSet<&str>> = HashMap::new();
        for pf in findings.iter().filter(|pf| !pf.finding.secret.is_empty()) {
            secrets
                .entry(file(pf))
                .or_default()
                .insert(&pf.finding.secret);
        }
        // One automaton per file that has two secrets or more; where copies overlap, the
        // longest wins, so that a secret inside another cannot cut that one's copy.
        let copies: HashMap<File, (AhoCorasick, Vec<String>)> = secrets
            .into_iter()
            .filter(|(_, found)| found.len() > 1)
            .filter_map(|(file, found)| {
                let found: Vec<String> = found.into_iter().map(str::to_owned).collect();
                let ac = AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&found)
                    .ok()?;
                Some((file, (ac, found)))
            })
            .collect();
        for pf in findings {
            let Some((ac, found)) = copies.get(&file(pf)) else {
                continue;
            };
            let f = &mut pf.finding;
            let foreign = |h: &aho_corasick::Match| found[h.pattern()] != f.secret;
            if !ac.find_iter(&f.r#match).any(|h| foreign(&h)) {
                continue;
            }
            let mut shown = String::with_capacity(f.r#match.len());
            let mut at = 0;
            for h in ac.find_iter(&f.r#match) {
                shown.push_str(&f.r#match[at..h.start()]);
                match foreign(&h) {
                    true => shown.push_str(&redact(&found[h.pattern()])),
                    false => shown.push_str(&f.secret),
                }
                at = h.end();
            }
            shown.push_str(&f.r#match[at..]);
            f.r#match = shown;
        }
    }

    /// A batch of `jsonl`, sorted, in one write, flushed.
    fn write_streaming(&mut self, mut batch: Vec<PathFinding>) -> io::Result<()> {
        batch.sort_by(report_order);
        self.redact_commits(&mut batch);
        self.redact_matches(&mut batch);
        self.buf.clear();
        for f in &batch {
            json::write_object(&mut self.buf, f, self.opts.show_secrets)?;
            self.buf.push(b'\n');
        }
        self.out.write_all(&self.buf)?;
        self.out.flush()
    }

    /// Text, JSON, SARIF and HTML write here (sorted by path, line, column); jsonl just
    /// flushes.
    /// `rules` describes the rules for SARIF's `tool.driver.rules`.
    pub fn finish(mut self, rules: &[RuleInfo]) -> io::Result<()> {
        if let Some(v) = self.validation.take() {
            let Validating { checker, engine } = v;
            let answers = checker.finish();
            for pf in &mut self.held {
                let f = &mut pf.finding;
                let has_validator = rules
                    .iter()
                    .any(|r| r.id == f.rule_id && r.validator.is_some());
                f.validation = if has_validator {
                    match answers.get(&(f.rule_id.clone(), vars(&engine, f))) {
                        Some(answer) => answer.clone(),
                        None => f.validation.clone(), // offline_invalid: not sent
                    }
                } else {
                    crate::validate::without_validator(&f.validation)
                };
            }
            let held = std::mem::take(&mut self.held);
            self.held = held.into_iter().filter(|f| !self.below_min(f)).collect();
            if self.opts.format == Format::Jsonl {
                // Held for the answers: written now, in report order.
                let held = std::mem::take(&mut self.held);
                return self.write_streaming(held);
            }
        }
        let mut held = std::mem::take(&mut self.held);
        self.redact_commits(&mut held);
        self.redact_matches(&mut held);
        self.held = held;
        match self.opts.format {
            Format::Jsonl => {}
            Format::Text => {
                self.held.sort_by(report_order);
                for f in &self.held {
                    self.buf.clear();
                    text::write_line(&mut self.buf, f, self.opts.show_secrets, self.opts.color);
                    self.out.write_all(&self.buf)?;
                }
            }
            Format::Json => {
                self.held.sort_by(report_order);
                json::write_array(&mut self.out, &self.held, self.opts.show_secrets)?;
            }
            Format::Sarif => {
                self.held.sort_by(report_order);
                sarif::write_log(
                    &mut self.out,
                    &self.held,
                    rules,
                    &self.version_control,
                    self.invocation.as_ref(),
                    self.opts.show_secrets,
                )?;
            }
            Format::Html => {
                self.held.sort_by(report_order);
                let contexts = self.context.as_ref();
                html::write_page(&mut self.out, &self.held, contexts, self.opts.show_secrets)?;
            }
        }
        self.out.flush()
    }
}

/// The report order: path bytes, line, column, rule id; end offset and fingerprint only break
/// ties so that the order is total and the bytes reproducible.
fn report_order(a: &PathFinding, b: &PathFinding) -> std::cmp::Ordering {
    let (fa, fb) = (&a.finding, &b.finding);
    a.path_bytes()
        .cmp(b.path_bytes())
        .then(fa.line.cmp(&fb.line))
        .then(fa.column.cmp(&fb.column))
        .then(fa.rule_id.cmp(&fb.rule_id))
        .then(fa.end_offset.cmp(&fb.end_offset))
        .then(fa.fingerprint.cmp(&fb.fingerprint))
        .then_with(|| commit_id(a).cmp(commit_id(b)))
}

fn commit_id(f: &PathFinding) -> &str {
    f.commit.as_ref().map_or("", |c| c.id.as_str())
}

/// The redacted form of a secret: its first characters, then `…`.
///
/// At most 4 characters are kept, and at most a third of the secret, so a short password is
/// not mostly revealed. For most provider tokens the 4 characters are the public prefix
/// (`ghp_`, `xoxb`, `AKIA`, `sk-p`) that tells a reader what kind of secret it is.
pub fn redact(secret: &str) -> String {
    if secret.is_empty() {
        return String::new();
    }
    let keep = (secret.chars().count() / 3).min(4);
    let mut out: String = secret.chars().take(keep).collect();
    out.push('…');
    out
}

/// What a finding's check is made of (`--validate`): its secret and its
/// rule's named captures (handed over by the engine when the match was cut
/// short).
fn vars(engine: &scanner_engine::Engine, f: &Finding) -> scanner_engine::Vars {
    scanner_engine::Vars {
        secret: f.secret.clone(),
        captures: if f.captures.is_empty() {
            engine.named_captures(&f.rule_id, &f.r#match)
        } else {
            f.captures.clone()
        },
    }
}

/// The matched text as the report shows it: unchanged with `show_secrets`, otherwise with
/// every occurrence of the secret redacted. When the secret cannot be located in the match
/// (empty secret, or a match cut short by the engine's length bound), the whole match is
/// redacted: it is the only way to be sure no part of the secret is shown.
pub fn shown_match(f: &Finding, show_secrets: bool) -> String {
    if show_secrets {
        return f.r#match.clone();
    }
    if f.secret.is_empty() || !f.r#match.contains(f.secret.as_str()) {
        return redact(&f.r#match);
    }
    f.r#match.replace(f.secret.as_str(), &redact(&f.secret))
}

/// The secret as the report shows it.
pub fn shown_secret(f: &Finding, show_secrets: bool) -> String {
    if show_secrets {
        f.secret.clone()
    } else {
        redact(&f.secret)
    }
}

/// True when the error is a closed pipe (EPIPE): the run then ends quietly.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A token assembled at run time so the repository never holds the literal.
    pub fn token() -> String {
        format!("{}_{}", "ghp", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789")
    }

    pub fn finding(path: &str, line: u32, column: u32) -> PathFinding {
        let secret = token();
        let m = format!("token = \"{secret}\"");
        let offset = u64::from(line) * 100 + u64::from(column) - 1;
        PathFinding {
            commit: None,
            path: PathBuf::from(path),
            lead: 0,
            finding: Finding {
                rule_id: "github-pat".into(),
                rule_name: "GitHub Personal Access Token".into(),
                line,
                column,
                end_line: line,
                end_column: column + m.len() as u32,
                offset,
                end_offset: offset + m.len() as u64,
                r#match: m,
                secret,
                confidence: scanner_engine::Confidence::High,
                tags: vec!["prefix"],
                entropy: 4.75,
                fingerprint: "0123456789abcdef".into(),
                decoded: Vec::new(),
                allowed: None,
                validation: Default::default(),
                captures: Vec::new(),
            },
        }
    }

    /// A `Write` whose bytes the test can read after the sink is gone.
    #[derive(Clone, Default)]
    pub struct Shared(pub Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        pub fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    pub fn run(format: Format, show: bool, batches: Vec<Vec<PathFinding>>) -> String {
        let out = Shared::default();
        let mut sink = Sink::new(
            SinkOptions {
                format,
                show_secrets: show,
                color: false,
            },
            Box::new(out.clone()),
        );
        for b in batches {
            sink.write_file_findings(b).unwrap();
        }
        sink.finish(&[]).unwrap();
        out.text()
    }

    #[test]
    fn redact_keeps_at_most_four_chars_and_a_third() {
        assert_eq!(redact(&token()), "ghp_…");
        assert_eq!(redact("hunter2"), "hu…");
        assert_eq!(redact("ab"), "…");
        assert_eq!(redact(""), "");
        assert_eq!(redact("ééééééééééééé"), "éééé…");
    }

    #[test]
    fn shown_match_redacts_every_copy_or_everything() {
        let mut f = finding("a", 1, 1).finding;
        assert_eq!(shown_match(&f, false), "token = \"ghp_…\"");
        assert_eq!(shown_match(&f, true), f.r#match);
        f.r#match = format!("{0} {0}", f.secret);
        assert_eq!(shown_match(&f, false), "ghp_… ghp_…");
        f.r#match = "token = \"ghp_aBcDeF".into(); // cut short
        assert_eq!(shown_match(&f, false), "toke…");
    }

    #[test]
    fn streaming_formats_flush_each_batch_before_the_next() {
        let out = Shared::default();
        let mut sink = Sink::new(
            SinkOptions {
                format: Format::Jsonl,
                show_secrets: false,
                color: false,
            },
            Box::new(out.clone()),
        );
        sink.write_file_findings(vec![finding("a", 1, 1)]).unwrap();
        assert_eq!(out.text().lines().count(), 1);
        sink.write_file_findings(vec![finding("b", 2, 1), finding("b", 1, 1)])
            .unwrap();
        let text = out.text();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains("\"line\":1"), "{}", lines[1]);
        assert!(lines[2].contains("\"line\":2"), "{}", lines[2]);
    }

    /// A live answer shows in text as a mark, and a valid secret is a SARIF error whatever
    /// its confidence; `properties.validation` is the JSON object.
    #[test]
    fn validation_marks_text_and_raises_sarif() {
        use scanner_engine::{Validation, ValidationStatus};
        let mut f = finding("a.env", 1, 1);
        f.finding.confidence = scanner_engine::Confidence::Low;
        let mut v = Validation::new(
            ValidationStatus::Valid,
            "HTTP 200: the provider accepted the secret",
        );
        v.http_status = Some(200);
        v.identity.insert("login".into(), "octocat".into());
        f.finding.validation = v;
        let text = run(Format::Text, false, vec![vec![f.clone()]]);
        assert_eq!(
            text,
            "a.env:1:1  github-pat [low] [valid]  token = \"ghp_…\"\n"
        );
        let sarif: serde_json::Value =
            serde_json::from_str(&run(Format::Sarif, false, vec![vec![f.clone()]])).unwrap();
        let r = &sarif["runs"][0]["results"][0];
        assert_eq!(r["level"], "error");
        assert_eq!(r["properties"]["validation"]["status"], "valid");
        assert_eq!(
            r["properties"]["validation"]["identity"]["login"],
            "octocat"
        );
        f.finding.validation = Validation::new(ValidationStatus::Invalid, "HTTP 401");
        let sarif: serde_json::Value =
            serde_json::from_str(&run(Format::Sarif, false, vec![vec![f.clone()]])).unwrap();
        assert_eq!(sarif["runs"][0]["results"][0]["level"], "note");
        let text = run(Format::Text, false, vec![vec![f]]);
        assert!(text.contains("github-pat [low] [invalid]  "), "{text}");
    }

    #[test]
    fn broken_pipe_is_returned_and_recognised() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        // `jsonl` streams: the error comes from the batch's write.
        let mut sink = Sink::new(
            SinkOptions {
                format: Format::Jsonl,
                show_secrets: false,
                color: false,
            },
            Box::new(Closed),
        );
        let e = sink
            .write_file_findings(vec![finding("a", 1, 1)])
            .unwrap_err();
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&io::Error::other("x")));
    }
}
