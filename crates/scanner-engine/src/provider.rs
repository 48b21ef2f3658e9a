//! Providers as data: a `[[providers]]` entry says a provider's name, the
//! words people write next to its tokens and the token's shape (prefix,
//! alphabet, length), in a few lines. [`ProviderSyntax::expand`] turns it
//! into the [`RuleSyntax`] a person would have written by hand, so an entry
//! goes through the same keyword prefilter, regex confirmation, gates,
//! examples check, `rules list` and `--validate` as every rule. The format
//! is documented in `docs/rules.md`, "Providers"; the table as written
//! (`ProviderSyntax`, `Provider`) is in `syntax.rs` with the rest of the
//! rule files' serde mirror, so that this module only reads it.
//!
//! The generated regex, with `T` the token (prefix, then the alphabet
//! repeated `len` times or the `shape` fragment) and `A` its last alphabet:
//! * a distinctive prefix (5 bytes or more: `xoxb-`, `sk_live_`) is the
//!   keyword, and the token matches anywhere: `\b(T)(?:[^A]|$)`;
//! * otherwise a keyword must name the provider on the same line, at most
//!   [`CONTEXT_GAP`] bytes before the token, and the byte before the token
//!   is not a letter or digit:
//!   `(?i:kw|...)[^\r\n]{0,40}?[^A-Za-z0-9\r\n](T)(?:[^A]|$)`. A keyword
//!   may run on into a word (`eventbrite` in `eventbriteapi.com`, but also
//!   `devto` in `devtool`), so where the alphabet can spell words (not hex,
//!   digits or a UUID) the value must not be a name, as the generic rules
//!   judge names (`WebpackOptionsNormalized` next to `devtool`).
//!
//! Findings are `medium` (issue 29: no entry says more without a checksum
//! or a validator); the entropy floor follows the alphabet and length.

use crate::syntax::{Len, Provider, ProviderSyntax, RuleSyntax};

/// How far (bytes) before its token a provider's keyword may stand, on the
/// same line: `STRIPE_SECRET_KEY = "`, `"mailchimp": {"apiKey": "`.
pub(crate) const CONTEXT_GAP: usize = 40;

/// A prefix this long is the provider's own (`dp.st.`, `xoxb-`): it alone
/// makes a match. Shorter ones (`sk-`, `key-`) are shared by many formats.
pub(crate) const DISTINCTIVE_PREFIX: usize = 5;

/// Keywords shorter than this hit inside common words (`box` in `sandbox`).
pub(crate) const MIN_KEYWORD: usize = 4;

/// The alphabets an entry may name: (name, class body, entropy cap).
/// `base64` also takes up to two `=` of padding; `uuid` is a whole format.
const ALPHABETS: &[(&str, &str, f64)] = &[
    ("hex", "0-9a-fA-F", 3.0),
    ("hex-lower", "0-9a-f", 3.0),
    ("hex-upper", "0-9A-F", 3.0),
    ("alnum", "A-Za-z0-9", 3.5),
    ("alnum-lower", "a-z0-9", 3.3),
    ("alnum-upper", "A-Z0-9", 3.3),
    ("digits", "0-9", 2.5),
    ("base64", "A-Za-z0-9+/", 3.5),
    ("base64url", "A-Za-z0-9_-", 3.5),
    ("uuid", "0-9a-fA-F-", 3.0),
];

const UUID: &str = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

/// The token after the prefix, as [`ProviderSyntax::token_body`] reads it.
struct Token {
    /// The regex.
    body: String,
    /// The class body of its last byte, for the end boundary.
    class: String,
    /// The alphabet's entropy cap.
    cap: f64,
    /// Its shortest and longest length in bytes.
    shortest: usize,
    longest: usize,
}

impl ProviderSyntax {
    /// Whether the entry's own prefix makes a match, without a keyword.
    pub fn distinctive(&self) -> bool {
        self.prefix
            .as_deref()
            .is_some_and(|p| p.len() >= DISTINCTIVE_PREFIX)
    }

