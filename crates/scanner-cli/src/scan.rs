//! `scanner scan`: the high layer of arguments.
//!
//! [`ScanArgs`] is what the user typed; [`ScanPlan`] is what the run needs:
//! the compiled engine, what to scan ([`Source`]), walker and reader options,
//! the report writer and the post-scan filters. `run` builds the plan, hands
//! it to [`pipeline::scan`], then prints the summary and owns the exit
//! status:
//!
//! | status | when |
//! | --- | --- |
//! | 0 | no finding, and every file in scope was read |
//! | 1 | at least one finding reported (after suppressions); 0 instead when `--write-baseline` wrote them to its file |
//! | 2 | an error: bad flag, rule or config, unreadable root; or a file or directory in scope could not be read (unless `--ignore-errors`), whether or not there were findings: a partial scan must not pass for a complete one |
//!
//! # Where things plug in
//!
//! - what is scanned: [`ScanPlan::source`] (`--staged` → `Source::Items`,
//!   `--diff BASE` → the changed files as `Source::Paths`);
//! - what is out of scope, for every source: `ScanOptions::scope`
//!   ([`Scope`]);
//! - what is suppressed after the scan: [`ScanPlan::filters`] (baseline,
//!   diff context, config rule overrides) — each a
//!   [`crate::filter::FindingFilter`], run in the sink thread
//!   after line numbers are final;
//! - what is done after the scan: `finish_filters` (writing a baseline).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use scanner_engine::{Engine, EngineBuilder, RuleFile};

use crate::args::{ColorChoice, ScanArgs};
use crate::config::{self, Config};
use crate::filter::FindingFilter;
use crate::input::scope::{OwnOutput, PathAllow};
use crate::input::walk::{self, WalkOptions};
use crate::input::{git, remote, HistoryRepo, Scope, Source, VersionControl};
use crate::messages::{self, escape_path};
use crate::outfile::OutputFile;
use crate::output::{Format, Sink, SinkOptions};
use crate::pipeline::{self, ScanOptions, StopHandle};
use crate::progress::Progress;
use crate::report::ScanReport;
use crate::summary;
use crate::{baseline, signals};

/// Everything a scan needs, built from the flags.
pub struct ScanPlan {
    pub engine: Arc<Engine>,
    pub source: Source,
    pub options: ScanOptions,
    pub filters: Vec<Box<dyn FindingFilter>>,
    /// `--write-baseline`: written after the scan.
    pub baseline_out: Option<baseline::Pending>,
    /// The baseline of this run, `--baseline`, else the config's `baseline`, which may not
    /// exist yet (it then suppresses nothing): never scanned as an input, and the one a refused
    /// commit is told to add to (`scanner baseline add` creates it).
    pub baseline: Option<PathBuf>,
    /// `--history URL`, `--repos-from`: the directory of their clones (each removed once
    /// scanned), removed when the plan drops.
    pub clones: Option<remote::Clones>,
    /// `--history`: freed memory handed back to the kernel while the scan runs, until the
    /// plan drops.
    pub(crate) trimmer: Option<crate::malloc::Trimmer>,
}

/// Builds the rule set: `--rules FILE` or the built-in rules, then every
/// `--extra-rules` and the config's `extra_rules`, minus the config's
/// `disable_rules`. Build warnings go to stderr; errors name the file and
/// the rule.
pub fn build_engine(
    rules: Option<&Path>,
    extra: &[PathBuf],
    config: Option<&Config>,
    decode_depth: Option<usize>,
) -> anyhow::Result<Engine> {
    build_engine_from(rules, false, extra, config, decode_depth, false)
}

