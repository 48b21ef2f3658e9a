//! Synchronisation primitives, threads and the parker, swapped for loom's
//! under `cfg(loom)`.
//!
//! Run the loom models (separate target dir keeps the normal build cache):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p scanner-scheduler --release --lib loom
//! ```
//!
//! Everything that takes part in the termination and sleep protocols (the
//! state word, the done flag, the sleeper flags and count, the parkers, the
//! worker threads, the budget's mutex and condvar) is imported from here
//! rather than from `std` or `crossbeam_utils`, the way tokio's
//! `src/loom/mod.rs` does it, so the models run the same code the executor
//! runs. Under `cfg(loom)` only the `loom` tests may run: loom's types panic
//! outside a `loom::model`.
//!
//! What loom does not see: the crossbeam deques and injector (plain `std`
//! atomics inside), so the whole executor is not run under loom; the
//! sleepers models use a loom atomic as the queue, so that a stale "queue is
//! empty" re-check is explored too.
//!
//! # Models
//!
//! | model | file | real code driven |
//! | --- | --- | --- |
//! | `loom_spawn_vs_join_gate`, `loom_completion_vs_join`, `loom_concurrent_spawns`, `loom_split_spawn_join` | `state.rs` | `StateWord` |
//! | `loom_netting_*` | `state.rs` | `Netting` on a `StateWord` (the executor's completion netting) |
//! | `loom_sleep_*`, `loom_search_hands_on` | `idle.rs` | `Idle` (the worker loop's search-or-sleep steps), `Sleepers::sleep`, `notify`, `wake_all` with this module's `Parker`, parking without a timeout (`loom_sleep_two_sleepers_one_wake`, `loom_sleep_done_wakes_everyone` and `loom_search_hands_on` at most 3 preemptions per execution: unbounded they ran over 10 min; the three took 400 s together on a loaded 2-core machine) |
//! | `loom_budget_*` | `budget.rs` | `Budget` |

#[cfg(loom)]
pub(crate) mod sync {
    pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
    }
}

#[cfg(not(loom))]
pub(crate) mod sync {
    pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
    }
}

#[cfg(loom)]
pub(crate) mod thread {
    pub(crate) use loom::thread::{yield_now, Builder, JoinHandle};
}

#[cfg(not(loom))]
pub(crate) mod thread {
    pub(crate) use std::thread::{yield_now, Builder, JoinHandle};
}

#[cfg(not(loom))]
pub(crate) mod park {
    pub(crate) use crossbeam_utils::sync::{Parker, Unparker};
}

/// The parker under loom: the same contract as crossbeam's `Parker` (an
/// `unpark` leaves one token; a `park` consumes it or waits for it), built
/// the way crossbeam builds its own, a mutex-guarded token and a condvar,
/// but on loom's `Mutex` and `Condvar` so that loom sees every step.
///
/// Why not `loom::thread::park` and `Thread::unpark`, which keep a token
/// too: they name a thread, and the executor makes every worker's parker
/// (and hands all the unparkers to `Sleepers`) before the worker threads
/// exist. tokio's `runtime/park.rs` runs its own mutex-and-condvar parker
/// under loom for the same reason.
#[cfg(loom)]
pub(crate) mod park {
    use loom::sync::{Condvar, Mutex};
    use std::sync::Arc;
    use std::time::Duration;

    struct Inner {
        token: Mutex<bool>,
        cv: Condvar,
    }

    pub(crate) struct Parker {
        unparker: Unparker,
    }

    #[derive(Clone)]
    pub(crate) struct Unparker(Arc<Inner>);

    impl Parker {
        pub(crate) fn new() -> Self {
            Parker {
                unparker: Unparker(Arc::new(Inner {
                    token: Mutex::new(false),
                    cv: Condvar::new(),
                })),
            }
        }

        pub(crate) fn unparker(&self) -> &Unparker {
            &self.unparker
        }

        pub(crate) fn park(&self) {
            let inner = &self.unparker.0;
            let mut token = inner.token.lock().unwrap();
            while !*token {
                token = inner.cv.wait(token).unwrap();
            }
            *token = false;
        }

        /// loom has no clock: this waits for the token, so a park that
        /// nobody unparks is a deadlock, which loom reports. The timeout is
        /// a safety net in the real executor, never part of its correctness.
        pub(crate) fn park_timeout(&self, _timeout: Duration) {
            self.park()
        }
    }

    impl Unparker {
        pub(crate) fn unpark(&self) {
            *self.0.token.lock().unwrap() = true;
            self.0.cv.notify_one();
        }
    }
}
