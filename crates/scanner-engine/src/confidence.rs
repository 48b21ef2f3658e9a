//! How much a finding deserves a person's attention first: [`Confidence`]
//! and the tags that say why.
//!
//! 1. The rule's base: its `confidence` field if set; else `high` for a
//!    provider rule whose secret starts with one of its keywords of 4 bytes
//!    or more (a fixed vendor prefix: `ghp_`, `xoxb-`, `AKIA`) or that
//!    carries a `checksum`; `medium` otherwise, and for `generic` rules.
//! 2. A `checksum` (offline, `rules.md`): a valid one raises to `high`
//!    (tag `checksum-valid`), a failed one lowers to `low`
//!    (`checksum-invalid`): a token whose checksum fails was not issued by
//!    the vendor (a made-up example, a truncation).
//! 3. A generic finding whose key names a provider (a keyword of a
//!    `[[providers]]` entry without a distinctive prefix, before the value
//!    on its line) holds a value that the provider's rule did not report,
//!    or it would be that rule's finding: it misses the provider's shape.
//!    One level lower, tagged `shape-mismatch:<the provider rule's id>`
//!    (`generic/named.rs`).
//! 4. Context makes it `low`, never drops: a test, fixture, example or
//!    documentation path (`test-path`, `doc-path`), a Rust unit-test module
//!    (`test-code`: after a top-level `#[cfg(test)]`), a vendor's published
//!    example value (`published-example`). A key in a test is still a key,
//!    and is reported; but a tree's test keys and documentation samples
//!    outnumber its real secrets, and on real code one step down (a
//!    prefixed test key at `medium`) left them among the findings to triage
//!    first.

use serde::{Deserialize, Serialize};

/// Triage level of a finding (serialized lowercase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }

    /// One level down (`low` stays `low`).
    fn lower(self) -> Confidence {
        match self {
            Confidence::High => Confidence::Medium,
            _ => Confidence::Low,
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Confidence> {
        match s {
            "low" => Some(Confidence::Low),
            "medium" => Some(Confidence::Medium),
            "high" => Some(Confidence::High),
            _ => None,
        }
    }
}

/// An offline structure check a rule can ask for (`checksum = "..."`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checksum {
    /// `ghp_` + 30 base62 + 6 base62 digits of the CRC-32 of those 30
    /// (GitHub's token format, also `gho_ ghu_ ghs_ ghr_`).
    GithubCrc32,
    /// `npm_` + 30 + 6, the same scheme.
    NpmCrc32,
    /// Three base64url parts; the header is a JSON object naming `alg`.
    Jwt,
    /// `pypi-` + a base64url macaroon (version 2, location field first).
    PypiMacaroon,
}

impl Checksum {
    pub(crate) fn parse(s: &str) -> Option<Checksum> {
        match s {
            "github-crc32" => Some(Checksum::GithubCrc32),
            "npm-crc32" => Some(Checksum::NpmCrc32),
            "jwt" => Some(Checksum::Jwt),
            "pypi-macaroon" => Some(Checksum::PypiMacaroon),
            _ => None,
        }
    }

    /// `None` when the secret is not in the checksummed form (a 76-byte
    /// `ghr_` token has no documented checksum): confidence is unchanged.
    pub(crate) fn verify(self, secret: &[u8]) -> Option<bool> {
        match self {
            Checksum::GithubCrc32 | Checksum::NpmCrc32 => crc32_token(secret),
            Checksum::Jwt => Some(jwt(secret)),
            Checksum::PypiMacaroon => Some(pypi(secret)),
        }
    }
}

/// Path segments of tests, fixtures, examples and docs.
const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "testdata",
    "testing",
    "fixtures",
    "fixture",
    "__tests__",
    "spec",
    "specs",
    "examples",
    "example",
    "samples",
    "mocks",
];
/// Words that mark a test or sample when they are one `-`, `_` or `.`
/// separated part of a directory name (`aws-signing-test-suite`,
/// `unit_tests`) or of a file name (`iam.examples.json`, `.env.example`,
/// `settings.sample.yaml`, `client-test.js`). Whole parts only: `latest`,
/// `contest` and `attestation` are not tests.
const TEST_WORDS: &[&str] = &[
    "test", "tests", "testdata", "fixture", "fixtures", "example", "examples", "sample", "samples",
    "mock", "mocks",
];
const DOC_DIRS: &[&str] = &["docs", "doc", "documentation"];
// Not `.txt`: `notes.txt` and `passwords.txt` are where people keep real
// secrets.
const DOC_EXTENSIONS: &[&str] = &[".md", ".rst", ".adoc", ".html", ".markdown"];

