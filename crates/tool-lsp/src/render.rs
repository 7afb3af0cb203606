//! How answers read for a model: relative paths, 1-based lines, one line of
//! source per location, sorted by path then position, capped lists that say
//! how many more there were.

use crate::client::Answer;
use lsp_types::{GotoDefinitionResponse, Hover, HoverContents, MarkedString};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use tool_core::Workspace;

/// A location a server returned: file and 0-based start line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Loc {
    pub shown: String,
    pub path: PathBuf,
    pub line: u32,
    pub character: u32,
}

/// Show a path relative to the root, or absolute (marked) outside it.
pub(crate) fn show_path(ws: &Workspace, p: &Path) -> String {
    if ws.contains(p) {
        ws.relative(p)
    } else {
        p.display().to_string()
    }
}

/// Locations of a definition-like answer (`Location`, `Location[]` or
/// `LocationLink[]`, a link at its target's name), files only, sorted and
/// without repeats.
pub(crate) fn locations(ws: &Workspace, answer: Option<&GotoDefinitionResponse>) -> Vec<Loc> {
    let items: Vec<(&lsp_types::Url, &lsp_types::Range)> = match answer {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => vec![(&l.uri, &l.range)],
        Some(GotoDefinitionResponse::Array(ls)) => ls.iter().map(|l| (&l.uri, &l.range)).collect(),
        Some(GotoDefinitionResponse::Link(ls)) => ls
            .iter()
            .map(|l| (&l.target_uri, &l.target_selection_range))
            .collect(),
    };
    let mut out = BTreeSet::new();
    for (uri, range) in items {
        let Ok(path) = uri.to_file_path() else {
            continue;
        };
        out.insert(Loc {
            shown: show_path(ws, &path),
            path,
            line: range.start.line,
            character: range.start.character,
        });
    }
    out.into_iter().collect()
}

/// Reads each file once to quote its lines.
#[derive(Default)]
pub(crate) struct SourceLines {
    files: HashMap<PathBuf, Option<Vec<String>>>,
}

impl SourceLines {
    pub(crate) fn line(&mut self, path: &Path, line: u32) -> Option<String> {
        let lines = self.files.entry(path.to_path_buf()).or_insert_with(|| {
            // Possibly outside the workspace (a library source the server
            // pointed at): read by name, but only a regular file, bounded.
            tool_core::fs::read_own_file(path, crate::client::MAX_DOCUMENT_BYTES)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .map(|t| {
                    crate::position::lines(&t)
                        .into_iter()
                        .map(String::from)
                        .collect()
                })
        });
        lines
            .as_ref()?
            .get(line as usize)
            .map(|l| tool_core::format::cap_chars(l.trim(), 160).into_owned())
    }
}

/// `path:line    source` per location, capped, each line ending with its
/// suffix where one is given (`(in Scope/name)`, `(class Speaker)`).
pub(crate) fn render_locations_with(
    locs: &[Loc],
    suffixes: &[Option<String>],
    cap: usize,
    narrow: &str,
) -> Vec<String> {
    let mut src = SourceLines::default();
    let width = locs
        .iter()
        .take(cap)
        .map(|l| l.shown.len() + digits(l.line + 1) + 1)
        // A long library path outside the workspace does not pad every row.
        .filter(|w| *w <= MAX_LOCATION_WIDTH)
        .max()
        .unwrap_or(0);
    let mut out: Vec<String> = locs
        .iter()
        .take(cap)
        .enumerate()
        .map(|(i, l)| {
            let head = format!("{}:{}", l.shown, l.line + 1);
            let mut row = match src.line(&l.path, l.line) {
                Some(text) if !text.is_empty() => format!("{head:<width$}    {text}"),
                _ => head,
            };
            if let Some(Some(suffix)) = suffixes.get(i) {
                row.push_str("  ");
                row.push_str(suffix);
            }
            row
        })
        .collect();
    if locs.len() > cap {
        out.push(tool_core::format::capped_note(cap, locs.len(), narrow));
    }
    out
}

/// Widest `path:line` the other rows are padded to.
const MAX_LOCATION_WIDTH: usize = 60;

fn digits(n: u32) -> usize {
    n.to_string().len()
}

pub(crate) fn files_in(locs: &[Loc]) -> usize {
    locs.iter().map(|l| &l.path).collect::<BTreeSet<_>>().len()
}

/// A hover answer as plain text: code fences dropped, their code kept.
pub(crate) fn hover_text(answer: &Answer<Option<Hover>>) -> String {
    let raw = match answer {
        Answer::Typed(None) => String::new(),
        Answer::Typed(Some(hover)) => hover_contents(&hover.contents),
        Answer::Raw(v) => raw_hover_contents(v.get("contents").unwrap_or(v)),
    };
    plain_text(&raw)
}

/// Hover contents as sent: each piece's text, pieces apart by a blank line.
fn hover_contents(contents: &HoverContents) -> String {
    fn piece(m: &MarkedString) -> &str {
        match m {
            MarkedString::String(s) => s,
            MarkedString::LanguageString(l) => &l.value,
        }
    }
    match contents {
        HoverContents::Scalar(m) => piece(m).to_string(),
        HoverContents::Array(a) => a.iter().map(piece).collect::<Vec<_>>().join("\n\n"),
        HoverContents::Markup(m) => m.value.clone(),
    }
}

/// [`hover_contents`] read from JSON lsp-types does not decode (an object
/// with a `value` but no `kind` or `language`, a list mixing shapes): the
/// strings, and the `value` of each object.
pub(crate) fn raw_hover_contents(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(raw_hover_contents)
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Object(o) => o
            .get("value")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    }
}

