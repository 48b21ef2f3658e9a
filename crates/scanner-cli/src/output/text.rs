//! `--format text`: one line per finding, for people.
//!
//! ```text
//! PATH:LINE:COLUMN  RULE_ID  SNIPPET
//! ```
//!
//! * `PATH` is the path as reached from the PATH argument, lossy UTF-8; with `--history` it is
//!   `COMMIT:PATH`, the first 12 hex digits of the commit that introduced the blob and its path
//!   there (git's own `REV:PATH` notation: `git show COMMIT:PATH` prints the blob);
//! * `LINE` and `COLUMN` locate the first byte of the secret: 1-based, the column counted in
//!   bytes (as in `json`);
//! * `RULE_ID` is followed by ` [medium]` or ` [low]` when the confidence is not high, with
//!   the reasons after a colon (` [low: fails GitHub checksum, test path]`): the finding's
//!   `tags` (as `json` carries them) through [`tag_reason`], one phrase per tag that explains
//!   a lower confidence; and by ` (base64)`-style notes when the secret was found in decoded
//!   text; after a live check (`--validate`) by ` [valid]`, ` [invalid]` or ` [unknown]`;
//! * two spaces separate the location, the rule id and the snippet (a path may contain single
//!   spaces; `cut -d' ' -f1` is not the tool, use `--format json` for machines);
//! * `SNIPPET` is the matched text with the secret redacted (its first characters, then `…`)
//!   unless `--show-secrets` (every copy of it, as in `json`'s `match`), trimmed to at most 60 characters of context on each side of the
//!   secret (a trimmed side shows `…`), without the line break that ends a match taking the
//!   end of its line (`KEY=value\n`). A rule that matches on the file path alone has no
//!   snippet: the line ends after the rule id.
//!
//! Every character that could act on a terminal is escaped, in the path and the snippet alike:
//! `\t`, `\n`, `\r`, `\\`, other control characters as `\x1b` / `\u{85}`, and the Unicode
//! bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) as
//! `\u{202e}`. A finding can therefore never inject escape sequences or reorder what the
//! reader sees, and one finding is always exactly one line. A literal backslash is doubled so
//! that the escaping is unambiguous. A byte of the path that is not UTF-8 is written `\xe9`,
//! so the line names the file exactly (JSON's `path_bytes` holds the raw bytes).
//!
//! With color on (the caller decides: `--color always`, or a terminal without `NO_COLOR`),
//! the path is magenta, the line and column green, the rule id bold yellow and the secret
//! inside the snippet bold red, with plain SGR codes (`ESC[35m` ... `ESC[0m`).
//!
//! Lines are written when the scan ends, sorted as `json` is: by path, line and column (see
//! [`super`]), so two runs over the same tree print the same bytes. `jsonl` is the format that
//! streams.
//!
//! # Example
//!
//! ```text
//! ./config/app.env:3:14  github-classic-pat  ghp_…
//! ./src/db.py:3:23  postgres-connection-url  postgres://app:DaqW…@db.internal
//! ./tests/fixtures/app.env:1:7  github-classic-pat [low: fails GitHub checksum, test path]  ghp_…
//! ```
//!
//! and with `--show-secrets`, the same lines with the whole secrets. The snippet is what the
//! rule matched: for a token rule that is often the token alone.

use super::{redact, PathFinding};
use crate::messages::{escape, escape_path};

/// Characters of context kept on each side of the secret.
const CONTEXT: usize = 60;

const PATH_COLOR: &str = "\x1b[35m";
const POS_COLOR: &str = "\x1b[32m";
const RULE_COLOR: &str = "\x1b[1;33m";
const SECRET_COLOR: &str = "\x1b[1;31m";
const RESET: &str = "\x1b[0m";

