//! `symbols` by `query` with no `file`, on a project no server was started
//! for: only the servers of the languages the workspace has files of start
//! (not every server that needs no project file), and clangd without a
//! compile database says it searched only the files open in it.

mod common;

use common::Run;
use expect_test::expect;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_makefile_c_project_is_searched_by_clangd_alone_and_says_what_it_saw() {
    if test_support::fixtures::require(&["clangd"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("Makefile", "app: main.c util.c\n\tcc -o app main.c util.c\n"),
        ("README.md", "# app\n\nA small program.\n"),
        ("util.h", "int util_add(int a, int b);\nint util_twice(int a);\n"),
        (
            "util.c",
            "#include \"util.h\"\nint util_add(int a, int b) { return a + b; }\nint util_twice(int a) { return util_add(a, a); }\n",
        ),
        (
            "main.c",
            "#include \"util.h\"\nstatic int util_local(void) { return 1; }\nint main(void) { return util_twice(util_local()); }\n",
        ),
    ] {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let run = Run::new(dir);
    let out = run.lsp(json!({"op": "symbols", "query": "util_"})).await;
    expect![[r#"
        lsp symbols  query `util_` — 3 matches
        main.c:2  function util_local
        util.h
          1: function util_add
          2: function util_twice
        c (clangd) has no compile database at ., so it searched only the files open in it (main.c); give the project a compile_commands.json to search all of it"#]].assert_eq(&out);
    let status = run.lsp(json!({"op": "status"})).await;
    let running: Vec<&str> = status
        .lines()
        .filter(|l| l.contains(": running, pid"))
        .map(|l| l.split_once(" at ").map_or(l, |(id, _)| id))
        .collect();
    assert_eq!(running, ["c"], "{status}");
    run.finish().await;
}

/// A running server that does not offer workspace symbols is not asked, and
/// when no server can answer, the answer says so (not "no symbols match").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_that_answers_workspace_symbols_is_an_error_naming_those_running() {
    let config: tool_lsp::CatalogConfig = serde_json::from_value(json!({
        "servers": [{
            "id": "faulty", "extensions": {"fault": "fault"},
            "commands": [[test_support::fault_server::fault_injecting_lsp()]],
            "root_markers": ["fault.toml"], "startup_settle_ms": 0
        }],
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fault.toml"), "").unwrap();
    std::fs::write(dir.path().join("a.fault"), "fine here\n").unwrap();
    let run = Run::with_binding(dir, tool_lsp::LspBinding::new(config));
    let err = run
        .call("lsp", json!({"op": "symbols", "query": "fine"}))
        .await
        .unwrap_err();
    expect!["not available here: no server here offers workspace symbols (faulty (FAULT_SERVER)); pass `file` and use op `symbols` without `query` for the symbols of one file"].assert_eq(&err.to_string().replace(test_support::fault_server::fault_injecting_lsp(), "FAULT_SERVER"));
    run.finish().await;
}

/// A project whose docs/ folder is a Python project of its own (its own
/// requirements.txt, and the shallowest .py file, docs/conf.py): the query
/// is answered by the server of the workspace root's project, which sees
/// the package, not by one started in docs/.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_starts_at_the_root_project_not_at_a_nested_docs_project() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("pyproject.toml", "[project]\nname = \"pkg\"\n"),
        ("docs/requirements.txt", "sphinx\n"),
        ("docs/conf.py", "project = \"pkg\"\n"),
        ("src/pkg/__init__.py", ""),
        (
            "src/pkg/adapters.py",
            "class HTTPAdapter:\n    def send(self) -> None:\n        pass\n",
        ),
    ] {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let run = Run::new(dir);
    let out = run
        .lsp(json!({"op": "symbols", "query": "HTTPAdapter"}))
        .await;
    expect![[r#"
        lsp symbols  query `HTTPAdapter` — 1 match
        src/pkg/adapters.py:1  class HTTPAdapter"#]]
    .assert_eq(&out);
    let status = run.lsp(json!({"op": "status"})).await;
    let running: Vec<&str> = status
        .lines()
        .filter(|l| l.contains(": running, pid"))
        .map(|l| l.split_once(" (").map_or(l, |(head, _)| head))
        .collect();
    assert_eq!(running, ["python at ."], "{status}");
    run.finish().await;
}
