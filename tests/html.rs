//! `--format html`: the page as written (self-contained, redacted, escaped, its embedded
//! findings and their lines of context), and the page as a real browser shows it: Debian's
//! `chromium`, headless, either dumps the DOM after the page's script has applied the view
//! the URL fragment names (and takes a screenshot into the test's output directory), or is
//! driven through the DevTools protocol (`tests/common/cdp.py`: typing, clicks, and the
//! 10,000-finding page without writing its 6 MB back).
//!
//! Chromium is required, not optional: `.ci/run` installs it (`apt-get install chromium`);
//! without it these tests fail and say so.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// The secrets of the tree [`triage_tree`] builds.
struct Secrets {
    tokens: Vec<String>,
    password: String,
}

/// Five findings: two high in `config/app.env` (on neighbouring lines, so each one's context
/// holds the other), one low in a test path, one medium generic password, one high in a file
/// whose path holds `</script><b>`.
fn triage_tree(t: &Tree) -> Secrets {
    let tokens: Vec<String> = (1..=4).map(token).collect();
    let password = ["Zx9q", "Lp2v", "R7mK", "4wTb"].concat();
    t.write(
        "config/app.env",
        format!(
            "# app\nuser = \"app\"\nother = \"{}\"\ntoken = \"{}\"\nport = 8080\n\n\nlast\n",
            tokens[1], tokens[0]
        ),
    );
    t.write("tests/fixture.env", format!("token = \"{}\"\n", tokens[2]));
    t.write(
        "src/settings.py",
        format!("DEBUG = False\ndb_password = \"{password}\"\n"),
    );
    t.write(
        "odd</script><b>.env",
        format!("token = \"{}\"\n", tokens[3]),
    );
    Secrets { tokens, password }
}

/// The page's embedded findings (the `findings` JSON element), parsed.
fn embedded(page: &str) -> Vec<Value> {
    let open = "<script type=\"application/json\" id=\"findings\">\n";
    let start = page.find(open).expect("no findings element") + open.len();
    let len = page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..start + len]).unwrap()
}

/// Runs `scanner scan --format html -o report.html ARGS .` in `t` and returns the page.
fn html_report(t: &Tree, args: &[&str]) -> String {
    let mut all = vec!["scan", "--format", "html", "-o", "report.html"];
    all.extend(args);
    all.push(".");
    t.run(&all).expect(1);
    std::fs::read_to_string(t.join("report.html")).unwrap()
}

