//! The pipeline's one [`Emit`]: every source's items become tasks here.
//!
//! [`Emitter`] applies, for every source, the decisions the
//! [`crate::input::emit`] docs list: the shard ([`Shard`], and the
//! [`Planner`] for a walk), the scope for what a source listed itself, and
//! the budget ([`Feeder`]: a task permit, and the bytes an in-memory item
//! holds). It runs on the caller's thread, the producer.

use std::path::{Path, PathBuf};

use crossbeam_channel::Sender;
use scanner_scheduler::{Budget, ExecutorHandle, Permit, PermitWatch};

use super::sink::Msg;
use super::{StopHandle, Task};
use crate::input::emit::{Emit, Key};
use crate::input::skip::{Skip, SkipCounts};
use crate::input::walk::DirTask;
use crate::input::{Item, Scope};
use crate::shard::{Planner, Shard};

/// Tasks handed to the injector at once: fewer wakeups and CASes than one by
/// one, small enough that workers start at once.
const BATCH: usize = 16;

/// Turns items into batches of tasks under the budget.
struct Feeder<'a> {
    budget: &'a Budget,
    exec: &'a ExecutorHandle<Task>,
    stop: &'a StopHandle,
    batch: Vec<Task>,
    /// Items queued (`--stats-json`'s `producer.items`).
    items: u64,
}

impl Feeder<'_> {
    /// Queues `item`; false once the scan is stopping.
    fn push(&mut self, item: Item) -> bool {
        self.items += 1;
        let bytes = item.held_bytes();
        self.queue(bytes, |permit| Task::Item { item, permit })
    }

    /// Queues `items` as one task, charged their bytes together, and sends
    /// it to the workers at once. `None` once the scan is stopping, else a
    /// watch that tells when the task is done.
    fn send_batch(&mut self, items: Vec<Item>) -> Option<PermitWatch> {
        self.items += items.len() as u64;
        let bytes = items.iter().map(Item::held_bytes).sum();
        let mut watch = None;
        let going = self.queue(bytes, |permit| {
            watch = Some(permit.watch());
            Task::Batch { items, permit }
        });
        self.flush();
        watch.filter(|_| going)
    }

    /// Takes a permit for `bytes` and queues the task made with it.
    fn queue(&mut self, bytes: u64, task: impl FnOnce(Permit) -> Task) -> bool {
        if self.stop.is_stopped() {
            return false;
        }
        // The unsent batch holds permits: when the budget is full, spawn it
        // before blocking, or the source could wait for permits only its own
        // batch holds (a few large blobs against the byte limit). It also
        // gets the batch to idle workers at once.
        let permit = match self.budget.try_acquire(bytes) {
            Some(p) => p,
            None => {
                self.flush();
                match self.budget.acquire_open(bytes) {
                    Some(p) => p,
                    None => return false,
                }
            }
        };
        self.batch.push(task(permit));
        if self.batch.len() >= BATCH {
            self.flush();
        }
        !self.stop.is_stopped()
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if self
            .exec
            // A full-size batch at once: `take` left an empty Vec that grew
            // by doubling, three reallocations per batch on the producer.
            .spawn_batch(std::mem::replace(
                &mut self.batch,
                Vec::with_capacity(BATCH),
            ))
            .is_err()
        {
            self.stop.stop();
        }
    }
}

/// The [`Emit`] of a scan: scope, shard and budget, once for every source.
pub(super) struct Emitter<'a> {
    feeder: Feeder<'a>,
    scope: &'a Scope,
    shard: Option<Shard>,
    /// A walk's files with `--shard`: placed by size once the walk is whole.
    planner: Option<Planner>,
    /// `--binary` (the planner weighs a binary file by what is read of it).
    binary: bool,
    tx: &'a Sender<Msg>,
    workers: usize,
    /// A walk's directories go to the workers (`super::dirs`).
    splits_walk: bool,
    skips: SkipCounts,
}

impl<'a> Emitter<'a> {
    pub(super) fn new(
        budget: &'a Budget,
        exec: &'a ExecutorHandle<Task>,
        stop: &'a StopHandle,
        tx: &'a Sender<Msg>,
        opts: &'a super::ScanOptions,
    ) -> Emitter<'a> {
        Emitter {
            feeder: Feeder {
                budget,
                exec,
                stop,
                batch: Vec::with_capacity(BATCH),
                items: 0,
            },
            scope: &opts.scope,
            shard: opts.shard,
            planner: None,
            binary: opts.binary,
            tx,
            workers: opts.threads.max(1),
            splits_walk: super::dirs::splits(opts),
            skips: SkipCounts::default(),
        }
    }

    /// The source is done: queues what the planner placed here, sends what
    /// is queued. Returns the skips counted and the items queued.
    pub(super) fn finish(mut self) -> (SkipCounts, u64) {
        if let Some(planner) = self.planner.take() {
            for item in planner.finish() {
                if !self.feeder.push(item) {
                    break;
                }
            }
        }
        self.feeder.flush();
        (self.skips, self.feeder.items)
    }

    /// Whether this shard owns the item at `path`: the one place a shard
    /// decides, but for a walk's files, which the [`Planner`] places.
    fn owns(&self, path: &Path, key: Key<'_>) -> bool {
        let Some(shard) = self.shard else {
            return true;
        };
        match key {
            Key::Walked { roots } => {
                debug_assert!(false, "a walked file is placed by the planner");
                shard.owns_path(path, roots)
            }
            Key::Listed => shard.owns_path(path, &[]),
            Key::Blob(id) => shard.owns_key(id),
        }
    }
}

impl Emit for Emitter<'_> {
    fn item(&mut self, item: Item, key: Key<'_>) -> bool {
        if let (Key::Walked { roots }, Some(shard)) = (key, self.shard) {
            let binary = self.binary;
            self.planner
                .get_or_insert_with(|| Planner::new(shard, roots, binary))
                .offer(item);
            return !self.stopped();
        }
        if !self.admits(&item.provenance.path, key) {
            return !self.stopped();
        }
        self.feeder.push(item)
    }

    fn admits(&mut self, path: &Path, key: Key<'_>) -> bool {
        // Shard first: another shard's input is not a skip of this one.
        if !self.owns(path, key) {
            return false;
        }
        if matches!(key, Key::Walked { .. }) {
            return true;
        }
        match self.scope.check_listed(path) {
            Some(skip) => {
                self.skips.add(skip, 1);
                false
            }
            None => true,
        }
    }

    fn send_batch(&mut self, items: Vec<Item>) -> Option<PermitWatch> {
        self.feeder.send_batch(items)
    }

    fn skip(&mut self, reason: Skip, n: u64) {
        self.skips.add(reason, n);
    }

    fn warn(&mut self, path: PathBuf, reason: String, is_error: bool) {
        let _ = self.tx.send(Msg::Warning {
            path,
            reason,
            is_error,
        });
    }

    fn stopped(&self) -> bool {
        self.feeder.stop.is_stopped()
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn splits_walk(&self) -> bool {
        self.splits_walk
    }

    fn dir(&mut self, dir: DirTask) -> bool {
        self.feeder.queue(0, |permit| Task::Dir { dir, permit })
    }
}
