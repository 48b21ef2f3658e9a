//! `scanner scan --history URL` and `--repos-from`: remote repositories served by real git
//! servers on loopback (`git daemon`, `git http-backend` behind a small Python HTTP server
//! with basic auth), cloned into a private temporary directory and removed after the scan.

mod common;

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{git_in, isolate, scanner_in, token, Repo, Run, RULE};

const PASSWORD: &str = "s3cr3t-pw-17";

/// A server process, killed when the test ends (whatever the outcome).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port free on 127.0.0.1 now (the servers need a fixed one).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    /// Starts `cmd` (isolated, quiet) and waits until `port` accepts connections.
    fn start(cmd: &mut Command, port: u16) -> Server {
        let mut server = Server(
            isolate(cmd)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                server.0.try_wait().unwrap().is_none(),
                "the server on port {port} exited"
            );
            assert!(start.elapsed() < Duration::from_secs(10), "port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }
}

/// `base/repo.git`: a bare repository whose one commit adds `conf/app.env` with a token on
/// line 2. Returns the commit id.
fn serve_dir(base: &Path) -> String {
    let src = Repo::new();
    src.write("conf/app.env", format!("# app\nTOKEN={}\n", token(7)));
    src.git(&["add", "."]);
    src.commit("add config");
    git_in(
        base,
        &[
            "clone",
            "-q",
            "--bare",
            src.root.to_str().unwrap(),
            "repo.git",
        ],
    );
    let out = src.git_out(&["rev-parse", "HEAD"]);
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A repository served from a directory of its own ([`serve_dir`]), and a directory to scan
/// from: `url` is the served repository's `file://` URL, `commit` the commit of its token.
/// (A test that does not use `base` binds it all the same, as `_base`: the directory lives
/// as long as the binding.)
struct Served {
    base: tempfile::TempDir,
    work: tempfile::TempDir,
    url: String,
    commit: String,
}

fn served() -> Served {
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let url = format!("file://{}/repo.git", base.path().display());
    let work = tempfile::tempdir().unwrap();
    Served {
        base,
        work,
        url,
        commit,
    }
}

/// Runs the scanner in `work` with `TMPDIR=work/tmp` and the git config `global`.
fn scan(work: &Path, global: &Path, args: &[&str]) -> Run {
    let tmp = work.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    Run::from_output(
        scanner_in(work)
            .env("TMPDIR", &tmp)
            .env("GIT_CONFIG_GLOBAL", global)
            .args(["scan", "--history"])
            .args(match args.contains(&"--format") {
                true => &[][..],
                false => &["--format", "json"][..],
            })
            .args(args)
            .output()
            .unwrap(),
    )
}

/// The clones are gone: the private temporary directory holds nothing.
#[track_caller]
fn assert_no_clone_left(work: &Path) {
    let left: Vec<_> = std::fs::read_dir(work.join("tmp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `path:line commit` of every finding, sorted.
fn found(run: &Run) -> Vec<String> {
    let mut v: Vec<String> = run
        .findings()
        .iter()
        .map(|f| {
            assert_eq!(f.rule_id, RULE, "{f:?}");
            format!("{}:{} {}", f.path, f.line, f.commit.as_ref().unwrap().id)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_git_daemon_repository_is_cloned_scanned_and_removed() {
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let port = free_port();
    // `git-daemon` itself: `git daemon` would run it as a child that outlives a kill.
    let exec_path = isolate(Command::new("git").arg("--exec-path"))
        .output()
        .unwrap()
        .stdout;
    let daemon = Path::new(std::str::from_utf8(&exec_path).unwrap().trim()).join("git-daemon");
    let _server = Server::start(
        Command::new(daemon)
            .args(["--reuseaddr", "--export-all", "--listen=127.0.0.1"])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.path().display()))
            .arg(base.path()),
        port,
    );
    let work = tempfile::tempdir().unwrap();
    let url = format!("git://127.0.0.1:{port}/repo.git");
    let run = scan(work.path(), Path::new("/dev/null"), &[&url]);
    assert_eq!(
        found(run.expect(1)),
        [format!("{url}/conf/app.env:2 {commit}")]
    );
    assert_no_clone_left(work.path());
}

/// A CGI gateway to `git http-backend` behind basic auth (user `alice`, [`PASSWORD`]).
const HTTP_SERVER: &str = r#"
import base64, http.server, os, subprocess, sys
root, port, password = sys.argv[1], int(sys.argv[2]), sys.argv[3]
want = "Basic " + base64.b64encode(("alice:" + password).encode()).decode()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self): self.cgi()
    def do_POST(self): self.cgi()
    def cgi(self):
        if self.headers.get("Authorization") != want:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1",
                   REQUEST_METHOD=self.command, PATH_INFO=path, QUERY_STRING=query,
                   REMOTE_USER="alice", CONTENT_TYPE=self.headers.get("Content-Type", ""))
        for k, v in self.headers.items():
            env["HTTP_" + k.upper().replace("-", "_")] = v
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"#;

#[test]
fn an_http_repository_behind_basic_auth_takes_credentials_from_git_and_never_prints_them() {
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let port = free_port();
    let _server = Server::start(
        Command::new("python3")
            .args(["-c", HTTP_SERVER])
            .arg(base.path())
            .arg(port.to_string())
            .arg(PASSWORD),
        port,
    );
    let work = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/repo.git");
    let expected = [format!("{url}/conf/app.env:2 {commit}")];
    let no_password = |run: &Run| {
        assert!(!run.stdout.contains(PASSWORD), "{}", run.stdout);
        assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    };

    // 1. From git's credential helper (`store`), configured in the test's global config.
    let store = work.path().join("credentials");
    std::fs::write(
        &store,
        format!("http://alice:{PASSWORD}@127.0.0.1:{port}\n"),
    )
    .unwrap();
    let global = work.path().join("gitconfig");
    std::fs::write(
        &global,
        format!(
            "[credential]\n\thelper = store --file={}\n",
            store.display()
        ),
    )
    .unwrap();
    let run = scan(work.path(), &global, &[&url]);
    assert_eq!(found(run.expect(1)), expected);
    no_password(&run);

    // 2. In the URL: the report names it without user and password.
    let with_password = format!("http://alice:{PASSWORD}@127.0.0.1:{port}/repo.git");
    let run = scan(work.path(), Path::new("/dev/null"), &[&with_password]);
    assert_eq!(found(run.expect(1)), expected);
    no_password(&run);
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--format", "sarif", &with_password],
    );
    run.expect(1);
    no_password(&run);

    // 3. A wrong password: a warning naming the URL (redacted), exit 2, no prompt.
    let wrong = format!("http://alice:wrong-{PASSWORD}@127.0.0.1:{port}/repo.git");
    let run = scan(work.path(), Path::new("/dev/null"), &[&wrong]);
    run.expect(2);
    assert_eq!(run.findings().len(), 0);
    no_password(&run);
    assert!(
        run.stderr.contains(&format!(
            "scanner: warning: {url}: cannot clone, not scanned: "
        )),
        "{}",
        run.stderr
    );
    assert_no_clone_left(work.path());
}

#[test]
fn repos_from_scans_the_good_url_and_warns_about_the_failing_one() {
    let Served {
        base,
        work,
        url: good,
        commit,
    } = served();
    let bad = format!("file://{}/missing.git", base.path().display());
    let list = work.path().join("repos.txt");
    std::fs::write(&list, format!("# remotes\n{bad}\n\n{good}\n")).unwrap();
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--repos-from", list.to_str().unwrap()],
    );
    assert_eq!(
        found(run.expect(2)),
        [format!("{good}/conf/app.env:2 {commit}")]
    );
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("scanner: warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(
        warnings[0].starts_with(&format!(
            "scanner: warning: {bad}: cannot clone, not scanned: "
        )),
        "{}",
        run.stderr
    );
    assert_no_clone_left(work.path());
}

/// A remote repository that clones but cannot be scanned (SHA-256) is warned about once,
/// by its URL: not by the temporary directory it was cloned into, and without that path
/// twice. A directory of local repositories names the failing one once, by its path.
#[test]
fn a_remote_that_cannot_be_scanned_is_named_by_its_url_once() {
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let sha256 = base.path().join("sha256.git");
    git_in(
        base.path(),
        &["init", "-q", "--object-format=sha256", "sha256.git"],
    );
    // A commit: a repository with none is refused before its format is looked at.
    git_in(&sha256, &["commit", "-q", "--allow-empty", "-m", "first"]);
    let work = tempfile::tempdir().unwrap();
    let good = format!("file://{}/repo.git", base.path().display());
    let bad = format!("file://{}", sha256.display());
    let list = work.path().join("repos.txt");
    std::fs::write(&list, format!("{bad}\n{good}\n")).unwrap();
    let warnings = |run: &Run| -> Vec<String> {
        run.stderr
            .lines()
            .filter(|l| l.starts_with("scanner: warning:"))
            .map(str::to_string)
            .collect()
    };
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--repos-from", list.to_str().unwrap()],
    );
    assert_eq!(
        found(run.expect(2)),
        [format!("{good}/conf/app.env:2 {commit}")]
    );
    assert_eq!(
        warnings(&run),
        [format!(
            "scanner: warning: {bad}: SHA-256 repositories are not supported"
        )]
    );
    assert_no_clone_left(work.path());

    // Local: `--history DIR` over the same two repositories.
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &[base.path().to_str().unwrap()],
    );
    assert_eq!(
        found(run.expect(2)),
        [format!("repo.git/conf/app.env:2 {commit}")]
    );
    assert_eq!(
        warnings(&run),
        [format!(
            "scanner: warning: {}: SHA-256 repositories are not supported",
            sha256.display()
        )]
    );
}

