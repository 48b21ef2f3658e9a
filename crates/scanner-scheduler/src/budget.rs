//! Producer budget: permits for tasks and bytes in flight.
//!
//! The producer (the walker) calls [`Budget::acquire`] before each spawn and
//! moves the [`Permit`] into the task; a task that splits clones the permit
//! into each piece. The permits return when the last clone drops, i.e. when
//! the task and everything it split off are done (or dropped by a shutdown).
//! So memory held by queued tasks stays bounded however fast the walker runs.
//!
//! **Several tasks, one permit**: [`Budget::try_acquire_tasks`] and
//! [`Budget::acquire_tasks_open`] take `n` task permits at once, as one
//! [`Permit`] that the producer clones into each of up to `n` tasks (a
//! batch). The `n` return together, when the last of those tasks is done:
//! later than `n` single permits would, never earlier, so the bound holds
//! as it is stated (at most `max_tasks` tasks in flight), for one lock and
//! one allocation per batch instead of per task.
//!
//! A `Mutex` + `Condvar`: the producer parks, it never spins. Contention is
//! one lock per task acquire and one per task release, far below the cost of
//! opening and scanning a file. A release signals the condvar only when a
//! producer is parked (the state counts them), so the common case, a walker
//! that is ahead of nobody, costs no futex call at all. And a producer parked
//! for a task permit is signalled only once a quarter of the task permits
//! are free (any release of bytes signals at once): with the workers ahead
//! of the walker it then wakes once per burst, not once per task.
//!
//! **Which wake-up**: `notify_all`. A release may admit any subset of the
//! parked producers (several small requests, or only the one whose request
//! fits), and `notify_one` could pick one that still does not fit while one
//! that fits sleeps on. `notify_one` would be exact with a single parked
//! producer, but knowing that there is exactly one at the moment of the
//! notify means notifying under the lock, and then the woken producer
//! collides with the releaser on the mutex: three futex calls per wake-up
//! instead of one (measured under strace). With one parked producer,
//! `notify_all` costs the one `FUTEX_WAKE` that `notify_one` does. The count
//! is read under the lock and the notify sent after it: a producer counted
//! is parked already and gets the wake-up; one that parks later saw the
//! released state first.

use crate::loom::sync::{Condvar, Mutex, MutexGuard};
use std::sync::{Arc, Weak};

/// Producer budget. Cheap to clone (all clones share the same pool).
///
/// `acquire` blocks while either limit would be exceeded. Requests larger
/// than `max_bytes` are clamped to `max_bytes`, so one huge file waits until
/// the pool is empty and then runs alone instead of deadlocking.
///
/// **Shutdown**: call [`Budget::close`] when cancelling (with
/// [`Executor::shutdown`](crate::Executor::shutdown)): every blocked and
/// future `acquire` returns at once with an empty permit
/// ([`Permit::is_closed`]), and [`Budget::acquire_open`] returns `None`, so a
/// producer loop can stop.
///
/// **Deadlock to avoid**: a thread that holds permits and blocks in
/// `acquire` for more than the rest can ever free waits forever. The producer
/// must not keep permits of its own (move them into tasks). A producer that
/// batches tasks before `spawn_batch` holds the permits of its unsent batch:
/// use [`try_acquire`](Budget::try_acquire) and, when it says no, spawn the
/// batch first and only then block in `acquire`:
///
/// ```
/// # use scanner_scheduler::{Budget, Permit};
/// # let budget = Budget::new(4, 100);
/// # let mut batch: Vec<(u64, Permit)> = Vec::new();
/// # let mut spawn_batch = |b: Vec<(u64, Permit)>| drop(b);
/// for size in [60u64, 60, 60] {
///     let permit = match budget.try_acquire(size) {
///         Some(p) => p,
///         None => {
///             spawn_batch(std::mem::take(&mut batch)); // release our hold
///             budget.acquire(size)
///         }
///     };
///     batch.push((size, permit));
/// }
/// ```
///
/// No fairness between producers: with several producers a large request may
/// wait while small ones keep getting in. With the one walker thread of the
/// CLI, requests are served in order.
#[derive(Clone)]
pub struct Budget {
    inner: Arc<Inner>,
}

struct Inner {
    max_tasks: usize,
    max_bytes: u64,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    tasks: usize,
    bytes: u64,
    peak_tasks: usize,
    peak_bytes: u64,
    closed: bool,
    /// Producers parked in `acquire_open`.
    waiters: usize,
}