    /// The rule this entry stands for; `line` is where its table starts.
    /// The error says which field is wrong and what it takes.
    pub fn expand(&self, line: usize) -> Result<RuleSyntax, String> {
        let at = |m: String| format!("line {line}: [[providers]]: {m}");
        if self.provider.trim().is_empty() || self.name.trim().is_empty() {
            return Err(at("`provider` and `name` must not be empty".into()));
        }
        if let Some(d) = &self.docs {
            if !d.starts_with("https://") {
                return Err(at(format!("docs = {d:?}: must be an https:// URL")));
            }
        }
        let prefix = self.prefix.as_deref().unwrap_or("");
        if prefix
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(at(format!(
                "prefix = {prefix:?}: must not hold spaces or control characters"
            )));
        }
        let Token {
            body,
            class,
            cap,
            shortest,
            longest,
        } = self.token_body().map_err(at)?;
        let distinctive = self.distinctive();
        let mut keywords = Vec::with_capacity(self.keywords.len());
        for k in &self.keywords {
            let k = k.to_ascii_lowercase();
            if k.len() < MIN_KEYWORD || !k.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(at(format!(
                    "keyword {k:?}: must be {MIN_KEYWORD} or more characters without spaces \
                     (a shorter one hits inside common words: `box` in `sandbox`)"
                )));
            }
            keywords.push(k);
        }
        if !distinctive && keywords.is_empty() {
            return Err(at(format!(
                "needs `keywords` (the provider's name as written next to its tokens): \
                 only a prefix of {DISTINCTIVE_PREFIX} or more characters matches alone"
            )));
        }
        let token = format!("{}{body}", regex_syntax::escape(prefix));
        let end = format!("(?:[^{class}]|$)");
        let token_len = prefix.len() + longest;
        let (regex, prefilter, max_len) = if distinctive {
            let word_start =
                prefix.as_bytes()[0].is_ascii_alphanumeric() || prefix.starts_with('_');
            let start = if word_start { r"\b" } else { "" };
            (
                format!("{start}({token}){end}"),
                vec![prefix.to_ascii_lowercase()],
                token_len + 1,
            )
        } else {
            let names: Vec<String> = keywords.iter().map(|k| regex_syntax::escape(k)).collect();
            let kw_len = keywords.iter().map(String::len).max().unwrap_or(0);
            (
                format!(
                    "(?i:{})[^\\r\\n]{{0,{CONTEXT_GAP}}}?[^A-Za-z0-9\\r\\n]({token}){end}",
                    names.join("|")
                ),
                keywords.clone(),
                kw_len + CONTEXT_GAP + 1 + token_len + 1,
            )
        };
        // The floor of the token's entropy: random tokens of the alphabet
        // clear it with room; short tokens cannot reach log2(len).
        let shortest = prefix.len() + shortest;
        let entropy = self
            .entropy
            .unwrap_or_else(|| cap.min((shortest.max(2) as f64).log2() - 0.7));
        let mut tags = vec![self.provider.to_ascii_lowercase()];
        tags.extend(self.tags.iter().cloned());
        Ok(RuleSyntax {
            id: self.id.clone(),
            aliases: self.aliases.clone(),
            name: Some(self.name.clone()),
            description: self.description.clone(),
            regex: Some(regex),
            secret_group: Some(1),
            entropy: Some(entropy),
            keywords: prefilter,
            path: None,
            max_len: Some(max_len),
            keyword_lead: None,
            examples: self.examples.clone(),
            negative_examples: self.negative_examples.clone(),
            placeholder_check: None,
            generic: None,
            confidence: Some("medium".into()),
            checksum: None,
            validate: self.validate.clone(),
            tags,
            allowlists: Vec::new(),
            allowlist: None,
            line,
            provider: Some(Provider {
                name: self.provider.clone(),
                docs: self.docs.clone(),
                rejects_names: !distinctive
                    && !matches!(
                        self.alphabet.as_deref(),
                        Some("hex" | "hex-lower" | "hex-upper" | "digits" | "uuid")
                    ),
                context: if distinctive { Vec::new() } else { keywords },
            }),
        })
    }

    /// The token after the prefix ([`Token`]).
    fn token_body(&self) -> Result<Token, String> {
        match (&self.alphabet, &self.shape) {
            (Some(_), Some(_)) => Err("give `alphabet` and `len`, or `shape`, not both".into()),
            (None, None) => Err("needs `alphabet` and `len`, or `shape`".into()),
            (None, Some(shape)) => {
                let hir = crate::re2::parse(shape)
                    .map_err(|m| format!("shape: {m}"))?
                    .hir;
                if hir.properties().explicit_captures_len() > 0 {
                    return Err("shape: must have no capture groups (use `(?:...)`)".into());
                }
                let longest = hir
                    .properties()
                    .maximum_len()
                    .filter(|&m| m <= 4096)
                    .ok_or("shape: must be bounded, at most 4096 bytes (no `*` or `+`)")?;
                let shortest = hir.properties().minimum_len().unwrap_or(0);
                if shortest < 8 {
                    return Err("shape: its shortest token is under 8 bytes".into());
                }
                Ok(Token {
                    body: format!("(?:{shape})"),
                    class: "A-Za-z0-9_+/=-".into(),
                    cap: 3.0,
                    shortest,
                    longest,
                })
            }
            (Some(a), None) => {
                let &(_, class, cap) =
                    ALPHABETS.iter().find(|(n, _, _)| n == a).ok_or_else(|| {
                        let names: Vec<&str> = ALPHABETS.iter().map(|(n, _, _)| *n).collect();
                        format!("alphabet = {a:?}: must be one of {}", names.join(", "))
                    })?;
                if a == "uuid" {
                    if self.len.is_some() {
                        return Err("alphabet = \"uuid\" has a fixed length: drop `len`".into());
                    }
                    return Ok(Token {
                        body: UUID.into(),
                        class: class.into(),
                        cap,
                        shortest: 36,
                        longest: 36,
                    });
                }
                let (lo, hi) = match self.len {
                    None => return Err(format!("alphabet = {a:?} needs `len`")),
                    Some(Len::Exact(n)) => (n, n),
                    Some(Len::Range([lo, hi])) => (lo, hi),
                };
                if lo < 8 || lo > hi || hi > 1024 {
                    return Err(format!(
                        "len = {lo}..{hi}: must be between 8 and 1024, smallest first"
                    ));
                }
                let reps = if lo == hi {
                    format!("{{{lo}}}")
                } else {
                    format!("{{{lo},{hi}}}")
                };
                // Base64 ends in up to two `=` of padding.
                let (pad, end_class, padding) = if a == "base64" {
                    ("={0,2}", format!("{class}="), 2)
                } else {
                    ("", class.to_owned(), 0)
                };
                Ok(Token {
                    body: format!("[{class}]{reps}{pad}"),
                    class: end_class,
                    cap,
                    shortest: lo,
                    longest: hi + padding,
                })
            }
        }
    }
}

