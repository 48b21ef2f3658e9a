//! `scanner scan --history`: real git repositories made in temp dirs, with
//! fixed authors and dates so commit ids are stable within a run.

mod common;

use common::{commit_at, git_in, isolate, openssl, token, Commit, Repo, Run, BIN};
use std::process::Command;

/// Four workers and blobs split above 100 KB into 20 KB pieces, with the stats written.
const SPLIT_SMALL: [&str; 8] = [
    "--threads",
    "4",
    "--split-threshold",
    "100000",
    "--split-grain",
    "20000",
    "--stats-json",
    "s.json",
];

fn history(r: &Repo, extra: &[&str]) -> Run {
    let mut args = vec!["scan", "--history", "--format", "json"];
    args.extend(extra);
    r.scan(&args)
}

fn head(r: &Repo) -> String {
    rev_parse(r, "HEAD")
}

/// The object id `rev` names (`HEAD:path`, `ID^{tree}`).
fn rev_parse(r: &Repo, rev: &str) -> String {
    let out = r.git_out(&["rev-parse", rev]);
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_secret_deleted_in_the_next_commit_is_found_with_its_commit() {
    let r = Repo::new();
    r.write("README", "hello\n");
    r.git(&["add", "."]);
    commit_at(&r, "initial", "2024-01-02T03:04:05+00:00");
    r.write("config/app.env", format!("DEBUG=1\nTOKEN={}\n", token(1)));
    r.git(&["add", "."]);
    commit_at(&r, "add config\n\nwith a body", "2024-02-03T04:05:06+01:00");
    let added = head(&r);
    r.git(&["rm", "-q", "config/app.env"]);
    commit_at(&r, "remove config", "2024-02-04T00:00:00+00:00");

    // The working tree is clean: only history has the token.
    r.scan(&["scan", "--format", "json"]).expect(0);
    let run = history(&r, &[]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["config/app.env:2:7:2:47"]);
    assert_eq!(
        found[0].commit,
        Some(Commit {
            id: added,
            author_name: "Ada Lovelace".into(),
            author_email: "ada@example.com".into(),
            author_date: "2024-02-03T04:05:06+01:00".into(),
            summary: "add config".into(),
        })
    );
    assert!(
        run.summary_line("scanned 2 blobs of 3 commits").is_some(),
        "{}",
        run.stderr
    );
}

/// A ref whose object is missing makes git's `--all` die. Listed in-process, it is left out
/// with a warning (exit 2) and every other ref's history is scanned; where git lists the
/// commits (`--reflogs`), the error names the ref and what to do; naming the revisions to
/// scan (`--range`) scans them.
#[test]
fn a_broken_ref_is_left_out_and_named_with_what_to_do() {
    let r = Repo::new();
    r.write("config/app.env", format!("TOKEN={}\n", token(8)));
    r.git(&["add", "."]);
    commit_at(&r, "add config", "2024-02-03T04:05:06+01:00");
    // A tag, peeled in-process there.
    r.git(&["tag", "-a", "-m", "a tag", "v1"]);
    std::fs::write(
        r.path(".git/refs/heads/broken"),
        "1234567890123456789012345678901234567890\n",
    )
    .unwrap();
    let run = history(&r, &[]);
    run.expect(2);
    assert_eq!(run.locations(), ["config/app.env:1:7:1:47"]);
    assert_eq!(run.stderr.matches("ref `").count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "ref `refs/heads/broken` names an object the repository does not have: left out, \
             every other ref's history scanned (repair or delete it: \
             `git update-ref -d refs/heads/broken`)"
        ),
        "{}",
        run.stderr
    );
    let by_git = history(&r, &["--reflogs"]);
    by_git.expect(2);
    assert!(
        by_git.stderr.contains(
            "ref `refs/heads/broken` names an object the repository does not have, so git \
             cannot list every ref's history; repair or delete it: \
             `git update-ref -d refs/heads/broken`, or name the revisions to scan (--range)"
        ),
        "{}",
        by_git.stderr
    );
    let named = history(&r, &["--range", "main"]);
    named.expect(1);
    assert_eq!(named.locations(), ["config/app.env:1:7:1:47"]);
}

/// A commit whose author date git cannot show (`git rev-list --format=%aI` dies on one
/// before the epoch in its own zone) does not stop the scan: the secret it added is found,
/// the date shown in UTC, whether the commits are listed in-process or by git. Before, that
/// one commit failed the whole history (exit 2, nothing scanned); with `--range` or
/// `--since`, until the walk asked git for raw dates.
#[test]
fn a_commit_git_cannot_print_is_scanned_all_the_same() {
    let r = Repo::new();
    r.write("config/app.env", format!("TOKEN={}\n", token(7)));
    r.git(&["add", "."]);
    let tree = String::from_utf8(r.git_out(&["write-tree"]).stdout).unwrap();
    let object = r.path(".git/evil-commit");
    std::fs::write(
        &object,
        format!(
            "tree {}\nauthor Eve <eve@example.com> 0 -0100\ncommitter Eve <eve@example.com> 0 -0100\n\nbefore the epoch\n",
            tree.trim()
        ),
    )
    .unwrap();
    let out = r.git_out(&[
        "hash-object",
        "-t",
        "commit",
        "-w",
        "--literally",
        ".git/evil-commit",
    ]);
    let id = String::from_utf8(out.stdout).unwrap().trim().to_string();
    r.git(&["update-ref", "refs/heads/main", &id]);
    let refused = r.git_out(&["log", "--format=%aI", "main"]);
    assert!(!refused.status.success(), "git shows the date after all");

    // Every ref, listed in-process; a named revision and `--since`, listed by git.
    let since = ["--since", "1970-01-01T00:00:00Z"];
    for extra in [&[][..], &["--range", "main"], &since] {
        let run = history(&r, extra);
        let found = run.expect(1).findings();
        assert_eq!(run.locations(), ["config/app.env:1:7:1:47"], "{extra:?}");
        assert_eq!(
            found[0].commit,
            Some(Commit {
                id: id.clone(),
                author_name: "Eve".into(),
                author_email: "eve@example.com".into(),
                author_date: "1970-01-01T00:00:00Z".into(),
                summary: "before the epoch".into(),
            }),
            "{extra:?}"
        );
    }
}

/// The same blob under two paths and in fifty commits: scanned once,
/// attributed to the first commit and path.
#[test]
fn a_blob_is_scanned_once_whatever_its_commits_and_paths() {
    let r = Repo::new();
    let secret = format!("KEY={}\n", token(2));
    r.write("a/first.env", &secret);
    r.git(&["add", "."]);
    commit_at(&r, "first", "2024-01-01T00:00:00+00:00");
    let first = head(&r);
    r.write("b/second.env", &secret);
    r.git(&["add", "."]);
    commit_at(&r, "copy", "2024-01-02T00:00:00+00:00");
    for i in 0..50 {
        r.write("counter.txt", format!("{i}\n"));
        r.git(&["add", "."]);
        commit_at(&r, &format!("edit {i}"), "2024-01-03T00:00:00+00:00");
    }
    let stats = r.path("stats.json");
    let run = history(&r, &["--stats-json", stats.to_str().unwrap()]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["a/first.env:1:5:1:45"]);
    assert_eq!(found[0].commit.as_ref().unwrap().id, first);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    // Blobs: the secret once, counter.txt's 50 contents.
    assert_eq!(v["files"], 51);
    assert_eq!(v["history"]["commits"], 52);
    assert_eq!(v["history"]["blobs"], 51);
    assert_eq!(v["history"]["duplicate_blobs"], 1);
}

