//! Sleeping and waking workers without losing a wake-up, and without
//! waking more of them than the work needs.
//!
//! # Searching
//!
//! An idle worker either *searches* (spins and yields between rounds of
//! `find_task`, for at most `spin_iters + yield_iters` rounds) or sleeps
//! (parked, with no timeout, until someone wakes it). At most half the
//! workers search at once (at least one): a worker that runs out of work
//! while that many search goes straight to sleep, since they will find what
//! it would have found. The count of searchers, `searching`, is also what
//! keeps producers from waking a crowd: [`Sleepers::notify`] (every spawn
//! calls it) wakes a sleeper only when nobody searches, and counts the
//! woken worker as a searcher *before* waking it, so a burst of spawns wakes
//! one worker, not one per spawn. The chain goes on from there: a searcher
//! that finds work stops searching, and if it was the last one it notifies
//! in turn ([`Idle::found`]); so one more worker wakes for as long as the
//! searches succeed, and the chain stops at the first search that finds
//! nothing. This is tokio's scheduler's rule ("at most half the workers
//! searching; the last searcher to find work wakes another").
//!
//! Why no spawn is stranded: a producer that skips the wake because it saw
//! `searching > 0` did so after its push and a SeqCst fence. Each searcher
//! it counted then either finds work (and, as the last searcher, notifies:
//! a fence, then the sleepers' count, so it sees anyone who went to sleep
//! before) or gives up, which is a decrement of `searching` *followed by*
//! the sleep handshake below, whose re-check then sees the push. The same
//! holds for a notifier whose woken worker vanished (see `notify`'s loop).
//!
//! # The sleep handshake
//!
//! A Dekker-style handshake between the worker going to sleep and a
//! producer making work visible:
//!
//! ```text
//!   worker i (going to sleep)             producer (spawn)
//!   flag[i] = true; sleepers += 1          push task onto a queue
//!   fence(SeqCst)                          fence(SeqCst)
//!   if queues non-empty or done:           if searching == 0 and sleepers > 0:
//!       retract, go look again                 searching += 1 (for the woken)
//!   park (token-based)                         pick j with flag[j] (swap false),
//!   retract (flag[i] swap false)               sleepers -= 1, unpark(j)
//! ```
//!
//! The two SeqCst fences guarantee that at least one side sees the other's
//! write: either the worker sees the task and does not park, or the producer
//! sees the sleeper and unparks it. `Unparker::unpark` leaves a token, so an
//! unpark that lands between the worker's re-check and its `park` makes that
//! `park` return at once. Whoever swaps a flag from true to false decrements
//! `sleepers`, so the counter never drifts. A worker whose flag was taken
//! holds the searching count the waker added for it, and gives it back when
//! it finds work or gives up ([`Idle`]), so that count never drifts either.
//!
//! The worker's whole side is [`Idle`] and [`Sleepers::sleep`]; the
//! producer's is [`Sleepers::notify`] and, at the end, `wake_all`. The
//! loom models at the bottom of this file drive exactly these methods with a
//! loom parker, so a lost wake-up is a loom deadlock; removing the re-check
//! in `sleep` makes `loom_sleep_no_lost_wakeup` fail that way.
//!
//! Parking has no timeout (`ExecutorConfig::park_timeout` is `None`): no
//! step of the argument above relies on one, and a timeout costs a wake-up
//! and a full search per sleeper per period. Tests that look for a lost
//! wake-up set no timeout, or a long one, so such a bug shows as a hang.

use crate::loom::park::{Parker, Unparker};
use crate::loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use std::time::Duration;

/// How a [`Sleepers::sleep`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slept {
    /// The thread parked (false: the re-check after announcing found work
    /// or the end).
    pub(crate) parked: bool,
    /// A producer took this worker's flag: woken on purpose, and counted as
    /// a searcher on its behalf.
    pub(crate) woken: bool,
}

pub(crate) struct Sleepers {
    count: CachePadded<AtomicUsize>,
    /// Workers searching for work (see the module doc), the woken ones
    /// included.
    searching: CachePadded<AtomicUsize>,
    flags: Box<[CachePadded<AtomicBool>]>,
    unparkers: Box<[Unparker]>,
    /// Round-robin start of the flag scan, so wakes spread over workers.
    next: AtomicUsize,
}