/// SIGTERM (or SIGHUP: the terminal closed) while git is cloning from a server that never
/// answers: the clone is stopped and its directory removed, and the run exits as a terminated
/// scan does (143, 129). A hangup killed the process and left the clone in $TMPDIR.
#[test]
fn a_clone_stopped_by_sigterm_leaves_nothing_behind() {
    for (sig, code) in common::stopping_signals() {
        if sig != "-INT" {
            clone_stopped_by(sig, code);
        }
    }
}

fn clone_stopped_by(sig: &str, code: i32) {
    // Accepts connections and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let work = tempfile::tempdir().unwrap();
    let tmp = work.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut child = scanner_in(work.path())
        .env("TMPDIR", &tmp)
        .args([
            "scan",
            "--history",
            &format!("http://127.0.0.1:{port}/x.git"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // git is connected: the clone's directory exists and the server holds the connection.
    let (_conn, _) = silent.accept().unwrap();
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1);
    common::signal(&child, sig);
    let start = Instant::now();
    let status = child.wait().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{sig}: {:?}",
        start.elapsed()
    );
    assert_eq!(status.code(), Some(code), "{sig}");
    assert_no_clone_left(work.path());
}

/// A password in a `file://` URL (git clones it, ignoring the user information): no file the
/// run writes holds it, `--stats-json`'s record of the options included.
#[test]
fn a_password_in_the_url_is_in_no_file_the_run_writes() {
    let Served {
        base,
        work,
        url,
        commit,
    } = served();
    let with_password = format!("file://alice:{PASSWORD}@{}/repo.git", base.path().display());
    let stats = work.path().join("stats.json");
    let baseline = work.path().join("baseline.json");
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--stats-json", stats.to_str().unwrap(), &with_password],
    );
    assert_eq!(
        found(run.expect(1)),
        [format!("{url}/conf/app.env:2 {commit}")]
    );
    assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    let stats = std::fs::read_to_string(&stats).unwrap();
    assert!(!stats.contains(PASSWORD), "{stats}");
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(
        stats["run"]["options"]["paths"],
        serde_json::json!([url]),
        "{stats}"
    );
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &[
            "--write-baseline",
            baseline.to_str().unwrap(),
            &with_password,
        ],
    );
    run.expect(0);
    let written = std::fs::read_to_string(&baseline).unwrap();
    assert!(!written.contains(PASSWORD), "{written}");
    assert_no_clone_left(work.path());
}

