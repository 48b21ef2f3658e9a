//! Matching, positions and gates, with exact assertions, on small rule sets
//! written here (independent of the built-in rules).

mod common;

use common::*;
use scanner_engine::{EngineBuilder, RuleFile, RuleOverride, Suppressed};

const TOK: &str = r#"
[[rules]]
id = "tok"
name = "Test token"
regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
keywords = ["tok_"]
"#;

// A fixed random-looking token (checked not to be a placeholder).
const T1: &str = "tok_q8Rk2vXz1LmN4pT7wY0a";
const T2: &str = "tok_Hc5Zp0Wm3Qs9Lr1Ky7Fb";

#[test]
fn positions_lf() {
    let e = engine(TOK);
    let text = format!("first line\nkey = \"{T1}\"\n");
    let f = scan(&e, text.as_bytes());
    assert_eq!(f.len(), 1);
    let f = &f[0];
    assert_eq!(&*f.rule_id, "tok");
    assert_eq!(&*f.rule_name, "Test token");
    assert_eq!((f.line, f.column), (2, 8));
    assert_eq!((f.end_line, f.end_column), (2, 8 + 24));
    assert_eq!((f.offset, f.end_offset), (18, 18 + 24));
    assert_eq!(f.secret, T1);
    assert_eq!(f.r#match, T1);
    assert_eq!(
        f.fingerprint,
        scanner_engine::fingerprint("tok", T1.as_bytes())
    );
    assert!((f.entropy - scanner_engine::shannon_entropy(T1.as_bytes())).abs() < 1e-6);
}

#[test]
fn positions_crlf_and_last_line_without_newline() {
    let e = engine(TOK);
    let text = format!("a\r\nb\r\n  {T1}\r\nx = {T2}");
    let f = scan(&e, text.as_bytes());
    assert_eq!(
        brief(&f),
        vec![
            ("tok".into(), 3, 3, T1.into()),
            ("tok".into(), 4, 5, T2.into())
        ]
    );
    assert_eq!(f[0].offset, 8);
    assert_eq!(f[1].offset as usize, text.len() - 24);
    assert_eq!((f[1].end_line, f[1].end_column), (4, 29));
}

#[test]
fn positions_respect_chunk_start() {
    let e = engine(TOK);
    let text = format!("ab {T1}\nc {T2}");
    let mut out = Vec::new();
    let mut scratch = e.new_scratch();
    e.scan(
        &scanner_engine::ScanInput {
            data: text.as_bytes(),
            path: "x",
            base_offset: 0,
            owned_len: text.len(),
            start: scanner_engine::LinePos {
                line: 10,
                column: 7,
            },
        },
        &mut scratch,
        &mut out,
    );
    assert_eq!(
        brief(&out),
        vec![
            ("tok".into(), 10, 10, T1.into()),
            ("tok".into(), 11, 3, T2.into())
        ]
    );
}

#[test]
fn line_pos_advance() {
    use scanner_engine::LinePos;
    assert_eq!(
        LinePos::START.advance(b"abc"),
        LinePos { line: 1, column: 4 }
    );
    assert_eq!(
        LinePos::START.advance(b"ab\r\ncd\nxyz"),
        LinePos { line: 3, column: 4 }
    );
    assert_eq!(
        LinePos { line: 5, column: 9 }.advance(b"\n"),
        LinePos { line: 6, column: 1 }
    );
    assert_eq!(LinePos::START.advance(b""), LinePos::START);
}

#[test]
fn word_boundary_sees_context_and_invalid_utf8_is_fine() {
    let e = engine(TOK);
    // `\b` must fail before the token: the byte before it is a word byte.
    let glued = format!("x{T1}");
    assert!(scan(&e, glued.as_bytes()).is_empty());
    let mut bytes = vec![0xff, 0xfe, b' '];
    bytes.extend_from_slice(T1.as_bytes());
    bytes.extend_from_slice(&[0xc3, b'\n', 0x80]);
    let f = scan(&e, &bytes);
    assert_eq!(brief(&f), vec![("tok".into(), 1, 4, T1.into())]);
}

#[test]
fn keywords_are_case_insensitive_and_do_not_hide_each_other() {
    let e = engine(
        r#"
[[rules]]
id = "short"
regex = '''\b(sk_[a-z]{4}_[A-Za-z0-9]{16})\b'''
keywords = ["sk_"]
[[rules]]
id = "long"
regex = '''(?i)\b(sk_live_[A-Za-z0-9]{16})\b'''
keywords = ["sk_live_"]
[[rules]]
id = "upper"
regex = '''\b(AKIA[A-Z0-9]{16})\b'''
keywords = ["akia"]
"#,
    );
    let text = "s = sk_live_Hc5Zp0Wm3Qs9Lr1K\nAKIAQ7ZP3MKT5RWN2BXC\n";
    let mut ids: Vec<String> = scan(&e, text.as_bytes())
        .iter()
        .map(|f| f.rule_id.to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["long", "short", "upper"]);
}

#[test]
fn secret_group_default_and_explicit() {
    let e = engine(
        r#"
[[rules]]
id = "first-group"
regex = '''(?:pass)word\s*=\s*"([^"]{8,40})"'''
keywords = ["password"]
[[rules]]
id = "second-group"
regex = '''(user)name\s*=\s*"([^"]{8,40})"'''
secretGroup = 2
keywords = ["username"]
[[rules]]
id = "whole"
regex = '''zz_[a-z0-9]{12}'''
keywords = ["zz_"]
"#,
    );
    let f = scan(
        &e,
        b"password = \"Qm7vT2pLx9Rk\"\nusername = \"Wd4Nf8Zc1Hs6\"\nzz_k3j9q2w8e7r1\n",
    );
    assert_eq!(
        brief(&f),
        vec![
            ("first-group".into(), 1, 13, "Qm7vT2pLx9Rk".into()),
            ("second-group".into(), 2, 13, "Wd4Nf8Zc1Hs6".into()),
            ("whole".into(), 3, 1, "zz_k3j9q2w8e7r1".into()),
        ]
    );
    assert_eq!(f[0].r#match, "password = \"Qm7vT2pLx9Rk\"");
}

#[test]
fn keyword_far_from_match_and_match_longer_than_the_window() {
    let e = engine(
        r#"
[[rules]]
id = "ctx"
regex = '''secret:\s*([a-z]{10,100})'''
keywords = ["mykw"]
max_len = 120
"#,
    );
    let mut rng = Rng(7);
    let secret = rng.token(b"abcdefghijklmnopqrstuvwxyz", 100);
    // Keyword 40 bytes before the match: the window ends at 4 + 120 = 124,
    // the match at 44 + 108 = 152; the anchored re-check must not cut it.
    let text = format!("mykw{}secret: {secret}\n", " ".repeat(40));
    let f = scan(&e, text.as_bytes());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].secret, secret);
    // Keyword too far away (more than max_len before the match): nothing.
    let text = format!("mykw{}secret: {secret}\n", " ".repeat(200));
    assert!(scan(&e, text.as_bytes()).is_empty());
}

