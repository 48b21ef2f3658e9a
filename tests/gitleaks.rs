//! A gitleaks user switching over: `.gitleaks.toml` and `.gitleaksignore`
//! picked up with no flags, gitleaks rule ids as aliases, gitleaks' flag
//! spellings.

mod common;

use common::{token, Tree, RULE};

const CUSTOM: &str = r#"
title = "team rules"

[[rules]]
id = "acme-internal-token"
description = "ACME internal token"
regex = '''acme_[a-z0-9]{24}'''
keywords = ["acme_"]

[allowlist]
paths = ['''fixtures/''']
"#;

const ACME: &str = "acme_q8rk2vxz1lmn4pt7wy0aze5h";

#[test]
fn a_gitleaks_config_in_the_root_is_used_with_no_flags() {
    let t = Tree::new();
    t.write(".gitleaks.toml", CUSTOM);
    t.write("src/app.env", format!("A={ACME}\nT={}\n", token(1)));
    t.write("fixtures/x.env", format!("A={ACME}\n"));
    let r = t.run(&["scan", "--format", "json"]);
    // Only the custom rule: without useDefault the built-ins are not loaded.
    let found = r.expect(1).findings();
    let ids: Vec<(&str, &str)> = found
        .iter()
        .map(|f| (f.rule_id.as_str(), f.path.as_str()))
        .collect();
    assert_eq!(ids, [("acme-internal-token", "src/app.env")]);
    assert!(
        r.stderr
            .contains("scanner: note: rules from the gitleaks config"),
        "{}",
        r.stderr
    );

    // [extend] useDefault = true: the built-ins too.
    t.write(
        ".gitleaks.toml",
        format!("[extend]\nuseDefault = true\n{CUSTOM}"),
    );
    let r = t.run(&["scan", "--format", "json"]);
    let mut ids: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| format!("{}:{}", f.rule_id, f.line))
        .collect();
    ids.sort();
    assert_eq!(ids, ["acme-internal-token:1", format!("{RULE}:2").as_str()]);
}

#[test]
fn a_gitleaks_private_key_rule_finds_a_4096_bit_key() {
    let t = Tree::new();
    let pem = common::openssl(&["genrsa", "4096"]);
    t.write("deploy/id_rsa", format!("# key\n{pem}"));
    t.write(
        "rules.toml",
        r#"
[[rules]]
id = "private-key"
description = "Private key"
regex = '''(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]*?KEY(?: BLOCK)?-----'''
keywords = ["-----begin"]
"#,
    );
    let r = t.run(&[
        "scan",
        "--rules",
        "rules.toml",
        "--format",
        "json",
        "deploy",
    ]);
    let found = r.expect(1).findings();
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].line, found[0].end_line),
        (2, 2 + pem.lines().count() as u32 - 1)
    );
}

#[test]
fn gitleaksignore_suppresses_exactly_its_finding_and_gitleaks_ids_are_aliases() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\nU={}\n", token(2), token(3)));
    t.write("b.env", format!("T={}\n", token(4)));
    // gitleaks names this rule `github-pat`.
    t.write(".gitleaksignore", "# known\na.env:github-pat:2\n");
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["a.env:1", "b.env:1"]);
    assert_eq!(
        r.summary_line("suppressed"),
        Some("suppressed: 1 gitleaksignore")
    );

    // Written on Windows: gitleaks reads `\` in the path as `/`, and so do we (the entry
    // matched nothing, and the finding came back where gitleaks passed). A byte order mark
    // before the first entry (Notepad) is no part of its path.
    t.write("d/c.env", format!("T={}\n", token(11)));
    t.write(
        ".gitleaksignore",
        "\u{feff}a.env:github-pat:2\r\nd\\c.env:github-pat:1\r\n",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["a.env:1", "b.env:1"]);
    assert_eq!(
        r.summary_line("suppressed"),
        Some("suppressed: 2 gitleaksignore")
    );

    // targetRules naming the gitleaks id applies to our rule.
    t.write(
        "allow.toml",
        "[extend]\nuseDefault = true\n\n[[allowlists]]\ntargetRules = [\"github-pat\"]\npaths = ['''b\\.env''']\n",
    );
    let r = t.run(&["scan", "--rules", "allow.toml", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["a.env:1"]);
}

