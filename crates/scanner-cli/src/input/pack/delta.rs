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
/// `out` is first given room for the result, and [`SHORT`] bytes more for
/// short pieces copied as blocks. A result larger than the base and the
/// delta together (a block of the base copied several times: generated
/// JSON, whose records repeat) is given room only once its instructions
/// are counted and found to add up to it ([`counted_size`]), so a corrupt
/// header cannot make `out` allocate more than the instructions build.
/// Exactly the result's size: these buffers are kept (in the caches, shared
/// with the worker scanning them), and a result grown by doubling held up
/// to twice its size (the heap's peak on moto's history was 106 MB, 95 MB
/// when growth stopped at the result's size); each doubling also copied
/// what was built so far (`realloc`, 1% of a history scan of moto).
pub(super) fn apply(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("ssse3") {
        // SAFETY: this CPU has SSSE3, just checked.
        return unsafe { apply_ssse3(base, delta, out) };
    }
    apply_with::<false>(base, delta, out)
}

/// [`apply`], a copy's fields read with SSSE3's byte shuffle.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn apply_ssse3(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    apply_with::<true>(base, delta, out)
}

/// [`apply`]; with `SHUFFLE`, inlined only into a function with SSSE3
/// ([`apply_ssse3`]).
#[inline(always)]
fn apply_with<const SHUFFLE: bool>(
    base: &[u8],
    delta: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), String> {
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
    if result_len > base.len() + delta.len()
        && counted_size(base.len(), delta, i) != Some(result_len)
    {
        return Err(CORRUPT.into());
    }
    emptied(out, result_len + SHORT);
    while let Some(&op) = delta.get(i) {
        i += 1;
        let piece = if op & 0x80 != 0 {
            let (offset, len) = match delta.get(i..i + 8) {
                #[cfg(target_arch = "x86_64")]
                Some(next) if SHUFFLE => {
                    // SAFETY: `next` holds 8 bytes; the caller has SSSE3.
                    let (fields, took) = unsafe { shuffled_fields(next, op) };
                    i += took;
                    fields
                }
                _ => copy_fields(delta, &mut i, op).ok_or(CORRUPT)?,
            };
            (base, offset, if len == 0 { 0x10000 } else { len })
        } else if op != 0 {
            let at = i;
            i += usize::from(op);
            (delta, at, usize::from(op))
        } else {
            return Err(CORRUPT.into());
        };
        let (from, at, len) = piece;
        if at.checked_add(len).is_none_or(|end| end > from.len()) {
            return Err(CORRUPT.into());
        }
        if len <= SHORT && at + SHORT <= from.len() && out.capacity() - out.len() >= SHORT {
            // SAFETY: `from` holds SHORT bytes from `at`, and `out` has room
            // for SHORT bytes past its length (both checked just above); `out`
            // is a buffer of its own, apart from `from`. Only `len` of the
            // bytes written are counted in. Pieces copied here may take
            // `out.len()` past `result_len` (never past the capacity): the
            // check at the end refuses that.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    from.as_ptr().add(at),
                    out.as_mut_ptr().add(out.len()),
                    SHORT,
                );
                out.set_len(out.len() + len);
            }
            continue;
        }
        let piece = &from[at..at + len];
        let len = out.len() + piece.len();
        if len > result_len {
            return Err(CORRUPT.into());
        }
        out.extend_from_slice(piece);
    }
    if out.len() != result_len {
        return Err(CORRUPT.into());
    }
    Ok(())
}

/// The size of what the instructions of `delta` from `i` build on a base of
/// `base_len` bytes (copies and inserts added up), without applying them;
/// `None` where [`apply`] would find them corrupt: cut short, reading past
/// the base, or holding the reserved opcode 0.
fn counted_size(base_len: usize, delta: &[u8], mut i: usize) -> Option<usize> {
    let mut size = 0usize;
    while let Some(&op) = delta.get(i) {
        i += 1;
        let (end, len) = if op & 0x80 != 0 {
            let (offset, len) = copy_fields(delta, &mut i, op)?;
            let len = if len == 0 { 0x10000 } else { len };
            (offset.checked_add(len)?, len)
        } else if op != 0 {
            i += usize::from(op);
            (i, usize::from(op))
        } else {
            return None;
        };
        if end
            > if op & 0x80 != 0 {
                base_len
            } else {
                delta.len()
            }
        {
            return None;
        }
        size = size.checked_add(len)?;
    }
    Some(size)
}

