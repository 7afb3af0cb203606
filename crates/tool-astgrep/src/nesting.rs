//! Nesting limits: the cheap, non-recursive depth checks that keep every
//! recursion over a syntax tree within its thread's stack.
//!
//! ast-grep converts a pattern to its matcher tree recursively and matches
//! recursively: one frame per level of the pattern, plus one per level of a
//! captured node when a metavariable is used twice (`$X == $X` compares the
//! two captures node by node). A deep enough input would overflow the stack,
//! which aborts the whole host. So nothing is handed to a recursive walk
//! before its depth was measured here, iteratively:
//!
//! - a pattern deeper than [`MAX_PATTERN_BRACKETS`] brackets is refused
//!   before it is parsed at all ([`bracket_depth`]), and one whose parse is
//!   deeper than [`MAX_PATTERN_TREE_DEPTH`] before it is converted;
//! - a source file whose tree is deeper than [`MAX_FILE_TREE_DEPTH`] is
//!   skipped and named in the result, measured before matching by
//!   [`depth_beyond`], which enters only subtrees with enough nodes to be
//!   that deep;
//! - matching runs on threads with a [`MATCH_STACK_BYTES`] stack;
//! - YAML, pattern or file, deeper than [`MAX_YAML_BLOCK_DEPTH`] is never
//!   parsed at all ([`yaml_block_depth`]): the YAML grammar's own scanner
//!   aborts the process on deep block nesting.
//!
//! Invariant: every function here uses constant stack, whatever its input.

use ast_grep_core::tree_sitter::{LanguageExt, StrDoc};
use ast_grep_core::Node;

/// The deepest bracket nesting a pattern may have. A pattern is a fragment
/// someone types to find code: real ones nest a handful of levels, and code
/// itself rarely passes 30. 128 is far beyond any useful pattern, and keeps
/// the compiler and the matcher (one frame per pattern level) small on any
/// thread, including a 2 MiB one. Measured with `tests/pattern_props.rs` in
/// the debug build (the tests' build, whose frames are the largest): at 256
/// (a tree depth of 576) compiling the deepest patterns needed between 1 and
/// 1.5 MiB of stack, and once overflowed a 2 MiB test thread in CI (a
/// SIGSEGV); at 128 (320) they pass on a 1 MiB stack.
pub const MAX_PATTERN_BRACKETS: usize = 128;

/// The deepest syntax tree a pattern's parse may have, skeleton included.
/// Nesting without brackets (`a + a + … + a`, `not not … x`, `a.b.c…`) is
/// caught here. A bracket level is one or two tree levels (a call is a call
/// and its argument list), so this is twice the bracket limit plus room for
/// the skeleton around the fragment.
pub const MAX_PATTERN_TREE_DEPTH: usize = 2 * MAX_PATTERN_BRACKETS + 64;

/// The deepest syntax tree a searched file may have; deeper files are
/// skipped and named. Hand-written code stays under a few hundred levels;
/// generated code (long `a + b + …` chains, nested data literals) can reach
/// a few thousand.
///
/// The recursion that goes deepest is ast-grep comparing the two captures of
/// a repeated metavariable (`$X == $X`), one frame per level of the captured
/// subtree. Measured on an 8 MiB stack (a Python file `x = [[…]] == [[…]]`):
/// the release build compares 20,000 levels and overflows by 40,000; the
/// debug build (the tests) compares 7,000 and overflows by 8,000. On the
/// [`MATCH_STACK_BYTES`] stack that is over 40,000 and 14,000 levels: this
/// limit leaves a margin of 8× (release) and 2.8× (debug).
pub const MAX_FILE_TREE_DEPTH: usize = 5_000;

/// The stack of each thread that parses and matches files: twice the 8 MiB
/// the limits above were measured on. Only the pages used are committed.
pub const MATCH_STACK_BYTES: usize = 16 * 1024 * 1024;

/// The deepest YAML block nesting parsed. tree-sitter-yaml 0.7.2's scanner
/// writes its indentation stack, 4 bytes an entry after 10 bytes of state,
/// into tree-sitter's 1,024-byte buffer and checks the room only before each
/// entry: with 254 entries it writes 1,026 bytes and tree-sitter's
/// `assert(length <= 1024)` aborts the process (release builds too). Found
/// by `tests/pattern_props.rs` with the pattern `- - - … b`. 200 keeps the
/// stack at most 202 entries (818 bytes).
pub const MAX_YAML_BLOCK_DEPTH: usize = 200;

/// A bound on the YAML scanner's indentation stack for `s`: over its lines,
/// the most of leading spaces and tabs plus `-`, `?` and `:` indicators
/// (followed by a space, a tab or the line's end). Each stack entry is a
/// block nested at a deeper column, opened by indentation or by such an
/// indicator, so the stack never has more entries than this plus one.
/// Generous for real YAML: it counts indicators anywhere on the line.
pub fn yaml_block_depth(s: &str) -> usize {
    let mut deepest = 0;
    for line in s.lines() {
        let bytes = line.as_bytes();
        let indent = bytes
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        let indicators = bytes
            .iter()
            .enumerate()
            .filter(|(i, b)| {
                matches!(b, b'-' | b'?' | b':')
                    && matches!(bytes.get(i + 1), None | Some(b' ' | b'\t'))
            })
            .count();
        deepest = deepest.max(indent + indicators);
    }
    deepest
}

