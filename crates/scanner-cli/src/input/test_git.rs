//! Running git in tests: one helper for the tests of every input that makes repositories.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// `git -C dir ARGS` with `input` on stdin, isolated from user and system configuration (and
/// as the history walk runs git: no replace objects, no lazy fetch); its stdout, or its
/// stderr as the error when it fails.
pub(crate) fn git_with_input(dir: &Path, args: &[&str], input: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = super::history::git(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
