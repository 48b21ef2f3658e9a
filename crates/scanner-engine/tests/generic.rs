//! The generic detector end to end, with the built-in rules: human-chosen
//! passwords in every config syntax are found at their exact line; the
//! shapes that real trees (cargo registry sources, site-packages, docs)
//! produced as false positives are not, each counted under its reason;
//! credential files by nature; offline checksums and confidence.

mod common;

use common::Rng;
use scanner_engine::{
    base62_6, crc32, Confidence, Engine, EngineBuilder, Finding, RuleFile, Suppressed,
};

fn scan(engine: &Engine, text: &str, path: &str) -> (Vec<Finding>, Suppressed) {
    let mut scratch = engine.new_scratch();
    let found = common::scan_with(engine, &mut scratch, text.as_bytes(), path);
    (found, scratch.take_suppressed())
}

/// Passwords people choose: words outside a programmer's vocabulary,
/// digits, a symbol (never first, so that no syntax reads it as markup).
fn human_passwords(n: usize) -> Vec<String> {
    const WORDS: &[&str] = &[
        "maple", "orbit", "quartz", "river", "heron", "copper", "fjord", "basalt", "lantern",
        "otter", "kestrel", "marigold", "tundra", "gecko", "pebble", "oriole", "vireo", "comet",
    ];
    const SYMBOLS: &[&str] = &["!", "*", "?", "+", "#"];
    let mut rng = Rng(0x5eed_0f9a);
    let cap = |w: &str| format!("{}{}", w[..1].to_ascii_uppercase(), &w[1..]);
    (0..n)
        .map(|i| {
            let (a, b) = (rng.pick(WORDS), rng.pick(WORDS));
            let digits = 10 + rng.below(90);
            let sym = rng.pick(SYMBOLS);
            match i % 3 {
                0 => format!("{}{b}{digits}{sym}", cap(a)),
                1 => format!("{a}{sym}{}{digits}", cap(b)),
                _ => format!("{}{sym}{}{digits}", cap(a), cap(b)),
            }
        })
        .collect()
}

/// (path, text with `{pw}`, line of the password).
const SYNTAXES: &[(&str, &str, u32)] = &[
    (".env", "APP_ENV=production\nDB_PASSWORD={pw}\n", 2),
    (
        "config/application.properties",
        "spring.datasource.username=orders\nspring.datasource.password={pw}\n",
        2,
    ),
    ("config/db.yaml", "database:\n  host: db.internal\n  password: {pw}\n", 3),
    ("config/db.yml", "database:\n  password: \"{pw}\"\n", 2),
    ("settings.ini", "[database]\nhost = db.internal\npassword = {pw}\n", 3),
    ("Config.toml", "[database]\nuser = \"orders\"\npassword = \"{pw}\"\n", 3),
    (
        "infra/main.tf",
        "resource \"aws_db_instance\" \"orders\" {\n  username = \"orders\"\n  password = \"{pw}\"\n}\n",
        3,
    ),
    (
        "app/settings.py",
        "DATABASES = {\n    'orders': {\n        'PASSWORD': '{pw}',\n    }\n}\n",
        3,
    ),
    ("cmd/main.go", "func main() {\n\tpassword := \"{pw}\"\n\t_ = password\n}\n", 2),
    ("src/config.js", "module.exports = {\n  password: '{pw}',\n};\n", 2),
    ("appsettings.json", "{\n  \"Smtp\": {\n    \"Password\": \"{pw}\"\n  }\n}\n", 3),
    (
        "web.config",
        "<appSettings>\n  <add key=\"SmtpPassword\" value=\"{pw}\" />\n</appSettings>\n",
        2,
    ),
    ("conf/db.xml", "<db>\n  <user>orders</user>\n  <password>{pw}</password>\n</db>\n", 3),
    ("conf/ds.xml", "<datasource user=\"orders\" password=\"{pw}\"/>\n", 1),
    ("deploy.sh", "#!/bin/sh\nexport MYSQL_PWD={pw}\n", 2),
    (
        "docker-compose.yml",
        "services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD={pw}\n",
        4,
    ),
    (
        "scripts/backup.sh",
        "#!/bin/sh\nmysqldump -u root -p'{pw}' orders > orders.sql\n",
        2,
    ),
    ("scripts/load.sh", "mysql -h db.internal -u app -p{pw} orders < schema.sql\n", 1),
    ("Makefile", "restore:\n\tpg_restore --password '{pw}' dump.sql\n", 2),
    (
        "app/db.go",
        "const dsn = \"host=db user=orders password={pw} sslmode=disable\"\n",
        1,
    ),
    (
        "conf/sql.config",
        "Server=db.internal;Database=orders;User Id=app;Password={pw};\n",
        1,
    ),
    (
        "conf/sql2.config",
        "Password={pw};Server=db.internal;User Id=app;Database=orders\n",
        1,
    ),
    (
        "odbc.ini",
        "[orders]\nConnection=Driver={ODBC Driver 18};Server=db;Uid=app;Pwd={pw};\n",
        2,
    ),
];

