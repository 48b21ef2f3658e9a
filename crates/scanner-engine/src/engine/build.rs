//! Compiling rule files into an [`Engine`]: [`EngineBuilder`] and what it checks.

use super::*;

/// Refuses a regex whose search could cost too much (see
/// [`MAX_REGEX_STATES`], [`MAX_REGEX_WORK`]); `window` is the bytes searched
/// per keyword hit ([`Rule::cost_window`]).
pub(super) fn check_cost(hir: &Hir, window: usize) -> Result<(), String> {
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
    /// scan again (`docs/decoding.md`). Default 2; 0 turns decoding off; at
    /// most [`MAX_DECODE_DEPTH`](crate::MAX_DECODE_DEPTH) (more is taken as
    /// that). Source string literals split across lines are reassembled
    /// whatever the depth.
    pub fn decode_depth(mut self, depth: usize) -> Self {
        self.decode_depth = Some(depth.min(crate::decode::MAX_DEPTH));
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

    /// The build, step by step: resolve every rule's names (replacements, clashes, disabled
    /// rules), compile the rules that remain, size their windows, attach the targeted
    /// allowlists and the user's overrides, then build the keyword automaton.
    fn build_inner(mut self) -> Result<(Engine, Vec<Warning>, Vec<Error>), Error> {
        let mut warnings = self.unknown_key_warnings();
        let mut errors = Vec::new();
        let resolved = self.resolve_names(&mut warnings, &mut errors);
        // Each rule's syntax is moved into its compiled rule: cloning its
        // examples and strings, then dropping the files, took about 1 ms of
        // the start-up.
        let syntax: Vec<Vec<RuleSyntax>> = self
            .files
            .iter_mut()
            .map(|f| std::mem::take(&mut f.rules))
            .collect();
        let Compiled {
            mut rules,
            infos,
            global,
            targeted,
            entropy,
        } = self.compile_rules(resolved, syntax, &mut warnings, &mut errors)?;
        size_unbounded_windows(&mut rules);
        if self.no_lead_inference {
            for rule in &mut rules {
                rule.keyword_lead.get_or_insert(rule.max_len);
            }
        }
        let names = names_of(&infos);
        attach_targeted_allowlists(&mut rules, &names, targeted, &mut warnings);
        for (name, e) in entropy {
            if let Some(&idx) = names.get(name.as_str()) {
                rules[idx].entropy = Some(e);
            }
        }
        self.apply_overrides(&mut rules, &names)?;
        let config_secrets = self.config_secrets()?;
        let KeywordTable {
            keywords,
            kw_rules,
            unkeyed,
            begin_kw,
            percent_kw,
        } = keyword_table(&rules, &infos, &mut warnings);
        let keywords = Arc::new(keywords);
        let automaton =
            KeywordsHandle::spawn(Arc::clone(&keywords)).map_err(|e| Error::new(None, None, e))?;
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
        let long = long_window_keywords(&rules);
        // Chunks overlap by the longest keyword a rule owns (the markers
        // are looked for in the owned range only, well inside a chunk).
        let max_rule_kw = keywords
            .iter()
            .zip(&kw_rules)
            .filter(|(_, rules)| !rules.is_empty())
            .map(|(k, _)| k.len())
            .max()
            .unwrap_or(0);
        let scoped = (0..rules.len() as u32)
            .filter(|&i| rules[i as usize].path.is_some())
            .collect();
        let engine = Engine {
            id: NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed),
            scoped,
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
            provider_names: OnceLock::new(),
        };
        if self.eager {
            engine.compile_all()?;
        }
        Ok((engine, warnings, errors))
    }

    /// A warning for each key a rule file holds that no rule reads.
    fn unknown_key_warnings(&self) -> Vec<Warning> {
        let mut warnings = Vec::new();
        for f in &self.files {
            for (rule, message) in &f.unknown {
                warnings.push(Warning::new(
                    Some(f.origin.clone().into()),
                    rule.clone(),
                    message.clone(),
                ));
            }
        }
        warnings
    }

    /// Names (ids and aliases). A user rule with the name of a built-in
    /// rule, or of a rule from an earlier user file, replaces it (as in
    /// gitleaks) and inherits its names; a name defined twice within one
    /// file, or among built-in files, is an error. Then the disabled names,
    /// resolved through ids and aliases.
    fn resolve_names(&self, warnings: &mut Vec<Warning>, errors: &mut Vec<Error>) -> Resolved {
        // Names disabled by the caller, and by files for rules of later
        // files; they apply once every rule is known.
        let mut disabled: Vec<(Option<&str>, &String)> =
            self.disabled.iter().map(|d| (None, d)).collect();
        // Sized for every rule at once: grown from empty, the table of the
        // 1,300 built-in rules' names was rehashed ten times.
        let rules: usize = self.files.iter().map(|f| f.rules.len()).sum();
        let mut owner: HashMap<String, (usize, usize)> = HashMap::with_capacity(rules);
        let mut skip: HashSet<(usize, usize)> = HashSet::new();
        let mut inherited: HashMap<(usize, usize), Vec<String>> = HashMap::new();
        let mut off: HashSet<(usize, usize)> = HashSet::new();
        let mut gone: HashSet<&str> = HashSet::new();
        let mut amends: HashSet<(usize, usize)> = HashSet::new();
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
                // A user rule with neither `regex` nor `path` that names a
                // rule of an earlier file amends it, as gitleaks merges it:
                // its allowlists are added, its entropy replaces.
                let named = own.iter().find_map(|n| owner.get(n.as_str()));
                if let Some(&(pfi, pri)) = named
                    .filter(|p| p.0 != fi && !f.trusted && r.regex.is_none() && r.path.is_none())
                {
                    amends.insert((fi, ri));
                    warnings.push(Warning {
                        kind: WarningKind::Replaced,
                        file: Some(f.origin.clone().into()),
                        rule: Some(r.id.clone()),
                        message: format!(
                            "amends {} `{}` from {} (it has no `regex` or `path` of its own, \
                             so gitleaks merges it: its allowlists are added, its entropy \
                             replaces)",
                            if self.files[pfi].trusted {
                                "the built-in rule"
                            } else {
                                "the rule"
                            },
                            self.files[pfi].rules[pri].id,
                            self.files[pfi].origin
                        ),
                    });
                    continue;
                }
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
        Resolved {
            skip,
            off,
            inherited,
            amends,
        }
    }

    /// Compiles every rule that [`resolve_names`](Self::resolve_names) kept (`syntax`: each
    /// file's rules, taken out of it), and the global allowlists. A rule that fails (a bad
    /// regex, a user rule over the cost bounds) is an error of its own and the others are
    /// still built; a bad allowlist fails the build.
    fn compile_rules<'a>(
        &'a self,
        resolved: Resolved,
        syntax: Vec<Vec<RuleSyntax>>,
        warnings: &mut Vec<Warning>,
        errors: &mut Vec<Error>,
    ) -> Result<Compiled<'a>, Error> {
        let Resolved {
            skip,
            off,
            mut inherited,
            amends,
        } = resolved;
        let count = syntax.iter().map(Vec::len).sum();
        let mut rules = Vec::with_capacity(count);
        let mut infos = Vec::with_capacity(count);
        let mut global = Vec::new();
        let mut targeted: Vec<(&str, Vec<String>, Arc<Allowlist>)> = Vec::new();
        let mut entropy = Vec::new();
        for ((fi, f), file_rules) in self.files.iter().enumerate().zip(syntax) {
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
            for (ri, r) in file_rules.into_iter().enumerate() {
                if skip.contains(&(fi, ri)) || off.contains(&(fi, ri)) {
                    continue;
                }
                if amends.contains(&(fi, ri)) {
                    let line = r.line;
                    let mut add = || -> Result<(), String> {
                        for (i, al) in r.allowlists.iter().chain(&r.allowlist).enumerate() {
                            let what = format!("line {line}: allowlist #{}", i + 1);
                            let compiled = Allowlist::compile(al, &what, false)?;
                            targeted.push((&f.origin, vec![r.id.clone()], Arc::new(compiled)));
                        }
                        if let Some(e) = r.entropy {
                            check_entropy(e, line)?;
                            entropy.push((r.id.clone(), e as f32));
                        }
                        Ok(())
                    };
                    if let Err(m) = add() {
                        errors.push(Error::new(Some(f.origin.clone().into()), Some(r.id), m));
                    }
                    continue;
                }
                let line = r.line;
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
                                        Some(info.id.to_string()),
                                        format!("line {line}: {m}"),
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
                                Some(info.id.to_string()),
                                format!("line {line}: {}", rule.compile_error()),
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
        Ok(Compiled {
            rules,
            infos,
            global,
            targeted,
            entropy,
        })
    }

    /// Applies the user's per-rule settings (`override_rule`); one naming no rule fails the build.
    fn apply_overrides(
        &self,
        rules: &mut [Rule],
        names: &HashMap<String, usize>,
    ) -> Result<(), Error> {
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
        Ok(())
    }

    /// The configuration's `allow_secrets`, compiled into one set.
    fn config_secrets(&self) -> Result<Option<LazyRegex>, Error> {
        Ok(if self.allow_secrets.is_empty() {
            None
        } else {
            Some(
                compile_set(&self.allow_secrets).map_err(|m| {
                    Error::new(None, None, format!("configuration allow_secrets: {m}"))
                })?,
            )
        })
    }
}

