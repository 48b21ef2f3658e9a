//! Versions of a file in history: which findings of a blob are new since
//! the version it modifies.
//!
//! A history blob with a base (see `input/history/mod.rs`, "Versions of a
//! file") reports only the findings whose match meets [`changed_spans`]:
//! the lines it does not keep from the base (whole lines, the same bytes,
//! in the same order, as a diff keeps them). The others were reported with
//! the base, at the same path, and are counted under [`UNCHANGED`].
//!
//! # Line diff
//!
//! [`changed_spans`] trims the common prefix and suffix ([`changed_span`]),
//! then walks both versions in lockstep, comparing 256 bytes at a time
//! (memcmp), as far as whole lines agree. Where they differ it
//! resynchronises (`resync`):
//!
//! 1. First without a search (`resync_near`): up to four lines skipped
//!    on each side, nearest first, taken when lockstep then goes on for
//!    2 KiB or to the end (a value changed in a line or a few, the most
//!    common edit of generated files).
//! 2. Else by anchors: the next lines of the new version, each with the
//!    lines after it as far as 48 bytes or four lines (one line of 32 bytes
//!    or more alone: so that `},` is not taken for a later copy of itself),
//!    looked for at the line starts of the old version ahead (lines cut),
//!    and the next lines of the old version in the new one (lines added),
//!    in windows of 1 KiB doubled every two lines tried (`find_lines`: a
//!    packed-pair search for the newline before the anchor and the last
//!    byte of its first line, each candidate then compared whole). Of the
//!    candidates, the one after which lockstep goes furthest (less a
//!    sixteenth of the bytes it skips) wins; the lines just before it that
//!    agree are kept too (lockstep backwards), and so are the lines of the
//!    block it skips that are the same on both sides, in order (the longest
//!    such sequence, `keep_in_block`, where the block is 64 lines and 16 KiB
//!    or less each side: a line kept between two edits near it).
//! 3. Bounded: 64 lines tried each side, then those lines of the new
//!    version count as changed and lockstep goes on; and the searches of a
//!    diff read at most 8 times the two versions (plus 1 MiB), then the
//!    rest counts as changed. A poor match reports more, never less: a
//!    line is kept only where lockstep compared it equal, in order.
//!
//! Between two versions of moto's `moto/ec2/resources/instance_types.json`
//! (4 MB, 124,149 lines between the common ends) `git diff` counts 134
//! changed lines; this diff 140, in about a millisecond (the greedy
//! matching it replaces, each line to the next equal one within 256 lines,
//! counted 88,654: a new `},` took a later copy of itself and the lines
//! after it never matched again).
//!
//! # Scanning only what changed
//!
//! The worker reads the base first (its blob reader, whose pack cache
//! often holds what the blob was rebuilt from) and computes
//! [`changed_span`]. A span shorter than 64 KiB (`ZONES_MIN_SPAN` in
//! `worker.rs`: hand-edited sources) is scanned as one zone, and its
//! findings are judged by [`changed_spans`] afterwards, reading the base
//! again only when there is a finding: the line diff of every version and
//! the zones cost ripgrep's history 15.8% more instructions (callgrind, one
//! thread: 2.897 G against 2.502 G; 2.520 G with the threshold). A longer
//! span (moto's generated JSON) is diffed at once, and `Engine::scan_focus`
//! is called on the runs of [`changed_spans`], merged where less than
//! [`FOCUS_GAP`] apart ([`focus_zones`]). It finds exactly the findings of a
//! whole scan that meet the zones while reading around them: the keyword
//! pass over each zone widened by the short rules' windows, the few
//! long-window rules (PEM blocks, unbounded ones) by a search of their
//! keywords over the whole blob, decoding runs and split literals that meet
//! a zone read to their real ends, provider matches around a generic
//! candidate for the duplicate check, test-module detection and line
//! counting over the blob only when there are findings
//! (`crates/scanner-engine/src/engine.rs`, "Focus"; its oracle is
//! `crates/scanner-engine/tests/focus.rs`). The findings a zone holds
//! between two runs are then judged by the same runs ([`mark_unchanged`]),
//! so the focus and the judging agree: a focused scan reports what a whole
//! scan judged by the runs reports (the proptest
//! `the_focus_of_the_runs_finds_what_a_whole_scan_finds`). The bytes
//! outside the zones are counted in `--stats-json` as
//! `history.unchanged_bytes`. A base that was not itself scanned
//! (unreadable, over `--max-filesize`, binary) leaves the blob scanned
//! whole.
//!
//! The search for the long-window rules' keywords beyond the zones'
//! surroundings is skipped when the base is in [`Quiet`]: its own scan
//! found none of those keywords, so the bytes a version keeps from it
//! hold none either.
//!
//! Three kinds of blob are still scanned whole: one large enough to be split
//! (scanned in pieces by several workers), one under 8 KiB
//! ([`FOCUS_MIN_BYTES`]), for which reading the base costs more
//! than the focus saves, and one whose base changed wide (its zones three
//! quarters of it or more, a megabyte or more: [`Quiet`], [`WIDE_SKIPS`] in
//! a row), for which reading the base costs about as much as the focus
//! saves. With the one span this kept moto's generated JSON, which changes
//! all over, from reading its bases (4.6% fewer instructions on its last
//! 600 commits); with the line diff those versions change a few hundred
//! lines, are no longer wide, and are scanned around their changes.
//!
//! # Judging the findings
//!
//! When a blob with a base scanned whole has findings (once its pieces are
//! put together, for a split one), its base is read again and every
//! finding that meets none of [`changed_spans`] is marked `allowed` with
//! [`UNCHANGED`] ([`mark_unchanged`]): the sink counts it under that reason
//! and lists it with `-v`, like any other suppression, and never reports
//! it. Lines are compared only then: most blobs have no finding. A focused
//! scan judges with the runs it already has, and never looks at a finding
//! on a kept line outside its zones, which is then not counted.

use std::ops::Range;
use std::sync::Mutex;

use scanner_engine::Finding;

use crate::input::Oid;

/// The reason findings in the unchanged lines of a later version are counted
/// under (summary, `--stats-json`, `-v`).
pub const UNCHANGED: &str = "unchanged in a later version";

/// What the scans of recent history blobs tell about their next versions:
///
/// - *quiet*: its scan found no keyword of a long-window rule
///   (`ScanScratch::no_long_keywords`): a later version whose base is here
///   is scanned with `Engine::scan_focus`'s `quiet`, which skips the search
///   for those keywords over the whole blob (the private keys, JWTs and
///   cloud credentials whose windows reach kilobytes from the change). That
///   search was 4.5% of the time of a history scan of ripgrep (`perf
///   record`): seven `memchr` passes over 25 KB around each change, for
///   keywords that most files never hold.
/// - *wide*: the zones of its focus ([`focus_zones`]) were most of it
///   ([`is_wide`]), as in a generated file rewritten all over: the next [`WIDE_SKIPS`] versions based on it and on one
///   another are scanned whole, without reading their base, which would
///   cost about what the scan of the bytes it leaves out saves. Their
///   findings are then judged line by line ([`mark_unchanged`]), as any
///   blob scanned whole: what is reported does not change.
///
/// A fixed table of `QUIET_SLOTS` ids, each in the slot its first bytes
/// name, a newer id replacing an older one: its memory does not grow with
/// the history, and a base pushed out (or not scanned yet, on another
/// worker) only costs the search, or the read of the base. An id is matched
/// whole: a blob is never taken for another.
pub struct Quiet {
    slots: Mutex<Vec<Option<Entry>>>,
}

