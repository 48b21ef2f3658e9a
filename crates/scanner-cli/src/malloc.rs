//! glibc's malloc, tuned for what a scan allocates. Each call sets a
//! tunable of glibc's allocator (`mallopt`, `malloc_trim`); elsewhere (musl,
//! other systems) each does nothing.
//!
//! - [`cap_arenas`]: no more arenas than cores.
//! - [`for_rebuilt_objects`]: a history rebuilds objects of megabytes,
//!   again and again; kept in the arenas rather than mapped afresh each
//!   time.
//! - [`hand_back_freed`]: what a thread that is done freed goes back to the
//!   kernel.
//! - [`Trimmer`]: what a history's workers freed goes back to the kernel
//!   while they work.

/// Caps glibc's malloc arenas at the cores this process may run on. glibc
/// gives each thread that meets a locked arena a new one, up to 8 per
/// core, and each keeps the memory freed into it: `--threads 16` on two
/// cores peaked at 74 MB against 46 MB at 2 threads (cargo registry
/// sources), 11 MB of it in the extra arenas. No more threads than cores
/// run at once, so more arenas than cores spare no waiting; with as many
/// threads as cores nothing changes.
pub(crate) fn cap_arenas(threads: usize) {
    let cores = crate::cores();
    if threads > cores {
        set(Tunable::ArenaMax, cores);
    }
}

/// For a history's `threads` workers, which rebuild objects of up to a few
/// MB from deltas and drop them again. glibc maps a block of its mmap
/// threshold or more afresh (the threshold grows to the largest block
/// freed so far, and an arena's free top is handed back past twice it),
/// so most such objects were pages faulted in and zeroed anew. Here blocks
/// under 8 MiB come from the arenas, which keep up to 16 MiB free at their
/// top, and there is one arena a worker, no more: every further arena
/// keeps free memory of its own. moto's history at `--threads 2` (two
/// cores, medians of 8 interleaved rounds): page faults 199 k -> 90 k,
/// system time 0.75 -> 0.45 s, CPU 6.25 -> 6.13 s, peak RSS 144 -> 143 MB;
/// one arena more, 6.17 s against 6.57 but 147 MB (150 at most); the same
/// set only after the engine's build threads had made their arenas (so
/// more of them), 5.87 s against 6.25 but 149 MB (154 at most).
pub(crate) fn for_rebuilt_objects(threads: usize) {
    let cores = crate::cores();
    set(Tunable::MmapThreshold, 8 << 20);
    set(Tunable::TrimThreshold, 16 << 20);
    set(Tunable::ArenaMax, threads.clamp(1, cores));
}

/// Hands the memory freed so far back to the kernel: a thread's arena
/// keeps it otherwise (glibc trims an arena only past a threshold that
/// large frees raise), and other threads, which have arenas of their own,
/// never reuse it.
pub(crate) fn hand_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's heaps
    // to the kernel; no allocation is moved or freed.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// While it lives, hands the memory freed so far back to the kernel every
/// [`TRIM_EVERY`] ([`hand_back_freed`]), from a thread of its own: for a
/// history, whose workers rebuild and drop objects of 0.5-4 MB all along.
/// glibc keeps what they free in their arenas, where a block of one size
/// seldom fits the next object, so the heap's resident pages grow past its
/// live bytes for the whole scan: on moto's history at `--threads 2` (two
/// cores), about 60 MB live against 120 MB resident at the end. What is
/// handed back and used again is faulted in afresh: the cost is CPU time.
/// Medians of interleaved rounds of that scan (peak RSS, user + system):
///
/// | every | rounds | peak RSS | CPU |
/// | --- | --- | --- | --- |
/// | never | 10 | 155.4 MB | 6.98 s |
/// | 1 s | 10 | 148.0 MB | 7.22 s |
/// | 0.5 s | 10 | 148.5 MB | 7.30 s |
/// | never / 1 s / 2 s | 8 | 151.7 / 146.4 / 151.8 MB | 7.77 / 7.78 / 7.67 s |
/// | never / 0.25 s | 6 | 145.7 / 139.3 MB | 7.06 / 7.69 s |
/// | 0.1 s (another build, under load) | 6 | 121 MB against 152 | +1.1 s |
pub(crate) struct Trimmer {
    stop: Option<crossbeam_channel::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How often a [`Trimmer`] hands memory back.
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl Trimmer {
    pub(crate) fn start() -> Trimmer {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let thread = std::thread::Builder::new()
            .name("trim".into())
            .spawn(move || {
                while let Err(crossbeam_channel::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(TRIM_EVERY)
                {
                    hand_back_freed();
                }
            })
            .ok();
        Trimmer {
            stop: Some(stop),
            thread,
        }
    }
}

impl Drop for Trimmer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

enum Tunable {
    ArenaMax,
    MmapThreshold,
    TrimThreshold,
}

fn set(tunable: Tunable, value: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let param = match tunable {
            Tunable::ArenaMax => libc::M_ARENA_MAX,
            Tunable::MmapThreshold => libc::M_MMAP_THRESHOLD,
            Tunable::TrimThreshold => libc::M_TRIM_THRESHOLD,
        };
        let value = libc::c_int::try_from(value).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a tunable; any value is accepted (one
        // out of range is refused, and nothing changes).
        unsafe { libc::mallopt(param, value) };
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (tunable, value);
}
