//! Stage 1's keyword automaton and its walk: every occurrence of every
//! keyword, overlapping, ASCII case-insensitively.
//!
//! [`Keywords::new`] builds an Aho-Corasick automaton (standard match
//! semantics, every overlapping occurrence) straight into a transition table
//! of its own and [`Keywords::hits`] walks it, for three reasons:
//!
//! - **A smaller table.** A byte in no keyword moves every state as any
//!   other such byte does, and a letter as its other case does, so the
//!   classes here are the keywords' case-folded bytes and one for the rest:
//!   53 for the built-in rules, a stride of 64. `aho-corasick`'s DFA needs a
//!   stride of 128: 2.1 MB of transitions for 4,119 states, against 1.05 MB
//!   here. Each byte's step waits for the previous one's load from that
//!   table, so its size is the walk's speed.
//! - **No bounds check.** The DFA's `next_state` checks every index against
//!   its table: a compare and a branch per byte. Here [`Keywords::new`]
//!   proves every entry of the table the start of a row held whole, so the
//!   walk indexes it unchecked (a mask in its place cost 14% of the walk:
//!   one more operation on each byte's chain of dependent loads).
//! - **Start-up.** Building `aho-corasick`'s DFA and copying it grew with the
//!   provider table to two thirds of the start-up; the construction here
//!   writes each row once.
//!
//! Walking 60 MB of the cargo registry's `.rs` files in 40 KiB buffers
//! (interleaved in one process, median of 9) takes 26% less time than
//! through the DFA. The special states (the matches) are numbered first, so
//! that one comparison tells them; a side table lists each one's keywords.
//! The tests check the hits against `aho-corasick`'s overlapping iterator.
//!
//! The engine builds its automaton on a thread of its own
//! ([`KeywordsHandle`]): the build returns while the table is written, and
//! the first walk waits for it.

use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

/// The smallest buffer whose keyword search is split in [`WALKS`] walks
/// (if also [`WALKS`] times the longest keyword: [`Keywords::hits`]). One
/// walk alone covers half the bytes a second that five in step do, so
/// splitting pays from a few hundred bytes on: the walk of 60 MB of moto's
/// sources in buffers of 600 bytes took 107 ms alone, 69 ms split.
const SPLIT_MIN: usize = 512;

/// How many walks [`Keywords::hits`] splits a large buffer into: each
/// byte's step waits on the previous one's load, and walks of other parts
/// overlap theirs. Five walked 60 MB of moto's sources in about 10% less
/// time than four; six or eight in more (their states no longer fit the
/// registers beside the walks' positions).
const WALKS: usize = 5;

/// No trie edge yet (construction only).
const NONE: u32 = u32::MAX;

/// An edge of the trie under construction: the next of the same state's
/// edges, [`NONE`] after the last.
struct TrieEdge {
    class: u8,
    to: u32,
    next: u32,
}

/// The keyword automaton (module docs).
pub(crate) struct Keywords {
    /// Byte → class (module docs).
    classes: [u8; 256],
    /// State `s` (premultiplied: its number shifted by the stride's log)
    /// goes on class `c` to `trans[s + c]`, premultiplied. Every entry is
    /// such a row's start, with the row's whole stride in the table
    /// ([`Keywords::new`] checks it: the walk's [`step`](Keywords::step)
    /// relies on it).
    trans: Vec<u32>,
    /// The log of the stride: the number of classes, rounded up to a power
    /// of two.
    stride2: u32,
    /// States up to this one are the special states (matches).
    special_max: u32,
    /// Special state number `i` holds the keywords
    /// `matched[ends[i - 1]..ends[i]]` (from 0 for the first): its own,
    /// then those of its failure state, as `find_overlapping_iter` reports
    /// them.
    ends: Vec<u32>,
    matched: Vec<u32>,
    /// Keyword → its length.
    lens: Vec<u32>,
    start: u32,
    /// The longest keyword.
    max_len: usize,
}

