use super::*;
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};

const DATE: &str = "2024-01-02T03:04:05+00:00";

/// Runs git in `dir` isolated from user and system config, with a fixed author,
/// committer and date so ids are stable; returns trimmed stdout.
fn g(dir: &Path, args: &[&str]) -> String {
    g_as(dir, ("Ann", "ann@example.com", DATE), args)
}

fn g_as(dir: &Path, who: (&str, &str, &str), args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", who.0)
        .env("GIT_AUTHOR_EMAIL", who.1)
        .env("GIT_AUTHOR_DATE", who.2)
        .env("GIT_COMMITTER_NAME", who.0)
        .env("GIT_COMMITTER_EMAIL", who.1)
        .env("GIT_COMMITTER_DATE", who.2)
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

use crate::input::test_git::git_with_input;

fn write(dir: &Path, path: &str, content: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// `git add -A && git commit`, returns the new commit id.
fn commit(dir: &Path, msg: &str) -> String {
    g(dir, &["add", "-A"]);
    g(dir, &["commit", "-q", "--allow-empty", "-m", msg]);
    g(dir, &["rev-parse", "HEAD"])
}

fn init() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    g(tmp.path(), &["init", "-q"]);
    tmp
}

fn opts(repo: &Path) -> HistoryOptions {
    HistoryOptions {
        repo: repo.to_path_buf(),
        ..HistoryOptions::default()
    }
}

/// A yielded blob, all of it: id, size, path, symlink, commit id, base, chain start.
type Yielded = (Oid, u64, Vec<u8>, bool, String, Option<Oid>, Option<u64>);

/// Every blob a walk with `diff_threads` yields, in order, and its counts.
fn walk_with(o: &HistoryOptions, diff_threads: usize) -> (Vec<Yielded>, HistoryStats) {
    let o = HistoryOptions {
        diff_threads,
        ..o.clone()
    };
    let mut got = Vec::new();
    let stats = enumerate(&o, |b| {
        got.push((
            b.oid,
            b.size,
            b.path,
            b.symlink,
            b.commit.id.clone(),
            b.base,
            b.chain,
        ));
        true
    })
    .unwrap();
    (got, stats)
}

/// The walk split among diff threads yields what it yields on one thread: the same blobs
/// in the same order, with the same sizes, paths, commits, bases and chains, and the same
/// counts.
fn assert_split_walks_alike(o: &HistoryOptions) {
    if o.revs.is_empty() && o.since.is_none() {
        assert_listed_alike(o);
    }
    let one = walk_with(o, 0);
    for threads in [1, 3] {
        assert_eq!(walk_with(o, threads), one, "{threads} diff threads");
    }
}

/// Every yielded blob as (path, content, commit summary), in yield order, read back
/// through one BlobReader. The walk split among diff threads must yield the same.
fn scan(o: &HistoryOptions) -> (Vec<(String, String, String)>, HistoryStats) {
    assert_split_walks_alike(o);
    let mut blobs = Vec::new();
    let stats = enumerate(o, |b| {
        blobs.push(b);
        true
    })
    .unwrap();
    let mut reader = BlobReader::new(&o.repo).unwrap();
    let mut buf = Vec::new();
    let got = blobs
        .iter()
        .map(|b| {
            let n = reader.read_to_vec(&b.oid, &mut buf).unwrap();
            assert_eq!(n, b.size);
            (
                String::from_utf8_lossy(&b.path).into_owned(),
                String::from_utf8_lossy(&buf).into_owned(),
                b.commit.summary.clone(),
            )
        })
        .collect();
    (got, stats)
}

fn triples(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

#[test]
fn an_id_prints_as_its_40_lowercase_hex_digits() {
    let hex = "00ff10a9b8c7d6e5f4031201abcdef9876543210";
    let oid = Oid::from_hex(hex.to_uppercase().as_bytes()).unwrap();
    assert_eq!(oid.to_string(), hex);
    assert_eq!(format!("{oid:?}"), hex);
    let mut out = b"x".to_vec();
    out.extend_from_slice(&oid.hex());
    assert_eq!(out, format!("x{hex}").as_bytes());
    assert_eq!(Oid::from_hex(&hex.as_bytes()[1..]), None);
    assert_eq!(Oid::from_hex(format!("{}g", &hex[1..]).as_bytes()), None);
}

#[test]
fn remotes_become_uris_without_credentials() {
    let repo = Path::new("/srv/repo");
    let uri = |url| remote_uri(url, repo).unwrap();
    assert_eq!(
        uri("https://x-access-token:ghs_abc@github.com/o/r.git"),
        "https://github.com/o/r.git"
    );
    assert_eq!(
        uri("https://ghp_abc@github.com/o/r"),
        "https://github.com/o/r"
    );
    assert_eq!(
        uri("ssh://git@host:2222/o/r.git"),
        "ssh://git@host:2222/o/r.git"
    );
    assert_eq!(
        uri("git@github.com:o/r.git"),
        "ssh://git@github.com/o/r.git"
    );
    assert_eq!(uri("/srv/mirror.git"), "file:///srv/mirror.git");
    assert_eq!(uri("../up"), "file:///srv/repo/../up");
}

#[test]
fn deleted_secret_is_attributed_to_the_commit_that_added_it() {
    let tmp = init();
    let d = tmp.path();
    write(d, "README", "hello\n");
    commit(d, "init");
    write(d, "conf/secret.env", "TOKEN=ghp_abc\n");
    g_as(
        d,
        ("Bob B", "bob@example.com", "2024-02-03T04:05:06+01:00"),
        &["add", "-A"],
    );
    g_as(
        d,
        ("Bob B", "bob@example.com", "2024-02-03T04:05:06+01:00"),
        &["commit", "-q", "-m", "add config\n\nlong body"],
    );
    let adding = g(d, &["rev-parse", "HEAD"]);
    std::fs::remove_file(d.join("conf/secret.env")).unwrap();
    commit(d, "remove config");

    let mut blobs = Vec::new();
    let stats = enumerate(&opts(d), |b| {
        blobs.push(b);
        true
    })
    .unwrap();
    assert_eq!(blobs.len(), 2);
    let secret = &blobs[1];
    assert_eq!(secret.path, b"conf/secret.env");
    assert_eq!(secret.size, 14);
    assert!(!secret.symlink);
    assert_eq!(
        *secret.commit,
        CommitInfo {
            id: adding,
            author_name: "Bob B".into(),
            author_email: "bob@example.com".into(),
            author_date: "2024-02-03T04:05:06+01:00".into(),
            summary: "add config".into(),
        }
    );
    assert_eq!(
        stats,
        HistoryStats {
            commits: 3,
            blobs: 2,
            blob_bytes: 6 + 14,
            deletions: 1,
            ..HistoryStats::default()
        }
    );
}

/// Every commit's changes, diffed in-process, are what `git log --raw` prints, on a
/// history with every kind of change: edits in nested directories, a mode change, a
/// file becoming a symlink, a file replaced by a directory of its name and back, a
/// directory deleted, a submodule added and moved, a merge.
#[test]
fn the_walk_lists_what_git_log_raw_lists() {
    let tmp = init();
    let d = tmp.path();
    // The gitlinks (`sub`, `moved/sub`) have no work tree: `add -A` leaves them alone.
    let at = |name: &str, date: &str, msg: &str| {
        g(d, &["add", "-A", "--", ".", ":!sub", ":!moved"]);
        g_as(
            d,
            (name, "x@example.com", date),
            &[
                "commit",
                "-q",
                "--allow-empty",
                "--cleanup=verbatim",
                "-m",
                msg,
            ],
        );
    };
    write(d, "a/b/c.txt", "one\n");
    write(d, "a/b.txt", "b\n");
    write(d, "a.b", "dot\n");
    write(d, "top", "top\n");
    at("Ann", "2024-01-02T03:04:05+05:30", "root\nsecond line");
    write(d, "a/b/c.txt", "two\n");
    std::fs::set_permissions(
        d.join("top"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    at(
        "Bob",
        "2024-01-03T00:00:00-08:00",
        "\n\n  edit  \nand more\n\nbody",
    );
    std::fs::remove_file(d.join("a.b")).unwrap();
    std::os::unix::fs::symlink("top", d.join("a.b")).unwrap();
    std::fs::remove_file(d.join("top")).unwrap();
    write(d, "top/inner", "now a directory\n");
    let sub = g(d, &["rev-parse", "HEAD"]);
    g(
        d,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{sub},sub"),
        ],
    );
    at("Cé", "2024-01-04T00:00:00+00:00", "types");
    g(d, &["checkout", "-q", "-b", "side", "HEAD~1"]);
    write(d, "a/b/c.txt", "side\n");
    write(d, "side", "s\n");
    at("Dee", "2024-01-05T00:00:00+00:00", "side");
    g(d, &["checkout", "-q", "main"]);
    g(d, &["merge", "-q", "--no-edit", "side"]);
    write(d, "a/b/c.txt", "after\n");
    at("Eve", "2024-01-06T00:00:00+01:00", "after the merge");
    std::fs::remove_dir_all(d.join("a")).unwrap();
    std::fs::remove_dir_all(d.join("top")).unwrap();
    write(d, "top", "a file again\n");
    g(d, &["rm", "-q", "--cached", "sub"]);
    g(
        d,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{sub},moved/sub"),
        ],
    );
    at("Fay", "2024-01-07T00:00:00+00:00", "cleanup");
    let expected = g(
        d,
        &[
            "log",
            "--reverse",
            "--topo-order",
            "--raw",
            "-z",
            "--root",
            "--no-renames",
            "--no-abbrev",
            "--diff-merges=first-parent",
            "--all",
            "--format=%x01%H",
        ],
    );
    let mut ours = String::new();
    let store = Arc::new(ObjectStore::new(d));
    let mut reader = BlobReader::with_store(&store).unwrap();
    let mut diff = super::super::commits::TreeDiff::default();
    let mut buf = Vec::new();
    let list = g(
        d,
        &[
            "rev-list",
            "--reverse",
            "--topo-order",
            "--parents",
            "--all",
        ],
    );
    for line in list.lines() {
        let ids: Vec<Oid> = line
            .split(' ')
            .map(|h| Oid::from_hex(h.as_bytes()).unwrap())
            .collect();
        ours += &format!("\u{1}{}\0", ids[0]);
        let mut tree = |id| read_commit_tree(&mut reader, id, &mut buf).unwrap();
        let new = tree(ids[0]);
        let old = ids.get(1).map(|&p| tree(p));
        diff.run(&mut reader, old, Some(new)).unwrap();
        if !diff.changes().is_empty() {
            ours.push('\n');
        }
        for ch in diff.changes() {
            let zero = (0, Oid([0; 20]));
            let (old, new) = (ch.old.unwrap_or(zero), ch.new.unwrap_or(zero));
            let status = match (ch.old, ch.new) {
                (None, _) => 'A',
                (_, None) => 'D',
                _ if old.0 >> 12 != new.0 >> 12 => 'T',
                _ => 'M',
            };
            ours += &format!(
                ":{:06o} {:06o} {} {} {status}\0{}\0",
                old.0,
                new.0,
                old.1,
                new.1,
                String::from_utf8_lossy(diff.path(ch))
            );
        }
    }
    assert_eq!(ours.trim_end(), expected);
    // Each kind of change is there.
    for needle in [
        " T\0a.b\0",
        " M\0top\0",
        " D\0top\0",
        " A\0top/inner\0",
        ":000000 160000 ",
        " A\0moved/sub\0",
    ] {
        assert!(expected.contains(needle), "{needle:?} in {expected}");
    }
}

#[test]
fn a_blob_in_two_paths_and_fifty_commits_is_yielded_once() {
    let tmp = init();
    let d = tmp.path();
    write(d, "a.txt", "same\n");
    write(d, "b.txt", "same\n");
    write(d, "n", "0\n");
    commit(d, "c1");
    for i in 2..=50 {
        write(d, "n", &format!("{}\n", i - 1));
        if i == 25 {
            write(d, "dir/c.txt", "same\n");
        }
        commit(d, &format!("c{i}"));
    }
    let (got, stats) = scan(&opts(d));
    assert_eq!(got.len(), 51);
    assert_eq!(got[0], ("a.txt".into(), "same\n".into(), "c1".into()));
    assert_eq!(got[1], ("n".into(), "0\n".into(), "c1".into()));
    assert_eq!(got[50], ("n".into(), "49\n".into(), "c50".into()));
    assert_eq!(
        (stats.commits, stats.blobs, stats.duplicate_blobs),
        (50, 51, 2)
    );
}

#[test]
fn branches_tags_and_every_stash_entry_are_covered() {
    let tmp = init();
    let d = tmp.path();
    write(d, "f", "base\n");
    commit(d, "base");
    g(d, &["checkout", "-q", "-b", "side"]);
    write(d, "side.txt", "only on side\n");
    commit(d, "side work");
    g(d, &["checkout", "-q", "--detach", "main"]);
    write(d, "tag.txt", "only in tag\n");
    commit(d, "tagged");
    g(d, &["tag", "v1"]);
    g(d, &["checkout", "-q", "main"]);
    write(d, "f", "stashed first\n");
    g(d, &["stash", "-q"]);
    write(d, "f", "stashed second\n");
    g(d, &["stash", "-q"]);

    let (got, stats) = scan(&opts(d));
    let mut contents: Vec<&str> = got.iter().map(|(_, c, _)| c.as_str()).collect();
    contents.sort_unstable();
    assert_eq!(
        contents,
        [
            "base\n",
            "only in tag\n",
            "only on side\n",
            "stashed first\n",
            "stashed second\n"
        ]
    );
    // base, side, tagged, a worktree commit per stash, and their index commit: the
    // index was the same both times, and with a fixed date so is the commit.
    assert_eq!(stats.commits, 6);

    let mut only_main = opts(d);
    only_main.revs = vec!["main".into()];
    let (got, stats) = scan(&only_main);
    assert_eq!(got, triples(&[("f", "base\n", "base")]));
    assert_eq!(stats.commits, 1);
}

#[test]
fn a_range_limits_to_its_commits() {
    let tmp = init();
    let d = tmp.path();
    write(d, "a", "1\n");
    let a = commit(d, "A");
    write(d, "b", "2\n");
    commit(d, "B1");
    write(d, "c", "3\n");
    write(d, "a", "1 again\n");
    let b = commit(d, "B");
    write(d, "d", "4\n");
    commit(d, "after");
    let mut o = opts(d);
    o.revs = vec![format!("{a}..{b}")];
    let (got, stats) = scan(&o);
    assert_eq!(
        got,
        triples(&[
            ("b", "2\n", "B1"),
            ("a", "1 again\n", "B"),
            ("c", "3\n", "B")
        ])
    );
    assert_eq!(stats.commits, 2);
}

#[test]
fn since_and_reflogs_select_commits() {
    let tmp = init();
    let d = tmp.path();
    let at = |date| ("Ann", "ann@example.com", date);
    write(d, "old", "january\n");
    g(d, &["add", "-A"]);
    g_as(
        d,
        at("2024-01-01T00:00:00Z"),
        &["commit", "-q", "-m", "jan"],
    );
    write(d, "new", "june\n");
    g(d, &["add", "-A"]);
    g_as(
        d,
        at("2024-06-01T00:00:00Z"),
        &["commit", "-q", "-m", "jun"],
    );
    // Amended away: only the HEAD reflog still knows this commit.
    write(d, "oops", "amended away\n");
    g(d, &["add", "-A"]);
    g_as(
        d,
        at("2024-07-01T00:00:00Z"),
        &["commit", "-q", "-m", "oops"],
    );
    write(d, "oops", "clean\n");
    g(d, &["add", "-A"]);
    g_as(
        d,
        at("2024-07-01T00:00:00Z"),
        &["commit", "-q", "--amend", "-m", "fixed"],
    );

    let mut o = opts(d);
    o.since = Some("2024-03-01".into());
    let (got, stats) = scan(&o);
    assert_eq!(
        got,
        triples(&[("new", "june\n", "jun"), ("oops", "clean\n", "fixed")])
    );
    assert_eq!(stats.commits, 2);

    o.since = None;
    assert_eq!(scan(&o).1.blobs, 3);
    o.reflogs = true;
    let (got, _) = scan(&o);
    assert_eq!(got.len(), 4);
    assert!(got.contains(&("oops".into(), "amended away\n".into(), "oops".into())));
}

#[test]
fn a_rename_yields_nothing_new_an_edit_after_it_does() {
    let tmp = init();
    let d = tmp.path();
    write(d, "old.txt", "x\n");
    commit(d, "add");
    g(d, &["mv", "old.txt", "new.txt"]);
    commit(d, "rename");
    write(d, "new.txt", "y\n");
    commit(d, "edit");
    let (got, stats) = scan(&opts(d));
    assert_eq!(
        got,
        triples(&[("old.txt", "x\n", "add"), ("new.txt", "y\n", "edit")])
    );
    assert_eq!((stats.duplicate_blobs, stats.deletions), (1, 1));
}

#[test]
fn a_merge_yields_only_what_it_resolved() {
    let tmp = init();
    let d = tmp.path();
    write(d, "f", "base\n");
    commit(d, "base");
    g(d, &["checkout", "-q", "-b", "side"]);
    write(d, "s.txt", "side\n");
    write(d, "f", "side version\n");
    commit(d, "side");
    g(d, &["checkout", "-q", "main"]);
    write(d, "f", "main version\n");
    commit(d, "main");
    // Conflicts on f; the resolution is a blob neither parent has.
    let merge = Command::new("git")
        .current_dir(d)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["merge", "-q", "side"])
        .output()
        .unwrap();
    assert!(!merge.status.success());
    write(d, "f", "resolved\n");
    commit(d, "merge side");
    let (got, stats) = scan(&opts(d));
    let by_content: BTreeMap<&str, (&str, &str)> = got
        .iter()
        .map(|(p, c, s)| (c.as_str(), (p.as_str(), s.as_str())))
        .collect();
    assert_eq!(
        by_content,
        BTreeMap::from([
            ("base\n", ("f", "base")),
            ("main version\n", ("f", "main")),
            ("side version\n", ("f", "side")),
            ("side\n", ("s.txt", "side")),
            ("resolved\n", ("f", "merge side")),
        ])
    );
    // Parents before children: the merge comes last, after both sides.
    assert_eq!(got[4].2, "merge side");
    assert_eq!((stats.commits, stats.blobs), (4, 5));
}

#[cfg(unix)]
#[test]
fn a_non_utf8_path_is_kept_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = init();
    let d = tmp.path();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9 \"q\"\n.txt");
    std::fs::write(d.join(name), "k\n").unwrap();
    commit(d, "latin-1 name");
    let mut paths = Vec::new();
    enumerate(&opts(d), |b| {
        paths.push(b.path);
        true
    })
    .unwrap();
    assert_eq!(paths, vec![b"caf\xe9 \"q\"\n.txt".to_vec()]);
}

