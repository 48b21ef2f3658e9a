//! tar, read as GNU tar reads it: each member for the size its header declares, blocks that
//! are not headers skipped to the next header.

use std::cell::Cell;
use std::io::{self, Read};

use super::meter::{
    archive_wide, deliver, ended, record_failure, Delivered, EndWatch, Meter, Metered,
};
use super::{escape_name, is_unsafe_name, ArchiveSkip, Flow, Member, OnMember, Scope};

/// Iterates a tar stream. `stream` is the meter of the compressed stream
/// it is read from, if any; else a meter is made here for the headers.
///
/// Members are read as GNU tar reads them: each for the size its header
/// declares. A size that lies leaves the stream between two members; the
/// blocks there that are not headers are skipped to the next valid header
/// (GNU tar's "Skipping to next header"), and reported, since the content
/// they hold belongs to no member.
pub(super) fn tar_members(
    src: &mut dyn Read,
    stream: Option<&Meter<'_>>,
    scope: &Scope<'_>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Flow> {
    let own;
    let meter = match stream {
        Some(meter) => meter,
        None => {
            own = Meter::new(scope.budget, false);
            &own
        }
    };
    // The end of the input tells a header size past it (truncated) from a
    // block that is not a header (skipped).
    let at_end = Cell::new(false);
    let mut input = Metered {
        inner: EndWatch {
            inner: src,
            at_end: &at_end,
        },
        meter,
    };
    // Blocks skipped since the last member, and that member's name.
    let mut junk = 0u64;
    let mut last: Vec<u8> = Vec::new();
    loop {
        let start = meter.read.get();
        meter.header_start.set(Some(start));
        // A fresh `tar::Archive` per run of valid headers: the crate ends
        // its iteration at the first bad header, having read just that
        // block, so the next one starts at the block after it.
        let mut archive = tar::Archive::new(&mut input);
        // Read on past end-of-archive blocks, as `tar -i` does: members
        // after a zero block (concatenated tars, or one put there to hide
        // them from scanners) are found, and damage after them is reported.
        archive.set_ignore_zeros(true);
        let flow = tar_entries(
            &mut archive,
            meter,
            &at_end,
            scope,
            &mut last,
            &mut junk,
            on_member,
        )?;
        match flow {
            Some(flow) => {
                report_junk(scope, &last, junk);
                return Ok(flow);
            }
            // A bad header cost at least its block (no progress would mean
            // a reader that fails without reading). Skipped bytes are
            // expanded bytes too: charged, lest a stream of junk run on.
            None if meter.read.get() > start => {
                junk += 1;
                // What was read since the last member ended: padding and
                // the block that is not a header.
                let skipped = meter.read.get() - meter.header_start.get().unwrap_or(start);
                if let Some(spent) = scope.budget.charge(skipped) {
                    report_junk(scope, &last, junk);
                    scope.budget.halt(scope.path.clone(), spent);
                    return Ok(Flow::Stop);
                }
            }
            None => {
                report_junk(scope, &last, junk);
                scope.record_here(ArchiveSkip::Corrupt("unreadable tar header".into()));
                return Ok(ended(scope));
            }
        }
    }
}

/// Whether an entry of type `kind` (not a link) is file content: regular,
/// contiguous, sparse, a multi-volume continuation, and any type tar does
/// not know, which POSIX and GNU tar extract as a regular file. Directories,
/// devices, FIFOs and the metadata entries (pax and GNU headers, a volume
/// label, a dump directory) are not.
fn holds_content(kind: tar::EntryType) -> bool {
    !(kind.is_dir()
        || kind.is_character_special()
        || kind.is_block_special()
        || kind.is_fifo()
        || kind.is_pax_global_extensions()
        || kind.is_pax_local_extensions()
        || kind.is_gnu_longname()
        || kind.is_gnu_longlink()
        || matches!(kind.as_byte(), b'V' | b'D' | b'N'))
}