#[test]
fn html_page_is_self_contained_redacted_and_escaped() {
    let t = Tree::new();
    let s = triage_tree(&t);
    let page = html_report(&t, &[]);

    // Nothing to fetch: no URL, no external script, style sheet, font or image.
    for needle in [
        "http://",
        "https://",
        "<link",
        "@import",
        "url(",
        "src=",
        "href=",
        "@font-face",
        "<img",
        "<iframe",
        "//cdn",
    ] {
        assert!(!page.contains(needle), "the page holds {needle:?}");
    }
    assert_eq!(page.matches("<script").count(), 2, "one data, one code");
    assert_eq!(page.matches("<script>").count(), 1);
    assert!(page.contains(
        "content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\""
    ));
    assert!(page.contains("<title>scanner report: 5 findings</title>"));

    // No byte of a secret beyond the redacted prefix: no 8 characters of any of them.
    let secrets: Vec<&str> = s
        .tokens
        .iter()
        .map(String::as_str)
        .chain([s.password.as_str()])
        .collect();
    for secret in &secrets {
        for w in secret.as_bytes()[4..].windows(8) {
            let w = std::str::from_utf8(w).unwrap();
            assert!(!page.contains(w), "{w} of a secret is in the page");
        }
    }

    // The path holding `</script><b>` is escaped in the data and read back whole.
    assert!(!page.contains("</script><b>"));
    assert!(!page.contains("<b>"));
    assert!(page.contains(r#""path":"./odd\u003c/script\u003e\u003cb\u003e.env""#));
    let findings = embedded(&page);
    assert_eq!(findings.len(), 5);
    let paths: Vec<(&str, u64, &str)> = findings
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap(),
                f["line"].as_u64().unwrap(),
                f["confidence"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            ("./config/app.env", 3, "high"),
            ("./config/app.env", 4, "high"),
            ("./odd</script><b>.env", 1, "high"),
            ("./src/settings.py", 2, "medium"),
            ("./tests/fixture.env", 1, "low"),
        ]
    );

    // Lines of context: three lines each side, each secret in them redacted, the file's
    // end without a phantom empty line.
    assert_eq!(
        findings[1]["context"],
        json!({
            "line": 1,
            "before": "# app\nuser = \"app\"\nother = \"ghp_…\"\ntoken = \"",
            "secret": "ghp_…",
            "after": "\"\nport = 8080\n\n",
        })
    );
    assert_eq!(
        findings[0]["context"],
        json!({
            "line": 1,
            "before": "# app\nuser = \"app\"\nother = \"",
            "secret": "ghp_…",
            "after": "\"\ntoken = \"ghp_…\"\nport = 8080\n",
        })
    );
    assert_eq!(
        findings[3]["context"],
        json!({
            "line": 1,
            "before": "DEBUG = False\ndb_password = \"",
            "secret": "Zx9q…",
            "after": "\"",
        })
    );
    // The json format's object, then `context`: the same keys in the same order.
    let json_report = t
        .run(&["scan", "--format", "json", "."])
        .expect(1)
        .stdout
        .clone();
    let first_json = json_report.lines().nth(1).unwrap().trim_end_matches(',');
    let first_html = page
        .lines()
        .find(|l| l.starts_with("{\"rule_id\""))
        .unwrap();
    let first_html = first_html.trim_end_matches(',');
    let (object, context) = first_html.rsplit_once(",\"context\":").unwrap();
    assert_eq!(format!("{object}}}"), first_json);
    assert!(context.starts_with("{\"line\":1,"), "{context}");

    // With --show-secrets the page holds them whole, context included.
    let shown = html_report(&t, &["--show-secrets"]);
    for secret in &secrets {
        assert!(
            shown.contains(secret),
            "{secret} missing with --show-secrets"
        );
    }
    let findings = embedded(&shown);
    assert_eq!(
        findings[1]["context"]["before"],
        format!(
            "# app\nuser = \"app\"\nother = \"{}\"\ntoken = \"",
            s.tokens[1]
        )
    );
    assert_eq!(findings[1]["context"]["secret"], s.tokens[0]);
}

/// Standard input has no lines to read back, even when `--stdin-name` names a FIFO: opening
/// one would block the report (the test gives up after 20 s).
#[test]
fn html_page_of_stdin_named_after_a_fifo_has_no_context_and_does_not_block() {
    let t = Tree::new();
    let status = Command::new("mkfifo").arg(t.join("pipe")).status().unwrap();
    assert!(status.success());
    let mut child = scanner_in(t.path())
        .args(["scan", "--format", "html", "-o", "report.html"])
        .args(["--stdin-name", "pipe", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    write_stdin(&mut child, &format!("token = \"{}\"\n", token(9)));
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("the html report blocked on the FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let findings = embedded(&std::fs::read_to_string(t.join("report.html")).unwrap());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["path"], "pipe");
    assert_eq!(findings[0]["context"], Value::Null);
}

/// Standard input named after a file that exists (`--stdin-name app.env`), and a staged
/// blob whose file in the work tree has changed since `git add`: the lines on disk are not
/// those scanned, and showed a token that only the file on disk holds, whole. Neither has
/// lines of context.
#[test]
fn html_page_of_stdin_or_staged_content_has_no_lines_from_the_disk() {
    let r = Repo::new();
    let (scanned, on_disk) = (token(33), token(34));
    let staged = format!("a\nk={scanned}\nb\n");
    r.write("app.env", &staged);
    r.git(&["add", "app.env"]);
    r.write("app.env", format!("a\nk={scanned}\nk2={on_disk}\n"));
    let mut child = isolate(Command::new(BIN).current_dir(r.path(".")).args([
        "scan",
        "--format",
        "html",
        "-o",
        "stdin.html",
        "--stdin-name",
        "app.env",
        "-",
    ]))
    .stdin(Stdio::piped())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    write_stdin(&mut child, &staged);
    assert_eq!(child.wait().unwrap().code(), Some(1));
    r.scan(&["scan", "--staged", "--format", "html", "-o", "staged.html"])
        .expect(1);
    for name in ["stdin.html", "staged.html"] {
        let page = std::fs::read_to_string(r.path(name)).unwrap();
        assert!(
            !page.contains(&on_disk[4..]),
            "{name}: the token on disk is on the page"
        );
        let findings = embedded(&page);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0]["path"], "app.env");
        assert_eq!(findings[0]["context"], Value::Null);
    }
}

/// Two files whose names differ only in bytes that are not UTF-8 read the same in `path`
/// (U+FFFD); the summary counts them by `path_bytes`, as two files.
#[test]
fn html_summary_counts_files_whose_names_are_not_utf8_apart() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::new();
    for (i, name) in [&b"bad\xff.env"[..], b"bad\xfe.env"]
        .into_iter()
        .enumerate()
    {
        t.write(
            std::ffi::OsStr::from_bytes(name),
            format!("k={}\n", token(i as u32)),
        );
    }
    html_report(&t, &[]);
    let dom = chromium_dom(&t.join("report.html"), "", "non-UTF-8 names");
    assert!(
        dom.contains("<p id=\"totals\">2 findings in 2 files</p>"),
        "{dom}"
    );
}

/// A later version of a file that adds a token next to one added before: the older token,
/// reported with the version that introduced it (and suppressed in this one as unchanged),
/// showed whole in the new token's lines of context. Every copy of a secret the page
/// reports is redacted there.
#[test]
fn html_context_of_a_later_version_redacts_the_secret_reported_with_an_earlier_one() {
    let r = Repo::new();
    let (old, new) = (token(31), token(32));
    r.write("f.env", format!("a\nk1={old}\nb\n"));
    r.git(&["add", "."]);
    r.commit("one");
    r.write("f.env", format!("a\nk1={old}\nk2={new}\nb\n"));
    r.git(&["add", "."]);
    r.commit("two");
    let run = r.scan(&["scan", "--history", "--format", "html", "-o", "report.html"]);
    run.expect(1);
    assert_eq!(
        run.summary_line("suppressed:"),
        Some("suppressed: 1 unchanged in a later version")
    );
    let page = std::fs::read_to_string(r.path("report.html")).unwrap();
    assert!(!page.contains(&old[4..]), "the older token is on the page");
    let contexts: Vec<Value> = embedded(&page)
        .iter()
        .map(|f| json!([f["line"], f["context"]]))
        .collect();
    assert_eq!(
        contexts,
        [
            json!([2, {"line": 1, "before": "a\nk1=", "secret": "ghp_…", "after": "\nb"}]),
            json!([3, {"line": 1, "before": "a\nk1=ghp_…\nk2=", "secret": "ghp_…", "after": "\nb"}]),
        ]
    );
}

#[test]
fn html_page_of_a_history_scan_names_the_commit() {
    let r = Repo::new();
    r.write(
        "deploy.env",
        format!("# deploy\nTOKEN={}\nREGION=eu\n", token(7)),
    );
    r.git(&["add", "."]);
    commit_at(&r, "deploy <settings>", "2024-03-01T10:00:00+01:00");
    // The lines come from the commit's blob, not from the file as it is now.
    r.write("deploy.env", "changed\n");
    r.scan(&["scan", "--history", "--format", "html", "-o", "report.html"])
        .expect(1);
    let page = std::fs::read_to_string(r.path("report.html")).unwrap();
    assert!(!page.contains(&token(7)[4..12]));
    let findings = embedded(&page);
    assert_eq!(findings.len(), 1);
    let commit = &findings[0]["commit"];
    assert_eq!(commit["author_name"], "Ada Lovelace");
    assert_eq!(commit["author_email"], "ada@example.com");
    assert_eq!(commit["author_date"], "2024-03-01T10:00:00+01:00");
    assert_eq!(commit["summary"], "deploy <settings>");
    assert_eq!(
        findings[0]["context"],
        json!({"line": 1, "before": "# deploy\nTOKEN=", "secret": "ghp_…", "after": "\nREGION=eu"})
    );

    let dom = chromium_dom(&r.path("report.html"), "open=0", "history");
    assert_eq!(attr(&dom, "data-matching"), 1);
    assert!(dom.contains("<p id=\"totals\">1 finding in 1 file of 1 commit</p>"));
    let id = commit["id"].as_str().unwrap();
    for shown in [
        format!("<dd class=\"mono\">{id}</dd>"),
        "<dd>Ada Lovelace &lt;ada@example.com&gt;</dd>".to_string(),
        "<dd>2024-03-01T10:00:00+01:00</dd>".to_string(),
        "<dd>deploy &lt;settings&gt;</dd>".to_string(),
        "<span class=\"l hit\"><span class=\"n\">2</span>TOKEN=<mark>ghp_…</mark></span>".into(),
    ] {
        assert!(dom.contains(&shown), "{shown} not in the page:\n{dom}");
    }
}

#[test]
fn html_page_of_a_directory_of_histories_has_each_repositorys_lines() {
    // Each repository's paths are led by its directory's name; its blobs are looked up
    // without it. A clone of a remote one (`file://`) is gone before the report is written:
    // no lines for any of its findings, rather than for some.
    let t = Tree::new();
    for (name, seed) in [("api", 3), ("web", 4)] {
        let dir = t.join(name);
        std::fs::create_dir(&dir).unwrap();
        git_in(&dir, &["init", "-q"]);
        std::fs::write(
            dir.join("app.env"),
            format!("# {name}\nTOKEN={}\n", token(seed)),
        )
        .unwrap();
        git_in(&dir, &["add", "."]);
        git_in(&dir, &["commit", "-q", "-m", "one"]);
    }
    t.run(&[
        "scan",
        "--history",
        ".",
        "--format",
        "html",
        "-o",
        "report.html",
    ])
    .expect(1);
    let findings = embedded(&std::fs::read_to_string(t.join("report.html")).unwrap());
    let got: Vec<(&Value, &Value)> = findings
        .iter()
        .map(|f| (&f["path"], &f["context"]))
        .collect();
    let web = json!({"line": 1, "before": "# web\nTOKEN=", "secret": "ghp_…", "after": ""});
    let api = json!({"line": 1, "before": "# api\nTOKEN=", "secret": "ghp_…", "after": ""});
    assert_eq!(
        got,
        [(&json!("api/app.env"), &api), (&json!("web/app.env"), &web)]
    );

    let url = format!("file://{}", t.join("web").display());
    t.run(&[
        "scan",
        "--history",
        &url,
        "--format",
        "html",
        "-o",
        "remote.html",
    ])
    .expect(1);
    let findings = embedded(&std::fs::read_to_string(t.join("remote.html")).unwrap());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["context"], Value::Null);
}

