//! [`BlobGroups`]: how the history source spreads its blobs over the workers.

use std::collections::HashMap;

use scanner_scheduler::PermitWatch;

use super::oid::{Oid, OidMap};
use super::versions::FOCUS_MIN_BYTES;
use crate::input::{Content, Item};

/// History blobs per batch (one task), and the bytes after which a batch is
/// closed early: few enough tasks that queueing costs nothing per blob,
/// small enough that both workers get batches.
const BLOB_BATCH: usize = 64;
const BLOB_BATCH_BYTES: u64 = 4 << 20;

/// History blobs into batches ([`Emit::send_batch`](crate::input::emit::Emit::send_batch)), grouped so that each worker reads
/// the objects of a delta chain, and the versions of a file, in order.
///
/// Reading a blob is cheap when its worker has just read one its delta
/// chain passes through: the chain ends in its reader's caches. And the
/// scan of a file's previous version tells whether the next may skip the
/// search for long-window keywords (`input::history::versions::Quiet`). In the walk's
/// order, consecutive versions of a file sit in consecutive batches, which
/// two workers take at once: on ripgrep's history a third of the later
/// versions found their base not scanned yet (5% with one worker), and two
/// workers executed 2.60 G instructions where one executed 2.43 G
/// (callgrind): each rebuilt chains the other had rebuilt already.
///
/// So with several workers each blob goes to one of [`GROUPS_PER_WORKER`]
/// groups per worker by where its delta chain starts
/// ([`HistoryBlob::chain`](super::HistoryBlob::chain); by
/// its path when it is not packed), and a full group is sent only once its
/// previous batch is done; until then it goes on filling, up to
/// [`GROUP_AHEAD`] times a batch, when it is sent regardless. The blobs of
/// one chain, which are mostly the versions of one file, then go through
/// their group one batch after the other, while the other groups keep the
/// workers busy. By chain rather than by path: git also deltas files
/// against files of other paths (of the same name, or alike), and grouping
/// by path made the synthetic history of `scripts/bench-history.sh`, where
/// every file looks alike, execute 22% more instructions. By chain start,
/// ripgrep's two workers execute 2.52 G, and its scan at two threads takes
/// 3-7% less time (0.93× the `cat-file` floor where the walk's order took
/// 0.97-1.01×). The synthetic history loses 1-4% (0.74× → 0.77×): its
/// files are deltas of one another, and any grouping breaks up what the
/// walk's order kept together. Queuing each group's batches for one worker
/// (an inbox per worker in the executor) was measured and dropped: no
/// change in time on ripgrep (docs/performance.md, "History").
///
/// # Chains held back
///
/// Grouping keeps a chain's blobs on one group, but in the walk's order
/// they are spread over the whole history, between blobs of every other
/// chain of their group, and by the time the next version of a large file
/// comes its chain has left its worker's caches. moto's history (2-4 MB
/// generated JSON, 160 versions each) applied deltas to 8.0 GB of bases
/// and inflated 960 MB of whole objects to read 3.2 GB of blobs. So while
/// the workers are busy, a blob with a chain is held back with the others
/// of its chain, and a chain's blobs go to their group together, in the
/// walk's order: once the chain holds [`CHAIN_HELD`] of them; and every
/// chain held goes, by where it starts, as soon as fewer batches run than
/// there are workers (held back while a worker waits, blobs are time lost:
/// the synthetic history, whose many short chains never fill, took 24%
/// longer at one thread when they were held to the end of the walk), when
/// [`HELD_MAX`] blobs are held, and when the walk ends. On moto that cut
/// the bases applied to 7.3 GB, the whole objects inflated to 550 MB, and
/// the scan's CPU time by 16% at 2 threads, 27% at one
/// (`docs/performance.md`, "Chains held back").
///
/// # Lineages
///
/// A blob of [`FOCUS_MIN_BYTES`] or more that modifies an earlier version
/// (its `base`) has that version read before it is scanned: cheap when the
/// worker has just read it, a whole chain rebuilt when not. Where git
/// deltas a version against a version of another delta chain, the two
/// went to different groups, held back and sent at different times, and
/// the base was rebuilt from its chain: on moto's history 5,200 of 27,000
/// bases read (1.2 GB rebuilt, 16% of the scan's CPU time). So such a blob
/// goes with its base's key (the key the base itself went by: where its
/// chain starts, or its own base's key), whatever its own chain: the
/// versions of a file then go through one group, one after the other.
/// Smaller blobs, whose bases are read only for a finding, keep
/// their own chain's key: the synthetic history, whose 2 KB files are
/// deltas of one another, took 4% longer at two threads when they went by
/// their bases too. Hyperfine, `--threads 1` and `2`, against keying every
/// blob by its own chain: ripgrep's history 1.10× and 1.08× faster, moto's
/// 1.00-1.03× at two threads (`docs/performance.md`, "Lineages").
///
/// A key then holds the versions of several files, which in the walk's
/// order alternate: moto's large versions found their base in their
/// reader's caches 23,400 times in 26,800, and 1.2 GB of bases were
/// rebuilt, half of them bases scanned two to four blobs before on the
/// same worker. So a key's blobs go lineage by lineage ([`by_lineage`]),
/// each version right after its base, and the worker keeps the last large
/// blob it scanned for the next (`pipeline/worker.rs`, `recent`): 5-7% less
/// wall time on moto at two threads (`docs/performance.md`, "Lineages").
///
/// The groups hold at most `GROUPS_PER_WORKER × GROUP_AHEAD × BLOB_BATCH`
/// items per worker, and the chains [`HELD_MAX`] (paths and ids, no
/// contents: about 13 MB at most); the order of the batches changes
/// nothing in what is reported: the sink orders the findings.
pub(crate) struct BlobGroups {
    groups: Vec<BlobGroup>,
    /// Blobs held back by their key (the type's "Chains held back" and
    /// "Lineages"), in the walk's order.
    chains: HashMap<u64, Vec<Item>>,
    /// The key each blob of [`FOCUS_MIN_BYTES`] or more went by, for the
    /// versions based on it (the type's "Lineages"); emptied past
    /// [`LINEAGE_KEPT`] entries.
    lineage: OidMap,
    /// How many blobs `chains` holds.
    held: usize,
    /// How many workers take the batches.
    workers: usize,
}