/// A blob's entry in [`Quiet`]: its id, whether it is quiet, and how many
/// more versions after it are to be scanned whole (0: not wide).
#[derive(Clone, Copy)]
struct Entry {
    oid: Oid,
    marks: Marks,
}

/// What [`Quiet`] knows of a blob; the default for one it does not hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Its scan found no long-window keyword.
    pub quiet: bool,
    /// How many more versions after it, the next one among them, are to be
    /// scanned whole: 0 when it is not known to have changed wide.
    pub wide: u8,
}

/// How many ids [`Quiet`] holds at most (24 bytes each): a version's base
/// is usually scanned a few thousand blobs before it.
const QUIET_SLOTS: usize = 1 << 14;

/// The smallest history blob scanned around its changes only (the
/// worker's `scan_bytes`). The focused scan reads about 4 KB around a change
/// and needs the base read and compared first; below this, scanning the
/// blob whole (and reading the base only when there is a finding to judge,
/// [`mark_unchanged`]) costs less. Instructions (callgrind, `--threads 1`)
/// against no minimum: ripgrep's history -0.6% at 4 and 8 KiB, +1.0% at 16
/// KiB, +4.6% at 32 KiB; the synthetic history of `scripts/bench-history.sh`
/// (2 KB files) -6.0%. So a blob of this size or more has its base read
/// before it is scanned, which `BlobGroups` plans for ("Lineages").
pub const FOCUS_MIN_BYTES: usize = 8 << 10;

/// How many versions in a row after a wide one ([`Quiet`]) are scanned
/// whole before one is compared with its base again, which tells whether
/// the file still changes wide.
pub const WIDE_SKIPS: u8 = 3;

/// Whether a version of `len` bytes whose focus zones hold `changed` bytes
/// changed wide ([`Quiet`]): three quarters of it or more, and it is
/// [`WIDE_MIN_BYTES`] or more.
pub fn is_wide(changed: usize, len: usize) -> bool {
    len >= WIDE_MIN_BYTES && changed >= len - len / 4
}

/// The smallest version that counts as changed wide ([`is_wide`]). A
/// smaller one's base is most often still in the blob reader's cache, and
/// reading it costs less than scanning whole what it leaves out: with no
/// such bound, ripgrep's history executed 11.8% more instructions (one
/// thread, callgrind: 2.78 G against 2.49 G), scanning whole 22 MB it had
/// scanned around changes. A base of a megabyte or more is too large for
/// those caches to keep for long (`pack.rs`, "Two caches").
pub const WIDE_MIN_BYTES: usize = 1 << 20;

impl Default for Quiet {
    fn default() -> Quiet {
        Quiet {
            slots: Mutex::new(vec![None; QUIET_SLOTS]),
        }
    }
}

impl Quiet {
    fn slot(oid: &Oid) -> usize {
        usize::from(u16::from_le_bytes([oid.0[0], oid.0[1]])) % QUIET_SLOTS
    }

    /// `oid`'s marks, changed by `f` (a new entry, unmarked, if the slot
    /// held another id).
    fn mark(&self, oid: Oid, f: impl FnOnce(&mut Marks)) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut slots[Self::slot(&oid)];
        let mut marks = match *slot {
            Some(e) if e.oid == oid => e.marks,
            _ => Marks::default(),
        };
        f(&mut marks);
        *slot = Some(Entry { oid, marks });
    }

    /// What is known of `oid`, read once: both marks of a base come from
    /// one look at the table.
    pub fn marks(&self, oid: &Oid) -> Marks {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots[Self::slot(oid)]
            .filter(|e| e.oid == *oid)
            .map_or(Marks::default(), |e| e.marks)
    }

    /// Records that `oid`'s scan found no long-window keyword.
    pub fn insert(&self, oid: Oid) {
        self.mark(oid, |m| m.quiet = true);
    }

    /// Records that the next `skips` versions after `oid` are to be scanned
    /// whole (it changed wide, or follows one that did).
    pub fn set_wide(&self, oid: Oid, skips: u8) {
        if skips > 0 {
            self.mark(oid, |m| m.wide = skips);
        }
    }
}

/// The bytes of `new` that differ from `old`: between their common prefix
/// and their common suffix (which do not overlap), widened by one byte on
/// each side so that a match whose boundary assertion looks at the first
/// changed byte (`\b`, a lookahead of one) counts as changed. Empty (but
/// still widened) for a pure deletion.
pub fn changed_span(old: &[u8], new: &[u8]) -> Range<u64> {
    let (prefix, suffix) = common_ends(old, new);
    let start = prefix.saturating_sub(1);
    let end = (new.len() - suffix + 1).min(new.len());
    start as u64..end.max(start) as u64
}

/// The bytes of `new` that differ from `old`, line by line: [`changed_span`]
/// without the lines `new` keeps from `old` ([`kept_lines`]: whole lines,
/// the same bytes, in the same order). A secret on a line between two
/// edits was reported with `old`; with the one span it was reported again
/// with `new`. Each run of changed lines is widened by one byte on each
/// side as in `changed_span`; lines cut from `old` between two kept ones
/// leave the two bytes around the cut. Ascending, not overlapping, all
/// within `changed_span`.
pub fn changed_spans(old: &[u8], new: &[u8]) -> Vec<Range<u64>> {
    let (prefix, suffix) = common_ends(old, new);
    // The gaps between the copies: lines of `new` not kept, or a cut.
    let mut runs: Vec<Range<usize>> = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    let end = Copy {
        old: old.len(),
        new: new.len(),
        len: 0,
    };
    for c in kept(old, new, prefix, suffix).iter().chain([&end]) {
        if c.new > new_at || c.old > old_at {
            runs.push(new_at..c.new);
        }
        (old_at, new_at) = (c.old + c.len, c.new + c.len);
    }
    widened(runs, prefix..new.len() - suffix, new.len())
}

/// The lines `new` keeps from `old`, as [`changed_spans`] finds them: runs
/// of whole lines, the same bytes, ascending in both versions (a common
/// subsequence of their lines), the common prefix and suffix among them.
pub fn kept_lines(old: &[u8], new: &[u8]) -> Vec<Copy> {
    let (prefix, suffix) = common_ends(old, new);
    kept(old, new, prefix, suffix)
}

