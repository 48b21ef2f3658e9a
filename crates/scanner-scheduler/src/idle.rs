//! Sleeping and waking workers without losing a wake-up.
//!
//! An idle worker goes through three tiers (see [`Tier`]): spin, yield, park.
//! Only parking needs a protocol. It is a Dekker-style handshake between the
//! worker going to sleep and a producer making work visible:
//!
//! ```text
//!   worker i (going to sleep)             producer (spawn)
//!   flag[i] = true; sleepers += 1          push task onto a queue
//!   fence(SeqCst)                          fence(SeqCst)
//!   if queues non-empty or done:           if sleepers > 0:
//!       retract, go look again                 pick j with flag[j] (swap false),
//!   park (token-based)                         sleepers -= 1, unpark(j)
//!   retract (flag[i] swap false)
//! ```
//!
//! The two SeqCst fences guarantee that at least one side sees the other's
//! write: either the worker sees the task and does not park, or the producer
//! sees the sleeper and unparks it. `Unparker::unpark` leaves a token, so an
//! unpark that lands between the worker's re-check and its `park` makes that
//! `park` return at once. Whoever swaps a flag from true to false decrements
//! `sleepers`, so the counter never drifts. A producer that finds `sleepers >
//! 0` but no flag set raced with a worker waking on its own; that worker looks
//! for work again before it may park, so nothing is lost.
//!
//! The worker's whole side is one method, [`Sleepers::sleep`]; the
//! producer's is [`Sleepers::wake_one`] and, at the end, `wake_all`. The
//! loom models at the bottom of this file drive exactly these methods with a
//! loom parker and no timeout, so a lost wake-up is a loom deadlock; removing
//! the re-check in `sleep` makes `loom_sleep_no_lost_wakeup` fail that way.
//!
//! The executor parks with a timeout (`ExecutorConfig::park_timeout`), which
//! no step of the argument above relies on: it bounds the damage of a bug
//! outside this handshake (a producer that forgot to wake), and the
//! real-thread test `no_lost_wakeup_with_widened_window` sets it to 60 s so
//! that such a bug shows as a hang instead of a slow pass.

use crate::loom::park::{Parker, Unparker};
use crate::loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use std::time::Duration;

/// How a [`Sleepers::sleep`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slept {
    /// The re-check after announcing found work or the end: never parked.
    Rechecked,
    /// Parked, and a producer took this worker's flag: woken on purpose.
    Woken,
    /// Parked, and returned with the flag still set: the timeout, the
    /// `wake_all` at the end, or a token left by an earlier wake.
    Returned,
}

pub(crate) struct Sleepers {
    count: CachePadded<AtomicUsize>,
    flags: Box<[CachePadded<AtomicBool>]>,
    unparkers: Box<[Unparker]>,
    /// Round-robin start of the flag scan, so wakes spread over workers.
    next: AtomicUsize,
}

impl Sleepers {
    pub(crate) fn new(unparkers: Vec<Unparker>) -> Self {
        Sleepers {
            count: CachePadded::new(AtomicUsize::new(0)),
            flags: unparkers
                .iter()
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
            unparkers: unparkers.into_boxed_slice(),
            next: AtomicUsize::new(0),
        }
    }

