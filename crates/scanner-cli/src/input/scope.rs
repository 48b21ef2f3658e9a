//! [`Scope`]: what the user said must not be scanned, asked by every source.
//!
//! | rule | skip reason | source of the rule |
//! | --- | --- | --- |
//! | the run's own report (`-o FILE`, its temp file, stdout redirected into the tree), its baselines (`--baseline`, `--write-baseline`, the config's `baseline`) and `--stats-json` file | `own report` | the run |
//! | `--exclude GLOB` (gitignore syntax, relative to the current directory) | `excluded` | flags |
//! | `allow_paths` | `allowlisted path` | `.scanner.toml` |
//! | `--max-filesize` | `too large` | flags (checked by the worker, which knows the size) |
//!
//! The walker asks [`Scope::check_walked`] from its entry filter, so an
//! excluded directory is never entered. Sources that list paths themselves
//! (explicit files, staged blobs) ask [`Scope::check_listed`], which also
//! matches the globs against every parent directory: `--exclude vendor/`
//! covers `vendor/a/b.js` whether it was walked or listed. A directory
//! root is asked about the same way ([`Scope::check_root_dir`]): `vendor/a`
//! named on the command line is not walked either.

use std::ffi::OsStr;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::input::skip::Skip;

/// Decides whether a path is allowlisted by the user config
/// (`allow_paths`): `(path, is_dir) -> true` to skip it.
pub type PathAllow = Arc<dyn Fn(&Path, bool) -> bool + Send + Sync>;

/// The one scope filter (see the module docs). Cheap to clone.
#[derive(Clone)]
pub struct Scope {
    cwd: PathBuf,
    excludes: Gitignore,
    allow: Option<PathAllow>,
    own_output: OwnOutput,
    /// `--max-filesize`.
    pub max_filesize: Option<u64>,
}

impl Default for Scope {
    fn default() -> Scope {
        Scope {
            cwd: PathBuf::from("."),
            excludes: Gitignore::empty(),
            allow: None,
            own_output: OwnOutput::default(),
            max_filesize: None,
        }
    }
}

impl Scope {
    /// `exclude` globs are relative to `cwd`. Errors name the bad glob.
    pub fn new(
        cwd: &Path,
        exclude: &[String],
        allow: Option<PathAllow>,
        max_filesize: Option<u64>,
    ) -> anyhow::Result<Scope> {
        let mut b = GitignoreBuilder::new(cwd);
        for glob in exclude {
            b.add_line(None, glob)
                .with_context(|| format!("--exclude {glob:?}"))?;
        }
        Ok(Scope {
            cwd: cwd.to_path_buf(),
            excludes: b.build().context("--exclude")?,
            allow,
            own_output: OwnOutput::default(),
            max_filesize,
        })
    }

    /// The files this run writes, never scanned.
    pub fn set_own_output(&mut self, own: OwnOutput) {
        self.own_output = own;
    }

    /// For the walker's entry filter: `path` as walked.
    pub fn check_walked(&self, path: &Path, is_dir: bool) -> Option<Skip> {
        self.check_walked_named(path, path.file_name(), is_dir)
    }

    /// [`Scope::check_walked`] of `path`, whose file name `name` the walker
    /// holds already (it listed it): not derived again.
    pub fn check_walked_entry(&self, path: &Path, name: &OsStr, is_dir: bool) -> Option<Skip> {
        self.check_walked_named(path, Some(name), is_dir)
    }

    fn check_walked_named(&self, path: &Path, name: Option<&OsStr>, is_dir: bool) -> Option<Skip> {
        let own = |name| self.own_output.contains_named(path, name);
        if !is_dir && name.is_some_and(own) {
            return Some(Skip::OwnOutput);
        }
        if self.excludes.matched(path, is_dir).is_ignore() {
            return Some(Skip::Excluded);
        }
        self.allowlisted(path, is_dir)
    }

    /// For a file named as a root and read from `path` (an explicit
    /// argument, a FIFO): the run's own output, then [`Scope::check_listed`].
    pub fn check_listed_file(&self, path: &Path) -> Option<Skip> {
        if self.own_output.contains(path) {
            return Some(Skip::OwnOutput);
        }
        self.check_listed(path)
    }

