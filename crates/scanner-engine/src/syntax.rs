//! Rule files as written: the serde mirror of the TOML, before compilation.
//!
//! Parsing happens in two steps so that errors can name the rule: the file is
//! first read into tables (TOML syntax errors carry a line), then each
//! `[[rules]]` table is decoded on its own (a missing or mistyped field is
//! reported with the rule's id and the line where its table starts).

use std::path::Path;

use serde::Deserialize;

use crate::validator::ValidatorSyntax;
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
    pub(crate) unknown: Unknown,
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
    providers: Vec<toml::Spanned<toml::Table>>,
    #[serde(default)]
    allowlist: Option<toml::Spanned<toml::Table>>,
    #[serde(default)]
    allowlists: Vec<toml::Spanned<toml::Table>>,
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
    pub validate: Option<ValidatorSyntax>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// gitleaks >= 8.21 form.
    #[serde(default)]
    pub allowlists: Vec<AllowlistSyntax>,
    /// gitleaks < 8.21 form (a single table).
    #[serde(default)]
    pub allowlist: Option<AllowlistSyntax>,
    /// Line where the `[[rules]]` table starts (1-based).
    #[serde(skip)]
    pub line: usize,
    /// The `[[providers]]` entry the rule was expanded from, if any.
    #[serde(skip)]
    pub provider: Option<Provider>,
}

/// One `[[providers]]` table, as written.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ProviderSyntax {
    pub id: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub provider: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Where the provider documents the format (required of built-ins).
    #[serde(default)]
    pub docs: Option<String>,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub alphabet: Option<String>,
    #[serde(default)]
    pub len: Option<Len>,
    #[serde(default)]
    pub shape: Option<String>,
    #[serde(default)]
    pub entropy: Option<f64>,
    #[serde(default)]
    pub examples: Vec<ExampleSyntax>,
    #[serde(default)]
    pub negative_examples: Vec<ExampleSyntax>,
    #[serde(default)]
    pub validate: Option<ValidatorSyntax>,
    #[serde(default)]
    pub tags: Vec<String>,
}

/// `len = 32` or `len = [32, 40]`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Len {
    Exact(usize),
    Range([usize; 2]),
}

/// The provider whose credential a rule finds: from its `[[providers]]`
/// entry, or for a hand-written built-in rule from its first tag.
#[derive(Clone, Debug)]
pub struct Provider {
    /// The provider's display name (`Mailchimp`; a tag for built-in rules).
    pub name: String,
    /// Where the provider documents the format (entries only).
    pub docs: Option<String>,
    /// Lowercase words naming the provider that must stand on the token's
    /// line: empty when the token matches alone (a distinctive prefix, a
    /// hand-written rule).
    pub context: Vec<String>,
    /// Whether a value made of words is dropped: a keyword entry whose
    /// alphabet can spell them (module docs).
    pub rejects_names: bool,
}

/// The keys of a `[[providers]]` table.
pub(crate) const PROVIDER_KEYS: &[&str] = &[
    "id",
    "aliases",
    "provider",
    "name",
    "description",
    "docs",
    "keywords",
    "prefix",
    "alphabet",
    "len",
    "shape",
    "entropy",
    "examples",
    "negative_examples",
    "validate",
    "tags",
];

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
    /// Not checked: a match carries no commit. Ignored under `OR`; under `AND` the
    /// allowlist never holds (with a warning, [`normalize_allowlist`]).
    pub commits: Vec<String>,
    /// Global `[[allowlists]]` only: restricts the allowlist to these rules.
    #[serde(rename = "targetRules")]
    pub target_rules: Vec<String>,
}

/// The largest rule or config file read: 16 MiB. The built-in rules are
/// 0.2 MB, gitleaks' whole default config 0.1 MB; a file beyond this is a
/// mistake or an attack (`/dev/zero` named in `[extend] path`), and parsing
/// it would hold several times its size.
pub const MAX_FILE_SIZE: u64 = 16 << 20;

