//! The code action params as sent, and offered actions of each shape as
//! listed.

use super::*;
use crate::client::file_uri;

#[test]
fn code_action_params_send_what_they_always_sent() {
    let path = std::path::Path::new("/w/a.py");
    let diagnostic: lsp_types::Diagnostic = serde_json::from_value(json!({
        "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 5}},
        "severity": 1, "message": "undefined name"
    }))
    .unwrap();
    let range = lsp_types::Range::new(
        lsp_types::Position::new(2, 0),
        lsp_types::Position::new(2, 5),
    );
    let params = code_action_params(path, range, vec![diagnostic]);
    assert_eq!(
        serde_json::to_value(params).unwrap(),
        json!({
            "textDocument": {"uri": file_uri(path)},
            "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 5}},
            "context": {"diagnostics": [{
                "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 5}},
                "severity": 1, "message": "undefined name"
            }], "triggerKind": 1},
        })
    );
}

#[test]
fn offered_actions_of_every_shape_are_listed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a.py"), "x = 1\n").unwrap();
    let ws = tool_core::Workspace::new(d.path()).unwrap();
    let uri = file_uri(&ws.root().join("a.py"));
    let edit = json!({"changes": {uri: [{"range": {"start": {"line": 0, "character": 0},
        "end": {"line": 0, "character": 1}}, "newText": "y"}]}});
    let rows: Vec<String> = [
        // A bare Command.
        json!({"title": "Organize imports", "command": "python.organize", "arguments": ["a.py"]}),
        // A CodeAction: with an edit, with a command, resolved later.
        json!({"title": "Rename x", "kind": "quickfix", "isPreferred": true, "edit": edit}),
        json!({"title": "Run", "kind": "", "command": {"title": "Run", "command": "go.run"}}),
        json!({"title": "Extract", "kind": "refactor.extract", "data": {"id": 3}}),
        // Odd: no title, arguments without a command, nothing at all.
        json!({"arguments": [1]}),
        json!({"title": "Bare"}),
    ]
    .iter()
    .map(|a| offered_row(&ws, a))
    .collect();
    assert_eq!(
        rows,
        [
            "Organize imports — runs the server command `python.organize`",
            "Rename x [quickfix] (preferred) — edits a.py (1 edit)",
            "Run — runs the server command `go.run`",
            "Extract [refactor.extract] — edit computed on resolve",
            "? — runs the server command `a server command`",
            "Bare",
        ]
    );
}
