//! Metavariables in a parsed fragment: which node stands for one (JSON's
//! and TOML's are written as strings), the engine's pattern tree built
//! from the fragment's, and which names it captures.

use super::Doc;
use crate::catalog::Lang;
use crate::grammars::Extra;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::{Language, Node};
use ast_grep_language::SupportLang;
use std::collections::BTreeSet;

/// Whether the language has no identifiers where a value goes (JSON, TOML),
/// so that `$X` is written as the string `"$X"` and turned back into a
/// metavariable.
pub(super) fn quotes_metavars(lang: Lang) -> bool {
    lang.is(SupportLang::Json) || lang.extra() == Some(Extra::Toml)
}

/// Write every metavariable outside a string as a string: `"$X"`.
pub(super) fn quote_metavars(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 8);
    let mut chars = src.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '$' => {
                let mut token = String::from('$');
                while let Some(&n) = chars.peek() {
                    if n == '$' || n.is_ascii_uppercase() || n.is_ascii_digit() || n == '_' {
                        token.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push('"');
                out.push_str(&token);
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The metavariable a node stands for, if any (JSON's quoted ones too).
pub(super) fn metavar_of(n: &Node<'_, Doc>) -> Option<MetaVariable> {
    let text = n.text();
    if let Some(v) = n.lang().extract_meta_var(&text) {
        return Some(v);
    }
    if quotes_metavars(*n.lang()) && matches!(n.kind().as_ref(), "string" | "quoted_key") {
        let inner = text.strip_prefix('"')?.strip_suffix('"')?;
        return n.lang().extract_meta_var(inner);
    }
    None
}

/// The engine's pattern tree for a node. Same shape as ast-grep's own
/// conversion; MISSING nodes cannot occur (the compiler refused them).
pub(super) fn to_pattern_node(n: &Node<'_, Doc>) -> PatternNode {
    if let Some(meta_var) = metavar_of(n) {
        return PatternNode::MetaVar { meta_var };
    }
    if n.is_leaf() || (n.is_named() && has_hidden_text(n)) {
        return PatternNode::Terminal {
            text: n.text().to_string(),
            is_named: n.is_named(),
            kind_id: n.kind_id(),
        };
    }
    // `$$$B;` in a block is the statements `$$$B`, not one expression
    // statement made of them: C's `while ($C) { $$$B; }` means any body.
    if let Some(text) = n.text().strip_suffix(';') {
        if let Some(meta_var @ (MetaVariable::MultiCapture(_) | MetaVariable::Multiple)) =
            n.lang().extract_meta_var(text.trim_end())
        {
            return PatternNode::MetaVar { meta_var };
        }
    }
    PatternNode::Internal {
        kind_id: n.kind_id(),
        children: n.children().map(|c| to_pattern_node(&c)).collect(),
    }
}

/// Whether some of a node's text lies in no child: a token the grammar
/// does not expose, such as the contents of a TOML string. Such a node is
/// compared by its whole text, or `version = "1"` would match every string.
fn has_hidden_text(n: &Node<'_, Doc>) -> bool {
    let start = n.range().start;
    let text = n.text();
    let mut at = 0;
    for child in n.children() {
        let r = child.range();
        let gap = text.get(at..r.start - start).unwrap_or("");
        if !gap.trim().is_empty() {
            return true;
        }
        at = r.end - start;
    }
    !text.get(at..).unwrap_or("").trim().is_empty()
}

pub(super) fn collect_vars(
    node: &PatternNode,
    single: &mut BTreeSet<String>,
    multi: &mut BTreeSet<String>,
) {
    match node {
        PatternNode::MetaVar { meta_var } => match meta_var {
            MetaVariable::Capture(name, _) => {
                single.insert(name.clone());
            }
            MetaVariable::MultiCapture(name) => {
                multi.insert(name.clone());
            }
            MetaVariable::Dropped(_) | MetaVariable::Multiple => {}
        },
        PatternNode::Terminal { .. } => {}
        PatternNode::Internal { children, .. } => {
            for c in children {
                collect_vars(c, single, multi);
            }
        }
    }
}

/// Whether some capturing metavariable (`$A` or `$$$A`) occurs twice: its
/// second capture is then compared with the first, node by node.
pub(super) fn captures_a_name_twice(node: &PatternNode) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n {
            PatternNode::MetaVar {
                meta_var: MetaVariable::Capture(name, _) | MetaVariable::MultiCapture(name),
            } => {
                if !seen.insert(name.as_str()) {
                    return true;
                }
            }
            PatternNode::MetaVar { .. } | PatternNode::Terminal { .. } => {}
            PatternNode::Internal { children, .. } => stack.extend(children),
        }
    }
    false
}
