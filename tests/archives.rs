//! Archives made by real tools (`zip`, `tar`, `gzip`), scanned member by
//! member through the real binary: `ARCHIVE!MEMBER` paths, member line
//! numbers, nesting, hostile archives skipped with a reason.

mod common;

use std::fs;
use std::process::Command;

use common::{hostile, many_members, python3, sh, spaces_then_a_token, token, Tree};

/// A tree with `src/` holding two files with secrets.
fn sources(t: &Tree) {
    t.write(
        "src/app.properties",
        format!("# app\nname=x\ntoken={}\n", token(1)),
    );
    t.write("src/notes.txt", format!("T={}\n", token(2)));
}

#[test]
fn zip_jar_in_zip_tar_gz_and_gzip_members_are_scanned_with_their_paths() {
    let t = Tree::new();
    sources(&t);
    sh(
        t.path(),
        "cd src && zip -q ../app.zip app.properties notes.txt && cd .. \
         && cp app.zip lib.jar && zip -q outer.zip lib.jar \
         && tar czf src.tar.gz src \
         && cp src/notes.txt single.txt && gzip single.txt \
         && rm -r src app.zip lib.jar",
    );
    let r = t.run(&["scan", "--format", "json", "--threads", "2"]);
    assert_eq!(
        r.expect(1).locations(),
        [
            "outer.zip!lib.jar!app.properties:3:7:3:47",
            "outer.zip!lib.jar!notes.txt:1:3:1:43",
            "single.txt.gz!single.txt:1:3:1:43",
            "src.tar.gz!src/app.properties:3:7:3:47",
            "src.tar.gz!src/notes.txt:1:3:1:43",
        ]
    );
    // The same bytes whatever the thread count.
    let one = t
        .run(&["scan", "--format", "json", "--threads", "1"])
        .stdout;
    let eight = t
        .run(&["scan", "--format", "json", "--threads", "8"])
        .stdout;
    assert_eq!(one, eight);
    // --no-archives: they are binary files again.
    let r = t.run(&["scan", "--no-archives"]);
    r.expect(0);
    assert_eq!(r.summary_line("not scanned"), Some("not scanned: 3 binary"));
    // Too deep: the jar inside the zip is not opened at depth 1, and the
    // run is incomplete.
    let r = t.run(&["scan", "--format", "json", "--archive-depth", "1"]);
    assert_eq!(r.expect(2).locations().len(), 3);
    assert!(
        r.stderr
            .contains("outer.zip!lib.jar: archive nested too deep"),
        "{}",
        r.stderr
    );
    // 0 is no depth: refused (it was taken as 1), --no-archives says what it would mean.
    let r = t.run(&["scan", "--archive-depth", "0"]);
    r.expect(2);
    assert!(
        r.stderr
            .starts_with("error: invalid value '0' for '--archive-depth <N>': 0 is not in 1..=32"),
        "{}",
        r.stderr
    );
}

#[test]
fn hostile_archives_are_skipped_with_a_reason_and_the_rest_is_scanned() {
    let t = Tree::new();
    sources(&t);
    sh(
        t.path(),
        "python3 -c \"import zipfile; z=zipfile.ZipFile('bomb.zip','w',zipfile.ZIP_DEFLATED); \
         z.writestr('as.txt', b'a' * (8<<20)); z.writestr('ok.txt', 'fine'); z.close()\" \
         && cd src && zip -q -P secret ../enc.zip notes.txt && zip -q ../good.zip app.properties && cd .. \
         && head -c 200 good.zip > truncated.zip \
         && rm -r src",
    );
    let r = t.run(&["scan", "--format", "json", "--archive-max-bytes", "1M"]);
    // The truncated zip still holds its first member whole: found. What
    // was not read makes the run incomplete.
    assert_eq!(
        r.expect(2).locations(),
        [
            "good.zip!app.properties:3:7:3:47",
            "truncated.zip!app.properties:3:7:3:47"
        ]
    );
    for line in [
        "truncated.zip: corrupt: no central directory",
        "bomb.zip!as.txt: archive expands past the total size limit (raise --archive-max-bytes)",
        "enc.zip!notes.txt: encrypted member",
    ] {
        assert!(r.stderr.contains(line), "{line}\n{}", r.stderr);
    }
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 1 corrupt, 1 encrypted, 1 too_large (raise --archive-max-bytes)")
    );
    assert!(fs::metadata(t.join("bomb.zip")).unwrap().len() < 1 << 20);
    // --ignore-errors: the findings decide.
    t.run(&["scan", "--archive-max-bytes", "1M", "--ignore-errors"])
        .expect(1);
}

