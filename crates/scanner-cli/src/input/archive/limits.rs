//! The resource limits of one top-level archive and everything nested in it.

/// The deepest nesting [`Limits::max_depth`] may ask for. Every level of
/// nesting is a few frames of the call stack (decoders read through each
/// other): a debug build overflows a 2 MiB thread stack between 100 and 200
/// nested gzip streams, a release build between 200 and 500.
pub const MAX_DEPTH: u32 = 32;

/// The largest zstd window decoded: 128 MiB, the most the reference `zstd`
/// decodes without `--long` or `--memory`. A frame declaring more (made with
/// `--long=31`, or hostile) is skipped
/// ([`ArchiveSkip::WindowTooLarge`](super::ArchiveSkip::WindowTooLarge)): the
/// decoder would hold that much per worker.
pub const MAX_ZSTD_WINDOW: u64 = 128 << 20;

/// Resource limits for one top-level archive and everything nested in it.
/// `Limits::default()` documents the defaults on each field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of member content delivered in total (nested levels count again:
    /// their bytes were expanded twice). Default 1 GiB
    /// (`--archive-max-bytes`). Past it the rest of the top-level archive is
    /// skipped ([`ArchiveSkip::TooLarge`](super::ArchiveSkip::TooLarge)).
    pub max_total_bytes: u64,
    /// The same, for all the archives of a run together
    /// ([`RunBytes`](super::RunBytes)). Default 16 GiB
    /// (`--archive-max-run-bytes`): a minute or two of inflating on a few
    /// cores.
    pub max_run_bytes: u64,
    /// Members (entries of every kind, nested ones included). Default
    /// 100,000 (`--archive-max-members`): the largest real jars have ~50k
    /// entries.
    pub max_members: u64,
    /// Archives open at once: 1 is the top-level archive only, 3 (the
    /// default, `--archive-depth`) reaches `a.zip!lib/b.jar!c.zip!key.txt`.
    /// At most [`MAX_DEPTH`].
    pub max_depth: u32,
    /// A nested zip up to this size is held in memory, beyond it in an
    /// anonymous temp file ([`spool`](super::spool)). Default 8 MiB.
    pub spool_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_total_bytes: 1 << 30,
            max_run_bytes: 16 << 30,
            max_members: 100_000,
            max_depth: 3,
            spool_memory: 8 << 20,
        }
    }
}