#[test]
fn html_page_in_chromium_filters_sorts_and_shows_context() {
    let t = Tree::new();
    triage_tree(&t);
    html_report(&t, &[]);
    let report = t.join("report.html");

    // Every finding on one page; the summary counts.
    let dom = chromium_dom(&report, "", "all");
    assert_eq!(rows(&dom), 5);
    assert_eq!(attr(&dom, "data-total"), 5);
    assert_eq!(attr(&dom, "data-matching"), 5);
    assert!(dom.contains("5 findings in 4 files"), "{dom}");
    // No live check ran: the validity summary is the offline evidence (four tokens whose
    // checksum matches; the password has none).
    let validity = &dom[dom.find("id=\"by-validity\"").unwrap()..];
    let validity = &validity[..validity.find("</ul>").unwrap()];
    assert!(!validity.contains("not checked</li>"), "{validity}");
    assert!(validity.contains("offline_valid: "), "{validity}");

    // A rule and a text filter, sorted by location in reverse, one finding opened; the
    // screenshot is of this view.
    let png = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html/triage.png");
    let fragment = "rule=github-classic-pat&filter=.env&sort=location&desc=1&open=1";
    let dom = chromium_dom_and_screenshot(&report, fragment, &png);
    println!("screenshot: {}", png.display());
    assert_eq!((rows(&dom), attr(&dom, "data-matching")), (4, 4));
    let order: Vec<&str> = dom
        .match_indices("<td class=\"mono loc\">")
        .map(|(i, m)| {
            let rest = &dom[i + m.len()..];
            &rest[..rest.find("</td>").unwrap()]
        })
        .collect();
    assert_eq!(
        order,
        [
            "./tests/fixture.env:1:10",
            "./odd&lt;/script&gt;&lt;b&gt;.env:1:10",
            "./config/app.env:4:10",
            "./config/app.env:3:10",
        ]
    );
    // The opened finding's lines, numbered, the secret marked and redacted.
    let context = "<span class=\"l\"><span class=\"n\">3</span>other = \"ghp_…\"</span>\
                   <span class=\"l hit\"><span class=\"n\">4</span>token = \"<mark>ghp_…</mark>\"</span>\
                   <span class=\"l\"><span class=\"n\">5</span>port = 8080</span>";
    assert!(dom.contains(context), "no context lines in:\n{dom}");
}

