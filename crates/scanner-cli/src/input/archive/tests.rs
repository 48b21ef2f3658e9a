//! Archives made by the real tools (zip, tar, gzip, bzip2, jar, Python's
//! zipfile and tarfile) in temp dirs, walked with [`walk`]: every test
//! asserts the exact leaf paths and contents and the exact skips.

use super::compressed::{single_member_name, zstd_window};
use super::zip_members::zip_directory;
use super::*;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::SeekFrom;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// Runs a shell script in `dir`; the tools it calls must exist.
fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("run sh");
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn py(dir: &Path, code: &str) {
    python3(dir, &["-c".as_ref(), code.as_ref()]);
}

/// Runs `python3 ARGS` in `dir`; it must succeed.
fn python3(dir: &Path, args: &[&std::ffi::OsStr]) {
    let out = Command::new("python3")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

type Leaves = Vec<(String, Vec<u8>)>;

/// Walks `dir/name` as a scan would: sniffed, leaves read whole.
fn walk_file(dir: &Path, name: &str, limits: Limits) -> (Leaves, ArchiveStats, Flow) {
    let mut file = File::open(dir.join(name)).unwrap();
    let mut head = Vec::new();
    (&mut file)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut head)
        .unwrap();
    file.seek(SeekFrom::Start(0)).unwrap();
    let kind = detect(name.as_bytes(), &head).expect("an archive");
    let budget = Budget::new(limits);
    let mut leaves = Vec::new();
    let flow = walk(
        kind,
        Source::Seekable(&mut file),
        &Scope::top(&budget, Path::new(name)),
        &mut |leaf, reader| {
            let mut content = Vec::new();
            reader.read_to_end(&mut content)?;
            assert_eq!(
                leaf.depth,
                leaf.path.to_str().unwrap().matches('!').count() as u32
            );
            if let Some(size) = leaf.size {
                assert_eq!(size, content.len() as u64, "{}", leaf.path.display());
            }
            leaves.push((leaf.path.to_str().unwrap().to_string(), content));
            Ok(Flow::Continue)
        },
    )
    .unwrap();
    (leaves, budget.into_stats(), flow)
}

fn leaves(expected: &[(&str, &str)]) -> Leaves {
    expected
        .iter()
        .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
        .collect()
}

fn skips(expected: &[(&str, ArchiveSkip)]) -> Vec<Skipped> {
    expected
        .iter()
        .map(|(path, reason)| Skipped {
            path: path.into(),
            reason: reason.clone(),
        })
        .collect()
}

fn counts(expected: &[(&'static str, u64)]) -> BTreeMap<&'static str, u64> {
    expected.iter().copied().collect()
}

const KEY: &str = "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n";

fn write(dir: &Path, name: &str, content: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[test]
fn zip_members_with_their_paths() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "alpha\n");
    write(dir.path(), "conf/app.properties", KEY);
    sh(dir.path(), "zip -q -r a.zip a.txt conf");
    let (got, stats, flow) = walk_file(dir.path(), "a.zip", Limits::default());
    assert_eq!(
        got,
        leaves(&[
            ("a.zip!a.txt", "alpha\n"),
            ("a.zip!conf/app.properties", KEY)
        ])
    );
    assert_eq!(stats.skipped, vec![]);
    assert_eq!((stats.archives, stats.members), (1, 2));
    assert_eq!(stats.expanded_bytes, 6 + KEY.len() as u64);
    assert_eq!(flow, Flow::Continue);
}

#[test]
fn jar_inside_a_zip_and_a_spooled_one() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c.properties", KEY);
    write(dir.path(), "readme.txt", "read me\n");
    // The JDK's jar writes its sizes in data descriptors; zip's own format
    // is the fallback on machines without a JDK.
    sh(
        dir.path(),
        "mkdir lib && if command -v jar >/dev/null; then jar cfM lib/inner.jar c.properties; \
         else zip -q lib/inner.jar c.properties; fi && zip -q -r outer.zip readme.txt lib",
    );
    let expected = leaves(&[
        ("outer.zip!readme.txt", "read me\n"),
        ("outer.zip!lib/inner.jar!c.properties", KEY),
    ]);
    let (got, stats, _) = walk_file(dir.path(), "outer.zip", Limits::default());
    assert_eq!(got, expected);
    assert_eq!(stats.skipped, vec![]);
    assert_eq!((stats.archives, stats.members), (2, 3));
    // Spooled to a temp file instead of memory: same result.
    let limits = Limits {
        spool_memory: 16,
        ..Limits::default()
    };
    let (got, stats, _) = walk_file(dir.path(), "outer.zip", limits);
    assert_eq!(got, expected);
    assert_eq!((stats.archives, stats.members), (2, 3));
}

#[test]
fn tar_compressed_every_way_with_a_gnu_long_name() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("deep/{}/key.env", "d".repeat(120));
    write(dir.path(), "a.txt", "alpha\n");
    write(dir.path(), &long, KEY);
    sh(
        dir.path(),
        "tar --format=gnu -cf t.tar a.txt deep && gzip -k t.tar && bzip2 -k t.tar && xz -k t.tar \
         && zstd -q t.tar && cp t.tar.gz t.crate",
    );
    for name in [
        "t.tar",
        "t.tar.gz",
        "t.tar.bz2",
        "t.tar.xz",
        "t.tar.zst",
        "t.crate",
    ] {
        let (got, stats, _) = walk_file(dir.path(), name, Limits::default());
        let key_path = format!("{name}!{long}");
        assert_eq!(
            got,
            leaves(&[(&format!("{name}!a.txt"), "alpha\n"), (&key_path, KEY)]),
            "{name}"
        );
        assert_eq!(stats.skipped, vec![], "{name}");
        assert_eq!(stats.members, 2, "{name}");
    }
}

