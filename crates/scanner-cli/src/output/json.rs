//! `--format json` and `--format jsonl`: findings as JSON objects.
//!
//! Both formats write the same finding object; they differ only in framing:
//!
//! * **`json`** writes one array holding every finding, once the scan is over, sorted by path
//!   (raw bytes), line, column and rule id (then end offset and fingerprint, to make the order
//!   total). The bytes are the same whatever `--threads` is. The array has one finding per
//!   line (`[`, then each object on its own line followed by `,` except the last, then `]`),
//!   which keeps the file readable, grep-able and diff-able; an empty report is `[]`.
//!   Every report ends with a newline.
//! * **`jsonl`** ([JSON Lines](https://jsonlines.org/)) writes one object per line, each file's
//!   findings as soon as that file is scanned (flushed per file), so a consumer can act on the
//!   first finding while the scan goes on. Files appear in completion order, which varies from
//!   run to run; within a file, findings are in position order. No finding: no output at all.
//!
//! # The finding object
//!
//! Keys always appear, always in this order:
//!
//! | key | type | meaning |
//! | --- | --- | --- |
//! | `rule_id` | string | Stable id of the rule that matched (`scanner rules list`). |
//! | `rule_name` | string | Human name of the rule. |
//! | `path` | string | The file, as reached from the PATH argument (`scanner scan src` gives `src/...`; an absolute argument gives absolute paths), or repo-relative for `--staged`. Lossy UTF-8: an invalid byte becomes U+FFFD. |
//! | `path_bytes` | string or null | `null` when the path is valid UTF-8 (then `path` is exact). Otherwise standard base64 (RFC 4648, with padding) of the raw path bytes: decode it to open the file. On Windows the bytes are WTF-8. |
//! | `line` | integer | 1-based line of the first byte of the secret. `\n` ends a line (so CRLF files count right). |
//! | `column` | integer | 1-based column of the first byte of the secret, counted in **bytes** from the start of the line. |
//! | `end_line` | integer | Line of the position just past the secret (equal to `line` unless the secret spans lines, as a private key does). |
//! | `end_column` | integer | Byte column of the position just **past** the secret (exclusive, like `end_offset`). |
//! | `offset` | integer | 0-based byte offset of the secret in the file. |
//! | `end_offset` | integer | Byte offset just past the secret (exclusive): the secret is `file[offset..end_offset]`. |
//! | `match` | string | The whole text the rule matched, context included (`token = "..."`), cut by the engine to a bounded length, with the secret, and any other secret found in the same file, redacted unless `--show-secrets`. |
//! | `secret` | string | The secret (the rule's secret group within the match), redacted unless `--show-secrets`. Empty for a rule that matches on the path alone. |
//! | `entropy` | number | Shannon entropy of the secret in bits per byte. |
//! | `fingerprint` | string | Stable identity of the finding: depends on the rule id and the secret only, not on the path or line, so it survives code moving around. Always present, never redacted. |
//! | `confidence` | string | `high`, `medium` or `low`, for triage: a provider rule with a fixed prefix or a valid checksum is `high`, a generic value `medium`, a failed checksum `low`; a test, fixture, example or documentation path, a Rust unit-test module, or a vendor's published example value, makes it `low` (see `docs/rules.md`). `--min-confidence` filters on it. |
//! | `tags` | array of strings | Why the confidence is what it is: `prefix`, `generic`, `checksum-valid`, `checksum-invalid`, `test-path`, `doc-path`, `test-code`, `published-example`, `shape-mismatch:RULE_ID`. |
//! | `decoded` | array of strings | Empty for a secret in plain text. Otherwise how it was found, outermost first: `base64`, `base64url`, `hex`, `percent`, `string-literals` (see `docs/decoding.md`); the position is then that of the whole encoded run. |
//! | `commit` | object or null | `null` for a working tree, the index or a stream. With `--history`, the commit that introduced the blob at `path` (the earliest in topological order): `{"id": full 40-hex id, "author_name", "author_email", "author_date": RFC 3339, "summary": the subject line}`, every copy in them of a secret found in that commit redacted as in `match` (`jsonl`: of the files written so far, this one's included). `path` is then the path in that commit, and positions are in that blob. |
//! | `validation` | object | Whether the secret works: see below. Always present. |
//!
//! # The validation object
//!
//! Keys always appear, in this order. Written by the engine's offline evidence
//! (`scanner_engine::Validation`, for every finding) and replaced by a live check under
//! `scanner scan --validate` (see `docs/validation.md`). It never holds the secret.
//!
//! | key | type | meaning |
//! | --- | --- | --- |
//! | `status` | string | `valid` (the provider accepted the secret), `invalid` (the provider refused it), `offline_valid` (a checksum in the token matches: the vendor's format, not proven live), `offline_invalid` (it cannot work: failed checksum, expired JWT, malformed macaroon; never sent), `unknown` (a check was made and could not decide: network error, timeout, 5xx, 429 or a rate-limit 403 three times, an answer no matcher knew) or `not_checked` (no validator for the rule, validation off, no offline evidence). |
//! | `reason` | string or null | Why, in a few words: `CRC-32 checksum matches`, `JWT expired 2024-05-01T10:00:00Z`, `HTTP 401`, `validation off`. |
//! | `http_status` | integer or null | The provider's HTTP status, for a live check that got an answer. |
//! | `error` | string or null | The error of a live check that got no answer (`timed out`, `connection refused`, `host resolves to a private address`), the secret stripped from it. |
//! | `checked_at` | string or null | When the live check was made, RFC 3339 UTC (`2026-11-26T13:05:00Z`); `null` for offline evidence. |
//! | `identity` | object | String values, keys sorted; empty when nothing is known. Never the secret. From a `valid` live check: what the provider says the key is, only non-secret fields (`login`, `name`, `scopes`, `org`, `account`...). Offline: `account` (the AWS account an `AKIA`/`ASIA` key id encodes), `issuer` and `expires` (a JWT's `iss` and `exp`), `caveats` (a PyPI token's restrictions). |
//!
//! Positions (`line`, `column`, `offset` and their ends) are those of the secret, the bytes to
//! rotate, not of the whole match. `match` and `secret` are the file's bytes decoded as UTF-8
//! by the engine (an invalid byte becomes U+FFFD); `offset..end_offset` is exact.
//!
//! # Redaction
//!
//! Redaction is the default in every format, JSON included: a JSON report is the kind of file
//! that gets uploaded as a CI artifact. A redacted secret keeps its first characters (at most
//! 4, at most a third of its length) followed by `…` (U+2026); in `match` every copy of the
//! secret is replaced by that redacted form (and if the secret cannot be found in the match,
//! the whole match is redacted). `--show-secrets` writes both whole. Use `fingerprint` to
//! compare or deduplicate findings without the secret.
//!
//! # Example
//!
//! `scanner scan --format json .` in a tree whose `config/app.env` holds a GitHub token on its
//! third line and whose `src/db.py` holds a PostgreSQL URL with a password:
//!
//! ```text
//! [
//! {"rule_id":"github-classic-pat","rule_name":"GitHub personal access token (classic)","path":"./config/app.env","path_bytes":null,"line":3,"column":14,"end_line":3,"end_column":54,"offset":34,"end_offset":74,"match":"ghp_…","secret":"ghp_…","entropy":4.734184,"fingerprint":"99849e9ab369a30dbd97093e839525e8"},
//! {"rule_id":"postgres-connection-url","rule_name":"PostgreSQL connection URL with password","path":"./src/db.py","path_bytes":null,"line":3,"column":23,"end_line":3,"end_column":43,"offset":33,"end_offset":53,"match":"postgres://app:DaqW…@db.internal","secret":"DaqW…","entropy":4.0219283,"fingerprint":"7d3312ec390c3a412189f17d4a222a97"}
//! ]
//! ```
//!
//! The same token in a file named `caf\xE9.env` (Latin-1, not UTF-8) under `config/` has
//! `"path":"./config/caf�.env"` (U+FFFD) and `"path_bytes":"Li9jb25maWcvY2Fm6S5lbnY="`.
//!
//! With `--format jsonl` the same object is written alone on its line.