/// What a user does (typing, clicks on a header, a row, a count, a select), through the
/// DevTools protocol (`tests/common/cdp.py`): each step's rows (their locations), URL
/// fragment and count line.
#[test]
fn html_page_answers_typing_and_clicks() {
    let t = Tree::new();
    triage_tree(&t);
    html_report(&t, &[]);
    let view =
        "({rows: [...document.querySelectorAll('tr.finding')].map(r => r.cells[2].textContent), \
                hash: location.hash, count: document.getElementById('count').textContent})";
    let (app3, app4) = ("./config/app.env:3:10", "./config/app.env:4:10");
    let odd = "./odd</script><b>.env:1:10";
    let (settings, fixture) = ("./src/settings.py:2:16", "./tests/fixture.env:1:10");
    let steps: Vec<(String, Value)> = vec![
        (
            format!(
                "(async () => {{ const i = document.getElementById('filter'); i.value = 'CONFIG/'; \
                 i.dispatchEvent(new Event('input')); await new Promise(r => setTimeout(r, 400)); \
                 return {view}; }})()"
            ),
            json!({"rows": [app3, app4], "hash": "#filter=CONFIG%2F", "count": "2 of 5 findings"}),
        ),
        (
            format!(
                "(() => {{ const th = () => document.querySelector('th[data-key=confidence]'); \
                 th().click(); th().click(); return {view}; }})()"
            ),
            json!({"rows": [app4, app3], "hash": "#filter=CONFIG%2F&sort=confidence&desc=1",
                   "count": "2 of 5 findings"}),
        ),
        (
            format!("(() => {{ document.getElementById('clear').click(); return {view}; }})()"),
            json!({"rows": [fixture, settings, odd, app4, app3], "hash": "#sort=confidence&desc=1",
                   "count": "5 findings"}),
        ),
        (
            "(() => { document.querySelectorAll('tr.finding td')[0].click(); \
             return [location.hash, document.querySelector('pre.ctx').textContent]; })()"
                .into(),
            json!(["#sort=confidence&desc=1&open=4", "1token = \"ghp_…\""]),
        ),
        (
            format!(
                "(() => {{ document.querySelectorAll('#by-rule button')[1].click(); \
                 return [document.getElementById('rule').value, {view}]; }})()"
            ),
            json!(["generic-password-assignment", {"rows": [settings],
                   "hash": "#rule=generic-password-assignment&sort=confidence&desc=1&open=4",
                   "count": "1 of 5 findings"}]),
        ),
        (
            format!(
                "(() => {{ const s = document.getElementById('confidence'); s.value = 'low'; \
                 s.dispatchEvent(new Event('change')); \
                 return [document.getElementById('page').textContent, {view}]; }})()"
            ),
            json!(["No finding matches", {"rows": [],
                   "hash": "#confidence=low&rule=generic-password-assignment&sort=confidence&desc=1&open=4",
                   "count": "0 of 5 findings"}]),
        ),
    ];
    let expressions: Vec<&str> = steps.iter().map(|(js, _)| js.as_str()).collect();
    let got = evaluate(&t.join("report.html"), "", &expressions);
    for ((js, want), got) in steps.iter().zip(&got) {
        assert_eq!(got, want, "after {js}");
    }
}

