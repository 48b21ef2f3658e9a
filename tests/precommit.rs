//! Pre-commit and CI features on real git repositories in temp dirs: `--staged`, `--diff`,
//! inline allows, baselines, `.scanner.toml`, and the hook `scanner hook install` writes.
//!
//! Secrets are built at run time from pieces (a GitHub classic PAT: `ghp_` and 36
//! alphanumerics from a seeded generator), so this file holds no literal token.

use std::ffi::OsStr;
use std::process::Command;

mod common;
use common::{git_ok, isolate, token, Repo, Run, BIN, RULE};

fn staged(repo: &Repo) -> Run {
    repo.scan(&["scan", "--staged", "--format", "json"])
}

// ---------------------------------------------------------------------------------------------
// --staged

#[test]
fn staged_secret_is_reported_with_path_and_line_of_the_staged_content() {
    let r = Repo::new();
    r.write(
        "app/settings.py",
        format!("# settings\nDEBUG = False\nTOKEN = \"{}\"\n", token(1)),
    );
    r.git(&["add", "app/settings.py"]);
    // The working tree no longer has it: the index is what gets committed.
    r.write("app/settings.py", "# settings\n");
    let run = r.scan(&["scan", "--staged", "--format", "text", "--color", "never"]);
    run.expect(1);
    assert!(run.stdout.contains("app/settings.py:3:"), "{}", run.stdout);
    assert_eq!(staged(&r).expect(1).path_lines(), vec!["app/settings.py:3"]);
}

/// One scope filter for every source: `--exclude` applies to staged blobs as
/// to walked files, and the skip is counted.
#[test]
fn staged_blobs_honour_exclude_like_a_walk() {
    let r = Repo::new();
    r.write("vendor/a.env", format!("KEY={}\n", token(4)));
    r.write("app/b.env", format!("KEY={}\n", token(5)));
    r.git(&["add", "."]);
    let run = r.scan(&[
        "scan",
        "--staged",
        "--format",
        "json",
        "--exclude",
        "vendor/",
    ]);
    assert_eq!(run.expect(1).path_lines(), vec!["app/b.env:1"]);
    assert_eq!(
        run.summary_line("not scanned"),
        Some("not scanned: 1 excluded")
    );
    // The same tree walked: the same answer.
    let walked = r.scan(&["scan", "--format", "json", "--exclude", "vendor/"]);
    assert_eq!(walked.expect(1).path_lines(), vec!["app/b.env:1"]);
}

/// What git would commit is scanned, and what it would not is counted: a
/// staged symlink's target is scanned (a token can hide there), an
/// unmerged path during a merge is counted as skipped.
#[test]
fn staged_symlinks_are_scanned_and_unmerged_paths_counted() {
    let r = Repo::new();
    r.write("conflict.txt", "base\n");
    r.git(&["add", "."]);
    r.commit("base");
    r.git(&["checkout", "-q", "-b", "side"]);
    r.write("conflict.txt", "side\n");
    r.git(&["commit", "-q", "--no-verify", "-am", "side"]);
    r.git(&["checkout", "-q", "main"]);
    r.write("conflict.txt", "main\n");
    r.git(&["commit", "-q", "--no-verify", "-am", "main"]);
    let merge = r.git_out(&["merge", "-q", "side"]);
    assert!(!merge.status.success(), "the merge must conflict");
    std::os::unix::fs::symlink(token(6), r.path("link")).unwrap();
    r.git(&["add", "link"]);
    let run = staged(&r);
    assert_eq!(run.expect(1).path_lines(), vec!["link:1"]);
    assert_eq!(
        run.summary_line("not scanned"),
        Some("not scanned: 1 unmerged")
    );
}

#[test]
fn secret_only_in_the_working_tree_is_not_reported() {
    let r = Repo::new();
    r.write("a.txt", "clean\n");
    r.git(&["add", "a.txt"]);
    r.commit("one");
    r.write("a.txt", format!("clean\nkey={}\n", token(2)));
    r.write("untracked.txt", format!("key={}\n", token(3)));
    assert!(staged(&r).expect(0).path_lines().is_empty());
}

#[test]
fn secret_staged_then_unstaged_is_not_reported() {
    // With a commit: git restore --staged.
    let r = Repo::new();
    r.write("a.txt", "clean\n");
    r.git(&["add", "a.txt"]);
    r.commit("one");
    r.write("a.txt", format!("clean\nkey={}\n", token(4)));
    r.git(&["add", "a.txt"]);
    staged(&r).expect(1);
    r.git(&["restore", "--staged", "a.txt"]);
    staged(&r).expect(0);

    // Without a commit: git rm --cached.
    let r = Repo::new();
    r.write("b.txt", format!("key={}\n", token(5)));
    r.git(&["add", "b.txt"]);
    staged(&r).expect(1);
    r.git(&["rm", "-q", "--cached", "b.txt"]);
    staged(&r).expect(0);
}

#[test]
fn no_commits_yet_and_from_a_subdirectory() {
    let r = Repo::new();
    r.write("svc/deep/conf.env", format!("\n\nGH={}\n", token(6)));
    r.git(&["add", "."]);
    // Paths stay relative to the repository root.
    let run = r.scan_in("svc/deep", &["scan", "--staged", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["svc/deep/conf.env:3"]);
    let run = r.scan_in(
        "svc",
        &["scan", "--staged", "--format", "text", "--color", "never"],
    );
    assert!(
        run.expect(1).stdout.contains("svc/deep/conf.env:3:"),
        "{}",
        run.stdout
    );
}

#[test]
fn odd_file_names_survive() {
    let r = Repo::new();
    r.write("with space.txt", format!("x={}\n", token(7)));
    r.write("new\nline.txt", format!("\nx={}\n", token(8)));
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        r.write(
            OsStr::from_bytes(b"caf\xe9.txt"),
            format!("\n\nx={}\n", token(9)),
        );
    }
    r.git(&["add", "."]);
    let mut expect = vec![
        "new\nline.txt:2".to_string(),
        "with space.txt:1".to_string(),
    ];
    if cfg!(unix) {
        expect.push("caf\u{fffd}.txt:3".to_string());
        expect.sort();
    }
    assert_eq!(staged(&r).expect(1).path_lines(), expect);
}

