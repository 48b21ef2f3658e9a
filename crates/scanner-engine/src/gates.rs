//! The checks a regex match passes before it becomes a finding, and the
//! fingerprint.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use sha2::{Digest, Sha256};

/// Shannon entropy of `bytes` in bits per byte (0 for empty input).
pub fn shannon_entropy(bytes: &[u8]) -> f32 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    let mut h = 0.0f64;
    for &c in counts.iter().filter(|&&c| c > 0) {
        let p = c as f64 / n;
        h -= p * p.log2();
    }
    h as f32
}

/// The finding fingerprint: lowercase hex of the first 16 bytes of
/// `SHA-256(rule_id || 0x00 || secret)`, 32 characters.
///
/// Baselines store it, so this definition must never change: it depends on
/// the rule id and the secret bytes only, not on the path, line or match
/// context, so a baseline survives code moving around. (A path-only rule,
/// which has no secret, hashes the path in its place, as path rules see
/// it: without a leading `./`.)
pub fn fingerprint(rule_id: &str, secret: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(rule_id.as_bytes());
    h.update([0u8]);
    h.update(secret);
    let digest = h.finalize();
    let mut s = String::with_capacity(32);
    for b in &digest[..16] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Words that mark a value as a placeholder (case-insensitive substrings),
/// when the word is unlikely in a random secret of the value's alphabet and
/// length (see [`is_placeholder`]).
pub const PLACEHOLDER_WORDS: &[&str] = &[
    "example",
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourkey",
    "yoursecret",
    "yourtoken",
    "placeholder",
    "dummy",
    "sample",
    "redacted",
    "replaceme",
    "replace_me",
    "insert_",
    "fake_",
    "notreal",
    "not_real",
];

/// Values that are placeholders when they are the whole secret
/// (case-insensitive): too short or too common to be evidence as substrings.
const PLACEHOLDER_VALUES: &[&str] = &[
    "changeme",
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "dummy",
    "sample",
    "test",
    "testing",
    "example",
    "placeholder",
    "redacted",
    "none",
    "null",
    "nil",
    "undefined",
    "todo",
    "fixme",
    "foobar",
    "mypassword",
    "mysecret",
];

/// A substring whose chance of occurring in a random secret of the same
/// alphabet and length is above this is no evidence of a placeholder: of a
/// million real tokens, at most one in ten million per check would be lost.
const MAX_CHANCE: f64 = 1e-7;

/// Whether `secret` is a placeholder rather than a real credential.
/// The list is documented in `docs/rules.md`; keep both in sync.
///
/// Two kinds of evidence:
///
/// * What the whole value is: a vendor's published sample
///   (`AKIAIOSFODNN7EXAMPLE`), a template (`${X}`, `{{ x }}`, `<your-key>`,
///   `$X`, `%X%`, possibly after a token prefix), a placeholder word
///   (`changeme`), words only (`your-token-here`), mostly one repeated
///   character, or one ascending/descending run (`12345678`).
/// * A substring (a [`PLACEHOLDER_WORDS`] word, a mask run like `xxxxxx` or
///   `****`, a run like `abcdefgh`), but only if a random secret of the
///   value's alphabet (the smallest of digits, hex, base32, alphanumeric,
///   base64, printable ASCII that holds it) and length would contain it with
///   probability at most 1e-7: `xxxx` in a 36-character base62 token
///   (probability 4e-5) proves nothing, `example` does.
pub fn is_placeholder(secret: &[u8]) -> bool {
    if secret.is_empty() {
        return true;
    }
    let len = secret.len();
    // One pass over the bytes collects what every check needs, with plain
    // `while` loops and tables: this runs on every candidate, and
    // unoptimised on millions of tokens in the tests.
    const PUNCT: u8 = 1;
    const SEP: u8 = 2;
    const DIGIT: u8 = 4;
    const NON_ASCII: u8 = 8;
    /// Bits 4-5: mask byte `x`, `*`, `.` (1, 2, 3); bits 6-7: digit (1)
    /// or letter (2), for sequences. Indexed by the lowercase byte.
    static INFO: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            let mut v = match c {
                b'$' | b'{' | b'<' | b'%' => PUNCT,
                b'_' | b'-' | b' ' => SEP,
                b'.' => SEP | 3 << 4,
                b'0'..=b'9' => DIGIT | 1 << 6,
                b'x' => 1 << 4 | 2 << 6,
                b'*' => 2 << 4,
                0x80.. => NON_ASCII,
                _ => 0,
            };
            if c.is_ascii_lowercase() {
                v |= 2 << 6;
            }
            t[b] = v;
            b += 1;
        }
        t
    };
    static LOWER: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut b = 0;
        while b < 256 {
            t[b] = (b as u8).to_ascii_lowercase();
            b += 1;
        }
        t
    };
    let mut counts = [0u32; 256];
    let mut max_count = 0;
    let mut flags = 0u8;
    // Longest runs of the mask bytes `x`, `*`, `.`: (length, end).
    let mut masks = [(0usize, 0usize); 3];
    let mut run = 0;
    // Longest ascending or descending run (`123456`, `fedcba`).
    let (mut up, mut down, mut seq, mut seq_end) = (1usize, 1usize, 1usize, 1usize);
    let (mut prev, mut prev_kind) = (0u8, 0u8);
    let mut i = 0;
    while i < len {
        let c = LOWER[secret[i] as usize];
        let info = INFO[c as usize];
        flags |= info;
        let n = &mut counts[c as usize];
        *n += 1;
        if *n > max_count {
            max_count = *n;
        }
        let mask = (info >> 4) & 3;
        if mask != 0 {
            run = if prev == c { run + 1 } else { 1 };
            let m = &mut masks[mask as usize - 1];
            if run > m.0 {
                *m = (run, i + 1);
            }
        }
        let kind = info >> 6;
        if kind != 0 && kind == prev_kind {
            up = if c == prev.wrapping_add(1) { up + 1 } else { 1 };
            down = if prev == c.wrapping_add(1) {
                down + 1
            } else {
                1
            };
            let r = if up > down { up } else { down };
            if r > seq {
                seq = r;
                seq_end = i + 1;
            }
        } else {
            up = 1;
            down = 1;
        }
        prev = c;
        prev_kind = kind;
        i += 1;
    }
    let (punct, sep, digit, non_ascii) = (
        flags & PUNCT != 0,
        flags & SEP != 0,
        flags & DIGIT != 0,
        flags & NON_ASCII != 0,
    );
    // `…` (U+2026) is how our own reports redact a secret: scanning a
    // report must not report its redacted secrets again. No ASCII token
    // contains it.
    if non_ascii && memchr::memmem::find(secret, "\u{2026}".as_bytes()).is_some() {
        return true;
    }
    // What the whole value is.
    if max_count as usize * 2 > len
        || (len >= 6 && seq == len)
        || (punct && is_template(secret))
        || prefix_and_mask(secret, &masks)
        || (sep && !digit && is_words_only(secret))
        || (len <= 11
            && PLACEHOLDER_VALUES
                .iter()
                .any(|v| v.as_bytes().eq_ignore_ascii_case(secret)))
    {
        return true;
    }
    // Substrings, when they are evidence.
    static WORDS: OnceLock<AhoCorasick> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(PLACEHOLDER_WORDS)
            .expect("placeholder words build")
    });
    for m in words.find_overlapping_iter(secret) {
        let w = PLACEHOLDER_WORDS[m.pattern().as_usize()].as_bytes();
        if Alphabet::around(secret, m.start(), m.end()).chance(w, len) <= MAX_CHANCE {
            return true;
        }
    }
    for &(run, end) in &masks {
        if run >= 4 {
            let alphabet = Alphabet::around(secret, end - run, end);
            let needle = secret[end - run..end].to_ascii_lowercase();
            if alphabet.chance(&needle, len) <= MAX_CHANCE {
                return true;
            }
        }
    }
    // A sequence: its first byte may be anything, each next one is fixed,
    // in either direction.
    if seq >= 4 {
        let start = seq_end - seq;
        let alphabet = Alphabet::around(secret, start, seq_end);
        let needle = secret[start + 1..seq_end].to_ascii_lowercase();
        if 2.0 * alphabet.chance(&needle, len) <= MAX_CHANCE {
            return true;
        }
    }
    false
}

