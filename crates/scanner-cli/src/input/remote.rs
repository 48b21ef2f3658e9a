//! Remote repositories: `--history URL` and `--repos-from FILE`.
//!
//! A URL is anything `git clone` takes (`https://`, `ssh://`, `git://`, `file://`, scp-like
//! `user@host:path`). Each is cloned with `git clone --mirror` (bare, every ref: a history
//! scan covers every ref) into a private temporary directory (mode 0700, [`Clones`]) and
//! scanned as a bare repository is. The clones are made one at a time as the scan reaches
//! each repository, the next while one is scanned ([`HistoryRepo::fetch_early`]), and each
//! is removed once its blobs are read (it lives as long as the repository's object store):
//! a list of a thousand repositories needs the disk of a few clones, and its first findings
//! come after one clone. The directory of clones is removed when [`Clones`] drops, and by
//! the signal watcher when the process has to end from there (`signals::remove_on_exit`).
//!
//! # Credentials
//!
//! They come from git's own helpers (`credential.helper`, ssh keys and agents), never from
//! our command line. `GIT_TERMINAL_PROMPT=0` makes a missing credential fail instead of
//! waiting for a prompt nobody answers, and ssh runs in batch mode for the same reason
//! (unless the user chose the ssh command: `ssh_chosen`). A user or password in the URL (a
//! `--repos-from` list keeps them out of `ps`; a token is often the user) is not put on
//! git's command line either: git gets the URL without them, the user as its config's
//! default user for that host and the password from a credential helper, both read from
//! the environment (`SecretUrl`).
//! What the report and every message call a repository is its URL without user or password
//! ([`redact`]); git's stderr, relayed in a failed clone's warning, is stripped the same way
//! ([`redact_text`]), and the clone's `remote.origin.url` is rewritten to the redacted URL
//! so that SARIF's `repositoryUri` cannot carry it.
//!
//! # Stalls
//!
//! An http(s) clone gives up when its server sends (almost) nothing for a minute
//! ([`LOW_SPEED`]), unless the user set git's limits. git has none for `git://` and ssh.

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::history::{cannot_run, HistoryError};
use super::{HistoryOptions, HistoryRepo, Kept, VersionControl};

/// Whether a `--history` argument names a remote repository rather than a directory: not an
/// existing path, and a URL (`SCHEME://`) or scp-like (`[user@]host:path`, a colon before
/// any slash), as git tells them apart.
pub fn is_url(arg: &Path) -> bool {
    if arg.exists() {
        return false;
    }
    let s = arg.to_string_lossy();
    if s.contains("://") {
        return true;
    }
    match s.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/'),
        None => false,
    }
}

/// The URL without its user and password: `https://user:pw@host/x.git` → `https://host/x.git`,
/// `git@host:x.git` → `host:x.git`, `user:pw@host:x.git` → `host:x.git` (git reads that as
/// host `user` and path `pw@host:x.git`: [`scp_password`]). A password with an unencoded
/// `/` (which git cannot parse) goes too. Anything else is returned as it is.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let end = rest.find('/').unwrap_or(rest.len());
        return match rest[..end]
            .rfind('@')
            .or_else(|| unencoded_userinfo(rest, end))
        {
            Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
            None => url.to_string(),
        };
    }
    match url.split_once(':') {
        Some((host, path)) if !host.contains('/') => match host.rfind('@') {
            Some(at) => url[at + 1..].to_string(),
            None => match scp_password(path) {
                Some(at) => path[at + 1..].to_string(),
                None => url.to_string(),
            },
        },
        _ => url.to_string(),
    }
}

/// Where the password ends (its `@`) in the path of an scp-like `user:password@host:path`,
/// which git reads as host `user` and path `password@host:path`: at the first `@` followed by
/// a host and a `:` (no `/` or `@` before it). `None` for a path without one (`o/a@b.git`).
fn scp_password(path: &str) -> Option<usize> {
    path.match_indices('@').map(|(at, _)| at).find(|&at| {
        path[at + 1..]
            .split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains(['/', '@']))
    })
}

