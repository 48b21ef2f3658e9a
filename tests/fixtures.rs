//! Golden tests: every fixture tree under `testdata/` is expanded into a temp
//! dir (placeholders replaced by tokens built at run time), scanned with
//! `scanner scan --format json .` along every axis of `common::AXES`, and the
//! report compared with `testdata/<tree>.expected.json`. `testdata/README.md`
//! describes the trees, the placeholders, the fields kept and how to
//! regenerate the expected files (`SCANNER_BLESS=1`).

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{expand_fixture, run_axes};

/// Fields of a finding that depend on the secret's bytes, which change with
/// the token generator: dropped before comparing. Everything else (rule,
/// path, positions, confidence, tags, decoding) is pinned.
const SECRET_DEPENDENT: &[&str] = &["match", "secret", "entropy", "fingerprint"];

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The report with [`SECRET_DEPENDENT`] fields removed, pretty-printed with
/// a trailing newline (the form the expected files are stored in).
fn normalize(stdout: &str) -> String {
    let mut report: Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{stdout}"));
    for finding in report.as_array_mut().expect("a JSON array").iter_mut() {
        let obj = finding.as_object_mut().expect("a finding object");
        for key in SECRET_DEPENDENT {
            obj.remove(*key);
        }
    }
    let mut text = serde_json::to_string_pretty(&report).unwrap();
    text.push('\n');
    text
}

/// A line diff of `old` and `new` (longest common subsequence; the files are
/// small), `-` for lines only in `old`, `+` only in `new`, unchanged lines
/// within two of a change kept for context.
fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // lcs[i][j]: length of the LCS of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    let near_change = |k: usize| {
        ops[k.saturating_sub(2)..(k + 3).min(ops.len())]
            .iter()
            .any(|(op, _)| *op != ' ')
    };
    // A hunk starts with the line number, in the expected file, of its
    // first line, so that the finding at fault can be found.
    let mut out = String::new();
    let mut in_hunk = false;
    let mut old_line = 1;
    for (k, (op, line)) in ops.iter().enumerate() {
        if near_change(k) {
            if !in_hunk {
                out.push_str(&format!("@@ line {old_line} @@\n"));
                in_hunk = true;
            }
            out.push_str(&format!("{op} {line}\n"));
        } else {
            in_hunk = false;
        }
        if *op != '+' {
            old_line += 1;
        }
    }
    out
}

/// Expands `testdata/<name>/`, scans it along every axis and compares (or,
/// with `SCANNER_BLESS` set, writes) `testdata/<name>.expected.json`.
fn check(name: &str) {
    let src = testdata().join(name);
    let tmp = tempfile::tempdir().unwrap();
    expand_fixture(&src, tmp.path());
    let run = run_axes(tmp.path(), &["scan", "--format", "json", "."]);
    let actual = normalize(&run.stdout);
    let findings = run.findings().len();
    assert_eq!(
        run.code,
        i32::from(findings > 0),
        "exit status with {findings} findings\nstderr:\n{}",
        run.stderr
    );

    let expected_path = testdata().join(format!("{name}.expected.json"));
    if std::env::var_os("SCANNER_BLESS").is_some() {
        fs::write(&expected_path, &actual).unwrap();
        return;
    }
    let expected = fs::read_to_string(&expected_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\nrun `SCANNER_BLESS=1 cargo test --test fixtures` to create it",
            expected_path.display()
        )
    });
    if expected != actual {
        panic!(
            "testdata/{name}: the report differs from {name}.expected.json \
             (- expected, + actual):\n{}\n\
             If the change is intended, run \
             `SCANNER_BLESS=1 cargo test --test fixtures` and review \
             `git diff testdata/`.\nstderr:\n{}",
            diff(&expected, &actual),
            run.stderr
        );
    }
}

macro_rules! fixtures {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name).trim_start_matches("r#").replace('_', "-").as_str());
            }
        )*

        /// Every tree in `testdata/` has a test above and every expected
        /// file a tree: a new tree cannot be left out silently.
        #[test]
        fn every_tree_is_tested() {
            let mut listed: Vec<String> =
                vec![$(stringify!($name).replace('_', "-")),*];
            listed.sort();
            let mut trees = Vec::new();
            let mut expected = Vec::new();
            for entry in fs::read_dir(testdata()).unwrap() {
                let path = entry.unwrap().path();
                let file = path.file_name().unwrap().to_str().unwrap().to_owned();
                if path.is_dir() {
                    trees.push(file);
                } else if let Some(tree) = file.strip_suffix(".expected.json") {
                    expected.push(tree.to_owned());
                }
            }
            trees.sort();
            expected.sort();
            assert_eq!(trees, listed, "trees in testdata/ vs the fixtures! list");
            assert_eq!(expected, listed, "*.expected.json in testdata/ vs the fixtures! list");
        }
    };
}

