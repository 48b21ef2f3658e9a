//! Ctrl-C and SIGTERM: a clean stop.
//!
//! A signal must not kill the process in the middle of a report: the `-o`
//! temp file would stay behind holding a partial report. A thread waits for
//! SIGINT and SIGTERM and stops the scan through
//! [`StopHandle::stop`](crate::pipeline::StopHandle::stop) (the budget
//! closes, the executor shuts down, sources stop); the scan returns, the
//! temp file is removed by its owner's `Drop`, and the process exits with
//! 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as shells do.
//! A second signal while stopping ends the process at once.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use crate::pipeline::StopHandle;

/// The signal that stopped the run, if any.
#[derive(Clone, Default)]
pub struct Caught(Arc<AtomicI32>);

impl Caught {
    /// The exit status the signal asks for (128 + its number).
    pub fn exit_status(&self) -> Option<u8> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            n => Some((128 + n).min(255) as u8),
        }
    }
}

/// Starts the watcher thread. Without a signal it costs one parked thread.
#[cfg(unix)]
pub fn install(stop: StopHandle) -> std::io::Result<Caught> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let caught = Caught::default();
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    let seen = caught.clone();
    std::thread::Builder::new()
        .name("scanner-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if seen.0.swap(sig, Ordering::SeqCst) != 0 {
                    // Second signal: the user insists.
                    std::process::exit(128 + sig);
                }
                stop.stop();
            }
        })?;
    Ok(caught)
}

#[cfg(not(unix))]
pub fn install(_stop: StopHandle) -> std::io::Result<Caught> {
    Ok(Caught::default())
}
