//! Hostile configurations and outputs (issue 30, §2-§6 less the archives): a config that is
//! not the repository's, keys spelt another way, rule files and regexes too large to hold,
//! rules too costly to run, error text holding terminal escapes, outputs that cannot be
//! written, a FIFO in a file list.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{git_in, run_in, scanner_in, token, Run, Tree, RULE};

fn secret_line(seed: u32) -> String {
    format!("T={}\n", token(seed))
}

/// Runs `scanner ARGS` in `dir` under `ulimit -v KIB` (address space), so that a run that would
/// hold a large input whole fails instead of passing.
fn run_limited(dir: &Path, kib: u64, args: &[&str]) -> Run {
    let out = Command::new("sh")
        .current_dir(dir)
        .env("HOME", dir)
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(common::BIN)
        .args(args)
        .output()
        .unwrap();
    Run::from_output(out)
}

#[cfg(unix)]
fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------- §2 config discovery

#[test]
fn a_config_above_the_repository_is_not_used_and_the_one_in_use_is_named() {
    let t = Tree::new();
    t.write(".scanner.toml", "allow_paths = [\"*\"]\n");
    t.write("repo/sub/a.txt", secret_line(1));
    git_in(&t.join("repo"), &["init", "-q"]);
    let r = run_in(&t.join("repo/sub"), &["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.path_lines(), ["a.txt:1"]);
    assert!(!r.stderr.contains("note: config"), "{}", r.stderr);

    // Outside a repository, only the scan root's own file counts.
    t.write("plain/sub/a.txt", secret_line(2));
    t.write("plain/.scanner.toml", "allow_paths = [\"*\"]\n");
    let r = run_in(&t.join("plain/sub"), &["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.path_lines(), ["a.txt:1"]);

    // The repository's own file is used, from a subdirectory too, and named on stderr: a note,
    // shown with -q, not under --log-level error.
    let own = t.write("repo/.scanner.toml", "disable_rules = [\"nothing-here\"]\n");
    let own = own.canonicalize().unwrap();
    let note = format!("scanner: note: config {}", own.display());
    for args in [&["scan"][..], &["scan", "-q"]] {
        let r = run_in(&t.join("repo/sub"), args);
        r.expect(1);
        assert_eq!(
            r.stderr
                .lines()
                .filter(|l| l.contains("note: config"))
                .collect::<Vec<_>>(),
            [note.as_str()],
            "{}",
            r.stderr
        );
    }
    let r = run_in(&t.join("repo/sub"), &["scan", "--log-level", "error"]);
    r.expect(1);
    assert!(!r.stderr.contains("note:"), "{}", r.stderr);
}

#[cfg(unix)]
#[test]
fn a_config_someone_else_could_write_is_refused() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    let cfg = t.write(".scanner.toml", "allow_paths = [\"*\"]\n");
    chmod(&cfg, 0o666);
    let r = t.run(&["scan"]);
    r.expect(2);
    let shown = t.path().canonicalize().unwrap().join(".scanner.toml");
    assert_eq!(
        r.stderr,
        format!(
            "scanner: error: refusing config {}: it is writable by group or others (mode 666), \
             so someone else may have written it; check it, then run `chmod go-w` on it, name \
             it with --config, or scan with --no-config\n",
            shown.display()
        )
    );
    // Named by the user: used.
    t.run(&["scan", "--config", ".scanner.toml"]).expect(0);

    // Group-writable, the group being the user's own (a umask of 002): used.
    chmod(&cfg, 0o664);
    t.run(&["scan"]).expect(0);

    // An auto-loaded .gitleaks.toml is held to the same rule.
    fs::remove_file(&cfg).unwrap();
    let gl = t.write(".gitleaks.toml", "[extend]\nuseDefault = true\n");
    chmod(&gl, 0o646);
    let r = t.run(&["scan"]);
    r.expect(2);
    assert!(
        r.stderr.starts_with("scanner: error: refusing config ")
            && r.stderr
                .contains(".gitleaks.toml: it is writable by group or others (mode 646)"),
        "{}",
        r.stderr
    );
    chmod(&gl, 0o644);
    t.run(&["scan"]).expect(1);

    // Writable by another group, or owned by someone else (testable when the suite runs as
    // root).
    let uid = Command::new("id").arg("-u").output().unwrap().stdout;
    if uid == b"0\n" {
        chmod(&gl, 0o664);
        let ok = Command::new("chgrp")
            .arg("nogroup")
            .arg(&gl)
            .status()
            .unwrap();
        assert!(ok.success());
        let r = t.run(&["scan"]);
        r.expect(2);
        assert!(
            r.stderr
                .contains(".gitleaks.toml: it is writable by group or others (mode 664)"),
            "{}",
            r.stderr
        );
        fs::remove_file(&gl).unwrap();
        let cfg = t.write(".scanner.toml", "allow_paths = [\"*\"]\n");
        let ok = Command::new("chown")
            .args(["nobody"])
            .arg(&cfg)
            .status()
            .unwrap();
        assert!(ok.success());
        let r = t.run(&["scan"]);
        r.expect(2);
        assert!(
            r.stderr.contains("it is owned by uid ") && r.stderr.contains("not by you (uid 0)"),
            "{}",
            r.stderr
        );
    }
}

// ---------------------------------------------------------------- §3 keys

#[test]
fn gitleaks_keys_are_case_insensitive_and_unknown_ones_are_named() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    t.write(".gitleaks.toml", "[extend]\nusedefault = true\n");
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    assert_eq!(r.path_lines(), ["a.txt:1"]);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);

    t.write(".gitleaks.toml", "[extend]\nusedefualt = true\n");
    let r = t.run(&["scan", "--format", "json"]);
    assert!(
        r.stderr.lines().any(|l| l
            == "scanner: warning: ./.gitleaks.toml: unknown key `usedefualt` in [extend] ignored"),
        "{}",
        r.stderr
    );
    // Without the built-ins there is no rule: nothing found, and said so above.
    r.expect(0);
}

// ---------------------------------------------------------------- §4 sizes

/// 600 MB of address space: the scanner's threads and maps fit, 1 GB of parsed regex does not.
const SMALL_VM_KIB: u64 = 600 * 1024;

#[test]
fn dev_zero_as_a_rule_file_fails_fast() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    t.write("rules.toml", "[extend]\npath = \"/dev/zero\"\n");
    let r = run_limited(t.path(), SMALL_VM_KIB, &["scan", "--rules", "rules.toml"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: /dev/zero: cannot read rule file: larger than 16 MiB, the limit for a \
         rule or config file: not a rule file?\n"
    );
    t.write(".scanner.toml", "extra_rules = [\"/dev/zero\"]\n");
    let r = run_limited(t.path(), SMALL_VM_KIB, &["scan"]);
    r.expect(2);
    assert!(
        r.stderr
            .contains("/dev/zero: cannot read rule file: larger than 16 MiB"),
        "{}",
        r.stderr
    );
    fs::remove_file(t.join(".scanner.toml")).unwrap();
    let r = run_limited(t.path(), SMALL_VM_KIB, &["scan", "--config", "/dev/zero"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: cannot read config /dev/zero: larger than 16 MiB, the limit for a rule \
         or config file: not a rule file?\n"
    );
}

#[test]
fn a_10_mb_literal_regex_is_refused_in_small_memory() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    let mut rules = String::from("[[rules]]\nid = \"huge\"\nkeywords = [\"x\"]\nregex = '''");
    rules.push_str(&"x".repeat(10 << 20));
    rules.push_str("'''\n");
    t.write("rules.toml", rules);
    let r = run_limited(t.path(), SMALL_VM_KIB, &["scan", "--rules", "rules.toml"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: rules.toml: rule `huge`: line 1: regex: the pattern is 10485760 bytes, \
         more than the 65536 allowed (a rule's regex is a few hundred bytes: was a file pasted \
         in?)\n"
    );
}

// ---------------------------------------------------------------- §5 costly rules

#[test]
fn a_repository_rule_with_a_huge_repetition_is_refused() {
    let t = Tree::new();
    t.write("big.txt", "x".repeat(70_000));
    t.write(
        ".gitleaks.toml",
        "[[rules]]\nid = \"slow\"\nregex = '''.{65535}x'''\nkeywords = [\"x\"]\n",
    );
    let r = t.run(&["scan"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: note: rules from the gitleaks config ./.gitleaks.toml\nscanner: error: \
         ./.gitleaks.toml: rule `slow`: line 1: regex too large: 65541 automaton states, more \
         than 16384: shorten its counted repetitions (`.{65535}`) or split the rule\n"
    );
}

#[test]
fn a_keyword_of_one_repeated_character_is_not_a_keyword() {
    let t = Tree::new();
    t.write(
        ".gitleaks.toml",
        "[extend]\nuseDefault = true\n[[rules]]\nid = \"zed\"\nregex = '''zzzz_[0-9]{8}'''\n\
         keywords = [\"ZZZZ\"]\n",
    );
    t.write("a.txt", "x = zzzz_12345678\n");
    // Base64 of zeros: a run of `A`s, where the built-in Twitter rule's old keyword (20 `a`s)
    // hit at every byte.
    t.write("zeros.b64", "A".repeat(1 << 20));
    let r = t.run(&["scan", "--format", "json"]);
    r.expect(1);
    let found: Vec<(String, String, u32)> = r
        .findings()
        .into_iter()
        .map(|f| (f.rule_id, f.path, f.line))
        .collect();
    assert_eq!(found, [("zed".into(), "a.txt".into(), 1)]);
    assert!(
        r.stderr.contains(
            "scanner: warning: ./.gitleaks.toml: rule `zed`: keyword `zzzz` has too little \
             information (one character repeated, it matches at every byte of a run such as \
             `AAAA` or `====`): the rule's regex runs over every byte of every file instead; use \
             a keyword of two characters or more\n"
        ),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------- §6 output

#[test]
fn crate_error_text_is_escaped() {
    let t = Tree::new();
    // A tar whose member name and size field hold terminal escapes (the tar crate quotes the
    // raw field and the name in its error).
    let made = Command::new("python3")
        .current_dir(t.path())
        .arg("-c")
        .arg(
            r#"
import io, tarfile
data = b"hello\n"
bio = io.BytesIO()
with tarfile.open(fileobj=bio, mode="w", format=tarfile.USTAR_FORMAT) as t:
    ti = tarfile.TarInfo("a\x1b]0;pwned\x07.txt"); ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))
b = bytearray(bio.getvalue())
b[124:136] = b"\x1b[2J\x1b]0;x\x07  "
b[148:156] = b" " * 8
b[148:156] = ("%06o\0 " % sum(b[:512])).encode()
open("bad.tar", "wb").write(bytes(b))
"#,
        )
        .status()
        .unwrap();
    assert!(made.success());
    let r = t.run(&["scan", "bad.tar"]);
    assert!(
        !r.stderr.contains('\x1b') && !r.stderr.contains('\x07'),
        "{:?}",
        r.stderr
    );
    // The archive reader reads the lying header as GNU tar does and names it in its own
    // words; what reaches stderr of the header's bytes is escaped.
    assert!(
        r.stderr.contains(
            "scanner: warning: bad.tar: corrupt: 2 blocks at the start are not tar headers \
             (a member's size lies?): skipped to the next header, as GNU tar does"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn stats_and_baseline_paths_are_checked_before_the_scan() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    fs::create_dir(t.join("out")).unwrap();
    let r = t.run(&["scan", "a.txt", "--stats-json", "out"]);
    r.expect(2);
    // The summary would come after the scan: the run stopped before it.
    assert_eq!(
        r.stderr,
        "scanner: error: --stats-json: out: is a directory\n"
    );
    let r = t.run(&["scan", "a.txt", "--write-baseline", "missing/b.json"]);
    r.expect(2);
    assert_eq!(
        r.stderr,
        "scanner: error: --write-baseline: missing/b.json: its directory missing does not exist: \
         create it first\n"
    );
    // What can be written still is.
    t.run(&["scan", "a.txt", "--stats-json", "out/s.json", "-q"])
        .expect(1);
    assert!(t.join("out/s.json").is_file());
}

#[cfg(unix)]
#[test]
fn a_fifo_listed_in_files_from_is_skipped_not_opened() {
    let t = Tree::new();
    t.write("a.txt", secret_line(1));
    assert!(Command::new("mkfifo")
        .arg(t.join("pipe"))
        .status()
        .unwrap()
        .success());
    t.write("list", "a.txt\npipe\n");
    let mut child = scanner_in(t.path())
        .args(["scan", "--files-from", "list", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("blocked on the FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = Run::from_output(child.wait_with_output().unwrap());
    r.expect(1);
    assert_eq!(r.findings()[0].rule_id, RULE);
    assert!(
        r.stderr.contains(
            "scanner: warning: pipe: a FIFO listed in --files-from, not read (pipe it to \
             `scanner scan -`)"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.summary_line("not scanned:"),
        Some("not scanned: 1 special file")
    );
}