/// [`build_engine`], where `rules_found` says that `rules` was found in the scanned tree (a
/// `.gitleaks.toml`), as a [`Config::found`]'s `extra_rules` were: the validators of those
/// files are dropped (`config.rs`, "Trust"), with a note when `validating`.
pub fn build_engine_from(
    rules: Option<&Path>,
    rules_found: bool,
    extra: &[PathBuf],
    config: Option<&Config>,
    decode_depth: Option<usize>,
    validating: bool,
) -> anyhow::Result<Engine> {
    // A file found in the scanned tree may not choose where secrets are sent.
    let load = |path: &Path, found: bool| -> anyhow::Result<Vec<RuleFile>> {
        let mut files = RuleFile::load_with_extends(path)?;
        for f in files.iter_mut().filter(|_| found) {
            let dropped = f.drop_validators();
            if validating && !dropped.is_empty() {
                let n = dropped.len() as u64;
                messages::note(&format!(
                    "{}: validators of {n} {} not used ({}): a rule file found in the scanned \
                     tree may not choose where secrets are sent; name it with --rules, \
                     --extra-rules or --config to use them",
                    f.origin(),
                    crate::progress::plural(n, "rule", "rules"),
                    dropped.join(", ")
                ));
            }
        }
        Ok(files)
    };
    let mut b = EngineBuilder::new();
    if let Some(depth) = decode_depth {
        b = b.decode_depth(depth);
    }
    // The base set: a rule file (`--rules`, or a discovered gitleaks
    // config) with the files its `[extend] path` names, and the built-ins
    // first when one of them says `[extend] useDefault = true`; else the
    // built-ins alone.
    let builtin = |mut b: EngineBuilder| {
        for f in RuleFile::builtin() {
            b = b.add(f);
        }
        b
    };
    match rules {
        Some(path) => {
            let files = load(path, rules_found)?;
            if files.iter().any(RuleFile::uses_default) {
                b = builtin(b);
            }
            for f in files {
                b = b.add(f);
            }
        }
        None => b = builtin(b),
    }
    let config_extra = config.map(|c| &c.extra_rules[..]).unwrap_or_default();
    let found = config.is_some_and(|c| c.found);
    let sources = extra.iter().map(|p| (p, false));
    for (path, found) in sources.chain(config_extra.iter().map(|p| (p, found))) {
        // A user rule with a built-in's id (or gitleaks alias) replaces it.
        for f in load(path, found)? {
            b = b.add(f);
        }
    }
    if let Some(c) = config {
        b = c.apply(b);
    }
    let (engine, warnings) = match config {
        Some(c) => b.build().map_err(|e| c.explain(e))?,
        None => b.build()?,
    };
    for w in warnings.into_iter().filter(|_| messages::warnings_shown()) {
        let line = match w.kind {
            scanner_engine::WarningKind::Replaced => messages::rule_note,
            _ => messages::rule_warning,
        };
        // A warning of no rule file is of the configuration (`disable_rules`): name it.
        let file = w.file.as_deref().or(config.map(|c| c.path.as_path()));
        messages::print(&line(file, w.rule.as_deref(), &w.message));
    }
    Ok(engine)
}

/// How many threads diff a history's trees beside the one that reads `git rev-list`
/// ([`crate::input::HistoryOptions::diff_threads`]): none below six workers on as many
/// cores, where one walking thread keeps ahead of the workers and the split would cost
/// them CPU (each diff thread sizes the blobs of its own commits, duplicates included);
/// then one per four workers, two to six (docs/performance.md, "History on many cores").
fn diff_threads(threads: usize) -> usize {
    match threads.min(crate::cores()) {
        n if n < 6 => 0,
        n => (n / 4).clamp(2, 6),
    }
}

/// A gitleaks configuration, looked up as gitleaks does when neither
/// `--rules` nor `.scanner.toml` names the rules: `$GITLEAKS_CONFIG`, then
/// `.gitleaks.toml` and `.github/.gitleaks.toml` in the scanned directory (`root`: a
/// repository's root for `--staged`, `--diff` and `--history`).
/// A file found there must pass [`config::check_trusted`], as `.scanner.toml`
/// does; `$GITLEAKS_CONFIG` is the user's own word.
fn discover_gitleaks(root: &Path) -> anyhow::Result<Option<GitleaksConfig>> {
    let found = locate_gitleaks(root);
    if let Some(g) = found.as_ref().filter(|g| g.found) {
        config::check_trusted(&g.path)?;
    }
    Ok(found)
}

/// Where [`discover_gitleaks`] looks, without the trust check: the file it would use.
fn locate_gitleaks(root: &Path) -> Option<GitleaksConfig> {
    if let Some(p) = std::env::var_os("GITLEAKS_CONFIG").filter(|p| !p.is_empty()) {
        return Some(GitleaksConfig {
            path: PathBuf::from(p),
            found: false,
        });
    }
    // gitleaks' next choice, its rules in the variable itself: not read here. Said, since the
    // scan runs without the rules a gitleaks run would use.
    if std::env::var_os("GITLEAKS_CONFIG_TOML").is_some_and(|v| !v.is_empty()) {
        messages::warn(
            None,
            "GITLEAKS_CONFIG_TOML is set, and not read: save its rules to a file and name it \
             with GITLEAKS_CONFIG=FILE or --rules FILE to scan with them",
        );
    }
    let dir = if root.is_dir() {
        Some(root)
    } else {
        root.parent()
    };
    let found = dir.and_then(|dir| {
        [".gitleaks.toml", ".github/.gitleaks.toml"]
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
    });
    found.map(|path| GitleaksConfig { path, found: true })
}