/// A [`Keywords`] built on a thread of its own, so that the engine's build
/// returns without it: the caller sets up its scan (or, scanning nothing,
/// exits) while the table is written, and the first walk waits for it
/// ([`get`](Self::get)). Its 1.5-2 ms were the engine build's largest step
/// after parsing the rule files.
pub(crate) struct KeywordsHandle {
    built: OnceLock<Keywords>,
    /// Taken (and joined) by the first [`get`](Self::get).
    building: Mutex<Option<JoinHandle<Keywords>>>,
}

impl KeywordsHandle {
    /// Checks `keywords` now (what [`Keywords::new`] would refuse is
    /// refused here) and builds their automaton on a new thread; here when
    /// no thread can be started.
    pub(crate) fn spawn(keywords: Arc<Vec<String>>) -> Result<KeywordsHandle, String> {
        Keywords::check(&keywords)?;
        let theirs = Arc::clone(&keywords);
        let building = std::thread::Builder::new()
            .name("keywords".into())
            .spawn(move || Keywords::new(&theirs).expect("keywords checked before the build"));
        Ok(match building {
            Ok(handle) => KeywordsHandle {
                built: OnceLock::new(),
                building: Mutex::new(Some(handle)),
            },
            Err(_) => KeywordsHandle {
                built: OnceLock::from(Keywords::new(&keywords)?),
                building: Mutex::new(None),
            },
        })
    }