/// A list as people and tools write it: CRLF line ends, indentation, comments, the same URL
/// twice, and once more with credentials. Each repository is cloned and reported once; `-`
/// reads the list from stdin.
#[test]
fn repos_from_reads_each_url_once_from_a_file_or_stdin() {
    let Served {
        base: _base,
        work,
        url: good,
        commit,
    } = served();
    // The same repository again, then with a user and password (git ignores them in a
    // `file://` URL), then with a trailing slash: scanned once.
    let with_password = good.replacen("file://", &format!("file://alice:{PASSWORD}@"), 1);
    // Saved by an editor that starts the file with a byte order mark, before the first URL.
    let text = format!(
        "\u{feff}{good}\r\n# remotes\r\n  {good}  \r\n\r\n\t# again\r\n{with_password}\r\n{good}/\r\n"
    );
    let list = work.path().join("repos.txt");
    std::fs::write(&list, &text).unwrap();
    let expected = [format!("{good}/conf/app.env:2 {commit}")];
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--repos-from", list.to_str().unwrap()],
    );
    assert_eq!(found(run.expect(1)), expected);

    let tmp = work.path().join("tmp");
    let mut child = scanner_in(work.path())
        .env("TMPDIR", &tmp)
        .args(["scan", "--history", "--format", "json", "--repos-from", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let run = Run::from_output(child.wait_with_output().unwrap());
    assert_eq!(found(run.expect(1)), expected);
    assert_no_clone_left(work.path());

    // A line that is not UTF-8 is named; nothing is cloned.
    std::fs::write(&list, [good.as_bytes(), b"\n# ok\n\xff\xfe\n"].concat()).unwrap();
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--repos-from", list.to_str().unwrap()],
    );
    run.expect(2);
    assert_eq!(
        run.stderr,
        format!(
            "scanner: error: --repos-from {}: line 3 is not UTF-8\n",
            list.display()
        )
    );
    assert_no_clone_left(work.path());
}

/// The command lines of `pid` and every process below it.
#[cfg(target_os = "linux")]
fn command_lines_under(pid: u32) -> Vec<String> {
    let mut tree = vec![pid];
    let mut lines = Vec::new();
    // Parents start before their children: a few passes over /proc find every descendant.
    for _ in 0..4 {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            let ppid: u32 = after.split(' ').nth(1).unwrap().parse().unwrap();
            if tree.contains(&ppid) && !tree.contains(&p) {
                tree.push(p);
            }
        }
    }
    for p in &tree {
        if let Ok(cmd) = std::fs::read(format!("/proc/{p}/cmdline")) {
            lines.push(String::from_utf8_lossy(&cmd).replace('\0', " "));
        }
    }
    lines
}