/// A gitleaks configuration in use ([`discover_gitleaks`]).
struct GitleaksConfig {
    path: PathBuf,
    /// Found in the scanned tree, not named by `$GITLEAKS_CONFIG`: its validators are
    /// dropped ([`build_engine_from`]).
    found: bool,
}

impl ScanPlan {
    pub fn new(args: &ScanArgs) -> anyhow::Result<ScanPlan> {
        ScanPlan::with_stop(args, &StopHandle::default())
    }

    /// [`ScanPlan::new`], where `stop` ends the cloning of remote repositories.
    pub fn with_stop(args: &ScanArgs, stop: &StopHandle) -> anyhow::Result<ScanPlan> {
        // Written after the scan: a path that cannot be written fails now, as `-o` does. `-`
        // is standard output, as for `-o`, if the report is not written there.
        for (flag, path) in [
            ("--stats-json", &args.stats_json),
            ("--write-baseline", &args.write_baseline),
        ] {
            if let Some(p) = path {
                if crate::outfile::is_stdout(p) && args.output.is_none() {
                    anyhow::bail!(
                        "{flag} -: standard output is the report's (write the report to a file \
                         with -o FILE, or give {flag} a file)"
                    );
                }
                crate::outfile::check_target(p).context(flag)?;
            }
        }
        let implicit_root = args.paths.is_empty() && args.files_from.is_none();
        let mut roots = args.paths.clone();
        if let Some(list) = &args.files_from {
            // The list would take all of standard input, leaving `-` empty.
            if reads_stdin(list) {
                if let Some(p) = roots.iter().find(|p| reads_stdin(p)) {
                    anyhow::bail!(
                        "--files-from {} and the path {} both read standard input",
                        escape_path(list),
                        escape_path(p)
                    );
                }
            }
            roots.extend(walk::read_file_list(list)?);
        }
        check_outputs_apart(args, &roots)?;
        if implicit_root {
            roots.push(PathBuf::from("."));
        }
        // Remote repositories: the config is the current directory's.
        let remote = args.history
            && (args.repos_from.is_some() || args.paths.first().is_some_and(|p| remote::is_url(p)));
        if remote {
            roots = vec![PathBuf::from(".")];
        }
        let mut clones = None;
        let mut remotes = Vec::new();
        let mut trimmer = None;

        let cwd = crate::paths::current_dir()?;
        // --staged / --diff: git runs while the engine builds.
        let git_job = git::spawn_source(
            args.staged,
            args.diff.clone(),
            args.paths.clone(),
            cwd.clone(),
        );

        let threads = match args.threads {
            Some(n) => n as usize,
            None => crate::cores(),
        };
        // --history: the walk starts while the engine builds.
        let history = if args.history {
            if args.paths.len() > 1 || (args.repos_from.is_some() && !args.paths.is_empty()) {
                anyhow::bail!("--history takes one repository PATH, or --repos-from FILE");
            }
            let repo = if remote {
                cwd.clone()
            } else {
                roots[0].clone()
            };
            // git would say "not a git repository" of a file inside one.
            if !remote && repo.is_file() {
                anyhow::bail!(
                    "{} is a file: --history takes a repository's directory (its work tree \
                     or any directory in it, or a bare repository)",
                    repo.display()
                );
            }
            let options = |repo: PathBuf| crate::input::HistoryOptions {
                repo,
                revs: args.range.clone(),
                since: args.since.clone(),
                reflogs: args.reflogs,
                chains: true,
                diff_threads: diff_threads(threads),
                list_threads: threads.min(crate::cores()),
            };
            let local = match remote {
                false => crate::input::history::repositories_in(&repo),
                true => None,
            };
            let mut repos: Vec<HistoryRepo> = match local {
                // Remote repositories: each cloned, named by its URL without credentials.
                _ if remote => {
                    let urls = match &args.repos_from {
                        Some(list) => remote::read_list(list)?,
                        None => vec![args.paths[0].to_string_lossy().into_owned()],
                    };
                    let made = remote::Clones::new()
                        .context("cannot make a temporary directory to clone into")?;
                    signals::remove_on_exit(made.dir());
                    let stop = stop.clone();
                    let repos =
                        made.repositories(&urls, Arc::new(move || stop.is_stopped()), options);
                    remotes = urls.iter().map(|url| remote::redact(url)).collect();
                    clones = Some(made);
                    repos
                }
                // A directory of repositories: each one, named by its directory.
                Some(children) if !children.is_empty() => children
                    .into_iter()
                    .map(|child| {
                        let name = child.file_name().map(PathBuf::from);
                        HistoryRepo::new(name, options(child))
                    })
                    .collect(),
                _ => vec![HistoryRepo::new(None, options(repo.clone()))],
            };
            // Before the walk's threads start: each thread's malloc arena
            // is made at its first allocation, and the cap on arenas holds
            // only for those made after it (the pipeline tunes again, for
            // its other callers).
            crate::malloc::for_rebuilt_objects(threads);
            trimmer = Some(crate::malloc::Trimmer::start());
            if let Some(first) = repos.first_mut() {
                first.start_early();
            }
            Some((repo, repos))
        } else {
            None
        };

        let config =
            config::discover(&roots, args.config.as_deref(), args.no_config)?.map(Arc::new);
        // A gitleaks user's config is picked up as gitleaks would, unless
        // our own config (its `extra_rules`) or flags say which rules to use:
        // a config with only a baseline or `allow_paths` names no rules.
        if let Some(c) = &config {
            messages::note(&format!("config {}", escape_path(&c.path)));
        }
        let names_rules = config.as_ref().is_some_and(|c| !c.extra_rules.is_empty());
        // A repository's scan (--staged and --diff: the current directory's; --history: PATH's)
        // reports paths from its root, where .gitleaksignore is read: its gitleaks config is
        // looked for there too, wherever in the work tree the scan starts.
        let gitleaks_root = match &roots[..] {
            _ if args.staged || args.diff.is_some() => Some(config::work_tree_top(&cwd)),
            [repo] if args.history && !remote => {
                let base = crate::paths::absolute(&cwd, repo);
                Some(git::toplevel(&base, "--history").unwrap_or(base))
            }
            _ => roots.first().cloned(),
        };
        let gitleaks = match (&args.rule_set.rules, gitleaks_root) {
            (None, Some(root)) if !args.no_config && !names_rules => discover_gitleaks(&root)?,
            (None, Some(root)) if !args.no_config => {
                // Its rules would go unused without a word: a token only they know would pass.
                let same = |a: &Path, b: &Path| a.canonicalize().ok() == b.canonicalize().ok();
                let unused = locate_gitleaks(&root).filter(|g| {
                    let listed = config.iter().flat_map(|c| &c.extra_rules);
                    !listed.into_iter().any(|p| same(p, &g.path))
                });
                if let (Some(g), Some(c)) = (unused, &config) {
                    messages::warn(
                        Some(&g.path),
                        &format!(
                            "not used: the extra_rules of {} name the rules (list it there \
                             too to scan with its rules)",
                            escape_path(&c.path)
                        ),
                    );
                }
                None
            }
            _ => None,
        };
        if let Some(g) = &gitleaks {
            messages::note(&format!(
                "rules from the gitleaks config {}",
                escape_path(&g.path)
            ));
        }
        let engine = build_engine_from(
            args.rule_set
                .rules
                .as_deref()
                .or(gitleaks.as_ref().map(|g| g.path.as_path())),
            gitleaks.as_ref().is_some_and(|g| g.found),
            &args.rule_set.extra_rules,
            config.as_deref(),
            args.max_decode_depth.map(|d| d as usize),
            args.validation.validate,
        )?;

        let mut git_source = match git_job {
            Some(job) => Some(job.join().expect("git thread panicked")?),
            None => None,
        };
        if let Some((repo, repos)) = history {
            // Absolute, as the other sources' bases are: the config's path globs
            // (`allow_paths`, a rule's `allow_paths`) are matched below its own absolute
            // directory, and a relative base (the default `.`) matched nothing.
            let base = crate::paths::absolute(&cwd, &repo);
            // One local repository's paths are relative to its work tree's root, wherever in
            // it PATH points (a bare one's, or one git cannot open, stay relative to PATH).
            let base = match &repos[..] {
                [one] if one.prefix.is_none() => {
                    crate::input::git::toplevel(&base, "--history").unwrap_or(base)
                }
                _ => base,
            };
            git_source = Some(git::GitSource {
                scan_base: base,
                source: Source::History(repos),
                diff_filter: None,
            });
        }
        // What relative finding paths are relative to: the repository root for --staged.
        let scan_base = git_source
            .as_ref()
            .map_or_else(|| cwd.clone(), |g| g.scan_base.clone());
        let allow: Option<PathAllow> = config.clone().map(|c| {
            let base = scan_base.clone();
            Arc::new(move |p: &Path, _is_dir: bool| c.is_path_allowed(&base, p)) as PathAllow
        });
        // `--exclude` globs are relative to the current directory, as
        // ripgrep's `--glob` is; listed git paths are relative to
        // `scan_base`, so the globs are matched from there for them.
        let glob_base = if git_source.is_some() {
            &scan_base
        } else {
            &cwd
        };
        let scope = Scope::new(glob_base, &args.exclude, allow, args.max_filesize)?;

        let defaults = ScanOptions::default();
        let options = ScanOptions {
            threads,
            walk: WalkOptions {
                no_ignore: args.no_ignore,
                follow: args.follow,
                strip_dot: implicit_root,
                stdin_name: args
                    .stdin_name
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("<stdin>")),
                listed_from: args.files_from.is_some().then_some(args.paths.len()),
                serial: args.serial_walk,
                inner_roots: match git_source {
                    None => walk::InnerRoots::of(&roots),
                    Some(_) => walk::InnerRoots::default(),
                },
            },
            scope,
            binary: args.binary,
            chunk_size: args.chunk_size.map_or(defaults.chunk_size, |n| n as usize),
            split_threshold: args.split_threshold.unwrap_or(defaults.split_threshold),
            split_grain: args.split_grain.unwrap_or(defaults.split_grain),
            progress: !args.quiet && messages::warnings_shown() && Progress::wanted(),
            stdout_id: stdout_id(),
            archives: (!args.no_archives).then(|| {
                let d = crate::input::archive::Limits::default();
                crate::input::archive::Limits {
                    max_depth: args.archive_depth,
                    max_total_bytes: args.archive_max_bytes.unwrap_or(d.max_total_bytes),
                    max_run_bytes: args.archive_max_run_bytes.unwrap_or(d.max_run_bytes),
                    max_members: args.archive_max_members.unwrap_or(d.max_members),
                    ..d
                }
            }),
            shard: crate::shard::Shard::resolve(args.shard)?,
            list_suppressed: messages::suppressed_shown(),
            ..defaults
        };
        if options.shard.is_some() && args.report_unused {
            anyhow::bail!(
                "--report-unused needs the whole scan: a shard sees only its share, so the \
                 entries of every other shard would be listed as unused (run it unsharded)"
            );
        }
        if options.shard.is_some() && args.write_baseline.is_some() {
            anyhow::bail!(
                "--write-baseline needs the whole scan: a shard records only its share, and \
                 the baseline would hold none of the other shards' findings (run it unsharded)"
            );
        }

