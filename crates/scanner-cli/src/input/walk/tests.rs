use super::*;

fn run(root: &Path, opts: &WalkOptions) -> (Vec<String>, SkipCounts, Vec<String>) {
    run_in(root, opts, &Scope::default())
}

fn excluding(globs: &[&str]) -> Scope {
    let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
    Scope::new(&std::env::current_dir().unwrap(), &globs, None, None).unwrap()
}

fn run_in(
    root: &Path,
    opts: &WalkOptions,
    scope: &Scope,
) -> (Vec<String>, SkipCounts, Vec<String>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let skips = walk(
        &[root.to_path_buf()],
        opts,
        scope,
        |p| {
            files.push(
                p.provenance
                    .path
                    .strip_prefix(root)
                    .unwrap()
                    .display()
                    .to_string(),
            );
            true
        },
        |w| warnings.push(format!("{}: {}", w.path.display(), w.reason)),
    )
    .unwrap();
    files.sort();
    (files, skips, warnings)
}

fn write(root: &Path, rel: &str, data: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, data).unwrap();
}

#[test]
fn ignore_files_hidden_files_and_git_dir() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, ".gitignore", "*.log\nbuild/\n");
    write(r, ".scannerignore", "skip.txt\n");
    write(r, ".env", "x");
    write(r, "a.log", "x");
    write(r, "skip.txt", "x");
    write(r, "build/out/a.txt", "x");
    write(r, "build/out/b.txt", "x");
    write(r, "src/main.rs", "x");
    write(r, "src/deep.log", "x");
    write(r, ".git/config", "x");
    let (files, skips, warnings) = run(r, &WalkOptions::default());
    assert_eq!(
        files,
        [".env", ".gitignore", ".scannerignore", "src/main.rs"]
    );
    // a.log, skip.txt, build/ (once), src/deep.log
    assert_eq!(skips.get(Skip::Ignored), 4);
    assert_eq!(skips.total(), 4);
    assert!(warnings.is_empty(), "{warnings:?}");

    let opts = WalkOptions {
        no_ignore: true,
        ..Default::default()
    };
    let (files, skips, _) = run(r, &opts);
    assert_eq!(files.len(), 9, "{files:?}");
    assert_eq!(skips.total(), 0);
}

/// The raw listing counts what `fs::read_dir` lists: files, hidden
/// files, directories, links; not `.` and `..`; more entries than one
/// `getdents64` buffer holds.
#[test]
fn count_entries_counts_what_read_dir_lists() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    assert_eq!(count_entries(r), 0);
    for i in 0..700 {
        write(
            r,
            &format!("a-rather-long-file-name-to-fill-the-buffer-{i}.txt"),
            "x",
        );
    }
    write(r, ".hidden", "x");
    write(r, "sub/x", "x");
    #[cfg(unix)]
    std::os::unix::fs::symlink("missing", r.join("broken")).unwrap();
    let listed = fs::read_dir(r).unwrap().count() as u64;
    assert_eq!(listed, if cfg!(unix) { 703 } else { 702 });
    assert_eq!(count_entries(r), listed);
    assert_eq!(count_entries(&r.join("no-such-dir")), 0);
}

#[test]
fn excludes_are_counted() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "a.txt", "x");
    write(r, "b.min.js", "x");
    write(r, "vendor/x/y.txt", "x");
    write(r, "vendor/z.txt", "x");
    let scope = excluding(&["*.min.js", "vendor/"]);
    let (files, skips, _) = run_in(r, &WalkOptions::default(), &scope);
    assert_eq!(files, ["a.txt"]);
    assert_eq!(skips.get(Skip::Excluded), 2);
    assert_eq!(skips.get(Skip::Ignored), 0);
}

#[test]
fn explicit_files_under_an_excluded_directory_are_excluded() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "vendor/lib/a.js", "x");
    write(r, "src/b.js", "x");
    let mut files = Vec::new();
    let skips = walk(
        &[r.join("vendor/lib/a.js"), r.join("src/b.js")],
        &WalkOptions::default(),
        &excluding(&["vendor/"]),
        |p| {
            files.push(p.provenance.path);
            true
        },
        |w| panic!("{w:?}"),
    )
    .unwrap();
    assert_eq!(files, [r.join("src/b.js")]);
    assert_eq!(skips.get(Skip::Excluded), 1);
}

