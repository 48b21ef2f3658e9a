//! `scanner baseline add PATH:LINE...`: a command over a scan, apart from the baseline file and
//! filters (`baseline.rs`) that every scan uses.

use std::path::PathBuf;

use anyhow::bail;

use crate::baseline::{load, write, Entry, PathKey, Recorder};
use crate::messages::{escape, escape_path};
use crate::paths;

/// `scanner baseline add PATH:LINE...`: scans each PATH with the configuration a scan of it
/// would use, and appends the findings it reports on LINE (those the baseline does not hold
/// yet) to the baseline in effect: `--baseline FILE`, else the config's `baseline`. The file
/// is created when missing. A location with no such finding is an error (exit 2), and then
/// nothing is written.
pub fn add(args: &crate::args::BaselineAddArgs) -> anyhow::Result<std::process::ExitCode> {
    let mut wanted = Vec::new();
    for loc in &args.locations {
        let (path, line) = location(loc).ok_or_else(|| {
            anyhow::anyhow!(
                "`{}`: expected PATH:LINE, as a report prints it",
                escape(loc)
            )
        })?;
        if let Some(in_history) = history_location(path) {
            bail!(
                "`{}`: a --history location (COMMIT:PATH): `baseline add` scans the work \
                 tree; add {}:{line} if the file still holds the secret, else record the \
                 history's findings with `scanner scan --history --write-baseline FILE`",
                escape(loc),
                escape(in_history)
            );
        }
        wanted.push((PathBuf::from(path), line));
    }
    // A member of an archive (`bundle.zip!inner.env`) is found by scanning its archive.
    let mut paths: Vec<PathBuf> = wanted
        .iter()
        .map(|(p, _)| match p.exists() {
            true => p.clone(),
            false => paths::archive_of(p).unwrap_or(p).to_path_buf(),
        })
        .collect();
    paths.sort();
    paths.dedup();

    let config = crate::config::discover(&paths, args.config.as_deref(), args.no_config)?;
    let Some(target) = args
        .baseline
        .clone()
        .or_else(|| config.and_then(|c| c.baseline))
    else {
        bail!(
            "no baseline to add to: set `baseline = \".scanner-baseline.json\"` in {} \
             (every scan and the hook then use it), or pass --baseline FILE",
            crate::config::FILE_NAME
        );
    };

    let mut scan = match args.staged {
        true => crate::args::ScanArgs::from_flags(&["--quiet", "--staged"]),
        false => crate::args::ScanArgs::from_flags(&["--quiet"]),
    };
    scan.paths = paths;
    scan.config = args.config.clone();
    scan.no_config = args.no_config;
    scan.baseline = target.exists().then(|| target.clone());
    let mut plan = crate::scan::ScanPlan::new(&scan)?;
    // Last: it sees what every other filter (the baseline among them) kept.
    let keys = PathKey::new(&paths::current_dir()?, &target)?;
    let (recorder, found) = Recorder::new(keys.clone());
    plan.filters.push(Box::new(recorder));
    let sink = crate::output::Sink::new(
        crate::output::SinkOptions {
            format: crate::output::Format::Json,
            show_secrets: false,
            color: false,
        },
        Box::new(std::io::sink()),
    );
    let stop = crate::pipeline::StopHandle::default();
    let (report, _) = crate::pipeline::scan(
        plan.source,
        plan.engine,
        sink,
        plan.filters,
        &plan.options,
        &stop,
    )?;
    if report.errors > 0 {
        bail!("could not read every file named (see the warnings above): nothing added");
    }
    let found = std::mem::take(&mut *found.lock().unwrap_or_else(|e| e.into_inner()));

    let mut added: Vec<Entry> = Vec::new();
    for (path, line) in &wanted {
        let key = keys.key(path);
        let here: Vec<&Entry> = found
            .iter()
            .filter(|e| e.path == key && e.line == *line)
            .collect();
        if here.is_empty() {
            bail!(
                "no finding to add at {}:{line} (none there, or the baseline or an allow \
                 already suppresses it: `scanner scan -v {}` lists both): nothing added",
                escape_path(path),
                escape_path(path)
            );
        }
        added.extend(here.into_iter().cloned());
    }
    let mut entries = if target.exists() {
        load(&target)?
    } else {
        Vec::new()
    };
    let before = entries.len();
    entries.extend(added.iter().cloned());
    let total = write(&target, entries)?;
    let n = total - before;
    crate::messages::info(&format!(
        "added {n} {} to {} ({total} in all):",
        if n == 1 { "finding" } else { "findings" },
        escape_path(&target)
    ));
    for e in &added {
        crate::messages::hint(&format!("{}:{}  {}", escape(&e.path), e.line, e.rule_id));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `PATH:LINE`, or `PATH:LINE:COL` as the text report prints a finding (the column is not
/// needed: every finding on the line is added), unless a file is named `PATH:LINE`.
fn location(loc: &str) -> Option<(&str, u32)> {
    let (path, n) = split_number(loc)?;
    match split_number(path) {
        Some(with_line) if !std::path::Path::new(path).exists() => Some(with_line),
        _ => Some((path, n)),
    }
}

/// The path of `COMMIT:PATH`, as the text report of `--history` prints a finding (12 hex
/// digits, or the 40 of a full id), unless a file of that whole name exists.
fn history_location(path: &str) -> Option<&str> {
    let (commit, rest) = path.split_once(':')?;
    let hex = matches!(commit.len(), 12 | 40) && commit.bytes().all(|b| b.is_ascii_hexdigit());
    (hex && !rest.is_empty() && !std::path::Path::new(path).exists()).then_some(rest)
}

/// `S:N` with N a positive number, as `(S, N)`.
fn split_number(s: &str) -> Option<(&str, u32)> {
    s.rsplit_once(':')
        .and_then(|(p, n)| Some((p, n.parse::<u32>().ok()?)))
        .filter(|&(p, n)| !p.is_empty() && n > 0)
}
