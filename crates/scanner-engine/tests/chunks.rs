//! Chunked scanning equals whole-buffer scanning: random buffers with
//! planted secrets, keywords, markers, CRLF and invalid UTF-8, any chunk
//! size at least the overlap.

mod common;

use common::*;
use proptest::prelude::*;
use scanner_engine::{Engine, Finding, LinePos};

const RULES: &str = r#"
[[rules]]
id = "tok"
regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
keywords = ["tok_"]

[[rules]]
id = "assign"
regex = '''(?i)(?:api_?key|token)\s*[:=]\s*["']?([A-Za-z0-9]{16,40})\b'''
keywords = ["apikey", "api_key", "token"]
entropy = 2.5
# `\s*` is unbounded: without max_len the window would be the engine's
# longest (8 KiB) and the overlap 40 KiB, longer than most generated inputs.
max_len = 80

[[rules]]
id = "nokw"
regex = '''\bqq[0-9]{6}\b'''

[[rules]]
id = "block"
regex = '''-----BEGIN K-----\r?\n([A-Za-z0-9\r\n]{20,250})-----END K-----'''
keywords = ["-----begin k"]
max_len = 300

[[rules]]
id = "ctx"
regex = '''secret:\s*([a-z]{10,60})'''
keywords = ["mykw"]
max_len = 90

# Private keys as split source literals (reassembled, `src/literals.rs`).
[[rules]]
id = "lit"
regex = '''(-----BEGIN L-----\n[A-Za-z0-9]{20,200}\n-----END L-----)'''
keywords = ["-----begin l"]
max_len = 300

# Generic: its findings that overlap a provider's (`tok`, `assign`) are
# dropped, which must not depend on where a chunk boundary falls.
[[rules]]
id = "gen"
regex = '''(?i)key\s*=\s*["']?([A-Za-z0-9_]{12,44})'''
keywords = ["key"]
generic = true
max_len = 80
"#;

fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Filler, including bytes that are not UTF-8.
        proptest::collection::vec(
            prop_oneof![
                Just(b' '),
                Just(b'\n'),
                Just(b'\r'),
                Just(b'='),
                Just(b'"'),
                Just(0xffu8),
                Just(b'a'),
                Just(b'Z'),
                Just(b'7'),
                Just(b'_'),
            ],
            1..80
        ),
        "[A-Za-z0-9]{20}".prop_map(|s| format!("tok_{s}").into_bytes()),
        "[A-Za-z0-9]{20}".prop_map(|s| format!("key = tok_{s}").into_bytes()),
        "[A-Za-z0-9]{12,30}".prop_map(|s| format!("key = {s}").into_bytes()),
        "[A-Za-z0-9]{16,44}".prop_map(|s| format!("api_key = \"{s}\"").into_bytes()),
        "[A-Za-z0-9]{16,44}".prop_map(|s| format!("TOKEN: {s}").into_bytes()),
        "[0-9]{5,7}".prop_map(|s| format!("qq{s}").into_bytes()),
        ("[A-Za-z0-9]{10,40}", "[A-Za-z0-9]{10,40}")
            .prop_map(
                |(a, b)| format!("-----BEGIN K-----\n{a}\r\n{b}-----END K-----").into_bytes()
            ),
        (0usize..60, "[a-z]{10,60}").prop_map(|(gap, s)| format!(
            "mykw{}secret: {s}",
            " ".repeat(gap)
        )
        .into_bytes()),
        // Encoded text, decoded and scanned again.
        "[A-Za-z0-9]{20}"
            .prop_map(|s| base64(format!("key = tok_{s}").as_bytes(), false).into_bytes()),
        "[A-Za-z0-9]{20}".prop_map(|s| hex(format!("x tok_{s}\n").as_bytes()).into_bytes()),
        // Base64 with its `/` escaped (`\/`, PHP's json_encode).
        "[A-Za-z0-9]{20}".prop_map(|s| base64(format!("??? tok_{s}").as_bytes(), false)
            .replace('/', "\\/")
            .into_bytes()),
        // Base64 wrapped over lines (one run across the breaks).
        (0usize..30, "[A-Za-z0-9]{20}", 0usize..3).prop_map(|(pad, s, brk)| wrap(
            &base64(format!("{}tok_{s}", "x".repeat(pad)).as_bytes(), false),
            ["\n", "\r\n", "\\n"][brk]
        )
        .into_bytes()),
        "[A-Za-z0-9]{20}"
            .prop_map(|s| percent(format!("{{\"t\": \"tok_{s}\"}}").as_bytes()).into_bytes()),
        "[A-Za-z0-9]{20,60}".prop_map(|s| format!(
            "\"-----BEGIN L-----\\n\"\n  \"{s}\\n\" +\n  \"-----END L-----\""
        )
        .into_bytes()),
        Just(b"tok_".to_vec()),
        Just(b" scanner:allow ".to_vec()),
        Just(b"mykw".to_vec()),
    ]
}

