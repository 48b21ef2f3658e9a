//! Archives made by real tools (`zip`, `tar`, `gzip`), scanned member by
//! member through the real binary: `ARCHIVE!MEMBER` paths, member line
//! numbers, nesting, hostile archives skipped with a reason.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{token, Tree};

fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

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
    // Too deep: the jar inside the zip is not opened at depth 1.
    let r = t.run(&["scan", "--format", "json", "--archive-depth", "1"]);
    assert_eq!(r.expect(1).locations().len(), 3);
    assert!(
        r.stderr
            .contains("outer.zip!lib.jar: archive nested too deep"),
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
         z.writestr('as.txt', b'a' * (300<<20)); z.writestr('ok.txt', 'fine'); z.close()\" \
         && cd src && zip -q -P secret ../enc.zip notes.txt && zip -q ../good.zip app.properties && cd .. \
         && head -c 200 good.zip > truncated.zip \
         && rm -r src",
    );
    let r = t.run(&["scan", "--format", "json"]);
    // The truncated zip still holds its first member whole: found.
    assert_eq!(
        r.expect(1).locations(),
        [
            "good.zip!app.properties:3:7:3:47",
            "truncated.zip!app.properties:3:7:3:47"
        ]
    );
    assert!(r.stderr.contains("truncated.zip: corrupt"), "{}", r.stderr);
    assert!(
        r.stderr.contains("bomb.zip!as.txt: expands"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("enc.zip!notes.txt: encrypted member"),
        "{}",
        r.stderr
    );
    let archives = r.summary_line("archives:").unwrap();
    assert!(archives.contains("1 bomb"), "{archives}");
    assert!(archives.contains("1 encrypted"), "{archives}");
    assert!(fs::metadata(t.join("bomb.zip")).unwrap().len() < 1 << 20);
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
