//! `.scanner.toml` as a newcomer writes it: what a bad value says, and that
//! its regexes are read as the rules' are.

mod common;

use common::{token, Tree};

/// A bad `allow_secrets` regex is named with what is wrong and where, as a
/// bad rule regex is (it said only "error parsing pattern 0"; the message's
/// lines are escaped onto one, as every error's are), and the RE2
/// syntax the rules take (`\Q...\E`) is accepted there too.
#[test]
fn allow_secrets_regexes_are_rule_regexes_and_a_bad_one_says_why() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(1)));
    t.write(".scanner.toml", "allow_secrets = [\"ok\", \"(unclosed\"]\n");
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(2);
    let config = t.path().canonicalize().unwrap().join(".scanner.toml");
    assert_eq!(
        r.stderr,
        format!(
            "scanner: error: invalid config {}: `allow_secrets[1]`: invalid regex: unclosed \
             group at position 0\\n    (unclosed\\n    ^\n",
            config.display()
        )
    );

    t.write(
        ".scanner.toml",
        format!(
            "[rules.github-classic-pat]\nallow_secrets = ['^\\Q{}\\E$']\n",
            token(1)
        ),
    );
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(0);
    assert_eq!(
        r.summary_line("suppressed"),
        Some("suppressed: 1 config allow_secrets")
    );
}

/// A value of the wrong type names the key it is the value of, as docs/precommit.md says:
/// `entropy = "3.5"` under `[rules.ID]` said only "invalid type: string \"3.5\", expected
/// f32", which a config with several `[rules.*]` tables leaves to be found by line.
#[test]
fn a_wrong_type_names_the_file_the_line_and_the_key() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(1)));
    t.write(
        ".scanner.toml",
        "allow_paths = [\"docs/\"]\n\n[rules.github-classic-pat]\nentropy = \"3.5\"\n",
    );
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(2);
    let config = t.path().canonicalize().unwrap().join(".scanner.toml");
    assert_eq!(
        r.stderr,
        format!(
            "scanner: error: invalid config {}:4:11: `rules.github-classic-pat.entropy`: \
             invalid type: string \"3.5\", expected f32\n",
            config.display()
        )
    );
}

/// A `disable_rules` entry that names no rule is a warning naming the config file, as
/// one in a rule file's `disabledRules` names that file (it named no file at all).
#[test]
fn an_unknown_rule_in_disable_rules_is_a_warning_naming_the_config() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(1)));
    t.write(".scanner.toml", "disable_rules = [\"githubpat\"]\n");
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    let config = t.path().canonicalize().unwrap().join(".scanner.toml");
    assert_eq!(
        r.stderr.lines().take(2).collect::<Vec<_>>(),
        [
            format!("scanner: note: config {}", config.display()),
            format!(
                "scanner: warning: {}: rule `githubpat`: cannot disable an unknown rule",
                config.display()
            ),
        ]
    );
}
