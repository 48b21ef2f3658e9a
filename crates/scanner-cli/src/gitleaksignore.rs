//! `.gitleaksignore`: a gitleaks user's list of findings to ignore, honoured
//! as gitleaks honours it.
//!
//! One finding per line, as gitleaks prints its `Fingerprint`:
//! `PATH:RULE:LINE` for a directory scan, `COMMIT:PATH:RULE:LINE` for
//! history (where an entry without a commit applies at every commit). `#` starts a comment. RULE may be a gitleaks rule id: it is
//! matched through the engine's aliases. A matched finding is suppressed and
//! counted as `gitleaksignore`.
//!
//! Unlike our baseline (`--baseline`, keyed by the secret's fingerprint and
//! the path), an entry names a line: when code above it moves, the entry no
//! longer matches and the finding comes back. Prefer a baseline for new
//! suppressions; this file is read so that a repository moving over from
//! gitleaks keeps its existing ones.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use scanner_engine::Engine;

use crate::filter::FindingFilter;
use crate::messages::escape_path;
use crate::output::PathFinding;

/// The file's name, looked up in the scanned directory.
pub const FILE_NAME: &str = ".gitleaksignore";

/// (commit, path, canonical rule id, line).
type Key = (Option<String>, String, String, u32);

pub struct GitleaksIgnore {
    entries: HashSet<Key>,
    engine: Arc<Engine>,
}

impl GitleaksIgnore {
    /// Reads `dir/.gitleaksignore` if there is one.
    pub fn discover(dir: &Path, engine: &Arc<Engine>) -> anyhow::Result<Option<GitleaksIgnore>> {
        let path = dir.join(FILE_NAME);
        if !path.is_file() {
            return Ok(None);
        }
        // Bounded as a config file: a repository's own file, read whole.
        let text = scanner_engine::read_bounded(&path)
            .with_context(|| format!("cannot read {}", escape_path(&path)))?;
        Ok(Some(GitleaksIgnore::parse(&text, engine, &path)))
    }

    /// The entries of `text`, the contents of `file`; a line that is no entry is a warning
    /// naming it (as gitleaks warns), and matches nothing.
    pub fn parse(text: &str, engine: &Arc<Engine>, file: &Path) -> GitleaksIgnore {
        let mut entries = HashSet::new();
        // An editor's byte order mark is no part of the first entry's path.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            // From the right: the line, the rule; what is left is the path,
            // after a commit id when it starts with 40 hex digits and `:`.
            let mut parts = line.rsplitn(3, ':');
            let (Some(n), Some(rule), Some(rest)) = (parts.next(), parts.next(), parts.next())
            else {
                invalid(file, i + 1, line);
                continue;
            };
            let Ok(n) = n.parse::<u32>() else {
                invalid(file, i + 1, line);
                continue;
            };
            let (commit, path) = match rest.split_once(':') {
                Some((c, p)) if c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    (Some(c.to_ascii_lowercase()), p)
                }
                _ => (None, rest),
            };
            let rule = engine
                .resolve_rule_id(rule)
                .map_or_else(|| rule.to_string(), |r| r.to_string());
            // As gitleaks: `\` is `/`, so that an entry written on Windows holds elsewhere.
            entries.insert((commit, normalize(&path.replace('\\', "/")), rule, n));
        }
        GitleaksIgnore {
            entries,
            engine: Arc::clone(engine),
        }
    }
}

fn invalid(file: &Path, n: usize, line: &str) {
    crate::messages::warn(
        Some(file),
        &format!(
            "line {n}: `{}` is not a gitleaks fingerprint \
             (PATH:RULE:LINE or COMMIT:PATH:RULE:LINE): ignored",
            crate::messages::escape(line)
        ),
    );
}

fn normalize(path: &str) -> String {
    path.strip_prefix("./").unwrap_or(path).to_string()
}

impl FindingFilter for GitleaksIgnore {
    fn check(&mut self, f: &PathFinding) -> Option<&'static str> {
        let rule = self
            .engine
            .resolve_rule_id(&f.finding.rule_id)
            .map_or_else(|| f.finding.rule_id.to_string(), |r| r.to_string());
        // From the repository's root, as gitleaks names a file of a clone.
        let path = normalize(&f.scope_path().to_string_lossy());
        // As gitleaks: an entry without a commit applies at every commit too.
        let mut key = (None, path, rule, f.finding.line);
        if self.entries.contains(&key) {
            return Some("gitleaksignore");
        }
        key.0 = Some(f.commit.as_ref()?.id.clone());
        self.entries.contains(&key).then_some("gitleaksignore")
    }
}
