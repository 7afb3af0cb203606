//! The pattern compiler: a code fragment with metavariables becomes an
//! ast-grep [`Pattern`] for one language.
//!
//! The fragment is parsed with the file's own grammar inside each rung of the
//! language's [`skeleton`](crate::skeleton) ladder, and the first rung in
//! which the wrapped source has no ERROR and no MISSING node anywhere is used.
//! (ast-grep's own check looks only at the pattern's root and drops MISSING
//! nodes silently, which turns `if (x) y()` without its `;` into a pattern
//! that quietly differs from what was typed.) When no rung accepts the
//! fragment the error names every rung tried and where the parse broke —
//! a search must never run with a pattern that silently finds nothing.

//!
//! Layout: this file holds what a compiled pattern is and the ladder walk;
//! [`rung`] tries the fragment in one rung, [`metavars`] reads
//! metavariables out of a parsed fragment, [`literals`] finds the tokens
//! every match must contain (the search's pre-filter), [`explain`] says in
//! words and trees how the fragment was read.

mod explain;
mod literals;
mod metavars;
mod rung;
#[cfg(test)]
mod tests;

use crate::catalog::Lang;
use crate::excerpt::one_line;
use crate::nesting::{
    bracket_depth, yaml_block_depth, MAX_PATTERN_BRACKETS, MAX_PATTERN_TREE_DEPTH,
    MAX_YAML_BLOCK_DEPTH,
};
use crate::skeleton::{ladder, ContextKind};
use ast_grep_config::RuleCore;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{Language, Pattern};
use ast_grep_language::SupportLang;
use explain::glue_description;
use metavars::{quote_metavars, quotes_metavars};
use rung::{glue_fits, try_rung, Attempt, RungFailure};
use std::collections::BTreeSet;
use std::sync::Arc;
use tool_core::format::thousands;

type Doc = StrDoc<Lang>;

/// What a compiled query matches with: a pattern from the ladder, or a
/// rule compiled by ast-grep-config (see [`crate::rule`]).
#[derive(Clone)]
pub enum Query {
    Pattern(Pattern),
    Rule(Arc<RuleCore>),
}

/// A pattern (or rule) ready to match files of one language.
#[derive(Clone)]
pub struct CompiledPattern {
    pub lang: Lang,
    /// What the user typed.
    pub source: String,
    pub pattern: Query,
    /// The rung that accepted the fragment.
    pub context: ContextKind,
    /// Its place in the ladder; 0 is the first rung.
    pub context_index: usize,
    /// Text appended to complete the fragment (`;`, an any-body block), if any.
    pub glue: &'static str,
    /// Whether the glue added an any-body block, captured as [`BODY_VAR`]:
    /// a rewrite then replaces the header and keeps the body.
    pub body_glue: bool,
    /// Tokens the grammar wanted that the fragment left out where a
    /// metavariable stands for a whole statement, e.g. "`;` after `$$$B`"
    /// in C's `if ($A) { $$$B }`.
    pub implied: Vec<String>,
    /// The longest literal token every match must contain: files without it
    /// are skipped before parsing, and so are subtrees without it.
    pub required_literal: Option<String>,
    /// The pattern's other literal tokens, longest first: a match contains
    /// each of them too, so a file is parsed only when it holds them all.
    pub other_literals: Vec<String>,
    /// The fragment's syntax tree as parsed in the rung used, one line per
    /// node (kinds, tokens, where each metavariable sits), for `explain`.
    pub tree: Vec<String>,
    /// The rungs tried before the one used, with why each failed.
    pub tried: Vec<String>,
    /// `$NAME` metavariables (capturing one node).
    pub single_vars: BTreeSet<String>,
    /// `$$$NAME` metavariables (capturing a sibling sequence).
    pub multi_vars: BTreeSet<String>,
    /// Whether matching may compare two captures node by node (a
    /// metavariable used twice, or any rule): the one recursion as deep as
    /// the searched file's tree, which is why every file's depth is
    /// measured before matching. Otherwise matching recursion follows the
    /// pattern only.
    pub compares_captures: bool,
}

impl std::fmt::Debug for CompiledPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledPattern")
            .field("lang", &self.lang)
            .field("source", &self.source)
            .field("context", &self.context)
            .field("glue", &self.glue)
            .field("required_literal", &self.required_literal)
            .finish_non_exhaustive()
    }
}

impl CompiledPattern {
    /// How the fragment was read, when that is not simply "a statement":
    /// the rung, what was appended, what was implied. For results.
    pub fn context_note(&self) -> Option<String> {
        if self.context_index == 0 && self.glue.is_empty() && self.implied.is_empty() {
            return None;
        }
        let mut s = format!("parsed as {}", self.context.with_article());
        for part in self.completion_parts() {
            s.push_str(", ");
            s.push_str(&part);
        }
        Some(s)
    }

    /// What was appended to the fragment, in words (`None` when nothing).
    pub fn completed_with(&self) -> Option<String> {
        glue_description(self.glue)
    }