        let from_git = git_source.is_some();
        let (source, diff_filter) = match git_source {
            Some(g) => (g.source, g.diff_filter),
            None => (Source::Paths(roots), None),
        };

        let mut filters: Vec<Box<dyn FindingFilter>> = Vec::new();
        if let Some(c) = &config {
            if let Some(f) = c.rule_filter(&scan_base)? {
                filters.push(Box::new(f));
            }
        }
        if let Some(f) = diff_filter {
            filters.push(Box::new(f));
        }
        let engine = Arc::new(engine);
        let ignore_dir = match &args.paths[..] {
            [one] if one.is_dir() && !from_git => one.clone(),
            _ => scan_base.clone(),
        };
        if let Some(f) = crate::gitleaksignore::GitleaksIgnore::discover(&ignore_dir, &engine)? {
            filters.push(Box::new(f));
        }
        if let Some(level) = args.min_confidence {
            filters.push(Box::new(crate::filter::MinConfidence(level.into())));
        }
        let (baseline_filters, baseline_out) = baseline::filters(
            baseline_in_effect(args, config.as_deref()).as_deref(),
            args.write_baseline.as_deref(),
            args.report_unused,
            &scan_base,
            &remotes,
        )?;
        filters.extend(baseline_filters);
        let baseline = args
            .baseline
            .clone()
            .or_else(|| config.as_ref()?.baseline.clone());

