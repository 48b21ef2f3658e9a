//! Text that looks random but is not a secret must never match any built-in
//! rule. Runs against whatever rules exist (broken ones are left out; the
//! `builtin_rules` test reports those) and lists every offending rule and
//! decoy: `cargo test -p scanner-engine --test decoys`.

mod common;

use common::*;

fn uuid(r: &mut Rng) -> String {
    let h = r.token(HEX, 32);
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

fn base64(r: &mut Rng, len: usize) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    r.token(B64, len)
}

/// `(path, text)` pairs.
fn decoys() -> Vec<(&'static str, String)> {
    let mut r = Rng(0x5eed);
    let mut d: Vec<(&'static str, String)> = Vec::new();
    for _ in 0..5 {
        let u = uuid(&mut r);
        d.push(("src/app.ts", format!("const id = \"{u}\";")));
        d.push((
            "data.json",
            format!("{{\"requestId\": \"{u}\", \"trace_id\": \"{u}\"}}"),
        ));
        d.push((
            "App.csproj",
            format!("<ProjectGuid>{{{}}}</ProjectGuid>", u.to_uppercase()),
        ));
        d.push(("config.yaml", format!("correlation_id: {u}\nuuid: {u}")));
        let sha = r.token(HEX, 40);
        d.push((
            "log.txt",
            format!("commit {sha}\nMerge: {} {}", &sha[..7], &sha[9..16]),
        ));
        d.push((
            "data.json",
            format!("{{\"sha\": \"{sha}\", \"parents\": [\"{sha}\"]}}"),
        ));
        d.push((
            "Cargo.toml",
            format!("dep = {{ git = \"https://github.com/a/b\", rev = \"{sha}\" }}"),
        ));
        d.push((
            "yarn.lock",
            format!("  resolved \"git+https://github.com/a/b.git#{sha}\""),
        ));
        let integrity = base64(&mut r, 86);
        d.push((
            "package-lock.json",
            format!(
                "\"node_modules/x\": {{\n  \"version\": \"1.2.3\",\n  \"resolved\": \"https://registry.npmjs.org/x/-/x-1.2.3.tgz\",\n  \"integrity\": \"sha512-{integrity}==\"\n}}"
            ),
        ));
        d.push(("yarn.lock", format!("  integrity sha512-{integrity}==")));
        let sum = r.token(HEX, 64);
        d.push(("SHA256SUMS", format!("{sum}  scanner-x86_64-linux.tar.gz")));
        d.push((
            "Cargo.lock",
            format!("[[package]]\nname = \"x\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{sum}\""),
        ));
        d.push(("Dockerfile", format!("FROM alpine@sha256:{sum}")));
        d.push((
            "build.gradle",
            format!("sha256 = \"{sum}\"\nsha1 = \"{}\"", &sum[..40]),
        ));
        d.push((
            "go.sum",
            format!("golang.org/x/net v0.1.0 h1:{}=", base64(&mut r, 43)),
        ));
        d.push((
            "index.html",
            format!(
                "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{}\">",
                base64(&mut r, 1500)
            ),
        ));
        d.push((
            "style.css",
            format!(
                ".a {{ background: url(data:image/svg+xml;base64,PHN2ZyB4bWxucz0i{}); }}",
                base64(&mut r, 600)
            ),
        ));
        let c = r.token(HEX, 6);
        d.push((
            "style.css",
            format!(
                ".b {{ color: #{c}; background-color: #{}; }}",
                c.to_uppercase()
            ),
        ));
        d.push((
            "icon.svg",
            format!("<path fill=\"#{c}\" stroke=\"#{}\"/>", &c[..3]),
        ));
    }
    for line in [
        "API_KEY=${API_KEY}",
        "export GITHUB_TOKEN=$GITHUB_TOKEN",
        "const token = process.env.GITHUB_TOKEN;",
        "password: ${{ secrets.DB_PASSWORD }}",
        "aws_secret_access_key = os.environ[\"AWS_SECRET_ACCESS_KEY\"]",
        "set PASSWORD=%DB_PASSWORD%",
        "aws_secret_access_key = {{ aws_secret }}",
        "STRIPE_SECRET_KEY: ${STRIPE_SECRET_KEY:-}",
        "api_key = os.getenv(\"OPENAI_API_KEY\")",
        "DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@${DB_HOST}:5432/app",
        "SLACK_WEBHOOK_URL=${{ secrets.SLACK_WEBHOOK_URL }}",
        "api_key = \"your-api-key-here\"",
        "password = \"changeme\"",
        "AWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "token: <YOUR_TOKEN>",
        "OPENAI_API_KEY=sk-...",
        "secret = \"REPLACE_ME\"",
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "password: \"********\"",
        "\"apiKey\": \"<api-key>\"",
        "client_secret: YOUR_CLIENT_SECRET",
        "password = \"password\"",
        "token = \"\"",
        "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX",
        "mysql://user:password@localhost:3306/db",
        "postgres://postgres:postgres@localhost/test",
    ] {
        d.push((".env", line.to_string()));
    }
    d
}

#[test]
fn decoys_never_match_builtin_rules() {
    let engine = builtin_lenient();
    let mut scratch = engine.new_scratch();
    let mut bad = Vec::new();
    for (path, text) in decoys() {
        for f in scan_with(&engine, &mut scratch, text.as_bytes(), path) {
            bad.push(format!(
                "rule `{}` matched decoy in {path}: secret `{}`\n    {}",
                f.rule_id,
                f.secret,
                text.lines().nth(f.line as usize - 1).unwrap_or("")
            ));
        }
    }
    for b in &bad {
        eprintln!("{b}\n");
    }
    assert!(
        bad.is_empty(),
        "{} decoy match(es) (listed above)",
        bad.len()
    );
}
