//! The combined state word: accepting bit and in-flight count in one atomic.
//!
//! ```text
//!  usize::BITS-1                    1   0
//! ┌─────────────────────────────────┬─────┐
//! │        in-flight count          │  A  │   A = 1: the gate is open
//! └─────────────────────────────────┴─────┘
//! ```
//!
//! "In flight" means spawned and not yet finished (queued or running). Keeping
//! the bit and the count in one word is what makes "is the gate open?" and
//! "count me in" a single atomic step: with two separate atomics an external
//! spawn could read "open", lose the CPU while `join` closes the gate and sees
//! a count of zero, then increment and push a task nobody will ever run.

use crate::loom::sync::atomic::{AtomicUsize, Ordering};

const ACCEPTING: usize = 1;
const UNIT: usize = 2;

pub(crate) struct StateWord(AtomicUsize);

impl StateWord {
    /// Open, nothing in flight.
    pub(crate) fn new() -> Self {
        StateWord(AtomicUsize::new(ACCEPTING))
    }

    /// External spawn of `n` tasks: succeeds only while the gate is open, and
    /// then counts all `n` at once (all or nothing).
    pub(crate) fn try_add_external(&self, n: usize) -> bool {
        let add = n.checked_mul(UNIT).expect("in-flight count overflow");
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            if cur & ACCEPTING == 0 {
                return false;
            }
            let next = cur.checked_add(add).expect("in-flight count overflow");
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(seen) => cur = seen,
            }
        }
    }

    /// Spawn from inside a running task. No gate check: the running task
    /// itself holds the count above zero, so the run cannot end under it, and
    /// a task split off before `join` must still run after the gate closed.
    pub(crate) fn add_internal(&self, n: usize) {
        self.0.fetch_add(n * UNIT, Ordering::Relaxed);
    }

    /// `n` tasks finished (or were dropped). Returns true for exactly one
    /// caller per run: the one that took the count to zero with the gate
    /// closed. AcqRel so that the caller seeing the end also sees every
    /// effect of every task that finished before it.
    pub(crate) fn complete(&self, n: usize) -> bool {
        let prev = self.0.fetch_sub(n * UNIT, Ordering::AcqRel);
        debug_assert!(prev / UNIT >= n, "in-flight count underflow");
        prev == n * UNIT
    }

    /// Closes the gate. Returns true when this call ended the run, i.e. the
    /// gate was open and nothing was in flight. A second close returns false,
    /// so across `close` and `complete` exactly one caller sees the end.
    pub(crate) fn close(&self) -> bool {
        let prev = self.0.fetch_and(!ACCEPTING, Ordering::AcqRel);
        prev == ACCEPTING
    }

    pub(crate) fn is_accepting(&self) -> bool {
        self.0.load(Ordering::Acquire) & ACCEPTING != 0
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.0.load(Ordering::Acquire) / UNIT
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn gate_and_count() {
        let s = StateWord::new();
        assert!(s.try_add_external(3));
        s.add_internal(1);
        assert_eq!(s.in_flight(), 4);
        assert!(!s.complete(2));
        assert!(!s.close(), "close with work in flight must not end the run");
        assert!(!s.try_add_external(1), "closed gate must refuse");
        assert!(!s.close());
        assert!(!s.complete(1));
        assert!(s.complete(1), "last completion after close ends the run");
        assert_eq!(s.in_flight(), 0);
    }

    #[test]
    fn close_when_idle_ends_the_run_once() {
        let s = StateWord::new();
        assert!(s.close());
        assert!(!s.close());
        assert!(!s.is_accepting());
    }
}

/// Loom models of the state word. See `crate::loom` for the command.
#[cfg(all(test, loom))]
mod loom_state {
    use super::*;
    use loom::sync::atomic::AtomicUsize as Counter;
    use loom::sync::Arc;
    use loom::thread;

    /// Spawn against join: either the spawn is refused, or it is counted and
    /// the end is seen only after its completion. Exactly one end observer.
    #[test]
    fn loom_spawn_vs_join_gate() {
        loom::model(|| {
            let s = Arc::new(StateWord::new());
            let ends = Arc::new(Counter::new(0));
            let ran = Arc::new(Counter::new(0));
            let (s1, e1, r1) = (s.clone(), ends.clone(), ran.clone());
            let producer = thread::spawn(move || {
                if s1.try_add_external(1) {
                    // The task runs (on "a worker") and completes.
                    r1.fetch_add(1, Ordering::Relaxed);
                    if s1.complete(1) {
                        e1.fetch_add(1, Ordering::Relaxed);
                    }
                    true
                } else {
                    false
                }
            });
            if s.close() {
                // join saw nothing in flight: the run ended here, so the
                // spawn must not have been counted before the close.
                ends.fetch_add(1, Ordering::Relaxed);
            }
            let accepted = producer.join().unwrap();
            assert_eq!(ends.load(Ordering::Relaxed), 1, "exactly one end");
            assert_eq!(ran.load(Ordering::Relaxed), accepted as usize);
            assert_eq!(s.in_flight(), 0);
            assert!(!s.is_accepting());
        });
    }

