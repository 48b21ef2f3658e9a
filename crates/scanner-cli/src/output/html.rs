//! `--format html`: one self-contained page to triage findings in a browser.
//!
//! The report is a single HTML file that needs nothing else: its style sheet and script are
//! inline (`html/report.css`, `html/report.js`, compiled into the binary), it names no font,
//! image, style sheet or script to fetch, and a `Content-Security-Policy` meta tag
//! (`default-src 'none'`) forbids the browser any network request from it, so opening a
//! report never calls anywhere. It is written at the end of the scan, like `json`.
//!
//! # What the page shows
//!
//! * **Summary**: the number of findings and files; counts by confidence, by rule (most
//!   frequent first) and by validity. Clicking a count filters the table on it.
//! * **Validity** is a finding's `validation.status` (a finding without a `validation` object
//!   counts as `not_checked`). The validity column, select and the details' other
//!   `validation` fields (`reason`, each of `identity`) show when some finding was checked;
//!   otherwise the summary says "not checked".
//! * **Table** of every finding: confidence, rule, location (`PATH:LINE:COLUMN`), the secret
//!   (redacted), and, when present, the commit (`--history`) and validity columns. A click on
//!   a column header sorts by it (again: reverse order). A text filter (path, rule, secret,
//!   match, tags, commit, author), a confidence, a rule and a validity select narrow the
//!   rows.
//!   The table shows 100 rows per page, so a report of 10,000 findings or more stays quick:
//!   only the page shown is in the DOM.
//! * **Details**: a click on a row opens the finding: rule name, tags, match, fingerprint,
//!   entropy, encodings, the commit (id, author, date, subject) for history findings, and
//!   **lines of context**: up to 3 lines before and after the secret, numbered, with the
//!   secret marked.
//!
//! The page's state lives in the URL fragment, so a link or a bookmark reopens the same view:
//! `report.html#filter=config&confidence=high&rule=github-classic-pat&sort=rule&desc=1&page=2&open=0,5`
//! (`open` lists the indices, in the embedded array, of the findings shown opened; `validity`
//! filters on a status).
//!
//! # Lines of context
//!
//! The engine keeps no copy of the content, so the lines are read again when a file's
//! findings reach the report writer, during the scan: from the file (once, whole, up to 4 MiB;
//! a larger file 4 KiB on each side of each secret), or for `--history` from the blob at
//! `path` in `commit` (whole, with gitoxide, up to 64 MiB). They are shown only where the bytes read back are those that were
//! scanned: the secret at `offset..end_offset` (for a secret in decoded text, the line
//! structure of the encoded run: column, end column, line count), and the line number where
//! the window starts at the file's start. Otherwise the finding has no context
//! (`"context": null`): a standard input (even named after a file), a staged blob (`--staged`:
//! the work tree may hold other lines), an archive member, a file changed since it was
//! scanned. `scanner merge --format html` shows no context either. A line is cut to 240
//! characters, and the secret's own line to 160 characters on each side of the secret (a cut
//! shows `…`).
//!
//! # Redaction
//!
//! Unless `--show-secrets`, no secret reaches the page, the lines of context included: the
//! secret's bytes there are replaced by its redacted form (`ghp_…`, as in every format), and
//! so are every other finding's secret of the same file that falls in those lines and every
//! other copy of any secret the page reports (found in another file, or with `--history` in
//! another version of this one: unchanged here, it is reported with the version that added
//! it). The context shows the file as it is otherwise: a value that
//! no rule reported, or that an allowlist or the baseline suppressed, appears as written.
//!
//! # The embedded data
//!
//! Every finding is in a `<script type="application/json" id="findings">` element: one JSON
//! array, in report order (as `json`), one finding per line. Each element is the `json`
//! format's finding object (the same keys, in the same order; see [`super::json`]) followed by
//! one more key:
//!
//! | key | type | meaning |
//! | --- | --- | --- |
//! | `context` | object or null | The lines around the secret: `line`, the number of the first line shown; `before`, the text from that line's start to the secret; `secret`, the secret as the page shows it (redacted unless `--show-secrets`); `after`, the text from just past the secret to the end of the last line shown. Lines are joined by `\n` (a `\r` before it is dropped); the line after `secret` is numbered `end_line + 1`. |
//!
//! In the array every `<`, `>` and `&` is written as a JSON escape (`\u003c`, `\u003e`,
//! `\u0026`), so no string of the report, a path holding `</script>` included, can close the
//! element or open another; the page reads the array with `JSON.parse` and puts every string
//! into the page as text, never as markup. Control characters and Unicode bidirectional
//! controls are shown escaped (`\u{202e}`), as in `text`. The bytes are the same whatever the
//! thread count; the page holds no date.
//!
//! # Example
//!
//! `scanner scan --format html -o report.html .`, then open `report.html`. One element of the
//! embedded array, for a token on line 3 of `config/app.env`:
//!
//! ```text
//! {"rule_id":"github-classic-pat",…,"commit":null,"context":{"line":1,"before":"# app\nuser = \"app\"\ntoken = \"","secret":"ghp_…","after":"\"\nport = 8080"}}
//! ```

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use serde::Serialize;

