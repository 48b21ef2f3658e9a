//! `--format sarif`: a [SARIF 2.1.0] log for GitHub code scanning and other SARIF consumers.
//!
//! Written once, at the end of the scan, pretty-printed, results sorted like `json` (path,
//! line, column, rule id): the same bytes whatever the thread count. The log holds one run:
//!
//! | key | value |
//! | --- | --- |
//! | `$schema` | `https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json` |
//! | `version` | `"2.1.0"` |
//! | `runs[0].tool.driver.name` | `"scanner"` |
//! | `runs[0].tool.driver.informationUri` | the crate's `repository` URL (omitted if the build has none) |
//! | `runs[0].tool.driver.semanticVersion`, `version` | the scanner version, e.g. `"0.1.0"` |
//! | `runs[0].tool.driver.rules[]` | one descriptor per rule that produced at least one result, sorted by id (a clean scan has `[]`): keeps the log small, since the default set has 150+ rules |
//! | `runs[0].invocations[0]` | how the run ended: see [`Invocation`] |
//! | `runs[0].versionControlProvenance[]` | `--history` only: per repository scanned, `repositoryUri` (the `origin` remote without credentials, else the repository's `file:///` URI), `revisionId` (the commit `HEAD` names) and `branch` (`HEAD`'s branch, absent when detached): see [`VersionControl`] |
//! | `runs[0].results[]` | one result per finding |
//!
//! A rule descriptor: `id` (the rule id), `name` (the rule id in PascalCase,
//! `GithubClassicPat`: SARIF wants a single identifier there), `shortDescription.text`
//! (the rule's human name: GitHub's alert title), `fullDescription.text` (the rule description),
//! `help.text` / `help.markdown` (what to do about a leaked secret),
//! `defaultConfiguration.level` `"error"`, and `properties.tags`
//! `["security", "secret", "external/cwe/cwe-798"]` (CWE-798: use of hard-coded credentials).
//!
//! A result:
//!
//! | key | value |
//! | --- | --- |
//! | `ruleId` | the rule id |
//! | `ruleIndex` | index of that rule in `tool.driver.rules` |
//! | `message.text` | `RULE NAME: secret SECRET (fingerprint FP)`, the secret redacted unless `--show-secrets`; `RULE NAME (fingerprint FP)` for a rule on the file path alone |
//! | `locations[0].physicalLocation.artifactLocation.uri` | the path, with `/` separators, `./` dropped and every byte other than `A-Z a-z 0-9 - . _ ~` percent-encoded (so a non-UTF-8 name is exact). A relative path stays relative: run the scan from the repository root (`scanner scan .`) so GitHub can place it. An absolute path becomes a `file:///` URI, and a remote repository's file (`--history URL`) its URL and path (`https://host/x.git/conf/app.env`). |
//! | `...region.startLine`, `startColumn` | 1-based line and column of the first byte |
//! | `...region.endLine`, `endColumn` | line of the last byte, column just past it (SARIF's end column is exclusive, as ours is) |
//! | `level` | `error` for high confidence or a `valid` validation, `warning` for medium, `note` for low |
//! | `rank` | 90, 60 or 30 (high, medium, low confidence) |
//! | `properties.confidence`, `properties.tags`, `properties.decoded` | as in the JSON report (`decoded` only when not empty) |
//! | `properties.validation` | the JSON report's `validation` object (`status`, `reason`, `http_status`, `error`, `checked_at`, `identity`), always |
//! | `properties.commit` | `--history` only: `{"id", "author_name", "author_email", "author_date", "summary"}` of the commit that introduced the finding, as in the JSON report |
//! | `partialFingerprints["secretFingerprint/v1"]` | our `fingerprint` (rule id + secret), so GitHub keeps one alert per leaked secret as code moves |
//!
//! Columns are counted in bytes, as everywhere in scanner; SARIF's default unit is UTF-16 code
//! units. They agree on ASCII lines (nearly all lines that hold a secret); a non-ASCII
//! character before the secret on the same line shifts the highlighted region to the right.
//! Lines are always exact.
//!
//! No snippet of the file is embedded: the log is meant for upload, and a snippet would carry
//! the secret.
//!
//! # Example
//!
//! `scanner scan --format sarif .` on the tree of the [`json`](super::json) example, cut to
//! the GitHub token (whitespace condensed):
//!
//! ```text
//! {
//!   "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
//!   "version": "2.1.0",
//!   "runs": [
//!     {
//!       "tool": {
//!         "driver": {
//!           "name": "scanner",
//!           "semanticVersion": "0.1.0",
//!           "version": "0.1.0",
//!           "rules": [
//!             {
//!               "id": "github-classic-pat",
//!               "name": "GithubClassicPat",
//!               "shortDescription": { "text": "GitHub personal access token (classic)" },
//!               "fullDescription": { "text": "A GitHub classic personal access token acts as its user with the token's scopes: ..." },
//!               "help": { "text": "...", "markdown": "..." },
//!               "defaultConfiguration": { "level": "error" },
//!               "properties": { "tags": ["security", "secret", "external/cwe/cwe-798"] }
//!             }
//!           ]
//!         }
//!       },
//!       "results": [
//!         {
//!           "ruleId": "github-classic-pat",
//!           "ruleIndex": 0,
//!           "level": "error",
//!           "message": { "text": "GitHub personal access token (classic): secret ghp_… (fingerprint 99849e9ab369a30dbd97093e839525e8)" },
//!           "locations": [
//!             {
//!               "physicalLocation": {
//!                 "artifactLocation": { "uri": "config/app.env" },
//!                 "region": { "startLine": 3, "startColumn": 14, "endLine": 3, "endColumn": 54 }
//!               }
//!             }
//!           ],
//!           "partialFingerprints": { "secretFingerprint/v1": "99849e9ab369a30dbd97093e839525e8" }
//!         }
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! [SARIF 2.1.0]: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html

