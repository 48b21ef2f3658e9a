//! [`BlobGroups`]: how the history source spreads its blobs over the workers.

use scanner_scheduler::PermitWatch;

use crate::input::Item;

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
/// The groups hold at most `GROUPS_PER_WORKER × GROUP_AHEAD × BLOB_BATCH`
/// items per worker (paths and ids, no contents), and the order of the
/// batches changes nothing in what is reported: the sink orders the
/// findings.
pub(crate) struct BlobGroups {
    groups: Vec<BlobGroup>,
}

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
        }
    }

    /// Adds a history blob (`Content::GitBlob`) whose delta chain starts at
    /// `chain`, and sends its group through `send` when it is due (`send`
    /// returns a watch on the batch's task, `None` once the scan is
    /// stopping). False once the scan is stopping.
    pub(crate) fn push(
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

    /// Sends what every group holds.
    pub(crate) fn finish(self, mut send: impl FnMut(Vec<Item>) -> Option<PermitWatch>) {
        for mut group in self.groups {
            if !group.send(&mut send) {
                return;
            }
        }
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

    use scanner_scheduler::{Budget, Permit};

    use super::*;
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
}
