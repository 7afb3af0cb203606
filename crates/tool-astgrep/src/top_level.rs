//! Where a Python file's top-level statements begin, found by a lexical scan
//! with no parse, so that a search parses only the statements holding the
//! pattern's literal.
//!
//! Parsing is most of a search's time, and in a large module the literal
//! usually sits in a few of its top-level classes and functions. A run of
//! whole top-level statements, cut at the start of a line, parses on its own
//! into the same nodes it has in the file: Python's top level is a list of
//! statements, and nothing in one changes how the next is read.
//!
//! A line begins a top-level statement when it is not indented, not inside a
//! string, bracket or backslash continuation, not blank or a comment, not a
//! clause that continues the statement before it (`else`, `elif`, `except`,
//! `finally`), and not the decorated line after a decorator. The scan knows
//! every string form (prefixes, triple quotes, escapes, and f-strings whose
//! replacement fields hold strings of their own); where it is unsure (a lone
//! carriage return, a string or bracket still open at the end of the file) it
//! gives up and the whole file is parsed. The search also parses the whole
//! file when a part does not parse cleanly, so a cut in the wrong place can
//! cost time but never a match.
//!
//! A large class or function is cut finer the same way: the statements of
//! its indented body begin on lines at the body's indentation, and a run of
//! them parses, after the compound statement's header (`class C(B):`, its
//! decorators), into the nodes they have in the file ([`body_starts`]).

use std::ops::Range;

/// Offsets of the lines that begin a top-level statement, ascending, the
/// first always 0 (comments and blank lines before a statement go with it);
/// `None` when the scan cannot tell.
pub(crate) fn statement_starts(source: &str) -> Option<Vec<usize>> {
    let b = source.as_bytes();
    if memchr::memchr_iter(b'\r', b).any(|i| b.get(i + 1) != Some(&b'\n')) {
        return None;
    }
    starts_at_indent(b, b"")
}

/// Where the statements of the indented body of the one compound statement
/// `stmt` (a range of `source` that [`statement_starts`] or this gave)
/// begin, as offsets in `source`: the first is `stmt.start` (its header),
/// the others begin lines at the body's indentation. `None` when the body
/// is not on lines of its own, a clause (`else:`, `except:`) or another
/// line left of the body follows it, or the scan cannot tell.
pub(crate) fn body_starts(source: &str, stmt: std::ops::Range<usize>) -> Option<Vec<usize>> {
    let b = &source.as_bytes()[stmt.clone()];
    if memchr::memchr_iter(b'\r', b).any(|i| b.get(i + 1) != Some(&b'\n')) {
        return None;
    }
    // The first indented line that is not blank or a comment. (If it is a
    // line inside the header's brackets, the cuts are made at its
    // indentation, or none are.)
    let indent = b
        .split(|&c| c == b'\n')
        .skip(1)
        .find(|line| matches!(line.first(), Some(b' ' | b'\t')) && !blank_or_comment(line))?;
    let width = indent
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t'))
        .unwrap_or(indent.len());
    if width == 0 {
        return None;
    }
    let starts = starts_at_indent(b, &indent[..width])?;
    (starts.len() > 1).then(|| starts.iter().map(|s| s + stmt.start).collect())
}

/// Whether a line (up to its newline) holds only blanks or a comment.
fn blank_or_comment(line: &[u8]) -> bool {
    line.iter()
        .find(|c| !matches!(c, b' ' | b'\t' | b'\x0c'))
        .is_none_or(|c| matches!(c, b'\n' | b'\r' | b'#'))
}