/// Values vendors print in their documentation as examples (they are not
/// placeholders by wording, so the placeholder gate keeps them).
const PUBLISHED_EXAMPLES: &[&str] = &[
    // AWS documentation's example secret access key.
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    // The first 13 characters of AWS documentation's example access key id
    // (`AKIAIOSFODNN7EXAMPLE`): test suites vary its last characters to
    // get a second key (`...EXAMPLF`), which the placeholder words miss.
    "AKIAIOSFODNN7",
    // Stripe's documented test keys: the API reference's secret and
    // publishable pair, and the older docs' secret key.
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "pk_test_TYooMQauvdEDq54NiTphI7jx",
    "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    // The bot token in Slack's OAuth documentation (`oauth.v2.access`).
    "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
    // Mailgun's documented API key.
    "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
    // The JWT on jwt.io.
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
];

pub(crate) fn path_tag(path: &str) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    let segs: Vec<&str> = lower.split(['/', '\\']).collect();
    let (file, dirs) = segs.split_last().map_or(("", &[][..]), |(f, d)| (*f, d));
    let has_test_word = |name: &str| name.split(['-', '_', '.']).any(|w| TEST_WORDS.contains(&w));
    if dirs
        .iter()
        .any(|d| TEST_DIRS.contains(d) || has_test_word(d))
        || has_test_word(file)
        || file.starts_with("test_")
        || file.starts_with("example")
        || file.starts_with("sample")
        || file.contains(".spec.")
    {
        return Some("test-path");
    }
    // A Python distribution's metadata holds its README (`METADATA` in a
    // wheel's `.dist-info`, `PKG-INFO` in an sdist or `.egg-info`).
    let package_readme = file == "pkg-info"
        || (file == "metadata"
            && dirs
                .last()
                .is_some_and(|d| d.ends_with(".dist-info") || d.ends_with(".egg-info")));
    if package_readme
        || dirs.iter().any(|d| DOC_DIRS.contains(d))
        || DOC_EXTENSIONS.iter().any(|e| file.ends_with(e))
    {
        return Some("doc-path");
    }
    None
}

/// Where a Rust unit-test module starts: the offset of the first line that
/// is `#[cfg(test)]` at column 0 in a `.rs` file. Unit tests sit at the end
/// of the file they test, under that attribute (indented, it marks a test
/// helper inside other code, not the rest of the file).
pub fn test_code_start(data: &[u8], path: &str) -> Option<usize> {
    if !path.ends_with(".rs") {
        return None;
    }
    const MARK: &[u8] = b"#[cfg(test)]";
    memchr::memmem::find_iter(data, MARK).find(|&at| {
        (at == 0 || data[at - 1] == b'\n')
            && matches!(data.get(at + MARK.len()), None | Some(b'\n' | b'\r' | b' '))
    })
}

/// Lowers a finding that lies in test code (see [`test_code_start`]) to
/// `low` with the tag `test-code`, once. For callers that scan a file in
/// chunks and saw the marker in an earlier chunk; the engine does it
/// itself within a buffer.
pub fn mark_test_code(confidence: &mut Confidence, tags: &mut Vec<&'static str>) {
    if !tags.contains(&"test-code") {
        *confidence = Confidence::Low;
        tags.push("test-code");
    }
}

