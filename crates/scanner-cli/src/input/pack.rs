//! Reading objects straight from a repository's pack files, keeping every
//! object a delta chain is rebuilt through.
//!
//! # Why not gitoxide's decoder alone
//!
//! Git packs the newest version of a file whole and each older version as a
//! delta against a newer one (`git verify-pack -v` on ripgrep's pack: the
//! first `Cargo.lock` is 7 deltas deep, and each later version one step
//! nearer the whole object). A history scan reads versions oldest first, so
//! each read starts at the deep end of a chain. gitoxide's decoder caches
//! only the object it was asked for: the next version, one step up the same
//! chain, is not in its cache, and is rebuilt from the whole object again,
//! every delta in between inflated again. Here, as in git's own delta base
//! cache, every object a chain passes through is kept (`DeltaCache`): the
//! first version of a file pays for its chain once, and each later version is
//! then in the cache or one delta away from it.
//!
//! # Two caches
//!
//! Getting an object back once it has left the cache costs very different
//! amounts: a rebuilt object whose base is still kept costs one delta (a
//! small inflate and copies), a whole object costs inflating all of it. In
//! one least-recently-used cache, the many rebuilt versions of a file pushed
//! out the whole object their chain starts from, and every later rebuild
//! started by inflating it again: reading ripgrep's history inflated 25 MB of
//! whole objects whose blobs hold 9.8 MB (2.6 times), 35 MB in all. So whole
//! objects have a cache of their own (`PackReader::whole`), and with 4 MiB
//! there each is inflated once: 19 MB in all, and 8% fewer instructions for
//! the whole scan (callgrind, one thread: 2.81 G before, 2.59 G after). It
//! has 2 MiB since moto's memory goal (`BlobReader::WHOLE_CACHE_BYTES`).
//!
//! # Scope
//!
//! [`Packs`] holds the repository's own packs (`objects/pack/*.idx` and their
//! `.pack`). An object that is not in them (a loose object, one reached
//! through alternates), or whose delta base is named by id and lies in no
//! pack of ours, is `Ok(None)` from [`PackReader::read`]: the caller reads it
//! through gitoxide, which knows every kind of object store. A pack that
//! cannot be opened is left out the same way, and gitoxide reports what is
//! wrong with it when one of its objects is read.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gix::odb::pack::data::{self, entry::Header};
use gix::odb::pack::index;

use super::history::Oid;

/// The repository's packs, opened once and shared by every reader.
///
/// # Memory
///
/// A pack is mapped, and every page of the mapping a reader has touched
/// counts in the process's resident memory until it is unmapped: a history
/// scan reads nearly all of its pack, so the mapping alone came to the
/// pack's size (102 MB of the 285 MB peak on moto's history, `docs/performance.md`).
/// So once the readers have read [`RELEASE_BYTES`] from the packs, the
/// pages they touched are handed back ([`Packs::read_from`]:
/// `madvise(MADV_DONTNEED)`). An entry's header read counts as a page
/// ([`HEADER_READ_BYTES`]): the walk sizes every blob and follows every
/// delta chain to its start by headers alone, scattered over the whole
/// pack, and counting only the bytes inflated left 40 MB of the pack
/// resident at the peak on moto, against 2-6 MB now.
///
/// The mappings are read-only and never written, so a page handed back is
/// read again from the file (the page cache, most often) when next
/// touched, as after the kernel evicted it: what a reader sees never
/// changes.
pub struct Packs {
    packs: Vec<(index::File, data::File)>,
    /// Bytes read from the packs since their pages were last handed back.
    read: AtomicU64,
    /// The smallest pack whose pages are handed back ([`RELEASE_MIN_PACK`]).
    release_min: u64,
}

/// How many bytes of the packs are read between two releases of their
/// pages ([`Packs`], "Memory"): about what the mappings add to the
/// resident memory at most. A release costs the page faults that read back
/// the pages touched again (minor faults: the pages stay in the page cache).
/// 16 MiB, with headers not counted, left 40 MB resident at moto's peak.
const RELEASE_BYTES: u64 = 4 << 20;

/// The smallest pack whose pages are handed back ([`Packs`], "Memory"): a
/// smaller one adds at most its size to the resident memory, and handing it
/// back every [`RELEASE_BYTES`] only costs faults: ripgrep's history (a
/// 9 MB pack, its headers read tens of thousands of times) took 5% more
/// wall time with its pages handed back (249.9 against 237.8 ms, hyperfine
/// `-r 30`, `--threads 2`).
const RELEASE_MIN_PACK: u64 = 32 << 20;

/// What reading an entry's header counts for in [`RELEASE_BYTES`]: the
/// page it maps (the kernel maps up to 16 around it, from the page cache,
/// but one page is the least a scattered read leaves resident).
const HEADER_READ_BYTES: u64 = 4 << 10;

