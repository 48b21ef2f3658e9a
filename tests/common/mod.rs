//! Helpers for the integration tests: a temp dir to build trees in, the real
//! `scanner` binary, and findings parsed back from `--format json`.

#![allow(dead_code)] // each test binary uses a different subset

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde::Deserialize;

/// The rule the generated tokens trigger.
pub const RULE: &str = "github-classic-pat";

/// A GitHub classic token built at run time (the repository never holds
/// one); `seed` varies the body so files can hold distinct secrets. Its last
/// six characters are the CRC-32 checksum real tokens carry, so findings
/// have high confidence as a real token's would.
pub fn token(seed: u32) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut x = 0x2545_F491u32 ^ seed.wrapping_mul(0x9E37_79B9);
    let body: String = (0..30)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ALPHABET[(x % ALPHABET.len() as u32) as usize] as char
        })
        .collect();
    let check = scanner_engine::base62_6(scanner_engine::crc32(body.as_bytes()));
    ["gh", "p_", &body, std::str::from_utf8(&check).unwrap()].concat()
}

/// A temp dir with helpers to write files into it.
pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(rel)
    }
    pub fn write(&self, rel: impl AsRef<Path>, data: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, data).unwrap();
        p
    }
    /// Runs `scanner ARGS` in this dir.
    pub fn run(&self, args: &[&str]) -> Run {
        run_in(self.path(), args)
    }
}

/// A finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from_output(out: Output) -> Run {
        Run {
            code: out.status.code().expect("killed by a signal"),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
    /// Asserts the exit status (printing stderr when it differs).
    #[track_caller]
    pub fn expect(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit status\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    /// Parses stdout as a `--format json` report.
    pub fn findings(&self) -> Vec<Finding> {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{}", self.stdout))
    }
    /// `path:line` of every finding, sorted; every finding must be of [`RULE`].
    pub fn path_lines(&self) -> Vec<String> {
        let mut locs: Vec<String> = self
            .findings()
            .iter()
            .map(|f| {
                assert_eq!(f.rule_id, RULE, "{f:?}");
                format!("{}:{}", f.path, f.line)
            })
            .collect();
        locs.sort();
        locs
    }
    /// `path:line:col:end_line:end_col` of every finding.
    pub fn locations(&self) -> Vec<String> {
        self.findings()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}:{}:{}:{}",
                    f.path, f.line, f.column, f.end_line, f.end_column
                )
            })
            .collect()
    }
    /// `path:line:col:end_col rule` of every finding, in report order (a rule's example
    /// found where expected, by the rule expected).
    pub fn found(&self) -> Vec<String> {
        self.findings()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}:{}:{} {}",
                    f.path, f.line, f.column, f.end_column, f.rule_id
                )
            })
            .collect()
    }
    /// The summary line starting with `prefix` (e.g. "not scanned:").
    pub fn summary_line(&self, prefix: &str) -> Option<&str> {
        self.stderr.lines().find(|l| l.starts_with(prefix))
    }
}

/// The scanner binary, run in `dir`, away from the user's git configuration
/// and global excludes (`HOME` and `XDG_CONFIG_HOME` are `dir`).
pub fn scanner_in(dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(dir)
        .env_remove("NO_COLOR")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir);
    c
}

pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    Run::from_output(scanner_in(dir).args(args).output().unwrap())
}

/// The fields the CLI tests check (the output tests check every field).
#[derive(Debug, Deserialize, PartialEq)]
pub struct Finding {
    pub rule_id: String,
    pub path: String,
    pub path_bytes: Option<String>,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub offset: u64,
    pub end_offset: u64,
    pub fingerprint: String,
    pub commit: Option<Commit>,
}

/// The `commit` object of a `--history` finding.
#[derive(Debug, Deserialize, PartialEq, Clone)]
pub struct Commit {
    pub id: String,
    pub author_name: String,
    pub author_email: String,
    pub author_date: String,
    pub summary: String,
}

pub const BIN: &str = env!("CARGO_BIN_EXE_scanner");
/// A git repository in a temp dir, with git isolated from the user's configuration.
pub struct Repo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
}

