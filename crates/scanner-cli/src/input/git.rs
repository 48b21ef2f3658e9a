//! Git input: the staged blobs (`--staged`) and the lines added since a base (`--diff BASE`).
//!
//! # Why run `git` rather than link a git library
//!
//! A pre-commit scan must see exactly what `git commit` will record. Running the user's own
//! `git` gets the index semantics right by construction: the index extensions and versions of
//! whatever git wrote it, `GIT_INDEX_FILE` (which `git commit -a` and `git commit <path>` point
//! at a temporary index while the hook runs), `GIT_DIR`, worktrees, `safe.directory`, and the
//! user's configuration. It adds no dependency to the binary, and three short-lived processes
//! cost a few milliseconds, well inside the pre-commit budget (see `scripts/bench-staged.sh`).
//!
//! Every command that lists paths uses `-z`, so a path is taken verbatim, byte for byte
//! (spaces, newlines, non-UTF-8 bytes). Patch output (`--diff`) cannot be NUL-terminated; its
//! `+++` names are C-unquoted by [`unquote`], which handles both `core.quotePath` settings.
//! Options that user configuration could flip (`diff.relative`, `diff.noprefix`,
//! `diff.external`, textconv drivers, abbreviated ids) are pinned on the command line.
//!
//! # `--staged`
//!
//! 1. `git rev-parse --show-toplevel`: the repository root (works from a subdirectory), what
//!    the blob paths are relative to. It runs on its own thread, with step 2, while the engine
//!    builds ([`spawn_source`]).
//! 2. `git diff --cached --raw -z --no-renames --no-abbrev --diff-filter=ACMRTU`: the staged
//!    entries that have content to scan, against `HEAD`; with no commit yet (unborn `HEAD`)
//!    git compares with the empty tree itself, as documented for `--cached` without a commit,
//!    which saves resolving `HEAD` first. Deleted files are filtered out (nothing to scan); a
//!    rename is its new path (`--no-renames` lists it as added, so its whole content is
//!    scanned: the new path is new to the repository). A symlink (mode `120000`) is scanned:
//!    its target is text. Submodules (`160000`, a commit id) are skipped; unmerged paths (a
//!    merge in progress) are counted as `unmerged`.
//! 3. Each staged blob becomes a `Content::GitBlob` item, read by id by a worker through its
//!    own in-process reader (`history::BlobReader`): the index content, not the
//!    working-tree file, and never every blob in memory at once. The object store they read
//!    is opened (`git rev-parse --absolute-git-dir`, then the repository's configuration) on
//!    a third thread, beside steps 1 and 2: one after them, the staged scan took 19.0 ms
//!    against 18.0 ms (medians of 120 runs, a 2,000-file repository, 2 cores).
//!
//! # `--diff BASE`
//!
//! `git rev-parse --verify BASE^{tree}` checks that BASE is one revision ([`diff_base`]), then
//! `git diff -U0 --text BASE` (working tree against BASE, renames followed so that a moved
//! file is not all "added") gives, per path, the line ranges of the new side's hunks; `--text`
//! makes git diff binary files too (a NUL, `-diff` in `.gitattributes`), by lines as the scan
//! counts them. Only files with added lines are scanned, and [`DiffFilter`] drops every
//! finding none of whose lines was added (reason `diff-context`); an archive's members count
//! as added when the archive has an added line.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context};

use super::{Content, Item, Provenance, Source};
use crate::messages::{escape, escape_path};
pub use crate::paths::{path_bytes, path_from_bytes};

fn git(cwd: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(cwd)
        // Never take `index.lock` for an opportunistic refresh: `git commit` holds it while
        // the hook runs.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null());
    c
}

/// Runs `cmd`, returns its stdout; a failure names the command and quotes git's stderr.
fn output(mut cmd: Command, what: &str) -> anyhow::Result<Vec<u8>> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run `{what}` (is git installed?)"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!("`{what}` failed ({}): {}", out.status, err.trim());
    }
    Ok(out.stdout)
}

/// The paths the index of the repository whose top is `top` tracks
/// (`git ls-files -z`: relative to `top`, each ended by a NUL); none where
/// git cannot list them (no git, a repository git refuses to read), as if
/// it tracked nothing. The repository is `top`'s own, whatever `GIT_DIR`
/// a hook runs with.
pub fn tracked(top: &Path) -> Vec<u8> {
    let mut c = git(top);
    c.args(["ls-files", "-z"])
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stderr(Stdio::null());
    output(c, "git ls-files").unwrap_or_default()
}

