//! Rule files as written: the serde mirror of the TOML, before compilation.
//!
//! Parsing happens in two steps so that errors can name the rule: the file is
//! first read into tables (TOML syntax errors carry a line), then each
//! `[[rules]]` table is decoded on its own (a missing or mistyped field is
//! reported with the rule's id and the line where its table starts).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::Error;

/// A parsed (not compiled) rule file: gitleaks-compatible TOML plus our
/// fields (`name`, `aliases`, `max_len`, `examples`, `negative_examples`,
/// `placeholder_check`). The format is documented in `docs/rules.md`.
#[derive(Clone, Debug)]
pub struct RuleFile {
    pub(crate) origin: String,
    pub(crate) rules: Vec<RuleSyntax>,
    pub(crate) allowlists: Vec<AllowlistSyntax>,
    pub(crate) extend: ExtendSyntax,
    /// Unknown keys, as warnings raised by the builder.
    pub(crate) unknown: Vec<(Option<String>, String)>,
    /// Built-in: validated by the test suite, so regexes are parsed lazily.
    pub(crate) trusted: bool,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct ExtendSyntax {
    #[serde(default, rename = "useDefault")]
    pub use_default: bool,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default, rename = "disabledRules")]
    pub disabled_rules: Vec<String>,
}

#[derive(Deserialize)]
struct FileSyntax {
    #[serde(default)]
    extend: Option<ExtendSyntax>,
    #[serde(default)]
    rules: Vec<toml::Spanned<toml::Table>>,
    #[serde(default)]
    allowlist: Option<toml::Spanned<toml::Table>>,
    #[serde(default)]
    allowlists: Vec<toml::Spanned<toml::Table>>,
    #[serde(flatten)]
    other: BTreeMap<String, toml::Value>,
}

/// One `[[rules]]` table.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct RuleSyntax {
    pub id: String,
    /// Ours: other ids this rule answers to (the ids gitleaks gives the
    /// same detector), wherever a rule id is named.
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub regex: Option<String>,
    #[serde(default, rename = "secretGroup")]
    pub secret_group: Option<usize>,
    #[serde(default)]
    pub entropy: Option<f64>,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub max_len: Option<usize>,
    /// Ours: how far before the start of a keyword occurrence a match can
    /// begin (default `max_len`). Small for rules whose matches start at
    /// their keyword (`ghp_`, `password=`): it shrinks every window.
    #[serde(default)]
    pub keyword_lead: Option<usize>,
    #[serde(default)]
    pub examples: Vec<ExampleSyntax>,
    #[serde(default)]
    pub negative_examples: Vec<ExampleSyntax>,
    #[serde(default)]
    pub placeholder_check: Option<bool>,
    /// Ours: a catch-all rule (`password = ...`) whose finding is dropped
    /// as a duplicate when a provider rule reports an overlapping secret.
    #[serde(default)]
    pub generic: Option<bool>,
    /// Ours: `high`, `medium` or `low`, the finding's base confidence.
    #[serde(default)]
    pub confidence: Option<String>,
    /// Ours: an offline structure check of the secret (`github-crc32`,
    /// `npm-crc32`, `jwt`, `pypi-macaroon`); see `src/confidence.rs`.
    #[serde(default)]
    pub checksum: Option<String>,
    /// Ours: `[rules.validate]`, how to ask the provider whether a secret
    /// works; see `src/validator.rs`.
    #[serde(default)]
    pub validate: Option<crate::validator::ValidatorSyntax>,
    #[serde(default)]
    #[allow(dead_code)] // informational, kept so that it is not reported as unknown
    pub tags: Vec<String>,
    /// gitleaks >= 8.21 form.
    #[serde(default)]
    pub allowlists: Vec<AllowlistSyntax>,
    /// gitleaks < 8.21 form (a single table).
    #[serde(default)]
    pub allowlist: Option<AllowlistSyntax>,
    #[serde(flatten)]
    pub other: BTreeMap<String, toml::Value>,
    /// Line where the `[[rules]]` table starts (1-based).
    #[serde(skip)]
    pub line: usize,
}

/// An example: a bare string, or a table when the path matters.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ExampleSyntax {
    Text(String),
    WithPath { text: String, path: String },
}

impl ExampleSyntax {
    pub fn text(&self) -> &str {
        match self {
            ExampleSyntax::Text(t) => t,
            ExampleSyntax::WithPath { text, .. } => text,
        }
    }
    pub fn path(&self) -> Option<&str> {
        match self {
            ExampleSyntax::Text(_) => None,
            ExampleSyntax::WithPath { path, .. } => Some(path),
        }
    }
}

