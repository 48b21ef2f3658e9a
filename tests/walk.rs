//! The walk split among the workers (`pipeline/dirs.rs`) against the walk on
//! the producer thread (`--serial-walk`, and `--threads 1`): same report,
//! byte for byte, and the same skip counts.

mod common;

use std::fs;
use std::path::Path;

use common::*;

fn secret(seed: u32) -> String {
    format!("T={}\n", token(seed))
}

/// The three ways to walk: one worker (serial), sixteen with the walk split
/// among them, sixteen with the walk on the producer thread.
const WALKS: [&[&str]; 3] = [
    &["--threads", "1"],
    &["--threads", "16"],
    &["--threads", "16", "--serial-walk"],
];

/// Runs `args` once per entry of [`WALKS`] in `dir`; asserts the same exit
/// status, byte-identical stdout, and the same `--stats-json` files, skip
/// counts and queued items. Returns the first run and its stats.
fn same_every_walk(dir: &Path, args: &[&str]) -> (Run, serde_json::Value) {
    let stats = tempfile::tempdir().unwrap();
    let mut first: Option<(Run, serde_json::Value)> = None;
    for (i, walk) in WALKS.iter().enumerate() {
        let file = stats.path().join(format!("{i}.json"));
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(walk);
        all.extend_from_slice(&["--stats-json", file.to_str().unwrap()]);
        let run = run_in(dir, &all);
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
        // Walked by the workers, directories and runs of files are tasks;
        // on the producer, every file is one (no file here is split, and
        // no archive spawns members).
        let tasks = &v["scheduler"]["tasks"];
        let ran: u64 = ["injector", "local", "stolen"]
            .iter()
            .map(|k| tasks[k].as_u64().unwrap())
            .sum();
        let split = i == 1;
        assert_eq!(
            ran == v["producer"]["items"].as_u64().unwrap(),
            !split,
            "{walk:?}: {ran} tasks for {} items",
            v["producer"]["items"]
        );
        let counted = |v: &serde_json::Value| {
            (
                v["files"].clone(),
                v["skipped"].clone(),
                v["skipped_total"].clone(),
                v["producer"]["items"].clone(),
            )
        };
        match &first {
            None => first = Some((run, v)),
            Some((f, fv)) => {
                assert_eq!(
                    (f.code, &f.stdout),
                    (run.code, &run.stdout),
                    "{walk:?} differs from {:?} for {args:?}\nstderr:\n{}\nstderr {walk:?}:\n{}",
                    WALKS[0],
                    f.stderr,
                    run.stderr
                );
                assert_eq!(counted(fv), counted(&v), "{walk:?} for {args:?}");
            }
        }
    }
    first.unwrap()
}

/// Which files of [`generated_tree`]'s bulk part survive its rules.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Fate {
    Kept,
    Ignored,
    Excluded,
}