/// How many blob keys [`BlobGroups`] remembers for the versions based on
/// them (an id and a key, in a table of 131,072 slots at most: about 4 MB):
/// a version's base mostly comes a few thousand blobs before it.
/// Forgetting costs a base read from its own chain, never a wrong answer.
const LINEAGE_KEPT: usize = 1 << 16;

/// How many blobs a chain holds back before they are sent (the type's
/// "Chains held back"). CPU time of moto's history at 2 threads, medians of
/// 3 interleaved runs: 8.35 s at 32, 7.89 s at 128, 7.83 s with every chain
/// held to the end of the walk, 9.44 s with none held.
const CHAIN_HELD: usize = 128;

/// The most blobs held back in all (each a path and ids, about 200 bytes):
/// past it every chain held is sent, so what is held stays bounded however
/// long the history.
const HELD_MAX: usize = 1 << 16;

#[derive(Default)]
struct BlobGroup {
    items: Vec<Item>,
    bytes: u64,
    /// The batch sent last, until it is done.
    sent: Option<PermitWatch>,
}

/// Blob groups per worker: enough that the groups whose previous batch is
/// still running leave others to send.
const GROUPS_PER_WORKER: usize = 4;
/// How many batches' worth a group holds, waiting for its previous batch,
/// before it is sent anyway.
const GROUP_AHEAD: usize = 4;

impl BlobGroups {
    pub(crate) fn new(threads: usize) -> BlobGroups {
        // One worker reads everything in order anyway.
        let n = if threads > 1 {
            threads * GROUPS_PER_WORKER
        } else {
            1
        };
        BlobGroups {
            groups: (0..n).map(|_| BlobGroup::default()).collect(),
            chains: HashMap::new(),
            lineage: OidMap::default(),
            held: 0,
            workers: threads,
        }
    }

