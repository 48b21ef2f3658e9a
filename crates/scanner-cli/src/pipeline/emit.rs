//! The pipeline's emitters: the producer's [`Emitter`] (the one [`Emit`]),
//! and the workers' [`WorkerEmitter`].
//!
//! [`Emitter`] applies, for every source, the decisions the
//! [`crate::input::emit`] docs list: the shard ([`Shard`], and the
//! [`Planner`] for a walk), the scope for what a source listed itself, and
//! the budget ([`Feeder`]: a task permit, and the bytes an in-memory item
//! holds). It runs on the caller's thread, the producer, and blocks while
//! the budget is full.
//!
//! [`WorkerEmitter`] is what a worker hands on while it runs a task that
//! produces more work: a directory task of the split walk (`super::dirs`)
//! and an archive walk (`worker::scan_archive`). It counts their skips into
//! the run's [`Tally`], sends their warnings, tells them when the scan
//! stops, and queues their tasks on the worker's own deque: under a permit
//! the task already holds, or one the members budget has room for now, or
//! not at all (the caller then does the work itself). It never blocks: a
//! worker waiting for permits could be waiting for the tasks queued behind
//! it on its own deque. Why it is not an [`Emit`]: the [`crate::input::emit`]
//! docs, "Who emits, and who does not".

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crossbeam_channel::Sender;
use scanner_scheduler::{Budget, ExecutorHandle, Permit, PermitWatch, Spawner};

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
///
/// An item that holds no bytes in memory (a file, a stream) takes its task
/// permit from a permit of [`BATCH`] tasks taken at once
/// ([`Budget::try_acquire_tasks`]): one lock and one allocation per batch,
/// not per item, and the budget's bound still holds (the batch's permits
/// return when its last item is done). An item that holds bytes gets a
/// permit of its own, so that its bytes return as soon as it is done.
struct Feeder<'a> {
    budget: &'a Budget,
    exec: &'a ExecutorHandle<Task>,
    stop: &'a StopHandle,
    /// The tasks not yet sent; sent from this buffer, which keeps its
    /// capacity (`ExecutorHandle::spawn_drain`).
    batch: Vec<Task>,
    /// A permit of several tasks and how many of them are not yet handed
    /// to a task. Dropped before the feeder blocks on the budget: it must
    /// not wait for permits it holds itself.
    shared: Option<(Permit, usize)>,
    /// Items queued (`--stats-json`'s `producer.items`).
    items: u64,
}