/// `${X}`, `{{ x }}`, `#{x}`, `<your-key>`, `$X`, `$(cmd)`, `%X%`: the
/// whole value, or a template after or before a token-alphabet part
/// (`sk_live_${KEY}`), so that the template holds the value's only
/// punctuation and a random password with a stray `{` is not one.
fn is_template(secret: &[u8]) -> bool {
    let s = secret;
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    if s.len() > 1 && s[0] == b'$' && (s[1].is_ascii_alphabetic() || s[1] == b'_' || s[1] == b'(') {
        if s[1] == b'(' {
            return s[s.len() - 1] == b')';
        }
        if s[1..].iter().all(|&b| ident(b)) {
            return true;
        }
    }
    if s.len() > 2
        && s[0] == b'%'
        && s[s.len() - 1] == b'%'
        && s[1..s.len() - 1].iter().all(|&b| ident(b))
    {
        return true;
    }
    for (open, close) in [
        (&b"${"[..], &b"}"[..]),
        (b"{{", b"}}"),
        (b"#{", b"}"),
        (b"<", b">"),
    ] {
        let Some(o) = memchr::memmem::find(s, open) else {
            continue;
        };
        let Some(c) = memchr::memmem::find(&s[o + open.len()..], close) else {
            continue;
        };
        let inner_end = o + open.len() + c;
        if inner_end == o + open.len() {
            continue;
        }
        let outside = s[..o].iter().chain(&s[inner_end + close.len()..]);
        if outside
            .into_iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return true;
        }
    }
    false
}