#[cfg(unix)]
#[test]
fn symlinks() {
    use std::os::unix::fs::symlink;
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "d/a.txt", "x");
    symlink("../d", r.join("d/loop")).unwrap();
    symlink("a.txt", r.join("d/link.txt")).unwrap();
    symlink("missing", r.join("d/broken")).unwrap();
    let (files, skips, warnings) = run(r, &WalkOptions::default());
    assert_eq!(files, ["d/a.txt"]);
    assert_eq!(skips.get(Skip::SymlinkNotFollowed), 2);
    assert_eq!(skips.get(Skip::SymlinkBroken), 1);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("broken symbolic link"), "{warnings:?}");

    let opts = WalkOptions {
        follow: true,
        ..Default::default()
    };
    let (files, skips, warnings) = run(r, &opts);
    // `d/link.txt` is `d/a.txt`: scanned once, under the first path met.
    assert_eq!(files, ["d/a.txt"]);
    assert_eq!(skips.get(Skip::Duplicate), 1);
    assert_eq!(skips.get(Skip::SymlinkLoop), 1);
    assert_eq!(skips.get(Skip::SymlinkBroken), 1);
    assert_eq!(skips.get(Skip::Ignored), 0, "{skips:?}");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}

/// A FIFO `fifo` and a directory `locked` (holding `secret.txt`) that only
/// root can read.
#[cfg(target_os = "linux")]
fn fifo_and_locked_dir(r: &Path) {
    use std::os::unix::fs::PermissionsExt;
    write(r, "locked/secret.txt", "x");
    let fifo = std::ffi::CString::new(r.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    fs::set_permissions(r.join("locked"), fs::Permissions::from_mode(0o000)).unwrap();
}

/// What walking `roots` yields and warns about, in order, and its skip
/// counts; by the `ignore` walk when `force_ignore_walk`.
#[cfg(target_os = "linux")]
fn trace(
    roots: &[PathBuf],
    opts: &WalkOptions,
    scope: &Scope,
    force_ignore_walk: bool,
) -> (Vec<String>, Vec<String>, String) {
    FORCE_IGNORE_WALK.with(|f| f.set(force_ignore_walk));
    let mut events = Vec::new();
    let mut warnings = Vec::new();
    let skips = walk(
        roots,
        opts,
        scope,
        |i| {
            events.push(i.provenance.path.display().to_string());
            true
        },
        |w| warnings.push(format!("{}: {} {}", w.path.display(), w.reason, w.is_error)),
    )
    .unwrap();
    FORCE_IGNORE_WALK.with(|f| f.set(false));
    (events, warnings, format!("{skips:?}"))
}

/// What [`walk_split`] and the [`DirTask`]s it hands out come to, each
/// task listed in turn (last handed out, first listed, as a worker's own
/// deque runs them), in [`trace`]'s form with the files and warnings sorted:
/// the order is the workers' to choose.
#[cfg(target_os = "linux")]
fn split_trace(
    roots: &[PathBuf],
    opts: &WalkOptions,
    scope: &Scope,
) -> (Vec<String>, Vec<String>, String) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let mut pending = Vec::new();
    let warning = |w: WalkWarning| format!("{}: {} {}", w.path.display(), w.reason, w.is_error);
    let mut skips = walk_split(
        roots,
        opts,
        scope,
        |i| {
            files.push(i.provenance.path.display().to_string());
            true
        },
        |d| {
            pending.push(d);
            true
        },
        |w| warnings.push(warning(w)),
    )
    .unwrap();
    while let Some(dir) = pending.pop() {
        let listing = dir.list(opts, scope);
        skips.merge(&listing.skips);
        let listed = &listing.files;
        files.extend(
            (0..listed.len()).map(|i| listed.item(i).provenance.path.display().to_string()),
        );
        warnings.extend(listing.warnings.into_iter().map(warning));
        pending.extend(listing.dirs);
    }
    sorted(&(files, warnings, format!("{skips:?}")))
}

