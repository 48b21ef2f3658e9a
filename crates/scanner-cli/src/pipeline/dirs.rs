//! The walk split among the workers: a directory is a task.
//!
//! With more than one worker, a walk the getdents walk can do (Linux, no
//! `--follow`, not `--serial-walk`: [`can_split`](crate::input::walk::can_split)) and no `--shard`
//! (whose planner needs the whole walk before it places a file), the
//! producer only seeds the roots (`Source::emit` through the emitter's
//! `Emit::dir`): a directory root becomes a
//! [`Task::Dir`], and files, FIFOs and `-` named as roots are queued as
//! before. A worker running a directory task (`run`) lists it once ([`DirTask::list`]: the same
//! ignore rules, excludes and `.git` rule as the serial walk, the
//! directory's own ignore files read there and shared by its
//! subdirectories' tasks through an `Arc` chain), and hands what the
//! listing came to to its `WorkerEmitter` (`super::emit`), the one the
//! archive walks use too: what it dropped goes to the run's `Tally`, its
//! warnings to the sink, and its
//! subdirectories, then its files as one [`Task::Files`], to its own
//! deque. A files task halves itself down to `FILES_GRAIN` (16) files, as a
//! split file's ranges do, so thieves can take half of a large directory;
//! each file becomes an item only when it is scanned ([`Files::item`]).
//!
//! # Termination
//!
//! A task's children are counted in flight before it returns
//! (`Spawner::spawn_local`), so the executor's count cannot reach zero
//! while any directory is still to be listed: `Executor::join`, called
//! once the producer has seeded the roots, returns when the whole tree
//! has been listed and scanned. A stop (Ctrl-C, closed stdout) shuts the
//! executor down: queued directory and file tasks are dropped unrun, and a
//! directory task that sees the stop spawns nothing.
//!
//! # Memory
//!
//! Every task below a root carries a clone of the root task's [`Permit`]:
//! one permit stands for the whole tree, as a split file's ranges share
//! its item's (`worker::scan_range`), so the budget bounds the roots in
//! flight, not the entries. What bounds the entries is the order: the
//! owner pops its deque LIFO, so it scans a directory's files before it
//! lists the next subdirectory, and goes depth first. A worker's deque
//! then holds the current directory's files plus, for each directory on
//! the path from the task it started with down to the current one, the
//! subdirectories not yet listed: what a serial depth-first walk holds on
//! its stack (each level's listing), once per worker. Thieves take the
//! oldest entries, the shallowest directories and the largest halves of
//! file lists. A pending directory is a path and two `Arc`s (the permit,
//! the rules); pending files are their names packed in their directory's
//! [`Files`] (the bytes of the name and 4 more each) and a few tasks per
//! directory that hold ranges of it; never a descriptor or file contents.
//!
//! # What is reported
//!
//! The skip counts of all the directory tasks are summed into the report
//! with the producer's (the roots'), so the totals are the serial walk's;
//! findings are sorted by the sink, so the report is byte-identical
//! (`tests/walk.rs`). Warnings reach stderr in the order the workers meet
//! them, which varies from run to run. `--stats-json`'s `producer.items`
//! counts every input queued, by the producer or by a directory task: the
//! same number as the serial walk's.

use std::sync::Arc;

use scanner_scheduler::Permit;

use super::emit::WorkerEmitter;
use super::{ScanOptions, Task};
use crate::input::walk::{DirTask, Files};
use crate::input::Item;

/// Files of a directory scanned one after the other by one task: few
/// enough that thieves find halves of a large directory to take, enough
/// that a task costs little next to the files it scans.
const FILES_GRAIN: usize = 16;

/// The worker's part: lists directory `dir` and queues its subdirectories
/// and its files through `out`, on this worker's deque, each task with a
/// clone of `permit`.
pub(super) fn run(dir: DirTask, permit: Permit, opts: &ScanOptions, out: &mut WorkerEmitter) {
    let listing = dir.list(&opts.walk, &opts.scope);
    out.skips(&listing.skips);
    for w in listing.warnings {
        match w.skipped {
            Some(skip) => out.not_scanned(w.path, skip),
            None => out.warn(w.path, w.reason, w.is_error),
        }
    }
    if out.stopped() {
        return;
    }
    out.queued(listing.files.len());
    // Subdirectories first: the files, pushed last, are popped first.
    for dir in listing.dirs {
        out.spawn(Task::Dir {
            dir,
            permit: permit.clone(),
        });
    }
    if !listing.files.is_empty() {
        let end = listing.files.len();
        out.spawn(Task::Files {
            files: Arc::new(listing.files),
            start: 0,
            end,
            permit,
        });
    }
}

/// Files `start..end` of a listed directory: queues the upper half while
/// more than [`FILES_GRAIN`] remain, as a split file's ranges are (thieves
/// take the oldest, the largest half), then hands the rest to `scan`
/// here, one file after the other.
pub(super) fn scan_files(
    files: Arc<Files>,
    start: usize,
    end: usize,
    permit: Permit,
    out: &WorkerEmitter,
    mut scan: impl FnMut(Item, Permit),
) {
    let wide = |len| len > FILES_GRAIN as u64;
    let end = super::split::keep_lower_half(start as u64, end as u64, wide, |mid, end| {
        out.spawn(Task::Files {
            files: Arc::clone(&files),
            start: mid as usize,
            end: end as usize,
            permit: permit.clone(),
        })
    }) as usize;
    for i in start..end {
        if out.stopped() {
            return;
        }
        scan(files.item(i), permit.clone());
    }
}