use std::collections::BTreeMap;
use std::io::{self, Write};

use scanner_engine::RuleInfo;
use scanner_engine::{Confidence, ValidationStatus};
use serde::Serialize;

use super::{shown_secret, PathFinding};
use crate::input::VersionControl;
use crate::paths::path_uri;

pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
/// The `partialFingerprints` key: versioned, so a future change of the fingerprint scheme can
/// use a new key instead of silently reopening every alert.
pub const FINGERPRINT_KEY: &str = "secretFingerprint/v1";
const TAGS: [&str; 3] = ["security", "secret", "external/cwe/cwe-798"];

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    invocations: Option<[InvocationSyntax<'a>; 1]>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    version_control_provenance: &'a [VersionControl],
    results: Vec<SarifResult<'a>>,
}

/// How the run ended, written as `runs[0].invocations[0]` so that a SARIF consumer (GitHub code
/// scanning) can tell an incomplete scan from a clean one:
///
/// | key | value |
/// | --- | --- |
/// | `executionSuccessful` | `false` when the exit status is 2 (files that could not be read, archive members left unread, a failed clone: the scan is incomplete), else `true`; findings do not make it `false` |
/// | `exitCode` | the exit status the run ends with: 0, 1 (or `--exit-code`) with findings, 2 |
/// | `toolExecutionNotifications[]` | one per warning about the inputs, sorted by text (the same bytes whatever the thread count), whatever `--log-level` prints: `message.text` is the warning as on stderr without `scanner: warning: ` (`PATH: REASON`), `level` `"error"` for one that made the scan incomplete, `"warning"` for the others; absent when there are none |
///
/// Warnings about the rules or the configuration, said before the scan starts, are not listed.
/// `scanner merge` writes one `"error"` notification per shard that could not read some paths
/// (`shard 2/3: 4 paths could not be read (see that shard's log)`).
pub struct Invocation {
    pub exit_code: u8,
    pub notifications: Vec<crate::report::Warning>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InvocationSyntax<'a> {
    execution_successful: bool,
    exit_code: u8,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification<'a>>,
}

#[derive(Serialize)]
struct Notification<'a> {
    level: &'static str,
    message: Text<&'a str>,
}

impl Invocation {
    fn syntax(&self) -> InvocationSyntax<'_> {
        let mut notifications: Vec<Notification> = self
            .notifications
            .iter()
            .map(|w| Notification {
                level: if w.error { "error" } else { "warning" },
                message: Text { text: &w.text },
            })
            .collect();
        // The workers' warnings arrive in any order: sorted, the log is the same bytes.
        notifications.sort_by(|a, b| a.message.text.cmp(b.message.text));
        InvocationSyntax {
            execution_successful: self.exit_code != crate::EXIT_ERROR,
            exit_code: self.exit_code,
            tool_execution_notifications: notifications,
        }
    }
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<&'static str>,
    semantic_version: &'static str,
    version: &'static str,
    rules: Vec<Descriptor<'a>>,
}

#[derive(Serialize)]
struct Text<T> {
    text: T,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor<'a> {
    id: &'a str,
    name: String,
    short_description: Text<&'a str>,
    full_description: Text<&'a str>,
    help: Help,
    default_configuration: Level,
    properties: Properties,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Level {
    level: &'static str,
}

#[derive(Serialize)]
struct Properties {
    tags: [&'static str; 3],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    message: Text<String>,
    locations: [Location; 1],
    partial_fingerprints: BTreeMap<&'static str, &'a str>,
    /// Triage: a number from the confidence (high 90, medium 60, low 30).
    rank: f32,
    properties: ResultProperties<'a>,
}

#[derive(Serialize)]
struct ResultProperties<'a> {
    confidence: scanner_engine::Confidence,
    tags: &'a [&'static str],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    decoded: Vec<&'static str>,
    /// `--history`: the commit that introduced the finding (the JSON
    /// report's `commit` object).
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<&'a crate::input::CommitInfo>,
    /// The JSON report's `validation` object, always.
    validation: &'a scanner_engine::Validation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    start_column: u32,
    end_line: u32,
    end_column: u32,
}

