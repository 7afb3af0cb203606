//! Answers of each shape servers send, typed and raw, read to exact rows.

use super::*;
use crate::client::file_uri;
use serde_json::json;

fn range(start: u32, end: u32) -> Value {
    json!({"start": {"line": start, "character": 4}, "end": {"line": end, "character": 9}})
}

fn doc_rows(answer: &Value) -> (bool, Vec<String>) {
    doc_rows_with(answer, true)
}

fn doc_rows_with(answer: &Value, detail: bool) -> (bool, Vec<String>) {
    let decoded: DocumentSymbols = Answer::decode("textDocument/documentSymbol", answer.clone());
    let (rows, locals) = document_symbols(&decoded, detail);
    // The raw reader, which read every answer before, agrees.
    assert_eq!(
        document_symbols(&Answer::Raw(answer.clone()), detail),
        (rows.clone(), locals),
        "{answer}"
    );
    (matches!(decoded, Answer::Typed(_)), rows)
}

#[test]
fn a_document_symbol_tree_is_indented_in_source_order() {
    let tree = json!([
        {"name": "B", "kind": 23, "range": range(10, 20), "selectionRange": range(10, 10)},
        {"name": "A", "kind": 5, "detail": "class A(Base)\nmore", "range": range(0, 8), "selectionRange": range(0, 0),
         "children": [
            {"name": "m", "kind": 6, "detail": "(self)", "range": range(1, 3), "selectionRange": range(2, 2),
             "children": []},
            {"name": "x", "kind": 99, "range": range(4, 4), "selectionRange": range(4, 4)},
         ]},
    ]);
    assert_eq!(
        doc_rows(&tree),
        (
            true,
            vec![
                "11: struct B".to_string(),
                "1: class A  class A(Base)".to_string(),
                "  3: method m  (self)".to_string(),
                "  5: symbol x".to_string(),
            ]
        )
    );
    // By default an outline: no signatures.
    assert_eq!(
        doc_rows_with(&tree, false).1,
        [
            "11: struct B",
            "1: class A",
            "  3: method m",
            "  5: symbol x"
        ]
    );
}

#[test]
fn flat_symbol_information_is_sorted_by_line() {
    let flat = json!([
        {"name": "say", "kind": 6, "containerName": "Greeter",
         "location": {"uri": "file:///a.py", "range": range(6, 8)}},
        {"name": "Greeter", "kind": 5, "location": {"uri": "file:///a.py", "range": range(0, 9)}},
    ]);
    assert_eq!(
        doc_rows(&flat),
        (
            true,
            vec!["1: class Greeter".to_string(), "7: method say".to_string()]
        )
    );
}

#[test]
fn document_symbols_lsp_types_rejects_read_as_before() {
    // Ranges without `character`, a symbol without a name or kind.
    let odd = json!([{"name": "A", "kind": 5, "range": {"start": {"line": 0}}, "selectionRange": {"start": {"line": 0}},
        "children": [{"name": "m", "kind": 6, "detail": "(self)", "range": {"start": {"line": 1}}, "selectionRange": {"start": {"line": 1}}},
                     {"range": {"start": {"line": 4}}}]}]);
    assert_eq!(
        doc_rows(&odd),
        (
            false,
            vec![
                "1: class A".to_string(),
                "  2: method m  (self)".to_string(),
                "  5: symbol ?".to_string(),
            ]
        )
    );
    assert_eq!(doc_rows(&Value::Null), (true, vec![]));
    assert_eq!(doc_rows(&json!([])), (true, vec![]));
}

#[test]
fn workspace_symbols_of_every_shape_become_rows() {
    let d = tempfile::tempdir().unwrap();
    let ws = Workspace::new(d.path()).unwrap();
    let uri = file_uri(&ws.root().join("pkg/a.py"));
    let rows = |answer: Value| {
        let decoded: WorkspaceSymbols = Answer::decode("workspace/symbol", answer.clone());
        let rows = workspace_symbols(&ws, &decoded);
        assert_eq!(
            workspace_symbols(&ws, &Answer::Raw(answer.clone())),
            rows,
            "{answer}"
        );
        (matches!(decoded, Answer::Typed(_)), rows)
    };
    let at = |line: u32, text: &str| {
        let (text, container) = match text.split_once(" (in ") {
            Some((t, c)) => (t, Some(c.trim_end_matches(')').to_string())),
            None => (text, None),
        };
        ("pkg/a.py".to_string(), line, text.to_string(), container)
    };
    // SymbolInformation[], a repeat and a symbol outside files dropped.
    assert_eq!(
        rows(json!([
            {"name": "say", "kind": 6, "containerName": "Greeter", "location": {"uri": uri, "range": range(6, 8)}},
            {"name": "Greeter", "kind": 5, "containerName": "", "location": {"uri": uri, "range": range(0, 9)}},
            {"name": "Greeter", "kind": 5, "location": {"uri": uri, "range": range(0, 9)}},
            {"name": "lib", "kind": 2, "location": {"uri": "jdt://contents/lib", "range": range(0, 0)}},
        ])),
        (
            true,
            vec![at(1, "class Greeter"), at(7, "method say (in Greeter)")]
        )
    );
    // WorkspaceSymbol[]: a location with a range, one without.
    assert_eq!(
        rows(json!([
            {"name": "F", "kind": 12, "location": {"uri": uri, "range": range(3, 5)}},
            {"name": "T", "kind": 23, "containerName": "pkg", "location": {"uri": uri}, "data": 7},
        ])),
        (true, vec![at(1, "struct T (in pkg)"), at(4, "function F")])
    );
    // A range without `character`, a symbol without a kind: read raw.
    assert_eq!(
        rows(json!([
            {"name": "G", "location": {"uri": uri, "range": {"start": {"line": 2}}}},
        ])),
        (false, vec![at(3, "symbol G")])
    );
    assert_eq!(rows(Value::Null), (true, vec![]));
}

