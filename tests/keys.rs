//! Private keys as large as the tools make them: a 16384-bit RSA key, the
//! largest `ssh-keygen -t rsa -b` and `openssl genrsa` accept, in each of
//! its formats, plain and indented in a YAML block scalar.

mod common;

use base64::Engine as _;

use common::Tree;

/// A PEM block labelled `label` whose body is `len` bytes starting with
/// `head`, then pseudo-random bytes, in base64 lines of `width` characters.
/// The rules read the block's shape, not its DER, so this is as long as a
/// real key of that size and found or missed as one.
fn block(label: &str, head: &[u8], len: usize, width: usize) -> String {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut der = head.to_vec();
    while der.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        der.push(state as u8);
    }
    let body = base64::engine::general_purpose::STANDARD.encode(&der);
    let mut pem = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(width) {
        pem.push_str(std::str::from_utf8(line).unwrap());
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}

/// The body sizes of a 16384-bit RSA key made with `ssh-keygen -t rsa -b
/// 16384` (12,704 bytes as written), converted with `ssh-keygen -p -m PEM`
/// (12,603) and `openssl pkcs8 -topk8` (12,632; encrypted 12,794).
#[test]
fn a_16384_bit_rsa_key_is_found_in_every_format() {
    let keys = [
        (
            "id_rsa",
            block("RSA PRIVATE KEY", &[0x30, 0x82], 9261, 64),
            "private-key-rsa",
        ),
        (
            "key.pem",
            block("PRIVATE KEY", &[0x30, 0x82], 9287, 64),
            "private-key-pkcs8",
        ),
        (
            "enc.pem",
            block("ENCRYPTED PRIVATE KEY", &[0x30, 0x82], 9393, 64),
            "private-key-pkcs8-encrypted",
        ),
        (
            "id_openssh",
            block("OPENSSH PRIVATE KEY", b"openssh-key-v1\0", 9342, 70),
            "private-key-openssh",
        ),
    ];
    let t = Tree::new();
    let mut expected = Vec::new();
    for (name, pem, rule) in &keys {
        assert!(pem.len() > 12_500, "{name}: {} bytes", pem.len());
        let lines = pem.lines().count() as u32;
        let last = pem.lines().last().unwrap().len() as u32;
        t.write(format!("keys/{name}"), format!("# {name}\n{pem}"));
        expected.push(format!("keys/{name}:2:1:{}:{}:{rule}", lines + 1, last + 1));
        let yaml: String = pem.lines().map(|l| format!("        {l}\n")).collect();
        t.write(
            format!("values/{name}.yaml"),
            format!("app:\n  tls:\n    secret:\n      key: |\n{yaml}"),
        );
        expected.push(format!(
            "values/{name}.yaml:5:9:{}:{}:{rule}",
            lines + 4,
            last + 9
        ));
    }
    let r = t.run(&["scan", "--format", "json"]);
    let mut found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}:{}:{}:{}",
                f.path, f.line, f.column, f.end_line, f.end_column, f.rule_id
            )
        })
        .collect();
    found.sort();
    expected.sort();
    assert_eq!(found, expected);
}

/// A key in JSON held in a JSON string (AWS Secrets Manager's
/// `SecretString`, a `GOOGLE_CREDENTIALS` variable) has its line breaks
/// escaped twice, `\\n`: such keys were not reported at all (exit 0).
#[test]
fn a_key_in_json_inside_a_json_string_is_found() {
    let t = Tree::new();
    let dir = t.path().join("gen");
    std::fs::create_dir(&dir).unwrap();
    let run = |cmd: &str, args: &[&str]| {
        let out = std::process::Command::new(cmd)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{cmd} must be installed to run this test: {e}"));
        assert!(out.status.success(), "{cmd} {args:?}: {out:?}");
    };
    run(
        "openssl",
        &["genrsa", "-traditional", "-out", "rsa.pem", "2048"],
    );
    run(
        "openssl",
        &["genpkey", "-algorithm", "ed25519", "-out", "ed.pem"],
    );
    run(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "ci",
            "-f",
            "id_ed25519",
        ],
    );
    let keys = [
        ("rsa.pem", "private-key-rsa"),
        ("ed.pem", "private-key-pkcs8"),
        ("id_ed25519", "private-key-openssh"),
    ];
    let mut expected = Vec::new();
    for (name, rule) in keys {
        let key = std::fs::read_to_string(dir.join(name)).unwrap();
        let inner = serde_json::json!({ "username": "deploy", "private_key": key }).to_string();
        let outer = serde_json::json!({ "SecretString": inner }).to_string();
        let column = outer.find("-----BEGIN").unwrap() + 1;
        t.write(format!("secrets/{name}.json"), format!("{outer}\n"));
        expected.push(format!("secrets/{name}.json:1:{column}:1 {rule}"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let r = t.run(&["scan", "--format", "json"]);
    let mut found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}:{} {}",
                f.path, f.line, f.column, f.end_line, f.rule_id
            )
        })
        .collect();
    found.sort();
    expected.sort();
    assert_eq!(found, expected);
}

