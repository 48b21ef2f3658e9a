//! Detection engine for scanner: rules, matching and findings. Knows nothing
//! about threads or directory walking: give it bytes, get findings.
//!
//! # Where to start
//!
//! * [`RuleFile`]: a parsed rule file (gitleaks-compatible TOML; the format is
//!   in `docs/rules.md`). [`RuleFile::builtin`] gives the embedded default
//!   rules, [`RuleFile::load`] a user file, [`RuleFile::load_with_extends`]
//!   a user file and the files its `[extend] path` names.
//! * [`EngineBuilder`]: rule files plus user configuration
//!   ([`disable`](EngineBuilder::disable),
//!   [`allow_secrets`](EngineBuilder::allow_secrets),
//!   [`override_rule`](EngineBuilder::override_rule), each taking rule ids
//!   or their aliases) into an [`Engine`], with [`Warning`]s (a rule
//!   without keywords, an unknown key, a user rule replacing a built-in).
//! * [`Engine`]: compiled, read-only, `Send + Sync`; share one behind an `Arc`.
//!   [`Engine::scan`] appends [`Finding`]s for one [`ScanInput`].
//! * [`ScanScratch`]: per worker, from [`Engine::new_scratch`]; holds the
//!   capture slots and vectors, and the [`Suppressed`] counts. The regex
//!   caches are the regexes' own pools, shared by the workers, so their
//!   memory follows the cores in use rather than the thread count.
//! * [`text`]: UTF-16 detection and a streaming transcoder to UTF-8, for
//!   the file reader to wrap around files before scanning.
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
//! `overlap >= Engine::chunk_overlap()` (less only at the end of the file)
//! and `base_offset = b`; the next chunk starts at `b + owned_len`, with
//! `start = this.start.advance(&data[..owned_len])` ([`LinePos::advance`]).
//! Consecutive chunks then report exactly what one scan of the whole file
//! reports, each finding once. The engine moves the ownership boundary
//! `2 LEAD` bytes (the longest window) into the overlap so that every match
//! it reports, and every provider match a generic finding may duplicate,
//! has real bytes before it (for `\b`, for an inline marker); the partition
//! stays exact. The argument is in `src/engine.rs`.
//!
//! # Decoding
//!
//! [`Engine::scan`] also finds secrets the rules cannot see as written
//! (`docs/decoding.md` has the details and the limits):
//!
//! * Encoded text: runs of base64 (standard or URL-safe), hex or
//!   percent-encoding that decode to at least 16 bytes of printable text are
//!   decoded and scanned again with the same engine, up to
//!   [`EngineBuilder::decode_depth`] layers (default
//!   [`DEFAULT_DECODE_DEPTH`] = 2; 0 turns it off). Candidates come from one
//!   byte-class pass; nothing else is decoded.
//! * Split string literals: a `-----BEGIN` right after a quote starts a
//!   reassembly of adjacent literals (C, Python, Go/Java `+`), unescaped
//!   and scanned for private keys. Always on.
//!
//! Such a finding has the secret's own fingerprint, lists how it was found
//! in [`Finding::decoded`] (outermost first), and takes as its position the
//! **whole encoded run** (or, for literals, from `-----BEGIN` to the last
//! closing quote) in the scanned buffer. With chunks, it belongs to the
//! chunk that owns the run's first byte; runs are decoded over at most
//! `2 LEAD` bytes so that every chunk sees what a whole scan sees.
//!
//! ```
//! use scanner_engine::{Encoding, EngineBuilder, LinePos, RuleFile, ScanInput};
//!
//! let rules = RuleFile::parse(r#"
//! [[rules]]
//! id = "tok"
//! regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
//! keywords = ["tok_"]
//! "#, "example.toml")?;
//! let (engine, _) = EngineBuilder::new().add(rules).build()?;
//! // base64 of "auth: tok_q8Rk2vXz1LmN4pT7wY0a\n"
//! let data = b"x = 1\nblob: YXV0aDogdG9rX3E4Umsydlh6MUxtTjRwVDd3WTBhCg==\n";
//! let mut findings = Vec::new();
//! let input = ScanInput {
//!     data,
//!     path: "ci.yml",
//!     base_offset: 0,
//!     owned_len: data.len(),
//!     start: LinePos::START,
//! };
//! engine.scan(&input, &mut engine.new_scratch(), &mut findings);
//! assert_eq!(findings[0].secret, "tok_q8Rk2vXz1LmN4pT7wY0a");
//! assert_eq!(findings[0].decoded, [Encoding::Base64]);
//! assert_eq!((findings[0].line, findings[0].column), (2, 7));
//! assert_eq!(findings[0].end_offset - findings[0].offset, 44);
//! # Ok::<(), scanner_engine::Error>(())
//! ```
//!
//! # Text encodings
//!
//! Rules match bytes, so a UTF-16 file (a `regedit` export) hides every
//! token behind NULs. [`text::detect_utf16`] looks at the first KiB (a BOM,
//! or NULs in alternate positions around mostly-ASCII text);
//! [`text::Utf16Decoder`] transcodes chunk by chunk (an odd byte and a
//! surrogate carry over chunk boundaries), [`text::transcode_utf16`] a
//! whole buffer. Scan the UTF-8 output: lines are the text's lines.
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
//! low; a test, example or documentation path, a Rust unit-test module or
//! a vendor's published example value makes it low. Nothing
//! is dropped for its confidence (`docs/rules.md`, "Confidence and tags").
//!
//! # Performance
//!
//! Stage 1 is one case-insensitive Aho-Corasick DFA over all keywords;
//! stage 2 runs only the rules owning a keyword hit, on merged windows of
//! `max_len` around it: as written, else the regex's longest match, else
//! (`+`, `*`, `{n,}`) the engine's longest window (see `docs/rules.md`). Measured on a shared 2-core
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
//! * Decoding (on by default, [`EngineBuilder::decode_depth`]): time ratio
//!   decoding on/off, same run, best of 5, 8 MB: 1.00-1.21 on the generated
//!   corpus, 1.26-1.31 on real source (crates from `~/.cargo/registry`);
//!   `docs/decoding.md` has the table.
//!
//! Memory: per worker, one lazy-DFA cache per rule that ever had a keyword
//! hit (regex-automata's default capacity bounds each), created on first use
//! and reused: no allocation per file once warm, except the findings.
//!
//! # Failure modes
//!
//! * A bad rule file: [`Error`] names the file, the rule and the fault (TOML
//!   line, regex position, size limit, missing field, a name defined twice
//!   in one file). Built-in files are
//!   trusted (the test suite validates them) and their regexes parsed lazily.
//! * A user rule (any file not built in) is compiled at build: a regex
//!   that parses but exceeds the compiler's size limit is an [`Error`]
//!   naming the file, the rule and the compiler's reason. Built-in regexes
//!   compile on first use; one that could not would match nothing, which
//!   [`Engine::compile_all`] and [`Engine::check_examples`] (for each of
//!   its examples) report, and the test suite forbids.
//! * A keyword farther than the window from the match, or a match longer
//!   than the window (`max_len`, or the longest window for an unbounded
//!   regex): not found; `check_examples` says which. A rule whose shortest
//!   match exceeds [`MAX_WINDOW`] is a build error.
//! * Invalid UTF-8 is fine: regexes are byte-oriented; secret and match are
//!   decoded lossily in findings (the fingerprint hashes the raw bytes).
//! * Encoded text that is not found: base64 wrapped over several lines is
//!   decoded line by line; a run glued to other alphabet bytes decodes
//!   misaligned; base64 of binary data (DER) is not text and not rescanned;
//!   a run longer than `2 LEAD` is decoded over its first `2 LEAD` bytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