#[test]
fn rule_without_keywords_warns_and_scans_everything() {
    let file = RuleFile::parse(
        r#"
[[rules]]
id = "nokw"
regex = '''\bqq[0-9]{6}\b'''
"#,
        "t.toml",
    )
    .unwrap();
    let (e, warnings) = EngineBuilder::new().add(file).build().unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.contains("no keywords"),
        "{}",
        warnings[0]
    );
    let f = scan(&e, b"a qq318274 b qq9 c qq502817");
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].column, f[1].column), (3, 20));
}

#[test]
fn entropy_gate() {
    let e = engine(
        r#"
[[rules]]
id = "ent"
regex = '''\bent_([a-z0-9]{16})\b'''
keywords = ["ent_"]
entropy = 3.5
"#,
    );
    // 16 distinct characters: entropy 4.0; a two-letter alternation: 1.0.
    let mut scratch = e.new_scratch();
    let f = scan_with(
        &e,
        &mut scratch,
        b"ent_q8r2vxz1lmn4pt7w ent_abababababababab",
        "x.txt",
    );
    // Every drop is counted, the entropy gate's too.
    let dropped = scratch.take_suppressed();
    assert_eq!(
        dropped,
        Suppressed {
            entropy: 1,
            ..Default::default()
        }
    );
    assert_eq!(dropped.by_reason()[0], ("entropy", 1));
    assert_eq!(
        brief(&f),
        vec![("ent".into(), 1, 5, "q8r2vxz1lmn4pt7w".into())]
    );
}