/// Runs `git ARGS` in `dir`, isolated, and asserts it succeeded.
pub fn git_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) {
    git_ok(isolate(Command::new("git").current_dir(dir).args(args)));
}

/// Runs a git command (already isolated) and asserts it succeeded, showing
/// its stderr when it did not.
pub fn git_ok(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn isolate(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        // The suite may itself run from a git hook.
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .stdin(Stdio::null())
}

impl Repo {
    pub fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let repo = Repo { _tmp: tmp, root };
        repo.git(&["-c", "init.defaultBranch=main", "init", "-q"]);
        repo
    }

    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: impl AsRef<Path>, text: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn git_out<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        isolate(Command::new("git").current_dir(&self.root).args(args))
            .output()
            .unwrap()
    }

    pub fn git<S: AsRef<OsStr>>(&self, args: &[S]) {
        git_in(&self.root, args);
    }

    pub fn commit(&self, msg: &str) {
        self.git(&["commit", "-q", "--no-verify", "-m", msg]);
    }

    /// Runs the scanner in `rel_cwd` (relative to the root).
    pub fn scan_in(&self, rel_cwd: &str, args: &[&str]) -> Run {
        Run::from_output(
            isolate(Command::new(BIN).current_dir(self.path(rel_cwd)).args(args))
                .output()
                .unwrap(),
        )
    }

    pub fn scan(&self, args: &[&str]) -> Run {
        self.scan_in(".", args)
    }
}

/// Commits what is staged in `r`, authored by Ada Lovelace <ada@example.com>, authored and
/// committed at `date`.
pub fn commit_at(r: &Repo, msg: &str, date: &str) {
    git_ok(
        isolate(Command::new("git").current_dir(&r.root).args([
            "commit",
            "-q",
            "--no-verify",
            "-m",
            msg,
        ]))
        .env("GIT_AUTHOR_NAME", "Ada Lovelace")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date),
    );
}

// ------------------------------------------------------------ fixture trees

/// An AWS access key ID (`AKIA` and 16 base-32 characters) built at run
/// time, like [`token`]: `seed` varies it.
/// What `openssl ARGS` writes on stdout: a key it generates (PEM). openssl must be installed.
pub fn openssl(args: &[&str]) -> String {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl must be installed to run this test");
    assert!(out.status.success(), "openssl {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

pub fn aws_key_id(seed: u32) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut x = 0x9E37_79B9u32 ^ seed.wrapping_mul(0x85EB_CA6B).wrapping_add(1);
    let body: String = (0..16)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ALPHABET[(x % 32) as usize] as char
        })
        .collect();
    format!("AKIA{body}")
}

/// The value a `{{KIND:n}}` placeholder of a fixture file stands for, or
/// `None` for an unknown kind (which [`expand_placeholders`] rejects).
pub fn placeholder_value(kind: &str, seed: u32) -> Option<String> {
    use base64::Engine as _;
    Some(match kind {
        "TOKEN" => token(seed),
        "TOKEN64" => base64::engine::general_purpose::STANDARD.encode(token(seed)),
        "AWS" => aws_key_id(seed),
        _ => return None,
    })
}

/// Replaces every `{{KIND:n}}` in `data` by [`placeholder_value`]. Works on
/// bytes: fixture files need not be UTF-8. Panics, naming `origin`, on a
/// malformed or unknown placeholder so that a typo cannot pass silently as
/// an undetected "secret".
pub fn expand_placeholders(data: &[u8], origin: &Path) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Some(at) = rest.windows(2).position(|w| w == b"{{") {
        out.extend_from_slice(&rest[..at]);
        let tail = &rest[at + 2..];
        let end = tail
            .windows(2)
            .position(|w| w == b"}}")
            .unwrap_or_else(|| panic!("{}: unclosed `{{{{`", origin.display()));
        let inner = std::str::from_utf8(&tail[..end]).unwrap_or("");
        let value = inner
            .split_once(':')
            .and_then(|(kind, n)| placeholder_value(kind, n.parse().ok()?))
            .unwrap_or_else(|| panic!("{}: bad placeholder `{{{{{inner}}}}}`", origin.display()));
        out.extend_from_slice(value.as_bytes());
        rest = &tail[end + 2..];
    }
    out.extend_from_slice(rest);
    out
}

