//! Every built-in validator's request shape against the provider's
//! documented form: method, URL and header names. A validator added,
//! removed or changed must change this table.

use scanner_engine::{Engine, Method, Vars};

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
                || [
                    "aws-access-key-pair",
                    "dropbox-access-token",
                    "newrelic-user-api-key"
                ]
                .contains(&&*rule.id),
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