impl Packs {
    /// Opens every pack under `objects_dir/pack` whose index and data both
    /// open; the largest first, where most objects are.
    pub fn open(objects_dir: &Path) -> Packs {
        let kind = gix::hash::Kind::Sha1;
        let mut packs: Vec<(index::File, data::File)> = std::fs::read_dir(objects_dir.join("pack"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .filter_map(|idx| {
                let index = index::File::at(&idx, kind).ok()?;
                let data = data::File::at(idx.with_extension("pack"), kind).ok()?;
                (index.num_objects() == data.num_objects()).then_some((index, data))
            })
            .collect();
        packs.sort_by_key(|(_, d)| std::cmp::Reverse(d.data_len()));
        Packs {
            packs,
            read: AtomicU64::new(0),
            release_min: RELEASE_MIN_PACK,
        }
    }

    /// Counts `bytes` read from the packs' mappings, and hands their pages
    /// back to the kernel every [`RELEASE_BYTES`] (the type's "Memory").
    fn read_from(&self, bytes: u64) {
        let before = self.read.fetch_add(bytes, Ordering::Relaxed);
        if before / RELEASE_BYTES != (before + bytes) / RELEASE_BYTES {
            for (_, pack) in &self.packs {
                if pack.data_len() as u64 >= self.release_min {
                    release(pack);
                }
            }
        }
    }

    /// The objects at the front of each pack, up to its first tree or blob
    /// stored whole, in the packs' order: where git's pack-objects writes
    /// the commits and tags it packs, before every tree and blob (its
    /// `compute_write_order`). So nearly every commit of a repository is
    /// here, and few objects that are not commits: on moto's pack, 19,861
    /// of its 19,934 commits and 2 tags, before 23,742 trees. Deltas among
    /// them are listed too (a commit may be stored as a delta against
    /// another); what kind they are is known once they are read.
    pub fn leading_objects(&self) -> Vec<Oid> {
        let mut leading = Vec::new();
        for (index, pack) in &self.packs {
            let positions: Box<dyn Iterator<Item = u32>> = match reverse_index(index) {
                Some(rev) => Box::new(rev),
                None => {
                    let mut entries: Vec<(u64, u32)> = (0..index.num_objects())
                        .map(|i| (index.pack_offset_at_index(i), i))
                        .collect();
                    entries.sort_unstable();
                    Box::new(entries.into_iter().map(|(_, i)| i))
                }
            };
            let mut end = 0;
            for i in positions {
                if i >= index.num_objects() {
                    break;
                }
                end = index.pack_offset_at_index(i);
                let Ok(entry) = pack.entry(end) else { break };
                let Ok(id) = <[u8; 20]>::try_from(index.oid_at_index(i).as_bytes()) else {
                    break;
                };
                if matches!(entry.header, Header::Tree | Header::Blob) {
                    break;
                }
                leading.push(Oid(id));
            }
            // The headers read are the front of the pack, every page of it.
            self.read_from(end);
        }
        leading
    }

    /// The pack holding `oid` and the object's offset in it.
    fn locate(&self, oid: &gix::oid) -> Option<(usize, u64)> {
        self.packs.iter().enumerate().find_map(|(p, (index, _))| {
            let i = index.lookup(oid)?;
            Some((p, index.pack_offset_at_index(i)))
        })
    }
}

/// The positions in `index` of its pack's objects in the pack's order, read from the pack's
/// reverse index (`pack-*.rev`, written by git since 2.31, by default since 2.41) as they
/// are asked for: no sort of every offset (5 ms and 2 MB for moto's 133,000 objects).
/// `None` without a valid one.
fn reverse_index(index: &index::File) -> Option<impl Iterator<Item = u32>> {
    use std::io::Read;
    let path = index.path().with_extension("rev");
    let file = std::fs::File::open(path).ok()?;
    let objects = u64::from(index.num_objects());
    // "RIDX", version 1, SHA-1; the positions; the pack's and the file's checksums.
    if file.metadata().ok()?.len() != 12 + 4 * objects + 40 {
        return None;
    }
    let mut file = std::io::BufReader::with_capacity(16 << 10, file);
    let mut header = [0u8; 12];
    file.read_exact(&mut header).ok()?;
    if header != *b"RIDX\0\0\0\x01\0\0\0\x01" {
        return None;
    }
    Some((0..objects).map_while(move |_| {
        let mut position = [0u8; 4];
        file.read_exact(&mut position).ok()?;
        Some(u32::from_be_bytes(position))
    }))
}

/// Hands back to the kernel the pages of `pack`'s mapping (see [`Packs`],
/// "Memory"). Elsewhere than on Linux, where `MADV_DONTNEED` may drop the
/// pages' content, nothing.
fn release(pack: &data::File) {
    #[cfg(target_os = "linux")]
    if let Some(all) = pack.entry_slice(0..pack.data_len() as u64) {
        // SAFETY: `all` is the whole read-only mapping gitoxide made of the
        // file (private, never written): on Linux MADV_DONTNEED only unmaps
        // its pages, which are read again from the file when next touched,
        // with the same content. Nothing is freed or moved. The mapping
        // starts on a page (mmap), and madvise rounds the length up.
        unsafe {
            libc::madvise(
                all.as_ptr() as *mut libc::c_void,
                all.len(),
                libc::MADV_DONTNEED,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pack;
}

/// Where [`PackReader`]'s caches hold an object: which, and (pack, offset).
#[derive(Clone, Copy)]
pub struct CacheKey(Tier, (usize, u64));

/// [`PackReader`]'s two caches.
#[derive(Clone, Copy)]
enum Tier {
    /// Objects rebuilt from a delta.
    Rebuilt,
    /// Objects stored whole, as inflated.
    Whole,
}

/// The object a delta is applied to.
enum Base {
    /// Just made; kept in that cache once used.
    Held(Vec<u8>, Tier),
    /// In that cache, at the current offset.
    Kept(Tier),
}

/// What an object is: blob, tree, commit or tag.
pub type Kind = gix::objs::Kind;

/// An object's bytes, shared by a reader's cache and the reader's caller
/// ([`PackReader::read_shared`]).
pub type Shared = Arc<Vec<u8>>;

/// Reads objects from [`Packs`] for one thread, with its own caches.
pub struct PackReader {
    packs: Arc<Packs>,
    /// Objects rebuilt from deltas.
    rebuilt: DeltaCache,
    /// Objects stored whole: the start of every chain. Kept apart because
    /// getting one back costs inflating all of it, where a rebuilt object
    /// whose base is kept costs a delta: in one cache, the rebuilt versions
    /// pushed the whole ones out, and the ripgrep history inflated 2.6
    /// times the bytes of its whole blobs (the module's "Two caches").
    whole: DeltaCache,
    /// Inflates whole entries of `libdeflate_from` bytes or more
    /// ([`PackReader::inflate`]).
    inflater: super::inflate::Inflater,
    /// [`inflate::MIN_BYTES`](super::inflate::MIN_BYTES), unless
    /// [`PackReader::libdeflate_from`] set it.
    libdeflate_from: usize,
    /// Inflates smaller entries, and the first bytes of a delta for its
    /// sizes ([`PackReader::header`]).
    inflate: gix::zlib::Inflate,
    /// The deltas of the chain being resolved, target first.
    chain: Vec<data::Entry>,
    /// One delta's instructions, inflated.
    delta: Vec<u8>,
    /// [`PackReader::chain_start`]'s answers, for every object a chain it
    /// followed passes through, by [`chain_key`]; emptied past
    /// [`STARTS_KEPT`] entries.
    starts: HashMap<u64, u64, BuildHasherDefault<KeyHasher>>,
    /// The offsets the chain being followed passed through.
    passed: Vec<u64>,
    /// The last object [`PackReader::located`] looked up, and where it is.
    last_located: Option<(Oid, Option<(usize, u64)>)>,
}

/// How many chain starts [`PackReader::chain_start`] remembers (17 bytes
/// each, in a table at most 7/8 full): enough for the delta chains of the
/// blobs a walk sizes in a row, bounded whatever the size of the history.
/// Forgetting costs reading entry headers again, never a wrong answer.
const STARTS_KEPT: usize = 1 << 18;

/// The longest delta chain followed: git's own default depth is 50, and
/// `--depth` tops out at 4095. Longer is a corrupt (cyclic) pack.
const MAX_CHAIN: usize = 10_000;

impl PackReader {
    /// A reader of `packs` keeping up to `rebuilt_bytes` of objects rebuilt
    /// from deltas (from [`REBUILT_START`], grown as it proves too small)
    /// and `whole_bytes` of objects stored whole.
    pub fn new(packs: Arc<Packs>, rebuilt_bytes: usize, whole_bytes: usize) -> PackReader {
        PackReader {
            packs,
            rebuilt: DeltaCache::growing(REBUILT_START.min(rebuilt_bytes), rebuilt_bytes),
            whole: DeltaCache::new(whole_bytes),
            inflater: Default::default(),
            libdeflate_from: super::inflate::MIN_BYTES,
            inflate: Default::default(),
            chain: Vec::new(),
            delta: Vec::new(),
            starts: HashMap::default(),
            passed: Vec::new(),
            last_located: None,
        }
    }

    /// The reader, inflating whole entries of `bytes` or more with libdeflate
    /// and smaller ones with zlib-rs. For reading commits (0): zlib-rs builds
    /// its tables for each stream, and reading and parsing moto's 19,863
    /// commits at the front of its pack on one thread took 116 ms with
    /// libdeflate against 131 ms.
    pub fn libdeflate_from(mut self, bytes: usize) -> PackReader {
        self.libdeflate_from = bytes;
        self
    }

    /// Reads `oid` into `out` (its previous content replaced) and returns its
    /// kind. `Ok(None)`: not readable from these packs (see the module's
    /// "Scope"), `out` unspecified. `Err`: the pack is corrupt, described.
    pub fn read(&mut self, oid: &Oid, out: &mut Vec<u8>) -> Result<Option<Kind>, String> {
        let Some((kind, shared)) = self.read_shared(oid)? else {
            return Ok(None);
        };
        match Arc::try_unwrap(shared) {
            Ok(whole) => *out = whole,
            Err(kept) => emptied(out, kept.len()).extend_from_slice(&kept),
        }
        Ok(Some(kind))
    }

    /// `oid` and its kind, as for [`PackReader::read`], shared with the
    /// cache that keeps it rather than copied out of it: a blob rebuilt from
    /// a delta is made once, scanned from the allocation the cache holds,
    /// and freed (or its buffer reused) once both have let it go. Copying
    /// each target into the cache made about a third of moto's large
    /// blocks and 12 MB of the heap's peak (`docs/performance.md`).
    pub fn read_shared(&mut self, oid: &Oid) -> Result<Option<(Kind, Shared)>, String> {
        let Some((p, offset)) = self.packs.locate(oid.as_gix()) else {
            return Ok(None);
        };
        let packs = Arc::clone(&self.packs);
        let (index, pack) = &packs.packs[p];
        // Down the chain to an object kept or stored whole.
        self.chain.clear();
        let mut at = offset;
        let (kind, mut base) = loop {
            if let Some((tier, kind)) = self.kept((p, at)) {
                break (kind, Base::Kept(tier));
            }
            let entry = pack.entry(at).map_err(|e| e.to_string())?;
            packs.read_from(HEADER_READ_BYTES);
            at = match below(index, &entry)? {
                Below::Delta(base) => base,
                Below::Elsewhere => return Ok(None),
                Below::Whole(kind) => {
                    let mut buf = self.whole.spare();
                    self.inflate(pack, &entry, &mut buf)?;
                    break (kind, Base::Held(buf, Tier::Whole));
                }
            };
            self.chain.push(entry);
            if self.chain.len() > MAX_CHAIN {
                return Err(format!("a delta chain longer than {MAX_CHAIN} (a cycle?)"));
            }
        };
        // Up the chain: each delta applied to the object below it, which is
        // then kept. (Held here, not borrowed from a cache: an object too
        // large for the caches is not kept there.)
        while let Some(entry) = self.chain.pop() {
            let mut delta = std::mem::take(&mut self.delta);
            let inflated = self.inflate(pack, &entry, &mut delta);
            self.delta = delta;
            inflated?;
            let target = self.chain.is_empty();
            let mut buf = self.rebuilt.spare();
            let applied = match &base {
                Base::Held(held, _) => apply(held, &self.delta, &mut buf),
                Base::Kept(Tier::Rebuilt) => {
                    apply(self.rebuilt.get((p, at)), &self.delta, &mut buf)
                }
                Base::Kept(Tier::Whole) => apply(self.whole.get((p, at)), &self.delta, &mut buf),
            };
            if let Base::Held(held, tier) = base {
                self.keep(tier, (p, at), held, kind);
            }
            if target {
                // The instructions of a large delta are not kept for the next
                // one: the blob they made is held while it is scanned.
                if self.delta.capacity() > self.rebuilt.max_cap {
                    self.delta = Vec::new();
                }
                applied?;
                let shared = Arc::new(fitted(buf));
                self.rebuilt.put_shared((p, offset), &shared, kind);
                return Ok(Some((kind, shared)));
            }
            applied?;
            (at, base) = (entry.pack_offset(), Base::Held(buf, Tier::Rebuilt));
        }
        // The target itself: kept, or stored whole and just inflated.
        let shared = match base {
            Base::Held(held, tier) => {
                let shared = Arc::new(fitted(held));
                self.cache_for(tier, shared.len())
                    .put_shared((p, at), &shared, kind);
                shared
            }
            Base::Kept(tier) => self.tier(tier).get_shared((p, at)),
        };
        Ok(Some((kind, shared)))
    }

    /// `oid` as a stream inflated as it is read, with its kind and size,
    /// when it is stored whole in these packs. `Ok(None)`: a delta (rebuilt
    /// only whole, by [`PackReader::read`]), or not in these packs.
    pub fn stream(&mut self, oid: &Oid) -> Result<Option<(Kind, u64, EntryStream)>, String> {
        let Some((p, offset)) = self.located(oid) else {
            return Ok(None);
        };
        let pack = &self.packs.packs[p].1;
        let entry = pack.entry(offset).map_err(|e| e.to_string())?;
        let Some(kind) = entry.header.as_kind() else {
            return Ok(None);
        };
        let stream = EntryStream {
            packs: Arc::clone(&self.packs),
            pack: p,
            at: entry.data_offset,
            inflate: flate2::Decompress::new(true),
        };
        Ok(Some((kind, entry.decompressed_size, stream)))
    }

    /// The size of `oid` and, unless it is stored as a delta, its kind,
    /// without rebuilding it: the size is in the entry's header, or for a
    /// delta in the first bytes of its instructions (the size it rebuilds
    /// to). A delta's kind is its chain's, known once it is read.
    /// `Ok(None)` and `Err` as for [`PackReader::read`].
    pub fn header(&mut self, oid: &Oid) -> Result<Option<(Option<Kind>, u64)>, String> {
        let Some((p, offset)) = self.located(oid) else {
            return Ok(None);
        };
        let pack = &self.packs.packs[p].1;
        let entry = pack.entry(offset).map_err(|e| e.to_string())?;
        self.packs.read_from(HEADER_READ_BYTES);
        if let Some(kind) = entry.header.as_kind() {
            return Ok(Some((Some(kind), entry.decompressed_size)));
        }
        // The two sizes take at most 20 bytes; their compressed form, after a
        // block header of at most about 600 bytes, fits within 1 KiB.
        let start = entry.data_offset;
        let end = (start + 1024).min(pack.pack_end() as u64);
        let input = pack.entry_slice(start..end).ok_or(TRUNCATED)?;
        let mut head = [0u8; 20];
        let want = head.len().min(entry.decompressed_size as usize);
        self.inflate.reset();
        let (_, _, written) = self
            .inflate
            .once(input, &mut head[..want])
            .map_err(|e| e.to_string())?;
        let mut at = 0;
        let sizes = delta_size(&head[..written], &mut at)
            .and_then(|_base| delta_size(&head[..written], &mut at));
        let size = sizes.ok_or(CORRUPT_DELTA)?;
        Ok(Some((None, size as u64)))
    }

    /// Where `oid`'s delta chain starts: the pack and offset of the object
    /// stored whole that it is rebuilt from (its own, if it is stored
    /// whole), found from entry headers alone, as one number
    /// (`chain_key`). Objects with the same start are rebuilt through one
    /// another, so one reader reading them in order keeps rebuilding from
    /// its caches. `None` when `oid` is not in these packs, or its chain is
    /// broken or leaves them.
    pub fn chain_start(&mut self, oid: &Oid) -> Option<u64> {
        let (p, offset) = self.located(oid)?;
        let (index, pack) = &self.packs.packs[p];
        let mut at = offset;
        let mut passed = std::mem::take(&mut self.passed);
        passed.clear();
        let start = loop {
            if let Some(&start) = self.starts.get(&chain_key(p, at)) {
                break start;
            }
            let entry = pack.entry(at).ok()?;
            self.packs.read_from(HEADER_READ_BYTES);
            let base = match below(index, &entry).ok()? {
                Below::Delta(base) => base,
                Below::Elsewhere => return None,
                Below::Whole(_) => break chain_key(p, at),
            };
            passed.push(at);
            if passed.len() > MAX_CHAIN {
                return None;
            }
            at = base;
        };
        if self.starts.len() + passed.len() > STARTS_KEPT {
            self.starts.clear();
        }
        for &at in &passed {
            self.starts.insert(chain_key(p, at), start);
        }
        self.passed = passed;
        Some(start)
    }

    /// Where `oid` is in the packs, remembered for the next call: the walk
    /// asks for a blob's header, then for its chain's start.
    fn located(&mut self, oid: &Oid) -> Option<(usize, u64)> {
        match self.last_located {
            Some((last, at)) if last == *oid => at,
            _ => {
                let at = self.packs.locate(oid.as_gix());
                self.last_located = Some((*oid, at));
                at
            }
        }
    }

    fn tier(&mut self, tier: Tier) -> &mut DeltaCache {
        match tier {
            Tier::Rebuilt => &mut self.rebuilt,
            Tier::Whole => &mut self.whole,
        }
    }

    /// The cache holding the object at `key`, if one does, and its kind.
    fn kept(&self, key: (usize, u64)) -> Option<(Tier, Kind)> {
        [(Tier::Rebuilt, &self.rebuilt), (Tier::Whole, &self.whole)]
            .into_iter()
            .find_map(|(tier, cache)| Some((tier, cache.kind(key)?)))
    }

    /// Keeps `data` in `tier`; a whole object too large for its own cache
    /// goes with the rebuilt ones (where it was before there were two).
    fn keep(&mut self, tier: Tier, key: (usize, u64), data: Vec<u8>, kind: Kind) {
        self.cache_for(tier, data.len()).put(key, data, kind);
    }

    /// The cache an object of `tier` and `len` bytes goes to: a whole one
    /// too large for its cache goes to the rebuilt one.
    fn cache_for(&mut self, tier: Tier, len: usize) -> &mut DeltaCache {
        match tier {
            Tier::Whole if self.whole.keeps(len) => &mut self.whole,
            _ => &mut self.rebuilt,
        }
    }

    /// Where the caches hold the blob `oid`, for [`PackReader::cached`].
    pub fn cached_key(&self, oid: &Oid) -> Option<CacheKey> {
        let key = self.packs.locate(oid.as_gix())?;
        let (tier, kind) = self.kept(key)?;
        (kind == Kind::Blob).then_some(CacheKey(tier, key))
    }

    /// The object at `key`, from [`PackReader::cached_key`] since the last read.
    pub fn cached(&mut self, key: CacheKey) -> &[u8] {
        self.tier(key.0).get(key.1)
    }

    /// Inflates `entry`'s data (a whole object, or a delta's instructions)
    /// into `buf`, sized by its header.
    fn inflate(
        &mut self,
        pack: &data::File,
        entry: &data::Entry,
        buf: &mut Vec<u8>,
    ) -> Result<(), String> {
        // Deflate expands at most about 1032:1.
        let size = usize::try_from(entry.decompressed_size)
            .ok()
            .filter(|&n| n <= pack.data_len().saturating_mul(1032))
            .ok_or("an object larger than its pack could hold")?;
        // Only bytes past `buf`'s old length are zeroed: the inflater fails
        // a stream that does not write exactly `size` bytes, so none of the
        // old ones survive a success.
        // Zeroing it all was about 1% of a history scan's instructions.
        if buf.capacity() < size {
            emptied(buf, size);
        }
        buf.resize(size, 0);
        let read = if size >= self.libdeflate_from {
            let input = pack
                .entry_slice(entry.data_offset..pack.pack_end() as u64)
                .ok_or(TRUNCATED)?;
            self.inflater.inflate(input, buf)?
        } else {
            pack.decompress_entry(entry, &mut self.inflate, buf)
                .map_err(|e| e.to_string())?
        };
        self.packs.read_from(read as u64);
        Ok(())
    }
}

/// An object stored whole in a pack, inflated as it is read
/// ([`PackReader::stream`]): a large blob is scanned through the chunk
/// reader without ever being held whole. Holds the inflater's state (about
/// 40 KiB) and reads the pack's mapping from where the object's compressed
/// data goes on.
pub struct EntryStream {
    packs: Arc<Packs>,
    pack: usize,
    /// The pack offset of the next compressed byte.
    at: u64,
    inflate: flate2::Decompress,
}

impl std::io::Read for EntryStream {
    /// Ends where the zlib stream ends: [`BlobStream`](super::history::BlobStream) checks
    /// that it gave the declared size.
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
        let pack = &self.packs.packs[self.pack].1;
        let end = pack.pack_end() as u64;
        loop {
            let input = pack
                .entry_slice(self.at..end)
                .ok_or_else(|| invalid(TRUNCATED.into()))?;
            let (read, written) = (self.inflate.total_in(), self.inflate.total_out());
            let status = self
                .inflate
                .decompress(input, out, flate2::FlushDecompress::None)
                .map_err(|e| invalid(e.to_string()))?;
            let consumed = self.inflate.total_in() - read;
            let produced = (self.inflate.total_out() - written) as usize;
            self.at += consumed;
            self.packs.read_from(consumed);
            if produced > 0 || status == flate2::Status::StreamEnd || out.is_empty() {
                return Ok(produced);
            }
            if consumed == 0 {
                return Err(invalid(TRUNCATED.into()));
            }
        }
    }
}

/// What an entry's header says its object is rebuilt from.
enum Below {
    /// Nothing: it is stored whole, of this kind.
    Whole(Kind),
    /// The object at this offset of the same pack (a delta).
    Delta(u64),
    /// An object named by id that is not in this pack: left to the caller
    /// (the module's "Scope").
    Elsewhere,
}

/// The step down a delta chain from `entry`, in `index`'s pack. `Err`: an
/// offset delta whose base would lie before the pack's start.
fn below(index: &index::File, entry: &data::Entry) -> Result<Below, &'static str> {
    Ok(match entry.header {
        Header::OfsDelta { base_distance } => Below::Delta(
            entry
                .checked_base_pack_offset(base_distance)
                .ok_or("a delta's base lies before the pack's start")?,
        ),
        Header::RefDelta { base_id } => match index.lookup(base_id) {
            Some(i) => Below::Delta(index.pack_offset_at_index(i)),
            None => Below::Elsewhere,
        },
        header => Below::Whole(header.as_kind().expect("not a delta")),
    })
}

/// An object's pack and offset as one number: packs are far fewer than
/// 2^16, and offsets far below 2^48 (were they not, two chains could share
/// a start, which only groups them together).
fn chain_key(pack: usize, offset: u64) -> u64 {
    ((pack as u64) << 48) ^ offset
}

/// `buf` emptied, with room for `len` bytes. A buffer too small is replaced,
/// not grown: growing copies its old bytes (realloc knows the capacity, not
/// the length), bytes about to be overwritten. realloc was 2.5% of the
/// instructions of a history scan of ripgrep (callgrind, one thread); with
/// this, and the zeroing in `inflate` skipped, the scan executes 1.4% fewer.
fn emptied(buf: &mut Vec<u8>, len: usize) -> &mut Vec<u8> {
    if buf.capacity() < len {
        *buf = Vec::with_capacity(len);
    }
    buf.clear();
    buf
}

/// `buf` shrunk when it is much larger than its object. Buffers are reused
/// (a cache's spare), so a small object may arrive in a large one: kept as
/// they came, the caches of ripgrep's history held blocks of twice their
/// cap (16 MB in the 8 MiB one), and the scan's peak RSS was 91 MB rather
/// than 85. glibc shrinks a heap block in place.
fn fitted(mut buf: Vec<u8>) -> Vec<u8> {
    if buf.capacity() > 2 * buf.len() + 4096 {
        buf.shrink_to_fit();
    }
    buf
}

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
fn apply(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
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

const CORRUPT_DELTA: &str = "a corrupt delta";

/// What an entry's bounds say is past the pack's end.
const TRUNCATED: &str = "an entry past the pack's end";

/// One of a delta's two leading sizes, read at `*at` (7 bits a byte, low
/// first), `*at` moved past it; `None` if it is cut short or overflows.
fn delta_size(delta: &[u8], at: &mut usize) -> Option<usize> {
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

/// Objects from a pack (rebuilt, or stored whole: one cache each), by
/// (pack, offset), least recently used dropped first past a byte cap. An
/// object over two thirds of the cap ([`KEPT_SHARE`]) is not kept: it would
/// push out everything else.
///
/// The cap may grow ([`DeltaCache::growing`]): the cache remembers what it
/// dropped lately (pushed out, or refused as too large), as much as a cache
/// at the largest cap would still hold beside what it holds, and doubles its
/// cap when, of [`GROW_WINDOW`] objects put, more than a quarter are such
/// "ghosts": objects rebuilt again that a larger cache would have kept.
struct DeltaCache {
    map: HashMap<(usize, u64), Cached, BuildHasherDefault<KeyHasher>>,
    /// Last use → key: the least recently used first.
    order: BTreeMap<u64, (usize, u64)>,
    clock: u64,
    bytes: usize,
    cap: usize,
    /// What `cap` may grow to.
    max_cap: usize,
    /// A dropped object's buffer, for the next object rebuilt.
    spare: Vec<u8>,
    /// Objects dropped lately, oldest first, with their sizes: at most
    /// `max_cap - cap` bytes of them, what the largest cap would have kept.
    ghosts: VecDeque<((usize, u64), usize)>,
    ghost_keys: HashSet<(usize, u64), BuildHasherDefault<KeyHasher>>,
    ghost_bytes: usize,
    /// Objects put since the cap was last weighed, and how many were ghosts.
    puts: u32,
    ghost_puts: u32,
}

/// Where a reader's cache of rebuilt objects starts: a page fault costs
/// 3-4 µs on the machines we measure on, and every reader has its own cache,
/// so memory not needed is time lost. See [`BlobReader::PACK_CACHE_BYTES`](
/// super::history::BlobReader::PACK_CACHE_BYTES) for the figures.
pub const REBUILT_START: usize = 1 << 20;

/// The largest share of a cache's cap one object may take, as a fraction:
/// two thirds, so that a 6 MiB cache (`BlobReader::PACK_CACHE_BYTES`) keeps
/// moto's 4 MB generated files, whose next versions are rebuilt from them.
/// With half, such a file was rebuilt from its chain at every version
/// unless the cache had 8 MiB.
const KEPT_SHARE: (usize, usize) = (2, 3);

/// Whether a cache capped at `cap` keeps an object of `len` bytes.
fn kept_at(cap: usize, len: usize) -> bool {
    len <= cap / KEPT_SHARE.1 * KEPT_SHARE.0
}

/// How many objects put between two looks at whether the cap should grow.
const GROW_WINDOW: u32 = 256;

/// Hashes [`DeltaCache`]'s keys, two numbers, in a few instructions (a
/// multiply per number, as FxHash does): SipHash cost 2% of a history scan.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

struct Cached {
    /// Shared with the reader's caller while it is scanned
    /// ([`PackReader::read_shared`]).
    data: Shared,
    kind: Kind,
    used: u64,
}

impl DeltaCache {
    fn new(cap: usize) -> DeltaCache {
        DeltaCache::growing(cap, cap)
    }

    /// A cache capped at `cap` bytes, which doubles, up to `max_cap`, when
    /// it proves too small (see the type).
    fn growing(cap: usize, max_cap: usize) -> DeltaCache {
        DeltaCache {
            map: HashMap::default(),
            order: BTreeMap::new(),
            clock: 0,
            bytes: 0,
            cap,
            max_cap: max_cap.max(cap),
            spare: Vec::new(),
            ghosts: VecDeque::new(),
            ghost_keys: HashSet::default(),
            ghost_bytes: 0,
            puts: 0,
            ghost_puts: 0,
        }
    }

    /// Counts an object about to be put, and grows the cap if too many of
    /// the last [`GROW_WINDOW`] were objects it dropped lately.
    fn count(&mut self, key: (usize, u64)) {
        if self.cap >= self.max_cap {
            return;
        }
        self.puts += 1;
        self.ghost_puts += u32::from(self.ghost_keys.contains(&key));
        if self.puts < GROW_WINDOW {
            return;
        }
        if self.ghost_puts * 4 > self.puts {
            self.cap = (self.cap * 2).min(self.max_cap);
            self.ghosts.clear();
            self.ghost_keys.clear();
            self.ghost_bytes = 0;
        }
        self.puts = 0;
        self.ghost_puts = 0;
    }

    /// Remembers an object of `len` bytes dropped, if a cache at the largest
    /// cap would keep it.
    fn ghost(&mut self, key: (usize, u64), len: usize) {
        if self.cap >= self.max_cap || !kept_at(self.max_cap, len) || !self.ghost_keys.insert(key) {
            return;
        }
        self.ghosts.push_back((key, len));
        self.ghost_bytes += len;
        while self.ghost_bytes > self.max_cap - self.cap {
            let (old, len) = self.ghosts.pop_front().expect("bytes are in the queue");
            self.ghost_keys.remove(&old);
            self.ghost_bytes -= len;
        }
    }

    /// The kind of the object at `key`, if it is cached.
    fn kind(&self, key: (usize, u64)) -> Option<Kind> {
        self.map.get(&key).map(|c| c.kind)
    }

    /// The object at `key`, which must be cached; marked used.
    fn get(&mut self, key: (usize, u64)) -> &[u8] {
        self.clock += 1;
        let c = self.map.get_mut(&key).expect("looked up before");
        self.order.remove(&c.used);
        c.used = self.clock;
        self.order.insert(c.used, key);
        &c.data
    }

    /// The object at `key`, as [`DeltaCache::get`], shared.
    fn get_shared(&mut self, key: (usize, u64)) -> Shared {
        self.get(key);
        Arc::clone(&self.map[&key].data)
    }

    fn spare(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.spare)
    }

    /// Whether an object of `len` bytes would be kept.
    fn keeps(&self, len: usize) -> bool {
        kept_at(self.cap, len)
    }

    /// Keeps `data` (an object handed to the caller too, [`fitted`]), if it
    /// is small enough.
    fn put_shared(&mut self, key: (usize, u64), data: &Shared, kind: Kind) {
        if self.keeps(data.len()) {
            self.insert(key, Arc::clone(data), kind);
        } else {
            self.count(key);
            self.ghost(key, data.len());
        }
    }

    fn put(&mut self, key: (usize, u64), data: Vec<u8>, kind: Kind) {
        if !self.keeps(data.len()) {
            self.count(key);
            self.ghost(key, data.len());
            // Reused for the next object only if it is no larger than the
            // cache: one large blob must not stay pinned in every reader.
            if data.capacity() <= self.max_cap {
                self.spare = data;
            }
            return;
        }
        self.insert(key, Arc::new(fitted(data)), kind);
    }

    /// Keeps `data`, which it must be small enough for, dropping the least
    /// recently used objects past the cap; the buffer of the last one
    /// dropped that nobody else holds is the next spare.
    fn insert(&mut self, key: (usize, u64), data: Shared, kind: Kind) {
        self.count(key);
        self.clock += 1;
        self.bytes += data.len();
        self.order.insert(self.clock, key);
        let old = self.map.insert(
            key,
            Cached {
                data,
                kind,
                used: self.clock,
            },
        );
        if let Some(old) = old {
            self.order.remove(&old.used);
            self.bytes -= old.data.len();
        }
        while self.bytes > self.cap {
            let (_, oldest) = self.order.pop_first().expect("bytes are in the map");
            let gone = self
                .map
                .remove(&oldest)
                .expect("ordered keys are in the map");
            self.bytes -= gone.data.len();
            self.ghost(oldest, gone.data.len());
            if let Ok(buf) = Arc::try_unwrap(gone.data) {
                self.spare = buf;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Puts `rounds` times, in turn, objects of 300 bytes at `keys` keys.
    fn cycle(cache: &mut DeltaCache, keys: u64, rounds: u32) {
        for i in 0..u64::from(rounds) {
            cache.put((0, i % keys), vec![0; 300], Kind::Blob);
        }
    }

    /// A cache that drops what is asked for again doubles its cap, up to its
    /// largest; one whose objects fit does not grow.
    #[test]
    fn a_cache_grows_while_it_drops_what_is_read_again() {
        // 8 objects of 300 bytes do not fit in 1,000 bytes: every put is
        // one dropped lately.
        let mut thrashing = DeltaCache::growing(1000, 4000);
        cycle(&mut thrashing, 8, GROW_WINDOW - 1);
        assert_eq!(thrashing.cap, 1000, "weighed every GROW_WINDOW puts");
        cycle(&mut thrashing, 8, 1);
        assert_eq!(thrashing.cap, 2000);
        cycle(&mut thrashing, 8, 4 * GROW_WINDOW);
        assert_eq!(thrashing.cap, 4000, "never past the largest cap");
        assert_eq!(thrashing.bytes, 8 * 300, "they all fit now");

        let mut fitting = DeltaCache::growing(1000, 4000);
        cycle(&mut fitting, 3, 4 * GROW_WINDOW);
        assert_eq!(fitting.cap, 1000);
    }

    fn git(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Vec<u8> {
        let out = crate::input::test_git::git_with_input(dir, args, input.unwrap_or_default());
        out.unwrap_or_else(|e| panic!("git {args:?}: {e}"))
    }

    /// A repository of `VERSIONS` commits editing a small and a large file
    /// (over 64 KiB, so that deltas copy whole 64 KiB runs), made by
    /// `git fast-import`, then packed with `repack_args`. Returns it with
    /// every blob id, oldest first.
    const VERSIONS: usize = 80;
    fn repo(repack_args: &[&str]) -> (tempfile::TempDir, Vec<Oid>) {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        git(d, &["init", "-q", "--bare"], None);
        let mut stream = Vec::new();
        let mut small: Vec<String> = (0..40).map(|i| format!("line {i}\n")).collect();
        let mut large: Vec<String> = (0..9000).map(|i| format!("row {i:05}\n")).collect();
        for v in 0..VERSIONS {
            let n = small.len();
            small[(v * 7) % n] = format!("edited {v}\n");
            if v % 3 == 0 {
                small.insert(v % 11, format!("inserted {v}\n"));
            }
            if v % 5 == 0 {
                small.remove((v * 3) % small.len());
            }
            let n = large.len();
            large[(v * 131) % n] = format!("changed in version {v}\n");
            let (s, l) = (small.concat(), large.concat());
            write!(
                stream,
                "commit refs/heads/main\ncommitter A <a@b> {} +0000\n",
                1_000_000 + v
            )
            .unwrap();
            write!(stream, "data 2\nv\n").unwrap();
            for (path, body) in [("small.txt", &s), ("large.txt", &l)] {
                write!(
                    stream,
                    "M 100644 inline {path}\ndata {}\n{body}\n",
                    body.len()
                )
                .unwrap();
            }
        }
        git(d, &["fast-import", "--quiet"], Some(&stream));
        git(
            d,
            &repack_args
                .iter()
                .copied()
                .chain(["-adfq", "--depth=50", "--window=50"])
                .collect::<Vec<_>>(),
            None,
        );
        let mut ids: Vec<Oid> = Vec::new();
        let log = git(d, &["log", "--reverse", "--format=%H", "main"], None);
        for c in String::from_utf8(log).unwrap().lines() {
            for path in ["small.txt", "large.txt"] {
                let hex = git(d, &["rev-parse", &format!("{c}:{path}")], None);
                let oid = Oid::from_hex(hex.trim_ascii()).unwrap();
                if !ids.contains(&oid) {
                    ids.push(oid);
                }
            }
        }
        (tmp, ids)
    }

    fn headers(d: &Path) -> (usize, usize) {
        let packs = Packs::open(&d.join("objects"));
        assert_eq!(packs.packs.len(), 1);
        let (index, pack) = &packs.packs[0];
        index.iter().fold((0, 0), |(ofs, refs), e| {
            match pack.entry(e.pack_offset).unwrap().header {
                Header::OfsDelta { .. } => (ofs + 1, refs),
                Header::RefDelta { .. } => (ofs, refs + 1),
                _ => (ofs, refs),
            }
        })
    }

    /// What git shows for each of `ids`: one `git cat-file --batch`.
    fn shown(d: &Path, ids: &[Oid]) -> HashMap<Oid, Vec<u8>> {
        let ask: String = ids.iter().map(|o| format!("{o}\n")).collect();
        let out = git(d, &["cat-file", "--batch"], Some(ask.as_bytes()));
        let mut rest = &out[..];
        ids.iter()
            .map(|&oid| {
                let eol = rest.iter().position(|&b| b == b'\n').unwrap();
                let header = std::str::from_utf8(&rest[..eol]).unwrap();
                let size: usize = header.rsplit(' ').next().unwrap().parse().unwrap();
                let body = rest[eol + 1..eol + 1 + size].to_vec();
                rest = &rest[eol + 2 + size..];
                (oid, body)
            })
            .collect()
    }

    /// A blob rebuilt from a delta is one allocation, shared by the cache
    /// and the caller (no copy): read again while the caller holds it, or
    /// after it let it go, the cache serves those same bytes from it.
    #[test]
    fn a_rebuilt_blob_is_shared_with_the_cache_not_copied() {
        let (tmp, ids) = repo(&["repack"]);
        let d = tmp.path();
        let want = shown(d, &ids);
        let packs = Arc::new(Packs::open(&d.join("objects")));
        let mut reader = PackReader::new(packs, 8 << 20, 4 << 20);
        let mut shared = 0;
        // Oldest first: each version a delta on a newer one, rebuilt.
        for oid in &ids {
            let (kind, held) = reader.read_shared(oid).unwrap().unwrap();
            assert_eq!(kind, Kind::Blob);
            assert!(*held == want[oid], "{oid}");
            let Some(key) = reader.cached_key(oid) else {
                continue;
            };
            assert_eq!(reader.cached(key).as_ptr(), held.as_ptr(), "{oid}: a copy");
            let again = reader.read_shared(oid).unwrap().unwrap().1;
            assert!(Arc::ptr_eq(&again, &held), "{oid}");
            drop((held, again));
            assert!(reader.cached(key) == want[oid], "{oid} once let go");
            shared += 1;
        }
        // Every version of both files fits in the caches.
        assert_eq!(shared, ids.len());
        let (deltas, _) = headers(d);
        assert!(deltas > ids.len() / 2, "{deltas} deltas: too few rebuilt");
    }

    /// Reads `ids` in order through one reader; each must be what git shows.
    fn check(
        d: &Path,
        ids: &[Oid],
        want: &HashMap<Oid, Vec<u8>>,
        (rebuilt, whole): (usize, usize),
    ) {
        let mut reader = PackReader::new(Arc::new(Packs::open(&d.join("objects"))), rebuilt, whole);
        let mut buf = Vec::new();
        for oid in ids {
            let kind = reader.read(oid, &mut buf).unwrap();
            assert_eq!(kind, Some(Kind::Blob), "{oid}");
            assert!(
                buf == want[oid],
                "{oid}: {} bytes read, git shows {}",
                buf.len(),
                want[oid].len()
            );
        }
    }

    /// The resident kilobytes of this process's mappings of `path`
    /// (`/proc/self/smaps`).
    #[cfg(target_os = "linux")]
    fn resident_kb(path: &Path) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut ours = false;
        let mut kb = 0;
        for line in smaps.lines() {
            if let Some(rss) = line.strip_prefix("Rss:") {
                if ours {
                    kb += rss.trim().trim_end_matches(" kB").parse::<u64>().unwrap();
                }
            } else if !line.split_whitespace().next().unwrap_or(":").ends_with(':') {
                // A mapping's first line, `start-end perms offset dev inode
                // path`, where every other line is `Field: value`.
                ours = line.ends_with(&*path.to_string_lossy());
            }
        }
        kb
    }

    /// Pages of the mapping handed back (the type's "Memory") leave the
    /// resident memory, and are read again as they were: every version read
    /// after a release is what git shows, through readers that cache nothing.
    #[cfg(target_os = "linux")]
    #[test]
    fn pages_handed_back_leave_resident_memory_and_read_again_the_same() {
        let (tmp, ids) = repo(&["repack"]);
        let want = shown(tmp.path(), &ids);
        // A pack under RELEASE_MIN_PACK is never handed back.
        let mut small = Packs::open(&tmp.path().join("objects"));
        let path = small.packs[0].1.path().to_owned();
        let first = small.packs[0].1.entry_slice(0..64).unwrap();
        assert_ne!(
            std::hint::black_box(first.iter().map(|&b| b as u32).sum::<u32>()),
            0
        );
        small.read_from(RELEASE_BYTES);
        assert!(resident_kb(&path) > 0, "a small pack handed back");
        small.release_min = 0;
        let packs = Arc::new(small);
        let mut reader = PackReader::new(Arc::clone(&packs), 0, 0);
        let mut buf = Vec::new();
        for oid in &ids {
            assert_eq!(reader.read(oid, &mut buf).unwrap(), Some(Kind::Blob));
            assert!(buf == want[oid], "{oid}");
            assert!(
                resident_kb(&path) > 0,
                "{oid}: nothing of the pack resident"
            );
            release(&packs.packs[0].1);
            assert_eq!(resident_kb(&path), 0, "{oid}: pages still resident");
        }
        // Released by the count of bytes read: not before RELEASE_BYTES.
        reader.read(&ids[0], &mut buf).unwrap();
        let read = packs.read.load(Ordering::Relaxed) % RELEASE_BYTES;
        packs.read_from(RELEASE_BYTES - read - 1);
        assert!(resident_kb(&path) > 0);
        packs.read_from(1);
        assert_eq!(resident_kb(&path), 0);
        // A header read, as the walk sizes a blob and finds its chain's
        // start, counts a page: it leaves one resident, never inflated.
        let before = packs.read.load(Ordering::Relaxed);
        let last = ids.last().unwrap();
        reader.header(last).unwrap().unwrap();
        assert_eq!(
            packs.read.load(Ordering::Relaxed),
            before + HEADER_READ_BYTES
        );
        assert!(resident_kb(&path) > 0);
        let before = packs.read.load(Ordering::Relaxed);
        reader.chain_start(last).unwrap();
        let steps = packs.read.load(Ordering::Relaxed) - before;
        assert!(
            steps >= HEADER_READ_BYTES && steps.is_multiple_of(HEADER_READ_BYTES),
            "{steps}"
        );
    }

    #[test]
    fn every_version_reads_as_git_shows_it_in_any_order_and_cache_size() {
        for repack in [
            &["repack"][..],
            &["-c", "repack.useDeltaBaseOffset=false", "repack"],
        ] {
            let (tmp, ids) = repo(repack);
            let (ofs, refs) = headers(tmp.path());
            // The pack is what the test is about: long chains of the one kind.
            if repack.len() == 1 {
                assert!(
                    ofs > 100 && refs == 0,
                    "{ofs} ofs-deltas, {refs} ref-deltas"
                );
            } else {
                assert!(
                    refs > 100 && ofs == 0,
                    "{ofs} ofs-deltas, {refs} ref-deltas"
                );
            }
            let want = shown(tmp.path(), &ids);
            // Each one's size without reading it: from its entry's header, or from the
            // first bytes of a delta's instructions.
            let packs = Arc::new(Packs::open(&tmp.path().join("objects")));
            let mut reader = PackReader::new(packs, 0, 0);
            let mut deltas = 0;
            for oid in &ids {
                let (kind, size) = reader.header(oid).unwrap().unwrap();
                assert_eq!(size, want[oid].len() as u64, "{oid}");
                match kind {
                    None => deltas += 1,
                    Some(kind) => assert_eq!(kind, Kind::Blob, "{oid}"),
                }
            }
            assert!(
                deltas > 100 && deltas < ids.len(),
                "{deltas} of {}",
                ids.len()
            );
            let reversed: Vec<Oid> = ids.iter().rev().copied().collect();
            // Where each chain starts, as git's own verify-pack shows it (each
            // object's offset and delta base), asked in both orders: the second
            // time through, every answer comes from what the first remembered.
            let idx = std::fs::read_dir(tmp.path().join("objects/pack"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|x| x == "idx"))
                .unwrap();
            let verified = git(
                tmp.path(),
                &["verify-pack", "-v", idx.to_str().unwrap()],
                None,
            );
            let mut at: HashMap<Oid, (u64, Option<Oid>)> = HashMap::new();
            for line in String::from_utf8(verified).unwrap().lines() {
                let f: Vec<&str> = line.split_whitespace().collect();
                if let Some(oid) = Oid::from_hex(f[0].as_bytes()) {
                    let base = f.get(6).map(|b| Oid::from_hex(b.as_bytes()).unwrap());
                    at.insert(oid, (f[4].parse().unwrap(), base));
                }
            }
            let start = |mut oid: Oid| loop {
                match at[&oid] {
                    (_, Some(base)) => oid = base,
                    (offset, None) => return chain_key(0, offset),
                }
            };
            let starts: std::collections::HashSet<u64> = ids.iter().map(|&o| start(o)).collect();
            assert!(
                starts.len() >= 2 && starts.len() < ids.len() / 10,
                "{starts:?}"
            );
            for oid in ids.iter().chain(&reversed) {
                assert_eq!(reader.chain_start(oid), Some(start(*oid)), "{oid}");
            }
            // 4 KiB keeps no large version: with both caches that small,
            // every chain is rebuilt from the start; with only the whole
            // objects kept, from the kept start; with only the rebuilt ones,
            // the large whole object goes with them.
            let (small, large) = (4 << 10, 16 << 20);
            for cache in [
                (small, small),
                (small, large),
                (large, small),
                (large, large),
            ] {
                check(tmp.path(), &ids, &want, cache);
                check(tmp.path(), &reversed, &want, cache);
            }
        }
    }

    #[test]
    fn an_object_outside_the_packs_is_left_to_the_caller() {
        let (tmp, ids) = repo(&["repack"]);
        let d = tmp.path();
        let loose = git(d, &["hash-object", "-w", "--stdin"], Some(b"loose\n"));
        let loose = Oid::from_hex(loose.trim_ascii()).unwrap();
        let mut reader =
            PackReader::new(Arc::new(Packs::open(&d.join("objects"))), 1 << 20, 1 << 20);
        let mut buf = Vec::new();
        assert_eq!(reader.read(&loose, &mut buf), Ok(None));
        assert_eq!(reader.header(&loose), Ok(None));
        assert_eq!(reader.read(&ids[0], &mut buf), Ok(Some(Kind::Blob)));
    }

    #[test]
    fn a_damaged_delta_is_an_error_and_the_reader_goes_on() {
        let (tmp, ids) = repo(&["repack"]);
        let d = tmp.path();
        let packs = Packs::open(&d.join("objects"));
        let (index, pack) = &packs.packs[0];
        // The oldest small version: a delta, deep in its chain.
        let victim = ids[0];
        let offset = index.pack_offset_at_index(index.lookup(victim.as_gix()).unwrap());
        let entry = pack.entry(offset).unwrap();
        assert!(entry.header.is_delta());
        let path = pack.path().to_path_buf();
        drop(packs);
        let mut bytes = std::fs::read(&path).unwrap();
        // Past zlib's two-byte header: the deflate stream itself.
        for b in &mut bytes[entry.data_offset as usize + 2..entry.data_offset as usize + 6] {
            *b ^= 0x5a;
        }
        std::fs::write(&path, bytes).unwrap();
        let mut reader =
            PackReader::new(Arc::new(Packs::open(&d.join("objects"))), 1 << 20, 1 << 20);
        let mut buf = Vec::new();
        let err = reader.read(&victim, &mut buf).unwrap_err();
        assert!(err.contains("decompress"), "{err}");
        let last = *ids.last().unwrap();
        assert_eq!(reader.read(&last, &mut buf), Ok(Some(Kind::Blob)));
        assert_eq!(buf, git(d, &["cat-file", "blob", &last.to_string()], None));
    }

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

    /// The leading objects of a pack git wrote are its commits, in the pack's order, by
    /// its reverse index or, without one, by sorting the offsets.
    #[test]
    fn the_front_of_a_pack_git_wrote_holds_its_commits() {
        for rev in ["true", "false"] {
            let (tmp, _) = repo(&["-c", &format!("pack.writeReverseIndex={rev}"), "repack"]);
            let dir = tmp.path().join("objects");
            let packs = Packs::open(&dir);
            let (index, _) = &packs.packs[0];
            assert_eq!(reverse_index(index).is_some(), rev == "true");
            let mut by_offset: Vec<(u64, u32)> = (0..index.num_objects())
                .map(|i| (index.pack_offset_at_index(i), i))
                .collect();
            by_offset.sort_unstable();
            if let Some(rev) = reverse_index(index) {
                assert!(rev.eq(by_offset.iter().map(|&(_, i)| i)));
            }
            let log = git(tmp.path(), &["rev-list", "main"], None);
            let mut commits: Vec<Oid> = String::from_utf8(log)
                .unwrap()
                .lines()
                .map(|l| Oid::from_hex(l.as_bytes()).unwrap())
                .collect();
            let mut leading = packs.leading_objects();
            assert_eq!(leading.len(), VERSIONS, "{rev}");
            leading.sort();
            commits.sort();
            assert_eq!(leading, commits, "{rev}");
        }
    }
}
