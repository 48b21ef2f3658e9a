//! The pool: workers, handles, the worker loop, and the end of a run.
//!
//! # Termination and shutdown protocol
//!
//! Shared state: the state word `S` (accepting bit + in-flight count, see
//! `state.rs`), the monotonic flag `done`, the sleeper flags (`idle.rs`) and
//! the first panic. A task is *in flight* from the moment its spawn is
//! counted in `S` until it has run or has been dropped.
//!
//! 1. **External spawn** (`ExecutorHandle::spawn`, `spawn_batch`,
//!    `spawn_drain`): one CAS on `S` checks the accepting bit and adds the
//!    count in the same step; refused if the gate is closed (the task is handed back). Only then is
//!    the task pushed onto the injector, and one sleeper (per task, at most
//!    one per worker) is woken.
//! 2. **Internal spawn** (`spawn_local`, `spawn_global` from a running task):
//!    a plain `fetch_add`, no gate check. The running task's own count keeps
//!    `S` above zero, so the run cannot end between the increment and the
//!    push, and work split off before the gate closed must still run after.
//!    Count first, push second: the other order would let a thief run and
//!    complete the child before it was counted, and the count could touch
//!    zero early.
//! 3. **Completion**: after the runner returns (or panics), `fetch_sub` on
//!    `S` (deferred and batched per worker, see "Completion netting"). The
//!    caller that takes the count to zero *with the gate closed* is the one
//!    observer of the end (it sees `prev == exactly what it subtracts, gate
//!    closed`); it sets `done` and unparks every worker.
//! 4. **`join`**: clears the accepting bit with `fetch_and`. If nothing was in
//!    flight, `join` itself is the observer of the end and sets `done`.
//!    Otherwise the last completion of step 3 will. Exactly one of them sees
//!    the end (loom: `loom_completion_vs_join`, `loom_spawn_vs_join_gate`),
//!    and no spawn can be counted after it (step 1 checks the bit in the same
//!    CAS). `join` then joins the threads and merges their metrics.
//! 5. **Workers exit** when they see `done`. In a graceful run the count was
//!    zero, so every queue is empty. Before parking, a worker re-checks `done`
//!    after announcing itself asleep (see `idle.rs`), and `done` is followed by
//!    an unpark of everyone, so no worker sleeps through the end. Parking has
//!    no timeout: the handshake, not a periodic look, wakes a sleeper for
//!    work (a spawn skips its wake only while a worker searches, and that
//!    worker then finds the work, hands the search on, or re-checks before
//!    it sleeps: `idle.rs`).
//! 6. **`shutdown`** (cancel: Ctrl-C, a fatal error): closes the gate as in 4
//!    and sets `done` at once, whatever the count. Workers finish the task
//!    they are running, then drain their own deque and the injector, dropping
//!    tasks unrun (destructors run; each drop counts as a completion, see
//!    `WorkerMetrics::tasks_dropped`). A task still running may spawn after
//!    the drains; `join` drains the injector once more after the threads are
//!    gone, and a worker's deque dies with its thread, so nothing leaks.
//! 7. **Panic**: `catch_unwind` around the runner. The first payload is kept,
//!    the pool cancels as in 6 (no new work after a failure), and the count
//!    is decremented as for any completion, so `join` never hangs on a
//!    panicked task. Tasks are moved into the runner, so nothing runs twice.
//!    `join` returns `Err(TaskPanic)` after all threads have stopped.
//!
//! # Completion netting
//!
//! Step 3 as written costs one contended atomic per task, on the same word
//! the producers CAS. Instead each worker keeps `unpublished`, the number of
//! its completions not yet subtracted from `S`, and
//!
//! * an internal spawn with `unpublished > 0` takes one from it instead of
//!   adding to `S` (the word stays unchanged: one task more in flight, one
//!   completion less owed);
//! * the worker publishes (`fetch_sub` of `unpublished`) as soon as its own
//!   deque is empty, before it looks anywhere else or parks, after a panic,
//!   and on exit.
//!
//! Invariant: `S.count = in-flight + sum of unpublished >= in-flight`, so the
//! count cannot reach zero while a task is in flight; and a worker with
//! nothing local publishes before it can go idle, so once all work is done
//! every worker publishes and the last subtraction sees zero. A
//! split-and-run workload thus touches `S` once per local batch, not twice
//! per task. The bookkeeping is `state::Netting`, which this file calls and
//! the loom models `loom_netting_*` drive (a spawn paid by a completion, a
//! counted spawn stolen and completed before its parent publishes).
//!
//! # Finding work
//!
//! Own deque (LIFO: the most recent split is hot in cache), then the
//! injector (`steal_batch_and_pop`: one lock-free trip moves a batch into the
//! own deque), then the siblings' deques from a random start (one task each,
//! the oldest: for splitting tasks it is the largest piece). The scan repeats
//! while any source answered `Retry` (a lost race, not an empty queue).

