//! The tokens every match of a fragment must contain verbatim: the
//! search parses only files holding them all and walks only subtrees
//! holding the longest.

use super::metavars::metavar_of;
use super::Doc;
use ast_grep_core::Node;
use std::collections::BTreeSet;

/// The longest token every match must contain verbatim (see [`literals`]).
pub(super) fn longest_literal(node: &Node<'_, Doc>) -> Option<String> {
    let mut best: Option<String> = None;
    for_each_literal(node, |text| {
        if best.as_ref().is_none_or(|b| text.len() > b.len()) {
            best = Some(text.to_string());
        }
    });
    best
}

/// Every distinct token every match must contain verbatim, longest first.
/// The pattern's leaves are matched one to one, none skipped (ast-grep's
/// default strictness skips only the candidate's unnamed nodes), so each
/// one's text is in every match. Named leaves are compared by text;
/// anonymous ones by kind, so only those whose text is their kind count.
/// Metavariables and comments contribute nothing.
pub(super) fn literals(node: &Node<'_, Doc>) -> Vec<String> {
    let mut all = BTreeSet::new();
    for_each_literal(node, |text| {
        all.insert(text.to_string());
    });
    let mut all: Vec<String> = all.into_iter().collect();
    all.sort_by_key(|l| std::cmp::Reverse(l.len()));
    all
}

fn for_each_literal(node: &Node<'_, Doc>, mut found: impl FnMut(&str)) {
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if n.is_extra() || n.is_missing() {
            continue;
        }
        if metavar_of(&n).is_some() {
            continue;
        }
        if n.is_leaf() {
            let text = n.text();
            let usable = n.is_named() || text == n.kind();
            if usable && !text.trim().is_empty() {
                found(&text);
            }
            continue;
        }
        stack.extend(n.children());
    }
}
