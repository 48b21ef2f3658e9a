//! The transport of `--validate`: one [`ureq`] agent, configured so that a
//! secret can only go where its rule says.
//!
//! * HTTPS only; redirects are never followed (a 3xx is an answer, and no
//!   matcher takes it for `valid`).
//! * A provider host that resolves to a loopback, private, link-local,
//!   unspecified or multicast address is refused before any connection
//!   ([`Guard`]). A proxy from `HTTPS_PROXY`/`ALL_PROXY` (honouring
//!   `NO_PROXY`) may be anywhere: the user chose it, and then the proxy
//!   resolves the provider's name. A proxy setting that cannot be honoured
//!   (no URL, a SOCKS proxy) is an error, never a direct connection
//!   ([`proxy_from_env`]).
//! * Trust: the Mozilla roots built in, or only the PEM certificates of
//!   `--ca-cert FILE`, else of `SSL_CERT_FILE`, as curl and git do.
//! * Time: connecting 5 s, the whole request `--validation-timeout`
//!   (default 10 s). The body is read up to [`BODY_CAP`] bytes; the rest is
//!   left unread and the connection dropped.

use std::io::Read;
use std::net::IpAddr;
use std::time::Duration;

use anyhow::Context;
use scanner_engine::{Method, Request};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

use super::Options;
use crate::messages::escape_path;

/// Bytes of a response body read at most.
pub const BODY_CAP: u64 = 64 * 1024;

/// An answer: status, headers (lowercase names), the body's first
/// [`BODY_CAP`] bytes, and `Retry-After` in seconds if given.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub retry_after: Option<Duration>,
}

pub struct Client {
    agent: ureq::Agent,
}

/// Refuses provider hosts that resolve to addresses of this machine or its
/// network (the proxy's own address is allowed).
#[derive(Debug)]
struct Guard {
    inner: DefaultResolver,
}

impl Resolver for Guard {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().unwrap_or("");
        // The resolver's error names no host: say which (the provider's, or the proxy's).
        let addrs = self
            .inner
            .resolve(uri, config, timeout)
            .map_err(|e| match e {
                ureq::Error::Io(e) => {
                    ureq::Error::Io(std::io::Error::new(e.kind(), format!("{host}: {e}")))
                }
                e => e,
            })?;
        let is_proxy = config.proxy().is_some_and(|p| p.host() == host);
        if !is_proxy {
            if let Some(a) = addrs.iter().find(|a| !is_public(a.ip())) {
                return Err(ureq::Error::Io(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "{host} resolves to a non-public address {}: refused",
                        a.ip()
                    ),
                )));
            }
        }
        Ok(addrs)
    }
}

/// False for loopback, private, link-local, shared (CGNAT), unspecified,
/// multicast, documentation and unique-local addresses.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v) => {
            let o = v.octets();
            !(v.is_loopback()
                || v.is_private()
                || v.is_link_local()
                || v.is_unspecified()
                || v.is_multicast()
                || v.is_broadcast()
                || v.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1])))
        }
        IpAddr::V6(v) => {
            if let Some(v4) = v.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v.segments();
            !(v.is_loopback()
                || v.is_unspecified()
                || v.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80)
        }
    }
}

impl Client {
    pub fn new(opts: &Options) -> anyhow::Result<Client> {
        // Where the CA file came from, for the messages: the user may not know
        // that SSL_CERT_FILE is set.
        let ca = match &opts.ca_cert {
            Some(path) => Some((path.clone(), "--ca-cert")),
            None => std::env::var_os("SSL_CERT_FILE").map(|p| (p.into(), "SSL_CERT_FILE")),
        };
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some((path, from)) = ca {
            let pem = std::fs::read(&path)
                .with_context(|| format!("cannot read CA file {} ({from})", escape_path(&path)))?;
            let certs: Vec<_> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect();
            anyhow::ensure!(
                !certs.is_empty(),
                "CA file {} ({from}): no PEM certificate in it",
                escape_path(&path)
            );
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
        }
        let config = ureq::Agent::config_builder()
            .https_only(true)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(opts.timeout))
            .proxy(proxy_from_env()?)
            .tls_config(tls.build())
            .user_agent(concat!(
                "scanner/",
                env!("CARGO_PKG_VERSION"),
                " (secret validation)"
            ))
            .build();
        Ok(Client {
            agent: ureq::Agent::with_parts(
                config,
                DefaultConnector::new(),
                Guard {
                    inner: DefaultResolver::default(),
                },
            ),
        })
    }

    /// Sends `req`. An error is the transport's text, which may contain the
    /// URL: the caller scrubs it.
    pub fn send(&self, req: &Request) -> Result<Answer, String> {
        let mut builder = ureq::http::Request::builder()
            .method(req.method.as_str())
            .uri(&req.url);
        for (k, v) in &req.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let result = match req.method {
            Method::Post => self
                .agent
                .run(builder.body(req.body.clone()).map_err(|e| e.to_string())?),
            Method::Get | Method::Head => {
                self.agent.run(builder.body(()).map_err(|e| e.to_string())?)
            }
        };
        let mut resp = result.map_err(describe)?;
        let status = resp.status().as_u16();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        let retry_after = headers
            .iter()
            .find(|(k, _)| k == "retry-after")
            .and_then(|(_, v)| retry_after(v, scanner_engine::unix_now()));
        let mut body = Vec::new();
        if req.method != Method::Head {
            resp.body_mut()
                .with_config()
                .limit(u64::MAX)
                .reader()
                .take(BODY_CAP)
                .read_to_end(&mut body)
                .map_err(describe_io)?;
        }
        Ok(Answer {
            status,
            headers,
            body,
            retry_after,
        })
    }
}