impl Feeder<'_> {
    /// Queues `item`; false once the scan is stopping.
    fn push(&mut self, item: Item) -> bool {
        self.items += 1;
        let bytes = item.held_bytes();
        if bytes > 0 {
            return self.queue(bytes, |permit| Task::Item { item, permit });
        }
        if self.stop.is_stopped() {
            return false;
        }
        let permit = match self.shared.as_mut() {
            Some((permit, left)) if *left > 0 => {
                *left -= 1;
                permit.clone()
            }
            _ => {
                self.shared = None;
                let Some(permit) = self.permit(BATCH, 0) else {
                    return false;
                };
                // The budget may have granted fewer (a pool of fewer).
                let left = BATCH.min(self.budget.max_tasks()) - 1;
                self.shared = Some((permit.clone(), left));
                permit
            }
        };
        self.send(Task::Item { item, permit })
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
        let Some(permit) = self.permit(1, bytes) else {
            return false;
        };
        self.send(task(permit))
    }

    /// Adds `task` to the batch, sent once full; false once the scan is
    /// stopping.
    fn send(&mut self, task: Task) -> bool {
        self.batch.push(task);
        if self.batch.len() >= BATCH {
            self.flush();
        }
        !self.stop.is_stopped()
    }

    /// A permit for `tasks` tasks and `bytes`, blocking while the budget
    /// is full; `None` once the scan is stopping.
    fn permit(&mut self, tasks: usize, bytes: u64) -> Option<Permit> {
        if let Some(p) = self.budget.try_acquire_tasks(tasks, bytes) {
            return Some(p);
        }
        // The unsent batch holds permits, and so does the shared permit's
        // rest: when the budget is full, spawn the batch and let go of the
        // rest before blocking, or the source could wait for permits only
        // it holds (a few large blobs against the byte limit). It also gets
        // the batch to idle workers at once.
        self.finish();
        self.budget.acquire_tasks_open(tasks, bytes)
    }

    /// Sends what is queued and lets go of the rest of a shared permit:
    /// before the feeder blocks, and when its source is done.
    fn finish(&mut self) {
        self.shared = None;
        self.flush();
    }

    fn flush(&mut self) {
        // Sent from the buffer, which keeps its capacity: no allocation per
        // batch on the producer (a fresh full-size Vec was 9% of its clock).
        if !self.exec.spawn_drain(&mut self.batch) {
            self.batch.clear();
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
    /// A walk's directories go to the workers (`super::dirs`): with more
    /// than one worker, and no `--shard` (whose planner needs the whole
    /// walk before it places a file).
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
                shared: None,
                items: 0,
            },
            scope: &opts.scope,
            shard: opts.shard,
            planner: None,
            binary: opts.binary,
            tx,
            workers: opts.threads.max(1),
            // Where the walk can be split (`walk::can_split`): see `super::dirs`.
            splits_walk: opts.threads > 1 && opts.shard.is_none(),
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
        self.feeder.finish();
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
        if !self.admits(&item.provenance.scope_path(), key) {
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
        in_scope(self.scope, path, &mut self.skips)
    }

    fn scope(&self) -> Option<&Scope> {
        Some(self.scope)
    }

    fn send_batch(&mut self, items: Vec<Item>) -> Option<PermitWatch> {
        self.feeder.send_batch(items)
    }

    fn skip(&mut self, reason: Skip, n: u64) {
        self.skips.add(reason, n);
    }

    fn warn(&mut self, path: PathBuf, reason: String, is_error: bool) {
        send_warning(self.tx, path, reason, is_error);
    }

    fn not_scanned(&mut self, path: PathBuf, reason: Skip) {
        let _ = self.tx.send(Msg::NotScanned { path, reason });
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

/// Whether `path`, listed by a source, is in `scope`; when not, counts its
/// skip in `skips`.
fn in_scope(scope: &Scope, path: &Path, skips: &mut SkipCounts) -> bool {
    match scope.check_listed(path) {
        Some(skip) => {
            skips.add(skip, 1);
            false
        }
        None => true,
    }
}

/// Sends the sink a warning, printed as `scanner: warning: <path>: <reason>`
/// ([`Emit::warn`]).
pub(super) fn send_warning(tx: &Sender<Msg>, path: PathBuf, reason: String, is_error: bool) {
    // A send fails only when the sink thread is gone (it failed): nothing
    // to tell anyone then.
    let _ = tx.send(Msg::Warning {
        path,
        reason,
        is_error,
    });
}

/// What the workers' own sources dropped and queued in one run, summed:
/// the skips of the split walk's directory tasks and of archive members
/// out of scope, and the files the directory tasks queued. Added to the
/// producer's once the workers are done.
#[derive(Default)]
pub struct Tally {
    skips: Mutex<SkipCounts>,
    items: AtomicU64,
}

impl Tally {
    /// The skip counts summed so far.
    pub(super) fn skips(&self) -> SkipCounts {
        self.skips.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The files queued by directory tasks so far.
    pub(super) fn items(&self) -> u64 {
        self.items.load(Ordering::Relaxed)
    }
}

/// A worker's emitter, for the task it is running (see the module docs):
/// made for the task, dropped with it. Its skips are counted here and
/// added to the run's [`Tally`] when it is dropped: one lock per task that
/// skipped anything, none per entry.
pub(super) struct WorkerEmitter<'a> {
    spawner: &'a Spawner<Task>,
    /// Bytes of archive members queued and not yet scanned, for the whole
    /// run (`worker::Shared::members`): only ever `try_acquire`d.
    members: &'a Budget,
    /// Another worker could take what is queued here.
    shared: bool,
    scope: &'a Scope,
    tx: &'a Sender<Msg>,
    stop: &'a StopHandle,
    tally: &'a Tally,
    skips: SkipCounts,
}

impl<'a> WorkerEmitter<'a> {
    pub(super) fn new(
        spawner: &'a Spawner<Task>,
        opts: &'a super::ScanOptions,
        members: &'a Budget,
        tx: &'a Sender<Msg>,
        stop: &'a StopHandle,
        tally: &'a Tally,
    ) -> WorkerEmitter<'a> {
        WorkerEmitter {
            spawner,
            members,
            shared: opts.threads > 1,
            scope: &opts.scope,
            tx,
            stop,
            tally,
            skips: SkipCounts::default(),
        }
    }

    /// As [`Emit::admits`] for a path the task lists itself (an archive
    /// member): whether it is in scope; when not, its skip is counted. No
    /// shard: what a worker finds belongs to the shard of the input it was
    /// found in.
    pub(super) fn admits(&mut self, path: &Path) -> bool {
        in_scope(self.scope, path, &mut self.skips)
    }

    /// Counts every skip of `skips`.
    pub(super) fn skips(&mut self, skips: &SkipCounts) {
        self.skips.merge(skips);
    }

    /// As [`Emit::warn`].
    pub(super) fn warn(&self, path: PathBuf, reason: String, is_error: bool) {
        send_warning(self.tx, path, reason, is_error);
    }

    /// As [`Emit::not_scanned`].
    pub(super) fn not_scanned(&self, path: PathBuf, reason: Skip) {
        let _ = self.tx.send(Msg::NotScanned { path, reason });
    }

    /// As [`Emit::stopped`]: a task that sees it queues nothing more.
    pub(super) fn stopped(&self) -> bool {
        self.stop.is_stopped()
    }

    /// Counts `n` inputs queued as a walk's files (`--stats-json`'s
    /// `producer.items`, which a serial walk counts on the producer).
    pub(super) fn queued(&self, n: usize) {
        self.tally.items.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Queues `task` on this worker's deque under a permit the running
    /// task already holds (a clone of it): nothing is acquired, so nothing
    /// waits.
    pub(super) fn spawn(&self, task: Task) {
        self.spawner.spawn_local(task);
    }

    /// Queues the task `task` makes with a permit for `bytes` of the
    /// members budget, if another worker could take it and the budget has
    /// room now; true if queued. False: nothing was queued, and the caller
    /// does the work itself, now (that bounds what is read ahead).
    pub(super) fn try_spawn(&self, bytes: u64, task: impl FnOnce(Permit) -> Task) -> bool {
        // With one worker nobody could steal it: no point holding it.
        let permit = self
            .shared
            .then(|| self.members.try_acquire(bytes))
            .flatten();
        match permit {
            Some(permit) => {
                self.spawner.spawn_local(task(permit));
                true
            }
            None => false,
        }
    }
}

impl Drop for WorkerEmitter<'_> {
    fn drop(&mut self) {
        if self.skips.total() > 0 {
            let mut skips = self.tally.skips.lock().unwrap_or_else(|e| e.into_inner());
            skips.merge(&self.skips);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use scanner_scheduler::{Executor, ExecutorConfig, WorkerCtx};

    use super::*;
    use crate::input::{Content, Provenance};

    /// Files share a permit of several tasks, clamped to a budget of 3;
    /// in-memory items among them get their own. The feeder lets go of
    /// the rest of a shared permit before it blocks (else it would wait
    /// for the tasks it holds itself: the 60-byte items wait for the one
    /// before them, and the first waits for the shared permit's 3), every
    /// item runs once, and never more than 3 tasks are out.
    #[test]
    fn files_share_a_permit_and_the_feeder_never_waits_on_its_own() {
        let ran = Arc::new(AtomicU64::new(0));
        let exec = {
            let ran = ran.clone();
            Executor::new(
                ExecutorConfig::with_workers(1),
                |_| (),
                move |task: Task, _: &mut WorkerCtx<Task, ()>| {
                    if let Task::Item { .. } = task {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        ran.fetch_add(1, Ordering::Relaxed);
                    }
                },
            )
        };
        let budget = Budget::new(3, 100);
        let (done_tx, done_rx) = crossbeam_channel::bounded(1);
        {
            let (handle, budget) = (exec.handle(), budget.clone());
            std::thread::spawn(move || {
                let stop = StopHandle::default();
                let mut feeder = Feeder {
                    budget: &budget,
                    exec: &handle,
                    stop: &stop,
                    batch: Vec::with_capacity(BATCH),
                    shared: None,
                    items: 0,
                };
                for i in 0..40 {
                    let content = match i % 5 {
                        4 => Content::Bytes(vec![b'x'; 60]),
                        _ => Content::File(format!("f{i}").into()),
                    };
                    let item = Item {
                        provenance: Provenance::path(format!("f{i}")),
                        content,
                    };
                    assert!(feeder.push(item));
                }
                feeder.finish();
                let _ = done_tx.send(feeder.items);
            });
        }
        let queued = done_rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the feeder waited for permits it held");
        exec.join().unwrap();
        assert_eq!(queued, 40);
        assert_eq!(ran.load(Ordering::Relaxed), 40);
        assert_eq!(budget.peak().0, 3);
        assert_eq!(budget.in_flight(), (0, 0));
    }

    /// A worker's emitter never blocks: it queues a task while the members
    /// budget has room and another worker could take it, and otherwise
    /// says no at once (the caller then does the work itself), even when
    /// the permits it lacks are held by a task queued behind it on the
    /// only worker. Its skips reach the run's tally when it is dropped, its
    /// warnings the sink.
    #[test]
    fn the_worker_emitter_queues_only_what_fits_and_never_blocks() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let tally = Arc::new(Tally::default());
        let answers = Arc::new(Mutex::new(Vec::new()));
        let queued_ran = Arc::new(AtomicU64::new(0));
        let scope = Scope::new(Path::new("."), &["vendor/".into()], None, None).unwrap();
        let exec = {
            let (tally, answers, ran) = (tally.clone(), answers.clone(), queued_ran.clone());
            let members = Budget::new(0, 100);
            let stop = StopHandle::default();
            Executor::new(
                ExecutorConfig::default(),
                |_| (),
                move |task: Task, ctx: &mut WorkerCtx<Task, ()>| {
                    let Task::Item { .. } = task else {
                        ran.fetch_add(1, Ordering::Relaxed);
                        return;
                    };
                    let (_, spawner) = ctx.split();
                    let mut answers = answers.lock().unwrap();
                    let batch = |permit| Task::Batch {
                        items: Vec::new(),
                        permit,
                    };
                    for threads in [2, 1] {
                        let opts = super::super::ScanOptions {
                            threads,
                            scope: scope.clone(),
                            ..Default::default()
                        };
                        let mut out =
                            WorkerEmitter::new(spawner, &opts, &members, &tx, &stop, &tally);
                        answers.push(out.try_spawn(60, batch));
                        answers.push(out.try_spawn(60, batch));
                        answers.push(out.admits(Path::new("a.tar!src/vendor/a.env")));
                        answers.push(out.admits(Path::new("a.tar!app/b.env")));
                    }
                    WorkerEmitter::new(spawner, &Default::default(), &members, &tx, &stop, &tally)
                        .warn("a.tar".into(), "why".into(), true);
                },
            )
        };
        let seed = Item {
            provenance: Provenance::path("seed"),
            content: Content::Bytes(Vec::new()),
        };
        let permit = Budget::new(0, 0).try_acquire(0).unwrap();
        assert!(exec
            .handle()
            .spawn(Task::Item { item: seed, permit })
            .is_ok());
        exec.join().unwrap();
        // Two workers: the first batch fits, the second does not (the first
        // holds 60 of 100 bytes until it runs, after this task). One worker:
        // nobody could take it.
        assert_eq!(
            *answers.lock().unwrap(),
            [true, false, false, true, false, false, false, true]
        );
        assert_eq!(queued_ran.load(Ordering::Relaxed), 1);
        assert_eq!(tally.skips().get(Skip::Excluded), 2);
        assert_eq!(tally.skips().total(), 2);
        match rx.try_recv() {
            Ok(Msg::Warning {
                path,
                reason,
                is_error: true,
            }) => assert_eq!((path.to_str(), reason.as_str()), (Some("a.tar"), "why")),
            _ => panic!("no warning"),
        }
    }
}
