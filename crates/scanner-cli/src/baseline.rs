//! Baselines: known findings recorded once (`--write-baseline FILE`) and suppressed afterwards
//! (`--baseline FILE`), so that a repository with old, accepted findings can gate on new ones.
//!
//! # File format
//!
//! JSON, written by [`write()`], sorted (by path, line, rule, fingerprint) so that a baseline
//! diffs well under review and is the same whatever the thread count:
//!
//! ```json
//! {
//!   "version": 1,
//!   "entries": [
//!     {
//!       "fingerprint": "3f1c0e5a9b2d4c7e",
//!       "rule_id": "github-pat",
//!       "path": "src/config.rs",
//!       "line": 12
//!     }
//!   ]
//! }
//! ```
//!
//! - `version`: always `1`; another value is an error (a newer scanner's format).
//! - `fingerprint`: the finding's fingerprint, which depends on the rule id and the secret
//!   only (not on the line, the column or the surrounding text).
//! - `rule_id`: informational (the fingerprint already covers it); kept for review.
//! - `path`: the file, relative to the baseline file's directory, `/`-separated; a file
//!   outside that directory is recorded by its absolute path (which matches only in the same
//!   checkout), and a remote repository's file as the scan reported it
//!   (`https://host/x.git/conf/app.env`: the same from any directory).
//!   Non-UTF-8 bytes are replaced (such a path then never matches, not even the file it was
//!   recorded from: the finding is reported, never wrongly hidden).
//! - `line`: informational, where the finding was when recorded; ignored when matching.
//!
//! Unknown fields are errors.
//!
//! # Matching: fingerprint and path
//!
//! A finding is suppressed when an entry has the same fingerprint **and** the same path. So
//! moving code within a file (or editing around it) keeps it suppressed, a different secret on
//! the same line is reported (another fingerprint), and the same secret copied into another
//! file is reported too (a new exposure). The price: renaming a file resurfaces its baselined
//! findings until the baseline is rewritten. See `docs/precommit.md`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::messages::{escape, escape_path};
use crate::paths;

/// The only version written and read.
pub const VERSION: u32 = 1;

/// The baseline file as written and read (format: the module docs).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BaselineFile {
    version: u32,
    entries: Vec<Entry>,
}

/// One recorded finding (see the module docs for each field).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub fingerprint: String,
    pub rule_id: String,
    pub path: String,
    pub line: u32,
}

/// Turns a finding's path (as the scan reports it) into the baseline's form: relative to the
/// baseline file's directory; a remote repository's path (led by its URL) as it is.
#[derive(Clone, Debug)]
pub struct PathKey {
    /// What relative finding paths are relative to: the current directory, or the repository
    /// root for `--staged`.
    scan_base: PathBuf,
    /// The baseline file's directory, absolute and canonical.
    baseline_dir: PathBuf,
    /// The URLs (without credentials) of the remote repositories scanned: their findings'
    /// paths name no local file, and are the same from any directory.
    remotes: Vec<String>,
}

impl PathKey {
    pub fn new(scan_base: &Path, baseline_file: &Path) -> anyhow::Result<PathKey> {
        let cwd = paths::current_dir()?;
        Ok(PathKey {
            scan_base: paths::absolute(&cwd, scan_base),
            baseline_dir: paths::parent_dir(&cwd, baseline_file),
            remotes: Vec::new(),
        })
    }

    pub fn key(&self, path: &Path) -> String {
        self.exact_key(path).unwrap_or_else(|lossy| lossy)
    }

    /// The key, or `Err(lossy key)` when a byte of it is not UTF-8: the baseline holds such a
    /// key with U+FFFD in place of the bytes, so two names that differ only there read the
    /// same, and a lossy key must never match.
    fn exact_key(&self, path: &Path) -> Result<String, String> {
        let whole = path.to_string_lossy();
        let (key, exact) = if self.remotes.iter().any(|r| whole.starts_with(r.as_str())) {
            (whole.into_owned(), path.to_str().is_some())
        } else {
            let abs = paths::absolute(&self.scan_base, path);
            match abs.strip_prefix(&self.baseline_dir) {
                Ok(rel) => {
                    let parts: Vec<_> = rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect();
                    (parts.join("/"), rel.to_str().is_some())
                }
                Err(_) => (abs.to_string_lossy().into_owned(), abs.to_str().is_some()),
            }
        };
        if exact {
            Ok(key)
        } else {
            Err(key)
        }
    }
}