/// The command lines of the scanner and everything under it while git clones the one URL
/// of a `--repos-from` list (`url` of a port) from a server that accepts and never
/// answers; the scan is then stopped (SIGTERM), and leaves no clone behind.
#[cfg(target_os = "linux")]
fn command_lines_while_cloning(url: impl Fn(u16) -> String) -> Vec<String> {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let work = tempfile::tempdir().unwrap();
    let tmp = work.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let list = work.path().join("repos.txt");
    std::fs::write(&list, format!("{}\n", url(port))).unwrap();
    let mut child = scanner_in(work.path())
        .env("TMPDIR", &tmp)
        .args(["scan", "--history", "--repos-from", list.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Polled: a transport that never connects fails the test instead of hanging it.
    silent.set_nonblocking(true).unwrap();
    let start = Instant::now();
    let _conn = loop {
        match silent.accept() {
            Ok((conn, _)) => break conn,
            Err(_) if start.elapsed() < Duration::from_secs(20) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => {
                common::signal(&child, "-TERM");
                child.wait().unwrap();
                panic!("git never connected to port {port}: {e}");
            }
        }
    };
    let lines = command_lines_under(child.id());
    common::signal(&child, "-TERM");
    child.wait().unwrap();
    assert!(
        lines.iter().any(|l| l.contains("clone")),
        "git is not running: {lines:#?}"
    );
    assert_no_clone_left(work.path());
    lines
}

/// A password kept in a `--repos-from` list stays out of every command line: git and its
/// transport helper carry their URL as an argument, which any local user can read (`ps`).
/// It reaches git through a credential helper instead, percent-encoding decoded as git does.
#[cfg(target_os = "linux")]
#[test]
fn a_password_in_a_list_is_on_no_command_line() {
    let hidden = "hidden-in-list-pw-29";
    let lines =
        command_lines_while_cloning(|port| format!("http://alice:{hidden}@127.0.0.1:{port}/x.git"));
    assert!(!lines.iter().any(|l| l.contains(hidden)), "{lines:#?}");

    // The same from the real server, with a password that needs percent-encoding.
    let work = tempfile::tempdir().unwrap();
    let list = work.path().join("repos.txt");
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let port = free_port();
    let password = format!("{PASSWORD}:@/%+ x");
    let _server = Server::start(
        Command::new("python3")
            .args(["-c", HTTP_SERVER])
            .arg(base.path())
            .arg(port.to_string())
            .arg(&password),
        port,
    );
    let encoded = password
        .replace('%', "%25")
        .replace(':', "%3A")
        .replace('@', "%40")
        .replace('/', "%2F")
        .replace('+', "%2B")
        .replace(' ', "%20");
    std::fs::write(
        &list,
        format!("http://alice:{encoded}@127.0.0.1:{port}/repo.git\n"),
    )
    .unwrap();
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--repos-from", list.to_str().unwrap()],
    );
    assert_eq!(
        found(run.expect(1)),
        [format!(
            "http://127.0.0.1:{port}/repo.git/conf/app.env:2 {commit}"
        )]
    );
    assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    assert_no_clone_left(work.path());
}

/// ssh never uses a password in its URL (`ssh://git:TOKEN@host:2222/...`), and git reads
/// its `:` as a port's: it ran ssh with the host `host:2222` ("Could not resolve hostname")
/// and put the password on the command lines of git and ssh. It is dropped: ssh connects to
/// the URL's port as the URL's user, and the password is on no command line.
#[cfg(target_os = "linux")]
#[test]
fn a_password_in_an_ssh_url_is_dropped() {
    let hidden = "hidden-ssh-pw-41";
    let lines = command_lines_while_cloning(|port| {
        format!("ssh://git:{hidden}@127.0.0.1:{port}/org/x.git")
    });
    assert!(!lines.iter().any(|l| l.contains(hidden)), "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("ssh ") && l.contains("git@127.0.0.1")),
        "{lines:#?}"
    );
}

/// A user in a listed URL (a token often is: `https://TOKEN@host/org/repo.git`) stays out of
/// every command line too, and means to git what it did in the URL: the user its helpers are
/// asked a password for.
#[cfg(target_os = "linux")]
#[test]
fn a_user_in_a_url_is_on_no_command_line() {
    let token = "ghp-user-token-53";
    let lines =
        command_lines_while_cloning(|port| format!("http://{token}@127.0.0.1:{port}/x.git"));
    assert!(!lines.iter().any(|l| l.contains(token)), "{lines:#?}");
    let work = tempfile::tempdir().unwrap();

    // The real server: the user's own credential helper gives the password of the URL's
    // user, `alice`; without the user, git would have to ask for one and fail.
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let port = free_port();
    let _server = Server::start(
        Command::new("python3")
            .args(["-c", HTTP_SERVER])
            .arg(base.path())
            .arg(port.to_string())
            .arg(PASSWORD),
        port,
    );
    let global = work.path().join("gitconfig");
    std::fs::write(
        &global,
        format!(
            "[credential]\n\thelper = \"!f() {{ test $1 = get && echo password={PASSWORD}; }}; f\"\n"
        ),
    )
    .unwrap();
    let run = scan(
        work.path(),
        &global,
        &[&format!("http://alice@127.0.0.1:{port}/repo.git")],
    );
    assert_eq!(
        found(run.expect(1)),
        [format!(
            "http://127.0.0.1:{port}/repo.git/conf/app.env:2 {commit}"
        )]
    );
    assert_no_clone_left(work.path());
}

/// A baseline names a remote finding by its URL and path, whatever the current directory
/// and wherever the baseline file is: the same scan run from elsewhere still matches it.
#[test]
fn a_baseline_of_a_remote_scan_matches_from_any_directory() {
    let Served {
        base: _base,
        work,
        url,
        commit,
    } = served();
    let baseline = work.path().join("baseline.json");
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--write-baseline", baseline.to_str().unwrap(), &url],
    );
    assert_eq!(
        found(run.expect(0)),
        [format!("{url}/conf/app.env:2 {commit}")]
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    let paths: Vec<&str> = written["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [format!("{url}/conf/app.env")]);
    for dir in [work.path().to_path_buf(), work.path().join("a/b")] {
        std::fs::create_dir_all(&dir).unwrap();
        let run = scan(
            &dir,
            Path::new("/dev/null"),
            &["--baseline", baseline.to_str().unwrap(), &url],
        );
        assert_eq!(found(run.expect(0)), Vec::<String>::new(), "from {dir:?}");
        assert_no_clone_left(&dir);
    }
}

/// SARIF names a remote finding as the other formats do: its location is the URL (without
/// credentials) and the path, its commit the one that added it, and the run's
/// `versionControlProvenance` the URL.
#[test]
fn sarif_names_a_remote_finding_by_its_url() {
    let Served {
        base,
        work,
        url,
        commit,
    } = served();
    let with_password = format!("file://alice:{PASSWORD}@{}/repo.git", base.path().display());
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--format", "sarif", &with_password],
    );
    run.expect(1);
    assert!(!run.stdout.contains(PASSWORD), "{}", run.stdout);
    let sarif: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let sarif_run = &sarif["runs"][0];
    let results = sarif_run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif_run}");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        format!("{url}/conf/app.env")
    );
    assert_eq!(results[0]["properties"]["commit"]["id"], commit);
    let provenance = sarif_run["versionControlProvenance"].as_array().unwrap();
    assert_eq!(provenance.len(), 1, "{sarif_run}");
    assert_eq!(provenance[0]["repositoryUri"], url);
    assert_no_clone_left(work.path());
}

/// Each repository of a list is described in SARIF's `versionControlProvenance`, in the
/// list's order, though each is cloned only when the scan reaches it and removed after.
#[test]
fn sarif_describes_every_repository_of_a_list() {
    let (first, second) = (served(), served());
    let list = first.work.path().join("repos.txt");
    std::fs::write(&list, format!("{}\n{}\n", first.url, second.url)).unwrap();
    let run = scan(
        first.work.path(),
        Path::new("/dev/null"),
        &["--format", "sarif", "--repos-from", list.to_str().unwrap()],
    );
    run.expect(1);
    let sarif: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let described: Vec<(&str, &str)> = sarif["runs"][0]["versionControlProvenance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["repositoryUri"].as_str().unwrap(),
                v["revisionId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            (first.url.as_str(), first.commit.as_str()),
            (second.url.as_str(), second.commit.as_str())
        ]
    );
    assert_no_clone_left(first.work.path());
}

