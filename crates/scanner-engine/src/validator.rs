//! Validators as data: how to ask a provider whether a secret works.
//!
//! A rule carries one in a `[rules.validate]` table (format: `docs/rules.md`,
//! "Validators"). The same table is meant to sit in a provider-table entry.
//! This module parses it ([`ValidatorSyntax`]), proves it safe when the rule
//! is compiled (so `scanner rules check` reports a bad one, naming the rule),
//! builds the request for a secret ([`Validator::request`]) and reads the
//! answer ([`Validator::decide`]). It sends nothing: the engine has no
//! network; `scanner-cli`'s `validate` module does the I/O.
//!
//! # What compiling proves
//!
//! * The URL is `https://`, its host is fixed text: no template in the
//!   scheme, the host or the port, no user info. A secret goes only to the
//!   host its rule names, never to a host taken from the scanned content.
//! * The method is `GET` or `HEAD`; `POST` only with `read_only_post`, the
//!   reason the call reads and changes nothing (Slack's `auth.test`, AWS
//!   STS `GetCallerIdentity`), which the table must give.
//! * Every template names `secret` or a named capture group of the rule's
//!   regex; `docs` is an `https://` URL (the provider's documentation of the
//!   endpoint and of the answer that proves validity).
//! * Matchers: JSON pointers start with `/`, body regexes compile (a
//!   built-in rule's on the first answer that needs it: compiling them
//!   took 0.7 ms of every start-up; `every_builtin_body_regex_compiles`
//!   compiles them all).
//!
//! # Deciding
//!
//! The answer is `valid` when it satisfies every condition of `valid`
//! (default: status 200), else `invalid` when it satisfies every condition
//! of `invalid` (default: status 401 or 403), else `unknown`. Retrying 429,
//! 503 and a 403 that says it is a rate limit is the caller's business
//! (`scanner-cli`'s `validate::rate_limited`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex_automata::meta::Regex;
use serde::Deserialize;

// `base64` is re-exported for the tests of `validation.rs`.
pub(crate) use crate::request::base64;
use crate::request::{Method, Request};
use crate::sigv4::AWS_STS_HOST;
use crate::validation::{Validation, ValidationStatus};

/// `[rules.validate]` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ValidatorSyntax {
    /// `http` (default) or a built-in kind: `aws-sts`, `gcp-service-account`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The provider's documentation of the endpoint.
    pub docs: String,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `[user, password]` templates for HTTP Basic authentication.
    #[serde(default)]
    pub basic_auth: Option<[String; 2]>,
    #[serde(default)]
    pub body: Option<String>,
    /// Why a `POST` reads and changes nothing; required for `POST`.
    #[serde(default)]
    pub read_only_post: Option<String>,
    #[serde(default)]
    pub valid: Option<MatcherSyntax>,
    #[serde(default)]
    pub invalid: Option<MatcherSyntax>,
    /// Non-secret identity fields: name = `json:/pointer` or `header:name`.
    #[serde(default)]
    pub identity: BTreeMap<String, String>,
}

/// A `valid` or `invalid` table: every condition given must hold.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatcherSyntax {
    #[serde(default)]
    pub status: Vec<u16>,
    /// JSON pointer (RFC 6901) = the value it must have.
    #[serde(default)]
    pub json: BTreeMap<String, toml::Value>,
    /// A regex the body must match.
    #[serde(default)]
    pub body: Option<String>,
}

/// A compiled, checked validator.
#[derive(Debug)]
pub struct Validator {
    /// The provider's documentation of the endpoint.
    pub docs: String,
    check: Check,
}

#[derive(Debug)]
enum Check {
    Http(Box<HttpCheck>),
    /// SigV4-signed STS `GetCallerIdentity`: needs the captures `key_id`
    /// (the access key id) and the secret.
    AwsSts,
    /// An RS256 JWT signed with the secret (a service-account PEM key) and
    /// exchanged at Google's token endpoint: needs the capture
    /// `client_email`.
    GoogleSa,
}