    /// Adds a history blob (`Content::GitBlob`) whose delta chain starts at
    /// `chain`, held back by that or by its base's key ([`BlobGroups::key`]),
    /// and sends what is due through `send` (which returns a watch on the
    /// batch's task, `None` once the scan is stopping): its chain, every
    /// chain held back, or its group. False once the scan is stopping.
    pub(crate) fn push(
        &mut self,
        item: Item,
        chain: Option<u64>,
        mut send: impl FnMut(Vec<Item>) -> Option<PermitWatch>,
    ) -> bool {
        let chain = self.key(&item, chain);
        let Some(start) = chain else {
            return self.group(item, None, send);
        };
        let held = self.chains.entry(start).or_default();
        held.push(item);
        self.held += 1;
        if held.len() >= CHAIN_HELD {
            let items = by_lineage(self.chains.remove(&start).unwrap_or_default());
            self.held -= items.len();
            return items
                .into_iter()
                .all(|item| self.group(item, chain, &mut send));
        }
        if self.held > HELD_MAX || self.starved() {
            return self.release(send);
        }
        true
    }

    /// What `item` is held back and grouped by: its base's key when it is
    /// large enough to have its base read first, else where its own delta
    /// chain starts (the type's "Lineages").
    fn key(&mut self, item: &Item, chain: Option<u64>) -> Option<u64> {
        let Some((oid, base)) = large_version(item) else {
            return chain;
        };
        let key = base
            .and_then(|base| self.lineage.get(&base).copied())
            .or(chain)?;
        if self.lineage.len() >= LINEAGE_KEPT {
            self.lineage.clear();
        }
        self.lineage.insert(oid, key);
        Some(key)
    }

    /// Whether fewer batches are running (or queued) than there are
    /// workers: a worker may be waiting, and what is held back should go.
    fn starved(&self) -> bool {
        let running = self
            .groups
            .iter()
            .filter(|g| g.sent.as_ref().is_some_and(|w| !w.released()));
        running.count() < self.workers
    }

    /// Sends every chain held back to its group, by where it starts.
    fn release(&mut self, mut send: impl FnMut(Vec<Item>) -> Option<PermitWatch>) -> bool {
        let mut chains: Vec<(u64, Vec<Item>)> = self.chains.drain().collect();
        self.held = 0;
        chains.sort_unstable_by_key(|&(start, _)| start);
        chains.into_iter().all(|(start, items)| {
            by_lineage(items)
                .into_iter()
                .all(|item| self.group(item, Some(start), &mut send))
        })
    }

    /// Adds `item` to its group, and sends the group when it is due.
    fn group(
        &mut self,
        item: Item,
        chain: Option<u64>,
        send: impl FnOnce(Vec<Item>) -> Option<PermitWatch>,
    ) -> bool {
        let n = self.groups.len();
        let group = if n == 1 {
            &mut self.groups[0]
        } else {
            use std::hash::{Hash, Hasher};
            // Fixed keys: the same groups every run. A blob outside the packs
            // goes by its path, where the versions of a file are.
            let mut h = std::hash::DefaultHasher::new();
            match chain {
                Some(start) => start.hash(&mut h),
                None => item.provenance.path.hash(&mut h),
            }
            &mut self.groups[(h.finish() % n as u64) as usize]
        };
        group.bytes += item.held_bytes();
        group.items.push(item);
        let full = group.items.len() >= BLOB_BATCH || group.bytes >= BLOB_BATCH_BYTES;
        let waited_enough = group.items.len() >= BLOB_BATCH * GROUP_AHEAD
            || group.bytes >= BLOB_BATCH_BYTES * GROUP_AHEAD as u64;
        let idle = n == 1 || group.sent.as_ref().is_none_or(PermitWatch::released);
        if full && (idle || waited_enough) {
            return group.send(send);
        }
        true
    }

    /// Sends every chain held back, then what every group holds.
    pub(crate) fn finish(mut self, mut send: impl FnMut(Vec<Item>) -> Option<PermitWatch>) {
        if !self.release(&mut send) {
            return;
        }
        for mut group in self.groups {
            if !group.send(&mut send) {
                return;
            }
        }
    }
}