/// A revision the clone does not have (`--range`) is a warning naming the URL, never the
/// private directory the clone was in (gone when the user reads it).
#[test]
fn an_unknown_revision_names_the_url() {
    let Served {
        base: _base,
        work,
        url,
        ..
    } = served();
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["-q", "--range", "no-such-rev", &url],
    );
    assert_eq!(run.findings().len(), 0);
    run.expect(2);
    assert_eq!(
        run.stderr,
        format!("scanner: warning: {url}: unknown revision `no-such-rev`\n")
    );
    assert_no_clone_left(work.path());
}

/// Runs `scanner ARGS` on a pseudo-terminal (as a user at a prompt does) with `TMPDIR` and
/// `PATH` given; prints its exit status, or `still running` if it has not ended after
/// `timeout` seconds (then SIGINT ends it), and then what it wrote to the terminal.
const ON_A_TERMINAL: &str = r#"
import os, pty, select, signal, sys, time
tmp, path, timeout, argv = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(TMPDIR=tmp, PATH=path)
    os.execv(argv[0], argv)
out, status, end = b"", None, time.time() + timeout
while status is None and time.time() < end:
    if select.select([fd], [], [], 0.1)[0]:
        try:
            out += os.read(fd, 65536)
        except OSError:
            pass
    p, st = os.waitpid(pid, os.WNOHANG)
    if p:
        status = os.waitstatus_to_exitcode(st)
if status is None:
    os.kill(pid, signal.SIGINT)
    os.waitpid(pid, 0)
print("still running" if status is None else "exit %d" % status)
sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
"#;

/// ssh asks its questions (a new host's key, a passphrase) on the terminal, which a clone
/// running in its own process group cannot read: it would stop there for good. The clone
/// fails instead, with ssh's reason, as a missing credential does with git's own prompt.
#[cfg(target_os = "linux")]
#[test]
fn an_ssh_clone_that_would_ask_on_the_terminal_fails_instead_of_hanging() {
    let work = tempfile::tempdir().unwrap();
    let tmp = work.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // An `ssh` that asks what OpenSSH asks about a host it does not know, unless batch mode
    // forbids questions.
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let ssh = bin.join("ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\n\
         case \"$*\" in *BatchMode=yes*) echo 'Host key verification failed.' >&2; exit 255;; esac\n\
         printf 'Are you sure you want to continue connecting (yes/no)? ' >/dev/tty\n\
         read answer </dev/tty\n\
         exit 255\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&ssh).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&ssh, perms).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = isolate(&mut Command::new("python3"))
        .current_dir(work.path())
        .env("HOME", work.path())
        .args(["-c", ON_A_TERMINAL])
        .arg(&tmp)
        .arg(&path)
        .arg("10")
        .args([
            common::BIN,
            "scan",
            "-q",
            "--history",
            "git@example.invalid:o/r.git",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.lines().take(2).collect::<Vec<_>>(),
        [
            "exit 2",
            "scanner: warning: example.invalid:o/r.git: cannot clone, not scanned: \
             Host key verification failed.; fatal: Could not read from remote repository.; \
             Please make sure you have the correct access rights; and the repository exists."
        ],
        "{out}"
    );
    assert_no_clone_left(work.path());

    // An ssh command the user chose (core.sshCommand, GIT_SSH_COMMAND) is left as it is.
    let chosen = bin.join("my-ssh");
    std::fs::write(&chosen, "#!/bin/sh\necho \"my-ssh $*\" >&2\nexit 255\n").unwrap();
    std::fs::set_permissions(&chosen, std::fs::metadata(&ssh).unwrap().permissions()).unwrap();
    let global = work.path().join("gitconfig");
    std::fs::write(
        &global,
        format!("[core]\n\tsshCommand = {}\n", chosen.display()),
    )
    .unwrap();
    let url = "git@example.invalid:o/r.git";
    let expected = "scanner: warning: example.invalid:o/r.git: cannot clone, not scanned: \
         my-ssh git@example.invalid git-upload-pack 'o/r.git'; \
         fatal: Could not read from remote repository.; \
         Please make sure you have the correct access rights; and the repository exists.\n";
    let run = scan(work.path(), &global, &["-q", url]);
    run.expect(2);
    assert_eq!(run.stderr, expected);
    let run = Run::from_output(
        scanner_in(work.path())
            .env("TMPDIR", &tmp)
            .env("GIT_SSH_COMMAND", &chosen)
            .args(["scan", "-q", "--history", url])
            .output()
            .unwrap(),
    );
    run.expect(2);
    assert_eq!(run.stderr, expected);
    assert_no_clone_left(work.path());
}

/// A password with an unencoded `/` (as some generated passwords have) makes a URL git
/// cannot use: the warning says so without the password.
#[test]
fn a_password_git_cannot_parse_is_not_in_the_warning() {
    let work = tempfile::tempdir().unwrap();
    let hidden = "pass/word+17";
    let url = format!("https://alice:{hidden}@127.0.0.1:1/x.git");
    let run = scan(work.path(), Path::new("/dev/null"), &["-q", &url]);
    run.expect(2);
    assert!(!run.stderr.contains(hidden), "{}", run.stderr);
    assert!(
        run.stderr.starts_with(
            "scanner: warning: https://127.0.0.1:1/x.git: cannot clone, not scanned: \
             fatal: unable to access 'https://127.0.0.1:1/x.git/': "
        ),
        "{}",
        run.stderr
    );
    assert_no_clone_left(work.path());
}

/// `--repos-from`: each repository is cloned when the scan reaches it, the next one while it
/// is scanned. The first one's finding is out (jsonl, flushed per file) while the second's
/// server has not answered yet; cloning every repository first held it back for good.
#[test]
fn repos_from_reports_a_repository_before_the_next_one_is_cloned() {
    let Served {
        base: _base,
        work,
        url: good,
        commit,
    } = served();
    // Accepts connections and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let list = work.path().join("repos.txt");
    std::fs::write(&list, format!("{good}\nhttp://127.0.0.1:{port}/x.git\n")).unwrap();
    let tmp = work.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut child = scanner_in(work.path())
        .env("TMPDIR", &tmp)
        .args(["scan", "--history", "--format", "jsonl", "--repos-from"])
        .arg(&list)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(30));
    // The second clone is under way: its server holds the connection.
    let (_conn, _) = silent.accept().unwrap();
    common::signal(&child, "-TERM");
    assert_eq!(child.wait().unwrap().code(), Some(143));
    let line = line.expect("no finding while the second repository was being cloned");
    let finding: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (
            finding["path"].as_str().unwrap(),
            finding["line"].as_u64().unwrap(),
            finding["commit"]["id"].as_str().unwrap(),
        ),
        (format!("{good}/conf/app.env").as_str(), 2, commit.as_str())
    );
    assert_no_clone_left(work.path());
}