#[test]
fn compressed_single_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "secret.env", KEY);
    sh(
        dir.path(),
        "gzip -k secret.env && bzip2 -k secret.env && xz -k secret.env && zstd -q secret.env",
    );
    for suffix in ["gz", "bz2", "xz", "zst"] {
        let name = format!("secret.env.{suffix}");
        let (got, stats, _) = walk_file(dir.path(), &name, Limits::default());
        assert_eq!(got, leaves(&[(&format!("{name}!secret.env"), KEY)]));
        assert_eq!((stats.skipped.len(), stats.members), (0, 1), "{name}");
    }
}

/// A member that compresses 1000x is not a bomb by itself: read whole
/// within the total bound, cut where the bound is reached.
#[test]
fn highly_compressible_member_is_read_up_to_the_total_bound() {
    let dir = tempfile::tempdir().unwrap();
    // 16 MiB of zeros deflates ~1000x to 16 KiB.
    py(
        dir.path(),
        "import zipfile\n\
         with zipfile.ZipFile('bomb.zip', 'w', zipfile.ZIP_DEFLATED) as z:\n\
         \x20   z.writestr('before.txt', 'before\\n')\n\
         \x20   z.writestr('zeros.bin', bytes(16 << 20))\n\
         \x20   z.writestr('after.txt', 'after\\n')\n",
    );
    assert!(
        std::fs::metadata(dir.path().join("bomb.zip"))
            .unwrap()
            .len()
            < 64 << 10
    );
    let (got, stats, flow) = walk_file(dir.path(), "bomb.zip", Limits::default());
    let names: Vec<_> = got.iter().map(|(p, c)| (p.as_str(), c.len())).collect();
    assert_eq!(
        names,
        [
            ("bomb.zip!before.txt", 7),
            ("bomb.zip!zeros.bin", 16 << 20),
            ("bomb.zip!after.txt", 6)
        ]
    );
    assert_eq!((stats.skipped, flow), (vec![], Flow::Continue));
    let limits = Limits {
        max_total_bytes: 4 << 20,
        ..Limits::default()
    };
    let (got, stats, flow) = walk_file(dir.path(), "bomb.zip", limits);
    assert_eq!(got, leaves(&[("bomb.zip!before.txt", "before\n")]));
    assert_eq!(
        stats.skipped,
        skips(&[("bomb.zip!zeros.bin", ArchiveSkip::TooLarge)])
    );
    assert_eq!((stats.incomplete, flow), (1, Flow::Stop));
    // The read that crossed the bound counts: at most one read past it.
    assert!(stats.expanded_bytes < 6 << 20, "{}", stats.expanded_bytes);
}

#[test]
fn tar_gz_bomb_ends_the_archive_at_the_total_bound() {
    let dir = tempfile::tempdir().unwrap();
    py(
        dir.path(),
        "import tarfile, io\n\
         class Zeros(io.RawIOBase):\n\
         \x20   def __init__(self, n): self.n = n\n\
         \x20   def readable(self): return True\n\
         \x20   def readinto(self, b):\n\
         \x20       k = min(len(b), self.n); b[:k] = bytes(k); self.n -= k; return k\n\
         with tarfile.open('bomb.tar.gz', 'w:gz') as t:\n\
         \x20   data = b'first\\n'\n\
         \x20   i = tarfile.TarInfo('first.txt'); i.size = len(data); t.addfile(i, io.BytesIO(data))\n\
         \x20   i = tarfile.TarInfo('zeros.bin'); i.size = 64 << 20; t.addfile(i, Zeros(i.size))\n\
         \x20   i = tarfile.TarInfo('last.txt'); i.size = len(data); t.addfile(i, io.BytesIO(data))\n",
    );
    let limits = Limits {
        max_total_bytes: 8 << 20,
        ..Limits::default()
    };
    let (got, stats, flow) = walk_file(dir.path(), "bomb.tar.gz", limits);
    assert_eq!(got, leaves(&[("bomb.tar.gz!first.txt", "first\n")]));
    assert_eq!(
        stats.skipped,
        skips(&[("bomb.tar.gz!zeros.bin", ArchiveSkip::TooLarge)])
    );
    assert_eq!(flow, Flow::Stop);
}

/// Two archives of one run share [`RunBytes`]: the second is cut where the
/// run's bound is reached, though its own bound is far.
#[test]
fn run_bound_is_shared_by_the_archives_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.txt", &"x".repeat(600));
    sh(dir.path(), "zip -q a.zip m.txt && cp a.zip b.zip");
    let limits = Limits {
        max_run_bytes: 1000,
        ..Limits::default()
    };
    let run = Arc::new(RunBytes::default());
    let mut got = Vec::new();
    for name in ["a.zip", "b.zip"] {
        let budget = Budget::in_run(limits.clone(), Arc::clone(&run));
        let mut file = File::open(dir.path().join(name)).unwrap();
        let scope = Scope::top(&budget, Path::new(name));
        walk(
            ArchiveKind::Zip,
            Source::Seekable(&mut file),
            &scope,
            &mut |leaf, r| {
                r.read_to_end(&mut Vec::new())?;
                got.push(leaf.path.to_str().unwrap().to_string());
                Ok(Flow::Continue)
            },
        )
        .unwrap();
        got.extend(
            budget
                .into_stats()
                .skipped
                .iter()
                .map(|s| format!("{}: {}", s.path.display(), s.reason)),
        );
    }
    assert_eq!(
        got,
        [
            "a.zip!m.txt",
            "b.zip!m.txt: the archives of this run expanded past their total size limit (raise \
             --archive-max-run-bytes)"
        ]
    );
}