#[test]
fn inline_allow_both_spellings() {
    let e = engine(TOK);
    let text = format!(
        "a = {T1} # scanner:allow\nb = {T2} // gitleaks:allow\nc = {T1}\n// scanner:allow\n"
    );
    let mut scratch = e.new_scratch();
    let f = scan_with(&e, &mut scratch, text.as_bytes(), "x.py");
    assert_eq!(brief(&f), vec![("tok".into(), 3, 5, T1.into())]);
    assert_eq!(
        scratch.take_suppressed(),
        Suppressed {
            inline_allow: 2,
            ..Default::default()
        }
    );
    assert_eq!(scratch.take_suppressed(), Suppressed::default());
}

/// `keep_allowed` (`scanner scan -v`): what an allow decision drops comes out
/// marked with the label it would be counted under, in place, plain or
/// decoded, and is no longer counted; a candidate dropped on its own merits
/// is still only counted.
#[test]
fn keep_allowed_marks_allowed_findings_instead_of_counting_them() {
    let e = engine(TOK);
    let encoded = base64(format!("x = {T2}").as_bytes(), false);
    let text = format!("a = {T1} # scanner:allow\nb = {encoded} # gitleaks:allow\nc = {T1}\n");
    let mut scratch = e.new_scratch();
    scratch.keep_allowed(true);
    let f = scan_with(&e, &mut scratch, text.as_bytes(), "x.py");
    let marked: Vec<_> = f
        .iter()
        .map(|f| (f.line, f.secret.as_str(), f.allowed))
        .collect();
    assert_eq!(
        marked,
        vec![
            (1, T1, Some("inline allow")),
            (2, T2, Some("inline allow")),
            (3, T1, None)
        ]
    );
    assert_eq!(scratch.take_suppressed(), Suppressed::default());

    // Off again: the same text, counted and not returned.
    scratch.keep_allowed(false);
    let f = scan_with(&e, &mut scratch, text.as_bytes(), "x.py");
    assert_eq!(brief(&f), vec![("tok".into(), 3, 5, T1.into())]);
    assert_eq!(scratch.take_suppressed().inline_allow, 2);

    // Entropy is the rule's judgement, not an allow: still a count.
    let e = engine(&format!("{TOK}entropy = 5.5\n"));
    let mut scratch = e.new_scratch();
    scratch.keep_allowed(true);
    assert_eq!(scan_with(&e, &mut scratch, text.as_bytes(), "x.py"), vec![]);
    assert_eq!(scratch.take_suppressed().entropy, 3);
}

