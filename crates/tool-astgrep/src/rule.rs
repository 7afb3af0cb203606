//! Rules in ast-grep's own format, as an alternative to a pattern: atomic
//! (`pattern` with `context`/`selector`, `kind`, `regex`), relational
//! (`inside`, `has`, `precedes`, `follows` with `stopBy` and `field`),
//! composite (`all`, `any`, `not`, `matches`), plus `constraints` and
//! `utils`. The rule engine is ast-grep-config's; this module only reads the
//! text (YAML or JSON), checks it and says clearly what is wrong with it.
//!
//! A rule text is either a whole rule document (`rule:` with optional
//! `constraints`, `utils`, `transform`, `language`, `fix`) or just the rule
//! object itself (`pattern: …`, `kind: …`).
//!
//! Invariants: a rule is compiled for exactly one language; a document's
//! `language` and the call's `language` must agree; nothing is searched with
//! a rule that did not compile.

use crate::catalog::Lang;
use crate::pattern::{CompiledPattern, Query, MAX_TEXT_BYTES};
use crate::skeleton::ContextKind;
use ast_grep_config::{DeserializeEnv, SerializableRuleCore};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use tool_core::format::thousands;

/// A rule text read and checked, before it is compiled for a language.
#[derive(Clone)]
pub struct RuleSpec {
    /// The text as given, for results.
    pub source: String,
    core: SerializableRuleCore,
    /// The document's `language`, if it named one.
    pub language: Option<String>,
    /// The document's `fix`: a rewrite template, for ast_edit.
    pub fix: Option<String>,
}

impl std::fmt::Debug for RuleSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleSpec")
            .field("source", &self.source)
            .field("language", &self.language)
            .field("fix", &self.fix)
            .finish_non_exhaustive()
    }
}

/// Keys of a whole rule document besides the core ones that are accepted
/// and ignored (they describe the rule, they do not change what matches).
const DESCRIPTIVE_KEYS: &[&str] = &["id", "message", "note", "severity", "url", "metadata"];

/// Read a rule given as YAML or JSON text, or as a JSON object.
pub fn read(rule: &Value) -> Result<RuleSpec, String> {
    let (source, doc) = match rule {
        Value::String(text) => {
            if text.len() > MAX_TEXT_BYTES {
                return Err(format!(
                    "rule is {} bytes; the limit is {} — a rule describes one kind of code, so keep it small",
                    thousands(text.len()),
                    thousands(MAX_TEXT_BYTES)
                ));
            }
            if text.trim().is_empty() {
                return Err("empty rule; give YAML such as `pattern: foo($X)` or `kind: call_expression`".into());
            }
            // YAML is a superset of JSON, so one reader takes both.
            let doc: Value = ast_grep_config::from_str(text)
                .map_err(|e| format!("the rule is not valid YAML or JSON: {e}"))?;
            (text.clone(), doc)
        }
        Value::Object(_) => (rule.to_string(), rule.clone()),
        _ => {
            return Err(
                "argument `rule` must be a YAML or JSON text, or an object such as {\"pattern\": \"foo($X)\"}"
                    .into(),
            )
        }
    };
    let Value::Object(mut map) = doc else {
        return Err("the rule must be a mapping, such as `pattern: foo($X)` or `rule: {kind: call_expression}`".into());
    };
    // A bare rule object is wrapped as the document's `rule`; the keys that
    // belong to a document (`fix`, `constraints`, …) stay beside it.
    if !map.contains_key("rule") {
        let document_keys = ["constraints", "utils", "transform", "language", "fix"];
        let (doc_part, rule_part): (serde_json::Map<String, Value>, _) =
            map.into_iter().partition(|(k, _)| {
                document_keys.contains(&k.as_str()) || DESCRIPTIVE_KEYS.contains(&k.as_str())
            });
        map = doc_part;
        map.insert("rule".into(), Value::Object(rule_part));
    }
    let language = match map.remove("language") {
        None => None,
        Some(Value::String(l)) => Some(l),
        Some(other) => {
            return Err(format!(
                "the rule's `language` must be a string, not {other}"
            ))
        }
    };
    let fix = match map.remove("fix") {
        None => None,
        Some(Value::String(f)) => Some(f),
        Some(_) => {
            return Err(
                "the rule's `fix` must be a template string; fix objects (expandStart/expandEnd) are not supported"
                    .into(),
            )
        }
    };
    for key in DESCRIPTIVE_KEYS {
        map.remove(*key);
    }
    let known = ["rule", "constraints", "utils", "transform"];
    let unknown: Vec<&String> = map
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown key{} in the rule document: {}; a document has rule, constraints, utils, transform, language and fix",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    let core: SerializableRuleCore = serde_json::from_value(Value::Object(map))
        .map_err(|e| format!("the rule is not in ast-grep's rule format: {e}"))?;
    Ok(RuleSpec {
        source,
        core,
        language,
        fix,
    })
}

