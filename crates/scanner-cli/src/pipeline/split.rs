//! Large inputs cut into byte ranges that idle workers steal.
//!
//! An input above `split_threshold` is cut the way a work-stealing range
//! partitioner does: the task keeps the lower half and pushes the upper
//! half with `spawn_local`, again and again down to `split_grain`. Thieves
//! take the oldest entry of a deque, which is the largest piece, so idle
//! workers join in with big pieces and split them in turn. Ranges are read
//! with positional reads on one shared [`Backing`], overlap included.
//!
//! Line numbers of a range are unknown when it is scanned (the newlines
//! before it are in other pieces), so a range is scanned as if it started at
//! [`LinePos::START`] and records the position after the bytes it owns. The
//! worker that completes the last piece (a remaining-bytes counter reaching
//! zero) sorts the pieces by offset and composes those positions with
//! [`LinePos::then`] into each piece's real start, rebasing the piece's
//! findings: exact lines and columns, without reading the input a second
//! time. Only then does the input's one message go to the sink, so filters
//! and the report never see an unresolved position.

use std::fs::File;
use std::io;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use scanner_engine::{Finding, LinePos, Suppressed};

use super::reader::read_at;
use super::sink::Outcome;
use crate::input::Provenance;

/// What a split input is read from.
pub enum Backing {
    File(File),
    /// Content already in memory (a large blob, shared with a blob
    /// reader's cache).
    Bytes(Arc<Vec<u8>>),
}

impl Backing {
    /// Positional read: a short count only at the end.
    pub fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        match self {
            Backing::File(f) => read_at(f, buf, off),
            Backing::Bytes(b) => {
                let start = (off as usize).min(b.len());
                let n = buf.len().min(b.len() - start);
                buf[..n].copy_from_slice(&b[start..start + n]);
                Ok(n)
            }
        }
    }
}

/// A large input being scanned in ranges by several workers.
pub struct SplitInput {
    pub provenance: Provenance,
    pub backing: Backing,
    /// End of the last range (the size when the input was split).
    pub size: u64,
    /// Bytes not yet scanned; the piece that takes it to zero finishes the
    /// input.
    pub remaining: AtomicU64,
    pub pieces: Mutex<Pieces>,
    /// A history blob's base (the version of the file it modifies): the
    /// findings outside what changed since it are marked unchanged once
    /// the pieces are put together (the worker's `mark_unchanged`).
    pub base: Option<(
        crate::input::Oid,
        std::sync::Arc<crate::input::history::ObjectStore>,
    )>,
}

impl SplitInput {
    pub fn new(provenance: Provenance, backing: Backing, size: u64) -> SplitInput {
        SplitInput {
            provenance,
            backing,
            size,
            remaining: AtomicU64::new(size),
            pieces: Mutex::new(Pieces::default()),
            base: None,
        }
    }
}

#[derive(Default)]
pub struct Pieces {
    pub done: Vec<Piece>,
    /// The failed piece with the lowest start, and why.
    pub error: Option<(u64, io::Error)>,
    pub suppressed: Suppressed,
}

/// A scanned range: its findings have positions counted from `START` at
/// `start`, and `end` is the position after its owned bytes.
pub struct Piece {
    pub start: u64,
    pub findings: Vec<Finding>,
    pub end: LinePos,
    pub bytes: u64,
    /// Where a Rust unit-test module starts in this piece (file offset).
    pub test_from: Option<u64>,
}

/// The last piece is done: rebase every piece's findings onto absolute lines
/// and columns, lower those after a Rust unit-test module that an earlier
/// piece saw start (as a whole read does), and say what the input's one
/// message is. After a failed piece positions are unknown, so only the
/// findings before it are kept (with the failure).
pub fn finish(split: &SplitInput) -> (Outcome, Suppressed) {
    let pieces = std::mem::take(&mut *split.pieces.lock().unwrap_or_else(|e| e.into_inner()));
    let failed_at = pieces.error.as_ref().map_or(u64::MAX, |(s, _)| *s);
    let mut done = pieces.done;
    done.sort_by_key(|p| p.start);
    let mut base = LinePos::START;
    let mut bytes = 0;
    let mut findings = Vec::new();
    let mut test_from = None;
    for piece in done.into_iter().take_while(|p| p.start < failed_at) {
        for mut f in piece.findings {
            if test_from.is_some_and(|t| f.offset >= t) {
                scanner_engine::mark_test_code(&mut f.confidence, &mut f.tags);
            }
            let start = base.then(LinePos {
                line: f.line,
                column: f.column,
            });
            let end = base.then(LinePos {
                line: f.end_line,
                column: f.end_column,
            });
            (f.line, f.column, f.end_line, f.end_column) =
                (start.line, start.column, end.line, end.column);
            findings.push(f);
        }
        base = base.then(piece.end);
        bytes += piece.bytes;
        test_from = test_from.or(piece.test_from);
    }
    let outcome = match pieces.error {
        Some((_, e)) => Outcome::Failed {
            reason: crate::input::walk::io_reason(&e),
            findings,
        },
        None => Outcome::Scanned { bytes, findings },
    };
    (outcome, pieces.suppressed)
}

