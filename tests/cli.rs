//! End-to-end tests of `scanner scan` and `scanner rules`: the real binary on
//! temp dirs. Walking, reading, splitting, counting, exit statuses. The
//! report formats themselves are tested field by field in `tests/output.rs`.

mod common;

use std::fs;
use std::path::Path;

use common::{git_ok, isolate, run_axes, run_in, token, Tree, RULE};

/// `T=<token>\n`: the secret is at column 3 and 40 bytes long.
fn secret_line(seed: u32) -> String {
    format!("T={}\n", token(seed))
}

// ---------------------------------------------------------------- exit codes

#[test]
fn exit_status_clean_findings_and_errors() {
    let t = Tree::new();
    t.write("clean.txt", "nothing to see\n");
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(0);
    assert_eq!(r.findings(), []);

    t.write("leak.env", secret_line(1));
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.locations(), ["leak.env:1:3:1:43"]);
    assert_eq!(r.findings()[0].rule_id, RULE);
    assert!(
        r.summary_line("scanned 2 files (").is_some(),
        "{}",
        r.stderr
    );

    // Bad flag, missing root, bad rule file: 2, with the culprit named.
    t.run(&["scan", "--no-such-flag"]).expect(2);
    let r = t.run(&["scan", "missing-dir"]);
    r.expect(2);
    assert!(
        r.stderr.starts_with("scanner: error: missing-dir: "),
        "{}",
        r.stderr
    );
    // A missing root, even after a good one: nothing is reported.
    let r = t.run(&["scan", "leak.env", "missing.txt"]);
    r.expect(2);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.starts_with("scanner: error: missing.txt: "),
        "{}",
        r.stderr
    );
    t.write(
        "bad.toml",
        "[[rules]]\nid = \"broken\"\nregex = '''(unclosed'''\n",
    );
    let r = t.run(&["scan", "--rules", "bad.toml", "clean.txt"]);
    r.expect(2);
    assert!(r.stderr.contains("bad.toml"), "{}", r.stderr);
    assert!(r.stderr.contains("broken"), "{}", r.stderr);
}

#[test]
fn empty_directory_is_clean_and_json_is_an_empty_array() {
    let t = Tree::new();
    fs::create_dir(t.join("empty")).unwrap();
    let r = t.run(&["scan", "--format", "json", "empty"]);
    r.expect(0);
    assert_eq!(r.stdout.trim(), "[]");
    assert!(
        r.stderr.starts_with("scanned 0 files (0 B)"),
        "{}",
        r.stderr
    );
    let r = t.run(&["scan", "--quiet", "empty"]);
    r.expect(0);
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
}

// ------------------------------------------------------------------- walking

/// A tree with one secret kept and one in each kind of ignored place.
fn ignore_tree() -> Tree {
    let t = Tree::new();
    t.write(".gitignore", "*.log\nbuild/\n");
    t.write(".scannerignore", "fixtures/\n");
    t.write("src/.env", secret_line(1));
    t.write("debug.log", secret_line(2));
    t.write("build/out/a.txt", secret_line(3));
    t.write("build/out/b.txt", secret_line(4));
    t.write("fixtures/x.txt", secret_line(5));
    t
}

#[test]
fn gitignore_and_scannerignore_outside_a_repository() {
    let t = ignore_tree();
    let r = run_axes(t.path(), &["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.locations(), ["src/.env:1:3:1:43"]);
    // debug.log, build/ (once, never entered), fixtures/ (once).
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 3 ignored")
    );

    let r = run_axes(t.path(), &["scan", "--format", "json", "--no-ignore"]);
    r.expect(1);
    assert_eq!(
        r.locations(),
        [
            "build/out/a.txt:1:3:1:43",
            "build/out/b.txt:1:3:1:43",
            "debug.log:1:3:1:43",
            "fixtures/x.txt:1:3:1:43",
            "src/.env:1:3:1:43",
        ]
    );
    assert_eq!(r.summary_line("not scanned:"), None);
}

#[test]
fn gitignore_and_info_exclude_inside_a_repository_and_git_dir_skipped() {
    let t = ignore_tree();
    git_ok(isolate(
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(t.path()),
    ));
    fs::write(t.join(".git/info/exclude"), "src/.env\n").unwrap();
    // A secret inside .git must never be read by a directory scan.
    fs::write(t.join(".git/leak"), secret_line(6)).unwrap();
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(0);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 4 ignored")
    );
}

#[test]
fn max_filesize_applies_to_staged_blobs_too() {
    let t = Tree::new();
    let git = |args: &[&str]| {
        git_ok(isolate(
            std::process::Command::new("git")
                .args(args)
                .current_dir(t.path()),
        ));
    };
    git(&["init", "-q"]);
    t.write("small.txt", secret_line(1));
    t.write("big.txt", format!("{}{}", "x".repeat(5000), secret_line(2)));
    git(&["add", "small.txt", "big.txt"]);
    let r = t.run(&[
        "scan",
        "--staged",
        "--format",
        "json",
        "--max-filesize",
        "1K",
    ]);
    r.expect(1);
    assert_eq!(r.locations(), ["small.txt:1:3:1:43"]);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 too large")
    );
}

#[test]
fn explicit_file_is_scanned_even_when_ignored() {
    let t = ignore_tree();
    let r = t.run(&["scan", "--format", "json", "debug.log", "build/out/a.txt"]);
    r.expect(1);
    assert_eq!(
        r.locations(),
        ["build/out/a.txt:1:3:1:43", "debug.log:1:3:1:43"]
    );
}

#[test]
fn files_from_newlines_nul_and_stdin() {
    let t = ignore_tree();
    t.write("list.txt", "debug.log\r\nsrc/.env\n\n");
    let r = t.run(&["scan", "--format", "json", "--files-from", "list.txt"]);
    r.expect(1);
    assert_eq!(r.locations(), ["debug.log:1:3:1:43", "src/.env:1:3:1:43"]);

    t.write("list0", "fixtures/x.txt\0build\0");
    let r = t.run(&["scan", "--format", "json", "--files-from", "list0"]);
    r.expect(1);
    // build/ is walked (ignore rules apply inside it: none there).
    assert_eq!(
        r.locations(),
        [
            "build/out/a.txt:1:3:1:43",
            "build/out/b.txt:1:3:1:43",
            "fixtures/x.txt:1:3:1:43"
        ]
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scanner"))
        .current_dir(t.path())
        .args(["scan", "--format", "json", "--files-from", "-"])
        .stdin(fs::File::open(t.join("list.txt")).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).matches(RULE).count(),
        2
    );
}

