//! Every built-in validator's request shape against the provider's
//! documented form: method, URL and header names. A validator added,
//! removed or changed must change this table.

use scanner_engine::{Engine, Method, Vars};

const SHAPES: &[(&str, &str, &str, &[&str])] = &[
    (
        "aws-access-key-pair",
        "POST",
        "https://sts.amazonaws.com/",
        &["Content-Type", "X-Amz-Date", "Authorization"],
    ),
    (
        "airtable-personal-access-token",
        "GET",
        "https://api.airtable.com/v0/meta/whoami",
        &["Authorization"],
    ),
    (
        "anthropic-api-key",
        "GET",
        "https://api.anthropic.com/v1/models",
        &["anthropic-version", "x-api-key"],
    ),
    (
        "circleci-token",
        "GET",
        "https://circleci.com/api/v2/me",
        &["Circle-Token"],
    ),
    (
        "cloudflare-api-token",
        "GET",
        "https://api.cloudflare.com/client/v4/user/tokens/verify",
        &["Authorization"],
    ),
    (
        "datadog-api-key",
        "GET",
        "https://api.datadoghq.com/api/v1/validate",
        &["DD-API-KEY"],
    ),
    (
        "digitalocean-pat",
        "GET",
        "https://api.digitalocean.com/v2/account",
        &["Authorization"],
    ),
    (
        "doppler-service-token",
        "GET",
        "https://api.doppler.com/v3/me",
        &["Authorization"],
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
        "huggingface-access-token",
        "GET",
        "https://huggingface.co/api/whoami-v2",
        &["Authorization"],
    ),
    (
        "mailgun-api-key",
        "GET",
        "https://api.mailgun.net/v3/domains",
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
        "pagerduty-api-key",
        "GET",
        "https://api.pagerduty.com/abilities",
        &["Accept", "Authorization"],
    ),
    (
        "postman-api-key",
        "GET",
        "https://api.getpostman.com/me",
        &["X-Api-Key"],
    ),
    (
        "sendgrid-api-key",
        "GET",
        "https://api.sendgrid.com/v3/scopes",
        &["Authorization"],
    ),
    (
        "slack-bot-token",
        "POST",
        "https://slack.com/api/auth.test",
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
        "telegram-bot-token",
        "GET",
        "https://api.telegram.org/bot{{secret}}/getMe",
        &[],
    ),
    (
        "vercel-access-token",
        "GET",
        "https://api.vercel.com/v2/user",
        &["Authorization"],
    ),
];

#[test]
fn every_builtin_validator_has_its_documented_shape() {
    let engine = Engine::builtin().unwrap();
    let mut seen = Vec::new();
    for rule in engine.rules() {
        let Some(v) = &rule.validator else { continue };
        let (method, url, headers) = v.shape();
        seen.push((
            rule.id.to_string(),
            method.as_str(),
            url.clone(),
            headers.clone(),
        ));
        assert!(v.docs.starts_with("https://"), "{}", rule.id);
        // Read-only: GET, or the documented read-only POST.
        assert!(
            method != Method::Post
                || rule.id.starts_with("slack-")
                || &*rule.id == "aws-access-key-pair",
            "{}: POST",
            rule.id
        );
        // The secret goes where the URL says, and only in a header or the URL path.
        let vars = Vars {
            secret: "SECRETVALUE123".into(),
            captures: vec![("key_id".into(), "AKIAEXAMPLEKEYID1234".into())],
        };
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
