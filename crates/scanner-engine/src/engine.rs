//! Compiling rule files into an [`Engine`], and scanning.
//!
//! # The scan, step by step
//!
//! 1. Path gates: a globally allowlisted path yields nothing; rules with a
//!    `path` regex that does not match are switched off for this input.
//! 2. Stage 1: one case-insensitive Aho-Corasick automaton over every
//!    rule's keywords, searched with overlapping semantics so that no
//!    keyword hides another (`sk_` inside `sk_live_`). Each hit opens, for
//!    every rule owning the keyword, the window
//!    `[hit.start - keyword_lead, hit.end + max_len]` clipped to the buffer
//!    (`keyword_lead` defaults to `max_len`); a
//!    rule's windows merge as they arrive (hits come in order of their end),
//!    so no byte is searched twice by one rule.
//! 3. Stage 2: per rule, per window, the regex runs with
//!    `Input::new(data).range(window)` so that `\b` and anchors see the real
//!    bytes around the window. A match found in a window is only a start
//!    position: the match itself is recomputed by an anchored search over
//!    `[start, start + max_len]`, so a window edge never truncates a match
//!    and the result does not depend on where the window began.
//! 4. Gates, in order (each drop is counted once, under the first gate
//!    that dropped it): entropy, inline `scanner:allow`, user config,
//!    allowlists and stopwords, placeholders.
//!    Then duplicates: a `generic` rule's candidate whose secret overlaps
//!    a surviving provider candidate's secret is dropped.
//! 5. Positions: candidates are sorted by offset and lines are counted
//!    incrementally with memchr, so the cost is one pass over the bytes
//!    before the last finding, paid only when there are findings.
//!
//! # Chunks
//!
//! A chunk is `data = file[b .. b + owned_len + overlap]` with
//! `overlap >= Engine::max_match_len()` (`5 LEAD + K + 16`). A chunk with
//! `base_offset > 0` owns the matches *starting* in
//! `[2 LEAD, owned_len + 2 LEAD)` and the first chunk owns
//! `[0, owned_len + 2 LEAD)`, where `LEAD` is the longest `max_len`.
//! Consecutive chunks (`b' = b + owned_len`) therefore partition the matches
//! exactly. Provider matches are also computed (never reported) `LEAD`
//! beyond each side: a provider secret overlapping an owned generic secret
//! starts its match less than `LEAD` from the generic match's start, so the
//! duplicate check sees the same provider matches as a whole-buffer scan.
//! Every computed match has at least `LEAD` bytes before it (a `\b`, an
//! inline marker earlier on its line) and, ending by `owned_len + 4 LEAD`
//! with its keyword by `+ K`, everything its window, its anchored re-check
//! and its line gates need after it inside `data`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::{Anchored, Input, Span};
use regex_syntax::hir::Hir;

use crate::confidence::{Checksum, Confidence};
use crate::gates::{fingerprint, is_placeholder, shannon_entropy};
use crate::generic::Verdict;
use crate::syntax::{AllowlistSyntax, ExampleSyntax, RuleFile, RuleSyntax};
use crate::{
    Error, ExampleFailure, Finding, LinePos, RuleInfo, ScanInput, ScanScratch, Suppressed, Warning,
};

/// Default `max_len`: the longest match a rule may produce, in bytes.
pub const DEFAULT_MAX_LEN: usize = 256;
/// The matched text in a [`Finding`] is cut to this many bytes.
pub const MAX_MATCH_TEXT: usize = 512;
const INLINE_MARKERS: [&[u8]; 2] = [b"scanner:allow", b"gitleaks:allow"];

/// Per-rule settings from user configuration, applied by
/// [`EngineBuilder::override_rule`].
#[derive(Clone, Debug, Default)]
pub struct RuleOverride {
    /// Replaces the rule's minimum entropy.
    pub entropy: Option<f32>,
    /// Regexes over the secret; a match drops the finding (counted as
    /// [`Suppressed::config_allow`]).
    pub allow_secrets: Vec<String>,
    /// Regexes over the path; a match drops the rule's findings in that file.
    pub allow_paths: Vec<String>,
}

/// Builds an [`Engine`] from rule files and user configuration.
#[derive(Default)]
pub struct EngineBuilder {
    files: Vec<RuleFile>,
    disabled: Vec<String>,
    allow_secrets: Vec<String>,
    overrides: Vec<(String, RuleOverride)>,
    eager: bool,
    no_lead_inference: bool,
}

impl EngineBuilder {
    pub fn new() -> Self {
        EngineBuilder::default()
    }

    /// Adds a rule file. A rule id already defined by an earlier file (or
    /// twice in one file) is an error at [`build`](Self::build).
    #[allow(clippy::should_implement_trait)] // the name is the CLI's contract
    pub fn add(mut self, file: RuleFile) -> Self {
        self.files.push(file);
        self
    }

    /// Drops rules by id before compiling. An unknown id is a warning.
    pub fn disable(mut self, ids: &[String]) -> Self {
        self.disabled.extend(ids.iter().cloned());
        self
    }

    /// Extra secrets to allow (regexes over the secret, any rule), from user
    /// config; drops are counted as [`Suppressed::config_allow`].
    pub fn allow_secrets(mut self, regexes: &[String]) -> Self {
        self.allow_secrets.extend(regexes.iter().cloned());
        self
    }

    /// Per-rule user settings. An unknown (or disabled) id is an error at
    /// [`build`](Self::build).
    pub fn override_rule(mut self, id: &str, settings: RuleOverride) -> Self {
        self.overrides.push((id.to_owned(), settings));
        self
    }

    /// Compile every regex now rather than on its rule's first keyword hit.
    /// Default: lazy, which keeps startup at a few milliseconds; eager
    /// compilation surfaces regex size-limit errors at build time.
    pub fn eager(mut self, yes: bool) -> Self {
        self.eager = yes;
        self
    }