use super::json::FindingObject;
use super::{redact, PathFinding};

/// Lines shown before and after the secret's line.
const LINES: usize = 3;
/// Bytes read on each side of the secret to find those lines.
const WINDOW: u64 = 4096;
/// A secret longer than this gets no context.
const MAX_SPAN: u64 = 64 * 1024;
/// A file up to this size is read whole, once for all its findings.
const WHOLE_FILE: u64 = 4 * 1024 * 1024;
/// A blob larger than this is not read back (it would be read whole).
const MAX_BLOB: u64 = 64 * 1024 * 1024;
/// Characters kept of a line of context.
const MAX_LINE: usize = 240;
/// Characters kept on each side of the secret on its own line.
const MAX_SIDE: usize = 160;

const CSS: &str = include_str!("html/report.css");
const SCRIPT: &str = include_str!("html/report.js");

/// The lines around one secret, as the page shows them (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(super) struct Context {
    line: u32,
    before: String,
    secret: String,
    after: String,
}

/// One element of the embedded array: the `json` object, then `context`.
#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    finding: FindingObject<'a>,
    context: Option<Context>,
}

/// Where the lines of context are read back from (the files of a scan, and the blobs of the
/// repositories of a history scan, opened on first use), and those read so far: the sink
/// holds the findings themselves with `json`'s, to be sorted at the end, and the page looks
/// each one's lines up here.
pub struct ContextSource {
    repos: Vec<ContextRepo>,
    /// The path standard input is reported as (`--stdin-name`): a file of that name, if
    /// any, is not what was scanned.
    stdin: Option<PathBuf>,
    opened: Option<Vec<(Option<PathBuf>, gix::ThreadSafeRepository)>>,
    read: HashMap<Key, Context>,
}

/// A finding's identity for its context: where it is and which rule found it.
type Key = (Vec<u8>, Option<String>, u64, u64, Arc<str>);

fn key(pf: &PathFinding) -> Key {
    let f = &pf.finding;
    (
        pf.path_bytes().to_vec(),
        pf.commit.as_ref().map(|c| c.id.clone()),
        f.offset,
        f.end_offset,
        Arc::clone(&f.rule_id),
    )
}

/// A repository a `--history` scan reads, for [`ContextSource`].
pub struct ContextRepo {
    /// What its findings' paths are led by (its directory's name, where a directory of
    /// repositories is scanned), stripped before its trees are looked in.
    pub prefix: Option<PathBuf>,
    pub dir: PathBuf,
}

impl ContextSource {
    /// `repos`: the repositories a `--history` scan reads (empty otherwise); `stdin`: the path
    /// standard input is reported as, when it is scanned.
    pub fn new(repos: Vec<ContextRepo>, stdin: Option<PathBuf>) -> ContextSource {
        ContextSource {
            repos,
            stdin,
            opened: None,
            read: HashMap::new(),
        }
    }

    /// Reads the lines of context of one file's (or blob's) findings, as the batch arrives.
    pub(super) fn read(&mut self, batch: &[PathFinding], show: bool) {
        let contexts = self.contexts(batch, show);
        for (pf, context) in batch.iter().zip(contexts) {
            if let Some(context) = context {
                self.read.insert(key(pf), context);
            }
        }
    }

    fn get(&self, pf: &PathFinding) -> Option<&Context> {
        self.read.get(&key(pf))
    }

