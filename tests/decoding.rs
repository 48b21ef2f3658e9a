//! Encoded secrets as users meet them (docs/decoding.md), through the real
//! binary.

mod common;

use base64::Engine as _;

use common::{token, Tree};

/// MIME base64 (76 columns, as Python's `base64.encodebytes` writes it) kept
/// in a JSON string: its lines are joined by `\n` escapes. Each line after
/// the first was read from the escape's `n`, decoded misaligned and dropped
/// as binary: the token on the eighth line passed with exit 0. The lines are
/// one run (docs/decoding.md, "Wrapped lines"), reported from its start.
#[test]
fn base64_wrapped_in_a_json_string_is_decoded() {
    let t = Tree::new();
    // Seven lines of 57 bytes: the token starts the eighth base64 line.
    let text = format!(
        "{}TOKEN={}\n",
        format!("{:<56}\n", "some text padding here").repeat(7),
        token(1)
    );
    let b64 = base64::engine::general_purpose::STANDARD.encode(&text);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    let json = format!("{{\"data\": \"{}\\n\"}}\n", lines.join("\\n"));
    t.write("a.json", &json);
    // The run: from `{"data": "` to the end of the eighth line, over 7
    // lines of 76 bytes and 7 escapes of 2.
    let end = 11 + 7 * 78 + lines[7].len();
    let r = t.run(&["scan", "--format", "json", "a.json"]);
    assert_eq!(
        r.expect(1).found(),
        [format!("a.json:1:11:{end} github-classic-pat")]
    );
    // The same lines with `\r\n` escapes.
    t.write("b.json", json.replace("\\n", "\\r\\n"));
    let end = 11 + 7 * 80 + lines[7].len();
    let r = t.run(&["scan", "--format", "json", "b.json"]);
    assert_eq!(
        r.expect(1).found(),
        [format!("b.json:1:11:{end} github-classic-pat")]
    );
}

/// Base64 wrapped over lines, MIME (76 columns) or PEM style (64), LF or
/// CRLF, as a file or inside a JSON string: a token whose encoding
/// straddles a line break was missed with exit 0 (each line decoded alone).
/// The lines are one run, reported at the line where it starts.
#[test]
fn a_token_straddling_a_wrapped_line_break_is_found() {
    let t = Tree::new();
    // 38 bytes before the token: its encoding starts at column 51 of the
    // first line and goes on into the second.
    let text = format!("{}TOKEN={}\n", "x".repeat(32), token(2));
    let b64 = base64::engine::general_purpose::STANDARD.encode(&text);
    for width in [76, 64] {
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(width)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        let last = lines[1].len() + 1;
        for (name, brk) in [("lf", "\n"), ("crlf", "\r\n")] {
            let file = format!("w{width}-{name}.txt");
            t.write(&file, format!("-- encoded --\n{}{brk}", lines.join(brk)));
            let r = t.run(&["scan", "--format", "json", &file]);
            assert_eq!(
                r.expect(1).found(),
                [format!("{file}:2:1:{last} github-classic-pat")],
                "{width} {name}"
            );
            assert_eq!(r.findings()[0].end_line, 3);
        }
        // In a JSON string, the lines joined by `\n` escapes.
        let file = format!("w{width}.json");
        t.write(&file, format!("{{\"b\": \"{}\"}}\n", lines.join("\\n")));
        let end = 8 + width + 2 + lines[1].len();
        let r = t.run(&["scan", "--format", "json", &file]);
        assert_eq!(
            r.expect(1).found(),
            [format!("{file}:1:8:{end} github-classic-pat")],
            "{width} json"
        );
    }
}

/// Base64 in JSON written by PHP's `json_encode`, which escapes every `/`
/// as `\/`: the run was cut at the escape, the rest decoded misaligned, and
/// the token passed with exit 0. The run goes on over `\/` as over `/`.
#[test]
fn base64_with_escaped_slashes_in_json_is_decoded() {
    let t = Tree::new();
    let text = format!("user data ?? TOKEN={}\n", token(3));
    let b64 = base64::engine::general_purpose::STANDARD.encode(&text);
    assert_eq!(b64.find('/'), Some(15), "{b64}");
    let run = b64.replace('/', "\\/");
    t.write("a.json", format!("{{\"d\":\"{run}\"}}\n"));
    let r = t.run(&["scan", "--format", "json", "a.json"]);
    assert_eq!(
        r.expect(1).found(),
        [format!("a.json:1:7:{} github-classic-pat", 7 + run.len())]
    );
}

/// Base64 in a URL's query, its `+`, `/` and `=` percent-escaped (an OAuth
/// `state`, a SAML request): the run of base64 as it stands ends at the
/// first escape but still holds the token, and the percent-decoded URL
/// holds it again. One token was reported twice, on the same line: at the
/// base64 run, and at the whole URL (`decoded: [percent, base64]`).
#[test]
fn base64_in_a_percent_encoded_query_is_reported_once() {
    let t = Tree::new();
    let json = format!("{{\"token\": \"{}\", \"x\": \"??>>\"}}", token(1));
    let b64 = base64::engine::general_purpose::STANDARD.encode(&json);
    // `??>` encodes to `Pz8+`: the run as it stands ends before `%2B`.
    assert!(b64.contains("Pz8+"), "{b64}");
    let query = b64
        .replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D");
    let url = format!("https://example.com/cb?state={query}&a=1\n");
    t.write("a.txt", &url);
    let run_end = 30 + b64.find('+').unwrap();
    let r = t.run(&["scan", "--format", "json", "a.txt"]);
    assert_eq!(
        r.expect(1).found(),
        [format!("a.txt:1:30:{run_end} github-classic-pat")]
    );
    assert_eq!(
        r.summary_line("suppressed:"),
        Some("suppressed: 3 duplicate of a provider finding")
    );
}

