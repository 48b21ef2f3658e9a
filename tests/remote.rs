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
    let base = tempfile::tempdir().unwrap();
    let commit = serve_dir(base.path());
    let work = tempfile::tempdir().unwrap();
    let good = format!("file://{}/repo.git", base.path().display());
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
        &[
            "init",
            "-q",
            "--bare",
            "--object-format=sha256",
            "sha256.git",
        ],
    );
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

/// SIGTERM while git is cloning from a server that never answers: the clone is stopped and
/// its directory removed, and the run exits as a terminated scan does (143).
#[test]
fn a_clone_stopped_by_sigterm_leaves_nothing_behind() {
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
    common::signal(&child, "-TERM");
    let start = Instant::now();
    let status = child.wait().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(status.code(), Some(143));
    assert_no_clone_left(work.path());
}