#[cfg(target_os = "linux")]
fn sorted(trace: &(Vec<String>, Vec<String>, String)) -> (Vec<String>, Vec<String>, String) {
    let (mut files, mut warnings, skips) = trace.clone();
    files.sort();
    warnings.sort();
    (files, warnings, skips)
}

/// With `--no-ignore` the plain walk yields, skips, counts and warns
/// exactly as the `ignore` walk does, in the same order: hidden files,
/// `.git` (directory and file), excludes, links (good, broken, to a
/// directory), a FIFO, an unreadable directory, roots with a trailing `/` and a file.
#[cfg(target_os = "linux")]
#[test]
fn plain_walk_is_the_ignore_walk() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    for i in 0..40 {
        write(r, &format!("d{}/e{}/f{i}.txt", i % 3, i % 5), "x");
    }
    write(r, ".env", "x");
    write(r, ".gitignore", "*\n");
    write(r, ".git/config", "x");
    write(r, "sub/.git", "gitdir: ../.git");
    write(r, "vendor/x.js", "x");
    write(r, "a.min.js", "x");
    symlink("d0", r.join("dirlink")).unwrap();
    symlink(".env", r.join("envlink")).unwrap();
    symlink("missing", r.join("broken")).unwrap();
    fifo_and_locked_dir(r);
    let locked_readable = fs::read_dir(r.join("locked")).is_ok(); // root reads anything
    let scope = Scope::new(r, &["vendor/".into(), "*.min.js".into()], None, None).unwrap();
    let roots = [r.to_path_buf(), r.join("d1/"), r.join("d2/e2/f2.txt")];
    let trace = |opts: &WalkOptions, force: bool| trace(&roots, opts, &scope, force);
    let opts = WalkOptions {
        no_ignore: true,
        ..Default::default()
    };
    let plain = trace(&opts, false);
    assert_eq!(plain, trace(&opts, true));
    assert_eq!(sorted(&plain), split_trace(&roots, &opts, &scope));
    assert_eq!(
        plain.0.len(),
        40 + 2 + 13 + 1 + usize::from(locked_readable),
        "{plain:?}"
    );
    assert_eq!(
        plain.1.len(),
        1 + usize::from(!locked_readable),
        "{plain:?}"
    );
    fs::set_permissions(r.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
}

/// A tree of nested ignore files: `.gitignore`, `.ignore` and
/// `.scannerignore` at several depths, negations (`!keep.log`,
/// `!keep.txt`, a `.scannerignore` re-including what a `.gitignore`
/// drops), `.git/info/exclude`, ignored directories and excludes.
fn nested_ignore_tree(r: &Path) {
    let ignore_files = [
        (".gitignore", "*.log\nbuild/\n!keep.log\n"),
        (".scannerignore", "secret-skip.txt\n"),
        (".git/info/exclude", "by-info.txt\n"),
        ("src/.ignore", "*.tmp\n!keep.tmp\n"),
        ("src/sub/.gitignore", "!*.log\ngen/\n"),
        ("docs/.gitignore", "*.txt\n!keep.txt\n"),
        ("vendor/.scannerignore", "!forced.log\n"),
    ];
    for (f, rules) in ignore_files {
        write(r, f, rules);
    }
    let files = "a.log keep.log app.txt by-info.txt secret-skip.txt .git/config \
        build/a.txt build/b.txt build/deep/c.txt \
        q.min.log w.min.js third_party/t.txt third_party/u.txt \
        src/x.tmp src/keep.tmp src/main.rs src/y.log \
        src/sub/trace.log src/sub/gen/g1.txt src/sub/gen/g2.txt src/sub/z.tmp \
        docs/a.txt docs/keep.txt vendor/forced.log vendor/other.log";
    for f in files.split_whitespace() {
        write(r, f, "x");
    }
}