#[test]
fn gitleaks_flag_spellings() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(5)));
    t.run(&["scan", "--exit-code", "0"]).expect(0);
    t.run(&["scan", "--exit-code", "7", "--redact"]).expect(7);
    // gitleaks' partial redaction, `--redact=20`: accepted, and the secret is still redacted
    // whole (only `--show-secrets` prints it).
    let r = t.run(&["scan", "--redact=20", "--format", "json"]);
    let found: serde_json::Value = serde_json::from_str(&r.expect(1).stdout).unwrap();
    assert_eq!(found.as_array().unwrap().len(), 1);
    assert_eq!(found[0]["secret"], "ghp_…");
    let r = t.run(&["scan", "--redact=101"]);
    assert!(
        r.expect(2)
            .stderr
            .contains("invalid value '101' for '--redact[=<PERCENT>]': 101 is not in 0..=100"),
        "{}",
        r.stderr
    );
    let r = t.run(&[
        "scan",
        "--report-format",
        "sarif",
        "--report-path",
        "r.sarif",
    ]);
    r.expect(1);
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.join("r.sarif")).unwrap()).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], RULE);
}

/// gitleaks names a file of `gitleaks dir .` `src/app.env` (Go's cleaned
/// join), so a `.gitleaks.toml` anchors its path regexes there: `^src/`.
/// `scanner scan .` shows `./src/app.env`, but its path regexes (a rule's
/// `path`, allowlist `paths`) must see what gitleaks sees, or a rule scoped
/// with `^` silently finds nothing.
#[test]
fn anchored_gitleaks_path_regexes_match_when_scanning_dot() {
    let t = Tree::new();
    t.write(
        ".gitleaks.toml",
        r#"
[[rules]]
id = "acme-internal-token"
regex = '''acme_[a-z0-9]{24}'''
keywords = ["acme_"]
path = '''^src/'''

[allowlist]
paths = ['''^src/fixtures/''']
"#,
    );
    t.write("src/app.env", format!("A={ACME}\n"));
    t.write("src/fixtures/x.env", format!("A={ACME}\n"));
    t.write("docs/y.env", format!("A={ACME}\n"));
    for args in [&["scan"][..], &["scan", "."], &["scan", "./"]] {
        let r = t.run(&[args, &["--format", "json"]].concat());
        let found: Vec<(String, String)> = r
            .expect(1)
            .findings()
            .into_iter()
            .map(|f| (f.rule_id, f.path))
            .collect();
        let shown = if args.len() == 1 {
            "src/app.env"
        } else {
            "./src/app.env"
        };
        assert_eq!(
            found,
            [("acme-internal-token".to_owned(), shown.to_owned())],
            "{args:?}"
        );
    }
}

/// gitleaks merges a rule that names a rule of the config it extends: a
/// `[[rules]]` with that id and no `regex` or `path` of its own adds its
/// allowlists to the extended rule and its entropy replaces the rule's
/// (gitleaks' README: "the extended rules or attributes of them will
/// override the default rules"). Such a `.gitleaks.toml` was refused: "rule
/// has neither `regex` nor `path`", exit 2.
#[test]
fn a_gitleaks_rule_with_only_an_id_amends_the_rule_it_names() {
    let t = Tree::new();
    t.write(
        ".gitleaks.toml",
        r#"
[extend]
useDefault = true

[[rules]]
id = "github-pat"
[[rules.allowlists]]
paths = ['''(^|/)fixtures/''']
"#,
    );
    t.write("src/app.env", format!("T={}\n", token(1)));
    t.write("fixtures/x.env", format!("T={}\n", token(2)));
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["src/app.env:1"]);
    assert!(
        r.stderr.contains(
            "scanner: note: ./.gitleaks.toml: rule `github-pat`: amends the built-in rule \
             `github-classic-pat` from builtin:source-hosting.toml (it has no `regex` or `path` \
             of its own, so gitleaks merges it: its allowlists are added, its entropy replaces)\n"
        ),
        "{}",
        r.stderr
    );

    // Its entropy replaces the rule's: no token has 6 bits per byte.
    t.write(
        ".gitleaks.toml",
        "[extend]\nuseDefault = true\n\n[[rules]]\nid = \"github-pat\"\nentropy = 6.0\n",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(0).stdout, "[]\n");
    assert_eq!(r.summary_line("suppressed"), Some("suppressed: 2 entropy"));
}

