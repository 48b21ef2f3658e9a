//! `scanner`: parses flags, calls the library (`scanner_cli::run`), owns the
//! exit status. Everything else lives in the library; see its module table.

use std::process::ExitCode;

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