/// Appends the line for one finding, newline included.
pub(super) fn write_line(out: &mut Vec<u8>, pf: &PathFinding, show_secrets: bool, color: bool) {
    let f = &pf.finding;
    let mut s = String::with_capacity(160);
    let paint = |s: &mut String, code: &str, text: &str| {
        if color {
            s.push_str(code);
            s.push_str(text);
            s.push_str(RESET);
        } else {
            s.push_str(text);
        }
    };
    // History: git's `REV:PATH` notation, so `git show 0123abcd:path` shows the blob.
    if let Some(c) = &pf.commit {
        paint(&mut s, POS_COLOR, &c.id[..c.id.len().min(12)]);
        s.push(':');
    }
    paint(&mut s, PATH_COLOR, &escape_path(&pf.path));
    s.push(':');
    paint(&mut s, POS_COLOR, &format!("{}:{}", f.line, f.column));
    s.push_str("  ");
    paint(&mut s, RULE_COLOR, &escape(&f.rule_id));
    // Only what lowers trust is shown, with why: high confidence is the quiet default.
    if f.confidence != scanner_engine::Confidence::High {
        s.push_str(" [");
        s.push_str(f.confidence.as_str());
        let mut reasons = f.tags.iter().filter_map(|t| tag_reason(t, &f.rule_id));
        if let Some(first) = reasons.next() {
            s.push_str(": ");
            s.push_str(first);
            for r in reasons {
                s.push_str(", ");
                s.push_str(r);
            }
        }
        s.push(']');
    }
    if let Some(mark) = validation_mark(f.validation.status) {
        s.push_str(mark);
    }
    for e in &f.decoded {
        s.push_str(" (");
        s.push_str(e.as_str());
        s.push(')');
    }

    let (before, secret, after) = split_match(&f.r#match, &f.secret);
    // A value that ends its line: the match takes the line break after it (a rule's end
    // boundary), which is no part of the line the snippet shows.
    let after = after.trim_end_matches(['\r', '\n']);
    let secret = match secret {
        Some(sec) if show_secrets => escape(sec),
        Some(sec) => escape(&redact(sec)),
        // The secret is not inside the match: redact the match as a whole, as json does.
        None if show_secrets => escape(&f.r#match),
        None => escape(&redact(&f.r#match)),
    };
    // Another copy of the secret in the context (a URL whose user name is its password) is
    // redacted too, as in json's `match`; before the cut, so that no part of one shows.
    let context = |side: &str| match show_secrets || f.secret.is_empty() {
        true => side.to_string(),
        false => side.replace(f.secret.as_str(), &redact(&f.secret)),
    };
    // A rule on the file path alone has nothing to show: no trailing separator then.
    if !(before.is_empty() && secret.is_empty() && after.is_empty()) {
        s.push_str("  ");
        s.push_str(&escape(&tail(&context(before), CONTEXT)));
        paint(&mut s, SECRET_COLOR, &secret);
        s.push_str(&escape(&head(&context(after), CONTEXT)));
    }
    s.push('\n');
    out.extend_from_slice(s.as_bytes());
}

/// Why a tag lowers a finding's confidence, in words; `None` for the tags that do not lower it
/// (`prefix`, `checksum-valid`). The one mapping from the tags of the `json` report (see
/// `json.rs`, field `tags`) to the text report's reasons. `rule_id` names the vendor whose
/// checksum failed.
pub fn tag_reason(tag: &str, rule_id: &str) -> Option<&'static str> {
    Some(match tag {
        "checksum-invalid" if rule_id.starts_with("github-") => "fails GitHub checksum",
        "checksum-invalid" if rule_id.starts_with("npm-") => "fails npm checksum",
        "checksum-invalid" if rule_id.starts_with("pypi-") => "fails PyPI checksum",
        "checksum-invalid" if rule_id == "jwt" => "not a well-formed JWT",
        "checksum-invalid" => "fails its checksum",
        "test-path" => "test path",
        "doc-path" => "documentation path",
        "test-code" => "in test code",
        "published-example" => "published example",
        t if t.starts_with("shape-mismatch:") => "not the shape of the provider its key names",
        "generic" => "generic pattern",
        _ => return None,
    })
}

/// The validation mark after the rule id: only what a check decided; offline evidence
/// already shows in the confidence (a failed checksum is `[low]`).
fn validation_mark(status: scanner_engine::ValidationStatus) -> Option<&'static str> {
    use scanner_engine::ValidationStatus as V;
    match status {
        V::Valid => Some(" [valid]"),
        V::Invalid => Some(" [invalid]"),
        V::Unknown => Some(" [unknown]"),
        V::OfflineInvalid | V::OfflineValid | V::NotChecked => None,
    }
}

/// `(before, Some(secret), after)` around the first copy of the secret in the match, or
/// `("", None, "")` when the secret is empty or not in the match.
fn split_match<'a>(m: &'a str, secret: &'a str) -> (&'a str, Option<&'a str>, &'a str) {
    match m.find(secret) {
        Some(i) if !secret.is_empty() => (&m[..i], Some(secret), &m[i + secret.len()..]),
        _ => ("", None, ""),
    }
}

/// The last `n` characters of `s`, prefixed with `…` if cut.
fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let mut out = String::from("…");
    out.extend(s.chars().skip(count - (n - 1)));
    out
}

