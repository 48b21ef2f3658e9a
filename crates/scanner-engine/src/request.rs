//! The HTTP request a validator asks the caller to send ([`Request`]), built
//! from a rule's `[rules.validate]` table by `validator.rs`, or by the
//! signers it calls for the kinds a table cannot express (`sigv4.rs`,
//! `google_sa.rs`). Nothing here sends anything.

/// The HTTP method of a validator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
        }
    }
}

/// A request to send: everything resolved, the secret inside. The caller
/// must never log it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    pub url: String,
    /// Header names as written in the rule.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Base64, standard alphabet, padded (a `Basic` authorization, a JWT's
/// parts before `google_sa.rs` makes them URL-safe).
pub(crate) fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