#[test]
fn branches_tags_and_stashes_are_all_scanned_and_a_range_limits_exactly() {
    let r = Repo::new();
    r.write("base.txt", "base\n");
    r.git(&["add", "."]);
    commit_at(&r, "base", "2024-01-01T00:00:00+00:00");
    let base = head(&r);
    // Only on an unmerged branch.
    r.git(&["checkout", "-q", "-b", "topic"]);
    r.write("topic.env", format!("T={}\n", token(3)));
    r.git(&["add", "."]);
    commit_at(&r, "topic", "2024-01-02T00:00:00+00:00");
    r.git(&["checkout", "-q", "main"]);
    // Only in a tag (a detached commit).
    r.git(&["checkout", "-q", "--detach"]);
    r.write("tagged.env", format!("T={}\n", token(4)));
    r.git(&["add", "."]);
    commit_at(&r, "tagged", "2024-01-03T00:00:00+00:00");
    r.git(&["tag", "v1"]);
    r.git(&["checkout", "-q", "main"]);
    // Only in a stash.
    r.write("base.txt", format!("base\nS={}\n", token(5)));
    r.git(&["stash", "-q"]);
    // On main, after base.
    r.write("main.env", format!("T={}\n", token(6)));
    r.git(&["add", "."]);
    commit_at(&r, "main", "2024-01-04T00:00:00+00:00");

    let all = history(&r, &[]);
    assert_eq!(
        all.expect(1).path_lines(),
        ["base.txt:2", "main.env:1", "tagged.env:1", "topic.env:1"]
    );
    let range = format!("{base}..main");
    let only = history(&r, &["--range", &range]);
    assert_eq!(only.expect(1).path_lines(), ["main.env:1"]);
}

#[test]
fn excludes_binaries_and_identical_reports_across_threads() {
    let r = Repo::new();
    r.write("vendor/lib.env", format!("T={}\n", token(7)));
    r.write("src/app.env", format!("T={}\n", token(8)));
    let mut bin = vec![0u8; 64];
    bin.extend(format!("T={}\n", token(9)).as_bytes());
    r.write("img.bin", bin);
    r.git(&["add", "."]);
    commit_at(&r, "one", "2024-01-01T00:00:00+00:00");
    let run = history(&r, &["--exclude", "vendor/"]);
    assert_eq!(run.expect(1).path_lines(), ["src/app.env:1"]);
    assert_eq!(
        run.summary_line("not scanned"),
        Some("not scanned: 1 excluded, 1 binary")
    );
    let one = history(&r, &["--threads", "1"]).stdout;
    let eight = history(&r, &["--threads", "8"]).stdout;
    assert_eq!(one, eight);
}

/// A blob above the split threshold is split across workers and its
/// finding is reported once, with the line of the whole blob.
#[test]
fn a_large_blob_is_split_and_found_once() {
    let r = Repo::new();
    let mut text = "filler line\n".repeat(50_000);
    text.push_str(&format!("T={}\n", token(10)));
    text.push_str(&"tail\n".repeat(1000));
    r.write("big.txt", text);
    r.git(&["add", "."]);
    commit_at(&r, "big", "2024-01-01T00:00:00+00:00");
    let run = history(&r, &SPLIT_SMALL);
    assert_eq!(run.expect(1).locations(), ["big.txt:50001:3:50001:43"]);
}

#[test]
fn not_a_repository_and_an_unknown_revision_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = isolate(
        Command::new(BIN)
            .current_dir(tmp.path())
            .args(["scan", "--history"]),
    )
    .env("GIT_CEILING_DIRECTORIES", tmp.path().parent().unwrap())
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "scanner: error: not a git repository: . (--history needs one)\n"
    );

    let r = Repo::new();
    r.write("a.txt", "a\n");
    r.git(&["add", "."]);
    commit_at(&r, "a", "2024-01-01T00:00:00+00:00");
    let run = history(&r, &["--range", "no-such-branch"]);
    run.expect(2);
    assert!(run.stderr.contains("no-such-branch"), "{}", run.stderr);
}

/// A clone of `r` made with `how` (`--depth 1`, `--filter=...`) in a temp dir, and the
/// scanner's `--history --format json` run in it with `extra` arguments.
fn scan_clone(r: &Repo, how: &str, extra: &[&str]) -> (tempfile::TempDir, Run) {
    r.git(&["config", "uploadpack.allowFilter", "true"]);
    let dest = tempfile::tempdir().unwrap();
    let url = format!("file://{}", r.root.display());
    let clone = dest.path().join("c");
    let clone_args = ["clone", "-q", how, &url, clone.to_str().unwrap()];
    git_in(dest.path(), &clone_args);
    let mut args = vec!["scan", "--history", "--format", "json"];
    args.extend(extra);
    let run = Run::from_output(
        isolate(Command::new(BIN).current_dir(&clone).args(args))
            .output()
            .unwrap(),
    );
    (dest, run)
}

#[test]
fn a_shallow_clone_scans_what_it_has() {
    let r = Repo::new();
    r.write("old.env", format!("T={}\n", token(11)));
    r.git(&["add", "."]);
    commit_at(&r, "old", "2024-01-01T00:00:00+00:00");
    r.write("new.env", format!("T={}\n", token(12)));
    r.git(&["add", "."]);
    commit_at(&r, "new", "2024-01-02T00:00:00+00:00");
    let (_clone, run) = scan_clone(&r, "--depth=1", &[]);
    // The shallow commit holds both files: both found, attributed to it.
    assert_eq!(run.expect(1).path_lines(), ["new.env:1", "old.env:1"]);
}

