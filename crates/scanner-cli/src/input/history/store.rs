//! The object store: blobs read in-process, through our pack reader or gitoxide.

use super::*;

/// A repository's object database, opened in-process (gitoxide) once and shared by every
/// [`BlobReader`] that reads from it: the pack indexes are mapped and parsed once, whatever
/// the number of workers.
///
/// Opening is lazy (the first reader opens it) so that a path that is not a repository
/// fails on the first read, after `enumerate` has reported the more useful error. The
/// repository is the one git resolves for the path (`git rev-parse --absolute-git-dir`, run
/// with the same isolation as the enumeration), so a subdirectory, a bare repository, a
/// worktree whose `.git` is a file and the inherited environment of a hook are all decided
/// by git, as for the walk; gitoxide then reads that directory with nothing but its own
/// configuration (alternates, a shallow file or a partial clone's promisor settings change
/// nothing about reading an object by id, and no code path here can fetch: the network
/// features are not compiled in).
pub struct ObjectStore {
    repo: PathBuf,
    pub(super) opened: std::sync::OnceLock<OpenResult>,
    /// The repository's packs, read directly ([`crate::input::pack`]); opened with the store.
    packs: std::sync::OnceLock<Arc<crate::input::pack::Packs>>,
    /// The caches of objects read from the packs, for the workers' readers when they share
    /// them ([`BlobReader::with_store`]).
    caches: Arc<std::sync::Mutex<crate::input::pack::Caches>>,
    /// How many workers will read the store ([`ObjectStore::expect_workers`]).
    workers: std::sync::atomic::AtomicUsize,
    /// What must last as long as the store ([`ObjectStore::keep`]).
    kept: std::sync::OnceLock<crate::input::Kept>,
}

/// An object store being opened ([`ObjectStore::opening`]).
pub struct Opening(std::thread::JoinHandle<OpenResult>);

/// What opening a store gave: the repository, or why not (kept, and reported by every read).
type OpenResult = Result<gix::ThreadSafeRepository, (io::ErrorKind, String)>;

impl ObjectStore {
    /// The store for `repo`, not opened yet.
    pub fn new(repo: &Path) -> ObjectStore {
        ObjectStore {
            repo: repo.to_path_buf(),
            opened: std::sync::OnceLock::new(),
            packs: std::sync::OnceLock::new(),
            caches: Default::default(),
            workers: Default::default(),
            kept: std::sync::OnceLock::new(),
        }
    }

    /// Keeps `kept` until the store drops, which is after the last of its blobs is read:
    /// a remote repository's clone (`input/remote.rs`), removed when it drops.
    pub fn keep(&self, kept: crate::input::Kept) {
        if self.kept.set(kept).is_err() {
            unreachable!("a store keeps one thing: its repository's fetch runs once");
        }
    }

