//! Command-line flags: the low layer.
//!
//! These types are plain parsed data, as clap hands them over; nothing here
//! opens a file or compiles a rule. `scan.rs` turns [`ScanArgs`] into the
//! objects that do the work (walker options, engine, sink), the way ripgrep
//! splits `lowargs.rs` from `hiargs.rs`. The doc comments are the `--help`
//! text.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::messages::Verbosity;
use crate::output::Format;

/// A parallel secret scanner: finds API keys, tokens and private keys in
/// files, git index blobs and diffs.
///
/// Exit status: 0 when nothing was found and everything in scope was
/// scanned, 1 when there are findings, 2 on any error (bad flag, bad rule or
/// config, unreadable file unless --ignore-errors).
#[derive(Parser)]
#[command(name = "scanner", version, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Scan files and directories (default: the current directory).
    Scan(Box<ScanArgs>),
    /// List the rules or check their examples.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Manage the git pre-commit hook.
    #[command(subcommand)]
    Hook(HookCommand),
    /// Merge the reports of a sharded scan (`--shard K/N`) into one.
    Merge(MergeArgs),
    /// Manage the baseline of accepted findings.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Re-check the findings of an earlier json or jsonl report against their providers.
    Validate(ValidateArgs),
}

#[derive(Subcommand)]
pub enum BaselineCommand {
    /// Record the findings at PATH:LINE in the baseline (`--baseline FILE`, else the
    /// `baseline` of .scanner.toml; created if missing), so that scans and the hook stop
    /// reporting them. PATH as the report prints it, relative to the current directory.
    Add(BaselineAddArgs),
}

#[derive(Args)]
pub struct BaselineAddArgs {
    /// Where the findings are: PATH:LINE, as a report prints them (PATH:LINE:COL too).
    #[arg(value_name = "PATH:LINE", required = true)]
    pub locations: Vec<String>,

    /// The baseline file to add to, instead of the `baseline` of .scanner.toml.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Use this config file instead of discovering .scanner.toml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,

    /// Do not read any .scanner.toml.
    #[arg(long)]
    pub no_config: bool,

    /// Read each PATH's staged content (the git index), as `scan --staged` and the hook do,
    /// not the working tree's: PATH and LINE as the hook printed them, from the repository
    /// root.
    #[arg(long)]
    pub staged: bool,
}

/// `scanner validate REPORT` flags (`--validate` is implied).
#[derive(Args)]
pub struct ValidateArgs {
    /// A report of `scanner scan --format json` or `jsonl`, read from the directory the scan
    /// ran in (a redacted secret is read back from its file at the recorded offset).
    #[arg(value_name = "REPORT")]
    pub report: PathBuf,

    /// Format of the report written (the secrets as the input report had them).
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,

    #[command(flatten)]
    pub validation: ValidationArgs,

    #[command(flatten)]
    pub rule_set: RuleSetArgs,
}

/// Validation flags of `scanner scan` and `scanner validate`.
#[derive(Args, Clone, Debug)]
pub struct ValidationArgs {
    /// Ask each provider whether the findings of rules with a validator still work (HTTPS,
    /// read-only calls, to the host the rule names; docs/validation.md). Off by default:
    /// without it nothing leaves the machine. Findings are then written at the end.
    #[arg(long, help_heading = "Validation")]
    pub validate: bool,

