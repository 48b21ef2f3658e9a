//! Decode and rescan: secrets hidden in base64, hex or percent-encoded
//! text, and private keys written as several source string literals.
//!
//! # The pass, step by step
//!
//! After the plain scan of a buffer ([`Engine::scan`](crate::Engine::scan)):
//!
//! 1. Split literals (`src/literals.rs`), if the plain scan met the
//!    `-----begin` marker keyword: each `-----BEGIN` right after a
//!    quote starts a sequence of string literals joined by whitespace, `+`,
//!    `.` or a `\` line continuation; if there are two or more and their
//!    unescaped contents hold `-----END`, the contents are scanned and the
//!    findings that start with `-----BEGIN` are kept.
//! 2. Candidates (when the depth is at least 1): one pass of a 256-entry
//!    byte-class table finds maximal runs of the base64 alphabets
//!    (`A-Za-z0-9+/` or `A-Za-z0-9-_`, then up to two `=`) at least
//!    [`MIN_BASE64_RUN`] long whose first decoded byte may start text,
//!    and, only if the plain scan met the `%` marker keyword, runs of URL
//!    bytes holding a `%XX` escape. No byte outside a candidate is
//!    decoded. Base64 wrapped over lines is one candidate, from its first
//!    line, decoded without the breaks, and a run goes on over `\/`
//!    escapes ([`crate::wrap`]).
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
//!    starts drops them (counted as inline allows). A percent-decoded
//!    finding of a rule that the plain scan already reported inside the same
//!    run, with the same secret read again (one holds the other unescaped),
//!    is dropped as a duplicate: the URL read twice (a password holding
//!    `%40` is reported as written, and cut short at the decoded `@`); so
//!    is one whose secret a base64 or hex run inside the percent run
//!    reports as it stands ([`drop_read_again`]).
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

use crate::{Finding, LinePos, ScanInput, ScanScratch, INLINE_MARKERS};

