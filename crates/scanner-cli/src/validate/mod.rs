//! `scanner scan --validate`: asking providers whether findings still work.
//!
//! # Protocol
//!
//! 1. The [`Sink`](crate::output::Sink) hands each finding whose rule has a
//!    validator to [`Checker::submit`] as the scan produces it, and holds the
//!    findings (text and jsonl then come out at the end, not per file).
//!    Submitting never blocks: the scan never waits for the network.
//! 2. One check per distinct (rule, secret, named captures) per run: a
//!    second finding of the same is not sent again, it shares the answer
//!    (a pair rule's token beside another user name is another check: the
//!    answer is the pair's). A secret whose
//!    offline evidence is `offline_invalid` (failed checksum, expired JWT)
//!    is never sent.
//! 3. `jobs` threads (`--validation-jobs`, default 8) send the requests, at
//!    most 2 at a time to one host. 429, 503 and a 403 that says it is a
//!    rate limit ([`rate_limited`]) are retried after `Retry-After` (capped
//!    at 10 s) or 1 s then 2 s, 3 tries in all; then `unknown`.
//! 4. [`Checker::finish`] waits for every check; the sink writes each
//!    finding's [`Validation`] from the answers.
//!
//! The transport and its safety rules (HTTPS only, no redirect, fixed
//! host, no private address, proxy and CA from the environment, bounded
//! time and body) are in [`http`].
//!
//! # No secret in any output
//!
//! A request holds the secret; nothing else here does. Error texts pass
//! through [`scrub`], which replaces every template value (and its
//! percent-encoded form) with `[secret]`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use scanner_engine::{Validation, ValidationStatus, Validator, Vars};

pub mod http;

/// How `--validate` talks to providers.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--validation-jobs`: requests in flight at most (default 8).
    pub jobs: usize,
    /// `--validation-timeout`: the whole request (default 10 s); connecting
    /// alone is capped at 5 s.
    pub timeout: Duration,
    /// `--ca-cert`, else `SSL_CERT_FILE`: trust these roots instead of the
    /// built-in Mozilla set.
    pub ca_cert: Option<std::path::PathBuf>,
}

/// Requests in flight per host.
pub const PER_HOST: usize = 2;
/// Tries of a request answered 429 or 503 ([`rate_limited`]).
pub const TRIES: u32 = 3;

/// A check: the rule and everything its request is made of.
type Key = (Arc<str>, Vars);

struct Job {
    key: Key,
    validator: Arc<Validator>,
    vars: Vars,
}

/// The validation workers (module docs).
pub struct Checker {
    tx: Option<crossbeam_channel::Sender<Job>>,
    seen: HashSet<Key>,
    results: Arc<Mutex<HashMap<Key, Validation>>>,
    workers: Vec<JoinHandle<()>>,
}

/// Per-host slots.
#[derive(Default)]
struct Hosts {
    busy: Mutex<HashMap<String, usize>>,
    freed: Condvar,
}