    /// Validation requests in flight at most (2 per host whatever this says).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 8,
        value_parser = clap::value_parser!(u16).range(1..=1024),
        help_heading = "Validation"
    )]
    pub validation_jobs: u16,

    /// Seconds one validation request may take in all, 1 to 3600 (connecting: 5 s at most).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..=3600),
        help_heading = "Validation"
    )]
    pub validation_timeout: u64,

    /// PEM certificates to trust for validation instead of the built-in roots (default:
    /// `SSL_CERT_FILE` if set), as behind a TLS-inspecting corporate proxy.
    #[arg(long, value_name = "FILE", help_heading = "Validation")]
    pub ca_cert: Option<PathBuf>,

    /// Report only the findings whose validation is at least STATUS, in the order
    /// invalid < offline_invalid < not_checked < unknown < offline_valid < valid. The exit
    /// status still counts every finding.
    #[arg(long, value_name = "STATUS", value_parser = parse_validity, help_heading = "Validation")]
    pub min_validity: Option<scanner_engine::ValidationStatus>,

    /// Report only the findings a provider accepted: `--min-validity valid`.
    #[arg(long, help_heading = "Validation", conflicts_with = "min_validity")]
    pub only_valid: bool,
}

fn parse_validity(s: &str) -> Result<scanner_engine::ValidationStatus, String> {
    scanner_engine::ValidationStatus::parse(s).ok_or_else(|| {
        "must be invalid, offline_invalid, not_checked, unknown, offline_valid or valid".into()
    })
}

impl ValidationArgs {
    /// `--min-validity`, or `valid` for `--only-valid`.
    pub fn min_validity(&self) -> Option<scanner_engine::ValidationStatus> {
        if self.only_valid {
            Some(scanner_engine::ValidationStatus::Valid)
        } else {
            self.min_validity
        }
    }

    pub fn options(&self) -> crate::validate::Options {
        crate::validate::Options {
            jobs: usize::from(self.validation_jobs),
            timeout: std::time::Duration::from_secs(self.validation_timeout),
            ca_cert: self.ca_cert.clone(),
        }
    }
}

/// `scanner scan` flags.
#[derive(Args)]
pub struct ScanArgs {
    /// Files or directories to scan. A file named here is scanned even when
    /// an ignore file excludes it. `-` is standard input (on a terminal, a
    /// note says Ctrl-D ends it); a FIFO named here
    /// (`/dev/stdin`, `<(cmd)`) is read as a stream.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// The path standard input (`-`) is reported as, so that path rules,
    /// allowlists and excludes apply to it. Default `<stdin>`. Standard
    /// input is scanned only when `-` is a PATH (a note says so otherwise).
    #[arg(long, value_name = "PATH", help_heading = "Input")]
    pub stdin_name: Option<PathBuf>,

    /// Also scan the paths listed in FILE (`-` for stdin), one per line or
    /// NUL-separated. A listed path that does not exist is a warning (exit
    /// 2 unless --ignore-errors); the rest is scanned.
    #[arg(long, value_name = "FILE", help_heading = "Input")]
    pub files_from: Option<PathBuf>,

    /// Do not read .gitignore, .ignore, .git/info/exclude, the global git
    /// excludes or .scannerignore.
    #[arg(long, help_heading = "Input")]
    pub no_ignore: bool,

    /// Skip paths matching GLOB (gitignore syntax, anchored at the current directory; repeatable).
    #[arg(long, value_name = "GLOB", help_heading = "Input")]
    pub exclude: Vec<String>,

    /// Follow symbolic links (loops are detected and reported). Each file
    /// and directory is read once, at the first path (in name order) that
    /// reaches it; another path to it counts as `already scanned (link)`.
    #[arg(long, short = 'L', help_heading = "Input")]
    pub follow: bool,

    /// Skip files larger than SIZE (bytes, or with a K, M or G suffix).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Input")]
    pub max_filesize: Option<u64>,

    /// Report only findings of this confidence or higher (high, medium,
    /// low; default low: everything). Dropped findings are counted.
    #[arg(long, value_name = "LEVEL", value_enum, help_heading = "Output")]
    pub min_confidence: Option<ConfidenceArg>,