/// Default for [`EngineBuilder::decode_depth`](crate::EngineBuilder::decode_depth).
pub const DEFAULT_DEPTH: usize = 2;
/// The most layers [`EngineBuilder::decode_depth`](crate::EngineBuilder::decode_depth)
/// takes: each layer is a frame of recursion, and a percent escape nested
/// thousands of times (`%2525...41`) overflowed a worker's stack.
pub const MAX_DEPTH: usize = 32;
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
#[derive(Clone, Copy, Debug, PartialEq)]
struct Run {
    start: usize,
    end: usize,
    kind: RunKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum RunKind {
    /// Base64 alphabet bytes (then up to two `=`); `whole`: not cut to
    /// `cap`. Whether it is hex, standard or URL-safe is read when it is
    /// decoded: most candidates fail on their first bytes and never need
    /// it.
    Base64 { whole: bool },
    /// URL bytes holding a `%XX` escape; `whole`: not cut to `cap`.
    Percent { whole: bool },
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

/// What the decode pass needs of the engine that runs it. The pass is a
/// step of [`Engine::scan`](crate::Engine::scan) that scans decoded text
/// with the same engine; [`Engine`](crate::Engine), the one implementation,
/// is reached through this trait so that `decode` does not depend on
/// `engine`, which calls [`rescan`].
pub(crate) trait LayerScanner {
    /// Longest `max_len` (`LEAD`, see the engine's module docs, "Chunks").
    fn lead(&self) -> usize;
    /// True when the global allowlist allows `path` by itself.
    fn path_allowlisted(&self, path: &str) -> bool;
    /// Layers of encoding decoded, at most.
    fn decode_depth(&self) -> usize;
    /// One scan of `input.data` as it is. `nested`: the data is decoded
    /// text, not a file, so path-only rules do not report it.
    fn scan_layer(
        &self,
        input: &ScanInput<'_>,
        scratch: &mut ScanScratch,
        out: &mut Vec<Finding>,
        nested: bool,
    );
}

/// The decode pass of [`Engine::scan`](crate::Engine::scan): appends the
/// findings of decoded text owned by this chunk to `out`, then orders
/// `out[first..]` by offset.
pub(crate) fn rescan<E: LayerScanner>(
    engine: &E,
    input: &ScanInput<'_>,
    scratch: &mut ScanScratch,
    out: &mut Vec<Finding>,
    first: usize,
    focus: Option<&[std::ops::Range<usize>]>,
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
    // Only where the plain scan, which reads every byte anyway, met the
    // `-----begin` keyword: searching every buffer for it again cost 2% of
    // all the scan's instructions on source code.
    let mut units: Vec<(Run, Vec<u8>)> = Vec::new();
    // Markers of this buffer, before scans of decoded text replace them.
    let percent = scratch.percent_seen;
    // With a focus, the sequences and runs that meet it: a sequence is read
    // over at most `cap` bytes, so it starts at most that far before a
    // range of the focus; the focus scan met no marker outside its windows,
    // so the searches for `-----BEGIN` and `%` below stand in for the
    // markers.
    let mut push_unit = |start, end, text| {
        units.push((
            Run {
                start,
                end,
                kind: RunKind::Percent { whole: true },
            },
            text,
        ));
    };
    match focus {
        None if scratch.begin_seen => crate::literals::find(data, own_lo, own_hi, cap, push_unit),
        None => {}
        Some(zones) => {
            // Where the sequences meeting each range start, those that
            // overlap merged: each sequence is found once.
            let mut starts: Vec<std::ops::Range<usize>> = zones
                .iter()
                .map(|f| f.start.saturating_sub(cap)..f.end)
                .collect();
            starts.dedup_by(|b, a| {
                let joined = b.start <= a.end;
                a.end = if joined { a.end.max(b.end) } else { a.end };
                joined
            });
            for r in starts {
                crate::literals::find(data, r.start, r.end, cap, &mut push_unit);
            }
        }
    }
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
        match focus {
            None => find_runs(data, own_lo, own_hi, cap, percent, &mut ds.runs),
            Some(zones) => focus_runs(data, zones, cap, &mut ds.runs),
        }
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
            if matches!(run.kind, RunKind::Percent { .. }) && ds.found.len() > n {
                drop_read_again(
                    engine,
                    data,
                    &run,
                    cap,
                    input.path,
                    scratch,
                    &mut ds.found,
                    n,
                );
            }
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

    if let Some(zones) = focus {
        ds.found.retain(|f| {
            zones
                .iter()
                .any(|z| f.end_offset > z.start as u64 && f.offset < z.end as u64)
        });
    }
    // Drop what a marker on the run's line allows.
    for mut f in ds.found.drain(..) {
        // A percent-decoded run is the same URL read again: where the plain
        // scan already reported this rule inside the run, the decoded
        // reading repeats it, worse (`%40` decoded to `@` ends a password
        // early). The same secret read again, that is: one holding the
        // other once unescaped. Another secret of the rule in the same run
        // is no repeat of it.
        if f.decoded.first() == Some(&Encoding::Percent)
            && out[first..before].iter().any(|p| {
                p.rule_id == f.rule_id
                    && p.offset < f.end_offset
                    && f.offset < p.end_offset
                    && reads_again(&p.secret, &f.secret)
            })
        {
            scratch.suppressed.duplicate += 1;
            continue;
        }
        // Every finding of a run has the run's position: the same secret
        // twice in it (or at two depths) would be two identical findings.
        if out[first..].iter().any(|p| {
            p.rule_id == f.rule_id
                && p.offset == f.offset
                && p.end_offset == f.end_offset
                && p.fingerprint == f.fingerprint
        }) {
            scratch.suppressed.duplicate += 1;
            continue;
        }
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

/// Drops `found[from..]` (the findings of the percent run `run`) that a
/// base64 or hex run inside it reports as it stands in `data`: the same
/// text read twice, once through the percent escapes (a base64 query
/// parameter, whose `%2B`, `%2F` and `%3D` escapes end the run read as it
/// stands, holding the secret all the same). They count as duplicates. The
/// inner runs are decoded here rather than taken from this chunk's runs,
/// which lack one that the next chunk owns: each chunk drops the same.
#[allow(clippy::too_many_arguments)]
fn drop_read_again<E: LayerScanner>(
    engine: &E,
    data: &[u8],
    run: &Run,
    cap: usize,
    path: &str,
    scratch: &mut ScanScratch,
    found: &mut Vec<Finding>,
    from: usize,
) {
    let mut inner = Vec::new();
    find_runs(data, run.start, run.end, cap, false, &mut inner);
    // Their candidates are counted where the inner runs are scanned.
    let counts = scratch.suppressed.clone();
    let (mut seen, mut buf) = (Vec::new(), Vec::new());
    for r in inner {
        if decode(&data[r.start..r.end], r.kind, &mut buf).is_some() {
            layer(
                engine,
                &buf,
                path,
                engine.decode_depth() - 1,
                scratch,
                &mut seen,
            );
        }
    }
    scratch.suppressed = counts;
    let before = found.len();
    let tail = found.split_off(from);
    found.extend(tail.into_iter().filter(|f| {
        !seen
            .iter()
            .any(|s| s.rule_id == f.rule_id && s.fingerprint == f.fingerprint)
    }));
    scratch.suppressed.duplicate += (before - found.len()) as u64;
}

/// Scans decoded `text` and, `levels` more times, what decodes inside it;
/// findings have positions in `text`.
fn layer<E: LayerScanner>(
    engine: &E,
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
    let percent = scratch.percent_seen;
    find_runs(text, 0, text.len(), usize::MAX, percent, &mut runs);
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
/// if at least [`MIN_BASE64_RUN`] long and its first decoded byte, as hex
/// or base64, may start text ([`first_byte_is_text`]). The percent
/// candidates follow if `percent` (the plain scan met a `%` in `data`:
/// without one there is none). Most text is short words, so the
/// pass looks at the byte `MIN_BASE64_RUN - 1` ahead first: if it is not
/// in the alphabet, no candidate starts before it, and the pass jumps over
/// it; it reads every byte only inside long runs. Where AVX2 is available
/// it first skips, 64 bytes at a time, to the next run that is long
/// enough ([`skip_short_runs`]).
fn find_runs(data: &[u8], lo: usize, hi: usize, cap: usize, percent: bool, runs: &mut Vec<Run>) {
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
    #[cfg(target_arch = "x86_64")]
    let wide = std::is_x86_feature_detected!("avx2");
    while i < hi {
        // A run of `MIN_BASE64_RUN` alphabet bytes known to start at `i`.
        let mut found = false;
        #[cfg(target_arch = "x86_64")]
        if wide {
            // SAFETY: AVX2 is available (checked above).
            (i, found) = unsafe { skip_short_runs(data, i, hi) };
            if i >= hi {
                break;
            }
        }
        let probe = i + MIN_BASE64_RUN - 1;
        let mut start = i;
        if !found {
            if probe >= n {
                break;
            }
            if !in_alpha(probe) {
                i = probe + 1;
                continue;
            }
            start = probe;
            while start > i && in_alpha(start - 1) {
                start -= 1;
            }
        }
        let mut end = probe + 1;
        while end < n && in_alpha(end) {
            end += 1;
        }
        // A run goes on over `\/` escapes (see `wrap`).
        let alpha = |b: u8| CLASS[b as usize] & ALPHA != 0;
        let joined = crate::wrap::slash_start(data, start, cap, alpha);
        let end = crate::wrap::slash_end(
            data,
            end,
            joined.unwrap_or(start).saturating_add(cap),
            alpha,
        );
        i = end + 1;
        let Some(mut start) = joined else {
            continue;
        };
        // After a `\n`, `\r` or `\t` escape (base64 wrapped inside a JSON or
        // source string), the escape's letter is not part of the run: read
        // from it, every line but the first would decode misaligned. The run
        // still belongs to the chunk that owns its first alphabet byte.
        let owner = start;
        if start > 0 && data[start - 1] == b'\\' && matches!(data[start], b'n' | b'r' | b't') {
            start += 1;
        }
        if end - start < MIN_BASE64_RUN
            || owner < lo
            || owner >= hi
            || !first_byte_is_text(&data[start..end])
        {
            continue;
        }
        // Base64 wrapped over lines is one run, from its first line (see
        // `wrap`): a line that continues another starts none.
        let max = crate::wrap::max_width(cap);
        if crate::wrap::continues(data, start, end, max, alpha) {
            continue;
        }
        let end = crate::wrap::block_end(data, start, end, cap, max, alpha);
        i = end + 1;
        let core = end.min(start.saturating_add(cap));
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
            kind: RunKind::Base64 { whole: core == end },
        });
    }
    if percent {
        find_percent_runs(data, lo, hi, cap, runs);
    }
}

/// The candidate runs of [`find_runs`] over a whole buffer that meet one
/// of `zones` (ascending, disjoint; and a few that end just before one),
/// in the same order, each once.
///
/// A base64 run is a maximal run of the alphabet (then up to two `=`), so
/// one that meets a zone and starts before it is the one holding the
/// zone's first byte: the search starts where that run starts (found by
/// walking back over at most `cap` bytes: a run that starts further back
/// is cut before the zone). A percent run starts at most `cap` before
/// its end; [`find_percent_runs`] gives the same runs from any `lo`. Runs
/// found from two zones are kept once.
fn focus_runs(data: &[u8], zones: &[std::ops::Range<usize>], cap: usize, runs: &mut Vec<Run>) {
    const ALPHA: u8 = B64 | STD | URL;
    let in_alpha = |i: usize| CLASS[data[i] as usize] & ALPHA != 0;
    let first = runs.len();
    for focus in zones {
        let mut lo = focus.start;
        let mut pad = 0;
        while pad < 2 && lo > 0 && data[lo - 1] == b'=' {
            lo -= 1;
            pad += 1;
        }
        let floor = focus.start.saturating_sub(cap + 2);
        while lo > floor && in_alpha(lo - 1) {
            lo -= 1;
        }
        let alpha = |b: u8| CLASS[b as usize] & ALPHA != 0;
        lo = crate::wrap::slash_start(data, lo, cap, alpha).unwrap_or(lo);
        lo = crate::wrap::block_start(data, lo, floor, crate::wrap::max_width(cap), alpha);
        find_runs(data, lo, focus.end, cap, false, runs);
    }
    // A run starts where no other does.
    runs[first..].sort_by_key(|r| r.start);
    dedup_from(runs, first);
    runs.append(&mut focus_percent_runs(data, zones, cap));
    // Sorted with the base64 runs as `find_runs` sorts them (stable: a
    // base64 run before a percent run at the same start).
    runs[first..].sort_by_key(|r| r.start);
}

/// The percent-encoded runs that the focused decode pass reads for `zones`
/// ([`rescan`] with a focus): those of [`focus_runs`], without its search
/// for base64 and hex runs.
pub(crate) fn percent_runs(
    data: &[u8],
    zones: &[std::ops::Range<usize>],
    cap: usize,
) -> Vec<std::ops::Range<usize>> {
    focus_percent_runs(data, zones, cap)
        .into_iter()
        .map(|r| r.start..r.end)
        .collect()
}

/// The percent runs of [`focus_runs`], ascending: those starting in `floor..zone.end` for a
/// zone, found by one search over each group of zones whose searches (`cap` past the end)
/// overlap, then kept as each zone's own search would have.
fn focus_percent_runs(data: &[u8], zones: &[std::ops::Range<usize>], cap: usize) -> Vec<Run> {
    let starts = |z: &std::ops::Range<usize>| z.start.saturating_sub(cap + 2)..z.end;
    let mut percent = Vec::new();
    let mut i = 0;
    while i < zones.len() {
        let mut j = i + 1;
        while j < zones.len() && starts(&zones[j]).start <= zones[j - 1].end.saturating_add(cap) {
            j += 1;
        }
        let from = percent.len();
        find_percent_runs(
            data,
            starts(&zones[i]).start,
            zones[j - 1].end,
            cap,
            &mut percent,
        );
        let group = &zones[i..j];
        let mut kept = from;
        for k in from..percent.len() {
            let at = percent[k].start;
            let z = group.partition_point(|z| z.end <= at);
            if group.get(z).is_some_and(|z| starts(z).contains(&at)) {
                percent[kept] = percent[k];
                kept += 1;
            }
        }
        percent.truncate(kept);
        i = j;
    }
    percent.sort_by_key(|r| (r.start, r.end));
    percent.dedup();
    percent
}

/// Drops the runs of `runs[from..]` equal to the one before them.
fn dedup_from(runs: &mut Vec<Run>, from: usize) {
    let mut tail = runs.split_off(from);
    tail.dedup();
    runs.append(&mut tail);
}

/// Whether `run` (alphabet bytes, at least 2) decodes to a first byte
/// that may start text, as hex or as base64: [`decode`] stops at that
/// byte otherwise. Most runs in source code are identifiers and paths,
/// which fail here for the price of four table lookups, without a call.
fn first_byte_is_text(run: &[u8]) -> bool {
    let hex = |c: u8| (c as char).to_digit(16).map(|v| v as u8);
    if let (Some(h), Some(l)) = (hex(run[0]), hex(run[1])) {
        if TextGate::default().accept(h << 4 | l) {
            return true;
        }
    }
    TextGate::default().accept(B64_VAL[run[0] as usize] << 2 | B64_VAL[run[1] as usize] >> 4)
}

/// `(start, true)`: the start of the first run of at least
/// [`MIN_BASE64_RUN`] alphabet bytes that starts at or after `i` (which
/// must satisfy `find_runs`' invariant: `data[i - 1]` is outside the
/// alphabet, or no run of interest starts before `i`). Else `(p, false)`:
/// `p >= hi` when no such run starts before `hi`, or, within 64 bytes of
/// the end, a position from which `find_runs` goes on byte by byte (with
/// the same invariant).
///
/// Per 64-byte block, two tests:
///
/// 1. Coarse, every block: the block's sixteen 4-byte groups (counted from
///    `i`) that are all alphabet bytes, as a bit mask. A run of 22 bytes
///    holds four whole groups in a row (its first group starts at most 3
///    bytes in, and `(22 - 3) / 4 = 4`), so a block where no four in a row
///    end (counting the three groups at the top of the block before) ends
///    no run's first 22 bytes either, nor does the block after it. Source
///    code fails it in most blocks: its words are shorter than 19 bytes.
/// 2. Exact, only on a block that passed the coarse test and the block
///    after it: a bit mask of the alphabet bytes, then the windows of
///    `MIN_BASE64_RUN` ones in it by doubling shifts; a run crossing into
///    the block is found from the alphabet bytes right before it, counted
///    back byte by byte (fewer than `MIN_BASE64_RUN`, or they would have
///    ended a window already).
///
/// About 0.8 instruction a byte on source code, where testing every block
/// exactly took 1.1 and the byte-by-byte probe three or four (identifiers
/// make the probe land in a word most of the time).
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn skip_short_runs(data: &[u8], i: usize, hi: usize) -> (usize, bool) {
    let n = data.len();
    // Alphabet bytes right before `at`, from `i` on.
    let tail = |at: usize| {
        let mut c = 0;
        while at - c > i && CLASS[data[at - c - 1] as usize] & (B64 | STD | URL) != 0 {
            c += 1;
        }
        c
    };
    // Bit `k` set iff four whole groups in a row end with group `k` of the
    // block; `groups` are the block's, `prev` those of the block before.
    let fours = |groups: u32, prev: u32| {
        let g = groups << 3 | prev >> 13;
        let g2 = g & (g >> 1);
        g2 & (g2 >> 2)
    };
    // SAFETY: the callers check `at + 64 <= n`.
    let block = |at: usize| -> &[u8; 64] { unsafe { &*data.as_ptr().add(at).cast() } };
    let mut base = i;
    // Whole groups of the block before (none before `i`).
    let mut prev = 0u32;
    // Test this block exactly, not only coarsely.
    let mut exact = false;
    // The alphabet bytes of the block before, if it was tested exactly.
    let mut prev_mask: Option<u64> = None;
    while base + 64 <= n {
        if !exact {
            // The hot loop: the coarse test alone.
            let end = hi.min(n - 63);
            while base < end {
                let groups = whole_groups(block(base));
                if fours(groups, prev) != 0 {
                    exact = true;
                    break;
                }
                prev = groups;
                prev_mask = None;
                base += 64;
            }
            if !exact {
                if base + 64 > n {
                    break;
                }
                // Past `hi`: done, unless a run from before it goes on.
                let start = base - tail(base);
                if start >= hi {
                    return (start, false);
                }
            }
        }
        let (outside, groups) = classify(block(base));
        // A window that ends in the next block and starts before byte 48
        // here covers the last four groups; one that starts after it ends
        // its four groups there, and the next block passes the coarse test.
        let late = groups >> 12 == 0xf;
        prev = groups;
        let m = !outside;
        // The block before is not all alphabet bytes, or it would have
        // ended a window.
        let carry = match prev_mask {
            Some(p) if base > i => p.leading_ones() as usize,
            _ => tail(base),
        };
        prev_mask = Some(m);
        if carry + m.trailing_ones() as usize >= MIN_BASE64_RUN {
            return (base - carry, true);
        }
        let w = windows_of_min_run(m);
        if w != 0 {
            // Bits below the first window, not all ones (else the run
            // would have crossed in from the previous block, above).
            let k = w.trailing_zeros();
            let zeros = !m & ((1u64 << k) - 1);
            return (base + 64 - zeros.leading_zeros() as usize, true);
        }
        exact = late;
        base += 64;
    }
    (base - tail(base), false)
}

/// Bit `k` set iff bits `k..k + MIN_BASE64_RUN` of `m` are all set.
#[cfg(target_arch = "x86_64")]
fn windows_of_min_run(m: u64) -> u64 {
    const _: () = assert!(MIN_BASE64_RUN == 22);
    let two = m & (m >> 1);
    let four = two & (two >> 2);
    let eight = four & (four >> 4);
    let sixteen = eight & (eight >> 8);
    sixteen & (eight >> 14)
}

/// Bit `k` set iff `block[k]` is in the base64 alphabets (`CLASS` has
/// `B64 | STD | URL`).
#[cfg(all(test, target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
fn alphabet_mask(block: &[u8; 64]) -> u64 {
    !classify(block).0
}

/// `block`'s bytes outside the base64 alphabets (bit `k` for `block[k]`),
/// and its 4-byte groups that are all in them (bit `j` for
/// `block[4j..4j + 4]`).
///
/// Two nibble lookups (`vpshufb`): the high nibble picks one of five sets
/// of low nibbles (`NIBBLE_HI`), the low nibble says which sets hold it
/// (`NIBBLE_LO`); a byte is in the alphabet iff both share a bit. Bytes
/// `0x80` and up get 0 from both. Eight instructions a half, where range
/// compares took sixteen.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn classify(block: &[u8; 64]) -> (u64, u32) {
    use std::arch::x86_64::*;
    let (lo_table, hi_table) = nibble_tables();
    let low4 = _mm256_set1_epi8(0x0f);
    let zero = _mm256_setzero_si256();
    let half = |h: &[u8; 32]| -> (u64, u32) {
        // SAFETY: `h` is 32 readable bytes; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(h.as_ptr().cast()) };
        let lo = _mm256_shuffle_epi8(lo_table, v);
        let hi = _mm256_shuffle_epi8(hi_table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
        let outside = _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi), zero);
        let whole = _mm256_castsi256_ps(_mm256_cmpeq_epi32(outside, zero));
        (
            _mm256_movemask_epi8(outside) as u32 as u64,
            _mm256_movemask_ps(whole) as u32,
        )
    };
    let (lo, hi) = block.split_at(32);
    let (o0, g0) = half(lo.try_into().unwrap());
    let (o1, g1) = half(hi.try_into().unwrap());
    (o0 | o1 << 32, g0 | g1 << 8)
}

/// The groups of [`classify`] alone: the hot loop of [`skip_short_runs`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn whole_groups(block: &[u8; 64]) -> u32 {
    use std::arch::x86_64::*;
    let (lo_table, hi_table) = nibble_tables();
    let zero = _mm256_setzero_si256();
    let half = |h: &[u8; 32]| -> u32 {
        // SAFETY: `h` is 32 readable bytes; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(h.as_ptr().cast()) };
        let inside = _mm256_and_si256(
            _mm256_shuffle_epi8(lo_table, v),
            _mm256_shuffle_epi8(
                hi_table,
                _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f)),
            ),
        );
        // A group is whole iff none of its bytes is 0 in `inside`.
        let outside = _mm256_cmpeq_epi8(inside, zero);
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(outside, zero))) as u32
    };
    let (lo, hi) = block.split_at(32);
    half(lo.try_into().unwrap()) | half(hi.try_into().unwrap()) << 8
}