/// [`kept_lines`], given the lengths of the common prefix and suffix.
fn kept(old: &[u8], new: &[u8], prefix: usize, suffix: usize) -> Vec<Copy> {
    let (start, tail) = whole_lines(new, prefix, suffix);
    let mut copies = vec![Copy {
        old: 0,
        new: 0,
        len: start,
    }];
    // Diffed apart: `diff_lines` joins a run to the last one it touches,
    // which the prefix's would, wrongly, in the middle's offsets.
    let mut mid = Vec::new();
    diff_lines(
        &old[start..old.len() - tail],
        &new[start..new.len() - tail],
        &mut mid,
    );
    copies.extend(mid.into_iter().map(|c| Copy {
        old: c.old + start,
        new: c.new + start,
        len: c.len,
    }));
    copies.push(Copy {
        old: old.len() - tail,
        new: new.len() - tail,
        len: tail,
    });
    copies.retain(|c| c.len > 0);
    copies
}

/// `len` bytes of whole lines that a new version keeps from the old one:
/// at `old` in the old version, at `new` in the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy {
    pub old: usize,
    pub new: usize,
    pub len: usize,
}

/// The line diff of [`changed_spans`] (the "Line diff" of the module docs)
/// between `old` and `new`, which both start on a line and end where a
/// line ends (or at the end of both files): the runs of lines kept,
/// ascending, appended to `out`.
fn diff_lines(old: &[u8], new: &[u8], out: &mut Vec<Copy>) {
    let mut budget = SEARCH_BUDGET * (old.len() + new.len()) + SEARCH_FLOOR;
    let (mut i, mut j) = (0, 0);
    loop {
        // In lockstep, a block at a time, as far as whole lines agree.
        let p = common_prefix(&old[i..], &new[j..]);
        let q = if p == old.len() - i && p == new.len() - j {
            p
        } else {
            memchr::memrchr(b'\n', &new[j..j + p]).map_or(0, |k| k + 1)
        };
        if q > 0 {
            push_copy(out, i, j, q);
            (i, j) = (i + q, j + q);
        }
        if i == old.len() || j == new.len() {
            return;
        }
        match resync(old, new, i, j, &mut budget) {
            Ok((i2, j2)) => {
                // The lines just before the anchor that agree too (the
                // anchor may have started after them): where lockstep
                // resumes, at a line start in both.
                let s = common_suffix(&old[i..i2], &new[j..j2]);
                let at_line = |t: &[u8], from: usize, at: usize| at == from || t[at - 1] == b'\n';
                let back = if at_line(old, i, i2 - s) && at_line(new, j, j2 - s) {
                    s
                } else {
                    let from = j2 - s;
                    memchr::memchr(b'\n', &new[from..j2]).map_or(0, |k| j2 - (from + k + 1))
                };
                if (i2 - back, j2 - back) == (i, j) {
                    // Cannot happen (the lines at `i` and `j` differ); a
                    // guard against looping all the same.
                    return;
                }
                keep_in_block(old, new, (i, i2 - back), (j, j2 - back), out);
                (i, j) = (i2 - back, j2 - back);
            }
            // The lines of `new` tried count as changed; lockstep goes on
            // from the next one.
            Err(next) if next < new.len() && budget > 0 => j = next,
            Err(_) => return,
        }
    }
}

/// `len` bytes kept from `old[i..]` at `new[j..]`, joined to the last copy
/// where they follow it on both sides.
fn push_copy(out: &mut Vec<Copy>, i: usize, j: usize, len: usize) {
    match out.last_mut() {
        Some(c) if c.old + c.len == i && c.new + c.len == j => c.len += len,
        _ => out.push(Copy {
            old: i,
            new: j,
            len,
        }),
    }
}

/// The lines of the block `old[i..i2]`, `new[j..j2]` that a resynchronisation
/// skips (each side starts on a line and ends on one, or at its end) which
/// are the same in both, in order: the longest such sequence, by dynamic
/// programming, where the block is small ([`BLOCK_LINES`] lines and
/// [`BLOCK_BYTES`] each side at most), pushed to `out`. A line kept between
/// two edits near it (where the candidate after them wins, its lockstep
/// going further than the line's own) is then kept, not counted changed
/// with the lines around it.
fn keep_in_block(
    old: &[u8],
    new: &[u8],
    (i, i2): (usize, usize),
    (j, j2): (usize, usize),
    out: &mut Vec<Copy>,
) {
    if i2 - i > BLOCK_BYTES || j2 - j > BLOCK_BYTES {
        return;
    }
    let lines = |text: &[u8], mut at: usize, to: usize| {
        let mut lines = Vec::new();
        while at < to && lines.len() <= BLOCK_LINES {
            let end = line_end(text, at).min(to);
            lines.push(at..end);
            at = end;
        }
        lines
    };
    let (a, b) = (lines(old, i, i2), lines(new, j, j2));
    if a.is_empty() || b.is_empty() || a.len() > BLOCK_LINES || b.len() > BLOCK_LINES {
        return;
    }
    let same = |x: usize, y: usize| old[a[x].clone()] == new[b[y].clone()];
    // `longest[x * w + y]`: the longest such sequence of `a[x..]` and `b[y..]`.
    let w = b.len() + 1;
    let mut longest = vec![0u8; (a.len() + 1) * w];
    for x in (0..a.len()).rev() {
        for y in (0..b.len()).rev() {
            longest[x * w + y] = match same(x, y) {
                true => longest[(x + 1) * w + y + 1] + 1,
                false => longest[(x + 1) * w + y].max(longest[x * w + y + 1]),
            };
        }
    }
    let (mut x, mut y) = (0, 0);
    while x < a.len() && y < b.len() {
        if same(x, y) {
            push_copy(out, a[x].start, b[y].start, a[x].len());
            (x, y) = (x + 1, y + 1);
        } else if longest[(x + 1) * w + y] >= longest[x * w + y + 1] {
            x += 1;
        } else {
            y += 1;
        }
    }
}

/// Where lockstep may resume after the lines at `old[i..]` and `new[j..]`
/// differ. The candidates: each anchor ([`anchor`]) at the next lines of
/// `new` where it first stands in `old` ahead of `i` (the lines of `new`
/// before it changed, those of `old` before it cut), and each at the next
/// lines of `old` where it first stands in `new` ahead of `j`, searched
/// within a window that grows with the lines tried. A line such as `},`, or
/// a line changed to a value other records hold, is found somewhere: the
/// candidate kept is the one whose lockstep goes furthest ([`agreement`],
/// up to [`AGREE_CAP`] bytes), less a sixteenth of the bytes it skips. The
/// search stops at one that agrees for [`AGREE_GOOD`] bytes, or a few lines
/// after the first found. `None` when none was found in [`RESYNC_TRIES`]
/// lines each side, or the search budget is spent: the rest of `new`
/// counts as changed, which reports more, never less.
fn resync(
    old: &[u8],
    new: &[u8],
    i: usize,
    j: usize,
    budget: &mut usize,
) -> Result<(usize, usize), usize> {
    if let Some(at) = resync_near(old, new, i, j) {
        return Ok(at);
    }
    let (mut ni, mut oi) = (j, i);
    // The best candidate: its place, score and the try it came at.
    let mut best: Option<((usize, usize), isize, usize)> = None;
    let consider = |best: &mut Option<_>, at: (usize, usize), k: usize| {
        let agree = agreement(old, new, at);
        let score = agree as isize - ((at.0 - i + at.1 - j) / 16) as isize;
        if best.is_none_or(|(_, s, _)| score > s) {
            *best = Some((at, score, k));
        }
        agree >= AGREE_GOOD
    };
    for k in 0..RESYNC_TRIES {
        // Once a candidate is found, one much further is not looked for.
        let near = best.map_or(usize::MAX, |((bi, bj), _, _)| {
            bi - i + bj - j + RESYNC_WINDOW
        });
        let window = (RESYNC_WINDOW << (k / 2)).min(near);
        // The next line of each side, sought in the other.
        if let Some((at, line)) = seek(new, &mut ni, old, i, window, budget) {
            if consider(&mut best, (at, line), k) {
                break;
            }
        }
        if let Some((at, line)) = seek(old, &mut oi, new, j, window, budget) {
            if consider(&mut best, (line, at), k) {
                break;
            }
        }
        let done = ni == new.len() && oi == old.len();
        if done || *budget == 0 || best.is_some_and(|(_, _, at)| k >= at + RESYNC_MORE) {
            break;
        }
    }
    best.map(|(at, _, _)| at).ok_or(ni)
}

