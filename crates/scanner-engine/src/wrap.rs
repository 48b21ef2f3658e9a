//! Base64 wrapped over lines (MIME at 76 columns, PEM at 64, the lines of a
//! JSON string joined by `\n` escapes): which lines one candidate run of the
//! decode pass (`decode.rs`) reads as one, across the line breaks; and runs
//! that go on over `\/` escapes ([`slash_start`]).
//!
//! A *line* here is a maximal run of base64-alphabet bytes (after a `\n`,
//! `\r` or `\t` escape, from the byte after its letter, as the decode pass's
//! runs). A *break* is `\n`, `\r\n`, or the escapes `\n` and `\r\n`. A line
//! `S` *continues* the line `P` above it when only a break separates them,
//! `P` is full width (a multiple of 4, from [`MIN_WIDTH`] to `max` bytes),
//! `S` is not wider than `P`, only base64 is on its line (a break, a closing
//! quote or the end follows it and its padding), the two do not mix the
//! standard (`+/`) and URL-safe (`-_`) alphabets, and `P` is not itself the
//! short last line of a block (narrower than a full-width line above it). A block is a line that
//! continues none and the lines that continue it in turn: every line but the
//! last the same width. The decode pass reads a block as one run (at most
//! `cap` bytes of the buffer, as any run) and never starts a run at a line
//! that continues another.
//!
//! Whether a line continues another is decided from the line and at most
//! two lines above it, so a chunk that starts inside a block decides as a
//! whole-buffer scan does: `max` is at most `cap / 8`, and the look back
//! (two lines and two breaks) stays inside the `2 LEAD` bytes before the
//! chunk's owned range; the look ahead past a capped run, one line, inside
//! the `LEAD` bytes the owning chunk holds beyond it.

use std::ops::Range;

/// The narrowest full-width line: the shortest base64 run the decode pass
/// reads (22 bytes), rounded up to whole groups of 4.
pub(crate) const MIN_WIDTH: usize = 24;
/// The widest full-width line (MIME writes 76, PEM 64).
pub(crate) const MAX_WIDTH: usize = 256;

/// The widest full-width line for runs cut to `cap` bytes.
pub(crate) fn max_width(cap: usize) -> usize {
    (cap / 8).min(MAX_WIDTH)
}

/// Where the line before the break that ends right before `s` ends.
fn break_before(data: &[u8], s: usize) -> Option<usize> {
    match data.get(s.checked_sub(2)?..s)? {
        [b'\r', b'\n'] => Some(s - 2),
        [_, b'\n'] => Some(s - 1),
        b"\\n" if s >= 4 && &data[s - 4..s - 2] == b"\\r" => Some(s - 4),
        b"\\n" => Some(s - 2),
        _ => None,
    }
}

/// Where the line after the break that starts at `e` starts.
fn break_after(data: &[u8], e: usize) -> Option<usize> {
    let rest = &data[e.min(data.len())..];
    [&b"\r\n"[..], b"\n", b"\\r\\n", b"\\n"]
        .iter()
        .find(|b| rest.starts_with(b))
        .map(|b| e + b.len())
}

/// The full-width line (see the module docs) above the break that ends
/// right before `s`.
fn full_line_above(
    data: &[u8],
    s: usize,
    max: usize,
    alpha: impl Fn(u8) -> bool + Copy,
) -> Option<Range<usize>> {
    let e = break_before(data, s)?;
    let floor = e.saturating_sub(max + 1);
    let mut b = e;
    while b > floor && alpha(data[b - 1]) {
        b -= 1;
    }
    if b > 0 && alpha(data[b - 1]) {
        return None;
    }
    if b > 0 && b < e && data[b - 1] == b'\\' && matches!(data[b], b'n' | b'r' | b't') {
        b += 1;
    }
    let w = e - b;
    (w % 4 == 0 && (MIN_WIDTH..=max).contains(&w)).then_some(b..e)
}

