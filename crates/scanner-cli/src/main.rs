//! `scanner`: the binary. Parses flags, builds the library objects, owns the
//! exit status; the work lives in `scanner-engine` (matching),
//! `scanner-scheduler` (threads) and the modules below.
//!
//! | module | what |
//! | --- | --- |
//! | `args` | clap flags: plain parsed data |
//! | `archive` | members of zip/jar/whl, tar, gzip, bzip2 as readers, with limits against hostile archives |
//! | `scan` | `scanner scan`: turns flags into walker, engine, sink, filters |
//! | `walk` | the walker thread: roots, ignore files, skip counts |
//! | `pipeline` | file tasks, workers, large-file splitting, the sink thread |
//! | `filter` | post-scan suppression hooks (baseline, diff) |
//! | `git`, `baseline`, `config`, `hook` | `--staged`/`--diff`, baselines, `.scanner.toml`, `scanner hook install` (docs/precommit.md) |
//! | `summary` | the stderr summary and `--stats-json` |
//! | `rules_cmd` | `scanner rules list` / `check` |
//! | `output` | report formats (text, json, jsonl, sarif) |
//!
//! Exit status: 0 clean, 1 findings, 2 error. See `docs/architecture.md`.

use std::process::ExitCode;

// Not wired into the scan yet: the worker pool will call `archive::walk`.
#[allow(dead_code)]
mod archive;
mod args;
mod baseline;
mod config;
mod filter;
mod git;
mod hook;
mod output;
mod paths;
mod pipeline;
mod rules_cmd;
mod scan;
mod summary;
mod walk;

/// Exit status for "something went wrong" (bad flag, rule, config, unreadable
/// file): distinct from 1 so CI can tell "secrets found" from "scan broken".
pub const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(err) => {
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if output::is_broken_pipe(io) {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("scanner: error: {err:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let cli = match args::Cli::parse_from_env() {
        Ok(cli) => cli,
        Err(err) => {
            // --help and --version are "errors" that go to stdout with status 0.
            let _ = err.print();
            return Ok(if err.use_stderr() {
                ExitCode::from(EXIT_ERROR)
            } else {
                ExitCode::SUCCESS
            });
        }
    };
    match cli.command {
        args::Command::Scan(a) => scan::run(*a),
        args::Command::Rules(c) => rules_cmd::run(c),
        args::Command::Hook(args::HookCommand::Install(a)) => hook::install(&a),
    }
}