/// A `--repos-from` list of no URL (a script that made it failed) is an error naming it, not
/// a clean scan of nothing.
#[test]
fn an_empty_repos_from_list_is_an_error() {
    let work = tempfile::tempdir().unwrap();
    let list = work.path().join("repos.txt");
    std::fs::write(&list, "# generated\n\n").unwrap();
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["--repos-from", "repos.txt"],
    );
    run.expect(2);
    assert_eq!(
        run.stderr.trim_end(),
        "scanner: error: --repos-from repos.txt: lists no URL (one per line; blank lines and \
         `#` comments are skipped)"
    );
    assert_no_clone_left(work.path());
}

/// The configuration of a remote scan is the current directory's `.scanner.toml`, as
/// docs/precommit.md says (a clone is bare: it has no file to read): here one that disables
/// the rule, so the token is not reported, and the note names that file.
#[test]
fn a_remote_scan_takes_the_configuration_of_the_current_directory() {
    let Served {
        base: _base,
        work,
        url,
        commit: _,
    } = served();
    let config = work.path().join(".scanner.toml");
    std::fs::write(&config, format!("disable_rules = [\"{RULE}\"]\n")).unwrap();
    let run = scan(work.path(), Path::new("/dev/null"), &[&url]);
    assert_eq!(found(run.expect(0)), Vec::<String>::new());
    assert_eq!(
        run.stderr.lines().next(),
        Some(
            format!(
                "scanner: note: config {}",
                config.canonicalize().unwrap().display()
            )
            .as_str()
        )
    );
    assert_no_clone_left(work.path());
}

/// Shards of a remote scan must scan the same list: `scanner merge` refuses shards run
/// with another `--repos-from` (their union would pass for a scan of repositories that
/// no shard or only some shards read).
#[test]
fn merge_refuses_shards_of_different_repos_from_lists() {
    let Served {
        base: _base,
        work,
        url,
        commit: _,
    } = served();
    for (k, list) in [(1, "a.txt"), (2, "b.txt")] {
        std::fs::write(work.path().join(list), format!("{url}\n")).unwrap();
        let (out, stats) = (format!("s{k}.json"), format!("s{k}.stats.json"));
        let spec = format!("{k}/2");
        let args = ["--shard", &spec, "-o", &out, "--stats-json", &stats];
        scan(
            work.path(),
            Path::new("/dev/null"),
            &[&args[..], &["--repos-from", list]].concat(),
        );
    }
    let run = common::run_in(
        work.path(),
        &[
            "merge",
            "s1.json",
            "s1.stats.json",
            "s2.json",
            "s2.stats.json",
        ],
    );
    run.expect(2);
    assert_eq!(
        run.stderr,
        "scanner: error: shard 2/2 (s2.stats.json) was run with different options than \
         shard 1/2 (s1.stats.json) (compare `run.options` in their stats)\n"
    );
}

/// A web server that answers every request with a page (a sign-in page, a catch-all web
/// app) where a repository was expected: git takes it for an empty repository, and the scan
/// read nothing, exit 0 (a whole list behind a sign-in page passed as clean). It is now a
/// warning naming the URL, exit 2, and the other repositories are still scanned; so is a
/// repository that is really empty.
#[test]
fn a_url_that_clones_no_commit_is_a_warning() {
    let Served {
        base,
        work,
        url: good,
        commit,
    } = served();
    let port = free_port();
    let _server = Server::start(
        Command::new("python3").arg("-c").arg(format!(
            "import http.server\n\
             class H(http.server.BaseHTTPRequestHandler):\n\
             \x20   def do_GET(self):\n\
             \x20       b = b'<html>Sign in</html>'\n\
             \x20       self.send_response(200)\n\
             \x20       self.send_header('Content-Type', 'text/html')\n\
             \x20       self.send_header('Content-Length', str(len(b)))\n\
             \x20       self.end_headers()\n\
             \x20       self.wfile.write(b)\n\
             http.server.HTTPServer(('127.0.0.1', {port}), H).serve_forever()\n"
        )),
        port,
    );
    git_in(base.path(), &["init", "-q", "--bare", "empty.git"]);
    let page = format!("http://127.0.0.1:{port}/org/repo.git");
    let empty = format!("file://{}/empty.git", base.path().display());
    let list = work.path().join("repos.txt");
    std::fs::write(&list, format!("{page}\n{good}\n{empty}\n")).unwrap();
    let run = scan(
        work.path(),
        Path::new("/dev/null"),
        &["-q", "--repos-from", list.to_str().unwrap()],
    );
    assert_eq!(
        found(run.expect(2)),
        [format!("{good}/conf/app.env:2 {commit}")]
    );
    let warning = |url: &str| {
        format!(
            "scanner: warning: {url}: cloned no commit, nothing scanned: the repository is \
             empty, or no git repository answers at this URL (a web page does, such as a \
             sign-in page)\n"
        )
    };
    assert_eq!(run.stderr, [warning(&page), warning(&empty)].concat());
    assert_no_clone_left(work.path());
}