/// Whether the line `s..e` continues the line above it (module docs).
pub(crate) fn continues(
    data: &[u8],
    s: usize,
    e: usize,
    max: usize,
    alpha: impl Fn(u8) -> bool + Copy,
) -> bool {
    let Some(p) = full_line_above(data, s, max, alpha) else {
        return false;
    };
    // Only base64 on the line: after it (and its padding) a break, a
    // closing quote or the end (not `b = ...`).
    let pad = data[e..].iter().take(2).take_while(|&&b| b == b'=').count();
    let ends = data
        .get(e + pad)
        .is_none_or(|b| matches!(b, b'\r' | b'\n' | b'\\' | b'"' | b'\'' | b'`' | b'<'));
    // One alphabet: `+/` and `-_` in one run make it neither.
    let has = |r: Range<usize>, set: &[u8]| data[r].iter().any(|b| set.contains(b));
    let mixed =
        (has(p.clone(), b"+/") && has(s..e, b"-_")) || (has(p.clone(), b"-_") && has(s..e, b"+/"));
    s < e
        && e - s <= p.len()
        && ends
        && !mixed
        && full_line_above(data, p.start, max, alpha).is_none_or(|q| p.len() >= q.len())
}

/// The end of the line that starts at `s`, looking at most `max + 1` bytes.
fn line_end(data: &[u8], s: usize, max: usize, alpha: impl Fn(u8) -> bool) -> usize {
    let mut e = s;
    while e < data.len() && e - s <= max && alpha(data[e]) {
        e += 1;
    }
    e
}

/// The end of the block that the line `start..end` begins: the end of the
/// last line that continues it in turn, looking no further once the block
/// is `cap` bytes long.
pub(crate) fn block_end(
    data: &[u8],
    start: usize,
    mut end: usize,
    cap: usize,
    max: usize,
    alpha: impl Fn(u8) -> bool + Copy,
) -> usize {
    while end - start < cap {
        let Some(s) = break_after(data, end) else {
            break;
        };
        let e = line_end(data, s, max, alpha);
        if !continues(data, s, e, max, alpha) {
            break;
        }
        end = e;
    }
    end
}

/// Where the block holding the line that starts at `s` (a run's first
/// byte, an escape's letter included) starts, in the same terms, walking up
/// no further than `floor`.
pub(crate) fn block_start(
    data: &[u8],
    mut s: usize,
    floor: usize,
    max: usize,
    alpha: impl Fn(u8) -> bool + Copy,
) -> usize {
    loop {
        let escaped =
            s > 0 && data[s - 1] == b'\\' && matches!(data.get(s), Some(b'n' | b'r' | b't'));
        let t = s + escaped as usize;
        if !continues(data, t, line_end(data, t, max, alpha), max, alpha) {
            return s;
        }
        let Some(p) = full_line_above(data, t, max, alpha) else {
            return s;
        };
        // Its first byte as a run's: an escape's letter, if it follows one.
        let up = if p.start > 0 && alpha(data[p.start - 1]) {
            p.start - 1
        } else {
            p.start
        };
        if up < floor {
            return s;
        }
        s = up;
    }
}

/// Where the run holding the piece of alphabet bytes that starts at `s`
/// starts, across `\/` escapes (JSON's escaped `/`, which PHP's
/// `json_encode` writes for every `/`): a run goes on over `\/` as over a
/// `/`. `None` if that is more than `cap` bytes before `s` (a chunk holds
/// `cap` bytes before what it owns).
pub(crate) fn slash_start(
    data: &[u8],
    mut s: usize,
    cap: usize,
    alpha: impl Fn(u8) -> bool,
) -> Option<usize> {
    let floor = s.saturating_sub(cap);
    while s >= 2 && data.get(s) == Some(&b'/') && data[s - 1] == b'\\' && alpha(data[s - 2]) {
        s -= 1;
        while s > 0 && alpha(data[s - 1]) {
            s -= 1;
        }
        if s < floor {
            return None;
        }
    }
    Some(s)
}

/// Where the run that holds the piece ending at `e` ends, across `\/`
/// escapes ([`slash_start`]), going on over no more once past `limit`.
pub(crate) fn slash_end(
    data: &[u8],
    mut e: usize,
    limit: usize,
    alpha: impl Fn(u8) -> bool,
) -> usize {
    while e <= limit && data.get(e..e + 2) == Some(&b"\\/"[..]) {
        e += 1;
        while e < data.len() && alpha(data[e]) {
            e += 1;
        }
    }
    e
}

/// Where the first line break of `run` is (`\r`, `\n` or their escapes).
pub(crate) fn first_break(run: &[u8]) -> Option<usize> {
    (0..run.len()).find(|&i| {
        matches!(run[i], b'\r' | b'\n')
            || (run[i] == b'\\' && matches!(run.get(i + 1), Some(b'n' | b'r')))
    })
}

