//! `.scanner.toml`: per-repository configuration.
//!
//! # Discovery
//!
//! [`discover`] looks for `.scanner.toml` in the scan root (the first PATH argument, or its
//! directory when it is a file; without PATH, or for remote repositories (`--history URL`,
//! `--repos-from`), the current directory) and then in each ancestor
//! up to the top of the git work tree that holds the scan root (the nearest directory with a
//! `.git` directory or file, found without running git), and takes the nearest one, so a scan
//! started in a monorepo subdirectory finds the file at the repository root. Outside a
//! repository only the scan root is looked at. A file above the repository was written by
//! someone else for some other purpose: it is never used. `--config FILE` names the file instead
//! (it must exist); `--no-config` ignores every file. Only one file applies: files are not
//! merged.
//!
//! # Trust
//!
//! A discovered file ([`check_trusted`], also applied to an auto-loaded `.gitleaks.toml`) must
//! be owned by the user running the scan or by root, and not be writable by others, nor by its
//! group unless that group is the user's own primary group (with the user-private groups of
//! Debian and Ubuntu, a umask of 002 makes every file of a clone group-writable, and only the
//! user is in that group), as git refuses a repository owned by someone else
//! (`safe.directory`): such a file can make the scan see nothing (`allow_paths = ["*"]`). It is
//! refused with an error (exit 2) naming the file and the fix. A file named with `--config` is
//! the user's own choice and is not checked.
//!
//! A discovered file may choose what is scanned and reported, but not where secrets are sent:
//! the validators (`[rules.validate]`) of the rule files its `extra_rules` names are dropped,
//! and so are those of a discovered `.gitleaks.toml`. Whoever wrote the scanned tree wrote
//! them, and `scanner scan --validate` would send them every secret their rules match (an
//! untracked `.env` included). Naming the file with `--config`, `--rules` or `--extra-rules`
//! keeps them.
//!
//! The file in use is named on stderr (`scanner: note: config FILE`), a note like the others:
//! shown with `-q`, not under `--log-level error`.
//!
//! # Format
//!
//! ```toml
//! # Rule files to add to the built-in rules; relative paths are relative to this file.
//! extra_rules = ["ci/secrets-rules.toml"]
//! # Rule ids to drop.
//! disable_rules = ["generic-secret-assignment"]   # a gitleaks id such as generic-api-key works too
//! # Files never scanned: gitignore syntax, relative to this file's directory.
//! allow_paths = ["testdata/", "*.snap"]
//! # Secrets never reported: regexes over the secret (the rule's capture), unanchored.
//! allow_secrets = ["^AKIA_TEST_"]
//! # The baseline every mode applies (plain scans, --staged, --diff, --history, the hooks);
//! # relative to this file's directory. `--baseline FILE` replaces it.
//! baseline = ".scanner-baseline.json"
//!
//! # Per-rule overrides.
//! [rules.generic-password-assignment]
//! entropy = 4.0                          # replaces the rule's minimum entropy
//! allow_secrets = ["^dummy"]             # as above, this rule only
//! allow_paths = ["docs/"]                # as above, this rule only
//! ```
//!
//! Every key is optional. An unknown key, a wrong type, an invalid regex or glob is an error that
//! names the file and the key (and the line, for what the TOML parser sees: a syntax error, an
//! unknown key, a wrong type, and for an `allow_secrets` entry); the run then exits with status
//! 2. An error about an `allow_secrets` value (also per rule) does not show the value: it is a
//! secret, and the message goes to CI logs ([`holds_secrets`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use scanner_engine::EngineBuilder;
use serde::Deserialize;

use crate::messages::escape_path;
use crate::paths;

/// The file name looked for in the scan root and its ancestors.
pub const FILE_NAME: &str = ".scanner.toml";

/// `.scanner.toml` as written (syntax type; see the module docs).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigSyntax {
    #[serde(default)]
    extra_rules: Vec<PathBuf>,
    #[serde(default)]
    disable_rules: Vec<String>,
    #[serde(default)]
    allow_paths: Vec<String>,
    #[serde(default)]
    allow_secrets: Vec<toml::Spanned<String>>,
    baseline: Option<PathBuf>,
    #[serde(default)]
    rules: BTreeMap<String, RuleOverrideSyntax>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleOverrideSyntax {
    entropy: Option<f32>,
    #[serde(default)]
    allow_secrets: Vec<toml::Spanned<String>>,
    #[serde(default)]
    allow_paths: Vec<String>,
}

