use super::build::{check_cost, compile_rule};
use super::*;

/// A rule whose regex parses but exceeds regex-automata's default NFA
/// size limit; `trusted` as the built-in files are.
fn file(trusted: bool) -> RuleFile {
    let text = r#"
[[rules]]
id = "big"
regex = '''(?:[\p{L}\p{N}]{8,256}[-_.]?){8}'''
keywords = ["k"]
max_len = 4096
examples = ["k abcdefgh", "k 12345678"]
negative_examples = ["k ab"]
"#;
    let mut f = RuleFile::parse(text, "big.toml").unwrap();
    f.trusted = trusted;
    f
}

#[test]
fn user_rule_over_the_size_limit_fails_the_build() {
    let e = EngineBuilder::new().add(file(false)).build().unwrap_err();
    assert_eq!(e.file(), Some(std::path::Path::new("big.toml")));
    assert_eq!(e.rule(), Some("big"));
    assert!(
        e.message().starts_with("line 2: cannot compile regex: "),
        "{e}"
    );
    assert!(e.message().contains("exceeded limit of 10485760"), "{e}");
}

#[test]
fn a_costly_user_rule_is_refused_naming_it() {
    let build = |text: &str| {
        EngineBuilder::new()
            .add(RuleFile::parse(text, "slow.toml").unwrap())
            .build()
            .unwrap_err()
    };
    let e = build("[[rules]]\nid = \"slow\"\nregex = '''.{65535}x'''\nkeywords = [\"x\"]\n");
    assert_eq!(e.file(), Some(std::path::Path::new("slow.toml")));
    assert_eq!(e.rule(), Some("slow"));
    assert_eq!(
        e.message(),
        "line 1: regex too large: 65541 automaton states, more than 16384: shorten its \
             counted repetitions (`.{65535}`) or split the rule"
    );
    // Fewer states, but each hit would search 64 KiB with them.
    let e = build(
        "[[rules]]\nid = \"slow\"\nregex = '''x.{9000}'''\nkeywords = [\"x\"]\n\
             max_len = 65536\n",
    );
    assert!(
        e.message()
            .starts_with("line 1: regex too costly: 9006 automaton states times a 65536-byte"),
        "{e}"
    );
    // A pattern above the length bound is refused before it is parsed.
    let e = build(&format!(
        "[[rules]]\nid = \"big\"\nregex = '''{}'''\nkeywords = [\"x\"]\n",
        "x".repeat(MAX_PATTERN_LEN + 1)
    ));
    assert!(
        e.message()
            .starts_with("line 1: regex: the pattern is 65537 bytes, more than the 65536"),
        "{e}"
    );
}

