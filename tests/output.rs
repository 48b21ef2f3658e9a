//! End-to-end tests of the report formats: the real `scanner` binary on temp dirs, every
//! format parsed back and checked field by field (see `docs/output.md`).

mod common;

// Everything sits in `mod output` so that `cargo test -p scanner-cli output` selects these
// tests along with the unit tests of src/output/.
mod output {
    use std::fs;
    use std::path::Path;
    use std::process::{Command, Stdio};

    use base64::Engine as _;
    use serde::Deserialize;

    use crate::common::{run_in, token, Tree, RULE};

    const RULE_NAME: &str = "GitHub personal access token (classic)";

    /// Runs a scan that must find something (exit 1) and returns stdout.
    fn scan(dir: &Path, args: &[&str]) -> String {
        run_in(dir, args).expect(1).stdout.clone()
    }

    /// Mirror of the finding object: a renamed, added or missing key fails the test.
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Finding {
        rule_id: String,
        rule_name: String,
        path: String,
        path_bytes: Option<String>,
        line: u32,
        column: u32,
        end_line: u32,
        end_column: u32,
        offset: u64,
        end_offset: u64,
        #[serde(rename = "match")]
        matched: String,
        secret: String,
        entropy: f32,
        fingerprint: String,
        confidence: String,
        tags: Vec<String>,
        decoded: Vec<String>,
        commit: Option<Commit>,
        validation: Validation,
    }

    /// Mirror of the `validation` object.
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Validation {
        status: String,
        reason: Option<String>,
        http_status: Option<u16>,
        error: Option<String>,
        checked_at: Option<String>,
        identity: std::collections::BTreeMap<String, String>,
    }

    /// Mirror of the `commit` object (`--history`).
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Commit {
        id: String,
        author_name: String,
        author_email: String,
        author_date: String,
        summary: String,
    }

