//! Files large enough to be split into ranges scanned by several workers
//! (`pipeline/split.rs`): what a range cannot see by itself (the bytes of
//! the ranges before it) must not change what is reported. The basic split
//! tests (same findings, stats, a file cut short) are in `tests/cli.rs`.

mod common;

use common::{token, Tree};

/// A Rust file whose test module (`#[cfg(test)]`) starts in the first range
/// and whose test key lies ranges later: the key is `low`, `test-code`, as
/// when the file is read whole, at every thread count (the marker is in
/// another piece than the finding, which the piece's own reader never sees).
#[test]
fn a_test_module_in_an_earlier_range_lowers_findings_in_later_ones() {
    let t = Tree::new();
    let mut text = format!(
        "const T: &str = \"{}\";\n#[cfg(test)]\nmod tests {{\n",
        token(1)
    );
    text.push_str(&"    // a comment line of the test module\n".repeat(2000));
    text.push_str(&format!("    const U: &str = \"{}\";\n}}\n", token(2)));
    t.write("lib.rs", &text);
    let want = [
        (1, "high", r#"["prefix","checksum-valid"]"#.to_string()),
        (
            2004,
            "low",
            r#"["prefix","checksum-valid","test-code"]"#.to_string(),
        ),
    ];
    let whole = t.run(&["scan", "--format", "json", "--split-threshold", "0"]);
    let mut runs = vec![("whole".to_string(), whole)];
    for threads in ["1", "2", "16"] {
        let args = [
            "scan",
            "--format",
            "json",
            "--split-threshold",
            "20K",
            "--split-grain",
            "8K",
            "--chunk-size",
            "4K",
            "--threads",
            threads,
        ];
        runs.push((format!("split, {threads} threads"), t.run(&args)));
    }
    for (what, r) in &runs {
        let v: serde_json::Value = serde_json::from_str(&r.expect(1).stdout).unwrap();
        let got: Vec<(u64, &str, String)> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["line"].as_u64().unwrap(),
                    f["confidence"].as_str().unwrap(),
                    f["tags"].to_string(),
                )
            })
            .collect();
        assert_eq!(got, want, "{what}");
        assert_eq!(r.stdout, runs[0].1.stdout, "{what}");
    }
}
