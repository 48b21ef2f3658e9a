//! Rules of the code's layout that a change can break without any other test noticing
//! (issue 31, section 1): no source file over 60 KB; the inputs (`input/`) reach nothing of
//! the pipeline, the output or the report; every stderr line is written, and its
//! `scanner:` prefix made, by `messages.rs`.

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
