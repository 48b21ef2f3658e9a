//! Rules of the code's layout that a change can break without any other test noticing
//! (issue 31, section 1): no source file over 60 KB; no cycle among a crate's top-level
//! modules; the inputs (`input/`) reach nothing of the pipeline, the output or the report;
//! every stderr line is written, and its `scanner:` prefix made, by `messages.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The largest a source file may be.
const MAX_SOURCE_BYTES: u64 = 60 * 1024;

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The workspace's own sources: the binary's and each crate's `src/`.
fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = rust_files(&root.join("src"));
    for krate in ["scanner-cli", "scanner-engine", "scanner-scheduler"] {
        files.extend(rust_files(&root.join("crates").join(krate).join("src")));
    }
    assert!(files.len() > 100, "found {} sources", files.len());
    files
}

/// The lines of `path` that are code outside its tests: up to a top-level
/// `#[cfg(test)]`, none for a file of tests (`tests.rs`, `test_*.rs`), and without
/// comments.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let name = path.file_name().unwrap().to_string_lossy();
    if name == "tests.rs" || name.starts_with("test_") {
        return Vec::new();
    }
    let text = fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .take_while(|(_, line)| *line != "#[cfg(test)]")
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .map(|(i, line)| (i + 1, line.to_string()))
        .collect()
}

#[test]
fn no_source_file_is_over_60_kb() {
    let large: Vec<String> = sources()
        .into_iter()
        .filter_map(|p| {
            let len = fs::metadata(&p).unwrap().len();
            (len > MAX_SOURCE_BYTES).then(|| format!("{} ({len} bytes)", p.display()))
        })
        .collect();
    assert!(large.is_empty(), "split these by concern: {large:#?}");
}

#[test]
fn the_inputs_reach_nothing_of_the_pipeline_the_output_or_the_report() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let input = root.join("crates/scanner-cli/src/input");
    let mut reached = Vec::new();
    for path in rust_files(&input) {
        for (n, line) in code_lines(&path) {
            for module in ["pipeline", "output", "report"] {
                let needle = format!("crate::{module}");
                let uses = line.match_indices(&needle).any(|(at, _)| {
                    let next = line[at + needle.len()..].chars().next();
                    !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if uses {
                    reached.push(format!("{}:{n}: {}", path.display(), line.trim()));
                }
            }
        }
    }
    assert!(reached.is_empty(), "{reached:#?}");
    // The check sees a use where there is one.
    assert!(
        code_lines(&root.join("crates/scanner-cli/src/pipeline/mod.rs"))
            .iter()
            .any(|(_, l)| l.contains("crate::input"))
    );
}

#[test]
fn every_stderr_line_is_written_by_messages() {
    let mut printing = Vec::new();
    for path in sources() {
        if path.ends_with("scanner-cli/src/messages.rs") {
            continue;
        }
        for (n, line) in code_lines(&path) {
            let prints = line.contains("eprintln!") || line.contains("eprint!");
            if prints || line.contains("\"scanner: ") {
                printing.push(format!("{}:{n}: {}", path.display(), line.trim()));
            }
        }
    }
    assert!(
        printing.is_empty(),
        "print, and prefix, through scanner_cli::messages: {printing:#?}"
    );
}

/// The top-level modules of the crate whose sources are in `src`, each with the others its
/// code names (`crate::NAME`, `crate::{NAME, ...}`, and `super::NAME` in a top-level file).
fn module_uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "lib.rs" || name == "main.rs" {
            continue;
        }
        match name.strip_suffix(".rs") {
            Some(module) => files.insert(module.to_string(), vec![path]),
            None if path.is_dir() => files.insert(name, rust_files(&path)),
            None => None,
        };
    }
    let named = |text: &str, prefix: &str| -> Vec<String> {
        let mut names = Vec::new();
        for (at, _) in text.match_indices(prefix) {
            let rest = &text[at + prefix.len()..];
            let group = match rest.strip_prefix('{') {
                Some(group) => &group[..group.find('}').unwrap_or(group.len())],
                None => rest,
            };
            for item in group.split(',') {
                let item = item.trim_start();
                let end = item
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(item.len());
                names.push(item[..end].to_string());
                if !rest.starts_with('{') {
                    break;
                }
            }
        }
        names
    };
    let mut uses = BTreeMap::new();
    for (module, paths) in &files {
        let mut used = BTreeSet::new();
        for path in paths {
            let top_level = paths.len() == 1 && path.parent() == Some(src);
            for (_, line) in code_lines(path) {
                let mut names = named(&line, "crate::");
                if top_level {
                    names.extend(named(&line, "super::"));
                }
                used.extend(
                    names
                        .into_iter()
                        .filter(|n| n != module && files.contains_key(n)),
                );
            }
        }
        uses.insert(module.clone(), used);
    }
    uses
}

/// A cycle in `uses`, if there is one: the modules along it.
fn cycle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth first; a module met again while on the path closes a cycle.
    fn visit(
        module: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut found = path[at..].to_vec();
            found.push(module.to_string());
            return Some(found);
        }
        if !done.insert(module.to_string()) {
            return None;
        }
        path.push(module.to_string());
        for next in &uses[module] {
            if let Some(found) = visit(next, uses, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    uses.keys()
        .find_map(|m| visit(m, uses, &mut Vec::new(), &mut done))
}

#[test]
fn no_cycle_among_a_crates_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in ["scanner-cli", "scanner-engine", "scanner-scheduler"] {
        let uses = module_uses(&root.join("crates").join(krate).join("src"));
        assert!(uses.len() > 5, "{krate}: {} modules", uses.len());
        assert_eq!(cycle(&uses), None, "{krate}");
    }
    // The check sees the uses that make a cycle.
    let cli = module_uses(&root.join("crates/scanner-cli/src"));
    assert!(cli["pipeline"].contains("input") && cli["scan"].contains("pipeline"));
    let mut cyclic = cli.clone();
    cyclic.get_mut("input").unwrap().insert("pipeline".into());
    let found = cycle(&cyclic).expect("input and pipeline use each other");
    assert!(found.contains(&"input".into()) && found.contains(&"pipeline".into()));
}
