//! `--shard K/N` and `scanner merge`: shards partition a tree exactly, and
//! merging their reports gives back what one unsharded run writes, byte for
//! byte; bad inputs to merge are refused with the shard or file named.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{run_in, token, Repo, Run, Tree, BIN};
use serde_json::Value;

/// 60 files in nested directories: 45 with a distinct token each, 15
/// clean, of varied sizes so that byte counts say something.
fn tree() -> Tree {
    let t = Tree::new();
    for i in 0..60u32 {
        let rel = format!("src/d{}/e{}/f{i}.txt", i % 5, i % 3);
        let pad = "x".repeat((i as usize * 37) % 500);
        let body = if i % 4 == 3 {
            format!("clean file {i}\n{pad}\n")
        } else {
            format!("{pad}\ntoken = \"{}\"\n", token(i))
        };
        t.write(rel, body);
    }
    t
}

fn stats(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap()
}

/// Scans `src` in `t` as shard `k` of `n` into `s{k}.{ext}` and `s{k}.stats.json`.
fn shard(t: &Tree, k: u32, n: u32, format: &str, ext: &str, extra: &[&str]) -> Run {
    let spec = format!("{k}/{n}");
    let out = format!("s{k}.{ext}");
    let st = format!("s{k}.stats.json");
    let mut args = vec![
        "scan",
        "-q",
        "--shard",
        &spec,
        "--format",
        format,
        "-o",
        &out,
        "--stats-json",
        &st,
    ];
    args.extend_from_slice(extra);
    args.push("src");
    t.run(&args)
}

fn merge_args(n: u32, ext: &str) -> Vec<String> {
    (1..=n)
        .flat_map(|k| [format!("s{k}.{ext}"), format!("s{k}.stats.json")])
        .collect()
}

fn merge(t: &Tree, format: &str, files: &[String]) -> Run {
    let mut args = vec!["merge", "-q", "--format", format];
    args.extend(files.iter().map(String::as_str));
    t.run(&args)
}

fn clean(t: &Tree) {
    for e in fs::read_dir(t.path()).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            fs::remove_file(p).unwrap();
        }
    }
}

#[test]
fn shards_partition_the_tree_and_merge_to_the_unsharded_json() {
    let t = tree();
    let whole = t.run(&["scan", "-q", "--format", "json", "src"]);
    whole.expect(1);
    assert_eq!(whole.findings().len(), 45);
    for n in [1u32, 2, 3, 7] {
        clean(&t);
        let (mut files, mut bytes) = (0, 0);
        let mut paths: Vec<String> = Vec::new();
        for k in 1..=n {
            let r = shard(&t, k, n, "json", "json", &[]);
            assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
            let s = stats(t.path(), &format!("s{k}.stats.json"));
            assert_eq!(s["shard"]["index"], k);
            assert_eq!(s["shard"]["count"], n);
            // Another shard's files are not skips.
            assert_eq!(s["skipped_total"], 0, "{s}");
            files += s["files"].as_u64().unwrap();
            bytes += s["bytes"].as_u64().unwrap();
            let report: Vec<Value> =
                serde_json::from_str(&read(t.path(), &format!("s{k}.json"))).unwrap();
            paths.extend(
                report
                    .iter()
                    .map(|f| f["path"].as_str().unwrap().to_owned()),
            );
        }
        // Every file in exactly one shard: the counts add up, and no path
        // is reported by two shards.
        assert_eq!(files, 60, "N = {n}");
        let total: u64 = (0..60u32)
            .map(|i| {
                fs::metadata(t.join(format!("src/d{}/e{}/f{i}.txt", i % 5, i % 3)))
                    .unwrap()
                    .len()
            })
            .sum();
        assert_eq!(bytes, total, "N = {n}");
        let mut unique = paths.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), paths.len(), "N = {n}: a path in two shards");
        assert_eq!(paths.len(), 45, "N = {n}");

        let m = merge(&t, "json", &merge_args(n, "json"));
        m.expect(1);
        assert_eq!(m.stdout, whole.stdout, "N = {n}");
    }
}