use crate::idle::{Idle, Sleepers, Tier};
use crate::loom::park::Parker;
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::Mutex;
use crate::loom::thread::JoinHandle;
use crate::metrics::{MetricsSnapshot, WorkerMetrics};
use crate::rng::XorShift64;
use crate::state::{Netting, StateWord};
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Executor configuration. Start from `ExecutorConfig::default()` and set
/// what you need (`ExecutorConfig { workers: 4, ..Default::default() }` or
/// the chained setters).
#[derive(Clone, Debug)]
pub struct ExecutorConfig {
    /// Number of worker threads (at least 1; 0 is treated as 1). Default 1.
    pub workers: usize,
    /// Seed of the victim-selection RNG (deterministic victim order).
    pub seed: u64,
    /// Idle rounds a searching worker spends spinning before yielding.
    /// Default 16.
    pub spin_iters: u32,
    /// Idle rounds a searching worker spends yielding before it sleeps.
    /// Default 4.
    pub yield_iters: u32,
    /// How long a sleeping worker sleeps at most before looking again.
    /// Default `None`: until woken (wake-ups never depend on a timeout, see
    /// `idle.rs`; a timeout only costs a search per sleeper per period).
    pub park_timeout: Option<Duration>,
    /// Pin worker i to core i (mod the core count). Default off.
    pub pin_threads: bool,
    /// After this many consecutive local spawns, and at a local spawn into
    /// an empty deque, wake a sibling if none searches (0: never). Default
    /// 32.
    pub wake_on_hoard: u32,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            workers: 1,
            seed: 0x853c_49e6_748f_ea9b,
            spin_iters: 16,
            yield_iters: 4,
            park_timeout: None,
            pin_threads: false,
            wake_on_hoard: 32,
        }
    }
}

impl ExecutorConfig {
    /// `workers` threads, other knobs at their defaults.
    pub fn with_workers(workers: usize) -> Self {
        ExecutorConfig {
            workers,
            ..ExecutorConfig::default()
        }
    }
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    pub fn spin_iters(mut self, n: u32) -> Self {
        self.spin_iters = n;
        self
    }
    pub fn yield_iters(mut self, n: u32) -> Self {
        self.yield_iters = n;
        self
    }
    pub fn park_timeout(mut self, d: Duration) -> Self {
        self.park_timeout = Some(d);
        self
    }
    pub fn pin_threads(mut self, yes: bool) -> Self {
        self.pin_threads = yes;
        self
    }
    pub fn wake_on_hoard(mut self, n: u32) -> Self {
        self.wake_on_hoard = n;
        self
    }
}

/// The first panic raised by a task (or by `scratch_init`), returned by
/// [`Executor::join`].
pub struct TaskPanic {
    /// The panic message when the payload was a string.
    pub message: String,
    /// The raw payload, for `std::panic::resume_unwind`.
    pub payload: Box<dyn Any + Send + 'static>,
}