    /// Completion against join with one task in flight: exactly one of the
    /// two sees the end.
    #[test]
    fn loom_completion_vs_join() {
        loom::model(|| {
            let s = Arc::new(StateWord::new());
            assert!(s.try_add_external(1));
            let s1 = s.clone();
            let worker = thread::spawn(move || s1.complete(1));
            let joiner_end = s.close();
            let worker_end = worker.join().unwrap();
            assert!(joiner_end ^ worker_end, "exactly one observer sees the end");
        });
    }

    /// Concurrent external spawns are both counted; a task spawning a child
    /// internally while join closes keeps the run alive until both finish.
    #[test]
    fn loom_concurrent_spawns() {
        loom::model(|| {
            let s = Arc::new(StateWord::new());
            let a = {
                let s = s.clone();
                thread::spawn(move || s.try_add_external(1))
            };
            let b = {
                let s = s.clone();
                thread::spawn(move || s.try_add_external(2))
            };
            assert!(a.join().unwrap());
            assert!(b.join().unwrap());
            assert_eq!(s.in_flight(), 3);
        });
    }

    /// Completion netting (see `executor.rs`): worker A finishes P1 without
    /// publishing, then P2 spawns child C netted against that completion (no
    /// atomic), A finishes P2 and publishes once when its deque is empty;
    /// worker B runs C. Join closes concurrently. Exactly one end, and only
    /// after C ran.
    #[test]
    fn loom_netting() {
        use loom::sync::atomic::AtomicBool;
        loom::model(|| {
            let s = Arc::new(StateWord::new());
            assert!(s.try_add_external(2)); // P1, P2 on A's deque
            let slot = Arc::new(AtomicBool::new(false)); // C, stealable
            let ran_c = Arc::new(AtomicBool::new(false));
            let ends = Arc::new(Counter::new(0));
            let a = {
                let (s, slot, ends) = (s.clone(), slot.clone(), ends.clone());
                thread::spawn(move || {
                    let mut unpublished = 1; // P1 done
                                             // P2 spawns C: netted, the word is not touched.
                    unpublished -= 1;
                    slot.store(true, Ordering::Release);
                    unpublished += 1; // P2 done
                                      // Deque empty: publish before looking elsewhere.
                    if s.complete(unpublished) {
                        ends.fetch_add(1, Ordering::Relaxed);
                    }
                })
            };
            let b = {
                let (s, slot, ran_c, ends) = (s.clone(), slot.clone(), ran_c.clone(), ends.clone());
                thread::spawn(move || {
                    while !slot.load(Ordering::Acquire) {
                        thread::yield_now();
                    }
                    ran_c.store(true, Ordering::Relaxed);
                    if s.complete(1) {
                        // The end observer must see C's effects.
                        assert!(ran_c.load(Ordering::Relaxed));
                        ends.fetch_add(1, Ordering::Relaxed);
                    }
                })
            };
            if s.close() {
                ends.fetch_add(1, Ordering::Relaxed);
            }
            a.join().unwrap();
            b.join().unwrap();
            assert_eq!(ends.load(Ordering::Relaxed), 1);
            assert!(ran_c.load(Ordering::Relaxed));
            assert_eq!(s.in_flight(), 0);
        });
    }

    /// Three-way: a running task splits off a child and completes, a producer
    /// spawns, join closes. Exactly one end, and only when all are done.
    #[test]
    fn loom_split_spawn_join() {
        loom::model(|| {
            let s = Arc::new(StateWord::new());
            assert!(s.try_add_external(1)); // the running parent
            let ends = Arc::new(Counter::new(0));
            let worker = {
                let (s, ends) = (s.clone(), ends.clone());
                thread::spawn(move || {
                    s.add_internal(1); // split off a child
                    let mut e = s.complete(1) as usize; // parent done
                    e += s.complete(1) as usize; // child done
                    ends.fetch_add(e, Ordering::Relaxed);
                })
            };
            let producer = {
                let (s, ends) = (s.clone(), ends.clone());
                thread::spawn(move || {
                    if s.try_add_external(1) && s.complete(1) {
                        ends.fetch_add(1, Ordering::Relaxed);
                    }
                })
            };
            if s.close() {
                ends.fetch_add(1, Ordering::Relaxed);
            }
            worker.join().unwrap();
            producer.join().unwrap();
            assert_eq!(ends.load(Ordering::Relaxed), 1);
            assert_eq!(s.in_flight(), 0);
        });
    }
}