    /// Producer side. Call after the work is pushed. Returns whether a
    /// sleeper was woken.
    pub(crate) fn wake_one(&self) -> bool {
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let n = self.flags.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            let i = (start + k) % n;
            if self.flags[i].load(Ordering::Relaxed) && self.flags[i].swap(false, Ordering::AcqRel)
            {
                self.count.fetch_sub(1, Ordering::AcqRel);
                self.unparkers[i].unpark();
                return true;
            }
        }
        false
    }

    /// Wakes up to `n` sleepers (batch spawns).
    pub(crate) fn wake_many(&self, n: usize) {
        for _ in 0..n.min(self.flags.len()) {
            if !self.wake_one() {
                break;
            }
        }
    }

    /// Unconditional: every worker gets a token, asleep or not. Used once,
    /// when the run ends or is cancelled, after `done` is set.
    pub(crate) fn wake_all(&self) {
        for u in self.unparkers.iter() {
            u.unpark();
        }
    }

    /// Worker side, the whole park tier: announce, re-check, park, retract.
    /// `has_work` is the re-check (queues non-empty, or the run is done);
    /// it must read what producers write *before* they call `wake_one`.
    pub(crate) fn sleep(
        &self,
        i: usize,
        parker: &Parker,
        timeout: Duration,
        has_work: impl FnOnce() -> bool,
    ) -> Slept {
        self.announce(i);
        if has_work() {
            // A producer may have taken the flag meanwhile and left a token:
            // the next park then returns at once, which costs one round.
            self.retract(i);
            return Slept::Rechecked;
        }
        parker.park_timeout(timeout);
        if self.retract(i) {
            Slept::Returned
        } else {
            Slept::Woken
        }
    }

    /// Worker side, before the re-check that precedes `park`.
    fn announce(&self, i: usize) {
        // A swap rather than a store: the same instruction on x86 (a SeqCst
        // store is an `xchg`), it checks that the flag was down (only this
        // worker raises it, and it lowers it before sleeping again), and
        // with every write of a flag a read-modify-write loom keeps the
        // flag's history totally ordered. With a plain store, loom let a
        // producer's swap read the value before that store yet be ordered
        // after it, and reported a sleeper count off by one that no real
        // interleaving produces.
        let was = self.flags[i].swap(true, Ordering::SeqCst);
        debug_assert!(!was, "worker {i} announced twice");
        self.count.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// Worker side, after the re-check found work or after `park` returned.
    /// Returns false when a producer already took the flag (it was woken on
    /// purpose, so work is likely waiting).
    fn retract(&self, i: usize) -> bool {
        if self.flags[i].swap(false, Ordering::AcqRel) {
            self.count.fetch_sub(1, Ordering::AcqRel);
            true
        } else {
            false
        }
    }

    pub(crate) fn sleeping(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }
}

/// What an idle worker does on its `round`-th consecutive empty search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Busy-wait with `spin_loop` hints, doubling up to 16 per round: work
    /// spawned within a few hundred nanoseconds is picked up without a
    /// syscall.
    Spin(u32),
    /// `thread::yield_now`: lets a producer sharing the core run.
    Yield,
    /// Park (with the protocol above) for at most `park_timeout`.
    Park,
}