/// The credential helper a clone with a password in its URL runs: it answers git's `get`
/// for the URL's protocol and host with the password from the environment
/// ([`SecretUrl`]), and nothing for any other host (a redirect elsewhere gets no password).
const PASSWORD_HELPER: &str = "!f() { test \"$1\" = get || return 0; \
    while IFS= read -r l; do case \"$l\" in protocol=*) p=\"${l#protocol=}\";; \
    host=*) h=\"${l#host=}\";; esac; done; \
    test \"$p\" = \"$SCANNER_CLONE_PROTOCOL\" && test \"$h\" = \"$SCANNER_CLONE_HOST\" && \
    printf 'password=%s\\n' \"$SCANNER_CLONE_PASSWORD\"; }; f";

/// A `SCHEME://user:password@host/...` URL taken apart, so that git's command line (and
/// its transport helper's, which any local user can read with `ps`) carries the URL
/// without user or password: a token is often the user (`https://TOKEN@host/...`). git gets
/// the user from its config, passed in the environment (`credential.URL.username`, the
/// default user of that host, as the URL's is), and the password from [`PASSWORD_HELPER`]
/// as it would from the URL.
#[derive(Debug, PartialEq)]
struct SecretUrl {
    /// The URL without user and password.
    url: String,
    protocol: String,
    /// `host[:port]`, as git's credential protocol names it.
    host: String,
    /// Percent-decoded, as git decodes a URL's user and password; `None` where it has none.
    user: Option<String>,
    password: Option<String>,
}

impl SecretUrl {
    /// `None` when there is no user or password to take out, when ssh is the transport
    /// (its user is a login, never a credential git asks for), or when git would refuse
    /// what is there anyway (not UTF-8 once decoded, or holding a newline or a NUL; an
    /// empty password): git then gets the URL as it is.
    fn parse(url: &str) -> Option<SecretUrl> {
        let (scheme, rest) = url.split_once("://")?;
        if uses_ssh(url) {
            return None;
        }
        let end = rest.find('/').unwrap_or(rest.len());
        let at = rest[..end].rfind('@')?;
        let (user, password) = match rest[..at].split_once(':') {
            Some((user, password)) => (user, Some(password)),
            None => (&rest[..at], None),
        };
        let decoded = |part: &str| percent_decode(part).filter(|p| !p.contains(['\n', '\r', '\0']));
        let user = match user.is_empty() {
            true => None,
            false => Some(decoded(user)?),
        };
        let password = match password {
            Some(p) => Some(decoded(p).filter(|p| !p.is_empty())?),
            None => None,
        };
        if user.is_none() && password.is_none() {
            return None;
        }
        Some(SecretUrl {
            url: format!("{scheme}://{}", &rest[at + 1..]),
            protocol: scheme.to_string(),
            host: rest[at + 1..end].to_string(),
            user,
            password,
        })
    }
}

/// An ssh URL without the password of its user information (`ssh://git:pw@host:22/x` →
/// `ssh://git@host:22/x`; `None` without one): ssh logs in as the user and never uses it,
/// and git, reading its `:` as a port's, would give ssh the wrong host and put the password
/// on the command lines of git and ssh.
fn without_password(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find('/').unwrap_or(rest.len());
    let at = rest[..end].rfind('@')?;
    let (user, _) = rest[..at].split_once(':')?;
    Some(format!("{scheme}://{user}@{}", &rest[at + 1..]))
}

/// Sets git's config `key` to `value` for `cmd` through the environment (`GIT_CONFIG_COUNT`
/// and its pairs, after any the user set), where `ps` does not show it.
fn config_env(cmd: &mut std::process::Command, key: &str, value: &str) {
    let n = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    cmd.env("GIT_CONFIG_COUNT", (n + 1).to_string())
        .env(format!("GIT_CONFIG_KEY_{n}"), key)
        .env(format!("GIT_CONFIG_VALUE_{n}"), value);
}

/// `%XX` decoded (a `%` not followed by two hex digits is kept); `None` if not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(byte) if b[i] == b'%' => {
                out.push(byte);
                i += 3;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Where the user information of `rest` (a URL after `SCHEME://`) ends when its password