/// URL forms, for passwords without URL delimiters.
const URLS: &[(&str, &str, u32)] = &[
    (
        ".env",
        "DATABASE_URL=postgres://orders:{pw}@db.internal:5432/orders\n",
        1,
    ),
    (
        "config.yaml",
        "mongo: mongodb://app:{pw}@db1:27017,db2:27017/orders?replicaSet=rs0\n",
        1,
    ),
    (
        "config.yaml",
        "cache: redis://:{pw}@cache.internal:6379/0\n",
        1,
    ),
    (
        "config.yaml",
        "broker: amqp://app:{pw}@mq.internal:5672/orders\n",
        1,
    ),
    (
        "application.properties",
        "spring.datasource.url=jdbc:mysql://db:3306/orders?user=app&password={pw}\n",
        1,
    ),
    (
        "ci.sh",
        "curl -u deploy:{pw} -T app.tgz https://artifacts.internal\n",
        1,
    ),
    (
        "ci/settings.xml",
        "<proxy>http://svc-build:{pw}@proxy.internal.corp:3128</proxy>\n",
        1,
    ),
    (
        "Jenkinsfile",
        "sh 'lftp ftp://backup:{pw}@files.internal.corp/nightly'\n",
        1,
    ),
    (
        "home/ci/.git-credentials",
        "https://deploy:{pw}@git.internal.corp\n",
        1,
    ),
];