/// Steps 1-4 of the module docs. `misses` are the `shape-mismatch:` tags of
/// the providers a generic finding's key names (step 3). The third value is
/// the checksum's result (`None` without one, or when the secret is not in
/// the checksummed form), for [`crate::validation::offline_evidence`].
pub(crate) fn assess(
    base: Option<Confidence>,
    checksum: Option<Checksum>,
    generic: bool,
    keywords: &[String],
    misses: &[&'static str],
    secret: &[u8],
    path: &str,
) -> (Confidence, Vec<&'static str>, Option<bool>) {
    let mut tags = Vec::new();
    let prefixed = !generic
        && keywords.iter().any(|k| {
            k.len() >= 4
                && secret.len() > k.len()
                && secret[..k.len()].eq_ignore_ascii_case(k.as_bytes())
        });
    let mut c = base.unwrap_or(if generic {
        Confidence::Medium
    } else if prefixed || checksum.is_some() {
        Confidence::High
    } else {
        Confidence::Medium
    });
    if generic {
        tags.push("generic");
    } else if prefixed {
        tags.push("prefix");
    }
    let verified = checksum.and_then(|ck| ck.verify(secret));
    match verified {
        Some(true) => {
            c = Confidence::High;
            tags.push("checksum-valid");
        }
        Some(false) => {
            c = Confidence::Low;
            tags.push("checksum-invalid");
        }
        None => {}
    }
    if generic && !misses.is_empty() {
        c = c.lower();
        tags.extend_from_slice(misses);
    }
    if let Some(t) = path_tag(path) {
        c = Confidence::Low;
        tags.push(t);
    }
    if PUBLISHED_EXAMPLES
        .iter()
        .any(|e| memchr::memmem::find(secret, e.as_bytes()).is_some())
    {
        c = Confidence::Low;
        tags.push("published-example");
    }
    (c, tags, verified)
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// `n` in base 62 (`0-9A-Za-z`), left-padded with `0` to 6 digits.
pub fn base62_6(mut n: u32) -> [u8; 6] {
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    out
}

/// `<prefix>_` + 30 base62 + 6-digit base62 CRC-32 of the 30.
fn crc32_token(secret: &[u8]) -> Option<bool> {
    let us = memchr::memchr(b'_', secret)?;
    let body = &secret[us + 1..];
    if body.len() != 36 || !body.iter().all(u8::is_ascii_alphanumeric) {
        return None;
    }
    let (random, check) = body.split_at(30);
    Some(base62_6(crc32(random)) == check)
}

/// Decodes base64 or base64url, padded or not; `None` on a bad byte.
pub(crate) fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &b in s {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn jwt(secret: &[u8]) -> bool {
    let parts: Vec<&[u8]> = secret.split(|&b| b == b'.').collect();
    if parts.len() != 3 {
        return false;
    }
    let json_object = |p: &[u8]| {
        base64_decode(p).filter(|d| {
            let t = d.trim_ascii();
            t.first() == Some(&b'{') && t.last() == Some(&b'}')
        })
    };
    match (json_object(parts[0]), json_object(parts[1])) {
        (Some(h), Some(_)) => memchr::memmem::find(&h, b"\"alg\"").is_some(),
        _ => false,
    }
}

fn pypi(secret: &[u8]) -> bool {
    let Some(body) = secret.strip_prefix(b"pypi-") else {
        return false;
    };
    let Some(d) = base64_decode(body) else {
        return false;
    };
    // Macaroon v2: version byte 2, then field 1 (location), a varint
    // length, the location; then field 2 (identifier).
    if d.len() < 4 || d[0] != 2 || d[1] != 1 {
        return false;
    }
    let n = d[2] as usize;
    n < 0x80 && d.len() > 3 + n && d[3..3 + n].iter().all(|b| b.is_ascii_graphic()) && d[3 + n] == 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_known_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn a_missed_provider_shape_is_one_level_lower() {
        let misses = ["shape-mismatch:acme-key"];
        let assess = |base, generic| {
            let (c, tags, _) = assess(base, None, generic, &[], &misses, b"q8Rk2vXz", "a.env");
            (c, tags)
        };
        assert_eq!(
            assess(None, true),
            (Confidence::Low, vec!["generic", "shape-mismatch:acme-key"])
        );
        assert_eq!(
            assess(Some(Confidence::High), true),
            (
                Confidence::Medium,
                vec!["generic", "shape-mismatch:acme-key"]
            )
        );
        // Only generic findings: a provider rule's finding is its own shape.
        assert_eq!(assess(None, false), (Confidence::Medium, vec![]));
    }

    #[test]
    fn paths() {
        assert_eq!(path_tag("crate/tests/a.rs"), Some("test-path"));
        assert_eq!(path_tag("pkg/testdata/x.json"), Some("test-path"));
        assert_eq!(path_tag("README.md"), Some("doc-path"));
        assert_eq!(path_tag("docs/setup.yaml"), Some("doc-path"));
        assert_eq!(path_tag("src/main.rs"), None);
        assert_eq!(path_tag("src/latest/x.rs"), None);
        // Test and sample words as parts of a directory or file name.
        for p in [
            "aws-sdk/apis/iam-2010-05-08.examples.json",
            "aws-sigv4/aws-signing-test-suite/v4/context.json",
            "svc/unit_tests/conf.yaml",
            "app/.env.example",
            "config/settings.sample.yaml",
            "web/client-test.js",
            "pkg/x_test.go",
            "ui/a.spec.ts",
        ] {
            assert_eq!(path_tag(p), Some("test-path"), "{p}");
        }
        for p in ["src/attestation/key.rs", "contest/app.env", "api-spec.yaml"] {
            assert_eq!(path_tag(p), None, "{p}");
        }
        // A Python distribution's README.
        assert_eq!(
            path_tag("site-packages/joserfc-1.6.5.dist-info/METADATA"),
            Some("doc-path")
        );
        assert_eq!(path_tag("foo-1.0/PKG-INFO"), Some("doc-path"));
        assert_eq!(path_tag("conf/metadata"), None);
    }

    #[test]
    fn rust_test_modules() {
        let src = "fn f() {}\n\n    #[cfg(test)]\n    fn helper() {}\n#[cfg(test)]\nmod tests {}\n";
        assert_eq!(
            test_code_start(src.as_bytes(), "src/lib.rs"),
            src.find("#[cfg(test)]\nmod")
        );
        assert_eq!(test_code_start(src.as_bytes(), "src/lib.py"), None);
        assert_eq!(test_code_start(b"#[cfg(test)] mod t;", "a.rs"), Some(0));
        assert_eq!(test_code_start(b"#[cfg(test_utils)]\n", "a.rs"), None);
    }
}
