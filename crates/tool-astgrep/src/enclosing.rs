//! The function and class a match sits in (`Child.run`), named from the
//! syntax tree around it, for every language: a scope is a definition or
//! declaration node whose kind names a function, class, module, … and which
//! has a name.

use crate::catalog::Lang;
use crate::excerpt::one_line;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::Node;

type Doc = StrDoc<Lang>;

/// Node kinds that name a scope a match can sit in.
fn is_scope_kind(kind: &str) -> bool {
    const SCOPES: &[&str] = &[
        "function",
        "method",
        "class",
        "struct",
        "impl",
        "trait",
        "interface",
        "enum",
        "module",
        "namespace",
        "constructor",
        "object_declaration",
        "protocol",
    ];
    let k = kind;
    !k.contains("call")
        && !k.contains("type")
        && !k.contains("parameter")
        && (k.ends_with("_definition")
            || k.ends_with("_declaration")
            || k.ends_with("_item")
            || k.ends_with("_specifier")
            || k == "function"
            || k == "method")
        && SCOPES.iter().any(|s| k.contains(s))
}

/// The function and class a range sits in, outermost first, as
/// `Child.run`; `None` at the top level.
pub(crate) fn enclosing_name(top: &Node<'_, Doc>, start: usize, end: usize) -> Option<String> {
    // The deepest node containing the range: through children of the same
    // range too (a class's body block is as long as the class nested in it).
    let mut node = top.clone();
    loop {
        let next = node
            .children()
            .find(|c| c.range().start <= start && end <= c.range().end);
        match next {
            Some(c) => node = c,
            None => break,
        }
    }
    let mut names = Vec::new();
    let mut cur = node.parent();
    // The match itself is not its own scope: start from its parent.
    while let Some(n) = cur {
        if is_scope_kind(&n.kind()) {
            let name = n
                .field("name")
                .or_else(|| {
                    n.field("declarator")
                        .and_then(|d| d.field("declarator").or(Some(d)))
                })
                .or_else(|| n.field("type"))
                .map(|x| one_line(&x.text(), 40));
            if let Some(name) = name {
                names.push(name);
            }
        }
        cur = n.parent();
    }
    names.reverse();
    (!names.is_empty()).then(|| names.join("."))
}
