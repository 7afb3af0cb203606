//! Leftover mentions decided by the server: each mention of the symbol
//! that a rename left or that lies beyond the references is read as code,
//! comment or string; the server is asked where each code mention is
//! defined (within the call's budget), so one that resolves to another
//! symbol is not reported, and comments and strings that name the symbol
//! are listed by line.
//!
//! Invariants:
//! - a mention is reported unless the server says it is another symbol;
//!   one it did not answer for in time is counted as undecided;
//! - the lexer is deliberately small (line and block comments, quoted
//!   strings); where it errs, a comment read as code is asked about, and a
//!   string read as code too, so nothing is dropped on its word alone.

use super::continues_word;
use crate::client::{file_uri, LspClient};
use crate::render::{locations, Loc};
use lsp_types::GotoDefinitionResponse;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tool_core::Workspace;

/// One mention: 0-based line, byte column on it, whether it is code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mention {
    pub line: u32,
    pub byte: usize,
    pub code: bool,
}

/// How a language writes comments and strings, by file extension.
struct Syntax {
    line_comment: &'static [&'static str],
    block: bool,
    quotes: &'static [char],
}

fn syntax(path: &Path) -> Syntax {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "py" | "pyi" | "rb" | "sh" => Syntax {
            line_comment: &["#"],
            block: false,
            quotes: &['"', '\''],
        },
        // A Rust `'` opens a lifetime as often as a char: not a string.
        "rs" => Syntax {
            line_comment: &["//"],
            block: true,
            quotes: &['"'],
        },
        _ => Syntax {
            line_comment: &["//"],
            block: true,
            quotes: &['"', '\'', '`'],
        },
    }
}