#[derive(Debug)]
struct HttpCheck {
    method: Method,
    /// `https://host[:port]`, fixed.
    origin: String,
    host: String,
    /// Path and query, templated (values percent-encoded).
    path: Template,
    headers: Vec<(String, Template)>,
    basic_auth: Option<(Template, Template)>,
    body: Option<Template>,
    valid: Matcher,
    invalid: Matcher,
    identity: Vec<(String, Source)>,
}

#[derive(Debug, Default)]
struct Matcher {
    status: Vec<u16>,
    json: Vec<(String, serde_json::Value)>,
    body: Option<BodyRegex>,
}

/// A matcher's body regex, compiled when the matcher is (a user's rule) or
/// on the first answer it reads (a built-in rule's).
#[derive(Debug)]
struct BodyRegex {
    pattern: String,
    regex: OnceLock<Option<Regex>>,
}

impl BodyRegex {
    fn is_match(&self, body: &[u8]) -> bool {
        self.regex
            .get_or_init(|| Regex::new(&self.pattern).ok())
            .as_ref()
            .is_some_and(|r| r.is_match(body))
    }
}

#[derive(Debug)]
enum Source {
    Json(String),
    Header(String),
}

/// Text with `{{name}}` holes.
#[derive(Clone, Debug)]
struct Template(Vec<Piece>);

#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    Var(String),
}

