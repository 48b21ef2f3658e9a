//! zip: by the `zip` crate when the central directory is sane, else by reading the directory
//! an entry at a time or the local headers front to back.

use std::cell::Cell;
use std::io::{self, Read, SeekFrom};

use super::meter::{deliver, ended, record_failure, Delivered, EndWatch};
use super::{is_unsafe_name, ArchiveSkip, Flow, Member, OnMember, ReadSeek, Scope};

fn zip_error(e: zip::result::ZipError) -> ArchiveSkip {
    match e {
        zip::result::ZipError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            ArchiveSkip::Truncated
        }
        zip::result::ZipError::UnsupportedArchive(what) => ArchiveSkip::Unsupported(what.into()),
        e => ArchiveSkip::Corrupt(e.to_string()),
    }
}

/// Delivers one member of a zip read by random access, where a member that
/// fails ends itself only; [`Flow::Stop`] when the walk must stop.
fn deliver_zip(
    scope: &Scope<'_>,
    name: &[u8],
    size: u64,
    reader: &mut dyn Read,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    let member = Member {
        name,
        size: Some(size),
    };
    Ok(match deliver(scope, &member, reader, None, on_member)? {
        Delivered::Flow(flow) => flow,
        Delivered::Failed(reason) => match record_failure(scope, name, reason) {
            true => Flow::Stop,
            false => Flow::Continue,
        },
    })
}