#[test]
fn placeholders_are_dropped_and_counted() {
    let e = engine(
        r#"
[[rules]]
id = "pw"
regex = '''password\s*=\s*"([^"\s]{6,64})"'''
keywords = ["password"]
[[rules]]
id = "pw-noph"
regex = '''pin\s*=\s*"([^"\s]{6,64})"'''
keywords = ["pin"]
placeholder_check = false
"#,
    );
    let placeholders = [
        "${DB_PASSWORD}",
        "{{.Values.password}}",
        "<your-password>",
        "changeme",
        "EXAMPLEpass",
        "xxxxxxxx",
        "********",
        "$DB_PASSWORD",
        "%DB_PASSWORD%",
        "aaaaaaaaaaaa",
        "12345678",
        "your_password",
        "placeholder",
        "dummy-value",
        "REDACTED",
    ];
    let mut text = String::new();
    for p in placeholders {
        text.push_str(&format!("password = \"{p}\"\n"));
    }
    text.push_str("password = \"Qm7vT2pLx9Rk\"\npin = \"changeme\"\n");
    let mut scratch = e.new_scratch();
    let f = scan_with(&e, &mut scratch, text.as_bytes(), "x");
    assert_eq!(
        brief(&f),
        vec![
            ("pw".into(), 16, 13, "Qm7vT2pLx9Rk".into()),
            ("pw-noph".into(), 17, 8, "changeme".into())
        ]
    );
    assert_eq!(
        scratch.take_suppressed().placeholder,
        placeholders.len() as u64
    );
}

const ALLOW: &str = r#"
[[rules]]
id = "tok"
regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
keywords = ["tok_"]

  [[rules.allowlists]]
  description = "by secret (default target)"
  regexes = ['''^tok_AAAA''']

  [[rules.allowlists]]
  regexTarget = "match"
  regexes = ['''^tok_BBBB''']

  [[rules.allowlists]]
  regexTarget = "line"
  regexes = ['''fixture-token''']

  [[rules.allowlists]]
  stopwords = ["notsecret"]

  [[rules.allowlists]]
  condition = "AND"
  paths = ['''^tests/''']
  regexes = ['''^tok_CCCC''']

  [[rules.allowlists]]
  paths = ['''\.snap$''']
"#;

#[test]
fn rule_allowlists_each_criterion() {
    let e = engine(ALLOW);
    let cases: &[(&str, &str, usize, Suppressed)] = &[
        ("tok_AAAAq8Rk2vXz1LmN4pT7", "src/a.rs", 0, allow(1, 0)),
        ("tok_BBBBq8Rk2vXz1LmN4pT7", "src/a.rs", 0, allow(1, 0)),
        ("tok_q8Rk2vXz1LmN4pT7wY0a", "src/a.rs", 1, allow(0, 0)),
        ("tok_q8RkNOTSECRETLmN4pT7", "src/a.rs", 0, allow(0, 1)),
        // AND: both the path and the regex must match.
        ("tok_CCCCq8Rk2vXz1LmN4pT7", "tests/a.rs", 0, allow(1, 0)),
        ("tok_CCCCq8Rk2vXz1LmN4pT7", "src/a.rs", 1, allow(0, 0)),
        ("tok_q8Rk2vXz1LmN4pT7wY0a", "tests/a.rs", 1, allow(0, 0)),
        // OR with paths alone.
        ("tok_q8Rk2vXz1LmN4pT7wY0a", "x/a.snap", 0, allow(1, 0)),
    ];
    for (secret, path, n, sup) in cases {
        let mut scratch = e.new_scratch();
        let f = scan_with(&e, &mut scratch, format!("k = {secret}\n").as_bytes(), path);
        assert_eq!(f.len(), *n, "{secret} in {path}");
        assert_eq!(&scratch.take_suppressed(), sup, "{secret} in {path}");
    }
    let mut scratch = e.new_scratch();
    let f = scan_with(
        &e,
        &mut scratch,
        format!("fixture-token: {T1}\n").as_bytes(),
        "a",
    );
    assert!(f.is_empty());
    assert_eq!(scratch.take_suppressed(), allow(1, 0));
}

fn allow(allowlist: u64, stopword: u64) -> Suppressed {
    Suppressed {
        allowlist,
        stopword,
        ..Default::default()
    }
}