/// [`NIBBLE_LO`] and [`NIBBLE_HI`] in both lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn nibble_tables() -> (std::arch::x86_64::__m256i, std::arch::x86_64::__m256i) {
    use std::arch::x86_64::*;
    // SAFETY (both loads): 16 readable bytes, unaligned loads.
    unsafe {
        (
            _mm256_broadcastsi128_si256(_mm_loadu_si128(NIBBLE_LO.as_ptr().cast())),
            _mm256_broadcastsi128_si256(_mm_loadu_si128(NIBBLE_HI.as_ptr().cast())),
        )
    }
}

/// The alphabet by high nibble: `2`: `+ - /` (low `B D F`); `3`: digits
/// (`0`-`9`); `4` and `6`: letters (`1`-`F`); `5`: `P`-`Z` and `_` (`0`-`A`,
/// `F`); `7`: `p`-`z` (`0`-`A`). One bit per set of low nibbles.
#[cfg(target_arch = "x86_64")]
const NIBBLE_HI: [u8; 16] = [0, 0, 1, 2, 4, 8, 4, 16, 0, 0, 0, 0, 0, 0, 0, 0];

/// For each low nibble, the sets of [`NIBBLE_HI`] that hold it.
#[cfg(target_arch = "x86_64")]
const NIBBLE_LO: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut l = 0;
    while l < 16 {
        let mut v = 0;
        if l == 0xb || l == 0xd || l == 0xf {
            v |= 1;
        }
        if l <= 9 {
            v |= 2;
        }
        if l >= 1 {
            v |= 4;
        }
        if l <= 0xa || l == 0xf {
            v |= 8;
        }
        if l <= 0xa {
            v |= 16;
        }
        t[l] = v;
        l += 1;
    }
    t
};

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
        let whole = !(end == limit && end < n && in_url(end));
        if !whole {
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
                kind: RunKind::Percent { whole },
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
        RunKind::Base64 { whole } => {
            // Wrapped lines (`wrap`), without their breaks. Where one is
            // not base64 of text (a token on the line after a base64 line),
            // the text is that of the whole lines before it.
            if let Some(joined) = crate::wrap::unwrap(run) {
                let got = decode(&joined, kind, buf);
                let width = crate::wrap::first_break(run).unwrap_or(run.len());
                let keep = buf.len() * 4 / 3 / width * width;
                if got.is_some() || keep < MIN_BASE64_RUN || keep >= joined.len() {
                    return got;
                }
                return decode(&joined[..keep], RunKind::Base64 { whole: false }, buf);
            }
            let class = |bit: u8| run.iter().map(move |&b| CLASS[b as usize] & bit);
            // A run cut to `cap` is hex over its first `cap` bytes too.
            if run.len() >= MIN_HEX_RUN
                && run.len().is_multiple_of(2)
                && class(HEX).all(|c| c != 0)
                && decode_hex(run, whole, buf)
            {
                return Some(Encoding::Hex);
            }
            buf.clear();
            if !decode_base64(run, whole, buf) {
                return None;
            }
            // A run with both `+/` and `-_` is neither alphabet.
            let std = class(STD).any(|c| c != 0);
            let url = class(URL).any(|c| c != 0);
            match (std, url) {
                (true, true) => None,
                (_, true) => Some(Encoding::Base64Url),
                _ => Some(Encoding::Base64),
            }
        }
        RunKind::Percent { whole } => decode_percent(run, whole, buf).then_some(Encoding::Percent),
    }
}

