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

/// A gzip, bzip2, xz or zstd stream: a compressed tar, or one compressed
/// file.
pub(super) fn compressed_members(
    kind: ArchiveKind,
    src: &mut dyn Read,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    // A zstd frame header is at most 18 bytes: read before the decoder is
    // made, whose window would be allocated as declared.
    let mut frame = Vec::with_capacity(18);
    if kind == ArchiveKind::Zstd {
        src.take(18).read_to_end(&mut frame)?;
        if let Some(window) = zstd_window(&frame).filter(|&w| w > MAX_ZSTD_WINDOW) {
            scope.record_here(ArchiveSkip::WindowTooLarge(window));
            return Ok(Flow::Continue);
        }
    }
    let src = Cursor::new(frame).chain(src);
    // Multi-stream decoders: `cat a.gz b.gz`, pbzip2 and `xz -T` output
    // are valid. zstd: the first frame only (the zstd tool writes one).
    let mut decoder: Box<dyn Read> = match kind {
        ArchiveKind::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(src)),
        ArchiveKind::Xz => Box::new(lzma_rust2::XzReader::new(src, true)),
        ArchiveKind::Zstd => match ruzstd::decoding::StreamingDecoder::new(src) {
            Ok(decoder) => Box::new(decoder),
            Err(e) => {
                scope.record_here(ArchiveSkip::Corrupt(e.to_string()));
                return Ok(Flow::Continue);
            }
        },
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
        name: name.as_bytes(),
        size: None,
    };
    let mut rest = Cursor::new(&head[..]).chain(Metered {
        inner: &mut decoder,
        meter: &meter,
    });
    match deliver(scope, &member, &mut rest, Some(&meter), on_member)? {
        Delivered::Flow(flow) => Ok(flow),
        Delivered::Failed(reason) => {
            record_failure(scope, name.as_bytes(), reason);
            Ok(ended(scope))
        }
    }
}

/// The member name of a compressed single file: the archive's own name
/// (after the last `!` and `/`) without its compression suffix, as
/// `gunzip` would name it.
pub(super) fn single_member_name(archive_path: &str) -> String {
    let base = archive_path
        .rsplit(['!', '/'])
        .next()
        .unwrap_or(archive_path);
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
        if lower.ends_with(suffix) && lower.len() > suffix.len() {
            return format!("{}{replacement}", &base[..base.len() - suffix.len()]);
        }
    }
    base.to_string()
}