impl TaskPanic {
    fn from_payload(payload: Box<dyn Any + Send + 'static>) -> Self {
        let message = if let Some(s) = payload.downcast_ref::<&'static str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "<non-string panic payload>".to_string()
        };
        TaskPanic { message, payload }
    }
}

impl std::fmt::Debug for TaskPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaskPanic({:?})", self.message)
    }
}

impl std::fmt::Display for TaskPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a task panicked: {}", self.message)
    }
}

impl std::error::Error for TaskPanic {}

struct Shared<T> {
    injector: Injector<T>,
    stealers: Box<[Stealer<T>]>,
    state: StateWord,
    done: AtomicBool,
    sleepers: Sleepers,
    panic: Mutex<Option<TaskPanic>>,
    wake_on_hoard: u32,
}

impl<T> Shared<T> {
    /// Idempotent: only the first call unparks.
    fn signal_done(&self) {
        if !self.done.swap(true, Ordering::SeqCst) {
            self.sleepers.wake_all();
        }
    }

    fn cancel(&self) {
        self.state.close();
        self.signal_done();
    }

    fn complete(&self, n: usize) {
        if n > 0 && self.state.complete(n) {
            self.signal_done();
        }
    }

    fn record_panic(&self, payload: Box<dyn Any + Send + 'static>) {
        let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(TaskPanic::from_payload(payload));
        }
    }

    fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Work another worker could take. Used in the pre-park re-check.
    fn has_visible_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// Drops every task left in the injector; returns how many.
    fn drain_injector(&self) -> usize {
        let mut n = 0;
        loop {
            match self.injector.steal() {
                Steal::Success(t) => {
                    drop(t);
                    n += 1;
                }
                Steal::Retry => continue,
                Steal::Empty => return n,
            }
        }
    }
}

/// The pool. Start here: [`Executor::new`], hand [`Executor::handle`] to
/// producers, then [`Executor::join`].
///
/// Dropping an `Executor` without `join` cancels it (as
/// [`shutdown`](Executor::shutdown)) and waits for the threads.
pub struct Executor<T> {
    shared: Arc<Shared<T>>,
    threads: Vec<JoinHandle<WorkerMetrics>>,
    started: Instant,
}

