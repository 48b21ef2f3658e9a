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
//!    and the result does not depend on where the window began. A window
//!    without the run of secret bytes every match of the rule holds
//!    (`src/run.rs`) is skipped first: it cannot hold a match.
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
//! secret meets one of the focus's ranges (a history version's changes),
//! reading around each range rather than the buffer. The focus and the
//! *zones* (the focus at first) are lists of ascending ranges, those that
//! overlap or touch merged (`engine/zones.rs`):
//!
//! 1. Stage 1 walks the keyword automaton over each zone widened by
//!    `2 S + K + 64` bytes on the left and `S + K + 64` on the right (the
//!    widened zones that overlap walked as one), `S` = [`FOCUS_SHORT_LEN`]:
//!    a hit of a rule with `max_len = L <= S` yields matches in
//!    `[start - L, end + 2 L)`, so these walks see every hit whose matches
//!    may meet a zone (and keep only those). The keywords of the
//!    long-window rules (private keys, JWTs, cloud credentials, providers
//!    whose windows reach 3 KB: 49 of 1,314 built-in rules) are found
//!    beyond the walks, as far as each rule's windows reach, by one
//!    memchr pass per keyword's rarest byte (`RareByteSearch`), once
//!    over each group of zones whose reaches meet: an automaton step per
//!    byte over the whole buffer would cost more than the walk saves.
//!    With `quiet` (the caller's word that none
//!    of those keywords lies wholly outside the focus: the previous
//!    version held none) that search is skipped, and the walks tell
//!    whether the buffer holds one ([`ScanScratch::no_long_keywords`], for
//!    the next version). A rule without keywords gets one window around
//!    each zone, those that overlap merged.
//! 2. Stage 2 runs as in a whole scan (the haystack is the whole buffer).
//! 3. A generic candidate of the focus whose secret no zone holds whole
//!    (a long-window generic rule; or a secret that spans two zones and
//!    the bytes between) adds its secret to the zones and the layer is
//!    scanned again: the provider matches its duplicate check needs are
//!    those meeting its secret.
//! 4. Gates and duplicates as in a whole scan; only candidates whose
//!    secret meets the focus are counted ([`Suppressed`]) and reported,
//!    each once however many ranges it meets.
//! 5. Decoding takes the literal sequences and runs meeting a range of the
//!    focus (`src/decode.rs`, `focus_runs`), read to their real ends, each
//!    once; test code and positions are computed over the whole buffer,
//!    when there are findings.
//!
//! A pure deletion leaves a focus of the two bytes around the cut (or an
//! empty one): a secret joined by the cut meets them. `tests/focus.rs`
//! checks random edits of real text against the whole scan, one edit or
//! many scattered ones (a range for each) at a time.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::{Anchored, Input, Span};
use regex_syntax::hir::Hir;

use crate::confidence::{Checksum, Confidence};
use crate::decode::LayerScanner;
use crate::gates::{fingerprint, is_placeholder, shannon_entropy};
use crate::generic::Verdict;
use crate::keywords::KeywordsHandle;
use crate::syntax::{ExampleSyntax, RuleFile, RuleSyntax};
use crate::{
    Error, ExampleFailure, Finding, LinePos, RuleInfo, ScanInput, ScanScratch, Suppressed, Warning,
    WarningKind, INLINE_MARKERS,
};

mod allowlist;
mod build;
mod examples;
mod rare;
mod zones;

pub(crate) use allowlist::Allowlist;
use allowlist::{compile_set, LazyRegex, Target};
pub use build::{EngineBuilder, RuleOverride};
use rare::RareByteSearch;

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
/// The longest regex pattern accepted: defined where it is checked, before
/// parsing (`re2.rs`).
pub use crate::re2::MAX_PATTERN_LEN;

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

/// The matched text in a [`Finding`] is cut to this many bytes.
pub const MAX_MATCH_TEXT: usize = 512;