mod confidence;
mod decode;
mod engine;
mod gates;
mod generic;
mod google_sa;
mod keywords;
mod lead;
mod literals;
mod provider;
mod re2;
mod request;
mod run;
mod sigv4;
mod syntax;
pub mod text;
mod validation;
mod validator;
mod wrap;

pub use confidence::{base62_6, crc32, mark_test_code, test_code_start, Confidence};
pub use decode::{Encoding, DEFAULT_DEPTH as DEFAULT_DECODE_DEPTH, MAX_DEPTH as MAX_DECODE_DEPTH};
pub use engine::{
    Engine, EngineBuilder, RuleOverride, MAX_MATCH_TEXT, MAX_PATTERN_LEN, MAX_REGEX_STATES,
    MAX_REGEX_WORK, MAX_WINDOW, UNBOUNDED_WINDOW,
};
pub use gates::{fingerprint, is_placeholder, shannon_entropy, PLACEHOLDER_WORDS};
pub use re2::check as check_regex;
pub use request::{Method, Request};
pub use syntax::Provider;
pub use syntax::{read_at_most, read_bounded, RuleFile, MAX_FILE_SIZE};
pub use validation::{aws_account, rfc3339, unix_now, Validation, ValidationStatus};
pub use validator::{percent_encode, Decision, Validator, Vars};

