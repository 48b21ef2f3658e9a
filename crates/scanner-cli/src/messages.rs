//! Everything the scanner says on stderr goes through here: one place owns the
//! `scanner: warning:` / `scanner: error:` prefixes and the escaping of paths,
//! so that a prefix is never doubled and a file name holding control
//! characters cannot drive the terminal.
//!
//! Callers pass the parts (a path, a rule, the reason) and never format the
//! prefix themselves. While a progress line is drawn, the sink prints
//! them between its redraws ([`crate::progress::Progress`]).
//!
//! How much is said is decided here too ([`set_verbosity`], from
//! `--log-level` and `-v`), the way ripgrep's `messages.rs` keeps its
//! switches: [`warn`] and [`note`] check it themselves; a caller that prints
//! a line built here (the sink, between progress redraws) asks
//! [`warnings_shown`] or [`suppressed_shown`] first.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

/// `eprintln!` without its panic: a stderr that cannot be written (a reader
/// gone, `2>&1 >report | head -1`; a full disk) loses the line, not the run
/// and its exit status. Nobody is left to tell.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// What goes to stderr besides the errors, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `--log-level error`: errors, and the warnings that make the exit
    /// status 2 (an unreadable file), since they say why; no notes, no
    /// summary.
    Errors = 0,
    /// The default (`--log-level warn`): errors, warnings, notes, summary.
    Warnings = 1,
    /// `-v`, `--log-level info|debug|trace`: also one line per suppressed
    /// finding ([`suppressed_line`]) and per file not scanned
    /// ([`not_scanned_line`]).
    Suppressed = 2,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(Verbosity::Warnings as u8);

/// Sets what is said from now on, for the whole process (set once, before
/// the scan starts).
pub fn set_verbosity(v: Verbosity) {
    VERBOSITY.store(v as u8, Ordering::Relaxed);
}

pub fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Errors,
        1 => Verbosity::Warnings,
        _ => Verbosity::Suppressed,
    }
}

/// Whether warnings and notes are printed (not under `--log-level error`).
pub fn warnings_shown() -> bool {
    verbosity() >= Verbosity::Warnings
}

/// Whether each suppressed finding and each file not scanned is listed (`-v`).
pub fn suppressed_shown() -> bool {
    verbosity() >= Verbosity::Suppressed
}

/// A warning about `path` (when there is one): `scanner: warning: PATH: REASON`.
pub fn warning_line(path: Option<&Path>, reason: &str) -> String {
    format!("scanner: warning: {}", warning_text(path, reason))
}

/// [`warning_line`] without its prefix, `PATH: REASON`: what a report records of it (SARIF's
/// `toolExecutionNotifications`).
pub fn warning_text(path: Option<&Path>, reason: &str) -> String {
    match path {
        Some(p) => format!("{}: {}", escape_path(p), sanitize(reason)),
        None => sanitize(reason).into_owned(),
    }
}

/// Prints [`warning_line`] on stderr, unless only errors are wanted.
pub fn warn(path: Option<&Path>, reason: &str) {
    if warnings_shown() {
        say!("{}", warning_line(path, reason));
    }
}

/// Prints `scanner: note: MESSAGE` on stderr: nothing is wrong, but the
/// user should know (which config was picked up, a replaced rule). Not
/// under `--log-level error`.
pub fn note(message: &str) {
    if warnings_shown() {
        say!("scanner: note: {}", sanitize(message));
    }
}

/// `scanner: MESSAGE`: what a command did (`wrote 3 findings to FILE`), or a statement the
/// user acts on (a refused commit, an unused baseline entry).
pub fn info_line(message: &str) -> String {
    format!("scanner: {}", sanitize(message))
}

/// Prints [`info_line`] on stderr. Not under `--log-level error`.
pub fn info(message: &str) {
    if warnings_shown() {
        say!("{}", info_line(message));
    }
}

/// Prints an indented line that continues the [`info`] before it (a list under it).
pub fn hint(line: &str) {
    if warnings_shown() {
        say!("  {}", sanitize(line));
    }
}

/// Prints a whole line as it is (through [`sanitize`]): one built by this module
/// ([`warning_line`], [`rule_warning`], [`suppressed_line`]), an already-sanitized note, or an
/// unprefixed status line of a subcommand (`merged 3 shards: ...`). The caller decides whether
/// it is wanted (the sink between progress redraws asks [`warnings_shown`] first).
pub fn print(line: &str) {
    say!("{}", sanitize(line));
}

/// Prints `lines` as one block, stderr locked across them so that no other thread's line
/// lands in between (the end-of-scan summary).
pub fn print_lines(lines: &[String]) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(err, "{}", sanitize(line));
    }
}