static NEXT_ENGINE_ID: AtomicU64 = AtomicU64::new(1);

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

/// One compiled rule.
pub(crate) struct Rule {
    /// The pattern as written (RE2); parsed and compiled on first use.
    pattern: Option<String>,
    /// The pattern parsed, once: both the regex and the `keyword_lead`
    /// inference need it (parsing twice cost as much as a tenth of the
    /// compilation), and the build already parsed rules without `max_len`.
    hir: OnceLock<Result<Hir, String>>,
    regex: OnceLock<Result<Regex, String>>,
    /// `regex` with a literal prefilter, for the windows of [`WIDE_WINDOW`]
    /// bytes or more (`search_windows`); `None` inside where it does not
    /// compile.
    regex_wide: OnceLock<Option<Regex>>,
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
    /// The run of secret bytes every match holds (`src/run.rs`), from the
    /// regex on first use; `None` inside when it proves nothing.
    run: OnceLock<Option<crate::run::SecretRun>>,
    placeholder_check: bool,
    /// `generic = true`: dropped when a provider finding's secret overlaps.
    generic: bool,
    /// A `[[providers]]` entry matched by keyword and shape: a value made
    /// of words (`WebpackOptionsNormalized`) is a name, as the generic
    /// rules judge it (`generic::shape`).
    rejects_names: bool,
    confidence: Option<Confidence>,
    checksum: Option<Checksum>,
    allowlists: Vec<Arc<Allowlist>>,
    config_secrets: Option<LazyRegex>,
    config_paths: Option<LazyRegex>,
    examples: Vec<ExampleSyntax>,
    negative_examples: Vec<ExampleSyntax>,
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

    /// False when no match lies in `window`, a keyword window: it lacks
    /// the run of secret bytes every match holds (`src/run.rs`). Always
    /// true for a rule without keywords: its window is the whole buffer,
    /// which its regex's prefilter searches faster.
    fn may_match(&self, window: &[u8]) -> bool {
        if self.keywords.is_empty() {
            return true;
        }
        self.run
            .get_or_init(|| {
                let hir = self.parsed()?.ok()?;
                crate::run::SecretRun::of(hir, self.secret_group)
            })
            .as_ref()
            .is_none_or(|r| r.may_match(window))
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
                compile(hir, self.keywords.is_empty())
            })
            .as_ref()
            .ok()
    }

    /// [`regex`](Self::regex) with a literal prefilter, for a window of
    /// [`WIDE_WINDOW`] bytes or more: windows of a keyword that a file
    /// holds every few hundred bytes merge into one of many KB, which the
    /// regex's automaton would walk byte by byte where a prefilter skips
    /// to the places it can match (`netrc-inline-password`'s `machine`
    /// opened 81 of the 134 MB searched in moto's history; its regex asks
    /// for `machine` in lowercase). A rule without keywords has its
    /// prefilter in `regex` already.
    fn regex_wide(&self) -> Option<&Regex> {
        if self.keywords.is_empty() {
            return self.regex();
        }
        let hir = self.parsed()?.ok()?;
        self.regex_wide
            .get_or_init(|| compile(hir, true).ok())
            .as_ref()
    }
}

/// Always a keyword of the stage-1 automaton, with or without rules: its
/// hits tell the split-literal pass that it has work (see `begin_kw`).
const BEGIN_KEYWORD: &str = "-----begin";