#[test]
fn a_partial_clone_names_each_missing_blob_and_scans_every_other() {
    let r = Repo::new();
    r.write("old.env", format!("T={}\n", token(14)));
    let first = commit_file(&r, "kept.env", &format!("T={}\n", token(15)), "both");
    let old = rev_parse(&r, "HEAD:old.env");
    r.git(&["rm", "-q", "old.env"]);
    commit_file(&r, "new.env", &format!("T={}\n", token(16)), "swap");
    let (_clone, run) = scan_clone(&r, "--filter=blob:none", &[]);
    // The checkout fetched HEAD's blobs; the deleted file's never came. It is named, with
    // its commit, the scan is incomplete (exit 2), and the rest is found.
    assert_eq!(run.expect(2).path_lines(), ["kept.env:1", "new.env:1"]);
    let want = format!(
        "scanner: warning: old.env: at commit {first}: .: object {} is missing (in a partial \
         clone, fetch it first",
        old
    );
    assert!(run.stderr.contains(&want), "{}", run.stderr);
    assert!(
        run.stderr.contains("not scanned: 1 unreadable"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_partial_clone_without_trees_scans_what_it_can_list_and_says_what_it_cannot() {
    let r = Repo::new();
    let first = commit_file(&r, "old.env", &format!("T={}\n", token(17)), "old");
    let last = commit_file(&r, "new.env", &format!("T={}\n", token(18)), "new");
    let (clone, run) = scan_clone(&r, "--filter=tree:0", &["--stats-json", "s.json"]);
    // The first commit's tree was never fetched: it cannot be listed, and says so. The
    // checkout fetched the last one's: listed whole (its parent's cannot be read), both
    // tokens found there.
    run.expect(2);
    assert_eq!(run.path_lines(), ["new.env:1", "old.env:1"]);
    let commits: Vec<String> = run
        .findings()
        .into_iter()
        .map(|f| f.commit.unwrap().id)
        .collect();
    assert_eq!(commits, [last.clone(), last]);
    assert!(
        run.stderr.contains(&format!(
            "scanner: warning: commit {first}: .: object {} is missing",
            rev_parse(&r, &format!("{first}^{{tree}}"))
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("1 commit(s) could not be listed whole"),
        "{}",
        run.stderr
    );
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(clone.path().join("c/s.json")).unwrap())
            .unwrap();
    assert_eq!(stats["history"]["unlisted_commits"], 1);
    assert_eq!(stats["history"]["commits"], 2);
}

#[test]
fn a_baseline_written_from_history_suppresses_the_same_findings() {
    let r = Repo::new();
    r.write("a.env", format!("T={}\n", token(13)));
    r.git(&["add", "."]);
    commit_at(&r, "a", "2024-01-01T00:00:00+00:00");
    history(&r, &["--write-baseline", "base.json"]).expect(0);
    let run = history(&r, &["--baseline", "base.json"]);
    run.expect(0);
    assert_eq!(
        run.summary_line("suppressed"),
        Some("suppressed: 1 baseline")
    );
}

/// `--history DIR` on a directory of repositories (a work tree and a bare
/// clone): each one's history, its name leading every path.
#[test]
fn a_directory_of_repositories_is_scanned_repository_by_repository() {
    let a = Repo::new();
    a.write("a.env", format!("T={}\n", token(20)));
    a.git(&["add", "."]);
    commit_at(&a, "a", "2024-01-01T00:00:00+00:00");
    let b = Repo::new();
    b.write("conf/b.env", format!("T={}\n", token(21)));
    b.git(&["add", "."]);
    commit_at(&b, "b", "2024-01-01T00:00:00+00:00");
    let org = tempfile::tempdir().unwrap();
    let clone = |args: &[&str]| git_in(org.path(), args);
    clone(&["clone", "-q", a.root.to_str().unwrap(), "alpha"]);
    clone(&[
        "clone",
        "-q",
        "--bare",
        b.root.to_str().unwrap(),
        "beta.git",
    ]);
    std::fs::create_dir(org.path().join("not-a-repo")).unwrap();
    let run = Run::from_output(
        isolate(Command::new(BIN).current_dir(org.path()).args([
            "scan",
            "--history",
            "--format",
            "json",
            ".",
        ]))
        .env("GIT_CEILING_DIRECTORIES", org.path().parent().unwrap())
        .output()
        .unwrap(),
    );
    assert_eq!(
        run.expect(1).path_lines(),
        ["alpha/a.env:1", "beta.git/conf/b.env:1"]
    );
}

/// SARIF names the repository the run read: the remote without its
/// credentials, the commit HEAD names and its branch.
#[test]
fn sarif_names_the_repository_revision_and_branch() {
    let r = Repo::new();
    r.write("app.env", format!("TOKEN={}\n", token(1)));
    r.git(&["add", "."]);
    commit_at(&r, "add", "2024-01-02T03:04:05+00:00");
    r.git(&[
        "remote",
        "add",
        "origin",
        "https://ci:hunter2@example.com/org/repo.git",
    ]);
    let run = r.scan(&["scan", "--history", "--format", "sarif"]);
    run.expect(1);
    let log: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        log["runs"][0]["versionControlProvenance"],
        serde_json::json!([{
            "repositoryUri": "https://example.com/org/repo.git",
            "revisionId": head(&r),
            "branch": "main",
        }])
    );
    assert!(!run.stdout.contains("hunter2"));
    // A tree scan has no such member.
    let tree = r.scan(&["scan", "--format", "sarif"]);
    let log: serde_json::Value = serde_json::from_str(&tree.stdout).unwrap();
    assert!(log["runs"][0].get("versionControlProvenance").is_none());
}

/// `-v` on history names the commit of each suppressed finding. The generic
/// assignment rule matches `TOKEN=...` too; allowed, it is not de-duplicated
/// against the provider rule (that happens to reported findings only), so
/// both are listed, as the summary counts both.
#[test]
fn verbose_history_names_the_commit_of_a_suppressed_finding() {
    let r = Repo::new();
    r.write("a.env", format!("\nTOKEN={}  # scanner:allow\n", token(7)));
    r.git(&["add", "."]);
    commit_at(&r, "allowed", "2024-01-02T03:04:05+00:00");
    let id = head(&r);
    let run = history(&r, &["-v"]);
    assert_eq!(run.expect(0).stdout, "[]\n");
    let listed: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("scanner: suppressed:"))
        .collect();
    let line = |rule: &str| {
        format!("scanner: suppressed: a.env:2:7 (commit {id}): rule `{rule}`: inline allow")
    };
    assert_eq!(
        listed,
        [
            line("generic-secret-assignment"),
            line("github-classic-pat")
        ]
    );
    assert_eq!(
        run.summary_line("suppressed:"),
        Some("suppressed: 2 inline allow")
    );
}

/// Commits a token in `config/app.env` and 7 KB of notes in `notes.txt`; returns the
/// notes' blob id, the blob the corrupt-blob tests damage.
fn token_beside_notes(r: &Repo) -> String {
    r.write("config/app.env", format!("TOKEN={}\n", token(1)));
    let text: String = (0..400).map(|i| format!("line {i} of notes\n")).collect();
    r.write("notes.txt", &text);
    r.git(&["add", "."]);
    commit_at(r, "add", "2024-01-02T03:04:05+00:00");
    rev_parse(r, "HEAD:notes.txt")
}

/// The damaged blob `oid` is named, the scan exits 2, and the token is still found.
fn assert_named_and_the_rest_scanned(r: &Repo, oid: &str) {
    let run = history(r, &[]);
    run.expect(2);
    assert_eq!(run.path_lines(), ["config/app.env:1"]);
    assert!(
        run.stderr.contains(&format!("object {oid} is corrupt")),
        "{}",
        run.stderr
    );
}

/// The repository's one pack file, and what `git verify-pack -v` says of it.
fn the_pack(r: &Repo) -> (std::path::PathBuf, String) {
    let pack = std::fs::read_dir(r.path(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let idx = pack.with_extension("idx");
    let verify = r.git_out(&["verify-pack", "-v", idx.to_str().unwrap()]);
    (pack, String::from_utf8(verify.stdout).unwrap())
}

#[test]
fn a_corrupt_blob_is_named_and_the_other_blobs_are_still_scanned() {
    let r = Repo::new();
    // Enough text that half of its zlib stream still holds the object's header: the
    // enumeration reads only that (for the size), the reader needs the whole.
    let oid = token_beside_notes(&r);
    let loose = r.path(format!(".git/objects/{}/{}", &oid[..2], &oid[2..]));
    let bytes = std::fs::read(&loose).unwrap();
    std::fs::remove_file(&loose).unwrap();
    std::fs::write(&loose, &bytes[..bytes.len() / 2]).unwrap();
    assert_named_and_the_rest_scanned(&r, &oid);
}

/// The same in a pack, where the scanner's own pack reader meets the damage.
#[test]
fn a_corrupt_blob_in_a_pack_is_named_and_the_other_blobs_are_still_scanned() {
    let r = Repo::new();
    let oid = token_beside_notes(&r);
    r.git(&["repack", "-adq"]);
    // `<id> blob <size> <size in pack> <offset>`: damage the middle of its deflate stream,
    // past the entry's header, which the enumeration reads for the size.
    let (pack, verify) = the_pack(&r);
    let line: Vec<&str> = verify
        .lines()
        .find(|l| l.starts_with(&oid))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(line.len(), 5, "a whole object, not a delta: {line:?}");
    let (in_pack, offset): (usize, usize) = (line[3].parse().unwrap(), line[4].parse().unwrap());
    let mut bytes = std::fs::read(&pack).unwrap();
    for b in &mut bytes[offset + in_pack / 2..offset + in_pack / 2 + 4] {
        *b ^= 0x5a;
    }
    std::fs::write(&pack, bytes).unwrap();
    assert_named_and_the_rest_scanned(&r, &oid);
}

/// Writes `path` and commits it, returning the commit id.
fn commit_file(r: &Repo, path: &str, content: &str, msg: &str) -> String {
    r.write(path, content);
    r.git(&["add", "."]);
    commit_at(r, msg, "2024-03-01T00:00:00+00:00");
    head(r)
}

fn stats_json(r: &Repo, name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(r.path(name)).unwrap()).unwrap()
}

/// Version `i` of a file holding `secret` between a header and a footer
/// that take turns changing: each version edits one side of the secret.
/// Ten thousand bytes of notes follow, so that later versions are large
/// enough to be scanned only around their changes (smaller ones are scanned
/// whole: see the tenth-version test).
fn edited_around(i: u32, secret: &str) -> String {
    let notes: String = (0..500)
        .map(|n| format!("note {n:04} unchanged\n"))
        .collect();
    format!(
        "header {}\n{secret}\nfooter {}\n{notes}",
        i.div_ceil(2),
        i / 2
    )
}

/// The bytes of later versions outside what each changed since the one
/// before (`--stats-json` `history.unchanged_bytes`): `versions` in order.
fn unchanged_bytes(versions: &[String]) -> u64 {
    versions
        .windows(2)
        .map(|v| {
            let span = scanner_cli::input::history::versions::changed_span(
                v[0].as_bytes(),
                v[1].as_bytes(),
            );
            v[1].len() as u64 - (span.end - span.start)
        })
        .sum()
}

/// Commits `app.env` holding `secret` in 51 versions ([`edited_around`]);
/// returns the first commit and the versions.
fn fifty_edits(r: &Repo, secret: &str) -> (String, Vec<String>) {
    let first = commit_file(r, "app.env", &edited_around(0, secret), "add");
    let versions: Vec<String> = (0..=50).map(|i| edited_around(i, secret)).collect();
    for (i, v) in versions.iter().enumerate().skip(1) {
        commit_file(r, "app.env", v, &format!("edit {i}"));
    }
    (first, versions)
}

/// A secret that survives fifty edits of its file is reported once, at the
/// commit that added it; later versions look only at what they changed
/// (around the header or the footer), where it is not.
#[test]
fn a_secret_kept_through_fifty_edits_is_reported_once_at_its_first_commit() {
    let r = Repo::new();
    let secret = format!("TOKEN={}", token(20));
    let (first, versions) = fifty_edits(&r, &secret);
    let run = history(&r, &["--stats-json", "s.json"]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["app.env:2:7:2:47"]);
    assert_eq!(found[0].commit.as_ref().unwrap().id, first);
    let v = stats_json(&r, "s.json");
    assert_eq!(v["files"], 51);
    let unchanged = unchanged_bytes(&versions);
    assert_eq!(v["history"]["unchanged_bytes"], unchanged);
    // About half a megabyte: the summary gives it in KB.
    assert!((400_000..1_000_000).contains(&unchanged), "{unchanged}");
    assert_eq!(
        run.summary_line("history:"),
        Some(
            format!(
                "history: {:.1} KB of later versions unchanged since the version before, \
                 scanned only around the changes",
                unchanged as f64 / 1e3
            )
            .as_str()
        )
    );
    // The generic assignment rule's match on the same token is dropped by the engine in the
    // first version; the later ones do not look at it.
    assert_eq!(
        run.summary_line("suppressed:"),
        Some("suppressed: 1 duplicate of a provider finding")
    );
    // Whatever the number of workers.
    let one = history(&r, &["--threads", "1"]).stdout;
    let four = history(&r, &["--threads", "4"]).stdout;
    assert_eq!(one, run.stdout);
    assert_eq!(four, run.stdout);

    // `-v` has no unchanged finding to list: none was looked for.
    let run = history(&r, &["-v"]);
    run.expect(1);
    assert!(
        !run.stderr.contains("unchanged in a later version"),
        "{}",
        run.stderr
    );

    // A baseline written from this history suppresses exactly the one finding.
    history(&r, &["--write-baseline", "base.json"]).expect(0);
    let run = history(&r, &["--baseline", "base.json"]);
    run.expect(0);
    assert_eq!(
        run.summary_line("suppressed:"),
        Some("suppressed: 1 baseline, 1 duplicate of a provider finding")
    );
}

/// The same kind of history packed by `git repack`, every version but one a
/// delta in a chain: its blobs are rebuilt by the scanner's own pack reader
/// (`input/pack.rs`), not by gitoxide as loose objects are, and the report
/// and the counts are the same, whatever the number of workers.
#[test]
fn a_packed_history_reports_exactly_what_its_loose_objects_did() {
    let r = Repo::new();
    let secret = format!("TOKEN={}", token(22));
    let (first, _) = fifty_edits(&r, &secret);
    // A file each version rewrites a line of, elsewhere each time: each version is nearest
    // to the one before, and git packs them in delta chains. A second secret is in
    // versions 12 to 19.
    let other = format!("TOKEN={}", token(23));
    let mut log: Vec<String> = (0..300)
        .map(|n| format!("entry {n:04} as it was\n"))
        .collect();
    let mut twelfth = String::new();
    for i in 1..=30 {
        log[(i * 37) % 300] = format!("entry rewritten in version {i:02} of thirty\n");
        let body = match i {
            12..=19 => log.concat().replacen("entry 0150 as it was", &other, 1),
            _ => log.concat(),
        };
        let id = commit_file(&r, "log.txt", &body, &format!("log {i}"));
        if i == 12 {
            twelfth = id;
        }
    }
    let loose = history(&r, &["--stats-json", "loose.json"]);
    let found = loose.expect(1).findings();
    assert_eq!(
        loose.locations(),
        ["app.env:2:7:2:47", "log.txt:151:7:151:47"]
    );
    assert_eq!(found[0].commit.as_ref().unwrap().id, first);
    assert_eq!(found[1].commit.as_ref().unwrap().id, twelfth);

    r.git(&["repack", "-adfq", "--depth=50", "--window=50"]);
    let counts = String::from_utf8(r.git_out(&["count-objects", "-v"]).stdout).unwrap();
    assert!(counts.starts_with("count: 0\n"), "{counts}");
    let (_, verify) = the_pack(&r);
    assert!(verify.contains("chain length = 10:"), "{verify}");

    let stats = |name: &str| {
        let v = stats_json(&r, name);
        (
            v["files"].clone(),
            v["history"].clone(),
            v["suppressed"].clone(),
        )
    };
    for threads in ["1", "4"] {
        let packed = history(&r, &["--threads", threads, "--stats-json", "packed.json"]);
        assert_eq!(packed.stdout, loose.stdout, "--threads {threads}");
        assert_eq!(stats("packed.json"), stats("loose.json"));
    }
}

#[test]
fn a_secret_added_in_the_tenth_version_is_reported_at_the_tenth_commit() {
    let r = Repo::new();
    let secret = format!("TOKEN={}", token(21));
    let mut tenth = String::new();
    let mut versions = Vec::new();
    for i in 1..=20u32 {
        let body = if i >= 10 {
            format!("line {i}\n{secret}\nend\n")
        } else {
            format!("line {i}\nend\n")
        };
        let id = commit_file(&r, "cfg.env", &body, &format!("v{i}"));
        versions.push(body);
        if i == 10 {
            tenth = id;
        }
    }
    let run = history(&r, &["--stats-json", "s.json"]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["cfg.env:2:7:2:47"]);
    assert_eq!(found[0].commit.as_ref().unwrap().id, tenth);
    // Versions 11 to 20 change the first line only. Under 8 KiB they are
    // scanned whole: the secret is found again in each and counted as
    // unchanged, and no byte is left unscanned.
    let v = stats_json(&r, "s.json");
    assert_eq!(v["suppressed"]["unchanged in a later version"], 10);
    assert_eq!(v["history"]["unchanged_bytes"], 0);
    assert!(versions.iter().all(|v| v.len() < 8 << 10));
}

/// A version that edits lines above and below a secret: the secret's line
/// is kept, so it is reported once, at the commit that added it, whether
/// the version is scanned around its two runs of changed lines (90 KB, a
/// span of 64 KiB or more), in one span from the first change to the last
/// (11 KB), or whole (0.5 KB).
#[test]
fn a_secret_between_two_edits_is_reported_once() {
    for (lines, focused, runs) in [(5000, true, true), (700, true, false), (40, false, false)] {
        let r = Repo::new();
        let secret = format!("TOKEN={}", token(27));
        let body = |top: &str, bottom: &str| -> String {
            let mut text: Vec<String> = (0..lines).map(|i| format!("let v{i} = {i};\n")).collect();
            text[lines / 2] = format!("{secret}\n");
            text[2] = format!("{top}\n");
            text[lines - 3] = format!("{bottom}\n");
            text.concat()
        };
        let first = commit_file(&r, "cfg.env", &body("top = 1", "bottom = 1"), "one");
        let second = body("top = 2", "bottom = 2");
        assert_eq!(second.len() >= 8 << 10, focused, "{}", second.len());
        commit_file(&r, "cfg.env", &second, "two");
        let run = history(&r, &["--stats-json", "s.json"]);
        let found = run.expect(1).findings();
        let line = lines / 2 + 1;
        assert_eq!(run.locations(), [format!("cfg.env:{line}:7:{line}:47")]);
        assert_eq!(found[0].commit.as_ref().unwrap().id, first);
        let v = stats_json(&r, "s.json");
        // Scanned whole or in one span, the secret is found again and
        // counted unchanged; scanned around the two edited lines, its line
        // is not looked at.
        let again = v["suppressed"]["unchanged in a later version"].as_u64();
        assert_eq!(again.unwrap_or(0), if runs { 0 } else { 1 });
        // Scanned around its changes, or whole.
        assert_eq!(
            v["history"]["unchanged_bytes"].as_u64().unwrap() > 0,
            focused
        );
    }
}

/// Versions that each change every tenth line of a 1.2 MB file (as
/// generated files do) change wide: after one compared with its base,
/// the next three are scanned whole without reading theirs
/// (`input/history/versions.rs`, `Quiet`), and what is reported is the same:
/// each secret once, at the commit that added it, counted as unchanged in
/// every later version.
#[test]
fn versions_that_change_wide_are_scanned_whole_and_report_the_same() {
    let r = Repo::new();
    let (a, b) = (
        format!("TOKEN={}", token(31)),
        format!("TOKEN={}", token(32)),
    );
    let (mut commits, mut texts) = (Vec::new(), Vec::<String>::new());
    for i in 1..=10u32 {
        let mut lines: Vec<String> = (0..60_000)
            .map(|k| format!("let v{k} = {};\n", k + (k % 10 == 5) as u32 * i))
            .collect();
        if i >= 3 {
            lines[300] = format!("{a}\n");
        }
        if i >= 6 {
            lines[400] = format!("{b}\n");
        }
        texts.push(lines.concat());
        commits.push(commit_file(
            &r,
            "gen.env",
            &texts[texts.len() - 1],
            &format!("v{i}"),
        ));
    }
    let run = history(&r, &["--threads", "1", "--stats-json", "s.json"]);
    let found = run.expect(1).findings();
    assert_eq!(
        run.locations(),
        ["gen.env:301:7:301:47", "gen.env:401:7:401:47"]
    );
    assert_eq!(found[0].commit.as_ref().unwrap().id, commits[2]);
    assert_eq!(found[1].commit.as_ref().unwrap().id, commits[5]);
    let v = stats_json(&r, "s.json");
    assert_eq!(v["suppressed"]["unchanged in a later version"], 7 + 4);
    // Versions 2, 6 and 10 compared with their bases: their changes, 200
    // bytes apart, are one zone from the first to the last (the common
    // prefix and suffix left out, less a byte each); 3-5 and 7-9 scanned
    // whole.
    let outside = |old: &str, new: &str| {
        let (old, new) = (old.as_bytes(), new.as_bytes());
        let p = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let s = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        (p - 1 + s - 1) as u64
    };
    let expected: u64 = [1, 5, 9]
        .iter()
        .map(|&v| outside(&texts[v - 1], &texts[v]))
        .sum();
    assert_eq!(v["history"]["unchanged_bytes"], expected);
}

/// A generated JSON-like file (records of five lines, a `},` closing
/// each) changes a few values over several commits, gains a record near
/// the top and loses one below a secret that stays: the secret is reported
/// once, at the commit that added it. Matching each line greedily to the
/// next equal one took a new `},` for a later copy and marked most of the
/// file changed, reporting the secret again (issue 31, moto).
#[test]
fn a_secret_kept_in_generated_json_is_reported_once() {
    let r = Repo::new();
    let secret = format!("TOKEN={}", token(41));
    let record = |n: usize, size: usize| {
        format!("  {{\n    \"name\": \"r{n}\",\n    \"size\": {size},\n    \"ok\": true\n  }},\n")
    };
    // `sizes[n]` of each record, `None` for one deleted; the secret after
    // the name of record 150.
    let text = |records: &[(usize, usize)], with_secret: bool| {
        let mut out = String::from("[\n");
        for &(n, size) in records {
            let rec = record(n, size);
            if with_secret && n == 150 {
                let (head, tail) = rec.split_at(rec.find("    \"size").unwrap());
                out += &format!("{head}{secret}\n{tail}");
            } else {
                out += &rec;
            }
        }
        out + "]\n"
    };
    let mut records: Vec<(usize, usize)> = (0..300).map(|n| (n, n % 7)).collect();
    commit_file(&r, "data.json", &text(&records, false), "v1");
    let added = commit_file(&r, "data.json", &text(&records, true), "v2");
    for n in [10, 200, 290] {
        records[n].1 += 100;
    }
    records.insert(5, (1000, 1));
    records.remove(160);
    commit_file(&r, "data.json", &text(&records, true), "v3");
    // Values just above and below the secret's record.
    for n in [149, 151, 152] {
        records[n].1 += 100;
    }
    let last = text(&records, true);
    assert!(last.len() >= 8 << 10, "scanned around its changes");
    commit_file(&r, "data.json", &last, "v4");
    let run = history(&r, &["--stats-json", "s.json"]);
    let found = run.expect(1).findings();
    // Line 2 + 5 * 150 + 2: after `[` and 150 records, `{` and the name;
    // the secret after `TOKEN=`.
    assert_eq!(run.locations(), ["data.json:754:7:754:47"]);
    assert_eq!(found[0].commit.as_ref().unwrap().id, added);
}

#[test]
fn a_secret_changed_in_place_is_reported_in_both_versions() {
    let r = Repo::new();
    let one = commit_file(&r, "k.env", &format!("a\nTOKEN={}\nz\n", token(22)), "one");
    let two = commit_file(&r, "k.env", &format!("a\nTOKEN={}\nz\n", token(23)), "two");
    let run = history(&r, &[]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["k.env:2:7:2:47", "k.env:2:7:2:47"]);
    let mut commits: Vec<String> = found
        .iter()
        .map(|f| f.commit.as_ref().unwrap().id.clone())
        .collect();
    commits.sort();
    let mut want = vec![one, two];
    want.sort();
    assert_eq!(commits, want);
}

/// A copy to a new path is a new file: scanned whole, even where its
/// first version differs from the original.
#[test]
fn a_secret_in_a_file_copied_to_a_new_path_is_reported_at_both_paths() {
    let r = Repo::new();
    let secret = format!("TOKEN={}", token(24));
    commit_file(&r, "a.env", &format!("{secret}\nfrom a\n"), "a");
    commit_file(&r, "b.env", &format!("{secret}\nfrom b\n"), "b");
    // A rename (with an edit) is a delete and an add: reported again too.
    r.git(&["mv", "a.env", "c.env"]);
    commit_file(&r, "c.env", &format!("{secret}\nfrom c\n"), "rename");
    let run = history(&r, &[]);
    run.expect(1);
    let mut paths = run.path_lines();
    paths.sort();
    assert_eq!(paths, ["a.env:1", "b.env:1", "c.env:1"]);
}

/// A version split across workers is filtered once its pieces are put
/// together: the secret before the edit is unchanged, the one in it is new.
/// Only a blob held in memory is split: one above the threshold stored whole
/// is streamed and judged whole (`a_streamed_version_of_a_large_file_is_judged_whole`).
/// So the versions are packed, the second shorter than the first: git stores
/// the larger whole and the second as a delta, rebuilt in memory and split.
#[test]
fn a_split_version_reports_only_what_changed() {
    let r = Repo::new();
    let mut text = format!("TOKEN={}\n", token(25));
    text.push_str(&"filler line\n".repeat(30_000));
    commit_file(
        &r,
        "big.txt",
        &format!("{text}{}\n", "x".repeat(200)),
        "one",
    );
    text.push_str(&format!("TOKEN={}\n", token(26)));
    let second = commit_file(&r, "big.txt", &text, "two");
    r.git(&["repack", "-adq"]);
    let run = history(&r, &SPLIT_SMALL);
    let found = run.expect(1).findings();
    assert_eq!(
        run.locations(),
        ["big.txt:1:7:1:47", "big.txt:30002:7:30002:47"]
    );
    assert_eq!(found[1].commit.as_ref().unwrap().id, second);
    assert_eq!(
        stats_json(&r, "s.json")["suppressed"]["unchanged in a later version"],
        1
    );
}

/// A version whose predecessor was not scanned (over `--max-filesize`, or
/// binary) is reported whole: its findings were reported nowhere else.
#[test]
fn a_version_of_a_file_that_was_skipped_before_is_reported_whole() {
    let r = Repo::new();
    let secret = format!("TOKEN={}\n", token(27));
    commit_file(&r, "a.env", &format!("{secret}{}", "x".repeat(3000)), "big");
    let small = commit_file(&r, "a.env", &format!("{secret}small\n"), "small");
    let mut binary = secret.clone().into_bytes();
    binary.extend([0u8; 16]);
    r.write("b.env", binary);
    r.git(&["add", "."]);
    commit_at(&r, "binary", "2024-03-01T00:00:00+00:00");
    let text = commit_file(&r, "b.env", &format!("{secret}text now\n"), "text");
    let run = history(&r, &["--max-filesize", "2000"]);
    let found = run.expect(1).findings();
    assert_eq!(run.path_lines(), ["a.env:1", "b.env:1"]);
    let commits: Vec<&str> = found
        .iter()
        .map(|f| f.commit.as_ref().unwrap().id.as_str())
        .collect();
    assert_eq!(commits, [small.as_str(), text.as_str()]);
}

/// `git replace` changes what git shows for an object, not what a clone or a push carries:
/// pack transfer ignores replace refs. A blob hidden behind a replacement is still in the
/// history, so its own content is scanned, and a commit grafted in by a replacement too.
#[test]
fn a_secret_behind_a_replace_ref_is_still_found() {
    let r = Repo::new();
    let added = commit_file(&r, "app.env", &format!("TOKEN={}\n", token(1)), "add");
    let original = rev_parse(&r, "HEAD:app.env");
    r.write("clean.txt", "nothing to see\n");
    let out = r.git_out(&["hash-object", "-w", "clean.txt"]);
    let clean = String::from_utf8(out.stdout).unwrap().trim().to_string();
    std::fs::remove_file(r.path("clean.txt")).unwrap();
    r.git(&["replace", &original, &clean]);
    // What git now shows for the blob is the replacement.
    let shown = r.git_out(&["cat-file", "-p", &original]);
    assert_eq!(String::from_utf8(shown.stdout).unwrap(), "nothing to see\n");

    // A commit that exists only as the replacement of HEAD (a graft): its tree holds
    // another token.
    r.write("graft.env", format!("TOKEN={}\n", token(2)));
    r.git(&["add", "graft.env"]);
    let tree = String::from_utf8(r.git_out(&["write-tree"]).stdout).unwrap();
    r.git(&["reset", "-q", "graft.env"]);
    std::fs::remove_file(r.path("graft.env")).unwrap();
    let out = r.git_out(&["commit-tree", tree.trim(), "-m", "graft"]);
    let graft = String::from_utf8(out.stdout).unwrap().trim().to_string();
    r.git(&["replace", &added, &graft]);

    let run = history(&r, &[]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["app.env:1:7:1:47", "graft.env:1:7:1:47"]);
    assert_eq!(found[0].commit.as_ref().unwrap().id, added);
    assert_eq!(found[1].commit.as_ref().unwrap().id, graft);
}

/// A private key pasted into the middle of a large file (scanned only around
/// its changes, and known to hold no long-window keyword before: the search
/// for one far from the change is skipped) is found at the commit that
/// pasted it, once: edits of the file's first line, 8 KB above, do not
/// report it again, and an edit of its last line reports it at that commit.
#[test]
fn a_key_pasted_into_a_large_file_is_found_at_its_commit_once() {
    let pem = openssl(&["genrsa", "2048"]);
    let notes = |from: u32| -> String {
        (from..from + 400)
            .map(|n| format!("note {n:04} unchanged\n"))
            .collect()
    };
    let r = Repo::new();
    let mut ids = Vec::new();
    for i in 1..=7u32 {
        let key = match i {
            1 | 2 => String::new(),
            7 => pem.replacen("-----END", "AAAA\n-----END", 1),
            _ => pem.clone(),
        };
        let body = format!("version {i}\n{}{key}{}", notes(0), notes(400));
        assert!(body.len() > 12 << 10);
        ids.push(commit_file(&r, "notes.txt", &body, &format!("v{i}")));
    }
    let run = history(&r, &[]);
    let found = run.expect(1).findings();
    assert_eq!(
        found
            .iter()
            .map(|f| (
                f.rule_id.as_str(),
                f.line,
                f.commit.as_ref().unwrap().id.as_str()
            ))
            .collect::<Vec<_>>(),
        [
            ("private-key-pkcs8", 402, ids[2].as_str()),
            ("private-key-pkcs8", 402, ids[6].as_str()),
        ]
    );
}

// ------------------------------------------------------- large blobs, streamed

/// `lines` lines of text of 64 bytes each, with `TOKEN=<token(seed)>` as line `at` for each
/// `(at, seed)` in `secrets`: compressible, so the repository stays small.
fn big_text(lines: usize, secrets: &[(usize, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines * 64);
    for n in 1..=lines {
        match secrets.iter().find(|(at, _)| *at == n) {
            Some((_, seed)) => {
                out.extend_from_slice(format!("TOKEN={}\n", token(*seed)).as_bytes())
            }
            None => out.extend_from_slice(
                format!("{n:>12} lorem ipsum dolor sit amet consectetur elit sed\n").as_bytes(),
            ),
        }
    }
    out
}

/// What identifies a finding, its commit included.
fn described(run: &Run) -> Vec<String> {
    run.findings()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}:{}:{} {}..{} {} {}",
                f.path,
                f.line,
                f.column,
                f.end_line,
                f.end_column,
                f.offset,
                f.end_offset,
                f.fingerprint,
                f.commit.as_ref().map_or("", |c| c.id.as_str())
            )
        })
        .collect()
}