impl Budget {
    /// At most `max_tasks` permits and `max_bytes` bytes out at once. A limit
    /// of 0 means unbounded (for both).
    pub fn new(max_tasks: usize, max_bytes: u64) -> Self {
        Budget {
            inner: Arc::new(Inner {
                max_tasks: if max_tasks == 0 {
                    usize::MAX
                } else {
                    max_tasks
                },
                max_bytes: if max_bytes == 0 { u64::MAX } else { max_bytes },
                state: Mutex::new(State::default()),
                freed: Condvar::new(),
            }),
        }
    }

    /// Blocks (parks) until one task permit and `bytes` (clamped to
    /// `max_bytes`) are free. After [`close`](Budget::close) returns at once
    /// with a closed, empty permit.
    pub fn acquire(&self, bytes: u64) -> Permit {
        self.acquire_open(bytes).unwrap_or_else(Permit::closed)
    }

    /// Like [`acquire`](Budget::acquire) but returns `None` once the budget
    /// is closed: the form a producer loop should use.
    pub fn acquire_open(&self, bytes: u64) -> Option<Permit> {
        self.acquire_tasks_open(1, bytes)
    }

    /// Like [`acquire_open`](Budget::acquire_open), for `tasks` task
    /// permits at once (clamped to `max_tasks`, at least 1), held by one
    /// [`Permit`] for the producer to clone into that many tasks (see the
    /// module docs). The producer must not keep a clone of its own while
    /// it blocks for more (see "Deadlock to avoid").
    pub fn acquire_tasks_open(&self, tasks: usize, bytes: u64) -> Option<Permit> {
        let (tasks, bytes) = self.clamp(tasks, bytes);
        let mut st = self.lock();
        loop {
            if st.closed {
                return None;
            }
            if self.fits(&st, tasks, bytes) {
                return Some(self.grant(st, tasks, bytes));
            }
            st.waiters += 1;
            st = self.inner.freed.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiters -= 1;
        }
    }

    /// Never blocks: `None` when the permit does not fit now or the budget is
    /// closed.
    pub fn try_acquire(&self, bytes: u64) -> Option<Permit> {
        self.try_acquire_tasks(1, bytes)
    }

    /// Like [`try_acquire`](Budget::try_acquire), for `tasks` task permits
    /// at once, as [`acquire_tasks_open`](Budget::acquire_tasks_open).
    pub fn try_acquire_tasks(&self, tasks: usize, bytes: u64) -> Option<Permit> {
        let (tasks, bytes) = self.clamp(tasks, bytes);
        let st = self.lock();
        if st.closed || !self.fits(&st, tasks, bytes) {
            return None;
        }
        Some(self.grant(st, tasks, bytes))
    }

    /// Wakes every blocked `acquire` and makes all later ones return at once.
    /// Permits already out still return their share when dropped.
    pub fn close(&self) {
        self.lock().closed = true;
        self.inner.freed.notify_all();
    }

    /// The most task permits out at once (`usize::MAX` for unbounded).
    pub fn max_tasks(&self) -> usize {
        self.inner.max_tasks
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Tasks and bytes currently held.
    pub fn in_flight(&self) -> (usize, u64) {
        let st = self.lock();
        (st.tasks, st.bytes)
    }

    /// Highest tasks and bytes held at once since creation (each maximum on
    /// its own; they need not have happened at the same moment).
    pub fn peak(&self) -> (usize, u64) {
        let st = self.lock();
        (st.peak_tasks, st.peak_bytes)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave State half-updated
        // (every update is a pair of additions), so poisoning is ignored.
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request as it is granted: at least one task and at most all of
    /// them (so it fits an empty pool), bytes at most `max_bytes`.
    fn clamp(&self, tasks: usize, bytes: u64) -> (usize, u64) {
        (
            tasks.clamp(1, self.inner.max_tasks),
            bytes.min(self.inner.max_bytes),
        )
    }

    fn fits(&self, st: &State, tasks: usize, bytes: u64) -> bool {
        st.tasks.saturating_add(tasks) <= self.inner.max_tasks
            && st.bytes.saturating_add(bytes) <= self.inner.max_bytes
    }

    fn grant(&self, mut st: MutexGuard<'_, State>, tasks: usize, bytes: u64) -> Permit {
        st.tasks += tasks;
        st.bytes += bytes;
        st.peak_tasks = st.peak_tasks.max(st.tasks);
        st.peak_bytes = st.peak_bytes.max(st.bytes);
        drop(st);
        Permit {
            held: Some(Arc::new(Held {
                budget: self.inner.clone(),
                tasks,
                bytes,
            })),
        }
    }
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (tasks, bytes) = self.in_flight();
        f.debug_struct("Budget")
            .field("max_tasks", &self.inner.max_tasks)
            .field("max_bytes", &self.inner.max_bytes)
            .field("tasks", &tasks)
            .field("bytes", &bytes)
            .finish()
    }
}

/// Held by a task and every piece split off it (clone it into the piece);
/// the permits return when the last clone drops. Send + Sync + Clone.
#[derive(Clone, Debug)]
pub struct Permit {
    held: Option<Arc<Held>>,
}

impl Permit {
    fn closed() -> Self {
        Permit { held: None }
    }