impl Template {
    fn parse(s: &str, names: &[String]) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut rest = s;
        while let Some(i) = rest.find("{{") {
            if i > 0 {
                pieces.push(Piece::Text(rest[..i].to_owned()));
            }
            let Some(j) = rest[i..].find("}}") else {
                return Err(format!("unclosed `{{{{` in {s:?}"));
            };
            let name = rest[i + 2..i + j].trim();
            if name != "secret" && !names.iter().any(|n| n == name) {
                return Err(format!(
                    "`{{{{{name}}}}}` is neither `secret` nor a named capture group of the rule"
                ));
            }
            pieces.push(Piece::Var(name.to_owned()));
            rest = &rest[i + j + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        Ok(Template(pieces))
    }

    fn render(&self, vars: &Vars, encode: bool) -> Result<String, String> {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(v) => {
                    let value = vars
                        .get(v)
                        .ok_or_else(|| format!("the match has no capture `{v}`"))?;
                    if encode {
                        percent_encode(value, &mut out);
                    } else {
                        out.push_str(value);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The secret and the rule's named captures, for templates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Vars {
    pub secret: String,
    pub captures: Vec<(String, String)>,
}

impl Vars {
    fn get(&self, name: &str) -> Option<&str> {
        if name == "secret" {
            return Some(&self.secret);
        }
        self.captures
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value a template may put in a request, longest first: what an
    /// error text must never contain.
    pub fn sensitive(&self) -> Vec<&str> {
        let mut v: Vec<&str> = std::iter::once(self.secret.as_str())
            .chain(self.captures.iter().map(|(_, v)| v.as_str()))
            .filter(|s| s.len() >= 4)
            .collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.len()));
        v
    }
}

/// RFC 3986 percent-encoding of everything but the unreserved characters.
pub fn percent_encode(s: &str, out: &mut String) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// The decision on one answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub status: ValidationStatus,
    pub reason: String,
    pub identity: BTreeMap<String, String>,
}

impl Validator {
    /// Compiles and checks `[rules.validate]`; `names` are the named
    /// capture groups of the rule's regex; `trusted` (a built-in rule's)
    /// leaves its body regexes to be compiled on first use. The error says
    /// what is wrong.
    pub(crate) fn compile(
        s: &ValidatorSyntax,
        names: &[String],
        trusted: bool,
    ) -> Result<Validator, String> {
        if !s.docs.starts_with("https://") {
            return Err(format!(
                "validate.docs = {:?}: must be an https:// URL",
                s.docs
            ));
        }
        match s.kind.as_deref().unwrap_or("http") {
            "http" => {}
            "aws-sts" => {
                if !names.iter().any(|n| n == "key_id") {
                    return Err("validate.kind = \"aws-sts\" needs a capture group named `key_id` (the access key id) in the rule's regex".into());
                }
                return Ok(Validator {
                    docs: s.docs.clone(),
                    check: Check::AwsSts,
                });
            }
            "gcp-service-account" => {
                if !names.iter().any(|n| n == "client_email") {
                    return Err("validate.kind = \"gcp-service-account\" needs a capture group named `client_email` (the key file's client_email) in the rule's regex".into());
                }
                return Ok(Validator {
                    docs: s.docs.clone(),
                    check: Check::GoogleSa,
                });
            }
            k => {
                return Err(format!(
                "validate.kind = {k:?}: must be \"http\", \"aws-sts\" or \"gcp-service-account\""
            ))
            }
        }
        let method = match s.method.as_deref().unwrap_or("GET") {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" if s.read_only_post.as_deref().is_some_and(|r| !r.trim().is_empty()) => {
                Method::Post
            }
            "POST" => {
                return Err("validate.method = \"POST\" needs `read_only_post`: why the call reads and changes nothing".into())
            }
            m => {
                return Err(format!(
                    "validate.method = {m:?}: must be \"GET\", \"HEAD\" or a read-only \"POST\""
                ))
            }
        };
        let url = s.url.as_deref().ok_or("validate.url is missing")?;
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| format!("validate.url = {url:?}: must start with https://"))?;
        let cut = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(cut);
        let host = authority.split(':').next().unwrap_or("");
        let port = authority[host.len()..].strip_prefix(':');
        // Digits out of range have their own message; anything else in the
        // port (a template, user info) is the host's error below.
        if let Some(p) = port.filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
            if !p.parse::<u16>().is_ok_and(|n| n > 0) {
                return Err(format!(
                    "validate.url = {url:?}: the port must be a number from 1 to 65535"
                ));
            }
        }
        let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if host.is_empty()
            || !port_ok
            || !host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            || !host.contains('.')
        {
            return Err(format!(
                "validate.url = {url:?}: the host must be a fixed name (no template, no user info, no IP literal check here: a name with a dot)"
            ));
        }
        let path = if path.is_empty() { "/" } else { path };
        let template = |t: &str| Template::parse(t, names);
        let headers = s
            .headers
            .iter()
            .map(|(k, v)| {
                if !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                    return Err(format!("validate.headers: bad header name {k:?}"));
                }
                Ok((k.clone(), template(v)?))
            })
            .collect::<Result<_, String>>()?;
        let basic_auth = match &s.basic_auth {
            Some([u, p]) => Some((template(u)?, template(p)?)),
            None => None,
        };
        let identity = s
            .identity
            .iter()
            .map(|(k, v)| {
                let src = if let Some(p) = v.strip_prefix("json:") {
                    if !p.starts_with('/') {
                        return Err(format!("validate.identity.{k}: a JSON pointer starts with `/`"));
                    }
                    Source::Json(p.to_owned())
                } else if let Some(h) = v.strip_prefix("header:") {
                    Source::Header(h.to_ascii_lowercase())
                } else {
                    return Err(format!(
                        "validate.identity.{k} = {v:?}: must be \"json:/pointer\" or \"header:name\""
                    ));
                };
                Ok((k.clone(), src))
            })
            .collect::<Result<_, String>>()?;
        let valid = Matcher::compile(s.valid.as_ref(), &[200], "valid", trusted)?;
        let invalid = Matcher::compile(s.invalid.as_ref(), &[401, 403], "invalid", trusted)?;
        Ok(Validator {
            docs: s.docs.clone(),
            check: Check::Http(Box::new(HttpCheck {
                method,
                origin: format!("https://{authority}"),
                host: host.to_ascii_lowercase(),
                path: template(path)?,
                headers,
                basic_auth,
                body: s.body.as_deref().map(template).transpose()?,
                valid,
                invalid,
                identity,
            })),
        })
    }

    /// The host every request of this validator goes to.
    pub fn host(&self) -> &str {
        match &self.check {
            Check::Http(h) => &h.host,
            Check::AwsSts => AWS_STS_HOST,
            Check::GoogleSa => crate::google_sa::GOOGLE_TOKEN_HOST,
        }
    }

    /// The request for one secret; `now` (Unix seconds) dates a signature.
    /// An error names what is missing (a capture the match lacks), never a
    /// value.
    pub fn request(&self, vars: &Vars, now: u64) -> Result<Request, String> {
        match &self.check {
            Check::Http(h) => {
                let mut headers = Vec::with_capacity(h.headers.len() + 1);
                for (k, t) in &h.headers {
                    headers.push((k.clone(), t.render(vars, false)?));
                }
                if let Some((u, p)) = &h.basic_auth {
                    let pair = format!("{}:{}", u.render(vars, false)?, p.render(vars, false)?);
                    headers.push((
                        "Authorization".into(),
                        format!("Basic {}", base64(pair.as_bytes())),
                    ));
                }
                Ok(Request {
                    method: h.method,
                    url: format!("{}{}", h.origin, h.path.render(vars, true)?),
                    headers,
                    body: match &h.body {
                        Some(b) => b.render(vars, false)?.into_bytes(),
                        None => Vec::new(),
                    },
                })
            }
            Check::AwsSts => {
                let key_id = vars
                    .get("key_id")
                    .ok_or("the match has no capture `key_id`")?;
                // STS refuses a temporary key without its session token
                // (403 InvalidClientTokenId), live or expired alike: that
                // answer would say `invalid` of a working key.
                if key_id.starts_with("ASIA") {
                    return Err("a temporary key id (ASIA) needs its session token, which \
                                the match does not hold"
                        .into());
                }
                Ok(crate::sigv4::sts_get_caller_identity(
                    key_id,
                    &vars.secret,
                    now,
                ))
            }
            Check::GoogleSa => {
                let email = vars
                    .get("client_email")
                    .ok_or("the match has no capture `client_email`")?;
                crate::google_sa::token_request(email, &vars.secret, now)
            }
        }
    }

    /// Reads an answer: `headers` with lowercase names, `body` as read (up
    /// to the caller's cap).
    pub fn decide(&self, status: u16, headers: &[(String, String)], body: &[u8]) -> Decision {
        let (valid, invalid, identity_of) = match &self.check {
            Check::Http(h) => {
                let json = serde_json::from_slice::<serde_json::Value>(body).ok();
                (
                    h.valid.matches(status, json.as_ref(), body),
                    h.invalid.matches(status, json.as_ref(), body),
                    Some((h, json)),
                )
            }
            Check::AwsSts => (status == 200, status == 403, None),
            // Google answers a revoked key, a deleted account or a bad
            // signature with 400 `invalid_grant`, a disabled client with
            // 401 `invalid_client`. The body's access token is never read.
            Check::GoogleSa => {
                let error = serde_json::from_slice::<serde_json::Value>(body)
                    .ok()
                    .and_then(|j| j.get("error")?.as_str().map(str::to_owned));
                (
                    status == 200,
                    (status == 400 && error.as_deref() == Some("invalid_grant")) || status == 401,
                    None,
                )
            }
        };
        let mut identity = BTreeMap::new();
        let status_out = if valid {
            match identity_of {
                Some((h, json)) => {
                    for (name, src) in &h.identity {
                        let v = match src {
                            Source::Json(p) => {
                                json.as_ref().and_then(|j| j.pointer(p)).and_then(scalar)
                            }
                            Source::Header(n) => {
                                headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
                            }
                        };
                        if let Some(v) = v.filter(|v| !v.is_empty()) {
                            identity.insert(name.clone(), v);
                        }
                    }
                }
                None if matches!(self.check, Check::GoogleSa) => {}
                None => {
                    for (name, tag) in [("account", "Account"), ("arn", "Arn")] {
                        if let Some(v) = xml_text(body, tag) {
                            identity.insert(name.into(), v);
                        }
                    }
                }
            }
            ValidationStatus::Valid
        } else if invalid {
            ValidationStatus::Invalid
        } else {
            ValidationStatus::Unknown
        };
        let reason = match status_out {
            ValidationStatus::Valid => format!("HTTP {status}: the provider accepted the secret"),
            ValidationStatus::Invalid => format!("HTTP {status}: the provider refused the secret"),
            _ => format!("HTTP {status}: an answer no matcher recognised"),
        };
        Decision {
            status: status_out,
            reason,
            identity,
        }
    }

    /// The request's shape without a secret, for tests and `rules list`:
    /// `(method, URL with templates, header names)`.
    pub fn shape(&self) -> (Method, String, Vec<String>) {
        match &self.check {
            Check::Http(h) => {
                let mut names: Vec<String> = h.headers.iter().map(|(k, _)| k.clone()).collect();
                if h.basic_auth.is_some() {
                    names.push("Authorization".into());
                }
                let path: String = h
                    .path
                    .0
                    .iter()
                    .map(|p| match p {
                        Piece::Text(t) => t.clone(),
                        Piece::Var(v) => format!("{{{{{v}}}}}"),
                    })
                    .collect();
                (h.method, format!("{}{path}", h.origin), names)
            }
            Check::AwsSts => (
                Method::Post,
                format!("https://{AWS_STS_HOST}/"),
                vec![
                    "Content-Type".into(),
                    "X-Amz-Date".into(),
                    "Authorization".into(),
                ],
            ),
            Check::GoogleSa => (
                Method::Post,
                format!("https://{}/token", crate::google_sa::GOOGLE_TOKEN_HOST),
                vec!["Content-Type".into()],
            ),
        }
    }
}