/// A blob above the stream threshold (here lowered to 64 KiB with the hidden
/// `--split-threshold`, which sets it) is inflated as it is scanned, loose or stored whole
/// in a pack, and reports exactly what the same blob held whole (`--split-threshold 0`)
/// reports: lines, columns, offsets, fingerprints, commits; secrets across the chunk
/// reader's boundaries (`--chunk-size 4K`) included.
#[test]
fn a_large_blob_streamed_reports_what_it_reports_held_whole() {
    let r = Repo::new();
    // 2 MB: 32,768 lines; secrets on the first line, across the 4 KiB chunk boundaries
    // (lines 64 and 65 straddle the first at 4096 bytes), and on the last line.
    let secrets = [(1, 1), (64, 2), (65, 3), (20_000, 4), (32_768, 5)];
    r.write("big.txt", big_text(32_768, &secrets));
    r.git(&["add", "."]);
    commit_at(&r, "big", "2024-01-02T03:04:05+00:00");
    // Sorted as text, as `path_lines` sorts.
    let expected = ["1", "20000", "32768", "64", "65"].map(|n| format!("big.txt:{n}"));
    for packed in [false, true] {
        if packed {
            r.git(&["repack", "-adq"]);
        }
        let whole = history(&r, &["--split-threshold", "0", "--chunk-size", "4K"]);
        whole.expect(1);
        assert_eq!(whole.path_lines(), expected, "packed: {packed}");
        for chunk in ["4K", "256K"] {
            let streamed = history(&r, &["--split-threshold", "64K", "--chunk-size", chunk]);
            streamed.expect(1);
            assert_eq!(
                described(&streamed),
                described(&whole),
                "packed: {packed}, chunk {chunk}"
            );
        }
    }
}

