//! Versions of a file in history: which findings of a blob are new since
//! the version it modifies.
//!
//! A history blob with a base (see `input/history/mod.rs`, "Versions of a
//! file") reports only the findings whose match meets [`changed_spans`]:
//! the lines it does not keep from the base (whole lines, the same bytes,
//! in the same order). The others were reported with the base, at the same
//! path. With the one span between the common prefix and suffix
//! ([`changed_span`]), a secret on a line between two edits was reported
//! again with every version that edited the file above and below it.
//!
//! # Scanning only what changed
//!
//! The worker reads the base first (its blob reader, whose pack cache
//! often holds what the blob was rebuilt from), computes [`changed_span`],
//! and calls `Engine::scan_focus`, which finds exactly the findings of a
//! whole scan that meet the span while reading around it: the keyword pass
//! over the span widened by the short rules' windows, the few long-window
//! rules (PEM blocks, unbounded ones) by a search of their keywords over the
//! whole blob, decoding runs and split literals that meet the span read to
//! their real ends, provider matches around a generic candidate for the
//! duplicate check, test-module detection and line counting over the blob
//! only when there are findings (`crates/scanner-engine/src/engine.rs`,
//! "Focus"; its oracle is `crates/scanner-engine/tests/focus.rs`). The
//! bytes outside the span are counted in `--stats-json` as
//! `history.unchanged_bytes`. A base that was not itself scanned
//! (unreadable, over `--max-filesize`, binary) leaves the blob scanned
//! whole.
//!
//! The search for the long-window rules' keywords beyond the span's
//! surroundings is skipped when the base is in [`Quiet`]: its own scan
//! found none of those keywords, so the bytes a version keeps from it
//! hold none either.
//!
//! Three kinds of blob are still scanned whole: one large enough to be split
//! (scanned in pieces by several workers), one under 8 KiB
//! (`FOCUS_MIN_BYTES` in `worker.rs`), for which reading the base costs more
//! than the focus saves, and one whose base changed wide (three quarters of
//! it or more since its own base, a megabyte or more: [`Quiet`],
//! [`WIDE_SKIPS`] in a row), for which reading the base costs about as much
//! as the focus saves. On the last 600 commits of moto's history, whose
//! generated JSON changes all over with each version, that is 4.6% fewer
//! instructions (callgrind, one thread: 15.20 G against 15.94 G).
//!
//! # Why one span, not one range per run of changed lines
//!
//! `Engine::scan_focus` takes several ranges, and [`changed_spans`] gives
//! one per run of changed lines, but scanning around those runs was slower
//! on the histories it was meant for. On moto's generated JSON (2-4 MB,
//! 130-160 versions each) two consecutive versions of
//! `moto/ec2/resources/instance_types.json` differ in 134 lines by
//! `git diff`, but the greedy matching marks 88,654 of the 124,149 lines
//! between the common ends as changed: a line like `},` matches a later
//! copy of itself, the matching overshoots, and the lines after it never
//! match again. With those runs as the focus, moto's history took 13.3 s
//! of user time against 9.0 s (matching the lines cost 20-25% of it, and the
//! keyword walk, each run widened by the rules' windows, was not shorter).
//! A real diff (Myers, histogram) reads every line of both versions, about
//! what the keyword walk over the span costs (docs/performance.md, moto).
//!
//! # Judging the findings
//!
//! When a blob with a base has findings (once its pieces are put together,
//! for a split one), its base is read again and every finding that meets
//! none of [`changed_spans`] is marked `allowed` with [`UNCHANGED`]
//! ([`mark_unchanged`]): the sink counts it under that reason and lists it
//! with `-v`, like any other suppression, and never reports it. Lines are
//! compared only then: most blobs have no finding.

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
/// - *wide*: what it changed from its own base ([`changed_span`]) was most
///   of it ([`is_wide`]), as in generated files (moto's 2-4 MB JSON service
///   descriptions): the next [`WIDE_SKIPS`] versions based on it and on one
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