/// Copies the fixture tree `src` into `dst` the way `testdata/README.md`
/// describes: placeholders expanded, a leading `dot-` in a name becomes `.`
/// (a real `.gitignore` would apply to this repository itself), and a file
/// whose name ends in `.utf16le` is written as UTF-16LE with a BOM under the
/// name without that suffix (git and editors treat UTF-16 as binary).
pub fn expand_fixture(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    let mut entries: Vec<_> = fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for from in entries {
        let name = from
            .file_name()
            .unwrap()
            .to_str()
            .expect("UTF-8 fixture name");
        let name = match name.strip_prefix("dot-") {
            Some(rest) => format!(".{rest}"),
            None => name.to_owned(),
        };
        if from.is_dir() {
            expand_fixture(&from, &dst.join(&name));
            continue;
        }
        let data = expand_placeholders(&fs::read(&from).unwrap(), &from);
        match name.strip_suffix(".utf16le") {
            Some(stem) => {
                let text = String::from_utf8(data)
                    .unwrap_or_else(|_| panic!("{}: not UTF-8", from.display()));
                let mut bytes = vec![0xFF, 0xFE];
                bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
                fs::write(dst.join(stem), bytes).unwrap();
            }
            None => fs::write(dst.join(&name), data).unwrap(),
        }
    }
}

// ------------------------------------------------------------ axis harness

/// The settings [`run_axes`] runs a scan under: thread counts, small read
/// chunks (so matches straddle chunk boundaries) and forced splitting of
/// any file over 16 KiB into 4 KiB ranges scanned in parallel.
pub const AXES: &[(&str, &[&str])] = &[
    ("threads=1", &["--threads", "1"]),
    ("threads=4", &["--threads", "4"]),
    // More workers than this machine's cores: idle workers sleep and wake.
    ("threads=16", &["--threads", "16"]),
    ("chunk=4K", &["--threads", "2", "--chunk-size", "4096"]),
    (
        "split=16K/4K",
        &[
            "--threads",
            "3",
            "--split-threshold",
            "16384",
            "--split-grain",
            "4096",
        ],
    ),
];

/// Runs `scanner ARGS` in `dir` once per entry of [`AXES`] (its flags after
/// `args`) and asserts every run has the same exit status and byte-identical
/// stdout: how the work is cut up must never change the report. Returns the
/// first run.
#[track_caller]
pub fn run_axes(dir: &Path, args: &[&str]) -> Run {
    let mut first: Option<(&str, Run)> = None;
    for (name, extra) in AXES {
        let all: Vec<&str> = args.iter().chain(extra.iter()).copied().collect();
        let run = run_in(dir, &all);
        match &first {
            None => first = Some((name, run)),
            Some((first_name, f)) => {
                assert_eq!(
                    (f.code, &f.stdout),
                    (run.code, &run.stdout),
                    "axis {name} differs from axis {first_name} for {args:?}\n\
                     stderr ({first_name}):\n{}\nstderr ({name}):\n{}",
                    f.stderr,
                    run.stderr
                );
            }
        }
    }
    first.expect("AXES is not empty").1
}

/// A scanner process held still (SIGSTOP) while it reads `path` front to back: returns once
/// the kernel's read position of its descriptor for `path` is past `from` bytes, with the
/// process stopped, and gives that position. Panics if the read got past `before` first (the
/// file was read too fast to be caught mid-way) or never started within a minute. Resume it
/// with [`signal`]`(child, "-CONT")`.
#[cfg(target_os = "linux")]
pub fn stop_mid_read(child: &std::process::Child, path: &Path, from: u64, before: u64) -> u64 {
    let pid = child.id();
    let position = || -> Option<u64> {
        for fd in fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
            if fs::read_link(fd.path()).ok()? == path {
                let fd = fd.file_name();
                let info = fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.to_str()?));
                let info = info.ok()?;
                let pos = info.lines().find_map(|l| l.strip_prefix("pos:"))?;
                return pos.trim().parse().ok();
            }
        }
        None
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the scanner never read {} past {from} bytes",
            path.display()
        );
        if let Some(pos) = position().filter(|&p| p >= from) {
            signal(child, "-STOP");
            // Stopped: the position no longer moves.
            match position() {
                Some(pos) if pos < before => return pos,
                _ => panic!("read past {before} bytes (at {pos}) before it could be stopped"),
            }
        }
    }
}

