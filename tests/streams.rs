//! Standard input, named streams, signals and what the scanner writes: the
//! real binary, real pipes, FIFOs and signals.

mod common;

use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{scanner_in as scanner, token, Run, Tree};

/// Runs the scanner with `input` on its standard input.
fn with_stdin(t: &Tree, args: &[&str], input: &[u8]) -> Run {
    let mut child = scanner(t.path())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    Run::from_output(out)
}

#[test]
fn stdin_is_scanned_as_one_file() {
    let t = Tree::new();
    let input = format!("line one\nTOKEN={}\n", token(1));
    let r = with_stdin(&t, &["scan", "-", "--format", "json"], input.as_bytes());
    assert_eq!(r.expect(1).locations(), ["<stdin>:2:7:2:47"]);
    // /dev/stdin on a pipe is a FIFO named on the command line: a stream too.
    let r = with_stdin(
        &t,
        &["scan", "/dev/stdin", "--format", "json"],
        input.as_bytes(),
    );
    assert_eq!(r.expect(1).locations(), ["/dev/stdin:2:7:2:47"]);
}

/// UTF-16 text on standard input (or a FIFO) is transcoded as a UTF-16 file is: it was taken
/// for binary (`not scanned: 1 binary`), and the token in it passed with exit 0.
#[test]
fn utf16_on_stdin_is_transcoded() {
    let t = Tree::new();
    let text = format!("line one\nTOKEN={}\n", token(3));
    let mut bom = vec![0xFF, 0xFE];
    bom.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let r = with_stdin(&t, &["scan", "-", "--format", "json"], &bom);
    assert_eq!(r.expect(1).locations(), ["<stdin>:2:7:2:47"]);
    let no_bom: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let r = with_stdin(&t, &["scan", "/dev/stdin", "--format", "json"], &no_bom);
    assert_eq!(r.expect(1).locations(), ["/dev/stdin:2:7:2:47"]);
    assert_eq!(r.summary_line("not scanned:"), None);
}

#[test]
fn stdin_name_makes_path_rules_apply() {
    let t = Tree::new();
    let input = format!("TOKEN={}\n", token(2));
    let r = with_stdin(
        &t,
        &[
            "scan",
            "-",
            "--stdin-name",
            "config/prod.env",
            "--format",
            "json",
        ],
        input.as_bytes(),
    );
    assert_eq!(r.expect(1).locations(), ["config/prod.env:1:7:1:47"]);
    let r = with_stdin(
        &t,
        &[
            "scan",
            "-",
            "--stdin-name",
            "vendor/x.env",
            "--exclude",
            "vendor/",
            "--format",
            "json",
        ],
        input.as_bytes(),
    );
    r.expect(0);
    assert_eq!(
        r.summary_line("not scanned"),
        Some("not scanned: 1 excluded")
    );
}

/// `cat app.env | scanner scan --stdin-name app.env` (without the path `-`)
/// scanned the current directory and exited 0: what was piped in, token and
/// all, passed unread, without a word. A note says so now.
#[test]
fn stdin_name_without_dash_says_stdin_is_not_scanned() {
    let t = Tree::new();
    t.write("a.txt", "nothing here\n");
    let input = format!("TOKEN={}\n", token(2));
    let args = [
        "scan",
        "--stdin-name",
        "app.env",
        "--format",
        "json",
        "a.txt",
    ];
    let r = with_stdin(&t, &args, input.as_bytes());
    assert_eq!(r.expect(0).findings().len(), 0);
    assert_eq!(
        r.stderr.lines().next(),
        Some(
            "scanner: note: --stdin-name does nothing without the path `-`: standard input is \
             not scanned (add `-`: `scanner scan - --stdin-name NAME`)"
        )
    );
    // With `-`, no note.
    let r = with_stdin(
        &t,
        &["scan", "-", "--stdin-name", "app.env"],
        input.as_bytes(),
    );
    r.expect(1);
    assert!(!r.stderr.contains("note:"), "{}", r.stderr);
}