    /// Turns off the `keyword_lead` inference (`src/lead.rs`): rules
    /// without the field then use `max_len`. For the benchmark's same-run
    /// comparison; not a user setting.
    #[doc(hidden)]
    pub fn no_lead_inference(mut self, yes: bool) -> Self {
        self.no_lead_inference = yes;
        self
    }

    /// Parses every regex, checks every field and builds the keyword
    /// automaton. Errors name the file and the rule; the first one is
    /// returned (use [`build_lenient`](Self::build_lenient) to see them all).
    pub fn build(self) -> Result<(Engine, Vec<Warning>), Error> {
        let (engine, warnings, mut errors) = self.build_inner()?;
        if !errors.is_empty() {
            return Err(errors.swap_remove(0));
        }
        Ok((engine, warnings))
    }

    /// Like [`build`](Self::build), but a broken rule is left out instead of
    /// failing the build: returns the engine of the good rules, the
    /// warnings, and every error (for `scanner rules check` and tests).
    /// Errors outside any rule (configuration, global allowlists) still fail.
    pub fn build_lenient(self) -> Result<(Engine, Vec<Warning>, Vec<Error>), Error> {
        self.build_inner()
    }

    fn build_inner(self) -> Result<(Engine, Vec<Warning>, Vec<Error>), Error> {
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        let mut disabled: Vec<String> = self.disabled.clone();
        for f in &self.files {
            disabled.extend(f.extend.disabled_rules.iter().cloned());
            for (rule, message) in &f.unknown {
                warnings.push(Warning {
                    rule: rule.clone(),
                    message: message.clone(),
                });
            }
        }
        // Duplicate ids, across and within files: the later one is an error.
        let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
        let mut dup: Vec<(usize, usize)> = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            for (ri, r) in f.rules.iter().enumerate() {
                if let Some(first) = seen.get(r.id.as_str()) {
                    errors.push(Error::new(
                        Some(f.origin.clone().into()),
                        Some(r.id.clone()),
                        format!(
                            "line {}: duplicate rule id (first defined in {first})",
                            r.line
                        ),
                    ));
                    dup.push((fi, ri));
                } else {
                    seen.insert(&r.id, &f.origin);
                }
            }
        }
        for id in &disabled {
            if !seen.contains_key(id.as_str()) {
                warnings.push(Warning {
                    rule: Some(id.clone()),
                    message: format!("cannot disable unknown rule `{id}`"),
                });
            }
        }

        let mut rules = Vec::new();
        let mut infos = Vec::new();
        let mut global = Vec::new();
        let mut targeted: Vec<(Vec<String>, Arc<Allowlist>)> = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            for (i, al) in f.allowlists.iter().enumerate() {
                let what = format!("global allowlist #{}", i + 1);
                let compiled = Arc::new(
                    Allowlist::compile(al, &what)
                        .map_err(|m| Error::new(Some(f.origin.clone().into()), None, m))?,
                );
                if al.target_rules.is_empty() {
                    global.push(compiled);
                } else {
                    targeted.push((al.target_rules.clone(), compiled));
                }
            }
            for (ri, r) in f.rules.iter().enumerate() {
                if disabled.iter().any(|d| d == &r.id) || dup.contains(&(fi, ri)) {
                    continue;
                }
                match compile_rule(r, &f.origin, f.trusted) {
                    Ok((mut rule, info, mut w)) => {
                        if self.no_lead_inference {
                            rule.keyword_lead.get_or_insert(rule.max_len);
                        }
                        warnings.append(&mut w);
                        rules.push(rule);
                        infos.push(info);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        for (targets, al) in targeted {
            for t in &targets {
                match infos.iter().position(|i| &*i.id == t) {
                    Some(idx) => rules[idx].allowlists.push(al.clone()),
                    None => warnings.push(Warning {
                        rule: Some(t.clone()),
                        message: format!("global allowlist targets unknown rule `{t}`"),
                    }),
                }
            }
        }
        for (id, ov) in &self.overrides {
            let Some(idx) = infos.iter().position(|i| &*i.id == id) else {
                return Err(Error::new(
                    None,
                    Some(id.clone()),
                    "configuration overrides a rule that does not exist (or is disabled)".into(),
                ));
            };
            let rule = &mut rules[idx];
            if let Some(e) = ov.entropy {
                rule.entropy = Some(e);
            }
            let cfg = |m: String| Error::new(None, Some(id.clone()), m);
            if !ov.allow_secrets.is_empty() {
                rule.config_secrets = Some(
                    compile_set(&ov.allow_secrets)
                        .map_err(|m| cfg(format!("allow_secrets: {m}")))?,
                );
            }
            if !ov.allow_paths.is_empty() {
                rule.config_paths = Some(
                    compile_set(&ov.allow_paths).map_err(|m| cfg(format!("allow_paths: {m}")))?,
                );
            }
        }
        let config_secrets =
            if self.allow_secrets.is_empty() {
                None
            } else {
                Some(compile_set(&self.allow_secrets).map_err(|m| {
                    Error::new(None, None, format!("configuration allow_secrets: {m}"))
                })?)
            };

        // The keyword automaton: lowercase, deduplicated, each keyword
        // mapped to the rules that own it.
        let mut keywords: Vec<String> = Vec::new();
        let mut kw_rules: Vec<Vec<u32>> = Vec::new();
        let mut unkeyed = Vec::new();
        for (idx, rule) in rules.iter().enumerate() {
            if rule.pattern.is_none() {
                continue;
            }
            if rule.keywords.is_empty() {
                unkeyed.push(idx as u32);
                // A `path`-scoped rule runs on its few files only.
                if rule.path.is_some() {
                    continue;
                }
                warnings.push(Warning {
                    rule: Some(infos[idx].id.to_string()),
                    message: format!(
                        "rule `{}` has no keywords: its regex runs over every byte of every file",
                        infos[idx].id
                    ),
                });
                continue;
            }
            for kw in &rule.keywords {
                let k = match keywords.iter().position(|x| x == kw) {
                    Some(k) => k,
                    None => {
                        keywords.push(kw.clone());
                        kw_rules.push(Vec::new());
                        keywords.len() - 1
                    }
                };
                if !kw_rules[k].contains(&(idx as u32)) {
                    kw_rules[k].push(idx as u32);
                }
            }
        }
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&keywords)
            .map_err(|e| Error::new(None, None, format!("cannot build keyword automaton: {e}")))?;
        let lead = rules.iter().map(|r| r.max_len).max().unwrap_or(0);
        let has_generic = rules.iter().any(|r| r.generic);
        let max_kw = keywords.iter().map(|k| k.len()).max().unwrap_or(0);
        let engine = Engine {
            id: NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed),
            rules,
            infos,
            ac,
            keywords,
            kw_rules,
            unkeyed,
            global,
            config_secrets,
            lead,
            has_generic,
            overlap: 5 * lead + max_kw + 16,
        };
        if self.eager {
            engine.compile_all()?;
        }
        Ok((engine, warnings, errors))
    }
}