    /// Tells the store that `n` workers will read it, before they make their readers: more
    /// than there are cores share one pair of caches ([`BlobReader::with_store`]).
    pub fn expect_workers(&self, n: usize) {
        self.workers.store(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// Opens the store now rather than on the first read; a failure is kept, and every read
    /// reports it.
    pub fn preload(&self) {
        let _ = self.open();
    }

    /// Starts opening the store of the repository that `from` is in, on a thread of its own:
    /// for a caller that can open it before it knows the repository's root (`--staged` runs
    /// its `git` commands side by side). [`ObjectStore::opened`] takes the result.
    ///
    /// Unlike a history's store, this one is the repository git's environment names, as for
    /// the `git diff --cached` that listed the blobs: in a hook of a bare repository with a
    /// separate work tree (`GIT_DIR` and `GIT_WORK_TREE`, as dotfiles are often kept), `from`
    /// alone leads to no repository.
    pub fn opening(from: &Path) -> Opening {
        let mut rev_parse = Command::new("git");
        rev_parse.current_dir(from);
        let from = from.to_path_buf();
        Opening(std::thread::spawn(move || {
            open_with(&from, rev_parse).map_err(|e| (e.kind(), e.to_string()))
        }))
    }

    /// The store of `repo` (named in its errors), opened by [`ObjectStore::opening`] from a
    /// directory of the same repository. A failure is kept, and every read reports it, as
    /// with [`ObjectStore::preload`].
    pub fn opened(repo: &Path, opening: Opening) -> ObjectStore {
        let store = ObjectStore::new(repo);
        let opened = opening.0.join().unwrap_or_else(|_| {
            Err((
                io::ErrorKind::Other,
                "the thread opening the object store panicked".into(),
            ))
        });
        let _ = store.opened.set(opened);
        store
    }

    fn open(&self) -> io::Result<&gix::ThreadSafeRepository> {
        self.opened
            .get_or_init(|| open_result(&self.repo))
            .as_ref()
            .map_err(|(kind, msg)| io::Error::new(*kind, msg.clone()))
    }

    /// The store's packs, opened on first use.
    pub(super) fn packs(&self) -> io::Result<Arc<crate::input::pack::Packs>> {
        let objects = self.open()?.objects_dir();
        Ok(Arc::clone(self.packs.get_or_init(|| {
            Arc::new(crate::input::pack::Packs::open(objects))
        })))
    }

    /// The directory that holds the repository's shared files (`shallow`, `info/grafts`):
    /// the one its objects are in.
    pub(super) fn common_dir(&self) -> io::Result<PathBuf> {
        let objects = self.open()?.objects_dir();
        Ok(objects.parent().unwrap_or(objects).to_path_buf())
    }
}

/// [`open_objects`], its error kept as a store keeps it.
fn open_result(repo: &Path) -> OpenResult {
    open_objects(repo).map_err(|e| (e.kind(), e.to_string()))
}

/// Resolves `repo` with git, refuses SHA-256, opens the git directory with gitoxide.
pub(super) fn open_objects(repo: &Path) -> io::Result<gix::ThreadSafeRepository> {
    open_with(repo, git(repo))
}

/// [`open_objects`], resolving `repo` with the git command `git` (the isolated one of
/// [`git`], or one that keeps git's environment).
fn open_with(repo: &Path, mut git: Command) -> io::Result<gix::ThreadSafeRepository> {
    const REV_PARSE: &str = "git rev-parse --absolute-git-dir";
    let out = git
        .args(["rev-parse", "--absolute-git-dir", "--show-object-format"])
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(classify(repo, REV_PARSE, &out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let (Some(git_dir), Some(format)) = (lines.next(), lines.next()) else {
        return Err(io::Error::other(HistoryError::Protocol {
            repo: repo.to_path_buf(),
            command: REV_PARSE,
            detail: format!("{text:?}"),
        }));
    };
    if format != "sha1" {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            HistoryError::UnsupportedObjectFormat {
                repo: repo.to_path_buf(),
            },
        ));
    }
    // Isolated: neither the environment nor the user's or system's configuration; the
    // repository's own configuration is read, and nothing in it changes how an object is
    // read by id: replace refs are off, as for the git commands (see `git`).
    let options = gix::open::Options::isolated()
        .open_path_as_is(true)
        .config_overrides(["core.useReplaceRefs=false"]);
    gix::open_opts(git_dir, options)
        .map(gix::Repository::into_sync)
        .map_err(|e| {
            io::Error::other(format!(
                "{}: cannot open the object database at {git_dir}: {e}",
                repo.display()
            ))
        })
}

/// Reads blobs by id, in-process, on the calling thread: one per worker thread, so blob
/// decompression runs in parallel, each on a thread-local handle of a shared
/// [`ObjectStore`].
///
/// # Caches
///
/// An object in the repository's packs is read by [`crate::input::pack::PackReader`], which keeps
/// every object a delta chain is rebuilt through, up to [`BlobReader::PACK_CACHE_BYTES`] per
/// reader, and the objects stored whole that chains start from, up to
/// [`BlobReader::WHOLE_CACHE_BYTES`]: blobs come in history order, so consecutive versions
/// of a file share most of their delta chain, and each version is then in the cache or one
/// delta away from it. Any other object (loose, or in an alternate's pack) is read by
/// gitoxide, with its own pack cache of [`BlobReader::PACK_CACHE_BYTES`].
///
/// # Large blobs
///
/// A blob stored whole (a loose object, or a pack entry that is not a delta) can be read as
/// a stream ([`BlobReader::stream`]), which the worker does above the split threshold: a
/// blob of any size then costs a chunk of the chunk reader, never its size. A delta is
/// rebuilt whole; docs/architecture.md, "Memory bound", has what that holds.
pub struct BlobReader {
    store: Arc<ObjectStore>,
    /// Objects in the repository's packs: most of them.
    packed: crate::input::pack::PackReader,
    /// The others (loose objects, alternates).
    repo: gix::Repository,
}

impl BlobReader {
    /// A reader of its own store: for a single reader (staged blobs, tests). Workers share
    /// one store through [`BlobReader::with_store`].
    pub fn new(repo: &Path) -> io::Result<BlobReader> {
        BlobReader::with_store(&Arc::new(ObjectStore::new(repo)))
    }

    /// A worker's reader on `store`, opening it if no reader has yet, with caches of
    /// [`BlobReader::PACK_CACHE_BYTES`] and [`BlobReader::WHOLE_CACHE_BYTES`]: its own,
    /// unless the store expects more workers than there are cores
    /// ([`ObjectStore::expect_workers`]). Then the workers share one pair of caches, capped
    /// at one share a core (`pack::Caches`): no more of them run at once, and each cache
    /// of its own held objects the others had made too, and memory grew with the workers
    /// (moto's history at `--threads 16` on two cores, 4 rounds: peak RSS 368-405 MB
    /// against about 145 MB at `--threads 2`; shared, 241-249 MB, and a quarter less CPU
    /// time). With as many workers as cores, sharing saved nothing: moto at `--threads 2`
    /// took 2.7% more CPU time and peaked 7 MB higher (4 rounds), one reader's versions
    /// pushing out the other's (`docs/performance.md`, "More workers than cores share their
    /// caches").
    pub fn with_store(store: &Arc<ObjectStore>) -> io::Result<BlobReader> {
        use std::sync::atomic::Ordering::Relaxed;
        let (rebuilt, whole) = (BlobReader::PACK_CACHE_BYTES, BlobReader::WHOLE_CACHE_BYTES);
        let packs = store.packs()?;
        let cores = crate::cores();
        let packed = if store.workers.load(Relaxed) > cores {
            crate::input::pack::PackReader::sharing(packs, &store.caches, rebuilt, whole, cores)
        } else {
            crate::input::pack::PackReader::new(packs, rebuilt, whole)
        };
        BlobReader::with_reader(store, packed, rebuilt)
    }

    /// A reader on `store` with caches of its own, holding up to `rebuilt` bytes of objects
    /// rebuilt from deltas (gitoxide's as much) and `whole` bytes of objects stored whole.
    pub fn with_caches(
        store: &Arc<ObjectStore>,
        rebuilt: usize,
        whole: usize,
    ) -> io::Result<BlobReader> {
        let packed = crate::input::pack::PackReader::new(store.packs()?, rebuilt, whole);
        BlobReader::with_reader(store, packed, rebuilt)
    }

    /// A reader on `store` reading packs through `packed`, and other objects through
    /// gitoxide with a pack cache of `rebuilt` bytes.
    fn with_reader(
        store: &Arc<ObjectStore>,
        packed: crate::input::pack::PackReader,
        rebuilt: usize,
    ) -> io::Result<BlobReader> {
        let mut repo = store.open()?.to_thread_local();
        repo.objects.set_pack_cache(move || {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                rebuilt,
            ))
        });
        repo.objects.unset_object_cache();
        Ok(BlobReader {
            store: Arc::clone(store),
            packed,
            repo,
        })
    }

