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