/// A finding that was not reported, and why (`-v`):
/// `scanner: suppressed: PATH:LINE:COLUMN: rule `ID`: REASON`, with
/// ` (commit ID)` after the position for a history finding. REASON is the
/// label the summary counts it under (`inline allow`, `baseline`, ...).
pub fn suppressed_line(
    path: &Path,
    commit: Option<&str>,
    line: u32,
    column: u32,
    rule: &str,
    reason: &str,
) -> String {
    let mut out = format!("scanner: suppressed: {}:{line}:{column}", escape_path(path));
    if let Some(c) = commit {
        let _ = write!(out, " (commit {})", escape(c));
    }
    let _ = write!(out, ": rule `{}`: {reason}", escape(rule));
    out
}

/// A file not scanned, and why (`-v`): `scanner: not scanned: PATH: REASON`,
/// with ` (commit ID)` after the path for a history blob. REASON is the
/// label the summary counts it under (`binary`, `too large`, ...).
pub fn not_scanned_line(path: &Path, commit: Option<&str>, reason: &str) -> String {
    let mut out = format!("scanner: not scanned: {}", escape_path(path));
    if let Some(c) = commit {
        let _ = write!(out, " (commit {})", escape(c));
    }
    let _ = write!(out, ": {reason}");
    out
}

/// Prints `scanner: error: MESSAGE` on stderr.
pub fn error(message: &str) {
    say!("scanner: error: {}", sanitize(message));
}

/// A rule-set warning: `scanner: warning: FILE: rule `ID`: MESSAGE`, each
/// part only where the warning names it.
pub fn rule_warning(file: Option<&Path>, rule: Option<&str>, message: &str) -> String {
    rule_line("warning", file, rule, message)
}

/// The same shape as [`rule_warning`] for what is not wrong (a user rule
/// replacing a built-in): `scanner: note: ...`.
pub fn rule_note(file: Option<&Path>, rule: Option<&str>, message: &str) -> String {
    rule_line("note", file, rule, message)
}

fn rule_line(level: &str, file: Option<&Path>, rule: Option<&str>, message: &str) -> String {
    let mut line = format!("scanner: {level}: ");
    if let Some(f) = file {
        let _ = write!(line, "{}: ", escape_path(f));
    }
    if let Some(r) = rule {
        let _ = write!(line, "rule `{}`: ", escape(r));
    }
    line.push_str(&sanitize(message));
    line
}

/// Escapes everything that could act on a terminal or break the one-line-per-finding rule.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() || is_bidi_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A message part that may hold text from outside (a crate's error, which can quote raw bytes
/// of a tar header or a file name), made safe for the terminal: every control and bidi character
/// becomes an escape as [`escape`] writes it, but a backslash stays as it is, so that text already
/// [`escape`]d (a path named in the message) passes unchanged. Every line printed here goes
/// through it.
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() || is_bidi_control(c)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() || is_bidi_control(c) {
            out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A path as every message on stderr and the text report show it: [`escape`]d, so that a file
/// name holding ESC or other control characters cannot drive the terminal, and each byte that
/// is not UTF-8 written as `\xNN`: `caf\xe9.env` names the file exactly, where lossy UTF-8
/// printed `caf` and U+FFFD for any such byte.
pub fn escape_path(p: impl AsRef<std::path::Path>) -> String {
    let bytes = p.as_ref().as_os_str().as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(&escape(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// Unicode characters that reorder the display of the text around them ("Trojan Source").
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte that is not UTF-8 is named, not replaced: two such names stay
    /// apart, and a literal backslash is doubled, so `\xe9` is unambiguous.
    #[cfg(unix)]
    #[test]
    fn paths_show_bytes_that_are_not_utf8_as_escapes() {
        use std::os::unix::ffi::OsStrExt;
        let path = |b: &[u8]| escape_path(std::ffi::OsStr::from_bytes(b));
        assert_eq!(path(b"caf\xe9.env"), "caf\\xe9.env");
        assert_eq!(path(b"caf\xe8.env"), "caf\\xe8.env");
        assert_eq!(path(b"a\\xe9\x1b"), "a\\\\xe9\\x1b");
        assert_eq!(path("d\u{e9}j\u{e0}".as_bytes()), "d\u{e9}j\u{e0}");
    }

    #[test]
    fn sanitize_escapes_controls_and_leaves_escaped_text_alone() {
        let raw = "numeric field: \x1b]0;x\x07 for a\u{202E}b\\c\n";
        assert_eq!(
            sanitize(raw),
            "numeric field: \\x1b]0;x\\x07 for a\\u{202e}b\\c\\n"
        );
        // A path escaped before it was put in the message passes unchanged.
        let escaped = escape("dir\x1b[2J/f");
        assert_eq!(escaped, "dir\\x1b[2J/f");
        assert_eq!(sanitize(&escaped), escaped);
        assert!(matches!(sanitize("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            warning_line(Some(Path::new("a\x1b.tar")), "bad \x1b[2J header"),
            "scanner: warning: a\\x1b.tar: bad \\x1b[2J header"
        );
    }
}
