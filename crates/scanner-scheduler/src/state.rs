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
use std::cell::Cell;

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

/// One worker's completion netting (see "Completion netting" in
/// `executor.rs`): the completions it has not yet subtracted from the state
/// word, spent on its own spawns before any atomic operation. The executor's
/// worker loop and `Spawner` call exactly these three methods; the loom
/// models drive the same ones.
///
/// Invariant, per worker: `S.count = in-flight + sum of unpublished`, so the
/// count cannot reach zero while a task is in flight.
pub(crate) struct Netting {
    unpublished: Cell<usize>,
}

impl Netting {
    pub(crate) fn new() -> Self {
        Netting {
            unpublished: Cell::new(0),
        }
    }

    /// A spawn from a task running on this worker. With a completion owed,
    /// that completion pays for the spawn and the word is not touched (one
    /// task more in flight, one completion less owed); otherwise the spawn
    /// is counted with [`StateWord::add_internal`]. Call before the task is
    /// pushed: a thief could otherwise run it and complete it uncounted.
    pub(crate) fn on_spawn(&self, state: &StateWord) {
        let u = self.unpublished.get();
        if u > 0 {
            self.unpublished.set(u - 1);
        } else {
            state.add_internal(1);
        }
    }

    /// A task run by this worker finished (returned or panicked).
    pub(crate) fn on_complete(&self) {
        self.unpublished.set(self.unpublished.get() + 1);
    }

    /// Subtracts every completion owed. True when this ended the run (the
    /// [`StateWord::complete`] contract); false, without touching the word,
    /// when nothing was owed.
    pub(crate) fn publish(&self, state: &StateWord) -> bool {
        let u = self.unpublished.replace(0);
        u > 0 && state.complete(u)
    }

    /// Completions owed (for tests).
    #[cfg(test)]
    pub(crate) fn owed(&self) -> usize {
        self.unpublished.get()
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

    /// Two completions pay for two spawns without touching the word; the
    /// third spawn is counted; publishing nothing owed changes nothing.
    #[test]
    fn netting_spends_completions_before_counting() {
        let s = StateWord::new();
        assert!(s.try_add_external(2));
        let n = Netting::new();
        n.on_complete();
        n.on_complete();
        assert_eq!((s.in_flight(), n.owed()), (2, 2));
        n.on_spawn(&s);
        n.on_spawn(&s);
        assert_eq!((s.in_flight(), n.owed()), (2, 0));
        n.on_spawn(&s);
        assert_eq!(s.in_flight(), 3);
        assert!(!n.publish(&s), "nothing owed: no subtraction");
        assert_eq!(s.in_flight(), 3);
        n.on_complete();
        n.on_complete();
        n.on_complete();
        assert!(!s.close());
        assert!(n.publish(&s), "the last publication ends the run");
        assert_eq!((s.in_flight(), n.owed()), (0, 0));
        assert!(!n.publish(&s));
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

    /// Completion netting through the executor's own `Netting`: worker A
    /// runs P1 (owed 1), P2 spawns child C, which that completion pays for
    /// (the word is not touched), A runs P2 (owed 1) and publishes once when
    /// its deque is empty; worker B runs C and publishes. Join closes
    /// concurrently. Exactly one end, and only after C ran.
    #[test]
    fn loom_netting_spawn_paid_by_a_completion() {
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
                    let net = Netting::new();
                    net.on_complete(); // P1 ran
                    net.on_spawn(&s); // P2 spawns C
                    assert_eq!(net.owed(), 0, "the spawn was netted");
                    slot.store(true, Ordering::Release);
                    net.on_complete(); // P2 ran
                    if net.publish(&s) {
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
                    let net = Netting::new();
                    ran_c.store(true, Ordering::Relaxed);
                    net.on_complete(); // C ran
                    if net.publish(&s) {
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

    /// A spawn with nothing owed is counted in the word before the child is
    /// visible; the thief runs and publishes the child, possibly before the
    /// parent's own completion is published. The count never touches zero
    /// early: exactly one end, after both ran.
    #[test]
    fn loom_netting_spawn_counted_then_stolen() {
        use loom::sync::atomic::AtomicBool;
        loom::model(|| {
            let s = Arc::new(StateWord::new());
            assert!(s.try_add_external(1)); // the running parent
            let slot = Arc::new(AtomicBool::new(false));
            let ran = Arc::new(Counter::new(0));
            let ends = Arc::new(Counter::new(0));
            let parent = {
                let (s, slot, ran, ends) = (s.clone(), slot.clone(), ran.clone(), ends.clone());
                thread::spawn(move || {
                    let net = Netting::new();
                    net.on_spawn(&s); // nothing owed: add_internal
                    slot.store(true, Ordering::Release);
                    ran.fetch_add(1, Ordering::Relaxed);
                    net.on_complete();
                    if net.publish(&s) {
                        assert_eq!(ran.load(Ordering::Relaxed), 2);
                        ends.fetch_add(1, Ordering::Relaxed);
                    }
                })
            };
            let thief = {
                let (s, slot, ran, ends) = (s.clone(), slot.clone(), ran.clone(), ends.clone());
                thread::spawn(move || {
                    while !slot.load(Ordering::Acquire) {
                        thread::yield_now();
                    }
                    let net = Netting::new();
                    ran.fetch_add(1, Ordering::Relaxed);
                    net.on_complete();
                    if net.publish(&s) {
                        assert_eq!(ran.load(Ordering::Relaxed), 2);
                        ends.fetch_add(1, Ordering::Relaxed);
                    }
                })
            };
            if s.close() {
                ends.fetch_add(1, Ordering::Relaxed);
            }
            parent.join().unwrap();
            thief.join().unwrap();
            assert_eq!(ends.load(Ordering::Relaxed), 1);
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