/// A `.scanner.toml` that names no rules (a baseline, `allow_paths`, as the
/// README's pre-commit section suggests) leaves the `.gitleaks.toml` in use:
/// only `--rules` or the config's `extra_rules` name the rules. It used to
/// drop the gitleaks rules silently, and their secrets with them (exit 0).
#[test]
fn a_scanner_toml_that_names_no_rules_keeps_the_gitleaks_config() {
    let t = Tree::new();
    t.write(".gitleaks.toml", CUSTOM);
    t.write(".scanner.toml", "allow_paths = [\"vendor/\"]\n");
    t.write("src/app.env", format!("A={ACME}\n"));
    t.write("vendor/x.env", format!("A={ACME}\n"));
    let r = t.run(&["scan", "--format", "json"]);
    let found: Vec<(String, String)> = r
        .expect(1)
        .findings()
        .into_iter()
        .map(|f| (f.rule_id, f.path))
        .collect();
    assert_eq!(
        found,
        [("acme-internal-token".to_owned(), "src/app.env".to_owned())]
    );
    let config = t.path().canonicalize().unwrap().join(".scanner.toml");
    assert_eq!(
        r.stderr.lines().take(2).collect::<Vec<_>>(),
        [
            format!("scanner: note: config {}", config.display()),
            "scanner: note: rules from the gitleaks config ./.gitleaks.toml".to_owned(),
        ]
    );

    // `extra_rules` names the rules: the built-ins and those, not the gitleaks config.
    t.write(
        "more.toml",
        "[[rules]]\nid = \"more\"\nregex = '''more_[a-z0-9]{24}'''\nkeywords = [\"more_\"]\n",
    );
    t.write(".scanner.toml", "extra_rules = [\"more.toml\"]\n");
    t.write("src/app.env", format!("T={}\n", token(1)));
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["src/app.env:1"]);
}

/// `--no-config` reads no gitleaks config either, and `--help` says so (it said only
/// "Do not read any .scanner.toml").
#[test]
fn no_config_reads_no_gitleaks_config_and_says_so() {
    let t = Tree::new();
    t.write(".gitleaks.toml", CUSTOM);
    t.write("src/app.env", format!("A={ACME}\nT={}\n", token(1)));
    let r = t.run(&["scan", "--no-config", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["src/app.env:2"]);
    // No note of a config: the summary is the first line (its time varies).
    assert!(
        r.stderr.starts_with("scanned 2 files (263 B) in "),
        "{}",
        r.stderr
    );
    let help = t.run(&["scan", "--help"]);
    let flat = help
        .expect(0)
        .stdout
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains(
            "--no-config Do not read any .scanner.toml, nor a gitleaks config (.gitleaks.toml, \
             .github/.gitleaks.toml, $GITLEAKS_CONFIG): the built-in rules, and the rule files \
             the flags name"
        ),
        "{flat}"
    );
}