pub(super) fn zip_members(
    src: &mut dyn ReadSeek,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    // The `zip` crate parses the whole central directory before the first
    // member (about 600 bytes of memory an entry): one that declares more
    // entries than the member limit allows is read an entry at a time
    // instead, up to the limit.
    let dir = zip_directory(src)?;
    if let Some(dir) = dir.as_ref() {
        if dir.entries > scope.budget.limits.max_members {
            return zip_directory_members(src, dir, scope, on_member);
        }
    }
    let mut zip = match zip::ZipArchive::new(&mut *src) {
        Ok(zip) => zip,
        Err(e) => {
            // No central directory, typically a truncated download: the
            // local headers still lead to the members before the cut.
            scope.record_here(ArchiveSkip::Corrupt(format!("no central directory: {e}")));
            src.seek(SeekFrom::Start(0))?;
            return zip_stream_members(src, scope, on_member);
        }
    };
    // The `zip` crate keeps one entry per name: a directory that declares
    // more entries than it holds names a member twice (hostile: the first
    // one's content would go unread), and is read an entry at a time.
    if let Some(dir) = dir.filter(|dir| dir.entries > zip.len() as u64) {
        drop(zip);
        return zip_directory_members(src, &dir, scope, on_member);
    }
    // Members whose directory entry points to no local header: looked for
    // by their local header once the directory is done.
    let mut lost: Vec<(Vec<u8>, ArchiveSkip)> = Vec::new();
    for index in 0..zip.len() {
        if scope.budget.halted() || !scope.budget.take_member(scope.path()) {
            return Ok(Flow::Stop);
        }
        let meta = zip.by_index_raw(index).map(|raw| {
            let links = raw.is_symlink();
            let name = raw.name_raw().to_vec();
            (name, raw.size(), raw.is_dir(), links, raw.encrypted())
        });
        let (name, size) = match meta {
            Ok((_, _, true, _, _)) => continue,
            Ok((name, _, _, true, _)) => {
                scope.record(&name, ArchiveSkip::SymlinkMember);
                continue;
            }
            Ok((name, _, _, _, true)) => {
                scope.record(&name, ArchiveSkip::Encrypted);
                continue;
            }
            Ok((name, size, ..)) => (name, size),
            Err(e) => {
                let name = zip.name_for_index(index).unwrap_or_default();
                lost.push((name.as_bytes().to_vec(), zip_error(e)));
                continue;
            }
        };
        if is_unsafe_name(&name) {
            scope.record(&name, ArchiveSkip::UnsafeName);
        }
        let mut file = match zip.by_index(index) {
            Ok(file) => file,
            Err(e) => {
                scope.record(&name, zip_error(e));
                continue;
            }
        };
        if deliver_zip(scope, &name, size, &mut file, on_member)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    drop(zip);
    zip_lost_members(src, lost, scope, on_member)
}

/// Where a zip's central directory is and how many entries it declares,
/// from its end-of-central-directory record (and its zip64 record, when it
/// has one).
pub(super) struct Directory {
    pub(super) entries: u64,
    /// The offset of the first entry, in the file.
    start: u64,
    /// What to add to an offset the zip declares to get one in the file:
    /// the bytes before the zip (a self-extracting stub).
    shift: u64,
}

fn le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// The [`Directory`] of a zip, if its end record is found.
pub(super) fn zip_directory(src: &mut dyn ReadSeek) -> io::Result<Option<Directory>> {
    const EOCD: &[u8] = b"PK\x05\x06";
    let len = src.seek(SeekFrom::End(0))?;
    // The record is 22 bytes and a comment of up to 64 KiB, which is
    // usually empty: the last 22 bytes are tried first.
    let mut tail_len = len.min(22);
    let mut tail = vec![0; tail_len as usize];
    src.seek(SeekFrom::Start(len - tail_len))?;
    src.read_exact(&mut tail)?;
    if !tail.starts_with(EOCD) {
        tail_len = len.min(22 + 0xffff);
        tail.resize(tail_len as usize, 0);
        src.seek(SeekFrom::Start(len - tail_len))?;
        src.read_exact(&mut tail)?;
    }
    let Some(at) = tail.windows(4).rposition(|w| w == EOCD) else {
        return Ok(None);
    };
    let Some(record) = tail.get(at..at + 22) else {
        return Ok(None);
    };
    let eocd = len - tail_len + at as u64;
    let directory = |entries: u64, size: u64, offset: u64, end: u64| Directory {
        entries,
        start: end.saturating_sub(size),
        shift: end.saturating_sub(size).saturating_sub(offset),
    };
    let small = directory(
        le(&record[10..12]),
        le(&record[12..16]),
        le(&record[16..20]),
        eocd,
    );
    // A zip64 locator just before the record gives where the zip64 record
    // is, which holds the 64-bit count, size and offset.
    let Some(locator) = eocd.checked_sub(20) else {
        return Ok(Some(small));
    };
    let mut loc = [0u8; 20];
    src.seek(SeekFrom::Start(locator))?;
    src.read_exact(&mut loc)?;
    let record64 = le(&loc[8..16]);
    if &loc[..4] != b"PK\x06\x07" || record64 > locator.saturating_sub(56) {
        return Ok(Some(small));
    }
    let mut rec = [0u8; 56];
    src.seek(SeekFrom::Start(record64))?;
    src.read_exact(&mut rec)?;
    if &rec[..4] != b"PK\x06\x06" {
        return Ok(Some(small));
    }
    let big = directory(
        le(&rec[32..40]),
        le(&rec[40..48]),
        le(&rec[48..56]),
        record64,
    );
    // 0xffff in the end record means "in the zip64 record" (some writers
    // always say so); any other count may only raise the zip64 one, lest a
    // zip64 record declaring fewer hide entries from the member limit.
    let entries = match small.entries {
        0xffff => big.entries,
        n => n.max(big.entries),
    };
    Ok(Some(Directory { entries, ..big }))
}

/// The content of the member whose local header is at `at`, `packed`
/// bytes compressed with `method` (as the central directory says: a local
/// header written before its data, with a data descriptor, has no sizes).
/// Stored and deflated members; no CRC check (only the scan reads them).
fn zip_local_data<'s>(
    src: &'s mut dyn ReadSeek,
    at: u64,
    packed: u64,
    method: u64,
) -> Result<Box<dyn Read + 's>, ArchiveSkip> {
    let corrupt = |e: io::Error| ArchiveSkip::Corrupt(e.to_string());
    let mut fixed = [0u8; 30];
    src.seek(SeekFrom::Start(at)).map_err(corrupt)?;
    src.read_exact(&mut fixed)
        .map_err(|_| ArchiveSkip::Truncated)?;
    if &fixed[..4] != b"PK\x03\x04" {
        return Err(ArchiveSkip::Corrupt(
            "no local header where the directory says".into(),
        ));
    }
    let skip = le(&fixed[26..28]) + le(&fixed[28..30]);
    src.seek(SeekFrom::Current(skip as i64)).map_err(corrupt)?;
    let data = src.take(packed);
    match method {
        0 => Ok(Box::new(data)),
        8 => Ok(Box::new(flate2::read::DeflateDecoder::new(data))),
        other => Err(ArchiveSkip::Unsupported(format!(
            "compression method {other}"
        ))),
    }
}