/// The largest baseline read: 64 MiB, about 200,000 entries. `baseline` may come from a
/// repository's `.scanner.toml`: `/dev/zero` or a sparse file there must fail, not fill memory.
pub const MAX_BASELINE: u64 = 64 << 20;

/// Reads a baseline; errors name the file.
pub fn load(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let text = scanner_engine::read_at_most(path, MAX_BASELINE, "a baseline", "a baseline")
        .with_context(|| format!("cannot read baseline {}", escape_path(path)))?;
    // A report is a JSON array of findings: ours, or gitleaks' (its `--baseline-path`). A
    // baseline is an object: it is parsed once, as one.
    let array = text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    if let Some(Ok(serde_json::Value::Array(findings))) =
        array.then(|| serde_json::from_slice(&text))
    {
        let whose = match findings.first().is_some_and(|f| f.get("RuleID").is_some()) {
            true => "a gitleaks report (gitleaks' --baseline-path)",
            false => "a report",
        };
        bail!(
            "invalid baseline {}: this is {whose}, not a baseline: write one with \
             `scanner scan --write-baseline FILE`",
            escape_path(path)
        );
    }
    let file: BaselineFile = serde_json::from_slice(&text)
        .with_context(|| format!("invalid baseline {}", escape_path(path)))?;
    if file.version != VERSION {
        bail!(
            "invalid baseline {}: version {} (this scanner reads version {VERSION})",
            escape_path(path),
            file.version
        );
    }
    Ok(file.entries)
}

/// Writes `entries` (sorted, one per fingerprint and path) atomically (see
/// [`crate::outfile`]): a reader never sees a half-written baseline. Returns how many entries
/// the file holds.
pub fn write(path: &Path, mut entries: Vec<Entry>) -> anyhow::Result<usize> {
    entries.sort_by(|a, b| {
        (&a.path, a.line, &a.rule_id, &a.fingerprint).cmp(&(
            &b.path,
            b.line,
            &b.rule_id,
            &b.fingerprint,
        ))
    });
    let mut seen = BTreeSet::new();
    entries.retain(|e| seen.insert((e.fingerprint.clone(), e.path.clone())));
    let n = entries.len();
    let mut json = serde_json::to_vec_pretty(&BaselineFile {
        version: VERSION,
        entries,
    })?;
    json.push(b'\n');

    crate::outfile::OutputFile::write_whole(path, &json).context("cannot write the baseline")?;
    Ok(n)
}

/// Suppresses the findings recorded in a baseline (reason `baseline`) and remembers which
/// entries matched, for `--report-unused`.
pub struct Baseline {
    /// path → fingerprint → index into `entries`; nested so a lookup borrows the fingerprint.
    index: HashMap<String, HashMap<String, usize>>,
    entries: Vec<Entry>,
    used: Vec<bool>,
    keys: PathKey,
    report_unused: bool,
    origin: PathBuf,
}

