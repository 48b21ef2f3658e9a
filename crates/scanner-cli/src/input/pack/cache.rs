//! The caches of a [`PackReader`](super::PackReader): objects rebuilt from their delta chains,
//! and objects stored whole, each kept by (pack, offset) under a byte cap that grows when it
//! proves too small.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::{Kind, Shared};

/// Objects from a pack (rebuilt, or stored whole: one cache each), by
/// (pack, offset), least recently used dropped first past a byte cap. An
/// object over two thirds of the cap ([`KEPT_SHARE`]) is not kept: it would
/// push out everything else. An object inflated whole counts as used
/// [`INFLATED_CREDIT`] uses later than it was: getting it back costs
/// inflating all of it, where a rebuilt one costs a delta.
///
/// The cap may grow ([`DeltaCache::growing`]): the cache remembers what it
/// dropped lately (pushed out, or refused as too large), as much as a cache
/// at the largest cap would still hold beside what it holds, and doubles its
/// cap when, of [`GROW_WINDOW`] objects put, more than a quarter are such
/// "ghosts": objects rebuilt again that a larger cache would have kept.
/// So an object larger than the room between the cap and the largest cap is
/// never a ghost (a 4 MB one at a cap of 4 MiB of 6), and objects that
/// large never make the cache grow; nor do a few large ones among many
/// small ones, which the count by objects outweighs. Letting them count
/// (the last ghost kept whatever its size, the quarter weighed in bytes)
/// took moto's readers at two threads from 4 to 6 MiB, and its peak RSS
/// over 150 MB (`docs/performance.md`, "What the readers make again").
pub(super) struct DeltaCache {
    map: HashMap<(usize, u64), Cached, BuildHasherDefault<KeyHasher>>,
    /// Rank ([`Rank`]) → key: the first dropped first.
    order: BTreeMap<Rank, (usize, u64)>,
    clock: u64,
    bytes: usize,
    cap: usize,
    /// What `cap` may grow to.
    pub(super) max_cap: usize,
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

/// The two caches of pack readers ([`PackReader`](super::PackReader)):
/// objects rebuilt from deltas, and objects stored whole (the start of every
/// chain). Kept apart because getting one back costs inflating all of it,
/// where a rebuilt object whose base is kept costs a delta: in one cache,
/// the rebuilt versions pushed the whole ones out, and the ripgrep history
/// inflated 2.6 times the bytes of its whole blobs (the module's "Two
/// caches").
///
/// A reader has caches of its own, or shares one pair with other readers
/// of the same packs ([`PackReader::sharing`](super::PackReader::sharing)),
/// each reader adding its share to the caps, up to a number of shares
/// ([`Caches::attach`]; the workers of a history past the cores,
/// `BlobReader::with_store`).
#[derive(Default)]
pub struct Caches {
    pub(super) rebuilt: DeltaCache,
    pub(super) whole: DeltaCache,
    /// How many readers' shares the caps hold.
    shares: usize,
}

/// Which of [`Caches`] an object goes to.
#[derive(Clone, Copy)]
pub(super) enum Tier {
    /// Objects rebuilt from a delta.
    Rebuilt,
    /// Objects stored whole, as inflated.
    Whole,
}

impl Tier {
    /// Whether its objects were inflated whole (ranked with
    /// [`INFLATED_CREDIT`]).
    fn inflated(self) -> bool {
        matches!(self, Tier::Whole)
    }
}

/// The caches behind `m`, whatever a reader that panicked left them in
/// (a cache whose invariants broke only costs objects read again).
pub(super) fn lock(m: &std::sync::Mutex<Caches>) -> std::sync::MutexGuard<'_, Caches> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Caches {
    /// Adds one reader's share to the caps (`rebuilt` bytes of rebuilt
    /// objects at most, from [`REBUILT_START`], and `whole` of whole ones),
    /// unless the caps hold `most` shares already.
    pub fn attach(&mut self, rebuilt: usize, whole: usize, most: usize) {
        if self.shares >= most.max(1) {
            return;
        }
        self.shares += 1;
        self.rebuilt.widen(REBUILT_START.min(rebuilt), rebuilt);
        self.whole.widen(whole, whole);
    }

    /// The caps: the rebuilt objects' cap and largest cap, the whole ones'.
    #[cfg(test)]
    pub(super) fn caps(&self) -> (usize, usize, usize) {
        (self.rebuilt.cap, self.rebuilt.max_cap, self.whole.cap)
    }