/// `--staged` (and `--diff`, `--history`) scan a repository, whose paths are relative to its
/// root, where `.gitleaksignore` is read: its `.gitleaks.toml` is looked for there too. Run
/// from a subdirectory, `scanner scan --staged` scanned the whole index with the built-in
/// rules instead of the repository's: a token only its custom rule knows was not reported,
/// exit 0, while the hook (run from the root) refused the same commit.
#[test]
fn a_repository_scan_from_a_subdirectory_uses_the_root_gitleaks_config() {
    let r = common::Repo::new();
    r.write(".gitleaks.toml", CUSTOM);
    r.write("src/app.env", format!("A={ACME}\n"));
    r.git(&["add", "."]);
    let note = format!(
        "scanner: note: rules from the gitleaks config {}",
        r.path(".gitleaks.toml").display()
    );
    let ids = |run: &common::Run| -> Vec<String> {
        run.findings()
            .iter()
            .map(|f| format!("{} {}:{}", f.rule_id, f.path, f.line))
            .collect()
    };
    for cwd in [".", "src"] {
        let run = r.scan_in(cwd, &["scan", "--staged", "--format", "json"]);
        assert_eq!(
            ids(run.expect(1)),
            ["acme-internal-token src/app.env:1"],
            "{cwd}"
        );
        assert_eq!(run.stderr.lines().next(), Some(note.as_str()), "{cwd}");
    }
    r.commit("init");
    let run = r.scan_in("src", &["scan", "--history", "--format", "json"]);
    assert_eq!(ids(run.expect(1)), ["acme-internal-token src/app.env:1"]);
    assert_eq!(run.stderr.lines().next(), Some(note.as_str()));
    let other = ACME.replace('q', "z");
    r.write("src/app.env", format!("A={ACME}\nB={other}\n"));
    let run = r.scan_in("src", &["scan", "--diff", "HEAD", "--format", "json"]);
    assert_eq!(ids(run.expect(1)), ["acme-internal-token app.env:2"]);
    assert_eq!(run.stderr.lines().next(), Some(note.as_str()));
}

/// Go's RE2 reads `\072` as an octal escape (`:`), as in a gitleaks rule
/// that spells a separator so. Such a `.gitleaks.toml` was refused:
/// "invalid regex: backreferences are not supported", exit 2. A lone `\1`
/// is a backreference in RE2 too, and still refused.
#[test]
fn a_gitleaks_rule_with_octal_escapes_loads() {
    let t = Tree::new();
    t.write(
        ".gitleaks.toml",
        r#"
[[rules]]
id = "acme-internal-token"
regex = '''acme\072([a-z0-9]{24})\0121'''
keywords = ["acme:"]
"#,
    );
    t.write("src/app.env", "A=1\nT=acme:q8rk2vxz1lmn4pt7wy0aze5h\n1\n");
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), ["src/app.env:2:8:2:32"]);
    assert_eq!(r.findings()[0].rule_id, "acme-internal-token");

    t.write(
        ".gitleaks.toml",
        "[[rules]]\nid = \"r\"\nregex = '''(a)\\1'''\nkeywords = [\"a\"]\n",
    );
    let r = t.run(&["scan"]);
    r.expect(2);
    assert!(
        r.stderr.contains("backreferences are not supported"),
        "{}",
        r.stderr
    );
}

/// gitleaks' `commits` in an allowlist: a match carries no commit, so it cannot be checked.
/// Under `AND` the allowlist holds only in the commits it names; it was read as if they were
/// not there, and the rest of it allowed its matches in every commit and in the work tree:
/// a token under `fx/` was not reported, exit 0, though it is in no listed commit. Such an
/// allowlist now never applies, with a warning naming it.
#[test]
fn an_and_allowlist_naming_commits_never_applies() {
    let r = common::Repo::new();
    r.write(
        ".gitleaks.toml",
        "[extend]\nuseDefault = true\n\n\
         [allowlist]\ncondition = \"AND\"\n\
         commits = [\"0123456789abcdef0123456789abcdef01234567\"]\npaths = ['''^fx/''']\n\n\
         [[rules]]\nid = \"github-pat\"\n[[rules.allowlists]]\ncondition = \"and\"\n\
         commits = [\"0123456789abcdef0123456789abcdef01234567\"]\nstopwords = [\"ghp_\"]\n",
    );
    r.write("fx/a.env", format!("T={}\n", token(6)));
    r.git(&["add", "."]);
    r.commit("add fixture");
    // The file as the scan names it: relative to the directory scanned, or the repository's.
    let repo_file = r.path(".gitleaks.toml").display().to_string();
    for (args, file) in [
        (&["scan", "--format", "json"][..], "./.gitleaks.toml"),
        (
            &["scan", "--history", "--format", "json"],
            repo_file.as_str(),
        ),
    ] {
        let run = r.scan(args);
        assert_eq!(run.expect(1).path_lines(), ["fx/a.env:1"], "{args:?}");
        let warnings: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("warning"))
            .collect();
        assert_eq!(
            warnings,
            [
                format!(
                    "scanner: warning: {file}: `commits` in [allowlist] cannot be checked (a \
                     match carries no commit): with condition AND this allowlist never applies"
                ),
                format!(
                    "scanner: warning: {file}: rule `github-pat`: `commits` in \
                     [[rules.allowlists]] cannot be checked (a match carries no commit): with \
                     condition AND this allowlist never applies"
                ),
            ],
            "{args:?}"
        );
    }
}

