//! [`RareByteSearch`]: `scan_focus`'s search for the long-window rules' keywords.

use super::*;

/// `scan_focus`'s search for the long-window rules' keywords over a whole
/// buffer: each keyword is found from one of its bytes, the rarest in
/// source text by [`RARITY`], then compared (ASCII case-insensitively, as
/// the keyword automaton matches) where that byte stands. One memchr pass
/// per chosen byte; `://` or `secret` cost a comparison per `:` or `c`,
/// not an automaton step per byte. An occurrence is found once, from the
/// first place of its chosen byte in the keyword.
#[derive(Default)]
pub(super) struct RareByteSearch {
    /// Lowercase keywords, and the rules owning each.
    keywords: Vec<Vec<u8>>,
    pub(super) rules: Vec<Vec<u32>>,
    /// Per chosen byte (lowercase): the keywords it finds, where the byte
    /// stands in each, and the longest `max_len` of their rules.
    by_byte: Vec<ByteKeywords>,
    /// Per keyword: the index of its entry in `by_byte`.
    byte_of: Vec<usize>,
    max_len: usize,
}

/// The keywords [`RareByteSearch`] finds from one byte.
struct ByteKeywords {
    /// Lowercase.
    byte: u8,
    /// Keyword index, and where the byte stands in the keyword.
    keywords: Vec<(u32, usize)>,
    /// The longest `max_len` of their rules.
    max_len: usize,
    /// Whether a byte (either case) follows the chosen byte in one of the
    /// keywords, or the chosen byte ends one (then every byte is marked):
    /// where the byte after a place of the chosen byte is unmarked, none of
    /// the keywords stands there, and the list is not compared. A frequent
    /// chosen byte (the `c` of `secret`) is mostly followed by bytes no
    /// keyword has there.
    next: [bool; 256],
}

/// Bytes from the rarest to the most frequent in source text and prose
/// (a rough order: rare letters, digits, then punctuation and common
/// letters); a byte not listed counts as rarer than all.
const RARITY: &[u8] = b"zqxjkv98765432bp10ygfwmu_-.:/=cldrhsnioate ";

impl RareByteSearch {
    /// The index of `keyword` (lowercase), if a long rule owns it.
    pub(super) fn index(&self, keyword: &str) -> Option<u32> {
        let k = self.keywords.iter().position(|x| x == keyword.as_bytes())?;
        Some(k as u32)
    }

    pub(super) fn add(&mut self, keyword: &[u8], rule: u32, max_len: usize) {
        let k = match self.keywords.iter().position(|x| x == keyword) {
            Some(k) => k,
            None => {
                self.keywords.push(keyword.to_vec());
                self.rules.push(Vec::new());
                let rank = |b: u8| RARITY.iter().position(|&r| r == b).map_or(0, |i| i + 1);
                let Some((off, &b)) = keyword.iter().enumerate().min_by_key(|(_, &b)| rank(b))
                else {
                    return;
                };
                let k = self.keywords.len() - 1;
                match self.by_byte.iter().position(|e| e.byte == b) {
                    Some(i) => {
                        self.by_byte[i].keywords.push((k as u32, off));
                        self.byte_of.push(i);
                    }
                    None => {
                        self.by_byte.push(ByteKeywords {
                            byte: b,
                            keywords: vec![(k as u32, off)],
                            max_len: 0,
                            next: [false; 256],
                        });
                        self.byte_of.push(self.by_byte.len() - 1);
                    }
                }
                self.max_len = self.max_len.max(keyword.len());
                let next = &mut self.by_byte[self.byte_of[k]].next;
                match keyword.get(off + 1) {
                    Some(&n) => {
                        next[usize::from(n.to_ascii_lowercase())] = true;
                        next[usize::from(n.to_ascii_uppercase())] = true;
                    }
                    None => *next = [true; 256],
                }
                k
            }
        };
        let entry = &mut self.by_byte[self.byte_of[k]];
        entry.max_len = entry.max_len.max(max_len);
        if !self.rules[k].contains(&rule) {
            self.rules[k].push(rule);
        }
    }