impl Decision {
    /// As a finding's validation, checked at `checked_at`.
    pub fn into_validation(self, http_status: u16, checked_at: String) -> Validation {
        Validation {
            status: self.status,
            reason: Some(self.reason),
            http_status: Some(http_status),
            error: None,
            checked_at: Some(checked_at),
            identity: self.identity,
        }
    }
}

impl Matcher {
    fn compile(
        s: Option<&MatcherSyntax>,
        default: &[u16],
        what: &str,
        trusted: bool,
    ) -> Result<Matcher, String> {
        let Some(s) = s else {
            return Ok(Matcher {
                status: default.to_vec(),
                ..Matcher::default()
            });
        };
        let mut json = Vec::new();
        for (p, v) in &s.json {
            if !p.starts_with('/') {
                return Err(format!(
                    "validate.{what}.json: {p:?} is not a JSON pointer (`/a/b`)"
                ));
            }
            let v =
                serde_json::to_value(v).map_err(|e| format!("validate.{what}.json.{p}: {e}"))?;
            json.push((p.clone(), v));
        }
        let body = match &s.body {
            Some(b) => Some(BodyRegex {
                pattern: b.clone(),
                regex: if trusted {
                    OnceLock::new()
                } else {
                    OnceLock::from(Some(
                        Regex::new(b).map_err(|e| format!("validate.{what}.body: {e}"))?,
                    ))
                },
            }),
            None => None,
        };
        if s.status.is_empty() && json.is_empty() && body.is_none() {
            return Err(format!(
                "validate.{what}: an empty matcher would match every answer"
            ));
        }
        Ok(Matcher {
            status: s.status.clone(),
            json,
            body,
        })
    }