/// First tags of built-in rules that name a kind of credential, not a
/// provider: they are not counted as providers.
const NOT_PROVIDERS: &[&str] = &[
    "credential-file",
    "credential-in-code",
    "database",
    "jwt",
    "password-hash",
    "private-key",
];

impl Provider {
    /// The provider of a hand-written built-in rule: its first tag, unless
    /// the rule is generic or the tag names a kind of credential.
    pub(crate) fn of_tags(tags: &[String], generic: bool) -> Option<Provider> {
        let first = tags
            .first()
            .filter(|t| !generic && !NOT_PROVIDERS.contains(&t.as_str()))?;
        Some(Provider {
            name: first.clone(),
            docs: None,
            context: Vec::new(),
            rejects_names: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(toml_text: &str) -> ProviderSyntax {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn a_keyword_entry_becomes_a_line_bound_rule() {
        let p = entry(
            r#"id = "acme-api-key"
provider = "Acme"
name = "Acme API key"
keywords = ["acme"]
alphabet = "hex"
len = 32"#,
        );
        let r = p.expand(3).unwrap();
        assert_eq!(
            r.regex.as_deref(),
            Some(r"(?i:acme)[^\r\n]{0,40}?[^A-Za-z0-9\r\n]([0-9a-fA-F]{32})(?:[^0-9a-fA-F]|$)")
        );
        assert_eq!(r.keywords, ["acme"]);
        assert_eq!(r.max_len, Some(4 + 40 + 1 + 32 + 1));
        assert_eq!(r.confidence.as_deref(), Some("medium"));
        assert_eq!(r.entropy, Some(3.0));
        assert_eq!(r.tags, ["acme"]);
        assert_eq!(r.provider.unwrap().context, ["acme"]);
    }

    #[test]
    fn a_distinctive_prefix_matches_alone() {
        let p = entry(
            r#"id = "acme-token"
provider = "Acme"
name = "Acme token"
prefix = "acme_t."
alphabet = "base64"
len = [20, 24]"#,
        );
        let r = p.expand(1).unwrap();
        assert_eq!(
            r.regex.as_deref(),
            Some(r"\b(acme_t\.[A-Za-z0-9+/]{20,24}={0,2})(?:[^A-Za-z0-9+/=]|$)")
        );
        assert_eq!(r.keywords, ["acme_t."]);
        assert_eq!(r.max_len, Some(7 + 24 + 2 + 1));
        assert!(r.provider.unwrap().context.is_empty());
    }

    #[test]
    fn faults_name_the_field() {
        let cases = [
            (
                "keywords = [\"box\"]\nalphabet = \"hex\"\nlen = 32",
                "keyword \"box\"",
            ),
            ("alphabet = \"hex\"\nlen = 32", "needs `keywords`"),
            (
                "keywords = [\"acme\"]\nalphabet = \"hexa\"\nlen = 32",
                "alphabet = \"hexa\"",
            ),
            ("keywords = [\"acme\"]\nalphabet = \"hex\"", "needs `len`"),
            ("keywords = [\"acme\"]\nshape = '[a-z]+'", "must be bounded"),
            (
                "keywords = [\"acme\"]\nshape = '([a-z]{9})'",
                "no capture groups",
            ),
            (
                "keywords = [\"acme\"]\nalphabet = \"hex\"\nlen = [40, 32]",
                "len = 40..32",
            ),
        ];
        for (body, want) in cases {
            let p = entry(&format!(
                "id = \"x\"\nprovider = \"P\"\nname = \"N\"\n{body}"
            ));
            let e = p.expand(7).unwrap_err();
            assert!(e.starts_with("line 7: [[providers]]: "), "{e}");
            assert!(e.contains(want), "{body}: {e}");
        }
    }
}
