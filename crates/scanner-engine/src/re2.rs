//! Go RE2 syntax (what gitleaks files contain) to regex-syntax.
//!
//! The two are nearly the same language. What differs, and what we do:
//!
//! | RE2                        | regex-syntax                 | here                   |
//! |----------------------------|------------------------------|------------------------|
//! | `\Q...\E` literal text     | unsupported                  | escaped literal        |
//! | `\C` any byte              | unsupported                  | `(?s-u:.)`             |
//! | `[` inside a class         | nested class                 | `\[`                   |
//! | `&&` `--` `~~` in a class  | set operations               | literal characters     |
//! | `{` not a repetition       | error                        | `\{`                   |
//! | `\101` octal               | backreference error          | `\x{41}`               |
//! | `\b \w \d \s` ASCII        | Unicode by default           | ASCII (we compile with Unicode off) |
//!
//! Everything RE2 rejects that regex-syntax accepts is left alone (being more
//! lenient costs nothing); look-around and backreferences are rejected by
//! both, and regex-syntax's message says so.

use regex_syntax::hir::Hir;

/// The longest regex pattern accepted, checked before parsing it: 64 KiB.
/// The longest built-in pattern is under 1 KiB; parsing holds about 100
/// bytes per pattern byte, so a 10 MB literal would take 1 GB.
pub const MAX_PATTERN_LEN: usize = 64 << 10;

/// Rewrites RE2-only syntax. Never fails: what cannot be rewritten is left
/// for the parser to reject with its own positioned message.
pub(crate) fn translate(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    // Position in `out` right after a class's opening `[` or `[^`, where a
    // `]` is literal.
    let mut class_start = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            let next = chars.get(i + 1).copied();
            match next {
                Some('Q') => {
                    // Literal text up to `\E` or the end of the pattern.
                    let mut j = i + 2;
                    let mut lit = String::new();
                    while j < chars.len() && !(chars[j] == '\\' && chars.get(j + 1) == Some(&'E')) {
                        lit.push(chars[j]);
                        j += 1;
                    }
                    if in_class {
                        for ch in lit.chars() {
                            if ch.is_ascii_alphanumeric() || !ch.is_ascii() {
                                out.push(ch);
                            } else {
                                out.push('\\');
                                out.push(ch);
                            }
                        }
                    } else {
                        out.push_str(&regex_syntax::escape(&lit));
                    }
                    i = if j < chars.len() { j + 2 } else { j };
                    class_start = false;
                    continue;
                }
                Some('C') if !in_class => {
                    out.push_str("(?s-u:.)");
                    i += 2;
                    continue;
                }
                // An octal escape: `\0` and up to two more octal digits, or
                // a digit 1-7 followed by one or two (a lone `\1` is a
                // backreference, left for the parser to reject).
                Some(d @ '0'..='7') if d == '0' || octal(chars.get(i + 2)) => {
                    let mut j = i + 2;
                    let mut value = d as u32 - '0' as u32;
                    while j < i + 4 && octal(chars.get(j)) {
                        value = value * 8 + (chars[j] as u32 - '0' as u32);
                        j += 1;
                    }
                    out.push_str(&format!("\\x{{{value:X}}}"));
                    i = j;
                    class_start = false;
                    continue;
                }
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                    i += 2;
                    class_start = false;
                    continue;
                }
                None => {
                    out.push('\\');
                    i += 1;
                    continue;
                }
            }
        }
        if in_class {
            match c {
                ']' if !class_start => {
                    in_class = false;
                    out.push(']');
                }
                '[' if chars.get(i + 1) == Some(&':') => {
                    // POSIX class `[:alpha:]`: copy through `:]`.
                    let mut j = i + 2;
                    while j + 1 < chars.len() && !(chars[j] == ':' && chars[j + 1] == ']') {
                        j += 1;
                    }
                    let end = (j + 2).min(chars.len());
                    out.extend(&chars[i..end]);
                    i = end;
                    class_start = false;
                    continue;
                }
                '[' => out.push_str("\\["),
                '&' | '-' | '~' if chars.get(i + 1) == Some(&c) => {
                    out.push(c);
                    out.push('\\');
                    out.push(c);
                    i += 2;
                    class_start = false;
                    continue;
                }
                _ => out.push(c),
            }
            class_start = false;
            i += 1;
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                out.push('[');
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                class_start = true;
            }
            '{' => {
                if is_repetition(&chars[i..]) {
                    out.push('{');
                } else {
                    out.push_str("\\{");
                }
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// Whether `c` is an octal digit.
fn octal(c: Option<&char>) -> bool {
    c.is_some_and(|c| ('0'..='7').contains(c))
}

/// RE2 counted repetition: `{n}`, `{n,}`, `{n,m}`.
fn is_repetition(s: &[char]) -> bool {
    let mut i = 1;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if i < s.len() && s[i] == ',' {
        i += 1;
        digits(&mut i);
    }
    i < s.len() && s[i] == '}'
}

/// Whether `pattern` is a regex the engine accepts (RE2 syntax, as rule files
/// and the configuration's `allow_secrets` are read); the error says what is
/// wrong and where, with a caret under it.
pub fn check(pattern: &str) -> Result<(), String> {
    parse(pattern).map(|_| ())
}

/// How a pattern was compiled.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub hir: Hir,
}

