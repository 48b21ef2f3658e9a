//! Helpers shared by the integration tests and the benchmarks (which
//! include this file with `#[path]`).
#![allow(dead_code)]

use scanner_engine::{Engine, EngineBuilder, Finding, LinePos, RuleFile, ScanInput, ScanScratch};

/// A deterministic pseudo-random generator (xorshift64*), so that tests
/// need no dependency and failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    /// Random text over `alphabet`.
    pub fn chars(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())] as char)
            .collect()
    }
    /// Random text over `alphabet` that is not a placeholder.
    pub fn token(&mut self, alphabet: &[u8], len: usize) -> String {
        loop {
            let s = self.chars(alphabet, len);
            if !scanner_engine::is_placeholder(s.as_bytes()) {
                return s;
            }
        }
    }
}

pub const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const HEX: &[u8] = b"0123456789abcdef";

pub fn engine(toml: &str) -> Engine {
    let file = RuleFile::parse(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    EngineBuilder::new()
        .add(file)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
        .0
}

pub fn scan_path(engine: &Engine, data: &[u8], path: &str) -> Vec<Finding> {
    let mut scratch = engine.new_scratch();
    scan_with(engine, &mut scratch, data, path)
}

pub fn scan_with(
    engine: &Engine,
    scratch: &mut ScanScratch,
    data: &[u8],
    path: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    scan_into(engine, scratch, data, path, &mut out);
    out
}

/// Scans `data` as a whole file, appending to `out`.
pub fn scan_into(
    engine: &Engine,
    scratch: &mut ScanScratch,
    data: &[u8],
    path: &str,
    out: &mut Vec<Finding>,
) {
    engine.scan(&ScanInput::whole(data, path), scratch, out);
}

pub fn scan(engine: &Engine, data: &[u8]) -> Vec<Finding> {
    scan_path(engine, data, "src/main.rs")
}

/// Scans `data` in chunks of `chunk` owned bytes, each followed by
/// `engine.chunk_overlap()` bytes of overlap, as a caller would.
pub fn scan_chunked(engine: &Engine, data: &[u8], chunk: usize) -> Vec<Finding> {
    let overlap = engine.chunk_overlap();
    let mut scratch = engine.new_scratch();
    let mut out = Vec::new();
    let mut start = LinePos::START;
    let mut base = 0;
    while base < data.len() {
        let owned = chunk.min(data.len() - base);
        let end = (base + owned + overlap).min(data.len());
        engine.scan(
            &ScanInput {
                data: &data[base..end],
                path: "src/main.rs",
                base_offset: base as u64,
                owned_len: owned,
                start,
            },
            &mut scratch,
            &mut out,
        );
        start = start.advance(&data[base..base + owned]);
        base += owned;
    }
    out
}

/// `(rule, line, column, secret)` of each finding, for exact assertions.
pub fn brief(findings: &[Finding]) -> Vec<(String, u32, u32, String)> {
    findings
        .iter()
        .map(|f| (f.rule_id.to_string(), f.line, f.column, f.secret.clone()))
        .collect()
}

/// The built-in rule files on disk (`rules/*.toml`), sorted;
/// `builtin_rules_build_cleanly` checks that the embedded set is the same.
pub fn builtin_names() -> Vec<String> {
    let dir = format!("{}/rules", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    names
}

/// The built-in rules as they are on disk now, leaving out whatever is
/// broken (other tests report that), so that tests over "whatever rules
/// exist" run while the rule files are being written.
pub fn builtin_lenient() -> Engine {
    let mut builder = EngineBuilder::new();
    for name in builtin_names() {
        let path = format!("{}/rules/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        if let Ok(f) = RuleFile::parse(&text, &format!("builtin:{name}")) {
            builder = builder.add(f);
        }
    }
    builder.build_lenient().expect("global build error").0
}

/// Base64 of `data`, padded; URL-safe alphabet if `url`.
pub fn base64(data: &[u8], url: bool) -> String {
    let alphabet: &[u8] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::new();
    for group in data.chunks(3) {
        let n = group.len();
        let v = (group[0] as u32) << 16
            | (*group.get(1).unwrap_or(&0) as u32) << 8
            | *group.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= n {
                out.push(alphabet[(v >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Lowercase hex of `data`.
pub fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// `data` with every byte outside `A-Za-z0-9-_.~` written `%XX`.
pub fn percent(data: &[u8]) -> String {
    data.iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
