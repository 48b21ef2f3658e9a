//! Windows that fit the regex: a rule without `max_len` gets its regex's
//! longest match as window, or, when the regex is unbounded, the engine's
//! longest window; long secrets (a PEM block, a long JWT, a `{250,}` token)
//! are found once, at the right place, whole or in chunks.

mod common;

use common::*;
use scanner_engine::{Engine, EngineBuilder, RuleFile, UNBOUNDED_WINDOW};

/// `(rule, line, column, end_line, end_column, secret)`.
type Full = (String, u32, u32, u32, u32, String);

fn full(findings: &[scanner_engine::Finding]) -> Vec<Full> {
    findings
        .iter()
        .map(|f| {
            (
                f.rule_id.to_string(),
                f.line,
                f.column,
                f.end_line,
                f.end_column,
                f.secret.clone(),
            )
        })
        .collect()
}

/// Plants `secret` after `prefix` bytes of filler (and a newline), in a
/// buffer long enough to be scanned in several chunks; checks the whole
/// scan and chunked scans (chunk boundaries before, at and inside the
/// secret) each report it exactly once, at its exact position.
fn assert_found_once(e: &Engine, rule: &str, secret: &str) {
    let overlap = e.chunk_overlap();
    // Ownership of a chunk starts 2 LEAD in; LEAD is UNBOUNDED_WINDOW for
    // these one-rule engines.
    let boundary = overlap + 2 * UNBOUNDED_WINDOW;
    let half = secret.len() / 2;
    for prefix in [10, boundary - 2, boundary - 1, boundary, boundary - half] {
        let mut data = "ab\n".repeat(prefix / 3 + 1).into_bytes();
        data.truncate(prefix);
        data.push(b'\n');
        let line = data.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        data.extend_from_slice(secret.as_bytes());
        data.extend_from_slice(&b"\ncd\n".repeat(overlap / 2));
        let end_line = line + secret.matches('\n').count() as u32;
        let end_column = (secret.len() - secret.rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
        let expected = vec![(
            rule.to_string(),
            line,
            1,
            end_line,
            end_column,
            secret.to_string(),
        )];
        assert_eq!(full(&scan(e, &data)), expected, "whole, prefix {prefix}");
        for chunk in [overlap, overlap + 1, overlap + 4093, 2 * overlap] {
            let chunked = scan_chunked(e, &data, chunk);
            assert_eq!(full(&chunked), expected, "prefix {prefix}, chunk {chunk}");
        }
    }
}

#[test]
fn private_key_pem_of_a_4096_bit_rsa_key() {
    let out = std::process::Command::new("openssl")
        .args(["genrsa", "4096"])
        .output()
        .expect("openssl must be installed to run this test");
    assert!(out.status.success(), "openssl genrsa failed: {out:?}");
    let pem = String::from_utf8(out.stdout).unwrap();
    let pem = pem.trim_end();
    assert!(pem.len() > 3000, "{} bytes", pem.len());
    let e = engine(
        r#"
[[rules]]
id = "private-key"
regex = '''(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]*?KEY(?: BLOCK)?-----'''
keywords = ["-----begin"]
"#,
    );
    assert_found_once(&e, "private-key", pem);
}

/// Base64url without padding.
fn b64url(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..=c.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

#[test]
fn jwt_of_456_bytes() {
    let header = b64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    let mut claims = String::from(r#"{"sub":"1234567890","name":""#);
    claims.push_str(&"n".repeat(281 - claims.len() - r#"","iat":1516239022}"#.len()));
    claims.push_str(r#"","iat":1516239022}"#);
    assert_eq!(claims.len(), 281);
    let mut r = Rng(7);
    let jwt = format!(
        "{header}.{}.{}",
        b64url(claims.as_bytes()),
        r.token(ALNUM, 43)
    );
    assert_eq!(jwt.len(), 456);
    let e = engine(
        r#"
[[rules]]
id = "jwt"
regex = '''\b(ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})'''
keywords = ["eyj"]
"#,
    );
    assert_found_once(&e, "jwt", &jwt);
}

#[test]
fn token_of_300_chars_with_a_250_or_more_rule() {
    let token = Rng(3).token(ALNUM, 300);
    let file = RuleFile::parse(
        "[[rules]]\nid = \"long\"\nregex = '''\\b[A-Za-z0-9]{250,}\\b'''\n",
        "t.toml",
    )
    .unwrap();
    let (e, w) = EngineBuilder::new().add(file).build().unwrap();
    // No keywords: the regex runs everywhere (and says so).
    assert_eq!(w.len(), 1, "{w:?}");
    assert_found_once(&e, "long", &token);
}

#[test]
fn window_is_the_longest_match_of_a_bounded_regex() {
    // 302 bytes at most: the rule finds its secret without max_len, and the
    // overlap follows the longest window (5 * 302 + keyword + 16).
    let e = engine(
        r#"
[[rules]]
id = "b"
regex = '''kx([a-z]{290,300})'''
keywords = ["kx"]
"#,
    );
    let secret = Rng(5).token(b"abcdefghijklmnopqrstuvwxyz", 299);
    let f = brief(&scan(&e, format!("x kx{secret} y").as_bytes()));
    assert_eq!(f, vec![("b".into(), 1, 5, secret)]);
    assert_eq!(e.chunk_overlap(), 5 * 302 + 2 + 16);
}

#[test]
fn a_rule_that_could_never_match_is_an_error() {
    let build = |toml: &str| {
        EngineBuilder::new()
            .add(RuleFile::parse(toml, "n.toml").unwrap())
            .build()
            .unwrap_err()
    };
    let e = build("[[rules]]\nid = \"huge\"\nregex = 'a{1048577,}'\nkeywords = ['a']\n");
    assert_eq!(e.rule(), Some("huge"));
    assert!(
        e.message().contains("shortest match is 1048577 bytes"),
        "{e}"
    );
    let e = build("[[rules]]\nid = \"short\"\nregex = 'a{10}'\nkeywords = ['a']\nmax_len = 9\n");
    assert_eq!(e.rule(), Some("short"));
    assert!(e.message().contains("could never match"), "{e}");
}