/// A page whose findings carry the answers of live checks (written into the page by hand
/// here, over the offline evidence every finding has) gets a validity column, summary and
/// select.
#[test]
fn html_page_shows_validity_when_findings_carry_it() {
    let t = Tree::new();
    triage_tree(&t);
    let page = html_report(&t, &[]);
    assert!(!page.contains("\"status\":\"valid\""));
    // The findings left as they are keep their offline evidence.
    let mut counts =
        std::collections::BTreeMap::from([("invalid".to_string(), 1), ("valid".to_string(), 2)]);
    for f in &embedded(&page)[3..] {
        *counts
            .entry(f["validation"]["status"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    let mut n = 0;
    let page: String = page
        .split_inclusive('\n')
        .map(|line| {
            if !line.starts_with("{\"rule_id\"") {
                return line.to_string();
            }
            n += 1;
            let validation = match n {
                1 => {
                    r#""validation":{"status":"invalid","reason":"401 \u003cno\u003e","identity":{"login":"ada"}},"#
                }
                2 | 3 => r#""validation":{"status":"valid"},"#,
                _ => "",
            };
            line.replace("\"context\":", &format!("{validation}\"context\":"))
        })
        .collect();
    let report = t.join("validated.html");
    std::fs::write(&report, page).unwrap();

    let dom = chromium_dom(&report, "validity=invalid&open=0", "validity");
    assert_eq!((rows(&dom), attr(&dom, "data-matching")), (1, 1));
    assert!(
        dom.contains("<th class=\"fit\" data-key=\"validity\""),
        "{dom}"
    );
    assert!(dom.contains("<td class=\"fit\">invalid</td>"));
    assert_eq!(counts.values().sum::<usize>(), 5);
    for (status, n) in &counts {
        let count =
            format!("<li>{status}: <button class=\"pick\" type=\"button\">{n}</button></li>");
        assert!(dom.contains(&count), "{count}");
    }
    for fact in [
        "<dt>reason</dt><dd>401 &lt;no&gt;</dd>",
        "<dt>identity: login</dt><dd>ada</dd>",
    ] {
        assert!(dom.contains(fact), "{fact} not in:\n{dom}");
    }
}

#[test]
fn html_page_with_10000_findings_loads_and_filters_quickly() {
    let t = Tree::new();
    // 10 files of 1,000 tokens each (the redaction of a file's lines is per file: thousands
    // of findings in one file must not cost their square).
    for file in 0..10u32 {
        let text: String = (0..1000u32)
            .map(|line| format!("key{line:03} = \"{}\"\n", token(file * 1000 + line)))
            .collect();
        t.write(format!("f{file}.env"), text);
    }
    let page = html_report(&t, &[]);
    // One finding a line (parsing 6 MB of JSON in a debug build takes seconds).
    let objects = page
        .lines()
        .filter(|l| l.starts_with("{\"rule_id\":"))
        .count();
    assert_eq!(objects, 10_000);

    // File f4.env, the last of its 10 pages. (Through the DevTools protocol rather
    // than --dump-dom, which would write the 6 MB of data back.)
    let started = Instant::now();
    let got = evaluate(
        &t.join("report.html"),
        "filter=F4.ENV&page=10",
        &[
            "[...['total', 'matching', 'shown'].map(k => document.getElementById('table').dataset[k]), \
             document.getElementById('page').textContent]",
            "[...document.querySelectorAll('tr.finding')].map(r => r.cells[2].textContent)",
            "Number(document.body.dataset.renderMs)",
        ],
    );
    let took = started.elapsed();
    assert_eq!(
        got[0],
        json!(["10000", "1000", "100", "Page 10 of 10 (901–1000)"])
    );
    let rows: Vec<String> = (901..=1000).map(|n| format!("./f4.env:{n}:11")).collect();
    assert_eq!(got[1], json!(rows));
    let render_ms = got[2].as_u64().unwrap();
    assert!(render_ms < 3_000, "the page took {render_ms} ms to draw");
    assert!(took < Duration::from_secs(10), "chromium took {took:?}");
}

// ------------------------------------------------------------------ chromium

/// Debian's `chromium`: required (CI installs it), never skipped.
fn assert_chromium() {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("chromium").is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "chromium not found: `apt-get install -y chromium` (.ci/run installs it)"
    );
}

fn chromium() -> Command {
    assert_chromium();
    let mut c = Command::new("chromium");
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]);
    c
}