impl<T: Send + 'static> Executor<T> {
    /// Starts `config.workers` threads. `scratch_init(worker_id)` runs on the
    /// worker's own thread (so `S` need not be `Send`); `runner(task, ctx)`
    /// runs every task.
    ///
    /// # Panics
    /// If the OS refuses to start a thread.
    pub fn new<S, I, R>(config: ExecutorConfig, scratch_init: I, runner: R) -> Self
    where
        S: 'static,
        I: Fn(usize) -> S + Send + Sync + 'static,
        R: Fn(T, &mut WorkerCtx<T, S>) + Send + Sync + 'static,
    {
        let started = Instant::now();
        let n = config.workers.max(1);
        let deques: Vec<Worker<T>> = (0..n).map(|_| Worker::new_lifo()).collect();
        let parkers: Vec<Parker> = (0..n).map(|_| Parker::new()).collect();
        let shared = Arc::new(Shared {
            injector: Injector::new(),
            stealers: deques.iter().map(Worker::stealer).collect(),
            state: StateWord::new(),
            done: AtomicBool::new(false),
            sleepers: Sleepers::new(parkers.iter().map(|p| p.unparker().clone()).collect()),
            panic: Mutex::new(None),
            wake_on_hoard: config.wake_on_hoard,
        });
        let cores = if config.pin_threads {
            core_affinity::get_core_ids().unwrap_or_default()
        } else {
            Vec::new()
        };
        let scratch_init = Arc::new(scratch_init);
        let runner = Arc::new(runner);
        let threads = deques
            .into_iter()
            .zip(parkers)
            .enumerate()
            .map(|(id, (local, parker))| {
                let shared = shared.clone();
                let scratch_init = scratch_init.clone();
                let runner = runner.clone();
                let core = (!cores.is_empty()).then(|| cores[id % cores.len()]);
                let config = config.clone();
                crate::loom::thread::Builder::new()
                    .name(format!("scanner-worker-{id}"))
                    .spawn(move || {
                        if let Some(core) = core {
                            // Best effort: an unpinnable thread still works.
                            core_affinity::set_for_current(core);
                        }
                        let scratch = match catch_unwind(AssertUnwindSafe(|| (*scratch_init)(id))) {
                            Ok(s) => s,
                            Err(payload) => {
                                shared.record_panic(payload);
                                shared.cancel();
                                return WorkerMetrics::default();
                            }
                        };
                        let ctx = WorkerCtx {
                            worker_id: id,
                            scratch,
                            spawner: Spawner {
                                local,
                                shared,
                                local_spawns: Cell::new(0),
                                netting: Netting::new(),
                            },
                        };
                        worker_loop(ctx, parker, &config, &*runner)
                    })
                    .expect("failed to start a worker thread")
            })
            .collect();
        Executor {
            shared,
            threads,
            started,
        }
    }

    /// A cloneable handle for producers outside the pool.
    pub fn handle(&self) -> ExecutorHandle<T> {
        ExecutorHandle {
            shared: self.shared.clone(),
        }
    }

    /// Closes the gate, waits until every task in flight (and everything it
    /// spawns) has run, joins the threads and returns the merged metrics, or
    /// the first panic. After [`shutdown`](Executor::shutdown), returns
    /// promptly (queued tasks are dropped unrun).
    pub fn join(mut self) -> Result<MetricsSnapshot, TaskPanic> {
        if self.shared.state.close() {
            self.shared.signal_done();
        }
        let mut workers = Vec::with_capacity(self.threads.len());
        for t in std::mem::take(&mut self.threads) {
            match t.join() {
                Ok(m) => workers.push(m),
                // Worker code outside the runner does not panic; if it ever
                // does, report it like a task panic rather than lose it.
                Err(payload) => {
                    self.shared.record_panic(payload);
                    workers.push(WorkerMetrics::default());
                }
            }
        }
        // Spawned by a task that was still running when the workers drained
        // (only after a cancel; a graceful end leaves nothing behind).
        let late = self.shared.drain_injector();
        self.shared.complete(late);
        if let Some(w) = workers.first_mut() {
            w.tasks_dropped += late as u64;
        }
        let snapshot = MetricsSnapshot {
            workers,
            wall: self.started.elapsed(),
        };
        let panic = self
            .shared
            .panic
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match panic {
            Some(p) => Err(p),
            None => Ok(snapshot),
        }
    }

    /// Cancels: rejects new spawns, workers stop after their current task;
    /// queued tasks are dropped. `join` then returns promptly.
    pub fn shutdown(&self) {
        self.shared.cancel();
    }
}

impl<T> Drop for Executor<T> {
    fn drop(&mut self) {
        if self.threads.is_empty() {
            return;
        }
        self.shared.cancel();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let late = self.shared.drain_injector();
        self.shared.complete(late);
    }
}

/// Send + Sync + Clone handle for producers outside the pool.
pub struct ExecutorHandle<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for ExecutorHandle<T> {
    fn clone(&self) -> Self {
        ExecutorHandle {
            shared: self.shared.clone(),
        }
    }
}

impl<T> std::fmt::Debug for ExecutorHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorHandle")
            .field("accepting", &self.shared.state.is_accepting())
            .field("in_flight", &self.shared.state.in_flight())
            .finish()
    }
}