#[test]
fn rule_path_scopes_the_rule() {
    let e = engine(
        r#"
[[rules]]
id = "tok-in-yaml"
regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
keywords = ["tok_"]
path = '''(?i)\.ya?ml$'''

[[rules]]
id = "pem-file"
path = '''\.pem$'''
"#,
    );
    let text = format!("k: {T1}\n");
    assert_eq!(scan_path(&e, text.as_bytes(), "a/b.yaml").len(), 1);
    assert_eq!(scan_path(&e, text.as_bytes(), "a/b.json").len(), 0);
    let f = scan_path(&e, b"whatever", "keys/server.pem");
    assert_eq!(brief(&f), vec![("pem-file".into(), 1, 1, String::new())]);
    assert_eq!(
        f[0].fingerprint,
        scanner_engine::fingerprint("pem-file", b"keys/server.pem")
    );
}

#[test]
fn global_allowlist_and_gitleaks_extend_file() {
    let text = r#"
title = "my gitleaks config"

[extend]
useDefault = true
disabledRules = ["old-rule"]

[[rules]]
id = "tok"
description = "Internal token"
regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
keywords = ["tok_"]
tags = ["internal"]
  [rules.allowlist]
  stopwords = ["fixture"]

[[rules]]
id = "old-rule"
regex = '''old_[0-9]{8}'''
keywords = ["old_"]

[allowlist]
description = "global"
paths = ['''(^|/)vendor/''', '''\.lock$''']
regexes = ['''^tok_ZZZZ''']
"#;
    let file = RuleFile::parse(text, ".gitleaks.toml").unwrap();
    assert!(file.uses_default());
    assert_eq!(file.disabled_rules(), ["old-rule".to_string()]);
    let (e, warnings) = EngineBuilder::new().add(file).build().unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(e.rules().len(), 1);
    assert_eq!(&*e.rules()[0].name, "Internal token");
    assert!(e.path_allowlisted("vendor/x.go"));
    assert!(e.path_allowlisted("Cargo.lock"));
    assert!(!e.path_allowlisted("src/x.go"));
    let data = format!("{T1} tok_ZZZZq8Rk2vXz1LmN4pT7 tok_fixtureq8Rk2vXz1LmNa old_12345678");
    let mut scratch = e.new_scratch();
    let f = scan_with(&e, &mut scratch, data.as_bytes(), "src/x.go");
    assert_eq!(brief(&f), vec![("tok".into(), 1, 1, T1.into())]);
    assert_eq!(scratch.take_suppressed(), allow(1, 1));
    assert!(scan_path(&e, data.as_bytes(), "vendor/x.go").is_empty());
}

#[test]
fn user_configuration() {
    let file = || RuleFile::parse(TOK, "t.toml").unwrap();
    let data = format!("{T1}\n{T2}\n");
    // allow_secrets over every rule.
    let (e, _) = EngineBuilder::new()
        .add(file())
        .allow_secrets(&["Hc5Zp0".into()])
        .build()
        .unwrap();
    let mut scratch = e.new_scratch();
    let f = scan_with(&e, &mut scratch, data.as_bytes(), "a");
    assert_eq!(brief(&f), vec![("tok".into(), 1, 1, T1.into())]);
    assert_eq!(scratch.take_suppressed().config_allow, 1);
    // Per-rule override: entropy, secrets and paths.
    let (e, _) = EngineBuilder::new()
        .add(file())
        .override_rule(
            "tok",
            RuleOverride {
                entropy: None,
                allow_secrets: vec!["^tok_q8".into()],
                allow_paths: vec![r"^fixtures/".into()],
            },
        )
        .build()
        .unwrap();
    assert_eq!(brief(&scan_path(&e, data.as_bytes(), "a")).len(), 1);
    assert!(scan_path(&e, data.as_bytes(), "fixtures/a").is_empty());
    let (e, _) = EngineBuilder::new()
        .add(file())
        .override_rule(
            "tok",
            RuleOverride {
                entropy: Some(7.9),
                ..Default::default()
            },
        )
        .build()
        .unwrap();
    assert!(scan(&e, data.as_bytes()).is_empty());
    // Unknown id: an error naming it.
    let err = EngineBuilder::new()
        .add(file())
        .override_rule("nope", RuleOverride::default())
        .build()
        .unwrap_err();
    assert_eq!(err.rule(), Some("nope"));
    assert!(err.to_string().contains("does not exist"), "{err}");
    // Disable: the rule is gone; an unknown id is a warning.
    let (e, w) = EngineBuilder::new()
        .add(file())
        .disable(&["tok".into(), "ghost".into()])
        .build()
        .unwrap();
    assert!(e.rules().is_empty());
    assert_eq!(w.len(), 1);
    assert_eq!(
        (
            w[0].file.as_deref(),
            w[0].rule.as_deref(),
            w[0].message.as_str()
        ),
        (None, Some("ghost"), "cannot disable an unknown rule")
    );
}