fn sorted(mut v: Vec<Finding>) -> Vec<Finding> {
    v.sort_by(|a, b| (a.offset, &a.rule_id).cmp(&(b.offset, &b.rule_id)));
    v
}

fn engine_for_test() -> &'static Engine {
    static E: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    E.get_or_init(|| engine(RULES))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn chunked_equals_whole(
        pieces in proptest::collection::vec(piece(), 1..120),
        chunk_factor in 0.0f64..3.0,
    ) {
        let e = engine_for_test();
        let data: Vec<u8> = pieces.concat();
        let overlap = e.chunk_overlap();
        let chunk = overlap + (chunk_factor * overlap as f64) as usize;
        let whole = sorted(scan(e, &data));
        let chunked = sorted(scan_chunked(e, &data, chunk));
        prop_assert_eq!(&whole, &chunked, "chunk = {}, len = {}", chunk, data.len());
    }
}

#[test]
fn chunked_equals_whole_on_planted_secrets_at_every_boundary() {
    let e = engine_for_test();
    let overlap = e.chunk_overlap();
    let mut r = Rng(11);
    // A secret straddling each possible chunk boundary position.
    let secret = format!("tok_{}", r.token(ALNUM, 20));
    let filler = "x = 1;\r\n".repeat(overlap / 4);
    for shift in 0..30 {
        let data = format!(
            "{}{}{secret} {filler}api_key: {}\n",
            &filler[..shift],
            filler,
            r.token(ALNUM, 24)
        );
        let whole = sorted(scan(e, data.as_bytes()));
        assert_eq!(whole.len(), 2, "{whole:?}");
        for chunk in [overlap, overlap + 1, overlap + 17, 2 * overlap - 3] {
            let chunked = sorted(scan_chunked(e, data.as_bytes(), chunk));
            assert_eq!(whole, chunked, "shift {shift}, chunk {chunk}");
        }
    }
}

/// An encoded secret (and a split literal) at every position around the
/// ownership boundary: one finding each, from the chunk that owns the
/// start of the run, as in the whole-buffer scan.
#[test]
fn decoded_findings_owned_once_at_every_boundary() {
    let e = engine_for_test();
    let overlap = e.chunk_overlap();
    let mut r = Rng(23);
    let run = base64(format!("auth tok_{}", r.token(ALNUM, 20)).as_bytes(), false);
    let lit = format!(
        "\"-----BEGIN L-----\\n\"\n\"{}\\n\"\n\"-----END L-----\"",
        r.token(ALNUM, 40)
    );
    let filler = "x = 1;\r\n".repeat(overlap / 4);
    for shift in (0..overlap / 2)
        .step_by(7)
        .chain(overlap / 2..overlap / 2 + 40)
    {
        let data = format!(
            "{} {run} {}{lit}\n{filler}",
            &filler[..shift],
            &filler[..shift]
        );
        let whole = sorted(scan(e, data.as_bytes()));
        assert_eq!(whole.len(), 2, "{whole:?}");
        assert_eq!(whole[0].offset, shift as u64 + 1);
        for chunk in [overlap, overlap + 1, overlap + 17, 2 * overlap - 3] {
            let chunked = sorted(scan_chunked(e, data.as_bytes(), chunk));
            assert_eq!(whole, chunked, "shift {shift}, chunk {chunk}");
        }
    }
}

