//! Decode and rescan: secrets in base64, hex and percent-encoded text, and
//! text decoded inside decoded text, with exact positions (those of the
//! encoded run), encodings and fingerprints. Chunked scans of encoded text
//! are checked in `tests/chunks.rs`.

mod common;

use common::*;
use scanner_engine::{fingerprint, Encoding, Engine, EngineBuilder, RuleFile};

const TOK: &str = r#"
[[rules]]
id = "tok"
regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
keywords = ["tok_"]
"#;

const T1: &str = "tok_q8Rk2vXz1LmN4pT7wY0a";

fn engine_depth(depth: usize) -> Engine {
    EngineBuilder::new()
        .add(RuleFile::parse(TOK, "test.toml").unwrap())
        .decode_depth(depth)
        .build()
        .unwrap()
        .0
}

/// `(line, column, end_line, end_column, offset, end_offset, secret,
/// encodings)` of each finding.
type Placed = (u32, u32, u32, u32, u64, u64, String, Vec<Encoding>);

fn placed(e: &Engine, text: &str) -> Vec<Placed> {
    scan(e, text.as_bytes())
        .into_iter()
        .map(|f| {
            assert_eq!(f.fingerprint, fingerprint("tok", f.secret.as_bytes()));
            (
                f.line,
                f.column,
                f.end_line,
                f.end_column,
                f.offset,
                f.end_offset,
                f.secret,
                f.decoded,
            )
        })
        .collect()
}

#[test]
fn base64_finding_has_the_runs_position_and_the_plain_fingerprint() {
    let e = engine(TOK);
    assert_eq!(e.decode_depth(), 2);
    let run = base64(format!("auth: {T1}\n").as_bytes(), false);
    assert_eq!(run, "YXV0aDogdG9rX3E4Umsydlh6MUxtTjRwVDd3WTBhCg==");
    let text = format!("first\nCONFIG=\"{run}\" # blob\n");
    let start = "first\nCONFIG=\"".len() as u64;
    assert_eq!(
        placed(&e, &text),
        [(
            2,
            9,
            2,
            9 + run.len() as u32,
            start,
            start + run.len() as u64,
            T1.into(),
            vec![Encoding::Base64]
        )]
    );
    // The same secret in plain text: same fingerprint, no encodings.
    let plain = scan(&e, format!("auth: {T1}\n").as_bytes());
    assert_eq!(plain[0].fingerprint, fingerprint("tok", T1.as_bytes()));
    assert_eq!(plain[0].decoded, []);
}

#[test]
fn url_safe_base64_hex_and_percent() {
    let e = engine(TOK);
    // `~~~` encodes as `fn5-`: the URL-safe alphabet.
    let url = base64(format!("~~~ {T1} ~~~~~~").as_bytes(), true);
    assert!(url.contains('-'), "{url}");
    let hex = hex(format!("token={T1}").as_bytes());
    let pct = percent(format!("{{\"token\":\"{T1}\"}}").as_bytes());
    let text = format!("a = {url}\nb = {hex}\nc = https://x.test/cb?state={pct}\n");
    let found: Vec<(u32, u32, Vec<Encoding>)> = placed(&e, &text)
        .into_iter()
        .map(|p| (p.0, p.1, p.7))
        .collect();
    assert_eq!(
        found,
        [
            (1, 5, vec![Encoding::Base64Url]),
            (2, 5, vec![Encoding::Hex]),
            (3, 5, vec![Encoding::Percent]),
        ]
    );
}

#[test]
fn nested_encodings_up_to_the_depth() {
    let inner = hex(format!("secret {T1} end").as_bytes());
    let outer = base64(format!("payload={inner}").as_bytes(), false);
    let text = format!("x: {outer}\n");
    let run_end = 4 + outer.len() as u32;
    let expect = |v: Vec<Encoding>| {
        vec![(
            1,
            4,
            1,
            run_end,
            3,
            3 + outer.len() as u64,
            T1.to_string(),
            v,
        )]
    };
    assert_eq!(
        placed(&engine_depth(2), &text),
        expect(vec![Encoding::Base64, Encoding::Hex])
    );
    assert_eq!(placed(&engine_depth(1), &text), []);
    // Depth 0: no decoding at all.
    let once = format!("x: {}\n", base64(T1.as_bytes(), false));
    assert_eq!(placed(&engine_depth(0), &once), []);
    assert_eq!(placed(&engine_depth(1), &once).len(), 1);
}

#[test]
fn binary_and_short_runs_are_not_rescanned() {
    let e = engine(TOK);
    // A git hash, an identifier, base64 of binary, and a token whose
    // base64 is under 16 decoded bytes.
    let text = format!(
        "commit da39a3ee5e6b4b0d3255bfef95601890afd80709\n\
         fn very_long_identifier_name_for_testing() {{}}\n\
         icon = iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n\
         short = {}\n",
        base64(b"tok_", false)
    );
    assert_eq!(placed(&e, &text), []);
}