static NEXT_ENGINE_ID: AtomicU64 = AtomicU64::new(1);

/// What an allowlist regex is matched against.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Secret,
    Match,
    Line,
}

/// A compiled `[[rules.allowlists]]` / `[allowlist]`.
#[derive(Debug)]
pub(crate) struct Allowlist {
    and: bool,
    target: Target,
    regexes: Option<LazyRegex>,
    stopwords: Option<LazyStopwords>,
    paths: Option<LazyRegex>,
}

/// Stopwords, matched case-insensitively; the automaton is built on first use.
#[derive(Debug)]
struct LazyStopwords {
    words: Vec<String>,
    ac: OnceLock<Option<AhoCorasick>>,
}

impl LazyStopwords {
    fn is_match(&self, secret: &[u8]) -> bool {
        self.ac
            .get_or_init(|| {
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&self.words)
                    .ok()
            })
            .as_ref()
            .is_some_and(|a| a.is_match(secret))
    }
}

/// Why a candidate was dropped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Drop {
    Entropy,
    Inline,
    Config,
    Allowlist,
    Stopword,
    Placeholder,
    /// Generic rules' confirmation step (`src/generic/`).
    Generic(crate::generic::Verdict),
}

impl Allowlist {
    fn compile(al: &AllowlistSyntax, what: &str) -> Result<Allowlist, String> {
        let and = match al
            .condition
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            None | Some("OR") => false,
            Some("AND") => true,
            Some(other) => {
                return Err(format!(
                    "{what}: condition must be OR or AND, not `{other}`"
                ))
            }
        };
        let target = match al.regex_target.as_deref() {
            None | Some("secret") => Target::Secret,
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            Some(other) => {
                return Err(format!(
                    "{what}: regexTarget must be secret, match or line, not `{other}`"
                ))
            }
        };
        let set = |v: &Vec<String>, field: &str| -> Result<Option<LazyRegex>, String> {
            if v.is_empty() {
                Ok(None)
            } else {
                compile_set(v)
                    .map(Some)
                    .map_err(|m| format!("{what}: {field}: {m}"))
            }
        };
        let stopwords = if al.stopwords.is_empty() {
            None
        } else {
            Some(LazyStopwords {
                words: al.stopwords.clone(),
                ac: OnceLock::new(),
            })
        };
        Ok(Allowlist {
            and,
            target,
            regexes: set(&al.regexes, "regexes")?,
            stopwords,
            paths: set(&al.paths, "paths")?,
        })
    }

    /// gitleaks semantics: OR, any criterion; AND, every non-empty one.
    fn check(&self, path: &str, secret: &[u8], target: &[u8]) -> Option<Drop> {
        let path_hit = self.paths.as_ref().map(|r| r.is_match(path));
        let regex_hit = self.regexes.as_ref().map(|r| r.is_match(target));
        let stop_hit = self.stopwords.as_ref().map(|a| a.is_match(secret));
        let crits = [path_hit, regex_hit, stop_hit];
        let hit = if self.and {
            crits.iter().any(Option::is_some) && crits.iter().all(|c| c != &Some(false))
        } else {
            crits.contains(&Some(true))
        };
        if !hit {
            None
        } else if stop_hit == Some(true) && regex_hit != Some(true) && path_hit != Some(true) {
            Some(Drop::Stopword)
        } else {
            Some(Drop::Allowlist)
        }
    }

    /// True when the path alone allows everything (used to skip files).
    fn allows_path_alone(&self, path: &str) -> bool {
        let Some(paths) = &self.paths else {
            return false;
        };
        if self.and && (self.regexes.is_some() || self.stopwords.is_some()) {
            return false;
        }
        paths.is_match(path)
    }
}

/// Several regexes as one (any of them matches), checked at build time and
/// compiled on first use: most allowlists and path scopes are never
/// consulted in a run, and compiling them all would triple startup.
pub(crate) struct LazyRegex {
    patterns: Vec<String>,
    regex: OnceLock<Option<Regex>>,
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.patterns).finish()
    }
}

impl LazyRegex {
    fn is_match(&self, haystack: impl AsRef<[u8]>) -> bool {
        self.regex
            .get_or_init(|| {
                let hirs: Vec<Hir> = self
                    .patterns
                    .iter()
                    .filter_map(|p| crate::re2::parse(p).ok().map(|p| p.hir))
                    .collect();
                meta::Regex::builder()
                    .configure(meta::Config::new().utf8_empty(false))
                    .build_many_from_hir(&hirs)
                    .ok()
            })
            .as_ref()
            .is_some_and(|r| r.is_match(haystack.as_ref()))
    }
}

