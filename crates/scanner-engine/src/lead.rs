//! Inferring a rule's `keyword_lead` from its regex.
//!
//! Stage 1 opens a window `keyword_lead` bytes before each keyword hit; by
//! default that is `max_len`, because in general a match may start anywhere
//! before its keyword. Most provider rules are `ghp_...`, `xoxb-...`,
//! `(?i)["']?password...`: every match *begins* with a keyword, after at
//! most a few bytes. For those, scanning `max_len` bytes before each hit is
//! wasted regex time (most of the engine's cost on real trees).
//!
//! The inference enumerates the first bytes every match must begin with, as
//! a bounded set of paths (one byte set per position, alternations and
//! bounded repetitions expanded), and looks in each path for one of the
//! rule's keywords, case-insensitively: a position whose byte set lies
//! within `{k[i], K[i]}` for every byte of keyword `k`. The lead is the
//! largest offset of that keyword over all paths. Anything it cannot
//! follow (a Unicode class, an unbounded repetition, too many paths) ends
//! the path there: if no keyword was seen before that point, there is no
//! inference and the rule keeps `max_len`. So an inferred lead is a proof:
//! every match has a keyword occurrence starting at most `lead` bytes
//! after the match start, which is exactly what the window needs.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Longest prefix followed, in bytes.
const MAX_PATH: usize = 48;
/// Most paths followed at once.
const MAX_PATHS: usize = 512;

/// A set of bytes, as a 256-bit mask.
#[derive(Clone, Copy, PartialEq)]
struct ByteSet([u64; 4]);

impl ByteSet {
    fn one(b: u8) -> ByteSet {
        let mut s = ByteSet([0; 4]);
        s.add(b);
        s
    }
    fn add(&mut self, b: u8) {
        self.0[(b >> 6) as usize] |= 1 << (b & 63);
    }
    fn contains(&self, b: u8) -> bool {
        self.0[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }
    /// The set split into case-fold groups (`{a, A}`, `{-}`, ...).
    fn case_groups(&self) -> Vec<ByteSet> {
        let mut groups = Vec::new();
        for b in 0..=255u8 {
            if !self.contains(b) || (b.is_ascii_uppercase() && self.contains(b | 0x20)) {
                continue;
            }
            let mut g = ByteSet::one(b);
            if b.is_ascii_lowercase() && self.contains(b & !0x20) {
                g.add(b & !0x20);
            }
            groups.push(g);
            if groups.len() > 4 {
                break;
            }
        }
        groups
    }
    fn subset_of(&self, other: &ByteSet) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a & !b == 0)
    }
}

/// A prefix every match of one branch begins with; `open` while the bytes
/// after it are still known (more can be appended).
#[derive(Clone)]
struct Path {
    sets: Vec<ByteSet>,
    open: bool,
}

/// The inferred lead for a regex and its (lowercase) keywords, or `None`
/// when it cannot be proven.
pub(crate) fn infer(hir: &Hir, keywords: &[String]) -> Option<usize> {
    if keywords.is_empty() {
        return None;
    }
    let folded: Vec<Vec<ByteSet>> = keywords
        .iter()
        .map(|k| {
            k.bytes()
                .map(|b| {
                    let mut s = ByteSet::one(b.to_ascii_lowercase());
                    s.add(b.to_ascii_uppercase());
                    s
                })
                .collect()
        })
        .collect();
    let start = vec![Path {
        sets: Vec::new(),
        open: true,
    }];
    let paths = expand(hir, start, &folded)?;
    let mut lead = 0;
    for p in &paths {
        let first = (0..p.sets.len()).find(|&o| {
            folded.iter().any(|k| {
                o + k.len() <= p.sets.len()
                    && k.iter().zip(&p.sets[o..]).all(|(kb, pb)| pb.subset_of(kb))
            })
        })?;
        lead = lead.max(first);
    }
    Some(lead)
}