/// Records the blocks skipped after member `last` (GNU tar: "Skipping to
/// next header"), if any.
fn report_junk(scope: &Scope<'_>, last: &[u8], junk: u64) {
    if junk == 0 {
        return;
    }
    let mut after = String::new();
    escape_name(last, &mut after);
    let what = if last.is_empty() {
        "at the start".to_string()
    } else {
        format!("after member {after}")
    };
    let (blocks, are) = if junk == 1 {
        ("block", "is not a tar header")
    } else {
        ("blocks", "are not tar headers")
    };
    scope.record_here(ArchiveSkip::Corrupt(format!(
        "{junk} {blocks} {what} {are} (a member's size lies?): skipped to the next header, as GNU \
         tar does"
    )));
}

/// The entries of one run of valid tar headers: `Some(flow)` when the
/// stream ended (or a limit, or the callback, ended it), `None` at a block
/// that is not a header.
#[allow(clippy::too_many_arguments)]
fn tar_entries<R: Read>(
    archive: &mut tar::Archive<R>,
    meter: &Meter<'_>,
    at_end: &Cell<bool>,
    scope: &Scope<'_>,
    last: &mut Vec<u8>,
    junk: &mut u64,
    on_member: &mut OnMember<'_>,
) -> io::Result<Option<Flow>> {
    let entries = match archive.entries() {
        Ok(entries) => entries,
        Err(e) => {
            scope.record_here(ArchiveSkip::Corrupt(e.to_string()));
            return Ok(Some(Flow::Continue));
        }
    };
    for entry in entries {
        if scope.budget.halted() {
            return Ok(Some(Flow::Stop));
        }
        let mut entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                if let Some(reason) = meter.fault() {
                    if archive_wide(&reason) {
                        scope.budget.halt(scope.path.clone(), reason);
                    } else {
                        scope.record_here(reason);
                    }
                    return Ok(Some(ended(scope)));
                }
                if at_end.get() {
                    // A size past the end (GNU tar: "Unexpected EOF").
                    scope.record_here(ArchiveSkip::Truncated);
                    return Ok(Some(ended(scope)));
                }
                return Ok(None);
            }
        };
        meter.header_start.set(None);
        report_junk(scope, last, std::mem::take(junk));
        if !scope.budget.take_member(scope.path()) {
            return Ok(Some(Flow::Stop));
        }
        let name = entry.path_bytes().into_owned();
        let kind = entry.header().entry_type();
        if kind.is_symlink() || kind.is_hard_link() {
            scope.record(&name, ArchiveSkip::SymlinkMember);
        } else if holds_content(kind) {
            if is_unsafe_name(&name) {
                scope.record(&name, ArchiveSkip::UnsafeName);
            }
            let member = Member {
                name: &name,
                size: Some(entry.size()),
            };
            match deliver(scope, &member, &mut entry, Some(meter), on_member)? {
                Delivered::Flow(Flow::Continue) => {}
                Delivered::Flow(Flow::Stop) => return Ok(Some(Flow::Stop)),
                Delivered::Failed(reason) => {
                    record_failure(scope, &name, reason);
                    // Whatever broke (the stream, a limit) breaks the rest.
                    return Ok(Some(ended(scope)));
                }
            }
        }
        // The tar crate would skip the rest of the entry itself; draining
        // it here means the bytes it reads until the next entry are headers
        // only, which the meter bounds. A sparse entry's holes are made up
        // by the tar crate, not read: charged, lest a terabyte of holes
        // spin here.
        let drain_meter = Meter::new(scope.budget, kind.is_gnu_sparse());
        let mut drain = Metered {
            inner: &mut entry,
            meter: &drain_meter,
        };
        if let Err(e) = drain_to_end(&mut drain) {
            let reason = meter
                .fault()
                .or_else(|| drain_meter.fault())
                .unwrap_or(ArchiveSkip::Corrupt(e.to_string()));
            record_failure(scope, &name, reason);
            return Ok(Some(ended(scope)));
        }
        *last = name;
        meter.header_start.set(Some(meter.read.get()));
    }
    Ok(Some(Flow::Continue))
}

/// Reads `reader` to its end and drops what it reads. Most members were
/// read whole already: a first read of a few bytes finds the end without
/// `io::copy`'s clearing of an 8 KiB buffer per call (as many instructions
/// as scanning a small member, under callgrind).
fn drain_to_end(reader: &mut dyn Read) -> io::Result<()> {
    let mut probe = [0u8; 16];
    loop {
        match reader.read(&mut probe) {
            Ok(0) => return Ok(()),
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    io::copy(reader, &mut io::sink()).map(drop)
}
