//! Stage 1's keyword automaton and its walk: every occurrence of every
//! keyword, overlapping, ASCII case-insensitively.
//!
//! `aho-corasick` builds the automaton (a DFA without prefilter, standard
//! match semantics); [`Keywords`] copies its transitions into a table of its
//! own and walks that, for two reasons:
//!
//! - **A smaller table.** A byte in no keyword moves every state as any
//!   other such byte does, and a letter as its other case does, so the
//!   classes here are the keywords' case-folded bytes and one for the rest:
//!   53 for the built-in rules, a stride of 64. The DFA's own classes need a
//!   stride of 128: 2.1 MB of transitions for the 4,119 states, against
//!   1.05 MB here. Each byte's step waits for the previous one's load from
//!   that table, so its size is the walk's speed.
//! - **No bounds check.** The DFA's `next_state` checks every index against
//!   its table: a compare and a branch per byte. Here the table's length is
//!   a power of two and the index is masked by it, which the compiler
//!   proves in bounds.
//!
//! Walking 60 MB of the cargo registry's `.rs` files in 40 KiB buffers
//! (interleaved in one process, median of 9) takes 26% less time than
//! through the DFA. The states are the DFA's, renumbered so that its special
//! ones (the matches) come first and one comparison tells them; the DFA
//! still answers which keywords a match state holds.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};

/// The smallest buffer whose keyword search is split in [`WALKS`] walks.
const SPLIT_MIN: usize = 4096;

/// How many walks [`Keywords::hits`] splits a large buffer into.
const WALKS: usize = 4;

/// The keyword automaton (module docs).
pub(crate) struct Keywords {
    dfa: DFA,
    /// Byte → class (module docs).
    classes: [u8; 256],
    /// State `s` (premultiplied: its number shifted by the stride's log)
    /// goes on class `c` to `trans[s + c]`, premultiplied. The length is a
    /// power of two.
    trans: Vec<u32>,
    /// The log of the stride: the number of classes, rounded up to a power
    /// of two.
    stride2: u32,
    /// States up to this one are the DFA's special states (matches).
    special_max: u32,
    /// State number (`s` shifted back) → the DFA's id.
    dfa_id: Vec<StateID>,
    start: u32,
    /// The longest keyword.
    max_len: usize,
}

impl Keywords {
    /// The automaton of `keywords`, lowercase (matched ASCII
    /// case-insensitively).
    pub(crate) fn new(keywords: &[String]) -> Result<Keywords, String> {
        // Without a prefilter the start state is not special, so a walk
        // leaves its loop only on a match state.
        let dfa = DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(keywords)
            .map_err(|e| format!("cannot build keyword automaton: {e}"))?;
        let start = dfa
            .start_state(Anchored::No)
            .map_err(|e| format!("cannot build keyword automaton: {e}"))?;
        // Classes: a byte in no keyword (in either case) moves every state
        // as any other such byte does (where the failure links lead), and a
        // letter as its other case does; every other byte is a class alone.
        let mut class_of = [None::<u8>; 256];
        let mut first: Vec<u8> = Vec::new();
        for b in keywords.iter().flat_map(|k| k.bytes()) {
            let b = b.to_ascii_lowercase();
            if class_of[usize::from(b)].is_none() {
                // At most 230 bytes fold to distinct ones: the count fits.
                let c = first.len() as u8;
                class_of[usize::from(b)] = Some(c);
                class_of[usize::from(b.to_ascii_uppercase())] = Some(c);
                first.push(b);
            }
        }
        if let Some(other) = (0..=255u8).find(|&b| class_of[usize::from(b)].is_none()) {
            let c = first.len() as u8;
            class_of
                .iter_mut()
                .filter(|x| x.is_none())
                .for_each(|x| *x = Some(c));
            first.push(other);
        }
        let classes = class_of.map(|c| c.unwrap_or(0));
        let n = first.len();
        // Every state reachable from the start, numbered as found; `to`
        // holds each state's next one per class. `number` is indexed by the
        // DFA's ids, which index its own table: no larger than that.
        let mut states = vec![start];
        let mut number = vec![u32::MAX; start.as_usize() + 1];
        number[start.as_usize()] = 0;
        let mut to: Vec<u32> = Vec::new();
        let mut i = 0;
        while let Some(&s) = states.get(i) {
            for &b in &first {
                let next = dfa.next_state(Anchored::No, s, b);
                let k = next.as_usize();
                if number.len() <= k {
                    number.resize(k + 1, u32::MAX);
                }
                if number[k] == u32::MAX {
                    number[k] = states.len() as u32;
                    states.push(next);
                }
                to.push(number[k]);
            }
            i += 1;
        }
        // Renumbered: the special states first, so that one comparison
        // tells them.
        let mut order: Vec<usize> = (0..states.len()).collect();
        order.sort_by_key(|&i| !dfa.is_special(states[i]));
        let specials = states.iter().filter(|&&s| dfa.is_special(s)).count();
        let mut renumbered = vec![0usize; states.len()];
        for (new, &old) in order.iter().enumerate() {
            renumbered[old] = new;
        }
        let stride2 = n.next_power_of_two().trailing_zeros();
        let len = (states.len() << stride2).next_power_of_two();
        if u32::try_from(len).is_err() {
            return Err("cannot build keyword automaton: too many states".into());
        }
        let mut trans = vec![0u32; len];
        for (old, next) in to.chunks_exact(n).enumerate() {
            let row = renumbered[old] << stride2;
            for (c, &j) in next.iter().enumerate() {
                trans[row + c] = (renumbered[j as usize] << stride2) as u32;
            }
        }
        Ok(Keywords {
            classes,
            trans,
            stride2,
            // Below the first state when none is special.
            special_max: ((specials << stride2) as u32).wrapping_sub(1),
            start: (renumbered[0] << stride2) as u32,
            dfa_id: order.iter().map(|&i| states[i]).collect(),
            max_len: keywords.iter().map(|k| k.len()).max().unwrap_or(0),
            dfa,
        })
    }