/// Text we rescan: printable ASCII, whitespace and UTF-8, byte by byte.
/// Bytes >= 0x80 that cannot be UTF-8 here (a continuation byte where
/// none is due, a lead byte where one is, `C0`, `C1`, `F5`-`FF`) stop the
/// decoder at once: base64 of an identifier decodes to bytes >= 0x80 half
/// the time, and waiting for the final UTF-8 check decoded it all.
/// [`finish_text`] still checks the whole text, so this only stops early
/// what that check would refuse.
#[derive(Default)]
struct TextGate {
    /// Continuation bytes still due.
    due: u8,
}

impl TextGate {
    fn accept(&mut self, b: u8) -> bool {
        if self.due > 0 {
            self.due -= 1;
            return (0x80..0xc0).contains(&b);
        }
        match b {
            0x20..0x7f | b'\n' | b'\r' | b'\t' => true,
            0xc2..0xe0 => {
                self.due = 1;
                true
            }
            0xe0..0xf0 => {
                self.due = 2;
                true
            }
            0xf0..0xf5 => {
                self.due = 3;
                true
            }
            _ => false,
        }
    }
}

/// Whether the decoded `buf` is text to rescan. `whole`: the run was not cut
/// to `cap`; one that was may end inside a character (CJK text, an emoji),
/// and its text ends before that character (`gate` knows one is due).
fn finish_text(buf: &mut Vec<u8>, gate: &TextGate, whole: bool) -> bool {
    if gate.due > 0 && !whole {
        while buf.pop().is_some_and(|b| (0x80..0xc0).contains(&b)) {}
    }
    buf.len() >= MIN_DECODED && (buf.is_ascii() || std::str::from_utf8(buf).is_ok())
}