/// What [`EngineBuilder::resolve_names`] decided: the rules not to build (replaced or clashing:
/// `skip`; disabled: `off`), and the names each replacing rule inherits.
struct Resolved {
    skip: HashSet<(usize, usize)>,
    off: HashSet<(usize, usize)>,
    inherited: HashMap<(usize, usize), Vec<String>>,
    /// User rules that amend the earlier rule they name rather than replace it.
    amends: HashSet<(usize, usize)>,
}

/// The compiled rules with their descriptions, the global allowlists, and the allowlists that
/// target rules by name (with the file that holds each).
struct Compiled<'a> {
    rules: Vec<Rule>,
    infos: Vec<RuleInfo>,
    global: Vec<Arc<Allowlist>>,
    targeted: Vec<(&'a str, Vec<String>, Arc<Allowlist>)>,
    /// The `entropy` of each amending rule, by the name it gave.
    entropy: Vec<(String, f32)>,
}

/// Unbounded rules scan as far as the chunk overlap allows: the
/// engine's longest window, at least UNBOUNDED_WINDOW and at least
/// their shortest match.
fn size_unbounded_windows(rules: &mut [Rule]) {
    if rules.iter().any(|r| r.unbounded) {
        let longest = rules.iter().map(|r| r.max_len).max().unwrap_or(0);
        let window = longest.max(UNBOUNDED_WINDOW);
        for r in rules.iter_mut().filter(|r| r.unbounded) {
            r.max_len = window;
        }
    }
}