/// A base64 run longer than `2 LEAD` (32 KiB with the built-in rules, see
/// docs/decoding.md) is decoded over its first 32 KiB. Where that cut fell
/// inside a character (Japanese text: three bytes each), the decoded text
/// failed the UTF-8 check and the whole run was dropped: the token at its
/// start passed with exit 0 (here on the first line; the three shifts put
/// the cut at each byte of a character).
#[test]
fn a_long_base64_run_cut_inside_a_character_is_decoded() {
    let t = Tree::new();
    let mut lines = Vec::new();
    for shift in 0..3 {
        let text = format!(
            "{}# 設定ファイル\nGITHUB_TOKEN={}\n{}",
            "x".repeat(shift),
            token(1),
            "説明文説明文説明文\n".repeat(2000)
        );
        lines.push(format!(
            "cfg{shift}: {}\n",
            base64::engine::general_purpose::STANDARD.encode(text)
        ));
    }
    t.write("a.yaml", lines.concat());
    let r = t.run(&["scan", "--format", "json", "a.yaml"]);
    let end = 7 + 32 * 1024;
    assert_eq!(
        r.expect(1).found(),
        (1..=3)
            .map(|l| format!("a.yaml:{l}:7:{end} github-classic-pat"))
            .collect::<Vec<_>>()
    );
}

/// A hex run longer than `2 LEAD` (32 KiB) is decoded over its first 32
/// KiB, as the docs say of every run: it was not tried as hex at all once
/// cut (then failed as base64), so the token at its start passed with exit
/// 0. Cut inside a character, its text ends before it, as base64's does.
#[test]
fn a_long_hex_run_is_decoded_over_its_first_32_kib() {
    let t = Tree::new();
    let mut lines = String::new();
    for shift in 0..3 {
        let text = format!(
            "{}# 設定\nTOKEN={}\n{}",
            "x".repeat(shift),
            token(1),
            "説明文説明文説明文\n".repeat(1000)
        );
        let hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
        lines.push_str(&format!("h{shift}={hex}\n"));
    }
    t.write("dump.txt", lines);
    let r = t.run(&["scan", "--format", "json", "dump.txt"]);
    let end = 4 + 32 * 1024;
    assert_eq!(
        r.expect(1).found(),
        (1..=3)
            .map(|l| format!("dump.txt:{l}:4:{end} github-classic-pat"))
            .collect::<Vec<_>>()
    );
}

/// Each layer of decoding is a frame of recursion: a percent escape nested
/// 15,000 times (`%2525...2541`, 30 KB on one line) under
/// `--max-decode-depth 100000` overflowed a worker's stack and aborted the
/// scan (exit 134, no report). The depth is at most 32, as
/// `--archive-depth` is; 32 scans that line.
#[test]
fn decode_depth_is_at_most_32() {
    let t = Tree::new();
    t.write(
        "deep.txt",
        format!(
            "u=https://x/?a={}%{}41\n",
            "y".repeat(20),
            "25".repeat(15_000)
        ),
    );
    let r = t.run(&["scan", "--max-decode-depth", "100000", "deep.txt"]);
    r.expect(2);
    assert_eq!(
        r.stderr.lines().next(),
        Some("error: invalid value '100000' for '--max-decode-depth <N>': 100000 is not in 0..=32")
    );
    let r = t.run(&[
        "scan",
        "--format",
        "json",
        "--max-decode-depth",
        "32",
        "deep.txt",
    ]);
    assert_eq!(r.expect(0).findings().len(), 0);
}

/// A percent-encoded URL longer than `2 LEAD` (32 KiB) is decoded over its
/// first 32 KiB. Where the cut fell inside an escaped character (`%E8%AA`
/// of `%E8%AA%AC`) or inside an escape (`%E8%A`), the text failed the
/// UTF-8 check and the whole run was dropped: the token at the start of the
/// query passed with exit 0 (each of the three lines here).
#[test]
fn a_long_percent_run_cut_inside_a_character_is_decoded() {
    let t = Tree::new();
    let mut lines = String::new();
    for shift in 0..3 {
        let json = format!(
            "{}{{\"token\":\"{}\",\"d\":\"{}\"}}",
            "x".repeat(shift),
            token(1),
            "説明文".repeat(2000)
        );
        let query: String = json
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        lines.push_str(&format!("https://x/?s={query}\n"));
    }
    t.write("urls.txt", lines);
    let r = t.run(&["scan", "--format", "json", "urls.txt"]);
    let end = 1 + 32 * 1024;
    assert_eq!(
        r.expect(1).found(),
        (1..=3)
            .map(|l| format!("urls.txt:{l}:1:{end} github-classic-pat"))
            .collect::<Vec<_>>()
    );
}