    /// Appends `(end, start, keyword)`, unordered, for every occurrence
    /// whose rules' windows may reach `zone` (`2 max_len` before it,
    /// `max_len` after, and FOCUS_SLACK) and that does not lie wholly in
    /// `walked` (where the keyword automaton found it); and some that do,
    /// within the longest keyword of its edges.
    pub(super) fn find(
        &self,
        data: &[u8],
        zone: &Range<usize>,
        walked: Range<usize>,
        out: &mut Vec<(usize, usize, u32)>,
    ) {
        for entry in &self.by_byte {
            let far = self.far(entry, zone, data.len());
            // The chosen byte of an occurrence wholly in `walked` lies in
            // `walked` shortened by the longest keyword at each end.
            let inner = (walked.start + self.max_len).min(walked.end)
                ..walked.end.saturating_sub(self.max_len).max(walked.start);
            let left = far.start..far.end.min(inner.start).max(far.start);
            let right = inner.end.max(far.start).min(far.end)..far.end;
            // (Overlapping when `walked` is short: `out` is de-duplicated.)
            self.find_byte(data, entry, left, out);
            self.find_byte(data, entry, right, out);
        }
    }

    /// Where [`find`](Self::find) looks for `entry`'s keywords around
    /// `zone`, in a buffer of `len` bytes: as far as their rules' windows
    /// reach (`2 max_len` before, `max_len` after), and FOCUS_SLACK.
    fn far(&self, entry: &ByteKeywords, zone: &Range<usize>, len: usize) -> Range<usize> {
        let k = FOCUS_SLACK + self.max_len;
        zone.start.saturating_sub(2 * entry.max_len + k)..(zone.end + entry.max_len + k).min(len)
    }

    /// Whether [`find`](Self::find) around `zone` searches every byte of a
    /// buffer of `len` bytes, for every keyword.
    pub(super) fn reaches_all(&self, len: usize, zone: &Range<usize>) -> bool {
        self.by_byte
            .iter()
            .all(|e| self.far(e, zone, len) == (0..len))
    }

    /// Whether [`find`](Self::find) around each of `zones` (ascending,
    /// disjoint) would search one span, for every keyword: each zone's
    /// reach meets the next one's. Then `find` around their hull searches
    /// the same bytes.
    pub(super) fn joined(&self, zones: &[Range<usize>]) -> bool {
        let Some(least) = self.by_byte.iter().map(|e| e.max_len).min() else {
            return true;
        };
        // `far`: `2 max_len + k` before a zone, `max_len + k` after.
        let k = FOCUS_SLACK + self.max_len;
        zones
            .windows(2)
            .all(|w| w[1].start <= w[0].end + 3 * least + 2 * k)
    }

    fn find_byte(
        &self,
        data: &[u8],
        entry: &ByteKeywords,
        range: Range<usize>,
        out: &mut Vec<(usize, usize, u32)>,
    ) {
        if range.is_empty() {
            return;
        }
        let (b, list) = (entry.byte, &entry.keywords[..]);
        let hay = &data[range.clone()];
        {
            let mut check = |i: usize| {
                let at = range.start + i;
                // At the buffer's end, as if a NUL followed: only a keyword
                // ending in the chosen byte (which marks every byte) fits.
                let after = data.get(at + 1).copied().unwrap_or(0);
                if !entry.next[usize::from(after)] {
                    return;
                }
                for &(k, off) in list {
                    let kw = &self.keywords[k as usize];
                    let Some(start) = at.checked_sub(off) else {
                        continue;
                    };
                    // The first byte first: most places of a frequent
                    // byte fail there.
                    if start + kw.len() <= data.len()
                        && data[start].to_ascii_lowercase() == kw[0]
                        && data[start..start + kw.len()].eq_ignore_ascii_case(kw)
                    {
                        out.push((start + kw.len(), start, k));
                    }
                }
            };
            let upper = b.to_ascii_uppercase();
            if upper == b {
                memchr::memchr_iter(b, hay).for_each(&mut check);
            } else {
                memchr::memchr2_iter(b, upper, hay).for_each(&mut check);
            }
        }
    }
}