/// Exact counts on [`nested_ignore_tree`], for each root with and
/// without excludes: the numbers the build before the one-read walk
/// (d5b9897, which listed each directory twice) reported with `scanner
/// scan --stats-json` run in the tree. An ignored directory counts once
/// (`build/`, `src/sub/gen/`), a file both ignored and excluded counts
/// as ignored (`q.min.log`), and the root's parents' ignore files apply
/// (`src/y.log`).
#[test]
fn ignored_counts_on_nested_ignore_files() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    nested_ignore_tree(r);
    let globs = ["*.min.*", "third_party/", "src/sub/gen/", "docs/keep.txt"];
    let excludes = Scope::new(r, &globs.map(String::from), None, None).unwrap();
    // (root, with excludes, files, ignored, excluded)
    let expected = [
        ("", false, 16, 11, 0),
        ("", true, 12, 11, 3),
        ("src", false, 5, 4, 0),
        ("src", true, 5, 4, 0),
        ("src/sub", false, 2, 2, 0),
        ("docs/", false, 2, 1, 0),
        ("docs/", true, 1, 1, 1),
    ];
    for (root, exclude, files, ignored, excluded) in expected {
        let scope = if exclude {
            &excludes
        } else {
            &Scope::default()
        };
        let (found, skips, warnings) = run_in(&r.join(root), &WalkOptions::default(), scope);
        let case = format!("{root:?} excludes {exclude}: {found:?} {skips:?}");
        assert_eq!(found.len(), files, "{case}");
        assert_eq!(skips.get(Skip::Ignored), ignored, "{case}");
        assert_eq!(skips.get(Skip::Excluded), excluded, "{case}");
        assert_eq!(skips.total(), ignored + excluded, "{case}");
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    let (found, _, _) = run(r, &WalkOptions::default());
    assert_eq!(
        found,
        [
            ".gitignore",
            ".scannerignore",
            "app.txt",
            "docs/.gitignore",
            "docs/keep.txt",
            "keep.log",
            "src/.ignore",
            "src/keep.tmp",
            "src/main.rs",
            "src/sub/.gitignore",
            "src/sub/trace.log",
            "third_party/t.txt",
            "third_party/u.txt",
            "vendor/.scannerignore",
            "vendor/forced.log",
            "w.min.js",
        ]
    );
}

/// Honouring ignore files, the one-read walk yields, skips, counts and
/// warns exactly as the `ignore` walk (with its second listing for
/// `ignored`) does, in the same order: [`nested_ignore_tree`] plus a
/// worktree's `.git` file whose common directory has an `info/exclude`,
/// a `.gitignore` of `*` (which drops `.git` too), bad globs above the
/// root (a warning) and below it (none), links, a FIFO and an unreadable
/// directory.
#[cfg(target_os = "linux")]
#[test]
fn one_read_walk_is_the_ignore_walk() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let t = tempfile::tempdir().unwrap();
    let top = t.path();
    write(top, ".gitignore", "bad[z-a]\n*.top\n");
    write(top, ".ignore", "also[z-a]\n");
    let r = &top.join("tree");
    nested_ignore_tree(r);
    for i in 0..30 {
        write(
            r,
            &format!(
                "d{}/e{}/f{i}.{}",
                i % 3,
                i % 5,
                ["txt", "log", "top"][i % 3]
            ),
            "x",
        );
    }
    write(r, "all/.gitignore", "*\n");
    write(r, "all/.git/config", "x");
    write(r, "all/x.txt", "x");
    write(
        r,
        "wt/.git",
        &format!("gitdir: {}\n", r.join("gitdir").display()),
    );
    write(
        r,
        "gitdir/commondir",
        &format!("{}\n", r.join("common").display()),
    );
    write(r, "common/info/exclude", "wt-excluded.txt\n");
    write(r, "wt/wt-excluded.txt", "x");
    write(r, "wt/kept.txt", "x");
    write(r, "src/.scannerignore", "in[z-a]\n");
    symlink("d0", r.join("dirlink")).unwrap();
    symlink("missing", r.join("broken")).unwrap();
    symlink("missing", r.join("broken.log")).unwrap();
    fifo_and_locked_dir(r);
    let scope = Scope::new(r, &["*.min.*".into(), "third_party/".into()], None, None).unwrap();
    let roots = [
        r.to_path_buf(),
        r.join("src/"),
        r.join("d1"),
        r.join("app.txt"),
    ];
    let trace = |force: bool| trace(&roots, &WalkOptions::default(), &scope, force);
    let one_read = trace(false);
    let ignore_walk = trace(true);
    let split = split_trace(&roots, &WalkOptions::default(), &scope);
    fs::set_permissions(r.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(one_read, ignore_walk);
    assert_eq!(sorted(&one_read), split);
    assert!(
        one_read.0.iter().any(|p| p.ends_with("wt/kept.txt")),
        "{one_read:?}"
    );
    assert!(!one_read
        .0
        .iter()
        .any(|p| p.contains("excluded") || p.contains("all/")));
    // The bad globs above the root: one warning per root walked.
    let bad = one_read.1.iter().filter(|w| w.contains("bad[z-a]")).count();
    assert_eq!(bad, 3, "{one_read:?}");
}