impl Baseline {
    pub fn new(entries: Vec<Entry>, keys: PathKey, report_unused: bool, origin: &Path) -> Baseline {
        let mut index: HashMap<String, HashMap<String, usize>> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            index
                .entry(e.path.clone())
                .or_default()
                .insert(e.fingerprint.clone(), i);
        }
        let used = vec![false; entries.len()];
        Baseline {
            index,
            entries,
            used,
            keys,
            report_unused,
            origin: origin.to_path_buf(),
        }
    }

    /// Whether the finding `fingerprint` at `path` is baselined (and marks its entry used).
    pub fn suppresses(&mut self, path: &Path, fingerprint: &str) -> bool {
        let Ok(key) = self.keys.exact_key(path) else {
            return false;
        };
        let hit = self
            .index
            .get(&key)
            .and_then(|by_fp| by_fp.get(fingerprint));
        match hit {
            Some(&i) => {
                self.used[i] = true;
                true
            }
            None => false,
        }
    }

    /// With `--report-unused`, one line per entry that matched nothing.
    pub fn unused_report(&self) -> Vec<String> {
        if !self.report_unused {
            return Vec::new();
        }
        let mut lines: Vec<String> = self
            .entries
            .iter()
            .zip(&self.used)
            .filter(|(_, used)| !**used)
            .map(|(e, _)| {
                crate::messages::info_line(&format!(
                    "unused baseline entry in {}: {}:{} {} (fingerprint {})",
                    escape_path(&self.origin),
                    escape(&e.path),
                    e.line,
                    e.rule_id,
                    e.fingerprint
                ))
            })
            .collect();
        lines.sort();
        lines.dedup();
        lines
    }
}

/// Records every finding it sees (it drops none), for `--write-baseline`. It collects in a
/// `Vec` of its own (the sink thread calls it for every finding: no lock there) and hands the
/// lot over to the shared slot when dropped, i.e. when the sink thread is done; the caller
/// writes them after the scan, where a failure can still change the exit status.
pub struct Recorder {
    keys: PathKey,
    seen: Vec<Entry>,
    out: Arc<Mutex<Vec<Entry>>>,
}

impl Recorder {
    pub fn new(keys: PathKey) -> (Recorder, Arc<Mutex<Vec<Entry>>>) {
        let out = Arc::new(Mutex::new(Vec::new()));
        (
            Recorder {
                keys,
                seen: Vec::new(),
                out: out.clone(),
            },
            out,
        )
    }

    pub fn record(&mut self, path: &Path, rule_id: &str, fingerprint: &str, line: u32) {
        self.seen.push(Entry {
            fingerprint: fingerprint.to_string(),
            rule_id: rule_id.to_string(),
            path: self.keys.key(path),
            line,
        });
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.append(&mut self.seen);
    }
}

impl crate::filter::FindingFilter for Baseline {
    fn check(&mut self, f: &crate::output::PathFinding) -> Option<&'static str> {
        self.suppresses(&f.path, &f.finding.fingerprint)
            .then_some("baseline")
    }

    fn finish(&mut self) -> Vec<String> {
        self.unused_report()
    }
}

impl crate::filter::FindingFilter for Recorder {
    fn check(&mut self, f: &crate::output::PathFinding) -> Option<&'static str> {
        let x = &f.finding;
        self.record(&f.path, &x.rule_id, &x.fingerprint, x.line);
        None
    }
}

/// `--write-baseline FILE`: what the [`Recorder`] collected, to write once the scan is over.
pub struct Pending {
    path: PathBuf,
    entries: Arc<Mutex<Vec<Entry>>>,
}

impl Pending {
    /// Writes the file; returns its path and how many findings it holds.
    pub fn write(self) -> anyhow::Result<(PathBuf, usize)> {
        let entries = std::mem::take(&mut *self.entries.lock().expect("baseline recorder"));
        let n = write(&self.path, entries)?;
        Ok((self.path, n))
    }
}

type Filters = Vec<Box<dyn crate::filter::FindingFilter>>;