/// Markdown as plain text: code fences dropped (their code kept), rules as
/// blank lines, runs of blank lines as one.
pub(crate) fn plain_text(raw: &str) -> String {
    let mut out = Vec::new();
    for line in raw.lines() {
        let t = line.trim_end();
        if t.trim_start().starts_with("```") {
            continue;
        }
        if t.trim() == "---" || t.trim() == "___" {
            out.push(String::new());
            continue;
        }
        out.push(t.replace("&nbsp;", " ").replace("\\_", "_"));
    }
    // Collapse runs of blank lines.
    let mut text = String::new();
    let mut blank = false;
    for l in out {
        if l.trim().is_empty() {
            blank = true;
            continue;
        }
        if blank && !text.is_empty() {
            text.push('\n');
        }
        blank = false;
        text.push_str(&l);
        text.push('\n');
    }
    text.trim_end().to_string()
}

/// The name of a typed symbol kind, as [`kind_name`] names its number.
pub(crate) fn symbol_kind_name(kind: lsp_types::SymbolKind) -> &'static str {
    kind_name(symbol_kind_number(kind))
}

/// A symbol kind's LSP number (lsp-types keeps it private; it serializes
/// as the bare number).
pub(crate) fn symbol_kind_number(kind: lsp_types::SymbolKind) -> Option<u64> {
    serde_json::to_value(kind).ok()?.as_u64()
}

pub(crate) fn kind_name(kind: Option<u64>) -> &'static str {
    let Some(k) = kind else { return "symbol" };
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
        "type parameter",
    ];
    // SymbolKind numbers start at 1 (File).
    (k as usize)
        .checked_sub(1)
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("symbol")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::file_uri;
    use serde_json::json;

    fn hover(answer: Value) -> String {
        hover_text(&Answer::decode("textDocument/hover", answer))
    }

    #[test]
    fn hover_markdown_becomes_plain_text() {
        let v = json!({"contents": {"kind": "markdown",
            "value": "```python\ndef greet(name: str) -> str\n```\n---\nSay hello to \\_name\\_.\n\n\n\nMore."}});
        assert_eq!(
            hover(v),
            "def greet(name: str) -> str\n\nSay hello to _name_.\n\nMore."
        );
        let v = json!({"contents": [{"language": "c", "value": "int f(void)"}, "doc"]});
        assert_eq!(hover(v), "int f(void)\n\ndoc");
    }

    #[test]
    fn hover_contents_of_every_shape_read_as_before_they_were_typed() {
        let shapes = [
            // MarkedString: a string, a language string.
            (json!({"contents": "plain"}), true, "plain"),
            (
                json!({"contents": {"language": "go", "value": "func F()"}}),
                true,
                "func F()",
            ),
            // A list of them; MarkupContent with a range.
            (
                json!({"contents": ["a", {"language": "rust", "value": "fn b()"}]}),
                true,
                "a\n\nfn b()",
            ),
            (
                json!({"contents": {"kind": "plaintext", "value": "x: int"},
                "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}}}),
                true,
                "x: int",
            ),
            (Value::Null, true, ""),
            // Shapes lsp-types rejects, read raw: an object with only a
            // value, no `contents` at all, an unknown markup kind.
            (
                json!({"contents": {"value": "only value"}}),
                false,
                "only value",
            ),
            (json!({"value": "no contents"}), false, "no contents"),
            (
                json!({"contents": {"kind": "html", "value": "<b>"}}),
                false,
                "<b>",
            ),
            (
                json!({"contents": [{"value": "v"}, "s", 3]}),
                false,
                "v\n\ns",
            ),
        ];
        for (answer, typed, text) in shapes {
            let decoded: Answer<Option<Hover>> =
                Answer::decode("textDocument/hover", answer.clone());
            assert_eq!(matches!(decoded, Answer::Typed(_)), typed, "{answer}");
            assert_eq!(hover_text(&decoded), text, "{answer}");
            // The raw reader, which read every answer before, agrees.
            let raw = raw_hover_contents(answer.get("contents").unwrap_or(&answer));
            assert_eq!(plain_text(&raw), text, "{answer}");
        }
    }

    #[test]
    fn definition_answers_of_every_shape_become_locations() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let root = ws.root().to_path_buf();
        let uri = |name: &str| file_uri(&root.join(name));
        let range = |line: u32| json!({"start": {"line": line, "character": 4}, "end": {"line": line, "character": 9}});
        let read = |answer: Value| -> Vec<(String, u32, u32)> {
            let answer: Option<GotoDefinitionResponse> = serde_json::from_value(answer).unwrap();
            locations(&ws, answer.as_ref())
                .into_iter()
                .map(|l| (l.shown, l.line, l.character))
                .collect()
        };
        let a = |line| ("a.py".to_string(), line, 4);
        // null, one Location, a list with a repeat, links (at the name).
        assert_eq!(read(Value::Null), vec![]);
        assert_eq!(
            read(json!({"uri": uri("a.py"), "range": range(3)})),
            vec![a(3)]
        );
        assert_eq!(
            read(json!([
                {"uri": uri("a.py"), "range": range(7)},
                {"uri": uri("a.py"), "range": range(3)},
                {"uri": uri("a.py"), "range": range(7)},
                {"uri": "untitled:Untitled-1", "range": range(1)},
            ])),
            vec![a(3), a(7)]
        );
        assert_eq!(
            read(json!([{"targetUri": uri("a.py"), "targetRange": range(1),
                "targetSelectionRange": range(2)}])),
            vec![a(2)]
        );
        assert_eq!(read(json!([])), vec![]);
    }
}
