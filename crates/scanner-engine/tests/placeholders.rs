//! The placeholder gate never drops real tokens: a million random tokens of
//! each major format, from a seeded generator, none is a placeholder.
//!
//! The gate only counts a substring as evidence when a random token of the
//! same alphabet and length contains it with probability at most 1e-7, so
//! the expected number of drops here is below 0.1 per format; with the
//! fixed seed the count is exactly 0.

mod common;

use common::{Rng, ALNUM, HEX};
use scanner_engine::is_placeholder;

const N: usize = 1_000_000;
const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const DIGITS: &[u8] = b"0123456789";

/// A token being built: a fixed buffer, so that the unoptimised test
/// spends its time in the gate, not in `Vec` growth.
struct Buf {
    bytes: [u8; 256],
    len: usize,
}

impl Buf {
    fn lit(&mut self, s: &[u8]) {
        self.bytes[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }
}

/// Appends `len` random bytes of `alphabet`. Each 64-bit draw gives 4
/// bytes (16 bits each, reduced modulo the alphabet: a bias under 1e-3).
fn push(rng: &mut Rng, buf: &mut Buf, alphabet: &[u8], len: usize) {
    let n = alphabet.len() as u64;
    let mut x = 0;
    let mut i = 0;
    while i < len {
        if i % 4 == 0 {
            x = rng.next();
        }
        buf.bytes[buf.len + i] = alphabet[((x & 0xffff) % n) as usize];
        x >>= 16;
        i += 1;
    }
    buf.len += len;
}

/// Generates `N` tokens with `make` and returns those the gate drops.
fn dropped(seed: u64, make: impl Fn(&mut Rng, &mut Buf)) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut buf = Buf {
        bytes: [0; 256],
        len: 0,
    };
    let mut out = Vec::new();
    for _ in 0..N {
        buf.len = 0;
        make(&mut rng, &mut buf);
        let token = &buf.bytes[..buf.len];
        if is_placeholder(token) {
            out.push(String::from_utf8_lossy(token).into_owned());
        }
    }
    out
}

#[test]
fn github_classic_pat() {
    let d = dropped(0x9e37_79b9_7f4a_7c15, |r, b| {
        b.lit(b"ghp_");
        push(r, b, ALNUM, 36);
    });
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn aws_access_key_id() {
    let d = dropped(0xd1b5_4a32_d192_ed03, |r, b| {
        b.lit(b"AKIA");
        push(r, b, BASE32, 16);
    });
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn slack_bot_token() {
    let d = dropped(0x8cb9_2ba7_2f3d_8dd7, |r, b| {
        b.lit(b"xoxb-");
        push(r, b, DIGITS, 12);
        b.lit(b"-");
        push(r, b, DIGITS, 13);
        b.lit(b"-");
        push(r, b, ALNUM, 24);
    });
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn openai_project_key() {
    let d = dropped(0x2545_f491_4f6c_dd1d, |r, b| {
        b.lit(b"sk-proj-");
        push(r, b, URLSAFE, 74);
        b.lit(b"T3BlbkFJ");
        push(r, b, URLSAFE, 74);
    });
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn hex_40() {
    let d = dropped(0x5851_f42d_4c95_7f2d, |r, b| push(r, b, HEX, 40));
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn base64_40() {
    let d = dropped(0x1405_7b7e_f767_814f, |r, b| push(r, b, BASE64, 40));
    assert_eq!(d, Vec::<String>::new());
}

/// The tokens the old substring rules dropped are real-looking tokens with
/// a chance substring; placeholders proper are still caught.
#[test]
fn chance_substrings_are_not_evidence() {
    for real in [
        "ghp_q8Rk2vXxxxxmN4pT7wY0aBcD3eF6gH9iJ5kL",
        "ghp_q8Rk2vXz1LmihgfedaBcD3eF6gH9iJ5kLm4p",
        "ghp_q8Rk2vDummyN4pT7wY0aBcD3eF6gH9iJ5kLm",
        "AKIAXXXXQ7RKV2ZT4M3N",
    ] {
        assert!(!is_placeholder(real.as_bytes()), "{real} is a real token");
    }
    for fake in [
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "ghp_EXAMPLEq8Rk2vXz1LmN4pT7wY0aBcD3eF6gH",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "sk_live_${STRIPE_SECRET}",
        "your-token-here",
        "CHANGE_ME",
    ] {
        assert!(is_placeholder(fake.as_bytes()), "{fake} is a placeholder");
    }
}