/// A highly compressible member is not a bomb: read whole, and the token
/// after it found. A bound below the archive's size ends it there, exit 2.
#[test]
fn a_compressible_member_is_read_and_a_spent_bound_fails_the_run() {
    let t = Tree::new();
    spaces_then_a_token(&t);
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["s.tgz!s.env:1"]);
    assert_eq!(r.summary_line("not read inside archives:"), None);

    let r = t.run(&["scan", "--format", "json", "--archive-max-bytes", "1M"]);
    assert_eq!(r.expect(2).path_lines(), Vec::<String>::new());
    assert!(
        r.stderr.contains(
            "scanner: warning: s.tgz!spaces.txt: archive expands past the total size limit \
             (raise --archive-max-bytes)"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 1 too_large (raise --archive-max-bytes)")
    );
    let r = t.run(&["scan", "--archive-max-run-bytes", "1M"]);
    assert_eq!(
        r.expect(2).summary_line("not read inside archives:"),
        Some("not read inside archives: 1 run_too_large (raise --archive-max-run-bytes)")
    );
    // Said even when only errors are.
    let r = t.run(&["scan", "--archive-max-bytes", "1M", "--log-level", "error"]);
    assert!(
        r.expect(2)
            .stderr
            .contains("s.tgz!spaces.txt: archive expands past"),
        "{}",
        r.stderr
    );
}

#[test]
fn members_past_the_member_limit_fail_the_run() {
    let t = Tree::new();
    many_members(&t, "m.zip", 1001);
    let r = t.run(&["scan", "--format", "json", "--archive-max-members", "1000"]);
    assert_eq!(r.expect(2).path_lines(), Vec::<String>::new());
    assert!(
        r.stderr
            .contains("m.zip: too many archive members (raise --archive-max-members)"),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 1 too_many_members (raise --archive-max-members)")
    );
    let r = t.run(&["scan", "--format", "json", "--archive-max-members", "1001"]);
    assert_eq!(r.expect(1).path_lines(), ["m.zip!s.env:1"]);
}

/// A directory past the member limit is read an entry at a time; one that ends before the
/// entries it declared (here the first entry's name length is zeroed, so the second is not
/// where the walk looks) is corrupt, not finished: the members after it were not read.
#[test]
fn a_directory_that_ends_before_its_declared_entries_fails_the_run() {
    let t = Tree::new();
    many_members(&t, "m.zip", 1001);
    let p = t.join("m.zip");
    let mut b = std::fs::read(&p).unwrap();
    let dir = b.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    b[dir + 28] = 0;
    std::fs::write(&p, b).unwrap();
    let r = t.run(&["scan", "--format", "json", "--archive-max-members", "1000"]);
    assert_eq!(r.expect(2).path_lines(), Vec::<String>::new());
    assert!(
        r.stderr
            .contains("m.zip: corrupt: the central directory ends after 1 of its 1001 entries"),
        "{}",
        r.stderr
    );
}

/// A zip cut just after its first local header's signature (a download
/// stopped at once) has no central directory and its stream ends: both are
/// said, and it is one path left unread, not two.
#[test]
fn a_zip_cut_after_its_signature_is_one_path_unread() {
    let t = Tree::new();
    t.write("c.zip", b"PK\x03\x04");
    let r = t.run(&["scan"]);
    r.expect(2);
    for line in [
        "scanner: warning: c.zip: corrupt: no central directory",
        "scanner: warning: c.zip: truncated",
    ] {
        assert!(r.stderr.contains(line), "{line}\n{}", r.stderr);
    }
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 1 corrupt, 1 truncated")
    );
    assert_eq!(
        r.summary_line("1 path"),
        Some("1 path could not be read (see the warnings above)")
    );
}

/// The default member limit, 100,000: the 100,001st member is not read.
/// About 8 s on a loaded 2-core machine: `cargo test --test archives --
/// --ignored` (docs/architecture.md, "Memory bound").
#[test]
#[ignore = "slow: writes and scans a zip of 100,001 members"]
fn the_default_member_limit_is_100_000() {
    let t = Tree::new();
    many_members(&t, "m.zip", 100_001);
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(2).path_lines(), Vec::<String>::new());
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 1 too_many_members (raise --archive-max-members)")
    );
}

/// Peak RSS in KiB of `scanner ARGS` run in the tree (Python's
/// `getrusage(RUSAGE_CHILDREN)`), and its exit status.
fn peak_rss_kib(t: &Tree, args: &[&str]) -> (u64, i32) {
    let out = Command::new("python3")
        .args([
            "-c",
            "import resource, subprocess, sys\n\
             rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, \
             stderr=subprocess.DEVNULL).returncode\n\
             print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)",
            env!("CARGO_BIN_EXE_scanner"),
        ])
        .args(args)
        .current_dir(t.path())
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    let (rss, rc) = out.trim().split_once(' ').unwrap();
    (rss.parse().unwrap(), rc.parse().unwrap())
}