    fn matches(&self, status: u16, json: Option<&serde_json::Value>, body: &[u8]) -> bool {
        (self.status.is_empty() || self.status.contains(&status))
            && self
                .json
                .iter()
                .all(|(p, v)| json.and_then(|j| j.pointer(p)) == Some(v))
            && self.body.as_ref().is_none_or(|r| r.is_match(body))
    }
}

fn scalar(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        serde_json::Value::Array(a) => {
            let items: Vec<String> = a.iter().filter_map(scalar).collect();
            Some(items.join(", "))
        }
        _ => None,
    }
}

fn xml_text(body: &[u8], tag: &str) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find('<')? + start;
    Some(text[start..end].trim().to_owned())
}

/// The named capture groups of a regex pattern (`(?P<name>` and `(?<name>`).
pub(crate) fn capture_names(pattern: &str) -> Vec<String> {
    let mut names = Vec::new();
    for open in ["(?P<", "(?<"] {
        let mut rest = pattern;
        while let Some(i) = rest.find(open) {
            rest = &rest[i + open.len()..];
            if let Some(j) = rest.find('>') {
                names.push(rest[..j].to_owned());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(toml_text: &str, names: &[&str]) -> Result<Validator, String> {
        let s: ValidatorSyntax = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        Validator::compile(&s, &names, false)
    }

    const GH: &str = r#"
docs = "https://docs.github.com/en/rest/users/users#get-the-authenticated-user"
url = "https://api.github.com/user"
headers = { Authorization = "token {{secret}}", Accept = "application/vnd.github+json" }
identity = { login = "json:/login", scopes = "header:x-oauth-scopes" }
"#;

    /// The built-in rules' body regexes, left to their first answer at
    /// build, all compile: the four there are.
    #[test]
    fn every_builtin_body_regex_compiles() {
        let engine = crate::Engine::builtin().unwrap();
        let mut bodies = Vec::new();
        for rule in engine.rules() {
            let Some(Check::Http(http)) = rule.validator.as_ref().map(|v| &v.check) else {
                continue;
            };
            for b in [&http.valid.body, &http.invalid.body].into_iter().flatten() {
                assert!(Regex::new(&b.pattern).is_ok(), "{}: {}", rule.id, b.pattern);
                bodies.push(rule.id.to_string());
            }
        }
        assert_eq!(bodies.len(), 4, "{bodies:?}");
    }

    /// A body regex decides the same compiled now (a user's rule) or on
    /// the first answer (a built-in's); a bad one fails a user's rule.
    #[test]
    fn body_regexes_now_or_on_first_use() {
        let text = r#"
docs = "https://docs.newrelic.com/docs/apis/nerdgraph/get-started/introduction-new-relic-nerdgraph/"
url = "https://api.newrelic.com/graphql"
valid = { status = [200], body = '"user":\s*\{' }
invalid = { status = [400], body = "API_KEY_INVALID" }
"#;
        let s: ValidatorSyntax = toml::from_str(text).unwrap();
        for trusted in [false, true] {
            let v = Validator::compile(&s, &[], trusted).unwrap();
            let status = |code: u16, body: &str| v.decide(code, &[], body.as_bytes()).status;
            assert_eq!(
                status(200, r#"{"user": {"name": "x"}}"#),
                ValidationStatus::Valid
            );
            assert_eq!(status(200, r#"{"errors": []}"#), ValidationStatus::Unknown);
            assert_eq!(
                status(400, "reason: API_KEY_INVALID"),
                ValidationStatus::Invalid
            );
            assert_eq!(status(400, "reason: quota"), ValidationStatus::Unknown);
        }
        let bad: ValidatorSyntax = toml::from_str(&text.replace("API_KEY_INVALID", "(")).unwrap();
        let e = Validator::compile(&bad, &[], false).unwrap_err();
        assert!(e.starts_with("validate.invalid.body: "), "{e}");
    }

    #[test]
    fn request_and_decision() {
        let v = compile(GH, &[]).unwrap();
        let vars = Vars {
            secret: "s3cr3t-value".into(),
            captures: vec![],
        };
        let r = v.request(&vars, 0).unwrap();
        assert_eq!(r.method, Method::Get);
        assert_eq!(r.url, "https://api.github.com/user");
        assert_eq!(
            r.headers,
            [
                (
                    "Accept".to_string(),
                    "application/vnd.github+json".to_string()
                ),
                (
                    "Authorization".to_string(),
                    "token s3cr3t-value".to_string()
                )
            ]
        );
        let d = v.decide(
            200,
            &[("x-oauth-scopes".into(), "repo, gist".into())],
            br#"{"login":"octocat","id":1}"#,
        );
        assert_eq!(d.status, ValidationStatus::Valid);
        assert_eq!(d.identity["login"], "octocat");
        assert_eq!(d.identity["scopes"], "repo, gist");
        assert_eq!(v.decide(401, &[], b"").status, ValidationStatus::Invalid);
        assert_eq!(v.decide(500, &[], b"").status, ValidationStatus::Unknown);
        assert_eq!(v.decide(404, &[], b"").status, ValidationStatus::Unknown);
    }

    #[test]
    fn json_matchers_and_url_templates() {
        let v = compile(
            r#"
docs = "https://core.telegram.org/bots/api#getme"
url = "https://api.telegram.org/bot{{secret}}/getMe"
valid = { status = [200], json = { "/ok" = true } }
invalid = { status = [401, 404] }
identity = { login = "json:/result/username" }
"#,
            &[],
        )
        .unwrap();
        let vars = Vars {
            secret: "123:ab/c".into(),
            captures: vec![],
        };
        assert_eq!(
            v.request(&vars, 0).unwrap().url,
            "https://api.telegram.org/bot123%3Aab%2Fc/getMe"
        );
        let d = v.decide(200, &[], br#"{"ok":true,"result":{"username":"bot"}}"#);
        assert_eq!(d.status, ValidationStatus::Valid);
        assert_eq!(d.identity["login"], "bot");
        assert_eq!(
            v.decide(200, &[], br#"{"ok":false}"#).status,
            ValidationStatus::Unknown
        );
    }

    #[test]
    fn unsafe_validators_are_refused() {
        let cases = [
            (
                r#"docs = "https://x.io"
url = "http://api.example.com/""#,
                "must start with https://",
            ),
            (
                r#"docs = "https://x.io"
url = "https://{{host}}/x""#,
                "fixed name",
            ),
            (
                r#"docs = "https://x.io"
url = "https://api.{{secret}}.com/x""#,
                "fixed name",
            ),
            (
                r#"docs = "https://x.io"
url = "https://user:pw@api.example.com/""#,
                "fixed name",
            ),
            (
                r#"docs = "https://x.io"
method = "DELETE"
url = "https://api.example.com/""#,
                "must be \"GET\"",
            ),
            (
                r#"docs = "https://x.io"
method = "POST"
url = "https://api.example.com/""#,
                "needs `read_only_post`",
            ),
            (
                r#"docs = "https://x.io"
url = "https://api.example.com/"
headers = { X = "{{token}}" }"#,
                "neither `secret` nor a named capture",
            ),
            (
                r#"docs = "http://x.io"
url = "https://api.example.com/""#,
                "validate.docs",
            ),
            (
                r#"docs = "https://x.io"
url = "https://api.example.com/"
valid = {}"#,
                "empty matcher",
            ),
            (
                r#"docs = "https://x.io"
kind = "aws-sts""#,
                "key_id",
            ),
            (
                r#"docs = "https://x.io"
kind = "gcp-service-account""#,
                "client_email",
            ),
            (
                r#"docs = "https://x.io"
kind = "shell""#,
                "must be \"http\", \"aws-sts\" or \"gcp-service-account\"",
            ),
        ];
        for (t, want) in cases {
            let e = compile(t, &[]).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
        assert!(compile(
            r#"docs = "https://x.io"
method = "POST"
read_only_post = "auth.test only reads"
url = "https://slack.com/api/auth.test""#,
            &[]
        )
        .is_ok());
    }

    #[test]
    fn captures_and_basic_auth() {
        let v = compile(
            r#"docs = "https://www.twilio.com/docs/usage/api"
url = "https://api.twilio.com/2010-04-01/Accounts/{{sid}}.json"
basic_auth = ["{{sid}}", "{{secret}}"]"#,
            &["sid"],
        )
        .unwrap();
        let vars = Vars {
            secret: "tok".into(),
            captures: vec![("sid".into(), "AC1".into())],
        };
        let r = v.request(&vars, 0).unwrap();
        assert_eq!(r.url, "https://api.twilio.com/2010-04-01/Accounts/AC1.json");
        assert_eq!(
            r.headers,
            [(
                "Authorization".to_string(),
                format!("Basic {}", base64(b"AC1:tok"))
            )]
        );
        assert_eq!(base64(b"AC1:tok"), "QUMxOnRvaw==");
        let missing = Vars {
            secret: "tok".into(),
            captures: vec![],
        };
        assert_eq!(
            v.request(&missing, 0).unwrap_err(),
            "the match has no capture `sid`"
        );
    }

    #[test]
    fn capture_names_of_patterns() {
        assert_eq!(
            capture_names(r"(?P<key_id>AKIA\w+)\s+(?<x>a)(b)"),
            ["key_id", "x"]
        );
    }
}