#[test]
fn total_bytes_limit_ends_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["m1.txt", "m2.txt", "m3.txt"] {
        write(dir.path(), name, &"x".repeat(600));
    }
    sh(dir.path(), "zip -q big.zip m1.txt m2.txt m3.txt");
    let limits = Limits {
        max_total_bytes: 1000,
        ..Limits::default()
    };
    let (got, stats, flow) = walk_file(dir.path(), "big.zip", limits);
    assert_eq!(got, leaves(&[("big.zip!m1.txt", &"x".repeat(600))]));
    assert_eq!(
        stats.skipped,
        skips(&[("big.zip!m2.txt", ArchiveSkip::TooLarge)])
    );
    assert_eq!(flow, Flow::Stop);
}

#[test]
fn member_count_limit_ends_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["m1.txt", "m2.txt", "m3.txt"] {
        write(dir.path(), name, name);
    }
    sh(dir.path(), "zip -q many.zip m1.txt m2.txt m3.txt");
    let limits = Limits {
        max_members: 2,
        ..Limits::default()
    };
    let (got, stats, flow) = walk_file(dir.path(), "many.zip", limits);
    assert_eq!(
        got,
        leaves(&[("many.zip!m1.txt", "m1.txt"), ("many.zip!m2.txt", "m2.txt")])
    );
    assert_eq!(
        stats.skipped,
        skips(&[("many.zip", ArchiveSkip::TooManyMembers)])
    );
    assert_eq!(flow, Flow::Stop);
}

#[test]
fn truncated_zip_delivers_the_members_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "first.txt", KEY);
    write(dir.path(), "second.txt", &"s".repeat(1000));
    // Stored (-0) so that the cut lands in second.txt's data, and the
    // central directory is gone.
    sh(dir.path(), "zip -q -0 cut.zip first.txt second.txt");
    let full = std::fs::read(dir.path().join("cut.zip")).unwrap();
    let second = full.windows(10).position(|w| w == b"ssssssssss").unwrap();
    std::fs::write(dir.path().join("cut.zip"), &full[..second + 500]).unwrap();
    let (got, stats, _) = walk_file(dir.path(), "cut.zip", Limits::default());
    assert_eq!(got, leaves(&[("cut.zip!first.txt", KEY)]));
    assert_eq!(stats.skipped.len(), 2, "{:?}", stats.skipped);
    assert_eq!(stats.skipped[0].path, Path::new("cut.zip"));
    assert!(
        matches!(&stats.skipped[0].reason, ArchiveSkip::Corrupt(why) if why.starts_with("no central directory")),
        "{:?}",
        stats.skipped[0].reason
    );
    assert_eq!(
        stats.skipped[1],
        Skipped {
            path: "cut.zip!second.txt".into(),
            reason: ArchiveSkip::Truncated
        }
    );
}

#[test]
fn unsafe_names_are_scanned_and_reported_never_extracted() {
    let dir = tempfile::tempdir().unwrap();
    py(
        dir.path(),
        "import zipfile, tarfile, io\n\
         with zipfile.ZipFile('evil.zip', 'w') as z:\n\
         \x20   z.writestr('../evil.txt', 'up\\n')\n\
         \x20   z.writestr('/abs.txt', 'abs\\n')\n\
         \x20   z.writestr('ok\\x1b[2J.txt', 'esc\\n')\n\
         with tarfile.open('evil.tar', 'w') as t:\n\
         \x20   i = tarfile.TarInfo('a/../../evil.txt'); i.size = 3; t.addfile(i, io.BytesIO(b'up\\n'))\n",
    );
    let (got, stats, _) = walk_file(dir.path(), "evil.zip", Limits::default());
    assert_eq!(
        got,
        leaves(&[
            ("evil.zip!../evil.txt", "up\n"),
            ("evil.zip!/abs.txt", "abs\n"),
            // The name as stored: escaped where it is shown, as a file's (`messages::escape_path`).
            ("evil.zip!ok\x1b[2J.txt", "esc\n"),
        ])
    );
    assert_eq!(
        stats.skipped,
        skips(&[
            ("evil.zip!../evil.txt", ArchiveSkip::UnsafeName),
            ("evil.zip!/abs.txt", ArchiveSkip::UnsafeName),
        ])
    );
    let (got, stats, _) = walk_file(dir.path(), "evil.tar", Limits::default());
    assert_eq!(got, leaves(&[("evil.tar!a/../../evil.txt", "up\n")]));
    assert_eq!(
        stats.skipped,
        skips(&[("evil.tar!a/../../evil.txt", ArchiveSkip::UnsafeName)])
    );
    assert!(!dir.path().parent().unwrap().join("evil.txt").exists());
    assert!(!Path::new("/abs.txt").exists());
}

#[test]
fn encrypted_member_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plain.txt", "plain\n");
    write(dir.path(), "secret.txt", KEY);
    sh(
        dir.path(),
        "zip -q enc.zip plain.txt && zip -q -P pass enc.zip secret.txt",
    );
    let (got, stats, _) = walk_file(dir.path(), "enc.zip", Limits::default());
    assert_eq!(got, leaves(&[("enc.zip!plain.txt", "plain\n")]));
    assert_eq!(
        stats.skipped,
        skips(&[("enc.zip!secret.txt", ArchiveSkip::Encrypted)])
    );
}

