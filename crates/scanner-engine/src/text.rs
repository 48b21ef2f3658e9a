//! Text encodings the scanner reads besides UTF-8: UTF-16 files (Windows
//! `.reg` exports, PowerShell output, some `.ini` and `.config` files) hold
//! ASCII secrets as `t\0o\0k\0`, which no rule matches. They are detected
//! from their first KiB and transcoded to UTF-8 before scanning; findings'
//! lines then refer to the text's lines, and offsets to the transcoded
//! bytes.
//!
//! The decoder is streaming: a reader feeds it chunks of any size, and it
//! carries an odd trailing byte and an unpaired high surrogate from one
//! chunk to the next, so that a chunk boundary never changes the output.

/// Byte order of UTF-16 text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utf16 {
    Le,
    Be,
}

/// How much of the start of a file [`detect_utf16`] looks at.
pub const SNIFF_LEN: usize = 1024;

/// Whether `prefix` (the first bytes of a file, ideally [`SNIFF_LEN`]) is
/// UTF-16, and how many bytes of byte-order mark to skip.
///
/// A BOM (`FF FE` little-endian, `FE FF` big-endian) decides. Without one,
/// the text must be mostly ASCII: at least 8 code units, at least 90% of
/// them with a NUL high byte and a printable or whitespace low byte, and no
/// NUL in the other position. UTF-8 text has no NULs, and binary files
/// rarely keep that pattern over a KiB. A UTF-32 BOM (`FF FE 00 00`) is not
/// UTF-16.
pub fn detect_utf16(prefix: &[u8]) -> Option<(Utf16, usize)> {
    match prefix {
        [0xFF, 0xFE, 0, 0, ..] => return None,
        [0xFF, 0xFE, ..] => return Some((Utf16::Le, 2)),
        [0xFE, 0xFF, ..] => return Some((Utf16::Be, 2)),
        _ => {}
    }
    let sniff = &prefix[..prefix.len().min(SNIFF_LEN) & !1];
    let units = sniff.len() / 2;
    if units < 8 {
        return None;
    }
    let text = |b: u8| b == b'\t' || b == b'\n' || b == b'\r' || (0x20..0x7f).contains(&b);
    let (mut le, mut be) = (0, 0);
    let (mut le_bad, mut be_bad) = (false, false);
    for pair in sniff.chunks_exact(2) {
        let (a, b) = (pair[0], pair[1]);
        if b == 0 && text(a) {
            le += 1;
        }
        if a == 0 && text(b) {
            be += 1;
        }
        le_bad |= a == 0;
        be_bad |= b == 0;
    }
    if !le_bad && le * 10 >= units * 9 {
        Some((Utf16::Le, 0))
    } else if !be_bad && be * 10 >= units * 9 {
        Some((Utf16::Be, 0))
    } else {
        None
    }
}

/// Transcodes a whole buffer if it is UTF-16 ([`detect_utf16`]), BOM
/// dropped; `None` if it is not.
///
/// ```
/// let utf16: Vec<u8> = "\u{feff}key=v\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
/// assert_eq!(scanner_engine::text::transcode_utf16(&utf16).unwrap(), b"key=v\n");
/// ```
pub fn transcode_utf16(bytes: &[u8]) -> Option<Vec<u8>> {
    let (order, bom) = detect_utf16(bytes)?;
    let mut out = Vec::with_capacity(bytes.len() / 2 + 8);
    let mut d = Utf16Decoder::new(order);
    d.push(&bytes[bom..], &mut out);
    d.finish(&mut out);
    Some(out)
}

/// Streaming UTF-16 to UTF-8 transcoder. Feed it the file's bytes after
/// the BOM, chunk by chunk, with [`push`](Self::push); call
/// [`finish`](Self::finish) at the end of the file. Unpaired surrogates and
/// a dangling odd byte become U+FFFD.
///
/// ```
/// use scanner_engine::text::{Utf16, Utf16Decoder};
/// let bytes: Vec<u8> = "a\u{1F600}b".encode_utf16().flat_map(u16::to_be_bytes).collect();
/// let mut d = Utf16Decoder::new(Utf16::Be);
/// let mut out = Vec::new();
/// for chunk in bytes.chunks(3) {
///     d.push(chunk, &mut out);
/// }
/// d.finish(&mut out);
/// assert_eq!(out, "a\u{1F600}b".as_bytes());
/// ```
#[derive(Clone, Debug)]
pub struct Utf16Decoder {
    order: Utf16,
    /// The first byte of a code unit split by a chunk boundary.
    odd: Option<u8>,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
}

impl Utf16Decoder {
    pub fn new(order: Utf16) -> Self {
        Utf16Decoder {
            order,
            odd: None,
            high: None,
        }
    }

