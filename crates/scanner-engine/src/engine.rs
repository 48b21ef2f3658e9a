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
//! `overlap >= Engine::chunk_overlap()` (`5 LEAD + K + 16`). A chunk with
//! `base_offset > 0` owns the matches *starting* in
//! `[2 LEAD, owned_len + 2 LEAD)` and the first chunk owns
//! `[0, owned_len + 2 LEAD)`, where `LEAD` is the longest window (`max_len`
//! as written or computed from the regex; unbounded regexes get `LEAD`).
//! Consecutive chunks (`b' = b + owned_len`) therefore partition the matches
//! exactly. Provider matches are also computed (never reported) `LEAD`
//! beyond each side: a provider secret overlapping an owned generic secret
//! starts its match less than `LEAD` from the generic match's start, so the
//! duplicate check sees the same provider matches as a whole-buffer scan.
//! Every computed match has at least `LEAD` bytes before it (a `\b`, an
//! inline marker earlier on its line) and, ending by `owned_len + 4 LEAD`
//! with its keyword by `+ K`, everything its window, its anchored re-check
//! and its line gates need after it inside `data`.
//!
//! # Focus
//!
//! [`Engine::scan_focus`] reports the findings of a whole-buffer scan whose
//! secret meets a span (a history version's changes), reading around the
//! span rather than the buffer:
//!
//! 1. Stage 1 walks the keyword automaton over the *zone* (the focus at
//!    first) widened by `2 S + K + 64` bytes on the left and `S + K + 64`
//!    on the right, `S` = [`FOCUS_SHORT_LEN`]: a hit of a rule with
//!    `max_len = L <= S` yields matches in `[start - L, end + 2 L)`, so
//!    this walk sees every hit whose matches may meet the zone (and keeps
//!    only those). The keywords of the long-window rules (private keys,
//!    JWTs, cloud credentials: 17 of 529 built-in rules) are found beyond
//!    the walk, as far as each rule's windows reach, by one memchr pass per
//!    keyword's rarest byte (`RareByteSearch`): an automaton step per byte
//!    over the whole buffer would cost more than the walk saves. With
//!    `quiet` (the caller's word that none of those keywords lies wholly
//!    outside the focus: the previous version held none) that search is
//!    skipped, and the walk tells whether the buffer holds one
//!    ([`ScanScratch::no_long_keywords`], for the next version).
//! 2. Stage 2 runs as in a whole scan (the haystack is the whole buffer).
//! 3. A generic candidate of the focus whose secret reaches out of the
//!    zone (a long-window generic rule) widens the zone to its secret and
//!    the layer is scanned again: the provider matches its duplicate check
//!    needs are those meeting its secret.
//! 4. Gates and duplicates as in a whole scan; only candidates whose
//!    secret meets the focus are counted ([`Suppressed`]) and reported.
//! 5. Decoding takes the literal sequences and runs meeting the focus
//!    (`src/decode.rs`, `focus_runs`), read to their real ends; test code
//!    and positions are computed over the whole buffer, when there are
//!    findings.
//!
//! A pure deletion leaves a focus of the two bytes around the cut (or an
//! empty one): a secret joined by the cut meets them. `tests/focus.rs`
//! checks random edits of real text against the whole scan.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use aho_corasick::AhoCorasick;
use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::{Anchored, Input, Span};
use regex_syntax::hir::Hir;

use crate::confidence::{Checksum, Confidence};
use crate::gates::{fingerprint, is_placeholder, shannon_entropy};
use crate::generic::Verdict;
use crate::keywords::Keywords;
use crate::syntax::{AllowlistSyntax, ExampleSyntax, RuleFile, RuleSyntax};
use crate::{
    Error, ExampleFailure, Finding, LinePos, RuleInfo, ScanInput, ScanScratch, Suppressed, Warning,
    WarningKind,
};

/// The window of a rule whose regex has no longest match (`+`, `*`,
/// `{n,}`) and no `max_len`: at least this many bytes, more when another
/// rule's window is longer (every unbounded rule gets the engine's longest
/// window, which the chunk overlap covers five times over).
pub const UNBOUNDED_WINDOW: usize = 8192;
/// The largest window (`max_len`, or the longest match a regex can have).
/// A regex that can match more than this is treated as unbounded; one whose
/// *shortest* match is longer could never match, and is a build error.
pub const MAX_WINDOW: usize = 1 << 20;
/// The most automaton (Thompson NFA) states a user rule's regex may have:
/// 4x the largest built-in rule (4,525, `kubeconfig-user-token`). A long
/// counted repetition (`.{65535}x`: 65,541 states) makes every search in a
/// window cost states x bytes once the lazy DFA's cache overflows (70 KB
/// holding an `x` every 1000 bytes took 48 s; refused now in 0.03 s); a
/// hostile repository's `.gitleaks.toml`, loaded automatically, must not
/// stall a scan that way. Built-in rules are held to it by the test suite.
pub const MAX_REGEX_STATES: usize = 1 << 14;
/// The most a user rule's states times its window (in bytes) may be: the
/// worst-case work of one keyword hit. 5x the largest built-in product
/// (13 M, `private-key-putty`: 1,597 states, 8 KiB window).
pub const MAX_REGEX_WORK: usize = 1 << 26;
/// The longest regex pattern accepted, checked before parsing it: 64 KiB.
/// The longest built-in pattern is under 1 KiB; parsing holds about 100
/// bytes per pattern byte, so a 10 MB literal would take 1 GB.
pub const MAX_PATTERN_LEN: usize = 64 << 10;

/// Refuses a regex whose search could cost too much (see
/// [`MAX_REGEX_STATES`], [`MAX_REGEX_WORK`]); `window` is the bytes searched
/// per keyword hit ([`Rule::cost_window`]).
fn check_cost(hir: &Hir, window: usize) -> Result<(), String> {
    let advice = "shorten its counted repetitions (`.{65535}`) or split the rule";
    let nfa = regex_automata::nfa::thompson::Compiler::new()
        .configure(
            regex_automata::nfa::thompson::Config::new()
                .nfa_size_limit(Some(10 << 20))
                .shrink(false),
        )
        .build_from_hir(hir)
        .map_err(|e| format!("cannot compile regex: {e}: {advice}"))?;
    let states = nfa.states().len();
    if states > MAX_REGEX_STATES {
        return Err(format!(
            "regex too large: {states} automaton states, more than {MAX_REGEX_STATES}: {advice}"
        ));
    }
    if states.saturating_mul(window) > MAX_REGEX_WORK {
        return Err(format!(
            "regex too costly: {states} automaton states times a {window}-byte window is more \
             than {MAX_REGEX_WORK}: {advice}, or lower `max_len`"
        ));
    }
    Ok(())
}

/// A keyword of at most this many distinct characters (ASCII case folded)
/// has too little information to be a keyword. A keyword hits once per
/// period of its own pattern in a run of it, and runs of one character are
/// what real files are full of (base64 of zeros, `====` rulers, padding,
/// `0000`): `aaaaaaaaaaaaaaaaaaaa` hit at every byte of content of the
/// letter `A`, each hit opening windows, 30 times slower than spaces
/// (100 MB of `A`: 8.4 s before, 0.41 s with this bound; 100 MB of spaces
/// 0.31 s; release build, one run each, same machine).
/// (Runs of a two-character period are rare in real data, while keywords
/// such as `$6$` or `://` have one, so the bound stays at one character.)
/// A rule with such a keyword is compiled as a rule without keywords (its
/// regex, with its own literal prefilter, runs over every byte), with a
/// build warning: it finds at least what it found before, and exactly that
/// when every match holds the keyword. No built-in rule has one (a test
/// builds them with every warning an error).
pub const LOW_INFORMATION: usize = 1;

/// See [`LOW_INFORMATION`].
fn low_information(keyword: &str) -> bool {
    let mut seen = [false; 256];
    let mut distinct = 0;
    for b in keyword.bytes() {
        let b = usize::from(b.to_ascii_lowercase());
        if !seen[b] {
            seen[b] = true;
            distinct += 1;
            if distinct > LOW_INFORMATION {
                return false;
            }
        }
    }
    true
}

/// The matched text in a [`Finding`] is cut to this many bytes.
pub const MAX_MATCH_TEXT: usize = 512;
pub(crate) const INLINE_MARKERS: [&[u8]; 2] = [b"scanner:allow", b"gitleaks:allow"];

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
    decode_depth: Option<usize>,
}

impl EngineBuilder {
    pub fn new() -> Self {
        EngineBuilder::default()
    }

