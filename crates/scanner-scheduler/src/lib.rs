//! Work-stealing executor for scanner.
//!
//! CONTRACT STUB: the public API below is what `scanner-cli` builds against.
//! The scheduler issue replaces the bodies (and may add to the API), but keeps
//! these names and signatures compatible.

use std::any::Any;
use std::time::Duration;

/// Executor configuration.
#[derive(Clone, Debug)]
pub struct ExecutorConfig {
    /// Number of worker threads (at least 1).
    pub workers: usize,
    /// Seed of the victim-selection RNG (deterministic runs).
    pub seed: u64,
    /// Idle rounds spent spinning before yielding.
    pub spin_iters: u32,
    /// Idle rounds spent yielding before parking.
    pub yield_iters: u32,
    /// How long a parked worker sleeps before looking again.
    pub park_timeout: Duration,
    /// Pin worker i to core i (opt-in).
    pub pin_threads: bool,
    /// After this many consecutive local spawns, wake a sibling.
    pub wake_on_hoard: u32,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            workers: 1,
            seed: 0x853c_49e6_748f_ea9b,
            spin_iters: 64,
            yield_iters: 16,
            park_timeout: Duration::from_millis(1),
            pin_threads: false,
            wake_on_hoard: 32,
        }
    }
}

/// The first panic raised by a task, returned by [`Executor::join`].
pub struct TaskPanic {
    /// The panic message when the payload was a string.
    pub message: String,
    /// The raw payload, for `std::panic::resume_unwind`.
    pub payload: Box<dyn Any + Send + 'static>,
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

/// Per-worker counters.
#[derive(Clone, Debug, Default)]
pub struct WorkerMetrics {
    pub tasks_local: u64,
    pub tasks_injector: u64,
    pub tasks_stolen: u64,
    pub steal_attempts: u64,
    pub steal_successes: u64,
    pub parks: u64,
    pub busy: Duration,
    pub idle: Duration,
}

/// Metrics of all workers, merged on `join`.
#[derive(Clone, Debug, Default)]
pub struct MetricsSnapshot {
    pub workers: Vec<WorkerMetrics>,
    /// Wall time from `Executor::new` to the end of `join`.
    pub wall: Duration,
}

impl MetricsSnapshot {
    /// Sum over workers.
    pub fn total(&self) -> WorkerMetrics {
        todo!()
    }
    /// Busy time over (workers x wall time), in 0..=1.
    pub fn utilization(&self) -> f64 {
        todo!()
    }
}

/// The pool.
pub struct Executor<T> {
    _t: std::marker::PhantomData<T>,
}

impl<T: Send + 'static> Executor<T> {
    /// Starts `config.workers` threads. `scratch_init(worker_id)` runs on the
    /// worker's own thread; `runner(task, ctx)` runs every task.
    pub fn new<S, I, R>(config: ExecutorConfig, scratch_init: I, runner: R) -> Self
    where
        S: 'static,
        I: Fn(usize) -> S + Send + Sync + 'static,
        R: Fn(T, &mut WorkerCtx<T, S>) + Send + Sync + 'static,
    {
        let _ = (config, scratch_init, runner);
        todo!()
    }

    /// A cloneable handle for producers outside the pool.
    pub fn handle(&self) -> ExecutorHandle<T> {
        todo!()
    }

    /// Closes the gate, drains every task in flight, joins the threads.
    pub fn join(self) -> Result<MetricsSnapshot, TaskPanic> {
        todo!()
    }

    /// Cancels: rejects new spawns, workers stop after their current task;
    /// queued tasks are dropped. `join` then returns promptly.
    pub fn shutdown(&self) {
        todo!()
    }
}

/// Send + Sync + Clone handle for external producers.
pub struct ExecutorHandle<T> {
    _t: std::marker::PhantomData<T>,
}

impl<T> Clone for ExecutorHandle<T> {
    fn clone(&self) -> Self {
        todo!()
    }
}

impl<T: Send + 'static> ExecutorHandle<T> {
    /// Err(task) when the executor no longer accepts work.
    pub fn spawn(&self, task: T) -> Result<(), T> {
        let _ = task;
        todo!()
    }
    /// All or nothing.
    pub fn spawn_batch(&self, tasks: Vec<T>) -> Result<(), Vec<T>> {
        let _ = tasks;
        todo!()
    }
    pub fn is_accepting(&self) -> bool {
        todo!()
    }
    pub fn shutdown(&self) {
        todo!()
    }
}

/// What a running task sees of its worker.
pub struct WorkerCtx<T, S> {
    _t: std::marker::PhantomData<(T, S)>,
}

impl<T: Send + 'static, S> WorkerCtx<T, S> {
    pub fn worker_id(&self) -> usize {
        todo!()
    }
    pub fn scratch(&mut self) -> &mut S {
        todo!()
    }
    /// The scratch and a spawner at the same time.
    pub fn split(&mut self) -> (&mut S, &Spawner<T>) {
        todo!()
    }
    pub fn spawn_local(&self, task: T) {
        let _ = task;
        todo!()
    }
    pub fn spawn_global(&self, task: T) {
        let _ = task;
        todo!()
    }
    pub fn handle(&self) -> ExecutorHandle<T> {
        todo!()
    }
}

/// Spawning half of a [`WorkerCtx`] (see [`WorkerCtx::split`]).
pub struct Spawner<T> {
    _t: std::marker::PhantomData<T>,
}

impl<T: Send + 'static> Spawner<T> {
    pub fn spawn_local(&self, task: T) {
        let _ = task;
        todo!()
    }
    pub fn spawn_global(&self, task: T) {
        let _ = task;
        todo!()
    }
}

/// Producer budget: permits for tasks and for bytes in flight.
#[derive(Clone)]
pub struct Budget {}

impl Budget {
    /// `max_bytes` of 0 means unbounded bytes.
    pub fn new(max_tasks: usize, max_bytes: u64) -> Self {
        let _ = (max_tasks, max_bytes);
        todo!()
    }
    /// Blocks (parks) until one task permit and `bytes` (clamped to
    /// `max_bytes`) are free.
    pub fn acquire(&self, bytes: u64) -> Permit {
        let _ = bytes;
        todo!()
    }
    /// Tasks and bytes currently held.
    pub fn in_flight(&self) -> (usize, u64) {
        todo!()
    }
}

/// Held by a task and every piece split off it (clone it into the piece);
/// the permits return when the last clone drops.
#[derive(Clone)]
pub struct Permit {}
