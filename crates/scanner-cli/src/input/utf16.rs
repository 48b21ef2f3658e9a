//! UTF-16 text (a Windows `.reg` export, a PowerShell script saved by an
//! editor) read as UTF-8, so that rules written for ASCII match it.
//!
//! The worker looks at a file's first KiB ([`scanner_engine::text::detect_utf16`]:
//! a byte-order mark, or NULs in every other byte of mostly-ASCII text) and
//! reads a UTF-16 file through [`Utf16Reader`], which transcodes chunk by
//! chunk: the file is never held whole. A stream (standard input, a FIFO) is
//! sniffed the same way on its first read ([`TextStream`]). Lines and columns of a finding are
//! those of the text; offsets count bytes of the UTF-8 transcoding, not of
//! the file (documented in `docs/output.md`).

use std::io::{self, Read};

use scanner_engine::text::{Utf16, Utf16Decoder};

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

/// A stream (standard input, a FIFO) read as a file is: its first KiB decides whether it is
/// UTF-16 ([`scanner_engine::text::detect_utf16`]), and then it is transcoded through a
/// [`Utf16Reader`], else passed on as it is. That KiB is read on the first read (by the
/// worker), not when the stream is listed.
pub enum TextStream<R> {
    Unread(Option<R>),
    Plain(io::Chain<io::Cursor<Vec<u8>>, R>),
    Utf16(Utf16Reader<io::Chain<io::Cursor<Vec<u8>>, R>>),
}

impl<R: Read> TextStream<R> {
    pub fn new(inner: R) -> Self {
        TextStream::Unread(Some(inner))
    }
}

impl<R: Read> Read for TextStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let TextStream::Unread(slot) = self {
            let mut inner = slot.take().expect("an unread stream holds its reader");
            let mut head = vec![0; scanner_engine::text::SNIFF_LEN];
            let mut len = 0;
            while len < head.len() {
                match inner.read(&mut head[len..]) {
                    Ok(0) => break,
                    Ok(n) => len += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // With nothing read, the error is this read's; after some bytes, the
                    // stream's next read meets it again.
                    Err(e) if len == 0 => {
                        *slot = Some(inner);
                        return Err(e);
                    }
                    Err(_) => break,
                }
            }
            head.truncate(len);
            let sniffed = scanner_engine::text::detect_utf16(&head);
            let mut head = io::Cursor::new(head);
            *self = match sniffed {
                Some((order, bom)) => {
                    head.set_position(bom as u64);
                    TextStream::Utf16(Utf16Reader::new(head.chain(inner), order))
                }
                None => TextStream::Plain(head.chain(inner)),
            };
        }
        match self {
            TextStream::Plain(r) => r.read(buf),
            TextStream::Utf16(r) => r.read(buf),
            TextStream::Unread(_) => unreachable!("sniffed above"),
        }
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