impl<T: Send + 'static> ExecutorHandle<T> {
    /// Queues `task` on the injector. `Err(task)` when the executor no longer
    /// accepts work (`join` or `shutdown` was called, or a task panicked).
    pub fn spawn(&self, task: T) -> Result<(), T> {
        if !self.shared.state.try_add_external(1) {
            return Err(task);
        }
        self.shared.injector.push(task);
        self.shared.sleepers.notify();
        Ok(())
    }

    /// All or nothing: either every task is queued or all come back.
    /// Wakes at most one sleeper (as a searcher that, finding work, wakes
    /// the next: see `idle.rs`).
    pub fn spawn_batch(&self, mut tasks: Vec<T>) -> Result<(), Vec<T>> {
        match self.spawn_drain(&mut tasks) {
            true => Ok(()),
            false => Err(tasks),
        }
    }

    /// [`spawn_batch`](Self::spawn_batch) from a buffer the caller keeps:
    /// true when every task was queued, and `tasks` is left empty with its
    /// capacity (a producer that reuses it allocates nothing per batch);
    /// false when refused, and `tasks` is left as it was.
    pub fn spawn_drain(&self, tasks: &mut Vec<T>) -> bool {
        if tasks.is_empty() {
            return true;
        }
        if !self.shared.state.try_add_external(tasks.len()) {
            return false;
        }
        for t in tasks.drain(..) {
            self.shared.injector.push(t);
        }
        self.shared.sleepers.notify();
        true
    }

    pub fn is_accepting(&self) -> bool {
        self.shared.state.is_accepting()
    }

    /// Same as [`Executor::shutdown`].
    pub fn shutdown(&self) {
        self.shared.cancel();
    }

    /// Tasks spawned and not yet finished (a racy snapshot, for progress
    /// display).
    pub fn in_flight(&self) -> usize {
        self.shared.state.in_flight()
    }
}

/// What a running task sees of its worker.
pub struct WorkerCtx<T, S> {
    worker_id: usize,
    scratch: S,
    spawner: Spawner<T>,
}

impl<T: Send + 'static, S> WorkerCtx<T, S> {
    /// 0..workers.
    pub fn worker_id(&self) -> usize {
        self.worker_id
    }
    /// This worker's scratch, built by `scratch_init` on this thread.
    pub fn scratch(&mut self) -> &mut S {
        &mut self.scratch
    }
    /// The scratch and a spawner at the same time.
    pub fn split(&mut self) -> (&mut S, &Spawner<T>) {
        (&mut self.scratch, &self.spawner)
    }
    /// See [`Spawner::spawn_local`].
    pub fn spawn_local(&self, task: T) {
        self.spawner.spawn_local(task)
    }
    /// See [`Spawner::spawn_global`].
    pub fn spawn_global(&self, task: T) {
        self.spawner.spawn_global(task)
    }
    pub fn handle(&self) -> ExecutorHandle<T> {
        ExecutorHandle {
            shared: self.spawner.shared.clone(),
        }
    }
}

/// Spawning half of a [`WorkerCtx`] (see [`WorkerCtx::split`]). Internal
/// spawns are never refused: the running task keeps the run alive, and work
/// split off a task belongs to that task.
pub struct Spawner<T> {
    local: Worker<T>,
    shared: Arc<Shared<T>>,
    local_spawns: Cell<u32>,
    /// Completions of this worker not yet subtracted from the state word
    /// (see "Completion netting" in the module doc).
    netting: Netting,
}