/// The partitioner's cut (module docs): while `splits(end - start)`, hands
/// the upper half of `start..end` to `push` (the worker's own deque, where
/// thieves take the oldest, the largest piece) and keeps the lower half.
/// Returns the end of what is left to the caller. A split input's byte
/// ranges and a listed directory's files (`pipeline::dirs`) are cut so.
pub(super) fn keep_lower_half(
    start: u64,
    mut end: u64,
    splits: impl Fn(u64) -> bool,
    mut push: impl FnMut(u64, u64),
) -> u64 {
    while splits(end - start) {
        let mid = start + (end - start) / 2;
        push(mid, end);
        end = mid;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(offset: u64, line: u32, column: u32) -> Finding {
        Finding {
            rule_id: "r".into(),
            rule_name: "r".into(),
            line,
            column,
            end_line: line,
            end_column: column + 4,
            offset,
            end_offset: offset + 4,
            r#match: String::new(),
            secret: String::new(),
            entropy: 0.0,
            fingerprint: String::new(),
            decoded: Vec::new(),
            allowed: None,
            confidence: scanner_engine::Confidence::High,
            tags: Vec::new(),
            validation: Default::default(),
            captures: Vec::new(),
        }
    }

    /// Pieces are rebased in offset order whatever order they finished in;
    /// after a failed piece nothing is kept (its lines are unknown).
    #[test]
    fn finish_rebases_and_stops_at_a_failure() {
        let piece = |start, findings, line, column| Piece {
            start,
            findings,
            end: LinePos { line, column },
            bytes: 100,
            test_from: None,
        };
        let split = |error: Option<u64>| {
            let mut pieces = Pieces::default();
            pieces
                .done
                .push(piece(200, vec![finding(210, 1, 11)], 1, 101));
            pieces.done.push(piece(0, vec![finding(5, 1, 6)], 4, 21));
            pieces.done.push(piece(
                100,
                vec![finding(150, 2, 7), finding(120, 1, 21)],
                2,
                31,
            ));
            pieces.error = error.map(|at| (at, io::Error::from_raw_os_error(5)));
            let input = SplitInput::new(Provenance::path("f"), Backing::Bytes(Arc::default()), 300);
            *input.pieces.lock().unwrap() = pieces;
            input
        };
        let positions = |outcome: Outcome| -> (bool, Vec<(u64, u32, u32, u32)>) {
            let (failed, fs) = match outcome {
                Outcome::Scanned { findings, .. } => (false, findings),
                Outcome::Failed { findings, .. } => (true, findings),
                Outcome::Skipped(_) => panic!(),
            };
            let at = fs
                .iter()
                .map(|f| (f.offset, f.line, f.column, f.end_column))
                .collect();
            (failed, at)
        };
        // Piece 100 starts at line 4, column 21; piece 200 at line 5, column 31.
        assert_eq!(
            positions(finish(&split(None)).0),
            (
                false,
                vec![
                    (5, 1, 6, 10),
                    (150, 5, 7, 11),
                    (120, 4, 41, 45),
                    (210, 5, 41, 45)
                ]
            )
        );
        assert_eq!(
            positions(finish(&split(Some(100))).0),
            (true, vec![(5, 1, 6, 10)])
        );
    }

    #[test]
    fn bytes_backing_reads_short_at_the_end() {
        let b = Backing::Bytes(Arc::new(b"abcdef".to_vec()));
        let mut buf = [0u8; 4];
        assert_eq!(b.read_at(&mut buf, 4).unwrap(), 2);
        assert_eq!(&buf[..2], b"ef");
        assert_eq!(b.read_at(&mut buf, 10).unwrap(), 0);
    }
}