#[test]
fn nesting_past_the_depth_limit_is_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "key.txt", KEY);
    sh(
        dir.path(),
        "zip -q l4.zip key.txt && zip -q l3.zip l4.zip && zip -q l2.zip l3.zip \
         && zip -q top.zip l2.zip",
    );
    let (got, stats, _) = walk_file(dir.path(), "top.zip", Limits::default());
    assert_eq!(got, vec![]);
    assert_eq!(
        stats.skipped,
        skips(&[("top.zip!l2.zip!l3.zip!l4.zip", ArchiveSkip::TooDeep)])
    );
    assert_eq!(stats.archives, 3);
    let deeper = Limits {
        max_depth: 4,
        ..Limits::default()
    };
    let (got, stats, _) = walk_file(dir.path(), "top.zip", deeper);
    assert_eq!(
        got,
        leaves(&[("top.zip!l2.zip!l3.zip!l4.zip!key.txt", KEY)])
    );
    assert_eq!((stats.skipped.len(), stats.archives), (0, 4));
}

#[test]
fn symlink_members_are_counted_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "target.txt", "target\n");
    sh(
        dir.path(),
        "ln -s /etc/passwd link.txt && ln target.txt hard.txt \
         && zip -q -y links.zip target.txt link.txt && tar -cf links.tar target.txt link.txt hard.txt",
    );
    let (got, stats, _) = walk_file(dir.path(), "links.zip", Limits::default());
    assert_eq!(got, leaves(&[("links.zip!target.txt", "target\n")]));
    assert_eq!(
        stats.skipped,
        skips(&[("links.zip!link.txt", ArchiveSkip::SymlinkMember)])
    );
    let (got, stats, _) = walk_file(dir.path(), "links.tar", Limits::default());
    assert_eq!(got, leaves(&[("links.tar!target.txt", "target\n")]));
    assert_eq!(
        stats.skipped,
        skips(&[
            ("links.tar!link.txt", ArchiveSkip::SymlinkMember),
            ("links.tar!hard.txt", ArchiveSkip::SymlinkMember),
        ])
    );
    assert_eq!(stats.skip_counts, counts(&[("symlink", 2)]));
}

#[test]
fn oversized_tar_long_name_is_refused_not_buffered() {
    let dir = tempfile::tempdir().unwrap();
    py(
        dir.path(),
        "import tarfile, io\n\
         with tarfile.open('long.tar', 'w', format=tarfile.GNU_FORMAT) as t:\n\
         \x20   i = tarfile.TarInfo('ok.txt'); i.size = 3; t.addfile(i, io.BytesIO(b'ok\\n'))\n\
         \x20   i = tarfile.TarInfo('n' * (2 << 20)); i.size = 3; t.addfile(i, io.BytesIO(b'no\\n'))\n",
    );
    let (got, stats, _) = walk_file(dir.path(), "long.tar", Limits::default());
    assert_eq!(got, leaves(&[("long.tar!ok.txt", "ok\n")]));
    assert_eq!(
        stats.skipped,
        skips(&[(
            "long.tar",
            ArchiveSkip::Corrupt("tar headers longer than 1048576 bytes".into())
        )])
    );
}

#[test]
fn corrupt_gzip_and_unsupported_zip_method_are_skips() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "key.txt", KEY);
    write(dir.path(), "plain.txt", "plain\n");
    sh(
        dir.path(),
        "printf '\\037\\213\\010\\000garbage-not-deflate' > bad.gz",
    );
    py(
        dir.path(),
        "import zipfile\n\
         with zipfile.ZipFile('bz.zip', 'w') as z:\n\
         \x20   z.write('key.txt', compress_type=zipfile.ZIP_BZIP2)\n\
         \x20   z.write('plain.txt')\n",
    );
    let (got, stats, _) = walk_file(dir.path(), "bad.gz", Limits::default());
    assert_eq!(got, vec![]);
    assert_eq!(stats.skipped.len(), 1);
    assert_eq!(stats.skipped[0].path, Path::new("bad.gz"));
    assert!(
        matches!(
            stats.skipped[0].reason,
            ArchiveSkip::Corrupt(_) | ArchiveSkip::Truncated
        ),
        "{:?}",
        stats.skipped[0].reason
    );
    let (got, stats, _) = walk_file(dir.path(), "bz.zip", Limits::default());
    assert_eq!(got, leaves(&[("bz.zip!plain.txt", "plain\n")]));
    assert_eq!(stats.skipped.len(), 1);
    assert_eq!(stats.skipped[0].path, Path::new("bz.zip!key.txt"));
    assert!(
        matches!(&stats.skipped[0].reason, ArchiveSkip::Unsupported(_)),
        "{:?}",
        stats.skipped[0].reason
    );
}

#[test]
fn callback_stop_and_callback_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a");
    write(dir.path(), "b.txt", "b");
    sh(dir.path(), "zip -q ab.zip a.txt b.txt");
    let mut file = File::open(dir.path().join("ab.zip")).unwrap();
    let budget = Budget::new(Limits::default());
    let scope = Scope::top(&budget, Path::new("ab.zip"));
    let mut names = Vec::new();
    let flow = for_each_member(
        ArchiveKind::Zip,
        Source::Seekable(&mut file),
        &scope,
        &mut |scope, member, _| {
            names.push((
                scope.member_path(member.name).to_str().unwrap().to_string(),
                member.size,
            ));
            Ok(Flow::Stop)
        },
    )
    .unwrap();
    assert_eq!(flow, Flow::Stop);
    assert_eq!(names, vec![("ab.zip!a.txt".to_string(), Some(1))]);
    // An error of the callback's own is the caller's, not a skip.
    let err = for_each_member(
        ArchiveKind::Zip,
        Source::Seekable(&mut file),
        &scope,
        &mut |_, _, _| Err(io::Error::new(io::ErrorKind::BrokenPipe, "sink gone")),
    )
    .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    assert_eq!(budget.into_stats().skipped, vec![]);
}