/// Without git on PATH, a remote repository cannot be cloned: the warning said only "cannot
/// clone: No such file or directory (os error 2)". It now names git, as the other git
/// commands' errors do.
#[test]
fn a_clone_without_git_names_git() {
    let Served {
        base: _base,
        work,
        url,
        commit: _,
    } = served();
    let tmp = work.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let run = Run::from_output(
        scanner_in(work.path())
            .env("TMPDIR", &tmp)
            .env("PATH", work.path().join("no-bin"))
            .args(["scan", "-q", "--history", &url])
            .output()
            .unwrap(),
    );
    run.expect(2);
    assert_eq!(
        run.stderr,
        format!(
            "scanner: warning: {url}: cannot clone: cannot run `git clone` (is git installed?): \
             No such file or directory (os error 2)\n"
        )
    );
    assert_no_clone_left(work.path());
}

/// A gitleaks rule scoped by `path` (`^config/`) and an allowlist's `paths` see a
/// repository's paths as gitleaks does, from its root: a remote repository's (and each of a
/// `--repos-from` list's) paths are reported led by the URL, and the rule saw that too, so
/// it never applied: `scanner scan --history URL` did not report the token it finds in a
/// clone of the same repository, exit 0.
#[test]
fn path_rules_see_a_remote_repositorys_own_paths() {
    let base = tempfile::tempdir().unwrap();
    let src = Repo::new();
    src.write("config/app.ini", "secret = Ab3dEf9hIj2kLm5n\n");
    src.write("vendor/lib.ini", "secret = Zq3dEf9hIj2kLm5n\n");
    src.git(&["add", "."]);
    src.commit("add config");
    let commit = String::from_utf8(src.git_out(&["rev-parse", "HEAD"]).stdout).unwrap();
    let commit = commit.trim();
    git_in(
        base.path(),
        &[
            "clone",
            "-q",
            "--bare",
            src.root.to_str().unwrap(),
            "repo.git",
        ],
    );
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join(".gitleaks.toml"),
        "[[rules]]\nid = \"cfg-secret\"\nregex = '''secret = ([A-Za-z0-9]{16})'''\n\
         keywords = [\"secret\"]\npath = '''^(config|vendor)/.*\\.ini$'''\n\n\
         [allowlist]\npaths = ['''^vendor/''']\n",
    )
    .unwrap();
    let url = format!("file://{}/repo.git", base.path().display());
    let list = work.path().join("repos.txt");
    std::fs::write(&list, format!("{url}\n")).unwrap();
    for args in [
        vec![url.as_str()],
        vec!["--repos-from", list.to_str().unwrap()],
    ] {
        let run = scan(work.path(), Path::new("/dev/null"), &args);
        let found: Vec<String> = run
            .expect(1)
            .findings()
            .iter()
            .map(|f| {
                format!(
                    "{} {}:{} {}",
                    f.rule_id,
                    f.path,
                    f.line,
                    f.commit.as_ref().unwrap().id
                )
            })
            .collect();
        assert_eq!(
            found,
            [format!("cfg-secret {url}/config/app.ini:1 {commit}")],
            "{args:?}"
        );
    }
    assert_no_clone_left(work.path());
}

/// `--exclude`, `.scanner.toml`'s `allow_paths` (and a rule's own), and `.gitleaksignore`
/// see a remote repository's paths from its root, as its rules do: they saw the path led by
/// the URL, so `--exclude 'tests/**'` left out nothing of `scanner scan --history URL` and
/// the accepted test fixture failed the scan (exit 1).
#[test]
fn path_filters_see_a_remote_repositorys_own_paths() {
    let base = tempfile::tempdir().unwrap();
    let src = Repo::new();
    src.write("conf/app.env", format!("TOKEN={}\n", token(7)));
    src.write("tests/fixture.env", format!("TOKEN={}\n", token(8)));
    src.git(&["add", "."]);
    src.commit("add config and a fixture");
    let commit = String::from_utf8(src.git_out(&["rev-parse", "HEAD"]).stdout).unwrap();
    let commit = commit.trim();
    let bare = [
        "clone",
        "-q",
        "--bare",
        src.root.to_str().unwrap(),
        "repo.git",
    ];
    git_in(base.path(), &bare);
    let url = format!("file://{}/repo.git", base.path().display());
    let conf = [format!("{url}/conf/app.env:1 {commit}")];
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join(".scanner.toml");
    let ignore = work.path().join(".gitleaksignore");
    let list = work.path().join("repos.txt");
    std::fs::write(&list, format!("{url}\n")).unwrap();
    let from_list = ["--repos-from", list.to_str().unwrap()];
    // (what the directory holds, the arguments, the summary's line of what was left out)
    let cases: [(&str, &str, &[&str], &str); 5] = [
        (
            "",
            "",
            &["--exclude", "tests/**", &url],
            "not scanned: 1 excluded",
        ),
        (
            "",
            "",
            &["--exclude", "/tests/", from_list[0], from_list[1]],
            "not scanned: 1 excluded",
        ),
        (
            "allow_paths = [\"tests/*.env\"]\n",
            "",
            &[&url],
            "not scanned: 1 allowlisted path",
        ),
        (
            "[rules.github-classic-pat]\nallow_paths = [\"/tests/\"]\n",
            "",
            &[&url],
            "suppressed: 1 config, 2 duplicate of a provider finding",
        ),
        (
            "",
            &format!("{commit}:tests/fixture.env:github-classic-pat:1\n"),
            &[&url],
            "suppressed: 2 duplicate of a provider finding, 1 gitleaksignore",
        ),
    ];
    for (toml, ignored, args, left_out) in cases {
        std::fs::write(&config, toml).unwrap();
        std::fs::write(&ignore, ignored).unwrap();
        let run = scan(work.path(), Path::new("/dev/null"), args);
        assert_eq!(found(run.expect(1)), conf, "{args:?} {toml}");
        let prefix = &left_out[..left_out.find(':').unwrap()];
        assert_eq!(run.summary_line(prefix), Some(left_out), "{args:?}");
    }
    assert_no_clone_left(work.path());
}