    /// True for the empty permit `acquire` returns after `Budget::close`.
    pub fn is_closed(&self) -> bool {
        self.held.is_none()
    }

    /// Bytes this permit holds (after clamping); 0 when closed.
    pub fn bytes(&self) -> u64 {
        self.held.as_ref().map_or(0, |h| h.bytes)
    }

    /// Tells when this permit and every clone of it are gone (the task
    /// that holds it, and everything it split off, done or dropped)
    /// without keeping it: a producer can wait for one task to finish
    /// before it sends the next of a sequence.
    pub fn watch(&self) -> PermitWatch {
        PermitWatch(self.held.as_ref().map(Arc::downgrade))
    }
}

/// From [`Permit::watch`].
#[derive(Clone, Debug)]
pub struct PermitWatch(Option<Weak<Held>>);

impl PermitWatch {
    /// True once the permit watched, and every clone of it, has dropped
    /// (always for a closed one).
    pub fn released(&self) -> bool {
        self.0.as_ref().is_none_or(|w| w.strong_count() == 0)
    }
}

struct Held {
    budget: Arc<Inner>,
    /// Task permits: 1, or a batch's ([`Budget::acquire_tasks_open`]).
    tasks: usize,
    bytes: u64,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Held({} tasks, {} bytes)", self.tasks, self.bytes)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut st = self.budget.state.lock().unwrap_or_else(|e| e.into_inner());
        st.tasks -= self.tasks;
        st.bytes -= self.bytes;
        // A producer parked for a task permit is woken once a quarter of
        // them are free, not at every release: it then queues a burst and
        // parks again, instead of waking (a context switch on its thread
        // clock) for every task that ends. A release of bytes wakes at once:
        // the producer may be waiting for those.
        let slack = (self.budget.max_tasks / 4).max(1);
        let parked = st.waiters > 0
            && (self.bytes > 0 || st.tasks.saturating_add(slack) <= self.budget.max_tasks);
        drop(st);
        if parked {
            self.budget.freed.notify_all();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn limits_clamp_and_release_on_last_clone() {
        let b = Budget::new(2, 100);
        let p = b.acquire(1000); // clamped to 100: fits an empty pool
        assert_eq!(p.bytes(), 100);
        assert_eq!(b.in_flight(), (1, 100));
        assert!(b.try_acquire(1).is_none(), "bytes exhausted");
        let piece = p.clone();
        drop(p);
        assert_eq!(b.in_flight(), (1, 100), "a clone still holds it");
        drop(piece);
        assert_eq!(b.in_flight(), (0, 0));
        let a = b.try_acquire(10).unwrap();
        let c = b.try_acquire(10).unwrap();
        assert!(b.try_acquire(0).is_none(), "tasks exhausted");
        drop((a, c));
        assert_eq!(b.peak(), (2, 100));
    }

    /// A permit of several tasks holds them all until its last clone
    /// drops (the bound counts each task of a batch until the batch is
    /// done); a request is clamped to the whole pool and to at least one.
    #[test]
    fn a_permit_of_several_tasks_returns_them_with_its_last_clone() {
        let b = Budget::new(4, 0);
        let batch = b.try_acquire_tasks(3, 0).unwrap();
        assert_eq!(b.in_flight().0, 3);
        assert!(b.try_acquire_tasks(2, 0).is_none(), "3 + 2 > 4");
        let single = b.try_acquire(0).unwrap();
        assert!(b.try_acquire(0).is_none(), "tasks exhausted");
        let pieces: Vec<Permit> = (0..3).map(|_| batch.clone()).collect();
        drop(batch);
        let mut pieces = pieces.into_iter();
        pieces.next();
        pieces.next();
        assert_eq!(b.in_flight().0, 4, "a clone still holds the batch's 3");
        drop(pieces);
        assert_eq!(b.in_flight().0, 1);
        drop(single);
        let all = b.acquire_tasks_open(10, 0).unwrap();
        assert_eq!(b.in_flight().0, 4, "clamped to the pool");
        drop(all);
        drop(b.try_acquire_tasks(0, 0).unwrap());
        assert_eq!(b.peak().0, 4);
        assert_eq!(b.in_flight(), (0, 0));
    }

    #[test]
    fn a_watch_is_released_when_the_last_clone_drops() {
        let budget = Budget::new(2, 100);
        let permit = budget.acquire(10);
        let watch = permit.watch();
        let piece = permit.clone();
        drop(permit);
        assert!(!watch.released());
        drop(piece);
        assert!(watch.released());
        budget.close();
        assert!(budget.acquire(10).watch().released());
    }

    #[test]
    fn acquire_blocks_until_release() {
        let b = Budget::new(1, 0);
        let p = b.acquire(5);
        let b2 = b.clone();
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            let _p = b2.acquire(5);
            start.elapsed()
        });
        std::thread::sleep(Duration::from_millis(50));
        drop(p);
        let waited = t.join().unwrap();
        assert!(
            waited >= Duration::from_millis(40),
            "did not block: {waited:?}"
        );
        assert_eq!(b.peak(), (1, 5));
    }

