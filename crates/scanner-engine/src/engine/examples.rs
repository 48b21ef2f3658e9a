//! [`Engine::check_examples`]: every rule's examples and negative examples, with the reason
//! for each that does not behave.

use super::*;

impl Engine {
    /// The ids of the rules without a single example (negative ones alone do not count):
    /// [`Engine::check_examples`] proves nothing of them.
    pub fn rules_without_examples(&self) -> Vec<&str> {
        self.rules
            .iter()
            .zip(&self.infos)
            .filter(|(rule, _)| rule.examples.is_empty())
            .map(|(_, info)| &*info.id)
            .collect()
    }

    /// Runs every rule's examples (each must produce a finding of its rule)
    /// and negative examples (none may), and reports those that do not
    /// behave, with the reason. Compiles every regex.
    pub fn check_examples(&self) -> Vec<ExampleFailure> {
        let mut failures = Vec::new();
        let mut scratch = self.new_scratch();
        let mut out = Vec::new();
        for (idx, (rule, info)) in self.rules.iter().zip(&self.infos).enumerate() {
            if rule.pattern.is_some() && rule.regex().is_none() {
                // Every example fails for the same reason: say it for each.
                let reason = rule.compile_error();
                let all: Vec<(bool, &str)> = rule
                    .examples
                    .iter()
                    .map(|e| (false, e.text()))
                    .chain(rule.negative_examples.iter().map(|e| (true, e.text())))
                    .collect();
                if all.is_empty() {
                    failures.push(ExampleFailure {
                        rule_id: info.id.to_string(),
                        example: String::new(),
                        negative: false,
                        reason: reason.clone(),
                    });
                }
                for (negative, text) in all {
                    failures.push(ExampleFailure {
                        rule_id: info.id.to_string(),
                        example: text.to_owned(),
                        negative,
                        reason: reason.clone(),
                    });
                }
                continue;
            }
            for (negative, ex) in rule
                .examples
                .iter()
                .map(|e| (false, e))
                .chain(rule.negative_examples.iter().map(|e| (true, e)))
            {
                let path = match (ex.path(), &rule.path) {
                    (Some(p), _) => p,
                    (None, None) => "example.txt",
                    (None, Some(_)) => {
                        failures.push(ExampleFailure {
                            rule_id: info.id.to_string(),
                            example: ex.text().to_owned(),
                            negative,
                            reason: "the rule has `path`: write the example as \
                                     { text = '...', path = '...' }"
                                .into(),
                        });
                        continue;
                    }
                };
                out.clear();
                let input = ScanInput {
                    data: ex.text().as_bytes(),
                    path,
                    base_offset: 0,
                    owned_len: ex.text().len(),
                    start: LinePos::START,
                };
                self.scan(&input, &mut scratch, &mut out);
                let mine: Vec<&Finding> = out.iter().filter(|f| *f.rule_id == *info.id).collect();
                let reason = match (negative, mine.first()) {
                    (false, None) if rule.generic && !out.is_empty() => Some(format!(
                        "dropped as a duplicate of the finding of provider rule `{}` \
                         (generic = true): pick an example no provider rule reports",
                        out[0].rule_id
                    )),
                    (false, None) => Some(self.diagnose(idx, ex.text().as_bytes(), path)),
                    (true, Some(f)) => Some(format!(
                        "matched secret `{}` at line {} column {}",
                        f.secret, f.line, f.column
                    )),
                    _ => None,
                };
                if let Some(reason) = reason {
                    failures.push(ExampleFailure {
                        rule_id: info.id.to_string(),
                        example: ex.text().to_owned(),
                        negative,
                        reason,
                    });
                }
            }
        }
        failures
    }

    /// Why rule `idx` finds nothing in `text`: runs its regex over the whole
    /// text, without keywords, and names the gate that drops each match.
    fn diagnose(&self, idx: usize, text: &[u8], path: &str) -> String {
        let rule = &self.rules[idx];
        if rule.path.as_ref().is_some_and(|p| !p.is_match(path)) {
            return format!("the rule's `path` does not match the example path `{path}`");
        }
        let Some(regex) = rule.regex() else {
            return "path-only rule did not report the file".into();
        };
        let mut cache = regex.create_cache();
        let mut caps = regex.create_captures();
        let mut reasons = Vec::new();
        let mut at = 0;
        while at < text.len() {
            regex.search_captures_with(&mut cache, &Input::new(text).range(at..), &mut caps);
            let Some(m) = caps.get_match() else { break };
            at = m.end().max(m.start() + 1);
            let span = m.span();
            if span.len() > rule.max_len {
                reasons.push(format!(
                    "match of {} bytes is longer than max_len = {}",
                    span.len(),
                    rule.max_len
                ));
                continue;
            }
            let secret = secret_span(&caps, rule.secret_group, span);
            let c = Candidate {
                rule: idx as u32,
                m: span,
                secret,
                entropy: shannon_entropy(&text[secret.range()]),
                owned: true,
                allowed: None,
            };
            let s = String::from_utf8_lossy(&text[secret.range()]);
            reasons.push(match self.gate(&c, text, path) {
                Some(DropReason::Entropy) => format!(
                    "secret `{s}` has entropy {:.2} < {}",
                    c.entropy,
                    rule.entropy.unwrap_or(0.0)
                ),
                Some(DropReason::Placeholder) => {
                    format!("secret `{s}` looks like a placeholder (see docs/rules.md)")
                }
                Some(d) => format!("secret `{s}` dropped by {d:?}"),
                None => {
                    let lower = String::from_utf8_lossy(text).to_ascii_lowercase();
                    if !rule.keywords.iter().any(|k| lower.contains(k.as_str())) {
                        format!(
                            "secret `{s}` matched but no keyword {:?} occurs",
                            rule.keywords
                        )
                    } else {
                        format!(
                            "secret `{s}` matched but no keyword lies within max_len = {} bytes \
                             (or keyword_lead = {} before the match start)",
                            rule.max_len,
                            rule.keyword_lead()
                        )
                    }
                }
            });
        }
        if reasons.is_empty() {
            "the regex does not match".into()
        } else {
            reasons.join("; ")
        }
    }
}