/// Writes a tree of 450-odd files over deep and wide directories, each
/// file but the ignore files holding a distinct secret, with nested ignore
/// files and excludes (`--exclude '*.tmp' --exclude w3/`); returns the
/// expected (findings, ignored, excluded), counted here from the rules as
/// written, not by the scanner.
///
/// - the bulk: `w{0..6}/x{0..5}/y{0..3}/f{i}.{txt,log,gen,tmp}`, one of
///   each extension per directory, under
///   - `.gitignore`: `*.log`, `build/`, `!keep.log`;
///   - `w*/.gitignore`: `*.gen`, which `w0/.ignore`'s `!*.gen` overrides
///     (`.ignore` ranks above `.gitignore`);
///   - `w1/x1/.scannerignore`: `!*.log` (re-includes what the root's
///     `.gitignore` drops) and `*.txt`;
///   - `w2/x2/y2/.gitignore`: `!*.log` (the deepest `.gitignore` with a
///     match decides);
///   - `w3/` excluded whole (one entry), `*.tmp` excluded each;
/// - the root's `.scannerignore`: `!forced.log`, `secret-skip.txt`;
/// - `.git/info/exclude` (a real `git init`): `by-info.txt`;
/// - `w5/build/`, an ignored directory of 12 files (one entry);
/// - `deep/d0/../d29/l{k}.txt`, a `.gitignore` of `*.txt` in `d20`;
/// - hidden files: `.env`, `w0/.hidden/h.txt`.
fn generated_tree(t: &Tree) -> (usize, u64, u64) {
    git_in(t.path(), &["init", "-q"]);
    let mut seed = 0u32;
    let mut planted = |t: &Tree, path: &str| {
        seed += 1;
        t.write(path, format!("line one\n{}", secret(seed)));
    };
    t.write(".gitignore", "*.log\nbuild/\n!keep.log\n");
    t.write(".scannerignore", "!forced.log\nsecret-skip.txt\n");
    t.write(".git/info/exclude", "by-info.txt\n");
    for w in 0..6 {
        t.write(format!("w{w}/.gitignore"), "*.gen\n");
    }
    t.write("w0/.ignore", "!*.gen\n");
    t.write("w1/x1/.scannerignore", "!*.log\n*.txt\n");
    t.write("w2/x2/y2/.gitignore", "!*.log\n");
    let (mut kept, mut ignored, mut excluded) = (0, 0, 1); // w3/
    for i in 0..360u32 {
        let (w, x, y) = (i % 6, (i / 6) % 5, (i / 30) % 3);
        let ext = ["txt", "log", "gen", "tmp"][(i / 90) as usize];
        planted(t, &format!("w{w}/x{x}/y{y}/f{i}.{ext}"));
        let fate = match ext {
            _ if w == 3 => continue,
            "txt" if (w, x) == (1, 1) => Fate::Ignored,
            "txt" => Fate::Kept,
            "log" if (w, x) == (1, 1) || (w, x, y) == (2, 2, 2) => Fate::Kept,
            "log" => Fate::Ignored,
            "gen" if w == 0 => Fate::Kept,
            "gen" => Fate::Ignored,
            _ => Fate::Excluded,
        };
        match fate {
            Fate::Kept => kept += 1,
            Fate::Ignored => ignored += 1,
            Fate::Excluded => excluded += 1,
        }
    }
    assert_eq!((kept, ignored, excluded), (91, 134, 76));
    for kept_file in ["keep.log", "forced.log", ".env", "w0/.hidden/h.txt"] {
        planted(t, kept_file);
        kept += 1;
    }
    for ignored_file in ["a.log", "secret-skip.txt", "by-info.txt"] {
        planted(t, ignored_file);
        ignored += 1;
    }
    for i in 0..12 {
        planted(t, &format!("w5/build/out{}/b{i}.txt", i % 3));
    }
    ignored += 1;
    let mut deep = String::from("deep");
    for k in 0..30 {
        deep.push_str(&format!("/d{k}"));
        if k == 20 {
            t.write(format!("{deep}/.gitignore"), "*.txt\n");
        }
        planted(t, &format!("{deep}/l{k}.txt"));
        if k < 20 {
            kept += 1;
        } else {
            ignored += 1;
        }
    }
    (kept, ignored, excluded)
}

#[test]
fn the_split_walk_reports_what_the_serial_walk_reports() {
    let t = Tree::new();
    let (findings, ignored, excluded) = generated_tree(&t);
    assert_eq!((findings, ignored, excluded), (115, 148, 76));
    let args = [
        "scan",
        "--format",
        "json",
        "--exclude",
        "*.tmp",
        "--exclude",
        "w3/",
    ];
    let (run, stats) = same_every_walk(t.path(), &args);
    run.expect(1);
    assert_eq!(run.findings().len(), findings);
    assert_eq!(stats["skipped"]["ignored"], ignored);
    assert_eq!(stats["skipped"]["excluded"], excluded);
    assert_eq!(stats["skipped_total"], ignored + excluded);
    let paths = run.path_lines();
    for p in ["keep.log:2", "forced.log:2", ".env:2", "w0/.hidden/h.txt:2"] {
        assert!(paths.iter().any(|l| l == p), "{p} not in {paths:?}");
    }
    assert!(!paths
        .iter()
        .any(|l| l.contains("build/") || l.ends_with(".tmp:2")));

    // Roots below the top (the ignore files above them still apply), a
    // file root, stdin and `--no-ignore`.
    let (run, stats) = same_every_walk(t.path(), &["scan", "--format", "json", "w1", "deep/d0/d1"]);
    run.expect(1);
    // w1: 15 .txt less 3, 3 .log of w1/x1, 15 .tmp; deep from d1: l1..l19.
    assert_eq!(run.findings().len(), 12 + 3 + 15 + 19);
    assert_eq!(stats["skipped"]["ignored"], 3 + 12 + 15 + 10);
    let mut stdin = scanner_in(t.path());
    let out = stdin
        .args([
            "scan",
            "--format",
            "json",
            "w0",
            "-",
            "a.log",
            "--threads",
            "16",
        ])
        .stdin(fs::File::open(t.join("w1/x0/y0/f1.txt")).unwrap())
        .output()
        .unwrap();
    let run = Run::from_output(out);
    run.expect(1);
    // w0: 15 .txt, 15 .gen, 15 .tmp, 1 hidden; stdin; a.log named (ignore
    // files do not drop a named file).
    assert_eq!(run.findings().len(), 15 + 15 + 15 + 1 + 1 + 1);
    let (run, stats) = same_every_walk(t.path(), &["scan", "--format", "json", "--no-ignore"]);
    run.expect(1);
    assert_eq!(run.findings().len(), 360 + 4 + 3 + 12 + 30);
    assert_eq!(stats["skipped_total"], 0);
}