/// `b64` cut into lines of 24 bytes joined by `brk`.
fn wrap(b64: &str, brk: &str) -> String {
    let lines: Vec<&str> = (0..b64.len())
        .step_by(24)
        .map(|i| &b64[i..(i + 24).min(b64.len())])
        .collect();
    lines.join(brk)
}

/// Base64 wrapped over lines, a token straddling a line break: one finding
/// at the run's first line, from the chunk that owns it, wherever the
/// boundary falls (also inside the block, where a chunk must not start a
/// run of its own at a line that continues the block).
#[test]
fn wrapped_base64_owned_once_at_every_boundary() {
    let e = engine_for_test();
    let overlap = e.chunk_overlap();
    let mut r = Rng(41);
    let b64 = base64(
        format!("{} tok_{}", "x".repeat(18), r.token(ALNUM, 20)).as_bytes(),
        false,
    );
    let filler = "x = 1;\r\n".repeat(overlap / 4);
    for brk in ["\n", "\r\n", "\\n"] {
        let block = wrap(&b64, brk);
        for shift in (0..overlap / 2)
            .step_by(7)
            .chain(overlap / 2 - 120..overlap / 2 + 40)
        {
            let data = format!("{}\n{block}\n{filler}", &filler[..shift]);
            let whole = sorted(scan(e, data.as_bytes()));
            assert_eq!(whole.len(), 1, "{whole:?}");
            assert_eq!(&*whole[0].rule_id, "tok");
            assert_eq!(whole[0].offset, shift as u64 + 1);
            assert_eq!(whole[0].end_offset, (shift + 1 + block.len()) as u64);
            for chunk in [overlap, overlap + 1, overlap + 17, 2 * overlap - 3] {
                let chunked = sorted(scan_chunked(e, data.as_bytes(), chunk));
                assert_eq!(whole, chunked, "shift {shift}, chunk {chunk}");
            }
        }
    }
}

/// Base64 in JSON with its `/` escaped (`\/`): one run over the escapes,
/// from its first piece (3 bytes, before the first `\/`), wherever the
/// boundary falls.
#[test]
fn base64_with_escaped_slashes_owned_once_at_every_boundary() {
    let e = engine_for_test();
    let overlap = e.chunk_overlap();
    let mut r = Rng(47);
    let b64 = base64(format!("??? tok_{}", r.token(ALNUM, 20)).as_bytes(), false);
    assert!(b64.starts_with("Pz8/"), "{b64}");
    let run = b64.replace('/', "\\/");
    let filler = "x = 1;\r\n".repeat(overlap / 4);
    for shift in (0..overlap / 2)
        .step_by(7)
        .chain(overlap / 2 - 60..overlap / 2 + 40)
    {
        let data = format!("{}\"{run}\"\n{filler}", &filler[..shift]);
        let whole = sorted(scan(e, data.as_bytes()));
        assert_eq!(whole.len(), 1, "{whole:?}");
        assert_eq!(&*whole[0].rule_id, "tok");
        assert_eq!(whole[0].offset, shift as u64 + 1);
        assert_eq!(whole[0].end_offset, (shift + 1 + run.len()) as u64);
        for chunk in [overlap, overlap + 1, overlap + 17, 2 * overlap - 3] {
            let chunked = sorted(scan_chunked(e, data.as_bytes(), chunk));
            assert_eq!(whole, chunked, "shift {shift}, chunk {chunk}");
        }
    }
}