/// The root of the work tree containing `cwd`. Outside one, the error is one sentence that
/// names `cwd` and the flag (`needs`) that wants a repository.
pub fn toplevel(cwd: &Path, needs: &str) -> anyhow::Result<PathBuf> {
    let mut c = git(cwd);
    c.args(["rev-parse", "--show-toplevel"]);
    let not_a_repository = || {
        anyhow::anyhow!(
            "not a git repository: {} ({needs} needs one)",
            escape_path(cwd)
        )
    };
    let out = c
        .output()
        .context("cannot run `git rev-parse --show-toplevel` (is git installed?)")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("not a git repository") {
        return Err(not_a_repository());
    }
    if !out.status.success() {
        bail!(
            "`git rev-parse --show-toplevel` failed ({}): {}",
            out.status,
            stderr.trim()
        );
    }
    let mut out = out.stdout;
    while out.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        out.pop();
    }
    if out.is_empty() {
        // A bare repository: no work tree to stage from.
        bail!(
            "not inside a git work tree: {} ({needs} needs one)",
            escape_path(cwd)
        );
    }
    Ok(path_from_bytes(out))
}

/// The staged entries with content (added, copied, modified or renamed regular files and
/// symlinks), in index order: path and blob id; and how many paths are unmerged (a merge in
/// progress: git will not commit until they are resolved, so there is no content to scan
/// yet). `cwd` is anywhere inside the work tree; `pathspecs` (relative to `cwd`) narrow the
/// set, all of the index when empty (not just `cwd`: a commit records the whole index).
fn staged_entries(cwd: &Path, pathspecs: &[PathBuf]) -> anyhow::Result<(Vec<RawEntry>, u64)> {
    let mut c = git(cwd);
    c.args([
        "diff",
        "--cached",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--no-relative",
        "--ignore-submodules=all",
        "--diff-filter=ACMRTU",
        "--",
    ]);
    c.args(pathspecs);
    let raw = output(c, "git diff --cached --raw -z")?;
    let entries = parse_raw(&raw)?;
    let mut unmerged: Vec<&[u8]> = entries
        .iter()
        .filter(|e| e.status == b'U')
        .map(|e| &e.path[..])
        .collect();
    // An unmerged path is listed once per stage.
    unmerged.dedup();
    let unmerged = unmerged.len() as u64;
    Ok((
        entries.into_iter().filter(RawEntry::has_content).collect(),
        unmerged,
    ))
}

/// One entry of `git diff --raw -z`.
#[derive(Debug, PartialEq)]
struct RawEntry {
    dst_mode: String,
    dst_id: String,
    status: u8,
    /// The destination path (the new name of a rename or copy).
    path: Vec<u8>,
}

impl RawEntry {
    /// A regular file or a symlink (its target is text: a token can hide there) with staged
    /// content; not a submodule, an intent-to-add, a deletion or an unmerged path.
    fn has_content(&self) -> bool {
        matches!(self.dst_mode.as_str(), "100644" | "100755" | "120000")
            && self.status != b'D'
            && self.status != b'U'
            && !self.dst_id.bytes().all(|b| b == b'0')
    }
}

/// Parses `:srcmode dstmode srcid dstid status\0path\0[path2\0]...`.
fn parse_raw(out: &[u8]) -> anyhow::Result<Vec<RawEntry>> {
    let mut fields = out.split(|b| *b == 0);
    let mut entries = Vec::new();
    while let Some(head) = fields.next() {
        if head.is_empty() {
            continue;
        }
        let bad = || {
            anyhow::anyhow!(
                "unexpected `git diff --raw` line: {:?}",
                String::from_utf8_lossy(head)
            )
        };
        let head_str = std::str::from_utf8(head).map_err(|_| bad())?;
        let parts: Vec<&str> = head_str
            .strip_prefix(':')
            .ok_or_else(bad)?
            .split(' ')
            .collect();
        let [_, dst_mode, _, dst_id, status] = parts[..] else {
            return Err(bad());
        };
        let status = *status.as_bytes().first().ok_or_else(bad)?;
        let mut path = fields.next().ok_or_else(bad)?.to_vec();
        if status == b'R' || status == b'C' {
            path = fields.next().ok_or_else(bad)?.to_vec();
        }
        entries.push(RawEntry {
            dst_mode: dst_mode.to_string(),
            dst_id: dst_id.to_string(),
            status,
            path,
        });
    }
    Ok(entries)
}