#[test]
fn submodules_are_counted_symlinks_yielded() {
    let tmp = init();
    let d = tmp.path();
    write(d, "f", "x\n");
    let other = commit(d, "first");
    let target = {
        let mut c = Command::new("git");
        c.current_dir(d)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"../secrets/key.pem")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    // Index entries made directly: a gitlink needs no cloned submodule.
    g(
        d,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{other},vendor/lib"),
        ],
    );
    g(
        d,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("120000,{target},link"),
        ],
    );
    g(d, &["commit", "-q", "-m", "links"]);
    let mut blobs = Vec::new();
    let stats = enumerate(&opts(d), |b| {
        blobs.push((b.path, b.symlink, b.size));
        true
    })
    .unwrap();
    assert_eq!(
        blobs,
        vec![(b"f".to_vec(), false, 2), (b"link".to_vec(), true, 18)]
    );
    assert_eq!((stats.submodules, stats.symlinks, stats.blobs), (1, 1, 2));
}

/// Three commits: `key` holds "v1", "v2", "v3".
fn three_versions() -> tempfile::TempDir {
    let tmp = init();
    let d = tmp.path();
    for v in 1..=3 {
        write(d, "key", &format!("v{v}\n"));
        write(d, "const", "c\n");
        commit(d, &format!("v{v}"));
    }
    tmp
}