        Ok(ScanPlan {
            engine,
            source,
            options,
            filters,
            baseline_out,
            baseline,
            clones,
            trimmer,
        })
    }
}

/// `--baseline FILE`, else the config's `baseline`, which applies to every mode (plain scans,
/// `--staged`, `--diff`, `--history`, the hooks). A configured file that does not exist yet
/// suppresses nothing; a note says so, unless this run is writing it.
fn baseline_in_effect(args: &ScanArgs, config: Option<&Config>) -> Option<PathBuf> {
    if let Some(b) = &args.baseline {
        return Some(b.clone());
    }
    let c = config?;
    let b = c.baseline.as_ref()?;
    if b.exists() {
        return Some(b.clone());
    }
    if args.write_baseline.is_none() && !args.quiet {
        messages::note(&format!(
            "the baseline {} that {} names does not exist yet: it suppresses nothing \
             (`scanner baseline add PATH:LINE` creates it)",
            escape_path(b),
            escape_path(&c.path)
        ));
    }
    None
}

/// Refuses two of the files a run writes (`-o`, `--stats-json`,
/// `--write-baseline`) on one file, the later written replacing the
/// earlier, and a file written over a file named to be scanned (a root),
/// which the scan would skip as its own output and then replace: neither
/// would say a word. Devices and FIFOs (`/dev/null` twice) are written in
/// place and may be shared.
fn check_outputs_apart(args: &ScanArgs, roots: &[PathBuf]) -> anyhow::Result<()> {
    let regular_or_absent = |p: &Path| std::fs::metadata(p).map_or(true, |m| m.is_file());
    let same = |a: &Path, b: &Path| {
        regular_or_absent(a) && regular_or_absent(b) && OwnOutput::new(&[a]).contains(b)
    };
    let outputs: Vec<(&str, &Path)> = [
        ("-o", &args.output),
        ("--stats-json", &args.stats_json),
        ("--write-baseline", &args.write_baseline),
    ]
    .into_iter()
    .filter_map(|(flag, p)| Some((flag, p.as_deref()?)))
    .collect();
    for (i, &(flag, out)) in outputs.iter().enumerate() {
        let stdout = crate::outfile::is_stdout;
        if let Some((other, _)) = outputs[i + 1..]
            .iter()
            .find(|(_, o)| stdout(out) && stdout(o))
        {
            anyhow::bail!("{flag} - and {other} - both name standard output (give one a file)");
        }
        if let Some((other, _)) = outputs[i + 1..].iter().find(|(_, o)| same(out, o)) {
            anyhow::bail!(
                "{flag} and {other} both name {}: one would replace the other (give each its own file)",
                escape_path(out)
            );
        }
        if let Some(root) = roots.iter().find(|r| r.is_file() && same(out, r)) {
            anyhow::bail!(
                "{flag} {}: is also a path to scan; the scan would skip it as its own output \
                 and then replace it (write to another file)",
                escape_path(root)
            );
        }
    }
    Ok(())
}