/// Added line ranges (1-based, inclusive) by repository-relative path (raw bytes).
pub type AddedLines = HashMap<Vec<u8>, Vec<(u32, u32)>>;

/// The tree of the one revision `base` names, which `--diff` compares the working tree with.
/// git would also take a range (`A..B`, `A...B`, `A^!`) and diff its two ends, neither of
/// them the working tree that is scanned: the added lines would be another file's, and a
/// secret added in the range was counted as `diff-context`. A `base` starting with `-` would
/// be one of git's options (`-R` reverses the diff).
fn diff_base(cwd: &Path, base: &str) -> anyhow::Result<String> {
    let not_one = || {
        anyhow::anyhow!(
            "`{}` is not a revision of this repository: --diff takes one, the base the \
             working tree is compared with, not a range such as A..B (for a pull request: \
             `--diff \"$(git merge-base origin/main HEAD)\"`)",
            escape(base)
        )
    };
    if base.starts_with('-') {
        return Err(not_one());
    }
    let mut c = git(cwd);
    c.args([
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{base}^{{tree}}"),
    ]);
    let out = output(c, "git rev-parse --verify").map_err(|_| not_one())?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// The lines of the working tree added since `base`, for the paths under `pathspecs` (all when
/// empty). Paths with no added line are absent.
pub fn added_lines(cwd: &Path, base: &str, pathspecs: &[PathBuf]) -> anyhow::Result<AddedLines> {
    let tree = diff_base(cwd, base)?;
    let mut c = git(cwd);
    c.args([
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        // Hunks for every file, also those git takes as binary (a NUL, or `-diff` in
        // `.gitattributes`): without it git prints "Binary files differ", no line is added,
        // and a secret added to such a file is never scanned.
        "--text",
        "--no-relative",
        "--find-renames",
        "--ignore-submodules=all",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--diff-filter=ACMRT",
        &tree,
        "--",
    ]);
    c.args(pathspecs);
    let what = format!("git diff -U0 {}", escape(base));
    // Read as it comes, never held: with `--text` the patch holds every changed byte of every
    // binary file (twice: removed and added).
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run `{what}` (is git installed?)"))?;
    let mut stderr = child.stderr.take().expect("piped");
    let stderr = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut text);
        text
    });
    let stdout = child.stdout.take().expect("piped");
    let parsed = parse_patch(std::io::BufReader::with_capacity(64 << 10, stdout));
    if parsed.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().with_context(|| format!("`{what}`"))?;
    let err = stderr.join().unwrap_or_default();
    if !status.success() {
        bail!(
            "`{what}` failed ({status}): {}",
            String::from_utf8_lossy(&err).trim()
        );
    }
    parsed
}

/// The longest start of a patch line kept: enough for any header (`+++ ` and a path, quoted),
/// while an added line, as long as a binary file, is skipped as it is read.
const PATCH_LINE_KEPT: usize = 64 << 10;

/// Reads the next line of `r` into `line` (without its `\n`), at most [`PATCH_LINE_KEPT`]
/// bytes of it; `false` at the end.
fn read_line_start(r: &mut impl std::io::BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    let mut any = false;
    loop {
        let buf = match r.fill_buf() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            buf => buf?,
        };
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        let (end, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        let room = PATCH_LINE_KEPT.saturating_sub(line.len());
        line.extend_from_slice(&buf[..end.min(room)]);
        r.consume(end + usize::from(done));
        if done {
            return Ok(true);
        }
    }
}