    /// A producer parked for a task permit of 8 is woken when a quarter
    /// (2) are free, not at the first release: it stays parked after one.
    #[test]
    fn a_parked_producer_wakes_once_a_quarter_is_free() {
        let b = Budget::new(8, 0);
        let mut held: Vec<Permit> = (0..8).map(|_| b.acquire(0)).collect();
        let b2 = b.clone();
        let got = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let g = got.clone();
        let t = std::thread::spawn(move || {
            let _p = b2.acquire(0);
            g.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(50));
        held.pop();
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !got.load(std::sync::atomic::Ordering::SeqCst),
            "woken by the first release"
        );
        held.pop();
        t.join().unwrap();
        assert!(got.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn close_releases_blocked_producer() {
        let b = Budget::new(1, 0);
        let held = b.acquire(0);
        let b2 = b.clone();
        let t =
            std::thread::spawn(move || (b2.acquire_open(0).is_none(), b2.acquire(0).is_closed()));
        std::thread::sleep(Duration::from_millis(20));
        b.close();
        assert_eq!(t.join().unwrap(), (true, true));
        drop(held);
        assert_eq!(b.in_flight(), (0, 0));
        assert!(b.is_closed());
    }
}

#[cfg(all(test, loom))]
mod loom_budget {
    use super::*;

    /// Two producers against a budget of one: never two holders at once,
    /// both eventually get in (a lost notify would deadlock the model).
    #[test]
    fn loom_budget_exclusive() {
        loom::model(|| {
            let b = Budget::new(1, 0);
            let b2 = b.clone();
            let t = loom::thread::spawn(move || {
                let p = b2.acquire(1);
                assert_eq!(b2.in_flight().0, 1);
                drop(p);
            });
            let p = b.acquire(1);
            assert_eq!(b.in_flight().0, 1);
            drop(p);
            t.join().unwrap();
            assert_eq!(b.in_flight(), (0, 0));
        });
    }

    /// One release that admits two parked producers at once, who keep their
    /// permits: both must be woken (a `notify_one` would leave one asleep for
    /// good and deadlock the model).
    #[test]
    fn loom_budget_release_admits_two() {
        loom::model(|| {
            let b = Budget::new(0, 10);
            let held = b.acquire(10);
            let spawn = |bytes| {
                let b = b.clone();
                loom::thread::spawn(move || b.acquire(bytes))
            };
            let (small, large) = (spawn(3), spawn(7));
            drop(held);
            let permits = (small.join().unwrap(), large.join().unwrap());
            assert_eq!(b.in_flight(), (2, 10));
            drop(permits);
            assert_eq!(b.in_flight(), (0, 0));
        });
    }

    /// Close against a blocked acquire: the acquire returns.
    #[test]
    fn loom_budget_close_wakes() {
        loom::model(|| {
            let b = Budget::new(1, 0);
            let held = b.acquire(0);
            let b2 = b.clone();
            let t = loom::thread::spawn(move || b2.acquire_open(0).is_some());
            b.close();
            let got = t.join().unwrap();
            assert!(!got);
            drop(held);
        });
    }
}
