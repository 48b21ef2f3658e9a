//! Decode and rescan: secrets hidden in base64, hex or percent-encoded
//! text, and private keys written as several source string literals.
//!
//! # The pass, step by step
//!
//! After the plain scan of a buffer ([`Engine::scan`]):
//!
//! 1. Split literals (`src/literals.rs`): each `-----BEGIN` right after a
//!    quote starts a sequence of string literals joined by whitespace, `+`,
//!    `.` or a `\` line continuation; if there are two or more and their
//!    unescaped contents hold `-----END`, the contents are scanned and the
//!    findings that start with `-----BEGIN` are kept.
//! 2. Candidates (when the depth is at least 1): one pass of a 256-entry
//!    byte-class table finds maximal runs of the base64 alphabets
//!    (`A-Za-z0-9+/` or `A-Za-z0-9-_`, then up to two `=`) at least
//!    [`MIN_BASE64_RUN`] long, and, only if the buffer has a `%`, runs of
//!    URL bytes holding a `%XX` escape. No byte outside a candidate is
//!    decoded.
//! 3. Each candidate is decoded as hex (an even run of hex digits), else
//!    base64 (standard or URL-safe, as its bytes say), else percent; the
//!    decoder stops at the first byte that is not printable text
//!    (ASCII printable, tab, CR, LF, or valid UTF-8), and a result shorter
//!    than [`MIN_DECODED`] bytes is dropped. So a git hash or an
//!    identifier costs a few table lookups.
//! 4. The decoded text is scanned with the same engine (path-only rules
//!    off), and decoded again, up to the depth.
//! 5. A finding from decoded text keeps its rule, secret, match and
//!    fingerprint (that of the secret, as if plain) and gets the positions
//!    of the *whole encoded run* in the scanned buffer (offset, end offset,
//!    start and end line and column), and `decoded` lists the encodings,
//!    outermost first. A `scanner:allow` marker on the line where the run
//!    starts drops them (counted as inline allows).
//!
//! # Chunks
//!
//! A run or literal sequence is decoded over at most `2 LEAD` bytes
//! (`LEAD` is the longest `max_len`), in whole-buffer scans too, and
//! belongs to the chunk that owns its first byte (the engine's ownership
//! range, `[2 LEAD, owned_len + 2 LEAD)`, from 0 for the first chunk).
//! That chunk holds at least `3 LEAD + K + 16` bytes after the start of
//! everything it owns, so it sees the whole capped run and the byte that
//! ends it: chunked scans report exactly what a whole-buffer scan reports.

use crate::engine::INLINE_MARKERS;
use crate::{Engine, Finding, LinePos, ScanInput, ScanScratch};

/// Default for [`EngineBuilder::decode_depth`](crate::EngineBuilder::decode_depth).
pub const DEFAULT_DEPTH: usize = 2;
/// Decoded text shorter than this is not scanned.
pub const MIN_DECODED: usize = 16;
/// The shortest base64 run that can hold [`MIN_DECODED`] bytes.
pub const MIN_BASE64_RUN: usize = 22;
/// The shortest hex run that can hold [`MIN_DECODED`] bytes.
const MIN_HEX_RUN: usize = 2 * MIN_DECODED;

/// How a secret was found (see [`Finding::decoded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Base64, standard alphabet (`+/`), padded or not.
    Base64,
    /// Base64, URL-safe alphabet (`-_`).
    Base64Url,
    /// Hex digits, two per byte.
    Hex,
    /// `%XX` escapes (URL encoding).
    Percent,
    /// Source string literals joined and unescaped (a PEM key written as
    /// `"-----BEGIN ...\n" "MIIE...\n"`).
    StringLiterals,
}

impl Encoding {
    /// The name reports use: `base64`, `base64url`, `hex`, `percent`,
    /// `string-literals`.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Base64 => "base64",
            Encoding::Base64Url => "base64url",
            Encoding::Hex => "hex",
            Encoding::Percent => "percent",
            Encoding::StringLiterals => "string-literals",
        }
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Per-worker buffers of the decode pass.
#[derive(Default)]
pub(crate) struct DecodeScratch {
    runs: Vec<Run>,
    found: Vec<Finding>,
    buf: Vec<u8>,
}