/// The statement starts of `b` at `indent` (empty: the top level; else the
/// body of the compound statement `b` holds, whose unindented header lines
/// come first and no other unindented line may follow).
fn starts_at_indent(b: &[u8], indent: &[u8]) -> Option<Vec<usize>> {
    let mut starts = vec![0];
    // What the scan is inside: the innermost last. Empty at the top level.
    let mut stack: Vec<Frame> = Vec::new();
    let mut brackets = 0usize;
    let mut continued = false;
    let mut after_decorator = false;
    let mut i = 0;
    while i < b.len() {
        // At the start of a line.
        if stack.is_empty() && brackets == 0 && !continued {
            if let Some(rest) = b[i..].strip_prefix(indent) {
                match rest.first() {
                    None | Some(b' ' | b'\t' | b'\x0c' | b'\r' | b'\n' | b'#') => {}
                    Some(&c) if !is_clause(rest) => {
                        if !after_decorator && i > 0 {
                            starts.push(i);
                        }
                        after_decorator = c == b'@';
                    }
                    Some(_) => {}
                }
            } else if !blank_or_comment(&b[i..]) && starts.len() > 1 {
                // Left of the body, after it began: a clause, or not one
                // statement.
                return None;
            }
        }
        continued = false;
        // The rest of the line, and any lines a string or bracket spans.
        while i < b.len() {
            let c = b[i];
            match stack.last_mut() {
                Some(Frame::Str(s)) => {
                    let s = *s;
                    if c == b'\\' {
                        i += 2;
                        continue;
                    }
                    if c == s.quote && (!s.triple || b[i..].starts_with(&[c, c, c])) {
                        stack.pop();
                        i += if s.triple { 3 } else { 1 };
                        continue;
                    }
                    if c == b'\n' && !s.triple {
                        // An unterminated one-line string: Python refuses it.
                        return None;
                    }
                    if s.fstring && c == b'{' {
                        if b.get(i + 1) == Some(&b'{') {
                            i += 2;
                            continue;
                        }
                        stack.push(Frame::Field { brackets: 0 });
                        i += 1;
                        continue;
                    }
                    i += 1;
                    // To the next byte that can end or escape the string.
                    while i < b.len() && !matches!(b[i], b'\\' | b'\n' | b'{') && b[i] != s.quote {
                        i += 1;
                    }
                }
                Some(Frame::Field { brackets: depth }) => {
                    match c {
                        b'(' | b'[' | b'{' => *depth += 1,
                        b')' | b']' => *depth = depth.checked_sub(1)?,
                        b'}' if *depth == 0 => {
                            stack.pop();
                        }
                        b'}' => *depth -= 1,
                        // A format spec: text, with fields of its own.
                        b':' if *depth == 0 => {
                            let last = stack.len() - 1;
                            stack[last] = Frame::Spec;
                        }
                        b'#' => return None,
                        b'\'' | b'"' => {
                            i = open_string(b, i, &mut stack);
                            continue;
                        }
                        _ => {}
                    }
                    i += 1;
                }
                Some(Frame::Spec) => {
                    match c {
                        b'{' => stack.push(Frame::Field { brackets: 0 }),
                        b'}' => {
                            stack.pop();
                        }
                        _ => {}
                    }
                    i += 1;
                }
                None => match c {
                    b'\n' => {
                        i += 1;
                        break;
                    }
                    b'#' => {
                        i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
                    }
                    b'\\' if b.get(i + 1) == Some(&b'\n') => {
                        continued = true;
                        i += 2;
                        break;
                    }
                    b'\\' if b[i + 1..].starts_with(b"\r\n") => {
                        continued = true;
                        i += 3;
                        break;
                    }
                    b'(' | b'[' | b'{' => {
                        brackets += 1;
                        i += 1;
                    }
                    b')' | b']' | b'}' => {
                        brackets = brackets.checked_sub(1)?;
                        i += 1;
                    }
                    b'\'' | b'"' => i = open_string(b, i, &mut stack),
                    _ => {
                        // To the next byte the scan looks at.
                        i += 1;
                        while i < b.len() && !CODE_SPECIAL[usize::from(b[i])] {
                            i += 1;
                        }
                    }
                },
            }
        }
    }
    (stack.is_empty() && brackets == 0 && !continued).then_some(starts)
}