    fn completion_parts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(g) = self.completed_with() {
            parts.push(format!("completed with {g}"));
        }
        if !self.implied.is_empty() {
            parts.push(format!("with {} implied", self.implied.join(", ")));
        }
        parts
    }

    /// The rung used, for the structured answer: its context, what was
    /// appended and what was implied.
    pub fn rung_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({ "context": self.context.name() });
        if let Some(g) = self.completed_with() {
            v["completed_with"] = g.into();
        }
        if !self.implied.is_empty() {
            v["implied"] = self.implied.clone().into();
        }
        v
    }

    /// Every named metavariable, single or multi.
    pub fn all_vars(&self) -> BTreeSet<String> {
        self.single_vars.union(&self.multi_vars).cloned().collect()
    }
}

/// Why a pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("empty pattern; give a code fragment such as `foo($X)`")]
    Empty,
    #[error("the pattern `{0}` is only a sequence metavariable, which matches a run of siblings and not one node; put it inside some code, e.g. `foo({0})` or `[{0}]`")]
    OnlySequence(String),
    #[error("{0}")]
    Unparseable(String),
    #[error("pattern is {} bytes; the limit is {} — a pattern is one code fragment, so match a smaller piece of the code", thousands(*.0), thousands(MAX_TEXT_BYTES))]
    TooLarge(usize),
    #[error("pattern nested too deeply: {} levels of brackets; the limit is {} — match an inner piece with fewer levels, using `$_` for what it contains", thousands(*.0), MAX_PATTERN_BRACKETS)]
    TooManyBrackets(usize),
    #[error("pattern nested too deeply: its syntax tree for {lang} is {} levels deep; the limit is {} — match a smaller piece of the code", thousands(*.depth), MAX_PATTERN_TREE_DEPTH)]
    TooDeep { lang: Lang, depth: usize },
    #[error("pattern nested too deeply: {} levels of YAML blocks; the limit is {} — match a smaller piece of the document", thousands(*.0), MAX_YAML_BLOCK_DEPTH)]
    TooDeepYaml(usize),
}

/// The longest pattern or rewrite text accepted, in bytes: a pattern is a
/// fragment someone types, and every byte of it is parsed once per language.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// The sequence metavariable an any-body glue captures the body with; it is
/// not the user's, so it is never listed among the pattern's variables.
pub const BODY_VAR: &str = "AGENT_BODY";

/// The checks that need no parse: empty, too large, only a sequence,
/// nested too deeply. Cheap enough to run before anything else.
pub fn check_text(source: &str) -> Result<(), PatternError> {
    if source.len() > MAX_TEXT_BYTES {
        return Err(PatternError::TooLarge(source.len()));
    }
    let trimmed = source.trim();
    if trimmed.is_empty() {
        return Err(PatternError::Empty);
    }
    if is_only_sequence(trimmed) {
        return Err(PatternError::OnlySequence(trimmed.to_string()));
    }
    let brackets = bracket_depth(trimmed);
    if brackets > MAX_PATTERN_BRACKETS {
        return Err(PatternError::TooManyBrackets(brackets));
    }
    Ok(())
}

/// Compile `source` for `lang`.
pub fn compile(lang: Lang, source: &str) -> Result<CompiledPattern, PatternError> {
    check_text(source)?;
    let trimmed = source.trim();
    if lang.is(SupportLang::Yaml) {
        // The YAML grammar aborts on deep blocks: never parse them.
        let depth = yaml_block_depth(trimmed);
        if depth > MAX_YAML_BLOCK_DEPTH {
            return Err(PatternError::TooDeepYaml(depth));
        }
    }
    let engine = lang;
    let mut processed = engine.pre_process_pattern(trimmed).into_owned();
    if quotes_metavars(lang) {
        processed = quote_metavars(&processed);
    }
    let expando = engine.expando_char();
    let mut attempts: Vec<Attempt> = Vec::new();
    for (index, rung) in ladder(lang).iter().enumerate() {
        let mut first_failure: Option<String> = None;
        for &glue in rung.glues {
            if !glue_fits(rung, glue, trimmed) {
                continue;
            }
            match try_rung(lang, rung, &processed, glue, expando) {
                Ok(mut compiled) => {
                    compiled.source = trimmed.to_string();
                    compiled.context_index = index;
                    compiled.tried = attempts
                        .iter()
                        .map(|a| format!("as {}: {}", a.context.with_article(), a.why))
                        .collect();
                    return Ok(compiled);
                }
                Err(RungFailure::TooDeep(depth)) => {
                    return Err(PatternError::TooDeep { lang, depth });
                }
                Err(RungFailure::Broken(why)) => {
                    // The bare attempt says more about the fragment than one
                    // with glue the user never typed.
                    first_failure.get_or_insert(why);
                }
            }
        }
        attempts.push(Attempt {
            context: rung.kind,
            why: first_failure.unwrap_or_default(),
        });
    }
    let mut msg = format!(
        "unparseable pattern for {lang}: `{}` is not one complete piece of {lang} code in any context tried:",
        one_line(trimmed, 80)
    );
    for a in &attempts {
        msg.push_str(&format!("\n  - as {}: {}", a.context.with_article(), a.why));
    }
    msg.push_str(&format!(
        "\nWrite the pattern as {lang} code that parses on its own (a statement, an expression, a class member or a declaration), with metavariables only where a name or an expression can stand; or check `language`."
    ));
    Err(PatternError::Unparseable(msg))
}

fn is_only_sequence(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("$$$") else {
        return false;
    };
    rest.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}