#[test]
fn sarif_and_jsonl_go_through_merge_unchanged() {
    let t = tree();
    let sarif = t.run(&["scan", "-q", "--format", "sarif", "src"]);
    sarif.expect(1);
    let json = t.run(&["scan", "-q", "--format", "json", "src"]);
    for n in [2u32, 3] {
        clean(&t);
        for k in 1..=n {
            shard(&t, k, n, "jsonl", "jsonl", &[]);
        }
        let m = merge(&t, "sarif", &merge_args(n, "jsonl"));
        m.expect(1);
        assert_eq!(m.stdout, sarif.stdout, "N = {n}");
        let m = merge(&t, "json", &merge_args(n, "jsonl"));
        assert_eq!(m.stdout, json.stdout, "N = {n}");
        // jsonl out: the same objects as the json report, one per line.
        let m = merge(&t, "jsonl", &merge_args(n, "jsonl"));
        let lines: Vec<&str> = m.stdout.lines().collect();
        let arr: Vec<&str> = json.stdout.lines().filter(|l| l.starts_with('{')).collect();
        let arr: Vec<&str> = arr.iter().map(|l| l.trim_end_matches(',')).collect();
        assert_eq!(lines, arr);
    }
}

/// A shard that could not read a path makes the merged run incomplete: its SARIF log says so
/// in `invocations` (exit 2, not successful), one notification naming the shard, as the
/// warning on stderr does.
#[test]
fn a_shard_that_could_not_read_a_path_makes_the_merged_sarif_unsuccessful() {
    let t = tree();
    t.write("src/truncated.zip", b"PK\x03\x04 not a zip");
    // The shard that holds the zip exits 2, the other 1 (its findings).
    let status: Vec<i32> = (1..=2)
        .map(|k| shard(&t, k, 2, "jsonl", "jsonl", &[]).code)
        .collect();
    let with_errors = match status[..] {
        [2, 1] => 1,
        [1, 2] => 2,
        _ => panic!("{status:?}"),
    };
    let m = merge(&t, "sarif", &merge_args(2, "jsonl"));
    m.expect(2);
    let v: Value = serde_json::from_str(&m.stdout).unwrap();
    assert_eq!(
        v["runs"][0]["invocations"],
        serde_json::json!([{
            "executionSuccessful": false,
            "exitCode": 2,
            "toolExecutionNotifications": [{
                "level": "error",
                "message": {
                    "text": format!(
                        "shard {with_errors}/2 (s{with_errors}.stats.json): 1 path could not be \
                         read (see that shard's log)"
                    )
                }
            }]
        }])
    );
}

#[test]
fn merge_refuses_a_missing_or_duplicated_shard() {
    let t = tree();
    for k in 1..=3 {
        shard(&t, k, 3, "json", "json", &[]);
    }
    let mut files = merge_args(3, "json");
    files.retain(|f| !f.starts_with("s2."));
    let r = merge(&t, "json", &files);
    r.expect(2);
    assert!(r.stderr.contains("shard 2/3 missing"), "{}", r.stderr);
    assert_eq!(r.stdout, "");

    let mut files = merge_args(3, "json");
    files.push("dup.stats.json".into());
    files.push("dup.json".into());
    fs::copy(t.join("s3.stats.json"), t.join("dup.stats.json")).unwrap();
    fs::copy(t.join("s3.json"), t.join("dup.json")).unwrap();
    let r = merge(&t, "json", &files);
    r.expect(2);
    assert!(
        r.stderr
            .contains("shard 3/3 given twice: dup.stats.json and s3.stats.json")
            || r.stderr
                .contains("shard 3/3 given twice: s3.stats.json and dup.stats.json"),
        "{}",
        r.stderr
    );

    // A report without its stats, and stats without their report.
    let mut files = merge_args(3, "json");
    files.retain(|f| f != "s2.json");
    let r = merge(&t, "json", &files);
    r.expect(2);
    assert!(
        r.stderr
            .contains("shard 2/3 (s2.stats.json): its report (json, "),
        "{}",
        r.stderr
    );
    let r = merge(&t, "json", &merge_args(2, "json"));
    r.expect(2);
    assert!(r.stderr.contains("shard 3/3 missing"), "{}", r.stderr);
}