/// A path in `--files-from` that is not there (a file deleted since
/// `git diff --name-only` listed it) is a warning naming it, counted
/// unreadable: the rest of the list is scanned, and the exit is 2 (the scan
/// did not read all it was asked to), or the findings' 1 with
/// `--ignore-errors`. A missing root on the command line stays fatal.
#[test]
fn a_missing_path_in_files_from_is_a_warning_and_the_rest_is_scanned() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    t.write("sub/b.txt", secret_line(2));
    t.write("list", "a.txt\ngone.txt\nsub\nno/such/dir\n");
    let r = t.run(&["scan", "--format", "json", "--files-from", "list"]);
    r.expect(2);
    assert_eq!(r.locations(), ["a.txt:1:3:1:43", "sub/b.txt:1:3:1:43"]);
    assert!(
        r.stderr.contains(
            "scanner: warning: gone.txt: no such file or directory\n\
             scanner: warning: no/such/dir: no such file or directory\n"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 2 unreadable")
    );
    let r = t.run(&[
        "scan",
        "--format",
        "json",
        "--files-from",
        "list",
        "--ignore-errors",
    ]);
    r.expect(1);
    assert_eq!(r.findings().len(), 2);
}

/// Standard input is read once: `--files-from -` with the path `-` would
/// scan an empty `-` (the list took all of it), so it is refused up front.
#[test]
fn files_from_stdin_and_stdin_as_a_path_are_refused_together() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    let out = common::scanner_in(t.path())
        .args(["scan", "--format", "json", "--files-from", "-", "-"])
        .stdin(fs::File::open(t.join("a.txt")).unwrap())
        .output()
        .unwrap();
    let r = common::Run::from_output(out);
    r.expect(2);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "scanner: error: --files-from - and the path - both read standard input\n"
    );
}

#[test]
fn exclude_globs_and_max_filesize_are_counted() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    t.write("vendor/lib/b.txt", secret_line(2));
    t.write("c.min.js", secret_line(3));
    t.write("big.txt", format!("{}{}", "x".repeat(2000), secret_line(4)));
    let r = t.run(&[
        "scan",
        "--format",
        "json",
        "--exclude",
        "vendor/",
        "--exclude",
        "*.min.js",
        "--max-filesize",
        "1K",
    ]);
    r.expect(1);
    assert_eq!(r.locations(), ["a.txt:1:3:1:43"]);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 2 excluded, 1 too large")
    );
}

/// `--exclude '.*'` (hidden files) matches names, never the `.` or `..` of
/// a path: a file named `./a.txt` or `../a.txt` (as `find .` lists them) is
/// scanned, and `./.env` is excluded.
#[test]
fn an_exclude_of_hidden_names_does_not_match_dot_and_dot_dot() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    t.write("sub/b.txt", secret_line(2));
    t.write(".env", secret_line(3));
    t.write("list", "./a.txt\n./sub/b.txt\n./.env\n");
    let r = t.run(&[
        "scan",
        "--format",
        "json",
        "--exclude",
        ".*",
        "--files-from",
        "list",
    ]);
    r.expect(1);
    assert_eq!(r.locations(), ["./a.txt:1:3:1:43", "./sub/b.txt:1:3:1:43"]);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 excluded")
    );
    let r = run_in(
        &t.join("sub"),
        &["scan", "--format", "json", "--exclude", ".*", "../a.txt"],
    );
    r.expect(1);
    assert_eq!(r.locations(), ["../a.txt:1:3:1:43"]);
}

/// A directory named on the command line inside (or at) an excluded
/// directory is excluded as a file named there is: `--exclude vendor/`
/// covers `scanner scan vendor/lib` as it covers `scanner scan
/// vendor/lib/b.txt`, whichever walk runs. The root counts once.
#[test]
fn an_exclude_covers_a_directory_root_below_it() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    t.write("vendor/lib/b.txt", secret_line(2));
    t.write("src/gen/c.txt", secret_line(3));
    t.write("src/d.txt", secret_line(4));
    for walk in [
        &[][..],
        &["--follow"],
        &["--serial-walk"],
        &["--threads", "1"],
    ] {
        let run = |extra: &[&str]| {
            let mut args = vec!["scan", "--format", "json"];
            args.extend_from_slice(extra);
            args.extend_from_slice(walk);
            t.run(&args)
        };
        for (exclude, root) in [
            ("vendor/", "vendor/lib"),
            ("vendor/", "./vendor"),
            ("/vendor", "vendor/lib/"),
            ("lib", "vendor/lib"),
            ("src/gen", "src/gen"),
        ] {
            let r = run(&["--exclude", exclude, root]);
            r.expect(0);
            assert_eq!(r.findings(), [], "--exclude {exclude} {root} {walk:?}");
            assert_eq!(
                r.summary_line("not scanned:"),
                Some("not scanned: 1 excluded"),
                "--exclude {exclude} {root} {walk:?}"
            );
        }
        // The globs are relative to the current directory: a parent of
        // the root above it is not theirs to match.
        let abs = t.join("vendor/lib");
        for root in [abs.to_str().unwrap(), "../vendor/lib"] {
            let r = run_in(
                &t.join("src"),
                &["scan", "--format", "json", "--exclude", "vendor", root]
                    .iter()
                    .copied()
                    .chain(walk.iter().copied())
                    .collect::<Vec<_>>(),
            );
            r.expect(1);
            assert_eq!(r.findings().len(), 1, "{root} {walk:?}");
        }
        // The same glob still only prunes below a root above it.
        let r = run(&["--exclude", "src/gen", "src", "vendor/lib/b.txt"]);
        r.expect(1);
        assert_eq!(
            r.locations(),
            ["src/d.txt:1:3:1:43", "vendor/lib/b.txt:1:3:1:43"]
        );
        assert_eq!(
            r.summary_line("not scanned:"),
            Some("not scanned: 1 excluded")
        );
    }
}

#[cfg(unix)]
#[test]
fn symlinks_not_followed_by_default_and_a_loop_ends_with_follow() {
    use std::os::unix::fs::symlink;
    let t = Tree::new();
    t.write("d/a.txt", secret_line(1));
    symlink("../d", t.join("d/loop")).unwrap();
    symlink("a.txt", t.join("d/alias.txt")).unwrap();
    symlink("nowhere", t.join("d/broken")).unwrap();

    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.locations(), ["d/a.txt:1:3:1:43"]);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 2 symlink (not followed), 1 symlink (broken)")
    );
    assert!(
        r.stderr
            .contains("scanner: warning: d/broken: broken symbolic link"),
        "{}",
        r.stderr
    );

    // Followed, the alias is the same file: scanned once, under the first
    // path in name order.
    let r = t.run(&["scan", "--format", "json", "--follow"]);
    r.expect(1);
    assert_eq!(r.locations(), ["d/a.txt:1:3:1:43"]);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 symlink (broken), 1 symlink (loop), 1 already scanned (link)")
    );
    assert!(
        r.stderr
            .contains("scanner: warning: d/loop: symbolic link loop"),
        "{}",
        r.stderr
    );
}

