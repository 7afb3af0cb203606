//! Positions the model gives (`line` + `symbol`) and positions a server
//! speaks (0-based line, column in the negotiated encoding).
//!
//! The model never gives a column: a guessed column resolves to another
//! symbol on the same line and returns an answer that looks right and is
//! about something else. So a symbol is found on its line, and an ambiguous
//! or missing one is an error that shows the model what is there.

use tool_core::ToolError;

/// How a server counts columns (LSP `positionEncoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl PositionEncoding {
    pub fn from_lsp(kind: &str) -> Self {
        match kind {
            "utf-8" => PositionEncoding::Utf8,
            "utf-32" => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }

    /// The server column of byte offset `byte` in `line`.
    pub fn column_of(self, line: &str, byte: usize) -> u32 {
        let byte = floor_boundary(line, byte.min(line.len()));
        let prefix = &line[..byte];
        (match self {
            PositionEncoding::Utf8 => prefix.len(),
            PositionEncoding::Utf16 => prefix.encode_utf16().count(),
            PositionEncoding::Utf32 => prefix.chars().count(),
        }) as u32
    }

    /// The byte offset in `line` of server column `col` (clamped to the line).
    pub fn byte_of(self, line: &str, col: u32) -> usize {
        let col = col as usize;
        match self {
            PositionEncoding::Utf8 => floor_boundary(line, col.min(line.len())),
            PositionEncoding::Utf16 => {
                let mut units = 0;
                for (i, c) in line.char_indices() {
                    if units >= col {
                        return i;
                    }
                    units += c.len_utf16();
                }
                line.len()
            }
            PositionEncoding::Utf32 => line.char_indices().nth(col).map_or(line.len(), |(i, _)| i),
        }
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Lines of a text without their terminators (`\n` or `\r\n`).
pub fn lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// Byte offset in `text` of (0-based line, server column).
pub fn offset_of(text: &str, line: u32, col: u32, enc: PositionEncoding) -> usize {
    let mut start = 0;
    for (i, l) in text.split('\n').enumerate() {
        let content = l.strip_suffix('\r').unwrap_or(l);
        if i == line as usize {
            return start + enc.byte_of(content, col);
        }
        start += l.len() + 1;
    }
    text.len()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Every byte offset where `symbol` occurs in `line`: at identifier boundaries
/// if it occurs so at least once, else as a plain substring.
pub fn occurrences(line: &str, symbol: &str) -> Vec<usize> {
    if symbol.is_empty() {
        return Vec::new();
    }
    let all: Vec<usize> = line.match_indices(symbol).map(|(i, _)| i).collect();
    let bounded: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| {
            let before = line[..i].chars().next_back();
            let after = line[i + symbol.len()..].chars().next();
            let starts_ident = symbol.chars().next().is_some_and(is_ident);
            let ends_ident = symbol.chars().next_back().is_some_and(is_ident);
            (!starts_ident || !before.is_some_and(is_ident))
                && (!ends_ident || !after.is_some_and(is_ident))
        })
        .collect();
    if bounded.is_empty() {
        all
    } else {
        bounded
    }
}

/// The identifier that holds byte `at` of `line` (the run of identifier
/// characters around it), as a byte range.
pub fn identifier_at(line: &str, at: usize) -> std::ops::Range<usize> {
    let start = line[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = line[at..]
        .char_indices()
        .find(|(_, c)| !is_ident(*c))
        .map_or(line.len(), |(i, _)| at + i);
    start..end
}

/// Whether `symbol`, found at `spot` on `line`, is only a piece of a longer
/// identifier there (`sign` where the line has `sign_value`).
pub fn inside_longer_identifier(line: &str, spot: SymbolSpot, symbol: &str) -> bool {
    let run = identifier_at(line, spot.byte);
    let ends_in_ident = symbol.chars().next_back().is_some_and(is_ident);
    run.start < spot.byte || (ends_in_ident && run.end > spot.byte + spot.len)
}

/// The line with `[symbol]` marked at byte `at`, cut to a window around it.
fn marked(line: &str, at: usize, len: usize) -> String {
    let before: String = {
        let b = &line[..at];
        let chars: Vec<char> = b.chars().collect();
        if chars.len() > 30 {
            format!("…{}", chars[chars.len() - 30..].iter().collect::<String>())
        } else {
            b.to_string()
        }
    };
    let after: String = {
        let a = &line[at + len..];
        if a.chars().count() > 30 {
            format!("{}…", a.chars().take(30).collect::<String>())
        } else {
            a.to_string()
        }
    };
    format!("{}[{}]{}", before.trim_start(), &line[at..at + len], after)
}

/// Where a symbol was found: 0-based line and byte offset of its first
/// identifier character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolSpot {
    pub line: u32,
    pub byte: usize,
    pub len: usize,
}

/// Find `symbol` on 1-based `line` of `text` (`shown` is the file as the
/// model names it, for messages).
pub fn locate(
    text: &str,
    shown: &str,
    line: u32,
    symbol: &str,
    occurrence: Option<u32>,
) -> Result<SymbolSpot, ToolError> {
    let all = lines(text);
    // A trailing newline leaves an empty last "line" that is not one.
    let count = if text.ends_with('\n') {
        all.len() - 1
    } else {
        all.len()
    };
    if line == 0 {
        return Err(ToolError::bad_args(
            "`line` is 1-based; the first line is 1",
        ));
    }
    if line as usize > count {
        return Err(ToolError::bad_args(format!(
            "line {line} is past the end of {shown}, which has {count} lines"
        )));
    }
    if symbol.trim().is_empty() {
        return Err(ToolError::bad_args(
            "`symbol` is empty; give the identifier on that line the question is about",
        ));
    }
    let text_line = all[line as usize - 1];
    let found = occurrences(text_line, symbol);
    if found.is_empty() {
        let lo = line.saturating_sub(3).max(1);
        let hi = (line + 3).min(count as u32);
        let near: Vec<String> = (lo..=hi)
            .filter(|&n| n != line && !occurrences(all[n as usize - 1], symbol).is_empty())
            .map(|n| format!("  {n}: {}", all[n as usize - 1].trim()))
            .collect();
        let mut msg = format!(
            "`{symbol}` does not occur on {shown}:{line}, which reads: {:?}",
            tool_core::format::cap_chars(text_line.trim(), 200)
        );
        if near.is_empty() {
            msg.push_str(&format!(
                "; it does not occur within 3 lines either ({lo}–{hi}); check the line number"
            ));
        } else {
            msg.push_str("; it occurs on nearby lines:\n");
            msg.push_str(&near.join("\n"));
            msg.push_str("\npass one of those as `line`");
        }
        return Err(ToolError::bad_args(msg));
    }
    let pick = match (found.len(), occurrence) {
        (_, Some(0)) => {
            return Err(ToolError::bad_args(
                "`occurrence` is 1-based; the first is 1",
            ))
        }
        (n, Some(k)) if k as usize > n => {
            return Err(ToolError::bad_args(format!(
                "`occurrence` {k} asked, but `{symbol}` occurs {n} times on {shown}:{line}"
            )))
        }
        (_, Some(k)) => found[k as usize - 1],
        (1, None) => found[0],
        (n, None) => {
            let list: Vec<String> = found
                .iter()
                .enumerate()
                .map(|(i, &at)| format!("  {}: {}", i + 1, marked(text_line, at, symbol.len())))
                .collect();
            let choices: Vec<String> = (1..=n).map(|k| k.to_string()).collect();
            return Err(ToolError::bad_args(format!(
                "`{symbol}` occurs {n} times on {shown}:{line}\n{}\npass \"occurrence\": {}",
                list.join("\n"),
                choices.join(" or ")
            )));
        }
    };
    // Point at the first identifier character: `.method` means `method`.
    let skip = symbol
        .char_indices()
        .find(|(_, c)| is_ident(*c))
        .map_or(0, |(i, _)| i);
    Ok(SymbolSpot {
        line: line - 1,
        byte: pick + skip,
        len: symbol.len() - skip,
    })
}

/// The 1-based lines of `after` that differ from `before` (first, last),
/// by their common leading and trailing lines.
pub fn changed_lines(before: &str, after: &str) -> (u32, u32) {
    let b: Vec<&str> = before.lines().collect();
    let a: Vec<&str> = after.lines().collect();
    let head = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let tail = b[head..]
        .iter()
        .rev()
        .zip(a[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let first = head as u32 + 1;
    let last = (a.len() - tail).max(head + 1) as u32;
    (first, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_are_found_between_common_head_and_tail() {
        assert_eq!(changed_lines("a\nb\nc\n", "a\nX\nY\nc\n"), (2, 3));
        assert_eq!(changed_lines("a\nb\n", "# 1\n# 2\na\nb\n"), (1, 2));
        assert_eq!(changed_lines("a\nb\n", "a\nb\nc\n"), (3, 3));
        // A deletion: the line where the text closed up.
        assert_eq!(changed_lines("a\nb\nc\n", "a\nc\n"), (2, 2));
    }

    #[test]
    fn columns_convert_in_every_encoding() {
        let line = "s = \"🙂漢字\" + greet(x)";
        let byte = line.find("greet").unwrap();
        assert_eq!(PositionEncoding::Utf8.column_of(line, byte), byte as u32);
        // 🙂 is 2 UTF-16 units, 漢 and 字 one each.
        assert_eq!(PositionEncoding::Utf16.column_of(line, byte), 13);
        assert_eq!(PositionEncoding::Utf32.column_of(line, byte), 12);
        for enc in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            let col = enc.column_of(line, byte);
            assert_eq!(enc.byte_of(line, col), byte, "{enc:?}");
        }
        assert_eq!(PositionEncoding::Utf16.byte_of(line, 999), line.len());
        let text = "a\r\nb 🙂 c\n";
        assert_eq!(offset_of(text, 1, 5, PositionEncoding::Utf16), 3 + 7);
    }

    #[test]
    fn symbols_match_identifier_boundaries_first() {
        assert_eq!(
            occurrences("greeting = greet(greet_all)", "greet"),
            vec![11]
        );
        assert_eq!(occurrences("greeting = 1", "greet"), vec![0]);
        assert_eq!(occurrences("a.b", ".b"), vec![1]);
        let spot = locate("x\nobj.method()\n", "f.py", 2, ".method", None).unwrap();
        assert_eq!((spot.line, spot.byte, spot.len), (1, 4, 6));
        assert_eq!(identifier_at("obj.method()", 4), 4..10);
        assert_eq!(identifier_at("def sign_value(x):", 4), 4..14);
        assert_eq!(identifier_at("x = 🙂(ab_c)", 11), 9..13);
    }

    #[test]
    fn ambiguous_and_missing_symbols_explain_themselves() {
        let text = "def f(url):\n    return g(method=1, url=url)\n\n\nz = url\n";
        let err = locate(text, "api.py", 2, "url", None)
            .unwrap_err()
            .to_string();
        expect_test::expect![[r#"
            bad arguments: `url` occurs 2 times on api.py:2
              1: return g(method=1, [url]=url)
              2: return g(method=1, url=[url])
            pass "occurrence": 1 or 2"#]]
        .assert_eq(&err);
        let ok = locate(text, "api.py", 2, "url", Some(2)).unwrap();
        assert_eq!(ok.byte, text.lines().nth(1).unwrap().rfind("url").unwrap());

        let err = locate(text, "api.py", 3, "url", None)
            .unwrap_err()
            .to_string();
        expect_test::expect![[r#"
            bad arguments: `url` does not occur on api.py:3, which reads: ""; it occurs on nearby lines:
              1: def f(url):
              2: return g(method=1, url=url)
              5: z = url
            pass one of those as `line`"#]].assert_eq(&err);

        let err = locate(text, "api.py", 9, "url", None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("past the end of api.py, which has 5 lines"),
            "{err}"
        );
        assert!(locate(text, "api.py", 0, "url", None).is_err());
        assert!(locate(text, "api.py", 2, "url", Some(3)).is_err());
    }
}