/// PHP's `json_encode` writes every `/` as `\/` unless told otherwise: a
/// key in such a JSON file (a body holds a `/` every 64 characters or so)
/// was not reported at all (exit 0).
#[test]
fn a_key_in_json_with_escaped_slashes_is_found() {
    let t = Tree::new();
    let key = common::openssl(&[
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
    ]);
    let json = serde_json::json!({ "type": "rsa", "private_key": key })
        .to_string()
        .replace('/', "\\/");
    assert!(json.contains("\\/"), "{json}");
    t.write("config/keys.json", format!("{json}\n"));
    let column = json.find("-----BEGIN").unwrap() + 1;
    let r = t.run(&["scan", "--format", "json"]);
    let found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}:{} {}",
                f.path, f.line, f.column, f.end_line, f.rule_id
            )
        })
        .collect();
    assert_eq!(
        found,
        [format!("config/keys.json:1:{column}:1 private-key-pkcs8")]
    );
}

/// A Java `.properties` value continues over lines with a backslash before
/// the line break; a key written so (`\n\` or a bare `\` at each line's
/// end, the lines indented) was not reported at all (exit 0).
#[test]
fn a_key_continued_over_properties_lines_is_found() {
    let key = common::openssl(&["genrsa", "-traditional", "2048"]);
    let lines: Vec<&str> = key.lines().collect();
    let t = Tree::new();
    t.write(
        "src/main/resources/application.properties",
        format!("server.port=8080\njwt.key={}\n", lines.join("\\n\\\n    ")),
    );
    t.write(
        "conf/signing.properties",
        format!("signing.key={}\n", lines.join("\\\n  ")),
    );
    let r = t.run(&["scan", "--format", "json"]);
    let found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}:{}:{} {}",
                f.path, f.line, f.column, f.end_line, f.end_column, f.rule_id
            )
        })
        .collect();
    let n = lines.len() as u32;
    assert_eq!(
        found,
        [
            format!("conf/signing.properties:1:13:{n}:32 private-key-rsa"),
            format!(
                "src/main/resources/application.properties:2:9:{}:34 private-key-rsa",
                n + 1
            ),
        ]
    );
}

/// A Jupyter notebook holds a cell's source and its output as JSON lists of
/// strings, one per line: a key pasted in a cell, and printed by it, was
/// not reported at all (exit 0); nor a key written as a Python list of its
/// lines.
#[test]
fn a_key_split_into_a_list_of_strings_is_found() {
    let key = common::openssl(&["genrsa", "-traditional", "2048"]);
    let lines =
        |text: &str| -> Vec<String> { text.split_inclusive('\n').map(String::from).collect() };
    let notebook = serde_json::json!({
        "cells": [{
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "source": lines(&format!("KEY = \"\"\"{key}\"\"\"\nprint(KEY)\n")),
            "outputs": [{"name": "stdout", "output_type": "stream", "text": lines(&key)}],
        }],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    });
    let text = serde_json::to_string_pretty(&notebook).unwrap();
    let t = Tree::new();
    t.write("analysis.ipynb", format!("{text}\n"));
    let quoted: Vec<String> = key.lines().map(|l| format!("'{l}'")).collect();
    t.write(
        "keys.py",
        format!(
            "KEY = \"\\n\".join([\n    {},\n])\n",
            quoted.join(",\n    ")
        ),
    );
    // Where each block begins and where its END line ends, as `line:column`.
    let at = |offset: usize| {
        let line = text[..offset].matches('\n').count() + 1;
        let column = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("{line}:{column}")
    };
    let end = "-----END RSA PRIVATE KEY-----";
    let mut expected: Vec<String> = text
        .match_indices("-----BEGIN RSA PRIVATE KEY-----")
        .map(|(begin, _)| {
            let stop = begin + text[begin..].find(end).unwrap() + end.len();
            format!("analysis.ipynb:{}:{} private-key-rsa", at(begin), at(stop))
        })
        .collect();
    assert_eq!(expected.len(), 2);
    let n = key.lines().count() + 1;
    expected.push(format!("keys.py:2:6:{n}:35 private-key-rsa"));
    let r = t.run(&["scan", "--format", "json"]);
    let found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}:{}:{} {}",
                f.path, f.line, f.column, f.end_line, f.end_column, f.rule_id
            )
        })
        .collect();
    assert_eq!(found, expected);
}

/// An XML writer escapes the line breaks of an attribute value as
/// character references: a key in a .NET config's `value` attribute reads
/// `-----BEGIN ...-----&#xD;&#xA;MIIE...`, and was not reported at all
/// (exit 0); nor one written with `&#10;`.
#[test]
fn a_key_with_xml_character_references_for_line_breaks_is_found() {
    let key = common::openssl(&["genrsa", "-traditional", "2048"]);
    let key = key.trim_end();
    let t = Tree::new();
    let config = format!(
        "<configuration>\n  <appSettings>\n    <add key=\"SigningKey\" value=\"{}\" />\n  </appSettings>\n</configuration>\n",
        key.replace('\n', "&#xD;&#xA;")
    );
    t.write("web.config", &config);
    t.write(
        "key.xml",
        format!("<key>{}</key>\n", key.replace('\n', "&#10;")),
    );
    let r = t.run(&["scan", "--format", "json"]);
    let found: Vec<String> = r
        .expect(1)
        .findings()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}:{}:{} {}",
                f.path, f.line, f.column, f.end_line, f.end_column, f.rule_id
            )
        })
        .collect();
    let wide = key.len() + (key.lines().count() - 1) * ("&#xD;&#xA;".len() - 1);
    let narrow = key.len() + (key.lines().count() - 1) * ("&#10;".len() - 1);
    assert_eq!(
        found,
        [
            format!("key.xml:1:6:1:{} private-key-rsa", 6 + narrow),
            format!("web.config:3:34:3:{} private-key-rsa", 34 + wide),
        ]
    );
}
