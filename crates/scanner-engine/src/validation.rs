//! Whether a finding's secret still works: the [`Validation`] every finding
//! carries, and the offline evidence the engine can give without a request.
//!
//! # Offline evidence
//!
//! [`offline_evidence`] is the one place that decides what can be known from
//! the secret alone. It runs for every finding, `--validate` or not:
//!
//! | secret | evidence | status |
//! | --- | --- | --- |
//! | a rule with `checksum = "github-crc32"` or `"npm-crc32"` | the CRC-32 in the token's last 6 characters | `offline_valid` when it matches, `offline_invalid` when not |
//! | a rule with `checksum = "jwt"` | the payload's `exp` and `iss` claims | `offline_invalid` when `exp` is past; else `not_checked`, with `identity.issuer` and `identity.expires` |
//! | a rule with `checksum = "pypi-macaroon"` | the macaroon's structure and caveats | `offline_invalid` when malformed; else `not_checked` with `identity.caveats` |
//! | an `AKIA`/`ASIA` access key id (any rule) | the account id a new-generation key id encodes | `not_checked`, with `identity.account` |
//!
//! A checksum that matches proves the vendor's format, not that the token
//! is live: it is `offline_valid`, below `valid` in [`ValidationStatus`]'s
//! order. A failed checksum, an expired JWT or a malformed macaroon cannot
//! work anywhere: `offline_invalid`, and with `--validate` such a secret is
//! never sent.
//!
//! # The AWS account id
//!
//! An access key id is a 4-character type prefix (`AKIA` long-lived, `ASIA`
//! temporary) and 16 base32 characters (RFC 4648 alphabet, 80 bits). In a
//! new-generation key (the first bit of the 80 set, so the fifth character
//! is `Q`-`Z` or `2`-`7`) the next 40 bits are the account number: the first
//! 6 decoded bytes as a big-endian number, masked with `0x7fffffffff80`,
//! shifted right by 7. AWS does not document this; it is the decoding that
//! Aidan Steele and Tal Be'ery published in 2020 and WithSecure Labs'
//! bitwise analysis confirmed. Old-generation keys (`AKIAI…`, `AKIAJ…`)
//! encode no account: no identity is given.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::confidence::{base64_decode, Checksum};

/// What a validation decided, from worst to best for the person who
/// leaked the secret (the derived order is the order `--min-validity`
/// uses): `invalid` < `offline_invalid` < `not_checked` < `unknown` <
/// `offline_valid` < `valid`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ValidationStatus {
    /// The provider answered that the secret does not work.
    Invalid,
    /// The secret cannot work: failed checksum, expired JWT, malformed
    /// macaroon. Known without a request.
    OfflineInvalid,
    /// No check was made: the rule has no validator, or validation is off.
    #[default]
    NotChecked,
    /// A check was made and could not decide: network error, timeout, 5xx,
    /// 429 (or a rate-limit 403) after 3 tries, an answer no matcher
    /// recognised.
    Unknown,
    /// The secret has the vendor's valid structure (checksum matches), not
    /// proven live.
    OfflineValid,
    /// The provider accepted the secret.
    Valid,
}

impl ValidationStatus {
    pub const ALL: [ValidationStatus; 6] = [
        ValidationStatus::Invalid,
        ValidationStatus::OfflineInvalid,
        ValidationStatus::NotChecked,
        ValidationStatus::Unknown,
        ValidationStatus::OfflineValid,
        ValidationStatus::Valid,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ValidationStatus::Invalid => "invalid",
            ValidationStatus::OfflineInvalid => "offline_invalid",
            ValidationStatus::NotChecked => "not_checked",
            ValidationStatus::Unknown => "unknown",
            ValidationStatus::OfflineValid => "offline_valid",
            ValidationStatus::Valid => "valid",
        }
    }

    pub fn parse(s: &str) -> Option<ValidationStatus> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// True when no request should be sent: the secret cannot work.
    pub fn is_offline_invalid(self) -> bool {
        self == ValidationStatus::OfflineInvalid
    }
}

