//! `Engine::scan_focus` finds exactly what `Engine::scan` finds whose
//! secret meets the focus: for random edits of real text holding secrets
//! (the rule files with every example, the test data, encoded and split
//! keys, a generic assignment holding a provider token, test modules),
//! scanning the new version focused on what changed equals scanning it
//! whole and keeping the findings that meet the change; and so it does
//! with `quiet` when the previous version's scan found no keyword of a
//! long-window rule (`ScanScratch::no_long_keywords`). A focus of several
//! ranges (one per run of changed lines, as the history scan gives) finds
//! what a whole scan finds meeting any of them, each finding once.

mod common;

use common::*;
use scanner_engine::{Engine, Finding, ScanInput};

/// What the history scan focuses on: the bytes between the common prefix
/// and the common suffix of the two versions, widened by one byte each
/// side (`input/history/versions.rs`, `changed_span`, written naively here).
fn changed_span(old: &[u8], new: &[u8]) -> std::ops::Range<usize> {
    let mut p = 0;
    while p < old.len() && p < new.len() && old[p] == new[p] {
        p += 1;
    }
    let mut s = 0;
    while s < old.len() - p && s < new.len() - p && old[old.len() - 1 - s] == new[new.len() - 1 - s]
    {
        s += 1;
    }
    let start = p.saturating_sub(1);
    let end = (new.len() - s + 1).min(new.len()).max(start);
    start..end
}

/// `scan(data)` filtered to the findings whose secret meets `focus`, as
/// `mark_unchanged` keeps them.
fn expected(e: &Engine, data: &[u8], path: &str, focus: &std::ops::Range<usize>) -> Vec<Finding> {
    expected_zones(e, data, path, std::slice::from_ref(focus))
}

/// `scan(data)` filtered to the findings whose secret meets one of `zones`.
fn expected_zones(
    e: &Engine,
    data: &[u8],
    path: &str,
    zones: &[std::ops::Range<usize>],
) -> Vec<Finding> {
    scan_path(e, data, path)
        .into_iter()
        .filter(|f| {
            zones
                .iter()
                .any(|z| f.end_offset > z.start as u64 && f.offset < z.end as u64)
        })
        .collect()
}

fn focused(e: &Engine, data: &[u8], path: &str, focus: std::ops::Range<usize>) -> Vec<Finding> {
    focused_quiet(e, data, path, focus, false).0
}

/// `scan_focus` with `quiet`; and whether it found no long-window keyword
/// in `data`.
fn focused_quiet(
    e: &Engine,
    data: &[u8],
    path: &str,
    focus: std::ops::Range<usize>,
    quiet: bool,
) -> (Vec<Finding>, bool) {
    focused_zones(e, data, path, std::slice::from_ref(&focus), quiet)
}

/// `scan_focus` of several ranges with `quiet`; and whether it found no
/// long-window keyword in `data`.
fn focused_zones(
    e: &Engine,
    data: &[u8],
    path: &str,
    zones: &[std::ops::Range<usize>],
    quiet: bool,
) -> (Vec<Finding>, bool) {
    let mut scratch = e.new_scratch();
    let mut out = Vec::new();
    e.scan_focus(
        &ScanInput::whole(data, path),
        zones,
        quiet,
        &mut scratch,
        &mut out,
    );
    (out, scratch.no_long_keywords())
}

/// Whether a whole scan of `data` finds no long-window keyword in it.
fn no_long_keywords(e: &Engine, data: &[u8], path: &str) -> bool {
    let mut scratch = e.new_scratch();
    e.scan(&ScanInput::whole(data, path), &mut scratch, &mut Vec::new());
    scratch.no_long_keywords()
}

fn builtin() -> &'static Engine {
    static E: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    E.get_or_init(|| Engine::builtin().unwrap())
}

