//! The repository a history scan read, for SARIF's `versionControlProvenance`.

use super::*;

/// The repository a history scan read, as SARIF's `versionControlProvenance` describes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionControl {
    /// An absolute URI: the `origin` remote with any user name and password removed
    /// (`git@host:org/repo.git` becomes `ssh://git@host/org/repo.git`), or the repository's
    /// own directory as a `file:///` URI when it has no `origin`.
    pub repository_uri: String,
    /// The commit `HEAD` names (40 hex digits); absent in a repository without commits.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub revision_id: Option<String>,
    /// The branch `HEAD` is on; absent on a detached `HEAD`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub branch: Option<String>,
}

impl VersionControl {
    /// Asks git about `repo`. Never fails: what git cannot tell is left out, and a repository
    /// git cannot open at all is named by its path.
    pub fn of(repo: &Path) -> VersionControl {
        let ask = |args: &[&str]| -> Option<String> {
            let out = git(repo).args(args).stderr(Stdio::null()).output().ok()?;
            let text = String::from_utf8(out.stdout).ok()?;
            let text = text.trim();
            (out.status.success() && !text.is_empty()).then(|| text.to_string())
        };
        let repository_uri = ask(&["config", "--get", "remote.origin.url"])
            .and_then(|url| remote_uri(&url, repo))
            .or_else(|| {
                ask(&["rev-parse", "--show-toplevel"])
                    .or_else(|| ask(&["rev-parse", "--absolute-git-dir"]))
                    .map(|dir| crate::paths::path_uri(Path::new(&dir)))
            })
            .unwrap_or_else(|| {
                let dir = std::path::absolute(repo).unwrap_or_else(|_| repo.to_path_buf());
                crate::paths::path_uri(&dir)
            });
        VersionControl {
            repository_uri,
            revision_id: ask(&["rev-parse", "--verify", "-q", "HEAD^{commit}"]),
            branch: ask(&["symbolic-ref", "-q", "--short", "HEAD"]),
        }
    }
}

/// A remote URL as an absolute URI without credentials: a report is uploaded and shared, and
/// `https://user:token@host/...` remotes are common in CI checkouts.
pub(super) fn remote_uri(url: &str, repo: &Path) -> Option<String> {
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        // ssh keeps its user name: `git@` is not a secret, and the host needs it.
        let user = match authority.rsplit_once('@') {
            Some((user, _)) if scheme.starts_with("ssh") && !user.contains(':') => {
                format!("{user}@")
            }
            _ => String::new(),
        };
        return Some(format!("{scheme}://{user}{host}/{path}"));
    }
    // scp-like `user@host:path` (a colon before any slash).
    if let Some((host, path)) = url.split_once(':') {
        if !host.contains('/') && !host.is_empty() {
            let path = path.trim_start_matches('/');
            return Some(format!("ssh://{host}/{path}"));
        }
    }
    // A local path, relative to the repository.
    let p = Path::new(url);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::path::absolute(repo.join(p)).ok()?
    };
    Some(crate::paths::path_uri(&abs))
}