    /// The store this reader reads.
    pub fn store(&self) -> &Arc<ObjectStore> {
        &self.store
    }

    /// Objects rebuilt from packs, cached per reader ([`crate::input::pack`]). Median of 5 runs of
    /// `scanner scan --history` on ripgrep's history, 2 threads, by cache size (measured
    /// when whole objects shared this cache; see [`BlobReader::WHOLE_CACHE_BYTES`]):
    ///
    /// | per reader | wall | user CPU | system CPU | peak RSS |
    /// | --- | --- | --- | --- | --- |
    /// | 1 MiB | 0.46 s | 0.78 s | 0.07 s | 45 MB |
    /// | 4 MiB | 0.39 s | 0.64 s | 0.08 s | 64 MB |
    /// | 8 MiB | 0.36 s | 0.58 s | 0.10 s | 79 MB |
    /// | 16 MiB | 0.39 s | 0.55 s | 0.15 s | 109 MB |
    ///
    /// Past 8 MiB the CPU saved goes to page faults. gitoxide's own pack cache, for what is
    /// read through it, has the same cap.
    ///
    /// This is the most a reader's cache grows to: it starts at
    /// [`REBUILT_START`](crate::input::pack::REBUILT_START), 1 MiB, and doubles when a quarter of
    /// what it rebuilds is what it dropped lately (`pack::DeltaCache`). Every page of cache
    /// costs a page fault the first time it is written, 3-4 µs on these machines (system
    /// time against the count of faults: 8 + 4 MiB per reader faulted 20,800 pages at 2
    /// threads, 4 + 2 MiB 17,400, and system time fell by 10-15 ms), and at 2 threads each
    /// reader has its own cache. Medians of 15 interleaved runs (`taskset -c 0` for one
    /// thread), against a fixed 8 MiB in the same runs:
    ///
    /// | history | 1 thread | 2 threads | where the caches end |
    /// | --- | --- | --- | --- |
    /// | ripgrep | 369 → 361 ms | 218 → 203 ms | 8 MiB at 1 thread, 1-2 MiB at 2 |
    /// | synthetic (7 runs) | 865 → 822 ms | 479 → 459 ms | 1 MiB |
    /// | 1,501 commits of 28 KB files, 50-deep chains (3 runs) | 2.42 → 2.48 s | 1.54 → 1.58 s | 8 MiB |
    ///
    /// At 2 threads on ripgrep the blobs of a delta chain reach one worker together
    /// (`BlobGroups`, `groups.rs`), and 1 MiB holds a chain for its next version; at one
    /// thread the versions of a file are far apart in the walk's order and the cache grows.
    /// A fixed 1 MiB was as fast at 2 threads, but 9% slower at one thread on ripgrep and
    /// 2.2 times slower on the history of 28 KB files, whose chains it could not hold.
    /// (Where the caches end moves with what else changes: at stop 15, ripgrep's readers
    /// stayed at 1 MiB at one thread and at two, and moto's reached 6 MiB at one thread and
    /// stopped at 4 MiB at two; see `pack::DeltaCache` for why.)
    ///
    /// 6 MiB, not 8, since moto's memory (issue 31: 150 MB at `--threads 2`): with
    /// 2 MiB of whole objects ([`BlobReader::WHOLE_CACHE_BYTES`]) and objects of up to
    /// two thirds of a cap kept (`pack::KEPT_SHARE`, which keeps moto's 4 MB files), 4
    /// rounds against 8 + 4 MiB in the same command: peak RSS 130-146 MB against
    /// 153-165 MB, wall 3.43 s against 3.19-3.34 s (the floor 2.89-3.04 s). With half a
    /// cap kept, 6 MiB was 5% slower than 8: moto's 4 MB versions were rebuilt from their
    /// chains every time. On ripgrep's history (hyperfine, 15 runs) 265.7 → 268.1 ms
    /// at one thread and 194.4 → 197.5 ms at two; the synthetic history 460 → 476 ms (10
    /// runs, σ 11-20 ms; with libdeflate kept to entries of 1 KiB or more,
    /// `inflate::MIN_BYTES`, it is back at the time of the build before both, 0.426 against
    /// 0.424 s in 20 interleaved runs).
    pub const PACK_CACHE_BYTES: usize = 6 << 20;