fn parse_err(text: &str) -> scanner_engine::Error {
    match RuleFile::parse(text, "bad.toml") {
        Err(e) => e,
        Ok(f) => EngineBuilder::new().add(f).build().unwrap_err(),
    }
}

#[test]
fn errors_name_file_rule_and_fault() {
    let e = parse_err("[[rules]]\nid = \"a\"\nregex = 'x\n");
    assert_eq!(e.file().unwrap().to_str(), Some("bad.toml"));
    assert!(
        e.to_string().starts_with("bad.toml: TOML error: line 3"),
        "{e}"
    );

    let e = parse_err("[[rules]]\nregex = 'x'\n");
    assert_eq!(
        e.to_string(),
        "bad.toml: rule #1 (line 1): missing field `id`"
    );

    let e = parse_err("[[rules]]\nid = \"a\"\nregex = 'x'\nentropy = \"high\"\n");
    assert_eq!(e.rule(), Some("a"));
    assert!(
        e.to_string().starts_with("bad.toml: rule `a`: line 1: "),
        "{e}"
    );
    assert!(
        e.message().contains("entropy") || e.message().contains("f64"),
        "{e}"
    );

    let e = parse_err("\n[[rules]]\nid = \"r1\"\nregex = '''ab(cd'''\nkeywords = [\"ab\"]\n");
    assert_eq!(e.rule(), Some("r1"));
    let s = e.to_string();
    assert!(
        s.starts_with(
            "bad.toml: rule `r1`: line 2: regex: invalid regex: unclosed group at position 2"
        ),
        "{s}"
    );

    let e = parse_err("[[rules]]\nid = \"r\"\nregex = '''a(?=b)'''\n");
    assert!(e.message().contains("look-around"), "{e}");

    let e = parse_err(
        "[[rules]]\nid = \"d\"\nregex = 'a'\n[[rules]]\nid = \"e\"\nregex = 'b'\n[[rules]]\nid = \"d\"\nregex = 'c'\n",
    );
    assert_eq!(
        e.to_string(),
        "bad.toml: rule `d`: line 7: duplicate rule id (first defined in bad.toml)"
    );

    let e = parse_err("[[rules]]\nid = \"g\"\nregex = '(a)b'\nsecretGroup = 2\n");
    assert_eq!(
        e.to_string(),
        "bad.toml: rule `g`: line 1: secretGroup = 2 but the regex has 1 capture group(s)"
    );

    let e = parse_err("[[rules]]\nid = \"n\"\n");
    assert!(e.message().contains("neither `regex` nor `path`"), "{e}");

    let e = parse_err(
        "[[rules]]\nid = \"c\"\nregex = 'a'\n[[rules.allowlists]]\ncondition = \"XOR\"\n",
    );
    assert!(e.message().contains("condition must be OR or AND"), "{e}");

    // Across files, see tests/names.rs (a later user file replaces).

    // Unknown keys are warnings, not errors (gitleaks files carry more).
    let f = RuleFile::parse(
        "[[rules]]\nid = \"u\"\nregex = 'ab'\nkeywords = ['ab']\nnegative-examples = []\n",
        "w.toml",
    )
    .unwrap();
    let (_, w) = EngineBuilder::new().add(f).build().unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].message, "unknown key `negative-examples` ignored");
    assert_eq!(w[0].rule.as_deref(), Some("u"));
    assert_eq!(w[0].file.as_deref(), Some(std::path::Path::new("w.toml")));
    assert_eq!(
        w[0].to_string(),
        "w.toml: rule `u`: unknown key `negative-examples` ignored"
    );
}

