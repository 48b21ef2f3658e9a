//! Every built-in validator's request shape against the provider's
//! documented form: method, URL and header names. A validator added,
//! removed or changed must change this table.

mod common;

use scanner_engine::{Engine, Method, Request, Vars};

const SHAPES: &[(&str, &str, &str, &[&str])] = &[
    (
        "newrelic-user-api-key",
        "POST",
        "https://api.newrelic.com/graphql",
        &["API-Key", "Content-Type"],
    ),
    (
        "gcp-api-key",
        "GET",
        "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1",
        &["x-goog-api-key"],
    ),
    (
        "gcp-oauth-access-token",
        "GET",
        "https://oauth2.googleapis.com/tokeninfo?access_token={{secret}}",
        &[],
    ),
    (
        "twilio-account-sid-auth-token",
        "GET",
        "https://api.twilio.com/2010-04-01/Accounts/{{sid}}.json",
        &["Authorization"],
    ),
    (
        "dockerhub-pat-with-username",
        "GET",
        "https://auth.docker.io/token?service=registry.docker.io",
        &["Authorization"],
    ),
    (
        "gcp-service-account-key",
        "POST",
        "https://oauth2.googleapis.com/token",
        &["Content-Type"],
    ),
    (
        "airtable-personal-access-token",
        "GET",
        "https://api.airtable.com/v0/meta/whoami",
        &["Authorization"],
    ),
    (
        "anthropic-admin-key",
        "GET",
        "https://api.anthropic.com/v1/organizations/users?limit=1",
        &["anthropic-version", "x-api-key"],
    ),
    (
        "anthropic-api-key",
        "GET",
        "https://api.anthropic.com/v1/models",
        &["anthropic-version", "x-api-key"],
    ),
    (
        "asana-personal-access-token",
        "GET",
        "https://app.asana.com/api/1.0/users/me",
        &["Authorization"],
    ),
    (
        "aws-access-key-pair",
        "POST",
        "https://sts.amazonaws.com/",
        &["Content-Type", "X-Amz-Date", "Authorization"],
    ),
    (
        "brevo-api-key",
        "GET",
        "https://api.brevo.com/v3/account",
        &["Accept", "api-key"],
    ),
    (
        "buildkite-api-token",
        "GET",
        "https://api.buildkite.com/v2/access-token",
        &["Authorization"],
    ),
    (
        "circleci-legacy-token",
        "GET",
        "https://circleci.com/api/v2/me",
        &["Circle-Token"],
    ),
    (
        "circleci-token",
        "GET",
        "https://circleci.com/api/v2/me",
        &["Circle-Token"],
    ),
    (
        "clickup-personal-token",
        "GET",
        "https://api.clickup.com/api/v2/user",
        &["Authorization"],
    ),
    (
        "cloudflare-api-token",
        "GET",
        "https://api.cloudflare.com/client/v4/user/tokens/verify",
        &["Authorization"],
    ),
    (
        "cohere-api-key",
        "GET",
        "https://api.cohere.com/v1/models",
        &["Authorization"],
    ),
    (
        "contentful-personal-access-token",
        "GET",
        "https://api.contentful.com/users/me",
        &["Authorization"],
    ),
    (
        "datadog-api-key",
        "GET",
        "https://api.datadoghq.com/api/v1/validate",
        &["DD-API-KEY"],
    ),
    (
        "deepseek-api-key",
        "GET",
        "https://api.deepseek.com/user/balance",
        &["Authorization"],
    ),
    (
        "digitalocean-oauth-token",
        "GET",
        "https://api.digitalocean.com/v2/account",
        &["Authorization"],
    ),
    (
        "digitalocean-pat",
        "GET",
        "https://api.digitalocean.com/v2/account",
        &["Authorization"],
    ),
    (
        "discord-bot-token",
        "GET",
        "https://discord.com/api/v10/users/@me",
        &["Authorization"],
    ),
    (
        "doppler-service-token",
        "GET",
        "https://api.doppler.com/v3/me",
        &["Authorization"],
    ),
    (
        "dropbox-access-token",
        "POST",
        "https://api.dropboxapi.com/2/users/get_current_account",
        &["Authorization"],
    ),
    (
        "easypost-api-key",
        "GET",
        "https://api.easypost.com/v2/users",
        &["Authorization"],
    ),
    (
        "elevenlabs-api-key",
        "GET",
        "https://api.elevenlabs.io/v1/user",
        &["xi-api-key"],
    ),
    (
        "fastly-api-token",
        "GET",
        "https://api.fastly.com/current_user",
        &["Fastly-Key"],
    ),
    (
        "figma-personal-access-token",
        "GET",
        "https://api.figma.com/v1/me",
        &["X-Figma-Token"],
    ),
    (
        "github-classic-pat",
        "GET",
        "https://api.github.com/user",
        &["Accept", "Authorization", "X-GitHub-Api-Version"],
    ),
    (
        "github-fine-grained-pat",
        "GET",
        "https://api.github.com/user",
        &["Accept", "Authorization", "X-GitHub-Api-Version"],
    ),
    (
        "github-oauth-token",
        "GET",
        "https://api.github.com/user",
        &["Accept", "Authorization", "X-GitHub-Api-Version"],
    ),
    (
        "github-server-to-server-token",
        "GET",
        "https://api.github.com/installation/repositories?per_page=1",
        &["Accept", "Authorization", "X-GitHub-Api-Version"],
    ),
    (
        "github-user-to-server-token",
        "GET",
        "https://api.github.com/user",
        &["Accept", "Authorization", "X-GitHub-Api-Version"],
    ),
    (
        "gitlab-pat",
        "GET",
        "https://gitlab.com/api/v4/personal_access_tokens/self",
        &["PRIVATE-TOKEN"],
    ),
    (
        "groq-api-key",
        "GET",
        "https://api.groq.com/openai/v1/models",
        &["Authorization"],
    ),
    (
        "heroku-api-key",
        "GET",
        "https://api.heroku.com/account",
        &["Accept", "Authorization"],
    ),
    (
        "heroku-api-key-v2",
        "GET",
        "https://api.heroku.com/account",
        &["Accept", "Authorization"],
    ),
    (
        "honeycomb-api-key",
        "GET",
        "https://api.honeycomb.io/1/auth",
        &["X-Honeycomb-Team"],
    ),
    (
        "hubspot-private-app-token",
        "GET",
        "https://api.hubapi.com/account-info/v3/details",
        &["Authorization"],
    ),
    (
        "huggingface-access-token",
        "GET",
        "https://huggingface.co/api/whoami-v2",
        &["Authorization"],
    ),
    (
        "huggingface-org-token",
        "GET",
        "https://huggingface.co/api/whoami-v2",
        &["Authorization"],
    ),
    (
        "infisical-service-token",
        "GET",
        "https://app.infisical.com/api/v2/service-token",
        &["Authorization"],
    ),
    (
        "intercom-access-token",
        "GET",
        "https://api.intercom.io/me",
        &["Accept", "Authorization"],
    ),
    (
        "launchdarkly-access-token",
        "GET",
        "https://app.launchdarkly.com/api/v2/caller-identity",
        &["Authorization"],
    ),
    (
        "mailgun-api-key",
        "GET",
        "https://api.mailgun.net/v3/domains",
        &["Authorization"],
    ),
    (
        "mailgun-private-api-key",
        "GET",
        "https://api.mailgun.net/v3/domains",
        &["Authorization"],
    ),
    (
        "mapbox-secret-token",
        "GET",
        "https://api.mapbox.com/tokens/v2?access_token={{secret}}",
        &[],
    ),
    (
        "mistral-api-key",
        "GET",
        "https://api.mistral.ai/v1/models",
        &["Authorization"],
    ),
    (
        "neon-api-key",
        "GET",
        "https://console.neon.tech/api/v2/users/me",
        &["Authorization"],
    ),
    (
        "netlify-access-token",
        "GET",
        "https://api.netlify.com/api/v1/user",
        &["Authorization"],
    ),
    (
        "notion-integration-token",
        "GET",
        "https://api.notion.com/v1/users/me",
        &["Authorization", "Notion-Version"],
    ),
    (
        "npm-access-token",
        "GET",
        "https://registry.npmjs.org/-/whoami",
        &["Authorization"],
    ),
    (
        "npm-legacy-token",
        "GET",
        "https://registry.npmjs.org/-/whoami",
        &["Authorization"],
    ),
    (
        "openai-api-key",
        "GET",
        "https://api.openai.com/v1/models",
        &["Authorization"],
    ),
    (
        "openai-service-account-key",
        "GET",
        "https://api.openai.com/v1/models",
        &["Authorization"],
    ),
    (
        "openrouter-api-key",
        "GET",
        "https://openrouter.ai/api/v1/key",
        &["Authorization"],
    ),
    (
        "pagerduty-api-key",
        "GET",
        "https://api.pagerduty.com/abilities",
        &["Accept", "Authorization"],
    ),
    (
        "paystack-secret-key",
        "GET",
        "https://api.paystack.co/balance",
        &["Authorization"],
    ),
    (
        "pinecone-api-key",
        "GET",
        "https://api.pinecone.io/indexes",
        &["Api-Key"],
    ),
    (
        "pipedrive-api-token",
        "GET",
        "https://api.pipedrive.com/v1/users/me?api_token={{secret}}",
        &[],
    ),
    (
        "postman-api-key",
        "GET",
        "https://api.getpostman.com/me",
        &["X-Api-Key"],
    ),
    (
        "postmark-server-token",
        "GET",
        "https://api.postmarkapp.com/server",
        &["Accept", "X-Postmark-Server-Token"],
    ),
    (
        "pulumi-access-token",
        "GET",
        "https://api.pulumi.com/api/user",
        &["Accept", "Authorization"],
    ),
    (
        "readme-api-key",
        "GET",
        "https://dash.readme.com/api/v1",
        &["Authorization"],
    ),
    (
        "render-api-key",
        "GET",
        "https://api.render.com/v1/owners?limit=1",
        &["Authorization"],
    ),
    (
        "replicate-api-token",
        "GET",
        "https://api.replicate.com/v1/account",
        &["Authorization"],
    ),
    (
        "sendgrid-api-key",
        "GET",
        "https://api.sendgrid.com/v3/scopes",
        &["Authorization"],
    ),
    (
        "sentry-user-token",
        "GET",
        "https://sentry.io/api/0/organizations/",
        &["Authorization"],
    ),
    (
        "shippo-api-token",
        "GET",
        "https://api.goshippo.com/addresses?results=1",
        &["Authorization"],
    ),
    (
        "slack-bot-token",
        "POST",
        "https://slack.com/api/auth.test",
        &["Authorization"],
    ),
    (
        "slack-user-token",
        "POST",
        "https://slack.com/api/auth.test",
        &["Authorization"],
    ),
    (
        "snyk-api-token",
        "GET",
        "https://api.snyk.io/rest/self?version=2024-06-10",
        &["Authorization"],
    ),
    (
        "square-access-token",
        "GET",
        "https://connect.squareup.com/v2/locations",
        &["Authorization"],
    ),
    (
        "stripe-restricted-key",
        "GET",
        "https://api.stripe.com/v1/balance",
        &["Authorization"],
    ),
    (
        "stripe-secret-key",
        "GET",
        "https://api.stripe.com/v1/balance",
        &["Authorization"],
    ),
    (
        "stripe-test-key",
        "GET",
        "https://api.stripe.com/v1/balance",
        &["Authorization"],
    ),
    (
        "supabase-access-token",
        "GET",
        "https://api.supabase.com/v1/projects",
        &["Authorization"],
    ),
    (
        "tailscale-api-key",
        "GET",
        "https://api.tailscale.com/api/v2/tailnet/-/devices",
        &["Authorization"],
    ),
    (
        "telegram-bot-token",
        "GET",
        "https://api.telegram.org/bot{{secret}}/getMe",
        &[],
    ),
    (
        "terraform-cloud-api-token",
        "GET",
        "https://app.terraform.io/api/v2/account/details",
        &["Authorization", "Content-Type"],
    ),
    (
        "together-api-key",
        "GET",
        "https://api.together.xyz/v1/models",
        &["Authorization"],
    ),
    (
        "typeform-personal-access-token",
        "GET",
        "https://api.typeform.com/me",
        &["Authorization"],
    ),
    (
        "vercel-access-token",
        "GET",
        "https://api.vercel.com/v2/user",
        &["Authorization"],
    ),
    (
        "webflow-api-token",
        "GET",
        "https://api.webflow.com/v2/token/introspect",
        &["Authorization"],
    ),
    (
        "xai-api-key",
        "GET",
        "https://api.x.ai/v1/api-key",
        &["Authorization"],
    ),
];