/// Translates and parses a rule regex, byte-oriented and ASCII where the
/// pattern allows (RE2 semantics, and regex-automata's DFAs keep working on
/// non-ASCII input), Unicode otherwise (`\pL`, non-ASCII literals).
pub(crate) fn parse(pattern: &str) -> Result<Parsed, String> {
    let max = MAX_PATTERN_LEN;
    if pattern.len() > max {
        return Err(format!(
            "the pattern is {} bytes, more than the {max} allowed (a rule's regex is a few \
             hundred bytes: was a file pasted in?)",
            pattern.len()
        ));
    }
    let translated = translate(pattern);
    let ascii = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(&translated);
    match ascii {
        Ok(hir) => Ok(Parsed { hir }),
        Err(ascii_err) => {
            let uni = regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(&translated);
            match uni {
                Ok(hir) => Ok(Parsed { hir }),
                Err(_) => Err(describe(pattern, &translated, &ascii_err)),
            }
        }
    }
}

/// regex-syntax's message shows the pattern with a caret under the fault;
/// we say which pattern it is when translation changed it.
fn describe(original: &str, translated: &str, err: &regex_syntax::Error) -> String {
    let (span, kind) = match err {
        regex_syntax::Error::Parse(e) => (*e.span(), e.kind().to_string()),
        regex_syntax::Error::Translate(e) => (*e.span(), e.kind().to_string()),
        other => return format!("invalid regex: {other}"),
    };
    let col = translated[..span.start.offset].chars().count();
    let mut msg = format!("invalid regex: {kind} at position {col}\n    {translated}\n    ");
    msg.extend(std::iter::repeat_n(' ', col));
    msg.push('^');
    if original != translated {
        msg.push_str(&format!(
            "\n    (positions refer to the pattern after RE2 translation; original: {original})"
        ));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translations() {
        assert_eq!(translate(r"\Qa.b\E+"), r"a\.b+");
        assert_eq!(translate(r"x\Ca"), r"x(?s-u:.)a");
        assert_eq!(translate(r"[[a]"), r"[\[a]");
        assert_eq!(translate(r"[]a]"), r"[]a]");
        assert_eq!(translate(r"[^]a]"), r"[^]a]");
        assert_eq!(translate(r"[[:alpha:]_]"), r"[[:alpha:]_]");
        assert_eq!(translate(r"[a&&b]"), r"[a&\&b]");
        assert_eq!(translate(r"[+--]"), r"[+-\-]");
        assert_eq!(translate(r"a{2,3}b{x}"), r"a{2,3}b\{x}");
        // Octal escapes, as Go reads them: `\0` alone, up to three digits.
        assert_eq!(
            translate(r"a\072b\0c\12[\101-\132]\0777"),
            r"a\x{3A}b\x{0}c\x{A}[\x{41}-\x{5A}]\x{3F}7"
        );
        assert_eq!(translate(r"a{,3}"), r"a\{,3}");
        assert_eq!(translate(r"\{[a-z]{4}\}"), r"\{[a-z]{4}\}");
    }

    #[test]
    fn translated_patterns_compile() {
        for p in [
            r"[[a]+", r"[a&&b]", r"\Q*.*\E", r"a{foo}", r"[+--]x", r"\pL+",
        ] {
            parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
    }

    #[test]
    fn errors_show_position() {
        let e = parse("ab(cd").unwrap_err();
        assert!(e.contains("unclosed group"), "{e}");
        assert!(e.contains("at position 2"), "{e}");
        let e = parse("a(?=b)").unwrap_err();
        assert!(e.contains("look-around"), "{e}");
        let e = parse(r"(a)\1").unwrap_err();
        assert!(e.contains("backreferences are not supported"), "{e}");
    }
}