/// After the scan, before the exit status: work the filters left to do
/// (write the `--write-baseline` file).
fn finish_filters(baseline_out: Option<baseline::Pending>) -> anyhow::Result<()> {
    if let Some(pending) = baseline_out {
        let (path, n) = pending.write()?;
        messages::info(&format!(
            "wrote {n} {} to {}",
            if n == 1 { "finding" } else { "findings" },
            crate::outfile::shown(&path)
        ));
    }
    Ok(())
}

pub fn run(args: ScanArgs) -> anyhow::Result<ExitCode> {
    // Before anything is said: building the plan warns about rules and notes the config.
    messages::set_verbosity(args.verbosity());
    // Before the plan: cloning a remote repository stops on a signal too.
    let stop = StopHandle::default();
    let caught = signals::install(stop.clone()).context("installing the signal handler")?;
    let plan = ScanPlan::with_stop(&args, &stop)?;

    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            args.output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let sink_opts = SinkOptions {
        format: args.format,
        show_secrets: args.show_secrets,
        color,
    };
    let atomic = match &args.output {
        Some(path) => {
            Some(OutputFile::create(path).with_context(|| format!("-o {}", escape_path(path)))?)
        }
        None => None,
    };
    let out: Box<dyn std::io::Write + Send> = match &atomic {
        Some(a) => Box::new(a.file()?),
        None => Box::new(std::io::stdout()),
    };
    // What `scanner merge` pairs this run's stats with its report by.
    let report_digest = crate::shard::ReportDigest::default();
    let mut sink = Sink::new(sink_opts, report_digest.wrap(out));
    // `--staged` scans the index's blobs: the work tree's files may hold other lines (another
    // secret among them), so they get none.
    let from_index = matches!(plan.source, Source::Items { .. });
    if args.format == Format::Html && !from_index {
        let stdin = match &plan.source {
            Source::Paths(roots) if roots.iter().any(|r| r.as_os_str() == "-") => {
                Some(plan.options.walk.stdin_name.clone())
            }
            _ => None,
        };
        let repos = match &plan.source {
            // A remote repository's clone is removed once its blobs are read, maybe before
            // its last findings reach the sink: none of them is given lines, rather than
            // some.
            Source::History(repos) if plan.clones.is_none() => repos
                .iter()
                .map(|r| crate::output::html::ContextRepo {
                    prefix: r.prefix.clone(),
                    dir: r.options.repo.clone(),
                })
                .collect(),
            _ => Vec::new(),
        };
        sink.read_context(repos, stdin);
    }
    // SARIF names the repositories a history scan read; a shard records them in its stats,
    // for the SARIF that `scanner merge` writes. Remote repositories are described as each is
    // cloned (after the scan, below).
    let describe = args.format == Format::Sarif || plan.options.shard.is_some();
    let mut version_control: Vec<VersionControl> = match &plan.source {
        Source::History(repos) if describe && plan.clones.is_none() => repos
            .iter()
            .map(|r| VersionControl::of(&r.options.repo))
            .collect(),
        _ => Vec::new(),
    };
    if args.format == Format::Sarif {
        sink.set_version_control(version_control.clone());
    }

    if args.validation.validate {
        sink.set_validation(crate::output::Validating {
            checker: crate::validate::Checker::new(&args.validation.options())?,
            engine: Arc::clone(&plan.engine),
        });
    } else if args.validation.min_validity() == Some(scanner_engine::ValidationStatus::Valid) {
        // Only a provider's answer is `valid`: this report can only be empty.
        messages::note(
            "--only-valid (--min-validity valid) without --validate shows no finding: only a \
             provider's answer is `valid` (add --validate, or use --min-validity offline_valid)",
        );
    }
    if !args.validation.validate && args.validation.ca_cert.is_some() {
        // Nothing is sent anywhere: a CA given for a proxy that is never met.
        messages::note("--ca-cert does nothing without --validate: no request is sent");
    }
    if args.stdin_name.is_some() && !args.paths.iter().any(|p| p.as_os_str() == "-") {
        // `cat app.env | scanner scan --stdin-name app.env` scanned the current
        // directory, and what was piped in passed unread.
        messages::note(
            "--stdin-name does nothing without the path `-`: standard input is not scanned \
             (add `-`: `scanner scan - --stdin-name NAME`)",
        );
    }
    let reads_dash = args.paths.iter().any(|p| p.as_os_str() == "-");
    if reads_dash && matches!(plan.source, Source::Paths(_)) && std::io::stdin().is_terminal() {
        // `scanner scan -` typed alone waited for input behind the spinner.
        let eof = if cfg!(windows) {
            "Ctrl-Z, Enter"
        } else {
            "Ctrl-D"
        };
        messages::note(&format!(
            "reading standard input (`-`) from the terminal: type or paste, then end it with {eof}"
        ));
    }
    sink.set_min_validity(args.validation.min_validity());
    let mut plan = plan;
    // What this run reads or writes besides its inputs is never scanned: the report (`-o` and
    // its temp file), the baselines, the stats file.
    let mut own: Vec<&Path> = Vec::new();
    if let (Some(a), Some(dest)) = (&atomic, &args.output) {
        own.push(dest);
        own.extend(a.temp_path());
    }
    let file = |p: &&Path| !crate::outfile::is_stdout(p);
    own.extend(args.write_baseline.as_deref().filter(file));
    own.extend(plan.baseline.as_deref());
    own.extend(args.stats_json.as_deref().filter(file));
    if !own.is_empty() {
        plan.options.scope.set_own_output(OwnOutput::new(&own));
    }
    let reported = args.explain_refusal.then(|| {
        let (filter, first) = FirstReported::new();
        plan.filters.push(Box::new(filter));
        first
    });
    let shard = plan.options.shard;
    let ScanPlan {
        engine,
        source,
        options,
        filters,
        baseline_out,
        baseline,
        clones,
        trimmer,
    } = plan;
    let (mut report, mut sink) =
        pipeline::scan(source, Arc::clone(&engine), sink, filters, &options, &stop)?;
    drop(trimmer);
    // The clones are scanned: their directory removed now (and on every return above this).
    if let Some(clones) = clones {
        if describe {
            version_control = clones.version_control();
        }
        if args.format == Format::Sarif {
            sink.set_version_control(version_control.clone());
        }
        let dir = clones.dir().to_path_buf();
        drop(clones);
        signals::forget(&dir);
    }
    if report.interrupted {
        // `atomic` drops here without a commit: its temp file is removed.
        drop(atomic);
        messages::warn(
            None,
            "interrupted: the scan is incomplete, no report written",
        );
        return Ok(ExitCode::from(caught.exit_status().unwrap_or(130)));
    }
    if report.broken_pipe {
        return Ok(exit_for(&report, &args));
    }
    // `--write-baseline` records the findings: writing them is what was asked, not a failure.
    let wrote_baseline = baseline_out.is_some();
    let incomplete = report.errors > 0 && !args.ignore_errors;
    let status = match wrote_baseline && !incomplete {
        true => 0,
        false => exit_status(&report, &args),
    };
    if args.format == Format::Sarif {
        sink.set_invocation(crate::output::sarif::Invocation {
            exit_code: status,
            notifications: std::mem::take(&mut report.warnings),
        });
    }
    match sink.finish(engine.rules()) {
        Err(e) if crate::output::is_broken_pipe(&e) => return Ok(exit_for(&report, &args)),
        r => r.context("writing the report")?,
    }
    if let (Some(a), Some(path)) = (atomic, &args.output) {
        a.commit()
            .with_context(|| format!("-o {}", escape_path(path)))?;
    }
    finish_filters(baseline_out)?;

    if !args.quiet && messages::warnings_shown() {
        summary::print_summary(&report);
    }
    // `--report-unused`'s lines: said with -q, as notes are, not under `--log-level error`.
    for note in report.notes.iter().filter(|_| messages::warnings_shown()) {
        messages::print(note);
    }
    if let Some(path) = &args.stats_json {
        let extra = crate::shard::stats_extra(
            shard,
            args.options_json(),
            args.format,
            engine.rules(),
            &version_control,
            &report_digest,
        );
        summary::write_stats_json_with(path, &report, extra)?;
    }
    // Freeing the engine (every rule's regexes and their caches) took 6-9 ms
    // on one thread after the scan, 2% of a history scan of ripgrep: the
    // process exit returns that memory at once. `run` is the binary's, one
    // scan per process.
    std::mem::forget(engine);
    if let Some(first) = reported {
        if report.findings > 0 && report.errors == 0 {
            let first = first.lock().unwrap_or_else(|e| e.into_inner()).take();
            crate::hook::explain_refusal(report.findings, first.as_ref(), baseline.as_deref());
        }
    }
    Ok(ExitCode::from(status))
}