/// Below the depth where the plain walk stops keeping descriptors open,
/// directories are opened by their whole path: a file 70 levels down
/// is found.
#[cfg(target_os = "linux")]
#[test]
fn plain_walk_goes_deeper_than_its_open_descriptors() {
    let t = tempfile::tempdir().unwrap();
    let deep: String = (0..70).map(|i| format!("d{i}/")).collect();
    write(t.path(), &format!("{deep}f.txt"), "x");
    write(t.path(), "d0/d1/g.txt", "x");
    let opts = WalkOptions {
        no_ignore: true,
        ..Default::default()
    };
    let (files, skips, warnings) = run(t.path(), &opts);
    assert_eq!(files, [format!("{deep}f.txt"), "d0/d1/g.txt".into()]);
    assert_eq!(skips.total(), 0);
    assert!(warnings.is_empty(), "{warnings:?}");
    // Split among tasks, each directory opened by its whole path.
    let roots = [t.path().to_path_buf()];
    let (files, warnings, skips) = split_trace(&roots, &opts, &Scope::default());
    let root = t.path().display();
    assert_eq!(
        files,
        [format!("{root}/{deep}f.txt"), format!("{root}/d0/d1/g.txt")]
    );
    assert_eq!(skips, format!("{:?}", SkipCounts::default()));
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// A tree whose paths grow longer than `PATH_MAX` (4096 bytes): the serial
/// walk opens each directory by its name in its parent; a directory task,
/// which holds no descriptor, opens the path one component at a time when
/// the kernel refuses it whole. Both list the same files.
#[cfg(target_os = "linux")]
#[test]
fn a_split_walk_lists_paths_longer_than_path_max() {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let t = tempfile::tempdir().unwrap();
    let name = "n".repeat(200);
    // Made relative to each parent: the kernel refuses the whole path.
    let mut dir = plain::open_dir(None, t.path()).unwrap();
    for i in 0..25 {
        let part = std::ffi::CString::new(format!("{name}{i}")).unwrap();
        // SAFETY: an open directory and NUL-terminated names.
        unsafe {
            assert_eq!(libc::mkdirat(dir.as_raw_fd(), part.as_ptr(), 0o755), 0);
            let fd = libc::openat(dir.as_raw_fd(), part.as_ptr(), libc::O_RDONLY);
            assert!(fd >= 0);
            dir = OwnedFd::from_raw_fd(fd);
        }
        if i % 10 == 9 || i == 24 {
            let file = std::ffi::CString::new(format!("f{i}.txt")).unwrap();
            // SAFETY: as above.
            let fd = unsafe {
                libc::openat(
                    dir.as_raw_fd(),
                    file.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY,
                    0o644,
                )
            };
            assert!(fd >= 0);
            // SAFETY: a descriptor just opened.
            drop(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }
    let opts = WalkOptions {
        no_ignore: true,
        ..Default::default()
    };
    let roots = [t.path().to_path_buf()];
    let serial = sorted(&trace(&roots, &opts, &Scope::default(), false));
    assert_eq!(serial.0.len(), 3, "{serial:?}");
    assert!(serial.0.iter().any(|p| p.len() > 5000), "{serial:?}");
    assert!(serial.1.is_empty(), "{serial:?}");
    assert_eq!(split_trace(&roots, &opts, &Scope::default()), serial);
}

/// A directory that disappears between its listing in its parent and its
/// own task (or that cannot be read): a warning naming it, counted
/// unreadable, and the walk goes on.
#[cfg(target_os = "linux")]
#[test]
fn a_directory_gone_before_its_task_is_a_warning() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "a/gone/x.txt", "x");
    write(r, "a/kept.txt", "x");
    let opts = WalkOptions::default();
    let scope = Scope::default();
    let mut pending = Vec::new();
    walk_split(
        &[r.to_path_buf()],
        &opts,
        &scope,
        |_| panic!("no file root"),
        |d| {
            pending.push(d);
            true
        },
        |w| panic!("{w:?}"),
    )
    .unwrap();
    let root = pending.pop().unwrap().list(&opts, &scope);
    assert_eq!(root.dirs.len(), 1);
    assert!(root.files.is_empty());
    let a = root.dirs.into_iter().next().unwrap().list(&opts, &scope);
    assert_eq!(a.files.len(), 1);
    assert_eq!(a.dirs.len(), 1);
    fs::remove_dir_all(r.join("a/gone")).unwrap();
    let gone = a.dirs.into_iter().next().unwrap().list(&opts, &scope);
    assert!(gone.files.is_empty() && gone.dirs.is_empty());
    assert_eq!(gone.skips.get(Skip::Unreadable), 1);
    assert_eq!(gone.skips.total(), 1);
    let warnings: Vec<String> = gone
        .warnings
        .iter()
        .map(|w| format!("{}: {} {}", w.path.display(), w.reason, w.is_error))
        .collect();
    assert_eq!(
        warnings,
        [format!(
            "{}: no such file or directory true",
            r.join("a/gone").display()
        )]
    );
}

#[test]
fn file_lists() {
    assert_eq!(
        parse_file_list(b"a\r\nb c\n\nd\n"),
        [PathBuf::from("a"), "b c".into(), "d".into()]
    );
    assert_eq!(
        parse_file_list(b"a\nb\0c\0"),
        [PathBuf::from("a\nb"), "c".into()]
    );
    // UTF-16 with a byte-order mark is transcoded; one-letter names
    // separated by NULs look like UTF-16 without one, and stay names.
    assert_eq!(
        parse_file_list(b"\xff\xfea\0/\0b\0\n\0c\0"),
        [PathBuf::from("a/b"), "c".into()]
    );
    assert_eq!(
        parse_file_list(b"a\0b\0c\0d\0e\0f\0g\0h\0i\0"),
        ["a", "b", "c", "d", "e", "f", "g", "h", "i"].map(PathBuf::from)
    );
}

#[test]
fn io_reasons() {
    let e = io::Error::from_raw_os_error(13);
    assert_eq!(io_reason(&e), "permission denied");
    #[derive(Debug)]
    struct Wrapper(io::Error);
    impl std::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "IO error for operation on ./x: {}", self.0)
        }
    }
    impl std::error::Error for Wrapper {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
    let wrapped = io::Error::other(Wrapper(io::Error::from_raw_os_error(13)));
    assert_eq!(io_reason(&wrapped), "permission denied");
    assert_eq!(io_reason(&io::Error::other("Odd thing")), "odd thing");
}