    fn entropy(s: &str) -> f32 {
        let mut counts = [0u32; 256];
        for &b in s.as_bytes() {
            counts[b as usize] += 1;
        }
        let n = s.len() as f64;
        let h: f64 = counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let p = f64::from(c) / n;
                -p * p.log2()
            })
            .sum();
        h as f32
    }

    /// `app.env` with the token on line 2 at column 14, `b/deep.txt` with two tokens on line 3.
    fn tree() -> (Tree, [String; 3]) {
        let tree = Tree::new();
        let t = [token(1), token(2), token(3)];
        tree.write("app.env", format!("a=1\nGITHUB_TOKEN={}\n", t[0]));
        tree.write(
            "b/deep.txt",
            format!("x\ny\nk = \"{}\" j = \"{}\"\n", t[1], t[2]),
        );
        (tree, t)
    }

    /// The redacted object for `secret`, a GitHub token on one line.
    fn expected(path: &str, line: u32, column: u32, offset: u64, secret: &str) -> Finding {
        let len = secret.len() as u32;
        Finding {
            rule_id: RULE.into(),
            rule_name: RULE_NAME.into(),
            path: path.into(),
            path_bytes: None,
            line,
            column,
            end_line: line,
            end_column: column + len,
            offset,
            end_offset: offset + u64::from(len),
            matched: "ghp_…".into(),
            secret: "ghp_…".into(),
            entropy: entropy(secret),
            fingerprint: scanner_engine::fingerprint(RULE, secret.as_bytes()),
            confidence: "high".into(),
            tags: vec!["prefix".into(), "checksum-valid".into()],
            decoded: vec![],
            commit: None,
            // The token's CRC-32 matches: offline evidence, no request made.
            validation: Validation {
                status: "offline_valid".into(),
                reason: Some("CRC-32 checksum matches".into()),
                http_status: None,
                error: None,
                checked_at: None,
                identity: Default::default(),
            },
        }
    }

    #[test]
    fn json_every_field_sorted_and_redacted() {
        let (dir, t) = tree();
        let out = scan(dir.path(), &["scan", "--format", "json", "."]);
        assert!(out.starts_with("[\n{"), "{out}");
        assert!(out.ends_with("}\n]\n"), "{out}");
        let v: Vec<Finding> = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v,
            vec![
                expected("./app.env", 2, 14, 17, &t[0]),
                expected("./b/deep.txt", 3, 6, 9, &t[1]),
                expected("./b/deep.txt", 3, 53, 56, &t[2]),
            ]
        );
        // Redacted means absent: no part of a secret beyond its prefix is in the report.
        for s in &t {
            assert!(!out.contains(&s[4..12]), "secret leaked into {out}");
        }
    }

    #[test]
    fn json_show_secrets_writes_them_whole_and_keeps_fingerprints() {
        let (dir, t) = tree();
        let redacted: Vec<Finding> =
            serde_json::from_str(&scan(dir.path(), &["scan", "--format", "json", "."])).unwrap();
        let whole: Vec<Finding> = serde_json::from_str(&scan(
            dir.path(),
            &["scan", "--format", "json", "--show-secrets", "."],
        ))
        .unwrap();
        let secrets: Vec<_> = whole.iter().map(|f| f.secret.as_str()).collect();
        assert_eq!(secrets, [&t[0], &t[1], &t[2]]);
        assert_eq!(whole[0].matched, t[0]);
        let fps = |v: &[Finding]| v.iter().map(|f| f.fingerprint.clone()).collect::<Vec<_>>();
        assert_eq!(fps(&redacted), fps(&whole));
    }

    #[test]
    fn json_is_the_same_bytes_with_one_or_eight_threads() {
        let dir = tempfile::tempdir().unwrap();
        for d in 0..8 {
            let sub = dir.path().join(format!("d{d}"));
            fs::create_dir(&sub).unwrap();
            for f in 0..6 {
                let seed = d * 10 + f;
                let body = format!(
                    "line\nkey: {}\n\n  \"t\": \"{}\"\n",
                    token(seed),
                    token(seed + 500)
                );
                fs::write(sub.join(format!("f{f}.yml")), body).unwrap();
            }
        }
        let one = scan(
            dir.path(),
            &["scan", "--format", "json", "--threads", "1", "."],
        );
        let eight = scan(
            dir.path(),
            &["scan", "--format", "json", "--threads", "8", "."],
        );
        assert_eq!(
            serde_json::from_str::<Vec<Finding>>(&one).unwrap().len(),
            96
        );
        assert_eq!(one, eight);
    }

    #[test]
    fn jsonl_is_one_finding_object_per_line() {
        let (dir, _) = tree();
        let json: Vec<Finding> =
            serde_json::from_str(&scan(dir.path(), &["scan", "--format", "json", "."])).unwrap();
        let out = scan(dir.path(), &["scan", "--format", "jsonl", "."]);
        let mut lines: Vec<Finding> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(out.matches('\n').count(), 3);
        // Files arrive in completion order; within a file, in position order.
        let deep: Vec<_> = lines
            .iter()
            .filter(|f| f.path == "./b/deep.txt")
            .map(|f| f.column)
            .collect();
        assert_eq!(deep, [6, 53]);
        lines.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        assert_eq!(lines, json);
    }

    #[test]
    fn text_exact_lines_redacted_and_whole() {
        let (dir, t) = tree();
        let out = scan(
            dir.path(),
            &["scan", "--format", "text", "--threads", "1", "app.env"],
        );
        assert_eq!(out, format!("app.env:2:14  {RULE}  ghp_…\n"));
        let out = scan(dir.path(), &["scan", "--show-secrets", "app.env"]);
        assert_eq!(out, format!("app.env:2:14  {RULE}  {}\n", t[0]));
        let out = scan(dir.path(), &["scan", "--color", "always", "app.env"]);
        assert_eq!(
            out,
            format!(
                "\x1b[35mapp.env\x1b[0m:\x1b[32m2:14\x1b[0m  \x1b[1;33m{RULE}\x1b[0m  \
             \x1b[1;31mghp_…\x1b[0m\n"
            )
        );
        // Not a terminal: no color unless asked.
        assert!(!scan(dir.path(), &["scan", "."]).contains('\x1b'));
    }

    #[test]
    fn sarif_has_what_github_code_scanning_requires() {
        let (dir, t) = tree();
        let out = scan(dir.path(), &["scan", "--format", "sarif", "."]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
        v["$schema"],
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    );
        assert_eq!(v["version"], "2.1.0");
        assert_eq!(v["runs"].as_array().unwrap().len(), 1);
        let driver = &v["runs"][0]["tool"]["driver"];
        assert_eq!(driver["name"], "scanner");
        assert_eq!(driver["semanticVersion"], env!("CARGO_PKG_VERSION"));
        let rules = driver["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0]["id"], RULE);
        assert_eq!(rules[0]["name"], "GithubClassicPat");
        assert_eq!(rules[0]["shortDescription"]["text"], RULE_NAME);
        assert!(rules[0]["fullDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("GitHub"));
        assert!(rules[0]["help"]["text"].is_string());
        assert!(rules[0]["properties"]["tags"]
            .as_array()
            .unwrap()
            .contains(&"security".into()));

        // A complete run with findings executed successfully, and exits 1.
        assert_eq!(
            v["runs"][0]["invocations"],
            serde_json::json!([{"executionSuccessful": true, "exitCode": 1}])
        );

        let results = v["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        let want = [
            ("app.env", 2, 14, 54, &t[0]),
            ("b/deep.txt", 3, 6, 46, &t[1]),
            ("b/deep.txt", 3, 53, 93, &t[2]),
        ];
        for (r, (uri, line, col, end_col, secret)) in results.iter().zip(want) {
            assert_eq!(r["ruleId"], RULE);
            assert_eq!(r["ruleIndex"], 0);
            assert_eq!(r["level"], "error");
            assert!(r["message"]["text"].as_str().unwrap().contains("ghp_…"));
            let loc = &r["locations"][0]["physicalLocation"];
            assert_eq!(loc["artifactLocation"]["uri"], uri);
            assert_eq!(
                loc["region"],
                serde_json::json!({"startLine": line, "startColumn": col, "endLine": line, "endColumn": end_col})
            );
            assert_eq!(
                r["partialFingerprints"]["secretFingerprint/v1"],
                scanner_engine::fingerprint(RULE, secret.as_bytes())
            );
            assert!(!out.contains(&secret[4..12]));
        }
    }

    /// An incomplete scan (exit 2) said so only on stderr: the SARIF log looked like a clean
    /// run to GitHub code scanning. `runs[0].invocations[0]` now says it did not execute
    /// successfully, with its exit status and each warning about the inputs (sorted), the
    /// ones `--log-level error` does not print included.
    #[cfg(unix)]
    #[test]
    fn sarif_says_an_incomplete_scan_was_not_successful() {
        let (dir, _) = tree();
        crate::common::sh(
            dir.path(),
            "ln -s nowhere broken && python3 -c \"import zipfile; \
             z=zipfile.ZipFile('good.zip','w'); z.writestr('app.env','x=1\\n'*100); z.close()\" \
             && head -c 100 good.zip > truncated.zip && rm good.zip",
        );
        let r = run_in(
            dir.path(),
            &[
                "scan",
                "--log-level",
                "error",
                "--format",
                "sarif",
                "--follow",
                ".",
            ],
        );
        r.expect(2);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 3);
        assert_eq!(
            v["runs"][0]["invocations"],
            serde_json::json!([{
                "executionSuccessful": false,
                "exitCode": 2,
                "toolExecutionNotifications": [
                    {
                        "level": "warning",
                        "message": {"text": "./broken: broken symbolic link: no such file or directory"}
                    },
                    {
                        "level": "error",
                        "message": {"text": "./truncated.zip!app.env: truncated"}
                    },
                    {
                        "level": "error",
                        "message": {"text": "./truncated.zip: corrupt: no central directory: invalid Zip archive: Could not find EOCD"}
                    }
                ]
            }])
        );
        // --ignore-errors: exit 1 for the findings, so the execution counts as successful;
        // the notifications stay.
        let r = run_in(
            dir.path(),
            &[
                "scan",
                "-q",
                "--ignore-errors",
                "--format",
                "sarif",
                "--follow",
                ".",
            ],
        );
        r.expect(1);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let invocation = &v["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], true);
        assert_eq!(invocation["exitCode"], 1);
        assert_eq!(
            invocation["toolExecutionNotifications"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }

    /// `--stats-json -` and `--write-baseline -` wrote a file named `-` where `-o -` means
    /// stdout. `-` is stdout for them too, when the report is written to a file; with the
    /// report on stdout, or both of them on it, the run is refused before the scan.
    #[test]
    fn a_dash_is_stdout_for_the_stats_and_the_baseline_too() {
        let (dir, _) = tree();
        let dash = dir.path().join("-");
        for flag in ["--stats-json", "--write-baseline"] {
            let r = run_in(dir.path(), &["scan", flag, "-", "."]);
            r.expect(2);
            assert_eq!(
                r.stderr,
                format!(
                    "scanner: error: {flag} -: standard output is the report's (write the \
                     report to a file with -o FILE, or give {flag} a file)\n"
                )
            );
            assert_eq!(r.stdout, "");
        }
        let r = run_in(
            dir.path(),
            &[
                "scan",
                "-o",
                "-",
                "--stats-json",
                "-",
                "--write-baseline",
                "-",
                ".",
            ],
        );
        r.expect(2);
        assert_eq!(r.stderr, "scanner: error: --stats-json -: standard output is the report's (write the report to a file with -o FILE, or give --stats-json a file)\n");
        let reports = tempfile::tempdir().unwrap();
        let report = reports.path().join("r.json");
        let report = report.to_str().unwrap();
        let r = run_in(
            dir.path(),
            &[
                "scan",
                "-o",
                report,
                "--stats-json",
                "-",
                "--write-baseline",
                "-",
                ".",
            ],
        );
        r.expect(2);
        assert_eq!(
            r.stderr,
            "scanner: error: --stats-json - and --write-baseline - both name standard output \
             (give one a file)\n"
        );

        let r = run_in(
            dir.path(),
            &["scan", "-q", "-o", report, "--stats-json", "-", "."],
        );
        r.expect(1);
        let stats: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(
            (&stats["files"], &stats["findings"]),
            (&2.into(), &3.into())
        );

        let r = run_in(
            dir.path(),
            &["scan", "-q", "-o", report, "--write-baseline", "-", "."],
        );
        r.expect(0);
        assert_eq!(r.stderr, "scanner: wrote 3 findings to standard output\n");
        let baseline: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(baseline["entries"].as_array().unwrap().len(), 3);
        assert!(!dash.exists(), "a file named - was written");
    }

    /// `scanner scan -o /dev/full` said only "writing the report: No space left on device":
    /// which of the files a run writes had failed was left to guess. Every write error names
    /// the file, the report's (written as a whole or streamed) as the stats' and the
    /// baseline's.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_error_names_the_file() {
        let (dir, _) = tree();
        let full = "/dev/full: cannot write: No space left on device (os error 28)";
        let reports = tempfile::tempdir().unwrap();
        let report = reports.path().join("r.json");
        let report = report.to_str().unwrap();
        for (args, said) in [
            (
                &["-o", "/dev/full"][..],
                format!("writing the report: {full}"),
            ),
            (
                &["--format", "jsonl", "-o", "/dev/full"][..],
                format!("writing the report: {full}"),
            ),
            (
                &["-o", report, "--stats-json", "/dev/full"][..],
                format!("--stats-json: {full}"),
            ),
            (
                &["-o", report, "--write-baseline", "/dev/full"][..],
                format!("cannot write the baseline: {full}"),
            ),
        ] {
            let r = run_in(dir.path(), &[&["scan", "-q"][..], args, &["."]].concat());
            r.expect(2);
            assert_eq!(r.stderr, format!("scanner: error: {said}\n"), "{args:?}");
        }
    }

    #[test]
    fn output_file_gets_the_whole_report_and_no_temp_file_remains() {
        let (dir, _) = tree();
        let reports = tempfile::tempdir().unwrap();
        let dest = reports.path().join("report.json");
        fs::write(&dest, "previous report").unwrap();
        let o = run_in(
            dir.path(),
            &[
                "scan",
                "--format",
                "json",
                "-o",
                dest.to_str().unwrap(),
                ".",
            ],
        );
        o.expect(1);
        assert!(o.stdout.is_empty(), "the report went to stdout too");
        let report = fs::read_to_string(&dest).unwrap();
        let stdout_report = scan(dir.path(), &["scan", "--format", "json", "."]);
        assert_eq!(report, stdout_report);
        let names: Vec<_> = fs::read_dir(reports.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["report.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_path_round_trips_through_path_bytes() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let name = OsStr::from_bytes(b"caf\xE9 \x1b[31m.env");
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(
            dir.path().join("sub").join(name),
            format!("T={}\n", token(7)),
        )
        .unwrap();

        let v: Vec<Finding> =
            serde_json::from_str(&scan(dir.path(), &["scan", "--format", "json", "sub"])).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].path, "sub/caf\u{FFFD} \u{1b}[31m.env");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(v[0].path_bytes.as_deref().expect("path_bytes"))
            .unwrap();
        assert_eq!(raw, b"sub/caf\xE9 \x1b[31m.env");
        // The decoded bytes open the file.
        let back = fs::read_to_string(dir.path().join(OsStr::from_bytes(&raw))).unwrap();
        assert!(back.contains(&token(7)));

        // SARIF: exact bytes, percent-encoded. Text: the escape cannot reach the terminal,
        // and the byte that is not UTF-8 is written as an escape too.
        let sarif: serde_json::Value =
            serde_json::from_str(&scan(dir.path(), &["scan", "--format", "sarif", "sub"])).unwrap();
        assert_eq!(
            sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
                ["uri"],
            "sub/caf%E9%20%1B%5B31m.env"
        );
        assert_eq!(
            scan(dir.path(), &["scan", "sub"]),
            format!("sub/caf\\xe9 \\x1b[31m.env:1:3  {RULE}  ghp_…\n")
        );
    }

    #[test]
    fn closed_pipe_ends_the_run_quietly() {
        let dir = tempfile::tempdir().unwrap();
        for f in 0..200 {
            fs::write(
                dir.path().join(format!("f{f}.env")),
                format!("T={}\n", token(f)),
            )
            .unwrap();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_scanner"))
            .current_dir(dir.path())
            .args(["scan", "--format", "jsonl", "--quiet", "."])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away before the first finding
        let o = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.is_empty(), "stderr: {stderr}");
        assert!(
            o.status.code().is_some(),
            "killed by a signal: {:?}",
            o.status
        );
    }

    /// Stderr that cannot be written (a full disk here; a reader gone, as in
    /// `scanner scan 2>&1 >report.txt | head -1`) loses the warnings and the summary, not
    /// the run: the report is whole and the exit status is the findings' 1, not a panic's
    /// 101.
    #[cfg(target_os = "linux")]
    #[test]
    fn unwritable_stderr_loses_the_messages_not_the_run() {
        let t = Tree::new();
        t.write("a.env", format!("T={}\n", token(1)));
        std::os::unix::fs::symlink("nowhere", t.join("dangling")).unwrap();
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_scanner"))
            .current_dir(t.path())
            .args(["scan", "--format", "text", "."])
            .stdout(Stdio::piped())
            .stderr(full)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            format!("./a.env:1:3  {RULE}  ghp_…\n")
        );
    }

    /// `--report-path -` (gitleaks' way to ask for stdout) wrote a file named `-` and left
    /// stdout empty: a pipeline reading the report saw no finding while the run exited 1.
    /// `-o -` is stdout, for `scan` and `merge`.
    #[test]
    fn output_dash_is_stdout() {
        let t = Tree::new();
        t.write("a.env", format!("T={}\n", token(1)));
        let whole = run_in(t.path(), &["scan", "-q", "--format", "json", "a.env"]);
        whole.expect(1);
        let dash = run_in(
            t.path(),
            &[
                "scan",
                "-q",
                "--report-format",
                "json",
                "--report-path",
                "-",
                "a.env",
            ],
        );
        dash.expect(1);
        assert_eq!(dash.stdout, whole.stdout);
        assert!(!t.join("-").exists());
        let shard = run_in(
            t.path(),
            &[
                "scan",
                "-q",
                "--shard",
                "1/1",
                "--format",
                "json",
                "-o",
                "s.json",
                "--stats-json",
                "s.stats.json",
                "a.env",
            ],
        );
        shard.expect(1);
        let merged = run_in(
            t.path(),
            &[
                "merge",
                "-q",
                "--format",
                "json",
                "-o",
                "-",
                "s.json",
                "s.stats.json",
            ],
        );
        merged.expect(1);
        assert_eq!(merged.stdout, whole.stdout);
        assert!(!t.join("-").exists());
    }

    /// `-o reports/r.json` before `mkdir reports` named the run's internal temp file
    /// (`reports/.r.json.scanner-PID-0.tmp: cannot create temporary file: No such file or
    /// directory`), not the file asked for nor the fix, unlike `--stats-json` and
    /// `--write-baseline`.
    #[test]
    fn output_into_a_missing_directory_says_to_create_it() {
        let t = Tree::new();
        t.write("a.env", format!("T={}\n", token(1)));
        let r = run_in(t.path(), &["scan", "a.env", "-o", "reports/r.json"]);
        r.expect(2);
        assert_eq!(
            r.stderr,
            "scanner: error: -o reports/r.json: reports/r.json: its directory reports does not \
             exist: create it first\n"
        );
        assert!(!t.join("reports").exists());
    }

    /// `--stats-json` and `--write-baseline` into a directory where no file can be made (not
    /// writable by this user, a read-only file system; /sys here, which even root cannot
    /// write) ran the whole scan, printed the findings, and only then failed (exit 2) naming
    /// the run's temp file. The target is now tried before the scan, as `-o`'s is, and the
    /// error names the file asked for and its directory.
    #[cfg(target_os = "linux")]
    #[test]
    fn outputs_into_an_unwritable_directory_fail_before_the_scan() {
        let t = Tree::new();
        t.write("a.env", format!("T={}\n", token(1)));
        for (flag, what) in [
            ("--stats-json", "/sys/s.json"),
            ("--write-baseline", "/sys/b.json"),
            ("-o", "/sys/r.json"),
        ] {
            let r = run_in(t.path(), &["scan", "a.env", flag, what]);
            r.expect(2);
            assert_eq!(r.stdout, "", "{flag}: the scan ran");
            let want = format!(
                "scanner: error: {flag} {what}: {what}: cannot create a file in its directory \
                 /sys: "
            );
            let want = match flag {
                "-o" => want,
                _ => want.replacen(&format!("{flag} {what}:"), &format!("{flag}:"), 1),
            };
            assert!(r.stderr.starts_with(&want), "{flag}: {}", r.stderr);
            assert_eq!(r.stderr.lines().count(), 1, "{flag}: {}", r.stderr);
        }
    }

    #[test]
    fn clean_scan_writes_empty_reports() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "nothing here\n").unwrap();
        let run = |format: &str| {
            let o = run_in(dir.path(), &["scan", "--format", format, "."]);
            assert_eq!(o.code, 0, "{format}");
            o.stdout
        };
        assert_eq!(run("json"), "[]\n");
        assert_eq!(run("jsonl"), "");
        assert_eq!(run("text"), "");
        let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).unwrap();
        assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
    }

    #[test]
    fn output_file_is_left_alone_when_the_scan_fails() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("report.json");
        fs::write(&dest, "previous report").unwrap();
        run_in(
            dir.path(),
            &[
                "scan",
                "--format",
                "json",
                "-o",
                "report.json",
                "no-such-root",
            ],
        )
        .expect(2);
        assert_eq!(fs::read_to_string(&dest).unwrap(), "previous report");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["report.json"], "temporary file left behind");
    }

    /// A commit message that names a secret it adds (`git commit -m "set k=ghp_..."`) is
    /// redacted in the report's `commit` as the secret is everywhere else, in the findings of
    /// every file of that commit: json, sarif and html; jsonl knows the secrets of the files
    /// written so far, the file's own among them.
    #[test]
    fn history_commit_subject_holding_the_secret_is_redacted() {
        let repo = crate::common::Repo::new();
        let secret = token(41);
        repo.write("app.env", format!("k={secret}\n"));
        repo.write("other.env", format!("k={}\n", token(42)));
        repo.git(&["add", "."]);
        repo.commit(&format!("set k={secret} for prod"));
        let scan = |format: &str| {
            let run = repo.scan(&["scan", "-q", "--history", "--format", format]);
            run.expect(1);
            run.stdout.clone()
        };
        for format in ["json", "sarif", "html"] {
            let out = scan(format);
            assert!(!out.contains(&secret[4..]), "{format}: {out}");
        }
        let findings: Vec<Finding> = serde_json::from_str(&scan("json")).unwrap();
        let summaries: Vec<_> = findings
            .iter()
            .map(|f| (f.path.as_str(), f.commit.as_ref().unwrap().summary.as_str()))
            .collect();
        assert_eq!(
            summaries,
            [
                ("app.env", "set k=ghp_… for prod"),
                ("other.env", "set k=ghp_… for prod")
            ]
        );
        let sarif: serde_json::Value = serde_json::from_str(&scan("sarif")).unwrap();
        for i in 0..2 {
            assert_eq!(
                sarif["runs"][0]["results"][i]["properties"]["commit"]["summary"],
                "set k=ghp_… for prod"
            );
        }
        let jsonl = scan("jsonl");
        let app: Finding = jsonl
            .lines()
            .map(|l| serde_json::from_str::<Finding>(l).unwrap())
            .find(|f| f.path == "app.env")
            .unwrap();
        assert_eq!(app.commit.unwrap().summary, "set k=ghp_… for prod");
        let run = repo.scan(&[
            "scan",
            "-q",
            "--history",
            "--show-secrets",
            "--format",
            "json",
        ]);
        let findings: Vec<Finding> = serde_json::from_str(&run.stdout).unwrap();
        for f in &findings {
            let summary = &f.commit.as_ref().unwrap().summary;
            assert_eq!(summary, &format!("set k={secret} for prod"));
        }
    }

    /// The text snippet redacts every copy of the secret, as json's `match` does: a URL whose
    /// user name is its password showed the password whole after the first (redacted) copy.
    #[test]
    fn text_redacts_every_copy_of_the_secret_in_the_snippet() {
        let t = Tree::new();
        let pw = "Zq8w4Lp2Xk9Tr";
        t.write(
            "a.env",
            format!("DATABASE_URL=postgres://{pw}:{pw}@db.internal:5432/app\n"),
        );
        let out = scan(t.path(), &["scan", "-q", "a.env"]);
        assert_eq!(
            out,
            "a.env:1:39  postgres-connection-url [medium]  postgres://Zq8w…:Zq8w…@db.internal\n"
        );
        let out = scan(t.path(), &["scan", "-q", "--show-secrets", "a.env"]);
        assert_eq!(
            out,
            format!(
                "a.env:1:39  postgres-connection-url [medium]  postgres://{pw}:{pw}@db.internal\n"
            )
        );
    }

    /// A value that ends its line (`.env`, YAML, a provider's token): the match takes the
    /// line break after it, and the text snippet ended with a literal `\n` (or `\r\n`). The
    /// snippet is the match on its line: the break at its end is not shown.
    #[test]
    fn text_snippet_does_not_end_with_the_line_break() {
        let t = Tree::new();
        t.write("a.env", "DB_PASSWORD=Xq7#mP2$vL9@kR4w\r\n");
        t.write("b.yaml", "password: Xq7#mP2$vL9@kR4w\n");
        t.write("c.env", "NOAA_CDO_TOKEN=8tlD9xdXqqaVAM08Fme6NtfA0KnMp1xg\n");
        let out = scan(t.path(), &["scan", "-q", "a.env", "b.yaml", "c.env"]);
        assert_eq!(
            out,
            "a.env:1:13  generic-password-assignment [medium: generic pattern]  PASSWORD=Xq7#…\n\
             b.yaml:1:11  generic-password-assignment [medium: generic pattern]  password: Xq7#…\n\
             c.env:1:16  noaa-cdo-token [medium]  NOAA_CDO_TOKEN=8tlD…\n"
        );
    }

    /// A match that holds another finding's secret (a connection URL whose user name is a
    /// token the token rule reports on its own) showed that token whole: each finding's
    /// `match` now has every secret found in the same file redacted, in every format.
    #[test]
    fn a_match_holding_another_findings_secret_redacts_it() {
        let t = Tree::new();
        let tok = token(43);
        t.write(
            "a.env",
            format!("DATABASE_URL=postgres://{tok}:Zq8w4Lp2Xk9Tr@db.internal:5432/app\n"),
        );
        for format in ["text", "json", "jsonl", "sarif", "html"] {
            let out = scan(t.path(), &["scan", "-q", "--format", format, "a.env"]);
            assert!(!out.contains(&tok[4..]), "{format}: {out}");
        }
        let findings: Vec<Finding> = serde_json::from_str(&scan(
            t.path(),
            &["scan", "-q", "--format", "json", "a.env"],
        ))
        .unwrap();
        let shown: Vec<_> = findings
            .iter()
            .map(|f| (f.rule_id.as_str(), f.matched.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                (RULE, "ghp_…"),
                (
                    "postgres-connection-url",
                    "postgres://ghp_…:Zq8w…@db.internal"
                )
            ]
        );
        let text = scan(t.path(), &["scan", "-q", "a.env"]);
        assert_eq!(
            text.lines().nth(1),
            Some(
                "a.env:1:66  postgres-connection-url [medium]  postgres://ghp_…:Zq8w…@db.internal"
            )
        );
        let whole = scan(t.path(), &["scan", "-q", "--show-secrets", "a.env"]);
        assert_eq!(
            whole.lines().nth(1),
            Some(format!("a.env:1:66  postgres-connection-url [medium]  postgres://{tok}:Zq8w4Lp2Xk9Tr@db.internal").as_str())
        );
    }

    /// A report whose commit id is not hex (hand-edited, or another tool's) made
    /// `scanner validate --format text` panic cutting the id to 12 bytes inside a character;
    /// an escape sequence there would have reached the terminal. It is refused, the file named.
    #[test]
    fn a_report_with_a_commit_id_that_is_not_hex_is_refused() {
        let repo = crate::common::Repo::new();
        repo.write("app.env", format!("k={}\n", token(44)));
        repo.git(&["add", "."]);
        repo.commit("add");
        let run = repo.scan(&["scan", "-q", "--history", "--format", "json"]);
        run.expect(1);
        let mut report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        report[0]["commit"]["id"] = "a\u{1b}[31méééééééééé".into();
        fs::write(repo.path("report.json"), report.to_string()).unwrap();
        for format in ["text", "json"] {
            let run = repo.scan(&["validate", "--format", format, "report.json"]);
            run.expect(2);
            assert_eq!(run.stdout, "");
            assert_eq!(
                run.stderr,
                "scanner: error: report.json: commit `a\\x1b[31méééééééééé` is not a git \
                 object id (hex digits)\n"
            );
        }
    }
}