/// A streamed blob is judged whole, not around what changed since the version before it
/// (`input/history/versions.rs`): a secret left unchanged in a large file is reported again in
/// each version that is streamed (every one, loose; packed, the newest, which git stores
/// whole, while the older one is a delta, rebuilt whole and judged around its changes).
/// Held whole, it is reported once, with the commit that added it.
#[test]
fn a_streamed_version_of_a_large_file_is_judged_whole() {
    let r = Repo::new();
    let text = big_text(32_768, &[(100, 1)]);
    r.write("big.txt", &text);
    r.git(&["add", "."]);
    commit_at(&r, "v1", "2024-01-02T03:04:05+00:00");
    let first = head(&r);
    let mut edited = text;
    edited.extend_from_slice(b"one more line\n");
    r.write("big.txt", &edited);
    r.git(&["add", "."]);
    commit_at(&r, "v2", "2024-01-03T03:04:05+00:00");
    let second = head(&r);
    let commits = |run: &Run| -> Vec<String> {
        run.findings()
            .iter()
            .map(|f| format!("{}:{} {}", f.path, f.line, f.commit.as_ref().unwrap().id))
            .collect()
    };
    for packed in [false, true] {
        if packed {
            r.git(&["repack", "-adq", "--depth=50", "--window=10"]);
        }
        let whole = history(&r, &["--split-threshold", "0"]);
        whole.expect(1);
        assert_eq!(commits(&whole), [format!("big.txt:100 {first}")]);
        let streamed = history(&r, &["--split-threshold", "64K"]);
        streamed.expect(1);
        let mut found = commits(&streamed);
        found.sort();
        let mut expected = [
            format!("big.txt:100 {first}"),
            format!("big.txt:100 {second}"),
        ];
        expected.sort();
        assert_eq!(found, expected, "packed: {packed}");
    }
}