/// Validates `patterns` (syntax and RE2 translation) and defers compiling.
fn compile_set(patterns: &[String]) -> Result<LazyRegex, String> {
    for p in patterns {
        crate::re2::parse(p).map_err(|m| format!("`{p}`: {m}"))?;
    }
    Ok(LazyRegex {
        patterns: patterns.to_vec(),
        regex: OnceLock::new(),
    })
}

/// One compiled rule.
pub(crate) struct Rule {
    /// The pattern as written (RE2); parsed and compiled on first use.
    pattern: Option<String>,
    regex: OnceLock<Result<Regex, String>>,
    secret_group: Option<usize>,
    entropy: Option<f32>,
    keywords: Vec<String>,
    path: Option<LazyRegex>,
    max_len: usize,
    /// `keyword_lead` as written (<= max_len); overrides the inference.
    keyword_lead: Option<usize>,
    /// Window extension before a keyword hit: `keyword_lead`, else inferred
    /// from the regex on first use (`src/lead.rs`), else `max_len`.
    lead: OnceLock<usize>,
    placeholder_check: bool,
    /// `generic = true`: dropped when a provider finding's secret overlaps.
    generic: bool,
    confidence: Option<Confidence>,
    checksum: Option<Checksum>,
    allowlists: Vec<Arc<Allowlist>>,
    config_secrets: Option<LazyRegex>,
    config_paths: Option<LazyRegex>,
    examples: Vec<ExampleSyntax>,
    negative_examples: Vec<ExampleSyntax>,
}

/// `trusted` (built-in files, which the test suite validates) skips parsing
/// the regex now: it is parsed with everything else on the rule's first
/// keyword hit, which is most of what keeps startup in milliseconds.
fn compile_rule(
    r: &RuleSyntax,
    origin: &str,
    trusted: bool,
) -> Result<(Rule, RuleInfo, Vec<Warning>), Error> {
    let err = |m: String| Error::new(Some(origin.into()), Some(r.id.clone()), m);
    let line = r.line;
    let warnings = Vec::new();
    let hir = match &r.regex {
        Some(p) if !trusted => Some(
            crate::re2::parse(p)
                .map_err(|m| err(format!("line {line}: regex: {m}")))?
                .hir,
        ),
        _ => None,
    };
    if r.regex.is_none() && r.path.is_none() {
        return Err(err(format!(
            "line {line}: rule has neither `regex` nor `path`"
        )));
    }
    if let (Some(g), Some(h)) = (r.secret_group, &hir) {
        let groups = h.properties().explicit_captures_len();
        if g > groups {
            return Err(err(format!(
                "line {line}: secretGroup = {g} but the regex has {groups} capture group(s)"
            )));
        }
    }
    if let Some(e) = r.entropy {
        if !(0.0..=8.0).contains(&e) {
            return Err(err(format!(
                "line {line}: entropy = {e}: must be between 0 and 8 bits per byte"
            )));
        }
    }
    let max_len = r.max_len.unwrap_or(DEFAULT_MAX_LEN);
    if max_len == 0 || max_len > 1 << 20 {
        return Err(err(format!(
            "line {line}: max_len = {max_len}: must be between 1 and 1048576"
        )));
    }
    let keyword_lead = r.keyword_lead;
    if let Some(keyword_lead) = keyword_lead.filter(|&l| l > max_len) {
        return Err(err(format!(
            "line {line}: keyword_lead = {keyword_lead} exceeds max_len = {max_len}"
        )));
    }
    let mut keywords = Vec::with_capacity(r.keywords.len());
    for k in &r.keywords {
        if k.is_empty() {
            return Err(err(format!("line {line}: empty keyword")));
        }
        keywords.push(k.to_ascii_lowercase());
    }
    let path = match &r.path {
        Some(p) => Some(
            compile_set(std::slice::from_ref(p))
                .map_err(|m| err(format!("line {line}: path: {m}")))?,
        ),
        None => None,
    };
    let confidence = match r.confidence.as_deref() {
        None => None,
        Some(c) => Some(Confidence::parse(c).ok_or_else(|| {
            err(format!(
                "line {line}: confidence = {c:?}: must be \"high\", \"medium\" or \"low\""
            ))
        })?),
    };
    let checksum = match r.checksum.as_deref() {
        None => None,
        Some(c) => Some(Checksum::parse(c).ok_or_else(|| {
            err(format!(
                "line {line}: checksum = {c:?}: must be \"github-crc32\", \"npm-crc32\", \
                 \"jwt\" or \"pypi-macaroon\""
            ))
        })?),
    };
    let mut allowlists = Vec::new();
    for (i, al) in r.allowlists.iter().chain(r.allowlist.iter()).enumerate() {
        let what = format!("line {line}: allowlist #{}", i + 1);
        allowlists.push(Arc::new(Allowlist::compile(al, &what).map_err(err)?));
    }
    let description = r.description.clone().unwrap_or_default();
    let name = r
        .name
        .clone()
        .or_else(|| r.description.clone())
        .unwrap_or_else(|| r.id.clone());
    let info = RuleInfo {
        id: r.id.as_str().into(),
        name: name.into(),
        description,
        keywords: keywords.clone(),
        origin: origin.to_owned(),
    };
    let rule = Rule {
        pattern: r.regex.clone(),
        regex: OnceLock::new(),
        secret_group: r.secret_group,
        entropy: r.entropy.map(|e| e as f32),
        keywords,
        path,
        max_len,
        keyword_lead,
        lead: OnceLock::new(),
        placeholder_check: r.placeholder_check.unwrap_or(true),
        generic: r.generic.unwrap_or(false),
        confidence,
        checksum,
        allowlists,
        config_secrets: None,
        config_paths: None,
        examples: r.examples.clone(),
        negative_examples: r.negative_examples.clone(),
    };
    Ok((rule, info, warnings))
}