/// Collects the `+c,d` side of every hunk, keyed by the `+++ b/` path. A `+++ ` line names
/// the file only in its header, before its first hunk: after it, `+++ b/x` is the added line
/// `++ b/x`, which must not move the hunks that follow to another path.
fn parse_patch(mut patch: impl std::io::BufRead) -> anyhow::Result<AddedLines> {
    let mut added = AddedLines::new();
    let mut current: Option<Vec<u8>> = None;
    let mut header = false;
    let mut line = Vec::new();
    while read_line_start(&mut patch, &mut line).context("reading `git diff`")? {
        let line = &line[..];
        if line.starts_with(b"diff ") {
            current = None;
            header = true;
        } else if let Some(name) = line.strip_prefix(b"+++ ").filter(|_| header) {
            // A name containing a space ends with a tab (for GNU patch); a real tab in a name
            // would have been quoted.
            let name = name.strip_suffix(b"\t").unwrap_or(name);
            let name = unquote(name);
            current = name.strip_prefix(b"b/").map(<[u8]>::to_vec);
        } else if let Some(rest) = line.strip_prefix(b"@@ ") {
            header = false;
            let Some(path) = &current else { continue };
            let range = parse_hunk_new_side(rest).ok_or_else(|| {
                anyhow::anyhow!(
                    "unexpected hunk header in `git diff`: {:?}",
                    String::from_utf8_lossy(line)
                )
            })?;
            if let Some(r) = range {
                added.entry(path.clone()).or_default().push(r);
            }
        }
    }
    Ok(added)
}

/// From `-a,b +c,d @@ ...`, the new side's inclusive line range, `Some(None)` when it adds
/// no line (`d` = 0).
fn parse_hunk_new_side(rest: &[u8]) -> Option<Option<(u32, u32)>> {
    let rest = std::str::from_utf8(rest.split(|b| *b == b'@').next()?).ok()?;
    let new = rest.split(' ').find_map(|w| w.strip_prefix('+'))?;
    let (start, count) = match new.split_once(',') {
        Some((s, c)) => (s.parse::<u32>().ok()?, c.parse::<u32>().ok()?),
        None => (new.parse::<u32>().ok()?, 1),
    };
    Some((count > 0).then(|| (start, start + count - 1)))
}

/// Undoes git's C-style quoting of a path (`"a\tb\303\251"`); an unquoted name is returned as is.
pub fn unquote(name: &[u8]) -> Vec<u8> {
    let Some(inner) = name.strip_prefix(b"\"").and_then(|n| n.strip_suffix(b"\"")) else {
        return name.to_vec();
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        i += 1;
        if b != b'\\' || i == inner.len() {
            out.push(b);
            continue;
        }
        let e = inner[i];
        i += 1;
        out.push(match e {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            b'0'..=b'3'
                if inner.len() >= i + 2
                    && inner[i..i + 2].iter().all(|d| (b'0'..=b'7').contains(d)) =>
            {
                let v = (e - b'0') * 64 + (inner[i] - b'0') * 8 + (inner[i + 1] - b'0');
                i += 2;
                v
            }
            other => other,
        });
    }
    out
}

/// What `--staged` or `--diff BASE` scans.
pub struct GitSource {
    pub source: Source,
    /// `--diff`: the added-lines filter.
    pub diff_filter: Option<DiffFilter>,
    /// What relative paths of `source` are relative to: the repository root for `--staged`,
    /// `cwd` for `--diff`.
    pub scan_base: PathBuf,
}

/// Runs [`source`] on its own thread, so that git's processes overlap the engine build: a
/// pre-commit scan's time is mostly start-up.
pub fn spawn_source(
    staged: bool,
    diff: Option<String>,
    pathspecs: Vec<PathBuf>,
    cwd: PathBuf,
) -> Option<std::thread::JoinHandle<anyhow::Result<GitSource>>> {
    if !staged && diff.is_none() {
        return None;
    }
    Some(std::thread::spawn(move || {
        source(staged, diff.as_deref(), &pathspecs, &cwd).map(|s| s.expect("staged or diff"))
    }))
}