/// Stops `child` (SIGSTOP) once it has read at least `from` bytes since it opened `path`, by
/// its I/O counter (`rchar` of `/proc/PID/io`, which counts positional reads too: a split
/// file's ranges never move the descriptor's position that [`stop_mid_read`] watches), and
/// gives that count. Panics if it had read `before` bytes or more by then, or never opened
/// `path` within a minute. Resume it with [`signal`]`(child, "-CONT")`.
#[cfg(target_os = "linux")]
pub fn stop_after_reading(child: &std::process::Child, path: &Path, from: u64, before: u64) -> u64 {
    let pid = child.id();
    let opened = || -> bool {
        fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|fds| {
                fds.flatten()
                    .any(|fd| fs::read_link(fd.path()).is_ok_and(|l| l == path))
            })
            .unwrap_or(false)
    };
    let rchar = || -> u64 {
        let io = fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
        let n = io.lines().find_map(|l| l.strip_prefix("rchar:"));
        n.and_then(|n| n.trim().parse().ok()).unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !opened() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never opened",
            path.display()
        );
    }
    let base = rchar();
    while rchar() - base < from {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never read",
            path.display()
        );
    }
    signal(child, "-STOP");
    let read = rchar() - base;
    assert!(
        read < before,
        "read {read} bytes (past {before}) before it could be stopped"
    );
    read
}

/// The signals a test sends to the scanner: SIGINT and SIGTERM (exit 130, 143), and SIGHUP
/// (129) unless this process ignores it (run under `nohup`): the scanner then inherits that,
/// and rightly keeps ignoring it.
pub fn stopping_signals() -> Vec<(&'static str, i32)> {
    let hup_ignored = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let mask = s.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|mask| mask & 1 != 0);
    let mut v = vec![("-INT", 130), ("-TERM", 143)];
    if !hup_ignored {
        v.push(("-HUP", 129));
    }
    v
}

/// Sends `sig` (`-STOP`, `-CONT`, `-INT`...) to `child` with kill(1).
pub fn signal(child: &std::process::Child, sig: &str) {
    let pid = child.id().to_string();
    let ok = Command::new("kill").args([sig, &pid]).status().unwrap();
    assert!(ok.success(), "kill {sig} {pid}");
}

// ---------------------------------------------------------------- hostile inputs
// (generators shared by tests/archives.rs and the sweep in tests/hostile.rs)

pub fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `s.tgz`: 10 MB of spaces (10 KB compressed), then `s.env` with a token.
pub fn spaces_then_a_token(t: &Tree) {
    t.write("s.env", format!("T={}\n", token(7)));
    sh(
        t.path(),
        "head -c 10000000 /dev/zero | tr '\\0' ' ' > spaces.txt \
         && tar czf s.tgz spaces.txt s.env && rm spaces.txt s.env",
    );
    assert!(fs::metadata(t.join("s.tgz")).unwrap().len() < 20_000);
}

/// Python writing `NAME` holding `n` tiny stored members, the last `s.env`
/// with a token.
pub fn many_members(t: &Tree, name: &str, n: u32) {
    let py = format!(
        "import zipfile\n\
         with zipfile.ZipFile('{name}', 'w') as z:\n\
         \x20   for i in range({}): z.writestr('m%d' % i, '')\n\
         \x20   z.writestr('s.env', 'T={}\\n')\n",
        n - 1,
        token(8)
    );
    python3(t, &["-c".as_ref(), py.as_ref()]);
}

/// Runs `python3 ARGS` in the tree; it must succeed.
pub fn python3(t: &Tree, args: &[&std::ffi::OsStr]) {
    let out = Command::new("python3")
        .args(args)
        .current_dir(t.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `tests/hostile/SCRIPT ARGS` in the tree.
pub fn hostile(t: &Tree, script: &str, args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile")
        .join(script);
    let mut all = vec![script.as_os_str()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    python3(t, &all);
}
