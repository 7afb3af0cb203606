//! Code the grammar leaves without structure: the token trees of Rust macro
//! invocations (`vec![…]`, `assert_eq!(…)`) and the bodies of C/C++
//! `#define`s. A structural search sees only a flat token list there, so a
//! pattern would silently miss the code inside.
//!
//! Each such region is parsed again on its own, inside a small wrapper
//! (call arguments, an array, a block; a function body for a `#define`),
//! and searched like the rest of the file when one wrapper parses with no
//! error. A region no wrapper parses is reported, never dropped: every place
//! in it where the pattern's literal occurs is a *textual candidate*.
//!
//! Invariants: a region's text keeps its byte length (a `#define`'s
//! line continuations become spaces), so an offset in the wrapped text minus
//! the wrapper's prefix plus the region's start is the offset in the file;
//! regions nest at most [`MAX_REGION_DEPTH`] deep.

use crate::catalog::Lang;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Node};
use ast_grep_language::SupportLang;

type Doc = StrDoc<Lang>;

/// Macro invocations inside macro invocations are followed this deep.
pub const MAX_REGION_DEPTH: usize = 8;

/// What kind of unstructured region, for the result's wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RegionKind {
    MacroInvocation,
    PreprocessorBody,
}

impl RegionKind {
    /// "macro invocations", "preprocessor bodies".
    pub fn plural(self) -> &'static str {
        match self {
            RegionKind::MacroInvocation => "macro invocations",
            RegionKind::PreprocessorBody => "preprocessor bodies",
        }
    }
}

/// A region of a source: its offset there and its text (same length).
#[derive(Debug, Clone)]
pub struct Region {
    pub kind: RegionKind,
    pub start: usize,
    pub text: String,
}

/// A region parsed on its own inside a wrapper.
pub struct ParsedRegion {
    pub root: AstGrep<Doc>,
    /// Bytes of wrapper before the region's text.
    pub prefix_len: usize,
    /// The region's length in the wrapped text.
    pub len: usize,
}

/// Whether a language has regions this module knows.
pub fn has_regions(lang: Lang) -> bool {
    matches!(
        lang.builtin(),
        Some(SupportLang::Rust | SupportLang::C | SupportLang::Cpp)
    )
}

/// The unstructured regions directly in `node`'s tree (not inside another
/// region) whose byte range `holds` accepts; a subtree whose range it
/// refuses is not entered (the search passes "holds the pattern's
/// literal", which a region's text must, so only the paths down to the
/// literal's occurrences are walked).
pub fn regions(
    lang: Lang,
    node: &Node<'_, Doc>,
    holds: &dyn Fn(usize, usize) -> bool,
) -> Vec<Region> {
    let mut out = Vec::new();
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        let range = n.range();
        if !holds(range.start, range.end) {
            continue;
        }
        match (lang.builtin(), n.kind().as_ref()) {
            (Some(SupportLang::Rust), "token_tree")
                if n.parent().is_some_and(|p| p.kind() == "macro_invocation") =>
            {
                let r = n.range();
                if r.end >= r.start + 2 {
                    out.push(Region {
                        kind: RegionKind::MacroInvocation,
                        start: r.start + 1,
                        text: n.text()[1..r.len() - 1].to_string(),
                    });
                }
                continue;
            }
            // `macro_rules!` bodies hold `$x` fragments, not code.
            (Some(SupportLang::Rust), "macro_definition") => continue,
            (Some(SupportLang::C | SupportLang::Cpp), "preproc_arg") => {
                out.push(Region {
                    kind: RegionKind::PreprocessorBody,
                    start: n.range().start,
                    text: n.text().replace("\\\n", " \n"),
                });
                continue;
            }
            _ => {}
        }
        stack.extend(n.children());
    }
    out.sort_by_key(|r| r.start);
    out
}

/// The wrappers a region is tried in, in order: (prefix, suffix).
fn wrappers(lang: Lang, kind: RegionKind) -> &'static [(&'static str, &'static str)] {
    match (lang.builtin(), kind) {
        (Some(SupportLang::Rust), _) => &[
            ("fn __agent_fn() { __agent_m(", "); }\n"),
            ("fn __agent_fn() { [", "]; }\n"),
            ("fn __agent_fn() {\n", "\n}\n"),
        ],
        (_, _) => &[
            ("void __agent_fn(void) {\n", "\n;}\n"),
            ("int __agent_x = (", ");\n"),
        ],
    }
}

/// Parse a region in the first wrapper in which it has no syntax error.
pub fn parse(lang: Lang, region: &Region) -> Option<ParsedRegion> {
    for (prefix, suffix) in wrappers(lang, region.kind) {
        let wrapped = format!("{prefix}{}{suffix}", region.text);
        let Ok(root) = AstGrep::<Doc>::try_new(&wrapped, lang) else {
            continue;
        };
        let clean = !root.root().dfs().any(|n| n.is_error() || n.is_missing());
        if clean {
            return Some(ParsedRegion {
                root,
                prefix_len: prefix.len(),
                len: region.text.len(),
            });
        }
    }
    None
}
