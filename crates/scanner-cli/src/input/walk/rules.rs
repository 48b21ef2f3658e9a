//! The ignore rules of the getdents walk: one directory's ([`DirRules`]) and a walk's ([`IgnoreRules`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::sync::Arc;

/// The names whose presence in a directory makes [`DirRules::read`] look
/// further: the ignore files, and `.git` for `.git/info/exclude`.
#[cfg(target_os = "linux")]
const IGNORE_FILES: [&str; 4] = [".scannerignore", ".ignore", ".gitignore", ".git"];

/// The ignore rules one directory holds, as the `ignore` crate's walk reads
/// them (its `dir.rs`, `add_child_path`, with our settings): each file's
/// globs relative to the directory.
#[cfg(target_os = "linux")]
struct DirRules {
    /// `.scannerignore` (the crate's "custom ignore file").
    pub(super) custom: ignore::gitignore::Gitignore,
    /// `.ignore`.
    pub(super) dot_ignore: ignore::gitignore::Gitignore,
    /// `.gitignore`.
    pub(super) git: ignore::gitignore::Gitignore,
    /// `.git/info/exclude` (of the common directory, for a worktree).
    pub(super) git_exclude: ignore::gitignore::Gitignore,
}

#[cfg(target_os = "linux")]
impl DirRules {
    /// Reads the ignore files of directory `dir`; `has(name)` says whether
    /// `dir` may hold an entry `name` (one of [`IGNORE_FILES`]). Returns the
    /// errors grouped as the crate groups them (only a parent's are shown).
    pub(super) fn read(
        dir: &Path,
        has: impl Fn(&str) -> bool,
    ) -> (DirRules, Option<ignore::Error>) {
        use ignore::gitignore::Gitignore;
        let mut errs = Vec::new();
        let mut file = |name: &str, file: Option<PathBuf>| match file {
            Some(file) if has(name) => {
                let (gi, err) = read_ignore_file(dir, &file);
                errs.extend(err);
                gi
            }
            _ => Gitignore::empty(),
        };
        let custom = file(".scannerignore", Some(dir.join(".scannerignore")));
        let dot_ignore = file(".ignore", Some(dir.join(".ignore")));
        let git = file(".gitignore", Some(dir.join(".gitignore")));
        let mut resolve_err = None;
        let exclude_file = has(".git")
            .then(|| {
                let git_type = dir.join(".git").metadata().ok().map(|md| md.file_type());
                match git_common_dir(dir, git_type) {
                    Ok(git_dir) => Some(git_dir.join("info/exclude")),
                    Err(e) => {
                        resolve_err = e;
                        None
                    }
                }
            })
            .flatten();
        let git_exclude = file(".git", exclude_file);
        errs.extend(resolve_err);
        let rules = DirRules {
            custom,
            dot_ignore,
            git,
            git_exclude,
        };
        (rules, grouped(errs))
    }

    pub(super) fn is_empty(&self) -> bool {
        self.custom.is_empty()
            && self.dot_ignore.is_empty()
            && self.git.is_empty()
            && self.git_exclude.is_empty()
    }
}

/// One ignore file's matcher for directory `dir`, as the crate's
/// `create_gitignore` builds it: a file that does not exist or cannot be
/// read adds nothing and is no error.
#[cfg(target_os = "linux")]
fn read_ignore_file(
    dir: &Path,
    file: &Path,
) -> (ignore::gitignore::Gitignore, Option<ignore::Error>) {
    use ignore::gitignore::{Gitignore, GitignoreBuilder};
    let mut b = GitignoreBuilder::new(dir);
    let mut errs = Vec::new();
    if file.exists() {
        errs.extend(b.add(file).filter(|e| !e.is_io()));
    }
    let gi = b.build().unwrap_or_else(|e| {
        errs.push(e);
        Gitignore::empty()
    });
    (gi, grouped(errs))
}