    /// Objects stored whole in packs (the start of every delta chain), cached per reader
    /// apart from the rebuilt ones ([`crate::input::pack`], "Two caches"). On ripgrep's history:
    /// instructions of `scanner scan --history --threads 1` (callgrind), and peak RSS at 2
    /// threads (median of 5), by the two caps (rebuilt + whole):
    ///
    /// | caps | bytes inflated | instructions | peak RSS |
    /// | --- | --- | --- | --- |
    /// | 8 MiB, one cache | 35 MB | 2.81 G | 80 MB |
    /// | 6 + 2 MiB | 23 MB | 2.66 G | |
    /// | 8 + 2 MiB | 22 MB | 2.62 G | |
    /// | 6 + 4 MiB | 20 MB | 2.62 G | 80 MB |
    /// | 8 + 4 MiB | 19 MB | 2.59 G | 89 MB |
    /// | 12 + 4 MiB | 18 MB | 2.52 G | 101 MB |
    ///
    /// With 4 MiB each whole object is inflated once. 2 MiB since moto's memory (see
    /// [`BlobReader::PACK_CACHE_BYTES`]): 8 + 2 against 8 + 4 MiB, 4 rounds on moto, peak
    /// RSS 145-157 MB against 153-165 MB for 1-3% more time; inflating is cheaper since
    /// libdeflate (`input/inflate.rs`).
    pub const WHOLE_CACHE_BYTES: usize = 2 << 20;

