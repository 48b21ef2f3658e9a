//! Running git: the isolated command, a child whose stderr is collected, the stash list.

use super::*;

/// `git -C repo`, isolated from an inherited repository environment.
pub(crate) fn git(repo: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(repo);
    // Inside a hook these point at the hook's repository; the path argument must win.
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_REPLACE_REF_BASE",
    ] {
        c.env_remove(var);
    }
    // Replace refs change what git shows for an object, not what a clone or a push carries
    // (pack transfer ignores them): the objects themselves are what was committed.
    c.env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .args(["-c", "core.quotePath=false"]);
    c
}

/// A child whose stderr is collected on a thread, so it can never fill and block the child.
pub(super) struct Running {
    pub(super) child: Child,
    stderr: Option<thread::JoinHandle<Vec<u8>>>,
    command: &'static str,
}

impl Running {
    pub(super) fn spawn(
        repo: &Path,
        mut cmd: Command,
        command: &'static str,
    ) -> Result<Running, HistoryError> {
        cmd.stdin(Stdio::null());
        Running::spawn_with_stdin(repo, cmd, command)
    }

    /// [`Running::spawn`], with the stdin `cmd` was given (`Stdio::piped()` to write it).
    pub(super) fn spawn_with_stdin(
        repo: &Path,
        mut cmd: Command,
        command: &'static str,
    ) -> Result<Running, HistoryError> {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|source| HistoryError::Spawn {
            repo: repo.to_path_buf(),
            command,
            source,
        })?;
        let mut err = child.stderr.take().expect("piped");
        let stderr = thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = err.read_to_end(&mut buf);
            buf
        });
        Ok(Running {
            child,
            stderr: Some(stderr),
            command,
        })
    }

    /// Waits; a failure becomes the classified error.
    pub(super) fn finish(mut self, repo: &Path) -> Result<(), HistoryError> {
        let status = self.child.wait().map_err(|source| HistoryError::Io {
            repo: repo.to_path_buf(),
            command: self.command,
            source,
        })?;
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if status.success() {
            Ok(())
        } else {
            Err(classify(repo, self.command, &stderr))
        }
    }

    pub(super) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(h) = self.stderr.take() {
            let _ = h.join();
        }
    }
}

/// The stash and its reflog entries (`stash@{0}`, `stash@{1}`, ...), as commit ids.
pub(super) fn stash_entries(repo: &Path) -> Result<Vec<String>, HistoryError> {
    let mut c = git(repo);
    c.args([
        "log",
        "-g",
        "--ignore-missing",
        "--format=%H",
        "refs/stash",
        "--",
    ]);
    let out = output(repo, c, "git log -g refs/stash")?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// What the git command `cmd` (`command`, as errors name it) writes on stdout, once it
/// exited successfully; else its error, classified.
pub(super) fn output(
    repo: &Path,
    cmd: Command,
    command: &'static str,
) -> Result<Vec<u8>, HistoryError> {
    let mut run = Running::spawn(repo, cmd, command)?;
    let mut out = Vec::new();
    let read = run
        .child
        .stdout
        .take()
        .expect("piped")
        .read_to_end(&mut out);
    run.finish(repo)?;
    read.map_err(|source| HistoryError::Io {
        repo: repo.to_path_buf(),
        command,
        source,
    })?;
    Ok(out)
}