/// A central directory of 30,000 entries, with the member limit at 100:
/// not parsed (it would cost ~18 MB, about 600 bytes an entry), so the peak
/// RSS is that of a scan of a one-member zip, within 8 MiB.
#[test]
fn a_directory_past_the_member_limit_is_not_parsed() {
    let t = Tree::new();
    many_members(&t, "m.zip", 30_000);
    t.write("one", "x");
    sh(t.path(), "zip -q one.zip one && rm one");
    let (base, rc) = peak_rss_kib(&t, &["scan", "one.zip"]);
    assert_eq!(rc, 0);
    let (rss, rc) = peak_rss_kib(&t, &["scan", "m.zip", "--archive-max-members", "100"]);
    assert_eq!(rc, 2);
    assert!(rss < base + 8 * 1024, "{rss} KiB against {base} KiB");
}

/// Tar members whose size field lies, read as GNU tar reads them: what
/// GNU tar extracts is scanned (the huge member holds the rest of the tar,
/// padding included: binary, found with --binary), what it skips is
/// reported, and each run exits 2 as `tar -x` does.
#[test]
fn tar_members_with_a_lying_size_are_read_as_gnu_tar_reads_them() {
    let t = Tree::new();
    let secret = format!("T={}\n", token(9));
    for size in ["0", "10", "huge"] {
        hostile(&t, "lying_tar.py", &[&format!("{size}.tar"), size, &secret]);
    }
    let r = t.run(&["scan", "--format", "json", "0.tar", "10.tar"]);
    assert_eq!(r.expect(2).path_lines(), Vec::<String>::new());
    for (tar, blocks) in [
        ("0.tar", "2 blocks after member s.env are not tar headers"),
        ("10.tar", "1 block after member s.env is not a tar header"),
    ] {
        let line = format!(
            "{tar}: corrupt: {blocks} (a member's size lies?): skipped to the next header, as GNU \
             tar does"
        );
        assert!(r.stderr.contains(&line), "{line}\n{}", r.stderr);
    }
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 2 corrupt")
    );
    assert!(r.summary_line("scanned 8 files ").is_some(), "{}", r.stderr);

    let r = t.run(&["scan", "--format", "json", "huge.tar", "--binary"]);
    assert_eq!(r.expect(2).path_lines(), ["huge.tar!s.env:2"]);
    assert!(r.stderr.contains("huge.tar: truncated"), "{}", r.stderr);
    let r = t.run(&["scan", "huge.tar"]);
    assert_eq!(
        r.expect(2).summary_line("not scanned"),
        Some("not scanned: 1 binary")
    );
}

/// The secret member's central-directory entry points outside the file:
/// found by its local header, and nothing is missing.
#[test]
fn a_zip_member_with_a_wrong_offset_is_found_by_its_local_header() {
    let t = Tree::new();
    hostile(
        &t,
        "lost_offset_zip.py",
        &["lost.zip", &format!("T={}\n", token(10))],
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).path_lines(), ["lost.zip!s.env:1"]);
    assert_eq!(r.summary_line("not read inside archives:"), None);
}

/// A zip nested 10 deep: not opened past the default depth (exit 2, the
/// flag named), found with `--archive-depth 10`.
#[test]
fn a_zip_nested_past_the_depth_limit_fails_the_run() {
    let t = Tree::new();
    t.write("s.env", format!("T={}\n", token(11)));
    sh(
        t.path(),
        "zip -q z1.zip s.env && rm s.env \
         && for i in 2 3 4 5 6 7 8 9 10; do zip -q z$i.zip z$((i-1)).zip && rm z$((i-1)).zip; done",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(2).path_lines(), Vec::<String>::new());
    assert!(
        r.stderr.contains(
            "z10.zip!z9.zip!z8.zip!z7.zip: archive nested too deep (raise --archive-depth, at most 32)"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 1 too_deep (raise --archive-depth, at most 32)")
    );
    let r = t.run(&["scan", "--format", "json", "--archive-depth", "10"]);
    assert_eq!(
        r.expect(1).path_lines(),
        ["z10.zip!z9.zip!z8.zip!z7.zip!z6.zip!z5.zip!z4.zip!z3.zip!z2.zip!z1.zip!s.env:1"]
    );
}

/// 40 nested gzip streams: every level is stack, so the depth is at most
/// 32; at 32 the innermost levels are not opened (exit 2), no overflow, and
/// the hint says how far the flag goes.
#[test]
fn deeply_nested_gzip_is_capped_not_a_stack_overflow() {
    let t = Tree::new();
    t.write("g", format!("T={}\n", token(12)));
    sh(
        t.path(),
        "for i in $(seq 40); do gzip -c g > g.gz && mv g.gz g; done",
    );
    let r = t.run(&["scan", "--archive-depth", "32", "g"]);
    assert_eq!(
        r.expect(2).summary_line("not read inside archives:"),
        Some("not read inside archives: 1 too_deep (raise --archive-depth, at most 32)")
    );
    assert!(r.summary_line("scanned 1 file ").is_some(), "{}", r.stderr);
    let r = t.run(&["scan", "--archive-depth", "1000", "g"]);
    assert!(
        r.expect(2).stderr.contains("1000 is not in 1..=32"),
        "{}",
        r.stderr
    );
}

/// `zstd --long=28` declares a 256 MiB window, over the 128 MiB the
/// reference zstd decodes by default: skipped, exit 2.
#[test]
fn a_zstd_window_over_128_mib_fails_the_run() {
    let t = Tree::new();
    t.write("k.txt", format!("T={}\n", token(13)));
    sh(t.path(), "zstd -q --long=28 -c < k.txt > k.zst && rm k.txt");
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(2).path_lines(), Vec::<String>::new());
    assert!(
        r.stderr.contains(
            "k.zst: zstd window of 256 MiB, over the 128 MiB the reference zstd decodes \
             without --long"
        ),
        "{}",
        r.stderr
    );
}