/// The smallest `LEAD` (see [`Engine::chunk_overlap`]).
const MIN_LEAD: usize = 256;
/// The smallest window searched with the rule's prefiltered regex
/// ([`Rule::regex_wide`]): a window is a few hundred bytes unless hits of
/// its keyword crowd (in moto's history, `netrc-inline-password`'s 2,938
/// windows averaged 27 KB).
const WIDE_WINDOW: usize = 4096;
/// `scan_focus`: rules with a `max_len` up to this are searched for near
/// the focus only, from one keyword walk over the focus widened by twice
/// this on the left and once on the right; the others by a search of
/// their keywords as far as their windows reach (module docs, "Focus").
/// 1440 leaves out the rules of 2 KB windows and more, whose keywords
/// are rare; the common keywords of medium windows (`secret`, `user:`,
/// `sl.`) would cost more found over the whole buffer than walked. On the
/// ripgrep history (callgrind, one thread): 4.26 G instructions with 512,
/// 4.11 G with 1440, 4.13 G with 2400. Measured again once the provider
/// table had made 22 rules of about 3 KB windows, whose keywords' rarest
/// bytes are common letters: 3072, which walks them, executed 2.311 G
/// against 2.198 G on that history, and moto's history took the same CPU
/// (docs/performance.md, "Where moto's rebuilds go").
const FOCUS_SHORT_LEN: usize = 1440;
/// `scan_focus`: bytes of context beyond what a rule's windows need.
const FOCUS_SLACK: usize = 64;

/// Compiled, read-only rule database; share it with `Arc` across workers.
pub struct Engine {
    id: u64,
    rules: Vec<Rule>,
    /// The rules with a `path` (path-only rules among them): the only ones
    /// a file's path can switch off, so the only ones looked at per file.
    scoped: Vec<u32>,
    infos: Vec<RuleInfo>,
    /// Stage 1: every keyword's occurrences
    /// ([`Keywords`](crate::keywords::Keywords), built on a thread of its
    /// own: [`KeywordsHandle`]).
    automaton: KeywordsHandle,
    /// The keywords of the rules whose `max_len` exceeds
    /// [`FOCUS_SHORT_LEN`], and their rules: `scan_focus` searches them
    /// over the whole buffer (module docs, "Focus").
    long: RareByteSearch,
    /// Per keyword of `automaton`: its index in `long`, if a long rule owns it.
    kw_long: Vec<Option<u32>>,
    /// Shared with the thread that builds `automaton` from them.
    keywords: Arc<Vec<String>>,
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
    /// The provider keywords a generic finding's key may hold, built at the
    /// first generic finding (attribution, `generic/named.rs`).
    provider_names: OnceLock<crate::generic::named::ProviderNames>,
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
        let path = rule_path(path);
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
    /// `[offset, end_offset)` intersects one of the ranges of `focus`
    /// (`end_offset > f.start && offset < f.end`, so an empty range still
    /// keeps a secret that straddles it): exactly those of
    /// [`scan`](Self::scan), in the same order with the same fields, each
    /// once, for work proportional to the focus and the rules' windows
    /// around each of its ranges rather than to the buffer (module docs,
    /// "Focus"). Suppressed candidates are counted only when their secret
    /// intersects the focus, or a percent-encoded run that meets it.
    /// `input` is a whole buffer (`base_offset` 0, owning every byte), not
    /// a chunk. The ranges may come in any order, overlap or lie past the
    /// end (clipped).
    ///
    /// `quiet`: the caller knows that no keyword of a long-window rule lies
    /// wholly outside the focus (module docs, "Focus", step 1): the buffer is
    /// a new version of one whose scan left
    /// [`ScanScratch::no_long_keywords`] true, and the bytes outside
    /// `focus` are runs of bytes kept from it. The search for those keywords
    /// beyond the focus's surroundings is then skipped.
    pub fn scan_focus(
        &self,
        input: &ScanInput<'_>,
        focus: &[Range<usize>],
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
        let mut focus = focus.to_vec();
        zones::normalize(&mut focus, input.data.len());
        let first = out.len();
        // A percent-decoded finding spans its whole run, and the decode pass
        // drops it where the plain scan reported its rule inside the run:
        // the plain findings of each run that meets the focus are computed
        // too, as a whole scan has them, then those outside the focus go.
        let mut plain = focus.clone();
        if self.decode_depth > 0 {
            plain.extend(crate::decode::percent_runs(
                input.data,
                &focus,
                2 * self.lead,
            ));
            zones::normalize(&mut plain, input.data.len());
        }
        // Usually once; again with the zones widened to the generic
        // secrets that reach out of them.
        let mut zone = plain.clone();
        while let Some(wider) =
            self.scan_layer_in(&input, scratch, out, false, Some((&plain, &zone, quiet)))
        {
            zone = wider;
        }
        crate::decode::rescan(self, &input, scratch, out, first, Some(&focus));
        if plain != focus {
            let meets = |f: &Finding| {
                focus
                    .iter()
                    .any(|z| f.end_offset > z.start as u64 && f.offset < z.end as u64)
            };
            let kept: Vec<Finding> = out.drain(first..).filter(meets).collect();
            out.extend(kept);
        }
        if out.len() > first {
            if let Some(t) = crate::confidence::test_code_start(input.data, input.path) {
                let from = t as u64;
                for f in out[first..].iter_mut().filter(|f| f.offset >= from) {
                    crate::confidence::mark_test_code(&mut f.confidence, &mut f.tags);
                }
            }
        }
    }