/// Base64 in a percent-encoded query (`+`, `/`, `=` escaped): the run as
/// it stands and the URL read through its escapes hold the same token. It
/// is reported once, at the base64 run, wherever the boundary falls, also
/// when the run and the URL around it belong to different chunks.
#[test]
fn percent_encoded_base64_reported_once_at_every_boundary() {
    let e = engine_for_test();
    let overlap = e.chunk_overlap();
    let mut r = Rng(31);
    let b64 = base64(
        format!("auth tok_{} ??>", r.token(ALNUM, 20)).as_bytes(),
        false,
    );
    assert!(b64.ends_with("Pz8+"), "{b64}");
    let query = b64
        .replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D");
    let url = format!("https://h/?s={query}&a=1");
    let filler = "x = 1;\r\n".repeat(overlap / 4);
    for shift in (0..overlap / 2)
        .step_by(7)
        .chain(overlap / 2 - 40..overlap / 2 + 40)
    {
        let data = format!("{} {url}\n{filler}", &filler[..shift]);
        let whole = sorted(scan(e, data.as_bytes()));
        assert_eq!(whole.len(), 1, "{whole:?}");
        assert_eq!(whole[0].offset, shift as u64 + 14, "{whole:?}");
        for chunk in [overlap, overlap + 1, overlap + 17, 2 * overlap - 3] {
            let chunked = sorted(scan_chunked(e, data.as_bytes(), chunk));
            assert_eq!(whole, chunked, "shift {shift}, chunk {chunk}");
        }
    }
}

#[test]
fn chunked_equals_whole_with_builtin_rules() {
    let e = builtin_lenient();
    let overlap = e.chunk_overlap();
    let mut r = Rng(99);
    let mut data = String::new();
    let mut planted = 0;
    while data.len() < 6 * overlap + 50_000 {
        for _ in 0..40 {
            data.push_str(match r.below(4) {
                0 => "    let value = config.get(\"timeout\").unwrap_or(30);\n",
                1 => "  \"version\": \"1.2.3\",\r\n",
                2 => "const token = process.env.API_TOKEN;\n",
                _ => "# password: see the vault\n",
            });
        }
        let secret = match r.below(3) {
            0 => format!("GITHUB_TOKEN=ghp_{}\n", r.token(ALNUM, 36)),
            1 => format!("stripe_key = \"sk_live_{}\"\n", r.token(ALNUM, 24)),
            _ => format!(
                "SLACK_BOT_TOKEN=xoxb-{}-{}-{}\n",
                r.token(b"0123456789", 12),
                r.token(b"0123456789", 13),
                r.token(ALNUM, 24)
            ),
        };
        data.push_str(&secret);
        planted += 1;
    }
    let whole = sorted(scan(&e, data.as_bytes()));
    assert!(
        whole.len() >= planted,
        "{} findings for {planted} planted",
        whole.len()
    );
    for chunk in [overlap, overlap + 4093, 3 * overlap] {
        let chunked = sorted(scan_chunked(&e, data.as_bytes(), chunk));
        assert_eq!(whole, chunked, "chunk {chunk}");
    }
}

/// A generic finding and the provider finding it duplicates, with the
/// chunk boundary at every position around them: always exactly the
/// provider's finding, as in the whole-buffer scan.
#[test]
fn generic_duplicate_dropped_across_every_boundary() {
    let e = engine_for_test();
    let overlap = e.chunk_overlap();
    let mut r = Rng(5);
    let secret = format!("tok_{}", r.token(ALNUM, 20));
    let line = format!("key = {secret}\n");
    for prefix in overlap..2 * overlap {
        let mut data = "ab\n".repeat(prefix / 3 + 1).into_bytes();
        data.truncate(prefix);
        data.extend_from_slice(line.as_bytes());
        data.extend_from_slice(&b"cd\n".repeat(overlap));
        let whole = brief(&scan(e, &data));
        let line_no = prefix as u32 / 3 + 1;
        let column = prefix as u32 % 3 + 7;
        assert_eq!(
            whole,
            vec![("tok".to_string(), line_no, column, secret.clone())]
        );
        let chunked = brief(&scan_chunked(e, &data, overlap));
        assert_eq!(whole, chunked, "prefix {prefix}");
    }
}

/// Positions of consecutive pieces compose: what a split input relies on to
/// rebase each range's findings without reading the input again.
#[test]
fn line_positions_compose_at_every_cut() {
    let text = b"ab\ncd\r\nef\n\ngh";
    for cut in 0..=text.len() {
        let (a, b) = text.split_at(cut);
        assert_eq!(
            LinePos::START.advance(a).then(LinePos::START.advance(b)),
            LinePos::START.advance(text),
            "cut {cut}"
        );
    }
    assert_eq!(LinePos::START.advance(text), LinePos { line: 5, column: 3 });
}