/// The proxy for an `https://` request as curl reads the environment:
/// `https_proxy`, `HTTPS_PROXY`, `all_proxy`, `ALL_PROXY`, the first set and
/// not empty (never `HTTP_PROXY`, which is for `http://`), an HTTP CONNECT
/// proxy (`http://` or `https://`, the scheme `http://` if none). `NO_PROXY`
/// (or `no_proxy`): names separated by commas, each matching itself and its
/// subdomains (a leading `.` ignored), `*` matching every host.
///
/// A value that is no proxy URL, or names a SOCKS proxy (which this build
/// cannot speak), is an error: going around a proxy the user set would send
/// the secret by a road they did not choose. The message names the
/// variable, never its value (which may hold the proxy's password).
fn proxy_from_env() -> anyhow::Result<Option<ureq::Proxy>> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let Some((name, value)) = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
        .into_iter()
        .find_map(|name| Some((name, var(name)?)))
    else {
        return Ok(None);
    };
    let not_a_url = |_| {
        anyhow::anyhow!(
            "{name} is not a proxy URL (http://[user:password@]host:port): fix or unset it"
        )
    };
    let parsed = ureq::Proxy::new(value.trim()).map_err(not_a_url)?;
    let protocol = parsed.protocol();
    anyhow::ensure!(
        matches!(
            protocol,
            ureq::ProxyProtocol::Http | ureq::ProxyProtocol::Https
        ),
        "{name} names a {protocol:?} proxy: validation speaks only to an HTTP CONNECT \
         proxy (http://host:port); set one, or unset {name}"
    );
    let mut proxy = ureq::Proxy::builder(protocol)
        .host(parsed.host())
        .port(parsed.port());
    if let Some(user) = parsed.username() {
        proxy = proxy.username(user);
    }
    if let Some(password) = parsed.password() {
        proxy = proxy.password(password);
    }
    for entry in var("no_proxy")
        .or_else(|| var("NO_PROXY"))
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        if entry.starts_with('*') {
            proxy = proxy.no_proxy(entry);
        } else {
            let name = entry.trim_start_matches('.');
            proxy = proxy.no_proxy(name).no_proxy(&format!(".{name}"));
        }
    }
    Ok(Some(proxy.build().map_err(not_a_url)?))
}

/// A `Retry-After` value (RFC 9110 section 10.2.3): delay seconds, or an
/// HTTP-date, read against `now` (Unix seconds); a date in the past is no
/// wait. `None` for anything else.
pub fn retry_after(value: &str, now: u64) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    http_date(value).map(|at| Duration::from_secs(at.saturating_sub(now)))
}

/// An HTTP-date as Unix seconds: the preferred IMF-fixdate (`Sun, 06 Nov
/// 1994 08:49:37 GMT`) and the two obsolete forms a recipient must accept
/// (RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`, asctime `Sun Nov  6
/// 08:49:37 1994`).
fn http_date(value: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (mut day, mut month, mut year, mut time) = (None, None, None, None);
    for (i, token) in value
        .split([' ', ',', '-'])
        .filter(|t| !t.is_empty())
        .enumerate()
    {
        if i == 0 {
            continue; // the day name
        }
        if let Some(m) = MONTHS.iter().position(|m| *m == token) {
            month = Some(m as u64 + 1);
        } else if token.contains(':') {
            let hms: Vec<u64> = token
                .split(':')
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?;
            match hms[..] {
                [h, m, s] if h < 24 && m < 60 && s < 61 => time = Some(h * 3600 + m * 60 + s),
                _ => return None,
            }
        } else if token == "GMT" {
        } else {
            let n: u64 = token.parse().ok()?;
            // The day comes before the year in all three forms.
            match token.len() {
                1 | 2 if day.is_none() => day = Some(n),
                2 => year = Some(if n < 70 { 2000 + n } else { 1900 + n }),
                4 => year = Some(n),
                _ => return None,
            }
        }
    }
    let (day, month, year, time) = (day?, month?, year?, time?);
    if !(1..=31).contains(&day) || year < 1970 {
        return None;
    }
    // Howard Hinnant's days-from-civil.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + time)
}

fn describe(e: ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => "timed out".into(),
        e => e.to_string(),
    }
}

/// A body read's error: ureq wraps its own (a timeout) in an `io::Error`.
fn describe_io(e: std::io::Error) -> String {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
    {
        Some(ureq::Error::Timeout(_)) => "timed out".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_http_dates() {
        // 1994-11-06T08:49:37Z, RFC 9110's example date.
        let at = 784_111_777;
        assert_eq!(retry_after(" 7 ", at), Some(Duration::from_secs(7)));
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                retry_after(date, at - 30),
                Some(Duration::from_secs(30)),
                "{date}"
            );
            assert_eq!(retry_after(date, at + 5), Some(Duration::ZERO), "{date}");
        }
        assert_eq!(
            retry_after("Thu, 29 Feb 2024 23:59:59 GMT", 1_709_251_199 - 2),
            Some(Duration::from_secs(2))
        );
        for bad in [
            "soon",
            "-1",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:00:00 GMT",
            "",
        ] {
            assert_eq!(retry_after(bad, at), None, "{bad}");
        }
    }

    #[test]
    fn public_and_private_addresses() {
        for ip in [
            "10.0.0.1",
            "127.0.0.1",
            "192.168.1.1",
            "172.16.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["140.82.112.6", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