/// One step of [`resync`]'s search on one side: the anchor at line start
/// `*at` of `text`, sought in `other` from `from` within `window`
/// ([`find_lines`]); returns where it stands there and the line it starts,
/// and moves `*at` to the next line. `None` at the end of `text`, or when
/// it is not found.
fn seek(
    text: &[u8],
    at: &mut usize,
    other: &[u8],
    from: usize,
    window: usize,
    budget: &mut usize,
) -> Option<(usize, usize)> {
    let line = *at;
    if line >= text.len() {
        return None;
    }
    *at = line_end(text, line);
    // The anchor with the newline before it, where it has one: the needle
    // of a wide window's search. (Lockstep stops, and resumes, at line
    // starts in both versions.)
    debug_assert!(
        line == 0 || text[line - 1] == b'\n',
        "{line} is not a line start"
    );
    let end = anchor(text, line);
    let led = line.checked_sub(1).map(|before| &text[before..end]);
    let lines = &text[line..end];
    let found = find_lines(other, from, window, lines, led, budget)?;
    Some((found, line))
}

/// The common case of [`resync`], without a search: a few lines replaced
/// by a few (at most [`NEAR_LINES`] each side), after which lockstep goes
/// on for [`AGREE_GOOD`] bytes or to the end (agreeing on something: the
/// ends of both, nothing kept, would be taken before a line kept further
/// on, and leave it changed). Tried nearest first (fewest lines skipped in
/// all), each by comparing memory in place.
fn resync_near(old: &[u8], new: &[u8], i: usize, j: usize) -> Option<(usize, usize)> {
    let starts = |text: &[u8], from: usize| {
        let mut at = [text.len(); NEAR_LINES + 1];
        at[0] = from;
        for k in 1..=NEAR_LINES {
            if at[k - 1] < text.len() {
                at[k] = line_end(text, at[k - 1]);
            }
        }
        at
    };
    let (olds, news) = (starts(old, i), starts(new, j));
    for skipped in 1..=2 * NEAR_LINES {
        for dn in skipped.saturating_sub(NEAR_LINES)..=skipped.min(NEAR_LINES) {
            let (a, b) = (olds[skipped - dn], news[dn]);
            let agree = agreement(old, new, (a, b));
            let to_end = a + agree == old.len() && b + agree == new.len();
            if agree >= AGREE_GOOD || (to_end && agree > 0) {
                return Some((a, b));
            }
        }
    }
    None
}

/// How many bytes old and new agree from `at` on, up to [`AGREE_CAP`].
fn agreement(old: &[u8], new: &[u8], (i, j): (usize, usize)) -> usize {
    let n = AGREE_CAP.min(old.len() - i).min(new.len() - j);
    common_prefix(&old[i..i + n], &new[j..j + n])
}

/// Where the line starting at `at` ends (after its newline).
fn line_end(text: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |k| at + k + 1)
}

/// The end of the anchor starting at line start `at`: whole lines, as many
/// as make [`ANCHOR_MIN`] bytes or [`ANCHOR_LINES`] lines (or the rest of
/// `text`; or one line of [`ANCHOR_LINE`] bytes or more), so that a line such as `},` is not taken for a later copy of
/// itself.
fn anchor(text: &[u8], at: usize) -> usize {
    let mut end = line_end(text, at);
    if end - at >= ANCHOR_LINE {
        return end;
    }
    let mut lines = 1;
    while end - at < ANCHOR_MIN && lines < ANCHOR_LINES && end < text.len() {
        end = line_end(text, end);
        lines += 1;
    }
    end
}

/// The first place at or after `from` (a line start) and at or before
/// `from + window` where `lines` (whole lines) stand in `text` as whole
/// lines; its search is taken from `budget`. `led` is the anchor with the
/// newline before it in its own version (`None` at the start of it): a
/// window of [`WIDE_WINDOW`] or more is searched for that ([`Pairs`]); a
/// narrower one line start by line start, each compared in place
/// ([`Probe`]). A `memmem::Finder` built for each anchor cost more than
/// the search (`perf`: 13% of a history scan of moto).
fn find_lines(
    text: &[u8],
    from: usize,
    window: usize,
    lines: &[u8],
    led: Option<&[u8]>,
    budget: &mut usize,
) -> Option<usize> {
    let end = text.len().min(from.saturating_add(window));
    let cost = (end - from).min(*budget);
    *budget -= cost;
    if cost < end - from {
        return None;
    }
    let ends_line = lines.last() == Some(&b'\n');
    let at_end = |pos: usize| pos < text.len() && (ends_line || pos + lines.len() == text.len());
    if text[from..].starts_with(lines) && at_end(from) {
        return Some(from);
    }
    if let Some(led) = led.filter(|_| end - from >= WIDE_WINDOW) {
        // A line start after `from` follows a newline before `end`.
        let hay = &text[from..text.len().min(end - 1 + led.len())];
        if let Some(finder) = Pairs::new(led) {
            let mut at = 0;
            while let Some(k) = finder.find(&hay[at..], led) {
                let pos = from + at + k + 1;
                if at_end(pos) {
                    return Some(pos);
                }
                at += k + 1;
            }
            return None;
        }
    }
    let probe = Probe::new(lines);
    let fits =
        |pos: usize| probe.may_fit(text, pos) && text[pos..].starts_with(lines) && at_end(pos);
    memchr::memchr_iter(b'\n', &text[from..end])
        .map(|k| from + k + 1)
        .find(|&pos| fits(pos))
}

/// A window of [`find_lines`] this wide or wider is searched for the anchor
/// with the newline before it ([`Pairs`]), not line start by line start:
/// every window but those cut short by a candidate already found (moto's
/// history at 256 bytes and at 1 KiB, 3 rounds: within 1%).
const WIDE_WINDOW: usize = 1 << 8;