    /// The longest keyword.
    pub(crate) fn max_len(&self) -> usize {
        self.max_len
    }

    /// Calls `hit(keyword, start, end)` for every occurrence of every
    /// keyword (overlapping: `sk_` inside `sk_live_` too), in order of end,
    /// keywords ending at the same byte in automaton order; the same hits
    /// as `AhoCorasick::find_overlapping_iter`. Walking the table here
    /// rather than through the iterator costs about a third of the
    /// instructions per byte: the iterator re-enters its search for every
    /// match and checks for prefilters and anchored starts at each byte.
    ///
    /// Each byte's transition waits for the previous one's (a load from the
    /// table), so one walk is bound by memory latency, not by instructions.
    /// A buffer of [`SPLIT_MIN`] bytes or more is walked as [`WALKS`]
    /// parts at once, whose loads overlap: each walk after the first starts
    /// `K - 1` bytes before its part (`K` the longest keyword), so it sees
    /// whole every keyword that ends in its part, and reports only those,
    /// after the previous walks' hits.
    pub(crate) fn hits(&self, data: &[u8], mut hit: impl FnMut(usize, usize, usize)) {
        let dfa = &self.dfa;
        let each = |s: u32, end: usize, hit: &mut dyn FnMut(usize, usize, usize)| {
            let sid = self.dfa_id[(s >> self.stride2) as usize];
            if dfa.is_match(sid) {
                for k in 0..dfa.match_len(sid) {
                    let pid = dfa.match_pattern(sid, k);
                    hit(pid.as_usize(), end - dfa.pattern_len(pid), end);
                }
            }
        };
        if data.len() < SPLIT_MIN {
            let (mut at, mut s) = (0, self.start);
            while let Some(end) = self.next_special(data, at, &mut s) {
                at = end;
                each(s, end, &mut hit);
            }
            return;
        }
        // Walk `w` reports the keywords ending in `(w * part, (w + 1) *
        // part]` (from 0 for the first, to the end for the last); all walk
        // `part` bytes in step, then each finishes alone.
        let part = data.len() / WALKS;
        let kw = self.max_len.max(1);
        let from: [usize; WALKS] = std::array::from_fn(|w| (w * part + 1).saturating_sub(kw));
        let mut states = [self.start; WALKS];
        let mut later: [Vec<(usize, usize, usize)>; WALKS] = Default::default();
        let mut k = 0;
        while let Some(d) = self.next_special_n(data, &from, part, k, &mut states) {
            k += d;
            each(states[0], k, &mut hit);
            for w in 1..WALKS {
                if from[w] + k > w * part {
                    each(states[w], from[w] + k, &mut |p, s, e| {
                        later[w].push((p, s, e))
                    });
                }
            }
        }
        for w in 1..WALKS {
            for &(p, s, e) in &later[w] {
                hit(p, s, e);
            }
            let limit = if w + 1 == WALKS {
                data.len()
            } else {
                (w + 1) * part
            };
            let (mut at, mut s) = (from[w] + part, states[w]);
            while let Some(end) = self.next_special(&data[..limit], at, &mut s) {
                at = end;
                each(s, end, &mut hit);
            }
        }
    }

    /// The walk's step: the masked index is in bounds (the table's length
    /// is the mask plus one), so the compiler checks nothing.
    #[inline(always)]
    fn step(trans: &[u32], mask: usize, classes: &[u8; 256], s: usize, b: u8) -> usize {
        trans[(s + usize::from(classes[usize::from(b)])) & mask] as usize
    }