    /// The object at `key` and its kind, if a cache holds it; marked used.
    pub(super) fn kept(&mut self, key: (usize, u64)) -> Option<(Kind, Shared)> {
        self.rebuilt.get(key).or_else(|| self.whole.get(key))
    }

    /// The kind of the object at `key`, if a cache holds it.
    pub(super) fn kind(&self, key: (usize, u64)) -> Option<Kind> {
        self.rebuilt.kind(key).or_else(|| self.whole.kind(key))
    }

    /// Keeps `data` in `tier`; a whole object too large for its own cache
    /// goes with the rebuilt ones (where it was before there were two).
    pub(super) fn keep(&mut self, tier: Tier, key: (usize, u64), data: Vec<u8>, kind: Kind) {
        let inflated = tier.inflated();
        self.cache_for(tier, data.len())
            .put(key, data, kind, inflated);
    }

    /// [`Caches::keep`] for an object handed to the caller too.
    pub(super) fn keep_shared(&mut self, tier: Tier, key: (usize, u64), data: &Shared, kind: Kind) {
        self.cache_for(tier, data.len())
            .put_shared(key, data, kind, tier.inflated());
    }

    /// The cache an object of `tier` and `len` bytes goes to: a whole one
    /// too large for its cache goes to the rebuilt one.
    fn cache_for(&mut self, tier: Tier, len: usize) -> &mut DeltaCache {
        match tier {
            Tier::Whole if self.whole.keeps(len) => &mut self.whole,
            _ => &mut self.rebuilt,
        }
    }
}

/// Where a reader's cache of rebuilt objects starts: a page fault costs
/// 3-4 µs on the machines we measure on, and every reader has its own cache
/// (at most as many as there are cores: past them the readers share one),
/// so memory not needed is time lost. See [`BlobReader::PACK_CACHE_BYTES`](
/// crate::input::history::BlobReader::PACK_CACHE_BYTES) for the figures.
pub const REBUILT_START: usize = 1 << 20;

/// The largest share of a cache's cap one object may take, as a fraction:
/// two thirds, so that a 6 MiB cache (`BlobReader::PACK_CACHE_BYTES`) keeps
/// moto's 4 MB generated files, whose next versions are rebuilt from them.
/// With half, such a file was rebuilt from its chain at every version
/// unless the cache had 8 MiB. A cache reaches 6 MiB only where it grows
/// there ([`DeltaCache`]): on moto's history it does at one thread, and at
/// two its readers stop at 4 MiB, where no 4 MB object is kept
/// (`docs/performance.md`, "What the readers make again").
const KEPT_SHARE: (usize, usize) = (2, 3);

/// Whether a cache capped at `cap` keeps an object of `len` bytes.
fn kept_at(cap: usize, len: usize) -> bool {
    len <= cap / KEPT_SHARE.1 * KEPT_SHARE.0
}

/// How many uses later than it was an object inflated whole counts as used
/// ([`DeltaCache`]). A large object stored whole is over two thirds of the
/// cache of whole objects and goes to the cache of rebuilt ones, where,
/// used least recently, the versions rebuilt from it pushed it out: moto's
/// history inflated 1.1 GB of whole objects that hold 136 MB, one 2 MB
/// blob 149 times, the centre of a star of 187 versions. With a credit of
/// 64 uses: 0.45 GB, and 3.0% fewer instructions at one thread (callgrind;
/// 16 uses did as well, 256 less well); at two threads CPU time 1.2% less,
/// under the noise of 20 rounds; ripgrep's history unchanged
/// (`docs/performance.md`, "What the readers make again").
const INFLATED_CREDIT: u64 = 64;

/// Where an object stands in a cache's order: its last use, plus
/// [`INFLATED_CREDIT`] if it was inflated whole; then its last use, which
/// makes every rank distinct.
type Rank = (u64, u64);

/// The rank of an object used at `clock`.
fn rank(clock: u64, inflated: bool) -> Rank {
    let credit = if inflated { INFLATED_CREDIT } else { 0 };
    (clock + credit, clock)
}

/// How many objects put between two looks at whether the cap should grow.
const GROW_WINDOW: u32 = 256;

/// Hashes [`DeltaCache`]'s keys, two numbers, in a few instructions (a
/// multiply per number, as FxHash does): SipHash cost 2% of a history scan.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

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
    /// ([`PackReader::read_shared`](super::PackReader::read_shared)).
    data: Shared,
    kind: Kind,
    used: Rank,
    /// Stored whole in the pack, and inflated.
    inflated: bool,
}