#[test]
fn re2_syntax_is_translated() {
    let e = engine(
        r#"
[[rules]]
id = "quoted"
regex = '''\Q$(tok)\E=([a-z0-9]{10})'''
keywords = ["$(tok)"]
[[rules]]
id = "class"
regex = '''[[x]([0-9]{10})'''
keywords = ["[", "x"]
"#,
    );
    let f = scan(&e, b"$(tok)=k3j9q2w8e7 [4829174652");
    assert_eq!(
        brief(&f),
        vec![
            ("quoted".into(), 1, 8, "k3j9q2w8e7".into()),
            ("class".into(), 1, 20, "4829174652".into())
        ]
    );
}

#[test]
fn match_text_is_bounded() {
    let e = engine(
        r#"
[[rules]]
id = "long"
regex = '''BEGIN([A-Za-z0-9]{100,3000})END'''
keywords = ["begin"]
max_len = 4000
placeholder_check = false
"#,
    );
    let mut rng = Rng(3);
    let body = rng.token(ALNUM, 2000);
    let text = format!("BEGIN{body}END");
    let f = scan(&e, text.as_bytes());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].secret.len(), 2000);
    assert_eq!(f[0].r#match.len(), scanner_engine::MAX_MATCH_TEXT);
}

#[test]
fn multi_line_secret_positions() {
    let e = engine(
        r#"
[[rules]]
id = "block"
regex = '''-----BEGIN K-----\n([A-Za-z0-9\n]{20,200})\n-----END K-----'''
keywords = ["-----begin k"]
"#,
    );
    let text = "x\n-----BEGIN K-----\nq8Rk2vXz1LmN\n4pT7wY0aBcD3\n-----END K-----\n";
    let f = scan(&e, text.as_bytes());
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].line, f[0].column), (3, 1));
    assert_eq!((f[0].end_line, f[0].end_column), (4, 13));
}

#[test]
fn scratch_is_reused_across_files_and_engines() {
    let e1 = engine(TOK);
    let e2 = engine(ALLOW);
    let mut scratch = e1.new_scratch();
    let text = format!("{T1}\n");
    for _ in 0..3 {
        assert_eq!(scan_with(&e1, &mut scratch, text.as_bytes(), "a").len(), 1);
        assert_eq!(scan_with(&e2, &mut scratch, text.as_bytes(), "a").len(), 1);
    }
}

#[test]
fn check_examples_reports_reasons() {
    let e = engine(
        r#"
[[rules]]
id = "ex"
regex = '''\b(ex_[a-z0-9]{12})\b'''
keywords = ["ex_"]
entropy = 3.0
examples = [
  "k = ex_q8r2vxz1lmn4",
  "k = ex_aaaaaaaaaaab",
  "k = ex_abab12abab12",
  { text = "nothing here", path = "a.txt" },
]
negative_examples = ["k = ex_w0a9c3d6f8h1"]
"#,
    );
    let failures = e.check_examples();
    let got: Vec<(bool, &str, &str)> = failures
        .iter()
        .map(|f| (f.negative, f.example.as_str(), f.reason.as_str()))
        .collect();
    assert_eq!(got.len(), 4, "{failures:#?}");
    assert_eq!(got[0].2, "secret `ex_aaaaaaaaaaab` has entropy 1.37 < 3");
    assert!(
        got[1]
            .2
            .starts_with("secret `ex_abab12abab12` has entropy 2."),
        "{}",
        got[1].2
    );
    assert_eq!(got[2].2, "the regex does not match");
    assert!(got[3].0);
    assert!(
        got[3].2.contains("matched secret `ex_w0a9c3d6f8h1`"),
        "{}",
        got[3].2
    );
    let shown = failures[3].to_string();
    assert!(
        shown.starts_with("rule `ex`: negative example matched: "),
        "{shown}"
    );
}

