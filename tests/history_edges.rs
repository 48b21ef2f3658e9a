//! `scanner scan --history` on the edge cases real repositories have: damaged object stores
//! and the like. (tests/history.rs holds the rest; it is near the size limit.)

mod common;

use common::{commit_at, token, Repo, Run};

fn history(r: &Repo, extra: &[&str]) -> Run {
    let mut args = vec!["scan", "--history", "--format", "json"];
    args.extend(extra);
    r.scan(&args)
}

/// The object id `rev` names.
fn rev_parse(r: &Repo, rev: &str) -> String {
    let out = r.git_out(&["rev-parse", rev]);
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Three commits, each adding a token in a file of its own; returns their ids, oldest first.
fn three_tokens(r: &Repo) -> [String; 3] {
    let mut ids = Vec::new();
    for (i, date) in ["2024-01-01", "2024-02-01", "2024-03-01"]
        .iter()
        .enumerate()
    {
        r.write(
            format!("c{i}.env"),
            format!("TOKEN={}\n", token(40 + i as u32)),
        );
        r.git(&["add", "."]);
        commit_at(r, &format!("c{i}"), &format!("{date}T00:00:00+00:00"));
        ids.push(rev_parse(r, "HEAD"));
    }
    ids.try_into().unwrap()
}

/// A commit in the middle of the history is gone (a damaged object store, a botched copy):
/// git's own walk dies on it. The commits that are there are scanned, the last one's tree
/// whole (nothing to diff it against), the missing commit is named with its child, and the
/// exit status is 2.
#[test]
fn a_missing_commit_is_named_and_the_commits_that_are_there_are_scanned() {
    let r = Repo::new();
    let [_, middle, last] = three_tokens(&r);
    std::fs::remove_file(r.path(format!(".git/objects/{}/{}", &middle[..2], &middle[2..])))
        .unwrap();

    let run = history(&r, &[]);
    run.expect(2);
    // c0.env and c1.env are in the last commit's tree: found there.
    assert_eq!(run.path_lines(), ["c0.env:1", "c1.env:1", "c2.env:1"]);
    assert!(run
        .findings()
        .iter()
        .all(|f| f.commit.as_ref().unwrap().id == last));
    assert!(
        run.stderr.contains(&format!(
            "scanner: warning: .: commit {middle}, a parent of {last}, is missing or corrupt: \
             the history behind it is not scanned (`git fsck` names what is damaged)\n"
        )),
        "{}",
        run.stderr
    );
}

/// The same where the commit is packed and its bytes are damaged: the scanner reads the
/// commits at the front of the pack itself, and leaves the one it cannot read to the walk.
#[test]
fn a_corrupt_packed_commit_is_named_and_the_commits_that_are_there_are_scanned() {
    let r = Repo::new();
    let [_, middle, last] = three_tokens(&r);
    damage_packed(&r, &middle);

    let run = history(&r, &[]);
    run.expect(2);
    assert_eq!(run.path_lines(), ["c0.env:1", "c1.env:1", "c2.env:1"]);
    assert!(run
        .findings()
        .iter()
        .all(|f| f.commit.as_ref().unwrap().id == last));
    assert!(
        run.stderr.contains(&format!(
            "scanner: warning: .: commit {middle}, a parent of {last}, is missing or corrupt: \
             the history behind it is not scanned (`git fsck` names what is damaged)\n"
        )),
        "{}",
        run.stderr
    );
}

/// Packs every object and damages the deflate stream of the commit `id`.
fn damage_packed(r: &Repo, id: &str) {
    r.git(&["repack", "-adq"]);
    let pack = std::fs::read_dir(r.path(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let verify = r.git_out(&[
        "verify-pack",
        "-v",
        pack.with_extension("idx").to_str().unwrap(),
    ]);
    let verify = String::from_utf8(verify.stdout).unwrap();
    // `<id> commit <size> <size in pack> <offset>`: the middle of its deflate stream.
    let line: Vec<&str> = verify
        .lines()
        .find(|l| l.starts_with(id))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(line[..2], [id, "commit"], "{line:?}");
    let (in_pack, offset): (usize, usize) = (line[3].parse().unwrap(), line[4].parse().unwrap());
    let mut bytes = std::fs::read(&pack).unwrap();
    for b in &mut bytes[offset + in_pack / 2..offset + in_pack / 2 + 4] {
        *b ^= 0x5a;
    }
    std::fs::write(&pack, bytes).unwrap();
}

/// Where git lists the commits (`--range`), its walk dies on a missing or damaged commit:
/// the error names that commit (not the pack it is in), and the exit status is 2.
#[test]
fn where_git_lists_the_commits_a_missing_or_corrupt_one_is_the_object_named() {
    let r = Repo::new();
    let [_, middle, _] = three_tokens(&r);
    let loose = r.path(format!(".git/objects/{}/{}", &middle[..2], &middle[2..]));
    let bytes = std::fs::read(&loose).unwrap();
    std::fs::remove_file(&loose).unwrap();
    let prefix = format!("scanner: error: .: object {middle} is missing or corrupt (");
    let run = history(&r, &["--range", "HEAD"]);
    run.expect(2);
    assert!(run.stderr.starts_with(&prefix), "{}", run.stderr);

    std::fs::write(&loose, bytes).unwrap();
    damage_packed(&r, &middle);
    let run = history(&r, &["--range", "HEAD"]);
    run.expect(2);
    assert!(run.stderr.starts_with(&prefix), "{}", run.stderr);
}

/// A line added just before the secret's line and one just after it, in the same version:
/// the secret's line is kept between two edits, and reported once, at the commit that
/// added it (its later version counts it as unchanged).
#[test]
fn a_secret_between_two_edits_a_line_away_is_reported_once() {
    let r = Repo::new();
    let secret = format!("TOKEN={}", token(45));
    r.write("app.env", format!("a=1\nb=2\n{secret}\n"));
    r.git(&["add", "."]);
    commit_at(&r, "add", "2024-01-01T00:00:00+00:00");
    let added = rev_parse(&r, "HEAD");
    r.write("app.env", format!("a=1\nb=2\nc=3\n{secret}\nz=4\n"));
    r.git(&["add", "."]);
    commit_at(&r, "around", "2024-02-01T00:00:00+00:00");
    let around = rev_parse(&r, "HEAD");

    let run = history(&r, &["-v"]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["app.env:3:7:3:47"]);
    assert_eq!(found[0].commit.as_ref().unwrap().id, added);
    assert!(
        run.stderr.contains(&format!(
            "scanner: suppressed: app.env:4:7 (commit {around}): rule `github-classic-pat`: \
             unchanged in a later version\n"
        )),
        "{}",
        run.stderr
    );
}

/// A HEAD that names a missing object is never to be deleted as a branch is: `git
/// update-ref -d HEAD` removes a detached HEAD's file, and git then no longer sees a
/// repository at all. The advice is to point HEAD at a branch; a HEAD that is a branch
/// named already is not named again.
#[test]
fn a_broken_head_is_named_with_advice_that_keeps_the_repository() {
    let r = Repo::new();
    three_tokens(&r);
    r.git(&["checkout", "-q", "--detach"]);
    r.write("d.env", "D=1\n");
    r.git(&["add", "."]);
    commit_at(&r, "detached", "2024-04-01T00:00:00+00:00");
    let detached = rev_parse(&r, "HEAD");
    std::fs::remove_file(r.path(format!(
        ".git/objects/{}/{}",
        &detached[..2],
        &detached[2..]
    )))
    .unwrap();
    let advice = "(repair it, or point it at a branch that is there: \
                  `git symbolic-ref HEAD refs/heads/BRANCH`)";

    let run = history(&r, &[]);
    run.expect(2);
    assert_eq!(run.path_lines(), ["c0.env:1", "c1.env:1", "c2.env:1"]);
    assert_eq!(
        run.stderr.lines().next().unwrap(),
        format!(
            "scanner: warning: .: ref `HEAD` names an object the repository does not have: \
             left out, every other ref's history scanned {advice}"
        )
    );
    let by_git = history(&r, &["--reflogs"]);
    by_git.expect(2);
    assert_eq!(
        by_git.stderr.lines().next().unwrap(),
        "scanner: error: .: ref `HEAD` names an object the repository does not have, so git \
         cannot list every ref's history; repair it, or point it at a branch that is there: \
         `git symbolic-ref HEAD refs/heads/BRANCH`, or name the revisions to scan (--range)"
    );

    // HEAD on a branch whose object is missing: the branch is named, once.
    r.git(&["symbolic-ref", "HEAD", "refs/heads/gone"]);
    std::fs::write(r.path(".git/refs/heads/gone"), format!("{detached}\n")).unwrap();
    let run = history(&r, &[]);
    run.expect(2);
    assert_eq!(run.path_lines(), ["c0.env:1", "c1.env:1", "c2.env:1"]);
    assert_eq!(run.stderr.matches("ref `").count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "ref `refs/heads/gone` names an object the repository does not have: left out, \
             every other ref's history scanned (repair or delete it: \
             `git update-ref -d refs/heads/gone`)\n"
        ),
        "{}",
        run.stderr
    );
}

/// `git ARGS` with `input` on its standard input; what it printed, trimmed.
fn git_stdin(r: &Repo, args: &[&str], input: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new("git");
    common::isolate(cmd.current_dir(&r.root).args(args));
    let child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .as_ref()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A ref may name a blob or a tree instead of a commit (`git tag NAME BLOB`, as git.git
/// keeps its maintainer's key): a clone carries it as it carries every ref, though no
/// commit holds it. Each such blob is scanned, reported at the ref's name (under a tree,
/// the ref's name and the path there) without a commit; a blob a commit holds too is
/// reported once, at the commit. Named revisions (`--range`) leave the refs out.
#[test]
fn blobs_and_trees_a_ref_names_without_a_commit_are_scanned() {
    let r = Repo::new();
    let [_, _, last] = three_tokens(&r);
    let blob = |text: String| git_stdin(&r, &["hash-object", "-w", "--stdin"], &text);
    let key = blob(format!("KEY={}\n", token(50)));
    r.git(&["tag", "key", &key]);
    let signed = blob(format!("x\nKEY={}\n", token(51)));
    r.git(&["tag", "-a", "-m", "a tag of a blob", "signed-key", &signed]);
    // The last commit's c2.env again: reported once, at its commit.
    r.git(&["tag", "again", &rev_parse(&r, "HEAD:c2.env")]);
    let inner = blob(format!("T={}\n", token(52)));
    let conf = git_stdin(&r, &["mktree"], &format!("100644 blob {inner}\ta.env\n"));
    let tree = git_stdin(&r, &["mktree"], &format!("040000 tree {conf}\tconf\n"));
    r.git(&["update-ref", "refs/trees/t", &tree]);

    let run = history(&r, &[]);
    run.expect(1);
    assert_eq!(
        run.path_lines(),
        [
            "c0.env:1",
            "c1.env:1",
            "c2.env:1",
            "refs/tags/key:1",
            "refs/tags/signed-key:2",
            "refs/trees/t/conf/a.env:1"
        ]
    );
    for f in run.findings() {
        let by_ref = f.path.starts_with("refs/");
        assert_eq!(f.commit.is_none(), by_ref, "{f:?}");
        if f.path == "c2.env" {
            assert_eq!(f.commit.unwrap().id, last);
        }
    }
    assert!(
        run.summary_line("scanned 6 blobs of 3 commits").is_some(),
        "{}",
        run.stderr
    );
    let named = history(&r, &["--range", "HEAD"]);
    named.expect(1);
    assert_eq!(named.path_lines(), ["c0.env:1", "c1.env:1", "c2.env:1"]);
}

/// git's stderr, relayed in an error, is one line: its lines joined with `; `, not escaped
/// `\n`s (git's own advice, such as safe.directory's, reads as it should).
#[test]
fn gits_reason_is_relayed_on_one_line() {
    let r = Repo::new();
    let [_, middle, _] = three_tokens(&r);
    std::fs::remove_file(r.path(format!(".git/objects/{}/{}", &middle[..2], &middle[2..])))
        .unwrap();
    let run = history(&r, &["--range", "HEAD"]);
    run.expect(2);
    assert_eq!(
        run.stderr,
        format!(
            "scanner: error: .: object {middle} is missing or corrupt (error: Could not read \
             {middle}; fatal: revision walk setup failed); in a partial clone, fetch it first: \
             scanning never goes to the network\n"
        )
    );
}

/// A file named as the repository (a path inside it, a submodule's `.git` file) is not
/// called "not a git repository": the message says a directory is wanted.
#[test]
fn a_file_named_for_history_is_told_a_directory_is_wanted() {
    let r = Repo::new();
    three_tokens(&r);
    let run = r.scan(&["scan", "--history", "c0.env"]);
    run.expect(2);
    assert_eq!(
        run.stderr,
        "scanner: error: c0.env is a file: --history takes a repository's directory \
         (its work tree or any directory in it, or a bare repository)\n"
    );
}

/// A line cut just before the secret's line and one just after it: the lines after the
/// second cut agree further than the secret's line alone, and the secret's line, kept
/// between the two cuts, was counted changed with them. It is kept, and the secret reported
/// once, whatever the lines end with (with `\r\n`, the common suffix takes two bytes of
/// the secret's line).
#[test]
fn a_secret_between_two_cut_lines_is_reported_once() {
    for eol in ["\n", "\r\n"] {
        let r = Repo::new();
        let secret = format!("TOKEN={}", token(46));
        let lines = |l: &[&str]| l.iter().map(|l| format!("{l}{eol}")).collect::<String>();
        let tail: Vec<String> = (4..12).map(|i| format!("line {i} = value{i}")).collect();
        let tail: Vec<&str> = tail.iter().map(String::as_str).collect();
        let (one, two) = ("line 1 = value1", "line 2 = value2");
        let old = [
            &[one, two, "line 3 = value3", &secret, "added 0.48"][..],
            &tail,
        ]
        .concat();
        r.write("app.env", lines(&old));
        r.git(&["add", "."]);
        commit_at(&r, "add", "2024-01-01T00:00:00+00:00");
        let added = rev_parse(&r, "HEAD");
        r.write(
            "app.env",
            lines(&[&[one, two, &secret][..], &tail].concat()),
        );
        r.git(&["add", "."]);
        commit_at(&r, "cut around", "2024-02-01T00:00:00+00:00");
        let cut = rev_parse(&r, "HEAD");

        let run = history(&r, &["-v"]);
        let found = run.expect(1).findings();
        assert_eq!(run.locations(), ["app.env:4:7:4:47"], "{eol:?}");
        assert_eq!(found[0].commit.as_ref().unwrap().id, added);
        assert!(
            run.stderr.contains(&format!(
                "scanner: suppressed: app.env:3:7 (commit {cut}): rule `github-classic-pat`: \
                 unchanged in a later version\n"
            )),
            "{eol:?}: {}",
            run.stderr
        );
    }
}

/// A line added before the secret's line, one after the line after it, and one further
/// on: the resynchronisation that goes furthest skips the first two and the lines between
/// them (the lines after the second addition agree further than the secret's line and its
/// neighbour), and the lines it skipped that are the same in both versions are kept. The
/// secret is reported once. (Lines of a file a random edit sequence made.)
#[test]
fn a_secret_between_two_added_lines_a_line_apart_is_reported_once() {
    let r = Repo::new();
    let secret = format!("TOKEN14009={}", token(48));
    // A line as long as a token's, that is none.
    let other = |n: u32| format!("NOTE{n}={}", "x".repeat(41));
    let text = |lines: &[&str]| -> String {
        lines
            .iter()
            .map(|l| match *l {
                "T" => format!("{secret}\n"),
                "N0" | "N1" | "N3" => format!("{}\n", other(l[1..].parse().unwrap())),
                _ => format!("{l}\n"),
            })
            .collect()
    };
    let head = [
        "N0",
        "line 0 = value0",
        "added 0.19239024305678054",
        "N1",
        "added 0.0279974055418043",
        "changed 0.4890542157252943",
        "added 0.04279552123261643",
        "changed 0.8046142858138362",
        "line 2 = value2",
        "changed 0.4847388476002358",
    ];
    let (after, tail) = (
        "changed 0.8413972124258345",
        [
            "added 0.865453128631166",
            "changed 0.09485423010869665",
            "line 4 = value4",
            "added 0.2645463882565623",
            "N3",
        ],
    );
    let old = [
        &head[..],
        &["T", after],
        &tail,
        &["changed 0.4251886791023419"],
    ]
    .concat();
    let new = [
        &head[..],
        &[
            "changed 0.42940755537840414",
            "T",
            after,
            "added 0.545942012620314",
        ],
        &tail,
        &["added 0.03155344908915236", "changed 0.4251886791023419"],
    ]
    .concat();
    r.write("app.env", text(&old));
    r.git(&["add", "."]);
    commit_at(&r, "add", "2024-01-01T00:00:00+00:00");
    let added = rev_parse(&r, "HEAD");
    r.write("app.env", text(&new));
    r.git(&["add", "."]);
    commit_at(&r, "around", "2024-02-01T00:00:00+00:00");
    let around = rev_parse(&r, "HEAD");

    let run = history(&r, &["-v"]);
    let found = run.expect(1).findings();
    assert_eq!(run.locations(), ["app.env:11:12:11:52"]);
    assert_eq!(found[0].commit.as_ref().unwrap().id, added);
    assert!(
        run.stderr.contains(&format!(
            "scanner: suppressed: app.env:12:12 (commit {around}): rule `github-classic-pat`: \
             unchanged in a later version\n"
        )),
        "{}",
        run.stderr
    );
}

/// `scanner scan --history .` where git is not installed (not on PATH) printed
/// "`git log -g refs/stash`: No such file or directory (os error 2): No such file or
/// directory (os error 2)", which reads as a missing file, twice. It names git once, as a
/// remote clone does; so does the warning about one repository of a directory of them.
#[test]
fn a_history_without_git_names_git() {
    let r = Repo::new();
    r.write("a.env", format!("TOKEN={}\n", token(1)));
    r.git(&["add", "."]);
    r.commit("add");
    let without_git = |dir: &std::path::Path, arg: &str| {
        Run::from_output(
            common::scanner_in(dir)
                .env("PATH", dir.join("no-bin"))
                .args(["scan", "-q", "--history", arg])
                .output()
                .unwrap(),
        )
    };
    let cannot_run = "cannot run `git log -g refs/stash` (is git installed?): \
                      No such file or directory (os error 2)";
    let run = without_git(&r.root, ".");
    run.expect(2);
    assert_eq!(run.stderr, format!("scanner: error: .: {cannot_run}\n"));
    let top = tempfile::tempdir().unwrap();
    common::git_in(
        top.path(),
        &["clone", "-q", r.root.to_str().unwrap(), "alpha"],
    );
    let run = without_git(top.path(), ".");
    run.expect(2);
    assert_eq!(
        run.stderr,
        format!("scanner: warning: ./alpha: {cannot_run}\n")
    );
}