/// A loaded and validated configuration.
#[derive(Debug)]
pub struct Config {
    /// The file it came from (as found or given), for messages.
    pub path: PathBuf,
    /// The absolute directory of that file: the base of `extra_rules` and `allow_paths`.
    pub dir: PathBuf,
    /// Rule files to add, resolved against [`Config::dir`].
    pub extra_rules: Vec<PathBuf>,
    pub disable_rules: Vec<String>,
    /// Regexes over the secret, checked at load time.
    pub allow_secrets: Vec<String>,
    /// Per-rule overrides by rule id.
    pub rules: BTreeMap<String, RuleOverride>,
    /// `baseline`, resolved against [`Config::dir`].
    pub baseline: Option<PathBuf>,
    /// Found in or above the scanned tree ([`discover`]), not named with `--config`: the
    /// rules of its `extra_rules` may not choose where secrets are sent (their validators
    /// are dropped: `scan::build_engine`).
    pub found: bool,
    allow_paths: Gitignore,
}

/// `[rules.<id>]`.
#[derive(Debug)]
pub struct RuleOverride {
    /// Minimum entropy of the secret for this rule.
    pub entropy: Option<f32>,
    /// Regexes over the secret, checked at load time.
    pub allow_secrets: Vec<String>,
    allow_paths: Gitignore,
}

/// Finds and loads the configuration that applies to a scan of `roots` (see the module docs).
///
/// Returns `None` with `no_config`, or when no `.scanner.toml` is found.
pub fn discover(
    roots: &[PathBuf],
    explicit: Option<&Path>,
    no_config: bool,
) -> anyhow::Result<Option<Config>> {
    if no_config {
        return Ok(None);
    }
    if let Some(path) = explicit {
        return Config::load(path).map(Some);
    }
    let cwd = paths::current_dir()?;
    let start = match roots.first() {
        Some(root) => {
            let abs = paths::absolute(&cwd, root);
            if abs.is_dir() {
                abs
            } else {
                abs.parent().map(Path::to_path_buf).unwrap_or(abs)
            }
        }
        None => cwd,
    };
    // Canonical, so that `..` and symlinks lead to the real ancestors.
    let start = start.canonicalize().unwrap_or(start);
    for dir in search_dirs(&start) {
        let candidate = dir.join(FILE_NAME);
        if candidate.is_file() {
            check_trusted(&candidate)?;
            let found = Config::load(&candidate)?;
            return Ok(Some(Config {
                found: true,
                ..found
            }));
        }
    }
    Ok(None)
}

/// The directories where a config is looked for, nearest first: `start` and its ancestors up to
/// the top of the git work tree holding `start`, or `start` alone outside a repository.
pub fn search_dirs(start: &Path) -> Vec<&Path> {
    // `.git` is a directory in a clone, a file in a linked worktree or a submodule.
    match start.ancestors().position(|d| d.join(".git").exists()) {
        Some(top) => start.ancestors().take(top + 1).collect(),
        None => vec![start],
    }
}

/// The top of the git work tree holding the directory `start`, as [`discover`] finds it
/// (without running git): where a repository's paths begin. `start` outside a repository.
pub fn work_tree_top(start: &Path) -> PathBuf {
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    search_dirs(&start)
        .last()
        .map_or_else(|| start.clone(), |top| top.to_path_buf())
}