/// `/dev/stdin` on a pipe is standard input, as `-` is: with `--files-from -`
/// the list took all of it and `/dev/stdin` was scanned empty (`scanned 2
/// files`, exit 0), or the other way round with `--files-from /dev/stdin -`.
/// Refused up front, as `--files-from - -` is.
#[test]
fn files_from_stdin_and_dev_stdin_are_refused_together() {
    let t = Tree::new();
    t.write("a.txt", "nothing here\n");
    for (list, path) in [("-", "/dev/stdin"), ("/dev/stdin", "-")] {
        let args = ["scan", "--format", "json", "--files-from", list, path];
        let r = with_stdin(&t, &args, b"a.txt\n");
        r.expect(2);
        assert_eq!(r.stdout, "");
        assert_eq!(
            r.stderr,
            format!("scanner: error: --files-from {list} and the path {path} both read standard input\n")
        );
    }
    // A list from a file, and /dev/stdin: each read once.
    t.write("list", "a.txt\n");
    let input = format!("TOKEN={}\n", token(5));
    let args = [
        "scan",
        "--format",
        "json",
        "--files-from",
        "list",
        "/dev/stdin",
    ];
    let r = with_stdin(&t, &args, input.as_bytes());
    assert_eq!(r.expect(1).locations(), ["/dev/stdin:1:7:1:47"]);
}

/// Standard input named twice is read once, under its first name, as a file
/// named twice is: `- -` and `- /dev/stdin` read the pipe again, empty
/// (`scanned 2 files`), and `scan - a.env < a.env` reported the token of
/// a.env twice, as `<stdin>` and as `a.env`.
#[test]
fn stdin_named_twice_is_read_once() {
    let t = Tree::new();
    let input = format!("TOKEN={}\n", token(6));
    for second in ["-", "/dev/stdin"] {
        let r = with_stdin(
            &t,
            &["scan", "--format", "json", "-", second],
            input.as_bytes(),
        );
        assert_eq!(r.expect(1).locations(), ["<stdin>:1:7:1:47"]);
        assert_eq!(
            r.stderr.lines().next().map(|l| &l[..14]),
            Some("scanned 1 file")
        );
    }
    t.write("a.env", &input);
    let out = scanner(t.path())
        .args(["scan", "--format", "json", "-", "a.env"])
        .stdin(fs::File::open(t.join("a.env")).unwrap())
        .output()
        .unwrap();
    let r = Run::from_output(out);
    assert_eq!(r.expect(1).locations(), ["<stdin>:1:7:1:47"]);
}

/// A stream larger than any buffer, with a secret at its end and one across
/// a chunk boundary: read in chunks, each found once.
#[test]
fn a_long_stream_is_read_in_chunks() {
    let t = Tree::new();
    let mut input = "filler line of text\n".repeat(40_000).into_bytes();
    input.extend(format!("A={}\n", token(3)).as_bytes());
    input.extend("more\n".repeat(10).as_bytes());
    input.extend(format!("B={}\n", token(4)).as_bytes());
    let r = with_stdin(
        &t,
        &["scan", "-", "--format", "json", "--chunk-size", "4096"],
        &input,
    );
    assert_eq!(
        r.expect(1).locations(),
        ["<stdin>:40001:3:40001:43", "<stdin>:40012:3:40012:43"]
    );
}

#[cfg(unix)]
#[test]
fn a_named_fifo_is_read_as_a_stream() {
    let t = Tree::new();
    let fifo = t.join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::write(fifo, format!("x\nK={}\n", token(5))).unwrap())
    };
    let r = Run::from_output(
        scanner(t.path())
            .args(["scan", "pipe", "--format", "json"])
            .output()
            .unwrap(),
    );
    writer.join().unwrap();
    assert_eq!(r.expect(1).locations(), ["pipe:2:3:2:43"]);
}

#[cfg(unix)]
#[test]
fn a_device_named_on_the_command_line_is_an_error_and_walked_fifos_are_skipped() {
    let t = Tree::new();
    t.write("a.txt", "clean\n");
    let r = t.run(&["scan", "/dev/null"]);
    r.expect(2);
    assert!(
        r.stderr.contains("/dev/null: a device or socket"),
        "{}",
        r.stderr
    );
    fs::create_dir_all(t.join("sub")).unwrap();
    let made = Command::new("mkfifo").arg(t.join("sub/fifo")).status();
    assert!(made.unwrap().success());
    let r = t.run(&["scan", "."]);
    r.expect(0);
    assert_eq!(
        r.summary_line("not scanned"),
        Some("not scanned: 1 special file")
    );
}

