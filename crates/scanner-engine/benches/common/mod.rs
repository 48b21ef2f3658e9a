//! A generated corpus of realistic files: source code, configuration and
//! lock files, with a few planted secrets. Nothing is committed; the bytes
//! are the same on every run (fixed seed).

#[path = "../../tests/common/mod.rs"]
mod shared;
pub use shared::{scan_into, Rng, ALNUM, HEX};

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const WORDS: &[&str] = &[
    "config", "user", "request", "response", "cache", "value", "session", "client", "server",
    "handler", "buffer", "index", "parse", "error", "result", "stream", "path", "file", "account",
    "service", "data", "item", "count", "offset", "limit", "retry", "timeout", "header", "body",
    "query", "state", "node", "entry", "batch", "event", "message", "queue", "worker", "task",
    "schema", "table", "row", "column", "field", "record", "page", "view", "model", "layout",
    "style", "theme", "route", "router", "logger", "metric", "span", "trace", "width", "height",
    "color", "image", "asset", "bundle", "module", "package", "version",
];
/// Words that are also rule keywords: real code uses them, but rarely
/// (about one identifier in 60 here).
const SENSITIVE: &[&str] = &["token", "key", "secret", "password", "auth", "api"];

fn word(r: &mut Rng) -> &'static str {
    if r.below(60) == 0 {
        r.pick(SENSITIVE)
    } else {
        r.pick(WORDS)
    }
}

fn ident(r: &mut Rng) -> String {
    let a = word(r);
    let b = word(r);
    match r.below(3) {
        0 => format!("{a}_{b}"),
        1 => format!("{a}{}{}", b[..1].to_uppercase(), &b[1..]),
        _ => a.to_string(),
    }
}

fn rust_file(r: &mut Rng, size: usize) -> String {
    let mut s = String::from("use std::collections::HashMap;\nuse crate::config::Config;\n\n");
    while s.len() < size {
        let (a, b, c) = (ident(r), ident(r), ident(r));
        let line = match r.below(20) {
            0 => format!(
                "pub fn {a}(&self, {b}: &str) -> Result<{}, Error> {{\n",
                "Config"
            ),
            1 => format!("    let {a} = self.{b}.get(&{c}).ok_or(Error::Missing)?;\n"),
            2 => format!("    // Refresh the {a} before the {b} expires; see {c}.\n"),
            3 => format!(
                "    if {a}.len() > MAX_{} {{ return Err(Error::TooLong); }}\n",
                b.to_uppercase()
            ),
            4 => format!(
                "    headers.insert(\"Authorization\", format!(\"Bearer {{}}\", self.{a}));\n"
            ),
            5 => format!(
                "    let {a}: HashMap<String, {}> = HashMap::new();\n",
                "u64"
            ),
            6 => format!("    debug!(\"{a} = {{:?}}, {b} = {{}}\", {a}, {c});\n"),
            7 => "    }\n}\n\n".to_string(),
            8 => format!("    self.{a}.insert({b}.clone(), {c}.to_string());\n"),
            9 => format!(
                "    const {}: &str = \"{}\";\n",
                a.to_uppercase(),
                b.replace('_', "-")
            ),
            10 => format!("    let password_hash = hash(&{a}, &salt)?; // never log the {b}\n"),
            _ => format!("    match {a} {{ Some(x) => x, None => return Ok({b}) }}\n"),
        };
        s.push_str(&line);
    }
    s
}

fn js_file(r: &mut Rng, size: usize) -> String {
    let mut s = String::from("import { api } from './api';\n\n");
    while s.len() < size {
        let (a, b, c) = (ident(r), ident(r), ident(r));
        let line = match r.below(16) {
            0 => format!("export async function {a}({b}, options = {{}}) {{\n"),
            1 => format!("  const {a} = await api.get(`/v1/${{{b}}}/{c}`, {{ headers }});\n"),
            2 => format!("  const token = process.env.API_TOKEN || options.{a};\n"),
            3 => format!("  if (!{a}) throw new Error('missing {b}');\n"),
            4 => format!("  return {{ ...{a}, {b}: {c}.id, key: '{b}' }};\n}}\n\n"),
            5 => format!("  localStorage.setItem('{a}', JSON.stringify({b}));\n"),
            6 => format!("  // {a}: cache the {b} key for {c}\n"),
            7 => {
                format!("  const {{ data: {a} }} = await fetch(url, {{ method: 'POST', body }});\n")
            }
            8 => format!("  console.log(`{a}=${{{b}}}`);\n"),
            _ => format!("  {a}.{b} = {c}?.value ?? null;\n"),
        };
        s.push_str(&line);
    }
    s
}

fn minified_js(r: &mut Rng, size: usize) -> String {
    let mut s = String::from("!function(e,t){\"use strict\";");
    while s.len() < size {
        let (a, b) = (ident(r), ident(r));
        s.push_str(&format!(
            "var {a}=function(n){{return n.{b}&&n.key?n.token:void 0}},{b}=\"{}\";",
            r.chars(ALNUM, 8)
        ));
    }
    s.push_str("}();\n");
    s
}