    fn contexts(&mut self, batch: &[PathFinding], show: bool) -> Vec<Option<Context>> {
        let redactor = (!show).then(|| Redactor::new(batch));
        let redactor = redactor.as_ref();
        let first = &batch[0];
        let none = || vec![None; batch.len()];
        let in_whole = |bytes: &[u8]| -> Vec<Option<Context>> {
            batch
                .iter()
                .map(|pf| context_in(bytes, 0, true, pf, redactor))
                .collect()
        };
        if let Some(commit) = &first.commit {
            // A blob is read whole: the exact bytes that were scanned, or none.
            return match self.blob(&commit.id, &first.path) {
                Some(blob) => in_whole(&blob),
                None => none(),
            };
        }
        if self.stdin.as_ref() == Some(&first.path) {
            return none();
        }
        // Only a regular file: opening a FIFO (a `--stdin-name` that names one) would block.
        let regular = std::fs::metadata(&first.path).is_ok_and(|m| m.is_file());
        let Some(mut file) = regular.then(|| File::open(&first.path).ok()).flatten() else {
            return none();
        };
        // A small file is read once for all its findings, a large one around each.
        if file.metadata().is_ok_and(|m| m.len() <= WHOLE_FILE) {
            let mut bytes = Vec::new();
            return match file.read_to_end(&mut bytes) {
                Ok(_) => in_whole(&bytes),
                Err(_) => none(),
            };
        }
        batch
            .iter()
            .map(|pf| read_context_of(&mut file, pf, redactor))
            .collect()
    }

    /// The blob at `path` in `commit`, from the first repository whose prefix leads `path`
    /// and that has the commit.
    fn blob(&mut self, commit: &str, path: &Path) -> Option<Vec<u8>> {
        let repos = self.opened.get_or_insert_with(|| {
            let isolated = gix::open::Options::isolated;
            self.repos
                .iter()
                .filter_map(|r| {
                    let repo = gix::open_opts(&r.dir, isolated()).ok()?;
                    Some((r.prefix.clone(), repo.into_sync()))
                })
                .collect()
        });
        let id = gix::ObjectId::from_hex(commit.as_bytes()).ok()?;
        for (prefix, repo) in repos.iter() {
            let path = match prefix {
                Some(prefix) => match path.strip_prefix(prefix) {
                    Ok(rest) => rest,
                    Err(_) => continue,
                },
                None => path,
            };
            let repo = repo.to_thread_local();
            let Ok(commit) = repo.find_commit(id) else {
                continue;
            };
            let entry = commit.tree().ok()?.lookup_entry_by_path(path).ok()??;
            if repo.find_header(entry.object_id()).ok()?.size() > MAX_BLOB {
                return None;
            }
            return Some(entry.object().ok()?.detach().data);
        }
        None
    }
}

/// The context of `pf` from a window of `file` around it.
fn read_context_of(
    file: &mut File,
    pf: &PathFinding,
    redactor: Option<&Redactor>,
) -> Option<Context> {
    let f = &pf.finding;
    if f.secret.is_empty() || f.end_offset < f.offset || f.end_offset - f.offset > MAX_SPAN {
        return None;
    }
    let start = f.offset.saturating_sub(WINDOW);
    let want = f.end_offset - start + WINDOW;
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = Vec::with_capacity(want as usize);
    file.take(want).read_to_end(&mut buf).ok()?;
    let at_eof = (buf.len() as u64) < want;
    context_in(&buf, start, at_eof, pf, redactor)
}

