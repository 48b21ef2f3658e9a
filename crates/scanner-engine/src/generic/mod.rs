//! The confirmation step of `generic = true` rules: read the code around
//! the value the regex captured and decide whether it can be a secret.
//!
//! The regexes of `rules/generic.toml` find the assignments (`k = v`,
//! `k: v`, `"k": "v"`, `<k>v</k>`, command-line options...) and keep the
//! keyword prefilter; they cannot see what kind of right-hand side they
//! captured. This module classifies it:
//!
//! * a **string literal** (quoted on both sides) or a **bare config value**
//!   (unquoted, in a file that is not source code, or inside a string
//!   literal of source code such as a DSN) can be a secret;
//! * **code** cannot: an unquoted value in source code outside any string
//!   literal (`password: &windows_core::BSTR`, `apiKey: SensitiveString2048;`,
//!   a type union `Buffer|Uint8Array`, a call, a path expression); and the
//!   "value" between two literals whose key and separator sit inside the
//!   first literal (`passwordLabel:"Password:",rememberMeLabel:...`).
//!
//! Then the value itself: HTML-escaped markup (`&lt;YOUR_PASSWORD&gt;`),
//! percent-encoded data (two `%XX` escapes or more), a few bytes written as
//! `\xHH` escapes (an OID, a magic number), names
//! ([`shape::identifier_like`]) and symbols or error codes
//! ([`shape::symbol_or_code`]) are not secrets. Each drop is counted under
//! its own reason in [`crate::Suppressed`].

pub(crate) mod named;
pub(crate) mod shape;

/// Why the confirmation step dropped a generic candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// An expression, type or reference rather than a literal.
    Code,
    /// A name made of vocabulary words (`SensitiveString2048`), a symbol
    /// or an error code (`ERR_R_MALLOC_FAILURE:17`, `109:problems`).
    IdentifierLike,
    /// Percent-encoded or HTML-escaped text.
    Encoded,
    /// A stand-in word spelled in leetspeak (`P@55w0rd!`), counted with
    /// the stopwords.
    Stopword,
}

/// File extensions of source code, where an unquoted right-hand side is an
/// expression. Shell, Dockerfiles, YAML, INI, properties, `.env` and docs
/// are not listed: there an unquoted value is a literal.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "go", "java", "kt", "kts", "scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs",
    "swift", "m", "mm", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "py", "pyi", "rb",
    "php", "dart", "lua", "ex", "exs", "erl", "hs", "ml", "fs", "vue", "svelte", "groovy", "clj",
    "zig", "nim", "jl",
];

pub(crate) fn is_code_path(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            CODE_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext))
        }
        _ => false,
    }
}

/// Confirms a generic candidate: `None` keeps it. `line` is the line (or
/// lines) around the match, `m` the match and `secret` the secret, all as
/// ranges of `data`.
pub(crate) fn confirm(
    data: &[u8],
    line: std::ops::Range<usize>,
    m: std::ops::Range<usize>,
    secret: std::ops::Range<usize>,
    path: &str,
) -> Option<Verdict> {
    let value = &data[secret.clone()];
    let before = if secret.start > line.start {
        Some(data[secret.start - 1])
    } else {
        None
    };
    let after = data.get(secret.end).copied();
    let quote = before.filter(|q| matches!(q, b'"' | b'\'' | b'`'));
    let quoted = quote.is_some() && after == quote;

    if encoded(value) {
        return Some(Verdict::Encoded);
    }
    // The key is the last segment of a path (`AWS::SecretsManager::Secret`,
    // `crate::token`): a type or module name, not a setting.
    if m.start >= line.start + 2 && &data[m.start - 2..m.start] == b"::" {
        return Some(Verdict::Code);
    }
    if quoted {
        let q = quote.unwrap_or(b'"');
        // `"Password:",next:"` — the key and its separator are inside the
        // literal that ends right before the "value".
        let open = data[m.start];
        let inner = &data[(m.start + 1).min(secret.start - 1)..secret.start - 1];
        if open == q
            && !inner.contains(&q)
            && inner
                .last()
                .is_some_and(|b| matches!(b, b':' | b'=' | b' ' | b'\t'))
        {
            return Some(Verdict::Code);
        }
        if matches!(value.first(), Some(b',' | b';' | b')' | b'+')) {
            return Some(Verdict::Code);
        }
    } else {
        // An unquoted value in source code is an expression unless the key
        // is inside a string literal (`"host=db password=Xy7!pq"`).
        if is_code_path(path) && !inside_literal(&data[line.start..m.start], path) {
            return Some(Verdict::Code);
        }
        // `Vec<u8>` and `f(` are code; `v</password>` closes an element.
        let next = after.filter(|&b| b != b'<' || data.get(secret.end + 1) != Some(&b'/'));
        if looks_like_code(value, next) {
            return Some(Verdict::Code);
        }
    }
    if shape::identifier_like(value) || shape::symbol_or_code(value) {
        return Some(Verdict::IdentifierLike);
    }
    if leet_stopword(value) {
        return Some(Verdict::Stopword);
    }
    None
}

