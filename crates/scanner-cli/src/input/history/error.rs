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
    /// `git` could not be started, or its pipes failed.
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
    /// Output that does not follow the documented format.
    Protocol {
        repo: PathBuf,
        command: &'static str,
        detail: String,
    },
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryError::NotARepository { repo } => write!(
                f,
                "not a git repository: {} (--history needs one)",
                repo.display()
            ),
            HistoryError::UnknownRevision { repo, rev } => {
                write!(f, "{}: unknown revision `{rev}`", repo.display())
            }
            HistoryError::BrokenRef { repo, name } => write!(
                f,
                "{}: ref `{name}` names an object the repository does not have, so git \
                 cannot list every ref's history; repair or delete the ref \
                 (`git update-ref -d {name}`), or name the revisions to scan (--range)",
                repo.display()
            ),
            HistoryError::MissingObject { repo, oid, detail } => write!(
                f,
                "{}: object {oid} is missing or corrupt ({detail}); \
                 in a partial clone, fetch it first: scanning never goes to the network",
                repo.display()
            ),
            HistoryError::UnsupportedObjectFormat { repo } => write!(
                f,
                "{}: SHA-256 repositories are not supported",
                repo.display()
            ),
            HistoryError::Io {
                repo,
                command,
                source,
            } => write!(f, "{}: `{command}`: {source}", repo.display()),
            HistoryError::Git {
                repo,
                command,
                stderr,
            } => write!(f, "{}: `{command}` failed: {stderr}", repo.display()),
            HistoryError::Protocol {
                repo,
                command,
                detail,
            } => write!(
                f,
                "{}: unexpected output from `{command}`: {detail}",
                repo.display()
            ),
        }
    }
}

impl HistoryError {
    /// The same error naming the repository `name` (a remote repository's URL rather than
    /// the private directory it was cloned into).
    pub fn renamed(mut self, name: &Path) -> HistoryError {
        match &mut self {
            HistoryError::NotARepository { repo }
            | HistoryError::UnknownRevision { repo, .. }
            | HistoryError::BrokenRef { repo, .. }
            | HistoryError::MissingObject { repo, .. }
            | HistoryError::UnsupportedObjectFormat { repo }
            | HistoryError::Io { repo, .. }
            | HistoryError::Git { repo, .. }
            | HistoryError::Protocol { repo, .. } => *repo = name.to_path_buf(),
        }
        self
    }
}

impl std::error::Error for HistoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HistoryError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Turns git's stderr into the most specific error.
pub(super) fn classify(repo: &Path, command: &'static str, stderr: &[u8]) -> HistoryError {
    let text = String::from_utf8_lossy(stderr).trim().to_string();
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
        || text.contains("missing")
        || text.contains("corrupt")
        || text.contains("inflate")
    {
        let oid = text
            .split(|c: char| !c.is_ascii_hexdigit())
            .find(|w| w.len() == 40)
            .unwrap_or("?")
            .to_string();
        return HistoryError::MissingObject {
            repo,
            oid,
            detail: text,
        };
    }
    if text.contains("sha256") {
        return HistoryError::UnsupportedObjectFormat { repo };
    }
    HistoryError::Git {
        repo,
        command,
        stderr: text,
    }
}
