//! Whole zlib streams inflated at once, by libdeflate: the pack reader's
//! objects and deltas (`input/pack.rs`), whose size each entry's header
//! gives, so the output buffer is sized before a byte is read.
//!
//! Inflating was 17% of the CPU of a history scan of moto at two threads
//! (`perf`: zlib-rs through gitoxide's `decompress_entry`). libdeflate
//! inflates a whole stream into a whole buffer, without a streaming
//! state to keep between calls, and took about 4% off that scan's time
//! (moto `--threads 2`, 4 rounds alternating with zlib-rs: 3.18-3.39 s
//! against 3.34-3.42 s; the floor 2.88-2.89 s). Streams read a piece at a
//! time (a large blob scanned through the chunk reader,
//! `pack::EntryStream`) keep `flate2`, and so do entries under
//! [`MIN_BYTES`], but for a reader that asks for libdeflate on every entry
//! (`PackReader::libdeflate_from`: the commits' reader of the history walk).

use std::ptr::NonNull;

use libdeflate_sys as ffi;

/// Entries that inflate to fewer bytes go through zlib-rs (gitoxide's
/// `decompress_entry`). On the synthetic history of
/// `scripts/bench-history.sh` (2 KB files), libdeflate for every entry took
/// 10% fewer instructions (callgrind, one thread: 3.546 G against 3.960 G)
/// but more time at two threads (20 runs interleaved: 0.448 s against
/// 0.436 s; user time 0.742 s against 0.728 s with this bound, 12 runs).
/// moto's history, with its large versions, did not change with it (4 rounds:
/// 3.34-3.42 s against 3.29-3.39 s).
pub const MIN_BYTES: usize = 1 << 10;

/// One libdeflate decompressor (about 32 KiB of tables), owned by one
/// reader.
pub struct Inflater(NonNull<ffi::libdeflate_decompressor>);

// SAFETY: a decompressor is plain memory that libdeflate reads and writes
// only inside a call made through `&mut Inflater`; it holds nothing tied to
// the thread that made it.
unsafe impl Send for Inflater {}

impl Inflater {
    pub fn new() -> Inflater {
        // SAFETY: no arguments; the result is checked for null.
        let made = unsafe { ffi::libdeflate_alloc_decompressor() };
        let layout = std::alloc::Layout::new::<[u8; 32 << 10]>();
        Inflater(NonNull::new(made).unwrap_or_else(|| std::alloc::handle_alloc_error(layout)))
    }

    /// Inflates the zlib stream that `input` starts with (the bytes after it
    /// are left alone) into `out`, which the stream must fill exactly.
    /// Returns how many bytes of `input` the stream took.
    pub fn inflate(&mut self, input: &[u8], out: &mut [u8]) -> Result<usize, &'static str> {
        let (mut read, mut wrote) = (0usize, 0usize);
        // SAFETY: the decompressor is ours alone (`&mut self`); libdeflate
        // reads at most `input.len()` bytes from `input` and writes at most
        // `out.len()` bytes to `out`, both live slices, and writes the two
        // counts through pointers to locals.
        let result = unsafe {
            ffi::libdeflate_zlib_decompress_ex(
                self.0.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                out.len(),
                &mut read,
                &mut wrote,
            )
        };
        match result {
            ffi::libdeflate_result_LIBDEFLATE_SUCCESS if wrote == out.len() => Ok(read),
            ffi::libdeflate_result_LIBDEFLATE_SUCCESS => {
                Err("a zlib stream that decompresses to less than its entry's size")
            }
            ffi::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => {
                Err("a zlib stream that decompresses to more than its entry's size")
            }
            _ => Err("a zlib stream that does not decompress (corrupt or truncated)"),
        }
    }
}

impl Default for Inflater {
    fn default() -> Inflater {
        Inflater::new()
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: made by `libdeflate_alloc_decompressor`, freed once.
        unsafe { ffi::libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    #[test]
    fn a_stream_fills_its_buffer_and_says_where_it_ended() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut input = zlib(&data);
        let len = input.len();
        // What follows the stream in a pack: the next entry.
        input.extend_from_slice(b"\x95\x0anext entry");
        let mut out = vec![0; data.len()];
        let mut inflater = Inflater::new();
        assert_eq!(inflater.inflate(&input, &mut out), Ok(len));
        assert_eq!(out, data);
        // A size that does not match the stream is an error either way.
        let mut short = vec![0; data.len() - 1];
        assert_eq!(
            inflater.inflate(&input, &mut short),
            Err("a zlib stream that decompresses to more than its entry's size")
        );
        let mut long = vec![0; data.len() + 1];
        assert_eq!(
            inflater.inflate(&input, &mut long),
            Err("a zlib stream that decompresses to less than its entry's size")
        );
        // A cut stream, and a damaged one, do not decompress.
        let corrupt = Err("a zlib stream that does not decompress (corrupt or truncated)");
        assert_eq!(inflater.inflate(&input[..len / 2], &mut out), corrupt);
        let mut damaged = input.clone();
        for b in &mut damaged[len / 2..len / 2 + 8] {
            *b ^= 0x5a;
        }
        // (Which error depends on where the damage leads the decoder.)
        assert!(inflater.inflate(&damaged, &mut out).is_err());
        // And the decompressor still works after the errors.
        assert_eq!(inflater.inflate(&input, &mut out), Ok(len));
        assert_eq!(out, data);
    }
}
