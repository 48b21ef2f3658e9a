//! The ignore rules of the getdents walk: one directory's ([`DirRules`]) and a walk's ([`IgnoreRules`]).
//!
//! What they decide is what the `ignore` crate's walk decides (unit tests
//! in `tests.rs` compare the two walks event by event); what it costs per
//! entry is less:
//!
//! - An ignore file of plain names and paths, where the only glob syntax
//!   is `*` within a component and a leading `**/` (`*.swp`, `target/*`,
//!   `**/*.rs.bk`), is matched by comparing bytes ([`Matcher::Literal`]):
//!   no `GlobSet` is built for it, and none runs per entry.
//! - The root's parents' ignore files are narrowed to the lines that can
//!   match below the root ([`reach`]: a line anchored to another directory,
//!   or to one as shallow as the root, cannot). When what is left matches
//!   names only (`.idea`, `*.un~`), entries are matched by their walked
//!   path; only a line that needs the whole path under its directory
//!   makes the walk build each entry's absolute path, as the crate does.
//! - A walked directory's ignore files are read without a `stat` first
//!   (its listing named them) and without a copy of the file's path per
//!   line (only shown in errors, and a walked directory's are not shown).
//! - A walked directory's ignore file is compiled once per content
//!   ([`Compiled`]): its globs are matched against the entry's path under
//!   the directory, not its whole path, so one compiled matcher serves
//!   every directory that holds the same file (the cargo registry's 131
//!   ignore files have about 80 distinct contents: a crate's versions
//!   ship the same `.gitignore`).

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
///
/// A file the directory does not hold, or that holds no rule, is `None`.
#[cfg(target_os = "linux")]
struct DirRules {
    /// `.scannerignore` (the crate's "custom ignore file").
    pub(super) custom: Option<Arc<Matcher>>,
    /// `.ignore`.
    pub(super) dot_ignore: Option<Arc<Matcher>>,
    /// `.gitignore`.
    pub(super) git: Option<Arc<Matcher>>,
    /// `.git/info/exclude` (of the common directory, for a worktree).
    pub(super) git_exclude: Option<Arc<Matcher>>,
    /// The directory holds `.git`: the top of a repository, above which git
    /// reads no `.gitignore` or `info/exclude` for the entries inside it;
    /// with the paths its index tracks, which git never ignores.
    repo_top: Option<Arc<Tracked>>,
    /// The length of the directory's path as walked (a walked directory's:
    /// its entries' paths relative to it start past it).
    dir_len: usize,
}

#[cfg(target_os = "linux")]
impl DirRules {
    /// Reads the ignore files of directory `dir`; `has(name)` says whether
    /// `dir` may hold an entry `name` (one of [`IGNORE_FILES`]). `how` says
    /// whether `dir` is walked or above the walk's root (see [`Reading`]).
    /// Returns the errors grouped as the crate groups them (only a
    /// parent's are read and shown).
    fn read(
        dir: &Path,
        has: impl Fn(&str) -> bool,
        how: &Reading,
    ) -> (DirRules, Option<ignore::Error>) {
        let mut errs = Vec::new();
        let mut file = |name: &str, file: &dyn Fn() -> Option<PathBuf>| {
            if !has(name) {
                return None;
            }
            // Git reads no `.gitignore` that is a symbolic link (since 2.32:
            // it warns and ignores nothing by it).
            let follow = name != ".gitignore";
            // A walked directory open: its own ignore file read by name in
            // it, no lookup of the whole path.
            if let (Reading::Walked(compiled, Some(at)), false) = (how, name == ".git") {
                let content = read_at(*at, name, follow).unwrap_or_default();
                return Some(compiled.get(content)).filter(|m| !m.is_empty());
            }
            let file = file()?;
            if !follow && fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_symlink()) {
                return None;
            }
            let (gi, err) = read_ignore_file(dir, &file, how);
            errs.extend(err);
            gi.filter(|m| !m.is_empty())
        };
        let custom = file(".scannerignore", &|| Some(dir.join(".scannerignore")));
        let dot_ignore = file(".ignore", &|| Some(dir.join(".ignore")));
        let git = file(".gitignore", &|| Some(dir.join(".gitignore")));
        let mut resolve_err = None;
        let git_type = has(".git")
            .then(|| dir.join(".git").metadata().ok().map(|md| md.file_type()))
            .flatten();
        let exclude_file = git_type
            .is_some()
            .then(|| match git_common_dir(dir, git_type) {
                Ok(git_dir) => Some(git_dir.join("info/exclude")),
                Err(e) => {
                    resolve_err = e;
                    None
                }
            })
            .flatten();
        let git_exclude = file(".git", &|| exclude_file.clone());
        errs.extend(resolve_err);
        let rules = DirRules {
            custom,
            dot_ignore,
            git,
            git_exclude,
            repo_top: git_type.map(|_| Arc::new(Tracked::new(dir.to_path_buf()))),
            dir_len: dir.as_os_str().len(),
        };
        (rules, grouped(errs))
    }

    /// No rules, and no repository's top: the directory changes nothing.
    pub(super) fn is_empty(&self) -> bool {
        self.custom.is_none()
            && self.dot_ignore.is_none()
            && self.git.is_none()
            && self.git_exclude.is_none()
            && self.repo_top.is_none()
    }
}