/// The runs of whole statements to parse so that every occurrence of a
/// literal (`sites`: ascending start offsets, `len` bytes long) lies inside
/// one, adjacent runs joined.
pub(crate) fn runs_holding(
    starts: &[usize],
    end: usize,
    sites: &[usize],
    len: usize,
) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    for &site in sites {
        // The statement the literal begins in, and the one it ends in.
        let first = starts.partition_point(|&s| s <= site) - 1;
        let last = starts.partition_point(|&s| s < site + len).max(first + 1);
        let run = starts[first]..starts.get(last).copied().unwrap_or(end);
        match runs.last_mut() {
            Some(prev) if run.start <= prev.end => prev.end = prev.end.max(run.end),
            _ => runs.push(run),
        }
    }
    runs
}

/// The bytes of code outside strings that the scan acts on.
const CODE_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let special = b"\n#\\([{)]}'\"";
    let mut k = 0;
    while k < special.len() {
        t[special[k] as usize] = true;
        k += 1;
    }
    t
};

#[derive(Clone, Copy)]
enum Frame {
    Str(StringKind),
    /// An f-string's replacement field, with its open brackets.
    Field {
        brackets: usize,
    },
    /// The format spec after a field's `:`.
    Spec,
}

#[derive(Clone, Copy)]
struct StringKind {
    /// `'` or `"`.
    quote: u8,
    triple: bool,
    fstring: bool,
}

/// Open the string whose quote is at `i`; returns where its text begins.
fn open_string(b: &[u8], i: usize, stack: &mut Vec<Frame>) -> usize {
    let c = b[i];
    let triple = b[i..].starts_with(&[c, c, c]);
    // The prefix letters right before the quote (`rb`, `f`, `Rf`, …).
    let prefix_start = b[..i]
        .iter()
        .rposition(|x| !x.is_ascii_alphabetic())
        .map_or(0, |p| p + 1);
    let prefix = &b[prefix_start..i];
    // Only r, b, u and f make a prefix: `if"{"` is the keyword and a plain
    // string.
    let fstring = prefix.len() <= 2
        && prefix.iter().all(|x| b"rRbBuUfF".contains(x))
        && prefix.iter().any(|x| x.eq_ignore_ascii_case(&b'f'));
    stack.push(Frame::Str(StringKind {
        quote: c,
        triple,
        fstring,
    }));
    i + if triple { 3 } else { 1 }
}