/// `scanner scan . > report.txt` inside the tree: the report is not scanned
/// (with --show-secrets it would otherwise report every finding twice).
#[cfg(unix)]
#[test]
fn stdout_redirected_into_the_tree_is_not_scanned() {
    let t = Tree::new();
    t.write("leak.env", format!("K={}\n", token(6)));
    let report = fs::File::create(t.join("report.txt")).unwrap();
    let out = scanner(t.path())
        .args([
            "scan",
            "--show-secrets",
            "--format",
            "text",
            "--color",
            "never",
            "--threads",
            "1",
        ])
        .stdout(report)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = fs::read_to_string(t.join("report.txt")).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("leak.env:1:3"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not scanned: 1 own report"), "{stderr}");
}

/// SIGINT, SIGTERM and SIGHUP mid-scan: exit 130 / 143 / 129, and neither the report nor
/// its temp file is left behind. (A hangup, the terminal or ssh session closed under a long
/// `scan -o`, killed the process and left `.report.json.scanner-PID-0.tmp`.)
#[cfg(unix)]
#[test]
fn a_signal_stops_the_scan_cleanly() {
    for (sig, code) in common::stopping_signals() {
        let t = Tree::new();
        let mut child = scanner(t.path())
            .args(["scan", "-", "-o", "report.json", "--format", "json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Keep the stream open so the scan is still running when the signal comes.
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(format!("K={}\n", token(7)).as_bytes())
            .unwrap();
        let started = Instant::now();
        // Wait until the temp report exists: the scan is under way.
        while !fs::read_dir(t.path())
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
        {
            assert!(started.elapsed() < Duration::from_secs(20), "no temp file");
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(100));
        let killed = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        drop(stdin);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let left: Vec<_> = fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

/// A signal ignored when the scanner starts stays ignored, and the scan finishes with its report:
/// under `nohup` (SIGHUP) the run was asked to outlive its terminal, and a non-interactive shell
/// starts `scanner scan . &` with SIGINT ignored, so that the script's Ctrl-C leaves it running.
#[cfg(unix)]
#[test]
fn a_signal_ignored_at_the_start_stays_ignored() {
    for sig in ["HUP", "INT"] {
        an_ignored_signal_does_not_stop_the_scan(sig);
    }
}

#[cfg(unix)]
fn an_ignored_signal_does_not_stop_the_scan(sig: &str) {
    let t = Tree::new();
    let mut child = Command::new("sh")
        .current_dir(t.path())
        .args([
            "-c",
            &format!("trap '' {sig}; exec \"$0\" scan - -o report.json --format json"),
            env!("CARGO_BIN_EXE_scanner"),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("K={}\n", token(7)).as_bytes())
        .unwrap();
    let started = Instant::now();
    while !fs::read_dir(t.path())
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
    {
        assert!(started.elapsed() < Duration::from_secs(20), "no temp file");
        std::thread::sleep(Duration::from_millis(10));
    }
    common::signal(&child, &format!("-{sig}"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "stopped by an ignored SIG{sig}"
    );
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(t.join("report.json")).unwrap()).unwrap();
    assert_eq!(report.as_array().unwrap().len(), 1);
}

/// `-o` onto special files: /dev/null stays a device, the report of `-o
/// /dev/stdout` reaches stdout, and a directory is refused before the scan.
#[cfg(unix)]
#[test]
fn output_to_special_files_writes_through_them() {
    use std::os::unix::fs::FileTypeExt;
    let t = Tree::new();
    t.write("leak.env", format!("K={}\n", token(8)));
    t.run(&["scan", "-o", "/dev/null"]).expect(1);
    assert!(fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    let r = t.run(&["scan", "-o", "/dev/stdout", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), ["leak.env:1:3:1:43"]);
    fs::create_dir(t.join("out")).unwrap();
    let r = t.run(&["scan", "-o", "out"]);
    r.expect(2);
    assert!(r.stderr.contains("out: is a directory"), "{}", r.stderr);
    assert_eq!(r.stdout, "");
}

/// UTF-16 text (LE with a BOM, as regedit writes it; BE without one) is
/// transcoded and scanned: line and column are those of the text.
#[test]
fn utf16_files_are_transcoded() {
    let t = Tree::new();
    let reg = format!(
        "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_CURRENT_USER\\Software\\App]\r\n\"Token\"=\"{}\"\r\n",
        token(9)
    );
    let mut le = vec![0xFF, 0xFE];
    le.extend(reg.encode_utf16().flat_map(u16::to_le_bytes));
    t.write("export.reg", le);
    let ps = format!("# deploy\n$token = '{}'\n", token(10));
    let be: Vec<u8> = ps.encode_utf16().flat_map(u16::to_be_bytes).collect();
    t.write("deploy.ps1", be);
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(
        r.expect(1).locations(),
        ["deploy.ps1:2:11:2:51", "export.reg:4:10:4:50"]
    );
}

/// UTF-16 text is transcoded on standard input, inside archives and in git
/// blobs too: a regedit export piped in, in a zip and gzipped, staged and
/// committed, a BE script in the zip, and a member over 1 MiB (read as it
/// is inflated, not whole). They were skipped as binary, exit 0.
#[test]
fn utf16_text_on_stdin_and_in_archives_is_transcoded() {
    let t = Tree::new();
    let reg = format!(
        "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_CURRENT_USER\\Software\\App]\r\n\"Token\"=\"{}\"\r\n",
        token(31)
    );
    let mut le = vec![0xFF, 0xFE];
    le.extend(reg.encode_utf16().flat_map(u16::to_le_bytes));
    t.write("export.reg", &le);
    let ps = format!("# deploy\n$token = '{}'\n", token(32));
    t.write(
        "deploy.ps1",
        ps.encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect::<Vec<u8>>(),
    );
    let big = format!("{}T={}\n", "a line of text\n".repeat(100_000), token(33));
    t.write(
        "big.txt",
        big.encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect::<Vec<u8>>(),
    );
    common::sh(
        t.path(),
        "zip -q u.zip export.reg deploy.ps1 big.txt && gzip export.reg && rm deploy.ps1 big.txt",
    );
    let r = t.run(&["scan", "--format", "json"]);
    assert_eq!(
        r.expect(1).locations(),
        [
            "export.reg.gz!export.reg:4:10:4:50",
            "u.zip!big.txt:100001:3:100001:43",
            "u.zip!deploy.ps1:2:11:2:51",
            "u.zip!export.reg:4:10:4:50",
        ]
    );
    let r = with_stdin(&t, &["scan", "--format", "json", "-"], &le);
    assert_eq!(r.expect(1).locations(), ["<stdin>:4:10:4:50"]);
    // And as a blob: staged, and in history.
    let repo = common::Repo::new();
    repo.write("export.reg", &le);
    repo.git(&["add", "export.reg"]);
    let r = repo.scan(&["scan", "--staged", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), ["export.reg:4:10:4:50"]);
    repo.commit("reg");
    let r = repo.scan(&["scan", "--history", "--format", "json"]);
    assert_eq!(r.expect(1).locations(), ["export.reg:4:10:4:50"]);
}

/// A log appended to while it is scanned is read up to its size at open, so that the scan
/// ends while a writer goes on: the scanner is stopped mid-read (SIGSTOP at the kernel's read
/// position), 8 MiB and a secret are appended, and it is resumed. It must report exactly the
/// size at open, and not the secret appended meanwhile.
#[cfg(target_os = "linux")]
#[test]
fn a_file_growing_during_the_scan_is_read_to_its_size_at_open() {
    let t = Tree::new();
    let line = "a line of log text, nothing secret in it\n";
    let log = t.write("app.log", line.repeat((16 << 20) / line.len()));
    let size = fs::metadata(&log).unwrap().len();
    let child = scanner(t.path())
        // One worker and no splitting: one descriptor reads the file front to back.
        .args(["scan", "--threads", "1", "--split-threshold", "0"])
        .args(["--chunk-size", "64K", "app.log", "--stats-json", "s.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::stop_mid_read(&child, &log, 1 << 20, size - (1 << 20));
    let mut f = fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(line.repeat((8 << 20) / line.len()).as_bytes())
        .unwrap();
    writeln!(f, "T={}", token(30)).unwrap();
    drop(f);
    common::signal(&child, "-CONT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(t.join("s.json")).unwrap()).unwrap();
    assert_eq!(stats["bytes"].as_u64(), Some(size));
}

/// A line `-` in `--files-from` is the file named `-` (`git diff
/// --name-only` lists one so), not standard input: its secret was missed,
/// exit 0, while whatever came on standard input was scanned in its place
/// (or the run waited on a terminal). On the command line `-` is still
/// standard input.
#[test]
fn a_dash_listed_in_files_from_is_a_file() {
    let t = Tree::new();
    t.write("-", format!("T={}\n", token(1)));
    t.write("list", "-\n");
    let stdin = format!("S={}\n", token(2));
    let run = with_stdin(
        &t,
        &["scan", "--format", "json", "--files-from", "list"],
        stdin.as_bytes(),
    );
    run.expect(1);
    assert_eq!(run.locations(), ["-:1:3:1:43"]);
    let run = with_stdin(
        &t,
        &["scan", "--format", "json", "--files-from", "-"],
        b"-\n",
    );
    assert_eq!(run.locations(), ["-:1:3:1:43"]);
    let run = with_stdin(&t, &["scan", "--format", "json", "-"], stdin.as_bytes());
    assert_eq!(run.locations(), ["<stdin>:1:3:1:43"]);
}

/// `scanner scan -` with standard input on a terminal, through a pty
/// (`script`), fed `input`: the pty's output (stdout and stderr, `\r\n`
/// lines) and the exit status.
#[cfg(target_os = "linux")]
fn on_a_terminal(t: &Tree, input: &[u8]) -> (String, Option<i32>) {
    let command = format!("{} scan --format json -", common::BIN);
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(t.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", t.path())
        .env("XDG_CONFIG_HOME", t.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) makes the pty");
    // Kept open until the end: the pty's end of input is the Ctrl-D typed.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("still reading the terminal after Ctrl-D");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

/// `scanner scan -` typed at a terminal waited silently behind the
/// spinner: it now says it reads standard input and how to end it, once,
/// and one Ctrl-D ends it (it took two: the sniff's read saw the end, the
/// scan read on). A pipe gets no such note.
#[cfg(target_os = "linux")]
#[test]
fn stdin_on_a_terminal_is_announced_and_one_ctrl_d_ends_it() {
    let note = "scanner: note: reading standard input (`-`) from the terminal: type or paste, \
                then end it with Ctrl-D";
    let t = Tree::new();
    let (out, code) = on_a_terminal(&t, format!("TOKEN={}\n\x04", token(1)).as_bytes());
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.trim_end() == note).count(),
        1,
        "{out}"
    );
    assert!(
        out.contains("\"path\":\"<stdin>\",\"path_bytes\":null,\"line\":1,"),
        "{out}"
    );
    // Nothing typed: one Ctrl-D, no finding.
    let (out, code) = on_a_terminal(&t, b"\x04");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.trim_end() == note).count(),
        1,
        "{out}"
    );
    let r = with_stdin(&t, &["scan", "-"], b"nothing\n");
    r.expect(0);
    assert!(!r.stderr.contains("reading standard input"), "{}", r.stderr);
}

/// A sysfs file reports a page (4096) whatever it holds, a procfs file 0:
/// neither size is a promise, and ending before it is no shrink (the
/// `shrank while being read` warning was false there). A real shrink on
/// a disk file system is still warned about (tests/cli.rs).
#[cfg(target_os = "linux")]
#[test]
fn a_sysfs_file_shorter_than_its_size_did_not_shrink() {
    let (sys, proc) = ("/sys/devices/system/cpu/online", "/proc/version");
    assert_eq!(fs::metadata(sys).unwrap().len(), 4096);
    assert_eq!(fs::metadata(proc).unwrap().len(), 0);
    let held = fs::read(sys).unwrap().len() + fs::read(proc).unwrap().len();
    assert!(held < 1000, "{held}");
    let t = Tree::new();
    let r = scanner(t.path())
        .args(["scan", sys, proc])
        .output()
        .unwrap();
    let r = Run::from_output(r);
    r.expect(0);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    let want = format!("scanned 2 files ({held} B) in ");
    assert!(lines[0].starts_with(&want), "{}", r.stderr);
}