/// The built-in rule files, embedded at compile time: (file name, text).
pub(crate) const BUILTIN_FILES: &[(&str, &str)] = &[
    ("ai.toml", include_str!("../rules/ai.toml")),
    ("ai-2.toml", include_str!("../rules/ai-2.toml")),
    (
        "ci-registries.toml",
        include_str!("../rules/ci-registries.toml"),
    ),
    ("cloud.toml", include_str!("../rules/cloud.toml")),
    (
        "credential-files.toml",
        include_str!("../rules/credential-files.toml"),
    ),
    (
        "credentials-in-code.toml",
        include_str!("../rules/credentials-in-code.toml"),
    ),
    ("databases.toml", include_str!("../rules/databases.toml")),
    (
        "databases-2.toml",
        include_str!("../rules/databases-2.toml"),
    ),
    ("devtools.toml", include_str!("../rules/devtools.toml")),
    ("generic.toml", include_str!("../rules/generic.toml")),
    ("hashes.toml", include_str!("../rules/hashes.toml")),
    ("identity.toml", include_str!("../rules/identity.toml")),
    (
        "infrastructure.toml",
        include_str!("../rules/infrastructure.toml"),
    ),
    ("jwt.toml", include_str!("../rules/jwt.toml")),
    ("messaging.toml", include_str!("../rules/messaging.toml")),
    (
        "messaging-2.toml",
        include_str!("../rules/messaging-2.toml"),
    ),
    (
        "observability.toml",
        include_str!("../rules/observability.toml"),
    ),
    (
        "observability-2.toml",
        include_str!("../rules/observability-2.toml"),
    ),
    ("payments.toml", include_str!("../rules/payments.toml")),
    ("payments-2.toml", include_str!("../rules/payments-2.toml")),
    (
        "private-keys.toml",
        include_str!("../rules/private-keys.toml"),
    ),
    (
        "registries-2.toml",
        include_str!("../rules/registries-2.toml"),
    ),
    (
        "providers-a-b.toml",
        include_str!("../rules/providers-a-b.toml"),
    ),
    (
        "providers-c-e.toml",
        include_str!("../rules/providers-c-e.toml"),
    ),
    (
        "providers-f-l.toml",
        include_str!("../rules/providers-f-l.toml"),
    ),
    (
        "providers-m-p.toml",
        include_str!("../rules/providers-m-p.toml"),
    ),
    (
        "providers-q-s.toml",
        include_str!("../rules/providers-q-s.toml"),
    ),
    (
        "providers-t-z.toml",
        include_str!("../rules/providers-t-z.toml"),
    ),
    ("saas.toml", include_str!("../rules/saas.toml")),
    ("saas-2.toml", include_str!("../rules/saas-2.toml")),
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
/// key, an unknown id to disable, a user rule replacing a built-in one).
/// File and rule are fields, never part of `message`; `Display` prints
/// ``<file>: rule `<id>`: <message>`` with the parts that are present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// A warning, or a note that a user rule replaced another.
    pub kind: WarningKind,
    /// The rule file concerned (`builtin:<name>.toml` or a path); `None`
    /// for user configuration.
    pub file: Option<PathBuf>,
    pub rule: Option<String>,
    pub message: String,
}