/// Words that docs and mocks spell with digits and symbols (`P@55w0rd!`,
/// `S3cr3t!`), after undoing the usual substitutions; the plain spellings
/// are the rules' stopwords.
///
/// `geheim` is German for secret (`passwort` its password), as German
/// docstrings write them (`passwd='geheim$parole'`).
const LEET_STOPWORDS: &[&[u8]] = &[
    b"password",
    b"passwort",
    b"secret",
    b"geheim",
    b"letmein",
    b"changeme",
];

fn leet_stopword(value: &[u8]) -> bool {
    if value.len() > 32 {
        return false;
    }
    let undo = |at: u8| -> Vec<u8> {
        value
            .iter()
            .filter_map(|&b| match b.to_ascii_lowercase() {
                b'@' => (at != 0).then_some(at),
                b'4' => Some(b'a'),
                b'3' => Some(b'e'),
                b'1' | b'!' => Some(b'i'),
                b'0' => Some(b'o'),
                b'5' | b'$' => Some(b's'),
                b'7' => Some(b't'),
                c if c.is_ascii_lowercase() => Some(c),
                _ => None,
            })
            .collect()
    };
    let (mapped, dropped) = (undo(b'a'), undo(0));
    LEET_STOPWORDS.iter().any(|w| {
        memchr::memmem::find(&mapped, w).is_some() || memchr::memmem::find(&dropped, w).is_some()
    })
}

/// An unquoted value shaped like an expression: a reference or pointer
/// (`&x`, `*const`), a path (`a::b`), a call or generic (`f(`, `Vec<`), a
/// type union (`A|B`), an arrow.
fn looks_like_code(value: &[u8], after: Option<u8>) -> bool {
    let ident_start = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
    if matches!(value.first(), Some(b'&' | b'*' | b'@' | b'!')) && ident_start(value.get(1)) {
        return true;
    }
    if matches!(after, Some(b'(' | b'<' | b'[')) {
        return true;
    }
    let has = |n: &[u8]| memchr::memmem::find(value, n).is_some();
    if has(b"::") || has(b"->") || has(b"=>") || has(b"()") {
        return true;
    }
    // `Buffer|Uint8Array|Blob|string`: identifiers joined by `|` or `&`.
    let parts: Vec<&[u8]> = value.split(|b| matches!(b, b'|' | b'&')).collect();
    parts.len() > 1
        && parts.iter().all(|p| {
            !p.is_empty()
                && ident_start(p.first())
                && p.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        })
}

/// Whether the end of `prefix` (the line up to the key) is inside a string
/// literal: an odd number of unescaped double quotes or backticks (and, in
/// languages without lifetimes or char literals, single quotes) before it.
fn inside_literal(prefix: &[u8], path: &str) -> bool {
    let single = !(path.ends_with(".rs") || path.ends_with(".c") || path.ends_with(".h"));
    let mut open: Option<u8> = None;
    let mut escaped = false;
    for &b in prefix {
        if escaped {
            escaped = false;
            continue;
        }
        match (open, b) {
            (_, b'\\') => escaped = true,
            (None, b'"' | b'`') => open = Some(b),
            (None, b'\'') if single => open = Some(b),
            (Some(q), c) if c == q => open = None,
            _ => {}
        }
    }
    open.is_some()
}