/// An HTTP server that answers git's first request with part of a response, then sends
/// nothing for a minute.
const STALLING_SERVER: &str = r#"
import http.server, sys, time
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/x-git-upload-pack-advertisement")
        self.send_header("Content-Length", "4096")
        self.end_headers()
        self.wfile.write(b"001e# service=git-upload-pack\n")
        self.wfile.flush()
        time.sleep(60)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"#;

/// A server that stalls mid-clone hung `scanner scan --history --repos-from LIST` for good:
/// neither git nor the scanner gave up. An http(s) clone now fails when less than a byte a
/// second arrives for git's `http.lowSpeedTime` (60 seconds unless the user sets it: here
/// the test's git config sets 2), with the usual warning naming the URL without its
/// password, and the next repository of the list is scanned.
#[test]
fn a_server_that_stalls_mid_clone_fails_the_clone_instead_of_hanging() {
    let Served {
        base: _base,
        work,
        url: good,
        commit,
    } = served();
    let port = free_port();
    let _server = Server::start(
        Command::new("python3")
            .args(["-c", STALLING_SERVER])
            .arg(port.to_string()),
        port,
    );
    let stalled = format!("http://127.0.0.1:{port}/repo.git");
    let list = work.path().join("repos.txt");
    let with_password = format!("http://alice:{PASSWORD}@127.0.0.1:{port}/repo.git");
    std::fs::write(&list, format!("{with_password}\n{good}\n")).unwrap();
    let global = work.path().join("gitconfig");
    std::fs::write(&global, "[http]\n\tlowSpeedTime = 2\n").unwrap();
    let start = Instant::now();
    let run = scan(
        work.path(),
        &global,
        &["--repos-from", list.to_str().unwrap()],
    );
    let took = start.elapsed();
    assert_eq!(
        found(run.expect(2)),
        [format!("{good}/conf/app.env:2 {commit}")]
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    let warning = format!("scanner: warning: {stalled}: cannot clone, not scanned: ");
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("scanner: warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].starts_with(&warning), "{}", run.stderr);
    assert!(warnings[0].contains("Operation too slow"), "{}", run.stderr);
    assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    assert_no_clone_left(work.path());
}

/// An scp-like URL with a password, `alice:PASSWORD@host:repo.git` (which git reads as host
/// `alice` and path `PASSWORD@host:repo.git`), was printed whole: in the findings' paths, in
/// SARIF, and in a failed clone's warning, git's reason included. Its user information is
/// removed as a `SCHEME://` URL's is. Here an ssh command of the test's git config runs
/// git's command in a directory that holds that path.
#[cfg(unix)]
#[test]
fn a_password_in_an_scp_like_url_is_never_printed() {
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let served = format!("{PASSWORD}@127.0.0.1:repo.git");
    std::fs::rename(base.path().join("repo.git"), base.path().join(&served)).unwrap();
    let work = tempfile::tempdir().unwrap();
    let ssh = work.path().join("ssh");
    let script = format!(
        "#!/bin/sh\nfor last; do :; done\ncd '{}' && exec sh -c \"$last\"\n",
        base.path().display()
    );
    std::fs::write(&ssh, script).unwrap();
    let mut perms = std::fs::metadata(&ssh).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&ssh, perms).unwrap();
    let global = work.path().join("gitconfig");
    let config = format!("[core]\n\tsshCommand = {}\n", ssh.display());
    std::fs::write(&global, config).unwrap();
    let list = work.path().join("repos.txt");
    let listed = format!("alice:{served}\nalice:{PASSWORD}@127.0.0.1:missing.git\n");
    std::fs::write(&list, listed).unwrap();
    let run = scan(
        work.path(),
        &global,
        &["--repos-from", list.to_str().unwrap()],
    );
    assert_eq!(
        found(run.expect(2)),
        [format!("127.0.0.1:repo.git/conf/app.env:2 {commit}")]
    );
    assert_eq!(
        run.stderr.lines().next().unwrap(),
        "scanner: warning: 127.0.0.1:missing.git: cannot clone, not scanned: fatal: \
         '127.0.0.1:missing.git' does not appear to be a git repository; fatal: Could not \
         read from remote repository.; Please make sure you have the correct access rights; \
         and the repository exists."
    );
    assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    assert!(!run.stdout.contains(PASSWORD), "{}", run.stdout);
    let url = format!("alice:{served}");
    let run = scan(work.path(), &global, &["--format", "sarif", &url]);
    run.expect(1);
    for named in [
        "\"uri\": \"127.0.0.1%3Arepo.git/conf/app.env\"",
        "\"repositoryUri\": \"ssh://127.0.0.1/repo.git\"",
    ] {
        assert!(run.stdout.contains(named), "{named}\n{}", run.stdout);
    }
    assert!(!run.stdout.contains(PASSWORD), "{}", run.stdout);
    assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    assert_no_clone_left(work.path());
}
