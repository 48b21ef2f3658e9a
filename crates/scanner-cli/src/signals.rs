//! Ctrl-C, SIGTERM and SIGHUP: a clean stop.
//!
//! A signal must not kill the process in the middle of a report: the `-o`
//! temp file would stay behind holding a partial report, and a remote
//! repository's clone in `$TMPDIR`. A thread waits for SIGINT, SIGTERM and
//! SIGHUP (the terminal or ssh session closed) and stops the scan through
//! [`StopHandle::stop`](crate::pipeline::StopHandle::stop) (the budget
//! closes, the executor shuts down, sources stop); the scan returns, the
//! temp file is removed by its owner's `Drop`, and the process exits with
//! 128 + the signal number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP),
//! as shells do.
//! A read that cannot be interrupted (a stream whose writer keeps it open
//! and silent) must not keep the process alive: if the scan has not
//! returned [`GRACE`] after the signal, or a second signal comes, the
//! watcher removes the temp files registered with [`remove_on_exit`] and
//! ends the process itself, with the same status.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::pipeline::StopHandle;

/// How long a stopped scan may take to return before the process ends.
pub const GRACE: Duration = Duration::from_secs(2);

/// Temp files to remove if the process has to end from the watcher.
static TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Registers a temp file (or directory) that must not outlive an interrupted run.
pub fn remove_on_exit(path: &Path) {
    TEMP_FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_path_buf());
}

/// The temp file is gone (committed or removed): forget it.
pub fn forget(path: &Path) {
    TEMP_FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p != path);
}

fn exit_now(sig: i32) -> ! {
    for p in TEMP_FILES.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        // A directory: a remote repository's clone.
        let _ = match p.is_dir() {
            true => std::fs::remove_dir_all(p),
            false => std::fs::remove_file(p),
        };
    }
    std::process::exit(128 + sig)
}

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
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let caught = Caught::default();
    // A signal ignored when the run starts stays ignored: under `nohup` the
    // run was asked to outlive its terminal (SIGHUP), and a shell script's
    // `scanner scan . &` is not meant to stop on the Ctrl-C that stops the
    // script's foreground (SIGINT).
    let watched: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&sig| !ignored(sig))
        .collect();
    let mut signals = signal_hook::iterator::Signals::new(watched)?;
    let seen = caught.clone();
    std::thread::Builder::new()
        .name("scanner-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if seen.0.swap(sig, Ordering::SeqCst) != 0 {
                    // Second signal: the user insists.
                    exit_now(sig);
                }
                stop.stop();
                std::thread::spawn(move || {
                    std::thread::sleep(GRACE);
                    exit_now(sig);
                });
            }
        })?;
    Ok(caught)
}

/// Whether `sig` is ignored (`SIG_IGN`, inherited through exec, as `nohup` leaves SIGHUP and a
/// non-interactive shell leaves SIGINT for a job it starts with `&`).
#[cfg(unix)]
fn ignored(sig: i32) -> bool {
    // SAFETY: with a null new action, sigaction only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

#[cfg(not(unix))]
pub fn install(_stop: StopHandle) -> std::io::Result<Caught> {
    Ok(Caught::default())
}