/// The `validation` object of a finding (the wire format is documented on
/// the JSON writer and in `docs/output.md`). Never holds the secret.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Validation {
    pub status: ValidationStatus,
    /// Why, in a few words (`CRC-32 checksum matches`, `HTTP 401`,
    /// `expired 2024-05-01T10:00:00Z`).
    pub reason: Option<String>,
    /// The provider's HTTP status, for a live check that got an answer.
    pub http_status: Option<u16>,
    /// The transport error of a live check that got no answer (the secret
    /// stripped from it).
    pub error: Option<String>,
    /// When the live check was made, RFC 3339 UTC; `None` offline.
    pub checked_at: Option<String>,
    /// Non-secret facts about the key: `login`, `scopes`, `org` from the
    /// provider for `valid`; `account`, `issuer`, `expires`, `caveats` from
    /// offline evidence.
    pub identity: BTreeMap<String, String>,
}

impl Validation {
    pub fn new(status: ValidationStatus, reason: impl Into<String>) -> Validation {
        Validation {
            status,
            reason: Some(reason.into()),
            ..Validation::default()
        }
    }
}

/// The offline evidence for a secret (module docs). `checksum` is the rule's
/// check and `verified` its result as [`crate::confidence`] computed it
/// (computed once, for the confidence tags and here); `now` is Unix seconds.
pub(crate) fn offline_evidence(
    checksum: Option<Checksum>,
    verified: Option<bool>,
    secret: &[u8],
    now: u64,
) -> Validation {
    let mut v = match (checksum, verified) {
        (Some(Checksum::GithubCrc32 | Checksum::NpmCrc32), Some(true)) => {
            Validation::new(ValidationStatus::OfflineValid, "CRC-32 checksum matches")
        }
        (Some(Checksum::GithubCrc32 | Checksum::NpmCrc32), Some(false)) => Validation::new(
            ValidationStatus::OfflineInvalid,
            "CRC-32 checksum does not match",
        ),
        (Some(Checksum::Jwt), Some(true)) => jwt_claims(secret, now),
        (Some(Checksum::Jwt), Some(false)) => {
            Validation::new(ValidationStatus::OfflineInvalid, "not a well-formed JWT")
        }
        (Some(Checksum::PypiMacaroon), Some(true)) => pypi_caveats(secret),
        (Some(Checksum::PypiMacaroon), Some(false)) => Validation::new(
            ValidationStatus::OfflineInvalid,
            "not a well-formed PyPI macaroon",
        ),
        _ => Validation::default(),
    };
    if let Some(account) = aws_account(secret) {
        v.identity
            .insert("account".into(), format!("{account:012}"));
        if v.reason.is_none() {
            v.reason = Some("the key id encodes the AWS account".into());
        }
    }
    v
}

/// The account number a new-generation `AKIA`/`ASIA` key id encodes.
pub fn aws_account(key_id: &[u8]) -> Option<u64> {
    if key_id.len() != 20 || !(key_id.starts_with(b"AKIA") || key_id.starts_with(b"ASIA")) {
        return None;
    }
    let mut bits: u128 = 0;
    for &c in &key_id[4..] {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        };
        bits = (bits << 5) | u128::from(v);
    }
    // 80 bits; the first 48 are the 6 bytes the decoding reads.
    let first6 = (bits >> 32) as u64;
    if first6 >> 47 == 0 {
        return None; // old generation: no account encoded
    }
    Some((first6 & 0x7fff_ffff_ff80) >> 7)
}