/// The search of a wide window: for two bytes of the needle at their
/// distance (`memchr`'s packed pair, 32 places at a time), each candidate
/// then compared whole. The pair is the newline before the anchor and the
/// last byte of its first line: a line start followed, a line's length
/// later, by the same last byte (in a JSON file, a line of the same length
/// ending in the same bracket or comma). A `memmem::Finder` also builds a
/// Two-Way searcher, and `memchr` ranks the needle's bytes to choose its
/// pair: on moto's history those cost 10% and 3% of the CPU, more than the
/// search, one per anchor sought. Line start by line start, moto's windows
/// took 7% (3.3 GB of them, most where a new line is sought in the old
/// version and is not there).
#[cfg(target_arch = "x86_64")]
struct Pairs(memchr::arch::x86_64::avx2::packedpair::Finder);

#[cfg(target_arch = "x86_64")]
impl Pairs {
    /// `None` without AVX2: the window is searched line by line. An empty
    /// first line, or one of 255 bytes or more (past a pair's reach), has
    /// its pair ranked by `memchr` among the first [`PAIR_CHOICE`] bytes.
    fn new(needle: &[u8]) -> Option<Pairs> {
        use memchr::arch::{all::packedpair::Pair, x86_64::avx2::packedpair::Finder};
        // `needle` is the newline, then the anchor: this is the index of the
        // byte before the first line's own newline.
        let last = memchr::memchr(b'\n', &needle[1..]).unwrap_or(needle.len() - 1);
        let pair = match u8::try_from(last) {
            Ok(last) if last > 0 => Pair::with_indices(needle, 0, last)?,
            _ => Pair::new(&needle[..needle.len().min(PAIR_CHOICE)])?,
        };
        Finder::with_pair(needle, pair).map(Pairs)
    }

    /// Where `needle` first stands in `hay`.
    fn find(&self, hay: &[u8], needle: &[u8]) -> Option<usize> {
        if hay.len() < self.0.min_haystack_len() {
            return memchr::memmem::find(hay, needle);
        }
        self.0.find(hay, needle)
    }
}

/// How many first bytes of a needle [`Pairs`] ranks to choose a pair: the
/// newline, the indentation and the start of a line.
#[cfg(target_arch = "x86_64")]
const PAIR_CHOICE: usize = 48;

/// Elsewhere there is none: every window is searched line by line.
#[cfg(not(target_arch = "x86_64"))]
enum Pairs {}

#[cfg(not(target_arch = "x86_64"))]
impl Pairs {
    fn new(_: &[u8]) -> Option<Pairs> {
        None
    }

    fn find(&self, _: &[u8], _: &[u8]) -> Option<usize> {
        match *self {}
    }
}

/// Two 8-byte words of an anchor, compared in place at a line start before
/// the whole anchor is: the last bytes of its first line and of the anchor.
/// Most line starts of a window fail there without a call to `memcmp`
/// (`perf`: the calls were 5% of a history scan of moto, whose JSON lines
/// mostly start with the same indentation and keys, so the first bytes tell
/// little; their ends, the values, differ).
struct Probe {
    /// Where the words stand in the anchor, and the words; `None` for an
    /// anchor under 8 bytes, compared whole.
    words: Option<[(usize, u64); 2]>,
    len: usize,
}

impl Probe {
    fn new(lines: &[u8]) -> Probe {
        let len = lines.len();
        let words = (len >= 8).then(|| {
            let first = memchr::memchr(b'\n', lines).map_or(len, |k| k + 1);
            [first.max(8) - 8, len - 8].map(|at| (at, word(lines, at)))
        });
        Probe { words, len }
    }

    /// False when the anchor cannot stand at `pos` in `text`; true when it
    /// may (to be compared whole).
    #[inline]
    fn may_fit(&self, text: &[u8], pos: usize) -> bool {
        match self.words {
            Some(words) => {
                pos + self.len <= text.len()
                    && words.iter().all(|&(at, w)| word(text, pos + at) == w)
            }
            None => true,
        }
    }
}

/// The 8 bytes of `t` at `at`, as a number to compare.
#[inline]
fn word(t: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(t[at..at + 8].try_into().expect("8 bytes"))
}

/// How many lines each side [`resync_near`] skips at most.
const NEAR_LINES: usize = 4;
/// How many lines each side [`resync`] tries as anchors before it gives up.
const RESYNC_TRIES: usize = 64;
/// How many more lines each side [`resync`] tries after the first
/// candidate found, for a better one.
const RESYNC_MORE: usize = 2;
/// A candidate whose lockstep goes this far is taken at once.
const AGREE_GOOD: usize = 2 << 10;
/// How far a candidate's lockstep is followed to score it.
const AGREE_CAP: usize = 16 << 10;
/// How far ahead the first anchors are searched; doubled every two lines
/// tried.
const RESYNC_WINDOW: usize = 1 << 10;
/// A line this long is an anchor alone ...
const ANCHOR_LINE: usize = 32;
/// ... else lines up to this many bytes ...
const ANCHOR_MIN: usize = 48;
/// ... or this many lines.
const ANCHOR_LINES: usize = 4;
/// The most lines, and bytes, each side of a block [`keep_in_block`] looks in.
const BLOCK_LINES: usize = 64;
const BLOCK_BYTES: usize = 16 << 10;
/// The bytes a line diff may search for anchors, per byte of the two
/// versions (and [`SEARCH_FLOOR`] more): past that, what is left counts as
/// changed.
const SEARCH_BUDGET: usize = 8;
const SEARCH_FLOOR: usize = 1 << 20;

/// The focus of `Engine::scan_focus` for the runs of changed lines
/// `changed` ([`changed_spans`]): the runs, those less than
/// [`FOCUS_GAP`] apart merged into one zone, so that a file edited on many
/// nearby lines gives a few zones (the engine widens each by the rules'
/// windows, a few kilobytes, and walks the widened zones that overlap as
/// one anyway). The findings a zone holds between two runs are then judged
/// by the runs ([`mark_unchanged`]).
pub fn focus_zones(changed: &[Range<u64>]) -> Vec<Range<usize>> {
    let mut zones: Vec<Range<usize>> = Vec::with_capacity(changed.len());
    for c in changed {
        let c = c.start as usize..c.end as usize;
        match zones.last_mut() {
            Some(z) if c.start < z.end + FOCUS_GAP => z.end = c.end,
            _ => zones.push(c),
        }
    }
    zones
}

/// Runs of changed lines closer than this are one zone of the focus
/// ([`focus_zones`]).
pub const FOCUS_GAP: usize = 1 << 10;

/// Whole lines in both versions around what lies between their common
/// prefix and suffix: from the start of the line the first change is on
/// (the same offset in both), to the end of the line the common suffix
/// starts on (the same distance from each end). That start, and that
/// distance.
fn whole_lines(new: &[u8], prefix: usize, suffix: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &new[..prefix]).map_or(0, |i| i + 1);
    let cut = new.len() - suffix;
    let tail = if cut == 0 || new[cut - 1] == b'\n' {
        suffix
    } else {
        memchr::memchr(b'\n', &new[cut..]).map_or(0, |i| suffix - i - 1)
    };
    (start, tail)
}