/// The context of `pf` in `buf`, the file's bytes from offset `start` (to its end when
/// `at_eof`), or `None` when these are not the bytes that were scanned. Without a `redactor`
/// (`--show-secrets`), the lines are shown as they are.
fn context_in(
    buf: &[u8],
    start: u64,
    at_eof: bool,
    pf: &PathFinding,
    redactor: Option<&Redactor>,
) -> Option<Context> {
    let f = &pf.finding;
    let o = usize::try_from(f.offset.checked_sub(start)?).ok()?;
    let e = usize::try_from(f.end_offset.checked_sub(start)?).ok()?;
    let span = buf.get(o..e)?;
    if f.decoded.is_empty() && String::from_utf8_lossy(span) != f.secret {
        return None;
    }
    // The line structure must be the one scanned: the column, the end column, the line count.
    let column_at = |at: usize| match memchr::memrchr(b'\n', &buf[..at]) {
        Some(nl) => Some((at - nl) as u64),
        None if start == 0 => Some(at as u64 + 1),
        None => None, // the line starts before the window: only a lower bound is known
    };
    let column_ok = |at: usize, column: u32| match column_at(at) {
        Some(c) => c == u64::from(column),
        None => u64::from(column) > at as u64,
    };
    let newlines = span.iter().filter(|&&b| b == b'\n').count() as u64;
    if !column_ok(o, f.column)
        || !column_ok(e, f.end_column)
        || newlines != u64::from(f.end_line.checked_sub(f.line)?)
    {
        return None;
    }

    // From the start of the line LINES above the secret's (or the first whole line in the
    // window, or the window's start when even the secret's line starts before it).
    let nls_before: Vec<usize> = memchr::memrchr_iter(b'\n', &buf[..o])
        .take(LINES + 1)
        .collect();
    let (cs, cut_start) = match nls_before.get(LINES) {
        Some(&nl) => (nl + 1, false),
        None if start == 0 => (0, false),
        None => match nls_before.last() {
            Some(&nl) => (nl + 1, false),
            None => (0, true),
        },
    };
    // To the end of the line LINES below the secret's.
    let nls_after: Vec<usize> = memchr::memchr_iter(b'\n', &buf[e..])
        .map(|i| e + i)
        .take(LINES + 1)
        .collect();
    let (ce, cut_end) = match nls_after.get(LINES) {
        Some(&nl) => (nl, false),
        // The file's last line: without the newline that ends it, if any.
        None if at_eof => (
            buf.len() - usize::from(buf.len() > e && buf.ends_with(b"\n")),
            false,
        ),
        None => match nls_after.last() {
            Some(&nl) => (nl, false),
            None => (buf.len(), true),
        },
    };
    let lines_above = memchr::memchr_iter(b'\n', &buf[cs..o]).count() as u32;
    let first_line = f.line.checked_sub(lines_above)?;
    // From the file's start, the line number itself is known.
    if start == 0 && cs == 0 && first_line != 1 {
        return None;
    }

    // Every finding of the file whose secret lies in these lines is redacted where it is, and
    // every copy of any of their secrets wherever it is.
    let shown = |from: usize, to: usize| match redactor {
        Some(r) => r.text(buf, start, from, to),
        None => String::from_utf8_lossy(&buf[from..to]).into_owned(),
    };
    // Each line is narrowed to what `cut_lines` can keep of it before it is redacted: a line
    // of thousands of findings, redacted whole for each of them, cost their square (20,000
    // findings on one line did not finish in ten minutes). A window of the line is shown
    // when its text holds more than the characters kept, with the longest secret to spare:
    // a secret cut at the window's edge (shown in part, or not redacted as a copy) lies in
    // that spare, which `cut_lines` drops. Secrets shrink when redacted: a window too short
    // doubles.
    let margin = redactor.map_or(0, Redactor::reach).saturating_add(8);
    let show_line = |line: usize, end: usize, keep: usize, tail: bool| {
        let mut width = (4 * keep).saturating_add(margin);
        loop {
            let (a, b) = match tail {
                true => (line.max(end.saturating_sub(width)), end),
                false => (line, end.min(line.saturating_add(width))),
            };
            let text = shown(a, b);
            if (a, b) == (line, end) || text.chars().count() > keep.saturating_add(margin) {
                return text;
            }
            width = width.saturating_mul(2);
        }
    };
    let shown_cut = |from: usize, to: usize, before: bool| {
        let mut text = String::new();
        let mut line = from;
        loop {
            let end = memchr::memchr(b'\n', &buf[line..to]).map_or(to, |i| line + i);
            let own = if before { end == to } else { line == from };
            let keep = if own { MAX_SIDE } else { MAX_LINE };
            text.push_str(&show_line(line, end, keep, own && before));
            if end == to {
                return text;
            }
            text.push('\n');
            line = end + 1;
        }
    };
    let mut before = shown_cut(cs, o, true).replace("\r\n", "\n");
    let mut after = shown_cut(e, ce, false).replace("\r\n", "\n");
    if after.ends_with('\r') && !cut_end {
        after.pop();
    }
    before = cut_lines(&before, true);
    after = cut_lines(&after, false);
    if cut_start && !before.starts_with('…') {
        before.insert(0, '…');
    }
    if cut_end && !after.ends_with('…') {
        after.push('…');
    }
    let secret = String::from_utf8_lossy(span);
    Some(Context {
        line: first_line,
        before,
        secret: match redactor {
            Some(_) => redact(&secret),
            None => secret.into_owned(),
        },
        after,
    })
}