/// Whether each byte of `text` is code (not in a comment or a string).
fn code_mask(text: &str, syntax: &Syntax) -> Vec<bool> {
    let b = text.as_bytes();
    let mut mask = vec![true; b.len()];
    let mut i = 0;
    let mark = |mask: &mut Vec<bool>, from: usize, to: usize| {
        mask[from..to.min(b.len())]
            .iter_mut()
            .for_each(|m| *m = false);
    };
    while i < b.len() {
        let rest = &text[i..];
        if syntax.line_comment.iter().any(|c| rest.starts_with(c)) {
            let end = rest.find('\n').map_or(b.len(), |n| i + n);
            mark(&mut mask, i, end);
            i = end;
        } else if syntax.block && rest.starts_with("/*") {
            let end = rest[2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            mark(&mut mask, i, end);
            i = end;
        } else if let Some(q) = syntax.quotes.iter().find(|q| rest.starts_with(**q)) {
            // Python's triple quotes span lines; other strings end at the
            // line's end when unclosed, so one stray quote spoils one line.
            let triple: String = std::iter::repeat_n(*q, 3).collect();
            let (open, close, multiline) = if *q != '`' && rest.starts_with(&triple) {
                (3, triple.as_str(), true)
            } else {
                (1, &rest[..1], *q == '`')
            };
            let mut j = i + open;
            let end = loop {
                if j >= b.len() {
                    break b.len();
                }
                if b[j] == b'\\' && *q != '`' {
                    j += 2;
                    continue;
                }
                if b[j..].starts_with(close.as_bytes()) {
                    break j + close.len();
                }
                if b[j] == b'\n' && !multiline {
                    break j;
                }
                j += 1;
            };
            mark(&mut mask, i, end);
            i = end.max(i + 1);
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    mask
}

/// `text` with its comments and strings blanked (a space for each
/// character, line breaks kept), read by `path`'s syntax: the code alone,
/// line for line.
pub(crate) fn code_only(path: &Path, text: &str) -> String {
    let mask = code_mask(text, &syntax(path));
    text.char_indices()
        .map(|(i, c)| if c == '\n' || mask[i] { c } else { ' ' })
        .collect()
}

/// The byte offsets of `ident` at word boundaries in `line`.
fn word_offsets(line: &str, ident: &str) -> Vec<usize> {
    if ident.is_empty() {
        return Vec::new();
    }
    line.match_indices(ident)
        .map(|(at, _)| at)
        .filter(|at| {
            let before = line[..*at].chars().next_back();
            let after = line[at + ident.len()..].chars().next();
            !before.is_some_and(continues_word) && !after.is_some_and(continues_word)
        })
        .collect()
}

/// Every mention of `ident` in `text`, each read as code or not.
pub(crate) fn mentions_in(path: &Path, text: &str, ident: &str) -> Vec<Mention> {
    let mask = code_mask(text, &syntax(path));
    let mut out = Vec::new();
    let mut start = 0;
    for (n, line) in text.split('\n').enumerate() {
        for at in word_offsets(line, ident) {
            out.push(Mention {
                line: n as u32,
                byte: at,
                code: mask.get(start + at).copied().unwrap_or(true),
            });
        }
        start += line.len() + 1;
    }
    out
}

/// The mentions of `old` in `before` that a rename to `new` left in
/// `after`, found by walking each line of both side by side; `None` when
/// the two do not align line for line (the edit did more than rename).
pub(crate) fn left_by_rename(
    path: &Path,
    before: &str,
    after: &str,
    old: &str,
    new: &str,
) -> Option<Vec<Mention>> {
    let (lines_before, lines_after): (Vec<&str>, Vec<&str>) =
        (before.split('\n').collect(), after.split('\n').collect());
    if lines_before.len() != lines_after.len() {
        return None;
    }
    let all = mentions_in(path, before, old);
    let mut kept = Vec::new();
    for (n, (lb, la)) in lines_before.iter().zip(&lines_after).enumerate() {
        let here: Vec<&Mention> = all.iter().filter(|m| m.line == n as u32).collect();
        if here.is_empty() {
            continue;
        }
        if lb == la {
            kept.extend(here.into_iter().copied());
            continue;
        }
        let olds = word_offsets(lb, old);
        // `at` walks the line before, `to` the line after.
        let (mut at, mut to) = (0, 0);
        while at < lb.len() {
            let at_old = olds.contains(&at);
            if at_old && word_offsets(&la[to..], old).first() == Some(&0) {
                kept.extend(here.iter().filter(|m| m.byte == at).copied());
                at += old.len();
                to += old.len();
            } else if at_old && la[to..].starts_with(new) {
                at += old.len();
                to += new.len();
            } else {
                let ch = lb[at..].chars().next()?;
                if !la[to..].starts_with(ch) {
                    return None;
                }
                at += ch.len_utf8();
                to += ch.len_utf8();
            }
        }
    }
    Some(kept)
}

/// What the server said of the leftover mentions.
#[derive(Debug, Default)]
pub(crate) struct Decided {
    /// Comments and strings naming the symbol: file and 1-based lines.
    pub text: Vec<(PathBuf, Vec<u32>)>,
    /// Code the server resolves to the symbol itself: file and 1-based lines.
    pub same: Vec<(PathBuf, Vec<u32>)>,
    /// Code the server resolves to another symbol (not reported).
    pub others: usize,
    /// Code the server did not resolve (no answer in time, or none):
    /// file and count.
    pub undecided: Vec<(PathBuf, usize)>,
}

impl Decided {
    /// The files that still have something to report.
    pub(crate) fn reported(&self, path: &Path) -> bool {
        self.text.iter().any(|(p, _)| p == path)
            || self.same.iter().any(|(p, _)| p == path)
            || self.undecided.iter().any(|(p, _)| p == path)
    }
}

/// Ask `client` where each code mention in `files` is defined, until
/// `deadline`: one defined where the symbol is (`symbol_at`) is the symbol,
/// one defined elsewhere another symbol. `known` are the references in
/// hand: a mention among them is the symbol without asking.
pub(crate) async fn decide(
    ws: &Workspace,
    client: &LspClient,
    language_id: &str,
    files: Vec<(PathBuf, String, Vec<Mention>)>,
    symbol_at: &[Loc],
    known: &[Loc],
    deadline: Instant,
) -> Decided {
    let mut d = Decided::default();
    let is_symbol = |l: &Loc| {
        symbol_at
            .iter()
            .any(|s| s.path == l.path && s.line == l.line)
    };
    for (path, text, mentions) in files {
        let lines: Vec<&str> = text.split('\n').collect();
        let (mut words, mut same, mut undecided) = (Vec::new(), Vec::new(), 0);
        let uri = file_uri(&path);
        let mut opened = client.doc(&uri).await.is_some();
        for m in mentions {
            let line = lines.get(m.line as usize).copied().unwrap_or("");
            let character = client.encoding.column_of(line, m.byte);
            if known
                .iter()
                .any(|k| k.path == path && k.line == m.line && k.character == character)
            {
                continue;
            }
            if !m.code {
                words.push(m.line + 1);
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                undecided += 1;
                continue;
            }
            if !opened {
                opened = client.sync_file(&path, language_id).await.is_ok();
            }
            let answer = client
                .request_as::<Option<GotoDefinitionResponse>>(
                    "textDocument/definition",
                    json!({"textDocument": {"uri": uri}, "position": {"line": m.line, "character": character}}),
                    left,
                )
                .await;
            match answer.map(|a| locations(ws, a.as_ref())) {
                Ok(locs) if locs.iter().any(is_symbol) => same.push(m.line + 1),
                Ok(locs) if !locs.is_empty() => d.others += 1,
                _ => undecided += 1,
            }
        }
        if !words.is_empty() {
            d.text.push((path.clone(), words));
        }
        if !same.is_empty() {
            d.same.push((path.clone(), same));
        }
        if undecided > 0 {
            d.undecided.push((path, undecided));
        }
    }
    d
}

/// `doc.go:73, 130; mux.go:187` — lines grouped under their file.
fn by_file(ws: &Workspace, files: &[(PathBuf, Vec<u32>)]) -> String {
    files
        .iter()
        .map(|(p, lines)| {
            let mut lines = lines.clone();
            lines.dedup();
            let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
            format!("{}:{}", ws.relative(p), lines.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The report's lines: `lead` says what the mentions are left by ("not
/// renamed", "also mentioned beyond the references").
pub(crate) fn report(ws: &Workspace, symbol: &str, lead: &str, d: &Decided) -> Vec<String> {
    let mut out = Vec::new();
    if !d.same.is_empty() {
        out.push(format!(
            "{lead} — `{symbol}` in code the server resolves to this symbol: {}",
            by_file(ws, &d.same)
        ));
    }
    if !d.text.is_empty() {
        out.push(format!(
            "{lead} — `{symbol}` in comments and strings: {}",
            by_file(ws, &d.text)
        ));
    }
    if !d.undecided.is_empty() {
        let n: usize = d.undecided.iter().map(|(_, n)| n).sum();
        let files: Vec<String> = d
            .undecided
            .iter()
            .map(|(p, n)| format!("{} ({n})", ws.relative(p)))
            .collect();
        out.push(format!(
            "{lead} — {} of `{symbol}` in code the server did not resolve (may be other symbols): {}",
            tool_core::format::plural(n, "mention", "mentions"),
            files.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_strings_are_not_code() {
        let go = Path::new("a.go");
        let text =
            "// Vars docs\nx := Vars(r) // Vars\ns := \"Vars\" + `Vars\nVars`\n/* Vars */ m.Vars";
        let got: Vec<(u32, bool)> = mentions_in(go, text, "Vars")
            .iter()
            .map(|m| (m.line, m.code))
            .collect();
        assert_eq!(
            got,
            [
                (0, false),
                (1, true),
                (1, false),
                (2, false),
                (2, false),
                (3, false),
                (4, false),
                (4, true)
            ]
        );
        let py = mentions_in(Path::new("a.py"), "'''Vars\nVars'''\nVars # Vars", "Vars");
        let got: Vec<(u32, bool)> = py.iter().map(|m| (m.line, m.code)).collect();
        assert_eq!(got, [(0, false), (1, false), (2, true), (2, false)]);
    }

    #[test]
    fn a_rename_leaves_the_mentions_it_did_not_touch() {
        let p = Path::new("a.go");
        let before = "x := Vars(r) + m.Vars\n// Vars\nVars()";
        let after = "x := RouteVars(r) + m.Vars\n// RouteVars\nVars()";
        let left = left_by_rename(p, before, after, "Vars", "RouteVars").unwrap();
        let got: Vec<(u32, usize)> = left.iter().map(|m| (m.line, m.byte)).collect();
        assert_eq!(got, [(0, 17), (2, 0)]);
        assert_eq!(left_by_rename(p, "a\nb", "a", "Vars", "X"), None);
    }
}