impl<T: Send + 'static> Spawner<T> {
    /// Pushes onto this worker's deque: no lock. This worker pops
    /// it next (LIFO); idle siblings steal the oldest entries first (FIFO),
    /// which is why a splitting task should push the *upper* half of its range
    /// and keep working on the lower. A spawn into an empty deque, and every
    /// `wake_on_hoard`-th spawn after it, notifies (wakes a sleeping
    /// sibling when none searches), so a hoard does not sit behind one
    /// worker while the others sleep.
    pub fn spawn_local(&self, task: T) {
        self.netting.on_spawn(&self.shared.state);
        let was_empty = self.local.is_empty();
        self.local.push(task);
        let k = self.shared.wake_on_hoard;
        if k > 0 {
            let c = if was_empty {
                k
            } else {
                self.local_spawns.get() + 1
            };
            if c >= k {
                self.local_spawns.set(0);
                self.shared.sleepers.notify();
            } else {
                self.local_spawns.set(c);
            }
        }
    }

    /// Pushes onto the global injector and notifies (wakes a sleeper when
    /// none searches).
    pub fn spawn_global(&self, task: T) {
        self.netting.on_spawn(&self.shared.state);
        self.shared.injector.push(task);
        self.shared.sleepers.notify();
    }

    /// Subtracts the unpublished completions from the state word; the one
    /// that ends the run signals the end.
    fn publish(&self) {
        if self.netting.publish(&self.shared.state) {
            self.shared.signal_done();
        }
    }
}

#[derive(Clone, Copy)]
enum Source {
    Local,
    Injector,
    Stolen,
}

