//! Allowlists: a rule's or the file's `[[allowlists]]`, compiled lazily
//! (most are never consulted in a run), and the regex sets they and path
//! scopes are made of.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex_automata::meta::{self, Regex};
use regex_syntax::hir::Hir;

use super::DropReason;
use crate::syntax::AllowlistSyntax;

/// What an allowlist regex is matched against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Target {
    Secret,
    Match,
    Line,
}

/// A compiled `[[rules.allowlists]]` / `[allowlist]`.
#[derive(Debug)]
pub(crate) struct Allowlist {
    and: bool,
    /// `AND` with `commits`: it holds only in those commits, and a match carries none, so it
    /// never holds (dropping the commits would allow the rest in every commit).
    never: bool,
    pub(super) target: Target,
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

impl Allowlist {
    /// `trusted`: a built-in allowlist, whose regexes the test suite
    /// checks; they are not parsed until first used.
    pub(super) fn compile(
        al: &AllowlistSyntax,
        what: &str,
        trusted: bool,
    ) -> Result<Allowlist, String> {
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
            never: and && !al.commits.is_empty(),
            target,
            regexes: set(&al.regexes, "regexes")?,
            stopwords,
            paths: set(&al.paths, "paths")?,
        })
    }

    /// gitleaks semantics: OR, any criterion; AND, every non-empty one.
    pub(super) fn check(&self, path: &str, secret: &[u8], target: &[u8]) -> Option<DropReason> {
        if self.never {
            return None;
        }
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
    pub(super) fn allows_path_alone(&self, path: &str) -> bool {
        let Some(paths) = self.paths.as_ref().filter(|_| !self.never) else {
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
    pub(super) fn is_match(&self, haystack: impl AsRef<[u8]>) -> bool {
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
pub(super) fn compile_set(patterns: &[String]) -> Result<LazyRegex, String> {
    for p in patterns {
        crate::re2::parse(p).map_err(|m| format!("`{p}`: {m}"))?;
    }
    Ok(LazyRegex::unchecked(patterns))
}

impl LazyRegex {
    /// Without validation: for built-in files, which the test suite checks
    /// (parsing them all at build was a sixth of startup).
    pub(super) fn unchecked(patterns: &[String]) -> LazyRegex {
        LazyRegex {
            patterns: patterns.to_vec(),
            regex: OnceLock::new(),
        }
    }
}
