//! Detection engine for scanner: rules, matching and findings. Knows nothing
//! about threads or directory walking: give it bytes, get findings.
//!
//! # Where to start
//!
//! * [`RuleFile`]: a parsed rule file (gitleaks-compatible TOML; the format is
//!   in `docs/rules.md`). [`RuleFile::builtin`] gives the embedded default
//!   rules, [`RuleFile::load`] a user file.
//! * [`EngineBuilder`]: rule files plus user configuration
//!   ([`disable`](EngineBuilder::disable),
//!   [`allow_secrets`](EngineBuilder::allow_secrets),
//!   [`override_rule`](EngineBuilder::override_rule)) into an [`Engine`], with
//!   [`Warning`]s (a rule without keywords, an unknown key).
//! * [`Engine`]: compiled, read-only, `Send + Sync`; share one behind an `Arc`.
//!   [`Engine::scan`] appends [`Finding`]s for one [`ScanInput`].
//! * [`ScanScratch`]: per worker, from [`Engine::new_scratch`]; holds the
//!   regex caches and vectors, and the [`Suppressed`] counts.
//!
//! # Example
//!
//! ```
//! use scanner_engine::{EngineBuilder, LinePos, RuleFile, ScanInput};
//!
//! let rules = RuleFile::parse(r#"
//! [[rules]]
//! id = "tok"
//! regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
//! keywords = ["tok_"]
//! "#, "example.toml")?;
//! let (engine, warnings) = EngineBuilder::new().add(rules).build()?;
//! assert!(warnings.is_empty());
//!
//! let data = b"x = 1\r\nkey = tok_q8Rk2vXz1LmN4pT7wY0a\n";
//! let mut scratch = engine.new_scratch();
//! let mut findings = Vec::new();
//! let input = ScanInput {
//!     data,
//!     path: "src/a.rs",
//!     base_offset: 0,
//!     owned_len: data.len(),
//!     start: LinePos::START,
//! };
//! engine.scan(&input, &mut scratch, &mut findings);
//! assert_eq!((findings[0].line, findings[0].column), (2, 7));
//! assert_eq!(findings[0].secret, "tok_q8Rk2vXz1LmN4pT7wY0a");
//! # Ok::<(), scanner_engine::Error>(())
//! ```
//!
//! # Chunks
//!
//! A large file can be scanned in chunks: a chunk is
//! `data = file[b .. b + owned_len + overlap]` with
//! `overlap >= Engine::max_match_len()` (less only at the end of the file)
//! and `base_offset = b`; the next chunk starts at `b + owned_len`, with
//! `start = this.start.advance(&data[..owned_len])` ([`LinePos::advance`]).
//! Consecutive chunks then report exactly what one scan of the whole file
//! reports, each finding once. The engine moves the ownership boundary
//! `2 LEAD` bytes (the largest `max_len`) into the overlap so that every match
//! it reports, and every provider match a generic finding may duplicate,
//! has real bytes before it (for `\b`, for an inline marker); the partition
//! stays exact. The argument is in `src/engine.rs`.
//!
//! # Duplicates
//!
//! A rule marked `generic = true` (the built-in `generic-*` rules) catches
//! what no provider rule knows. When its secret overlaps the secret of a
//! provider rule's finding in the same buffer, the generic finding is
//! dropped and counted as [`Suppressed::duplicate`].
//!
//! Before that, a generic candidate that passed the other gates is
//! confirmed from the code around it (`src/generic/`): an unquoted value in
//! source code, a type or reference, an encoded value or a name made of
//! vocabulary words is dropped and counted ([`Suppressed::code_value`],
//! [`Suppressed::identifier_like`], [`Suppressed::encoded`]).
//!
//! # Confidence
//!
//! Every [`Finding`] carries a [`Confidence`] and tags saying why: a fixed
//! vendor prefix or a valid checksum (`checksum = "github-crc32"`...,
//! verified offline) is high, a generic value medium, a failed checksum
//! low; a test, example or documentation path lowers it one step. Nothing
//! is dropped for its confidence (`docs/rules.md`, "Confidence and tags").
//!
//! # Performance
//!
//! Stage 1 is one case-insensitive Aho-Corasick DFA over all keywords;
//! stage 2 runs only the rules owning a keyword hit, on merged windows of
//! `max_len` around it (see `docs/rules.md`). Measured on a shared 2-core
//! machine (noisy), built-in set of 257 rules:
//!
//! * Startup (parse + build of the built-in set), `benches/startup.rs`:
//!   about 12 ms (TOML parse 7 ms, keyword DFA 3 ms). Compiling every regex
//!   up front takes about 90 ms, so regexes, allowlists and path scopes
//!   compile on first use ([`EngineBuilder::eager`] forces it).
//! * Throughput, `benches/scan.rs` on 105 MB of generated source, config
//!   and lock files (3229 files, 5.1 keyword hits per KB), single thread:
//!   engine 143 MiB/s, Aho-Corasick-only pass with the same keywords
//!   264 MiB/s (criterion medians, ratio 0.54; interleaved best-of-5 in the
//!   same run: 177 vs 304 MB/s, ratio 0.58). Running every rule's regex
//!   over every byte: 20 MiB/s, 7x slower than the engine on the same
//!   2 MiB slice. Most of the engine's cost was the regex scanning
//!   `max_len` bytes before each isolated hit; the lead is now inferred
//!   from each regex (`src/lead.rs`: 224 of 257 rules start their match at
//!   most 16 bytes before a keyword), which moved the interleaved ratio on
//!   32 MB from 0.56 to 0.60-0.63; in the same run, the engine without the
//!   inference is 7-8% slower (212 vs 196 MB/s, 236 vs 219 MB/s).
//!
//! Memory: per worker, one lazy-DFA cache per rule that ever had a keyword
//! hit (regex-automata's default capacity bounds each), created on first use
//! and reused: no allocation per file once warm, except the findings.
//!
//! # Failure modes
//!
//! * A bad rule file: [`Error`] names the file, the rule and the fault (TOML
//!   line, regex position, missing field, duplicate id). Built-in files are
//!   trusted (the test suite validates them) and their regexes parsed lazily.
//! * A regex that cannot compile at first use (a size limit) makes its rule
//!   match nothing; [`Engine::compile_all`] and [`Engine::check_examples`]
//!   report it.
//! * A keyword farther than `max_len` from the match, or a match longer than
//!   `max_len`: not found; `check_examples` says which.
//! * Invalid UTF-8 is fine: regexes are byte-oriented; secret and match are
//!   decoded lossily in findings (the fingerprint hashes the raw bytes).