impl Hosts {
    fn acquire(&self, host: &str) {
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        while busy.get(host).copied().unwrap_or(0) >= PER_HOST {
            busy = self.freed.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy.entry(host.to_owned()).or_default() += 1;
    }

    fn release(&self, host: &str) {
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = busy.get_mut(host) {
            *n -= 1;
        }
        self.freed.notify_all();
    }

    /// Runs `check` in one of `host`'s slots. A check that panics (a bug: the panic is
    /// printed as any is) is `unknown` with the reason, and its slot is freed all the same:
    /// once a validation thread died holding one, the checks waiting for that host, and the
    /// scan waiting for them, waited for ever.
    fn answer(&self, host: &str, check: impl FnOnce() -> Validation) -> Validation {
        self.acquire(host);
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
        self.release(host);
        answer.unwrap_or_else(|_| {
            let mut v = Validation::new(ValidationStatus::Unknown, "check failed");
            v.error = Some("the check panicked (a bug in scanner: please report it)".into());
            v
        })
    }
}

impl Checker {
    pub fn new(opts: &Options) -> anyhow::Result<Checker> {
        let client = Arc::new(http::Client::new(opts)?);
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let results: Arc<Mutex<HashMap<Key, Validation>>> = Arc::default();
        let hosts = Arc::new(Hosts::default());
        let workers = (0..opts.jobs.max(1))
            .map(|i| {
                let rx = rx.clone();
                let client = Arc::clone(&client);
                let results = Arc::clone(&results);
                let hosts = Arc::clone(&hosts);
                std::thread::Builder::new()
                    .name(format!("validate-{i}"))
                    .spawn(move || {
                        for job in rx {
                            let v = hosts.answer(job.validator.host(), || {
                                check(&client, &job.validator, &job.vars)
                            });
                            let mut results = results.lock().unwrap_or_else(|e| e.into_inner());
                            results.insert(job.key, v);
                        }
                    })
                    .expect("spawning a validation thread")
            })
            .collect();
        Ok(Checker {
            tx: Some(tx),
            seen: HashSet::new(),
            results,
            workers,
        })
    }

    /// Queues a check of `vars` for `rule` unless the same was queued
    /// before or its offline evidence says it cannot work.
    pub fn submit(
        &mut self,
        rule: &Arc<str>,
        validator: &Arc<Validator>,
        vars: Vars,
        offline: ValidationStatus,
    ) {
        if offline.is_offline_invalid() {
            return;
        }
        let key = (Arc::clone(rule), vars.clone());
        if !self.seen.insert(key.clone()) {
            return;
        }
        if let Some(tx) = &self.tx {
            let _ = tx.send(Job {
                key,
                validator: Arc::clone(validator),
                vars,
            });
        }
    }

