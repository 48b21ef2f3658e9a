//! How much a value looks like a name rather than a secret.
//!
//! Entropy cannot tell `SensitiveString2048` (3.9 bits per byte) from a
//! password: both mix cases and digits. What tells them apart is that a
//! name is made of words. A value is *identifier-like* when it only holds
//! identifier characters (`[A-Za-z0-9_.-]`) and its letters split, at case
//! changes, separators and digit runs, into words of the vocabulary
//! (`words.txt`) or into abbreviations (`x`, `V`, an all-caps word of up to
//! 5 letters), with at least half of the letters in vocabulary words of three
//! letters or more, and at most three digit runs. Human passwords carry a
//! symbol (`Mapleorbit91@`) or a word outside a programmer's vocabulary;
//! random tokens split into pieces no vocabulary holds (`hrykevr`).
//!
//! The vocabulary is generated (`scripts/gen_words.py`): a hand-written
//! base plus the 8000 most frequent identifier words of the Rust crates
//! a-l in the cargo registry. Measured (`measure_on_registry_identifiers`)
//! on 121k identifiers of 12+ characters with a digit or mixed case from
//! the held-out crates m-z (mostly Win32 bindings, GUID and hash constants
//! included): 61% identifier-like; random alphanumeric tokens of 16-40
//! characters: 0 of 10,000. A prototype of the same test chose the size:
//! 3000 / 8000 / 15000 words gave 39% / 54% / 63% of those identifiers,
//! 1 in 10,000 random tokens for all three, and 1.0% / 1.6% / 9.5% of
//! passwords made of two common words and digits without a symbol.

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
            // An unknown acronym (`DKMT`, `NDIS`) is an abbreviation too.
            if w.len() <= 5 && w.bytes().all(|b| b.is_ascii_uppercase()) {
                continue;
            }
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

/// A symbol or an error code rather than a secret: an all-caps constant of
/// two words or more (`ERR_R_MALLOC_FAILURE`, `SSL_R_BAD_PASSWORD`,
/// `X509_V_ERR`), or one all-caps word, followed by `:` and a number
/// (`PASSWORD:17`); or a number followed by `:` and a number or a word.
/// These are the rows of error tables: in OpenSSL's `crypto/err/openssl.txt`
/// (`PEM_R_PROBLEMS_GETTING_PASSWORD:109:problems getting password`) the
/// value after `PASSWORD:` reads `109:problems`.
///
/// A number alone is not one: a PIN is a password.
pub(crate) fn symbol_or_code(value: &[u8]) -> bool {
    let (head, tail) = match memchr::memchr(b':', value) {
        Some(i) => (&value[..i], Some(&value[i + 1..])),
        None => (value, None),
    };
    let number = |s: &[u8]| (1..=6).contains(&s.len()) && s.iter().all(u8::is_ascii_digit);
    let word = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_alphabetic);
    // `X509`, `SHA256`, `ERR`: capitals, then digits.
    let caps = |s: &[u8]| {
        let letters = s.iter().take_while(|b| b.is_ascii_uppercase()).count();
        letters > 0 && s[letters..].iter().all(u8::is_ascii_digit)
    };
    if number(head) {
        return tail.is_some_and(|t| number(t) || word(t));
    }
    if !head.split(|&b| b == b'_').all(caps) {
        return false;
    }
    match tail {
        None => memchr::memchr(b'_', head).is_some(),
        Some(t) => number(t),
    }
}