/// A directory of more entries than one `getdents64` buffer and one task
/// batch, a tree 70 directories deep (more than the serial walk keeps
/// open), and a directory that cannot be listed: the same findings, the
/// warning, the count and exit 2 however the walk is cut up.
#[cfg(target_os = "linux")]
#[test]
fn wide_deep_and_unreadable_directories() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new();
    for i in 0..700u32 {
        let name = format!("wide/a-rather-long-file-name-to-fill-the-listing-buffer-{i}.txt");
        let body = if i % 7 == 0 { secret(i) } else { "x\n".into() };
        t.write(name, body);
    }
    let deep: String = (0..70).map(|i| format!("d{i}/")).collect();
    t.write(format!("{deep}f.txt"), secret(9000));
    t.write("locked/inside/b.txt", secret(9001));
    t.write("ok.txt", secret(9002));
    fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o000)).unwrap();
    // Root lists every directory: run without the capabilities that let it.
    let as_root = fs::read_dir(t.join("locked")).is_ok();
    let mut walks = Vec::new();
    for walk in WALKS {
        let mut cmd = if as_root {
            let mut c = std::process::Command::new("setpriv");
            c.args([
                "--bounding-set",
                "-dac_override,-dac_read_search",
                "--",
                BIN,
            ]);
            c
        } else {
            std::process::Command::new(BIN)
        };
        cmd.current_dir(t.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("HOME", t.path())
            .env("XDG_CONFIG_HOME", t.path())
            .args(["scan", "--format", "json"])
            .args(walk);
        walks.push(Run::from_output(cmd.output().unwrap()));
    }
    fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    for run in &walks {
        run.expect(2);
        assert_eq!(run.stdout, walks[0].stdout);
        assert_eq!(run.findings().len(), 100 + 1 + 1, "{}", run.stderr);
        assert!(
            run.stderr
                .contains("scanner: warning: locked: permission denied\n"),
            "{}",
            run.stderr
        );
        assert_eq!(
            run.summary_line("not scanned:"),
            Some("not scanned: 1 unreadable")
        );
    }
    let paths = walks[0].path_lines();
    assert!(paths.contains(&format!("{deep}f.txt:1")), "{paths:?}");
}

/// Files whose paths are longer than `PATH_MAX` (4096 bytes): the walk
/// lists them (each directory opened by its name in its parent, or one
/// component at a time), and the worker reads them too, a component at a
/// time: their findings, and the ignore file down there applied, however
/// the walk is cut up; no `file name too long`.
#[cfg(target_os = "linux")]
#[test]
fn files_past_path_max_are_read() {
    let t = Tree::new();
    let name = "n".repeat(200);
    // The shell makes each directory relative to the last: the kernel
    // would refuse the whole path.
    let script = format!(
        "for i in $(seq 1 25); do mkdir {name}$i && cd -P {name}$i || exit 1; \
         if [ $i = 10 ]; then printf '{near}' > near.txt; fi; \
         if [ $i = 22 ]; then printf 'ignored.txt\\n' > .gitignore; fi; done; \
         printf '{far}' > far.txt; printf '{ignored}' > ignored.txt",
        near = secret(1).replace('\n', "\\n"),
        far = secret(2).replace('\n', "\\n"),
        ignored = secret(3).replace('\n', "\\n"),
    );
    sh(t.path(), &script);
    let (run, stats) = same_every_walk(t.path(), &["scan", "--format", "json"]);
    assert!(!run.stderr.contains("too long"), "{}", run.stderr);
    run.expect(1);
    let paths = run.path_lines();
    assert_eq!(paths.len(), 2, "{paths:?}");
    let lens: Vec<usize> = paths.iter().map(|p| p.len()).collect();
    assert!(
        paths[0].ends_with("/near.txt:1") && lens[0] < 4096,
        "{lens:?}"
    );
    assert!(
        paths[1].ends_with("/far.txt:1") && lens[1] > 5000,
        "{lens:?}"
    );
    assert_eq!(stats["skipped_total"], 1);
    assert_eq!(stats["skipped"]["ignored"], 1);
}

/// A tree 4,000 directories deep (paths of 8 KB, twice `PATH_MAX`): its
/// secret at the bottom is found by every walk, within 8 s of CPU (about 1 s
/// in a debug build). Past `PATH_MAX` directories and files used to be
/// opened one component at a time: millions of `openat`s, 17 s of CPU,
/// quadratic in the depth (100 s for 6,000 levels).
#[cfg(target_os = "linux")]
#[test]
fn a_tree_thousands_of_directories_deep_is_walked_in_linear_time() {
    let t = Tree::new();
    let want = deep_tree(&t, 4000);
    for walk in WALKS {
        let run = scan_limited(&t, "ulimit -t 8", walk);
        assert_eq!(run.path_lines(), [want.as_str()], "{walk:?}");
    }
    sh(t.path(), "rm -rf d");
}