/// Percent-encoded (`%2F`, twice or more) or HTML-escaped (`&lt;`) text,
/// or fewer bytes than any key written as `\xHH` escapes.
fn encoded(value: &[u8]) -> bool {
    if escaped_bytes(value).is_some_and(|n| n < 16) {
        return true;
    }
    let pct = value
        .windows(3)
        .filter(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
        .count();
    if pct >= 2 {
        return true;
    }
    let lower: Vec<u8> = value.iter().map(u8::to_ascii_lowercase).collect();
    [&b"&lt"[..], b"&gt", b"&quot", b"&amp", b"&#"]
        .iter()
        .any(|e| memchr::memmem::find(&lower, e).is_some())
}

/// How many bytes `value` writes when it is nothing but `\xHH` escapes
/// (`\x55\x04\x23`, the OID of `userPassword` in OpenSSL's
/// `fuzz/oids.txt`). Nobody types a password that way; a binary key can be
/// written so (`b'\x8f\x3a...'`), but no key is shorter than 16 bytes.
fn escaped_bytes(value: &[u8]) -> Option<usize> {
    let mut n = 0;
    let mut rest = value;
    while let [b'\\', b'x' | b'X', h, l, tail @ ..] = rest {
        if !(h.is_ascii_hexdigit() && l.is_ascii_hexdigit()) {
            return None;
        }
        n += 1;
        rest = tail;
    }
    (rest.is_empty() && n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, key_at: &str, secret: &str, path: &str) -> Option<Verdict> {
        let m = text.find(key_at).unwrap();
        let s = m + text[m..].find(secret).unwrap();
        confirm(
            text.as_bytes(),
            0..text.len(),
            m..s + secret.len(),
            s..s + secret.len(),
            path,
        )
    }

    #[test]
    fn code_values() {
        let c = Some(Verdict::Code);
        assert_eq!(
            check(
                "fn f(password: &windows_core::BSTR) {}",
                "password",
                "&windows_core::BSTR",
                "a.txt"
            ),
            c
        );
        assert_eq!(
            check(
                "  apiKey: SensitiveString2048;",
                "apiKey",
                "SensitiveString2048",
                "x.d.ts"
            ),
            c
        );
        assert_eq!(
            check(
                "type Password = Buffer|Uint8Array|Blob|string",
                "Password",
                "Buffer|Uint8Array|Blob|string",
                "x.txt"
            ),
            c
        );
        assert_eq!(
            check(
                r#"{passwordLabel:"Password:",rememberMeLabel:"x"}"#,
                "\"Password",
                ",rememberMeLabel:",
                "a.js"
            ),
            c
        );
    }

    #[test]
    fn literals_kept() {
        assert_eq!(
            check(
                "password = \"Mapleorbit91@\"",
                "password",
                "Mapleorbit91@",
                "a.py"
            ),
            None
        );
        assert_eq!(
            check(
                "dsn = \"host=db password=Xy7!pq9z sslmode=disable\"",
                "password",
                "Xy7!pq9z",
                "a.go"
            ),
            None
        );
        assert_eq!(
            check(
                "password=Mapleorbit91@",
                "password",
                "Mapleorbit91@",
                ".env"
            ),
            None
        );
    }

    #[test]
    fn encoded_values() {
        assert_eq!(
            check(
                "password=&lt;YOUR_PASSWORD&gt;",
                "password",
                "&lt;YOUR_PASSWORD&gt;",
                "a.md"
            ),
            Some(Verdict::Encoded)
        );
        assert_eq!(
            check(
                "password=p%40ss%3Aw0rd",
                "password",
                "p%40ss%3Aw0rd",
                "a.txt"
            ),
            Some(Verdict::Encoded)
        );
    }

    #[test]
    fn escaped_bytes_values() {
        assert_eq!(escaped_bytes(br"\x55\x04\x23"), Some(3));
        assert_eq!(
            escaped_bytes(br"\x2A\x86\x48\x86\xF7\x0D\x01\x09\x07"),
            Some(9)
        );
        assert_eq!(escaped_bytes(br"\x55\x04x"), None);
        assert_eq!(escaped_bytes(br"\x5G"), None);
        assert_eq!(escaped_bytes(b""), None);
        let key = r"\x8f".repeat(16);
        assert_eq!(escaped_bytes(key.as_bytes()), Some(16));
        assert!(!encoded(key.as_bytes()));
    }

    #[test]
    fn leetspeak_stand_ins() {
        for v in [
            "P@55w0rd!",
            "Pass@Word1",
            "S3cr3t!x",
            "p4$$w0rd2024",
            "geheim$parole",
        ] {
            assert!(leet_stopword(v.as_bytes()), "{v}");
        }
        for v in ["Mapleorbit91@", "Heron+Heron93", "Tr0ub4dor&3x"] {
            assert!(!leet_stopword(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn code_paths() {
        assert!(is_code_path("src/a.rs"));
        assert!(is_code_path("lib/x.d.ts"));
        assert!(!is_code_path(".env"));
        assert!(!is_code_path("config/app.yaml"));
        assert!(!is_code_path("Dockerfile"));
    }
}