/// The first `n` characters of `s`, followed by `…` if cut.
fn head(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{finding, run, token};
    use super::super::{Format, Sink, SinkOptions};

    #[test]
    fn exact_line_redacted_and_whole() {
        let f = finding("config/app.env", 3, 14);
        assert_eq!(
            run(Format::Text, false, vec![vec![f.clone()]]),
            "config/app.env:3:14  github-pat  token = \"ghp_…\"\n"
        );
        assert_eq!(
            run(Format::Text, true, vec![vec![f]]),
            format!("config/app.env:3:14  github-pat  token = \"{}\"\n", token())
        );
    }

    #[test]
    fn color_wraps_path_position_rule_and_secret() {
        let out = super::super::tests::Shared::default();
        let mut sink = Sink::new(
            SinkOptions {
                format: Format::Text,
                show_secrets: false,
                color: true,
            },
            Box::new(out.clone()),
        );
        sink.write_file_findings(vec![finding("a.env", 1, 2)])
            .unwrap();
        sink.finish(&[]).unwrap();
        assert_eq!(
            out.text(),
            "\x1b[35ma.env\x1b[0m:\x1b[32m1:2\x1b[0m  \x1b[1;33mgithub-pat\x1b[0m  \
             token = \"\x1b[1;31mghp_…\x1b[0m\"\n"
        );
    }

    #[test]
    fn hostile_bytes_are_escaped_everywhere() {
        let mut f = finding("evil\x1b[2J\u{202e}.env", 1, 1);
        f.finding.r#match = format!("a\x07b\r\n\\{}\u{85}", f.finding.secret);
        let out = run(Format::Text, true, vec![vec![f.clone()]]);
        assert_eq!(
            out,
            format!(
                "evil\\x1b[2J\\u{{202e}}.env:1:1  github-pat  a\\x07b\\r\\n\\\\{}\\u{{85}}\n",
                token()
            )
        );
        assert_eq!(out.matches('\n').count(), 1);
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn long_context_is_trimmed_but_the_secret_is_whole() {
        let mut f = finding("a", 1, 1);
        f.finding.r#match = format!("{}{}{}", "x".repeat(500), f.finding.secret, "y".repeat(500));
        let out = run(Format::Text, true, vec![vec![f]]);
        let snippet = out.trim_end().splitn(3, "  ").nth(2).unwrap();
        assert_eq!(
            snippet,
            format!("…{}{}{}…", "x".repeat(59), token(), "y".repeat(59))
        );
    }

    #[test]
    fn a_lowered_confidence_says_why_from_the_tags() {
        let mut f = finding("tests/app.env", 1, 7);
        f.finding.confidence = scanner_engine::Confidence::Low;
        f.finding.tags = vec!["prefix", "checksum-invalid", "test-path"];
        f.finding.rule_id = "github-classic-pat".into();
        assert_eq!(
            run(Format::Text, false, vec![vec![f.clone()]]),
            "tests/app.env:1:7  github-classic-pat [low: fails GitHub checksum, test path]  \
             token = \"ghp_…\"\n"
        );
        assert_eq!(
            super::tag_reason("shape-mismatch:acme-key", "generic-secret-assignment"),
            Some("not the shape of the provider its key names")
        );
        // A medium without a tag that explains it stays bare.
        f.finding.confidence = scanner_engine::Confidence::Medium;
        f.finding.tags = vec![];
        assert_eq!(
            run(Format::Text, false, vec![vec![f]]),
            "tests/app.env:1:7  github-classic-pat [medium]  token = \"ghp_…\"\n"
        );
    }

    #[test]
    fn path_only_finding_has_no_snippet() {
        let mut f = finding("id_rsa", 1, 1);
        f.finding.r#match = String::new();
        f.finding.secret = String::new();
        assert_eq!(
            run(Format::Text, false, vec![vec![f]]),
            "id_rsa:1:1  github-pat\n"
        );
    }

    #[test]
    fn secret_missing_from_match_redacts_the_whole_match() {
        let mut f = finding("a", 1, 1);
        f.finding.r#match = "something else entirely".into();
        assert_eq!(
            run(Format::Text, false, vec![vec![f]]),
            "a:1:1  github-pat  some…\n"
        );
    }
}