#[test]
fn sniff_by_magic_and_detect_by_name() {
    let mut tar = vec![0u8; 512];
    tar[257..263].copy_from_slice(b"ustar\0");
    assert_eq!(sniff(&tar), Some(ArchiveKind::Tar));
    assert_eq!(sniff(b"PK\x03\x04rest"), Some(ArchiveKind::Zip));
    assert_eq!(sniff(b"PK\x05\x06"), Some(ArchiveKind::Zip));
    assert_eq!(sniff(&[0x1f, 0x8b, 8, 0]), Some(ArchiveKind::Gzip));
    assert_eq!(sniff(b"BZh91AY"), Some(ArchiveKind::Bzip2));
    assert_eq!(sniff(b"BZhx"), None);
    assert_eq!(sniff(b"\xfd7zXZ\x00"), Some(ArchiveKind::Xz));
    assert_eq!(sniff(&[0x28, 0xb5, 0x2f, 0xfd]), Some(ArchiveKind::Zstd));
    assert_eq!(sniff(b"PK"), None);
    assert_eq!(sniff(b"key=value\n"), None);
    assert_eq!(
        detect(b"pkg-1.0-py3-none-any.WHL", b"#!/bin/sh"),
        Some(ArchiveKind::Zip)
    );
    assert_eq!(detect(b"report.docx", b""), Some(ArchiveKind::Zip));
    assert_eq!(detect(b"old.tar", b"v7"), Some(ArchiveKind::Tar));
    assert_eq!(detect(b"notes.gz", b"plain text"), None);
    assert_eq!(detect(b"x.txt", b"PK\x03\x04"), Some(ArchiveKind::Zip));
}

#[test]
fn display_paths_and_names() {
    let a = Path::new("a.zip");
    assert_eq!(member_path(a, b"lib/b.jar"), Path::new("a.zip!lib/b.jar"));
    assert_eq!(
        member_path(&member_path(a, b"lib/b.jar"), b"c.properties"),
        Path::new("a.zip!lib/b.jar!c.properties")
    );
    // The name as stored, as a file's: `messages::escape_path` escapes it where it is shown.
    #[cfg(unix)]
    assert_eq!(
        crate::paths::path_bytes(&member_path(a, b"caf\xe9\n.txt")),
        &b"a.zip!caf\xe9\n.txt"[..]
    );
    assert_eq!(
        member_path(a, "café.txt".as_bytes()),
        Path::new("a.zip!café.txt")
    );
    assert!(is_unsafe_name(b"../x"));
    assert!(is_unsafe_name(b"a/../../x"));
    assert!(is_unsafe_name(b"a\\..\\x"));
    assert!(is_unsafe_name(b"/etc/passwd"));
    assert!(is_unsafe_name(b"C:\\x"));
    assert!(!is_unsafe_name(b"a/..b/x"));
    assert!(!is_unsafe_name(b"a/b..txt"));
    assert_eq!(
        single_member_name(Path::new("dir/secret.env.gz")),
        b"secret.env"
    );
    assert_eq!(single_member_name(Path::new("a.zip!logs/x.TGZ")), b"x.tar");
    assert_eq!(single_member_name(Path::new("data")), b"data");
    assert_eq!(single_member_name(Path::new(".gz")), b".gz");
}

#[test]
fn spool_switches_to_a_temp_file_past_the_memory_limit() {
    let data = b"0123456789".to_vec();
    let mut small = spool(&mut &data[..], 10).unwrap();
    assert!(matches!(small, Spooled::Memory(_)));
    let mut big = spool(&mut &data[..], 4).unwrap();
    assert!(matches!(big, Spooled::File(_)));
    for spooled in [&mut small, &mut big] {
        spooled.seek(SeekFrom::Start(3)).unwrap();
        let mut rest = String::new();
        spooled.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "3456789");
    }
}