impl Rule {
    /// How far before a keyword hit a match can start (see `lead`).
    fn keyword_lead(&self) -> usize {
        *self.lead.get_or_init(|| {
            if let Some(l) = self.keyword_lead {
                return l;
            }
            let Some(pattern) = &self.pattern else {
                return self.max_len;
            };
            crate::re2::parse(pattern)
                .ok()
                .and_then(|p| crate::lead::infer(&p.hir, &self.keywords))
                .map_or(self.max_len, |l| l.min(self.max_len))
        })
    }

    fn regex(&self) -> Option<&Regex> {
        let pattern = self.pattern.as_ref()?;
        self.regex
            .get_or_init(|| {
                let hir = crate::re2::parse(pattern)?.hir;
                if let Some(g) = self.secret_group {
                    let groups = hir.properties().explicit_captures_len();
                    if g > groups {
                        return Err(format!(
                            "secretGroup = {g} but the regex has {groups} capture group(s)"
                        ));
                    }
                }
                meta::Regex::builder()
                    .configure(meta::Config::new().utf8_empty(false))
                    .build_from_hir(&hir)
                    .map_err(|e| format!("cannot compile regex: {e}"))
            })
            .as_ref()
            .ok()
    }
}

/// Compiled, read-only rule database; share it with `Arc` across workers.
pub struct Engine {
    id: u64,
    rules: Vec<Rule>,
    infos: Vec<RuleInfo>,
    ac: AhoCorasick,
    keywords: Vec<String>,
    kw_rules: Vec<Vec<u32>>,
    unkeyed: Vec<u32>,
    global: Vec<Arc<Allowlist>>,
    config_secrets: Option<LazyRegex>,
    /// Longest `max_len`: a chunk's ownership starts `2 * lead` in, so that
    /// owned matches and the provider matches that may duplicate them get
    /// at least `lead` bytes of left context.
    lead: usize,
    /// Whether any rule is `generic` (otherwise no unowned matches are kept).
    has_generic: bool,
    overlap: usize,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("rules", &self.rules.len())
            .field("keywords", &self.keywords.len())
            .field("max_match_len", &self.overlap)
            .finish()
    }
}

/// One regex match that may become a finding.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    rule: u32,
    m: Span,
    secret: Span,
    entropy: f32,
    /// False for a provider match outside this chunk's ownership, kept only
    /// to de-duplicate the generic findings this chunk owns.
    owned: bool,
}

impl Engine {
    /// The built-in rules, compiled (warnings dropped; the test suite keeps
    /// the built-in set free of them).
    pub fn builtin() -> Result<Engine, Error> {
        let mut b = EngineBuilder::new();
        for f in RuleFile::try_builtin()? {
            b = b.add(f);
        }
        b.build().map(|(e, _)| e)
    }

    /// The rules, in the order of the files and of the rules in each file.
    pub fn rules(&self) -> &[RuleInfo] {
        &self.infos
    }

    /// How many examples and negative examples rule `index` (into
    /// [`rules`](Self::rules)) carries.
    pub fn example_counts(&self, index: usize) -> (usize, usize) {
        let r = &self.rules[index];
        (r.examples.len(), r.negative_examples.len())
    }

    /// The naive baseline of the benchmark: every rule's regex over the
    /// whole buffer, no keywords, no windows, no gates. Returns the number
    /// of matches. Not a scanning API.
    #[doc(hidden)]
    pub fn naive_match_count(&self, data: &[u8], scratch: &mut ScanScratch) -> usize {
        scratch.prepare(self);
        let mut n = 0;
        for (i, rule) in self.rules.iter().enumerate() {
            let Some(regex) = rule.regex() else { continue };
            let cache = scratch.caches[i].get_or_insert_with(|| regex.create_cache());
            let mut at = 0;
            while let Some(m) = regex.search_with(cache, &Input::new(data).range(at..)) {
                n += 1;
                at = m.end().max(m.start() + 1);
                if at > data.len() {
                    break;
                }
            }
        }
        n
    }

    /// How far before a keyword hit rule `index` (into
    /// [`rules`](Self::rules)) looks for a match start: its `keyword_lead`,
    /// else what its regex proves (every match begins with a keyword at
    /// most this many bytes in; `docs/rules.md`), else its `max_len`.
    /// Parses the rule's regex on first call.
    pub fn keyword_lead(&self, index: usize) -> usize {
        self.rules[index].keyword_lead()
    }

    /// The keywords of the stage-1 automaton (lowercase, deduplicated).
    pub fn keywords(&self) -> &[String] {
        &self.keywords
    }

    /// The overlap chunks need: `5 * L + K + 16` where `L` is the longest
    /// `max_len` and `K` the longest keyword. With at least this overlap,
    /// scanning consecutive chunks reports exactly what scanning the whole
    /// buffer reports (see the module docs of `engine.rs` for the argument).
    pub fn max_match_len(&self) -> usize {
        self.overlap
    }

    /// Per-worker scratch; reuse it from file to file.
    pub fn new_scratch(&self) -> ScanScratch {
        let mut s = ScanScratch::default();
        s.prepare(self);
        s
    }

    /// True when the global allowlist allows `path` by itself, so that the
    /// caller can skip the file without reading it.
    pub fn path_allowlisted(&self, path: &str) -> bool {
        self.global.iter().any(|a| a.allows_path_alone(path))
    }