/// The `file:` URL of `page` with `fragment`.
fn url(page: &Path, fragment: &str) -> String {
    format!("file://{}#{fragment}", page.display())
}

/// Runs chromium on the page with its own profile dir, returning stdout.
fn run_chromium(page: &Path, fragment: &str, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = chromium()
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url(page, fragment))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The DOM after the page's script ran, with the view `fragment` selects.
fn chromium_dom(page: &Path, fragment: &str, what: &str) -> String {
    let dom = run_chromium(page, fragment, &["--dump-dom"]);
    assert!(
        dom.contains("data-ready=\"1\""),
        "{what}: the script did not finish:\n{dom}"
    );
    dom
}

/// [`chromium_dom`], and a screenshot of the same view written to `png`.
fn chromium_dom_and_screenshot(page: &Path, fragment: &str, png: &Path) -> String {
    std::fs::create_dir_all(png.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(png);
    let dom = run_chromium(
        page,
        fragment,
        &[
            "--dump-dom",
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,900",
        ],
    );
    assert!(
        dom.contains("data-ready=\"1\""),
        "the script did not finish:\n{dom}"
    );
    let bytes = std::fs::read(png).expect("no screenshot written");
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    dom
}

/// The values of `expressions`, evaluated one after the other in the page (at `fragment`) once
/// its script has run, through the DevTools protocol (`tests/common/cdp.py`).
fn evaluate(page: &Path, fragment: &str, expressions: &[&str]) -> Vec<Value> {
    assert_chromium();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/cdp.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(url(page, fragment))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = expressions.iter().map(|js| format!("{js}\n")).collect();
    write_stdin(&mut child, &input);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cdp.py: {stderr}");
    let values: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(values.len(), expressions.len(), "{stderr}");
    values
}

/// Writes `text` to the child's stdin and closes it.
fn write_stdin(child: &mut Child, text: &str) {
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).unwrap();
}

/// The finding rows on the page.
fn rows(dom: &str) -> usize {
    dom.matches("<tr class=\"finding").count()
}

/// The number in the first `NAME="N"` attribute.
fn attr(dom: &str, name: &str) -> u64 {
    let key = format!("{name}=\"");
    let at = dom
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in:\n{dom}"))
        + key.len();
    let end = dom[at..].find('"').unwrap();
    dom[at..at + end].parse().unwrap()
}