/// A candidate: `start..end` in the buffer, and what it may be.
#[derive(Clone, Copy, Debug)]
struct Run {
    start: usize,
    end: usize,
    kind: RunKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum RunKind {
    /// Base64 alphabet bytes; `std`/`url`: whether the run has `+/`/`-_`;
    /// `hex`: whether every byte is a hex digit.
    Base64 {
        std: bool,
        url: bool,
        hex: bool,
    },
    Percent,
}

const B64: u8 = 1; // A-Za-z0-9
const STD: u8 = 2; // + /
const URL: u8 = 4; // - _
const HEX: u8 = 8; // 0-9a-fA-F
const PCT: u8 = 16; // bytes of a URL (percent runs)

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut v = 0;
        if c.is_ascii_alphanumeric() {
            v |= B64;
        }
        if c == b'+' || c == b'/' {
            v |= STD;
        }
        if c == b'-' || c == b'_' {
            v |= URL;
        }
        if c.is_ascii_hexdigit() {
            v |= HEX;
        }
        if c > b' '
            && c < 0x7f
            && !matches!(
                c,
                b'"' | b'\''
                    | b'`'
                    | b'<'
                    | b'>'
                    | b'('
                    | b')'
                    | b'['
                    | b']'
                    | b'{'
                    | b'}'
                    | b','
                    | b';'
                    | b'\\'
            )
        {
            v |= PCT;
        }
        t[b] = v;
        b += 1;
    }
    t
};

/// The decode pass of [`Engine::scan`]: appends the findings of decoded
/// text owned by this chunk to `out`, then orders `out[first..]` by offset.
pub(crate) fn rescan(
    engine: &Engine,
    input: &ScanInput<'_>,
    scratch: &mut ScanScratch,
    out: &mut Vec<Finding>,
    first: usize,
) {
    let lead = engine.lead();
    let cap = 2 * lead;
    if cap == 0 || engine.path_allowlisted(input.path) {
        return;
    }
    let data = input.data;
    let own_lo = if input.base_offset == 0 { 0 } else { 2 * lead };
    let own_hi = input.owned_len.saturating_add(2 * lead).min(data.len());
    if own_lo >= own_hi {
        return;
    }
    let mut ds = std::mem::take(&mut scratch.decode);
    ds.found.clear();
    let before = out.len();

    // Split literals: (span, text) pairs found from `-----BEGIN`.
    let mut units: Vec<(Run, Vec<u8>)> = Vec::new();
    crate::literals::find(data, own_lo, own_hi, cap, |start, end, text| {
        units.push((
            Run {
                start,
                end,
                kind: RunKind::Percent,
            },
            text,
        ));
    });
    let mut pos = input.start;
    let mut pos_at = 0;
    for (run, text) in &units {
        let n = ds.found.len();
        engine.scan_layer(
            &ScanInput::whole(text, input.path),
            scratch,
            &mut ds.found,
            true,
        );
        // Only the key itself: the literals may hold other tokens, which
        // the plain scan reports where they are.
        let mut keep = n;
        for i in n..ds.found.len() {
            if ds.found[i].secret.starts_with("-----BEGIN") {
                ds.found.swap(keep, i);
                keep += 1;
            }
        }
        ds.found.truncate(keep);
        place(
            &mut ds.found[n..],
            data,
            input,
            run,
            &mut pos,
            &mut pos_at,
            Encoding::StringLiterals,
        );
    }

    if engine.decode_depth() > 0 {
        ds.runs.clear();
        find_runs(data, own_lo, own_hi, cap, &mut ds.runs);
        let mut pos = input.start;
        let mut pos_at = 0;
        let mut buf = std::mem::take(&mut ds.buf);
        for ri in 0..ds.runs.len() {
            let run = ds.runs[ri];
            let Some(enc) = decode(&data[run.start..run.end], run.kind, &mut buf) else {
                continue;
            };
            let n = ds.found.len();
            layer(
                engine,
                &buf,
                input.path,
                engine.decode_depth() - 1,
                scratch,
                &mut ds.found,
            );
            place(
                &mut ds.found[n..],
                data,
                input,
                &run,
                &mut pos,
                &mut pos_at,
                enc,
            );
        }
        ds.buf = buf;
    }

    // Drop what a marker on the run's line allows.
    for mut f in ds.found.drain(..) {
        let at = (f.offset - input.base_offset) as usize;
        let line_start = memchr::memrchr(b'\n', &data[at.saturating_sub(lead)..at])
            .map_or(at.saturating_sub(lead), |i| at.saturating_sub(lead) + i + 1);
        let line_end = memchr::memchr(b'\n', &data[at..(at + lead).min(data.len())])
            .map_or((at + lead).min(data.len()), |i| at + i);
        let line = &data[line_start..line_end];
        if f.allowed.is_none()
            && INLINE_MARKERS
                .iter()
                .any(|m| memchr::memmem::find(line, m).is_some())
        {
            if !scratch.keep_allowed {
                scratch.suppressed.inline_allow += 1;
                continue;
            }
            f.allowed = Some("inline allow");
        }
        out.push(f);
    }
    if out.len() > before {
        out[first..].sort_by_key(|f| f.offset);
    }
    scratch.decode = ds;
}