#[test]
fn deleted_renamed_and_binary_files() {
    let r = Repo::new();
    r.write("old.txt", format!("x={}\n", token(10)));
    r.write("gone.txt", format!("x={}\n", token(11)));
    r.commit_all();
    // A staged deletion has nothing to scan.
    r.git(&["rm", "-q", "gone.txt"]);
    staged(&r).expect(0);
    // A rename stages the content under its new path, which is scanned.
    r.git(&["mv", "old.txt", "new.txt"]);
    assert_eq!(staged(&r).expect(1).path_lines(), vec!["new.txt:1"]);
    r.commit("rename");
    // A binary blob (a NUL in the first 8 KiB) is skipped unless --binary.
    let mut bin = b"\x00\x01\x02 ".to_vec();
    bin.extend_from_slice(format!("\nx={}\n", token(12)).as_bytes());
    r.write("blob.bin", &bin);
    r.git(&["add", "blob.bin"]);
    staged(&r).expect(0);
    let run = r.scan(&["scan", "--staged", "--binary", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["blob.bin:2"]);
}

impl Repo {
    fn commit_all(&self) {
        self.git(&["add", "-A"]);
        self.commit("all");
    }
}

#[test]
fn inline_allow_both_spellings() {
    let r = Repo::new();
    r.write(
        "a.py",
        format!(
            "A = \"{}\"  # scanner:allow\nB = \"{}\"  # gitleaks:allow\n",
            token(13),
            token(14)
        ),
    );
    r.git(&["add", "a.py"]);
    staged(&r).expect(0);
    r.write("b.py", format!("C = \"{}\"  # scanner:alow\n", token(15)));
    r.git(&["add", "b.py"]);
    assert_eq!(staged(&r).expect(1).path_lines(), vec!["b.py:1"]);
}

#[test]
fn staged_and_diff_outside_a_repository_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [&["scan", "--staged"][..], &["scan", "--diff", "HEAD"][..]] {
        let out = isolate(Command::new(BIN).current_dir(tmp.path()).args(args))
            .env("GIT_CEILING_DIRECTORIES", tmp.path().parent().unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        // One sentence, naming the directory and the flag.
        assert_eq!(
            stderr,
            format!(
                "scanner: error: not a git repository: {} ({} needs one)\n",
                tmp.path().canonicalize().unwrap().display(),
                args[1]
            )
        );
    }
}

// ---------------------------------------------------------------------------------------------
// --diff

#[test]
fn diff_reports_added_lines_only() {
    let r = Repo::new();
    r.write("a.txt", format!("one\nold={}\nthree\n", token(16)));
    r.write("b.txt", format!("old={}\n", token(17)));
    r.commit_all();
    r.git(&["branch", "base"]);
    // Edit around the old secret, add a new one on line 6.
    r.write(
        "a.txt",
        format!(
            "zero\none\nold={}\nthree\nfour\nnew={}\n",
            token(16),
            token(18)
        ),
    );
    r.write("c.txt", format!("\nfresh={}\n", token(19)));
    r.git(&["add", "-N", "c.txt"]);
    let run = r.scan(&["scan", "--diff", "base", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["a.txt:6", "c.txt:2"]);
    // A committed change is a change since base as well.
    r.commit_all();
    let run = r.scan(&["scan", "--diff", "base", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["a.txt:6", "c.txt:2"]);
    // Nothing added since HEAD.
    r.write("b.txt", format!("old={}\nunrelated\n", token(17)));
    r.scan(&["scan", "--diff", "HEAD", "--format", "json"])
        .expect(0);
}

/// An archive and a UTF-16 file that the change adds: their findings are reported (git called
/// them binary and gave no added line: both were left out without a count, exit 0).
#[test]
fn diff_scans_an_added_archive_and_utf16_file_whole() {
    let r = Repo::new();
    r.write("r.txt", "x\n");
    r.commit_all();
    r.git(&["branch", "base"]);
    r.write("lib/a.env", format!("name=x\nT={}\n", token(60)));
    common::sh(&r.path("lib"), "zip -q ../app.jar a.env && rm a.env");
    let reg = format!("\r\nT={}\r\n", token(61));
    let mut le = vec![0xFF, 0xFE];
    le.extend(reg.encode_utf16().flat_map(u16::to_le_bytes));
    r.write("export.reg", le);
    r.commit_all();
    let run = r.scan(&["scan", "--diff", "base", "--format", "json"]);
    assert_eq!(
        run.expect(1).path_lines(),
        ["app.jar!a.env:2", "export.reg:2"]
    );
    // An unchanged archive is not scanned again.
    r.write("r.txt", "y\n");
    r.scan(&["scan", "--diff", "HEAD", "--format", "json"])
        .expect(0);
}

// ---------------------------------------------------------------------------------------------
// Baselines

#[test]
fn baseline_round_trip_moved_code_new_secret_and_unused() {
    let r = Repo::new();
    r.write(
        "src/a.rs",
        format!("fn main() {{}}\nconst T: &str = \"{}\";\n", token(20)),
    );
    r.write("src/b.rs", format!("const U: &str = \"{}\";\n", token(21)));
    let run = r.scan(&[
        "scan",
        "--write-baseline",
        "baseline.json",
        "--format",
        "json",
        "src",
    ]);
    // Writing the baseline is what was asked: exit 0, and it says so.
    assert_eq!(run.expect(0).path_lines(), vec!["src/a.rs:2", "src/b.rs:1"]);
    assert_eq!(
        run.stderr.lines().next(),
        Some("scanner: wrote 2 findings to baseline.json")
    );
    let text = std::fs::read_to_string(r.path("baseline.json")).unwrap();
    let b: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(b["version"], 1);
    let entries = b["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["path"], "src/a.rs");
    assert_eq!(entries[0]["line"], 2);
    assert_eq!(entries[0]["rule_id"], RULE);
    assert!(
        !text.contains(&token(20)),
        "the baseline must not hold the secret"
    );

    let base = ["scan", "--baseline", "baseline.json", "--format", "json"];
    let with = |extra: &[&str]| r.scan(&[&base[..], extra].concat());
    with(&["src"]).expect(0);
    // From elsewhere, with another spelling of the paths.
    r.scan_in("src", &["scan", "--baseline", "../baseline.json", "."])
        .expect(0);

    // Moved code stays suppressed.
    r.write(
        "src/a.rs",
        format!(
            "// moved\n\n\nfn main() {{}}\nconst T: &str = \"{}\";\n",
            token(20)
        ),
    );
    with(&["src"]).expect(0);

    // A different secret on the same line is reported.
    r.write("src/b.rs", format!("const U: &str = \"{}\";\n", token(22)));
    assert_eq!(with(&["src"]).expect(1).path_lines(), vec!["src/b.rs:1"]);

    // The same secret copied into another file is reported (matching is fingerprint + path).
    r.write("src/b.rs", format!("const U: &str = \"{}\";\n", token(21)));
    r.write("src/c.rs", format!("const V: &str = \"{}\";\n", token(21)));
    assert_eq!(with(&["src"]).expect(1).path_lines(), vec!["src/c.rs:1"]);
    std::fs::remove_file(r.path("src/c.rs")).unwrap();

    // --report-unused lists what no longer matches.
    r.write("src/a.rs", "fn main() {}\n");
    let run = with(&["--report-unused", "src"]);
    run.expect(0);
    assert!(
        run.stderr.contains("unused baseline entry"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("src/a.rs:2"), "{}", run.stderr);
    assert!(!run.stderr.contains("src/b.rs"), "{}", run.stderr);

    // Staged scans use the same baseline.
    r.write("src/a.rs", format!("const T: &str = \"{}\";\n", token(20)));
    r.git(&["add", "src"]);
    r.scan_in(
        "src",
        &["scan", "--staged", "--baseline", "../baseline.json"],
    )
    .expect(0);
}

/// The files a run reads or writes besides its inputs are never scanned: the baseline it
/// writes or reads and the `--stats-json` file, as `-o`.
#[test]
fn baselines_and_stats_files_are_not_scanned_as_inputs() {
    let r = Repo::new();
    r.write("a.txt", format!("x={}\n", token(60)));
    let run = r.scan(&[
        "scan",
        "--write-baseline",
        "b.json",
        "--stats-json",
        "stats.json",
    ]);
    run.expect(0);
    assert_eq!(
        run.stderr.lines().next(),
        Some("scanner: wrote 1 finding to b.json")
    );
    let run = r.scan(&["scan", "--baseline", "b.json", "--stats-json", "stats.json"]);
    run.expect(0);
    assert_eq!(
        run.summary_line("not scanned"),
        Some("not scanned: 2 own report")
    );
    assert!(run.stderr.starts_with("scanned 1 file "), "{}", run.stderr);
    // Without those flags both are ordinary files of the tree.
    let run = r.scan(&["scan"]);
    assert!(
        run.expect(1).stderr.starts_with("scanned 3 files "),
        "{}",
        run.stderr
    );
}

#[test]
fn suppressions_are_counted_by_reason() {
    let r = Repo::new();
    r.write("a.txt", format!("x={}\n", token(23)));
    r.scan(&["scan", "--write-baseline", "b.json", "a.txt"])
        .expect(0);
    let run = r.scan(&["scan", "--baseline", "b.json", "a.txt"]);
    assert!(run.expect(0).stderr.contains("baseline"), "{}", run.stderr);
}

/// `-v` lists each suppressed finding with the reason the summary counts it under: the
/// engine's inline allow and the sink's baseline alike, in the order of the file.
#[test]
fn verbose_lists_each_suppressed_finding_with_its_reason() {
    let r = Repo::new();
    r.write(
        "a.py",
        format!(
            "A = \"{}\"  # scanner:allow\nB = \"{}\"\nC = \"{}\"\n",
            token(41),
            token(42),
            token(43)
        ),
    );
    // Records B and C: A is allowed before the baseline sees it.
    r.scan(&["scan", "--write-baseline", "b.json", "a.py"])
        .expect(0);
    r.write(
        "a.py",
        format!(
            "A = \"{}\"  # scanner:allow\nB = \"{}\"\nC = \"{}\"\n",
            token(41),
            token(42),
            token(44)
        ),
    );
    let suppressed = |run: &Run| -> Vec<String> {
        run.stderr
            .lines()
            .filter(|l| l.starts_with("scanner: suppressed:"))
            .map(String::from)
            .collect()
    };
    let want = [
        format!("scanner: suppressed: a.py:1:6: rule `{RULE}`: inline allow"),
        format!("scanner: suppressed: a.py:2:6: rule `{RULE}`: baseline"),
    ];
    for verbose in [&["-v"][..], &["--verbose"], &["--log-level", "info"]] {
        let args = [
            &["scan", "--baseline", "b.json", "--format", "json"][..],
            verbose,
            &["a.py"],
        ];
        let run = r.scan(&args.concat());
        // C changed: a new secret, reported.
        assert_eq!(run.expect(1).path_lines(), vec!["a.py:3"]);
        assert_eq!(suppressed(&run), want, "{}", run.stderr);
        assert_eq!(
            run.summary_line("suppressed:"),
            Some("suppressed: 1 baseline, 1 inline allow"),
            "{}",
            run.stderr
        );
    }
    // Without -v: the same counts, nothing listed.
    let run = r.scan(&["scan", "--baseline", "b.json", "--format", "json", "a.py"]);
    assert_eq!(run.expect(1).path_lines(), vec!["a.py:3"]);
    assert_eq!(suppressed(&run), Vec::<String>::new());
    assert_eq!(
        run.summary_line("suppressed:"),
        Some("suppressed: 1 baseline, 1 inline allow")
    );
}

// ---------------------------------------------------------------------------------------------
// .scanner.toml

#[test]
fn config_found_from_a_subdirectory() {
    let r = Repo::new();
    r.write("pkg/lib/a.txt", format!("x={}\n", token(24)));
    r.scan_in("pkg/lib", &["scan", "--format", "json", "."])
        .expect(1);
    r.write(".scanner.toml", format!("disable_rules = [\"{RULE}\"]\n"));
    r.scan_in("pkg/lib", &["scan", "--format", "json", "."])
        .expect(0);
    r.scan_in("pkg/lib", &["scan", "--no-config", "--format", "json", "."])
        .expect(1);
    // --staged from a subdirectory finds it too.
    r.git(&["add", "pkg"]);
    r.scan_in("pkg/lib", &["scan", "--staged"]).expect(0);
    r.scan_in("pkg/lib", &["scan", "--staged", "--no-config"])
        .expect(1);
}

#[test]
fn config_allow_paths_and_allow_secrets() {
    let r = Repo::new();
    let t = token(25);
    r.write("fixtures/x.txt", format!("x={}\n", token(26)));
    r.write("src/y.txt", format!("y={t}\n"));
    r.write("src/z.txt", format!("z={}\n", token(27)));
    let run = r.scan(&["scan", "--format", "json"]);
    assert_eq!(
        run.expect(1).path_lines(),
        vec!["fixtures/x.txt:1", "src/y.txt:1", "src/z.txt:1"]
    );
    r.write(
        ".scanner.toml",
        format!(
            "allow_paths = [\"fixtures/\"]\nallow_secrets = [\"^{}\"]\n",
            &t[..12]
        ),
    );
    let run = r.scan(&["scan", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["src/z.txt:1"]);
    // Per-rule overrides.
    r.write(
        ".scanner.toml",
        format!(
            "[rules.{RULE}]\nallow_paths = [\"src/z.txt\"]\nallow_secrets = [\"^{}\"]\n",
            &t[..12]
        ),
    );
    let run = r.scan(&["scan", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["fixtures/x.txt:1"]);
    // --config names another file.
    r.write("other.toml", "allow_paths = [\"src/\", \"fixtures/\"]\n");
    r.scan(&["scan", "--config", "other.toml", "."]).expect(0);
}

#[test]
fn config_allow_paths_apply_to_staged_blobs_and_diff_from_a_subdirectory() {
    let r = Repo::new();
    r.write(".scanner.toml", "allow_paths = [\"/fixtures/\"]\n");
    r.write("fixtures/a.txt", format!("x={}\n", token(31)));
    r.write("app/b.txt", format!("\ny={}\n", token(32)));
    r.git(&["add", "fixtures", "app"]);
    // From a subdirectory: blob paths are relative to the root, as the globs are.
    let run = r.scan_in("app", &["scan", "--staged", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["app/b.txt:2"]);
    assert!(run.stderr.contains("1 allowlisted path"), "{}", run.stderr);

    r.commit("one");
    r.write("app/b.txt", format!("\ny={}\nz={}\n", token(32), token(33)));
    let run = r.scan_in("app", &["scan", "--diff", "HEAD", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), vec!["b.txt:3"]);
}

#[test]
fn config_rule_entropy_override_and_unknown_rule() {
    let r = Repo::new();
    r.write("a.txt", format!("x={}\n", token(30)));
    r.scan(&["scan"]).expect(1);
    // No 40-byte secret reaches 7.9 bits per byte: the raised threshold drops it.
    r.write(".scanner.toml", format!("[rules.{RULE}]\nentropy = 7.9\n"));
    r.scan(&["scan"]).expect(0);
    r.write(".scanner.toml", format!("[rules.{RULE}]\nentropy = 1.0\n"));
    r.scan(&["scan"]).expect(1);
    r.write(".scanner.toml", "[rules.no-such-rule]\nentropy = 1.0\n");
    let run = r.scan(&["scan"]);
    run.expect(2);
    let want = format!(
        "{}: `rules.no-such-rule`",
        r.path(".scanner.toml").display()
    );
    assert!(run.stderr.contains(&want), "{}", run.stderr);
}

#[test]
fn config_unknown_key_is_an_error_naming_file_and_key() {
    let r = Repo::new();
    r.write("a.txt", "clean\n");
    r.write(
        ".scanner.toml",
        "disable_rules = []\nallow_path = [\"x\"]\n",
    );
    let run = r.scan_in(".", &["scan", "."]);
    run.expect(2);
    let file = r.path(".scanner.toml");
    assert!(
        run.stderr.contains(&format!("{}:2", file.display())),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("allow_path"), "{}", run.stderr);
    r.write(".scanner.toml", format!("[rules.{RULE}]\nentropyy = 3.0\n"));
    let run = r.scan(&["scan", "."]);
    run.expect(2);
    assert!(run.stderr.contains("entropyy"), "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------------
// scanner hook install

#[test]
fn installed_hook_blocks_a_secret_and_lets_a_clean_commit_through() {
    let r = Repo::new();
    let run = r.scan(&["hook", "install"]);
    run.expect(0);
    let hook = std::fs::read_to_string(r.path(".git/hooks/pre-commit")).unwrap();
    assert!(
        hook.contains(BIN),
        "the hook calls this binary by absolute path:\n{hook}"
    );
    // Idempotent.
    r.scan(&["hook", "install"]).expect(0);

    r.write("clean.txt", "hello\n");
    r.git(&["add", "clean.txt"]);
    let out = r.git_out(&["commit", "-q", "-m", "clean"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    r.write("leak.txt", format!("\nx={}\n", token(28)));
    r.git(&["add", "leak.txt"]);
    let out = r.git_out(&["commit", "-q", "-m", "leak"]);
    assert_eq!(out.status.code(), Some(1), "the commit must be refused");
    // Git sends a hook's stdout to its stderr.
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("leak.txt:2:"), "{said}");
    let log = r.git_out(&["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "clean\n");

    // `git commit -a` uses a temporary index: the hook must see it.
    r.git(&["rm", "-q", "--cached", "leak.txt"]);
    std::fs::remove_file(r.path("leak.txt")).unwrap();
    r.write("clean.txt", format!("hello\ny={}\n", token(29)));
    let out = r.git_out(&["commit", "-q", "-a", "-m", "leak via -a"]);
    assert_eq!(out.status.code(), Some(1), "commit -a must be refused");
}

/// One configuration for every mode: the `baseline` of `.scanner.toml` applies to plain scans,
/// `--staged`, `--diff`, `--history` and the installed hook, with no flag anywhere. A refused
/// commit says so in one sentence and gives one command per way out; `scanner baseline add`
/// takes the way that the team accepts, and the same `git commit` then goes through.
#[test]
fn a_refused_commit_explains_itself_and_the_config_baseline_applies_to_every_mode() {
    let r = Repo::new();
    r.write("README.md", "hello\n");
    r.git(&["add", "README.md"]);
    r.commit("init");
    r.scan(&["hook", "install"]).expect(0);

    r.write("app.py", format!("x = 1\nTOKEN = \"{}\"\n", token(50)));
    r.git(&["add", "app.py"]);
    let out = r.git_out(&["commit", "-q", "-m", "leak"]);
    assert_eq!(out.status.code(), Some(1), "the commit must be refused");
    let said = String::from_utf8_lossy(&out.stderr);
    let explained: Vec<&str> = said
        .lines()
        .skip_while(|l| !l.starts_with("scanner: commit refused"))
        .collect();
    assert_eq!(
        explained,
        [
            "scanner: commit refused: the staged changes hold a secret (listed above). Ways \
             out, run from the repository root:",
            "  remove it:         edit app.py:2, then `git add app.py` (and revoke it if it was \
             real)",
            "  a false positive:  append a `scanner:allow` comment to app.py:2, then `git add \
             app.py`",
            &format!(
                "  accept it:         set `baseline = \".scanner-baseline.json\"` in \
                 .scanner.toml, then `{} baseline add --staged app.py:2` and `git add` both \
                 files",
                canonical_bin()
            ),
            "  skip the check:    `git commit --no-verify` (the secret then enters the history, \
             and every clone and push carries it)",
        ],
        "{said}"
    );

    // The way the team accepts: the baseline, named once in the configuration.
    r.write(".scanner.toml", "baseline = \".scanner-baseline.json\"\n");
    let run = r.scan(&["baseline", "add", "app.py:2"]);
    run.expect(0);
    assert_eq!(
        run.stderr,
        format!(
            "scanner: note: config {}\nscanner: added 1 finding to {} (1 in all):\n  \
             app.py:2  {RULE}\n",
            r.path(".scanner.toml").display(),
            r.path(".scanner-baseline.json").display()
        )
    );
    // Nothing more to add there: an error that says why, and the file is unchanged.
    let baseline = std::fs::read_to_string(r.path(".scanner-baseline.json")).unwrap();
    let run = r.scan(&["baseline", "add", "app.py:2"]);
    assert!(run
        .expect(2)
        .stderr
        .contains("no finding to add at app.py:2"));
    assert_eq!(
        std::fs::read_to_string(r.path(".scanner-baseline.json")).unwrap(),
        baseline
    );
    r.git(&["add", ".scanner.toml", ".scanner-baseline.json"]);
    let out = r.git_out(&["commit", "-q", "-m", "accepted"]);
    assert!(
        out.status.success(),
        "the same commit with the baseline: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Every mode honours it without a flag, and finds the token without the configuration.
    for mode in [&[][..], &["--history"], &["--diff", "HEAD~1"]] {
        let with = r.scan(&[&["scan", "--format", "json"][..], mode].concat());
        assert_eq!(
            with.expect(0).path_lines(),
            Vec::<String>::new(),
            "{mode:?}"
        );
        assert!(
            with.stderr.contains("1 baseline"),
            "{mode:?}: {}",
            with.stderr
        );
        let without = r.scan(&[&["scan", "--format", "json", "--no-config"][..], mode].concat());
        assert_eq!(without.expect(1).path_lines(), ["app.py:2"], "{mode:?}");
    }
    // The baseline file is read, never scanned as an input.
    let plain = r.scan(&["scan"]);
    assert_eq!(
        plain.expect(0).summary_line("not scanned"),
        Some("not scanned: 1 own report")
    );
    r.write("app.py", format!("x = 2\nTOKEN = \"{}\"\n", token(50)));
    r.git(&["add", "app.py"]);
    assert!(staged(&r).expect(0).stderr.contains("1 baseline"));
    let out = r.git_out(&["commit", "-q", "-m", "edit around it"]);
    assert!(out.status.success());
    // Once the secret is gone, --report-unused names the configured baseline's stale entry.
    r.write("app.py", "x = 2\n");
    let run = r.scan(&["scan", "--report-unused"]);
    assert!(
        run.expect(0).stderr.contains(&format!(
            "scanner: unused baseline entry in {}: app.py:2 {RULE}",
            r.path(".scanner-baseline.json").display()
        )),
        "{}",
        run.stderr
    );
}

/// `git commit -a` (and `git commit PATH`) commits through a temporary index, which git drops
/// when the hook refuses the commit: the change was never staged in the real index. The
/// refusal's "accept it" command was `scanner baseline add --staged app.py:2`, which reads the
/// real index and so failed with "no finding to add at app.py:2". There the committed content
/// is the working tree's, which `baseline add` without `--staged` reads: the hint says that,
/// and following it lets the same `git commit -a` through.
#[test]
fn a_commit_refused_through_a_temporary_index_suggests_a_baseline_add_that_works() {
    let r = Repo::new();
    r.write("app.py", "x = 1\n");
    r.write(".scanner.toml", "baseline = \".scanner-baseline.json\"\n");
    r.git(&["add", "app.py", ".scanner.toml"]);
    r.commit("init");
    r.scan(&["hook", "install"]).expect(0);

    r.write("app.py", format!("x = 1\nTOKEN = \"{}\"\n", token(52)));
    for commit in [
        &["commit", "-q", "-a", "-m", "leak"][..],
        &["commit", "-q", "-m", "leak", "app.py"],
    ] {
        let out = r.git_out(commit);
        assert_eq!(out.status.code(), Some(1), "{commit:?} must be refused");
        let said = String::from_utf8_lossy(&out.stderr);
        let accept: Vec<&str> = said
            .lines()
            .filter(|l| l.starts_with("  accept it:"))
            .collect();
        assert_eq!(
            accept,
            [format!(
                "  accept it:         `{} baseline add app.py:2`, then `git add {}`",
                canonical_bin(),
                r.path(".scanner-baseline.json").display()
            )],
            "{commit:?}: {said}"
        );
    }
    // The hint, as written, works: the finding is recorded, and the commit goes through.
    r.scan(&["baseline", "add", "app.py:2"]).expect(0);
    r.git(&["add", ".scanner-baseline.json"]);
    let out = r.git_out(&["commit", "-q", "-a", "-m", "accepted"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A plain `git commit` of what is staged still says `--staged`.
    r.write("b.py", format!("T = \"{}\"\n", token(53)));
    r.git(&["add", "b.py"]);
    let out = r.git_out(&["commit", "-q", "-m", "leak"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "  accept it:         `{} baseline add --staged b.py:1`, then",
            canonical_bin()
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The ways out name a scanner the committer's shell can run. With the pre-commit framework's
/// default hook (`id: scanner`, `language: rust`) the binary is the framework's own build,
/// on the hook's PATH only: "accept it: `scanner baseline add --staged a.py:1`" was "scanner:
/// command not found" in the shell. The command is `scanner` only when that is this binary on
/// PATH, outside the framework; else the binary's absolute path.
#[test]
fn the_ways_out_name_a_scanner_the_shell_can_run() {
    let r = Repo::new();
    r.write(".scanner.toml", "baseline = \".scanner-baseline.json\"\n");
    r.write("a.py", format!("T = \"{}\"\n", token(54)));
    r.git(&["add", "a.py"]);
    let tools = tempfile::tempdir().unwrap();
    let without = path_without_scanner(&tools.path().join("tools"));
    let linked = tools.path().join("bin");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(BIN, linked.join("scanner")).unwrap();
    let with = std::env::join_paths(std::iter::once(linked).chain(std::env::split_paths(&without)))
        .unwrap();
    let accept = |path: &OsStr, framework: bool| {
        let mut cmd = Command::new(BIN);
        isolate(
            cmd.current_dir(&r.root)
                .args(["hook", "run"])
                .env("PATH", path),
        );
        cmd.env_remove("PRE_COMMIT");
        if framework {
            cmd.env("PRE_COMMIT", "1");
        }
        let run = Run::from_output(cmd.output().unwrap());
        run.expect(1);
        let line = run.stderr.lines().find(|l| l.starts_with("  accept it:"));
        line.unwrap_or_default().to_string()
    };
    let baseline = r.path(".scanner-baseline.json");
    let said = |scanner: &str| {
        format!(
            "  accept it:         `{scanner} baseline add --staged a.py:1`, then `git add {}`",
            baseline.display()
        )
    };
    assert_eq!(accept(&without, false), said(&canonical_bin()));
    assert_eq!(accept(&with, false), said("scanner"));
    assert_eq!(accept(&with, true), said(&canonical_bin()));
    // As printed, the command runs.
    let printed = canonical_bin();
    let run = Run::from_output(
        isolate(Command::new(&printed).current_dir(&r.root))
            .args(["baseline", "add", "--staged", "a.py:1"])
            .env("PATH", &without)
            .output()
            .unwrap(),
    );
    run.expect(0);
}

/// [`BIN`] as the scanner names itself: its canonical path.
fn canonical_bin() -> String {
    std::path::Path::new(BIN)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn baseline_add_needs_a_baseline_and_a_location() {
    let r = Repo::new();
    r.write("a.py", format!("T = \"{}\"\n", token(51)));
    let run = r.scan(&["baseline", "add", "a.py:1"]);
    assert!(
        run.expect(2)
            .stderr
            .starts_with("scanner: error: no baseline to add to: set `baseline ="),
        "{}",
        run.stderr
    );
    let run = r.scan(&["baseline", "add", "--baseline", "b.json", "a.py"]);
    assert!(
        run.expect(2)
            .stderr
            .contains("`a.py`: expected PATH:LINE, as a report prints it"),
        "{}",
        run.stderr
    );
    assert!(!r.path("b.json").exists());
    r.scan(&["baseline", "add", "--baseline", "b.json", "a.py:1"])
        .expect(0);
    r.scan(&["scan", "--baseline", "b.json"]).expect(0);
}

/// The text report prints a finding as `PATH:LINE:COL`; pasted into `baseline add`, that said
/// "a.py:1: No such file or directory". The column is now read and ignored, unless a file is
/// named `PATH:LINE` (then it is that file's line, as before).
#[test]
fn baseline_add_takes_a_location_as_the_text_report_prints_it() {
    let r = Repo::new();
    r.write("a.py", format!("x = 1\nT = \"{}\"\n", token(55)));
    r.write("b.py:2", format!("T = \"{}\"\n", token(56)));
    let run = r.scan(&["scan", "a.py"]);
    let printed = run
        .expect(1)
        .stdout
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(printed, "a.py:2:6");
    let run = r.scan(&[
        "baseline",
        "add",
        "--baseline",
        "b.json",
        &printed,
        "b.py:2:1",
    ]);
    run.expect(0);
    assert_eq!(
        run.stderr,
        format!(
            "scanner: added 2 findings to b.json (2 in all):\n  a.py:2  {RULE}\n  \
             b.py:2:1  {RULE}\n"
        )
    );
    r.scan(&["scan", "--baseline", "b.json", "a.py", "b.py:2"])
        .expect(0);
}

/// The hook calls the scanner that installed it, else `scanner` on PATH. With neither (the
/// binary removed or moved, as `cargo clean` does to target/release/scanner), the commit was
/// refused with sh's ".git/hooks/pre-commit: 10: exec: scanner: not found": no word of what to
/// do. The hook now says which binary is gone and the ways on.
#[test]
fn a_hook_whose_scanner_is_gone_says_what_to_do() {
    let r = Repo::new();
    r.scan(&["hook", "install"]).expect(0);
    let hook = r.path(".git/hooks/pre-commit");
    let script = std::fs::read_to_string(&hook).unwrap();
    let installed = format!("scanner='{}'", canonical_bin());
    assert!(script.contains(&installed), "{script}");
    std::fs::write(&hook, script.replace(&installed, "scanner='/gone/scanner'")).unwrap();
    r.write("a.txt", "hello\n");
    r.git(&["add", "a.txt"]);
    let tools = tempfile::tempdir().unwrap();
    let out = isolate(Command::new("git").current_dir(&r.root))
        .args(["commit", "-q", "-m", "x"])
        .env("PATH", path_without_scanner(tools.path()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "scanner: the pre-commit hook cannot run: the scanner it was installed with \
         (/gone/scanner) is gone, and none is on PATH: install it and run `scanner hook \
         install` again, or skip the check once with `git commit --no-verify`\n"
    );
}

#[test]
fn hook_install_refuses_a_foreign_hook_without_force_and_honours_hooks_path() {
    let r = Repo::new();
    r.write(".git/hooks/pre-commit", "#!/bin/sh\necho theirs\n");
    let run = r.scan(&["hook", "install"]);
    run.expect(2);
    // The line to add keeps the scan's status: a bare `scanner scan --staged` (as this said)
    // in the middle of someone's hook is a check whose failure nothing sees.
    assert_eq!(
        run.stderr,
        format!(
            "scanner: error: refusing to replace {}: it was not written by scanner (add \
             `scanner scan --staged || exit 1` to it, or use --force to replace it)\n",
            r.path(".git/hooks/pre-commit").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(r.path(".git/hooks/pre-commit")).unwrap(),
        "#!/bin/sh\necho theirs\n"
    );
    r.scan(&["hook", "install", "--force"]).expect(0);
    assert!(std::fs::read_to_string(r.path(".git/hooks/pre-commit"))
        .unwrap()
        .contains("hook run"));

    r.git(&["config", "core.hooksPath", ".githooks"]);
    r.write("sub/keep", "");
    r.scan_in("sub", &["hook", "install"]).expect(0);
    assert!(r.path(".githooks/pre-commit").is_file());
}

/// `hook install --force` backs up the hook it replaces; a second `--force` over another
/// foreign hook (another tool wrote one over ours since) overwrote that backup: the first
/// hook was gone for good. Each backup now gets a name of its own, and keeps the hook's mode,
/// so that moving it back gives a hook git runs.
#[cfg(unix)]
#[test]
fn hook_install_force_never_overwrites_an_earlier_backup() {
    use std::os::unix::fs::PermissionsExt;
    let r = Repo::new();
    let hooks = r.path(".git/hooks");
    for (n, theirs) in ["first", "second"].iter().enumerate() {
        r.write(
            ".git/hooks/pre-commit",
            format!("#!/bin/sh\necho {theirs}\n"),
        );
        std::fs::set_permissions(
            hooks.join("pre-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let run = r.scan(&["hook", "install", "--force"]);
        run.expect(0);
        let backup = match n {
            0 => hooks.join("pre-commit.scanner-backup"),
            _ => hooks.join("pre-commit.scanner-backup.1"),
        };
        assert_eq!(
            run.stderr,
            format!(
                "scanner: replaced the pre-commit hook {} (the previous one is in {})\n",
                hooks.join("pre-commit").display(),
                backup.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(&backup).unwrap(),
            format!("#!/bin/sh\necho {theirs}\n")
        );
        let mode = std::fs::metadata(&backup).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "{theirs}");
    }
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit.scanner-backup")).unwrap(),
        "#!/bin/sh\necho first\n"
    );
}

// ---------------------------------------------------------------------------------------------
// The pre-commit framework

/// The `scanner` hook of `.pre-commit-hooks.yaml` through the real framework: `pre-commit
/// try-repo` clones this repository, builds the binary with `language: rust` (`cargo install
/// --path .` at the root) and runs it on what is staged. `scanner` is kept off PATH, so the
/// hook can only pass or fail with the binary the framework built.
///
/// What is tested is the committed HEAD (try-repo clones a repository; uncommitted edits are
/// not in the clone). One test, two runs: the release build inside the framework takes
/// minutes, the second run reuses it (same repository path and revision). Run it with
/// `cargo test --test precommit -- --ignored precommit_framework` (.ci/run does).
#[test]
#[ignore = "needs the pre-commit framework; builds the scanner in release mode (minutes)"]
fn precommit_framework_builds_the_hook_and_blocks_a_staged_secret() {
    let work = tempfile::tempdir().unwrap();
    let path = path_without_scanner(&work.path().join("tools"));
    // The framework runs git many times over minutes: an empty file of our own as the global
    // config, rather than /dev/null, which a stray `git config --global` elsewhere on the
    // machine can replace with a regular file.
    let gitconfig = work.path().join("gitconfig");
    std::fs::write(&gitconfig, "").unwrap();

    // A clean clone of HEAD: try-repo on a dirty checkout would make a new shadow repository
    // (so a new build) for each run.
    let hooks_repo = work.path().join("scanner");
    git_ok(isolate(
        Command::new("git")
            .arg("clone")
            .arg("-q")
            .arg(env!("CARGO_MANIFEST_DIR"))
            .arg(&hooks_repo)
            .env("GIT_CONFIG_GLOBAL", &gitconfig),
    ));

    let r = Repo::new();
    r.write("README.md", "hello\n");
    r.git(&["add", "README.md"]);
    r.commit("init");
    r.write(
        "config/app.env",
        format!("DEBUG=0\nGITHUB_TOKEN={}\n", token(40)),
    );
    r.git(&["add", "config/app.env"]);

    let try_repo = || {
        let out = isolate(
            Command::new("pre-commit")
                .current_dir(&r.root)
                .args(["try-repo", "--color", "never"])
                .arg(&hooks_repo)
                .arg("scanner"),
        )
        .env("GIT_CONFIG_GLOBAL", &gitconfig)
        .env("PATH", &path)
        .env("PRE_COMMIT_HOME", work.path().join("pre-commit-home"))
        // What is tested is that the framework builds and runs the hook, not how fast the
        // binary is: the framework's `cargo install` gets an unoptimised release profile,
        // which builds in a fraction of the time (CI has 2 cores).
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_LTO", "off")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .expect("cannot run `pre-commit` (pip install pre-commit)");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), said)
    };

    let (code, said) = try_repo();
    assert_eq!(
        code,
        Some(1),
        "the staged secret must fail the hook:\n{said}"
    );
    assert!(said.contains("scanner (staged secrets)"), "{said}");
    assert!(said.contains("Failed"), "{said}");
    assert!(said.contains("config/app.env:2:"), "{said}");
    assert!(said.contains(RULE), "{said}");

    assert!(said.contains("scanner: commit refused"), "{said}");

    // The team accepts it: the `baseline` of .scanner.toml, which the framework's hook
    // honours with no argument.
    r.write(".scanner.toml", "baseline = \".scanner-baseline.json\"\n");
    r.scan(&["baseline", "add", "config/app.env:2"]).expect(0);
    r.git(&["add", ".scanner.toml", ".scanner-baseline.json"]);
    let (code, said) = try_repo();
    assert_eq!(code, Some(0), "the baselined secret passes:\n{said}");
    assert!(said.contains("Passed"), "{said}");
}

/// PATH without any directory holding a `scanner` executable. The tools the framework needs
/// (cargo, rustc, git, python) may share such a directory (`~/.cargo/bin` after a `cargo
/// install`): they are linked into `tools` instead, which goes first.
fn path_without_scanner(tools: &std::path::Path) -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let (keep, dropped): (Vec<_>, Vec<_>) =
        std::env::split_paths(&path).partition(|dir| !dir.join("scanner").exists());
    std::fs::create_dir_all(tools).unwrap();
    for dir in &dropped {
        for tool in ["cargo", "rustc", "rustup", "git", "pre-commit", "python3"] {
            let exe = dir.join(tool);
            if exe.exists() && !tools.join(tool).exists() {
                std::os::unix::fs::symlink(&exe, tools.join(tool)).unwrap();
            }
        }
    }
    let path = std::env::join_paths(std::iter::once(tools.to_path_buf()).chain(keep)).unwrap();
    for dir in std::env::split_paths(&path) {
        assert!(
            !dir.join("scanner").exists(),
            "{} holds a scanner",
            dir.display()
        );
    }
    path
}