/// gitleaks applies a `.gitleaksignore` entry without a commit (`PATH:RULE:LINE`, what
/// `gitleaks dir` prints) to a history scan's findings too, at any commit. `scanner scan
/// --history` reported them again, exit 1, for a repository whose gitleaks run passed.
#[test]
fn a_gitleaksignore_entry_without_a_commit_applies_to_history() {
    let r = common::Repo::new();
    r.write("a.env", format!("T={}\n", token(7)));
    r.write("b.env", format!("T={}\n", token(8)));
    r.git(&["add", "."]);
    r.commit("add");
    r.write(".gitleaksignore", "a.env:github-pat:1\n");
    let run = r.scan(&["scan", "--history", "--format", "json"]);
    assert_eq!(run.expect(1).path_lines(), ["b.env:1"]);
    assert_eq!(
        run.summary_line("suppressed"),
        Some("suppressed: 1 gitleaksignore")
    );
}

/// A `.gitleaksignore` line that is no fingerprint (no line number: a user hoping to ignore a
/// whole file) matched nothing, in silence, and its finding came back unexplained. It is a
/// warning naming the file and the line, as gitleaks warns; the other entries still apply.
#[test]
fn a_gitleaksignore_line_that_is_no_fingerprint_is_named() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(9)));
    t.write("b.env", format!("T={}\n", token(10)));
    t.write(
        ".gitleaksignore",
        "a.env:github-pat\n# ok\nb.env:github-pat:1\na:b:c\n",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["a.env:1"]);
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains("warning")).collect();
    let warning = |n: u32, entry: &str| {
        format!(
            "scanner: warning: {}: line {n}: `{entry}` is not a gitleaks fingerprint \
             (PATH:RULE:LINE or COMMIT:PATH:RULE:LINE): ignored",
            t.path().join(".gitleaksignore").display()
        )
    };
    assert_eq!(
        warnings,
        [warning(1, "a.env:github-pat"), warning(4, "a:b:c")]
    );
}