/// `[[rules.allowlists]]`, `[allowlist]` and `[[allowlists]]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AllowlistSyntax {
    #[allow(dead_code)]
    pub description: Option<String>,
    pub condition: Option<String>,
    #[serde(rename = "regexTarget")]
    pub regex_target: Option<String>,
    pub regexes: Vec<String>,
    pub stopwords: Vec<String>,
    pub paths: Vec<String>,
    /// Commits mean nothing to a file scanner; accepted and ignored.
    #[allow(dead_code)]
    pub commits: Vec<String>,
    /// Global `[[allowlists]]` only: restricts the allowlist to these rules.
    #[serde(rename = "targetRules")]
    pub target_rules: Vec<String>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Keys gitleaks knows at the top level that mean nothing to us.
const IGNORED_TOP_KEYS: &[&str] = &["title", "description", "version", "minVersion"];
/// Rule keys gitleaks knows that we accept and ignore.
const IGNORED_RULE_KEYS: &[&str] = &["skipReport", "report", "required"];

/// The fast path: everything typed in one pass. Only when it fails do we
/// parse again table by table, to say which rule is at fault.
#[derive(Deserialize)]
struct TypedFileSyntax {
    #[serde(default)]
    extend: Option<ExtendSyntax>,
    #[serde(default)]
    rules: Vec<toml::Spanned<RuleSyntax>>,
    #[serde(default)]
    allowlist: Option<AllowlistSyntax>,
    #[serde(default)]
    allowlists: Vec<AllowlistSyntax>,
    #[serde(flatten)]
    other: BTreeMap<String, toml::Value>,
}