/// A 64 MiB blob with a secret near its end, loose and then packed (stored whole), scanned
/// at one thread in an address space of 80 MiB (`ulimit -v`, with one malloc arena): less
/// than the blob itself. Streamed, the finding is exact and the exit status 1. Held whole
/// (`--split-threshold 0`), the same scan does not fit.
/// Measured on the debug binary: the streamed scan runs in 60 MiB, the whole one needs
/// about 120 MiB.
#[test]
fn a_64_mib_blob_in_history_is_scanned_in_bounded_memory() {
    const VM_KIB: u64 = 80 << 10;
    const LINES: usize = 1 << 20; // 64 bytes each: 64 MiB
    let r = Repo::new();
    r.write("small.txt", "hello\n");
    r.write("big.txt", big_text(LINES, &[(LINES - 1, 7)]));
    r.git(&["add", "."]);
    commit_at(&r, "big", "2024-01-02T03:04:05+00:00");
    let id = head(&r);
    std::fs::remove_file(r.path("big.txt")).unwrap();
    let limited = |extra: &[&str]| {
        let mut cmd = Command::new("sh");
        cmd.current_dir(&r.root)
            .arg("-c")
            .arg(format!("ulimit -v {VM_KIB} && exec \"$0\" \"$@\""))
            .arg(BIN)
            .args(["scan", "--history", "--format", "json", "--threads", "1"])
            .args(extra);
        isolate(&mut cmd)
            .env("MALLOC_ARENA_MAX", "1")
            .output()
            .unwrap()
    };
    for packed in [false, true] {
        if packed {
            r.git(&["repack", "-adq"]);
        }
        let run = Run::from_output(limited(&[]));
        let found = run.expect(1).findings();
        assert_eq!(
            run.path_lines(),
            [format!("big.txt:{}", LINES - 1)],
            "packed: {packed}"
        );
        assert_eq!(found[0].commit.as_ref().unwrap().id, id);
        // The same scan holding the blob whole does not fit: the bound is what streaming keeps.
        // (Loose, gitoxide fails to allocate it: exit 2, the blob unreadable. Packed, the
        // allocation fails and the process aborts.)
        let whole = limited(&["--split-threshold", "0"]);
        assert!(
            !whole.status.success() && whole.status.code() != Some(1),
            "packed: {packed}: {:?} {}",
            whole.status,
            String::from_utf8_lossy(&whole.stderr)
        );
    }
}