/// The bytes of a run without its line breaks, if it has any, and with its
/// `\/` escapes read as `/`.
pub(crate) fn unwrap(run: &[u8]) -> Option<Vec<u8>> {
    memchr::memchr2(b'\n', b'\\', run)?;
    let mut out = Vec::with_capacity(run.len());
    let mut i = 0;
    while i < run.len() {
        match run[i] {
            b'\r' | b'\n' => i += 1,
            b'\\' => {
                if run.get(i + 1) == Some(&b'/') {
                    out.push(b'/');
                }
                i += 2;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alpha(b: u8) -> bool {
        b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
    }

    /// The blocks of `text`: each line that continues none, to the end of
    /// the lines that continue it.
    fn blocks(text: &str) -> Vec<&str> {
        let d = text.as_bytes();
        let mut out = Vec::new();
        let mut s = 0;
        while s < d.len() {
            if !alpha(d[s]) || (s > 0 && alpha(d[s - 1])) {
                s += 1;
                continue;
            }
            let t = if s > 0 && d[s - 1] == b'\\' { s + 1 } else { s };
            let e = line_end(d, t, usize::MAX, alpha);
            if e - t >= 22 && !continues(d, t, e, 64, alpha) {
                out.push(&text[t..block_end(d, t, e, 1 << 20, 64, alpha)]);
            }
            s = e;
        }
        out
    }

    #[test]
    fn blocks_of_wrapped_lines() {
        let a = "QUJD".repeat(6); // 24
        let b = "RUZH".repeat(7); // 28
                                  // Every line but the last the same width; then a wider line starts
                                  // another block; a short last line ends one.
        let text = format!("{a}\n{a}\r\n{a}\nxyz\n{b}\n{a}\n{a}\n");
        assert_eq!(
            blocks(&text),
            [
                format!("{a}\n{a}\r\n{a}\nxyz").as_str(),
                format!("{b}\n{a}").as_str(),
                a.as_str()
            ]
        );
        // Escapes, not widths of 4, too wide, padding between lines.
        let text = format!("\"{a}\\r\\n{a}\\n{a}\\n{a}x\\n{a}\"\n{a}=\n{a}");
        assert_eq!(
            blocks(&text),
            [
                format!("{a}\\r\\n{a}\\n{a}").as_str(),
                format!("{a}x").as_str(),
                a.as_str(),
                a.as_str(),
                a.as_str()
            ]
        );
        // A word after the block is no base64 line; nor a line that mixes
        // the alphabets.
        assert_eq!(blocks(&format!("{a}\nb = 1")), [a.as_str()]);
        let (std, url) = ("QUJ+".repeat(6), "QU-_".repeat(6));
        assert_eq!(
            blocks(&format!("{std}\n{url}")),
            [std.as_str(), url.as_str()]
        );
        let wide = "QUJD".repeat(17); // 68 > 64
        assert_eq!(blocks(&format!("{wide}\n{a}")), [wide.as_str(), a.as_str()]);
    }

    /// From any line of a block, `block_start` finds the block's first line.
    #[test]
    fn block_start_walks_up() {
        let a = "QUJD".repeat(6);
        let text = format!("x {a}\\n{a}\\n{a}\\nAB");
        let d = text.as_bytes();
        let starts: Vec<usize> = (0..4).map(|k| 2 + k * 26 - (k > 0) as usize).collect();
        for &s in &starts {
            assert_eq!(block_start(d, s, 0, 64, alpha), 2, "{s}");
        }
        assert_eq!(block_start(d, starts[2], starts[1], 64, alpha), starts[1]);
    }

    #[test]
    fn unwrap_drops_breaks() {
        assert_eq!(unwrap(b"QUJD"), None);
        assert_eq!(unwrap(b"QU\r\nJD\\r\\nQU\\nJD").unwrap(), b"QUJDQUJD");
        assert_eq!(unwrap(b"QU\\/D").unwrap(), b"QU/D");
        assert_eq!(first_break(b"QU\\/D\\nQU"), Some(5));
    }

    /// A run goes on over `\/` both ways; not over `\\/` (a backslash).
    #[test]
    fn runs_across_escaped_slashes() {
        let d = b"x ab\\/cd\\/ef y\\\\/gh";
        assert_eq!(slash_start(d, 9, 100, alpha), Some(2));
        assert_eq!(slash_start(d, 9, 4, alpha), None);
        assert_eq!(slash_end(d, 4, 100, alpha), 12);
        assert_eq!(slash_end(d, 4, 3, alpha), 4);
        assert_eq!(slash_start(d, 16, 100, alpha), Some(16));
    }
}