/// A copy's offset and size (0 for 65,536), from the bytes after its opcode
/// `op`, read one by one from `delta[*i..]`: the low 4 bits of `op` say which
/// offset bytes follow, the next 3 which size bytes. `*i` is moved past them;
/// `None` if they are cut short.
fn copy_fields(delta: &[u8], i: &mut usize, op: u8) -> Option<(usize, usize)> {
    let mut field = |bits: u8, bytes: usize| -> Option<usize> {
        let mut v = 0usize;
        for k in 0..bytes {
            if bits & (1 << k) != 0 {
                v |= usize::from(*delta.get(*i)?) << (8 * k);
                *i += 1;
            }
        }
        Some(v)
    };
    let offset = field(op & 0x0f, 4)?;
    Some((offset, field((op >> 4) & 0x07, 3)?))
}

/// [`copy_fields`] from the 8 bytes after the opcode `op`, with one byte
/// shuffle: no branch on which bytes follow. Reading the fields byte by
/// byte was a third of `apply`'s instructions on moto's history
/// (callgrind), and its branches follow the values of offsets and sizes.
/// Shuffled: 39.7 G instructions against 41.5 G for the whole scan at one
/// thread (callgrind).
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn shuffled_fields(next: &[u8], op: u8) -> ((usize, usize), usize) {
    use std::arch::x86_64::{
        _mm_cvtsi128_si64, _mm_loadl_epi64, _mm_loadu_si128, _mm_shuffle_epi8,
    };
    assert!(next.len() >= 8);
    // SAFETY: `next` holds the 8 bytes loaded (asserted), a row of the
    // table the 16 loaded unaligned; SSSE3 is the caller's to vouch for.
    let row = &COPY_SHUFFLE[usize::from(op & 0x7f)];
    let fields = unsafe {
        let bytes = _mm_loadl_epi64(next.as_ptr().cast());
        let control = _mm_loadu_si128(row.as_ptr().cast());
        _mm_cvtsi128_si64(_mm_shuffle_epi8(bytes, control)) as u64
    };
    let fields = ((fields & 0xffff_ffff) as usize, (fields >> 32) as usize);
    (fields, usize::from(row[TOOK]))
}

/// For the low 7 bits of each copy opcode, where each byte of its offset
/// (bytes 0-3) and size (4-6) comes from among the bytes after it: the
/// `k`-th field byte present is the next byte, one absent is zero (0x80);
/// and at [`TOOK`], how many bytes the fields take (what the shuffle puts
/// in bytes 8-15 is not read).
#[cfg(target_arch = "x86_64")]
static COPY_SHUFFLE: [[u8; 16]; 128] = {
    let mut table = [[0x80u8; 16]; 128];
    let mut op = 0;
    while op < 128 {
        let mut next = 0;
        let mut k = 0;
        while k < 7 {
            if op & (1 << k) != 0 {
                table[op][k] = next;
                next += 1;
            }
            k += 1;
        }
        table[op][TOOK] = next;
        op += 1;
    }
    table
};

/// Where a row of [`COPY_SHUFFLE`] holds how many bytes the fields take.
#[cfg(target_arch = "x86_64")]
const TOOK: usize = 15;