/// Scans decoded `text` and, `levels` more times, what decodes inside it;
/// findings have positions in `text`.
fn layer(
    engine: &Engine,
    text: &[u8],
    path: &str,
    levels: usize,
    scratch: &mut ScanScratch,
    out: &mut Vec<Finding>,
) {
    engine.scan_layer(&ScanInput::whole(text, path), scratch, out, true);
    if levels == 0 {
        return;
    }
    let mut runs = Vec::new();
    find_runs(text, 0, text.len(), usize::MAX, &mut runs);
    let input = ScanInput::whole(text, path);
    let (mut pos, mut pos_at) = (LinePos::START, 0);
    let mut buf = Vec::new();
    for run in runs {
        let Some(enc) = decode(&text[run.start..run.end], run.kind, &mut buf) else {
            continue;
        };
        let n = out.len();
        let inner = std::mem::take(&mut buf);
        layer(engine, &inner, path, levels - 1, scratch, out);
        buf = inner;
        place(
            &mut out[n..],
            text,
            &input,
            &run,
            &mut pos,
            &mut pos_at,
            enc,
        );
    }
}

/// Gives `found` (from the text decoded from `run`) the position of the
/// run in `data`, and records `enc` as their outermost encoding. Runs come
/// in order, so lines are counted once.
fn place(
    found: &mut [Finding],
    data: &[u8],
    input: &ScanInput<'_>,
    run: &Run,
    pos: &mut LinePos,
    pos_at: &mut usize,
    enc: Encoding,
) {
    if found.is_empty() {
        return;
    }
    if run.start < *pos_at {
        (*pos, *pos_at) = (input.start, 0);
    }
    *pos = pos.advance(&data[*pos_at..run.start]);
    *pos_at = run.start;
    let end = pos.advance(&data[run.start..run.end]);
    for f in found {
        f.line = pos.line;
        f.column = pos.column;
        f.end_line = end.line;
        f.end_column = end.column;
        f.offset = input.base_offset + run.start as u64;
        f.end_offset = input.base_offset + run.end as u64;
        f.decoded.insert(0, enc);
    }
}

/// Appends the candidate runs of `data` that start in `lo..hi`, each cut
/// to `cap` bytes, in order of start.
///
/// A run is a maximal sequence of base64-alphabet bytes; it is a candidate
/// if at least [`MIN_BASE64_RUN`] long. Most text is short words, so the
/// pass looks at the byte `MIN_BASE64_RUN - 1` ahead first: if it is not
/// in the alphabet, no candidate starts before it, and the pass jumps over
/// it; it reads every byte only inside long runs.
fn find_runs(data: &[u8], lo: usize, hi: usize, cap: usize, runs: &mut Vec<Run>) {
    const ALPHA: u8 = B64 | STD | URL;
    let n = data.len();
    let hi = hi.min(n);
    let in_alpha = |i: usize| CLASS[data[i] as usize] & ALPHA != 0;
    // A run is only known to start at `i` if `data[i - 1]` is outside the
    // alphabet: skip the tail of a run that crosses `lo`.
    let mut i = lo;
    while i > 0 && i < n && in_alpha(i - 1) {
        i += 1;
    }
    // Invariant: `i == lo` or `data[i - 1]` is outside the alphabet, and
    // every candidate starting before `i` is pushed.
    while i < hi {
        let probe = i + MIN_BASE64_RUN - 1;
        if probe >= n {
            break;
        }
        if !in_alpha(probe) {
            i = probe + 1;
            continue;
        }
        let mut start = probe;
        while start > i && in_alpha(start - 1) {
            start -= 1;
        }
        let mut end = probe + 1;
        while end < n && in_alpha(end) {
            end += 1;
        }
        i = end + 1;
        if end - start < MIN_BASE64_RUN || start >= hi {
            continue;
        }
        let core = end.min(start.saturating_add(cap));
        let (mut all, mut any) = (HEX, 0);
        for &b in &data[start..core] {
            let c = CLASS[b as usize];
            all &= c;
            any |= c;
        }
        // Padding, unless the run was cut.
        let mut stop = core;
        if core == end {
            while stop < n && stop < end + 2 && stop - start < cap && data[stop] == b'=' {
                stop += 1;
            }
        }
        runs.push(Run {
            start,
            end: stop,
            kind: RunKind::Base64 {
                std: any & STD != 0,
                url: any & URL != 0,
                hex: all & HEX != 0 && stop == end && core - start >= MIN_HEX_RUN,
            },
        });
    }
    find_percent_runs(data, lo, hi, cap, runs);
}

