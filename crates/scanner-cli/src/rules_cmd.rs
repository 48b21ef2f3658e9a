//! `scanner rules list` and `scanner rules check [FILE]`.
//!
//! `list` prints one rule per line, tab-separated: id, name, keywords
//! (comma-separated), the gitleaks ids it answers to, the host its validator
//! asks and the provider it names (a `[[providers]]` entry's `provider`, a
//! built-in rule's first tag), so `cut` and `awk` can take it apart.
//! `list --providers` prints one provider per line: its name, its rules'
//! ids (comma-separated) and the documentation its entries cite.
//!
//! `check` runs every rule's `examples` (must match) and
//! `negative_examples` (must not) through the compiled engine, exactly as a
//! scan would see them, and prints each failure on stdout, one line: the
//! rule, what failed, the example (quoted) and why (the engine's reason: the
//! gate that dropped it, the secret a negative example matched). Exit 1 on any
//! failure, 0 when all pass; a rule file that does not load or compile is an
//! error naming the file and the rule (exit 2). With FILE, that file alone is
//! checked (not merged with the built-in rules: a rule file must stand on its
//! own); without, the built-in rules.

use std::io::Write;
use std::process::ExitCode;

use scanner_engine::{Engine, EngineBuilder, RuleFile};

use crate::args::RulesCommand;
use crate::messages;
use crate::progress::plural;

pub fn run(cmd: RulesCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        RulesCommand::List(a) => {
            let engine = crate::scan::build_engine(
                a.rule_set.rules.as_deref(),
                &a.rule_set.extra_rules,
                None,
                None,
            )?;
            let mut out = std::io::stdout().lock();
            if a.providers {
                // Providers are told apart by name, whatever the case.
                let mut by_name =
                    std::collections::BTreeMap::<String, (String, Vec<&str>, Vec<&str>)>::new();
                for r in engine.rules() {
                    let Some(p) = &r.provider else { continue };
                    let e = by_name
                        .entry(p.name.to_lowercase())
                        .or_insert_with(|| (p.name.clone(), Vec::new(), Vec::new()));
                    e.1.push(&r.id);
                    if let Some(d) = p.docs.as_deref().filter(|d| !e.2.contains(d)) {
                        e.2.push(d);
                    }
                }
                for (name, ids, docs) in by_name.values() {
                    writeln!(out, "{name}\t{}\t{}", ids.join(","), docs.join(" "))?;
                }
                out.flush()?;
                return Ok(ExitCode::SUCCESS);
            }
            for r in engine.rules() {
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    r.id,
                    r.name,
                    r.keywords.join(","),
                    r.aliases.join(","),
                    r.validator.as_ref().map_or("", |v| v.host()),
                    r.provider.as_ref().map_or("", |p| p.name.as_str())
                )?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Check(a) => {
            let engine = match &a.file {
                Some(path) => {
                    let (engine, warnings) =
                        EngineBuilder::new().add(RuleFile::load(path)?).build()?;
                    for w in &warnings {
                        let file = w.file.as_deref().or(Some(path.as_path()));
                        messages::print(&messages::rule_warning(
                            file,
                            w.rule.as_deref(),
                            &w.message,
                        ));
                    }
                    engine
                }
                None => Engine::builtin()?,
            };
            let failures = engine.check_examples();
            let mut out = std::io::stdout().lock();
            for f in &failures {
                let kind = if f.negative {
                    "negative example matched"
                } else {
                    "example not matched"
                };
                let reason = messages::sanitize(&f.reason);
                writeln!(out, "{}: {kind}: {:?}: {reason}", f.rule_id, f.example)?;
            }
            // A rule with no example passes with nothing proved: said, not failed (many
            // gitleaks rule files have none).
            let bare = engine.rules_without_examples();
            for id in &bare {
                messages::print(&messages::rule_warning(
                    a.file.as_deref(),
                    Some(id),
                    "no examples: nothing proves it finds a secret (add `examples = [...]`)",
                ));
            }
            let n = engine.rules().len() as u64;
            let rules = plural(n, "rule", "rules");
            if failures.is_empty() {
                let unproved = match bare.len() as u64 {
                    0 => String::new(),
                    b => format!(" ({b} of them without examples)"),
                };
                messages::print(&format!("all examples of {n} {rules} pass{unproved}"));
                Ok(ExitCode::SUCCESS)
            } else {
                let f = failures.len() as u64;
                let examples = plural(f, "failing example", "failing examples");
                messages::print(&format!("{f} {examples} in {n} {rules}"));
                Ok(ExitCode::from(1))
            }
        }
    }
}
