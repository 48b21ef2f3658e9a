//! Accounting: what one top-level archive ([`Budget`]) and a whole run ([`RunBytes`]) spent
//! against the [`Limits`], and what was skipped ([`ArchiveStats`]).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{ArchiveSkip, Limits};

/// How many [`Skipped`] entries [`ArchiveStats::skipped`] keeps; the counts
/// in [`ArchiveStats::skip_counts`] go on past it. A hostile archive can
/// have a million `../` names; the summary needs the count, not the list.
pub const MAX_LISTED_SKIPS: usize = 64;

/// Bytes expanded by all the archives of a run, against
/// [`Limits::max_run_bytes`]: one per run, shared by every worker's
/// [`Budget`].
#[derive(Debug, Default)]
pub struct RunBytes(AtomicU64);

impl RunBytes {
    /// Adds `n` bytes; the total after.
    fn charge(&self, n: u64) -> u64 {
        self.0.fetch_add(n, Ordering::Relaxed) + n
    }
}

/// One skip, at the display path of the member or archive concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: ArchiveSkip,
}

/// What happened inside one top-level archive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchiveStats {
    /// Archives opened, the top-level one and nested ones.
    pub archives: u64,
    /// Members handed to a callback.
    pub members: u64,
    /// Bytes of member content read through the metering readers.
    pub expanded_bytes: u64,
    /// Paths whose content was left unread ([`ArchiveSkip::incomplete`]),
    /// each counted once for the reasons recorded for it in a row.
    pub incomplete: u64,
    /// Skips by [`ArchiveSkip::label`].
    pub skip_counts: BTreeMap<&'static str, u64>,
    /// The first [`MAX_LISTED_SKIPS`] skips, in order.
    pub skipped: Vec<Skipped>,
}

impl ArchiveStats {
    /// Adds the stats of another archive (for a scan's summary); the list
    /// of skips stays capped at [`MAX_LISTED_SKIPS`].
    pub fn merge(&mut self, other: ArchiveStats) {
        self.archives += other.archives;
        self.members += other.members;
        self.expanded_bytes += other.expanded_bytes;
        self.incomplete += other.incomplete;
        for (label, n) in other.skip_counts {
            *self.skip_counts.entry(label).or_default() += n;
        }
        let room = MAX_LISTED_SKIPS.saturating_sub(self.skipped.len());
        self.skipped.extend(other.skipped.into_iter().take(room));
    }
}

/// Shared state of one top-level archive: the limits, what was spent, what
/// was skipped. Interior mutability because every nested level and every
/// metering reader charges it while a callback up the stack is running;
/// one archive is walked by one thread, so `Cell` suffices.
pub struct Budget {
    pub(super) limits: Limits,
    run: Arc<RunBytes>,
    expanded: Cell<u64>,
    members: Cell<u64>,
    halted: Cell<bool>,
    pub(super) stats: RefCell<ArchiveStats>,
    /// The path of the last skip that left content unread: another reason
    /// for the same path, recorded next, is not another path unread.
    last_incomplete: RefCell<Option<PathBuf>>,
}

impl Budget {
    /// A budget of its own: [`Limits::max_run_bytes`] counts this archive
    /// only.
    pub fn new(limits: Limits) -> Budget {
        Budget::in_run(limits, Arc::default())
    }

    /// A budget that charges the bytes it expands to `run` as well.
    pub fn in_run(limits: Limits, run: Arc<RunBytes>) -> Budget {
        Budget {
            limits,
            run,
            expanded: Cell::new(0),
            members: Cell::new(0),
            halted: Cell::new(false),
            stats: RefCell::new(ArchiveStats::default()),
            last_incomplete: RefCell::new(None),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// True once a limit that ends the whole top-level archive tripped.
    pub fn halted(&self) -> bool {
        self.halted.get()
    }

    pub fn into_stats(self) -> ArchiveStats {
        let mut stats = self.stats.into_inner();
        stats.expanded_bytes = self.expanded.get();
        stats
    }

    pub(super) fn record(&self, path: PathBuf, reason: ArchiveSkip) {
        let mut stats = self.stats.borrow_mut();
        *stats.skip_counts.entry(reason.label()).or_default() += 1;
        // A path left unread counts once for its reasons recorded in a row: a zip with no
        // central directory whose local headers then end at once is corrupt and truncated,
        // one path.
        if reason.incomplete() && self.last_incomplete.borrow().as_deref() != Some(&path) {
            stats.incomplete += 1;
            *self.last_incomplete.borrow_mut() = Some(path.clone());
        }
        if stats.skipped.len() < MAX_LISTED_SKIPS {
            stats.skipped.push(Skipped { path, reason });
        }
    }

    /// Takes a member slot, or records [`ArchiveSkip::TooManyMembers`] at
    /// `path` and halts.
    pub(super) fn take_member(&self, path: &Path) -> bool {
        let n = self.members.get() + 1;
        if n > self.limits.max_members {
            self.halt(path.to_path_buf(), ArchiveSkip::TooManyMembers);
            return false;
        }
        self.members.set(n);
        true
    }

    /// Charges `n` expanded bytes to the archive and the run; the limit
    /// they spent, if any.
    pub(super) fn charge(&self, n: u64) -> Option<ArchiveSkip> {
        let total = self.expanded.get() + n;
        self.expanded.set(total);
        if total > self.limits.max_total_bytes {
            return Some(ArchiveSkip::TooLarge);
        }
        if self.run.charge(n) > self.limits.max_run_bytes {
            return Some(ArchiveSkip::RunTooLarge);
        }
        None
    }

    pub(super) fn halt(&self, path: PathBuf, reason: ArchiveSkip) {
        if !self.halted.replace(true) {
            self.record(path, reason);
        }
    }
}