/// The filters for `--write-baseline` and `--baseline`, in this order: the recorder sees the
/// findings left by the earlier filters (config, diff) but not yet by the old baseline, so
/// `--baseline b.json --write-baseline b.json` refreshes a baseline. `scan_base` is what
/// relative finding paths are relative to; `remotes` the URLs of the remote repositories
/// scanned, whose findings are keyed as they are named.
pub fn filters(
    baseline: Option<&Path>,
    write_to: Option<&Path>,
    report_unused: bool,
    scan_base: &Path,
    remotes: &[String],
) -> anyhow::Result<(Filters, Option<Pending>)> {
    let mut out: Filters = Vec::new();
    let mut pending = None;
    let keys = |path: &Path| -> anyhow::Result<PathKey> {
        Ok(PathKey {
            remotes: remotes.to_vec(),
            ..PathKey::new(scan_base, path)?
        })
    };
    if let Some(path) = write_to {
        let (recorder, entries) = Recorder::new(keys(path)?);
        out.push(Box::new(recorder));
        pending = Some(Pending {
            path: path.to_path_buf(),
            entries,
        });
    }
    if let Some(path) = baseline {
        let entries = load(path)?;
        out.push(Box::new(Baseline::new(
            entries,
            keys(path)?,
            report_unused,
            path,
        )));
    }
    Ok((out, pending))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> PathKey {
        PathKey {
            scan_base: PathBuf::from("/repo/sub"),
            baseline_dir: PathBuf::from("/repo"),
            remotes: Vec::new(),
        }
    }

    #[test]
    fn path_keys_are_relative_to_the_baseline() {
        let k = keys();
        assert_eq!(k.key(Path::new("a/b.rs")), "sub/a/b.rs");
        assert_eq!(k.key(Path::new("./a/../c.rs")), "sub/c.rs");
        assert_eq!(k.key(Path::new("../top.rs")), "top.rs");
        assert_eq!(k.key(Path::new("/repo/x")), "x");
        assert_eq!(k.key(Path::new("/elsewhere/x")), "/elsewhere/x");
    }

    #[test]
    fn matches_fingerprint_and_path_and_reports_unused() {
        let entries = vec![
            Entry {
                fingerprint: "f1".into(),
                rule_id: "r".into(),
                path: "sub/a".into(),
                line: 3,
            },
            Entry {
                fingerprint: "f2".into(),
                rule_id: "r".into(),
                path: "sub/a".into(),
                line: 9,
            },
        ];
        let mut b = Baseline::new(entries, keys(), true, Path::new("b.json"));
        assert!(b.suppresses(Path::new("a"), "f1"), "same secret, any line");
        assert!(b.suppresses(Path::new("./a"), "f1"));
        assert!(!b.suppresses(Path::new("a"), "f3"), "another secret");
        assert!(
            !b.suppresses(Path::new("copy"), "f1"),
            "the same secret in another file"
        );
        assert_eq!(
            b.unused_report(),
            vec!["scanner: unused baseline entry in b.json: sub/a:9 r (fingerprint f2)"]
        );
        let quiet = Baseline::new(Vec::new(), keys(), false, Path::new("b.json"));
        assert!(quiet.unused_report().is_empty());
    }

    #[test]
    fn round_trip_sorted_deduplicated_atomic() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("baseline.json");
        let e = |f: &str, p: &str, l| Entry {
            fingerprint: f.into(),
            rule_id: "r".into(),
            path: p.into(),
            line: l,
        };
        write(
            &path,
            vec![
                e("f2", "b", 1),
                e("f1", "a", 7),
                e("f1", "a", 2),
                e("f1", "b", 2),
            ],
        )
        .unwrap();
        assert_eq!(
            load(&path).unwrap(),
            vec![e("f1", "a", 2), e("f2", "b", 1), e("f1", "b", 2)]
        );
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|d| d.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["baseline.json"], "no temp file left");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("{\n  \"version\": 1,\n  \"entries\": [\n"),
            "{text}"
        );
    }

    #[test]
    fn load_errors_name_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("b.json");
        std::fs::write(&path, r#"{"version": 2, "entries": []}"#).unwrap();
        let e = format!("{:#}", load(&path).unwrap_err());
        assert!(e.contains("b.json") && e.contains("version 2"), "{e}");
        std::fs::write(&path, r#"{"version": 1, "entries": [], "extra": 1}"#).unwrap();
        let e = format!("{:#}", load(&path).unwrap_err());
        assert!(
            e.contains("b.json") && e.contains("unknown field `extra`"),
            "{e}"
        );
        let e = format!("{:#}", load(&tmp.path().join("none.json")).unwrap_err());
        assert!(e.contains("none.json"), "{e}");
    }
}