/// What `--staged` or `--diff BASE` scans (`None` for neither).
///
/// `pathspecs` are the PATH arguments the user gave (none: the whole repository). `--staged`
/// blobs have repository-relative paths; `--diff` files have paths relative to `cwd` (with
/// `../` from a subdirectory) so they read like a plain scan's.
pub fn source(
    staged: bool,
    diff: Option<&str>,
    pathspecs: &[PathBuf],
    cwd: &Path,
) -> anyhow::Result<Option<GitSource>> {
    // PATH arguments are pathspecs here: `-` would match no file, and what standard input
    // holds would go unscanned with exit 0.
    if pathspecs.iter().any(|p| p.as_os_str() == "-") {
        let flag = if staged { "--staged" } else { "--diff" };
        bail!(
            "`-` (standard input) cannot be scanned with {flag}, whose PATH arguments name \
             files in the repository: scan standard input on its own, `scanner scan -`"
        );
    }
    if staged {
        let top = {
            let cwd = cwd.to_path_buf();
            std::thread::spawn(move || toplevel(&cwd, "--staged"))
        };
        // Each blob is read by a worker through its own reader, when its turn comes:
        // memory stays flat however large the index. The store is opened here, beside the
        // other two commands and while the rules load, not on the first worker after them:
        // its `git rev-parse` and reading the repository's configuration cost a few
        // milliseconds of a pre-commit hook's budget. A failure is kept and reported by the
        // reads.
        let opening = super::history::ObjectStore::opening(cwd);
        let entries = staged_entries(cwd, pathspecs);
        // Outside a repository this is the error that says so (`git diff --cached` would
        // only complain about its options).
        let scan_base = top.join().expect("toplevel thread")?;
        let repo = super::history::ObjectStore::opened(&scan_base, opening);
        let repo = std::sync::Arc::new(repo);
        let mut blobs = Vec::new();
        let (entries, unmerged) = entries.context("--staged")?;
        let mut skipped = super::skip::SkipCounts::default();
        skipped.add(super::skip::Skip::Unmerged, unmerged);
        for e in entries {
            let Some(oid) = super::Oid::from_hex(e.dst_id.as_bytes()) else {
                // git lists 64 hex digits in a repository of SHA-256 ids.
                if e.dst_id.len() == 64 {
                    let repo = scan_base.clone();
                    let e = super::history::HistoryError::UnsupportedObjectFormat { repo };
                    return Err(anyhow::Error::new(e).context("--staged"));
                }
                bail!("--staged: bad object id {}", e.dst_id);
            };
            blobs.push(Item {
                provenance: Provenance::path(path_from_bytes(e.path)),
                content: Content::GitBlob {
                    repo: std::sync::Arc::clone(&repo),
                    oid,
                    size: 0,
                    base: None,
                },
            });
        }
        return Ok(Some(GitSource {
            source: Source::Items {
                items: blobs,
                skipped,
            },
            diff_filter: None,
            scan_base,
        }));
    }
    let Some(base) = diff else {
        return Ok(None);
    };
    let top = toplevel(cwd, "--diff")?;
    let added = added_lines(cwd, base, pathspecs).context("--diff")?;
    // The current directory within the repository (None: outside it, e.g. through a symlink).
    let sub = cwd.strip_prefix(&top).ok().map(Path::to_path_buf);
    let mut files = Vec::new();
    let mut by_path = HashMap::new();
    let mut keys: Vec<_> = added.into_iter().collect();
    keys.sort();
    for (rel, ranges) in keys {
        let rel = path_from_bytes(rel);
        let on_disk = top.join(&rel);
        // Gone from the working tree, or not a regular file: nothing to scan.
        if !std::fs::symlink_metadata(&on_disk).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let shown = match &sub {
            Some(sub) => relative_to(sub, &rel),
            None => on_disk,
        };
        files.push(shown.clone());
        by_path.insert(shown, ranges);
    }
    Ok(Some(GitSource {
        source: Source::Paths(files),
        diff_filter: Some(DiffFilter::new(by_path)),
        scan_base: cwd.to_path_buf(),
    }))
}

/// `path` (relative to the repository root) as seen from the directory `sub` (also relative
/// to the root): `../` for each component of `sub` not shared with `path`.
fn relative_to(sub: &Path, path: &Path) -> PathBuf {
    let mut a = sub.components().peekable();
    let mut b = path.components().peekable();
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        if x != y {
            break;
        }
        a.next();
        b.next();
    }
    let mut out: PathBuf = a.map(|_| Component::ParentDir).collect();
    out.extend(b);
    out
}

/// Keeps only findings with at least one line among the lines `--diff BASE` added (its
/// `FindingFilter` impl is in `filter.rs`: `input` does not depend on the report types).
pub struct DiffFilter {
    /// Keyed by the path as the scan reports it.
    added: HashMap<PathBuf, Vec<(u32, u32)>>,
}

impl DiffFilter {
    pub fn new(added: HashMap<PathBuf, Vec<(u32, u32)>>) -> DiffFilter {
        DiffFilter { added }
    }