fn jwt_claims(secret: &[u8], now: u64) -> Validation {
    let payload = secret.split(|&b| b == b'.').nth(1).and_then(base64_decode);
    let claims: Option<serde_json::Map<String, serde_json::Value>> =
        payload.and_then(|p| serde_json::from_slice(&p).ok());
    let Some(claims) = claims else {
        return Validation::new(
            ValidationStatus::OfflineInvalid,
            "JWT payload is not a JSON object",
        );
    };
    let mut v = Validation::default();
    if let Some(iss) = claims.get("iss").and_then(|i| i.as_str()) {
        v.identity.insert("issuer".into(), iss.to_owned());
    }
    match claims.get("exp").and_then(|e| e.as_f64()) {
        Some(exp) if exp >= 0.0 => {
            let exp = exp as u64;
            let when = rfc3339(exp);
            v.identity.insert("expires".into(), when.clone());
            if exp <= now {
                v.status = ValidationStatus::OfflineInvalid;
                v.reason = Some(format!("JWT expired {when}"));
            } else {
                v.reason = Some(format!(
                    "JWT not expired (until {when}); signature not checked"
                ));
            }
        }
        _ => v.reason = Some("JWT has no expiry; signature not checked".into()),
    }
    v
}

/// Macaroon v2 (libmacaroons' binary format): version byte 2, then fields
/// `type, varint length, bytes`, each section ended by a 0 byte: the
/// location (type 1) and identifier (2) section, then one section per
/// caveat (identifier 2, optional verification id 4), then the signature
/// (6). PyPI's caveats are JSON (a project list, an expiry): they say what
/// the token can reach, so they are listed in `identity.caveats`.
fn pypi_caveats(secret: &[u8]) -> Validation {
    let Some(d) = secret.strip_prefix(b"pypi-").and_then(base64_decode) else {
        return Validation::new(ValidationStatus::OfflineInvalid, "not base64");
    };
    let mut caveats = Vec::new();
    let mut i = 1;
    let mut section = 0;
    while i < d.len() {
        let ty = d[i];
        i += 1;
        if ty == 0 {
            section += 1;
            continue;
        }
        if ty == 6 {
            break;
        }
        let (mut len, mut shift) = (0usize, 0);
        while i < d.len() && shift < 35 {
            len |= usize::from(d[i] & 0x7f) << shift;
            shift += 7;
            i += 1;
            if d[i - 1] & 0x80 == 0 {
                break;
            }
        }
        let Some(field) = d.get(i..i + len) else {
            return Validation::new(ValidationStatus::OfflineInvalid, "truncated PyPI macaroon");
        };
        i += len;
        if section >= 1 && ty == 2 {
            caveats.push(String::from_utf8_lossy(field).into_owned());
        }
    }
    let mut v = Validation::new(
        ValidationStatus::NotChecked,
        "well-formed PyPI macaroon; caveats listed",
    );
    if !caveats.is_empty() {
        v.identity.insert("caveats".into(), caveats.join("; "));
    }
    v
}