/// How [`DirRules::read`] reads a directory's ignore files.
#[cfg(target_os = "linux")]
enum Reading<'a> {
    /// A walked directory: its files are read and their lines added
    /// without the crate's `stat` of each file first (the listing named
    /// it) or a copy of the file's path per line (only shown in errors,
    /// which a walked directory's are not), errors not collected; each
    /// compiled once per content, in the walk's [`Compiled`]. The
    /// directory's descriptor, when it is open, to read them by name.
    Walked(&'a Compiled, Option<std::os::fd::BorrowedFd<'a>>),
    /// A parent of the walk's root: errors collected as the crate
    /// collects them (they are shown), and the matcher kept is narrowed to
    /// the lines that can match an entry below the root (see [`reach`]),
    /// whose path relative to the parent is `below`. `by_path` is set when
    /// a line kept needs that whole path, not only the entry's name.
    Parent {
        below: Vec<std::ffi::OsString>,
        by_path: std::cell::Cell<bool>,
    },
}

/// One ignore file's matcher for directory `dir`, as the crate's
/// `create_gitignore` builds it: a file that does not exist or cannot be
/// read adds nothing and is no error.
#[cfg(target_os = "linux")]
fn read_ignore_file(
    dir: &Path,
    file: &Path,
    how: &Reading,
) -> (Option<Arc<Matcher>>, Option<ignore::Error>) {
    use ignore::gitignore::{Gitignore, GitignoreBuilder};
    let (below, by_path) = match how {
        Reading::Walked(compiled, _) => {
            let content = fs::read(file).unwrap_or_default();
            return (Some(compiled.get(content)), None);
        }
        Reading::Parent { below, by_path } => (below, by_path),
    };
    let mut b = GitignoreBuilder::new(dir);
    let mut errs = Vec::new();
    if file.exists() {
        errs.extend(b.add(file).filter(|e| !e.is_io()));
    }
    let full = b.build().unwrap_or_else(|e| {
        errs.push(e);
        Gitignore::empty()
    });
    if full.is_empty() {
        return (None, grouped(errs));
    }
    // The same lines, less those that cannot match below the root: the
    // last line that matches an entry is the same in both.
    let mut narrow = GitignoreBuilder::new(dir);
    for line in fs::read(file)
        .iter()
        .flat_map(|content| ignore_lines(content))
    {
        match reach(line, below) {
            Reach::Nothing => continue,
            Reach::Name => {}
            Reach::Path => by_path.set(true),
        }
        let _ = narrow.add_line(None, line);
    }
    let narrow = narrow.build().unwrap_or_else(|_| Gitignore::empty());
    (Some(Arc::new(Matcher::Globs(narrow))), grouped(errs))
}

/// The content of file `name` in the directory open as `dir`, as
/// `fs::read` reads it, without its `statx` for a size hint (ignore files
/// are small; a `Take` has no size to ask for). Unless `follow`, a
/// symbolic link is an error.
#[cfg(target_os = "linux")]
fn read_at(dir: std::os::fd::BorrowedFd<'_>, name: &str, follow: bool) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let flags = if follow { 0 } else { libc::O_NOFOLLOW };
    let file = fs::File::from(super::plain::openat(
        dir.as_raw_fd(),
        Path::new(name),
        flags,
    )?);
    let mut content = Vec::new();
    file.take(u64::MAX).read_to_end(&mut content)?;
    Ok(content)
}

/// The walked directories' ignore files of one walk, compiled once per
/// content: each a [`Matcher::Literal`] or a [`Matcher::Relative`], which
/// match the path under their directory, so the same content compiles to
/// the same matcher wherever it lies. Shared by the tasks of a split walk.
#[cfg(target_os = "linux")]
#[derive(Default)]
pub(super) struct Compiled {
    by_content: std::sync::Mutex<CompiledMap>,
}

#[cfg(target_os = "linux")]
#[derive(Default)]
struct CompiledMap {
    map: std::collections::HashMap<Box<[u8]>, Arc<Matcher>>,
    /// Bytes of content held as keys: past [`Compiled::MAX_BYTES`]
    /// nothing more is kept (each new content is compiled, as before).
    bytes: usize,
}

#[cfg(target_os = "linux")]
impl Compiled {
    /// What the cache keeps at most, in content bytes: a tree of distinct
    /// ignore files does not grow the walk's memory past it.
    const MAX_BYTES: usize = 4 << 20;

