//! Where a C file's top-level items begin, found by a lexical scan with no
//! parse, so that a search parses only the items holding the pattern's
//! literal (as [`crate::top_level`] does for Python modules).
//!
//! A C file is a list of declarations, function definitions and
//! preprocessor directives, and nothing in one changes how tree-sitter
//! reads the next (it keeps no table of type names): a run of whole items
//! parses on its own into the nodes it has in the file. An item inside an
//! `#ifdef … #endif` block has the block as its parent in the file and the
//! translation unit in its run, which a pattern cannot tell, since a
//! pattern matches a node by what it holds; a pattern that could match the
//! translation unit or a conditional block itself is searched whole.
//!
//! A line begins an item when the item before it is complete: at bracket
//! and brace depth 0, after a `;`, a closing `}` or a directive line, with
//! no other code since. The scan knows comments, string and character
//! literals (escapes included), and directives with their continuation
//! lines, whose braces it does not count (`#define BEGIN {`). It gives up
//! (the whole file is parsed) on a bracket or brace closed that was never
//! opened or open at the end, a string or comment open at the end, and a
//! lone carriage return. The search also parses the whole file when a run
//! does not parse cleanly on its own (an item cut by an `#else` branch, a
//! `}` and its `;` on two lines), so a cut in the wrong place can cost time
//! but never a match.

/// Offsets of the lines that begin a top-level item, ascending, the first
/// always 0; `None` when the scan cannot tell.
pub(crate) fn item_starts(source: &str) -> Option<Vec<usize>> {
    let b = source.as_bytes();
    if memchr::memchr_iter(b'\r', b).any(|i| b.get(i + 1) != Some(&b'\n')) {
        return None;
    }
    let mut starts = vec![0];
    let (mut braces, mut brackets) = (0usize, 0usize);
    // The item before ended and no code has come since.
    let mut complete = true;
    let mut line_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if line_start {
            line_start = false;
            let top = braces == 0 && brackets == 0;
            if top && complete && i > 0 && c != b'\n' && starts.last() != Some(&i) {
                starts.push(i);
            }
            // A directive: to its last continued line, braces uncounted.
            let first = i + b[i..]
                .iter()
                .take_while(|&&x| x == b' ' || x == b'\t')
                .count();
            if b.get(first) == Some(&b'#') {
                i = directive_end(b, first)?;
                if top {
                    complete = true;
                }
                line_start = true;
                continue;
            }
        }
        match c {
            b'\n' => line_start = true,
            b' ' | b'\t' | b'\x0c' | b'\r' => {}
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = line_comment_end(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = block_comment_end(b, i)?;
                continue;
            }
            b'"' | b'\'' => {
                complete = false;
                i = literal_end(b, i)?;
                continue;
            }
            b'{' => {
                complete = false;
                braces += 1;
            }
            b'}' => {
                braces = braces.checked_sub(1)?;
                complete = braces == 0 && brackets == 0;
            }
            b'(' | b'[' => {
                complete = false;
                brackets += 1;
            }
            b')' | b']' => {
                brackets = brackets.checked_sub(1)?;
                complete = false;
            }
            b';' => complete = braces == 0 && brackets == 0,
            _ => complete = false,
        }
        i += 1;
    }
    (braces == 0 && brackets == 0).then_some(starts)
}

/// Where the directive whose `#` is at `i` ends: after the newline that
/// ends its last line (or the end of the file). `None` when a string or
/// comment in it is still open at the end of the file.
fn directive_end(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if b[i + 1..].starts_with(b"\r\n") => i += 3,
            b'\n' => return Some(i + 1),
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_comment_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(b, i)?,
            // `#include <a'b.h>` or an apostrophe in `#error`: not a literal.
            b'"' => i = literal_end(b, i).unwrap_or(i + 1),
            _ => i += 1,
        }
    }
    Some(i)
}

/// Where the `//` comment at `i` ends: at its newline (kept for the caller),
/// past lines it continues with a backslash.
fn line_comment_end(b: &[u8], mut i: usize) -> usize {
    loop {
        let Some(n) = memchr::memchr(b'\n', &b[i..]) else {
            return b.len();
        };
        let nl = i + n;
        let before = &b[..nl];
        if before.ends_with(b"\\") || before.ends_with(b"\\\r") {
            i = nl + 1;
            continue;
        }
        return nl;
    }
}

/// Where the `/* */` comment at `i` ends (after its `*/`).
fn block_comment_end(b: &[u8], i: usize) -> Option<usize> {
    memchr::memmem::find(&b[i + 2..], b"*/").map(|n| i + 2 + n + 2)
}

/// Where the string or character literal whose quote is at `i` ends (after
/// its closing quote). `None` at a newline before it (C refuses it) or the
/// end of the file.
fn literal_end(b: &[u8], i: usize) -> Option<usize> {
    let quote = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' => return None,
            c if c == quote => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::item_starts;

    /// The items as text.
    fn items(source: &str) -> Option<Vec<&str>> {
        let starts = item_starts(source)?;
        let ends = starts.iter().skip(1).copied().chain([source.len()]);
        Some(
            starts
                .iter()
                .zip(ends)
                .map(|(&a, b)| &source[a..b])
                .collect(),
        )
    }

    #[test]
    fn functions_declarations_and_directives_are_items() {
        let src = "#include <stdio.h>\n/* a { comment */\nstatic int\nf(int a)\n{\n    if (a) {\n        return 1;\n    }\n    return '}';\n}\nint x = 1, y[] = {1, 2};\n#define BEGIN { \\\n  x\nstruct s { int a; } v;\nchar *s = \"};\";\n";
        assert_eq!(
            items(src).unwrap(),
            [
                "#include <stdio.h>\n",
                "/* a { comment */\n",
                "static int\nf(int a)\n{\n    if (a) {\n        return 1;\n    }\n    return '}';\n}\n",
                "int x = 1, y[] = {1, 2};\n",
                "#define BEGIN { \\\n  x\n",
                "struct s { int a; } v;\n",
                "char *s = \"};\";\n",
            ]
        );
    }

    #[test]
    fn directives_inside_a_function_stay_in_it() {
        let src = "int f(void) {\n#ifdef X\n  return 1;\n#endif\n  return 0;\n}\n#ifdef Y\nint g;\n#endif\n";
        assert_eq!(
            items(src).unwrap(),
            [
                "int f(void) {\n#ifdef X\n  return 1;\n#endif\n  return 0;\n}\n",
                "#ifdef Y\n",
                "int g;\n",
                "#endif\n",
            ]
        );
    }

    #[test]
    fn unbalanced_or_open_at_the_end_gives_up() {
        // Two branches of an #if each open a brace: one more opened than
        // closed.
        let src = "#if A\nint f(int a) {\n#else\nint f(void) {\n#endif\n  return 0;\n}\n";
        assert_eq!(items(src), None);
        assert_eq!(items("int f(void) { /* open"), None);
        assert_eq!(items("char *s = \"open\n;"), None);
        assert_eq!(items("int a;)\n"), None);
        assert_eq!(items("int a;\rint b;\n"), None);
    }
}