#[test]
fn keyword_lead_bounds_the_window_before_a_hit() {
    let rules = |lead: &str| {
        format!(
            r#"
[[rules]]
id = "kv"
regex = '''([a-z0-9]{{12}})\s*#\s*deploy'''
keywords = ["deploy"]
max_len = 64
{lead}
"#
        )
    };
    let text = b"k3j9q2w8e7r1  # deploy key\n";
    // Default: the window reaches max_len before the keyword.
    assert_eq!(scan(&engine(&rules("")), text).len(), 1);
    // keyword_lead = 4: the match starts 16 bytes before the keyword.
    assert!(scan(&engine(&rules("keyword_lead = 4")), text).is_empty());
    assert_eq!(scan(&engine(&rules("keyword_lead = 16")), text).len(), 1);
    let e = parse_err(&rules("keyword_lead = 65"));
    assert_eq!(
        e.to_string(),
        "bad.toml: rule `kv`: line 2: keyword_lead = 65 exceeds max_len = 64"
    );
}

/// A `generic = true` rule's finding is dropped, and counted as
/// `duplicate`, when its secret overlaps a provider finding's secret; not
/// when the provider's finding was itself suppressed, and not when a rule
/// without the flag overlaps.
#[test]
fn generic_findings_that_duplicate_a_provider_are_dropped() {
    let e = engine(
        &[
            TOK,
            r#"
[[rules]]
id = "gen"
regex = '''(?i)key\s*=\s*"?([A-Za-z0-9_]{12,44})'''
keywords = ["key"]
generic = true

[[rules]]
id = "other"
regex = '''(?i)cred\s*=\s*"?([A-Za-z0-9_]{12,44})'''
keywords = ["cred"]
"#,
        ]
        .concat(),
    );
    let mut scratch = e.new_scratch();
    let data = "key = tok_q8Rk2vXz1LmN4pT7wY0a\n\
                key = \"tok_b5Jm8nQ2rT6vW9yZ3cF7 extra\"\n\
                key = tok_z9Yx8wV7uT6sR5qP4oN3 # scanner:allow\n\
                key = Q8rK2vXz1LmN4pT7\n\
                cred = tok_h4Kp7sW2xB9dF3jL6nQ8\n";
    let found = scan_with(&e, &mut scratch, data.as_bytes(), "a.env");
    assert_eq!(
        brief(&found),
        vec![
            ("tok".into(), 1, 7, "tok_q8Rk2vXz1LmN4pT7wY0a".into()),
            ("tok".into(), 2, 8, "tok_b5Jm8nQ2rT6vW9yZ3cF7".into()),
            ("gen".into(), 4, 7, "Q8rK2vXz1LmN4pT7".into()),
            ("tok".into(), 5, 8, "tok_h4Kp7sW2xB9dF3jL6nQ8".into()),
            ("other".into(), 5, 8, "tok_h4Kp7sW2xB9dF3jL6nQ8".into()),
        ]
    );
    let suppressed = scratch.take_suppressed();
    // Line 3: both are inline-allowed (the generic one never reaches the
    // duplicate check); lines 1 and 2: duplicates.
    assert_eq!((suppressed.duplicate, suppressed.inline_allow), (2, 2));
}