/// Refuses a discovered config file that someone else could have written (module docs,
/// "Trust"): not owned by this user or root, writable by others, or writable by a group that
/// is not this user's primary group.
#[cfg(unix)]
pub fn check_trusted(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path)
        .with_context(|| format!("cannot read config {}", escape_path(path)))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if md.uid() != me && md.uid() != 0 {
        bail!(
            "refusing config {}: it is owned by uid {}, not by you (uid {me}) or root, so \
             someone else may have written it; check it, then take it over (`chown`), name it \
             with --config, or scan with --no-config",
            escape_path(path),
            md.uid()
        );
    }
    // SAFETY: as geteuid.
    let my_group = unsafe { libc::getegid() };
    let group_writable = md.mode() & 0o020 != 0 && md.gid() != my_group;
    if md.mode() & 0o002 != 0 || group_writable {
        bail!(
            "refusing config {}: it is writable by group or others (mode {:o}), so someone \
             else may have written it; check it, then run `chmod go-w` on it, name it with \
             --config, or scan with --no-config",
            escape_path(path),
            md.mode() & 0o7777
        );
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn check_trusted(_path: &Path) -> anyhow::Result<()> {
    Ok(())
}

impl Config {
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = scanner_engine::read_bounded(path)
            .with_context(|| format!("cannot read config {}", escape_path(path)))?;
        let dir = paths::parent_dir(&paths::current_dir()?, path);
        Config::parse(&text, path, &dir)
    }

    /// Parses `text`; `path` names the file in errors, `dir` is the base of relative paths.
    pub fn parse(text: &str, path: &Path, dir: &Path) -> anyhow::Result<Config> {
        let syntax: ConfigSyntax = toml::from_str(text).map_err(|e| {
            let place = match e.span() {
                Some(span) => {
                    let (line, col) = line_col(text, span.start);
                    format!("{}:{line}:{col}", escape_path(path))
                }
                None => escape_path(path),
            };
            // serde says "field"; in a TOML file the user wrote a key.
            let mut message = e.message().replace("unknown field", "unknown key");
            let key = error_key(&e);
            if key.as_deref().is_some_and(holds_secrets) {
                message = without_value(&message);
            }
            // gitleaks' `--config` names its rule file: a user moving over passes it here.
            let gitleaks = toml::from_str::<toml::Table>(text).is_ok_and(|t| {
                ["extend", "allowlist", "allowlists"]
                    .iter()
                    .any(|k| t.contains_key(*k))
                    || t.get("rules").is_some_and(toml::Value::is_array)
            });
            let hint = match gitleaks {
                true => " (this is a gitleaks rule file: name it with --rules)",
                false => "",
            };
            match key {
                Some(key) => {
                    anyhow::anyhow!("invalid config {place}: `{key}`: {message}{hint}")
                }
                None => anyhow::anyhow!("invalid config {place}: {message}{hint}"),
            }
        })?;

        let err = |key: &str, what: String| {
            anyhow::anyhow!("invalid config {}: `{key}`: {what}", escape_path(path))
        };
        let secrets_err = |key: &str, (i, span, e): (usize, std::ops::Range<usize>, String)| {
            let (line, col) = line_col(text, span.start);
            anyhow::anyhow!(
                "invalid config {}:{line}:{col}: `{key}[{i}]`: {}",
                escape_path(path),
                without_value(&e)
            )
        };
        let allow_secrets = check_secret_regexes(syntax.allow_secrets)
            .map_err(|e| secrets_err("allow_secrets", e))?;
        let allow_paths = build_globs(dir, &syntax.allow_paths)
            .map_err(|(i, e)| err(&format!("allow_paths[{i}]"), e))?;
        let mut rules = BTreeMap::new();
        for (id, o) in syntax.rules {
            let allow_secrets = check_secret_regexes(o.allow_secrets)
                .map_err(|e| secrets_err(&format!("rules.{id}.allow_secrets"), e))?;
            let globs = build_globs(dir, &o.allow_paths)
                .map_err(|(i, e)| err(&format!("rules.{id}.allow_paths[{i}]"), e))?;
            if let Some(x) = o.entropy {
                if !(0.0..=8.0).contains(&x) {
                    bail!(err(
                        &format!("rules.{id}.entropy"),
                        format!("{x} is outside 0.0..=8.0")
                    ));
                }
            }
            rules.insert(
                id,
                RuleOverride {
                    entropy: o.entropy,
                    allow_secrets,
                    allow_paths: globs,
                },
            );
        }
        Ok(Config {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
            extra_rules: syntax.extra_rules.iter().map(|p| dir.join(p)).collect(),
            disable_rules: syntax.disable_rules,
            allow_secrets,
            rules,
            baseline: syntax.baseline.map(|p| dir.join(p)),
            found: false,
            allow_paths,
        })
    }

    /// Whether `path` is in `allow_paths`; a relative `path` is relative to `scan_base` (the
    /// current directory, or the repository root for `--staged`).
    pub fn is_path_allowed(&self, scan_base: &Path, path: &Path) -> bool {
        path_matches(&self.allow_paths, &self.dir, scan_base, path)
    }

    /// Hands the config's rule settings to the engine: `disable_rules`, `allow_secrets`, and
    /// the `entropy` and `allow_secrets` of each `[rules.<id>]` (the engine counts what they
    /// drop as `config allow`, and replaces the rule's entropy threshold). `extra_rules` are
    /// loaded by the caller with the other rule files; per-rule `allow_paths` are globs
    /// relative to this file, applied by [`Config::rule_filter`].
    pub fn apply(&self, mut b: EngineBuilder) -> EngineBuilder {
        b = b
            .disable(&self.disable_rules)
            .allow_secrets(&self.allow_secrets);
        for (id, o) in &self.rules {
            if o.entropy.is_none() && o.allow_secrets.is_empty() {
                continue;
            }
            let settings = scanner_engine::RuleOverride {
                entropy: o.entropy,
                allow_secrets: o.allow_secrets.clone(),
                allow_paths: Vec::new(),
            };
            b = b.override_rule(id, settings);
        }
        b
    }

    /// Names this file in an engine build error that came from the configuration (the engine
    /// reports those without a file: an override of an unknown rule, a bad regex).
    pub fn explain(&self, e: scanner_engine::Error) -> anyhow::Error {
        if e.file().is_some() {
            return e.into();
        }
        match e.rule() {
            Some(id) => anyhow::anyhow!(
                "invalid config {}: `rules.{id}`: {}",
                escape_path(&self.path),
                e.message()
            ),
            None => anyhow::anyhow!(
                "invalid config {}: {}",
                escape_path(&self.path),
                e.message()
            ),
        }
    }

    /// The per-rule `allow_paths` as a post-scan filter (reason `config`), `None` when no rule
    /// has any. `scan_base` is what relative finding paths are relative to. (The engine's own
    /// per-rule path setting takes regexes over the path as the scan names it, which would
    /// change with the directory the scan runs from; these globs are anchored at the config
    /// file.)
    pub fn rule_filter(&self, scan_base: &Path) -> anyhow::Result<Option<RuleOverrideFilter>> {
        let rules: HashMap<String, Gitignore> = self
            .rules
            .iter()
            .filter(|(_, o)| !o.allow_paths.is_empty())
            .map(|(id, o)| (id.clone(), o.allow_paths.clone()))
            .collect();
        if rules.is_empty() {
            return Ok(None);
        }
        Ok(Some(RuleOverrideFilter {
            rules,
            dir: self.dir.clone(),
            scan_base: scan_base.to_path_buf(),
        }))
    }
}