#[test]
fn human_passwords_in_every_syntax_are_found_at_their_line() {
    let engine = Engine::builtin().unwrap();
    let passwords = human_passwords(SYNTAXES.len() + URLS.len());
    let mut failures = Vec::new();
    let cases = SYNTAXES.iter().chain(URLS).zip(&passwords);
    for (i, ((path, template, line), pw)) in cases.enumerate() {
        // URL forms need a password without URL delimiters.
        let pw = if i >= SYNTAXES.len() {
            pw.replace(['#', '?', '+'], "!")
        } else {
            pw.clone()
        };
        let text = template.replace("{pw}", &pw);
        let (found, _) = scan(&engine, &text, path);
        let got: Vec<(u32, &str)> = found.iter().map(|f| (f.line, f.secret.as_str())).collect();
        if got != [(*line, pw.as_str())] {
            failures.push(format!("{path}: {text:?}: got {:?}", common::brief(&found)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The real-world shapes, each with the reason it is dropped.
#[test]
fn code_and_names_are_not_passwords() {
    let engine = Engine::builtin().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "windows/src/logon.rs",
            "pub fn logon(password: &windows_core::BSTR, flags: u32) {}\n",
            "code value",
        ),
        (
            "src/auth.c",
            "    conn->password = *cred_blob_ptr2;\n",
            "code value",
        ),
        (
            "types/index.d.ts",
            "  apiKey: SensitiveString2048;\n",
            "code value",
        ),
        (
            "types/auth.d.ts",
            "export type Password = Buffer|Uint8Array|Blob|string\n",
            "code value",
        ),
        (
            "crypto/src/x25519.rs",
            "    private_key: x25519_generate_private_key,\n",
            "code value",
        ),
        (
            "dist/login.js",
            "t={passwordLabel:\"Password:\",rememberMeLabel:\"Remember me\"}\n",
            "code value",
        ),
        (
            "cfnlint/data/schemas/providers/me_south_1.py",
            "    \"AWS::SecretsManager::Secret\": \"ea029b329dc57364\",\n",
            "code value",
        ),
        (
            "moto/rds/models.py",
            "        credentials = {\"username\": \"admin\", \"password\": \"P@55w0rd!\"}\n",
            "stopword",
        ),
        (
            "schema/api.json",
            "{\"apiKey\": \"SensitiveString2048\"}\n",
            "identifier-like",
        ),
        (
            "model.yaml",
            "apiKey: XmlStringMaxLen256\n",
            "identifier-like",
        ),
        (
            "keys.yaml",
            "private_key: x25519_generate_private_key\n",
            "identifier-like",
        ),
        (
            "site/config.json",
            "{\"token\": \"my_recaptchaV3Token\"}\n",
            "identifier-like",
        ),
        (
            "site/setup.html",
            "<pre>password = \"&lt;db-pass-here&gt;\"</pre>\n",
            "encoded value",
        ),
        (
            "requests.txt",
            "GET /login?user=bob&password=p%40ss%3Aword%21 HTTP/1.1\n",
            "encoded value",
        ),
    ];
    for (path, text, reason) in cases {
        let (found, suppressed) = scan(&engine, text, path);
        assert_eq!(common::brief(&found), vec![], "{text:?}");
        let counted: Vec<(&str, u64)> = suppressed
            .by_reason()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect();
        // Decoding may drop the decoded copy too (a percent-encoded value
        // is also scanned decoded): the expected reason must be counted.
        assert!(counted.contains(&(*reason, 1)), "{text:?}: {counted:?}");
    }
}

fn nonzero(suppressed: &Suppressed) -> Vec<(&'static str, u64)> {
    let all = suppressed.by_reason();
    all.into_iter().filter(|(_, n)| *n > 0).collect()
}

/// OpenSSL's error table (`crypto/err/openssl.txt`, rows `SYMBOL:CODE:text`)
/// and its fuzz corpus of OIDs (`fuzz/oids.txt`, `\xHH` bytes), the lines
/// that made the only medium findings on the cargo registry that were not
/// credentials: symbols, error codes and byte constants are not passwords.
/// A password among them is still found, at its line.
#[test]
fn error_tables_and_oids_are_not_passwords() {
    let engine = Engine::builtin().unwrap();
    let table = "\
PEM_R_BAD_PASSWORD_READ:104:bad password read
CMS_R_NO_PASSWORD:178:no password
PEM_R_PROBLEMS_GETTING_PASSWORD:109:problems getting password
SSL_R_BAD_PASSWORD:17
password = \"ERR_R_MALLOC_FAILURE:65\"
password: PASSWORD:17
db.password=Mapleorbit91@
UI_R_RESULT_TOO_SMALL:101:result too small
";
    let (found, suppressed) = scan(&engine, table, "openssl/crypto/err/openssl.txt");
    assert_eq!(
        common::brief(&found),
        vec![(
            "generic-password-assignment".to_string(),
            7,
            13,
            "Mapleorbit91@".to_string()
        )]
    );
    // `109:problems`, `178:no`, `ERR_R_MALLOC_FAILURE:65`; `PASSWORD:17`
    // holds the stopword; `17` alone is too short to be random.
    assert_eq!(
        nonzero(&suppressed),
        vec![("entropy", 1), ("stopword", 1), ("identifier-like", 3)]
    );

    let oids = "\
OBJ_pkcs9_challengePassword=\"\\x2A\\x86\\x48\\x86\\xF7\\x0D\\x01\\x09\\x07\"
OBJ_userPassword=\"\\x55\\x04\\x23\"
OBJ_id_smime_aa_ets_signerAttr=\"\\x2A\\x86\\x48\\x86\\xF7\\x0D\\x01\\x09\\x10\\x02\\x12\"
adminPassword=\"Copper#Heron71\"
";
    let (found, suppressed) = scan(&engine, oids, "openssl/fuzz/oids.txt");
    assert_eq!(
        common::brief(&found),
        vec![(
            "generic-password-assignment".to_string(),
            4,
            16,
            "Copper#Heron71".to_string()
        )]
    );
    assert_eq!(nonzero(&suppressed), vec![("encoded value", 2)]);
}

/// (path, text, rule, line, secret).
const CREDENTIAL_FILES: &[(&str, &str, &str, u32, &str)] = &[
    (
        "home/ci/.netrc",
        "machine git.internal.corp\n  login deploy\n  password Quartz7river!\n",
        "netrc-password",
        3,
        "Quartz7river!",
    ),
    (
        "home/app/.pgpass",
        "# host:port:db:user:password\ndb.internal:5432:orders:app:Copper-Heron-71\n",
        "pgpass-password",
        2,
        "Copper-Heron-71",
    ),
    (
        "home/ci/.docker/config.json",
        "{\n  \"auths\": {\n    \"registry.internal:5000\": {\n      \"auth\": \"ZGVwbG95OlF1YXJ0ejdyaXZlcg==\"\n    }\n  }\n}\n",
        "docker-config-auth",
        4,
        "ZGVwbG95OlF1YXJ0ejdyaXZlcg==",
    ),
    (
        "home/ci/.npmrc",
        "registry=https://npm.internal.corp/\n//npm.internal.corp/:_authToken=Zm9yZXN0LWxhbnRlcm4tOTEtb3Jpb2xl\n",
        "npmrc-auth",
        2,
        "Zm9yZXN0LWxhbnRlcm4tOTEtb3Jpb2xl",
    ),
    (
        "home/ci/.pypirc",
        "[internal]\nusername = uploader\npassword = Marigold!Fjord22\n",
        "pypirc-password",
        3,
        "Marigold!Fjord22",
    ),
    (
        "home/ci/.git-credentials",
        "https://deploy:Tundra-Gecko-48@git.internal.corp\n",
        "git-credentials-password",
        1,
        "Tundra-Gecko-48",
    ),
    (
        "home/ci/.m2/settings.xml",
        "<settings>\n  <servers>\n    <server>\n      <id>internal</id>\n      <password>Pebble#Oriole63</password>\n",
        "maven-settings-password",
        5,
        "Pebble#Oriole63",
    ),
    (
        "home/ops/.s3cfg",
        "[default]\naccess_key = 7HQ2NRZ4KX9PLM3VWT8B\nsecret_key = rK8vN2pX5mQ9wL3zT7yB4cF6\n",
        "s3cfg-secret-key",
        3,
        "rK8vN2pX5mQ9wL3zT7yB4cF6",
    ),
    (
        "home/ops/.aws/credentials",
        "[default]\naws_access_key_id = AKIA2E0A8F3B244C9986\naws_secret_access_key = kW9vXq2Lm8Rt4Zp7Nb3Yc6Hd1Jf5Gs0Ua2Ek8Wo3\n",
        "aws-secret-access-key",
        3,
        "kW9vXq2Lm8Rt4Zp7Nb3Yc6Hd1Jf5Gs0Ua2Ek8Wo3",
    ),
    (
        "deploy/db-secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: orders-db\ntype: Opaque\ndata:\n  password: Q29wcGVyLUhlcm9uLTcx\n",
        "kubernetes-secret-data",
        7,
        "Q29wcGVyLUhlcm9uLTcx",
    ),
    (
        "srv/www/.htpasswd",
        "admin:$apr1$x9Qd2LmA$Kq7vP3nW8zR5tY1cB6dF0/\n",
        "apr1-htpasswd-hash",
        1,
        "x9Qd2LmA$Kq7vP3nW8zR5tY1cB6dF0/",
    ),
];

#[test]
fn credential_files_by_nature() {
    let engine = Engine::builtin().unwrap();
    let mut failures = Vec::new();
    for (path, text, rule, line, secret) in CREDENTIAL_FILES {
        let (found, _) = scan(&engine, text, path);
        let got: Vec<(&str, u32, &str)> = found
            .iter()
            .filter(|f| !f.rule_id.starts_with("aws-access-key-id"))
            .map(|f| (&*f.rule_id, f.line, f.secret.as_str()))
            .collect();
        if got != [(*rule, *line, *secret)] {
            failures.push(format!("{path}: got {:?}", common::brief(&found)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Path-scoped: the same `.netrc` text elsewhere is not `netrc-password`;
    // its one line with a host, a login and a password is netrc content
    // outside a `.netrc` (`credentials-in-code.toml`).
    let (found, _) = scan(&engine, CREDENTIAL_FILES[0].1, "notes/netrc.txt");
    assert_eq!(
        common::brief(&found),
        [(
            "netrc-inline-password".to_string(),
            3,
            12,
            "Quartz7river!".to_string()
        )]
    );
}

fn b64url(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn one(engine: &Engine, text: &str, path: &str) -> (String, Confidence, Vec<&'static str>) {
    let (found, _) = scan(engine, text, path);
    assert_eq!(found.len(), 1, "{text:?}: {:?}", common::brief(&found));
    let f = &found[0];
    (f.rule_id.to_string(), f.confidence, f.tags.clone())
}

#[test]
fn checksums_verify_offline() {
    let engine = Engine::builtin().unwrap();
    let mut rng = Rng(0xc4ec_5eed);
    for (prefix, rule) in [("ghp_", "github-classic-pat"), ("npm_", "npm-access-token")] {
        let random = rng.token(common::ALNUM, 30);
        let check = String::from_utf8(base62_6(crc32(random.as_bytes())).to_vec()).unwrap();
        let valid = format!("{prefix}{random}{check}");
        let text = format!("TOKEN={valid}\n");
        assert_eq!(
            one(&engine, &text, "deploy/.env"),
            (
                rule.into(),
                Confidence::High,
                vec!["prefix", "checksum-valid"]
            )
        );
        // One changed character and the checksum fails: lowered, tagged.
        let last = if valid.ends_with('A') { 'B' } else { 'A' };
        let broken = format!("{}{last}", &valid[..valid.len() - 1]);
        assert_eq!(
            one(&engine, &format!("TOKEN={broken}\n"), "deploy/.env"),
            (
                rule.into(),
                Confidence::Low,
                vec!["prefix", "checksum-invalid"]
            )
        );
        // A valid token in a test path: low, never dropped.
        assert_eq!(
            one(&engine, &text, "tests/fixtures/deploy.env"),
            (
                rule.into(),
                Confidence::Low,
                vec!["prefix", "checksum-valid", "test-path"]
            )
        );
    }

    let sig = rng.token(common::ALNUM, 43);
    let payload = b64url(br#"{"sub":"svc-orders","iat":1767225600}"#);
    let jwt = |header: &str| format!("auth = {}.{payload}.{sig}\n", b64url(header.as_bytes()));
    let (rule, c, tags) = one(&engine, &jwt(r#"{"alg":"HS256","typ":"JWT"}"#), "a.conf");
    assert_eq!((rule.as_str(), c), ("jwt", Confidence::High));
    assert!(tags.contains(&"checksum-valid"), "{tags:?}");
    let (_, c, tags) = one(&engine, &jwt(r#"{"typ":"JWT","kid":"k1"}"#), "a.conf");
    assert_eq!(c, Confidence::Low);
    assert!(tags.contains(&"checksum-invalid"), "{tags:?}");

    // A PyPI token is `pypi-` + a base64url macaroon: version 2, field 1
    // (location) = "pypi.org", then field 2 (identifier).
    let mut mac = vec![2u8, 1, 8];
    mac.extend_from_slice(b"pypi.org");
    mac.extend_from_slice(&[2, 32]);
    mac.extend(rng.token(common::ALNUM, 32).bytes());
    mac.extend_from_slice(&[0, 6, 32]);
    mac.extend(rng.token(common::ALNUM, 32).bytes());
    let token = format!("pypi-{}", b64url(&mac));
    let (rule, c, tags) = one(&engine, &format!("PYPI_TOKEN={token}\n"), "ci/.env");
    assert_eq!((rule.as_str(), c), ("pypi-upload-token", Confidence::High));
    assert!(tags.contains(&"checksum-valid"), "{tags:?}");
    mac[11] = 9; // the identifier field's tag
    let token = format!("pypi-{}", b64url(&mac));
    let (_, c, _) = one(&engine, &format!("PYPI_TOKEN={token}\n"), "ci/.env");
    assert_eq!(c, Confidence::Low);
}

#[test]
fn generic_confidence_and_doc_paths() {
    let engine = Engine::builtin().unwrap();
    let text = "db.password=Mapleorbit91@\n";
    assert_eq!(
        one(&engine, text, "conf/app.properties"),
        (
            "generic-password-assignment".into(),
            Confidence::Medium,
            vec!["generic"]
        )
    );
    assert_eq!(
        one(&engine, text, "docs/setup.md"),
        (
            "generic-password-assignment".into(),
            Confidence::Low,
            vec!["generic", "doc-path"]
        )
    );
    // AWS's documentation shape: a made-up secret in an examples directory
    // is reported, low.
    let (rule, c, tags) = one(
        &engine,
        "    \"ClientSecret\": \"7fq2mzk93hdl8xw4ncv6tbr5pj1gys0e\"\n",
        "awscli/examples/cognito-idp/describe-user-pool-client.rst",
    );
    assert_eq!(
        (rule.as_str(), c, tags),
        (
            "generic-secret-assignment",
            Confidence::Low,
            vec!["generic", "test-path"]
        )
    );
}

/// A change token (WAF's optimistic-concurrency value) or a terms token is
/// a reference, not a credential: dropped by the rule's allowlist, counted.
#[test]
fn change_and_terms_tokens_are_not_credentials() {
    let engine = Engine::builtin().unwrap();
    for line in [
        "    \"ChangeToken\": \"12cs345-67cd-890b-1cd2-c3a4567d89f1\"\n",
        "          \"termToken\": \"term-token-Rk8vQz2LmX7pWc4NbT9hYd3s\"\n",
    ] {
        let (found, suppressed) = scan(&engine, line, "apis/waf.json");
        assert!(found.is_empty(), "{line}: {:?}", common::brief(&found));
        assert_eq!(suppressed.allowlist, 1, "{line}");
    }
}

/// Credentials in test code and sample files are reported, low: a Rust
/// unit-test module (after a top-level `#[cfg(test)]`), a file or directory
/// named as a test or a sample.
#[test]
fn test_code_and_sample_files_are_low() {
    let engine = Engine::builtin().unwrap();
    let mut rng = Rng(0x7e57_c0de);
    let random = rng.token(common::ALNUM, 30);
    let check = String::from_utf8(base62_6(crc32(random.as_bytes())).to_vec()).unwrap();
    let token = format!("ghp_{random}{check}");
    let line = format!("    let token = \"{token}\";\n");
    let src = format!("fn a() {{\n{line}}}\n#[cfg(test)]\nmod tests {{\n{line}}}\n");
    let (found, _) = scan(&engine, &src, "src/client.rs");
    let got: Vec<_> = found
        .iter()
        .map(|f| (f.line, f.confidence, f.tags.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (2, Confidence::High, vec!["prefix", "checksum-valid"]),
            (
                6,
                Confidence::Low,
                vec!["prefix", "checksum-valid", "test-code"]
            ),
        ]
    );
    // The same text in a file that is not Rust: no test module.
    let (found, _) = scan(&engine, &src, "src/client.txt");
    assert!(found.iter().all(|f| f.confidence == Confidence::High));

    // AWS SDK's shape: a made-up refresh token in an API's examples file.
    let text = format!(
        "        \"refreshToken\": \"{}\",\n",
        rng.token(common::ALNUM, 40)
    );
    assert_eq!(
        one(
            &engine,
            &text,
            "aws-sdk/apis/sso-oidc-2019-06-10.examples.json"
        ),
        (
            "generic-secret-assignment".into(),
            Confidence::Low,
            vec!["generic", "test-path"]
        )
    );
}

/// A vendor's published example value is reported, low, tagged.
#[test]
fn published_examples_are_lowered_not_dropped() {
    let engine = Engine::builtin().unwrap();
    assert_eq!(
        one(
            &engine,
            "STRIPE_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc\n",
            "deploy/app.env"
        ),
        (
            "stripe-test-key".into(),
            Confidence::Low,
            vec!["prefix", "published-example"]
        )
    );
    // A test suite's variant of AWS's documented key id (`...EXAMPLF`).
    assert_eq!(
        one(
            &engine,
            "    (\"AKIAIOSFODNN7EXAMPLF\", \"k\"),\n",
            "src/sign/v4a.rs"
        ),
        (
            "aws-access-key-id".into(),
            Confidence::Low,
            vec!["prefix", "published-example"]
        )
    );
}

/// The confirmation reads bytes around the match: chunked scans must still
/// report exactly what a whole-buffer scan reports.
#[test]
fn chunked_scans_confirm_like_whole_scans() {
    let engine = Engine::builtin().unwrap();
    let passwords = human_passwords(SYNTAXES.len());
    let mut text = String::new();
    for (i, ((_, template, _), pw)) in SYNTAXES.iter().zip(&passwords).enumerate() {
        text.push_str(&"// filler line\n".repeat(i % 7));
        text.push_str(&template.replace("{pw}", pw));
        text.push_str("  apiKey: SensitiveString2048;\n");
        text.push_str("t={passwordLabel:\"Password:\",rememberMeLabel:\"Remember\"}\n");
    }
    let whole = common::brief(&common::scan(&engine, text.as_bytes()));
    // In `src/main.rs` (source code), the unquoted values outside string
    // literals are code; 14 findings remain.
    assert_eq!(whole.len(), 14, "{whole:?}");
    for chunk in [97, 256, 1000] {
        let chunked = common::brief(&common::scan_chunked(&engine, text.as_bytes(), chunk));
        assert_eq!(chunked, whole, "chunk {chunk}");
    }
}

/// Attribution: a generic `NAME = VALUE` whose NAME names a provider that
/// needs its keyword (no distinctive prefix). A value of the provider's
/// shape is the provider's finding (the generic one is its duplicate); any
/// other value stays generic, one level lower, tagged with the provider
/// rule whose shape it misses.
#[test]
fn generic_values_named_after_a_provider() {
    const ACME: &str = r#"
[[providers]]
id = "acmecloud-api-key"
provider = "Acmecloud"
name = "Acmecloud API key"
keywords = ["acmecloud"]
alphabet = "hex-lower"
len = 32
"#;
    let mut b = EngineBuilder::new();
    for f in RuleFile::builtin() {
        b = b.add(f);
    }
    let engine = b
        .add(RuleFile::parse(ACME, "acme.toml").unwrap())
        .build()
        .unwrap()
        .0;
    let mut rng = Rng(0xacc0_5eed);
    let fits = rng.token(common::HEX, 32);
    let text = format!("APP_ENV=production\nACMECLOUD_API_KEY={fits}\n");
    let (found, suppressed) = scan(&engine, &text, "deploy/app.env");
    assert_eq!(
        common::brief(&found),
        vec![("acmecloud-api-key".to_string(), 2, 19, fits.clone())]
    );
    assert_eq!(found[0].confidence, Confidence::Medium);
    assert_eq!(suppressed.duplicate, 1);

    // Not the shape (base62, 24): generic, medium lowered to low.
    let misses = rng.token(common::ALNUM, 24);
    let text = format!("APP_ENV=production\nACMECLOUD_API_KEY={misses}\n");
    let (found, suppressed) = scan(&engine, &text, "deploy/app.env");
    assert_eq!(
        common::brief(&found),
        vec![(
            "generic-secret-assignment".to_string(),
            2,
            19,
            misses.clone()
        )]
    );
    assert_eq!(
        (found[0].confidence, found[0].tags.clone()),
        (
            Confidence::Low,
            vec!["generic", "shape-mismatch:acmecloud-api-key"]
        )
    );
    assert_eq!(suppressed.duplicate, 0);

    // A key that names no provider, or names it out of the rule's reach
    // (more than 40 bytes before the value): generic, medium.
    for text in [
        format!("OTHER_API_KEY={misses}\n"),
        format!("acmecloudy_api_key={misses}\n"),
        format!("acmecloud = {{ region = \"eu-west-1\", endpoint_url = \"x\", api_key = \"{misses}\" }}\n"),
    ] {
        let (rule, c, tags) = one(&engine, &text, "deploy/app.env");
        assert_eq!(
            (rule.as_str(), c, tags),
            ("generic-secret-assignment", Confidence::Medium, vec!["generic"]),
            "{text}"
        );
    }
}