    /// Waits for every check; the answers by (rule id, vars). Checks that got no answer
    /// (a network, proxy or TLS failure) are told on stderr, once for all, with the first
    /// error: the report only says `unknown` of each.
    pub fn finish(mut self) -> HashMap<Key, Validation> {
        drop(self.tx.take());
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        let answers = std::mem::take(&mut *self.results.lock().unwrap_or_else(|e| e.into_inner()));
        let mut unanswered = answers
            .values()
            .filter(|v| v.reason.as_deref() == Some(NO_ANSWER))
            .filter_map(|v| v.error.as_deref());
        if let Some(first) = unanswered.clone().min() {
            crate::messages::warn(
                None,
                &format!(
                    "validation: {} of {} {} got no answer, their findings are `unknown` \
                     (e.g. {first}); check the network, the proxy (HTTPS_PROXY) and \
                     the CA (--ca-cert)",
                    unanswered.by_ref().count(),
                    answers.len(),
                    crate::progress::plural(answers.len() as u64, "check", "checks"),
                ),
            );
        }
        answers
    }
}

/// The reason of a check that got no answer ([`Validation::error`] says why).
const NO_ANSWER: &str = "no answer";

/// One check, retries included.
fn check(client: &http::Client, validator: &Validator, vars: &Vars) -> Validation {
    let checked_at = scanner_engine::rfc3339(scanner_engine::unix_now());
    let req = match validator.request(vars, scanner_engine::unix_now()) {
        Ok(r) => r,
        Err(e) => {
            let mut v = Validation::new(ValidationStatus::Unknown, "request not built");
            v.error = Some(scrub(&e, vars));
            return v;
        }
    };
    let mut tries = 0;
    loop {
        tries += 1;
        match client.send(&req) {
            Ok(answer) if rate_limited(&answer) => {
                if tries >= TRIES {
                    let mut v = Validation::new(
                        ValidationStatus::Unknown,
                        format!("HTTP {} after {TRIES} tries", answer.status),
                    );
                    v.http_status = Some(answer.status);
                    v.checked_at = Some(checked_at);
                    return v;
                }
                let wait = answer
                    .retry_after
                    .unwrap_or(Duration::from_secs(1 << (tries - 1)))
                    .min(Duration::from_secs(10));
                std::thread::sleep(wait);
            }
            Ok(answer) => {
                let d = validator.decide(answer.status, &answer.headers, &answer.body);
                let mut v = d.into_validation(answer.status, checked_at);
                // A provider echoing the token back must not bring it into the report.
                for value in v.identity.values_mut() {
                    *value = scrub(value, vars);
                }
                return v;
            }
            Err(e) => {
                let mut v = Validation::new(ValidationStatus::Unknown, NO_ANSWER);
                v.error = Some(scrub(&e, vars));
                v.checked_at = Some(checked_at);
                return v;
            }
        }
    }
}

/// Whether an answer says "not now" rather than anything about the secret:
/// 429, 503, or a 403 with `Retry-After` or `x-ratelimit-remaining: 0`, as
/// GitHub answers a token past its rate limit ("a 403 or 429 response, and
/// the x-ratelimit-remaining header will be 0"). Such a token works: its
/// 403 is no refusal.
fn rate_limited(answer: &http::Answer) -> bool {
    match answer.status {
        429 | 503 => true,
        403 => answer
            .headers
            .iter()
            .any(|(k, v)| k == "retry-after" || (k == "x-ratelimit-remaining" && v.trim() == "0")),
        _ => false,
    }
}

/// `text` with every template value (and its percent-encoded form)
/// replaced by `[secret]`.
pub fn scrub(text: &str, vars: &Vars) -> String {
    let mut out = text.to_owned();
    for s in vars.sensitive() {
        out = out.replace(s, "[secret]");
        let mut encoded = String::new();
        scanner_engine::percent_encode(s, &mut encoded);
        out = out.replace(&encoded, "[secret]");
    }
    out
}

/// The validation of a finding whose rule has no validator, under
/// `--validate`: the offline evidence if any, else `not_checked`.
pub fn without_validator(offline: &Validation) -> Validation {
    if offline.status == ValidationStatus::NotChecked && offline.reason.is_none() {
        Validation::new(ValidationStatus::NotChecked, "the rule has no validator")
    } else {
        offline.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_removes_plain_and_encoded_values() {
        let vars = Vars {
            secret: "123:abc/DEF".into(),
            captures: vec![("sid".into(), "AC99".into())],
        };
        assert_eq!(
            scrub("GET /bot123%3Aabc%2FDEF/getMe for AC99: 123:abc/DEF", &vars),
            "GET /bot[secret]/getMe for [secret]: [secret]"
        );
    }

    #[test]
    fn a_check_that_panics_is_unknown_and_frees_its_slot() {
        let hosts = Hosts::default();
        for _ in 0..PER_HOST + 1 {
            let v = hosts.answer("h", || panic!("a bug"));
            assert_eq!(v.status, ValidationStatus::Unknown);
            assert_eq!(v.reason.as_deref(), Some("check failed"));
            assert_eq!(
                v.error.as_deref(),
                Some("the check panicked (a bug in scanner: please report it)")
            );
        }
        assert_eq!(hosts.busy.lock().unwrap().get("h"), Some(&0));
        let v = hosts.answer("h", || Validation::new(ValidationStatus::Valid, "200"));
        assert_eq!(v.status, ValidationStatus::Valid);
    }

    #[test]
    fn host_slots_cap_concurrency() {
        let hosts = Arc::new(Hosts::default());
        let peak = Arc::new(Mutex::new((0usize, 0usize)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let hosts = Arc::clone(&hosts);
                let peak = Arc::clone(&peak);
                std::thread::spawn(move || {
                    hosts.acquire("h");
                    {
                        let mut p = peak.lock().unwrap();
                        p.0 += 1;
                        p.1 = p.1.max(p.0);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                    peak.lock().unwrap().0 -= 1;
                    hosts.release("h");
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(peak.lock().unwrap().1, PER_HOST);
    }
}