/// Control bytes in file names reach stderr escaped, as in the text report:
/// in a warning's path, in the path its reason names, and in an error.
#[cfg(unix)]
#[test]
fn paths_in_warnings_and_errors_are_escaped() {
    use std::os::unix::fs::symlink;
    let t = Tree::new();
    fs::create_dir(t.join("\x1b[31mred")).unwrap();
    symlink("nowhere", t.join("\x1b[31mred/\x07broken")).unwrap();
    symlink("../\x1b[31mred", t.join("\x1b[31mred/loop")).unwrap();
    let r = t.run(&["scan", "--follow", "--format", "json"]);
    r.expect(0);
    assert!(!r.stderr.contains(['\x1b', '\x07']), "{:?}", r.stderr);
    assert!(
        r.stderr
            .contains("scanner: warning: \\x1b[31mred/\\x07broken: broken symbolic link: "),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "scanner: warning: \\x1b[31mred/loop: symbolic link loop \
             (leads back to \\x1b[31mred), not followed\n"
        ),
        "{}",
        r.stderr
    );

    let r = t.run(&["scan", "--stats-json", "no\x1b[2Jdir/s.json"]);
    r.expect(2);
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
    assert!(
        r.stderr
            .contains("--stats-json: no\\x1b[2Jdir/s.json: its directory no\\x1b[2Jdir does"),
        "{}",
        r.stderr
    );
}

/// A FIFO met while walking would block a reader forever: it is skipped and
/// counted. (A FIFO named on the command line is read as a stream:
/// `tests/streams.rs`.)
#[cfg(unix)]
#[test]
fn walked_fifos_are_skipped_not_opened() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    let made = std::process::Command::new("mkfifo")
        .arg(t.join("pipe"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.locations(), ["a.txt:1:3:1:43"]);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 special file")
    );
}

#[cfg(unix)]
#[test]
fn non_utf8_file_name_round_trips_through_path_bytes() {
    use base64::Engine as _;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::new();
    let name = OsStr::from_bytes(b"k\xFFey.env");
    t.write(Path::new("conf").join(name), secret_line(1));
    let r = run_axes(t.path(), &["scan", "--format", "json"]);
    r.expect(1);
    let f = &r.findings()[0];
    assert_eq!(f.path, "conf/k\u{FFFD}ey.env");
    let raw = base64::engine::general_purpose::STANDARD
        .decode(f.path_bytes.as_deref().expect("path_bytes"))
        .unwrap();
    assert_eq!(raw, b"conf/k\xFFey.env");
    let data = fs::read(t.join(OsStr::from_bytes(&raw))).unwrap();
    assert_eq!(data, secret_line(1).as_bytes());
}

// ------------------------------------------------------------------- reading