    /// The whole blob in `buf` (its previous content replaced), inflated or rebuilt
    /// straight into it (copied only when the reader's cache already holds it). A missing
    /// object is `NotFound`; an object that is not a blob, or one that cannot be decoded, is
    /// `InvalidData`.
    pub fn read_to_vec(&mut self, oid: &Oid, buf: &mut Vec<u8>) -> io::Result<u64> {
        let kind = self.read_object(oid, buf)?;
        self.expect(oid, kind, gix::objs::Kind::Blob)?;
        Ok(buf.len() as u64)
    }

    /// The whole blob `oid`, shared with the reader's pack cache when it keeps it
    /// ([`crate::input::pack::PackReader::read_shared`]): never copied out of the cache.
    /// Errors as for [`BlobReader::read_to_vec`].
    pub fn read_shared(&mut self, oid: &Oid) -> io::Result<Arc<Vec<u8>>> {
        let (kind, data) = match self.packed.read_shared(oid) {
            Ok(Some(found)) => found,
            Err(e) => return Err(self.corrupt(oid, e)),
            Ok(None) => {
                let mut buf = Vec::new();
                let kind = self.read_object(oid, &mut buf)?;
                (kind, Arc::new(buf))
            }
        };
        self.expect(oid, kind, gix::objs::Kind::Blob)?;
        Ok(data)
    }

