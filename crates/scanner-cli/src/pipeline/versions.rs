//! Versions of a file in history: which findings of a blob are new since
//! the version it modifies.
//!
//! A history blob with a base (see `input/history.rs`, "Versions of a
//! file") reports only the findings whose secret meets [`changed_span`]:
//! the others were reported with the base, at the same path.
//!
//! # Scanning only what changed
//!
//! The worker reads the base first (its blob reader, whose pack cache
//! often holds what the blob was rebuilt from), computes the span, and
//! calls `Engine::scan_focus`, which finds exactly the findings of a whole
//! scan that meet the span while reading around it: the keyword pass over
//! the span widened by the short rules' windows, the few long-window rules
//! (PEM blocks, unbounded ones) by a search of their keywords over the
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
//! Two kinds of blob are still scanned whole: one large enough to be split
//! (scanned in pieces by several workers), and one under 8 KiB
//! (`FOCUS_MIN_BYTES` in `worker.rs`), for which reading the base costs more
//! than the focus saves. When such a blob has findings (once its pieces are
//! put together), its base is read and every finding that lies wholly
//! outside the span is marked `allowed` with [`UNCHANGED`]
//! ([`mark_unchanged`]): the sink counts it under that reason and lists it
//! with `-v`, like any other suppression, and never reports it. Its bytes
//! were scanned, so they are not in `history.unchanged_bytes`.

use std::ops::Range;

use scanner_engine::Finding;

/// The reason findings in the unchanged part of a later version scanned
/// whole (split, or small) are counted under (summary, `--stats-json`, `-v`).
pub const UNCHANGED: &str = "unchanged in a later version";

/// The bytes of `new` that differ from `old`: between their common prefix
/// and their common suffix (which do not overlap), widened by one byte on
/// each side so that a match whose boundary assertion looks at the first
/// changed byte (`\b`, a lookahead of one) counts as changed. Empty (but
/// still widened) for a pure deletion.
pub fn changed_span(old: &[u8], new: &[u8]) -> Range<u64> {
    let prefix = common_prefix(old, new);
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = common_suffix(
        &old[old.len() - max_suffix..],
        &new[new.len() - max_suffix..],
    );
    let start = prefix.saturating_sub(1);
    let end = (new.len() - suffix + 1).min(new.len());
    start as u64..end.max(start) as u64
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

/// Marks [`UNCHANGED`] every finding not already allowed whose match does
/// not intersect `changed`; returns how many.
pub fn mark_unchanged(findings: &mut [Finding], changed: &Range<u64>) -> usize {
    let mut n = 0;
    for f in findings.iter_mut().filter(|f| f.allowed.is_none()) {
        if f.end_offset <= changed.start || f.offset >= changed.end {
            f.allowed = Some(UNCHANGED);
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