/// `whole`: the run was not cut to `cap` (see [`RunKind::Base64`]).
fn decode_hex(run: &[u8], whole: bool, buf: &mut Vec<u8>) -> bool {
    let val = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
    let mut gate = TextGate::default();
    for p in run.chunks_exact(2) {
        let b = val(p[0]) << 4 | val(p[1]);
        if !gate.accept(b) {
            return false;
        }
        buf.push(b);
    }
    finish_text(buf, &gate, whole)
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

/// `whole`: the run was not cut to `cap` (see [`RunKind::Base64`]).
fn decode_base64(run: &[u8], whole: bool, buf: &mut Vec<u8>) -> bool {
    let body = &run[..run.len() - run.iter().rev().take_while(|&&c| c == b'=').count()];
    // A trailing single sextet carries no whole byte.
    let body = if body.len() % 4 == 1 {
        &body[..body.len() - 1]
    } else {
        body
    };
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut gate = TextGate::default();
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
            if !gate.accept(b) {
                return false;
            }
            buf.push(b);
        }
    }
    finish_text(buf, &gate, whole)
}

/// `whole`: the run was not cut to `cap` (see [`RunKind::Percent`]).
fn decode_percent(run: &[u8], whole: bool, buf: &mut Vec<u8>) -> bool {
    let mut gate = TextGate::default();
    // Escaped text cannot go on in the middle of a UTF-8 sequence.
    let ok = unescape_percent(run, whole, |b| {
        let ok = gate.accept(b);
        if ok {
            buf.push(b);
        }
        ok
    });
    ok && finish_text(buf, &gate, whole)
}