    /// The matcher of ignore-file content `content`, compiled now unless
    /// the same content was.
    fn get(&self, content: Vec<u8>) -> Arc<Matcher> {
        use std::collections::hash_map::Entry;
        let lock = || self.by_content.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = lock().map.get(content.as_slice()) {
            return Arc::clone(m);
        }
        // Compiled unlocked: the other tasks of a split walk go on.
        let compiled = Arc::new(Matcher::compile(&content));
        let mut cache = lock();
        if cache.bytes + content.len() > Self::MAX_BYTES {
            return compiled;
        }
        let len = content.len();
        match cache.map.entry(content.into()) {
            // Another task compiled it meanwhile: theirs is kept.
            Entry::Occupied(kept) => Arc::clone(kept.get()),
            Entry::Vacant(slot) => {
                slot.insert(Arc::clone(&compiled));
                cache.bytes += len;
                compiled
            }
        }
    }
}

/// One ignore file's rules, compiled.
#[cfg(target_os = "linux")]
enum Matcher {
    /// Every line a name or a path whose only glob syntax is `*` within a
    /// component or a leading `**/` (or a comment): matched by comparing
    /// bytes, no `GlobSet` built or run. Most ignore files in crates are
    /// (`/target`, `Cargo.lock`, `*.swp`, `**/*.rs.bk`): 126 of the 131 in
    /// the cargo registry.
    Literal(Vec<Literal>),
    /// A parent's, as the crate matches it: rooted at its directory, given
    /// the entry's whole path.
    Globs(ignore::gitignore::Gitignore),
    /// A walked directory's with glob syntax: rooted at no directory (the
    /// crate's `.`), given the entry's path under its directory. The crate
    /// strips a matcher's directory off the path it is given, a leading
    /// `./` and then a `/`; the walk's paths all start with the directory
    /// as walked, so what is left is that path under it, which is what
    /// this one is given: the same match, and one matcher serves every
    /// directory with the same content ([`Compiled`]).
    Relative(ignore::gitignore::Gitignore),
}

/// One line of a [`Matcher::Literal`], as the crate's `add_line` reads a
/// line whose only glob syntax is `*`: `!` makes it a whitelist, a
/// trailing `/` restricts it to directories, and it matches an entry's
/// name anywhere below the directory (the crate's `**/NAME`; so does a
/// line `**/NAME`) unless it holds a `/`, when it matches the entry's
/// whole path under the directory (a leading `/` only anchors). A `*`
/// matches any bytes but `/` (the crate's globs: `literal_separator`,
/// bytes, case-sensitive), so an anchored line matches component by
/// component.
#[cfg(target_os = "linux")]
struct Literal {
    text: Box<[u8]>,
    /// The whole path, not the name.
    anchored: bool,
    only_dir: bool,
    whitelist: bool,
    /// `text` holds a `*`.
    stars: bool,
}

#[cfg(target_os = "linux")]
impl Literal {
    /// `Some(None)` for a line that adds nothing (a comment, blank), `None`
    /// for one with glob syntax (or anything less plain).
    fn new(line: &str) -> Option<Option<Literal>> {
        if line.starts_with('#') {
            return Some(None);
        }
        if line.contains(['?', '[', ']', '{', '}', '\\']) {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Some(None);
        }
        let (whitelist, line) = match line.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let (anchored, line) = match line.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let (only_dir, line) = match line.strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let anchored = anchored || line.contains('/');
        // `**/NAME` is `NAME` unanchored, as the crate adds `**/` itself to
        // a line without `/`; any other `**` (or an empty component) is
        // left to the crate.
        let (anchored, line) = match line.strip_prefix("**/") {
            Some(name) if !name.contains('/') => (false, name),
            _ => (anchored, line),
        };
        if line.contains("**") || line.is_empty() || line.split('/').any(str::is_empty) {
            return None;
        }
        Some(Some(Literal {
            text: line.as_bytes().into(),
            anchored,
            only_dir,
            whitelist,
            stars: line.contains('*'),
        }))
    }

    /// Whether this line matches an entry whose path under the directory
    /// is `relative` and whose name is `name`.
    fn matches(&self, relative: &[u8], name: &[u8]) -> bool {
        match (self.anchored, self.stars) {
            (false, false) => *self.text == *name,
            (true, false) => *self.text == *relative,
            (false, true) => star_match(&self.text, name),
            (true, true) => {
                let mut want = self.text.split(|&b| b == b'/');
                let mut have = relative.split(|&b| b == b'/');
                loop {
                    match (want.next(), have.next()) {
                        (None, None) => return true,
                        (Some(w), Some(h)) if star_match(w, h) => {}
                        _ => return false,
                    }
                }
            }
        }
    }
}