    /// See [`EngineBuilder::decode_depth`].
    pub fn decode_depth(&self) -> usize {
        self.decode_depth
    }

    /// [`scan_layer`](Self::scan_layer), or with `focus = (focus, zones,
    /// quiet)` only the findings whose secret intersects `focus`, computing
    /// the candidates whose match may intersect one of `zones` (which
    /// cover `focus`; both normalized lists, `zones::normalize`; `quiet` as
    /// for [`scan_focus`](Self::scan_focus)). Returns, before gating
    /// anything, wider zones when a generic candidate of the focus has a
    /// secret that no zone holds whole: the provider matches it may
    /// duplicate must be computed (module docs, "Focus").
    fn scan_layer_in(
        &self,
        input: &ScanInput<'_>,
        scratch: &mut ScanScratch,
        out: &mut Vec<Finding>,
        nested: bool,
        focus: Option<Focus<'_>>,
    ) -> Option<Vec<Range<usize>>> {
        let s = scratch;
        let path = rule_path(input.path);
        if !self.start_layer(s, path, nested) {
            return None;
        }
        let data = input.data;
        let len = data.len();
        // Path-only rules report the file itself, once (first chunk); their
        // finding spans no byte, so it never intersects a focus.
        if input.base_offset == 0 && !nested && focus.is_none() {
            self.path_only_candidates(s, path);
        }

        // Stage 1.
        let long_seen = match focus {
            None => self.open_windows(s, data),
            Some((_, zone, quiet)) => self.open_windows_near(s, data, zone, quiet),
        };
        // A whole buffer, or a focus whose long-window keywords were all
        // looked for: none met.
        let whole = input.base_offset == 0 && input.owned_len >= len;
        if !nested {
            s.no_long_keywords = !long_seen && (whole || focus.is_some());
        }
        self.close_windows(s, len, focus.map(|(_, zones, _)| zones));

        // Stage 2.
        self.search_windows(s, data, self.ownership(input));

        let focus_range = focus.map(|(f, _, _)| f);
        if let Some((_, zone, _)) = focus {
            if let Some(wider) = self.wider_zone(s, zone, focus_range, len) {
                s.candidates.clear();
                return Some(wider);
            }
        }
        self.finish_layer(s, input, out, focus_range);
        None
    }

    /// Readies the scratch for one layer: resets the markers the decode
    /// pass reads (and, for a file's own layer, `no_long_keywords`), then,
    /// unless the global allowlist allows `path` (false: the layer yields
    /// nothing), clears the last layer's windows and candidates and scopes
    /// the rules to `path`.
    fn start_layer(&self, s: &mut ScanScratch, path: &str, nested: bool) -> bool {
        s.prepare(self);
        s.begin_seen = false;
        s.percent_seen = false;
        if !nested {
            s.no_long_keywords = false;
        }
        if self.path_allowlisted(path) {
            return false;
        }
        s.windows.clear();
        s.touched.clear();
        s.candidates.clear();
        // Decoded text of the same file keeps the file's path scopes.
        if !nested {
            self.scope_rules_to_path(s, path);
        }
        true
    }