/// A stats file whose shard no scan could have run (edited, or corrupt) is refused by name:
/// `0/0` was merged as the whole scan ("merged 1 shard", exit 1, a third of the findings),
/// and a count of 10^12 hung listing the shards missing. The missing shards of a real large
/// count are named ten at a time.
#[test]
fn merge_refuses_impossible_shards_and_names_ten_missing() {
    let t = tree();
    shard(&t, 1, 3, "json", "json", &[]).expect(1);
    let mut v = stats(t.path(), "s1.stats.json");
    for (k, n) in [(0u64, 0u64), (5, 3), (1, 1_000_000_000_000)] {
        v["shard"] = serde_json::json!({"index": k, "count": n});
        fs::write(t.join("s1.stats.json"), v.to_string()).unwrap();
        let r = merge(&t, "json", &merge_args(1, "json"));
        r.expect(2);
        assert_eq!(
            r.stderr,
            format!(
                "scanner: error: s1.stats.json: shard {k}/{n} is no shard of a scan \
                 (1 <= K <= N <= 65536): not a stats file scanner wrote\n"
            )
        );
        assert_eq!(r.stdout, "");
    }
    shard(&t, 1, 65536, "json", "json", &[]);
    let r = merge(&t, "json", &merge_args(1, "json"));
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: shards 2/65536, 3/65536, 4/65536, 5/65536, 6/65536, 7/65536, \
         8/65536, 9/65536, 10/65536, 11/65536 and 65,525 more missing (no stats file for \
         them)\n"
    );
}