/// The serial walk (one worker, `--shard`, `--serial-walk`) of a tree
/// 3,000 directories deep, with a main thread of 512 KiB of stack: the
/// secret at the bottom found. It used to recurse once a level and abort
/// with a stack overflow (10,000 levels with the default 8 MiB in a debug
/// build, 2,000 with 2 MiB).
#[cfg(target_os = "linux")]
#[test]
fn the_serial_walk_of_a_very_deep_tree_does_not_overflow_its_stack() {
    let t = Tree::new();
    let want = deep_tree(&t, 3000);
    for walk in [WALKS[0], WALKS[2]] {
        let run = scan_limited(&t, "ulimit -s 512", walk);
        assert_eq!(run.path_lines(), [want.as_str()], "{walk:?}");
    }
    sh(t.path(), "rm -rf d");
}

/// `d/d/.../d/s.env` in `t`, `levels` directories deep, holding a secret;
/// its `path:line`. Remove it with `rm -rf d` (which walks it without
/// recursion; the temp dir's removal would recurse once a level).
fn deep_tree(t: &Tree, levels: usize) -> String {
    let py = format!(
        "import os\nfd = os.open('.', os.O_RDONLY)\nfor i in range({levels}):\n    \
         os.mkdir('d', dir_fd=fd)\n    n = os.open('d', os.O_RDONLY, dir_fd=fd)\n    \
         os.close(fd)\n    fd = n\n\
         f = os.open('s.env', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)\n\
         os.write(f, b'{}')\n",
        secret(1).trim_end()
    );
    python3(t, &["-c".as_ref(), py.as_ref()]);
    format!("{}s.env:1", "d/".repeat(levels))
}

