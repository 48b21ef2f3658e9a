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

/// Appends `len` random bytes of `alphabet`. Each 64-bit draw gives 4
/// bytes (16 bits each, reduced modulo the alphabet: a bias under 1e-3),
/// so that the unoptimised test spends its time in the gate, not in the
/// generator.
fn push(rng: &mut Rng, buf: &mut Vec<u8>, alphabet: &[u8], len: usize) {
    let n = alphabet.len() as u64;
    let mut left = len;
    while left > 0 {
        let mut x = rng.next();
        for _ in 0..left.min(4) {
            buf.push(alphabet[((x & 0xffff) % n) as usize]);
            x >>= 16;
        }
        left -= left.min(4);
    }
}

/// Generates `N` tokens with `make` and returns those the gate drops.
fn dropped(seed: u64, make: impl Fn(&mut Rng, &mut Vec<u8>)) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut buf = Vec::with_capacity(256);
    let mut out = Vec::new();
    for _ in 0..N {
        buf.clear();
        make(&mut rng, &mut buf);
        if is_placeholder(&buf) {
            out.push(String::from_utf8_lossy(&buf).into_owned());
        }
    }
    out
}

#[test]
fn github_classic_pat() {
    let d = dropped(0x9e37_79b9_7f4a_7c15, |r, b| {
        b.extend_from_slice(b"ghp_");
        push(r, b, ALNUM, 36);
    });
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn aws_access_key_id() {
    let d = dropped(0xd1b5_4a32_d192_ed03, |r, b| {
        b.extend_from_slice(b"AKIA");
        push(r, b, BASE32, 16);
    });
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn slack_bot_token() {
    let d = dropped(0x8cb9_2ba7_2f3d_8dd7, |r, b| {
        b.extend_from_slice(b"xoxb-");
        push(r, b, DIGITS, 12);
        b.push(b'-');
        push(r, b, DIGITS, 13);
        b.push(b'-');
        push(r, b, ALNUM, 24);
    });
    assert_eq!(d, Vec::<String>::new());
}

#[test]
fn openai_project_key() {
    let d = dropped(0x2545_f491_4f6c_dd1d, |r, b| {
        b.extend_from_slice(b"sk-proj-");
        push(r, b, URLSAFE, 74);
        b.extend_from_slice(b"T3BlbkFJ");
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