/// Appends the percent candidates: maximal runs of URL bytes that start in
/// `lo..hi` and hold a `%XX` escape in their first `cap` bytes. Found from
/// the `%` bytes, so text without escapes costs one memchr.
fn find_percent_runs(data: &[u8], lo: usize, hi: usize, cap: usize, runs: &mut Vec<Run>) {
    let n = data.len();
    let in_url = |i: usize| CLASS[data[i] as usize] & PCT != 0;
    let first = runs.len();
    let scan_end = n.min(hi.saturating_add(cap));
    let mut last_start = usize::MAX;
    // A position inside a run known to start more than `cap` before it: an
    // escape whose back-scan reaches it is as far from its run's start, so
    // a long run of escapes costs one scan, not one per `%`.
    let mut floor = usize::MAX;
    let mut from = lo.min(scan_end);
    while let Some(k) = memchr::memchr(b'%', &data[from..scan_end]) {
        let p = from + k;
        from = p + 1;
        if !(p + 2 < n && data[p + 1].is_ascii_hexdigit() && data[p + 2].is_ascii_hexdigit()) {
            continue;
        }
        let mut start = p;
        let mut far = false;
        while start > 0 && in_url(start - 1) {
            if p - start >= cap || start == floor {
                far = true;
                break;
            }
            start -= 1;
        }
        // The run starts more than `cap` before this escape (or before
        // the buffer, for a chunk that does not own it), or is done.
        if far {
            floor = p;
            continue;
        }
        if start == last_start || start < lo || start >= hi {
            continue;
        }
        let limit = n.min(start.saturating_add(cap));
        let mut end = p;
        while end < limit && in_url(end) {
            end += 1;
        }
        if end == limit && end < n && in_url(end) {
            floor = end - 1;
        }
        if p + 2 >= end {
            continue;
        }
        last_start = start;
        if end - start >= MIN_DECODED {
            runs.push(Run {
                start,
                end,
                kind: RunKind::Percent,
            });
        }
        from = from.max(end);
    }
    if first > 0 && runs.len() > first {
        runs.sort_by_key(|r| r.start);
    }
}

/// Decodes `run` into `buf` if it is printable text of at least
/// [`MIN_DECODED`] bytes; returns how it was encoded.
fn decode(run: &[u8], kind: RunKind, buf: &mut Vec<u8>) -> Option<Encoding> {
    buf.clear();
    match kind {
        RunKind::Base64 { std, url, hex } => {
            if hex && run.len().is_multiple_of(2) && decode_hex(run, buf) {
                return Some(Encoding::Hex);
            }
            if std && url {
                return None;
            }
            buf.clear();
            if decode_base64(run, buf) {
                return Some(if url {
                    Encoding::Base64Url
                } else {
                    Encoding::Base64
                });
            }
            None
        }
        RunKind::Percent => decode_percent(run, buf).then_some(Encoding::Percent),
    }
}

/// Text we rescan: printable ASCII and whitespace; bytes >= 0x80 are
/// checked as UTF-8 at the end.
fn text_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\r' || b == b'\t' || b >= 0x80
}

fn finish_text(buf: &[u8]) -> bool {
    buf.len() >= MIN_DECODED && (buf.is_ascii() || std::str::from_utf8(buf).is_ok())
}

fn decode_hex(run: &[u8], buf: &mut Vec<u8>) -> bool {
    let val = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
    for p in run.chunks_exact(2) {
        let b = val(p[0]) << 4 | val(p[1]);
        if !text_byte(b) {
            return false;
        }
        buf.push(b);
    }
    finish_text(buf)
}