/// Throughput of the archive layer alone: every member of every archive
/// under the roots read to its end, nothing scanned. Roots from
/// `SCANNER_ARCHIVE_ROOTS` (colon-separated), else the cargo registry
/// cache (`.crate` = tar.gz) and the Python installations (`.whl` = zip).
/// Run: `cargo test -p scanner-cli --release --lib -- --ignored
/// --nocapture archive_throughput` under `/usr/bin/time -v` for peak RSS.
#[test]
#[ignore = "measurement: reads every archive under the roots"]
fn archive_throughput() {
    let home = std::env::var("HOME").unwrap_or_default();
    let roots = std::env::var("SCANNER_ARCHIVE_ROOTS").unwrap_or(format!(
        "{home}/.cargo/registry/cache:{home}/.pyenv:/usr/lib/python3"
    ));
    let mut files = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = roots.split(':').map(Into::into).collect();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else if meta.is_file() {
            let name = path.to_string_lossy().to_string();
            if [".crate", ".whl", ".jar", ".tar.gz", ".tgz"]
                .iter()
                .any(|s| name.ends_with(s))
            {
                files.push((path, meta.len()));
            }
        }
    }
    let start = std::time::Instant::now();
    let (mut on_disk, mut archives, mut members, mut expanded) = (0u64, 0u64, 0u64, 0u64);
    let mut skip_counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut buf = vec![0u8; 64 << 10];
    for (path, len) in &files {
        let mut file = File::open(path).unwrap();
        let mut head = Vec::new();
        (&mut file)
            .take(SNIFF_LEN as u64)
            .read_to_end(&mut head)
            .unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        let name = path.to_string_lossy();
        let Some(kind) = detect(name.as_bytes(), &head) else {
            continue;
        };
        on_disk += len;
        let budget = Budget::new(Limits::default());
        walk(
            kind,
            Source::Seekable(&mut file),
            &Scope::top(&budget, Path::new(&*name)),
            &mut |_, reader| {
                while reader.read(&mut buf)? > 0 {}
                Ok(Flow::Continue)
            },
        )
        .unwrap();
        let stats = budget.into_stats();
        archives += stats.archives;
        members += stats.members;
        expanded += stats.expanded_bytes;
        for skip in stats
            .skipped
            .iter()
            .filter(|s| s.reason.label() != "symlink")
        {
            println!("{}: {}", skip.path.display(), skip.reason);
        }
        for (label, n) in stats.skip_counts {
            *skip_counts.entry(label).or_default() += n;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} files, {:.1} MB on disk, {archives} archives, {members} members, \
         {:.1} MB expanded in {secs:.2} s: {:.1} MB/s expanded; skips {skip_counts:?}",
        files.len(),
        on_disk as f64 / 1e6,
        expanded as f64 / 1e6,
        expanded as f64 / 1e6 / secs,
    );
    assert!(members > 0, "no archive found under {roots}");
}

/// Every single-byte corruption and every truncation of small real
/// archives: each walk returns `Ok`, within the limits, and says what it
/// could not read.
#[test]
fn mutated_archives_end_in_skips_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "alpha\n");
    write(dir.path(), "b.properties", KEY);
    // Fixed times and owners: the same bytes, so the same mutations, on
    // every run.
    sh(
        dir.path(),
        "touch -t 202001020304 a.txt b.properties && zip -q -X a.zip a.txt b.properties \
         && tar --owner=0 --group=0 --numeric-owner -cf a.tar a.txt b.properties \
         && gzip -n -k a.tar && xz -k a.tar",
    );
    let mut cases = 0;
    for name in ["a.zip", "a.tar.gz", "a.tar.xz"] {
        let original = std::fs::read(dir.path().join(name)).unwrap();
        let mut variants: Vec<Vec<u8>> = (0..original.len())
            .map(|i| original[..i].to_vec())
            .collect();
        for i in 0..original.len() {
            let mut v = original.clone();
            v[i] ^= 0x5a;
            variants.push(v);
        }
        for data in variants {
            // Without its magic a gzip or xz is scanned as a plain file.
            let Some(kind) = detect(name.as_bytes(), &data) else {
                continue;
            };
            let budget = Budget::new(Limits::default());
            let mut leaves = Vec::new();
            let walked = walk(
                kind,
                Source::Seekable(&mut Cursor::new(&data)),
                &Scope::top(&budget, Path::new(name)),
                &mut |leaf, reader| {
                    let mut content = Vec::new();
                    reader.read_to_end(&mut content)?;
                    leaves.push((leaf.path.to_str().unwrap().to_string(), content));
                    Ok(Flow::Continue)
                },
            );
            let stats = budget.into_stats();
            assert!(walked.is_ok(), "{name}: {walked:?}");
            assert!(stats.expanded_bytes <= 1 << 30);
            // Both members delivered, or a reason why not.
            assert!(
                leaves.len() == 2 || !stats.skipped.is_empty(),
                "{name}: {leaves:?}"
            );
            cases += 1;
        }
    }
    assert!(cases > 1000, "{cases}");
}

/// The non-recursive bomb: many central-directory entries sharing one
/// compressed kernel. The total ends the archive long before entries x
/// kernel size.
#[test]
fn overlapping_entries_bomb_is_bounded_by_the_total() {
    let dir = tempfile::tempdir().unwrap();
    py(
        dir.path(),
        "import zipfile, struct\n\
         with zipfile.ZipFile('k.zip', 'w', zipfile.ZIP_DEFLATED) as z:\n\
         \x20   z.writestr('k0', bytes(64 << 20))\n\
         data = open('k.zip', 'rb').read()\n\
         eocd = data.rindex(b'PK\\x05\\x06')\n\
         cd_size, cd_off = struct.unpack('<II', data[eocd+12:eocd+20])\n\
         entry = data[cd_off:cd_off+cd_size]\n\
         n = 200\n\
         cd = b''.join(entry[:28] + struct.pack('<H', 4) + entry[30:46] + ('k%03d' % i).encode() + entry[48:] for i in range(n))\n\
         eocd_rec = data[eocd:eocd+8] + struct.pack('<HHII', n, n, len(cd), cd_off) + data[eocd+20:]\n\
         open('k.zip', 'wb').write(data[:cd_off] + cd + eocd_rec)\n",
    );
    let limits = Limits {
        max_total_bytes: 16 << 20,
        ..Limits::default()
    };
    let (got, stats, flow) = walk_file(dir.path(), "k.zip", limits);
    assert_eq!(got, vec![]);
    assert_eq!(flow, Flow::Stop);
    assert_eq!(stats.skip_counts, counts(&[("too_large", 1)]));
    // The read that crossed the limit counts: at most one read past it.
    assert!(stats.expanded_bytes < 17 << 20, "{}", stats.expanded_bytes);
    assert_eq!(
        stats.skipped,
        skips(&[("k.zip!k000", ArchiveSkip::TooLarge)])
    );
}