    /// Transcodes `chunk`, appending UTF-8 to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<u8>) {
        out.reserve(chunk.len() / 2 + 4);
        if let Some(first) = self.odd.take() {
            let Some((&second, rest)) = chunk.split_first() else {
                self.odd = Some(first);
                return;
            };
            self.unit(self.join(first, second), out);
            chunk = rest;
        }
        let mut pairs = chunk.chunks_exact(2);
        for p in &mut pairs {
            let u = self.join(p[0], p[1]);
            // ASCII fast path: most UTF-16 files we see are ASCII text.
            if u < 0x80 && self.high.is_none() {
                out.push(u as u8);
            } else {
                self.unit(u, out);
            }
        }
        if let [last] = pairs.remainder() {
            self.odd = Some(*last);
        }
    }

    /// Ends the text: a pending high surrogate or odd byte becomes U+FFFD.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.high.take().is_some() {
            push_char(char::REPLACEMENT_CHARACTER, out);
        }
        if self.odd.take().is_some() {
            push_char(char::REPLACEMENT_CHARACTER, out);
        }
    }

    fn join(&self, a: u8, b: u8) -> u16 {
        match self.order {
            Utf16::Le => u16::from_le_bytes([a, b]),
            Utf16::Be => u16::from_be_bytes([a, b]),
        }
    }

    fn unit(&mut self, u: u16, out: &mut Vec<u8>) {
        match (self.high.take(), u) {
            (Some(h), 0xDC00..=0xDFFF) => {
                let c = 0x10000 + (((h as u32) - 0xD800) << 10) + (u as u32 - 0xDC00);
                push_char(
                    char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER),
                    out,
                );
            }
            (pending, _) => {
                if pending.is_some() {
                    push_char(char::REPLACEMENT_CHARACTER, out);
                }
                match u {
                    0xD800..=0xDBFF => self.high = Some(u),
                    0xDC00..=0xDFFF => push_char(char::REPLACEMENT_CHARACTER, out),
                    _ => push_char(
                        char::from_u32(u as u32).unwrap_or(char::REPLACEMENT_CHARACTER),
                        out,
                    ),
                }
            }
        }
    }
}

fn push_char(c: char, out: &mut Vec<u8>) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }
    fn be(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_be_bytes).collect()
    }

    #[test]
    fn le_with_bom() {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(le("[HKEY]\r\n\"Token\"=\"é\"\r\n"));
        assert_eq!(detect_utf16(&bytes), Some((Utf16::Le, 2)));
        assert_eq!(
            transcode_utf16(&bytes).unwrap(),
            "[HKEY]\r\n\"Token\"=\"é\"\r\n".as_bytes()
        );
    }

    #[test]
    fn be_without_bom() {
        let bytes = be("password = hunter2-Qz7\n");
        assert_eq!(detect_utf16(&bytes), Some((Utf16::Be, 0)));
        assert_eq!(
            transcode_utf16(&bytes).unwrap(),
            b"password = hunter2-Qz7\n"
        );
    }

    #[test]
    fn not_utf16() {
        assert_eq!(detect_utf16(b"plain ascii text, long enough"), None);
        assert_eq!(detect_utf16(&[0xFF, 0xFE, 0, 0, b'a', 0, 0, 0]), None);
        // A binary header with NULs in both positions.
        assert_eq!(
            detect_utf16(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0]),
            None
        );
        assert_eq!(detect_utf16(&le("short")), None);
    }

    #[test]
    fn surrogate_pair_across_chunks() {
        // "a😀b": the pair D83D DE00 is split at every possible byte.
        let text = "a\u{1F600}b";
        for bytes in [le(text), be(text)] {
            let order = if bytes[0] == b'a' {
                Utf16::Le
            } else {
                Utf16::Be
            };
            for cut in 0..=bytes.len() {
                for cut2 in cut..=bytes.len() {
                    let mut d = Utf16Decoder::new(order);
                    let mut out = Vec::new();
                    d.push(&bytes[..cut], &mut out);
                    d.push(&bytes[cut..cut2], &mut out);
                    d.push(&bytes[cut2..], &mut out);
                    d.finish(&mut out);
                    assert_eq!(out, text.as_bytes(), "cuts at {cut}, {cut2}");
                }
            }
        }
    }

    #[test]
    fn unpaired_surrogates_and_odd_byte() {
        let mut bytes: Vec<u8> = [0xD83Du16, 0x0061, 0xDE00, 0x0062]
            .iter()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        bytes.push(0x63);
        let mut d = Utf16Decoder::new(Utf16::Le);
        let mut out = Vec::new();
        d.push(&bytes, &mut out);
        d.finish(&mut out);
        assert_eq!(out, "\u{FFFD}a\u{FFFD}b\u{FFFD}".as_bytes());
    }
}