    /// Layers of base64, hex and percent-encoding decoded and scanned
    /// again (gitleaks' flag). Default 2; 0 turns decoding off. At most 32
    /// (each layer is stack).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(0..=scanner_engine::MAX_DECODE_DEPTH as i64),
        help_heading = "Input"
    )]
    pub max_decode_depth: Option<u32>,

    /// Do not open archives (zip, jar, whl, tar, gzip, bzip2, xz, zstd):
    /// scan them as the binary files they are (skipped unless --binary).
    #[arg(long, help_heading = "Input")]
    pub no_archives: bool,

    /// Archives inside archives are opened this deep (1: the top-level
    /// archive only; --no-archives opens none). At most 32 (each level is
    /// stack).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::input::archive::MAX_DEPTH)),
        help_heading = "Input"
    )]
    pub archive_depth: u32,

    /// Bytes one archive may expand to, nested archives included (K, M or
    /// G suffix). Default 1G. Past it the rest of the archive is not read
    /// and the run exits 2.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Input")]
    pub archive_max_bytes: Option<u64>,

    /// Bytes all the archives of the run may expand to together. Default
    /// 16G. Past it the rest is not read and the run exits 2.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Input")]
    pub archive_max_run_bytes: Option<u64>,

    /// Members one archive may hold, nested archives included. Default
    /// 100000. Past it the rest is not read and the run exits 2.
    #[arg(long, value_name = "N", help_heading = "Input")]
    pub archive_max_members: Option<u64>,

    /// Scan files that look binary (a NUL byte in the first 8 KiB) too.
    #[arg(long, help_heading = "Input")]
    pub binary: bool,

    /// Scan exactly what is staged in the git index (blob content, paths
    /// relative to the repository root).
    #[arg(long, help_heading = "Git", conflicts_with_all = ["diff", "files_from"])]
    pub staged: bool,

    /// Scan the whole history of the git repository at PATH (default `.`,
    /// a bare repository too): every blob of every commit reachable from
    /// any ref (branches, tags, remote-tracking refs, stashes), each
    /// distinct blob once, attributed to the commit that introduced it.
    /// PATH may be a URL git clones (https, ssh, git, file, `host:path`):
    /// it is cloned into a temporary directory, scanned and removed.
    #[arg(
        long,
        help_heading = "Git",
        conflicts_with_all = ["staged", "diff", "files_from"]
    )]
    pub history: bool,

    /// With --history: scan the remote repositories listed in FILE (`-`
    /// for stdin; URLs as for PATH, one per line, each scanned once; blank
    /// lines and `#` comments skipped).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Git",
        requires = "history",
        conflicts_with_all = ["staged", "diff"]
    )]
    pub repos_from: Option<PathBuf>,

    /// With --history: only the commits of this revision range, in `git
    /// rev-list` syntax (`origin/main..HEAD`, `v1.0..`, `main`). Repeat to
    /// combine (`--range main --range ^v1.0`).
    #[arg(
        long,
        value_name = "REVS",
        help_heading = "Git",
        requires = "history",
        conflicts_with_all = ["staged", "diff"]
    )]
    pub range: Vec<String>,

    /// With --history: only commits more recent than DATE (`git log
    /// --since` syntax: `2024-01-01`, `2.weeks.ago`).
    #[arg(
        long,
        value_name = "DATE",
        help_heading = "Git",
        requires = "history",
        conflicts_with_all = ["staged", "diff"]
    )]
    pub since: Option<String>,

    /// With --history: also every commit a reflog remembers (amended,
    /// reset or rebased-away commits still in the object store).
    #[arg(
        long,
        help_heading = "Git",
        requires = "history",
        conflicts_with_all = ["staged", "diff"]
    )]
    pub reflogs: bool,

    /// Scan only the lines added since the git revision BASE.
    #[arg(
        long,
        value_name = "BASE",
        help_heading = "Git",
        conflicts_with = "files_from"
    )]
    pub diff: Option<String>,

    #[command(flatten)]
    pub rule_set: RuleSetArgs,

    /// Use this config file instead of discovering .scanner.toml.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Rules",
        conflicts_with = "no_config"
    )]
    pub config: Option<PathBuf>,

    /// Do not read any .scanner.toml, nor a gitleaks config (.gitleaks.toml,
    /// .github/.gitleaks.toml, $GITLEAKS_CONFIG): the built-in rules, and the rule files the
    /// flags name.
    #[arg(long, help_heading = "Rules")]
    pub no_config: bool,

    /// Suppress the findings recorded in this baseline file (instead of
    /// the `baseline` of .scanner.toml).
    #[arg(long, value_name = "FILE", help_heading = "Baseline")]
    pub baseline: Option<PathBuf>,

    /// Record the current findings (by fingerprint) in FILE (`-`: stdout, with the report
    /// written to a file by -o).
    #[arg(long, value_name = "FILE", help_heading = "Baseline")]
    pub write_baseline: Option<PathBuf>,

    /// List baseline entries that no longer match any finding (of
    /// --baseline, else of the config's `baseline`).
    #[arg(long, help_heading = "Baseline")]
    pub report_unused: bool,

    /// Report format. `text` is for people; `json` is for tools; both are
    /// sorted by path, line and column, identical whatever the thread
    /// count, and written when the scan ends. `jsonl` streams each file's
    /// findings as it completes (in completion order); `sarif` is for code
    /// scanning; `html` is one self-contained page to triage in a browser.
    #[arg(
        long,
        visible_alias = "report-format",
        value_enum,
        default_value = "text",
        help_heading = "Output"
    )]
    pub format: Format,

    /// Write the report to FILE (atomically: a temp file renamed at the
    /// end) instead of stdout. `-` is stdout, as gitleaks'
    /// `--report-path -`.
    #[arg(
        long,
        short = 'o',
        visible_alias = "report-path",
        value_name = "FILE",
        help_heading = "Output"
    )]
    pub output: Option<PathBuf>,

    /// The exit status when findings are reported (`--exit-code 0` never
    /// fails a build on findings, as in gitleaks). Errors still exit 2.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Output")]
    pub exit_code: u8,

    #[command(flatten)]
    pub validation: ValidationArgs,

    /// Does nothing: secrets are always redacted unless --show-secrets.
    /// Accepted only so that a gitleaks command line runs unchanged, with
    /// gitleaks' optional percentage too (`--redact=20`).
    #[arg(
        long,
        help_heading = "Output",
        conflicts_with = "show_secrets",
        value_name = "PERCENT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "100",
        value_parser = clap::value_parser!(u8).range(0..=100)
    )]
    pub redact: Option<u8>,

    /// Print secrets whole instead of redacted.
    #[arg(long, help_heading = "Output")]
    pub show_secrets: bool,

    /// Colour the text report: auto (when stdout is a terminal), always or
    /// never.
    #[arg(long, value_enum, default_value = "auto", help_heading = "Output")]
    pub color: ColorChoice,

    /// Write scan counts and scheduler metrics as JSON to FILE (`-`: stdout, with the report
    /// written to a file by -o).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub stats_json: Option<PathBuf>,

    /// No summary and no progress line on stderr (warnings still appear).
    /// What else stderr carries is one scale, set by -v or --log-level:
    /// `--log-level error` (errors only) < the default `warn` (warnings,
    /// notes, summary) < -v, the same as `--log-level info` (also each
    /// suppressed finding and file not scanned); -q removes the summary at any level.
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// List every suppressed finding on stderr, one line each with its
    /// reason (scanner: suppressed: PATH:LINE:COL: rule `ID`: REASON):
    /// inline `scanner:allow`, a rule's allowlist or stopwords, the config's
    /// `allow_secrets` and `allow_paths`, `.gitleaksignore`, the baseline,
    /// `--diff` context, `--min-confidence`. Candidates the engine rejects
    /// on their own (low entropy, placeholders, the generic rules' checks,
    /// duplicates) are only counted in the summary. Also every file not
    /// scanned for what it is (scanner: not scanned: PATH: REASON):
    /// binary, too large, special file, symlink not followed, already
    /// scanned; not the paths ignore files, --exclude or allow_paths leave
    /// out (only counted).
    #[arg(
        long,
        short = 'v',
        help_heading = "Output",
        conflicts_with = "log_level"
    )]
    pub verbose: bool,

    /// gitleaks-compatible: `error` prints only errors (and the warnings
    /// behind an exit status 2), no notes and no summary; `warn` is the
    /// default; `info`, `debug` and `trace` are -v.
    #[arg(long, value_name = "LEVEL", value_enum, help_heading = "Output")]
    pub log_level: Option<LogLevel>,

    /// Exit 0 or 1 even when some files could not be read.
    #[arg(long, help_heading = "Output")]
    pub ignore_errors: bool,

    /// Scan only shard K of N (1 <= K <= N <= 65536): a deterministic share of the
    /// files (by path relative to the root) or of the history's blobs (by
    /// id), the same on every machine. Without it, `SCANNER_SHARDS=N` with
    /// `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job, 0-based) sets
    /// K = index + 1. See docs/scale.md.
    #[arg(long, value_name = "K/N", value_parser = crate::shard::Shard::parse, help_heading = "Performance")]
    pub shard: Option<crate::shard::Shard>,

    /// Worker threads (default: available cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024), help_heading = "Performance")]
    pub threads: Option<u16>,

    /// Read buffer size per chunk (testing knob).
    #[arg(long, hide = true, value_parser = parse_size)]
    pub chunk_size: Option<u64>,

    /// Files larger than this are split into ranges scanned in parallel
    /// (testing knob).
    #[arg(long, hide = true, value_parser = parse_size)]
    pub split_threshold: Option<u64>,

    /// Smallest range a split file is cut down to (testing knob).
    #[arg(long, hide = true, value_parser = parse_size)]
    pub split_grain: Option<u64>,

    /// Walk directories on the producer thread only, never split among the
    /// workers (testing and benchmarking knob).
    #[arg(long, hide = true)]
    pub serial_walk: bool,

    /// Set by `scanner hook run`: after findings, say that the commit is refused and how out.
    #[arg(skip)]
    pub explain_refusal: bool,
}

