//! What went wrong in a history scan, and git's stderr classified into it.

use super::*;

/// What went wrong, naming the repository and the revision or object at fault.
#[derive(Debug)]
pub enum HistoryError {
    /// The path is not inside a git repository, or does not exist.
    NotARepository { repo: PathBuf },
    /// A revision git cannot resolve.
    UnknownRevision { repo: PathBuf, rev: String },
    /// A ref (`refs/heads/x`) whose object the repository does not have: git walks no
    /// `--all` then.
    BrokenRef { repo: PathBuf, name: String },
    /// A parent commit is absent or unreadable (corrupt). (A blob is reported by the worker
    /// that reads it, a tree in [`HistoryStats::unlisted`].)
    MissingObject {
        repo: PathBuf,
        oid: String,
        detail: String,
    },
    /// The repository uses SHA-256 object ids.
    UnsupportedObjectFormat { repo: PathBuf },
    /// `git` could not be started (not installed, not on `PATH`).
    Spawn {
        repo: PathBuf,
        command: &'static str,
        source: io::Error,
    },
    /// git's pipes failed, or the object store could not be read.
    Io {
        repo: PathBuf,
        command: &'static str,
        source: io::Error,
    },
    /// Any other failure of a git command, with its stderr.
    Git {
        repo: PathBuf,
        command: &'static str,
        stderr: String,
    },
    /// What must be done before the repository can be read failed: a remote one's clone
    /// (`reason` names no URL; [`HistoryError::repo`] is the URL without credentials).
    Fetch { repo: PathBuf, reason: String },
    /// Output that does not follow the documented format.
    Protocol {
        repo: PathBuf,
        command: &'static str,
        detail: String,
    },
}

impl HistoryError {
    /// The repository this error is about.
    pub fn repo(&self) -> &Path {
        match self {
            HistoryError::NotARepository { repo }
            | HistoryError::UnknownRevision { repo, .. }
            | HistoryError::BrokenRef { repo, .. }
            | HistoryError::MissingObject { repo, .. }
            | HistoryError::UnsupportedObjectFormat { repo }
            | HistoryError::Spawn { repo, .. }
            | HistoryError::Io { repo, .. }
            | HistoryError::Git { repo, .. }
            | HistoryError::Fetch { repo, .. }
            | HistoryError::Protocol { repo, .. } => repo,
        }
    }

    /// What went wrong, without the repository's path: for a message that names the
    /// repository otherwise (one of several, a remote one by its URL rather than by the
    /// directory it was cloned into).
    pub fn reason(&self) -> String {
        match self {
            HistoryError::NotARepository { .. } => {
                "not a git repository (--history needs one)".to_string()
            }
            HistoryError::UnknownRevision { rev, .. } => format!("unknown revision `{rev}`"),
            HistoryError::BrokenRef { name, .. } => format!(
                "ref `{name}` names an object the repository does not have, so git \
                 cannot list every ref's history; {}, or name the revisions to scan \
                 (--range)",
                repair_ref(name)
            ),
            HistoryError::MissingObject { oid, detail, .. } => format!(
                "object {oid} is missing or corrupt ({detail}); \
                 in a partial clone, fetch it first: scanning never goes to the network"
            ),
            HistoryError::UnsupportedObjectFormat { .. } => {
                "SHA-256 repositories are not supported".to_string()
            }
            HistoryError::Spawn {
                command, source, ..
            } => cannot_run(command, source),
            HistoryError::Io {
                command, source, ..
            } => format!("`{command}`: {source}"),
            HistoryError::Git {
                command, stderr, ..
            } => format!("`{command}` failed: {stderr}"),
            HistoryError::Fetch { reason, .. } => reason.clone(),
            HistoryError::Protocol {
                command, detail, ..
            } => format!("unexpected output from `{command}`: {detail}"),
        }
    }
}

/// What to do about ref `name`, which names an object the repository does not have. Never
/// `git update-ref -d HEAD`: that deletes the branch HEAD is on, or a detached HEAD's file,
/// after which git sees no repository there.
pub(super) fn repair_ref(name: &str) -> String {
    if name == "HEAD" {
        "repair it, or point it at a branch that is there: \
         `git symbolic-ref HEAD refs/heads/BRANCH`"
            .to_string()
    } else {
        format!("repair or delete it: `git update-ref -d {name}`")
    }
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryError::NotARepository { repo } => write!(
                f,
                "not a git repository: {} (--history needs one)",
                repo.display()
            ),
            _ => write!(f, "{}: {}", self.repo().display(), self.reason()),
        }
    }
}

/// What a git command that could not be started (`command`, as messages name it) is
/// reported as: a missing git reads as a missing repository otherwise.
pub(crate) fn cannot_run(command: &str, source: &io::Error) -> String {
    format!("cannot run `{command}` (is git installed?): {source}")
}

/// No source: the message holds it already (`{:#}` would print it twice).
impl std::error::Error for HistoryError {}

/// git's message `text` (its stderr) as one line, what a message relays: its lines trimmed,
/// the empty ones dropped, the others joined by `; `.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Turns git's stderr into the most specific error.
pub(super) fn classify(repo: &Path, command: &'static str, stderr: &[u8]) -> HistoryError {
    let text = String::from_utf8_lossy(stderr).trim().to_string();
    let said = one_line(&text);
    let repo = repo.to_path_buf();
    let quoted = |prefix: &str| {
        let start = text.find(prefix)? + prefix.len();
        let end = text[start..].find('\'')?;
        Some(text[start..start + end].to_string())
    };
    if text.contains("not a git repository") || text.contains("cannot change to") {
        return HistoryError::NotARepository { repo };
    }
    if let Some(rev) = quoted("bad revision '")
        .or_else(|| quoted("ambiguous argument '"))
        .or_else(|| quoted("Invalid revision range "))
    {
        return HistoryError::UnknownRevision { repo, rev };
    }
    // `fatal: bad object refs/heads/x`: a ref of `--all` whose object is missing.
    if let Some(name) = text
        .lines()
        .find_map(|l| l.strip_prefix("fatal: bad object "))
        .filter(|name| name.starts_with("refs/") || *name == "HEAD")
    {
        return HistoryError::BrokenRef {
            repo,
            name: name.trim().to_string(),
        };
    }
    if text.contains("unknown revision") || text.contains("bad object") {
        return HistoryError::UnknownRevision {
            repo,
            rev: text.lines().next().unwrap_or_default().to_string(),
        };
    }
    if text.contains("unable to read")
        || text.contains("Could not read ")
        || text.contains("missing")
        || text.contains("corrupt")
        || text.contains("inflate")
    {
        // The last id git names is the object its walk died on (`error: Could not read
        // ID`), after any pack it names on the way (`.../pack-ID.pack`).
        let oid = text
            .split(|c: char| !c.is_ascii_hexdigit())
            .rfind(|w| w.len() == 40)
            .unwrap_or("?")
            .to_string();
        return HistoryError::MissingObject {
            repo,
            oid,
            detail: said,
        };
    }
    if text.contains("sha256") {
        return HistoryError::UnsupportedObjectFormat { repo };
    }
    HistoryError::Git {
        repo,
        command,
        stderr: said,
    }
}