#[test]
fn crlf_line_numbers_and_columns() {
    let t = Tree::new();
    t.write(
        "win.txt",
        format!("first\r\n\r\nx = {}\r\nlast\r\n", token(1)),
    );
    let r = run_axes(t.path(), &["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.locations(), ["win.txt:3:5:3:45"]);
    assert_eq!(r.findings()[0].offset, 13);
}

#[test]
fn a_secret_across_a_chunk_boundary_is_found_exactly_once() {
    let t = Tree::new();
    // The secret starts at offset 1000 and spans 1000..1040: chunk sizes
    // below put a boundary before, inside and right after its start.
    let mut data = String::new();
    while data.len() < 990 {
        data.push_str("filler text\n");
    }
    data.truncate(990);
    data.push_str("\nx value ");
    assert_eq!(data.len(), 999);
    data.push(' ');
    data.push_str(&token(1));
    data.push_str("\ntrailer\n");
    t.write("f.txt", &data);
    for chunk in [
        "64", "100", "333", "1000", "1001", "1020", "1039", "1040", "4096",
    ] {
        let r = t.run(&["scan", "--format", "json", "--chunk-size", chunk]);
        r.expect(1);
        assert_eq!(r.locations(), ["f.txt:84:10:84:50"], "chunk size {chunk}");
        assert_eq!(r.findings()[0].offset, 1000, "chunk size {chunk}");
    }
}

/// ~1.3 MB of CRLF and LF lines with 12 secrets at known lines.
fn large_file(t: &Tree) -> Vec<String> {
    let mut data = String::new();
    let mut expected = Vec::new();
    for line in 1..=30_000u32 {
        if line % 2500 == 7 {
            let col = 1 + (line % 5) as usize;
            data.push_str(&" ".repeat(col - 1));
            data.push_str(&token(line));
            data.push_str("\r\n");
            expected.push(format!("big.txt:{line}:{col}:{line}:{}", col + 40));
        } else if line % 3 == 0 {
            data.push_str("plain ascii filler, nothing secret here at all\r\n");
        } else {
            data.push_str("another filler line of some length\n");
        }
    }
    t.write("big.txt", data);
    expected
}

#[test]
fn a_split_file_gives_the_same_findings_as_unsplit() {
    let t = Tree::new();
    let expected = large_file(&t);
    assert_eq!(expected.len(), 12);
    let unsplit = t.run(&["scan", "--format", "json", "--split-threshold", "0"]);
    unsplit.expect(1);
    assert_eq!(unsplit.locations(), expected);
    for args in [
        ["--threads", "1", "--split-grain", "64K"],
        ["--threads", "4", "--split-grain", "16K"],
        ["--threads", "3", "--split-grain", "1000"],
    ] {
        let mut a = vec![
            "scan",
            "--format",
            "json",
            "--split-threshold",
            "100K",
            "--chunk-size",
            "8K",
        ];
        a.extend(args);
        let r = t.run(&a);
        r.expect(1);
        assert_eq!(r.stdout, unsplit.stdout, "{args:?}");
        assert!(r.stderr.starts_with("scanned 1 file ("), "{}", r.stderr);
    }
}

#[test]
fn split_file_stats_show_the_pieces() {
    let t = Tree::new();
    large_file(&t);
    let r = t.run(&[
        "scan",
        "-q",
        "--threads",
        "2",
        "--split-threshold",
        "100K",
        "--split-grain",
        "64K",
        "--stats-json",
        "stats.json",
        "big.txt",
    ]);
    r.expect(1);
    let v: serde_json::Value =
        serde_json::from_slice(&fs::read(t.join("stats.json")).unwrap()).unwrap();
    assert_eq!(v["files"], 1);
    assert_eq!(v["findings"], 12);
    assert_eq!(v["bytes"], fs::metadata(t.join("big.txt")).unwrap().len());
    assert_eq!(v["scheduler"]["workers"].as_array().unwrap().len(), 2);
    // The producer queued the one file, on its own thread clock.
    assert_eq!(v["producer"]["items"], 1);
    let cpu = v["producer"]["cpu_secs"].as_f64().unwrap();
    assert!(cpu > 0.0 && cpu < 5.0, "{}", v["producer"]);
    let tasks = &v["scheduler"]["tasks"];
    // One file task from the injector, which runs the first piece and splits
    // off the others (run locally or stolen by the other worker).
    fn pieces(len: u64, grain: u64) -> u64 {
        if len >= 2 * grain {
            pieces(len / 2, grain) + pieces(len - len / 2, grain)
        } else {
            1
        }
    }
    let size = fs::metadata(t.join("big.txt")).unwrap().len();
    assert_eq!(tasks["injector"], 1);
    let ran = ["injector", "local", "stolen"].map(|k| tasks[k].as_u64().unwrap());
    assert_eq!(ran.iter().sum::<u64>(), pieces(size, 64 << 10));
    assert!(ran[1] + ran[2] >= 8, "{tasks}");
}

/// `big.txt` in `t`: a secret on line 1, 32 MiB of filler, a secret on the last line; its path
/// and size.
#[cfg(target_os = "linux")]
fn big_file(t: &Tree) -> (std::path::PathBuf, u64) {
    let filler = "filler filler filler filler filler filler filler filler\n";
    let mut data = secret_line(1);
    data.push_str(&filler.repeat((32 << 20) / filler.len()));
    data.push_str(&secret_line(2));
    (t.write("big.txt", &data), data.len() as u64)
}

/// Cuts `path` (`size` bytes, `big.txt`) to `cut` bytes while `child` (a jsonl scan of it)
/// is held still, lets the scan go on, and checks what it says: the one secret before the
/// cut (line 1) found, and a warning naming how much was scanned; exit 1.
#[cfg(target_os = "linux")]
fn cut_short(child: std::process::Child, path: &Path, cut: u64, size: u64) {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(cut)
        .unwrap();
    common::signal(&child, "-CONT");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(lines[0].contains("\"line\":1,"), "{stdout}");
    let warning = format!(
        "scanner: warning: big.txt: shrank while being read: {cut} of {size} bytes scanned"
    );
    assert!(
        stderr.lines().any(|l| l == warning),
        "want `{warning}` in:\n{stderr}"
    );
}

/// A file cut short while the scanner is reading it: the scan is held still
/// (SIGSTOP) once the kernel's read position of the file is past its first
/// MiB and before its end, the file is truncated exactly there, and the scan
/// goes on (SIGCONT). The warning must name the position, the secret before
/// the cut is found, the one after it is not, and the run is not a clean 0.
/// (A split file cut short: the next test, and `reader::tests::ranges_past_eof_are_empty`.)
#[cfg(target_os = "linux")]
#[test]
fn a_file_truncated_mid_scan_warns_with_the_bytes_scanned() {
    use std::process::Stdio;
    let t = Tree::new();
    let (path, size) = big_file(&t);
    let child = common::scanner_in(t.path())
        // One worker and no splitting: the file is read front to back
        // through one descriptor, whose position the kernel shows.
        .args(["scan", "--threads", "1", "--split-threshold", "0"])
        .args(["--chunk-size", "64K", "--format", "jsonl", "big.txt"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cut = common::stop_mid_read(&child, &path, 1 << 20, size - (1 << 20));
    cut_short(child, &path, cut, size);
}

/// The same for a file large enough to be split into ranges (above the 8 MiB threshold):
/// its ranges are read with positional reads, so the scan is held still once the process
/// has read 512 KiB of it, inside its first range; the file is cut at 1.5 MiB. The ranges
/// past the cut read nothing, and that must be said as for a file read whole, not pass as
/// a smaller file scanned in full.
#[cfg(target_os = "linux")]
#[test]
fn a_split_file_truncated_mid_scan_warns_with_the_bytes_scanned() {
    use std::process::Stdio;
    let t = Tree::new();
    let (path, size) = big_file(&t);
    let cut: u64 = 3 << 19;
    let child = common::scanner_in(t.path())
        // One worker: the first range (the first 2 MiB) is read before any other.
        .args(["scan", "--threads", "1", "--chunk-size", "64K"])
        .args(["--format", "jsonl", "big.txt"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::stop_after_reading(&child, &path, 512 << 10, cut - (256 << 10));
    cut_short(child, &path, cut, size);
}

#[test]
fn binary_files_are_skipped_and_counted_unless_binary() {
    let t = Tree::new();
    let mut data = b"\x7fELF\x00\x01".to_vec();
    data.extend(secret_line(1).as_bytes());
    t.write("blob", &data);
    // A NUL after the first 8 KiB does not make a file binary.
    let mut late = "x".repeat(9000).into_bytes();
    late.push(0);
    late.extend(b"\n");
    late.extend(secret_line(2).as_bytes());
    t.write("late.txt", &late);
    let r = run_axes(t.path(), &["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.locations(), ["late.txt:2:3:2:43"]);
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 binary")
    );
    let r = run_axes(t.path(), &["scan", "--format", "json", "--binary"]);
    r.expect(1);
    assert_eq!(r.locations(), ["blob:1:9:1:49", "late.txt:2:3:2:43"]);
}

/// Makes a path in `t` that the scanner cannot read, as any user: a 0o000
/// file, or when that is readable (root), a link to `/proc/self/mem`,
/// whose offset 0 is never mapped (reading it fails with EIO even as root).
/// Returns the path argument to pass and the reason expected in the warning.
#[cfg(unix)]
fn unreadable(t: &Tree) -> Option<(String, &'static str)> {
    use std::os::unix::fs::PermissionsExt;
    let p = t.write("locked.txt", secret_line(9));
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&p).is_err() {
        return Some(("locked.txt".into(), "permission denied"));
    }
    fs::remove_file(&p).unwrap();
    if fs::read("/proc/self/mem").is_err() {
        std::os::unix::fs::symlink("/proc/self/mem", t.join("mem")).unwrap();
        return Some(("mem".into(), "input/output error"));
    }
    None
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_a_warning_and_exit_2_unless_ignore_errors() {
    let t = Tree::new();
    t.write("ok.txt", "fine\n");
    let (bad, reason) = unreadable(&t).expect("no way to make an unreadable file here");
    let r = t.run(&["scan", "--format", "json", "ok.txt", &bad]);
    r.expect(2);
    assert_eq!(r.findings(), []);
    assert!(
        r.stderr
            .contains(&format!("scanner: warning: {bad}: {reason}\n")),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 unreadable")
    );
    assert!(r.stderr.starts_with("scanner: warning"), "{}", r.stderr);

    t.run(&[
        "scan",
        "--format",
        "json",
        "--ignore-errors",
        "ok.txt",
        &bad,
    ])
    .expect(0);
    t.write("leak.txt", secret_line(1));
    // Findings and an unreadable file: still 2 (the scan is incomplete).
    t.run(&["scan", "ok.txt", "leak.txt", &bad]).expect(2);
    t.run(&["scan", "--ignore-errors", "ok.txt", "leak.txt", &bad])
        .expect(1);
}

/// Only where permissions bind (not as root: root lists any directory).
#[cfg(unix)]
#[test]
#[ignore = "needs a non-root user (root lists every directory): run `cargo test -- --ignored` as one"]
fn an_unreadable_directory_is_a_warning_and_exit_2() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new();
    t.write("ok/a.txt", "fine\n");
    t.write("locked/b.txt", secret_line(1));
    fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o000)).unwrap();
    assert!(
        fs::read_dir(t.join("locked")).is_err(),
        "running as root: every directory is readable"
    );
    let r = t.run(&["scan", "--format", "json"]);
    fs::set_permissions(t.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    r.expect(2);
    assert!(
        r.stderr
            .contains("scanner: warning: locked: permission denied"),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 unreadable")
    );
}

#[test]
fn json_is_identical_with_one_and_eight_threads() {
    let t = Tree::new();
    for i in 0..60u32 {
        let mut body = String::new();
        for l in 0..(i % 7) {
            body.push_str(&format!("line {l}\n"));
        }
        if i % 3 == 0 {
            body.push_str(&secret_line(i));
        }
        if i % 4 == 0 {
            body.push_str(&format!("again {}\n", token(i + 1000)));
        }
        t.write(format!("d{}/f{i}.txt", i % 5), body);
    }
    large_file(&t);
    let split = ["--split-threshold", "200K", "--split-grain", "32K"];
    let mut one = vec!["scan", "--format", "json", "--threads", "1"];
    one.extend(split);
    let mut eight = vec!["scan", "--format", "json", "--threads", "8"];
    eight.extend(split);
    let a = t.run(&one);
    a.expect(1);
    assert_eq!(a.findings().len(), 20 + 15 + 12);
    for _ in 0..3 {
        let b = t.run(&eight);
        b.expect(1);
        assert_eq!(a.stdout, b.stdout);
    }
}

/// `-o` inside the scanned tree: neither the report being written nor the
/// one a previous run left there is scanned (with --show-secrets both hold
/// every secret again).
#[test]
fn the_report_file_is_never_scanned() {
    let t = Tree::new();
    t.write("a.env", secret_line(1));
    let args = [
        "scan",
        "--format",
        "jsonl",
        "--show-secrets",
        "-o",
        "out/report.jsonl",
        ".",
    ];
    fs::create_dir(t.join("out")).unwrap();
    // The first run skips the temp file it writes; the next ones also the
    // report the previous run left.
    for skipped in ["1 own report", "2 own report", "2 own report"] {
        let r = t.run(&args);
        r.expect(1);
        let report = fs::read_to_string(t.join("out/report.jsonl")).unwrap();
        assert_eq!(report.lines().count(), 1, "{report}");
        let line = format!("not scanned: {skipped}");
        assert_eq!(r.summary_line("not scanned:"), Some(line.as_str()));
    }
}

#[test]
fn summary_goes_to_stderr_and_quiet_silences_it() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    let r = t.run(&["scan", "a.txt"]);
    r.expect(1);
    assert_eq!(r.stdout, format!("a.txt:1:3  {RULE}  ghp_…\n"));
    // One finding, singular; no rate for a scan of a few bytes (it would read 0.0 MB/s).
    let first = r.stderr.lines().next().unwrap();
    assert!(first.starts_with("scanned 1 file ("), "{first}");
    assert!(first.ends_with(" s: 1 finding"), "{first}");
    assert!(!first.contains("MB/s"), "{first}");
    let r = t.run(&["scan", "-q", "a.txt"]);
    r.expect(1);
    assert_eq!(r.stderr, "");
}

// --------------------------------------------------------------------- rules

#[test]
fn rules_list_shows_id_name_keywords_gitleaks_aliases_validator_host_and_provider() {
    let r = run_in(Path::new("."), &["rules", "list"]);
    r.expect(0);
    let has = |want: &str| r.stdout.lines().any(|l| l == want);
    assert!(
        has("github-classic-pat\tGitHub personal access token (classic)\tghp_\tgithub-pat\tapi.github.com\tgithub"),
        "{}",
        r.stdout
    );
    assert!(
        has("gcp-service-account-key\tGoogle Cloud service account key\tservice_account\t\toauth2.googleapis.com\tgcp"),
        "{}",
        r.stdout
    );
    // No validator: the fifth column is empty.
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("aws-session-token\t") && l.ends_with("\t\taws")),
        "{}",
        r.stdout
    );
    // A generic rule names no provider: the sixth column is empty.
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("generic-password-assignment\t") && l.ends_with('\t')),
        "{}",
        r.stdout
    );
    assert!(r.stdout.lines().all(|l| l.split('\t').count() == 6));
}