#[test]
fn inline_marker_on_the_encoded_line_allows() {
    let e = engine(TOK);
    let text = format!(
        "a = {} # scanner:allow\n",
        base64(format!("auth: {T1}").as_bytes(), false)
    );
    let mut scratch = e.new_scratch();
    assert_eq!(scan_with(&e, &mut scratch, text.as_bytes(), "x"), []);
    assert_eq!(scratch.take_suppressed().inline_allow, 1);
}

#[test]
fn findings_stay_in_offset_order() {
    let e = engine(TOK);
    let t2 = "tok_Hc5Zp0Wm3Qs9Lr1Ky7Fb";
    let text = format!(
        "{}\n{t2}\n",
        base64(format!("auth: {T1}").as_bytes(), false)
    );
    let found: Vec<(u32, String)> = placed(&e, &text).into_iter().map(|p| (p.0, p.6)).collect();
    assert_eq!(found, [(1, T1.to_string()), (2, t2.to_string())]);
}

/// The built-in rules find a GitHub token in a base64 CI variable.
#[test]
fn builtin_rules_through_base64() {
    let e = Engine::builtin().unwrap();
    let token = "ghp_q8Rk2vXz1LmN4pT7wY0aBcD3eF6gH9iJ5kLm";
    let text = format!(
        "env:\n  GH_AUTH_B64: {}\n",
        base64(
            format!("https://x-access-token:{token}@github.com\n").as_bytes(),
            false
        )
    );
    let f = scan_path(&e, text.as_bytes(), ".github/workflows/ci.yml");
    let got: Vec<(&str, u32, u32, &str, &[Encoding])> = f
        .iter()
        .map(|f| {
            (
                &*f.rule_id,
                f.line,
                f.column,
                f.secret.as_str(),
                f.decoded.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [(
            "github-classic-pat",
            2,
            16,
            token,
            [Encoding::Base64].as_slice()
        )]
    );
}

/// A URL is read plain and percent-decoded: a rule the plain scan reports
/// inside it is not reported again from the decoded reading, where `%40`
/// (now `@`) would end the password early.
#[test]
fn a_percent_encoded_url_is_reported_once() {
    let e = Engine::builtin().unwrap();
    let text = "MONGO_URL=mongodb://svc:Qz7vR2kLp9%40wX5@db.internal.test:27017/app\n";
    let found: Vec<(String, u32, String, Vec<Encoding>)> = scan(&e, text.as_bytes())
        .into_iter()
        .map(|f| (f.rule_id.to_string(), f.column, f.secret, f.decoded))
        .collect();
    assert_eq!(
        found,
        [(
            "mongodb-connection-url".to_string(),
            25,
            "Qz7vR2kLp9%40wX5".to_string(),
            vec![]
        )]
    );
}

/// Every finding of an encoded run has the run's position: a run holding
/// the same secret twice gave two identical findings (same line, column,
/// rule and fingerprint). One is reported, the other counted a duplicate.
#[test]
fn the_same_secret_twice_in_one_run_is_reported_once() {
    let e = engine(TOK);
    let run = base64(format!("a={T1} b={T1}\n").as_bytes(), false);
    let text = format!("X={run}\n");
    let end = 2 + run.len();
    assert_eq!(
        placed(&e, &text),
        [(
            1,
            3,
            1,
            end as u32 + 1,
            2,
            end as u64,
            T1.into(),
            vec![Encoding::Base64]
        )]
    );
    let mut scratch = e.new_scratch();
    scan_with(&e, &mut scratch, text.as_bytes(), "src/main.rs");
    assert_eq!(scratch.take_suppressed().duplicate, 1);
}

/// A percent-encoded run holding one secret encoded and, further on,
/// another of the same rule as written: both are reported. The decoded
/// reading is dropped as the plain one's duplicate only when it reads the
/// same secret (above: cut short at a decoded `@`); here the encoded secret
/// was dropped because the run also held the other one, and came back only
/// when a chunk boundary fell between them.
#[test]
fn an_encoded_secret_beside_another_plain_one_in_the_run_is_reported() {
    const T2: &str = "tok_Zx9Wv4Tq7Lp2Nm5Rk8Ys";
    let e = engine(TOK);
    let text = format!("url=key%3D{T1}%26x%3D1x={T2};\n");
    let found: Vec<(u32, String, Vec<Encoding>)> = placed(&e, &text)
        .into_iter()
        .map(|p| (p.1, p.6, p.7))
        .collect();
    let t2_at = text.find(T2).unwrap() as u32 + 1;
    assert_eq!(
        found,
        [
            (1, T1.to_string(), vec![Encoding::Percent]),
            (t2_at, T2.to_string(), vec![]),
        ]
    );
    assert_eq!(scan_chunked(&e, text.as_bytes(), 16).len(), 2);
}
