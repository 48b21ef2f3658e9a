//! `scanner`: parses flags, calls the library (`scanner_cli::run`), owns the
//! exit status. Everything else lives in the library; see its module table.

use std::process::ExitCode;

// # Allocator
//
// jemalloc, with one arena for all threads and thread caches of blocks up
// to 4 KiB. A history scan rebuilds blobs of megabytes by the thousand on
// every worker, and glibc kept the freed blocks in each worker's arena:
// moto's history at `--threads 2` peaked at 158-163 MB with glibc (its
// live heap 74 MB, heaptrack), 136-146 MB with this, and took 2-5% less
// time (`docs/performance.md`, "The allocator"). One arena shares what one
// worker frees with the others (two arenas, one per core: 150 MB; jemalloc's
// default of four per core: 159 MB); the workers' hot paths reuse their
// buffers, so they rarely meet on its locks. Thread caches of blocks up to
// 4 KiB rather than 32 KiB: with the larger ones, `--threads 16` on the
// cargo registry peaked at 1.54 times the RSS of `--threads 2` (64 against
// 45 MB at 4 KiB: 1.45 times).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read before `main` (its `malloc_conf`; `_RJEM_MALLOC_CONF` in the
/// environment adds to them).
#[cfg(not(target_env = "msvc"))]
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: Option<&'static std::ffi::c_char> =
    // SAFETY: a pointer to the first byte of a static C string, which lives for ever.
    Some(unsafe { &*c"narenas:1,tcache_max:4096".as_ptr() });

use scanner_cli::{args, messages, output, EXIT_ERROR};

fn main() -> ExitCode {
    let cli = match args::Cli::parse_from_env() {
        Ok(cli) => cli,
        Err(err) => {
            // --help and --version are "errors" that go to stdout with status 0.
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(EXIT_ERROR)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match scanner_cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if output::is_broken_pipe(io) {
                    return ExitCode::SUCCESS;
                }
            }
            messages::error(&format!("{err:#}"));
            ExitCode::from(EXIT_ERROR)
        }
    }
}