/// The runs of changed lines (ascending) of a version of `len` bytes as
/// [`changed_spans`] gives them: each widened as in `changed_span`, then
/// cut to the one span (`within`, what lies between the common prefix and
/// suffix, widened so; a run wholly outside it, to its byte nearest the
/// run), those that meet merged.
fn widened(runs: Vec<Range<usize>>, within: Range<usize>, len: usize) -> Vec<Range<u64>> {
    let (lo, hi) = (within.start, within.end);
    // The one span: no byte outside it differs, whatever the lines say.
    let hull = (lo.saturating_sub(1), (hi + 1).min(len));
    let mut spans: Vec<Range<u64>> = Vec::new();
    for run in runs {
        // Widened, then cut to the one span. Cut to `within` first, a run wholly past
        // it (a cut after a line that ends as the line cut did, whose newline, or `\r\n`,
        // the common suffix then takes) moved onto the line before, and took its last
        // byte.
        let (s, e) = (
            run.start.saturating_sub(1).max(hull.0),
            (run.end + 1).min(hull.1),
        );
        // Nothing left: the byte of the one span nearest the run, which a match that
        // meets both must hold.
        let (s, e) = match (s < e, run.start >= hull.1) {
            (true, _) => (s, e),
            (false, true) => (hull.1.saturating_sub(1).max(hull.0), hull.1),
            (false, false) => (hull.0, (hull.0 + 1).min(hull.1)),
        };
        match spans.last_mut() {
            Some(last) if s as u64 <= last.end => last.end = last.end.max(e as u64),
            _ => spans.push(s as u64..e.max(s) as u64),
        }
    }
    spans
}

/// The lengths of the common prefix of `old` and `new` and of their common
/// suffix after it (the two do not overlap).
fn common_ends(old: &[u8], new: &[u8]) -> (usize, usize) {
    let prefix = common_prefix(old, new);
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = common_suffix(
        &old[old.len() - max_suffix..],
        &new[new.len() - max_suffix..],
    );
    (prefix, suffix)
}

/// Compared a block at a time with slice equality (memcmp), then byte by
/// byte inside the first block that differs: the common parts are most of
/// a version, and this runs at memory speed over them.
const BLOCK: usize = 256;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    // Then 8 bytes at a time: the line diff compares many short stretches
    // that differ early (callgrind: 2% of moto's history byte by byte).
    while i + 8 <= n {
        let x = word(a, i) ^ word(b, i);
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..]
        .iter()
        .zip(&b[i..])
        .position(|(x, y)| x != y)
        .unwrap_or(n - i)
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .position(|(x, y)| x != y)
        .unwrap_or(n - i)
}

