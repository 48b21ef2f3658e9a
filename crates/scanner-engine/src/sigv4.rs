//! AWS Signature Version 4, just enough to sign STS `GetCallerIdentity`
//! (the `aws-sts` validator kind): a read-only call that any valid key may
//! make, whatever its policies, and that answers with the key's account and
//! ARN. The algorithm is AWS's "Create a signed AWS API request"
//! (<https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html>);
//! the tests run vectors of AWS's published SigV4 test suite.

use sha2::{Digest, Sha256};

use crate::request::{Method, Request};

/// The host of AWS STS, where the `aws-sts` validator kind sends its request.
pub(crate) const AWS_STS_HOST: &str = "sts.amazonaws.com";

/// The STS request for a key pair, dated `now` (Unix seconds).
pub(crate) fn sts_get_caller_identity(key_id: &str, secret: &str, now: u64) -> Request {
    const BODY: &str = "Action=GetCallerIdentity&Version=2011-06-15";
    const TYPE: &str = "application/x-www-form-urlencoded; charset=utf-8";
    let amz_date = amz_date(now);
    let authorization = sign(
        &Signing {
            method: "POST",
            path: "/",
            query: "",
            headers: &[
                ("content-type", TYPE),
                ("host", AWS_STS_HOST),
                ("x-amz-date", &amz_date),
            ],
            payload: BODY.as_bytes(),
            region: "us-east-1",
            service: "sts",
            amz_date: &amz_date,
        },
        key_id,
        secret,
    );
    Request {
        method: Method::Post,
        url: format!("https://{AWS_STS_HOST}/"),
        headers: vec![
            ("Content-Type".into(), TYPE.into()),
            ("X-Amz-Date".into(), amz_date),
            ("Authorization".into(), authorization),
        ],
        body: BODY.as_bytes().to_vec(),
    }
}

/// What is signed. `headers` have lowercase names, sorted, values trimmed,
/// and include `host` and `x-amz-date`.
pub(crate) struct Signing<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub payload: &'a [u8],
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
}

/// The `Authorization` header value.
pub(crate) fn sign(s: &Signing, key_id: &str, secret: &str) -> String {
    let signed_headers: Vec<&str> = s.headers.iter().map(|(k, _)| *k).collect();
    let signed_headers = signed_headers.join(";");
    let mut canonical = format!("{}\n{}\n{}\n", s.method, s.path, s.query);
    for (k, v) in s.headers {
        canonical.push_str(&format!("{k}:{}\n", v.trim()));
    }
    canonical.push_str(&format!(
        "\n{signed_headers}\n{}",
        hex(&Sha256::digest(s.payload))
    ));
    let day = &s.amz_date[..8];
    let scope = format!("{day}/{}/{}/aws4_request", s.region, s.service);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        s.amz_date,
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = hmac(format!("AWS4{secret}").as_bytes(), day.as_bytes());
    for part in [s.region, s.service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={signed_headers}, Signature={signature}"
    )
}

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.map(|x| x ^ b);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(data)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `YYYYMMDDTHHMMSSZ` of Unix seconds.
fn amz_date(now: u64) -> String {
    crate::validation::rfc3339(now).replace(['-', ':'], "")
}

#[cfg(test)]
mod tests {
    use super::*;

    // AWS's SigV4 test suite credentials and date.
    const KEY_ID: &str = "AKIDEXAMPLE";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const DATE: &str = "20150830T123600Z";

    fn suite(method: &str, headers: &[(&str, &str)], payload: &[u8]) -> String {
        sign(
            &Signing {
                method,
                path: "/",
                query: "",
                headers,
                payload,
                region: "us-east-1",
                service: "service",
                amz_date: DATE,
            },
            KEY_ID,
            SECRET,
        )
    }

    #[test]
    fn hmac_rfc4231_case_2() {
        assert_eq!(
            hex(&hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn aws_test_suite_vectors() {
        let host = ("host", "example.amazonaws.com");
        let date = ("x-amz-date", DATE);
        // post-vanilla
        assert_eq!(
            suite("POST", &[host, date], b""),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
        // post-x-www-form-urlencoded
        assert_eq!(
            suite(
                "POST",
                &[
                    ("content-type", "application/x-www-form-urlencoded"),
                    host,
                    date
                ],
                b"Param1=value1"
            ),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, \
             Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"
        );
    }

    #[test]
    fn sts_request_shape() {
        // 2015-08-30T12:36:00Z
        let r = sts_get_caller_identity(KEY_ID, SECRET, 1_440_938_160);
        assert_eq!(r.method, Method::Post);
        assert_eq!(r.url, "https://sts.amazonaws.com/");
        assert_eq!(r.body, b"Action=GetCallerIdentity&Version=2011-06-15");
        assert_eq!(r.headers[1], ("X-Amz-Date".to_string(), DATE.to_string()));
        assert!(r.headers[2].1.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sts/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, Signature="
        ));
        assert!(!r.headers.iter().any(|(_, v)| v.contains(SECRET)));
    }
}