#[test]
fn members_after_an_end_of_archive_block_are_found() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "alpha\n");
    write(dir.path(), "hidden.env", KEY);
    sh(
        dir.path(),
        "tar -cf a.tar a.txt && tar -cf h.tar hidden.env && cat a.tar h.tar | gzip > ah.tar.gz",
    );
    let (got, stats, _) = walk_file(dir.path(), "ah.tar.gz", Limits::default());
    assert_eq!(
        got,
        leaves(&[
            ("ah.tar.gz!a.txt", "alpha\n"),
            ("ah.tar.gz!hidden.env", KEY)
        ])
    );
    assert_eq!(stats.skipped, vec![]);
}

#[test]
fn stats_merge_adds_counts_and_caps_the_list() {
    let one = |path: &str| ArchiveStats {
        archives: 1,
        members: 2,
        expanded_bytes: 10,
        incomplete: 1,
        skip_counts: counts(&[("encrypted", 1)]),
        skipped: skips(&[(path, ArchiveSkip::Encrypted)]),
    };
    let mut total = ArchiveStats::default();
    for i in 0..MAX_LISTED_SKIPS + 5 {
        total.merge(one(&format!("a{i}.zip!x")));
    }
    let n = MAX_LISTED_SKIPS as u64 + 5;
    assert_eq!(
        (total.archives, total.members, total.expanded_bytes),
        (n, 2 * n, 10 * n)
    );
    assert_eq!(total.skip_counts, counts(&[("encrypted", n)]));
    assert_eq!(total.incomplete, n);
    assert_eq!(total.skipped.len(), MAX_LISTED_SKIPS);
    assert_eq!(total.skipped[0].path, Path::new("a0.zip!x"));
}

#[test]
fn nested_members_are_archives_by_content_not_by_name() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "fake.jar", KEY);
    write(dir.path(), "fake.tar", "not a tar\n");
    sh(dir.path(), "zip -q outer.zip fake.jar fake.tar");
    let (got, stats, _) = walk_file(dir.path(), "outer.zip", Limits::default());
    assert_eq!(
        got,
        leaves(&[
            ("outer.zip!fake.jar", KEY),
            ("outer.zip!fake.tar", "not a tar\n")
        ])
    );
    assert_eq!((stats.skipped.len(), stats.archives), (0, 1));
}

#[test]
fn self_extracting_zip_is_found_by_name() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "stub.sh", "#!/bin/sh\necho installer\nexit 0\n");
    write(dir.path(), "app.properties", KEY);
    sh(
        dir.path(),
        "zip -q payload.zip app.properties && cat stub.sh payload.zip > installer.jar \
         && zip -q -A installer.jar",
    );
    let (got, stats, _) = walk_file(dir.path(), "installer.jar", Limits::default());
    assert_eq!(got, leaves(&[("installer.jar!app.properties", KEY)]));
    assert_eq!(stats.skipped, vec![]);
}

/// Runs a generator of hostile archives in `tests/hostile/` (shared
/// with the CLI's tests) in `dir`.
fn testdata_py(dir: &Path, script: &str, args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/hostile")
        .join(script);
    let mut all = vec![script.as_os_str()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    python3(dir, &all);
}

/// Members whose size field lies, read as GNU tar 1.34 reads them
/// (`tar -xf`, checked by hand): for the declared size; blocks after a
/// size too small are skipped to the next header (GNU's "Skipping to next
/// header", exit 2); a size past the end reads to the end ("Unexpected EOF").
#[test]
fn tar_members_with_a_lying_size_are_read_as_gnu_tar_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    for size in ["0", "10", "huge"] {
        testdata_py(
            dir.path(),
            "lying_tar.py",
            &[&format!("{size}.tar"), size, KEY],
        );
    }
    let junk = |n: u32| {
        let blocks = match n {
            1 => "1 block after member s.env is not a tar header",
            _ => "2 blocks after member s.env are not tar headers",
        };
        ArchiveSkip::Corrupt(format!(
            "{blocks} (a member's size lies?): skipped to the next header, as GNU tar does"
        ))
    };

    let (got, stats, _) = walk_file(dir.path(), "0.tar", Limits::default());
    assert_eq!(
        got,
        leaves(&[
            ("0.tar!a.txt", "alpha\n"),
            ("0.tar!s.env", ""),
            ("0.tar!after.txt", "after\n")
        ])
    );
    assert_eq!(stats.skipped, skips(&[("0.tar", junk(2))]));

    let (got, stats, _) = walk_file(dir.path(), "10.tar", Limits::default());
    assert_eq!(
        got,
        leaves(&[
            ("10.tar!a.txt", "alpha\n"),
            ("10.tar!s.env", "xxxxxxxxxx"),
            ("10.tar!after.txt", "after\n")
        ])
    );
    assert_eq!(stats.skipped, skips(&[("10.tar", junk(1))]));
    // Skipped blocks are expanded bytes: charged (6 + 0 + 512 + 512).
    let limits = Limits {
        max_total_bytes: 1000,
        ..Limits::default()
    };
    let (got, stats, flow) = walk_file(dir.path(), "0.tar", limits);
    assert_eq!(got.len(), 2);
    assert_eq!(
        stats.skipped,
        skips(&[("0.tar", junk(2)), ("0.tar", ArchiveSkip::TooLarge)])
    );
    assert_eq!((stats.expanded_bytes, flow), (1030, Flow::Stop));

    // The member reads to the end: its data, padding, the next header...
    let mut file = File::open(dir.path().join("huge.tar")).unwrap();
    let mut whole = Vec::new();
    file.read_to_end(&mut whole).unwrap();
    let (got, stats, _) = walk_file_sizes_unchecked(dir.path(), "huge.tar");
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].0, "huge.tar!s.env");
    assert_eq!(got[1].1, whole[1536..]);
    assert_eq!(
        stats.skipped,
        skips(&[("huge.tar", ArchiveSkip::Truncated)])
    );
    assert_eq!(stats.incomplete, 1);
}