/// gitleaks reads its rules from `$GITLEAKS_CONFIG_TOML` (the file's contents) when
/// `$GITLEAKS_CONFIG` is unset, before the scanned directory's `.gitleaks.toml`. We do not:
/// a CI job moved over from gitleaks scanned without its custom rules, and a token only they
/// know was not reported, exit 0, without a word. The variable is now named in a warning
/// that says what to do.
#[test]
fn gitleaks_config_toml_is_named_as_not_read() {
    let t = Tree::new();
    t.write("src/app.env", format!("A={ACME}\n"));
    let run = common::Run::from_output(
        common::scanner_in(t.path())
            .env("GITLEAKS_CONFIG_TOML", CUSTOM)
            .env_remove("GITLEAKS_CONFIG")
            .args(["scan", "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(run.expect(0).path_lines(), Vec::<String>::new());
    assert_eq!(
        run.stderr.lines().next(),
        Some(
            "scanner: warning: GITLEAKS_CONFIG_TOML is set, and not read: save its rules to a \
             file and name it with GITLEAKS_CONFIG=FILE or --rules FILE to scan with them"
        )
    );
}

/// gitleaks' `--config FILE` names its rule file; ours names a `.scanner.toml`. A user moving
/// over who passed `.gitleaks.toml` to `--config` was told only of a key it does not expect;
/// the error now says what the file is and which flag takes it.
#[test]
fn a_gitleaks_file_given_to_config_names_the_flag_for_it() {
    let t = Tree::new();
    t.write("gl.toml", CUSTOM);
    t.write("ext.toml", "[extend]\nuseDefault = true\n");
    let r = t.run(&["scan", "--config", "gl.toml", "."]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: invalid config gl.toml:10:2: unknown key `allowlist`, expected one \
         of `extra_rules`, `disable_rules`, `allow_paths`, `allow_secrets`, `baseline`, \
         `rules` (this is a gitleaks rule file: name it with --rules)\n"
    );
    let r = t.run(&["scan", "--config", "ext.toml", "."]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: invalid config ext.toml:1:2: unknown key `extend`, expected one of \
         `extra_rules`, `disable_rules`, `allow_paths`, `allow_secrets`, `baseline`, `rules` \
         (this is a gitleaks rule file: name it with --rules)\n"
    );
}

/// A gitleaks user's baseline is a gitleaks report (`--baseline-path`); ours is written by
/// `--write-baseline`. `scanner scan --baseline gitleaks-report.json` said only "invalid
/// type: map, expected u32 at line 2 column 1"; it now says what the file is and how to make
/// a baseline. Our own report given as a baseline is named so too.
#[test]
fn a_report_given_as_baseline_says_how_to_make_one() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(12)));
    t.write(
        "gitleaks.json",
        "[\n {\n  \"RuleID\": \"github-pat\",\n  \"File\": \"a.env\",\n  \"StartLine\": 1,\n  \
         \"Fingerprint\": \"a.env:github-pat:1\"\n }\n]\n",
    );
    let r = t.run(&["scan", "--baseline", "gitleaks.json", "."]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: invalid baseline gitleaks.json: this is a gitleaks report (gitleaks' \
         --baseline-path), not a baseline: write one with `scanner scan --write-baseline FILE`\n"
    );
    let report = t.run(&["scan", "--format", "json", "."]);
    t.write("report.json", &report.expect(1).stdout);
    let r = t.run(&["scan", "--baseline", "report.json", "."]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: invalid baseline report.json: this is a report, not a baseline: write \
         one with `scanner scan --write-baseline FILE`\n"
    );
}

/// A `.scanner.toml` whose `extra_rules` names the rules takes the place of the directory's
/// `.gitleaks.toml`, as documented; but it did so without a word, and a token only the
/// gitleaks rules know was not reported, exit 0. A warning now names the file not used, and
/// where to list it; listed there, it is used and nothing is said.
#[test]
fn a_gitleaks_config_left_out_by_extra_rules_is_named() {
    let t = Tree::new();
    t.write(".gitleaks.toml", CUSTOM);
    t.write(
        "extra.toml",
        "[[rules]]\nid = \"delta\"\nregex = '''delta_[a-z0-9]{24}'''\nkeywords = [\"delta_\"]\n",
    );
    t.write(".scanner.toml", "extra_rules = [\"extra.toml\"]\n");
    t.write("src/app.env", format!("A={ACME}\n"));
    let r = t.run(&["scan", "--format", "json", "."]);
    assert_eq!(r.expect(0).path_lines(), Vec::<String>::new());
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        [format!(
            "scanner: warning: ./.gitleaks.toml: not used: the extra_rules of {} name the rules \
             (list it there too to scan with its rules)",
            t.join(".scanner.toml").display()
        )]
    );
    t.write(
        ".scanner.toml",
        "extra_rules = [\"extra.toml\", \".gitleaks.toml\"]\n",
    );
    let r = t.run(&["scan", "--format", "json", "."]);
    let found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| format!("{} {}:{}", f.rule_id, f.path, f.line))
        .collect();
    assert_eq!(found, ["acme-internal-token ./src/app.env:1"]);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
}