/// The PEM key of the `private-key-rsa` rule's first example.
fn pem() -> String {
    let text = std::fs::read_to_string(format!(
        "{}/rules/private-keys.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let begin = text.find("'''\n-----BEGIN RSA PRIVATE KEY-----").unwrap() + 4;
    let end = text[begin..].find("-----END RSA PRIVATE KEY-----").unwrap() + begin + 29;
    text[begin..end].to_string()
}

/// Source text with the secrets the focus must get right: a PEM key, the
/// same key as split string literals, base64, hex and percent-encoded
/// tokens, a generic assignment whose value is a provider token (the
/// duplicate check), a generic one alone, an inline allow, and a Rust
/// test module at the end.
fn mixed(r: &mut Rng) -> String {
    let pem = pem();
    let literals: String = pem
        .lines()
        .map(|l| format!("    \"{l}\\n\"\n"))
        .collect::<String>();
    let mut out = String::new();
    let filler = [
        "fn main() {\n    let value = config.get(\"timeout\").unwrap_or(30);\n}\n",
        "// the token is read from the environment at start-up\n",
        "  \"version\": \"1.2.3\",\r\n",
        "url = \"https://example.com/a%20b?q=1\"\n",
        "const password_hint = \"see the vault\";\n",
    ];
    for i in 0..24 {
        for _ in 0..r.below(6) {
            out.push_str(r.pick(&filler));
        }
        let ghp = format!("ghp_{}", r.token(ALNUM, 36));
        out.push_str(&match i % 12 {
            0 => format!("{pem}\n"),
            1 => format!("static const char *KEY =\n{literals};\n"),
            2 => format!(
                "blob = \"{}\"\n",
                base64(format!("GITHUB_TOKEN={ghp}\n").as_bytes(), false)
            ),
            3 => format!("data = {}\n", hex(format!("token: {ghp}").as_bytes())),
            4 => format!(
                "link = https://x.test/?t={}\n",
                percent(format!("token={ghp}").as_bytes())
            ),
            5 => format!("password = \"{ghp}\"\n"),
            6 => format!("password = \"{}\"\n", r.token(ALNUM, 18)),
            7 => format!("GITHUB_TOKEN={ghp} # scanner:allow\n"),
            8 => format!(
                "SLACK_BOT_TOKEN=xoxb-{}-{}-{}\n",
                r.token(b"0123456789", 12),
                r.token(b"0123456789", 13),
                r.token(ALNUM, 24)
            ),
            9 => format!("stripe_key = \"sk_live_{}\"\n", r.token(ALNUM, 24)),
            10 => format!("api_secret: {}\n", r.token(ALNUM, 32)),
            _ => format!("{ghp}\n"),
        });
    }
    out.push_str("#[cfg(test)]\nmod tests {\n");
    out.push_str(&format!(
        "    const T: &str = \"ghp_{}\";\n}}\n",
        r.token(ALNUM, 36)
    ));
    out
}

/// One random edit of `old`: an insertion, deletion or replacement of a
/// random size, at a random place or next to or inside a secret of
/// `old` (`findings`). Inserted text is a copy of some of `old` (so it
/// may be a secret, or half of one), a secret, or noise.
fn edit(r: &mut Rng, old: &[u8], findings: &[Finding]) -> Vec<u8> {
    let (at, del, inserted) = random_edit(r, old, findings);
    let mut new = old[..at].to_vec();
    new.extend_from_slice(&inserted);
    new.extend_from_slice(&old[at + del..]);
    new
}

/// [`edit`]'s edit: where, how many bytes of `old` it deletes there, and
/// what it inserts.
fn random_edit(r: &mut Rng, old: &[u8], findings: &[Finding]) -> (usize, usize, Vec<u8>) {
    let at = if !findings.is_empty() && r.below(3) > 0 {
        let f = &findings[r.below(findings.len())];
        let (s, e) = (f.offset as usize, f.end_offset as usize);
        let around = [s, e, s.saturating_sub(1), e + 1, (s + e) / 2, s + 1];
        around[r.below(around.len())].min(old.len())
    } else {
        r.below(old.len() + 1)
    };
    let size = match r.below(4) {
        0 => 1 + r.below(3),
        1 => 1 + r.below(40),
        2 => 1 + r.below(600),
        _ => 1 + r.below(6000),
    };
    let (del, ins) = match r.below(3) {
        0 => (0, size),
        1 => (size.min(old.len() - at), 0),
        _ => (size.min(old.len() - at), 1 + r.below(size)),
    };
    let inserted: Vec<u8> = match r.below(4) {
        0 => {
            let from = r.below(old.len().saturating_sub(ins) + 1);
            old[from..(from + ins).min(old.len())].to_vec()
        }
        1 => format!("ghp_{}", r.token(ALNUM, 36))
            .into_bytes()
            .into_iter()
            .cycle()
            .take(ins)
            .collect(),
        2 => r.chars(b" \n=\"'abcXYZ019_-+/%", ins).into_bytes(),
        _ => r.chars(ALNUM, ins).into_bytes(),
    };
    (at, del, inserted)
}

/// Several random edits of `old` at once (as [`edit`]'s, those that would
/// overlap an earlier one dropped): the new version, and what changed in
/// it, one range per edit widened by one byte each side as the history
/// scan widens its runs of changed lines (so that the bytes outside the
/// ranges are runs of `old`).
fn scattered_edits(
    r: &mut Rng,
    old: &[u8],
    findings: &[Finding],
    n: usize,
) -> (Vec<u8>, Vec<std::ops::Range<usize>>) {
    let mut edits: Vec<(usize, usize, Vec<u8>)> =
        (0..n).map(|_| random_edit(r, old, findings)).collect();
    edits.sort_by_key(|e| e.0);
    let (mut new, mut zones, mut from) = (Vec::new(), Vec::new(), 0);
    for (at, del, inserted) in edits {
        if at < from {
            continue;
        }
        new.extend_from_slice(&old[from..at]);
        let start = new.len();
        new.extend_from_slice(&inserted);
        zones.push(start.saturating_sub(1)..new.len() + 1);
        from = at + del;
    }
    new.extend_from_slice(&old[from..]);
    for z in &mut zones {
        z.end = z.end.min(new.len());
        z.start = z.start.min(z.end);
    }
    (new, zones)
}

/// Runs `edits` random edits on `text`, each from the previous version,
/// checking the focused scan of every version, `quiet` when the previous
/// version's scan (whole for the first) found no long-window keyword;
/// returns how many findings met a focus and how many scans were quiet (so
/// that a test can tell it did not pass vacuously).
fn check_edits(e: &Engine, text: &[u8], path: &str, seed: u64, edits: usize) -> (usize, usize) {
    let mut r = Rng(seed);
    let mut old = text.to_vec();
    let mut quiet = no_long_keywords(e, &old, path);
    let (mut met, mut quiet_scans) = (0, 0);
    for i in 0..edits {
        let findings = scan_path(e, &old, path);
        let new = edit(&mut r, &old, &findings);
        let span = changed_span(&old, &new);
        let want = expected(e, &new, path, &span);
        let (got, none) = focused_quiet(e, &new, path, span.clone(), quiet);
        // Found none only where a whole scan finds none, and never in
        // text holding a PEM header or a JWT's start.
        let holds = |t: &[u8]| {
            let t = t.to_ascii_lowercase();
            [&b"-----begin"[..], b"eyj"]
                .iter()
                .any(|k| t.windows(k.len()).any(|w| w == *k))
        };
        assert!(
            !none || (no_long_keywords(e, &new, path) && !holds(&new)),
            "{path}, seed {seed}, edit {i}"
        );
        quiet_scans += usize::from(quiet);
        quiet = none;
        assert_eq!(
            brief(&got),
            brief(&want),
            "{path}, seed {seed}, edit {i}: span {span:?} of {} bytes",
            new.len()
        );
        assert_eq!(got, want, "{path}, seed {seed}, edit {i}: span {span:?}");
        met += got.len();
        old = new;
    }
    (met, quiet_scans)
}

/// As [`check_edits`], with several edits scattered over each version
/// and a focus of one range per edit.
fn check_scattered_edits(
    e: &Engine,
    text: &[u8],
    path: &str,
    seed: u64,
    versions: usize,
) -> (usize, usize) {
    let mut r = Rng(seed);
    let mut old = text.to_vec();
    let mut quiet = no_long_keywords(e, &old, path);
    let (mut met, mut quiet_scans) = (0, 0);
    for i in 0..versions {
        let findings = scan_path(e, &old, path);
        let n = 2 + r.below(12);
        let (new, zones) = scattered_edits(&mut r, &old, &findings, n);
        let want = expected_zones(e, &new, path, &zones);
        let (got, none) = focused_zones(e, &new, path, &zones, quiet);
        assert!(
            !none || no_long_keywords(e, &new, path),
            "{path}, seed {seed}, version {i}"
        );
        quiet_scans += usize::from(quiet);
        quiet = none;
        assert_eq!(
            brief(&got),
            brief(&want),
            "{path}, seed {seed}, version {i}: zones {zones:?} of {} bytes",
            new.len()
        );
        assert_eq!(
            got, want,
            "{path}, seed {seed}, version {i}: zones {zones:?}"
        );
        met += got.len();
        old = new;
    }
    (met, quiet_scans)
}

/// Histories whose versions each edit many scattered places: a focus of
/// one range per edit equals the whole scan filtered to the ranges, on
/// the rule files' examples, the mixed source and the test data.
#[test]
fn focus_of_many_ranges_equals_filtered_whole_scan_on_scattered_edits() {
    let e = builtin();
    let (mut met, mut quiet) = (0, 0);
    for (k, name) in builtin_names().iter().enumerate() {
        let path = format!("{}/rules/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read(&path).unwrap();
        let (m, q) = check_scattered_edits(e, &text, "examples.txt", 7000 + k as u64, 6);
        (met, quiet) = (met + m, quiet + q);
    }
    let mut r = Rng(11);
    let text = mixed(&mut r);
    for seed in 0..8 {
        met += check_scattered_edits(e, text.as_bytes(), "src/lib.rs", 90 + seed, 6).0;
    }
    assert!(met > 100, "only {met} findings met a focus");
    assert!(quiet > 5, "only {quiet} quiet scans");
}

/// Findings that meet two ranges of the focus are reported once; those
/// between two ranges, meeting neither, not at all.
#[test]
fn a_secret_meeting_two_ranges_is_reported_once_and_one_between_them_not_at_all() {
    let e = builtin();
    let mut r = Rng(23);
    let filler = "let x = 1; // a line of code\n".repeat(300);
    let (a, b) = (
        format!("ghp_{}", r.token(ALNUM, 36)),
        format!("ghp_{}", r.token(ALNUM, 36)),
    );
    let text =
        format!("{filler}const A: &str = \"{a}\";\n{filler}const B: &str = \"{b}\";\n{filler}");
    let (at_a, at_b) = (text.find(&a).unwrap(), text.find(&b).unwrap());
    let whole = scan_path(e, text.as_bytes(), "src/a.rs");
    assert_eq!(whole.len(), 2, "{whole:?}");
    // Two ranges inside `a`, one far before both, one far after.
    let zones = [
        at_a + 4..at_a + 6,
        100..120,
        at_a + 30..at_a + 31,
        text.len() - 50..text.len() - 40,
    ];
    let (got, _) = focused_zones(e, text.as_bytes(), "src/a.rs", &zones, false);
    assert_eq!(brief(&got), brief(&whole[..1]));
    // And `b` alone, from an empty range inside it.
    let (got, _) = focused_quiet(e, text.as_bytes(), "src/a.rs", at_b + 9..at_b + 9, true);
    assert_eq!(brief(&got), brief(&whole[1..]));
}

/// A percent-encoded URL read again decoded repeats the plain scan's
/// findings inside it, which the decode pass drops as duplicates; with a
/// focus at the URL's end, the plain `key=AIza...` before it was not
/// computed, so the decoded reading of it was reported, at the URL's start.
#[test]
fn a_decoded_url_repeating_a_plain_finding_outside_the_focus_is_not_reported() {
    let e = builtin();
    let mut r = Rng(31);
    let key = format!("AIzaSy{}", r.token(ALNUM, 33));
    let token = format!("{}%3D", r.token(ALNUM, 43));
    let text = format!(
        "chat:\n  webhook_url: https://chat.googleapis.com/v1/spaces/HXz5082fT8G/messages?\
         key={key}&token={token}\n"
    );
    let end = text.len() - 2;
    let want = expected(e, text.as_bytes(), "chat.yaml", &(end..end + 1));
    let rules: Vec<&str> = want.iter().map(|f| &*f.rule_id).collect();
    assert_eq!(rules, ["google-chat-webhook-url"]);
    let got = focused(e, text.as_bytes(), "chat.yaml", end..end + 1);
    assert_eq!(brief(&got), brief(&want));
}

#[test]
fn focus_equals_filtered_whole_scan_on_edited_rule_files() {
    let e = builtin();
    let (mut met, mut quiet) = (0, 0);
    for (k, name) in builtin_names().iter().enumerate() {
        let path = format!("{}/rules/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read(&path).unwrap();
        let (m, q) = check_edits(e, &text, "examples.txt", 1000 + k as u64, 16);
        (met, quiet) = (met + m, quiet + q);
    }
    // The bounds only guard against a vacuous pass.
    assert!(met > 100, "only {met} findings met a focus");
    assert!(quiet > 10, "only {quiet} quiet scans");
}

#[test]
fn focus_equals_filtered_whole_scan_on_edited_mixed_source() {
    let e = builtin();
    let mut r = Rng(7);
    let text = mixed(&mut r);
    // What the text holds, so that the edits below start from all of it.
    let whole = scan_path(e, text.as_bytes(), "src/lib.rs");

    let rules: std::collections::BTreeSet<&str> = whole.iter().map(|f| &*f.rule_id).collect();
    for want in [
        "private-key-rsa",
        "github-classic-pat",
        "slack-bot-token",
        "generic-password-assignment",
    ] {
        assert!(rules.contains(want), "{want} missing from {rules:?}");
    }
    assert!(whole.iter().any(|f| !f.decoded.is_empty()));
    assert!(whole.iter().any(|f| f.tags.contains(&"test-code")));
    let mut met = 0;
    for seed in 0..16 {
        met += check_edits(e, text.as_bytes(), "src/lib.rs", 50 + seed, 10).0;
    }
    assert!(met > 50, "only {met} findings met a focus");
}

/// The test data with its placeholders (`testdata/README.md`) filled in:
/// `{{TOKEN:n}}` a GitHub token, `{{TOKEN64:n}}` the same in base64,
/// `{{AWS:n}}` an access key id (no valid checksums: the focus does not
/// care).
fn expand(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.windows(2).position(|w| w == b"{{") {
        out.extend_from_slice(&rest[..at]);
        let end = rest[at..]
            .windows(2)
            .position(|w| w == b"}}")
            .map(|e| at + e);
        let inner = end.and_then(|end| std::str::from_utf8(&rest[at + 2..end]).ok());
        let Some((kind, Ok(n))) = inner
            .and_then(|i| i.split_once(':'))
            .map(|(k, n)| (k, n.parse::<u64>()))
        else {
            // Not a placeholder (a template's braces).
            out.extend_from_slice(b"{{");
            rest = &rest[at + 2..];
            continue;
        };
        let (end, inner) = (end.unwrap(), inner.unwrap());
        let mut r = Rng(n + 1);
        let token = format!("ghp_{}", r.token(ALNUM, 36));
        out.extend_from_slice(
            match kind {
                "TOKEN" => token,
                "TOKEN64" => base64(token.as_bytes(), false),
                "AWS" => format!("AKIA{}", r.token(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
                _ => panic!("unknown placeholder {inner}"),
            }
            .as_bytes(),
        );
        rest = &rest[end + 2..];
    }
    out.extend_from_slice(rest);
    out
}

#[test]
fn focus_equals_filtered_whole_scan_on_edited_test_data() {
    let e = builtin();
    let root = format!("{}/../../testdata/", env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(&root)];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if !p.to_string_lossy().ends_with(".json") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut met, mut quiet) = (0, 0);
    for (k, p) in files.iter().enumerate() {
        let text = expand(&std::fs::read(p).unwrap());
        if text.is_empty() {
            continue;
        }
        // The path as a scan of `testdata` gives it.
        let path = p.to_string_lossy();
        let (m, q) = check_edits(e, &text, &path[root.len()..], 300 + k as u64, 8);
        (met, quiet) = (met + m, quiet + q);
    }
    assert!(met > 5, "only {met} findings met a focus");
    assert!(quiet > 10, "only {quiet} quiet scans");
}

/// A deletion leaves a focus of two bytes (one each side of the cut): a
/// secret joined from its two sides is still found, and nothing else.
#[test]
fn a_deletion_joining_a_secret_finds_it() {
    let e = builtin();
    let mut r = Rng(5);
    let token = format!("ghp_{}", r.token(ALNUM, 36));
    let filler = "let x = 1;\n".repeat(500);
    let old = format!(
        "{filler}{}XXXX{} other\n{filler}",
        &token[..20],
        &token[20..]
    );
    let new = format!("{filler}{token} other\n{filler}");
    let span = changed_span(old.as_bytes(), new.as_bytes());
    assert_eq!(span.len(), 2);
    let got = focused(e, new.as_bytes(), "src/a.rs", span);
    assert_eq!(
        brief(&got),
        vec![("github-classic-pat".into(), 501, 1, token)]
    );
}

/// A generic secret that starts in the focus and reaches far out of it
/// (a long-window generic rule) holds a provider token: the provider's
/// match, far from the focus, must be computed for the duplicate check.
#[test]
fn a_generic_secret_reaching_out_of_the_focus_is_checked_against_providers() {
    let e = engine(
        r#"
[[rules]]
id = "tok"
regex = '''\b(tok_[a-z0-9]{20})\b'''
keywords = ["tok_"]

[[rules]]
id = "long-generic"
regex = '''conf=([a-z0-9_ ]{10,3000});'''
keywords = ["conf="]
generic = true
max_len = 3100
"#,
    );
    let mut r = Rng(3);
    let filler = "x = 1;\n".repeat(300);
    let tok = format!("tok_{}", r.chars(b"abcdefghij0123456789", 20));
    let body = r.chars(b"abcdefghijklmnopqrstuvwxyz0123456789 ", 2500);
    for (old_mark, new_mark) in [("aa", "ab"), ("aa", "a")] {
        let old = format!("{filler}conf={old_mark} {body} {tok} ;\n{filler}");
        let new = format!("{filler}conf={new_mark} {body} {tok} ;\n{filler}");
        let span = changed_span(old.as_bytes(), new.as_bytes());
        assert!(span.len() <= 3, "{span:?}");
        let whole = scan_path(&e, new.as_bytes(), "app.env");
        // Without the token, the generic secret is a finding.
        let alone = scan_path(&e, new.replace(&tok, "zzzzzzzzzz").as_bytes(), "app.env");
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert_eq!(&*alone[0].rule_id, "long-generic");
        // The generic secret is dropped: the provider token is inside it.
        assert_eq!(
            brief(&whole),
            vec![("tok".into(), 301, 2508 + new_mark.len() as u32, tok.clone())]
        );
        assert_eq!(focused(&e, new.as_bytes(), "app.env", span.clone()), vec![]);
        // With a second range past the token: the two ranges together
        // cover the generic secret's ends, but the token lies between.
        let end = new.find(" ;\n").unwrap();
        let (got, _) = focused_zones(&e, new.as_bytes(), "app.env", &[span, end..end + 1], false);
        assert_eq!(got, vec![]);
    }
}

/// A key longer than the walk around the focus reaches (4 KB of base64):
/// an edit of its last line still finds it, from its `-----BEGIN` far
/// before the focus.
#[test]
fn an_edit_at_the_end_of_a_long_key_finds_the_key() {
    let e = builtin();
    let mut r = Rng(17);
    let b64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let body: Vec<String> = (0..64).map(|_| r.chars(b64, 64)).collect();
    let filler = "let x = 1;\n".repeat(400);
    let key = |last: &str| {
        format!(
            "{filler}const KEY: &str = \"-----BEGIN RSA PRIVATE KEY-----\n{}\n{last}\n-----END RSA PRIVATE KEY-----\";\n{filler}",
            body.join("\n")
        )
    };
    let old = key("AAAAAAAAAAAAAAAA");
    for last in ["AAAAAAAAAAAAAAAB", "AAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAQ"] {
        let new = key(last);
        let span = changed_span(old.as_bytes(), new.as_bytes());
        let want = expected(e, new.as_bytes(), "src/key.rs", &span);
        assert_eq!(
            brief(&want)
                .iter()
                .map(|f| f.0.as_str())
                .collect::<Vec<_>>(),
            ["private-key-rsa"]
        );
        assert!(span.start as u64 - want[0].offset > 4000, "{span:?}");
        let (got, none) = focused_quiet(e, new.as_bytes(), "src/key.rs", span.clone(), false);
        assert_eq!(got, want);
        assert!(!none);
        // `quiet` is the caller's word that no such keyword lies outside
        // the focus: given wrongly, the key is not looked for.
        let (got, _) = focused_quiet(e, new.as_bytes(), "src/key.rs", span, true);
        assert_eq!(got, vec![]);
    }
}

/// A key pasted into a file with no long-window keyword is found by a
/// `quiet` focus; the file then holds one, and says so.
#[test]
fn a_key_pasted_into_a_quiet_file_is_found_and_ends_quiet() {
    let e = builtin();
    let filler = "let x = 1; // a line of code\n".repeat(2000);
    let old = format!("{filler}{filler}");
    assert!(no_long_keywords(e, old.as_bytes(), "src/a.rs"));
    let new = format!("{filler}const KEY: &str = \"{}\";\n{filler}", pem());
    let span = changed_span(old.as_bytes(), new.as_bytes());
    let want = expected(e, new.as_bytes(), "src/a.rs", &span);
    assert_eq!(want.len(), 1, "{want:?}");
    let (got, none) = focused_quiet(e, new.as_bytes(), "src/a.rs", span, true);
    assert_eq!(got, want);
    assert!(!none);
    // An edit far from the key: its keyword is outside the walk, not
    // known to be absent.
    let newer = new.replacen("let x = 1;", "let y = 2;", 1);
    let span = changed_span(new.as_bytes(), newer.as_bytes());
    let (got, none) = focused_quiet(e, newer.as_bytes(), "src/a.rs", span, false);
    assert_eq!(got, vec![]);
    assert!(!none);
}

/// Base64 wrapped over lines is one run from its first line: a focus on
/// any line of the block (an edit there) finds the token whose encoding
/// straddles a line break, as the whole scan reports it.
#[test]
fn a_focus_inside_wrapped_base64_finds_the_run() {
    let e = builtin();
    let mut r = Rng(43);
    let text = format!("{}TOKEN=ghp_{}\n", "x".repeat(32), r.token(ALNUM, 36));
    let b64 = base64(text.as_bytes(), false);
    let lines: Vec<&str> = (0..b64.len())
        .step_by(64)
        .map(|i| &b64[i..(i + 64).min(b64.len())])
        .collect();
    let filler = "let x = 1; // a line of code\n".repeat(50);
    let data = format!("{filler}{}\n{filler}", lines.join("\n"));
    let whole = scan_path(e, data.as_bytes(), "a.txt");
    assert_eq!(whole.len(), 1, "{whole:?}");
    assert_eq!(whole[0].offset, filler.len() as u64);
    for line in &lines {
        let at = data.find(line).unwrap() + 3;
        assert_eq!(focused(e, data.as_bytes(), "a.txt", at..at + 1), whole);
    }
}