#[test]
fn workspace_rows_say_the_common_container_once_and_group_by_file() {
    let row = |p: &str, l: u32, t: &str, c: Option<&str>| {
        (p.to_string(), l, t.to_string(), c.map(str::to_string))
    };
    let rows = [
        row("a_test.go", 3, "function TestRoute", Some("m_test")),
        row("mux.go", 54, "struct Router", Some("m")),
        row("mux.go", 64, "field Router.routes", Some("m")),
        row("route.go", 17, "struct Route", Some("m")),
        row("/go/src/x.go", 9, "function Route", Some("std")),
        row("/go/src/y.go", 1, "function Router", Some("std")),
        row("/go/src/y.go", 2, "function Routes", Some("std")),
        row("/go/src/z.go", 3, "function Routed", Some("std")),
    ];
    let (common, lines) = render_workspace_rows(&rows);
    assert_eq!(common.as_deref(), Some("m"));
    expect_test::expect![[r#"
        a_test.go:3  function TestRoute (in m_test)
        mux.go
          54: struct Router
          64: field Router.routes
        route.go:17  struct Route
        /go/src/x.go:9  function Route (in std)
        /go/src/y.go
          1: function Router (in std)
          2: function Routes (in std)
        /go/src/z.go:3  function Routed (in std)"#]]
    .assert_eq(&lines.join("\n"));
    // No container most rows share: each row keeps its own.
    let (common, lines) = render_workspace_rows(&rows[..1]);
    assert_eq!(common, None);
    assert_eq!(lines, ["a_test.go:3  function TestRoute (in m_test)"]);
    // A row in no container (a Python module's top-level function, as
    // basedpyright answers on pallets/click): nothing goes to the header,
    // which would place it in `m`.
    let mut rows = rows[1..4].to_vec();
    rows.push(row("pager.py", 451, "function _pager", None));
    let (common, lines) = render_workspace_rows(&rows);
    assert_eq!(common, None);
    expect_test::expect![[r#"
        mux.go
          54: struct Router (in m)
          64: field Router.routes (in m)
        route.go:17  struct Route (in m)
        pager.py:451  function _pager"#]]
    .assert_eq(&lines.join("\n"));
}

/// basedpyright lists a function's parameters and locals as its variable
/// children: the outline leaves them out (and counts them), keeping a
/// module's and a class's variables and nested functions; `detail` shows
/// every symbol.
#[test]
fn an_outline_leaves_out_the_variables_of_functions() {
    let tree = json!([
        {"name": "F", "kind": 13, "range": range(0, 0), "selectionRange": range(0, 0)},
        {"name": "f", "kind": 12, "range": range(1, 9), "selectionRange": range(1, 1),
         "children": [
            {"name": "ctx", "kind": 13, "range": range(1, 1), "selectionRange": range(1, 1)},
            {"name": "key", "kind": 12, "range": range(3, 5), "selectionRange": range(3, 3),
             "children": [{"name": "item", "kind": 13, "range": range(3, 3), "selectionRange": range(3, 3)}]},
         ]},
        {"name": "C", "kind": 5, "range": range(10, 20), "selectionRange": range(10, 10),
         "children": [
            {"name": "PROMPT", "kind": 13, "range": range(11, 11), "selectionRange": range(11, 11)},
            {"name": "m", "kind": 6, "range": range(12, 14), "selectionRange": range(12, 12),
             "children": [{"name": "rv", "kind": 13, "range": range(13, 13), "selectionRange": range(13, 13)}]},
         ]},
    ]);
    let decoded: DocumentSymbols = Answer::decode("textDocument/documentSymbol", tree.clone());
    let (outline, left_out) = document_symbols(&decoded, false);
    expect_test::expect![[r#"
        1: variable F
        2: function f
          4: function key
        11: class C
          12: variable PROMPT
          13: method m"#]]
    .assert_eq(&outline.join("\n"));
    assert_eq!(left_out, 3);
    assert_eq!(
        document_symbols(&Answer::Raw(tree.clone()), false),
        (outline, 3)
    );
    let (all, none) = document_symbols(&decoded, true);
    assert_eq!((all.len(), none), (9, 0));
}