use std::borrow::Cow;
use std::io::{self, Write};

use base64::Engine as _;
use serde::Serialize;

use super::{shown_match, shown_secret, PathFinding};

/// The wire form of one finding: field order here is the key order on the wire. `html`
/// embeds the same object, so a field added here reaches its page too.
#[derive(Serialize)]
pub(super) struct FindingObject<'a> {
    rule_id: &'a str,
    rule_name: &'a str,
    path: Cow<'a, str>,
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
    fingerprint: &'a str,
    confidence: scanner_engine::Confidence,
    tags: &'a [&'static str],
    decoded: Vec<&'static str>,
    commit: Option<&'a crate::input::CommitInfo>,
    validation: &'a scanner_engine::Validation,
}

impl<'a> FindingObject<'a> {
    pub(super) fn new(pf: &'a PathFinding, show_secrets: bool) -> FindingObject<'a> {
        let f = &pf.finding;
        let path = pf.path.to_string_lossy();
        let path_bytes = match path {
            Cow::Borrowed(_) => None,
            Cow::Owned(_) => {
                Some(base64::engine::general_purpose::STANDARD.encode(pf.path_bytes()))
            }
        };
        FindingObject {
            rule_id: &f.rule_id,
            rule_name: &f.rule_name,
            path,
            path_bytes,
            line: f.line,
            column: f.column,
            end_line: f.end_line,
            end_column: f.end_column,
            offset: f.offset,
            end_offset: f.end_offset,
            matched: shown_match(f, show_secrets),
            secret: shown_secret(f, show_secrets),
            entropy: f.entropy,
            fingerprint: &f.fingerprint,
            confidence: f.confidence,
            tags: &f.tags,
            decoded: f.decoded.iter().map(|e| e.as_str()).collect(),
            commit: pf.commit.as_deref(),
            validation: &f.validation,
        }
    }
}

/// Appends one finding object (no trailing newline) to `out`.
pub(super) fn write_object(
    out: &mut Vec<u8>,
    f: &PathFinding,
    show_secrets: bool,
) -> io::Result<()> {
    serde_json::to_writer(out, &FindingObject::new(f, show_secrets)).map_err(io::Error::from)
}

/// Writes the whole `json` report; `findings` are already in report order.
pub(super) fn write_array(
    out: &mut dyn Write,
    findings: &[PathFinding],
    show_secrets: bool,
) -> io::Result<()> {
    if findings.is_empty() {
        return out.write_all(b"[]\n");
    }
    let mut buf = Vec::with_capacity(1024);
    out.write_all(b"[\n")?;
    for (i, f) in findings.iter().enumerate() {
        buf.clear();
        write_object(&mut buf, f, show_secrets)?;
        if i + 1 < findings.len() {
            buf.push(b',');
        }
        buf.push(b'\n');
        out.write_all(&buf)?;
    }
    out.write_all(b"]\n")
}

#[cfg(test)]
mod tests {
    use super::super::tests::{finding, run, token};
    use super::super::Format;
    use serde::Deserialize;