    /// The blob `oid` as a stream, inflated as it is read, when it is stored whole: a whole
    /// (not delta) entry of the repository's packs, or a loose object. `Ok(None)`: it is
    /// neither (a delta, or in an alternate), or not a blob; read it whole
    /// ([`BlobReader::read_to_vec`]), which also reports what is wrong with it. The stream
    /// holds a 64 KiB read buffer and an inflater, never the blob: a blob of any size is
    /// scanned through the chunk reader in constant memory. It gives exactly the blob's
    /// declared size, or fails naming the object (a truncated or corrupt stream).
    pub fn stream(&mut self, oid: &Oid) -> io::Result<Option<BlobStream>> {
        let blob = gix::objs::Kind::Blob;
        let inner: Box<dyn Read + Send> = match self.packed.stream(oid) {
            Err(e) => return Err(self.corrupt(oid, e)),
            Ok(Some((kind, _, _))) if kind != blob => return Ok(None),
            Ok(Some((_, size, entry))) => {
                return Ok(Some(self.blob_stream(oid, size, Box::new(entry))))
            }
            Ok(None) => match self.loose(oid)? {
                Some(file) => Box::new(file),
                None => return Ok(None),
            },
        };
        // A loose object: "blob <size>\0", then the blob, all in one zlib stream.
        let mut inflated =
            flate2::bufread::ZlibDecoder::new(BufReader::with_capacity(64 << 10, inner));
        let mut header = Vec::with_capacity(32);
        let mut byte = [0u8];
        while header.len() < 32 {
            match inflated.read(&mut byte) {
                Ok(0) => break,
                Ok(_) if byte[0] == 0 => {
                    let size = header
                        .strip_prefix(b"blob ")
                        .and_then(|n| std::str::from_utf8(n).ok())
                        .and_then(|n| n.parse::<u64>().ok());
                    // Another kind, or a header that does not parse: the whole read says what.
                    return Ok(size.map(|size| self.blob_stream(oid, size, Box::new(inflated))));
                }
                Ok(_) => header.push(byte[0]),
                Err(e) => return Err(self.corrupt(oid, e)),
            }
        }
        Ok(None)
    }

    /// `oid`'s loose object file, open, if there is one.
    fn loose(&self, oid: &Oid) -> io::Result<Option<std::fs::File>> {
        let hex = oid.to_string();
        let path = self
            .store
            .open()?
            .objects_dir()
            .join(&hex[..2])
            .join(&hex[2..]);
        match std::fs::File::open(path) {
            Ok(file) => Ok(Some(file)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.corrupt(oid, e)),
        }
    }

    fn blob_stream(&self, oid: &Oid, size: u64, inner: Box<dyn Read + Send>) -> BlobStream {
        BlobStream {
            inner,
            left: size,
            size,
            oid: *oid,
            repo: self.store.repo.clone(),
        }
    }

    /// Any object (a commit or a tree for the walk, [`crate::input::commits`]) in `buf`, as for
    /// [`BlobReader::read_to_vec`]; its kind.
    pub fn read_object(&mut self, oid: &Oid, buf: &mut Vec<u8>) -> io::Result<gix::objs::Kind> {
        match self.packed.read(oid, buf) {
            Ok(Some(kind)) => return Ok(kind),
            Err(e) => return Err(self.corrupt(oid, e)),
            Ok(None) => {}
        }
        let (start, len, kind) = {
            let (data, kind) = self.find(oid, buf)?;
            (data.as_ptr() as usize, data.len(), kind)
        };
        // gitoxide resolves a delta chain in `buf` and leaves the result at its front (a
        // loose or undeltified object is inflated there directly): nothing to move. Were it
        // ever lent from elsewhere, it is decoded again and copied.
        if start != buf.as_ptr() as usize || len > buf.len() {
            let mut other = Vec::new();
            *buf = self.find(oid, &mut other)?.0.to_vec();
        }
        buf.truncate(len);
        Ok(kind)
    }

    /// The blob `oid`, shared with the reader's cache when it holds it ([`BlobReader::read_shared`]):
    /// for reading a version's base, which is often the version read just before. `None` when
    /// it is not in the cache and larger than `max_len` (by its header): a base that large is
    /// not read whole (see the worker's `with_base`). Errors as for [`BlobReader::read_to_vec`].
    pub fn read_base(&mut self, oid: &Oid, max_len: u64) -> io::Result<Option<Arc<Vec<u8>>>> {
        if !self.packed.is_cached(oid) && self.header(oid)?.1 > max_len {
            return Ok(None);
        }
        self.read_shared(oid).map(Some)
    }

