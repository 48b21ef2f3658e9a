//! `scanner hook install [--force]`: a git pre-commit hook running `scanner hook run`, which is
//! `scanner scan --staged` (so the `.scanner.toml` it finds applies, its `baseline` included)
//! followed, when a finding refuses the commit, by [`explain_refusal`]: one sentence saying so
//! and one command per way out.
//!
//! The hook goes where git looks for it: `git rev-parse --git-path hooks/pre-commit`, which
//! honours `core.hooksPath`, worktrees and `GIT_DIR`. It is a POSIX shell script that calls the
//! scanner that installed it, by absolute path, so the hook runs the same binary whatever the
//! `PATH` of the committing shell or GUI; when that file no longer exists (moved, rebuilt
//! elsewhere) it falls back to `scanner` on `PATH`.
//!
//! The script carries [`MARKER`]. Installing over a hook with the marker rewrites it (so
//! installing twice is harmless, and re-installing updates the binary path); a hook without it
//! belongs to someone else and is kept unless `--force`, which first copies it to
//! `pre-commit.scanner-backup` (or `.1`, `.2`...: an earlier backup is never overwritten).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};

use crate::args::HookInstallArgs;
use crate::messages::{self, escape_path};

/// The line that marks a hook as ours.
pub const MARKER: &str = "# scanner-pre-commit-hook (written by `scanner hook install`)";

pub fn install(args: &HookInstallArgs) -> anyhow::Result<ExitCode> {
    let cwd = crate::paths::current_dir()?;
    let exe = std::env::current_exe().ok();
    let (path, replaced) = install_in(&cwd, exe.as_deref(), args.force)?;
    messages::info(&match replaced {
        Replaced::Nothing => format!("installed the pre-commit hook {}", escape_path(&path)),
        Replaced::Ours => format!("updated the pre-commit hook {}", escape_path(&path)),
        Replaced::Foreign(backup) => format!(
            "replaced the pre-commit hook {} (the previous one is in {})",
            escape_path(&path),
            escape_path(&backup)
        ),
    });
    Ok(ExitCode::SUCCESS)
}

/// `scanner hook run`, what the installed hook runs: the scan of these arguments, which the
/// caller runs (`scan::run`, which calls back [`explain_refusal`]).
pub fn run_args() -> crate::args::ScanArgs {
    let mut args = crate::args::ScanArgs::from_flags(&["--staged"]);
    args.explain_refusal = true;
    args
}

/// After the findings of a refused commit: the refusal in one sentence, then the ways out, each
/// as a command, for the first finding (`first`, its path relative to the repository root,
/// where git runs the hook). `baseline` is the baseline in effect, if any.
pub fn explain_refusal(findings: u64, first: Option<&(PathBuf, u32)>, baseline: Option<&Path>) {
    let what = if findings == 1 {
        "a secret".to_string()
    } else {
        format!("{findings} secrets")
    };
    crate::messages::info(&format!(
        "commit refused: the staged changes hold {what} (listed above). Ways out, run from \
         the repository root:"
    ));
    let Some((path, line)) = first else { return };
    let p = escape_path(path);
    // In the commands, each path one shell word (`git add 'my file.py'`); a member of an
    // archive (`bundle.zip!inner.env`) is committed as its archive.
    let staged = crate::paths::archive_of(path).unwrap_or(path);
    let (arg, loc) = (
        shell_word(&escape_path(staged)),
        shell_word(&format!("{p}:{line}")),
    );
    let hint = crate::messages::hint;
    hint(&format!(
        "remove it:         edit {p}:{line}, then `git add {arg}` (and revoke it if it was real)"
    ));
    hint(&format!(
        "a false positive:  append a `scanner:allow` comment to {p}:{line}, then `git add {arg}`"
    ));
    // `git commit -a` and `git commit PATH` commit the working tree's content through a
    // temporary index, dropped with the refused commit: the real index that `--staged` reads
    // never held the change, the working tree does.
    let scanner = scanner_command();
    let add = match temporary_index() {
        true => format!("{scanner} baseline add"),
        false => format!("{scanner} baseline add --staged"),
    };
    match baseline {
        Some(b) => hint(&format!(
            "accept it:         `{add} {loc}`, then `git add {}`",
            shell_word(&escape_path(b))
        )),
        None => hint(&format!(
            "accept it:         set `baseline = \".scanner-baseline.json\"` in {}, then \
             `{add} {loc}` and `git add` both files",
            crate::config::FILE_NAME
        )),
    }
    hint(
        "skip the check:    `git commit --no-verify` (the secret then enters the history, \
         and every clone and push carries it)",
    );
}

