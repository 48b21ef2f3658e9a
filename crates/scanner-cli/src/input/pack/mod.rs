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
//! then in the cache or one delta away from it. Not every pack is made that
//! way: moto's history, as a clone repacks it, holds most versions as deltas
//! against an older one (`docs/performance.md`, "Where moto's rebuilds go");
//! the chains a history scan walks there are shallow trees, and the cache
//! serves them alike.
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
//! objects have a cache of their own (`Caches::whole`), and with 4 MiB
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

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gix::odb::pack::data::{self, entry::Header};
use gix::odb::pack::index;

use super::history::Oid;

mod cache;
pub use cache::Caches;
use cache::{lock, Tier};
mod delta;
#[cfg(test)]
mod tests;

pub use cache::REBUILT_START;
use cache::{fitted, KeyHasher};
use delta::{apply, delta_size, CORRUPT_DELTA};

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

/// The object a delta is applied to.
enum Base {
    /// Just made; kept in that cache once used.
    Held(Vec<u8>, Tier),
    /// Kept in a cache, shared with it.
    Kept(Shared),
}

/// What an object is: blob, tree, commit or tag.
pub type Kind = gix::objs::Kind;

/// An object's bytes, shared by a reader's cache and the reader's caller
/// ([`PackReader::read_shared`]).
pub type Shared = Arc<Vec<u8>>;

/// Reads objects from [`Packs`] for one thread, with caches of its own or
/// shared with other readers ([`PackReader::sharing`]).
pub struct PackReader {
    packs: Arc<Packs>,
    /// Its caches of objects, its own or shared with the other readers of
    /// the same packs ([`Caches`]).
    caches: Arc<Mutex<Caches>>,
    /// The most a delta's instructions keep of this reader's buffer.
    delta_max: usize,
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
        PackReader::sharing(packs, &Default::default(), rebuilt_bytes, whole_bytes, 1)
    }

    /// A reader of `packs` sharing `caches` with the other readers given
    /// them, to which it adds its share (`rebuilt_bytes` and `whole_bytes`,
    /// as for [`PackReader::new`]) unless they hold `most` shares already
    /// ([`Caches::attach`]).
    pub fn sharing(
        packs: Arc<Packs>,
        caches: &Arc<Mutex<Caches>>,
        rebuilt_bytes: usize,
        whole_bytes: usize,
        most: usize,
    ) -> PackReader {
        lock(caches).attach(rebuilt_bytes, whole_bytes, most);
        PackReader {
            packs,
            caches: Arc::clone(caches),
            delta_max: rebuilt_bytes,
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
            if let Some((kind, data)) = lock(&self.caches).kept((p, at)) {
                break (kind, Base::Kept(data));
            }
            let entry = pack.entry(at).map_err(|e| e.to_string())?;
            packs.read_from(HEADER_READ_BYTES);
            at = match below(index, &entry)? {
                Below::Delta(base) => base,
                Below::Elsewhere => return Ok(None),
                Below::Whole(kind) => {
                    let mut buf = lock(&self.caches).whole.spare();
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
            let mut buf = lock(&self.caches).rebuilt.spare();
            let applied = match &base {
                Base::Held(held, _) => apply(held, &self.delta, &mut buf),
                Base::Kept(data) => apply(data, &self.delta, &mut buf),
            };
            match base {
                Base::Held(held, tier) => lock(&self.caches).keep(tier, (p, at), held, kind),
                // Let go before the target is kept: if keeping it drops the
                // base, the base's buffer is the next spare.
                Base::Kept(data) => drop(data),
            }
            if target {
                // The instructions of a large delta are not kept for the next
                // one: the blob they made is held while it is scanned.
                if self.delta.capacity() > self.delta_max {
                    self.delta = Vec::new();
                }
                applied?;
                let shared = Arc::new(fitted(buf));
                lock(&self.caches).keep_shared(Tier::Rebuilt, (p, offset), &shared, kind);
                return Ok(Some((kind, shared)));
            }
            applied?;
            (at, base) = (entry.pack_offset(), Base::Held(buf, Tier::Rebuilt));
        }
        // The target itself: kept, or stored whole and just inflated.
        let shared = match base {
            Base::Held(held, tier) => {
                let shared = Arc::new(fitted(held));
                lock(&self.caches).keep_shared(tier, (p, at), &shared, kind);
                shared
            }
            Base::Kept(data) => data,
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

    /// Whether the caches hold the blob `oid`.
    pub fn is_cached(&self, oid: &Oid) -> bool {
        self.packs
            .locate(oid.as_gix())
            .is_some_and(|key| lock(&self.caches).kind(key) == Some(Kind::Blob))
    }

    /// The blob `oid` as the caches hold it, if they do (for the tests:
    /// which allocation they hold).
    #[cfg(test)]
    pub(crate) fn cached(&self, oid: &Oid) -> Option<Shared> {
        let key = self.packs.locate(oid.as_gix())?;
        let (kind, data) = lock(&self.caches).kept(key)?;
        (kind == Kind::Blob).then_some(data)
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

/// What an entry's bounds say is past the pack's end.
const TRUNCATED: &str = "an entry past the pack's end";