/// `scanner scan --format json WALK` in `t` after the shell's `limit`
/// (`ulimit -t 8`); it must exit 1, not be killed.
fn scan_limited(t: &Tree, limit: &str, walk: &[&str]) -> Run {
    let out = std::process::Command::new("sh")
        .current_dir(t.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", t.path())
        .env("XDG_CONFIG_HOME", t.path())
        .arg("-c")
        .arg(format!("{limit} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(["scan", "--format", "json"])
        .args(walk)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{walk:?} under `{limit}`: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Run::from_output(out)
}

/// A `.gitignore` above a repository's top does not apply inside it, as
/// git reads none there (`~/.gitignore` of `*` for a dotfiles setup must not
/// hide every project under home); the repository's own ignore files, and
/// `.ignore` from anywhere, still do. Outside any repository `.gitignore` is
/// still honoured, and a repository below the root stops the rules above
/// it.
#[test]
fn a_gitignore_above_the_repository_does_not_apply_inside_it() {
    let t = Tree::new();
    t.write(".gitignore", "*.txt\n");
    t.write(".ignore", "*.tmp\n");
    t.write("repo/.gitignore", "b.txt\n");
    t.write("repo/sub/a.txt", secret(1));
    t.write("repo/sub/b.txt", secret(2));
    t.write("repo/sub/c.tmp", secret(3));
    t.write("loose/d.txt", secret(4));
    t.write("loose/e.env", secret(5));
    git_in(&t.join("repo"), &["init", "-q"]);
    // Each walk from inside the repository, and --follow (the `ignore`
    // crate's walk).
    let (run, stats) = same_every_walk(&t.join("repo"), &["scan", "--format", "json"]);
    run.expect(1);
    assert_eq!(run.path_lines(), ["sub/a.txt:1"]);
    assert_eq!(stats["skipped"]["ignored"], 2);
    let follow = run_in(&t.join("repo"), &["scan", "--format", "json", "--follow"]);
    assert_eq!((follow.code, &follow.stdout), (run.code, &run.stdout));
    assert_eq!(
        follow.summary_line("not scanned:"),
        Some("not scanned: 2 ignored")
    );
    let (run, _) = same_every_walk(&t.join("repo/sub"), &["scan", "--format", "json"]);
    assert_eq!(run.path_lines(), ["a.txt:1"]);
    let follow = run_in(&t.join("repo/sub"), &["scan", "--format", "json", "-L"]);
    assert_eq!(follow.path_lines(), ["a.txt:1"]);
    // From above it: its top is a boundary for the rules above.
    let (run, stats) = same_every_walk(t.path(), &["scan", "--format", "json"]);
    run.expect(1);
    assert_eq!(
        run.path_lines(),
        ["loose/e.env:1", "repo/sub/a.txt:1"],
        "{}",
        run.stderr
    );
    assert_eq!(stats["skipped"]["ignored"], 3);
}

/// The global excludes (`core.excludesFile`, here the default
/// `$XDG_CONFIG_HOME/git/ignore`) are anchored at the top of the repository
/// an entry is in, as git anchors them: `/config.env` is the top's
/// `config.env` only, whether the scan starts at the top, in a
/// subdirectory of it or above it, and a nested repository's top anchors
/// its own. Scanning from `repo/sub` once hid `sub/config.env` (exit 0).
#[test]
fn global_excludes_are_anchored_at_the_repository_top() {
    let t = Tree::new();
    t.write("home/git/ignore", "/config.env\n");
    t.write("repo/config.env", secret(1));
    t.write("repo/sub/config.env", secret(2));
    t.write("repo/sub/inner/config.env", secret(3));
    t.write("repo/sub/inner/deep/config.env", secret(4));
    git_in(&t.join("repo"), &["init", "-q"]);
    git_in(&t.join("repo/sub/inner"), &["init", "-q"]);
    let home = t.join("home");
    let scan = |cwd: &str, args: &[&str]| -> Vec<(Vec<String>, String)> {
        WALKS
            .iter()
            .map(|walk| {
                let run = Run::from_output(
                    scanner_in(&t.join(cwd))
                        .env("HOME", &home)
                        .env("XDG_CONFIG_HOME", &home)
                        .args(["scan", "--format", "json"])
                        .args(args)
                        .args(*walk)
                        .output()
                        .unwrap(),
                );
                run.expect(1);
                let skipped = run.summary_line("not scanned:").unwrap_or("");
                (run.path_lines(), skipped.to_owned())
            })
            .collect()
    };
    let want = |paths: &[&str], skipped: &str| {
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        vec![(paths, skipped.to_owned()); WALKS.len()]
    };
    assert_eq!(
        scan("repo/sub", &[]),
        want(
            &["config.env:1", "inner/deep/config.env:1"],
            "not scanned: 1 ignored"
        )
    );
    assert_eq!(
        scan("repo", &[]),
        want(
            &["sub/config.env:1", "sub/inner/deep/config.env:1"],
            "not scanned: 2 ignored"
        )
    );
    assert_eq!(
        scan(".", &["repo"]),
        want(
            &["repo/sub/config.env:1", "repo/sub/inner/deep/config.env:1"],
            "not scanned: 2 ignored"
        )
    );
}

/// A file or directory named twice, however spelled (`a.txt ./a.txt`,
/// `d ./d d/`, on the command line and in `--files-from`), is scanned
/// once, at its first name: its findings were reported twice, and counted
/// as two files scanned.
#[test]
fn a_path_named_twice_is_scanned_once() {
    let t = Tree::new();
    t.write("a.txt", secret(1));
    t.write("d/b.txt", secret(2));
    t.write("list", "a.txt\n./d\n");
    for walk in WALKS {
        let mut args = vec![
            "scan",
            "--format",
            "json",
            "a.txt",
            "./a.txt",
            "d",
            "./d",
            "d/",
            "--files-from",
            "list",
        ];
        args.extend_from_slice(walk);
        let run = t.run(&args);
        run.expect(1);
        assert_eq!(run.path_lines(), ["a.txt:1", "d/b.txt:1"], "{walk:?}");
        let scanned = run.summary_line("scanned ").unwrap();
        assert!(
            scanned.starts_with("scanned 2 files (86 B) in"),
            "{scanned}"
        );
        assert_eq!(run.summary_line("not scanned:"), None, "{walk:?}");
    }
}

/// Git never ignores a file its index tracks: a `.env` committed before
/// `.gitignore` named it is in every clone, and `git ls-files -co
/// --exclude-standard` lists it. So is it scanned (it was left out as
/// ignored, exit 0), whether `.gitignore`, `info/exclude` or a directory
/// pattern drops it; below a directory git's rules drop, only what is
/// tracked is scanned. `.scannerignore` is the user's word to the
/// scanner: it still drops a tracked file.
#[test]
fn a_tracked_file_is_scanned_though_git_ignores_it() {
    let t = Tree::new();
    t.write("repo/.env", secret(1));
    t.write("repo/build/keep.cfg", secret(2));
    t.write("repo/excl.txt", secret(3));
    t.write("repo/fixture.txt", secret(4));
    t.write("repo/app.txt", secret(5));
    let repo = t.join("repo");
    git_in(&repo, &["init", "-q"]);
    git_in(&repo, &["add", "."]);
    git_in(&repo, &["commit", "-q", "-m", "first"]);
    t.write("repo/build/new.o", secret(6));
    t.write("repo/build/sub/new.o", secret(7));
    t.write("repo/late.env", secret(8));
    t.write("repo/.gitignore", ".env\n*.env\nbuild/\nfixture.txt\n");
    t.write("repo/.git/info/exclude", "excl.txt\n");
    t.write("repo/.scannerignore", "fixture.txt\n");
    let want = [".env:1", "app.txt:1", "build/keep.cfg:1", "excl.txt:1"];
    let (run, stats) = same_every_walk(&repo, &["scan", "--format", "json"]);
    run.expect(1);
    assert_eq!(run.path_lines(), want, "{}", run.stderr);
    // build/new.o, build/sub, late.env; fixture.txt by .scannerignore.
    assert_eq!(stats["skipped"]["ignored"], 4);
    // From above the repository.
    let (run, _) = same_every_walk(t.path(), &["scan", "--format", "json", "repo"]);
    let want: Vec<String> = want.iter().map(|p| format!("repo/{p}")).collect();
    assert_eq!(run.path_lines(), want);
}

/// Git reads no `.gitignore` that is a symbolic link (it warns "unable to
/// access '.gitignore'" and lists every file it would have hidden): the
/// walk read one through the link and left its files out as ignored, exit
/// 0, whether the link is in a walked directory or above the root.
/// `.ignore`, the scanner's own, is still read through a link.
#[test]
fn a_gitignore_that_is_a_symlink_is_not_read() {
    let t = Tree::new();
    t.write("shared", "*.env\n");
    t.write("shared-ignore", "*.tmp\n");
    t.write("repo/a.env", secret(1));
    t.write("repo/sub/b.env", secret(2));
    t.write("repo/sub/c.tmp", secret(3));
    let repo = t.join("repo");
    git_in(&repo, &["init", "-q"]);
    std::os::unix::fs::symlink("../shared", repo.join(".gitignore")).unwrap();
    std::os::unix::fs::symlink("../shared-ignore", repo.join(".ignore")).unwrap();
    let (run, stats) = same_every_walk(&repo, &["scan", "--format", "json"]);
    run.expect(1);
    assert_eq!(run.path_lines(), ["a.env:1", "sub/b.env:1"]);
    assert_eq!(stats["skipped"]["ignored"], 1);
    let (run, _) = same_every_walk(&repo.join("sub"), &["scan", "--format", "json"]);
    assert_eq!(run.path_lines(), ["b.env:1"]);
}

/// A root inside another directory root (`scan . d`, `scan d d/b.txt`, in
/// either order, on the command line or in `--files-from`) is scanned once,
/// under the name it was given: the walk of the outer root passes over it.
/// Its findings were reported twice, once under each root. A file named
/// inside a walked directory is scanned though the directory's rules
/// ignore it, and not counted as ignored.
#[test]
fn a_root_inside_another_is_scanned_once() {
    let t = Tree::new();
    t.write("a.txt", secret(1));
    t.write("d/b.txt", secret(2));
    t.write("d/e/c.txt", secret(3));
    t.write("d/.gitignore", "c.txt\n");
    t.write("list", "d/e/c.txt\n");
    let walks = WALKS.iter().copied().chain([&["--follow"][..]]);
    for walk in walks {
        let scan = |roots: &[&str]| {
            let mut args = vec!["scan", "--format", "json"];
            args.extend_from_slice(roots);
            args.extend_from_slice(walk);
            let run = t.run(&args);
            run.expect(1);
            let skipped = run.summary_line("not scanned:").map(str::to_owned);
            (run.path_lines(), skipped)
        };
        let both = (
            vec!["./a.txt:1".to_string(), "d/b.txt:1".into()],
            Some("not scanned: 1 ignored, 1 excluded".to_string()),
        );
        assert_eq!(scan(&[".", "d", "--exclude", "list"]), both, "{walk:?}");
        assert_eq!(scan(&["d", ".", "--exclude", "list"]), both, "{walk:?}");
        // The `ignore` crate's walk (--follow) drops an ignored entry
        // before our filter sees it: there the inner root is counted too.
        let follow = walk == ["--follow"];
        let skipped = follow.then(|| "not scanned: 1 ignored".to_string());
        assert_eq!(
            scan(&["d", "--files-from", "list"]),
            (vec!["d/b.txt:1".to_string(), "d/e/c.txt:1".into()], skipped),
            "{walk:?}"
        );
    }
}

/// `git ls-files` (and `git diff --name-only`) quote a name with odd bytes
/// in a list of lines; such a line names no file. The warning says so and
/// what to do (`-z`), where it said only "no such file or directory"; the
/// NUL-separated list names the file exactly.
#[test]
fn a_name_git_quoted_in_a_list_is_warned_about_with_the_fix() {
    let t = Tree::new();
    t.write("café.txt", secret(1));
    t.write("plain.txt", secret(2));
    git_in(t.path(), &["init", "-q"]);
    git_in(t.path(), &["add", "café.txt", "plain.txt"]);
    let list = |args: &[&str]| {
        let out = common::isolate(
            std::process::Command::new("git")
                .current_dir(t.path())
                .args(args),
        )
        .output()
        .unwrap();
        out.stdout
    };
    fs::write(t.join("lines"), list(&["ls-files"])).unwrap();
    fs::write(t.join("nul"), list(&["ls-files", "-z"])).unwrap();
    let run = t.run(&["scan", "--format", "json", "--files-from", "lines"]);
    run.expect(2);
    assert_eq!(run.path_lines(), ["plain.txt:1"]);
    assert_eq!(
        run.stderr.lines().next(),
        Some(
            "scanner: warning: \"caf\\\\303\\\\251.txt\": no such file or directory \
             (a name git quoted? list the paths with -z)"
        )
    );
    let run = t.run(&["scan", "--format", "json", "--files-from", "nul"]);
    run.expect(1);
    assert_eq!(run.path_lines(), ["café.txt:1", "plain.txt:1"]);
}

/// A list saved by a Windows editor starts with a UTF-8 byte-order mark and
/// ends its lines with CRLF: the first path was looked up with the mark
/// before it, and warned about as missing under a name that looked right
/// (`s.txt: no such file or directory`, the mark unseen), exit 2.
#[test]
fn a_list_with_a_byte_order_mark_names_its_first_file() {
    let t = Tree::new();
    t.write("s.txt", secret(1));
    t.write("d/s.txt", secret(2));
    t.write("list", "\u{feff}s.txt\r\nd/s.txt\r\n");
    let run = t.run(&["scan", "--format", "json", "--files-from", "list"]);
    run.expect(1);
    assert_eq!(run.path_lines(), ["d/s.txt:1", "s.txt:1"]);
}

/// A file named on the command line inside a directory that cannot be
/// searched (mode 0o666: listed, but no entry can be opened or stat'ed) is
/// a root that exists but cannot be read: a warning naming it, counted
/// unreadable, exit 2, and the other roots scanned, as when
/// `--files-from` lists it. Not an error that scans nothing, as for a
/// root that does not exist.
#[cfg(target_os = "linux")]
#[test]
fn a_named_file_under_an_unsearchable_directory_is_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new();
    t.write("locked/a.env", secret(1));
    t.write("ok.env", secret(2));
    fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o666)).unwrap();
    // Root searches every directory: run without the capabilities that let it.
    let as_root = fs::metadata(t.join("locked/a.env")).is_ok();
    let mut cmd = if as_root {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            "--bounding-set",
            "-dac_override,-dac_read_search",
            "--",
            BIN,
        ]);
        c
    } else {
        std::process::Command::new(BIN)
    };
    cmd.current_dir(t.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", t.path())
        .env("XDG_CONFIG_HOME", t.path())
        .args(["scan", "--format", "json", "locked/a.env", "ok.env"]);
    let run = Run::from_output(cmd.output().unwrap());
    fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    run.expect(2);
    assert_eq!(run.path_lines(), ["ok.env:1"]);
    assert!(
        run.stderr
            .starts_with("scanner: warning: locked/a.env: permission denied\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.summary_line("not scanned:"),
        Some("not scanned: 1 unreadable")
    );
}

/// A list saved as UTF-16 (Windows PowerShell's `git ls-files > list` and
/// `Out-File` write UTF-16LE with a byte-order mark) was split on its NULs:
/// every character became a path, each warned about as missing (exit 2, no
/// finding), and a `/` or `.` in a name scanned the whole file system or
/// the current directory. (The names here have neither, so that the run
/// without the fix ends.)
#[test]
fn a_utf16_list_names_its_files() {
    let t = Tree::new();
    t.write("env", secret(1));
    t.write("key", secret(2));
    let units: Vec<u16> = "\u{feff}env\r\nkey\r\n".encode_utf16().collect();
    let le: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
    let be: Vec<u8> = units.iter().flat_map(|u| u.to_be_bytes()).collect();
    for list in [le, be] {
        t.write("list", list);
        let run = t.run(&["scan", "--format", "json", "--files-from", "list"]);
        run.expect(1);
        assert_eq!(run.path_lines(), ["env:1", "key:1"]);
        assert_eq!(run.summary_line("scanner: warning"), None);
    }
}

/// The `scanner: not scanned:` lines of a run, sorted (the workers finish
/// in any order).
fn not_scanned(run: &Run) -> Vec<&str> {
    let mut lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("scanner: not scanned: "))
        .collect();
    lines.sort();
    lines
}