/// [`walk_file`] for a member whose declared size is a lie.
fn walk_file_sizes_unchecked(dir: &Path, name: &str) -> (Leaves, ArchiveStats, Flow) {
    let mut file = File::open(dir.join(name)).unwrap();
    let budget = Budget::new(Limits::default());
    let mut leaves = Vec::new();
    let flow = walk(
        ArchiveKind::Tar,
        Source::Seekable(&mut file),
        &Scope::top(&budget, Path::new(name)),
        &mut |leaf, reader| {
            let mut content = Vec::new();
            reader.read_to_end(&mut content)?;
            leaves.push((leaf.path.to_str().unwrap().to_string(), content));
            Ok(Flow::Continue)
        },
    )
    .unwrap();
    (leaves, budget.into_stats(), flow)
}

/// A central-directory entry whose local-header offset points outside the
/// file: the member is found by its local header.
#[test]
fn zip_member_with_a_wrong_offset_is_found_by_its_local_header() {
    let dir = tempfile::tempdir().unwrap();
    testdata_py(dir.path(), "lost_offset_zip.py", &["lost.zip", KEY]);
    let (got, stats, _) = walk_file(dir.path(), "lost.zip", Limits::default());
    assert_eq!(
        got,
        leaves(&[("lost.zip!a.txt", "alpha\n"), ("lost.zip!s.env", KEY)])
    );
    assert_eq!(stats.skipped, vec![]);
}

/// A directory declaring more entries than the member limit is not parsed
/// whole: it is read an entry at a time up to the limit.
#[test]
fn zip_directory_over_the_member_limit_is_not_parsed() {
    let dir = tempfile::tempdir().unwrap();
    py(
        dir.path(),
        "import zipfile\n\
         with zipfile.ZipFile('many.zip', 'w') as z:\n\
         \x20   for i in range(70000): z.writestr('m%d' % i, '')\n",
    );
    let limits = Limits {
        max_members: 3,
        ..Limits::default()
    };
    py(
        dir.path(),
        "import zipfile\n\
         with zipfile.ZipFile('comment.zip', 'w') as z:\n\
         \x20   z.comment = b'PK' * 1000\n\
         \x20   for i in range(3): z.writestr('m%d' % i, '')\n",
    );
    let declared = |name: &str| {
        let file = File::open(dir.path().join(name)).unwrap();
        let dir = zip_directory(&mut std::io::BufReader::new(file)).unwrap();
        dir.map(|d| d.entries)
    };
    // The zip64 count, and the count before a comment.
    assert_eq!(declared("many.zip"), Some(70000));
    assert_eq!(declared("comment.zip"), Some(3));
    let (got, stats, flow) = walk_file(dir.path(), "many.zip", limits.clone());
    assert_eq!(
        got,
        leaves(&[
            ("many.zip!m0", ""),
            ("many.zip!m1", ""),
            ("many.zip!m2", "")
        ])
    );
    assert_eq!(
        stats.skipped,
        skips(&[("many.zip", ArchiveSkip::TooManyMembers)])
    );
    assert_eq!(flow, Flow::Stop);
    // Written to a pipe: deflated members with a data descriptor (sizes
    // after the data), which only the directory's sizes lead through.
    sh(
        dir.path(),
        "python3 -c \"import zipfile, sys\n\
         with zipfile.ZipFile(sys.stdout.buffer, 'w', zipfile.ZIP_DEFLATED) as z:\n\
         \x20   for i in range(5): z.writestr('d%d' % i, 'x' * 100)\" | cat > dd.zip",
    );
    let (got, stats, _) = walk_file(dir.path(), "dd.zip", limits);
    let x = "x".repeat(100);
    assert_eq!(
        got,
        leaves(&[("dd.zip!d0", &x), ("dd.zip!d1", &x), ("dd.zip!d2", &x)])
    );
    assert_eq!(
        stats.skipped,
        skips(&[("dd.zip", ArchiveSkip::TooManyMembers)])
    );
}

/// `zstd --long=28` declares a 256 MiB window: not decoded. A frame of the
/// default window is.
#[test]
fn zstd_window_over_128_mib_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "k.txt", KEY);
    sh(
        dir.path(),
        "zstd -q --long=28 -c < k.txt > long.txt.zst && zstd -q -c < k.txt > k.txt.zst",
    );
    let (got, stats, _) = walk_file(dir.path(), "long.txt.zst", Limits::default());
    assert_eq!(got, vec![]);
    assert_eq!(
        stats.skipped,
        skips(&[("long.txt.zst", ArchiveSkip::WindowTooLarge(256 << 20))])
    );
    let (got, stats, _) = walk_file(dir.path(), "k.txt.zst", Limits::default());
    assert_eq!(got, leaves(&[("k.txt.zst!k.txt", KEY)]));
    assert_eq!(stats.skipped, vec![]);
    assert_eq!(
        zstd_window(&[0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x10]),
        Some(0x10)
    );
    assert_eq!(
        zstd_window(&[0x28, 0xb5, 0x2f, 0xfd, 0x60, 0, 1]),
        Some(512)
    );
}
