//! UTF-16 text (a Windows `.reg` export, a PowerShell script saved by an
//! editor) read as UTF-8, so that rules written for ASCII match it.
//!
//! The worker looks at a file's first KiB ([`scanner_engine::text::detect_utf16`]:
//! a byte-order mark, or NULs in every other byte of mostly-ASCII text) and
//! reads a UTF-16 file through [`Utf16Reader`], which transcodes chunk by
//! chunk: the file is never held whole. A stream (standard input, a FIFO, an
//! archive member, a git blob) is sniffed the same way ([`text_stream`]). Lines
//! and columns of a finding are those of the text; offsets count bytes of the UTF-8 transcoding, not of
//! the file (documented in `docs/output.md`).

use std::io::{self, Cursor, Read};

use scanner_engine::text::{detect_utf16, Utf16, Utf16Decoder, SNIFF_LEN};

/// A stream read as text, for a source whose first KiB cannot be read
/// twice (standard input, an archive member): its head is read ahead for
/// [`detect_utf16`], and the whole stream handed back, through a
/// [`Utf16Reader`] if it is UTF-16 (the `bool`), as it is otherwise. A read
/// that fails within the head fails after the bytes read before it.
pub fn text_stream<'a>(mut inner: impl Read + 'a) -> (Box<dyn Read + 'a>, bool) {
    let mut head = Vec::with_capacity(SNIFF_LEN);
    let failed = (&mut inner)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut head)
        .err();
    let detected = detect_utf16(&head);
    let rest: Box<dyn Read + 'a> = match failed {
        Some(e) => Box::new(Failed(Some(e))),
        None => Box::new(inner),
    };
    match detected {
        Some((order, bom)) => {
            let mut head = Cursor::new(head);
            head.set_position(bom as u64);
            (Box::new(Utf16Reader::new(head.chain(rest), order)), true)
        }
        None => (Box::new(Cursor::new(head).chain(rest)), false),
    }
}

/// A reader that fails once with an error met earlier, then ends.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}

/// A reader of UTF-16 bytes that yields UTF-8.
pub struct Utf16Reader<R> {
    inner: R,
    decoder: Utf16Decoder,
    raw: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
    done: bool,
}

impl<R: Read> Utf16Reader<R> {
    /// `inner` is positioned after the byte-order mark, if any.
    pub fn new(inner: R, order: Utf16) -> Self {
        Utf16Reader {
            inner,
            decoder: Utf16Decoder::new(order),
            raw: vec![0; 64 << 10],
            out: Vec::with_capacity(64 << 10),
            pos: 0,
            done: false,
        }
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.out.len() {
            if self.done {
                return Ok(0);
            }
            self.out.clear();
            self.pos = 0;
            let n = loop {
                match self.inner.read(&mut self.raw) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => break r?,
                }
            };
            if n == 0 {
                self.decoder.finish(&mut self.out);
                self.done = true;
            } else {
                self.decoder.push(&self.raw[..n], &mut self.out);
            }
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utf16_as_utf8_in_any_read_size() {
        let text = "key=v\u{e9}l\u{1F600}ue\r\nline two\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        for (bytes, order) in [(le, Utf16::Le), (be, Utf16::Be)] {
            for size in [1, 3, 7, 64] {
                let mut r = Utf16Reader::new(&bytes[..], order);
                r.raw = vec![0; 5]; // odd-sized raw reads split code units
                let mut out = Vec::new();
                let mut buf = vec![0; size];
                loop {
                    let n = r.read(&mut buf).unwrap();
                    if n == 0 {
                        break;
                    }
                    out.extend_from_slice(&buf[..n]);
                }
                assert_eq!(String::from_utf8(out).unwrap(), text, "{order:?} {size}");
            }
        }
    }
}