type FirstSlot = Arc<std::sync::Mutex<Option<(PathBuf, u32)>>>;

/// The first finding reported (path and line), for the hook's refusal message: the last
/// filter, so it sees only what every other filter kept.
struct FirstReported(FirstSlot);

impl FirstReported {
    fn new() -> (FirstReported, FirstSlot) {
        let slot = FirstSlot::default();
        (FirstReported(slot.clone()), slot)
    }
}

impl FindingFilter for FirstReported {
    fn check(&mut self, f: &crate::output::PathFinding) -> Option<&'static str> {
        let mut first = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let here = (f.path.clone(), f.finding.line);
        // The smallest location, so that the message does not depend on the thread count.
        if first.as_ref().is_none_or(|old| here < *old) {
            *first = Some(here);
        }
        None
    }
}

fn exit_for(report: &ScanReport, args: &ScanArgs) -> ExitCode {
    ExitCode::from(exit_status(report, args))
}

fn exit_status(report: &ScanReport, args: &ScanArgs) -> u8 {
    if report.errors > 0 && !args.ignore_errors {
        crate::EXIT_ERROR
    } else if report.findings > 0 {
        args.exit_code
    } else {
        0
    }
}

/// Whether `path` reads standard input: `-`, or, when standard input is a
/// pipe, another name of it (`/dev/stdin`, `/dev/fd/0`). A regular file on
/// standard input is opened again by such a name, and read from its start.
fn reads_stdin(path: &Path) -> bool {
    let id = |md: std::fs::Metadata| walk::file_id(&md);
    path.as_os_str() == "-"
        || walk::stdin_metadata()
            .filter(|md| !md.is_file())
            .and_then(id)
            .is_some_and(|stdin| std::fs::metadata(path).ok().and_then(id) == Some(stdin))
}

/// The (device, inode) of stdout when it is a regular file (`> report.txt`):
/// that file is never scanned, so a report redirected into the tree does not
/// report itself.
#[cfg(unix)]
fn stdout_id() -> Option<(u64, u64)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let md = std::fs::File::from(fd).metadata().ok()?;
    md.is_file().then(|| (md.dev(), md.ino()))
}

#[cfg(not(unix))]
fn stdout_id() -> Option<(u64, u64)> {
    None
}