    /// Gates the layer's candidates, in order of secret, and reports those
    /// kept (module docs, steps 4 and 5); the candidate buffer goes back to
    /// the scratch, empty.
    fn finish_layer(
        &self,
        s: &mut ScanScratch,
        input: &ScanInput<'_>,
        out: &mut Vec<Finding>,
        focus: Option<&[Range<usize>]>,
    ) {
        let mut cands = std::mem::take(&mut s.candidates);
        cands.sort_unstable_by_key(|c| (c.secret.start, c.rule, c.m.start));
        self.gate_candidates(s, &mut cands, input.data, rule_path(input.path), focus);
        self.report_candidates(s, &cands, input, out, focus);
        cands.clear();
        s.candidates = cands;
    }

    /// Which bytes this chunk owns, and the wider range whose provider
    /// matches are collected unowned (see [`Ownership`]).
    fn ownership(&self, input: &ScanInput<'_>) -> Ownership {
        // Ownership is shifted by 2 LEAD (module docs, "Chunks"); provider
        // matches up to LEAD outside it are collected too, unowned, because
        // a generic finding this chunk owns may duplicate one of them.
        let own_lo = if input.base_offset == 0 {
            0
        } else {
            2 * self.lead
        };
        let own_hi = input.owned_len.saturating_add(2 * self.lead);
        Ownership {
            own_lo,
            own_hi,
            shadow_lo: own_lo.saturating_sub(self.lead),
            shadow_hi: own_hi.saturating_add(self.lead),
        }
    }

    /// Switches off the rules whose `path` regex does not match `path`
    /// (the others are always on: [`ScanScratch::prepare`]).
    fn scope_rules_to_path(&self, s: &mut ScanScratch, path: &str) {
        for &i in &self.scoped {
            let i = i as usize;
            s.rule_on[i] = self.rules[i].path.as_ref().is_none_or(|p| p.is_match(path));
        }
    }

