//! UTF-16 files: detected, transcoded (whole or streamed in chunks), then
//! scanned, with findings at the text's lines.

mod common;

use common::*;
use scanner_engine::text::{detect_utf16, transcode_utf16, Utf16, Utf16Decoder};

const TOK: &str = r#"
[[rules]]
id = "tok"
regex = '''\b(tok_[A-Za-z0-9]{20})\b'''
keywords = ["tok_"]
"#;

/// What `regedit` exports: UTF-16LE with a BOM, CRLF lines.
const REG: &str = "Windows Registry Editor Version 5.00\r\n\
\r\n\
[HKEY_CURRENT_USER\\Software\\Acme\\Sync]\r\n\
\"Endpoint\"=\"https://sync.acme.test/\u{e9}t\u{e9}\"\r\n\
\"ApiToken\"=\"tok_q8Rk2vXz1LmN4pT7wY0a\"\r\n";

fn utf16le_with_bom(s: &str) -> Vec<u8> {
    let mut v = vec![0xFF, 0xFE];
    v.extend(s.encode_utf16().flat_map(u16::to_le_bytes));
    v
}

#[test]
fn reg_export_token_at_its_line() {
    let e = engine(TOK);
    let file = utf16le_with_bom(REG);
    // Scanned as it is, the token is `t\0o\0k\0_\0...`: nothing.
    assert_eq!(scan(&e, &file), []);
    let text = transcode_utf16(&file).unwrap();
    assert_eq!(text, REG.as_bytes());
    assert_eq!(
        brief(&scan(&e, &text)),
        [(
            "tok".to_string(),
            5,
            13,
            "tok_q8Rk2vXz1LmN4pT7wY0a".to_string()
        )]
    );
}

/// A reader's loop: sniff the first KiB, skip the BOM, feed chunks of an
/// odd size (so code units and the surrogate pair straddle them).
#[test]
fn streamed_equals_whole() {
    let text = format!("{REG}\"Emoji\"=\"\u{1F511}\"\r\n").repeat(40);
    let file = utf16le_with_bom(&text);
    let (order, bom) = detect_utf16(&file[..file.len().min(1024)]).unwrap();
    assert_eq!((order, bom), (Utf16::Le, 2));
    for chunk in [1, 3, 7, 4093] {
        let mut d = Utf16Decoder::new(order);
        let mut out = Vec::new();
        for piece in file[bom..].chunks(chunk) {
            d.push(piece, &mut out);
        }
        d.finish(&mut out);
        assert_eq!(out, text.as_bytes(), "chunk {chunk}");
    }
    let e = engine(TOK);
    let lines: Vec<u32> = scan(&e, text.as_bytes()).iter().map(|f| f.line).collect();
    assert_eq!(lines, (0..40).map(|i| 5 + 6 * i).collect::<Vec<u32>>());
}

#[test]
fn big_endian_without_bom() {
    let text = "[Acme]\r\ntoken=tok_q8Rk2vXz1LmN4pT7wY0a\r\n";
    let file: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    assert_eq!(detect_utf16(&file), Some((Utf16::Be, 0)));
    let e = engine(TOK);
    assert_eq!(
        brief(&scan(&e, &transcode_utf16(&file).unwrap())),
        [(
            "tok".to_string(),
            2,
            7,
            "tok_q8Rk2vXz1LmN4pT7wY0a".to_string()
        )]
    );
    // UTF-8 text is left alone.
    assert_eq!(transcode_utf16(text.as_bytes()), None);
}