    /// Mirror of the wire format: an added, renamed or missing key fails the test.
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
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
        confidence: String,
        tags: Vec<String>,
        decoded: Vec<String>,
        commit: Option<serde_json::Value>,
        validation: serde_json::Value,
    }

    #[test]
    fn json_array_is_sorted_and_every_field_is_right() {
        let out = run(
            Format::Json,
            false,
            vec![
                vec![finding("b.env", 1, 1)],
                vec![
                    finding("a.env", 7, 3),
                    finding("a.env", 2, 9),
                    finding("a.env", 2, 5),
                ],
            ],
        );
        assert!(out.starts_with("[\n{\"rule_id\":"), "{out}");
        assert!(out.ends_with("}\n]\n"), "{out}");
        assert_eq!(out.lines().count(), 6);
        let v: Vec<Wire> = serde_json::from_str(&out).unwrap();
        let order: Vec<_> = v
            .iter()
            .map(|w| (w.path.as_str(), w.line, w.column))
            .collect();
        assert_eq!(
            order,
            [
                ("a.env", 2, 5),
                ("a.env", 2, 9),
                ("a.env", 7, 3),
                ("b.env", 1, 1)
            ]
        );
        let m = "token = \"".len() as u32 + token().len() as u32 + 1;
        assert_eq!(
            v[0],
            Wire {
                rule_id: "github-pat".into(),
                rule_name: "GitHub Personal Access Token".into(),
                path: "a.env".into(),
                path_bytes: None,
                line: 2,
                column: 5,
                end_line: 2,
                end_column: 5 + m,
                offset: 204,
                end_offset: 204 + u64::from(m),
                matched: "token = \"ghp_…\"".into(),
                secret: "ghp_…".into(),
                entropy: 4.75,
                fingerprint: "0123456789abcdef".into(),
                confidence: "high".into(),
                tags: vec!["prefix".into()],
                decoded: vec![],
                commit: None,
                validation: serde_json::json!({
                    "status": "not_checked",
                    "reason": null,
                    "http_status": null,
                    "error": null,
                    "checked_at": null,
                    "identity": {},
                }),
            }
        );
        // Key order on the wire is part of the format.
        let keys: Vec<_> = out
            .lines()
            .nth(1)
            .unwrap()
            .match_indices("\":")
            .map(|(i, _)| i)
            .collect();
        // 19 keys, then the 6 of `validation`.
        assert_eq!(keys.len(), 19 + 6);
        let line = out.lines().nth(1).unwrap();
        let mut last = 0;
        for k in [
            "rule_id",
            "rule_name",
            "path",
            "path_bytes",
            "line",
            "column",
            "end_line",
            "end_column",
            "offset",
            "end_offset",
            "match",
            "secret",
            "entropy",
            "fingerprint",
            "confidence",
            "tags",
            "decoded",
            "commit",
            "validation",
            "status",
            "reason",
            "http_status",
            "error",
            "checked_at",
            "identity",
        ] {
            let at = line.find(&format!("\"{k}\":")).unwrap();
            assert!(at >= last, "{k} out of order in {line}");
            last = at;
        }
    }

