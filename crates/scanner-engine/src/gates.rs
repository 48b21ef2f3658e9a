//! The checks a regex match passes before it becomes a finding, and the
//! fingerprint.

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
/// which has no secret, hashes the path in its place.)
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

/// Words that mark a value as a placeholder (case-insensitive substrings).
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

/// Whether `secret` is a placeholder rather than a real credential.
/// The list is documented in `docs/rules.md`; keep both in sync.
pub fn is_placeholder(secret: &[u8]) -> bool {
    if secret.is_empty() {
        return true;
    }
    let lower: Vec<u8> = secret.iter().map(u8::to_ascii_lowercase).collect();
    let has = |needle: &[u8]| memchr::memmem::find(&lower, needle).is_some();
    if PLACEHOLDER_WORDS.iter().any(|w| has(w.as_bytes())) {
        return true;
    }
    // Masking runs. In long random secrets (a PEM body) four x's occur by
    // chance about once in a thousand keys, so long secrets need eight.
    let run: &[u8] = if secret.len() <= 64 {
        b"xxxx"
    } else {
        b"xxxxxxxx"
    };
    // `…` (U+2026) is how our own reports redact a secret: scanning a
    // report must not report its redacted secrets again.
    if has(run) || has(&b"********"[..run.len()]) || has(b"....") || has("\u{2026}".as_bytes()) {
        return true;
    }
    // Templates and references: ${VAR}, {{ var }}, <your-key>, $VAR, %VAR%.
    if has(b"${") || has(b"{{") || has(b"#{") {
        return true;
    }
    if let Some(lt) = memchr::memchr(b'<', secret) {
        if memchr::memchr(b'>', &secret[lt..]).is_some() {
            return true;
        }
    }
    if secret[0] == b'$'
        && secret.len() > 1
        && (secret[1].is_ascii_alphabetic() || secret[1] == b'_' || secret[1] == b'(')
    {
        return true;
    }
    if secret.len() > 2 && secret[0] == b'%' && secret[secret.len() - 1] == b'%' {
        return true;
    }
    // Mostly one repeated character.
    let mut counts = [0u32; 256];
    for &b in &lower {
        counts[b as usize] += 1;
    }
    let max = counts.iter().copied().max().unwrap_or(0) as usize;
    if max * 2 > secret.len() {
        return true;
    }
    has_sequence(&lower)
}

/// A run of 6 consecutive ascending or descending digits or letters
/// (`123456`, `abcdef`, `987654`): typed by a human, not generated. A random
/// base62 secret contains one with probability ~1e-7 per position.
fn has_sequence(lower: &[u8]) -> bool {
    const RUN: usize = 6;
    let mut up = 1;
    let mut down = 1;
    for w in lower.windows(2) {
        let (a, b) = (w[0], w[1]);
        let same_kind = a.is_ascii_alphanumeric()
            && b.is_ascii_alphanumeric()
            && a.is_ascii_digit() == b.is_ascii_digit();
        up = if same_kind && b == a.wrapping_add(1) {
            up + 1
        } else {
            1
        };
        down = if same_kind && a == b.wrapping_add(1) {
            down + 1
        } else {
            1
        };
        if up >= RUN || down >= RUN {
            return true;
        }
    }
    false
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
        ] {
            assert!(is_placeholder(p.as_bytes()), "{p} should be a placeholder");
        }
        for s in [
            "ghp_q8Rk2vXz1LmN4pT7wY0aBcD3eF6gH9iJ5kLm",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9k3Lm2Tt",
            "8f3a9c0d2e7b4f61",
            "hunter2-Qz7",
            // The first byte of `…` alone is not the redaction mark.
            "q8Rk\u{2020}wY0aBcD3",
        ] {
            assert!(!is_placeholder(s.as_bytes()), "{s} is not a placeholder");
        }
    }
}
