//! Metering: every member byte passes here. A [`Meter`] charges the bytes read to the
//! [`Budget`] and keeps the first fault; [`deliver`] hands one member to the callback through
//! one, and the helpers after it turn a failed member into the skip recorded.

use std::cell::Cell;
use std::io::{self, Read};

use super::{ArchiveSkip, Budget, Flow, Member, OnMember, Scope};

/// Bytes the `tar` crate may read between two entries (headers, GNU long
/// names, pax records). Real ones are a few hundred bytes.
const MAX_TAR_HEADER_BYTES: u64 = 1 << 20;

/// The state of one metering reader, apart from the reader so that it can
/// be inspected after the reader was moved into a decoder or a tar archive.
pub(super) struct Meter<'m> {
    budget: &'m Budget,
    /// Charge the bytes to
    /// [`Limits::max_total_bytes`](super::Limits::max_total_bytes): false for
    /// a stream whose members are charged one by one.
    charge: bool,
    pub(super) read: Cell<u64>,
    /// The first failure: a tripped limit or the inner reader's error.
    /// Sticky, so that a callback ignoring errors cannot read on.
    fault: Cell<Option<ArchiveSkip>>,
    /// Tar only: `Some(start)` while the tar crate reads headers, which
    /// must end within [`MAX_TAR_HEADER_BYTES`] of `start`.
    pub(super) header_start: Cell<Option<u64>>,
}

impl<'m> Meter<'m> {
    pub(super) fn new(budget: &'m Budget, charge: bool) -> Meter<'m> {
        Meter {
            budget,
            charge,
            read: Cell::new(0),
            fault: Cell::new(None),
            header_start: Cell::new(None),
        }
    }

    pub(super) fn fault(&self) -> Option<ArchiveSkip> {
        let fault = self.fault.take();
        self.fault.set(fault.clone());
        fault
    }

    pub(super) fn trip(&self, reason: ArchiveSkip) -> io::Error {
        let err = io::Error::other(reason.to_string());
        // The first fault is the cause; later ones are its echoes.
        let first = self.fault.take().unwrap_or(reason);
        self.fault.set(Some(first));
        err
    }

    pub(super) fn check(&self, n: u64) -> io::Result<()> {
        let read = self.read.get() + n;
        self.read.set(read);
        if self.charge {
            if let Some(spent) = self.budget.charge(n) {
                return Err(self.trip(spent));
            }
        }
        if let Some(start) = self.header_start.get() {
            if read - start > MAX_TAR_HEADER_BYTES {
                return Err(self.trip(ArchiveSkip::Corrupt(format!(
                    "tar headers longer than {MAX_TAR_HEADER_BYTES} bytes"
                ))));
            }
        }
        Ok(())
    }
}

/// A reader whose bytes are checked by a [`Meter`].
pub(super) struct Metered<'m, R> {
    pub(super) inner: R,
    pub(super) meter: &'m Meter<'m>,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(fault) = self.meter.fault() {
            return Err(io::Error::other(fault.to_string()));
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.meter.check(n as u64)?;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                // A decoder that knows why (a zstd frame's window) says so.
                let reason = if let Some(skip) = e.get_ref().and_then(|e| e.downcast_ref()) {
                    ArchiveSkip::clone(skip)
                } else if e.kind() == io::ErrorKind::UnexpectedEof {
                    ArchiveSkip::Truncated
                } else {
                    ArchiveSkip::Corrupt(e.to_string())
                };
                self.meter.trip(reason);
                Err(e)
            }
        }
    }
}

/// Notes that its reader reached the end.
pub(super) struct EndWatch<'c, R> {
    pub(super) inner: R,
    pub(super) at_end: &'c Cell<bool>,
}

impl<R: Read> Read for EndWatch<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.at_end.set(true);
        }
        Ok(n)
    }
}

/// How handing one member to the callback ended.
pub(super) enum Delivered {
    Flow(Flow),
    /// The member's reader failed: a tripped limit or bad data.
    Failed(ArchiveSkip),
}

/// Hands one member to the callback through a charging [`Meter`].
/// `outer` is the meter of the stream the member is read from, whose fault
/// (a spent limit, a truncated gzip) explains a failure better than the
/// member's own.
pub(super) fn deliver(
    scope: &Scope<'_>,
    member: &Member<'_>,
    reader: &mut dyn Read,
    outer: Option<&Meter<'_>>,
    on_member: &mut OnMember<'_>,
) -> io::Result<Delivered> {
    let meter = Meter::new(scope.budget, true);
    let mut metered = Metered {
        inner: reader,
        meter: &meter,
    };
    scope.budget.stats.borrow_mut().members += 1;
    let result = on_member(scope, member, &mut metered);
    let fault = outer.and_then(Meter::fault).or_else(|| meter.fault());
    match (result, fault) {
        (_, Some(fault)) => Ok(Delivered::Failed(fault)),
        (Ok(flow), None) => Ok(Delivered::Flow(flow)),
        (Err(e), None) => Err(e),
    }
}

/// How an archive whose data broke ends: the walk goes on with the next
/// member of the archive above, unless an archive-wide limit halted it.
pub(super) fn ended(scope: &Scope<'_>) -> Flow {
    if scope.budget.halted() {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

/// True for the limits that end the whole top-level archive.
pub(super) fn archive_wide(reason: &ArchiveSkip) -> bool {
    matches!(reason, ArchiveSkip::TooLarge | ArchiveSkip::RunTooLarge)
}

/// Records a member failure; true if the rest must be skipped because the
/// limit that tripped was archive-wide.
pub(super) fn record_failure(scope: &Scope<'_>, name: &[u8], reason: ArchiveSkip) -> bool {
    if archive_wide(&reason) {
        scope.budget.halt(scope.member_path(name), reason);
        return true;
    }
    scope.record(name, reason);
    scope.budget.halted()
}