impl RuleFile {
    fn parse_typed(text: &str, origin: &str) -> Option<RuleFile> {
        let raw: TypedFileSyntax = toml::from_str(text).ok()?;
        let mut unknown = Vec::new();
        for key in raw.other.keys() {
            if !IGNORED_TOP_KEYS.contains(&key.as_str()) {
                unknown.push((None, format!("unknown top-level key `{key}` ignored")));
            }
        }
        let mut rules = Vec::with_capacity(raw.rules.len());
        let mut line = 1;
        let mut at = 0;
        for spanned in raw.rules {
            // Spans come in order: count newlines incrementally.
            let start = spanned.span().start.min(text.len());
            line += text.as_bytes()[at..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            at = start;
            let mut rule = spanned.into_inner();
            rule.line = line;
            if rule.id.trim().is_empty() || rule.id.chars().any(char::is_whitespace) {
                return None;
            }
            for key in rule.other.keys() {
                if !IGNORED_RULE_KEYS.contains(&key.as_str()) {
                    unknown.push((
                        Some(rule.id.clone()),
                        format!("unknown key `{key}` ignored"),
                    ));
                }
            }
            rules.push(rule);
        }
        Some(RuleFile {
            origin: origin.to_owned(),
            rules,
            allowlists: raw.allowlist.into_iter().chain(raw.allowlists).collect(),
            extend: raw.extend.unwrap_or_default(),
            unknown,
            trusted: false,
        })
    }

    /// Parses rule-file text; `origin` names the file in errors and in
    /// [`RuleInfo::origin`](crate::RuleInfo::origin).
    pub fn parse(text: &str, origin: &str) -> Result<RuleFile, Error> {
        if let Some(file) = RuleFile::parse_typed(text, origin) {
            return Ok(file);
        }
        let file_err = |message: String| Error::new(Some(origin.into()), None, message);
        let raw: FileSyntax = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| format!("line {}: ", line_of(text, s.start)))
                .unwrap_or_default();
            file_err(format!("TOML error: {at}{}", e.message()))
        })?;
        let mut unknown = Vec::new();
        for key in raw.other.keys() {
            if !IGNORED_TOP_KEYS.contains(&key.as_str()) {
                unknown.push((None, format!("unknown top-level key `{key}` ignored")));
            }
        }
        let mut rules = Vec::with_capacity(raw.rules.len());
        for (i, spanned) in raw.rules.into_iter().enumerate() {
            let line = line_of(text, spanned.span().start);
            let table = spanned.into_inner();
            let id = table.get("id").and_then(|v| v.as_str()).map(str::to_owned);
            let what = match &id {
                Some(_) => format!("line {line}"),
                None => format!("rule #{} (line {line})", i + 1),
            };
            let mut rule: RuleSyntax =
                RuleSyntax::deserialize(toml::Value::Table(table)).map_err(|e| {
                    Error::new(
                        Some(origin.into()),
                        id.clone(),
                        format!("{what}: {}", e.message().trim_end()),
                    )
                })?;
            rule.line = line;
            if rule.id.trim().is_empty() || rule.id.chars().any(char::is_whitespace) {
                return Err(Error::new(
                    Some(origin.into()),
                    Some(rule.id.clone()),
                    format!("line {line}: `id` must be non-empty and contain no whitespace"),
                ));
            }
            for key in rule.other.keys() {
                if !IGNORED_RULE_KEYS.contains(&key.as_str()) {
                    unknown.push((
                        Some(rule.id.clone()),
                        format!("unknown key `{key}` ignored"),
                    ));
                }
            }
            rules.push(rule);
        }
        let mut allowlists = Vec::new();
        for spanned in raw.allowlist.into_iter().chain(raw.allowlists) {
            let line = line_of(text, spanned.span().start);
            let al = AllowlistSyntax::deserialize(toml::Value::Table(spanned.into_inner()))
                .map_err(|e| {
                    file_err(format!(
                        "global allowlist (line {line}): {}",
                        e.message().trim_end()
                    ))
                })?;
            allowlists.push(al);
        }
        Ok(RuleFile {
            origin: origin.to_owned(),
            rules,
            allowlists,
            extend: raw.extend.unwrap_or_default(),
            unknown,
            trusted: false,
        })
    }

    /// Reads and parses a rule file; I/O errors name the path.
    pub fn load(path: &Path) -> Result<RuleFile, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::new(
                Some(path.into()),
                None,
                format!("cannot read rule file: {e}"),
            )
        })?;
        let mut file = RuleFile::parse(&text, &path.display().to_string())?;
        file.origin = path.display().to_string();
        Ok(file)
    }

    /// Loads `path` and, recursively, the files its `[extend] path` names
    /// (relative to the directory of the file that names them). Returns
    /// the files in the order to [`add`](crate::EngineBuilder::add) them:
    /// the most extended first, `path` last, so that a rule redefined by an
    /// extending file replaces the one it extends (and each file's
    /// `disabledRules` applies to the whole set). Load the built-in rules
    /// before them when any returned file [`uses_default`](Self::uses_default).
    /// A file that extends itself, directly or through others, is an error
    /// naming the cycle.
    pub fn load_with_extends(path: &Path) -> Result<Vec<RuleFile>, Error> {
        let mut files = Vec::new();
        let mut chain: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
        let mut next = Some(path.to_path_buf());
        while let Some(p) = next.take() {
            // Compare canonical paths: `./a.toml` and `a.toml` are one file.
            let canon = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            if let Some(at) = chain.iter().position(|(c, _)| *c == canon) {
                let cycle: Vec<String> = chain[at..]
                    .iter()
                    .map(|(_, shown)| shown.display().to_string())
                    .chain(std::iter::once(p.display().to_string()))
                    .collect();
                return Err(Error::new(
                    Some(chain[chain.len() - 1].1.clone()),
                    None,
                    format!("[extend] path: cycle: {}", cycle.join(" -> ")),
                ));
            }
            let file = RuleFile::load(&p)?;
            if let Some(ext) = file.extend_path() {
                let dir = p.parent().unwrap_or(Path::new(""));
                next = Some(dir.join(ext));
            }
            chain.push((canon, p));
            files.push(file);
        }
        files.reverse();
        Ok(files)
    }

    /// The built-in rule files, embedded in the binary.
    ///
    /// # Panics
    /// If a built-in file does not parse; the test suite guarantees it does.
    pub fn builtin() -> Vec<RuleFile> {
        crate::BUILTIN_FILES
            .iter()
            .map(|(name, text)| {
                let mut f = RuleFile::parse(text, &format!("builtin:{name}"))
                    .unwrap_or_else(|e| panic!("built-in rule file is broken: {e}"));
                f.trusted = true;
                f
            })
            .collect()
    }

    /// Like [`RuleFile::builtin`] but returns the parse error of a broken
    /// built-in file instead of panicking (for `scanner rules check`).
    pub fn try_builtin() -> Result<Vec<RuleFile>, Error> {
        crate::BUILTIN_FILES
            .iter()
            .map(|(name, text)| {
                let mut f = RuleFile::parse(text, &format!("builtin:{name}"))?;
                f.trusted = true;
                Ok(f)
            })
            .collect()
    }

    /// Where this file came from (a path, or `builtin:<name>.toml`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Number of `[[rules]]` in the file.
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// `[extend] useDefault = true`: the file wants the built-in rules too.
    pub fn uses_default(&self) -> bool {
        self.extend.use_default
    }

    /// `[extend] path`: another rule file this one extends, relative to this
    /// file's directory; [`load_with_extends`](Self::load_with_extends)
    /// follows it.
    pub fn extend_path(&self) -> Option<&str> {
        self.extend.path.as_deref()
    }

    /// `[extend] disabledRules`: ids the builder drops from the whole set.
    pub fn disabled_rules(&self) -> &[String] {
        &self.extend.disabled_rules
    }
}