/// The root's parents' ignore files are narrowed to the lines that can
/// match below the root (`rules::reach`): the walk still yields, skips and
/// counts what the `ignore` walk does, whether what is left matches names
/// only (root `a/b/c/n`: the anchored lines name other or shallower
/// directories) or whole paths (roots `a`, `a/b`: `/a/b/*.txt`,
/// `/a/*/deep/`, `/a/b/c/*.md` reach below them), with negations and a
/// `.git/info/exclude`.
#[cfg(target_os = "linux")]
#[test]
fn narrowed_parent_rules_are_the_ignore_walk() {
    let t = tempfile::tempdir().unwrap();
    let top = t.path();
    write(
        top,
        ".gitignore",
        "/a/b\n/a/b/*.txt\n/a/*/deep/\n/other/\n/a\n*.log\n!keep.log\n/a/b/c/*.md\n# c\n\n/x/*\n",
    );
    write(top, ".git/info/exclude", "/a/b/c/\n*.tmp\n");
    write(top, "a/.ignore", "/b/c/d.rs\nb/*.rs\n");
    for f in "a/b/x.txt a/b/y.log a/b/keep.log a/b/z.rs a/b/c/d.rs a/b/c/e.md a/b/c/f.tmp \
        a/b/deep/g.rs a/b/b/deep/h.rs a/q/deep/i.rs a/q/j.txt a/k.txt \
        a/b/c/n/n1.log a/b/c/n/keep.log a/b/c/n/n2.md a/b/c/n/n3.tmp a/b/c/n/n4.rs"
        .split_whitespace()
    {
        write(top, f, "x");
    }
    let scope = Scope::default();
    let mut counts = Vec::new();
    for root in ["a", "a/b", "a/b/c", "a/q", "a/b/c/", "a/b/c/n"] {
        let roots = [top.join(root)];
        let opts = WalkOptions::default();
        let plain = trace(&roots, &opts, &scope, false);
        assert_eq!(plain, trace(&roots, &opts, &scope, true), "{root}");
        assert_eq!(sorted(&plain), split_trace(&roots, &opts, &scope), "{root}");
        counts.push((root, plain.0.len()));
    }
    assert_eq!(
        counts,
        [
            ("a", 3),
            ("a/b", 2),
            ("a/b/c", 3),
            ("a/q", 1),
            ("a/b/c/", 3),
            ("a/b/c/n", 3)
        ]
    );
}

