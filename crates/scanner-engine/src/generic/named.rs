//! Attribution: which providers the name of a generic finding's value
//! names (`MAILCHIMP_API_KEY = "..."`).
//!
//! A `[[providers]]` entry without a distinctive prefix matches only with
//! one of its keywords on the token's line, at most
//! [`CONTEXT_GAP`](crate::provider::CONTEXT_GAP) bytes before it. When the
//! value fits the entry's shape, the entry's rule finds it and the generic
//! candidate over the same bytes is dropped as its duplicate: the finding
//! carries the provider's rule id. So a generic finding that reaches
//! confidence with such a keyword before it, in the same reach, holds a
//! value that the provider's rule did not report: it misses the provider's
//! shape (or failed that rule's entropy floor). It stays generic, one level
//! lower, tagged `shape-mismatch:<rule id>` (`confidence.rs`).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use aho_corasick::AhoCorasick;

use crate::provider::CONTEXT_GAP;
use crate::RuleInfo;

/// The keywords of the provider rules that need one, searched at once.
pub(crate) struct ProviderNames {
    /// `None` when no rule has keyword context.
    ac: Option<AhoCorasick>,
    /// Per pattern of `ac`: the tag of its rule.
    tags: Vec<&'static str>,
    /// The longest keyword (bytes).
    longest: usize,
}

impl ProviderNames {
    pub(crate) fn new(infos: &[RuleInfo]) -> ProviderNames {
        let mut words = Vec::new();
        let mut tags = Vec::new();
        for info in infos {
            let Some(p) = &info.provider else { continue };
            for k in &p.context {
                words.push(k.clone());
                tags.push(intern(format!("shape-mismatch:{}", info.id)));
            }
        }
        let ac = (!words.is_empty()).then(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&words)
                .expect("provider keywords build")
        });
        let longest = words.iter().map(String::len).max().unwrap_or(0);
        ProviderNames { ac, tags, longest }
    }

    /// The tags of the provider rules whose keyword ends on the line of
    /// `data[value]`, at most `CONTEXT_GAP + 1` bytes before it, each once,
    /// sorted. Stricter than the rule's regex, which lets a keyword run on
    /// into a word (`eventbriteapi.com`): a keyword followed by a lowercase
    /// letter names nothing here (`devto` in `devtool`), since lowering a
    /// finding on a word's prefix would be a guess.
    pub(crate) fn named(&self, data: &[u8], value: usize) -> Vec<&'static str> {
        let Some(ac) = &self.ac else {
            return Vec::new();
        };
        // Only the bytes a keyword in reach can occupy: a minified line
        // may be megabytes long.
        let window = value.saturating_sub(CONTEXT_GAP + 1 + self.longest);
        let start = memchr::memrchr(b'\n', &data[window..value]).map_or(window, |i| window + i + 1);
        let reach = value.saturating_sub(CONTEXT_GAP + 1);
        let mut out: Vec<&'static str> = ac
            .find_overlapping_iter(&data[start..value])
            .filter(|m| {
                let end = start + m.end();
                end >= reach && end < value && !data[end].is_ascii_lowercase()
            })
            .map(|m| self.tags[m.pattern().as_usize()])
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A tag made once per process for each distinct text: finding tags are
/// `&'static str`, and rule ids are known only once the rules are read.
fn intern(s: String) -> &'static str {
    static SEEN: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&t) = seen.get(s.as_str()) {
        return t;
    }
    let t: &'static str = Box::leak(s.into_boxed_str());
    seen.insert(t);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_once() {
        let a = intern("shape-mismatch:x".into());
        let b = intern(String::from("shape-mismatch:x"));
        assert!(std::ptr::eq(a, b));
    }
}