static B64_VAL: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut i = 0;
    while i < 62 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t[b'+' as usize] = 62;
    t[b'-' as usize] = 62;
    t[b'/' as usize] = 63;
    t[b'_' as usize] = 63;
    t
};

fn decode_base64(run: &[u8], buf: &mut Vec<u8>) -> bool {
    let body = &run[..run.len() - run.iter().rev().take_while(|&&c| c == b'=').count()];
    // A trailing single sextet carries no whole byte.
    let body = if body.len() % 4 == 1 {
        &body[..body.len() - 1]
    } else {
        body
    };
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in body {
        let v = B64_VAL[c as usize];
        if v == 0xff {
            return false;
        }
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            let b = (acc >> bits) as u8;
            if !text_byte(b) {
                return false;
            }
            buf.push(b);
        }
    }
    finish_text(buf)
}

fn decode_percent(run: &[u8], buf: &mut Vec<u8>) -> bool {
    let mut i = 0;
    while i < run.len() {
        let c = run[i];
        if c == b'%' && i + 2 < run.len() {
            if let (Some(h), Some(l)) = (
                (run[i + 1] as char).to_digit(16),
                (run[i + 2] as char).to_digit(16),
            ) {
                let b = (h << 4 | l) as u8;
                if !text_byte(b) {
                    return false;
                }
                buf.push(b);
                i += 3;
                continue;
            }
        }
        buf.push(c);
        i += 1;
    }
    finish_text(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(data: &[u8]) -> Vec<(String, RunKind)> {
        let mut v = Vec::new();
        find_runs(data, 0, data.len(), 1 << 20, &mut v);
        v.iter()
            .map(|r| {
                (
                    String::from_utf8_lossy(&data[r.start..r.end]).into_owned(),
                    r.kind,
                )
            })
            .collect()
    }

    #[test]
    fn candidates() {
        let r = runs(b"x = \"aGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl\"; short=abc; h=68656c6c6f20776f726c642c2068656c6c6f; p=a%3Db%26c%3Dhello+world+again");
        let texts: Vec<&str> = r.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "aGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl",
                "68656c6c6f20776f726c642c2068656c6c6f",
                "p=a%3Db%26c%3Dhello+world+again"
            ]
        );
        assert_eq!(
            r[1].1,
            RunKind::Base64 {
                std: false,
                url: false,
                hex: true
            }
        );
    }

    /// A percent run longer than `cap`: one candidate, cut to `cap`, and
    /// escapes beyond it do not each scan back over the run.
    #[test]
    fn long_percent_run() {
        let data = format!("x {} y", "a%41".repeat(10_000));
        let mut v = Vec::new();
        find_runs(data.as_bytes(), 0, data.len(), 64, &mut v);
        let pct: Vec<(usize, usize)> = v
            .iter()
            .filter(|r| r.kind == RunKind::Percent)
            .map(|r| (r.start, r.end))
            .collect();
        assert_eq!(pct, [(2, 66)]);
    }

    #[test]
    fn decoders() {
        let mut buf = Vec::new();
        assert_eq!(
            decode(
                b"aGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl",
                RunKind::Base64 {
                    std: false,
                    url: false,
                    hex: false
                },
                &mut buf
            ),
            Some(Encoding::Base64)
        );
        assert_eq!(buf, b"hello world, hello there");
        assert_eq!(
            decode(
                b"68656c6c6f20776f726c642c2068656c6c6f",
                RunKind::Base64 {
                    std: false,
                    url: false,
                    hex: true
                },
                &mut buf
            ),
            Some(Encoding::Hex)
        );
        assert_eq!(buf, b"hello world, hello");
        assert_eq!(
            decode(b"a%3Db%26c%3Dhello+world+again", RunKind::Percent, &mut buf),
            Some(Encoding::Percent)
        );
        assert_eq!(buf, b"a=b&c=hello+world+again");
        // A git hash decodes to binary either way.
        assert_eq!(
            decode(
                b"da39a3ee5e6b4b0d3255bfef95601890afd80709",
                RunKind::Base64 {
                    std: false,
                    url: false,
                    hex: true
                },
                &mut buf
            ),
            None
        );
        // Too short once decoded.
        assert_eq!(
            decode(
                b"aGVsbG8gd29ybGQ",
                RunKind::Base64 {
                    std: false,
                    url: false,
                    hex: false
                },
                &mut buf
            ),
            None
        );
    }
}