/// `-v` names every file not scanned for what it is or holds, one line
/// each, in every walk, for named files, archive members and history
/// blobs: the summary's counts alone left the user to hunt for them. What
/// the ignore files leave out is only counted (an ignored directory once),
/// and the default output names none.
#[cfg(unix)]
#[test]
fn verbose_names_each_file_not_scanned() {
    let t = Tree::new();
    t.write("ok.txt", "hello\n");
    t.write("d/bin.dat", b"x\0y");
    t.write("big.txt", "a".repeat(30000));
    t.write(".gitignore", "target/\n");
    t.write("target/inside.dat", b"x\0y");
    std::os::unix::fs::symlink("ok.txt", t.join("link")).unwrap();
    sh(t.path(), "mkfifo fifo && tar cf t.tar d/bin.dat");
    let walked = [
        "scanner: not scanned: big.txt: too large",
        "scanner: not scanned: d/bin.dat: binary",
        "scanner: not scanned: fifo: special file",
        "scanner: not scanned: link: symlink (not followed)",
        "scanner: not scanned: t.tar!d/bin.dat: binary",
    ];
    for walk in WALKS {
        let mut args = vec!["scan", "-v", "--max-filesize", "20000"];
        args.extend_from_slice(walk);
        let run = t.run(&args);
        run.expect(0);
        assert_eq!(not_scanned(&run), walked, "{walk:?}\n{}", run.stderr);
        assert_eq!(
            run.summary_line("not scanned:"),
            Some("not scanned: 1 ignored, 2 binary, 1 too large, 1 symlink (not followed), 1 special file"),
            "{walk:?}"
        );
        let quiet = t.run(&["scan", "--max-filesize", "20000", walk[0], walk[1]]);
        assert_eq!(not_scanned(&quiet), Vec::<&str>::new());
    }
    let run = t.run(&["scan", "-v", "--follow", "--max-filesize", "20000"]);
    assert_eq!(
        not_scanned(&run),
        [
            "scanner: not scanned: big.txt: too large",
            "scanner: not scanned: d/bin.dat: binary",
            "scanner: not scanned: fifo: special file",
            "scanner: not scanned: ok.txt: already scanned (link)",
            "scanner: not scanned: t.tar!d/bin.dat: binary",
        ]
    );
    let run = t.run(&["scan", "-v", "d/bin.dat", "t.tar"]);
    assert_eq!(
        not_scanned(&run),
        [
            "scanner: not scanned: d/bin.dat: binary",
            "scanner: not scanned: t.tar!d/bin.dat: binary",
        ]
    );
    // A history blob, named with its commit.
    let repo = Tree::new();
    repo.write("b.bin", b"a\0b");
    sh(
        repo.path(),
        "git init -q && git add b.bin && git -c user.name=a -c user.email=a@b commit -qm x",
    );
    let run = repo.run(&["scan", "-v", "--history"]);
    let lines = not_scanned(&run);
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    let commit = lines[0]
        .strip_prefix("scanner: not scanned: b.bin (commit ")
        .and_then(|rest| rest.strip_suffix("): binary"))
        .unwrap_or_else(|| panic!("{}", lines[0]));
    assert_eq!(commit.len(), 40, "{commit}");
}