/// Pieces of up to this many bytes are copied as a block of this size,
/// where both the source and `out` hold that much (the bytes past the
/// piece are overwritten by the next): `memcpy`'s calls cost more than the
/// bytes of a short piece. Of the 80 million pieces that moto's history
/// rebuilds (5.1 GB, one thread), 70 million are 64 bytes or less (1.5 GB).
/// Copied as blocks, the instructions are the same (callgrind), and the CPU
/// time at two threads 0.3-3.6% less in three runs of interleaved rounds:
/// what it saves is `memcpy`'s branches on the size
/// (`docs/performance.md`, "Rebuilding objects: short pieces, fields shuffled").
const SHORT: usize = 64;

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

    /// Encodes a delta for a base of `base_len` bytes whose header says
    /// `result_len`: copies `(offset, len)` from the base, inserts bytes.
    fn encode(
        base_len: usize,
        result_len: usize,
        ops: &[Result<(usize, usize), Vec<u8>>],
    ) -> Vec<u8> {
        let mut d = Vec::new();
        for mut n in [base_len, result_len] {
            while n >= 0x80 {
                d.push(0x80 | (n & 0x7f) as u8);
                n >>= 7;
            }
            d.push(n as u8);
        }
        for op in ops {
            match op {
                Ok((offset, len)) => {
                    let (at, mut bits) = (d.len(), 0x80u8);
                    d.push(0);
                    let len = if *len == 0x10000 { 0 } else { *len };
                    for (k, byte) in (offset.to_le_bytes()[..4].iter())
                        .chain(&len.to_le_bytes()[..3])
                        .enumerate()
                    {
                        if *byte != 0 {
                            bits |= 1 << k;
                            d.push(*byte);
                        }
                    }
                    d[at] = bits;
                }
                Err(bytes) => {
                    d.push(bytes.len() as u8);
                    d.extend(bytes);
                }
            }
        }
        d
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Any delta of copies and inserts, short (copied as blocks of
        /// SHORT bytes) and long, near the ends of the base and the delta
        /// and away from them, rebuilds what the instructions say; one whose
        /// header says another length is refused, whatever its pieces.
        #[test]
        fn apply_rebuilds_what_any_delta_says(
            base in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..600),
            ops in proptest::collection::vec(
                (proptest::prelude::any::<bool>(), 0usize..1 << 16, 1usize..300, proptest::prelude::any::<u8>()),
                0..40,
            ),
            off_by in -70i64..70,
            reused in proptest::prelude::any::<bool>(),
        ) {
            let ops: Vec<Result<(usize, usize), Vec<u8>>> = ops
                .into_iter()
                .map(|(copy, at, len, fill)| {
                    if copy {
                        let offset = at % base.len();
                        Ok((offset, len.min(base.len() - offset)))
                    } else {
                        Err(vec![fill; len % 127 + 1])
                    }
                })
                .collect();
            let mut want: Vec<u8> = Vec::new();
            for op in &ops {
                match op {
                    Ok((offset, len)) => want.extend(&base[*offset..offset + len]),
                    Err(bytes) => want.extend(bytes),
                }
            }
            // A buffer reused with old bytes in it, or a new one.
            // Both ways of reading a copy's fields: `apply` shuffles where
            // the CPU can.
            for apply in [apply, apply_with::<false>] {
                let mut out = if reused { vec![0xee; 5000] } else { Vec::new() };
                apply(&base, &encode(base.len(), want.len(), &ops), &mut out).unwrap();
                proptest::prop_assert_eq!(&out, &want);
                let lying = want.len() as i64 + off_by;
                if off_by != 0 && lying >= 0 {
                    let delta = encode(base.len(), lying as usize, &ops);
                    proptest::prop_assert_eq!(apply(&base, &delta, &mut out), Err(CORRUPT_DELTA.into()));
                }
            }
        }
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
        assert_eq!(out.capacity(), result + SHORT);
        // Reused, as the caches reuse buffers: no larger, never moved.
        let at = out.as_ptr();
        apply(&base, &delta, &mut out).unwrap();
        assert_eq!((out.capacity(), out.as_ptr()), (result + SHORT, at));
        // A header that says 1 TiB over the same instructions is refused
        // before anything is allocated for it.
        let mut lying = vec![100, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
        lying.extend_from_slice(&delta[4..]);
        let mut out = Vec::new();
        assert_eq!(apply(&base, &lying, &mut out), Err(CORRUPT_DELTA.into()));
        assert_eq!(out.capacity(), 0);
    }
}
