//! Detection engine for scanner: rules, matching and findings. Knows nothing
//! about threads or directory walking.
//!
//! (Handbook: see the sections below.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

mod engine;
mod gates;
mod re2;
mod syntax;

pub use engine::{Engine, EngineBuilder, RuleOverride, DEFAULT_MAX_LEN, MAX_MATCH_TEXT};
pub use gates::{fingerprint, is_placeholder, shannon_entropy, PLACEHOLDER_WORDS};
pub use syntax::RuleFile;

/// The built-in rule files, embedded at compile time: (file name, text).
pub(crate) const BUILTIN_FILES: &[(&str, &str)] = &[
    ("ai.toml", include_str!("../rules/ai.toml")),
    (
        "ci-registries.toml",
        include_str!("../rules/ci-registries.toml"),
    ),
    ("cloud.toml", include_str!("../rules/cloud.toml")),
    ("databases.toml", include_str!("../rules/databases.toml")),
    ("generic.toml", include_str!("../rules/generic.toml")),
    ("jwt.toml", include_str!("../rules/jwt.toml")),
    ("messaging.toml", include_str!("../rules/messaging.toml")),
    (
        "observability.toml",
        include_str!("../rules/observability.toml"),
    ),
    ("payments.toml", include_str!("../rules/payments.toml")),
    (
        "private-keys.toml",
        include_str!("../rules/private-keys.toml"),
    ),
    ("saas.toml", include_str!("../rules/saas.toml")),
    (
        "secret-stores.toml",
        include_str!("../rules/secret-stores.toml"),
    ),
    (
        "source-hosting.toml",
        include_str!("../rules/source-hosting.toml"),
    ),
];

/// An error loading, parsing or compiling rules. It names the file and,
/// where there is one, the rule; `Display` prints
/// `<file>: rule `<id>`: <message>`, and the message says where in the file
/// (line) or in the regex (position) the fault is.
#[derive(Debug)]
pub struct Error {
    pub file: Option<PathBuf>,
    pub rule: Option<String>,
    pub message: String,
}

impl Error {
    pub(crate) fn new(file: Option<PathBuf>, rule: Option<String>, message: String) -> Error {
        Error {
            file,
            rule,
            message,
        }
    }
    /// The rule file at fault (`builtin:<name>.toml` for built-in files);
    /// `None` for user configuration.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }
    /// The rule at fault, if the error concerns one rule.
    pub fn rule(&self) -> Option<&str> {
        self.rule.as_deref()
    }
    /// The fault itself, without file and rule.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{}: ", file.display())?,
            None => write!(f, "configuration: ")?,
        }
        if let Some(rule) = &self.rule {
            write!(f, "rule `{rule}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Error {}

/// A warning raised while building (a rule without keywords, an unknown
/// key, an unknown id to disable).
#[derive(Clone, Debug)]
pub struct Warning {
    pub rule: Option<String>,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Public description of one compiled rule.
#[derive(Clone, Debug)]
pub struct RuleInfo {
    pub id: Arc<str>,
    /// `name`, else `description`, else `id`.
    pub name: Arc<str>,
    pub description: String,
    /// Lowercase.
    pub keywords: Vec<String>,
    /// The file the rule came from (`builtin:<name>.toml` or a path).
    pub origin: String,
}

/// Line and column (1-based, columns in bytes) of `data[0]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinePos {
    pub line: u32,
    pub column: u32,
}

impl LinePos {
    pub const START: LinePos = LinePos { line: 1, column: 1 };

    /// The position just after `bytes`, if `self` is the position of
    /// `bytes[0]`. Lines end at `\n` (so `\r\n` counts once); use it to
    /// carry the position from one chunk to the next over its owned bytes:
    /// `next.start = this.start.advance(&data[..owned_len])`.
    pub fn advance(self, bytes: &[u8]) -> LinePos {
        match memchr::memrchr(b'\n', bytes) {
            None => LinePos {
                line: self.line,
                column: self.column.saturating_add(bytes.len() as u32),
            },
            Some(last) => {
                let newlines = memchr::memchr_iter(b'\n', bytes).count() as u32;
                LinePos {
                    line: self.line.saturating_add(newlines),
                    column: (bytes.len() - last) as u32,
                }
            }
        }
    }
}

/// One buffer to scan: a whole file, or one chunk of a file.
///
/// For a whole file: `base_offset = 0`, `owned_len = data.len()`,
/// `start = LinePos::START`. For chunks, see [`Engine::max_match_len`] and
/// the "Chunks" section of the crate docs.
pub struct ScanInput<'a> {
    /// The bytes: the owned part of the chunk followed by the overlap.
    pub data: &'a [u8],
    /// The path, for path-scoped rules and allowlists (as the user sees it).
    pub path: &'a str,
    /// File offset of `data[0]`.
    pub base_offset: u64,
    /// Matches that start at `data[owned_len..]` belong to the next chunk
    /// (shifted by the engine's lead; see the crate docs, "Chunks").
    pub owned_len: usize,
    /// Position of `data[0]`.
    pub start: LinePos,
}

/// Per-worker scratch: regex caches (created per rule on its first use),
/// window and candidate vectors. Reuse it from file to file; once warm, a
/// scan allocates nothing but the findings it returns.
#[derive(Default)]
pub struct ScanScratch {
    engine: u64,
    caches: Vec<Option<regex_automata::meta::Cache>>,
    captures: Vec<Option<regex_automata::util::captures::Captures>>,
    /// Per rule: the window being merged, `(0, 0)` when none.
    open: Vec<(usize, usize)>,
    /// Rules with an open window.
    touched: Vec<u32>,
    /// Closed windows: (rule, start, end).
    windows: Vec<(u32, usize, usize)>,
    rule_on: Vec<bool>,
    candidates: Vec<engine::Candidate>,
    suppressed: Suppressed,
}

impl std::fmt::Debug for ScanScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanScratch")
            .field("suppressed", &self.suppressed)
            .finish_non_exhaustive()
    }
}