/// Whether a line begins with a clause that continues the statement above.
fn is_clause(line: &[u8]) -> bool {
    ["else", "elif", "except", "finally"].iter().any(|k| {
        line.starts_with(k.as_bytes())
            && line
                .get(k.len())
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 1-based lines where statements begin, as the scan sees them.
    fn lines(source: &str) -> Option<Vec<usize>> {
        let starts = statement_starts(source)?;
        Some(
            starts
                .iter()
                .map(|&s| source[..s].matches('\n').count() + 1)
                .collect(),
        )
    }

    #[test]
    fn statements_begin_where_python_would_say() {
        let cases: &[(&str, &str, Option<&[usize]>)] = &[
            ("plain", "a = 1\nb = 2\n\nc = 3\n", Some(&[1, 2, 4])),
            (
                "indented bodies and comments",
                "# head\ndef f():\n    return 1\n# note\n\nclass C:\n    x = 1\n",
                Some(&[1, 2, 6]),
            ),
            (
                "clauses go with their statement",
                "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\ntry:\n    x\nexcept E:\n    y\nfinally:\n    z\nelsewhere = 1\n",
                Some(&[1, 7, 13]),
            ),
            (
                "decorators go with what they decorate",
                "@a\n@b(\nc)\ndef f(): pass\n@d\nclass C: pass\nx = 1\n",
                Some(&[1, 5, 7]),
            ),
            (
                "brackets and continuations",
                "x = (\n1,\n)\ny = 1 + \\\n2\nz = [\n# ]\n]\nw = 1\n",
                Some(&[1, 4, 6, 9]),
            ),
            (
                "triple-quoted text holding code",
                "s = \"\"\"\ndef g():\n    isinstance(a, b)\n\"\"\"\nt = '''it''s\nclass D: pass'''\nu = 1\n",
                Some(&[1, 5, 7]),
            ),
            (
                "escapes and prefixes",
                "a = 'x\\'y'\nb = r\"\\\"\"\nc = rb'''\n'''\nd = 1\n",
                Some(&[1, 2, 3, 5]),
            ),
            (
                "f-strings with strings, brackets and specs in their fields",
                "a = f\"{x[\"k\"]} {{\"\nb = f'{y:{w}}' f'''\n{ {1: 2}[1] }'''\nc = F\"{z!r:>{n}}\"\nd = 1\n",
                Some(&[1, 2, 4, 5]),
            ),
            ("a name that only starts like a clause", "elsewhere()\nexcepted = 1\n", Some(&[1, 2])),
            (
                "a keyword right before a string is no prefix",
                "if\"{\" in s: pass\nx = 1\n",
                Some(&[1, 2]),
            ),
            ("CRLF", "a = 1\r\nb = (\r\n1)\r\nc = 2\r\n", Some(&[1, 2, 4])),
            ("a lone carriage return", "a = 1\rb = 2\n", None),
            ("an unterminated string", "a = 'x\nb = 1\n", None),
            ("an unterminated triple string", "a = '''x\nb = 1\n", None),
            ("an unclosed bracket", "a = (1,\nb = 1\n", None),
            ("a closing bracket too many", "a = 1)\nb = 1\n", None),
        ];
        let mut wrong = Vec::new();
        for (name, source, want) in cases {
            let got = lines(source);
            if got.as_deref() != *want {
                wrong.push(format!("{name}: got {got:?}, want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn bodies_are_cut_at_their_statements_or_not_at_all() {
        let cases: &[(&str, &str, Option<&[usize]>)] = &[
            (
                "a class: its header, then each member",
                "class C(B):\n    \"doc\"\n    x = 1\n\n    def f(self):\n        return 1\n",
                Some(&[1, 2, 3, 5]),
            ),
            (
                "decorators go with the header and with their member",
                "@d(\n  a)\nclass C:\n    @property\n    def f(self):\n        pass\n    y = 2\n",
                None,
            ),
            (
                "a decorated class",
                "@dataclass\nclass C:\n    @property\n    def f(self):\n        pass\n    y = 2\n",
                Some(&[1, 3, 6]),
            ),
            (
                "a comment left of the body, a clause inside it",
                "def f(a, b):\n# note\n    if a:\n        pass\n    else:\n        pass\n    return b\n",
                Some(&[1, 3, 7]),
            ),
            (
                "a header over lines indented deeper than the body: not cut",
                "def f(a,\n      b):\n    if a:\n        pass\n    return b\n",
                None,
            ),
            (
                "a clause after the body",
                "if a:\n    x = 1\nelse:\n    x = 2\n",
                None,
            ),
            ("a body on the header's line", "class C: pass\n", None),
            (
                "strings and brackets in the body",
                "def f():\n    s = '''\nx = 1\n'''\n    t = (\n1)\n    return s\n",
                Some(&[1, 2, 5, 7]),
            ),
        ];
        let mut wrong = Vec::new();
        for (name, source, want) in cases {
            let got = body_starts(source, 0..source.len()).map(|starts| {
                starts
                    .iter()
                    .map(|&s| source[..s].matches('\n').count() + 1)
                    .collect::<Vec<_>>()
            });
            if got.as_deref() != *want {
                wrong.push(format!("{name}: got {got:?}, want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn runs_cover_each_occurrence_and_join_when_adjacent() {
        // Statements at 0, 10, 20, 30; the file ends at 40.
        let starts = [0, 10, 20, 30];
        let runs = |sites: &[usize], len| runs_holding(&starts, 40, sites, len);
        assert_eq!(runs(&[12], 3), vec![10..20]);
        assert_eq!(runs(&[12, 15, 33], 3), vec![10..20, 30..40]);
        assert_eq!(runs(&[12, 22], 3), vec![10..30]);
        // An occurrence across a start takes both statements.
        assert_eq!(runs(&[8], 4), vec![0..20]);
        assert_eq!(runs(&[0], 1), vec![0..10]);
    }
}