/// How many versions in a row after a wide one ([`Quiet`]) are scanned
/// whole before one is compared with its base again, which tells whether
/// the file still changes wide.
pub const WIDE_SKIPS: u8 = 3;

/// Whether a version of `len` bytes whose `changed_span` is `changed` bytes
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
/// without the lines `new` keeps from `old` (whole lines, the same bytes, in
/// the same order). A secret on a line between two edits was reported with
/// `old`; with the one span it was reported again with `new`. Each run of
/// changed lines is widened by one byte on each side as in `changed_span`;
/// lines cut from `old` between two kept ones leave the two bytes around the
/// cut. Ascending, not overlapping, all within `changed_span`.
///
/// Lines are matched greedily, each to the first equal line of `old` after
/// the last one matched and at most `LOOKAHEAD` (256) lines on: an unmatched
/// line counts as changed, so a poor match reports more, never less.
pub fn changed_spans(old: &[u8], new: &[u8]) -> Vec<Range<u64>> {
    let (prefix, suffix) = common_ends(old, new);
    let (start, tail) = whole_lines(new, prefix, suffix);
    let (old_mid, new_mid) = (&old[start..old.len() - tail], &new[start..new.len() - tail]);
    // The lines of `old_mid`: where each starts (one more entry: the end);
    // hashes of them as far as a lookahead has needed, to compare a new
    // line with those ahead cheaply.
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', old_mid).map(|i| i + 1));
    if starts[starts.len() - 1] != old_mid.len() {
        starts.push(old_mid.len());
    }
    let old_lines = starts.len() - 1;
    let old_line = |i: usize| &old_mid[starts[i]..starts[i + 1]];
    let mut hashes: Vec<u64> = Vec::new();
    let mut runs: Vec<Range<usize>> = Vec::new();
    let mut next_old = 0;
    let mut rest = new_mid;
    while !rest.is_empty() {
        let at = start + new_mid.len() - rest.len();
        // Most often the very next line of `old`: compared in place.
        if next_old < old_lines {
            let kept = old_line(next_old);
            if rest.starts_with(kept) && (kept.ends_with(b"\n") || rest.len() == kept.len()) {
                next_old += 1;
                rest = &rest[kept.len()..];
                continue;
            }
        }
        let len = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        let line = &rest[..len];
        rest = &rest[len..];
        // Else the first equal line of `old` within LOOKAHEAD.
        let last = old_lines.min(next_old + LOOKAHEAD + 1);
        while hashes.len() < last {
            hashes.push(line_hash(old_line(hashes.len())));
        }
        let h = line_hash(line);
        match (next_old.min(last) + 1..last).find(|&i| hashes[i] == h && old_line(i) == line) {
            Some(i) => {
                // Lines cut from `old` just before this one.
                runs.push(at..at);
                next_old = i + 1;
            }
            None => runs.push(at..at + len),
        }
    }
    let at = start + new_mid.len();
    if next_old < old_lines {
        runs.push(at..at);
    }
    widened(runs, prefix..new.len() - suffix, new.len())
}

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
/// [`changed_spans`] gives them: each cut to `within` (what lies between
/// the common prefix and suffix), then widened as in `changed_span`, those
/// that meet merged.
fn widened(runs: Vec<Range<usize>>, within: Range<usize>, len: usize) -> Vec<Range<u64>> {
    let (lo, hi) = (within.start, within.end);
    let mut spans: Vec<Range<u64>> = Vec::new();
    for run in runs {
        let (s, e) = (run.start.clamp(lo, hi), run.end.clamp(lo, hi));
        let (s, e) = (s.saturating_sub(1), (e + 1).min(len));
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

/// A hash of a line for [`changed_spans`], which compares the lines
/// whose hashes are equal: 8 bytes at a time, multiplied and rotated
/// (FxHash's step), the length folded in.
fn line_hash(line: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let step = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let mut chunks = line.chunks_exact(8);
    let mut h = line.len() as u64;
    for c in &mut chunks {
        h = step(h, u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    step(h, u64::from_le_bytes(last))
}

/// How far past the last matched line [`changed_spans`] looks for a line's
/// match in the old version.
const LOOKAHEAD: usize = 256;

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
        // Two bytes at the cut (where exactly, the common prefix and
        // suffix decide: `line 5\nline 6\n` cut, or `5\nline 6\nline `).
        let cut = spans[1].start as usize + 1;
        assert_eq!(spans[1].end - spans[1].start, 2, "{spans:?}");
        assert!((l5 - 2..=l5 + 6).contains(&cut), "{spans:?}, cut at {l5}");
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

    /// The lines matched through a map of every old line to where it
    /// stands, as `changed_spans` first did: the spans it gives.
    fn spans_by_map(old: &[u8], new: &[u8]) -> Vec<Range<u64>> {
        let (prefix, suffix) = common_ends(old, new);
        let (start, tail) = whole_lines(new, prefix, suffix);
        let (old_mid, new_mid) = (&old[start..old.len() - tail], &new[start..new.len() - tail]);
        let mut at_line: std::collections::HashMap<&[u8], Vec<usize>> = Default::default();
        let mut old_lines = 0;
        for (i, line) in old_mid.split_inclusive(|&b| b == b'\n').enumerate() {
            at_line.entry(line).or_default().push(i);
            old_lines = i + 1;
        }
        let (mut runs, mut next_old, mut at) = (Vec::new(), 0, start);
        for line in new_mid.split_inclusive(|&b| b == b'\n') {
            let matched = at_line.get(line).and_then(|at_old| {
                let k = at_old.partition_point(|&i| i < next_old);
                at_old
                    .get(k)
                    .copied()
                    .filter(|&i| i - next_old <= LOOKAHEAD)
            });
            match matched {
                Some(i) => {
                    if i > next_old {
                        runs.push(at..at);
                    }
                    next_old = i + 1;
                }
                None => runs.push(at..at + line.len()),
            }
            at += line.len();
        }
        if next_old < old_lines {
            runs.push(at..at);
        }
        widened(runs, prefix..new.len() - suffix, new.len())
    }

    /// A line matched past the lookahead, or just within it.
    #[test]
    fn the_lookahead_bounds_a_match_as_the_map_did() {
        for gap in [LOOKAHEAD - 1, LOOKAHEAD, LOOKAHEAD + 1, LOOKAHEAD + 2] {
            let old = text(600, |_| None);
            let mut lines: Vec<String> = (0..600).map(|i| format!("line {i}\n")).collect();
            lines.drain(10..10 + gap);
            lines.insert(3, "new\n".into());
            let new = lines.concat().into_bytes();
            assert_eq!(
                changed_spans(&old, &new),
                spans_by_map(&old, &new),
                "gap {gap}"
            );
        }
    }

    proptest::proptest! {
        /// Random line edits, with lines repeated (few distinct ones): the
        /// spans are those of the map of lines.
        #[test]
        fn the_spans_are_those_of_a_map_of_lines(
            edits in proptest::collection::vec((0usize..400, 0u8..4, 0usize..3), 0..12),
            distinct in 3usize..40,
        ) {
            let mut lines: Vec<String> = (0..400).map(|i| format!("l{}\n", i % distinct)).collect();
            let old = lines.concat().into_bytes();
            for (at, op, n) in edits {
                let at = at.min(lines.len());
                match op {
                    0 => lines.insert(at, format!("new {n}\n")),
                    1 if at < lines.len() => { lines.drain(at..(at + 40 * n).min(lines.len())); }
                    2 if at < lines.len() => lines[at] = format!("l{n}x"),
                    _ => lines.insert(at, format!("l{}\n", n + 5)),
                }
            }
            let new = lines.concat().into_bytes();
            proptest::prop_assert_eq!(changed_spans(&old, &new), spans_by_map(&old, &new));
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