/// The scanner as the ways out name it, so that each command runs as printed: `scanner` when
/// the first `scanner` on `PATH` is this binary, else this binary's absolute path. Under the
/// pre-commit framework (`PRE_COMMIT` set) `PATH` is the hook's, not the shell's: its
/// `language: rust` build is on the hook's `PATH` only.
fn scanner_command() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return "scanner".into();
    };
    let exe = exe.canonicalize().unwrap_or(exe);
    let first_on_path = || {
        let path = std::env::var_os("PATH")?;
        let found = std::env::split_paths(&path)
            .map(|dir| dir.join("scanner"))
            .find(|p| p.is_file())?;
        found.canonicalize().ok()
    };
    if std::env::var_os("PRE_COMMIT").is_none() && first_on_path().as_ref() == Some(&exe) {
        return "scanner".into();
    }
    shell_word(&escape_path(&exe))
}

/// Whether git runs the hook on a temporary index: `index.lock` for `git commit -a` (or `-i`,
/// `-p`), `next-index-PID.lock` for `git commit PATH`, where a plain commit names the
/// repository's own `index`.
fn temporary_index() -> bool {
    std::env::var_os("GIT_INDEX_FILE")
        .is_some_and(|f| Path::new(&f).extension().is_some_and(|e| e == "lock"))
}

/// Copies the hook at `path` (its bytes `old`, its mode) to `pre-commit.scanner-backup`, or
/// `.1`, `.2`... when that is taken: a second `--force` never overwrites the first backup.
fn back_up(path: &Path, old: &[u8]) -> anyhow::Result<PathBuf> {
    let mut n = 0u32;
    loop {
        let name = match n {
            0 => "pre-commit.scanner-backup".to_string(),
            n => format!("pre-commit.scanner-backup.{n}"),
        };
        let backup = path.with_file_name(name);
        let failed = |e| {
            anyhow::Error::new(e).context(format!(
                "cannot back up {} to {}",
                escape_path(path),
                escape_path(&backup)
            ))
        };
        let mut f = match std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&backup)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {
                n += 1;
                continue;
            }
            Err(e) => return Err(failed(e)),
        };
        f.write_all(old).map_err(failed)?;
        if let Ok(md) = std::fs::metadata(path) {
            f.set_permissions(md.permissions()).map_err(failed)?;
        }
        return Ok(backup);
    }
}

/// What was at the hook's path before.
#[derive(Debug, PartialEq)]
pub enum Replaced {
    Nothing,
    Ours,
    /// Someone else's hook, copied to this backup.
    Foreign(PathBuf),
}