/// Errors as the crate's `PartialErrorBuilder` returns them: none, the one,
/// or all of them as `Partial`.
#[cfg(target_os = "linux")]
pub(super) fn grouped(mut errs: Vec<ignore::Error>) -> Option<ignore::Error> {
    match errs.len() {
        0 => None,
        1 => errs.pop(),
        _ => Some(ignore::Error::Partial(errs)),
    }
}

/// The directory whose `info/exclude` applies to `dir`, as the crate's
/// `resolve_git_commondir` finds it: `dir/.git`, or for a `.git` file
/// (`gitdir: X`) the `commondir` that `X` names; `Err(None)` when there is
/// none.
#[cfg(target_os = "linux")]
fn git_common_dir(
    dir: &Path,
    git_type: Option<fs::FileType>,
) -> Result<PathBuf, Option<ignore::Error>> {
    use std::io::BufRead;
    let git = dir.join(".git");
    if !git_type.is_some_and(|t| t.is_file()) {
        return Ok(git);
    }
    let io_err = |e: io::Error, path: &Path| {
        Some(ignore::Error::WithPath {
            path: path.to_path_buf(),
            err: Box::new(ignore::Error::Io(e)),
        })
    };
    let first_line = |path: &Path| -> Result<Option<String>, Option<ignore::Error>> {
        let file = fs::File::open(path).map_err(|e| io_err(e, path))?;
        io::BufReader::new(file)
            .lines()
            .next()
            .transpose()
            .map_err(|e| io_err(e, path))
    };
    let line = first_line(&git)?.ok_or(None)?;
    let real = PathBuf::from(line.strip_prefix("gitdir: ").ok_or(None)?);
    let common_file = real.join("commondir");
    if fs::File::open(&common_file).is_err() {
        return Err(None);
    }
    let common = first_line(&common_file)?.ok_or(None)?;
    Ok(if common.starts_with('.') {
        real.join(common)
    } else {
        PathBuf::from(common)
    })
}

/// The ignore rules in force in one walked directory, matched as the
/// `ignore` crate's walk matches them (its `Ignore::matched_ignore`, with
/// `require_git(false)`, no overrides, types or hidden filter): per kind of
/// file, the deepest directory with a match decides, and the kinds rank
/// `.scannerignore`, `.ignore`, `.gitignore`, `.git/info/exclude`, the global
/// git excludes. Directories above the root come last, matched by the
/// absolute path.
///
/// Cheap to clone (two `Arc`s): a directory's rules are its parent's plus
/// its own ignore files ([`IgnoreRules::inside`]), a link to the parent's
/// chain, so the directory tasks of a parallel walk share every ancestor's
/// matchers, read once, and a directory's rules live as long as a task
/// below it does.
#[cfg(target_os = "linux")]
#[derive(Clone)]
pub(super) struct IgnoreRules {
    /// The walked directories on the way down that hold rules, deepest
    /// first; `None` while none does.
    walked: Option<Arc<RuleChain>>,
    /// What holds for the whole walk of the root.
    root: Arc<RootRules>,
}

/// One walked directory's rules and its nearest ancestor's with any.
#[cfg(target_os = "linux")]
struct RuleChain {
    rules: DirRules,
    up: Option<Arc<RuleChain>>,
}

/// The rules of a walk that do not depend on the directory.
#[cfg(target_os = "linux")]
struct RootRules {
    /// The root's parents that hold rules, nearest first.
    parents: Vec<DirRules>,
    /// The root, canonical (paths are matched against `parents` under it).
    absolute_root: PathBuf,
    /// The root as given (walked paths start with it).
    root: PathBuf,
    /// `core.excludesFile`, relative to the current directory.
    global: ignore::gitignore::Gitignore,
}