/// What the lines of one file (or blob) hide: every finding's secret where it is, and every
/// copy of any of them wherever it is. Built once per batch, so that a file with thousands of
/// findings costs a sorted search and one automaton pass per line, not a pass per secret.
struct Redactor {
    /// The spans of the findings that have a secret, in file offsets, sorted.
    spans: Vec<(u64, u64)>,
    /// The longest span, to find those that begin before a window and reach into it.
    longest: u64,
    /// The longest secret, in bytes.
    longest_secret: usize,
    /// The secrets, longest match first, and their redacted forms.
    copies: Option<(AhoCorasick, Vec<String>)>,
}

impl Redactor {
    fn new(batch: &[PathFinding]) -> Redactor {
        let with_secret = || {
            batch
                .iter()
                .map(|g| &g.finding)
                .filter(|f| !f.secret.is_empty())
        };
        let mut spans: Vec<(u64, u64)> = with_secret()
            .map(|f| (f.offset, f.end_offset.max(f.offset)))
            .collect();
        spans.sort_unstable();
        spans.dedup();
        let longest = spans.iter().map(|(a, b)| b - a).max().unwrap_or(0);
        let mut secrets: Vec<&str> = with_secret().map(|f| f.secret.as_str()).collect();
        secrets.sort_unstable();
        secrets.dedup();
        let longest_secret = secrets.iter().map(|s| s.len()).max().unwrap_or(0);
        // An NFA: a DFA's construction cost 40% of the run of a tree of 100 files with 100
        // findings each, to search a few lines of each.
        let copies = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .match_kind(MatchKind::LeftmostLongest)
            .build(&secrets)
            .ok()
            .map(|ac| (ac, secrets.iter().map(|s| redact(s)).collect()));
        Redactor {
            spans,
            longest,
            longest_secret,
            copies,
        }
    }

    /// How far from a window's edge a secret cut there may show: the longest span or copy.
    fn reach(&self) -> usize {
        usize::try_from(self.longest)
            .unwrap_or(usize::MAX)
            .max(self.longest_secret)
    }

    /// `buf[from..to]` (`buf` holds the file from offset `start`) as text, redacted.
    fn text(&self, buf: &[u8], start: u64, from: usize, to: usize) -> String {
        let window = |x: u64| i128::from(x) - i128::from(start);
        let earliest = (start + from as u64).saturating_sub(self.longest);
        let first = self.spans.partition_point(|&(a, _)| a < earliest);
        let mut out = String::new();
        let mut at = from;
        for &(a, b) in &self.spans[first..] {
            let (a, b) = (window(a), window(b));
            if a >= to as i128 {
                break;
            }
            let (ca, cb) = (a.max(at as i128) as usize, b.min(to as i128));
            if cb <= ca as i128 {
                continue;
            }
            let cb = cb as usize;
            out.push_str(&self.copies(&buf[at..ca]));
            if ca as i128 == a {
                out.push_str(&redact(&String::from_utf8_lossy(&buf[ca..cb])));
            } else {
                // The rest of a secret whose start is already shown (or lies outside).
                out.push('…');
            }
            at = cb;
        }
        out.push_str(&self.copies(&buf[at..to]));
        out
    }

    /// `bytes` as text with every copy of a secret redacted.
    fn copies(&self, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes);
        match &self.copies {
            Some((secrets, redacted)) => secrets.replace_all(&text, redacted),
            None => text.into_owned(),
        }
    }
}

/// Cuts long lines of `before` (whose last line leads to the secret) or `after` (whose first
/// line follows it) to [`MAX_LINE`] characters, and the secret's line to [`MAX_SIDE`] on its
/// side.
fn cut_lines(text: &str, before: bool) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() - 1;
    let cut: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let n = line.chars().count();
            let own = if before { i == last } else { i == 0 };
            match (own, before) {
                (true, true) if n > MAX_SIDE => {
                    let tail: String = line.chars().skip(n - MAX_SIDE).collect();
                    format!("…{tail}")
                }
                (true, _) if n > MAX_SIDE => {
                    let head: String = line.chars().take(MAX_SIDE).collect();
                    format!("{head}…")
                }
                (false, _) if n > MAX_LINE => {
                    let head: String = line.chars().take(MAX_LINE).collect();
                    format!("{head}…")
                }
                _ => (*line).to_string(),
            }
        })
        .collect();
    cut.join("\n")
}