    /// Compiles every rule's regex now (they are otherwise compiled on the
    /// rule's first keyword hit). Reports the first failure.
    pub fn compile_all(&self) -> Result<(), Error> {
        for (rule, info) in self.rules.iter().zip(&self.infos) {
            if rule.pattern.is_some() && rule.regex().is_none() {
                let msg = match rule.regex.get() {
                    Some(Err(m)) => m.clone(),
                    _ => "cannot compile regex".into(),
                };
                return Err(Error::new(
                    Some(info.origin.clone().into()),
                    Some(info.id.to_string()),
                    msg,
                ));
            }
        }
        Ok(())
    }

    /// Scans one buffer (a whole file or one chunk of it), appending the
    /// findings to `out` in order of offset.
    pub fn scan(&self, input: &ScanInput<'_>, scratch: &mut ScanScratch, out: &mut Vec<Finding>) {
        scratch.prepare(self);
        if self.path_allowlisted(input.path) {
            return;
        }
        let data = input.data;
        let len = data.len();
        // Ownership is shifted by 2 LEAD (module docs, "Chunks"); provider
        // matches up to LEAD outside it are collected too, unowned, because
        // a generic finding this chunk owns may duplicate one of them.
        let own_lo = if input.base_offset == 0 {
            0
        } else {
            2 * self.lead
        };
        let own_hi = input.owned_len.saturating_add(2 * self.lead);
        let shadow_lo = own_lo.saturating_sub(self.lead);
        let shadow_hi = own_hi.saturating_add(self.lead);

        let s = &mut *scratch;
        s.windows.clear();
        s.touched.clear();
        s.candidates.clear();
        for (i, rule) in self.rules.iter().enumerate() {
            s.rule_on[i] = match &rule.path {
                None => true,
                Some(p) => p.is_match(input.path),
            };
        }
        // Path-only rules report the file itself, once (first chunk).
        if input.base_offset == 0 {
            for (i, rule) in self.rules.iter().enumerate() {
                if rule.pattern.is_none() && s.rule_on[i] && !self.path_dropped(i, input.path) {
                    s.candidates.push(Candidate {
                        rule: i as u32,
                        m: Span { start: 0, end: 0 },
                        secret: Span { start: 0, end: 0 },
                        entropy: 0.0,
                        owned: true,
                    });
                }
            }
        }

        // Stage 1.
        for hit in self.ac.find_overlapping_iter(data) {
            for &r in &self.kw_rules[hit.pattern().as_usize()] {
                let ri = r as usize;
                if !s.rule_on[ri] {
                    continue;
                }
                let l = self.rules[ri].max_len;
                let ws = hit.start().saturating_sub(self.rules[ri].keyword_lead());
                let we = (hit.end() + l).min(len);
                let open = &mut s.open[ri];
                if open.1 == 0 {
                    s.touched.push(r);
                    *open = (ws, we);
                } else if ws <= open.1 {
                    open.0 = open.0.min(ws);
                    open.1 = open.1.max(we);
                } else {
                    s.windows.push((r, open.0, open.1));
                    *open = (ws, we);
                }
            }
        }
        for &r in &s.touched {
            let open = &mut s.open[r as usize];
            s.windows.push((r, open.0, open.1));
            *open = (0, 0);
        }
        for &r in &self.unkeyed {
            if s.rule_on[r as usize] {
                s.windows.push((r, 0, len));
            }
        }
        s.windows.sort_unstable();

        // Stage 2.
        let mut current = u32::MAX;
        let mut resume = 0;
        for wi in 0..s.windows.len() {
            let (r, ws, we) = s.windows[wi];
            if r != current {
                current = r;
                resume = 0;
            }
            let rule = &self.rules[r as usize];
            let Some(regex) = rule.regex() else { continue };
            let cache = s.caches[r as usize].get_or_insert_with(|| regex.create_cache());
            let caps = s.captures[r as usize].get_or_insert_with(|| regex.create_captures());
            let (lo, hi) = if rule.generic || !self.has_generic {
                (own_lo, own_hi)
            } else {
                (shadow_lo, shadow_hi)
            };
            let mut at = ws.max(resume);
            while at < we && at < hi {
                let found = regex.search_with(cache, &Input::new(data).range(at..we));
                let Some(m) = found else { break };
                if m.start() >= hi {
                    break;
                }
                let cend = (m.start() + rule.max_len).min(len);
                let anchored = Input::new(data)
                    .range(m.start()..cend)
                    .anchored(Anchored::Yes);
                regex.search_captures_with(cache, &anchored, caps);
                let Some(cm) = caps.get_match() else {
                    at = m.end().max(m.start() + 1);
                    continue;
                };
                let cm = cm.span();
                at = cm.end.max(cm.start + 1);
                if cm.start < lo || cm.is_empty() {
                    continue;
                }
                let secret = secret_span(caps, rule.secret_group, cm);
                if secret.is_empty() {
                    continue;
                }
                let entropy = shannon_entropy(&data[secret.range()]);
                s.candidates.push(Candidate {
                    rule: r,
                    m: cm,
                    secret,
                    entropy,
                    owned: (own_lo..own_hi).contains(&cm.start),
                });
            }
            resume = at;
        }

        // Gates: a dropped candidate is marked with an empty match, and
        // counted if this chunk owns it.
        let mut cands = std::mem::take(&mut s.candidates);
        cands.sort_unstable_by_key(|c| (c.secret.start, c.rule, c.m.start));
        s.provider_secrets.clear();
        for c in cands.iter_mut() {
            let rule = &self.rules[c.rule as usize];
            if rule.pattern.is_some() {
                if let Some(reason) = self.gate(c, data, input.path) {
                    if c.owned {
                        s.suppressed.count(reason);
                    }
                    c.m = Span { start: 0, end: 0 };
                    continue;
                }
                if !rule.generic {
                    s.provider_secrets.push(c.secret);
                }
            }
        }

        // De-duplication, then positions.
        let mut pos = input.start;
        let mut pos_at = 0;
        for c in &cands {
            let rule = &self.rules[c.rule as usize];
            if !c.owned || (c.m.is_empty() && rule.pattern.is_some()) {
                continue;
            }
            if rule.generic && overlaps_any(&s.provider_secrets, c.secret, self.lead) {
                s.suppressed.duplicate += 1;
                continue;
            }
            let info = &self.infos[c.rule as usize];
            pos = pos.advance(&data[pos_at..c.secret.start]);
            pos_at = c.secret.start;
            let end = pos.advance(&data[c.secret.range()]);
            let secret = &data[c.secret.range()];
            let mtext = &data[c.m.start..c.m.end.min(c.m.start + MAX_MATCH_TEXT)];
            let (confidence, tags) = crate::confidence::assess(
                rule.confidence,
                rule.checksum,
                rule.generic,
                &rule.keywords,
                secret,
                input.path,
            );
            out.push(Finding {
                rule_id: info.id.clone(),
                rule_name: info.name.clone(),
                line: pos.line,
                column: pos.column,
                end_line: end.line,
                end_column: end.column,
                offset: input.base_offset + c.secret.start as u64,
                end_offset: input.base_offset + c.secret.end as u64,
                r#match: String::from_utf8_lossy(mtext).into_owned(),
                secret: String::from_utf8_lossy(secret).into_owned(),
                entropy: c.entropy,
                confidence,
                tags,
                // A path-only rule has no secret; its finding is the file.
                fingerprint: if rule.pattern.is_none() {
                    fingerprint(&info.id, input.path.as_bytes())
                } else {
                    fingerprint(&info.id, secret)
                },
            });
        }
        cands.clear();
        s.candidates = cands;
    }