impl Warning {
    pub(crate) fn new(file: Option<PathBuf>, rule: Option<String>, message: String) -> Warning {
        Warning {
            kind: WarningKind::Warning,
            file,
            rule,
            message,
        }
    }
}

/// What a [`Warning`] reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WarningKind {
    /// Something is probably wrong (an unknown key, a rule without keywords).
    #[default]
    Warning,
    /// Nothing wrong: a user rule took the place of a built-in rule, or of
    /// a rule of an earlier user file, that had its id or one of its
    /// aliases (gitleaks semantics). The summary may list these.
    Replaced,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if let Some(rule) = &self.rule {
            write!(f, "rule `{rule}`: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Public description of one compiled rule.
#[derive(Clone, Debug)]
pub struct RuleInfo {
    pub id: Arc<str>,
    /// Other names of the rule (`aliases` in its file, such as the gitleaks
    /// id of the same detector, plus the names of the rules it replaced):
    /// everything that takes a rule id accepts them.
    pub aliases: Vec<String>,
    /// `name`, else `description`, else `id`.
    pub name: Arc<str>,
    pub description: String,
    /// Lowercase.
    pub keywords: Vec<String>,
    /// The file the rule came from (`builtin:<name>.toml` or a path).
    pub origin: String,
    /// `[rules.validate]`, checked: how `--validate` asks the provider.
    pub validator: Option<Arc<Validator>>,
    /// The `[[providers]]` entry the rule was compiled from, if any.
    pub provider: Option<Arc<Provider>>,
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
    /// `rel`, a position counted from [`LinePos::START`] at `self`, counted
    /// from where `self` is counted instead. A text cut into pieces scanned
    /// separately, each from `START`, gets its real positions this way:
    /// `START.advance(a + b) == START.advance(a).then(START.advance(b))`.
    pub fn then(self, rel: LinePos) -> LinePos {
        if rel.line == 1 {
            LinePos {
                line: self.line,
                column: self.column.saturating_add(rel.column - 1),
            }
        } else {
            LinePos {
                line: self.line.saturating_add(rel.line - 1),
                column: rel.column,
            }
        }
    }

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
/// `start = LinePos::START`. For chunks, see [`Engine::chunk_overlap`] and
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

impl<'a> ScanInput<'a> {
    /// A whole file (or blob) in one buffer: owned to its end, from line 1.
    pub fn whole(data: &'a [u8], path: &'a str) -> ScanInput<'a> {
        ScanInput {
            data,
            path,
            base_offset: 0,
            owned_len: data.len(),
            start: LinePos::START,
        }
    }
}

/// Per-worker scratch: capture slots (created per rule on its first use),
/// window and candidate vectors. Reuse it from file to file; once warm, a
/// scan allocates nothing but the findings it returns.
#[derive(Default)]
pub struct ScanScratch {
    engine: u64,
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
    /// `scan_focus`: the long-window rules' keyword hits, (end, start,
    /// keyword), before sorting and de-duplication.
    long_hits: Vec<(usize, usize, u32)>,
    /// `scan_focus`: the spans the keyword walk reads, one around each
    /// zone of the focus (those that overlap merged).
    walks: Vec<std::ops::Range<usize>>,
    suppressed: Suppressed,
    decode: decode::DecodeScratch,
    /// Whether the last scan of a layer met `-----BEGIN` (any case), `%`:
    /// without them the split-literal and percent passes have nothing to
    /// find.
    begin_seen: bool,
    percent_seen: bool,
    /// See [`ScanScratch::no_long_keywords`].
    no_long_keywords: bool,
    /// See [`ScanScratch::keep_allowed`].
    keep_allowed: bool,
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

    /// Keep the findings that a user's or a rule's allow decision drops
    /// (inline `scanner:allow`, allowlists and their stopwords, config
    /// `allow_secrets`), marked with [`Finding::allowed`], instead of only
    /// counting them, so that the caller can say which findings were
    /// allowed and why (`scanner scan -v`). The caller then counts them;
    /// they are not in [`take_suppressed`](Self::take_suppressed). Drops
    /// that judge the candidate itself (entropy, placeholders, the generic
    /// rules' checks, duplicates) stay counts. Default off.
    pub fn keep_allowed(&mut self, yes: bool) {
        self.keep_allowed = yes;
    }

    /// True when the last [`Engine::scan`] of a whole buffer (not a chunk),
    /// or [`Engine::scan_focus`], found that no keyword of a long-window
    /// rule (the private keys, JWTs and cloud credentials that
    /// `scan_focus` searches for over the whole buffer) occurs in it. A
    /// new version of that buffer can then be scanned with `scan_focus`'s
    /// `quiet`: its bytes outside what changed hold none either. False
    /// when it was not looked for everywhere.
    pub fn no_long_keywords(&self) -> bool {
        self.no_long_keywords
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
    /// `test-code`, `published-example`, `shape-mismatch:<rule id>`.
    pub tags: Vec<&'static str>,
    /// Depends on rule id and secret only: see [`fingerprint`]. A secret
    /// found in decoded text has the fingerprint it has in plain text.
    pub fingerprint: String,
    /// How the secret was found, outermost first: empty in plain text,
    /// `[Base64]` inside a base64 run, `[Base64, Hex]` inside hex inside
    /// base64, `[StringLiterals]` in reassembled source literals. When not
    /// empty, the positions are those of the whole encoded run (or literal
    /// sequence) in the scanned buffer, not of the secret: see
    /// `docs/decoding.md`.
    pub decoded: Vec<Encoding>,
    /// `None` for a finding. Only with [`ScanScratch::keep_allowed`]: the
    /// label under which [`Suppressed::by_reason`] counts the allow
    /// decision that dropped it (`inline allow`, `allowlist`, `stopword`,
    /// `config allow_secrets`); such a finding must not be reported.
    pub allowed: Option<&'static str>,
    /// Whether the secret works: the offline evidence
    /// (`src/validation.rs`) as the engine leaves it; a live check
    /// (`--validate`) replaces it.
    pub validation: Validation,
    /// The named capture groups of the rule's regex, only when the rule has
    /// a validator and [`r#match`](Self::r#match) was cut (a Google key
    /// file's `client_email` lies past its key): otherwise empty, and
    /// [`Engine::named_captures`] reads them from the match. Never written
    /// in a report.
    pub captures: Vec<(String, String)>,
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

/// The comments that allow the findings on their line, counted as
/// [`Suppressed::inline_allow`]: the engine's gates and the decode pass both
/// look for them.
pub(crate) const INLINE_MARKERS: [&[u8]; 2] = [b"scanner:allow", b"gitleaks:allow"];

/// Candidate findings that were dropped, by reason (summed per worker,
/// reported in the summary so that nothing is hidden silently).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Suppressed {
    /// The secret's entropy is below the rule's `entropy`.
    pub entropy: u64,
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
    /// secret, under the provider's id); or a finding in percent-decoded
    /// text of a rule the plain scan reported inside the same encoded run,
    /// its secret read again, or of a secret a base64 or hex run inside it
    /// reports.
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
        self.entropy += other.entropy;
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
    pub fn by_reason(&self) -> [(&'static str, u64); 10] {
        [
            ("entropy", self.entropy),
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
