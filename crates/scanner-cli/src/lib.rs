//! `scanner`: the library behind the binary. The root package's `src/main.rs`
//! parses flags and calls [`run`]; the work lives in `scanner-engine`
//! (matching), `scanner-scheduler` (threads) and the modules below.
//!
//! | module | what |
//! | --- | --- |
//! | [`args`] | clap flags: plain parsed data |
//! | [`scan`] | `scanner scan`: turns flags into sources, scope, engine, sink, filters (the high layer of arguments) |
//! | [`input`] | the input model: [`input::Item`], [`input::Source`], the one scope filter, the walker, git sources |
//! | [`pipeline`] | budget, workers, chunked reads, large-input splitting, the sink thread |
//! | [`filter`], [`gitleaksignore`] | post-scan suppression hooks (baseline, diff, config per-rule scopes, `--min-confidence`, `.gitleaksignore`) |
//! | [`baseline`], [`baseline_cmd`], [`config`], [`hook`] | baselines, `scanner baseline add`, `.scanner.toml`, `scanner hook install` and `run` (docs/precommit.md) |
//! | [`report`], [`summary`] | the counts of a scan; the stderr summary and `--stats-json` |
//! | [`outfile`] | every file written: `-o`, `--stats-json`, `--write-baseline` (atomic, special files written in place) |
//! | [`messages`] | every `scanner: warning:` / `scanner: error:` line, path escaping |
//! | [`signals`] | Ctrl-C, SIGTERM and SIGHUP: a clean stop |
//! | [`rules_cmd`] | `scanner rules list` / `check` |
//! | [`validate`], [`validate_cmd`] | `--validate` (asking providers whether findings work) and `scanner validate REPORT` |
//! | [`output`] | report formats (text, json, jsonl, sarif, html) |
//! | [`shard`], [`merge`] | `--shard K/N` (who scans what) and `scanner merge` (docs/scale.md) |
//! | `malloc` | glibc's allocator tuned: arenas capped at the cores, and for a history's rebuilt objects |
//!
//! Where does a new input go? A [`input::Source`] variant that emits items
//! (and, if it is read in a new way, an [`input::Content`] variant that
//! `pipeline::worker` reads). Where is a finding filtered? See "Where a
//! finding is filtered" in [`pipeline`].
//!
//! Exit status: 0 clean, 1 findings, 2 error. See `docs/architecture.md`.

use std::process::ExitCode;

/// The cores this process may run on: the default thread count, and what
/// the malloc arenas are capped at.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub mod args;
pub mod baseline;
pub mod baseline_cmd;
pub mod config;
pub mod filter;
pub mod gitleaksignore;
pub mod hook;
pub mod input;
mod malloc;
pub mod merge;
pub mod messages;
pub mod outfile;
pub mod output;
pub mod paths;
pub mod pipeline;
pub mod progress;
pub mod report;
pub mod rules_cmd;
pub mod scan;
pub mod shard;
pub mod signals;
pub mod summary;
pub mod validate;
pub mod validate_cmd;

/// Exit status for "something went wrong" (bad flag, rule, config, unreadable
/// file): distinct from 1 so CI can tell "secrets found" from "scan broken".
pub const EXIT_ERROR: u8 = 2;

/// Runs one command line; the status is the process's exit status.
pub fn run(cli: args::Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        args::Command::Scan(a) => scan::run(*a),
        args::Command::Rules(c) => rules_cmd::run(c),
        args::Command::Hook(args::HookCommand::Install(a)) => hook::install(&a),
        args::Command::Hook(args::HookCommand::Run) => scan::run(hook::run_args()),
        args::Command::Baseline(args::BaselineCommand::Add(a)) => baseline_cmd::add(&a),
        args::Command::Merge(a) => merge::run(a),
        args::Command::Validate(a) => validate_cmd::run(a),
    }
}
