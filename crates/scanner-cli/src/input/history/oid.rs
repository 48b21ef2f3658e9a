//! Object ids, and the map keyed by them.

use super::*;

/// A SHA-1 object id. (SHA-256 repositories are refused with a clear error.)
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Oid(pub [u8; 20]);

impl Oid {
    /// Parses 40 hex digits (either case).
    pub fn from_hex(hex: &[u8]) -> Option<Oid> {
        if hex.len() != 40 {
            return None;
        }
        let mut out = [0u8; 20];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Oid(out))
    }

    /// The id as gitoxide takes it.
    pub fn as_gix(&self) -> &gix::oid {
        gix::oid::try_from_bytes(&self.0).expect("20 bytes is a SHA-1 id")
    }

    /// The 40 lowercase hex digits.
    pub(super) fn hex(&self) -> [u8; 40] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 40];
        for (pair, b) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = HEX[usize::from(b >> 4)];
            pair[1] = HEX[usize::from(b & 15)];
        }
        out
    }
}

pub(super) fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One write, not one `{:02x}` per byte: that cost 5,800 instructions an id, 8% of
        // a scan of the synthetic history when every blob's id was formatted once.
        let hex = self.hex();
        f.write_str(std::str::from_utf8(&hex).expect("hex digits are ASCII"))
    }
}

impl fmt::Debug for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Object ids are uniformly random: their first 8 bytes are already a good hash.
#[derive(Default)]
pub(super) struct OidHasher(u64);

impl Hasher for OidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // `[u8; 20]` hashes as its length (a usize, via `write_usize`) then its bytes.
        let mut first = [0u8; 8];
        let n = bytes.len().min(8);
        first[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(first);
    }
    fn write_usize(&mut self, _: usize) {}
}

pub(super) type OidMap<V = u64> = HashMap<Oid, V, BuildHasherDefault<OidHasher>>;