fixtures!(webapp, k8s, mixed_encodings, ignored, logs);

// ---------------------------------------------------------- the harness itself

#[test]
fn placeholders_expand_to_the_generated_values() {
    let out = common::expand_placeholders(
        b"a={{TOKEN:1}} b={{AWS:2}}\xff c={{TOKEN64:1}}",
        Path::new("x"),
    );
    let token = common::token(1);
    let mut want = format!("a={token} b={}", common::aws_key_id(2)).into_bytes();
    want.push(0xFF);
    want.extend_from_slice(b" c=");
    use base64::Engine as _;
    want.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(&token)
            .as_bytes(),
    );
    assert_eq!(out, want);
}

#[test]
#[should_panic(expected = "x: bad placeholder `{{TOKNE:1}}`")]
fn a_misspelt_placeholder_fails() {
    common::expand_placeholders(b"T={{TOKNE:1}}", Path::new("x"));
}

#[test]
fn diff_marks_changed_lines() {
    assert_eq!(
        diff("a\nb\nc\n", "a\nB\nc\nd\n"),
        "@@ line 1 @@\n  a\n- b\n+ B\n  c\n+ d\n"
    );
}

/// The split axis is not vacuous: along it `logs/ci-build.log` (40 KB) is
/// cut into 4 KiB-grain pieces, each run as its own task.
#[test]
fn the_split_axis_splits_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("logs");
    expand_fixture(&testdata().join("logs"), &tree);
    let stats = tmp.path().join("stats.json");
    let (_, split) = common::AXES
        .iter()
        .find(|(name, _)| name.starts_with("split"))
        .unwrap();
    let mut args = vec!["scan", "-q", ".", "--stats-json", stats.to_str().unwrap()];
    args.extend_from_slice(split);
    common::run_in(&tree, &args).expect(1);
    let v: Value = serde_json::from_slice(&fs::read(&stats).unwrap()).unwrap();
    let size = fs::metadata(tree.join("ci-build.log")).unwrap().len();
    assert_eq!(size, 40_097);
    // Halved while at least two grains long: 40097 -> 8 pieces of ~5 KB;
    // and one task more, the tree's root directory (the walk is split
    // among the workers: `pipeline/dirs.rs`).
    let tasks = &v["scheduler"]["tasks"];
    let ran: u64 = ["injector", "local", "stolen"]
        .iter()
        .map(|k| tasks[k].as_u64().unwrap())
        .sum();
    assert_eq!((v["files"].as_u64(), ran), (Some(1), 8 + 1), "{v}");
}

/// `-v` changes what is said, never what is found or counted: on every tree and
/// along every axis the report is the one without `-v`, the summary's
/// `suppressed:` line is the same, and there is one listed line per finding
/// suppressed by an allow decision or a filter.
#[test]
fn verbose_lists_what_the_summary_counts_and_changes_nothing_else() {
    // The reasons `-v` lists (see `scanner scan --help`); the others are counts only.
    const LISTED: [&str; 4] = [
        "inline allow",
        "allowlist",
        "stopword",
        "config allow_secrets",
    ];
    let tmp = tempfile::tempdir().unwrap();
    let mut listed_total = 0;
    for name in ["webapp", "k8s", "mixed-encodings", "ignored", "logs"] {
        let tree = tmp.path().join(name);
        expand_fixture(&testdata().join(name), &tree);
        let quiet = run_axes(&tree, &["scan", "--format", "json", "."]);
        let verbose = run_axes(&tree, &["scan", "--format", "json", "-v", "."]);
        assert_eq!((verbose.code, &verbose.stdout), (quiet.code, &quiet.stdout));
        let counts = quiet.summary_line("suppressed:").unwrap_or("suppressed:");
        assert_eq!(
            verbose.summary_line("suppressed:"),
            quiet.summary_line("suppressed:")
        );
        let want: usize = counts["suppressed:".len()..]
            .split(',')
            .filter_map(|part| part.trim().split_once(' '))
            .filter(|(_, label)| LISTED.contains(label))
            .map(|(n, _)| n.parse::<usize>().unwrap())
            .sum();
        let listed = verbose
            .stderr
            .lines()
            .filter(|l| l.starts_with("scanner: suppressed: "))
            .count();
        assert_eq!(listed, want, "{name}: {counts}\n{}", verbose.stderr);
        listed_total += listed;
    }
    assert!(
        listed_total > 0,
        "no tree has an allowed finding: the test is vacuous"
    );
}