    #[test]
    fn json_is_the_same_bytes_whatever_the_batch_order() {
        let a = vec![finding("x/a", 3, 1), finding("x/a", 1, 1)];
        let b = vec![finding("x/b", 1, 1)];
        let c = vec![finding("x", 9, 9)];
        let one = run(Format::Json, false, vec![a.clone(), b.clone(), c.clone()]);
        let two = run(Format::Json, false, vec![c, b, a]);
        assert_eq!(one, two);
    }

    #[test]
    fn empty_json_report_is_an_empty_array_and_jsonl_is_empty() {
        assert_eq!(run(Format::Json, false, vec![]), "[]\n");
        assert_eq!(run(Format::Jsonl, false, vec![vec![]]), "");
    }

    #[test]
    fn show_secrets_writes_them_whole() {
        let out = run(Format::Jsonl, true, vec![vec![finding("a", 1, 1)]]);
        let w: Wire = serde_json::from_str(out.trim_end()).unwrap();
        assert_eq!(w.secret, token());
        assert_eq!(w.matched, format!("token = \"{}\"", token()));
        assert_eq!(w.fingerprint, "0123456789abcdef");
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_path_round_trips_through_path_bytes() {
        use base64::Engine as _;
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let raw = b"repo/caf\xE9.env";
        let mut f = finding("x", 1, 1);
        f.path = OsStr::from_bytes(raw).into();
        let out = run(Format::Jsonl, false, vec![vec![f]]);
        let w: Wire = serde_json::from_str(out.trim_end()).unwrap();
        assert_eq!(w.path, "repo/caf\u{FFFD}.env");
        assert_eq!(w.path_bytes.as_deref(), Some("cmVwby9jYWbpLmVudg=="));
        let back = base64::engine::general_purpose::STANDARD
            .decode(w.path_bytes.unwrap())
            .unwrap();
        assert_eq!(back, raw);
    }
}