    /// The automaton, waiting for its thread the first time.
    pub(crate) fn get(&self) -> &Keywords {
        self.built.get_or_init(|| {
            let handle = self
                .building
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("the automaton is built or building");
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }
}

impl Keywords {
    /// What [`new`](Self::new) refuses (it checks here first), checked
    /// without building: an empty keyword, or keywords whose table (at most one state per byte, a
    /// stride of at most 256) might not be indexed by a `u32`.
    pub(crate) fn check(keywords: &[String]) -> Result<(), String> {
        if keywords.iter().any(String::is_empty) {
            return Err("cannot build keyword automaton: empty keyword".into());
        }
        let bytes: usize = keywords.iter().map(String::len).sum();
        let fits = (bytes + 1)
            .checked_mul(256)
            .and_then(usize::checked_next_power_of_two)
            .is_some_and(|len| u32::try_from(len).is_ok());
        if !fits {
            return Err("cannot build keyword automaton: too many states".into());
        }
        Ok(())
    }

    /// The automaton of `keywords`, lowercase and distinct (matched ASCII
    /// case-insensitively).
    ///
    /// Built here rather than by `aho-corasick`: the textbook construction
    /// (a sparse trie over the classes, then breadth-first failure links)
    /// and then each row of the table written once, in its final place: the
    /// failure state's row copied (complete, since that state is shallower)
    /// and the state's own edges over it. With the provider table (1,300
    /// keywords, 9,000 states) building `aho-corasick`'s DFA and copying it
    /// took two thirds of the start-up. For the built-in rules (1,900
    /// keywords) this takes 1.5-2 ms, most of it the page faults of the
    /// fresh 2.3 MB table; building a dense trie first, then renumbering it
    /// into the table, took 4.5 ms.
    pub(crate) fn new(keywords: &[String]) -> Result<Keywords, String> {
        Keywords::check(keywords)?;
        // Classes: a byte in no keyword (in either case) moves every state
        // as any other such byte does (to where the failure links lead),
        // and a letter as its other case does; every other byte is a class
        // alone.
        let mut class_of = [None::<u8>; 256];
        let mut n = 0usize;
        for b in keywords.iter().flat_map(|k| k.bytes()) {
            let b = b.to_ascii_lowercase();
            if class_of[usize::from(b)].is_none() {
                // At most 230 bytes fold to distinct ones: the count fits.
                class_of[usize::from(b)] = Some(n as u8);
                class_of[usize::from(b.to_ascii_uppercase())] = Some(n as u8);
                n += 1;
            }
        }
        if class_of.iter().any(Option::is_none) {
            class_of
                .iter_mut()
                .filter(|x| x.is_none())
                .for_each(|x| *x = Some(n as u8));
            n += 1;
        }
        let classes = class_of.map(|c| c.unwrap_or(0));
        // The trie, sparse: each state's edges as a list (`first`, then
        // `next`), state 0 the root. A dense trie of `n` edges a row was
        // as large as the table (2.3 MB for the built-in rules), grown by
        // copying and read again whole to renumber it: 4.5 ms of the
        // start-up, most of it page faults.
        let total: usize = keywords.iter().map(String::len).sum();
        let mut first = Vec::with_capacity(total + 1);
        let mut own_of = Vec::with_capacity(total + 1);
        first.push(NONE);
        own_of.push(NONE);
        let mut edges: Vec<TrieEdge> = Vec::with_capacity(total);
        for (pid, k) in keywords.iter().enumerate() {
            let mut s = 0usize;
            for b in k.bytes() {
                let class = classes[usize::from(b)];
                let mut e = first[s];
                while e != NONE && edges[e as usize].class != class {
                    e = edges[e as usize].next;
                }
                s = if e == NONE {
                    let to = first.len();
                    edges.push(TrieEdge {
                        class,
                        to: to as u32,
                        next: first[s],
                    });
                    first[s] = (edges.len() - 1) as u32;
                    first.push(NONE);
                    own_of.push(NONE);
                    to
                } else {
                    edges[e as usize].to as usize
                };
            }
            own_of[s] = pid as u32;
        }
        let states = first.len();
        // Each state's children by class, `kids[start[s]..start[s + 1]]`:
        // the breadth-first order below visits them so, as it did the rows
        // of the dense trie.
        let mut start = Vec::with_capacity(states + 1);
        let mut kids: Vec<(u8, u32)> = Vec::with_capacity(edges.len());
        start.push(0u32);
        for &f in &first {
            let from = kids.len();
            let mut e = f;
            while e != NONE {
                let edge = &edges[e as usize];
                kids.push((edge.class, edge.to));
                e = edge.next;
            }
            kids[from..].sort_unstable_by_key(|&(c, _)| c);
            start.push(kids.len() as u32);
        }
        let kids_of = |s: usize| &kids[start[s] as usize..start[s + 1] as usize];
        // Breadth first: the failure links, each by the failure chain of
        // the parent's failure state (shallower, so already linked).
        let mut fail = vec![0u32; states];
        let mut order = Vec::with_capacity(states);
        order.push(0u32);
        let mut i = 0;
        while let Some(&s) = order.get(i) {
            i += 1;
            let s = s as usize;
            for &(c, t) in kids_of(s) {
                if s != 0 {
                    let mut f = fail[s] as usize;
                    fail[t as usize] = loop {
                        let row = kids_of(f);
                        if let Ok(j) = row.binary_search_by_key(&c, |&(c, _)| c) {
                            break row[j].1;
                        }
                        if f == 0 {
                            break 0;
                        }
                        f = fail[f] as usize;
                    };
                }
                order.push(t);
            }
        }
        // Each state's keywords, in breadth-first order (a failure state
        // comes before the states that fail to it): its own, then its
        // failure state's. The states with any are special, numbered first.
        let mut renumbered = vec![usize::MAX; states];
        let (mut ends, mut matched) = (Vec::new(), Vec::new());
        for &t in &order {
            let t = t as usize;
            let f = fail[t] as usize;
            let inherited = (t != 0 && renumbered[f] != usize::MAX).then(|| {
                let i = renumbered[f];
                let from = if i == 0 { 0 } else { ends[i - 1] as usize };
                from..ends[i] as usize
            });
            if own_of[t] == NONE && inherited.is_none() {
                continue;
            }
            if own_of[t] != NONE {
                matched.push(own_of[t]);
            }
            if let Some(r) = inherited {
                matched.extend_from_within(r);
            }
            renumbered[t] = ends.len();
            ends.push(matched.len() as u32);
        }
        // The others in breadth-first order too: the shallow states, where
        // the walk spends most bytes, share a few contiguous rows of the
        // table (numbered in trie order, the 11,000 states of the provider
        // table spread the hot rows over 2.9 MB and the walk slowed 18%).
        let specials = ends.len();
        let mut next = specials;
        for &t in &order {
            if renumbered[t as usize] == usize::MAX {
                renumbered[t as usize] = next;
                next += 1;
            }
        }
        let stride2 = n.next_power_of_two().trailing_zeros();
        // In `u32` range: `check` bounded the states and the stride.
        let len = states << stride2;
        // Each row written once, in breadth-first order: the failure
        // state's row (complete, since it is shallower), then the state's
        // own edges; the root's missing edges lead back to it.
        let mut trans = vec![0u32; len];
        for &t in &order {
            let t = t as usize;
            let at = renumbered[t] << stride2;
            if t == 0 {
                trans[at..at + n].fill(at as u32);
            } else {
                let from = renumbered[fail[t] as usize] << stride2;
                trans.copy_within(from..from + n, at);
            }
            for &(c, u) in kids_of(t) {
                trans[at + usize::from(c)] = (renumbered[u as usize] << stride2) as u32;
            }
        }
        // What the walk's unchecked step relies on: from a row's start, any
        // class stays within the table (the rows are written above; this
        // pass over them costs a tenth of a millisecond).
        let row = 1usize << stride2;
        let start = renumbered[0] << stride2;
        let is_row = |t: usize| t.is_multiple_of(row) && t + row <= len;
        if usize::from(classes.iter().copied().max().unwrap_or(0)) >= row
            || !is_row(start)
            || !trans.iter().all(|&t| is_row(t as usize))
        {
            return Err("cannot build keyword automaton: a transition leaves the table".into());
        }
        Ok(Keywords {
            classes,
            trans,
            stride2,
            // Below the first state when none is special.
            special_max: ((specials << stride2) as u32).wrapping_sub(1),
            ends,
            matched,
            lens: keywords.iter().map(|k| k.len() as u32).collect(),
            start: start as u32,
            max_len: keywords.iter().map(|k| k.len()).max().unwrap_or(0),
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
    /// after the previous walks' hits. A part is at least `K` bytes long,
    /// so that each walk's start lies past the previous part's start (a
    /// user's keyword longer than a part made two walks report the same
    /// hits).
    pub(crate) fn hits(&self, data: &[u8], mut hit: impl FnMut(usize, usize, usize)) {
        let each = |s: u32, end: usize, hit: &mut dyn FnMut(usize, usize, usize)| {
            if s > self.special_max {
                return;
            }
            let i = (s >> self.stride2) as usize;
            let from = if i == 0 { 0 } else { self.ends[i - 1] as usize };
            for &pid in &self.matched[from..self.ends[i] as usize] {
                hit(pid as usize, end - self.lens[pid as usize] as usize, end);
            }
        };
        if data.len() < SPLIT_MIN.max(WALKS * self.max_len) {
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

    /// The walk's step from `s` on byte `b`.
    ///
    /// # Safety
    ///
    /// `trans` and `classes` are an automaton's, and `s` its start state or
    /// what a step returned: `new` checked that those are rows' starts, each
    /// row whole in `trans`, and every class below a row's length, so the
    /// index is in bounds.
    #[inline(always)]
    unsafe fn step(trans: &[u32], classes: &[u8; 256], s: usize, b: u8) -> usize {
        let i = s + usize::from(classes[usize::from(b)]);
        debug_assert!(i < trans.len());
        // SAFETY: the caller's (above).
        unsafe { *trans.get_unchecked(i) as usize }
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
        let (trans, classes) = (&self.trans[..], &self.classes);
        let special = self.special_max as usize;
        // Five walks written out, each state a variable of its own and each
        // byte read unchecked: written as loops over arrays, the walk's
        // code depended on what LLVM made of the rest of the crate, and an
        // unrelated change in `decode.rs` once took it from 21 to 34
        // instructions a byte (the states spilled, the bounds checked;
        // callgrind, the cargo registry: 2.09 G → 2.47 G in all).
        const _: () = assert!(WALKS == 5, "next_special_n walks five parts");
        let n = len - k;
        let [p0, p1, p2, p3, p4] = from.map(|f| &data[f + k..f + len]);
        let [mut s0, mut s1, mut s2, mut s3, mut s4] = states.map(|s| s as usize);
        for i in 0..n {
            // SAFETY: each part is `n` bytes long (sliced just above) and
            // `i < n`; the steps are this automaton's, from its start state
            // or a step's result (`hits` starts every walk in `start`).
            unsafe {
                s0 = Self::step(trans, classes, s0, *p0.get_unchecked(i));
                s1 = Self::step(trans, classes, s1, *p1.get_unchecked(i));
                s2 = Self::step(trans, classes, s2, *p2.get_unchecked(i));
                s3 = Self::step(trans, classes, s3, *p3.get_unchecked(i));
                s4 = Self::step(trans, classes, s4, *p4.get_unchecked(i));
            }
            // (`min`, not a test of each: a chain of compares and branches
            // cost 13% of the walk.)
            if s0.min(s1).min(s2).min(s3).min(s4) <= special {
                *states = [s0, s1, s2, s3, s4].map(|s| s as u32);
                return Some(i + 1);
            }
        }
        *states = [s0, s1, s2, s3, s4].map(|s| s as u32);
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
        let (trans, classes) = (&self.trans[..], &self.classes);
        let special = self.special_max as usize;
        let mut s = *state as usize;
        let rest = &data[from..];
        let mut quads = rest.chunks_exact(4);
        // SAFETY (each step): this automaton's table; `s` its start state
        // or a step's result (`hits` starts every walk in `start`).
        for (q, quad) in quads.by_ref().enumerate() {
            for (k, &b) in quad.iter().enumerate() {
                s = unsafe { Self::step(trans, classes, s, b) };
                if s <= special {
                    *state = s as u32;
                    return Some(from + 4 * q + k + 1);
                }
            }
        }
        let tail = rest.len() - quads.remainder().len();
        for (k, &b) in quads.remainder().iter().enumerate() {
            s = unsafe { Self::step(trans, classes, s, b) };
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
    use aho_corasick::{AhoCorasick, MatchKind};

    /// The walks give the iterator's hits, in its order, at every length
    /// around the split and with keywords across the middle.
    #[test]
    fn hits_are_the_overlapping_iterator_hits() {
        let engine = crate::Engine::builtin().unwrap();
        let longest = engine.keywords().iter().map(String::len).max().unwrap();
        let split = SPLIT_MIN.max(WALKS * longest);
        agrees_with_iterator(engine.keywords(), |round, r| {
            if round < 20 {
                r % split
            } else {
                split - 40 + round * 7 + r % 3000
            }
        });
    }

    /// A user's keywords longer than a split part would be: split only
    /// where each part holds the longest (two walks reported the same hits
    /// where a part was shorter).
    #[test]
    fn long_keywords_split_alike() {
        let mut keywords: Vec<String> = ["token", "ke", "x_", "-----begin"]
            .map(String::from)
            .to_vec();
        keywords.push("ab".repeat(150));
        keywords.push(format!("{}z", "q".repeat(999)));
        const { assert!(WALKS * 1000 > SPLIT_MIN) };
        agrees_with_iterator(&keywords, |_, r| r % (3 * WALKS * 1000));
    }

    /// Random buffers of `len(round, random)` bytes made of `keywords`
    /// (each byte's case at random) and filler: `hits` gives what
    /// `aho-corasick`'s overlapping iterator gives.
    fn agrees_with_iterator(keywords: &[String], len: impl Fn(usize, usize) -> usize) {
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
            let len = len(round, next());
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

    /// The automaton built on its thread walks as the one built here; what
    /// the build refuses is refused before any thread starts.
    #[test]
    fn built_on_a_thread_or_here_alike() {
        let keywords: Vec<String> = ["sk_live_", "sk_", "ghp_", "%"].map(String::from).to_vec();
        let handle = KeywordsHandle::spawn(Arc::new(keywords.clone())).unwrap();
        let here = Keywords::new(&keywords).unwrap();
        let data = b"x sk_live_abc ghp_1 %41 SK_";
        let (mut a, mut b) = (Vec::new(), Vec::new());
        handle.get().hits(data, |p, s, e| a.push((p, s, e)));
        here.hits(data, |p, s, e| b.push((p, s, e)));
        assert_eq!(a, b);
        assert_eq!(
            a,
            [(1, 2, 5), (0, 2, 10), (2, 14, 18), (3, 20, 21), (1, 24, 27)]
        );
        let e = KeywordsHandle::spawn(Arc::new(vec!["ab".into(), String::new()])).err();
        assert_eq!(
            e.as_deref(),
            Some("cannot build keyword automaton: empty keyword")
        );
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