    /// Runs the table over `data[from[w] + k..from[w] + len]` from
    /// `states[w]`, for every walk `w` in step, up to the first byte where
    /// any enters a special (match) state; returns how many bytes each
    /// consumed.
    #[inline(never)]
    fn next_special_n(
        &self,
        data: &[u8],
        from: &[usize; WALKS],
        len: usize,
        k: usize,
        states: &mut [u32; WALKS],
    ) -> Option<usize> {
        let mask = self.trans.len() - 1;
        let trans = &self.trans[..=mask];
        let classes = &self.classes;
        let special = self.special_max as usize;
        let step = |s: usize, b: u8| Self::step(trans, mask, classes, s, b);
        let [a, b, c, d] = from.map(|f| &data[f + k..f + len]);
        let mut s = states.map(|s| s as usize);
        for (i, (((&x0, &x1), &x2), &x3)) in a.iter().zip(b).zip(c).zip(d).enumerate() {
            s = [
                step(s[0], x0),
                step(s[1], x1),
                step(s[2], x2),
                step(s[3], x3),
            ];
            if s[0].min(s[1]).min(s[2]).min(s[3]) <= special {
                *states = s.map(|s| s as u32);
                return Some(i + 1);
            }
        }
        *states = s.map(|s| s as u32);
        None
    }

    /// Runs the table from `s` over `data[from..]` up to the first special
    /// (match) state; returns the end of the byte that entered it. Out of
    /// line so that its few registers stay registers: inlined into the
    /// scan, the loop spilled its state to the stack and cost 18
    /// instructions a byte. Four bytes per iteration: the loop's own count
    /// and test were a third of what was left.
    #[inline(never)]
    fn next_special(&self, data: &[u8], from: usize, state: &mut u32) -> Option<usize> {
        let mask = self.trans.len() - 1;
        let trans = &self.trans[..=mask];
        let classes = &self.classes;
        let special = self.special_max as usize;
        let mut s = *state as usize;
        let rest = &data[from..];
        let mut quads = rest.chunks_exact(4);
        for (q, quad) in quads.by_ref().enumerate() {
            for (k, &b) in quad.iter().enumerate() {
                s = Self::step(trans, mask, classes, s, b);
                if s <= special {
                    *state = s as u32;
                    return Some(from + 4 * q + k + 1);
                }
            }
        }
        let tail = rest.len() - quads.remainder().len();
        for (k, &b) in quads.remainder().iter().enumerate() {
            s = Self::step(trans, mask, classes, s, b);
            if s <= special {
                *state = s as u32;
                return Some(from + tail + k + 1);
            }
        }
        *state = s as u32;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::AhoCorasick;

    /// The walks give the iterator's hits, in its order, at every length
    /// around the split and with keywords across the middle.
    #[test]
    fn hits_are_the_overlapping_iterator_hits() {
        let engine = crate::Engine::builtin().unwrap();
        let keywords = engine.keywords();
        let table = Keywords::new(keywords).unwrap();
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(keywords)
            .unwrap();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as usize
        };
        for round in 0..80 {
            let len = if round < 20 {
                next() % SPLIT_MIN
            } else {
                SPLIT_MIN - 40 + round * 7 + next() % 3000
            };
            let mut data = Vec::with_capacity(len + 64);
            // A walk starts in the start state: a keyword's tail first is
            // no keyword.
            let k = &keywords[next() % keywords.len()];
            data.extend_from_slice(&k.as_bytes()[1..]);
            while data.len() < len {
                if next() % 3 == 0 {
                    let k = &keywords[next() % keywords.len()];
                    data.extend(k.bytes().map(|b| {
                        if next() % 2 == 0 {
                            b.to_ascii_uppercase()
                        } else {
                            b
                        }
                    }));
                } else {
                    data.extend_from_slice(&b"x =_-\n\xff"[..1 + next() % 7]);
                }
            }
            let want: Vec<(usize, usize, usize)> = ac
                .find_overlapping_iter(&data)
                .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
                .collect();
            let mut got = Vec::new();
            table.hits(&data, |p, s, e| got.push((p, s, e)));
            assert_eq!(got, want, "length {}", data.len());
        }
    }

    /// Bytes in no keyword share a class; a keyword's letter shares one
    /// with its other case.
    #[test]
    fn classes_are_keyword_bytes_and_the_rest() {
        let table = Keywords::new(&["ab".to_string(), "b".to_string()]).unwrap();
        let c = |b: u8| table.classes[usize::from(b)];
        assert_eq!(c(b'a'), c(b'A'));
        assert_eq!(c(b'b'), c(b'B'));
        assert_ne!(c(b'a'), c(b'b'));
        assert_eq!(c(b'x'), c(0));
        assert_eq!(c(b'x'), c(0xff));
        let distinct: std::collections::HashSet<u8> = table.classes.into_iter().collect();
        assert_eq!(distinct.len(), 3);
        let mut got = Vec::new();
        table.hits(b"xAbB", |p, s, e| got.push((p, s, e)));
        assert_eq!(got, [(0, 1, 3), (1, 2, 3), (1, 3, 4)]);
    }
}
