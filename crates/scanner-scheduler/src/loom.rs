//! Synchronisation primitives, swapped for loom's under `cfg(loom)`.
//!
//! Run the loom models (separate target dir keeps the normal build cache):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p scanner-scheduler --release --lib loom
//! ```
//!
//! Everything that takes part in the termination protocol (the state word,
//! the done flag, the sleeper flags, the budget's mutex and condvar) is
//! imported from here rather than from `std`, the way tokio's `src/loom/mod.rs`
//! does it, so the models exercise the same code the executor runs. Under
//! `cfg(loom)` only the `loom` tests may run: loom's types panic outside a
//! `loom::model`.

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
