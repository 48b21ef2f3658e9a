//! `.scanner.toml` as a newcomer writes it: what a bad value says, and that
//! its regexes are read as the rules' are.

mod common;

use common::{token, Tree};

/// A bad `allow_secrets` regex is named with what is wrong and where, by its line and index
/// (it said only "error parsing pattern 0"), but not quoted: the entries are secrets, and the
/// message goes to CI logs (it showed the pattern under a caret). The RE2 syntax the rules take
/// (`\Q...\E`) is accepted there too.
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
            "scanner: error: invalid config {}:1:24: `allow_secrets[1]`: invalid regex: unclosed \
             group at position 0 (the value is not shown: it may be a secret)\n",
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

/// A wrong-typed or bad `allow_secrets` value is named by file, line and key, never shown:
/// `allow_secrets = "ghp_..."` printed the token into the error on stderr, as did a per-rule
/// one and a bad regex in either.
#[test]
fn an_allow_secrets_error_does_not_show_the_secret() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(1)));
    let config = t.path().canonicalize().unwrap().join(".scanner.toml");
    let cases = [
        (
            format!("allow_secrets = \"{}\"\n", token(2)),
            "1:17: `allow_secrets`: invalid type: string",
            ", expected a sequence",
        ),
        (
            format!("allow_secrets = [\"ok\", {{ a = \"{}\" }}]\n", token(2)),
            "1:24: `allow_secrets`: invalid type: map",
            ", expected a string",
        ),
        (
            format!(
                "[rules.github-classic-pat]\nallow_secrets = \"{}\"\n",
                token(2)
            ),
            "2:17: `rules.github-classic-pat.allow_secrets`: invalid type: string",
            ", expected a sequence",
        ),
        (
            format!(
                "[rules.github-classic-pat]\nallow_secrets = [\n  \"ok\",\n  \"{}(\"]\n",
                token(2)
            ),
            "4:3: `rules.github-classic-pat.allow_secrets[1]`: invalid regex: unclosed group \
             at position 40",
            "",
        ),
    ];
    for (text, what, expected) in cases {
        t.write(".scanner.toml", text);
        let r = t.run(&["scan", "--format", "json"]);
        r.expect(2);
        assert_eq!(
            r.stderr,
            format!(
                "scanner: error: invalid config {}:{what} (the value is not shown: it may be a \
                 secret){expected}\n",
                config.display()
            )
        );
    }
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