/// A zstd file is every frame in it, as `zstd -d` reads it: the token in
/// the second of two concatenated frames, and a tar after a skippable
/// frame (as pzstd writes one first), are found; a later frame whose
/// window is too large is warned about at the member (exit 2). Only the
/// first frame was read, silently, and a leading skippable frame made the
/// file binary.
#[test]
fn every_frame_of_a_zstd_file_is_read() {
    let t = Tree::new();
    t.write("a.env", "name=x\n");
    t.write("b.env", format!("T={}\n", token(18)));
    t.write("s.env", format!("T={}\n", token(19)));
    sh(
        t.path(),
        r"zstd -q -c a.env > m.env.zst && zstd -q -c b.env >> m.env.zst
         { printf '\120\052\115\030\004\000\000\000skip'; tar cf - s.env | zstd -q -c; } > p.tar.zst
         zstd -q -c a.env > w.zst && zstd -q --long=28 -c < b.env >> w.zst
         rm a.env b.env s.env",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(
        r.expect(2).locations(),
        ["m.env.zst!m.env:2:3:2:43", "p.tar.zst!s.env:1:3:1:43"]
    );
    assert!(
        r.stderr.contains(
            "scanner: warning: w.zst!w: zstd window of 256 MiB, over the 128 MiB the reference \
             zstd decodes without --long"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 1 window_too_large")
    );
}

/// A zip naming two members alike (hostile: `unzip` extracts both, the
/// second over the first) has both read: the `zip` crate keeps one entry
/// per name, and the first member's token went unreported, exit 1 for the
/// other.
#[test]
fn both_members_of_a_zip_that_names_one_twice_are_read() {
    let t = Tree::new();
    let py = format!(
        "import zipfile, warnings\n\
         warnings.simplefilter('ignore')\n\
         with zipfile.ZipFile('d.zip', 'w') as z:\n\
         \x20   z.writestr('dup.env', 'T={}\\n')\n\
         \x20   z.writestr('ok.env', 'fine\\n')\n\
         \x20   z.writestr('dup.env', 'x\\nT={}\\n')\n",
        token(20),
        token(21)
    );
    python3(&t, &["-c".as_ref(), py.as_ref()]);
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(
        r.expect(1).locations(),
        ["d.zip!dup.env:1:3:1:43", "d.zip!dup.env:2:3:2:43"]
    );
    assert_eq!(
        r.summary_line("archives:"),
        Some("archives: 1 opened, 3 members (93 B expanded)")
    );
}

/// A zip whose end record says 0xffff entries, the real count being in its
/// zip64 record (as writers that always write zip64 do), is read without a
/// warning: the check for names given twice took 65,535 for the count.
#[test]
fn a_zip64_count_behind_the_0xffff_mark_is_the_count() {
    let t = Tree::new();
    let py = format!(
        "import zipfile, struct\n\
         with zipfile.ZipFile('n.zip', 'w') as z:\n\
         \x20   z.writestr('a.env', 'T={}\\n'); z.writestr('b.txt', 'hi\\n')\n\
         d = open('n.zip', 'rb').read(); e = d.rindex(b'PK\\x05\\x06')\n\
         n, size, off = struct.unpack('<HII', d[e + 10:e + 20])\n\
         rec = struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, n, n, size, off)\n\
         loc = struct.pack('<IIQI', 0x07064b50, 0, e, 1)\n\
         end = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 0xffff, 0xffff, 2**32 - 1, 2**32 - 1, 0)\n\
         open('z64.zip', 'wb').write(d[:e] + rec + loc + end)\n",
        token(25)
    );
    python3(&t, &["-c".as_ref(), py.as_ref()]);
    fs::remove_file(t.join("n.zip")).unwrap();
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), ["z64.zip!a.env:1:3:1:43"]);
    assert_eq!(r.summary_line("not read inside archives:"), None);
}

