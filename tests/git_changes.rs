//! `--diff` and `--staged` on the changes a pull request or a commit really holds: files git
//! takes as binary, archives, revision arguments. Real git repositories in temp dirs; the
//! secrets are built at run time (`common::token`).

mod common;
use common::{sh, token, Repo, BIN};

/// The scanner as a refusal names it when no `scanner` on PATH is this binary (the suite
/// puts none there): its canonical path.
fn scanner() -> String {
    std::path::Path::new(BIN)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// A secret added to a file git does not diff as text (`-diff` in `.gitattributes`, a NUL
/// byte) or to an archive is still an added secret: git's "Binary files differ" gave no added
/// line, so none of them was scanned and the run passed with exit 0.
#[test]
fn diff_scans_files_git_takes_as_binary_and_archives() {
    let r = Repo::new();
    r.write(".gitattributes", "*.cfg -diff\n");
    r.write("app.cfg", "name = app\n");
    r.commit_all();
    r.write("app.cfg", format!("name = app\nkey = {}\n", token(1)));
    let mut bin = b"\x00\x01 header\n".to_vec();
    bin.extend_from_slice(format!("x={}\n", token(2)).as_bytes());
    r.write("blob.bin", &bin);
    r.write("inner.env", format!("T={}\n", token(3)));
    sh(&r.root, "gzip inner.env");
    r.git(&["add", "-A"]);
    let run = r.scan(&["scan", "--diff", "HEAD", "--format", "json"]);
    assert_eq!(
        run.expect(1).path_lines(),
        vec!["app.cfg:2", "inner.env.gz!inner.env:1"]
    );
    assert_eq!(
        run.summary_line("not scanned:"),
        Some("not scanned: 1 binary")
    );
    let run = r.scan(&["scan", "--diff", "HEAD", "--binary", "--format", "json"]);
    assert_eq!(
        run.expect(1).path_lines(),
        vec!["app.cfg:2", "blob.bin:2", "inner.env.gz!inner.env:1"]
    );
    // Committed, then one more line: only that line is added.
    r.commit_all();
    r.write(
        "app.cfg",
        format!("name = app\nkey = {}\nother = {}\n", token(1), token(4)),
    );
    let run = r.scan(&["scan", "--diff", "HEAD", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["app.cfg:3"]);
}

/// `--diff` compares the working tree with one revision. git also takes a range (`A..B`,
/// `A...B`, `A^!`) and then diffs its two ends, not the working tree that is scanned: a secret
/// the range added was counted as `diff-context` and the run exited 0. A BASE starting with
/// `-` was passed to git as an option (`--diff=-R` reversed the diff, exit 0). Each is now an
/// error that says what --diff takes.
#[test]
fn diff_base_must_be_one_revision() {
    let r = Repo::new();
    r.write("f.txt", "a\nb\n");
    r.commit_all();
    r.write("f.txt", format!("a\nb\nk = {}\n", token(5)));
    r.commit_all();
    r.write("f.txt", format!("x\ny\nz\na\nb\nk = {}\n", token(5)));
    r.commit_all();
    for base in [
        "HEAD~2..HEAD~1",
        "HEAD~2...HEAD~1",
        "HEAD~1^!",
        "-R",
        "nosuch",
    ] {
        let run = r.scan(&["scan", &format!("--diff={base}"), "--format", "json"]);
        assert_eq!(run.expect(2).stdout, "");
        assert_eq!(
            run.stderr,
            format!(
                "scanner: error: --diff: `{base}` is not a revision of this repository: --diff \
                 takes one, the base the working tree is compared with, not a range such as \
                 A..B (for a pull request: `--diff \"$(git merge-base origin/main HEAD)\"`)\n"
            )
        );
    }
    let run = r.scan(&["scan", "--diff", "HEAD~2", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["f.txt:6"]);
}

/// In a repository of SHA-256 object ids, `--staged` said `bad object id` and 64 hex digits,
/// as if the index were corrupt; it says, as `--history` does, that such repositories are not
/// supported.
#[test]
fn staged_in_a_sha256_repository_says_it_is_not_supported() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    common::git_in(&root, &["init", "-q", "--object-format=sha256"]);
    std::fs::write(root.join("a.txt"), format!("k = {}\n", token(6))).unwrap();
    common::git_in(&root, &["add", "a.txt"]);
    let run = common::Run::from_output(
        common::isolate(std::process::Command::new(common::BIN).current_dir(&root))
            .args(["scan", "--staged"])
            .output()
            .unwrap(),
    );
    assert_eq!(run.expect(2).stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "scanner: error: --staged: {}: SHA-256 repositories are not supported\n",
            root.display()
        )
    );
}

/// A UTF-16 file is transcoded when scanned from disk, but its staged blob (or a version of it
/// in the history) was skipped as binary: `scanner scan --staged` let the secret through with
/// exit 0 and only `not scanned: 1 binary` on stderr.
#[test]
fn staged_and_history_blobs_in_utf16_are_transcoded() {
    let utf16 = |text: &str, bom: bool| -> Vec<u8> {
        let mut out = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
        out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        out
    };
    let r = Repo::new();
    r.write(
        "notes.txt",
        utf16(&format!("one\ntwo\nkey = {}\n", token(7)), true),
    );
    r.write("nobom.txt", utf16(&format!("key = {}\n", token(8)), false));
    r.git(&["add", "-A"]);
    // The working tree differs from the index: the staged lines are reported.
    r.write("notes.txt", utf16("clean\n", true));
    let run = r.scan(&["scan", "--staged", "--format", "json"]);
    assert_eq!(
        run.expect(1).path_lines(),
        vec!["nobom.txt:1", "notes.txt:3"]
    );
    assert_eq!(run.summary_line("not scanned:"), None);
    r.commit("utf-16");
    let run = r.scan(&["scan", "--history", "--format", "json"]);
    assert_eq!(
        run.expect(1).path_lines(),
        vec!["nobom.txt:1", "notes.txt:3"]
    );
}

/// `-` is standard input in a plain scan; with `--staged` or `--diff` the PATH arguments are
/// pathspecs, so `echo TOKEN | scanner scan --staged -` matched no file, scanned nothing and
/// exited 0. It is an error saying how to scan standard input.
#[test]
fn stdin_with_staged_or_diff_is_an_error() {
    let r = Repo::new();
    r.write("a.txt", "a\n");
    r.commit_all();
    for (flag, args) in [
        ("--staged", &["scan", "--staged", "-"][..]),
        ("--diff", &["scan", "--diff", "HEAD", "a.txt", "-"][..]),
    ] {
        let mut child = common::isolate(std::process::Command::new(common::BIN).args(args))
            .current_dir(&r.root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        // The scanner may exit before reading it.
        let _ = stdin.write_all(format!("k = {}\n", token(9)).as_bytes());
        drop(stdin);
        let run = common::Run::from_output(child.wait_with_output().unwrap());
        assert_eq!(run.expect(2).stdout, "");
        assert_eq!(
            run.stderr,
            format!(
                "scanner: error: `-` (standard input) cannot be scanned with {flag}, whose PATH \
                 arguments name files in the repository: scan standard input on its own, \
                 `scanner scan -`\n"
            )
        );
    }
}

/// A bare repository with its work tree elsewhere (`GIT_DIR` and `GIT_WORK_TREE`, the way
/// dotfiles are often kept): git hands the hook that environment. `git diff --cached` honoured
/// it, but the staged blobs were read from the repository found from the work tree, none:
/// `warning: .env: not a git repository: ... (--history needs one)` and exit 2.
#[test]
fn staged_in_a_bare_repository_with_a_separate_work_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (dir, home) = (root.join("dotfiles.git"), root.join("home"));
    std::fs::create_dir(&home).unwrap();
    common::git_in(&root, &["init", "-q", "--bare", "dotfiles.git"]);
    std::fs::write(home.join(".env"), format!("T={}\n", token(10))).unwrap();
    let scan = |args: &[&str]| {
        common::Run::from_output(
            common::isolate(std::process::Command::new(common::BIN).current_dir(&home))
                .env("GIT_DIR", &dir)
                .env("GIT_WORK_TREE", &home)
                .args(args)
                .output()
                .unwrap(),
        )
    };
    common::git_ok(
        common::isolate(std::process::Command::new("git").current_dir(&home))
            .env("GIT_DIR", &dir)
            .env("GIT_WORK_TREE", &home)
            .args(["add", ".env"]),
    );
    let run = scan(&["scan", "--staged", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec![".env:1"]);
    assert_eq!(run.summary_line("not scanned:"), None);
}

/// `.scanner.toml` names a baseline that does not exist yet (`scanner baseline add` creates
/// it): a refused commit told the user to set `baseline` in .scanner.toml, which it already
/// set, instead of the command that adds to it.
#[test]
fn a_refusal_names_the_configured_baseline_before_it_exists() {
    let r = Repo::new();
    r.write(".scanner.toml", "baseline = \".scanner-baseline.json\"\n");
    r.write("app.py", format!("x = 1\nTOKEN = \"{}\"\n", token(11)));
    r.git(&["add", "-A"]);
    let run = r.scan(&["hook", "run"]);
    let explained: Vec<&str> = run
        .expect(1)
        .stderr
        .lines()
        .filter(|l| l.starts_with("  accept it:"))
        .collect();
    assert_eq!(
        explained,
        [format!(
            "  accept it:         `{} baseline add --staged app.py:2`, then `git add {}`",
            scanner(),
            r.path(".scanner-baseline.json").display()
        )]
    );
    r.scan(&["baseline", "add", "--staged", "app.py:2"])
        .expect(0);
    r.scan(&["hook", "run"]).expect(0);
}

/// The hook reports a staged line; `scanner baseline add` read the working tree's file, so
/// for a file staged with other content than the working tree's the command the refusal gave
/// failed (`no finding to add at app.py:3`) or, worse, recorded another line. The refusal
/// now gives `baseline add --staged`, which reads the staged content.
#[test]
fn a_refusal_accepts_the_staged_line_of_a_partially_staged_file() {
    let r = Repo::new();
    r.write(".scanner.toml", "baseline = \".scanner-baseline.json\"\n");
    r.write(
        "app.py",
        format!("x = 1\ny = 2\nTOKEN = \"{}\"\n", token(14)),
    );
    r.git(&["add", "-A"]);
    r.write("app.py", format!("TOKEN = \"{}\"\n", token(14)));
    let run = r.scan(&["hook", "run"]);
    let accept = run
        .expect(1)
        .stderr
        .lines()
        .find(|l| l.starts_with("  accept it:"))
        .unwrap()
        .to_string();
    let command = accept.split('`').nth(1).unwrap();
    assert_eq!(
        command,
        format!("{} baseline add --staged app.py:3", scanner())
    );
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    r.scan(&args).expect(0);
    r.scan(&["hook", "run"]).expect(0);
}

/// The commands a refused commit suggests are copied into a shell: a path with a space or a
/// quote was written bare (`git add my dir/it's.py`), which git takes as two paths and sh as
/// an unclosed quote. Such a path is now one quoted word, and the command works.
#[test]
fn a_refusal_quotes_the_paths_of_its_commands() {
    let r = Repo::new();
    r.write(".scanner.toml", "baseline = \"base line.json\"\n");
    r.write("my dir/it's.py", format!("TOKEN = \"{}\"\n", token(12)));
    r.git(&["add", "-A"]);
    let run = r.scan(&["hook", "run"]);
    let hints: Vec<&str> = run
        .expect(1)
        .stderr
        .lines()
        .filter(|l| l.starts_with("  "))
        .take(3)
        .collect();
    assert_eq!(
        hints,
        [
            "  remove it:         edit my dir/it's.py:1, then `git add 'my dir/it'\\''s.py'` \
             (and revoke it if it was real)"
                .to_string(),
            "  a false positive:  append a `scanner:allow` comment to my dir/it's.py:1, then \
             `git add 'my dir/it'\\''s.py'`"
                .to_string(),
            format!(
                "  accept it:         `{} baseline add --staged 'my dir/it'\\''s.py:1'`, \
                 then \
                 `git add '{}'`",
                scanner(),
                r.path("base line.json").display()
            ),
        ]
    );
    // The suggested command, as a shell runs it.
    let command = hints[2].split('`').nth(1).unwrap();
    sh(&r.root, command);
    r.scan(&["hook", "run"]).expect(0);
}

/// `--range`, `--since`, `--reflogs` and `--repos-from` are --history's; beside `--staged` or
/// `--diff` they were accepted and did nothing (`scanner scan --staged --range HEAD~3..`
/// scanned the whole index, exit 0), though alone each is refused for want of --history.
#[test]
fn history_only_flags_are_refused_beside_staged_and_diff() {
    let r = Repo::new();
    r.write("a.txt", "a\n");
    r.commit_all();
    for (args, said) in [
        (
            &["--staged", "--range", "HEAD"][..],
            "error: the argument '--staged' cannot be used with '--range <REVS>'",
        ),
        (
            &["--diff", "HEAD", "--since", "2020-01-01"][..],
            "error: the argument '--diff <BASE>' cannot be used with '--since <DATE>'",
        ),
        (
            &["--staged", "--reflogs"][..],
            "error: the argument '--staged' cannot be used with '--reflogs'",
        ),
        (
            &["--diff", "HEAD", "--repos-from", "list.txt"][..],
            "error: the argument '--diff <BASE>' cannot be used with '--repos-from <FILE>'",
        ),
    ] {
        let run = r.scan(&[&["scan"][..], args].concat());
        assert_eq!(run.expect(2).stdout, "");
        assert_eq!(run.stderr.lines().next(), Some(said), "{args:?}");
    }
}

/// An added line `++ b/other` is `+++ b/other` in the patch, which read as the header of a
/// file `other`: the hunks after it in the same file were taken as `other`'s, and a secret
/// added there was dropped as `diff-context` with exit 0.
#[test]
fn diff_an_added_line_that_looks_like_a_file_header() {
    let r = Repo::new();
    r.write("f.txt", "a\nb\nc\n");
    r.commit_all();
    r.write("f.txt", format!("++ b/decoy\nb\nk = {}\n", token(13)));
    let run = r.scan(&["scan", "--diff", "HEAD", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["f.txt:3"]);
    assert_eq!(run.summary_line("suppressed:"), None);
}

/// Peak RSS in KiB of `scanner ARGS` run in `dir` (Python's `getrusage(RUSAGE_CHILDREN)`),
/// and its exit status.
fn peak_rss_kib(dir: &std::path::Path, args: &[&str]) -> (u64, i32) {
    let out = common::isolate(&mut std::process::Command::new("python3"))
        .args([
            "-c",
            "import resource, subprocess, sys\n\
             rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, \
             stderr=subprocess.DEVNULL).returncode\n\
             print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)",
            common::BIN,
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    let (rss, rc) = out.trim().split_once(' ').unwrap();
    (rss.parse().unwrap(), rc.parse().unwrap())
}

/// A staged blob's size was not known (`git diff --cached --raw` lists none), so it was read
/// whole before `--max-filesize` skipped it, and held whole however large (never streamed as
/// a large history blob is): a 36 MB staged file cost 36 MB of memory to be skipped. Its
/// header now gives its size first.
#[test]
fn a_large_staged_blob_is_sized_before_it_is_read() {
    let r = Repo::new();
    r.write("small.txt", "x\n");
    r.git(&["add", "small.txt"]);
    let (base, rc) = peak_rss_kib(&r.root, &["scan", "--staged"]);
    assert_eq!(rc, 0);
    r.write("big.txt", "0123456789abcdef\n".repeat(2 << 20));
    r.git(&["add", "big.txt"]);
    let run = r.scan(&["scan", "--staged", "--max-filesize", "1M"]);
    assert_eq!(
        run.expect(0).summary_line("not scanned:"),
        Some("not scanned: 1 too large")
    );
    let (rss, rc) = peak_rss_kib(&r.root, &["scan", "--staged", "--max-filesize", "1M"]);
    assert_eq!(rc, 0);
    assert!(rss < base + 16 * 1024, "{rss} KiB against {base} KiB");
    // Scanned, it is streamed: never held whole either.
    let (rss, rc) = peak_rss_kib(&r.root, &["scan", "--staged"]);
    assert_eq!(rc, 0);
    assert!(rss < base + 32 * 1024, "{rss} KiB against {base} KiB");
}

impl Repo {
    fn commit_all(&self) {
        self.git(&["add", "-A"]);
        self.commit("all");
    }
}
