//! How much a value looks like a name rather than a secret.
//!
//! Entropy cannot tell `SensitiveString2048` (3.9 bits per byte) from a
//! password: both mix cases and digits. What tells them apart is that a
//! name is made of words. A value is *identifier-like* when it only holds
//! identifier characters (`[A-Za-z0-9_.-]`) and its letters split, at case
//! changes, separators and digit runs, into words of the vocabulary
//! (`words.txt`) or into short abbreviations (`x`, `V`), with at least half
//! of the letters in words of three letters or more. Human passwords carry a
//! symbol (`Mapleorbit91@`) or a word outside a programmer's vocabulary;
//! random tokens split into pieces no vocabulary holds (`hrykevr`).

use std::collections::HashSet;
use std::sync::OnceLock;

static WORDS_TXT: &str = include_str!("words.txt");

fn vocabulary() -> &'static HashSet<&'static str> {
    static VOCAB: OnceLock<HashSet<&'static str>> = OnceLock::new();
    VOCAB.get_or_init(|| {
        WORDS_TXT
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect()
    })
}

/// Whether lowercase `w` splits entirely into vocabulary words (dynamic
/// programming over split points; pieces of 2 letters or more).
fn segments(w: &str) -> bool {
    let vocab = vocabulary();
    let n = w.len();
    if n > 64 {
        return false;
    }
    let mut ok = [false; 65];
    ok[0] = true;
    for end in 2..=n {
        for start in (0..=end - 2).rev() {
            if ok[start] && w.is_char_boundary(start) && vocab.contains(&w[start..end]) {
                ok[end] = true;
                break;
            }
        }
    }
    ok[n]
}

/// The words of an identifier: split at `_ . - :` and digits, then at
/// camelCase boundaries (`XMLHttp` gives `XML`, `Http`).
fn words(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in value.split(|c: char| !c.is_ascii_alphabetic()) {
        let b = part.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            let lower_to_upper = b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase();
            let acronym_end = b[i - 1].is_ascii_uppercase()
                && b[i].is_ascii_uppercase()
                && b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            if lower_to_upper || acronym_end {
                out.push(&part[start..i]);
                start = i;
            }
        }
        if start < b.len() {
            out.push(&part[start..]);
        }
    }
    out
}

/// See the module docs.
pub(crate) fn identifier_like(value: &[u8]) -> bool {
    if !value
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b':'))
    {
        return false;
    }
    let Ok(s) = std::str::from_utf8(value) else {
        return false;
    };
    let mut letters = 0;
    let mut known = 0;
    for w in words(s) {
        letters += w.len();
        if w.len() <= 2 {
            continue;
        }
        if !segments(&w.to_ascii_lowercase()) {
            return false;
        }
        known += w.len();
    }
    // Digit runs: names carry few (`x25519`, `V3`, `2048`); a random
    // alphanumeric token alternates letters and digits many times.
    let digit_runs = s
        .as_bytes()
        .split(|b| !b.is_ascii_digit())
        .filter(|r| !r.is_empty())
        .count();
    letters >= 3 && known * 2 >= letters && digit_runs <= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_identifier_like() {
        for v in [
            "SensitiveString2048",
            "XmlStringMaxLen256",
            "x25519_generate_private_key",
            "my_recaptchaV3Token",
            "ChangeToken",
            "windows_core::BSTR",
            "api-key-header",
            "getPasswordHash",
        ] {
            assert!(identifier_like(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn secrets_are_not() {
        for v in [
            "Mapleorbit91@",
            "Mapleorbit91",
            "8KFbhrykevrFS2Xu1DJOAf3y9P98zlJE",
            "08db370820a397e5650f763d086dc7a9c5ee7b03",
            "q8R!v2xz",
            "SMTP_PASSWORD_7vGq2LmX9pRt",
            "Zx8qLm2vR",
            "U3a_dMPFSH_Km4JSY450peARDC2vsF0czqunCcaE",
        ] {
            assert!(!identifier_like(v.as_bytes()), "{v}");
        }
    }
}
