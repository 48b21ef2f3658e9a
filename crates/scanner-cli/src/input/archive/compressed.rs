//! gzip, bzip2, xz and zstd streams: a compressed tar, or one compressed file.

use std::io::{self, Cursor, Read};

use super::meter::{deliver, ended, record_failure, Delivered, Meter, Metered};
use super::tar_members::tar_members;
use super::{
    sniff, ArchiveKind, ArchiveSkip, Flow, Member, OnMember, Scope, MAX_ZSTD_WINDOW, SNIFF_LEN,
};

/// The window a zstd frame header declares (`head` starts at the magic
/// number): the window descriptor's, or for a single-segment frame the
/// content size. `None` if `head` is too short to tell.
pub(super) fn zstd_window(head: &[u8]) -> Option<u64> {
    let descriptor = *head.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let window = *head.get(5)?;
        let base = 1u64 << (10 + u64::from(window >> 3));
        return Some(base + base / 8 * u64::from(window & 7));
    }
    let dict_len = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let size_len = [1, 2, 4, 8][usize::from(descriptor >> 6)];
    let at = 5 + dict_len;
    let field = head.get(at..at + size_len)?;
    let mut bytes = [0u8; 8];
    bytes[..size_len].copy_from_slice(field);
    let size = u64::from_le_bytes(bytes);
    Some(if size_len == 2 { size + 256 } else { size })
}

/// The first bytes of a zstd skippable frame (`0x184D2A5?` little-endian):
/// pzstd writes one before its frames, so a file may start with it.
pub(super) fn is_zstd_skippable(head: &[u8]) -> bool {
    head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]
}

/// A zstd stream read as `zstd -d` reads it: every frame in turn (`cat
/// a.zst b.zst`, pzstd's output), skippable frames passed over. Each
/// frame's header is read before the decoder takes it: a window over
/// [`MAX_ZSTD_WINDOW`] fails the read with
/// [`ArchiveSkip::WindowTooLarge`], before a decoder would allocate it.
struct ZstdFrames<R> {
    src: R,
    decoder: ruzstd::decoding::FrameDecoder,
    /// A frame's header was read and its blocks are being decoded.
    in_frame: bool,
}

impl<R: Read> ZstdFrames<R> {
    /// Reads up to and including the next frame's header; false at the
    /// end of the stream.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            let mut head = Vec::with_capacity(18);
            (&mut self.src).take(4).read_to_end(&mut head)?;
            match head.len() {
                0 => return Ok(false),
                4 => {}
                _ => return Err(io::ErrorKind::UnexpectedEof.into()),
            }
            if is_zstd_skippable(&head) {
                let mut len = [0; 4];
                self.src.read_exact(&mut len)?;
                let len = u64::from(u32::from_le_bytes(len));
                if io::copy(&mut (&mut self.src).take(len), &mut io::sink())? < len {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                continue;
            }
            // The frame header's length, from its descriptor byte.
            (&mut self.src).take(1).read_to_end(&mut head)?;
            let descriptor = *head.get(4).ok_or(io::ErrorKind::UnexpectedEof)?;
            let single_segment = descriptor & 0x20 != 0;
            let window = usize::from(!single_segment);
            let dict = [0, 1, 2, 4][usize::from(descriptor & 3)];
            let size = match descriptor >> 6 {
                0 => usize::from(single_segment),
                flag => [0, 2, 4, 8][usize::from(flag)],
            };
            let want = (window + dict + size) as u64;
            (&mut self.src).take(want).read_to_end(&mut head)?;
            if head.len() < 5 + want as usize {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            if let Some(window) = zstd_window(&head).filter(|&w| w > MAX_ZSTD_WINDOW) {
                return Err(io::Error::other(ArchiveSkip::WindowTooLarge(window)));
            }
            self.decoder
                .reset(Cursor::new(head))
                .map_err(io::Error::other)?;
            return Ok(true);
        }
    }
}