#[cfg(target_os = "linux")]
impl IgnoreRules {
    /// The rules above walk root `root`, and the errors in its parents'
    /// ignore files (what the crate's walk reports before the walk).
    pub(super) fn new(root: &Path) -> (IgnoreRules, Option<ignore::Error>) {
        use ignore::gitignore::{Gitignore, GitignoreBuilder};
        let global = match std::env::current_dir() {
            Ok(cwd) => GitignoreBuilder::new(cwd).build_global().0,
            Err(_) => Gitignore::empty(),
        };
        let mut rules = RootRules {
            parents: Vec::new(),
            absolute_root: PathBuf::new(),
            root: root.to_path_buf(),
            global,
        };
        let mut errs = Vec::new();
        if let Ok(absolute_root) = root.canonicalize() {
            for parent in absolute_root.ancestors().skip(1) {
                let (dir_rules, err) = DirRules::read(parent, |_| true);
                errs.extend(err);
                if !dir_rules.is_empty() {
                    rules.parents.push(dir_rules);
                }
            }
            // Reported root first, as the crate reads them.
            errs.reverse();
            rules.absolute_root = absolute_root;
        }
        let rules = IgnoreRules {
            walked: None,
            root: Arc::new(rules),
        };
        (rules, grouped(errs))
    }

    /// The rules inside directory `dir`, whose listing names an entry
    /// `name` when `has(name)`: these, and the directory's own ignore
    /// files, read only when listed. `None` when it adds none (these rules
    /// hold unchanged). Errors in a walked directory's ignore files are not
    /// reported, as the crate's walk does not report them.
    pub(super) fn inside(&self, dir: &Path, has: impl Fn(&str) -> bool) -> Option<IgnoreRules> {
        if !IGNORE_FILES.iter().any(|f| has(f)) {
            return None;
        }
        let (dir_rules, _) = DirRules::read(dir, has);
        if dir_rules.is_empty() {
            return None;
        }
        Some(IgnoreRules {
            walked: Some(Arc::new(RuleChain {
                rules: dir_rules,
                up: self.walked.clone(),
            })),
            root: Arc::clone(&self.root),
        })
    }

    /// True when the rules drop walked entry `path`.
    pub(super) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        use ignore::Match;
        let path = strip_bytes(b"./", path).unwrap_or(path);
        let mut m: [Match<&ignore::gitignore::Glob>; 4] =
            [Match::None, Match::None, Match::None, Match::None];
        let walked = std::iter::successors(self.walked.as_deref(), |c| c.up.as_deref());
        first_matches(&mut m, walked.map(|c| &c.rules), path, is_dir);
        let root = &*self.root;
        if !root.parents.is_empty() {
            let relative = if root.root.as_os_str() == "." {
                path
            } else {
                let given = strip_bytes(b"./", &root.root).unwrap_or(&root.root);
                let rel = strip_bytes(given.as_os_str().as_encoded_bytes(), path).unwrap_or(path);
                strip_bytes(b"/", rel).unwrap_or(rel)
            };
            let absolute = root.absolute_root.join(relative);
            first_matches(&mut m, root.parents.iter(), &absolute, is_dir);
        }
        let [custom, dot_ignore, git, git_exclude] = m;
        custom
            .or(dot_ignore)
            .or(git)
            .or(git_exclude)
            .or(root.global.matched(path, is_dir))
            .is_ignore()
    }
}

/// Fills each kind's match (see [`DirRules`]'s fields) still empty with
/// the first match of that kind among `dirs`.
#[cfg(target_os = "linux")]
fn first_matches<'a>(
    m: &mut [ignore::Match<&'a ignore::gitignore::Glob>; 4],
    dirs: impl Iterator<Item = &'a DirRules>,
    path: &Path,
    is_dir: bool,
) {
    for d in dirs {
        for (m, gi) in m
            .iter_mut()
            .zip([&d.custom, &d.dot_ignore, &d.git, &d.git_exclude])
        {
            if m.is_none() {
                *m = gi.matched(path, is_dir);
            }
        }
    }
}

/// `path` without the leading bytes `prefix` (a byte prefix, not whole
/// components, as the crate strips), if it starts with them.
#[cfg(target_os = "linux")]
pub(super) fn strip_bytes<'a>(prefix: &[u8], path: &'a Path) -> Option<&'a Path> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str()
        .as_bytes()
        .strip_prefix(prefix)
        .map(|rest| Path::new(std::ffi::OsStr::from_bytes(rest)))
}