#[test]
fn every_builtin_validator_has_its_documented_shape() {
    let engine = Engine::builtin().unwrap();
    let mut seen = Vec::new();
    let mut entry_validators = 0;
    for rule in engine.rules() {
        let Some(v) = &rule.validator else { continue };
        let (method, url, headers) = v.shape();
        // The provider table's validators are data written with their
        // entries: held to every check below, listed by count only.
        if rule.origin.starts_with("builtin:providers-") {
            entry_validators += 1;
        } else {
            seen.push((
                rule.id.to_string(),
                method.as_str(),
                url.clone(),
                headers.clone(),
            ));
        }
        assert!(v.docs.starts_with("https://"), "{}", rule.id);
        // Read-only: GET, or the documented read-only POST.
        assert!(
            method != Method::Post
                || rule.id.starts_with("slack-")
                || [
                    "aws-access-key-pair",
                    "dropbox-access-token",
                    "gcp-service-account-key",
                    "newrelic-user-api-key"
                ]
                .contains(&&*rule.id),
            "{}: POST",
            rule.id
        );
        // The secret goes where the URL says, and only in a header or the URL path.
        let vars = Vars {
            secret: "SECRETVALUE123".into(),
            captures: vec![
                ("key_id".into(), "AKIAEXAMPLEKEYID1234".into()),
                ("sid".into(), "AC0123".into()),
                ("username".into(), "acmebot".into()),
            ],
        };
        if &*rule.id == "gcp-service-account-key" {
            // Needs a real key: `google_service_account_jwt` below.
            assert!(v.request(&vars, 0).is_err());
            continue;
        }
        let req = v.request(&vars, 0).unwrap();
        assert!(req
            .url
            .starts_with(&url[..url.find("{{").unwrap_or(url.len())]));
        if method == Method::Get {
            assert!(req.body.is_empty(), "{}: a body", rule.id);
        }
    }
    seen.sort();
    let mut want: Vec<(String, &str, String, Vec<String>)> = SHAPES
        .iter()
        .map(|(id, m, u, h)| {
            (
                id.to_string(),
                *m,
                u.to_string(),
                h.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect();
    want.sort();
    assert_eq!(seen, want);
    assert_eq!(entry_validators, 36);
}

/// The AWS pair's validator gets the key id from the rule's named group.
#[test]
fn aws_pair_captures_its_key_id() {
    let engine = Engine::builtin().unwrap();
    let m = r#"new BasicAWSCredentials("AKIALHF5MYSXMFT4A4ON", "vUrY8R0hY8nq6/tGoNZcqYpqkuFXq4qAeKLeOGhX");"#;
    assert_eq!(
        engine.named_captures("aws-access-key-pair", m),
        [("key_id".to_string(), "AKIALHF5MYSXMFT4A4ON".to_string())]
    );
    let rule = engine
        .rules()
        .iter()
        .find(|r| &*r.id == "aws-access-key-pair")
        .unwrap();
    let vars = Vars {
        secret: "vUrY8R0hY8nq6/tGoNZcqYpqkuFXq4qAeKLeOGhX".into(),
        captures: engine.named_captures("aws-access-key-pair", m),
    };
    let req = rule
        .validator
        .as_ref()
        .unwrap()
        .request(&vars, 1_440_938_160)
        .unwrap();
    assert!(
        req.headers[2].1.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIALHF5MYSXMFT4A4ON/20150830/us-east-1/sts/aws4_request"
        ),
        "{:?}",
        req.headers[2]
    );
}

/// A Google service-account key file, as `openssl` made its key: the rule
/// captures `client_email` past the key, and the validator sends Google's
/// documented JWT-bearer exchange, signed RS256 with that key (`openssl dgst
/// -verify` checks the signature with the key's public half).
#[test]
fn google_service_account_jwt() {
    use std::process::Command;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("google-sa-jwt");
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key.pem");
    let ok = Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&key)
        .output()
        .unwrap();
    assert!(ok.status.success());
    let pem = std::fs::read_to_string(&key).unwrap();
    let email = "deployer@billing-lscbzw-312215.iam.gserviceaccount.com";
    let json_pem = pem.replace('\n', "\\n");
    let file = format!(
        "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"billing-lscbzw-312215\",\n  \"private_key_id\": \"2e9577aa38005e7dd23559529d4f9e3dfc4399f5\",\n  \"private_key\": \"{json_pem}\",\n  \"client_email\": \"{email}\",\n  \"token_uri\": \"https://evil.example.com/token\"\n}}\n"
    );
    let engine = Engine::builtin().unwrap();
    let found = common::scan_path(&engine, file.as_bytes(), "sa.json");
    let f = found
        .iter()
        .find(|f| &*f.rule_id == "gcp-service-account-key")
        .expect("the key file is found");
    assert_eq!(f.secret, json_pem);
    // The match is cut in reports; the engine kept the capture past the cut.
    assert_eq!(
        f.captures,
        [("client_email".to_string(), email.to_string())]
    );
    let rule = engine
        .rules()
        .iter()
        .find(|r| &*r.id == "gcp-service-account-key")
        .unwrap();
    let v = rule.validator.as_ref().unwrap();
    assert_eq!(v.host(), "oauth2.googleapis.com");
    let now = 1_700_000_000;
    let req = v
        .request(
            &Vars {
                secret: f.secret.clone(),
                captures: f.captures.clone(),
            },
            now,
        )
        .unwrap();
    assert_eq!(req.method, Method::Post);
    assert_eq!(req.url, "https://oauth2.googleapis.com/token");
    assert_eq!(
        req.headers,
        [(
            "Content-Type".to_string(),
            "application/x-www-form-urlencoded".to_string()
        )]
    );
    let body = String::from_utf8(req.body).unwrap();
    let assertion = body
        .strip_prefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=")
        .unwrap_or_else(|| panic!("{body}"));
    let parts: Vec<&str> = assertion.split('.').collect();
    assert_eq!(parts.len(), 3);
    assert!(parts.iter().all(|p| p
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')));
    let json =
        |p: &str| -> serde_json::Value { serde_json::from_slice(&b64url_decode(p)).unwrap() };
    assert_eq!(
        json(parts[0]),
        serde_json::json!({"alg": "RS256", "typ": "JWT"})
    );
    assert_eq!(
        json(parts[1]),
        serde_json::json!({
            "iss": email,
            "scope": "https://www.googleapis.com/auth/cloud-platform.read-only",
            "aud": "https://oauth2.googleapis.com/token",
            "iat": now,
            "exp": now + 3600,
        })
    );
    let signed = dir.join("signed.txt");
    let sig = dir.join("sig.bin");
    let public = dir.join("public.pem");
    std::fs::write(&signed, format!("{}.{}", parts[0], parts[1])).unwrap();
    std::fs::write(&sig, b64url_decode(parts[2])).unwrap();
    let ok = Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&key)
        .arg("-out")
        .arg(&public)
        .status()
        .unwrap();
    assert!(ok.success());
    let out = Command::new("openssl")
        .args(["dgst", "-sha256", "-verify"])
        .arg(&public)
        .arg("-signature")
        .arg(&sig)
        .arg(&signed)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Verified OK");
    // Google's answers: a token; a deleted key or account; a disabled client.
    let d = v.decide(
        200,
        &[],
        br#"{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}"#,
    );
    assert_eq!(d.status, scanner_engine::ValidationStatus::Valid);
    assert!(d.identity.is_empty(), "the access token is never read out");
    let d = v.decide(
        400,
        &[],
        br#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#,
    );
    assert_eq!(d.status, scanner_engine::ValidationStatus::Invalid);
    let d = v.decide(401, &[], br#"{"error":"invalid_client"}"#);
    assert_eq!(d.status, scanner_engine::ValidationStatus::Invalid);
    let d = v.decide(400, &[], br#"{"error":"invalid_request"}"#);
    assert_eq!(d.status, scanner_engine::ValidationStatus::Unknown);
}

fn b64url_decode(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => panic!("not base64url: {b}"),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// The Twilio pair's validator gets the account SID from the rule's named
/// group and sends it with the token as Twilio's documented Basic auth.
#[test]
fn twilio_pair_sends_sid_and_token_as_basic_auth() {
    let m = "TWILIO_ACCOUNT_SID=AC6b183bf708f8f2f3e072f2be790b2154\nTWILIO_AUTH_TOKEN=68e6485fd9304349aa0ed0aaedb2b4e7";
    let (captures, req) = pair_request(
        "twilio-account-sid-auth-token",
        m,
        "68e6485fd9304349aa0ed0aaedb2b4e7",
    );
    assert_eq!(
        captures,
        [(
            "sid".to_string(),
            "AC6b183bf708f8f2f3e072f2be790b2154".to_string()
        )]
    );
    assert_eq!(req.method, Method::Get);
    assert_eq!(
        req.url,
        "https://api.twilio.com/2010-04-01/Accounts/AC6b183bf708f8f2f3e072f2be790b2154.json"
    );
    // base64("AC6b183bf708f8f2f3e072f2be790b2154:68e6485fd9304349aa0ed0aaedb2b4e7")
    assert_eq!(
        req.headers,
        [(
            "Authorization".to_string(),
            "Basic QUM2YjE4M2JmNzA4ZjhmMmYzZTA3MmYyYmU3OTBiMjE1NDo2OGU2NDg1ZmQ5MzA0MzQ5YWEwZWQwYWFlZGIyYjRlNw==".to_string()
        )]
    );
    assert!(req.body.is_empty());
}

/// The Docker Hub pair's validator sends the captured user name and the
/// token as Basic auth to the registry's token service, a GET.
#[test]
fn dockerhub_pair_sends_user_and_token_as_basic_auth() {
    for m in [
        "DOCKERHUB_USERNAME=acmebot\nDOCKERHUB_TOKEN=dckr_pat_gI8y0Tez0SF_uqkgqfGvcWcKjZi",
        "docker login -u acmebot -p dckr_pat_gI8y0Tez0SF_uqkgqfGvcWcKjZi",
    ] {
        let (captures, req) = pair_request(
            "dockerhub-pat-with-username",
            m,
            "dckr_pat_gI8y0Tez0SF_uqkgqfGvcWcKjZi",
        );
        assert_eq!(
            captures,
            [("username".to_string(), "acmebot".to_string())],
            "{m}"
        );
        assert_eq!(req.method, Method::Get);
        assert_eq!(
            req.url,
            "https://auth.docker.io/token?service=registry.docker.io"
        );
        // base64("acmebot:dckr_pat_gI8y0Tez0SF_uqkgqfGvcWcKjZi")
        assert_eq!(
            req.headers,
            [(
                "Authorization".to_string(),
                "Basic YWNtZWJvdDpkY2tyX3BhdF9nSTh5MFRlejBTRl91cWtncWZHdmNXY0tqWmk=".to_string()
            )]
        );
    }
}

/// A pair rule `id` scanned over `text`: its one finding's secret must be
/// `secret`; the named captures of the match and the validator's request.
fn pair_request(id: &str, text: &str, secret: &str) -> (Vec<(String, String)>, Request) {
    let engine = Engine::builtin().unwrap();
    let found: Vec<_> = common::scan(&engine, text.as_bytes())
        .into_iter()
        .filter(|f| &*f.rule_id == id)
        .collect();
    assert_eq!(found.len(), 1, "{text}");
    assert_eq!(found[0].secret, secret);
    let captures = engine.named_captures(id, text);
    let rule = engine.rules().iter().find(|r| &*r.id == id).unwrap();
    let vars = Vars {
        secret: secret.into(),
        captures: captures.clone(),
    };
    let req = rule.validator.as_ref().unwrap().request(&vars, 0).unwrap();
    (captures, req)
}

/// Slack's auth.test answers HTTP 200 with `ok: false` for a dead token and
/// for a live one it cannot serve now or here (`accesslimited`: an IP
/// allowlist; `fatal_error`, `ratelimited`...): only the errors that say the
/// token is dead make it `invalid` (<https://api.slack.com/methods/auth.test>).
#[test]
fn slack_calls_a_token_invalid_only_for_the_errors_that_say_so() {
    use scanner_engine::ValidationStatus::{Invalid, Unknown, Valid};
    let engine = Engine::builtin().unwrap();
    for id in ["slack-bot-token", "slack-user-token"] {
        let rule = engine.rules().iter().find(|r| &*r.id == id).unwrap();
        let v = rule.validator.as_ref().unwrap();
        let mut got = Vec::new();
        for body in [
            r#"{"ok":true,"user":"deploy-bot","team":"Acme"}"#,
            r#"{"ok":false,"error":"invalid_auth"}"#,
            r#"{"ok":false,"error":"not_authed"}"#,
            r#"{"ok":false,"error":"account_inactive"}"#,
            r#"{"ok":false,"error":"token_revoked"}"#,
            r#"{"ok": false, "error": "token_expired"}"#,
            r#"{"ok":false,"error":"accesslimited"}"#,
            r#"{"ok":false,"error":"ekm_access_denied"}"#,
            r#"{"ok":false,"error":"ratelimited"}"#,
            r#"{"ok":false,"error":"fatal_error"}"#,
            r#"{"ok":false,"error":"service_unavailable"}"#,
        ] {
            got.push(v.decide(200, &[], body.as_bytes()).status);
        }
        assert_eq!(
            got,
            [
                Valid, Invalid, Invalid, Invalid, Invalid, Invalid, Unknown, Unknown, Unknown,
                Unknown, Unknown
            ],
            "{id}"
        );
    }
}