/// holds an unencoded `/` (`u:pass/word@host/...`): the part before the first `/`
/// (`u:pass`) is then no `host:port`, and an `@` follows.
fn unencoded_userinfo(rest: &str, end: usize) -> Option<usize> {
    let (_, port) = rest[..end].rsplit_once(':')?;
    if rest.starts_with('[') || port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let first = end + rest[end..].find('@')?;
    let stop = rest[first..].find('/').map_or(rest.len(), |i| first + i);
    rest[..stop].rfind('@')
}

/// `text` (git's stderr) with `url` replaced by its [`redact`]ed form and the user
/// information of any other `SCHEME://user:pw@host` in it removed. So is the path git reads
/// in an scp-like `user:password@host:path` ([`scp_password`]), which it names alone.
pub fn redact_text(text: &str, url: &str) -> String {
    let mut text = text.replace(url, &redact(url));
    if let Some((_, path)) = url.split_once(':').filter(|_| !url.contains("://")) {
        if let Some(at) = scp_password(path) {
            text = text.replace(path, &path[at + 1..]);
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let end = rest
            .find(|c: char| c == '/' || c == '\'' || c == '"' || c.is_whitespace())
            .unwrap_or(rest.len());
        if let Some(at) = rest[..end].rfind('@') {
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// The URLs of a `--repos-from` file (`-`: stdin): one per line, a leading byte order mark,
/// surrounding blanks and a CRLF's `\r` trimmed, blank lines and `#` comments skipped, each URL once (the first time
/// it is listed, whatever user and password it is listed with, with a trailing `/` or not). A line that is not UTF-8 is an error naming it, and so is a list of no URL.
pub fn read_list(file: &Path) -> Result<Vec<String>, RemoteError> {
    let list_err = |source| RemoteError::List {
        file: file.to_path_buf(),
        source,
    };
    let mut data = Vec::new();
    match file == Path::new("-") {
        true => io::stdin().lock().read_to_end(&mut data),
        false => std::fs::File::open(file).and_then(|mut f| f.read_to_end(&mut data)),
    }
    .map_err(list_err)?;
    // An editor's byte order mark is no part of the first URL (as for `--files-from`).
    let data = data.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&data);
    let mut urls: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in data.split(|&b| b == b'\n').enumerate() {
        let line = std::str::from_utf8(line).map_err(|_| {
            list_err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("line {} is not UTF-8", n + 1),
            ))
        })?;
        let line = line.trim();
        // Once per repository: the same URL with other credentials, or with a trailing `/`,
        // is the same repository, and its findings would be reported twice under one name.
        let key = redact(line).trim_end_matches('/').to_string();
        if !line.is_empty() && !line.starts_with('#') && seen.insert(key) {
            urls.push(line.to_string());
        }
    }
    if urls.is_empty() {
        // A list made by a script that failed: scanning nothing must not pass for a scan.
        return Err(list_err(io::Error::new(
            io::ErrorKind::InvalidData,
            "lists no URL (one per line; blank lines and `#` comments are skipped)",
        )));
    }
    Ok(urls)
}

/// What went wrong, naming the list or the (redacted) URL at fault.
#[derive(Debug)]
pub enum RemoteError {
    /// The `--repos-from` file could not be read.
    List { file: PathBuf, source: io::Error },
    /// The temporary directory could not be made, or git could not be started.
    Io { url: String, source: io::Error },
    /// `git clone` failed; `reason` is its stderr, redacted.
    Clone { url: String, reason: String },
    /// `git clone` succeeded with no ref: an empty repository, or a web page (a sign-in
    /// page) that answered where git asked for one, which git takes for an empty one.
    Empty { url: String },
    /// The run was stopped (Ctrl-C, SIGTERM) while cloning.
    Interrupted,
}

impl RemoteError {
    /// What went wrong, without the URL: for a message that names the repository by it.
    pub fn reason(&self) -> String {
        match self {
            RemoteError::List { source, .. } => source.to_string(),
            RemoteError::Io { source, .. } => format!("cannot clone: {source}"),
            RemoteError::Clone { reason, .. } => {
                format!(
                    "cannot clone, not scanned: {}",
                    crate::messages::escape(reason)
                )
            }
            RemoteError::Empty { .. } => "cloned no commit, nothing scanned: the repository \
                is empty, or no git repository answers at this URL (a web page does, such as \
                a sign-in page)"
                .to_string(),
            RemoteError::Interrupted => "interrupted while cloning".to_string(),
        }
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::messages::{escape, escape_path};
        match self {
            RemoteError::List { file, .. } => {
                write!(f, "--repos-from {}: {}", escape_path(file), self.reason())
            }
            RemoteError::Io { url, .. }
            | RemoteError::Clone { url, .. }
            | RemoteError::Empty { url } => {
                write!(f, "{}: {}", escape(url), self.reason())
            }
            RemoteError::Interrupted => f.write_str(&self.reason()),
        }
    }
}

impl std::error::Error for RemoteError {}

/// The private directory (mode 0700, under `$TMPDIR`) that remote repositories are cloned
/// into, each in a directory of its own; removed, with whatever is still in it, when it
/// drops.
pub struct Clones {
    dir: tempfile::TempDir,
    /// Each repository's description for SARIF, taken once it is cloned (its clone is gone
    /// when the report is written), by its place in the list.
    described: Arc<Mutex<Vec<Option<VersionControl>>>>,
}

impl Clones {
    pub fn new() -> io::Result<Clones> {
        let dir = tempfile::Builder::new()
            .prefix("scanner-clones-")
            .tempdir()?;
        Ok(Clones {
            dir,
            described: Default::default(),
        })
    }

    /// The repositories cloned, described for SARIF's `versionControlProvenance`, in the
    /// list's order.
    pub fn version_control(&self) -> Vec<VersionControl> {
        let described = self.described.lock().unwrap_or_else(|e| e.into_inner());
        described.iter().flatten().cloned().collect()
    }

    /// What must be removed if the process ends abruptly.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Each of `urls` as a repository of the history scan, named by its URL without
    /// credentials, with `options` for the directory it is cloned into. Each is cloned when
    /// the scan reaches it, the next one while the one before is scanned, and its clone
    /// removed once its last blob is read: at most a few clones exist at once, and the
    /// first findings come after one clone, not after all of them. A clone that fails is
    /// that repository's error (a warning naming the URL; the others are still scanned).
    /// `stopped` is polled while git runs.
    pub fn repositories(
        &self,
        urls: &[String],
        stopped: Arc<dyn Fn() -> bool + Send + Sync>,
        options: impl Fn(PathBuf) -> HistoryOptions,
    ) -> Vec<HistoryRepo> {
        *self.described.lock().unwrap_or_else(|e| e.into_inner()) = vec![None; urls.len()];
        urls.iter()
            .enumerate()
            .map(|(k, url)| {
                let remote = RemoteRepo {
                    url: url.clone(),
                    name: redact(url),
                    dir: self.dir.path().join(k.to_string()),
                };
                let name = PathBuf::from(&remote.name);
                let stopped = Arc::clone(&stopped);
                let described = Arc::clone(&self.described);
                let failed = name.clone();
                HistoryRepo::new(Some(name.clone()), options(remote.repo()))
                    .named(name)
                    .fetched_by(move || match remote.clone(&*stopped) {
                        Ok(()) => {
                            let description = VersionControl::of(&remote.repo());
                            described.lock().unwrap_or_else(|e| e.into_inner())[k] =
                                Some(description);
                            Ok(Box::new(remote) as Kept)
                        }
                        Err(e) => Err(HistoryError::Fetch {
                            repo: failed,
                            reason: e.reason(),
                        }),
                    })
            })
            .collect()
    }
}

/// A remote repository and the directory it is cloned into ([`Clones`]); dropping it
/// removes the clone.
struct RemoteRepo {
    url: String,
    /// The URL without user and password: what the report prefixes its paths with.
    name: String,
    dir: PathBuf,
}

impl Drop for RemoteRepo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl RemoteRepo {
    /// The bare repository, once [`clone`](Self::clone) succeeded.
    fn repo(&self) -> PathBuf {
        self.dir.join("repo.git")
    }

    /// Clones every ref. `stopped` is polled while git runs: when it says so, git is
    /// asked to stop (SIGTERM, so that it removes what it wrote) and waited for.
    fn clone(&self, stopped: &dyn Fn() -> bool) -> Result<(), RemoteError> {
        let io_err = |source| RemoteError::Io {
            url: self.name.clone(),
            source,
        };
        // A local path is relative to where the user is, not to the clone's directory.
        let source = match is_url(Path::new(&self.url)) {
            true => self.url.clone(),
            false => std::path::absolute(&self.url)
                .map_err(io_err)?
                .to_string_lossy()
                .into_owned(),
        };
        // Inside the private directory (mode 0700): a directory of its own, for git to run in.
        std::fs::create_dir(&self.dir).map_err(io_err)?;
        let mut cmd = super::history::git(&self.dir);
        // A user and a password go through the environment, not git's command line.
        let source = match SecretUrl::parse(&source) {
            Some(secret) => {
                if let Some(user) = &secret.user {
                    let key = format!("credential.{}://{}.username", secret.protocol, secret.host);
                    config_env(&mut cmd, &key, user);
                }
                if let Some(password) = &secret.password {
                    // Git uses a URL's password without asking any helper: neither does this.
                    cmd.args(["-c", "credential.helper=", "-c"])
                        .arg(format!("credential.helper={PASSWORD_HELPER}"))
                        .env("SCANNER_CLONE_PROTOCOL", &secret.protocol)
                        .env("SCANNER_CLONE_HOST", &secret.host)
                        .env("SCANNER_CLONE_PASSWORD", password);
                }
                secret.url
            }
            None if uses_ssh(&source) => without_password(&source).unwrap_or(source),
            None => source,
        };
        if uses_ssh(&source) && !ssh_chosen(&self.dir) {
            // ssh asks its questions (a new host's key, a passphrase) on the terminal, which
            // git's own process group (below) cannot read from: it would stop there for good.
            // Batch mode makes it fail instead, as GIT_TERMINAL_PROMPT does git's prompts.
            cmd.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
        }
        if uses_http(&source) {
            low_speed_abort(&mut cmd, &self.dir, &source);
        }
        cmd.args(["clone", "--mirror", "--quiet", "--", &source, "repo.git"])
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // Its own process group, so that stopping it reaches its transport helpers too.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .map_err(|e| io_err(io::Error::new(e.kind(), cannot_run("git clone", &e))))?;
        let mut stderr = child.stderr.take().expect("stderr is piped");
        // Read on the side, so that a chatty git never blocks on a full pipe.
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        let Some(status) = wait(&mut child, stopped).map_err(io_err)? else {
            // Not joined: a helper that ignored the signal may still hold the pipe.
            return Err(RemoteError::Interrupted);
        };
        let stderr = reader.join().unwrap_or_default();
        if !status.success() {
            let reason = super::history::one_line(&String::from_utf8_lossy(&stderr));
            let reason = match reason.is_empty() {
                true => format!("git clone exited with {status}"),
                false => redact_text(&reason, &self.url),
            };
            return Err(RemoteError::Clone {
                url: self.name.clone(),
                reason,
            });
        }
        // The clone's config holds the URL as given, password included.
        let _ = super::history::git(&self.repo())
            .args(["config", "remote.origin.url", &self.name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // A page that answers 200 to every request (a sign-in page, a catch-all web app) is
        // a repository without refs to git: scanning nothing must not pass for a clean scan.
        let refs = super::history::git(&self.repo())
            .args(["for-each-ref", "--count=1"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(io_err)?;
        if refs.status.success() && refs.stdout.is_empty() {
            return Err(RemoteError::Empty {
                url: self.name.clone(),
            });
        }
        Ok(())
    }
}

/// Whether git clones `url` over ssh: `ssh://` (and git's `git+ssh://`, `ssh+git://`) or
/// scp-like `[user@]host:path`.
fn uses_ssh(url: &str) -> bool {
    match url.split_once("://") {
        Some((scheme, _)) => ["ssh", "git+ssh", "ssh+git"].contains(&scheme),
        None => is_url(Path::new(url)),
    }
}

/// Whether git clones `url` with curl (`http://`, `https://`), which [`LOW_SPEED`] applies to.
fn uses_http(url: &str) -> bool {
    url.split_once("://")
        .is_some_and(|(scheme, _)| ["http", "https"].contains(&&*scheme.to_ascii_lowercase()))
}

/// git's low-speed abort (its environment variable, its config key, our value): an http(s)
/// clone whose server sends less than a byte a second for a minute fails (curl's "Operation
/// too slow") instead of waiting forever on a server that stalled. Not lower: a server that
/// is still packing a large repository sends a keep-alive every 5 seconds, and nothing else.
const LOW_SPEED: [(&str, &str, &str); 2] = [
    ("GIT_HTTP_LOW_SPEED_LIMIT", "http.lowspeedlimit", "1"),
    ("GIT_HTTP_LOW_SPEED_TIME", "http.lowspeedtime", "60"),
];

/// Sets each of [`LOW_SPEED`] the user did not set (in the environment, or in git's config
/// for `url` as a clone in `dir` reads it, `http.<url>.*` included) in `cmd`'s environment,
/// which git reads over its config: the user's own setting is left to apply.
fn low_speed_abort(cmd: &mut std::process::Command, dir: &Path, url: &str) {
    let config = super::history::git(dir)
        .args(["config", "--get-urlmatch", "http", url])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    for (var, key, value) in LOW_SPEED {
        let in_config = config.lines().any(|l| l.split(' ').next() == Some(key));
        if !in_config && std::env::var_os(var).is_none_or(|v| v.is_empty()) {
            cmd.env(var, value);
        }
    }
}

/// Whether the user chose the ssh command (`GIT_SSH_COMMAND`, `GIT_SSH`, `core.sshCommand`
/// in git's config as a clone in `dir` reads it): it is then left as it is.
fn ssh_chosen(dir: &Path) -> bool {
    if ["GIT_SSH_COMMAND", "GIT_SSH"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
    {
        return true;
    }
    super::history::git(dir)
        .args(["config", "--get", "core.sshCommand"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.trim_ascii().is_empty())
}

/// Waits for `child`, polling `stopped`; `None` when stopped (git was asked to end and
/// has ended).
fn wait(
    child: &mut std::process::Child,
    stopped: &dyn Fn() -> bool,
) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if stopped() {
            terminate(child);
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(unix)]
fn terminate(child: &mut std::process::Child) {
    // SIGTERM rather than SIGKILL: git then removes the directory it was cloning into. To
    // the whole group: git's transport helper (`git-remote-http`) would otherwise wait on
    // the network after git is gone.
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: `pid` is our own child, not yet waited for, so the id (and the group it
        // leads) is not reused.
        unsafe { libc::kill(-pid, libc::SIGTERM) };
    }
}

#[cfg(not(unix))]
fn terminate(child: &mut std::process::Child) {
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_removes_user_and_password_only() {
        assert_eq!(redact("https://u:pw@h:8/x.git"), "https://h:8/x.git");
        assert_eq!(redact("ssh://git@h/x.git"), "ssh://h/x.git");
        assert_eq!(redact("git@github.com:o/r.git"), "github.com:o/r.git");
        assert_eq!(redact("https://h/a@b.git"), "https://h/a@b.git");
        assert_eq!(redact("file:///tmp/r.git"), "file:///tmp/r.git");
        assert_eq!(redact("/tmp/r@x"), "/tmp/r@x");
        assert_eq!(redact("https://u:a/b@c@h:1/x.git"), "https://h:1/x.git");
        assert_eq!(redact("https://h:8/a@b.git"), "https://h:8/a@b.git");
        assert_eq!(redact("https://[::1]:8/a@b.git"), "https://[::1]:8/a@b.git");
        assert_eq!(redact("u:pw@h:o/r.git"), "h:o/r.git");
        assert_eq!(redact("u:p@w@h:/o/r.git"), "h:/o/r.git");
        assert_eq!(redact("u:p/w@h:r.git"), "h:r.git");
        assert_eq!(redact("git@h:o/a@b.git"), "h:o/a@b.git");
        assert_eq!(redact("h:o/a@b.git"), "h:o/a@b.git");
        assert_eq!(redact("h:a@b.git"), "h:a@b.git");
    }

    #[test]
    fn redact_text_strips_every_userinfo() {
        let url = "http://u:s3cr3t@h/x.git";
        let text = "fatal: unable to access 'http://u:s3cr3t@h/x.git/': 401; see https://a:b@c/d";
        assert_eq!(
            redact_text(text, url),
            "fatal: unable to access 'http://h/x.git/': 401; see https://c/d"
        );
        assert_eq!(
            redact_text(
                "fatal: 'pw@h:x.git' does not appear; u:pw@h:x.git",
                "u:pw@h:x.git"
            ),
            "fatal: 'h:x.git' does not appear; h:x.git"
        );
    }

    #[test]
    fn a_password_is_taken_out_of_the_url_decoded() {
        let s = SecretUrl::parse("HTTPS://a%40b:p%3Aw%zz%2F@[::1]:8/x@y.git").unwrap();
        assert_eq!(
            s,
            SecretUrl {
                url: "HTTPS://[::1]:8/x@y.git".into(),
                protocol: "HTTPS".into(),
                host: "[::1]:8".into(),
                user: Some("a@b".into()),
                password: Some("p:w%zz/".into()),
            }
        );
        // A token as the user.
        assert_eq!(
            SecretUrl::parse("https://ghp_t%2Bk@h:8/x.git"),
            Some(SecretUrl {
                url: "https://h:8/x.git".into(),
                protocol: "https".into(),
                host: "h:8".into(),
                user: Some("ghp_t+k".into()),
                password: None,
            })
        );
        assert_eq!(
            SecretUrl::parse("https://:pw@h/x.git").map(|s| (s.url, s.user)),
            Some(("https://h/x.git".into(), None))
        );
        assert_eq!(SecretUrl::parse("https://u:@h/x.git"), None);
        assert_eq!(SecretUrl::parse("https://u:a%0Ab@h/x.git"), None);
        assert_eq!(SecretUrl::parse("https://u%0A:pw@h/x.git"), None);
        assert_eq!(SecretUrl::parse("https://u:%ff@h/x.git"), None);
        assert_eq!(
            SecretUrl::parse("https://u:%+1@h/x.git").map(|s| s.password),
            Some(Some("%+1".into()))
        );
        // ssh's user is a login name, not a credential.
        assert_eq!(SecretUrl::parse("ssh://git@h/x.git"), None);
        assert_eq!(SecretUrl::parse("git@h:x.git"), None);
        assert_eq!(SecretUrl::parse("https://h/a:b@c"), None);
        assert_eq!(SecretUrl::parse("https://h/x.git"), None);
    }

    #[test]
    fn http_urls_are_told_apart() {
        assert!(uses_http("https://h/x.git"));
        assert!(uses_http("HTTP://h/x.git"));
        assert!(!uses_http("git://h/x.git"));
        assert!(!uses_http("git@h:x.git"));
        assert!(!uses_http("/tmp/http://x"));
    }

    #[test]
    fn ssh_urls_are_told_apart() {
        assert!(uses_ssh("ssh://git@h/x.git"));
        assert!(uses_ssh("git+ssh://h/x.git"));
        assert!(uses_ssh("git@h:o/x.git"));
        assert!(!uses_ssh("https://h/x.git"));
        assert!(!uses_ssh("git://h/x.git"));
        assert!(!uses_ssh("/tmp/x.git"));
    }

    #[test]
    fn urls_and_paths_are_told_apart() {
        assert!(is_url(Path::new("https://h/x.git")));
        assert!(is_url(Path::new("git@h:x.git")));
        assert!(is_url(Path::new("h:x")));
        assert!(!is_url(Path::new("./a:b")));
        assert!(!is_url(Path::new("repo")));
        assert!(!is_url(Path::new(".")));
    }
}