    /// For content a source lists itself by path (a staged or history blob,
    /// standard input, an archive member): the globs apply to the path and
    /// to each of its directories. Not the run's own output, which is a
    /// file on disk: a committed `report.json` is scanned under `-o
    /// report.json`.
    pub fn check_listed(&self, path: &Path) -> Option<Skip> {
        if self.excluded_named(path, false) {
            return Some(Skip::Excluded);
        }
        self.allowlisted(path, false)
    }

    /// For a directory named as a root: the globs apply to it and to each of
    /// its parents, as [`Scope::check_listed`]'s do to a file's (the walk
    /// below it matches each entry alone, so an excluded directory above
    /// the root would never be met), but only to the parents at or below
    /// the current directory, which the globs are relative to: `--exclude
    /// tmp` must not drop the whole of a root `/tmp/x/repo`.
    pub fn check_root_dir(&self, path: &Path) -> Option<Skip> {
        if self.excluded_named(path, true) {
            return Some(Skip::Excluded);
        }
        self.allowlisted(path, true)
    }

    /// `--max-filesize`, once the size is known.
    pub fn check_size(&self, size: u64) -> Option<Skip> {
        self.max_filesize
            .is_some_and(|max| size > max)
            .then_some(Skip::TooLarge)
    }

    fn allowlisted(&self, path: &Path, is_dir: bool) -> Option<Skip> {
        self.allow
            .as_ref()
            .is_some_and(|a| a(path, is_dir))
            .then_some(Skip::AllowlistedPath)
    }

    /// Whether a glob excludes `path` (a directory root when `is_dir`: see
    /// [`Scope::check_root_dir`]) or one of its parents.
    fn excluded_named(&self, path: &Path, is_dir: bool) -> bool {
        // Without `--exclude` there is nothing to match: a history scan asks about every
        // blob, and walking each one's ancestors cost 2.5% of the instructions of a scan
        // of 60,000 small blobs.
        if self.excludes.is_empty() {
            return false;
        }
        let path = path.strip_prefix(&self.cwd).unwrap_or(path);
        // `matched_path_or_any_parents` without its assertion that the path is
        // under the matcher's root: outside it, unanchored globs still apply.
        for (i, p) in path.ancestors().enumerate() {
            if p.as_os_str().is_empty() || p.parent().is_none() {
                break;
            }
            // `.` and `..` name no file: `--exclude '.*'` (hidden files)
            // must not match the `./` of `./a.txt`.
            if p.file_name().is_none() {
                continue;
            }
            let outside = || {
                p.components()
                    .any(|c| matches!(c, Component::RootDir | Component::ParentDir))
            };
            if is_dir && i > 0 && outside() {
                break;
            }
            match self.excludes.matched(p, is_dir || i > 0) {
                ignore::Match::None => {}
                m => return m.is_ignore(),
            }
        }
        false
    }
}

/// Files the run writes, matched by name first (no syscall for any other
/// entry) and then by canonical path.
#[derive(Clone, Debug, Default)]
pub struct OwnOutput {
    files: Vec<PathBuf>,
}

impl OwnOutput {
    /// `paths` may not exist yet (the final report before its rename):
    /// their directory is canonicalized instead.
    pub fn new(paths: &[&Path]) -> OwnOutput {
        let files = paths
            .iter()
            .filter_map(|p| {
                let name = p.file_name()?;
                let dir = match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                Some(fs::canonicalize(dir).ok()?.join(name))
            })
            .collect();
        OwnOutput { files }
    }

    pub fn contains(&self, path: &Path) -> bool {
        path.file_name()
            .is_some_and(|name| self.contains_named(path, name))
    }

    /// [`OwnOutput::contains`] of `path`, whose file name is `name`.
    fn contains_named(&self, path: &Path, name: &OsStr) -> bool {
        if self.files.is_empty() {
            return false;
        }
        if !self.files.iter().any(|f| f.file_name() == Some(name)) {
            return false;
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        fs::canonicalize(dir).is_ok_and(|d| self.files.contains(&d.join(name)))
    }
}