    /// Whether lines `line..=end_line` of `path` touch an added line. A member of an archive
    /// (`ARCHIVE!MEMBER`, its own line numbers) is kept whenever the archive has added lines:
    /// the archive's lines say nothing of its members'.
    pub fn keeps(&self, path: &Path, line: u32, end_line: u32) -> bool {
        let end = end_line.max(line);
        if let Some(ranges) = self.added.get(path) {
            return ranges.iter().any(|&(s, e)| s <= end && line <= e);
        }
        let bytes = path_bytes(path);
        memchr::memchr_iter(b'!', &bytes).any(|i| {
            self.added
                .contains_key(&path_from_bytes(bytes[..i].to_vec()))
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn raw_entries() {
        let out = b":000000 100644 0000000000000000000000000000000000000000 \
1111111111111111111111111111111111111111 A\0we ird\nname\0\
:100644 120000 aa bb T\0link\0\
:100644 100644 aa cc R087\0old\0new\xff\0\
:160000 160000 aa dd M\0sub\0";
        let e = parse_raw(out).unwrap();
        assert_eq!(e.len(), 4);
        assert_eq!(e[0].path, b"we ird\nname");
        assert!(e[0].has_content());
        assert!(e[1].has_content(), "symlink: its target is scanned");
        assert_eq!(e[2].path, b"new\xff");
        assert_eq!(e[2].dst_id, "cc");
        assert!(!e[3].has_content(), "submodule");
        assert!(parse_raw(b"garbage\0x\0").is_err());
    }

    #[test]
    fn hunk_headers() {
        assert_eq!(parse_hunk_new_side(b"-1,0 +2 @@ a"), Some(Some((2, 2))));
        assert_eq!(parse_hunk_new_side(b"-2,0 +4,3 @@"), Some(Some((4, 6))));
        assert_eq!(parse_hunk_new_side(b"-5,2 +4,0 @@"), Some(None));
        assert_eq!(parse_hunk_new_side(b"-0,0 +1 @@"), Some(Some((1, 1))));
        assert_eq!(parse_hunk_new_side(b"garbage"), None);
    }

    #[test]
    fn patch_paths_and_ranges() {
        let patch =
            b"diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,0 +2 @@ a\n+NEW\n\
@@ -2,0 +4,2 @@ b\n+c\n+@@ -9 +9 @@\n\
diff --git \"a/we ird\\nname\" \"b/we ird\\nname\"\nnew file mode 100644\n--- /dev/null\n\
+++ \"b/we ird\\nname\"\t\n@@ -0,0 +1 @@\n+new\n\
diff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n\
diff --git a/sp ace b/sp ace\n--- a/sp ace\n+++ b/sp ace\t\n@@ -3 +3 @@\n-a\n+b\n";
        let a = parse_patch(&patch[..]).unwrap();
        assert_eq!(a[&b"f"[..].to_vec()], vec![(2, 2), (4, 5)]);
        assert_eq!(a[&b"we ird\nname"[..].to_vec()], vec![(1, 1)]);
        assert_eq!(a[&b"sp ace"[..].to_vec()], vec![(3, 3)]);
        assert_eq!(a.len(), 3);
    }

    /// A line as long as a binary file (`--text`) is read in passing, never held whole.
    #[test]
    fn patch_lines_of_any_length_are_read_in_passing() {
        use std::io::Read as _;
        let head = &b"diff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1 +1,2 @@\n+"[..];
        let long = std::io::repeat(0).take(256 << 20);
        let tail = &b"\n+x\n@@ -9 +10 @@\n+y\n"[..];
        let patch = std::io::BufReader::with_capacity(1 << 20, head.chain(long).chain(tail));
        let a = parse_patch(patch).unwrap();
        assert_eq!(a[&b"b"[..].to_vec()], vec![(1, 2), (10, 10)]);
    }

    #[test]
    fn unquoting() {
        assert_eq!(unquote(b"plain name"), b"plain name");
        assert_eq!(unquote(b"\"b/a\\tb\\n\\\"q\\\\\""), b"b/a\tb\n\"q\\");
        assert_eq!(unquote(b"\"b/caf\\303\\251\""), "b/café".as_bytes());
        assert_eq!(unquote(b"\"b/\\377x\""), b"b/\xffx");
    }

    /// Many staged blobs, more than a pipe holds: every one in index order.
    #[test]
    fn many_staged_blobs() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        run_git(d, &["init", "-q"]);
        for i in 0..400 {
            std::fs::write(d.join(format!("f{i:03}")), format!("{i}\n").repeat(1000)).unwrap();
        }
        run_git(d, &["add", "."]);
        let blobs = staged_blobs(d, &[]).unwrap();
        assert_eq!(blobs.len(), 400);
        for (i, b) in blobs.iter().enumerate() {
            assert_eq!(b.path, PathBuf::from(format!("f{i:03}")));
            assert_eq!(b.data, format!("{i}\n").repeat(1000).into_bytes());
        }
    }

    #[test]
    fn paths_relative_to_a_subdirectory() {
        let r = |sub: &str, p: &str| relative_to(Path::new(sub), Path::new(p));
        assert_eq!(r("", "a/b.txt"), PathBuf::from("a/b.txt"));
        assert_eq!(r("app", "app/b.txt"), PathBuf::from("b.txt"));
        assert_eq!(r("app/x", "app/b.txt"), PathBuf::from("../b.txt"));
        assert_eq!(r("app", "lib/c.txt"), PathBuf::from("../lib/c.txt"));
    }

    #[test]
    fn diff_filter_keeps_spans_touching_added_lines() {
        let f = DiffFilter::new(HashMap::from([(
            PathBuf::from("a"),
            vec![(3, 3), (10, 12)],
        )]));
        assert!(f.keeps(Path::new("a"), 3, 3));
        assert!(!f.keeps(Path::new("a"), 4, 4));
        assert!(
            f.keeps(Path::new("a"), 1, 3),
            "multi-line finding ending on an added line"
        );
        assert!(f.keeps(Path::new("a"), 12, 14));
        assert!(!f.keeps(Path::new("a"), 13, 20));
        assert!(!f.keeps(Path::new("b"), 3, 3));
        assert!(
            f.keeps(Path::new("a!m.txt"), 40, 40),
            "a member of a changed archive"
        );
        assert!(!f.keeps(Path::new("b!m.txt"), 3, 3));
    }

    /// Runs git in `dir` isolated from the user's config; shared with `hook`'s tests.
    pub(crate) fn run_git(dir: &Path, args: &[&str]) {
        let st = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    }

    /// One staged file: its repository-relative path and staged content.
    struct StagedBlob {
        path: PathBuf,
        data: Vec<u8>,
    }

    /// The staged files as `--staged` sees them: the entries, each read
    /// through a worker's blob reader.
    fn staged_blobs(cwd: &Path, pathspecs: &[PathBuf]) -> anyhow::Result<Vec<StagedBlob>> {
        let mut reader = crate::input::history::BlobReader::new(cwd)?;
        let mut blobs = Vec::new();
        for e in staged_entries(cwd, pathspecs)?.0 {
            let oid = crate::input::Oid::from_hex(e.dst_id.as_bytes()).unwrap();
            let mut data = Vec::new();
            reader.read_to_vec(&oid, &mut data)?;
            blobs.push(StagedBlob {
                path: path_from_bytes(e.path),
                data,
            });
        }
        Ok(blobs)
    }

    fn names(blobs: &[StagedBlob]) -> Vec<(Vec<u8>, Vec<u8>)> {
        blobs
            .iter()
            .map(|b| (path_bytes(&b.path).into_owned(), b.data.clone()))
            .collect()
    }

    /// Real git: the index content, not the working tree, with and without a first commit.
    #[test]
    fn staged_blobs_read_the_index() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        run_git(d, &["init", "-q"]);
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/a b"), "staged\n").unwrap();
        std::fs::write(d.join("x\ny"), "nl\n").unwrap();
        run_git(d, &["add", "."]);
        std::fs::write(d.join("sub/a b"), "working tree\n").unwrap();
        // No commit yet, from a subdirectory.
        let got = names(&staged_blobs(&d.join("sub"), &[]).unwrap());
        assert_eq!(
            got,
            vec![
                (b"sub/a b".to_vec(), b"staged\n".to_vec()),
                (b"x\ny".to_vec(), b"nl\n".to_vec())
            ]
        );
        assert_eq!(
            toplevel(&d.join("sub"), "--staged").unwrap(),
            d.canonicalize().unwrap()
        );

        run_git(d, &["commit", "-qm", "one"]);
        assert!(staged_blobs(d, &[]).unwrap().is_empty());
        run_git(d, &["rm", "-q", "--cached", "x\ny"]);
        run_git(d, &["mv", "sub/a b", "moved"]);
        let got = names(&staged_blobs(d, &[]).unwrap());
        assert_eq!(got, vec![(b"moved".to_vec(), b"staged\n".to_vec())]);
    }
}