/// A v7 tar (`tar --format=v7`, old tarballs) has no ustar magic: its first
/// header's checksum tells it, plain and gzipped. Both were skipped as
/// binary, exit 0.
#[test]
fn a_v7_tar_is_opened_plain_and_gzipped() {
    let t = Tree::new();
    t.write("a.env", format!("T={}\n", token(26)));
    sh(
        t.path(),
        "tar --format=v7 -cf v7.tar a.env && gzip -c v7.tar > v7.tgz && rm a.env",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(
        r.expect(1).locations(),
        ["v7.tar!a.env:1:3:1:43", "v7.tgz!a.env:1:3:1:43"]
    );
    assert_eq!(r.summary_line("not scanned"), None);
}

/// A jar behind a launch script (Spring Boot's "fully executable" jar) or
/// a self-extracting zip does not start with a zip's magic: a zip-family
/// name and a zip's end record at the end make it a zip. It was scanned as
/// text (the script) or skipped as binary, exit 0, its members unread. A
/// text file named `.zip` is still text.
#[test]
fn a_zip_behind_a_launch_script_is_opened() {
    let t = Tree::new();
    t.write(
        "app.properties",
        format!("name=x\ngithub.token={}\n", token(22)),
    );
    t.write("notes.zip", format!("T={}\n", token(23)));
    sh(
        t.path(),
        "zip -q inner.zip app.properties \
         && { printf '#!/bin/sh\\n'; seq 1 2000 | sed 's/^/# launch script line /'; \
              echo 'exit 0'; cat inner.zip; } > app.jar \
         && { head -c 5000 /dev/zero; cat inner.zip; } > setup.zip \
         && rm inner.zip app.properties",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(
        r.expect(1).locations(),
        [
            "app.jar!app.properties:2:14:2:54",
            "notes.zip:1:3:1:43",
            "setup.zip!app.properties:2:14:2:54",
        ]
    );
    assert_eq!(
        r.summary_line("archives:"),
        Some("archives: 2 opened, 2 members (122 B expanded)")
    );
}

/// An archive on standard input, staged or committed is opened as a file
/// is (a zip from a pipe is spooled first): they were skipped as binary,
/// exit 0.
#[test]
fn archives_on_stdin_staged_and_in_history_are_opened() {
    let t = Tree::new();
    sources(&t);
    sh(
        t.path(),
        "tar czf s.tgz -C src notes.txt && cd src && zip -q ../s.zip app.properties",
    );
    for (archive, args, found) in [
        ("s.tgz", &["-"][..], "<stdin>!notes.txt:1:3:1:43"),
        (
            "s.zip",
            &["--stdin-name", "up.zip", "-"][..],
            "up.zip!app.properties:3:7:3:47",
        ),
    ] {
        let r = common::Run::from_output(
            common::scanner_in(t.path())
                .args(["scan", "--format", "json"])
                .args(args)
                .stdin(fs::File::open(t.join(archive)).unwrap())
                .output()
                .unwrap(),
        );
        assert_eq!(r.expect(1).locations(), [found], "{archive}");
    }
    let repo = common::Repo::new();
    repo.write("lib/s.zip", fs::read(t.join("s.zip")).unwrap());
    repo.write("s.tgz", fs::read(t.join("s.tgz")).unwrap());
    repo.git(&["add", "."]);
    let want = [
        "lib/s.zip!app.properties:3:7:3:47",
        "s.tgz!notes.txt:1:3:1:43",
    ];
    let r = repo.scan(&["scan", "--staged", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), want);
    repo.commit("archives");
    let r = repo.scan(&["scan", "--history", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), want);
    assert_eq!(
        r.summary_line("archives:"),
        Some("archives: 2 opened, 2 members (103 B expanded)")
    );
}

/// A tar entry of a type tar does not know is a regular file to POSIX and
/// GNU tar ("Unknown file type 'Z', extracted as normal file"): its token
/// is found. It was passed over, exit 0. A directory entry with data is
/// still not content.
#[test]
fn a_tar_entry_of_an_unknown_type_is_read_as_a_file() {
    let t = Tree::new();
    let py = format!(
        "import tarfile, io\n\
         with tarfile.open('t.tar', 'w', format=tarfile.GNU_FORMAT) as tf:\n\
         \x20   for name, kind in (('z.env', b'Z'), ('d', tarfile.DIRTYPE)):\n\
         \x20       data = b'T={}\\n'\n\
         \x20       info = tarfile.TarInfo(name); info.size = len(data); info.type = kind\n\
         \x20       tf.fileobj.write(info.tobuf(tarfile.GNU_FORMAT))\n\
         \x20       tf.fileobj.write(data.ljust(512, b'\\0')); tf.offset += 1024\n",
        token(24)
    );
    python3(&t, &["-c".as_ref(), py.as_ref()]);
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), ["t.tar!z.env:1:3:1:43"]);
    assert_eq!(
        r.summary_line("archives:"),
        Some("archives: 1 opened, 1 member (43 B expanded)")
    );
}