/// `--log-level`: gitleaks' levels, mapped onto [`Verbosity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

impl ScanArgs {
    /// A `scanner scan` command line's flags (`&["--staged"]`) with every other default, for
    /// the commands that run a scan of their own (`hook run`, `baseline add`).
    pub fn from_flags(flags: &[&str]) -> ScanArgs {
        let argv = ["scanner", "scan"].iter().chain(flags);
        match Cli::try_parse_from(argv) {
            Ok(Cli {
                command: Command::Scan(a),
            }) => *a,
            _ => panic!("fixed scan flags {flags:?} do not parse"),
        }
    }

    /// What goes to stderr: `-v` and `--log-level` (they conflict).
    pub fn verbosity(&self) -> Verbosity {
        match self.log_level {
            _ if self.verbose => Verbosity::Suppressed,
            Some(LogLevel::Trace | LogLevel::Debug | LogLevel::Info) => Verbosity::Suppressed,
            Some(LogLevel::Error) => Verbosity::Errors,
            Some(LogLevel::Warn) | None => Verbosity::Warnings,
        }
    }
}

/// When to colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
pub enum RulesCommand {
    /// Print every rule: id, name, keywords.
    List(RulesListArgs),
    /// Run every rule's examples and negative examples; exit 1 on a failure.
    Check(RulesCheckArgs),
}

