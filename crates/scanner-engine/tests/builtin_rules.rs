//! The built-in rule set: it parses, compiles, carries examples, and every
//! example behaves. Rule writers run
//! `cargo test -p scanner-engine --test builtin_rules`; each failure names
//! the file, the rule, the example and the reason, all at once.

mod common;

use common::builtin_names;
use scanner_engine::{Engine, EngineBuilder, RuleFile};

/// Builds the built-in set leniently, failing with every problem listed.
fn builtin_engine() -> Engine {
    let mut problems = Vec::new();
    let mut builder = EngineBuilder::new();
    for name in builtin_names() {
        let path = format!("{}/rules/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        match RuleFile::parse(&text, &format!("builtin:{name}")) {
            Ok(f) => builder = builder.add(f),
            Err(e) => problems.push(e.to_string()),
        }
    }
    let (engine, warnings, errors) = builder.build_lenient().expect("global build error");
    problems.extend(errors.iter().map(|e| e.to_string()));
    problems.extend(warnings.iter().map(|w| format!("warning: {w}")));
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("{p}\n");
        }
        panic!(
            "{} problem(s) in the built-in rule files (listed above)",
            problems.len()
        );
    }
    engine
}

#[test]
fn builtin_rules_build_cleanly() {
    let engine = builtin_engine();
    // The embedded copy is the same set.
    let embedded = Engine::builtin().expect("embedded built-in rules build");
    assert_eq!(embedded.rules().len(), engine.rules().len());
}

#[test]
fn builtin_rules_examples() {
    let engine = builtin_engine();
    let failures = engine.check_examples();
    for f in &failures {
        eprintln!("{f}\n");
    }
    assert!(
        failures.is_empty(),
        "{} example(s) misbehave (listed above)",
        failures.len()
    );
}

#[test]
fn builtin_rules_have_examples_and_valid_ids() {
    let engine = builtin_engine();
    let mut problems = Vec::new();
    for (i, info) in engine.rules().iter().enumerate() {
        let (pos, neg) = engine.example_counts(i);
        // A `[[providers]]` entry is a few lines: one example will do, but
        // it must cite where the provider documents the format.
        let entry = info.origin.starts_with("builtin:providers-");
        let least = if entry { 1 } else { 2 };
        if pos < least || neg < 1 {
            problems.push(format!(
                "{}: rule `{}`: has {pos} example(s) and {neg} negative example(s); \
                 needs at least {least} and 1",
                info.origin, info.id
            ));
        }
        let docs = info.provider.as_ref().and_then(|p| p.docs.as_deref());
        if entry && docs.is_none() {
            problems.push(format!(
                "{}: provider entry `{}` has no `docs` URL",
                info.origin, info.id
            ));
        }
        let id_ok = info
            .id
            .starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && info
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !id_ok {
            problems.push(format!(
                "{}: rule `{}`: id must match [a-z0-9][a-z0-9-]*",
                info.origin, info.id
            ));
        }
        let weak = |k: &String| k.len() < 3 && k.bytes().all(|b| b.is_ascii_alphanumeric());
        if info.keywords.iter().any(weak) {
            problems.push(format!(
                "{}: rule `{}`: alphanumeric keywords shorter than 3 bytes fire everywhere: {:?}",
                info.origin, info.id, info.keywords
            ));
        }
    }
    for p in &problems {
        eprintln!("{p}");
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) (listed above)",
        problems.len()
    );
}

/// Issue 29's breadth: at least 900 named providers (a `[[providers]]`
/// entry's `provider`, a hand-written rule's first tag; told apart without
/// regard to case), each with passing examples (`builtin_rules_examples`).
#[test]
fn builtin_rules_name_at_least_900_providers() {
    // The embedded set: a hand-written rule names its provider (its first
    // tag) only when built in.
    let engine = Engine::builtin().unwrap();
    let providers: std::collections::BTreeSet<String> = engine
        .rules()
        .iter()
        .filter_map(|r| r.provider.as_ref().map(|p| p.name.to_lowercase()))
        .collect();
    assert!(
        providers.len() >= 900,
        "only {} named providers",
        providers.len()
    );
}

