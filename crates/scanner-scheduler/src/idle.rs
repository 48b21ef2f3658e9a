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
//! `park_timeout` is a safety net, not part of the correctness argument: the
//! lost-wake-up test runs with a 60 s timeout and must not hang.

use crate::loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::sync::Unparker;
use crossbeam_utils::CachePadded;

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

    /// Worker side, before the re-check that precedes `park`.
    pub(crate) fn announce(&self, i: usize) {
        self.flags[i].store(true, Ordering::SeqCst);
        self.count.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// Worker side, after the re-check found work or after `park` returned.
    /// Returns false when a producer already took the flag (it was woken on
    /// purpose, so work is likely waiting).
    pub(crate) fn retract(&self, i: usize) -> bool {
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