/// `--rules` and `--extra-rules`, shared by `scan` and `rules list`.
#[derive(Args)]
pub struct RuleSetArgs {
    /// Replace the built-in rules with the rules in FILE.
    #[arg(long, value_name = "FILE", help_heading = "Rules")]
    pub rules: Option<PathBuf>,

    /// Add the rules in FILE to the rule set (repeatable).
    #[arg(long, value_name = "FILE", help_heading = "Rules")]
    pub extra_rules: Vec<PathBuf>,
}

#[derive(Args)]
pub struct RulesListArgs {
    #[command(flatten)]
    pub rule_set: RuleSetArgs,
    /// List providers instead of rules: one line each with the provider's
    /// name, its rules' ids and where its format is documented.
    #[arg(long)]
    pub providers: bool,
}

#[derive(Args)]
pub struct RulesCheckArgs {
    /// A rule file to check alone (default: the built-in rules).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `scanner merge` flags.
#[derive(Args)]
pub struct MergeArgs {
    /// Every shard's report (`--format json` or `jsonl`) and every shard's
    /// `--stats-json` file, in any order.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Format of the merged report (`json` is byte for byte what an
    /// unsharded scan writes).
    #[arg(
        long,
        visible_alias = "report-format",
        value_enum,
        default_value = "text"
    )]
    pub format: Format,

    /// Write the merged report to FILE (atomically) instead of stdout
    /// (`-`: stdout).
    #[arg(long, short = 'o', visible_alias = "report-path", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The exit status when there are findings.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub exit_code: u8,

    /// Exit 0 or 1 even when a shard could not read some files.
    #[arg(long)]
    pub ignore_errors: bool,

    /// No summary line on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Colour the text report: auto, always or never.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

