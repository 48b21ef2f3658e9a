//! The progress line drawn on stderr during a scan, and the number formats it shares with the
//! end-of-scan summary ([`crate::summary`]). The pipeline's sink draws it; lines printed while it
//! is drawn go through [`Progress::println`], which erases it around them.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// The progress line: drawn only while stderr is a terminal (the caller
/// checks), rate-limited by indicatif, erased at the end.
pub struct Progress {
    bar: ProgressBar,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress::new()
    }
}

impl Progress {
    pub fn new() -> Progress {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar }
    }

    pub fn update(&self, files: u64, bytes: u64, findings: u64) {
        self.bar.set_message(format!(
            "{} {}, {}, {} {}",
            thousands(files),
            plural(files, "file", "files"),
            megabytes(bytes),
            thousands(findings),
            plural(findings, "finding", "findings")
        ));
    }

    /// Prints a line above the progress line.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| crate::messages::print(line));
    }

    /// Runs `f` with the progress line erased (for output to the terminal
    /// the line is drawn on), then draws it again.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// True when a progress line makes sense: stderr is a terminal.
    pub fn wanted() -> bool {
        std::io::stderr().is_terminal()
    }
}

pub(crate) fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// 1234567 → "1,234,567".
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn megabytes(bytes: u64) -> String {
    if bytes < 1000 {
        format!("{bytes} B")
    } else if bytes < 1_000_000 {
        format!("{:.1} KB", bytes as f64 / 1e3)
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
}