/// The `.scanner.toml` of the repository applies its `allow_paths` and a rule's `allow_paths`
/// to the history's paths however the repository is named: the default `.`, `.` named, a
/// relative path from its parent, or its absolute path.
#[test]
fn the_configs_allow_paths_apply_to_history_whatever_the_repository_is_called() {
    use std::os::unix::fs::PermissionsExt;
    let r = Repo::new();
    r.write("vendor/creds.env", format!("T={}\n", token(40)));
    r.write("docs/setup.env", format!("T={}\n", token(41)));
    r.write("app.env", format!("T={}\n", token(42)));
    r.git(&["add", "."]);
    commit_at(&r, "add", "2024-01-02T03:04:05+00:00");
    let config = r.path(".scanner.toml");
    std::fs::write(
        &config,
        "allow_paths = [\"vendor/\"]\n[rules.github-classic-pat]\nallow_paths = [\"docs/\"]\n",
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let name = r.root.file_name().unwrap().to_str().unwrap().to_string();
    let parent = r.root.parent().unwrap().to_path_buf();
    let abs = r.root.to_str().unwrap().to_string();
    let runs = [
        history(&r, &[]),
        history(&r, &["."]),
        history(&r, &[&abs]),
        Run::from_output(
            isolate(Command::new(BIN).current_dir(&parent).args([
                "scan",
                "--history",
                "--format",
                "json",
                &name,
            ]))
            .output()
            .unwrap(),
        ),
    ];
    for run in runs {
        assert_eq!(run.expect(1).path_lines(), ["app.env:1"], "{}", run.stderr);
        assert_eq!(
            run.summary_line("not scanned:"),
            Some("not scanned: 1 allowlisted path"),
            "{}",
            run.stderr
        );
    }
}

/// A blob is listed once, at the first path history shows it: one first met at a path out of
/// scope is still scanned at a path in scope later. A token committed under an excluded
/// directory, then moved out of it, is found at its new path and commit; one committed under
/// an allowlisted directory and copied out of it, at the copy.
#[test]
fn a_secret_moved_out_of_an_excluded_directory_is_found_where_it_went() {
    use std::os::unix::fs::PermissionsExt;
    let r = Repo::new();
    r.write("vendor/creds.env", format!("T={}\n", token(43)));
    r.write("third_party/keys.env", format!("K={}\n", token(44)));
    r.git(&["add", "."]);
    commit_at(&r, "vendored", "2024-01-02T03:04:05+00:00");
    r.git(&["mv", "vendor/creds.env", "creds.env"]);
    commit_at(&r, "move", "2024-01-03T03:04:05+00:00");
    let moved = head(&r);
    std::fs::copy(r.path("third_party/keys.env"), r.path("keys.env")).unwrap();
    r.git(&["add", "."]);
    commit_at(&r, "copy", "2024-01-04T03:04:05+00:00");
    let copied = head(&r);
    let config = r.path(".scanner.toml");
    std::fs::write(&config, "allow_paths = [\"third_party/\"]\n").unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();

    let run = history(&r, &["--exclude", "vendor/**"]);
    assert_eq!(
        run.expect(1).path_lines(),
        ["creds.env:1", "keys.env:1"],
        "{}",
        run.stderr
    );
    let commits: Vec<String> = run
        .findings()
        .iter()
        .map(|f| f.commit.as_ref().unwrap().id.clone())
        .collect();
    assert_eq!(commits, [moved, copied]);
    assert_eq!(
        run.summary_line("not scanned:"),
        Some("not scanned: 1 excluded, 1 allowlisted path"),
        "{}",
        run.stderr
    );
}

/// `--history .` from a subdirectory scans the whole repository, whose paths are relative to
/// its root: the config's anchored `allow_paths` and the baseline's paths are matched from
/// there, as when run at the root.
#[test]
fn from_a_subdirectory_the_config_and_the_baseline_see_the_repositorys_paths() {
    use std::os::unix::fs::PermissionsExt;
    let r = Repo::new();
    r.write("vendor/creds.env", format!("T={}\n", token(43)));
    r.write("app.env", format!("T={}\n", token(44)));
    r.write("sub/readme.txt", "hello\n");
    r.git(&["add", "."]);
    commit_at(&r, "add", "2024-01-02T03:04:05+00:00");
    let config = r.path(".scanner.toml");
    std::fs::write(&config, "allow_paths = [\"/vendor/\"]\n").unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let args = ["scan", "--history", "--format", "json", "."];
    for dir in [".", "sub"] {
        let run = r.scan_in(dir, &args);
        assert_eq!(run.expect(1).path_lines(), ["app.env:1"], "in {dir}");
        assert_eq!(
            run.summary_line("not scanned:"),
            Some("not scanned: 1 allowlisted path"),
            "in {dir}: {}",
            run.stderr
        );
    }
    // A baseline written from the subdirectory suppresses the finding from the root.
    let baseline = r.path("baseline.json");
    let baseline = baseline.to_str().unwrap();
    // (Writing a baseline accepts the findings: exit 0.)
    r.scan_in(
        "sub",
        &[&args[..], &["--write-baseline", baseline]].concat(),
    )
    .expect(0);
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(baseline).unwrap()).unwrap();
    assert_eq!(written["entries"][0]["path"], "app.env", "{written}");
    let run = r.scan(&[&args[..], &["--baseline", baseline]].concat());
    assert_eq!(run.expect(0).path_lines(), Vec::<String>::new());
}