#[derive(Subcommand)]
pub enum HookCommand {
    /// Write a git pre-commit hook that runs `scanner scan --staged`
    /// (honours core.hooksPath).
    Install(HookInstallArgs),
    /// What the installed hook runs: `scan --staged`, and after a finding, why the commit is
    /// refused and the ways out.
    Run,
}

#[derive(Args)]
pub struct HookInstallArgs {
    /// Replace an existing hook that scanner did not write.
    #[arg(long)]
    pub force: bool,
}

/// Parses `123`, `64K`, `8M`, `1G` (binary multiples; `KB`, `KiB` and
/// lowercase are accepted too).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (expected e.g. 1048576, 512K, 8M, 1G)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("`{s}`: unknown size unit `{unit}` (use K, M or G)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("`{s}` is too large"))
}

impl Cli {
    /// Parses `std::env::args_os`; on a bad flag clap prints the message and
    /// this returns the error so that `main` owns the exit status.
    pub fn parse_from_env() -> Result<Cli, clap::Error> {
        let mut cli = Cli::try_parse_from(std::env::args_os().collect::<Vec<OsString>>())?;
        // `-o -` is stdout, not a file named `-` (gitleaks' `--report-path -`).
        let stdout = |o: &mut Option<PathBuf>| {
            if o.as_deref() == Some(std::path::Path::new("-")) {
                *o = None;
            }
        };
        match &mut cli.command {
            Command::Scan(a) => stdout(&mut a.output),
            Command::Merge(m) => stdout(&mut m.output),
            _ => {}
        }
        Ok(cli)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("8m"), Ok(8 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("12X").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }

    #[test]
    fn scan_defaults_and_flags() {
        let cli = Cli::try_parse_from(["scanner", "scan"]).unwrap();
        let Command::Scan(a) = cli.command else {
            panic!()
        };
        assert!(a.paths.is_empty());
        assert!(matches!(a.format, Format::Text));
        let cli = Cli::try_parse_from([
            "scanner",
            "scan",
            "a",
            "b",
            "--format",
            "json",
            "--exclude",
            "*.log",
            "--exclude",
            "vendor/",
            "--max-filesize",
            "1M",
            "-j",
            "3",
        ])
        .unwrap();
        let Command::Scan(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.paths, [PathBuf::from("a"), PathBuf::from("b")]);
        assert!(matches!(a.format, Format::Json));
        assert_eq!(a.exclude, ["*.log", "vendor/"]);
        assert_eq!(a.max_filesize, Some(1 << 20));
        assert_eq!(a.threads, Some(3));
        assert!(Cli::try_parse_from(["scanner", "scan", "--threads", "0"]).is_err());
        let verbosity = |args: &[&str]| {
            let cli = Cli::try_parse_from([&["scanner", "scan"][..], args].concat()).unwrap();
            let Command::Scan(a) = cli.command else {
                panic!()
            };
            a.verbosity()
        };
        assert_eq!(verbosity(&[]), Verbosity::Warnings);
        assert_eq!(verbosity(&["-v"]), Verbosity::Suppressed);
        assert_eq!(verbosity(&["--log-level", "warn"]), Verbosity::Warnings);
        assert_eq!(verbosity(&["--log-level", "error"]), Verbosity::Errors);
        for level in ["info", "debug", "trace"] {
            assert_eq!(verbosity(&["--log-level", level]), Verbosity::Suppressed);
        }
        assert!(Cli::try_parse_from(["scanner", "scan", "-v", "--log-level", "error"]).is_err());
        assert!(Cli::try_parse_from(["scanner", "scan", "--staged", "--diff", "HEAD"]).is_err());
    }
}

/// `--min-confidence` levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ConfidenceArg {
    Low,
    Medium,
    High,
}