impl<R: Read> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            // As ruzstd's `StreamingDecoder` reads one frame.
            let decoder = &mut self.decoder;
            while decoder.can_collect() < buf.len() && !decoder.is_finished() {
                let more = buf.len() - decoder.can_collect();
                decoder
                    .decode_blocks(
                        &mut self.src,
                        ruzstd::decoding::BlockDecodingStrategy::UptoBytes(more),
                    )
                    .map_err(io::Error::other)?;
            }
            match decoder.read(buf)? {
                0 => self.in_frame = false,
                n => return Ok(n),
            }
        }
    }
}

/// A gzip, bzip2, xz or zstd stream: a compressed tar, or one compressed
/// file.
pub(super) fn compressed_members(
    kind: ArchiveKind,
    src: &mut dyn Read,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    // Multi-stream decoders: `cat a.gz b.gz`, pbzip2 and `xz -T` output
    // are valid, and so is `cat a.zst b.zst`.
    let mut decoder: Box<dyn Read> = match kind {
        ArchiveKind::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(src)),
        ArchiveKind::Xz => Box::new(lzma_rust2::XzReader::new(src, true)),
        ArchiveKind::Zstd => Box::new(ZstdFrames {
            src,
            decoder: ruzstd::decoding::FrameDecoder::new(),
            in_frame: false,
        }),
        _ => Box::new(flate2::read::MultiGzDecoder::new(src)),
    };
    let meter = Meter::new(scope.budget, false);
    let mut head = Vec::with_capacity(SNIFF_LEN);
    let peeked = Metered {
        inner: &mut decoder,
        meter: &meter,
    }
    .take(SNIFF_LEN as u64)
    .read_to_end(&mut head);
    // A stream that breaks after some text (trailing garbage, a cut-off
    // `.env.gz`) still has that text read as its member, whose read then
    // fails with the meter's fault: only one that yields nothing is skipped.
    if peeked.is_err() && head.is_empty() {
        scope.record_here(meter.fault().unwrap_or(ArchiveSkip::Truncated));
        return Ok(Flow::Continue);
    }
    // The stream meter sees the head again through the chain.
    meter.read.set(0);
    if sniff(&head) == Some(ArchiveKind::Tar) {
        let mut rest = Cursor::new(&head[..]).chain(&mut decoder);
        return tar_members(&mut rest, Some(&meter), scope, on_member);
    }
    let name = single_member_name(scope.path());
    if !scope.budget.take_member(scope.path()) {
        return Ok(Flow::Stop);
    }
    let member = Member {
        name: &name,
        size: None,
    };
    let mut rest = Cursor::new(&head[..]).chain(Metered {
        inner: &mut decoder,
        meter: &meter,
    });
    match deliver(scope, &member, &mut rest, Some(&meter), on_member)? {
        Delivered::Flow(flow) => Ok(flow),
        Delivered::Failed(reason) => {
            record_failure(scope, &name, reason);
            Ok(ended(scope))
        }
    }
}

/// The member name of a compressed single file: the archive's own name
/// (after the last `!` and `/`) without its compression suffix, as
/// `gunzip` would name it.
pub(super) fn single_member_name(archive_path: &std::path::Path) -> Vec<u8> {
    let path = crate::paths::path_bytes(archive_path);
    let base = path
        .rsplit(|&b| b == b'!' || b == b'/')
        .next()
        .unwrap_or(&path);
    let lower = base.to_ascii_lowercase();
    for (suffix, replacement) in [
        (".tgz", ".tar"),
        (".tbz2", ".tar"),
        (".tbz", ".tar"),
        (".txz", ".tar"),
        (".tzst", ".tar"),
        (".gz", ""),
        (".gzip", ""),
        (".bz2", ""),
        (".xz", ""),
        (".zst", ""),
        (".zstd", ""),
        (".z", ""),
    ] {
        if lower.ends_with(suffix.as_bytes()) && lower.len() > suffix.len() {
            return [&base[..base.len() - suffix.len()], replacement.as_bytes()].concat();
        }
    }
    base.to_vec()
}