impl ScanScratch {
    /// Returns the counts since the last call and resets them.
    pub fn take_suppressed(&mut self) -> Suppressed {
        std::mem::take(&mut self.suppressed)
    }
}

/// One finding. The path is added by the caller.
///
/// Positions are those of the secret (the bytes to rotate), half-open:
/// `offset..end_offset`, and `(line, column)` to `(end_line, end_column)`
/// where the end is the position just after the last byte.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub rule_id: Arc<str>,
    pub rule_name: Arc<str>,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub offset: u64,
    pub end_offset: u64,
    /// The whole regex match (context included), cut to
    /// [`MAX_MATCH_TEXT`] bytes, lossily decoded as UTF-8.
    pub r#match: String,
    /// The secret, lossily decoded as UTF-8.
    pub secret: String,
    /// Shannon entropy of the secret, bits per byte.
    pub entropy: f32,
    /// Depends on rule id and secret only: see [`fingerprint`].
    pub fingerprint: String,
}

/// A rule example that did not behave.
#[derive(Clone, Debug)]
pub struct ExampleFailure {
    pub rule_id: String,
    pub example: String,
    /// True for a negative example that produced a finding.
    pub negative: bool,
    /// What went wrong (which gate dropped the match, what matched...).
    pub reason: String,
}

impl std::fmt::Display for ExampleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.negative {
            "negative example matched"
        } else {
            "example not found"
        };
        write!(
            f,
            "rule `{}`: {kind}: {}\n    example: {}",
            self.rule_id, self.reason, self.example
        )
    }
}

/// Candidate findings that were dropped, by reason (summed per worker,
/// reported in the summary so that nothing is hidden silently).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Suppressed {
    /// `scanner:allow` / `gitleaks:allow` on the line.
    pub inline_allow: u64,
    /// A rule's `[[rules.allowlists]]` or the global `[allowlist]`.
    pub allowlist: u64,
    /// A stopword in the secret.
    pub stopword: u64,
    /// A placeholder (`EXAMPLE`, `xxxx`, `${VAR}`, `changeme`, ...).
    pub placeholder: u64,
    /// User config `allow_secrets`.
    pub config_allow: u64,
}

impl Suppressed {
    /// Adds `other` into `self` (to sum per-worker counts).
    pub fn merge(&mut self, other: &Suppressed) {
        self.inline_allow += other.inline_allow;
        self.allowlist += other.allowlist;
        self.stopword += other.stopword;
        self.placeholder += other.placeholder;
        self.config_allow += other.config_allow;
    }
}