/// Whether `text` (no `/` in it) matches `pattern`, whose `*`s match any
/// bytes and whose other bytes match themselves.
#[cfg(target_os = "linux")]
fn star_match(pattern: &[u8], text: &[u8]) -> bool {
    let mut parts = pattern.split(|&b| b == b'*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let Some(last) = parts.next_back() else {
        return pattern.len() == text.len(); // no `*`: all of it
    };
    let Some(middle) = rest.strip_suffix(last) else {
        return false;
    };
    rest = middle;
    // Each part in between at its first place left: leftmost placing
    // leaves the most room for those after it.
    for part in parts {
        match memchr::memmem::find(rest, part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(target_os = "linux")]
impl Matcher {
    /// A walked directory's ignore file of content `content`, as the
    /// crate's `GitignoreBuilder::add` reads it (bad lines left out).
    fn compile(content: &[u8]) -> Matcher {
        use ignore::gitignore::{Gitignore, GitignoreBuilder};
        let literals: Option<Vec<_>> = ignore_lines(content).map(Literal::new).collect();
        if let Some(literals) = literals {
            return Matcher::Literal(literals.into_iter().flatten().collect());
        }
        let mut b = GitignoreBuilder::new(".");
        for line in ignore_lines(content) {
            let _ = b.add_line(None, line);
        }
        Matcher::Relative(b.build().unwrap_or_else(|_| Gitignore::empty()))
    }

    fn is_empty(&self) -> bool {
        match self {
            Matcher::Literal(lines) => lines.is_empty(),
            Matcher::Globs(gi) | Matcher::Relative(gi) => gi.is_empty(),
        }
    }

    /// The last line that matches entry `path` (as walked), whose path
    /// under the matcher's directory is `relative` and whose name is
    /// `name`, as the crate's `Gitignore::matched` decides.
    fn matched(
        &self,
        path: &Path,
        relative: &[u8],
        name: &[u8],
        is_dir: bool,
    ) -> ignore::Match<()> {
        match self {
            Matcher::Globs(gi) => gi.matched(path, is_dir).map(|_| ()),
            Matcher::Relative(gi) => {
                use std::os::unix::ffi::OsStrExt;
                let relative = Path::new(std::ffi::OsStr::from_bytes(relative));
                gi.matched(relative, is_dir).map(|_| ())
            }
            Matcher::Literal(lines) => {
                let hit = lines
                    .iter()
                    .rev()
                    .find(|l| (!l.only_dir || is_dir) && l.matches(relative, name));
                match hit {
                    None => ignore::Match::None,
                    Some(l) if l.whitelist => ignore::Match::Whitelist(()),
                    Some(_) => ignore::Match::Ignore(()),
                }
            }
        }
    }
}

/// The lines of an ignore file as the crate's `GitignoreBuilder::add`
/// reads them (`BufRead::lines`): split at `\n`, a `\r` before it dropped,
/// a byte-order mark before the first dropped, and nothing from the first
/// line that is not UTF-8 on.
#[cfg(target_os = "linux")]
fn ignore_lines(content: &[u8]) -> impl Iterator<Item = &str> {
    content
        .split_inclusive(|&b| b == b'\n')
        .map(|line| match line.strip_suffix(b"\n") {
            Some(line) => line.strip_suffix(b"\r").unwrap_or(line),
            None => line,
        })
        .map(std::str::from_utf8)
        .map_while(Result::ok)
        .enumerate()
        .map(|(i, line)| match i {
            0 => line.trim_start_matches('\u{feff}'),
            _ => line,
        })
}

/// What one line of an ignore file of directory `D` can match among the
/// entries below `D`'s descendant `below` (its components under `D`).
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// Nothing (a comment, a blank line, a glob anchored elsewhere or
    /// shallower).
    Nothing,
    /// At most the entries whose name it matches, wherever they are (an
    /// unanchored glob of one component: the crate's `**/NAME`).
    Name,
    /// Maybe an entry by its whole path under `D`.
    Path,
}

/// [`Reach`] of ignore-file line `line` below `below`, read as the crate's
/// `GitignoreBuilder::add_line` reads it. When in doubt (escapes, classes,
/// braces, `**`), `Path`: matching the whole path is always right.
#[cfg(target_os = "linux")]
fn reach(line: &str, below: &[std::ffi::OsString]) -> Reach {
    if line.starts_with('#') {
        return Reach::Nothing;
    }
    let line = if line.ends_with("\\ ") {
        line
    } else {
        line.trim_end()
    };
    if line.is_empty() {
        return Reach::Nothing;
    }
    if line.starts_with("\\!") || line.starts_with("\\#") {
        return Reach::Path;
    }
    let line = line.strip_prefix('!').unwrap_or(line);
    let (anchored, line) = match line.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let line = line.strip_suffix('/').unwrap_or(line);
    if line.contains('\\') {
        return Reach::Path;
    }
    if !anchored && !line.contains('/') {
        // `**/NAME`: a class may hold `/` (`[!a]`, `[.-0]`), and `**`
        // within a name is read in more than one way.
        return if line.contains('[') || line.contains("**") {
            Reach::Path
        } else {
            Reach::Name
        };
    }
    if line.contains(['[', '{']) {
        return Reach::Path;
    }
    // Anchored to `D`: a glob of n components without `**` matches paths
    // of n components only, and every entry below `below` has more than
    // `below` has; a literal component must be the one on the way down.
    for (i, part) in line.split('/').enumerate() {
        let Some(step) = below.get(i) else {
            return Reach::Path;
        };
        if part == "**" {
            return Reach::Path;
        }
        if !part.contains(['*', '?']) && step.as_os_str() != part {
            return Reach::Nothing;
        }
    }
    Reach::Nothing
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
    /// Below a directory git's rules drop, entered for the paths the index
    /// tracks below it ([`Ignored::Tracked`]): every other entry is dropped.
    only_tracked: bool,
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
    /// The root's parents that hold rules that can match below the root,
    /// nearest first, each narrowed to those rules ([`Reading::Parent`]).
    parents: Vec<DirRules>,
    /// Whether a rule of `parents` needs an entry's whole path under its
    /// directory; if not, they match names only, and the walked path
    /// serves as well as the absolute one (and costs no allocation).
    parents_by_path: bool,
    /// The root, canonical (paths are matched against `parents` under it).
    absolute_root: PathBuf,
    /// The root as given (walked paths start with it).
    root: PathBuf,
    /// `core.excludesFile`: matched against an entry's path under the top
    /// of the repository it is in, where git anchors its lines (`/x` is
    /// the top's `x`, whatever directory is scanned); outside any
    /// repository against the walked path, rooted at the current directory.
    global: ignore::gitignore::Gitignore,
    /// The nearest parent that is a repository's top, if one is: what its
    /// index tracks, and the root's path under it.
    root_under_top: Option<(Arc<Tracked>, PathBuf)>,
    /// The walked directories' ignore files, compiled once per content.
    compiled: Compiled,
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
            parents_by_path: false,
            absolute_root: PathBuf::new(),
            root: root.to_path_buf(),
            global,
            root_under_top: None,
            compiled: Compiled::default(),
        };
        let mut errs = Vec::new();
        if let Ok(absolute_root) = root.canonicalize() {
            for parent in absolute_root.ancestors().skip(1) {
                let below = absolute_root.strip_prefix(parent).unwrap_or(&absolute_root);
                let how = Reading::Parent {
                    below: below.iter().map(|c| c.to_os_string()).collect(),
                    by_path: std::cell::Cell::new(false),
                };
                let (dir_rules, err) = DirRules::read(parent, |_| true, &how);
                errs.extend(err);
                if let (Some(top), None) = (&dir_rules.repo_top, &rules.root_under_top) {
                    rules.root_under_top = Some((Arc::clone(top), below.to_path_buf()));
                }
                if !dir_rules.is_empty() {
                    rules.parents.push(dir_rules);
                    if let Reading::Parent { by_path, .. } = how {
                        rules.parents_by_path |= by_path.get();
                    }
                }
            }
            // Reported root first, as the crate reads them.
            errs.reverse();
            rules.absolute_root = absolute_root;
        }
        let rules = IgnoreRules {
            walked: None,
            only_tracked: false,
            root: Arc::new(rules),
        };
        (rules, grouped(errs))
    }

    /// The rules inside directory `dir`, whose listing names an entry
    /// `name` when `has(name)`: these, and the directory's own ignore
    /// files, read only when listed. `None` when it adds none (these rules
    /// hold unchanged). Errors in a walked directory's ignore files are not
    /// reported, as the crate's walk does not report them. `at` is the
    /// directory's descriptor, if it is open.
    pub(super) fn inside(
        &self,
        dir: &Path,
        at: Option<std::os::fd::BorrowedFd<'_>>,
        has: impl Fn(&str) -> bool,
    ) -> Option<IgnoreRules> {
        if !IGNORE_FILES.iter().any(|f| has(f)) {
            return None;
        }
        let how = Reading::Walked(&self.root.compiled, at);
        let (dir_rules, _) = DirRules::read(dir, has, &how);
        if dir_rules.is_empty() {
            return None;
        }
        Some(IgnoreRules {
            only_tracked: self.only_tracked,
            walked: Some(Arc::new(RuleChain {
                rules: dir_rules,
                up: self.walked.clone(),
            })),
            root: Arc::clone(&self.root),
        })
    }

    /// These rules below a directory of [`Ignored::Tracked`].
    pub(super) fn only_tracked(&self) -> IgnoreRules {
        IgnoreRules {
            only_tracked: true,
            ..self.clone()
        }
    }

    /// Whether the rules drop walked entry `path`, named `name`.
    pub(super) fn ignores(&self, path: &Path, name: &std::ffi::OsStr, is_dir: bool) -> Ignored {
        use ignore::Match;
        let walked_path = path;
        let path = strip_bytes(b"./", path).unwrap_or(path);
        let mut m = [Match::None, Match::None, Match::None, Match::None];
        let walked = std::iter::successors(self.walked.as_deref(), |c| c.up.as_deref());
        let name = name.as_encoded_bytes();
        let mut in_repo = false;
        let walked = walked.map(|c| &c.rules);
        first_matches(&mut m, &mut in_repo, walked, walked_path, name, is_dir);
        let root = &*self.root;
        if !root.parents.is_empty() && !root.parents_by_path {
            first_matches(
                &mut m,
                &mut in_repo,
                root.parents.iter(),
                path,
                name,
                is_dir,
            );
        } else if !root.parents.is_empty() {
            let absolute = root.absolute_root.join(root.under_root(path));
            let parents = root.parents.iter();
            first_matches(&mut m, &mut in_repo, parents, &absolute, name, is_dir);
        }
        let [custom, dot_ignore, git, git_exclude] = m;
        let ours = custom.or(dot_ignore);
        if ours.is_ignore() {
            return Ignored::Yes;
        }
        if ours.is_whitelist() && !self.only_tracked {
            return Ignored::No;
        }
        // Git's own rules: they never drop a path the repository tracks.
        let gits = match self.only_tracked {
            true => Match::Ignore(()),
            false => git.or(git_exclude),
        };
        if gits.is_whitelist() || (gits.is_none() && root.global.is_empty()) {
            return Ignored::No;
        }
        let top = self.top(walked_path, path);
        if gits.is_none() {
            let global_path = top.as_ref().map_or(path, |(_, under)| under);
            if !root.global.matched(global_path, is_dir).is_ignore() {
                return Ignored::No;
            }
        }
        match top.is_some_and(|(tracked, under)| tracked.holds(&under, is_dir)) {
            true => Ignored::Tracked,
            false => Ignored::Yes,
        }
    }

    /// The nearest repository's top above walked entry `walked_path`
    /// (`path` without a leading `./`), a walked directory or a parent of
    /// the root: what its index tracks, and the entry's path under it
    /// (which the global excludes see, see [`RootRules::global`]).
    fn top<'p>(
        &self,
        walked_path: &'p Path,
        path: &'p Path,
    ) -> Option<(&Tracked, std::borrow::Cow<'p, Path>)> {
        use std::borrow::Cow;
        use std::os::unix::ffi::OsStrExt;
        let walked = std::iter::successors(self.walked.as_deref(), |c| c.up.as_deref());
        let walked_top = walked
            .map(|c| &c.rules)
            .find_map(|d| Some((d.repo_top.as_ref()?, d)));
        if let Some((tracked, top)) = walked_top {
            let bytes = walked_path.as_os_str().as_encoded_bytes();
            let relative = bytes.get(top.dir_len..).unwrap_or_default();
            let relative = relative.strip_prefix(b"/").unwrap_or(relative);
            let relative = Path::new(std::ffi::OsStr::from_bytes(relative));
            return Some((tracked, Cow::Borrowed(relative)));
        }
        let (tracked, below) = self.root.root_under_top.as_ref()?;
        Some((tracked, Cow::Owned(below.join(self.root.under_root(path)))))
    }
}

