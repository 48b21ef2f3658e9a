//! git's deltas: an object rebuilt from its base and the instructions of a delta.

use super::emptied;

/// Applies git's delta `delta` to `base`, into `out` (cleared first): a
/// header of two sizes (base, result; 7 bits a byte, low first), then
/// instructions: `1xxxxxxx` copies from the base (the low 4 bits say which
/// offset bytes follow, the next 3 which size bytes; size 0 means 65536),
/// `0nnnnnnn` (n > 0) inserts the next n bytes. Every size is checked:
/// a corrupt delta is an error, never a read out of bounds or a runaway
/// allocation.
///
/// `out` is first given room for the base and the delta together, which
/// bounds what a corrupt header can make it allocate. A result can be
/// larger (a block of the base copied several times: generated JSON, whose
/// records repeat): `out` then grows, doubling at most and never past the
/// result's size. Left to `Vec`'s growth, it doubled past it, and these
/// buffers are kept (in the caches, shared with the worker scanning them): the heap's
/// peak on moto's history was 106 MB, 95 MB with this (heaptrack).
pub(super) fn apply(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    const CORRUPT: &str = CORRUPT_DELTA;
    let mut i = 0;
    let base_len = delta_size(delta, &mut i).ok_or(CORRUPT)?;
    let result_len = delta_size(delta, &mut i).ok_or(CORRUPT)?;
    if base_len != base.len() {
        return Err(format!(
            "a delta expects a base of {base_len} bytes, its base has {}",
            base.len()
        ));
    }
    emptied(out, result_len.min(base.len() + delta.len()));
    while let Some(&op) = delta.get(i) {
        i += 1;
        let piece = if op & 0x80 != 0 {
            let mut field = |bits: u8, bytes: usize| -> Option<usize> {
                let mut v = 0usize;
                for k in 0..bytes {
                    if bits & (1 << k) != 0 {
                        v |= usize::from(*delta.get(i)?) << (8 * k);
                        i += 1;
                    }
                }
                Some(v)
            };
            let offset = field(op & 0x0f, 4).ok_or(CORRUPT)?;
            let len = match field((op >> 4) & 0x07, 3).ok_or(CORRUPT)? {
                0 => 0x10000,
                n => n,
            };
            base.get(offset..offset.checked_add(len).ok_or(CORRUPT)?)
        } else if op != 0 {
            let piece = delta.get(i..i + usize::from(op));
            i += usize::from(op);
            piece
        } else {
            None
        };
        let piece = piece.ok_or(CORRUPT)?;
        let len = out.len() + piece.len();
        if len > result_len {
            return Err(CORRUPT.into());
        }
        if len > out.capacity() {
            let room = result_len.min(len.max(2 * out.capacity()));
            out.reserve_exact(room - out.len());
        }
        out.extend_from_slice(piece);
    }
    if out.len() != result_len {
        return Err(CORRUPT.into());
    }
    Ok(())
}

pub(super) const CORRUPT_DELTA: &str = "a corrupt delta";

/// One of a delta's two leading sizes, read at `*at` (7 bits a byte, low
/// first), `*at` moved past it; `None` if it is cut short or overflows.
pub(super) fn delta_size(delta: &[u8], at: &mut usize) -> Option<usize> {
    let mut n = 0usize;
    for shift in (0..64).step_by(7) {
        let b = *delta.get(*at)?;
        *at += 1;
        n |= usize::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_copies_and_inserts_and_refuses_what_does_not_add_up() {
        let base: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        // Base 70,000 bytes, result 65,536 + 3 + 2: copy 64 KiB from 0
        // (size bytes absent: 65536), insert "abc", copy 2 from offset 300
        // (one offset byte 0x2c and 0x01 << 8, one size byte).
        let header = [0xf0, 0xa2, 0x04, 0x85, 0x80, 0x04];
        let mut delta = header.to_vec();
        delta.extend([0x80, 0x03, b'a', b'b', b'c', 0x93, 0x2c, 0x01, 0x02]);
        let mut out = Vec::new();
        apply(&base, &delta, &mut out).unwrap();
        let mut want = base[..65_536].to_vec();
        want.extend(b"abc");
        want.extend(&base[300..302]);
        assert_eq!(out, want);
        let mut bad = |edit: &dyn Fn(&mut Vec<u8>)| {
            let mut d = delta.clone();
            edit(&mut d);
            apply(&base, &d, &mut out).unwrap_err()
        };
        // A base of another size; a copy past the base's end; an insert
        // past the delta's end; the reserved opcode 0; a result longer,
        // or shorter, than its header says.
        assert!(bad(&|d| d[0] = 0xf1).contains("expects a base of 70001 bytes"));
        assert_eq!(bad(&|d| d.extend([0x8c, 0xff, 0xff])), "a corrupt delta");
        assert_eq!(bad(&|d| d.truncate(10)), "a corrupt delta");
        assert_eq!(bad(&|d| d.push(0)), "a corrupt delta");
        assert_eq!(bad(&|d| d.extend([0x01, b'x'])), "a corrupt delta");
        assert_eq!(bad(&|d| d.truncate(11)), "a corrupt delta");
    }

    /// A result larger than its base and delta together (a block copied
    /// again and again) gets a buffer of its own size, not of the next
    /// power of two past it: these buffers are kept in the caches.
    #[test]
    fn a_result_larger_than_base_and_delta_gets_a_buffer_of_its_size() {
        let base: Vec<u8> = (0..100u8).collect();
        // Base 100 bytes, result 100 * 1,000: copy the 100 bytes from
        // offset 0 (no offset byte; one size byte, 0x64) a thousand times.
        let result = 100_000usize;
        let mut delta = vec![100, 0xa0, 0x8d, 0x06];
        for _ in 0..1000 {
            delta.extend([0x90, 100]);
        }
        let mut out = Vec::new();
        apply(&base, &delta, &mut out).unwrap();
        assert_eq!(out.len(), result);
        assert!(out.chunks(100).all(|c| c == base));
        assert_eq!(out.capacity(), result);
        // Reused, as the caches reuse buffers: no larger.
        apply(&base, &delta, &mut out).unwrap();
        assert_eq!(out.capacity(), result);
    }
}
