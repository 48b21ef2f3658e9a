//! Baselines seen from outside: `--write-baseline`, `--baseline` and `scanner baseline add`
//! on real trees, with the exact findings each run reports or suppresses (see
//! `crates/scanner-cli/src/baseline.rs` and `docs/precommit.md`, "Baselines").

mod common;

use std::os::unix::ffi::OsStrExt;

use common::{token, Tree};

/// A baseline records a non-UTF-8 file name lossily (`bad\xff.env` as `bad\u{fffd}.env`),
/// so it must never suppress by that name: the same secret copied into `bad\xfe.env`, which
/// reads the same once lossy, was silently hidden (exit 0).
#[test]
fn a_non_utf8_name_never_matches_a_baseline_entry() {
    let t = Tree::new();
    let line = format!("k={}\n", token(1));
    let name = |b: &[u8]| std::ffi::OsStr::from_bytes(b).to_owned();
    t.write(name(b"bad\xff.env"), &line);
    t.run(&["scan", "-q", "--write-baseline", "b.json", "."])
        .expect(0);
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.join("b.json")).unwrap()).unwrap();
    assert_eq!(b["entries"][0]["path"], "bad\u{fffd}.env");

    t.write(name(b"bad\xfe.env"), &line);
    let run = t.run(&[
        "scan",
        "-q",
        "--format",
        "json",
        "--baseline",
        "b.json",
        ".",
    ]);
    run.expect(1);
    let found: Vec<_> = run
        .findings()
        .iter()
        .map(|f| (f.path_bytes.clone(), f.line))
        .collect();
    // The recorded file too: its entry cannot say which of the two it was.
    assert_eq!(
        found,
        [
            (Some("Li9iYWT+LmVudg==".to_string()), 1),
            (Some("Li9iYWT/LmVudg==".to_string()), 1)
        ]
    );
}

/// A path-only rule (no regex) has no secret: its fingerprint hashes the path. It hashed the
/// path as spelled (`./store.jks` from `scanner scan .`, `store.jks` from `scanner scan` or
/// `--staged`), so a baseline written by `scanner scan --write-baseline b.json .` did not
/// suppress the finding in the pre-commit hook (`--staged`). The path is hashed as rules see
/// it, without the leading `./`.
#[test]
fn a_path_only_finding_is_baselined_whatever_the_path_is_spelled() {
    let r = common::Repo::new();
    r.write(
        "rules.toml",
        "[[rules]]\nid = \"keystore-file\"\nname = \"Java keystore\"\n\
         description = \"A keystore.\"\npath = '''\\.jks$'''\n",
    );
    r.write(
        ".scanner.toml",
        "extra_rules = [\"rules.toml\"]\nbaseline = \"b.json\"\n",
    );
    r.write("store.jks", "data\n");
    r.git(&["add", "."]);
    let fingerprints = |args: &[&str]| -> Vec<String> {
        let run = r.scan(args);
        run.expect(1);
        run.findings().into_iter().map(|f| f.fingerprint).collect()
    };
    let dot = fingerprints(&[
        "scan",
        "-q",
        "--no-config",
        "--extra-rules",
        "rules.toml",
        "--format",
        "json",
        ".",
    ]);
    let bare = fingerprints(&[
        "scan",
        "-q",
        "--no-config",
        "--extra-rules",
        "rules.toml",
        "--format",
        "json",
    ]);
    assert_eq!(dot, bare);
    r.scan(&["scan", "-q", "--write-baseline", "b.json", "."])
        .expect(0);
    for args in [
        &["scan", "-q", "--staged"][..],
        &["scan", "-q"],
        &["scan", "-q", "."],
    ] {
        let run = r.scan(args);
        run.expect(0);
        assert_eq!(run.stdout, "", "{args:?}");
    }
}

/// `baseline add` given a location as the text report of `--history` prints it
/// (`COMMIT:PATH:LINE:COL`) said only "No such file or directory": it says what it is and
/// what to run instead.
#[test]
fn baseline_add_of_a_history_location_says_what_to_run() {
    let t = Tree::new();
    t.write("a.env", format!("k={}\n", token(3)));
    let run = t.run(&[
        "baseline",
        "add",
        "--baseline",
        "b.json",
        "cfb42a2455eb:a.env:1:3",
    ]);
    run.expect(2);
    assert_eq!(
        run.stderr,
        "scanner: error: `cfb42a2455eb:a.env:1:3`: a --history location (COMMIT:PATH): \
         `baseline add` scans the work tree; add a.env:1 if the file still holds the secret, \
         else record the history's findings with `scanner scan --history --write-baseline FILE`\n"
    );
    assert!(!t.join("b.json").exists());
}

/// A shard sees only its share of the findings: `--write-baseline` with `--shard` (or
/// `SCANNER_SHARDS` in the environment) wrote that share as the baseline, exit 0, and
/// `--baseline b.json --write-baseline b.json` dropped every other shard's entries. It is
/// refused, as `--report-unused` is, before anything is written.
#[test]
fn write_baseline_on_a_shard_is_refused() {
    let t = Tree::new();
    for i in 0..4 {
        t.write(format!("src/f{i}.env"), format!("k={}\n", token(10 + i)));
    }
    let r = t.run(&[
        "scan",
        "-q",
        "--shard",
        "1/2",
        "--write-baseline",
        "b.json",
        "src",
    ]);
    r.expect(2);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "scanner: error: --write-baseline needs the whole scan: a shard records only its \
         share, and the baseline would hold none of the other shards' findings (run it \
         unsharded)\n"
    );
    assert!(!t.join("b.json").exists());
}

/// `--log-level error` leaves only errors on stderr (docs/output.md), but the lines of
/// `--report-unused` were printed under it. They are said with `-q`, as notes are, and not
/// under `--log-level error`.
#[test]
fn report_unused_follows_the_log_level() {
    let t = Tree::new();
    t.write("a.env", format!("k={}\n", token(1)));
    t.run(&["scan", "-q", "--write-baseline", "b.json", "."])
        .expect(0);
    let fingerprint = scanner_engine::fingerprint("github-classic-pat", token(1).as_bytes());
    t.write("a.env", "k=gone\n");
    let unused = format!(
        "scanner: unused baseline entry in b.json: a.env:1 github-classic-pat (fingerprint \
         {fingerprint})\n"
    );
    let args = ["scan", "--baseline", "b.json", "--report-unused", "."];
    let run = t.run(&[&args[..], &["-q"]].concat());
    run.expect(0);
    assert_eq!(run.stderr, unused);
    let run = t.run(&[&args[..], &["--log-level", "error"]].concat());
    run.expect(0);
    assert_eq!(run.stderr, "");
}