/// Marks [`UNCHANGED`] every finding not already allowed whose match
/// intersects none of `changed`; returns how many.
pub fn mark_unchanged(findings: &mut [Finding], changed: &[Range<u64>]) -> usize {
    let mut n = 0;
    for f in findings.iter_mut().filter(|f| f.allowed.is_none()) {
        if !changed
            .iter()
            .any(|c| f.end_offset > c.start && f.offset < c.end)
        {
            f.allowed = Some(UNCHANGED);
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id is found only as written, and one whose slot it shares
    /// replaces it.
    #[test]
    fn quiet_holds_ids_whole() {
        let quiet = Quiet::default();
        let a = Oid([7; 20]);
        let mut b = a;
        b.0[19] = 8;
        let marks = |oid: &Oid| quiet.marks(oid);
        quiet.insert(a);
        assert!(marks(&a).quiet);
        assert!(!marks(&b).quiet);
        quiet.insert(b);
        assert!(marks(&b).quiet);
        assert!(!marks(&a).quiet);
        // Both marks on one id; another id in its slot starts unmarked.
        quiet.set_wide(b, 2);
        assert_eq!((marks(&b).quiet, marks(&b).wide), (true, 2));
        quiet.set_wide(a, 1);
        assert_eq!((marks(&a).quiet, marks(&a).wide), (false, 1));
        assert_eq!(marks(&b).wide, 0);
        let m = WIDE_MIN_BYTES;
        assert!(is_wide(m - m / 4, m) && !is_wide(m - m / 4 - 1, m));
        assert!(!is_wide(99, 100));
    }

    fn engine() -> &'static scanner_engine::Engine {
        static E: std::sync::OnceLock<scanner_engine::Engine> = std::sync::OnceLock::new();
        E.get_or_init(|| scanner_engine::Engine::builtin().unwrap())
    }

    /// The span computed naively, byte by byte.
    fn naive(old: &[u8], new: &[u8]) -> Range<u64> {
        let mut p = 0;
        while p < old.len() && p < new.len() && old[p] == new[p] {
            p += 1;
        }
        let mut s = 0;
        while s < old.len() - p
            && s < new.len() - p
            && old[old.len() - 1 - s] == new[new.len() - 1 - s]
        {
            s += 1;
        }
        let start = p.saturating_sub(1);
        let end = (new.len() - s + 1).min(new.len()).max(start);
        start as u64..end as u64
    }

    #[test]
    fn the_span_is_what_lies_between_the_common_prefix_and_suffix_widened_by_one() {
        assert_eq!(changed_span(b"abcXdef", b"abcYdef"), 2..5);
        assert_eq!(changed_span(b"abcdef", b"abcXYdef"), 2..6);
        // A deletion: nothing new, but the byte each side of the cut counts.
        assert_eq!(changed_span(b"abcXYdef", b"abcdef"), 2..4);
        // Repeats: the prefix takes what it can, the suffix the rest.
        assert_eq!(changed_span(b"aaaa", b"aaaaaa"), 3..6);
        assert_eq!(changed_span(b"", b"new"), 0..3);
        assert_eq!(changed_span(b"old", b""), 0..0);
        assert_eq!(changed_span(b"Xbc", b"Ybc"), 0..2);
        assert_eq!(changed_span(b"abX", b"abY"), 1..3);
    }

    #[test]
    fn block_comparison_agrees_with_the_naive_one_across_block_edges() {
        let base: Vec<u8> = (0..3 * BLOCK as u32 + 17)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        for at in [
            0,
            1,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            2 * BLOCK + 5,
            base.len() - 1,
        ] {
            for (del, ins) in [(0, 1), (1, 0), (1, 1), (3, 700), (700, 2)] {
                let del = del.min(base.len() - at);
                let mut new = base[..at].to_vec();
                new.extend(std::iter::repeat_n(0xAA, ins));
                new.extend_from_slice(&base[at + del..]);
                assert_eq!(
                    changed_span(&base, &new),
                    naive(&base, &new),
                    "edit at {at}: -{del} +{ins}"
                );
            }
        }
    }

    /// Lines `0..n` as `line i\n`, with the edits `f` makes.
    fn text(n: usize, f: impl Fn(usize) -> Option<String>) -> Vec<u8> {
        (0..n)
            .map(|i| f(i).unwrap_or_else(|| format!("line {i}\n")))
            .collect::<String>()
            .into_bytes()
    }

    fn at(hay: &[u8], needle: &[u8]) -> usize {
        hay.windows(needle.len()).position(|w| w == needle).unwrap()
    }

    #[test]
    fn the_lines_kept_between_two_edits_are_not_changed() {
        let old = text(10, |_| None);
        let new = text(10, |i| match i {
            2 => Some("edited 2\n".into()),
            7 => Some("edited 7\n".into()),
            _ => None,
        });
        let (l2, l7) = (at(&new, b"edited 2"), at(&new, b"edited 7"));
        let (l3, l8) = (l2 + 9, l7 + 9);
        // The common suffix takes ` 7\n`: the one span runs from the first
        // edit to there ...
        let hull = (l2 - 1) as u64..(l8 - 2) as u64;
        assert_eq!(changed_span(&old, &new), hull);
        // ... and the lines from each edit to the end of its line.
        assert_eq!(
            changed_spans(&old, &new),
            vec![(l2 - 1) as u64..(l3 + 1) as u64, (l7 - 1) as u64..hull.end]
        );
    }

    /// A line added just before a kept line and one just after it: the
    /// kept line is not changed (skipping both ends, nothing kept, is no
    /// resynchronisation).
    #[test]
    fn a_line_kept_between_two_added_lines_is_not_changed() {
        let (old, new) = (&b"a\nb\nkept line\n"[..], &b"a\nb\nc\nkept line\nz\n"[..]);
        let (c, z) = (at(new, b"c\n"), at(new, b"z\n"));
        // The common suffix is the last `\n`: the added `z` and the byte
        // before it (the kept line's newline), and the byte after.
        assert_eq!(
            changed_spans(old, new),
            vec![
                (c - 1) as u64..(c + 3) as u64,
                (z - 1) as u64..new.len() as u64
            ]
        );
    }

    #[test]
    fn lines_cut_between_kept_lines_leave_the_bytes_around_the_cut() {
        let old = text(10, |_| None);
        let edited = text(10, |i| (i == 1).then(|| "edited 1\n".into()));
        let mut new = edited.clone();
        let (l5, l7) = (at(&new, b"line 5"), at(&new, b"line 7"));
        new.drain(l5..l7);
        let spans = changed_spans(&old, &new);
        assert_eq!(spans.len(), 2, "{spans:?}");
        // The edited line whole (the common suffix starts after the cut).
        let l1 = at(&new, b"edited 1");
        assert_eq!(spans[0], (l1 - 1) as u64..(l1 + 9 + 1) as u64);
        // The byte before the cut (`line 7` now starts at `l5`): the
        // common suffix, `\nline 7...`, says none after it differs.
        assert_eq!(spans[1], (l5 - 1) as u64..l5 as u64, "{spans:?}");
    }

    #[test]
    fn one_changed_line_or_a_change_inside_a_line_gives_the_one_span() {
        for (old, new) in [
            (&b"abcX\ndef\n"[..], &b"abcY\ndef\n"[..]),
            (b"abc\nX\ndef\n", b"abc\nY\nZ\ndef\n"),
            (b"abc", b"abcdef"),
            (b"", b"new"),
            (b"old", b""),
            (b"same line\nend", b"same line\nEnd"),
        ] {
            assert_eq!(
                changed_spans(old, new),
                vec![changed_span(old, new)],
                "{:?} -> {:?}",
                String::from_utf8_lossy(old),
                String::from_utf8_lossy(new)
            );
        }
    }

    #[test]
    fn a_line_changed_at_its_end_is_not_taken_for_a_later_line() {
        // The first change is inside `ab`: the rest of that line, `b\n`,
        // equals a later line of the old version, but the line is new.
        let old = b"x\naZ\nb\nV\ny\n";
        let new = b"x\nab\nW\ny\n";
        let spans = changed_spans(old, new);
        assert!(
            spans.iter().any(|s| s.start <= 2 && s.end >= 4),
            "the new line `ab` must be changed: {spans:?}"
        );
    }

    #[test]
    fn a_wide_window_finds_an_anchor_at_its_end_and_one_without_a_newline_at_the_end_of_text() {
        let search = |text: &[u8], lines: &[u8], window: usize| {
            let at = text.len() - lines.len();
            let led = Some(&text[at - 1..]);
            [None, led].map(|led| find_lines(text, 0, window, lines, led, &mut { usize::MAX }))
        };
        // The only place is a line start at the window's very end.
        let mut text = b"x\n".repeat(3000);
        text.extend_from_slice(b"key\n");
        assert_eq!(search(&text, b"key\n", 6000), [Some(6000); 2]);
        assert_eq!(search(&text, b"key\n", 5999), [None; 2]);
        // An anchor without a newline stands only at the end of the text,
        // past many places that match all but that.
        let mut text = b"a\n".repeat(3000);
        text.extend_from_slice(b"a\na");
        assert_eq!(search(&text, b"a\na", 1 << 20), [Some(6000); 2]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
        /// `find_lines` finds the first line start in the window where the
        /// anchor stands as whole lines, as a naive search does, line by
        /// line (the words compared first never turn a place away that
        /// fits) and with the newline before it in a wide window.
        #[test]
        fn find_lines_finds_what_a_naive_search_finds(
            text in proptest::collection::vec(proptest::sample::select(b"aab\n".to_vec()), 0..9000),
            anchor_at in 0usize..9000,
            anchor_lines in 1usize..4,
            from in 0usize..9000,
            window in 0usize..2 * WIDE_WINDOW,
        ) {
            let starts: Vec<usize> = (0..=text.len())
                .filter(|&p| p == 0 || text[p - 1] == b'\n')
                .filter(|&p| p < text.len())
                .collect();
            proptest::prop_assume!(!starts.is_empty());
            let a = starts[anchor_at % starts.len()];
            let mut end = a;
            for _ in 0..anchor_lines {
                if end < text.len() {
                    end = line_end(&text, end);
                }
            }
            let lines = text[a..end].to_vec();
            let from = starts[from % starts.len()];
            let stop = text.len().min(from + window);
            // A line may start at the window's end itself (after a newline
            // just inside it).
            let naive = (from..=stop).find(|&p| {
                p < text.len()
                    && (p == from || text[p - 1] == b'\n')
                    && text[p..].starts_with(&lines)
                    && (lines.ends_with(b"\n") || p + lines.len() == text.len())
            });
            // Searched line by line, and (wide windows) with the newline before it.
            let led = a.checked_sub(1).map(|b| &text[b..end]);
            for led in [None, led] {
                let mut budget = usize::MAX;
                proptest::prop_assert_eq!(find_lines(&text, from, window, &lines, led, &mut budget), naive);
            }
        }
    }

    proptest::proptest! {
        /// Random line edits of a text full of repeated lines (`},`, few
        /// distinct ones, as in generated JSON): what the diff keeps is a
        /// common subsequence of whole lines, ascending in both versions;
        /// every line of `new` it does not keep meets a changed span.
        #[test]
        fn the_lines_kept_are_old_lines_in_order(
            edits in proptest::collection::vec((0usize..300, 0u8..5, 0usize..40), 0..16),
            distinct in 2usize..30,
        ) {
            let mut lines: Vec<String> = (0..300)
                .map(|i| if i % 3 == 0 { "},\n".to_string() } else { format!("  \"k{}\": {},\n", i % distinct, i % 7) })
                .collect();
            let old = lines.concat().into_bytes();
            for (at, op, n) in edits {
                let at = at.min(lines.len());
                match op {
                    0 => lines.insert(at, format!("new {n}\n")),
                    1 if at < lines.len() => { lines.drain(at..(at + n).min(lines.len())); }
                    2 if at < lines.len() => lines[at] = format!("  \"k{n}\": x,\n"),
                    3 => lines.insert(at, "},\n".into()),
                    _ => {
                        let copy: Vec<String> = lines[at..(at + n).min(lines.len())].to_vec();
                        let to = (at * 7 + n) % (lines.len() + 1);
                        lines.splice(to..to, copy);
                    }
                }
            }
            let new = lines.concat().into_bytes();
            let kept = kept_lines(&old, &new);
            let (mut o, mut n) = (0, 0);
            for c in &kept {
                proptest::prop_assert!(c.old >= o && c.new >= n, "{:?} not ascending", kept);
                proptest::prop_assert_eq!(&old[c.old..c.old + c.len], &new[c.new..c.new + c.len]);
                let at_line = |t: &[u8], p: usize| p == 0 || t[p - 1] == b'\n';
                let ends_line = |t: &[u8], p: usize| p == t.len() || t[p - 1] == b'\n';
                proptest::prop_assert!(at_line(&old, c.old) && at_line(&new, c.new));
                proptest::prop_assert!(ends_line(&old, c.old + c.len) && ends_line(&new, c.new + c.len));
                (o, n) = (c.old + c.len, c.new + c.len);
            }
            let spans = changed_spans(&old, &new);
            let mut at = 0;
            for line in new.split_inclusive(|&b| b == b'\n') {
                let range = at..at + line.len();
                at = range.end;
                let is_kept = kept.iter().any(|c| c.new <= range.start && range.end <= c.new + c.len);
                let meets = spans.iter().any(|s| s.start < range.end as u64 && range.start as u64 <= s.end);
                proptest::prop_assert!(is_kept || meets, "line {:?} neither kept nor changed", range);
            }
        }

        /// Random line edits of text holding secrets: the focused scan of
        /// the zones the diff gives, its findings judged by the runs, equals
        /// the whole scan judged by the runs (what the history worker does
        /// either way), and both report no finding on a kept line.
        #[test]
        fn the_focus_of_the_runs_finds_what_a_whole_scan_finds(
            edits in proptest::collection::vec((0usize..200, 0u8..4, 0usize..8), 1..10),
        ) {
            let engine = engine();
            let secret = |n: usize| {
                let key = "QZ7XWK2MB4PLNRT5QZ7XWK2MB4PLNRT5";
                format!("aws_key = \"AKIA{}\"\n", &key[n..n + 16])
            };
            let mut lines: Vec<String> = (0..200)
                .map(|i| match i % 4 { 0 => "},\n".to_string(), 1 => "{\n".into(), _ if i % 50 == 2 => secret(i % 8), _ => format!("  \"name\": \"v{}\",\n", i % 5) })
                .collect();
            let old = lines.concat().into_bytes();
            for (at, op, n) in edits {
                let at = at.min(lines.len());
                match op {
                    0 => lines.insert(at, secret(n)),
                    1 if at < lines.len() => { lines.drain(at..(at + n).min(lines.len())); }
                    2 if at < lines.len() => lines[at] = format!("  \"name\": \"w{n}\",\n"),
                    _ => lines.insert(at, "},\n".into()),
                }
            }
            let new = lines.concat().into_bytes();
            let changed = changed_spans(&old, &new);
            let input = scanner_engine::ScanInput::whole(&new, "data.json");
            let mut scratch = engine.new_scratch();
            let mut whole = Vec::new();
            engine.scan(&input, &mut scratch, &mut whole);
            // The test is not vacuous: a key left in the text is found.
            let holds_key = new.windows(4).any(|w| w == b"AKIA");
            proptest::prop_assert!(!holds_key || !whole.is_empty());
            mark_unchanged(&mut whole, &changed);
            let mut focused = Vec::new();
            engine.scan_focus(&input, &focus_zones(&changed), false, &mut scratch, &mut focused);
            mark_unchanged(&mut focused, &changed);
            let reported = |f: &[Finding]| f.iter().filter(|f| f.allowed.is_none()).map(|f| (f.offset, f.end_offset, f.rule_id.clone())).collect::<Vec<_>>();
            proptest::prop_assert_eq!(reported(&whole), reported(&focused));
            let kept = kept_lines(&old, &new);
            for f in whole.iter().filter(|f| f.allowed.is_none()) {
                let (s, e) = (f.offset as usize, f.end_offset as usize);
                proptest::prop_assert!(!kept.iter().any(|c| c.new < s && e < c.new + c.len), "{:?} reported on a kept line", f);
            }
        }

        /// Random line edits: every span lies within the one span, and the
        /// lines of `new` no span touches are lines of `old`, in order.
        #[test]
        fn what_no_span_touches_is_old_lines_in_order(
            edits in proptest::collection::vec((0usize..40, 0u8..4, 0usize..3), 0..8)
        ) {
            let mut lines: Vec<String> = (0..40).map(|i| format!("l{}\n", i % 13)).collect();
            let old = lines.concat().into_bytes();
            for (at, op, n) in edits {
                let at = at.min(lines.len());
                match op {
                    0 => lines.insert(at, format!("new {n}\n")),
                    1 if at < lines.len() => { lines.remove(at); }
                    2 if at < lines.len() => lines[at] = format!("l{n}x\n"),
                    _ => lines.insert(at, format!("l{}\n", n + 5)),
                }
            }
            let new = lines.concat().into_bytes();
            let hull = changed_span(&old, &new);
            let spans = changed_spans(&old, &new);
            for s in &spans {
                proptest::prop_assert!(hull.start <= s.start && s.end <= hull.end, "{:?} outside {:?}", s, hull);
            }
            for w in spans.windows(2) {
                proptest::prop_assert!(w[0].end < w[1].start, "{:?}", spans);
            }
            let mut old_lines = old.split_inclusive(|&b| b == b'\n');
            let mut at = 0u64;
            for line in new.split_inclusive(|&b| b == b'\n') {
                let range = at..at + line.len() as u64;
                at = range.end;
                if spans.iter().any(|s| s.start < range.end && range.start < s.end) {
                    continue;
                }
                proptest::prop_assert!(
                    old_lines.any(|l| l == line),
                    "untouched line {:?} is not a later line of the old version",
                    String::from_utf8_lossy(line)
                );
            }
        }
    }
}