/// Writes the page; `findings` are already in report order, their lines in `contexts` (none
/// without).
pub(super) fn write_page(
    out: &mut dyn Write,
    findings: &[PathFinding],
    contexts: Option<&ContextSource>,
    show: bool,
) -> io::Result<()> {
    let n = findings.len();
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n\
         <title>scanner report: {n} {}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        if n == 1 { "finding" } else { "findings" }
    )?;
    out.write_all(BODY.as_bytes())?;
    out.write_all(b"<script type=\"application/json\" id=\"findings\">\n[\n")?;
    // A file's lines were redacted with its own findings' secrets; a secret the page reports
    // for another file, or for another version of this one (`--history`: unchanged here,
    // reported with the version that added it), may stand in them too.
    let every = (!show).then(|| Redactor::new(findings));
    let mut buf = Vec::with_capacity(2048);
    for (i, pf) in findings.iter().enumerate() {
        buf.clear();
        let context = contexts.and_then(|c| c.get(pf)).map(|c| match &every {
            Some(r) => Context {
                before: r.copies(c.before.as_bytes()),
                after: r.copies(c.after.as_bytes()),
                ..c.clone()
            },
            None => c.clone(),
        });
        let row = Row {
            finding: FindingObject::new(pf, show),
            context,
        };
        serde_json::to_writer(&mut buf, &row).map_err(io::Error::from)?;
        if i + 1 < n {
            buf.push(b',');
        }
        buf.push(b'\n');
        write_script_safe(out, &buf)?;
    }
    out.write_all(b"]\n</script>\n<script>\n")?;
    out.write_all(SCRIPT.as_bytes())?;
    out.write_all(b"</script>\n</body>\n</html>\n")
}

/// Writes JSON text with `<`, `>` and `&` as JSON escapes: they can only occur inside strings,
/// where the escape means the same character, and without them nothing in the data can end
/// the `<script>` element.
fn write_script_safe(out: &mut dyn Write, json: &[u8]) -> io::Result<()> {
    let mut from = 0;
    for (i, &b) in json.iter().enumerate() {
        let escape: &[u8] = match b {
            b'<' => b"\\u003c",
            b'>' => b"\\u003e",
            b'&' => b"\\u0026",
            _ => continue,
        };
        out.write_all(&json[from..i])?;
        out.write_all(escape)?;
        from = i + 1;
    }
    out.write_all(&json[from..])
}

/// The page's fixed markup: the script fills it from the embedded findings.
const BODY: &str = r#"<header>
<h1>scanner report</h1>
<p id="totals"></p>
<noscript><p>This page needs JavaScript to show the findings. They are embedded in its
source as JSON (the element with id "findings").</p></noscript>
</header>
<section id="summary" aria-label="Summary">
<div class="box"><h2>By confidence</h2><ul id="by-confidence"></ul></div>
<div class="box"><h2>By validity</h2><ul id="by-validity"></ul></div>
<div class="box wide"><h2>By rule</h2><table id="by-rule"><tbody></tbody></table></div>
</section>
<section id="controls" aria-label="Filters">
<input id="filter" type="search" placeholder="Filter: path, rule, secret, commit, author…" aria-label="Filter">
<select id="confidence" aria-label="Confidence"><option value="">all confidences</option></select>
<select id="rule" aria-label="Rule"><option value="">all rules</option></select>
<select id="validity" aria-label="Validity" hidden><option value="">all validity</option></select>
<button id="clear" type="button">Clear</button>
<span id="count" aria-live="polite"></span>
</section>
<table id="table">
<thead><tr id="head"></tr></thead>
<tbody id="rows"></tbody>
</table>
<nav id="pager" aria-label="Pages">
<button id="prev" type="button">‹ Previous</button>
<span id="page"></span>
<button id="next" type="button">Next ›</button>
</nav>
"#;

#[cfg(test)]
mod tests {
    use super::super::tests::{finding, run, token};
    use super::super::Format;
    use super::*;
    use scanner_engine::Encoding;