/// Reads a rule or config file as UTF-8, refusing it once it passes
/// [`MAX_FILE_SIZE`]: at most that many bytes and one more are read, so a
/// device or an endless FIFO fails fast instead of filling memory. A FIFO of
/// a bounded size (`--rules <(...)`) still works. The error says what to do.
pub fn read_bounded(path: &Path) -> std::io::Result<String> {
    let bytes = read_at_most(path, MAX_FILE_SIZE, "a rule or config file", "a rule file")?;
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Reads at most `limit` bytes of `path` and one more, failing when there
/// is more: `larger than N MiB, the limit for {what}: not {guess}?`.
pub fn read_at_most(path: &Path, limit: u64, what: &str, guess: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, the limit for {what}: not {guess}?",
                limit >> 20
            ),
        ));
    }
    Ok(bytes)
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The keys of each table, as we spell them (module docs, "Keys").
const TOP_KEYS: &[&str] = &[
    "extend",
    "rules",
    "providers",
    "allowlist",
    "allowlists",
    // gitleaks' own, meaning nothing to us: accepted and ignored.
    "title",
    "description",
    "version",
    "minVersion",
];
const EXTEND_KEYS: &[&str] = &["useDefault", "path", "disabledRules"];
const RULE_KEYS: &[&str] = &[
    "id",
    "aliases",
    "name",
    "description",
    "regex",
    "secretGroup",
    "entropy",
    "keywords",
    "path",
    "max_len",
    "keyword_lead",
    "examples",
    "negative_examples",
    "placeholder_check",
    "generic",
    "confidence",
    "checksum",
    "tags",
    "allowlists",
    "allowlist",
    "validate",
    // gitleaks' own, meaning nothing to a file scanner: accepted and ignored.
    "skipReport",
    "report",
    "required",
];
const ALLOWLIST_KEYS: &[&str] = &[
    "description",
    "condition",
    "regexTarget",
    "regexes",
    "stopwords",
    "paths",
    "commits",
    "targetRules",
];

type DeTable<'i> = toml::de::DeTable<'i>;
/// Unknown keys: the rule they are in (if any) and the warning.
type Unknown = Vec<(Option<String>, String)>;