fn yaml_file(r: &mut Rng, size: usize) -> String {
    let mut s =
        String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n");
    while s.len() < size {
        let (a, b) = (ident(r), ident(r));
        let line = match r.below(12) {
            0 => format!("  - name: {}\n    valueFrom:\n      secretKeyRef:\n        name: {b}\n        key: {a}\n", a.to_uppercase()),
            1 => format!("    {a}: {}\n", r.below(10_000)),
            2 => format!("    image: registry.example.org/{a}:{}.{}.{}\n", r.below(9), r.below(20), r.below(50)),
            3 => format!("    {a}: \"{b}\"\n"),
            4 => format!("    # {a} for the {b} service\n"),
            5 => format!("    password: ${{{}_PASSWORD}}\n", a.to_uppercase()),
            6 => format!("    checksum/config: {}\n", r.chars(HEX, 64)),
            _ => format!("    {a}_id: {}-{}-{}\n", r.chars(HEX, 8), r.chars(HEX, 4), r.chars(HEX, 12)),
        };
        s.push_str(&line);
    }
    s
}

fn package_lock(r: &mut Rng, size: usize) -> String {
    let mut s =
        String::from("{\n  \"name\": \"app\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n");
    while s.len() < size {
        let name = ident(r).replace('_', "-");
        let v = format!("{}.{}.{}", r.below(9), r.below(30), r.below(30));
        s.push_str(&format!(
            "    \"node_modules/{name}\": {{\n      \"version\": \"{v}\",\n      \"resolved\": \"https://registry.npmjs.org/{name}/-/{name}-{v}.tgz\",\n      \"integrity\": \"sha512-{}==\",\n      \"dependencies\": {{ \"{}\": \"^{v}\" }}\n    }},\n",
            r.chars(B64, 86),
            ident(r).replace('_', "-")
        ));
    }
    s.push_str("  }\n}\n");
    s
}

fn cargo_lock(r: &mut Rng, size: usize) -> String {
    let mut s = String::from("# This file is automatically @generated by Cargo.\nversion = 4\n\n");
    while s.len() < size {
        s.push_str(&format!(
            "[[package]]\nname = \"{}\"\nversion = \"{}.{}.{}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{}\"\ndependencies = [\n \"{}\",\n]\n\n",
            ident(r).replace('_', "-"),
            r.below(3),
            r.below(40),
            r.below(20),
            r.chars(HEX, 64),
            ident(r).replace('_', "-")
        ));
    }
    s
}

fn json_config(r: &mut Rng, size: usize) -> String {
    let mut s = String::from("{\n");
    while s.len() < size {
        let (a, b) = (ident(r), ident(r));
        let line = match r.below(5) {
            0 => format!("  \"{a}\": \"{b}\",\n"),
            1 => format!("  \"{a}\": {},\n", r.below(100_000)),
            2 => format!("  \"{a}Key\": \"{b}\",\n"),
            3 => format!(
                "  \"{a}\": {{ \"enabled\": true, \"url\": \"https://{b}.internal/api\" }},\n"
            ),
            _ => format!("  \"{a}\": [\"{b}\", \"{}\"],\n", ident(r)),
        };
        s.push_str(&line);
    }
    s.push_str("  \"end\": true\n}\n");
    s
}

/// Planted secrets (formats of common providers, random bodies).
fn secret(r: &mut Rng) -> String {
    match r.below(4) {
        0 => format!("GITHUB_TOKEN=ghp_{}\n", r.chars(ALNUM, 36)),
        1 => format!(
            "aws_access_key_id = AKIA{}\n",
            r.chars(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
        ),
        2 => format!(
            "SLACK_BOT_TOKEN=xoxb-{}-{}-{}\n",
            r.chars(b"0123456789", 12),
            r.chars(b"0123456789", 13),
            r.chars(ALNUM, 24)
        ),
        _ => format!("stripe.api_key = \"sk_live_{}\"\n", r.chars(ALNUM, 24)),
    }
}

/// Files totalling about `total` bytes: `(path, bytes)`. About one file in
/// 200 gets a planted secret.
pub fn corpus(total: usize) -> Vec<(String, Vec<u8>)> {
    let mut r = Rng(0x00c0_ffee);
    let mut files = Vec::new();
    let mut size = 0;
    let mut n = 0;
    while size < total {
        let len = 2_000 + r.below(60_000);
        let (path, mut text) = match r.below(10) {
            0..=2 => (format!("src/m{n}.rs"), rust_file(&mut r, len)),
            3..=4 => (format!("web/c{n}.js"), js_file(&mut r, len)),
            5 => (format!("dist/b{n}.min.js"), minified_js(&mut r, len)),
            6 => (format!("deploy/d{n}.yaml"), yaml_file(&mut r, len)),
            7 => (format!("p{n}/package-lock.json"), package_lock(&mut r, len)),
            8 => (format!("c{n}/Cargo.lock"), cargo_lock(&mut r, len)),
            _ => (format!("conf/c{n}.json"), json_config(&mut r, len)),
        };
        if r.below(200) == 0 {
            let at = text[..text.len() / 2].rfind('\n').map_or(0, |i| i + 1);
            text.insert_str(at, &secret(&mut r));
        }
        size += text.len();
        files.push((path, text.into_bytes()));
        n += 1;
    }
    files
}

/// Corpus size from `SCANNER_BENCH_MB` (default 32).
pub fn corpus_bytes() -> usize {
    std::env::var("SCANNER_BENCH_MB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(32)
        << 20
}