/// The deepest nesting of `(`, `[` and `{` in `s`. Brackets in strings and
/// comments count too: this is a cheap bound, not a parse.
pub fn bracket_depth(s: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    for b in s.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// How many levels the tree under `node` has (a leaf is 1), walked with a
/// tree-sitter cursor: no recursion.
pub fn tree_depth<L: LanguageExt>(node: &Node<'_, StrDoc<L>>) -> usize {
    let mut cursor = node.get_inner_node().walk();
    let mut depth = 1;
    let mut deepest = 1;
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return deepest;
            }
            depth -= 1;
        }
    }
}

/// The depth of the tree under `node` (as [`tree_depth`] counts it) when it
/// is deeper than `limit`, else `None`; without walking what cannot be too
/// deep. A subtree of `n` nodes is at most `n` levels deep, and tree-sitter
/// keeps each node's count of descendants (`descendant_count`, the same
/// visible nodes a cursor walks): a subtree whose count keeps it within the
/// limit at its depth is not entered. So a file is measured in the few
/// nodes near its root that hold thousands of others, and only a deep
/// path is followed down. The pruned subtrees are within the limit, so
/// when the walked part passes it, its deepest level is the tree's.
pub fn depth_beyond<L: LanguageExt>(node: &Node<'_, StrDoc<L>>, limit: usize) -> Option<usize> {
    let mut cursor = node.get_inner_node().walk();
    let mut depth = 1;
    let mut deepest = 1;
    loop {
        // One level of margin over the bound (`depth - 1 + count`).
        let within = depth + cursor.node().descendant_count() <= limit;
        if !within && cursor.goto_first_child() {
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return (deepest > limit).then_some(deepest);
            }
            depth -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ast_grep_core::AstGrep;
    use ast_grep_language::SupportLang;

    type Doc = StrDoc<SupportLang>;

    #[test]
    fn brackets_are_counted_at_their_deepest() {
        assert_eq!(bracket_depth("foo($X)"), 1);
        assert_eq!(bracket_depth("a[b[c]] + f({x: (1)})"), 3);
        assert_eq!(bracket_depth(")))((("), 3);
        assert_eq!(bracket_depth(&"[".repeat(5000)), 5000);
    }

    #[test]
    fn yaml_depth_counts_indentation_and_indicators() {
        assert_eq!(yaml_block_depth("a: 1\nb:\n  - c\n"), 3);
        assert_eq!(yaml_block_depth(&format!("{}b", "- ".repeat(300))), 300);
        assert_eq!(yaml_block_depth("url: http://x/a-b\n"), 1);
    }

    /// Just under the limit the YAML grammar parses whatever the shape: a
    /// ladder of keys, a run of `- ` and a ladder of sequences.
    #[test]
    fn yaml_at_the_limit_parses() {
        let n = MAX_YAML_BLOCK_DEPTH;
        let keys: String = (0..n)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        let dashes = format!("{}b\n", "- ".repeat(n));
        let seqs: String = (0..n / 2)
            .map(|i| format!("{}- \n", "  ".repeat(i)))
            .collect();
        for src in [keys, dashes, seqs] {
            assert!(yaml_block_depth(&src) <= n);
            let root = AstGrep::<Doc>::try_new(&src, SupportLang::Yaml).unwrap();
            assert!(tree_depth(&root.root()) > 10);
        }
    }

    #[test]
    fn tree_depth_counts_levels_without_recursing() {
        let src = format!("x = {}1{}\n", "[".repeat(20_000), "]".repeat(20_000));
        let root = AstGrep::<Doc>::try_new(&src, SupportLang::Python).unwrap();
        // module > expression_statement > assignment > 20,000 lists > integer
        assert_eq!(tree_depth(&root.root()), 20_004);
        let flat = AstGrep::<Doc>::try_new("x = 1\ny = 2\n", SupportLang::Python).unwrap();
        assert_eq!(tree_depth(&flat.root()), 4);
    }

    /// The probe agrees with the full walk on either side of the limit,
    /// whatever the shape: one deep path, a deep path among many shallow
    /// siblings, deep paths in a later sibling, and flat files.
    #[test]
    fn depth_beyond_agrees_with_tree_depth() {
        let lists = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let sums = |n: usize| format!("x = {}\n", vec!["a"; n].join(" + "));
        let flat: String = (0..3_000).map(|i| format!("x{i} = {i}\n")).collect();
        let sources = [
            format!("x = {}\n", lists(900)),
            format!("x = {}\n", lists(1_100)),
            format!("{flat}x = {}\n{flat}", lists(990)),
            format!("{flat}x = {}\n{flat}", lists(1_010)),
            format!("def f():\n    y = {}\n{}", lists(700), sums(1_200)),
            sums(995),
            sums(1_005),
            flat.clone(),
            String::new(),
        ];
        for src in &sources {
            let root = AstGrep::<Doc>::try_new(src.as_str(), SupportLang::Python).unwrap();
            let full = tree_depth(&root.root());
            for limit in [1, 3, full - 1, full, full + 1, 1_000] {
                assert_eq!(
                    depth_beyond(&root.root(), limit),
                    (full > limit).then_some(full),
                    "limit {limit}, depth {full}, source of {} bytes",
                    src.len()
                );
            }
        }
    }
}