    /// Adds a rule file. A rule of a user file (not built in) whose id or
    /// alias names a rule of an earlier file replaces that rule (gitleaks
    /// semantics; the build reports it as a [`WarningKind::Replaced`]
    /// warning); a name defined twice in one file, or by two built-in
    /// files, is an error at [`build`](Self::build).
    #[allow(clippy::should_implement_trait)] // the name is the CLI's contract
    pub fn add(mut self, file: RuleFile) -> Self {
        self.files.push(file);
        self
    }

    /// Drops rules by id or alias before compiling. An unknown name is a
    /// warning.
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

    /// Per-rule user settings, by id or alias. An unknown (or disabled) name
    /// is an error at [`build`](Self::build).
    pub fn override_rule(mut self, id: &str, settings: RuleOverride) -> Self {
        self.overrides.push((id.to_owned(), settings));
        self
    }

    /// Compile every built-in regex now rather than on its rule's first
    /// keyword hit (user rules are always compiled at build). Default: lazy,
    /// which keeps startup at a few milliseconds.
    pub fn eager(mut self, yes: bool) -> Self {
        self.eager = yes;
        self
    }

    /// How many layers of base64, hex and percent-encoding to decode and
    /// scan again (`docs/decoding.md`). Default 2; 0 turns decoding off.
    /// Source string literals split across lines are reassembled whatever
    /// the depth.
    pub fn decode_depth(mut self, depth: usize) -> Self {
        self.decode_depth = Some(depth);
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
        // Names disabled by the caller, and by files for rules of later
        // files; they apply once every rule is known.
        let mut disabled: Vec<(Option<&str>, &String)> =
            self.disabled.iter().map(|d| (None, d)).collect();
        for f in &self.files {
            for (rule, message) in &f.unknown {
                warnings.push(Warning::new(
                    Some(f.origin.clone().into()),
                    rule.clone(),
                    message.clone(),
                ));
            }
        }
        // Names (ids and aliases). A user rule with the name of a built-in
        // rule, or of a rule from an earlier user file, replaces it (as in
        // gitleaks) and inherits its names; a name defined twice within one
        // file, or among built-in files, is an error.
        let mut owner: HashMap<String, (usize, usize)> = HashMap::new();
        let mut skip: HashSet<(usize, usize)> = HashSet::new();
        let mut inherited: HashMap<(usize, usize), Vec<String>> = HashMap::new();
        let mut off: HashSet<(usize, usize)> = HashSet::new();
        let mut gone: HashSet<&str> = HashSet::new();
        for (fi, f) in self.files.iter().enumerate() {
            // A file's `disabledRules` drops the rules it extends (earlier
            // files) before its own rules are read, as in gitleaks: a
            // file may disable a built-in and define a rule of that id.
            for name in &f.extend.disabled_rules {
                match owner.get(name.as_str()) {
                    Some(&at) => {
                        off.insert(at);
                        owner.retain(|_, v| *v != at);
                        gone.insert(name);
                    }
                    None => disabled.push((Some(&f.origin), name)),
                }
            }
            for (ri, r) in f.rules.iter().enumerate() {
                let own: Vec<&String> = std::iter::once(&r.id).chain(&r.aliases).collect();
                let mut clash = None;
                let mut replaced: Vec<(usize, usize)> = Vec::new();
                for name in &own {
                    let Some(&prev) = owner.get(name.as_str()) else {
                        continue;
                    };
                    if replaced.contains(&prev) {
                        continue;
                    }
                    if prev.0 != fi && !f.trusted {
                        replaced.push(prev);
                    } else {
                        clash = Some((*name, prev));
                        break;
                    }
                }
                if let Some((name, (pfi, pri))) = clash {
                    let prev = &self.files[pfi].rules[pri];
                    let first = &self.files[pfi].origin;
                    let what = if name == &r.id { "rule id" } else { "alias" };
                    let was = if name == &prev.id {
                        "the id"
                    } else {
                        "an alias"
                    };
                    let message = if name == &r.id && name == &prev.id {
                        format!(
                            "line {}: duplicate rule id (first defined in {first})",
                            r.line
                        )
                    } else {
                        format!(
                            "line {}: duplicate {what} `{name}` (already {was} of rule `{}` in {first})",
                            r.line, prev.id
                        )
                    };
                    errors.push(Error::new(
                        Some(f.origin.clone().into()),
                        Some(r.id.clone()),
                        message,
                    ));
                    skip.insert((fi, ri));
                    continue;
                }
                let mut names_here: Vec<String> = own.iter().map(|n| (*n).clone()).collect();
                for (pfi, pri) in replaced {
                    let prev = &self.files[pfi].rules[pri];
                    skip.insert((pfi, pri));
                    owner.retain(|_, v| *v != (pfi, pri));
                    let mut names: Vec<String> = std::iter::once(prev.id.clone())
                        .chain(prev.aliases.iter().cloned())
                        .chain(inherited.remove(&(pfi, pri)).unwrap_or_default())
                        .filter(|n| !names_here.contains(n))
                        .collect();
                    names.dedup();
                    names_here.extend(names.iter().cloned());
                    inherited.entry((fi, ri)).or_default().append(&mut names);
                    let whose = if self.files[pfi].trusted {
                        "the built-in rule"
                    } else {
                        "the rule"
                    };
                    warnings.push(Warning {
                        kind: WarningKind::Replaced,
                        file: Some(f.origin.clone().into()),
                        rule: Some(r.id.clone()),
                        message: format!(
                            "replaces {whose} `{}` from {}",
                            prev.id, self.files[pfi].origin
                        ),
                    });
                }
                for name in names_here {
                    owner.insert(name, (fi, ri));
                }
            }
        }
        // Disabled names, resolved through ids and aliases.
        for (file, id) in disabled {
            match owner.get(id.as_str()) {
                Some(&at) => {
                    off.insert(at);
                }
                None if gone.contains(id.as_str()) => {}
                None => warnings.push(Warning::new(
                    file.map(Into::into),
                    Some(id.clone()),
                    "cannot disable an unknown rule".into(),
                )),
            }
        }

        let mut rules = Vec::new();
        let mut infos = Vec::new();
        let mut global = Vec::new();
        let mut targeted: Vec<(&str, Vec<String>, Arc<Allowlist>)> = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            for (i, al) in f.allowlists.iter().enumerate() {
                let what = format!("global allowlist #{}", i + 1);
                let compiled = Arc::new(
                    Allowlist::compile(al, &what, f.trusted)
                        .map_err(|m| Error::new(Some(f.origin.clone().into()), None, m))?,
                );
                if al.target_rules.is_empty() {
                    global.push(compiled);
                } else {
                    targeted.push((&f.origin, al.target_rules.clone(), compiled));
                }
            }
            for (ri, r) in f.rules.iter().enumerate() {
                if skip.contains(&(fi, ri)) || off.contains(&(fi, ri)) {
                    continue;
                }
                match compile_rule(r, &f.origin, f.trusted) {
                    Ok((rule, mut info, mut w)) => {
                        if let Some(names) = inherited.remove(&(fi, ri)) {
                            info.aliases.extend(names);
                        }
                        // A user rule's search cost is bounded before it
                        // is compiled (`check_cost`); the built-ins are held
                        // to the same bounds by the test suite.
                        // (Never `rule.parsed()` for a built-in: that
                        // would parse every regex at startup.)
                        if !f.trusted {
                            if let Some(Ok(hir)) = rule.parsed() {
                                if let Err(m) = check_cost(hir, rule.cost_window()) {
                                    errors.push(Error::new(
                                        Some(f.origin.clone().into()),
                                        Some(r.id.clone()),
                                        format!("line {}: {m}", r.line),
                                    ));
                                    continue;
                                }
                            }
                        }
                        // A user rule is compiled now: one that parses but
                        // exceeds the compiler's size limit would otherwise
                        // match nothing, silently. Built-ins stay lazy (the
                        // test suite compiles them all).
                        if !f.trusted && rule.pattern.is_some() && rule.regex().is_none() {
                            errors.push(Error::new(
                                Some(f.origin.clone().into()),
                                Some(r.id.clone()),
                                format!("line {}: {}", r.line, rule.compile_error()),
                            ));
                            continue;
                        }
                        warnings.append(&mut w);
                        rules.push(rule);
                        infos.push(info);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        // Unbounded rules scan as far as the chunk overlap allows: the
        // engine's longest window, at least UNBOUNDED_WINDOW and at least
        // their shortest match.
        if rules.iter().any(|r| r.unbounded) {
            let longest = rules.iter().map(|r| r.max_len).max().unwrap_or(0);
            let window = longest.max(UNBOUNDED_WINDOW);
            for r in rules.iter_mut().filter(|r| r.unbounded) {
                r.max_len = window;
            }
        }
        if self.no_lead_inference {
            for rule in &mut rules {
                rule.keyword_lead.get_or_insert(rule.max_len);
            }
        }
        // Every name (id or alias) of every compiled rule.
        let mut names: HashMap<String, usize> = HashMap::new();
        for (idx, info) in infos.iter().enumerate() {
            for n in std::iter::once(&*info.id).chain(info.aliases.iter().map(String::as_str)) {
                names.insert(n.to_owned(), idx);
            }
        }
        for (origin, targets, al) in targeted {
            for t in &targets {
                match names.get(t.as_str()).copied() {
                    Some(idx) => rules[idx].allowlists.push(al.clone()),
                    None => warnings.push(Warning::new(
                        Some(origin.into()),
                        Some(t.clone()),
                        "a global allowlist targets this unknown rule".into(),
                    )),
                }
            }
        }
        for (id, ov) in &self.overrides {
            let Some(idx) = names.get(id.as_str()).copied() else {
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
                // A `path`-scoped rule runs on its few files only; one whose
                // keywords were set aside (`low_information`) was warned of.
                if rule.path.is_some() || !infos[idx].keywords.is_empty() {
                    continue;
                }
                warnings.push(Warning::new(
                    Some(infos[idx].origin.clone().into()),
                    Some(infos[idx].id.to_string()),
                    "no keywords: its regex runs over every byte of every file".into(),
                ));
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
        // Two markers the decode pass needs, found by the plain scan, which
        // reads every byte anyway: `-----begin` starts a split-literal
        // sequence (`src/literals.rs`), `%` a percent escape. Without them
        // the literal and percent passes have nothing to find, and each
        // would otherwise search every buffer again (2% and 0.6% of all
        // instructions on source code). `-----begin` is a prefix of the
        // private-key keywords, so the automaton gains one state at most.
        let mut marker = |k: &str| match keywords.iter().position(|x| x == k) {
            Some(i) => i,
            None => {
                keywords.push(k.to_string());
                kw_rules.push(Vec::new());
                keywords.len() - 1
            }
        };
        let begin_kw = marker(BEGIN_KEYWORD);
        let percent_kw = marker("%");
        let automaton = Keywords::new(&keywords).map_err(|e| Error::new(None, None, e))?;
        // At least the old default window: decoded runs and split string
        // literals are decoded over `2 LEAD` bytes, so a set of short
        // rules must not shrink what decoding can see.
        let lead = rules
            .iter()
            .map(|r| r.max_len)
            .max()
            .unwrap_or(0)
            .max(MIN_LEAD);
        let has_generic = rules.iter().any(|r| r.generic);
        // The keywords of the long-window rules, for `scan_focus`, which
        // searches them over the whole buffer (module docs, "Focus").
        let mut long = RareByteSearch::default();
        for (idx, rule) in rules.iter().enumerate() {
            if rule.pattern.is_none() || rule.max_len <= FOCUS_SHORT_LEN {
                continue;
            }
            for kw in &rule.keywords {
                long.add(kw.as_bytes(), idx as u32, rule.max_len);
            }
        }
        // Chunks overlap by the longest keyword a rule owns (the markers
        // are looked for in the owned range only, well inside a chunk).
        let max_rule_kw = keywords
            .iter()
            .zip(&kw_rules)
            .filter(|(_, rules)| !rules.is_empty())
            .map(|(k, _)| k.len())
            .max()
            .unwrap_or(0);
        let engine = Engine {
            id: NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed),
            rules,
            infos,
            automaton,
            kw_long: keywords.iter().map(|k| long.index(k)).collect(),
            long,
            keywords,
            kw_rules,
            begin_kw,
            percent_kw,
            unkeyed,
            global,
            config_secrets,
            lead,
            has_generic,
            overlap: 5 * lead + max_rule_kw + 16,
            decode_depth: self.decode_depth.unwrap_or(crate::decode::DEFAULT_DEPTH),
            names,
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
pub(crate) enum DropReason {
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
    /// `trusted`: a built-in allowlist, whose regexes the test suite
    /// checks; they are not parsed until first used.
    fn compile(al: &AllowlistSyntax, what: &str, trusted: bool) -> Result<Allowlist, String> {
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
            } else if trusted {
                Ok(Some(LazyRegex::unchecked(v)))
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
    fn check(&self, path: &str, secret: &[u8], target: &[u8]) -> Option<DropReason> {
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
            Some(DropReason::Stopword)
        } else {
            Some(DropReason::Allowlist)
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
    Ok(LazyRegex::unchecked(patterns))
}

impl LazyRegex {
    /// Without validation: for built-in files, which the test suite checks
    /// (parsing them all at build was a sixth of startup).
    fn unchecked(patterns: &[String]) -> LazyRegex {
        LazyRegex {
            patterns: patterns.to_vec(),
            regex: OnceLock::new(),
        }
    }
}

/// One compiled rule.
pub(crate) struct Rule {
    /// The pattern as written (RE2); parsed and compiled on first use.
    pattern: Option<String>,
    /// The pattern parsed, once: both the regex and the `keyword_lead`
    /// inference need it (parsing twice cost as much as a tenth of the
    /// compilation), and the build already parsed rules without `max_len`.
    hir: OnceLock<Result<Hir, String>>,
    regex: OnceLock<Result<Regex, String>>,
    secret_group: Option<usize>,
    entropy: Option<f32>,
    keywords: Vec<String>,
    path: Option<LazyRegex>,
    /// The window after a keyword hit and the longest match: `max_len` as
    /// written, else the regex's longest match, else (`unbounded`) the
    /// engine's longest window.
    max_len: usize,
    /// The regex has no longest match and the rule no `max_len`; while
    /// building, `max_len` holds the regex's shortest match.
    unbounded: bool,
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
    let mut warnings = Vec::new();
    // A rule without `max_len` needs its regex's longest match now, even
    // when trusted: it sizes the window, and the windows size the overlap.
    let hir = match &r.regex {
        Some(p) if !trusted || r.max_len.is_none() => Some(
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
    // The window: `max_len` as written, else the longest match the regex
    // can have, else (unbounded) the engine's longest window, set by the
    // builder once every rule is known (`unbounded`).
    let min_match = hir
        .as_ref()
        .map_or(0, |h| h.properties().minimum_len().unwrap_or(0));
    let (max_len, unbounded) = match r.max_len {
        Some(m) => {
            if m == 0 || m > MAX_WINDOW {
                return Err(err(format!(
                    "line {line}: max_len = {m}: must be between 1 and {MAX_WINDOW}"
                )));
            }
            if min_match > m {
                return Err(err(format!(
                    "line {line}: max_len = {m} but the regex's shortest match is \
                     {min_match} bytes: the rule could never match"
                )));
            }
            (m, false)
        }
        None => match hir.as_ref().and_then(|h| h.properties().maximum_len()) {
            Some(m) if m <= MAX_WINDOW => (m.max(1), false),
            // A path-only rule has no regex; its window is never used.
            _ if hir.is_none() => (1, false),
            _ => {
                if min_match > MAX_WINDOW {
                    return Err(err(format!(
                        "line {line}: the regex's shortest match is {min_match} bytes, \
                         more than the largest window ({MAX_WINDOW} bytes, which bounds \
                         the chunk overlap): the rule could never match"
                    )));
                }
                (min_match.max(1), true)
            }
        },
    };
    let keyword_lead = r.keyword_lead;
    if let Some(keyword_lead) = keyword_lead.filter(|&l| l > max_len && !unbounded) {
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
    // The rule's info keeps its keywords as written.
    let info_keywords = keywords.clone();
    if let Some(k) = keywords.iter().find(|k| low_information(k)) {
        warnings.push(Warning::new(
            Some(origin.into()),
            Some(r.id.clone()),
            format!(
                "keyword `{k}` has too little information (one character repeated, it matches \
                 at every byte of a run such as `AAAA` or `====`): the rule's regex runs over \
                 every byte of every file instead; use a keyword of two characters or more"
            ),
        ));
        keywords.clear();
    }
    let path = match &r.path {
        Some(p) if trusted => Some(LazyRegex::unchecked(std::slice::from_ref(p))),
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
    let validator = match &r.validate {
        None => None,
        Some(v) => {
            let names = r
                .regex
                .as_deref()
                .map(crate::validator::capture_names)
                .unwrap_or_default();
            Some(Arc::new(
                crate::validator::Validator::compile(v, &names)
                    .map_err(|m| err(format!("line {line}: {m}")))?,
            ))
        }
    };
    let mut allowlists = Vec::new();
    for (i, al) in r.allowlists.iter().chain(r.allowlist.iter()).enumerate() {
        let what = format!("line {line}: allowlist #{}", i + 1);
        allowlists.push(Arc::new(
            Allowlist::compile(al, &what, trusted).map_err(err)?,
        ));
    }
    let description = r.description.clone().unwrap_or_default();
    let name = r
        .name
        .clone()
        .or_else(|| r.description.clone())
        .unwrap_or_else(|| r.id.clone());
    let info = RuleInfo {
        id: r.id.as_str().into(),
        aliases: r.aliases.iter().filter(|a| **a != r.id).cloned().collect(),
        name: name.into(),
        description,
        keywords: info_keywords,
        origin: origin.to_owned(),
        validator,
    };
    let rule = Rule {
        pattern: r.regex.clone(),
        hir: hir.map_or_else(OnceLock::new, |h| OnceLock::from(Ok(h))),
        regex: OnceLock::new(),
        secret_group: r.secret_group,
        entropy: r.entropy.map(|e| e as f32),
        keywords,
        path,
        max_len,
        unbounded,
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
                return l.min(self.max_len);
            }
            self.parsed()
                .and_then(Result::ok)
                .and_then(|hir| crate::lead::infer(hir, &self.keywords))
                .map_or(self.max_len, |l| l.min(self.max_len))
        })
    }

    /// The bytes one search of this rule may cover, for [`check_cost`]:
    /// its window; at least [`UNBOUNDED_WINDOW`] for a rule whose regex is
    /// unbounded (its final window is the engine's longest) or that has no
    /// keywords (it searches whole buffers).
    fn cost_window(&self) -> usize {
        if self.unbounded || self.keywords.is_empty() {
            self.max_len.max(UNBOUNDED_WINDOW)
        } else {
            self.max_len
        }
    }

    /// The parsed pattern (`None` for a path-only rule).
    fn parsed(&self) -> Option<Result<&Hir, &String>> {
        let pattern = self.pattern.as_ref()?;
        Some(
            self.hir
                .get_or_init(|| crate::re2::parse(pattern).map(|p| p.hir))
                .as_ref(),
        )
    }

    /// Why [`regex`](Self::regex) gave `None` (call it first).
    fn compile_error(&self) -> String {
        match self.regex.get() {
            Some(Err(m)) => m.clone(),
            _ => "cannot compile regex".into(),
        }
    }

    fn regex(&self) -> Option<&Regex> {
        let hir = self.parsed()?;
        self.regex
            .get_or_init(|| {
                let hir = hir.map_err(Clone::clone)?;
                if let Some(g) = self.secret_group {
                    let groups = hir.properties().explicit_captures_len();
                    if g > groups {
                        return Err(format!(
                            "secretGroup = {g} but the regex has {groups} capture group(s)"
                        ));
                    }
                }
                // A keyed rule's regex runs only in the windows its keywords
                // open, a few hundred bytes: a literal prefilter (and the
                // reverse-inner strategy built on one) saves nothing there,
                // and extracting it cost a fifth of compiling. Unkeyed rules
                // search whole buffers and keep theirs. The JSON is the same
                // on the cargo registry (120 findings); instructions on
                // ripgrep's history 2.579 -> 2.532 G, on 37 MB of crates
                // 832 -> 783 M; the registry's wall time is unchanged.
                let prefilter = self.keywords.is_empty();
                meta::Regex::builder()
                    .configure(
                        meta::Config::new()
                            .utf8_empty(false)
                            .auto_prefilter(prefilter),
                    )
                    .build_from_hir(hir)
                    .map_err(|e| {
                        // The top error says only "error building NFA": the
                        // reason (a size limit) is in its sources.
                        let mut m = format!("cannot compile regex: {e}");
                        let mut src = std::error::Error::source(&e);
                        while let Some(inner) = src {
                            m.push_str(&format!(": {inner}"));
                            src = inner.source();
                        }
                        m
                    })
            })
            .as_ref()
            .ok()
    }
}

/// Always a keyword of the stage-1 automaton, with or without rules: its
/// hits tell the split-literal pass that it has work (see `begin_kw`).
const BEGIN_KEYWORD: &str = "-----begin";

/// The smallest `LEAD` (see [`Engine::chunk_overlap`]).
const MIN_LEAD: usize = 256;
/// `scan_focus`: rules with a `max_len` up to this are searched for near
/// the focus only, from one keyword walk over the focus widened by twice
/// this on the left and once on the right; the others by a search of
/// their keywords as far as their windows reach (module docs, "Focus").
/// 1440 leaves out the rules of 2 KB windows and more, whose keywords
/// are rare; the common keywords of medium windows (`secret`, `user:`,
/// `sl.`) would cost more found over the whole buffer than walked. On the
/// ripgrep history (callgrind, one thread): 4.26 G instructions with 512,
/// 4.11 G with 1440, 4.13 G with 2400.
const FOCUS_SHORT_LEN: usize = 1440;
/// `scan_focus`: bytes of context beyond what a rule's windows need.
const FOCUS_SLACK: usize = 64;

/// `scan_focus`'s search for the long-window rules' keywords over a whole
/// buffer: each keyword is found from one of its bytes, the rarest in
/// source text by [`RARITY`], then compared (ASCII case-insensitively, as
/// the keyword automaton matches) where that byte stands. One memchr pass
/// per chosen byte; `://` or `secret` cost a comparison per `:` or `c`,
/// not an automaton step per byte. An occurrence is found once, from the
/// first place of its chosen byte in the keyword.
#[derive(Default)]
struct RareByteSearch {
    /// Lowercase keywords, and the rules owning each.
    keywords: Vec<Vec<u8>>,
    rules: Vec<Vec<u32>>,
    /// Per chosen byte (lowercase): the keywords it finds, where the byte
    /// stands in each, and the longest `max_len` of their rules.
    by_byte: Vec<ByteKeywords>,
    /// Per keyword: the index of its entry in `by_byte`.
    byte_of: Vec<usize>,
    max_len: usize,
}

/// The keywords [`RareByteSearch`] finds from one byte.
struct ByteKeywords {
    /// Lowercase.
    byte: u8,
    /// Keyword index, and where the byte stands in the keyword.
    keywords: Vec<(u32, usize)>,
    /// The longest `max_len` of their rules.
    max_len: usize,
}

/// Bytes from the rarest to the most frequent in source text and prose
/// (a rough order: rare letters, digits, then punctuation and common
/// letters); a byte not listed counts as rarer than all.
const RARITY: &[u8] = b"zqxjkv98765432bp10ygfwmu_-.:/=cldrhsnioate ";

impl RareByteSearch {
    /// The index of `keyword` (lowercase), if a long rule owns it.
    fn index(&self, keyword: &str) -> Option<u32> {
        let k = self.keywords.iter().position(|x| x == keyword.as_bytes())?;
        Some(k as u32)
    }

    fn add(&mut self, keyword: &[u8], rule: u32, max_len: usize) {
        let k = match self.keywords.iter().position(|x| x == keyword) {
            Some(k) => k,
            None => {
                self.keywords.push(keyword.to_vec());
                self.rules.push(Vec::new());
                let rank = |b: u8| RARITY.iter().position(|&r| r == b).map_or(0, |i| i + 1);
                let Some((off, &b)) = keyword.iter().enumerate().min_by_key(|(_, &b)| rank(b))
                else {
                    return;
                };
                let k = self.keywords.len() - 1;
                match self.by_byte.iter().position(|e| e.byte == b) {
                    Some(i) => {
                        self.by_byte[i].keywords.push((k as u32, off));
                        self.byte_of.push(i);
                    }
                    None => {
                        self.by_byte.push(ByteKeywords {
                            byte: b,
                            keywords: vec![(k as u32, off)],
                            max_len: 0,
                        });
                        self.byte_of.push(self.by_byte.len() - 1);
                    }
                }
                self.max_len = self.max_len.max(keyword.len());
                k
            }
        };
        let entry = &mut self.by_byte[self.byte_of[k]];
        entry.max_len = entry.max_len.max(max_len);
        if !self.rules[k].contains(&rule) {
            self.rules[k].push(rule);
        }
    }

    /// Appends `(end, start, keyword)`, unordered, for every occurrence
    /// whose rules' windows may reach `zone` (`2 max_len` before it,
    /// `max_len` after, and FOCUS_SLACK) and that does not lie wholly in
    /// `walked` (where the keyword automaton found it); and some that do,
    /// within the longest keyword of its edges.
    fn find(
        &self,
        data: &[u8],
        zone: &Range<usize>,
        walked: Range<usize>,
        out: &mut Vec<(usize, usize, u32)>,
    ) {
        for entry in &self.by_byte {
            let far = self.far(entry, zone, data.len());
            // The chosen byte of an occurrence wholly in `walked` lies in
            // `walked` shortened by the longest keyword at each end.
            let inner = (walked.start + self.max_len).min(walked.end)
                ..walked.end.saturating_sub(self.max_len).max(walked.start);
            let left = far.start..far.end.min(inner.start).max(far.start);
            let right = inner.end.max(far.start).min(far.end)..far.end;
            // (Overlapping when `walked` is short: `out` is de-duplicated.)
            self.find_byte(data, entry.byte, &entry.keywords, left, out);
            self.find_byte(data, entry.byte, &entry.keywords, right, out);
        }
    }

    /// Where [`find`](Self::find) looks for `entry`'s keywords around
    /// `zone`, in a buffer of `len` bytes: as far as their rules' windows
    /// reach (`2 max_len` before, `max_len` after), and FOCUS_SLACK.
    fn far(&self, entry: &ByteKeywords, zone: &Range<usize>, len: usize) -> Range<usize> {
        let k = FOCUS_SLACK + self.max_len;
        zone.start.saturating_sub(2 * entry.max_len + k)..(zone.end + entry.max_len + k).min(len)
    }

    /// Whether [`find`](Self::find) around `zone` searches every byte of a
    /// buffer of `len` bytes, for every keyword.
    fn reaches_all(&self, len: usize, zone: &Range<usize>) -> bool {
        self.by_byte
            .iter()
            .all(|e| self.far(e, zone, len) == (0..len))
    }

    fn find_byte(
        &self,
        data: &[u8],
        b: u8,
        list: &[(u32, usize)],
        range: Range<usize>,
        out: &mut Vec<(usize, usize, u32)>,
    ) {
        if range.is_empty() {
            return;
        }
        let hay = &data[range.clone()];
        {
            let mut check = |i: usize| {
                let at = range.start + i;
                for &(k, off) in list {
                    let kw = &self.keywords[k as usize];
                    let Some(start) = at.checked_sub(off) else {
                        continue;
                    };
                    // The first byte first: most places of a frequent
                    // byte fail there.
                    if start + kw.len() <= data.len()
                        && data[start].to_ascii_lowercase() == kw[0]
                        && data[start..start + kw.len()].eq_ignore_ascii_case(kw)
                    {
                        out.push((start + kw.len(), start, k));
                    }
                }
            };
            let upper = b.to_ascii_uppercase();
            if upper == b {
                memchr::memchr_iter(b, hay).for_each(&mut check);
            } else {
                memchr::memchr2_iter(b, upper, hay).for_each(&mut check);
            }
        }
    }
}

/// Compiled, read-only rule database; share it with `Arc` across workers.
pub struct Engine {
    id: u64,
    rules: Vec<Rule>,
    infos: Vec<RuleInfo>,
    /// Stage 1: every keyword's occurrences ([`Keywords`]).
    automaton: Keywords,
    /// The keywords of the rules whose `max_len` exceeds
    /// [`FOCUS_SHORT_LEN`], and their rules: `scan_focus` searches them
    /// over the whole buffer (module docs, "Focus").
    long: RareByteSearch,
    /// Per keyword of `automaton`: its index in `long`, if a long rule owns it.
    kw_long: Vec<Option<u32>>,
    keywords: Vec<String>,
    kw_rules: Vec<Vec<u32>>,
    /// The indexes of [`BEGIN_KEYWORD`] and `%` in `keywords`: markers
    /// for the decode pass ([`ScanScratch`]'s `begin_seen`, `percent_seen`).
    begin_kw: usize,
    percent_kw: usize,
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
    decode_depth: usize,
    /// Ids and aliases to rule indexes.
    names: HashMap<String, usize>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("rules", &self.rules.len())
            .field("keywords", &self.keywords.len())
            .field("chunk_overlap", &self.overlap)
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
    /// Dropped by an allow decision but kept for the caller to list
    /// ([`ScanScratch::keep_allowed`]): the reason's label.
    allowed: Option<&'static str>,
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

    /// The named capture groups of rule `rule_id`'s regex in its first match
    /// in `text` (a finding's `match`), for validator templates.
    pub fn named_captures(&self, rule_id: &str, text: &str) -> Vec<(String, String)> {
        let Some(i) = self.infos.iter().position(|r| &*r.id == rule_id) else {
            return Vec::new();
        };
        let Some(regex) = self.rules[i].regex() else {
            return Vec::new();
        };
        let mut caps = regex.create_captures();
        regex.captures(text.as_bytes(), &mut caps);
        if !caps.is_match() {
            return Vec::new();
        }
        let names = regex
            .group_info()
            .pattern_names(regex_automata::PatternID::ZERO);
        names
            .enumerate()
            .filter_map(|(g, name)| {
                let span = caps.get_group(g)?;
                Some((name?.to_owned(), text[span.range()].to_owned()))
            })
            .collect()
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
        for rule in self.rules.iter() {
            let Some(regex) = rule.regex() else { continue };
            let mut at = 0;
            while let Some(m) = regex.search(&Input::new(data).range(at..)) {
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

    /// The canonical id of the rule that `name` (an id or an alias, such as
    /// a gitleaks rule id) names, if a rule of this engine has it. For
    /// baselines, ignore lists and configuration written with either.
    pub fn resolve_rule_id(&self, name: &str) -> Option<Arc<str>> {
        self.names.get(name).map(|&i| self.infos[i].id.clone())
    }

    /// The keywords of the stage-1 automaton (lowercase, deduplicated),
    /// with `-----begin` and `%`, which no rule needs to own: they tell the
    /// decode pass whether it has split literals or escapes to look for.
    pub fn keywords(&self) -> &[String] {
        &self.keywords
    }

    /// The overlap chunks need: `5 * L + K + 16` where `L` is the longest
    /// window (`max_len`, as written or computed from the regex) and `K`
    /// the longest keyword; every window is at most `L`. With at least this overlap,
    /// scanning consecutive chunks reports exactly what scanning the whole
    /// buffer reports (see the module docs of `engine.rs` for the argument).
    pub fn chunk_overlap(&self) -> usize {
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
                return Err(Error::new(
                    Some(info.origin.clone().into()),
                    Some(info.id.to_string()),
                    rule.compile_error(),
                ));
            }
        }
        Ok(())
    }

    /// Scans one buffer (a whole file or one chunk of it), appending the
    /// findings to `out` in order of offset. Encoded text and split string
    /// literals are decoded and scanned too (`src/decode.rs`).
    pub fn scan(&self, input: &ScanInput<'_>, scratch: &mut ScanScratch, out: &mut Vec<Finding>) {
        let first = out.len();
        self.scan_layer(input, scratch, out, false);
        crate::decode::rescan(self, input, scratch, out, first, None);
        // Looked up only when there are findings: most buffers have none.
        if out.len() > first {
            if let Some(t) = crate::confidence::test_code_start(input.data, input.path) {
                let from = input.base_offset + t as u64;
                for f in out[first..].iter_mut().filter(|f| f.offset >= from) {
                    crate::confidence::mark_test_code(&mut f.confidence, &mut f.tags);
                }
            }
        }
    }

    /// Scans a whole buffer for the findings whose secret span
    /// `[offset, end_offset)` intersects `focus` (`end_offset > focus.start
    /// && offset < focus.end`, so an empty focus still keeps a secret that
    /// straddles it): exactly those of [`scan`](Self::scan), in the same
    /// order with the same fields, for work proportional to the focus and
    /// the rules' windows around it rather than to the buffer (module docs,
    /// "Focus"). Suppressed candidates are counted only when their secret
    /// intersects the focus. `input` is a whole buffer (`base_offset` 0,
    /// owning every byte), not a chunk.
    ///
    /// `quiet`: the caller knows that no keyword of a long-window rule lies
    /// wholly outside `focus` (module docs, "Focus", step 1): the buffer is
    /// a new version of one whose scan left
    /// [`ScanScratch::no_long_keywords`] true, and `focus` covers what
    /// changed between them. The search for those keywords beyond the
    /// focus's surroundings is then skipped.
    pub fn scan_focus(
        &self,
        input: &ScanInput<'_>,
        focus: Range<usize>,
        quiet: bool,
        scratch: &mut ScanScratch,
        out: &mut Vec<Finding>,
    ) {
        debug_assert_eq!(input.base_offset, 0, "scan_focus takes whole buffers");
        let input = ScanInput {
            owned_len: input.data.len(),
            base_offset: 0,
            ..*input
        };
        let end = focus.end.min(input.data.len());
        let focus = focus.start.min(end)..end;
        let first = out.len();
        // At most twice: the second time with the zone widened to the
        // generic secrets that reach out of it.
        let mut zone = focus.clone();
        while let Some(wider) =
            self.scan_layer_in(&input, scratch, out, false, Some((&focus, &zone, quiet)))
        {
            zone = wider;
        }
        crate::decode::rescan(self, &input, scratch, out, first, Some(&focus));
        if out.len() > first {
            if let Some(t) = crate::confidence::test_code_start(input.data, input.path) {
                let from = t as u64;
                for f in out[first..].iter_mut().filter(|f| f.offset >= from) {
                    crate::confidence::mark_test_code(&mut f.confidence, &mut f.tags);
                }
            }
        }
    }

    /// Longest `max_len` (see the module docs, "Chunks").
    pub(crate) fn lead(&self) -> usize {
        self.lead
    }

    /// See [`EngineBuilder::decode_depth`].
    pub fn decode_depth(&self) -> usize {
        self.decode_depth
    }

    /// One scan of `input.data` as it is. `nested`: the data is decoded
    /// text, not a file, so path-only rules do not report it.
    pub(crate) fn scan_layer(
        &self,
        input: &ScanInput<'_>,
        scratch: &mut ScanScratch,
        out: &mut Vec<Finding>,
        nested: bool,
    ) {
        self.scan_layer_in(input, scratch, out, nested, None);
    }

    /// [`scan_layer`](Self::scan_layer), or with `focus = (focus, zone,
    /// quiet)` only the findings whose secret intersects `focus`, computing
    /// the candidates whose match may intersect `zone` (which holds
    /// `focus`; `quiet` as for [`scan_focus`](Self::scan_focus)).
    /// Returns, before gating anything, a wider zone when a generic
    /// candidate of the focus has a secret reaching out of `zone`: the
    /// provider matches it may duplicate must be computed (module docs,
    /// "Focus").
    fn scan_layer_in(
        &self,
        input: &ScanInput<'_>,
        scratch: &mut ScanScratch,
        out: &mut Vec<Finding>,
        nested: bool,
        focus: Option<(&Range<usize>, &Range<usize>, bool)>,
    ) -> Option<Range<usize>> {
        scratch.prepare(self);
        scratch.begin_seen = false;
        scratch.percent_seen = false;
        if !nested {
            scratch.no_long_keywords = false;
        }
        if self.path_allowlisted(input.path) {
            return None;
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
        // Decoded text of the same file keeps the file's path scopes.
        if !nested {
            for (i, rule) in self.rules.iter().enumerate() {
                s.rule_on[i] = match &rule.path {
                    None => true,
                    Some(p) => p.is_match(input.path),
                };
            }
        }
        // Path-only rules report the file itself, once (first chunk); their
        // finding spans no byte, so it never intersects a focus.
        if input.base_offset == 0 && !nested && focus.is_none() {
            for (i, rule) in self.rules.iter().enumerate() {
                if rule.pattern.is_none() && s.rule_on[i] && !self.path_dropped(i, input.path) {
                    s.candidates.push(Candidate {
                        rule: i as u32,
                        m: Span { start: 0, end: 0 },
                        secret: Span { start: 0, end: 0 },
                        entropy: 0.0,
                        owned: true,
                        allowed: None,
                    });
                }
            }
        }

        // Stage 1.
        let open_window = |s: &mut ScanScratch, r: u32, start: usize, end: usize| {
            let ri = r as usize;
            let l = self.rules[ri].max_len;
            let ws = start.saturating_sub(self.rules[ri].keyword_lead());
            let we = (end + l).min(len);
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
        };
        // Whether a keyword of a long-window rule was met, or not looked
        // for everywhere: `no_long_keywords` is then false.
        let mut long_seen = false;
        match focus {
            None => self.automaton.hits(data, |kw, start, end| {
                s.begin_seen |= kw == self.begin_kw;
                s.percent_seen |= kw == self.percent_kw;
                long_seen |= self.kw_long[kw].is_some();
                for &r in &self.kw_rules[kw] {
                    if s.rule_on[r as usize] {
                        open_window(s, r, start, end);
                    }
                }
            }),
            Some((_, zone, quiet)) => {
                // A hit of rule `r` yields matches in `[start - max_len,
                // end + 2 max_len)` (its window, then a match starting at
                // the window's end); FOCUS_SLACK more on each side.
                let near = |r: usize, start: usize, end: usize| {
                    let l = self.rules[r].max_len;
                    end + 2 * l + FOCUS_SLACK > zone.start && start < zone.end + l + FOCUS_SLACK
                };
                // Short rules: their hits near the zone, from one walk.
                let a = zone
                    .start
                    .saturating_sub(2 * FOCUS_SHORT_LEN + self.automaton.max_len() + FOCUS_SLACK);
                let b =
                    (zone.end + FOCUS_SHORT_LEN + self.automaton.max_len() + FOCUS_SLACK).min(len);
                s.long_hits.clear();
                self.automaton.hits(&data[a..b], |kw, start, end| {
                    let (start, end) = (a + start, a + end);
                    if let Some(k) = self.kw_long[kw] {
                        s.long_hits.push((end, start, k));
                    }
                    for &r in &self.kw_rules[kw] {
                        let ri = r as usize;
                        if s.rule_on[ri]
                            && self.rules[ri].max_len <= FOCUS_SHORT_LEN
                            && near(ri, start, end)
                        {
                            open_window(s, r, start, end);
                        }
                    }
                });
                // Long rules: their keywords beyond the walk, as far as
                // their windows reach; none there when the caller knows the
                // bytes outside the focus (beyond the walk) hold none.
                let searched_all = quiet || self.long.reaches_all(len, zone);
                if !quiet {
                    self.long.find(data, zone, a..b, &mut s.long_hits);
                }
                long_seen = !s.long_hits.is_empty() || !searched_all;
                s.long_hits.sort_unstable();
                s.long_hits.dedup();
                for i in 0..s.long_hits.len() {
                    let (end, start, kw) = s.long_hits[i];
                    for &r in &self.long.rules[kw as usize] {
                        let ri = r as usize;
                        if s.rule_on[ri] && near(ri, start, end) {
                            open_window(s, r, start, end);
                        }
                    }
                }
            }
        }
        // A whole buffer, or a focus whose long-window keywords were all
        // looked for: none met.
        let whole = input.base_offset == 0 && input.owned_len >= len;
        if !nested {
            s.no_long_keywords = !long_seen && (whole || focus.is_some());
        }
        for &r in &s.touched {
            let open = &mut s.open[r as usize];
            s.windows.push((r, open.0, open.1));
            *open = (0, 0);
        }
        for &r in &self.unkeyed {
            if s.rule_on[r as usize] {
                let (ws, we) = match focus {
                    None => (0, len),
                    Some((_, zone, _)) => {
                        let l = self.rules[r as usize].max_len;
                        (
                            zone.start.saturating_sub(2 * l + FOCUS_SLACK),
                            (zone.end + l + FOCUS_SLACK).min(len),
                        )
                    }
                };
                s.windows.push((r, ws, we));
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
            let caps = s.captures[r as usize].get_or_insert_with(|| regex.create_captures());
            let (lo, hi) = if rule.generic || !self.has_generic {
                (own_lo, own_hi)
            } else {
                (shadow_lo, shadow_hi)
            };
            let mut at = ws.max(resume);
            while at < we && at < hi {
                // The regex's own pool of caches, not one per worker: a
                // cache (lazy DFA states, sparse sets sized by the NFA) is
                // hundreds of KB for the large rules, and the pool holds
                // as many as are in use at once, which is about the number
                // of cores, not of threads.
                let found = regex.search(&Input::new(data).range(at..we));
                let Some(m) = found else { break };
                if m.start() >= hi {
                    break;
                }
                let cend = (m.start() + rule.max_len).min(len);
                let anchored = Input::new(data)
                    .range(m.start()..cend)
                    .anchored(Anchored::Yes);
                regex.search_captures(&anchored, caps);
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
                    allowed: None,
                });
            }
            resume = at;
        }

        // The secret of a finding (its `offset..end_offset`) meets the focus.
        let in_focus = |secret: Span| {
            focus.is_none_or(|(f, _, _)| secret.end > f.start && secret.start < f.end)
        };
        if let Some((_, zone, _)) = focus {
            let (mut lo, mut hi) = (zone.start, zone.end);
            for c in &s.candidates {
                if self.rules[c.rule as usize].generic && in_focus(c.secret) {
                    lo = lo.min(c.secret.start);
                    hi = hi.max(c.secret.end);
                }
            }
            if (lo, hi) != (zone.start, zone.end) {
                s.candidates.clear();
                return Some(lo..hi);
            }
        }

        // Gates: a dropped candidate is marked with an empty match, and
        // counted if this chunk owns it (and it meets the focus); one an
        // allow decision dropped is marked `allowed` instead when the
        // caller keeps those.
        let mut cands = std::mem::take(&mut s.candidates);
        cands.sort_unstable_by_key(|c| (c.secret.start, c.rule, c.m.start));
        s.provider_secrets.clear();
        // A generic candidate that an allowlist drops may be a provider's secret (the generic
        // rules allowlist the provider shapes): decided once every provider secret is known.
        let mut generic_allowlisted = Vec::new();
        for (i, c) in cands.iter_mut().enumerate() {
            let rule = &self.rules[c.rule as usize];
            if rule.pattern.is_some() {
                if let Some(reason) = self.gate(c, data, input.path) {
                    if rule.generic && reason == DropReason::Allowlist {
                        generic_allowlisted.push(i);
                        continue;
                    }
                    match reason.allow_label() {
                        Some(label) if s.keep_allowed => c.allowed = Some(label),
                        _ => {
                            if c.owned && in_focus(c.secret) {
                                s.suppressed.count(reason);
                            }
                            c.m = Span { start: 0, end: 0 };
                        }
                    }
                    continue;
                }
                if !rule.generic {
                    s.provider_secrets.push(c.secret);
                }
            }
        }
        // Counted as the duplicate it is when it overlaps a provider's secret, not as an
        // allowlist drop.
        for i in generic_allowlisted {
            let c = &mut cands[i];
            let duplicate = overlaps_any(&s.provider_secrets, c.secret, self.lead);
            if !duplicate && s.keep_allowed {
                c.allowed = DropReason::Allowlist.allow_label();
                continue;
            }
            if c.owned && in_focus(c.secret) {
                if duplicate {
                    s.suppressed.duplicate += 1;
                } else {
                    s.suppressed.count(DropReason::Allowlist);
                }
            }
            c.m = Span { start: 0, end: 0 };
        }

        // De-duplication, then positions.
        // For a JWT's `exp` (offline evidence); no clock read for a clean buffer.
        let now = if cands.is_empty() {
            0
        } else {
            crate::validation::unix_now()
        };
        let mut pos = input.start;
        let mut pos_at = 0;
        for c in &cands {
            let rule = &self.rules[c.rule as usize];
            if !c.owned || (c.m.is_empty() && rule.pattern.is_some()) || !in_focus(c.secret) {
                continue;
            }
            // An allowed candidate is counted under its allow reason, as it
            // is when allowed candidates are not kept.
            if rule.generic
                && c.allowed.is_none()
                && overlaps_any(&s.provider_secrets, c.secret, self.lead)
            {
                s.suppressed.duplicate += 1;
                continue;
            }
            let info = &self.infos[c.rule as usize];
            pos = pos.advance(&data[pos_at..c.secret.start]);
            pos_at = c.secret.start;
            let end = pos.advance(&data[c.secret.range()]);
            let secret = &data[c.secret.range()];
            let mtext = &data[c.m.start..c.m.end.min(c.m.start + MAX_MATCH_TEXT)];
            let (confidence, tags, verified) = crate::confidence::assess(
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
                decoded: Vec::new(),
                allowed: c.allowed,
                validation: crate::validation::offline_evidence(
                    rule.checksum,
                    verified,
                    secret,
                    now,
                ),
                captures: if info.validator.is_some() && c.m.end - c.m.start > MAX_MATCH_TEXT {
                    self.named_captures(
                        &info.id,
                        &String::from_utf8_lossy(&data[c.m.start..c.m.end]),
                    )
                } else {
                    Vec::new()
                },
            });
        }
        cands.clear();
        s.candidates = cands;
        None
    }

    /// Path-scoped drops for a rule (user config and allowlists by path
    /// alone); used for path-only rules, which have no secret.
    fn path_dropped(&self, rule: usize, path: &str) -> bool {
        let r = &self.rules[rule];
        r.config_paths.as_ref().is_some_and(|p| p.is_match(path))
            || r.allowlists.iter().any(|a| a.allows_path_alone(path))
    }

    /// The gates after the regex; `None` keeps the candidate.
    pub(crate) fn gate(&self, c: &Candidate, data: &[u8], path: &str) -> Option<DropReason> {
        let rule = &self.rules[c.rule as usize];
        let secret = &data[c.secret.range()];
        if let Some(min) = rule.entropy {
            if c.entropy < min {
                return Some(DropReason::Entropy);
            }
        }
        let line = self.line_around(data, c.m);
        if INLINE_MARKERS
            .iter()
            .any(|m| memchr::memmem::find(&data[line.clone()], m).is_some())
        {
            return Some(DropReason::Inline);
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
            return Some(DropReason::Config);
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
            return Some(DropReason::Placeholder);
        }
        if rule.generic {
            return crate::generic::confirm(data, line, c.m.range(), c.secret.range(), path)
                .map(DropReason::Generic);
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
                // Every example fails for the same reason: say it for each.
                let reason = rule.compile_error();
                let all: Vec<(bool, &str)> = rule
                    .examples
                    .iter()
                    .map(|e| (false, e.text()))
                    .chain(rule.negative_examples.iter().map(|e| (true, e.text())))
                    .collect();
                if all.is_empty() {
                    failures.push(ExampleFailure {
                        rule_id: info.id.to_string(),
                        example: String::new(),
                        negative: false,
                        reason: reason.clone(),
                    });
                }
                for (negative, text) in all {
                    failures.push(ExampleFailure {
                        rule_id: info.id.to_string(),
                        example: text.to_owned(),
                        negative,
                        reason: reason.clone(),
                    });
                }
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
                allowed: None,
            };
            let s = String::from_utf8_lossy(&text[secret.range()]);
            reasons.push(match self.gate(&c, text, path) {
                Some(DropReason::Entropy) => format!(
                    "secret `{s}` has entropy {:.2} < {}",
                    c.entropy,
                    rule.entropy.unwrap_or(0.0)
                ),
                Some(DropReason::Placeholder) => {
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
            self.captures = (0..n).map(|_| None).collect();
            self.open = vec![(0, 0); n];
            self.rule_on = vec![false; n];
        }
    }
}

impl DropReason {
    /// The [`Suppressed::by_reason`] label of a drop that is an allow
    /// decision (someone said "this is fine": a marker, an allowlist, the
    /// config), which `ScanScratch::keep_allowed` keeps; `None` for the
    /// drops that judge the candidate itself.
    fn allow_label(self) -> Option<&'static str> {
        match self {
            DropReason::Inline => Some("inline allow"),
            DropReason::Allowlist => Some("allowlist"),
            DropReason::Stopword => Some("stopword"),
            DropReason::Config => Some("config allow_secrets"),
            DropReason::Entropy | DropReason::Placeholder | DropReason::Generic(_) => None,
        }
    }
}

impl Suppressed {
    pub(crate) fn count(&mut self, d: DropReason) {
        match d {
            DropReason::Entropy => self.entropy += 1,
            DropReason::Inline => self.inline_allow += 1,
            DropReason::Config => self.config_allow += 1,
            DropReason::Allowlist => self.allowlist += 1,
            DropReason::Stopword => self.stopword += 1,
            DropReason::Placeholder => self.placeholder += 1,
            DropReason::Generic(Verdict::Code) => self.code_value += 1,
            DropReason::Generic(Verdict::IdentifierLike) => self.identifier_like += 1,
            DropReason::Generic(Verdict::Encoded) => self.encoded += 1,
            DropReason::Generic(Verdict::Stopword) => self.stopword += 1,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule whose regex parses but exceeds regex-automata's default NFA
    /// size limit; `trusted` as the built-in files are.
    fn file(trusted: bool) -> RuleFile {
        let text = r#"
[[rules]]
id = "big"
regex = '''(?:[\p{L}\p{N}]{8,256}[-_.]?){8}'''
keywords = ["k"]
max_len = 4096
examples = ["k abcdefgh", "k 12345678"]
negative_examples = ["k ab"]
"#;
        let mut f = RuleFile::parse(text, "big.toml").unwrap();
        f.trusted = trusted;
        f
    }

    #[test]
    fn user_rule_over_the_size_limit_fails_the_build() {
        let e = EngineBuilder::new().add(file(false)).build().unwrap_err();
        assert_eq!(e.file(), Some(std::path::Path::new("big.toml")));
        assert_eq!(e.rule(), Some("big"));
        assert!(
            e.message().starts_with("line 2: cannot compile regex: "),
            "{e}"
        );
        assert!(e.message().contains("exceeded limit of 10485760"), "{e}");
    }

    #[test]
    fn a_costly_user_rule_is_refused_naming_it() {
        let build = |text: &str| {
            EngineBuilder::new()
                .add(RuleFile::parse(text, "slow.toml").unwrap())
                .build()
                .unwrap_err()
        };
        let e = build("[[rules]]\nid = \"slow\"\nregex = '''.{65535}x'''\nkeywords = [\"x\"]\n");
        assert_eq!(e.file(), Some(std::path::Path::new("slow.toml")));
        assert_eq!(e.rule(), Some("slow"));
        assert_eq!(
            e.message(),
            "line 1: regex too large: 65541 automaton states, more than 16384: shorten its \
             counted repetitions (`.{65535}`) or split the rule"
        );
        // Fewer states, but each hit would search 64 KiB with them.
        let e = build(
            "[[rules]]\nid = \"slow\"\nregex = '''x.{9000}'''\nkeywords = [\"x\"]\n\
             max_len = 65536\n",
        );
        assert!(
            e.message()
                .starts_with("line 1: regex too costly: 9006 automaton states times a 65536-byte"),
            "{e}"
        );
        // A pattern above the length bound is refused before it is parsed.
        let e = build(&format!(
            "[[rules]]\nid = \"big\"\nregex = '''{}'''\nkeywords = [\"x\"]\n",
            "x".repeat(MAX_PATTERN_LEN + 1)
        ));
        assert!(
            e.message()
                .starts_with("line 1: regex: the pattern is 65537 bytes, more than the 65536"),
            "{e}"
        );
    }

    /// The bounds of `check_cost` hold for every built-in rule, as for a
    /// user's (the built-ins are compiled lazily, without the check).
    #[test]
    fn builtin_rules_are_within_the_cost_bounds() {
        let mut checked = 0;
        for f in RuleFile::builtin() {
            for r in &f.rules {
                let (rule, ..) = compile_rule(r, &f.origin, false).unwrap();
                let Some(Ok(hir)) = rule.parsed() else {
                    continue;
                };
                check_cost(hir, rule.cost_window()).unwrap_or_else(|m| panic!("{}: {m}", r.id));
                checked += 1;
            }
        }
        assert!(checked > 200, "{checked}");
    }

    /// A keyword of one repeated character is set aside: the rule runs as one
    /// without keywords, finds what it found with it, and content made of
    /// that character opens no window.
    #[test]
    fn a_low_information_keyword_makes_the_rule_keyword_less() {
        let rule = |kw: &str| {
            format!(
                "[[rules]]\nid = \"tw\"\nregex = '''(?:^|[^A-Za-z0-9%+/])(A{{20,24}}[A-Za-z0-9%]\
                 {{8,100}}%3D[A-Za-z0-9%]{{20,100}})(?:[^A-Za-z0-9%+/=]|$)'''\nsecretGroup = 1\n\
                 keywords = [\"{kw}\"]\nmax_len = 240\n"
            )
        };
        let (runs, warnings) = EngineBuilder::new()
            .add(RuleFile::parse(&rule(&"A".repeat(20)), "tw.toml").unwrap())
            .build()
            .unwrap();
        let w: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(
            w,
            [format!(
                "tw.toml: rule `tw`: keyword `{}` has too little information (one character \
                 repeated, it matches at every byte of a run such as `AAAA` or `====`): the \
                 rule's regex runs over every byte of every file instead; use a keyword of two \
                 characters or more",
                "a".repeat(20)
            )]
        );
        assert!(runs.rules[0].keywords.is_empty());
        assert_eq!(runs.rules()[0].keywords, ["a".repeat(20)]);
        let (keyed, warnings) = EngineBuilder::new()
            .add(RuleFile::parse(&rule("%3d"), "tw.toml").unwrap())
            .build()
            .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let find = |e: &Engine, data: &[u8]| -> Vec<(u64, String)> {
            let mut out = Vec::new();
            e.scan(
                &ScanInput::whole(data, "a.txt"),
                &mut e.new_scratch(),
                &mut out,
            );
            out.into_iter().map(|f| (f.offset, f.secret)).collect()
        };
        let mut data = "A".repeat(5000).into_bytes();
        data.extend_from_slice(
            b"\nT=AAAAAAAAAAAAAAAAAAAAAkXUrkAAAAAAASFZX50QadiWlfp%2BQBhryETh%3Dd8RJFSGUVUsxRftUkFI1g\n",
        );
        data.extend(std::iter::repeat_n(b'A', 5000));
        let want = vec![(
            5003,
            "AAAAAAAAAAAAAAAAAAAAAkXUrkAAAAAAASFZX50QadiWlfp%2BQBhryETh%3Dd8RJFSGUVUsxRftUkFI1g"
                .to_string(),
        )];
        assert_eq!(find(&runs, &data), want);
        assert_eq!(find(&keyed, &data), want);
    }

    #[test]
    fn check_examples_reports_the_compile_error_for_each_example() {
        // A trusted (built-in) file stays lazy: the build succeeds and the
        // failure surfaces in check_examples, with the compiler's reason.
        let (engine, _) = EngineBuilder::new().add(file(true)).build().unwrap();
        let failures = engine.check_examples();
        let got: Vec<(&str, bool)> = failures
            .iter()
            .map(|f| (f.example.as_str(), f.negative))
            .collect();
        assert_eq!(
            got,
            vec![("k abcdefgh", false), ("k 12345678", false), ("k ab", true)]
        );
        for f in &failures {
            assert!(
                f.reason.contains("exceeded limit of 10485760"),
                "{}",
                f.reason
            );
        }
    }

    /// The rare-byte search finds every occurrence of every keyword in any
    /// case, and with a walked middle, at least what crosses its edges.
    #[test]
    fn rare_byte_search_finds_every_occurrence_in_any_case() {
        let mut search = RareByteSearch::default();
        let kws: [&[u8]; 6] = [
            b"eyj",
            b"ops_eyj",
            b"://",
            b"secret",
            b"-----begin rsa",
            b"sl.",
        ];
        for (i, kw) in kws.iter().enumerate() {
            search.add(kw, i as u32, 100);
        }
        let text = b"x ops_EYJ eyJeyj SECRET sEcReT ://:// sl.sl -----BEGIN RSA -----begin rsaX";
        let mut got = Vec::new();
        // Nothing walked: the whole text is searched.
        search.find(text, &(0..text.len()), 0..0, &mut got);
        got.sort_unstable();
        let mut want = Vec::new();
        for (k, kw) in kws.iter().enumerate() {
            for at in 0..=text.len() - kw.len() {
                if text[at..at + kw.len()].eq_ignore_ascii_case(kw) {
                    want.push((at + kw.len(), at, k as u32));
                }
            }
        }
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(want.len(), 11);
        // The middle walked: what crosses its edges is found, and what
        // lies wholly in it may be (near its edges), never twice.
        let mut got = Vec::new();
        search.find(text, &(0..text.len()), 20..60, &mut got);
        got.sort_unstable();
        assert!(got.windows(2).all(|w| w[0] != w[1]), "{got:?}");
        assert!(got.iter().all(|h| want.contains(h)), "{got:?}");
        want.retain(|&(end, start, _)| start < 20 || end > 60);
        assert!(want.iter().all(|h| got.contains(h)), "{got:?}");
        assert_eq!(want.len(), 6);
    }

    #[test]
    fn a_name_defined_twice_among_builtin_files_is_an_error() {
        let text = "[[rules]]\nid = \"b\"\nregex = 'b'\nkeywords = [\"b\"]\n";
        let mut one = RuleFile::parse(text, "builtin:one.toml").unwrap();
        let mut two = RuleFile::parse(text, "builtin:two.toml").unwrap();
        one.trusted = true;
        two.trusted = true;
        let e = EngineBuilder::new().add(one).add(two).build().unwrap_err();
        assert_eq!(
            e.to_string(),
            "builtin:two.toml: rule `b`: line 1: duplicate rule id (first defined in builtin:one.toml)"
        );
    }
}