/// Inputs that are no file of a shard are named with what to do: a directory (`scanner merge
/// out` for `out/*`) said "out: Is a directory (os error 21)", a binary file "stream did not
/// contain valid UTF-8".
#[test]
fn merge_names_a_directory_or_a_binary_input() {
    let t = Tree::new();
    fs::create_dir(t.join("out")).unwrap();
    let r = t.run(&["merge", "out"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: out: is a directory: name the shards' files in it (`out/*`)\n"
    );
    t.write("out/blob.bin", b"\xff\xfe\x00binary");
    let r = t.run(&["merge", "out/blob.bin"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: out/blob.bin: not UTF-8 text, so neither a shard's json or jsonl \
         report nor its --stats-json\n"
    );
}

/// A shard sees only its share of the baseline's files: `--report-unused` listed every
/// entry of the other shards as unused (exit 0), inviting their removal. It needs the whole
/// scan, and says so.
#[test]
fn report_unused_is_refused_in_a_shard() {
    let t = tree();
    t.run(&["scan", "-q", "--write-baseline", "b.json", "src"])
        .expect(0);
    let whole = t.run(&[
        "scan",
        "-q",
        "--baseline",
        "b.json",
        "--report-unused",
        "src",
    ]);
    whole.expect(0);
    assert_eq!(whole.stderr, "");
    let r = t.run(&[
        "scan",
        "-q",
        "--shard",
        "1/2",
        "--baseline",
        "b.json",
        "--report-unused",
        "src",
    ]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: --report-unused needs the whole scan: a shard sees only its share, so \
         the entries of every other shard would be listed as unused (run it unsharded)\n"
    );
    assert_eq!(r.stdout, "");
}

/// Merge's lines on stderr count as the scan's summary does: "1 shard", "1 file", "1
/// finding", "1 path", sizes in B/KB/MB, thousands separated (it said "1 files (53 bytes)
/// scanned, 1 findings" and "1 paths could not be read").
#[test]
fn merge_counts_in_words_as_the_summary_does() {
    let t = Tree::new();
    t.write("a.txt", format!("T={}\n", token(1)));
    t.write("list", "a.txt\nmissing.txt\n");
    let r = t.run(&[
        "scan",
        "-q",
        "--shard",
        "1/1",
        "--files-from",
        "list",
        "--format",
        "json",
        "-o",
        "s1.json",
        "--stats-json",
        "s1.stats.json",
    ]);
    r.expect(2);
    let r = t.run(&["merge", "--format", "json", "s1.json", "s1.stats.json"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: warning: shard 1/1 (s1.stats.json): 1 path could not be read (see that \
         shard's log)\nmerged 1 shard: 1 file (43 B) scanned, 1 finding\n"
    );
}

#[test]
fn merge_refuses_shards_of_different_rule_sets_or_options() {
    let t = tree();
    t.write(
        "extra.toml",
        "[[rules]]\nid = \"acme-key\"\nname = \"Acme key\"\ndescription = \"test\"\n\
         regex = '''\\b(acme_[a-z0-9]{16})\\b'''\nsecretGroup = 1\nkeywords = [\"acme_\"]\n\
         examples = [\"key = acme_q8w2k5n1x7c3v9b4\", \"key = acme_r4t6y8u0i2o4p6a8\"]\n\
         negative_examples = [\"key = acme_UPPERCASEONLY00\"]\n",
    );
    shard(&t, 1, 2, "json", "json", &[]);
    shard(&t, 2, 2, "json", "json", &["--extra-rules", "extra.toml"]);
    let r = merge(&t, "json", &merge_args(2, "json"));
    r.expect(2);
    assert!(
        r.stderr.contains(
            "shard 2/2 (s2.stats.json) was run with a different rule set than shard 1/2 (s1.stats.json)"
        ),
        "{}",
        r.stderr
    );
    shard(&t, 2, 2, "json", "json", &["--min-confidence", "high"]);
    let r = merge(&t, "json", &merge_args(2, "json"));
    r.expect(2);
    assert!(
        r.stderr.contains(
            "shard 2/2 (s2.stats.json) was run with different options than shard 1/2 (s1.stats.json)"
        ),
        "{}",
        r.stderr
    );
    // A text report cannot be merged.
    shard(&t, 2, 2, "text", "json", &[]);
    let r = merge(&t, "json", &merge_args(2, "json"));
    r.expect(2);
    assert!(
        r.stderr
            .contains("shard 2/2 (s2.stats.json): its report is text"),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_shard_values_exit_2() {
    let t = tree();
    // 65537: past the 65536 buckets (it aborted, allocating a load per shard: 4000000000
    // shards asked for 32 GB).
    for bad in ["3/2", "0/0", "a/b", "2", "0/3", "1/65537", "1/4000000000"] {
        let r = t.run(&["scan", "--shard", bad, "src"]);
        r.expect(2);
        assert!(
            r.stderr.contains(&format!(
                "`{bad}` is not a shard: expected K/N with 1 <= K <= N <= 65536, e.g. 2/8"
            )),
            "{bad}: {}",
            r.stderr
        );
    }
    let env_run = |vars: &[(&str, &str)]| {
        let mut c = Command::new(BIN);
        c.current_dir(t.path()).args(["scan", "-q", "src"]);
        for (k, v) in vars {
            c.env(k, v);
        }
        Run::from_output(c.output().unwrap())
    };
    let r = env_run(&[("SCANNER_SHARDS", "4")]);
    r.expect(2);
    assert!(
        r.stderr
            .contains("SCANNER_SHARDS=4 without JOB_COMPLETION_INDEX"),
        "{}",
        r.stderr
    );
    let r = env_run(&[("SCANNER_SHARDS", "4"), ("JOB_COMPLETION_INDEX", "4")]);
    r.expect(2);
    assert!(r.stderr.contains("JOB_COMPLETION_INDEX=4"), "{}", r.stderr);
    let r = env_run(&[("SCANNER_SHARDS", "65537"), ("JOB_COMPLETION_INDEX", "0")]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: SCANNER_SHARDS=65537: not a shard count (1 to 65536)\n"
    );
    // The largest count is a shard like any other.
    let r = t.run(&[
        "scan",
        "-q",
        "--shard",
        "65536/65536",
        "--format",
        "json",
        "src",
    ]);
    r.expect(0);
    assert_eq!(r.stdout, "[]\n");
}

#[test]
fn job_completion_index_is_honoured() {
    let t = tree();
    for k in 1..=3u32 {
        shard(&t, k, 3, "json", "json", &[]);
        let idx = (k - 1).to_string();
        let out = Command::new(BIN)
            .current_dir(t.path())
            .env("SCANNER_SHARDS", "3")
            .env("JOB_COMPLETION_INDEX", &idx)
            .args([
                "scan",
                "-q",
                "--format",
                "json",
                "--stats-json",
                "env.stats.json",
                "src",
            ])
            .output()
            .unwrap();
        let r = Run::from_output(out);
        assert_eq!(
            r.stdout,
            read(t.path(), &format!("s{k}.json")),
            "index {idx}"
        );
        let s = stats(t.path(), "env.stats.json");
        assert_eq!(s["shard"]["index"], k);
        assert_eq!(s["shard"]["count"], 3);
        // --shard wins over the environment.
        let out = Command::new(BIN)
            .current_dir(t.path())
            .env("SCANNER_SHARDS", "3")
            .env("JOB_COMPLETION_INDEX", &idx)
            .args(["scan", "-q", "--shard", "1/1", "--format", "json", "src"])
            .output()
            .unwrap();
        assert_eq!(Run::from_output(out).findings().len(), 45);
    }
}

/// What an Indexed Job does: N pods at once, each with only its
/// environment to tell it apart (the same command line, `JOB_COMPLETION_INDEX`
/// and `SCANNER_SHARDS`), each writing into a shared volume; then one merge
/// over everything in that volume.
#[test]
fn indexed_job_pods_then_merge() {
    let t = tree();
    let whole = t.run(&["scan", "-q", "--format", "json", "src"]);
    let out = t.join("out");
    fs::create_dir(&out).unwrap();
    let n = 4;
    let pods: Vec<_> = (0..n)
        .map(|i| {
            Command::new("sh")
                .current_dir(t.path())
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .env("SCANNER_SHARDS", n.to_string())
                .env("SCANNER", BIN)
                .args([
                    "-c",
                    "\"$SCANNER\" scan -q --format jsonl \
                     -o out/shard-$JOB_COMPLETION_INDEX.jsonl \
                     --stats-json out/shard-$JOB_COMPLETION_INDEX.stats.json src",
                ])
                .stdin(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut p in pods {
        let code = p.wait().unwrap().code().unwrap();
        assert!(code == 0 || code == 1, "pod exited {code}");
    }
    let mut files: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| format!("out/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    files.sort();
    assert_eq!(files.len(), 8);
    let r = merge(&t, "json", &files);
    r.expect(1);
    assert_eq!(r.stdout, whole.stdout);
    let mut args = vec!["merge", "--format", "json", "-o", "all.json"];
    args.extend(files.iter().map(String::as_str));
    let r = run_in(t.path(), &args);
    r.expect(1);
    assert_eq!(read(t.path(), "all.json"), whole.stdout);
    assert!(
        r.stderr.contains("merged 4 shards: 60 files"),
        "{}",
        r.stderr
    );
}

#[test]
fn history_shards_split_by_blob() {
    let repo = Repo::new();
    for i in 0..12u32 {
        repo.write(
            format!("f{i}.env"),
            format!("token = \"{}\"\n", token(100 + i)),
        );
        repo.git(&["add", "."]);
        repo.commit(&format!("c{i}"));
    }
    let whole = repo.scan(&["scan", "-q", "--history", "--format", "json"]);
    whole.expect(1);
    assert_eq!(whole.findings().len(), 12);
    let (merged, stats) = history_in_shards(&repo, 3, "json");
    let blobs: u64 = stats.iter().map(|v| v["files"].as_u64().unwrap()).sum();
    assert_eq!(blobs, 12);
    merged.expect(1);
    assert_eq!(merged.stdout, whole.stdout);
}

/// The SARIF of a history scan names the repository it read (its URI, the
/// commit and branch of `HEAD`): merged from shards, it must still be what
/// one unsharded run writes, that `versionControlProvenance` included.
#[test]
fn history_shards_merge_to_the_unsharded_sarif() {
    let repo = Repo::new();
    for i in 0..6u32 {
        repo.write(
            format!("f{i}.env"),
            format!("token = \"{}\"\n", token(200 + i)),
        );
        repo.git(&["add", "."]);
        repo.commit(&format!("c{i}"));
    }
    let whole = repo.scan(&["scan", "-q", "--history", "--format", "sarif"]);
    whole.expect(1);
    let head = String::from_utf8(repo.git_out(&["rev-parse", "HEAD"]).stdout).unwrap();
    let sarif: Value = serde_json::from_str(&whole.stdout).unwrap();
    assert_eq!(
        sarif["runs"][0]["versionControlProvenance"],
        serde_json::json!([{
            "repositoryUri": format!("file://{}", repo.root.display()),
            "revisionId": head.trim(),
            "branch": "main",
        }])
    );
    let (merged, stats) = history_in_shards(&repo, 3, "sarif");
    merged.expect(1);
    assert_eq!(merged.stdout, whole.stdout);
    assert_eq!(
        stats[0]["version_control"],
        sarif["runs"][0]["versionControlProvenance"]
    );
}

/// `scan --history` in `n` shards (JSON reports and `--stats-json`), then
/// `scanner merge` of them: the merge's run and each shard's stats.
fn history_in_shards(repo: &Repo, n: u32, format: &str) -> (Run, Vec<Value>) {
    let mut files = Vec::new();
    let mut stats = Vec::new();
    for k in 1..=n {
        let spec = format!("{k}/{n}");
        let out = repo.root.join(format!("s{k}.json"));
        let st = repo.root.join(format!("s{k}.stats.json"));
        let r = repo.scan(&[
            "scan",
            "-q",
            "--history",
            "--shard",
            &spec,
            "--format",
            "json",
            "-o",
            out.to_str().unwrap(),
            "--stats-json",
            st.to_str().unwrap(),
        ]);
        assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
        stats.push(serde_json::from_str(&fs::read_to_string(&st).unwrap()).unwrap());
        files.push(out.to_str().unwrap().to_owned());
        files.push(st.to_str().unwrap().to_owned());
    }
    let mut args = vec!["merge", "-q", "--format", format];
    args.extend(files.iter().map(String::as_str));
    (repo.scan(&args), stats)
}

/// Later versions of a file are scanned against the version before, which
/// may lie in another shard: each shard reads it from the object store, so
/// the shards together still report each kept secret once, at the commit
/// that added it, and leave the same bytes unscanned as a whole run.
#[test]
fn history_shards_agree_on_versions_whose_base_is_elsewhere() {
    let repo = Repo::new();
    // Over 8 KiB, so that later versions are scanned around their changes.
    let notes: String = (0..500)
        .map(|n| format!("note {n:04} unchanged\n"))
        .collect();
    for v in 0..5u32 {
        for f in 0..6u32 {
            let added = if f == 0 && v >= 2 {
                format!("late = \"{}\"\n", token(300))
            } else {
                String::new()
            };
            repo.write(
                format!("f{f}.env"),
                format!(
                    "token = \"{}\"\n{added}{notes}version {v}\n",
                    token(200 + f)
                ),
            );
        }
        repo.git(&["add", "."]);
        repo.commit(&format!("v{v}"));
    }
    let whole_stats = repo.root.join("whole.stats.json");
    let whole = repo.scan(&[
        "scan",
        "-q",
        "--history",
        "--format",
        "json",
        "--stats-json",
        whole_stats.to_str().unwrap(),
    ]);
    whole.expect(1);
    // Each kept token once, at its first version; the late one at its own.
    assert_eq!(whole.findings().len(), 7, "{:?}", whole.locations());
    let v: Value = serde_json::from_str(&fs::read_to_string(&whole_stats).unwrap()).unwrap();
    let unchanged = v["history"]["unchanged_bytes"].as_u64().unwrap();
    assert!(unchanged > 200_000, "{unchanged}");
    let (merged, stats) = history_in_shards(&repo, 3, "json");
    let unchanged_shards: u64 = stats
        .iter()
        .map(|v| v["history"]["unchanged_bytes"].as_u64().unwrap())
        .sum();
    // A shard reads a base held by another shard too, so it focuses at
    // least as much; it may focus more: a version after one that changed
    // wide is scanned whole only where that one was scanned
    // (`input/history/versions.rs`, `Quiet`).
    assert!(
        unchanged_shards >= unchanged,
        "{unchanged_shards} < {unchanged}"
    );
    merged.expect(1);
    assert_eq!(merged.stdout, whole.stdout);
}

/// Hashing alone would let two large files land in one shard; large files
/// are dealt by size, so each of 4 shards gets one of the 4 large files,
/// and a large binary (skipped after 8 KiB) weighs almost nothing.
#[test]
fn large_files_are_dealt_by_size() {
    let t = Tree::new();
    let large = 200 * 1024;
    for i in 0..4 {
        t.write(format!("src/big{i}.txt"), "y".repeat(large));
    }
    let mut bin = vec![b'z'; 300 * 1024];
    bin[10] = 0;
    t.write("src/blob.bin", bin);
    for i in 0..20 {
        t.write(format!("src/small/s{i}.txt"), "s".repeat(1000));
    }
    let (mut files, mut binary) = (0, 0);
    for k in 1..=4 {
        shard(&t, k, 4, "json", "json", &[]).expect(0);
        let s = stats(t.path(), &format!("s{k}.stats.json"));
        let bytes = s["bytes"].as_u64().unwrap();
        assert!(
            (large as u64..=large as u64 + 20_000).contains(&bytes),
            "shard {k}: {bytes} bytes"
        );
        files += s["files"].as_u64().unwrap();
        binary += s["skipped"]["binary"].as_u64().unwrap_or(0);
    }
    assert_eq!((files, binary), (24, 1));
}