/// A `[[providers]]` entry in a user's rule file is a rule like any other:
/// `rules check` proves its examples, `rules list` shows it, a scan finds
/// with it (at `medium`, the keyword on the token's line), and a fault
/// names the file, the entry and the field.
#[test]
fn a_provider_entry_is_checked_listed_and_scanned_like_a_rule() {
    let t = Tree::new();
    t.write(
        "providers.toml",
        r#"
[[providers]]
id = "acme-api-key"
provider = "Acme"
name = "Acme API key"
docs = "https://acme.example/docs/auth"
keywords = ["acmecorp"]
alphabet = "hex-lower"
len = 32
examples = ['''ACMECORP_API_KEY=5d3f0a9c2b7e41d68f0a3c9e7b1d2f46''']
negative_examples = ['''ACMECORP_API_KEY=your-acmecorp-key''']

[[providers]]
id = "acme-session-token"
provider = "Acme"
name = "Acme session token"
docs = "https://acme.example/docs/sessions"
prefix = "acme_s."
alphabet = "alnum"
len = 30
examples = ['''token: acme_s.Wd4Nf8Zc1Hs6Qm7vT2pLx9RkAb3Ce5''']
negative_examples = ['''token: acme_s.XXXXXXXX''']

[[providers]]
id = "acme-app-token"
provider = "Acme"
name = "Acme app token"
docs = "https://acme.example/docs/apps"
keywords = ["acmeapp"]
alphabet = "alnum"
len = 24
examples = ['''ACMEAPP_TOKEN = "q8Rk2vXz1LmN4pT7wY0aBcD3"''']
negative_examples = ['''ACMEAPP_TOKEN = "WebpackOptionsNormalized"''', '''acmeapptool = "getCurrentDirectiveIndex"''']
"#,
    );
    let r = t.run(&["rules", "check", "providers.toml"]);
    r.expect(0);
    assert_eq!(r.stderr, "all examples of 3 rules pass\n");
    let r = t.run(&["rules", "list", "--rules", "providers.toml", "--providers"]);
    r.expect(0);
    assert_eq!(
        r.stdout,
        "Acme\tacme-api-key,acme-session-token,acme-app-token\t\
         https://acme.example/docs/auth https://acme.example/docs/sessions \
         https://acme.example/docs/apps\n"
    );
    t.write(
        "src/app.env",
        "ACMECORP_KEY=0f9e8d7c6b5a49382716a5b4c3d2e1f0\n\
         # acmecorp\n\
         key = 1a2b3c4d5e6f70819a8b7c6d5e4f3a2b\n\
         t = acme_s.q8Rk2vXz1LmN4pT7wY0aBcD3eF6gH9\n",
    );
    let r = t.run(&[
        "scan",
        "--rules",
        "providers.toml",
        "--format",
        "json",
        "src",
    ]);
    r.expect(1);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let got: Vec<String> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {} {}", f["rule_id"], f["confidence"], f["line"]))
        .collect();
    // Line 3's hex stands on another line than its keyword: not found.
    assert_eq!(
        got,
        [
            "\"acme-api-key\" \"medium\" 1",
            "\"acme-session-token\" \"medium\" 4"
        ]
    );
    t.write(
        "bad.toml",
        "[[providers]]\nid = \"acme-x\"\nprovider = \"Acme\"\nname = \"X\"\n\
         keywords = [\"acm\"]\nalphabet = \"hex\"\nlen = 32\n",
    );
    let r = t.run(&["rules", "check", "bad.toml"]);
    r.expect(2);
    assert!(
        r.stderr.contains("bad.toml")
            && r.stderr.contains("`acme-x`")
            && r.stderr.contains("line 1: [[providers]]: keyword \"acm\""),
        "{}",
        r.stderr
    );
}