/// Writes the whole log; `findings` are already in report order.
pub(super) fn write_log(
    out: &mut dyn Write,
    findings: &[PathFinding],
    rules: &[RuleInfo],
    version_control: &[VersionControl],
    invocation: Option<&Invocation>,
    show_secrets: bool,
) -> io::Result<()> {
    // Rules that produced a result, by id; the engine's description when it knows the rule.
    let mut used: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for pf in findings {
        let f = &pf.finding;
        used.entry(&f.rule_id)
            .or_insert((&f.rule_name, &f.rule_name));
    }
    for r in rules {
        if let Some(slot) = used.get_mut(&*r.id) {
            *slot = (
                &r.name,
                if r.description.is_empty() {
                    &r.name
                } else {
                    &r.description
                },
            );
        }
    }
    let index: BTreeMap<&str, usize> = used.keys().enumerate().map(|(i, id)| (*id, i)).collect();
    let descriptors = used
        .iter()
        .map(|(id, (name, description))| Descriptor {
            id,
            name: pascal_case(id),
            short_description: Text { text: name },
            full_description: Text { text: description },
            help: help(description),
            default_configuration: Level { level: "error" },
            properties: Properties { tags: TAGS },
        })
        .collect();
    let results = findings
        .iter()
        .map(|pf| {
            let f = &pf.finding;
            SarifResult {
                rule_id: &f.rule_id,
                rule_index: index[&*f.rule_id],
                // A secret the provider accepted is an error whatever its confidence.
                level: match f.confidence {
                    _ if f.validation.status == ValidationStatus::Valid => "error",
                    Confidence::High => "error",
                    Confidence::Medium => "warning",
                    Confidence::Low => "note",
                },
                message: Text {
                    text: if f.secret.is_empty() {
                        // A rule on the file path alone: there is no secret to show.
                        format!("{} (fingerprint {})", f.rule_name, f.fingerprint)
                    } else {
                        format!(
                            "{}: secret {} (fingerprint {})",
                            f.rule_name,
                            shown_secret(f, show_secrets),
                            f.fingerprint
                        )
                    },
                },
                locations: [Location {
                    physical_location: PhysicalLocation {
                        artifact_location: ArtifactLocation {
                            uri: path_uri(&pf.path),
                        },
                        region: Region {
                            start_line: f.line,
                            start_column: f.column,
                            end_line: f.end_line,
                            end_column: f.end_column,
                        },
                    },
                }],
                partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, &*f.fingerprint)]),
                rank: match f.confidence {
                    Confidence::High => 90.0,
                    Confidence::Medium => 60.0,
                    Confidence::Low => 30.0,
                },
                properties: ResultProperties {
                    confidence: f.confidence,
                    tags: &f.tags,
                    decoded: f.decoded.iter().map(|e| e.as_str()).collect(),
                    commit: pf.commit.as_deref(),
                    validation: &f.validation,
                },
            }
        })
        .collect();
    let repository = env!("CARGO_PKG_REPOSITORY");
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "scanner",
                    information_uri: (!repository.is_empty()).then_some(repository),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    version: env!("CARGO_PKG_VERSION"),
                    rules: descriptors,
                },
            },
            invocations: invocation.map(|i| [i.syntax()]),
            version_control_provenance: version_control,
            results,
        }],
    };
    serde_json::to_writer_pretty(&mut *out, &log).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// SARIF wants `name` to be a "friendly name", a single PascalCase identifier (validators flag