    /// A candidate for each path-only rule (no regex) that applies to `path`.
    fn path_only_candidates(&self, s: &mut ScanScratch, path: &str) {
        for &i in &self.scoped {
            let (i, rule) = (i as usize, &self.rules[i as usize]);
            if rule.pattern.is_none() && s.rule_on[i] && !self.path_dropped(i, path) {
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

    /// Opens (or extends) rule `r`'s window for a keyword hit at
    /// `start..end` in a buffer of `len` bytes. Called per keyword hit.
    #[inline]
    fn open_window(&self, s: &mut ScanScratch, r: u32, start: usize, end: usize, len: usize) {
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
    }

    /// Stage 1 over the whole buffer: one keyword walk, a window per hit.
    /// Returns whether a keyword of a long-window rule was met.
    fn open_windows(&self, s: &mut ScanScratch, data: &[u8]) -> bool {
        let len = data.len();
        let mut long_seen = false;
        self.automaton.get().hits(data, |kw, start, end| {
            s.begin_seen |= kw == self.begin_kw;
            s.percent_seen |= kw == self.percent_kw;
            long_seen |= self.kw_long[kw].is_some();
            for &r in &self.kw_rules[kw] {
                if s.rule_on[r as usize] {
                    self.open_window(s, r, start, end, len);
                }
            }
        });
        long_seen
    }

    /// Stage 1 for a focus: only the windows whose matches may reach one
    /// of `zones` (module docs, "Focus"). Returns whether a keyword of a
    /// long-window rule was met, or not looked for everywhere.
    fn open_windows_near(
        &self,
        s: &mut ScanScratch,
        data: &[u8],
        zones: &[Range<usize>],
        quiet: bool,
    ) -> bool {
        let len = data.len();
        // A hit of rule `r` yields matches in `[start - max_len,
        // end + 2 max_len)` (its window, then a match starting at
        // the window's end); FOCUS_SLACK more on each side.
        let near = |r: usize, start: usize, end: usize| {
            let l = self.rules[r].max_len;
            zones::near(zones, start, end, l + FOCUS_SLACK, 2 * l + FOCUS_SLACK)
        };
        // Short rules: their hits near the zones, from one walk over each
        // zone's surroundings (those that overlap or touch walked as one).
        let k = self.automaton.get().max_len() + FOCUS_SLACK;
        s.walks.clear();
        s.walks.extend(zones.iter().map(|z| {
            z.start.saturating_sub(2 * FOCUS_SHORT_LEN + k)..(z.end + FOCUS_SHORT_LEN + k).min(len)
        }));
        zones::normalize(&mut s.walks, len);
        s.long_hits.clear();
        for wi in 0..s.walks.len() {
            let Range { start: a, end: b } = s.walks[wi];
            self.automaton.get().hits(&data[a..b], |kw, start, end| {
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
                        self.open_window(s, r, start, end, len);
                    }
                }
            });
        }
        // Long rules: their keywords beyond the walks, as far as their
        // windows reach; none there when the caller knows the bytes
        // outside the focus (beyond the walks) hold none. Zones whose
        // reaches overlap are searched as one span.
        let searched_all = quiet
            || match (zones.first(), zones.last()) {
                (Some(first), Some(last)) => {
                    self.long.reaches_all(len, &(first.start..last.end)) && self.long.joined(zones)
                }
                _ => len == 0,
            };
        if !quiet {
            let mut i = 0;
            while i < zones.len() {
                let mut j = i + 1;
                while j < zones.len() && self.long.joined(&zones[j - 1..=j]) {
                    j += 1;
                }
                let group = zones[i].start..zones[j - 1].end;
                // The walk that holds the group's first zone: what it
                // found need not be found again.
                let walked = s.walks[s.walks.partition_point(|w| w.end < zones[i].end)].clone();
                self.long.find(data, &group, walked, &mut s.long_hits);
                i = j;
            }
        }
        let long_seen = !s.long_hits.is_empty() || !searched_all;
        s.long_hits.sort_unstable();
        s.long_hits.dedup();
        for i in 0..s.long_hits.len() {
            let (end, start, kw) = s.long_hits[i];
            for &r in &self.long.rules[kw as usize] {
                let ri = r as usize;
                if s.rule_on[ri] && near(ri, start, end) {
                    self.open_window(s, r, start, end, len);
                }
            }
        }
        long_seen
    }

    /// Ends stage 1: the windows still open, and for each keyword-less
    /// rule one over the whole buffer, or one around each of the focus
    /// `zones` (those that overlap merged), sorted by rule.
    fn close_windows(&self, s: &mut ScanScratch, len: usize, zones: Option<&[Range<usize>]>) {
        for &r in &s.touched {
            let open = &mut s.open[r as usize];
            s.windows.push((r, open.0, open.1));
            *open = (0, 0);
        }
        for &r in &self.unkeyed {
            if !s.rule_on[r as usize] {
                continue;
            }
            let Some(zones) = zones else {
                s.windows.push((r, 0, len));
                continue;
            };
            let l = self.rules[r as usize].max_len;
            let mut last: Option<(usize, usize)> = None;
            for z in zones {
                let (ws, we) = (
                    z.start.saturating_sub(2 * l + FOCUS_SLACK),
                    (z.end + l + FOCUS_SLACK).min(len),
                );
                match &mut last {
                    Some((_, e)) if ws <= *e => *e = (*e).max(we),
                    _ => {
                        if let Some((a, b)) = last {
                            s.windows.push((r, a, b));
                        }
                        last = Some((ws, we));
                    }
                }
            }
            if let Some((a, b)) = last {
                s.windows.push((r, a, b));
            }
        }
        s.windows.sort_unstable();
    }

    /// Stage 2: each rule's regex over its windows; every match starting
    /// in range (see [`Ownership`]) becomes a candidate.
    fn search_windows(&self, s: &mut ScanScratch, data: &[u8], own: Ownership) {
        let len = data.len();
        let Ownership {
            own_lo,
            own_hi,
            shadow_lo,
            shadow_hi,
        } = own;
        let mut current = u32::MAX;
        let mut resume = 0;
        for wi in 0..s.windows.len() {
            let (r, ws, we) = s.windows[wi];
            if r != current {
                current = r;
                resume = 0;
            }
            let rule = &self.rules[r as usize];
            // Before the regex, compiled on first use: most windows of a
            // provider's context keywords hold no token.
            let start = ws.max(resume);
            if !rule.may_match(&data[start.min(we)..we]) {
                resume = start;
                continue;
            }
            let Some(regex) = rule.regex() else { continue };
            let finder = match we - start >= WIDE_WINDOW {
                true => rule.regex_wide().unwrap_or(regex),
                false => regex,
            };
            let caps = s.captures[r as usize].get_or_insert_with(|| regex.create_captures());
            let (lo, hi) = if rule.generic || !self.has_generic {
                (own_lo, own_hi)
            } else {
                (shadow_lo, shadow_hi)
            };
            let mut at = start;
            while at < we && at < hi {
                // The regex's own pool of caches, not one per worker: a
                // cache (lazy DFA states, sparse sets sized by the NFA) is
                // hundreds of KB for the large rules, and the pool holds
                // as many as are in use at once, which is about the number
                // of cores, not of threads.
                let found = finder.search(&Input::new(data).range(at..we));
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
    }

    /// With a focus: wider zones when a generic candidate that meets the
    /// focus has a secret that no zone holds whole (module docs, "Focus"):
    /// the zones with each such secret added.
    fn wider_zone(
        &self,
        s: &ScanScratch,
        zones: &[Range<usize>],
        focus: Option<&[Range<usize>]>,
        len: usize,
    ) -> Option<Vec<Range<usize>>> {
        let mut wider: Option<Vec<Range<usize>>> = None;
        for c in &s.candidates {
            if self.rules[c.rule as usize].generic
                && in_focus(focus, c.secret)
                && !zones::holds(zones, c.secret.start, c.secret.end)
            {
                wider
                    .get_or_insert_with(|| zones.to_vec())
                    .push(c.secret.range());
            }
        }
        let mut wider = wider?;
        zones::normalize(&mut wider, len);
        Some(wider)
    }

    /// Gates: a dropped candidate is marked with an empty match, and
    /// counted if this chunk owns it (and it meets the focus); one an
    /// allow decision dropped is marked `allowed` instead when the
    /// caller keeps those.
    fn gate_candidates(
        &self,
        s: &mut ScanScratch,
        cands: &mut [Candidate],
        data: &[u8],
        path: &str,
        focus: Option<&[Range<usize>]>,
    ) {
        s.provider_secrets.clear();
        // A generic candidate that an allowlist drops may be a provider's secret (the generic
        // rules allowlist the provider shapes): decided once every provider secret is known.
        let mut generic_allowlisted = Vec::new();
        for (i, c) in cands.iter_mut().enumerate() {
            let rule = &self.rules[c.rule as usize];
            if rule.pattern.is_some() {
                if let Some(reason) = self.gate(c, data, path) {
                    if rule.generic && reason == DropReason::Allowlist {
                        generic_allowlisted.push(i);
                        continue;
                    }
                    match reason.allow_label() {
                        Some(label) if s.keep_allowed => c.allowed = Some(label),
                        _ => {
                            if c.owned && in_focus(focus, c.secret) {
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
            if c.owned && in_focus(focus, c.secret) {
                if duplicate {
                    s.suppressed.duplicate += 1;
                } else {
                    s.suppressed.count(DropReason::Allowlist);
                }
            }
            c.m = Span { start: 0, end: 0 };
        }
    }

    /// De-duplication (a generic finding over a provider's secret), then
    /// positions: a [`Finding`] for each candidate that survived the gates,
    /// is owned by this chunk and meets the focus.
    fn report_candidates(
        &self,
        s: &mut ScanScratch,
        cands: &[Candidate],
        input: &ScanInput<'_>,
        out: &mut Vec<Finding>,
        focus: Option<&[Range<usize>]>,
    ) {
        let data = input.data;
        // For a JWT's `exp` (offline evidence); no clock read for a clean buffer.
        let now = if cands.is_empty() {
            0
        } else {
            crate::validation::unix_now()
        };
        let mut pos = input.start;
        let mut pos_at = 0;
        for c in cands {
            let rule = &self.rules[c.rule as usize];
            if !c.owned || (c.m.is_empty() && rule.pattern.is_some()) || !in_focus(focus, c.secret)
            {
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
            let misses = if rule.generic {
                self.provider_names
                    .get_or_init(|| crate::generic::named::ProviderNames::new(&self.infos))
                    .named(data, c.secret.start)
            } else {
                Vec::new()
            };
            let (confidence, tags, verified) = crate::confidence::assess(
                rule.confidence,
                rule.checksum,
                rule.generic,
                &rule.keywords,
                &misses,
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
                // A path-only rule has no secret; its finding is the file, named as rules
                // see it (`scanner scan .` and `--staged` then agree).
                fingerprint: if rule.pattern.is_none() {
                    fingerprint(&info.id, rule_path(input.path).as_bytes())
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
        if rule.rejects_names
            && (crate::generic::shape::identifier_like(secret)
                || crate::generic::shape::camel_name(secret))
        {
            return Some(DropReason::Generic(Verdict::IdentifierLike));
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
}

/// The decode pass scans decoded text through this (`src/decode.rs`).
impl LayerScanner for Engine {
    fn lead(&self) -> usize {
        self.lead
    }

    fn path_allowlisted(&self, path: &str) -> bool {
        Engine::path_allowlisted(self, path)
    }

    fn decode_depth(&self) -> usize {
        self.decode_depth
    }

    fn scan_layer(
        &self,
        input: &ScanInput<'_>,
        scratch: &mut ScanScratch,
        out: &mut Vec<Finding>,
        nested: bool,
    ) {
        self.scan_layer_in(input, scratch, out, nested, None);
    }
}

/// A layer's focus (`Engine::scan_layer_in`): the ranges whose findings
/// are reported, the zones around which candidates are computed (which
/// cover them), and `quiet` (`Engine::scan_focus`).
type Focus<'a> = (&'a [Range<usize>], &'a [Range<usize>], bool);

/// Which bytes of a buffer a chunk owns (`own_lo..own_hi`: its findings
/// are reported) and where provider matches are collected unowned
/// (`shadow_lo..shadow_hi`), since a generic finding may duplicate them.
struct Ownership {
    own_lo: usize,
    own_hi: usize,
    shadow_lo: usize,
    shadow_hi: usize,
}

/// A rule's regex from its pattern, with a literal prefilter or without.
/// `path` as path regexes (a rule's `path`, allowlist `paths`) see it: as
/// gitleaks names the file, without the leading `./` that `scanner scan .`
/// shows (gitleaks cleans `./src/a.env` to `src/a.env`, so its configs
/// anchor `^src/`).
fn rule_path(path: &str) -> &str {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

fn compile(hir: &Hir, prefilter: bool) -> Result<Regex, String> {
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
}

/// Whether a finding's secret (its `offset..end_offset`) meets the focus;
/// without one, every finding does.
#[inline]
fn in_focus(focus: Option<&[Range<usize>]>, secret: Span) -> bool {
    focus.is_none_or(|f| zones::meets(f, secret.start, secret.end))
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
            // Only the rules with a path are switched per file.
            self.rule_on = vec![true; n];
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
mod tests;