/// Calls `push` with each byte of `run` unescaped (`%XX` one byte) until it
/// says false; whether it never did. A run not `whole` (cut to `cap`) may
/// end inside an escape: its text ends before.
fn unescape_percent(run: &[u8], whole: bool, mut push: impl FnMut(u8) -> bool) -> bool {
    let mut i = 0;
    while i < run.len() {
        let c = run[i];
        if c == b'%' && i + 2 < run.len() {
            if let (Some(h), Some(l)) = (
                (run[i + 1] as char).to_digit(16),
                (run[i + 2] as char).to_digit(16),
            ) {
                if !push((h << 4 | l) as u8) {
                    return false;
                }
                i += 3;
                continue;
            }
        }
        if c == b'%' && !whole && i + 2 >= run.len() {
            break;
        }
        if !push(c) {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `decoded`, a secret found in a percent-decoded run, is `plain`,
/// a secret found as written inside it, read again: one holds the other
/// once `plain` is unescaped (`p%40ss` read as `p`, cut at the `@`).
fn reads_again(plain: &str, decoded: &str) -> bool {
    let mut unescaped = Vec::with_capacity(plain.len());
    unescape_percent(plain.as_bytes(), true, |b| {
        unescaped.push(b);
        true
    });
    let decoded = decoded.as_bytes();
    memchr::memmem::find(&unescaped, decoded).is_some()
        || memchr::memmem::find(decoded, &unescaped).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(data: &[u8]) -> Vec<(String, RunKind)> {
        let mut v = Vec::new();
        find_runs(data, 0, data.len(), 1 << 20, true, &mut v);
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
        assert_eq!(r[1].1, RunKind::Base64 { whole: true });
    }

    /// A run after a `\n`, `\r` or `\t` escape starts after the escape's
    /// letter: base64 lines joined by escapes in a JSON string decode
    /// aligned, and those of one width are one run (`wrap`). An `n` after
    /// anything else is part of the run.
    #[test]
    fn runs_start_after_an_escape() {
        let r = runs(b"\"aGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl\\naGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl\\r\\naGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl\\taGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl/naGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl\"");
        let texts: Vec<&str> = r.iter().map(|(t, _)| t.as_str()).collect();
        let line = "aGVsbG8gd29ybGQsIGhlbGxvIHRoZXJl";
        let wrapped = format!("{line}\\n{line}\\r\\n{line}");
        let glued = format!("{line}/n{line}");
        assert_eq!(texts, [&wrapped, &glued]);
    }

    /// A percent run longer than `cap`: one candidate, cut to `cap`, and
    /// escapes beyond it do not each scan back over the run.
    #[test]
    fn long_percent_run() {
        let data = format!("x {} y", "a%41".repeat(10_000));
        let mut v = Vec::new();
        find_runs(data.as_bytes(), 0, data.len(), 64, true, &mut v);
        let pct: Vec<(usize, usize)> = v
            .iter()
            .filter(|r| matches!(r.kind, RunKind::Percent { .. }))
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
                RunKind::Base64 { whole: true },
                &mut buf
            ),
            Some(Encoding::Base64)
        );
        assert_eq!(buf, b"hello world, hello there");
        assert_eq!(
            decode(
                b"68656c6c6f20776f726c642c2068656c6c6f",
                RunKind::Base64 { whole: true },
                &mut buf
            ),
            Some(Encoding::Hex)
        );
        assert_eq!(buf, b"hello world, hello");
        // A run cut to `cap` inside a character: the text ends before it; a
        // whole run that ends so is not text.
        let cut = b"aGVsbG8gd29ybGQsIGhlbGxvIOiq";
        assert_eq!(
            decode(cut, RunKind::Base64 { whole: false }, &mut buf),
            Some(Encoding::Base64)
        );
        assert_eq!(buf, b"hello world, hello ");
        assert_eq!(decode(cut, RunKind::Base64 { whole: true }, &mut buf), None);
        // The same of hex: a run cut to `cap` is still hex.
        let cut = b"68656c6c6f20776f726c642c2068656c6c6f20e8aa";
        assert_eq!(
            decode(cut, RunKind::Base64 { whole: false }, &mut buf),
            Some(Encoding::Hex)
        );
        assert_eq!(buf, b"hello world, hello ");
        assert_eq!(decode(cut, RunKind::Base64 { whole: true }, &mut buf), None);
        assert_eq!(
            decode(
                b"a%3Db%26c%3Dhello+world+again",
                RunKind::Percent { whole: true },
                &mut buf
            ),
            Some(Encoding::Percent)
        );
        assert_eq!(buf, b"a=b&c=hello+world+again");
        // Cut to `cap` inside an escaped character, or inside an escape.
        for cut in [
            &b"a%3Db%26c%3Dhello+world+%E8%AA"[..],
            b"a%3Db%26c%3Dhello+world+%E8%A",
        ] {
            assert_eq!(
                decode(cut, RunKind::Percent { whole: false }, &mut buf),
                Some(Encoding::Percent)
            );
            assert_eq!(buf, b"a=b&c=hello+world+");
            assert_eq!(
                decode(cut, RunKind::Percent { whole: true }, &mut buf),
                None
            );
        }
        // A git hash decodes to binary either way.
        assert_eq!(
            decode(
                b"da39a3ee5e6b4b0d3255bfef95601890afd80709",
                RunKind::Base64 { whole: true },
                &mut buf
            ),
            None
        );
        // Too short once decoded.
        assert_eq!(
            decode(
                b"aGVsbG8gd29ybGQ",
                RunKind::Base64 { whole: true },
                &mut buf
            ),
            None
        );
    }

    /// The early test keeps every run that decodes: the hex and base64
    /// (both alphabets) of text starting with every character that text
    /// can start with (ASCII printable, tab, CR, LF, and the lead bytes of
    /// UTF-8), followed by every second character; and it refuses most
    /// identifiers.
    #[test]
    fn first_byte_test_keeps_what_decodes() {
        const STD_ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let base64 = |text: &[u8], url: bool| -> Vec<u8> {
            let mut out = Vec::new();
            for q in text.chunks(3) {
                let v = (q[0] as u32) << 16
                    | (*q.get(1).unwrap_or(&0) as u32) << 8
                    | *q.get(2).unwrap_or(&0) as u32;
                for k in 0..=q.len() {
                    let c = STD_ALPHABET[(v >> (18 - 6 * k) & 63) as usize];
                    out.push(match (url, c) {
                        (true, b'+') => b'-',
                        (true, b'/') => b'_',
                        _ => c,
                    });
                }
            }
            out
        };
        let mut buf = Vec::new();
        let firsts = (0x20..0x7f).chain([b'\t', b'\r', b'\n']);
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for first in firsts {
            for second in 0x20..0x7fu8 {
                let mut t = vec![first, second];
                t.extend_from_slice(b"ello world, hello there");
                texts.push(t);
            }
        }
        for lead in ["é", "€", "😀"] {
            texts.push(format!("{lead}llo world, hello there").into_bytes());
        }
        for text in &texts {
            let hex: Vec<u8> = text
                .iter()
                .flat_map(|b| format!("{b:02x}").into_bytes())
                .collect();
            for run in [hex, base64(text, false), base64(text, true)] {
                assert!(decode(&run, RunKind::Base64 { whole: true }, &mut buf).is_some());
                assert!(
                    first_byte_is_text(&run),
                    "{}",
                    String::from_utf8_lossy(&run)
                );
            }
        }
        let words = [
            "skip_short_runs_for_all",
            "test_one_run_at_every_offset",
            "crate/scanner/engine",
        ];
        let refused = words
            .iter()
            .filter(|w| !first_byte_is_text(w.as_bytes()))
            .count();
        assert_eq!(refused, 2);
    }

    /// The maximal alphabet runs of at least `MIN_BASE64_RUN` bytes that
    /// start in `lo..hi`, found by reading every byte (with the lines that
    /// continue them, see `wrap`).
    fn naive_runs(data: &[u8], lo: usize, hi: usize) -> Vec<(usize, usize)> {
        let alpha = |b: u8| CLASS[b as usize] & (B64 | STD | URL) != 0;
        let mut v = Vec::new();
        let mut s = 0;
        while s < data.len() {
            if !alpha(data[s]) {
                s += 1;
                continue;
            }
            let mut e = s;
            while e < data.len() && alpha(data[e]) {
                e += 1;
            }
            let max = crate::wrap::max_width(usize::MAX);
            if e - s >= MIN_BASE64_RUN
                && (lo..hi).contains(&s)
                && first_byte_is_text(&data[s..e])
                && !crate::wrap::continues(data, s, e, max, alpha)
            {
                v.push((
                    s,
                    crate::wrap::block_end(data, s, e, usize::MAX, max, alpha),
                ));
            }
            s = e;
        }
        v
    }

    /// The skipping search finds exactly the runs a byte-by-byte one does,
    /// at every ownership range, over words of every length.
    #[test]
    fn skipping_finds_every_run() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let mut data = Vec::new();
            let len = (next() % 1000) as usize;
            // Words up to 40 bytes; or mostly short ones, as in source
            // code, with a long one (up to 150: runs that cross blocks) now
            // and then, so that few blocks pass the coarse test.
            let sparse = next() % 2 == 0;
            while data.len() < len {
                let word = if !sparse {
                    next() % 40
                } else if next() % 8 == 0 {
                    19 + next() % 130
                } else {
                    next() % 19
                } as usize;
                data.extend((0..word).map(|k| b"aZ09+/_-"[(k + word) % 8]));
                data.push(b" .:\n\"("[(next() % 5) as usize]);
            }
            let lo = (next() % 500) as usize;
            let hi = lo + (next() % 600) as usize;
            let mut v = Vec::new();
            find_runs(&data, lo, hi, usize::MAX, true, &mut v);
            let got: Vec<(usize, usize)> = v
                .iter()
                .filter(|r| !matches!(r.kind, RunKind::Percent { .. }))
                .map(|r| (r.start, r.end))
                .collect();
            assert_eq!(got, naive_runs(&data, lo, hi.min(data.len())), "{lo}..{hi}");
        }
    }

    /// One run of every length from the shortest candidate on, at every
    /// offset across three 64-byte blocks, after a short word or not: the
    /// block skip finds exactly it (a run whose whole 4-byte groups end in
    /// the block before its 22nd byte included).
    #[test]
    fn one_run_at_every_offset() {
        for len in MIN_BASE64_RUN - 2..100 {
            for at in 0..192 {
                for word in [0, 5, 18] {
                    let mut data = vec![b' '; 320];
                    data[at..at + len].fill(b'Q');
                    if word > 0 && at > word {
                        data[at - word - 1..at - 1].fill(b'z');
                    }
                    let mut v = Vec::new();
                    find_runs(&data, 0, data.len(), usize::MAX, true, &mut v);
                    let got: Vec<(usize, usize)> = v.iter().map(|r| (r.start, r.end)).collect();
                    let want = if len >= MIN_BASE64_RUN {
                        vec![(at, at + len)]
                    } else {
                        vec![]
                    };
                    assert_eq!(got, want, "run of {len} at {at} after a word of {word}");
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn alphabet_mask_is_the_class_table() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        for first in (0..256).step_by(64) {
            let block: [u8; 64] = std::array::from_fn(|k| (first + k) as u8);
            // SAFETY: AVX2 is available (checked above).
            let m = unsafe { alphabet_mask(&block) };
            for (k, &b) in block.iter().enumerate() {
                let want = CLASS[b as usize] & (B64 | STD | URL) != 0;
                assert_eq!(m >> k & 1 == 1, want, "byte {b:#x}");
            }
        }
        // Whole groups: blocks of alphabet bytes with one outsider moved
        // through every position.
        for gap in 0..=64 {
            let block: [u8; 64] = std::array::from_fn(|k| if k == gap { b'.' } else { b'a' });
            // SAFETY: AVX2 is available (checked above).
            let (_, groups) = unsafe { classify(&block) };
            let want = (0..16).fold(0u32, |g, j| g | ((gap / 4 != j) as u32) << j);
            assert_eq!(groups, want, "outsider at {gap}");
        }
    }

    /// The gate refuses a byte sequence only if it is not text: every
    /// sequence of one or two bytes, and of three or four around UTF-8.
    #[test]
    fn text_gate_refuses_only_non_text() {
        let text = |s: &[u8]| {
            s.iter()
                .all(|&b| (0x20..0x7f).contains(&b) || b"\n\r\t".contains(&b) || b >= 0x80)
                && std::str::from_utf8(s).is_ok()
        };
        let gated = |s: &[u8]| {
            let mut g = TextGate::default();
            s.iter().all(|&b| g.accept(b))
        };
        let mut seqs: Vec<Vec<u8>> = (0..=255u8).map(|a| vec![a]).collect();
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                seqs.push(vec![a, b]);
            }
        }
        for a in [0x41, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4] {
            for b in 0x70..=0xc2u8 {
                for c in [0x20, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0] {
                    seqs.push(vec![a, b, c]);
                    seqs.push(vec![a, b, c, 0x80]);
                    seqs.push(vec![a, b, c, 0x41]);
                }
            }
        }
        for s in &seqs {
            if text(s) {
                assert!(gated(s), "{s:x?}");
            }
        }
        assert!(gated("é€😀 x".as_bytes()));
        assert!(!gated(&[0xc3, 0x41]));
        assert!(!gated(&[0x80]));
    }
}