fn find_task<T: Send + 'static>(
    spawner: &Spawner<T>,
    me: usize,
    rng: &mut XorShift64,
    m: &mut WorkerMetrics,
) -> Option<(T, Source)> {
    let local = &spawner.local;
    let shared = &*spawner.shared;
    if let Some(t) = local.pop() {
        return Some((t, Source::Local));
    }
    // Out of local work: publish completions before looking elsewhere, so
    // the run can end (and never with work of ours unaccounted for).
    spawner.publish();
    let n = shared.stealers.len();
    loop {
        let mut retry = false;
        match shared.injector.steal_batch_and_pop(local) {
            Steal::Success(t) => return Some((t, Source::Injector)),
            Steal::Retry => retry = true,
            Steal::Empty => {}
        }
        if n > 1 {
            let start = rng.below(n - 1);
            for k in 0..n - 1 {
                let mut v = (start + k) % (n - 1);
                if v >= me {
                    v += 1;
                }
                m.steal_attempts += 1;
                match shared.stealers[v].steal() {
                    Steal::Success(t) => {
                        m.steal_successes += 1;
                        return Some((t, Source::Stolen));
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
        }
        if !retry {
            return None;
        }
    }
}

fn worker_loop<T, S, R>(
    mut ctx: WorkerCtx<T, S>,
    parker: Parker,
    config: &ExecutorConfig,
    runner: &R,
) -> WorkerMetrics
where
    T: Send + 'static,
    R: Fn(T, &mut WorkerCtx<T, S>),
{
    let born = Instant::now();
    let me = ctx.worker_id;
    let shared = ctx.spawner.shared.clone();
    let mut rng = XorShift64::for_worker(config.seed, me);
    let mut m = WorkerMetrics::default();
    let mut idle = Idle::default();
    // Start of the current idle episode. Timing episodes rather than tasks
    // keeps `Instant::now` off the path of back-to-back local tasks.
    let mut idle_since: Option<Instant> = Some(born);
    while !shared.is_done() {
        // Searching (an idle episode under way): probe the queues with plain
        // loads first, and steal only when something is there, so that a
        // search costs no failed steal per sibling per round.
        let searched = if idle_since.is_some() && !shared.has_visible_work() {
            None
        } else {
            find_task(&ctx.spawner, me, &mut rng, &mut m)
        };
        let Some((task, source)) = searched else {
            idle_since.get_or_insert_with(Instant::now);
            match idle.empty(&shared.sleepers, config.spin_iters, config.yield_iters) {
                Tier::Spin(hints) => {
                    for _ in 0..hints {
                        std::hint::spin_loop();
                    }
                }
                Tier::Yield => crate::loom::thread::yield_now(),
                Tier::Park => {
                    test_hooks::widen_pre_park_window();
                    let slept = shared.sleepers.sleep(me, &parker, config.park_timeout, || {
                        shared.is_done() || shared.has_visible_work()
                    });
                    if slept.parked {
                        m.parks += 1;
                    }
                    idle.slept(slept);
                }
            }
            continue;
        };
        idle.found(&shared.sleepers);
        if let Some(since) = idle_since.take() {
            m.idle += since.elapsed();
        }
        match source {
            Source::Local => m.tasks_local += 1,
            Source::Injector => m.tasks_injector += 1,
            Source::Stolen => m.tasks_stolen += 1,
        }
        // A batch from the injector (or a thief's catch) may be more than
        // this worker should keep while siblings sleep: pass the wake on.
        if !matches!(source, Source::Local)
            && shared.sleepers.sleeping() > 0
            && !ctx.spawner.local.is_empty()
        {
            shared.sleepers.notify();
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| runner(task, &mut ctx)));
        let sp = &ctx.spawner;
        sp.netting.on_complete();
        if let Err(payload) = outcome {
            shared.record_panic(payload);
            shared.cancel();
            sp.publish();
        }
    }
    idle.exit(&shared.sleepers);
    if let Some(since) = idle_since.take() {
        m.idle += since.elapsed();
    }
    // Cancelled (or finished, then both drains find nothing): drop what is
    // left so destructors run and permits held by queued tasks return.
    let mut dropped = 0;
    while let Some(t) = ctx.spawner.local.pop() {
        drop(t);
        dropped += 1;
    }
    dropped += shared.drain_injector();
    ctx.spawner.publish();
    shared.complete(dropped);
    m.tasks_dropped = dropped as u64;
    m.busy = born.elapsed().saturating_sub(m.idle);
    m
}

/// Test-only widening of the race window between "search found nothing"
/// and "announced asleep", so the lost-wake-up test hits it every few rounds
/// instead of once in a few hundred thousand. Compiled out of normal builds.
mod test_hooks {
    #[cfg(all(test, not(loom)))]
    pub(super) static PRE_PARK_SPINS: std::sync::atomic::AtomicU32 =
        std::sync::atomic::AtomicU32::new(0);

    #[inline(always)]
    pub(super) fn widen_pre_park_window() {
        #[cfg(all(test, not(loom)))]
        for _ in 0..PRE_PARK_SPINS.load(std::sync::atomic::Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// The lost-wake-up test with the race window held open: one worker
    /// that parks at once with a 60 s timeout, a producer that spawns again
    /// at delays swept across the worker's way from "task done" to "parked".
    /// Without the re-check after `announce` this fails within the first
    /// few thousand rounds (checked by deleting it: failed at rounds 2, 143, 1020); with it, it must pass.
    #[test]
    fn no_lost_wakeup_with_widened_window() {
        test_hooks::PRE_PARK_SPINS.store(1_000, Ordering::Relaxed);
        let finished = Arc::new(AtomicU32::new(0));
        let f = finished.clone();
        let cfg = ExecutorConfig::with_workers(1)
            .spin_iters(0)
            .yield_iters(0)
            .park_timeout(Duration::from_secs(60));
        let ex = Executor::new(
            cfg,
            |_| (),
            move |i: u32, _: &mut WorkerCtx<u32, ()>| {
                f.store(i, Ordering::Release);
            },
        );
        let h = ex.handle();
        for round in 1..=8_000u32 {
            h.spawn(round).unwrap();
            let deadline = Instant::now() + Duration::from_secs(5);
            while finished.load(Ordering::Acquire) != round {
                std::thread::yield_now();
                assert!(Instant::now() < deadline, "lost wake-up in round {round}");
            }
            for _ in 0..(round * 13) % 2_000 {
                std::hint::spin_loop();
            }
        }
        test_hooks::PRE_PARK_SPINS.store(0, Ordering::Relaxed);
        assert_eq!(ex.join().unwrap().total().tasks(), 8_000);
    }
}