/// Spells every key of `table` as `known` does when they differ in ASCII case only (gitleaks
/// reads its config through viper, which lowercases every key: `usedefault` is `useDefault`),
/// and removes the keys `known` does not hold, each reported as a warning naming the table
/// (`place`) and the rule (`rule`), so that no typo passes in silence.
fn normalize(
    table: &mut DeTable<'_>,
    known: &[&'static str],
    place: &str,
    rule: Option<&str>,
    unknown: &mut Unknown,
) {
    let keys: Vec<String> = table.keys().map(|k| k.get_ref().to_string()).collect();
    for key in keys {
        if known.contains(&key.as_str()) {
            continue;
        }
        let Some((k, v)) = table.remove_entry(key.as_str()) else {
            continue;
        };
        let canonical = known.iter().find(|c| c.eq_ignore_ascii_case(&key));
        let message = match canonical {
            Some(c) if !table.contains_key(*c) => {
                table.insert(toml::Spanned::new(k.span(), (*c).into()), v);
                continue;
            }
            Some(c) => {
                format!("key `{key}` {place}repeats `{c}` (keys are case-insensitive): ignored")
            }
            None => format!("unknown key `{key}` {place}ignored"),
        };
        unknown.push((rule.map(str::to_owned), message));
    }
}

/// [`normalize`] for an allowlist, and a warning when it is one that never holds here: an
/// `AND` that names `commits`, which a match does not carry.
fn normalize_allowlist(
    table: &mut DeTable<'_>,
    place: &str,
    rule: Option<&str>,
    unknown: &mut Unknown,
) {
    use toml::de::DeValue;
    normalize(table, ALLOWLIST_KEYS, place, rule, unknown);
    let and = table
        .get("condition")
        .and_then(|v| v.get_ref().as_str())
        .is_some_and(|c| c.eq_ignore_ascii_case("and"));
    let commits = matches!(table.get("commits").map(|v| v.get_ref()), Some(DeValue::Array(a)) if !a.is_empty());
    if and && commits {
        let message = format!(
            "`commits` {place}cannot be checked (a match carries no commit): with condition \
             AND this allowlist never applies"
        );
        unknown.push((rule.map(str::to_owned), message));
    }
}

/// The rule id a `[[rules]]` table names (under any spelling of `id`), for messages.
fn table_id<'a>(table: &'a DeTable<'_>) -> Option<&'a str> {
    table
        .iter()
        .find(|(k, _)| k.get_ref().eq_ignore_ascii_case("id"))
        .and_then(|(_, v)| v.get_ref().as_str())
}

/// Applies [`normalize`] to every table of a rule file; returns the warnings.
fn normalize_file(root: &mut DeTable<'_>) -> Unknown {
    use toml::de::DeValue;
    let mut unknown = Vec::new();
    normalize(root, TOP_KEYS, "", None, &mut unknown);
    // Top-level unknown keys keep their historic wording.
    for (_, m) in &mut unknown {
        if let Some(rest) = m.strip_prefix("unknown key") {
            *m = format!("unknown top-level key{rest}");
        }
    }
    if let Some(DeValue::Table(t)) = root.get_mut("extend").map(|v| v.get_mut()) {
        normalize(t, EXTEND_KEYS, "in [extend] ", None, &mut unknown);
    }
    if let Some(DeValue::Table(t)) = root.get_mut("allowlist").map(|v| v.get_mut()) {
        normalize_allowlist(t, "in [allowlist] ", None, &mut unknown);
    }
    if let Some(DeValue::Array(a)) = root.get_mut("allowlists").map(|v| v.get_mut()) {
        for item in a.iter_mut() {
            if let DeValue::Table(t) = item.get_mut() {
                normalize_allowlist(t, "in [[allowlists]] ", None, &mut unknown);
            }
        }
    }
    if let Some(DeValue::Array(a)) = root.get_mut("rules").map(|v| v.get_mut()) {
        for item in a.iter_mut() {
            let DeValue::Table(t) = item.get_mut() else {
                continue;
            };
            let id = table_id(t).map(str::to_owned);
            normalize(t, RULE_KEYS, "", id.as_deref(), &mut unknown);
            if let Some(DeValue::Table(al)) = t.get_mut("allowlist").map(|v| v.get_mut()) {
                normalize_allowlist(al, "in [rules.allowlist] ", id.as_deref(), &mut unknown);
            }
            if let Some(DeValue::Array(als)) = t.get_mut("allowlists").map(|v| v.get_mut()) {
                for al in als.iter_mut() {
                    if let DeValue::Table(al) = al.get_mut() {
                        normalize_allowlist(
                            al,
                            "in [[rules.allowlists]] ",
                            id.as_deref(),
                            &mut unknown,
                        );
                    }
                }
            }
        }
    }
    if let Some(DeValue::Array(a)) = root.get_mut("providers").map(|v| v.get_mut()) {
        for item in a.iter_mut() {
            if let DeValue::Table(t) = item.get_mut() {
                let id = table_id(t).map(str::to_owned);
                normalize(
                    t,
                    PROVIDER_KEYS,
                    "in [[providers]] ",
                    id.as_deref(),
                    &mut unknown,
                );
            }
        }
    }
    unknown
}

/// The fast path: everything typed in one pass. Only when it fails do we
/// parse again table by table, to say which rule is at fault.
#[derive(Deserialize)]
struct TypedFileSyntax {
    #[serde(default)]
    extend: Option<ExtendSyntax>,
    #[serde(default)]
    rules: Vec<toml::Spanned<RuleSyntax>>,
    #[serde(default)]
    providers: Vec<toml::Spanned<ProviderSyntax>>,
    #[serde(default)]
    allowlist: Option<AllowlistSyntax>,
    #[serde(default)]
    allowlists: Vec<AllowlistSyntax>,
}

/// A TOML error in `text`, with its line when it has a place.
fn toml_error(text: &str, origin: &str, e: &toml::de::Error) -> Error {
    let at = e
        .span()
        .map(|s| format!("line {}: ", line_of(text, s.start)))
        .unwrap_or_default();
    Error::new(
        Some(origin.into()),
        None,
        format!("TOML error: {at}{}", e.message()),
    )
}

/// `text` parsed into tables (with spans) and its keys [`normalize`]d.
fn parse_tables<'i>(
    text: &'i str,
    origin: &str,
) -> Result<(toml::Spanned<DeTable<'i>>, Unknown), Error> {
    let mut root = DeTable::parse(text).map_err(|e| toml_error(text, origin, &e))?;
    let unknown = normalize_file(root.get_mut());
    Ok((root, unknown))
}