/// Each yielded blob as (path, content, content of its base), in yield order. The walk
/// split among diff threads must yield the same.
fn bases(o: &HistoryOptions) -> Vec<(String, String, Option<String>)> {
    assert_split_walks_alike(o);
    let mut blobs = Vec::new();
    enumerate(o, |b| {
        blobs.push(b);
        true
    })
    .unwrap();
    let mut reader = BlobReader::new(&o.repo).unwrap();
    let mut read = |oid: &Oid| {
        let mut buf = Vec::new();
        reader.read_to_vec(oid, &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    };
    blobs
        .iter()
        .map(|b| {
            let path = String::from_utf8_lossy(&b.path).into_owned();
            (path, read(&b.oid), b.base.as_ref().map(&mut read))
        })
        .collect()
}

#[test]
fn a_modification_names_its_base_only_when_the_base_was_yielded_at_the_same_path() {
    let tmp = init();
    let d = tmp.path();
    write(d, "a", "a1\n");
    write(d, "x", "shared\n");
    commit(d, "one");
    write(d, "a", "a2\n");
    // The same content at a new path is not yielded again...
    write(d, "y", "shared\n");
    commit(d, "two");
    // ...so its next version at that path has no base: the old one was reported at `x`.
    write(d, "y", "shared, edited\n");
    // A file turned into a symlink is a type change, not a modification.
    std::fs::remove_file(d.join("x")).unwrap();
    std::os::unix::fs::symlink("a", d.join("x")).unwrap();
    commit(d, "three");
    // A merge that resolves to new content: scanned whole.
    g(d, &["checkout", "-q", "-b", "side"]);
    write(d, "a", "a-side\n");
    commit(d, "side");
    g(d, &["checkout", "-q", "main"]);
    write(d, "a", "a-main\n");
    commit(d, "main");
    let _ = std::process::Command::new("git")
        .current_dir(d)
        .args(["merge", "-q", "--no-commit", "side"])
        .output()
        .unwrap();
    write(d, "a", "a-merged\n");
    g(d, &["add", "-A"]);
    g(d, &["commit", "-q", "-m", "merge"]);
    write(d, "a", "a-after\n");
    commit(d, "after");

    let s = |v: &str| v.to_string();
    assert_eq!(
        bases(&opts(d)),
        vec![
            (s("a"), s("a1\n"), None),
            (s("x"), s("shared\n"), None),
            (s("a"), s("a2\n"), Some(s("a1\n"))),
            (s("x"), s("a"), None),
            (s("y"), s("shared, edited\n"), None),
            // Both sides of the merge modify `a2`.
            (s("a"), s("a-main\n"), Some(s("a2\n"))),
            (s("a"), s("a-side\n"), Some(s("a2\n"))),
            (s("a"), s("a-merged\n"), None),
            (s("a"), s("a-after\n"), Some(s("a-merged\n"))),
        ]
    );
    // Outside the selected range the old version was not yielded: no base.
    let mut o = opts(d);
    o.revs = vec![s("HEAD~1..HEAD")];
    assert_eq!(bases(&o), vec![(s("a"), s("a-after\n"), None)]);
}

#[test]
fn a_shallow_clone_scans_what_it_has() {
    let origin = three_versions();
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.path().display());
    g(
        tmp.path(),
        &["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let (got, stats) = scan(&opts(&tmp.path().join("shallow")));
    assert_eq!(
        got,
        triples(&[("const", "c\n", "v3"), ("key", "v3\n", "v3")])
    );
    assert_eq!(stats.commits, 1);
}

#[test]
fn a_partial_clone_yields_its_missing_blobs_for_the_reader_to_report_without_fetching() {
    let origin = three_versions();
    g(origin.path(), &["config", "uploadpack.allowFilter", "true"]);
    let v1 = g(origin.path(), &["rev-parse", "HEAD~2:key"]);
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.path().display());
    g(
        tmp.path(),
        &["clone", "-q", "--filter=blob:none", &url, "partial"],
    );
    let partial = tmp.path().join("partial");
    let mut yielded = Vec::new();
    let stats = enumerate(&opts(&partial), |b| {
        yielded.push((String::from_utf8(b.path).unwrap(), b.size));
        true
    })
    .unwrap();
    // The checkout fetched HEAD's blobs only: `const` ("c\n") and v3's `key` ("v3\n").
    // v1's and v2's `key` are missing: yielded all the same, at size 0.
    let want = [("const", 2), ("key", 0), ("key", 0), ("key", 3)];
    let want: Vec<_> = want.iter().map(|&(p, n)| (p.to_string(), n)).collect();
    assert_eq!(yielded, want);
    assert_eq!((stats.blobs, stats.blob_bytes), (4, 5));
    // Reading one is the error the worker reports: nothing is fetched behind our back.
    let mut r = BlobReader::new(&partial).unwrap();
    let err = r
        .read_to_vec(&Oid::from_hex(v1.as_bytes()).unwrap(), &mut Vec::new())
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    let text = err.to_string();
    assert!(text.contains(&format!("object {v1} is missing")), "{text}");
    assert!(text.contains("partial clone, fetch it first"), "{text}");
}

#[test]
fn bare_repositories_worktrees_and_subdirectories_work() {
    let origin = three_versions();
    let want = triples(&[
        ("const", "c\n", "v1"),
        ("key", "v1\n", "v1"),
        ("key", "v2\n", "v2"),
        ("key", "v3\n", "v3"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let bare = tmp.path().join("bare.git");
    g(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            origin.path().to_str().unwrap(),
            "bare.git",
        ],
    );
    assert_eq!(scan(&opts(&bare)).0, want);

    // A linked worktree: its `.git` is a file pointing into the main repository.
    let wt = tmp.path().join("wt");
    g(
        origin.path(),
        &["worktree", "add", "-q", wt.to_str().unwrap()],
    );
    assert!(wt.join(".git").is_file());
    assert_eq!(scan(&opts(&wt)).0, want);

    std::fs::create_dir(origin.path().join("sub")).unwrap();
    assert_eq!(scan(&opts(&origin.path().join("sub"))).0, want);
}

#[test]
fn a_clone_borrowing_objects_through_alternates_is_read() {
    let origin = three_versions();
    let tmp = tempfile::tempdir().unwrap();
    g(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--shared",
            origin.path().to_str().unwrap(),
            "borrower",
        ],
    );
    let borrower = tmp.path().join("borrower");
    // Nothing of its own: every object is read through objects/info/alternates.
    assert!(borrower.join(".git/objects/info/alternates").is_file());
    assert_eq!(g(&borrower, &["count-objects"]), "0 objects, 0 kilobytes");
    assert_eq!(
        scan(&opts(&borrower)).0,
        triples(&[
            ("const", "c\n", "v1"),
            ("key", "v1\n", "v1"),
            ("key", "v2\n", "v2"),
            ("key", "v3\n", "v3"),
        ])
    );
}

/// Many commits, so that every diff thread gets blocks of them in turn: edits, a revert (a
/// blob seen before), deletions, a rename, a symlink, and branches merged with a conflict
/// resolved, packed so that chains start somewhere. The split walk yields what one thread
/// yields, with or without chains, and stops as early.
#[test]
fn a_walk_split_among_diff_threads_yields_what_one_thread_yields() {
    let tmp = init();
    let d = tmp.path();
    for i in 0..70 {
        write(
            d,
            &format!("dir{}/f{}.txt", i % 5, i % 7),
            &format!("v{i}\n"),
        );
        write(d, "log.txt", &"line\n".repeat(i + 1));
        if i % 9 == 0 {
            write(d, "f", "again\n");
        }
        if i % 9 == 4 {
            std::fs::remove_file(d.join("f")).unwrap();
        }
        if i == 20 {
            std::os::unix::fs::symlink("log.txt", d.join("link")).unwrap();
        }
        if i == 30 {
            g(d, &["mv", "dir1", "moved"]);
        }
        if i % 17 == 16 {
            g(d, &["checkout", "-q", "-b", &format!("side{i}")]);
            write(d, "log.txt", &format!("side {i}\n"));
            commit(d, &format!("side {i}"));
            g(d, &["checkout", "-q", "main"]);
            write(d, "log.txt", &format!("main {i}\n"));
            commit(d, &format!("main {i}"));
            let merge = Command::new("git")
                .current_dir(d)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(["merge", "-q", &format!("side{i}")])
                .output()
                .unwrap();
            assert!(!merge.status.success());
            write(d, "log.txt", &format!("resolved {i}\n"));
        }
        commit(d, &format!("c{i}"));
    }
    g(d, &["gc", "-q"]);
    let mut o = opts(d);
    for chains in [false, true] {
        o.chains = chains;
        assert_split_walks_alike(&o);
    }
    let (one, stats) = walk_with(&o, 0);
    // 70, and a commit on each side before each of the four merges (i = 16, 33, 50, 67).
    assert_eq!(stats.commits, 70 + 4 * 2);
    assert!(
        stats.duplicate_blobs > 0 && stats.deletions > 0,
        "{stats:?}"
    );
    assert!(one.iter().any(|b| b.6.is_some()), "chains found");
    // Stopped after 10 blobs: the same 10, and the walk says it stopped.
    for threads in [0, 3] {
        let mut got = Vec::new();
        let stats = enumerate(
            &HistoryOptions {
                diff_threads: threads,
                ..o.clone()
            },
            |b| {
                got.push(b.oid);
                got.len() < 10
            },
        )
        .unwrap();
        assert!(stats.stopped);
        assert_eq!(stats.blobs, 10);
        let first: Vec<Oid> = one[..10].iter().map(|b| b.0).collect();
        assert_eq!(got, first, "{threads} diff threads");
    }
}

/// Partial clones walk alike split: blobs that were never fetched are yielded at size 0,
/// and commits whose trees were never fetched are counted and named, the same way.
#[test]
fn partial_clones_walk_alike_split() {
    let origin = three_versions();
    g(origin.path(), &["config", "uploadpack.allowFilter", "true"]);
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("file://{}", origin.path().display());
    for (filter, unlisted) in [("--filter=blob:none", 0), ("--filter=tree:0", 2)] {
        let dest = tmp.path().join(&filter[9..13]);
        g(
            tmp.path(),
            &["clone", "-q", filter, &url, dest.to_str().unwrap()],
        );
        let o = opts(&dest);
        assert_split_walks_alike(&o);
        let (_, stats) = walk_with(&o, 3);
        assert_eq!((stats.commits, stats.unlisted), (3, unlisted), "{filter}");
        assert_eq!(stats.first_unlisted.is_some(), unlisted > 0, "{filter}");
    }
}

#[test]
fn on_blob_false_stops_early() {
    let origin = three_versions();
    let mut n = 0;
    let stats = enumerate(&opts(origin.path()), |_| {
        n += 1;
        n < 2
    })
    .unwrap();
    assert_eq!(n, 2);
    assert!(stats.stopped);
    assert_eq!(stats.blobs, 2);
}

/// A blob stored whole streams the bytes a whole read gives, loose and packed; a delta,
/// a tree and a missing object do not stream; a loose object cut short fails naming it.
#[test]
fn blob_stream_gives_what_a_whole_read_gives() {
    let tmp = init();
    let d = tmp.path();
    let big: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(d.join("big"), &big).unwrap();
    write(d, "dir/small", "first\n");
    commit(d, "v1");
    let mut edited = big.clone();
    edited.truncate(2_000_000);
    std::fs::write(d.join("big"), &edited).unwrap();
    commit(d, "v2");
    let id = |rev: &str| Oid::from_hex(g(d, &["rev-parse", rev]).as_bytes()).unwrap();
    let streamed = |r: &mut BlobReader, rev: &str| -> Option<Vec<u8>> {
        let mut s = r.stream(&id(rev)).unwrap()?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        assert_eq!(out.len() as u64, s.size());
        Some(out)
    };
    for packed in [false, true] {
        if packed {
            g(d, &["repack", "-adq"]);
        }
        let mut r = BlobReader::new(d).unwrap();
        let v2 = streamed(&mut r, "HEAD:big");
        let v1 = streamed(&mut r, "HEAD~:big");
        if packed {
            // The larger version whole, the smaller a delta against it.
            assert!(v1 == Some(big.clone()) && v2.is_none(), "packed");
        } else {
            assert!(
                v1 == Some(big.clone()) && v2 == Some(edited.clone()),
                "loose"
            );
        }
        assert_eq!(streamed(&mut r, "HEAD:dir/small").unwrap(), b"first\n");
        assert!(r.stream(&id("HEAD:dir")).unwrap().is_none(), "a tree");
        assert!(r.stream(&Oid([0xab; 20])).unwrap().is_none(), "missing");
    }

    // A loose object cut short.
    let tmp = init();
    let d = tmp.path();
    std::fs::write(d.join("big"), &big).unwrap();
    commit(d, "v1");
    let oid = Oid::from_hex(g(d, &["rev-parse", "HEAD:big"]).as_bytes()).unwrap();
    let hex = oid.to_string();
    let file = d.join(".git/objects").join(&hex[..2]).join(&hex[2..]);
    let bytes = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let cut_short = |d: &Path| {
        let mut s = BlobReader::new(d).unwrap().stream(&oid).unwrap().unwrap();
        let err = s.read_to_end(&mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let said = err.to_string();
        assert!(
            said.contains(&format!("object {hex} is corrupt or unreadable")),
            "{said}"
        );
    };
    cut_short(d);
    // A pack whose entry is cut short (its last 20 bytes then read as the checksum).
    std::fs::write(&file, &bytes).unwrap();
    g(d, &["repack", "-adq"]);
    let pack = std::fs::read_dir(d.join(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let bytes = std::fs::read(&pack).unwrap();
    std::fs::remove_file(&pack).unwrap();
    std::fs::write(&pack, &bytes[..bytes.len() / 2]).unwrap();
    cut_short(d);
}

#[test]
fn blob_reader_streams_blobs_in_sequence() {
    let tmp = init();
    let d = tmp.path();
    // 10 MB that no delta or compression makes trivial to get right by accident.
    let big: Vec<u8> = (0..10_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(d.join("big"), &big).unwrap();
    write(d, "empty", "");
    write(d, "one", "first\n");
    write(d, "two", "no newline at end");
    commit(d, "blobs");
    let id =
        |p: &str| Oid::from_hex(g(d, &["rev-parse", &format!("HEAD:{p}")]).as_bytes()).unwrap();

    let mut r = BlobReader::new(d).unwrap();
    let mut buf = Vec::new();
    assert_eq!(r.read_to_vec(&id("one"), &mut buf).unwrap(), 6);
    assert_eq!(buf, b"first\n");

    assert_eq!(r.read_to_vec(&id("big"), &mut buf).unwrap(), 10_000_000);
    assert!(buf == big);

    assert_eq!(r.read_to_vec(&id("empty"), &mut buf).unwrap(), 0);
    assert_eq!(buf, b"");

    let missing = Oid([0xab; 20]);
    let err = r.read_to_vec(&missing, &mut buf).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(err.to_string().contains(&"ab".repeat(20)), "{err}");

    let tree = Oid::from_hex(g(d, &["rev-parse", "HEAD^{tree}"]).as_bytes()).unwrap();
    let err = r.read_to_vec(&tree, &mut buf).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("is a tree, not a blob"), "{err}");

    assert_eq!(r.read_to_vec(&id("two"), &mut buf).unwrap(), 17);
    assert_eq!(buf, b"no newline at end");

    assert_eq!(
        r.read_to_vec(&missing, &mut buf).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    assert_eq!(
        r.read_to_vec(&id("one"), &mut buf).unwrap(),
        6,
        "a failure leaves the reader usable"
    );
}

#[test]
fn a_corrupt_object_is_named_and_the_reader_goes_on() {
    let tmp = init();
    let d = tmp.path();
    write(d, "good", "fine\n");
    write(d, "bad", "will be damaged\n");
    commit(d, "two");
    let id =
        |p: &str| Oid::from_hex(g(d, &["rev-parse", &format!("HEAD:{p}")]).as_bytes()).unwrap();
    let (good, bad) = (id("good"), id("bad"));
    // A fresh commit leaves loose objects: replace one with bytes that do not inflate.
    let hex = bad.to_string();
    let loose = d.join(".git/objects").join(&hex[..2]).join(&hex[2..]);
    std::fs::remove_file(&loose).unwrap();
    std::fs::write(&loose, b"not a zlib stream at all").unwrap();

    let mut r = BlobReader::new(d).unwrap();
    let mut buf = Vec::new();
    let err = r.read_to_vec(&bad, &mut buf).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{}: object {hex} is corrupt", d.display())),
        "{msg}"
    );
    assert_eq!(r.read_to_vec(&good, &mut buf).unwrap(), 5);
    assert_eq!(buf, b"fine\n");
}

#[test]
fn a_sha256_repository_is_refused_by_the_reader() {
    let tmp = tempfile::tempdir().unwrap();
    g(tmp.path(), &["init", "-q", "--object-format=sha256"]);
    let err = BlobReader::new(tmp.path())
        .and_then(|mut r| r.read_to_vec(&Oid([1; 20]), &mut Vec::new()))
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Unsupported);
    assert_eq!(
        err.to_string(),
        format!(
            "{}: SHA-256 repositories are not supported",
            tmp.path().display()
        )
    );
    // The walk says it once, with commits to list (or none).
    write(tmp.path(), "a", "a\n");
    commit(tmp.path(), "one");
    let err = enumerate(&opts(tmp.path()), |_| true).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: SHA-256 repositories are not supported",
            tmp.path().display()
        )
    );
}

#[test]
fn readers_on_one_store_share_it() {
    let origin = three_versions();
    let store = Arc::new(ObjectStore::new(origin.path()));
    let id = Oid::from_hex(g(origin.path(), &["rev-parse", "HEAD~2:key"]).as_bytes()).unwrap();
    let readers: Vec<Vec<u8>> = thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let store = &store;
                s.spawn(move || {
                    let mut r = BlobReader::with_store(store).unwrap();
                    assert!(Arc::ptr_eq(r.store(), store));
                    let mut buf = Vec::new();
                    r.read_to_vec(&id, &mut buf).unwrap();
                    buf
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(readers, vec![b"v1\n".to_vec(), b"v1\n".to_vec()]);
    // Opened once: both readers got the same repository.
    assert!(store.opened.get().is_some_and(|r| r.is_ok()));
}

#[test]
fn errors_name_the_repository_and_the_revision() {
    let tmp = tempfile::tempdir().unwrap();
    let err = enumerate(&opts(tmp.path()), |_| true).unwrap_err();
    assert!(
        matches!(&err, HistoryError::NotARepository { repo, .. } if repo == tmp.path()),
        "{err:?}"
    );
    let err = enumerate(&opts(&tmp.path().join("absent")), |_| true).unwrap_err();
    assert!(
        matches!(err, HistoryError::NotARepository { .. }),
        "{err:?}"
    );

    let repo = three_versions();
    for rev in ["nope", "main..nope"] {
        let mut o = opts(repo.path());
        o.revs = vec![rev.into()];
        let err = enumerate(&o, |_| true).unwrap_err();
        assert!(
            matches!(&err, HistoryError::UnknownRevision { rev: r, .. } if r == rev),
            "{rev}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("{}: unknown revision `{rev}`", repo.path().display())
        );
    }
}

/// CPU seconds (user + system) of this process, and of its reaped children.
fn cpu_seconds() -> (f64, f64) {
    let get = |who| {
        // SAFETY: getrusage only writes the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    };
    (get(libc::RUSAGE_SELF), get(libc::RUSAGE_CHILDREN))
}

/// Runs `read` over `blobs` split among `readers` threads; prints wall and CPU time
/// (this process plus the children it reaped in the meantime).
fn timed_read(
    label: &str,
    blobs: &[Oid],
    readers: usize,
    want: u64,
    read: impl Fn(&[Oid]) -> u64 + Sync,
) {
    let (self0, children0) = cpu_seconds();
    let t = std::time::Instant::now();
    let total: u64 = thread::scope(|s| {
        let handles: Vec<_> = blobs
            .chunks(blobs.len().div_ceil(readers))
            .map(|chunk| {
                let read = &read;
                s.spawn(move || read(chunk))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let wall = t.elapsed();
    let (self1, children1) = cpu_seconds();
    assert_eq!(total, want);
    println!(
        "read all blobs, {label}, {readers} reader(s): wall {wall:.3?}, cpu {:.3} s \
         (in-process {:.3} s, git {:.3} s)",
        (self1 - self0) + (children1 - children0),
        self1 - self0,
        children1 - children0
    );
}

/// Timing on a real repository: `HISTORY_BENCH_REPO=/path cargo test --release -p
/// scanner-cli history::tests::bench -- --ignored --nocapture` (scripts/bench-history.sh).
#[test]
#[ignore = "benchmark: needs HISTORY_BENCH_REPO pointing at a large repository"]
fn bench() {
    let repo = PathBuf::from(std::env::var_os("HISTORY_BENCH_REPO").unwrap());
    let t = std::time::Instant::now();
    let mut blobs = Vec::new();
    let stats = enumerate(&opts(&repo), |b| {
        blobs.push(b.oid);
        true
    })
    .unwrap();
    println!(
        "enumerate: {:?}, {} commits, {} blobs ({} bytes), {} duplicates",
        t.elapsed(),
        stats.commits,
        stats.blobs,
        stats.blob_bytes,
        stats.duplicate_blobs
    );
    for readers in [1, 2] {
        // What the readers replaced: one `git cat-file --batch` per reader, every id
        // written up front by a feeder thread (the deepest pipelining there is).
        timed_read(
            "git cat-file --batch",
            &blobs,
            readers,
            stats.blob_bytes,
            |chunk| {
                let mut child = git(&repo)
                    .args(["cat-file", "--batch"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                let mut stdin = BufWriter::new(child.stdin.take().unwrap());
                let mut stdout = BufReader::with_capacity(256 * 1024, child.stdout.take().unwrap());
                let ids: Vec<Oid> = chunk.to_vec();
                let feeder = thread::spawn(move || {
                    let mut hex = Vec::with_capacity(41);
                    for oid in ids {
                        hex.clear();
                        hex.extend_from_slice(&oid.hex());
                        hex.push(b'\n');
                        stdin.write_all(&hex).unwrap();
                    }
                });
                let (mut total, mut line) = (0, Vec::new());
                for _ in chunk {
                    line.clear();
                    stdout.read_until(b'\n', &mut line).unwrap();
                    let size: u64 = std::str::from_utf8(&line)
                        .unwrap()
                        .trim_end()
                        .rsplit(' ')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap();
                    io::copy(&mut (&mut stdout).take(size + 1), &mut io::sink()).unwrap();
                    total += size;
                }
                feeder.join().unwrap();
                drop(stdout);
                child.wait().unwrap();
                total
            },
        );
    }
    let shared = gix::open_opts(&repo, gix::open::Options::isolated())
        .unwrap()
        .into_sync();
    // Sizes only, in order: gitoxide's headers (it follows each delta chain to learn the
    // kind), and what the walk does (`BlobReader::header`).
    timed_read(
        "sizes only, gix try_header",
        &blobs,
        1,
        stats.blob_bytes,
        |chunk| {
            use gix::prelude::Header;
            let r = shared.to_thread_local();
            let header = |oid: &Oid| r.objects.try_header(oid.as_gix()).unwrap().unwrap();
            chunk.iter().map(|oid| header(oid).size()).sum()
        },
    );
    let packs = Arc::new(crate::input::pack::Packs::open(shared.objects_dir()));
    timed_read(
        "sizes only, pack reader",
        &blobs,
        1,
        stats.blob_bytes,
        |chunk| {
            let mut r = crate::input::pack::PackReader::new(Arc::clone(&packs), 1 << 20, 1 << 19);
            chunk
                .iter()
                .map(|oid| r.header(oid).unwrap().unwrap().1)
                .sum()
        },
    );
    for (readers, cache) in [
        (1, 0),
        (1, 8 << 20),
        (1, 16 << 20),
        (1, 32 << 20),
        (2, 16 << 20),
    ] {
        timed_read(
            &format!("gix, pack cache {} MiB", cache >> 20),
            &blobs,
            readers,
            stats.blob_bytes,
            |chunk| {
                use gix::prelude::Find;
                let mut r = shared.to_thread_local();
                if cache > 0 {
                    r.objects.set_pack_cache(move || {
                        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(cache))
                    });
                } else {
                    r.objects.unset_pack_cache();
                }
                let mut buf = Vec::new();
                let mut total = 0;
                for oid in chunk {
                    let id = oid.as_gix();
                    let data = r.objects.try_find(id, &mut buf).unwrap().unwrap();
                    assert_eq!(data.kind, gix::objs::Kind::Blob);
                    total += data.data.len() as u64;
                }
                total
            },
        );
    }
    // What the workers use: our own chain resolution (`super::pack`).
    let mib = |n: usize| n << 20;
    for (readers, rebuilt, whole) in [
        (1, mib(8), 0),
        (1, mib(16), 0),
        (1, mib(4), mib(4)),
        (1, mib(8), mib(4)),
        (2, mib(8), mib(4)),
    ] {
        timed_read(
            &format!(
                "pack reader, caches of {} + {} MiB",
                rebuilt >> 20,
                whole >> 20
            ),
            &blobs,
            readers,
            stats.blob_bytes,
            |chunk| {
                let mut r = crate::input::pack::PackReader::new(Arc::clone(&packs), rebuilt, whole);
                let mut buf = Vec::new();
                let mut total = 0;
                for oid in chunk {
                    let kind = r.read(oid, &mut buf).unwrap();
                    assert_eq!(kind, Some(gix::objs::Kind::Blob));
                    total += buf.len() as u64;
                }
                total
            },
        );
    }
}

/// Every commit listed for `o`, as the walk gets them: id, first parent, merge, tree and
/// fields; in-process with `list_threads`, else by `git rev-list`.
fn listed(
    o: &HistoryOptions,
    list_threads: usize,
) -> Vec<(Oid, Option<Oid>, bool, Oid, CommitInfo)> {
    let o = HistoryOptions {
        list_threads,
        ..o.clone()
    };
    let store = Arc::new(ObjectStore::new(&o.repo));
    let started = start(&o, &store).unwrap();
    let (list, mut commits) = walk::commits(&o.repo, started.listing).unwrap();
    assert_eq!(list.is_some(), list_threads == 0, "listed by git");
    let mut all = Vec::new();
    while let Some(c) = commits.next().unwrap() {
        all.push((c.id, c.parent, c.merge, c.tree, c.info));
    }
    if let Some(list) = list {
        list.finish(&o.repo).unwrap();
    }
    all
}

/// The in-process listing lists what `git rev-list` lists, in the same order, with the
/// same fields.
fn assert_listed_alike(o: &HistoryOptions) -> usize {
    let git = listed(o, 0);
    for threads in [1, 3] {
        let ours = listed(o, threads);
        assert_eq!(ours.len(), git.len(), "{threads} threads");
        for (i, (a, b)) in ours.iter().zip(&git).enumerate() {
            assert_eq!(a, b, "commit {i} of {}, {threads} threads", git.len());
        }
    }
    git.len()
}

#[test]
#[ignore = "needs a large real repository: SCANNER_LIST_REPO=path"]
fn a_real_history_is_listed_in_process_as_git_lists_it() {
    let repo = std::env::var_os("SCANNER_LIST_REPO").expect("SCANNER_LIST_REPO");
    let n = assert_listed_alike(&opts(Path::new(&repo)));
    eprintln!("{n} commits listed alike");
}

/// `git fast-import` with `stream` into a new repository, packed again with `repack`
/// (`git repack -adf`: commits first, as git writes every pack) or left as fast-import
/// packed it (blobs and commits as they came).
fn imported(stream: &str, repack: bool) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    g(d, &["init", "-q", "--bare"]);
    git_with_input(d, &["fast-import", "--quiet"], stream.as_bytes()).unwrap();
    if repack {
        g(d, &["repack", "-adfq"]);
    }
    tmp
}

/// A random history for `git fast-import`: `commits` commits, each with one to three parents
/// among those before it (or none: several roots), committer dates from a handful (ties
/// everywhere, children older than their parents), some made as deltas of a long common
/// message; a few branches and tags at random commits.
fn random_history(seed: u64, commits: usize) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let long =
        "a long message, the same in every commit, so that packing stores commits as deltas\n"
            .repeat(8);
    let mut out = String::new();
    for c in 1..=commits {
        let date = 1_700_000_000 + 100 * next(4);
        let body = format!("commit {c}\n{long}");
        out += &format!(
            "commit refs/heads/work\nmark :{c}\nauthor A{c} <a{c}@example.com> {date} +0100\ncommitter C <c@example.com> {date} +0000\ndata {}\n{body}\n",
            body.len()
        );
        if c > 1 && next(8) != 0 {
            out += &format!("from :{}\n", 1 + next(c - 1));
            for _ in 0..next(3).saturating_sub(1) {
                out += &format!("merge :{}\n", 1 + next(c - 1));
            }
        } else if c > 1 {
            // A new root: `work` starts over.
            out = out.replacen(
                &format!("commit refs/heads/work\nmark :{c}\n"),
                &format!("reset refs/heads/work\ncommit refs/heads/work\nmark :{c}\n"),
                1,
            );
            out += "deleteall\n";
        }
        out += &format!("M 100644 inline f{}\ndata 2\n{c}\n\n", next(5));
    }
    for b in 0..4 {
        out += &format!("reset refs/heads/b{b}\nfrom :{}\n\n", 1 + next(commits));
        out += &format!("reset refs/tags/t{b}\nfrom :{}\n\n", 1 + next(commits));
    }
    out
}

#[test]
fn random_histories_are_listed_in_process_as_git_lists_them() {
    for seed in 0..12 {
        let repo = imported(&random_history(seed, 40), seed % 2 == 0);
        if seed % 3 == 0 {
            // git then orders by generation numbers (`init_topo_walk`): the same order.
            g(repo.path(), &["commit-graph", "write", "--reachable"]);
        }
        let n = assert_listed_alike(&opts(repo.path()));
        assert!(n >= 10, "seed {seed}: {n} commits");
    }
}

#[test]
fn a_history_with_stashes_tags_loose_commits_and_another_encoding_is_listed_alike() {
    let tmp = init();
    let d = tmp.path();
    write(d, "a", "1");
    commit(d, "base");
    g(d, &["checkout", "-q", "-b", "side"]);
    write(d, "b", "2");
    commit(d, "side");
    g(d, &["checkout", "-q", "main"]);
    write(d, "c", "3");
    // Same date as everything else: every tie is broken by order alone.
    commit(d, "main");
    g(d, &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
    g(d, &["tag", "-a", "-m", "annotated", "v1"]);
    g(d, &["tag", "-a", "-m", "a tag of a tag", "v1-again", "v1"]);
    g(d, &["tag", "tree-tag", "HEAD^{tree}"]);
    g(d, &["repack", "-adq"]);
    // Loose, after the pack: read one by one.
    write(d, "a", "stashed");
    g(d, &["stash", "-q"]);
    write(d, "a", "stashed again");
    g(d, &["stash", "-q"]);
    g(
        d,
        &[
            "-c",
            "i18n.commitEncoding=ISO-8859-1",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "latin",
        ],
    );
    g(d, &["checkout", "-q", "--orphan", "other"]);
    commit(d, "another root");
    // base, side, main, merge, two stashes and their index commit (one: the same tree,
    // parent and date), latin, another root.
    assert_eq!(assert_listed_alike(&opts(d)), 9);
    let latin = listed(&opts(d), 2)
        .into_iter()
        .find(|c| c.4.summary == "latin")
        .map(|c| c.4.author_name);
    assert_eq!(latin.as_deref(), Some("Ann"), "asked of git");
    let reflogs = HistoryOptions {
        reflogs: true,
        ..opts(d)
    };
    assert_eq!(assert_listed_alike(&reflogs), 9);
}

/// `git show-ref --head -d`'s output put in `--all`'s order: the refs as listed, each tag
/// peeled by the line after it, then HEAD (listed first), then the stash entries; output
/// not of that shape is left to git.
#[test]
fn the_refs_shown_are_put_in_the_order_all_adds_them() {
    let id = |n: u8| Oid::from_hex(format!("{n:02x}").repeat(20).as_bytes()).unwrap();
    let show = |lines: &[(u8, &str)]| -> Vec<u8> {
        let lines = lines.iter().map(|(n, name)| format!("{} {name}\n", id(*n)));
        lines.collect::<String>().into_bytes()
    };
    let shown = show(&[
        (1, "HEAD"),
        (2, "refs/heads/main"),
        (3, "refs/tags/v1"),
        (4, "refs/tags/v1^{}"),
        (1, "refs/tags/v2"),
    ]);
    let stash = [id(5).to_string()];
    assert_eq!(
        order::all_refs(&shown, &stash),
        Some(vec![id(2), id(4), id(1), id(1), id(5)])
    );
    let head_tag = show(&[(1, "HEAD"), (6, "HEAD^{}"), (2, "refs/heads/main")]);
    assert_eq!(order::all_refs(&head_tag, &[]), Some(vec![id(2), id(6)]));
    for odd in [
        show(&[(2, "refs/heads/main"), (1, "HEAD")]),
        show(&[(4, "refs/tags/v1^{}")]),
        show(&[
            (3, "refs/tags/v1"),
            (2, "refs/heads/main"),
            (4, "refs/tags/v1^{}"),
        ]),
        b"0123 refs/heads/short\n".to_vec(),
    ] {
        assert_eq!(
            order::all_refs(&odd, &[]),
            None,
            "{}",
            String::from_utf8_lossy(&odd)
        );
    }
}

/// The refs `--all` starts from, listed in-process as git lists them: branches packed and
/// loose, a symbolic ref, tags of tags and of a blob (left out, as git leaves them), HEAD
/// detached at a commit no ref names; then with a second worktree, whose HEAD `--all` adds
/// too (git lists the tips there). Every commit has the same date, so their order is the
/// tips' order alone.
#[test]
fn the_refs_all_starts_from_are_listed_alike() {
    let tmp = init();
    let d = tmp.path();
    for i in 0..3 {
        write(d, "a", &i.to_string());
        commit(d, &format!("c{i}"));
    }
    g(d, &["checkout", "-q", "-b", "z-side", "HEAD~2"]);
    commit(d, "side");
    g(d, &["checkout", "-q", "main"]);
    g(d, &["tag", "-a", "-m", "t", "v0", "z-side"]);
    g(d, &["tag", "-a", "-m", "tt", "v0-again", "v0"]);
    g(d, &["tag", "-a", "-m", "blob", "a-blob", "HEAD:a"]);
    g(
        d,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/heads/z-side",
        ],
    );
    g(d, &["pack-refs", "--all"]);
    g(d, &["branch", "loose", "HEAD~1"]);
    g(d, &["checkout", "-q", "--detach"]);
    commit(d, "detached");
    assert_eq!(assert_listed_alike(&opts(d)), 5);
    let wt = tempfile::tempdir().unwrap();
    let wt = wt.path().join("wt");
    g(
        d,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            wt.to_str().unwrap(),
            "z-side",
        ],
    );
    commit(&wt, "in the worktree");
    assert_eq!(assert_listed_alike(&opts(d)), 6);
}

#[test]
fn a_shallow_clone_is_listed_in_process_with_its_parents_cut() {
    let tmp = init();
    let d = tmp.path();
    for i in 0..5 {
        write(d, "a", &i.to_string());
        commit(d, &format!("c{i}"));
    }
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", d.display());
    g(
        clone.path(),
        &["clone", "-q", "--bare", "--depth", "2", &url, "s.git"],
    );
    let o = opts(&clone.path().join("s.git"));
    assert_eq!(assert_listed_alike(&o), 2);
    assert_eq!(listed(&o, 2)[0].1, None, "the shallow commit has no parent");
}

#[test]
fn a_grafts_file_leaves_the_listing_to_git_and_a_missing_commit_is_cut() {
    let tmp = init();
    let d = tmp.path();
    let first = {
        write(d, "a", "1");
        commit(d, "one")
    };
    write(d, "a", "2");
    let second = commit(d, "two");
    write(d, "a", "3");
    commit(d, "three");
    let listed_by_git = |o: &HistoryOptions| {
        let o = HistoryOptions {
            list_threads: 2,
            ..o.clone()
        };
        let store = Arc::new(ObjectStore::new(&o.repo));
        let (list, _) = walk::commits(&o.repo, start(&o, &store).unwrap().listing).unwrap();
        list.is_some()
    };
    assert!(!listed_by_git(&opts(d)));
    // A graft makes `two` a root: git's answer.
    std::fs::write(d.join(".git/info/grafts"), format!("{second}\n")).unwrap();
    assert!(listed_by_git(&opts(d)));
    std::fs::remove_file(d.join(".git/info/grafts")).unwrap();
    // `one` gone: cut in-process (tests/history_edges.rs); git's walk dies.
    let loose = d.join(format!(".git/objects/{}/{}", &first[..2], &first[2..]));
    std::fs::remove_file(loose).unwrap();
    assert!(!listed_by_git(&opts(d)));
    let error = enumerate(&opts(d), |_| true).unwrap_err().to_string();
    assert!(error.contains(&first), "{error}");
}

/// A commit git refuses to print with `%aI` (an author date before the epoch in its zone)
/// is listed, in-process and by git (named revisions), with its date in UTC; git is asked
/// for the fields of another encoding.
#[test]
fn a_commit_git_refuses_to_print_does_not_stop_the_listing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    g(d, &["init", "-q", "--bare"]);
    let tree = g(d, &["hash-object", "-t", "tree", "-w", "--stdin"]);
    let object = |text: Vec<u8>| {
        let out = git_with_input(
            d,
            &[
                "hash-object",
                "-t",
                "commit",
                "-w",
                "--literally",
                "--stdin",
            ],
            &text,
        );
        String::from_utf8(out.unwrap()).unwrap().trim().to_string()
    };
    let refused = object(
        format!("tree {tree}\nauthor Eve <e@example.com> 0 -0100\ncommitter Eve <e@example.com> 0 -0100\n\nrefused\n")
            .into_bytes(),
    );
    let mut latin = format!("tree {tree}\nparent {refused}\nauthor Zo").into_bytes();
    latin.extend_from_slice(b"\xeb <z@example.com> 1700000000 +0100\ncommitter Z <z@example.com> 1700000000 +0100\nencoding ISO-8859-1\n\nlatin\n");
    let latin = object(latin);
    let plain = object(
        format!("tree {tree}\nparent {latin}\nauthor Ann <a@example.com> 1700000100 +0000\ncommitter Ann <a@example.com> 1700000100 +0000\n\nplain\n")
            .into_bytes(),
    );
    g(d, &["update-ref", "refs/heads/main", &plain]);
    let o = opts(d);
    let fields = |c: &(Oid, Option<Oid>, bool, Oid, CommitInfo)| {
        let i = &c.4;
        [&i.author_name, &i.author_email, &i.author_date, &i.summary].map(|f| f.to_string())
    };
    let in_process = listed(&o, 2);
    assert_eq!(
        in_process.iter().map(fields).collect::<Vec<_>>(),
        [
            ["Eve", "e@example.com", "1970-01-01T00:00:00Z", "refused"],
            ["Zoë", "z@example.com", "2023-11-14T23:13:20+01:00", "latin"],
            ["Ann", "a@example.com", "2023-11-14T22:15:00Z", "plain"],
        ]
        .map(|f| f.map(str::to_string))
    );
    assert_eq!(in_process[0].0.to_string(), refused);
    // git lists it too: the walk asks for raw dates, on which git never dies.
    assert_eq!(listed(&o, 0), in_process);
    let named = HistoryOptions {
        revs: vec!["main".into()],
        ..o
    };
    assert_eq!(listed(&named, 0), in_process);
}