    /// Path-scoped drops for a rule (user config and allowlists by path
    /// alone); used for path-only rules, which have no secret.
    fn path_dropped(&self, rule: usize, path: &str) -> bool {
        let r = &self.rules[rule];
        r.config_paths.as_ref().is_some_and(|p| p.is_match(path))
            || r.allowlists.iter().any(|a| a.allows_path_alone(path))
    }

    /// The gates after the regex; `None` keeps the candidate.
    pub(crate) fn gate(&self, c: &Candidate, data: &[u8], path: &str) -> Option<Drop> {
        let rule = &self.rules[c.rule as usize];
        let secret = &data[c.secret.range()];
        if let Some(min) = rule.entropy {
            if c.entropy < min {
                return Some(Drop::Entropy);
            }
        }
        let line = self.line_around(data, c.m);
        if INLINE_MARKERS
            .iter()
            .any(|m| memchr::memmem::find(&data[line.clone()], m).is_some())
        {
            return Some(Drop::Inline);
        }
        if self
            .config_secrets
            .as_ref()
            .is_some_and(|r| r.is_match(secret))
            || rule
                .config_secrets
                .as_ref()
                .is_some_and(|r| r.is_match(secret))
            || rule.config_paths.as_ref().is_some_and(|r| r.is_match(path))
        {
            return Some(Drop::Config);
        }
        for al in rule.allowlists.iter().chain(&self.global) {
            let target = match al.target {
                Target::Secret => secret,
                Target::Match => &data[c.m.range()],
                Target::Line => &data[line.clone()],
            };
            if let Some(d) = al.check(path, secret, target) {
                return Some(d);
            }
        }
        if rule.placeholder_check && is_placeholder(secret) {
            return Some(Drop::Placeholder);
        }
        if rule.generic {
            return crate::generic::confirm(data, line, c.m.range(), c.secret.range(), path)
                .map(Drop::Generic);
        }
        None
    }

    /// The line(s) of a match, bounded to `lead` bytes on each side so that
    /// a chunk always holds the same bytes as the whole buffer.
    fn line_around(&self, data: &[u8], m: Span) -> std::ops::Range<usize> {
        let lo = m.start.saturating_sub(self.lead);
        let hi = (m.end + self.lead).min(data.len());
        let start = memchr::memrchr(b'\n', &data[lo..m.start]).map_or(lo, |i| lo + i + 1);
        let end = memchr::memchr(b'\n', &data[m.end..hi]).map_or(hi, |i| m.end + i);
        start..end
    }

    /// Runs every rule's examples (each must produce a finding of its rule)
    /// and negative examples (none may), and reports those that do not
    /// behave, with the reason. Compiles every regex.
    pub fn check_examples(&self) -> Vec<ExampleFailure> {
        let mut failures = Vec::new();
        let mut scratch = self.new_scratch();
        let mut out = Vec::new();
        for (idx, (rule, info)) in self.rules.iter().zip(&self.infos).enumerate() {
            if rule.pattern.is_some() && rule.regex().is_none() {
                let msg = match rule.regex.get() {
                    Some(Err(m)) => m.clone(),
                    _ => "cannot compile regex".into(),
                };
                failures.push(ExampleFailure {
                    rule_id: info.id.to_string(),
                    example: String::new(),
                    negative: false,
                    reason: msg,
                });
                continue;
            }
            for (negative, ex) in rule
                .examples
                .iter()
                .map(|e| (false, e))
                .chain(rule.negative_examples.iter().map(|e| (true, e)))
            {
                let path = match (ex.path(), &rule.path) {
                    (Some(p), _) => p,
                    (None, None) => "example.txt",
                    (None, Some(_)) => {
                        failures.push(ExampleFailure {
                            rule_id: info.id.to_string(),
                            example: ex.text().to_owned(),
                            negative,
                            reason: "the rule has `path`: write the example as \
                                     { text = '...', path = '...' }"
                                .into(),
                        });
                        continue;
                    }
                };
                out.clear();
                let input = ScanInput {
                    data: ex.text().as_bytes(),
                    path,
                    base_offset: 0,
                    owned_len: ex.text().len(),
                    start: LinePos::START,
                };
                self.scan(&input, &mut scratch, &mut out);
                let mine: Vec<&Finding> = out.iter().filter(|f| *f.rule_id == *info.id).collect();
                let reason = match (negative, mine.first()) {
                    (false, None) if rule.generic && !out.is_empty() => Some(format!(
                        "dropped as a duplicate of the finding of provider rule `{}` \
                         (generic = true): pick an example no provider rule reports",
                        out[0].rule_id
                    )),
                    (false, None) => Some(self.diagnose(idx, ex.text().as_bytes(), path)),
                    (true, Some(f)) => Some(format!(
                        "matched secret `{}` at line {} column {}",
                        f.secret, f.line, f.column
                    )),
                    _ => None,
                };
                if let Some(reason) = reason {
                    failures.push(ExampleFailure {
                        rule_id: info.id.to_string(),
                        example: ex.text().to_owned(),
                        negative,
                        reason,
                    });
                }
            }
        }
        failures
    }

