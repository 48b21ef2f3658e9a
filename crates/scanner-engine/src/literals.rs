//! Private keys written as source string literals, one line per literal:
//!
//! ```text
//! static const char *KEY = "-----BEGIN PRIVATE KEY-----\n"
//!                          "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC...\n"
//!                          "-----END PRIVATE KEY-----\n";
//! ```
//!
//! C and C++ join adjacent literals, Python too (and with `\` line
//! continuations), Go, Java, JavaScript and C# use `+`, PHP `.`. The rules'
//! regexes cannot see through the quotes, so each `-----BEGIN` that follows
//! a quote is the start of a reassembly: the literals' contents, unescaped,
//! into a scratch buffer that the engine scans (`src/decode.rs`).
//!
//! A key in one literal with `\n` escapes (JSON, YAML, `.env`) needs none of
//! this: the private-key rules accept `\n` between lines.

use memchr::memmem;

/// Calls `found(start, end, text)` for each sequence of two or more string
/// literals whose first starts with `-----BEGIN` at `start` in `lo..hi`,
/// whose unescaped contents `text` hold `-----END`, and whose last closing
/// quote ends before `end`; the sequence is read over at most `cap` bytes.
pub(crate) fn find(
    data: &[u8],
    lo: usize,
    hi: usize,
    cap: usize,
    mut found: impl FnMut(usize, usize, Vec<u8>),
) {
    const BEGIN: &[u8] = b"-----BEGIN";
    let from = lo.saturating_sub(1);
    // Owned hits start before `hi`; they may end after it.
    let to = hi.saturating_add(BEGIN.len()).min(data.len());
    for hit in memmem::find_iter(&data[from.min(to)..to], BEGIN) {
        let begin = from + hit;
        if begin < lo || begin >= hi || begin == 0 || !matches!(data[begin - 1], b'"' | b'\'') {
            continue;
        }
        let limit = data.len().min(begin.saturating_add(cap));
        if let Some((end, text)) = join(&data[..limit], begin - 1) {
            found(begin, end, text);
        }
    }
}

/// Reads the literals from the opening quote at `open`; returns the end of
/// the last one and the joined contents, if there are at least two and
/// they hold `-----END`.
fn join(data: &[u8], mut open: usize) -> Option<(usize, Vec<u8>)> {
    let mut text = Vec::new();
    let mut literals = 0;
    let mut end;
    loop {
        let quote = data[open];
        let mut i = open + 1;
        loop {
            let &c = data.get(i)?;
            if c == quote {
                break;
            }
            match c {
                b'\n' => return None,
                b'\\' => {
                    let &e = data.get(i + 1)?;
                    match e {
                        b'n' => text.push(b'\n'),
                        b'r' => text.push(b'\r'),
                        b't' => text.push(b'\t'),
                        // A line continuation inside the literal.
                        b'\n' => {}
                        b'\\' | b'"' | b'\'' | b'/' => text.push(e),
                        _ => text.extend_from_slice(&[c, e]),
                    }
                    i += 2;
                }
                _ => {
                    text.push(c);
                    i += 1;
                }
            }
        }
        literals += 1;
        end = i + 1;
        // Between literals: whitespace, a `+` or `.` operator, a `\` line
        // continuation, then a quote, possibly after a prefix (`b"`, `L"`,
        // `u8"`, `f"`).
        let mut j = end;
        while let Some(&c) = data.get(j) {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b'+' | b'.' => j += 1,
                b'\\' if matches!(data.get(j + 1), Some(b'\n' | b'\r')) => j += 1,
                _ => break,
            }
        }
        let prefix = data[j..]
            .iter()
            .take(3)
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        match data.get(j + prefix) {
            Some(b'"' | b'\'') if prefix <= 2 => open = j + prefix,
            _ => break,
        }
    }
    (literals >= 2 && memmem::find(&text, b"-----END").is_some()).then_some((end, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(src: &str) -> Vec<(usize, usize, String)> {
        let mut v = Vec::new();
        find(src.as_bytes(), 0, src.len(), 1 << 16, |s, e, t| {
            v.push((s, e, String::from_utf8(t).unwrap()))
        });
        v
    }

    #[test]
    fn joins_c_go_python() {
        let c = "k = \"-----BEGIN K-----\\n\"\n    \"QUJD\\n\"\n    \"-----END K-----\\n\";\n";
        assert_eq!(
            all(c),
            [(
                5,
                c.find(';').unwrap(),
                "-----BEGIN K-----\nQUJD\n-----END K-----\n".into()
            )]
        );
        let go = "k := \"-----BEGIN K-----\\n\" +\n\t\"QUJD\\n\" +\n\t\"-----END K-----\"\n";
        assert_eq!(all(go)[0].2, "-----BEGIN K-----\nQUJD\n-----END K-----");
        let py = "k = '-----BEGIN K-----\\n' \\\n    'QUJD\\n' \\\n    b'-----END K-----'\n";
        assert_eq!(all(py)[0].2, "-----BEGIN K-----\nQUJD\n-----END K-----");
    }

    #[test]
    fn one_literal_or_no_end_is_not_joined() {
        assert_eq!(
            all("k = \"-----BEGIN K-----\\nQUJD\\n-----END K-----\""),
            []
        );
        assert_eq!(all("k = \"-----BEGIN K-----\\n\" \"QUJD\";"), []);
        assert_eq!(all("-----BEGIN K-----\n\"a\" \"-----END K-----\""), []);
    }
}
