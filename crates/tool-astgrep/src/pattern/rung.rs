//! One rung of the ladder: the fragment wrapped in the rung's skeleton,
//! parsed, checked for ERROR and MISSING nodes (a metavariable may stand
//! where the grammar wants a node it cannot spell), and the node that is
//! exactly the fragment turned into the engine's pattern.

use super::explain::dump_tree;
use super::literals::{literals, longest_literal};
use super::metavars::{captures_a_name_twice, collect_vars, metavar_of, to_pattern_node};
use super::{CompiledPattern, Doc, Query, BODY_VAR};
use crate::catalog::Lang;
use crate::excerpt::one_line;
use crate::nesting::{tree_depth, MAX_PATTERN_TREE_DEPTH};
use crate::skeleton::{ContextKind, Skeleton};
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::{AstGrep, Language, Node, Pattern};
use std::collections::BTreeSet;

/// One failed rung, for the error message.
pub(super) struct Attempt {
    pub(super) context: ContextKind,
    pub(super) why: String,
}

/// Why one rung did not take the fragment.
pub(super) enum RungFailure {
    /// It does not parse cleanly there; the reason, for the error message.
    Broken(String),
    /// Its tree is deeper than [`MAX_PATTERN_TREE_DEPTH`]: no rung will do.
    TooDeep(usize),
}

impl From<String> for RungFailure {
    fn from(why: String) -> Self {
        RungFailure::Broken(why)
    }
}

/// Words that open a block statement with a parenthesised header.
const BLOCK_KEYWORDS: &[&str] = &[
    "if",
    "while",
    "for",
    "foreach",
    "switch",
    "catch",
    "using",
    "lock",
    "synchronized",
    "with",
];

/// Whether `glue` may complete `fragment` in `rung`: a statement that reads
/// as a call (`foo($X)`) is never given an any-body `{ $$$ }`, which would
/// turn C's call into a function definition; a block header (`if ($A)`,
/// `fn $F()`) is.
pub(super) fn glue_fits(rung: &Skeleton, glue: &str, fragment: &str) -> bool {
    if rung.kind != ContextKind::Statement || !glue.trim_start().starts_with('{') {
        return true;
    }
    let word: String = fragment
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let rest = fragment[word.len()..].trim_start();
    !rest.starts_with('(') || BLOCK_KEYWORDS.contains(&word.as_str())
}

