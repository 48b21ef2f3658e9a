//! Detection engine for scanner.
//!
//! CONTRACT STUB: the public API below is what `scanner-cli` builds against.
//! The engine issue replaces the bodies (and may add to the API), but keeps
//! these names and signatures compatible.

use std::path::PathBuf;
use std::sync::Arc;

/// Every engine error names the file and, where there is one, the rule.
#[derive(Debug)]
pub struct Error {
    pub file: Option<PathBuf>,
    pub rule: Option<String>,
    pub message: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Error {}

/// A parsed (not compiled) rule file: gitleaks-compatible TOML.
#[derive(Clone, Debug)]
pub struct RuleFile {}

impl RuleFile {
    /// `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<RuleFile, Error> {
        let _ = (text, origin);
        todo!()
    }
    pub fn load(path: &std::path::Path) -> Result<RuleFile, Error> {
        let _ = path;
        todo!()
    }
    /// The built-in rule files, embedded in the binary.
    pub fn builtin() -> Vec<RuleFile> {
        todo!()
    }
}

/// A warning raised while building (e.g. a rule without keywords).
#[derive(Clone, Debug)]
pub struct Warning {
    pub rule: Option<String>,
    pub message: String,
}

/// Public description of one compiled rule.
#[derive(Clone, Debug)]
pub struct RuleInfo {
    pub id: Arc<str>,
    pub name: Arc<str>,
    pub description: String,
    pub keywords: Vec<String>,
    pub origin: String,
}

/// Builds an [`Engine`].
#[derive(Default)]
pub struct EngineBuilder {}

impl EngineBuilder {
    pub fn new() -> Self {
        EngineBuilder {}
    }
    /// Adds a rule file; a later file's rule with the same id is an error.
    pub fn add(self, file: RuleFile) -> Self {
        let _ = file;
        todo!()
    }
    /// Drops rules by id before compiling.
    pub fn disable(self, ids: &[String]) -> Self {
        let _ = ids;
        todo!()
    }
    /// Extra secrets to allow (regexes over the secret), from user config.
    pub fn allow_secrets(self, regexes: &[String]) -> Self {
        let _ = regexes;
        todo!()
    }
    pub fn build(self) -> Result<(Engine, Vec<Warning>), Error> {
        todo!()
    }
}

/// Compiled, read-only rule database; share it with `Arc` across workers.
pub struct Engine {}

impl Engine {
    /// The built-in rules, compiled.
    pub fn builtin() -> Result<Engine, Error> {
        todo!()
    }
    pub fn rules(&self) -> &[RuleInfo] {
        todo!()
    }
    /// Longest possible match: chunks must overlap by at least this much.
    pub fn max_match_len(&self) -> usize {
        todo!()
    }
    /// Per-worker scratch; reuse it from file to file.
    pub fn new_scratch(&self) -> ScanScratch {
        todo!()
    }
    /// Scans one buffer (a whole file or one chunk of it), appending to `out`.
    pub fn scan(&self, input: &ScanInput<'_>, scratch: &mut ScanScratch, out: &mut Vec<Finding>) {
        let _ = (input, scratch, out);
        todo!()
    }
    /// Runs every rule's examples and negative examples.
    pub fn check_examples(&self) -> Vec<ExampleFailure> {
        todo!()
    }
}

/// Line and column (1-based, columns in bytes) of `data[0]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinePos {
    pub line: u32,
    pub column: u32,
}

impl LinePos {
    pub const START: LinePos = LinePos { line: 1, column: 1 };
}

/// One buffer to scan.
pub struct ScanInput<'a> {
    /// The bytes: the owned part of the chunk followed by the overlap.
    pub data: &'a [u8],
    /// The path, for path-scoped rules and allowlists (as the user sees it).
    pub path: &'a str,
    /// File offset of `data[0]`.
    pub base_offset: u64,
    /// Findings that start at `data[owned_len..]` belong to the next chunk.
    pub owned_len: usize,
    /// Position of `data[0]`.
    pub start: LinePos,
}

/// Per-worker scratch.
pub struct ScanScratch {}

/// One finding. The path is added by the caller.
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
    /// The matched text, bounded in length.
    pub r#match: String,
    pub secret: String,
    pub entropy: f32,
    /// Depends on rule id and secret only.
    pub fingerprint: String,
}

/// A rule example that did not behave.
#[derive(Clone, Debug)]
pub struct ExampleFailure {
    pub rule_id: String,
    pub example: String,
    pub negative: bool,
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

impl ScanScratch {
    /// Returns the counts since the last call and resets them.
    pub fn take_suppressed(&mut self) -> Suppressed {
        todo!()
    }
}