impl Default for DeltaCache {
    /// A cache of no bytes, which [`Caches::attach`] widens.
    fn default() -> DeltaCache {
        DeltaCache::new(0)
    }
}

impl DeltaCache {
    pub(super) fn new(cap: usize) -> DeltaCache {
        DeltaCache::growing(cap, cap)
    }

    /// A cache capped at `cap` bytes, which doubles, up to `max_cap`, when
    /// it proves too small (see the type).
    pub(super) fn growing(cap: usize, max_cap: usize) -> DeltaCache {
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

    /// The cap `by` bytes higher, and the largest cap `by_most` higher.
    fn widen(&mut self, by: usize, by_most: usize) {
        self.cap += by;
        self.max_cap += by_most.max(by);
    }

    /// The kind of the object at `key`, if it is cached.
    pub(super) fn kind(&self, key: (usize, u64)) -> Option<Kind> {
        self.map.get(&key).map(|c| c.kind)
    }

    /// The object at `key` and its kind, if it is cached; marked used.
    fn get(&mut self, key: (usize, u64)) -> Option<(Kind, Shared)> {
        let c = self.map.get_mut(&key)?;
        self.clock += 1;
        self.order.remove(&c.used);
        c.used = rank(self.clock, c.inflated);
        self.order.insert(c.used, key);
        Some((c.kind, Arc::clone(&c.data)))
    }

    pub(super) fn spare(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.spare)
    }

    /// Whether an object of `len` bytes would be kept.
    pub(super) fn keeps(&self, len: usize) -> bool {
        kept_at(self.cap, len)
    }

    /// Keeps `data` (an object handed to the caller too, [`fitted`]), if it
    /// is small enough.
    fn put_shared(&mut self, key: (usize, u64), data: &Shared, kind: Kind, inflated: bool) {
        if self.keeps(data.len()) {
            self.insert(key, Arc::clone(data), kind, inflated);
        } else {
            self.count(key);
            self.ghost(key, data.len());
        }
    }

    fn put(&mut self, key: (usize, u64), data: Vec<u8>, kind: Kind, inflated: bool) {
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
        self.insert(key, Arc::new(fitted(data)), kind, inflated);
    }

    /// Keeps `data`, which it must be small enough for, dropping objects
    /// past the cap in the order of their ranks (`data` itself may go,
    /// behind an object inflated whole); the buffer of the last one dropped
    /// that nobody else holds is the next spare.
    fn insert(&mut self, key: (usize, u64), data: Shared, kind: Kind, inflated: bool) {
        self.count(key);
        self.clock += 1;
        self.bytes += data.len();
        let used = rank(self.clock, inflated);
        self.order.insert(used, key);
        let old = self.map.insert(
            key,
            Cached {
                data,
                kind,
                used,
                inflated,
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

/// `buf` shrunk when it is much larger than its object. Buffers are reused
/// (a cache's spare), so a small object may arrive in a large one: kept as
/// they came, the caches of ripgrep's history held blocks of twice their
/// cap (16 MB in the 8 MiB one), and the scan's peak RSS was 91 MB rather
/// than 85. glibc shrinks a heap block in place.
pub(super) fn fitted(mut buf: Vec<u8>) -> Vec<u8> {
    if buf.capacity() > 2 * buf.len() + 4096 {
        buf.shrink_to_fit();
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Puts `rounds` times, in turn, objects of 300 bytes at `keys` keys.
    fn cycle(cache: &mut DeltaCache, keys: u64, rounds: u32) {
        for i in 0..u64::from(rounds) {
            cache.put((0, i % keys), vec![0; 300], Kind::Blob, false);
        }
    }

    /// An object inflated whole outlasts the rebuilt objects put after it by
    /// INFLATED_CREDIT puts; a rebuilt one in its place goes with the first
    /// object that does not fit.
    #[test]
    fn an_inflated_object_outlasts_rebuilt_ones_by_its_credit() {
        let dropped_at = |inflated: bool| {
            // Three objects of 300 bytes fit in 1,000.
            let mut cache = DeltaCache::new(1000);
            cache.put((0, 0), vec![0; 300], Kind::Blob, inflated);
            (1..)
                .find(|&i| {
                    cache.put((0, i), vec![0; 300], Kind::Blob, false);
                    cache.kind((0, 0)).is_none()
                })
                .unwrap()
        };
        assert_eq!(dropped_at(false), 3);
        // Ranked at its put plus the credit, it goes once the oldest rebuilt
        // object left ranks after it: the put INFLATED_CREDIT + 2.
        assert_eq!(dropped_at(true), INFLATED_CREDIT + 2);
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
}