    /// The finding of `secret` at its first occurrence in `text`, positions computed.
    fn found(text: &str, secret: &str) -> PathFinding {
        let offset = text.find(secret).unwrap();
        let end = offset + secret.len();
        let pos = |at: usize| {
            let line = text[..at].matches('\n').count() as u32 + 1;
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            (line, (at - start) as u32 + 1)
        };
        let mut pf = finding("f.env", 1, 1);
        let f = &mut pf.finding;
        (f.line, f.column) = pos(offset);
        (f.end_line, f.end_column) = pos(end);
        (f.offset, f.end_offset) = (offset as u64, end as u64);
        f.secret = secret.to_string();
        f.r#match = secret.to_string();
        pf
    }

    fn context(text: &str, pf: &PathFinding, batch: &[PathFinding], show: bool) -> Option<Context> {
        let redactor = (!show).then(|| Redactor::new(batch));
        context_in(text.as_bytes(), 0, true, pf, redactor.as_ref())
    }

    fn ctx(line: u32, before: &str, secret: &str, after: &str) -> Option<Context> {
        Some(Context {
            line,
            before: before.into(),
            secret: secret.into(),
            after: after.into(),
        })
    }

    #[test]
    fn crlf_lines_and_the_files_end() {
        let t = token();
        let text = format!("a\r\nb\r\nc\r\nd\r\nkey = {t}\r\ne\r\n");
        let f = found(&text, &t);
        let got = context(&text, &f, std::slice::from_ref(&f), false);
        assert_eq!(got, ctx(2, "b\nc\nd\nkey = ", "ghp_…", "\ne"));
        let got = context(&text, &f, std::slice::from_ref(&f), true);
        assert_eq!(got, ctx(2, "b\nc\nd\nkey = ", &t, "\ne"));
    }

    #[test]
    fn bytes_that_are_not_those_scanned_give_no_context() {
        let t = token();
        let text = format!("key = {t}\n");
        let f = found(&text, &t);
        let batch = std::slice::from_ref(&f);
        // The secret is elsewhere now, or another one is there.
        assert_eq!(context(&format!("\n{text}"), &f, batch, false), None);
        let other = text.replace("ghp_a", "ghp_b");
        assert_eq!(context(&other, &f, batch, false), None);
        // A decoded finding: the line structure must match.
        let mut d = f.clone();
        d.finding.decoded = vec![Encoding::Base64];
        d.finding.secret = "decoded".into();
        let shifted = format!("k = {t}\n");
        assert_eq!(context(&shifted, &d, batch, false), None);
        assert_eq!(
            context(&text, &d, batch, false),
            ctx(1, "key = ", "ghp_…", "")
        );
        // Too short a file.
        assert_eq!(context("key = ", &f, batch, false), None);
        // The same line, at another line number.
        let mut below = f.clone();
        below.finding.line = 5;
        assert_eq!(context(&text, &below, batch, false), None);
        let lower = format!("a\nb\nc\nd\n{text}");
        let mut above = found(&lower, &t);
        assert_eq!(above.finding.line, 5);
        (above.finding.line, above.finding.end_line) = (1, 1);
        assert_eq!(context(&lower, &above, batch, false), None);
    }

    #[test]
    fn every_secret_of_the_file_in_the_lines_is_redacted() {
        let t = token();
        let u = t.replace("ghp_a", "ghp_z");
        // `u` twice on the line after (one a finding, one a copy), a base64 run before.
        let text = format!("enc = QUJDREVGR0hJSktM\nkey = {t}\nalt = {u} {u}\n");
        let f = found(&text, &t);
        let g = found(&text, &u);
        let mut b = found(&text, "QUJDREVGR0hJSktM");
        b.finding.decoded = vec![Encoding::Base64];
        b.finding.secret = "ABCDEFGHIJKL".into();
        let batch = [b, f.clone(), g];
        assert_eq!(
            context(&text, &f, &batch, false),
            ctx(1, "enc = QUJD…\nkey = ", "ghp_…", "\nalt = ghp_… ghp_…")
        );
    }