/// `[rules.<id>] allow_paths` applied to findings; see [`Config::rule_filter`].
pub struct RuleOverrideFilter {
    rules: HashMap<String, Gitignore>,
    dir: PathBuf,
    scan_base: PathBuf,
}

impl RuleOverrideFilter {
    /// Whether a finding of `rule_id` at `path` is in that rule's `allow_paths`.
    pub fn allows(&self, rule_id: &str, path: &Path) -> bool {
        self.rules
            .get(rule_id)
            .is_some_and(|g| path_matches(g, &self.dir, &self.scan_base, path))
    }
}

impl crate::filter::FindingFilter for RuleOverrideFilter {
    fn check(&mut self, f: &crate::output::PathFinding) -> Option<&'static str> {
        self.allows(&f.finding.rule_id, &f.scope_path())
            .then_some("config")
    }
}

fn path_matches(globs: &Gitignore, dir: &Path, scan_base: &Path, path: &Path) -> bool {
    if globs.is_empty() {
        return false;
    }
    let abs = paths::absolute(scan_base, path);
    // A path outside the config's directory is not covered by its globs.
    let Ok(rel) = abs.strip_prefix(dir) else {
        return false;
    };
    globs.matched_path_or_any_parents(rel, false).is_ignore()
}

/// Checks `allow_secrets` regexes; an error gives the entry's index and where it is in the file.
fn check_secret_regexes(
    regexes: Vec<toml::Spanned<String>>,
) -> Result<Vec<String>, (usize, std::ops::Range<usize>, String)> {
    let mut checked = Vec::with_capacity(regexes.len());
    for (i, r) in regexes.into_iter().enumerate() {
        let span = r.span();
        let r = r.into_inner();
        scanner_engine::check_regex(&r).map_err(|e| (i, span, e))?;
        checked.push(r);
    }
    Ok(checked)
}

/// Whether the value of the dotted `key` is secrets (`allow_secrets`, also per rule): errors
/// about it go to CI logs, so they name the key and the line, never the value.
fn holds_secrets(key: &str) -> bool {
    key == "allow_secrets" || key.starts_with("rules.") && key.ends_with(".allow_secrets")
}