pub(crate) fn tier(round: u32, spin_iters: u32, yield_iters: u32) -> Tier {
    if round < spin_iters {
        Tier::Spin(1 << round.min(4))
    } else if round < spin_iters.saturating_add(yield_iters) {
        Tier::Yield
    } else {
        Tier::Park
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crossbeam_utils::sync::Parker;

    #[test]
    fn tiers_in_order() {
        assert_eq!(tier(0, 2, 1), Tier::Spin(1));
        assert_eq!(tier(1, 2, 1), Tier::Spin(2));
        assert_eq!(tier(2, 2, 1), Tier::Yield);
        assert_eq!(tier(3, 2, 1), Tier::Park);
        assert_eq!(tier(0, 0, 0), Tier::Park);
    }

    #[test]
    fn wake_one_takes_the_flag_and_leaves_a_token() {
        let p: Vec<Parker> = (0..3).map(|_| Parker::new()).collect();
        let s = Sleepers::new(p.iter().map(|p| p.unparker().clone()).collect());
        assert!(!s.wake_one(), "nobody asleep");
        s.announce(1);
        assert_eq!(s.sleeping(), 1);
        assert!(s.wake_one());
        assert_eq!(s.sleeping(), 0);
        assert!(!s.retract(1), "the waker took the flag");
        // The token makes this park return immediately; a missing token
        // would block the test for the full 10 s timeout and fail below.
        let t = std::time::Instant::now();
        p[1].park_timeout(std::time::Duration::from_secs(10));
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
        s.announce(2);
        assert!(s.retract(2));
        assert_eq!(s.sleeping(), 0);
    }
}

/// Loom models of the sleep handshake, on the real `Sleepers` and the loom
/// `Parker` (see `crate::loom`). The queue is a loom atomic standing for the
/// injector: a producer "pushes" with a Release increment, as the injector
/// does, and the worker's re-check reads it as `has_visible_work` reads the
/// injector. No timeouts: a worker parked for good is a loom deadlock.
#[cfg(all(test, loom))]
mod loom_idle {
    use super::*;
    use loom::sync::atomic::{AtomicBool, AtomicUsize};
    use loom::sync::Arc;
    use loom::thread;

    const FOREVER: Duration = Duration::from_secs(3600);

    struct World {
        sleepers: Sleepers,
        /// Tasks pushed and not yet taken.
        queue: AtomicUsize,
        done: AtomicBool,
    }

    impl World {
        fn new(parkers: &[Parker]) -> Arc<World> {
            Arc::new(World {
                sleepers: Sleepers::new(parkers.iter().map(|p| p.unparker().clone()).collect()),
                queue: AtomicUsize::new(0),
                done: AtomicBool::new(false),
            })
        }

        fn try_take(&self) -> bool {
            let mut n = self.queue.load(Ordering::Acquire);
            while n > 0 {
                match self
                    .queue
                    .compare_exchange(n, n - 1, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => return true,
                    Err(seen) => n = seen,
                }
            }
            false
        }

        /// The worker loop's shape: while not done, find work or sleep.
        /// Returns the tasks this worker took.
        fn worker(&self, me: usize, parker: &Parker, until_tasks: usize) -> usize {
            let mut took = 0;
            while !self.done.load(Ordering::Acquire) && took < until_tasks {
                if self.try_take() {
                    took += 1;
                    continue;
                }
                self.sleepers.sleep(me, parker, FOREVER, || {
                    self.done.load(Ordering::SeqCst) || self.queue.load(Ordering::SeqCst) > 0
                });
            }
            took
        }

        fn push(&self) -> bool {
            self.queue.fetch_add(1, Ordering::Release);
            self.sleepers.wake_one()
        }

        /// Two worker threads running `body(world, index, own parker)`.
        fn two_workers(
            body: fn(&World, usize, &Parker) -> usize,
        ) -> (Arc<World>, Vec<thread::JoinHandle<usize>>) {
            let parkers = [Parker::new(), Parker::new()];
            let w = World::new(&parkers);
            let workers = parkers
                .into_iter()
                .enumerate()
                .map(|(me, parker)| {
                    let w = w.clone();
                    thread::spawn(move || body(&w, me, &parker))
                })
                .collect();
            (w, workers)
        }

        /// `Shared::signal_done`.
        fn end(&self) {
            if !self.done.swap(true, Ordering::SeqCst) {
                self.sleepers.wake_all();
            }
        }
    }

    /// One worker going to sleep, one producer pushing a task and waking:
    /// the worker always gets the task (a lost wake-up would leave it
    /// parked: deadlock), and the sleeper count returns to zero.
    #[test]
    fn loom_sleep_no_lost_wakeup() {
        loom::model(|| {
            let parkers = [Parker::new()];
            let w = World::new(&parkers);
            let producer = {
                let w = w.clone();
                thread::spawn(move || w.push())
            };
            let [parker] = parkers;
            let worker = {
                let w = w.clone();
                thread::spawn(move || w.worker(0, &parker, 1))
            };
            producer.join().unwrap();
            assert_eq!(worker.join().unwrap(), 1);
            assert_eq!(w.queue.load(Ordering::Relaxed), 0);
            assert_eq!(w.sleepers.sleeping(), 0);
        });
    }

    /// Two sleepers, one task, one `wake_one`: exactly one takes the task;
    /// then the taker ends the run (`signal_done`) and the other, asleep or
    /// not, exits. The count never drifts.
    ///
    /// Explored with at most three preemptions per execution: unbounded, the
    /// three threads' retry loops did not finish in 15 minutes. Three
    /// preemptions cover one wake landing anywhere in either worker's
    /// announce/re-check/park window, the race this model is about.
    #[test]
    fn loom_sleep_two_sleepers_one_wake() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let (w, workers) = World::two_workers(|w, me, parker| {
                let took = w.worker(me, parker, 1);
                if took == 1 {
                    w.end();
                }
                // The other worker: back in the loop until done.
                took + w.worker(me, parker, usize::MAX)
            });
            w.push();
            let took: usize = workers.into_iter().map(|t| t.join().unwrap()).sum();
            assert_eq!(took, 1);
            assert_eq!(w.sleepers.sleeping(), 0);
        });
    }

    /// No work at all: the end (`signal_done`: done flag, then `wake_all`)
    /// must get both workers out, whichever step of sleeping they are at.
    #[test]
    fn loom_sleep_done_wakes_everyone() {
        loom::model(|| {
            let (w, workers) = World::two_workers(|w, me, parker| w.worker(me, parker, usize::MAX));
            w.end();
            for t in workers {
                assert_eq!(t.join().unwrap(), 0);
            }
            assert_eq!(w.sleepers.sleeping(), 0);
        });
    }
}
