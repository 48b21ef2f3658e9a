//! `[extend]`: `RuleFile::load_with_extends` follows `path` (relative to
//! the extending file), refuses cycles, and reports `useDefault`;
//! `disabledRules` applies to the whole set.

use std::path::{Path, PathBuf};

use scanner_engine::{EngineBuilder, RuleFile, WarningKind};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "scanner-engine-extend-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        TempDir(dir)
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rule(id: &str) -> String {
    format!("[[rules]]\nid = \"{id}\"\nregex = '''{id}_[a-z]{{8}}'''\nkeywords = [\"{id}_\"]\n")
}

fn ids(files: Vec<RuleFile>) -> Vec<String> {
    let mut b = EngineBuilder::new();
    for f in files {
        b = b.add(f);
    }
    let (e, _) = b.build().unwrap_or_else(|e| panic!("{e}"));
    e.rules().iter().map(|r| r.id.to_string()).collect()
}

fn origins(files: &[RuleFile]) -> Vec<String> {
    files.iter().map(|f| f.origin().to_owned()).collect()
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn follows_path_relative_to_the_extending_file_recursively() {
    let d = TempDir::new("chain");
    let base = d.write("base.toml", &rule("base"));
    d.write(
        "sub/mid.toml",
        &format!(
            "[extend]\npath = \"../base.toml\"\nuseDefault = true\n{}",
            rule("mid")
        ),
    );
    let top = d.write(
        "top.toml",
        &format!("[extend]\npath = \"sub/mid.toml\"\n{}", rule("top")),
    );
    let files = RuleFile::load_with_extends(&top).unwrap();
    assert_eq!(
        origins(&files),
        vec![
            shown(&d.0.join("sub/../base.toml")),
            shown(&d.0.join("sub/mid.toml")),
            shown(&top)
        ]
    );
    // useDefault in any file of the chain: load the built-ins first.
    assert_eq!(
        files.iter().map(RuleFile::uses_default).collect::<Vec<_>>(),
        vec![false, true, false]
    );
    assert_eq!(ids(files), vec!["base", "mid", "top"]);

    // A file without [extend] is just itself, without useDefault.
    let files = RuleFile::load_with_extends(&base).unwrap();
    assert_eq!(origins(&files), vec![shown(&base)]);
    assert!(!files[0].uses_default());
}

#[test]
fn a_cycle_is_an_error_naming_it() {
    let d = TempDir::new("cycle");
    let a = d.write(
        "a.toml",
        &format!("[extend]\npath = \"b.toml\"\n{}", rule("a")),
    );
    let b = d.write(
        "b.toml",
        &format!("[extend]\npath = \"a.toml\"\n{}", rule("b")),
    );
    let e = RuleFile::load_with_extends(&a).unwrap_err();
    assert_eq!(e.file(), Some(b.as_path()));
    assert_eq!(
        e.message(),
        format!(
            "[extend] path: cycle: {} -> {} -> {}",
            shown(&a),
            shown(&b),
            shown(&d.0.join("a.toml"))
        )
    );
    // A file extending itself.
    let s = d.write("self.toml", "[extend]\npath = \"./self.toml\"\n");
    let e = RuleFile::load_with_extends(&s).unwrap_err();
    assert_eq!(
        e.message(),
        format!(
            "[extend] path: cycle: {} -> {}",
            shown(&s),
            shown(&d.0.join("./self.toml"))
        )
    );
}

#[test]
fn a_missing_extended_file_is_an_error_naming_it() {
    let d = TempDir::new("missing");
    let top = d.write("top.toml", "[extend]\npath = \"nope.toml\"\n");
    let e = RuleFile::load_with_extends(&top).unwrap_err();
    assert_eq!(e.file(), Some(d.0.join("nope.toml").as_path()));
    assert!(e.message().starts_with("cannot read rule file: "), "{e}");
}

#[test]
fn disabled_rules_and_redefinitions_apply_across_the_chain() {
    let d = TempDir::new("disable");
    d.write("base.toml", &(rule("one") + &rule("two") + &rule("three")));
    let top = d.write(
        "top.toml",
        &format!(
            "[extend]\npath = \"base.toml\"\ndisabledRules = [\"two\"]\n{}",
            "[[rules]]\nid = \"three\"\nregex = '''tri_[a-z]{8}'''\nkeywords = [\"tri_\"]\n"
        ),
    );
    let files = RuleFile::load_with_extends(&top).unwrap();
    let mut b = EngineBuilder::new();
    for f in files {
        b = b.add(f);
    }
    let (e, w) = b.build().unwrap();
    let got: Vec<&str> = e.rules().iter().map(|r| &*r.id).collect();
    assert_eq!(got, vec!["one", "three"]);
    assert_eq!(e.rules()[1].origin, shown(&top));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].kind, WarningKind::Replaced);
}

#[test]
fn a_file_may_disable_an_extended_rule_and_define_its_own_of_that_id() {
    let d = TempDir::new("redefine");
    d.write("base.toml", &(rule("one") + &rule("two")));
    let top = d.write(
        "top.toml",
        &format!(
            "[extend]\npath = \"base.toml\"\ndisabledRules = [\"one\", \"ghost\"]\n{}",
            rule("one")
        ),
    );
    let mut b = EngineBuilder::new();
    for f in RuleFile::load_with_extends(&top).unwrap() {
        b = b.add(f);
    }
    let (e, w) = b.build().unwrap();
    let got: Vec<(&str, &str)> = e
        .rules()
        .iter()
        .map(|r| (&*r.id, r.origin.as_str()))
        .collect();
    let base = shown(&d.0.join("base.toml"));
    assert_eq!(
        got,
        vec![("two", base.as_str()), ("one", shown(&top).as_str())]
    );
    // No replacement note (the extended `one` was disabled first); the
    // unknown name is a warning naming the file.
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        w[0].to_string(),
        format!(
            "{}: rule `ghost`: cannot disable an unknown rule",
            shown(&top)
        )
    );
}