#[test]
fn rules_check_passes_on_the_builtin_rules() {
    let r = run_in(Path::new("."), &["rules", "check"]);
    r.expect(0);
    assert_eq!(r.stdout, "");
}

#[test]
fn rules_check_on_a_file_reports_each_failing_example() {
    let t = Tree::new();
    t.write(
        "rules.toml",
        r#"
[[rules]]
id = "acme-key"
name = "Acme key"
description = "test"
regex = '''\b(acme_[a-z0-9]{16})\b'''
secretGroup = 1
keywords = ["acme_"]
examples = ["key = acme_q8w2k5n1x7c3v9b4", "key = acme_short"]
negative_examples = ["key = acme_UPPERCASEONLY00", "key = acme_r4t6y8u0i2o4p6a8"]
"#,
    );
    let r = t.run(&["rules", "check", "rules.toml"]);
    r.expect(1);
    assert_eq!(
        r.stdout,
        "acme-key: example not matched: \"key = acme_short\": the regex does not match\n\
         acme-key: negative example matched: \"key = acme_r4t6y8u0i2o4p6a8\": matched secret \
         `acme_r4t6y8u0i2o4p6a8` at line 1 column 7\n"
    );
    // One rule is one rule, not "1 rules".
    assert_eq!(r.stderr, "2 failing examples in 1 rule\n");
    t.write(
        "one.toml",
        r#"
[[rules]]
id = "acme-key"
regex = '\b(acme_[a-z0-9]{16})\b'
keywords = ["acme_"]
examples = ["key = acme_q8w2k5n1x7c3v9b4"]
"#,
    );
    let r = t.run(&["rules", "check", "one.toml"]);
    r.expect(0);
    assert_eq!(r.stderr, "all examples of 1 rule pass\n");
    // A rule with no example proves nothing: said, and counted.
    t.write(
        "bare.toml",
        "[[rules]]\nid = \"acme-key\"\nregex = '\\b(acme_[a-z0-9]{16})\\b'\nkeywords = [\"acme_\"]\n\
         examples = [\"key = acme_q8w2k5n1x7c3v9b4\"]\n\n\
         [[rules]]\nid = \"acme-secret\"\nregex = 'acmes_[a-z0-9]{16}'\nkeywords = [\"acmes_\"]\n\
         negative_examples = [\"acmes_short\"]\n",
    );
    let r = t.run(&["rules", "check", "bare.toml"]);
    r.expect(0);
    assert_eq!(
        r.stderr,
        "scanner: warning: bare.toml: rule `acme-secret`: no examples: nothing proves it finds \
         a secret (add `examples = [...]`)\n\
         all examples of 2 rules pass (1 of them without examples)\n"
    );
    t.write("broken.toml", "[[rules]]\nid = \"x\"\nregex = '''(['''\n");
    let r = t.run(&["rules", "check", "broken.toml"]);
    r.expect(2);
    assert!(
        r.stderr.contains("broken.toml") && r.stderr.contains("`x`"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------- suppression counts

#[test]
fn a_generic_finding_under_a_provider_finding_is_counted_as_a_duplicate() {
    let t = Tree::new();
    // The SQL Server rule reports the password; the generic password rule
    // matches the same bytes and is dropped, but counted.
    t.write(
        "app.cs",
        "conn = \"Server=tcp:db.internal.net,1433;Database=app;User ID=svc;Password=Vq8R7vT2xzkL9mWp;\"\n",
    );
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.locations(), ["app.cs:1:75:1:91"]);
    assert_eq!(
        r.findings()[0].rule_id,
        "sqlserver-connection-string-password"
    );
    assert_eq!(
        r.summary_line("suppressed:"),
        Some("suppressed: 1 duplicate of a provider finding")
    );
}

/// A Django `SECRET_KEY` as `django-admin startproject` writes it: 50
/// characters of `get_random_secret_key()`'s alphabet, which holds
/// `!@#$%^&*(`. The generic secret rule's alphabet has none of those, so
/// such keys were not reported at all (exit 0).
#[test]
fn django_secret_keys_as_startproject_writes_them_are_found() {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut key = || -> String {
        (0..50)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ALPHABET[(state % ALPHABET.len() as u64) as usize] as char
            })
            .collect()
    };
    let t = Tree::new();
    let mut settings = String::from("DEBUG = True\n");
    for _ in 0..8 {
        settings.push_str(&format!("SECRET_KEY = 'django-insecure-{}'\n", key()));
    }
    t.write("mysite/settings.py", settings);
    t.write(
        "deploy/.env",
        format!("X=1\nDJANGO_SECRET_KEY=\"{}\"\n", key()),
    );
    let r = t.run(&["scan", "--format", "json"]);
    let found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| format!("{}:{}:{}:{}", f.path, f.line, f.column, f.rule_id))
        .collect();
    let mut expected: Vec<String> = (2..=9)
        .map(|line| format!("mysite/settings.py:{line}:15:django-secret-key"))
        .collect();
    expected.insert(0, "deploy/.env:2:20:django-secret-key".to_owned());
    assert_eq!(found, expected);
}