/// At most this many threads parse the built-in rule files: past it, a
/// thread's start costs about what its share of the parsing saves.
const PARSE_THREADS: usize = 8;

impl RuleFile {
    fn parse_typed(root: toml::Spanned<DeTable<'_>>, text: &str, origin: &str) -> Option<RuleFile> {
        let raw = TypedFileSyntax::deserialize(toml::de::Deserializer::from(root)).ok()?;
        let mut rules = Vec::with_capacity(raw.rules.len() + raw.providers.len());
        // Spans come in order within each array: count newlines
        // incrementally, from the top again for the second array.
        let lines = || {
            let (mut line, mut at) = (1, 0);
            move |start: usize| {
                let start = start.min(text.len());
                line += text.as_bytes()[at..start]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                at = start;
                line
            }
        };
        let mut line_of_rule = lines();
        for spanned in raw.rules {
            let line = line_of_rule(spanned.span().start);
            let mut rule = spanned.into_inner();
            rule.line = line;
            if rule.id.trim().is_empty() || rule.id.chars().any(char::is_whitespace) {
                return None;
            }
            rules.push(rule);
        }
        let mut line_of_entry = lines();
        for spanned in raw.providers {
            let line = line_of_entry(spanned.span().start);
            rules.push(spanned.get_ref().expand(line).ok()?);
        }
        Some(RuleFile {
            origin: origin.to_owned(),
            rules,
            allowlists: raw.allowlist.into_iter().chain(raw.allowlists).collect(),
            extend: raw.extend.unwrap_or_default(),
            unknown: Vec::new(),
            trusted: false,
        })
    }