/// A root named with doubled or trailing slashes: every path found starts
/// with the root as given, in the serial walk, the `ignore` walk and the
/// split walk alike (each entry's path is cut back to its directory's
/// after it, not popped, which would tidy the root's slashes away).
#[cfg(target_os = "linux")]
#[test]
fn a_root_with_doubled_slashes_is_walked_as_given() {
    let t = tempfile::tempdir().unwrap();
    for f in ["d/a", "d/b", "d/s/c"] {
        write(t.path(), f, "x");
    }
    let roots = [PathBuf::from(format!("{}/d//", t.path().display()))];
    let (opts, scope) = (WalkOptions::default(), Scope::default());
    let plain = trace(&roots, &opts, &scope, false);
    assert_eq!(plain, trace(&roots, &opts, &scope, true));
    assert_eq!(sorted(&plain), split_trace(&roots, &opts, &scope));
    let shown = roots[0].display().to_string();
    let mut names: Vec<_> = plain
        .0
        .iter()
        .map(|p| p.strip_prefix(&shown).unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b", "s/c"], "{plain:?}");
}

/// Ignore files of the same content in several directories (compiled
/// once, `rules::Compiled`) still anchor each to its own directory:
/// `/gen/*.rs`, `sub/*.tmp` and `/top[0-9].txt` match below the directory
/// that holds the file, not below another holding the same; in the serial
/// walk, the `ignore` walk and the split walk alike, from several roots.
#[cfg(target_os = "linux")]
#[test]
fn the_same_ignore_file_in_two_directories_anchors_to_each() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let same = "/gen/*.rs\n*.log\n!keep.log\nsub/*.tmp\n/top[0-9].txt\n";
    for f in [
        "p/.gitignore",
        "p/q/.gitignore",
        "r/.ignore",
        "r/s/t/.gitignore",
    ] {
        write(r, f, same);
    }
    let files = "top1.txt gen/a.rs a.log \
        p/gen/a.rs p/x/gen/a.rs p/top1.txt p/x/top1.txt p/sub/a.tmp p/z/sub/a.tmp p/b.log \
        p/keep.log p/q/gen/a.rs p/q/top2.txt p/q/sub/a.tmp p/q/sub/sub/a.tmp \
        r/gen/b.rs r/s/gen/b.rs r/s/t/gen/b.rs r/s/t/top3.txt r/s/top3.txt r/c.log";
    for f in files.split_whitespace() {
        write(r, f, "x");
    }
    let (opts, scope) = (WalkOptions::default(), Scope::default());
    for root in ["", "p", "p/q/", "r/s", "r//s"] {
        let roots = [PathBuf::from(format!("{}/{root}", r.display()))];
        let plain = trace(&roots, &opts, &scope, false);
        assert_eq!(plain, trace(&roots, &opts, &scope, true), "{root}");
        assert_eq!(sorted(&plain), split_trace(&roots, &opts, &scope), "{root}");
    }
    let (found, skips, _) = run(r, &opts);
    assert_eq!(
        found,
        [
            "a.log",
            "gen/a.rs",
            "p/.gitignore",
            "p/keep.log",
            "p/q/.gitignore",
            "p/q/sub/sub/a.tmp",
            "p/x/gen/a.rs",
            "p/x/top1.txt",
            "p/z/sub/a.tmp",
            "r/.ignore",
            "r/s/gen/b.rs",
            "r/s/t/.gitignore",
            "r/s/top3.txt",
            "top1.txt",
        ]
    );
    assert_eq!(skips.get(Skip::Ignored), 11, "{skips:?}");
}

