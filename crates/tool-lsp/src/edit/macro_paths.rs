//! Rust mentions a rename server leaves behind: paths to the renamed item
//! inside `macro_rules!` bodies (`$crate::max_level()`), which
//! rust-analyzer does not resolve where the macro is defined, so its
//! rename skips them and the build breaks wherever the macro is used.
//!
//! A path is renamed here when it names the item without doubt: `$crate::`
//! or `crate::` followed by the module path of the item's file and the
//! name, in a file of the same Cargo package, for an item declared at the
//! top level of its file (not in an inline `mod`, an `impl` or a block).
//! Every other path in a macro body that ends in the name (`$crate::` with
//! another module, perhaps a re-export; `super::`, `self::`, `Self::`) may
//! be the item too: the rename is refused, naming them, unless the call
//! says `partial`. Mentions outside macro bodies are the server's to judge.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// The Cargo package of `file` (the nearest folder above it, up to `root`,
/// with a `Cargo.toml` that has a `[package]`) and the module path of a
/// top-level item in it, when the file is a library or binary module under `src/`:
/// `src/lib.rs` and `src/main.rs` are the crate root (`[]`),
/// `src/a/mod.rs` and `src/a.rs` are `["a"]`, `src/a/b.rs` is
/// `["a", "b"]`. `None` for files elsewhere (tests, examples, `src/bin`).
pub(crate) fn module_of(file: &Path, root: &Path) -> Option<(PathBuf, Vec<String>)> {
    let package = tool_core::cargo::package_root(file, root)?;
    let rel = file.strip_prefix(package.join("src")).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let stem = last.strip_suffix(".rs")?;
    match (parts.is_empty(), stem) {
        (true, "lib" | "main") => {}
        (false, "mod") => {}
        _ => parts.push(stem.to_string()),
    }
    parts
        .iter()
        .all(|p| is_identifier(p))
        .then_some((package, parts))
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn continues_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Whether the line `line` (0-based) of `text` declares an item at the top
/// level of the file: it starts in column 0 (items of an `impl`, an inline
/// `mod` or a function body are indented in rustfmt'd code).
pub(crate) fn declared_at_top_level(text: &str, line: u32) -> bool {
    text.lines()
        .nth(line as usize)
        .is_some_and(|l| !l.starts_with(char::is_whitespace) && !l.is_empty())
}

/// The byte ranges of the bodies of `macro_rules!` definitions in `text`:
/// from the delimiter after the macro's name to its match, skipping string
/// and character literals and comments.
pub(crate) fn macro_bodies(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("macro_rules!") {
        let at = from + found + "macro_rules!".len();
        from = at;
        let Some(open) = text[at..].find(['{', '(', '[']).map(|i| at + i) else {
            break;
        };
        // Only the macro's name may stand between `macro_rules!` and the
        // body.
        if !text[at..open]
            .trim()
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        if let Some(close) = matching_close(bytes, open) {
            out.push(open..close + 1);
            from = close + 1;
        }
    }
    out
}

/// The offset of the delimiter that closes the one at `open`, counting
/// every bracket kind and skipping literals and comments.
fn matching_close(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            // A character literal ('{'), not a lifetime ('a).
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                while i + 1 < bytes.len() && bytes[i + 1] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A path in a macro body whose last segment is the name looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MacroPath {
    /// The name's byte range in the text.
    pub(crate) name: Range<usize>,
    /// The path as written before the name (`$crate::`, `super::a::`).
    pub(crate) prefix: String,
    /// 1-based line.
    pub(crate) line: usize,
}

impl MacroPath {
    /// Whether the path is `$crate::` or `crate::`, then `module`.
    pub(crate) fn names_module(&self, module: &[String]) -> bool {
        let segments: Vec<&str> = self
            .prefix
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        matches!(segments.first(), Some(&"$crate" | &"crate"))
            && segments[1..]
                .iter()
                .copied()
                .eq(module.iter().map(String::as_str))
    }
}

/// The paths in `text`'s macro bodies that end in `name` and are
/// qualified (`a::name`, `$crate::name`); a bare `name` is not one.
pub(crate) fn paths_to(text: &str, name: &str) -> Vec<MacroPath> {
    let mut out = Vec::new();
    for body in macro_bodies(text) {
        let inside = &text[body.clone()];
        for (at, _) in inside.match_indices(name) {
            let start = body.start + at;
            let end = start + name.len();
            let before = text[..start].chars().next_back();
            let after = text[end..].chars().next();
            if before.is_some_and(continues_word) || after.is_some_and(continues_word) {
                continue;
            }
            let prefix = path_before(&text[body.start..start]);
            if prefix.is_empty() {
                continue;
            }
            out.push(MacroPath {
                name: start..end,
                line: text[..start].matches('\n').count() + 1,
                prefix,
            });
        }
    }
    out
}

/// The path segments (`$crate :: a ::`) that end right before the end of
/// `text`, as written; empty when `text` does not end in `::`.
fn path_before(text: &str) -> String {
    let mut start = text.len();
    let mut rest = text;
    loop {
        let trimmed = rest.trim_end();
        let Some(sep) = trimmed.strip_suffix("::") else {
            break;
        };
        let segment_end = sep.trim_end();
        let segment_start = segment_end
            .char_indices()
            .rev()
            .take_while(|(_, c)| continues_word(*c))
            .last()
            .map_or(segment_end.len(), |(i, _)| i);
        let segment = &segment_end[segment_start..];
        start = trimmed.len() - 2;
        if segment.is_empty() {
            // A leading `::` (an extern path): kept as written.
            break;
        }
        start = segment_start;
        rest = &segment_end[..segment_start];
        // A segment with a `$` other than `$crate` is a macro variable:
        // the path goes no further back.
        if segment.contains('$') {
            break;
        }
    }
    text[start..].split_whitespace().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_follow_the_files_under_src() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"m\"\n").unwrap();
        let cases = [
            ("src/lib.rs", Some(vec![])),
            ("src/main.rs", Some(vec![])),
            ("src/a.rs", Some(vec!["a"])),
            ("src/a/mod.rs", Some(vec!["a"])),
            ("src/a/b.rs", Some(vec!["a", "b"])),
            ("src/bin/x.rs", None),
            ("tests/it.rs", None),
        ];
        for (file, want) in cases {
            let got = module_of(&root.join(file), root).map(|(p, m)| {
                assert_eq!(p, root);
                m
            });
            let want = want.map(|w| w.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(got, want, "{file}");
        }
    }

    #[test]
    fn paths_in_macro_bodies_are_found_with_their_prefix() {
        let text = "pub fn level() {}\n\
                    fn f() { crate::level(); }\n\
                    macro_rules! log {\n    \
                        ($l:expr) => {{ if $l <= $crate::level() && $crate :: imp :: level() { \"}\" } }};\n\
                    }\n\
                    macro_rules! other { () => { super::level(); level(); Self::level_x(); '}'; } }\n";
        let got: Vec<(String, usize, &str)> = paths_to(text, "level")
            .into_iter()
            .map(|p| (p.prefix, p.line, &text[p.name]))
            .collect();
        assert_eq!(
            got,
            [
                ("$crate::".to_string(), 4, "level"),
                ("$crate::imp::".to_string(), 4, "level"),
                ("super::".to_string(), 6, "level"),
            ]
        );
        let paths = paths_to(text, "level");
        assert!(paths[0].names_module(&[]));
        assert!(!paths[1].names_module(&[]));
        assert!(paths[1].names_module(&["imp".to_string()]));
        assert!(!paths[2].names_module(&[]));
    }

    #[test]
    fn a_macro_variable_ends_the_path() {
        assert_eq!(path_before("$x::"), "$x::");
        assert_eq!(path_before("a.$x::b::"), "$x::b::");
        assert_eq!(path_before(" ::std::"), "::std::");
        assert_eq!(path_before("foo("), "");
    }

    #[test]
    fn top_level_declarations_start_in_the_first_column() {
        let text = "pub fn a() {}\nimpl X {\n    pub fn b() {}\n}\n";
        assert!(declared_at_top_level(text, 0));
        assert!(!declared_at_top_level(text, 2));
        assert!(!declared_at_top_level(text, 9));
    }
}