    /// Parses rule-file text; `origin` names the file in errors and in
    /// [`RuleInfo::origin`](crate::RuleInfo::origin).
    pub fn parse(text: &str, origin: &str) -> Result<RuleFile, Error> {
        let (root, unknown) = parse_tables(text, origin)?;
        if let Some(mut file) = RuleFile::parse_typed(root, text, origin) {
            file.unknown = unknown;
            return Ok(file);
        }
        let file_err = |message: String| Error::new(Some(origin.into()), None, message);
        let (root, unknown) = parse_tables(text, origin)?;
        let raw = FileSyntax::deserialize(toml::de::Deserializer::from(root))
            .map_err(|e| toml_error(text, origin, &e))?;
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
            rules.push(rule);
        }
        for spanned in raw.providers {
            let line = line_of(text, spanned.span().start);
            let table = spanned.into_inner();
            let id = table.get("id").and_then(|v| v.as_str()).map(str::to_owned);
            let fault = |m: String| Error::new(Some(origin.into()), id.clone(), m);
            let entry = ProviderSyntax::deserialize(toml::Value::Table(table)).map_err(|e| {
                fault(format!(
                    "line {line}: [[providers]]: {}",
                    e.message().trim_end()
                ))
            })?;
            rules.push(entry.expand(line).map_err(fault)?);
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

    /// Reads and parses a rule file; I/O errors name the path. A file
    /// above [`MAX_FILE_SIZE`] is refused (see [`read_bounded`]).
    pub fn load(path: &Path) -> Result<RuleFile, Error> {
        let text = read_bounded(path).map_err(|e| {
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
        RuleFile::try_builtin().unwrap_or_else(|e| panic!("built-in rule file is broken: {e}"))
    }

    /// Like [`RuleFile::builtin`] but returns the parse error of a broken
    /// built-in file instead of panicking (for `scanner rules check`).
    ///
    /// The files are parsed on up to [`PARSE_THREADS`] threads, each taking
    /// the largest file left: with the provider table the built-in rules
    /// are 1.1 MB of TOML, the largest part of the start-up.
    pub fn try_builtin() -> Result<Vec<RuleFile>, Error> {
        let parse = |(name, text): &(&str, &str)| {
            let mut f = RuleFile::parse(text, &format!("builtin:{name}"))?;
            f.trusted = true;
            Ok(f)
        };
        let files = crate::BUILTIN_FILES;
        let threads =
            std::thread::available_parallelism().map_or(1, |n| n.get().min(PARSE_THREADS));
        if threads < 2 {
            return files.iter().map(parse).collect();
        }
        // Largest first, each thread taking the next: the last files taken
        // are small, so the threads finish together, the ones started late
        // included (by size, every `threads`-th file to each gave the
        // busiest thread 7% more than its share at two threads, 23% at
        // eight; this, 0-2%).
        let mut order: Vec<usize> = (0..files.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(files[i].1.len()));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || {
            let mut parsed = Vec::new();
            while let Some(&i) = order.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
            {
                parsed.push((i, parse(&files[i])));
            }
            parsed
        };
        let parsed: Vec<Vec<(usize, Result<RuleFile, Error>)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mine = work();
            std::iter::once(mine)
                .chain(
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("rule parsing thread")),
                )
                .collect()
        });
        let mut all: Vec<(usize, Result<RuleFile, Error>)> = parsed.into_iter().flatten().collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, f)| f).collect()
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

    /// Drops every rule's `[rules.validate]` (a provider's included), for a file whose
    /// author may not choose where secrets are sent; returns the ids of the rules that had
    /// one.
    pub fn drop_validators(&mut self) -> Vec<String> {
        self.rules
            .iter_mut()
            .filter_map(|r| r.validate.take().map(|_| r.id.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(f: &RuleFile) -> Vec<String> {
        f.unknown
            .iter()
            .map(|(rule, m)| match rule {
                Some(r) => format!("{r}: {m}"),
                None => m.clone(),
            })
            .collect()
    }

    #[test]
    fn keys_are_case_insensitive_as_in_gitleaks() {
        let f = RuleFile::parse(
            r#"
TITLE = "x"
[Extend]
usedefault = true
DisabledRules = ["a"]

[[Rules]]
ID = "tok"
Regex = '''tok_([a-z]{8})'''
SECRETGROUP = 1
keywords = ["tok_"]
[[Rules.Allowlists]]
StopWords = ["dummy"]
"#,
            "t.toml",
        )
        .unwrap();
        assert_eq!(warnings(&f), Vec::<String>::new());
        assert!(f.uses_default());
        assert_eq!(f.disabled_rules(), ["a"]);
        let r = &f.rules[0];
        assert_eq!((r.id.as_str(), r.secret_group, r.line), ("tok", Some(1), 7));
        assert_eq!(r.allowlists[0].stopwords, ["dummy"]);
    }

    #[test]
    fn every_unknown_key_is_named_with_its_table() {
        let f = RuleFile::parse(
            r#"
colour = 1
[extend]
usedefualt = true
[allowlist]
path = ["x"]
[[allowlists]]
regex = ["x"]
[[rules]]
id = "tok"
regex = '''tok_'''
keyword = ["tok_"]
[rules.allowlist]
stopword = ["x"]
[[rules.allowlists]]
commit = ["x"]
"#,
            "t.toml",
        )
        .unwrap();
        assert!(!f.uses_default());
        assert_eq!(
            warnings(&f),
            [
                "unknown top-level key `colour` ignored",
                "unknown key `usedefualt` in [extend] ignored",
                "unknown key `path` in [allowlist] ignored",
                "unknown key `regex` in [[allowlists]] ignored",
                "tok: unknown key `keyword` ignored",
                "tok: unknown key `stopword` in [rules.allowlist] ignored",
                "tok: unknown key `commit` in [[rules.allowlists]] ignored",
            ]
        );
        // Two spellings of one key: the first in key order wins, the other is named.
        let f = RuleFile::parse("[extend]\nuseDefault = true\nUSEDEFAULT = false\n", "t").unwrap();
        assert!(f.uses_default());
        assert_eq!(
            warnings(&f),
            ["key `USEDEFAULT` in [extend] repeats `useDefault` (keys are case-insensitive): ignored"]
        );
    }

    #[test]
    fn a_file_above_the_bound_is_refused_without_reading_it_whole() {
        let e = RuleFile::load(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.file(), Some(Path::new("/dev/zero")));
        assert!(
            e.message()
                .starts_with("cannot read rule file: larger than 16 MiB"),
            "{e}"
        );
    }
}