use std::path::{Path, PathBuf};
use std::sync::Arc;

mod confidence;
mod engine;
mod gates;
mod generic;
mod lead;
mod re2;
mod syntax;

pub use confidence::{base62_6, crc32, Confidence};
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
    (
        "credential-files.toml",
        include_str!("../rules/credential-files.toml"),
    ),
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
/// ``<file>: rule `<id>`: <message>``, and the message says where in the file
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
    /// Secrets of the surviving provider (non-`generic`) candidates.
    provider_secrets: Vec<regex_automata::Span>,
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
    /// Triage level: see `src/confidence.rs` and `docs/rules.md`.
    pub confidence: Confidence,
    /// Why the confidence is what it is: `generic`, `prefix`,
    /// `checksum-valid`, `checksum-invalid`, `test-path`, `doc-path`,
    /// `published-example`.
    pub tags: Vec<&'static str>,
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
    /// A `generic = true` rule's finding whose secret overlaps the secret
    /// of a provider rule's finding in the same buffer (one finding per
    /// secret, under the provider's id).
    pub duplicate: u64,
    /// A generic rule's value that is code: an unquoted expression in
    /// source code, a type, a reference, the gap between two literals.
    pub code_value: u64,
    /// A generic rule's value that is a name made of words
    /// (`SensitiveString2048`, `x25519_generate_private_key`).
    pub identifier_like: u64,
    /// A generic rule's value that is percent-encoded or HTML-escaped.
    pub encoded: u64,
}

impl Suppressed {
    /// Adds `other` into `self` (to sum per-worker counts).
    pub fn merge(&mut self, other: &Suppressed) {
        self.inline_allow += other.inline_allow;
        self.allowlist += other.allowlist;
        self.stopword += other.stopword;
        self.placeholder += other.placeholder;
        self.config_allow += other.config_allow;
        self.duplicate += other.duplicate;
        self.code_value += other.code_value;
        self.identifier_like += other.identifier_like;
        self.encoded += other.encoded;
    }

    /// Every count with the label the summary prints for it, in a fixed
    /// order: callers list reasons from here, so a new one cannot be missed.
    pub fn by_reason(&self) -> [(&'static str, u64); 9] {
        [
            ("inline allow", self.inline_allow),
            ("allowlist", self.allowlist),
            ("stopword", self.stopword),
            ("placeholder", self.placeholder),
            ("config allow_secrets", self.config_allow),
            ("duplicate of a provider finding", self.duplicate),
            ("code value", self.code_value),
            ("identifier-like", self.identifier_like),
            ("encoded value", self.encoded),
        ]
    }
}