impl From<ConfidenceArg> for scanner_engine::Confidence {
    fn from(c: ConfidenceArg) -> Self {
        match c {
            ConfidenceArg::Low => scanner_engine::Confidence::Low,
            ConfidenceArg::Medium => scanner_engine::Confidence::Medium,
            ConfidenceArg::High => scanner_engine::Confidence::High,
        }
    }
}

/// What `--stats-json` records of a run's options (`run.options`; `scanner merge` compares them).
impl ScanArgs {
    /// The options that change which findings a run reports and how: shards of
    /// one scan must agree on all of them. Output destinations, threads and the
    /// shard itself are left out.
    pub fn options_json(&self) -> serde_json::Value {
        let a = self;
        let paths = |v: &[PathBuf]| -> Vec<String> {
            v.iter().map(|p| p.to_string_lossy().into_owned()).collect()
        };
        // `--history URL`: the URL as every report names it, without user or password.
        let roots: Vec<String> = match a.history {
            true => a
                .paths
                .iter()
                .map(|p| match crate::input::remote::is_url(p) {
                    true => crate::input::remote::redact(&p.to_string_lossy()),
                    false => p.to_string_lossy().into_owned(),
                })
                .collect(),
            false => paths(&a.paths),
        };
        let opt = |p: &Option<PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
        serde_json::json!({
            "paths": roots,
            "stdin_name": opt(&a.stdin_name),
            "files_from": opt(&a.files_from),
            "repos_from": opt(&a.repos_from),
            "no_ignore": a.no_ignore,
            "exclude": a.exclude,
            "follow": a.follow,
            "max_filesize": a.max_filesize,
            "min_confidence": a.min_confidence.map(|c| format!("{c:?}").to_lowercase()),
            "max_decode_depth": a.max_decode_depth,
            "no_archives": a.no_archives,
            "archive_depth": a.archive_depth,
            "archive_max_bytes": a.archive_max_bytes,
            "archive_max_run_bytes": a.archive_max_run_bytes,
            "archive_max_members": a.archive_max_members,
            "binary": a.binary,
            "staged": a.staged,
            "history": a.history,
            "range": a.range,
            "since": a.since,
            "reflogs": a.reflogs,
            "diff": a.diff,
            "rules": opt(&a.rule_set.rules),
            "extra_rules": paths(&a.rule_set.extra_rules),
            "config": opt(&a.config),
            "no_config": a.no_config,
            "baseline": opt(&a.baseline),
            "show_secrets": a.show_secrets,
            "validate": a.validation.validate,
            "min_validity": a.validation.min_validity().map(|v| v.as_str()),
        })
    }
}