/// The message of an error and of every error under it.
fn chain(e: &dyn std::error::Error) -> String {
    // Each link is a sentence of its own ("… is not configured correctly.");
    // joined by ": ", their full stops go.
    let mut links = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        links.push(s.to_string());
        cur = s.source();
    }
    links
        .iter()
        .map(|l| l.trim().trim_end_matches('.'))
        .collect::<Vec<_>>()
        .join(": ")
}

/// `$NAME` and `$$$NAME` metavariables spelled in a rule's text.
fn rule_vars(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut single = BTreeSet::new();
    let mut multi = BTreeSet::new();
    for v in crate::rewrite::template_vars(text) {
        if v.name.starts_with('_') {
            continue;
        }
        if v.sequence {
            multi.insert(v.name);
        } else {
            single.insert(v.name);
        }
    }
    single.retain(|n| !multi.contains(n));
    (single, multi)
}

impl RuleSpec {
    /// The rule on one line, for result headers: `rule {pattern: foo($X)}`.
    pub fn shown(&self) -> String {
        let joined: Vec<&str> = self
            .source
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        format!("rule {{{}}}", joined.join("; "))
    }

    /// Compile the rule for one language.
    pub fn compile(&self, lang: Lang) -> Result<CompiledPattern, String> {
        let env = DeserializeEnv::new(lang);
        let core = self.core.get_matcher(env).map_err(|e| {
            format!(
                "the rule does not compile for {lang}: {}; nothing was searched",
                chain(&e)
            )
        })?;
        let (single_vars, multi_vars) = rule_vars(&self.source);
        Ok(CompiledPattern {
            lang,
            source: self.shown(),
            pattern: Query::Rule(Arc::new(core)),
            context: ContextKind::Statement,
            context_index: 0,
            glue: "",
            body_glue: false,
            implied: Vec::new(),
            required_literal: None,
            other_literals: Vec::new(),
            tree: Vec::new(),
            tried: Vec::new(),
            single_vars,
            multi_vars,
            // A rule may compare captures (`$A == $A` in a pattern, a
            // constraint): always measured first.
            compares_captures: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_rules_get_a_clear_error() {
        let err = read(&Value::String("pattern: [".into())).unwrap_err();
        assert!(
            err.starts_with("the rule is not valid YAML or JSON"),
            "{err}"
        );
        let err = read(&Value::String("rule:\n  pattern: a\nfoo: 1\n".into())).unwrap_err();
        assert_eq!(
            err,
            "unknown key in the rule document: `foo`; a document has rule, constraints, utils, transform, language and fix"
        );
        let spec = read(&Value::String("kind: no_such_kind".into())).unwrap();
        let err = spec.compile(Lang::from_id("python").unwrap()).unwrap_err();
        expect_test::expect!["the rule does not compile for python: `rule` is not configured correctly: Rule contains invalid kind matcher: Invalid Kind: Kind `no_such_kind` is invalid; nothing was searched"].assert_eq(&err);
    }

    #[test]
    fn a_bare_rule_and_a_document_read_the_same() {
        let a = read(&Value::String("pattern: foo($X)".into())).unwrap();
        let b = read(&Value::String(
            "id: x\nlanguage: python\nrule:\n  pattern: foo($X)\nfix: bar($X)\n".into(),
        ))
        .unwrap();
        assert_eq!(b.language.as_deref(), Some("python"));
        assert_eq!(b.fix.as_deref(), Some("bar($X)"));
        let json = read(&serde_json::json!({"pattern": "foo($X)"})).unwrap();
        for spec in [a, b, json] {
            let c = spec.compile(Lang::from_id("python").unwrap()).unwrap();
            assert_eq!(c.single_vars.iter().collect::<Vec<_>>(), ["X"]);
        }
    }
}