/// Unix seconds as RFC 3339 UTC (`2024-05-01T10:00:00Z`).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The current time in Unix seconds (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Base64 (standard, padded): the decoder takes both alphabets.
    fn b64(s: &str) -> String {
        crate::validator::base64(s.as_bytes())
    }

    #[test]
    fn aws_account_from_key_id() {
        // The published example: ASIAY34FZKBOKMUTVV7A is account 609629065308.
        assert_eq!(aws_account(b"ASIAY34FZKBOKMUTVV7A"), Some(609_629_065_308));
        // AWS's documentation key is old generation: no account.
        assert_eq!(aws_account(b"AKIAIOSFODNN7EXAMPLE"), None);
        assert_eq!(aws_account(b"ASIAY34FZKBOKMUTVV7"), None);
        assert_eq!(aws_account(b"ghp_Y34FZKBOKMUTVV7A"), None);
        let v = offline_evidence(None, None, b"ASIAY34FZKBOKMUTVV7A", 0);
        assert_eq!(v.status, ValidationStatus::NotChecked);
        assert_eq!(v.identity["account"], "609629065308");
    }

    #[test]
    fn rfc3339_known_values() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_714_557_600), "2024-05-01T10:00:00Z");
    }

    #[test]
    fn jwt_expiry_and_issuer() {
        let token = |payload: &str| {
            format!(
                "{}.{}.c2lnbmF0dXJlc2lnbmF0dXJl",
                b64(r#"{"alg":"HS256"}"#),
                b64(payload)
            )
        };
        let t = token(r#"{"iss":"https://auth.acme.test/","exp":1714557600}"#);
        let v = offline_evidence(Some(Checksum::Jwt), Some(true), t.as_bytes(), 1_714_557_601);
        assert_eq!(v.status, ValidationStatus::OfflineInvalid);
        assert_eq!(
            v.reason.as_deref(),
            Some("JWT expired 2024-05-01T10:00:00Z")
        );
        assert_eq!(v.identity["issuer"], "https://auth.acme.test/");
        assert_eq!(v.identity["expires"], "2024-05-01T10:00:00Z");
        let v = offline_evidence(Some(Checksum::Jwt), Some(true), t.as_bytes(), 1_714_557_599);
        assert_eq!(v.status, ValidationStatus::NotChecked);
        assert_eq!(
            v.reason.as_deref(),
            Some("JWT not expired (until 2024-05-01T10:00:00Z); signature not checked")
        );
        let t = token(r#"{"sub":"x"}"#);
        let v = offline_evidence(Some(Checksum::Jwt), Some(true), t.as_bytes(), 0);
        assert_eq!(v.status, ValidationStatus::NotChecked);
        assert!(v.identity.is_empty());
    }

    #[test]
    fn crc32_tokens() {
        let random = "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123";
        let good = format!(
            "npm_{random}{}",
            std::str::from_utf8(&crate::base62_6(crate::crc32(random.as_bytes()))).unwrap()
        );
        let ok = Checksum::NpmCrc32.verify(good.as_bytes());
        assert_eq!(ok, Some(true));
        let v = offline_evidence(Some(Checksum::NpmCrc32), ok, good.as_bytes(), 0);
        assert_eq!(
            v,
            Validation::new(ValidationStatus::OfflineValid, "CRC-32 checksum matches")
        );
        let bad = good.replace("npm_a", "npm_b");
        let ok = Checksum::NpmCrc32.verify(bad.as_bytes());
        let v = offline_evidence(Some(Checksum::NpmCrc32), ok, bad.as_bytes(), 0);
        assert_eq!(v.status, ValidationStatus::OfflineInvalid);
    }

    #[test]
    fn pypi_macaroon_caveats() {
        // version 2; location "pypi.org"; identifier "id"; end; one caveat
        // section with a JSON caveat; end; signature.
        let caveat = br#"{"version": 1, "permissions": {"projects": ["demo"]}}"#;
        let mut m = vec![2, 1, 8];
        m.extend_from_slice(b"pypi.org");
        m.extend_from_slice(&[2, 2]);
        m.extend_from_slice(b"id");
        m.push(0);
        m.extend_from_slice(&[2, caveat.len() as u8]);
        m.extend_from_slice(caveat);
        m.push(0);
        m.push(0);
        m.extend_from_slice(&[6, 32]);
        m.extend_from_slice(&[7; 32]);
        let token = format!("pypi-{}", b64(&String::from_utf8_lossy(&m)));
        // Every byte here is ASCII, so the lossy string is the bytes.
        let ok = Checksum::PypiMacaroon.verify(token.as_bytes());
        assert_eq!(ok, Some(true));
        let v = offline_evidence(Some(Checksum::PypiMacaroon), ok, token.as_bytes(), 0);
        assert_eq!(v.status, ValidationStatus::NotChecked);
        assert_eq!(
            v.identity["caveats"],
            r#"{"version": 1, "permissions": {"projects": ["demo"]}}"#
        );
    }

    #[test]
    fn status_order_and_names() {
        assert!(ValidationStatus::Invalid < ValidationStatus::OfflineInvalid);
        assert!(ValidationStatus::NotChecked < ValidationStatus::Unknown);
        assert!(ValidationStatus::OfflineValid < ValidationStatus::Valid);
        for s in ValidationStatus::ALL {
            assert_eq!(ValidationStatus::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
    }
}
