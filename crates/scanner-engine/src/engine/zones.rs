//! Lists of byte ranges for [`Engine::scan_focus`]: the focus (what a
//! version changed, run by run) and the zones around which candidates are
//! computed (module docs, "Focus").
//!
//! A list is ascending and its ranges are disjoint, none touching the
//! next ([`normalize`]), so their ends ascend too: a binary search finds
//! the one range an offset may meet.

use std::ops::Range;

/// Sorts `ranges` (each clipped to `len`) and merges those that overlap or
/// touch. A range that touches another meets a span exactly when the
/// merged one does ([`meets`]): a span starting before the joint meets the
/// left one, one starting at or after it the right one.
pub(crate) fn normalize(ranges: &mut Vec<Range<usize>>, len: usize) {
    for r in ranges.iter_mut() {
        let end = r.end.min(len);
        *r = r.start.min(end)..end;
    }
    ranges.sort_unstable_by_key(|r| (r.start, r.end));
    let mut kept = 0;
    for i in 0..ranges.len() {
        let r = ranges[i].clone();
        if kept > 0 && r.start <= ranges[kept - 1].end {
            ranges[kept - 1].end = ranges[kept - 1].end.max(r.end);
        } else {
            ranges[kept] = r;
            kept += 1;
        }
    }
    ranges.truncate(kept);
}

/// Whether `start..end` meets one of `zones` (a normalized list):
/// `end > z.start && start < z.end`, so an empty zone still meets a span
/// that straddles it.
pub(crate) fn meets(zones: &[Range<usize>], start: usize, end: usize) -> bool {
    near(zones, start, end, 0, 0)
}

/// Whether `start..end`, widened by `before` bytes on the left and
/// `after` on the right, meets one of `zones` (a normalized list): some
/// zone `z` with `end + after > z.start && start < z.end + before`.
pub(crate) fn near(
    zones: &[Range<usize>],
    start: usize,
    end: usize,
    before: usize,
    after: usize,
) -> bool {
    // The first zone that ends late enough; a later one starts later still.
    let i = zones.partition_point(|z| z.end + before <= start);
    zones.get(i).is_some_and(|z| end + after > z.start)
}

/// The zone of `zones` (a normalized list) that holds `start..end` whole.
pub(crate) fn holds(zones: &[Range<usize>], start: usize, end: usize) -> bool {
    let i = zones.partition_point(|z| z.end < end);
    zones.get(i).is_some_and(|z| z.start <= start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_sorts_clips_and_merges_what_touches() {
        let mut z = vec![9..12, 0..2, 2..4, 20..30, 6..6, 11..15];
        normalize(&mut z, 25);
        assert_eq!(z, vec![0..4, 6..6, 9..15, 20..25]);
        let mut z = vec![3..3, 3..3, 40..50];
        normalize(&mut z, 10);
        assert_eq!(z, vec![3..3, 10..10]);
    }

    /// `meets` and `holds` agree with a linear search over every zone.
    #[test]
    fn the_binary_searches_agree_with_a_linear_one() {
        let zones = vec![2..5, 7..7, 9..14, 20..21];
        for start in 0..25 {
            for end in start..25 {
                let linear = zones.iter().any(|z| end > z.start && start < z.end);
                assert_eq!(meets(&zones, start, end), linear, "{start}..{end}");
                let whole = zones.iter().any(|z| z.start <= start && end <= z.end);
                assert_eq!(holds(&zones, start, end), whole, "{start}..{end}");
                for (b, a) in [(1, 0), (0, 2), (3, 3)] {
                    let linear = zones.iter().any(|z| end + a > z.start && start < z.end + b);
                    assert_eq!(
                        near(&zones, start, end, b, a),
                        linear,
                        "{start}..{end} {b} {a}"
                    );
                }
            }
        }
    }
}