/// One key's blobs held back (in the walk's order), put lineage by
/// lineage: each version of [`FOCUS_MIN_BYTES`] or more right after the
/// one it modifies, when that is held with it (the type's "Lineages");
/// smaller blobs, whose bases are read only for a finding, keep their
/// place. A key holds the versions of several files (git deltas alike
/// files against one another): in the walk's order they alternate, and by
/// the next version of a large file the reader's caches had let its base
/// go for the versions of the other files read in between. Each lineage
/// keeps the walk's order, and the lineages the order of their first
/// blobs.
fn by_lineage(items: Vec<Item>) -> Vec<Item> {
    let mut first: OidMap<usize> = OidMap::default();
    let mut keyed: Vec<(usize, Item)> = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let lineage = large_version(&item).map_or(i, |(oid, base)| {
                let lineage = base.and_then(|b| first.get(&b).copied()).unwrap_or(i);
                first.insert(oid, lineage);
                lineage
            });
            (lineage, item)
        })
        .collect();
    // Stable: each lineage keeps the walk's order.
    keyed.sort_by_key(|&(lineage, _)| lineage);
    keyed.into_iter().map(|(_, item)| item).collect()
}

/// The id and base of a history blob of [`FOCUS_MIN_BYTES`] or more: one
/// whose base is read before it is scanned, and which the type's
/// "Lineages" plan for.
fn large_version(item: &Item) -> Option<(Oid, Option<Oid>)> {
    match &item.content {
        Content::GitBlob {
            oid, size, base, ..
        } if *size >= FOCUS_MIN_BYTES as u64 => Some((*oid, *base)),
        _ => None,
    }
}