    /// Looks `oid` up, with `buf` as the store's scratch; the object's content and kind.
    fn find<'a>(&self, oid: &Oid, buf: &'a mut Vec<u8>) -> io::Result<(&'a [u8], gix::objs::Kind)> {
        use gix::prelude::Find;
        let id = oid.as_gix();
        let found = self
            .repo
            .objects
            .try_find(id, buf)
            .map_err(|e| self.corrupt(oid, e))?;
        let Some(data) = found else {
            return Err(self.missing(oid));
        };
        Ok((data.data, data.kind))
    }

    /// Where `oid`'s delta chain starts ([`crate::input::pack::PackReader::chain_start`]): blobs
    /// with the same start are rebuilt through one another. `None` when it is not packed.
    pub fn chain_start(&mut self, oid: &Oid) -> Option<u64> {
        self.packed.chain_start(oid)
    }

    /// The size of `oid` and, unless it is packed as a delta, its kind, without reading it:
    /// for the walk, which sizes each blob it yields ([`crate::input::pack::PackReader::header`]).
    /// Errors as for [`BlobReader::read_to_vec`].
    pub fn header(&mut self, oid: &Oid) -> io::Result<(Option<gix::objs::Kind>, u64)> {
        use gix::prelude::Header;
        match self.packed.header(oid) {
            Ok(Some(header)) => return Ok(header),
            Err(e) => return Err(self.corrupt(oid, e)),
            Ok(None) => {}
        }
        match self.repo.objects.try_header(oid.as_gix()) {
            Ok(Some(header)) => Ok((Some(header.kind()), header.size())),
            Ok(None) => Err(self.missing(oid)),
            Err(e) => Err(self.corrupt(oid, e)),
        }
    }

    /// `oid` is in none of the repository's object stores.
    fn missing(&self, oid: &Oid) -> io::Error {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{}: object {oid} is missing (in a partial clone, fetch it first: scanning \
                 never goes to the network), or the repository is corrupt",
                self.store.repo.display()
            ),
        )
    }

    /// `oid`, read as a `kind`, must be a `want`.
    pub fn expect(
        &self,
        oid: &Oid,
        kind: gix::objs::Kind,
        want: gix::objs::Kind,
    ) -> io::Result<()> {
        if kind == want {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: object {oid} is a {kind}, not a {want}",
                self.store.repo.display()
            ),
        ))
    }

    /// `oid` could not be decoded: `why`.
    fn corrupt(&self, oid: &Oid, why: impl fmt::Display) -> io::Error {
        corrupt(&self.store.repo, oid, why)
    }
}

/// `oid` in `repo` could not be decoded: `why`.
pub(super) fn corrupt(repo: &Path, oid: &Oid, why: impl fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{}: object {oid} is corrupt or unreadable: {why}",
            repo.display()
        ),
    )
}

/// A blob read as a stream ([`BlobReader::stream`]): exactly `size` bytes, or an error that
/// names the object, as a whole read's would.
pub struct BlobStream {
    inner: Box<dyn Read + Send>,
    left: u64,
    size: u64,
    oid: Oid,
    repo: PathBuf,
}

impl BlobStream {
    /// The blob's size, as its header declares it.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Read for BlobStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = match self.inner.read(&mut buf[..want]) {
            Ok(0) => Err(format!(
                "its data ends {} bytes short of its declared {} bytes",
                self.left, self.size
            )),
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
            Err(e) => Err(e.to_string()),
        };
        let n = n.map_err(|why| corrupt(&self.repo, &self.oid, why))?;
        self.left -= n as u64;
        Ok(n)
    }
}