/// Every name (id or alias) of every compiled rule, to its index.
fn names_of(infos: &[RuleInfo]) -> HashMap<String, usize> {
    let mut names: HashMap<String, usize> = HashMap::with_capacity(infos.len());
    for (idx, info) in infos.iter().enumerate() {
        for n in std::iter::once(&*info.id).chain(info.aliases.iter().map(String::as_str)) {
            names.insert(n.to_owned(), idx);
        }
    }
    names
}

/// Gives each allowlist with `targetRules` to the rules it names; a name of no rule is a warning.
fn attach_targeted_allowlists(
    rules: &mut [Rule],
    names: &HashMap<String, usize>,
    targeted: Vec<(&str, Vec<String>, Arc<Allowlist>)>,
    warnings: &mut Vec<Warning>,
) {
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
}

/// The stage-1 keywords: lowercase, deduplicated, each with the rules that own it, the rules
/// with none, and the two markers the decode pass needs.
struct KeywordTable {
    keywords: Vec<String>,
    kw_rules: Vec<Vec<u32>>,
    unkeyed: Vec<u32>,
    begin_kw: usize,
    percent_kw: usize,
}

fn keyword_table(rules: &[Rule], infos: &[RuleInfo], warnings: &mut Vec<Warning>) -> KeywordTable {
    // The keyword automaton: lowercase, deduplicated, each keyword
    // mapped to the rules that own it.
    let mut keywords: Vec<String> = Vec::new();
    let mut kw_rules: Vec<Vec<u32>> = Vec::new();
    // Keyword → its index: searching the list for each of the built-in
    // rules' 1,900 keywords took 1.6 ms of the start-up.
    let mut index: HashMap<String, usize> = HashMap::with_capacity(rules.len());
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
            let k = slot(&mut index, &mut keywords, &mut kw_rules, kw);
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
    let begin_kw = slot(&mut index, &mut keywords, &mut kw_rules, BEGIN_KEYWORD);
    let percent_kw = slot(&mut index, &mut keywords, &mut kw_rules, "%");
    KeywordTable {
        keywords,
        kw_rules,
        unkeyed,
        begin_kw,
        percent_kw,
    }
}

