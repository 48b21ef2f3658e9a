//! A pre-check before a rule's regex runs in a keyword window: the
//! secret's bytes, in a row.
//!
//! Most keyword windows confirm nothing: a provider's name in a comment, a
//! URL, a doc line. For such a window the regex costs its search and, the
//! first time the rule's keyword occurs in a process, its compilation
//! (about a million instructions for a provider entry's
//! `(?i:kw)[^\r\n]{0,40}?[^A-Za-z0-9\r\n]([0-9a-f]{32})...`). Every match
//! holds its secret, and where the secret group is a part of every match
//! (not optional, not in an alternation) the window must hold a run of at
//! least the group's shortest length of bytes the group can match: 32 hex
//! digits in a row, here. A window without one is skipped, which proves
//! there is no match in it: no finding changes.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Shorter secrets are too common a run to tell anything.
const MIN_RUN: usize = 8;
/// A byte set larger than this (`[^\s"']`) is met by most windows: the
/// pre-check would only add its cost.
const MAX_BYTES: usize = 128;

/// The run of secret bytes every match of a rule holds.
pub(crate) struct SecretRun {
    bytes: [bool; 256],
    min: usize,
}

impl SecretRun {
    /// The run for a rule's regex `hir` and its `secret_group` (the whole
    /// match for `None` or 0), or `None` when the group may be absent from
    /// a match or the run would not tell windows apart.
    pub(crate) fn of(hir: &Hir, group: Option<usize>) -> Option<SecretRun> {
        let part = match group {
            None | Some(0) => hir,
            Some(g) => mandatory_group(hir, g as u32)?,
        };
        let min = part.properties().minimum_len()?;
        if min < MIN_RUN {
            return None;
        }
        let mut bytes = [false; 256];
        add_bytes(part, &mut bytes);
        if bytes.iter().filter(|&&b| b).count() > MAX_BYTES {
            return None;
        }
        Some(SecretRun { bytes, min })
    }

    /// False when `window` holds no run of the secret's bytes long enough:
    /// no match of the rule lies within it.
    pub(crate) fn may_match(&self, window: &[u8]) -> bool {
        let mut run = 0;
        for &b in window {
            if self.bytes[usize::from(b)] {
                run += 1;
                if run >= self.min {
                    return true;
                }
            } else {
                run = 0;
            }
        }
        false
    }
}

/// Capture group `g` when every match of `hir` goes through it: the
/// regex itself or an item of its top-level concatenation.
fn mandatory_group(hir: &Hir, g: u32) -> Option<&Hir> {
    let is_group = |h: &Hir| matches!(h.kind(), HirKind::Capture(c) if c.index == g);
    match hir.kind() {
        HirKind::Capture(c) if c.index == g => Some(&c.sub),
        HirKind::Concat(items) => items.iter().find(|h| is_group(h)).map(|h| match h.kind() {
            HirKind::Capture(c) => &*c.sub,
            _ => h,
        }),
        _ => None,
    }
}

/// Every byte a match of `hir` may hold.
fn add_bytes(hir: &Hir, bytes: &mut [bool; 256]) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(l) => l.0.iter().for_each(|&b| bytes[usize::from(b)] = true),
        HirKind::Class(Class::Bytes(c)) => {
            for r in c.ranges() {
                (r.start()..=r.end()).for_each(|b| bytes[usize::from(b)] = true);
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            for r in c.ranges() {
                let (lo, hi) = (u32::from(r.start()), u32::from(r.end()));
                (lo.min(0x7f)..=hi.min(0x7f)).for_each(|b| bytes[b as usize] = true);
                if hi > 0x7f {
                    // Their UTF-8 encodings: every byte from 0x80.
                    bytes[0x80..].iter_mut().for_each(|b| *b = true);
                }
            }
        }
        HirKind::Repetition(r) => add_bytes(&r.sub, bytes),
        HirKind::Capture(c) => add_bytes(&c.sub, bytes),
        HirKind::Concat(items) | HirKind::Alternation(items) => {
            items.iter().for_each(|h| add_bytes(h, bytes))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SecretRun;

    fn run(pattern: &str, group: Option<usize>) -> Option<SecretRun> {
        SecretRun::of(&crate::re2::parse(pattern).unwrap().hir, group)
    }

    #[test]
    fn a_window_needs_a_run_of_the_secret_bytes() {
        let r = run(
            r"(?i:acme|acmeco)[^\r\n]{0,40}?[^A-Za-z0-9\r\n]([0-9a-f]{32})(?:[^0-9a-f]|$)",
            Some(1),
        )
        .unwrap();
        assert_eq!(r.min, 32);
        let token = "0123456789abcdef0123456789abcdef";
        assert!(r.may_match(format!("acme_key = \"{token}\"").as_bytes()));
        // 31 hex digits, then a letter outside the set.
        assert!(!r.may_match(format!("acme_key = \"{}g\"", &token[..31]).as_bytes()));
        assert!(!r.may_match(b"see https://acme.example/docs for the key"));
        // The whole match (no group) holds the keyword's bytes too.
        let whole = run(r"\bghp_[A-Za-z0-9]{36}\b", None).unwrap();
        assert_eq!(whole.min, 40);
        assert!(whole.may_match(format!("ghp_{}", "a1".repeat(18)).as_bytes()));
        assert!(!whole.may_match(format!("ghp-{}", "a1".repeat(18)).as_bytes()));
    }

    #[test]
    fn no_run_where_it_proves_nothing() {
        // The group is optional, or one branch of several.
        assert!(run(r"key=([0-9a-f]{32})?", Some(1)).is_none());
        assert!(run(r"key=(?:([0-9a-f]{32})|x)", Some(1)).is_none());
        // Too short, or nearly any byte.
        assert!(run(r"pin=([0-9]{4})", Some(1)).is_none());
        assert!(run(r#"password=([^\s"']{8,})"#, Some(1)).is_none());
    }
}