/// One `.tar.gz` of 2,000 small files, one 1.5 MB log and a jar of 300
/// classes: the worker that inflates it hands the small members to the
/// others in batches. Every finding at its line, the same JSON for 1 and 4
/// threads, and with 4 threads some of the batches were stolen.
#[test]
fn a_large_archive_is_scanned_by_every_worker_with_the_same_report() {
    let t = Tree::new();
    let filler = "an ordinary line of a source file, nothing to see\n";
    let mut expected = Vec::new();
    for i in 0..2000u32 {
        let mut text = filler.repeat(40);
        if i % 100 == 7 {
            let line = (i % 37) as usize;
            text.insert_str(line * filler.len(), &format!("key = \"{}\"\n", token(i)));
            expected.push(format!("big.tar.gz!big/d{}/f{i}.txt:{}", i / 100, line + 1));
        }
        t.write(format!("big/d{}/f{i}.txt", i / 100), text);
    }
    let mut log = filler.repeat(30_000);
    log.insert_str(29_000 * filler.len(), &format!("T={}\n", token(9000)));
    t.write("big/log.txt", log);
    expected.push("big.tar.gz!big/log.txt:29001".to_string());
    for i in 0..300u32 {
        let mut text = filler.repeat(20);
        if i % 100 == 50 {
            text.push_str(&format!("secret={}\n", token(10_000 + i)));
            expected.push(format!("big.tar.gz!big/lib.jar!c/C{i}.class:21"));
        }
        t.write(format!("classes/c/C{i}.class"), text);
    }
    sh(
        t.path(),
        "cd classes && zip -qr ../big/lib.jar c && cd .. && tar czf big.tar.gz big \
         && rm -r big classes",
    );
    expected.sort();

    let one = t.run(&["scan", "--format", "json", "--threads", "1"]);
    assert_eq!(one.expect(1).path_lines(), expected);
    let stats = t.join("stats.json");
    let four = t.run(&[
        "scan",
        "big.tar.gz",
        "--format",
        "json",
        "--threads",
        "4",
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    assert_eq!(four.expect(1).stdout, one.stdout);
    let stats: serde_json::Value = serde_json::from_slice(&fs::read(&stats).unwrap()).unwrap();
    // The archive itself and its 2,301 leaves; the jar is opened, not
    // scanned as a file.
    assert_eq!(stats["files"], 2302, "{stats}");
    assert_eq!(stats["archives"]["opened"], 2, "{stats}");
    assert_eq!(stats["archives"]["members"], 2302, "{stats}");
    let tasks = &stats["scheduler"]["tasks"];
    // The archive came from the injector; its batches (2,300 small members,
    // at most 256 a batch) were spawned locally, and idle workers stole some.
    assert_eq!(tasks["injector"], 1, "{stats}");
    assert!(tasks["stolen"].as_u64().unwrap() > 0, "{stats}");
}

/// A member out of scope (`--exclude`) is not scanned, and the worker
/// walking the archive counts it once as excluded, as the walk counts an
/// excluded file: the same count and report whatever the thread count,
/// and the members beside it are scanned.
#[test]
fn members_out_of_scope_are_counted_as_excluded_at_every_thread_count() {
    let t = Tree::new();
    t.write("src/vendor/a.env", format!("T={}\n", token(3)));
    t.write("src/app/b.env", format!("T={}\n", token(4)));
    t.write("src/app/c.txt", "nothing here\n");
    sh(t.path(), "tar czf src.tar.gz src && rm -r src");
    let mut reports = Vec::new();
    for threads in ["1", "2", "16"] {
        let r = t.run(&[
            "scan",
            "--format",
            "json",
            "--exclude",
            "vendor/",
            "--threads",
            threads,
        ]);
        assert_eq!(r.expect(1).path_lines(), ["src.tar.gz!src/app/b.env:1"]);
        assert_eq!(
            r.summary_line("not scanned"),
            Some("not scanned: 1 excluded"),
            "{threads} threads: {}",
            r.stderr
        );
        reports.push(r.stdout.clone());
    }
    assert_eq!(reports[0], reports[1]);
    assert_eq!(reports[0], reports[2]);
}

/// Differential sweep against GNU tar: `s.env`'s size field set to each of
/// many values around its real size (646 bytes: 600 `x`s, a newline, the
/// token line), the block boundaries and past the end. For each, GNU tar's
/// verdict (`tar -xf`: exit status, and whether the token is in the `s.env`
/// it extracts) must be ours (exit 2 or not, and the token found or not,
/// with `--binary` since a size past the data takes padding along).
/// About 5 s: `cargo test --test archives -- --ignored`.
#[test]
#[ignore = "sweep: ~20 tars through GNU tar and the scanner"]
fn lying_tar_sizes_are_read_as_gnu_tar_reads_them_sweep() {
    let t = Tree::new();
    let secret = format!("T={}\n", token(14));
    let sizes = [
        "0", "1", "100", "511", "512", "513", "600", "640", "645", "646", "647", "1023", "1024",
        "1025", "1536", "2048", "4096", "65536", "huge",
    ];
    for size in sizes {
        let tar = format!("{size}.tar");
        hostile(&t, "lying_tar.py", &[&tar, size, &secret]);
        let out = t.join(format!("x{size}"));
        fs::create_dir(&out).unwrap();
        let gnu = Command::new("tar")
            .args(["-xf", &tar, "-C"])
            .arg(&out)
            .current_dir(t.path())
            .output()
            .unwrap();
        let gnu_found = fs::read_to_string(out.join("s.env"))
            .map(|s| s.contains(secret.trim_end()))
            .unwrap_or(false);
        let r = t.run(&["scan", "--format", "json", "--binary", &tar]);
        let found = r
            .findings()
            .iter()
            .any(|f| f.path == format!("{tar}!s.env"));
        assert_eq!(
            (r.code == 2, found),
            (gnu.status.code() == Some(2), gnu_found),
            "size {size}: ours (exit 2, found) against GNU tar's\n{}\n{}",
            r.stderr,
            String::from_utf8_lossy(&gnu.stderr)
        );
    }
}

/// A stream that breaks after its text (`gzip` with trailing garbage, a
/// `.gz` cut off mid-way, a zip member whose CRC fails) is reported with
/// the findings in what it yielded, and the break is warned about (exit
/// 2): the token on line 1 was lost when the break came within the first
/// chunk, or within the first 262 bytes of a compressed file.
#[test]
fn a_broken_stream_reports_the_findings_in_what_it_yielded() {
    let t = Tree::new();
    t.write("s.env", format!("T={}\n", token(15)));
    t.write("b.env", format!("T={}\n", token(16)));
    t.write("c.env", format!("T={}\n", token(17)));
    sh(
        t.path(),
        "gzip -c s.env > s.env.gz && echo garbage >> s.env.gz \
         && seq 1 20000 >> b.env && gzip -c b.env | head -c 20000 > b.env.gz \
         && xz -c s.env > s.env.xz && echo garbage >> s.env.xz \
         && rm s.env b.env",
    );
    // A stored member whose last byte changed after its CRC was written.
    python3(
        &t,
        &[
            "-c".as_ref(),
            "import zipfile\n\
             z = zipfile.ZipFile('c.zip', 'w'); z.write('c.env'); z.close()\n\
             d = bytearray(open('c.zip', 'rb').read())\n\
             i = d.index(b'\\n', d.index(b'T=gh')); d[i] = ord(' ')\n\
             open('c.zip', 'wb').write(bytes(d))"
                .as_ref(),
        ],
    );
    fs::remove_file(t.join("c.env")).unwrap();
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(
        r.expect(2).locations(),
        [
            "b.env.gz!b.env:1:3:1:43",
            "c.zip!c.env:1:3:1:43",
            "s.env.gz!s.env:1:3:1:43",
            "s.env.xz!s.env:1:3:1:43",
        ]
    );
    for line in [
        "scanner: warning: b.env.gz!b.env: truncated",
        "scanner: warning: c.zip!c.env: corrupt: Invalid checksum",
        "scanner: warning: s.env.gz!s.env: truncated",
        "scanner: warning: s.env.xz!s.env: corrupt: invalid data after stream",
    ] {
        assert!(r.stderr.contains(line), "{line}\n{}", r.stderr);
    }
    assert_eq!(
        r.summary_line("not read inside archives:"),
        Some("not read inside archives: 2 corrupt, 2 truncated")
    );
}

/// A staged archive holding a secret: the refusal's ways out named the member
/// (`git add 'bundle.zip!inner.env'`: "pathspec did not match any files";
/// `scanner baseline add --staged 'bundle.zip!inner.env:2'`: "no finding to add"), so none
/// of them worked. `git add` now names the archive, and `baseline add` scans the archive a
/// member path names and records the member's finding.
#[test]
fn a_refused_archive_gives_ways_out_that_work() {
    let r = common::Repo::new();
    r.write(".scanner.toml", "baseline = \".scanner-baseline.json\"\n");
    r.write("z/inner.env", format!("# app\nT={}\n", token(3)));
    sh(
        &r.root,
        "cd z && zip -q ../bundle.zip inner.env && cd .. && rm -r z",
    );
    r.git(&["add", "bundle.zip", ".scanner.toml"]);
    let run = r.scan(&["hook", "run"]);
    let hints: Vec<&str> = run
        .expect(1)
        .stderr
        .lines()
        .filter(|l| l.starts_with("  remove it:") || l.starts_with("  a false positive:"))
        .collect();
    assert_eq!(
        hints,
        [
            "  remove it:         edit bundle.zip!inner.env:2, then `git add bundle.zip` (and \
             revoke it if it was real)",
            "  a false positive:  append a `scanner:allow` comment to bundle.zip!inner.env:2, \
             then `git add bundle.zip`",
        ]
    );
    let run = r.scan(&["baseline", "add", "--staged", "bundle.zip!inner.env:2"]);
    run.expect(0);
    assert_eq!(
        run.stderr.lines().last(),
        Some(format!("  bundle.zip!inner.env:2  {}", common::RULE).as_str())
    );
    r.scan(&["hook", "run"]).expect(0);
    // The same from the working tree.
    std::fs::remove_file(r.path(".scanner-baseline.json")).unwrap();
    r.scan(&["baseline", "add", "bundle.zip!inner.env:2"])
        .expect(0);
    r.scan(&["scan", "bundle.zip"]).expect(0);
}

/// A member's name is its raw bytes, as a file's is: a tar member named `caf\xe9.env` (a byte
/// that is not UTF-8) was reported as `x.tar!caf\\xe9.env` with `path_bytes` null (its name
/// escaped into the path, then escaped again when shown), the same path as a member literally
/// named `caf\xe9.env`. Now the JSON report has the lossy path and the exact bytes in
/// `path_bytes`, as for a plain file, the literal name keeps `path_bytes` null, and the text
/// report and the warnings show each name escaped once.
#[cfg(unix)]
#[test]
fn a_member_name_that_is_not_utf8_is_exact_as_a_file_name_is() {
    use base64::Engine as _;
    let t = Tree::new();
    let script = format!(
        "import tarfile, io\n\
         data = b'T={}\\n'\n\
         for name, out in [(b'caf\\xe9.env', 'x.tar'), (b'caf\\\\xe9.env', 'y.tar')]:\n\
         \x20   with tarfile.open(out, 'w', format=tarfile.GNU_FORMAT, encoding='utf-8', errors='surrogateescape') as t:\n\
         \x20       i = tarfile.TarInfo(name.decode('utf-8', 'surrogateescape')); i.size = len(data)\n\
         \x20       t.addfile(i, io.BytesIO(data))\n\
         inner = open('x.tar', 'rb').read()\n\
         with tarfile.open('z.tar', 'w', format=tarfile.GNU_FORMAT, encoding='utf-8', errors='surrogateescape') as t:\n\
         \x20   i = tarfile.TarInfo(b'caf\\xe9.tar'.decode('utf-8', 'surrogateescape')); i.size = len(inner)\n\
         \x20   t.addfile(i, io.BytesIO(inner))\n",
        token(1)
    );
    python3(&t, &["-c".as_ref(), script.as_ref()]);
    // z.tar holds x.tar as `caf\xe9.tar`, one level too deep.
    let args = ["--archive-depth", "1", "x.tar", "y.tar", "z.tar"];
    let r = t.run(&[&["scan", "--format", "json"][..], &args].concat());
    r.expect(2);
    let paths: Vec<(String, Option<Vec<u8>>)> = r
        .findings()
        .iter()
        .map(|f| {
            let raw = f
                .path_bytes
                .as_deref()
                .map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap());
            (f.path.clone(), raw)
        })
        .collect();
    assert_eq!(
        paths,
        [
            (
                "x.tar!caf\u{FFFD}.env".to_string(),
                Some(b"x.tar!caf\xe9.env".to_vec())
            ),
            ("y.tar!caf\\xe9.env".to_string(), None),
        ]
    );
    assert_eq!(
        r.stderr.lines().next(),
        Some("scanner: warning: z.tar!caf\\xe9.tar: archive nested too deep (raise --archive-depth, at most 32)")
    );
    let r = t.run(&["scan", "-q", "x.tar", "y.tar"]);
    r.expect(1);
    assert_eq!(
        r.stdout,
        "x.tar!caf\\xe9.env:1:3  github-classic-pat  ghp_…\n\
         y.tar!caf\\\\xe9.env:1:3  github-classic-pat  ghp_…\n"
    );
}