impl Sleepers {
    pub(crate) fn new(unparkers: Vec<Unparker>) -> Self {
        Sleepers {
            count: CachePadded::new(AtomicUsize::new(0)),
            searching: CachePadded::new(AtomicUsize::new(0)),
            flags: unparkers
                .iter()
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
            unparkers: unparkers.into_boxed_slice(),
            next: AtomicUsize::new(0),
        }
    }

    /// Producer side. Call after the work is pushed. Wakes one sleeper as a
    /// searcher unless a worker searches already or nobody sleeps. Returns
    /// whether a sleeper was woken.
    pub(crate) fn notify(&self) -> bool {
        loop {
            fence(Ordering::SeqCst);
            if self.searching.load(Ordering::SeqCst) != 0 || self.count.load(Ordering::SeqCst) == 0
            {
                return false;
            }
            // Count the worker to wake as searching before it wakes, so that
            // the spawns behind this one leave the rest asleep.
            if self
                .searching
                .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                return false;
            }
            if self.wake_flag() {
                return true;
            }
            // The sleeper counted woke by itself (it will look for work
            // before it may sleep again). Give the search back; this was
            // then the last searcher, so look again, as one that stops does
            // (a producer may have skipped its wake on seeing this one).
            self.searching.fetch_sub(1, Ordering::SeqCst);
            // It is between the two steps of its retract: let it finish.
            crate::loom::thread::yield_now();
        }
    }

    /// Takes one sleeper's flag and unparks it.
    fn wake_flag(&self) -> bool {
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

    /// Unconditional: every worker gets a token, asleep or not. Used once,
    /// when the run ends or is cancelled, after `done` is set.
    pub(crate) fn wake_all(&self) {
        for u in self.unparkers.iter() {
            u.unpark();
        }
    }

    /// A worker out of work starts searching, unless half the workers (at
    /// least one) search already.
    fn try_start_search(&self) -> bool {
        let cap = self.flags.len().div_ceil(2);
        let mut cur = self.searching.load(Ordering::SeqCst);
        loop {
            if cur >= cap {
                return false;
            }
            match self
                .searching
                .compare_exchange(cur, cur + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(seen) => cur = seen,
            }
        }
    }

    /// A searcher stops searching. True when it was the last one.
    fn stop_search(&self) -> bool {
        self.searching.fetch_sub(1, Ordering::SeqCst) == 1
    }

    /// Worker side, the whole park tier: announce, re-check, park, retract.
    /// `has_work` is the re-check (queues non-empty, or the run is done);
    /// it must read what producers write *before* they call `notify`.
    pub(crate) fn sleep(
        &self,
        i: usize,
        parker: &Parker,
        timeout: Option<Duration>,
        has_work: impl FnOnce() -> bool,
    ) -> Slept {
        self.announce(i);
        if has_work() {
            // A producer may have taken the flag meanwhile and left a token:
            // the next park then returns at once, which costs one round.
            let woken = !self.retract(i);
            return Slept {
                parked: false,
                woken,
            };
        }
        match timeout {
            Some(t) => parker.park_timeout(t),
            None => parker.park(),
        }
        let woken = !self.retract(i);
        Slept {
            parked: true,
            woken,
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

    #[cfg(test)]
    pub(crate) fn searching(&self) -> usize {
        self.searching.load(Ordering::Relaxed)
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
    /// Sleep (with the protocol above) until woken.
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

/// One worker's side of searching (see the module doc): whether it holds
/// one of the `searching` counts, and how many empty rounds it has searched.
/// The worker loop calls [`found`](Idle::found) when a search returned a
/// task, [`empty`](Idle::empty) when it returned nothing, and, when that
/// says [`Tier::Park`], [`Sleepers::sleep`] then [`slept`](Idle::slept).
/// The loom models drive the same calls.
#[derive(Default)]
pub(crate) struct Idle {
    searching: bool,
    round: u32,
}

impl Idle {
    /// A search returned a task. A searcher stops searching; the last one
    /// hands the search on to a sleeper (the task it found may be one of
    /// many).
    pub(crate) fn found(&mut self, s: &Sleepers) {
        self.round = 0;
        if std::mem::take(&mut self.searching) && s.stop_search() {
            s.notify();
        }
    }

    /// A search returned nothing: spin, yield, or sleep. A worker that is
    /// not searching starts, if fewer than half the workers do; one that
    /// has searched long enough stops (before it announces itself asleep:
    /// the order the module doc's argument needs).
    pub(crate) fn empty(&mut self, s: &Sleepers, spin_iters: u32, yield_iters: u32) -> Tier {
        if !self.searching {
            if !s.try_start_search() {
                return Tier::Park;
            }
            self.searching = true;
            self.round = 0;
        }
        let t = tier(self.round, spin_iters, yield_iters);
        if t == Tier::Park {
            self.searching = false;
            s.stop_search();
        } else {
            self.round += 1;
        }
        t
    }

    /// After [`Sleepers::sleep`]: a worker woken on purpose searches.
    pub(crate) fn slept(&mut self, r: Slept) {
        if r.woken {
            self.searching = true;
            self.round = 0;
        }
    }

    /// The worker exits: give back a search it holds.
    pub(crate) fn exit(&mut self, s: &Sleepers) {
        if std::mem::take(&mut self.searching) {
            s.stop_search();
        }
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
    fn notify_takes_the_flag_counts_a_searcher_and_leaves_a_token() {
        let p: Vec<Parker> = (0..3).map(|_| Parker::new()).collect();
        let s = Sleepers::new(p.iter().map(|p| p.unparker().clone()).collect());
        assert!(!s.notify(), "nobody asleep");
        s.announce(1);
        s.announce(2);
        assert_eq!(s.sleeping(), 2);
        assert!(s.notify());
        assert_eq!((s.sleeping(), s.searching()), (1, 1));
        assert!(!s.notify(), "one searches already: nobody else is woken");
        let (woken, other) = if s.flags[1].load(Ordering::Relaxed) {
            (2, 1)
        } else {
            (1, 2)
        };
        assert!(!s.retract(woken), "the waker took the flag");
        assert!(s.retract(other));
        // The token makes this park return immediately; a missing token
        // would block the test for the full 10 s timeout and fail below.
        let t = std::time::Instant::now();
        p[woken].park_timeout(std::time::Duration::from_secs(10));
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
        assert!(s.stop_search());
        assert_eq!((s.sleeping(), s.searching()), (0, 0));
    }

    /// At most half the workers (at least one) start searching by
    /// themselves; the one that finds work as the last searcher hands the
    /// search on to a sleeper.
    #[test]
    fn searchers_are_capped_and_the_last_hands_on() {
        let p: Vec<Parker> = (0..4).map(|_| Parker::new()).collect();
        let s = Sleepers::new(p.iter().map(|p| p.unparker().clone()).collect());
        let mut idle: Vec<Idle> = (0..4).map(|_| Idle::default()).collect();
        assert_eq!(idle[0].empty(&s, 2, 0), Tier::Spin(1));
        assert_eq!(idle[1].empty(&s, 2, 0), Tier::Spin(1));
        assert_eq!(idle[2].empty(&s, 2, 0), Tier::Park, "two of four search");
        assert_eq!(s.searching(), 2);
        s.announce(2);
        idle[0].found(&s);
        assert_eq!((s.searching(), s.sleeping()), (1, 1), "not the last");
        assert_eq!(idle[1].empty(&s, 2, 0), Tier::Spin(2));
        idle[1].found(&s);
        assert_eq!(
            (s.searching(), s.sleeping()),
            (1, 0),
            "the last searcher woke the sleeper, counted as searching"
        );
        assert!(!s.retract(2));
        idle[2].slept(Slept {
            parked: true,
            woken: true,
        });
        assert_eq!(idle[2].empty(&s, 0, 0), Tier::Park, "gives up at once");
        assert_eq!(s.searching(), 0);
        idle[3].exit(&s);
        assert_eq!(s.searching(), 0);
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

    struct World {
        sleepers: Sleepers,
        /// Tasks pushed and not yet taken.
        queue: AtomicUsize,
        done: AtomicBool,
        /// Tasks taken by all workers; the one taking the `end_at`-th ends
        /// the run.
        taken: AtomicUsize,
        end_at: usize,
    }

    impl World {
        fn new(parkers: &[Parker]) -> Arc<World> {
            Arc::new(World {
                sleepers: Sleepers::new(parkers.iter().map(|p| p.unparker().clone()).collect()),
                queue: AtomicUsize::new(0),
                done: AtomicBool::new(false),
                taken: AtomicUsize::new(0),
                end_at: usize::MAX,
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

        /// The worker loop's shape: while not done, find work or go idle
        /// through the executor's own `Idle` (no spinning: a search that
        /// finds nothing goes to sleep). Returns the tasks this worker took.
        fn worker(&self, me: usize, parker: &Parker, until_tasks: usize) -> usize {
            self.worker_from(me, parker, until_tasks, &mut Idle::default())
        }

        fn worker_from(
            &self,
            me: usize,
            parker: &Parker,
            until_tasks: usize,
            idle: &mut Idle,
        ) -> usize {
            let mut took = 0;
            while !self.done.load(Ordering::Acquire) && took < until_tasks {
                if self.try_take() {
                    idle.found(&self.sleepers);
                    took += 1;
                    if self.taken.fetch_add(1, Ordering::SeqCst) + 1 == self.end_at {
                        self.end();
                    }
                    continue;
                }
                if idle.empty(&self.sleepers, 0, 0) != Tier::Park {
                    continue;
                }
                let slept = self.sleepers.sleep(me, parker, None, || {
                    self.done.load(Ordering::SeqCst) || self.queue.load(Ordering::SeqCst) > 0
                });
                idle.slept(slept);
            }
            idle.exit(&self.sleepers);
            took
        }

        fn push(&self) -> bool {
            self.queue.fetch_add(1, Ordering::Release);
            self.sleepers.notify()
        }

        /// Two worker threads running `body(world, index, own parker)`.
        fn two_workers(
            body: fn(&World, usize, &Parker) -> usize,
        ) -> (Arc<World>, Vec<thread::JoinHandle<usize>>) {
            Self::two_workers_ending_at(usize::MAX, body)
        }

        fn two_workers_ending_at(
            end_at: usize,
            body: fn(&World, usize, &Parker) -> usize,
        ) -> (Arc<World>, Vec<thread::JoinHandle<usize>>) {
            let parkers = [Parker::new(), Parker::new()];
            let mut w = World::new(&parkers);
            Arc::get_mut(&mut w).expect("not shared yet").end_at = end_at;
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

    /// Two sleepers, one task, one `notify`: exactly one takes the task;
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
    ///
    /// At most three preemptions: unbounded, the searches the two workers
    /// start and give up between their sleeps did not finish in 10 minutes.
    #[test]
    fn loom_sleep_done_wakes_everyone() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let (w, workers) = World::two_workers(|w, me, parker| w.worker(me, parker, usize::MAX));
            w.end();
            for t in workers {
                assert_eq!(t.join().unwrap(), 0);
            }
            assert_eq!(w.sleepers.sleeping(), 0);
        });
    }

    /// Two tasks pushed while both workers sleep or are on their way to:
    /// the first `notify` wakes one worker as the searcher, the second sees
    /// it searching and wakes nobody; that searcher, finding a task as the
    /// last searcher, wakes the other (or finds the second task itself).
    /// Both tasks are taken: a skipped wake that strands a task would leave
    /// both workers parked (deadlock). The search and sleeper counts end at
    /// zero.
    ///
    /// At most three preemptions, as `loom_sleep_two_sleepers_one_wake`.
    #[test]
    fn loom_search_hands_on() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let (w, workers) =
                World::two_workers_ending_at(2, |w, me, parker| w.worker(me, parker, usize::MAX));
            w.push();
            w.push();
            let took: usize = workers.into_iter().map(|t| t.join().unwrap()).sum();
            assert_eq!(took, 2);
            assert_eq!(w.sleepers.sleeping(), 0);
            assert_eq!(w.sleepers.searching(), 0);
        });
    }
}