/// A Kubernetes Secret whose first `stringData` value is not a secret (a
/// host name, dropped as a placeholder) had its other values never looked
/// at: the password below was not reported (exit 0). The value reported is
/// the first whose key names a credential, else the first: in a TLS Secret
/// the key, not the certificate before it.
#[test]
fn a_kubernetes_secret_reports_its_credential_value_not_just_the_first() {
    let t = Tree::new();
    t.write(
        "deploy/app-secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  DB_HOST: db.internal\n  DB_PORT: \"5432\"\n  DB_PASS: Copper-Heron-71Zq\n",
    );
    t.write(
        "deploy/db-secret.yaml",
        "apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  username: b3JkZXJzLWFwcA==\n  password: Q29wcGVyLUhlcm9uLTcxWnE=\n",
    );
    let r = t.run(&["scan", "--format", "json"]);
    let found = r.expect(1).found();
    assert_eq!(
        found,
        [
            "deploy/app-secret.yaml:8:12:29 kubernetes-secret-data",
            "deploy/db-secret.yaml:6:13:37 kubernetes-secret-data",
        ]
    );
}

/// A wp-config.php as WordPress's installer (or its secret-key service)
/// writes it: eight keys and salts of 64 characters of
/// `wp_generate_password(64, true, true)`, whose alphabet holds
/// `!@#$%^&*()-_ []{}<>~`+=,.;:/?|`. None was reported (exit 0).
#[test]
fn wordpress_keys_and_salts_are_found() {
    const ALPHABET: &[u8] =
        b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*()-_ []{}<>~`+=,.;:/?|";
    let mut state = 0x5851_f42d_4c95_7f2du64;
    let mut key = || -> String {
        (0..64)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ALPHABET[(state % ALPHABET.len() as u64) as usize] as char
            })
            .collect()
    };
    let names = [
        "AUTH_KEY",
        "SECURE_AUTH_KEY",
        "LOGGED_IN_KEY",
        "NONCE_KEY",
        "AUTH_SALT",
        "SECURE_AUTH_SALT",
        "LOGGED_IN_SALT",
        "NONCE_SALT",
    ];
    let mut config = String::from("<?php\ndefine( 'DB_NAME', 'wordpress' );\n");
    for name in names {
        config.push_str(&format!(
            "define( '{name}',{:pad$}'{}' );\n",
            "",
            key(),
            pad = 17 - name.len()
        ));
    }
    let t = Tree::new();
    t.write("wp-config.php", config);
    let r = t.run(&["scan", "--format", "json"]);
    let found = r.expect(1).found();
    let expected: Vec<String> = (3..=10)
        .map(|line| format!("wp-config.php:{line}:30:94 wordpress-auth-key-salt"))
        .collect();
    assert_eq!(found, expected);
}

/// A Laravel `.env` as `php artisan key:generate` leaves it:
/// `APP_KEY=base64:` and 32 random bytes. No rule named the key and none
/// of the generic rules' words is in `APP_KEY`: not reported (exit 0).
#[test]
fn a_laravel_app_key_is_found() {
    use base64::Engine as _;
    let key = base64::engine::general_purpose::STANDARD.encode(
        (0u8..32)
            .map(|i| i.wrapping_mul(151).wrapping_add(29))
            .collect::<Vec<u8>>(),
    );
    let t = Tree::new();
    t.write(
        ".env",
        format!("APP_NAME=Laravel\nAPP_ENV=production\nAPP_KEY=base64:{key}\nAPP_DEBUG=false\n"),
    );
    let r = t.run(&["scan", "--format", "json"]);
    let found = r.expect(1).found();
    assert_eq!(found, [".env:3:9:60 laravel-app-key"]);
}

/// Oracle's JDBC thin URL carries the credentials before the host,
/// `jdbc:oracle:thin:USER/PASSWORD@//host:port/service`: the JDBC rule,
/// which says it covers Oracle, read only `password=` parameters, and the
/// password below was not reported (exit 0).
#[test]
fn an_oracle_jdbc_url_with_a_password_is_found() {
    let t = Tree::new();
    t.write(
        "src/main/resources/application.properties",
        "spring.datasource.url=jdbc:oracle:thin:scott/Tg5hY6uJ7iK8@//db.internal:1521/ORCL\n\
         other.url=jdbc:oracle:thin:@//db.internal:1521/ORCL\n",
    );
    let r = t.run(&["scan", "--format", "json"]);
    let found = r.expect(1).found();
    assert_eq!(
        found,
        ["src/main/resources/application.properties:1:46:58 jdbc-connection-password"]
    );
}

/// Confidence in every format, and `--min-confidence` filtering (counted).
#[test]
fn confidence_is_reported_and_filters() {
    let t = Tree::new();
    t.write("app.env", secret_line(1));
    // A token whose checksum does not hold: low.
    let mut bad = token(2);
    let last = bad.pop().unwrap();
    bad.push(if last == 'a' { 'b' } else { 'a' });
    t.write("other.env", format!("T={bad}\n"));
    let r = t.run(&["scan", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.expect(1).stdout).unwrap();
    let levels: Vec<(&str, &str)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap(),
                f["confidence"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(levels, [("app.env", "high"), ("other.env", "low")]);
    let r = t.run(&["scan", "--format", "json", "--min-confidence", "medium"]);
    assert_eq!(r.expect(1).locations(), ["app.env:1:3:1:43"]);
    assert_eq!(
        r.summary_line("suppressed"),
        Some("suppressed: 1 below --min-confidence")
    );
}

/// A Rust unit-test module makes its findings low, also in the chunks of a
/// large file that come after the one holding `#[cfg(test)]`.
#[test]
fn rust_test_modules_are_low_across_chunks() {
    let t = Tree::new();
    let mut text = format!(
        "const T: &str = \"{}\";\n#[cfg(test)]\nmod tests {{\n",
        token(1)
    );
    text.push_str(&"    // a comment line of the test module\n".repeat(200));
    text.push_str(&format!("    const U: &str = \"{}\";\n}}\n", token(2)));
    t.write("lib.rs", &text);
    for chunk in ["1024", "4096", "1M"] {
        let r = t.run(&["scan", "--format", "json", "--chunk-size", chunk]);
        let v: serde_json::Value = serde_json::from_str(&r.expect(1).stdout).unwrap();
        let got: Vec<(u64, &str, String)> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["line"].as_u64().unwrap(),
                    f["confidence"].as_str().unwrap(),
                    f["tags"].to_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, "high", r#"["prefix","checksum-valid"]"#.to_string()),
                (
                    204,
                    "low",
                    r#"["prefix","checksum-valid","test-code"]"#.to_string()
                ),
            ],
            "chunk size {chunk}"
        );
    }
}

/// A user rule whose regex parses but cannot be compiled is an error naming
/// the file, the rule and the compiler's reason, not a silently inert rule.
#[test]
fn a_user_rule_that_cannot_compile_is_an_error() {
    let t = Tree::new();
    t.write("a.txt", "nothing\n");
    t.write(
        "big.toml",
        "[[rules]]\nid = \"too-big\"\nregex = '''x([\\p{L}\\p{N}]{8,256}){8,256}'''\nkeywords = [\"x\"]\n",
    );
    let r = t.run(&["scan", "--rules", "big.toml", "a.txt"]);
    r.expect(2);
    assert!(r.stderr.contains("big.toml"), "{}", r.stderr);
    assert!(r.stderr.contains("too-big"), "{}", r.stderr);
    assert!(r.stderr.contains("cannot compile"), "{}", r.stderr);
}

/// A file's first KiB is read once for the sniffs and is the start of its
/// first chunk: a secret across that edge, at any chunk size, is found once.
#[test]
fn a_secret_across_the_sniffed_head_is_found_once() {
    let t = Tree::new();
    let mut text = "x".repeat(990);
    text.push_str(&format!("\nT={}\n", token(30)));
    text.push_str(&"tail line\n".repeat(300));
    t.write("head.txt", text);
    for chunk in ["64", "1000", "1024", "4096"] {
        let r = t.run(&["scan", "--format", "json", "--chunk-size", chunk]);
        assert_eq!(
            r.expect(1).locations(),
            ["head.txt:2:3:2:43"],
            "chunk {chunk}"
        );
    }
}

// ---------------------------------------------------------------- --log-level

/// gitleaks' `--log-level error`: warnings, notes and the summary go, the
/// report and the exit status stay; an error is still said.
#[cfg(unix)]
#[test]
fn log_level_error_hides_warnings_and_summary_but_keeps_exit_status_and_errors() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    std::os::unix::fs::symlink("nowhere", t.join("broken")).unwrap();

    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    assert!(
        r.stderr
            .contains("scanner: warning: broken: broken symbolic link"),
        "{}",
        r.stderr
    );
    let r = t.run(&["scan", "--format", "json", "--log-level", "warn"]);
    r.expect(1);
    assert!(
        r.stderr.contains("scanner: warning: broken:"),
        "{}",
        r.stderr
    );
    assert!(r.summary_line("scanned ").is_some(), "{}", r.stderr);

    let r = t.run(&["scan", "--format", "json", "--log-level", "error"]);
    r.expect(1);
    assert_eq!(r.locations(), ["a.txt:1:3:1:43"]);
    assert_eq!(r.stderr, "");

    let r = t.run(&["scan", "--log-level", "error", "missing"]);
    r.expect(2);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.starts_with("scanner: error: missing: "),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

// ------------------------------------------------------- the first hour: wording

/// A lowered confidence says why in the text report, from the tags the JSON report carries: a
/// made-up token (its GitHub checksum fails) in a test path.
#[test]
fn text_report_says_why_a_confidence_is_lowered() {
    let t = Tree::new();
    let good = token(70);
    // Another last character: the checksum (the last 6 characters) no longer matches.
    let last = if good.ends_with('A') { 'B' } else { 'A' };
    let fake = format!("{}{last}", &good[..good.len() - 1]);
    t.write("tests/fixture.env", format!("T={fake}\n"));
    t.write("app.env", format!("T={good}\n"));
    let r = t.run(&["scan", "--color", "never"]);
    r.expect(1);
    assert_eq!(
        r.stdout,
        format!(
            "app.env:1:3  {RULE}  ghp_…\n\
             tests/fixture.env:1:3  {RULE} [low: fails GitHub checksum, test path]  ghp_…\n"
        )
    );
    let json = t.run(&["scan", "--format", "json", "tests"]);
    let v: serde_json::Value = serde_json::from_str(&json.expect(1).stdout).unwrap();
    assert_eq!(
        v[0]["tags"],
        serde_json::json!(["prefix", "checksum-invalid", "test-path"])
    );
}

/// The text report is sorted as JSON is (path, line, column), so two runs print the same
/// bytes whatever the thread count and the order files complete in.
#[test]
fn text_report_is_sorted_like_json_and_stable() {
    let t = Tree::new();
    for i in 0..40u32 {
        // Larger files first in name order, so that completion order differs from it.
        let pad = "x = 1\n".repeat(((40 - i) * 200) as usize);
        t.write(
            format!("d{}/f{i:02}.env", i % 3),
            format!("{pad}A={}\nB={}\n", token(100 + i), token(200 + i)),
        );
    }
    let text = |threads: &str| {
        let r = t.run(&["scan", "--color", "never", "-j", threads]);
        r.expect(1);
        r.stdout.clone()
    };
    let one = text("1");
    assert_eq!(one, text("4"));
    assert_eq!(one, text("4"));
    let json = t.run(&["scan", "--format", "json", "-j", "4"]);
    let from_json: Vec<String> = json
        .expect(1)
        .findings()
        .iter()
        .map(|f| format!("{}:{}:{}", f.path, f.line, f.column))
        .collect();
    let from_text: Vec<String> = one
        .lines()
        .map(|l| l.split("  ").next().unwrap().to_string())
        .collect();
    assert_eq!(from_text.len(), 80);
    assert_eq!(from_text, from_json);
    let help = t.run(&["scan", "--help"]);
    let help = help.expect(0).stdout.split_whitespace().collect::<Vec<_>>();
    assert!(
        help.join(" ").contains(
            "both are sorted by path, line and column, identical whatever the thread count, \
             and written when the scan ends. `jsonl` streams"
        ),
        "{help:?}"
    );
}

/// A generic assignment whose value is a provider's token is one finding, under the
/// provider's id; the generic match is counted as the duplicate it is, not as an allowlist
/// drop.
#[test]
fn a_generic_match_shadowed_by_a_provider_is_counted_as_a_duplicate() {
    let t = Tree::new();
    t.write("app.py", format!("api_key = \"{}\"\n", token(71)));
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), ["app.py:1:12:1:52"]);
    assert_eq!(
        r.summary_line("suppressed"),
        Some("suppressed: 1 duplicate of a provider finding")
    );
    // -v lists the allowlist drops; the duplicate is only counted.
    let r = t.run(&["scan", "-v", "--format", "json"]);
    assert!(
        !r.expect(1).stderr.contains("scanner: suppressed:"),
        "{}",
        r.stderr
    );
}

/// `--help` states each default once, says that `--redact` is not a choice, and how `-q`,
/// `-v` and `--log-level` relate.
#[test]
fn scan_help_says_each_default_once_and_how_the_switches_relate() {
    let t = Tree::new();
    let r = t.run(&["scan", "--help"]);
    let help = &r.expect(0).stdout;
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!flat.contains("Default 3"), "{flat}");
    assert!(!flat.contains("(default 1;"), "{flat}");
    assert_eq!(flat.matches("[default: 3]").count(), 1, "{flat}");
    assert!(
        flat.contains(
            "--redact[=<PERCENT>] Does nothing: secrets are always redacted unless --show-secrets."
        ),
        "{flat}"
    );
    assert!(
        flat.contains(
            "`--log-level error` (errors only) < the default `warn` (warnings, notes, summary) \
             < -v, the same as `--log-level info`"
        ),
        "{flat}"
    );
}