impl BlobGroup {
    fn send(&mut self, send: impl FnOnce(Vec<Item>) -> Option<PermitWatch>) -> bool {
        if self.items.is_empty() {
            return true;
        }
        self.bytes = 0;
        self.sent = send(std::mem::take(&mut self.items));
        self.sent.is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::path::Path;
    use std::sync::Arc;

    use scanner_scheduler::{Budget, Permit};

    use super::*;
    use crate::input::history::Oid;
    use crate::input::{Content, Provenance};

    /// With two workers, the versions of one path go through one group, a
    /// batch at a time: a full group waits for its previous batch unless it
    /// holds GROUP_AHEAD batches' worth; one worker sends as soon as full.
    #[test]
    fn a_group_waits_for_its_previous_batch() {
        let item = |path: &str| Item {
            provenance: Provenance::path(path),
            content: Content::Bytes(vec![b'x'; 10]),
        };
        let budget = Budget::new(0, 0);
        let sent: RefCell<Vec<usize>> = RefCell::default();
        let running: RefCell<Vec<Permit>> = RefCell::default();
        let send = |batch: Vec<Item>| {
            sent.borrow_mut().push(batch.len());
            let permit = budget.acquire(1);
            let watch = permit.watch();
            running.borrow_mut().push(permit);
            Some(watch)
        };
        let main = || item("src/main.rs");

        let mut groups = BlobGroups::new(2);
        for _ in 0..BLOB_BATCH {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(
            *sent.borrow(),
            [BLOB_BATCH],
            "nothing running: sent when full"
        );
        for _ in 0..BLOB_BATCH * GROUP_AHEAD - 1 {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(sent.borrow().len(), 1, "held while the batch before runs");
        assert!(groups.push(main(), None, send));
        assert_eq!(
            sent.borrow()[1],
            BLOB_BATCH * GROUP_AHEAD,
            "sent once it holds so much"
        );
        running.borrow_mut().clear();
        for _ in 0..BLOB_BATCH {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(
            sent.borrow()[2..],
            [BLOB_BATCH],
            "the batch before done: sent when full"
        );
        assert!(groups.push(main(), None, send));
        groups.finish(send);
        assert_eq!(sent.borrow()[3..], [1]);

        let mut groups = BlobGroups::new(1);
        for _ in 0..2 * BLOB_BATCH {
            assert!(groups.push(main(), None, send));
        }
        assert_eq!(
            sent.borrow()[4..],
            [BLOB_BATCH; 2],
            "one worker: sent when full"
        );
    }

    /// A blob of FOCUS_MIN_BYTES or more goes by its base's key (the key the
    /// base went by, itself its base's or its chain's), whatever its own
    /// chain; a smaller one, one whose base went by no key, and anything
    /// not a history blob go by their own chain.
    #[test]
    fn a_large_version_goes_with_its_base() {
        let store = Arc::new(crate::input::history::ObjectStore::new(Path::new(".")));
        let blob = |id: u8, size: usize, base: Option<u8>| Item {
            provenance: Provenance::path("f"),
            content: Content::GitBlob {
                repo: Arc::clone(&store),
                oid: Oid([id; 20]),
                size: size as u64,
                base: base.map(|b| Oid([b; 20])),
            },
        };
        let large = FOCUS_MIN_BYTES;
        let mut groups = BlobGroups::new(2);
        assert_eq!(groups.key(&blob(1, large, None), Some(7)), Some(7));
        assert_eq!(groups.key(&blob(2, large, Some(1)), Some(9)), Some(7));
        assert_eq!(
            groups.key(&blob(3, large, Some(2)), None),
            Some(7),
            "unpacked"
        );
        assert_eq!(
            groups.key(&blob(4, large - 1, Some(3)), Some(9)),
            Some(9),
            "small"
        );
        assert_eq!(
            groups.key(&blob(5, large, Some(4)), Some(9)),
            Some(9),
            "small base"
        );
        assert_eq!(groups.key(&blob(6, large, Some(3)), Some(5)), Some(7));
        assert_eq!(
            groups.key(&blob(8, large, Some(42)), None),
            None,
            "base unknown"
        );
        let bytes = Item {
            provenance: Provenance::path("g"),
            content: Content::Bytes(vec![0; large]),
        };
        assert_eq!(groups.key(&bytes, Some(3)), Some(3));
        // Past LINEAGE_KEPT blobs the keys are forgotten.
        for i in 0..LINEAGE_KEPT as u32 {
            let mut id = [0u8; 20];
            id[..4].copy_from_slice(&i.to_le_bytes());
            id[19] = 0xff;
            let mut item = blob(0, large, None);
            if let Content::GitBlob { oid, .. } = &mut item.content {
                *oid = Oid(id);
            }
            groups.key(&item, Some(11));
        }
        assert_eq!(
            groups.key(&blob(9, large, Some(6)), Some(13)),
            Some(13),
            "forgotten"
        );
    }

    /// A key's blobs held back go lineage by lineage: each large version
    /// right after the one it modifies when that is held too, each lineage
    /// in the walk's order, the lineages in the order of their first blobs;
    /// small blobs keep their place.
    #[test]
    fn held_blobs_go_lineage_by_lineage() {
        let store = Arc::new(crate::input::history::ObjectStore::new(Path::new(".")));
        let sized = |path: &str, id: u8, base: Option<u8>, size: usize| Item {
            provenance: Provenance::path(path),
            content: Content::GitBlob {
                repo: Arc::clone(&store),
                oid: Oid([id; 20]),
                size: size as u64,
                base: base.map(|b| Oid([b; 20])),
            },
        };
        let blob = |path: &str, id: u8, base: Option<u8>| sized(path, id, base, FOCUS_MIN_BYTES);
        let small = |path: &str, id: u8, base: Option<u8>| sized(path, id, base, 100);
        let bytes = Item {
            provenance: Provenance::path("bytes"),
            content: Content::Bytes(vec![0; 4]),
        };
        let walk = vec![
            blob("a1", 1, Some(40)),
            small("s1", 10, None),
            blob("b1", 2, None),
            blob("a2", 3, Some(1)),
            bytes,
            small("s2", 11, Some(10)),
            blob("b2", 4, Some(2)),
            blob("a3", 5, Some(3)),
            blob("c1", 6, Some(41)),
            blob("b3", 7, Some(4)),
            blob("a2'", 8, Some(1)),
            blob("s3", 12, Some(11)),
        ];
        let paths: Vec<String> = by_lineage(walk)
            .iter()
            .map(|i| i.provenance.path.display().to_string())
            .collect();
        assert_eq!(
            paths,
            ["a1", "a2", "a3", "a2'", "s1", "b1", "b2", "b3", "bytes", "s2", "c1", "s3"]
        );
    }

    /// A blob with a chain is held back with its chain's others while the
    /// workers are busy: a chain goes to its group once it holds CHAIN_HELD
    /// blobs, in the walk's order; every chain goes, by where it starts,
    /// when fewer batches run than there are workers, past HELD_MAX blobs
    /// held, and at the end.
    #[test]
    fn chains_are_held_back_while_the_workers_are_busy() {
        let item = |path: String| Item {
            provenance: Provenance::path(path),
            content: Content::Bytes(vec![b'x'; 10]),
        };
        let budget = Budget::new(0, 0);
        let sent: RefCell<Vec<Vec<String>>> = RefCell::default();
        let running: RefCell<Vec<Permit>> = RefCell::default();
        let send = |batch: Vec<Item>| {
            let paths = batch
                .iter()
                .map(|i| i.provenance.path.display().to_string());
            sent.borrow_mut().push(paths.collect());
            let permit = budget.acquire(1);
            let watch = permit.watch();
            running.borrow_mut().push(permit);
            Some(watch)
        };
        let names = |prefix: &str, n: usize| -> Vec<String> {
            (0..n).map(|i| format!("{prefix}{i}")).collect()
        };
        let batches = |paths: &[String]| -> Vec<Vec<String>> {
            paths.chunks(BLOB_BATCH).map(<[String]>::to_vec).collect()
        };

        let mut groups = BlobGroups::new(1);
        // The one worker busy with a batch of blobs outside the packs.
        for path in names("loose", BLOB_BATCH) {
            assert!(groups.push(item(path), None, send));
        }
        assert_eq!(*sent.borrow(), batches(&names("loose", BLOB_BATCH)));
        for i in 0..CHAIN_HELD - 1 {
            assert!(groups.push(item(format!("b{i}")), Some(9), send));
            assert!(groups.push(item(format!("a{i}")), Some(7), send));
        }
        assert_eq!(sent.borrow().len(), 1, "held while the worker is busy");
        assert!(groups.push(item(format!("a{}", CHAIN_HELD - 1)), Some(7), send));
        assert_eq!(
            sent.borrow()[1..],
            batches(&names("a", CHAIN_HELD)),
            "chain 7 full"
        );
        running.borrow_mut().clear();
        assert!(groups.push(item("c0".into()), Some(8), send));
        // The worker done: both chains held go, by where they start.
        let went: Vec<String> = names("c", 1)
            .into_iter()
            .chain(names("b", CHAIN_HELD - 1))
            .collect();
        let full = went.len() / BLOB_BATCH * BLOB_BATCH;
        assert_eq!(sent.borrow()[3..], batches(&went[..full]));
        assert_eq!(groups.held, 0);
        groups.finish(send);
        assert_eq!(
            sent.borrow()[3 + full / BLOB_BATCH..],
            batches(&went[full..])
        );

        // Past HELD_MAX, every chain goes, by where it starts, busy or not.
        sent.borrow_mut().clear();
        let mut groups = BlobGroups::new(1);
        for path in names("loose", BLOB_BATCH) {
            assert!(groups.push(item(path), None, send));
        }
        for i in (0..=HELD_MAX).rev() {
            assert!(groups.push(item(format!("c{i}")), Some(i as u64), send));
        }
        let all: Vec<String> = sent.borrow()[1..].concat();
        assert_eq!(all.len(), HELD_MAX + 1 - (HELD_MAX + 1) % BLOB_BATCH);
        assert_eq!(all, names("c", all.len()), "by chain start");
        assert_eq!(groups.held, 0);
    }
}
