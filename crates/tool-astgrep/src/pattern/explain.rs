//! How a fragment was read, for `explain` and results: the glue in words
//! and the fragment's syntax tree, one line per node.

use super::metavars::metavar_of;
use super::{Doc, BODY_VAR};
use crate::excerpt::one_line;
use ast_grep_core::Node;

/// A rung's glue in words: "`;`", "an any-body block `{ $$$ }`".
pub(super) fn glue_description(glue: &str) -> Option<String> {
    let g = glue.trim();
    if g.is_empty() {
        return None;
    }
    if !g.contains("$$$") {
        return Some(format!("`{g}`"));
    }
    Some(if g.starts_with(':') {
        "`:` and an any-body block `$$$`".to_string()
    } else if g.starts_with('{') {
        "an any-body block `{ $$$ }`".to_string()
    } else {
        "an any-body block `$$$`".to_string()
    })
}

/// Lines of a pattern's tree shown by `explain`, at most.
const TREE_LINES: usize = 200;

/// The fragment's tree, one line per node: named nodes by kind, tokens
/// quoted, metavariables with the kind of node they stand in for.
pub(super) fn dump_tree(node: &Node<'_, Doc>, expando: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(node.clone(), 0usize)];
    while let Some((n, depth)) = stack.pop() {
        if out.len() == TREE_LINES {
            out.push("…".into());
            break;
        }
        let indent = "  ".repeat(depth);
        if metavar_of(&n).is_some() {
            let name = n.text().replace(expando, "$");
            let name = name.trim_end_matches(';').trim();
            let shown = name.replace(&format!("$$${BODY_VAR}"), "$$$ (the any-body block)");
            out.push(format!(
                "{indent}{shown}  ← metavariable (here: {})",
                n.kind()
            ));
            continue;
        }
        if n.is_named() {
            let text = if n.is_leaf() {
                format!("  `{}`", one_line(&n.text(), 40))
            } else {
                String::new()
            };
            out.push(format!("{indent}{}{text}", n.kind()));
        } else {
            out.push(format!("{indent}\"{}\"", n.text()));
        }
        let children: Vec<_> = n.children().collect();
        for c in children.into_iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    out
}