/// Installs the hook for the repository containing `cwd`; returns its path.
pub fn install_in(
    cwd: &Path,
    exe: Option<&Path>,
    force: bool,
) -> anyhow::Result<(PathBuf, Replaced)> {
    let out = std::process::Command::new("git")
        .current_dir(cwd)
        .args(["rev-parse", "--git-path", "hooks/pre-commit"])
        .output()
        .context("cannot run `git rev-parse --git-path` (is git installed?)")?;
    if !out.status.success() {
        bail!(
            "cannot find the git hooks directory from {}: {}",
            escape_path(cwd),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut raw = out.stdout;
    while raw.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        raw.pop();
    }
    // Relative to `cwd` unless core.hooksPath is absolute.
    let path = cwd.join(crate::input::git::path_from_bytes(raw));

    let mut replaced = Replaced::Nothing;
    match std::fs::read(&path) {
        Ok(old) => {
            let ours = old.split(|b| *b == b'\n').any(|l| l == MARKER.as_bytes());
            if ours {
                replaced = Replaced::Ours;
            } else if !force {
                bail!(
                    "refusing to replace {}: it was not written by scanner \
                     (add `scanner scan --staged || exit 1` to it, or use --force to replace it)",
                    escape_path(&path)
                );
            } else {
                replaced = Replaced::Foreign(back_up(&path, &old)?);
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", escape_path(&path))),
    }

    let dir = path.parent().expect("hooks/pre-commit has a parent");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", escape_path(dir)))?;
    let script = script(exe);
    let tmp = dir.join(format!(".pre-commit.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&script)?;
        make_executable(&f)?;
        drop(f);
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", escape_path(&path)));
    }
    Ok((path, replaced))
}

#[cfg(unix)]
fn make_executable(f: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn make_executable(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// `bytes` in single quotes for sh, verbatim but for `'`, written `'\''`.
fn sh_quote(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'\'');
    for &b in bytes {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
}

/// `s` as one word of a shell command to copy: as it is when it holds nothing sh treats
/// specially, else [`sh_quote`]d.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:@%+=,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    let mut out = Vec::new();
    sh_quote(s.as_bytes(), &mut out);
    String::from_utf8(out).expect("quoting UTF-8 keeps it UTF-8")
}

/// The hook script; `exe` is quoted for sh (its bytes verbatim, `'` escaped).
fn script(exe: Option<&Path>) -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(b"#!/bin/sh\n");
    s.extend_from_slice(MARKER.as_bytes());
    s.extend_from_slice(
        b"\n# Scans exactly what is staged (`scanner scan --staged`, with .scanner.toml and its\n\
# baseline); a finding blocks the commit and the hook says the ways out.\n\
# Skip once with `git commit --no-verify`. See docs/precommit.md.\n",
    );
    s.extend_from_slice(b"scanner=");
    let exe = exe.map(crate::input::git::path_bytes).unwrap_or_default();
    sh_quote(&exe, &mut s);
    s.extend_from_slice(
        b"\n\
if [ ! -x \"$scanner\" ]; then\n\
    if ! command -v scanner >/dev/null 2>&1; then\n\
        echo 'scanner: the pre-commit hook cannot run: the scanner it was installed with \
('\"$scanner\"') is gone, and none is on PATH: install it and run `scanner hook install` \
again, or skip the check once with `git commit --no-verify`' >&2\n\
        exit 1\n\
    fi\n\
    scanner=scanner\n\
fi\n\
exec \"$scanner\" hook run\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::input::git::tests::run_git as git;

    #[test]
    fn script_quotes_the_binary_path() {
        let s = String::from_utf8(script(Some(Path::new("/opt/it's here/scanner")))).unwrap();
        assert!(s.contains("scanner='/opt/it'\\''s here/scanner'\n"), "{s}");
        assert!(s.lines().any(|l| l == MARKER));
        assert!(s.ends_with("exec \"$scanner\" hook run\n"));
    }

    #[test]
    fn install_is_idempotent_refuses_foreign_hooks_and_honours_hooks_path() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        git(d, &["init", "-q"]);
        std::fs::create_dir(d.join("sub")).unwrap();
        let exe = Path::new("/bin/scanner");
        let (path, r) = install_in(&d.join("sub"), Some(exe), false).unwrap();
        assert_eq!(
            path.canonicalize().unwrap(),
            d.join(".git/hooks/pre-commit").canonicalize().unwrap()
        );
        assert_eq!(r, Replaced::Nothing);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o755
            );
        }
        assert_eq!(install_in(d, Some(exe), false).unwrap().1, Replaced::Ours);

        std::fs::write(&path, "#!/bin/sh\necho mine\n").unwrap();
        let e = install_in(d, Some(exe), false).unwrap_err().to_string();
        assert!(
            e.contains("refusing to replace") && e.contains("pre-commit"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "#!/bin/sh\necho mine\n"
        );
        let (_, r) = install_in(d, Some(exe), true).unwrap();
        let Replaced::Foreign(backup) = r else {
            panic!("{r:?}")
        };
        assert_eq!(
            std::fs::read_to_string(backup).unwrap(),
            "#!/bin/sh\necho mine\n"
        );

        git(d, &["config", "core.hooksPath", "my-hooks"]);
        let (path, r) = install_in(&d.join("sub"), Some(exe), false).unwrap();
        assert_eq!(r, Replaced::Nothing);
        assert_eq!(
            path.canonicalize().unwrap(),
            d.join("my-hooks/pre-commit").canonicalize().unwrap()
        );
    }
}