/// anything else, SARIF2012); the human name goes to `shortDescription`.
/// `github-classic-pat` gives `GithubClassicPat`.
fn pascal_case(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for word in id
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

fn help(description: &str) -> Help {
    const ADVICE: &str = "A secret committed to a repository must be treated as leaked: revoke or \
        rotate it with its provider first, then remove it from the code (and from the history if \
        the repository is shared). If this is not a real secret, mark the line with \
        `scanner:allow` or record the finding in a baseline.";
    Help {
        text: format!("{description}\n\n{ADVICE}"),
        markdown: format!("{description}\n\n{ADVICE}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{finding, Shared};
    use super::super::{Format, Sink, SinkOptions};
    use super::*;
    use serde_json::Value;
    use std::sync::Arc;

    fn rule(id: &str, name: &str, description: &str) -> RuleInfo {
        RuleInfo {
            id: Arc::from(id),
            aliases: vec![],
            name: Arc::from(name),
            description: description.into(),
            keywords: vec![],
            origin: "builtin".into(),
            validator: None,
            provider: None,
        }
    }

    fn sarif(batches: Vec<Vec<PathFinding>>, rules: &[RuleInfo]) -> Value {
        let out = Shared::default();
        let mut sink = Sink::new(
            SinkOptions {
                format: Format::Sarif,
                show_secrets: false,
                color: false,
            },
            Box::new(out.clone()),
        );
        for b in batches {
            sink.write_file_findings(b).unwrap();
        }
        sink.finish(rules).unwrap();
        serde_json::from_str(&out.text()).unwrap()
    }

    #[test]
    fn log_has_what_github_requires() {
        let mut other = finding("./src/main.rs", 2, 7);
        other.finding.rule_id = "aws-access-key".into();
        other.finding.rule_name = "AWS Access Key".into();
        let rules = [
            rule("aaa-unused", "Unused", "never matches here"),
            rule(
                "github-pat",
                "GitHub Personal Access Token",
                "A GitHub classic token.",
            ),
        ];
        let v = sarif(
            vec![vec![finding("config/app.env", 3, 14)], vec![other]],
            &rules,
        );
        assert_eq!(v["$schema"], SCHEMA);
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        let driver = &run["tool"]["driver"];
        assert_eq!(driver["name"], "scanner");
        assert_eq!(driver["semanticVersion"], env!("CARGO_PKG_VERSION"));
        let ids: Vec<_> = driver["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].clone())
            .collect();
        assert_eq!(
            ids,
            ["aws-access-key", "github-pat"],
            "only rules with results, by id"
        );
        let gh = &driver["rules"][1];
        assert_eq!(gh["name"], "GithubPat");
        assert_eq!(
            gh["shortDescription"]["text"],
            "GitHub Personal Access Token"
        );
        assert_eq!(gh["fullDescription"]["text"], "A GitHub classic token.");
        assert!(gh["help"]["text"]
            .as_str()
            .unwrap()
            .starts_with("A GitHub classic token.\n\n"));
        assert!(gh["help"]["markdown"].is_string());
        assert_eq!(gh["properties"]["tags"][0], "security");
        // A rule the engine did not describe falls back on the finding's name.
        assert_eq!(
            driver["rules"][0]["fullDescription"]["text"],
            "AWS Access Key"
        );

        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        // Sorted by path: "config/app.env" < "src/main.rs" (the "./" is not part of the key
        // order, it is part of the path; "./" sorts before "c").
        let r = &results[1];
        assert_eq!(r["ruleId"], "github-pat");
        assert_eq!(r["ruleIndex"], 1);
        assert_eq!(r["level"], "error");
        assert_eq!(
            r["message"]["text"],
            "GitHub Personal Access Token: secret ghp_… (fingerprint 0123456789abcdef)"
        );
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "config/app.env");
        let len = "token = \"\"".len() + super::super::tests::token().len();
        assert_eq!(
            loc["region"],
            serde_json::json!({"startLine": 3, "startColumn": 14, "endLine": 3, "endColumn": 14 + len})
        );
        assert_eq!(
            r["partialFingerprints"][FINGERPRINT_KEY],
            "0123456789abcdef"
        );
        assert_eq!(results[0]["ruleIndex"], 0);
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "src/main.rs"
        );
        assert!(!serde_json::to_string(&v)
            .unwrap()
            .contains(&super::super::tests::token()));
    }

    #[test]
    fn path_only_finding_has_no_secret_in_its_message() {
        let mut f = finding("keys/id_rsa", 1, 1);
        f.finding.secret = String::new();
        f.finding.r#match = String::new();
        let v = sarif(vec![vec![f]], &[]);
        assert_eq!(
            v["runs"][0]["results"][0]["message"]["text"],
            "GitHub Personal Access Token (fingerprint 0123456789abcdef)"
        );
    }

    #[test]
    fn clean_scan_is_a_valid_empty_run() {
        let v = sarif(vec![], &[rule("github-pat", "GitHub", "")]);
        assert_eq!(v["runs"][0]["results"], serde_json::json!([]));
        assert_eq!(
            v["runs"][0]["tool"]["driver"]["rules"],
            serde_json::json!([])
        );
    }

    #[test]
    fn rule_names_are_pascal_case_identifiers() {
        assert_eq!(pascal_case("github-classic-pat"), "GithubClassicPat");
        assert_eq!(pascal_case("aws_secret.key-2"), "AwsSecretKey2");
        assert_eq!(pascal_case("x"), "X");
    }
}
