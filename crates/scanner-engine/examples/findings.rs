//! Walks directories with the built-in rules and prints findings grouped by
//! rule and confidence, unredacted, so that a person can classify them; then
//! the engine's suppression counts by reason. For precision measurements on
//! real trees (`scripts/precision.sh`), not a scanner: no ignore files, no
//! threads, files over 4 MiB and files with a NUL byte skipped.
//!
//! `cargo run --release -p scanner-engine --example findings -- [--all] DIR...`
//! (`--all`: every rule; default: the `generic-*` rules only.)

use std::collections::BTreeMap;
use std::path::Path;

use scanner_engine::{Engine, Finding, ScanInput, ScanScratch, Suppressed};

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            walk(&e.path(), files);
        } else if t.is_file() {
            files.push(e.path());
        }
    }
}

fn main() {
    let mut all = false;
    let mut roots = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--all" {
            all = true;
        } else {
            roots.push(a);
        }
    }
    let engine = Engine::builtin().expect("built-in rules");
    let mut scratch: ScanScratch = engine.new_scratch();
    let mut suppressed = Suppressed::default();
    let mut groups: BTreeMap<(String, &'static str), Vec<(String, Finding)>> = BTreeMap::new();
    let mut scanned = 0usize;
    for root in &roots {
        let mut files = Vec::new();
        walk(Path::new(root), &mut files);
        files.sort();
        for f in files {
            let Ok(data) = std::fs::read(&f) else {
                continue;
            };
            if data.len() > 4 << 20 || memchr_nul(&data) {
                continue;
            }
            scanned += 1;
            let path = f.to_string_lossy();
            let mut out = Vec::new();
            let input = ScanInput::whole(&data, &path);
            engine.scan(&input, &mut scratch, &mut out);
            for finding in out {
                if all || finding.rule_id.starts_with("generic-") {
                    groups
                        .entry((finding.rule_id.to_string(), finding.confidence.as_str()))
                        .or_default()
                        .push((path.to_string(), finding));
                }
            }
        }
        suppressed.merge(&scratch.take_suppressed());
    }
    let total: usize = groups.values().map(Vec::len).sum();
    for ((rule, conf), list) in &groups {
        println!("== {rule} [{conf}]: {}", list.len());
        for (path, f) in list {
            println!(
                "  {path}:{}  {:?}  tags={}",
                f.line,
                f.secret,
                f.tags.join(",")
            );
        }
    }
    println!("files scanned: {scanned}; findings: {total}");
    let reasons: Vec<String> = suppressed
        .by_reason()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(r, n)| format!("{n} {r}"))
        .collect();
    println!("suppressed: {}", reasons.join(", "));
}

fn memchr_nul(data: &[u8]) -> bool {
    data[..data.len().min(8192)].contains(&0)
}