/// A token prefix and a mask, nothing random: `sk-...`, `xoxb-***`,
/// `sk_test_....`. `masks` are the longest runs of `x`, `*` and `.` as
/// [`is_placeholder`] found them: (length, end).
fn prefix_and_mask(secret: &[u8], masks: &[(usize, usize); 3]) -> bool {
    let Some(&(run, _)) = masks[1..]
        .iter()
        .find(|&&(run, end)| run >= 3 && end == secret.len())
    else {
        return false;
    };
    let prefix = &secret[..secret.len() - run];
    prefix.is_empty()
        || (prefix.len() <= 16
            && matches!(prefix.last(), Some(b'_' | b'-'))
            && prefix
                .iter()
                .all(|&b| b.is_ascii_alphabetic() || b == b'_' || b == b'-'))
}

/// Two or more words of letters, separated by `_`, `-`, `.` or spaces, no
/// digits: `your-token-here`, `CHANGE_ME`, `dummy value`.
fn is_words_only(s: &[u8]) -> bool {
    let sep = |b: u8| matches!(b, b'_' | b'-' | b'.' | b' ');
    let mut parts = 0;
    for part in s.split(|&b| sep(b)) {
        if part.is_empty() {
            continue;
        }
        // Longer than a word: a random lowercase token (`sk-` + 48
        // letters is a real key format), not `your-token-here`.
        if part.len() > 16 || !part.iter().all(u8::is_ascii_alphabetic) {
            return false;
        }
        // A word has one case, or a capital first: `Your_Token`, not the
        // mixed case of a random token.
        let rest = &part[1..];
        if !(rest.iter().all(u8::is_ascii_lowercase) || rest.iter().all(u8::is_ascii_uppercase)) {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

/// The alphabet a random secret like this one would be drawn from: the
/// smallest of a few usual ones that holds every byte of it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Alphabet {
    /// Bit `b` of `set[b / 64]`: byte `b` belongs.
    set: [u64; 4],
    size: u32,
}

impl Alphabet {
    const fn from(chars: &[u8]) -> Alphabet {
        let mut set = [0u64; 4];
        let mut i = 0;
        while i < chars.len() {
            let b = chars[i];
            set[(b / 64) as usize] |= 1 << (b % 64);
            i += 1;
        }
        let size =
            set[0].count_ones() + set[1].count_ones() + set[2].count_ones() + set[3].count_ones();
        Alphabet { set, size }
    }

    fn contains(&self, b: u8) -> bool {
        self.set[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    fn of(secret: &[u8]) -> Alphabet {
        const D: &[u8] = b"0123456789";
        const CANDIDATES: &[Alphabet] = &[
            Alphabet::from(D),
            Alphabet::from(b"0123456789abcdef"),
            Alphabet::from(b"0123456789ABCDEF"),
            Alphabet::from(b"0123456789abcdefABCDEF"),
            Alphabet::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567="),
            Alphabet::from(b"abcdefghijklmnopqrstuvwxyz0123456789"),
            Alphabet::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
            Alphabet::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            Alphabet::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
            Alphabet::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_="),
            Alphabet::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=."),
            Alphabet::from(
                b" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
            ),
        ];
        let mut present = [0u64; 4];
        for &b in secret {
            present[(b / 64) as usize] |= 1 << (b % 64);
        }
        for a in CANDIDATES {
            if (0..4).all(|i| present[i] & !a.set[i] == 0) {
                return *a;
            }
        }
        Alphabet {
            set: [u64::MAX; 4],
            size: 256,
        }
    }

    /// The alphabet of the alphanumeric segment of `secret` around
    /// `start..end` (which it includes). Tokens join parts of different
    /// alphabets (`xoxb-<digits>-<digits>-<alnum>`): judged against the
    /// whole token's alphabet, a run of digits would look rarer than it is.
    fn around(secret: &[u8], start: usize, end: usize) -> Alphabet {
        let mut lo = start;
        while lo > 0 && secret[lo - 1].is_ascii_alphanumeric() {
            lo -= 1;
        }
        let mut hi = end;
        while hi < secret.len() && secret[hi].is_ascii_alphanumeric() {
            hi += 1;
        }
        Alphabet::of(&secret[lo..hi])
    }

    /// Probability that one random byte of this alphabet equals `c`
    /// case-insensitively (`c` lowercase).
    fn p(&self, c: u8) -> f64 {
        let mut n = self.contains(c) as u32;
        let upper = c.to_ascii_uppercase();
        if upper != c {
            n += self.contains(upper) as u32;
        }
        n as f64 / self.size as f64
    }

    /// Upper bound on the probability that a random string of `len` bytes
    /// of this alphabet contains `needle` (lowercase) case-insensitively.
    fn chance(&self, needle: &[u8], len: usize) -> f64 {
        if needle.len() > len {
            return 0.0;
        }
        let one: f64 = needle.iter().map(|&c| self.p(c)).product();
        (len - needle.len() + 1) as f64 * one
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_values() {
        assert_eq!(shannon_entropy(b""), 0.0);
        assert_eq!(shannon_entropy(b"aaaa"), 0.0);
        assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-6);
        assert!((shannon_entropy(b"aabb") - 1.0).abs() < 1e-6);
    }

    #[test]
    fn fingerprint_is_stable() {
        // Pinned: baselines depend on this exact value.
        assert_eq!(fingerprint("r", b"s"), fingerprint("r", b"s"));
        assert_eq!(fingerprint("r", b"s").len(), 32);
        assert_ne!(fingerprint("r", b"s"), fingerprint("rs", b""));
        assert_eq!(
            fingerprint(
                "github-classic-pat",
                b"ghp_q8Rk2vXz1LmN4pT7wY0aBcD3eF6gH9iJ5kLm"
            ),
            "a3f1ac543f28b0abb4699717cdce6efe"
        );
    }

    #[test]
    fn placeholders() {
        for p in [
            "AKIAIOSFODNN7EXAMPLE",
            "xxxxxxxxxxxxxxxx",
            "sk_live_xxxxxxxxxxxx",
            "${STRIPE_KEY}",
            "{{ token }}",
            "<your-api-key>",
            "$API_KEY",
            "%API_KEY%",
            "changeme",
            "aaaaaaaaaaaaaaab",
            "ghp_123456789abc",
            "0123456789abcdef",
            "your_token_here",
            "************",
            "gehe\u{2026}",
            "q8Rk\u{2026}wY0a",
            "sk-...",
            "xoxb-***",
        ] {
            assert!(is_placeholder(p.as_bytes()), "{p} should be a placeholder");
        }
        for s in [
            "ghp_q8Rk2vXz1LmN4pT7wY0aBcD3eF6gH9iJ5kLm",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9k3Lm2Tt",
            "8f3a9c0d2e7b4f61",
            "hunter2-Qz7",
            "Tr0ub4dor...",
            "Heron7-Orbit...",
            // The first byte of `…` alone is not the redaction mark.
            "q8Rk\u{2020}wY0aBcD3",
        ] {
            assert!(!is_placeholder(s.as_bytes()), "{s} is not a placeholder");
        }
    }

    /// Example tokens as providers print them in their documentation. Those
    /// written as placeholders (a word like `EXAMPLE`, a mask, a repeated
    /// or running character) are dropped; those that look random
    /// (Stripe's, jwt.io's) are no placeholders by shape, and are reported
    /// low with the tag `published-example` (`confidence.rs`).
    const DOCUMENTED_PLACEHOLDERS: &[&str] = &[
        // AWS (IAM user guide, CLI configuration docs).
        "AKIAIOSFODNN7EXAMPLE",
        "AKIAI44QH8DHBEXAMPLE",
        "ASIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        // GitHub docs and READMEs.
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "ghp_000000000000000000000000000000000000",
        "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "ghp_1234567890abcdefghijklmnopqrstuvwxyz",
        "github_pat_xxxxxxxxxxxxxxxxxxxxxx_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "<YOUR-TOKEN>",
        // Stripe docs, as placeholders.
        "sk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
        "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
        "sk_test_...",
        "pk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
        "whsec_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        // Twilio docs.
        "ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "SKxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "your_auth_token",
        // Slack docs and SDK READMEs.
        "xoxb-not-a-real-token-this-will-not-work",
        "xoxb-xxxxxxxxxxx-xxxxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxx",
        "xoxp-xxxxxxxxx-xxxx",
        "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        // SendGrid, OpenAI, GitLab, npm, Mailgun docs.
        "SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "sk-...",
        "glpat-xxxxxxxxxxxxxxxxxxxx",
        "npm_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "key-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        // Templates the docs print.
        "${GITHUB_TOKEN}",
        "{{ secrets.NPM_TOKEN }}",
        "<DATADOG_API_KEY>",
        "YOUR_API_KEY",
        "$STRIPE_SECRET_KEY",
    ];

    /// Random-looking documented examples: kept by the placeholder gate,
    /// lowered by their published value.
    const DOCUMENTED_RANDOM: &[&str] = &[
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "pk_test_TYooMQauvdEDq54NiTphI7jx",
        "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
        "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ];

    /// xorshift64*, as the integration tests' `common::Rng`.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
        }
        fn chars(&mut self, alphabet: &[u8], len: usize) -> String {
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len())] as char)
                .collect()
        }
    }

    /// 200 random tokens in the shapes providers issue: bare hex, base62,
    /// base64, base64url, and behind the providers' prefixes.
    fn random_tokens() -> Vec<String> {
        const HEX: &[u8] = b"0123456789abcdef";
        const UPHEX: &[u8] = b"0123456789ABCDEF";
        const DIGITS: &[u8] = b"0123456789";
        const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        const B62: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut out = Vec::new();
        for i in 0..200 {
            let r = &mut rng;
            let t = match i % 20 {
                0 => r.chars(HEX, 32),
                1 => r.chars(HEX, 40),
                2 => r.chars(UPHEX, 64),
                3 => r.chars(B62, 20 + i % 21),
                4 => format!("{}=", r.chars(B64, 43)),
                5 => r.chars(B64URL, 43),
                6 => format!("ghp_{}", r.chars(B62, 36)),
                7 => format!("sk_live_{}", r.chars(B62, 24)),
                8 => format!("sk_test_{}", r.chars(B62, 24)),
                9 => format!(
                    "xoxb-{}-{}-{}",
                    r.chars(DIGITS, 11),
                    r.chars(DIGITS, 13),
                    r.chars(B62, 24)
                ),
                10 => format!("AKIA{}", r.chars(UPPER, 16)),
                11 => format!("AIza{}", r.chars(B64URL, 35)),
                12 => format!("glpat-{}", r.chars(B64URL, 20)),
                13 => format!("SG.{}.{}", r.chars(B64URL, 22), r.chars(B64URL, 43)),
                14 => format!("AC{}", r.chars(HEX, 32)),
                15 => format!("key-{}", r.chars(LOWER, 32)),
                16 => format!("sk-{}", r.chars(B62, 48)),
                17 => format!("npm_{}", r.chars(B62, 36)),
                18 => r.chars(DIGITS, 12 + i % 9),
                _ => format!("{}/{}", r.chars(B64, 20), r.chars(B64, 19)),
            };
            out.push(t);
        }
        out
    }

    #[test]
    fn documented_examples_and_random_tokens() {
        let kept: Vec<&str> = DOCUMENTED_PLACEHOLDERS
            .iter()
            .copied()
            .filter(|t| !is_placeholder(t.as_bytes()))
            .collect();
        let unmarked: Vec<&str> = DOCUMENTED_RANDOM
            .iter()
            .copied()
            .filter(|t| {
                let (c, tags, _) = crate::confidence::assess(
                    None,
                    None,
                    false,
                    &[],
                    &[],
                    t.as_bytes(),
                    "app/.env",
                );
                let lowered = c == crate::Confidence::Low && tags.contains(&"published-example");
                !(is_placeholder(t.as_bytes()) || lowered)
            })
            .collect();
        let tokens = random_tokens();
        assert_eq!(tokens.len(), 200);
        let dropped: Vec<&str> = tokens
            .iter()
            .map(String::as_str)
            .filter(|t| is_placeholder(t.as_bytes()))
            .collect();
        assert_eq!(
            (kept, unmarked, dropped),
            (vec![], vec![], vec![]),
            "documented placeholders kept, documented random values reported at full \
             confidence, random tokens dropped"
        );
    }
}