/// With `--follow`, each directory of a chain of 23 holding two links to
/// the next reaches the last by 2^22 paths: only links back to an ancestor
/// were caught, and the walk never ended. Each real directory is walked
/// once, at its first path in name order; every other way in counts once
/// as `already scanned (link)`, and the secret at the end is one finding.
#[cfg(unix)]
#[test]
fn follow_walks_a_directory_reached_by_many_links_once() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let t = Tree::new();
    for i in 0..22 {
        fs::create_dir_all(t.join(format!("d{i}"))).unwrap();
        for link in ["x", "y"] {
            let to = format!("../d{}", i + 1);
            std::os::unix::fs::symlink(to, t.join(format!("d{i}/{link}"))).unwrap();
        }
    }
    t.write("d22/f.txt", secret(1));
    let mut child = scanner_in(t.path())
        .args(["scan", "--follow", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("--follow walked every path through the links");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let run = Run::from_output(child.wait_with_output().unwrap());
    run.expect(1);
    let first = format!("d0{}/f.txt", "/x".repeat(22));
    assert_eq!(run.path_lines(), [format!("{first}:1")]);
    // d1..d22 by their own names, and the 22 `y` links.
    assert_eq!(
        run.summary_line("not scanned:"),
        Some("not scanned: 44 already scanned (link)")
    );
    let run = t.run(&["scan", "-v", "--follow", "--format", "json", "d20"]);
    run.expect(1);
    assert_eq!(run.path_lines(), ["d20/x/x/f.txt:1"]);
    assert_eq!(
        not_scanned(&run),
        [
            "scanner: not scanned: d20/x/y: already scanned (link)",
            "scanner: not scanned: d20/y: already scanned (link)",
        ]
    );
}