pub(super) fn try_rung(
    lang: Lang,
    rung: &Skeleton,
    processed: &str,
    glue: &'static str,
    expando: char,
) -> Result<CompiledPattern, RungFailure> {
    let engine = lang;
    let fragment = if rung.indent.is_empty() {
        processed.to_string()
    } else {
        processed.replace('\n', &format!("\n{}", rung.indent))
    };
    let body_glue = glue.contains("$$$");
    let named_glue = glue.replace("$$$", &format!("$$${BODY_VAR}"));
    let glue_text = engine.pre_process_pattern(&named_glue).into_owned();
    let wrapped = format!("{}{fragment}{glue_text}{}", rung.prefix, rung.suffix);
    let start = rung.prefix.len();
    let end = start + fragment.len();
    let glue_end = end + glue_text.len();

    let root = AstGrep::<Doc>::try_new(&wrapped, engine).map_err(|e| format!("parser: {e}"))?;
    let top = root.root();
    // Everything below walks the tree, some of it recursively: measure it
    // first, without recursion.
    let depth = tree_depth(&top);
    if depth > MAX_PATTERN_TREE_DEPTH {
        return Err(RungFailure::TooDeep(depth));
    }
    // A metavariable may stand where the grammar wants a node it cannot
    // spell (a Java parameter list `($$$P)`): an ERROR node that is exactly
    // one metavariable is accepted, and becomes that metavariable. So is a
    // MISSING token that only completes a statement made of one
    // metavariable (the `;` C wants after `$$$B` in `{ $$$B }`): it is
    // named in the result as implied.
    let mut implied = Vec::new();
    for n in top.dfs() {
        if n.is_missing() {
            let stands_for_statement = n.parent().and_then(|p| metavar_of(&p)).is_some();
            if stands_for_statement {
                if n.range().start >= end {
                    // Inside the glue, which the user never typed.
                    continue;
                }
                let owner = n.parent().map(|p| p.text().to_string()).unwrap_or_default();
                implied.push(format!(
                    "`{}` after `{}`",
                    n.kind(),
                    owner.replace(expando, "$")
                ));
                continue;
            }
            return Err(describe_break(&n, rung, &fragment, start, end, expando).into());
        }
        if n.is_error() && metavar_of(&n).is_none() {
            return Err(describe_break(&n, rung, &fragment, start, end, expando).into());
        }
        // An empty named node inside the fragment is a part the user left
        // out (Python's `if $X:` has an empty block, which would match only
        // an empty block): the next glue completes it.
        let r = n.range();
        if n.is_named() && r.is_empty() && r.start >= start && r.start <= glue_end {
            return Err(RungFailure::Broken(format!(
                "the `{}` after the pattern is empty (it looks incomplete)",
                n.kind()
            )));
        }
    }
    implied.dedup();
    // The node that is exactly the fragment, the deepest of equal ones (a
    // call rather than the statement around it); else the one that is the
    // fragment plus its glue.
    let mut exact: Option<Node<'_, Doc>> = None;
    let mut glued: Option<Node<'_, Doc>> = None;
    // Some grammars end a node after the newline that follows it.
    let ws = |s: &str| s.len() - s.trim_start().len();
    let exact_end = end..=end + ws(&wrapped[end..]);
    let glued_end = glue_end..=glue_end + ws(&wrapped[glue_end..]);
    for n in top.dfs() {
        let r = n.range();
        if r.start != start {
            continue;
        }
        if exact_end.contains(&r.end) {
            exact = Some(n);
        } else if !glue_text.is_empty() && glued_end.contains(&r.end) {
            glued = Some(n);
        }
    }
    let Some(node) = exact.or(glued) else {
        return Err(RungFailure::Broken(
            "the fragment is not one syntax node here (it reads as several siblings); match one statement or expression at a time, or wrap them, e.g. in a block"
                .into(),
        ));
    };
    if node.is_extra() {
        return Err(RungFailure::Broken("the fragment is only a comment".into()));
    }
    let mut pattern = Pattern::from(node.clone());
    pattern.node = to_pattern_node(&node);
    if matches!(
        pattern.node,
        PatternNode::MetaVar {
            meta_var: MetaVariable::MultiCapture(_) | MetaVariable::Multiple
        }
    ) {
        return Err(RungFailure::Broken(
            "the fragment is only a sequence metavariable".into(),
        ));
    }
    let mut single_vars = BTreeSet::new();
    let mut multi_vars = BTreeSet::new();
    collect_vars(&pattern.node, &mut single_vars, &mut multi_vars);
    multi_vars.remove(BODY_VAR);
    let compares_captures = captures_a_name_twice(&pattern.node);
    let required_literal = longest_literal(&node);
    let mut other_literals = literals(&node);
    other_literals.retain(|l| Some(l) != required_literal.as_ref());
    let tree = dump_tree(&node, expando);
    Ok(CompiledPattern {
        lang,
        source: String::new(),
        pattern: Query::Pattern(pattern),
        context: rung.kind,
        context_index: 0,
        glue,
        body_glue,
        implied,
        required_literal,
        other_literals,
        tree,
        tried: Vec::new(),
        single_vars,
        multi_vars,
        compares_captures,
    })
}

/// Where the wrapped parse broke, in the user's terms.
fn describe_break(
    bad: &Node<'_, Doc>,
    rung: &Skeleton,
    fragment: &str,
    start: usize,
    end: usize,
    expando: char,
) -> String {
    let what = if bad.is_missing() {
        format!("a `{}` is missing", bad.kind())
    } else {
        let text = bad.text();
        let shown = if expando == '$' {
            text.to_string()
        } else {
            text.replace(expando, "$")
        };
        format!("unexpected `{}`", one_line(shown.trim(), 40))
    };
    let offset = bad.range().start;
    if offset < start {
        return format!("{what} before the pattern (the fragment unbalances its surroundings)");
    }
    if offset >= end {
        return format!("{what} at the end of the pattern (it looks incomplete)");
    }
    let before = &fragment[..offset - start];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let mut column = before[line_start..].chars().count();
    if line > 0 {
        column = column.saturating_sub(rung.indent.chars().count());
    }
    format!(
        "{what} at line {}, column {} of the pattern",
        line + 1,
        column + 1
    )
}