    #[test]
    fn long_lines_are_cut_and_a_window_without_a_line_start_says_so() {
        let t = token();
        let text = format!(
            "{}\n{} = {t} = {}\n",
            "a".repeat(300),
            "b".repeat(200),
            "c".repeat(200)
        );
        let f = found(&text, &t);
        let got = context(&text, &f, std::slice::from_ref(&f), false).unwrap();
        assert_eq!(
            got.before,
            format!("{}…\n…{} = ", "a".repeat(240), "b".repeat(157))
        );
        assert_eq!(got.after, format!(" = {}…", "c".repeat(157)));
        // The window starts inside the secret's line.
        let start = 351;
        let redactor = Redactor::new(std::slice::from_ref(&f));
        let got = context_in(
            &text.as_bytes()[start..],
            start as u64,
            true,
            &f,
            Some(&redactor),
        );
        assert_eq!(got.unwrap().before, format!("…{} = ", "b".repeat(150)));
        // A large file is read around each finding: 4 KiB on each side, so the 5,000-byte line
        // above is left out, where the whole file shows it (cut) and the line above it.
        let far = t.replace("ghp_a", "ghp_q");
        let text = format!("{far}\n{}\nk = {t}\nv = {t}\n", "x".repeat(5000));
        let batch = [found(&text, &far), found(&text, &t)];
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        let redactor = Redactor::new(&batch);
        let got = read_context_of(&mut file, &batch[1], Some(&redactor));
        assert_eq!(got, ctx(3, "k = ", "ghp_…", "\nv = ghp_…"));
        let x = format!("{}…", "x".repeat(240));
        assert_eq!(
            context(&text, &batch[1], &batch, false),
            ctx(1, &format!("ghp_…\n{x}\nk = "), "ghp_…", "\nv = ghp_…")
        );
    }

    /// Lines are narrowed before they are redacted: each finding of a long line of findings
    /// and copies, among characters of two and four bytes, gets the context the whole line
    /// redacted gives (a redactor reaching further than the file narrows nothing).
    #[test]
    fn narrowed_lines_show_what_whole_lines_would() {
        let secrets: Vec<String> = (0..300)
            .map(|i| format!("sk{i:03}-{}", "Qz".repeat(27)))
            .collect();
        let mut line = String::new();
        for (i, s) in secrets.iter().enumerate() {
            line.push_str(&format!("é😀 x{i} = {s}; "));
            if i % 7 == 0 {
                line.push_str(&format!("{} ", secrets[(i * 13) % 300]));
            }
        }
        let long = format!("{}{}", "é😀".repeat(200), secrets[5]);
        // Dense: each secret shrinks from 60 bytes to a few characters when redacted.
        let dense: String = secrets.iter().map(|s| format!("t={s} ")).collect();
        // The findings at each secret's first place: on `line`, then on `dense`.
        for text in [
            format!("{long}\r\n{line}\r\n{long}\n{line}\n{dense}\n"),
            format!("{long}\n{dense}\n{dense}\r\n{line}\n"),
        ] {
            let batch: Vec<PathFinding> = secrets.iter().map(|s| found(&text, s)).collect();
            let narrow = Redactor::new(&batch);
            let mut whole = Redactor::new(&batch);
            whole.longest_secret = 1 << 40;
            for f in &batch {
                let got = context_in(text.as_bytes(), 0, true, f, Some(&narrow));
                let want = context_in(text.as_bytes(), 0, true, f, Some(&whole));
                assert!(got.is_some());
                assert_eq!(got, want, "{}", f.finding.secret);
            }
        }
    }

    #[test]
    fn the_page_embeds_each_finding_once_and_escapes_markup() {
        let mut f = finding("a</script><b>&.env", 1, 1);
        f.finding.rule_name = "<i>".into();
        let page = run(Format::Html, false, vec![vec![f.clone()], vec![f]]);
        assert!(page.starts_with("<!DOCTYPE html>\n"));
        assert!(page.ends_with("</script>\n</body>\n</html>\n"));
        assert!(!page.contains(&token()));
        assert!(!page.contains("<b>") && !page.contains("<i>"));
        assert_eq!(
            page.matches(r#""path":"a\u003c/script\u003e\u003cb\u003e\u0026.env""#)
                .count(),
            2
        );
        assert_eq!(page.matches(r#""rule_name":"\u003ci\u003e""#).count(), 2);
        // Written by the sink without a file to read back: no context.
        assert_eq!(page.matches(r#""context":null}"#).count(), 2);
        assert!(page.contains("<title>scanner report: 2 findings</title>"));
    }
}
