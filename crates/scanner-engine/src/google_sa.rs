//! Google service-account keys: the `gcp-service-account` validator kind.
//! The key file's `private_key` signs an RS256 JWT whose issuer is its
//! `client_email`, and the JWT is exchanged at Google's OAuth 2.0 token
//! endpoint, as Google documents for server-to-server applications
//! (<https://developers.google.com/identity/protocols/oauth2/service-account#httprest>).
//! The exchange only mints a short-lived access token, which the caller
//! never reads out (no identity field comes from the answer): it changes
//! nothing in the project. The endpoint is fixed: the key file's own
//! `token_uri` is scanned content and is never called.

use ring::rand::SystemRandom;
use ring::signature::{RsaKeyPair, RSA_PKCS1_SHA256};

use crate::confidence::base64_decode;
use crate::request::{Method, Request};

pub(crate) const GOOGLE_TOKEN_HOST: &str = "oauth2.googleapis.com";
const TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
/// The narrowest scope that any service account may ask for.
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform.read-only";
/// `urn:ietf:params:oauth:grant-type:jwt-bearer`, form-encoded.
const GRANT: &str = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer";

/// The token request for a key, dated `now` (Unix seconds). `private_key`
/// is the PEM as the JSON file holds it (`\n` escapes allowed). An error
/// says what is wrong with the key, never a byte of it.
pub(crate) fn token_request(
    client_email: &str,
    private_key: &str,
    now: u64,
) -> Result<Request, String> {
    let der = pem_der(private_key)?;
    let key = RsaKeyPair::from_pkcs8(&der)
        .or_else(|_| RsaKeyPair::from_der(&der))
        .map_err(|e| format!("the private key is not a usable RSA key: {e}"))?;
    let header = b64url(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = serde_json::json!({
        "iss": client_email,
        "scope": SCOPE,
        "aud": TOKEN_URL,
        "iat": now,
        "exp": now + 3600,
    });
    let signing_input = format!("{header}.{}", b64url(claims.to_string().as_bytes()));
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "signing the JWT failed".to_owned())?;
    let assertion = format!("{signing_input}.{}", b64url(&signature));
    Ok(Request {
        method: Method::Post,
        url: TOKEN_URL.into(),
        headers: vec![(
            "Content-Type".into(),
            "application/x-www-form-urlencoded".into(),
        )],
        body: format!("grant_type={GRANT}&assertion={assertion}").into_bytes(),
    })
}

/// The DER inside a PEM block, read through the JSON escapes a key file
/// holds (`\n`, `\r`, `\/`).
fn pem_der(pem: &str) -> Result<Vec<u8>, String> {
    let pem = pem
        .replace("\\n", "\n")
        .replace("\\r", "")
        .replace("\\/", "/");
    let body: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .flat_map(|l| l.trim().chars())
        .collect();
    match base64_decode(body.as_bytes()) {
        Some(der) if !der.is_empty() => Ok(der),
        _ => Err("the private key's PEM body is not base64".into()),
    }
}

/// Base64url without padding (RFC 7515's JWS encoding).
pub(crate) fn b64url(data: &[u8]) -> String {
    crate::request::base64(data)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jws_base64url() {
        assert_eq!(b64url(&[0xfb, 0xff]), "-_8");
        assert_eq!(b64url(b"ab"), "YWI");
    }

    #[test]
    fn bad_keys_are_named_not_shown() {
        let e = token_request(
            "a@b.iam.gserviceaccount.com",
            "-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n",
            0,
        )
        .unwrap_err();
        assert!(
            e.starts_with("the private key is not a usable RSA key"),
            "{e}"
        );
        let e = token_request(
            "a@b",
            "-----BEGIN PRIVATE KEY-----\\n!!\\n-----END PRIVATE KEY-----",
            0,
        )
        .unwrap_err();
        assert_eq!(e, "the private key's PEM body is not base64");
    }
}