/// What [`IgnoreRules::ignores`] says of an entry.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ignored {
    No,
    Yes,
    /// Git's rules drop it, but the repository tracks it (a directory: a
    /// path below it): kept, and below it only what is tracked, as git
    /// lists it.
    Tracked,
}

/// The paths a repository's index tracks, listed (`git ls-files`) when its
/// ignore rules first drop an entry: git never ignores a tracked file (a
/// `.env` committed before `.gitignore` named it is in every clone), so
/// neither does the walk.
#[cfg(target_os = "linux")]
pub(super) struct Tracked {
    /// The repository's top, as walked or absolute.
    top: PathBuf,
    /// Sorted; empty where git cannot list them.
    paths: std::sync::OnceLock<Vec<Box<[u8]>>>,
}

#[cfg(target_os = "linux")]
impl Tracked {
    fn new(top: PathBuf) -> Tracked {
        Tracked {
            top,
            paths: std::sync::OnceLock::new(),
        }
    }

    /// Whether the index tracks `under` (a path under the top), or, for a
    /// directory, a path below it.
    fn holds(&self, under: &Path, is_dir: bool) -> bool {
        let paths = self.paths.get_or_init(|| {
            let mut paths: Vec<Box<[u8]>> = crate::input::git::tracked(&self.top)
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(Into::into)
                .collect();
            paths.sort_unstable();
            paths
        });
        let under = under.as_os_str().as_encoded_bytes();
        if paths.binary_search_by(|p| (**p).cmp(under)).is_ok() {
            return true;
        }
        if !is_dir {
            return false;
        }
        let below = [under, b"/"].concat();
        let at = paths.partition_point(|p| **p < *below);
        paths.get(at).is_some_and(|p| p.starts_with(&below))
    }
}

