//! A nested zip made seekable: in memory up to a size, in an anonymous temp file beyond.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

/// Bytes held in memory up to a size, in an anonymous temp file beyond: a
/// nested zip made seekable. The temp file has no name (deleted on
/// creation), so nothing is left behind even on a crash.
pub enum Spooled {
    Memory(Cursor<Vec<u8>>),
    File(File),
}

impl Read for Spooled {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Spooled::Memory(c) => c.read(buf),
            Spooled::File(f) => f.read(buf),
        }
    }
}

impl Seek for Spooled {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Spooled::Memory(c) => c.seek(pos),
            Spooled::File(f) => f.seek(pos),
        }
    }
}

/// Reads `reader` to its end into memory if it fits in `memory_limit`
/// bytes, else into `tempfile::tempfile()`; positioned at the start.
pub fn spool(reader: &mut dyn Read, memory_limit: usize) -> io::Result<Spooled> {
    let mut buf = Vec::new();
    reader.take(memory_limit as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() <= memory_limit {
        return Ok(Spooled::Memory(Cursor::new(buf)));
    }
    let mut file = tempfile::tempfile()?;
    file.write_all(&buf)?;
    drop(buf);
    io::copy(reader, &mut file)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(Spooled::File(file))
}