/// `message` without the value it quotes: serde's `invalid type: string "ghp_...", expected a
/// sequence` keeps the kind of value (`string`) and what was expected; the regex checker's
/// pattern and caret, on the lines after its first, are dropped. Any other message is
/// replaced whole, as it may quote the value in a shape not known here.
fn without_value(message: &str) -> String {
    const HIDDEN: &str = "(the value is not shown: it may be a secret)";
    let first = message.lines().next().unwrap_or_default();
    if first.starts_with("invalid regex: ") {
        return format!("{first} {HIDDEN}");
    }
    let parts = message
        .split_once(": ")
        .and_then(|(what, rest)| Some((what, rest.rsplit_once(", expected ")?)));
    match parts {
        Some((what @ ("invalid type" | "invalid value"), (unexpected, expected))) => {
            let kind = unexpected.split(['"', '`']).next().unwrap_or_default();
            format!("{what}: {} {HIDDEN}, expected {expected}", kind.trim_end())
        }
        _ => format!("invalid value {HIDDEN}"),
    }
}

fn build_globs(dir: &Path, globs: &[String]) -> Result<Gitignore, (usize, String)> {
    let mut b = GitignoreBuilder::new(dir);
    for (i, g) in globs.iter().enumerate() {
        b.add_line(None, g)
            .map_err(|e| (i, format!("invalid glob {g:?}: {e}")))?;
    }
    b.build().map_err(|e| (0, e.to_string()))
}