/// The members of a zip whose directory declares more entries than the
/// member limit: its entries read one at a time, each member read at its
/// local header with the sizes the directory gives ([`zip_local_data`]: so
/// members written with a data descriptor are read too), until the limit;
/// the `zip` crate would parse the whole directory first.
fn zip_directory_members(
    src: &mut dyn ReadSeek,
    dir: &Directory,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    let mut pos = dir.start;
    let mut read = 0u64;
    loop {
        if scope.budget.halted() {
            return Ok(Flow::Stop);
        }
        let mut fixed = [0u8; 46];
        src.seek(SeekFrom::Start(pos))?;
        if src.read_exact(&mut fixed).is_err() || &fixed[..4] != b"PK\x01\x02" {
            // The end of the directory (its end records follow it), unless it ends before the
            // entries it declared: a damaged entry, and the members after it go unread.
            if read < dir.entries {
                scope.record_here(ArchiveSkip::Corrupt(format!(
                    "the central directory ends after {read} of its {} entries",
                    dir.entries
                )));
            }
            return Ok(Flow::Continue);
        }
        read += 1;
        let (name_len, extra_len) = (le(&fixed[28..30]) as usize, le(&fixed[30..32]) as usize);
        let mut name = vec![0u8; name_len + extra_len];
        if src.read_exact(&mut name).is_err() {
            scope.record_here(ArchiveSkip::Truncated);
            return Ok(Flow::Continue);
        }
        let extra = name.split_off(name_len);
        pos += 46 + (name_len + extra_len) as u64 + le(&fixed[32..34]);
        if !scope.budget.take_member(scope.path()) {
            return Ok(Flow::Stop);
        }
        let (mut size, mut packed, mut local) =
            (le(&fixed[24..28]), le(&fixed[20..24]), le(&fixed[42..46]));
        // Zip64: the fields that are all ones are in extra field 1, in order.
        let mut rest = &extra[..];
        while rest.len() >= 4 {
            let (id, len) = (le(&rest[..2]), le(&rest[2..4]) as usize);
            let data = rest.get(4..4 + len).unwrap_or_default();
            if id == 1 {
                let mut values = data.chunks_exact(8).map(le);
                for field in [&mut size, &mut packed, &mut local] {
                    if *field == 0xffff_ffff {
                        *field = values.next().unwrap_or(*field);
                    }
                }
            }
            rest = rest.get(4 + len..).unwrap_or_default();
        }
        let unix_mode = le(&fixed[38..42]) >> 16;
        if name.ends_with(b"/") {
            continue;
        }
        if fixed[5] == 3 && unix_mode & 0o170000 == 0o120000 {
            scope.record(&name, ArchiveSkip::SymlinkMember);
            continue;
        }
        if le(&fixed[8..10]) & 1 != 0 {
            scope.record(&name, ArchiveSkip::Encrypted);
            continue;
        }
        if is_unsafe_name(&name) {
            scope.record(&name, ArchiveSkip::UnsafeName);
        }
        let method = le(&fixed[10..12]);
        let mut file = match zip_local_data(src, local.saturating_add(dir.shift), packed, method) {
            Ok(file) => file,
            Err(reason) => {
                scope.record(&name, reason);
                continue;
            }
        };
        if deliver_zip(scope, &name, size, &mut file, on_member)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
}

/// Delivers the members whose central-directory entry led to no local
/// header (a wrong offset: hostile, or a zip edited in place) by finding
/// their local headers ([`find_local_headers`]); those not found are
/// recorded with the error that lost them.
fn zip_lost_members(
    src: &mut dyn ReadSeek,
    lost: Vec<(Vec<u8>, ArchiveSkip)>,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    if lost.is_empty() {
        return Ok(Flow::Continue);
    }
    let names: Vec<&[u8]> = lost.iter().map(|(name, _)| &name[..]).collect();
    let found = find_local_headers(src, &names)?;
    for ((name, error), at) in lost.iter().zip(found) {
        if scope.budget.halted() {
            return Ok(Flow::Stop);
        }
        let Some(at) = at else {
            scope.record(name, error.clone());
            continue;
        };
        src.seek(SeekFrom::Start(at))?;
        let mut reader = &mut *src;
        let mut file = match zip::read::read_zipfile_from_stream(&mut reader) {
            Ok(Some(file)) => file,
            Ok(None) => {
                scope.record(name, error.clone());
                continue;
            }
            Err(e) => {
                scope.record(name, zip_error(e));
                continue;
            }
        };
        if file.is_dir() {
            continue;
        }
        if file.is_symlink() {
            scope.record(name, ArchiveSkip::SymlinkMember);
            continue;
        }
        if is_unsafe_name(name) {
            scope.record(name, ArchiveSkip::UnsafeName);
        }
        let size = file.size();
        if deliver_zip(scope, name, size, &mut file, on_member)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// The offset of the first local file header (`PK\3\4`) named `names[i]`,
/// for each `i`, found by reading the whole zip once for the signature.
/// Each header is used once, in file order, so that two members of the same
/// name find their own.
fn find_local_headers(src: &mut dyn ReadSeek, names: &[&[u8]]) -> io::Result<Vec<Option<u64>>> {
    const SIG: &[u8] = b"PK\x03\x04";
    const CHUNK: usize = 1 << 16;
    let mut found = vec![None; names.len()];
    let len = src.seek(SeekFrom::End(0))?;
    let mut buf = vec![0u8; CHUNK + SIG.len() - 1];
    let mut pos = 0u64;
    while pos < len {
        let want = ((len - pos) as usize).min(buf.len());
        src.seek(SeekFrom::Start(pos))?;
        src.read_exact(&mut buf[..want])?;
        let hits: Vec<u64> = buf[..want]
            .windows(SIG.len())
            .enumerate()
            .filter(|(_, w)| *w == SIG)
            .map(|(i, _)| pos + i as u64)
            .collect();
        for at in hits {
            // The fixed part is 30 bytes; the name's length is at 26.
            let mut fixed = [0u8; 30];
            src.seek(SeekFrom::Start(at))?;
            if src.read_exact(&mut fixed).is_err() {
                continue;
            }
            let name_len = usize::from(u16::from_le_bytes([fixed[26], fixed[27]]));
            let mut name = vec![0u8; name_len];
            if src.read_exact(&mut name).is_err() {
                continue;
            }
            let slot = names
                .iter()
                .zip(&found)
                .position(|(n, f)| f.is_none() && **n == name[..]);
            if let Some(i) = slot {
                found[i] = Some(at);
            }
        }
        if found.iter().all(Option::is_some) || pos + want as u64 >= len {
            break;
        }
        // The next chunk starts where a signature cut at this one's end
        // would start.
        pos += (want - (SIG.len() - 1)) as u64;
    }
    Ok(found)
}

/// A zip read front to back by its local headers: no seeking, but members
/// written with a data descriptor (sizes after the data) end the walk.
pub(super) fn zip_stream_members(
    src: &mut dyn Read,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    // A member cut short fails its CRC check before anything says "end of
    // file": seeing the end of the input tells truncation from corruption.
    let at_end = Cell::new(false);
    let mut src = EndWatch {
        inner: src,
        at_end: &at_end,
    };
    let truncated = |reason: ArchiveSkip| {
        if at_end.get() {
            ArchiveSkip::Truncated
        } else {
            reason
        }
    };
    loop {
        if scope.budget.halted() || !scope.budget.take_member(scope.path()) {
            return Ok(Flow::Stop);
        }
        let mut file = match zip::read::read_zipfile_from_stream(&mut src) {
            Ok(Some(file)) => file,
            Ok(None) => return Ok(Flow::Continue),
            Err(e) => {
                scope.record_here(truncated(zip_error(e)));
                return Ok(Flow::Continue);
            }
        };
        let name = file.name_raw().to_vec();
        if file.is_dir() {
            continue;
        }
        if file.is_symlink() {
            scope.record(&name, ArchiveSkip::SymlinkMember);
            continue;
        }
        if is_unsafe_name(&name) {
            scope.record(&name, ArchiveSkip::UnsafeName);
        }
        let member = Member {
            name: &name,
            size: Some(file.size()),
        };
        match deliver(scope, &member, &mut file, None, on_member)? {
            Delivered::Flow(Flow::Continue) => {}
            Delivered::Flow(Flow::Stop) => return Ok(Flow::Stop),
            Delivered::Failed(reason) => {
                record_failure(scope, &name, truncated(reason));
                // The stream is not positioned at a header any more.
                return Ok(ended(scope));
            }
        }
    }
}
