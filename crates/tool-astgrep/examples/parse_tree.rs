//! Print the tree-sitter tree of a snippet: `cargo run --example parse_tree -- LANG 'CODE'`.
//! A debugging aid for writing pattern skeletons.

use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::Node;
use tool_astgrep::Lang;

fn dump<D: ast_grep_core::Doc>(n: &Node<'_, D>, depth: usize) {
    let flags = format!(
        "{}{}{}",
        if n.is_error() { " ERROR" } else { "" },
        if n.is_missing() { " MISSING" } else { "" },
        if n.is_extra() { " extra" } else { "" }
    );
    let r = n.range();
    let text = if n.is_leaf() {
        format!(" {:?}", n.text())
    } else {
        String::new()
    };
    println!(
        "{}{}{} [{}..{}]{}{}",
        "  ".repeat(depth),
        if n.is_named() { "" } else { "'" },
        n.kind(),
        r.start,
        r.end,
        flags,
        text
    );
    for c in n.children() {
        dump(&c, depth + 1);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let lang = Lang::from_id(&args.next().expect("LANG")).expect("language");
    let code = args.next().expect("CODE");
    let root = lang.ast_grep(&code);
    dump(&root.root(), 0);
}
