//! Rule names: aliases (gitleaks ids of the same detectors) wherever a rule
//! id is named, and user rules replacing rules of the same name.

mod common;

use common::*;
use scanner_engine::{EngineBuilder, RuleFile, RuleOverride, Suppressed, Warning, WarningKind};

const T1: &str = "tok_q8Rk2vXz1LmN4pT7wY0a";

fn tok_file(origin: &str, extra: &str) -> RuleFile {
    let text = format!(
        "[[rules]]\nid = \"tok\"\naliases = [\"gl-tok\", \"old-tok\"]\n\
         regex = '''\\b(tok_[A-Za-z0-9]{{20}})\\b'''\nkeywords = [\"tok_\"]\n{extra}"
    );
    RuleFile::parse(&text, origin).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn builtin_rules_answer_to_gitleaks_ids() {
    let mut b = EngineBuilder::new();
    for f in RuleFile::builtin() {
        b = b.add(f);
    }
    let (e, w) = b.build().unwrap();
    assert!(w.is_empty(), "{w:?}");
    for (alias, id) in [
        ("github-pat", "github-classic-pat"),
        ("aws-access-token", "aws-access-key-id"),
        ("private-key", "private-key-pkcs8"),
        ("github-classic-pat", "github-classic-pat"),
        ("jwt", "jwt"),
    ] {
        assert_eq!(e.resolve_rule_id(alias).as_deref(), Some(id), "{alias}");
    }
    assert_eq!(e.resolve_rule_id("no-such-rule"), None);
    let info = e
        .rules()
        .iter()
        .find(|r| &*r.id == "github-classic-pat")
        .unwrap();
    assert_eq!(info.aliases, vec!["github-pat".to_string()]);
}

#[test]
fn disable_override_and_target_rules_accept_aliases() {
    // Disable by alias: the rule is gone, no warning.
    let (e, w) = EngineBuilder::new()
        .add(tok_file("a.toml", ""))
        .disable(&["gl-tok".into()])
        .build()
        .unwrap();
    assert!(e.rules().is_empty());
    assert!(w.is_empty(), "{w:?}");

    // Override by alias.
    let (e, _) = EngineBuilder::new()
        .add(tok_file("a.toml", ""))
        .override_rule(
            "old-tok",
            RuleOverride {
                allow_secrets: vec![T1.into()],
                ..Default::default()
            },
        )
        .build()
        .unwrap();
    let mut scratch = e.new_scratch();
    let f = scan_with(&e, &mut scratch, format!("k = {T1}\n").as_bytes(), "x");
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(
        scratch.take_suppressed(),
        Suppressed {
            config_allow: 1,
            ..Default::default()
        }
    );

    // targetRules by alias.
    let (e, w) = EngineBuilder::new()
        .add(tok_file(
            "a.toml",
            "[[allowlists]]\ntargetRules = [\"gl-tok\"]\nstopwords = [\"q8rk\"]\n",
        ))
        .build()
        .unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert!(scan(&e, format!("k = {T1}\n").as_bytes()).is_empty());
}

#[test]
fn duplicate_names_are_errors() {
    let build = |text: &str| {
        EngineBuilder::new()
            .add(RuleFile::parse(text, "d.toml").unwrap())
            .build()
            .unwrap_err()
    };
    let rule = |id: &str, aliases: &str| {
        format!("[[rules]]\nid = \"{id}\"\naliases = [{aliases}]\nregex = 'a'\nkeywords = ['a']\n")
    };
    let e = build(&(rule("a", "\"x\"") + &rule("b", "\"x\"")));
    assert_eq!(
        (e.rule(), e.message()),
        (
            Some("b"),
            "line 6: duplicate alias `x` (already an alias of rule `a` in d.toml)"
        )
    );
    let e = build(&(rule("a", "") + &rule("b", "\"a\"")));
    assert_eq!(
        (e.rule(), e.message()),
        (
            Some("b"),
            "line 6: duplicate alias `a` (already the id of rule `a` in d.toml)"
        )
    );
}

#[test]
fn a_user_rule_replaces_the_builtin_rule_of_that_name() {
    // A gitleaks-style file defines `github-pat`, the alias of our
    // `github-classic-pat`: theirs replaces ours, and inherits its names.
    let user = RuleFile::parse(
        "[[rules]]\nid = \"github-pat\"\nregex = '''ghp_[0-9a-zA-Z]{36}'''\nkeywords = [\"ghp_\"]\n",
        "gitleaks.toml",
    )
    .unwrap();
    let mut b = EngineBuilder::new();
    for f in RuleFile::builtin() {
        b = b.add(f);
    }
    let (e, w) = b.add(user).build().unwrap();
    assert_eq!(
        w,
        vec![Warning {
            kind: WarningKind::Replaced,
            file: Some("gitleaks.toml".into()),
            rule: Some("github-pat".into()),
            message: "replaces the built-in rule `github-classic-pat` from \
                      builtin:source-hosting.toml"
                .into(),
        }]
    );
    assert!(e.rules().iter().all(|r| &*r.id != "github-classic-pat"));
    assert_eq!(
        e.resolve_rule_id("github-classic-pat").as_deref(),
        Some("github-pat")
    );
    let token = format!("ghp_{}", Rng(9).token(ALNUM, 36));
    let f = brief(&scan(&e, format!("GITHUB_TOKEN={token}\n").as_bytes()));
    assert_eq!(f, vec![("github-pat".into(), 1, 14, token)]);
}

#[test]
fn a_later_user_file_replaces_an_earlier_one() {
    let a = tok_file("a.toml", "");
    let b = RuleFile::parse(
        "[[rules]]\nid = \"old-tok\"\nregex = '''\\bzz_(tok_[A-Za-z0-9]{20})\\b'''\nkeywords = [\"zz_\"]\n",
        "b.toml",
    )
    .unwrap();
    let (e, w) = EngineBuilder::new().add(a).add(b).build().unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind, WarningKind::Replaced);
    assert_eq!(
        w[0].to_string(),
        "b.toml: rule `old-tok`: replaces the rule `tok` from a.toml"
    );
    let ids: Vec<&str> = e.rules().iter().map(|r| &*r.id).collect();
    assert_eq!(ids, vec!["old-tok"]);
    assert_eq!(e.rules()[0].aliases, vec!["tok", "gl-tok"]);
    assert_eq!(e.resolve_rule_id("gl-tok").as_deref(), Some("old-tok"));
    // Only the later rule's regex runs.
    assert!(scan(&e, format!("k = {T1}\n").as_bytes()).is_empty());
    assert_eq!(
        brief(&scan(&e, format!("k = zz_{T1}\n").as_bytes())),
        vec![("old-tok".into(), 1, 8, T1.into())]
    );
}