/// A looser test for a value that must be a token, not a name (the
/// `[[providers]]` entries matched by keyword and shape): letters only, in
/// three or more camelCase words of three letters or more, at least half of
/// the letters in vocabulary words. `getCurrentDirectiveIndex` is a name
/// although `directive` is not in the vocabulary; a random token of
/// letters splits into pieces of one or two (`qRkvXzLmNp`), and one with a
/// digit is not a name here.
pub(crate) fn camel_name(value: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(value) else {
        return false;
    };
    if !s.bytes().all(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    let ws = words(s);
    let known: usize = ws
        .iter()
        .filter(|w| segments(&w.to_ascii_lowercase()))
        .map(|w| w.len())
        .sum();
    ws.len() >= 3 && ws.iter().all(|w| w.len() >= 3) && known * 2 >= s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_names_are_names_and_tokens_are_not() {
        for v in [
            "WebpackOptionsNormalized",
            "getCurrentDirectiveIndex",
            "enabledChunkLoadingTypes",
        ] {
            assert!(camel_name(v.as_bytes()), "{v}");
        }
        for v in [
            "q8Rk2vXz1LmN4pT7wY0aBcD3",
            "qRkvXzLmNpTwYaBcDeFgHiJk",
            "ZXC2JK3HV4TY5UIO6PLK",
            "hnqVxsKzfCnSiZBAzijdGWuJ",
            "Webpack",
        ] {
            assert!(!camel_name(v.as_bytes()), "{v}");
        }
    }

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
    fn symbols_and_error_codes() {
        for v in [
            "178:no",
            "109:problems",
            "PASSWORD:17",
            "ERR_R_MALLOC_FAILURE",
            "ERR_R_MALLOC_FAILURE:65",
            "SSL_R_BAD_PASSWORD",
            "X509_V_ERR_CERT_REJECTED:28",
        ] {
            assert!(symbol_or_code(v.as_bytes()), "{v}");
        }
        for v in [
            "83920174",
            "ADMIN_2024",
            "Hunter_Two7",
            "Q8R_v2xz",
            "7vGq2LmX9pRt",
            "q8R!v2xz:17",
            "PASSWORD",
            "4711:Mapleorbit91@",
            "1234567:no",
        ] {
            assert!(!symbol_or_code(v.as_bytes()), "{v}");
        }
    }

    /// The measurement behind the vocabulary and thresholds: identifiers of
    /// real Rust sources that a generic rule could capture (12+ characters,
    /// mixed case or a digit), from crates the vocabulary was not built
    /// from, against random tokens of the lengths the rules accept.
    #[test]
    #[ignore = "reads ~/.cargo/registry/src; run with --ignored --nocapture to measure"]
    fn measure_on_registry_identifiers() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        // Crates from "m" on: scripts/gen_words.py builds the vocabulary
        // from the others.
        let root =
            std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo/registry/src");
        let mut files = Vec::new();
        for index in std::fs::read_dir(&root).unwrap().flatten() {
            for krate in std::fs::read_dir(index.path()).unwrap().flatten() {
                if *krate.file_name().to_string_lossy() >= *"m" {
                    walk(&krate.path(), &mut files);
                }
            }
        }
        let mut idents = HashSet::new();
        for f in files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                let b = w.as_bytes();
                let hard = b.iter().any(u8::is_ascii_digit)
                    || (b.iter().any(u8::is_ascii_uppercase)
                        && b.iter().any(u8::is_ascii_lowercase));
                if w.len() >= 12 && !b[0].is_ascii_digit() && hard {
                    idents.insert(w.to_owned());
                }
            }
        }
        let named = idents
            .iter()
            .filter(|w| identifier_like(w.as_bytes()))
            .count();
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let alnum = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let (mut tokens, mut flagged) = (0, 0);
        for len in [16usize, 20, 24, 32, 40] {
            for _ in 0..2000 {
                let t: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x >> 12;
                        x ^= x << 25;
                        x ^= x >> 27;
                        alnum[(x.wrapping_mul(0x2545_F491_4F6C_DD1D) % 62) as usize]
                    })
                    .collect();
                tokens += 1;
                flagged += identifier_like(&t) as usize;
            }
        }
        println!(
            "registry identifiers: {named} of {} identifier-like ({:.1}%); \
             random tokens: {flagged} of {tokens} identifier-like ({:.2}%)",
            idents.len(),
            100.0 * named as f64 / idents.len() as f64,
            100.0 * flagged as f64 / tokens as f64
        );
        assert_eq!(flagged, 0);
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