/// 1-based line and column (in characters) of byte `offset`.
/// The dotted key a deserialization error is about (`rules.ID.entropy`), if the parser knew
/// one. The error shows it only when it has no input to quote, so it is asked without.
fn error_key(e: &toml::de::Error) -> Option<String> {
    let mut bare = e.clone();
    bare.set_input(None);
    let shown = bare.to_string();
    let key = shown.lines().find_map(|l| l.strip_prefix("in `"))?;
    Some(key.strip_suffix('`')?.to_string())
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<Config> {
        Config::parse(text, Path::new("/repo/.scanner.toml"), Path::new("/repo"))
    }

    #[test]
    fn every_key() {
        let c = parse(
            r#"
extra_rules = ["ci/rules.toml", "/abs/r.toml"]
disable_rules = ["generic-api-key"]
allow_paths = ["testdata/", "*.snap"]
allow_secrets = ["^AKIA_TEST_"]
baseline = "ci/baseline.json"

[rules.github-pat]
entropy = 3.5
allow_secrets = ["^ghp_0{36}$"]
allow_paths = ["docs/"]
"#,
        )
        .unwrap();
        assert_eq!(
            c.extra_rules,
            vec![
                PathBuf::from("/repo/ci/rules.toml"),
                PathBuf::from("/abs/r.toml")
            ]
        );
        assert_eq!(c.disable_rules, vec!["generic-api-key"]);
        assert_eq!(c.allow_secrets, vec!["^AKIA_TEST_"]);
        assert_eq!(c.baseline, Some(PathBuf::from("/repo/ci/baseline.json")));
        let o = &c.rules["github-pat"];
        assert_eq!(o.entropy, Some(3.5));
        assert_eq!(o.allow_secrets, vec!["^ghp_0{36}$"]);
        let base = Path::new("/repo/sub");
        assert!(c.is_path_allowed(base, Path::new("/repo/testdata/a/b.txt")));
        assert!(c.is_path_allowed(base, Path::new("../testdata/a/b.txt")));
        assert!(c.is_path_allowed(base, Path::new("./x.snap")));
        assert!(!c.is_path_allowed(base, Path::new("x.rs")));
        // Outside the config's directory: not covered.
        assert!(!c.is_path_allowed(base, Path::new("/other/testdata/a.txt")));
        let f = c.rule_filter(base).unwrap().unwrap();
        assert!(f.allows("github-pat", Path::new("../docs/x.md")));
        // gitignore semantics: `docs/` without a leading slash matches at any depth.
        assert!(f.allows("github-pat", Path::new("docs/x.md")));
        assert!(!f.allows("github-pat", Path::new("src/x.md")));
        assert!(!f.allows("other", Path::new("/repo/docs/x.md")));
    }

    #[test]
    fn empty_file_is_valid() {
        let c = parse("").unwrap();
        assert!(c.extra_rules.is_empty() && c.rules.is_empty());
        assert!(!c.is_path_allowed(Path::new("/repo"), Path::new("a")));
        assert!(c.rule_filter(Path::new("/repo")).unwrap().is_none());
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let e = parse("disable_rules = []\nallow_path = [\"x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid config /repo/.scanner.toml:2:1: unknown key `allow_path`"),
            "{e}"
        );
        let e = parse("[rules.x]\nentropyy = 3.0\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "invalid config /repo/.scanner.toml:2:1: `rules.x`: unknown key `entropyy`"
            ),
            "{e}"
        );
    }

    #[test]
    fn wrong_type_names_file_line_and_key() {
        let e = parse("disable_rules = \"x\"\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid config /repo/.scanner.toml:1:17: `disable_rules`: invalid type: string \
             \"x\", expected a sequence"
        );
        let e = parse("[rules.x]\nallow_paths = [\"a\", 1]\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid config /repo/.scanner.toml:2:21: `rules.x.allow_paths`: invalid type: \
             integer `1`, expected a string"
        );
    }

    #[test]
    fn bad_regex_and_glob_name_the_key() {
        let e = parse("allow_secrets = [\"ok\", \"(\"]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/repo/.scanner.toml:1:24: `allow_secrets[1]`: invalid regex"),
            "{e}"
        );
        let e = parse("[rules.r]\nallow_paths = [\"{a\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`rules.r.allow_paths[0]`: invalid glob"), "{e}");
        let e = parse("[rules.r]\nentropy = 9.5").unwrap_err().to_string();
        assert!(e.contains("`rules.r.entropy`"), "{e}");
    }

    #[test]
    fn discovery_from_a_subdirectory_and_overrides() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        // Discovery climbs to the repository's top.
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(FILE_NAME), "disable_rules = [\"top\"]").unwrap();
        std::fs::write(sub.join("f.txt"), "").unwrap();

        let c = discover(std::slice::from_ref(&sub), None, false)
            .unwrap()
            .unwrap();
        assert_eq!(c.path, root.join(FILE_NAME));
        assert_eq!(c.disable_rules, vec!["top"]);
        // A file root starts from its directory.
        let c = discover(&[sub.join("f.txt")], None, false)
            .unwrap()
            .unwrap();
        assert_eq!(c.dir, root);

        // The nearest wins.
        std::fs::write(root.join("a").join(FILE_NAME), "disable_rules = [\"mid\"]").unwrap();
        let c = discover(std::slice::from_ref(&sub), None, false)
            .unwrap()
            .unwrap();
        assert_eq!(c.disable_rules, vec!["mid"]);

        assert!(discover(std::slice::from_ref(&sub), None, true)
            .unwrap()
            .is_none());
        let other = root.join("other.toml");
        std::fs::write(&other, "allow_secrets = [\"x\"]").unwrap();
        let c = discover(std::slice::from_ref(&sub), Some(&other), false)
            .unwrap()
            .unwrap();
        assert_eq!(c.allow_secrets, vec!["x"]);
        let e = discover(&[sub], Some(&root.join("missing.toml")), false).unwrap_err();
        assert!(format!("{e:#}").contains("missing.toml"), "{e:#}");
    }

    #[test]
    fn discovery_stops_at_the_repository_or_the_scan_root() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().canonicalize().unwrap();
        let repo = top.join("repo");
        let sub = repo.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(top.join(FILE_NAME), "allow_paths = [\"*\"]").unwrap();
        // Outside a repository: the scan root only.
        assert!(discover(std::slice::from_ref(&sub), None, false)
            .unwrap()
            .is_none());
        assert_eq!(search_dirs(&sub), vec![sub.as_path()]);
        // A linked worktree's `.git` is a file: the top is found all the same, and the
        // file above it is not used.
        std::fs::write(repo.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(
            search_dirs(&sub),
            vec![sub.as_path(), &repo.join("a"), &repo]
        );
        assert!(discover(std::slice::from_ref(&sub), None, false)
            .unwrap()
            .is_none());
        std::fs::write(repo.join(FILE_NAME), "").unwrap();
        let c = discover(std::slice::from_ref(&sub), None, false)
            .unwrap()
            .unwrap();
        assert_eq!(c.path, repo.join(FILE_NAME));
    }

    #[cfg(unix)]
    #[test]
    fn a_config_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let file = root.join(FILE_NAME);
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(discover(std::slice::from_ref(&root), None, false)
            .unwrap()
            .is_some());
        // Group-writable with the user's own primary group (a umask of 002): accepted.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert!(discover(std::slice::from_ref(&root), None, false)
            .unwrap()
            .is_some());
        for mode in [0o646, 0o666] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = discover(std::slice::from_ref(&root), None, false)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!(
                    "refusing config {}: it is writable by group or others (mode {mode:o})",
                    file.display()
                )),
                "{e}"
            );
        }
        // Named with --config: the user's own choice.
        assert!(discover(std::slice::from_ref(&root), Some(&file), false)
            .unwrap()
            .is_some());
    }
}