/// Appends what `hir` must begin with to every open path.
fn expand(hir: &Hir, paths: Vec<Path>, kws: &[Vec<ByteSet>]) -> Option<Vec<Path>> {
    if paths.iter().all(|p| !p.open) {
        return Some(paths);
    }
    let out = match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => paths,
        HirKind::Literal(lit) => {
            let mut paths = paths;
            for p in paths.iter_mut().filter(|p| p.open) {
                for &b in lit.0.iter() {
                    push(p, ByteSet::one(b), kws);
                }
            }
            paths
        }
        HirKind::Class(class) => {
            // A small class (`[bp]`, `[Ss]`) splits the path, so that each
            // branch can still spell a different keyword (`xoxb-`, `xoxp-`).
            let set = class_set(class);
            let groups = set.map(|s| s.case_groups()).filter(|g| g.len() <= 4);
            let mut out = Vec::with_capacity(paths.len());
            for mut p in paths {
                if !p.open {
                    out.push(p);
                    continue;
                }
                match (&groups, set) {
                    (Some(groups), _) => {
                        for &g in groups {
                            let mut q = p.clone();
                            push(&mut q, g, kws);
                            out.push(q);
                        }
                    }
                    (None, Some(s)) => {
                        push(&mut p, s, kws);
                        out.push(p);
                    }
                    (None, None) => {
                        p.open = false;
                        out.push(p);
                    }
                }
            }
            out
        }
        HirKind::Capture(c) => expand(&c.sub, paths, kws)?,
        HirKind::Concat(subs) => {
            let mut paths = paths;
            for sub in subs {
                paths = expand(sub, paths, kws)?;
            }
            paths
        }
        HirKind::Alternation(alts) => {
            let (open, mut out): (Vec<Path>, Vec<Path>) = paths.into_iter().partition(|p| p.open);
            for alt in alts {
                out.extend(expand(alt, open.clone(), kws)?);
            }
            out
        }
        HirKind::Repetition(rep) => {
            let min = rep.min as usize;
            let (open, mut out): (Vec<Path>, Vec<Path>) = paths.into_iter().partition(|p| p.open);
            let mut cur = open;
            for _ in 0..min.min(MAX_PATH) {
                cur = expand(&rep.sub, cur, kws)?;
            }
            if min > MAX_PATH {
                for p in &mut cur {
                    p.open = false;
                }
            }
            match rep.max {
                Some(max) if (max as usize) <= MAX_PATH => {
                    // Each optional copy: stop here, or take one more.
                    for _ in min..max as usize {
                        if cur.iter().all(|p| !p.open) {
                            break;
                        }
                        let next = expand(&rep.sub, cur.clone(), kws)?;
                        // Stopping here: still open, for what follows.
                        out.extend(cur);
                        cur = next;
                    }
                    out.extend(cur);
                }
                // Unbounded or long: what follows is unknown.
                _ => out.extend(cur.into_iter().map(|mut p| {
                    p.open = false;
                    p
                })),
            }
            out
        }
    };
    if out.len() > MAX_PATHS {
        return None;
    }
    Some(out)
}

/// Appends one position; a path that now ends with a keyword is closed:
/// its first keyword is all the inference needs, and following it further
/// would only multiply paths.
fn push(p: &mut Path, s: ByteSet, kws: &[Vec<ByteSet>]) {
    if p.sets.len() >= MAX_PATH {
        p.open = false;
        return;
    }
    p.sets.push(s);
    let n = p.sets.len();
    if kws.iter().any(|k| {
        k.len() <= n
            && k.iter()
                .zip(&p.sets[n - k.len()..])
                .all(|(kb, pb)| pb.subset_of(kb))
    }) {
        p.open = false;
    }
}

/// The bytes a class matches at one position; `None` for a class that
/// matches multi-byte characters (the position is then unknown).
fn class_set(class: &Class) -> Option<ByteSet> {
    let mut s = ByteSet([0; 4]);
    match class {
        Class::Bytes(c) => {
            for r in c.iter() {
                for b in r.start()..=r.end() {
                    s.add(b);
                }
            }
        }
        Class::Unicode(c) => {
            for r in c.iter() {
                if r.end() as u32 > 0x7f {
                    return None;
                }
                for b in r.start() as u8..=r.end() as u8 {
                    s.add(b);
                }
            }
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lead(re: &str, kws: &[&str]) -> Option<usize> {
        let hir = crate::re2::parse(re).unwrap().hir;
        let kws: Vec<String> = kws.iter().map(|k| k.to_string()).collect();
        infer(&hir, &kws)
    }

    #[test]
    fn literal_prefixes() {
        assert_eq!(lead(r"\b(ghp_[A-Za-z0-9]{36})\b", &["ghp_"]), Some(0));
        assert_eq!(
            lead(r"(?i)\b(AKIA|ASIA)[A-Z2-7]{16}", &["akia", "asia"]),
            Some(0)
        );
        assert_eq!(
            lead(
                r#"(?i)["']?(?:password|passwd|pwd)\s*="#,
                &["password", "passwd", "pwd"]
            ),
            Some(1)
        );
        assert_eq!(lead(r"xox[bp]-[0-9]+", &["xoxb-", "xoxp-"]), Some(0));
        assert_eq!(lead(r"[ \t]{0,3}tok_x", &["tok_"]), Some(3));
    }

    #[test]
    fn no_proof_no_lead() {
        // The keyword can come anywhere in the match.
        assert_eq!(lead(r"[a-z]+_key=tok_", &["tok_"]), None);
        assert_eq!(lead(r"[a-z]{0,60}tok_", &["tok_"]), None);
        // One branch lacks the keyword.
        assert_eq!(lead(r"(?:tok_|abc_)[0-9]+", &["tok_"]), None);
        // Only part of the keyword is guaranteed.
        assert_eq!(lead(r"to[kx]_[0-9]+", &["tok_"]), None);
        assert_eq!(lead(r"tok", &["tok_"]), None);
    }

    #[test]
    fn optional_copies_continue_with_what_follows() {
        assert_eq!(lead(r"a?b?tok_", &["tok_"]), Some(2));
        assert_eq!(lead(r"(?:ab){0,2}tok_", &["tok_"]), Some(4));
    }
}