    /// Why rule `idx` finds nothing in `text`: runs its regex over the whole
    /// text, without keywords, and names the gate that drops each match.
    fn diagnose(&self, idx: usize, text: &[u8], path: &str) -> String {
        let rule = &self.rules[idx];
        if rule.path.as_ref().is_some_and(|p| !p.is_match(path)) {
            return format!("the rule's `path` does not match the example path `{path}`");
        }
        let Some(regex) = rule.regex() else {
            return "path-only rule did not report the file".into();
        };
        let mut cache = regex.create_cache();
        let mut caps = regex.create_captures();
        let mut reasons = Vec::new();
        let mut at = 0;
        while at < text.len() {
            regex.search_captures_with(&mut cache, &Input::new(text).range(at..), &mut caps);
            let Some(m) = caps.get_match() else { break };
            at = m.end().max(m.start() + 1);
            let span = m.span();
            if span.len() > rule.max_len {
                reasons.push(format!(
                    "match of {} bytes is longer than max_len = {}",
                    span.len(),
                    rule.max_len
                ));
                continue;
            }
            let secret = secret_span(&caps, rule.secret_group, span);
            let c = Candidate {
                rule: idx as u32,
                m: span,
                secret,
                entropy: shannon_entropy(&text[secret.range()]),
                owned: true,
            };
            let s = String::from_utf8_lossy(&text[secret.range()]);
            reasons.push(match self.gate(&c, text, path) {
                Some(Drop::Entropy) => format!(
                    "secret `{s}` has entropy {:.2} < {}",
                    c.entropy,
                    rule.entropy.unwrap_or(0.0)
                ),
                Some(Drop::Placeholder) => {
                    format!("secret `{s}` looks like a placeholder (see docs/rules.md)")
                }
                Some(d) => format!("secret `{s}` dropped by {d:?}"),
                None => {
                    let lower = String::from_utf8_lossy(text).to_ascii_lowercase();
                    if !rule.keywords.iter().any(|k| lower.contains(k.as_str())) {
                        format!(
                            "secret `{s}` matched but no keyword {:?} occurs",
                            rule.keywords
                        )
                    } else {
                        format!(
                            "secret `{s}` matched but no keyword lies within max_len = {} bytes \
                             (or keyword_lead = {} before the match start)",
                            rule.max_len,
                            rule.keyword_lead()
                        )
                    }
                }
            });
        }
        if reasons.is_empty() {
            "the regex does not match".into()
        } else {
            reasons.join("; ")
        }
    }
}

/// The secret: `secretGroup` if set, else the first capture group that
/// matched, else the whole match.
fn secret_span(caps: &Captures, group: Option<usize>, m: Span) -> Span {
    match group {
        Some(0) => m,
        Some(g) => caps.get_group(g).unwrap_or(Span {
            start: m.start,
            end: m.start,
        }),
        None => (1..caps.group_len())
            .find_map(|g| caps.get_group(g))
            .unwrap_or(m),
    }
}

impl ScanScratch {
    fn prepare(&mut self, engine: &Engine) {
        if self.engine != engine.id {
            let n = engine.rules.len();
            self.engine = engine.id;
            self.caches = (0..n).map(|_| None).collect();
            self.captures = (0..n).map(|_| None).collect();
            self.open = vec![(0, 0); n];
            self.rule_on = vec![false; n];
        }
    }
}

impl Suppressed {
    pub(crate) fn count(&mut self, d: Drop) {
        match d {
            Drop::Entropy => {}
            Drop::Inline => self.inline_allow += 1,
            Drop::Config => self.config_allow += 1,
            Drop::Allowlist => self.allowlist += 1,
            Drop::Stopword => self.stopword += 1,
            Drop::Placeholder => self.placeholder += 1,
            Drop::Generic(Verdict::Code) => self.code_value += 1,
            Drop::Generic(Verdict::IdentifierLike) => self.identifier_like += 1,
            Drop::Generic(Verdict::Encoded) => self.encoded += 1,
            Drop::Generic(Verdict::Stopword) => self.stopword += 1,
        }
    }
}

/// Whether `secret` overlaps one of `spans` (sorted by start, each at most
/// `max` bytes long, so only the last few before `secret.end` can reach it).
fn overlaps_any(spans: &[Span], secret: Span, max: usize) -> bool {
    let before_end = spans.partition_point(|p| p.start < secret.end);
    spans[..before_end]
        .iter()
        .rev()
        .take_while(|p| p.start + max >= secret.start)
        .any(|p| p.end > secret.start)
}