/// Code on the right of `password =` is never a literal password: the
/// regex itself must refuse it (nothing found, nothing suppressed), or the
/// summary fills with "suppressed" noise on every source tree.
#[test]
fn password_rule_refuses_code_expressions_outright() {
    let engine = Engine::builtin().unwrap();
    let mut scratch = engine.new_scratch();
    for code in [
        "x.password = y?.value\n",
        "user.password = form?.values?.password;\n",
        "this.password = this.initialPassword;\n",
        "self.password = self.hasher\n",
        "password = req.body.password\n",
        "password = form.password.data\n",
        "password = getpass()\n",
        "password = input(\"Password: \")\n",
        "password = newPassword\n",
        "def login(username: str, password: Optional[str] = None):\n",
        "    password: String,\n",
        "  password!: string;\n",
    ] {
        let found = common::scan_with(&engine, &mut scratch, code.as_bytes(), "src/app.ts");
        assert_eq!(found, vec![], "{code:?}");
        let suppressed = scratch.take_suppressed();
        assert_eq!(suppressed, Default::default(), "{code:?}");
    }
    for (config, secret) in [
        ("DB_PASSWORD=q8R!v2xz\n", "q8R!v2xz"),
        ("database:\n  password: hT7#kL9m\n", "hT7#kL9m"),
        ("SMTP_PASSWORD=7vGq2LmX9pRt\n", "7vGq2LmX9pRt"),
        ("db.password=Kp4%wQz9Lm\n", "Kp4%wQz9Lm"),
    ] {
        let found = common::scan_with(&engine, &mut scratch, config.as_bytes(), "conf/app.env");
        let got: Vec<(&str, &str)> = found
            .iter()
            .map(|f| (&*f.rule_id, f.secret.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![("generic-password-assignment", secret)],
            "{config:?}"
        );
    }
}

/// Our own redacted reports (`"secret":"q8Rk…"`) must not be reported
/// again when a report is scanned: `…` marks a placeholder.
#[test]
fn redacted_report_lines_are_placeholders() {
    let engine = Engine::builtin().unwrap();
    let mut scratch = engine.new_scratch();
    let report = "password = \"q8R!v2xz\u{2026}\"\nDB_PASSWORD=Kp4%wQz9\u{2026}\n";
    let found = common::scan_with(&engine, &mut scratch, report.as_bytes(), "report.txt");
    assert_eq!(found, vec![]);
    let suppressed = scratch.take_suppressed();
    assert_eq!(suppressed.placeholder, 2, "{suppressed:?}");
    // Unredacted, the same lines are findings.
    let plain = "password = \"q8R!v2xzWq\"\nDB_PASSWORD=Kp4%wQz9Lm\n";
    let found = common::scan_with(&engine, &mut scratch, plain.as_bytes(), "report.txt");
    let secrets: Vec<&str> = found.iter().map(|f| f.secret.as_str()).collect();
    assert_eq!(secrets, ["q8R!v2xzWq", "Kp4%wQz9Lm"]);
}

/// The inferred `keyword_lead` of a few built-in rules, and how many rules
/// get a short one (the throughput depends on it; `src/lead.rs`).
#[test]
fn keyword_leads_are_inferred() {
    let engine = Engine::builtin().unwrap();
    let lead = |id: &str| {
        let i = engine.rules().iter().position(|r| &*r.id == id).unwrap();
        engine.keyword_lead(i)
    };
    assert_eq!(lead("github-classic-pat"), 0);
    assert_eq!(lead("generic-password-assignment"), 1);
    let mut short = Vec::new();
    let mut long = Vec::new();
    for (i, r) in engine.rules().iter().enumerate() {
        if engine.keyword_lead(i) <= 16 {
            short.push(r.id.to_string());
        } else {
            long.push(r.id.to_string());
        }
    }
    eprintln!("{} rules keep a long lead: {long:?}", long.len());
    // The rest put their keyword later in the match (`Authorization:
    // Bearer`, `sk-...T3BlbkFJ`, `heroku... = <uuid>`): max_len it is.
    // Six of them are path-scoped credential-file rules, which only run on
    // their few files (`.pypirc`, `.git-credentials`...); one is
    // `twitter-bearer-token`, keyed on its `%3D` rather than on a run of `A`s
    // (`engine::LOW_INFORMATION`); two are pairs whose match starts before
    // the keyword: `twilio-account-sid-auth-token` (`twilio` precedes the
    // `AC...` SID) and `dockerhub-pat-with-username` (the user name precedes
    // the `dckr_pat_` token). Ten of `credentials-in-code.toml` are keyed on
    // a word after the match's start (`net use X: \\host /user:`, the
    // string before `-AsPlainText`), and one provider entry's prefix is a
    // URL (`prisma-postgres-api-key`).
    assert_eq!((short.len(), long.len()), (1256, 58));
    assert!(long.contains(&"generic-bearer-token-header".to_string()));
}

/// The inferred leads lose nothing: the built-in rule files themselves
/// (every example of every rule, in context) give the same findings with
/// and without the inference.
#[test]
fn inferred_leads_find_what_max_len_windows_find() {
    let build = |no_inference: bool| {
        let mut b = EngineBuilder::new().no_lead_inference(no_inference);
        for f in RuleFile::try_builtin().unwrap() {
            b = b.add(f);
        }
        b.build().unwrap().0
    };
    let (inferred, plain) = (build(false), build(true));
    let mut total = 0;
    for name in builtin_names() {
        let path = format!("{}/rules/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read(&path).unwrap();
        let a = common::scan_path(&inferred, &text, "examples.txt");
        let b = common::scan_path(&plain, &text, "examples.txt");
        assert_eq!(common::brief(&a), common::brief(&b), "{name}");
        total += a.len();
    }
    // 674 when written; the bound only guards against a vacuous pass.
    assert!(total > 500, "only {total} findings in the rule files");
}