/// The bounds of `check_cost` hold for every built-in rule, as for a
/// user's (the built-ins are compiled lazily, without the check).
#[test]
fn builtin_rules_are_within_the_cost_bounds() {
    let mut checked = 0;
    for f in RuleFile::builtin() {
        for r in &f.rules {
            let (rule, ..) = compile_rule(r.clone(), &f.origin, false).unwrap();
            let Some(Ok(hir)) = rule.parsed() else {
                continue;
            };
            check_cost(hir, rule.cost_window()).unwrap_or_else(|m| panic!("{}: {m}", r.id));
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

/// A keyword of one repeated character is set aside: the rule runs as one
/// without keywords, finds what it found with it, and content made of
/// that character opens no window.
#[test]
fn a_low_information_keyword_makes_the_rule_keyword_less() {
    let rule = |kw: &str| {
        format!(
            "[[rules]]\nid = \"tw\"\nregex = '''(?:^|[^A-Za-z0-9%+/])(A{{20,24}}[A-Za-z0-9%]\
                 {{8,100}}%3D[A-Za-z0-9%]{{20,100}})(?:[^A-Za-z0-9%+/=]|$)'''\nsecretGroup = 1\n\
                 keywords = [\"{kw}\"]\nmax_len = 240\n"
        )
    };
    let (runs, warnings) = EngineBuilder::new()
        .add(RuleFile::parse(&rule(&"A".repeat(20)), "tw.toml").unwrap())
        .build()
        .unwrap();
    let w: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        w,
        [format!(
            "tw.toml: rule `tw`: keyword `{}` has too little information (one character \
                 repeated, it matches at every byte of a run such as `AAAA` or `====`): the \
                 rule's regex runs over every byte of every file instead; use a keyword of two \
                 characters or more",
            "a".repeat(20)
        )]
    );
    assert!(runs.rules[0].keywords.is_empty());
    assert_eq!(runs.rules()[0].keywords, ["a".repeat(20)]);
    let (keyed, warnings) = EngineBuilder::new()
        .add(RuleFile::parse(&rule("%3d"), "tw.toml").unwrap())
        .build()
        .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let find = |e: &Engine, data: &[u8]| -> Vec<(u64, String)> {
        let mut out = Vec::new();
        e.scan(
            &ScanInput::whole(data, "a.txt"),
            &mut e.new_scratch(),
            &mut out,
        );
        out.into_iter().map(|f| (f.offset, f.secret)).collect()
    };
    let mut data = "A".repeat(5000).into_bytes();
    data.extend_from_slice(
        b"\nT=AAAAAAAAAAAAAAAAAAAAAkXUrkAAAAAAASFZX50QadiWlfp%2BQBhryETh%3Dd8RJFSGUVUsxRftUkFI1g\n",
    );
    data.extend(std::iter::repeat_n(b'A', 5000));
    let want = vec![(
        5003,
        "AAAAAAAAAAAAAAAAAAAAAkXUrkAAAAAAASFZX50QadiWlfp%2BQBhryETh%3Dd8RJFSGUVUsxRftUkFI1g"
            .to_string(),
    )];
    assert_eq!(find(&runs, &data), want);
    assert_eq!(find(&keyed, &data), want);
}

#[test]
fn check_examples_reports_the_compile_error_for_each_example() {
    // A trusted (built-in) file stays lazy: the build succeeds and the
    // failure surfaces in check_examples, with the compiler's reason.
    let (engine, _) = EngineBuilder::new().add(file(true)).build().unwrap();
    let failures = engine.check_examples();
    let got: Vec<(&str, bool)> = failures
        .iter()
        .map(|f| (f.example.as_str(), f.negative))
        .collect();
    assert_eq!(
        got,
        vec![("k abcdefgh", false), ("k 12345678", false), ("k ab", true)]
    );
    for f in &failures {
        assert!(
            f.reason.contains("exceeded limit of 10485760"),
            "{}",
            f.reason
        );
    }
}

/// The byte after each place of a chosen byte rules most places out
/// before the keywords are compared: every prefix of a text (so that each
/// place is the buffer's last byte once) gives what a brute force finds,
/// with chosen bytes first, inside and last in their keywords.
#[test]
fn rare_byte_search_after_the_chosen_byte() {
    let mut search = RareByteSearch::default();
    let kws: [&[u8]; 5] = [b"secret", b"xoxb-", b"zk", b"kz", b"q"];
    for (i, kw) in kws.iter().enumerate() {
        search.add(kw, i as u32, 100);
    }
    let text = b"seCRet secreT xoxB- XOXb xoxb-zkz kZK qQ q secre";
    for end in 0..=text.len() {
        let text = &text[..end];
        let mut got = Vec::new();
        search.find(text, &(0..text.len()), 0..0, &mut got);
        got.sort_unstable();
        let mut want = Vec::new();
        for (k, kw) in kws.iter().enumerate() {
            for at in 0..=text.len().saturating_sub(kw.len()) {
                if text.len() >= kw.len() && text[at..at + kw.len()].eq_ignore_ascii_case(kw) {
                    want.push((at + kw.len(), at, k as u32));
                }
            }
        }
        want.sort_unstable();
        assert_eq!(got, want, "the first {end} bytes");
    }
}

/// The rare-byte search finds every occurrence of every keyword in any
/// case, and with a walked middle, at least what crosses its edges.
#[test]
fn rare_byte_search_finds_every_occurrence_in_any_case() {
    let mut search = RareByteSearch::default();
    let kws: [&[u8]; 6] = [
        b"eyj",
        b"ops_eyj",
        b"://",
        b"secret",
        b"-----begin rsa",
        b"sl.",
    ];
    for (i, kw) in kws.iter().enumerate() {
        search.add(kw, i as u32, 100);
    }
    let text = b"x ops_EYJ eyJeyj SECRET sEcReT ://:// sl.sl -----BEGIN RSA -----begin rsaX";
    let mut got = Vec::new();
    // Nothing walked: the whole text is searched.
    search.find(text, &(0..text.len()), 0..0, &mut got);
    got.sort_unstable();
    let mut want = Vec::new();
    for (k, kw) in kws.iter().enumerate() {
        for at in 0..=text.len() - kw.len() {
            if text[at..at + kw.len()].eq_ignore_ascii_case(kw) {
                want.push((at + kw.len(), at, k as u32));
            }
        }
    }
    want.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(want.len(), 11);
    // The middle walked: what crosses its edges is found, and what
    // lies wholly in it may be (near its edges), never twice.
    let mut got = Vec::new();
    search.find(text, &(0..text.len()), 20..60, &mut got);
    got.sort_unstable();
    assert!(got.windows(2).all(|w| w[0] != w[1]), "{got:?}");
    assert!(got.iter().all(|h| want.contains(h)), "{got:?}");
    want.retain(|&(end, start, _)| start < 20 || end > 60);
    assert!(want.iter().all(|h| got.contains(h)), "{got:?}");
    assert_eq!(want.len(), 6);
}

#[test]
fn a_name_defined_twice_among_builtin_files_is_an_error() {
    let text = "[[rules]]\nid = \"b\"\nregex = 'b'\nkeywords = [\"b\"]\n";
    let mut one = RuleFile::parse(text, "builtin:one.toml").unwrap();
    let mut two = RuleFile::parse(text, "builtin:two.toml").unwrap();
    one.trusted = true;
    two.trusted = true;
    let e = EngineBuilder::new().add(one).add(two).build().unwrap_err();
    assert_eq!(
        e.to_string(),
        "builtin:two.toml: rule `b`: line 1: duplicate rule id (first defined in builtin:one.toml)"
    );
}

/// A keyword window without a run of the secret's bytes as long as the
/// shortest secret is skipped before the regex (`src/run.rs`): the regex
/// is not even compiled, and a window with one still finds its secret.
#[test]
fn windows_without_a_run_of_secret_bytes_skip_the_regex() {
    let text = "[[rules]]\nid = \"acme\"\nregex = '''(?i:acme)[^\\r\\n]{0,40}?\
                [^A-Za-z0-9\\r\\n]([0-9a-f]{32})(?:[^0-9a-f]|$)'''\nsecretGroup = 1\n\
                keywords = [\"acme\"]\n";
    let e = trusted_engine(text);
    let find = |data: &str| offsets_and_secrets(&e, data);
    // 31 hex digits: one short.
    let near = "see https://acme.example/docs\nacme_id = 9f3b2c7e1a8d4f6b0c5e2a9d7f1b3e8\n";
    assert_eq!(find(near), []);
    assert!(e.rules[0].regex.get().is_none());
    let data = format!("{near}ACME_KEY = \"9f3b2c7e1a8d4f6b0c5e2a9d7f1b3e8c\"\n");
    assert_eq!(
        find(&data),
        [(84, "9f3b2c7e1a8d4f6b0c5e2a9d7f1b3e8c".to_string())]
    );
    assert!(e.rules[0].regex.get().is_some());
}

/// Hits of a keyword every few bytes merge their windows into one of many
/// KB, searched with the rule's prefiltered regex: it finds what the
/// narrow windows of the same matches find, at the same offsets.
#[test]
fn a_wide_window_finds_what_narrow_ones_find() {
    let text = "[[rules]]\nid = \"netrc\"\nregex = '''\\bmachine[ \\t]+[a-z.]+\\s+\
                password[ \\t]+([A-Za-z0-9]{8,})'''\nsecretGroup = 1\nkeywords = [\"machine\"]\n\
                max_len = 200\n";
    let engine = || trusted_engine(text);
    let find = offsets_and_secrets;
    let entry = "machine git.acme.test password Quartz7river9\n";
    let (narrow, wide) = (engine(), engine());
    // Alone: narrow windows.
    let line = "Machine learning\n";
    let alone = format!("{line}{entry}");
    assert_eq!(find(&narrow, &alone), [(48, "Quartz7river9".to_string())]);
    assert!(narrow.rules[0].regex_wide.get().is_none());
    // Among 600 lines that hit the keyword: one window of 10 KB.
    let crowd = line.repeat(300);
    let data = format!("{crowd}{entry}{crowd}{entry}");
    let second = (2 * crowd.len() + entry.len() + 31) as u64;
    assert_eq!(
        find(&wide, &data),
        [
            ((crowd.len() + 31) as u64, "Quartz7river9".to_string()),
            (second, "Quartz7river9".to_string()),
        ]
    );
    assert!(wide.rules[0].regex_wide.get().is_some());
}

/// The engine of one rule file `text`, trusted as the built-in files are:
/// a user rule's regex is compiled at build, to report its errors, and a
/// trusted one's on first use.
fn trusted_engine(text: &str) -> Engine {
    let mut f = RuleFile::parse(text, "rules.toml").unwrap();
    f.trusted = true;
    EngineBuilder::new().add(f).build().unwrap().0
}

/// Each finding's offset and secret when `e` scans `data` whole.
fn offsets_and_secrets(e: &Engine, data: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    e.scan(
        &ScanInput::whole(data.as_bytes(), "a.txt"),
        &mut e.new_scratch(),
        &mut out,
    );
    out.into_iter().map(|f| (f.offset, f.secret)).collect()
}

/// A rule without keywords searches whole buffers with its own prefiltered
/// regex: a wide window compiles no second one.
#[test]
fn a_rule_without_keywords_compiles_one_regex() {
    let e = trusted_engine(
        "[[rules]]\nid = \"tok\"\nregex = '''tok_([0-9a-f]{16})'''\nsecretGroup = 1\n",
    );
    let data = format!("{}tok_9f3b2c7e1a8d4f6b\n", "x = 1\n".repeat(1000));
    assert_eq!(
        offsets_and_secrets(&e, &data),
        [(6004, "9f3b2c7e1a8d4f6b".to_string())]
    );
    assert!(e.rules[0].regex.get().is_some());
    assert!(e.rules[0].regex_wide.get().is_none());
}