/// The index of keyword `k` in `keywords` (and `kw_rules`), added with no
/// rules if it is new.
fn slot(
    index: &mut HashMap<String, usize>,
    keywords: &mut Vec<String>,
    kw_rules: &mut Vec<Vec<u32>>,
    k: &str,
) -> usize {
    if let Some(&i) = index.get(k) {
        return i;
    }
    index.insert(k.to_string(), keywords.len());
    keywords.push(k.to_string());
    kw_rules.push(Vec::new());
    keywords.len() - 1
}

fn long_window_keywords(rules: &[Rule]) -> RareByteSearch {
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
    long
}

/// A rule's `entropy` is bits per byte: 0 to 8.
fn check_entropy(e: f64, line: usize) -> Result<(), String> {
    if (0.0..=8.0).contains(&e) {
        Ok(())
    } else {
        Err(format!(
            "line {line}: entropy = {e}: must be between 0 and 8 bits per byte"
        ))
    }
}

/// `trusted` (built-in files, which the test suite validates) skips parsing
/// the regex now: it is parsed with everything else on the rule's first
/// keyword hit, which is most of what keeps startup in milliseconds.
pub(super) fn compile_rule(
    r: RuleSyntax,
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
        check_entropy(e, line).map_err(err)?;
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
                crate::validator::Validator::compile(v, &names, trusted)
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
    // The syntax's fields are moved from here on.
    let name = r
        .name
        .or_else(|| r.description.clone())
        .unwrap_or_else(|| r.id.clone());
    let rejects_names = r.provider.as_ref().is_some_and(|p| p.rejects_names);
    let provider = r
        .provider
        .or_else(|| {
            trusted
                .then(|| crate::Provider::of_tags(&r.tags, r.generic == Some(true)))
                .flatten()
        })
        .map(Arc::new);
    let info = RuleInfo {
        id: r.id.as_str().into(),
        aliases: r.aliases.into_iter().filter(|a| *a != r.id).collect(),
        name: name.into(),
        description: r.description.unwrap_or_default(),
        keywords: info_keywords,
        origin: origin.to_owned(),
        validator,
        provider,
    };
    let rule = Rule {
        pattern: r.regex,
        hir: hir.map_or_else(OnceLock::new, |h| OnceLock::from(Ok(h))),
        regex: OnceLock::new(),
        regex_wide: OnceLock::new(),
        secret_group: r.secret_group,
        entropy: r.entropy.map(|e| e as f32),
        keywords,
        path,
        max_len,
        unbounded,
        keyword_lead,
        lead: OnceLock::new(),
        run: OnceLock::new(),
        placeholder_check: r.placeholder_check.unwrap_or(true),
        generic: r.generic.unwrap_or(false),
        rejects_names,
        confidence,
        checksum,
        allowlists,
        config_secrets: None,
        config_paths: None,
        examples: r.examples,
        negative_examples: r.negative_examples,
    };
    Ok((rule, info, warnings))
}