/// Every walked file's path lies beneath the root it is to be opened
/// beneath (`Content::WalkedFile`): the worker opens it relative to that
/// root refusing symbolic links, and falls back to a plain open, links
/// followed, for a path it cannot strip the root from. The implicit root
/// (`.`, shown without `./`) is the case to get right: its files are `a/b`,
/// beneath ``, not `.`. Walked from the test's directory (the crate's).
#[cfg(target_os = "linux")]
#[test]
fn walked_files_lie_beneath_their_root() {
    let beneath = |item: &Item| match &item.content {
        Content::WalkedFile { root } => {
            assert!(
                item.provenance.path.strip_prefix(root).is_ok(),
                "{} is not beneath {}",
                item.provenance.path.display(),
                root.display()
            );
        }
        _ => panic!("not a walked file: {}", item.provenance.path.display()),
    };
    for strip_dot in [true, false] {
        let opts = WalkOptions {
            strip_dot,
            ..Default::default()
        };
        let roots = [PathBuf::from("."), PathBuf::from("src/input")];
        let mut n = 0;
        walk(
            &roots,
            &opts,
            &Scope::default(),
            |i| {
                beneath(&i);
                n += 1;
                true
            },
            |_| {},
        )
        .unwrap();
        let mut pending = Vec::new();
        walk_split(
            &roots,
            &opts,
            &Scope::default(),
            |i| {
                beneath(&i);
                true
            },
            |d| {
                pending.push(d);
                true
            },
            |_| {},
        )
        .unwrap();
        let mut m = 0;
        while let Some(dir) = pending.pop() {
            let listing = dir.list(&opts, &Scope::default());
            for i in 0..listing.files.len() {
                beneath(&listing.files.item(i));
                m += 1;
            }
            pending.extend(listing.dirs);
        }
        assert!(n > 20 && n == m, "{n} walked, {m} listed by tasks");
    }
}

/// A path past `PATH_MAX` is cut at component boundaries into a few pieces
/// the kernel takes at once, which put back together are the path.
#[cfg(target_os = "linux")]
#[test]
fn long_paths_are_cut_into_few_pieces_under_path_max() {
    let path = PathBuf::from(format!("/{}f.txt", "dir-name/".repeat(2000)));
    let pieces = long_path_pieces(&path);
    assert_eq!(pieces.len(), 6);
    assert!(pieces.iter().all(|p| p.as_os_str().len() < 4096));
    assert_eq!(pieces.iter().collect::<PathBuf>(), path);
    assert_eq!(long_path_pieces(Path::new("a/b")), [PathBuf::from("a/b")]);
}
