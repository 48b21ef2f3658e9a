//! Every source produces its items through one emitter (`input::emit`), which
//! decides sharding and scope once for all of them: the same decisions
//! whatever the source.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use common::{git_in, isolate, token, Repo, Run, BIN};

/// 16 files with a token each, under two directories.
fn files(r: &Repo) -> Vec<String> {
    let mut names = Vec::new();
    for i in 0..16u32 {
        let name = format!("{}/f{i}.env", if i % 2 == 0 { "src" } else { "lib" });
        r.write(&name, format!("# file {i}\nT={}\n", token(300 + i)));
        names.push(name);
    }
    names
}

fn scan(r: &Repo, args: &[&str]) -> Run {
    let mut all = vec!["scan", "-q", "--format", "json"];
    all.extend_from_slice(args);
    r.scan(&all)
}

fn found(run: &Run) -> BTreeSet<String> {
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    run.path_lines().into_iter().collect()
}

/// Scans with `--stats-json` into `stats`: the findings, and the items the
/// source emitted (`producer.items`).
fn scan_counted(r: &Repo, args: &[&str], stats: &Path) -> (BTreeSet<String>, u64) {
    let mut all = args.to_vec();
    all.extend(["--stats-json", stats.to_str().unwrap()]);
    let found = found(&scan(r, &all));
    let stats: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(stats).unwrap()).unwrap();
    (found, stats["producer"]["items"].as_u64().unwrap())
}

/// A walk, a file list and the staged index key a file by its path: each
/// shard gets the same files from all three. History keys a blob by its id.
/// Whatever the key, the two shares are disjoint and together are exactly
/// the unsharded report, and the items each shard emits add up.
#[test]
fn every_source_is_sharded_at_one_point() {
    let r = Repo::new();
    let names = files(&r);
    let all: BTreeSet<String> = names.iter().map(|n| format!("{n}:2")).collect();
    let list_dir = tempfile::tempdir().unwrap();
    let list = list_dir.path().join("list.txt");
    fs::write(&list, names.join("\n") + "\n").unwrap();
    let list = list.to_str().unwrap().to_owned();

    // The same files as named in each source; history's are per blob.
    let mut shares = Vec::new();
    r.git(&["add", "."]);
    let sources: [&[&str]; 4] = [&["--staged"], &[], &["--files-from", &list], &["--history"]];
    for (i, source) in sources.iter().enumerate() {
        if i == 1 {
            r.git(&["commit", "-q", "--no-verify", "-m", "files"]);
        }
        let stats = list_dir.path().join("stats.json");
        let (whole, items) = scan_counted(&r, source, &stats);
        assert_eq!((&whole, items), (&all, 16), "{source:?}");
        let share = |k: &str| {
            let mut args = source.to_vec();
            args.extend(["--shard", k]);
            scan_counted(&r, &args, &stats)
        };
        let ((one, n1), (two, n2)) = (share("1/2"), share("2/2"));
        assert!(!one.is_empty() && !two.is_empty(), "{source:?}: {one:?}");
        assert!(one.is_disjoint(&two), "{source:?}: {one:?} {two:?}");
        assert_eq!(&one | &two, whole, "{source:?}");
        assert_eq!((n1, n2), (one.len() as u64, two.len() as u64), "{source:?}");
        shares.push(one);
    }
    assert_eq!(shares[0], shares[1], "staged and walked");
    assert_eq!(shares[1], shares[2], "walked and listed");
}