#[cfg(target_os = "linux")]
impl RootRules {
    /// Walked entry `path` (without a leading `./`) under the root.
    fn under_root<'p>(&self, path: &'p Path) -> &'p Path {
        if self.root.as_os_str() == "." {
            return path;
        }
        let given = strip_bytes(b"./", &self.root).unwrap_or(&self.root);
        let rel = strip_bytes(given.as_os_str().as_encoded_bytes(), path).unwrap_or(path);
        strip_bytes(b"/", rel).unwrap_or(rel)
    }
}

/// Fills each kind's match (see [`DirRules`]'s fields) still empty with
/// the first match of that kind among `dirs`, for entry `path` (under
/// each of `dirs` as walked, for a [`Matcher::Literal`]) named `name`.
/// Past a repository's top (`in_repo`, kept from one call to the next as
/// the dirs go up) git's own files are not read: git reads none above it.
#[cfg(target_os = "linux")]
fn first_matches<'a>(
    m: &mut [ignore::Match<()>; 4],
    in_repo: &mut bool,
    dirs: impl Iterator<Item = &'a DirRules>,
    path: &Path,
    name: &[u8],
    is_dir: bool,
) {
    let bytes = path.as_os_str().as_encoded_bytes();
    for d in dirs {
        let relative = bytes.get(d.dir_len..).unwrap_or_default();
        let relative = relative.strip_prefix(b"/").unwrap_or(relative);
        let git = |r: &'a Option<Arc<Matcher>>| if *in_repo { &None } else { r };
        for (m, matcher) in
            m.iter_mut()
                .zip([&d.custom, &d.dot_ignore, git(&d.git), git(&d.git_exclude)])
        {
            if let (true, Some(matcher)) = (m.is_none(), matcher) {
                *m = matcher.matched(path, relative, name, is_dir);
            }
        }
        *in_repo |= d.repo_top.is_some();
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn what_a_parents_line_can_reach() {
        let below: Vec<std::ffi::OsString> = ["versions", "3.11"].map(Into::into).to_vec();
        let cases = [
            ("# c", Reach::Nothing),
            ("", Reach::Nothing),
            ("   ", Reach::Nothing),
            ("/versions", Reach::Nothing),
            ("/versions/", Reach::Nothing),
            ("/versions/3.11", Reach::Nothing),
            ("versions/*", Reach::Nothing),
            ("/shims", Reach::Nothing),
            ("/libexec/*.dylib", Reach::Nothing),
            ("/versions/3.12/lib", Reach::Nothing),
            ("!/src/*.o", Reach::Nothing),
            ("/versions/3.11/lib", Reach::Path),
            ("/versions/*/lib/", Reach::Path),
            ("/*/*/*.pyc", Reach::Path),
            ("/versions/**", Reach::Path),
            ("**/lib/x", Reach::Path),
            ("/versions/3.1[01]/x", Reach::Path),
            ("a\\*", Reach::Path),
            ("\\!x", Reach::Path),
            ("*.py[cod]", Reach::Path),
            ("**", Reach::Path),
            (".idea", Reach::Name),
            ("*.un~", Reach::Name),
            ("!keep.log", Reach::Name),
            ("build/", Reach::Name),
            ("*.{a,b}", Reach::Name),
        ];
        for (line, want) in cases {
            assert_eq!(reach(line, &below), want, "{line:?}");
        }
    }

    #[test]
    fn lines_are_read_as_the_crate_reads_them() {
        fn lines(s: &[u8]) -> Vec<&str> {
            ignore_lines(s).collect()
        }
        assert_eq!(lines(b""), Vec::<&str>::new());
        assert_eq!(lines(b"\n"), [""]);
        assert_eq!(lines(b"a\r\nb\n\nc"), ["a", "b", "", "c"]);
        assert_eq!(lines(b"a\rb\r"), ["a\rb\r"]);
        assert_eq!(lines("\u{feff}x\n\u{feff}y".as_bytes()), ["x", "\u{feff}y"]);
        assert_eq!(lines(b"a\n\xff\nb\n"), ["a"]);
    }

    /// One content compiles once, whatever directory holds it; another
    /// content compiles on its own. A compiled file with globs, given the
    /// path under its directory, matches as the crate's `Gitignore` rooted
    /// at that directory given the whole path, for roots as the walk
    /// gives them (`./r`, `r//`, absolute, `.`).
    #[test]
    fn a_content_compiles_once_and_matches_under_any_directory() {
        use ignore::gitignore::GitignoreBuilder;
        let content = "/gen/*.rs\n*.log\n!keep.log\nsub/*.tmp\n/top[0-9].txt\nd*/\n";
        let compiled = Compiled::default();
        let a = compiled.get(content.as_bytes().to_vec());
        let b = compiled.get(content.as_bytes().to_vec());
        let other = compiled.get(b"/gen/*.rs\n".to_vec());
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &other));
        assert!(matches!(*a, Matcher::Relative(_)));
        for dir in ["./r", "r", "r//", "/abs/r", ".", "./"] {
            let mut builder = GitignoreBuilder::new(dir);
            for line in ignore_lines(content.as_bytes()) {
                builder.add_line(None, line).unwrap();
            }
            let rooted = Matcher::Globs(builder.build().unwrap());
            for rel in [
                "gen/a.rs",
                "x/gen/a.rs",
                "a.log",
                "x/keep.log",
                "sub/a.tmp",
                "x/sub/a.tmp",
                "top1.txt",
                "x/top1.txt",
                "dd",
                "x/dd",
            ] {
                let path = format!("{dir}{}{rel}", if dir.ends_with('/') { "" } else { "/" });
                let path = Path::new(&path);
                let name = path.file_name().unwrap().as_encoded_bytes();
                for is_dir in [false, true] {
                    let m = |m: &Matcher| {
                        let found = m.matched(path, rel.as_bytes(), name, is_dir);
                        (found.is_ignore(), found.is_whitelist())
                    };
                    assert_eq!(m(&a), m(&rooted), "{dir} {rel:?} dir {is_dir}");
                }
            }
        }
    }

    /// A file of plain names and paths, with `*`s and `**/` prefixes,
    /// matches as the crate's `Gitignore` built from it: every entry, file
    /// and directory, at several depths.
    #[test]
    fn literal_lines_match_as_the_crate_matches_them() {
        use ignore::gitignore::GitignoreBuilder;
        let content = "target\n/Cargo.lock\n# c\n\nbuild/\n!keep\nkeep\n!/target\n\
            a/b\n/x/y/\nlog \n!b/c.txt\n c\n#d\n!#e\ndeep/\n\
            *.o\n!keep.o\ntarget/*\n**/*.rs.bk\n.*.swp\n*~\nscratch*\n/*perf.data*\n\
            */deep\n/crypto/*/*.S\n/**/Cargo.lock\na*b*ab\n!**/x/\n";
        let walked = ignore_lines(content.as_bytes()).map(Literal::new);
        let lines: Vec<Literal> = walked
            .collect::<Option<Vec<_>>>()
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(lines.len(), 26);
        for glob in [
            "a\\ ", "**/a/b", "x**y", "/a/**/b", "**", "a?", "[ab]", "a//b", "/",
        ] {
            assert!(Literal::new(glob).is_none(), "{glob}");
        }
        let literal = Matcher::Literal(lines);
        for dir in ["./r", "r", "/abs/r/", "."] {
            let mut b = GitignoreBuilder::new(dir);
            for line in ignore_lines(content.as_bytes()) {
                b.add_line(None, line).unwrap();
            }
            let globs = Matcher::Globs(b.build().unwrap());
            let entries = [
                "target",
                "Cargo.lock",
                "src/Cargo.lock",
                "build",
                "src/build",
                "keep",
                "src/keep",
                "a/b",
                "a/b/c",
                "src/a/b",
                "x/y",
                "x/y/z",
                "log",
                "log ",
                "b/c.txt",
                "c",
                " c",
                "#d",
                "#e",
                "e",
                "deep",
                "s/deep",
                "a.o",
                "s/a.o",
                ".o",
                "keep.o",
                "target/x",
                "target/x/y",
                "s/target/x",
                "x.rs.bk",
                "s/t/x.rs.bk",
                ".a.swp",
                "s/.a.swp",
                "a.swp",
                "a~",
                "~",
                "scratch",
                "scratch.rs",
                "s/scratch1",
                "perf.data",
                "a.perf.data.old",
                "s/perf.data",
                "x/deep",
                "x/y/deep",
                "crypto/x86/a.S",
                "crypto/a.S",
                "crypto/x/y/a.S",
                "s/crypto/x/a.S",
                "s/Cargo.lock",
                "ab",
                "abab",
                "aXbYab",
                "aab",
                "x",
                "s/x",
            ];
            for rel in entries {
                let path = Path::new(dir).join(rel);
                let name = path.file_name().unwrap().as_encoded_bytes();
                for is_dir in [false, true] {
                    let m = |m: &Matcher| {
                        let found = m.matched(&path, rel.as_bytes(), name, is_dir);
                        (found.is_ignore(), found.is_whitelist())
                    };
                    assert_eq!(m(&literal), m(&globs), "{dir} {rel:?} dir {is_dir}");
                }
            }
        }
    }
}