/// `--exclude vendor/` leaves out `vendor/a.env` from every source, counted
/// once as excluded, and `app/b.env` is still reported.
#[test]
fn an_exclude_applies_to_every_source() {
    let r = Repo::new();
    r.write("README", "clean\n");
    r.git(&["add", "."]);
    r.git(&["commit", "-q", "--no-verify", "-m", "base"]);
    r.write("vendor/a.env", format!("T={}\n", token(340)));
    r.write("app/b.env", format!("T={}\n", token(341)));
    r.git(&["add", "."]);
    let list_dir = tempfile::tempdir().unwrap();
    let list = list_dir.path().join("list.txt");
    fs::write(&list, "vendor/a.env\napp/b.env\n").unwrap();
    let list = list.to_str().unwrap();

    let excluded = |run: &Run| -> Vec<String> {
        assert_eq!(
            run.summary_line("not scanned"),
            Some("not scanned: 1 excluded"),
            "{}",
            run.stderr
        );
        run.expect(1).path_lines()
    };
    let exclude = ["--format", "json", "--exclude", "vendor/"];
    let run = |args: &[&str]| {
        let mut all = vec!["scan"];
        all.extend_from_slice(args);
        all.extend_from_slice(&exclude);
        r.scan(&all)
    };
    let b = vec!["app/b.env:1".to_owned()];
    assert_eq!(excluded(&run(&["--staged"])), b, "staged");
    r.git(&["commit", "-q", "--no-verify", "-m", "add"]);
    assert_eq!(excluded(&run(&[])), b, "walked");
    assert_eq!(
        excluded(&run(&["vendor/a.env", "app/b.env"])),
        b,
        "named files"
    );
    assert_eq!(excluded(&run(&["--files-from", list])), b, "file list");
    assert_eq!(excluded(&run(&["--diff", "HEAD~1"])), b, "diff");
    assert_eq!(excluded(&run(&["--history"])), b, "history");

    // Many repositories, and a remote one: the glob matches under the
    // repository's name too.
    let org = tempfile::tempdir().unwrap();
    git_in(
        org.path(),
        &["clone", "-q", "--bare", r.root.to_str().unwrap(), "one.git"],
    );
    let in_org = |args: &[&str]| {
        let mut all = vec!["scan", "--history"];
        all.extend_from_slice(args);
        all.extend_from_slice(&exclude);
        Run::from_output(
            isolate(Command::new(BIN).current_dir(org.path()).args(&all))
                .env("GIT_CEILING_DIRECTORIES", org.path().parent().unwrap())
                .output()
                .unwrap(),
        )
    };
    assert_eq!(
        excluded(&in_org(&["."])),
        ["one.git/app/b.env:1"],
        "many repositories"
    );
    let url = format!("file://{}", org.path().join("one.git").display());
    assert_eq!(
        excluded(&in_org(&[&url])),
        [format!("{url}/app/b.env:1")],
        "remote"
    );
}

/// The run's own output is a file on disk: `-o report.json` skips the file being written,
/// not a blob that was committed or staged at that path. A report committed by mistake
/// (with its secrets) was skipped by `scan --history -o report.json` as "own report",
/// exit 0, and so was a staged one under `scan --staged -o report.json`.
#[test]
fn a_blob_at_the_reports_path_is_scanned() {
    let r = Repo::new();
    let written = |r: &Repo| -> Vec<(String, u32, String)> {
        let text = fs::read_to_string(r.path("report.json")).unwrap();
        let report: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        report
            .iter()
            .map(|f| {
                let s = |k: &str| f[k].as_str().unwrap().to_owned();
                (
                    s("path"),
                    f["line"].as_u64().unwrap() as u32,
                    s("fingerprint"),
                )
            })
            .collect()
    };
    r.write("report.json", format!("T={}\n", token(400)));
    r.git(&["add", "."]);
    r.commit("a report, committed by mistake");
    let args = ["scan", "-q", "--format", "json", "-o", "report.json"];
    let history = r.scan(&[&args[..], &["--history"]].concat());
    history.expect(1);
    let found = written(&r);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].1), ("report.json", 1));
    r.write("report.json", format!("T={}\n", token(401)));
    r.git(&["add", "."]);
    let staged = r.scan(&[&args[..], &["--staged"]].concat());
    staged.expect(1);
    let found2 = written(&r);
    assert_eq!(found2.len(), 1, "{found2:?}");
    assert_eq!((found2[0].0.as_str(), found2[0].1), ("report.json", 1));
    assert_ne!(
        found2[0].2, found[0].2,
        "the staged version's token, not the committed one's"
    );
}
